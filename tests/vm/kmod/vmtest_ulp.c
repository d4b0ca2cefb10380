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
 * The race tests (inval to sendinvflush) run through one runner,
 * vt_race_run(): connections, fast-reg MRs, a delay, the action it holds
 * open, then the consumer's move and the verdict (struct vt_race_ops).
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

/**
 * struct vt_race - the state of one race test (vt_race_run())
 * @e: its connections
 * @mr: fast-reg MRs registered by the setup, freed in reverse order
 * @sg: their pages
 * @nmr: how many
 * @si: a receive and a Send with Invalidate, for the tests that use them
 * @d: the delay holding the race window open; the setup may set its arg0
 */
struct vt_race {
	struct vt_env *e;
	struct ib_mr *mr[2];
	struct scatterlist sg[2];
	int nmr;
	struct vt_sendinv si;
	struct vmtest_delay d;
};

/**
 * struct vt_race_ops - one race test: env, fast-reg MRs, a delay, the
 * action it holds open, then the consumer's move and the verdict
 * @pairs: connections to open
 * @delay: the delay
 * @held: what the delay holds, for the failure report
 * @setup: register the MRs (vt_race_mr()), post receives: 0 or -errno
 * @start: post what the delay must catch: 0 or -errno
 * @finish: the consumer's move while it is held, then the verdict:
 *          the length of the result written
 */
struct vt_race_ops {
	int pairs;
	struct vmtest_delay delay;
	const char *held;
	int (*setup)(struct vt_race *r);
	int (*start)(struct vt_race *r);
	int (*finish)(struct vt_race *r, char *res, size_t len);
};

/* Fast-register buffer @n on @qp (completion on CQ @cq) with @access. */
static int vt_race_mr(struct vt_race *r, int n, struct ib_qp *qp, int cq,
		      int access)
{
	struct ib_mr *mr;

	mr = vt_frmr_reg(r->e, n, &r->sg[r->nmr], qp, r->e->cq[cq], access);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	r->mr[r->nmr++] = mr;
	return 0;
}

static int vt_race_run(const struct vt_race_ops *ops, char *res, size_t len)
{
	struct vt_race r = { .d = ops->delay };
	int rv;

	r.e = vt_env_new(ops->pairs);
	if (IS_ERR(r.e))
		return scnprintf(res, len, "FAIL setup: %ld", PTR_ERR(r.e));
	rv = ops->setup(&r);
	if (rv) {
		rv = scnprintf(res, len, "FAIL setup: %d", rv);
		goto out;
	}
	rv = vmtest_delay_set(&r.d);
	if (!rv)
		rv = ops->start(&r);
	if (rv || !vmtest_delay_wait_started(3000))
		rv = scnprintf(res, len, "FAIL %s was not delayed (%d)",
			       ops->held, rv);
	else
		rv = ops->finish(&r, res, len);
	vmtest_delay_clear();
out:
	while (r.nmr--)
		vt_frmr_free(r.e, r.mr[r.nmr], &r.sg[r.nmr]);
	vt_env_free(r.e);
	return rv;
}

/* The delay of the tests that hold a copy into the MR open. */
#define VT_COPY_DELAY { .sym = "kiwi_mr_page", .at_return = true, \
			.ms = 500, .count = 1 }
/* The delay of the tests that hold an invalidation at its start. */
#define VT_INVAL_DELAY { .sym = "kiwi_mr_invalidate", .ms = 300, .count = 1 }

/* An RDMA Write of VT_INVAL_LEN octets of 0xa1 from buffer @n into @mr. */
static int vt_race_write(struct vt_race *r, struct ib_qp *qp, int n,
			 struct ib_mr *mr)
{
	return vt_write(r->e, qp, vt_buf(r->e, n), VT_INVAL_LEN, mr->rkey,
			mr->iova);
}

/*
 * inval: while the client's RDMA Write is copied into the server's
 * fast-reg MR (the copy held open at the return of kiwi_mr_page), the
 * server invalidates the MR locally: once the Local Invalidate completed,
 * the buffer is the consumer's.
 */
static int vt_inval_setup(struct vt_race *r)
{
	int rv = vt_race_mr(r, 0, r->e->srv[0].id->qp, VT_PAIRS,
			    IB_ACCESS_REMOTE_WRITE);

	memset(vt_buf(r->e, 1), 0xa1, VT_INVAL_LEN);
	r->d.arg0 = (unsigned long)r->mr[0];	/* struct kiwi_mr starts with it */
	return rv;
}

static int vt_inval_start(struct vt_race *r)
{
	return vt_race_write(r, r->e->cli[0].id->qp, 1, r->mr[0]);
}

static int vt_inval_finish(struct vt_race *r, char *res, size_t len)
{
	struct ib_wc wc;
	int rv;

	/* The copy into the MR is under way on another CPU. */
	rv = vt_inv(r->e->srv[0].id->qp, r->e->cq[VT_PAIRS], r->mr[0]->rkey,
		    &wc);
	if (rv || wc.status != IB_WC_SUCCESS)
		return scnprintf(res, len, "FAIL LOCAL_INV: %d status %d", rv,
				 wc.status);
	/* Invalidated: the buffer is the consumer's again. */
	return vt_canary_verdict(vt_buf(r->e, 0), "the Local Invalidate", res,
				 len);
}

static const struct vt_race_ops vt_inval_ops = {
	.pairs = 1,
	.delay = VT_COPY_DELAY,
	.held = "the Write's copy",
	.setup = vt_inval_setup,
	.start = vt_inval_start,
	.finish = vt_inval_finish,
};

/*
 * rresp: the client Reads VT_RRESP_LEN octets into its fast-reg sink; the
 * Read Response's copy into the sink is held at its start by a delay;
 * meanwhile the consumer moves the QP to ERR and polls the Read's
 * completion (a flush, or a success if the copy won the race), after
 * which the sink is the consumer's again: nothing may overwrite it.
 */
static int vt_rresp_setup(struct vt_race *r)
{
	int rv;

	rv = vt_race_mr(r, 0, r->e->cli[0].id->qp, 0, IB_ACCESS_REMOTE_WRITE);
	if (!rv)
		rv = vt_race_mr(r, 1, r->e->srv[0].id->qp, VT_PAIRS,
				IB_ACCESS_REMOTE_READ);
	memset(vt_buf(r->e, 1), 0xa1, VT_RRESP_LEN);
	r->d.arg0 = (unsigned long)r->mr[0];	/* the sink */
	return rv;
}

/*
 * Post an RDMA Read (@opcode, with or without invalidation of the sink)
 * of VT_RRESP_LEN octets from r->mr[1] into the sink r->mr[0] on the
 * client of pair 0.
 */
static int vt_race_read(struct vt_race *r, enum ib_wr_opcode opcode)
{
	struct ib_mr *sink = r->mr[0], *src = r->mr[1];
	struct ib_sge sge = { .addr = sink->iova, .length = VT_RRESP_LEN,
			      .lkey = sink->lkey };
	struct ib_rdma_wr rd = {
		.wr.opcode = opcode,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.wr_id = 4,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.remote_addr = src->iova,
		.rkey = src->rkey,
	};

	if (opcode == IB_WR_RDMA_READ_WITH_INV)
		rd.wr.ex.invalidate_rkey = sink->lkey;
	return vt_post(r->e->cli[0].id->qp, &rd.wr);
}

static int vt_rresp_start(struct vt_race *r)
{
	return vt_race_read(r, IB_WR_RDMA_READ);
}

static int vt_rresp_finish(struct vt_race *r, char *res, size_t len)
{
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	struct ib_wc wc;
	int rv, bad;

	/* The copy into the sink is about to start on another CPU. */
	rv = ib_modify_qp(r->e->cli[0].id->qp, &err, IB_QP_STATE);
	if (!rv)
		rv = vt_poll(r->e->cq[0], &wc);
	if (rv || wc.wr_id != 4)
		return scnprintf(res, len, "FAIL the Read did not complete: %d",
				 rv);
	/* The Read completed: the sink is the consumer's again. */
	bad = vt_canary_changed(vt_buf(r->e, 0));
	if (bad)
		return scnprintf(res, len,
				 "FAIL %d octets placed after the Read completed (status %d)",
				 bad, wc.status);
	return scnprintf(res, len,
			 "PASS nothing placed after the Read completed (status %d, delays %d)",
			 wc.status, atomic_read(&vmtest_delays));
}

static const struct vt_race_ops vt_rresp_ops = {
	.pairs = 1,
	.delay = { .sym = "kiwi_mr_write", .ms = 500, .count = 1 },
	.held = "the Read Response's copy",
	.setup = vt_rresp_setup,
	.start = vt_rresp_start,
	.finish = vt_rresp_finish,
};

/*
 * sendinv: while pair 0's RDMA Write is copied into the server's fast-reg
 * MR (the copy held open at the return of kiwi_mr_page by a delay), pair
 * 1's client sends with Invalidate of that MR's rkey to the server: once
 * the receive completed (IB_WC_WITH_INVALIDATE), the buffer is the
 * consumer's and nothing may overwrite it.
 */
static int vt_sendinv_setup(struct vt_race *r)
{
	const struct ib_recv_wr *rbad;
	int rv;

	rv = vt_race_mr(r, 0, r->e->srv[0].id->qp, VT_PAIRS,
			IB_ACCESS_REMOTE_WRITE);
	if (rv)
		return rv;
	vt_sendinv_init(&r->si, r->e, r->mr[0]->rkey);
	memset(vt_buf(r->e, 1), 0xa1, VT_INVAL_LEN);
	r->d.arg0 = (unsigned long)r->mr[0];	/* struct kiwi_mr starts with it */
	return ib_post_recv(r->e->srv[1].id->qp, &r->si.rwr, &rbad);
}

static int vt_sendinv_start(struct vt_race *r)
{
	return vt_race_write(r, r->e->cli[0].id->qp, 1, r->mr[0]);
}

static int vt_sendinv_finish(struct vt_race *r, char *res, size_t len)
{
	struct ib_wc wc;
	int rv;

	/* The copy into the MR is under way on another CPU. */
	rv = vt_post(r->e->cli[1].id->qp, &r->si.swr);
	if (!rv)
		rv = vt_poll(r->e->cq[VT_PAIRS + 1], &wc);
	if (rv || wc.status != IB_WC_SUCCESS ||
	    !(wc.wc_flags & IB_WC_WITH_INVALIDATE))
		return scnprintf(res, len,
				 "FAIL Send with Invalidate: %d status %d flags 0x%x",
				 rv, wc.status, wc.wc_flags);
	return vt_canary_verdict(vt_buf(r->e, 0), "the Send with Invalidate",
				 res, len);
}

static const struct vt_race_ops vt_sendinv_ops = {
	.pairs = 2,
	.delay = VT_COPY_DELAY,
	.held = "the Write's copy",
	.setup = vt_sendinv_setup,
	.start = vt_sendinv_start,
	.finish = vt_sendinv_finish,
};

/*
 * readinv: while pair 1's server Writes into the client's fast-reg sink
 * (the copy held open at the return of kiwi_mr_page by a delay), pair 0's
 * client Reads into that sink with Invalidate: once the Read completed,
 * the sink is the consumer's and nothing may overwrite it.
 */
static int vt_readinv_setup(struct vt_race *r)
{
	int rv = vt_rresp_setup(r);

	memset(vt_buf(r->e, 1), 0xc3, VT_RRESP_LEN);
	memset(vt_buf(r->e, 2), 0xa1, VT_INVAL_LEN);
	return rv;
}

static int vt_readinv_start(struct vt_race *r)
{
	return vt_race_write(r, r->e->srv[1].id->qp, 2, r->mr[0]);
}

static int vt_readinv_finish(struct vt_race *r, char *res, size_t len)
{
	struct ib_wc wc;
	int rv;

	/* The Write's copy into the sink is under way on another CPU. */
	rv = vt_race_read(r, IB_WR_RDMA_READ_WITH_INV);
	if (!rv)
		rv = vt_poll(r->e->cq[0], &wc);
	if (rv || wc.wr_id != 4 || wc.status != IB_WC_SUCCESS)
		return scnprintf(res, len,
				 "FAIL Read with Invalidate: %d status %d", rv,
				 wc.status);
	return vt_canary_verdict(vt_buf(r->e, 0), "the Read with Invalidate",
				 res, len);
}

static const struct vt_race_ops vt_readinv_ops = {
	.pairs = 2,
	.delay = VT_COPY_DELAY,
	.held = "the Write's copy",
	.setup = vt_readinv_setup,
	.start = vt_readinv_start,
	.finish = vt_readinv_finish,
};

/*
 * linvflush: TX took a Local Invalidate off the SQ; its invalidation is
 * held at its start by a delay while the consumer moves the QP to ERR.
 * The WR completes once, and its status says what happened to the MR:
 * success only if it was invalidated (another QP's REG_MR, which only an
 * invalid MR takes, tells), a flush only if not.
 */
static int vt_linvflush_setup(struct vt_race *r)
{
	return vt_race_mr(r, 0, r->e->cli[0].id->qp, 0,
			  IB_ACCESS_REMOTE_WRITE);
}

static int vt_linvflush_start(struct vt_race *r)
{
	struct ib_send_wr linv = {
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
		.wr_id = 2,
		.ex.invalidate_rkey = r->mr[0]->rkey,
	};

	return vt_post(r->e->cli[0].id->qp, &linv);
}

/*
 * The QP of @side (pair 0) goes to ERR while the invalidation of WR
 * @wr_id is held; the WR's completion on CQ @cq must tell what happened
 * to the MR (vt_inval_verdict()).
 */
static int vt_race_flush(struct vt_race *r, struct vt_side *side, int cq,
			 u64 wr_id, const char *what, char *res, size_t len)
{
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	struct ib_wc wc;
	int rv;

	rv = ib_modify_qp(side->id->qp, &err, IB_QP_STATE);
	if (!rv)
		rv = vt_poll(r->e->cq[cq], &wc);
	if (rv || wc.wr_id != wr_id)
		return scnprintf(res, len, "FAIL %s did not complete: %d",
				 what, rv);
	return vt_inval_verdict(r->e, r->e->cq[cq], r->mr[0], &wc, what, res,
				len);
}

static int vt_linvflush_finish(struct vt_race *r, char *res, size_t len)
{
	/* TX holds the WR; its invalidation is about to run. */
	return vt_race_flush(r, &r->e->cli[0], 0, 2, "Local Invalidate", res,
			     len);
}

static const struct vt_race_ops vt_linvflush_ops = {
	.pairs = 2,
	.delay = VT_INVAL_DELAY,
	.held = "the invalidation",
	.setup = vt_linvflush_setup,
	.start = vt_linvflush_start,
	.finish = vt_linvflush_finish,
};

/*
 * sendinvflush: the server's RX holds a received Send with Invalidate at
 * the start of its invalidation (a delay) while the consumer moves the
 * server's QP to ERR. The receive completes once, and its status says
 * what happened to the MR: success only if it was invalidated, a flush
 * only if not.
 */
static int vt_sendinvflush_setup(struct vt_race *r)
{
	const struct ib_recv_wr *rbad;
	int rv;

	rv = vt_race_mr(r, 0, r->e->srv[0].id->qp, VT_PAIRS,
			IB_ACCESS_REMOTE_WRITE);
	if (rv)
		return rv;
	vt_sendinv_init(&r->si, r->e, r->mr[0]->rkey);
	return ib_post_recv(r->e->srv[0].id->qp, &r->si.rwr, &rbad);
}

static int vt_sendinvflush_start(struct vt_race *r)
{
	return vt_post(r->e->cli[0].id->qp, &r->si.swr);
}

static int vt_sendinvflush_finish(struct vt_race *r, char *res, size_t len)
{
	/* RX holds the Send; its invalidation is about to run. */
	return vt_race_flush(r, &r->e->srv[0], VT_PAIRS, 7,
			     "the Send with Invalidate", res, len);
}

static const struct vt_race_ops vt_sendinvflush_ops = {
	.pairs = 2,
	.delay = VT_INVAL_DELAY,
	.held = "the invalidation",
	.setup = vt_sendinvflush_setup,
	.start = vt_sendinvflush_start,
	.finish = vt_sendinvflush_finish,
};

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
		return vt_race_run(&vt_inval_ops, res, len);
	if (!strcmp(test, "regmr"))
		return vt_test_regmr(res, len);
	if (!strcmp(test, "rresp"))
		return vt_race_run(&vt_rresp_ops, res, len);
	if (!strcmp(test, "sendinv"))
		return vt_race_run(&vt_sendinv_ops, res, len);
	if (!strcmp(test, "readinv"))
		return vt_race_run(&vt_readinv_ops, res, len);
	if (!strcmp(test, "linvflush"))
		return vt_race_run(&vt_linvflush_ops, res, len);
	if (!strcmp(test, "sendinvflush"))
		return vt_race_run(&vt_sendinvflush_ops, res, len);
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
