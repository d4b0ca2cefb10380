// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Connected RC QP pairs inside one process over rdma_cm; see vt_cm.h. */
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>

#include <unistd.h>

#include "vt_cm.h"

#define VT_CM_WAIT_MS 30000

static const struct rdma_conn_param vt_conn_param = {
	.responder_resources = 4,
	.initiator_depth = 4,
	.retry_count = 7,
	.rnr_retry_count = 7,
};

/*
 * The next event of @ec that is @want for @id (any id if NULL). Events of
 * earlier connections (disconnects, late establishment of a torn-down
 * pair) are acked and skipped; anything else is fatal.
 */
static struct rdma_cm_event *vt_cm_wait(struct rdma_event_channel *ec,
					struct rdma_cm_id *id,
					enum rdma_cm_event_type want)
{
	struct pollfd pfd = { .fd = ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	for (;;) {
		if (poll(&pfd, 1, VT_CM_WAIT_MS) != 1)
			vt_fatal("no %s within %d ms", rdma_event_str(want),
				 VT_CM_WAIT_MS);
		if (rdma_get_cm_event(ec, &ev)) {
			if (errno == EAGAIN)
				continue;
			vt_fatal("rdma_get_cm_event: %s", strerror(errno));
		}
		if (ev->event == want && (!id || ev->id == id))
			return ev;
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED ||
		    ev->event == RDMA_CM_EVENT_TIMEWAIT_EXIT ||
		    (id && ev->id != id)) {
			rdma_ack_cm_event(ev);
			continue;
		}
		vt_fatal("expected %s, got %s (status %d)",
			 rdma_event_str(want), rdma_event_str(ev->event),
			 ev->status);
	}
}

static void vt_cm_nonblock(struct rdma_event_channel *ec)
{
	int fl = fcntl(ec->fd, F_GETFL);

	if (fl < 0 || fcntl(ec->fd, F_SETFL, fl | O_NONBLOCK))
		vt_fatal("fcntl on a CM event channel: %s", strerror(errno));
}

void vt_cm_listen(struct vt_cm *cm, const char *addr, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC }, *ai;
	int rc;

	memset(cm, 0, sizeof(*cm));
	rc = getaddrinfo(addr, port, &hints, &ai);
	if (rc)
		vt_fatal("%s: %s", addr, gai_strerror(rc));
	memcpy(&cm->addr, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	cm->ec_listen = rdma_create_event_channel();
	cm->ec_active = rdma_create_event_channel();
	if (!cm->ec_listen || !cm->ec_active)
		vt_fatal("rdma_create_event_channel: %s", strerror(errno));
	vt_cm_nonblock(cm->ec_listen);
	vt_cm_nonblock(cm->ec_active);
	if (rdma_create_id(cm->ec_listen, &cm->listen, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(cm->listen, (struct sockaddr *)&cm->addr) ||
	    rdma_listen(cm->listen, 8))
		vt_fatal("listen on %s port %s: %s", addr, port,
			 strerror(errno));
	cm->verbs = cm->listen->verbs;
	if (!cm->verbs)
		vt_fatal("%s is not the address of an RDMA device", addr);
}

/* The QP attributes of one end: plain, or extended if @ex is set. */
struct vt_cm_qp_attr {
	struct ibv_pd *pd;
	struct ibv_qp_init_attr *attr;
	struct ibv_qp_init_attr_ex *ex;
};

static void vt_cm_create_qp(struct rdma_cm_id *id, struct vt_cm *cm,
			    const struct vt_cm_qp_attr *qa)
{
	if (id->verbs != cm->verbs)
		vt_fatal("the connection uses another device context");
	if (qa->ex ? rdma_create_qp_ex(id, qa->ex) :
		     rdma_create_qp(id, qa->pd, qa->attr))
		vt_fatal("rdma_create_qp: %s", strerror(errno));
}

static void vt_cm_prepare_any(struct vt_cm *cm, struct vt_cm_pair *pair,
			      const struct vt_cm_qp_attr *qa)
{
	struct rdma_cm_id *id;

	memset(pair, 0, sizeof(*pair));
	if (rdma_create_id(cm->ec_active, &id, NULL, RDMA_PS_TCP))
		vt_fatal("rdma_create_id: %s", strerror(errno));
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&cm->addr, 5000))
		vt_fatal("rdma_resolve_addr: %s", strerror(errno));
	rdma_ack_cm_event(vt_cm_wait(cm->ec_active, id,
				     RDMA_CM_EVENT_ADDR_RESOLVED));
	if (rdma_resolve_route(id, 5000))
		vt_fatal("rdma_resolve_route: %s", strerror(errno));
	rdma_ack_cm_event(vt_cm_wait(cm->ec_active, id,
				     RDMA_CM_EVENT_ROUTE_RESOLVED));
	vt_cm_create_qp(id, cm, qa);
	pair->active = id;
}

void vt_cm_request(struct vt_cm *cm, struct vt_cm_pair *pair)
{
	struct rdma_conn_param p = vt_conn_param;
	struct rdma_cm_event *ev;

	if (rdma_connect(pair->active, &p))
		vt_fatal("rdma_connect: %s", strerror(errno));
	ev = vt_cm_wait(cm->ec_listen, NULL, RDMA_CM_EVENT_CONNECT_REQUEST);
	pair->passive = ev->id;
	rdma_ack_cm_event(ev);
}

/* Accept @pair's Request (with @p) and wait until both ends are up. */
static void vt_cm_accept_with(struct vt_cm *cm, struct vt_cm_pair *pair,
			      struct rdma_conn_param *p)
{
	if (rdma_accept(pair->passive, p))
		vt_fatal("rdma_accept: %s", strerror(errno));
	rdma_ack_cm_event(vt_cm_wait(cm->ec_active, pair->active,
				     RDMA_CM_EVENT_ESTABLISHED));
	rdma_ack_cm_event(vt_cm_wait(cm->ec_listen, pair->passive,
				     RDMA_CM_EVENT_ESTABLISHED));
}

void vt_cm_accept_qpn(struct vt_cm *cm, struct vt_cm_pair *pair,
		      uint32_t qpn)
{
	struct rdma_conn_param p = vt_conn_param;

	p.qp_num = qpn;
	vt_cm_accept_with(cm, pair, &p);
}

static void vt_cm_establish_any(struct vt_cm *cm, struct vt_cm_pair *pair,
				const struct vt_cm_qp_attr *qa)
{
	struct rdma_conn_param p = vt_conn_param;

	vt_cm_request(cm, pair);
	vt_cm_create_qp(pair->passive, cm, qa);
	vt_cm_accept_with(cm, pair, &p);
}

void vt_cm_prepare(struct vt_cm *cm, struct vt_cm_pair *pair,
		   struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	const struct vt_cm_qp_attr qa = { .pd = pd, .attr = attr };

	vt_cm_prepare_any(cm, pair, &qa);
}

void vt_cm_establish(struct vt_cm *cm, struct vt_cm_pair *pair,
		     struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	const struct vt_cm_qp_attr qa = { .pd = pd, .attr = attr };

	vt_cm_establish_any(cm, pair, &qa);
}

void vt_cm_prepare_ex(struct vt_cm *cm, struct vt_cm_pair *pair,
		      struct ibv_qp_init_attr_ex *attr)
{
	const struct vt_cm_qp_attr qa = { .ex = attr };

	vt_cm_prepare_any(cm, pair, &qa);
}

void vt_cm_establish_ex(struct vt_cm *cm, struct vt_cm_pair *pair,
			struct ibv_qp_init_attr_ex *attr)
{
	const struct vt_cm_qp_attr qa = { .ex = attr };

	vt_cm_establish_any(cm, pair, &qa);
}

/* Ack every event already queued on @ec. */
static void vt_cm_drain(struct rdma_event_channel *ec)
{
	struct rdma_cm_event *ev;

	while (!rdma_get_cm_event(ec, &ev))
		rdma_ack_cm_event(ev);
}

void vt_cm_teardown(struct vt_cm *cm, struct vt_cm_pair *pair)
{
	struct rdma_cm_id *ids[] = { pair->active, pair->passive };
	unsigned int i;

	for (i = 0; i < 2; i++)
		if (ids[i])
			rdma_disconnect(ids[i]);
	vt_cm_drain(cm->ec_active);
	vt_cm_drain(cm->ec_listen);
	for (i = 0; i < 2; i++) {
		if (!ids[i])
			continue;
		if (ids[i]->qp)
			rdma_destroy_qp(ids[i]);
		if (rdma_destroy_id(ids[i]))
			vt_fail("rdma_destroy_id: %s", strerror(errno));
	}
	memset(pair, 0, sizeof(*pair));
}

void vt_cm_close(struct vt_cm *cm)
{
	if (cm->listen)
		rdma_destroy_id(cm->listen);
	vt_cm_drain(cm->ec_listen);
	vt_cm_drain(cm->ec_active);
	rdma_destroy_event_channel(cm->ec_listen);
	rdma_destroy_event_channel(cm->ec_active);
	memset(cm, 0, sizeof(*cm));
}

void vt_cm_conn_open(struct vt_cm *cm, struct vt_cm_conn *c,
		     struct ibv_pd *pd, int cq_depth, uint32_t max_send_wr)
{
	struct ibv_qp_init_attr a[2];
	int i;

	for (i = 0; i < 2; i++) {
		c->cq[i] = ibv_create_cq(cm->verbs, cq_depth, NULL, NULL, 0);
		if (!c->cq[i])
			vt_fatal("ibv_create_cq: %s", strerror(errno));
		a[i] = (struct ibv_qp_init_attr){
			.send_cq = c->cq[i],
			.recv_cq = c->cq[i],
			.cap = { .max_send_wr = max_send_wr, .max_recv_wr = 4,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			.qp_type = IBV_QPT_RC,
		};
	}
	vt_cm_prepare(cm, &c->pair, pd, &a[0]);
	vt_cm_establish(cm, &c->pair, pd, &a[1]);
}

void vt_cm_conn_close(struct vt_cm *cm, struct vt_cm_conn *c)
{
	vt_cm_teardown(cm, &c->pair);
	ibv_destroy_cq(c->cq[0]);
	ibv_destroy_cq(c->cq[1]);
}

struct ibv_qp *vt_cm_conn_qp(const struct vt_cm_conn *c, int end)
{
	return end ? c->pair.passive->qp : c->pair.active->qp;
}

void vt_cm_listen_args(struct vt_cm *cm, int argc, char **argv,
		       const char *port, void (*usage)(void))
{
	const char *addr = NULL;
	int opt;

	while ((opt = getopt(argc, argv, "a:p:")) != -1) {
		if (opt == 'a')
			addr = optarg;
		else if (opt == 'p')
			port = optarg;
		else
			usage();
	}
	if (!addr)
		usage();
	vt_cm_listen(cm, addr, port);
}

struct rdma_addrinfo *vt_cm_resolve(const char *addr, const char *port,
				    bool passive)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP,
				       .ai_flags = passive ? RAI_PASSIVE : 0 };
	struct rdma_addrinfo *res;

	if (rdma_getaddrinfo(addr, port, &hints, &res))
		vt_die(2, "rdma_getaddrinfo %s:%s: %s", addr ? addr : "*", port,
		       strerror(errno));
	return res;
}
