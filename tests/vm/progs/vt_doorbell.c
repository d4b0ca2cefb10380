// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_doorbell: send doorbells that find TX stalled, for 62-ops.
 *
 *   vt_doorbell -a ADDR -p PORT [-n N]
 *
 * An rdma_cm initiator connects to a peer that never reads
 * (tests/vm/lib/mpa-raw-peer.py stall), posts RDMA Writes of 64 KiB until
 * the device's tx_stalls counter shows TX stopped on the full socket, then
 * rings N (default 5) send doorbells itself: the POST_SEND command without
 * a work request that libkiwi writes after posting. libkiwi rings none
 * while TX is stalled (it reads KIWI_RING_F_DOORBELL); a provider that
 * does not, as libkiwi before ABI feature KIWI_QP_FEAT_SQ_DOORBELL, rings
 * them, and kiwi.ko must leave the new work requests to the write-space
 * wakeup and count each such doorbell in tx_doorbells_deferred.
 *
 * Prints "stalled after N writes", "doorbells: deferred D0 -> D1" and
 * "PASS ..." or "FAIL ...". Exit: 0 if the N doorbells all counted as
 * deferred, 1 if not, 2 on a setup error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <getopt.h>
#include <poll.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_cma.h>

#include "vt.h"

#define WRITE_LEN	65536
#define MAX_WRITES	24

static struct {
	const char *addr;
	unsigned int port;
	unsigned long n;
} opt = { .n = 5 };

static struct rdma_event_channel *ech;
static struct rdma_cm_id *id;

static void usage(void)
{
	fprintf(stderr, "usage: vt_doorbell -a ADDR -p PORT [-n N]\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "a:p:n:")) != -1) {
		switch (c) {
		case 'a': opt.addr = optarg; break;
		case 'p': opt.port = vt_ulong("-p", optarg); break;
		case 'n': opt.n = vt_ulong("-n", optarg); break;
		default: usage();
		}
	}
	if (!opt.addr || !opt.port || opt.port > 65535 || !opt.n ||
	    optind != argc)
		usage();
}

static void expect_event(enum rdma_cm_event_type want)
{
	struct pollfd pfd = { .fd = ech->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, 10000) <= 0 || rdma_get_cm_event(ech, &ev))
		vt_fatal("no %s event", rdma_event_str(want));
	if (ev->event != want)
		vt_fatal("%s instead of %s (status %d)",
			 rdma_event_str(ev->event), rdma_event_str(want),
			 ev->status);
	rdma_ack_cm_event(ev);
}

/* The device's hw counter @name, or -1 if it cannot be read. */
static long long counter(const char *name)
{
	char path[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		 ibv_get_device_name(id->verbs->device), name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static struct ibv_qp *connect_qp(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(opt.port) };
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = MAX_WRITES, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rdma_conn_param cp = { .initiator_depth = 1,
				      .responder_resources = 1 };
	struct ibv_cq *cq;

	if (inet_pton(AF_INET, opt.addr, &sin.sin_addr) != 1)
		vt_fatal("bad IPv4 address %s", opt.addr);
	ech = rdma_create_event_channel();
	if (!ech || rdma_create_id(ech, &id, NULL, RDMA_PS_TCP))
		vt_fatal("rdma_create_id: %s", strerror(errno));
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&sin, 2000))
		vt_fatal("rdma_resolve_addr: %s", strerror(errno));
	expect_event(RDMA_CM_EVENT_ADDR_RESOLVED);
	if (rdma_resolve_route(id, 2000))
		vt_fatal("rdma_resolve_route: %s", strerror(errno));
	expect_event(RDMA_CM_EVENT_ROUTE_RESOLVED);
	cq = ibv_create_cq(id->verbs, 2 * MAX_WRITES, NULL, NULL, 0);
	if (!cq)
		vt_fatal("ibv_create_cq: %s", strerror(errno));
	qa.send_cq = cq;
	qa.recv_cq = cq;
	if (rdma_create_qp(id, NULL, &qa))
		vt_fatal("rdma_create_qp: %s", strerror(errno));
	if (rdma_connect(id, &cp))
		vt_fatal("rdma_connect: %s", strerror(errno));
	expect_event(RDMA_CM_EVENT_ESTABLISHED);
	return id->qp;
}

/* Post 64 KiB Writes until tx_stalls grows; the number posted. */
static int stall(struct ibv_qp *qp)
{
	static char buf[WRITE_LEN];
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = WRITE_LEN };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = { .remote_addr = 0x1000, .rkey = 0xdead04 },
	}, *bad;
	long long s0 = counter("tx_stalls");
	struct ibv_mr *mr;
	int i, t;

	mr = ibv_reg_mr(qp->pd, buf, sizeof(buf), 0);
	if (!mr || s0 < 0)
		vt_fatal("MR or tx_stalls: %s", strerror(errno));
	sge.lkey = mr->lkey;
	for (i = 0; i < MAX_WRITES; i++) {
		wr.wr_id = i;
		if (ibv_post_send(qp, &wr, &bad))
			vt_fatal("ibv_post_send %d: %s", i, strerror(errno));
		for (t = 0; t < 20; t++) {
			if (counter("tx_stalls") > s0)
				return i + 1;
			usleep(50000);
		}
	}
	vt_fatal("TX did not stall after %d Writes of 64 KiB", MAX_WRITES);
}

/* The doorbell libkiwi writes: POST_SEND without a work request. */
static void ring_doorbell(struct ibv_qp *qp)
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

	if (write(qp->context->cmd_fd, &db, sizeof(db)) != sizeof(db))
		vt_fatal("doorbell: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	struct ibv_qp *qp;
	long long d0, d1;
	unsigned long i;

	vt_init("vt_doorbell");
	parse(argc, argv);
	qp = connect_qp();
	printf("stalled after %d writes\n", stall(qp));
	d0 = counter("tx_doorbells_deferred");
	for (i = 0; i < opt.n; i++)
		ring_doorbell(qp);
	d1 = counter("tx_doorbells_deferred");
	printf("doorbells: deferred %lld -> %lld\n", d0, d1);
	if (d0 >= 0 && d1 - d0 == (long long)opt.n)
		vt_pass("%lu doorbells on a stalled TX were deferred", opt.n);
	else
		vt_fail("%lu doorbells on a stalled TX: deferred %lld -> %lld",
			opt.n, d0, d1);
	return vt_exit();
}
