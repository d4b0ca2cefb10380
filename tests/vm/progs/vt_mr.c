// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_mr: register memory regions at unaligned addresses with odd lengths
 * and check what ibv_reg_mr reports: addr, length, pd, and keys that are
 * unique among the regions alive at the same time.
 *
 *   vt_mr [-d DEV] [-H READYFILE]
 *
 * Every region is printed as "mr addr=0x.. length=N lkey=0x.. rkey=0x..";
 * with -H the regions stay registered until SIGUSR1/SIGTERM so a scenario
 * can compare them with `rdma resource show mr`.
 */
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vt.h"

#define VT_AREA_LEN (256 * 1024)

static const struct {
	size_t offset;
	size_t length;
	int access;
} vt_cases[] = {
	{ 0, 1, IBV_ACCESS_LOCAL_WRITE },
	{ 1, 1, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE },
	{ 7, 3, IBV_ACCESS_REMOTE_READ },
	{ 4095, 2, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ },
	{ 4095, 4097, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE },
	{ 13, 8191, IBV_ACCESS_LOCAL_WRITE },
	{ 4196, 12345, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ },
	{ 1, 65535, IBV_ACCESS_LOCAL_WRITE },
	{ 4097, 131071, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ },
	{ 3, VT_AREA_LEN - 3, 0 },
	{ 0, VT_AREA_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE },
};

#define VT_NCASES (sizeof(vt_cases) / sizeof(vt_cases[0]))

static void check_mr(const struct ibv_mr *mr, struct ibv_pd *pd, void *addr,
		     size_t len, size_t idx)
{
	if (mr->addr != addr)
		vt_fail("case %zu: addr %p, expected %p", idx, mr->addr, addr);
	if (mr->length != len)
		vt_fail("case %zu: length %zu, expected %zu", idx, mr->length,
			len);
	if (mr->pd != pd || mr->context != pd->context)
		vt_fail("case %zu: pd/context not the ones registered with",
			idx);
	printf("mr addr=%p length=%zu lkey=0x%x rkey=0x%x\n", mr->addr,
	       mr->length, mr->lkey, mr->rkey);
}

static bool remote(size_t idx)
{
	return vt_cases[idx].access &
	       (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
}

/*
 * lkeys must differ between live regions; so must the rkeys of regions
 * with remote access (a region without remote access may report any rkey,
 * rxe reports 0). @idx maps a region to its case.
 */
static void check_unique(struct ibv_mr **mr, const size_t *idx, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++) {
			if (mr[i]->lkey == mr[j]->lkey)
				vt_fail("cases %zu and %zu share lkey 0x%x",
					idx[i], idx[j], mr[i]->lkey);
			if (remote(idx[i]) && remote(idx[j]) &&
			    mr[i]->rkey == mr[j]->rkey)
				vt_fail("cases %zu and %zu share rkey 0x%x",
					idx[i], idx[j], mr[i]->rkey);
		}
}

static void wait_signal(const char *ready)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		vt_fatal("sigprocmask: %s", strerror(errno));
	vt_signal_ready(ready);
	if (sigwait(&set, &sig))
		vt_fatal("sigwait failed");
}

int main(int argc, char **argv)
{
	const char *dev = VT_DEFAULT_DEV, *ready = NULL;
	struct ibv_mr *mr[VT_NCASES];
	size_t idx[VT_NCASES];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	uint8_t *area;
	size_t i, n = 0;
	int opt, rc;

	vt_init("vt_mr");
	while ((opt = getopt(argc, argv, "d:H:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'H':
			ready = optarg;
			break;
		default:
			fprintf(stderr, "usage: vt_mr [-d DEV] [-H READYFILE]\n");
			return 2;
		}
	}
	ctx = vt_open(dev);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		vt_fatal("ibv_alloc_pd: %s", strerror(errno));
	area = mmap(NULL, VT_AREA_LEN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		vt_fatal("mmap: %s", strerror(errno));
	memset(area, 0xa5, VT_AREA_LEN);

	for (i = 0; i < VT_NCASES; i++) {
		uint8_t *addr = area + vt_cases[i].offset;
		size_t len = vt_cases[i].length;

		mr[n] = ibv_reg_mr(pd, addr, len, vt_cases[i].access);
		if (!mr[n]) {
			vt_fail("case %zu: ibv_reg_mr(%p, %zu, 0x%x): %s", i,
				(void *)addr, len, vt_cases[i].access,
				strerror(errno));
			continue;
		}
		idx[n] = i;
		check_mr(mr[n++], pd, addr, len, i);
	}
	check_unique(mr, idx, n);
	for (i = 0; i < VT_AREA_LEN; i++)
		if (area[i] != 0xa5) {
			vt_fail("registration changed byte %zu of the buffer",
				i);
			break;
		}
	if (ready)
		wait_signal(ready);
	for (i = 0; i < n; i++) {
		rc = ibv_dereg_mr(mr[i]);
		if (rc)
			vt_fail("ibv_dereg_mr #%zu: %s", i, strerror(rc));
	}
	if (n == VT_NCASES && !vt_failures)
		vt_pass("%zu unaligned regions registered and checked", n);
	if (ibv_dealloc_pd(pd))
		vt_fail("ibv_dealloc_pd: %s", strerror(errno));
	munmap(area, VT_AREA_LEN);
	if (ibv_close_device(ctx))
		vt_fail("ibv_close_device: %s", strerror(errno));
	return vt_exit();
}
