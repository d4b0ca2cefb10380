// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// Queue pairs (RC only): the kernel creates them and maps their SQ and RQ
// rings; work requests go straight into the rings, sends are followed by
// one doorbell write() unless the kernel's transmit engine is running and
// will find them (KIWI_RING_F_DOORBELL clear).
#include "provider.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>

namespace kiwi {

namespace {

using CreateQpResp = RespBuffer<ib_uverbs_create_qp_resp, kiwi_uresp_create_qp>;

// The send opcodes a QP's ibv_qp_ex builders may be asked for. TSO and
// the IBTA atomic write are EOPNOTSUPP.
constexpr uint64_t kSendOpsFlags =
	IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
	IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
	IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
	IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND_WITH_INV |
	IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW;

// Every ibv_qp_init_attr_mask bit rdma-core 44 defines.
constexpr uint32_t kQpInitAttrKnown =
	IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
	IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_MAX_TSO_HEADER |
	IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH |
	IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;

// Requests the kernel cannot grant anyway fail before any system call.
int check_qp_request(const ibv_qp_init_attr_ex &attr,
		     uint32_t max_inline) noexcept
{
	if (attr.comp_mask & ~kQpInitAttrKnown)
		return EINVAL;
	if (!(attr.comp_mask & IBV_QP_INIT_ATTR_PD) || !attr.pd)
		return EINVAL;
	// XRC, creation flags, TSO, RSS: not for an iWARP RC QP.
	if (attr.comp_mask &
	    ~(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))
		return EOPNOTSUPP;
	if ((attr.comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr.send_ops_flags & ~kSendOpsFlags))
		return EOPNOTSUPP;
	if (attr.qp_type != IBV_QPT_RC)
		return EOPNOTSUPP;
	if (attr.cap.max_send_sge > KIWI_MAX_SGE ||
	    attr.cap.max_recv_sge > KIWI_MAX_SGE ||
	    attr.cap.max_inline_data > max_inline)
		return EINVAL;
	return 0;
}

void prepare_doorbell(Qp &qp) noexcept
{
	auto &db = qp.doorbell;

	db.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	db.hdr.in_words = sizeof(db) / 4;
	db.hdr.out_words = sizeof(qp.doorbell_resp) / 4;
	db.response = reinterpret_cast<uintptr_t>(&qp.doorbell_resp);
	db.qp_handle = qp.vqp.qp.handle;
	db.wr_count = 0;
	db.sge_count = 0;
	db.wqe_size = sizeof(ib_uverbs_send_wr);
}

// Maps the rings and sets up the user-space queues of a created QP;
// attr.cap holds what the kernel granted.
int attach_rings(Qp &qp, const ibv_qp_init_attr_ex &attr,
		 const kiwi_uresp_create_qp &drv,
		 uint32_t ctx_features) noexcept
{
	int ret = map_ring(qp.cmd_fd, drv.sq_key, drv.num_sqe, sizeof(kiwi_sqe),
			   qp.sq_map);
	if (ret)
		return ret;

	const SendLimits lim{
		.max_sge =
			std::min<uint32_t>(attr.cap.max_send_sge, KIWI_MAX_SGE),
		.max_inline = attr.cap.max_inline_data,
		.sig_all = attr.sq_sig_all != 0,
	};
	qp.sq.attach(qp.sq_map.addr(), drv.num_sqe, lim,
		     (ctx_features & KIWI_CTX_FEAT_SQ_DOORBELL) != 0 &&
			     (drv.features & KIWI_QP_FEAT_SQ_DOORBELL) != 0);

	if (attr.srq)
		return drv.rq_key == KIWI_INVALID_MMAP_KEY ? 0 : EPROTO;
	ret = map_ring(qp.cmd_fd, drv.rq_key, drv.num_rqe, sizeof(kiwi_rqe),
		       qp.rq_map);
	if (ret)
		return ret;
	qp.rq.attach(qp.rq_map.addr(), drv.num_rqe,
		     std::min<uint32_t>(attr.cap.max_recv_sge, KIWI_MAX_SGE));
	return 0;
}

// Both ibv_create_qp() and ibv_create_qp_ex() end here. Returns the QP,
// or NULL with errno set.
ibv_qp *create_qp_common(ibv_context *ibctx, ibv_qp_init_attr_ex &attr)
{
	const Context *ctx = to_context(ibctx);
	int ret = check_qp_request(attr, ctx->max_inline);
	if (ret) {
		errno = ret;
		return nullptr;
	}

	// Receive capacities mean nothing with an SRQ (ibv_create_qp(3)); the
	// kernel is not asked for any.
	if (attr.srq) {
		attr.cap.max_recv_wr = 0;
		attr.cap.max_recv_sge = 0;
	}

	auto qp = std::make_unique<Qp>();
	pabi::CmdCreateQp cmd{};
	CreateQpResp resp{};
	ret = pabi::ibv_cmd_create_qp_ex(ibctx, &qp->vqp, &attr, &cmd,
					 sizeof(cmd), resp.core(), resp.size());
	if (ret) {
		qp.reset();
		errno = ret;
		return nullptr;
	}

	// ibv_cmd_create_qp_ex stored the granted capacities in attr.cap.
	attr.cap.max_inline_data =
		std::min(attr.cap.max_inline_data, ctx->max_inline);
	qp->cmd_fd = ibctx->cmd_fd;
	ret = attach_rings(*qp, attr, resp.drv(), ctx->features);
	if (ret) {
		pabi::ibv_cmd_destroy_qp(&qp->vqp.qp);
		qp.reset(); // unmaps: before errno
		errno = ret;
		return nullptr;
	}
	prepare_doorbell(*qp);
	if (attr.comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		init_qp_ex(*qp);
		qp->vqp.comp_mask |= pabi::kVerbsQpEx;
	}
	return &qp.release()->vqp.qp;
}

} // namespace

int ring_doorbell(Qp &qp) noexcept
{
	const ssize_t n = write(qp.cmd_fd, &qp.doorbell, sizeof(qp.doorbell));

	return n < 0 ? errno : 0;
}

namespace verbs {

ibv_qp *create_qp(ibv_pd *pd, ibv_qp_init_attr *attr)
{
	ibv_qp_init_attr_ex ex{};

	ex.qp_context = attr->qp_context;
	ex.send_cq = attr->send_cq;
	ex.recv_cq = attr->recv_cq;
	ex.srq = attr->srq;
	ex.cap = attr->cap;
	ex.qp_type = attr->qp_type;
	ex.sq_sig_all = attr->sq_sig_all;
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;

	ibv_qp *qp = create_qp_common(pd->context, ex);
	if (qp)
		attr->cap = ex.cap;
	return qp;
}

ibv_qp *create_qp_ex(ibv_context *ctx, ibv_qp_init_attr_ex *attr)
{
	return create_qp_common(ctx, *attr);
}

int query_qp(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask,
	     ibv_qp_init_attr *init_attr)
{
	pabi::CmdQueryQp cmd{};

	return pabi::ibv_cmd_query_qp(qp, attr, attr_mask, init_attr, &cmd,
				      sizeof(cmd));
}

int modify_qp(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask)
{
	// librdmacm moves iWARP QPs to RTR and RTS with an empty mask: the
	// connection manager already did it in the kernel.
	if (attr_mask == 0)
		return 0;

	pabi::CmdModifyQp cmd{};
	return pabi::ibv_cmd_modify_qp(qp, attr, attr_mask, &cmd, sizeof(cmd));
}

int destroy_qp(ibv_qp *qp)
{
	const int ret = pabi::ibv_cmd_destroy_qp(qp);

	if (!ret)
		delete to_qp(qp);
	return ret;
}

int post_send(ibv_qp *ibqp, ibv_send_wr *wr, ibv_send_wr **bad_wr) noexcept
{
	Qp *qp = to_qp(ibqp);

	return qp->sq.post_and_ring(wr, bad_wr,
				    [qp] { return ring_doorbell(*qp); });
}

int post_recv(ibv_qp *ibqp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept
{
	Qp *qp = to_qp(ibqp);
	uint32_t posted = 0;
	const int ret = qp->rq.post(wr, bad_wr, posted);

	// In the error state the doorbell makes the kernel flush the new
	// receives. Its result is not the post's: the receives are in the
	// ring either way, and the doorbell fails only when the QP left the
	// error state meanwhile (a reset, which discards posted receives as
	// any other) or the device is gone.
	if (posted && qp->rq.in_error())
		(void)ring_doorbell(*qp);
	return ret;
}

} // namespace verbs
} // namespace kiwi
