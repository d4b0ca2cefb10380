// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_cmclient: an rdma_cm initiator that names its QP by number, as
 * rdma_cm allows (rdma_connect() with conn_param.qp_num and no QP on the
 * id), for the connection-teardown scenario:
 *
 *   -q QPN   name QPN instead of its own QP: another process's or a
 *            kernel QP (the connect must be refused)
 *   -D MS    destroy its own QP MS ms after rdma_connect() returned, while
 *            the connection is still being set up (against a silent
 *            server): the destroy and the CM event must come promptly
 *   -R MS    destroy its own QP from a second thread MS ms after
 *            rdma_connect() was entered (a test module holds the QPN
 *            lookup open meanwhile)
 *   -F MS    a second thread sends a CREATE_QP command that leaves the
 *            driver no room for its response, so the create fails after it
 *            took a QP number ("failing create: errno N"); MS ms after that
 *            thread began, connect naming its own QP's number plus one, the
 *            number that create takes (a test module holds the create open
 *            meanwhile): the connect must be refused
 *   -H S     only hold a QP for S seconds ("hold qpn N"), for another
 *            process to name
 *   -L S     instead listen on ADDR:PORT ("listening") for S seconds and
 *            never read an event: a CONNECT_REQUEST is never accepted or
 *            rejected by the application
 *   -W N     once established, post N RDMA Writes of 64 KiB one at a
 *            time, each followed by a doorbell of its own ("posted N,
 *            doorbells N"): the POST_SEND command without work requests
 *            libkiwi writes, rung even where libkiwi skips it, as a libkiwi
 *            predating KIWI_QP_FEAT_SQ_DOORBELL does (against a peer that
 *            never reads, for the doorbells that find TX stalled)
 *
 * Prints one line per step ("connect: ok", "connect: errno N ...",
 * "event: NAME status S after N ms", "destroy_qp: N ms") for the scenario
 * to judge. Exit: 0, or 2 on a setup error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_cma.h>

#include "vt.h"

static struct {
	const char *addr;
	unsigned int port;
	long qpn;
	long destroy_ms;
	long race_ms;
	long fail_ms;
	long hold;
	long listen;
	long writes;
} opt = { .qpn = -1, .destroy_ms = -1, .race_ms = -1, .fail_ms = -1,
	  .hold = -1, .listen = -1, .writes = -1 };

/* -W: the most Writes, and the octets of each. */
#define WRITES_MAX	32
#define WRITE_LEN	65536

static struct rdma_event_channel *ech;
static struct rdma_cm_id *id;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;

static void usage(void)
{
	fprintf(stderr,
		"usage: vt_cmclient -a ADDR -p PORT [-q QPN] [-D MS] [-R MS] [-F MS] [-H S] [-L S] [-W N]\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "a:p:q:D:R:F:H:L:W:")) != -1) {
		switch (c) {
		case 'a': opt.addr = optarg; break;
		case 'p': opt.port = vt_ulong("-p", optarg); break;
		case 'q': opt.qpn = vt_ulong("-q", optarg); break;
		case 'D': opt.destroy_ms = vt_ulong("-D", optarg); break;
		case 'R': opt.race_ms = vt_ulong("-R", optarg); break;
		case 'F': opt.fail_ms = vt_ulong("-F", optarg); break;
		case 'H': opt.hold = vt_ulong("-H", optarg); break;
		case 'L': opt.listen = vt_ulong("-L", optarg); break;
		case 'W': opt.writes = vt_ulong("-W", optarg); break;
		default: usage();
		}
	}
	if (!opt.addr || !opt.port || opt.port > 65535 || optind != argc ||
	    opt.writes > WRITES_MAX || (opt.fail_ms >= 0 && opt.race_ms >= 0))
		usage();
}

/* The next CM event within @ms milliseconds (NULL on timeout). */
static struct rdma_cm_event *next_event(int ms)
{
	struct pollfd pfd = { .fd = ech->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, ms) <= 0)
		return NULL;
	if (rdma_get_cm_event(ech, &ev))
		return NULL;
	return ev;
}

static void expect_event(enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev = next_event(5000);

	if (!ev)
		vt_fatal("no %s event", rdma_event_str(want));
	if (ev->event != want)
		vt_fatal("%s instead of %s (status %d)",
			 rdma_event_str(ev->event), rdma_event_str(want),
			 ev->status);
	rdma_ack_cm_event(ev);
}

static void set_addr(struct sockaddr_in *sin)
{
	sin->sin_port = htons(opt.port);
	if (inet_pton(AF_INET, opt.addr, &sin->sin_addr) != 1)
		vt_fatal("bad IPv4 address %s", opt.addr);
}

/* -L: a listener that never reads an event, for opt.listen seconds. */
static void listen_only(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	set_addr(&sin);
	ech = rdma_create_event_channel();
	if (!ech || rdma_create_id(ech, &id, NULL, RDMA_PS_TCP))
		vt_fatal("rdma_create_id: %s", strerror(errno));
	if (rdma_bind_addr(id, (struct sockaddr *)&sin) || rdma_listen(id, 4))
		vt_fatal("rdma_listen: %s", strerror(errno));
	printf("listening\n");
	sleep(opt.listen);
}

static void setup(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = WRITES_MAX, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	set_addr(&sin);
	ech = rdma_create_event_channel();
	if (!ech || rdma_create_id(ech, &id, NULL, RDMA_PS_TCP))
		vt_fatal("rdma_create_id: %s", strerror(errno));
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&sin, 2000))
		vt_fatal("rdma_resolve_addr: %s", strerror(errno));
	expect_event(RDMA_CM_EVENT_ADDR_RESOLVED);
	if (rdma_resolve_route(id, 2000))
		vt_fatal("rdma_resolve_route: %s", strerror(errno));
	expect_event(RDMA_CM_EVENT_ROUTE_RESOLVED);
	pd = ibv_alloc_pd(id->verbs);
	cq = ibv_create_cq(id->verbs, 16, NULL, NULL, 0);
	if (!pd || !cq)
		vt_fatal("PD/CQ: %s", strerror(errno));
	qa.send_cq = cq;
	qa.recv_cq = cq;
	/* Not rdma_create_qp(): the id has no QP, the connect names one. */
	qp = ibv_create_qp(pd, &qa);
	if (!qp)
		vt_fatal("ibv_create_qp: %s", strerror(errno));
}

/* A doorbell: the POST_SEND command without work requests, on uverbs. */
static bool ring_doorbell(void)
{
	struct ib_uverbs_post_send_resp resp;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} db = {
		.hdr = { .command = IB_USER_VERBS_CMD_POST_SEND,
			 .in_words = sizeof(db) / 4,
			 .out_words = sizeof(resp) / 4 },
		.cmd = { .response = (uintptr_t)&resp,
			 .qp_handle = qp->handle,
			 .wqe_size = sizeof(struct ib_uverbs_send_wr) },
	};

	return write(qp->context->cmd_fd, &db, sizeof(db)) == sizeof(db);
}

/* -W: the Writes, each with its doorbell; they never complete. */
static void post_writes(void)
{
	static char buf[WRITE_LEN];
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = WRITE_LEN };
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = { .remote_addr = 0x1000, .rkey = 0xdead03 },
	}, *bad;
	struct ibv_mr *mr;
	long n, rung = 0;

	expect_event(RDMA_CM_EVENT_ESTABLISHED);
	mr = ibv_reg_mr(pd, buf, WRITE_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		vt_fatal("ibv_reg_mr: %s", strerror(errno));
	sge.lkey = mr->lkey;
	for (n = 0; n < opt.writes; n++) {
		if (ibv_post_send(qp, &wr, &bad))
			break;
		rung += ring_doorbell();
	}
	printf("posted %ld, doorbells %ld\n", n, rung);
}

static void destroy_own_qp(void)
{
	long long t0 = vt_now_ms();

	if (ibv_destroy_qp(qp))
		printf("destroy_qp: failed: %s\n", strerror(errno));
	else
		printf("destroy_qp: %lld ms\n", vt_now_ms() - t0);
	qp = NULL;
}

static void *race_thread(void *arg)
{
	(void)arg;
	usleep(opt.race_ms * 1000);
	destroy_own_qp();
	return NULL;
}

/* -F: CREATE_QP on uverbs with room for the core's response only. */
static void *failing_create(void *arg)
{
	struct ib_uverbs_create_qp_resp resp;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_qp cmd;
	} c = {
		.hdr = { .command = IB_USER_VERBS_CMD_CREATE_QP,
			 .in_words = sizeof(c) / 4,
			 .out_words = sizeof(resp) / 4 },
		.cmd = { .response = (uintptr_t)&resp,
			 .pd_handle = pd->handle,
			 .send_cq_handle = cq->handle,
			 .recv_cq_handle = cq->handle,
			 .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .qp_type = IBV_QPT_RC },
	};

	(void)arg;
	if (write(id->verbs->cmd_fd, &c, sizeof(c)) == sizeof(c))
		printf("failing create: succeeded, qpn %u\n", resp.qpn);
	else
		printf("failing create: errno %d (%s)\n", errno,
		       strerror(errno));
	return NULL;
}

int main(int argc, char **argv)
{
	struct rdma_conn_param cp = {
		.responder_resources = 1,
		.initiator_depth = 1,
	};
	struct rdma_cm_event *ev;
	bool connected;
	long long t0;
	pthread_t th;

	vt_init("vt_cmclient");
	parse(argc, argv);
	if (opt.listen >= 0) {
		listen_only();
		return 0;
	}
	setup();
	if (opt.hold >= 0) {
		printf("hold qpn %u\n", qp->qp_num);
		sleep(opt.hold);
		return 0;
	}
	cp.qp_num = opt.qpn >= 0 ? (uint32_t)opt.qpn : qp->qp_num;
	if (opt.fail_ms >= 0) {
		cp.qp_num = qp->qp_num + 1;
		if (pthread_create(&th, NULL, failing_create, NULL))
			vt_fatal("pthread_create");
		usleep(opt.fail_ms * 1000);
	}
	printf("own qpn %u, naming qpn %u\n", qp->qp_num, cp.qp_num);
	if (opt.race_ms >= 0 && pthread_create(&th, NULL, race_thread, NULL))
		vt_fatal("pthread_create");
	t0 = vt_now_ms();
	connected = !rdma_connect(id, &cp);
	if (connected)
		printf("connect: ok after %lld ms\n", vt_now_ms() - t0);
	else
		printf("connect: errno %d (%s) after %lld ms\n", errno,
		       strerror(errno), vt_now_ms() - t0);
	if (opt.race_ms >= 0 || opt.fail_ms >= 0)
		pthread_join(th, NULL);
	if (connected && opt.writes >= 0)
		post_writes();
	if (opt.destroy_ms >= 0) {
		usleep(opt.destroy_ms * 1000);
		destroy_own_qp();
	}
	/* A refused connect reports no event. */
	ev = connected ? next_event(40000) : NULL;
	if (ev) {
		printf("event: %s status %d after %lld ms\n",
		       rdma_event_str(ev->event), ev->status,
		       vt_now_ms() - t0);
		rdma_ack_cm_event(ev);
	} else if (connected) {
		printf("event: none within 40 s\n");
	}
	t0 = vt_now_ms();
	rdma_destroy_id(id);
	printf("destroy_id: %lld ms\n", vt_now_ms() - t0);
	if (qp)
		destroy_own_qp();
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	rdma_destroy_event_channel(ech);
	return 0;
}
