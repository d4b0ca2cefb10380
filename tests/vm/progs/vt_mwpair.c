// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_mwpair: a type 2 memory window between two hosts over rdma_cm (RC).
 *
 *   vt_mwpair -s [-a BIND_ADDR] [-p PORT]     server: owns the window
 *   vt_mwpair -c PEER_ADDR [-p PORT]          client: the peer using it
 *
 * The server's device must have type 2 windows; the client's needs none
 * (a window is only an rkey to it), only Send with Invalidate.
 *
 * The client speaks first (a Send): an MPA responder may send nothing
 * before the initiator's first FPDU (RFC 5044 section 7.1.2), and a window
 * binds on the send queue. Then the server registers two pages with
 * IBV_ACCESS_MW_BIND only (no remote
 * rights), binds a type 2 window over the second page with remote write
 * and read (IBV_WR_BIND_MW on its QP, under its own key) and sends the
 * window's address and rkey. Client: RDMA Write of a page through the
 * window, RDMA Read of it back (checked), a Send telling the server, then
 * a Send with Invalidate naming the window's rkey. Server: the Write
 * landed in the window's page and nowhere else; the receive of the Send
 * with Invalidate has IBV_WC_WITH_INV and the rkey; it answers with a
 * Send. Client: an RDMA Write and an RDMA Read through the window again:
 * the Read must not succeed (IBV_WC_REM_ACCESS_ERR when the peer's
 * Terminate named it, or flushed); the server's QP must fail (its next
 * receive flushed: it sent the Terminate) with its memory unchanged.
 * Exit 0 when every check passed, 1 on a failed check, 2 on a setup or
 * connection error (message on stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "vt_cm.h"

#define PAGE 4096
#define WAIT_MS 60000
#define NRECV 4

enum msg_type { MSG_HELLO = 1, MSG_INFO, MSG_WROTE, MSG_INVALIDATED };

struct msg {
	uint32_t type;
	uint32_t rkey;
	uint64_t addr;
	uint32_t len;
	uint32_t pad;
};

struct ctx {
	struct rdma_cm_id *id;
	struct ibv_mr *ctl_mr;
	struct msg ctl[NRECV + 1];	/* receives, then the one to send */
	uint8_t *buf;
	struct ibv_mr *buf_mr;
};

static const char *prog = "vt_mwpair";

/* One completion of @cq within WAIT_MS, whatever its status. */
static void poll_one(struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	long long end = vt_now_ms() + WAIT_MS;

	while (vt_now_ms() < end)
		if (ibv_poll_cq(cq, 1, wc) == 1)
			return;
	vt_die(1, "%s: no completion within %d ms", what, WAIT_MS);
}

static void expect_ok(struct ibv_cq *cq, enum ibv_wc_opcode op,
		      const char *what, struct ibv_wc *wc)
{
	poll_one(cq, wc, what);
	if (wc->status != IBV_WC_SUCCESS || wc->opcode != op)
		vt_die(1, "%s: status %s opcode %d", what,
		       ibv_wc_status_str(wc->status), wc->opcode);
}

static void post_recv(struct ctx *c, int slot)
{
	if (vt_post_recv(c->id->qp, (uint64_t)slot, &c->ctl[slot],
			 sizeof(struct msg), c->ctl_mr->lkey))
		vt_die(2, "ibv_post_recv failed");
}

static void post_send(struct ctx *c, struct ibv_send_wr *wr, const char *what)
{
	struct ibv_send_wr *bad;
	int rc = ibv_post_send(c->id->qp, wr, &bad);

	if (rc)
		vt_die(1, "%s: ibv_post_send: %s", what, strerror(rc));
}

/* Send control message @m and wait for its completion. */
static void send_msg(struct ctx *c, const struct msg *m)
{
	struct ibv_sge sge = { (uintptr_t)&c->ctl[NRECV], sizeof(*m),
			       c->ctl_mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;

	c->ctl[NRECV] = *m;
	post_send(c, &wr, "control Send");
	expect_ok(c->id->send_cq, IBV_WC_SEND, "control Send", &wc);
}

/* The next received message, of type @type; its receive is reposted. */
static struct msg recv_msg(struct ctx *c, uint32_t type, struct ibv_wc *wc)
{
	struct msg m;

	expect_ok(c->id->recv_cq, IBV_WC_RECV, "control receive", wc);
	m = c->ctl[wc->wr_id];
	if (m.type != type)
		vt_die(1, "control message %u, expected %u", m.type, type);
	post_recv(c, (int)wc->wr_id);
	return m;
}

static void setup(struct ctx *c, int access)
{
	int i;

	c->ctl_mr = ibv_reg_mr(c->id->qp->pd, c->ctl, sizeof(c->ctl),
			       IBV_ACCESS_LOCAL_WRITE);
	if (posix_memalign((void **)&c->buf, PAGE, 2 * PAGE))
		vt_die(2, "posix_memalign failed");
	memset(c->buf, 0, 2 * PAGE);
	c->buf_mr = ibv_reg_mr(c->id->qp->pd, c->buf, 2 * PAGE,
			       IBV_ACCESS_LOCAL_WRITE | access);
	if (!c->ctl_mr || !c->buf_mr)
		vt_die(2, "ibv_reg_mr: %s", strerror(errno));
	for (i = 0; i < NRECV; i++)
		post_recv(c, i);
}

/* Does [from, to) of the server's buffer hold @val only? */
static bool all(const uint8_t *b, size_t from, size_t to, uint8_t val)
{
	for (; from < to; from++)
		if (b[from] != val)
			return false;
	return true;
}

static struct ibv_qp_init_attr qp_attr(void)
{
	return (struct ibv_qp_init_attr){
		.cap = { .max_send_wr = 8, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
}

/* The owner: bind, check the Write, see the invalidation and the refusal. */
static void server(const char *addr, const char *port)
{
	struct rdma_addrinfo *res = vt_cm_resolve(addr, port, true);
	struct ibv_qp_init_attr qa = qp_attr();
	struct rdma_cm_id *listen;
	struct ctx c = { 0 };
	struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_mw *mw;
	struct ibv_wc wc;
	uint32_t rkey;

	if (rdma_create_ep(&listen, res, NULL, &qa) || rdma_listen(listen, 1))
		vt_die(2, "listen: %s", strerror(errno));
	if (rdma_get_request(listen, &c.id))
		vt_die(2, "rdma_get_request: %s", strerror(errno));
	setup(&c, IBV_ACCESS_MW_BIND);
	if (rdma_accept(c.id, NULL))
		vt_die(2, "rdma_accept: %s", strerror(errno));
	recv_msg(&c, MSG_HELLO, &wc);
	mw = ibv_alloc_mw(c.id->qp->pd, IBV_MW_TYPE_2);
	if (!mw)
		vt_die(2, "ibv_alloc_mw(type 2): %s", strerror(errno));
	rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = c.buf_mr, .addr = (uintptr_t)c.buf + PAGE, .length = PAGE,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	post_send(&c, &wr, "IBV_WR_BIND_MW");
	expect_ok(c.id->send_cq, IBV_WC_BIND_MW, "IBV_WR_BIND_MW", &wc);
	send_msg(&c, &(struct msg){ .type = MSG_INFO, .rkey = rkey,
				    .addr = (uintptr_t)c.buf + PAGE,
				    .len = PAGE });
	printf("%s: type 2 window bound, rkey 0x%x\n", prog, rkey);
	recv_msg(&c, MSG_WROTE, &wc);
	if (!all(c.buf, 0, PAGE, 0) || !all(c.buf, PAGE, 2 * PAGE, 0x5c))
		vt_die(1, "the peer's Write did not land in the window's page alone");
	printf("%s: the peer's Write through the window landed in its page only\n",
	       prog);
	poll_one(c.id->recv_cq, &wc, "Send with Invalidate");
	if (wc.status != IBV_WC_SUCCESS || !(wc.wc_flags & IBV_WC_WITH_INV) ||
	    wc.invalidated_rkey != rkey)
		vt_die(1, "Send with Invalidate: status %s flags 0x%x rkey 0x%x, want WITH_INV 0x%x",
		       ibv_wc_status_str(wc.status), wc.wc_flags,
		       wc.invalidated_rkey, rkey);
	post_recv(&c, (int)wc.wr_id);
	printf("%s: Send with Invalidate received: IBV_WC_WITH_INV, rkey 0x%x\n",
	       prog, rkey);
	send_msg(&c, &(struct msg){ .type = MSG_INVALIDATED });
	poll_one(c.id->recv_cq, &wc, "the refused access");
	if (wc.status == IBV_WC_SUCCESS)
		vt_die(1, "a receive completed after the invalidation (opcode %d)",
		       wc.opcode);
	if (!all(c.buf, 0, PAGE, 0) || !all(c.buf, PAGE, 2 * PAGE, 0x5c))
		vt_die(1, "the memory changed after the invalidation");
	printf("%s: access after invalidation refused: QP failed (receive %s), memory unchanged\n",
	       prog, ibv_wc_status_str(wc.status));
	rdma_disconnect(c.id);
	ibv_dealloc_mw(mw);
}

/* The peer: Write and Read through the window, invalidate, try again. */
static void client(const char *addr, const char *port)
{
	struct rdma_addrinfo *res = vt_cm_resolve(addr, port, false);
	struct ibv_qp_init_attr qa = qp_attr();
	struct ctx c = { 0 };
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;
	struct msg info;

	if (rdma_create_ep(&c.id, res, NULL, &qa))
		vt_die(2, "rdma_create_ep: %s", strerror(errno));
	setup(&c, 0);
	if (rdma_connect(c.id, NULL))
		vt_die(2, "rdma_connect: %s", strerror(errno));
	send_msg(&c, &(struct msg){ .type = MSG_HELLO });
	info = recv_msg(&c, MSG_INFO, &wc);
	memset(c.buf, 0x5c, PAGE);
	sge = (struct ibv_sge){ (uintptr_t)c.buf, PAGE, c.buf_mr->lkey };
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = info.addr;
	wr.wr.rdma.rkey = info.rkey;
	post_send(&c, &wr, "RDMA Write through the window");
	expect_ok(c.id->send_cq, IBV_WC_RDMA_WRITE,
		  "RDMA Write through the window", &wc);
	sge.addr = (uintptr_t)c.buf + PAGE;
	wr.opcode = IBV_WR_RDMA_READ;
	post_send(&c, &wr, "RDMA Read through the window");
	expect_ok(c.id->send_cq, IBV_WC_RDMA_READ,
		  "RDMA Read through the window", &wc);
	if (!all(c.buf, PAGE, 2 * PAGE, 0x5c))
		vt_die(1, "the Read through the window brought other data");
	printf("%s: RDMA Write and Read through the peer's type 2 window\n",
	       prog);
	send_msg(&c, &(struct msg){ .type = MSG_WROTE });
	/*
	 * libsiw (rdma-core 44) sends wr.rdma.rkey as the Invalidate STag,
	 * not invalidate_rkey: set both, so that a siw client names it too.
	 */
	wr = (struct ibv_send_wr){ .opcode = IBV_WR_SEND_WITH_INV,
				   .send_flags = IBV_SEND_SIGNALED,
				   .invalidate_rkey = info.rkey };
	wr.wr.rdma.rkey = info.rkey;
	post_send(&c, &wr, "Send with Invalidate");
	expect_ok(c.id->send_cq, IBV_WC_SEND, "Send with Invalidate", &wc);
	recv_msg(&c, MSG_INVALIDATED, &wc);
	memset(c.buf, 0x77, PAGE);
	wr = (struct ibv_send_wr){ .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_RDMA_WRITE,
				   .send_flags = IBV_SEND_SIGNALED };
	sge = (struct ibv_sge){ (uintptr_t)c.buf, PAGE, c.buf_mr->lkey };
	wr.wr.rdma.remote_addr = info.addr;
	wr.wr.rdma.rkey = info.rkey;
	post_send(&c, &wr, "RDMA Write after the invalidation");
	wr.opcode = IBV_WR_RDMA_READ;
	sge.addr = (uintptr_t)c.buf + PAGE;
	post_send(&c, &wr, "RDMA Read after the invalidation");
	poll_one(c.id->send_cq, &wc, "RDMA Write after the invalidation");
	poll_one(c.id->send_cq, &wc, "RDMA Read after the invalidation");
	if (wc.status == IBV_WC_SUCCESS)
		vt_die(1, "RDMA Read after the invalidation succeeded");
	printf("%s: RDMA Read through the invalidated window: %s\n", prog,
	       ibv_wc_status_str(wc.status));
	rdma_disconnect(c.id);
}

static void usage(void)
{
	fprintf(stderr, "usage: %s -s [-a BIND] | -c PEER  [-p PORT]\n", prog);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *addr = NULL, *port = "7472";
	bool srv = false, cli = false;
	int o;

	vt_init(prog);
	while ((o = getopt(argc, argv, "sc:a:p:")) != -1) {
		switch (o) {
		case 's': srv = true; break;
		case 'c': addr = optarg; cli = true; break;
		case 'a': addr = optarg; break;
		case 'p': port = optarg; break;
		default: usage();
		}
	}
	if (srv == cli || optind != argc)
		usage();
	if (srv)
		server(addr, port);
	else
		client(addr, port);
	printf("%s: all checks passed\n", prog);
	return 0;
}
