// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: the receive side of the data path, below RDMAP and DDP, above the
 * LLP.
 *
 * The LLP hands over each DDP segment as the proto library's segment
 * events (struct kiwi_mpa_ev): MPA over TCP from its FPDU decoder
 * (llp_tcp_rx.c), SCTP one whole DATA chunk at a time (llp_sctp.c,
 * kiwi_rx_segment()). The header event brings the first
 * KIWI_MPA_RX_HDR_MAX ULPDU octets; the DDP and RDMAP headers are checked
 * and the target is resolved (an STag's MR, or the receive WR) before a
 * single octet is placed (kiwi_rx_header()); payload is placed straight
 * into the target's pages (kiwi_rx_place()); only the end delivers
 * (kiwi_rx_end()). Every judgement of peer input is made by proto/'s
 * validators (rdmap.h lists them in order), fed with what the kernel
 * knows: the QP's rights, the MR behind an STag (kiwi_mr_stag_info()), the
 * receive WR, the octets of the current Send or Read Response already
 * placed. An LLP hands over only octets it verified (MPA's CRC:
 * llp_tcp_ahead.c), so nothing of a bad FPDU is ever placed. After the
 * first error nothing more is placed or delivered: the error becomes a
 * Terminate (qp_term.c). Nothing here knows which LLP runs below.
 */
#include "kiwi.h"
#include "conn.h"

static bool kiwi_rx_is_inv(u8 op)
{
	return op == KIWI_RDMAP_SEND_INV || op == KIWI_RDMAP_SEND_SE_INV;
}

static void kiwi_rx_mr_put(struct kiwi_qp_rx *rx)
{
	if (rx->mr)
		kiwi_mr_put(rx->mr);
	rx->mr = NULL;
}

/* Report @err for the current FPDU and stop receiving. */
static void kiwi_rx_fail(struct kiwi_qp *qp, enum kiwi_term_err err,
			 bool copy_hdr)
{
	struct kiwi_qp_rx *rx = &qp->rx;

	rx->failed = true;
	kiwi_rx_mr_put(rx);
	kiwi_qp_fail(qp, err, copy_hdr ? rx->hdr : NULL, rx->hdr_len,
		     rx->ulpdu_len);
}

/*
 * The QP as proto/'s validators see it: PD, QP number, remote rights. The
 * iWARP CM sets a connecting QP's access flags to remote read and write
 * only (iw_cm_init_qp_attr()); as the IB CM grants remote atomics with
 * remote reads, a QP that allows remote reads allows RFC 7306 atomics
 * too. The MR's own IB_ACCESS_REMOTE_ATOMIC is always required.
 */
void kiwi_rx_stream(struct kiwi_qp *qp, struct kiwi_ddp_stream *s)
{
	int access = READ_ONCE(qp->access);

	if (access & IB_ACCESS_REMOTE_READ)
		access |= IB_ACCESS_REMOTE_ATOMIC;
	s->pd = (uintptr_t)qp->ibqp.pd;
	s->qp = qp->stream_id;
	s->access = kiwi_ddp_acc(access) & ~KIWI_DDP_ACC_LOCAL_WRITE;
}

/* Look @stag up for a validator; NULL (no such STag) or a held MR. */
struct kiwi_mr *kiwi_rx_lookup(struct kiwi_qp *qp, u32 stag,
			       struct kiwi_ddp_stag_info *st)
{
	struct kiwi_mr *mr = kiwi_mr_get(to_kdev(qp->ibqp.device), stag);

	if (mr)
		kiwi_mr_stag_info(mr, stag, st);
	return mr;
}

/*
 * The tagged segment in rx->h with rx->plen payload octets, judged by
 * kiwi_ddp_check_tagged() for the rights in @need (KIWI_DDP_ACC_*); on
 * success a target with payload is held in rx->mr.
 */
static enum kiwi_term_err kiwi_rx_tagged(struct kiwi_qp *qp, u32 need)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	struct kiwi_ddp_stag_info st;
	struct kiwi_ddp_stream s;
	struct kiwi_mr *mr = NULL;
	enum kiwi_term_err err;

	kiwi_rx_stream(qp, &s);
	if (rx->plen)
		mr = kiwi_rx_lookup(qp, rx->h.stag, &st);
	err = kiwi_ddp_check_tagged(&rx->h, rx->plen, need, &s,
				    mr ? &st : NULL);
	if (err) {
		if (mr)
			kiwi_mr_put(mr);
		return err;
	}
	rx->mr = mr;
	rx->to = rx->h.to;
	return KIWI_TERM_ERR_NONE;
}

/* An RDMA Write: the QP and the STag must allow remote writes. */
static enum kiwi_term_err kiwi_rx_write(struct kiwi_qp *qp)
{
	struct kiwi_qp_rx *rx = &qp->rx;

	rx->kind = rx->plen ? KIWI_RX_TAGGED : KIWI_RX_DROP;
	return kiwi_rx_tagged(qp, KIWI_DDP_ACC_REMOTE_WRITE);
}

/*
 * A Read Response answers the oldest outstanding Read: its segments fill
 * that Read's sink in order and the last one completes it exactly
 * (kiwi_rdmap_check_rresp()); then the sink MR is checked like any tagged
 * target. An atomic at the head of the ORQ is answered by an Atomic
 * Response first (RFC 7306 section 7), so a Read Response then has no
 * Read to answer.
 */
static enum kiwi_term_err kiwi_rx_rresp(struct kiwi_qp *qp)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	struct kiwi_qp_rx *rx = &qp->rx;
	struct kiwi_rdmap_rresp_view v;
	struct kiwi_orq_ent ent, *e;
	enum kiwi_term_err err;
	unsigned long flags;
	bool have;

	spin_lock_irqsave(&qp->lock, flags);
	e = kiwi_orq_head_sent(tx);
	have = e && !e->atomic;
	if (have)
		ent = *e;
	spin_unlock_irqrestore(&qp->lock, flags);
	if (have) {
		v.sink_stag = ent.stag;
		v.sink_to = ent.to;
		v.size = ent.len;
		v.placed = rx->rresp_placed;
	}
	err = kiwi_rdmap_check_rresp(&rx->h, rx->plen, have ? &v : NULL);
	if (err)
		return err;
	rx->kind = KIWI_RX_RRESP;
	return kiwi_rx_tagged(qp, KIWI_DDP_ACC_LOCAL_WRITE);
}

/* A Send segment: the receive WR of message msn_send, filled in order. */
static enum kiwi_term_err kiwi_rx_send(struct kiwi_qp *qp)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	struct kiwi_ddp_queue_view q = {
		.msn_lo = rx->msn_send,
		.msn_win = 1,
		.mo_next = rx->send_placed,
	};
	enum kiwi_term_err err;

	err = kiwi_rx_take_rqe(qp);
	if (err)
		return err;
	q.has_buf = rx->have_rqe;
	q.buf_len = min_t(u64, rx->rqe_len, U32_MAX);
	rx->kind = KIWI_RX_SEND;
	err = kiwi_ddp_check_untagged(&rx->h, rx->plen, &q);
	if (err == KIWI_TERM_ERR_DDP_U_TOO_LONG)
		kiwi_rx_fail_rqe(qp, IB_WC_LOC_LEN_ERR);
	return err;
}

/**
 * kiwi_rx_check_qn1 - DDP checks of a request on QN 1
 * @qp: the QP, its untagged header in rx->h
 * @len: the request's one valid length
 *
 * Read Requests and RFC 7306 Atomic Requests share QN 1: each must carry
 * the next MSN of that queue and fit the one buffer a request takes.
 *
 * Return: KIWI_TERM_ERR_NONE, or the error to report.
 */
enum kiwi_term_err kiwi_rx_check_qn1(struct kiwi_qp *qp, u32 len)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	struct kiwi_ddp_queue_view q = {
		.msn_lo = rx->msn_rreq,
		.msn_win = 1,
		.has_buf = true,
		.buf_len = len,
	};

	return kiwi_ddp_check_untagged(&rx->h, rx->plen, &q);
}

/* A Read Request: checked whole here, queued for TX at its end. */
static enum kiwi_term_err kiwi_rx_rreq(struct kiwi_qp *qp)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	struct kiwi_rdmap_rreq *r = &rx->rreq;
	struct kiwi_ddp_stag_info st;
	struct kiwi_ddp_stream s;
	struct kiwi_mr *mr = NULL;
	enum kiwi_term_err err;

	err = kiwi_rx_check_qn1(qp, KIWI_RDMAP_RREQ_LEN);
	if (err)
		return err;
	if (kiwi_rdmap_rreq_decode(r, rx->hdr + KIWI_DDP_UNTAGGED_HDR_LEN,
				   rx->plen))
		return KIWI_TERM_ERR_RDMAP_OP_UNSPEC;
	rx->kind = KIWI_RX_RREQ;
	kiwi_rx_stream(qp, &s);
	if (r->size)
		mr = kiwi_rx_lookup(qp, r->src_stag, &st);
	err = kiwi_rdmap_check_rreq(r, &s, mr ? &st : NULL);
	if (err) {
		if (mr)
			kiwi_mr_put(mr);
		return err;
	}
	rx->mr = mr;
	return KIWI_TERM_ERR_NONE;
}

static enum kiwi_term_err kiwi_rx_term(struct kiwi_qp *qp)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	struct kiwi_ddp_queue_view q = {
		.msn_lo = rx->msn_term,
		.msn_win = 1,
		.has_buf = true,
		.buf_len = KIWI_TERM_BODY_MAX,
	};

	rx->kind = KIWI_RX_TERM;
	return kiwi_ddp_check_untagged(&rx->h, rx->plen, &q);
}

/*
 * RFC 6581: the responder's first FPDU must be an RTR of a type it
 * offered: a zero-length Send (a whole message: MO 0, L = 1), Write or
 * Read Request.
 */
static enum kiwi_term_err kiwi_rx_rtr(struct kiwi_qp *qp, u8 op)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	u8 type = 0;

	if (op == KIWI_RDMAP_SEND && !rx->plen && rx->h.msn == rx->msn_send &&
	    !rx->h.mo && rx->h.last)
		type = KIWI_MPA_RTR_SEND;
	else if (op == KIWI_RDMAP_WRITE && !rx->plen)
		type = KIWI_MPA_RTR_WRITE;
	else if (op == KIWI_RDMAP_READ_REQ && !kiwi_rx_rreq(qp) &&
		 !rx->rreq.size)
		type = KIWI_MPA_RTR_READ;
	if (!(type & rx->rtr_types))
		return KIWI_TERM_ERR_LLP_NO_RTR;
	rx->kind = type == KIWI_MPA_RTR_READ ? KIWI_RX_RREQ : KIWI_RX_RTR;
	return KIWI_TERM_ERR_NONE;
}

static enum kiwi_term_err kiwi_rx_dispatch(struct kiwi_qp *qp)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	u8 op = kiwi_rdmap_opcode(rx->h.ulp_ctrl);

	/*
	 * An initiator that cannot go on sends a Terminate in place of its
	 * RTR (RFC 6581 9.1, 9.2): it is received as the Terminate it is.
	 */
	if (rx->expect_rtr && op != KIWI_RDMAP_TERMINATE)
		return kiwi_rx_rtr(qp, op);
	switch (op) {
	case KIWI_RDMAP_WRITE:
		return kiwi_rx_write(qp);
	case KIWI_RDMAP_READ_RESP:
		return kiwi_rx_rresp(qp);
	case KIWI_RDMAP_READ_REQ:
		return kiwi_rx_rreq(qp);
	case KIWI_RDMAP_TERMINATE:
		return kiwi_rx_term(qp);
	case KIWI_RDMAP_IMM:
	case KIWI_RDMAP_IMM_SE:
		return kiwi_rx_imm(qp);
	case KIWI_RDMAP_ATOMIC_REQ:
		return kiwi_rx_areq(qp);
	case KIWI_RDMAP_ATOMIC_RESP:
		return kiwi_rx_aresp(qp);
	default:
		return kiwi_rx_send(qp);
	}
}

/*
 * Place Read Response octets into the sink of the oldest Read. A flush
 * (modify_qp to ERR, under qp->lock) completes that Read with
 * IB_WC_WR_FLUSH_ERR and hands the sink back to the consumer, who may
 * reuse it at once, without invalidating or deregistering it: so, like an
 * RQ element (kiwi_rx_place_rqe()), the sink is written under qp->lock and
 * only while the QP is connected, and no octet lands after the flush
 * completion was queued.
 *
 * Return: 0, -ESHUTDOWN if the QP is no longer connected, or -EFAULT.
 */
static int kiwi_rx_place_rresp(struct kiwi_qp *qp, u32 off, const u8 *p,
			       u32 len)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	unsigned long flags;
	int rv = -ESHUTDOWN;

	spin_lock_irqsave(&qp->lock, flags);
	if (kiwi_qp_connected(qp))
		rv = kiwi_mr_write(rx->mr, rx->to + off, p, len);
	spin_unlock_irqrestore(&qp->lock, flags);
	return rv;
}

/*
 * Place payload octets at ULPDU offset @uoff of the current FPDU. Once the
 * QP left RTS/SQD (modify_qp to ERR, a flush) nothing more is placed: its
 * receive WRs and Reads completed as flushed and may be in the consumer's
 * hands. Receive WRs and Read sinks, which a flush hands back, are written
 * under qp->lock (the flush's lock); the target of a peer's RDMA Write is
 * no WR's buffer, and the MR's own grace period (Local Invalidate,
 * dereg_mr) covers the copy still running there after the check.
 */
void kiwi_rx_place(struct kiwi_qp *qp, u32 uoff, const u8 *p, u32 len)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	u32 off = uoff - (rx->ulpdu_len - rx->plen);
	int rv = 0;

	if (!len)
		return;
	if (!kiwi_qp_connected(qp))
		rv = -ESHUTDOWN;
	else if (rx->kind == KIWI_RX_TAGGED)
		rv = kiwi_mr_write(rx->mr, rx->to + off, p, len);
	else if (rx->kind == KIWI_RX_RRESP)
		rv = kiwi_rx_place_rresp(qp, off, p, len);
	else if (rx->kind == KIWI_RX_SEND)
		rv = kiwi_rx_place_rqe(qp, (u64)rx->h.mo + off, p, len);
	if (rv == -ESHUTDOWN) {
		rx->failed = true;	/* the flush ended the stream */
		kiwi_rx_mr_put(rx);
	} else if (rv) {
		kiwi_rx_fail(qp, KIWI_TERM_ERR_RDMAP_CATASTROPHIC, true);
	}
}

/*
 * Take in the header event of an FPDU and judge the FPDU: its target is
 * resolved and held, nothing is placed. Return: the DDP header's length,
 * or -1 if the stream failed.
 */
static int kiwi_rx_judge(struct kiwi_qp *qp, const struct kiwi_mpa_ev *ev)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	enum kiwi_term_err err;
	int hl;

	memcpy(rx->hdr, ev->data, ev->len);
	rx->hdr_len = ev->len;
	rx->ulpdu_len = ev->ulpdu_len;
	rx->kind = KIWI_RX_DROP;
	if (!kiwi_qp_connected(qp)) {
		rx->failed = true;	/* modify_qp ended the stream */
		return -1;
	}
	hl = kiwi_ddp_hdr_decode(&rx->h, rx->hdr, rx->hdr_len);
	if (hl < 0) {
		kiwi_rx_fail(qp, KIWI_TERM_ERR_DDP_CATASTROPHIC, false);
		return -1;
	}
	rx->plen = rx->ulpdu_len - hl;
	err = kiwi_rdmap_check_hdr(&rx->h, rx->plen);
	if (!err)
		err = kiwi_rx_dispatch(qp);
	if (err) {
		kiwi_rx_fail(qp, err, true);
		return -1;
	}
	return hl;
}

void kiwi_rx_header(struct kiwi_qp *qp, const struct kiwi_mpa_ev *ev)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	int hl = kiwi_rx_judge(qp, ev);

	if (hl < 0)
		return;
	/* The header event may carry the first payload octets, too. */
	if (rx->kind != KIWI_RX_RREQ && rx->kind != KIWI_RX_TERM &&
	    rx->kind != KIWI_RX_IMM && rx->kind != KIWI_RX_AREQ &&
	    rx->kind != KIWI_RX_ARESP)
		kiwi_rx_place(qp, hl, rx->hdr + hl, rx->hdr_len - hl);
}

/*
 * The last Response of the oldest Read arrived: the Read is complete; a
 * Read with Invalidate invalidates its sink STag and completes one RCU
 * grace period later (kiwi_sq_execute()), unless the QP flushed it first.
 */
static void kiwi_rx_read_done(struct kiwi_qp *qp)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	struct kiwi_orq_ent ent;
	unsigned long flags;
	u8 st = IB_WC_SUCCESS;

	spin_lock_irqsave(&qp->lock, flags);
	ent = *kiwi_orq_slot(tx, tx->orq_head);
	tx->orq_head++;
	spin_unlock_irqrestore(&qp->lock, flags);
	if (ent.rtr) {
		kiwi_tx_kick(qp);
		return;
	}
	if (ent.probe)
		kiwi_tx_imm_confirmed(qp);
	if (ent.inv)
		st = kiwi_sq_execute(qp, ent.idx);
	else
		kiwi_sq_complete(qp, ent.idx, IB_WC_SUCCESS);
	if (st != IB_WC_SUCCESS && st != IB_WC_WR_FLUSH_ERR) {
		/* A local error of this WR: the QP goes to error. */
		kiwi_sq_complete(qp, ent.idx, st);
		kiwi_qp_to_error(qp);
		kiwi_qp_close_llp(qp, true);
		return;
	}
	kiwi_tx_kick(qp);
}

/*
 * Send with Invalidate: kiwi_rdmap_check_inval() judges the STag; the MR
 * is invalidated as the receive completes (kiwi_rx_complete_rqe_inv()).
 */
static enum kiwi_term_err kiwi_rx_check_inval(struct kiwi_qp *qp, u32 stag)
{
	struct kiwi_ddp_stag_info st;
	struct kiwi_ddp_stream s;
	enum kiwi_term_err err;
	struct kiwi_mr *mr;

	kiwi_rx_stream(qp, &s);
	mr = kiwi_rx_lookup(qp, stag, &st);
	err = kiwi_rdmap_check_inval(&s, mr ? &st : NULL);
	if (mr)
		kiwi_mr_put(mr);
	return err;
}

/* The L = 1 segment of a Send was placed: all of the message is there. */
static void kiwi_rx_send_done(struct kiwi_qp *qp)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	u8 op = kiwi_rdmap_opcode(rx->h.ulp_ctrl);
	struct kiwi_cqe cqe = {
		.opcode = KIWI_WC_RECV,
		.byte_len = rx->send_placed,
	};
	enum kiwi_term_err err;

	rx->send_placed = 0;
	if (kiwi_rx_is_inv(op)) {
		err = kiwi_rx_check_inval(qp, rx->h.ulp_word);
		if (err) {
			kiwi_rx_fail(qp, err, true);
			return;
		}
		cqe.flags |= KIWI_CQE_WITH_INV;
		cqe.inv_rkey = rx->h.ulp_word;
	}
	if (op == KIWI_RDMAP_SEND_SE || op == KIWI_RDMAP_SEND_SE_INV)
		cqe.flags |= KIWI_CQE_SOLICITED;
	rx->after_write = false;
	rx->msn_send++;
	/* The MR changed since the check: "STag cannot be invalidated". */
	if (!kiwi_rx_complete_rqe_inv(qp, &cqe))
		kiwi_rx_fail(qp, KIWI_TERM_ERR_RDMAP_CANNOT_INVALIDATE, true);
}

/*
 * A Read or Atomic Request ended: queue its Response for TX (the MR
 * reference goes with it). More than IRD of them outstanding is the
 * peer's error (RFC 7306 section 5.2: they share the IRD).
 */
static void kiwi_rx_request_done(struct kiwi_qp *qp)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	struct kiwi_irq_ent ent = {
		.mr = rx->mr,
		.atomic = rx->kind == KIWI_RX_AREQ,
	};

	if (ent.atomic)
		ent.areq = rx->areq;
	else
		ent.rreq = rx->rreq;
	rx->after_write = false;
	rx->msn_rreq++;
	if (!kiwi_irq_push(qp, &ent)) {
		kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_IRD_EXCEEDED);
		kiwi_rx_fail(qp, KIWI_TERM_ERR_RDMAP_CATA_STREAM, true);
	}
	rx->mr = NULL;
}

/* The first valid FPDU opens a gated responder's transmit side. */
static void kiwi_rx_first(struct kiwi_qp *qp)
{
	qp->rx.seen_first = true;
	kiwi_qp_llp_ungate(qp);
}

/* A valid segment ended: deliver what it completes. */
void kiwi_rx_end(struct kiwi_qp *qp)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	/*
	 * Only an initiator sends RFC 6581's startup Terminates, in place of
	 * its first FPDU: from a responder, or after a valid FPDU, they are
	 * siw's swapped layout (its "unexpected opcode" reads as
	 * "insufficient IRD").
	 */
	bool startup_over = rx->seen_first || rx->initiator;

	kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_RX_FPDUS);
	if (!rx->seen_first)
		kiwi_rx_first(qp);
	if (rx->expect_rtr && rx->kind != KIWI_RX_TERM) {
		rx->expect_rtr = false;
		kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_RTR_RCVD);
		if (rx->kind == KIWI_RX_RTR && !rx->h.tagged)
			rx->msn_send++;
	} else if (rx->h.tagged &&
		   kiwi_rdmap_opcode(rx->h.ulp_ctrl) == KIWI_RDMAP_WRITE) {
		kiwi_rx_write_seen(qp);
	}
	switch (rx->kind) {
	case KIWI_RX_RRESP:
		kiwi_rx_mr_put(rx);
		rx->rresp_placed += rx->plen;
		if (rx->h.last) {
			rx->rresp_placed = 0;
			kiwi_rx_read_done(qp);
		}
		break;
	case KIWI_RX_SEND:
		rx->send_placed += rx->plen;
		if (rx->h.last)
			kiwi_rx_send_done(qp);
		break;
	case KIWI_RX_IMM:
		kiwi_rx_imm_done(qp);
		break;
	case KIWI_RX_RREQ:
	case KIWI_RX_AREQ:
		kiwi_rx_request_done(qp);
		break;
	case KIWI_RX_ARESP:
		kiwi_rx_aresp_done(qp);
		break;
	case KIWI_RX_TERM:
		rx->msn_term++;
		rx->failed = true;
		kiwi_qp_term_received(qp, rx->hdr, rx->hdr_len, startup_over);
		break;
	default:
		kiwi_rx_mr_put(rx);
		break;
	}
}

/**
 * kiwi_rx_segment - deliver one whole DDP segment (message-based LLPs)
 * @qp: an attached QP, in RX
 * @ulpdu: the DDP segment, headers first
 * @len: its length (the LLP checked it against the MULPDU)
 *
 * The segment goes through the same header, placement and end steps as
 * an FPDU the MPA decoder found: llp_sctp.c hands over segments in
 * DDP-SSN order. Nothing is done once the stream has failed.
 */
void kiwi_rx_segment(struct kiwi_qp *qp, const u8 *ulpdu, u32 len)
{
	struct kiwi_mpa_ev ev = {
		.type = KIWI_MPA_EV_HEADER,
		.ulpdu_len = len,
		.len = min_t(u32, len, KIWI_MPA_RX_HDR_MAX),
		.data = ulpdu,
	};
	struct kiwi_qp_rx *rx = &qp->rx;

	if (rx->failed)
		return;
	kiwi_qp_stat_add(&qp->stats, KIWI_STAT_RX_OCTETS, len);
	kiwi_rx_header(qp, &ev);
	if (!rx->failed && len > ev.len)
		kiwi_rx_place(qp, ev.len, ulpdu + ev.len, len - ev.len);
	if (!rx->failed)
		kiwi_rx_end(qp);
}

/**
 * kiwi_rx_segment_placed - deliver a segment kiwi_rx_early() placed
 * @qp: an attached QP, in RX
 * @hdr: the segment's first octets, headers first
 * @hdr_len: octets at @hdr: the segment's, up to KIWI_MPA_RX_HDR_MAX
 * @len: the segment's length
 *
 * Its turn in DDP-SSN order: the segment is judged again, as
 * kiwi_rx_segment() judges one (an STag a Send with Invalidate before it
 * invalidated is reported now, as on an in-order stream; its octets went
 * in before that invalidation ran), and its end is delivered; nothing is
 * placed again.
 */
void kiwi_rx_segment_placed(struct kiwi_qp *qp, const u8 *hdr, u32 hdr_len,
			    u32 len)
{
	struct kiwi_mpa_ev ev = {
		.type = KIWI_MPA_EV_HEADER,
		.ulpdu_len = len,
		.len = hdr_len,
		.data = hdr,
	};

	if (qp->rx.failed)
		return;
	kiwi_qp_stat_add(&qp->stats, KIWI_STAT_RX_OCTETS, len);
	if (kiwi_rx_judge(qp, &ev) >= 0)
		kiwi_rx_end(qp);
}

/**
 * kiwi_rx_fail_llp - the LLP found the stream broken
 * @qp: an attached QP, in RX
 * @err: what the Terminate reports (an LLP error, or DDP catastrophic for
 *	a bad chunk)
 *
 * Nothing more is placed or delivered; the first failure is the one
 * reported.
 */
void kiwi_rx_fail_llp(struct kiwi_qp *qp, enum kiwi_term_err err)
{
	if (!qp->rx.failed)
		kiwi_rx_fail(qp, err, false);
}

/* RX stopped for good (detach): drop references, flush a held SRQ WR. */
void kiwi_rx_release(struct kiwi_qp *qp)
{
	kiwi_rx_mr_put(&qp->rx);
	kiwi_rx_release_rqe(qp);
}
