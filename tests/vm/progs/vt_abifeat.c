// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_abifeat: traffic with whatever context features libkiwi and kiwi.ko
 * agreed on (kiwi(7): the abi_features module parameter,
 * KIWI_ABI_FEATURES), kiwi <-> kiwi in one process over rdma_cm.
 *
 *   vt_abifeat -a ADDR [-p PORT] -m every|fewer
 *
 * Posts VT_N RDMA Writes of 64 KiB, one ibv_post_send each, as fast as it
 * can, and counts the write(2) calls of the posting loop (syscw of
 * /proc/self/io): each doorbell is one. With small socket buffers (the
 * scenario sets them) the first Write stalls the send engine, and while it
 * is stalled a post may skip the doorbell if libkiwi uses the doorbell
 * feature. -m every: the feature must be off (libkiwi falls back to
 * ringing on every post): exactly VT_N. -m fewer: it must be on: fewer
 * than VT_N. Then every Write completes successfully and the target holds
 * each one's pattern, and a Send of the same connection arrives.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <unistd.h>

#include "vt_cm.h"

#define VT_N 64
#define VT_LEN 65536
#define VT_POLL_MS 20000

static struct vt_cm cm;

static struct ibv_mr *reg(struct ibv_pd *pd, void *buf, size_t len)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE);

	if (!mr)
		vt_fatal("ibv_reg_mr: %s", strerror(errno));
	return mr;
}

/* Post VT_N Writes from @src to @dst; returns the write(2) calls made. */
static long long post_writes(struct vt_cm_conn *c, uint8_t *src,
			     struct ibv_mr *smr, struct ibv_mr *dmr)
{
	struct ibv_send_wr wr = {
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_sge sge = { .length = VT_LEN, .lkey = smr->lkey };
	long long w0, w1;
	int i, rv = 0;

	wr.sg_list = &sge;
	wr.wr.rdma.rkey = dmr->rkey;
	w0 = vt_syscw();
	for (i = 0; i < VT_N && !rv; i++) {
		wr.wr_id = (uint64_t)i;
		sge.addr = (uintptr_t)(src + (size_t)i * VT_LEN);
		wr.wr.rdma.remote_addr = (uintptr_t)dmr->addr +
					 (uint64_t)i * VT_LEN;
		rv = ibv_post_send(vt_cm_conn_qp(c, 0), &wr, &bad);
	}
	w1 = vt_syscw();
	if (rv)
		vt_fatal("ibv_post_send %d: %s", i - 1, strerror(rv));
	return w0 < 0 || w1 < 0 ? -1 : w1 - w0;
}

static void check_doorbells(long long n, bool every)
{
	if (n < 0)
		vt_fail("no /proc/self/io: write(2) calls not counted");
	else if (every ? n != VT_N : n >= VT_N || n < 1)
		vt_fail("%d posts made %lld write(2) calls, want %s %d", VT_N,
			n, every ? "exactly" : "1 to fewer than", VT_N);
	else
		vt_pass("%d posts made %lld doorbell write(2) calls: %s", VT_N,
			n, every ? "one per post, the doorbell feature is off" :
				   "posts skipped it, the feature is in use");
}

static void check_writes(struct vt_cm_conn *c, const uint8_t *dst)
{
	struct ibv_wc wc;
	int i, done = 0;
	size_t j;

	for (i = 0; i < VT_N; i++) {
		if (!vt_poll_one(c->cq[0], &wc, VT_POLL_MS)) {
			vt_fail("Write %d: no completion", i);
			return;
		}
		if (wc.status == IBV_WC_SUCCESS && wc.wr_id == (uint64_t)i)
			done++;
	}
	for (j = 0; j < (size_t)VT_N * VT_LEN &&
		    dst[j] == (uint8_t)(j / VT_LEN + 1); j++)
		;
	if (done != VT_N || j != (size_t)VT_N * VT_LEN)
		vt_fail("%d of %d Writes completed in order; the target differs at octet %zu",
			done, VT_N, j);
	else
		vt_pass("%d Writes completed in order, every octet landed", VT_N);
}

/* A Send with a receive waiting: the connection still carries messages. */
static void check_send(struct vt_cm_conn *c, struct ibv_mr *smr,
		       struct ibv_mr *dmr)
{
	struct ibv_sge ssge = { .addr = (uintptr_t)smr->addr, .length = 8,
				.lkey = smr->lkey };
	struct ibv_sge rsge = { .addr = (uintptr_t)dmr->addr, .length = 8,
				.lkey = dmr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = {
		.sg_list = &ssge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *sbad;
	struct ibv_wc wc;

	if (ibv_post_recv(vt_cm_conn_qp(c, 1), &rwr, &rbad) ||
	    ibv_post_send(vt_cm_conn_qp(c, 0), &swr, &sbad))
		vt_fatal("post: %s", strerror(errno));
	if (!vt_poll_one(c->cq[1], &wc, VT_POLL_MS) ||
	    wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
	    wc.byte_len != 8)
		vt_fail("the Send did not arrive");
	else
		vt_pass("a Send arrives");
}

static void usage(void)
{
	fprintf(stderr, "usage: vt_abifeat -a ADDR [-p PORT] -m every|fewer\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static uint8_t src[VT_N * VT_LEN], dst[VT_N * VT_LEN];
	struct ibv_mr *smr, *dmr;
	struct vt_cm_conn c;
	struct ibv_pd *pd;
	bool every;
	size_t j;

	vt_init("vt_abifeat");
	if (argc < 3 || strcmp(argv[argc - 2], "-m"))
		usage();
	if (!strcmp(argv[argc - 1], "every"))
		every = true;
	else if (!strcmp(argv[argc - 1], "fewer"))
		every = false;
	else
		usage();
	vt_cm_listen_args(&cm, argc - 2, argv, "7309", usage);
	pd = ibv_alloc_pd(cm.verbs);
	if (!pd)
		vt_fatal("ibv_alloc_pd: %s", strerror(errno));
	for (j = 0; j < sizeof(src); j++)
		src[j] = (uint8_t)(j / VT_LEN + 1);
	smr = reg(pd, src, sizeof(src));
	dmr = reg(pd, dst, sizeof(dst));
	vt_cm_conn_open(&cm, &c, pd, 2 * VT_N, VT_N);
	check_doorbells(post_writes(&c, src, smr, dmr), every);
	check_writes(&c, dst);
	check_send(&c, smr, dmr);
	vt_cm_conn_close(&cm, &c);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(dmr);
	ibv_dealloc_pd(pd);
	vt_cm_close(&cm);
	return vt_exit();
}
