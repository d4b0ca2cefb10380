// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: the responder side. A listener accepts TCP connections without
 * blocking; each becomes a child ep that reads the MPA Request (within
 * mpa_timeout seconds), then reports IW_CM_EVENT_CONNECT_REQUEST to the
 * listener's cm_id and waits for accept or reject. The responder sends
 * nothing before the Reply, and after it no FPDU before the initiator's
 * first valid FPDU (tx_gated, enforced by the QP engine) unless the admin
 * lifted that rule outside peer-to-peer mode (mpa_responder_waits=N).
 */
#include <net/sock.h>

#include "cm_ep.h"

#define KIWI_CM_BACKLOG_MAX	1024

/*
 * A listener's lock nests inside its children's (kiwi_cm_report_request):
 * its own lockdep class keeps that apart from the ep->lock of the child.
 */
static struct lock_class_key kiwi_listener_lock_key;

/* Under ep->lock (listener): no more connections; children abort. */
static void kiwi_cm_unlisten_locked(struct kiwi_ep *ep)
{
	struct kiwi_ep *child;

	kiwi_ep_sock_release(ep, false);
	kiwi_ep_drop_cm_id(ep);
	kiwi_ep_finish(ep);
	for (;;) {
		spin_lock_bh(&ep->child_lock);
		child = list_first_entry_or_null(&ep->children, struct kiwi_ep,
						 child_entry);
		if (child) {
			list_del_init(&child->child_entry);
			ep->nchildren--;
			kiwi_ep_get(child);
		}
		spin_unlock_bh(&ep->child_lock);
		if (!child)
			break;
		kiwi_ep_queue(child, KIWI_EV_ABORT);
		kiwi_ep_put(child);
	}
}

/**
 * kiwi_cm_close_listener - close a listener or a port
 * @ep: the endpoint, its lock not held
 *
 * Process context. Synchronous: when it returns the listening socket (if
 * it has one) is closed and the cm_id released; children still reading a
 * Request are aborted, and those already reported belong to their own
 * cm_ids.
 */
void kiwi_cm_close_listener(struct kiwi_ep *ep)
{
	kiwi_ep_get(ep);
	mutex_lock(&ep->lock);
	if (ep->state == KIWI_EP_LISTEN)
		kiwi_cm_unlisten_locked(ep);
	mutex_unlock(&ep->lock);
	kiwi_ep_put(ep);
}

/**
 * kiwi_cm_unlisten - iw_destroy_listen
 * @ep: the listener
 *
 * Process context. A wildcard listener leaves its port first, so the port
 * hands it nothing more; then it closes (kiwi_cm_close_listener()).
 */
void kiwi_cm_unlisten(struct kiwi_ep *ep)
{
	kiwi_cm_port_leave(ep);
	kiwi_cm_close_listener(ep);
}

/**
 * kiwi_cm_listen - iw_create_listen
 * @cm_id: the listening id, address in m_local_addr
 * @backlog: TCP backlog; also the most children reading a Request at once
 *	(on SCTP, as many again read their Initiate only to refuse it)
 *
 * A specific address gets a socket of its own. A wildcard one joins the
 * port its namespace's kiwi devices share (cm_port.c). A wildcard listen
 * of an id in another network namespace than the device's net_device
 * succeeds without a socket or endpoint (kiwi_cm_listen_elsewhere();
 * provider_data stays NULL).
 *
 * Return: 0 or a negative errno (e.g. -EADDRINUSE).
 */
int kiwi_cm_listen(struct iw_cm_id *cm_id, int backlog)
{
	bool sctp = kiwi_cm_uses_sctp(cm_id->device);
	struct socket *sock = NULL;
	struct kiwi_ep *ep;
	int rv;

	if (kiwi_cm_listen_elsewhere(cm_id))
		return 0;
	backlog = clamp(backlog, 1, KIWI_CM_BACKLOG_MAX);
	rv = sctp ? kiwi_cm_sctp_settings_ok(cm_id->device) : 0;
	if (rv)
		return rv;
	ep = kiwi_ep_alloc();
	if (!ep)
		return -ENOMEM;
	lockdep_set_class(&ep->lock, &kiwi_listener_lock_key);
	ep->backlog = backlog;
	ep->sctp_llp = sctp;
	if (kiwi_cm_addr_any(&cm_id->m_local_addr))
		rv = kiwi_cm_port_join(ep, cm_id, backlog);
	else
		rv = kiwi_cm_listen_sock(cm_id, backlog, sctp, &sock);
	if (rv) {
		kiwi_ep_put(ep);
		return rv;
	}
	mutex_lock(&ep->lock);
	kiwi_ep_set_cm_id(ep, cm_id);
	if (sock)
		kiwi_ep_sock_attach(ep, sock, NULL);
	kiwi_ep_set_state(ep, KIWI_EP_LISTEN);
	kiwi_ep_queue(ep, KIWI_EV_DATA);
	mutex_unlock(&ep->lock);
	return 0;
}

/*
 * Under the listener's lock (and its port's, for a wildcard listener): a
 * new TCP connection, accepted on @parent's socket (the listener's own or
 * its port's), becomes a child. Taking the new child's lock here cannot
 * deadlock: only its listener (locked by us) and module unload's abort
 * work, which holds no other ep's lock, can reach it yet. Lockdep is told
 * it is a nesting of its own; the order for published children is child,
 * then listener.
 */
static void kiwi_cm_new_child(struct kiwi_ep *l, const struct kiwi_ep *parent,
			      struct socket *sock)
{
	struct kiwi_ep *child;
	bool room, over;

	kiwi_cm_count(l->cm_id->device, KIWI_STAT_CM_REQUESTS);
	spin_lock_bh(&l->child_lock);
	room = l->nchildren < l->backlog;
	over = !room && l->sctp_llp && l->nchildren < 2 * l->backlog;
	spin_unlock_bh(&l->child_lock);
	child = room || over ? kiwi_ep_alloc() : NULL;
	if (child && l->sctp_llp && kiwi_cm_sctp_ep_init(child, true)) {
		kiwi_ep_put(child);
		child = NULL;
	}
	if (!child) {
		kiwi_ep_sock_refuse(parent, sock);
		return;
	}
	/* Draft 6.4: its Initiate is answered with a Session Terminate. */
	if (over)
		set_bit(KIWI_EPF_OVER_BACKLOG, &child->flags);
	child->sctp_llp = l->sctp_llp;
	if (!child->sctp_llp)
		tcp_sock_set_nodelay(sock->sk);
	mutex_lock_nested(&child->lock, SINGLE_DEPTH_NESTING);
	kiwi_cm_policy(&child->pol, l->cm_id->device, KIWI_MAX_IRD,
		       KIWI_MAX_ORD);
	child->rdmac_graceful = kiwi_cm_rdmac_graceful(l->cm_id->device);
	/* Device removal aborts it, reported or not (kiwi_cm_remove_one). */
	child->ibdev = l->cm_id->device;
	kiwi_ep_get(l);
	child->listener = l;
	spin_lock_bh(&l->child_lock);
	list_add_tail(&child->child_entry, &l->children);
	l->nchildren++;
	spin_unlock_bh(&l->child_lock);
	kiwi_ep_sock_attach(child, sock, parent);
	kiwi_ep_set_state(child, KIWI_EP_WAIT_REQ);
	kiwi_ep_arm_timeout(child, kiwi_cm_mpa_timeout(l->cm_id->device));
	kiwi_ep_queue(child, KIWI_EV_DATA);
	mutex_unlock(&child->lock);
}

/*
 * Under the port's lock: a connection accepted on a port becomes a child
 * of the member it is for, if that one listens yet (or still).
 */
static void kiwi_cm_port_accept(struct kiwi_ep *port, struct socket *sock)
{
	struct kiwi_ep *l = kiwi_cm_port_member(port, sock);

	if (!l) {
		kiwi_ep_sock_refuse(port, sock);
		return;
	}
	mutex_lock(&l->lock);
	if (l->state == KIWI_EP_LISTEN && l->cm_id)
		kiwi_cm_new_child(l, port, sock);
	else
		kiwi_ep_sock_refuse(port, sock);
	mutex_unlock(&l->lock);
	kiwi_ep_put(l);
}

/**
 * kiwi_cm_listen_work - accept what the listening socket has
 * @ep: a listener or a port, ep->lock held; a wildcard listener has no
 *	socket (its port accepts for it)
 * @ev: KIWI_EV_* bits that arrived; an abort (module unload) closes it
 */
void kiwi_cm_listen_work(struct kiwi_ep *ep, unsigned long ev)
{
	struct socket *sock;

	if (ev & BIT(KIWI_EV_ABORT)) {
		kiwi_cm_unlisten_locked(ep);
		return;
	}
	if (!ep->sock)
		return;
	while (!kernel_accept(ep->sock, &sock, O_NONBLOCK)) {
		if (!sock->sk->sk_net_refcnt)
			kiwi_cm_sock_pin_net(sock->sk);
		if (test_bit(KIWI_EPF_PORT, &ep->flags))
			kiwi_cm_port_accept(ep, sock);
		else
			kiwi_cm_new_child(ep, ep, sock);
	}
}

/*
 * Under the child's lock: the Request goes to the listener's cm_id. The
 * answer is due within mpa_timeout seconds, as the Request was: iw_cm
 * drops a CONNECT_REQUEST without a word when it cannot make an id for it
 * or its listener is being destroyed, and a child nobody accepts or
 * rejects must not hold a connection until the peer gives up.
 */
int kiwi_cm_report_request(struct kiwi_ep *ep, const struct kiwi_mpa_frame *f)
{
	struct kiwi_ep *l = ep->listener;
	int rv = -ECONNRESET;

	mutex_lock(&l->lock);
	if (l->state == KIWI_EP_LISTEN && l->cm_id) {
		set_bit(KIWI_EPF_IWCM_REF, &ep->flags);
		kiwi_ep_get(ep);
		kiwi_ep_set_state(ep, KIWI_EP_RECVD_REQ);
		kiwi_ep_arm_timeout(ep,
				    kiwi_cm_mpa_timeout(l->cm_id->device));
		rv = kiwi_cm_event(ep, l->cm_id, IW_CM_EVENT_CONNECT_REQUEST,
				   0, f);
		if (rv && test_and_clear_bit(KIWI_EPF_IWCM_REF, &ep->flags))
			kiwi_ep_put(ep);
	}
	mutex_unlock(&l->lock);
	/* Reported: the connection belongs to its own cm_id from now on. */
	if (!rv)
		kiwi_ep_unchild(ep);
	return rv;
}

/*
 * Under ep->lock: a valid Request whose private data iw_cm cannot carry
 * (KIWI_CM_PD_MAX) gets a rejecting Reply, as RFC 5044 section 7.1.2 has
 * for private data the responder cannot accept, then a graceful close:
 * the ULP never sees it, the peer sees R=1 and the log says why.
 */
static void kiwi_cm_refuse_pdata(struct kiwi_ep *ep,
				 struct kiwi_mpa_frame *rep, u16 len)
{
	rep->reject = true;
	rep->pdata = NULL;
	rep->pdata_len = 0;
	if (!kiwi_cm_send(ep->sock, rep))
		kiwi_cm_obs_pdata_refused(ep, len);
	kiwi_cm_fail(ep, false);
}

/*
 * Under ep->lock: this side requires the ULP framing draft-00 profile and
 * the Request does not offer it. Like any Request the responder cannot
 * take, it gets a rejecting Reply and a graceful close; the ULP never
 * sees it, the log says why.
 */
static void kiwi_cm_refuse_ulpf(struct kiwi_ep *ep,
				const struct kiwi_mpa_frame *rep)
{
	if (!kiwi_cm_send(ep->sock, rep))
		kiwi_cm_obs_ulpf_refused(ep);
	kiwi_cm_fail(ep, false);
}

/* Under ep->lock: read the Request; report it once it is whole. */
static void kiwi_cm_read_request(struct kiwi_ep *ep)
{
	struct kiwi_mpa_params out = {};
	struct kiwi_mpa_frame f, rep;
	enum kiwi_mpa_status st;
	int err;

	st = kiwi_cm_read_frame(ep, false, &f, &err);
	if (st == KIWI_MPA_ST_NEED_MORE) {
		if (err || kiwi_cm_peer_closed(ep->sock, &err))
			kiwi_cm_fail(ep, true);
		return;
	}
	if (st == KIWI_MPA_ST_OK && ep->pol.ulpf)
		kiwi_mpa_frame_take_ulpf(&f);
	if (st == KIWI_MPA_ST_OK)
		st = kiwi_mpa_respond(&ep->pol, &f, &rep, &out);
	kiwi_cm_obs_request(ep, st, &out);
	if (st == KIWI_MPA_ST_NO_ULPF) {
		kiwi_cm_refuse_ulpf(ep, &rep);
		return;
	}
	if (st == KIWI_MPA_ST_BAD_REV && f.rev == KIWI_MPA_REV_RDMAC &&
	    ep->rdmac_graceful) {
		/* RFC 5044 C.2.1: a revision 1 Reply, then a graceful close. */
		kiwi_cm_send(ep->sock, &rep);
		kiwi_cm_fail(ep, false);
		return;
	}
	if (st != KIWI_MPA_ST_OK) {
		kiwi_cm_fail(ep, true);
		return;
	}
	if (f.pdata_len > KIWI_CM_PD_MAX) {
		kiwi_cm_refuse_pdata(ep, &rep, f.pdata_len);
		return;
	}
	ep->req = f;
	ep->llp.mpa = out;
	if (kiwi_cm_report_request(ep, &f))
		kiwi_cm_fail(ep, true);
}

/**
 * kiwi_cm_passive_work - the responder's state machine before accept
 * @ep: an endpoint in WAIT_REQ or RECVD_REQ, ep->lock held
 * @ev: KIWI_EV_* bits that arrived
 *
 * In RECVD_REQ nothing is read (what follows the Request is the first
 * FPDU, for the engine); a closed or aborted connection, or one neither
 * accepted nor rejected within mpa_timeout, is released and a later
 * accept fails.
 */
void kiwi_cm_passive_work(struct kiwi_ep *ep, unsigned long ev)
{
	int err;

	if (ev & (BIT(KIWI_EV_ABORT) | BIT(KIWI_EV_TIMEOUT))) {
		kiwi_cm_fail(ep, true);
		return;
	}
	if (ep->state == KIWI_EP_WAIT_REQ && ep->sctp_llp)
		kiwi_cm_sctp_read_initiate(ep);
	else if (ep->state == KIWI_EP_WAIT_REQ)
		kiwi_cm_read_request(ep);
	else if (kiwi_cm_peer_closed(ep->sock, &err))
		kiwi_cm_fail(ep, true);
}

/* Under ep->lock: the Reply to the Request kept in ep->req. */
static int kiwi_cm_make_reply(struct kiwi_ep *ep, struct kiwi_mpa_frame *rep,
			      const void *pdata, u16 pdata_len)
{
	u16 room = KIWI_MPA_PD_MAX;

	if (kiwi_mpa_respond(&ep->pol, &ep->req, rep, &ep->llp.mpa))
		return -EINVAL;
	if (rep->enhanced)
		room -= KIWI_MPA_ENH_LEN;
	if (rep->ulpf)
		room -= KIWI_ULPF_PD_LEN;
	if (pdata_len > room)
		return -EINVAL;
	rep->pdata = pdata;
	rep->pdata_len = pdata_len;
	return 0;
}

/**
 * kiwi_cm_take_qp - a responder's QP for iw_accept
 * @ep: the child, ep->lock held
 * @cm_id: the connection's id
 * @qpn: the QP number iw_accept names
 *
 * Once found, the QP reference is the ep's (put with it), even when the
 * caller does not own the QP.
 *
 * Return: 0, -EINVAL (no such QP) or -EACCES.
 */
int kiwi_cm_take_qp(struct kiwi_ep *ep, struct iw_cm_id *cm_id, u32 qpn)
{
	struct kiwi_qp *qp = kiwi_qp_lookup(to_kdev(cm_id->device), qpn, true);

	if (!qp)
		return -EINVAL;
	WRITE_ONCE(ep->qp, qp);
	if (!kiwi_qp_caller_owns(qp))
		return -EACCES;
	ep->ibdev = cm_id->device;
	return 0;
}

static int kiwi_cm_accept_locked(struct kiwi_ep *ep, struct iw_cm_id *cm_id,
				 struct iw_cm_conn_param *param)
{
	struct kiwi_mpa_frame rep;
	struct kiwi_qp *qp;
	int rv;

	if (ep->state != KIWI_EP_RECVD_REQ)
		return -ECONNRESET;
	kiwi_ep_disarm_timeout(ep);
	kiwi_cm_policy_depths(&ep->pol, param->ird, param->ord);
	rv = kiwi_cm_make_reply(ep, &rep, param->private_data,
				param->private_data_len);
	if (rv)
		return rv;
	rv = kiwi_cm_take_qp(ep, cm_id, param->qpn);
	if (rv)
		return rv;
	qp = ep->qp;
	ep->llp.initiator = false;
	ep->llp.tx_gated = true;
	ep->llp.expect_rtr = ep->llp.mpa.p2p;
	/*
	 * The QP is ready for the first FPDU before the peer can send it;
	 * its transmit side stays shut until the Reply is on the wire.
	 */
	rv = kiwi_cm_attach(ep);
	if (rv)
		return rv;
	rv = kiwi_cm_send(ep->sock, &rep);
	if (rv)
		return rv;
	kiwi_cm_count(cm_id->device, KIWI_STAT_MPA_REP_SENT);
	kiwi_qp_llp_reply_sent(qp);
	/*
	 * In peer-to-peer mode the RTR opens the gate, as RFC 6581 wants.
	 * With the draft-00 profile the initiator's first framing PDU does,
	 * whatever the settings: it shows that the initiator framed its
	 * receive side, before which nothing framed may reach it (ULPF-009).
	 */
	if (!ep->llp.mpa.p2p && !ep->llp.mpa.ulpf &&
	    !kiwi_cm_responder_waits(cm_id->device))
		kiwi_qp_llp_ungate(ep->qp);
	kiwi_ep_set_cm_id(ep, cm_id);
	kiwi_ep_set_state(ep, KIWI_EP_CONNECTED);
	kiwi_cm_event(ep, cm_id, IW_CM_EVENT_ESTABLISHED, 0, NULL);
	return 0;
}

/**
 * kiwi_cm_accept - iw_accept on a CONNECT_REQUEST's id
 * @ep: the child from the event's provider_data
 * @cm_id: the new id iw_cm made for the connection
 * @param: private data, IRD/ORD and QP number
 *
 * Return: 0 (ESTABLISHED follows), or a negative errno: the connection is
 * reset and no event follows.
 */
int kiwi_cm_accept(struct kiwi_ep *ep, struct iw_cm_id *cm_id,
		   struct iw_cm_conn_param *param)
{
	int rv;

	if (!test_and_clear_bit(KIWI_EPF_IWCM_REF, &ep->flags))
		return -EINVAL;
	mutex_lock(&ep->lock);
	if (ep->sctp_llp)
		rv = kiwi_cm_sctp_accept_locked(ep, cm_id, param);
	else
		rv = kiwi_cm_accept_locked(ep, cm_id, param);
	if (rv)
		kiwi_cm_fail(ep, true);
	mutex_unlock(&ep->lock);
	kiwi_ep_put(ep);
	return rv;
}

/**
 * kiwi_cm_reject - iw_reject: a Reply with R=1 and @pdata, then close
 * @ep: the child from the event's provider_data
 * @pdata: private data for the peer, may be NULL
 * @pdata_len: its length
 *
 * Return: 0, or -EINVAL if the request was already answered.
 */
int kiwi_cm_reject(struct kiwi_ep *ep, const void *pdata, u8 pdata_len)
{
	struct kiwi_mpa_frame rep;

	if (!test_and_clear_bit(KIWI_EPF_IWCM_REF, &ep->flags))
		return -EINVAL;
	mutex_lock(&ep->lock);
	if (ep->sctp_llp) {
		kiwi_cm_sctp_reject_locked(ep, pdata, pdata_len);
	} else if (ep->state == KIWI_EP_RECVD_REQ &&
		   !kiwi_cm_make_reply(ep, &rep, pdata, pdata_len)) {
		rep.reject = true;
		kiwi_cm_send(ep->sock, &rep);
	}
	kiwi_cm_fail(ep, false);
	mutex_unlock(&ep->lock);
	kiwi_ep_put(ep);
	return 0;
}
