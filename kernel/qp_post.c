// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: posting work requests.
 *
 * User QPs post into their mmap'd rings; their only system call is the
 * send doorbell, post_send with no work request. Kernel QPs post through
 * kiwi_post_send()/kiwi_post_recv().
 *
 * The transmit engine arrives with kiwi's data path. Until then a send can
 * only be posted to a QP in the error state, where it completes at once
 * with IB_WC_WR_FLUSH_ERR (that is what ib_drain_qp() relies on); in any
 * other state post_send fails with -EINVAL as verbs require for a QP that
 * is not in RTS.
 */
#include "kiwi.h"

/**
 * kiwi_rqe_from_wr - translate a kernel receive WR into a ring element
 * @rqe: element to fill
 * @wr: the work request
 * @max_sge: SGE limit of the QP or SRQ
 *
 * Return: 0 or -EINVAL if @wr has too many SGEs.
 */
int kiwi_rqe_from_wr(struct kiwi_rqe *rqe, const struct ib_recv_wr *wr,
		     u32 max_sge)
{
	int i;

	if (wr->num_sge < 0 || wr->num_sge > max_sge)
		return -EINVAL;
	memset(rqe, 0, sizeof(*rqe));
	rqe->wr_id = wr->wr_id;
	rqe->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		rqe->sge[i].addr = wr->sg_list[i].addr;
		rqe->sge[i].length = wr->sg_list[i].length;
		rqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

/* The completion opcode of a kernel send WR, or -EINVAL if unsupported. */
static int kiwi_send_wc_opcode(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_INV:
		return IB_WC_SEND;
	case IB_WR_RDMA_WRITE:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	default:
		return -EINVAL;
	}
}

static int kiwi_send_wr_check(struct kiwi_qp *qp, const struct ib_send_wr *wr)
{
	u32 len = 0;
	int i;

	if (kiwi_send_wc_opcode(wr->opcode) < 0 || wr->num_sge < 0)
		return -EINVAL;
	if (!(wr->send_flags & IB_SEND_INLINE))
		return wr->num_sge > qp->max_send_sge ? -EINVAL : 0;
	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	return len > qp->max_inline ? -EINVAL : 0;
}

/* Kernel QP in the error state: complete each WR with a flush error. */
static int kiwi_post_send_flush(struct kiwi_qp *qp,
				const struct ib_send_wr *wr,
				const struct ib_send_wr **bad_wr, int *res)
{
	struct kiwi_cq *cq = to_kcq(qp->ibqp.send_cq);
	struct kiwi_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.qp_num = qp->ibqp.qp_num,
	};
	int rv;

	for (; wr; wr = wr->next) {
		if (kiwi_send_wr_check(qp, wr)) {
			*bad_wr = wr;
			return -EINVAL;
		}
		cqe.wr_id = wr->wr_id;
		cqe.opcode = kiwi_send_wc_opcode(wr->opcode);
		rv = kiwi_cq_push(cq, &cqe, &qp->ibqp);
		*res = rv < 0 || *res < 0 ? -ENOSPC : max(*res, rv);
		if (rv < 0) {
			*bad_wr = wr;
			return -ENOMEM;
		}
	}
	return 0;
}

/*
 * The doorbell of a user QP. In a state that takes no sends the new SQEs
 * are dropped, so the failed post leaves nothing behind that could
 * complete later.
 */
static int kiwi_doorbell(struct kiwi_qp *qp)
{
	int send_res = 0, recv_res = 0;
	unsigned long flags;
	bool err;

	spin_lock_irqsave(&qp->lock, flags);
	err = qp->state == IB_QPS_ERR;
	if (err)
		kiwi_qp_flush(qp, &send_res, &recv_res);
	else
		kiwi_ring_discard(&qp->sq);
	spin_unlock_irqrestore(&qp->lock, flags);
	if (!err)
		return -EINVAL;
	kiwi_cq_signal(to_kcq(qp->ibqp.send_cq), send_res);
	kiwi_cq_signal(to_kcq(qp->ibqp.recv_cq), recv_res);
	return 0;
}

/**
 * kiwi_post_send - ib_device_ops.post_send
 * @ibqp: the QP
 * @wr: work requests (kernel QPs), NULL for a user QP's doorbell
 * @bad_wr: set to the first failed work request
 *
 * A doorbell on a user QP in the error state flushes what user space has
 * produced on both rings since, so late work requests still complete; in
 * RESET or INIT it drops the new send queue elements and fails.
 *
 * Return: 0, -EINVAL (bad WR, or QP not in a state that takes sends),
 * -ENOMEM (CQ full).
 */
int kiwi_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct kiwi_qp *qp = to_kqp(ibqp);
	unsigned long flags;
	int res = 0;
	int rv;

	if (ibqp->uobject) {
		*bad_wr = wr;
		return wr ? -EINVAL : kiwi_doorbell(qp);
	}
	spin_lock_irqsave(&qp->lock, flags);
	if (qp->state == IB_QPS_ERR) {
		rv = kiwi_post_send_flush(qp, wr, bad_wr, &res);
	} else {
		*bad_wr = wr;
		rv = -EINVAL;
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	kiwi_cq_signal(to_kcq(ibqp->send_cq), res);
	return rv;
}

static int kiwi_post_recv_ring(struct kiwi_qp *qp, const struct ib_recv_wr *wr,
			       const struct ib_recv_wr **bad_wr)
{
	struct kiwi_ring *r = &qp->rq;
	int rv = 0;

	for (; wr; wr = wr->next) {
		if (!kiwi_ring_room(r)) {
			rv = -ENOMEM;
			break;
		}
		rv = kiwi_rqe_from_wr(kiwi_ring_elem(r, r->prod), wr,
				      qp->max_recv_sge);
		if (rv)
			break;
		kiwi_ring_produced(r);
	}
	if (rv)
		*bad_wr = wr;
	return rv;
}

/**
 * kiwi_post_recv - ib_device_ops.post_recv, kernel QPs without an SRQ
 * @ibqp: the QP
 * @wr: receive work requests
 * @bad_wr: set to the first failed work request
 *
 * Receives may be posted from INIT on; in the error state they are
 * flushed at once.
 *
 * Return: 0, -EINVAL (user QP, SRQ QP, RESET state, too many SGEs),
 * -ENOMEM (receive queue full).
 */
int kiwi_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct kiwi_qp *qp = to_kqp(ibqp);
	int send_res = 0, recv_res = 0;
	unsigned long flags;
	bool flush;
	int rv;

	*bad_wr = wr;
	if (ibqp->uobject || ibqp->srq)
		return -EINVAL;
	spin_lock_irqsave(&qp->lock, flags);
	if (qp->state == IB_QPS_RESET) {
		spin_unlock_irqrestore(&qp->lock, flags);
		return -EINVAL;
	}
	*bad_wr = NULL;
	rv = kiwi_post_recv_ring(qp, wr, bad_wr);
	flush = qp->state == IB_QPS_ERR;
	if (flush)
		kiwi_qp_flush(qp, &send_res, &recv_res);
	spin_unlock_irqrestore(&qp->lock, flags);
	if (flush) {
		kiwi_cq_signal(to_kcq(ibqp->send_cq), send_res);
		kiwi_cq_signal(to_kcq(ibqp->recv_cq), recv_res);
	}
	return rv;
}
