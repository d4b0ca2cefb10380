// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: the transmit side of the data path.
 *
 * One work item per QP stages DDP segments in a linear buffer (payload
 * copied once from the registered memory), has the LLP frame each in place
 * (llp.h; MPA/TCP: FPDU header, CRC and markers by proto/mpa) and hands the
 * buffer to the LLP's non-blocking send. On -EAGAIN it stops;
 * kiwi_qp_tx_space() queues it again. Per message boundary the next
 * message is, in this order: the Terminate, the RTR message, the Response
 * to the oldest inbound Read or Atomic Request (tx_atomic.c executes the
 * atomic when its turn comes), the next SQ WR.
 *
 * A Send or Write completes when the buffer holding its last FPDU was
 * taken by the LLP; a Read when its last Response was placed (rx.c), an
 * atomic when its Response arrived (rx_atomic.c); Local
 * Invalidate and fast-register when TX reaches them. Immediate Data WRs
 * are one, two or three messages (tx_imm.c).
 */
#include <linux/delay.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/net.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <net/sock.h>

#include "kiwi.h"
#include "conn.h"
#include "llp.h"

static void kiwi_tx_work(struct work_struct *work);

/*
 * Every QP's TX work. WQ_MEM_RECLAIM: storage ULPs (nvme-rdma, rpcrdma,
 * iser) write dirty pages back through kiwi, so TX must make progress
 * while memory is reclaimed; and the CM's workqueue, itself WQ_MEM_RECLAIM,
 * waits for a QP's TX work at detach, which a reclaim workqueue may do only
 * on another reclaim workqueue.
 */
static struct workqueue_struct *kiwi_tx_wq;

/**
 * kiwi_tx_wq_init - create the TX workqueue, before any device exists
 *
 * Return: 0 or -ENOMEM.
 */
int kiwi_tx_wq_init(void)
{
	kiwi_tx_wq = alloc_workqueue("kiwi_tx", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	return kiwi_tx_wq ? 0 : -ENOMEM;
}

/* Module unload, after every QP is gone. */
void kiwi_tx_wq_exit(void)
{
	destroy_workqueue(kiwi_tx_wq);
}

void kiwi_tx_init(struct kiwi_qp *qp)
{
	INIT_WORK(&qp->tx.work, kiwi_tx_work);
	mutex_init(&qp->tx.run_lock);
	mutex_init(&qp->tx.llp_mutex);
}

/* Any context: make TX look at the QP again. */
void kiwi_tx_kick(struct kiwi_qp *qp)
{
	queue_work(kiwi_tx_wq, &qp->tx.work);
}

/**
 * kiwi_tx_attach - allocate the transmit state of a new connection
 * @qp: the QP, not yet attached
 * @ord: Reads this QP may have outstanding (>= 1)
 * @ird: inbound Reads this QP serves at once (>= 1)
 *
 * The connection manager's worker calls this: the buffers of a user QP
 * are charged to its creator's memory cgroup (kiwi_swq_alloc()).
 *
 * Return: 0 or -ENOMEM.
 */
int kiwi_tx_attach(struct kiwi_qp *qp, u32 ord, u32 ird)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	struct mem_cgroup *old = set_active_memcg(qp->memcg);
	u32 orq_slots = roundup_pow_of_two(ord);
	u32 irq_slots = roundup_pow_of_two(ird);
	gfp_t gfp = kiwi_qp_gfp(qp);

	tx->orq = kcalloc(orq_slots, sizeof(*tx->orq), gfp);
	tx->irq = kcalloc(irq_slots, sizeof(*tx->irq), gfp);
	set_active_memcg(old);
	if (kiwi_tx_buf_alloc(qp) || !tx->orq || !tx->irq) {
		kiwi_tx_release(qp);
		return -ENOMEM;
	}
	tx->ord = ord;
	tx->orq_slots = orq_slots;
	tx->ird = ird;
	tx->irq_slots = irq_slots;
	tx->len = 0;
	tx->sent = 0;
	kiwi_mpa_seg_init(&tx->seg, 0, false);
	tx->stalled = false;
	tx->linger = false;
	tx->msn_send = KIWI_DDP_MSN_INIT;
	tx->msn_rreq = KIWI_DDP_MSN_INIT;
	tx->msn_aresp = KIWI_DDP_MSN_INIT;
	tx->term_sent = false;
	tx->closed = false;
	tx->close_req = false;
	tx->term_pending = false;
	tx->orq_head = KIWI_TX_RQ_START;
	tx->orq_tail = KIWI_TX_RQ_START;
	tx->peer_imm = false;
	tx->irq_head = KIWI_TX_RQ_START;
	tx->irq_tail = KIWI_TX_RQ_START;
	memset(&tx->cur, 0, sizeof(tx->cur));
	return 0;
}

/* Drop the current message's MR references; it is no longer active. */
static void kiwi_tx_msg_put(struct kiwi_tx_msg *m)
{
	u32 i;

	for (i = 0; i < KIWI_MAX_SGE; i++) {
		if (m->mr[i])
			kiwi_mr_put(m->mr[i]);
		m->mr[i] = NULL;
	}
	if (m->src)
		kiwi_mr_put(m->src);
	m->src = NULL;
	m->active = false;
}

/*
 * After TX stopped for good (detach, or a failed attach): drop the MR
 * references and free the buffers.
 */
void kiwi_tx_release(struct kiwi_qp *qp)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	u32 i;

	kiwi_tx_msg_put(&tx->cur);
	for (i = tx->irq_head; tx->irq && i != tx->irq_tail; i++) {
		if (kiwi_irq_slot(tx, i)->mr)
			kiwi_mr_put(kiwi_irq_slot(tx, i)->mr);
	}
	tx->irq_head = 0;
	tx->irq_tail = 0;
	kiwi_tx_buf_free(tx);
	kfree(tx->orq);
	kfree(tx->irq);
	tx->orq = NULL;
	tx->irq = NULL;
}

/**
 * kiwi_irq_push - queue the Response to an inbound Read or Atomic Request
 * (RX)
 * @qp: the QP
 * @ent: the request; the reference on its MR passes to TX
 *
 * Reads and atomics share the IRD (RFC 7306 section 5.2).
 *
 * Return: false if IRD requests are already queued (the caller drops the
 * MR).
 */
bool kiwi_irq_push(struct kiwi_qp *qp, const struct kiwi_irq_ent *ent)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&qp->lock, flags);
	ok = tx->irq_tail - tx->irq_head < tx->ird;
	if (ok) {
		*kiwi_irq_slot(tx, tx->irq_tail) = *ent;
		tx->irq_tail++;
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	if (ok)
		kiwi_tx_kick(qp);
	return ok;
}

/* --- framing --- */

/*
 * Where the ULPDU of a segment is staged, or NULL if the batch must be sent
 * first: the buffer is full, or the FPDU would cross the end of the TCP
 * segment the batch stops in (tx->seg; the next batch starts a segment).
 */
static u8 *kiwi_tx_seg_begin(struct kiwi_qp_tx *tx, u32 ulpdu_len)
{
	u32 wire = tx->llp->seg_wire_len(tx, ulpdu_len);

	if (wire > KIWI_TX_BUF_LEN - tx->base - tx->len ||
	    !kiwi_mpa_seg_fits(&tx->seg, wire))
		return NULL;
	return tx->buf + tx->len + tx->llp->seg_room;
}

/* The LLP frames the segment staged by kiwi_tx_seg_begin() in place. */
static int kiwi_tx_seg_end(struct kiwi_qp_tx *tx, u32 ulpdu_len)
{
	u32 start = tx->len;
	int rv;

	rv = tx->llp->seg_frame(tx, ulpdu_len);
	if (!rv)
		kiwi_mpa_seg_add(&tx->seg, tx->len - start);
	return rv;
}

/*
 * The buffer is empty: the LLP may take a new MULPDU (a path MTU change)
 * for the segments framed from now on, and the batch starts a segment.
 */
static void kiwi_tx_batch(struct kiwi_qp_tx *tx, struct socket *sock)
{
	if (tx->llp->batch)
		tx->llp->batch(tx, sock);
}

/* Copy message octets [@off, @off + @len) of the current message to @dst. */
static int kiwi_tx_payload(struct kiwi_tx_msg *m, u8 *dst, u32 off, u32 len)
{
	const struct kiwi_sge *sge;
	u32 i, n;
	int rv;

	if (m->inline_data) {
		memcpy(dst, m->inline_data + off, len);
		return 0;
	}
	if (m->rresp)
		return len ? kiwi_mr_read(m->src, m->src_to + off, dst, len) : 0;
	for (i = 0; i < m->nsge && len; i++) {
		sge = &m->sge[i];
		if (off >= sge->length) {
			off -= sge->length;
			continue;
		}
		n = min(len, sge->length - off);
		rv = kiwi_mr_read(m->mr[i], sge->addr + off, dst, n);
		if (rv)
			return rv;
		dst += n;
		len -= n;
		off = 0;
	}
	return 0;
}

/* --- messages --- */

/* The oldest inbound Read or Atomic Request was answered (TX). */
void kiwi_irq_served(struct kiwi_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	qp->tx.irq_head++;
	spin_unlock_irqrestore(&qp->lock, flags);
}

static void kiwi_tx_msg_end(struct kiwi_qp *qp)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	struct kiwi_tx_msg *m = &tx->cur;

	kiwi_tx_msg_put(m);
	if (m->rresp)
		kiwi_irq_served(qp);
	else if (m->then)
		kiwi_tx_imm_next(qp, m);	/* the WR goes on */
	else if (m->op != KIWI_RDMAP_TERMINATE && m->idx != U32_MAX)
		tx->framed_to = m->idx + 1;
}

/*
 * The current message, WR @idx, failed locally: it completes with its own
 * status after the older WRs (flushed), and the QP goes to error.
 */
void kiwi_tx_wr_failed(struct kiwi_qp *qp, u32 idx, u8 status)
{
	kiwi_tx_msg_put(&qp->tx.cur);
	kiwi_qp_fail_wr(qp, idx, status);
	kiwi_qp_close_llp(qp, true);
}

/**
 * kiwi_tx_segment - frame the next DDP segment of the current message
 * @qp: the QP
 *
 * Return: 0, -ENOSPC when the buffer is full (try again after sending it),
 * or another error after which the message was abandoned.
 */
static int kiwi_tx_segment(struct kiwi_qp *qp)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	struct kiwi_tx_msg *m = &tx->cur;
	struct kiwi_ddp_seg_iter save = m->it;
	struct kiwi_ddp_seg seg;
	struct kiwi_ddp_hdr h;
	u32 hlen;
	u8 *ulp;
	int rv;

	if (kiwi_ddp_seg_resize(&m->it, tx->mulpdu) ||
	    !kiwi_ddp_seg_next(&m->it, &seg) ||
	    kiwi_rdmap_seg_hdr(&h, m->op, m->stag, m->msn, &seg)) {
		rv = -EINVAL;
		goto fail;
	}
	hlen = kiwi_ddp_hdr_len(h.tagged ? KIWI_DDP_CTRL_T : 0);
	ulp = kiwi_tx_seg_begin(tx, hlen + seg.len);
	if (!ulp) {
		m->it = save;
		return -ENOSPC;
	}
	kiwi_ddp_hdr_encode(&h, ulp);
	rv = kiwi_tx_payload(m, ulp + hlen, seg.off, seg.len);
	if (!rv)
		rv = kiwi_tx_seg_end(tx, hlen + seg.len);
	if (rv)
		goto fail;
	kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_TX_FPDUS);
	if (seg.last)
		kiwi_tx_msg_end(qp);
	return 0;

fail:
	if (m->rresp || m->idx == U32_MAX) {
		kiwi_qp_fail(qp, KIWI_TERM_ERR_RDMAP_CATASTROPHIC, NULL, 0, 0);
		kiwi_tx_msg_end(qp);
	} else {
		kiwi_tx_wr_failed(qp, m->idx, IB_WC_LOC_PROT_ERR);
	}
	return rv;
}

/* Begin segmenting a message of @len octets (TX). */
int kiwi_tx_msg_begin(struct kiwi_tx_msg *m, struct kiwi_qp_tx *tx,
		      u8 op, u32 len, u64 to)
{
	m->op = op;
	m->len = len;
	m->active = true;
	return kiwi_ddp_seg_init(&m->it, kiwi_rdmap_op_lookup(op)->tagged,
				 len, to, tx->mulpdu);
}

/* The Response to the oldest inbound Read or Atomic, if one waits. */
static bool kiwi_tx_start_rresp(struct kiwi_qp *qp)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	struct kiwi_tx_msg *m = &tx->cur;
	struct kiwi_irq_ent ent;
	unsigned long flags;
	bool have;

	spin_lock_irqsave(&qp->lock, flags);
	have = tx->irq_head != tx->irq_tail;
	if (have) {
		ent = *kiwi_irq_slot(tx, tx->irq_head);
		kiwi_irq_slot(tx, tx->irq_head)->mr = NULL;
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	if (!have)
		return false;
	if (ent.atomic)
		return kiwi_tx_aresp(qp, &ent);
	kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_RREQ_SERVED);
	memset(m, 0, sizeof(*m));
	m->rresp = true;
	m->idx = U32_MAX;
	m->src = ent.mr;
	m->src_to = ent.rreq.src_to;
	m->stag = ent.rreq.sink_stag;
	/* kiwi_rdmap_check_rreq() made sure the sink range cannot wrap. */
	kiwi_tx_msg_begin(m, tx, KIWI_RDMAP_READ_RESP, ent.rreq.size,
			  ent.rreq.sink_to);
	return true;
}

/**
 * kiwi_tx_request_msn - the MSN of the Read or Atomic Request TX frames now
 * @qp: the QP (TX context)
 *
 * Each Request's ORQ entry is made before TX frames it (when TX takes its
 * WR or starts the RTR; an Immediate Data probe's when TX takes the WR
 * whose Write it follows), and no later one is made meanwhile, so it is
 * the newest: it keeps the MSN, by which a Terminate names the Request,
 * and from now on a Response may answer it.
 *
 * Return: the next MSN on QN 1.
 */
u32 kiwi_tx_request_msn(struct kiwi_qp *qp)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	u32 msn = tx->msn_rreq++;
	struct kiwi_orq_ent *e;
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	e = kiwi_orq_slot(tx, tx->orq_tail - 1);
	e->msn = msn;
	e->framed = true;
	spin_unlock_irqrestore(&qp->lock, flags);
	return msn;
}

/* Make @r the current message: a Read Request on QN 1 (TX). */
void kiwi_tx_rreq(struct kiwi_qp *qp, const struct kiwi_rdmap_rreq *r)
{
	struct kiwi_tx_msg *m = &qp->tx.cur;

	kiwi_rdmap_rreq_encode(r, m->rreq);
	m->inline_data = m->rreq;
	m->msn = kiwi_tx_request_msn(qp);
	kiwi_tx_msg_begin(m, &qp->tx, KIWI_RDMAP_READ_REQ,
			  KIWI_RDMAP_RREQ_LEN, 0);
}

static bool kiwi_orq_is(const struct kiwi_orq_ent *e, enum kiwi_orq_kind kind)
{
	switch (kind) {
	case KIWI_ORQ_ATOMIC:
		return e->atomic;
	case KIWI_ORQ_PROBE:
		return e->probe;
	default:
		return !e->rtr && !e->probe && !e->atomic;
	}
}

/**
 * kiwi_tx_orq_refused - the outstanding WR a peer's Terminate refused
 * @qp: the QP
 * @kind: the kind of WR the Terminate refuses
 * @msn: the QN 1 MSN its copied DDP header names
 *       (kiwi_rdmap_term_request_msn()), or NULL
 * @idx: output: the WR's SQ index
 *
 * The peer may serve earlier Requests after refusing a later one, so an
 * MSN names the WR; without one (siw's answer to an opcode it lacks, the
 * refusal of Immediate Data) the oldest WR of the kind is refused. A named
 * Request of another kind, or none outstanding, names no WR: every WR is
 * flushed.
 *
 * Return: true if *@idx names the refused WR.
 */
bool kiwi_tx_orq_refused(struct kiwi_qp *qp, enum kiwi_orq_kind kind,
			 const u32 *msn, u32 *idx)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	const struct kiwi_orq_ent *e;
	unsigned long flags;
	bool found = false;
	u32 i;

	spin_lock_irqsave(&qp->lock, flags);
	for (i = tx->orq_head; tx->orq && i != tx->orq_tail; i++) {
		/*
		 * A peer refuses only Requests that went out (the newest may
		 * not have). A refusal of Immediate Data whose probe TX has
		 * not framed yet flushes the WR instead: before then TX may
		 * still be copying its Write.
		 */
		e = kiwi_orq_sent(tx, i);
		if (!e)
			break;
		if (msn ? e->msn == *msn : kiwi_orq_is(e, kind)) {
			found = kiwi_orq_is(e, kind);
			*idx = e->idx;
			break;
		}
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	return found;
}

/* RFC 6581: the initiator's zero-length RTR message, sent first. */
static bool kiwi_tx_start_rtr(struct kiwi_qp *qp)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	struct kiwi_tx_msg *m = &tx->cur;
	struct kiwi_rdmap_rreq r = { 0 };
	unsigned long flags;
	u8 type = tx->rtr;

	if (!type)
		return false;
	tx->rtr = 0;
	kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_RTR_SENT);
	memset(m, 0, sizeof(*m));
	m->idx = U32_MAX;
	if (type == KIWI_MPA_RTR_WRITE) {
		kiwi_tx_msg_begin(m, tx, KIWI_RDMAP_WRITE, 0, 0);
	} else if (type == KIWI_MPA_RTR_READ) {
		spin_lock_irqsave(&qp->lock, flags);
		*kiwi_orq_slot(tx, tx->orq_tail) =
			(struct kiwi_orq_ent){ .rtr = true };
		tx->orq_tail++;
		spin_unlock_irqrestore(&qp->lock, flags);
		kiwi_tx_rreq(qp, &r);
	} else {
		m->msn = tx->msn_send++;
		kiwi_tx_msg_begin(m, tx, KIWI_RDMAP_SEND, 0, 0);
	}
	return true;
}

/* Pick the next message; false if there is none (or TX must wait). */
static bool kiwi_tx_next_msg(struct kiwi_qp *qp)
{
	return kiwi_tx_start_rtr(qp) || kiwi_tx_start_rresp(qp) ||
	       kiwi_tx_start_sqe(qp);
}

/* Frame the pending Terminate: the last message TX ever sends. */
static bool kiwi_tx_term(struct kiwi_qp *qp)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	unsigned long flags;
	u32 len = 0;
	u8 *ulp;

	/* Checked once per FPDU: whoever queues a Terminate kicks TX after. */
	if (!READ_ONCE(tx->term_pending))
		return false;
	spin_lock_irqsave(&qp->lock, flags);
	if (tx->term_pending) {
		ulp = kiwi_tx_seg_begin(tx, tx->term_len);
		if (ulp) {
			len = tx->term_len;
			memcpy(ulp, tx->term, len);
			tx->term_pending = false;
		}
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	if (!len)
		return false;
	kiwi_tx_msg_put(&tx->cur);
	tx->term_sent = true;
	kiwi_tx_seg_end(tx, len);
	kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_TX_FPDUS);
	return true;
}

/*
 * May TX start new messages? (The Terminate bypasses this.) Asked once per
 * FPDU, without qp->lock: tx.gated is only ever cleared, by
 * kiwi_qp_llp_ungate(), which kicks TX after.
 */
static bool kiwi_tx_open(struct kiwi_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	if (state != IB_QPS_RTS && state != IB_QPS_SQD)
		return false;
	return !READ_ONCE(qp->tx.gated);
}

/*
 * A responder whose MPA Reply is not out yet sends nothing at all. Only
 * ever cleared, by kiwi_qp_llp_reply_sent(), which kicks TX after.
 */
static bool kiwi_tx_held(struct kiwi_qp *qp)
{
	return READ_ONCE(qp->tx.held);
}

/*
 * Fill the buffer with FPDUs, up to @limit octets (a segment that starts
 * below it may end past it). @quick: see kiwi_tx_buf_ready(). Return: 1 if
 * anything was framed, 0 if nothing was to be, -ENOMEM if nothing could
 * be (no buffer: kiwi_tx_buf_ready()).
 */
static int kiwi_tx_fill(struct kiwi_qp *qp, u32 limit, bool quick)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	bool framed = false;
	int rv;

	if (kiwi_tx_held(qp))
		return 0;
	while (!tx->term_sent) {
		if (READ_ONCE(tx->term_pending) && !kiwi_tx_buf_ready(qp, quick))
			return -ENOMEM;
		if (kiwi_tx_term(qp))
			return 1;
		if (!kiwi_tx_open(qp))
			break;
		if (tx->len >= limit)
			break;
		if (!tx->cur.active && !kiwi_tx_next_msg(qp))
			break;
		/* Only a batch's first segment can find no buffer. */
		if (!kiwi_tx_buf_ready(qp, quick))
			return -ENOMEM;
		rv = kiwi_tx_segment(qp);
		if (rv == -ENOSPC)
			break;
		framed |= !rv;
	}
	return framed;
}

/*
 * Of the WRs up to the last message framed, which complete when the LLP took
 * the buffer? Sends and Writes. A Read or an atomic completes when its
 * Response arrived,
 * an Immediate Data probe when its Read was answered, and a local operation
 * (Local Invalidate, fast-register, window bind) when tx_wr.c executed it:
 * a Local Invalidate or an unbind one RCU grace period later
 * (kiwi_sq_execute()), which the buffer handed to TCP must not cut short.
 */
static bool kiwi_tx_done_when_sent(struct kiwi_qp *qp,
				   const struct kiwi_swqe *w)
{
	return !kiwi_sqe_is_read(qp, &w->sqe) &&
	       !kiwi_sqe_is_atomic(qp, &w->sqe) && !w->probe &&
	       w->sqe.opcode != KIWI_WR_LOCAL_INV &&
	       w->sqe.opcode != KIWI_WR_KREG_MR &&
	       w->sqe.opcode != KIWI_WR_BIND_MW;
}

/* The buffer was taken by the LLP: Sends and Writes framed in it are done. */
static void kiwi_tx_flushed(struct kiwi_qp *qp)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	struct kiwi_swqe *w;
	unsigned long flags;
	int res = 0;
	u32 i;

	kiwi_tx_buf_taken(tx);
	if (tx->flushed_to == tx->framed_to)
		return;
	spin_lock_irqsave(&qp->lock, flags);
	for (i = tx->flushed_to; i != tx->framed_to; i++) {
		if (i - qp->sq.cons >= tx->next - qp->sq.cons)
			continue;	/* flushed meanwhile */
		w = &tx->swq[i & (qp->sq.num - 1)];
		if (kiwi_tx_done_when_sent(qp, w))
			w->done = true;
	}
	res = kiwi_sq_retire(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	tx->flushed_to = tx->framed_to;
	kiwi_cq_signal(to_kcq(qp->ibqp.send_cq), res);
}

/* Hand the rest of the buffer to the LLP. Return: 0 when all of it went. */
static int kiwi_tx_push(struct kiwi_qp *qp, struct socket *sock)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	int rv;

	rv = tx->llp->send(tx, sock);
	if (rv < 0)
		return rv;
	tx->sent += rv;
	kiwi_qp_stat_add(&qp->stats, KIWI_STAT_TX_OCTETS, rv);
	return tx->sent == tx->len ? 0 : -EAGAIN;
}

/*
 * Nothing left to frame. After a graceful close request the stream closes
 * once everything went out: in SQD the WRs queued before it (drain_to)
 * and the Read Responses, in TERMINATE the Terminate. The CM resets the
 * stream if that takes longer than drain_timeout.
 */
static void kiwi_tx_idle(struct kiwi_qp *qp)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	unsigned long flags;
	bool drained;

	spin_lock_irqsave(&qp->lock, flags);
	drained = tx->close_req && !tx->closed &&
		  ((qp->state == IB_QPS_SQD && qp->sq.cons == tx->drain_to &&
		    tx->irq_head == tx->irq_tail) ||
		   (qp->state == IB_QPS_SQE && !tx->term_pending));
	if (drained)
		tx->closed = true;
	spin_unlock_irqrestore(&qp->lock, flags);
	if (drained)
		kiwi_qp_close_llp(qp, false);
}

/*
 * Posters need not ring the doorbell (KIWI_RING_F_DOORBELL clear): this
 * run reads the producer index again before it ends (kiwi_tx_park()), or
 * it stalls and the write-space wakeup runs TX. Only while the QP takes
 * sends: in any other state a doorbell has work to do.
 */
static void kiwi_tx_busy(struct kiwi_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	if (qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD)
		kiwi_ring_set_doorbell(&qp->sq, false);
	spin_unlock_irqrestore(&qp->lock, flags);
}

/**
 * kiwi_tx_park - TX found nothing to do: may it stop?
 * @qp: the QP
 * @seen: the SQ producer index read before the last kiwi_tx_fill()
 *
 * Asks posters for the doorbell again (KIWI_RING_F_DOORBELL), then reads
 * the producer index once more. This is one half of a store-buffering
 * pair; libkiwi's post is the other (SendQueue::post_and_ring()):
 *
 *   kernel (here)                    libkiwi
 *   store KIWI_RING_F_DOORBELL       store producer (release)
 *   smp_mb()                         atomic_thread_fence(seq_cst)
 *   load producer                    load flags
 *
 * With a full barrier on each side both loads cannot miss both stores: a
 * WR published as TX goes idle is either seen here (TX goes on) or its
 * poster sees the flag and rings the doorbell. The fill before compared
 * against a producer index no older than @seen, so a changed index means
 * WRs this run may not have looked at.
 *
 * Return: true if TX may stop, false if it must fill again.
 */
static bool kiwi_tx_park(struct kiwi_qp *qp, u32 seen)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	kiwi_ring_set_doorbell(&qp->sq, true);
	spin_unlock_irqrestore(&qp->lock, flags);
	smp_mb();	/* the flag before the producer index */
	if (kiwi_ring_published(&qp->sq) == seen)
		return true;
	kiwi_tx_busy(qp);
	return false;
}

/*
 * Nothing more to frame. Return: true if TX may stop. A worker run after a
 * doorbell's hand-off (tx.linger) first sleeps KIWI_TX_LINGER_US with the
 * doorbell flag still clear, once per stretch in which it found work: the
 * poster, which the worker's wakeup may have preempted, posts its next
 * WRs meanwhile without a doorbell, and TX takes them. Only a wait that
 * brought nothing parks (and ends the lingering).
 */
static bool kiwi_tx_stop(struct kiwi_qp *qp, u32 seen, bool *lingered)
{
	struct kiwi_qp_tx *tx = &qp->tx;

	if (tx->linger && !*lingered) {
		*lingered = true;
		usleep_range(KIWI_TX_LINGER_US, 2 * KIWI_TX_LINGER_US);
		return false;
	}
	if (!kiwi_tx_park(qp, seen))
		return false;
	tx->linger = false;
	return true;
}

/*
 * No chunk to frame into (kiwi_tx_fill() found memory short). A
 * doorbell's run leaves it to the worker; the worker waits a moment and
 * tries again, until it gets one or the QP detaches. Return: true to try
 * again in this run.
 */
static bool kiwi_tx_buf_retry(struct kiwi_qp *qp, bool doorbell)
{
	if (doorbell) {
		kiwi_tx_kick(qp);
		return false;
	}
	msleep(KIWI_TX_BUF_RETRY_MS);
	return true;
}

/*
 * Framing and sending until nothing is left, TCP takes no more (stalled:
 * the write-space wakeup resumes) or the stream is gone (the QP goes to
 * error, whose flush asks for the doorbell: kiwi_qp_flush()).
 *
 * A doorbell's run (@doorbell) sends one batch of at most
 * KIWI_TX_DOORBELL_LEN octets in the poster's system call and leaves
 * whatever it framed after that batch to the work item, queued before the
 * run ends: TX stays busy (KIWI_RING_F_DOORBELL clear), so the poster goes
 * on posting without doorbells while the worker sends (and lingers before
 * it parks, kiwi_tx_stop()). Were the whole message sent in the system
 * call, a poster whose socket never fills would find TX parked after every
 * post and ring for each.
 */
static void kiwi_tx_frame_and_send(struct kiwi_qp *qp, struct socket *sock,
				   bool doorbell)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	u32 limit = doorbell ? KIWI_TX_DOORBELL_LEN : KIWI_TX_BUF_LEN;
	bool pushed = false, lingered = false;
	int filled, rv;
	u32 seen;

	/* Pairs with the barrier in kiwi_tx_kick_now(). */
	smp_store_mb(tx->stalled, false);
	kiwi_tx_busy(qp);
	for (;;) {
		/* Detached meanwhile: detach waits for this run to end. */
		if (READ_ONCE(tx->sock) != sock)
			return;
		if (tx->sent < tx->len) {
			if (doorbell && pushed) {
				tx->linger = true;
				kiwi_tx_kick(qp);
				return;
			}
			pushed = true;
			rv = kiwi_tx_push(qp, sock);
			if (rv == -EAGAIN) {
				kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_TX_STALLS);
				WRITE_ONCE(tx->stalled, true);
				return;
			}
			if (rv < 0) {
				kiwi_qp_close_llp(qp, true);
				return;
			}
			continue;
		}
		if (tx->len)
			kiwi_tx_flushed(qp);
		kiwi_tx_batch(tx, sock);
		seen = kiwi_ring_published(&qp->sq);
		filled = kiwi_tx_fill(qp, limit, doorbell);
		if (filled > 0)
			lingered = false;
		else if (filled < 0 && !kiwi_tx_buf_retry(qp, doorbell))
			return;
		else if (!filled && kiwi_tx_stop(qp, seen, &lingered))
			break;
		cond_resched();
	}
	kiwi_tx_idle(qp);
}

/*
 * One run of TX in this task. Completions made elsewhere while it runs,
 * with the QP out of RTS and SQD, wait for its end (kiwi_sq_retire()):
 * the run marks itself before it first looks at the state.
 */
static void kiwi_tx_run(struct kiwi_qp *qp, struct socket *sock,
			bool doorbell)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	unsigned long flags;
	int res = 0;

	spin_lock_irqsave(&qp->lock, flags);
	tx->run_task = current;
	spin_unlock_irqrestore(&qp->lock, flags);
	kiwi_tx_frame_and_send(qp, sock, doorbell);
	spin_lock_irqsave(&qp->lock, flags);
	tx->run_task = NULL;
	if (tx->retire_held) {
		tx->retire_held = false;
		res = kiwi_sq_retire(qp);
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	kiwi_cq_signal(to_kcq(qp->ibqp.send_cq), res);
}

/* With tx.run_lock held: run TX if the QP is attached. */
static void kiwi_tx_run_locked(struct kiwi_qp *qp, bool doorbell)
{
	struct socket *sock;
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	sock = qp->tx.sock;
	spin_unlock_irqrestore(&qp->lock, flags);
	if (sock)
		kiwi_tx_run(qp, sock, doorbell);
}

/**
 * kiwi_tx_kick_now - run TX in the caller's context
 * @qp: the QP
 *
 * Process context that may sleep (a user QP's doorbell). Sending from the
 * poster's own context saves a wakeup of the TX worker per message, which
 * is most of a small message's latency; a larger one is started here
 * and finished by the worker (kiwi_tx_run()). If TX is running elsewhere,
 * it is kicked instead, so the new work requests are not missed.
 *
 * If TX stopped on a full socket it does nothing: TCP has no room, and
 * the write-space wakeup (kiwi_qp_tx_space()) runs TX, which takes the
 * new work requests from the ring. A run that stalls sets tx.stalled only
 * after TCP set SOCK_NOSPACE, and every run clears it first, so a wakeup
 * that came in between still finds the worker queued behind that run. A
 * run clears it with a full barrier before it reads the ring, and the
 * doorbell reads it after one: either that run sees the new work
 * requests, or the doorbell sees TX running. A poster streaming work
 * requests then costs one failed send per stall, not one per doorbell.
 * (A libkiwi that reads KIWI_RING_F_DOORBELL rings none at all then: a
 * stalled run leaves the flag clear.)
 */
void kiwi_tx_kick_now(struct kiwi_qp *qp)
{
	smp_mb();	/* the poster's ring writes before tx.stalled */
	if (READ_ONCE(qp->tx.stalled)) {
		kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_TX_DOORBELLS_DEFERRED);
		return;
	}
	if (!mutex_trylock(&qp->tx.run_lock)) {
		kiwi_tx_kick(qp);
		return;
	}
	kiwi_tx_run_locked(qp, true);
	mutex_unlock(&qp->tx.run_lock);
}

static void kiwi_tx_work(struct work_struct *work)
{
	struct kiwi_qp *qp = container_of(work, struct kiwi_qp, tx.work);
	bool kernel_qp = !qp->ibqp.uobject;
	unsigned int noio = 0;

	/*
	 * A kernel QP may carry the writeback of dirty pages: what its run
	 * allocates (a new transmit buffer, TCP's skbs) must not start I/O to
	 * reclaim memory, I/O that may wait for this very QP. Failing to get
	 * a buffer only makes TX wait for TCP to give the one it has back.
	 */
	if (kernel_qp)
		noio = memalloc_noio_save();
	mutex_lock(&qp->tx.run_lock);
	kiwi_tx_run_locked(qp, false);
	mutex_unlock(&qp->tx.run_lock);
	if (kernel_qp)
		memalloc_noio_restore(noio);
}
