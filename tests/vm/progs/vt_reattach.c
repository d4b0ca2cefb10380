// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_reattach: a QP reset and connected again while the detach of its last
 * stream is still under way must keep what the new stream set up.
 *
 *   vt_reattach -a ADDR [-p PORT]
 *
 * The server end of connection A is a QP this program made itself and
 * names by its number on accept (as rdma_cm lets an application do).
 * Connection B's Request then waits, not accepted. The program moves the
 * QP to ERR, which closes A: kiwi's CM detaches the QP in its worker, and
 * the scenario holds that detach open after the QP let go of the socket (a
 * delay at the entry of kiwi_rx_release). Meanwhile the program resets the
 * QP (again while the kernel refuses: the stream is still attached), moves
 * it to INIT and accepts B naming it. One second later, the detach over,
 * B must carry a Send each way and an RDMA Read each way (the Reads use the
 * queues of outstanding Reads a late detach would free) and the QP must
 * still be RTS. Prints how long the reset took and how often the kernel
 * refused it. Last, a type 2 memory window the QP bound while it carried
 * connection A must not serve B's peer (RFC 5040 section 8.1.1 rule 2:
 * the STag belongs to A's stream): the client's Read through it completes
 * with IBV_WC_REM_ACCESS_ERR.
 */
#include <getopt.h>
#include <unistd.h>

#include "vt_cm.h"

#define BUF_LEN 4096
#define RESET_MS 5000
#define WAIT_MS 10000

static const int vt_access = IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE |
			     IBV_ACCESS_REMOTE_READ;

/* One end of connection B: its QP, CQ and a registered buffer. */
struct end {
	const char *name;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t buf[2 * BUF_LEN];	/* [0, BUF_LEN): Read source */
};

static struct ibv_cq *make_cq(struct ibv_context *verbs)
{
	struct ibv_cq *cq = ibv_create_cq(verbs, 16, NULL, NULL, 0);

	if (!cq)
		vt_fatal("ibv_create_cq: %s", strerror(errno));
	return cq;
}

static struct ibv_qp_init_attr qp_attr(struct ibv_cq *cq)
{
	return (struct ibv_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
}

/*
 * Reset @qp, again while the kernel refuses (EINVAL: its stream is still
 * attached), then INIT.
 */
static void reset_to_init(struct ibv_qp *qp)
{
	long long t0 = vt_now_ms(), t1;
	unsigned int refused = 0;
	int rc;

	while ((rc = vt_qp_to_state(qp, IBV_QPS_RESET, 0)) == EINVAL &&
	       vt_now_ms() - t0 < RESET_MS) {
		refused++;
		usleep(1000);
	}
	t1 = vt_now_ms();
	if (rc)
		vt_fatal("ibv_modify_qp(RESET): %s after %lld ms", strerror(rc),
			 t1 - t0);
	printf("reset after %lld ms, refused %u times\n", t1 - t0, refused);
	rc = vt_qp_to_state(qp, IBV_QPS_INIT, vt_access);
	if (rc)
		vt_fatal("ibv_modify_qp(INIT) after the reset: %s",
			 strerror(rc));
}

static void register_buf(struct end *e, struct ibv_pd *pd)
{
	for (unsigned int i = 0; i < BUF_LEN; i++)
		e->buf[i] = (uint8_t)(i * 7 + e->name[0]);
	e->mr = ibv_reg_mr(pd, e->buf, sizeof(e->buf),
			   vt_access | IBV_ACCESS_MW_BIND);
	if (!e->mr)
		vt_fatal("ibv_reg_mr: %s", strerror(errno));
}

/* One completion of @e's CQ, which must be @op and successful. */
static bool complete(struct end *e, enum ibv_wc_opcode op, const char *what)
{
	struct ibv_wc wc;

	if (!vt_poll_one(e->cq, &wc, WAIT_MS)) {
		vt_fail("%s: %s: no completion within %d ms", what, e->name,
			WAIT_MS);
		return false;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != op) {
		vt_fail("%s: %s: %s (opcode %d)", what, e->name,
			ibv_wc_status_str(wc.status), wc.opcode);
		return false;
	}
	return true;
}

/* A Send of @from's Read source into @to's second half. */
static void send_one(struct end *from, struct end *to)
{
	struct ibv_sge sge = { .addr = (uintptr_t)from->buf, .length = 64,
			       .lkey = from->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	char what[64];

	snprintf(what, sizeof(what), "Send %s -> %s", from->name, to->name);
	memset(to->buf + BUF_LEN, 0, BUF_LEN);
	if (vt_post_recv(to->qp, 1, to->buf + BUF_LEN, BUF_LEN,
			 to->mr->lkey) || ibv_post_send(from->qp, &wr, &bad)) {
		vt_fail("%s: posting failed", what);
		return;
	}
	if (complete(to, IBV_WC_RECV, what) && complete(from, IBV_WC_SEND, what)) {
		if (memcmp(to->buf + BUF_LEN, from->buf, 64))
			vt_fail("%s: wrong data received", what);
		else
			vt_pass("%s", what);
	}
}

/* An RDMA Read by @by of @from's Read source into @by's second half. */
static void read_one(struct end *by, struct end *from)
{
	char what[64];

	snprintf(what, sizeof(what), "Read by %s from %s", by->name,
		 from->name);
	memset(by->buf + BUF_LEN, 0, BUF_LEN);
	if (vt_post_rdma(by->qp, IBV_WR_RDMA_READ, 2, by->buf + BUF_LEN,
			 BUF_LEN, by->mr->lkey, (uintptr_t)from->buf,
			 from->mr->rkey)) {
		vt_fail("%s: posting failed", what);
		return;
	}
	if (!complete(by, IBV_WC_RDMA_READ, what))
		return;
	if (memcmp(by->buf + BUF_LEN, from->buf, BUF_LEN))
		vt_fail("%s: wrong data", what);
	else
		vt_pass("%s", what);
}

/* A type 2 window over @e's Read source, bound by @e's QP (connected). */
static uint32_t bind_window(struct end *e, struct ibv_mw *mw)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = e->mr, .addr = (uintptr_t)e->buf, .length = BUF_LEN,
		.mw_access_flags = IBV_ACCESS_REMOTE_READ,
	};
	if (ibv_post_send(e->qp, &wr, &bad))
		vt_fatal("posting the window bind failed");
	if (!complete(e, IBV_WC_BIND_MW, "type 2 window bound on connection A"))
		vt_fatal("no window to test");
	return wr.bind_mw.rkey;
}

/* @by Reads through @rkey, a window bound on @from's earlier stream. */
static void read_old_window(struct end *by, struct end *from, uint32_t rkey)
{
	const char *what = "Read on connection B through connection A's window";
	struct ibv_wc wc;

	if (vt_post_rdma(by->qp, IBV_WR_RDMA_READ, 3, by->buf + BUF_LEN, 64,
			 by->mr->lkey, (uintptr_t)from->buf, rkey)) {
		vt_fail("%s: posting failed", what);
		return;
	}
	if (!vt_poll_one(by->cq, &wc, WAIT_MS))
		vt_fail("%s: no completion within %d ms", what, WAIT_MS);
	else if (wc.status != IBV_WC_REM_ACCESS_ERR)
		vt_fail("%s: %s, want %s", what, ibv_wc_status_str(wc.status),
			ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR));
	else
		vt_pass("%s: %s", what, ibv_wc_status_str(wc.status));
}

static void usage(void)
{
	fprintf(stderr, "usage: vt_reattach -a ADDR [-p PORT]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static struct end server = { .name = "server" };
	static struct end client = { .name = "client" };
	struct vt_cm_pair a, b;
	struct ibv_qp_init_attr attr;
	struct ibv_cq *a_cq;
	struct ibv_mw *mw;
	struct ibv_pd *pd;
	struct vt_cm cm;
	uint32_t rkey;
	int rc;

	vt_init("vt_reattach");
	vt_cm_listen_args(&cm, argc, argv, "7495", usage);
	pd = ibv_alloc_pd(cm.verbs);
	if (!pd)
		vt_fatal("ibv_alloc_pd: %s", strerror(errno));
	server.cq = make_cq(cm.verbs);
	client.cq = make_cq(cm.verbs);
	a_cq = make_cq(cm.verbs);
	register_buf(&server, pd);
	register_buf(&client, pd);
	attr = qp_attr(server.cq);
	server.qp = ibv_create_qp(pd, &attr);
	if (!server.qp)
		vt_fatal("ibv_create_qp: %s", strerror(errno));
	rc = vt_qp_to_state(server.qp, IBV_QPS_INIT, vt_access);
	if (rc)
		vt_fatal("ibv_modify_qp(INIT): %s", strerror(rc));

	attr = qp_attr(a_cq);
	vt_cm_prepare(&cm, &a, pd, &attr);
	vt_cm_request(&cm, &a);
	vt_cm_accept_qpn(&cm, &a, server.qp->qp_num);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (!mw)
		vt_fatal("ibv_alloc_mw: %s", strerror(errno));
	rkey = bind_window(&server, mw);
	attr = qp_attr(client.cq);
	vt_cm_prepare(&cm, &b, pd, &attr);
	client.qp = b.active->qp;
	vt_cm_request(&cm, &b);

	rc = vt_qp_to_state(server.qp, IBV_QPS_ERR, 0);
	if (rc)
		vt_fatal("ibv_modify_qp(ERR): %s", strerror(rc));
	reset_to_init(server.qp);
	vt_cm_accept_qpn(&cm, &b, server.qp->qp_num);
	sleep(1);

	send_one(&client, &server);
	send_one(&server, &client);
	read_one(&client, &server);
	read_one(&server, &client);
	if (vt_qp_state(server.qp) != IBV_QPS_RTS)
		vt_fail("the QP of connection B is in state %d, not RTS",
			vt_qp_state(server.qp));
	read_old_window(&client, &server, rkey);

	vt_cm_teardown(&cm, &b);
	vt_cm_teardown(&cm, &a);
	ibv_dealloc_mw(mw);
	ibv_destroy_qp(server.qp);
	ibv_dereg_mr(server.mr);
	ibv_dereg_mr(client.mr);
	ibv_destroy_cq(server.cq);
	ibv_destroy_cq(client.cq);
	ibv_destroy_cq(a_cq);
	ibv_dealloc_pd(pd);
	vt_cm_close(&cm);
	return vt_exit();
}
