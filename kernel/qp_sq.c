// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: send queue bookkeeping of the data path.
 *
 * Three indices walk the SQ ring, oldest first:
 *   sq.cons   the oldest WR not yet completed; its slot is still in use;
 *   tx.next   the next WR TX starts; WRs in [sq.cons, tx.next) have their
 *             private copy in tx.swq and complete when marked done;
 *   producer  what the poster produced (kernel post_send or user space).
 * WRs complete in SQ order: a Send behind an outstanding Read waits for it,
 * every WR behind a Local Invalidate (or a Read with Invalidate) for its
 * RCU grace period if it takes one, in the error state too (the flush copies the WRs TX
 * never started into tx.swq and moves tx.next to the producer). All three
 * move under qp->lock.
 */
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>

#include "kiwi.h"

/*
 * Queue memory a QP holds besides its rings: the SQ shadow, and the
 * transmit state of a connection at the largest ORD and IRD (tx.c
 * allocates it when the QP connects; the budget takes it at create, so a
 * connection never fails for want of budget).
 */
static u64 kiwi_swq_qmem(const struct kiwi_qp *qp)
{
	return (u64)qp->sq.num * sizeof(struct kiwi_swqe) + KIWI_TX_BUF_LEN +
	       KIWI_MAX_ORD * sizeof(struct kiwi_orq_ent) +
	       KIWI_MAX_IRD * sizeof(struct kiwi_irq_ent);
}

/**
 * kiwi_swq_alloc - set up the send side's private memory of a new QP
 * @qp: the QP, its SQ ring allocated; called by the creating task
 *
 * Allocates the SQ shadow and takes it and the transmit buffers of a
 * later connection from the device's queue memory. A user QP remembers
 * its creator's memory cgroup, which tx.c charges those buffers to.
 *
 * Return: 0 or -ENOMEM.
 */
int kiwi_swq_alloc(struct kiwi_qp *qp)
{
	struct kiwi_device *kdev = to_kdev(qp->ibqp.device);
	int rv;

	rv = kiwi_qmem_charge(kdev, kiwi_swq_qmem(qp));
	if (rv)
		return rv;
	qp->tx.swq = kvcalloc(qp->sq.num, sizeof(*qp->tx.swq), kiwi_qp_gfp(qp));
	if (!qp->tx.swq) {
		kiwi_qmem_uncharge(kdev, kiwi_swq_qmem(qp));
		return -ENOMEM;
	}
	if (qp->ibqp.uobject)
		qp->memcg = get_mem_cgroup_from_mm(current->mm);
	return 0;
}

/* Undo kiwi_swq_alloc(); nothing if it failed or never ran. */
void kiwi_swq_free(struct kiwi_qp *qp)
{
	if (!qp->tx.swq)
		return;
	kvfree(qp->tx.swq);
	qp->tx.swq = NULL;
	kiwi_qmem_uncharge(to_kdev(qp->ibqp.device), kiwi_swq_qmem(qp));
	mem_cgroup_put(qp->memcg);
	qp->memcg = NULL;
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

/* Is @idx among the started, not yet retired WRs? (qp->lock) */
static bool kiwi_sq_started(struct kiwi_qp *qp, u32 idx)
{
	return idx - qp->sq.cons < qp->tx.next - qp->sq.cons;
}

static bool kiwi_swqe_signalled(struct kiwi_qp *qp,
				const struct kiwi_swqe *w)
{
	return qp->sq_sig_type == IB_SIGNAL_ALL_WR ||
	       (w->sqe.flags & KIWI_SQE_SIGNALED) ||
	       w->status != IB_WC_SUCCESS;
}

/*
 * Under qp->lock: must the completions wait for the TX run under way to
 * end? Once the QP left RTS and SQD, a completion made outside that run's
 * task (a flush, RX, an RCU callback) may concern memory TX still reads:
 * TX looks at the state once per FPDU, and until it next does it may go
 * on copying the source of the WR a flush just completed, or a Read
 * Response's from a memory region whose Local Invalidate the flush
 * completed unexecuted; a kernel consumer gives such pages back on the
 * completion. The run's end retires them (kiwi_tx_run()), after TX's last
 * copy. While connected, no completion made elsewhere concerns a WR TX
 * still reads: a Response or a refusal concerns only Requests TX framed,
 * after everything before them (struct kiwi_orq_ent, @framed).
 */
static bool kiwi_sq_wait_tx(struct kiwi_qp *qp)
{
	struct task_struct *t = qp->tx.run_task;

	return t && !(in_task() && t == current) && !kiwi_qp_connected(qp);
}

/**
 * kiwi_sq_retire - complete the done WRs at the head of the SQ, in order
 * @qp: the QP, qp->lock held
 *
 * Stops at a WR whose completion must wait for the TX run under way
 * (kiwi_sq_wait_tx()); that run retires it when it ends.
 *
 * Return: the merged kiwi_cq_push() result for kiwi_cq_signal().
 */
int kiwi_sq_retire(struct kiwi_qp *qp)
{
	struct kiwi_cq *cq = to_kcq(qp->ibqp.send_cq);
	struct kiwi_cqe cqe = { .qp_num = qp->ibqp.qp_num };
	struct kiwi_swqe *w;
	int acc = 0;

	lockdep_assert_held(&qp->lock);
	while (qp->sq.cons != qp->tx.next) {
		w = &qp->tx.swq[qp->sq.cons & (qp->sq.num - 1)];
		if (!w->done)
			break;
		if (kiwi_sq_wait_tx(qp)) {
			qp->tx.retire_held = true;
			break;
		}
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
		acc |= kiwi_cq_push(cq, &cqe, &qp->ibqp, KIWI_SRQ_NO_SLOT);
	}
	return acc;
}

/*
 * Under qp->lock: complete @w (unless a flush completed it meanwhile: it
 * keeps IB_WC_WR_FLUSH_ERR) and retire what can be.
 */
static int kiwi_sq_set_done(struct kiwi_qp *qp, struct kiwi_swqe *w,
			    u8 status)
{
	if (!w->done && !w->gp_wait) {
		w->status = status;
		w->done = true;
	}
	return kiwi_sq_retire(qp);
}

/**
 * kiwi_sq_complete - mark one started WR done and retire what can be
 * @qp: the QP (qp->lock not held)
 * @idx: SQ index of the WR, in [sq.cons, tx.next)
 * @status: its completion status
 *
 * A WR the QP flushed meanwhile keeps its flush status, or was retired
 * already (it left the window) and is ignored.
 */
void kiwi_sq_complete(struct kiwi_qp *qp, u32 idx, u8 status)
{
	unsigned long flags;
	int res = 0;

	spin_lock_irqsave(&qp->lock, flags);
	if (kiwi_sq_started(qp, idx))
		res = kiwi_sq_set_done(qp, &qp->tx.swq[idx & (qp->sq.num - 1)],
				       status);
	spin_unlock_irqrestore(&qp->lock, flags);
	kiwi_cq_signal(to_kcq(qp->ibqp.send_cq), res);
}

/*
 * RCU callback: the Local Invalidates whose grace period is over are done;
 * if others wait still, wait for another one. A graceful close (SQD) waits
 * for the SQ to drain, which TX checks when it runs out of work
 * (kiwi_tx_idle()): TX runs again once the SQ moved.
 */
static void kiwi_sq_gp_done(struct rcu_head *head)
{
	struct kiwi_qp *qp = container_of(head, struct kiwi_qp, tx.gp_rcu);
	struct kiwi_swqe *w;
	bool again = false, drain;
	unsigned long flags;
	int res;
	u32 i;

	spin_lock_irqsave(&qp->lock, flags);
	for (i = qp->sq.cons; i != qp->tx.next; i++) {
		w = &qp->tx.swq[i & (qp->sq.num - 1)];
		if (!w->gp_wait)
			continue;
		if (poll_state_synchronize_rcu(w->gp_cookie)) {
			w->gp_wait = false;
			w->done = true;
		} else {
			again = true;
		}
	}
	res = kiwi_sq_retire(qp);
	drain = qp->state == IB_QPS_SQD;
	qp->tx.gp_armed = again;
	if (again)
		call_rcu(&qp->tx.gp_rcu, kiwi_sq_gp_done);
	spin_unlock_irqrestore(&qp->lock, flags);
	kiwi_cq_signal(to_kcq(qp->ibqp.send_cq), res);
	if (drain)
		kiwi_tx_kick(qp);
	if (!again)
		kiwi_qp_put(qp);
}

/*
 * Under qp->lock: Local Invalidate @w is done once a grace period that
 * starts now is over (kiwi_sq_execute()). The pending callback
 * holds a QP reference: destroy waits for it, one grace period or two.
 */
static void kiwi_sq_wait_gp(struct kiwi_qp *qp, struct kiwi_swqe *w)
{
	w->gp_cookie = get_state_synchronize_rcu();
	w->gp_wait = true;
	if (!qp->tx.gp_armed) {
		qp->tx.gp_armed = true;
		kiwi_qp_get(qp);
		call_rcu(&qp->tx.gp_rcu, kiwi_sq_gp_done);
	}
}

/*
 * Under qp->lock: started WR @w will not run to its end: it completes
 * with IB_WC_WR_FLUSH_ERR, in SQ order. A Local Invalidate does so only
 * one grace period from now: TX may have invalidated the MR (or be about
 * to) while a copy into it, checked before, still runs on another CPU,
 * and the consumer gives the pages back on the completion, flushed or not.
 * One waiting for its grace period already keeps waiting for it.
 */
static void kiwi_swqe_flush(struct kiwi_qp *qp, struct kiwi_swqe *w)
{
	if (w->done || w->gp_wait)
		return;
	w->status = IB_WC_WR_FLUSH_ERR;
	if (w->sqe.opcode == KIWI_WR_LOCAL_INV)
		kiwi_sq_wait_gp(qp, w);
	else
		w->done = true;
}

/**
 * kiwi_sq_fail - WR @idx failed locally
 * @qp: the QP (qp->lock not held); it goes to error next
 * @idx: SQ index of the WR, in [sq.cons, tx.next)
 * @status: its completion status
 *
 * The WRs before it that are not complete (an outstanding Read, a Send
 * TCP has not taken) are flushed, then @idx completes with @status: in SQ
 * order, and the failed WR keeps its own status (the flush that follows
 * completes only the WRs after it). A Local Invalidate before it still
 * completes only after its grace period, and so does everything behind it.
 */
void kiwi_sq_fail(struct kiwi_qp *qp, u32 idx, u8 status)
{
	unsigned long flags;
	int res;

	spin_lock_irqsave(&qp->lock, flags);
	res = kiwi_sq_fail_locked(qp, idx, status);
	spin_unlock_irqrestore(&qp->lock, flags);
	kiwi_cq_signal(to_kcq(qp->ibqp.send_cq), res);
}

/**
 * kiwi_sq_fail_locked - kiwi_sq_fail() for a caller holding qp->lock
 * @qp: the QP, qp->lock held
 * @idx: SQ index of the WR, in [sq.cons, tx.next)
 * @status: its completion status
 *
 * Return: the merged kiwi_cq_push() result for kiwi_cq_signal().
 */
int kiwi_sq_fail_locked(struct kiwi_qp *qp, u32 idx, u8 status)
{
	u32 i;

	lockdep_assert_held(&qp->lock);
	if (!kiwi_sq_started(qp, idx))
		return 0;
	for (i = qp->sq.cons; i != idx; i++)
		kiwi_swqe_flush(qp, &qp->tx.swq[i & (qp->sq.num - 1)]);
	return kiwi_sq_set_done(qp, &qp->tx.swq[idx & (qp->sq.num - 1)],
				status);
}

/**
 * kiwi_sq_execute - execute a started local WR and complete it
 * @qp: the QP (qp->lock not held)
 * @idx: SQ index, in [sq.cons, tx.next), of a Local Invalidate, a
 *       fast-register, a window bind, or a Read with Invalidate whose last
 *       Response arrived (its sink is invalidated now)
 *
 * The operation runs under qp->lock, so a flush (kiwi_sq_flush(), also
 * under it) comes wholly before or after it, and the completion says what
 * happened to the MR: a WR flushed first is not executed and completes
 * with IB_WC_WR_FLUSH_ERR; one executed first completes successfully even
 * if a flush follows. A successful invalidation that a copy may still run
 * under (kiwi_mr_inval_busy(): a data-path holder of the MR), or a bind
 * that unbound a window, completes only after an RCU grace period: every
 * copy into or out of registered memory checks the MR's validity and
 * copies inside one RCU read-side section (mem_access.c), so a consumer
 * that reuses the buffer on the completion finds no copy still running.
 * Nobody waits for it here.
 *
 * Return: IB_WC_SUCCESS; IB_WC_WR_FLUSH_ERR (flushed first, not
 * executed); or the status of a failed operation (nothing changed), which
 * the caller completes the WR with before the QP goes to error.
 */
u8 kiwi_sq_execute(struct kiwi_qp *qp, u32 idx)
{
	struct kiwi_swqe *w = &qp->tx.swq[idx & (qp->sq.num - 1)];
	u8 st = IB_WC_WR_FLUSH_ERR;
	unsigned long flags;
	int res = 0;
	bool gp;

	spin_lock_irqsave(&qp->lock, flags);
	if (kiwi_sq_started(qp, idx) && !w->done && !w->gp_wait) {
		st = kiwi_swqe_local_op(qp, w, &gp);
		if (st == IB_WC_SUCCESS && gp)
			kiwi_sq_wait_gp(qp, w);
		else if (st == IB_WC_SUCCESS)
			res = kiwi_sq_set_done(qp, w, st);
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	kiwi_cq_signal(to_kcq(qp->ibqp.send_cq), res);
	return st;
}

/**
 * kiwi_sq_discard - drop every WR produced without completing any
 * @qp: a QP in RESET or INIT, whose TX has started nothing since its last
 *	reset; qp->lock held
 *
 * tx.next moves with sq.cons: a flush counts tx.next - sq.cons WRs as
 * started, so left behind it would walk about 2^32 stale slots.
 */
void kiwi_sq_discard(struct kiwi_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	kiwi_ring_discard(&qp->sq);
	qp->tx.next = qp->sq.cons;
}

/**
 * kiwi_sq_flush - complete every WR of the SQ with IB_WC_WR_FLUSH_ERR
 * @qp: a QP in the error state, qp->lock held
 *
 * The WRs TX has not started are copied out of the ring as TX would (a
 * user ring may change under us; only wr_id and the opcode are used) and
 * join the started ones, which TX starts no more. Each completes
 * in SQ order (kiwi_swqe_flush()): a Local Invalidate one grace period
 * later, and every WR behind it after it, those posted later in the error
 * state too (kiwi_post_send() queues them and flushes again). A user ring
 * whose producer index went back leaves the started WRs alone.
 *
 * Return: the merged kiwi_cq_push() result for kiwi_cq_signal().
 */
int kiwi_sq_flush(struct kiwi_qp *qp)
{
	u32 end = qp->sq.cons + max(kiwi_sq_produced(qp),
				    qp->tx.next - qp->sq.cons);
	struct kiwi_swqe *w;
	u32 i;

	lockdep_assert_held(&qp->lock);
	for (i = qp->sq.cons; i != end; i++) {
		w = &qp->tx.swq[i & (qp->sq.num - 1)];
		if (!kiwi_sq_started(qp, i)) {
			memcpy(&w->sqe, kiwi_ring_elem(&qp->sq, i),
			       sizeof(w->sqe));
			w->probe = false;
			w->done = false;
			w->gp_wait = false;
			w->len = 0;
			qp->tx.next = i + 1;
		}
		kiwi_swqe_flush(qp, w);
	}
	return kiwi_sq_retire(qp);
}
