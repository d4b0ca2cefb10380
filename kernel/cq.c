// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: completion queues. A CQ is a ring of struct kiwi_cqe that the
 * kernel produces; user space consumes a user CQ directly, kernel consumers
 * go through kiwi_poll_cq().
 */
#include <linux/bottom_half.h>
#include <linux/log2.h>
#include <linux/preempt.h>
#include <linux/slab.h>

#include "kiwi.h"
#include "kiwi_trace.h"

/* Create and resize answer with the ring's mmap key and size. */
static int kiwi_cq_respond(const struct kiwi_ring *r, struct ib_udata *udata)
{
	struct kiwi_uresp_create_cq resp = {
		.cq_key = kiwi_ring_key(r),
		.num_cqe = r->num,
	};

	return kiwi_udata_respond(udata, &resp, sizeof(resp));
}

/* A kernel CQ's table beside its @num CQEs, in the device's queue memory. */
static int kiwi_cq_alloc_kent(struct kiwi_device *kdev,
			      struct kiwi_cq_kent **kent, u32 num)
{
	int rv = kiwi_qmem_charge(kdev, (u64)num * sizeof(**kent));

	if (rv)
		return rv;
	*kent = kvcalloc(num, sizeof(**kent), GFP_KERNEL);
	if (*kent)
		return 0;
	kiwi_qmem_uncharge(kdev, (u64)num * sizeof(**kent));
	return -ENOMEM;
}

static void kiwi_cq_free_kent(struct kiwi_device *kdev,
			      struct kiwi_cq_kent **kent, u32 num)
{
	if (!*kent)
		return;
	kvfree(*kent);
	*kent = NULL;
	kiwi_qmem_uncharge(kdev, (u64)num * sizeof(**kent));
}

static int kiwi_cq_alloc(struct kiwi_device *kdev, struct kiwi_cq *cq, u32 num,
			 struct ib_udata *udata)
{
	int rv;

	if (!udata) {
		rv = kiwi_cq_alloc_kent(kdev, &cq->kent, num);
		if (rv)
			return rv;
	}
	rv = kiwi_ring_alloc(kdev, &cq->ring, num, sizeof(struct kiwi_cqe),
			     kiwi_uctx(udata));
	if (!rv && udata) {
		rv = kiwi_cq_respond(&cq->ring, udata);
		if (rv)
			kiwi_ring_free(&cq->ring);
	}
	if (rv)
		kiwi_cq_free_kent(kdev, &cq->kent, num);
	return rv;
}

/*
 * The next QP from number *@idx on that uses @cq, with a reference (the
 * qp_xa lock keeps destroy from releasing it meanwhile, kiwi_qp_lookup()).
 */
static struct kiwi_qp *kiwi_cq_next_qp(struct kiwi_cq *cq, unsigned long *idx)
{
	struct kiwi_device *kdev = to_kdev(cq->ibcq.device);
	struct kiwi_qp *qp;

	xa_lock(&kdev->qp_xa);
	xa_for_each_start(&kdev->qp_xa, *idx, qp, *idx) {
		if (qp->ibqp.send_cq == &cq->ibcq ||
		    qp->ibqp.recv_cq == &cq->ibcq) {
			kiwi_qp_get(qp);
			break;
		}
	}
	xa_unlock(&kdev->qp_xa);
	return qp;
}

/**
 * kiwi_cq_overrun_work - the QPs of an overrun CQ go to the error state
 * @work: the CQ's overrun_work
 *
 * A completion was lost, so no QP that completes on the CQ can go on: each
 * one not in error yet is moved there (its WRs flushed), gets
 * IB_EVENT_QP_FATAL and loses its stream, as a local catastrophic error
 * would. QPs on other CQs are not touched (RFC 5040 8.1.1 rule 10).
 */
static void kiwi_cq_overrun_work(struct work_struct *work)
{
	struct kiwi_cq *cq = container_of(work, struct kiwi_cq, overrun_work);
	unsigned long idx = 0;
	struct kiwi_qp *qp;

	while ((qp = kiwi_cq_next_qp(cq, &idx))) {
		if (kiwi_qp_to_error(qp))
			kiwi_qp_event(qp, IB_EVENT_QP_FATAL);
		mutex_lock(&qp->tx.llp_mutex);
		kiwi_qp_close_llp(qp, true);
		mutex_unlock(&qp->tx.llp_mutex);
		kiwi_qp_put(qp);
		idx++;
	}
}

int kiwi_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata)
{
	struct kiwi_device *kdev = to_kdev(ibcq->device);
	struct kiwi_cq *cq = to_kcq(ibcq);
	int rv;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > KIWI_MAX_CQE)
		return -EINVAL;
	rv = kiwi_udata_in_ok(udata);
	if (rv)
		return rv;
	if (!kiwi_count_get(&kdev->num_cq, KIWI_MAX_CQ))
		return -ENOMEM;
	spin_lock_init(&cq->lock);
	atomic_set(&cq->overrun, 0);
	INIT_WORK(&cq->overrun_work, kiwi_cq_overrun_work);
	rv = kiwi_cq_alloc(kdev, cq, roundup_pow_of_two(attr->cqe), udata);
	if (rv) {
		atomic_dec(&kdev->num_cq);
		return rv;
	}
	ibcq->cqe = cq->ring.num;
	return 0;
}

int kiwi_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct kiwi_device *kdev = to_kdev(ibcq->device);
	struct kiwi_cq *cq = to_kcq(ibcq);

	cancel_work_sync(&cq->overrun_work);
	kiwi_cq_free_kent(kdev, &cq->kent, cq->ring.num);
	kiwi_ring_free(&cq->ring);
	atomic_dec(&kdev->num_cq);
	return 0;
}

/*
 * Under cq->lock: move the CQEs not consumed yet, oldest first, to the
 * start of @to, an empty ring (and what a kernel CQ keeps beside them to
 * @kent, its new table), and the arm word with them. A user CQ's consumer index is
 * user-written: one that claims more CQEs than the ring holds is refused.
 */
static int kiwi_cq_move(struct kiwi_cq *cq, struct kiwi_ring *to,
			struct kiwi_cq_kent *kent)
{
	struct kiwi_ring *r = &cq->ring;
	u32 cons, n, i;

	cons = kiwi_ring_consumer(r);
	n = r->prod - cons;
	if (n > r->num || n > to->num)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		memcpy(kiwi_ring_elem(to, i), kiwi_ring_elem(r, cons + i),
		       sizeof(struct kiwi_cqe));
		if (kent)
			kent[i] = cq->kent[(cons + i) & (r->num - 1)];
	}
	to->prod = n;
	/* Release: the moved CQEs are in place before the index says so. */
	smp_store_release(&to->ctrl->producer, n);
	WRITE_ONCE(to->ctrl->arm, READ_ONCE(r->ctrl->arm));
	return 0;
}

/**
 * kiwi_resize_cq - ib_device_ops.resize_cq
 * @ibcq: the CQ
 * @cqe: entries wanted, rounded up to a power of two
 * @udata: a user CQ's response: the new ring's mmap key and size
 *
 * A new ring takes the completions not polled yet, in order, under the CQ
 * lock, so a completion produced meanwhile lands in one ring or the other
 * and is moved if it went to the old one. The caller must not poll or arm
 * the CQ meanwhile (libkiwi holds its CQ lock across the command and maps
 * the new ring before it lets go); the old ring's memory stays until user
 * space unmaps it.
 *
 * Return: 0; -EINVAL if @cqe is out of range or fewer than the completions
 * outstanding; -ENOMEM.
 */
int kiwi_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct kiwi_device *kdev = to_kdev(ibcq->device);
	struct kiwi_cq *cq = to_kcq(ibcq);
	struct kiwi_cq_kent *kent = NULL;
	struct kiwi_ring to, old;
	unsigned long flags;
	u32 num, old_num;
	int rv;

	if (cqe < 1 || cqe > KIWI_MAX_CQE)
		return -EINVAL;
	rv = kiwi_udata_in_ok(udata);
	if (rv)
		return rv;
	num = roundup_pow_of_two(cqe);
	if (!udata) {
		rv = kiwi_cq_alloc_kent(kdev, &kent, num);
		if (rv)
			return rv;
	}
	rv = kiwi_ring_alloc(kdev, &to, num, sizeof(struct kiwi_cqe),
			     kiwi_uctx(udata));
	if (!rv && udata)
		rv = kiwi_cq_respond(&to, udata);
	if (rv)
		goto err;
	spin_lock_irqsave(&cq->lock, flags);
	rv = kiwi_cq_move(cq, &to, kent);
	if (!rv) {
		old = cq->ring;
		cq->ring = to;
		swap(cq->kent, kent);
		ibcq->cqe = num;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	if (rv)
		goto err;
	old_num = old.num;
	kiwi_ring_free(&old);
	kiwi_cq_free_kent(kdev, &kent, old_num);
	return 0;

err:
	kiwi_ring_free(&to);
	kiwi_cq_free_kent(kdev, &kent, num);
	return rv;
}

/* Does @cqe satisfy the armed condition? Clears the arm word if so. */
static bool kiwi_cq_disarm(struct kiwi_cq *cq, const struct kiwi_cqe *cqe)
{
	u32 arm = READ_ONCE(cq->ring.ctrl->arm);
	bool fire;

	fire = arm == KIWI_CQ_ARM_NEXT ||
	       (arm == KIWI_CQ_ARM_SOLICITED &&
		((cqe->flags & KIWI_CQE_SOLICITED) ||
		 cqe->status != IB_WC_SUCCESS));
	return fire && cmpxchg(&cq->ring.ctrl->arm, arm, KIWI_CQ_ARM_NONE) == arm;
}

/**
 * kiwi_cq_push - produce one completion
 * @cq: the CQ
 * @cqe: the completion
 * @qp: the QP it belongs to (kept for kernel CQs)
 * @srq_slot: a receive from a kernel SRQ: its WR's slot there (kept until
 *	      the completion is polled), else KIWI_SRQ_NO_SLOT. Such a WR
 *	      whose completion is lost to an overrun goes back on the SRQ.
 *
 * Takes the CQ lock. Does not call the consumer: the caller passes the
 * result to kiwi_cq_signal() once it holds no lock a consumer may need.
 *
 * Return: KIWI_CQ_FIRE if the completion event must be signalled,
 * KIWI_CQ_OVERRUN if the CQ is full (the completion is lost), else 0.
 */
int kiwi_cq_push(struct kiwi_cq *cq, const struct kiwi_cqe *cqe,
		 struct ib_qp *qp, u32 srq_slot)
{
	struct kiwi_ring *r = &cq->ring;
	struct kiwi_cq_kent *ke;
	unsigned long flags;
	int rv = KIWI_CQ_OVERRUN;

	spin_lock_irqsave(&cq->lock, flags);
	if (!kiwi_ring_room(r)) {
		if (srq_slot != KIWI_SRQ_NO_SLOT)
			kiwi_srq_put_back(to_ksrq(qp->srq), srq_slot);
	} else {
		memcpy(kiwi_ring_elem(r, r->prod), cqe, sizeof(*cqe));
		if (cq->kent) {
			ke = &cq->kent[r->prod & (r->num - 1)];
			ke->qp = qp;
			ke->srq_slot = srq_slot;
		}
		kiwi_ring_produced(r);
		/*
		 * Store-buffering pair with the consumer, which stores the
		 * arm word, fences and then looks for CQEs (libkiwi's
		 * ConsumerRing::arm(), kiwi_req_notify_cq()): the producer
		 * store must be visible before the arm word is read, or both
		 * sides miss each other and the event is lost.
		 */
		smp_mb();
		trace_kiwi_cqe(&cq->ibcq, cqe);
		rv = kiwi_cq_disarm(cq, cqe) ? KIWI_CQ_FIRE : 0;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return rv;
}

/*
 * The consumer's completion handler. From a task (TX's worker, a post, RX's
 * read work) it runs with bottom halves off: a handler that
 * raises a softirq, as ib_cq's IB_POLL_SOFTIRQ does (irq_poll), then has
 * it run here at local_bh_enable() instead of waking ksoftirqd, a context
 * switch per completion. With interrupts off (a kernel consumer posting
 * under an irq-safe lock) bottom halves cannot be turned back on here.
 */
static void kiwi_cq_call_handler(struct kiwi_cq *cq)
{
	if (!in_task() || irqs_disabled()) {
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
		return;
	}
	local_bh_disable();
	cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	local_bh_enable();
}

/**
 * kiwi_cq_signal - deliver what kiwi_cq_push() asked for
 * @cq: the CQ
 * @push_result: a kiwi_cq_push() result, or several OR-ed together
 *
 * Calls the completion handler if a push fired the armed event, also when
 * a later push of the batch overran: the consumer armed and a completion
 * is there to poll. The first overrun is reported as IB_EVENT_CQ_ERR.
 * Every overrun takes the CQ's QPs to the error state
 * (kiwi_cq_overrun_work()): one created on the CQ after an earlier
 * overrun, or brought back from RESET, loses a completion too. Must be
 * called without QP, SRQ or CQ locks held.
 */
void kiwi_cq_signal(struct kiwi_cq *cq, int push_result)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if ((push_result & KIWI_CQ_FIRE) && cq->ibcq.comp_handler)
		kiwi_cq_call_handler(cq);
	if (!(push_result & KIWI_CQ_OVERRUN))
		return;
	if (!atomic_xchg(&cq->overrun, 1) && cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	queue_work(kiwi_wq, &cq->overrun_work);
}

/**
 * kiwi_cq_clean - drop a destroyed QP's completions from a kernel CQ
 * @cq: the QP's send or receive CQ
 * @ibqp: the QP, on which nothing completes any more
 *
 * A kernel consumer's work completion names its QP by pointer (wc->qp),
 * and the core frees the QP when destroy_qp returns; a completion still
 * on the CQ would hand the consumer a freed QP. ib_drain_qp() leaves the
 * receive completions of a QP on an SRQ (flushed ones included) to the
 * consumer, so some can remain. They are dropped, as hardware drivers
 * clean their CQs of a destroyed QP; the others keep their order. The WR
 * of a dropped receive from the SRQ goes back on it: the consumer never
 * saw it complete. User CQs name QPs by number and are left alone.
 */
void kiwi_cq_clean(struct kiwi_cq *cq, struct ib_qp *ibqp)
{
	struct kiwi_ring *r = &cq->ring;
	struct kiwi_cq_kent *ke;
	unsigned long flags;
	u32 mask, i, keep;

	if (!cq->kent)
		return;
	spin_lock_irqsave(&cq->lock, flags);
	/* Under the lock: a resize_cq replaces the ring and cq->kent. */
	mask = r->num - 1;
	keep = r->prod;
	/* Newest first: the WRs given back keep their order on the SRQ. */
	for (i = r->prod; i != r->cons;) {
		i--;
		ke = &cq->kent[i & mask];
		if (ke->qp == ibqp) {
			if (ke->srq_slot != KIWI_SRQ_NO_SLOT)
				kiwi_srq_put_back(to_ksrq(ibqp->srq),
						  ke->srq_slot);
			continue;
		}
		keep--;
		if (keep == i)
			continue;
		memcpy(kiwi_ring_elem(r, keep), kiwi_ring_elem(r, i),
		       sizeof(struct kiwi_cqe));
		cq->kent[keep & mask] = *ke;
	}
	r->cons = keep;
	/* Release as kiwi_ring_consumed(): the moves come before the index. */
	smp_store_release(&r->ctrl->consumer, r->cons);
	spin_unlock_irqrestore(&cq->lock, flags);
}

static void kiwi_cqe_to_wc(const struct kiwi_cqe *cqe, struct ib_qp *qp,
			   struct ib_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->qp = qp;
	wc->port_num = 1;
	if (cqe->flags & KIWI_CQE_WITH_INV) {
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
		wc->ex.invalidate_rkey = cqe->inv_rkey;
	}
	if (cqe->flags & KIWI_CQE_WITH_IMM) {
		wc->wc_flags |= IB_WC_WITH_IMM;
		wc->ex.imm_data = cqe->imm_data;
	}
}

/* Kernel consumers only: user CQs are polled in user space. */
int kiwi_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct kiwi_cq *cq = to_kcq(ibcq);
	struct kiwi_ring *r = &cq->ring;
	struct kiwi_cq_kent *ke;
	unsigned long flags;
	int n = 0;

	if (!cq->kent)
		return -EINVAL;
	spin_lock_irqsave(&cq->lock, flags);
	while (n < num_entries && r->cons != r->prod) {
		ke = &cq->kent[r->cons & (r->num - 1)];
		kiwi_cqe_to_wc(kiwi_ring_elem(r, r->cons), ke->qp, &wc[n]);
		if (ke->srq_slot != KIWI_SRQ_NO_SLOT)
			kiwi_srq_polled(to_ksrq(ke->qp->srq), ke->srq_slot);
		kiwi_ring_consumed(r);
		n++;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

int kiwi_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct kiwi_cq *cq = to_kcq(ibcq);
	u32 arm = (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
		  KIWI_CQ_ARM_SOLICITED : KIWI_CQ_ARM_NEXT;
	struct kiwi_ring_ctrl *ctrl;
	unsigned long irqflags;
	u32 prod;
	int missed;

	/* The lock keeps the ring from being resized under us. */
	spin_lock_irqsave(&cq->lock, irqflags);
	ctrl = cq->ring.ctrl;
	/* Full barrier: arm before looking for CQEs that raced with it. */
	smp_store_mb(ctrl->arm, arm);
	/*
	 * Acquire pairs with kiwi_ring_produced(). A user CQ's consumer index
	 * is user-written: only a hint here.
	 */
	prod = smp_load_acquire(&ctrl->producer);
	missed = prod != READ_ONCE(ctrl->consumer);
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return (flags & IB_CQ_REPORT_MISSED_EVENTS) ? missed : 0;
}
