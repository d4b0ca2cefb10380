// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// The ibv_qp_ex work request builders (ibv_wr_*()) of a QP created with
// IBV_QP_INIT_ATTR_SEND_OPS_FLAGS. Each turns its arguments into the
// fields of an ibv_send_wr for SendBatch, which encodes it with the same
// code as ibv_post_send(); wr_complete() rings the doorbell once for the
// whole batch, or not at all while the kernel's transmit engine runs.
#include "provider.h"

#include <cerrno>

namespace kiwi {

namespace {

SendBatch &batch(ibv_qp_ex *qpx) noexcept
{
	return to_qp(qpx)->batch;
}

// Starts a WR of opcode op with the wr_id and wr_flags the caller set in
// the ibv_qp_ex; nullptr once the batch has failed.
ibv_send_wr *begin(ibv_qp_ex *qpx, ibv_wr_opcode op) noexcept
{
	return batch(qpx).begin_wr(op, qpx->wr_id, qpx->wr_flags);
}

void wr_start(ibv_qp_ex *qpx) noexcept
{
	batch(qpx).start();
}

int wr_complete(ibv_qp_ex *qpx) noexcept
{
	uint32_t posted = 0;
	const int ret = batch(qpx).complete(posted);

	if (ret || !posted || !to_qp(qpx)->sq.needs_doorbell())
		return ret;
	return ring_doorbell(*to_qp(qpx));
}

void wr_abort(ibv_qp_ex *qpx) noexcept
{
	batch(qpx).abort();
}

void wr_send(ibv_qp_ex *qpx) noexcept
{
	begin(qpx, IBV_WR_SEND);
}

void wr_send_imm(ibv_qp_ex *qpx, __be32 imm_data) noexcept
{
	if (ibv_send_wr *wr = begin(qpx, IBV_WR_SEND_WITH_IMM))
		wr->imm_data = imm_data;
}

void wr_send_inv(ibv_qp_ex *qpx, uint32_t invalidate_rkey) noexcept
{
	if (ibv_send_wr *wr = begin(qpx, IBV_WR_SEND_WITH_INV))
		wr->invalidate_rkey = invalidate_rkey;
}

void set_rdma(ibv_send_wr *wr, uint32_t rkey, uint64_t remote_addr) noexcept
{
	if (wr) {
		wr->wr.rdma.rkey = rkey;
		wr->wr.rdma.remote_addr = remote_addr;
	}
}

void wr_rdma_write(ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr) noexcept
{
	set_rdma(begin(qpx, IBV_WR_RDMA_WRITE), rkey, remote_addr);
}

void wr_rdma_write_imm(ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
		       __be32 imm_data) noexcept
{
	ibv_send_wr *wr = begin(qpx, IBV_WR_RDMA_WRITE_WITH_IMM);

	set_rdma(wr, rkey, remote_addr);
	if (wr)
		wr->imm_data = imm_data;
}

void wr_rdma_read(ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr) noexcept
{
	set_rdma(begin(qpx, IBV_WR_RDMA_READ), rkey, remote_addr);
}

void wr_atomic_cmp_swp(ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
		       uint64_t compare, uint64_t swap) noexcept
{
	if (ibv_send_wr *wr = begin(qpx, IBV_WR_ATOMIC_CMP_AND_SWP)) {
		wr->wr.atomic.rkey = rkey;
		wr->wr.atomic.remote_addr = remote_addr;
		wr->wr.atomic.compare_add = compare;
		wr->wr.atomic.swap = swap;
	}
}

void wr_atomic_fetch_add(ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
			 uint64_t add) noexcept
{
	if (ibv_send_wr *wr = begin(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD)) {
		wr->wr.atomic.rkey = rkey;
		wr->wr.atomic.remote_addr = remote_addr;
		wr->wr.atomic.compare_add = add;
	}
}

void wr_set_sge(ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr,
		uint32_t length) noexcept
{
	const ibv_sge sge{.addr = addr, .length = length, .lkey = lkey};

	batch(qpx).set_sges(1, &sge);
}

void wr_set_sge_list(ibv_qp_ex *qpx, size_t num_sge,
		     const ibv_sge *sg_list) noexcept
{
	batch(qpx).set_sges(num_sge, sg_list);
}

void wr_set_inline_data(ibv_qp_ex *qpx, void *addr, size_t length) noexcept
{
	const ibv_data_buf buf{.addr = addr, .length = length};

	batch(qpx).set_inline(1, &buf);
}

void wr_set_inline_data_list(ibv_qp_ex *qpx, size_t num_buf,
			     const ibv_data_buf *buf_list) noexcept
{
	batch(qpx).set_inline(num_buf, buf_list);
}

// Local Invalidate as ibv_post_send(IBV_WR_LOCAL_INV): the kernel
// invalidates a type 2 window and fails any other STag of user space
// (IBV_WC_LOC_PROT_ERR).
void wr_local_inv(ibv_qp_ex *qpx, uint32_t invalidate_rkey) noexcept
{
	if (ibv_send_wr *wr = begin(qpx, IBV_WR_LOCAL_INV))
		wr->invalidate_rkey = invalidate_rkey;
}

// Binds a type 2 window under rkey, encoded as ibv_post_send's
// IBV_WR_BIND_MW; mw->rkey is left alone (the consumer chose the key). A
// type 1 window is bound by ibv_bind_mw: EINVAL here, as rdma-core
// providers answer a type 1 window on the work request path.
void wr_bind_mw(ibv_qp_ex *qpx, ibv_mw *mw, uint32_t rkey,
		const ibv_mw_bind_info *info) noexcept
{
	if (mw == nullptr || info == nullptr || mw->type != IBV_MW_TYPE_2) {
		batch(qpx).fail(EINVAL);
		return;
	}
	if (ibv_send_wr *wr = begin(qpx, IBV_WR_BIND_MW)) {
		wr->bind_mw.mw = mw;
		wr->bind_mw.rkey = rkey;
		wr->bind_mw.bind_info = *info;
	}
}

// Builders of what kiwi does not implement (TSO, UD and XRC addressing,
// the IBTA atomic write): ibv_create_qp_ex() refuses their send_ops_flags,
// and a call anyway fails the batch instead of jumping through a NULL
// pointer.
void wr_send_tso(ibv_qp_ex *qpx, void * /*hdr*/, uint16_t /*hdr_sz*/,
		 uint16_t /*mss*/) noexcept
{
	batch(qpx).fail(EOPNOTSUPP);
}

void wr_set_ud_addr(ibv_qp_ex *qpx, ibv_ah * /*ah*/, uint32_t /*remote_qpn*/,
		    uint32_t /*remote_qkey*/) noexcept
{
	batch(qpx).fail(EOPNOTSUPP);
}

void wr_set_xrc_srqn(ibv_qp_ex *qpx, uint32_t /*remote_srqn*/) noexcept
{
	batch(qpx).fail(EOPNOTSUPP);
}

void wr_atomic_write(ibv_qp_ex *qpx, uint32_t /*rkey*/,
		     uint64_t /*remote_addr*/,
		     const void * /*atomic_wr*/) noexcept
{
	batch(qpx).fail(EOPNOTSUPP);
}

} // namespace

void init_qp_ex(Qp &qp) noexcept
{
	ibv_qp_ex &x = qp.vqp.qp_ex;

	qp.batch.attach(qp.sq);
	x.wr_start = wr_start;
	x.wr_complete = wr_complete;
	x.wr_abort = wr_abort;
	x.wr_send = wr_send;
	x.wr_send_imm = wr_send_imm;
	x.wr_send_inv = wr_send_inv;
	x.wr_rdma_write = wr_rdma_write;
	x.wr_rdma_write_imm = wr_rdma_write_imm;
	x.wr_rdma_read = wr_rdma_read;
	x.wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	x.wr_atomic_fetch_add = wr_atomic_fetch_add;
	x.wr_local_inv = wr_local_inv;
	x.wr_set_sge = wr_set_sge;
	x.wr_set_sge_list = wr_set_sge_list;
	x.wr_set_inline_data = wr_set_inline_data;
	x.wr_set_inline_data_list = wr_set_inline_data_list;
	x.wr_bind_mw = wr_bind_mw;
	x.wr_send_tso = wr_send_tso;
	x.wr_set_ud_addr = wr_set_ud_addr;
	x.wr_set_xrc_srqn = wr_set_xrc_srqn;
	x.wr_atomic_write = wr_atomic_write;
}

} // namespace kiwi
