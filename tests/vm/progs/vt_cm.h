/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Connected RC QP pairs inside one process over rdma_cm: a listener on a
 * local address and, per pair, an active id that connects to it. Both ends
 * use the listener's verbs context, so one PD serves both QPs. Setup
 * errors are fatal (vt_fatal, exit status 2).
 */
#ifndef KIWI_VT_CM_H
#define KIWI_VT_CM_H

#include <rdma/rdma_cma.h>

#include "vt.h"

struct vt_cm {
	struct rdma_event_channel *ec_listen;	/* the listener and its children */
	struct rdma_event_channel *ec_active;	/* the active ids */
	struct rdma_cm_id *listen;
	struct ibv_context *verbs;		/* the listener's device context */
	struct sockaddr_storage addr;		/* where it listens */
};

/* One connection: the active (client) and passive (server) ends. */
struct vt_cm_pair {
	struct rdma_cm_id *active;
	struct rdma_cm_id *passive;
};

/* Listen on ADDR:PORT (ADDR must belong to a kiwi device). */
void vt_cm_listen(struct vt_cm *cm, const char *addr, const char *port);

/*
 * Listen on the address of a command line "-a ADDR [-p PORT]" (@port by
 * default); any other option, or no address, calls @usage.
 */
void vt_cm_listen_args(struct vt_cm *cm, int argc, char **argv,
		       const char *port, void (*usage)(void));

/*
 * First half of a connection: resolve the listener's address and create
 * the active QP with @attr (it is in INIT and not connected yet).
 */
void vt_cm_prepare(struct vt_cm *cm, struct vt_cm_pair *pair,
		   struct ibv_pd *pd, struct ibv_qp_init_attr *attr);

/*
 * Second half: connect, create the passive QP with @attr on the incoming
 * request, accept, and wait until both ends are established.
 */
void vt_cm_establish(struct vt_cm *cm, struct vt_cm_pair *pair,
		     struct ibv_pd *pd, struct ibv_qp_init_attr *attr);

/*
 * vt_cm_prepare and vt_cm_establish for QPs made by rdma_create_qp_ex
 * (ibv_create_qp_ex) from @attr, whose comp_mask must hold
 * IBV_QP_INIT_ATTR_PD.
 */
void vt_cm_prepare_ex(struct vt_cm *cm, struct vt_cm_pair *pair,
		      struct ibv_qp_init_attr_ex *attr);
void vt_cm_establish_ex(struct vt_cm *cm, struct vt_cm_pair *pair,
			struct ibv_qp_init_attr_ex *attr);

/*
 * For a QP the caller made itself and names by number: connect @pair's
 * active id (vt_cm_prepare) and take the listener's Request for it as
 * @pair->passive, not accepted yet; then accept it naming QP @qpn (in
 * INIT) and wait until both ends are established.
 */
void vt_cm_request(struct vt_cm *cm, struct vt_cm_pair *pair);
void vt_cm_accept_qpn(struct vt_cm *cm, struct vt_cm_pair *pair,
		      uint32_t qpn);

/*
 * Disconnect both ends (errors ignored: they may be closed already), ack
 * whatever CM events are queued, destroy both QPs and both ids.
 */
void vt_cm_teardown(struct vt_cm *cm, struct vt_cm_pair *pair);

void vt_cm_close(struct vt_cm *cm);

/*
 * A connection with a CQ per end, each the send and receive CQ of its
 * QP: [0] the active end, [1] the passive end.
 */
struct vt_cm_conn {
	struct vt_cm_pair pair;
	struct ibv_cq *cq[2];
};

/*
 * Connect @c on @pd: CQs of @cq_depth entries, RC QPs of @max_send_wr
 * sends, 4 receives and one SGE each way.
 */
void vt_cm_conn_open(struct vt_cm *cm, struct vt_cm_conn *c,
		     struct ibv_pd *pd, int cq_depth, uint32_t max_send_wr);
void vt_cm_conn_close(struct vt_cm *cm, struct vt_cm_conn *c);

/* The QP of end @end of @c (0 active, 1 passive). */
struct ibv_qp *vt_cm_conn_qp(const struct vt_cm_conn *c, int end);

/*
 * rdma_getaddrinfo of ADDR:PORT in the TCP port space (@passive: to listen
 * on; ADDR may then be NULL), or exit with status 2 and a FAIL message.
 */
struct rdma_addrinfo *vt_cm_resolve(const char *addr, const char *port,
				    bool passive);

#endif
