// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_stress: libkiwi's rings against the real kernel under concurrency,
 * with the QP going to error at random.
 *
 *   vt_stress -a ADDR [-p PORT] [-t SECONDS] [-r ROUNDS] [-S SEED]
 *
 * ADDR is a local address of a kiwi device. Each round connects two RC QPs
 * of this process over rdma_cm (an active and a passive end), then runs
 * per end a sender thread (Sends within the credits the peer's receives
 * give, RDMA Writes, RDMA Reads; some inline, some unsignaled, the last of
 * each batch signaled), a receiver thread (receives in small batches, at
 * most a ring's worth whose completions were not polled yet) and one
 * waiter thread per CQ; a thread reads the asynchronous events (a CQ
 * overrun fails the test). After 30-300 ms of
 * traffic one QP, the other, both, or a graceful disconnect ends the
 * connection while the threads keep posting; then both QPs go to error.
 *
 * Every other round the passive QP takes its receives from an SRQ (on
 * error those stay in the SRQ, except one the receive path held, which is
 * flushed). Two waiter modes alternate: two rounds in three the waiters
 * arm their CQ (ibv_req_notify_cq), drain it and sleep on its completion
 * channel; one in three they busy-poll, and each receiver stops at its
 * QP's first flushed receive, so its last receives race with the kernel's
 * flush.
 *
 * Checks:
 *  - every WR a post accepted completes exactly once, in order, with
 *    success or IBV_WC_WR_FLUSH_ERR (an unsignaled one may complete
 *    silently: a later signaled completion retires it); a Send's receive
 *    has the Send's length;
 *  - a WR a post refused (from *bad_wr on) never completes; before each
 *    connection a post to the unconnected QP must be refused from the head
 *    of the list, also when a later WR of the list is malformed;
 *  - no completion event is lost: an armed waiter that finds completions
 *    after LOST_MS without an event fails;
 *  - nothing hangs: after both QPs went to error every WR completes within
 *    HANG_MS.
 * Runs rounds until -t seconds (default 40) or -r rounds passed; prints a
 * summary, with the ibv_post_send calls made while both QPs were connected
 * and the send doorbells kiwi.ko counted meanwhile (its tx_doorbells hw
 * counter): fewer doorbells than calls means posts found TX running and
 * skipped the doorbell (65-ring-stress checks it). Exit 0 if every check passed, 1 if one failed, 2 on setup errors.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "vt_cm.h"

#define SQ_DEPTH 128
#define RQ_DEPTH 256
#define CQ_DEPTH 1024
#define MSG_MAX 4096
#define INLINE_MAX 64
#define WR_MAX (1u << 20)	/* sequence numbers per queue and round */
#define LOST_MS 3000		/* armed, completions there, no event: lost */
#define HANG_MS 20000		/* after error, every WR completes by then */

enum wr_state {
	WR_FREE,
	WR_POSTED,		/* signaled: one completion expected */
	WR_POSTED_UNSIG,	/* unsignaled: a flush completion or none */
	WR_DONE,
	WR_REFUSED,		/* the post reported it as not posted */
};

enum wr_kind { KIND_SQ, KIND_RQ };

/* One work queue's bookkeeping; the poster and its CQ's waiter share it. */
struct wq {
	pthread_mutex_t lock;
	uint8_t *state;		/* enum wr_state per sequence number */
	uint8_t *opcode;	/* SQ: the ibv_wc_opcode a success reports */
	uint32_t next;		/* next sequence number to post */
	uint32_t retired;	/* everything below completed (in order) */
	uint32_t outstanding;	/* posted, not completed */
	uint64_t posted, ok, flushed, silent, refused;
	uint64_t calls;		/* SQ: ibv_post_send calls */
	uint64_t left;		/* SRQ: still in the SRQ when it was destroyed */
};

struct side {
	const char *name;
	unsigned int idx;
	struct side *peer;
	struct ibv_qp *qp;
	struct ibv_srq *srq;	/* SRQ rounds, passive side: receives go here */
	struct ibv_comp_channel *sch, *rch;
	struct ibv_cq *scq, *rcq;
	struct wq sq, rq;
	uint32_t *send_len;	/* lengths of the accepted Sends (sq.lock) */
	uint32_t nsend;
	uint32_t recv_ok;	/* successful receives (rq.lock) */
	atomic_int credits;	/* receives the peer posted for our Sends */
	atomic_bool saw_recv_flush;
	uint8_t *sbuf, *rbuf, *tbuf, *lbuf;
	struct ibv_mr *smr, *rmr, *tmr, *lmr;
};

struct waiter {
	struct side *s;
	bool recv;
	pthread_t thread;
	unsigned long events;
};

static struct side sides[2];
static unsigned int round_no;
static bool busy_mode;
static atomic_bool stop_send, stop_recv, stop_wait, stop_async;
static atomic_ulong async_events;
static unsigned long total_events, lost_events, head_checks;
/* While both QPs were connected: ibv_post_send calls, doorbells counted. */
static uint64_t conn_calls, conn_doorbells;
static bool doorbells_known = true;
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned int ms)
{
	usleep(ms * 1000);
}

static uint64_t make_id(unsigned int side, enum wr_kind kind, uint32_t seq)
{
	return (uint64_t)(round_no & 0xffff) << 48 | (uint64_t)side << 47 |
	       (uint64_t)kind << 45 | seq;
}

/* A check failed: report it (the first few of a kind in full). */
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	static unsigned int reported;
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&report_lock);
	if (reported++ < 20)
		vt_fail("round %u: %s", round_no, msg);
	else
		vt_failures++;
	pthread_mutex_unlock(&report_lock);
}

static void wq_init(struct wq *q)
{
	pthread_mutex_init(&q->lock, NULL);
	q->state = calloc(WR_MAX, 1);
	q->opcode = calloc(WR_MAX, 1);
	if (!q->state || !q->opcode)
		vt_fatal("out of memory");
}

static void wq_reset(struct wq *q)
{
	memset(q->state, 0, WR_MAX);
	q->next = 0;
	q->retired = 0;
	q->outstanding = 0;
}

static uint32_t wq_outstanding(struct wq *q)
{
	uint32_t n;

	pthread_mutex_lock(&q->lock);
	n = q->outstanding;
	pthread_mutex_unlock(&q->lock);
	return n;
}

/* May @n more WRs be posted with at most @depth outstanding? */
static bool wq_room(struct wq *q, unsigned int n, uint32_t depth)
{
	bool room;

	pthread_mutex_lock(&q->lock);
	room = q->outstanding + n <= depth && q->next + n <= WR_MAX;
	pthread_mutex_unlock(&q->lock);
	return room;
}

/* --- completions ---------------------------------------------------- */

static void count_status(struct wq *q, const struct ibv_wc *wc,
			 const char *what)
{
	if (wc->status == IBV_WC_SUCCESS)
		q->ok++;
	else if (wc->status == IBV_WC_WR_FLUSH_ERR)
		q->flushed++;
	else
		fail("%s wr %" PRIx64 ": status %s", what, wc->wr_id,
		     ibv_wc_status_str(wc->status));
}

/*
 * Completions of one queue arrive in posting order. Everything between
 * the last completion and this one must be refused or (SQ) unsignaled.
 */
static bool retire_before(struct wq *q, uint32_t seq, const char *what)
{
	uint32_t j;

	for (j = q->retired; j < seq; j++) {
		switch (q->state[j]) {
		case WR_POSTED_UNSIG:
			q->state[j] = WR_DONE;
			q->outstanding--;
			q->silent++;
			break;
		case WR_REFUSED:
			break;
		default:
			fail("%s seq %u completed while seq %u (state %u) is pending",
			     what, seq, j, q->state[j]);
			return false;
		}
	}
	return true;
}

/* Common checks; returns the WR's state before, or WR_FREE to ignore it. */
static enum wr_state take(struct wq *q, uint32_t seq, const struct ibv_wc *wc,
			  const char *what)
{
	enum wr_state st = q->state[seq];

	if (st == WR_REFUSED) {
		fail("%s wr %" PRIx64 " completed (%s) but its post was refused",
		     what, wc->wr_id, ibv_wc_status_str(wc->status));
		return WR_FREE;
	}
	if (st != WR_POSTED && st != WR_POSTED_UNSIG) {
		fail("%s wr %" PRIx64 " completed again or never posted (state %u)",
		     what, wc->wr_id, st);
		return WR_FREE;
	}
	if (!retire_before(q, seq, what))
		return WR_FREE;
	q->state[seq] = WR_DONE;
	q->outstanding--;
	q->retired = seq + 1;
	return st;
}

static void send_done(struct side *s, uint32_t seq, const struct ibv_wc *wc)
{
	struct wq *q = &s->sq;
	enum wr_state st;

	pthread_mutex_lock(&q->lock);
	st = take(q, seq, wc, "send");
	if (st == WR_POSTED_UNSIG && wc->status == IBV_WC_SUCCESS)
		fail("unsignaled send wr %" PRIx64 " completed with success",
		     wc->wr_id);
	if (st != WR_FREE) {
		count_status(q, wc, "send");
		if (wc->status == IBV_WC_SUCCESS && wc->opcode != q->opcode[seq])
			fail("send wr %" PRIx64 ": opcode %d, expected %d",
			     wc->wr_id, wc->opcode, q->opcode[seq]);
	}
	pthread_mutex_unlock(&q->lock);
}

static void recv_done(struct side *s, uint32_t seq, const struct ibv_wc *wc)
{
	struct wq *q = &s->rq;
	uint32_t want = 0, i = 0;
	bool known = false;

	pthread_mutex_lock(&q->lock);
	if (take(q, seq, wc, "recv") != WR_FREE) {
		count_status(q, wc, "recv");
		if (wc->status == IBV_WC_SUCCESS)
			i = s->recv_ok++;
		else
			atomic_store(&s->saw_recv_flush, true);
		known = wc->status == IBV_WC_SUCCESS;
	}
	pthread_mutex_unlock(&q->lock);
	if (!known)
		return;
	pthread_mutex_lock(&s->peer->sq.lock);
	known = i < s->peer->nsend;
	if (known)
		want = s->peer->send_len[i];
	pthread_mutex_unlock(&s->peer->sq.lock);
	if (!known)
		fail("%s received Send %u, the peer posted only %u", s->name,
		     i, s->peer->nsend);
	else if (wc->byte_len != want || wc->opcode != IBV_WC_RECV)
		fail("%s receive %u: %u octets (opcode %d), the Send had %u",
		     s->name, i, wc->byte_len, wc->opcode, want);
}

static void handle_wc(struct waiter *w, const struct ibv_wc *wc)
{
	unsigned int rnd = wc->wr_id >> 48, side = wc->wr_id >> 47 & 1;
	enum wr_kind kind = wc->wr_id >> 45 & 3;
	uint32_t seq = (uint32_t)wc->wr_id;

	if (rnd != (round_no & 0xffff) || side != w->s->idx ||
	    kind != (w->recv ? KIND_RQ : KIND_SQ) || seq >= WR_MAX) {
		fail("%s %s CQ: completion with foreign wr_id %" PRIx64,
		     w->s->name, w->recv ? "recv" : "send", wc->wr_id);
		return;
	}
	if (w->recv)
		recv_done(w->s, seq, wc);
	else
		send_done(w->s, seq, wc);
}

static int drain(struct waiter *w)
{
	struct ibv_cq *cq = w->recv ? w->s->rcq : w->s->scq;
	struct ibv_wc wc[16];
	int n, i, total = 0;

	while ((n = ibv_poll_cq(cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++)
			handle_wc(w, &wc[i]);
		total += n;
	}
	if (n < 0)
		fail("ibv_poll_cq: %d", n);
	return total;
}

static void arm(struct waiter *w, struct ibv_cq *cq)
{
	if (ibv_req_notify_cq(cq, 0))
		fail("%s: ibv_req_notify_cq failed", w->s->name);
}

/* Take one event from the channel; false if none came within @ms. */
static bool get_event(struct waiter *w, struct ibv_comp_channel *ch, int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *cq_ctx;

	if (poll(&pfd, 1, ms) != 1)
		return false;
	if (ibv_get_cq_event(ch, &cq, &cq_ctx))
		return false;
	ibv_ack_cq_events(cq, 1);
	w->events++;
	return true;
}

/*
 * Arm, drain, sleep on the channel. A CQE that appears after the arm must
 * raise an event; finding one LOST_MS after arming without any event (and
 * none in one more second) means the event was lost.
 */
static void wait_events(struct waiter *w)
{
	struct ibv_comp_channel *ch = w->recv ? w->s->rch : w->s->sch;
	struct ibv_cq *cq = w->recv ? w->s->rcq : w->s->scq;
	uint64_t armed;

	arm(w, cq);
	drain(w);
	armed = now_ms();
	while (!atomic_load(&stop_wait)) {
		if (!get_event(w, ch, 100)) {
			if (now_ms() - armed < LOST_MS || !drain(w))
				continue;
			if (!get_event(w, ch, 1000)) {
				fail("%s %s CQ: completions but no event %u ms after arming",
				     w->s->name, w->recv ? "recv" : "send",
				     LOST_MS);
				pthread_mutex_lock(&report_lock);
				lost_events++;
				pthread_mutex_unlock(&report_lock);
			}
		}
		arm(w, cq);
		drain(w);
		armed = now_ms();
	}
	drain(w);
}

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	if (!busy_mode) {
		wait_events(w);
		return NULL;
	}
	while (!atomic_load(&stop_wait))
		if (!drain(w))
			sched_yield();
	return NULL;
}

/* --- posting -------------------------------------------------------- */

/* Take one credit for a Send to the peer, if there is one. */
static bool take_credit(struct side *s)
{
	int c = atomic_load(&s->credits);

	while (c > 0)
		if (atomic_compare_exchange_weak(&s->credits, &c, c - 1))
			return true;
	return false;
}

/* Fill @wr as an operation of random kind and length. */
static void make_send(struct side *s, struct ibv_send_wr *wr,
		      struct ibv_sge *sge, unsigned int *seed,
		      uint8_t *wc_opcode)
{
	unsigned int r = rand_r(seed) % 100;
	uint32_t len = 1 + rand_r(seed) % MSG_MAX;

	memset(wr, 0, sizeof(*wr));
	sge->addr = (uintptr_t)s->sbuf;
	sge->length = len;
	sge->lkey = s->smr->lkey;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->wr.rdma.remote_addr = (uintptr_t)s->peer->tbuf;
	wr->wr.rdma.rkey = s->peer->tmr->rkey;
	if (r >= 85) {
		wr->opcode = IBV_WR_RDMA_READ;
		*wc_opcode = IBV_WC_RDMA_READ;
		sge->addr = (uintptr_t)s->lbuf;
		sge->lkey = s->lmr->lkey;
	} else if (r < 60 && take_credit(s)) {
		wr->opcode = IBV_WR_SEND;
		*wc_opcode = IBV_WC_SEND;
	} else {
		wr->opcode = IBV_WR_RDMA_WRITE;
		*wc_opcode = IBV_WC_RDMA_WRITE;
	}
	if (wr->opcode != IBV_WR_RDMA_READ && len <= INLINE_MAX &&
	    rand_r(seed) % 2)
		wr->send_flags |= IBV_SEND_INLINE;
	if (rand_r(seed) % 2)
		wr->send_flags |= IBV_SEND_SIGNALED;
}

/*
 * Bookkeeping of a post: WRs from index @k of @n on were refused. Refused
 * Sends give their credit back and leave the list of Send lengths.
 */
static void refuse(struct side *s, struct wq *q, uint32_t first, unsigned int k,
		   unsigned int n, const struct ibv_send_wr *sends)
{
	unsigned int i;

	for (i = k; i < n; i++) {
		q->state[first + i] = WR_REFUSED;
		q->outstanding--;
		q->refused++;
		if (sends && sends[i].opcode == IBV_WR_SEND) {
			s->nsend--;
			atomic_fetch_add(&s->credits, 1);
		}
	}
	q->posted -= n - k;
}

/* The index of *bad in a list of @n WRs at @base, or n + 1 if outside. */
static unsigned int bad_index(const void *base, const void *bad, size_t size,
			      unsigned int n)
{
	const char *b = base, *p = bad;

	if (p < b || p >= b + n * size || (size_t)(p - b) % size)
		return n + 1;
	return (unsigned int)((size_t)(p - b) / size);
}

/*
 * Post @n send WRs at once (their wr_ids are assigned here). Returns the
 * post's result.
 */
static int post_sends(struct side *s, struct ibv_send_wr *wrs, unsigned int n,
		      const uint8_t *wc_opcode)
{
	struct wq *q = &s->sq;
	struct ibv_send_wr *bad = NULL;
	uint32_t first;
	unsigned int i, k;
	int rc;

	pthread_mutex_lock(&q->lock);
	first = q->next;
	for (i = 0; i < n; i++) {
		wrs[i].wr_id = make_id(s->idx, KIND_SQ, first + i);
		wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL;
		q->state[first + i] = wrs[i].send_flags & IBV_SEND_SIGNALED ?
				      WR_POSTED : WR_POSTED_UNSIG;
		q->opcode[first + i] = wc_opcode[i];
		if (wrs[i].opcode == IBV_WR_SEND)
			s->send_len[s->nsend++] = wrs[i].sg_list->length;
	}
	q->next += n;
	q->outstanding += n;
	q->posted += n;
	q->calls++;
	pthread_mutex_unlock(&q->lock);

	rc = ibv_post_send(s->qp, wrs, &bad);
	if (!rc)
		return 0;
	k = bad_index(wrs, bad, sizeof(*wrs), n);
	if (k > n) {
		fail("%s: ibv_post_send failed (%s) with bad_wr outside the list",
		     s->name, strerror(rc));
		k = 0;
	}
	/* Refused Sends are the newest in send_len: no receive can match them. */
	pthread_mutex_lock(&q->lock);
	refuse(s, q, first, k, n, wrs);
	pthread_mutex_unlock(&q->lock);
	if (k > 0)
		fail("%s: ibv_post_send failed (%s) after accepting %u of %u WRs",
		     s->name, strerror(rc), k, n);
	return rc;
}

static void *sender_main(void *arg)
{
	struct side *s = arg;
	unsigned int seed = round_no * 7919 + s->idx;
	struct ibv_send_wr wrs[4];
	struct ibv_sge sges[4];
	uint8_t ops[4];
	unsigned int n, i;

	while (!atomic_load(&stop_send)) {
		n = 1 + rand_r(&seed) % 4;
		if (!wq_room(&s->sq, n, SQ_DEPTH)) {
			usleep(50);
			continue;
		}
		for (i = 0; i < n; i++) {
			make_send(s, &wrs[i], &sges[i], &seed, &ops[i]);
			wrs[i].sg_list = &sges[i];
		}
		wrs[n - 1].send_flags |= IBV_SEND_SIGNALED;
		if (post_sends(s, wrs, n, ops))
			usleep(100);
	}
	return NULL;
}

/* Post @n receives; returns how many the post accepted (0 on ENOMEM too). */
static unsigned int post_recvs(struct side *s, unsigned int n)
{
	struct wq *q = &s->rq;
	struct ibv_recv_wr wrs[4], *bad = NULL;
	struct ibv_sge sges[4];
	uint32_t first;
	unsigned int i, k;
	int rc;

	pthread_mutex_lock(&q->lock);
	first = q->next;
	for (i = 0; i < n; i++) {
		sges[i].addr = (uintptr_t)s->rbuf +
			       (size_t)((first + i) % RQ_DEPTH) * MSG_MAX;
		sges[i].length = MSG_MAX;
		sges[i].lkey = s->rmr->lkey;
		wrs[i].wr_id = make_id(s->idx, KIND_RQ, first + i);
		wrs[i].sg_list = &sges[i];
		wrs[i].num_sge = 1;
		wrs[i].next = i + 1 < n ? &wrs[i + 1] : NULL;
		q->state[first + i] = WR_POSTED;
	}
	q->next += n;
	q->outstanding += n;
	q->posted += n;
	pthread_mutex_unlock(&q->lock);

	rc = s->srq ? ibv_post_srq_recv(s->srq, wrs, &bad) :
		      ibv_post_recv(s->qp, wrs, &bad);
	k = rc ? bad_index(wrs, bad, sizeof(*wrs), n) : n;
	if (k > n) {
		fail("%s: ibv_post_recv failed (%s) with bad_wr outside the list",
		     s->name, strerror(rc));
		k = 0;
	}
	pthread_mutex_lock(&q->lock);
	if (rc == ENOMEM && q->next == first + n) {
		/* The ring is full: libkiwi checked that, no kernel involved. */
		for (i = k; i < n; i++)
			q->state[first + i] = WR_FREE;
		q->next = first + k;
		q->outstanding -= n - k;
		q->posted -= n - k;
	} else if (rc) {
		refuse(s, q, first, k, n, NULL);
		fail("%s: ibv_post_recv failed: %s", s->name, strerror(rc));
	}
	pthread_mutex_unlock(&q->lock);
	atomic_fetch_add(&s->peer->credits, (int)k);
	return k;
}

static void *receiver_main(void *arg)
{
	struct side *s = arg;
	unsigned int seed = round_no * 104729 + s->idx;
	unsigned int n;

	while (!atomic_load(&stop_recv)) {
		if (busy_mode && atomic_load(&s->saw_recv_flush))
			break;
		n = 1 + rand_r(&seed) % 4;
		/*
		 * At most RQ_DEPTH receives whose completions were not polled
		 * yet: the CQ must have room for all of them.
		 */
		if (!wq_room(&s->rq, n, RQ_DEPTH) || post_recvs(s, n) < n) {
			if (busy_mode)
				sched_yield();
			else
				usleep(100);
		}
	}
	return NULL;
}

/*
 * Asynchronous events of the device context. A CQ overrun means the test
 * let completions pile up beyond the CQ's size: a broken test, reported.
 */
static void *async_main(void *arg)
{
	struct ibv_context *ctx = arg;
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	while (!atomic_load(&stop_async)) {
		if (poll(&pfd, 1, 100) != 1 || ibv_get_async_event(ctx, &ev))
			continue;
		if (ev.event_type == IBV_EVENT_CQ_ERR)
			fail("CQ overrun (IBV_EVENT_CQ_ERR)");
		atomic_fetch_add(&async_events, 1);
		ibv_ack_async_event(&ev);
	}
	return NULL;
}

/* --- rounds --------------------------------------------------------- */

static void alloc_side(struct side *s, struct ibv_pd *pd)
{
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ;

	wq_init(&s->sq);
	wq_init(&s->rq);
	s->send_len = calloc(WR_MAX, sizeof(*s->send_len));
	s->sbuf = calloc(1, MSG_MAX);
	s->rbuf = calloc(RQ_DEPTH, MSG_MAX);
	s->tbuf = calloc(1, MSG_MAX);
	s->lbuf = calloc(1, MSG_MAX);
	if (!s->send_len || !s->sbuf || !s->rbuf || !s->tbuf || !s->lbuf)
		vt_fatal("out of memory");
	s->smr = ibv_reg_mr(pd, s->sbuf, MSG_MAX, acc);
	s->rmr = ibv_reg_mr(pd, s->rbuf, (size_t)RQ_DEPTH * MSG_MAX, acc);
	s->tmr = ibv_reg_mr(pd, s->tbuf, MSG_MAX, acc);
	s->lmr = ibv_reg_mr(pd, s->lbuf, MSG_MAX, acc);
	if (!s->smr || !s->rmr || !s->tmr || !s->lmr)
		vt_fatal("ibv_reg_mr: %s", strerror(errno));
}

static void open_cqs(struct side *s, struct ibv_context *ctx)
{
	s->sch = ibv_create_comp_channel(ctx);
	s->rch = ibv_create_comp_channel(ctx);
	if (!s->sch || !s->rch)
		vt_fatal("ibv_create_comp_channel: %s", strerror(errno));
	s->scq = ibv_create_cq(ctx, CQ_DEPTH, NULL, s->sch, 0);
	s->rcq = ibv_create_cq(ctx, CQ_DEPTH, NULL, s->rch, 0);
	if (!s->scq || !s->rcq)
		vt_fatal("ibv_create_cq: %s", strerror(errno));
	wq_reset(&s->sq);
	wq_reset(&s->rq);
	s->nsend = 0;
	s->recv_ok = 0;
	atomic_store(&s->credits, 0);
	atomic_store(&s->saw_recv_flush, false);
}

static void close_cqs(struct side *s)
{
	if (ibv_destroy_cq(s->scq) || ibv_destroy_cq(s->rcq))
		vt_fail("ibv_destroy_cq: %s", strerror(errno));
	if (ibv_destroy_comp_channel(s->sch) ||
	    ibv_destroy_comp_channel(s->rch))
		vt_fail("ibv_destroy_comp_channel: %s", strerror(errno));
}

static struct ibv_qp_init_attr qp_attr(struct side *s)
{
	struct ibv_qp_init_attr a = {
		.send_cq = s->scq,
		.recv_cq = s->rcq,
		.srq = s->srq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = SQ_DEPTH,
			 .max_recv_wr = s->srq ? 0 : RQ_DEPTH,
			 .max_send_sge = 1, .max_recv_sge = s->srq ? 0 : 1,
			 .max_inline_data = INLINE_MAX },
	};

	return a;
}

/* SRQ rounds: the passive QP takes its receives from a new SRQ. */
static void open_srq(struct side *s, struct ibv_pd *pd)
{
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = RQ_DEPTH, .max_sge = 1 },
	};

	s->srq = ibv_create_srq(pd, &sa);
	if (!s->srq)
		vt_fatal("ibv_create_srq: %s", strerror(errno));
}

/*
 * After the QP is gone: receives still in the SRQ were never taken and
 * complete never; they must be the newest (the SRQ is consumed in order).
 */
static void close_srq(struct side *s)
{
	struct wq *q = &s->rq;
	uint32_t j;

	pthread_mutex_lock(&q->lock);
	for (j = q->retired; j < q->next; j++) {
		if (q->state[j] != WR_POSTED)
			continue;
		q->state[j] = WR_DONE;
		q->outstanding--;
		q->left++;
	}
	pthread_mutex_unlock(&q->lock);
	if (ibv_destroy_srq(s->srq))
		vt_fail("ibv_destroy_srq: %s", strerror(errno));
	s->srq = NULL;
}

/*
 * The active QP is not connected yet: a post must be refused from the
 * head of its list, also when a later WR is malformed (2 SGEs where the
 * QP takes 1), and what was refused must never complete.
 */
static void check_unconnected_post(struct side *s)
{
	struct ibv_send_wr wrs[3];
	struct ibv_sge sges[3];
	uint8_t ops[3];
	unsigned int n, i, seed = round_no;
	int rc;

	for (n = 1; n <= 3; n += 2) {
		for (i = 0; i < n; i++) {
			make_send(s, &wrs[i], &sges[i], &seed, &ops[i]);
			wrs[i].sg_list = &sges[i];
			wrs[i].send_flags |= IBV_SEND_SIGNALED;
		}
		if (n == 3)
			wrs[2].num_sge = 2;
		rc = post_sends(s, wrs, n, ops);
		head_checks++;
		if (!rc)
			fail("post of %u WRs to an unconnected QP succeeded", n);
	}
}

static void set_error(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* End the connection in one of four ways, picked by @how. */
static void chaos(struct vt_cm_pair *pair, unsigned int how)
{
	switch (how) {
	case 0:
		set_error(sides[0].qp);
		break;
	case 1:
		set_error(sides[1].qp);
		break;
	case 2:
		set_error(sides[1].qp);
		set_error(sides[0].qp);
		break;
	default:
		rdma_disconnect(pair->active);
		break;
	}
}

/*
 * Wait until every WR completed (receives in an SRQ need not: the SRQ
 * keeps them); false (and a report) after HANG_MS.
 */
static bool wait_quiet(void)
{
	uint64_t t0 = now_ms();
	unsigned int i;
	struct wq *q;

	for (;;) {
		uint32_t left = 0;

		for (i = 0; i < 2; i++)
			left += wq_outstanding(&sides[i].sq) +
				(sides[i].srq ? 0 : wq_outstanding(&sides[i].rq));
		if (!left)
			return true;
		if (now_ms() - t0 > HANG_MS)
			break;
		sleep_ms(10);
	}
	for (i = 0; i < 4; i++) {
		q = i & 1 ? &sides[i / 2].rq : &sides[i / 2].sq;
		pthread_mutex_lock(&q->lock);
		if (q->outstanding && !(i & 1 && sides[i / 2].srq))
			fail("%s %s: %u WRs not completed %u ms after both QPs went to error (oldest seq %u of %u)",
			     sides[i / 2].name, i & 1 ? "receives" : "sends",
			     q->outstanding, HANG_MS, q->retired, q->next);
		pthread_mutex_unlock(&q->lock);
	}
	return false;
}

/*
 * The send doorbells kiwi.ko counted on the device so far (its tx_doorbells
 * hw counter), or -1 if there is no such counter. Both QPs of this process
 * are the device's only ones while it runs.
 */
static long long read_doorbells(struct ibv_context *ctx)
{
	char path[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/tx_doorbells",
		 ibv_get_device_name(ctx->device));
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static uint64_t send_calls(void)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		pthread_mutex_lock(&sides[i].sq.lock);
		n += sides[i].sq.calls;
		pthread_mutex_unlock(&sides[i].sq.lock);
	}
	return n;
}

/*
 * Sends posted and doorbells rung while both QPs are connected: no receive
 * rings then (only in the error state), so every doorbell is a send's, and
 * a post that found TX running rang none.
 */
static void count_connected(struct ibv_context *ctx, uint64_t calls0,
			    long long db0)
{
	long long db1 = read_doorbells(ctx);

	if (db0 < 0 || db1 < db0) {
		doorbells_known = false;
		return;
	}
	conn_calls += send_calls() - calls0;
	conn_doorbells += (uint64_t)(db1 - db0);
}

static bool run_round(struct vt_cm *cm, struct ibv_pd *pd, unsigned int *seed)
{
	struct ibv_qp_init_attr a0, a1;
	struct waiter w[4];
	pthread_t snd[2], rcv[2];
	struct vt_cm_pair pair;
	unsigned int i, how;
	uint64_t calls0;
	long long db0;
	bool quiet;

	busy_mode = round_no % 3 == 0;
	for (i = 0; i < 2; i++)
		open_cqs(&sides[i], cm->verbs);
	if (round_no % 2 == 0)
		open_srq(&sides[1], pd);
	a0 = qp_attr(&sides[0]);
	a1 = qp_attr(&sides[1]);
	vt_cm_prepare(cm, &pair, pd, &a0);
	sides[0].qp = pair.active->qp;
	atomic_store(&stop_wait, false);
	for (i = 0; i < 4; i++) {
		w[i] = (struct waiter){ .s = &sides[i / 2], .recv = i & 1 };
		if (pthread_create(&w[i].thread, NULL, waiter_main, &w[i]))
			vt_fatal("pthread_create failed");
	}
	check_unconnected_post(&sides[0]);
	vt_cm_establish(cm, &pair, pd, &a1);
	sides[1].qp = pair.passive->qp;

	atomic_store(&stop_send, false);
	atomic_store(&stop_recv, false);
	calls0 = send_calls();
	db0 = read_doorbells(cm->verbs);
	for (i = 0; i < 2; i++) {
		if (pthread_create(&rcv[i], NULL, receiver_main, &sides[i]) ||
		    pthread_create(&snd[i], NULL, sender_main, &sides[i]))
			vt_fatal("pthread_create failed");
	}
	sleep_ms(30 + rand_r(seed) % 271);
	count_connected(cm->verbs, calls0, db0);
	how = rand_r(seed) % 4;
	chaos(&pair, how);
	sleep_ms(busy_mode ? 50 : rand_r(seed) % 51);
	atomic_store(&stop_recv, true);
	atomic_store(&stop_send, true);
	for (i = 0; i < 2; i++) {
		pthread_join(snd[i], NULL);
		pthread_join(rcv[i], NULL);
	}
	set_error(sides[0].qp);
	set_error(sides[1].qp);
	quiet = wait_quiet();
	if (sides[1].srq)
		sleep_ms(500); /* a receive RX took is flushed at detach */
	atomic_store(&stop_wait, true);
	for (i = 0; i < 4; i++) {
		pthread_join(w[i].thread, NULL);
		total_events += w[i].events;
	}
	vt_cm_teardown(cm, &pair);
	if (sides[1].srq)
		close_srq(&sides[1]);
	for (i = 0; i < 2; i++)
		close_cqs(&sides[i]);
	return quiet;
}

static void summary(unsigned int rounds, uint64_t ms)
{
	uint64_t sp = 0, so = 0, sf = 0, ss = 0, sr = 0, sc = 0;
	uint64_t rp = 0, ro = 0, rf = 0, rl = 0;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		sp += sides[i].sq.posted;
		so += sides[i].sq.ok;
		sf += sides[i].sq.flushed;
		ss += sides[i].sq.silent;
		sr += sides[i].sq.refused;
		sc += sides[i].sq.calls;
		rp += sides[i].rq.posted;
		ro += sides[i].rq.ok;
		rf += sides[i].rq.flushed;
		rl += sides[i].rq.left;
	}
	printf("vt_stress: %u rounds in %" PRIu64 " ms\n", rounds, ms);
	printf("vt_stress: send WRs accepted %" PRIu64 ": %" PRIu64 " ok, %" PRIu64
	       " flushed, %" PRIu64 " unsignaled retired; %" PRIu64
	       " refused (%lu unconnected-post checks)\n",
	       sp, so, sf, ss, sr, head_checks);
	printf("vt_stress: ibv_post_send calls %" PRIu64 "\n", sc);
	/* 65-ring-stress checks that some posts skipped the doorbell. */
	if (doorbells_known)
		printf("vt_stress: while connected: ibv_post_send calls %" PRIu64
		       ", doorbells %" PRIu64 "\n", conn_calls, conn_doorbells);
	else
		printf("vt_stress: while connected: doorbells not counted (no tx_doorbells counter)\n");
	printf("vt_stress: receive WRs accepted %" PRIu64 ": %" PRIu64
	       " ok, %" PRIu64 " flushed, %" PRIu64 " left in an SRQ\n", rp,
	       ro, rf, rl);
	printf("vt_stress: completion events %lu, lost %lu; async events %lu\n",
	       total_events, lost_events, atomic_load(&async_events));
}

static void usage(void)
{
	fprintf(stderr,
		"usage: vt_stress -a ADDR [-p PORT] [-t SECONDS] [-r ROUNDS] [-S SEED]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *addr = NULL, *port = "7471";
	unsigned long secs = 40, max_rounds = 0;
	unsigned int seed = (unsigned int)time(NULL), rounds = 0;
	struct ibv_pd *pd;
	struct vt_cm cm;
	pthread_t async;
	uint64_t t0;
	int c;

	vt_init("vt_stress");
	while ((c = getopt(argc, argv, "a:p:t:r:S:")) != -1) {
		switch (c) {
		case 'a': addr = optarg; break;
		case 'p': port = optarg; break;
		case 't': secs = vt_ulong("-t", optarg); break;
		case 'r': max_rounds = vt_ulong("-r", optarg); break;
		case 'S': seed = (unsigned int)vt_ulong("-S", optarg); break;
		default: usage();
		}
	}
	if (!addr || optind != argc)
		usage();
	printf("vt_stress: seed %u, %lu s%s\n", seed, secs,
	       max_rounds ? ", limited rounds" : "");
	vt_cm_listen(&cm, addr, port);
	pd = ibv_alloc_pd(cm.verbs);
	if (!pd)
		vt_fatal("ibv_alloc_pd: %s", strerror(errno));
	sides[0] = (struct side){ .name = "active", .idx = 0, .peer = &sides[1] };
	sides[1] = (struct side){ .name = "passive", .idx = 1, .peer = &sides[0] };
	alloc_side(&sides[0], pd);
	alloc_side(&sides[1], pd);

	if (pthread_create(&async, NULL, async_main, cm.verbs))
		vt_fatal("pthread_create failed");
	t0 = now_ms();
	do {
		round_no++;
		rounds++;
		if (!run_round(&cm, pd, &seed))
			break;
	} while (now_ms() - t0 < secs * 1000 &&
		 (!max_rounds || rounds < max_rounds));
	summary(rounds, now_ms() - t0);
	atomic_store(&stop_async, true);
	pthread_join(async, NULL);
	vt_cm_close(&cm);
	return vt_exit();
}
