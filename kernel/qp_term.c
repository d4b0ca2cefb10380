// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: errors of the data path and the Terminate message.
 *
 * A locally detected error (a bad incoming segment, an MPA error, an IRD
 * overrun) moves the QP to TERMINATE (IB SQE), reports an async event and
 * queues one Terminate, the last message TX sends. Once TCP took it, TX
 * closes the stream gracefully (FIN after the Terminate): that is RDMAP's
 * abortive teardown (RFC 5040 section 6.2.1). DDP and MPA themselves never
 * close the stream (DDP-055, MPA-083). A received Terminate moves the QP
 * to error and closes the stream gracefully, too.
 */
#include "kiwi.h"
#include "conn.h"
#include "kiwi_trace.h"

/* The async event a Terminate of class @t stands for. */
static enum ib_event_type kiwi_term_event(const struct kiwi_term *t)
{
	if ((t->layer == KIWI_TERM_LAYER_RDMAP &&
	     t->etype == KIWI_TERM_ET_RDMAP_REMOTE_PROT) ||
	    (t->layer == KIWI_TERM_LAYER_DDP &&
	     t->etype == KIWI_TERM_ET_DDP_TAGGED))
		return IB_EVENT_QP_ACCESS_ERR;
	if ((t->layer == KIWI_TERM_LAYER_RDMAP &&
	     t->etype == KIWI_TERM_ET_RDMAP_REMOTE_OP) ||
	    (t->layer == KIWI_TERM_LAYER_DDP &&
	     t->etype == KIWI_TERM_ET_DDP_UNTAGGED))
		return IB_EVENT_QP_REQ_ERR;
	return IB_EVENT_QP_FATAL;
}

/**
 * kiwi_qp_fail - a fatal error of the stream was detected locally
 * @qp: the QP
 * @err: the error
 * @seg: the failing incoming ULPDU's first octets (copied into the
 *       Terminate), or NULL
 * @seg_len: octets at @seg
 * @ulpdu_len: the failing ULPDU's whole length (DDP Segment Length)
 *
 * Any context. Only the first error of a connected QP sends a Terminate.
 */
void kiwi_qp_fail(struct kiwi_qp *qp, enum kiwi_term_err err,
		  const u8 *seg, u32 seg_len, u32 ulpdu_len)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	u8 msg[KIWI_TERM_MSG_MAX];
	struct kiwi_term t;
	unsigned long flags;
	bool first;
	int len;

	if (kiwi_term_from_err(&t, err, seg, seg_len))
		kiwi_term_from_err(&t, KIWI_TERM_ERR_RDMAP_CATASTROPHIC, NULL,
				   0);
	if (t.ddp_hdr_len)
		t.seg_len = min_t(u32, ulpdu_len, 0xffff);
	len = kiwi_term_build_msg(&t, KIWI_DDP_MSN_INIT, msg, sizeof(msg));
	spin_lock_irqsave(&qp->lock, flags);
	first = kiwi_qp_connected(qp);
	if (first) {
		trace_kiwi_qp_state(&qp->ibqp, qp->state, IB_QPS_SQE);
		qp->state = IB_QPS_SQE;
		tx->close_req = true;
		if (len > 0) {
			memcpy(tx->term, msg, len);
			tx->term_len = len;
			WRITE_ONCE(tx->term_pending, true);
		}
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	kiwi_stats_qp_fail(qp, err, &t, first);
	if (!first)
		return;
	trace_kiwi_terminate(&qp->ibqp, true, t.layer, t.etype, t.ecode);
	ibdev_info_ratelimited(qp->ibqp.device, "QP %u: %s, sending Terminate\n",
			       qp->ibqp.qp_num, kiwi_term_err_name(err));
	kiwi_qp_event(qp, kiwi_term_event(&t));
	/* A peer that does not read cannot hold the Terminate forever. */
	kiwi_qp_drain_llp(qp);
	kiwi_tx_kick(qp);
}

/**
 * kiwi_qp_term_received - the peer sent a Terminate
 * @qp: the QP
 * @ulpdu: the Terminate ULPDU (DDP header on)
 * @len: its length
 * @startup_over: the peer can no longer send RFC 6581's startup errors
 *                (to tell siw's layout from them, kiwi_term_siw_swapped())
 *
 * If it refuses RFC 7306 Immediate Data, the Immediate Data WR waiting for
 * confirmation completes with IB_WC_REM_OP_ERR (tx_imm.c); if it answers
 * an Atomic Request, the oldest outstanding atomic completes with the
 * error the Terminate stands for (tx_atomic.c); a Read Request refused
 * for remote protection completes with IB_WC_REM_ACCESS_ERR (tx_wr.c);
 * every other WR not complete is flushed. IB_EVENT_QP_FATAL comes once
 * the QP is in the error state, as a consumer's handler may query it.
 */
void kiwi_qp_term_received(struct kiwi_qp *qp, const u8 *ulpdu, u32 len,
			   bool startup_over)
{
	const u8 *body = ulpdu + KIWI_DDP_UNTAGGED_HDR_LEN;
	u32 blen = len - KIWI_DDP_UNTAGGED_HDR_LEN;
	struct kiwi_term t = { .layer = KIWI_TERM_LAYER_RDMAP };
	unsigned int flags = 0;
	int err;

	if (kiwi_term_siw_swapped(body, blen, startup_over))
		flags |= KIWI_TERM_DEC_SIW_SWAPPED;
	if (kiwi_term_decode(&t, body, blen, flags) < 0)
		t.etype = KIWI_TERM_ET_RDMAP_LOCAL_CATA;
	err = kiwi_term_err_lookup(t.layer, t.etype, t.ecode);
	kiwi_stats_term_rcvd(qp, &t);
	trace_kiwi_terminate(&qp->ibqp, false, t.layer, t.etype, t.ecode);
	ibdev_info_ratelimited(qp->ibqp.device, "QP %u: Terminate from peer: layer %u type %u code 0x%02x (%s)\n",
			       qp->ibqp.qp_num, t.layer, t.etype, t.ecode,
			       err > 0 ? kiwi_term_err_name(err) : "unknown");
	kiwi_tx_imm_refused(qp, &t);
	kiwi_tx_atomic_refused(qp, &t);
	kiwi_tx_read_refused(qp, &t);
	kiwi_qp_to_error(qp);
	kiwi_qp_event(qp, IB_EVENT_QP_FATAL);
	kiwi_qp_close_llp(qp, false);
}
