// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: connected endpoints and their end.
 *
 * A connected ep reports IW_CM_EVENT_CLOSE exactly once, preceded by
 * IW_CM_EVENT_DISCONNECT when the peer ended the stream (FIN or RST):
 * - peer FIN/RST: detach the QP, DISCONNECT, release the socket, CLOSE;
 * - graceful local close (kiwi_ep_llp_close(ep, false), e.g. after a
 *   disconnect or a Terminate): detach the QP (the engine stops using the
 *   socket; what it queued is in the socket), shutdown(SHUT_WR) so TCP
 *   sends our FIN after the queued octets, drop the QP and report CLOSE at
 *   once; the socket then waits for the peer's FIN alone (CLOSING), up to
 *   mpa_timeout seconds, reading and dropping what still arrives;
 * - a graceful close the QP began (SQD, or a Terminate queued after a
 *   local error: kiwi_ep_llp_drain()) that is not asked for within
 *   drain_timeout seconds is made abortive;
 * - abortive close (kiwi_ep_llp_close(ep, true), a destroyed QP, device
 *   removal, module unload): detach, release with SO_LINGER 0 (RST),
 *   CLOSE; but an attached QP that goes to ERR or is destroyed closes
 *   gracefully as above when TX stopped between frames: only a stream
 *   cut inside a frame is reset.
 */
#include <net/sock.h>

#include "cm_ep.h"
#include "llp.h"
#include "llp_sctp.h"

/**
 * kiwi_cm_attach - hand the established stream to the QP
 * @ep: ep->lock held; ep->qp, ep->sock and ep->llp set
 *
 * The socket callbacks forward to the QP from before the attach on: the
 * engine ignores them until it is ready and then reads what is queued.
 *
 * Return: 0 or kiwi_qp_llp_attach()'s error.
 */
int kiwi_cm_attach(struct kiwi_ep *ep)
{
	int rv;

	if (ep->sctp_llp)
		ep->llp.ops = &kiwi_llp_sctp;
	else if (ep->llp.mpa.ulpf)
		ep->llp.ops = &kiwi_llp_ulpf_tcp;
	else
		ep->llp.ops = &kiwi_llp_mpa_tcp;
	kiwi_ep_set_cb_qp(ep, ep->qp);
	rv = kiwi_qp_llp_attach(ep->qp, ep, ep->sock, &ep->llp);
	if (rv)
		kiwi_ep_set_cb_qp(ep, NULL);
	return rv;
}

/*
 * Under ep->lock: the engine lets go of the socket. Returns true if the
 * stream ends between frames (kiwi_qp_llp_detach()).
 */
static bool kiwi_cm_detach(struct kiwi_ep *ep)
{
	bool whole;

	if (!ep->cb_qp)
		return true;
	whole = kiwi_qp_llp_detach(ep->qp);
	kiwi_ep_set_cb_qp(ep, NULL);
	return whole;
}

/* Under ep->lock: the QP reference goes (the QP is detached or never was). */
static void kiwi_cm_put_qp(struct kiwi_ep *ep)
{
	struct kiwi_qp *qp = ep->qp;

	if (!qp)
		return;
	WRITE_ONCE(ep->qp, NULL);
	kiwi_qp_put(qp);
}

/**
 * kiwi_cm_fail - release everything without reporting anything more
 * @ep: ep->lock held; the caller holds a reference besides the ep's own
 * @abortive: reset the TCP connection instead of closing it with a FIN
 */
void kiwi_cm_fail(struct kiwi_ep *ep, bool abortive)
{
	kiwi_cm_detach(ep);
	kiwi_ep_sock_release(ep, abortive);
	kiwi_ep_drop_cm_id(ep);
	kiwi_cm_put_qp(ep);
	kiwi_ep_finish(ep);
}

/* Under ep->lock: the QP and the cm_id let go; the cm_id hears CLOSE. */
static void kiwi_cm_report_close(struct kiwi_ep *ep)
{
	kiwi_cm_put_qp(ep);
	if (ep->cm_id)
		kiwi_cm_event(ep, ep->cm_id, IW_CM_EVENT_CLOSE, 0, NULL);
	kiwi_ep_drop_cm_id(ep);
}

/* Under ep->lock: the stream is gone; the cm_id hears CLOSE, last. */
static void kiwi_cm_closed(struct kiwi_ep *ep, bool abortive)
{
	kiwi_ep_sock_release(ep, abortive);
	kiwi_cm_report_close(ep);
	kiwi_cm_fail(ep, abortive);
}

/* Under ep->lock (CLOSING): drop what arrives; the peer's FIN ends it. */
static void kiwi_cm_closing_read(struct kiwi_ep *ep)
{
	int err;

	if (ep->sctp ? kiwi_sctp_discard(ep->sctp) : kiwi_cm_discard(ep->sock))
		kiwi_ep_queue(ep, KIWI_EV_DATA);
	if (kiwi_cm_peer_closed(ep->sock, &err))
		kiwi_cm_closed(ep, false);
}

/*
 * Under ep->lock: the graceful close the QP asked for. The QP is detached
 * (what it queued, a Terminate too, is in the socket) and our FIN goes
 * after it; a stream TX left inside a frame is reset instead. The QP,
 * iw_cm (CLOSE) and so destroy_qp, rdma_destroy_id and device removal are
 * done with the connection now; the socket waits for the peer's FIN on
 * its own, up to mpa_timeout seconds, reading and dropping what the peer
 * still sends.
 */
static void kiwi_cm_shutdown(struct kiwi_ep *ep)
{
	unsigned int timeout;
	int err;

	if (!kiwi_cm_detach(ep)) {
		kiwi_cm_closed(ep, true);
		return;
	}
	if (kiwi_cm_peer_closed(ep->sock, &err)) {
		kiwi_cm_closed(ep, false);
		return;
	}
	kiwi_cm_sctp_end_session(ep);
	kernel_sock_shutdown(ep->sock, SHUT_WR);
	timeout = kiwi_cm_mpa_timeout(ep->qp->ibqp.device);
	kiwi_ep_set_state(ep, KIWI_EP_CLOSING);
	kiwi_cm_report_close(ep);
	kiwi_ep_arm_timeout(ep, timeout);
	kiwi_cm_closing_read(ep);
}

/* Under ep->lock: the QP began a graceful close; bound it once. */
static void kiwi_cm_drain(struct kiwi_ep *ep)
{
	if (ep->draining)
		return;
	ep->draining = true;
	kiwi_ep_arm_timeout(ep, kiwi_cm_drain_timeout(ep->qp->ibqp.device));
}

/*
 * Under ep->lock, the peer's FIN seen. TCP reports a FIN (sk_state_change)
 * before the octets that came with it (sk_data_ready), so this work may
 * run in between: the QP reads what is still queued before it lets go of
 * the stream, or the last message before the FIN would be lost.
 */
static void kiwi_cm_read_rest(struct kiwi_ep *ep)
{
	struct sock *sk = ep->sock->sk;

	if (!ep->cb_qp || sk->sk_protocol != IPPROTO_TCP)
		return;
	lock_sock(sk);
	read_lock_bh(&sk->sk_callback_lock);
	kiwi_qp_rx_read_rest(ep->cb_qp, sk);
	read_unlock_bh(&sk->sk_callback_lock);
	release_sock(sk);
}

/*
 * Under ep->lock: the QP asked for an abort (it went to ERR, is being
 * destroyed, or failed). The stream still ends with our FIN if TX stopped
 * between frames, as siw's does: a reset throws away what TCP still holds,
 * and a Send that completed (handed to TCP) must reach the peer although
 * its sender exits, destroys its QP or calls ib_drain_qp() right after.
 * Only a stream cut inside a frame is reset (kiwi_cm_shutdown()).
 */
static void kiwi_cm_abort(struct kiwi_ep *ep)
{
	if (ep->cb_qp) {
		kiwi_cm_shutdown(ep);
		return;
	}
	kiwi_cm_closed(ep, true);
}

/**
 * kiwi_cm_connected_work - events of a connected endpoint
 * @ep: an endpoint in CONNECTED, ep->lock held
 * @ev: KIWI_EV_* bits that arrived
 *
 * A graceful close that did not finish within drain_timeout (the timeout
 * is armed only then) resets the connection; an abort resets it only if
 * TX stopped inside a frame (kiwi_cm_abort()).
 */
void kiwi_cm_connected_work(struct kiwi_ep *ep, unsigned long ev)
{
	int err;

	if ((ev & BIT(KIWI_EV_TIMEOUT)) && ep->draining) {
		kiwi_cm_detach(ep);
		kiwi_cm_closed(ep, true);
		return;
	}
	if (ev & BIT(KIWI_EV_ABORT)) {
		kiwi_cm_abort(ep);
		return;
	}
	if (kiwi_cm_peer_closed(ep->sock, &err) ||
	    test_bit(KIWI_EPF_PEER_TERM, &ep->flags)) {
		kiwi_cm_read_rest(ep);
		kiwi_cm_detach(ep);
		kiwi_cm_event(ep, ep->cm_id, IW_CM_EVENT_DISCONNECT, 0, NULL);
		kiwi_cm_closed(ep, false);
		return;
	}
	if (ev & BIT(KIWI_EV_CLOSE))
		kiwi_cm_shutdown(ep);
	else if (ev & BIT(KIWI_EV_DRAIN))
		kiwi_cm_drain(ep);
}

/**
 * kiwi_cm_closing_work - waiting for the peer's FIN after ours
 * @ep: an endpoint in CLOSING, ep->lock held; no QP, no cm_id any more
 * @ev: KIWI_EV_* bits that arrived
 *
 * The peer's FIN or RST ends the wait; so do the timeout and an abort
 * (module unload), with a reset.
 */
void kiwi_cm_closing_work(struct kiwi_ep *ep, unsigned long ev)
{
	if (ev & (BIT(KIWI_EV_ABORT) | BIT(KIWI_EV_TIMEOUT)))
		kiwi_cm_closed(ep, true);
	else
		kiwi_cm_closing_read(ep);
}
