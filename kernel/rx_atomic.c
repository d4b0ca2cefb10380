// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: RFC 7306 atomic operations on the receive side (RX context).
 *
 * An Atomic Request arrives on QN 1 and shares its MSNs, and the IRD,
 * with the Read Requests (RFC 7306 section 5.2). It is checked whole here
 * (proto/rdmap_atomic.c: AOpCode, 8-octet alignment, then the RFC 5040
 * remote protection checks a Read Request gets) and queued behind the
 * Read and Atomic Requests before it; TX executes it when its turn comes
 * (tx_atomic.c), so Responses go out in Request order and an atomic sees
 * every Write and Send delivered before it. A failing Request gets its
 * Terminate with the DDP header copied and no RDMA header (section 8).
 *
 * An Atomic Response (QN 3, in MSN order) answers the oldest outstanding
 * Read or atomic of this QP, which must be an atomic whose SQ index is
 * the Response's Request Identifier (RFC 7306 section 5.4: Responses come
 * in Request order); anything else is the peer's error. Its original
 * value is written, in host order, to the WR's result SGE under qp->lock
 * while the QP is connected (a flush hands the buffer back), then the WR
 * completes.
 */
#include "kiwi.h"
#include "conn.h"

/**
 * kiwi_rx_areq - header of an Atomic Request (whole in rx->hdr)
 * @qp: the QP
 *
 * kiwi_rdmap_check_hdr() accepted its shape (52 octets, QN 1, one
 * segment). It must carry the next MSN of QN 1; then the request itself
 * is judged. On success rx->mr holds the target.
 *
 * Return: KIWI_TERM_ERR_NONE, or the error to report.
 */
enum kiwi_term_err kiwi_rx_areq(struct kiwi_qp *qp)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	struct kiwi_rdmap_areq *r = &rx->areq;
	struct kiwi_ddp_stag_info st;
	struct kiwi_ddp_stream s;
	struct kiwi_mr *mr;
	enum kiwi_term_err err;

	err = kiwi_rx_check_qn1(qp, KIWI_RDMAP_AREQ_LEN);
	if (err)
		return err;
	kiwi_rdmap_areq_decode(r, rx->hdr + KIWI_DDP_UNTAGGED_HDR_LEN);
	rx->kind = KIWI_RX_AREQ;
	kiwi_rx_stream(qp, &s);
	mr = kiwi_rx_lookup(qp, r->stag, &st);
	err = kiwi_rdmap_check_areq(r, &s, mr ? &st : NULL);
	if (err) {
		if (mr)
			kiwi_mr_put(mr);
		return err;
	}
	rx->mr = mr;
	return KIWI_TERM_ERR_NONE;
}

/* The oldest outstanding Read or atomic, if its Request went out (RX). */
static bool kiwi_rx_orq_head(struct kiwi_qp *qp, struct kiwi_orq_ent *ent)
{
	const struct kiwi_orq_ent *e;
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	e = kiwi_orq_head_sent(&qp->tx);
	if (e)
		*ent = *e;
	spin_unlock_irqrestore(&qp->lock, flags);
	return e;
}

/**
 * kiwi_rx_aresp - header of an Atomic Response (whole in rx->hdr)
 * @qp: the QP
 *
 * kiwi_rdmap_check_hdr() accepted its shape (12 octets, QN 3, one
 * segment). With no atomic at the head of the outstanding Reads and
 * atomics it is an "unexpected opcode", as a Read Response without a
 * Read; it must carry the next MSN of QN 3 and the Request Identifier of
 * that atomic (RDMAP "unspecified" otherwise).
 *
 * Return: KIWI_TERM_ERR_NONE, or the error to report.
 */
enum kiwi_term_err kiwi_rx_aresp(struct kiwi_qp *qp)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	struct kiwi_ddp_queue_view q = {
		.msn_lo = rx->msn_aresp,
		.msn_win = 1,
		.has_buf = true,
		.buf_len = KIWI_RDMAP_ARESP_LEN,
	};
	struct kiwi_orq_ent ent;
	enum kiwi_term_err err;

	if (!kiwi_rx_orq_head(qp, &ent) || !ent.atomic)
		return KIWI_TERM_ERR_RDMAP_OPCODE;
	err = kiwi_ddp_check_untagged(&rx->h, rx->plen, &q);
	if (err)
		return err;
	kiwi_rdmap_aresp_decode(&rx->aresp,
				rx->hdr + KIWI_DDP_UNTAGGED_HDR_LEN);
	if (rx->aresp.req_id != ent.idx)
		return KIWI_TERM_ERR_RDMAP_OP_UNSPEC;
	rx->kind = KIWI_RX_ARESP;
	return KIWI_TERM_ERR_NONE;
}

/*
 * Write the original value into the result SGE of @ent: under qp->lock and
 * only while connected, like a Read Response into its sink. Return: 0,
 * -ESHUTDOWN (flushed meanwhile) or -EFAULT (the buffer is gone).
 */
static int kiwi_rx_aresp_place(struct kiwi_qp *qp,
			       const struct kiwi_orq_ent *ent, u64 orig)
{
	struct kiwi_mr *mr = kiwi_mr_get(to_kdev(qp->ibqp.device), ent->stag);
	unsigned long flags;
	int rv = -EFAULT;

	if (!mr)
		return rv;
	spin_lock_irqsave(&qp->lock, flags);
	if (!kiwi_qp_connected(qp))
		rv = -ESHUTDOWN;
	else if (kiwi_mr_check(mr, ent->stag, qp->ibqp.pd,
			       IB_ACCESS_LOCAL_WRITE, ent->to,
			       sizeof(orig)) == KIWI_MEM_OK)
		rv = kiwi_mr_write(mr, ent->to, &orig, sizeof(orig));
	spin_unlock_irqrestore(&qp->lock, flags);
	kiwi_mr_put(mr);
	return rv;
}

/**
 * kiwi_rx_aresp_done - an Atomic Response ended with a good CRC: the
 * oldest outstanding atomic is complete
 * @qp: the QP
 */
void kiwi_rx_aresp_done(struct kiwi_qp *qp)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	struct kiwi_qp_rx *rx = &qp->rx;
	struct kiwi_orq_ent ent;
	unsigned long flags;
	int rv;

	rx->msn_aresp++;
	spin_lock_irqsave(&qp->lock, flags);
	ent = *kiwi_orq_slot(tx, tx->orq_head);
	tx->orq_head++;
	spin_unlock_irqrestore(&qp->lock, flags);
	rv = kiwi_rx_aresp_place(qp, &ent, rx->aresp.orig);
	if (rv == -ESHUTDOWN)
		return;		/* the flush completed the WR */
	if (rv) {
		/* A local error of this WR: the QP goes to error. */
		kiwi_sq_complete(qp, ent.idx, IB_WC_LOC_PROT_ERR);
		kiwi_qp_to_error(qp);
		kiwi_qp_close_llp(qp, true);
		return;
	}
	kiwi_sq_complete(qp, ent.idx, IB_WC_SUCCESS);
	kiwi_tx_kick(qp);
}
