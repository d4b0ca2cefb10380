// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: RFC 7306 atomic operations on the transmit side (TX context).
 *
 * Responder: the Atomic Request at the head of the inbound queue (shared
 * with Read Requests, rx_atomic.c) is executed when TX reaches it, after
 * the Responses of every Request before it went out (RFC 7306 section 5.4
 * rule 8 and section 7: Atomic and Read Responses in Request order), with
 * a real compare-and-exchange on the target (kiwi_mr_atomic()). Its
 * Atomic Response (QN 3, 12 octets) carries the original value.
 */
#include "kiwi.h"
#include "conn.h"

/**
 * kiwi_tx_aresp - execute the oldest inbound Atomic Request and make its
 * Response the current message
 * @qp: the QP
 * @ent: the request, taken off the inbound queue with its MR reference
 *       (dropped here)
 *
 * If the target vanished meanwhile (dereg_mr, invalidation) the Response
 * cannot be built: RFC 7306 section 8.1 sends a Terminate instead, without
 * copied headers.
 *
 * Return: true if the Response was started.
 */
bool kiwi_tx_aresp(struct kiwi_qp *qp, const struct kiwi_irq_ent *ent)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	struct kiwi_tx_msg *m = &tx->cur;
	struct kiwi_rdmap_aresp a = { .req_id = ent->areq.req_id };
	int rv;

	rv = kiwi_mr_atomic(ent->mr, &ent->areq, &a.orig);
	kiwi_mr_put(ent->mr);
	if (rv) {
		kiwi_qp_fail(qp, KIWI_TERM_ERR_RDMAP_CATASTROPHIC, NULL, 0, 0);
		kiwi_irq_served(qp);
		return false;
	}
	memset(m, 0, sizeof(*m));
	m->rresp = true;
	m->idx = U32_MAX;
	kiwi_rdmap_aresp_encode(&a, m->atomic);
	m->inline_data = m->atomic;
	m->msn = tx->msn_aresp++;
	kiwi_tx_msg_begin(m, tx, KIWI_RDMAP_ATOMIC_RESP, KIWI_RDMAP_ARESP_LEN,
			  0);
	return true;
}
