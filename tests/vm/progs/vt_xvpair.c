// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_xvpair: the extended verbs API between two hosts over rdma_cm (RC).
 *
 *   vt_xvpair -s [-a BIND_ADDR] [-p PORT] [-d DEV]   server
 *   vt_xvpair -c PEER_ADDR [-p PORT] [-d DEV]        client
 *   vt_xvpair -P [-d DEV]                            probe (no peer)
 *
 * Both ends use ibv_create_cq_ex CQs read with ibv_start_poll/next_poll/
 * end_poll and ibv_create_qp_ex QPs whose every Send Queue WR is built
 * with the ibv_wr_* builders (receives with ibv_post_recv). Every
 * completion's status, opcode, byte_len (where the verbs define it) and
 * immediate data or invalidated rkey is checked, and every octet placed.
 * The client speaks first (an MPA responder sends nothing before the
 * initiator's first FPDU, RFC 5044 section 7.1.2). Then:
 *  - each end in turn requests, the other responds: one batch of
 *    wr_send, wr_send_imm (no payload: kiwi's Send with Immediate carries
 *    none), wr_rdma_write and wr_rdma_write_imm (the responder's
 *    receives: IBV_WC_RECV with the data, IBV_WC_WITH_IMM,
 *    IBV_WC_RECV_RDMA_WITH_IMM with the Write's length; the Written page
 *    compared), wr_rdma_read of it back, a fenced batch of
 *    wr_atomic_fetch_add and wr_atomic_cmp_swp (results and the
 *    responder's word);
 *  - each end in turn owns a type 2 window: wr_bind_mw over a page of its
 *    MR (IBV_WC_BIND_MW), the peer Writes and Reads through it, wr_local_inv
 *    of the window (IBV_WC_LOCAL_INV), wr_bind_mw again under the next key,
 *    the peer's Write under the new rkey lands;
 *  - ibv_rereg_mr (IBV_REREG_MR_CHANGE_ACCESS) of the server's MR: the
 *    client is told the new rkey, its Write and Read under it work; its
 *    Read under the old rkey completes with IBV_WC_REM_ACCESS_ERR (the
 *    server's Terminate) and the server's QP fails (its next receive is
 *    flushed) with its memory unchanged. This breaks the connection, so
 *    it comes last.
 * -P (a device without the extended API, siw): report what
 * ibv_query_device_ex, ibv_create_cq_ex and ibv_create_qp_ex with send
 * ops give; exit 0 whether they work or fail, 1 only when a failure is
 * not EOPNOTSUPP.
 * Exit 0 when every check passed, 1 on a failed check, 2 on a setup or
 * connection error (message on stderr).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

#include "vt.h"

#define PAGE 4096
#define POLL_MS 30000
#define NRECV 8
#define RECV_LEN 256
#define WR_PAGE PAGE		/* the peer Writes and Reads here */
#define AT_OFF (2 * PAGE)	/* the atomic word the peer targets */
#define RES_OFF (2 * PAGE + 64)	/* atomic results */
#define RD_OFF (2 * PAGE + 1024) /* RDMA Read sink */
#define MW_PAGE (3 * PAGE)	/* under the window */
#define SRC_PAGE (4 * PAGE)	/* what this end sends and Writes */
#define BUF_LEN (5 * PAGE)
#define SEND_LEN 100
#define WRITE_LEN 1024
#define WIMM_LEN 512

#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |	\
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |	\
		IBV_ACCESS_MW_BIND)

enum msg_type {
	MSG_HELLO = 1, MSG_INFO, MSG_DONE, MSG_CHECKED, MSG_MW, MSG_WROTE,
	MSG_REREG,
};

struct msg {
	uint32_t type;
	uint32_t rkey;
	uint64_t addr;
};

/* One completion as the ibv_cq_ex accessors report it. */
struct got {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len, imm;
	unsigned int wc_flags;
};

static struct {
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct ibv_qp_ex *qpx;
	uint8_t *buf;
	struct ibv_mr *mr;
	uint8_t *rbuf;		/* receive slots, in their own MR: the server */
	struct ibv_mr *rmr;	/* reregisters mr with receives posted */
	struct msg peer;	/* the peer's buffer: address and rkey */
} me;

static const char *dev_name = "kiwi0";

static void fill(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7);
}

static void read_one(struct got *g)
{
	struct ibv_cq_ex *cq = me.cq;

	g->wr_id = cq->wr_id;
	g->status = cq->status;
	g->opcode = ibv_wc_read_opcode(cq);
	g->byte_len = ibv_wc_read_byte_len(cq);
	g->wc_flags = ibv_wc_read_wc_flags(cq);
	if (g->wc_flags & IBV_WC_WITH_INV)
		g->imm = ibv_wc_read_invalidated_rkey(cq);
	else if (g->wc_flags & IBV_WC_WITH_IMM)
		g->imm = ntohl(ibv_wc_read_imm_data(cq));
	else
		g->imm = 0;
}

/* The next completion of the CQ (send or receive) or fatal. */
static void poll_cq(struct got *g, const char *what)
{
	struct ibv_poll_cq_attr attr = { .comp_mask = 0 };
	long long end = vt_now_ms() + POLL_MS;
	int rc;

	while ((rc = ibv_start_poll(me.cq, &attr)) == ENOENT) {
		if (vt_now_ms() > end)
			vt_fatal("%s: no completion within %d ms", what,
				 POLL_MS);
		usleep(100);
	}
	if (rc)
		vt_fatal("%s: ibv_start_poll: %s", what, strerror(rc));
	read_one(g);
	ibv_end_poll(me.cq);
}

/*
 * Receives (wr_id >= 100) that arrived while a send completion was awaited:
 * the peer may answer before this end reads its Send's completion.
 */
static struct got held[NRECV];
static unsigned int nheld;

/* The next send completion; receives before it are held. */
static void poll_send(struct got *g, const char *what)
{
	for (;;) {
		poll_cq(g, what);
		if (g->wr_id < 100)
			return;
		if (nheld == NRECV)
			vt_fatal("%s: more than %d receives held", what, NRECV);
		held[nheld++] = *g;
	}
}

/* The next receive completion (held ones first). */
static void poll_recv(struct got *g, const char *what)
{
	if (nheld) {
		*g = held[0];
		memmove(held, held + 1, --nheld * sizeof(held[0]));
		return;
	}
	poll_cq(g, what);
	if (g->wr_id < 100)
		vt_fatal("%s: send completion wr_id %" PRIu64 " (status %s)",
			 what, g->wr_id, ibv_wc_status_str(g->status));
}

/*
 * A completion as expected: status, wr_id, opcode; byte_len if >= 0; the
 * flags and the immediate value (or invalidated rkey) they announce.
 */
static void expect(const char *what, const struct got *g, uint64_t wr_id,
		   enum ibv_wc_opcode op, long len, unsigned int flags,
		   uint32_t imm)
{
	unsigned int bad = vt_failures;

	if (g->status != IBV_WC_SUCCESS)
		vt_fail("%s: status %s", what, ibv_wc_status_str(g->status));
	else if (g->opcode != op)
		vt_fail("%s: opcode %d, expected %d", what, g->opcode, op);
	if (g->wr_id != wr_id)
		vt_fail("%s: wr_id %" PRIu64 ", expected %" PRIu64, what,
			g->wr_id, wr_id);
	if (len >= 0 && g->byte_len != (uint32_t)len)
		vt_fail("%s: byte_len %u, expected %ld", what, g->byte_len,
			len);
	if (g->wc_flags != flags)
		vt_fail("%s: wc_flags %#x, expected %#x", what, g->wc_flags,
			flags);
	else if ((flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV)) && g->imm != imm)
		vt_fail("%s: immediate/rkey %#x, expected %#x", what, g->imm,
			imm);
	if (vt_failures == bad)
		vt_pass("%s", what);
}

static void expect_bytes(const char *what, const uint8_t *got,
			 unsigned int seed, size_t len)
{
	uint8_t want[PAGE];

	fill(want, len, seed);
	if (memcmp(got, want, len))
		vt_fail("%s: data differs", what);
	else
		vt_pass("%s: %zu octets match", what, len);
}

static void post_recv(unsigned int slot)
{
	struct ibv_sge sge = { (uintptr_t)(me.rbuf + slot * RECV_LEN),
			       RECV_LEN, me.rmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 100 + slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_recv(me.id->qp, &wr, &bad))
		vt_fatal("ibv_post_recv: %s", strerror(errno));
}

static void wr(uint64_t wr_id, unsigned int flags)
{
	me.qpx->wr_id = wr_id;
	me.qpx->wr_flags = flags;
}

static void complete(const char *what)
{
	int rc = ibv_wr_complete(me.qpx);

	if (rc)
		vt_fatal("%s: ibv_wr_complete: %s", what, strerror(rc));
}

/* Send control message @m (wr_send, inline) and see its completion. */
static void send_msg(const struct msg *m)
{
	struct got g;

	ibv_wr_start(me.qpx);
	wr(1, IBV_SEND_SIGNALED | IBV_SEND_INLINE);
	ibv_wr_send(me.qpx);
	ibv_wr_set_inline_data(me.qpx, (void *)m, sizeof(*m));
	complete("control Send");
	poll_send(&g, "control Send");
	if (g.status != IBV_WC_SUCCESS || g.opcode != IBV_WC_SEND ||
	    g.wr_id != 1)
		vt_fatal("control Send: status %s opcode %d wr_id %" PRIu64,
			 ibv_wc_status_str(g.status), g.opcode, g.wr_id);
}

/* Reposted receive @g of a control message; the message, of type @type. */
static struct msg got_msg(const struct got *g, uint32_t type)
{
	struct msg m;

	if (g->status != IBV_WC_SUCCESS || g->opcode != IBV_WC_RECV ||
	    g->wr_id < 100 || g->wr_id >= 100 + NRECV ||
	    g->byte_len != sizeof(m))
		vt_fatal("control receive: status %s opcode %d wr_id %" PRIu64
			 " byte_len %u", ibv_wc_status_str(g->status),
			 g->opcode, g->wr_id, g->byte_len);
	memcpy(&m, me.rbuf + (g->wr_id - 100) * RECV_LEN, sizeof(m));
	if (m.type != type)
		vt_fatal("control message %u, expected %u", m.type, type);
	post_recv((unsigned int)(g->wr_id - 100));
	return m;
}

static struct msg recv_msg(uint32_t type)
{
	struct got g;

	poll_recv(&g, "control receive");
	return got_msg(&g, type);
}

/* A receive of a test WR: @g as expected, its data (if @seed) compared. */
static void expect_recv(const char *what, const struct got *g,
			enum ibv_wc_opcode op, uint32_t len, unsigned int flags,
			uint32_t imm, unsigned int seed)
{
	unsigned int slot = (unsigned int)(g->wr_id - 100);
	char name[160];

	expect(what, g, g->wr_id, op, len, flags, imm);
	if (slot >= NRECV)
		vt_fatal("%s: wr_id %" PRIu64 " is no receive", what,
			 g->wr_id);
	if (seed) {
		snprintf(name, sizeof(name), "%s: data", what);
		expect_bytes(name, me.rbuf + slot * RECV_LEN, seed, len);
	}
	post_recv(slot);
}

/* Requester of round @r: two-sided and one-sided WRs, then atomics. */
static void request(unsigned int r)
{
	uint64_t raddr = me.peer.addr + WR_PAGE, *res;
	uint8_t *src = me.buf + SRC_PAGE;
	uint32_t lkey = me.mr->lkey, rkey = me.peer.rkey;
	struct got g[4];
	int i;

	fill(src, SEND_LEN, r + 1);
	fill(src + 1024, WRITE_LEN, r + 3);
	fill(src + 2048, WIMM_LEN, r + 4);
	ibv_wr_start(me.qpx);
	wr(11, IBV_SEND_SIGNALED);
	ibv_wr_send(me.qpx);
	ibv_wr_set_sge(me.qpx, lkey, (uintptr_t)src, SEND_LEN);
	wr(12, IBV_SEND_SIGNALED);
	ibv_wr_send_imm(me.qpx, htonl(0x5e00 + r));
	ibv_wr_set_sge_list(me.qpx, 0, NULL);
	wr(13, IBV_SEND_SIGNALED);
	ibv_wr_rdma_write(me.qpx, rkey, raddr);
	ibv_wr_set_sge(me.qpx, lkey, (uintptr_t)(src + 1024), WRITE_LEN);
	wr(14, IBV_SEND_SIGNALED);
	ibv_wr_rdma_write_imm(me.qpx, rkey, raddr + WRITE_LEN,
			      htonl(0x3e00 + r));
	ibv_wr_set_sge(me.qpx, lkey, (uintptr_t)(src + 2048), WIMM_LEN);
	complete("batch");
	for (i = 0; i < 4; i++)
		poll_send(&g[i], "batch");
	expect("wr_send: requester's completion", &g[0], 11, IBV_WC_SEND, -1,
	       0, 0);
	expect("wr_send_imm: requester's completion", &g[1], 12, IBV_WC_SEND,
	       -1, 0, 0);
	expect("wr_rdma_write: requester's completion", &g[2], 13,
	       IBV_WC_RDMA_WRITE, -1, 0, 0);
	expect("wr_rdma_write_imm: requester's completion", &g[3], 14,
	       IBV_WC_RDMA_WRITE, -1, 0, 0);
	recv_msg(MSG_CHECKED);

	memset(me.buf + RD_OFF, 0, WRITE_LEN + WIMM_LEN);
	ibv_wr_start(me.qpx);
	wr(15, IBV_SEND_SIGNALED);
	ibv_wr_rdma_read(me.qpx, rkey, raddr);
	ibv_wr_set_sge(me.qpx, lkey, (uintptr_t)(me.buf + RD_OFF),
		       WRITE_LEN + WIMM_LEN);
	complete("wr_rdma_read");
	poll_send(&g[0], "wr_rdma_read");
	expect("wr_rdma_read", &g[0], 15, IBV_WC_RDMA_READ,
	       WRITE_LEN + WIMM_LEN, 0, 0);
	expect_bytes("wr_rdma_read: the Written data", me.buf + RD_OFF, r + 3,
		     WRITE_LEN);
	expect_bytes("wr_rdma_read: the data Written with Immediate",
		     me.buf + RD_OFF + WRITE_LEN, r + 4, WIMM_LEN);

	res = (uint64_t *)(me.buf + RES_OFF);
	res[0] = res[1] = 0xdeadbeef;
	ibv_wr_start(me.qpx);
	wr(16, IBV_SEND_SIGNALED);
	ibv_wr_atomic_fetch_add(me.qpx, rkey, me.peer.addr + AT_OFF, 5);
	ibv_wr_set_sge(me.qpx, lkey, (uintptr_t)&res[0], 8);
	wr(17, IBV_SEND_SIGNALED | IBV_SEND_FENCE);
	ibv_wr_atomic_cmp_swp(me.qpx, rkey, me.peer.addr + AT_OFF, 105, 7);
	ibv_wr_set_sge(me.qpx, lkey, (uintptr_t)&res[1], 8);
	complete("atomics");
	poll_send(&g[0], "wr_atomic_fetch_add");
	poll_send(&g[1], "wr_atomic_cmp_swp");
	expect("wr_atomic_fetch_add", &g[0], 16, IBV_WC_FETCH_ADD, 8, 0, 0);
	expect("wr_atomic_cmp_swp", &g[1], 17, IBV_WC_COMP_SWAP, 8, 0, 0);
	if (res[0] != 100 || res[1] != 105)
		vt_fail("atomics: results %" PRIu64 " %" PRIu64
			", expected 100 105", res[0], res[1]);
	else
		vt_pass("atomics: original values 100 and 105 returned");
	send_msg(&(struct msg){ .type = MSG_DONE });
	recv_msg(MSG_CHECKED);
}

/* Responder of round @r: the receives, the placed data, the atomic word. */
static void respond(unsigned int r)
{
	uint64_t *word = (uint64_t *)(me.buf + AT_OFF);
	struct got g[3];
	int i;

	for (i = 0; i < 3; i++)
		poll_recv(&g[i], "receives of the batch");
	expect_recv("wr_send: responder's receive", &g[0], IBV_WC_RECV,
		    SEND_LEN, 0, 0, r + 1);
	expect_recv("wr_send_imm: responder's receive", &g[1], IBV_WC_RECV,
		    0, IBV_WC_WITH_IMM, 0x5e00 + r, 0);
	expect_recv("wr_rdma_write_imm: responder's receive", &g[2],
		    IBV_WC_RECV_RDMA_WITH_IMM, WIMM_LEN, IBV_WC_WITH_IMM,
		    0x3e00 + r, 0);
	expect_bytes("wr_rdma_write: placed", me.buf + WR_PAGE, r + 3,
		     WRITE_LEN);
	expect_bytes("wr_rdma_write_imm: placed", me.buf + WR_PAGE + WRITE_LEN,
		     r + 4, WIMM_LEN);
	send_msg(&(struct msg){ .type = MSG_CHECKED });
	recv_msg(MSG_DONE);
	if (*word != 7)
		vt_fail("atomics: the responder's word is %" PRIu64
			", expected 7", *word);
	else
		vt_pass("atomics: the responder's word went 100 -> 105 -> 7");
	send_msg(&(struct msg){ .type = MSG_CHECKED });
}

/* Bind @mw under @rkey over MW_PAGE and tell the peer. */
static void bind_window(struct ibv_mw *mw, uint32_t rkey, const char *what)
{
	struct ibv_mw_bind_info bi = {
		.mr = me.mr, .addr = (uintptr_t)(me.buf + MW_PAGE),
		.length = PAGE,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	struct got g;

	ibv_wr_start(me.qpx);
	wr(21, IBV_SEND_SIGNALED);
	ibv_wr_bind_mw(me.qpx, mw, rkey, &bi);
	complete(what);
	poll_send(&g, what);
	expect(what, &g, 21, IBV_WC_BIND_MW, -1, 0, 0);
	send_msg(&(struct msg){ .type = MSG_MW, .rkey = rkey,
				.addr = (uintptr_t)(me.buf + MW_PAGE) });
}

/* Window owner: bind, see the peer's Write, invalidate, rebind. */
static void own_window(unsigned int r)
{
	struct ibv_mw *mw = ibv_alloc_mw(me.pd, IBV_MW_TYPE_2);
	uint32_t rkey;
	struct got g;

	if (!mw)
		vt_fatal("ibv_alloc_mw(type 2): %s", strerror(errno));
	memset(me.buf + MW_PAGE, 0, PAGE);
	rkey = ibv_inc_rkey(mw->rkey);
	bind_window(mw, rkey, "wr_bind_mw");
	recv_msg(MSG_WROTE);
	expect_bytes("the peer's Write through the window", me.buf + MW_PAGE,
		     r + 5, PAGE);
	ibv_wr_start(me.qpx);
	wr(22, IBV_SEND_SIGNALED);
	ibv_wr_local_inv(me.qpx, rkey);
	complete("wr_local_inv");
	poll_send(&g, "wr_local_inv");
	expect("wr_local_inv of the window", &g, 22, IBV_WC_LOCAL_INV, -1, 0,
	       0);
	rkey = ibv_inc_rkey(rkey);
	bind_window(mw, rkey, "wr_bind_mw again, the next key");
	recv_msg(MSG_WROTE);
	expect_bytes("the peer's Write under the rebound window's rkey",
		     me.buf + MW_PAGE, r + 6, PAGE);
	ibv_wr_start(me.qpx);
	wr(23, IBV_SEND_SIGNALED);
	ibv_wr_local_inv(me.qpx, rkey);
	complete("wr_local_inv");
	poll_send(&g, "wr_local_inv");
	expect("wr_local_inv of the rebound window", &g, 23, IBV_WC_LOCAL_INV,
	       -1, 0, 0);
	if (ibv_dealloc_mw(mw))
		vt_fail("ibv_dealloc_mw: %s", strerror(errno));
	send_msg(&(struct msg){ .type = MSG_CHECKED });
}

/* Write a page of pattern @seed at @m's address under its rkey. */
static void write_page(const struct msg *m, unsigned int seed,
		       const char *what)
{
	struct got g;

	fill(me.buf + SRC_PAGE, PAGE, seed);
	ibv_wr_start(me.qpx);
	wr(31, IBV_SEND_SIGNALED);
	ibv_wr_rdma_write(me.qpx, m->rkey, m->addr);
	ibv_wr_set_sge(me.qpx, me.mr->lkey, (uintptr_t)(me.buf + SRC_PAGE),
		       PAGE);
	complete(what);
	poll_send(&g, what);
	expect(what, &g, 31, IBV_WC_RDMA_WRITE, -1, 0, 0);
}

/* Read @len octets at @m's address under @rkey into RD_OFF: the status. */
static enum ibv_wc_status read_at(const struct msg *m, uint32_t rkey,
				  uint32_t len, const char *what)
{
	struct got g;

	memset(me.buf + RD_OFF, 0, len);
	ibv_wr_start(me.qpx);
	wr(32, IBV_SEND_SIGNALED);
	ibv_wr_rdma_read(me.qpx, rkey, m->addr);
	ibv_wr_set_sge(me.qpx, me.mr->lkey, (uintptr_t)(me.buf + RD_OFF),
		       len);
	complete(what);
	poll_send(&g, what);
	if (g.status == IBV_WC_SUCCESS)
		expect(what, &g, 32, IBV_WC_RDMA_READ, len, 0, 0);
	return g.status;
}

/* The peer of a window: Write and Read through it, then the rebound one. */
static void use_window(unsigned int r)
{
	struct msg m = recv_msg(MSG_MW);

	write_page(&m, r + 5, "wr_rdma_write through the window");
	if (read_at(&m, m.rkey, PAGE, "wr_rdma_read through the window") ==
	    IBV_WC_SUCCESS)
		expect_bytes("wr_rdma_read through the window",
			     me.buf + RD_OFF, r + 5, PAGE);
	send_msg(&(struct msg){ .type = MSG_WROTE });
	m = recv_msg(MSG_MW);
	write_page(&m, r + 6, "wr_rdma_write under the rebound window's rkey");
	send_msg(&(struct msg){ .type = MSG_WROTE });
	recv_msg(MSG_CHECKED);
}

/* Server: rereg its MR, let the client use the new rkey and the old one. */
static void rereg_owner(void)
{
	uint32_t old = me.mr->rkey;
	struct got g;
	int rc;

	rc = ibv_rereg_mr(me.mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  ACCESS);
	if (rc)
		vt_fatal("ibv_rereg_mr(CHANGE_ACCESS): %d (%s)", rc,
			 strerror(errno));
	if (me.mr->rkey == old)
		vt_fail("ibv_rereg_mr: the rkey stayed %#x", old);
	else
		vt_pass("ibv_rereg_mr: rkey %#x -> %#x", old, me.mr->rkey);
	memset(me.buf + WR_PAGE, 0, PAGE);
	send_msg(&(struct msg){ .type = MSG_REREG, .rkey = me.mr->rkey,
				.addr = (uintptr_t)(me.buf + WR_PAGE) });
	recv_msg(MSG_WROTE);
	expect_bytes("the peer's Write under the new rkey", me.buf + WR_PAGE,
		     9, PAGE);
	send_msg(&(struct msg){ .type = MSG_CHECKED });
	poll_recv(&g, "the receive after the Read under the old rkey");
	if (g.status == IBV_WC_SUCCESS)
		vt_fail("a receive completed after the old rkey's Read (opcode %d)",
			g.opcode);
	else
		vt_pass("the Read under the old rkey failed the owner's QP: receive %s",
			ibv_wc_status_str(g.status));
	expect_bytes("the owner's memory after the old rkey's Read",
		     me.buf + WR_PAGE, 9, PAGE);
}

static void rereg_peer(void)
{
	struct msg m = recv_msg(MSG_REREG);
	enum ibv_wc_status st;

	write_page(&m, 9, "wr_rdma_write under the reregistered MR's new rkey");
	if (read_at(&m, m.rkey, PAGE, "wr_rdma_read under the new rkey") ==
	    IBV_WC_SUCCESS)
		expect_bytes("wr_rdma_read under the new rkey",
			     me.buf + RD_OFF, 9, PAGE);
	send_msg(&(struct msg){ .type = MSG_WROTE });
	recv_msg(MSG_CHECKED);
	st = read_at(&m, me.peer.rkey, 64, "wr_rdma_read under the old rkey");
	if (st == IBV_WC_REM_ACCESS_ERR)
		vt_pass("wr_rdma_read under the old rkey: %s",
			ibv_wc_status_str(st));
	else
		vt_fail("wr_rdma_read under the old rkey: %s, expected %s",
			ibv_wc_status_str(st),
			ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR));
}

static struct ibv_cq_ex *make_cq(struct ibv_context *ctx)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 32,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM,
	};

	return ibv_create_cq_ex(ctx, &ca);
}

static struct ibv_qp_init_attr_ex qp_attr(struct ibv_cq_ex *cq,
					  struct ibv_pd *pd)
{
	return (struct ibv_qp_init_attr_ex){
		.send_cq = ibv_cq_ex_to_cq(cq),
		.recv_cq = ibv_cq_ex_to_cq(cq),
		.cap = { .max_send_wr = 16, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = sizeof(struct msg) },
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags =
			IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			IBV_QP_EX_WITH_RDMA_WRITE |
			IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			IBV_QP_EX_WITH_RDMA_READ |
			IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
			IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW,
	};
}

/* CQ, PD, QP and MR of @id; receives posted. */
static void setup(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr_ex qa;
	unsigned int i;

	me.id = id;
	me.cq = make_cq(id->verbs);
	if (!me.cq)
		vt_fatal("ibv_create_cq_ex: %s", strerror(errno));
	me.pd = ibv_alloc_pd(id->verbs);
	if (!me.pd)
		vt_fatal("ibv_alloc_pd: %s", strerror(errno));
	qa = qp_attr(me.cq, me.pd);
	if (rdma_create_qp_ex(id, &qa))
		vt_fatal("rdma_create_qp_ex: %s", strerror(errno));
	me.qpx = ibv_qp_to_qp_ex(id->qp);
	if (!me.qpx)
		vt_fatal("ibv_qp_to_qp_ex: NULL");
	if (posix_memalign((void **)&me.buf, PAGE, BUF_LEN))
		vt_fatal("posix_memalign failed");
	memset(me.buf, 0, BUF_LEN);
	*(uint64_t *)(me.buf + AT_OFF) = 100;
	me.mr = ibv_reg_mr(me.pd, me.buf, BUF_LEN, ACCESS);
	me.rbuf = calloc(NRECV, RECV_LEN);
	me.rmr = me.rbuf ? ibv_reg_mr(me.pd, me.rbuf, NRECV * RECV_LEN,
				      IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!me.mr || !me.rmr)
		vt_fatal("ibv_reg_mr: %s", strerror(errno));
	for (i = 0; i < NRECV; i++)
		post_recv(i);
}

static struct rdma_addrinfo *resolve(const char *addr, const char *port,
				     bool passive)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP,
				       .ai_flags = passive ? RAI_PASSIVE : 0 };
	struct rdma_addrinfo *res;

	if (rdma_getaddrinfo(addr, port, &hints, &res))
		vt_fatal("rdma_getaddrinfo %s:%s: %s", addr ? addr : "*", port,
			 strerror(errno));
	return res;
}

static struct msg my_info(uint32_t type)
{
	return (struct msg){ .type = type, .rkey = me.mr->rkey,
			     .addr = (uintptr_t)me.buf };
}

static void server(const char *addr, const char *port)
{
	struct rdma_addrinfo *res = resolve(addr, port, true);
	struct rdma_cm_id *listen, *id;
	struct msg info;

	if (rdma_create_ep(&listen, res, NULL, NULL) || rdma_listen(listen, 1))
		vt_fatal("listen: %s", strerror(errno));
	if (rdma_get_request(listen, &id))
		vt_fatal("rdma_get_request: %s", strerror(errno));
	setup(id);
	if (rdma_accept(id, NULL))
		vt_fatal("rdma_accept: %s", strerror(errno));
	me.peer = recv_msg(MSG_HELLO);
	info = my_info(MSG_INFO);
	send_msg(&info);
	respond(1);
	request(2);
	own_window(1);
	use_window(2);
	rereg_owner();
	rdma_disconnect(id);
}

static void client(const char *addr, const char *port)
{
	struct rdma_addrinfo *res = resolve(addr, port, false);
	struct rdma_cm_id *id;
	struct msg info;

	if (rdma_create_ep(&id, res, NULL, NULL))
		vt_fatal("rdma_create_ep: %s", strerror(errno));
	setup(id);
	if (rdma_connect(id, NULL))
		vt_fatal("rdma_connect: %s", strerror(errno));
	info = my_info(MSG_HELLO);
	send_msg(&info);
	me.peer = recv_msg(MSG_INFO);
	request(1);
	respond(2);
	use_window(1);
	own_window(2);
	rereg_peer();
	rdma_disconnect(id);
}

/* What a device without the extended API reports; see the header. */
static void probe_one(const char *what, bool failed, int err)
{
	if (!failed)
		printf("%s: %s: works\n", vt_prog, what);
	else if (err == EOPNOTSUPP)
		vt_pass("%s: refused with EOPNOTSUPP", what);
	else
		vt_fail("%s: failed with %s (%d), not EOPNOTSUPP", what,
			strerror(err), err);
}

static void probe(void)
{
	struct ibv_context *ctx = vt_open(dev_name);
	struct ibv_device_attr_ex dx;
	struct ibv_qp_init_attr_ex qa;
	struct ibv_cq_ex *cq;
	struct ibv_cq *plain;
	struct ibv_pd *pd;
	struct ibv_qp *qp;
	int rc;

	rc = ibv_query_device_ex(ctx, NULL, &dx);
	probe_one("ibv_query_device_ex", rc, rc);
	cq = make_cq(ctx);
	probe_one("ibv_create_cq_ex", !cq, errno);
	pd = ibv_alloc_pd(ctx);
	plain = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (!pd || !plain)
		vt_fatal("ibv_alloc_pd/ibv_create_cq: %s", strerror(errno));
	qa = qp_attr(cq, pd);
	qa.send_cq = qa.recv_cq = plain;
	qp = ibv_create_qp_ex(ctx, &qa);
	probe_one("ibv_create_qp_ex with send_ops_flags", !qp, errno);
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	ibv_destroy_cq(plain);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: %s -s [-a BIND] | -c PEER | -P  [-p PORT] [-d DEV]\n",
		vt_prog);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *addr = NULL, *port = "7474";
	char mode = 0;
	int o;

	vt_init("vt_xvpair");
	while ((o = getopt(argc, argv, "sc:a:p:d:P")) != -1) {
		switch (o) {
		case 's':
		case 'P':
			mode = mode ? '?' : (char)o;
			break;
		case 'c':
			mode = mode ? '?' : 'c';
			addr = optarg;
			break;
		case 'a': addr = optarg; break;
		case 'p': port = optarg; break;
		case 'd': dev_name = optarg; break;
		default: usage();
		}
	}
	if (!mode || mode == '?' || optind != argc)
		usage();
	if (mode == 's')
		server(addr, port);
	else if (mode == 'c')
		client(addr, port);
	else
		probe();
	return vt_exit();
}
