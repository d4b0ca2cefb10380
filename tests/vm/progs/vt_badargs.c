// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_badargs: feed invalid arguments to the control verbs and check the
 * errno of every refusal. The bad values are derived from the limits that
 * ibv_query_device reports; each refusal is paired with a control that
 * succeeds with the largest (or a typical) valid value, so a driver that
 * refuses everything fails the test too.
 *
 *   vt_badargs [-d DEV] [-u UID]
 *
 * The RLIMIT_MEMLOCK checks run in a child that sets the limit and drops
 * to user id UID (default 65534, nobody), which also drops CAP_IPC_LOCK;
 * the program must therefore start as root.
 */
#include <getopt.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vt.h"

#define VT_CTL_CQE 65536

struct vt_env {
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
};

static long page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

static void check_cq(struct vt_env *e)
{
	struct ibv_cq *cq;
	int ctl = e->attr.max_cqe < VT_CTL_CQE ? e->attr.max_cqe : VT_CTL_CQE;

	cq = ibv_create_cq(e->ctx, ctl, NULL, NULL, 0);
	if (!cq)
		vt_fail("control: ibv_create_cq(cqe=%d): %s", ctl,
			strerror(errno));
	else if (ibv_destroy_cq(cq))
		vt_fail("ibv_destroy_cq: %s", strerror(errno));
	else
		vt_pass("control: cq with %d entries", ctl);
	if (e->attr.max_cqe == 0x7fffffff) {
		vt_fail("max_cqe is INT_MAX, cannot exceed it");
		return;
	}
	errno = 0;
	cq = ibv_create_cq(e->ctx, e->attr.max_cqe + 1, NULL, NULL, 0);
	vt_expect_errno("cq cqe=max_cqe+1", !cq, errno, EINVAL);
	if (cq)
		ibv_destroy_cq(cq);
	errno = 0;
	cq = ibv_create_cq(e->ctx, -1, NULL, NULL, 0);
	vt_expect_errno("cq cqe=-1", !cq, errno, EINVAL);
	if (cq)
		ibv_destroy_cq(cq);
}

static void try_qp(struct vt_env *e, const char *what, enum ibv_qp_type t,
		   struct ibv_qp_cap cap, int want)
{
	struct ibv_qp_init_attr a = {
		.send_cq = e->cq, .recv_cq = e->cq, .qp_type = t, .cap = cap,
	};
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp(e->pd, &a);
	if (!want) {
		if (!qp)
			vt_fail("control: %s: %s", what, strerror(errno));
		else
			vt_pass("control: %s", what);
	} else {
		vt_expect_errno(what, !qp, errno, want);
	}
	if (qp && ibv_destroy_qp(qp))
		vt_fail("%s: ibv_destroy_qp: %s", what, strerror(errno));
}

static void check_qp(struct vt_env *e)
{
	const struct ibv_qp_cap small = {
		.max_send_wr = 8, .max_recv_wr = 8,
		.max_send_sge = 1, .max_recv_sge = 1,
	};
	uint32_t wr = e->attr.max_qp_wr, sge = e->attr.max_sge;
	struct ibv_qp_cap c;

	/* One dimension at a time: at the limit works, one beyond fails. */
	c = small;
	c.max_send_wr = wr;
	try_qp(e, "qp max_send_wr=max_qp_wr", IBV_QPT_RC, c, 0);
	c.max_send_wr = wr + 1;
	try_qp(e, "qp max_send_wr=max_qp_wr+1", IBV_QPT_RC, c, EINVAL);
	c = small;
	c.max_recv_wr = wr;
	try_qp(e, "qp max_recv_wr=max_qp_wr", IBV_QPT_RC, c, 0);
	c.max_recv_wr = wr + 1;
	try_qp(e, "qp max_recv_wr=max_qp_wr+1", IBV_QPT_RC, c, EINVAL);
	c = small;
	c.max_send_sge = sge;
	c.max_recv_sge = sge;
	try_qp(e, "qp max_send_sge=max_recv_sge=max_sge", IBV_QPT_RC, c, 0);
	c.max_send_sge = sge + 1;
	try_qp(e, "qp max_send_sge=max_sge+1", IBV_QPT_RC, c, EINVAL);
	c.max_send_sge = sge;
	c.max_recv_sge = sge + 1;
	try_qp(e, "qp max_recv_sge=max_sge+1", IBV_QPT_RC, c, EINVAL);
	try_qp(e, "qp type RC", IBV_QPT_RC, small, 0);
	try_qp(e, "qp type UD", IBV_QPT_UD, small, EOPNOTSUPP);
	try_qp(e, "qp type UC", IBV_QPT_UC, small, EOPNOTSUPP);
	try_qp(e, "qp type RAW_PACKET", IBV_QPT_RAW_PACKET, small, EOPNOTSUPP);
}

static void try_srq(struct vt_env *e, const char *what, uint32_t wr,
		    uint32_t sge, int want)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = wr, .max_sge = sge } };
	struct ibv_srq *srq;

	errno = 0;
	srq = ibv_create_srq(e->pd, &a);
	if (!want) {
		if (!srq)
			vt_fail("control: %s: %s", what, strerror(errno));
		else
			vt_pass("control: %s", what);
	} else {
		vt_expect_errno(what, !srq, errno, want);
	}
	if (srq && ibv_destroy_srq(srq))
		vt_fail("%s: ibv_destroy_srq: %s", what, strerror(errno));
}

static void check_srq(struct vt_env *e)
{
	uint32_t wr = e->attr.max_srq_wr, sge = e->attr.max_srq_sge;

	try_srq(e, "srq at the device limits", wr, sge, 0);
	try_srq(e, "srq max_wr=max_srq_wr+1", wr + 1, sge, EINVAL);
	try_srq(e, "srq max_sge=max_srq_sge+1", wr, sge + 1, EINVAL);
}

static void try_mr_iova(struct vt_env *e, const char *what, void *addr,
			size_t len, uint64_t iova, int access, int want)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr_iova(e->pd, addr, len, iova, access);
	if (!want) {
		if (!mr)
			vt_fail("control: %s: %s", what, strerror(errno));
		else
			vt_pass("control: %s", what);
	} else {
		vt_expect_errno(what, !mr, errno, want);
	}
	if (mr && ibv_dereg_mr(mr))
		vt_fail("%s: ibv_dereg_mr: %s", what, strerror(errno));
}

static void try_mr(struct vt_env *e, const char *what, void *addr, size_t len,
		   int access, int want)
{
	try_mr_iova(e, what, addr, len, (uintptr_t)addr, access, want);
}

static void *map_pages(size_t n, int prot)
{
	void *p = mmap(NULL, n * page_size(), prot,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		vt_fatal("mmap: %s", strerror(errno));
	return p;
}

static void check_mr(struct vt_env *e)
{
	const int lw = IBV_ACCESS_LOCAL_WRITE;
	size_t ps = page_size();
	char *p = map_pages(3, PROT_READ | PROT_WRITE);
	char *ro = map_pages(2, PROT_READ);

	try_mr(e, "mr local+remote write", p, ps, lw | IBV_ACCESS_REMOTE_WRITE, 0);
	try_mr(e, "mr remote write without local write", p, ps,
	       IBV_ACCESS_REMOTE_WRITE, EINVAL);
	try_mr(e, "mr remote write+read without local write", p, ps,
	       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, EINVAL);
	try_mr(e, "mr read-only mapping without write access", ro, 2 * ps,
	       IBV_ACCESS_REMOTE_READ, 0);
	try_mr(e, "mr read-only mapping with local write", ro, 2 * ps, lw,
	       EFAULT);
	if (e->attr.max_mr_size < UINT64_MAX / 2)
		try_mr(e, "mr length max_mr_size+1", p, e->attr.max_mr_size + 1,
		       lw, EINVAL);
	else
		printf("note: max_mr_size %llu leaves no length beyond it\n",
		       (unsigned long long)e->attr.max_mr_size);
	try_mr_iova(e, "mr iova ending at 2^64 - 1", p, 2 * ps,
		    UINT64_MAX - 2 * ps + 1, lw, 0);
	try_mr_iova(e, "mr iova + length beyond 2^64", p, 2 * ps,
		    UINT64_MAX - ps + 1, lw, EINVAL);
	if (munmap(p + ps, ps))
		vt_fatal("munmap: %s", strerror(errno));
	try_mr(e, "mr with an unmapped middle page", p, 3 * ps, lw, EFAULT);
	try_mr(e, "mr over an unmapped page", p + ps, ps, lw, EFAULT);
	try_mr(e, "mr over an unmapped page, no write access", p + ps + 1, 10,
	       IBV_ACCESS_REMOTE_READ, EFAULT);
	munmap(p, ps);
	munmap(p + 2 * ps, ps);
	munmap(ro, 2 * ps);
}

/* Runs in a child without privileges: RLIMIT_MEMLOCK must bound pinning. */
static int memlock_child(const char *dev, uid_t uid)
{
	struct rlimit small = { 64 * 1024, 64 * 1024 }, zero = { 0, 0 };
	struct vt_env e = { 0 };
	size_t ps = page_size();
	char *p;

	vt_prog = "vt_badargs[memlock]";
	if (setrlimit(RLIMIT_MEMLOCK, &small) || setgroups(0, NULL) ||
	    setgid(uid) || setuid(uid))
		vt_fatal("dropping privileges: %s", strerror(errno));
	if (geteuid() != uid || setuid(0) == 0)
		vt_fatal("still privileged after setuid(%u)", (unsigned int)uid);
	e.ctx = vt_open(dev);
	e.pd = ibv_alloc_pd(e.ctx);
	if (!e.pd)
		vt_fatal("ibv_alloc_pd: %s", strerror(errno));
	p = map_pages(1024 * 1024 / ps, PROT_READ | PROT_WRITE);
	try_mr(&e, "memlock 64KiB: 16KiB mr", p, 16 * 1024,
	       IBV_ACCESS_LOCAL_WRITE, 0);
	try_mr(&e, "memlock 64KiB: 1MiB mr", p, 1024 * 1024,
	       IBV_ACCESS_LOCAL_WRITE, ENOMEM);
	if (setrlimit(RLIMIT_MEMLOCK, &zero))
		vt_fatal("setrlimit: %s", strerror(errno));
	try_mr(&e, "memlock 0: 4KiB mr", p, ps, IBV_ACCESS_LOCAL_WRITE, EPERM);
	if (ibv_dealloc_pd(e.pd) || ibv_close_device(e.ctx))
		vt_fail("memlock child teardown: %s", strerror(errno));
	return vt_failures ? 1 : 0;
}

static void check_memlock(const char *dev, uid_t uid)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		vt_fatal("fork: %s", strerror(errno));
	if (pid == 0)
		_exit(memlock_child(dev, uid));
	if (waitpid(pid, &status, 0) != pid)
		vt_fatal("waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		vt_fail("memlock checks failed (child status 0x%x)", status);
}

int main(int argc, char **argv)
{
	const char *dev = VT_DEFAULT_DEV;
	struct vt_env e = { 0 };
	uid_t uid = 65534;
	int opt, rc;

	vt_init("vt_badargs");
	while ((opt = getopt(argc, argv, "d:u:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'u':
			uid = vt_ulong("-u", optarg);
			break;
		default:
			fprintf(stderr, "usage: vt_badargs [-d DEV] [-u UID]\n");
			return 2;
		}
	}
	if (geteuid() != 0)
		vt_fatal("must run as root (drops to uid %u itself)",
			 (unsigned int)uid);
	check_memlock(dev, uid);

	e.ctx = vt_open(dev);
	rc = ibv_query_device(e.ctx, &e.attr);
	if (rc)
		vt_fatal("ibv_query_device: %s", strerror(rc));
	printf("limits: max_cqe=%d max_qp_wr=%d max_sge=%d max_srq_wr=%d max_srq_sge=%d\n",
	       e.attr.max_cqe, e.attr.max_qp_wr, e.attr.max_sge,
	       e.attr.max_srq_wr, e.attr.max_srq_sge);
	e.pd = ibv_alloc_pd(e.ctx);
	e.cq = ibv_create_cq(e.ctx, 16, NULL, NULL, 0);
	if (!e.pd || !e.cq)
		vt_fatal("pd/cq setup: %s", strerror(errno));
	check_cq(&e);
	check_qp(&e);
	check_srq(&e);
	check_mr(&e);
	if (ibv_destroy_cq(e.cq) || ibv_dealloc_pd(e.pd) ||
	    ibv_close_device(e.ctx))
		vt_fail("teardown: %s", strerror(errno));
	return vt_exit();
}
