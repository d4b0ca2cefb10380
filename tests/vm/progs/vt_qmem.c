// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_qmem: kiwi's queue memory, counted against the device budget and
 * charged to the caller's memory cgroup.
 *
 *   vt_qmem [-d DEV] budget MIB
 *   vt_qmem [-d DEV] [-H FILE] memcg MAX_MIB
 *   vt_qmem -a ADDR [-H FILE] connect PAIRS
 *
 * budget: the device is fresh and kiwi's queue_mem_mb parameter is MIB.
 *   A user CQ costs its ring, KIWI_RING_CTRL_SIZE + entries * 32 octets
 *   rounded up to pages. CQs of 65536 entries, then of one entry, fill the
 *   budget exactly to the page: the next one fails with ENOMEM. A destroyed
 *   CQ gives its share back (one more fits, then no more); a QP and an SRQ
 *   do not fit into a full budget and do after a large CQ is gone; after
 *   everything is destroyed the same number of large CQs fits again.
 * memcg: run inside a memory cgroup whose memory.max is well below
 *   MAX_MIB. Creates CQs of 65536 entries until one fails, which must be
 *   with ENOMEM before MAX_MIB of rings, destroys one (room for the
 *   process's own page faults), holds the rest (stage "cq N"), destroys
 *   them; then the same with QPs of 4096 send and receive WRs (stage
 *   "qp N").
 * connect: PAIRS connected QP pairs over rdma_cm on ADDR, with one-entry
 *   rings. Holds after creating the active QPs (stage "created"), and
 *   after connecting all pairs (stage "connected").
 * At a stage the program writes the stage to FILE (if -H) and waits for
 * SIGUSR1, so a scenario can read the cgroup's memory.current.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <signal.h>
#include <unistd.h>

#include "vt_cm.h"

#define VT_BIG_CQE 65536
#define VT_MAX_OBJS 4096

static const char *hold_file;
static sigset_t usr1;

static unsigned long page_align(unsigned long n)
{
	unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE);

	return (n + page - 1) / page * page;
}

/* What kiwi charges for a user CQ of @cqe entries (a power of two). */
static unsigned long cq_bytes(unsigned int cqe)
{
	return page_align(128 + (unsigned long)cqe * 32);
}

static void stage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void stage(const char *fmt, ...)
{
	char line[64];
	va_list ap;
	FILE *f;
	int sig;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	printf("vt_qmem: stage %s\n", line);
	if (!hold_file)
		return;
	f = fopen(hold_file, "w");
	if (!f || fprintf(f, "%s\n", line) < 0 || fclose(f))
		vt_fatal("cannot write %s", hold_file);
	sigwait(&usr1, &sig);
}

/* Create CQs of @cqe entries into @cqs[*n...] until one fails or @max. */
static int fill_cqs(struct ibv_context *ctx, unsigned int cqe,
		    struct ibv_cq **cqs, unsigned int *n, unsigned int max)
{
	while (*n < max) {
		cqs[*n] = ibv_create_cq(ctx, (int)cqe, NULL, NULL, 0);
		if (!cqs[*n])
			return errno;
		(*n)++;
	}
	return 0;
}

static void destroy_cqs(struct ibv_cq **cqs, unsigned int from,
			unsigned int to)
{
	for (; from < to; from++)
		if (ibv_destroy_cq(cqs[from]))
			vt_fail("ibv_destroy_cq: %s", strerror(errno));
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			      unsigned int wr)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = wr, .max_recv_wr = wr,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &a);
}

static void expect_fill(const char *what, int err, unsigned int got,
			unsigned int want)
{
	if (err != ENOMEM)
		vt_fail("%s: creation stopped with %s after %u, expected ENOMEM",
			what, err ? strerror(err) : "no error", got);
	else if (got != want)
		vt_fail("%s: %u fit into the budget, expected exactly %u", what,
			got, want);
	else
		vt_pass("%s: %u fit, the next one fails with ENOMEM", what, got);
}

/* With a full budget @pd gets no QP and no SRQ; after freeing, it does. */
static void check_qp_srq(struct ibv_pd *pd, struct ibv_cq *cq, bool full)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 1, .max_sge = 1 } };
	struct ibv_qp *qp = make_qp(pd, cq, 1);
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);
	const char *when = full ? "budget full" : "after freeing 2 MiB";

	if (full) {
		vt_expect_errno("QP with a full budget", !qp, errno, ENOMEM);
		vt_expect_errno("SRQ with a full budget", !srq, errno, ENOMEM);
	} else if (!qp || !srq) {
		vt_fail("%s: QP %s, SRQ %s", when, qp ? "ok" : "failed",
			srq ? "ok" : "failed");
	} else {
		vt_pass("%s: a QP and an SRQ fit", when);
	}
	if (qp)
		ibv_destroy_qp(qp);
	if (srq)
		ibv_destroy_srq(srq);
}

static void run_budget(struct ibv_context *ctx, unsigned long mib)
{
	static struct ibv_cq *big[VT_MAX_OBJS], *small[VT_MAX_OBJS];
	unsigned long budget = mib << 20, big_sz = cq_bytes(VT_BIG_CQE);
	unsigned int nbig = 0, nsmall = 0, want_big = budget / big_sz;
	unsigned int want_small = (budget - want_big * big_sz) / cq_bytes(1);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	int err;

	if (!pd)
		vt_fatal("ibv_alloc_pd: %s", strerror(errno));
	err = fill_cqs(ctx, VT_BIG_CQE, big, &nbig, 2 * want_big + 2);
	expect_fill("CQs of 65536 entries", err, nbig, want_big);
	err = fill_cqs(ctx, 1, small, &nsmall, VT_MAX_OBJS);
	expect_fill("then CQs of one entry", err, nsmall, want_small);
	check_qp_srq(pd, small[0], true);

	destroy_cqs(small, nsmall - 1, nsmall);
	nsmall--;
	err = fill_cqs(ctx, 1, small, &nsmall, VT_MAX_OBJS);
	expect_fill("one-entry CQs after destroying one", err, nsmall,
		    want_small);

	destroy_cqs(big, nbig - 1, nbig);
	nbig--;
	check_qp_srq(pd, small[0], false);

	destroy_cqs(small, 0, nsmall);
	destroy_cqs(big, 0, nbig);
	nsmall = nbig = 0;
	err = fill_cqs(ctx, VT_BIG_CQE, big, &nbig, 2 * want_big + 2);
	expect_fill("CQs of 65536 entries after destroying all", err, nbig,
		    want_big);
	destroy_cqs(big, 0, nbig);
	ibv_dealloc_pd(pd);
}

static void run_memcg(struct ibv_context *ctx, unsigned long max_mib)
{
	static struct ibv_cq *cqs[VT_MAX_OBJS];
	static struct ibv_qp *qps[VT_MAX_OBJS];
	unsigned long max = max_mib << 20;
	unsigned int n = 0, cap = max / cq_bytes(VT_BIG_CQE), i;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq;
	int err;

	if (!pd)
		vt_fatal("ibv_alloc_pd: %s", strerror(errno));
	err = fill_cqs(ctx, VT_BIG_CQE, cqs, &n, cap);
	if (err == ENOMEM && n < cap)
		vt_pass("CQ %u of 65536 entries fails with ENOMEM (%lu MiB of rings held)",
			n + 1, n * cq_bytes(VT_BIG_CQE) >> 20);
	else
		vt_fail("%u CQs (%lu MiB of rings) created, then %s: expected ENOMEM below %lu MiB",
			n, n * cq_bytes(VT_BIG_CQE) >> 20,
			err ? strerror(err) : "the cap", max_mib);
	/* Room for this process's own page faults while it holds. */
	if (n) {
		n--;
		destroy_cqs(cqs, n, n + 1);
	}
	stage("cq %u", n);
	destroy_cqs(cqs, 0, n);

	cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	if (!cq)
		vt_fatal("ibv_create_cq: %s", strerror(errno));
	err = 0;
	for (n = 0; n < VT_MAX_OBJS && (unsigned long)n << 20 < max; n++) {
		qps[n] = make_qp(pd, cq, 4096);
		if (!qps[n]) {
			err = errno;
			break;
		}
	}
	if (err == ENOMEM)
		vt_pass("QP %u of 4096+4096 WRs fails with ENOMEM", n + 1);
	else
		vt_fail("%u QPs of 4096+4096 WRs created, then %s: expected ENOMEM",
			n, err ? strerror(err) : "the cap");
	if (n && ibv_destroy_qp(qps[--n]))
		vt_fail("ibv_destroy_qp: %s", strerror(errno));
	stage("qp %u", n);
	for (i = 0; i < n; i++)
		if (ibv_destroy_qp(qps[i]))
			vt_fail("ibv_destroy_qp: %s", strerror(errno));
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

static void run_connect(const char *addr, unsigned int pairs)
{
	struct vt_cm_pair *pv = calloc(pairs, sizeof(*pv));
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_pd *pd;
	struct vt_cm cm;
	unsigned int i;

	if (!pv)
		vt_fatal("out of memory");
	vt_cm_listen(&cm, addr, "7473");
	pd = ibv_alloc_pd(cm.verbs);
	a.send_cq = ibv_create_cq(cm.verbs, 16, NULL, NULL, 0);
	a.recv_cq = a.send_cq;
	if (!pd || !a.send_cq)
		vt_fatal("PD/CQ: %s", strerror(errno));
	for (i = 0; i < pairs; i++)
		vt_cm_prepare(&cm, &pv[i], pd, &a);
	stage("created");
	for (i = 0; i < pairs; i++)
		vt_cm_establish(&cm, &pv[i], pd, &a);
	vt_pass("%u pairs connected", pairs);
	stage("connected");
	for (i = 0; i < pairs; i++)
		vt_cm_teardown(&cm, &pv[i]);
	ibv_destroy_cq(a.send_cq);
	ibv_dealloc_pd(pd);
	vt_cm_close(&cm);
	free(pv);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: vt_qmem [-d DEV] budget MIB | [-d DEV] [-H FILE] memcg MAX_MIB |\n"
		"       -a ADDR [-H FILE] connect PAIRS\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *dev = VT_DEFAULT_DEV, *addr = NULL, *mode;
	struct ibv_context *ctx;
	unsigned long arg;
	int c;

	vt_init("vt_qmem");
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	while ((c = getopt(argc, argv, "d:a:H:")) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'a': addr = optarg; break;
		case 'H': hold_file = optarg; break;
		default: usage();
		}
	}
	if (argc - optind != 2)
		usage();
	mode = argv[optind];
	arg = vt_ulong(mode, argv[optind + 1]);
	if (!strcmp(mode, "connect")) {
		if (!addr)
			usage();
		run_connect(addr, (unsigned int)arg);
		return vt_exit();
	}
	ctx = vt_open(dev);
	if (!strcmp(mode, "budget"))
		run_budget(ctx, arg);
	else if (!strcmp(mode, "memcg"))
		run_memcg(ctx, arg);
	else
		usage();
	ibv_close_device(ctx);
	return vt_exit();
}
