// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: the initiator side of a connection. connect() starts a
 * non-blocking TCP connect; the endpoint's work sends the MPA Request once
 * TCP is established, reads the Reply, negotiates with
 * kiwi_mpa_check_reply() and reports IW_CM_EVENT_CONNECT_REPLY exactly
 * once. One timeout (mpa_timeout) covers TCP connect plus the Reply.
 */
#include <net/sock.h>
#include <net/tcp_states.h>

#include "cm_ep.h"

/*
 * Under ep->lock: give up; iw_cm gets CONNECT_REPLY with @status, the
 * connection ends with a FIN (@abortive false) or a reset.
 */
static void kiwi_cm_connect_end(struct kiwi_ep *ep, int status,
				const struct kiwi_mpa_frame *f, bool abortive)
{
	kiwi_ep_disarm_timeout(ep);
	kiwi_cm_count(ep->qp->ibqp.device, KIWI_STAT_CM_CONNECT_ERRORS);
	kiwi_cm_event(ep, ep->cm_id, IW_CM_EVENT_CONNECT_REPLY, status, f);
	kiwi_cm_fail(ep, abortive);
}

/* Under ep->lock: a reject leaves TCP to a graceful close, errors reset it. */
static void kiwi_cm_connect_fail(struct kiwi_ep *ep, int status,
				 const struct kiwi_mpa_frame *f)
{
	kiwi_cm_connect_end(ep, status, f, status != -ECONNREFUSED);
}

/* Under ep->lock: the frame built at connect time goes out. */
static int kiwi_cm_send_request(struct kiwi_ep *ep)
{
	struct msghdr msg = {
		.msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL | MSG_EOR,
	};
	struct kvec kv = { .iov_base = ep->rbuf, .iov_len = ep->rlen };
	int rv;

	rv = kernel_sendmsg(ep->sock, &msg, &kv, 1, kv.iov_len);
	ep->rlen = 0;
	if (rv < 0)
		return rv;
	return rv == kv.iov_len ? 0 : -EIO;
}

/*
 * Under ep->lock: a valid Reply whose private data iw_cm cannot carry
 * (KIWI_CM_PD_MAX). The ULP gets -EMSGSIZE instead of private data cut
 * short. An accepting Reply put the responder in Full Operation: in
 * RFC 6581 mode it hears Terminate 2/0/05 (a local failure in this
 * phase, section 9.3) and a FIN; RFC 5044 has no code for it, a reset
 * ends the stream. A rejecting Reply left TCP open: it closes gracefully.
 */
static void kiwi_cm_pdata_too_long(struct kiwi_ep *ep,
				   const struct kiwi_mpa_frame *f, bool rejected)
{
	bool abortive = !rejected;

	ibdev_info_ratelimited(ep->qp->ibqp.device,
			       "MPA Reply with %u octets of private data refused: iw_cm delivers at most %u\n",
			       f->pdata_len, KIWI_CM_PD_MAX);
	if (!rejected && f->enhanced)
		abortive = kiwi_cm_send_mpa_term(ep, KIWI_MPA_ERR_LOCAL_CATA) != 0;
	kiwi_cm_connect_end(ep, -EMSGSIZE, NULL, abortive);
}

/* Under ep->lock: a whole Reply arrived (or a bad one). */
static void kiwi_cm_got_reply(struct kiwi_ep *ep, enum kiwi_mpa_status st,
			      const struct kiwi_mpa_frame *f)
{
	struct kiwi_llp_params *llp = &ep->llp;
	u8 ecode;

	if (st == KIWI_MPA_ST_OK)
		st = kiwi_mpa_check_reply(&ep->pol, &ep->req, f, &llp->mpa);
	kiwi_cm_obs_reply(ep, st);
	if (f->pdata_len > KIWI_CM_PD_MAX &&
	    (st == KIWI_MPA_ST_OK || st == KIWI_MPA_ST_REJECTED)) {
		kiwi_cm_pdata_too_long(ep, f, st == KIWI_MPA_ST_REJECTED);
		return;
	}
	if (st == KIWI_MPA_ST_BAD_REV && f->rev == KIWI_MPA_REV_RDMAC &&
	    ep->rdmac_graceful) {
		/* RFC 5044 C.2.2: an RDMAC responder; close gracefully. */
		kiwi_cm_connect_end(ep, -EPROTO, NULL, false);
		return;
	}
	switch (kiwi_mpa_status_action(st)) {
	case KIWI_MPA_ACT_PROCEED:
		break;
	case KIWI_MPA_ACT_EXIT_OPEN:
		/* Rejected: the peer's private data goes to the ULP. */
		kiwi_cm_connect_fail(ep, -ECONNREFUSED, f);
		return;
	case KIWI_MPA_ACT_TERM_CLOSE:
		/* RFC 6581 IRD or RTR failure: Terminate 2/0/6 or 7, FIN. */
		ecode = kiwi_mpa_status_ecode(st);
		kiwi_cm_connect_end(ep, -EPROTO, NULL,
				    kiwi_cm_send_mpa_term(ep, ecode) != 0);
		return;
	default:
		kiwi_cm_connect_fail(ep, -EPROTO, NULL);
		return;
	}
	llp->initiator = true;
	llp->send_rtr = llp->mpa.p2p;
	if (kiwi_cm_attach(ep)) {
		kiwi_cm_connect_fail(ep, -EINVAL, NULL);
		return;
	}
	kiwi_ep_disarm_timeout(ep);
	kiwi_ep_set_state(ep, KIWI_EP_CONNECTED);
	kiwi_cm_event(ep, ep->cm_id, IW_CM_EVENT_CONNECT_REPLY, 0, f);
}

static void kiwi_cm_read_reply(struct kiwi_ep *ep)
{
	struct kiwi_mpa_frame f;
	enum kiwi_mpa_status st;
	int err;

	st = kiwi_cm_read_frame(ep, true, &f, &err);
	if (st == KIWI_MPA_ST_NEED_MORE) {
		if (err || kiwi_cm_peer_closed(ep->sock, &err))
			kiwi_cm_connect_fail(ep, err, NULL);
		return;
	}
	/* Absent, the field is missed by kiwi_mpa_check_reply(). */
	if (st == KIWI_MPA_ST_OK && ep->pol.ulpf)
		kiwi_mpa_frame_take_ulpf(&f);
	kiwi_cm_got_reply(ep, st, &f);
}

/* Under ep->lock: TCP connect finished, one way or the other. */
static void kiwi_cm_tcp_connected(struct kiwi_ep *ep)
{
	int err;

	if (READ_ONCE(ep->sock->sk->sk_state) != TCP_ESTABLISHED) {
		if (kiwi_cm_peer_closed(ep->sock, &err))
			kiwi_cm_connect_fail(ep, err, NULL);
		return;
	}
	err = kiwi_cm_send_request(ep);
	if (err) {
		kiwi_cm_connect_fail(ep, err, NULL);
		return;
	}
	kiwi_cm_count(ep->qp->ibqp.device, KIWI_STAT_MPA_REQ_SENT);
	kiwi_ep_set_state(ep, KIWI_EP_WAIT_REP);
	kiwi_cm_read_reply(ep);
}

/**
 * kiwi_cm_active_work - the initiator's state machine
 * @ep: an endpoint in CONNECTING or WAIT_REP, ep->lock held
 * @ev: KIWI_EV_* bits that arrived
 */
void kiwi_cm_active_work(struct kiwi_ep *ep, unsigned long ev)
{
	if (ev & BIT(KIWI_EV_ABORT)) {
		kiwi_cm_connect_fail(ep, -ECONNRESET, NULL);
		return;
	}
	if (ev & BIT(KIWI_EV_TIMEOUT)) {
		kiwi_cm_connect_fail(ep, -ETIMEDOUT, NULL);
		return;
	}
	if (ep->state == KIWI_EP_CONNECTING)
		kiwi_cm_tcp_connected(ep);
	else
		kiwi_cm_read_reply(ep);
}

/* Under ep->lock: the Request, encoded into ep->rbuf until it is sent. */
static int kiwi_cm_prepare_request(struct kiwi_ep *ep, struct iw_cm_id *cm_id,
				   const struct iw_cm_conn_param *param)
{
	int rv;

	kiwi_cm_policy(&ep->pol, cm_id->device, param->ird, param->ord);
	ep->rdmac_graceful = kiwi_cm_rdmac_graceful(cm_id->device);
	rv = kiwi_mpa_make_request(&ep->pol, param->private_data,
				   param->private_data_len, &ep->req);
	if (rv)
		return -EINVAL;
	rv = kiwi_mpa_frame_build(&ep->req, ep->rbuf, sizeof(ep->rbuf),
				  &ep->rlen);
	ep->req.pdata = NULL;
	ep->req.pdata_len = 0;
	return rv ? -EINVAL : 0;
}

/*
 * Under ep->lock: socket (TCP, or SCTP for ep->sctp_llp), bound to the
 * local address, connect started.
 */
static int kiwi_cm_start(struct kiwi_ep *ep, struct iw_cm_id *cm_id)
{
	struct sockaddr_storage *laddr = &cm_id->m_local_addr;
	struct sockaddr_storage *raddr = &cm_id->m_remote_addr;
	int alen = kiwi_cm_addr_len(raddr);
	struct socket *sock;
	int rv;

	if (!alen || laddr->ss_family != raddr->ss_family)
		return -EAFNOSUPPORT;
	rv = kiwi_cm_sock_open(cm_id, raddr->ss_family, ep->sctp_llp, &sock);
	if (rv)
		return rv;
	rv = kiwi_cm_bind_local(sock, laddr, alen);
	if (rv) {
		sock_release(sock);
		return rv;
	}
	kiwi_ep_sock_attach(ep, sock, NULL);
	rv = kernel_connect(sock, (struct sockaddr *)raddr, alen, O_NONBLOCK);
	if (rv && rv != -EINPROGRESS)
		return rv;
	return 0;
}

/**
 * kiwi_cm_connect - iw_connect: start an active connection
 * @cm_id: the id; iw_cm holds the QP of @param->qpn for it
 * @param: private data, IRD/ORD and QP number
 *
 * Process context. On success exactly one CONNECT_REPLY follows, at the
 * latest after mpa_timeout seconds.
 *
 * Return: 0, or a negative errno and no event.
 */
int kiwi_cm_connect(struct iw_cm_id *cm_id, struct iw_cm_conn_param *param)
{
	struct kiwi_qp *qp;
	struct kiwi_ep *ep;
	int rv;

	qp = kiwi_qp_lookup(to_kdev(cm_id->device), param->qpn, true);
	if (!qp)
		return -EINVAL;
	if (!kiwi_qp_caller_owns(qp)) {
		kiwi_qp_put(qp);
		return -EACCES;
	}
	ep = kiwi_ep_alloc();
	if (!ep) {
		kiwi_qp_put(qp);
		return -ENOMEM;
	}
	mutex_lock(&ep->lock);
	ep->ibdev = cm_id->device;
	/* Published before the check: a destroy either sees it or we see it. */
	WRITE_ONCE(ep->qp, qp);
	ep->sctp_llp = kiwi_cm_uses_sctp(cm_id->device);
	if (kiwi_qp_destroyed(qp))
		rv = -EINVAL;
	else if (ep->sctp_llp)
		rv = kiwi_cm_sctp_prepare(ep, cm_id, param);
	else
		rv = kiwi_cm_prepare_request(ep, cm_id, param);
	if (!rv)
		rv = kiwi_cm_start(ep, cm_id);
	if (rv) {
		kiwi_ep_get(ep);
		kiwi_cm_fail(ep, true);
		mutex_unlock(&ep->lock);
		kiwi_ep_put(ep);
		return rv;
	}
	kiwi_ep_set_cm_id(ep, cm_id);
	kiwi_ep_set_state(ep, KIWI_EP_CONNECTING);
	kiwi_ep_arm_timeout(ep, kiwi_cm_mpa_timeout(cm_id->device));
	kiwi_cm_count(cm_id->device, KIWI_STAT_CM_CONNECTS);
	kiwi_ep_queue(ep, KIWI_EV_STATE);
	mutex_unlock(&ep->lock);
	return 0;
}
