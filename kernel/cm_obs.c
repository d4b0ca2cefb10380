// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: what connection management shows an administrator: endpoint
 * states and MPA negotiation results as tracepoints (kiwi_trace.h), and
 * the device's connection counters (stats.h).
 *
 * An endpoint does not hold its device. Its device is known, and alive,
 * while the endpoint holds a QP (destroy_qp, which device removal runs,
 * waits for that reference) or listens (iw_destroy_listen, which device
 * removal runs, waits for the listener's lock); a responder's child still
 * reading its Request reaches the device through its listener.
 */
#include "cm_ep.h"
#include "kiwi_trace.h"

/* Under ep->lock: the endpoint's device while it is known, else NULL. */
static struct ib_device *kiwi_ep_ibdev(struct kiwi_ep *ep)
{
	if (ep->qp)
		return ep->qp->ibqp.device;
	if (ep->state == KIWI_EP_LISTEN && ep->cm_id)
		return ep->cm_id->device;
	return NULL;
}

/**
 * kiwi_ep_set_state - an endpoint enters @state
 * @ep: the endpoint, ep->lock held (or not yet reachable by anyone else)
 * @state: its new state
 */
void kiwi_ep_set_state(struct kiwi_ep *ep, enum kiwi_ep_state state)
{
	struct sockaddr_storage laddr = {}, raddr = {};
	enum kiwi_ep_state old = ep->state;

	/* Device removal reads it without the lock (kiwi_cm_remove_one()). */
	WRITE_ONCE(ep->state, state);
	if (!trace_kiwi_cm_state_enabled() || old == state)
		return;
	if (ep->sock)
		kiwi_cm_addrs(ep->sock, &laddr, &raddr);
	trace_kiwi_cm_state(kiwi_ep_ibdev(ep), ep, old, state, &laddr,
			    &raddr);
}

/* Count one connection management event of @ibdev. */
void kiwi_cm_count(struct ib_device *ibdev, enum kiwi_stat_id id)
{
	kiwi_dev_stat_inc(&to_kdev(ibdev)->stats, id);
}

/**
 * kiwi_cm_obs_reply - an initiator judged the Reply: count and trace it
 * @ep: the endpoint, ep->lock held, its QP held
 * @st: the parse or negotiation status; with KIWI_MPA_ST_OK
 *	ep->llp.mpa holds the agreed parameters
 */
void kiwi_cm_obs_reply(struct kiwi_ep *ep, enum kiwi_mpa_status st)
{
	struct ib_device *ibdev = ep->qp->ibqp.device;

	trace_kiwi_mpa_nego(ibdev, ep, true, st, &ep->llp.mpa);
	switch (st) {
	case KIWI_MPA_ST_OK:
		kiwi_cm_count(ibdev, KIWI_STAT_MPA_REP_RCVD);
		break;
	case KIWI_MPA_ST_REJECTED:
		kiwi_cm_count(ibdev, KIWI_STAT_MPA_REJ_RCVD);
		break;
	case KIWI_MPA_ST_IRD:
		kiwi_cm_count(ibdev, KIWI_STAT_MPA_IRD_REFUSED);
		fallthrough;
	default:
		kiwi_cm_count(ibdev, KIWI_STAT_MPA_BAD_FRAMES);
		break;
	}
}

/**
 * kiwi_cm_obs_get - the device a responder's child counts on
 * @ep: a child still reading its Request, its lock held
 *
 * The listener's lock, which nests inside the child's (as when the
 * Request is reported), keeps the device known until kiwi_cm_obs_put().
 *
 * Return: the device of the listener that took @ep, with the listener's
 * lock held; NULL with nothing held once the listener stopped listening.
 */
struct ib_device *kiwi_cm_obs_get(struct kiwi_ep *ep)
{
	struct kiwi_ep *l = ep->listener;
	struct ib_device *ibdev;

	if (!l)
		return NULL;
	mutex_lock(&l->lock);
	ibdev = kiwi_ep_ibdev(l);
	if (!ibdev)
		mutex_unlock(&l->lock);
	return ibdev;
}

/* Drop the listener's lock kiwi_cm_obs_get() took. */
void kiwi_cm_obs_put(struct kiwi_ep *ep)
{
	mutex_unlock(&ep->listener->lock);
}

/**
 * kiwi_cm_obs_request - a responder judged a whole Request
 * @ep: a child still reading its Request, its lock held
 * @st: the parse or negotiation status
 * @p: with KIWI_MPA_ST_OK, what the Reply would agree to
 *
 * A listener that stopped listening counts nothing.
 */
void kiwi_cm_obs_request(struct kiwi_ep *ep, enum kiwi_mpa_status st,
			 const struct kiwi_mpa_params *p)
{
	struct ib_device *ibdev = kiwi_cm_obs_get(ep);

	if (!ibdev)
		return;
	trace_kiwi_mpa_nego(ibdev, ep, false, st, p);
	kiwi_cm_count(ibdev, st == KIWI_MPA_ST_OK ? KIWI_STAT_MPA_REQ_RCVD :
						    KIWI_STAT_MPA_BAD_FRAMES);
	kiwi_cm_obs_put(ep);
}

/**
 * kiwi_cm_obs_pdata_refused - a responder rejected a Request for the size
 *	of its private data: count the rejecting Reply and say why
 * @ep: the child, its lock held
 * @len: the Request's private data octets
 */
void kiwi_cm_obs_pdata_refused(struct kiwi_ep *ep, u16 len)
{
	struct ib_device *ibdev = kiwi_cm_obs_get(ep);

	if (!ibdev)
		return;
	kiwi_cm_count(ibdev, KIWI_STAT_MPA_REJ_SENT);
	ibdev_info_ratelimited(ibdev,
			       "MPA Request with %u octets of private data rejected: iw_cm delivers at most %u\n",
			       len, KIWI_CM_PD_MAX);
	kiwi_cm_obs_put(ep);
}

/**
 * kiwi_cm_obs_ulpf_refused - a responder with the ULP framing draft-00
 *	profile rejected a Request without it: count the rejecting Reply and
 *	say why
 * @ep: the child, its lock held
 */
void kiwi_cm_obs_ulpf_refused(struct kiwi_ep *ep)
{
	struct ib_device *ibdev = kiwi_cm_obs_get(ep);

	if (!ibdev)
		return;
	kiwi_cm_count(ibdev, KIWI_STAT_MPA_REJ_SENT);
	ibdev_info_ratelimited(ibdev,
			       "MPA Request without the ULP framing draft-00 field refused: ulpf00 is on\n");
	kiwi_cm_obs_put(ep);
}

/**
 * kiwi_cm_obs_urgent - TCP urgent data arrived during MPA startup: count
 *	a bad startup frame and say why the connection ends
 * @ep: the endpoint, its lock held (an initiator holds its QP; a
 *	responder's child reaches its device through the listener)
 */
void kiwi_cm_obs_urgent(struct kiwi_ep *ep)
{
	static const char why[] =
		"TCP urgent data from the peer during MPA startup: connection closed";
	struct ib_device *ibdev;

	if (!ep->qp) {
		kiwi_cm_obs_child(ep, KIWI_STAT_MPA_BAD_FRAMES, why);
		return;
	}
	ibdev = ep->qp->ibqp.device;
	kiwi_cm_count(ibdev, KIWI_STAT_MPA_BAD_FRAMES);
	ibdev_info_ratelimited(ibdev, "%s\n", why);
}

/**
 * kiwi_cm_obs_child - count an event of a responder child still reading
 *	its startup, on its listener's device, and log why
 * @ep: the child, its lock held
 * @id: the counter
 * @why: a log line, or NULL
 */
void kiwi_cm_obs_child(struct kiwi_ep *ep, enum kiwi_stat_id id,
		       const char *why)
{
	struct ib_device *ibdev = kiwi_cm_obs_get(ep);

	if (!ibdev)
		return;
	kiwi_cm_count(ibdev, id);
	if (why)
		ibdev_info_ratelimited(ibdev, "%s\n", why);
	kiwi_cm_obs_put(ep);
}
