/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kiwi: the connection manager's endpoint, private to kernel/cm*.c.
 *
 * An endpoint (struct kiwi_ep) is a listener or one connection. It owns a
 * kernel TCP socket from creation to sock_release(). Socket callbacks only
 * set event bits and queue the endpoint's work on the CM's workqueue (or,
 * once a QP is attached, forward to the QP engine); the work runs the state
 * machine in process context under ep->lock. Documentation/cm.md draws the
 * state machine.
 */
#ifndef KIWI_CM_EP_H
#define KIWI_CM_EP_H

#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/workqueue.h>

#include "kiwi.h"
#include "conn.h"

/*
 * Private data octets an iw_cm event can carry (its private_data_len is a
 * u8); MPA allows up to 512. A peer's Request or Reply with more is refused,
 * never delivered cut short.
 */
#define KIWI_CM_PD_MAX	U8_MAX

/**
 * enum kiwi_ep_state - where an endpoint is (Documentation/cm.md)
 * @KIWI_EP_IDLE: allocated, no socket yet
 * @KIWI_EP_LISTEN: listener, accepting TCP connections
 * @KIWI_EP_CONNECTING: initiator, TCP connect in progress
 * @KIWI_EP_WAIT_REP: initiator, Request sent, reading the Reply
 * @KIWI_EP_WAIT_REQ: responder, reading the Request
 * @KIWI_EP_RECVD_REQ: responder, CONNECT_REQUEST reported, waiting for
 *	accept or reject
 * @KIWI_EP_CONNECTED: full operation, a QP attached
 * @KIWI_EP_CLOSING: our FIN sent, waiting for the peer's; the QP and the
 *	cm_id are let go already (CLOSE was reported)
 * @KIWI_EP_CLOSED: socket released; only references keep the ep
 */
enum kiwi_ep_state {
	KIWI_EP_IDLE,
	KIWI_EP_LISTEN,
	KIWI_EP_CONNECTING,
	KIWI_EP_WAIT_REP,
	KIWI_EP_WAIT_REQ,
	KIWI_EP_RECVD_REQ,
	KIWI_EP_CONNECTED,
	KIWI_EP_CLOSING,
	KIWI_EP_CLOSED,
};

/* Bits of kiwi_ep.events, set from any context, consumed by the work. */
enum {
	KIWI_EV_DATA,		/* octets (or, listener: connections) ready */
	KIWI_EV_STATE,		/* TCP state changed */
	KIWI_EV_TIMEOUT,	/* the armed timeout expired */
	KIWI_EV_CLOSE,		/* graceful close asked (QP engine) */
	KIWI_EV_ABORT,		/* abort asked (QP engine, removal, unload) */
	KIWI_EV_DRAIN,		/* the QP began a graceful close: bound it */
	KIWI_EV_QP_GONE,	/* the ep's QP is being destroyed */
};

/* Bits of kiwi_ep.flags. */
enum {
	KIWI_EPF_IWCM_REF,	/* responder: iw_cm may still accept/reject */
	KIWI_EPF_PEER_TERM,	/* SCTP: the peer's Session Terminate arrived */
	KIWI_EPF_OVER_BACKLOG,	/* SCTP child beyond its listener's backlog */
	KIWI_EPF_PORT,		/* a port: the socket of wildcard listeners */
};

/**
 * struct kiwi_ep - a CM endpoint
 * @ref: references: the ep's own (dropped when it reaches CLOSED), each
 *	queued work or armed timeout, the QP engine (attach..detach), iw_cm
 *	between CONNECT_REQUEST and accept/reject (KIWI_EPF_IWCM_REF), each
 *	child of a listener on its listener
 * @lock: serialises the state machine; protects every field below except
 *	those marked otherwise. Order: child ep->lock before its listener's
 *	lock (a listener's lock has a lockdep class of its own); never held
 *	while waiting on another ep's lock otherwise. The one exception is
 *	a child being created under its listener's lock, before anything
 *	else can reach it (kiwi_cm_new_child).
 * @state: enum kiwi_ep_state; written with WRITE_ONCE, read without
 *	@lock by device removal
 * @events: KIWI_EV_* bits (atomic bitops)
 * @flags: KIWI_EPF_* bits (atomic bitops)
 * @work: runs the state machine for @events
 * @timeout: sets KIWI_EV_TIMEOUT when it fires; armed in the startup
 *	states, in CONNECTED once the QP began a graceful close (@draining)
 *	and in CLOSING
 * @timeout_armed: @timeout is armed and has not expired: an expiry that
 *	finds it clear, or finds @timeout_due still ahead, was disarmed or
 *	re-armed while it ran, and its event is dropped
 * @timeout_due: jiffies at which the armed @timeout expires
 * @draining: CONNECTED: the QP began a graceful close; the timeout
 *	(drain_timeout) resets the connection if it does not end in time
 * @ibdev: the device of the connection, set when an initiator connects and
 *	when a responder child is created (compared, never dereferenced: a
 *	closing ep may outlive it); device removal aborts the eps that have
 *	it and are not established, a child whose Request waits for accept
 *	or reject too
 * @sock: the TCP socket, NULL before creation and after release
 * @cb_qp: the QP the socket callbacks forward to; written under the
 *	socket's sk_callback_lock (write), read under it (read)
 * @saved_data_ready: the kernel's callbacks of @sock, restored at release
 *	(an accepted socket inherits them from its listener's @saved_*)
 * @saved_write_space: see @saved_data_ready
 * @saved_state_change: see @saved_data_ready
 * @cm_id: the iw_cm id this ep reports to (add_ref held), or NULL
 * @qp: attached or about to be: a kiwi_qp_get() reference, or NULL;
 *	written with WRITE_ONCE (kiwi_cm_abort_qp() reads it locklessly)
 * @listener: responder child: its listener (a reference) until the
 *	Request is reported
 * @child_entry: entry in @listener's @children, under its @child_lock
 * @children: listener: children still reading their Request
 * @child_lock: listener: protects @children and @nchildren
 * @nchildren: listener: entries in @children
 * @backlog: listener: most children reading a Request at once; on SCTP
 *	as many again are read only to be refused (KIWI_EPF_OVER_BACKLOG)
 * @port: wildcard listener: the port whose socket it shares (a
 *	reference), under kiwi_cm_ports_mutex (cm_port.c)
 * @port_dev: wildcard listener: its device's net_device, alive while it
 *	listens
 * @port_entry: wildcard listener: entry in its port's @members; a port:
 *	entry in the list of ports, under kiwi_cm_ports_mutex
 * @members: a port: the wildcard listeners sharing its socket, changed
 *	under kiwi_cm_ports_mutex and @child_lock, read under either
 * @all_entry: entry in the global list (cm_ep.c), for module unload
 * @pol: MPA policy of this connection
 * @rdmac_graceful: the mpa_rdmac setting this connection started with
 * @req: initiator: the Request sent (private data not kept); responder:
 *	the Request received, its private data in @rbuf
 * @llp: what the startup agreed, for kiwi_qp_llp_attach()
 * @rbuf: startup frame being read
 * @rlen: octets in @rbuf
 * @err: initiator: the error to report when the connect fails
 * @sctp_llp: the endpoint runs DDP over SCTP (a listener: its children)
 * @sctp: DDP over SCTP: the association's state (llp_sctp.h), freed with
 *	the ep; NULL on MPA/TCP and for a listener
 */
struct kiwi_ep {
	struct kref ref;
	struct mutex lock;	/* see kernel-doc above */
	enum kiwi_ep_state state;
	unsigned long events;
	unsigned long flags;
	struct work_struct work;
	struct delayed_work timeout;
	bool timeout_armed;
	unsigned long timeout_due;
	bool draining;
	const struct ib_device *ibdev;
	struct socket *sock;
	struct kiwi_qp *cb_qp;
	void (*saved_data_ready)(struct sock *sk);
	void (*saved_write_space)(struct sock *sk);
	void (*saved_state_change)(struct sock *sk);
	struct iw_cm_id *cm_id;
	struct kiwi_qp *qp;
	struct kiwi_ep *listener;
	struct list_head child_entry;
	struct list_head children;
	spinlock_t child_lock;	/* see kernel-doc above */
	u32 nchildren;
	u32 backlog;
	struct kiwi_ep *port;
	struct net_device *port_dev;
	struct list_head port_entry;
	struct list_head members;
	struct list_head all_entry;
	struct kiwi_mpa_policy pol;
	bool rdmac_graceful;
	struct kiwi_mpa_frame req;
	struct kiwi_llp_params llp;
	u8 rbuf[KIWI_MPA_FRAME_MAX];
	size_t rlen;
	int err;
	bool sctp_llp;
	struct kiwi_sctp_conn *sctp;
};

/* cm_ep.c: lifetime, callbacks, events */
struct kiwi_ep *kiwi_ep_alloc(void);
void kiwi_ep_queue(struct kiwi_ep *ep, int event);
void kiwi_ep_arm_timeout(struct kiwi_ep *ep, unsigned int secs);
void kiwi_ep_disarm_timeout(struct kiwi_ep *ep);
void kiwi_ep_sock_attach(struct kiwi_ep *ep, struct socket *sock,
			 const struct kiwi_ep *listener);
void kiwi_ep_sock_refuse(const struct kiwi_ep *listener, struct socket *sock);
void kiwi_ep_set_cb_qp(struct kiwi_ep *ep, struct kiwi_qp *qp);
void kiwi_ep_sock_release(struct kiwi_ep *ep, bool abortive);
void kiwi_ep_set_cm_id(struct kiwi_ep *ep, struct iw_cm_id *cm_id);
void kiwi_ep_drop_cm_id(struct kiwi_ep *ep);
void kiwi_ep_unchild(struct kiwi_ep *ep);
void kiwi_ep_finish(struct kiwi_ep *ep);
int kiwi_cm_event(struct kiwi_ep *ep, struct iw_cm_id *cm_id,
		  enum iw_cm_event_type type, int status,
		  const struct kiwi_mpa_frame *f);
struct kiwi_ep *kiwi_ep_get_by_cm_id(struct iw_cm_id *cm_id);

/* cm_param.c: the device's settings, as the CM uses them */
unsigned int kiwi_cm_mpa_timeout(struct ib_device *ibdev);
unsigned int kiwi_cm_drain_timeout(struct ib_device *ibdev);
bool kiwi_cm_responder_waits(struct ib_device *ibdev);
bool kiwi_cm_rdmac_graceful(struct ib_device *ibdev);
bool kiwi_cm_uses_sctp(struct ib_device *ibdev);
u16 kiwi_cm_ird(u32 ird);
void kiwi_cm_policy_depths(struct kiwi_mpa_policy *pol, u32 ird, u32 ord);
void kiwi_cm_policy(struct kiwi_mpa_policy *pol, struct ib_device *ibdev,
		    u32 ird, u32 ord);

/* cm_sock.c: socket helpers */
int kiwi_cm_sock_open(struct iw_cm_id *cm_id, int family, bool sctp,
		      struct socket **sockp);
void kiwi_cm_sock_pin_net(struct sock *sk);
int kiwi_cm_send(struct socket *sock, const struct kiwi_mpa_frame *f);
enum kiwi_mpa_status kiwi_cm_read_frame(struct kiwi_ep *ep, bool want_reply,
					struct kiwi_mpa_frame *f, int *err);
void kiwi_cm_addrs(struct socket *sock, struct sockaddr_storage *local,
		   struct sockaddr_storage *remote);
bool kiwi_cm_peer_closed(struct socket *sock, int *err);
bool kiwi_cm_discard(struct socket *sock);
int kiwi_cm_addr_len(const struct sockaddr_storage *ss);
int kiwi_cm_bind_local(struct socket *sock, const struct sockaddr_storage *laddr,
		       int alen);
bool kiwi_cm_addr_any(const struct sockaddr_storage *ss);
int kiwi_cm_listen_sock(struct iw_cm_id *cm_id, int backlog, bool sctp,
			struct socket **sockp);
bool kiwi_cm_listen_elsewhere(struct iw_cm_id *cm_id);

/* cm_active.c: initiator */
int kiwi_cm_connect(struct iw_cm_id *cm_id, struct iw_cm_conn_param *param);
void kiwi_cm_active_work(struct kiwi_ep *ep, unsigned long ev);

/* cm_passive.c: listener and responder */
int kiwi_cm_listen(struct iw_cm_id *cm_id, int backlog);
void kiwi_cm_unlisten(struct kiwi_ep *ep);
void kiwi_cm_close_listener(struct kiwi_ep *ep);
void kiwi_cm_listen_work(struct kiwi_ep *ep, unsigned long ev);
void kiwi_cm_passive_work(struct kiwi_ep *ep, unsigned long ev);
int kiwi_cm_accept(struct kiwi_ep *ep, struct iw_cm_id *cm_id,
		   struct iw_cm_conn_param *param);
int kiwi_cm_reject(struct kiwi_ep *ep, const void *pdata, u8 pdata_len);
int kiwi_cm_report_request(struct kiwi_ep *ep, const struct kiwi_mpa_frame *f);
int kiwi_cm_take_qp(struct kiwi_ep *ep, struct iw_cm_id *cm_id, u32 qpn);

/* cm_port.c: wildcard listens shared between devices */
int kiwi_cm_port_join(struct kiwi_ep *l, struct iw_cm_id *cm_id, int backlog);
void kiwi_cm_port_leave(struct kiwi_ep *l);
struct kiwi_ep *kiwi_cm_port_member(struct kiwi_ep *port, struct socket *sock);

/* cm_sctp.c: DDP over SCTP, startup on the same endpoints */
int kiwi_cm_sctp_sock_create(struct net *net, int family,
			     struct socket **sockp);
int kiwi_cm_sctp_settings_ok(struct ib_device *ibdev);
int kiwi_cm_sctp_ep_init(struct kiwi_ep *ep, bool responder);
int kiwi_cm_sctp_prepare(struct kiwi_ep *ep, struct iw_cm_id *cm_id,
			 const struct iw_cm_conn_param *param);
void kiwi_cm_sctp_active_work(struct kiwi_ep *ep, unsigned long ev);
void kiwi_cm_sctp_read_initiate(struct kiwi_ep *ep);
int kiwi_cm_sctp_accept_locked(struct kiwi_ep *ep, struct iw_cm_id *cm_id,
			       struct iw_cm_conn_param *param);
void kiwi_cm_sctp_reject_locked(struct kiwi_ep *ep, const void *pdata,
				u8 pdata_len);
void kiwi_cm_sctp_end_session(struct kiwi_ep *ep);

/* cm_obs.c: tracepoints and counters of connection management */
void kiwi_ep_set_state(struct kiwi_ep *ep, enum kiwi_ep_state state);
void kiwi_cm_count(struct ib_device *ibdev, enum kiwi_stat_id id);
struct ib_device *kiwi_cm_obs_get(struct kiwi_ep *ep);
void kiwi_cm_obs_put(struct kiwi_ep *ep);
void kiwi_cm_obs_reply(struct kiwi_ep *ep, enum kiwi_mpa_status st);
void kiwi_cm_obs_request(struct kiwi_ep *ep, enum kiwi_mpa_status st,
			 const struct kiwi_mpa_params *p);
void kiwi_cm_obs_pdata_refused(struct kiwi_ep *ep, u16 len);
void kiwi_cm_obs_ulpf_refused(struct kiwi_ep *ep);
void kiwi_cm_obs_child(struct kiwi_ep *ep, enum kiwi_stat_id id,
		       const char *why);
void kiwi_cm_obs_urgent(struct kiwi_ep *ep);

/* cm_term.c: an initiator's Terminate when it cannot enter Full Operation */
int kiwi_cm_send_mpa_term(struct kiwi_ep *ep, u8 ecode);

/* cm_close.c: connected endpoints and teardown */
int kiwi_cm_attach(struct kiwi_ep *ep);
void kiwi_cm_connected_work(struct kiwi_ep *ep, unsigned long ev);
void kiwi_cm_closing_work(struct kiwi_ep *ep, unsigned long ev);
void kiwi_cm_fail(struct kiwi_ep *ep, bool abortive);

#endif /* KIWI_CM_EP_H */
