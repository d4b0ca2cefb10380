// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_qpstate: drive an unconnected RC QP through the states a QP can reach
 * without a connection and check each with ibv_query_qp.
 *
 *   vt_qpstate [-d DEV]
 *
 * A new QP is in RESET (the IB verbs rule) or INIT (the iWARP Idle state,
 * which siw reports as INIT); either is accepted and printed. Then:
 * INIT (with the iw_cm attribute mask STATE|ACCESS_FLAGS) -> query INIT and
 * the access flags; RTR with the same mask (what rdma_cm asks before a
 * connection) -> accepted, still INIT; RTS without a connection -> EINVAL
 * and still INIT;
 * ERR -> query ERR; RESET -> query RESET; INIT again; an out-of-range state
 * -> EINVAL. A second QP goes straight from creation to ERR. A third,
 * in INIT, is posted a Send: refused (EINVAL) and dropped, so the move to
 * ERR that follows is prompt and completes nothing; a Send posted in ERR
 * then completes alone, flushed (before kiwi moved its transmit index with
 * the dropped Send, that flush walked 2^32 slots with interrupts off).
 */
#include <getopt.h>

#include "vt.h"

static const int vt_access = IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE |
			     IBV_ACCESS_REMOTE_READ;

static enum ibv_qp_state query_state(struct ibv_qp *qp, int *access)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	rc = ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS, &init);
	if (rc) {
		vt_fail("ibv_query_qp: %s", strerror(rc));
		return (enum ibv_qp_state)-1;
	}
	if (access)
		*access = a.qp_access_flags;
	return a.qp_state;
}

static void expect_state(struct ibv_qp *qp, enum ibv_qp_state want,
			 const char *when)
{
	enum ibv_qp_state got = query_state(qp, NULL);

	if (got != want)
		vt_fail("%s: state %d, expected %d", when, got, want);
	else
		vt_pass("%s: state %d", when, got);
}

static int modify(struct ibv_qp *qp, enum ibv_qp_state s, int mask)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = s;
	a.qp_access_flags = vt_access;
	return ibv_modify_qp(qp, &a, mask);
}

static void must_modify(struct ibv_qp *qp, enum ibv_qp_state s, int mask,
			const char *what)
{
	int rc = modify(qp, s, mask);

	if (rc)
		vt_fail("%s: ibv_modify_qp: %s", what, strerror(rc));
	else
		vt_pass("%s: modify ok", what);
}

static void walk(struct ibv_qp *qp)
{
	const int init_mask = IBV_QP_STATE | IBV_QP_ACCESS_FLAGS;
	enum ibv_qp_state s = query_state(qp, NULL);
	int access = 0, rc;

	if (s != IBV_QPS_RESET && s != IBV_QPS_INIT)
		vt_fail("new qp: state %d, expected RESET or INIT", s);
	else
		vt_pass("new qp: state %s", s == IBV_QPS_RESET ? "RESET" : "INIT");

	must_modify(qp, IBV_QPS_INIT, init_mask, "-> INIT");
	s = query_state(qp, &access);
	if (s != IBV_QPS_INIT)
		vt_fail("after -> INIT: state %d", s);
	if (access != vt_access)
		vt_fail("after -> INIT: access flags 0x%x, expected 0x%x",
			access, vt_access);

	must_modify(qp, IBV_QPS_RTR, init_mask, "INIT -> RTR (rdma_cm)");
	expect_state(qp, IBV_QPS_INIT, "after RTR without a connection");

	rc = modify(qp, IBV_QPS_RTS, IBV_QP_STATE);
	vt_expect_errno("INIT -> RTS without a connection", rc != 0, rc,
			EINVAL);
	expect_state(qp, IBV_QPS_INIT, "after refused RTS");

	rc = modify(qp, IBV_QPS_SQD, IBV_QP_STATE);
	vt_expect_errno("INIT -> SQD (nothing to close)", rc != 0, rc, EINVAL);
	expect_state(qp, IBV_QPS_INIT, "after refused SQD");

	rc = modify(qp, (enum ibv_qp_state)42, IBV_QP_STATE);
	vt_expect_errno("modify to state 42", rc != 0, rc, EINVAL);
	expect_state(qp, IBV_QPS_INIT, "after refused state 42");

	must_modify(qp, IBV_QPS_ERR, IBV_QP_STATE, "INIT -> ERR");
	expect_state(qp, IBV_QPS_ERR, "after -> ERR");

	rc = modify(qp, IBV_QPS_RTS, IBV_QP_STATE);
	vt_expect_errno("ERR -> RTS", rc != 0, rc, EINVAL);
	expect_state(qp, IBV_QPS_ERR, "after refused ERR -> RTS");

	/* rdma_disconnect() after the peer closed: iWARP asks for SQD. */
	must_modify(qp, IBV_QPS_SQD, IBV_QP_STATE, "ERR -> SQD (already closed)");
	expect_state(qp, IBV_QPS_ERR, "after SQD in ERR");

	must_modify(qp, IBV_QPS_RESET, IBV_QP_STATE, "ERR -> RESET");
	expect_state(qp, IBV_QPS_RESET, "after -> RESET");
	must_modify(qp, IBV_QPS_INIT, init_mask, "RESET -> INIT");
	expect_state(qp, IBV_QPS_INIT, "after second -> INIT");
}

static int post_send(struct ibv_qp *qp, uint64_t wr_id)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/* A Send posted in INIT is dropped: nothing of it is left to flush. */
static void send_before_connect(struct ibv_qp *qp, struct ibv_cq *cq)
{
	struct ibv_wc wc[4];
	long long t0;
	int n, rc;

	must_modify(qp, IBV_QPS_INIT, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS,
		    "third qp -> INIT");
	rc = post_send(qp, 1);
	vt_expect_errno("Send posted in INIT", rc != 0, rc, EINVAL);
	t0 = vt_now_ms();
	must_modify(qp, IBV_QPS_ERR, IBV_QP_STATE, "INIT -> ERR after the Send");
	if (vt_now_ms() - t0 > 2000)
		vt_fail("INIT -> ERR took %lld ms", vt_now_ms() - t0);
	n = ibv_poll_cq(cq, 4, wc);
	if (n)
		vt_fail("completions after the dropped Send: %d, expected 0", n);
	else
		vt_pass("no completion for the dropped Send");
	rc = post_send(qp, 2);
	if (rc)
		vt_fail("Send posted in ERR: %s", strerror(rc));
	n = ibv_poll_cq(cq, 4, wc);
	if (n != 1 || wc[0].wr_id != 2 || wc[0].status != IBV_WC_WR_FLUSH_ERR)
		vt_fail("Send posted in ERR: %d completions (first wr_id %llu status %d), expected one flushed",
			n, n > 0 ? (unsigned long long)wc[0].wr_id : 0ULL,
			n > 0 ? (int)wc[0].status : -1);
	else
		vt_pass("Send posted in ERR: flushed alone");
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	if (!qp)
		vt_fatal("ibv_create_qp: %s", strerror(errno));
	return qp;
}

int main(int argc, char **argv)
{
	const char *dev = VT_DEFAULT_DEV;
	struct ibv_context *ctx;
	struct ibv_qp *qp;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int opt;

	vt_init("vt_qpstate");
	while ((opt = getopt(argc, argv, "d:")) != -1) {
		if (opt != 'd') {
			fprintf(stderr, "usage: vt_qpstate [-d DEV]\n");
			return 2;
		}
		dev = optarg;
	}
	ctx = vt_open(dev);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!pd || !cq)
		vt_fatal("pd/cq setup: %s", strerror(errno));

	qp = make_qp(pd, cq);
	walk(qp);
	if (ibv_destroy_qp(qp))
		vt_fail("ibv_destroy_qp: %s", strerror(errno));

	qp = make_qp(pd, cq);
	must_modify(qp, IBV_QPS_ERR, IBV_QP_STATE, "new qp -> ERR");
	expect_state(qp, IBV_QPS_ERR, "new qp after -> ERR");
	if (ibv_destroy_qp(qp))
		vt_fail("ibv_destroy_qp: %s", strerror(errno));

	qp = make_qp(pd, cq);
	send_before_connect(qp, cq);
	if (ibv_destroy_qp(qp))
		vt_fail("ibv_destroy_qp: %s", strerror(errno));

	if (ibv_destroy_cq(cq) || ibv_dealloc_pd(pd) || ibv_close_device(ctx))
		vt_fail("teardown: %s", strerror(errno));
	return vt_exit();
}
