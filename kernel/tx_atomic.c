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
 *
 * Requester: IB_WR_ATOMIC_CMP_AND_SWP / IB_WR_ATOMIC_FETCH_AND_ADD, the
 * kernel's IB_WR_MASKED_ATOMIC_* forms and the user ring forms become an
 * Atomic Request on QN 1, sharing the MSNs and the ORD with Reads; the
 * Request Identifier is the WR's SQ index. The WR completes when its
 * Response arrived and the original value was written to its 8-octet
 * result SGE (rx_atomic.c), or with the error of a Terminate that
 * answers it (a peer without RFC 7306 refuses the opcode: siw sends
 * 0/2/06).
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
	kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_AREQ_SERVED);
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

/**
 * kiwi_sqe_is_atomic - is @sqe an RFC 7306 atomic?
 * @qp: the QP
 * @sqe: the private copy of the SQE
 *
 * The masked opcodes are kernel-only: in a user ring they are no atomic
 * (TX fails them as unknown opcodes). A user SQE carries its masks in the
 * plain opcodes.
 */
bool kiwi_sqe_is_atomic(const struct kiwi_qp *qp, const struct kiwi_sqe *sqe)
{
	return sqe->opcode == KIWI_WR_ATOMIC_CMP_AND_SWP ||
	       sqe->opcode == KIWI_WR_ATOMIC_FETCH_AND_ADD ||
	       ((sqe->opcode == KIWI_WR_KMASKED_CMP_SWAP ||
		 sqe->opcode == KIWI_WR_KMASKED_FETCH_ADD) &&
		!qp->ibqp.uobject);
}

/* The Atomic Request of a checked atomic SQE (RFC 7306 section 5.2.1). */
static void kiwi_tx_areq_of(const struct kiwi_sqe *sqe, u32 idx,
			    struct kiwi_rdmap_areq *r)
{
	const struct kiwi_sqe_atomic *a = &sqe->atomic;

	r->req_id = idx;
	r->stag = sqe->inv_or_rkey;
	r->to = sqe->remote_addr;
	if (sqe->opcode == KIWI_WR_ATOMIC_CMP_AND_SWP ||
	    sqe->opcode == KIWI_WR_KMASKED_CMP_SWAP) {
		r->aop = KIWI_RDMAP_AOP_CMP_SWAP;
		r->data = a->swap;
		r->data_mask = a->swap_mask;
		r->cmp = a->compare_add;
		r->cmp_mask = a->compare_add_mask;
	} else {
		/* Unused Compare fields: 0 and all-ones (section 5.2.1). */
		r->aop = KIWI_RDMAP_AOP_FETCH_ADD;
		r->data = a->compare_add;
		r->data_mask = a->compare_add_mask;
		r->cmp = 0;
		r->cmp_mask = ~0ULL;
	}
}

/**
 * kiwi_tx_setup_atomic - start atomic WR @idx: its Atomic Request
 * @qp: the QP (TX)
 * @idx: SQ index of the WR (kiwi_tx_take() queued its ORQ entry)
 * @w: its shadow, which takes the byte count (the SQE is read from TX's
 *     copy, qp->tx.sqe)
 * @m: the message to set up
 *
 * The result SGE must be exactly 8 octets of local memory the QP may
 * write (the verbs rule for atomics). The remote address is not checked
 * here: the responder judges it (an unaligned one gets 0/2/07).
 *
 * Return: IB_WC_SUCCESS, or the WR's local error status.
 */
u8 kiwi_tx_setup_atomic(struct kiwi_qp *qp, u32 idx, struct kiwi_swqe *w,
			struct kiwi_tx_msg *m)
{
	const struct kiwi_sqe *sqe = &qp->tx.sqe;
	const struct kiwi_sge *res = &sqe->atomic.result;
	struct kiwi_rdmap_areq r;
	struct kiwi_mr *mr;
	u8 st = IB_WC_SUCCESS;

	if (sqe->num_sge != 1 || (sqe->flags & KIWI_SQE_INLINE) ||
	    res->length != sizeof(u64))
		return IB_WC_LOC_QP_OP_ERR;
	mr = kiwi_mr_get(to_kdev(qp->ibqp.device), res->lkey);
	if (!mr || kiwi_mr_check(mr, res->lkey, qp->ibqp.pd,
				 IB_ACCESS_LOCAL_WRITE, res->addr,
				 sizeof(u64)) != KIWI_MEM_OK)
		st = IB_WC_LOC_PROT_ERR;
	if (mr)
		kiwi_mr_put(mr);
	if (st)
		return st;
	w->len = sizeof(u64);
	kiwi_tx_areq_of(sqe, idx, &r);
	kiwi_rdmap_areq_encode(&r, m->atomic);
	m->inline_data = m->atomic;
	m->msn = kiwi_tx_request_msn(qp);
	kiwi_tx_msg_begin(m, &qp->tx, KIWI_RDMAP_ATOMIC_REQ,
			  KIWI_RDMAP_AREQ_LEN, 0);
	return IB_WC_SUCCESS;
}

/* The completion status of an atomic a Terminate of class @t refused. */
static u8 kiwi_tx_atomic_status(const struct kiwi_term *t)
{
	switch (kiwi_term_err_lookup(t->layer, t->etype, t->ecode)) {
	case KIWI_TERM_ERR_RDMAP_INVALID_STAG:
	case KIWI_TERM_ERR_RDMAP_BOUNDS:
	case KIWI_TERM_ERR_RDMAP_ACCESS:
	case KIWI_TERM_ERR_RDMAP_STAG_STREAM:
	case KIWI_TERM_ERR_RDMAP_TO_WRAP:
		return IB_WC_REM_ACCESS_ERR;
	case KIWI_TERM_ERR_RDMAP_CATA_STREAM:
		return IB_WC_REM_INV_REQ_ERR;	/* unaligned, or IRD overrun */
	default:
		return IB_WC_REM_OP_ERR;	/* 0/2/06: no RFC 7306 atomics */
	}
}

/**
 * kiwi_tx_atomic_refused - does the peer's Terminate answer an atomic?
 * @qp: the QP (qp->lock not held), about to go to error
 * @t: the Terminate
 *
 * A Terminate whose copied DDP header names an Atomic Request, or an
 * "unexpected opcode" without one (siw's answer to opcode 0xA), completes
 * the atomic it names (kiwi_tx_orq_refused()) with IB_WC_REM_ACCESS_ERR
 * (remote protection errors), IB_WC_REM_INV_REQ_ERR (0/2/07: unaligned
 * target) or IB_WC_REM_OP_ERR (anything else, 0/2/06 included); the WRs
 * before it that are not complete are flushed first, the error state
 * flushes the rest.
 */
void kiwi_tx_atomic_refused(struct kiwi_qp *qp, const struct kiwi_term *t)
{
	u32 idx, msn;

	if (!kiwi_rdmap_term_names_op(t, KIWI_RDMAP_ATOMIC_REQ))
		return;
	if (kiwi_tx_orq_refused(qp, KIWI_ORQ_ATOMIC,
				kiwi_rdmap_term_request_msn(t, &msn) ?
				&msn : NULL, &idx))
		kiwi_sq_fail(qp, idx, kiwi_tx_atomic_status(t));
}
