// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_integrity: data-integrity test between two hosts over rdma_cm (RC).
 *
 *   vt_integrity -s [-a BIND_ADDR] [-p PORT] [options]     server
 *   vt_integrity -c PEER_ADDR [-p PORT] [options]          client
 *
 * Options (both sides must agree): --srq (receives through an SRQ),
 * --no-inv (skip Send with Invalidate), --imm (RFC 7306 immediate data too),
 * --imm-refused[=send] (the peer lacks RFC 7306; see below), --quick (fewer
 * sizes), --max BYTES (largest message, default 1 MiB).
 *
 * After connecting, each side in turn drives and the other responds (the
 * client first, then the server), so every operation runs in both
 * directions. For each message size from 1 B to --max (powers of two and
 * their neighbours, odd offsets on both sides) the driver does:
 *   RDMA Write  into the responder's buffer; the responder checks every
 *               byte and that the bytes around the target are untouched;
 *   RDMA Read   of a region the responder filled; the driver checks it and
 *               the bytes around its local target;
 *   Send        two SGEs (header + payload at an odd address) into a receive
 *               at an odd address; the responder checks length and payload;
 *   Send with Invalidate (some sizes): as Send, invalidating an MR of the
 *               responder, which checks the completion names that rkey;
 *   with --imm, RDMA Write with Immediate (every size) and Send with
 *               Immediate without payload (some sizes), with and without
 *               IBV_SEND_SOLICITED in turn: the responder checks the
 *               completion (opcode, length, IBV_WC_WITH_IMM, the value),
 *               the written bytes, and that its receive CQ, armed for
 *               solicited completions only, raised an event exactly for
 *               the solicited ones.
 * With --imm-refused the client sends one RDMA Write with Immediate (with
 * --imm-refused=send one Send with Immediate, no payload) after
 * the buffer exchange and must see it complete with IBV_WC_REM_OP_ERR (a
 * peer without RFC 7306 answers with a Terminate), and the server must see
 * its receives flushed and its own description complete, with any status
 * (imm_refused_info_sent()); both then exit 0. A success, or no completion
 * within the time limit, fails.
 * The server drives last: once its final Send has completed it
 * disconnects, and the client waits for that (RDMA_CM_EVENT_DISCONNECTED):
 * the side whose Send is the last message closes first. Linux siw fails a
 * Send it has wholly sent when the peer's FIN arrives before its TX thread
 * marks it done (siw_qp_tx.c checks tx_suspend before the last-segment
 * flag), which a peer that closes as soon as it has the message provokes
 * (Documentation/interop.md).
 * Control messages (check this, fill that, result) are Sends too. Exit 0
 * when every byte matched, 1 on a mismatch or a failed work request, 2 on a
 * setup or connection error (message on stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define GUARD_BYTE 0xa5
#define GUARD 256		/* bytes checked on each side of a target */
#define SLACK 8192		/* room for offsets inside the buffers */
#define HDR 64			/* message header in front of Send payloads */
#define NSLOTS 4		/* receives posted at any time */
#define PAT_LEN 1048583u	/* pattern period: a prime above 1 MiB */
#define WAIT_MS 60000		/* a completion or CM event later than this fails */

enum msg_type {
	MSG_INFO = 1,	/* buffer address, rkeys */
	MSG_CHECK,	/* responder: check the Write target */
	MSG_FILL,	/* responder: fill a region to be read */
	MSG_CLEAR,	/* responder: restore the guard after a Read */
	MSG_DATA,	/* Send payload to check */
	MSG_RESULT,	/* answer: status, first bad offset, new inv rkey */
	MSG_DONE,	/* driver finished: roles swap */
	MSG_CHECK_IMM,	/* responder: check the immediate completion before */
};

/* MSG_CHECK_IMM kind bits */
#define IMM_WRITE	0x1	/* RDMA Write with Immediate (else Send) */
#define IMM_SOLICITED	0x2	/* sent with IBV_SEND_SOLICITED */

struct msg {
	uint32_t type;
	uint32_t seq;
	uint64_t off;
	uint64_t len;
	uint64_t addr;		/* INFO: buffer address */
	uint32_t rkey;		/* INFO: buffer rkey */
	uint32_t inv_rkey;	/* INFO, RESULT: rkey the driver may invalidate */
	int32_t status;		/* RESULT: 0 or the first bad offset + 1 */
	uint32_t imm;		/* CHECK_IMM: the value sent (network order) */
	uint32_t imm_kind;	/* CHECK_IMM: IMM_* bits */
	uint32_t pad;
};

_Static_assert(sizeof(struct msg) <= HDR, "header too big");

struct ctx {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *listen_id, *id;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq;
	struct ibv_comp_channel *rch;	/* --imm: events of rcq */
	struct ibv_wc imm_wc;		/* an immediate completion to check */
	bool have_imm;
	uint8_t *buf, *ctl, *rx, *inv_buf;
	size_t buf_len, rx_slot;
	struct ibv_mr *buf_mr, *ctl_mr, *rx_mr, *inv_mr;
	uint64_t peer_addr;
	uint32_t peer_rkey, peer_inv_rkey;
	bool server, use_srq, use_inv, use_imm, imm_refused, imm_send, quick;
	size_t max;
	uint8_t *pat;
	unsigned long ops[6], bytes;
};

static const char *prog = "vt_integrity";

static void __attribute__((noreturn, format(printf, 2, 3)))
die(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

/* pattern byte i of message seq: a pseudo-random stream, shifted per seq. */
static void fill(struct ctx *c, uint8_t *dst, uint32_t seq, size_t len)
{
	size_t start = ((size_t)seq * 7919u) % PAT_LEN, n;

	while (len) {
		n = PAT_LEN - start < len ? PAT_LEN - start : len;
		memcpy(dst, c->pat + start, n);
		dst += n;
		len -= n;
		start = 0;
	}
}

/* 0 if dst holds pattern seq, else the first bad offset + 1. */
static size_t verify(struct ctx *c, const uint8_t *p, uint32_t seq, size_t len)
{
	size_t start = ((size_t)seq * 7919u) % PAT_LEN, done = 0, n, i;

	while (done < len) {
		n = PAT_LEN - start < len - done ? PAT_LEN - start : len - done;
		if (memcmp(p + done, c->pat + start, n)) {
			for (i = 0; i < n; i++)
				if (p[done + i] != c->pat[start + i])
					return done + i + 1;
		}
		done += n;
		start = 0;
	}
	return 0;
}

/* 0 if the GUARD bytes around [off, off+len) of buf are untouched. */
static size_t guard_ok(struct ctx *c, size_t off, size_t len)
{
	size_t i;

	for (i = 0; i < GUARD; i++) {
		if (c->buf[off - GUARD + i] != GUARD_BYTE)
			return off - GUARD + i + 1;
		if (c->buf[off + len + i] != GUARD_BYTE)
			return off + len + i + 1;
	}
	return 0;
}

static void reguard(struct ctx *c, size_t off, size_t len)
{
	memset(c->buf + off - GUARD, GUARD_BYTE, len + 2 * GUARD);
}

static void make_pattern(struct ctx *c)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	size_t i;

	c->pat = malloc(PAT_LEN);
	if (!c->pat)
		die(2, "out of memory");
	for (i = 0; i < PAT_LEN; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		c->pat[i] = (uint8_t)(x >> 24);
	}
}

static struct ibv_mr *reg(struct ctx *c, void *p, size_t len)
{
	struct ibv_mr *mr = ibv_reg_mr(c->pd, p, len, IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ);

	if (!mr)
		die(2, "ibv_reg_mr(%zu bytes): %s", len, strerror(errno));
	return mr;
}

static void *zalloc(size_t len)
{
	void *p = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);

	if (!p)
		die(2, "out of memory (%zu bytes)", len);
	memset(p, 0, len);
	return p;
}

static long elapsed_ms(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * A wait that times out first runs $VT_INTEGRITY_STUCK_CMD, which the pair
 * case sets to show the TCP connections (octets unread, Recv-Q, and unsent,
 * Send-Q) and the QPs: whether a silent peer never got the message or got
 * it and never read it shows there.
 */
static void stuck_report(void)
{
	const char *cmd = getenv("VT_INTEGRITY_STUCK_CMD");

	if (!cmd || !*cmd)
		return;
	fflush(stdout);
	if (system(cmd) == -1)
		perror("VT_INTEGRITY_STUCK_CMD");
}

/* Poll cq for one completion; fail on error status or after WAIT_MS. */
static void wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	struct timespec t0;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			die(1, "%s: ibv_poll_cq failed", what);
		if (n == 1)
			break;
		if (elapsed_ms(&t0) > WAIT_MS) {
			stuck_report();
			die(1, "%s: no completion after %d ms", what, WAIT_MS);
		}
	}
	if (wc->status != IBV_WC_SUCCESS)
		die(1, "%s: completion status %s (%d), vendor_err %u", what,
		    ibv_wc_status_str(wc->status), wc->status, wc->vendor_err);
}

static void post_recv_slot(struct ctx *c, unsigned int slot)
{
	/* odd start address inside the slot: 1, 3, 5 or 7 */
	struct ibv_sge sge = {
		.addr = (uintptr_t)(c->rx + slot * c->rx_slot + 2 * slot + 1),
		.length = (uint32_t)(HDR + c->max),
		.lkey = c->rx_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int rc;

	if (c->use_srq)
		rc = ibv_post_srq_recv(c->srq, &wr, &bad);
	else
		rc = ibv_post_recv(c->id->qp, &wr, &bad);
	if (rc)
		die(1, "post receive: %s", strerror(rc));
}

static uint8_t *slot_data(struct ctx *c, uint64_t slot)
{
	return c->rx + slot * c->rx_slot + 2 * slot + 1;
}

/* Post a signaled send WR; its completion is the caller's to reap. */
static void post_send_only(struct ctx *c, struct ibv_send_wr *wr,
			   const char *what)
{
	struct ibv_send_wr *bad;
	int rc;

	wr->send_flags |= IBV_SEND_SIGNALED;
	rc = ibv_post_send(c->id->qp, wr, &bad);
	if (rc)
		die(1, "%s: ibv_post_send: %s", what, strerror(rc));
}

static void post_send(struct ctx *c, struct ibv_send_wr *wr, const char *what)
{
	struct ibv_wc wc;

	post_send_only(c, wr, what);
	wait_wc(c->scq, &wc, what);
}

/*
 * Post the control message in c->ctl (payload: len bytes of buf at off);
 * with @wait, wait for its successful completion.
 */
static void post_msg(struct ctx *c, const struct msg *m, size_t off,
		     size_t len, int opcode, uint32_t inv_rkey, bool wait)
{
	struct ibv_sge sge[2] = {
		{ (uintptr_t)c->ctl, HDR, c->ctl_mr->lkey },
		{ (uintptr_t)(c->buf + off), (uint32_t)len, c->buf_mr->lkey },
	};
	struct ibv_send_wr wr = {
		.sg_list = sge,
		.num_sge = len ? 2 : 1,
		.opcode = opcode,
	};

	memset(c->ctl, 0, HDR);
	memcpy(c->ctl, m, sizeof(*m));
	if (opcode == IBV_WR_SEND_WITH_INV)
		wr.invalidate_rkey = inv_rkey;
	if (wait)
		post_send(c, &wr, "send");
	else
		post_send_only(c, &wr, "send");
}

static void send_msg(struct ctx *c, const struct msg *m, size_t off,
		     size_t len, int opcode, uint32_t inv_rkey)
{
	post_msg(c, m, off, len, opcode, inv_rkey, true);
}

/*
 * Wait for the next message; *slot is reposted by the caller (repost). An
 * immediate completion on the way is kept for the MSG_CHECK_IMM after it.
 */
static struct msg recv_msg(struct ctx *c, struct ibv_wc *wc)
{
	struct msg m;

	wait_wc(c->rcq, wc, "receive");
	while (wc->wc_flags & IBV_WC_WITH_IMM) {
		if (!c->use_imm || c->have_imm)
			die(1, "unexpected immediate completion (opcode %d, value %#x)",
			    wc->opcode, wc->imm_data);
		c->imm_wc = *wc;
		c->have_imm = true;
		post_recv_slot(c, (unsigned int)wc->wr_id);
		wait_wc(c->rcq, wc, "receive");
	}
	if (wc->opcode != IBV_WC_RECV)
		die(1, "receive completion with opcode %d", wc->opcode);
	if (wc->byte_len < HDR)
		die(1, "received %u bytes, less than a header", wc->byte_len);
	memcpy(&m, slot_data(c, wc->wr_id), sizeof(m));
	return m;
}

static void rdma_op(struct ctx *c, int opcode, size_t loff, uint64_t roff,
		    size_t len, const char *what)
{
	struct ibv_sge sge = { (uintptr_t)(c->buf + loff), (uint32_t)len,
			       c->buf_mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = opcode,
		.wr.rdma = { c->peer_addr + roff, c->peer_rkey },
	};

	post_send(c, &wr, what);
}

static struct msg result_of(struct ctx *c, const char *what, uint32_t seq,
			    size_t len)
{
	struct ibv_wc wc;
	struct msg r = recv_msg(c, &wc);

	post_recv_slot(c, (unsigned int)wc.wr_id);
	if (r.type != MSG_RESULT || r.seq != seq)
		die(1, "%s seq %u: expected a result, got type %u seq %u", what,
		    seq, r.type, r.seq);
	if (r.status)
		die(1, "%s of %zu bytes (seq %u): the peer found byte %d wrong",
		    what, len, seq, r.status - 1);
	return r;
}

/* --- driver: one step of each kind --------------------------------------- */

static void drive_write(struct ctx *c, uint32_t seq, size_t loff, size_t roff,
			size_t len)
{
	struct msg m = { .type = MSG_CHECK, .seq = seq, .off = roff, .len = len };

	fill(c, c->buf + loff, seq, len);
	rdma_op(c, IBV_WR_RDMA_WRITE, loff, roff, len, "RDMA Write");
	send_msg(c, &m, 0, 0, IBV_WR_SEND, 0);
	result_of(c, "RDMA Write", seq, len);
	c->ops[0]++;
}

static void drive_read(struct ctx *c, uint32_t seq, size_t loff, size_t roff,
		       size_t len)
{
	struct msg m = { .type = MSG_FILL, .seq = seq, .off = roff, .len = len };
	size_t bad;

	send_msg(c, &m, 0, 0, IBV_WR_SEND, 0);
	result_of(c, "fill for RDMA Read", seq, len);
	reguard(c, loff, len);
	rdma_op(c, IBV_WR_RDMA_READ, loff, roff, len, "RDMA Read");
	bad = verify(c, c->buf + loff, seq, len);
	if (bad)
		die(1, "RDMA Read of %zu bytes (seq %u): byte %zu wrong", len,
		    seq, bad - 1);
	bad = guard_ok(c, loff, len);
	if (bad)
		die(1, "RDMA Read of %zu bytes (seq %u): byte %zu outside the target changed",
		    len, seq, bad - 1);
	reguard(c, loff, len);
	m.type = MSG_CLEAR;
	send_msg(c, &m, 0, 0, IBV_WR_SEND, 0);
	result_of(c, "clear after RDMA Read", seq, len);
	c->ops[1]++;
}

static void drive_send(struct ctx *c, uint32_t seq, size_t loff, size_t len,
		       bool inv)
{
	struct msg m = { .type = MSG_DATA, .seq = seq, .len = len };
	struct msg r;

	fill(c, c->buf + loff, seq, len);
	if (inv) {
		m.addr = c->peer_inv_rkey;
		send_msg(c, &m, loff, len, IBV_WR_SEND_WITH_INV, c->peer_inv_rkey);
	} else {
		send_msg(c, &m, loff, len, IBV_WR_SEND, 0);
	}
	r = result_of(c, inv ? "Send with Invalidate" : "Send", seq, len);
	if (inv)
		c->peer_inv_rkey = r.inv_rkey;
	reguard(c, loff, len);
	c->ops[inv ? 3 : 2]++;
}

/* The immediate value of step seq: every bit pattern differs per step. */
static uint32_t imm_of(uint32_t seq)
{
	return htonl(seq * 0x9e3779b1u);
}

/*
 * RDMA Write with Immediate of len bytes, or Send with Immediate without
 * payload, then a MSG_CHECK_IMM the responder answers.
 */
static void drive_imm(struct ctx *c, uint32_t seq, size_t loff, size_t roff,
		      size_t len, uint32_t kind)
{
	struct msg m = { .type = MSG_CHECK_IMM, .seq = seq, .off = roff,
			 .imm = imm_of(seq), .imm_kind = kind };
	struct ibv_sge sge = { (uintptr_t)(c->buf + loff), (uint32_t)len,
			       c->buf_mr->lkey };
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_SEND_WITH_IMM,
		.imm_data = m.imm,
		.send_flags = kind & IMM_SOLICITED ? IBV_SEND_SOLICITED : 0,
	};

	if (kind & IMM_WRITE) {
		fill(c, c->buf + loff, seq, len);
		m.len = len;
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.rdma.remote_addr = c->peer_addr + roff;
		wr.wr.rdma.rkey = c->peer_rkey;
	}
	post_send(c, &wr, kind & IMM_WRITE ? "RDMA Write with Immediate" :
					     "Send with Immediate");
	send_msg(c, &m, 0, 0, IBV_WR_SEND, 0);
	result_of(c, kind & IMM_WRITE ? "RDMA Write with Immediate" :
					"Send with Immediate", seq, len);
	if (kind & IMM_WRITE)
		reguard(c, loff, len); /* the buffer is the peer's target next */
	c->ops[kind & IMM_WRITE ? 4 : 5]++;
}

static const size_t sizes[] = {
	1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 65, 127, 128, 255, 256, 257,
	511, 512, 1023, 1024, 1460, 1500, 2047, 2048, 4095, 4096, 4097, 8191,
	8192, 8193, 16384, 32767, 65535, 65536, 65537, 131075, 262144, 524287,
	1048575, 1048576,
};

static const size_t offsets[] = { 0, 1, 3, 5, 7, 13, 511, 4093 };

static void drive(struct ctx *c)
{
	size_t i, n = sizeof(sizes) / sizeof(sizes[0]), len, lo, ro;
	uint32_t seq = c->server ? 100000 : 1;
	struct msg m = { .type = MSG_DONE };

	for (i = 0; i < n; i++) {
		len = sizes[i];
		if (len > c->max || (c->quick && i % 3 && i != n - 1))
			continue;
		lo = GUARD + offsets[i % 8];
		ro = GUARD + offsets[(i + 3) % 8];
		drive_write(c, seq++, lo, ro, len);
		drive_read(c, seq++, lo, ro, len);
		drive_send(c, seq++, lo, len, false);
		if (c->use_inv && i % 4 == 0)
			drive_send(c, seq++, lo, len, true);
		c->bytes += 3 * len;
		if (!c->use_imm)
			continue;
		drive_imm(c, seq++, lo, ro, len,
			  IMM_WRITE | (i % 2 ? IMM_SOLICITED : 0));
		if (i % 4 == 0)
			drive_imm(c, seq++, lo, ro, 0, i % 8 ? IMM_SOLICITED : 0);
		c->bytes += len;
	}
	send_msg(c, &m, 0, 0, IBV_WR_SEND, 0);
	printf("%s: drove %lu RDMA Writes, %lu RDMA Reads, %lu Sends, %lu Sends with Invalidate, %lu RDMA Writes with Immediate, %lu Sends with Immediate (%lu bytes) - all verified by the receiver\n",
	       prog, c->ops[0], c->ops[1], c->ops[2], c->ops[3], c->ops[4],
	       c->ops[5], c->bytes);
}

/* --- responder ----------------------------------------------------------- */

static struct ibv_mr *new_inv_mr(struct ctx *c)
{
	return reg(c, c->inv_buf, 4096);
}

static int32_t check_data(struct ctx *c, const struct ibv_wc *wc,
			  const struct msg *m)
{
	size_t bad;

	if (m->len > c->max || wc->byte_len != HDR + m->len) {
		fprintf(stderr, "%s: Send seq %u: received %u bytes, expected %" PRIu64 "\n",
			prog, m->seq, wc->byte_len, HDR + m->len);
		return 1;
	}
	bad = verify(c, slot_data(c, wc->wr_id) + HDR, m->seq, m->len);
	if (bad)
		return (int32_t)bad;
	if (!m->addr)
		return 0;
	/* Send with Invalidate: the completion names the rkey, which is dead */
	if (!(wc->wc_flags & IBV_WC_WITH_INV) || wc->invalidated_rkey != m->addr) {
		fprintf(stderr, "%s: Send with Invalidate seq %u: wc_flags %#x, invalidated rkey %#x, expected %#" PRIx64 "\n",
			prog, m->seq, wc->wc_flags, wc->invalidated_rkey, m->addr);
		return 1;
	}
	if (ibv_dereg_mr(c->inv_mr))
		die(1, "ibv_dereg_mr of the invalidated MR failed");
	c->inv_mr = new_inv_mr(c);
	return 0;
}

/* --imm: did rcq raise a (solicited) event since the last check? Re-arm. */
static bool imm_event(struct ctx *c)
{
	struct pollfd pfd = { .fd = c->rch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *cq_ctx;

	if (poll(&pfd, 1, 0) != 1)
		return false;
	if (ibv_get_cq_event(c->rch, &cq, &cq_ctx))
		die(1, "ibv_get_cq_event: %s", strerror(errno));
	ibv_ack_cq_events(cq, 1);
	if (ibv_req_notify_cq(c->rcq, 1))
		die(1, "ibv_req_notify_cq");
	return true;
}

/* MSG_CHECK_IMM: the immediate completion received before it. */
static int32_t check_imm(struct ctx *c, const struct msg *m)
{
	const struct ibv_wc *wc = &c->imm_wc;
	bool write = m->imm_kind & IMM_WRITE, se = m->imm_kind & IMM_SOLICITED;
	enum ibv_wc_opcode op = write ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
	bool event = imm_event(c);
	size_t bad;

	if (!c->have_imm) {
		fprintf(stderr, "%s: seq %u: no immediate completion arrived\n",
			prog, m->seq);
		return 1;
	}
	c->have_imm = false;
	if (wc->opcode != op || wc->byte_len != m->len ||
	    wc->imm_data != m->imm || event != se) {
		fprintf(stderr, "%s: seq %u: immediate completion opcode %d length %u value %#x event %d, expected %d %" PRIu64 " %#x %d\n",
			prog, m->seq, wc->opcode, wc->byte_len, wc->imm_data,
			event, op, m->len, m->imm, se);
		return 1;
	}
	if (!write)
		return 0;
	bad = verify(c, c->buf + m->off, m->seq, m->len);
	if (!bad)
		bad = guard_ok(c, m->off, m->len);
	if (bad)
		fprintf(stderr, "%s: RDMA Write with Immediate seq %u of %" PRIu64 " bytes: byte %zu wrong\n",
			prog, m->seq, m->len, bad - 1);
	reguard(c, m->off, m->len);
	return (int32_t)bad;
}

static void respond(struct ctx *c)
{
	struct ibv_wc wc;
	struct msg m, r;
	size_t bad;

	for (;;) {
		m = recv_msg(c, &wc);
		memset(&r, 0, sizeof(r));
		r.type = MSG_RESULT;
		r.seq = m.seq;
		if ((m.type == MSG_CHECK || m.type == MSG_FILL ||
		     m.type == MSG_CLEAR || m.type == MSG_CHECK_IMM) &&
		    (m.off < GUARD || m.off > SLACK || m.len > c->max))
			die(1, "bad request type %u off %" PRIu64 " len %" PRIu64,
			    m.type, m.off, m.len);
		switch (m.type) {
		case MSG_CHECK:
			bad = verify(c, c->buf + m.off, m.seq, m.len);
			if (!bad && guard_ok(c, m.off, m.len))
				bad = guard_ok(c, m.off, m.len);
			if (bad)
				fprintf(stderr, "%s: RDMA Write seq %u of %" PRIu64 " bytes: byte %zu wrong\n",
					prog, m.seq, m.len, bad - 1);
			r.status = (int32_t)bad;
			reguard(c, m.off, m.len);
			break;
		case MSG_FILL:
			fill(c, c->buf + m.off, m.seq, m.len);
			break;
		case MSG_CLEAR:
			reguard(c, m.off, m.len);
			break;
		case MSG_DATA:
			r.status = check_data(c, &wc, &m);
			break;
		case MSG_CHECK_IMM:
			r.status = check_imm(c, &m);
			break;
		case MSG_DONE:
			post_recv_slot(c, (unsigned int)wc.wr_id);
			return;
		default:
			die(1, "unexpected message type %u", m.type);
		}
		r.inv_rkey = c->inv_mr->rkey;
		post_recv_slot(c, (unsigned int)wc.wr_id);
		send_msg(c, &r, 0, 0, IBV_WR_SEND, 0);
	}
}

/* --- setup --------------------------------------------------------------- */

static struct rdma_cm_event *cm_wait(struct ctx *c, enum rdma_cm_event_type want)
{
	struct pollfd pfd = { .fd = c->ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, WAIT_MS) != 1)
		die(2, "no %s within %d ms", rdma_event_str(want), WAIT_MS);
	if (rdma_get_cm_event(c->ec, &ev))
		die(2, "rdma_get_cm_event: %s", strerror(errno));
	if (ev->event != want)
		die(2, "expected %s, got %s (status %d)", rdma_event_str(want),
		    rdma_event_str(ev->event), ev->status);
	return ev;
}

static void setup_resources(struct ctx *c, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = { 0 };
	struct ibv_srq_init_attr sa = { 0 };
	unsigned int i;

	c->pd = ibv_alloc_pd(id->verbs);
	if (c->use_imm) {
		c->rch = ibv_create_comp_channel(id->verbs);
		if (!c->rch)
			die(2, "ibv_create_comp_channel: %s", strerror(errno));
	}
	c->scq = ibv_create_cq(id->verbs, 16, NULL, NULL, 0);
	c->rcq = ibv_create_cq(id->verbs, 16, NULL, c->rch, 0);
	if (!c->pd || !c->scq || !c->rcq)
		die(2, "PD/CQ creation failed: %s", strerror(errno));
	if (c->rch && ibv_req_notify_cq(c->rcq, 1))
		die(2, "ibv_req_notify_cq failed");
	c->buf_len = c->max + SLACK + 2 * GUARD;
	c->buf = zalloc(c->buf_len);
	memset(c->buf, GUARD_BYTE, c->buf_len);
	c->ctl = zalloc(HDR);
	c->rx_slot = HDR + c->max + 16;
	c->rx = zalloc(NSLOTS * c->rx_slot);
	c->inv_buf = zalloc(4096);
	c->buf_mr = reg(c, c->buf, c->buf_len);
	c->ctl_mr = reg(c, c->ctl, HDR);
	c->rx_mr = reg(c, c->rx, NSLOTS * c->rx_slot);
	c->inv_mr = new_inv_mr(c);
	if (c->use_srq) {
		sa.attr.max_wr = NSLOTS;
		sa.attr.max_sge = 1;
		c->srq = ibv_create_srq(c->pd, &sa);
		if (!c->srq)
			die(2, "ibv_create_srq: %s", strerror(errno));
		qa.srq = c->srq;
	}
	qa.send_cq = c->scq;
	qa.recv_cq = c->rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 8;
	qa.cap.max_recv_wr = c->use_srq ? 0 : NSLOTS;
	qa.cap.max_send_sge = 2;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, c->pd, &qa))
		die(2, "rdma_create_qp: %s", strerror(errno));
	c->id = id;
	for (i = 0; i < NSLOTS; i++)
		post_recv_slot(c, i);
}

static void resolve(const char *host, const char *port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC }, *ai;
	int rc = getaddrinfo(host, port, &hints, &ai);

	if (rc)
		die(2, "%s: %s", host ? host : "(any)", gai_strerror(rc));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
}

static void conn_params(struct rdma_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	p->responder_resources = 1;
	p->initiator_depth = 1;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

static void run_server(struct ctx *c, const char *bind, const char *port)
{
	struct sockaddr_storage ss;
	struct rdma_conn_param p;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	resolve(bind, port, &ss);
	if (rdma_create_id(c->ec, &c->listen_id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(c->listen_id, (struct sockaddr *)&ss) ||
	    rdma_listen(c->listen_id, 1))
		die(2, "listen on %s port %s: %s", bind ? bind : "*", port,
		    strerror(errno));
	printf("%s: listening on port %s\n", prog, port);
	fflush(stdout);
	ev = cm_wait(c, RDMA_CM_EVENT_CONNECT_REQUEST);
	id = ev->id;
	rdma_ack_cm_event(ev);
	setup_resources(c, id);
	conn_params(&p);
	if (rdma_accept(id, &p))
		die(2, "rdma_accept: %s", strerror(errno));
	rdma_ack_cm_event(cm_wait(c, RDMA_CM_EVENT_ESTABLISHED));
}

static void run_client(struct ctx *c, const char *peer, const char *port)
{
	struct sockaddr_storage ss;
	struct rdma_conn_param p;
	struct rdma_cm_id *id;

	resolve(peer, port, &ss);
	if (rdma_create_id(c->ec, &id, NULL, RDMA_PS_TCP))
		die(2, "rdma_create_id: %s", strerror(errno));
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&ss, 5000))
		die(2, "rdma_resolve_addr: %s", strerror(errno));
	rdma_ack_cm_event(cm_wait(c, RDMA_CM_EVENT_ADDR_RESOLVED));
	if (rdma_resolve_route(id, 5000))
		die(2, "rdma_resolve_route: %s", strerror(errno));
	rdma_ack_cm_event(cm_wait(c, RDMA_CM_EVENT_ROUTE_RESOLVED));
	setup_resources(c, id);
	conn_params(&p);
	if (rdma_connect(id, &p))
		die(2, "rdma_connect: %s", strerror(errno));
	rdma_ack_cm_event(cm_wait(c, RDMA_CM_EVENT_ESTABLISHED));
}

/*
 * Linux siw has two races a peer can only avoid by waiting (both in
 * Documentation/interop.md); under TCG 200 ms is plenty for either.
 */
static void siw_pause(void)
{
	nanosleep(&(struct timespec){ .tv_nsec = 200 * 1000 * 1000 }, NULL);
}

/* Exchange buffer descriptions; the client (the MPA initiator) goes first. */
static void exchange_info(struct ctx *c)
{
	struct msg m = { .type = MSG_INFO, .addr = (uintptr_t)c->buf,
			 .rkey = c->buf_mr->rkey, .inv_rkey = c->inv_mr->rkey };
	struct ibv_wc wc;
	struct msg r;

	/*
	 * A siw peer-to-peer server that receives the RTR and this Send
	 * before its accept() watches the socket never reads them.
	 */
	if (!c->server) {
		siw_pause();
		send_msg(c, &m, 0, 0, IBV_WR_SEND, 0);
	}
	r = recv_msg(c, &wc);
	post_recv_slot(c, (unsigned int)wc.wr_id);
	if (r.type != MSG_INFO)
		die(1, "expected the peer's buffer description, got type %u", r.type);
	c->peer_addr = r.addr;
	c->peer_rkey = r.rkey;
	c->peer_inv_rkey = r.inv_rkey;
	/* --imm-refused: imm_refused() reaps the server's description. */
	if (c->server)
		post_msg(c, &m, 0, 0, IBV_WR_SEND, 0, !c->imm_refused);
}

/* Wait up to WAIT_MS for one completion of cq, whatever its status. */
static bool poll_any(struct ibv_cq *cq, struct ibv_wc *wc)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (elapsed_ms(&t0) <= WAIT_MS) {
		if (ibv_poll_cq(cq, 1, wc) == 1)
			return true;
	}
	return false;
}

/*
 * The server's buffer description under --imm-refused: the client had it
 * before it sent what the server refuses, but Linux siw (the server here)
 * may not have marked it done yet when the refusal takes its QP to error,
 * and then completes it with IBV_WC_LOC_QP_OP_ERR
 * (Documentation/interop.md, "A Send's completion at the peer's close").
 * Any completion will do; none within the time limit fails.
 */
static void imm_refused_info_sent(struct ctx *c)
{
	struct ibv_wc wc;

	if (!poll_any(c->scq, &wc))
		die(1, "send: no completion within %d ms", WAIT_MS);
	printf("%s: its description, sent before the refused message, completed: %s\n",
	       prog, ibv_wc_status_str(wc.status));
}

/*
 * --imm-refused: the peer lacks RFC 7306. The client's Write with
 * Immediate (--imm-refused=send: Send with Immediate) must fail with
 * IBV_WC_REM_OP_ERR, never succeed or hang; the server's receives are
 * flushed when the peer's connection ends.
 */
static void imm_refused(struct ctx *c)
{
	struct ibv_sge sge = { (uintptr_t)(c->buf + GUARD), 64,
			       c->buf_mr->lkey };
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.sg_list = &sge,
		.num_sge = 1,
		.imm_data = imm_of(1),
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { c->peer_addr + GUARD, c->peer_rkey },
	};
	const char *what = c->imm_send ? "Send with Immediate" :
					 "RDMA Write with Immediate";
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int rc;

	if (c->imm_send) {
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.num_sge = 0;
	}

	if (c->server) {
		if (!poll_any(c->rcq, &wc))
			die(1, "no completion within %d ms", WAIT_MS);
		if (wc.status == IBV_WC_SUCCESS)
			die(1, "a receive completed (opcode %d): the peer's immediate data was accepted",
			    wc.opcode);
		printf("%s: receives flushed after the peer's immediate data: %s\n",
		       prog, ibv_wc_status_str(wc.status));
		imm_refused_info_sent(c);
		return;
	}
	/*
	 * A siw server that refuses while its TX has not yet marked its
	 * description Send done sends no Terminate, only closes
	 * (siw_send_terminate(), Documentation/interop.md): the WR would be
	 * flushed. Give siw's TX thread time to finish that Send first.
	 */
	siw_pause();
	rc = ibv_post_send(c->id->qp, &wr, &bad);
	if (rc)
		die(1, "%s: ibv_post_send: %s", what, strerror(rc));
	if (!poll_any(c->scq, &wc))
		die(1, "%s: no completion within %d ms", what, WAIT_MS);
	if (wc.status != IBV_WC_REM_OP_ERR)
		die(1, "%s: completion status %s (%d), expected IBV_WC_REM_OP_ERR",
		    what, ibv_wc_status_str(wc.status), wc.status);
	printf("%s: %s refused by the peer: %s\n", prog, what,
	       ibv_wc_status_str(wc.status));
}

static void usage(void)
{
	fprintf(stderr, "usage: %s -s [-a BIND] | -c PEER  [-p PORT] [--srq] [--no-inv] [--imm | --imm-refused[=send]] [--quick] [--max BYTES]\n",
		prog);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "srq", no_argument, NULL, 'S' },
		{ "no-inv", no_argument, NULL, 'I' },
		{ "imm", no_argument, NULL, 'i' },
		{ "imm-refused", optional_argument, NULL, 'R' },
		{ "quick", no_argument, NULL, 'q' },
		{ "max", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctx c = { .use_inv = true, .max = 1 << 20 };
	const char *addr = NULL, *port = "7471";
	bool role = false;
	int o;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((o = getopt_long(argc, argv, "sc:a:p:", lo, NULL)) != -1) {
		switch (o) {
		case 's': c.server = true; role = true; break;
		case 'c': addr = optarg; role = true; break;
		case 'a': addr = optarg; break;
		case 'p': port = optarg; break;
		case 'S': c.use_srq = true; break;
		case 'I': c.use_inv = false; break;
		case 'i': c.use_imm = true; break;
		case 'R':
			c.imm_refused = true;
			if (optarg && strcmp(optarg, "send"))
				usage();
			c.imm_send = optarg != NULL;
			break;
		case 'q': c.quick = true; break;
		case 'm': c.max = strtoul(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (!role || optind != argc || !c.max || c.max > (64u << 20) ||
	    (!c.server && !addr) || (c.use_imm && c.imm_refused))
		usage();
	make_pattern(&c);
	c.ec = rdma_create_event_channel();
	if (!c.ec)
		die(2, "rdma_create_event_channel: %s", strerror(errno));
	if (c.server)
		run_server(&c, addr, port);
	else
		run_client(&c, addr, port);
	printf("%s: connected (%s%s%s)\n", prog, c.use_srq ? "SRQ" : "RQ",
	       c.use_inv ? ", Send with Invalidate" : "",
	       c.use_imm ? ", immediate data" : "");
	exchange_info(&c);
	if (c.imm_refused) {
		imm_refused(&c);
		return 0;
	}
	if (c.server) {
		respond(&c);
		drive(&c);
		rdma_disconnect(c.id);
	} else {
		drive(&c);
		respond(&c);
		rdma_ack_cm_event(cm_wait(&c, RDMA_CM_EVENT_DISCONNECTED));
	}
	printf("%s: all data verified\n", prog);
	return 0;
}
