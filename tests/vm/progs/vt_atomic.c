// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_atomic: RFC 7306 atomic operations through libibverbs, kiwi <-> kiwi
 * in one process over rdma_cm (QP pairs on ADDR, vt_cm.c).
 *
 *   vt_atomic -a ADDR [-p PORT] [-n PAIRS] [-k OPS] [-m CPU_ADDS]
 *
 * Checks, each named on stdout or stderr:
 *  - ibv_query_device reports atomic_cap IBV_ATOMIC_GLOB;
 *  - Fetch-and-Add and Compare-and-Swap from either end of a connection:
 *    the completion opcode and length, the original value in the result
 *    buffer, the target's new value; a CmpSwap whose compare fails returns
 *    the original value and leaves the target alone;
 *  - a counter: PAIRS connections, one thread each, post OPS Fetch-and-Add
 *    of 1 (up to the ORD outstanding) on one 8-octet counter while a CPU
 *    thread on the target side adds 1 CPU_ADDS times with
 *    __atomic_fetch_add: the counter ends exactly at PAIRS * OPS +
 *    CPU_ADDS and no two remote atomics returned the same value;
 *  - ibv_modify_qp of max_rd_atomic and max_dest_rd_atomic to 1 in RTS is
 *    accepted and ibv_query_qp still reports the negotiated ORD and IRD 4;
 *  - a burst (EXT-05): 32 Fetch-and-Add of 1 posted at once, 8 times the
 *    ORD: the requester keeps at most ORD outstanding (the responder would refuse
 *    more than its IRD with a Terminate: the scenario checks that its
 *    ird_exceeded counter stays), all complete in order, the originals
 *    are 0 to 31 in posting order and the target ends at 32;
 *  - errors, each on a fresh connection, the target left unchanged: an
 *    unaligned remote address completes with IBV_WC_REM_INV_REQ_ERR, an
 *    MR without IBV_ACCESS_REMOTE_ATOMIC and a responder QP without remote
 *    rights (access flags: remote write only) with IBV_WC_REM_ACCESS_ERR;
 *    the requester's QP is then in the error state with an async event,
 *    a Send posted behind the atomic completes after it (flushed, or
 *    successfully if TCP took it before the Terminate came) and one
 *    posted in the error state is flushed;
 *  - a Read, and an atomic behind a valid one, refused while a 4 MiB Read
 *    is still being answered: the refused WR completes with
 *    IBV_WC_REM_ACCESS_ERR (the Terminate's MSN names it), those before it
 *    flushed (or successful);
 *  - a result SGE that is not 8 octets is refused by ibv_post_send
 *    (EINVAL).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "vt_cm.h"

#define VT_ORD 4		/* vt_cm's initiator depth */
#define VT_BURST (8 * VT_ORD)	/* atomics posted at once; <= the SQ's 32 */
#define VT_CQ_DEPTH 64
#define VT_POLL_MS 20000

static struct vt_cm cm;
static struct ibv_pd *pd;

/* Registered memory: the target words and the result buffers. */
struct mem {
	uint64_t *buf;
	size_t len;
	struct ibv_mr *mr;
};

static void mem_reg(struct mem *m, size_t len, int access)
{
	if (posix_memalign((void **)&m->buf, 4096, len))
		vt_fatal("posix_memalign failed");
	memset(m->buf, 0, len);
	m->len = len;
	m->mr = ibv_reg_mr(pd, m->buf, len, access);
	if (!m->mr)
		vt_fatal("ibv_reg_mr: %s", strerror(errno));
}

static void mem_free(struct mem *m)
{
	ibv_dereg_mr(m->mr);
	free(m->buf);
}

static void conn_open(struct vt_cm_conn *c)
{
	vt_cm_conn_open(&cm, c, pd, VT_CQ_DEPTH, 32);
}

static int post_atomic(struct ibv_qp *qp, enum ibv_wr_opcode op,
		       uint64_t *res, struct ibv_mr *res_mr, uint32_t res_len,
		       uint64_t raddr, uint32_t rkey, uint64_t cmp_add,
		       uint64_t swap, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)res,
		.length = res_len,
		.lkey = res_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	return ibv_post_send(qp, &wr, &bad);
}

static bool poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	return vt_poll_one(cq, wc, VT_POLL_MS);
}

/* Post one atomic and wait for it; the completion in @wc. */
static bool atomic_once(struct vt_cm_conn *c, int end, enum ibv_wr_opcode op,
			struct mem *res, struct mem *tgt, size_t word,
			uint64_t cmp_add, uint64_t swap, struct ibv_wc *wc)
{
	int rv = post_atomic(vt_cm_conn_qp(c, end), op, res->buf, res->mr, 8,
			     (uintptr_t)&tgt->buf[word], tgt->mr->rkey,
			     cmp_add, swap, 0x7306);

	if (rv) {
		vt_fail("post atomic %d: %s", op, strerror(rv));
		return false;
	}
	if (!poll_one(c->cq[end], wc)) {
		vt_fail("atomic %d: no completion", op);
		return false;
	}
	return true;
}

static void check_cap(void)
{
	struct ibv_device_attr attr;

	if (ibv_query_device(cm.verbs, &attr))
		vt_fatal("ibv_query_device: %s", strerror(errno));
	if (attr.atomic_cap == IBV_ATOMIC_GLOB)
		vt_pass("atomic_cap IBV_ATOMIC_GLOB");
	else
		vt_fail("atomic_cap %d, want IBV_ATOMIC_GLOB", attr.atomic_cap);
}

static void expect_wc(const char *what, const struct ibv_wc *wc,
		      enum ibv_wc_opcode op)
{
	if (wc->status != IBV_WC_SUCCESS || wc->opcode != op ||
	    wc->byte_len != 8 || wc->wr_id != 0x7306)
		vt_fail("%s: status %s opcode %d len %u", what,
			ibv_wc_status_str(wc->status), wc->opcode,
			wc->byte_len);
}

static void expect_u64(const char *what, uint64_t got, uint64_t want)
{
	if (got != want)
		vt_fail("%s: 0x%llx, want 0x%llx", what,
			(unsigned long long)got, (unsigned long long)want);
}

/* FetchAdd and CmpSwap from end @end of @c on a target at the other end. */
static void check_ops(struct vt_cm_conn *c, int end, struct mem *res,
		      struct mem *tgt)
{
	unsigned int fails = vt_failures;
	struct ibv_wc wc;

	tgt->buf[1] = 0x100000000ull - 1;
	res->buf[0] = 0xdead;
	if (atomic_once(c, end, IBV_WR_ATOMIC_FETCH_AND_ADD, res, tgt, 1, 5,
			0, &wc)) {
		expect_wc("FetchAdd", &wc, IBV_WC_FETCH_ADD);
		expect_u64("FetchAdd original", res->buf[0],
			   0x100000000ull - 1);
		expect_u64("FetchAdd target", tgt->buf[1], 0x100000004ull);
	}
	/* 0x100000004 + (2^64 - 0x100000003) wraps around to 1. */
	if (atomic_once(c, end, IBV_WR_ATOMIC_FETCH_AND_ADD, res, tgt, 1,
			0ull - 0x100000003ull, 0, &wc)) {
		expect_u64("FetchAdd wraps: original", res->buf[0],
			   0x100000004ull);
		expect_u64("FetchAdd wraps: target", tgt->buf[1], 1);
	}
	tgt->buf[2] = 42;
	if (atomic_once(c, end, IBV_WR_ATOMIC_CMP_AND_SWP, res, tgt, 2, 42,
			0xfeedfacecafebeefull, &wc)) {
		expect_wc("CmpSwap", &wc, IBV_WC_COMP_SWAP);
		expect_u64("CmpSwap original", res->buf[0], 42);
		expect_u64("CmpSwap stored", tgt->buf[2],
			   0xfeedfacecafebeefull);
	}
	if (atomic_once(c, end, IBV_WR_ATOMIC_CMP_AND_SWP, res, tgt, 2, 42,
			7, &wc)) {
		expect_wc("CmpSwap (no match)", &wc, IBV_WC_COMP_SWAP);
		expect_u64("CmpSwap (no match) original", res->buf[0],
			   0xfeedfacecafebeefull);
		expect_u64("CmpSwap (no match) target unchanged", tgt->buf[2],
			   0xfeedfacecafebeefull);
	}
	if (vt_failures == fails)
		vt_pass("FetchAdd and CmpSwap from the %s end", end ? "passive" :
			"active");
}

/* The many-client counter. */
struct hammer {
	pthread_t thread;
	struct vt_cm_conn *c;
	struct mem res;		/* one result word per atomic */
	uint64_t *counter;
	uint32_t rkey;
	unsigned long ops;
	unsigned long done;
	bool failed;
};

static void *hammer_run(void *arg)
{
	struct hammer *h = arg;
	unsigned long posted = 0;
	struct ibv_wc wc;
	int rv;

	while (h->done < h->ops) {
		while (posted < h->ops && posted - h->done < VT_ORD) {
			rv = post_atomic(vt_cm_conn_qp(h->c, 0),
					 IBV_WR_ATOMIC_FETCH_AND_ADD,
					 &h->res.buf[posted], h->res.mr, 8,
					 (uintptr_t)h->counter, h->rkey, 1, 0,
					 posted);
			if (rv) {
				h->failed = true;
				return NULL;
			}
			posted++;
		}
		if (!poll_one(h->c->cq[0], &wc) ||
		    wc.status != IBV_WC_SUCCESS ||
		    wc.opcode != IBV_WC_FETCH_ADD) {
			h->failed = true;
			return NULL;
		}
		h->done++;
	}
	return NULL;
}

static volatile bool cpu_go;

struct cpu_adder {
	pthread_t thread;
	uint64_t *counter;
	unsigned long adds;
};

static void *cpu_run(void *arg)
{
	struct cpu_adder *a = arg;
	unsigned long i;

	while (!cpu_go)
		;
	for (i = 0; i < a->adds; i++)
		__atomic_fetch_add(a->counter, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void check_counter(unsigned int pairs, unsigned long ops,
			  unsigned long cpu_adds)
{
	struct hammer *h = calloc(pairs, sizeof(*h));
	struct cpu_adder cpu;
	unsigned long total = pairs * ops, n = 0, i;
	uint64_t *all = calloc(total ? total : 1, sizeof(*all));
	bool failed = false;
	struct mem tgt;
	long long t0;
	unsigned int p;

	if (!h || !all)
		vt_fatal("out of memory");
	mem_reg(&tgt, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	for (p = 0; p < pairs; p++) {
		h[p].c = calloc(1, sizeof(*h[p].c));
		if (!h[p].c)
			vt_fatal("out of memory");
		conn_open(h[p].c);
		mem_reg(&h[p].res, ops * 8 + 8, IBV_ACCESS_LOCAL_WRITE);
		h[p].counter = &tgt.buf[3];
		h[p].rkey = tgt.mr->rkey;
		h[p].ops = ops;
	}
	cpu = (struct cpu_adder){ .counter = &tgt.buf[3], .adds = cpu_adds };
	t0 = vt_now_ms();
	if (pthread_create(&cpu.thread, NULL, cpu_run, &cpu))
		vt_fatal("pthread_create failed");
	for (p = 0; p < pairs; p++)
		if (pthread_create(&h[p].thread, NULL, hammer_run, &h[p]))
			vt_fatal("pthread_create failed");
	cpu_go = true;
	pthread_join(cpu.thread, NULL);
	for (p = 0; p < pairs; p++) {
		pthread_join(h[p].thread, NULL);
		if (h[p].failed || h[p].done != ops) {
			vt_fail("counter: connection %u failed after %lu of %lu",
				p, h[p].done, ops);
			failed = true;
		}
		for (i = 0; i < h[p].done; i++)
			all[n++] = h[p].res.buf[i];
	}
	expect_u64("counter", __atomic_load_n(&tgt.buf[3], __ATOMIC_SEQ_CST),
		   total + cpu_adds);
	qsort(all, n, sizeof(*all), cmp_u64);
	for (i = 1; i < n; i++) {
		if (all[i] == all[i - 1]) {
			vt_fail("counter: two atomics returned %llu",
				(unsigned long long)all[i]);
			failed = true;
			break;
		}
	}
	if (n && all[n - 1] >= total + cpu_adds) {
		vt_fail("counter: an atomic returned %llu, beyond the end",
			(unsigned long long)all[n - 1]);
		failed = true;
	}
	if (!failed && tgt.buf[3] == total + cpu_adds)
		vt_pass("counter: %u connections x %lu FetchAdd + %lu CPU adds = %llu exactly, all %lu originals distinct, %lld ms",
			pairs, ops, cpu_adds, (unsigned long long)tgt.buf[3],
			n, vt_now_ms() - t0);
	for (p = 0; p < pairs; p++) {
		vt_cm_conn_close(&cm, h[p].c);
		mem_free(&h[p].res);
		free(h[p].c);
	}
	mem_free(&tgt);
	free(all);
	free(h);
}

/* Wait for an async event on @qp; ack every event seen. */
static bool async_event_on(struct ibv_qp *qp, enum ibv_event_type *type)
{
	long long end = vt_now_ms() + 5000;
	struct ibv_async_event ev;
	struct pollfd pfd = { .fd = cm.verbs->async_fd, .events = POLLIN };
	bool found = false;

	while (!found && vt_now_ms() < end) {
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		if (ibv_get_async_event(cm.verbs, &ev))
			break;
		if (ev.element.qp == qp) {
			*type = ev.event_type;
			found = true;
		}
		ibv_ack_async_event(&ev);
	}
	return found;
}

enum bad_kind { BAD_UNALIGNED, BAD_MR_ACCESS, BAD_QP_ACCESS };

/*
 * One refused atomic on a fresh connection: the WR's status, the target
 * unchanged, the requester's QP in error with an async event, a Send
 * posted behind it flushed.
 */
static void check_refused(enum bad_kind kind, enum ibv_wc_status want)
{
	static const char *const names[] = {
		"unaligned target", "MR without REMOTE_ATOMIC",
		"responder QP without remote rights",
	};
	unsigned int fails = vt_failures;
	struct ibv_qp_attr qa = { 0 };
	struct ibv_qp_init_attr qia;
	struct ibv_send_wr send = { .wr_id = 2, .opcode = IBV_WR_SEND,
				    .send_flags = IBV_SEND_SIGNALED }, *bad;
	enum ibv_event_type ev = IBV_EVENT_COMM_EST;
	struct mem res, tgt;
	struct ibv_wc wc;
	struct vt_cm_conn c;
	int rv;

	conn_open(&c);
	mem_reg(&res, 4096, IBV_ACCESS_LOCAL_WRITE);
	mem_reg(&tgt, 4096, kind == BAD_MR_ACCESS ?
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
		IBV_ACCESS_REMOTE_WRITE :
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	tgt.buf[0] = 0x1111111111111111ull;
	tgt.buf[1] = 0x2222222222222222ull;
	if (kind == BAD_QP_ACCESS) {
		qa.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		rv = ibv_modify_qp(vt_cm_conn_qp(&c, 1), &qa, IBV_QP_ACCESS_FLAGS);
		if (rv)
			vt_fail("%s: ibv_modify_qp access: %s", names[kind],
				strerror(rv));
	}
	rv = post_atomic(vt_cm_conn_qp(&c, 0), IBV_WR_ATOMIC_FETCH_AND_ADD, res.buf,
			 res.mr, 8, (uintptr_t)tgt.buf +
			 (kind == BAD_UNALIGNED ? 4 : 0), tgt.mr->rkey, 1, 0,
			 0x7306);
	if (!rv)
		rv = ibv_post_send(vt_cm_conn_qp(&c, 0), &send, &bad);
	if (rv) {
		vt_fail("%s: post: %s", names[kind], strerror(rv));
	} else if (!poll_one(c.cq[0], &wc)) {
		vt_fail("%s: no completion", names[kind]);
	} else {
		if (wc.wr_id != 0x7306 || wc.status != want)
			vt_fail("%s: wr %llu status %s, want %s", names[kind],
				(unsigned long long)wc.wr_id,
				ibv_wc_status_str(wc.status),
				ibv_wc_status_str(want));
		/*
		 * The Send behind the atomic completes after it: flushed, or
		 * successfully if TCP took it before the Terminate came
		 * (Documentation/datapath.md). One posted now, in ERR, is
		 * flushed.
		 */
		if (!poll_one(c.cq[0], &wc))
			vt_fail("%s: no completion for the Send behind it",
				names[kind]);
		else if (wc.wr_id != 2 || (wc.status != IBV_WC_WR_FLUSH_ERR &&
					   wc.status != IBV_WC_SUCCESS))
			vt_fail("%s: the Send behind it: wr %llu status %s",
				names[kind], (unsigned long long)wc.wr_id,
				ibv_wc_status_str(wc.status));
		send.wr_id = 3;
		rv = ibv_post_send(vt_cm_conn_qp(&c, 0), &send, &bad);
		if (rv || !poll_one(c.cq[0], &wc) || wc.wr_id != 3 ||
		    wc.status != IBV_WC_WR_FLUSH_ERR)
			vt_fail("%s: a Send posted in ERR was not flushed",
				names[kind]);
	}
	expect_u64("target word 0 unchanged", tgt.buf[0],
		   0x1111111111111111ull);
	expect_u64("target word 1 unchanged", tgt.buf[1],
		   0x2222222222222222ull);
	if (!async_event_on(vt_cm_conn_qp(&c, 0), &ev))
		vt_fail("%s: no async event on the requester's QP",
			names[kind]);
	if (ibv_query_qp(vt_cm_conn_qp(&c, 0), &qa, IBV_QP_STATE, &qia) ||
	    qa.qp_state != IBV_QPS_ERR)
		vt_fail("%s: requester QP state %d, want ERR", names[kind],
			qa.qp_state);
	if (vt_failures == fails)
		vt_pass("%s: %s, target unchanged, QP in ERR, async event %s",
			names[kind], ibv_wc_status_str(want),
			ibv_event_type_str(ev));
	vt_cm_conn_close(&cm, &c);
	mem_free(&res);
	mem_free(&tgt);
}

/*
 * A Request refused behind a 4 MiB Read still being answered (the
 * responder Terminates at once, TX sends the Terminate before the rest of
 * the Response): the Terminate's copied header names the refused WR, which
 * completes with IBV_WC_REM_ACCESS_ERR; the WRs before it complete first,
 * flushed (or successfully, if answered before the Terminate came).
 * @atomic: the refused Request is a Fetch-and-Add behind the Read and a
 * valid Fetch-and-Add (whose Response waits behind the Read's), else a Read.
 */
static void check_refused_behind(bool atomic)
{
	const char *what = atomic ? "an atomic refused behind a Read and an atomic" :
				    "a Read refused behind a Read";
	const size_t big = 4 << 20;
	unsigned int fails = vt_failures, flushed = 0;
	struct mem src, sink, res, tgt;
	struct ibv_qp *qp;
	struct vt_cm_conn c;
	struct ibv_wc wc;
	uint64_t last, id;
	int rv;

	conn_open(&c);
	qp = vt_cm_conn_qp(&c, 0);
	mem_reg(&src, big, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	mem_reg(&sink, big, IBV_ACCESS_LOCAL_WRITE);
	mem_reg(&res, 4096, IBV_ACCESS_LOCAL_WRITE);
	mem_reg(&tgt, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	rv = vt_post_rdma(qp, IBV_WR_RDMA_READ, 10, sink.buf, big, sink.mr->lkey,
			  (uintptr_t)src.buf, src.mr->rkey);
	if (!rv && atomic)
		rv = post_atomic(qp, IBV_WR_ATOMIC_FETCH_AND_ADD, res.buf,
				 res.mr, 8, (uintptr_t)tgt.buf, tgt.mr->rkey,
				 1, 0, 11);
	/* No REMOTE_ATOMIC on the Read's source, no REMOTE_READ on tgt. */
	if (!rv && atomic)
		rv = post_atomic(qp, IBV_WR_ATOMIC_FETCH_AND_ADD, &res.buf[1],
				 res.mr, 8, (uintptr_t)src.buf, src.mr->rkey,
				 1, 0, 12);
	else if (!rv)
		rv = vt_post_rdma(qp, IBV_WR_RDMA_READ, 12, res.buf, 64,
				  res.mr->lkey, (uintptr_t)tgt.buf,
				  tgt.mr->rkey);
	if (rv)
		vt_fail("%s: post: %s", what, strerror(rv));
	last = atomic ? 11 : 10;
	for (id = 10; !rv && id <= last; id++) {
		if (!poll_one(c.cq[0], &wc)) {
			vt_fail("%s: WR %llu: no completion", what,
				(unsigned long long)id);
			rv = -1;
		} else if (wc.wr_id != id || (wc.status != IBV_WC_WR_FLUSH_ERR &&
					      wc.status != IBV_WC_SUCCESS)) {
			vt_fail("%s: completion of WR %llu: WR %llu %s, want flushed or success",
				what, (unsigned long long)id,
				(unsigned long long)wc.wr_id,
				ibv_wc_status_str(wc.status));
		} else {
			flushed += wc.status == IBV_WC_WR_FLUSH_ERR;
		}
	}
	if (!rv && !poll_one(c.cq[0], &wc))
		vt_fail("%s: the refused WR: no completion", what);
	else if (!rv && (wc.wr_id != 12 || wc.status != IBV_WC_REM_ACCESS_ERR))
		vt_fail("%s: WR %llu %s, want WR 12 IBV_WC_REM_ACCESS_ERR",
			what, (unsigned long long)wc.wr_id,
			ibv_wc_status_str(wc.status));
	if (vt_failures == fails)
		vt_pass("%s: the refused WR IBV_WC_REM_ACCESS_ERR, %u of the %llu before it flushed",
			what, flushed, (unsigned long long)(last - 9));
	vt_cm_conn_close(&cm, &c);
	mem_free(&src);
	mem_free(&sink);
	mem_free(&res);
	mem_free(&tgt);
}

/* A result SGE must be exactly 8 octets. */
static void check_bad_result_sge(void)
{
	struct mem res;
	struct vt_cm_conn c;
	int rv;

	conn_open(&c);
	mem_reg(&res, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	rv = post_atomic(vt_cm_conn_qp(&c, 0), IBV_WR_ATOMIC_CMP_AND_SWP, res.buf,
			 res.mr, 4, (uintptr_t)res.buf, res.mr->rkey, 0, 1, 1);
	vt_expect_errno("CmpSwap with a 4-octet result SGE", rv != 0, rv,
			EINVAL);
	vt_cm_conn_close(&cm, &c);
	mem_free(&res);
}

/*
 * The negotiated depths are in force on a connection: ibv_modify_qp of
 * max_rd_atomic and max_dest_rd_atomic in RTS is accepted (IB allows them
 * in RTS to RTS) and does not change what ibv_query_qp reports.
 */
static void check_depths_fixed(struct vt_cm_conn *c)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_RTS, .max_rd_atomic = 1,
				  .max_dest_rd_atomic = 1 };
	struct ibv_qp_init_attr qia;
	int rv;

	rv = ibv_modify_qp(vt_cm_conn_qp(c, 0), &qa, IBV_QP_STATE |
			   IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC);
	if (rv) {
		vt_fail("RTS -> RTS with max_rd_atomic 1: %s", strerror(rv));
		return;
	}
	memset(&qa, 0, sizeof(qa));
	rv = ibv_query_qp(vt_cm_conn_qp(c, 0), &qa, IBV_QP_MAX_QP_RD_ATOMIC |
			  IBV_QP_MAX_DEST_RD_ATOMIC, &qia);
	if (rv)
		vt_fail("ibv_query_qp: %s", strerror(rv));
	else if (qa.max_rd_atomic != VT_ORD || qa.max_dest_rd_atomic != VT_ORD)
		vt_fail("after RTS -> RTS with depths 1: ibv_query_qp ORD %u IRD %u, want the negotiated %d and %d",
			qa.max_rd_atomic, qa.max_dest_rd_atomic, VT_ORD, VT_ORD);
	else
		vt_pass("RTS -> RTS with max_rd_atomic and max_dest_rd_atomic 1: accepted, ibv_query_qp keeps the negotiated ORD %d and IRD %d",
			VT_ORD, VT_ORD);
}

/* VT_BURST atomics posted at once, beyond the ORD. */
static void check_burst(void)
{
	unsigned int fails = vt_failures;
	struct mem res, tgt;
	struct vt_cm_conn c;
	struct ibv_wc wc;
	int i, rv = 0;

	conn_open(&c);
	mem_reg(&res, 4096, IBV_ACCESS_LOCAL_WRITE);
	mem_reg(&tgt, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	check_depths_fixed(&c);
	for (i = 0; i < VT_BURST && !rv; i++)
		rv = post_atomic(vt_cm_conn_qp(&c, 0),
				 IBV_WR_ATOMIC_FETCH_AND_ADD, &res.buf[i],
				 res.mr, 8, (uintptr_t)tgt.buf, tgt.mr->rkey, 1,
				 0, (uint64_t)i);
	if (rv)
		vt_fail("burst: post atomic %d: %s", i - 1, strerror(rv));
	for (i = 0; !rv && i < VT_BURST; i++) {
		if (!poll_one(c.cq[0], &wc)) {
			vt_fail("burst: atomic %d: no completion", i);
			break;
		}
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != (uint64_t)i ||
		    wc.opcode != IBV_WC_FETCH_ADD)
			vt_fail("burst: completion %d: wr_id %llu status %s", i,
				(unsigned long long)wc.wr_id,
				ibv_wc_status_str(wc.status));
		else if (res.buf[i] != (uint64_t)i)
			vt_fail("burst: atomic %d returned %llu, want %d", i,
				(unsigned long long)res.buf[i], i);
	}
	if (tgt.buf[0] != VT_BURST)
		vt_fail("burst: target %llu, want %d",
			(unsigned long long)tgt.buf[0], VT_BURST);
	if (vt_failures == fails)
		vt_pass("burst: %d Fetch-and-Add posted at once (ORD %d) completed in order, originals 0..%d, target %d",
			VT_BURST, VT_ORD, VT_BURST - 1, VT_BURST);
	vt_cm_conn_close(&cm, &c);
	mem_free(&res);
	mem_free(&tgt);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: vt_atomic -a ADDR [-p PORT] [-n PAIRS] [-k OPS] [-m CPU_ADDS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *addr = NULL, *port = "7306";
	unsigned long pairs = 4, ops = 2000, cpu_adds = 1000000;
	struct mem res, tgt;
	struct vt_cm_conn c;
	int opt;

	vt_init("vt_atomic");
	while ((opt = getopt(argc, argv, "a:p:n:k:m:")) != -1) {
		switch (opt) {
		case 'a':
			addr = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		case 'n':
			pairs = vt_ulong("-n", optarg);
			break;
		case 'k':
			ops = vt_ulong("-k", optarg);
			break;
		case 'm':
			cpu_adds = vt_ulong("-m", optarg);
			break;
		default:
			usage();
		}
	}
	if (!addr || !pairs || pairs > 64)
		usage();
	vt_cm_listen(&cm, addr, port);
	pd = ibv_alloc_pd(cm.verbs);
	if (!pd)
		vt_fatal("ibv_alloc_pd: %s", strerror(errno));
	check_cap();

	conn_open(&c);
	mem_reg(&res, 4096, IBV_ACCESS_LOCAL_WRITE);
	mem_reg(&tgt, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	check_ops(&c, 0, &res, &tgt);
	check_ops(&c, 1, &res, &tgt);
	vt_cm_conn_close(&cm, &c);
	mem_free(&res);
	mem_free(&tgt);

	check_counter((unsigned int)pairs, ops, cpu_adds);
	check_burst();
	check_refused(BAD_UNALIGNED, IBV_WC_REM_INV_REQ_ERR);
	check_refused(BAD_MR_ACCESS, IBV_WC_REM_ACCESS_ERR);
	check_refused(BAD_QP_ACCESS, IBV_WC_REM_ACCESS_ERR);
	check_refused_behind(false);
	check_refused_behind(true);
	check_bad_result_sge();

	ibv_dealloc_pd(pd);
	vt_cm_close(&cm);
	return vt_exit();
}
