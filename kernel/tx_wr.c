// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: starting send WRs on the transmit side (TX context).
 *
 * A WR is copied out of the SQ ring into the QP's private shadow before
 * anything in it is looked at: a user ring can change under us, and every
 * field of a user SQE is hostile. Local operations (Local Invalidate,
 * fast-register) are executed right here and complete in SQ order with
 * the rest (a Local Invalidate one RCU grace period later).
 */
#include "kiwi.h"
#include "conn.h"
#include "kiwi_trace.h"

#define KIWI_DP_MAX_MSG		0x80000000ULL	/* max_msg_sz of the device */

/*
 * Under qp->lock: copy the next WR into the shadow and start it. A Read
 * or an atomic (and Immediate Data while the peer's support is unknown,
 * tx_imm.c) waits while ORD Reads and atomics are outstanding; a fenced WR
 * while any is.
 * In SQD only the WRs queued before the graceful close began start.
 */
static bool kiwi_tx_take(struct kiwi_qp *qp, u32 *idx)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	u32 reads = tx->orq_tail - tx->orq_head;
	struct kiwi_swqe *w;

	if (tx->next - qp->sq.cons >= kiwi_sq_produced(qp))
		return false;
	if (qp->state == IB_QPS_SQD && tx->next == tx->drain_to)
		return false;
	w = &tx->swq[tx->next & (qp->sq.num - 1)];
	memcpy(&w->sqe, kiwi_ring_elem(&qp->sq, tx->next), sizeof(w->sqe));
	if ((w->sqe.flags & KIWI_SQE_READ_FENCE) && reads)
		return false;
	if (kiwi_sqe_is_read(qp, &w->sqe)) {
		if (reads >= tx->ord)
			return false;
		*kiwi_orq_slot(tx, tx->orq_tail) = (struct kiwi_orq_ent){
			.idx = tx->next,
			.inv = w->sqe.opcode == KIWI_WR_KREAD_INV,
			.stag = w->sqe.sge[0].lkey,
			.to = w->sqe.sge[0].addr,
			.len = w->sqe.sge[0].length,
		};
		tx->orq_tail++;
	} else if (kiwi_sqe_is_atomic(qp, &w->sqe)) {
		if (reads >= tx->ord)
			return false;
		*kiwi_orq_slot(tx, tx->orq_tail) = (struct kiwi_orq_ent){
			.idx = tx->next,
			.atomic = true,
			.stag = w->sqe.atomic.result.lkey,
			.to = w->sqe.atomic.result.addr,
			.len = sizeof(u64),
		};
		tx->orq_tail++;
	}
	w->probe = false;
	if (kiwi_sqe_is_imm(&w->sqe) && !kiwi_tx_imm_take(qp, w, tx->next))
		return false;
	w->status = IB_WC_SUCCESS;
	w->done = false;
	w->gp_wait = false;
	w->len = 0;
	*idx = tx->next++;
	return true;
}

/* Check and take references on the local SGEs of a Send or Write. */
static u8 kiwi_tx_sges(struct kiwi_qp *qp, struct kiwi_swqe *w,
		       struct kiwi_tx_msg *m)
{
	struct kiwi_device *kdev = to_kdev(qp->ibqp.device);
	const struct kiwi_sqe *sqe = &qp->tx.sqe;
	const struct kiwi_sge *sge;
	u64 len = 0;
	u32 i;

	if (sqe->flags & KIWI_SQE_INLINE) {
		if (sqe->inline_len > qp->max_inline)
			return IB_WC_LOC_LEN_ERR;
		m->inline_data = (const u8 *)sqe->sge;
		w->len = sqe->inline_len;
		return IB_WC_SUCCESS;
	}
	if (sqe->num_sge > qp->max_send_sge)
		return IB_WC_LOC_QP_OP_ERR;
	m->sge = sqe->sge;
	m->nsge = sqe->num_sge;
	for (i = 0; i < m->nsge; i++) {
		sge = &m->sge[i];
		len += sge->length;
		if (!sge->length)
			continue;
		m->mr[i] = kiwi_mr_get(kdev, sge->lkey);
		if (!m->mr[i] ||
		    kiwi_mr_check(m->mr[i], sge->lkey, qp->ibqp.pd, 0,
				  sge->addr, sge->length) != KIWI_MEM_OK)
			return IB_WC_LOC_PROT_ERR;
	}
	if (len > KIWI_DP_MAX_MSG)
		return IB_WC_LOC_LEN_ERR;
	w->len = len;
	return IB_WC_SUCCESS;
}

static u8 kiwi_tx_send_op(const struct kiwi_sqe *sqe)
{
	bool se = sqe->flags & KIWI_SQE_SOLICITED;

	if (sqe->opcode == KIWI_WR_SEND_WITH_INV)
		return se ? KIWI_RDMAP_SEND_SE_INV : KIWI_RDMAP_SEND_INV;
	return se ? KIWI_RDMAP_SEND_SE : KIWI_RDMAP_SEND;
}

static u8 kiwi_tx_setup_send(struct kiwi_qp *qp, struct kiwi_swqe *w,
			     struct kiwi_tx_msg *m)
{
	const struct kiwi_sqe *sqe = &qp->tx.sqe;
	u8 st = kiwi_tx_sges(qp, w, m);

	if (st)
		return st;
	if (sqe->opcode == KIWI_WR_RDMA_WRITE) {
		m->stag = sqe->inv_or_rkey;
		if (kiwi_tx_msg_begin(m, &qp->tx, KIWI_RDMAP_WRITE, w->len,
				      sqe->remote_addr))
			return IB_WC_LOC_QP_OP_ERR;
		return IB_WC_SUCCESS;
	}
	m->stag = sqe->opcode == KIWI_WR_SEND_WITH_INV ? sqe->inv_or_rkey : 0;
	m->msn = qp->tx.msn_send++;
	kiwi_tx_msg_begin(m, &qp->tx, kiwi_tx_send_op(sqe), w->len, 0);
	return IB_WC_SUCCESS;
}

/*
 * Immediate Data: alone (SEND_WITH_IMM, which must carry no payload: RFC
 * 7306 has no Send with Immediate Data, and two messages would consume two
 * receives) or after an RDMA Write (tx_imm.c sends what follows).
 */
static u8 kiwi_tx_setup_imm(struct kiwi_qp *qp, struct kiwi_swqe *w,
			    struct kiwi_tx_msg *m)
{
	const struct kiwi_sqe *sqe = &qp->tx.sqe;
	u8 st = kiwi_tx_sges(qp, w, m);

	if (st)
		return st;
	m->then = kiwi_tx_imm_plan(sqe, qp->tx.sqe_probe, m);
	if (sqe->opcode == KIWI_WR_SEND_WITH_IMM) {
		if (w->len)
			return IB_WC_LOC_QP_OP_ERR;
		kiwi_tx_imm_next(qp, m);
		return IB_WC_SUCCESS;
	}
	m->stag = sqe->inv_or_rkey;
	if (kiwi_tx_msg_begin(m, &qp->tx, KIWI_RDMAP_WRITE, w->len,
			      sqe->remote_addr))
		return IB_WC_LOC_QP_OP_ERR;
	return IB_WC_SUCCESS;
}

/*
 * The Read's sink is one local SGE the Response may write. A Read with
 * Invalidate invalidates that sink STag when it completes (rx.c).
 */
static u8 kiwi_tx_setup_read(struct kiwi_qp *qp, struct kiwi_swqe *w,
			     struct kiwi_tx_msg *m)
{
	const struct kiwi_sqe *sqe = &qp->tx.sqe;
	const struct kiwi_sge *sink = &sqe->sge[0];
	struct kiwi_rdmap_rreq r = {
		.sink_stag = sink->lkey,
		.sink_to = sink->addr,
		.size = sink->length,
		.src_stag = sqe->inv_or_rkey,
		.src_to = sqe->remote_addr,
	};
	struct kiwi_mr *mr;
	u8 st = IB_WC_SUCCESS;

	if (sqe->num_sge != 1 || (sqe->flags & KIWI_SQE_INLINE) ||
	    sink->length > KIWI_DP_MAX_MSG)
		return IB_WC_LOC_QP_OP_ERR;
	if (sink->length) {
		mr = kiwi_mr_get(to_kdev(qp->ibqp.device), sink->lkey);
		if (!mr || kiwi_mr_check(mr, sink->lkey, qp->ibqp.pd,
					 IB_ACCESS_LOCAL_WRITE, sink->addr,
					 sink->length) != KIWI_MEM_OK)
			st = IB_WC_LOC_PROT_ERR;
		if (mr)
			kiwi_mr_put(mr);
	}
	if (!st) {
		w->len = sink->length;
		kiwi_tx_rreq(qp, &r);
	}
	return st;
}

/*
 * Invalidate @stag for a WR of @qp; *@gp: an access may still copy
 * (kiwi_mr_inval_busy()).
 */
static u8 kiwi_tx_invalidate(struct kiwi_qp *qp, u32 stag, bool *gp)
{
	struct kiwi_device *kdev = to_kdev(qp->ibqp.device);

	if (kiwi_mr_invalidate(kdev, stag, qp->ibqp.pd, KIWI_INV_LOCAL))
		return IB_WC_LOC_PROT_ERR;
	*gp = kiwi_mr_inval_busy(kdev, stag);
	return IB_WC_SUCCESS;
}

/**
 * kiwi_swqe_local_op - the memory operation of a local WR
 * @qp: the QP, qp->lock held (kiwi_sq_execute())
 * @w: a Local Invalidate, fast-register or window bind TX reached, or a
 *     Read with Invalidate whose sink is invalidated as the Read completes
 * @gp: set when the WR took access away (an invalidation an access may
 *      still be copying under, a bind that unbound a window): it
 *      completes after an RCU grace period
 *
 * Return: IB_WC_SUCCESS, or the status of the failed operation.
 */
u8 kiwi_swqe_local_op(struct kiwi_qp *qp, const struct kiwi_swqe *w,
		      bool *gp)
{
	*gp = true;
	if (w->sqe.opcode == KIWI_WR_LOCAL_INV)
		return kiwi_tx_invalidate(qp, w->sqe.inv_or_rkey, gp);
	if (w->sqe.opcode == KIWI_WR_KREAD_INV)
		return kiwi_tx_invalidate(qp, w->sqe.sge[0].lkey, gp);
	if (w->sqe.opcode == KIWI_WR_BIND_MW)
		return kiwi_mw_bind(qp, &w->sqe, gp);
	*gp = false;
	if (qp->ibqp.uobject || !w->reg_mr)
		return IB_WC_LOC_QP_OP_ERR;
	return kiwi_mr_fast_reg(to_kmr(w->reg_mr), w->reg_key,
				w->reg_access) ? IB_WC_LOC_PROT_ERR :
						 IB_WC_SUCCESS;
}

/* Start WR @idx: a message to segment (true), or a local op done here. */
static bool kiwi_tx_setup(struct kiwi_qp *qp, u32 idx)
{
	struct kiwi_swqe *w = &qp->tx.swq[idx & (qp->sq.num - 1)];
	const struct kiwi_sqe *sqe = &qp->tx.sqe;
	struct kiwi_tx_msg *m = &qp->tx.cur;
	u8 st;

	memset(m, 0, sizeof(*m));
	m->idx = idx;
	trace_kiwi_wr_start(&qp->ibqp, idx, sqe);
	switch (sqe->opcode) {
	case KIWI_WR_SEND:
	case KIWI_WR_SEND_WITH_INV:
	case KIWI_WR_RDMA_WRITE:
		st = kiwi_tx_setup_send(qp, w, m);
		break;
	case KIWI_WR_SEND_WITH_IMM:
	case KIWI_WR_RDMA_WRITE_WITH_IMM:
		st = kiwi_tx_setup_imm(qp, w, m);
		break;
	case KIWI_WR_RDMA_READ:
	case KIWI_WR_KREAD_INV:
		st = kiwi_sqe_is_read(qp, sqe) ?
		     kiwi_tx_setup_read(qp, w, m) : IB_WC_LOC_QP_OP_ERR;
		break;
	case KIWI_WR_ATOMIC_CMP_AND_SWP:
	case KIWI_WR_ATOMIC_FETCH_AND_ADD:
	case KIWI_WR_KMASKED_CMP_SWAP:
	case KIWI_WR_KMASKED_FETCH_ADD:
		st = kiwi_sqe_is_atomic(qp, sqe) ?
		     kiwi_tx_setup_atomic(qp, idx, w, m) : IB_WC_LOC_QP_OP_ERR;
		break;
	case KIWI_WR_LOCAL_INV:
	case KIWI_WR_KREG_MR:
	case KIWI_WR_BIND_MW:
		/*
		 * Executed and completed as one against a flush; one that
		 * took access away one RCU grace period later, once a copy
		 * into or out of the memory that passed its validity check
		 * before is over on every CPU.
		 */
		st = kiwi_sq_execute(qp, idx);
		if (st == IB_WC_SUCCESS || st == IB_WC_WR_FLUSH_ERR)
			return false;
		break;
	default:
		st = IB_WC_LOC_QP_OP_ERR;
		break;
	}
	if (!st)
		return true;
	kiwi_tx_wr_failed(qp, idx, st);
	return false;
}

/* Under qp->lock: TX's own copy of WR @idx, which TX just took. */
static void kiwi_tx_copy_sqe(struct kiwi_qp *qp, u32 idx)
{
	const struct kiwi_swqe *w = &qp->tx.swq[idx & (qp->sq.num - 1)];

	qp->tx.sqe = w->sqe;
	qp->tx.sqe_probe = w->probe;
}

/**
 * kiwi_tx_start_sqe - make the next SQ WR the current message
 * @qp: the QP (TX context)
 *
 * Local operations on the way are executed and completed.
 *
 * Return: true if a message to segment was started.
 */
bool kiwi_tx_start_sqe(struct kiwi_qp *qp)
{
	unsigned long flags;
	bool took;
	u32 idx;

	for (;;) {
		spin_lock_irqsave(&qp->lock, flags);
		took = (qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD) &&
		       kiwi_tx_take(qp, &idx);
		if (took)
			kiwi_tx_copy_sqe(qp, idx);
		spin_unlock_irqrestore(&qp->lock, flags);
		if (!took)
			return false;
		if (kiwi_tx_setup(qp, idx))
			return true;
		if (!kiwi_qp_connected(qp))
			return false;
	}
}

/**
 * kiwi_tx_read_refused - does the peer's Terminate refuse a Read Request?
 * @qp: the QP (qp->lock not held), about to go to error
 * @t: the Terminate
 *
 * A remote protection error (RDMAP: invalid STag, bounds, access rights,
 * stream, wrap) whose copied DDP header names a Read Request answers the
 * outstanding Read of that MSN (kiwi_tx_orq_refused()). That Read
 * completes with IB_WC_REM_ACCESS_ERR, as an RC requester reports a
 * remote access error; the WRs before it that are not complete are
 * flushed first, the error state flushes the rest. Other Terminates
 * flush the Read.
 */
void kiwi_tx_read_refused(struct kiwi_qp *qp, const struct kiwi_term *t)
{
	u32 idx, msn;

	if (t->layer != KIWI_TERM_LAYER_RDMAP ||
	    t->etype != KIWI_TERM_ET_RDMAP_REMOTE_PROT || t->ddp_hdr_len < 2 ||
	    !kiwi_rdmap_term_names_op(t, KIWI_RDMAP_READ_REQ))
		return;
	if (kiwi_tx_orq_refused(qp, KIWI_ORQ_READ,
				kiwi_rdmap_term_request_msn(t, &msn) ?
				&msn : NULL, &idx))
		kiwi_sq_fail(qp, idx, IB_WC_REM_ACCESS_ERR);
}
