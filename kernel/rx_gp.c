// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: receive completions held for an RCU grace period.
 *
 * A received Send with Invalidate invalidates one of the consumer's MRs.
 * A copy into or out of that MR that passed its validity check before may
 * still run on another CPU, inside an RCU read-side section (mem_access.c):
 * another connection's RDMA Write being placed, a Read Response being
 * built from it. The consumer reuses the memory on the receive completion,
 * so that completion reaches the CQ only one grace period after the
 * invalidation, pushed from an RCU callback: RX never waits. Receives
 * complete in order, so the completions behind it wait as well, and so
 * does the flush of the RQ (kiwi_rq_flush()).
 *
 * Only if such a copy may exist, though: the common case (an NVMe-oF or
 * NFS reply that invalidates the MR the peer's Writes were placed into,
 * each Write done when its segment was) pays no grace period. Every copy
 * runs in a holder of an MR reference (kiwi_mr_get()), which the holder
 * drops after its last copy and which no lookup gets once the MR is
 * invalid. So after the invalidation, an MR whose only reference is its
 * own has no copy running and none to come: kiwi_mr_inval_busy() tells,
 * as dereg_mr decides whether to wait. The same rule spares the wait of
 * Local Invalidate and of Read with Invalidate (kiwi_sq_execute()). A
 * holder racing the check, another connection placing a Write or
 * building a Read Response from the MR, makes it wait as before.
 *
 * Only kernel QPs hold fast-register MRs, so only they hold completions
 * here. The room is bounded by the receive queue: a held receive WR still
 * counts as outstanding when the consumer posts (kiwi_post_recv(), and
 * kiwi_srq.held for an SRQ). A user QP has no room: what a peer can
 * invalidate there is a type 2 memory window, which no other connection
 * may use and which this QP's receive side, serial, is done with; its
 * Send with Invalidate completes at once. (A Read Response this QP's
 * transmit side may still be copying out of the window holds what the
 * peer asked for before it invalidated it.)
 */
#include <linux/mm.h>
#include <linux/rcupdate.h>

#include "kiwi.h"

static u64 kiwi_rx_gp_qmem(u32 cap)
{
	return (u64)cap * sizeof(struct kiwi_rx_gp_ent);
}

/**
 * kiwi_rx_gp_alloc - room for the receive completions a QP may hold
 * @qp: a new QP, its rings allocated
 * @attr: its creation attributes
 * @user: a user QP (none needed)
 *
 * Return: 0 or -ENOMEM.
 */
int kiwi_rx_gp_alloc(struct kiwi_qp *qp, const struct ib_qp_init_attr *attr,
		     bool user)
{
	struct kiwi_device *kdev = to_kdev(qp->ibqp.device);
	struct kiwi_rx_gp *g = &qp->rx_gp;
	u32 cap;
	int rv;

	if (user)
		return 0;
	cap = attr->srq ? to_ksrq(attr->srq)->ring.num : qp->rq.num;
	rv = kiwi_qmem_charge(kdev, kiwi_rx_gp_qmem(cap));
	if (rv)
		return rv;
	g->ent = kvcalloc(cap, sizeof(*g->ent), GFP_KERNEL);
	if (!g->ent) {
		kiwi_qmem_uncharge(kdev, kiwi_rx_gp_qmem(cap));
		return -ENOMEM;
	}
	g->cap = cap;
	return 0;
}

/* Undo kiwi_rx_gp_alloc(), after the last QP reference went. */
void kiwi_rx_gp_free(struct kiwi_qp *qp)
{
	struct kiwi_rx_gp *g = &qp->rx_gp;

	if (!g->ent)
		return;
	kvfree(g->ent);
	g->ent = NULL;
	kiwi_qmem_uncharge(to_kdev(qp->ibqp.device), kiwi_rx_gp_qmem(g->cap));
	g->cap = 0;
}

/*
 * Under qp->lock: push @cqe to the receive CQ. A user SRQ's WR is done
 * once its completion is there; a kernel SRQ's once it is polled.
 */
static int kiwi_rx_gp_cq(struct kiwi_qp *qp, const struct kiwi_cqe *cqe,
			 bool srq, u32 srq_slot)
{
	if (srq)
		kiwi_srq_completed(to_ksrq(qp->ibqp.srq), srq_slot);
	return kiwi_cq_push(to_kcq(qp->ibqp.recv_cq), cqe, &qp->ibqp, srq_slot);
}

/*
 * RCU callback: push the held completions whose turn came, oldest first;
 * once none is left, flush the RQ of a QP in error. Wait for another grace
 * period if some remain.
 */
static void kiwi_rx_gp_done(struct rcu_head *head)
{
	struct kiwi_qp *qp = container_of(head, struct kiwi_qp, rx_gp.rcu);
	struct kiwi_rx_gp *g = &qp->rx_gp;
	struct kiwi_rx_gp_ent *e;
	bool again, last = false;
	unsigned long flags;
	int acc = 0;

	spin_lock_irqsave(&qp->lock, flags);
	while (g->n) {
		e = &g->ent[g->head];
		if (e->gp && !poll_state_synchronize_rcu(e->cookie))
			break;
		acc |= kiwi_rx_gp_cq(qp, &e->cqe, e->srq, e->srq_slot);
		g->head = (g->head + 1) % g->cap;
		g->n--;
	}
	if (!g->n && qp->state == IB_QPS_ERR) {
		acc |= kiwi_rq_flush(qp);
		last = kiwi_qp_last_wqe_due(qp);
	}
	again = g->n;
	g->armed = again;
	if (again)
		call_rcu(&g->rcu, kiwi_rx_gp_done);
	spin_unlock_irqrestore(&qp->lock, flags);
	kiwi_cq_signal(to_kcq(qp->ibqp.recv_cq), acc);
	if (last)
		kiwi_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
	if (!again)
		kiwi_qp_put(qp);
}

/**
 * kiwi_rx_gp_push - complete a receive WR, in order
 * @qp: the QP, qp->lock held
 * @cqe: its completion
 * @srq: the WR came from the SRQ
 * @srq_slot: a kernel SRQ's slot for it (kiwi_srq_take())
 * @gp: a Send with Invalidate whose MR an access may still be copying
 *      under (kiwi_mr_inval_busy())
 *
 * With @gp the completion is held until one RCU grace period from now is
 * over; any completion is held while others are. A QP without room (a
 * user QP) holds none.
 *
 * Return: the kiwi_cq_push() result for kiwi_cq_signal() (0 if held).
 */
int kiwi_rx_gp_push(struct kiwi_qp *qp, const struct kiwi_cqe *cqe, bool srq,
		    u32 srq_slot, bool gp)
{
	struct kiwi_rx_gp *g = &qp->rx_gp;
	struct kiwi_rx_gp_ent *e;

	lockdep_assert_held(&qp->lock);
	if ((!gp && !g->n) || !g->cap || WARN_ON_ONCE(g->n >= g->cap))
		return kiwi_rx_gp_cq(qp, cqe, srq, srq_slot);
	e = &g->ent[(g->head + g->n++) % g->cap];
	e->cqe = *cqe;
	e->gp = gp;
	e->srq = srq;
	e->srq_slot = srq_slot;
	if (gp)
		e->cookie = get_state_synchronize_rcu();
	if (!g->armed) {
		g->armed = true;
		kiwi_qp_get(qp);
		call_rcu(&g->rcu, kiwi_rx_gp_done);
	}
	return 0;
}

/**
 * kiwi_rx_gp_discard - drop the held completions (modify_qp to RESET)
 * @qp: the QP, qp->lock held
 *
 * A pending callback finds none left and ends. The WRs of those taken off
 * a kernel SRQ go back on it (only kernel QPs hold completions here),
 * newest first, so that they keep their order there.
 */
void kiwi_rx_gp_discard(struct kiwi_qp *qp)
{
	struct kiwi_rx_gp *g = &qp->rx_gp;
	struct kiwi_rx_gp_ent *e;

	lockdep_assert_held(&qp->lock);
	for (; g->n; g->n--) {
		e = &g->ent[(g->head + g->n - 1) % g->cap];
		if (e->srq)
			kiwi_srq_dropped(to_ksrq(qp->ibqp.srq), e->srq_slot);
	}
}
