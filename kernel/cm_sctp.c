// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: connection management for DDP over SCTP (RFC 5043 draft;
 * Documentation/sctp.md), on the endpoints and state machine of cm_ep.c.
 *
 * One one-to-one SCTP socket per connection (and per listener) carries
 * the DDP Adaptation Layer Indication in its INIT or INIT-ACK. Once the
 * association is up, an endpoint whose peer did not indicate DDP is
 * aborted before any chunk is sent (draft 11.1; counter
 * sctp_no_adaptation). Then one DDP Stream Session runs on SCTP stream 0:
 *
 *   initiator                              responder
 *   Initiate (DDP-SSN 0, connect's pd) ->  CONNECT_REQUEST to the listener
 *   CONNECT_REPLY                      <-  Accept or Reject (DDP-SSN 0, pd)
 *
 * An Initiate that cannot reach the ULP (iw_cm's backlog is full, its
 * listener is going, its association came while the listener's backlog
 * of associations still waiting for their Initiate was full, or its
 * private data is longer than an iw_cm event carries) is answered with a
 * Session Terminate, never a Reject, which only the ULP may send (draft
 * 5.2.3, 6.4). Beyond twice that backlog an association is shut down
 * unread, which bounds what a flood of associations can hold. The answer is bounded by
 * mpa_timeout, as for MPA. After it the association belongs to the QP
 * (llp_sctp.c); the side that closes first sends a Session Terminate
 * before the SCTP SHUTDOWN (cm_close.c).
 */
#include <net/sock.h>
#include <net/tcp_states.h>

#include "cm_ep.h"
#include "llp_sctp.h"

/* Private data of a Session Control message, as iw_cm events carry it. */
static void kiwi_cm_sctp_frame(struct kiwi_mpa_frame *f, const u8 *pd,
			       u32 len)
{
	memset(f, 0, sizeof(*f));
	f->pdata = pd;
	f->pdata_len = len;
}

/* A one-to-one SCTP socket of @family in @net, DDP-enabled. */
int kiwi_cm_sctp_sock_create(struct net *net, int family,
			     struct socket **sockp)
{
	struct socket *sock;
	int rv;

	rv = sock_create_kern(net, family, SOCK_STREAM, IPPROTO_SCTP, &sock);
	if (rv)
		return rv;
	rv = kiwi_sctp_sock_prepare(sock);
	if (rv) {
		sock_release(sock);
		return rv;
	}
	*sockp = sock;
	return 0;
}

/*
 * Settings that only mean something to MPA cannot be honoured on SCTP:
 * refused visibly rather than ignored.
 */
int kiwi_cm_sctp_settings_ok(struct ib_device *ibdev)
{
	const struct kiwi_settings *s = &to_kdev(ibdev)->settings;

	if (!kiwi_setting(s, KIWI_SET_MPA_MARKERS) &&
	    !kiwi_setting(s, KIWI_SET_MPA_CRC_OFF) &&
	    !kiwi_setting(s, KIWI_SET_ULPF00))
		return 0;
	ibdev_notice_ratelimited(ibdev,
				 "llp=sctp: mpa_markers, mpa_crc_off and ulpf00 are TCP framing settings with no meaning on SCTP; set them to N\n");
	return -EOPNOTSUPP;
}

/*
 * An endpoint's association state, with the socket it reads; @responder:
 * a listener's child (kiwi_sctp_conn_alloc()).
 */
int kiwi_cm_sctp_ep_init(struct kiwi_ep *ep, bool responder)
{
	ep->sctp = kiwi_sctp_conn_alloc(responder);
	return ep->sctp ? 0 : -ENOMEM;
}

/*
 * Under ep->lock: count @id on the endpoint's device and log @why (if
 * not NULL): through its QP, or a responder child's listener.
 */
static void kiwi_cm_sctp_note(struct kiwi_ep *ep, enum kiwi_stat_id id,
			      const char *why)
{
	struct ib_device *ibdev;

	if (!ep->qp) {
		kiwi_cm_obs_child(ep, id, why);
		return;
	}
	ibdev = ep->qp->ibqp.device;
	kiwi_cm_count(ibdev, id);
	if (why)
		ibdev_info_ratelimited(ibdev, "%s\n", why);
}

/*
 * Under ep->lock: the association is up. Without the peer's DDP
 * indication the association is aborted (logged, counted).
 */
static int kiwi_cm_sctp_established(struct kiwi_ep *ep)
{
	int rv = kiwi_sctp_peer_check(ep->sctp);

	if (rv == -EPROTO)
		kiwi_cm_sctp_note(ep, KIWI_STAT_SCTP_NO_ADAPT,
				  "SCTP association without the DDP adaptation indication aborted");
	return rv;
}

/*
 * Under ep->lock: refuse an Initiate or end a session, Terminate; @why
 * (or NULL) is logged with the count.
 */
static void kiwi_cm_sctp_terminate(struct kiwi_ep *ep, const char *why)
{
	if (!kiwi_sctp_send_ssc(ep->sctp, ep->sctp->tx_ssn++,
				KIWI_SCTP_SSC_TERMINATE, NULL, 0))
		kiwi_cm_sctp_note(ep, KIWI_STAT_SCTP_SSC_TERM_SENT, why);
}

/*
 * Under ep->lock: the next chunk of the session, as kiwi_sctp_next(),
 * which counts on the QP's device, or on a responder child's listener's
 * (whose lock is held meanwhile; one that stopped listening counts
 * nothing). When kiwi_sctp_next() gave the worker back after chunks on
 * other streams, the endpoint's work reads on later: 0, not arrived yet.
 */
static int kiwi_cm_sctp_next(struct kiwi_ep *ep, struct kiwi_sctp_msg *m)
{
	struct ib_device *ibdev = NULL;
	int rv;

	if (ep->qp) {
		rv = kiwi_sctp_next(ep->sctp, m, ep->qp->ibqp.device, NULL);
	} else {
		ibdev = kiwi_cm_obs_get(ep);
		rv = kiwi_sctp_next(ep->sctp, m, ibdev, NULL);
		if (ibdev)
			kiwi_cm_obs_put(ep);
	}
	if (rv != -EAGAIN)
		return rv;
	kiwi_ep_queue(ep, KIWI_EV_DATA);
	return 0;
}

/* --- initiator --- */

/* Under ep->lock: CONNECT_REPLY with @status, then close. */
static void kiwi_cm_sctp_connect_end(struct kiwi_ep *ep, int status,
				     const struct kiwi_mpa_frame *f,
				     bool abortive)
{
	kiwi_ep_disarm_timeout(ep);
	kiwi_cm_count(ep->qp->ibqp.device, KIWI_STAT_CM_CONNECT_ERRORS);
	kiwi_cm_event(ep, ep->cm_id, IW_CM_EVENT_CONNECT_REPLY, status, f);
	kiwi_cm_fail(ep, abortive);
}

/**
 * kiwi_cm_sctp_prepare - iw_connect over SCTP: the Initiate to send
 * @ep: the new endpoint, ep->lock held
 * @cm_id: the id
 * @param: private data (at most 255 octets: iw_cm's u8), IRD/ORD
 *
 * SCTP has no IRD/ORD negotiation: the QP gets what the ULP asked for,
 * within kiwi's limits.
 *
 * Return: 0 or a negative errno.
 */
int kiwi_cm_sctp_prepare(struct kiwi_ep *ep, struct iw_cm_id *cm_id,
			 const struct iw_cm_conn_param *param)
{
	int rv = kiwi_cm_sctp_settings_ok(cm_id->device);

	if (!rv)
		rv = kiwi_cm_sctp_ep_init(ep, false);
	if (rv)
		return rv;
	ep->llp.mpa.ird = kiwi_cm_ird(param->ird);
	ep->llp.mpa.ord = min_t(u32, param->ord, KIWI_MAX_ORD);
	rv = kiwi_sctp_ssc_encode(ep->rbuf, sizeof(ep->rbuf), 0,
				  KIWI_SCTP_SSC_INITIATE, param->private_data,
				  param->private_data_len);
	if (rv < 0)
		return -EINVAL;
	ep->rlen = rv;
	return 0;
}

/* Under ep->lock: the association is up: check it, send the Initiate. */
static void kiwi_cm_sctp_connected(struct kiwi_ep *ep)
{
	int err;

	if (READ_ONCE(ep->sock->sk->sk_state) != TCP_ESTABLISHED) {
		if (kiwi_cm_peer_closed(ep->sock, &err))
			kiwi_cm_sctp_connect_end(ep, err, NULL, true);
		return;
	}
	err = kiwi_cm_sctp_established(ep);
	if (err) {
		kiwi_cm_sctp_connect_end(ep, err, NULL, true);
		return;
	}
	err = kiwi_sctp_send_ssc(ep->sctp, 0, KIWI_SCTP_SSC_INITIATE,
				 ep->rbuf + KIWI_SCTP_SSC_HDR_LEN,
				 ep->rlen - KIWI_SCTP_SSC_HDR_LEN);
	ep->rlen = 0;
	if (err) {
		kiwi_cm_sctp_connect_end(ep, err, NULL, true);
		return;
	}
	ep->sctp->tx_ssn = 1;
	kiwi_cm_count(ep->qp->ibqp.device, KIWI_STAT_MPA_REQ_SENT);
	kiwi_ep_set_state(ep, KIWI_EP_WAIT_REP);
}

/*
 * Under ep->lock: the responder accepted; the QP takes the association.
 * No DDP Segment of ours goes before this, so none can arrive before the
 * Initiate (SCTP-019).
 */
static void kiwi_cm_sctp_accepted(struct kiwi_ep *ep,
				  const struct kiwi_mpa_frame *f)
{
	struct kiwi_llp_params *llp = &ep->llp;

	llp->initiator = true;
	llp->sctp = ep->sctp;
	if (kiwi_cm_attach(ep)) {
		kiwi_cm_sctp_connect_end(ep, -EINVAL, NULL, true);
		return;
	}
	kiwi_ep_disarm_timeout(ep);
	kiwi_ep_set_state(ep, KIWI_EP_CONNECTED);
	kiwi_cm_count(ep->qp->ibqp.device, KIWI_STAT_MPA_REP_RCVD);
	kiwi_cm_event(ep, ep->cm_id, IW_CM_EVENT_CONNECT_REPLY, 0, f);
}

/*
 * Under ep->lock: the responder's answer, in DDP-SSN order. Its private
 * data is copied to ep->rbuf and the chunk consumed before the QP, which
 * reads the association from then on, is attached.
 */
static void kiwi_cm_sctp_answer(struct kiwi_ep *ep,
				const struct kiwi_sctp_msg *m)
{
	struct kiwi_mpa_frame f;
	struct kiwi_sctp_ssc ssc;

	if (m->ppid != KIWI_SCTP_PPID_SSC ||
	    kiwi_sctp_ssc_decode(&ssc, m->data, m->len)) {
		kiwi_cm_sctp_connect_end(ep, -EPROTO, NULL, true);
		return;
	}
	memcpy(ep->rbuf, ssc.pd, ssc.pd_len);
	ssc.pd = ep->rbuf;
	kiwi_sctp_consumed(ep->sctp);
	if (ssc.pd_len > KIWI_CM_PD_MAX &&
	    (ssc.fn == KIWI_SCTP_SSC_ACCEPT || ssc.fn == KIWI_SCTP_SSC_REJECT)) {
		kiwi_cm_sctp_note(ep, KIWI_STAT_MPA_BAD_FRAMES,
				  "SCTP Session Accept or Reject with private data over the 255 octets iw_cm delivers refused");
		kiwi_cm_sctp_terminate(ep, NULL);
		kiwi_cm_sctp_connect_end(ep, -EMSGSIZE, NULL, false);
		return;
	}
	kiwi_cm_sctp_frame(&f, ssc.pd, ssc.pd_len);
	switch (ssc.fn) {
	case KIWI_SCTP_SSC_ACCEPT:
		kiwi_cm_sctp_accepted(ep, &f);
		return;
	case KIWI_SCTP_SSC_REJECT:
		kiwi_cm_count(ep->qp->ibqp.device, KIWI_STAT_MPA_REJ_RCVD);
		kiwi_cm_sctp_connect_end(ep, -ECONNREFUSED, &f, false);
		return;
	case KIWI_SCTP_SSC_TERMINATE:
		/* Refused before the ULP saw it (draft 6.4). */
		kiwi_cm_sctp_connect_end(ep, -ECONNREFUSED, NULL, false);
		return;
	default:
		kiwi_cm_sctp_connect_end(ep, -EPROTO, NULL, true);
		return;
	}
}

static void kiwi_cm_sctp_read_answer(struct kiwi_ep *ep)
{
	struct kiwi_sctp_msg m;
	int rv, err;

	rv = kiwi_cm_sctp_next(ep, &m);
	if (rv == 0) {
		if (kiwi_cm_peer_closed(ep->sock, &err))
			kiwi_cm_sctp_connect_end(ep, err, NULL, true);
		return;
	}
	if (rv < 0) {
		kiwi_cm_sctp_connect_end(ep, rv == -ECONNRESET ? rv : -EPROTO,
					 NULL, true);
		return;
	}
	kiwi_cm_sctp_answer(ep, &m);
}

/**
 * kiwi_cm_sctp_active_work - the SCTP initiator's state machine
 * @ep: an endpoint in CONNECTING or WAIT_REP, ep->lock held
 * @ev: KIWI_EV_* bits that arrived
 */
void kiwi_cm_sctp_active_work(struct kiwi_ep *ep, unsigned long ev)
{
	if (ev & BIT(KIWI_EV_ABORT)) {
		kiwi_cm_sctp_connect_end(ep, -ECONNRESET, NULL, true);
		return;
	}
	if (ev & BIT(KIWI_EV_TIMEOUT)) {
		kiwi_cm_sctp_connect_end(ep, -ETIMEDOUT, NULL, true);
		return;
	}
	if (ep->state == KIWI_EP_CONNECTING)
		kiwi_cm_sctp_connected(ep);
	if (ep->state == KIWI_EP_WAIT_REP)
		kiwi_cm_sctp_read_answer(ep);
}

/* --- responder --- */

/* Under ep->lock: the Initiate, in DDP-SSN order, goes to the ULP. */
static void kiwi_cm_sctp_initiate(struct kiwi_ep *ep,
				  const struct kiwi_sctp_msg *m)
{
	struct kiwi_mpa_frame f;
	struct kiwi_sctp_ssc ssc;

	if (m->ppid != KIWI_SCTP_PPID_SSC ||
	    kiwi_sctp_ssc_decode(&ssc, m->data, m->len) ||
	    ssc.fn != KIWI_SCTP_SSC_INITIATE) {
		kiwi_cm_sctp_note(ep, KIWI_STAT_MPA_BAD_FRAMES, NULL);
		kiwi_cm_fail(ep, true);
		return;
	}
	ep->sctp->tx_ssn = 0;
	if (test_bit(KIWI_EPF_OVER_BACKLOG, &ep->flags)) {
		kiwi_cm_sctp_terminate(ep,
				       "SCTP Session Initiate beyond the listener's backlog refused with a Session Terminate");
		kiwi_cm_fail(ep, false);
		return;
	}
	if (ssc.pd_len > KIWI_CM_PD_MAX) {
		kiwi_cm_sctp_note(ep, KIWI_STAT_MPA_BAD_FRAMES,
				  "SCTP Session Initiate with private data over the 255 octets iw_cm delivers refused");
		kiwi_cm_sctp_terminate(ep, NULL);
		kiwi_cm_fail(ep, false);
		return;
	}
	/* Kept in ep->rbuf for the event (the chunk's buffer is reused). */
	memcpy(ep->rbuf, ssc.pd, ssc.pd_len);
	kiwi_cm_sctp_frame(&f, ep->rbuf, ssc.pd_len);
	ep->llp.mpa.ird = KIWI_MPA_IRD_ORD_NONE;
	ep->llp.mpa.ord = KIWI_MPA_IRD_ORD_NONE;
	kiwi_sctp_consumed(ep->sctp);
	kiwi_cm_sctp_note(ep, KIWI_STAT_MPA_REQ_RCVD, NULL);
	if (kiwi_cm_report_request(ep, &f)) {
		kiwi_cm_sctp_terminate(ep, NULL);
		kiwi_cm_fail(ep, false);
	}
}

/* Under ep->lock (WAIT_REQ): check the association, read the Initiate. */
void kiwi_cm_sctp_read_initiate(struct kiwi_ep *ep)
{
	struct kiwi_sctp_msg m;
	int rv, err;

	if (!ep->sctp->mulpdu && kiwi_cm_sctp_established(ep)) {
		kiwi_cm_fail(ep, true);
		return;
	}
	rv = kiwi_cm_sctp_next(ep, &m);
	if (rv == 0) {
		if (kiwi_cm_peer_closed(ep->sock, &err))
			kiwi_cm_fail(ep, true);
		return;
	}
	if (rv < 0) {
		if (rv != -ECONNRESET)
			kiwi_cm_sctp_note(ep, KIWI_STAT_MPA_BAD_FRAMES, NULL);
		kiwi_cm_fail(ep, true);
		return;
	}
	kiwi_cm_sctp_initiate(ep, &m);
}

/**
 * kiwi_cm_sctp_accept_locked - iw_accept: attach the QP, send the Accept
 * @ep: the child in RECVD_REQ, ep->lock held
 * @cm_id: the connection's id
 * @param: private data, IRD/ORD and QP number
 *
 * Return: 0 (ESTABLISHED reported) or a negative errno.
 */
int kiwi_cm_sctp_accept_locked(struct kiwi_ep *ep, struct iw_cm_id *cm_id,
			       struct iw_cm_conn_param *param)
{
	struct kiwi_qp *qp;
	int rv;

	if (ep->state != KIWI_EP_RECVD_REQ)
		return -ECONNRESET;
	kiwi_ep_disarm_timeout(ep);
	rv = kiwi_cm_take_qp(ep, cm_id, param->qpn);
	if (rv)
		return rv;
	qp = ep->qp;
	ep->llp.mpa.ird = kiwi_cm_ird(param->ird);
	ep->llp.mpa.ord = min_t(u32, param->ord, KIWI_MAX_ORD);
	ep->llp.initiator = false;
	ep->llp.sctp = ep->sctp;
	/* DDP-SSN 0 is the Accept; TX sends nothing before it went. */
	ep->sctp->tx_ssn = 1;
	rv = kiwi_cm_attach(ep);
	if (rv)
		return rv;
	rv = kiwi_sctp_send_ssc(ep->sctp, 0, KIWI_SCTP_SSC_ACCEPT,
				param->private_data, param->private_data_len);
	if (rv)
		return rv;
	kiwi_cm_count(cm_id->device, KIWI_STAT_MPA_REP_SENT);
	kiwi_qp_llp_reply_sent(qp);
	kiwi_ep_set_cm_id(ep, cm_id);
	kiwi_ep_set_state(ep, KIWI_EP_CONNECTED);
	kiwi_cm_event(ep, cm_id, IW_CM_EVENT_ESTABLISHED, 0, NULL);
	return 0;
}

/* Under ep->lock: iw_reject, the ULP's Reject with its private data. */
void kiwi_cm_sctp_reject_locked(struct kiwi_ep *ep, const void *pdata,
				u8 pdata_len)
{
	if (ep->state == KIWI_EP_RECVD_REQ)
		kiwi_sctp_send_ssc(ep->sctp, 0, KIWI_SCTP_SSC_REJECT, pdata,
				   pdata_len);
}

/* Under ep->lock: a connected endpoint's graceful close: Terminate. */
void kiwi_cm_sctp_end_session(struct kiwi_ep *ep)
{
	if (ep->sctp && !ep->sctp->peer_term &&
	    !test_bit(KIWI_EPF_PEER_TERM, &ep->flags))
		kiwi_cm_sctp_terminate(ep, NULL);
}

/**
 * kiwi_ep_sctp_peer_term - the peer's Session Terminate was delivered
 * @ep: the endpoint of the attached QP (RX of llp_sctp.c)
 *
 * Any context. The CM ends the connection as for a peer's FIN.
 */
void kiwi_ep_sctp_peer_term(struct kiwi_ep *ep)
{
	set_bit(KIWI_EPF_PEER_TERM, &ep->flags);
	kiwi_ep_queue(ep, KIWI_EV_STATE);
}

/**
 * kiwi_ep_sctp_rx_ended - RX read everything before the association's end
 * @ep: the endpoint of the attached QP (RX of llp_sctp.c)
 *
 * Any context. The CM looks at the association again: a peer's SHUTDOWN
 * counts only once what came before it was read.
 */
void kiwi_ep_sctp_rx_ended(struct kiwi_ep *ep)
{
	kiwi_ep_queue(ep, KIWI_EV_STATE);
}
