// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_flushrace: receives posted while the QP's move to the error state
 * flushes its receive queue must not be lost.
 *
 *   vt_flushrace [-d DEV] [-n ITERATIONS]
 *
 * Per iteration (default 20) an unconnected QP in INIT gets a full receive
 * queue (4096 receives). A poster thread then keeps trying to post one
 * more receive; the ring is full, so the first one fits only once the
 * kernel's flush has begun to free slots, that is after it read the
 * producer index. The poster stops after 8 such receives, while the flush
 * of the other 4095 is still running. Meanwhile the main thread moves the
 * QP to ERR, then collects completions: every receive, the 8 late ones
 * included, must complete with IBV_WC_WR_FLUSH_ERR within 10 s (libkiwi
 * rings the doorbell, which flushes them, when it finds KIWI_RING_F_ERROR
 * after publishing; the kernel must set that flag before it reads the
 * ring). RESET and INIT prepare the next iteration.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "vt.h"

#define RQ_DEPTH 4096
#define LATE 8
#define WAIT_MS 10000

struct race {
	struct ibv_qp *qp;
	struct ibv_sge sge;
	atomic_bool go;
	unsigned int late;	/* receives the poster got in */
};

static int post_one(struct race *r, uint64_t wr_id)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &r->sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(r->qp, &wr, &bad);
}

/* Post LATE receives, each as soon as the ring has room for it. */
static void *poster(void *arg)
{
	struct race *r = arg;
	uint64_t deadline;
	struct timespec ts;
	int rc;

	while (!atomic_load(&r->go))
		;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	deadline = (uint64_t)ts.tv_sec + WAIT_MS / 1000;
	while (r->late < LATE) {
		rc = post_one(r, RQ_DEPTH + r->late);
		if (!rc) {
			r->late++;
			continue;
		}
		if (rc != ENOMEM) {
			vt_fail("ibv_post_recv during the flush: %s",
				strerror(rc));
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if ((uint64_t)ts.tv_sec > deadline)
			break;
	}
	return NULL;
}

/* Poll until @want completions arrived or WAIT_MS passed; returns count. */
static unsigned int collect(struct ibv_cq *cq, unsigned int want,
			    unsigned int *bad_status)
{
	struct ibv_wc wc[64];
	unsigned int got = 0;
	int i, n, idle = 0;

	while (got < want && idle < WAIT_MS) {
		n = ibv_poll_cq(cq, 64, wc);
		if (n <= 0) {
			usleep(1000);
			idle++;
			continue;
		}
		for (i = 0; i < n; i++)
			if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
				(*bad_status)++;
		got += (unsigned int)n;
	}
	return got;
}

static void iteration(struct race *r, struct ibv_cq *cq, unsigned int it,
		      unsigned int *lost)
{
	unsigned int i, got, bad_status = 0;
	pthread_t t;

	if (vt_qp_to_state(r->qp, IBV_QPS_RESET, 0) ||
	    vt_qp_to_state(r->qp, IBV_QPS_INIT, IBV_ACCESS_LOCAL_WRITE))
		vt_fatal("RESET/INIT: %s", strerror(errno));
	for (i = 0; i < RQ_DEPTH; i++)
		if (post_one(r, i))
			vt_fatal("filling the receive queue failed at %u", i);
	r->late = 0;
	atomic_store(&r->go, false);
	if (pthread_create(&t, NULL, poster, r))
		vt_fatal("pthread_create failed");
	atomic_store(&r->go, true);
	if (vt_qp_to_state(r->qp, IBV_QPS_ERR, 0))
		vt_fatal("-> ERR: %s", strerror(errno));
	pthread_join(t, NULL);
	got = collect(cq, RQ_DEPTH + r->late, &bad_status);
	if (got != RQ_DEPTH + r->late) {
		vt_fail("iteration %u: %u of %u receives completed (%u posted during the flush)",
			it, got, RQ_DEPTH + r->late, r->late);
		*lost += RQ_DEPTH + r->late - got;
	}
	if (bad_status)
		vt_fail("iteration %u: %u completions without WR_FLUSH_ERR",
			it, bad_status);
	if (r->late < LATE)
		printf("vt_flushrace: iteration %u: only %u receives got in during the flush\n",
		       it, r->late);
}

int main(int argc, char **argv)
{
	const char *dev = VT_DEFAULT_DEV;
	unsigned long iters = 20;
	unsigned int it, lost = 0;
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC };
	struct ibv_context *ctx;
	struct race r = { 0 };
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	static char buf[64];
	int c;

	vt_init("vt_flushrace");
	while ((c = getopt(argc, argv, "d:n:")) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'n': iters = vt_ulong("-n", optarg); break;
		default:
			fprintf(stderr, "usage: vt_flushrace [-d DEV] [-n ITERATIONS]\n");
			return 2;
		}
	}
	ctx = vt_open(dev);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 2 * RQ_DEPTH, NULL, NULL, 0);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) :
		  NULL;
	if (!pd || !cq || !mr)
		vt_fatal("PD/CQ/MR: %s", strerror(errno));
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.cap = (struct ibv_qp_cap){ .max_send_wr = 1, .max_recv_wr = RQ_DEPTH,
				      .max_send_sge = 1, .max_recv_sge = 1 };
	r.qp = ibv_create_qp(pd, &qa);
	if (!r.qp)
		vt_fatal("ibv_create_qp: %s", strerror(errno));
	r.sge = (struct ibv_sge){ .addr = (uintptr_t)buf,
				  .length = sizeof(buf), .lkey = mr->lkey };

	for (it = 0; it < iters; it++)
		iteration(&r, cq, it, &lost);
	if (!lost)
		vt_pass("%lu flushes with receives posted during each: none lost",
			iters);
	ibv_destroy_qp(r.qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return vt_exit();
}
