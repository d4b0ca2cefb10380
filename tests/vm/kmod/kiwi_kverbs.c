// SPDX-License-Identifier: GPL-2.0
/*
 * kiwi_kverbs: the kernel verbs a kernel ULP relies on, driven through
 * ib_core and rdma_cm the way NVMe-oF, NFS/RDMA and iSER drive them, over
 * one RDMA device (a loopback connection through the guest's own address).
 *
 * For each CQ poll context (IB_POLL_DIRECT, SOFTIRQ, WORKQUEUE,
 * UNBOUND_WORKQUEUE) a connected pair of kernel QPs:
 *  - Sends posted from process context, with interrupts off, from a
 *    softirq and from a hard interrupt (hrtimers), every payload checked
 *    on the receiving side, in order;
 *  - fast registration (IB_WR_REG_MR of an ib_map_mr_sg page list whose
 *    first and last pages are partial), an RDMA Write into it and Send
 *    with Invalidate of its rkey (IB_WC_WITH_INVALIDATE and the rkey
 *    reported, the MR then refused), an RDMA Read with Invalidate into a
 *    second fast-reg MR (the data checked, the sink invalidated), Local
 *    Invalidate, a Local Invalidate posted between two Sends in one
 *    ib_post_send, and a
 *    page list longer than max_fast_reg_page_list_len mapped only up to
 *    that length;
 *  - RFC 7306 immediate data: IB_WR_RDMA_WRITE_WITH_IMM into a fast-reg
 *    MR (IB_WC_RECV_RDMA_WITH_IMM, IB_WC_WITH_IMM, the value and the
 *    Write's length reported, the data placed), IB_WR_SEND_WITH_IMM
 *    without payload (IB_WC_RECV, length 0, the value), and one with
 *    payload refused with -EOPNOTSUPP (also inline in 3 SGEs, more than
 *    max_send_sge);
 *  - RFC 7306 atomics: IB_WR_ATOMIC_FETCH_AND_ADD and
 *    IB_WR_ATOMIC_CMP_AND_SWP (a matching and a failing compare) on a word
 *    of a fast-reg MR registered for remote atomics: the completion
 *    opcode, the original value in the result SGE, the target's new
 *    value; the masked forms (IB_WR_MASKED_ATOMIC_FETCH_AND_ADD with a
 *    field boundary, IB_WR_MASKED_ATOMIC_CMP_AND_SWP under its masks):
 *    IB_WC_MASKED_* and the target's value;
 *  - ib_drain_qp with receives outstanding: they flush with
 *    IB_WC_WR_FLUSH_ERR in posted order; Sends and receives posted in the
 *    error state flush in order too.
 * Then two more connections (IB_POLL_SOFTIRQ), the receiving QP on its RQ
 * and on an SRQ: a receive WR whose SGE names no MR completes with
 * IB_WC_LOC_PROT_ERR when a Send arrives for it, and the receive posted
 * behind it on the RQ is flushed. And two (IB_POLL_SOFTIRQ) where the QP
 * fails right after a Local Invalidate, by ib_modify_qp to the error state
 * or by the next WR failing locally: the Local Invalidate completes once
 * (successfully if TX executed it), and every completion, ib_drain_sq's
 * included, comes in posted order. (A grace period before an
 * invalidation's completion is due only while an access to the MR is in
 * flight: 75-teardown's kernel ULP tests hold one open.)
 * Last, three connections whose active QP is on an SRQ and sends into a CQ
 * of KV_SMALL_CQE entries made by ib_create_cq() with an event handler
 * and polled by the test: an SRQ limit armed by ib_modify_srq raises
 * IB_EVENT_SRQ_LIMIT_REACHED once, at the Send that leaves fewer
 * receives, and reads 0 afterwards; ib_resize_cq refuses a size below the
 * completions not polled yet and keeps them, in order, when it grows; the
 * QP moved to the error state (twice) gets IB_EVENT_QP_LAST_WQE_REACHED
 * once. On the second, more signalled Sends than the CQ holds: the CQ
 * reports IB_EVENT_CQ_ERR once, the QP IB_EVENT_QP_FATAL and the error
 * state, and the completions the CQ had room for stay, in order. On the
 * third, one batch of flushed Sends fills the armed CQ's last entry and
 * overruns it: the completion handler runs, and IB_EVENT_CQ_ERR comes.
 * Finally two connections whose clients share one SRQ, PD and CQ (polled
 * by the test): receives the first client's QP took and completed, never
 * polled, go back on the SRQ when that QP is destroyed, and the second
 * client's QP receives into every one of them, in posted order.
 *
 * Loaded by tests/vm/scenarios/64-kernel-verbs.sh: insmod kiwi_kverbs.ko
 * dev=kiwi0 addr=10.77.0.1 port=N. Prints one "ok N - what" or
 * "not ok N - what" line per check and "kiwi_kverbs: N passed, N failed";
 * the module loads only if every check passed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

static char *dev = "kiwi0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device the connection must use");
static char *addr = "10.77.0.1";
module_param(addr, charp, 0444);
MODULE_PARM_DESC(addr, "IPv4 address of that device's net_device");
static ushort port = 19870;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "first TCP port (one per poll context)");

#define KV_MSG		64	/* octets per Send */
#define KV_PER_CTX	16	/* Sends per posting context */
#define KV_NCTX		4	/* process, irqs off, softirq, hardirq */
#define KV_SENDS	(KV_PER_CTX * KV_NCTX)
#define KV_RECVS	(KV_SENDS + 8)
#define KV_QDEPTH	256
#define KV_TIMEOUT	(10 * HZ)
#define KV_BUF		(3 * PAGE_SIZE)	/* fast-reg buffers */
#define KV_OFF		100		/* first page partial */
#define KV_LEN		((u32)(KV_BUF - KV_OFF - 200))	/* last page partial */
#define KV_NEVENTS	32		/* ib_event_type values counted */
#define KV_SMALL_CQE	4		/* the polled send CQ (resize, overrun) */

static unsigned int kv_passed, kv_failed;

#define kv_check(cond, fmt, ...)					\
	({								\
		bool __ok = (cond);					\
		if (__ok)						\
			kv_passed++;					\
		else							\
			kv_failed++;					\
		pr_info("%s %u - " fmt "\n", __ok ? "ok" : "not ok",	\
			kv_passed + kv_failed, ##__VA_ARGS__);		\
		__ok;							\
	})

/**
 * struct kv_end - one side of a connection
 * @id: its rdma_cm id
 * @pd: protection domain
 * @cq: send and receive CQ
 * @qp: the RC QP
 * @srq: its SRQ, if receives go through one
 * @bufs: receive buffers (KV_RECVS * KV_MSG), DMA-mapped
 * @bufs_dma: their DMA address
 * @recv_cqe: receive completion handler
 * @send_cqe: send completion handler
 * @recvs: receives completed successfully
 * @flushed: receives completed with a flush error
 * @flush_order_ok: flushed receives came back in posted order
 * @next_flush: wr_id index of the next expected flushed receive
 * @bad_payload: a received payload did not match its sequence number
 * @got_inv: a receive reported IB_WC_WITH_INVALIDATE
 * @inv_rkey: the rkey it reported
 * @got_imm: a receive reported IB_WC_WITH_IMM
 * @imm: the value it reported
 * @imm_opcode: its opcode
 * @imm_len: its byte_len
 * @sends: send completions seen
 * @send_errs: sends completed with an error status other than flush
 * @all_recvd: completed when @recvs reached the expected count
 * @all_sent: completed when @sends reached the expected count
 * @want_recvs: receives to wait for
 * @want_sends: send completions to wait for
 * @established: the connection is up
 * @event_done: the event this side waited for arrived
 * @event: last rdma_cm event
 * @send_cq: with asynchronous events watched (kv_make_qp()), a CQ the
 *           test polls itself for the QP's send completions; else NULL
 *           and @cq takes them
 * @events: asynchronous events of the QP, its SRQ and @send_cq, counted
 *          by type (up to KV_NEVENTS)
 * @event_wq: woken when an asynchronous event or a @send_cq completion
 *            event arrives
 * @cq_notes: completion events of @send_cq
 * @borrowed: @pd, @cq, @srq and @bufs are another end's (kv_conn.share),
 *            which frees them
 */
struct kv_end {
	struct rdma_cm_id *id;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_srq *srq;
	u8 *bufs;
	u64 bufs_dma;
	struct ib_cqe recv_cqe;
	struct ib_cqe send_cqe;
	atomic_t recvs;
	atomic_t flushed;
	bool flush_order_ok;
	u32 next_flush;
	bool bad_payload;
	bool got_inv;
	u32 inv_rkey;
	bool got_imm;
	__be32 imm;
	enum ib_wc_opcode imm_opcode;
	u32 imm_len;
	atomic_t sends;
	atomic_t send_errs;
	struct completion all_recvd;
	struct completion all_sent;
	int want_recvs;
	int want_sends;
	struct completion established;
	struct completion event_done;
	int event;
	struct ib_cq *send_cq;
	atomic_t events[KV_NEVENTS];
	wait_queue_head_t event_wq;
	atomic_t cq_notes;
	bool borrowed;
};

/**
 * struct kv_wr_wait - a signalled WR whose completion a test waits for
 * @cqe: its completion handler
 * @status: the completion status
 * @opcode: the completion opcode
 * @done: completed
 */
struct kv_wr_wait {
	struct ib_cqe cqe;
	enum ib_wc_status status;
	enum ib_wc_opcode opcode;
	struct completion done;
};

/**
 * struct kv_seq - send WRs whose completions must come in posted order;
 * the first is a Local Invalidate
 * @linv_status: its completion status
 * @fail_status: the completion status of the second WR
 * @in_order: every completion came in posted order
 * @next: place in posted order of the next completion expected
 */
struct kv_seq {
	int linv_status;
	int fail_status;
	bool in_order;
	u32 next;
};

/**
 * struct kv_seq_wr - one WR of a &struct kv_seq
 * @cqe: its completion handler
 * @seq: the sequence
 * @pos: its place in posted order
 */
struct kv_seq_wr {
	struct ib_cqe cqe;
	struct kv_seq *seq;
	u32 pos;
};

#define KV_SEQ_WRS	3

/**
 * struct kv_conn - a loopback connection and its listener
 * @poll: the poll context of both CQs
 * @srq: the active side receives through an SRQ
 * @events: the active side's QP, SRQ and a send CQ of its own report
 *          asynchronous events (kv_make_qp())
 * @srq_wr: receives the active side's SRQ takes (0: KV_QDEPTH)
 * @share: the active side's QP uses this end's PD, CQ, SRQ and receive
 *         buffers instead of its own (NULL: its own)
 * @listen: the listening id
 * @cli: the active side
 * @srv: the passive side (its id comes with the connect request)
 * @srv_ready: the passive side's QP exists
 * @bad_recv: the bad receive and the one behind it (kv_test_bad_recv());
 *            here, not on a stack, as they may complete as late as the
 *            QP's destruction
 * @seq: the WRs of kv_test_linv_fail(); here for the same reason
 * @seq_wr: their completion handlers
 */
struct kv_conn {
	enum ib_poll_context poll;
	bool srq;
	bool events;
	u32 srq_wr;
	struct kv_end *share;
	struct rdma_cm_id *listen;
	struct kv_end cli;
	struct kv_end srv;
	struct completion srv_ready;
	struct kv_wr_wait bad_recv[2];
	struct kv_seq seq;
	struct kv_seq_wr seq_wr[KV_SEQ_WRS];
};

static void kv_end_init(struct kv_end *e)
{
	memset(e, 0, sizeof(*e));
	init_completion(&e->all_recvd);
	init_completion(&e->all_sent);
	init_completion(&e->established);
	init_completion(&e->event_done);
	init_waitqueue_head(&e->event_wq);
	e->flush_order_ok = true;
}

/* The payload of Send @seq: its number and a pattern derived from it. */
static void kv_fill(u8 *p, u32 seq)
{
	u32 i;

	memcpy(p, &seq, sizeof(seq));
	for (i = sizeof(seq); i < KV_MSG; i++)
		p[i] = (u8)(seq * 7 + i);
}

static bool kv_payload_ok(const u8 *p, u32 seq)
{
	u8 want[KV_MSG];

	kv_fill(want, seq);
	return !memcmp(p, want, KV_MSG);
}

static void kv_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kv_end *e = container_of(wc->wr_cqe, struct kv_end, recv_cqe);
	u32 slot;

	if (wc->status == IB_WC_WR_FLUSH_ERR) {
		atomic_inc(&e->flushed);
		return;
	}
	if (wc->status != IB_WC_SUCCESS) {
		e->bad_payload = true;
		return;
	}
	slot = atomic_read(&e->recvs);
	if (wc->wc_flags & IB_WC_WITH_INVALIDATE) {
		e->got_inv = true;
		e->inv_rkey = wc->ex.invalidate_rkey;
	} else if (wc->wc_flags & IB_WC_WITH_IMM) {
		e->got_imm = true;
		e->imm = wc->ex.imm_data;
		e->imm_opcode = wc->opcode;
		e->imm_len = wc->byte_len;
	} else if (wc->byte_len != KV_MSG ||
		   !kv_payload_ok(e->bufs + (slot % KV_RECVS) * KV_MSG, slot)) {
		e->bad_payload = true;
	}
	if (atomic_inc_return(&e->recvs) == e->want_recvs)
		complete(&e->all_recvd);
}

static void kv_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kv_end *e = container_of(wc->wr_cqe, struct kv_end, send_cqe);

	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		atomic_inc(&e->send_errs);
	if (atomic_inc_return(&e->sends) == e->want_sends)
		complete(&e->all_sent);
}

/*
 * Flushed receives of the drain check carry their index in a cqe of
 * their own, so the order they complete in is visible.
 */
struct kv_flush_wr {
	struct ib_cqe cqe;
	struct kv_end *end;
	u32 idx;
};

static void kv_flush_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kv_flush_wr *f = container_of(wc->wr_cqe, struct kv_flush_wr,
					     cqe);
	struct kv_end *e = f->end;

	if (wc->status != IB_WC_WR_FLUSH_ERR || f->idx != e->next_flush)
		e->flush_order_ok = false;
	e->next_flush++;
	atomic_inc(&e->flushed);
}

/* Post receive @slot of @e's buffers on its QP or, @on_srq, its SRQ. */
static int kv_post_recv(struct kv_end *e, u32 slot, bool on_srq)
{
	struct ib_sge sge = {
		.addr = e->bufs_dma + (slot % KV_RECVS) * KV_MSG,
		.length = KV_MSG,
		.lkey = e->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &e->recv_cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};

	if (on_srq)
		return ib_post_srq_recv(e->srq, &wr, NULL);
	return ib_post_recv(e->qp, &wr, NULL);
}

/*
 * Post @wr, whose wr_cqe or wr_id is set, as a signalled inline Send of
 * message @seq, built in @scratch.
 */
static int kv_post_send_wr(struct kv_end *e, struct ib_send_wr *wr, u32 seq,
			   u8 *scratch)
{
	struct ib_sge sge = {
		.addr = (u64)(uintptr_t)scratch,
		.length = KV_MSG,
	};

	wr->opcode = IB_WR_SEND;
	wr->send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE;
	wr->sg_list = &sge;
	wr->num_sge = 1;
	kv_fill(scratch, seq);
	return ib_post_send(e->qp, wr, NULL);
}

static int kv_post_send(struct kv_end *e, u32 seq, u8 *scratch)
{
	struct ib_send_wr wr = { .wr_cqe = &e->send_cqe };

	return kv_post_send_wr(e, &wr, seq, scratch);
}

/* --- connection setup --- */

/* An asynchronous event of a QP, SRQ or CQ of @ctx, a &struct kv_end. */
static void kv_async_event(struct ib_event *ev, void *ctx)
{
	struct kv_end *e = ctx;

	if (ev->event < KV_NEVENTS)
		atomic_inc(&e->events[ev->event]);
	wake_up(&e->event_wq);
}

/* A completion event of the send CQ the test polls itself. */
static void kv_send_cq_note(struct ib_cq *cq, void *ctx)
{
	struct kv_end *e = ctx;

	atomic_inc(&e->cq_notes);
	wake_up(&e->event_wq);
}

/*
 * @e's QP: RC, on @e's CQ, receiving from @e's SRQ if it has one. With
 * asynchronous events watched (kv_make_qp()), the QP, its SRQ and a send
 * CQ of KV_SMALL_CQE entries made by ib_create_cq() (polled by the test,
 * not by ib_core) report to kv_async_event().
 */
static void kv_qp_attr(struct kv_end *e, struct ib_qp_init_attr *attr)
{
	*attr = (struct ib_qp_init_attr){
		.cap = {
			.max_send_wr = KV_QDEPTH,
			.max_recv_wr = e->srq ? 0 : KV_QDEPTH,
			.max_send_sge = 2,
			.max_recv_sge = e->srq ? 0 : 1,
			.max_inline_data = KV_MSG,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.send_cq = e->send_cq ?: e->cq,
		.recv_cq = e->cq,
		.srq = e->srq,
	};
	if (e->send_cq) {
		attr->event_handler = kv_async_event;
		attr->qp_context = e;
	}
}

/* @e's QP uses @share's PD, CQ, SRQ and receive buffers (kv_conn.share). */
static int kv_borrow_qp(struct kv_end *e, struct rdma_cm_id *id,
			struct kv_end *share)
{
	struct ib_qp_init_attr attr;
	int rv;

	e->borrowed = true;
	e->pd = share->pd;
	e->cq = share->cq;
	e->srq = share->srq;
	e->bufs = share->bufs;
	e->bufs_dma = share->bufs_dma;
	kv_qp_attr(e, &attr);
	rv = rdma_create_qp(id, e->pd, &attr);
	if (!rv)
		e->qp = id->qp;
	return rv;
}

static int kv_make_qp(struct kv_end *e, struct rdma_cm_id *id,
		      enum ib_poll_context poll, bool srq, bool events,
		      u32 srq_wr)
{
	struct ib_srq_init_attr sattr = {
		.attr = { .max_wr = srq_wr ?: KV_QDEPTH, .max_sge = 1 },
		.srq_type = IB_SRQT_BASIC,
	};
	struct ib_cq_init_attr cattr = { .cqe = KV_SMALL_CQE };
	struct ib_qp_init_attr attr;
	int rv;

	e->pd = ib_alloc_pd(id->device, 0);
	if (IS_ERR(e->pd))
		return PTR_ERR(e->pd);
	e->cq = ib_alloc_cq(id->device, e, 2 * KV_QDEPTH + 8, 0, poll);
	if (IS_ERR(e->cq))
		return PTR_ERR(e->cq);
	if (events) {
		e->send_cq = ib_create_cq(id->device, kv_send_cq_note,
					  kv_async_event, e, &cattr);
		if (IS_ERR(e->send_cq))
			return PTR_ERR(e->send_cq);
		sattr.event_handler = kv_async_event;
		sattr.srq_context = e;
	}
	if (srq) {
		e->srq = ib_create_srq(e->pd, &sattr);
		if (IS_ERR(e->srq))
			return PTR_ERR(e->srq);
	}
	kv_qp_attr(e, &attr);
	rv = rdma_create_qp(id, e->pd, &attr);
	if (rv)
		return rv;
	e->qp = id->qp;
	e->bufs = kzalloc(KV_RECVS * KV_MSG, GFP_KERNEL);
	if (!e->bufs)
		return -ENOMEM;
	e->bufs_dma = ib_dma_map_single(id->device, e->bufs,
					KV_RECVS * KV_MSG, DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(id->device, e->bufs_dma))
		return -ENOMEM;
	e->recv_cqe.done = kv_recv_done;
	e->send_cqe.done = kv_send_done;
	return 0;
}

/* Free what kv_make_qp() made on @id (the id itself stays). */
static void kv_free_res(struct kv_end *e, struct rdma_cm_id *id)
{
	if (e->borrowed) {
		if (e->qp)
			rdma_destroy_qp(id);
		e->qp = NULL;
		return;
	}
	if (e->bufs_dma)
		ib_dma_unmap_single(id->device, e->bufs_dma, KV_RECVS * KV_MSG,
				    DMA_FROM_DEVICE);
	if (e->qp)
		rdma_destroy_qp(id);
	if (!IS_ERR_OR_NULL(e->srq))
		ib_destroy_srq(e->srq);
	if (!IS_ERR_OR_NULL(e->send_cq))
		ib_destroy_cq(e->send_cq);
	if (!IS_ERR_OR_NULL(e->cq))
		ib_free_cq(e->cq);
	if (!IS_ERR_OR_NULL(e->pd))
		ib_dealloc_pd(e->pd);
	kfree(e->bufs);
	e->bufs_dma = 0;
	e->qp = NULL;
	e->srq = NULL;
	e->send_cq = NULL;
	e->cq = NULL;
	e->pd = NULL;
	e->bufs = NULL;
}

static void kv_free_end(struct kv_end *e)
{
	if (!e->id)
		return;
	kv_free_res(e, e->id);
	rdma_destroy_id(e->id);
}

static int kv_srv_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct kv_conn *c = id->context;
	struct rdma_conn_param param = {
		.responder_resources = 4,
		.initiator_depth = 4,
	};
	int i;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		if (c->srv.id)
			return -EBUSY;
		c->srv.id = id;
		if (kv_make_qp(&c->srv, id, c->poll, false, false, 0))
			goto fail;
		for (i = 0; i < KV_RECVS; i++)
			if (kv_post_recv(&c->srv, i, false))
				goto fail;
		complete(&c->srv_ready);
		if (rdma_accept(id, &param))
			goto fail;
		return 0;
	case RDMA_CM_EVENT_ESTABLISHED:
		complete(&c->srv.established);
		return 0;
	default:
		if (id == c->listen)
			return 0;
		c->srv.event = ev->event;
		complete(&c->srv.event_done);
		return 0;
	}
fail:
	/* The id is destroyed by rdma_cm when the handler fails. */
	kv_free_res(&c->srv, id);
	c->srv.id = NULL;
	complete(&c->srv_ready);
	return -EIO;
}

static int kv_cli_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct kv_conn *c = id->context;

	c->cli.event = ev->event;
	if (ev->event == RDMA_CM_EVENT_ESTABLISHED)
		complete(&c->cli.established);
	else
		complete(&c->cli.event_done);
	return 0;
}

/* Wait for the client's next event; true if it was @want. */
static bool kv_cli_wait(struct kv_conn *c, int want)
{
	if (!wait_for_completion_timeout(&c->cli.event_done, KV_TIMEOUT))
		return false;
	reinit_completion(&c->cli.event_done);
	return c->cli.event == want;
}

static int kv_connect(struct kv_conn *c, struct sockaddr_in *sa)
{
	struct rdma_conn_param param = {
		.responder_resources = 4,
		.initiator_depth = 4,
	};
	int rv;

	c->listen = rdma_create_id(&init_net, kv_srv_handler, c, RDMA_PS_TCP,
				   IB_QPT_RC);
	if (IS_ERR(c->listen))
		return PTR_ERR(c->listen);
	rv = rdma_bind_addr(c->listen, (struct sockaddr *)sa);
	if (!rv)
		rv = rdma_listen(c->listen, 4);
	if (rv)
		return rv;
	if (strcmp(dev_name(&c->listen->device->dev), dev))
		return -ENODEV;
	c->cli.id = rdma_create_id(&init_net, kv_cli_handler, c, RDMA_PS_TCP,
				   IB_QPT_RC);
	if (IS_ERR(c->cli.id)) {
		rv = PTR_ERR(c->cli.id);
		c->cli.id = NULL;
		return rv;
	}
	rv = rdma_resolve_addr(c->cli.id, NULL, (struct sockaddr *)sa, 2000);
	if (rv || !kv_cli_wait(c, RDMA_CM_EVENT_ADDR_RESOLVED))
		return rv ?: -EHOSTUNREACH;
	rv = rdma_resolve_route(c->cli.id, 2000);
	if (rv || !kv_cli_wait(c, RDMA_CM_EVENT_ROUTE_RESOLVED))
		return rv ?: -EHOSTUNREACH;
	if (c->share)
		rv = kv_borrow_qp(&c->cli, c->cli.id, c->share);
	else
		rv = kv_make_qp(&c->cli, c->cli.id, c->poll, c->srq,
				c->events, c->srq_wr);
	if (rv)
		return rv;
	rv = rdma_connect(c->cli.id, &param);
	if (rv)
		return rv;
	if (!wait_for_completion_timeout(&c->cli.established, KV_TIMEOUT) ||
	    !wait_for_completion_timeout(&c->srv_ready, KV_TIMEOUT) ||
	    !c->srv.id ||
	    !wait_for_completion_timeout(&c->srv.established, KV_TIMEOUT))
		return -ETIMEDOUT;
	return 0;
}

/* --- waiting for completions in any poll context --- */

/* Wait for @done; a DIRECT CQ is polled by the waiter itself. */
static bool kv_wait(struct kv_conn *c, struct completion *done)
{
	unsigned long end = jiffies + KV_TIMEOUT;

	if (c->poll != IB_POLL_DIRECT)
		return wait_for_completion_timeout(done, KV_TIMEOUT);
	while (!try_wait_for_completion(done)) {
		ib_process_cq_direct(c->cli.cq, -1);
		ib_process_cq_direct(c->srv.cq, -1);
		if (time_after(jiffies, end))
			return false;
		usleep_range(100, 200);
	}
	return true;
}

/* --- Sends from every context --- */

/**
 * struct kv_poster - posts KV_PER_CTX Sends from a timer's context
 * @timer: hrtimer in softirq or hardirq mode
 * @end: the sending side
 * @first: sequence number of the first Send
 * @scratch: payload staging (inline Sends copy it at post time)
 * @errors: failed posts
 * @done: all posted
 */
struct kv_poster {
	struct hrtimer timer;
	struct kv_end *end;
	u32 first;
	u8 scratch[KV_MSG];
	int errors;
	struct completion done;
};

static void kv_post_batch(struct kv_end *e, u32 first, u8 *scratch,
			  int *errors)
{
	u32 i;

	for (i = 0; i < KV_PER_CTX; i++)
		if (kv_post_send(e, first + i, scratch))
			(*errors)++;
}

static enum hrtimer_restart kv_timer_fn(struct hrtimer *t)
{
	struct kv_poster *p = container_of(t, struct kv_poster, timer);

	kv_post_batch(p->end, p->first, p->scratch, &p->errors);
	complete(&p->done);
	return HRTIMER_NORESTART;
}

static bool kv_post_from_timer(struct kv_end *e, u32 first,
			       enum hrtimer_mode mode)
{
	struct kv_poster *p = kzalloc(sizeof(*p), GFP_KERNEL);
	bool ok;

	if (!p)
		return false;
	p->end = e;
	p->first = first;
	init_completion(&p->done);
	hrtimer_init(&p->timer, CLOCK_MONOTONIC, mode);
	p->timer.function = kv_timer_fn;
	hrtimer_start(&p->timer, ns_to_ktime(1000), mode);
	ok = wait_for_completion_timeout(&p->done, KV_TIMEOUT);
	if (!ok)
		hrtimer_cancel(&p->timer);
	ok = ok && !p->errors;
	kfree(p);
	return ok;
}

static void kv_test_sends(struct kv_conn *c, const char *pc)
{
	struct kv_end *e = &c->cli;
	u8 scratch[KV_MSG];
	unsigned long flags;
	int errors = 0;

	c->srv.want_recvs = KV_SENDS;
	e->want_sends = KV_SENDS;
	kv_post_batch(e, 0, scratch, &errors);
	kv_check(!errors, "%s: %d Sends posted from process context", pc,
		 KV_PER_CTX);
	errors = 0;
	local_irq_save(flags);
	kv_post_batch(e, KV_PER_CTX, scratch, &errors);
	local_irq_restore(flags);
	kv_check(!errors, "%s: %d Sends posted with interrupts off", pc,
		 KV_PER_CTX);
	kv_check(kv_post_from_timer(e, 2 * KV_PER_CTX, HRTIMER_MODE_REL_SOFT),
		 "%s: %d Sends posted from a softirq", pc, KV_PER_CTX);
	kv_check(kv_post_from_timer(e, 3 * KV_PER_CTX, HRTIMER_MODE_REL_HARD),
		 "%s: %d Sends posted from a hard interrupt", pc, KV_PER_CTX);
	kv_check(kv_wait(c, &e->all_sent) && !atomic_read(&e->send_errs),
		 "%s: every Send completed successfully (%d of %d)", pc,
		 atomic_read(&e->sends), KV_SENDS);
	kv_check(kv_wait(c, &c->srv.all_recvd) && !c->srv.bad_payload,
		 "%s: every Send received intact and in order (%d of %d)", pc,
		 atomic_read(&c->srv.recvs), KV_SENDS);
}

/* --- fast registration and invalidation --- */

static void kv_wr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kv_wr_wait *w = container_of(wc->wr_cqe, struct kv_wr_wait,
					    cqe);

	w->status = wc->status;
	w->opcode = wc->opcode;
	complete(&w->done);
}

static void kv_wr_wait_init(struct kv_wr_wait *w)
{
	w->cqe.done = kv_wr_done;
	w->status = -1;
	init_completion(&w->done);
}

/* Post @wr (signalled, completing into @w) and wait for it. */
static bool kv_post_wait(struct kv_conn *c, struct kv_end *e,
			 struct ib_send_wr *wr, struct kv_wr_wait *w)
{
	kv_wr_wait_init(w);
	wr->wr_cqe = &w->cqe;
	wr->send_flags |= IB_SEND_SIGNALED;
	if (ib_post_send(e->qp, wr, NULL))
		return false;
	return kv_wait(c, &w->done) && w->status == IB_WC_SUCCESS;
}

/**
 * struct kv_frmr - a fast-reg MR over a buffer of KV_BUF octets
 * @mr: the MR
 * @buf: the buffer (page-aligned, KV_BUF octets)
 * @sg: its pages
 */
struct kv_frmr {
	struct ib_mr *mr;
	u8 *buf;
	struct scatterlist sg[KV_BUF / PAGE_SIZE];
};

static int kv_frmr_alloc(struct kv_frmr *f, struct kv_end *e)
{
	struct ib_device *ibdev = e->id->device;
	int n = KV_BUF / PAGE_SIZE, i;

	f->buf = (u8 *)__get_free_pages(GFP_KERNEL | __GFP_ZERO,
					get_order(KV_BUF));
	if (!f->buf)
		return -ENOMEM;
	sg_init_table(f->sg, n);
	for (i = 0; i < n; i++)
		sg_set_page(&f->sg[i], virt_to_page(f->buf + i * PAGE_SIZE),
			    PAGE_SIZE, 0);
	if (ib_dma_map_sg(ibdev, f->sg, n, DMA_BIDIRECTIONAL) != n)
		return -ENOMEM;
	f->mr = ib_alloc_mr(e->pd, IB_MR_TYPE_MEM_REG, n);
	return PTR_ERR_OR_ZERO(f->mr);
}

static void kv_frmr_free(struct kv_frmr *f, struct kv_end *e)
{
	if (!IS_ERR_OR_NULL(f->mr))
		ib_dereg_mr(f->mr);
	if (f->sg[0].dma_address)
		ib_dma_unmap_sg(e->id->device, f->sg, KV_BUF / PAGE_SIZE,
				DMA_BIDIRECTIONAL);
	free_pages((unsigned long)f->buf, get_order(KV_BUF));
}

/* Map [KV_OFF, KV_OFF + KV_LEN) of the buffer and register it. */
static bool kv_frmr_reg(struct kv_conn *c, struct kv_end *e,
			struct kv_frmr *f, int access)
{
	unsigned int off = KV_OFF;
	struct ib_reg_wr reg = {
		.wr.opcode = IB_WR_REG_MR,
		.mr = f->mr,
		.access = access,
	};
	struct kv_wr_wait w;
	int n = KV_BUF / PAGE_SIZE, mapped;

	/*
	 * The last page is partial: the list ends 200 octets early.
	 * ib_map_mr_sg reads the mapped length, sg_dma_len, not ->length.
	 */
	sg_dma_len(&f->sg[n - 1]) = PAGE_SIZE - 200;
	mapped = ib_map_mr_sg(f->mr, f->sg, n, &off, PAGE_SIZE);
	sg_dma_len(&f->sg[n - 1]) = PAGE_SIZE;
	if (mapped != n || f->mr->length != KV_LEN ||
	    offset_in_page(f->mr->iova) != KV_OFF)
		return false;
	ib_update_fast_reg_key(f->mr, ib_inc_rkey(f->mr->rkey));
	reg.key = f->mr->rkey;
	return kv_post_wait(c, e, &reg.wr, &w);
}

/*
 * The client fast-registers a partial-page buffer for remote write, the
 * server writes into it and sends with invalidate; the client sees the
 * invalidated rkey, the MR is refused afterwards.
 */
static void kv_test_frmr_write_inv(struct kv_conn *c, const char *pc,
				   struct kv_frmr *f, u8 *src)
{
	struct kv_end *s = &c->srv;
	struct ib_sge sge = {
		.addr = (u64)(uintptr_t)src,
		.length = KV_LEN,
		.lkey = s->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr.opcode = IB_WR_RDMA_WRITE,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
	};
	struct ib_send_wr inv = {
		.opcode = IB_WR_SEND_WITH_INV,
	};
	struct kv_wr_wait w;
	u32 i;

	for (i = 0; i < KV_LEN; i++)
		src[i] = (u8)(i * 13 + 1);
	if (!kv_check(kv_frmr_reg(c, &c->cli, f, IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_WRITE),
		      "%s: the locally invalidated MR registers again: partial first and last pages",
		      pc))
		return;
	wr.remote_addr = f->mr->iova;
	wr.rkey = f->mr->rkey;
	kv_check(kv_post_wait(c, s, &wr.wr, &w) &&
		 !memcmp(f->buf + KV_OFF, src, KV_LEN) &&
		 !f->buf[KV_OFF - 1] && !f->buf[KV_OFF + KV_LEN],
		 "%s: RDMA Write placed %u octets exactly into the fast-reg MR",
		 pc, KV_LEN);
	c->cli.want_recvs = atomic_read(&c->cli.recvs) + 1;
	reinit_completion(&c->cli.all_recvd);
	kv_post_recv(&c->cli, 0, false);
	inv.ex.invalidate_rkey = f->mr->rkey;
	kv_check(kv_post_wait(c, s, &inv, &w) &&
		 kv_wait(c, &c->cli.all_recvd) && c->cli.got_inv &&
		 c->cli.inv_rkey == f->mr->rkey,
		 "%s: Send with Invalidate reported IB_WC_WITH_INVALIDATE of rkey 0x%x",
		 pc, f->mr->rkey);
	/* Only an invalid MR can be fast-registered again. */
	kv_check(kv_frmr_reg(c, &c->cli, f, IB_ACCESS_LOCAL_WRITE),
		 "%s: the remotely invalidated MR registers again", pc);
}

/*
 * The client reads the server's registered buffer into its own fast-reg
 * MR with Read with Invalidate (rdma_rw's iWARP Read), which must leave
 * the sink invalid; then Local Invalidate of an already valid MR.
 */
static void kv_test_read_inv(struct kv_conn *c, const char *pc,
			     struct kv_frmr *sink, struct kv_frmr *src)
{
	struct kv_end *e = &c->cli;
	struct ib_rdma_wr rd = {
		.wr.opcode = IB_WR_RDMA_READ_WITH_INV,
		.wr.num_sge = 1,
	};
	struct ib_send_wr linv = {
		.opcode = IB_WR_LOCAL_INV,
	};
	struct ib_sge sge;
	struct kv_wr_wait w;
	u32 i;

	for (i = 0; i < KV_BUF; i++)
		src->buf[i] = (u8)(i * 29 + 3);
	if (!kv_check(kv_frmr_reg(c, &c->srv, src, IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_READ) &&
		      kv_frmr_reg(c, e, sink, IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_WRITE),
		      "%s: source and sink fast-registered", pc))
		return;
	sge.addr = sink->mr->iova;
	sge.length = KV_LEN;
	sge.lkey = sink->mr->lkey;
	rd.wr.sg_list = &sge;
	rd.wr.ex.invalidate_rkey = sink->mr->lkey;
	rd.remote_addr = src->mr->iova;
	rd.rkey = src->mr->rkey;
	kv_check(kv_post_wait(c, e, &rd.wr, &w) &&
		 !memcmp(sink->buf + KV_OFF, src->buf + KV_OFF, KV_LEN),
		 "%s: RDMA Read with Invalidate read %u octets", pc, KV_LEN);
	/* Only an invalid MR can be fast-registered again. */
	kv_check(kv_frmr_reg(c, e, sink, IB_ACCESS_LOCAL_WRITE |
			     IB_ACCESS_REMOTE_WRITE),
		 "%s: the Read with Invalidate left its sink invalid (it registers again)",
		 pc);
	linv.ex.invalidate_rkey = sink->mr->rkey;
	kv_check(kv_post_wait(c, e, &linv, &w),
		 "%s: Local Invalidate of the sink", pc);
}

/*
 * A Local Invalidate between two Sends in one post, as the storage ULPs
 * batch them: it completes successfully, and the MR is invalid
 * (kv_test_frmr_write_inv() registers it again next). No access holds the
 * MR, so no grace period is due; one in flight makes it wait (75-teardown,
 * kernel ULP inval).
 */
static void kv_test_linv_batch(struct kv_conn *c, const char *pc,
			       struct kv_frmr *f)
{
	struct kv_end *e = &c->cli, *s = &c->srv;
	u8 p0[KV_MSG], p1[KV_MSG];
	struct ib_sge sg0 = { .addr = (u64)(uintptr_t)p0, .length = KV_MSG };
	struct ib_sge sg1 = { .addr = (u64)(uintptr_t)p1, .length = KV_MSG };
	struct ib_send_wr send1 = {
		.wr_cqe = &e->send_cqe,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_INLINE,
		.sg_list = &sg1,
		.num_sge = 1,
	};
	struct ib_send_wr linv = {
		.next = &send1,
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_send_wr send0 = {
		.next = &linv,
		.wr_cqe = &e->send_cqe,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_INLINE,
		.sg_list = &sg0,
		.num_sge = 1,
	};
	u32 seq = atomic_read(&s->recvs);
	struct kv_wr_wait w;
	bool ok;

	if (!kv_check(kv_frmr_reg(c, e, f, IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_WRITE),
		      "%s: MR registered for the batched Local Invalidate", pc))
		return;
	kv_fill(p0, seq);
	kv_fill(p1, seq + 1);
	s->want_recvs = seq + 2;
	reinit_completion(&s->all_recvd);
	kv_wr_wait_init(&w);
	linv.wr_cqe = &w.cqe;
	linv.ex.invalidate_rkey = f->mr->rkey;
	ok = !ib_post_send(e->qp, &send0, NULL) && kv_wait(c, &w.done);
	kv_check(ok && w.status == IB_WC_SUCCESS,
		 "%s: Local Invalidate between two Sends completed (status %d)",
		 pc, w.status);
	kv_check(kv_wait(c, &s->all_recvd) && !s->bad_payload,
		 "%s: both Sends around the Local Invalidate received", pc);
}

/* A page list longer than the device's limit maps only that many pages. */
static void kv_test_frmr_limit(struct kv_end *e)
{
	u32 max = e->id->device->attrs.max_fast_reg_page_list_len;
	struct scatterlist *sg;
	struct ib_mr *mr;
	unsigned int off = 0;
	void *page;
	int n, i;

	mr = ib_alloc_mr(e->pd, IB_MR_TYPE_MEM_REG, max + 1);
	kv_check(IS_ERR(mr), "ib_alloc_mr above max_fast_reg_page_list_len (%u) fails",
		 max);
	if (!IS_ERR(mr))
		ib_dereg_mr(mr);
	mr = ib_alloc_mr(e->pd, IB_MR_TYPE_MEM_REG, max);
	sg = kcalloc(max + 4, sizeof(*sg), GFP_KERNEL);
	page = (void *)__get_free_page(GFP_KERNEL);
	if (IS_ERR(mr) || !sg || !page) {
		kv_check(false, "ib_alloc_mr of max_fast_reg_page_list_len pages");
		goto out;
	}
	sg_init_table(sg, max + 4);
	for (i = 0; i < max + 4; i++) {
		sg_set_page(&sg[i], virt_to_page(page), PAGE_SIZE, 0);
		sg_dma_address(&sg[i]) = (u64)(uintptr_t)page;
		sg_dma_len(&sg[i]) = PAGE_SIZE;
	}
	n = ib_map_mr_sg(mr, sg, max + 4, &off, PAGE_SIZE);
	kv_check(n == max, "ib_map_mr_sg of %u pages maps %d, the limit %u",
		 max + 4, n, max);
out:
	free_page((unsigned long)page);
	kfree(sg);
	if (!IS_ERR(mr))
		ib_dereg_mr(mr);
}

/* Post one receive on the client and wait for its immediate completion. */
static bool kv_imm_recv(struct kv_conn *c, struct kv_end *s,
			struct ib_send_wr *wr)
{
	struct kv_wr_wait w;

	c->cli.got_imm = false;
	c->cli.want_recvs = atomic_read(&c->cli.recvs) + 1;
	reinit_completion(&c->cli.all_recvd);
	kv_post_recv(&c->cli, 0, false);
	return kv_post_wait(c, s, wr, &w) && kv_wait(c, &c->cli.all_recvd) &&
	       c->cli.got_imm;
}

/*
 * RFC 7306: the server writes with immediate data into the client's
 * fast-reg MR, then sends immediate data alone (solicited); a Send with
 * immediate data and payload has no RFC 7306 form and is refused.
 */
static void kv_test_imm(struct kv_conn *c, const char *pc, struct kv_frmr *f,
			u8 *src)
{
	struct kv_end *s = &c->srv, *r = &c->cli;
	struct ib_sge sge = {
		.addr = (u64)(uintptr_t)src,
		.length = KV_LEN,
		.lkey = s->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.wr.ex.imm_data = cpu_to_be32(0xc0ffee00 | c->poll),
	};
	struct ib_send_wr imm = {
		.opcode = IB_WR_SEND_WITH_IMM,
		.send_flags = IB_SEND_SOLICITED,
		.ex.imm_data = cpu_to_be32(0x5eed0000 | c->poll),
	};
	struct ib_sge three[3];
	u32 i;

	for (i = 0; i < KV_LEN; i++)
		src[i] = (u8)(i * 7 + 3);
	if (!kv_check(kv_frmr_reg(c, r, f, IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_WRITE),
		      "%s: fast-reg MR for RDMA Write with Immediate", pc))
		return;
	wr.remote_addr = f->mr->iova;
	wr.rkey = f->mr->rkey;
	kv_check(kv_imm_recv(c, s, &wr.wr) &&
		 r->imm_opcode == IB_WC_RECV_RDMA_WITH_IMM &&
		 r->imm == wr.wr.ex.imm_data && r->imm_len == KV_LEN &&
		 !memcmp(f->buf + KV_OFF, src, KV_LEN),
		 "%s: RDMA Write with Immediate: IB_WC_RECV_RDMA_WITH_IMM, value 0x%x, %u octets placed",
		 pc, be32_to_cpu(r->imm), r->imm_len);
	kv_check(kv_imm_recv(c, s, &imm) && r->imm_opcode == IB_WC_RECV &&
		 r->imm == imm.ex.imm_data && !r->imm_len,
		 "%s: Send with Immediate without payload: IB_WC_RECV, IB_WC_WITH_IMM, value 0x%x",
		 pc, be32_to_cpu(r->imm));
	/*
	 * The WRs below must be refused; should one be posted, its completion
	 * reaches the server's Send handler, not the cqe of kv_imm_recv()'s
	 * stack frame.
	 */
	imm.wr_cqe = &s->send_cqe;
	imm.sg_list = &sge;
	imm.num_sge = 1;
	kv_check(ib_post_send(s->qp, &imm, NULL) == -EOPNOTSUPP,
		 "%s: Send with Immediate and payload is refused (EOPNOTSUPP)",
		 pc);
	/* Inline, in more SGEs than max_send_sge (2): refused alike. */
	sge.length = 4;
	three[0] = sge;
	three[1] = sge;
	three[2] = sge;
	imm.sg_list = three;
	imm.num_sge = ARRAY_SIZE(three);
	imm.send_flags |= IB_SEND_INLINE;
	kv_check(ib_post_send(s->qp, &imm, NULL) == -EOPNOTSUPP,
		 "%s: inline Send with Immediate and payload in 3 SGEs is refused (EOPNOTSUPP)",
		 pc);
}

/* The target word of the atomics: 8-octet aligned inside the MR. */
#define KV_ATOMIC_OFF	ALIGN(KV_OFF, sizeof(u64))

/* Post atomic @wr from the server and wait; its completion opcode is @op. */
static bool kv_atomic_wait(struct kv_conn *c, struct ib_atomic_wr *wr,
			   enum ib_wc_opcode op)
{
	struct kv_wr_wait w;

	return kv_post_wait(c, &c->srv, &wr->wr, &w) && w.opcode == op;
}

/*
 * RFC 7306: the server's Fetch-and-Add and Compare-and-Swap on a word of
 * the client's fast-reg MR return the word's original value in the result
 * SGE; a failed compare leaves the word alone. The masked forms (RFC 7306
 * sections 5.1.1 and 5.1.2) add field by field and compare and swap under
 * their masks.
 */
static void kv_test_atomic(struct kv_conn *c, const char *pc,
			   struct kv_frmr *f, u64 *res)
{
	u64 *word = (u64 *)(f->buf + KV_ATOMIC_OFF);
	struct ib_sge sge = {
		.addr = (u64)(uintptr_t)res,
		.length = sizeof(*res),
		.lkey = c->srv.pd->local_dma_lkey,
	};
	struct ib_atomic_wr wr = {
		.wr.opcode = IB_WR_ATOMIC_FETCH_AND_ADD,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.compare_add = 0x100000001ull,
	};

	if (!kv_check(kv_frmr_reg(c, &c->cli, f, IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_ATOMIC),
		      "%s: fast-reg MR for remote atomics", pc))
		return;
	WRITE_ONCE(*word, 0xffffffffull);
	*res = 0;
	wr.remote_addr = f->mr->iova + KV_ATOMIC_OFF - KV_OFF;
	wr.rkey = f->mr->rkey;
	kv_check(kv_atomic_wait(c, &wr, IB_WC_FETCH_ADD) &&
		 *res == 0xffffffffull && READ_ONCE(*word) == 0x200000000ull,
		 "%s: Fetch-and-Add: IB_WC_FETCH_ADD, original 0x%llx, target 0x%llx",
		 pc, *res, READ_ONCE(*word));
	wr.wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP;
	wr.compare_add = 0x200000000ull;
	wr.swap = 0x0123456789abcdefull;
	kv_check(kv_atomic_wait(c, &wr, IB_WC_COMP_SWAP) &&
		 *res == 0x200000000ull &&
		 READ_ONCE(*word) == 0x0123456789abcdefull,
		 "%s: Compare-and-Swap: IB_WC_COMP_SWAP, original 0x%llx, target 0x%llx",
		 pc, *res, READ_ONCE(*word));
	kv_check(kv_atomic_wait(c, &wr, IB_WC_COMP_SWAP) &&
		 *res == 0x0123456789abcdefull &&
		 READ_ONCE(*word) == 0x0123456789abcdefull,
		 "%s: Compare-and-Swap whose compare fails: original 0x%llx, target unchanged",
		 pc, *res);
	/*
	 * Masked Fetch-and-Add: bit 7 ends the low octet's field, whose
	 * carry is dropped (0xef + 0x11 = 0x00); one 64-bit add would carry
	 * into the next octet (0x...ce00).
	 */
	wr.wr.opcode = IB_WR_MASKED_ATOMIC_FETCH_AND_ADD;
	wr.compare_add = 0x11;
	wr.compare_add_mask = 0x80;
	kv_check(kv_atomic_wait(c, &wr, IB_WC_MASKED_FETCH_ADD) &&
		 *res == 0x0123456789abcdefull &&
		 READ_ONCE(*word) == 0x0123456789abcd00ull,
		 "%s: masked Fetch-and-Add (8-bit low field): IB_WC_MASKED_FETCH_ADD, original 0x%llx, target 0x%llx",
		 pc, *res, READ_ONCE(*word));
	/* The high half compared (it matches), the octets 2-3 swapped. */
	wr.wr.opcode = IB_WR_MASKED_ATOMIC_CMP_AND_SWP;
	wr.compare_add = 0x01234567ffffffffull;
	wr.compare_add_mask = 0xffffffff00000000ull;
	wr.swap = ~0ull;
	wr.swap_mask = 0xffff0000ull;
	kv_check(kv_atomic_wait(c, &wr, IB_WC_MASKED_COMP_SWAP) &&
		 *res == 0x0123456789abcd00ull &&
		 READ_ONCE(*word) == 0x01234567ffffcd00ull,
		 "%s: masked Compare-and-Swap: IB_WC_MASKED_COMP_SWAP, original 0x%llx, target 0x%llx",
		 pc, *res, READ_ONCE(*word));
}

static void kv_test_frmr(struct kv_conn *c, const char *pc)
{
	struct kv_frmr a = {}, b = {};
	u8 *src = kzalloc(KV_BUF, GFP_KERNEL);

	if (!kv_check(src && !kv_frmr_alloc(&a, &c->cli) &&
		      !kv_frmr_alloc(&b, &c->srv),
		      "%s: fast-reg MRs allocated", pc))
		goto out;
	kv_test_read_inv(c, pc, &a, &b);
	kv_test_linv_batch(c, pc, &a);
	kv_test_frmr_write_inv(c, pc, &a, src);
	kv_frmr_free(&a, &c->cli);
	memset(&a, 0, sizeof(a));
	if (kv_check(!kv_frmr_alloc(&a, &c->cli),
		     "%s: fast-reg MR for immediate data allocated", pc))
		kv_test_imm(c, pc, &a, src);
	kv_frmr_free(&a, &c->cli);
	memset(&a, 0, sizeof(a));
	if (kv_check(!kv_frmr_alloc(&a, &c->cli),
		     "%s: fast-reg MR for atomics allocated", pc))
		kv_test_atomic(c, pc, &a, (u64 *)src);
out:
	kv_frmr_free(&a, &c->cli);
	kv_frmr_free(&b, &c->srv);
	kfree(src);
}

/* --- drain and the error state --- */

static void kv_test_drain(struct kv_conn *c, const char *pc)
{
	struct kv_end *e = &c->cli;
	struct kv_flush_wr *f;
	struct ib_send_wr swr = { .opcode = IB_WR_SEND };
	struct ib_recv_wr rwr = {};
	int i, n = 8, posted = 0;

	f = kcalloc(3 * n, sizeof(*f), GFP_KERNEL);
	if (!kv_check(f, "%s: drain test memory", pc))
		return;
	e->next_flush = 0;
	atomic_set(&e->flushed, 0);
	for (i = 0; i < n; i++) {
		f[i] = (struct kv_flush_wr){ .cqe.done = kv_flush_done,
					     .end = e, .idx = i };
		rwr.wr_cqe = &f[i].cqe;
		posted += !ib_post_recv(e->qp, &rwr, NULL);
	}
	ib_drain_qp(e->qp);
	kv_check(posted == n && atomic_read(&e->flushed) == n &&
		 e->flush_order_ok,
		 "%s: ib_drain_qp flushed %d outstanding receives in order", pc,
		 atomic_read(&e->flushed));
	/* In the error state every new WR is flushed, in posted order. */
	for (i = n; i < 3 * n; i++) {
		f[i] = (struct kv_flush_wr){ .cqe.done = kv_flush_done,
					     .end = e, .idx = i };
		if (i < 2 * n) {
			swr.wr_cqe = &f[i].cqe;
			posted += !ib_post_send(e->qp, &swr, NULL);
		} else {
			rwr.wr_cqe = &f[i].cqe;
			posted += !ib_post_recv(e->qp, &rwr, NULL);
		}
	}
	/* ib_drain_sq/rq complete only after everything posted before. */
	ib_drain_sq(e->qp);
	ib_drain_rq(e->qp);
	kv_check(posted == 3 * n && atomic_read(&e->flushed) == 3 * n &&
		 e->flush_order_ok,
		 "%s: %d WRs posted in the error state flushed with IB_WC_WR_FLUSH_ERR in order",
		 pc, atomic_read(&e->flushed) - n);
	ib_drain_qp(c->srv.qp);
	kfree(f);
}

/* --- a receive WR with a bad SGE --- */

#define KV_BAD_LKEY	0x00bad0deU	/* names no MR of the device */

static int kv_post_recv_wr(struct kv_end *e, struct ib_recv_wr *wr)
{
	if (e->srq)
		return ib_post_srq_recv(e->srq, wr, NULL);
	return ib_post_recv(e->qp, wr, NULL);
}

/*
 * The client posts a receive whose SGE names no MR, then (RQ only) a good
 * one; a Send from the server needs the first: it completes with its own
 * error, IB_WC_LOC_PROT_ERR, not a flush. The QP goes to error, and the
 * receive behind it on the RQ is flushed (an SRQ keeps its receives).
 */
static void kv_test_bad_recv(struct kv_conn *c, const char *pc)
{
	struct kv_end *e = &c->cli;
	struct ib_sge bad_sge = {
		.addr = e->bufs_dma,
		.length = KV_MSG,
		.lkey = KV_BAD_LKEY,
	};
	struct ib_sge good_sge = {
		.addr = e->bufs_dma,
		.length = KV_MSG,
		.lkey = e->pd->local_dma_lkey,
	};
	struct kv_wr_wait *bad = &c->bad_recv[0], *good = &c->bad_recv[1];
	struct ib_recv_wr bad_wr = {
		.wr_cqe = &bad->cqe,
		.sg_list = &bad_sge,
		.num_sge = 1,
	};
	struct ib_recv_wr good_wr = {
		.wr_cqe = &good->cqe,
		.sg_list = &good_sge,
		.num_sge = 1,
	};
	u8 scratch[KV_MSG];
	bool ok;

	kv_wr_wait_init(bad);
	kv_wr_wait_init(good);
	ok = !kv_post_recv_wr(e, &bad_wr) &&
	     (e->srq || !kv_post_recv_wr(e, &good_wr)) &&
	     !kv_post_send(&c->srv, 0, scratch) && kv_wait(c, &bad->done);
	kv_check(ok && bad->status == IB_WC_LOC_PROT_ERR,
		 "%s: a receive with a bad lkey completes with IB_WC_LOC_PROT_ERR (status %d)",
		 pc, bad->status);
	if (e->srq)
		return;
	kv_check(kv_wait(c, &good->done) && good->status == IB_WC_WR_FLUSH_ERR,
		 "%s: the receive behind it is flushed (status %d)", pc,
		 good->status);
}

/* --- a Local Invalidate when the QP fails --- */

static void kv_seq_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kv_seq_wr *w = container_of(wc->wr_cqe, struct kv_seq_wr, cqe);
	struct kv_seq *s = w->seq;

	if (w->pos != s->next)
		s->in_order = false;
	s->next++;
	if (w->pos == 0)
		s->linv_status = wc->status;
	else if (w->pos == 1)
		s->fail_status = wc->status;
}

/* Wait until the QP of @e reached the error state by itself. */
static bool kv_wait_err(struct kv_end *e)
{
	unsigned long end = jiffies + KV_TIMEOUT;
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	for (;;) {
		if (ib_query_qp(e->qp, &attr, IB_QP_STATE, &init))
			return false;
		if (attr.qp_state == IB_QPS_ERR)
			return true;
		if (time_after(jiffies, end))
			return false;
		usleep_range(100, 200);
	}
}

/*
 * The client posts a Local Invalidate of a registered MR and a Send in
 * one post; then the QP fails: @modify moves it to the error state at
 * once, else the Send names no MR and fails locally (IB_WC_LOC_PROT_ERR)
 * right after TX executed the Local Invalidate. A Send posted in the
 * error state and ib_drain_sq's WR follow. The Local Invalidate completes
 * once: successfully if TX executed it (always when the Send behind it
 * failed), else flushed; the WRs behind it complete after it, in posted
 * order. (With an access to the MR in flight it waits a grace period
 * first: 75-teardown, kernel ULP linvflush and inval.)
 */
static void kv_test_linv_fail(struct kv_conn *c, const char *pc,
			      struct kv_frmr *f, bool modify)
{
	struct kv_end *e = &c->cli;
	struct kv_seq *s = &c->seq;
	u8 p0[KV_MSG] = {}, p1[KV_MSG] = {};
	struct ib_sge sg0 = {
		.addr = (u64)(uintptr_t)p0,
		.length = KV_MSG,
		.lkey = modify ? e->pd->local_dma_lkey : KV_BAD_LKEY,
	};
	struct ib_sge sg1 = { .addr = (u64)(uintptr_t)p1, .length = KV_MSG };
	struct ib_send_wr send = {
		.wr_cqe = &c->seq_wr[1].cqe,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED | (modify ? IB_SEND_INLINE : 0),
		.sg_list = &sg0,
		.num_sge = 1,
	};
	struct ib_send_wr linv = {
		.next = &send,
		.wr_cqe = &c->seq_wr[0].cqe,
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_send_wr late = {
		.wr_cqe = &c->seq_wr[2].cqe,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE,
		.sg_list = &sg1,
		.num_sge = 1,
	};
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	bool ok;
	int i;

	if (!kv_check(kv_frmr_reg(c, e, f, IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_WRITE),
		      "%s: MR registered for the Local Invalidate", pc))
		return;
	*s = (struct kv_seq){ .linv_status = -1, .fail_status = -1,
			      .in_order = true };
	for (i = 0; i < KV_SEQ_WRS; i++)
		c->seq_wr[i] = (struct kv_seq_wr){ .cqe.done = kv_seq_done,
						   .seq = s, .pos = i };
	linv.ex.invalidate_rkey = f->mr->rkey;
	ok = !ib_post_send(e->qp, &linv, NULL);
	if (modify)
		ok = ok && !ib_modify_qp(e->qp, &attr, IB_QP_STATE);
	else
		ok = ok && kv_wait_err(e);
	ok = ok && !ib_post_send(e->qp, &late, NULL);
	/* Its WR completes after everything posted before it. */
	ib_drain_sq(e->qp);
	kv_check(ok && s->next == KV_SEQ_WRS &&
		 (s->linv_status == IB_WC_SUCCESS ||
		  (modify && s->linv_status == IB_WC_WR_FLUSH_ERR)),
		 "%s: Local Invalidate completed once (status %d) when the QP failed",
		 pc, s->linv_status);
	kv_check(ok && s->next == KV_SEQ_WRS && s->in_order &&
		 (modify || s->fail_status == IB_WC_LOC_PROT_ERR),
		 "%s: %u of %d WRs completed in posted order before ib_drain_sq's (in order: %s, second WR status %d)",
		 pc, s->next, KV_SEQ_WRS, s->in_order ? "yes" : "no",
		 s->fail_status);
}

/* --- asynchronous events and CQ resizing --- */

#define KV_SRQ_RECVS	8	/* receives on the SRQ of the limit test */
#define KV_SRQ_LIMIT	6	/* its armed limit */

/* Wait until @e counted at least @n events of type @type. */
static bool kv_wait_event(struct kv_end *e, enum ib_event_type type, int n)
{
	return wait_event_timeout(e->event_wq,
				  atomic_read(&e->events[type]) >= n,
				  KV_TIMEOUT) > 0;
}

/* @n Sends from the server, received by the client intact and in order. */
static bool kv_srv_sends(struct kv_conn *c, u32 n)
{
	struct kv_end *r = &c->cli;
	u32 first = atomic_read(&r->recvs), i;
	u8 scratch[KV_MSG];

	r->want_recvs = first + n;
	reinit_completion(&r->all_recvd);
	for (i = 0; i < n; i++)
		if (kv_post_send(&c->srv, first + i, scratch))
			return false;
	return kv_wait(c, &r->all_recvd) && !r->bad_payload;
}

/*
 * The client's SRQ holds KV_SRQ_RECVS receives, its limit armed at
 * KV_SRQ_LIMIT: IB_EVENT_SRQ_LIMIT_REACHED comes with the Send that leaves
 * fewer than that, once; the limit is then disarmed (srq_limit 0).
 */
static void kv_test_srq_limit(struct kv_conn *c, const char *pc)
{
	struct kv_end *r = &c->cli;
	struct ib_srq_attr attr = { .srq_limit = KV_SRQ_LIMIT };
	atomic_t *ev = &r->events[IB_EVENT_SRQ_LIMIT_REACHED];
	bool ok = true;
	u32 i;

	for (i = 0; i < KV_SRQ_RECVS; i++)
		ok = ok && !kv_post_recv(r, i, true);
	if (!kv_check(ok && !ib_modify_srq(r->srq, &attr, IB_SRQ_LIMIT),
		      "%s: ib_modify_srq arms IB_SRQ_LIMIT %d over %d receives",
		      pc, KV_SRQ_LIMIT, KV_SRQ_RECVS))
		return;
	kv_check(kv_srv_sends(c, KV_SRQ_RECVS - KV_SRQ_LIMIT) && !atomic_read(ev),
		 "%s: %d receives left: no IB_EVENT_SRQ_LIMIT_REACHED yet", pc,
		 KV_SRQ_LIMIT);
	kv_check(kv_srv_sends(c, 1) &&
		 kv_wait_event(r, IB_EVENT_SRQ_LIMIT_REACHED, 1),
		 "%s: %d left: IB_EVENT_SRQ_LIMIT_REACHED", pc,
		 KV_SRQ_LIMIT - 1);
	attr.srq_limit = ~0U;
	kv_check(!ib_query_srq(r->srq, &attr) && !attr.srq_limit,
		 "%s: the event disarmed the limit (srq_limit %u)", pc,
		 attr.srq_limit);
	kv_check(kv_srv_sends(c, KV_SRQ_LIMIT - 1) && atomic_read(ev) == 1,
		 "%s: the SRQ emptied: the event came once (%d)", pc,
		 atomic_read(ev));
}

/* A signalled Send of the client completing into its polled send CQ. */
static int kv_polled_send(struct kv_end *e, u64 wr_id, u32 seq)
{
	u8 scratch[KV_MSG];
	struct ib_send_wr wr = { .wr_id = wr_id };

	return kv_post_send_wr(e, &wr, seq, scratch);
}

/* Poll @n completions of Sends wr_id 0..@n-1, successful and in order. */
static bool kv_poll_in_order(struct ib_cq *cq, int n)
{
	struct ib_wc wc;
	int i;

	for (i = 0; i < n; i++)
		if (ib_poll_cq(cq, 1, &wc) != 1 || wc.wr_id != i ||
		    wc.status != IB_WC_SUCCESS || wc.opcode != IB_WC_SEND)
			return false;
	return !ib_poll_cq(cq, 1, &wc);
}

/*
 * @n Sends of the client, wr_id 0..@n-1, complete into its send CQ of
 * KV_SMALL_CQE entries and wait there unpolled, each one's completion event
 * seen before the next Send is posted.
 */
static bool kv_sends_unpolled(struct kv_conn *c, int n)
{
	struct kv_end *e = &c->cli;
	u32 seq = atomic_read(&c->srv.recvs);
	bool ok = e->send_cq->cqe == KV_SMALL_CQE;
	int i, notes;

	for (i = 0; ok && i < n; i++) {
		notes = atomic_read(&e->cq_notes);
		ok = !ib_req_notify_cq(e->send_cq, IB_CQ_NEXT_COMP) &&
		     !kv_polled_send(e, i, seq + i) &&
		     wait_event_timeout(e->event_wq,
					atomic_read(&e->cq_notes) > notes,
					KV_TIMEOUT) > 0;
	}
	return ok;
}

/*
 * KV_SMALL_CQE - 1 Send completions wait unpolled in the client's send CQ
 * (each one's completion event seen before the next Send is posted);
 * ib_resize_cq below them is refused, above them keeps them in order.
 */
static void kv_test_resize_cq(struct kv_conn *c, const char *pc)
{
	struct kv_end *e = &c->cli;
	struct ib_cq *cq = e->send_cq;
	int n = KV_SMALL_CQE - 1;

	if (!kv_check(kv_sends_unpolled(c, n),
		      "%s: %d completions unpolled in a CQ of %d", pc, n,
		      cq->cqe))
		return;
	kv_check(ib_resize_cq(cq, KV_SMALL_CQE / 2) == -EINVAL &&
		 cq->cqe == KV_SMALL_CQE,
		 "%s: ib_resize_cq to %d below them is refused (EINVAL)", pc,
		 KV_SMALL_CQE / 2);
	kv_check(!ib_resize_cq(cq, 4 * KV_SMALL_CQE) &&
		 cq->cqe == 4 * KV_SMALL_CQE && kv_poll_in_order(cq, n),
		 "%s: ib_resize_cq to %d kept the %d completions, in order",
		 pc, cq->cqe, n);
}

/*
 * The client's QP, on an SRQ, is moved to the error state:
 * IB_EVENT_QP_LAST_WQE_REACHED, once, also after a second move to error.
 */
static void kv_test_last_wqe(struct kv_conn *c, const char *pc)
{
	struct kv_end *e = &c->cli;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	int rv;

	kv_check(!ib_modify_qp(e->qp, &attr, IB_QP_STATE) &&
		 kv_wait_event(e, IB_EVENT_QP_LAST_WQE_REACHED, 1),
		 "%s: SRQ QP moved to error: IB_EVENT_QP_LAST_WQE_REACHED", pc);
	rv = ib_modify_qp(e->qp, &attr, IB_QP_STATE);
	/* A second event would come from that call or RX, at once. */
	msleep(200);
	kv_check(!rv && atomic_read(&e->events[IB_EVENT_QP_LAST_WQE_REACHED]) == 1,
		 "%s: moved to error again: the event came once (%d)", pc,
		 atomic_read(&e->events[IB_EVENT_QP_LAST_WQE_REACHED]));
}

/*
 * Two more signalled Sends than the client's send CQ holds, none polled:
 * the CQ reports IB_EVENT_CQ_ERR once, its QP gets IB_EVENT_QP_FATAL and
 * the error state (then, on an SRQ, IB_EVENT_QP_LAST_WQE_REACHED); the
 * completions the CQ had room for are still there, in order.
 */
static void kv_test_cq_overrun(struct kv_conn *c, const char *pc)
{
	struct kv_end *e = &c->cli;
	struct ib_cq *cq = e->send_cq;
	int i, n = cq->cqe + 2, posted = 0;
	u32 seq = atomic_read(&c->srv.recvs);

	for (i = 0; i < n; i++)
		posted += !kv_polled_send(e, i, seq + i);
	kv_check(posted == n && kv_wait_event(e, IB_EVENT_CQ_ERR, 1),
		 "%s: %d Sends into a CQ of %d: IB_EVENT_CQ_ERR", pc, n,
		 cq->cqe);
	kv_check(kv_wait_event(e, IB_EVENT_QP_FATAL, 1) && kv_wait_err(e),
		 "%s: its QP: IB_EVENT_QP_FATAL and the error state", pc);
	kv_check(kv_wait_event(e, IB_EVENT_QP_LAST_WQE_REACHED, 1),
		 "%s: the SRQ QP in error: IB_EVENT_QP_LAST_WQE_REACHED", pc);
	kv_check(atomic_read(&e->events[IB_EVENT_CQ_ERR]) == 1 &&
		 atomic_read(&e->events[IB_EVENT_QP_FATAL]) == 1,
		 "%s: each reported once (CQ_ERR %d, QP_FATAL %d)", pc,
		 atomic_read(&e->events[IB_EVENT_CQ_ERR]),
		 atomic_read(&e->events[IB_EVENT_QP_FATAL]));
	kv_check(kv_poll_in_order(cq, cq->cqe),
		 "%s: the %d completions it had room for are kept, in order",
		 pc, cq->cqe);
}

/*
 * One batch of completions fires the armed event and then overruns the CQ:
 * the client's send CQ holds KV_SMALL_CQE - 1 completions, its QP is in
 * error, the CQ is armed, and two Sends posted in one call are flushed
 * together. The completion handler runs (the first flush filled the CQ's
 * last entry) and IB_EVENT_CQ_ERR comes once (the second was lost). Then
 * the QP is destroyed with two completions unpolled: they leave the CQ
 * (each would name the freed QP in wc->qp).
 */
static void kv_test_cq_overrun_armed(struct kv_conn *c, const char *pc)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct kv_end *e = &c->cli;
	struct ib_cq *cq = e->send_cq;
	int n = KV_SMALL_CQE - 1, notes;
	struct ib_send_wr wr[2] = {
		{ .wr_id = n, .next = &wr[1], .opcode = IB_WR_SEND,
		  .send_flags = IB_SEND_SIGNALED },
		{ .wr_id = n + 1, .opcode = IB_WR_SEND,
		  .send_flags = IB_SEND_SIGNALED },
	};
	const struct ib_send_wr *bad;
	struct ib_wc wc;
	int i;

	if (!kv_check(kv_sends_unpolled(c, n) &&
		      !ib_modify_qp(e->qp, &attr, IB_QP_STATE),
		      "%s: %d completions unpolled in a CQ of %d, QP in error",
		      pc, n, cq->cqe))
		return;
	notes = atomic_read(&e->cq_notes);
	kv_check(!ib_req_notify_cq(cq, IB_CQ_NEXT_COMP) &&
		 !ib_post_send(e->qp, wr, &bad) &&
		 kv_wait_event(e, IB_EVENT_CQ_ERR, 1),
		 "%s: two Sends flushed into its last entry: IB_EVENT_CQ_ERR",
		 pc);
	kv_check(atomic_read(&e->cq_notes) == notes + 1,
		 "%s: the completion handler ran once for the armed CQ (%d)",
		 pc, atomic_read(&e->cq_notes) - notes);
	for (i = 0; i < n - 1; i++)
		if (ib_poll_cq(cq, 1, &wc) != 1 || wc.wr_id != i ||
		    wc.status != IB_WC_SUCCESS)
			break;
	kv_check(i == n - 1, "%s: its first %d completions polled in order",
		 pc, n - 1);
	/* The last Send's and the flushed one stay unpolled. */
	rdma_destroy_qp(e->id);
	e->qp = NULL;
	kv_check(!ib_poll_cq(cq, 1, &wc),
		 "%s: the QP destroyed, its 2 unpolled completions left the CQ",
		 pc);
}

static const struct {
	enum ib_poll_context poll;
	const char *name;
} kv_polls[] = {
	{ IB_POLL_DIRECT, "IB_POLL_DIRECT" },
	{ IB_POLL_SOFTIRQ, "IB_POLL_SOFTIRQ" },
	{ IB_POLL_WORKQUEUE, "IB_POLL_WORKQUEUE" },
	{ IB_POLL_UNBOUND_WORKQUEUE, "IB_POLL_UNBOUND_WORKQUEUE" },
};

/* Free a connection kv_open() made (after rdma_disconnect, if it is up). */
static void kv_close(struct kv_conn *c)
{
	kv_free_end(&c->cli);
	kv_free_end(&c->srv);
	if (!IS_ERR_OR_NULL(c->listen))
		rdma_destroy_id(c->listen);
	kfree(c);
}

/**
 * struct kv_opts - how kv_open_with() makes a connection
 * @poll: the poll context of both ends' CQs
 * @srq: the active side receives through an SRQ
 * @events: the active side reports asynchronous events (kv_make_qp())
 * @srq_wr: receives that SRQ takes (0: KV_QDEPTH)
 * @share: the active side's QP uses this end's PD, CQ, SRQ and buffers
 */
struct kv_opts {
	enum ib_poll_context poll;
	bool srq;
	bool events;
	u32 srq_wr;
	struct kv_end *share;
};

/* A loopback connection on port @p made as @o says; NULL if it failed. */
static struct kv_conn *kv_open_with(const struct kv_opts *o, const char *pc,
				    u16 p)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET,
		.sin_port = htons(p),
	};
	struct kv_conn *c;
	int rv;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!kv_check(c, "%s: memory", pc))
		return NULL;
	c->poll = o->poll;
	c->srq = o->srq;
	c->events = o->events;
	c->srq_wr = o->srq_wr;
	c->share = o->share;
	kv_end_init(&c->cli);
	kv_end_init(&c->srv);
	init_completion(&c->srv_ready);
	sa.sin_addr.s_addr = in_aton(addr);
	rv = kv_connect(c, &sa);
	if (kv_check(!rv, "%s: connected over %s (%d)", pc, dev, rv))
		return c;
	kv_close(c);
	return NULL;
}

static struct kv_conn *kv_open(enum ib_poll_context poll, bool srq,
			       bool events, const char *pc, u16 p)
{
	struct kv_opts o = { .poll = poll, .srq = srq, .events = events };

	return kv_open_with(&o, pc, p);
}

/* Process @c's server CQ until its client's @n Sends completed there. */
static bool kv_srv_sent(struct kv_conn *c, int n)
{
	unsigned long end = jiffies + KV_TIMEOUT;

	while (atomic_read(&c->srv.sends) < n) {
		ib_process_cq_direct(c->srv.cq, -1);
		if (time_after(jiffies, end))
			return false;
		usleep_range(100, 200);
	}
	return true;
}

/* The SRQ of @e is full: one more receive is refused with -ENOMEM. */
static bool kv_srq_full(struct kv_end *e, u32 slot)
{
	return kv_post_recv(e, slot, true) == -ENOMEM;
}

/*
 * Receives a destroyed QP took off a kernel SRQ whose completions were
 * never polled go back on the SRQ, as with hardware SRQs (nvmet-rdma's
 * use_srq reposts only what completes). Connection @a's client (CQs
 * IB_POLL_DIRECT, polled only by the test) fills its SRQ of KV_SRQ_RECVS
 * receives; its limit, armed two below, reports the third receive taken
 * when three Sends arrive: RX, serial, completed the first two before it
 * took the third, whose completion may come later or, if the QP goes
 * first, its flush. The completions wait unpolled and still count against
 * the SRQ; destroying the QP drops them from the CQ and gives the receives
 * back, the SRQ still full. A second connection's client QP on the same
 * PD, CQ and SRQ then gets KV_SRQ_RECVS Sends into the receives in their
 * posted order: the three given back first.
 */
static void kv_test_srq_put_back(const char *pc, u16 p)
{
	struct kv_opts o = { .poll = IB_POLL_DIRECT, .srq = true,
			     .events = true, .srq_wr = KV_SRQ_RECVS };
	struct ib_srq_attr attr = { .srq_limit = KV_SRQ_RECVS - 2 };
	struct kv_conn *a = kv_open_with(&o, pc, p), *b = NULL;
	struct kv_end *r;
	u8 scratch[KV_MSG];
	struct ib_wc wc;
	bool ok = true;
	u32 i;

	if (!a)
		return;
	r = &a->cli;
	for (i = 0; i < KV_SRQ_RECVS; i++)
		ok = ok && !kv_post_recv(r, i, true);
	if (!kv_check(ok && kv_srq_full(r, i) &&
		      !ib_modify_srq(r->srq, &attr, IB_SRQ_LIMIT),
		      "%s: %d receives fill the SRQ, its limit armed at %d", pc,
		      KV_SRQ_RECVS, attr.srq_limit))
		goto out;
	for (i = 0; ok && i < 3; i++)
		ok = !kv_post_send(&a->srv, i, scratch);
	ok = ok && kv_srv_sent(a, 3) &&
	     kv_wait_event(r, IB_EVENT_SRQ_LIMIT_REACHED, 1);
	if (!kv_check(ok, "%s: three Sends took three receives", pc))
		goto out;
	i = KV_SRQ_RECVS;
	kv_check(kv_srq_full(r, i),
		 "%s: their completions unpolled, the SRQ is still full", pc);
	rdma_destroy_qp(r->id);
	r->qp = NULL;
	kv_check(!ib_poll_cq(r->cq, 1, &wc),
		 "%s: the QP destroyed, its completions left the CQ", pc);
	kv_check(kv_srq_full(r, i),
		 "%s: their receives are back on the SRQ, which is full", pc);
	o = (struct kv_opts){ .poll = IB_POLL_DIRECT, .share = r };
	b = kv_open_with(&o, pc, p + 1);
	if (!b)
		goto out;
	r->want_recvs = KV_SRQ_RECVS;
	reinit_completion(&r->all_recvd);
	for (i = 0; ok && i < KV_SRQ_RECVS; i++)
		ok = !kv_post_send(&b->srv, i, scratch);
	kv_check(ok && kv_wait(b, &r->all_recvd) && !r->bad_payload,
		 "%s: a new QP on the SRQ received %d Sends in posted order (%d)",
		 pc, KV_SRQ_RECVS, atomic_read(&r->recvs));
	rdma_disconnect(b->cli.id);
	kv_close(b);
out:
	kv_close(a);
}

static void kv_run(enum ib_poll_context poll, const char *pc, u16 p)
{
	struct kv_conn *c = kv_open(poll, false, false, pc, p);

	if (!c)
		return;
	kv_test_sends(c, pc);
	kv_test_frmr(c, pc);
	kv_test_drain(c, pc);
	if (poll == IB_POLL_SOFTIRQ)
		kv_test_frmr_limit(&c->cli);
	rdma_disconnect(c->cli.id);
	kv_close(c);
}

static void kv_run_bad_recv(bool srq, const char *pc, u16 p)
{
	struct kv_conn *c = kv_open(IB_POLL_SOFTIRQ, srq, false, pc, p);

	if (!c)
		return;
	kv_test_bad_recv(c, pc);
	rdma_disconnect(c->cli.id);
	kv_close(c);
}

static void kv_run_linv_fail(bool modify, const char *pc, u16 p)
{
	struct kv_conn *c = kv_open(IB_POLL_SOFTIRQ, false, false, pc, p);
	struct kv_frmr f = {};

	if (!c)
		return;
	if (kv_check(!kv_frmr_alloc(&f, &c->cli), "%s: fast-reg MR allocated",
		     pc))
		kv_test_linv_fail(c, pc, &f, modify);
	rdma_disconnect(c->cli.id);
	kv_frmr_free(&f, &c->cli);
	kv_close(c);
}

static void kv_test_srq_cq_events(struct kv_conn *c, const char *pc)
{
	kv_test_srq_limit(c, pc);
	kv_test_resize_cq(c, pc);
	kv_test_last_wqe(c, pc);
}

/* @test on a connection whose client reports its asynchronous events. */
static void kv_run_async(void (*test)(struct kv_conn *c, const char *pc),
			 const char *pc, u16 p)
{
	struct kv_conn *c = kv_open(IB_POLL_SOFTIRQ, true, true, pc, p);

	if (!c)
		return;
	test(c, pc);
	rdma_disconnect(c->cli.id);
	kv_close(c);
}

static int __init kv_init(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(kv_polls); i++)
		kv_run(kv_polls[i].poll, kv_polls[i].name, port + i);
	kv_run_bad_recv(false, "bad receive (RQ)", port + i);
	kv_run_bad_recv(true, "bad receive (SRQ)", port + i + 1);
	kv_run_linv_fail(true, "Local Invalidate, then modify to ERR",
			 port + i + 2);
	kv_run_linv_fail(false, "Local Invalidate, then a failing WR",
			 port + i + 3);
	kv_run_async(kv_test_srq_cq_events, "SRQ limit, resize_cq, last WQE",
		     port + i + 4);
	kv_run_async(kv_test_cq_overrun, "CQ overrun", port + i + 5);
	kv_run_async(kv_test_cq_overrun_armed, "CQ armed, then overrun",
		     port + i + 6);
	kv_test_srq_put_back("SRQ receives of a destroyed QP", port + i + 7);
	pr_info("%u passed, %u failed\n", kv_passed, kv_failed);
	return kv_failed || !kv_passed ? -EIO : 0;
}

static void __exit kv_exit(void)
{
}

module_init(kv_init);
module_exit(kv_exit);
MODULE_DESCRIPTION("kiwi: kernel verbs checks of what kernel ULPs use");
MODULE_LICENSE("GPL");
