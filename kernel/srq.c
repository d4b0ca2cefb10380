// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: shared receive queues. An SRQ is a ring of struct kiwi_rqe; user
 * space produces into a user SRQ's mmap'd ring without a system call,
 * kernel consumers post with kiwi_post_srq_recv(). Resizing is not
 * supported.
 *
 * A kernel SRQ keeps a copy of each WR a QP takes until the consumer polls
 * its completion, as hardware SRQs do: destroying a QP drops the
 * completions its kernel CQs still hold for it (kiwi_cq_clean(); each
 * names the QP by pointer), and a dropped receive's WR goes back on the
 * SRQ, still posted (kiwi_srq_put_back()), rather than being lost to a
 * consumer that reposts only what completes (nvmet-rdma with use_srq).
 */
#include <linux/log2.h>
#include <linux/mm.h>

#include "kiwi.h"

static int kiwi_srq_check(struct ib_srq_init_attr *attr)
{
	if (attr->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (attr->attr.max_wr < 1 || attr->attr.max_wr > KIWI_MAX_SRQ_WR ||
	    attr->attr.max_sge > KIWI_MAX_SGE ||
	    attr->attr.srq_limit > attr->attr.max_wr)
		return -EINVAL;
	return 0;
}

static u64 kiwi_srq_slots_qmem(u32 num)
{
	return (u64)num * (sizeof(struct kiwi_rqe) + sizeof(u32));
}

/* Free a kernel SRQ's slots of @num WRs (or what it had of them); uncharge. */
static void kiwi_srq_free_slots(struct kiwi_srq *srq, u32 num)
{
	kvfree(srq->taken);
	kvfree(srq->free_slot);
	srq->taken = NULL;
	srq->free_slot = NULL;
	kiwi_qmem_uncharge(to_kdev(srq->ibsrq.device), kiwi_srq_slots_qmem(num));
}

/* A kernel SRQ's copies of the WRs taken, and the stack of free slots. */
static int kiwi_srq_alloc_slots(struct kiwi_srq *srq, u32 num)
{
	int rv = kiwi_qmem_charge(to_kdev(srq->ibsrq.device),
				  kiwi_srq_slots_qmem(num));
	u32 i;

	if (rv)
		return rv;
	srq->taken = kvcalloc(num, sizeof(*srq->taken), GFP_KERNEL);
	srq->free_slot = kvcalloc(num, sizeof(*srq->free_slot), GFP_KERNEL);
	if (!srq->taken || !srq->free_slot) {
		kiwi_srq_free_slots(srq, num);
		return -ENOMEM;
	}
	for (i = 0; i < num; i++)
		srq->free_slot[i] = i;
	srq->nfree = num;
	return 0;
}

static void kiwi_srq_free(struct kiwi_srq *srq)
{
	if (srq->taken)		/* a kernel SRQ */
		kiwi_srq_free_slots(srq, srq->ring.num);
	kiwi_ring_free(&srq->ring);
}

static int kiwi_srq_alloc(struct kiwi_srq *srq, u32 num,
			  struct ib_udata *udata)
{
	struct kiwi_uresp_create_srq resp = {};
	int rv;

	rv = kiwi_ring_alloc(to_kdev(srq->ibsrq.device), &srq->ring, num,
			     sizeof(struct kiwi_rqe), kiwi_uctx(udata));
	if (rv)
		return rv;
	if (!udata) {
		rv = kiwi_srq_alloc_slots(srq, num);
		if (rv)
			kiwi_ring_free(&srq->ring);
		return rv;
	}
	resp.srq_key = kiwi_ring_key(&srq->ring);
	resp.num_rqe = srq->ring.num;
	rv = kiwi_udata_respond(udata, &resp, sizeof(resp));
	if (rv)
		kiwi_ring_free(&srq->ring);
	return rv;
}

int kiwi_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *attr,
		    struct ib_udata *udata)
{
	struct kiwi_device *kdev = to_kdev(ibsrq->device);
	struct kiwi_srq *srq = to_ksrq(ibsrq);
	int rv;

	rv = kiwi_srq_check(attr);
	if (!rv)
		rv = kiwi_udata_in_ok(udata);
	if (rv)
		return rv;
	if (!kiwi_count_get(&kdev->num_srq, KIWI_MAX_SRQ))
		return -ENOMEM;
	spin_lock_init(&srq->lock);
	atomic_set(&srq->held, 0);
	srq->taken = NULL;
	srq->free_slot = NULL;
	srq->max_sge = attr->attr.max_sge;
	srq->limit = attr->attr.srq_limit;
	rv = kiwi_srq_alloc(srq, roundup_pow_of_two(attr->attr.max_wr), udata);
	if (rv) {
		atomic_dec(&kdev->num_srq);
		return rv;
	}
	attr->attr.max_wr = srq->ring.num;
	return 0;
}

int kiwi_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct kiwi_srq *srq = to_ksrq(ibsrq);
	unsigned long flags;
	int rv;

	rv = kiwi_udata_in_ok(udata);
	if (rv)
		return rv;
	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->ring.num)
		return -EINVAL;
	spin_lock_irqsave(&srq->lock, flags);
	srq->limit = attr->srq_limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

int kiwi_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct kiwi_srq *srq = to_ksrq(ibsrq);
	unsigned long flags;

	attr->max_wr = srq->ring.num;
	attr->max_sge = srq->max_sge;
	spin_lock_irqsave(&srq->lock, flags);
	attr->srq_limit = srq->limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

int kiwi_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct kiwi_srq *srq = to_ksrq(ibsrq);

	kiwi_srq_free(srq);
	atomic_dec(&to_kdev(ibsrq->device)->num_srq);
	return 0;
}

/**
 * kiwi_post_srq_recv - ib_device_ops.post_srq_recv, kernel SRQs
 * @ibsrq: the SRQ
 * @wr: receive work requests
 * @bad_wr: set to the first failed work request
 *
 * Return: 0, -EINVAL (user SRQ, too many SGEs), -ENOMEM (SRQ full).
 */
int kiwi_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct kiwi_srq *srq = to_ksrq(ibsrq);
	struct kiwi_ring *r = &srq->ring;
	unsigned long flags;
	int rv = 0;

	if (ibsrq->uobject) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		/* Taken WRs not yet completed are outstanding (rx_gp.c). */
		if (kiwi_ring_room(r) <= (u32)atomic_read(&srq->held)) {
			rv = -ENOMEM;
			break;
		}
		rv = kiwi_rqe_from_wr(kiwi_ring_elem(r, r->prod), wr,
				      srq->max_sge);
		if (rv)
			break;
		kiwi_ring_produced(r);
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (rv)
		*bad_wr = wr;
	return rv;
}

/**
 * kiwi_srq_take - take the next WR off the SRQ for an incoming Send
 * @srq: the SRQ
 * @rqe: output: a copy of the WR
 * @slot: output: a kernel SRQ's slot keeping another copy until the
 *	  completion is polled or dropped; KIWI_SRQ_NO_SLOT for a user SRQ
 * @fire: output: the armed limit was crossed (the limit is disarmed; the
 *	  caller reports IB_EVENT_SRQ_LIMIT_REACHED)
 *
 * Return: whether a WR was there.
 */
bool kiwi_srq_take(struct kiwi_srq *srq, struct kiwi_rqe *rqe, u32 *slot,
		   bool *fire)
{
	struct kiwi_ring *r = &srq->ring;
	unsigned long flags;
	u32 left;

	*slot = KIWI_SRQ_NO_SLOT;
	*fire = false;
	spin_lock_irqsave(&srq->lock, flags);
	left = kiwi_ring_avail(r);
	/*
	 * A kernel post keeps posted plus held WRs within the ring, so a WR
	 * on the ring means a free slot; the test only keeps that local.
	 */
	if (!left || (srq->taken && !srq->nfree)) {
		spin_unlock_irqrestore(&srq->lock, flags);
		return false;
	}
	memcpy(rqe, kiwi_ring_elem(r, r->cons), sizeof(*rqe));
	kiwi_ring_consumed(r);
	atomic_inc(&srq->held);
	if (srq->taken) {
		*slot = srq->free_slot[--srq->nfree];
		srq->taken[*slot] = *rqe;
	}
	*fire = srq->limit && left - 1 < srq->limit;
	if (*fire)
		srq->limit = 0;
	spin_unlock_irqrestore(&srq->lock, flags);
	return true;
}

/* Under srq->lock: @slot is free again, its WR done. */
static void kiwi_srq_slot_free(struct kiwi_srq *srq, u32 slot)
{
	srq->free_slot[srq->nfree++] = slot;
	atomic_dec(&srq->held);
}

/**
 * kiwi_srq_polled - the consumer polled the completion of a kernel SRQ's WR
 * @srq: the SRQ
 * @slot: the WR's slot (kiwi_srq_take())
 *
 * The WR is done: the consumer may post another in its place. Interrupts
 * off (under the CQ's lock).
 */
void kiwi_srq_polled(struct kiwi_srq *srq, u32 slot)
{
	spin_lock(&srq->lock);
	kiwi_srq_slot_free(srq, slot);
	spin_unlock(&srq->lock);
}

/**
 * kiwi_srq_put_back - post again a kernel SRQ's WR whose completion was
 * dropped
 * @srq: the SRQ
 * @slot: the WR's slot (kiwi_srq_take())
 *
 * The consumer never learns that the WR was used, so it is posted again,
 * ahead of the others: in front of the ring's consumer index, whose slot is
 * free because a kernel post counts held WRs as outstanding. Interrupts off
 * (under the CQ's or the QP's lock).
 */
void kiwi_srq_put_back(struct kiwi_srq *srq, u32 slot)
{
	struct kiwi_ring *r = &srq->ring;

	spin_lock(&srq->lock);
	memcpy(kiwi_ring_elem(r, r->cons - 1), &srq->taken[slot],
	       sizeof(struct kiwi_rqe));
	kiwi_ring_unconsumed(r);
	kiwi_srq_slot_free(srq, slot);
	spin_unlock(&srq->lock);
}

/**
 * kiwi_srq_completed - the completion of a WR taken off @srq reached its CQ
 * @srq: the SRQ
 * @slot: the WR's slot (kiwi_srq_take())
 *
 * A user SRQ's WR is done now; a kernel SRQ's once the consumer polls it
 * (kiwi_srq_polled()).
 */
void kiwi_srq_completed(struct kiwi_srq *srq, u32 slot)
{
	if (slot == KIWI_SRQ_NO_SLOT)
		atomic_dec(&srq->held);
}

/**
 * kiwi_srq_dropped - the completion of a WR taken off @srq will never reach
 * its CQ
 * @srq: the SRQ
 * @slot: the WR's slot (kiwi_srq_take())
 *
 * A kernel SRQ's WR goes back on it (kiwi_srq_put_back()); a user SRQ's is
 * done. Interrupts off.
 */
void kiwi_srq_dropped(struct kiwi_srq *srq, u32 slot)
{
	if (slot == KIWI_SRQ_NO_SLOT)
		atomic_dec(&srq->held);
	else
		kiwi_srq_put_back(srq, slot);
}
