// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_events: the affiliated asynchronous events of SRQs, QPs and CQs and
 * the verbs kiwi refuses, through libibverbs, kiwi <-> kiwi in one process
 * over rdma_cm (vt_cm.c). Every object lives in the listener's device
 * context, so one async event queue sees them all.
 *
 *   vt_events -a ADDR [-p PORT]
 *
 * Checks, each named on stdout or stderr:
 *  - SRQ limit: ibv_modify_srq(IBV_SRQ_LIMIT) above max_wr is EINVAL; an
 *    armed limit is read back by ibv_query_srq; receives consumed down to
 *    the limit raise nothing, the next one raises
 *    IBV_EVENT_SRQ_LIMIT_REACHED for that SRQ exactly once and disarms
 *    the limit (ibv_query_srq reads 0, more receives raise nothing); a
 *    limit armed again fires again;
 *  - last WQE: a connected QP on the SRQ moved to the error state gets
 *    IBV_EVENT_QP_LAST_WQE_REACHED once; so does an unconnected one; a QP
 *    without an SRQ does not;
 *  - CQ overrun: a receive CQ of 4 entries that nobody polls, five Sends
 *    to its QP: IBV_EVENT_CQ_ERR for that CQ exactly once, the QP gets
 *    IBV_EVENT_QP_FATAL and is in the error state, the four completions
 *    that fitted are intact; a connection on other CQs still carries a
 *    Send afterwards (RFC 5040 8.1.1 rule 10); a new connection's QP on
 *    the emptied CQ, overrun again: that QP too gets IBV_EVENT_QP_FATAL
 *    and the error state (no second IBV_EVENT_CQ_ERR);
 *  - ibv_resize_cq of a CQ holding 3 unpolled receive completions: to 2
 *    and to 0 EINVAL (cqe unchanged), to 100 (128 entries) and back to 4
 *    keeps the 3 in order; 8 rounds of 4 Sends posted and the CQ resized
 *    twice while they arrive: every receive completes once, in order;
 *    resized to 1 entry it still works.
 * The scenario checks the kernel log for warnings.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <unistd.h>

#include "vt_cm.h"

#define MSG_LEN 64
#define NBUF 32
#define SRQ_WR 16
#define SMALL_CQ 4
#define POLL_MS 10000
#define QUIET_MS 500

static struct vt_cm cm;
static struct ibv_pd *pd;
static uint8_t *buf;
static struct ibv_mr *mr;

/* An event of @type about @obj (a QP, SRQ or CQ pointer). */
struct want {
	enum ibv_event_type type;
	const void *obj;
};

static const void *event_obj(const struct ibv_async_event *ev)
{
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		return ev->element.cq;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return ev->element.srq;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return ev->element.qp;
	default:
		return NULL;
	}
}

/*
 * Count the events matching @w that arrive within @ms milliseconds (all
 * of them: the window is not cut short). Others are printed.
 */
static int count_events(struct want w, int ms)
{
	long long end = vt_now_ms() + ms;
	struct pollfd pfd = { .fd = cm.verbs->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	long long left;
	int n = 0;

	while ((left = end - vt_now_ms()) > 0) {
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		if (ibv_get_async_event(cm.verbs, &ev))
			continue;
		if (ev.event_type == w.type && event_obj(&ev) == w.obj)
			n++;
		else
			printf("vt_events: (other event: %s)\n",
			       ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
	return n;
}

/* Wait up to @ms for one event matching @w; true if it came. */
static bool wait_event(struct want w, int ms)
{
	long long end = vt_now_ms() + ms;
	struct pollfd pfd = { .fd = cm.verbs->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	long long left;
	bool hit;

	while ((left = end - vt_now_ms()) > 0) {
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		if (ibv_get_async_event(cm.verbs, &ev))
			continue;
		hit = ev.event_type == w.type && event_obj(&ev) == w.obj;
		if (!hit)
			printf("vt_events: (other event: %s)\n",
			       ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
		if (hit)
			return true;
	}
	return false;
}

static void expect_event(const char *what, struct want w)
{
	if (wait_event(w, POLL_MS))
		vt_pass("%s: %s", what, ibv_event_type_str(w.type));
	else
		vt_fail("%s: no %s", what, ibv_event_type_str(w.type));
}

static void expect_count(const char *what, struct want w, int want)
{
	int n = count_events(w, QUIET_MS);

	if (n == want)
		vt_pass("%s: %d more %s", what, n, ibv_event_type_str(w.type));
	else
		vt_fail("%s: %d more %s, expected %d", what, n,
			ibv_event_type_str(w.type), want);
}

static void post_recv_srq(struct ibv_srq *srq, int i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + (size_t)i * MSG_LEN,
			       .length = MSG_LEN, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_srq_recv(srq, &wr, &bad))
		vt_fatal("ibv_post_srq_recv failed");
}

static void post_recv_qp(struct ibv_qp *qp, int i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + (size_t)i * MSG_LEN,
			       .length = MSG_LEN, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		vt_fatal("ibv_post_recv failed");
}

/* Post one signaled Send on @qp and wait for its completion on @cq. */
static bool send_one(struct ibv_qp *qp, struct ibv_cq *cq)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = MSG_LEN,
			       .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	if (ibv_post_send(qp, &wr, &bad))
		return false;
	return vt_poll_one(cq, &wc, POLL_MS) && wc.status == IBV_WC_SUCCESS;
}

/* @n Sends on @qp, completing on @scq, each received on @rcq. */
static void sends_received(struct ibv_qp *qp, struct ibv_cq *scq,
			   struct ibv_cq *rcq, int n)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < n; i++)
		if (!send_one(qp, scq) || !vt_poll_one(rcq, &wc, POLL_MS) ||
		    wc.status != IBV_WC_SUCCESS)
			vt_fatal("Send %d of %d not delivered", i + 1, n);
}

static uint32_t query_limit(struct ibv_srq *srq)
{
	struct ibv_srq_attr a;

	if (ibv_query_srq(srq, &a))
		vt_fatal("ibv_query_srq: %s", strerror(errno));
	return a.srq_limit;
}

static void arm_limit(struct ibv_srq *srq, uint32_t limit)
{
	struct ibv_srq_attr a = { .srq_limit = limit };
	int rv = ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT);

	if (rv)
		vt_fatal("ibv_modify_srq(limit %u): %s", limit, strerror(rv));
	if (query_limit(srq) == limit)
		vt_pass("SRQ limit %u armed and read back", limit);
	else
		vt_fail("SRQ limit %u armed, ibv_query_srq reads %u", limit,
			query_limit(srq));
}

static void to_error(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		vt_fatal("ibv_modify_qp(ERR): %s", strerror(errno));
}

/*
 * The SRQ limit on a connection whose passive QP receives from @srq, then
 * the last WQE event of that QP.
 */
static void test_srq(struct ibv_cq *cq, struct ibv_cq *rcq,
		     struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_srq_attr big = { .srq_limit = SRQ_WR + 1 };
	struct want lim = { IBV_EVENT_SRQ_LIMIT_REACHED, srq };
	struct vt_cm_pair pair;
	struct ibv_qp *qp;
	int i, rv;

	rv = ibv_modify_srq(srq, &big, IBV_SRQ_LIMIT);
	vt_expect_errno("ibv_modify_srq limit above max_wr", rv != 0, rv,
			EINVAL);
	for (i = 0; i < SRQ_WR; i++)
		post_recv_srq(srq, i);
	a.cap.max_recv_wr = 1;
	a.cap.max_recv_sge = 1;
	vt_cm_prepare(&cm, &pair, pd, &a);
	a.send_cq = rcq;
	a.recv_cq = rcq;
	a.srq = srq;
	a.cap.max_recv_wr = 0;
	a.cap.max_recv_sge = 0;
	vt_cm_establish(&cm, &pair, pd, &a);
	qp = pair.active->qp;
	arm_limit(srq, SRQ_WR / 2);
	/* 16 -> 8 left: not below the limit. */
	sends_received(qp, cq, rcq, SRQ_WR / 2);
	expect_count("8 of 16 taken, limit 8", lim, 0);
	sends_received(qp, cq, rcq, 1);
	expect_count("9 of 16 taken, limit 8", lim, 1);
	if (query_limit(srq) == 0)
		vt_pass("SRQ limit disarmed after the event");
	else
		vt_fail("SRQ limit %u after the event, expected 0",
			query_limit(srq));
	sends_received(qp, cq, rcq, 2);
	expect_count("11 of 16 taken, disarmed", lim, 0);
	arm_limit(srq, 4);
	sends_received(qp, cq, rcq, 1);
	expect_count("12 of 16 taken, limit 4", lim, 0);
	sends_received(qp, cq, rcq, 1);
	expect_count("13 of 16 taken, limit 4", lim, 1);

	to_error(pair.passive->qp);
	expect_event("connected SRQ QP to ERR",
		     (struct want){ IBV_EVENT_QP_LAST_WQE_REACHED,
				    pair.passive->qp });
	expect_count("connected SRQ QP after its last WQE event",
		     (struct want){ IBV_EVENT_QP_LAST_WQE_REACHED,
				    pair.passive->qp }, 0);
	expect_count("QP without SRQ, its peer in ERR",
		     (struct want){ IBV_EVENT_QP_LAST_WQE_REACHED, qp }, 0);
	vt_cm_teardown(&cm, &pair);
}

/* An SRQ QP that never connected, and a QP without an SRQ, to ERR. */
static void test_last_wqe_idle(struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .srq = srq,
		.cap = { .max_send_wr = 1, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp, *plain;

	qp = ibv_create_qp(pd, &a);
	a.srq = NULL;
	a.cap.max_recv_wr = 1;
	a.cap.max_recv_sge = 1;
	plain = ibv_create_qp(pd, &a);
	if (!qp || !plain)
		vt_fatal("ibv_create_qp: %s", strerror(errno));
	to_error(qp);
	to_error(plain);
	expect_event("unconnected SRQ QP to ERR",
		     (struct want){ IBV_EVENT_QP_LAST_WQE_REACHED, qp });
	expect_count("QP without SRQ to ERR",
		     (struct want){ IBV_EVENT_QP_LAST_WQE_REACHED, plain }, 0);
	ibv_destroy_qp(plain);
	ibv_destroy_qp(qp);
}

/*
 * A new connection whose passive QP receives into @small, an empty CQ of
 * SMALL_CQ entries: SMALL_CQ + 1 Sends overrun it. The QP gets
 * IBV_EVENT_QP_FATAL and the error state, the SMALL_CQ completions that
 * fitted stay intact; the CQ reports IBV_EVENT_CQ_ERR only at its first
 * overrun (@first).
 */
static void overrun_once(struct ibv_cq *cq, struct ibv_cq *small, bool first,
			 const char *what)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_wc wc[SMALL_CQ + 1];
	struct vt_cm_pair pair;
	struct ibv_qp *rqp;
	int i, n;

	vt_cm_prepare(&cm, &pair, pd, &a);
	a.recv_cq = small;
	vt_cm_establish(&cm, &pair, pd, &a);
	rqp = pair.passive->qp;
	for (i = 0; i < SMALL_CQ + 1; i++)
		post_recv_qp(rqp, i);
	for (i = 0; i < SMALL_CQ + 1; i++)
		if (!send_one(pair.active->qp, cq))
			break;
	printf("vt_events: %s: %d Sends completed at the requester\n", what,
	       i);
	if (first)
		expect_event(what, (struct want){ IBV_EVENT_CQ_ERR, small });
	expect_event(what, (struct want){ IBV_EVENT_QP_FATAL, rqp });
	expect_count(what, (struct want){ IBV_EVENT_CQ_ERR, small }, 0);
	if (vt_qp_state(rqp) == IBV_QPS_ERR)
		vt_pass("%s: its QP is in ERR", what);
	else
		vt_fail("%s: its QP in state %d", what, vt_qp_state(rqp));
	n = ibv_poll_cq(small, SMALL_CQ + 1, wc);
	for (i = 0; i < n && wc[i].status == IBV_WC_SUCCESS &&
		    wc[i].wr_id == (uint64_t)i; i++)
		;
	if (n == SMALL_CQ && i == n)
		vt_pass("%s: the %d completions that fitted are intact", what,
			n);
	else
		vt_fail("%s: the CQ holds %d completions, %d good", what, n, i);
	vt_cm_teardown(&cm, &pair);
}

/*
 * A receive CQ of SMALL_CQ entries overruns; @other, a connection on other
 * CQs, must not notice. Emptied, the CQ takes a new connection's QP, and
 * an overrun again makes that one fatal too.
 */
static void test_overrun(struct ibv_cq *cq, struct vt_cm_conn *other)
{
	struct ibv_cq *small = ibv_create_cq(cm.verbs, SMALL_CQ, NULL, NULL, 0);

	if (!small || small->cqe != SMALL_CQ)
		vt_fatal("ibv_create_cq(%d): %s", SMALL_CQ,
			 small ? "other size" : strerror(errno));
	overrun_once(cq, small, true, "CQ overrun");
	post_recv_qp(vt_cm_conn_qp(other, 1), NBUF - 1);
	sends_received(vt_cm_conn_qp(other, 0), other->cq[0], other->cq[1], 1);
	vt_pass("a connection on other CQs still works");
	overrun_once(cq, small, false, "the same CQ overrun again");
	ibv_destroy_cq(small);
}

static void expect_cqe(const char *what, struct ibv_cq *cq, int want)
{
	if (cq->cqe == want)
		vt_pass("%s: cqe %d", what, want);
	else
		vt_fail("%s: cqe %d, expected %d", what, cq->cqe, want);
}

static void resize_to(struct ibv_cq *cq, int cqe, int want)
{
	char what[64];
	int rv = ibv_resize_cq(cq, cqe);

	snprintf(what, sizeof(what), "ibv_resize_cq(%d)", cqe);
	if (rv)
		vt_fail("%s: %s", what, strerror(rv));
	expect_cqe(what, cq, want);
}

/* @n receive completions of wr_id @first on: success, in order. */
static void expect_recvs(struct ibv_cq *cq, int first, int n)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < n; i++)
		if (!vt_poll_one(cq, &wc, POLL_MS) ||
		    wc.status != IBV_WC_SUCCESS ||
		    wc.wr_id != (uint64_t)(first + i))
			break;
	if (i == n)
		vt_pass("%d receives %d.. completed in order", n, first);
	else
		vt_fail("receive %d of %d (wr_id %d..) missing or out of order",
			i + 1, n, first);
}

/* Post @n Sends on @qp without waiting, signaled; reap them later. */
static void post_sends(struct ibv_qp *qp, int n)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = MSG_LEN,
			       .lkey = mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	int i;

	for (i = 0; i < n; i++)
		if (ibv_post_send(qp, &wr, &bad))
			vt_fatal("ibv_post_send failed");
}

static void reap_sends(struct ibv_cq *cq, int n)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < n; i++)
		if (!vt_poll_one(cq, &wc, POLL_MS) ||
		    wc.status != IBV_WC_SUCCESS)
			vt_fatal("Send %d of %d did not complete", i + 1, n);
}

/*
 * ibv_resize_cq on the responder's CQ of @c (16 entries, the receives of
 * a QP with 4): below the completions outstanding EINVAL, the CQ as it
 * was; larger and smaller with completions kept in order, also while
 * Sends arrive.
 */
static void test_resize(struct vt_cm_conn *c)
{
	struct ibv_qp *sqp = vt_cm_conn_qp(c, 0), *rqp = vt_cm_conn_qp(c, 1);
	struct ibv_cq *cq = c->cq[1];
	int i, rv, round;

	expect_cqe("responder CQ", cq, 16);
	for (i = 0; i < 3; i++)
		post_recv_qp(rqp, i);
	post_sends(sqp, 3);
	reap_sends(c->cq[0], 3);
	usleep(300 * 1000);	/* the receives complete after the Sends */
	rv = ibv_resize_cq(cq, 2);
	vt_expect_errno("ibv_resize_cq(2) with 3 completions outstanding",
			rv != 0, rv, EINVAL);
	expect_cqe("after the refused resize", cq, 16);
	rv = ibv_resize_cq(cq, 0);
	vt_expect_errno("ibv_resize_cq(0)", rv != 0, rv, EINVAL);
	resize_to(cq, 100, 128);
	expect_recvs(cq, 0, 3);
	resize_to(cq, 4, 4);
	/* The kernel produces while the CQ is resized, back and forth. */
	for (round = 0; round < 8; round++) {
		for (i = 0; i < 4; i++)
			post_recv_qp(rqp, 10 + i);
		post_sends(sqp, 4);
		resize_to(cq, round & 1 ? 4 : 64, round & 1 ? 4 : 64);
		resize_to(cq, 8, 8);
		expect_recvs(cq, 10, 4);
		reap_sends(c->cq[0], 4);
	}
	resize_to(cq, 1, 1);
	post_recv_qp(rqp, 20);
	sends_received(sqp, c->cq[0], cq, 1);
	vt_pass("a CQ resized to 1 entry still works");
}

static void usage(void)
{
	fprintf(stderr, "usage: vt_events -a ADDR [-p PORT]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = SRQ_WR, .max_sge = 1 },
	};
	struct ibv_cq *cq, *rcq;
	struct vt_cm_conn other;
	struct ibv_srq *srq;

	vt_init("vt_events");
	vt_cm_listen_args(&cm, argc, argv, "7310", usage);
	pd = ibv_alloc_pd(cm.verbs);
	buf = calloc(NBUF, MSG_LEN);
	if (!pd || !buf)
		vt_fatal("ibv_alloc_pd or calloc failed");
	mr = ibv_reg_mr(pd, buf, NBUF * MSG_LEN, IBV_ACCESS_LOCAL_WRITE);
	cq = ibv_create_cq(cm.verbs, 64, NULL, NULL, 0);
	rcq = ibv_create_cq(cm.verbs, 64, NULL, NULL, 0);
	srq = ibv_create_srq(pd, &sa);
	if (!mr || !cq || !rcq || !srq)
		vt_fatal("ibv_reg_mr, ibv_create_cq or ibv_create_srq: %s",
			 strerror(errno));
	test_srq(cq, rcq, srq);
	test_last_wqe_idle(cq, srq);
	vt_cm_conn_open(&cm, &other, pd, 16, 4);
	test_overrun(cq, &other);
	test_resize(&other);
	vt_cm_conn_close(&cm, &other);
	ibv_destroy_srq(srq);
	ibv_destroy_cq(rcq);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	free(buf);
	vt_cm_close(&cm);
	return vt_exit();
}
