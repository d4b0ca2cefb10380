// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: shared receive queues. An SRQ is a ring of struct kiwi_rqe; user
 * space produces into a user SRQ's mmap'd ring without a system call,
 * kernel consumers post with kiwi_post_srq_recv(). Resizing is not
 * supported.
 */
#include <linux/log2.h>

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

static int kiwi_srq_alloc(struct kiwi_srq *srq, u32 num,
			  struct ib_udata *udata)
{
	struct kiwi_uresp_create_srq resp = {};
	int rv;

	rv = kiwi_ring_alloc(to_kdev(srq->ibsrq.device), &srq->ring, num,
			     sizeof(struct kiwi_rqe), kiwi_uctx(udata));
	if (rv || !udata)
		return rv;
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

	kiwi_ring_free(&srq->ring);
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
