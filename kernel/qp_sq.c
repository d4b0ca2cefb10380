// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: send queue bookkeeping of the data path.
 *
 * Three indices walk the SQ ring, oldest first:
 *   sq.cons   the oldest WR not yet completed; its slot is still in use;
 *   tx.next   the next WR TX starts; WRs in [sq.cons, tx.next) have their
 *             private copy in tx.swq and complete when marked done;
 *   producer  what the poster produced (kernel post_send or user space).
 * WRs complete in SQ order: a Send behind an outstanding Read waits for it.
 * All three move under qp->lock.
 */
#include <linux/mm.h>

#include "kiwi.h"

int kiwi_swq_alloc(struct kiwi_qp *qp)
{
	qp->tx.swq = kvcalloc(qp->sq.num, sizeof(*qp->tx.swq), GFP_KERNEL);
	return qp->tx.swq ? 0 : -ENOMEM;
}

void kiwi_swq_free(struct kiwi_qp *qp)
{
	kvfree(qp->tx.swq);
	qp->tx.swq = NULL;
}

/* Elements the poster produced beyond sq.cons (capped at the ring size). */
u32 kiwi_sq_produced(struct kiwi_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	return kiwi_ring_avail(&qp->sq);
}

/**
 * kiwi_sqe_is_read - is @sqe an RDMA Read, which completes when its last
 * Response arrives rather than when it was sent?
 * @qp: the QP
 * @sqe: the private copy of the SQE
 *
 * Read with Invalidate is a kernel-only opcode: in a user ring it is no
 * Read (TX fails it as an unknown opcode).
 */
bool kiwi_sqe_is_read(const struct kiwi_qp *qp, const struct kiwi_sqe *sqe)
{
	return sqe->opcode == KIWI_WR_RDMA_READ ||
	       (sqe->opcode == KIWI_WR_KREAD_INV && !qp->ibqp.uobject);
}

static bool kiwi_swqe_signalled(struct kiwi_qp *qp,
				const struct kiwi_swqe *w)
{
	return qp->sq_sig_type == IB_SIGNAL_ALL_WR ||
	       (w->sqe.flags & KIWI_SQE_SIGNALED) ||
	       w->status != IB_WC_SUCCESS;
}

/**
 * kiwi_sq_retire - complete the done WRs at the head of the SQ, in order
 * @qp: the QP, qp->lock held
 *
 * Return: the merged kiwi_cq_push() result for kiwi_cq_signal().
 */
int kiwi_sq_retire(struct kiwi_qp *qp)
{
	struct kiwi_cq *cq = to_kcq(qp->ibqp.send_cq);
	struct kiwi_cqe cqe = { .qp_num = qp->ibqp.qp_num };
	struct kiwi_swqe *w;
	int acc = 0, res;

	lockdep_assert_held(&qp->lock);
	while (qp->sq.cons != qp->tx.next) {
		w = &qp->tx.swq[qp->sq.cons & (qp->sq.num - 1)];
		if (!w->done)
			break;
		w->done = false;
		/*
		 * Free the slot before the completion is visible: a poster
		 * that reuses the slot the moment it polls the CQE (perftest
		 * keeps exactly SQ-depth WRs in flight) must find it free.
		 */
		kiwi_ring_consumed(&qp->sq);
		if (!kiwi_swqe_signalled(qp, w))
			continue;
		cqe.wr_id = w->sqe.wr_id;
		cqe.status = w->status;
		cqe.opcode = kiwi_sq_wc_opcode(w->sqe.opcode);
		cqe.byte_len = w->len;
		res = kiwi_cq_push(cq, &cqe, &qp->ibqp);
		acc = acc < 0 || res < 0 ? -ENOSPC : max(acc, res);
	}
	return acc;
}

/**
 * kiwi_sq_complete - mark one started WR done and retire what can be
 * @qp: the QP (qp->lock not held)
 * @idx: SQ index of the WR, in [sq.cons, tx.next)
 * @status: its completion status
 *
 * A WR the QP flushed meanwhile (it left the window) is ignored.
 */
void kiwi_sq_complete(struct kiwi_qp *qp, u32 idx, u8 status)
{
	unsigned long flags;
	int res = 0;

	spin_lock_irqsave(&qp->lock, flags);
	if (idx - qp->sq.cons < qp->tx.next - qp->sq.cons) {
		qp->tx.swq[idx & (qp->sq.num - 1)].status = status;
		qp->tx.swq[idx & (qp->sq.num - 1)].done = true;
		res = kiwi_sq_retire(qp);
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	kiwi_cq_signal(to_kcq(qp->ibqp.send_cq), res);
}
