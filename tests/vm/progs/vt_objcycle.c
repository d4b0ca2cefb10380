// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_objcycle: create and destroy one set of verbs objects N times: a PD,
 * an MR, a completion channel, a CQ bound to it (armed) and one without,
 * an SRQ, an RC QP on the SRQ and an RC QP with its own receive queue.
 *
 *   vt_objcycle [-d DEV] [-n N] [-H READYFILE]
 *
 * With -H one more set is created after the cycles and held until SIGUSR1
 * or SIGTERM arrives, so a scenario can count the objects the kernel
 * reports (1 ctx, 1 pd, 1 mr, 2 cq, 1 srq, 2 qp) before they go away.
 */
#include <getopt.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "vt.h"

#define VT_BUF_LEN 8192

struct vt_set {
	struct ibv_pd *pd;
	void *buf;
	struct ibv_mr *mr;
	struct ibv_comp_channel *chan;
	struct ibv_cq *cq_chan;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp_srq;
	struct ibv_qp *qp;
};

static struct ibv_qp *make_qp(struct vt_set *s, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = s->cq,
		.recv_cq = s->cq_chan,
		.srq = srq,
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = 16,
			.max_recv_wr = srq ? 0 : 16,
			.max_send_sge = 1,
			.max_recv_sge = srq ? 0 : 1,
		},
	};

	return ibv_create_qp(s->pd, &a);
}

/* Returns false (and reports) at the first object that cannot be created. */
static bool create_set(struct ibv_context *ctx, struct vt_set *s,
		       unsigned long iter)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };

	memset(s, 0, sizeof(*s));
#define VT_NEED(expr, what)						\
	do {								\
		if (!(expr)) {						\
			vt_fail("iteration %lu: %s: %s", iter, what,	\
				strerror(errno));			\
			return false;					\
		}							\
	} while (0)
	VT_NEED(s->pd = ibv_alloc_pd(ctx), "ibv_alloc_pd");
	VT_NEED(s->buf = malloc(VT_BUF_LEN), "malloc");
	VT_NEED(s->mr = ibv_reg_mr(s->pd, s->buf, VT_BUF_LEN,
				   IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ), "ibv_reg_mr");
	VT_NEED(s->chan = ibv_create_comp_channel(ctx),
		"ibv_create_comp_channel");
	VT_NEED(s->cq_chan = ibv_create_cq(ctx, 64, NULL, s->chan, 0),
		"ibv_create_cq(channel)");
	errno = ibv_req_notify_cq(s->cq_chan, 0);
	VT_NEED(!errno, "ibv_req_notify_cq");
	VT_NEED(s->cq = ibv_create_cq(ctx, 64, NULL, NULL, 0),
		"ibv_create_cq");
	VT_NEED(s->srq = ibv_create_srq(s->pd, &sa), "ibv_create_srq");
	VT_NEED(s->qp_srq = make_qp(s, s->srq), "ibv_create_qp(srq)");
	VT_NEED(s->qp = make_qp(s, NULL), "ibv_create_qp");
#undef VT_NEED
	return true;
}

/* Destroys whatever create_set() made, in reverse order. */
static bool destroy_set(struct vt_set *s, unsigned long iter)
{
	bool ok = true;
	int rc;

#define VT_DESTROY(obj, fn)						\
	do {								\
		if (obj) {						\
			rc = fn(obj);					\
			if (rc) {					\
				vt_fail("iteration %lu: %s: %s", iter,	\
					#fn, strerror(rc < 0 ? errno : rc)); \
				ok = false;				\
			}						\
		}							\
	} while (0)
	VT_DESTROY(s->qp, ibv_destroy_qp);
	VT_DESTROY(s->qp_srq, ibv_destroy_qp);
	VT_DESTROY(s->srq, ibv_destroy_srq);
	VT_DESTROY(s->cq, ibv_destroy_cq);
	VT_DESTROY(s->cq_chan, ibv_destroy_cq);
	VT_DESTROY(s->chan, ibv_destroy_comp_channel);
	VT_DESTROY(s->mr, ibv_dereg_mr);
	VT_DESTROY(s->pd, ibv_dealloc_pd);
#undef VT_DESTROY
	free(s->buf);
	return ok;
}

static void hold(struct ibv_context *ctx, unsigned long iter,
		 const char *ready)
{
	struct vt_set s;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		vt_fatal("sigprocmask: %s", strerror(errno));
	if (!create_set(ctx, &s, iter)) {
		destroy_set(&s, iter);
		return;
	}
	vt_signal_ready(ready);
	if (sigwait(&set, &sig))
		vt_fatal("sigwait failed");
	if (destroy_set(&s, iter))
		vt_pass("held set destroyed after signal %d", sig);
}

int main(int argc, char **argv)
{
	const char *dev = VT_DEFAULT_DEV, *ready = NULL;
	unsigned long n = 1000, i;
	struct ibv_context *ctx;
	struct timespec t0, t1;
	struct vt_set s;
	int opt;

	vt_init("vt_objcycle");
	while ((opt = getopt(argc, argv, "d:n:H:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'n':
			n = vt_ulong("-n", optarg);
			break;
		case 'H':
			ready = optarg;
			break;
		default:
			fprintf(stderr, "usage: vt_objcycle [-d DEV] [-n N] [-H READYFILE]\n");
			return 2;
		}
	}
	ctx = vt_open(dev);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		bool made = create_set(ctx, &s, i);

		if (!destroy_set(&s, i) || !made)
			break;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (i == n)
		vt_pass("%lu create/destroy cycles in %.3f s", n,
			(double)(t1.tv_sec - t0.tv_sec) +
			(t1.tv_nsec - t0.tv_nsec) / 1e9);
	else
		vt_fail("stopped after %lu of %lu cycles", i, n);
	if (ready && i == n)
		hold(ctx, i, ready);
	if (ibv_close_device(ctx))
		vt_fail("ibv_close_device: %s", strerror(errno));
	return vt_exit();
}
