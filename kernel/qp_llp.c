// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: binding a QP to its LLP stream (conn.h: attach, detach, socket
 * callbacks; llp.h: the lower layer's operations) and the state changes
 * the data path makes.
 */
#include <linux/wait_bit.h>
#include <net/sock.h>

#include "kiwi.h"
#include "conn.h"
#include "llp.h"
#include "kiwi_trace.h"

/* RTS or CLOSING (SQD): the stream carries messages. qp->lock or racy. */
bool kiwi_qp_connected(struct kiwi_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	return state == IB_QPS_RTS || state == IB_QPS_SQD;
}

/* Report an async event on the QP (any context, no QP lock held). */
void kiwi_qp_event(struct kiwi_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/**
 * kiwi_qp_last_wqe_due - is IB_EVENT_QP_LAST_WQE_REACHED to be reported now?
 * @qp: the QP, qp->lock held
 *
 * For a QP on an SRQ in the error state that will take no more SRQ
 * elements and holds none: no stream is bound (RX let go of its element,
 * kiwi_rx_release()) and no receive completion waits for a grace period
 * (rx_gp.c). Once per entry into the error state; not while destroy runs.
 *
 * Return: true if the caller must report the event (after dropping the
 * lock); it is then marked reported.
 */
bool kiwi_qp_last_wqe_due(struct kiwi_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (!qp->ibqp.srq || qp->state != IB_QPS_ERR || qp->last_wqe ||
	    qp->destroyed || qp->llp_bound || qp->rx_gp.n)
		return false;
	qp->last_wqe = true;
	return true;
}

/* Report IB_EVENT_QP_LAST_WQE_REACHED if due (any context, no QP lock). */
void kiwi_qp_last_wqe(struct kiwi_qp *qp)
{
	unsigned long flags;
	bool due;

	spin_lock_irqsave(&qp->lock, flags);
	due = kiwi_qp_last_wqe_due(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	if (due)
		kiwi_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}

/* Under qp->lock: enter ERROR and flush, unless already there. */
static bool kiwi_qp_enter_error(struct kiwi_qp *qp, struct kiwi_qp_flushed *out)
{
	if (qp->state == IB_QPS_ERR)
		return false;
	trace_kiwi_qp_state(&qp->ibqp, qp->state, IB_QPS_ERR);
	qp->state = IB_QPS_ERR;
	kiwi_qp_flush(qp, out);
	return true;
}

/**
 * kiwi_qp_to_error - move the QP to ERROR and flush its work queues
 * @qp: the QP (any context, no QP lock held)
 *
 * Return: true if the QP was not in the error state before.
 */
bool kiwi_qp_to_error(struct kiwi_qp *qp)
{
	struct kiwi_qp_flushed out;
	unsigned long flags;
	bool flush;

	spin_lock_irqsave(&qp->lock, flags);
	flush = kiwi_qp_enter_error(qp, &out);
	spin_unlock_irqrestore(&qp->lock, flags);
	if (flush)
		kiwi_qp_flush_report(qp, &out);
	return flush;
}

/**
 * kiwi_qp_fail_wr - WR @idx failed locally: complete it, move the QP to ERROR
 * @qp: the QP (any context, no QP lock held)
 * @idx: SQ index of the WR, in [sq.cons, tx.next)
 * @status: its completion status
 *
 * As kiwi_sq_fail() then kiwi_qp_to_error(), in one hold of qp->lock: the
 * Reads and atomics flushed before @idx hand their sinks back with their
 * completions, and RX places into a sink only while the QP is connected,
 * under the same lock, so no octet lands there once they are queued.
 */
void kiwi_qp_fail_wr(struct kiwi_qp *qp, u32 idx, u8 status)
{
	struct kiwi_qp_flushed out;
	unsigned long flags;
	bool flush;
	int res;

	spin_lock_irqsave(&qp->lock, flags);
	res = kiwi_sq_fail_locked(qp, idx, status);
	flush = kiwi_qp_enter_error(qp, &out);
	spin_unlock_irqrestore(&qp->lock, flags);
	kiwi_cq_signal(to_kcq(qp->ibqp.send_cq), res);
	if (flush)
		kiwi_qp_flush_report(qp, &out);
}

/*
 * Ask the CM to close the stream. TX and RX call this without the mutex:
 * detach stops them before it lets go of the ep; everyone else holds
 * tx.llp_mutex.
 */
void kiwi_qp_close_llp(struct kiwi_qp *qp, bool abortive)
{
	struct kiwi_ep *ep = READ_ONCE(qp->tx.ep);

	if (ep)
		qp->tx.llp->close(ep, abortive);
}

/* A graceful close began (SQD, TERMINATE): the CM bounds it. As above. */
void kiwi_qp_drain_llp(struct kiwi_qp *qp)
{
	struct kiwi_ep *ep = READ_ONCE(qp->tx.ep);

	if (ep)
		qp->tx.llp->drain(ep);
}

/* ORD/IRD: the negotiated value, within what kiwi supports (at least 1). */
static u32 kiwi_llp_rd(u16 v, u32 max)
{
	return clamp_t(u32, v, 1, max);
}

static int kiwi_llp_setup(struct kiwi_qp *qp, struct socket *sock,
			  const struct kiwi_llp_params *p)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	struct kiwi_qp_tx *tx = &qp->tx;
	int rv;

	rv = kiwi_tx_attach(qp, kiwi_llp_rd(p->mpa.ord, KIWI_MAX_ORD),
			    kiwi_llp_rd(p->mpa.ird, KIWI_MAX_IRD));
	if (rv)
		return rv;
	memset(rx, 0, sizeof(*rx));
	tx->llp = p->ops;
	rv = p->ops->setup(qp, sock, p);
	if (rv) {
		kiwi_tx_release(qp);
		return rv;
	}
	tx->gated = p->tx_gated;
	tx->held = !p->initiator;
	tx->rtr = p->send_rtr ? p->mpa.rtr : 0;
	rx->expect_rtr = p->expect_rtr;
	rx->initiator = p->initiator;
	rx->rtr_types = p->mpa.rtr;
	rx->msn_send = KIWI_DDP_MSN_INIT;
	rx->msn_rreq = KIWI_DDP_MSN_INIT;
	rx->msn_term = KIWI_DDP_MSN_INIT;
	rx->msn_aresp = KIWI_DDP_MSN_INIT;
	return 0;
}

/*
 * Under qp->lock: the QP takes the stream and enters RTS.
 *
 * The QP's access flags are the consumer's and are honoured as set, with
 * one exception for an initiator. rdma_cm gives every iWARP QP the init
 * attributes of its iw_cm_id, remote write and read (iw_cm_init_qp_attr);
 * for a kernel initiator it applies them just before connect, but
 * librdmacm applies a user initiator's attributes once only, when the QP
 * is created and no iw_cm_id exists yet (flags 0), and never again. An
 * initiator whose flags were set at most once still holds those
 * placeholders: it gets iw_cm's rights now, as a kernel initiator would
 * (rping's client is read and written by its server). Flags set again
 * before connect, or in RTS, are the consumer's choice and stay exact.
 */
static bool kiwi_llp_commit(struct kiwi_qp *qp, struct kiwi_ep *ep,
			    struct socket *sock, bool initiator)
{
	struct kiwi_qp_tx *tx = &qp->tx;

	if (qp->state != IB_QPS_INIT || tx->sock)
		return false;
	tx->next = qp->sq.cons;
	tx->flushed_to = tx->next;
	tx->framed_to = tx->next;
	tx->ep = ep;
	WRITE_ONCE(tx->sock, sock);
	WRITE_ONCE(qp->llp_bound, true);
	/* A new stream: windows bound on an earlier one do not serve it. */
	qp->stream_id =
		atomic64_inc_return(&to_kdev(qp->ibqp.device)->qp_streams);
	qp->ord = tx->ord;
	qp->ird = tx->ird;
	if (initiator && qp->access_sets < 2)
		qp->access |= IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	WRITE_ONCE(qp->state, IB_QPS_RTS);
	trace_kiwi_qp_state(&qp->ibqp, IB_QPS_INIT, IB_QPS_RTS);
	return true;
}

int kiwi_qp_llp_attach(struct kiwi_qp *qp, struct kiwi_ep *ep,
		       struct socket *sock, const struct kiwi_llp_params *p)
{
	struct sock *sk = sock->sk;
	unsigned long flags;
	bool ok;
	int rv;

	mutex_lock(&qp->tx.llp_mutex);
	rv = -EINVAL;
	if (READ_ONCE(qp->state) != IB_QPS_INIT || qp->tx.sock)
		goto out;
	rv = kiwi_llp_setup(qp, sock, p);
	if (rv)
		goto out;
	kiwi_ep_get(ep);
	spin_lock_irqsave(&qp->lock, flags);
	ok = kiwi_llp_commit(qp, ep, sock, p->initiator);
	spin_unlock_irqrestore(&qp->lock, flags);
	if (!ok) {
		kiwi_ep_put(ep);
		kiwi_tx_release(qp);
		rv = -EINVAL;
		goto out;
	}
	write_lock_bh(&sk->sk_callback_lock);
	WRITE_ONCE(qp->rx.active, true);
	write_unlock_bh(&sk->sk_callback_lock);
	lock_sock(sk);
	p->ops->receive(qp, sk);
	release_sock(sk);
	kiwi_tx_kick(qp);
out:
	mutex_unlock(&qp->tx.llp_mutex);
	return rv;
}

bool kiwi_qp_llp_detach(struct kiwi_qp *qp)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	struct socket *sock;
	struct kiwi_ep *ep;
	unsigned long flags;
	bool whole;

	mutex_lock(&tx->llp_mutex);
	spin_lock_irqsave(&qp->lock, flags);
	sock = tx->sock;
	WRITE_ONCE(tx->sock, NULL);
	spin_unlock_irqrestore(&qp->lock, flags);
	if (!sock) {
		mutex_unlock(&tx->llp_mutex);
		return true;
	}
	/* No RX after this: its callers hold sk_callback_lock for reading. */
	write_lock_bh(&sock->sk->sk_callback_lock);
	WRITE_ONCE(qp->rx.active, false);
	write_unlock_bh(&sock->sk->sk_callback_lock);
	if (tx->llp->stop)
		tx->llp->stop(qp);
	/* No TX after this: a later run finds no socket. */
	cancel_work_sync(&tx->work);
	mutex_lock(&tx->run_lock);	/* a doorbell's run may still hold it */
	mutex_unlock(&tx->run_lock);
	whole = tx->sent == tx->len;
	ep = tx->ep;
	WRITE_ONCE(tx->ep, NULL);
	mutex_unlock(&tx->llp_mutex);
	kiwi_qp_to_error(qp);
	kiwi_rx_release(qp);
	kiwi_tx_release(qp);
	spin_lock_irqsave(&qp->lock, flags);
	WRITE_ONCE(qp->llp_bound, false);
	spin_unlock_irqrestore(&qp->lock, flags);
	/* Pairs with the waiter's check (wait_var_event()). */
	smp_mb();
	wake_up_var(&qp->llp_bound);
	kiwi_qp_last_wqe(qp);
	kiwi_ep_put(ep);
	return whole;
}

/*
 * Is a detach under way: the stream gone from the QP (tx.sock cleared)
 * but RX and TX not released yet? Under qp->lock, which both are written
 * under: read without it, a weakly ordered CPU could see an attach's
 * llp_bound before its tx.sock and take the attach for a detach, and the
 * waiter below would sleep until the stream's end.
 */
static bool kiwi_qp_llp_detaching(struct kiwi_qp *qp)
{
	unsigned long flags;
	bool detaching;

	spin_lock_irqsave(&qp->lock, flags);
	detaching = qp->llp_bound && !qp->tx.sock;
	spin_unlock_irqrestore(&qp->lock, flags);
	return detaching;
}

/**
 * kiwi_qp_llp_wait_detached - let a detach under way finish
 * @qp: the QP, about to be reset (process context, no lock held)
 *
 * The CM detaches a QP in its worker once the stream closed, and the QP
 * lets go of the socket first: before RX and TX released their buffers, a
 * reset (tx.sock is clear) would discard the rings TX may still read, and
 * the INIT after it would let another connection attach while the detach
 * frees what that attach just set up. modify_qp(RESET) therefore waits
 * here, which is bounded: the detach waits only for a TX run and RX to end.
 */
void kiwi_qp_llp_wait_detached(struct kiwi_qp *qp)
{
	wait_var_event(&qp->llp_bound, !kiwi_qp_llp_detaching(qp));
}

void kiwi_qp_llp_reply_sent(struct kiwi_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	WRITE_ONCE(qp->tx.held, false);
	spin_unlock_irqrestore(&qp->lock, flags);
	kiwi_tx_kick(qp);
}

void kiwi_qp_llp_ungate(struct kiwi_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	WRITE_ONCE(qp->tx.gated, false);
	spin_unlock_irqrestore(&qp->lock, flags);
	kiwi_tx_kick(qp);
}

/*
 * Is @sk the socket attached to @qp? The caller holds @sk's
 * sk_callback_lock for reading, so the answer holds until it drops it:
 * detach clears tx.sock before it takes that lock for writing, and no
 * other socket can be attached before that detach finished (llp_mutex).
 */
static bool kiwi_qp_owns_sk(struct kiwi_qp *qp, struct sock *sk)
{
	struct socket *sock = READ_ONCE(qp->tx.sock);

	return sock && sock->sk == sk;
}

/* RX may read @sk: it is attached to @qp and detach has not stopped RX. */
static bool kiwi_qp_rx_may_read(struct kiwi_qp *qp, struct sock *sk)
{
	return READ_ONCE(qp->rx.active) && kiwi_qp_owns_sk(qp, sk);
}

/* sk_data_ready, forwarded by the CM: the LLP has the socket read. */
void kiwi_qp_rx_ready(struct kiwi_qp *qp, struct sock *sk)
{
	if (kiwi_qp_rx_may_read(qp, sk))
		qp->tx.llp->data_ready(qp, sk);
}

void kiwi_qp_rx_read_rest(struct kiwi_qp *qp, struct sock *sk)
{
	if (kiwi_qp_rx_may_read(qp, sk))
		qp->tx.llp->receive(qp, sk);
}

/*
 * sk_write_space, forwarded by the CM under sk_callback_lock: TX may
 * continue. TCP calls this on every ACK while SOCK_NOSPACE is set, and a
 * failed non-blocking send sets it. Like sk_stream_write_space(), wake TX
 * only once the socket is writeable again and clear the flag then, so one
 * stall costs one wakeup instead of one per ACK, and TX resumes with room
 * for more than a sliver.
 */
void kiwi_qp_tx_space(struct kiwi_qp *qp, struct sock *sk)
{
	struct socket *sock = sk->sk_socket;

	if (!kiwi_qp_owns_sk(qp, sk) || !sock || !sk_stream_is_writeable(sk))
		return;
	clear_bit(SOCK_NOSPACE, &sock->flags);
	kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_TX_WAKEUPS);
	kiwi_tx_kick(qp);
}
