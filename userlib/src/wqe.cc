// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
#include "wqe.h"

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace kiwi {

namespace {

static_assert(sizeof(kiwi_sqe) == 128);
static_assert(sizeof(kiwi_rqe) == 112);
static_assert(sizeof(kiwi_cqe) == 32);
static_assert(sizeof(kiwi_sge) == sizeof(ibv_sge));
static_assert(sizeof(kiwi_sqe::sge) == KIWI_MAX_SGE * sizeof(kiwi_sge));
static_assert(sizeof(kiwi_sqe_atomic) <= sizeof(kiwi_sqe::sge));
static_assert(offsetof(kiwi_sqe, atomic) == offsetof(kiwi_sqe, sge));
static_assert(sizeof(kiwi_sqe_bind) <= sizeof(kiwi_sqe::sge));
static_assert(offsetof(kiwi_sqe, bind) == offsetof(kiwi_sqe, sge));

constexpr unsigned int kKnownSendFlags = IBV_SEND_FENCE | IBV_SEND_SIGNALED |
					 IBV_SEND_SOLICITED | IBV_SEND_INLINE;

void copy_sges(const ibv_sge *src, int num, kiwi_sge *dst) noexcept
{
	for (int i = 0; i < num; i++) {
		dst[i].addr = src[i].addr;
		dst[i].length = src[i].length;
		dst[i].lkey = src[i].lkey;
	}
}

// RFC 7306 Immediate Data carries no payload, and iWARP has no Send with
// immediate data: IBV_WR_SEND_WITH_IMM works only without payload.
bool payload_bytes(const ibv_send_wr &wr) noexcept
{
	for (int i = 0; i < wr.num_sge; i++) {
		if (wr.sg_list[i].length)
			return true;
	}
	return false;
}

// Validates num_sge/sg_list of a WR against max_sge.
bool sges_ok(const ibv_sge *sg_list, int num_sge, uint32_t max_sge) noexcept
{
	if (num_sge < 0 || static_cast<uint32_t>(num_sge) > max_sge)
		return false;
	return num_sge == 0 || sg_list != nullptr;
}

uint32_t sqe_flags(unsigned int send_flags, bool sig_all) noexcept
{
	uint32_t flags = 0;

	if (sig_all || (send_flags & IBV_SEND_SIGNALED))
		flags |= KIWI_SQE_SIGNALED;
	if (send_flags & IBV_SEND_SOLICITED)
		flags |= KIWI_SQE_SOLICITED;
	// ibverbs' fence waits for earlier RDMA Reads: iWARP's read fence.
	if (send_flags & IBV_SEND_FENCE)
		flags |= KIWI_SQE_READ_FENCE;
	return flags;
}

// Copies the bytes the SGEs point at into the SGE area of sqe.
int copy_inline(const ibv_send_wr &wr, uint32_t max_inline,
		kiwi_sqe &sqe) noexcept
{
	uint64_t total = 0;

	for (int i = 0; i < wr.num_sge; i++)
		total += wr.sg_list[i].length;
	if (total > max_inline)
		return EINVAL;

	auto *dst = reinterpret_cast<unsigned char *>(sqe.sge);
	for (int i = 0; i < wr.num_sge; i++) {
		const ibv_sge &sge = wr.sg_list[i];

		if (sge.length == 0)
			continue;
		if (sge.addr == 0)
			return EINVAL;
		// An SGE holds an address as an integer.
		const auto *src = reinterpret_cast<const void *>( // NOLINT
			sge.addr);
		std::memcpy(dst, src, sge.length);
		dst += sge.length;
	}
	sqe.num_sge = 0;
	sqe.inline_len = static_cast<uint16_t>(total);
	sqe.flags |= KIWI_SQE_INLINE;
	return 0;
}

// RFC 7306 atomics: one 8-octet result SGE, the operands of the plain verbs
// forms (CmpSwap masks all-ones, FetchAdd mask 0: ibv_send_wr has no
// masks). The operands share the SGE area with the SGEs after the first.
int encode_atomic(const ibv_send_wr &wr, kiwi_sqe &sqe) noexcept
{
	if ((wr.send_flags & IBV_SEND_INLINE) || wr.num_sge != 1 ||
	    wr.sg_list[0].length != sizeof(uint64_t))
		return EINVAL;
	sqe.inv_or_rkey = wr.wr.atomic.rkey;
	sqe.remote_addr = wr.wr.atomic.remote_addr;
	sqe.num_sge = 1;
	kiwi_sqe_atomic &a = sqe.atomic;
	a.result.addr = wr.sg_list[0].addr;
	a.result.length = wr.sg_list[0].length;
	a.result.lkey = wr.sg_list[0].lkey;
	a.compare_add = wr.wr.atomic.compare_add;
	const bool cas = sqe.opcode == KIWI_WR_ATOMIC_CMP_AND_SWP;
	a.swap = cas ? wr.wr.atomic.swap : 0;
	a.compare_add_mask = cas ? ~uint64_t{0} : 0;
	a.swap_mask = cas ? ~uint64_t{0} : 0;
	return 0;
}

// The rights a window may grant; the low octet of an rkey is its key.
constexpr unsigned int kWindowAccess = IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ |
				       IBV_ACCESS_REMOTE_ATOMIC;
constexpr uint32_t kKeyMask = 0xff;

// A window bind (IBV_WR_BIND_MW, and the WR of ibv_bind_mw): the new rkey
// must name the same window (only its key octet may differ). The kernel
// finds the window by that rkey and judges the rest (its type and state,
// the MR, PDs, rights, bounds). Zero-based windows are not supported.
int encode_bind(const ibv_send_wr &wr, kiwi_sqe &sqe) noexcept
{
	const ibv_mw *mw = wr.bind_mw.mw;
	const ibv_mw_bind_info &bi = wr.bind_mw.bind_info;

	if (mw == nullptr ||
	    (wr.send_flags & (IBV_SEND_INLINE | IBV_SEND_SOLICITED)))
		return EINVAL;
	if (bi.mw_access_flags & IBV_ACCESS_ZERO_BASED)
		return EOPNOTSUPP;
	if ((bi.mw_access_flags & ~kWindowAccess) ||
	    ((wr.bind_mw.rkey ^ mw->rkey) & ~kKeyMask) ||
	    (bi.mr == nullptr && (bi.addr || bi.length)))
		return EINVAL;
	sqe.inv_or_rkey = wr.bind_mw.rkey;
	sqe.bind.addr = bi.addr;
	sqe.bind.length = bi.length;
	sqe.bind.mr_lkey = bi.mr != nullptr ? bi.mr->lkey : 0;
	sqe.bind.access = bi.mw_access_flags;
	return 0;
}

} // namespace

int map_send_opcode(uint32_t op, uint8_t &kiwi_op) noexcept
{
	switch (op) {
	case IBV_WR_SEND:
		kiwi_op = KIWI_WR_SEND;
		return 0;
	case IBV_WR_SEND_WITH_INV:
		kiwi_op = KIWI_WR_SEND_WITH_INV;
		return 0;
	case IBV_WR_RDMA_WRITE:
		kiwi_op = KIWI_WR_RDMA_WRITE;
		return 0;
	case IBV_WR_RDMA_READ:
		kiwi_op = KIWI_WR_RDMA_READ;
		return 0;
	case IBV_WR_LOCAL_INV:
		kiwi_op = KIWI_WR_LOCAL_INV;
		return 0;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		kiwi_op = KIWI_WR_RDMA_WRITE_WITH_IMM;
		return 0;
	case IBV_WR_SEND_WITH_IMM:
		kiwi_op = KIWI_WR_SEND_WITH_IMM;
		return 0;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		kiwi_op = KIWI_WR_ATOMIC_CMP_AND_SWP;
		return 0;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		kiwi_op = KIWI_WR_ATOMIC_FETCH_AND_ADD;
		return 0;
	case IBV_WR_BIND_MW:
		kiwi_op = KIWI_WR_BIND_MW;
		return 0;
	case IBV_WR_TSO:
	case IBV_WR_DRIVER1:
	case IBV_WR_ATOMIC_WRITE:
		return EOPNOTSUPP;
	}
	return EINVAL;
}

int encode_send(const ibv_send_wr &wr, const SendLimits &lim,
		kiwi_sqe &sqe) noexcept
{
	// Read as an integer: a value outside the enum is no valid enum load.
	uint32_t raw_op = 0;
	static_assert(sizeof(wr.opcode) == sizeof(raw_op));
	std::memcpy(&raw_op, &wr.opcode, sizeof(raw_op));
	uint8_t op = 0;
	int ret = map_send_opcode(raw_op, op);

	if (ret)
		return ret;
	if (wr.send_flags & ~kKnownSendFlags)
		return EINVAL;
	if (!sges_ok(wr.sg_list, wr.num_sge, lim.max_sge))
		return EINVAL;

	sqe.wr_id = wr.wr_id;
	sqe.flags = sqe_flags(wr.send_flags, lim.sig_all);
	sqe.opcode = op;
	sqe.num_sge = 0;
	sqe.inline_len = 0;
	sqe.imm_data = 0;
	sqe.inv_or_rkey = 0;
	sqe.remote_addr = 0;

	switch (op) {
	case KIWI_WR_SEND_WITH_INV:
		sqe.inv_or_rkey = wr.invalidate_rkey;
		break;
	case KIWI_WR_SEND_WITH_IMM:
		if (payload_bytes(wr))
			return EOPNOTSUPP;
		sqe.imm_data = wr.imm_data;
		break;
	case KIWI_WR_RDMA_WRITE_WITH_IMM:
		sqe.imm_data = wr.imm_data;
		sqe.inv_or_rkey = wr.wr.rdma.rkey;
		sqe.remote_addr = wr.wr.rdma.remote_addr;
		break;
	case KIWI_WR_RDMA_WRITE:
	case KIWI_WR_RDMA_READ:
		sqe.inv_or_rkey = wr.wr.rdma.rkey;
		sqe.remote_addr = wr.wr.rdma.remote_addr;
		break;
	case KIWI_WR_LOCAL_INV:
		if (wr.send_flags & IBV_SEND_INLINE)
			return EINVAL;
		sqe.inv_or_rkey = wr.invalidate_rkey;
		return 0; // carries no data: sg_list is not looked at
	case KIWI_WR_ATOMIC_CMP_AND_SWP:
	case KIWI_WR_ATOMIC_FETCH_AND_ADD:
		return encode_atomic(wr, sqe);
	case KIWI_WR_BIND_MW:
		return encode_bind(wr, sqe); // carries no data
	default:
		break;
	}

	if (wr.send_flags & IBV_SEND_INLINE) {
		if (op == KIWI_WR_RDMA_READ)
			return EINVAL; // a read's sink cannot be inline
		return copy_inline(wr, lim.max_inline, sqe);
	}
	copy_sges(wr.sg_list, wr.num_sge, sqe.sge);
	sqe.num_sge = static_cast<uint8_t>(wr.num_sge);
	return 0;
}

int encode_recv(const ibv_recv_wr &wr, uint32_t max_sge, kiwi_rqe &rqe) noexcept
{
	if (!sges_ok(wr.sg_list, wr.num_sge, max_sge))
		return EINVAL;
	rqe.wr_id = wr.wr_id;
	rqe.num_sge = static_cast<uint32_t>(wr.num_sge);
	rqe.rsvd = 0;
	copy_sges(wr.sg_list, wr.num_sge, rqe.sge);
	return 0;
}

namespace {

bool map_wc_opcode(uint16_t op, ibv_wc_opcode &out) noexcept
{
	switch (op) {
	case KIWI_WC_SEND:
		out = IBV_WC_SEND;
		return true;
	case KIWI_WC_RDMA_WRITE:
		out = IBV_WC_RDMA_WRITE;
		return true;
	case KIWI_WC_RDMA_READ:
		out = IBV_WC_RDMA_READ;
		return true;
	case KIWI_WC_COMP_SWAP:
		out = IBV_WC_COMP_SWAP;
		return true;
	case KIWI_WC_FETCH_ADD:
		out = IBV_WC_FETCH_ADD;
		return true;
	case KIWI_WC_BIND_MW:
		out = IBV_WC_BIND_MW;
		return true;
	case KIWI_WC_LOCAL_INV:
		out = IBV_WC_LOCAL_INV;
		return true;
	case KIWI_WC_RECV:
		out = IBV_WC_RECV;
		return true;
	case KIWI_WC_RECV_RDMA_WITH_IMM:
		out = IBV_WC_RECV_RDMA_WITH_IMM;
		return true;
	default:
		return false;
	}
}

} // namespace

void decode_cqe(const kiwi_cqe &cqe, ibv_wc &wc) noexcept
{
	ibv_wc_opcode op = IBV_WC_SEND;
	const bool op_ok = map_wc_opcode(cqe.opcode, op);

	wc.wr_id = cqe.wr_id;
	wc.status = cqe.status <= IBV_WC_TM_RNDV_INCOMPLETE
			    ? static_cast<ibv_wc_status>(cqe.status)
			    : IBV_WC_GENERAL_ERR;
	if (!op_ok && wc.status == IBV_WC_SUCCESS)
		wc.status = IBV_WC_GENERAL_ERR;
	wc.opcode = op;
	wc.vendor_err = cqe.vendor_err;
	wc.byte_len = cqe.byte_len;
	wc.qp_num = cqe.qp_num;
	wc.src_qp = 0;
	wc.wc_flags = 0;
	wc.invalidated_rkey = 0;
	if (cqe.flags & KIWI_CQE_WITH_INV) {
		wc.wc_flags |= IBV_WC_WITH_INV;
		wc.invalidated_rkey = cqe.inv_rkey;
	} else if (cqe.flags & KIWI_CQE_WITH_IMM) {
		// imm_data shares its union with invalidated_rkey.
		wc.wc_flags |= IBV_WC_WITH_IMM;
		wc.imm_data = cqe.imm_data;
	}
	wc.pkey_index = 0;
	wc.slid = 0;
	wc.sl = 0;
	wc.dlid_path_bits = 0;
}

} // namespace kiwi
