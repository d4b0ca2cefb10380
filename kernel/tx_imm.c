// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: RFC 7306 Immediate Data on the transmit side.
 *
 * IB_WR_SEND_WITH_IMM (no payload) is one Immediate Data message;
 * IB_WR_RDMA_WRITE_WITH_IMM is an RDMA Write followed by one (RFC 7306
 * section 6). Both use QN 0 and its MSNs, like a Send.
 *
 * RFC 7306 has no negotiation, and a peer without it (siw, every iWARP
 * NIC known) answers Immediate Data with a Terminate (0/2/06) that
 * arrives only after TCP took the message, when a Send would have
 * completed. So until a peer proved support on a connection, each
 * Immediate Data WR is followed by a zero-length RDMA Read: a peer
 * processes a Read Request only after it delivered the messages before
 * it (RFC 5040 section 5.5), so the Read Response shows the Immediate
 * Data was accepted. The WR completes with that Response; the first one
 * marks the peer as supporting RFC 7306 and later WRs complete like
 * Sends. A Terminate refusing the opcode instead completes the WR with
 * IB_WC_REM_OP_ERR, and the QP goes to error.
 */
#include "kiwi.h"

/**
 * kiwi_sqe_is_imm - does @sqe send Immediate Data?
 * @sqe: the private copy of the SQE
 */
bool kiwi_sqe_is_imm(const struct kiwi_sqe *sqe)
{
	return sqe->opcode == KIWI_WR_SEND_WITH_IMM ||
	       sqe->opcode == KIWI_WR_RDMA_WRITE_WITH_IMM;
}

/**
 * kiwi_tx_imm_take - reserve what an Immediate Data WR needs
 * @qp: the QP, qp->lock held
 * @w: the WR's shadow (its SQE copied)
 * @idx: its SQ index
 *
 * While the peer's support is unknown the WR needs an ORQ entry for its
 * zero-length Read; it waits, like a Read, while ORD Reads are
 * outstanding.
 *
 * Return: false if the WR must wait.
 */
bool kiwi_tx_imm_take(struct kiwi_qp *qp, struct kiwi_swqe *w, u32 idx)
{
	struct kiwi_qp_tx *tx = &qp->tx;

	lockdep_assert_held(&qp->lock);
	w->probe = !tx->peer_imm;
	if (!w->probe)
		return true;
	if (tx->orq_tail - tx->orq_head >= tx->ord)
		return false;
	*kiwi_orq_slot(tx, tx->orq_tail) =
		(struct kiwi_orq_ent){ .idx = idx, .probe = true };
	tx->orq_tail++;
	return true;
}

/**
 * kiwi_tx_imm_plan - what follows the first message of an Immediate Data WR
 * @sqe: the WR's SQE (TX's copy)
 * @probe: a probe Read follows the Immediate Data (kiwi_tx_imm_take())
 * @m: its first message (an RDMA Write), or the message to set up
 *
 * Return: the KIWI_TX_THEN_* flags.
 */
u8 kiwi_tx_imm_plan(const struct kiwi_sqe *sqe, bool probe,
		    struct kiwi_tx_msg *m)
{
	u8 then = KIWI_TX_THEN_IMM;

	kiwi_rdmap_imm_encode(sqe->imm_data, m->imm);
	if (sqe->flags & KIWI_SQE_SOLICITED)
		then |= KIWI_TX_THEN_SE;
	if (probe)
		then |= KIWI_TX_THEN_PROBE;
	return then;
}

/**
 * kiwi_tx_imm_next - start the next message of the current WR (TX)
 * @qp: the QP
 * @m: the current message, just ended, with KIWI_TX_THEN_* flags left;
 *     its MR references are dropped
 */
void kiwi_tx_imm_next(struct kiwi_qp *qp, struct kiwi_tx_msg *m)
{
	struct kiwi_rdmap_rreq probe = { 0 };
	struct kiwi_qp_tx *tx = &qp->tx;
	u8 op;

	m->sge = NULL;
	m->nsge = 0;
	m->stag = 0;
	if (m->then & KIWI_TX_THEN_IMM) {
		op = m->then & KIWI_TX_THEN_SE ? KIWI_RDMAP_IMM_SE :
						 KIWI_RDMAP_IMM;
		m->then &= ~(KIWI_TX_THEN_IMM | KIWI_TX_THEN_SE);
		m->inline_data = m->imm;
		m->msn = tx->msn_send++;
		kiwi_tx_msg_begin(m, tx, op, KIWI_RDMAP_IMM_LEN, 0);
		return;
	}
	m->then = 0;
	kiwi_tx_rreq(qp, &probe);
}

/**
 * kiwi_tx_imm_confirmed - the zero-length Read after Immediate Data was
 * answered: the peer supports RFC 7306 Immediate Data
 * @qp: the QP (qp->lock not held)
 */
void kiwi_tx_imm_confirmed(struct kiwi_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	qp->tx.peer_imm = true;
	spin_unlock_irqrestore(&qp->lock, flags);
}

/**
 * kiwi_tx_imm_refused - the peer's Terminate refused Immediate Data
 * @qp: the QP (qp->lock not held), about to go to error
 * @t: the Terminate
 *
 * The oldest Immediate Data WR still waiting for its Read completes with
 * IB_WC_REM_OP_ERR (the WRs before it that are not complete are flushed
 * first, in SQ order); the error state flushes the rest.
 */
void kiwi_tx_imm_refused(struct kiwi_qp *qp, const struct kiwi_term *t)
{
	u32 idx;

	if (!kiwi_rdmap_term_refuses_imm(t))
		return;
	if (kiwi_tx_orq_refused(qp, KIWI_ORQ_PROBE, NULL, &idx))
		kiwi_sq_fail(qp, idx, IB_WC_REM_OP_ERR);
}
