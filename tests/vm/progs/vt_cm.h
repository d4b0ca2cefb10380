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
 * Disconnect both ends (errors ignored: they may be closed already), ack
 * whatever CM events are queued, destroy both QPs and both ids.
 */
void vt_cm_teardown(struct vt_cm *cm, struct vt_cm_pair *pair);

void vt_cm_close(struct vt_cm *cm);

#endif
