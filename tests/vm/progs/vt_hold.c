// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vt_hold: hold one of every verbs object open while the device is removed
 * under it (rdma link delete, netdev unregister), then check what a
 * process sees afterwards.
 *
 *   vt_hold [-d DEV] [-t SECONDS] [-r READYFILE] [-e]
 *
 * -e moves one QP from INIT to ERR first, so that the device holds a QP
 * past INIT, as one a connection used (a netdev's removal waits up to 3 s
 * for those, then goes on).
 *
 * After writing READYFILE the program waits up to -t seconds (default 60)
 * for IBV_EVENT_DEVICE_FATAL; other events are printed and ignored. Then:
 * new verbs fail with EIO, polling a CQ returns no completion, and
 * destroying every object and closing the device succeed.
 */
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "vt.h"

#define VT_BUF_LEN 65536

struct vt_objs {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	void *buf;
	struct ibv_mr *mr;
	struct ibv_comp_channel *chan;
	struct ibv_cq *cq_chan;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_qp *qp_srq;
};

static struct ibv_qp *make_qp(struct vt_objs *o, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = o->cq, .recv_cq = o->cq_chan, .srq = srq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = srq ? 0 : 16,
			 .max_send_sge = 2, .max_recv_sge = srq ? 0 : 2 },
	};
	struct ibv_qp *qp = ibv_create_qp(o->pd, &a);

	if (!qp)
		vt_fatal("ibv_create_qp: %s", strerror(errno));
	return qp;
}

static void create_objs(struct vt_objs *o, bool err_qp)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 32, .max_sge = 2 } };
	struct ibv_qp_attr qa = {
		.qp_state = IBV_QPS_INIT,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE,
	};
	int rc;

	o->pd = ibv_alloc_pd(o->ctx);
	o->buf = calloc(1, VT_BUF_LEN);
	if (!o->pd || !o->buf)
		vt_fatal("pd/buffer: %s", strerror(errno));
	o->mr = ibv_reg_mr(o->pd, o->buf, VT_BUF_LEN,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	o->chan = ibv_create_comp_channel(o->ctx);
	if (!o->mr || !o->chan)
		vt_fatal("mr/channel: %s", strerror(errno));
	o->cq_chan = ibv_create_cq(o->ctx, 64, NULL, o->chan, 0);
	o->cq = ibv_create_cq(o->ctx, 64, NULL, NULL, 0);
	o->srq = ibv_create_srq(o->pd, &sa);
	if (!o->cq_chan || !o->cq || !o->srq)
		vt_fatal("cq/srq: %s", strerror(errno));
	rc = ibv_req_notify_cq(o->cq_chan, 0);
	if (rc)
		vt_fatal("ibv_req_notify_cq: %s", strerror(rc));
	o->qp = make_qp(o, NULL);
	o->qp_srq = make_qp(o, o->srq);
	rc = ibv_modify_qp(o->qp, &qa, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS);
	if (rc)
		vt_fatal("ibv_modify_qp(INIT): %s", strerror(rc));
	qa.qp_state = IBV_QPS_ERR;
	rc = err_qp ? ibv_modify_qp(o->qp, &qa, IBV_QP_STATE) : 0;
	if (rc)
		vt_fatal("ibv_modify_qp(ERR): %s", strerror(rc));
}

static bool wait_fatal(struct ibv_context *ctx, unsigned long timeout_s)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	time_t deadline = time(NULL) + (time_t)timeout_s;
	struct ibv_async_event ev;
	bool fatal = false;

	while (!fatal && time(NULL) < deadline) {
		int rc = poll(&pfd, 1, 500);

		if (rc < 0 && errno != EINTR)
			vt_fatal("poll: %s", strerror(errno));
		if (rc <= 0 || ibv_get_async_event(ctx, &ev))
			continue;
		printf("async event: %s\n", ibv_event_type_str(ev.event_type));
		fatal = ev.event_type == IBV_EVENT_DEVICE_FATAL;
		ibv_ack_async_event(&ev);
	}
	return fatal;
}

static void check_dead(struct vt_objs *o)
{
	struct ibv_port_attr pa;
	struct ibv_wc wc[4];
	struct ibv_pd *pd;
	int rc;

	errno = 0;
	pd = ibv_alloc_pd(o->ctx);
	vt_expect_errno("ibv_alloc_pd after removal", !pd, errno, EIO);
	if (pd)
		ibv_dealloc_pd(pd);
	rc = ibv_query_port(o->ctx, 1, &pa);
	vt_expect_errno("ibv_query_port after removal", rc != 0, rc, EIO);
	rc = ibv_poll_cq(o->cq, 4, wc);
	if (rc != 0)
		vt_fail("ibv_poll_cq after removal returned %d, expected 0", rc);
	else
		vt_pass("ibv_poll_cq after removal: no completion");
}

static void destroy_objs(struct vt_objs *o)
{
	int rc;

#define VT_DESTROY(obj, fn)						\
	do {								\
		rc = fn(obj);						\
		if (rc)							\
			vt_fail("%s after removal: %s", #fn,		\
				strerror(rc < 0 ? errno : rc));		\
		else							\
			vt_pass("%s after removal", #fn);		\
	} while (0)
	VT_DESTROY(o->qp_srq, ibv_destroy_qp);
	VT_DESTROY(o->qp, ibv_destroy_qp);
	VT_DESTROY(o->srq, ibv_destroy_srq);
	VT_DESTROY(o->cq, ibv_destroy_cq);
	VT_DESTROY(o->cq_chan, ibv_destroy_cq);
	VT_DESTROY(o->chan, ibv_destroy_comp_channel);
	VT_DESTROY(o->mr, ibv_dereg_mr);
	VT_DESTROY(o->pd, ibv_dealloc_pd);
	VT_DESTROY(o->ctx, ibv_close_device);
#undef VT_DESTROY
	free(o->buf);
}

int main(int argc, char **argv)
{
	const char *dev = VT_DEFAULT_DEV, *ready = NULL;
	unsigned long timeout_s = 60;
	struct vt_objs o = { 0 };
	bool err_qp = false;
	int opt, flags;

	vt_init("vt_hold");
	while ((opt = getopt(argc, argv, "d:t:r:e")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 't':
			timeout_s = vt_ulong("-t", optarg);
			break;
		case 'r':
			ready = optarg;
			break;
		case 'e':
			err_qp = true;
			break;
		default:
			fprintf(stderr, "usage: vt_hold [-d DEV] [-t S] [-r READYFILE] [-e]\n");
			return 2;
		}
	}
	o.ctx = vt_open(dev);
	flags = fcntl(o.ctx->async_fd, F_GETFL);
	if (flags < 0 || fcntl(o.ctx->async_fd, F_SETFL, flags | O_NONBLOCK))
		vt_fatal("fcntl(async_fd): %s", strerror(errno));
	create_objs(&o, err_qp);
	vt_signal_ready(ready);
	if (wait_fatal(o.ctx, timeout_s)) {
		vt_pass("IBV_EVENT_DEVICE_FATAL received");
		check_dead(&o);
	} else {
		vt_fail("no IBV_EVENT_DEVICE_FATAL within %lus", timeout_s);
	}
	destroy_objs(&o);
	return vt_exit();
}
