// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: placement of DDP segments that arrive ahead of a gap (DDP over
 * SCTP, whose chunks are unordered; Documentation/sctp.md).
 *
 * RFC 5041 lets a Data Sink place segments in any order, but deliver
 * messages only in order, each once all of it and everything before it
 * was placed (seed 000 section 5.3). llp_sctp.c hands the engine every
 * segment in DDP-SSN order, which is when it is judged in full and
 * delivered (rx.c); before that, when a segment arrives while an earlier
 * one is still missing, it offers the segment here:
 *
 *  - an RDMA Write is validated as rx.c validates it
 *    (kiwi_ddp_check_tagged()) and placed at once;
 *  - so is a Read Response, if its octets lie in the sink of a Read this
 *    QP has outstanding (the ORQ): where they go is given by STag and TO,
 *    which Read they answer and whether the Read's Responses are whole
 *    and in order is judged in their turn (kiwi_rdmap_check_rresp());
 *  - a Send is placed into the receive WR of its MSN: the RQ element
 *    that many places behind the one of the next Send expected (RQ
 *    elements stay in the ring until delivered, so the element of MSN m
 *    is at rq.cons + m - msn_send), if it is posted already, its SGEs
 *    pass the checks of kiwi_rx_take_rqe() and MO + length fits it. The
 *    octets placed so far of each such message are recorded
 *    (struct kiwi_rx_early, proto/ddp_runs.h), and a segment that
 *    overlaps them, or the octets the message in progress has in order,
 *    is not placed.
 *
 * llp_sctp.c then keeps only the headers of a placed segment, and its
 * turn judges it again and delivers it without placing it again
 * (kiwi_rx_segment_placed()): a Send completes only when its L = 1
 * segment's turn comes and every segment before it, in order, started
 * where the one before ended (MO checks of rx.c): the whole message is
 * there, with no gap, and no octet counted twice; a Read completes when
 * its last Response's turn comes, its Responses having filled its sink
 * in order. Everything else is held
 * whole and placed in its turn: Read and Atomic Requests, Terminates,
 * Immediate Data, zero-length segments, Sends whose receive WR is not
 * posted yet, is more than KIWI_RX_EARLY_MSGS messages ahead or comes
 * from an SRQ (its elements are taken in MSN order as messages start).
 *
 * A segment that fails a check here is not placed: it is held whole,
 * and its turn reports the error (a Terminate) just as an in-order
 * stream does. From then on no segment is placed on arrival any more
 * (rx.early_off), so nothing lands after one that will end the stream.
 * What no check on arrival can see is a segment inside its buffer that
 * does not follow the segment before it (a Send's MO, a Read Response's
 * TO): its turn ends the stream, and the receive WR or the Read, which
 * then completes as flushed, may hold its octets.
 *
 * Runs in RX (the SCTP LLP's receive work), between whole segments: the
 * state of the current segment in kiwi_qp_rx is not touched.
 */
#include "kiwi.h"
#include "conn.h"

static bool kiwi_rx_is_send(u8 op)
{
	return op == KIWI_RDMAP_SEND || op == KIWI_RDMAP_SEND_INV ||
	       op == KIWI_RDMAP_SEND_SE || op == KIWI_RDMAP_SEND_SE_INV;
}

/* The record of Send @msn (reset if stale); NULL if out of reach. */
static struct kiwi_rx_early_msg *kiwi_rx_early_msg(struct kiwi_qp_rx *rx,
						   u32 msn)
{
	struct kiwi_rx_early_msg *m;

	if (msn - rx->msn_send >= KIWI_RX_EARLY_MSGS)
		return NULL;
	m = &rx->early->msg[msn % KIWI_RX_EARLY_MSGS];
	if (m->msn != msn) {	/* a message delivered already */
		m->msn = msn;
		memset(&m->runs, 0, sizeof(m->runs));
	}
	return m;
}

/*
 * Copy the RQ element @d places behind rq.cons, if the QP is connected
 * and the consumer posted it. Return: true if copied.
 */
static bool kiwi_rx_early_peek(struct kiwi_qp *qp, u32 d,
			       struct kiwi_rqe *rqe)
{
	unsigned long flags;
	bool took;

	spin_lock_irqsave(&qp->lock, flags);
	took = kiwi_qp_connected(qp) && kiwi_ring_avail(&qp->rq) > d;
	if (took)
		memcpy(rqe, kiwi_ring_elem(&qp->rq, qp->rq.cons + d),
		       sizeof(*rqe));
	spin_unlock_irqrestore(&qp->lock, flags);
	return took;
}

/**
 * kiwi_rx_early_rqe - place Send octets into the RQ element of their MSN
 * @qp: the QP (it has an RQ, not an SRQ)
 * @d: the message's MSN less msn_send
 * @mo: message offset of the first octet
 * @src: the octets
 * @len: how many (MO + @len below 2^32)
 *
 * The element is checked as kiwi_rx_take_rqe() checks it and filled as
 * kiwi_rx_place_rqe() fills one: under qp->lock, only while the QP is
 * connected, so no octet lands after a flush completed it. It stays in
 * the RQ; the Send's turn takes it.
 *
 * Return: 0; -ENOENT if it is not posted yet; -EACCES (bad SGEs), -ERANGE
 * (too short), -ESHUTDOWN or -EFAULT.
 */
static int kiwi_rx_early_rqe(struct kiwi_qp *qp, u32 d, u32 mo,
			     const u8 *src, u32 len)
{
	struct kiwi_mr *mr[KIWI_MAX_SGE] = {};
	struct kiwi_rqe rqe;
	unsigned long flags;
	int rv = -EACCES;
	u64 total;
	u32 i;

	if (!kiwi_rx_early_peek(qp, d, &rqe))
		return -ENOENT;
	if (kiwi_rqe_check(qp, &rqe, qp->max_recv_sge, mr, &total) ==
	    IB_WC_SUCCESS) {
		rv = -ERANGE;
		if ((u64)mo + len <= total) {
			spin_lock_irqsave(&qp->lock, flags);
			rv = -ESHUTDOWN;
			if (kiwi_qp_connected(qp))
				rv = kiwi_rqe_copy(&rqe, mr, mo, src, len);
			spin_unlock_irqrestore(&qp->lock, flags);
		}
	}
	for (i = 0; i < KIWI_MAX_SGE; i++)
		if (mr[i])
			kiwi_mr_put(mr[i]);
	return rv;
}

/*
 * A Send segment (header @h, @plen payload octets at @payload, past the
 * RDMAP header checks). Return: placed; rx.early_off is set if it failed
 * a check.
 */
static bool kiwi_rx_early_send(struct kiwi_qp *qp,
			       const struct kiwi_ddp_hdr *h,
			       const u8 *payload, u32 plen)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	struct kiwi_rx_early_msg *m;
	u32 hi;
	int rv;

	if (!rx->early || qp->ibqp.srq || (u64)h->mo + plen > U32_MAX)
		return false;
	m = kiwi_rx_early_msg(rx, h->msn);
	if (!m)
		return false;
	hi = h->mo + plen;
	if (!kiwi_ddp_runs_fits(&m->runs,
				m->msn == rx->msn_send ? rx->send_placed : 0,
				h->mo, hi)) {
		rx->early_off = true;
		return false;
	}
	rv = kiwi_rx_early_rqe(qp, h->msn - rx->msn_send, h->mo, payload,
			       plen);
	if (rv == -ENOENT)
		return false;	/* its turn judges it */
	if (rv) {
		rx->early_off = true;
		return false;
	}
	kiwi_ddp_runs_add(&m->runs, h->mo, hi);
	return true;
}

/*
 * Place a Read Response segment into the sink of an outstanding Read
 * (@mr, checked for local write) whose range holds all of it. Which Read
 * it answers is its turn's question (kiwi_rdmap_check_rresp()); where its
 * octets go is given by the STag and TO alone, and a sink is written, as
 * kiwi_rx_place_rresp() writes one, under qp->lock while the QP is
 * connected: a flush completes the Reads and hands their sinks back.
 * Return: 0, -ENOENT (no such Read), or a placement error.
 */
static int kiwi_rx_early_sink(struct kiwi_qp *qp, struct kiwi_mr *mr,
			      const struct kiwi_ddp_hdr *h, const u8 *payload,
			      u32 plen)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	const struct kiwi_orq_ent *e;
	unsigned long flags;
	int rv = -ENOENT;
	u32 i;

	spin_lock_irqsave(&qp->lock, flags);
	for (i = tx->orq_head; i != tx->orq_tail; i++) {
		e = kiwi_orq_sent(tx, i);
		if (!e || e->atomic || e->stag != h->stag ||
		    kiwi_ddp_to_range(e->to, e->len, h->to, plen))
			continue;
		rv = -ESHUTDOWN;
		if (kiwi_qp_connected(qp))
			rv = kiwi_mr_write(mr, h->to, payload, plen);
		break;
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	return rv;
}

/*
 * A tagged segment (RDMA Write or Read Response), as
 * kiwi_rx_early_send(): an RDMA Write needs the rights of a remote write;
 * a Read Response local write on a sink of one of this QP's Reads.
 */
static bool kiwi_rx_early_tagged(struct kiwi_qp *qp,
				 const struct kiwi_ddp_hdr *h,
				 const u8 *payload, u32 plen)
{
	bool write = kiwi_rdmap_opcode(h->ulp_ctrl) == KIWI_RDMAP_WRITE;
	struct kiwi_ddp_stag_info st;
	struct kiwi_ddp_stream s;
	struct kiwi_mr *mr;
	bool placed = false;

	kiwi_rx_stream(qp, &s);
	mr = kiwi_rx_lookup(qp, h->stag, &st);
	if (!kiwi_ddp_check_tagged(h, plen,
				   write ? KIWI_DDP_ACC_REMOTE_WRITE :
					   KIWI_DDP_ACC_LOCAL_WRITE,
				   &s, mr ? &st : NULL)) {
		if (write)
			placed = !kiwi_mr_write(mr, h->to, payload, plen);
		else
			placed = !kiwi_rx_early_sink(qp, mr, h, payload, plen);
	}
	if (mr)
		kiwi_mr_put(mr);
	if (!placed)
		qp->rx.early_off = true;
	return placed;
}

/**
 * kiwi_rx_early - place a segment that arrived ahead of a gap, if it can
 * @qp: an attached QP, in RX
 * @ulpdu: the DDP segment, headers first (the LLP checked it against the
 *	   MULPDU and that a whole tagged header is there)
 * @len: its length
 *
 * Return: true if the segment was placed: the caller keeps its headers
 * only and delivers it in its turn with kiwi_rx_segment_placed(); false
 * if it is to be held whole and handed to kiwi_rx_segment() in its turn.
 */
bool kiwi_rx_early(struct kiwi_qp *qp, const u8 *ulpdu, u32 len)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	struct kiwi_ddp_hdr h;
	bool placed;
	u32 plen;
	int hl;
	u8 op;

	if (rx->failed || rx->early_off || rx->expect_rtr ||
	    !kiwi_qp_connected(qp))
		return false;
	hl = kiwi_ddp_hdr_decode(&h, ulpdu, len);
	if (hl < 0)
		return false;
	plen = len - hl;
	op = kiwi_rdmap_opcode(h.ulp_ctrl);
	if (!plen || !(op == KIWI_RDMAP_WRITE || op == KIWI_RDMAP_READ_RESP ||
		       kiwi_rx_is_send(op)))
		return false;	/* nothing to place, or not on arrival */
	if (kiwi_rdmap_check_hdr(&h, plen)) {
		rx->early_off = true;
		return false;
	}
	if (h.tagged)
		placed = kiwi_rx_early_tagged(qp, &h, ulpdu + hl, plen);
	else
		placed = kiwi_rx_early_send(qp, &h, ulpdu + hl, plen);
	if (placed)
		kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_RX_PLACED_EARLY);
	return placed;
}
