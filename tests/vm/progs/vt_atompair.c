// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_atompair: one 8-octet counter, many RFC 7306 requesters and the
 * owner's CPU, between two hosts over rdma_cm (RC).
 *
 *   vt_atompair -s [-a BIND_ADDR] [-p PORT] [-n CONNS]
 *   vt_atompair -c PEER_ADDR [-p PORT] [-n CONNS] [-k OPS]
 *
 * The server owns the counter (0 at the start, registered with
 * IBV_ACCESS_REMOTE_ATOMIC once per connection) and accepts CONNS
 * connections from the client. Each client connection speaks first (a
 * Send: an MPA responder sends nothing before the initiator's first FPDU,
 * RFC 5044 section 7.1.2) and is told the counter's address and rkey; from
 * then until every connection reported its end, a thread of the server
 * adds 1 to the counter with __atomic_fetch_add, pausing 20 us between
 * adds. Meanwhile the client runs one thread per connection, each posting
 * OPS Fetch-and-Add of 1 (up to 4 outstanding). The checks:
 *  - server: the counter ends at exactly CONNS * OPS + the CPU's adds;
 *  - client: every Fetch-and-Add completed successfully
 *    (IBV_WC_FETCH_ADD, 8 octets); the CONNS * OPS original values are
 *    distinct and below the final count, so together with the CPU's adds
 *    they are each of 0 .. final - 1 once (no update lost or doubled);
 *    the CPU added between the first and the last remote atomic (values
 *    in that range no remote atomic returned), so the two really raced.
 * Exit 0 when every check passed, 1 on a failed check, 2 on a setup or
 * connection error (message on stderr).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "vt_cm.h"

#define PAGE 4096
#define WAIT_MS 120000
#define NRECV 2
#define MAX_CONNS 16
#define WINDOW 4		/* Fetch-and-Adds outstanding per connection */
#define CPU_PAUSE_NS 20000

enum msg_type { MSG_HELLO = 1, MSG_INFO, MSG_DONE, MSG_RESULT };

struct msg {
	uint32_t type;
	uint32_t rkey;
	uint64_t a;	/* INFO: counter address; DONE: ops; RESULT: final */
	uint64_t b;	/* RESULT: the CPU's adds */
};

/* One connection: its id, control messages and (client) results. */
struct conn {
	struct rdma_cm_id *id;
	struct ibv_mr *ctl_mr;
	struct msg ctl[NRECV + 1];	/* receives, then the one to send */
	struct ibv_mr *mr;		/* server: the counter's page */
	uint64_t *res;			/* client: one result per op */
	struct ibv_mr *res_mr;
	struct msg info;
	int ops;
	const char *err;		/* client thread: what failed */
};

static const char *prog = "vt_atompair";
static uint64_t *counter;		/* server: in a page of its own */

/* One successful completion of opcode @op on @cq within WAIT_MS. */
static const char *poll_ok(struct ibv_cq *cq, enum ibv_wc_opcode op,
			   struct ibv_wc *wc)
{
	long long end = vt_now_ms() + WAIT_MS;
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0)
		if (vt_now_ms() > end)
			return "no completion in time";
	if (n < 0)
		return "ibv_poll_cq failed";
	if (wc->status != IBV_WC_SUCCESS)
		return ibv_wc_status_str(wc->status);
	return wc->opcode == op ? NULL : "unexpected completion opcode";
}

static void post_recv(struct conn *c, int slot)
{
	if (vt_post_recv(c->id->qp, (uint64_t)slot, &c->ctl[slot],
			 sizeof(struct msg), c->ctl_mr->lkey))
		vt_die(2, "ibv_post_recv failed");
}

static void send_msg(struct conn *c, const struct msg *m)
{
	struct ibv_sge sge = { (uintptr_t)&c->ctl[NRECV], sizeof(*m),
			       c->ctl_mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	const char *err;

	c->ctl[NRECV] = *m;
	if (ibv_post_send(c->id->qp, &wr, &bad))
		vt_die(2, "control Send: ibv_post_send failed");
	err = poll_ok(c->id->send_cq, IBV_WC_SEND, &wc);
	if (err)
		vt_die(1, "control Send: %s", err);
}

/* The next received message, of type @type; its receive is reposted. */
static struct msg recv_msg(struct conn *c, uint32_t type)
{
	struct ibv_wc wc;
	const char *err = poll_ok(c->id->recv_cq, IBV_WC_RECV, &wc);
	struct msg m;

	if (err)
		vt_die(1, "control receive: %s", err);
	m = c->ctl[wc.wr_id];
	if (m.type != type)
		vt_die(1, "control message %u, expected %u", m.type, type);
	post_recv(c, (int)wc.wr_id);
	return m;
}

static void setup(struct conn *c)
{
	int i;

	c->ctl_mr = ibv_reg_mr(c->id->qp->pd, c->ctl, sizeof(c->ctl),
			       IBV_ACCESS_LOCAL_WRITE);
	if (!c->ctl_mr)
		vt_die(2, "ibv_reg_mr: %s", strerror(errno));
	for (i = 0; i < NRECV; i++)
		post_recv(c, i);
}

static struct ibv_qp_init_attr qp_attr(void)
{
	return (struct ibv_qp_init_attr){
		.cap = { .max_send_wr = 2 * WINDOW, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
}

static bool cpu_stop;
static uint64_t cpu_adds;

/* The owner's CPU: add 1 to the counter until told to stop. */
static void *cpu_adder(void *arg)
{
	const struct timespec pause = { 0, CPU_PAUSE_NS };

	(void)arg;
	while (!__atomic_load_n(&cpu_stop, __ATOMIC_ACQUIRE)) {
		__atomic_fetch_add(counter, 1, __ATOMIC_SEQ_CST);
		cpu_adds++;
		nanosleep(&pause, NULL);
	}
	return NULL;
}

static void server(const char *addr, const char *port, int n)
{
	struct rdma_addrinfo *res = vt_cm_resolve(addr, port, true);
	struct ibv_qp_init_attr qa = qp_attr();
	struct conn c[MAX_CONNS] = { 0 };
	struct rdma_cm_id *listen;
	uint64_t ops = 0, final;
	pthread_t cpu;
	int i;

	if (posix_memalign((void **)&counter, PAGE, PAGE))
		vt_die(2, "posix_memalign failed");
	memset(counter, 0, PAGE);
	if (rdma_create_ep(&listen, res, NULL, &qa) || rdma_listen(listen, n))
		vt_die(2, "listen: %s", strerror(errno));
	for (i = 0; i < n; i++) {
		if (rdma_get_request(listen, &c[i].id))
			vt_die(2, "rdma_get_request: %s", strerror(errno));
		setup(&c[i]);
		c[i].mr = ibv_reg_mr(c[i].id->qp->pd, counter, PAGE,
				     IBV_ACCESS_LOCAL_WRITE |
				     IBV_ACCESS_REMOTE_ATOMIC);
		if (!c[i].mr)
			vt_die(2, "ibv_reg_mr(counter): %s", strerror(errno));
		if (rdma_accept(c[i].id, NULL))
			vt_die(2, "rdma_accept: %s", strerror(errno));
	}
	for (i = 0; i < n; i++)
		recv_msg(&c[i], MSG_HELLO);
	if (pthread_create(&cpu, NULL, cpu_adder, NULL))
		vt_die(2, "pthread_create failed");
	for (i = 0; i < n; i++)
		send_msg(&c[i], &(struct msg){ .type = MSG_INFO,
					       .rkey = c[i].mr->rkey,
					       .a = (uintptr_t)counter });
	printf("%s: %d connections told the counter; the CPU adds meanwhile\n",
	       prog, n);
	for (i = 0; i < n; i++)
		ops += recv_msg(&c[i], MSG_DONE).a;
	__atomic_store_n(&cpu_stop, true, __ATOMIC_RELEASE);
	pthread_join(cpu, NULL);
	final = __atomic_load_n(counter, __ATOMIC_SEQ_CST);
	for (i = 0; i < n; i++)
		send_msg(&c[i], &(struct msg){ .type = MSG_RESULT, .a = final,
					       .b = cpu_adds });
	if (final != ops + cpu_adds)
		vt_die(1, "counter %" PRIu64 ", want %" PRIu64 " remote + %" PRIu64
		       " CPU adds", final, ops, cpu_adds);
	printf("%s: counter exact: %" PRIu64 " = %" PRIu64
	       " remote Fetch-and-Add + %" PRIu64 " CPU adds\n",
	       prog, final, ops, cpu_adds);
	for (i = 0; i < n; i++)
		rdma_disconnect(c[i].id);
}

/* A client connection's thread: OPS Fetch-and-Add of 1, WINDOW at a time. */
static void *requester(void *arg)
{
	struct conn *c = arg;
	struct ibv_sge sge = { 0, sizeof(uint64_t), c->res_mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int posted = 0, done = 0;

	wr.wr.atomic.remote_addr = c->info.a;
	wr.wr.atomic.rkey = c->info.rkey;
	wr.wr.atomic.compare_add = 1;
	while (done < c->ops) {
		while (posted < c->ops && posted - done < WINDOW) {
			wr.wr_id = (uint64_t)posted;
			sge.addr = (uintptr_t)&c->res[posted];
			if (ibv_post_send(c->id->qp, &wr, &bad)) {
				c->err = "ibv_post_send failed";
				return NULL;
			}
			posted++;
		}
		c->err = poll_ok(c->id->send_cq, IBV_WC_FETCH_ADD, &wc);
		if (!c->err && wc.byte_len != sizeof(uint64_t))
			c->err = "completion length is not 8";
		if (c->err)
			return NULL;
		done++;
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every original distinct and below @final; CPU adds inside their range. */
static void check_originals(struct conn *c, int n, int ops, uint64_t final,
			    uint64_t adds)
{
	size_t total = (size_t)n * ops, i;
	uint64_t *all = calloc(total, sizeof(*all)), inside;

	if (!all)
		vt_die(2, "calloc failed");
	for (i = 0; i < total; i++)
		all[i] = c[i / ops].res[i % ops];
	qsort(all, total, sizeof(*all), cmp_u64);
	for (i = 1; i < total; i++)
		if (all[i] == all[i - 1])
			vt_die(1, "two Fetch-and-Adds returned %" PRIu64, all[i]);
	if (all[total - 1] >= final)
		vt_die(1, "an original value %" PRIu64 " is not below the final %"
		       PRIu64, all[total - 1], final);
	if (final != total + adds)
		vt_die(1, "final %" PRIu64 " is not %zu remote + %" PRIu64
		       " CPU adds", final, total, adds);
	printf("%s: %zu originals distinct, below the final %" PRIu64
	       ": each value once\n", prog, total, final);
	inside = all[total - 1] - all[0] + 1 - total;
	if (!inside)
		vt_die(1, "no CPU add between the first and the last remote atomic (%"
		       PRIu64 " .. %" PRIu64 ")", all[0], all[total - 1]);
	printf("%s: %" PRIu64 " CPU adds between the first and the last remote atomic\n",
	       prog, inside);
	free(all);
}

static void client(const char *addr, const char *port, int n, int ops)
{
	struct rdma_addrinfo *res = vt_cm_resolve(addr, port, false);
	struct conn c[MAX_CONNS] = { 0 };
	pthread_t th[MAX_CONNS];
	struct msg result = { 0 };
	int i;

	for (i = 0; i < n; i++) {
		/*
		 * Fresh for each connection: rdma_create_ep() writes the CQs it
		 * made into the attributes, and given them it makes none, which
		 * would leave the next id without send_cq and recv_cq.
		 */
		struct ibv_qp_init_attr qa = qp_attr();

		if (rdma_create_ep(&c[i].id, res, NULL, &qa))
			vt_die(2, "rdma_create_ep: %s", strerror(errno));
		setup(&c[i]);
		c[i].ops = ops;
		c[i].res = calloc((size_t)ops, sizeof(uint64_t));
		if (!c[i].res)
			vt_die(2, "calloc failed");
		c[i].res_mr = ibv_reg_mr(c[i].id->qp->pd, c[i].res,
					 (size_t)ops * sizeof(uint64_t),
					 IBV_ACCESS_LOCAL_WRITE);
		if (!c[i].res_mr)
			vt_die(2, "ibv_reg_mr: %s", strerror(errno));
		if (rdma_connect(c[i].id, NULL))
			vt_die(2, "rdma_connect %d: %s", i, strerror(errno));
		send_msg(&c[i], &(struct msg){ .type = MSG_HELLO });
	}
	for (i = 0; i < n; i++)
		c[i].info = recv_msg(&c[i], MSG_INFO);
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, requester, &c[i]))
			vt_die(2, "pthread_create failed");
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < n; i++)
		if (c[i].err)
			vt_die(1, "connection %d: Fetch-and-Add: %s", i, c[i].err);
	printf("%s: %d connections x %d Fetch-and-Add of 1 completed\n", prog,
	       n, ops);
	for (i = 0; i < n; i++)
		send_msg(&c[i], &(struct msg){ .type = MSG_DONE,
					       .a = (uint64_t)ops });
	for (i = 0; i < n; i++)
		result = recv_msg(&c[i], MSG_RESULT);
	check_originals(c, n, ops, result.a, result.b);
	for (i = 0; i < n; i++)
		rdma_disconnect(c[i].id);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: %s -s [-a BIND] | -c PEER  [-p PORT] [-n CONNS] [-k OPS]\n",
		prog);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *addr = NULL, *port = "7473";
	bool srv = false, cli = false;
	int o, n = 4, ops = 200;

	vt_init(prog);
	while ((o = getopt(argc, argv, "sc:a:p:n:k:")) != -1) {
		switch (o) {
		case 's': srv = true; break;
		case 'c': addr = optarg; cli = true; break;
		case 'a': addr = optarg; break;
		case 'p': port = optarg; break;
		case 'n': n = atoi(optarg); break;
		case 'k': ops = atoi(optarg); break;
		default: usage();
		}
	}
	if (srv == cli || optind != argc || n < 1 || n > MAX_CONNS || ops < 1)
		usage();
	if (srv)
		server(addr, port, n);
	else
		client(addr, port, n, ops);
	printf("%s: all checks passed\n", prog);
	return 0;
}
