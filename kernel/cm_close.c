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
 *   sends our FIN after the queued octets, then wait for the peer's FIN up
 *   to mpa_timeout seconds, release the socket, CLOSE;
 * - abortive close (kiwi_ep_llp_close(ep, true), module unload): detach,
 *   release with SO_LINGER 0 (RST), CLOSE.
 */
#include <net/sock.h>

#include "cm_ep.h"

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

	kiwi_ep_set_cb_qp(ep, ep->qp);
	rv = kiwi_qp_llp_attach(ep->qp, ep, ep->sock, &ep->llp);
	if (rv)
		kiwi_ep_set_cb_qp(ep, NULL);
	return rv;
}

/* Under ep->lock: the engine lets go of the socket. */
static void kiwi_cm_detach(struct kiwi_ep *ep)
{
	if (!ep->cb_qp)
		return;
	kiwi_qp_llp_detach(ep->qp);
	kiwi_ep_set_cb_qp(ep, NULL);
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
	if (ep->qp) {
		kiwi_qp_put(ep->qp);
		ep->qp = NULL;
	}
	kiwi_ep_finish(ep);
}

/* Under ep->lock: the stream is gone; the cm_id hears CLOSE, last. */
static void kiwi_cm_closed(struct kiwi_ep *ep, bool abortive)
{
	kiwi_ep_sock_release(ep, abortive);
	if (ep->cm_id)
		kiwi_cm_event(ep, ep->cm_id, IW_CM_EVENT_CLOSE, 0, NULL);
	kiwi_cm_fail(ep, abortive);
}

/* Under ep->lock: our FIN goes after what is queued; wait for theirs. */
static void kiwi_cm_shutdown(struct kiwi_ep *ep)
{
	int err;

	kiwi_cm_detach(ep);
	if (kiwi_cm_peer_closed(ep->sock, &err)) {
		kiwi_cm_closed(ep, false);
		return;
	}
	kernel_sock_shutdown(ep->sock, SHUT_WR);
	kiwi_ep_set_state(ep, KIWI_EP_CLOSING);
	kiwi_ep_arm_timeout(ep, kiwi_cm_mpa_timeout(ep->qp->ibqp.device));
}

/**
 * kiwi_cm_connected_work - events of a connected endpoint
 * @ep: an endpoint in CONNECTED, ep->lock held
 * @ev: KIWI_EV_* bits that arrived
 */
void kiwi_cm_connected_work(struct kiwi_ep *ep, unsigned long ev)
{
	int err;

	if (ev & BIT(KIWI_EV_ABORT)) {
		kiwi_cm_detach(ep);
		kiwi_cm_closed(ep, true);
		return;
	}
	if (kiwi_cm_peer_closed(ep->sock, &err)) {
		kiwi_cm_detach(ep);
		kiwi_cm_event(ep, ep->cm_id, IW_CM_EVENT_DISCONNECT, 0, NULL);
		kiwi_cm_closed(ep, false);
		return;
	}
	if (ev & BIT(KIWI_EV_CLOSE))
		kiwi_cm_shutdown(ep);
}

/**
 * kiwi_cm_closing_work - waiting for the peer's FIN after ours
 * @ep: an endpoint in CLOSING, ep->lock held
 * @ev: KIWI_EV_* bits that arrived
 *
 * The peer's FIN or RST ends the wait; so do the timeout and an abort,
 * with a reset.
 */
void kiwi_cm_closing_work(struct kiwi_ep *ep, unsigned long ev)
{
	int err;

	if (ev & (BIT(KIWI_EV_ABORT) | BIT(KIWI_EV_TIMEOUT)))
		kiwi_cm_closed(ep, true);
	else if (kiwi_cm_peer_closed(ep->sock, &err))
		kiwi_cm_closed(ep, false);
}
