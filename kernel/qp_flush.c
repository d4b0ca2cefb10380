// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: flushing a QP's work queues to its CQs with IB_WC_WR_FLUSH_ERR when
 * the QP is in the error state.
 */
#include "kiwi.h"

/* The completion opcode of a send queue element's opcode. */
u16 kiwi_sq_wc_opcode(u8 sq_opcode)
{
	switch (sq_opcode) {
	case KIWI_WR_RDMA_WRITE:
	case KIWI_WR_RDMA_WRITE_WITH_IMM:
		return KIWI_WC_RDMA_WRITE;
	case KIWI_WR_RDMA_READ:
	case KIWI_WR_KREAD_INV:
		return KIWI_WC_RDMA_READ;
	case KIWI_WR_ATOMIC_CMP_AND_SWP:
		return KIWI_WC_COMP_SWAP;
	case KIWI_WR_ATOMIC_FETCH_AND_ADD:
		return KIWI_WC_FETCH_ADD;
	case KIWI_WR_KMASKED_CMP_SWAP:
		return IB_WC_MASKED_COMP_SWAP;
	case KIWI_WR_KMASKED_FETCH_ADD:
		return IB_WC_MASKED_FETCH_ADD;
	case KIWI_WR_LOCAL_INV:
		return KIWI_WC_LOCAL_INV;
	case KIWI_WR_KREG_MR:
		return IB_WC_REG_MR;
	case KIWI_WR_BIND_MW:
		return KIWI_WC_BIND_MW;
	default:
		return KIWI_WC_SEND;
	}
}

/**
 * kiwi_rq_flush - flush the receive WRs of the RQ
 * @qp: a QP in the error state, qp->lock held
 *
 * Each element is copied out of the ring before use (a user ring may
 * change under us); only wr_id is used. Stops early if the CQ overruns.
 * While receive completions are held for a grace period (rx_gp.c) nothing
 * is flushed: the flush completions come after them, flushed by the RCU
 * callback once it pushed the last one.
 *
 * Return: the merged kiwi_cq_push() result for kiwi_cq_signal().
 */
int kiwi_rq_flush(struct kiwi_qp *qp)
{
	struct kiwi_cq *cq = to_kcq(qp->ibqp.recv_cq);
	struct kiwi_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.qp_num = qp->ibqp.qp_num,
		.opcode = KIWI_WC_RECV,
	};
	struct kiwi_ring *r = &qp->rq;
	u32 n = kiwi_ring_avail(r);
	int acc = 0, res;
	struct kiwi_rqe rqe;

	lockdep_assert_held(&qp->lock);
	if (!r->ctrl || qp->rx_gp.n)
		return 0;
	while (n--) {
		memcpy(&rqe, kiwi_ring_elem(r, r->cons), sizeof(rqe));
		cqe.wr_id = rqe.wr_id;
		res = kiwi_cq_push(cq, &cqe, &qp->ibqp, KIWI_SRQ_NO_SLOT);
		acc |= res;
		if (res & KIWI_CQ_OVERRUN)
			break;
		kiwi_ring_consumed(r);
	}
	return acc;
}

/**
 * kiwi_qp_flush - complete every queued work request with a flush error
 * @qp: a QP in the error state, qp->lock held
 * @out: what the caller reports with kiwi_qp_flush_report() once it has
 *       dropped the QP lock (CQ signals, IB_EVENT_QP_LAST_WQE_REACHED)
 *
 * Receives of a QP with an SRQ stay on the SRQ: they belong to it.
 * A Local Invalidate, and the send WRs behind it, complete only after an
 * RCU grace period (kiwi_sq_flush()); so do the receive WRs behind a Send
 * with Invalidate still held for its grace period (kiwi_rq_flush()).
 *
 * User space posts receives without a system call and rings the doorbell
 * only if it finds KIWI_RING_F_ERROR after publishing. So the flag is set
 * before the rings are read, with a full barrier between the flag store and
 * the producer loads; libkiwi fences between its producer store and its
 * flag load. Of a receive published concurrently, either the flush below
 * reads its producer index or libkiwi sees the flag and rings the doorbell,
 * which flushes again (store buffering: both loads missing both stores is
 * impossible with a full barrier on each side). Sends are the same pair
 * with KIWI_RING_F_DOORBELL, which a QP in error always has: a send WR
 * that libkiwi published without a doorbell, because TX was running, is
 * either flushed here or followed by a doorbell.
 */
void kiwi_qp_flush(struct kiwi_qp *qp, struct kiwi_qp_flushed *out)
{
	lockdep_assert_held(&qp->lock);

	kiwi_ring_set_error(&qp->sq, true);
	kiwi_ring_set_doorbell(&qp->sq, true);
	kiwi_ring_set_error(&qp->rq, true);
	/*
	 * Flags before producer loads; pairs with libkiwi's in_error() and
	 * needs_doorbell().
	 */
	smp_mb();
	out->send_res = kiwi_sq_flush(qp);
	out->recv_res = kiwi_rq_flush(qp);
	out->last_wqe = kiwi_qp_last_wqe_due(qp);
}

/**
 * kiwi_qp_flush_report - deliver what kiwi_qp_flush() found
 * @qp: the QP, no QP lock held (the CQ handlers and the event handler may
 *      call back into the verbs)
 * @out: kiwi_qp_flush()'s result
 */
void kiwi_qp_flush_report(struct kiwi_qp *qp,
			  const struct kiwi_qp_flushed *out)
{
	kiwi_cq_signal(to_kcq(qp->ibqp.send_cq), out->send_res);
	kiwi_cq_signal(to_kcq(qp->ibqp.recv_cq), out->recv_res);
	if (out->last_wqe)
		kiwi_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}
