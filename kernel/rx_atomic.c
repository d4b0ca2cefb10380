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
	struct kiwi_ddp_queue_view q = {
		.msn_lo = rx->msn_rreq,
		.msn_win = 1,
		.has_buf = true,
		.buf_len = KIWI_RDMAP_AREQ_LEN,
	};
	struct kiwi_rdmap_areq *r = &rx->areq;
	struct kiwi_ddp_stag_info st;
	struct kiwi_ddp_stream s;
	struct kiwi_mr *mr;
	enum kiwi_term_err err;

	err = kiwi_ddp_check_untagged(&rx->h, rx->plen, &q);
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
