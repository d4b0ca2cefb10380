// SPDX-License-Identifier: GPL-2.0
/*
 * kiwi_vmtest: kernel-ULP tests. Kernel QPs connect to each other over
 * rdma_cm (listener and initiator in this module, over the guest's own
 * address on the kiwi device) and use what only kernel consumers have:
 * fast-register MRs, IB_WR_REG_MR and Local Invalidate.
 *
 *   ulp      connect, Send/Recv, disconnect: kernel rdma_cm works
 *   inval    a Local Invalidate posted while the peer's RDMA Write is being
 *            copied into the MR (the copy held open by a delay): it must
 *            complete successfully, and once it did the buffer must be the
 *            consumer's
 *   regmr    a stale-STag Write probing an invalidated MR (its lookup held
 *            open by a delay) must not make the consumer's REG_MR fail
 *   rresp    the QP moved to ERR while a Read Response's copy into the
 *            Read's sink is held at its start by a delay: once the Read
 *            completed (flushed), nothing more lands in the sink
 *   sendinv  a Send with Invalidate received while another connection's
 *            RDMA Write is being copied into the MR (held open by a
 *            delay): once the receive completed the buffer is the
 *            consumer's
 *   readinv  the same for the sink of an RDMA Read with Invalidate
 *   linvflush the QP moved to ERR while TX holds a Local Invalidate whose
 *            invalidation has not run (held by a delay): it completes
 *            once, successfully only if the MR was invalidated
 *   sendinvflush the same for a received Send with Invalidate whose
 *            invalidation RX holds
 *   kqp      create a kernel QP in INIT and report its QPN (kqp-free ends it)
 *   dropreq  a CONNECT_REQUEST iw_cm drops (vmtest_iwcm.c)
 *
 * Each test returns "PASS ..." or "FAIL ..." in its result string.
 */
#include <linux/delay.h>
#include <linux/inet.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "vmtest.h"

#define VT_PAIRS	2
#define VT_BUF		4096
#define VT_WAIT_MS	5000
/* A Write this short is placed whole from the FPDU header event: one copy. */
#define VT_INVAL_LEN	32
#define VT_RRESP_LEN	32	/* a Read Response of one copy, likewise */

struct vt_side {
	struct rdma_cm_id *id;
	struct completion route;
	struct completion established;
	struct completion disconnected;
	int status;
};

struct vt_env {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq[2 * VT_PAIRS];
	struct rdma_cm_id *listen;
	struct vt_side cli[VT_PAIRS];
	struct vt_side srv[VT_PAIRS];
	atomic_t nsrv;
	u8 *buf;		/* VT_BUF octets per side and pair */
};

static struct vt_env *vt_env;
static struct {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
} vt_kqp;

static void vt_side_init(struct vt_side *s)
{
	init_completion(&s->route);
	init_completion(&s->established);
	init_completion(&s->disconnected);
}

/* Both sides' QPs, the CQ of side @cq (send and receive). */
static int vt_create_qp(struct vt_env *e, struct rdma_cm_id *id, int cq)
{
	struct ib_qp_init_attr a = {
		.send_cq = e->cq[cq],
		.recv_cq = e->cq[cq],
		.cap = { .max_send_wr = 16, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};

	return rdma_create_qp(id, e->pd, &a);
}

static void vt_event_end(struct vt_side *s, struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		complete(&s->established);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		complete(&s->disconnected);
		break;
	default:
		s->status = ev->status ? ev->status : -ECONNREFUSED;
		complete(&s->route);
		complete(&s->established);
		complete(&s->disconnected);
		break;
	}
}

static int vt_srv_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct vt_env *e = vt_env;
	struct rdma_conn_param p = {
		.responder_resources = 4,
		.initiator_depth = 4,
	};
	struct vt_side *s;
	int i;

	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		if (id->context)	/* not the listener's own events */
			vt_event_end(id->context, ev);
		return 0;
	}
	i = atomic_inc_return(&e->nsrv) - 1;
	if (i >= VT_PAIRS)
		return -ENOSPC;		/* rdma_cm destroys the id */
	s = &e->srv[i];
	s->id = id;
	id->context = s;
	if (vt_create_qp(e, id, VT_PAIRS + i) || rdma_accept(id, &p)) {
		s->id = NULL;
		s->status = -EIO;
		complete(&s->established);
		if (id->qp)
			rdma_destroy_qp(id);
		return -EIO;
	}
	return 0;
}

static int vt_cli_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct vt_side *s = id->context;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(id, 2000)) {
			s->status = -EHOSTUNREACH;
			complete(&s->route);
		}
		return 0;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		complete(&s->route);
		return 0;
	default:
		vt_event_end(s, ev);
		return 0;
	}
}

static int vt_addr(struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(vmtest_port);
	return in4_pton(vmtest_addr, -1, (u8 *)&sin->sin_addr, -1, NULL) ?
	       0 : -EINVAL;
}

static bool vt_wait(struct completion *c)
{
	return wait_for_completion_timeout(c, msecs_to_jiffies(VT_WAIT_MS));
}

/* Connect client @i to the listener; both ends ESTABLISHED. */
static int vt_connect(struct vt_env *e, int i)
{
	struct rdma_conn_param p = {
		.responder_resources = 4,
		.initiator_depth = 4,
	};
	struct vt_side *c = &e->cli[i];
	struct sockaddr_in sin;
	int rv;

	rv = vt_addr(&sin);
	if (rv)
		return rv;
	c->id = rdma_create_id(&init_net, vt_cli_handler, c, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(c->id)) {
		rv = PTR_ERR(c->id);
		c->id = NULL;
		return rv;
	}
	rv = rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&sin, 2000);
	if (rv)
		return rv;
	if (!vt_wait(&c->route) || c->status)
		return c->status ? c->status : -ETIMEDOUT;
	if (c->id->device != e->dev)
		return -ENODEV;
	rv = vt_create_qp(e, c->id, i);
	if (!rv)
		rv = rdma_connect(c->id, &p);
	if (rv)
		return rv;
	if (!vt_wait(&c->established) || c->status)
		return c->status ? c->status : -ETIMEDOUT;
	if (!vt_wait(&e->srv[i].established) || e->srv[i].status)
		return e->srv[i].status ? e->srv[i].status : -ETIMEDOUT;
	return 0;
}

static void vt_side_end(struct vt_side *s)
{
	if (!s->id)
		return;
	rdma_disconnect(s->id);
	if (s->id->qp)
		rdma_destroy_qp(s->id);
	rdma_destroy_id(s->id);
	s->id = NULL;
}

static void vt_env_free(struct vt_env *e)
{
	int i;

	for (i = 0; i < VT_PAIRS; i++) {
		vt_side_end(&e->cli[i]);
		vt_side_end(&e->srv[i]);
	}
	if (e->listen)
		rdma_destroy_id(e->listen);
	for (i = 0; i < 2 * VT_PAIRS; i++)
		if (e->cq[i])
			ib_destroy_cq(e->cq[i]);
	if (e->pd)
		ib_dealloc_pd(e->pd);
	if (e->dev)
		ib_device_put(e->dev);
	kfree(e->buf);
	kfree(e);
	vt_env = NULL;
}

static struct vt_env *vt_env_new(int pairs)
{
	struct ib_cq_init_attr ca = { .cqe = 64 };
	struct sockaddr_in sin;
	struct vt_env *e;
	int i, rv = -ENOMEM;

	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return ERR_PTR(-ENOMEM);
	vt_env = e;
	for (i = 0; i < VT_PAIRS; i++) {
		vt_side_init(&e->cli[i]);
		vt_side_init(&e->srv[i]);
	}
	e->buf = kzalloc(4 * VT_PAIRS * VT_BUF, GFP_KERNEL);
	e->dev = ib_device_get_by_name(vmtest_dev, RDMA_DRIVER_UNKNOWN);
	if (!e->buf || !e->dev) {
		rv = e->buf ? -ENODEV : -ENOMEM;
		goto err;
	}
	e->pd = ib_alloc_pd(e->dev, 0);
	if (IS_ERR(e->pd)) {
		rv = PTR_ERR(e->pd);
		e->pd = NULL;
		goto err;
	}
	for (i = 0; i < 2 * VT_PAIRS; i++) {
		e->cq[i] = ib_create_cq(e->dev, NULL, NULL, NULL, &ca);
		if (IS_ERR(e->cq[i])) {
			rv = PTR_ERR(e->cq[i]);
			e->cq[i] = NULL;
			goto err;
		}
	}
	e->listen = rdma_create_id(&init_net, vt_srv_handler, NULL,
				   RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(e->listen)) {
		rv = PTR_ERR(e->listen);
		e->listen = NULL;
		goto err;
	}
	rv = vt_addr(&sin);
	if (!rv)
		rv = rdma_bind_addr(e->listen, (struct sockaddr *)&sin);
	if (!rv)
		rv = rdma_listen(e->listen, 4);
	for (i = 0; !rv && i < pairs; i++)
		rv = vt_connect(e, i);
	if (rv)
		goto err;
	return e;
err:
	vt_env_free(e);
	return ERR_PTR(rv);
}

/* The next completion on @cq, or -ETIMEDOUT. */
static int vt_poll(struct ib_cq *cq, struct ib_wc *wc)
{
	int i, n;

	for (i = 0; i < VT_WAIT_MS; i++) {
		n = ib_poll_cq(cq, 1, wc);
		if (n < 0)
			return n;
		if (n)
			return 0;
		usleep_range(1000, 2000);
	}
	return -ETIMEDOUT;
}

static u8 *vt_buf(struct vt_env *e, int n)
{
	return e->buf + n * VT_BUF;
}

static int vt_post(struct ib_qp *qp, const struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad;

	return ib_post_send(qp, wr, &bad);
}

/* Post @wr on @qp and wait for its completion on @cq. */
static int vt_post_wait(struct ib_qp *qp, struct ib_cq *cq,
			const struct ib_send_wr *wr, struct ib_wc *wc)
{
	int rv = vt_post(qp, wr);

	return rv ? rv : vt_poll(cq, wc);
}

/* Fast-register @mr for local write and @remote (IB_ACCESS_REMOTE_*). */
static int vt_reg(struct ib_qp *qp, struct ib_cq *cq, struct ib_mr *mr,
		  int remote, struct ib_wc *wc)
{
	struct ib_reg_wr wr = {
		.wr.opcode = IB_WR_REG_MR,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.wr_id = 1,
		.mr = mr,
		.access = IB_ACCESS_LOCAL_WRITE | remote,
	};

	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	wr.key = mr->rkey;
	return vt_post_wait(qp, cq, &wr.wr, wc);
}

static int vt_inv(struct ib_qp *qp, struct ib_cq *cq, u32 rkey,
		  struct ib_wc *wc)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
		.wr_id = 2,
		.ex.invalidate_rkey = rkey,
	};

	return vt_post_wait(qp, cq, &wr, wc);
}

/* An RDMA Write of @len octets of @src to rkey/@addr. */
static int vt_write(struct vt_env *e, struct ib_qp *qp, u8 *src, u32 len,
		    u32 rkey, u64 addr)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)src,
		.length = len,
		.lkey = e->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr.opcode = IB_WR_RDMA_WRITE,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.wr_id = 3,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.rkey = rkey,
		.remote_addr = addr,
	};

	return vt_post(qp, &wr.wr);
}

/* A fast-reg MR over one page of the env's buffer (@n), DMA mapped. */
static struct ib_mr *vt_frmr(struct vt_env *e, int n, struct scatterlist *sg)
{
	struct ib_mr *mr;
	int rv;

	mr = ib_alloc_mr(e->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(mr))
		return mr;
	sg_init_one(sg, vt_buf(e, n), VT_BUF);
	rv = ib_dma_map_sg(e->dev, sg, 1, DMA_BIDIRECTIONAL) == 1 ? 0 : -EIO;
	if (!rv)
		rv = ib_map_mr_sg(mr, sg, 1, NULL, VT_BUF) == 1 ? 0 : -EIO;
	if (rv) {
		ib_dereg_mr(mr);
		return ERR_PTR(rv);
	}
	return mr;
}

static void vt_frmr_free(struct vt_env *e, struct ib_mr *mr,
			 struct scatterlist *sg)
{
	ib_dereg_mr(mr);
	ib_dma_unmap_sg(e->dev, sg, 1, DMA_BIDIRECTIONAL);
}

/* vt_frmr(), then registered with @access by a REG_MR on @qp. */
static struct ib_mr *vt_frmr_reg(struct vt_env *e, int n,
				 struct scatterlist *sg, struct ib_qp *qp,
				 struct ib_cq *cq, int access)
{
	struct ib_wc wc;
	struct ib_mr *mr;
	int rv;

	mr = vt_frmr(e, n, sg);
	if (IS_ERR(mr))
		return mr;
	rv = vt_reg(qp, cq, mr, access, &wc);
	if (!rv && wc.status != IB_WC_SUCCESS) {
		pr_info("vmtest: REG_MR completed with status %d\n", wc.status);
		rv = -EIO;
	}
	if (rv) {
		vt_frmr_free(e, mr, sg);
		return ERR_PTR(rv);
	}
	return mr;
}

/* A receive for a pair's server and a Send with Invalidate of an rkey. */
struct vt_sendinv {
	struct ib_sge rsge, ssge;
	struct ib_recv_wr rwr;
	struct ib_send_wr swr;
};

static void vt_sendinv_init(struct vt_sendinv *si, struct vt_env *e,
			    u32 rkey)
{
	*si = (struct vt_sendinv){
		.rsge = { .addr = (uintptr_t)vt_buf(e, 2), .length = 64,
			  .lkey = e->pd->local_dma_lkey },
		.ssge = { .addr = (uintptr_t)vt_buf(e, 3), .length = 16,
			  .lkey = e->pd->local_dma_lkey },
		.rwr = { .wr_id = 7, .num_sge = 1 },
		.swr = { .opcode = IB_WR_SEND_WITH_INV,
			 .send_flags = IB_SEND_SIGNALED, .wr_id = 8,
			 .num_sge = 1, .ex.invalidate_rkey = rkey },
	};
	si->rwr.sg_list = &si->rsge;
	si->swr.sg_list = &si->ssge;
}

/*
 * The consumer took @buf back: it writes a canary over it; how many of its
 * octets did something else overwrite within a second?
 */
static int vt_canary_changed(u8 *buf)
{
	int i, bad = 0;

	memset(buf, 0xb2, VT_BUF);
	msleep(1000);
	for (i = 0; i < VT_BUF; i++)
		bad += buf[i] != 0xb2;
	return bad;
}

/*
 * The memory of @buf, invalidated by @what, must be the consumer's once
 * @what completed: nothing overwrote its canary.
 */
static int vt_canary_verdict(u8 *buf, const char *what, char *res,
			     size_t len)
{
	int bad = vt_canary_changed(buf);

	if (bad)
		return scnprintf(res, len,
				 "FAIL %d octets overwritten after %s completed",
				 bad, what);
	return scnprintf(res, len,
			 "PASS the memory stayed the consumer's after %s completed (delays %d)",
			 what, atomic_read(&vmtest_delays));
}

/*
 * A flush raced the invalidation of @mr by @what, which completed with
 * @wc on @cq: that completion must be the only one, and its status must
 * say what happened to the MR (another QP's REG_MR, which only an invalid
 * MR takes, tells): success only if it was invalidated, a flush only if
 * not.
 */
static int vt_inval_verdict(struct vt_env *e, struct ib_cq *cq,
			    struct ib_mr *mr, const struct ib_wc *wc,
			    const char *what, char *res, size_t len)
{
	struct ib_wc rwc;
	bool invalid;
	int rv, more;

	msleep(200);
	more = ib_poll_cq(cq, 1, &rwc);
	rv = vt_reg(e->cli[1].id->qp, e->cq[1], mr, IB_ACCESS_REMOTE_WRITE,
		    &rwc);
	invalid = !rv && rwc.status == IB_WC_SUCCESS;
	if (more || (wc->status != IB_WC_SUCCESS &&
		     wc->status != IB_WC_WR_FLUSH_ERR) ||
	    (wc->status == IB_WC_SUCCESS) != invalid)
		return scnprintf(res, len,
				 "FAIL %s completed with status %d (%d more) but the MR is %s",
				 what, wc->status, more,
				 invalid ? "invalid" : "valid");
	return scnprintf(res, len,
			 "PASS %s completed once with status %d and the MR is %s (delays %d)",
			 what, wc->status, invalid ? "invalid" : "valid",
			 atomic_read(&vmtest_delays));
}

static int vt_test_inval(char *res, size_t len)
{
	struct vmtest_delay d = { .sym = "kiwi_mr_page", .at_return = true,
				  .ms = 500, .count = 1 };
	struct ib_qp *sqp, *cqp;
	struct scatterlist sg;
	struct ib_wc wc;
	struct vt_env *e;
	struct ib_mr *mr;
	u8 *dst, *src;
	int rv;

	e = vt_env_new(1);
	if (IS_ERR(e))
		return scnprintf(res, len, "FAIL setup: %ld", PTR_ERR(e));
	sqp = e->srv[0].id->qp;
	cqp = e->cli[0].id->qp;
	dst = vt_buf(e, 0);
	src = vt_buf(e, 1);
	mr = vt_frmr_reg(e, 0, &sg, sqp, e->cq[VT_PAIRS],
			 IB_ACCESS_REMOTE_WRITE);
	if (IS_ERR(mr)) {
		rv = scnprintf(res, len, "FAIL frmr: %ld", PTR_ERR(mr));
		goto out_env;
	}
	memset(src, 0xa1, VT_INVAL_LEN);
	d.arg0 = (unsigned long)mr;	/* struct kiwi_mr starts with it */
	rv = vmtest_delay_set(&d);
	if (!rv)
		rv = vt_write(e, cqp, src, VT_INVAL_LEN, mr->rkey, mr->iova);
	if (rv || !vmtest_delay_wait_started(3000)) {
		rv = scnprintf(res, len, "FAIL the Write's copy was not delayed (%d)",
			       rv);
		goto out_delay;
	}
	/* The copy into the MR is under way on another CPU. */
	rv = vt_inv(sqp, e->cq[VT_PAIRS], mr->rkey, &wc);
	if (rv || wc.status != IB_WC_SUCCESS) {
		rv = scnprintf(res, len, "FAIL LOCAL_INV: %d status %d", rv,
			       wc.status);
		goto out_delay;
	}
	/* Invalidated: the buffer is the consumer's again. */
	rv = vt_canary_verdict(dst, "the Local Invalidate", res, len);
out_delay:
	vmtest_delay_clear();
	vt_frmr_free(e, mr, &sg);
out_env:
	vt_env_free(e);
	return rv;
}

static int vt_test_regmr(char *res, size_t len)
{
	struct vmtest_delay d = { .sym = "kiwi_mr_put", .ms = 500,
				  .count = 1, .caller = "kiwi_mr_get" };
	struct scatterlist sg;
	struct ib_qp *qp, *prober;
	struct ib_wc wc;
	struct vt_env *e;
	struct ib_mr *mr;
	u32 stale;
	bool held;
	int rv;

	e = vt_env_new(2);
	if (IS_ERR(e))
		return scnprintf(res, len, "FAIL setup: %ld", PTR_ERR(e));
	qp = e->cli[0].id->qp;
	prober = e->cli[1].id->qp;
	mr = vt_frmr_reg(e, 0, &sg, qp, e->cq[0], IB_ACCESS_REMOTE_WRITE);
	if (IS_ERR(mr)) {
		rv = scnprintf(res, len, "FAIL frmr: %ld", PTR_ERR(mr));
		goto out_env;
	}
	rv = vt_inv(qp, e->cq[0], mr->rkey, &wc);
	if (rv || wc.status != IB_WC_SUCCESS) {
		rv = scnprintf(res, len, "FAIL LOCAL_INV: %d status %d",
			       rv, wc.status);
		goto out_mr;
	}
	stale = mr->rkey;
	/* The peer of pair 1 probes the stale STag (and is terminated). */
	rv = vmtest_delay_set(&d);
	if (!rv)
		rv = vt_write(e, prober, vt_buf(e, 1), 16, stale, mr->iova);
	if (rv) {
		rv = scnprintf(res, len, "FAIL probe: %d", rv);
		goto out_delay;
	}
	held = vmtest_delay_wait_started(1500);
	rv = vt_reg(qp, e->cq[0], mr, IB_ACCESS_REMOTE_WRITE, &wc);
	if (rv || wc.status != IB_WC_SUCCESS)
		rv = scnprintf(res, len,
			       "FAIL REG_MR while a stale-STag probe ran: %d status %d (%s)",
			       rv, wc.status,
			       held ? "the probe held a reference" :
				      "no reference held");
	else
		rv = scnprintf(res, len,
			       "PASS REG_MR succeeded while a stale-STag probe ran (%s)",
			       held ? "the probe held a reference" :
				      "the probe took no reference");
out_delay:
	vmtest_delay_clear();
out_mr:
	vt_frmr_free(e, mr, &sg);
out_env:
	vt_env_free(e);
	return rv;
}

/*
 * The client Reads VT_RRESP_LEN octets into its fast-reg sink; the Read
 * Response's copy into the sink is held at its start by a delay; meanwhile
 * the consumer moves the QP to ERR and polls the Read's completion (a
 * flush, or a success if the copy won the race), after which the sink is
 * the consumer's again: nothing may overwrite it.
 */
static int vt_test_rresp(char *res, size_t len)
{
	struct vmtest_delay d = { .sym = "kiwi_mr_write", .ms = 500,
				  .count = 1 };
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	struct scatterlist sg_sink, sg_src;
	struct ib_mr *sink, *src;
	struct ib_qp *sqp, *cqp;
	struct ib_sge sge;
	struct ib_rdma_wr rd = {
		.wr.opcode = IB_WR_RDMA_READ,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.wr_id = 4,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
	};
	struct ib_wc wc;
	struct vt_env *e;
	u8 *dst;
	int rv, bad;

	e = vt_env_new(1);
	if (IS_ERR(e))
		return scnprintf(res, len, "FAIL setup: %ld", PTR_ERR(e));
	sqp = e->srv[0].id->qp;
	cqp = e->cli[0].id->qp;
	dst = vt_buf(e, 0);
	sink = vt_frmr_reg(e, 0, &sg_sink, cqp, e->cq[0],
			   IB_ACCESS_REMOTE_WRITE);
	if (IS_ERR(sink)) {
		rv = scnprintf(res, len, "FAIL frmr: %ld", PTR_ERR(sink));
		goto out_env;
	}
	src = vt_frmr_reg(e, 1, &sg_src, sqp, e->cq[VT_PAIRS],
			  IB_ACCESS_REMOTE_READ);
	if (IS_ERR(src)) {
		rv = scnprintf(res, len, "FAIL frmr: %ld", PTR_ERR(src));
		goto out_sink;
	}
	memset(vt_buf(e, 1), 0xa1, VT_RRESP_LEN);
	sge = (struct ib_sge){ .addr = sink->iova, .length = VT_RRESP_LEN,
			       .lkey = sink->lkey };
	rd.remote_addr = src->iova;
	rd.rkey = src->rkey;
	d.arg0 = (unsigned long)sink;	/* struct kiwi_mr starts with it */
	rv = vmtest_delay_set(&d);
	if (!rv)
		rv = vt_post(cqp, &rd.wr);
	if (rv || !vmtest_delay_wait_started(3000)) {
		rv = scnprintf(res, len,
			       "FAIL the Read Response's copy was not delayed (%d)",
			       rv);
		goto out_delay;
	}
	/* The copy into the sink is about to start on another CPU. */
	rv = ib_modify_qp(cqp, &err, IB_QP_STATE);
	if (!rv)
		rv = vt_poll(e->cq[0], &wc);
	if (rv || wc.wr_id != 4) {
		rv = scnprintf(res, len, "FAIL the Read did not complete: %d",
			       rv);
		goto out_delay;
	}
	/* The Read completed: the sink is the consumer's again. */
	bad = vt_canary_changed(dst);
	if (bad)
		rv = scnprintf(res, len,
			       "FAIL %d octets placed after the Read completed (status %d)",
			       bad, wc.status);
	else
		rv = scnprintf(res, len,
			       "PASS nothing placed after the Read completed (status %d, delays %d)",
			       wc.status, atomic_read(&vmtest_delays));
out_delay:
	vmtest_delay_clear();
	vt_frmr_free(e, src, &sg_src);
out_sink:
	vt_frmr_free(e, sink, &sg_sink);
out_env:
	vt_env_free(e);
	return rv;
}

/*
 * While pair 0's RDMA Write is copied into the server's fast-reg MR (the
 * copy held open at the return of kiwi_mr_page by a delay), pair 1's
 * client sends with Invalidate of that MR's rkey to the server: once the
 * receive completed (IB_WC_WITH_INVALIDATE), the buffer is the consumer's
 * and nothing may overwrite it.
 */
static int vt_test_sendinv(char *res, size_t len)
{
	struct vmtest_delay d = { .sym = "kiwi_mr_page", .at_return = true,
				  .ms = 500, .count = 1 };
	const struct ib_recv_wr *rbad;
	struct vt_sendinv si;
	struct scatterlist sg;
	struct ib_wc wc;
	struct vt_env *e;
	struct ib_mr *mr;
	int rv;

	e = vt_env_new(2);
	if (IS_ERR(e))
		return scnprintf(res, len, "FAIL setup: %ld", PTR_ERR(e));
	mr = vt_frmr_reg(e, 0, &sg, e->srv[0].id->qp, e->cq[VT_PAIRS],
			 IB_ACCESS_REMOTE_WRITE);
	if (IS_ERR(mr)) {
		rv = scnprintf(res, len, "FAIL frmr: %ld", PTR_ERR(mr));
		goto out_env;
	}
	vt_sendinv_init(&si, e, mr->rkey);
	memset(vt_buf(e, 1), 0xa1, VT_INVAL_LEN);
	d.arg0 = (unsigned long)mr;	/* struct kiwi_mr starts with it */
	rv = ib_post_recv(e->srv[1].id->qp, &si.rwr, &rbad);
	if (!rv)
		rv = vmtest_delay_set(&d);
	if (!rv)
		rv = vt_write(e, e->cli[0].id->qp, vt_buf(e, 1), VT_INVAL_LEN,
			      mr->rkey, mr->iova);
	if (rv || !vmtest_delay_wait_started(3000)) {
		rv = scnprintf(res, len, "FAIL the Write's copy was not delayed (%d)",
			       rv);
		goto out_delay;
	}
	/* The copy into the MR is under way on another CPU. */
	rv = vt_post(e->cli[1].id->qp, &si.swr);
	if (!rv)
		rv = vt_poll(e->cq[VT_PAIRS + 1], &wc);
	if (rv || wc.status != IB_WC_SUCCESS ||
	    !(wc.wc_flags & IB_WC_WITH_INVALIDATE)) {
		rv = scnprintf(res, len,
			       "FAIL Send with Invalidate: %d status %d flags 0x%x",
			       rv, wc.status, wc.wc_flags);
		goto out_delay;
	}
	rv = vt_canary_verdict(vt_buf(e, 0), "the Send with Invalidate", res,
			       len);
out_delay:
	vmtest_delay_clear();
	vt_frmr_free(e, mr, &sg);
out_env:
	vt_env_free(e);
	return rv;
}

/*
 * While pair 1's server Writes into the client's fast-reg sink (the copy
 * held open at the return of kiwi_mr_page by a delay), pair 0's client
 * Reads into that sink with Invalidate: once the Read completed, the sink
 * is the consumer's and nothing may overwrite it.
 */
static int vt_test_readinv(char *res, size_t len)
{
	struct vmtest_delay d = { .sym = "kiwi_mr_page", .at_return = true,
				  .ms = 500, .count = 1 };
	struct scatterlist sg_sink, sg_src;
	struct ib_mr *sink, *src;
	struct ib_sge sge;
	struct ib_rdma_wr rd = {
		.wr.opcode = IB_WR_RDMA_READ_WITH_INV,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.wr_id = 4,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
	};
	struct ib_wc wc;
	struct vt_env *e;
	int rv;

	e = vt_env_new(2);
	if (IS_ERR(e))
		return scnprintf(res, len, "FAIL setup: %ld", PTR_ERR(e));
	sink = vt_frmr_reg(e, 0, &sg_sink, e->cli[0].id->qp, e->cq[0],
			   IB_ACCESS_REMOTE_WRITE);
	if (IS_ERR(sink)) {
		rv = scnprintf(res, len, "FAIL frmr: %ld", PTR_ERR(sink));
		goto out_env;
	}
	src = vt_frmr_reg(e, 1, &sg_src, e->srv[0].id->qp, e->cq[VT_PAIRS],
			  IB_ACCESS_REMOTE_READ);
	if (IS_ERR(src)) {
		rv = scnprintf(res, len, "FAIL frmr: %ld", PTR_ERR(src));
		goto out_sink;
	}
	memset(vt_buf(e, 1), 0xc3, VT_RRESP_LEN);
	memset(vt_buf(e, 2), 0xa1, VT_INVAL_LEN);
	sge = (struct ib_sge){ .addr = sink->iova, .length = VT_RRESP_LEN,
			       .lkey = sink->lkey };
	rd.remote_addr = src->iova;
	rd.rkey = src->rkey;
	rd.wr.ex.invalidate_rkey = sink->lkey;
	d.arg0 = (unsigned long)sink;	/* struct kiwi_mr starts with it */
	rv = vmtest_delay_set(&d);
	if (!rv)
		rv = vt_write(e, e->srv[1].id->qp, vt_buf(e, 2), VT_INVAL_LEN,
			      sink->rkey, sink->iova);
	if (rv || !vmtest_delay_wait_started(3000)) {
		rv = scnprintf(res, len, "FAIL the Write's copy was not delayed (%d)",
			       rv);
		goto out_delay;
	}
	/* The Write's copy into the sink is under way on another CPU. */
	rv = vt_post(e->cli[0].id->qp, &rd.wr);
	if (!rv)
		rv = vt_poll(e->cq[0], &wc);
	if (rv || wc.wr_id != 4 || wc.status != IB_WC_SUCCESS) {
		rv = scnprintf(res, len, "FAIL Read with Invalidate: %d status %d",
			       rv, wc.status);
		goto out_delay;
	}
	rv = vt_canary_verdict(vt_buf(e, 0), "the Read with Invalidate", res,
			       len);
out_delay:
	vmtest_delay_clear();
	vt_frmr_free(e, src, &sg_src);
out_sink:
	vt_frmr_free(e, sink, &sg_sink);
out_env:
	vt_env_free(e);
	return rv;
}

/*
 * TX took a Local Invalidate off the SQ; its invalidation is held at its
 * start by a delay while the consumer moves the QP to ERR. The WR
 * completes once, and its status says what happened to the MR: success
 * only if it was invalidated (another QP's REG_MR, which only an invalid
 * MR takes, tells), a flush only if not.
 */
static int vt_test_linvflush(char *res, size_t len)
{
	struct vmtest_delay d = { .sym = "kiwi_mr_invalidate", .ms = 300,
				  .count = 1 };
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	struct ib_send_wr linv = {
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
		.wr_id = 2,
	};
	struct scatterlist sg;
	struct ib_wc wc;
	struct vt_env *e;
	struct ib_mr *mr;
	int rv;

	e = vt_env_new(2);
	if (IS_ERR(e))
		return scnprintf(res, len, "FAIL setup: %ld", PTR_ERR(e));
	mr = vt_frmr_reg(e, 0, &sg, e->cli[0].id->qp, e->cq[0],
			 IB_ACCESS_REMOTE_WRITE);
	if (IS_ERR(mr)) {
		rv = scnprintf(res, len, "FAIL frmr: %ld", PTR_ERR(mr));
		goto out_env;
	}
	linv.ex.invalidate_rkey = mr->rkey;
	rv = vmtest_delay_set(&d);
	if (!rv)
		rv = vt_post(e->cli[0].id->qp, &linv);
	if (rv || !vmtest_delay_wait_started(3000)) {
		rv = scnprintf(res, len,
			       "FAIL the invalidation was not delayed (%d)", rv);
		goto out_delay;
	}
	/* TX holds the WR; its invalidation is about to run. */
	rv = ib_modify_qp(e->cli[0].id->qp, &err, IB_QP_STATE);
	if (!rv)
		rv = vt_poll(e->cq[0], &wc);
	if (rv || wc.wr_id != 2) {
		rv = scnprintf(res, len,
			       "FAIL the Local Invalidate did not complete: %d", rv);
		goto out_delay;
	}
	rv = vt_inval_verdict(e, e->cq[0], mr, &wc, "Local Invalidate", res,
			      len);
out_delay:
	vmtest_delay_clear();
	vt_frmr_free(e, mr, &sg);
out_env:
	vt_env_free(e);
	return rv;
}

/*
 * The server's RX holds a received Send with Invalidate at the start of
 * its invalidation (a delay) while the consumer moves the server's QP to
 * ERR. The receive completes once, and its status says what happened to
 * the MR: success only if it was invalidated, a flush only if not.
 */
static int vt_test_sendinvflush(char *res, size_t len)
{
	struct vmtest_delay d = { .sym = "kiwi_mr_invalidate", .ms = 300,
				  .count = 1 };
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	const struct ib_recv_wr *rbad;
	struct vt_sendinv si;
	struct scatterlist sg;
	struct ib_wc wc;
	struct vt_env *e;
	struct ib_mr *mr;
	int rv;

	e = vt_env_new(2);
	if (IS_ERR(e))
		return scnprintf(res, len, "FAIL setup: %ld", PTR_ERR(e));
	mr = vt_frmr_reg(e, 0, &sg, e->srv[0].id->qp, e->cq[VT_PAIRS],
			 IB_ACCESS_REMOTE_WRITE);
	if (IS_ERR(mr)) {
		rv = scnprintf(res, len, "FAIL frmr: %ld", PTR_ERR(mr));
		goto out_env;
	}
	vt_sendinv_init(&si, e, mr->rkey);
	rv = ib_post_recv(e->srv[0].id->qp, &si.rwr, &rbad);
	if (!rv)
		rv = vmtest_delay_set(&d);
	if (!rv)
		rv = vt_post(e->cli[0].id->qp, &si.swr);
	if (rv || !vmtest_delay_wait_started(3000)) {
		rv = scnprintf(res, len,
			       "FAIL the invalidation was not delayed (%d)", rv);
		goto out_delay;
	}
	/* RX holds the Send; its invalidation is about to run. */
	rv = ib_modify_qp(e->srv[0].id->qp, &err, IB_QP_STATE);
	if (!rv)
		rv = vt_poll(e->cq[VT_PAIRS], &wc);
	if (rv || wc.wr_id != 7) {
		rv = scnprintf(res, len, "FAIL the receive did not complete: %d",
			       rv);
		goto out_delay;
	}
	rv = vt_inval_verdict(e, e->cq[VT_PAIRS], mr, &wc,
			      "the Send with Invalidate", res, len);
out_delay:
	vmtest_delay_clear();
	vt_frmr_free(e, mr, &sg);
out_env:
	vt_env_free(e);
	return rv;
}

static int vt_test_ulp(char *res, size_t len)
{
	struct ib_sge sge = { .length = 64 };
	struct ib_recv_wr rwr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1 };
	struct ib_send_wr swr = {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.sg_list = &sge,
		.num_sge = 1,
	};
	const struct ib_recv_wr *rbad;
	struct ib_wc wc;
	struct vt_env *e;
	ktime_t t0;
	int rv;

	e = vt_env_new(1);
	if (IS_ERR(e))
		return scnprintf(res, len, "FAIL kernel rdma_cm connect: %ld",
				 PTR_ERR(e));
	sge.lkey = e->pd->local_dma_lkey;
	sge.addr = (uintptr_t)vt_buf(e, 0);
	rv = ib_post_recv(e->srv[0].id->qp, &rwr, &rbad);
	strscpy(vt_buf(e, 1), "kiwi kernel ULP", 64);
	sge.addr = (uintptr_t)vt_buf(e, 1);
	if (!rv)
		rv = vt_post_wait(e->cli[0].id->qp, e->cq[0], &swr, &wc);
	if (!rv && wc.status == IB_WC_SUCCESS)
		rv = vt_poll(e->cq[VT_PAIRS], &wc);
	if (rv || wc.status != IB_WC_SUCCESS ||
	    strcmp(vt_buf(e, 0), "kiwi kernel ULP")) {
		rv = scnprintf(res, len, "FAIL Send/Recv: %d status %d", rv,
			       wc.status);
		goto out;
	}
	t0 = ktime_get();
	rdma_disconnect(e->cli[0].id);
	if (!vt_wait(&e->cli[0].disconnected) ||
	    !vt_wait(&e->srv[0].disconnected))
		rv = scnprintf(res, len, "FAIL no DISCONNECTED within %d ms",
			       VT_WAIT_MS);
	else
		rv = scnprintf(res, len,
			       "PASS connect, Send/Recv, disconnect in %lld ms",
			       ktime_ms_delta(ktime_get(), t0));
out:
	vt_env_free(e);
	return rv;
}

static void vt_kqp_free(void)
{
	if (vt_kqp.qp)
		ib_destroy_qp(vt_kqp.qp);
	if (vt_kqp.cq)
		ib_destroy_cq(vt_kqp.cq);
	if (vt_kqp.pd)
		ib_dealloc_pd(vt_kqp.pd);
	if (vt_kqp.dev)
		ib_device_put(vt_kqp.dev);
	memset(&vt_kqp, 0, sizeof(vt_kqp));
}

static int vt_test_kqp(char *res, size_t len)
{
	struct ib_cq_init_attr ca = { .cqe = 16 };
	struct ib_qp_init_attr a = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	long err;

	vt_kqp_free();
	vt_kqp.dev = ib_device_get_by_name(vmtest_dev, RDMA_DRIVER_UNKNOWN);
	if (!vt_kqp.dev)
		return scnprintf(res, len, "FAIL no device %s", vmtest_dev);
	vt_kqp.pd = ib_alloc_pd(vt_kqp.dev, 0);
	if (IS_ERR(vt_kqp.pd)) {
		err = PTR_ERR(vt_kqp.pd);
		vt_kqp.pd = NULL;
		goto err;
	}
	vt_kqp.cq = ib_create_cq(vt_kqp.dev, NULL, NULL, NULL, &ca);
	if (IS_ERR(vt_kqp.cq)) {
		err = PTR_ERR(vt_kqp.cq);
		vt_kqp.cq = NULL;
		goto err;
	}
	a.send_cq = vt_kqp.cq;
	a.recv_cq = vt_kqp.cq;
	vt_kqp.qp = ib_create_qp(vt_kqp.pd, &a);
	if (IS_ERR(vt_kqp.qp)) {
		err = PTR_ERR(vt_kqp.qp);
		vt_kqp.qp = NULL;
		goto err;
	}
	return scnprintf(res, len, "PASS qpn=%u", vt_kqp.qp->qp_num);
err:
	vt_kqp_free();
	return scnprintf(res, len, "FAIL kernel QP: %ld", err);
}

int vmtest_ulp_run(const char *test, char *res, size_t len)
{
	if (!strcmp(test, "ulp"))
		return vt_test_ulp(res, len);
	if (!strcmp(test, "inval"))
		return vt_test_inval(res, len);
	if (!strcmp(test, "regmr"))
		return vt_test_regmr(res, len);
	if (!strcmp(test, "rresp"))
		return vt_test_rresp(res, len);
	if (!strcmp(test, "sendinv"))
		return vt_test_sendinv(res, len);
	if (!strcmp(test, "readinv"))
		return vt_test_readinv(res, len);
	if (!strcmp(test, "linvflush"))
		return vt_test_linvflush(res, len);
	if (!strcmp(test, "sendinvflush"))
		return vt_test_sendinvflush(res, len);
	if (!strcmp(test, "kqp"))
		return vt_test_kqp(res, len);
	if (!strcmp(test, "dropreq"))
		return vmtest_iwcm_dropreq(res, len);
	if (!strcmp(test, "kqp-free")) {
		vt_kqp_free();
		return scnprintf(res, len, "PASS");
	}
	return -EINVAL;
}

void vmtest_ulp_exit(void)
{
	vt_kqp_free();
}
