// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// Completion queues: created by the kernel, polled and armed in user space,
// through ibv_poll_cq() or the extended verbs' ibv_start_poll() interface.
// Both read the ring through CompletionQueue and decode_cqe().
#include "provider.h"

#include <cerrno>
#include <climits>
#include <memory>
#include <utility>

namespace kiwi {

namespace {

using CreateCqResp = RespBuffer<ib_uverbs_create_cq_resp, kiwi_uresp_create_cq>;
// The kernel answers a resize with the new ring as it does a create.
using ResizeCqResp = RespBuffer<ib_uverbs_resize_cq_resp, kiwi_uresp_create_cq>;
using CqPtr = std::unique_ptr<Cq>;

// The wc_flags ibv_create_cq_ex() accepts: those of the plain ibv_wc. An
// iWARP CQE has no LID, SL or path bits: they read as 0, as in ibv_wc.
// Timestamps, CVLAN, flow tag and tag matching: EOPNOTSUPP.
constexpr uint64_t kCqExWcFlags = IBV_WC_STANDARD_FLAGS;
constexpr uint32_t kCqExCompMask =
	IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD;
constexpr uint32_t kCqExFlags =
	IBV_CREATE_CQ_ATTR_SINGLE_THREADED | IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;

// Creates the kernel CQ and maps its ring. Returns 0 or an errno value.
int create_cq_common(ibv_context *ctx, int cqe, ibv_comp_channel *channel,
		     int comp_vector, bool single_threaded, CqPtr &cq)
{
	cq = std::make_unique<Cq>();
	pabi::CmdCreateCq cmd{};
	CreateCqResp resp{};
	int ret = pabi::ibv_cmd_create_cq(ctx, cqe, channel, comp_vector,
					  &cq->vcq.cq, &cmd, sizeof(cmd),
					  resp.core(), resp.size());
	if (ret) {
		cq.reset();
		return ret;
	}

	const kiwi_uresp_create_cq drv = resp.drv();
	ret = map_ring(ctx->cmd_fd, drv.cq_key, drv.num_cqe, sizeof(kiwi_cqe),
		       cq->ring_map);
	if (ret) {
		pabi::ibv_cmd_destroy_cq(&cq->vcq.cq);
		cq.reset();
		return ret;
	}
	cq->queue.attach(cq->ring_map.addr(), drv.num_cqe, single_threaded);
	return 0;
}

// What ibv_create_cq_ex() may ask of kiwi: EINVAL for what is no valid
// request, EOPNOTSUPP for what kiwi does not implement (rdma-core
// providers' convention).
int check_cq_ex_request(const ibv_cq_init_attr_ex &attr) noexcept
{
	if (attr.comp_mask & ~kCqExCompMask)
		return EINVAL;
	if ((attr.comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr.flags & ~kCqExFlags))
		return EINVAL;
	if (attr.cqe > INT_MAX || attr.comp_vector > INT_MAX)
		return EINVAL;
	// No parent domains (alloc_parent_domain is not implemented), no
	// overrun-ignoring CQs.
	if (attr.comp_mask & IBV_CQ_INIT_ATTR_MASK_PD)
		return EOPNOTSUPP;
	if ((attr.comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr.flags & IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN))
		return EOPNOTSUPP;
	if (attr.wc_flags & ~kCqExWcFlags)
		return EOPNOTSUPP;
	return 0;
}

// ibv_cq_ex polling: status and wr_id live in the ibv_cq_ex itself.
int publish_current(Cq &cq, int ret) noexcept
{
	if (!ret) {
		cq.vcq.cq_ex.status = cq.current.status;
		cq.vcq.cq_ex.wr_id = cq.current.wr_id;
	}
	return ret;
}

int start_poll(ibv_cq_ex *cqx, ibv_poll_cq_attr *attr) noexcept
{
	if (!attr || attr->comp_mask)
		return EINVAL;
	Cq *cq = to_cq(cqx);
	return publish_current(*cq, cq->queue.start_poll(cq->current));
}

int next_poll(ibv_cq_ex *cqx) noexcept
{
	Cq *cq = to_cq(cqx);
	return publish_current(*cq, cq->queue.next_poll(cq->current));
}

void end_poll(ibv_cq_ex *cqx) noexcept
{
	to_cq(cqx)->queue.end_poll();
}

// One read_* accessor of ibv_cq_ex: the field @p Field of the completion
// start_poll()/next_poll() made current, as the accessor's type @p R. An
// imm_data read is the immediate value, or with IBV_WC_WITH_INV the
// invalidated STag in host order (ibv_wc_read_invalidated_rkey() returns
// it unconverted): ibv_wc's union holds exactly that. slid widens from
// ibv_wc's 16 bits to the accessor's 32.
template <typename R, auto Field> R read_field(ibv_cq_ex *cqx) noexcept
{
	return to_cq(cqx)->current.*Field;
}

// The accessors of the refused wc_flags stay NULL: no CQ has them.
void init_cq_ex(ibv_cq_ex &cqx) noexcept
{
	cqx.start_poll = start_poll;
	cqx.next_poll = next_poll;
	cqx.end_poll = end_poll;
	cqx.read_opcode = read_field<ibv_wc_opcode, &ibv_wc::opcode>;
	cqx.read_vendor_err = read_field<uint32_t, &ibv_wc::vendor_err>;
	cqx.read_byte_len = read_field<uint32_t, &ibv_wc::byte_len>;
	cqx.read_imm_data = read_field<__be32, &ibv_wc::imm_data>;
	cqx.read_qp_num = read_field<uint32_t, &ibv_wc::qp_num>;
	cqx.read_src_qp = read_field<uint32_t, &ibv_wc::src_qp>;
	cqx.read_wc_flags = read_field<unsigned int, &ibv_wc::wc_flags>;
	cqx.read_slid = read_field<uint32_t, &ibv_wc::slid>;
	cqx.read_sl = read_field<uint8_t, &ibv_wc::sl>;
	cqx.read_dlid_path_bits = read_field<uint8_t, &ibv_wc::dlid_path_bits>;
}

} // namespace

namespace verbs {

ibv_cq *create_cq(ibv_context *ctx, int cqe, ibv_comp_channel *channel,
		  int comp_vector)
{
	CqPtr cq;
	const int ret =
		create_cq_common(ctx, cqe, channel, comp_vector, false, cq);

	if (ret) {
		errno = ret;
		return nullptr;
	}
	return &cq.release()->vcq.cq;
}

// libibverbs (__lib_ibv_create_cq_ex) has refused wc_flags it does not
// know and initialises the common CQ fields afterwards.
ibv_cq_ex *create_cq_ex(ibv_context *ctx, ibv_cq_init_attr_ex *attr)
{
	int ret = check_cq_ex_request(*attr);
	if (ret) {
		errno = ret;
		return nullptr;
	}

	const bool single_threaded =
		(attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
		(attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED);
	CqPtr cq;
	ret = create_cq_common(ctx, static_cast<int>(attr->cqe), attr->channel,
			       static_cast<int>(attr->comp_vector),
			       single_threaded, cq);
	if (ret) {
		errno = ret;
		return nullptr;
	}
	init_cq_ex(cq->vcq.cq_ex);
	return &cq.release()->vcq.cq_ex;
}

int destroy_cq(ibv_cq *cq)
{
	const int ret = pabi::ibv_cmd_destroy_cq(cq);

	if (!ret)
		delete to_cq(cq);
	return ret;
}

// The kernel moves the completions not polled yet into a new ring, in
// order, and answers with it; it is mapped in place of the old one, whose
// mapping goes. If mapping it fails the kernel already produces into the
// new ring: the CQ keeps reading the old one, sees no new completions, and
// the error is returned; only destroying it remains.
int resize_cq(ibv_cq *ibcq, int cqe)
{
	Cq *cq = to_cq(ibcq);

	return cq->queue.replace([&](void *&area, uint32_t &num) noexcept {
		pabi::CmdResizeCq cmd{};
		ResizeCqResp resp{};
		int ret = pabi::ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd),
						  resp.core(), resp.size());
		if (ret)
			return ret;
		const kiwi_uresp_create_cq drv = resp.drv();
		Mapping fresh;
		ret = map_ring(ibcq->context->cmd_fd, drv.cq_key, drv.num_cqe,
			       sizeof(kiwi_cqe), fresh);
		if (ret)
			return ret;
		cq->ring_map = std::move(fresh);
		area = cq->ring_map.addr();
		num = drv.num_cqe;
		return 0;
	});
}

int poll_cq(ibv_cq *cq, int num_entries, ibv_wc *wc) noexcept
{
	return to_cq(cq)->queue.poll(num_entries, wc);
}

int req_notify_cq(ibv_cq *cq, int solicited_only) noexcept
{
	to_cq(cq)->queue.arm(solicited_only != 0);
	return 0;
}

} // namespace verbs
} // namespace kiwi
