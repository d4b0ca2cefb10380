// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: CM endpoint lifetime, socket callbacks, event delivery and the CM
 * workqueue.
 *
 * Every endpoint is on a global list so module unload can abort the ones
 * that outlive their devices (a graceful close waiting for the peer's FIN,
 * a Request whose CONNECT_REQUEST iw_cm dropped) and wait for all of them
 * before the workqueue goes.
 */
#include <linux/kmod.h>
#include <linux/slab.h>
#include <net/sock.h>

#include "cm_ep.h"
#include "llp_sctp.h"
#include "kiwi_trace.h"

static struct workqueue_struct *kiwi_cm_wq;
static LIST_HEAD(kiwi_eps);
/* Protects kiwi_eps; the last kiwi_ep_put() may run in any context. */
static DEFINE_SPINLOCK(kiwi_eps_lock);
static DECLARE_WAIT_QUEUE_HEAD(kiwi_eps_wait);

static void kiwi_ep_work(struct work_struct *work);
static void kiwi_ep_timeout(struct work_struct *work);

struct kiwi_ep *kiwi_ep_alloc(void)
{
	struct kiwi_ep *ep = kzalloc(sizeof(*ep), GFP_KERNEL);

	if (!ep)
		return NULL;
	kref_init(&ep->ref);
	mutex_init(&ep->lock);
	INIT_WORK(&ep->work, kiwi_ep_work);
	INIT_DELAYED_WORK(&ep->timeout, kiwi_ep_timeout);
	INIT_LIST_HEAD(&ep->child_entry);
	INIT_LIST_HEAD(&ep->children);
	INIT_LIST_HEAD(&ep->port_entry);
	INIT_LIST_HEAD(&ep->members);
	spin_lock_init(&ep->child_lock);
	spin_lock_irq(&kiwi_eps_lock);
	list_add_tail(&ep->all_entry, &kiwi_eps);
	spin_unlock_irq(&kiwi_eps_lock);
	return ep;
}

/* Free @ep, already off the list of endpoints. */
static void kiwi_ep_free(struct kiwi_ep *ep)
{
	kiwi_sctp_conn_free(ep->sctp);
	mutex_destroy(&ep->lock);
	kfree(ep);
	wake_up(&kiwi_eps_wait);
}

/* The last reference: everything else was released on the way to CLOSED. */
static void kiwi_ep_release(struct kref *ref)
{
	struct kiwi_ep *ep = container_of(ref, struct kiwi_ep, ref);
	unsigned long flags;

	spin_lock_irqsave(&kiwi_eps_lock, flags);
	list_del(&ep->all_entry);
	spin_unlock_irqrestore(&kiwi_eps_lock, flags);
	kiwi_ep_free(ep);
}

/* As kiwi_ep_release(), for a put made under kiwi_eps_lock. */
static void kiwi_ep_release_listed(struct kref *ref)
{
	struct kiwi_ep *ep = container_of(ref, struct kiwi_ep, ref);

	lockdep_assert_held(&kiwi_eps_lock);
	list_del(&ep->all_entry);
	kiwi_ep_free(ep);
}

void kiwi_ep_get(struct kiwi_ep *ep)
{
	kref_get(&ep->ref);
}

/* Any context: the last put only frees memory. */
void kiwi_ep_put(struct kiwi_ep *ep)
{
	kref_put(&ep->ref, kiwi_ep_release);
}

/**
 * kiwi_ep_queue - note an event and run the endpoint's work
 * @ep: the endpoint; the caller holds a reference
 * @event: KIWI_EV_*
 *
 * Any context. The queued work holds its own reference.
 */
void kiwi_ep_queue(struct kiwi_ep *ep, int event)
{
	set_bit(event, &ep->events);
	kiwi_ep_get(ep);
	if (!queue_work(kiwi_cm_wq, &ep->work))
		kiwi_ep_put(ep);
}

void kiwi_ep_llp_close(struct kiwi_ep *ep, bool abortive)
{
	kiwi_ep_queue(ep, abortive ? KIWI_EV_ABORT : KIWI_EV_CLOSE);
}

void kiwi_ep_llp_drain(struct kiwi_ep *ep)
{
	kiwi_ep_queue(ep, KIWI_EV_DRAIN);
}

/* Under ep->lock: (re)start the timeout; it holds a reference. */
void kiwi_ep_arm_timeout(struct kiwi_ep *ep, unsigned int secs)
{
	kiwi_ep_disarm_timeout(ep);
	ep->timeout_due = jiffies + secs * HZ;
	ep->timeout_armed = true;
	kiwi_ep_get(ep);
	if (!queue_delayed_work(kiwi_cm_wq, &ep->timeout, secs * HZ))
		kiwi_ep_put(ep);
}

/*
 * Under ep->lock. An expiry already running cannot be cancelled: it sets
 * KIWI_EV_TIMEOUT later, which kiwi_ep_take_events() then drops.
 */
void kiwi_ep_disarm_timeout(struct kiwi_ep *ep)
{
	ep->timeout_armed = false;
	if (cancel_delayed_work(&ep->timeout))
		kiwi_ep_put(ep);
	clear_bit(KIWI_EV_TIMEOUT, &ep->events);
}

/*
 * Under ep->lock: the events that arrived, less a KIWI_EV_TIMEOUT from an
 * expiry that was disarmed or re-armed while it ran. The delayed work runs
 * no sooner than timeout_due (set before it was queued), so an expiry of
 * the timeout armed now never finds it ahead.
 */
static unsigned long kiwi_ep_take_events(struct kiwi_ep *ep)
{
	unsigned long ev = xchg(&ep->events, 0);

	if (!(ev & BIT(KIWI_EV_TIMEOUT)))
		return ev;
	if (!ep->timeout_armed || time_before(jiffies, ep->timeout_due))
		return ev & ~BIT(KIWI_EV_TIMEOUT);
	ep->timeout_armed = false;
	return ev;
}

static void kiwi_ep_timeout(struct work_struct *work)
{
	struct kiwi_ep *ep = container_of(to_delayed_work(work),
					  struct kiwi_ep, timeout);

	kiwi_ep_queue(ep, KIWI_EV_TIMEOUT);
	kiwi_ep_put(ep);
}

static void kiwi_ep_work(struct work_struct *work)
{
	struct kiwi_ep *ep = container_of(work, struct kiwi_ep, work);
	unsigned long ev;

	mutex_lock(&ep->lock);
	ev = kiwi_ep_take_events(ep);
	/*
	 * A destroyed QP aborts only an ep that still holds it: one that let
	 * go of it meanwhile (a graceful close now waiting for the peer's
	 * FIN) is no longer its connection.
	 */
	if ((ev & BIT(KIWI_EV_QP_GONE)) && ep->qp)
		ev |= BIT(KIWI_EV_ABORT);
	switch (ep->state) {
	case KIWI_EP_LISTEN:
		kiwi_cm_listen_work(ep, ev);
		break;
	case KIWI_EP_CONNECTING:
	case KIWI_EP_WAIT_REP:
		if (ep->sctp_llp)
			kiwi_cm_sctp_active_work(ep, ev);
		else
			kiwi_cm_active_work(ep, ev);
		break;
	case KIWI_EP_WAIT_REQ:
	case KIWI_EP_RECVD_REQ:
		kiwi_cm_passive_work(ep, ev);
		break;
	case KIWI_EP_CONNECTED:
		kiwi_cm_connected_work(ep, ev);
		break;
	case KIWI_EP_CLOSING:
		kiwi_cm_closing_work(ep, ev);
		break;
	default:
		break;
	}
	mutex_unlock(&ep->lock);
	kiwi_ep_put(ep);
}

/*
 * Socket callbacks. The ep behind sk_user_data lives at least as long as
 * the callbacks are installed (its own reference is dropped only after
 * kiwi_ep_sock_release() restored them under sk_callback_lock).
 */
static void kiwi_cm_data_ready(struct sock *sk)
{
	struct kiwi_ep *ep;

	read_lock_bh(&sk->sk_callback_lock);
	ep = sk->sk_user_data;
	if (ep) {
		if (ep->cb_qp)
			kiwi_qp_rx_ready(ep->cb_qp, sk);
		else
			kiwi_ep_queue(ep, KIWI_EV_DATA);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

static void kiwi_cm_write_space(struct sock *sk)
{
	struct kiwi_ep *ep;

	read_lock_bh(&sk->sk_callback_lock);
	ep = sk->sk_user_data;
	if (ep && ep->cb_qp)
		kiwi_qp_tx_space(ep->cb_qp, sk);
	read_unlock_bh(&sk->sk_callback_lock);
}

static void kiwi_cm_state_change(struct sock *sk)
{
	struct kiwi_ep *ep;

	read_lock_bh(&sk->sk_callback_lock);
	ep = sk->sk_user_data;
	if (ep)
		kiwi_ep_queue(ep, KIWI_EV_STATE);
	read_unlock_bh(&sk->sk_callback_lock);
}

/**
 * kiwi_ep_sock_attach - the ep takes @sock and its callbacks
 * @ep: the endpoint, ep->lock held
 * @sock: the socket
 * @listener: for a socket accepted on a listener's socket, that listener;
 *	else NULL
 *
 * An accepted socket is a clone of the listening one: its callbacks and
 * sk_user_data are the listener's, i.e. kiwi's own. The kernel's callbacks
 * to give back at release are the ones the listener saved.
 */
void kiwi_ep_sock_attach(struct kiwi_ep *ep, struct socket *sock,
			 const struct kiwi_ep *listener)
{
	struct sock *sk = sock->sk;

	ep->sock = sock;
	write_lock_bh(&sk->sk_callback_lock);
	if (listener) {
		ep->saved_data_ready = listener->saved_data_ready;
		ep->saved_write_space = listener->saved_write_space;
		ep->saved_state_change = listener->saved_state_change;
	} else {
		ep->saved_data_ready = sk->sk_data_ready;
		ep->saved_write_space = sk->sk_write_space;
		ep->saved_state_change = sk->sk_state_change;
	}
	sk->sk_data_ready = kiwi_cm_data_ready;
	sk->sk_write_space = kiwi_cm_write_space;
	sk->sk_state_change = kiwi_cm_state_change;
	sk->sk_user_data = ep;
	write_unlock_bh(&sk->sk_callback_lock);
	if (ep->sctp)
		kiwi_sctp_sock_attach(ep->sctp, sock);
}

/* Under ep->lock: point the callbacks at @qp (NULL: back to the CM). */
void kiwi_ep_set_cb_qp(struct kiwi_ep *ep, struct kiwi_qp *qp)
{
	struct sock *sk = ep->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	ep->cb_qp = qp;
	write_unlock_bh(&sk->sk_callback_lock);
}

/* Give @sk the kernel's callbacks @ep saved; no kiwi callback runs after. */
static void kiwi_ep_sock_restore(struct sock *sk, const struct kiwi_ep *ep)
{
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_data_ready = ep->saved_data_ready;
	sk->sk_write_space = ep->saved_write_space;
	sk->sk_state_change = ep->saved_state_change;
	sk->sk_user_data = NULL;
	write_unlock_bh(&sk->sk_callback_lock);
}

/**
 * kiwi_ep_sock_release - give the socket back and release it
 * @ep: the endpoint, ep->lock held; no QP attached any more
 * @abortive: reset the connection (SO_LINGER 0) instead of a FIN
 *
 * A released socket may live on in TCP (FIN handshake, orphaned) after
 * kiwi.ko is gone: it leaves with the kernel's callbacks.
 */
void kiwi_ep_sock_release(struct kiwi_ep *ep, bool abortive)
{
	struct socket *sock = ep->sock;

	if (!sock)
		return;
	kiwi_ep_sock_restore(sock->sk, ep);
	kiwi_sctp_sock_detach(ep->sctp);
	ep->cb_qp = NULL;
	if (abortive)
		sock_no_linger(sock->sk);
	sock_release(sock);
	ep->sock = NULL;
}

/**
 * kiwi_ep_sock_refuse - release a socket just accepted on @listener
 * @listener: the listener, its ep->lock held
 * @sock: the accepted socket, which no ep took
 *
 * The clone carries the listener's callbacks and sk_user_data; they are
 * replaced by the kernel's before the socket goes.
 */
void kiwi_ep_sock_refuse(const struct kiwi_ep *listener, struct socket *sock)
{
	kiwi_ep_sock_restore(sock->sk, listener);
	sock_release(sock);
}

/* Under ep->lock: report to @cm_id from now on (a cm_id reference). */
void kiwi_ep_set_cm_id(struct kiwi_ep *ep, struct iw_cm_id *cm_id)
{
	cm_id->add_ref(cm_id);
	cm_id->provider_data = ep;
	ep->cm_id = cm_id;
}

/* Under ep->lock: no more events to the cm_id; its reference goes. */
void kiwi_ep_drop_cm_id(struct kiwi_ep *ep)
{
	struct iw_cm_id *cm_id = ep->cm_id;

	if (!cm_id)
		return;
	ep->cm_id = NULL;
	cm_id->rem_ref(cm_id);
}

/* Leave a listener's list of children still reading a Request. */
void kiwi_ep_unchild(struct kiwi_ep *ep)
{
	struct kiwi_ep *l = ep->listener;

	if (!l)
		return;
	spin_lock_bh(&l->child_lock);
	if (!list_empty(&ep->child_entry)) {
		list_del_init(&ep->child_entry);
		l->nchildren--;
	}
	spin_unlock_bh(&l->child_lock);
	ep->listener = NULL;
	kiwi_ep_put(l);
}

/**
 * kiwi_ep_finish - the endpoint reaches CLOSED
 * @ep: ep->lock held; socket, QP and cm_id already released. The caller
 *      holds a reference besides the ep's own, which goes here.
 */
void kiwi_ep_finish(struct kiwi_ep *ep)
{
	if (ep->state == KIWI_EP_CLOSED)
		return;
	kiwi_ep_disarm_timeout(ep);
	kiwi_ep_unchild(ep);
	kiwi_ep_set_state(ep, KIWI_EP_CLOSED);
	kiwi_ep_put(ep);
}

/* IRD/ORD for an event: "not negotiated" reports our limit. */
static u8 kiwi_cm_rd(u16 v, u32 max)
{
	return v == KIWI_MPA_IRD_ORD_NONE ? max : min_t(u32, v, max);
}

/**
 * kiwi_cm_event - report an event to iw_cm
 * @ep: the endpoint, ep->lock held, socket still open
 * @cm_id: the id to report to (the listener's for CONNECT_REQUEST)
 * @type: the event
 * @status: 0 or a negative errno
 * @f: the peer's frame whose private data goes with the event, or NULL
 *
 * iw_cm copies the private data; an event carries at most 255 octets of
 * it (a u8 length), so more is cut there.
 *
 * Return: the handler's result.
 */
int kiwi_cm_event(struct kiwi_ep *ep, struct iw_cm_id *cm_id,
		  enum iw_cm_event_type type, int status,
		  const struct kiwi_mpa_frame *f)
{
	struct iw_cm_event ev = {
		.event = type,
		.status = status,
		.provider_data = ep,
		.ird = kiwi_cm_rd(ep->llp.mpa.ird, KIWI_MAX_IRD),
		.ord = kiwi_cm_rd(ep->llp.mpa.ord, KIWI_MAX_ORD),
	};

	if (ep->sock)
		kiwi_cm_addrs(ep->sock, &ev.local_addr, &ev.remote_addr);
	/* Callers refuse frames with more than iw_cm carries (cm_passive.c,
	 * cm_active.c); none is delivered cut short.
	 */
	if (f && f->pdata_len && f->pdata_len <= KIWI_CM_PD_MAX) {
		ev.private_data = (void *)f->pdata;
		ev.private_data_len = f->pdata_len;
	}
	trace_kiwi_cm_event(cm_id->device, ep, type, status);
	return cm_id->event_handler(cm_id, &ev);
}

/**
 * kiwi_ep_get_by_cm_id - the live endpoint that reports to @cm_id
 * @cm_id: an iw_cm id
 *
 * Return: the endpoint with a reference the caller drops with
 * kiwi_ep_put(), or NULL. It may have moved on by the time the caller
 * takes its lock.
 */
struct kiwi_ep *kiwi_ep_get_by_cm_id(struct iw_cm_id *cm_id)
{
	struct kiwi_ep *ep, *found = NULL;

	spin_lock_irq(&kiwi_eps_lock);
	list_for_each_entry(ep, &kiwi_eps, all_entry) {
		if (READ_ONCE(ep->cm_id) == cm_id &&
		    kref_get_unless_zero(&ep->ref)) {
			found = ep;
			break;
		}
	}
	spin_unlock_irq(&kiwi_eps_lock);
	return found;
}

/*
 * Send @event (KIWI_EV_ABORT or KIWI_EV_QP_GONE) to the endpoints @match
 * selects (all of them when @match is NULL). Any context that may take a
 * spinlock with interrupts disabled.
 */
static void kiwi_cm_abort_eps(bool (*match)(const struct kiwi_ep *ep,
					    const void *arg),
			      const void *arg, int event)
{
	struct kiwi_ep *ep, *next;
	unsigned long flags;

	spin_lock_irqsave(&kiwi_eps_lock, flags);
	list_for_each_entry_safe(ep, next, &kiwi_eps, all_entry) {
		if (match && !match(ep, arg))
			continue;
		if (!kref_get_unless_zero(&ep->ref))
			continue;
		set_bit(event, &ep->events);
		/*
		 * The work was pending, but it may have run and dropped its
		 * reference since: this put may be the last one.
		 */
		if (!queue_work(kiwi_cm_wq, &ep->work))
			kref_put(&ep->ref, kiwi_ep_release_listed);
	}
	spin_unlock_irqrestore(&kiwi_eps_lock, flags);
}

static bool kiwi_ep_uses_qp(const struct kiwi_ep *ep, const void *qp)
{
	return READ_ONCE(ep->qp) == qp;
}

/**
 * kiwi_cm_abort_qp - the QP is being destroyed: end its connections now
 * @qp: the QP; the caller marked it destroyed first (kiwi_qp_destroyed())
 *
 * An initiator holds its QP from iw_connect until the MPA Reply, and
 * iw_cm holds it until CONNECT_REPLY: against a silent responder that is
 * mpa_timeout seconds. Aborting reports CONNECT_REPLY (-ECONNRESET) at
 * once; an attached connection ends as after any abort the QP asks for
 * (kiwi_cm_abort(): our FIN if TX stopped between frames, else a reset).
 * A connect that takes the QP after this scan sees it destroyed and fails.
 */
void kiwi_cm_abort_qp(struct kiwi_qp *qp)
{
	kiwi_cm_abort_eps(kiwi_ep_uses_qp, qp, KIWI_EV_QP_GONE);
}

/* A connection of @ibdev that is not established (a lockless look). */
static bool kiwi_ep_on_device(const struct kiwi_ep *ep, const void *ibdev)
{
	return ep->ibdev == ibdev &&
	       READ_ONCE(ep->state) != KIWI_EP_CONNECTED;
}

/* Any connection of @ibdev, established or not (a lockless look). */
static bool kiwi_ep_of_device(const struct kiwi_ep *ep, const void *ibdev)
{
	return ep->ibdev == ibdev;
}

/**
 * kiwi_cm_abort_device - end every connection of a device now
 * @ibdev: the device, whose net_device is being unregistered
 *
 * Any context. Each connection ends as after an abort its QP asked for:
 * iw_cm gets CLOSE (rdma_cm's DISCONNECTED for the ULP), the QP goes to
 * ERR. Listeners are left to rdma_cm's device removal.
 */
void kiwi_cm_abort_device(struct ib_device *ibdev)
{
	kiwi_cm_abort_eps(kiwi_ep_of_device, ibdev, KIWI_EV_ABORT);
}

/*
 * An ib_client whose remove() runs when a device is being unregistered,
 * before rdma_cm's (clients are removed in the reverse order of their
 * registration, and kiwi_cm_init() loads rdma_cm first): rdma_cm then
 * destroys each of its ids, and iw_cm's destroy of a connecting id waits
 * for CONNECT_REPLY, which against a silent peer would come only at
 * mpa_timeout. Every connection of the device still in its startup is
 * aborted instead, a responder's child too: one still reading its
 * Request, and one whose CONNECT_REQUEST waits for an accept or reject
 * that may never come (an application that does not read its events
 * keeps rdma_cm from destroying that id). iw_cm expects no event for such
 * a child; its later accept fails and its reject succeeds
 * (kiwi_cm_accept(), kiwi_cm_reject()).
 *
 * Established connections are left alone: a ULP whose module was loaded
 * before kiwi registered its ib_client earlier, so its remove() runs after
 * this one and shuts down over the live connection (nvme-rdma sends the
 * controller's shutdown and waits for the answer: up to its admin
 * timeout, 60 s, on a connection reset under it). rdma_cm's removal ends
 * them next, without waiting for the peer: iw_cm's destroy of an
 * established id moves the QP to ERR, which ends the stream at once.
 */
static void kiwi_cm_remove_one(struct ib_device *ibdev, void *client_data)
{
	kiwi_cm_abort_eps(kiwi_ep_on_device, ibdev, KIWI_EV_ABORT);
}

static struct ib_client kiwi_cm_client = {
	.name = "kiwi_cm",
	.remove = kiwi_cm_remove_one,
};

int kiwi_cm_init(void)
{
	int rv;

	kiwi_cm_wq = alloc_workqueue("kiwi_cm", WQ_MEM_RECLAIM, 0);
	if (!kiwi_cm_wq)
		return -ENOMEM;
	/*
	 * rdma_cm's client first, so that kiwi's is removed before it. Not a
	 * module softdep: "modprobe -r kiwi" would then fail on an rdma_cm in
	 * use. Without rdma_cm (not built) there is nothing to order.
	 */
	request_module("rdma_cm");
	rv = ib_register_client(&kiwi_cm_client);
	if (rv)
		destroy_workqueue(kiwi_cm_wq);
	return rv;
}

/*
 * A CONNECT_REQUEST that iw_cm dropped (its listener went away meanwhile)
 * is never accepted or rejected: once no device is left, nobody can, so
 * those references go here.
 */
static struct kiwi_ep *kiwi_cm_next_orphan(void)
{
	struct kiwi_ep *ep;

	spin_lock_irq(&kiwi_eps_lock);
	list_for_each_entry(ep, &kiwi_eps, all_entry) {
		if (test_and_clear_bit(KIWI_EPF_IWCM_REF, &ep->flags)) {
			spin_unlock_irq(&kiwi_eps_lock);
			return ep;
		}
	}
	spin_unlock_irq(&kiwi_eps_lock);
	return NULL;
}

static bool kiwi_cm_no_eps(void)
{
	bool empty;

	spin_lock_irq(&kiwi_eps_lock);
	empty = list_empty(&kiwi_eps);
	spin_unlock_irq(&kiwi_eps_lock);
	return empty;
}

/**
 * kiwi_cm_exit - module unload, after every kiwi device is unregistered
 *
 * No iw_cm id exists any more; endpoints still closing are aborted and
 * waited for, so no CM work is left when the workqueue is destroyed.
 */
void kiwi_cm_exit(void)
{
	struct kiwi_ep *ep;

	ib_unregister_client(&kiwi_cm_client);
	kiwi_cm_abort_eps(NULL, NULL, KIWI_EV_ABORT);
	while ((ep = kiwi_cm_next_orphan()))
		kiwi_ep_put(ep);
	wait_event(kiwi_eps_wait, kiwi_cm_no_eps());
	destroy_workqueue(kiwi_cm_wq);
}
