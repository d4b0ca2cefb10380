// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: driver details for `rdma resource show qp|cq|cm_id -dd`
 * (ib_device_ops.fill_res_qp_entry, fill_res_cq_entry and
 * fill_res_cm_id_entry). kiwi(7) explains each attribute.
 *
 * Each entry is a snapshot taken under the locks that own the fields, then
 * written into the netlink message with no lock held: a QP's stream under
 * tx.llp_mutex (attach/detach cannot run), its receive side under the
 * socket lock (RX cannot run), the queues under qp->lock; a CQ's ring
 * under cq->lock (a resize cannot swap it); an endpoint under ep->lock.
 */
#include <linux/tcp.h>
#include <net/sock.h>
#include <rdma/rdma_cm.h>

#include "cm_ep.h"

/*
 * The driver table of an entry: @put writes the attributes of snapshot
 * @r into it; a table that does not fit leaves nothing behind.
 */
static int kiwi_res_table(struct sk_buff *msg,
			  int (*put)(struct sk_buff *msg, const void *r),
			  const void *r)
{
	struct nlattr *table = nla_nest_start_noflag(msg,
						     RDMA_NLDEV_ATTR_DRIVER);

	if (!table)
		return -EMSGSIZE;
	if (put(msg, r)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

/* One Terminate (kiwi_qp_stats.term_*) as "L/E/0xCC name". */
static int kiwi_res_put_term(struct sk_buff *msg, const char *key, u32 v)
{
	u8 layer = v >> 16 & 0xff, etype = v >> 8 & 0xff, ecode = v & 0xff;
	int err = kiwi_term_err_lookup(layer, etype, ecode);
	char buf[96];

	if (!(v & KIWI_TERM_SEEN))
		return 0;
	snprintf(buf, sizeof(buf), "%u/%u/0x%02x %s", layer, etype, ecode,
		 err > 0 ? kiwi_term_err_name(err) : "unknown");
	return rdma_nl_put_driver_string(msg, key, buf);
}

static int kiwi_res_put_addr(struct sk_buff *msg, const char *key,
			     const struct sockaddr_storage *ss)
{
	char buf[64];

	if (!ss->ss_family)
		return 0;
	snprintf(buf, sizeof(buf), "%pISpc", ss);
	return rdma_nl_put_driver_string(msg, key, buf);
}

static const char *kiwi_res_rtr_name(u8 rtr)
{
	static const char * const names[] = {
		"none", "send", "write", "send,write", "read", "send,read",
		"write,read", "send,write,read",
	};

	return names[rtr & KIWI_MPA_RTR_ALL];
}

/* What the MPA startup agreed (struct kiwi_llp_params). */
static int kiwi_res_put_llp(struct sk_buff *msg,
			    const struct kiwi_llp_params *llp)
{
	const struct kiwi_mpa_params *p = &llp->mpa;

	if (rdma_nl_put_driver_string(msg, "role", llp->initiator ?
				      "initiator" : "responder") ||
	    rdma_nl_put_driver_u32(msg, "mpa_rev", p->rev) ||
	    rdma_nl_put_driver_u32(msg, "crc", p->crc) ||
	    rdma_nl_put_driver_u32(msg, "markers_tx", p->tx_markers) ||
	    rdma_nl_put_driver_u32(msg, "markers_rx", p->rx_markers) ||
	    rdma_nl_put_driver_u32(msg, "p2p", p->p2p))
		return -EMSGSIZE;
	if (p->p2p && rdma_nl_put_driver_string(msg, "rtr",
						kiwi_res_rtr_name(p->rtr)))
		return -EMSGSIZE;
	if (p->ulpf && rdma_nl_put_driver_string(msg, "framing", "ulpf00"))
		return -EMSGSIZE;
	return 0;
}

/**
 * struct kiwi_res_qp - what -dd shows of a QP
 * @attached: a stream is attached; the fields up to @tx_queued are valid
 * @llp: what the MPA startup agreed
 * @laddr: the socket's local address
 * @raddr: the socket's peer address
 * @mulpdu: MULPDU of the transmit side
 * @ird: IRD in force
 * @ord: ORD in force
 * @msn_tx_send: next MSN sent on QN 0
 * @msn_tx_rreq: next MSN sent on QN 1
 * @msn_rx_send: next MSN expected on QN 0
 * @msn_rx_rreq: next MSN expected on QN 1
 * @msn_rx_term: next MSN expected on QN 2
 * @rx_mo: MO the next segment of a Send in progress continues at, 0 if
 *	none is in progress
 * @rx_failed: the receive side stopped at an error
 * @reads_out: RDMA Reads issued and not answered
 * @reads_in: inbound Read Requests not yet answered
 * @sq_posted: the SQ's producer index as last published
 * @sq_taken: the SQ index TX takes its next WR from
 * @sq_done: the SQ's consumer index (WRs retired)
 * @sq_doorbell: posters must ring the doorbell (KIWI_RING_F_DOORBELL)
 * @tx_unsent: octets of the transmit buffer the LLP has not yet taken (read
 *	while TX may run: a moment's view, never negative)
 * @tx_stalled: TX waits for the socket's write-space wakeup
 * @tx_queued: TX's work item is queued
 * @term_sent: kiwi_qp_stats.term_sent
 * @term_rcvd: kiwi_qp_stats.term_rcvd
 */
struct kiwi_res_qp {
	bool attached;
	struct kiwi_llp_params llp;
	struct sockaddr_storage laddr;
	struct sockaddr_storage raddr;
	u32 mulpdu;
	u32 ird;
	u32 ord;
	u32 msn_tx_send;
	u32 msn_tx_rreq;
	u32 msn_rx_send;
	u32 msn_rx_rreq;
	u32 msn_rx_term;
	u32 rx_mo;
	bool rx_failed;
	u32 reads_out;
	u32 reads_in;
	u32 sq_posted;
	u32 sq_taken;
	u32 sq_done;
	bool sq_doorbell;
	u32 tx_unsent;
	bool tx_stalled;
	bool tx_queued;
	u32 term_sent;
	u32 term_rcvd;
};

/* Under tx.llp_mutex, the QP attached to @sock: the stream's state. */
static void kiwi_res_qp_stream(struct kiwi_qp *qp, struct socket *sock,
			       struct kiwi_res_qp *r)
{
	const struct kiwi_qp_rx *rx = &qp->rx;
	struct kiwi_qp_tx *tx = &qp->tx;
	unsigned long flags;
	u32 len, sent;

	r->attached = true;
	r->llp = tx->ep->llp;
	kiwi_cm_addrs(sock, &r->laddr, &r->raddr);
	lock_sock(sock->sk);
	r->msn_rx_send = rx->msn_send;
	r->msn_rx_rreq = rx->msn_rreq;
	r->msn_rx_term = rx->msn_term;
	if (rx->kind == KIWI_RX_SEND && !rx->h.tagged && !rx->h.last)
		r->rx_mo = rx->h.mo + rx->plen;
	r->rx_failed = rx->failed;
	release_sock(sock->sk);
	spin_lock_irqsave(&qp->lock, flags);
	r->mulpdu = READ_ONCE(tx->mulpdu);
	r->ird = tx->ird;
	r->ord = tx->ord;
	r->msn_tx_send = READ_ONCE(tx->msn_send);
	r->msn_tx_rreq = READ_ONCE(tx->msn_rreq);
	r->reads_out = tx->orq_tail - tx->orq_head;
	r->reads_in = tx->irq_tail - tx->irq_head;
	r->sq_posted = kiwi_ring_published(&qp->sq);
	r->sq_taken = tx->next;
	r->sq_done = qp->sq.cons;
	r->sq_doorbell = qp->sq.flags & KIWI_RING_F_DOORBELL;
	len = READ_ONCE(tx->len);
	sent = READ_ONCE(tx->sent);
	r->tx_unsent = len > sent ? len - sent : 0;
	r->tx_stalled = READ_ONCE(tx->stalled);
	r->tx_queued = work_pending(&tx->work);
	spin_unlock_irqrestore(&qp->lock, flags);
}

static void kiwi_res_qp_snap(struct kiwi_qp *qp, struct kiwi_res_qp *r)
{
	struct socket *sock;

	memset(r, 0, sizeof(*r));
	mutex_lock(&qp->tx.llp_mutex);
	sock = READ_ONCE(qp->tx.sock);
	if (sock && qp->tx.ep)
		kiwi_res_qp_stream(qp, sock, r);
	mutex_unlock(&qp->tx.llp_mutex);
	r->term_sent = READ_ONCE(qp->stats.term_sent);
	r->term_rcvd = READ_ONCE(qp->stats.term_rcvd);
}

/* Where the send queue and the transmit engine stand (a stall's evidence). */
static int kiwi_res_put_tx(struct sk_buff *msg, const struct kiwi_res_qp *r)
{
	return rdma_nl_put_driver_u32(msg, "sq_posted", r->sq_posted) ||
	       rdma_nl_put_driver_u32(msg, "sq_taken", r->sq_taken) ||
	       rdma_nl_put_driver_u32(msg, "sq_done", r->sq_done) ||
	       rdma_nl_put_driver_u32(msg, "sq_doorbell", r->sq_doorbell) ||
	       rdma_nl_put_driver_u32(msg, "tx_unsent", r->tx_unsent) ||
	       rdma_nl_put_driver_u32(msg, "tx_stalled", r->tx_stalled) ||
	       rdma_nl_put_driver_u32(msg, "tx_queued", r->tx_queued);
}

static int kiwi_res_put_qp(struct sk_buff *msg, const void *snap)
{
	const struct kiwi_res_qp *r = snap;

	if (rdma_nl_put_driver_u32(msg, "attached", r->attached))
		return -EMSGSIZE;
	if (r->attached &&
	    (kiwi_res_put_llp(msg, &r->llp) ||
	     rdma_nl_put_driver_u32(msg, "ird", r->ird) ||
	     rdma_nl_put_driver_u32(msg, "ord", r->ord) ||
	     rdma_nl_put_driver_u32(msg, "mulpdu", r->mulpdu) ||
	     kiwi_res_put_addr(msg, "laddr", &r->laddr) ||
	     kiwi_res_put_addr(msg, "raddr", &r->raddr) ||
	     rdma_nl_put_driver_u32(msg, "msn_tx_send", r->msn_tx_send) ||
	     rdma_nl_put_driver_u32(msg, "msn_tx_rreq", r->msn_tx_rreq) ||
	     rdma_nl_put_driver_u32(msg, "msn_rx_send", r->msn_rx_send) ||
	     rdma_nl_put_driver_u32(msg, "msn_rx_rreq", r->msn_rx_rreq) ||
	     rdma_nl_put_driver_u32(msg, "msn_rx_term", r->msn_rx_term) ||
	     rdma_nl_put_driver_u32(msg, "rx_mo", r->rx_mo) ||
	     rdma_nl_put_driver_u32(msg, "rx_failed", r->rx_failed) ||
	     rdma_nl_put_driver_u32(msg, "reads_out", r->reads_out) ||
	     rdma_nl_put_driver_u32(msg, "reads_in", r->reads_in) ||
	     kiwi_res_put_tx(msg, r)))
		return -EMSGSIZE;
	if (kiwi_res_put_term(msg, "term_sent", r->term_sent) ||
	    kiwi_res_put_term(msg, "term_rcvd", r->term_rcvd))
		return -EMSGSIZE;
	return 0;
}

/**
 * kiwi_fill_res_qp_entry - ib_device_ops.fill_res_qp_entry
 * @msg: the netlink message
 * @ibqp: the QP; restrack holds it
 *
 * Process context.
 *
 * Return: 0 or -EMSGSIZE.
 */
int kiwi_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct kiwi_res_qp r;

	kiwi_res_qp_snap(to_kqp(ibqp), &r);
	return kiwi_res_table(msg, kiwi_res_put_qp, &r);
}

/**
 * struct kiwi_res_cq - what -dd shows of a CQ
 * @produced: the kernel's producer index
 * @consumed: the consumer index (a user CQ's as user space last published it)
 * @arm: the arm word (KIWI_CQ_ARM_*: 0 none, else the next or the next
 *	solicited completion raises the event)
 * @overrun: 1 once a full ring lost a completion (IB_EVENT_CQ_ERR)
 */
struct kiwi_res_cq {
	u32 produced;
	u32 consumed;
	u32 arm;
	u32 overrun;
};

static int kiwi_res_put_cq(struct sk_buff *msg, const void *snap)
{
	const struct kiwi_res_cq *r = snap;

	if (rdma_nl_put_driver_u32(msg, "cq_produced", r->produced) ||
	    rdma_nl_put_driver_u32(msg, "cq_consumed", r->consumed) ||
	    rdma_nl_put_driver_u32(msg, "cq_arm", r->arm) ||
	    rdma_nl_put_driver_u32(msg, "cq_overrun", r->overrun))
		return -EMSGSIZE;
	return 0;
}

/**
 * kiwi_fill_res_cq_entry - ib_device_ops.fill_res_cq_entry
 * @msg: the netlink message
 * @ibcq: the CQ; restrack holds it
 *
 * Process context.
 *
 * Return: 0 or -EMSGSIZE.
 */
int kiwi_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct kiwi_cq *cq = to_kcq(ibcq);
	struct kiwi_res_cq r;
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	r.produced = cq->ring.prod;
	r.consumed = kiwi_ring_consumer(&cq->ring);
	r.arm = READ_ONCE(cq->ring.ctrl->arm);
	spin_unlock_irqrestore(&cq->lock, flags);
	r.overrun = atomic_read(&cq->overrun);
	return kiwi_res_table(msg, kiwi_res_put_cq, &r);
}

/**
 * struct kiwi_res_ep - what -dd shows of a CM endpoint
 * @state: enum kiwi_ep_state
 * @llp: what the MPA startup agreed, valid from @state CONNECTED on
 * @laddr: the socket's local address (zero without a socket)
 * @raddr: the socket's peer address
 * @backlog: listener: most children reading a Request at once
 * @pending: listener: children reading a Request now
 */
struct kiwi_res_ep {
	enum kiwi_ep_state state;
	struct kiwi_llp_params llp;
	struct sockaddr_storage laddr;
	struct sockaddr_storage raddr;
	u32 backlog;
	u32 pending;
};

static const char *kiwi_res_ep_state_name(enum kiwi_ep_state state)
{
	static const char * const names[] = {
		[KIWI_EP_IDLE] = "IDLE",
		[KIWI_EP_LISTEN] = "LISTEN",
		[KIWI_EP_CONNECTING] = "CONNECTING",
		[KIWI_EP_WAIT_REP] = "WAIT_REP",
		[KIWI_EP_WAIT_REQ] = "WAIT_REQ",
		[KIWI_EP_RECVD_REQ] = "RECVD_REQ",
		[KIWI_EP_CONNECTED] = "CONNECTED",
		[KIWI_EP_CLOSING] = "CLOSING",
		[KIWI_EP_CLOSED] = "CLOSED",
	};

	return state < ARRAY_SIZE(names) ? names[state] : "?";
}

static void kiwi_res_ep_snap(struct kiwi_ep *ep, struct kiwi_res_ep *r)
{
	memset(r, 0, sizeof(*r));
	mutex_lock(&ep->lock);
	r->state = ep->state;
	r->llp = ep->llp;
	if (ep->sock && ep->state != KIWI_EP_LISTEN)
		kiwi_cm_addrs(ep->sock, &r->laddr, &r->raddr);
	r->backlog = ep->backlog;
	spin_lock_bh(&ep->child_lock);
	r->pending = ep->nchildren;
	spin_unlock_bh(&ep->child_lock);
	mutex_unlock(&ep->lock);
}

static int kiwi_res_put_ep(struct sk_buff *msg, const void *snap)
{
	const struct kiwi_res_ep *r = snap;

	if (rdma_nl_put_driver_string(msg, "ep_state",
				      kiwi_res_ep_state_name(r->state)))
		return -EMSGSIZE;
	if (r->state == KIWI_EP_LISTEN)
		return rdma_nl_put_driver_u32(msg, "backlog", r->backlog) ||
		       rdma_nl_put_driver_u32(msg, "pending", r->pending) ?
		       -EMSGSIZE : 0;
	if (kiwi_res_put_addr(msg, "laddr", &r->laddr) ||
	    kiwi_res_put_addr(msg, "raddr", &r->raddr))
		return -EMSGSIZE;
	if (r->state == KIWI_EP_CONNECTED || r->state == KIWI_EP_CLOSING)
		return kiwi_res_put_llp(msg, &r->llp);
	return 0;
}

/**
 * kiwi_fill_res_cm_id_entry - ib_device_ops.fill_res_cm_id_entry
 * @msg: the netlink message
 * @cm_id: an rdma_cm id; restrack holds it
 *
 * The endpoint is looked up among the live ones, never through the
 * iw_cm_id's provider_data, which may name an endpoint that is gone.
 *
 * Return: 0 or -EMSGSIZE.
 */
int kiwi_fill_res_cm_id_entry(struct sk_buff *msg, struct rdma_cm_id *cm_id)
{
	struct iw_cm_id *iw = rdma_iw_cm_id(cm_id);
	struct kiwi_res_ep r;
	struct kiwi_ep *ep;

	ep = iw ? kiwi_ep_get_by_cm_id(iw) : NULL;
	if (!ep)
		return 0;
	kiwi_res_ep_snap(ep, &r);
	kiwi_ep_put(ep);
	return kiwi_res_table(msg, kiwi_res_put_ep, &r);
}
