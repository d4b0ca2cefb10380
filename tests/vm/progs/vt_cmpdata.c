// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_cmpdata: rdma_cm private data and rejection, both ways, checked
 * octet by octet by the application that receives it.
 *
 *   vt_cmpdata -s -a ADDR -p PORT -x SCRIPT    the responder (listens)
 *   vt_cmpdata -a ADDR -p PORT -x SCRIPT       the initiator
 *
 * SCRIPT is one step per connection, comma-separated: "A<len>" (the
 * responder accepts) or "R<len>" (the responder rejects with
 * rdma_reject()); for the initiator also "F<len>": the connection must
 * fail, RDMA_CM_EVENT_CONNECT_ERROR (a peer kiwi refuses, e.g. a raw
 * peer's revision 0 Reply; the line shows the event's status). The initiator connects with <len> octets of private data
 * (octet i is i * 7 + 1), the responder checks them in its
 * CONNECT_REQUEST and answers with <len> octets of its own (octet i is
 * i * 13 + 5) in the Accept or the Reject; the initiator checks them in
 * its ESTABLISHED or REJECTED event. An accepted connection is then
 * disconnected by the initiator; the responder waits for its end, which
 * a hostile initiator may also bring about (tests/vm/pair/cases/sctp.sh).
 * The responder posts two Receives (64 octets each) before each Accept,
 * which a raw initiator's Sends may complete; it never polls for them.
 *
 * Prints one line per step ("step N: ..."). Exit: 0 if every check
 * passed, 1 if one failed, 2 on a setup error.
 */
#define _GNU_SOURCE
#include <netdb.h>
#include <poll.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "vt.h"

#define PD_MAX		255
#define EVENT_MS	60000
#define STEPS_MAX	32

static struct {
	const char *addr;
	const char *port;
	bool server;
	unsigned int n;
	char op[STEPS_MAX];		/* 'A' or 'R' */
	unsigned int len[STEPS_MAX];
} opt;

static struct rdma_event_channel *ech;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static char rbuf[2][64];

static void usage(void)
{
	fprintf(stderr,
		"usage: vt_cmpdata [-s] -a ADDR -p PORT -x {A|R|F}LEN[,...]\n"
		"       (F: the initiator only)\n");
	exit(2);
}

static void parse_script(char *s)
{
	char *tok, *save = NULL;

	for (tok = strtok_r(s, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (opt.n == STEPS_MAX || !tok[0] || !strchr("ARF", tok[0]))
			usage();
		opt.op[opt.n] = tok[0];
		opt.len[opt.n] = vt_ulong("-x", tok + 1);
		if (opt.len[opt.n] > PD_MAX)
			usage();
		opt.n++;
	}
}

static void parse(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "sa:p:x:")) != -1) {
		switch (c) {
		case 's': opt.server = true; break;
		case 'a': opt.addr = optarg; break;
		case 'p': opt.port = optarg; break;
		case 'x': parse_script(optarg); break;
		default: usage();
		}
	}
	if (!opt.addr || !opt.port || !opt.n || optind != argc ||
	    (opt.server && memchr(opt.op, 'F', opt.n)))
		usage();
}

static void fill(unsigned char *buf, unsigned int len, unsigned int mul,
		 unsigned int add)
{
	unsigned int i;

	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)(i * mul + add);
}

/* Check @len octets at @got against the pattern (@mul, @add). */
static void check_pd(unsigned int step, const char *what, const void *got,
		     unsigned int got_len, unsigned int len, unsigned int mul,
		     unsigned int add)
{
	unsigned char want[PD_MAX];
	unsigned int i;

	fill(want, len, mul, add);
	if (got_len != len) {
		vt_fail("step %u: %s: %u octets of private data, want %u",
			step, what, got_len, len);
		return;
	}
	for (i = 0; i < len; i++) {
		if (((const unsigned char *)got)[i] != want[i]) {
			vt_fail("step %u: %s: private data octet %u is %#x, want %#x",
				step, what, i, ((const unsigned char *)got)[i],
				want[i]);
			return;
		}
	}
	printf("step %u: %s: %u octets of private data intact\n", step,
	       what, len);
}

/* The next event within EVENT_MS, or NULL. */
static struct rdma_cm_event *next_event(void)
{
	struct pollfd pfd = { .fd = ech->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, EVENT_MS) != 1)
		return NULL;
	if (rdma_get_cm_event(ech, &ev))
		return NULL;
	return ev;
}

/* Wait for @want; any other event fails the step. */
static bool expect(unsigned int step, enum rdma_cm_event_type want,
		   struct rdma_cm_event **evp)
{
	struct rdma_cm_event *ev = next_event();

	if (!ev) {
		vt_fail("step %u: no %s within %d ms", step,
			rdma_event_str(want), EVENT_MS);
		return false;
	}
	if (ev->event != want) {
		vt_fail("step %u: %s (status %d) instead of %s", step,
			rdma_event_str(ev->event), ev->status,
			rdma_event_str(want));
		rdma_ack_cm_event(ev);
		return false;
	}
	if (evp)
		*evp = ev;
	else
		rdma_ack_cm_event(ev);
	return true;
}

static struct addrinfo *resolve(void)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	int rv = getaddrinfo(opt.addr, opt.port, &hints, &ai);

	if (rv)
		vt_fatal("address %s port %s: %s", opt.addr, opt.port,
			 gai_strerror(rv));
	return ai;
}

/* A QP on @id, with a PD and CQ shared by every step. */
static void create_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	if (!pd) {
		pd = ibv_alloc_pd(id->verbs);
		cq = ibv_create_cq(id->verbs, 32, NULL, NULL, 0);
		if (!pd || !cq)
			vt_fatal("PD/CQ: %s", strerror(errno));
	}
	qa.send_cq = cq;
	qa.recv_cq = cq;
	if (rdma_create_qp(id, pd, &qa))
		vt_fatal("rdma_create_qp: %s", strerror(errno));
}

static void conn_param(struct rdma_conn_param *cp, unsigned char *buf,
		       unsigned int len)
{
	memset(cp, 0, sizeof(*cp));
	cp->responder_resources = 1;
	cp->initiator_depth = 1;
	cp->private_data = len ? buf : NULL;
	cp->private_data_len = (unsigned char)len;
}

/* The responder's side of one accepted step: accept, wait for the end. */
static void serve_accept(unsigned int step, struct rdma_cm_id *id)
{
	unsigned char buf[PD_MAX];
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;

	fill(buf, opt.len[step], 13, 5);
	conn_param(&cp, buf, opt.len[step]);
	create_qp(id);
	if (!mr) {
		mr = ibv_reg_mr(pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
		if (!mr)
			vt_fatal("ibv_reg_mr: %s", strerror(errno));
	}
	if (rdma_post_recv(id, NULL, rbuf[0], sizeof(rbuf[0]), mr) ||
	    rdma_post_recv(id, NULL, rbuf[1], sizeof(rbuf[1]), mr))
		vt_fatal("rdma_post_recv: %s", strerror(errno));
	if (rdma_accept(id, &cp)) {
		vt_fail("step %u: rdma_accept: %s", step, strerror(errno));
	} else if (expect(step, RDMA_CM_EVENT_ESTABLISHED, NULL)) {
		printf("step %u: accepted with %u octets\n", step,
		       opt.len[step]);
		ev = next_event();
		if (!ev) {
			vt_fail("step %u: the connection did not end within %d ms",
				step, EVENT_MS);
		} else {
			printf("step %u: ended: %s (status %d)\n", step,
			       rdma_event_str(ev->event), ev->status);
			rdma_ack_cm_event(ev);
		}
	}
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
}

static void serve(void)
{
	struct addrinfo *ai = resolve();
	struct rdma_cm_event *ev;
	struct rdma_cm_id *lid, *id;
	unsigned char buf[PD_MAX];
	unsigned int step;

	if (rdma_create_id(ech, &lid, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(lid, ai->ai_addr) || rdma_listen(lid, 4))
		vt_fatal("listen on %s: %s", opt.addr, strerror(errno));
	freeaddrinfo(ai);
	printf("listening\n");
	for (step = 0; step < opt.n; step++) {
		if (!expect(step, RDMA_CM_EVENT_CONNECT_REQUEST, &ev))
			break;
		id = ev->id;
		check_pd(step, "request", ev->param.conn.private_data,
			 ev->param.conn.private_data_len, opt.len[step], 7, 1);
		rdma_ack_cm_event(ev);
		if (opt.op[step] == 'A') {
			serve_accept(step, id);
			continue;
		}
		fill(buf, opt.len[step], 13, 5);
		if (rdma_reject(id, opt.len[step] ? buf : NULL,
				(unsigned char)opt.len[step]))
			vt_fail("step %u: rdma_reject: %s", step,
				strerror(errno));
		else
			printf("step %u: rejected with %u octets\n", step,
			       opt.len[step]);
		rdma_destroy_id(id);
	}
	rdma_destroy_id(lid);
}

/* The initiator's side of one step. */
static void connect_step(unsigned int step)
{
	struct addrinfo *ai = resolve();
	unsigned char buf[PD_MAX];
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	enum rdma_cm_event_type want = RDMA_CM_EVENT_CONNECT_ERROR;

	if (rdma_create_id(ech, &id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(id, NULL, ai->ai_addr, 2000))
		vt_fatal("rdma_resolve_addr %s: %s", opt.addr, strerror(errno));
	freeaddrinfo(ai);
	if (!expect(step, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) ||
	    rdma_resolve_route(id, 2000) ||
	    !expect(step, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL))
		vt_fatal("step %u: no route to %s", step, opt.addr);
	create_qp(id);
	fill(buf, opt.len[step], 7, 1);
	conn_param(&cp, buf, opt.len[step]);
	if (opt.op[step] == 'A')
		want = RDMA_CM_EVENT_ESTABLISHED;
	else if (opt.op[step] == 'R')
		want = RDMA_CM_EVENT_REJECTED;
	if (rdma_connect(id, &cp))
		vt_fatal("step %u: rdma_connect: %s", step, strerror(errno));
	if (expect(step, want, &ev)) {
		printf("step %u: %s, status %d\n", step,
		       rdma_event_str(ev->event), ev->status);
		if (want != RDMA_CM_EVENT_CONNECT_ERROR)
			check_pd(step, want == RDMA_CM_EVENT_ESTABLISHED ?
				 "accept" : "reject",
				 ev->param.conn.private_data,
				 ev->param.conn.private_data_len,
				 opt.len[step], 13, 5);
		rdma_ack_cm_event(ev);
		if (want == RDMA_CM_EVENT_ESTABLISHED &&
		    (rdma_disconnect(id) ||
		     !expect(step, RDMA_CM_EVENT_DISCONNECTED, NULL)))
			vt_fail("step %u: disconnect failed", step);
	}
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
}

int main(int argc, char **argv)
{
	unsigned int step;

	vt_init("vt_cmpdata");
	parse(argc, argv);
	ech = rdma_create_event_channel();
	if (!ech)
		vt_fatal("rdma_create_event_channel: %s", strerror(errno));
	if (opt.server)
		serve();
	else
		for (step = 0; step < opt.n; step++)
			connect_step(step);
	if (mr)
		ibv_dereg_mr(mr);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	rdma_destroy_event_channel(ech);
	return vt_exit();
}
