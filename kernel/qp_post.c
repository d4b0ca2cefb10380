// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: posting work requests.
 *
 * User QPs post into their mmap'd rings; their only system call is the
 * send doorbell, post_send with no work request. Kernel QPs post through
 * kiwi_post_send()/kiwi_post_recv().
 *
 * In RTS and CLOSING (SQD) a send WR is written into the SQ ring like a
 * user SQE and the transmit engine (tx.c) is kicked; it copies the WR out
 * of the ring when it starts it. In the error state a send is flushed
 * with IB_WC_WR_FLUSH_ERR, at once unless an older Local Invalidate still
 * waits for its grace period (what ib_drain_qp() relies on: the drain WR
 * completes after everything posted before it); in any other state
 * post_send fails with -EINVAL (kiwi_doorbell() for user QPs).
 */
#include "kiwi.h"
#include "kiwi_trace.h"

/**
 * kiwi_rqe_from_wr - translate a kernel receive WR into a ring element
 * @rqe: element to fill
 * @wr: the work request
 * @max_sge: SGE limit of the QP or SRQ
 *
 * Return: 0 or -EINVAL if @wr has too many SGEs.
 */
int kiwi_rqe_from_wr(struct kiwi_rqe *rqe, const struct ib_recv_wr *wr,
		     u32 max_sge)
{
	int i;

	if (wr->num_sge < 0 || wr->num_sge > max_sge)
		return -EINVAL;
	memset(rqe, 0, sizeof(*rqe));
	rqe->wr_id = wr->wr_id;
	rqe->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		rqe->sge[i].addr = wr->sg_list[i].addr;
		rqe->sge[i].length = wr->sg_list[i].length;
		rqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

/* The completion opcode of a kernel send WR, or -EINVAL if unsupported. */
static int kiwi_send_wc_opcode(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_SEND_WITH_IMM:
		return IB_WC_SEND;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
	case IB_WR_RDMA_READ_WITH_INV:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_MASKED_ATOMIC_CMP_AND_SWP:
		return IB_WC_MASKED_COMP_SWAP;
	case IB_WR_MASKED_ATOMIC_FETCH_AND_ADD:
		return IB_WC_MASKED_FETCH_ADD;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	default:
		return -EINVAL;
	}
}

static bool kiwi_wr_is_atomic(enum ib_wr_opcode op)
{
	return op == IB_WR_ATOMIC_CMP_AND_SWP ||
	       op == IB_WR_ATOMIC_FETCH_AND_ADD ||
	       op == IB_WR_MASKED_ATOMIC_CMP_AND_SWP ||
	       op == IB_WR_MASKED_ATOMIC_FETCH_AND_ADD;
}

/*
 * RFC 7306 Immediate Data has no payload and no Send carries immediate
 * data: Send with Immediate is supported without payload only.
 */
static bool kiwi_send_imm_has_payload(const struct ib_send_wr *wr)
{
	int i;

	if (wr->opcode != IB_WR_SEND_WITH_IMM)
		return false;
	for (i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length)
			return true;
	}
	return false;
}

static int kiwi_send_wr_check(struct kiwi_qp *qp, const struct ib_send_wr *wr)
{
	u32 len = 0;
	int i;

	if (kiwi_send_wc_opcode(wr->opcode) < 0 || wr->num_sge < 0)
		return -EINVAL;
	/* The 8-octet original value lands in one local SGE. */
	if (kiwi_wr_is_atomic(wr->opcode))
		return wr->num_sge == 1 && wr->sg_list[0].length == 8 &&
		       !(wr->send_flags & IB_SEND_INLINE) ? 0 : -EINVAL;
	/* Inline or not: an inline WR's SGEs are not bound by max_send_sge. */
	if (kiwi_send_imm_has_payload(wr))
		return -EOPNOTSUPP;
	if (wr->opcode == IB_WR_REG_MR || wr->opcode == IB_WR_LOCAL_INV)
		return 0;
	/*
	 * A Read with Invalidate invalidates its sink STag, as iWARP RNICs
	 * do. The consumer names that MR in invalidate_rkey, possibly with
	 * an older key: rdma_rw sets it before it moves the MR to a new key
	 * for the sink SGE.
	 */
	if (wr->opcode == IB_WR_RDMA_READ_WITH_INV &&
	    (wr->num_sge != 1 ||
	     kiwi_stag_index(wr->ex.invalidate_rkey) !=
	     kiwi_stag_index(wr->sg_list[0].lkey)))
		return -EINVAL;
	if (!(wr->send_flags & IB_SEND_INLINE))
		return wr->num_sge > qp->max_send_sge ? -EINVAL : 0;
	if (wr->opcode == IB_WR_RDMA_READ ||
	    wr->opcode == IB_WR_RDMA_READ_WITH_INV)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > qp->max_inline)
			return -EINVAL;
		len += wr->sg_list[i].length;
	}
	return len > qp->max_inline ? -EINVAL : 0;
}

static u8 kiwi_sqe_opcode(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_SEND_WITH_INV:
		return KIWI_WR_SEND_WITH_INV;
	case IB_WR_RDMA_WRITE:
		return KIWI_WR_RDMA_WRITE;
	case IB_WR_SEND_WITH_IMM:
		return KIWI_WR_SEND_WITH_IMM;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return KIWI_WR_RDMA_WRITE_WITH_IMM;
	case IB_WR_RDMA_READ:
		return KIWI_WR_RDMA_READ;
	case IB_WR_RDMA_READ_WITH_INV:
		return KIWI_WR_KREAD_INV;
	case IB_WR_LOCAL_INV:
		return KIWI_WR_LOCAL_INV;
	case IB_WR_REG_MR:
		return KIWI_WR_KREG_MR;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return KIWI_WR_ATOMIC_CMP_AND_SWP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return KIWI_WR_ATOMIC_FETCH_AND_ADD;
	case IB_WR_MASKED_ATOMIC_CMP_AND_SWP:
		return KIWI_WR_KMASKED_CMP_SWAP;
	case IB_WR_MASKED_ATOMIC_FETCH_AND_ADD:
		return KIWI_WR_KMASKED_FETCH_ADD;
	default:
		return KIWI_WR_SEND;
	}
}

static u32 kiwi_sqe_flags(int send_flags)
{
	u32 flags = 0;

	if (send_flags & IB_SEND_SIGNALED)
		flags |= KIWI_SQE_SIGNALED;
	if (send_flags & IB_SEND_SOLICITED)
		flags |= KIWI_SQE_SOLICITED;
	if (send_flags & IB_SEND_INLINE)
		flags |= KIWI_SQE_INLINE;
	if (send_flags & IB_SEND_FENCE)
		flags |= KIWI_SQE_READ_FENCE;
	return flags;
}

/* Inline data of a kernel WR: its SGEs are kernel virtual addresses. */
static void kiwi_sqe_inline(struct kiwi_sqe *sqe, const struct ib_send_wr *wr)
{
	u8 *dst = (u8 *)sqe->sge;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		memcpy(dst + sqe->inline_len,
		       (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		sqe->inline_len += wr->sg_list[i].length;
	}
}

/*
 * The remote half of an RDMA WR, the STag of an invalidating one, the
 * immediate value of one with immediate data, the operands of an atomic:
 * the plain verbs forms have CmpSwap masks all-ones and FetchAdd mask 0;
 * the masked ones bring theirs (RFC 7306 sections 5.1.1 and 5.1.2; for a
 * FetchAdd, compare_add_mask marks the most significant bit of each field,
 * the carry out of which is dropped, as RDS uses it).
 */
static void kiwi_sqe_remote(struct kiwi_sqe *sqe, const struct ib_send_wr *wr)
{
	const struct ib_atomic_wr *a = atomic_wr(wr);

	switch (wr->opcode) {
	case IB_WR_ATOMIC_CMP_AND_SWP:
		sqe->atomic.swap = a->swap;
		sqe->atomic.swap_mask = ~0ULL;
		sqe->atomic.compare_add_mask = ~0ULL;
		fallthrough;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		sqe->atomic.compare_add = a->compare_add;
		sqe->inv_or_rkey = a->rkey;
		sqe->remote_addr = a->remote_addr;
		break;
	case IB_WR_MASKED_ATOMIC_CMP_AND_SWP:
		sqe->atomic.swap = a->swap;
		sqe->atomic.swap_mask = a->swap_mask;
		fallthrough;
	case IB_WR_MASKED_ATOMIC_FETCH_AND_ADD:
		sqe->atomic.compare_add = a->compare_add;
		sqe->atomic.compare_add_mask = a->compare_add_mask;
		sqe->inv_or_rkey = a->rkey;
		sqe->remote_addr = a->remote_addr;
		break;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		sqe->imm_data = wr->ex.imm_data;
		fallthrough;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_READ:
	case IB_WR_RDMA_READ_WITH_INV:
		sqe->inv_or_rkey = rdma_wr(wr)->rkey;
		sqe->remote_addr = rdma_wr(wr)->remote_addr;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		sqe->inv_or_rkey = wr->ex.invalidate_rkey;
		break;
	case IB_WR_SEND_WITH_IMM:
		sqe->imm_data = wr->ex.imm_data;
		break;
	default:
		break;
	}
}

/*
 * Under qp->lock: write a checked kernel WR into SQ slot @idx. A REG_MR
 * keeps its MR in the engine's shadow of that slot: the ring element has
 * no room for a pointer, and user rings never carry one.
 */
static void kiwi_sqe_from_wr(struct kiwi_qp *qp, u32 idx,
			     const struct ib_send_wr *wr)
{
	struct kiwi_sqe *sqe = kiwi_ring_elem(&qp->sq, idx);
	struct kiwi_swqe *w = &qp->tx.swq[idx & (qp->sq.num - 1)];
	int i;

	memset(sqe, 0, sizeof(*sqe));
	sqe->wr_id = wr->wr_id;
	sqe->opcode = kiwi_sqe_opcode(wr->opcode);
	sqe->flags = kiwi_sqe_flags(wr->send_flags);
	kiwi_sqe_remote(sqe, wr);
	w->reg_mr = NULL;
	if (wr->opcode == IB_WR_REG_MR) {
		w->reg_mr = reg_wr(wr)->mr;
		w->reg_key = reg_wr(wr)->key;
		w->reg_access = reg_wr(wr)->access;
		return;
	}
	if (wr->opcode == IB_WR_LOCAL_INV)
		return;
	if (wr->send_flags & IB_SEND_INLINE) {
		kiwi_sqe_inline(sqe, wr);
		return;
	}
	sqe->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		sqe->sge[i].addr = wr->sg_list[i].addr;
		sqe->sge[i].length = wr->sg_list[i].length;
		sqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
}

/* Under qp->lock, QP connected: queue the WRs for the transmit engine. */
static int kiwi_post_send_ring(struct kiwi_qp *qp, const struct ib_send_wr *wr,
			       const struct ib_send_wr **bad_wr)
{
	struct kiwi_ring *r = &qp->sq;
	int rv;

	for (; wr; wr = wr->next) {
		rv = kiwi_send_wr_check(qp, wr);
		if (rv) {
			*bad_wr = wr;
			return rv;
		}
		if (wr->opcode == IB_WR_REG_MR &&
		    reg_wr(wr)->mr->pd != qp->ibqp.pd) {
			*bad_wr = wr;
			return -EINVAL;
		}
		if (!kiwi_ring_room(r)) {
			*bad_wr = wr;
			return -ENOMEM;
		}
		kiwi_sqe_from_wr(qp, r->prod, wr);
		kiwi_ring_produced(r);
		trace_kiwi_post_send(&qp->ibqp, wr->wr_id, wr->opcode,
				     wr->num_sge);
	}
	return 0;
}

/*
 * The doorbell of a user QP, by state:
 *  - RTS, SQD: TX looks at the ring (in SQD it starts only what was queued
 *    before the graceful close; the rest waits for the flush);
 *  - ERR: what user space produced since is flushed, so late work
 *    requests still complete;
 *  - SQE (TERMINATE): nothing to do; the WRs stay queued and are flushed
 *    when the QP reaches ERR, within drain_timeout. Started WRs (an
 *    outstanding Read, a Send TCP has not taken) must never be dropped:
 *    they complete, if only with IB_WC_WR_FLUSH_ERR;
 *  - RESET, INIT: no WR was ever started (TX runs only on a connected
 *    QP); the new SQEs are dropped and the post fails, leaving nothing
 *    behind that could complete later.
 */
static int kiwi_doorbell(struct kiwi_qp *qp)
{
	struct kiwi_qp_flushed out;
	enum ib_qp_state state;
	unsigned long flags;

	kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_TX_DOORBELLS);
	spin_lock_irqsave(&qp->lock, flags);
	state = qp->state;
	if (state == IB_QPS_ERR)
		kiwi_qp_flush(qp, &out);
	else if (state == IB_QPS_RESET || state == IB_QPS_INIT)
		kiwi_sq_discard(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	switch (state) {
	case IB_QPS_RTS:
	case IB_QPS_SQD:
		kiwi_tx_kick_now(qp);
		return 0;
	case IB_QPS_ERR:
		kiwi_qp_flush_report(qp, &out);
		return 0;
	case IB_QPS_SQE:
		return 0;
	default:
		return -EINVAL;
	}
}

/**
 * kiwi_post_send - ib_device_ops.post_send
 * @ibqp: the QP
 * @wr: work requests (kernel QPs), NULL for a user QP's doorbell
 * @bad_wr: set to the first failed work request
 *
 * A connected QP (RTS, or SQD while it drains) queues the WRs for the
 * transmit engine. In the error state they are queued and flushed with
 * IB_WC_WR_FLUSH_ERR, in order behind the WRs still there (a Local
 * Invalidate waiting for its grace period, kiwi_sq_flush()); a doorbell
 * then flushes what user space produced on both rings. In RESET or INIT
 * post_send fails (a doorbell also drops the new send queue elements). In
 * TERMINATE a kernel post fails; a doorbell succeeds and the WRs are
 * flushed when the QP reaches ERR.
 *
 * Return: 0, -EINVAL (bad WR, or QP not in a state that takes sends),
 * -ENOMEM (SQ full).
 */
int kiwi_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct kiwi_qp *qp = to_kqp(ibqp);
	unsigned long flags;
	bool kick = false;
	int res = 0;
	int rv;

	if (ibqp->uobject) {
		*bad_wr = wr;
		return wr ? -EINVAL : kiwi_doorbell(qp);
	}
	spin_lock_irqsave(&qp->lock, flags);
	if (kiwi_qp_connected(qp)) {
		rv = kiwi_post_send_ring(qp, wr, bad_wr);
		kick = true;
	} else if (qp->state == IB_QPS_ERR) {
		/* Through the SQ: behind a Local Invalidate still waiting. */
		rv = kiwi_post_send_ring(qp, wr, bad_wr);
		res = kiwi_sq_flush(qp);
	} else {
		*bad_wr = wr;
		rv = -EINVAL;
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	if (kick)
		kiwi_tx_kick(qp);
	kiwi_cq_signal(to_kcq(ibqp->send_cq), res);
	return rv;
}

static int kiwi_post_recv_ring(struct kiwi_qp *qp, const struct ib_recv_wr *wr,
			       const struct ib_recv_wr **bad_wr)
{
	struct kiwi_ring *r = &qp->rq;
	int rv = 0;

	for (; wr; wr = wr->next) {
		/* Held completions are still outstanding (rx_gp.c). */
		if (kiwi_ring_room(r) <= qp->rx_gp.n) {
			rv = -ENOMEM;
			break;
		}
		rv = kiwi_rqe_from_wr(kiwi_ring_elem(r, r->prod), wr,
				      qp->max_recv_sge);
		if (rv)
			break;
		kiwi_ring_produced(r);
		trace_kiwi_post_recv(&qp->ibqp, wr->wr_id, -1, wr->num_sge);
	}
	if (rv)
		*bad_wr = wr;
	return rv;
}

/**
 * kiwi_post_recv - ib_device_ops.post_recv, kernel QPs without an SRQ
 * @ibqp: the QP
 * @wr: receive work requests
 * @bad_wr: set to the first failed work request
 *
 * Receives may be posted from INIT on; in the error state they are
 * flushed at once.
 *
 * Return: 0, -EINVAL (user QP, SRQ QP, RESET state, too many SGEs),
 * -ENOMEM (receive queue full).
 */
int kiwi_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct kiwi_qp *qp = to_kqp(ibqp);
	struct kiwi_qp_flushed out;
	unsigned long flags;
	bool flush;
	int rv;

	*bad_wr = wr;
	if (ibqp->uobject || ibqp->srq)
		return -EINVAL;
	spin_lock_irqsave(&qp->lock, flags);
	if (qp->state == IB_QPS_RESET) {
		spin_unlock_irqrestore(&qp->lock, flags);
		return -EINVAL;
	}
	*bad_wr = NULL;
	rv = kiwi_post_recv_ring(qp, wr, bad_wr);
	flush = qp->state == IB_QPS_ERR;
	if (flush)
		kiwi_qp_flush(qp, &out);
	spin_unlock_irqrestore(&qp->lock, flags);
	if (flush)
		kiwi_qp_flush_report(qp, &out);
	return rv;
}
