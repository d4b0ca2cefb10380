// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: receive WRs on the receive side (RX context): taking the WR of an
 * incoming Send from the RQ or SRQ, placing into its SGEs, completing it.
 *
 * An RQ element stays in the ring (at rq.cons) until its Send is
 * delivered, so a flush still finds it; an SRQ element is taken off the
 * SRQ and, if the QP fails before delivery, flushed by kiwi_rx_release().
 */
#include "kiwi.h"
#include "conn.h"

static void kiwi_srq_limit_event(struct kiwi_srq *srq)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/* Take the next SRQ element; raise the armed limit event. */
static bool kiwi_rx_take_srq(struct kiwi_qp *qp, struct kiwi_qp_rx *rx,
			     u32 *max_sge)
{
	struct kiwi_srq *srq = to_ksrq(qp->ibqp.srq);
	bool took, fire;

	took = kiwi_srq_take(srq, &rx->rqe, &rx->rqe_slot, &fire);
	*max_sge = srq->max_sge;
	if (fire)
		kiwi_srq_limit_event(srq);
	return took;
}

/* Copy the RQ element at rq.cons; it stays there until delivery. */
static bool kiwi_rx_peek_rq(struct kiwi_qp *qp, struct kiwi_rqe *rqe)
{
	unsigned long flags;
	bool took;

	spin_lock_irqsave(&qp->lock, flags);
	took = kiwi_qp_connected(qp) && kiwi_ring_avail(&qp->rq);
	if (took)
		memcpy(rqe, kiwi_ring_elem(&qp->rq, qp->rq.cons),
		       sizeof(*rqe));
	spin_unlock_irqrestore(&qp->lock, flags);
	return took;
}

static void kiwi_rx_rqe_put(struct kiwi_qp_rx *rx)
{
	u32 i;

	for (i = 0; i < KIWI_MAX_SGE; i++) {
		if (rx->rqe_mr[i])
			kiwi_mr_put(rx->rqe_mr[i]);
		rx->rqe_mr[i] = NULL;
	}
}

/**
 * kiwi_rqe_check - check the SGEs of a receive element and hold their MRs
 * @qp: the QP
 * @rqe: a copy of the element (a user ring is hostile)
 * @max_sge: SGEs the queue takes
 * @mr: output: a reference on each non-empty SGE's MR (NULL-initialised
 *	by the caller, who puts what is there, on failure too)
 * @len: output: the element's total length
 *
 * Return: IB_WC_SUCCESS, or the status the WR completes with: more SGEs
 * than the queue takes, or an SGE that names no MR of the QP's PD with
 * local write access over its range.
 */
u8 kiwi_rqe_check(struct kiwi_qp *qp, const struct kiwi_rqe *rqe,
		  u32 max_sge, struct kiwi_mr **mr, u64 *len)
{
	struct kiwi_device *kdev = to_kdev(qp->ibqp.device);
	const struct kiwi_sge *sge;
	u32 i;

	*len = 0;
	if (rqe->num_sge > max_sge || rqe->num_sge > KIWI_MAX_SGE)
		return IB_WC_LOC_QP_OP_ERR;
	for (i = 0; i < rqe->num_sge; i++) {
		sge = &rqe->sge[i];
		*len += sge->length;
		if (!sge->length)
			continue;
		mr[i] = kiwi_mr_get(kdev, sge->lkey);
		if (!mr[i] ||
		    kiwi_mr_check(mr[i], sge->lkey, qp->ibqp.pd,
				  IB_ACCESS_LOCAL_WRITE, sge->addr,
				  sge->length) != KIWI_MEM_OK)
			return IB_WC_LOC_PROT_ERR;
	}
	return IB_WC_SUCCESS;
}

/**
 * kiwi_rx_take_rqe - make sure a receive WR is held for the current Send
 * @qp: the QP
 *
 * A receive WR with bad SGEs is a local fault of that WR: it completes
 * with its own status here (as with siw, the consumer learns which WR was
 * bad), and the error returned then fails the QP, which flushes the WRs
 * behind it.
 *
 * Return: KIWI_TERM_ERR_NONE (rx.have_rqe tells whether one was there), or
 * the error of a receive WR with bad SGEs.
 */
enum kiwi_term_err kiwi_rx_take_rqe(struct kiwi_qp *qp)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	u32 max_sge = qp->max_recv_sge;
	u8 status;

	if (rx->have_rqe)
		return KIWI_TERM_ERR_NONE;
	rx->rqe_slot = KIWI_SRQ_NO_SLOT;
	if (qp->ibqp.srq)
		rx->have_rqe = kiwi_rx_take_srq(qp, rx, &max_sge);
	else
		rx->have_rqe = kiwi_rx_peek_rq(qp, &rx->rqe);
	rx->rqe_srq = qp->ibqp.srq && rx->have_rqe;
	if (!rx->have_rqe)
		return KIWI_TERM_ERR_NONE;
	status = kiwi_rqe_check(qp, &rx->rqe, max_sge, rx->rqe_mr,
				&rx->rqe_len);
	if (status == IB_WC_SUCCESS)
		return KIWI_TERM_ERR_NONE;
	kiwi_rx_fail_rqe(qp, status);
	return KIWI_TERM_ERR_RDMAP_CATASTROPHIC;
}

/**
 * kiwi_rx_fail_rqe - complete the held receive WR with an error of its own
 * @qp: the QP
 * @status: IB_WC_LOC_PROT_ERR (bad SGEs), IB_WC_LOC_LEN_ERR (the Send is
 *	longer than the WR), ...
 *
 * The consumer learns which WR failed and why, as on siw and rxe; the
 * caller then fails the QP, which flushes the WRs behind it.
 */
void kiwi_rx_fail_rqe(struct kiwi_qp *qp, u8 status)
{
	struct kiwi_cqe cqe = { .status = status, .opcode = KIWI_WC_RECV };

	kiwi_rx_complete_rqe(qp, &cqe);
}

/**
 * kiwi_rqe_copy - copy octets into a receive element checked by
 * kiwi_rqe_check()
 * @rqe: the element
 * @mr: the MRs kiwi_rqe_check() holds for it
 * @off: message offset of the first octet
 * @src: the octets
 * @len: how many
 *
 * Return: 0, -ERANGE if the element is too short, or -EFAULT.
 */
int kiwi_rqe_copy(const struct kiwi_rqe *rqe, struct kiwi_mr *const *mr,
		  u64 off, const u8 *src, u32 len)
{
	const struct kiwi_sge *sge;
	u32 i, n;
	int rv;

	for (i = 0; i < rqe->num_sge && len; i++) {
		sge = &rqe->sge[i];
		if (off >= sge->length) {
			off -= sge->length;
			continue;
		}
		n = min_t(u64, len, sge->length - off);
		rv = kiwi_mr_write(mr[i], sge->addr + off, src, n);
		if (rv)
			return rv;
		src += n;
		len -= n;
		off = 0;
	}
	return len ? -ERANGE : 0;
}

/**
 * kiwi_rx_place_rqe - place Send payload into the held receive WR
 * @qp: the QP
 * @off: message offset of the first octet
 * @src: the octets
 * @len: how many
 *
 * An RQ element stays in the RQ until delivery, where a flush (modify_qp
 * to ERR, under qp->lock) completes it with IB_WC_WR_FLUSH_ERR and hands
 * its buffer back. So it is filled under qp->lock and only while the QP
 * is connected: no octet lands after its flush completion was queued. An
 * SRQ element belongs to RX until kiwi_rx_release() flushes it, after RX
 * stopped.
 *
 * Return: 0; -ESHUTDOWN if the QP is no longer connected; -ERANGE or
 * -EFAULT if the WR cannot take the octets.
 */
int kiwi_rx_place_rqe(struct kiwi_qp *qp, u64 off, const u8 *src, u32 len)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	unsigned long flags;
	int rv = -ESHUTDOWN;

	if (rx->rqe_srq)
		return kiwi_rqe_copy(&rx->rqe, rx->rqe_mr, off, src, len);
	spin_lock_irqsave(&qp->lock, flags);
	if (kiwi_qp_connected(qp))
		rv = kiwi_rqe_copy(&rx->rqe, rx->rqe_mr, off, src, len);
	spin_unlock_irqrestore(&qp->lock, flags);
	return rv;
}

/**
 * kiwi_rx_complete_rqe_inv - complete the held receive WR
 * @qp: the QP
 * @cqe: the completion (wr_id is filled in here); with KIWI_CQE_WITH_INV
 *	the MR of cqe->inv_rkey, checked already, is invalidated first
 *
 * An RQ element is consumed only while the QP is connected: once the QP
 * went to error the flush completes it (kiwi_rq_flush()). The invalidation
 * and the completion are one step under qp->lock, so the completion says
 * what happened: a receive the flush completed first invalidates nothing.
 * The completion of a Send with Invalidate, and those behind it, reach
 * the CQ one RCU grace period after the invalidation if an access may
 * still copy into the MR (kiwi_mr_inval_busy(), rx_gp.c).
 *
 * Return: true; false if the invalidation failed (the MR changed since
 * the check): the WR is still held.
 */
bool kiwi_rx_complete_rqe_inv(struct kiwi_qp *qp, struct kiwi_cqe *cqe)
{
	struct kiwi_device *kdev = to_kdev(qp->ibqp.device);
	enum kiwi_mem_status st = KIWI_MEM_OK;
	struct kiwi_qp_rx *rx = &qp->rx;
	unsigned long flags;
	bool gp = false;
	int res = 0;

	cqe->wr_id = rx->rqe.wr_id;
	cqe->qp_num = qp->ibqp.qp_num;
	spin_lock_irqsave(&qp->lock, flags);
	if (rx->rqe_srq || kiwi_qp_connected(qp)) {
		if (cqe->flags & KIWI_CQE_WITH_INV) {
			st = kiwi_mr_invalidate(kdev, cqe->inv_rkey,
						qp->ibqp.pd, qp->stream_id);
			gp = !st && kiwi_mr_inval_busy(kdev, cqe->inv_rkey);
		}
		if (st == KIWI_MEM_OK && !rx->rqe_srq)
			kiwi_ring_consumed(&qp->rq);
		if (st == KIWI_MEM_OK)
			res = kiwi_rx_gp_push(qp, cqe, rx->rqe_srq,
					      rx->rqe_slot, gp);
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	if (st != KIWI_MEM_OK)
		return false;
	kiwi_rx_rqe_put(rx);
	rx->have_rqe = false;
	kiwi_cq_signal(to_kcq(qp->ibqp.recv_cq), res);
	return true;
}

/**
 * kiwi_rx_complete_rqe - complete the held receive WR (no invalidation)
 * @qp: the QP
 * @cqe: the completion, without KIWI_CQE_WITH_INV
 */
void kiwi_rx_complete_rqe(struct kiwi_qp *qp, struct kiwi_cqe *cqe)
{
	kiwi_rx_complete_rqe_inv(qp, cqe);
}

/* RX stopped for good: an SRQ element still held completes as flushed. */
void kiwi_rx_release_rqe(struct kiwi_qp *qp)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	struct kiwi_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = KIWI_WC_RECV,
	};

	if (!rx->have_rqe) {
		kiwi_rx_rqe_put(rx);
		return;
	}
	if (rx->rqe_srq) {
		kiwi_rx_complete_rqe(qp, &cqe);
	} else {
		kiwi_rx_rqe_put(rx);
		rx->have_rqe = false;
	}
}
