// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: RC queue pairs: create, modify (state machine), query, destroy and
 * reference counting.
 *
 * A new QP starts in INIT (iWARP IDLE), as on every iWARP RNIC: the
 * connection manager attaches the stream and so moves the QP to RTS
 * (qp_llp.c). modify_qp to RTR is accepted without effect while the QP
 * waits for its connection (rdma_cm asks for it before accept and
 * connect) and in RTS, to RTS only in RTS: before the connection it is
 * refused, as only the CM makes a QP RTS. SQD (iWARP CLOSING) asks the
 * engine for a graceful close (a no-op in TERMINATE and ERROR, where the
 * stream is closing or gone), ERR for an abortive one; the stream's end
 * then detaches the QP. Documentation/datapath.md has the state table.
 */
#include <linux/log2.h>

#include "kiwi.h"
#include "kiwi_trace.h"

/* Attributes an iWARP RC QP accepts in modify_qp. */
#define KIWI_QP_ATTR_MASK (IB_QP_STATE | IB_QP_CUR_STATE |		\
			   IB_QP_EN_SQD_ASYNC_NOTIFY | IB_QP_ACCESS_FLAGS |	\
			   IB_QP_PKEY_INDEX | IB_QP_PORT |			\
			   IB_QP_MAX_QP_RD_ATOMIC | IB_QP_MAX_DEST_RD_ATOMIC)

#define KIWI_QP_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |	\
			IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)

static void kiwi_qp_release(struct kref *ref)
{
	complete(&container_of(ref, struct kiwi_qp, ref)->released);
}

void kiwi_qp_get(struct kiwi_qp *qp)
{
	kref_get(&qp->ref);
}

void kiwi_qp_put(struct kiwi_qp *qp)
{
	kref_put(&qp->ref, kiwi_qp_release);
}

/**
 * kiwi_qp_lookup - find a QP by the number a ULP named
 * @kdev: the device
 * @qpn: the QP number
 * @ref: take a reference (drop it with kiwi_qp_put()); else mark the QP
 *       as returned to iw_cm (@cm_named), which takes its own reference
 *       later (kiwi_iw_get_qp())
 *
 * Under the qp_xa lock, which destroy's unpublishing takes too: a QP
 * found here is not yet released, and destroy sees the mark.
 *
 * Return: the QP or NULL.
 */
struct kiwi_qp *kiwi_qp_lookup(struct kiwi_device *kdev, int qpn, bool ref)
{
	struct kiwi_qp *qp;

	if (qpn <= 0)
		return NULL;
	xa_lock(&kdev->qp_xa);
	qp = xa_load(&kdev->qp_xa, qpn);
	if (qp && ref)
		kiwi_qp_get(qp);
	else if (qp)
		WRITE_ONCE(qp->cm_named, true);
	xa_unlock(&kdev->qp_xa);
	return qp;
}

/**
 * kiwi_qp_caller_owns - may the caller bind a connection to @qp?
 * @qp: a QP named by number in iw_connect or iw_accept
 *
 * Those run in the context of whoever called rdma_connect()/rdma_accept()
 * (through rdma_ucm for user space), and rdma_cm lets the caller name any
 * QP number. A user QP may be named by its own process only, a kernel QP
 * by kernel threads (where kernel ULPs connect) or the thread that created
 * it, never by a user process through rdma_ucm.
 *
 * Return: true if the caller owns @qp.
 */
bool kiwi_qp_caller_owns(const struct kiwi_qp *qp)
{
	if (qp->ibqp.uobject)
		return task_tgid(current) == qp->owner;
	return (current->flags & PF_KTHREAD) || task_pid(current) == qp->owner;
}

/* Has destroy begun? (A connect that took the QP checks after its scan.) */
bool kiwi_qp_destroyed(struct kiwi_qp *qp)
{
	unsigned long flags;
	bool gone;

	spin_lock_irqsave(&qp->lock, flags);
	gone = qp->destroyed;
	spin_unlock_irqrestore(&qp->lock, flags);
	return gone;
}

static int kiwi_qp_check_init(struct ib_qp_init_attr *attr)
{
	struct ib_qp_cap *cap = &attr->cap;

	if (attr->qp_type != IB_QPT_RC || attr->create_flags)
		return -EOPNOTSUPP;
	if (cap->max_send_wr > KIWI_MAX_QP_WR ||
	    cap->max_recv_wr > KIWI_MAX_QP_WR ||
	    cap->max_send_sge > KIWI_MAX_SGE ||
	    cap->max_recv_sge > KIWI_MAX_SGE ||
	    cap->max_inline_data > KIWI_MAX_INLINE)
		return -EINVAL;
	if (attr->srq && (cap->max_recv_wr || cap->max_recv_sge))
		return -EINVAL;
	if (attr->sq_sig_type != IB_SIGNAL_ALL_WR &&
	    attr->sq_sig_type != IB_SIGNAL_REQ_WR)
		return -EINVAL;
	return 0;
}

static int kiwi_qp_respond(struct kiwi_qp *qp, struct ib_udata *udata)
{
	struct kiwi_uresp_create_qp resp = {
		.sq_key = kiwi_ring_key(&qp->sq),
		.rq_key = kiwi_ring_key(&qp->rq),
		.num_sqe = qp->sq.num,
		.num_rqe = qp->rq.num,
		.qp_id = qp->ibqp.qp_num,
	};

	if (kiwi_uctx_features(udata) & KIWI_CTX_FEAT_SQ_DOORBELL)
		resp.features = KIWI_QP_FEAT_SQ_DOORBELL;

	return kiwi_udata_respond(udata, &resp, sizeof(resp));
}

static int kiwi_qp_alloc_rings(struct kiwi_qp *qp,
			       struct ib_qp_init_attr *attr,
			       struct ib_udata *udata)
{
	struct kiwi_device *kdev = to_kdev(qp->ibqp.device);
	struct ib_ucontext *ibuc = kiwi_uctx(udata);
	int rv;

	rv = kiwi_ring_alloc(kdev, &qp->sq,
			     roundup_pow_of_two(max(attr->cap.max_send_wr, 1U)),
			     sizeof(struct kiwi_sqe), ibuc);
	if (rv)
		return rv;
	/* Not connected: the first SQEs need the doorbell. */
	kiwi_ring_set_doorbell(&qp->sq, true);
	if (attr->srq)
		return 0;
	rv = kiwi_ring_alloc(kdev, &qp->rq,
			     roundup_pow_of_two(max(attr->cap.max_recv_wr, 1U)),
			     sizeof(struct kiwi_rqe), ibuc);
	if (rv)
		kiwi_ring_free(&qp->sq);
	return rv;
}

static void kiwi_qp_init_fields(struct kiwi_qp *qp,
				struct ib_qp_init_attr *attr)
{
	spin_lock_init(&qp->lock);
	kref_init(&qp->ref);
	init_completion(&qp->released);
	qp->state = IB_QPS_INIT;
	qp->max_send_sge = attr->cap.max_send_sge;
	qp->max_recv_sge = attr->cap.max_recv_sge;
	qp->max_inline = attr->cap.max_inline_data;
	qp->sq_sig_type = attr->sq_sig_type;
	qp->stream_id =
		atomic64_inc_return(&to_kdev(qp->ibqp.device)->qp_streams);
	kiwi_tx_init(qp);
}

/* Who may name the QP to the CM (kiwi_qp_caller_owns()). */
static struct pid *kiwi_qp_owner(struct ib_udata *udata)
{
	return get_task_pid(current, udata ? PIDTYPE_TGID : PIDTYPE_PID);
}

/* Report the granted capacities back through @attr->cap. */
static void kiwi_qp_fill_cap(struct kiwi_qp *qp, struct ib_qp_cap *cap)
{
	cap->max_send_wr = qp->sq.num;
	cap->max_recv_wr = qp->rq.num;
	cap->max_send_sge = qp->max_send_sge;
	cap->max_recv_sge = qp->max_recv_sge;
	cap->max_inline_data = qp->max_inline;
}

int kiwi_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		   struct ib_udata *udata)
{
	struct kiwi_device *kdev = to_kdev(ibqp->device);
	struct kiwi_qp *qp = to_kqp(ibqp);
	u32 qpn;
	int rv;

	rv = kiwi_qp_check_init(attr);
	if (!rv)
		rv = kiwi_udata_in_ok(udata);
	if (rv)
		return rv;
	if (!kiwi_count_get(&kdev->num_qp, KIWI_MAX_QP))
		return -ENOMEM;
	kiwi_qp_init_fields(qp, attr);
	qp->owner = kiwi_qp_owner(udata);
	rv = kiwi_qp_alloc_rings(qp, attr, udata);
	if (rv)
		goto err_count;
	rv = kiwi_swq_alloc(qp);
	if (!rv)
		rv = kiwi_rx_gp_alloc(qp, attr, !!udata);
	if (rv)
		goto err_rings;
	/*
	 * The number is reserved, not published: iw_cm's lookup must not
	 * find (and take a reference on) a QP whose creation may still fail
	 * and free it.
	 */
	rv = xa_alloc_cyclic(&kdev->qp_xa, &qpn, NULL,
			     XA_LIMIT(1, KIWI_MAX_QPN), &kdev->qp_next,
			     GFP_KERNEL);
	if (rv < 0)
		goto err_rings;
	ibqp->qp_num = qpn;
	if (udata) {
		rv = kiwi_qp_respond(qp, udata);
		if (rv)
			goto err_xa;
	}
	/* The index is reserved: storing into it allocates nothing. */
	rv = xa_err(xa_store(&kdev->qp_xa, qpn, qp, GFP_KERNEL));
	if (rv)
		goto err_xa;
	kiwi_qp_fill_cap(qp, &attr->cap);
	kiwi_stats_qp_add(qp);
	return 0;

err_xa:
	xa_erase(&kdev->qp_xa, qpn);
err_rings:
	kiwi_rx_gp_free(qp);
	kiwi_swq_free(qp);
	kiwi_ring_free(&qp->rq);
	kiwi_ring_free(&qp->sq);
err_count:
	put_pid(qp->owner);
	atomic_dec(&kdev->num_qp);
	return rv;
}

/* Under qp->lock: may the QP go from its state to @next? */
static bool kiwi_qp_state_ok(struct kiwi_qp *qp, enum ib_qp_state next)
{
	enum ib_qp_state cur = qp->state;

	switch (next) {
	case IB_QPS_RESET:
		/* Set while a stream is attached and until its detach ended. */
		return !qp->llp_bound;
	case IB_QPS_ERR:
		return true;
	case IB_QPS_INIT:
		return cur == IB_QPS_RESET || cur == IB_QPS_INIT;
	case IB_QPS_RTR:
		/* iw_cm's init attributes ask for RTR before a connection. */
		return cur == IB_QPS_INIT || cur == IB_QPS_RTS;
	case IB_QPS_RTS:
		/* Only the CM makes an iWARP QP RTS, by attaching a stream. */
		return cur == IB_QPS_RTS;
	case IB_QPS_SQD:
		/*
		 * A graceful close of a stream that is closing or gone already
		 * asks for nothing (rdma_disconnect() after the peer's close).
		 */
		return kiwi_qp_connected(qp) || cur == IB_QPS_SQE ||
		       cur == IB_QPS_ERR;
	default:
		/* SQE (iWARP TERMINATE) is entered by the engine only. */
		return false;
	}
}

static int kiwi_qp_check_modify(struct kiwi_qp *qp, struct ib_qp_attr *attr,
				int mask)
{
	if (mask & ~KIWI_QP_ATTR_MASK)
		return -EINVAL;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != qp->state)
		return -EINVAL;
	if ((mask & IB_QP_STATE) && !kiwi_qp_state_ok(qp, attr->qp_state))
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~KIWI_QP_ACCESS))
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index)
		return -EINVAL;
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > KIWI_MAX_ORD)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > KIWI_MAX_IRD)
		return -EINVAL;
	return 0;
}

/*
 * Under qp->lock: enter @next. RTR (before a connection) and RTS (already
 * connected) change nothing; SQD lets TX drain the SQ and close. Returns
 * true if the rings must be flushed.
 */
static bool kiwi_qp_enter(struct kiwi_qp *qp, enum ib_qp_state next)
{
	enum ib_qp_state cur = qp->state;

	switch (next) {
	case IB_QPS_RTR:
	case IB_QPS_RTS:
		return false;
	case IB_QPS_SQD:
		/* What is queued now is sent; later WRs wait for the flush. */
		if (cur == IB_QPS_RTS)
			qp->tx.drain_to = qp->sq.cons + kiwi_sq_produced(qp);
		if (cur == IB_QPS_RTS || cur == IB_QPS_SQD) {
			qp->state = next;
			trace_kiwi_qp_state(&qp->ibqp, cur, next);
			qp->tx.close_req = true;
		}
		return false;
	case IB_QPS_RESET:
		qp->access_sets = 0;
		qp->last_wqe = false;
		kiwi_sq_discard(qp);
		kiwi_ring_discard(&qp->rq);
		kiwi_rx_gp_discard(qp);
		kiwi_ring_set_error(&qp->sq, false);
		kiwi_ring_set_error(&qp->rq, false);
		kiwi_ring_set_doorbell(&qp->sq, true);
		break;
	default:
		break;
	}
	qp->state = next;
	trace_kiwi_qp_state(&qp->ibqp, cur, next);
	return next == IB_QPS_ERR && cur != IB_QPS_ERR;
}

/*
 * After a state change to SQD or ERR of an attached QP: the engine closes
 * the stream, gracefully once what was queued went out (the CM resets it
 * if that takes longer than drain_timeout), or at once with a reset.
 */
static void kiwi_qp_llp_follow(struct kiwi_qp *qp, enum ib_qp_state next)
{
	if (next == IB_QPS_SQD) {
		mutex_lock(&qp->tx.llp_mutex);
		kiwi_qp_drain_llp(qp);
		mutex_unlock(&qp->tx.llp_mutex);
		kiwi_tx_kick(qp);
	} else if (next == IB_QPS_ERR) {
		mutex_lock(&qp->tx.llp_mutex);
		kiwi_qp_close_llp(qp, true);
		mutex_unlock(&qp->tx.llp_mutex);
	}
}

static void kiwi_qp_set_attrs(struct kiwi_qp *qp, struct ib_qp_attr *attr,
			      int mask)
{
	if (mask & IB_QP_ACCESS_FLAGS) {
		qp->access = attr->qp_access_flags;
		qp->access_sets = min(qp->access_sets + 1, 2);
	}
	/*
	 * A connection's ORD and IRD are what MPA negotiated; they cannot
	 * change under it, and query_qp keeps reporting them.
	 */
	if (qp->llp_bound)
		return;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->ord = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->ird = attr->max_dest_rd_atomic;
}

int kiwi_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata)
{
	struct kiwi_qp *qp = to_kqp(ibqp);
	struct kiwi_qp_flushed out;
	bool flush = false;
	unsigned long flags;
	int rv;

	rv = kiwi_udata_in_ok(udata);
	if (rv)
		return rv;
	if ((mask & IB_QP_STATE) && attr->qp_state == IB_QPS_RESET)
		kiwi_qp_llp_wait_detached(qp);
	spin_lock_irqsave(&qp->lock, flags);
	rv = kiwi_qp_check_modify(qp, attr, mask);
	if (!rv) {
		kiwi_qp_set_attrs(qp, attr, mask);
		if (mask & IB_QP_STATE)
			flush = kiwi_qp_enter(qp, attr->qp_state);
		if (flush)
			kiwi_qp_flush(qp, &out);
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	if (flush)
		kiwi_qp_flush_report(qp, &out);
	if (!rv && (mask & IB_QP_STATE))
		kiwi_qp_llp_follow(qp, attr->qp_state);
	return rv;
}

int kiwi_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init)
{
	struct kiwi_device *kdev = to_kdev(ibqp->device);
	struct kiwi_qp *qp = to_kqp(ibqp);
	unsigned long flags;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	spin_lock_irqsave(&qp->lock, flags);
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->qp_access_flags = qp->access;
	attr->max_rd_atomic = qp->ord;
	attr->max_dest_rd_atomic = qp->ird;
	spin_unlock_irqrestore(&qp->lock, flags);
	attr->path_mtu = ib_mtu_int_to_enum(READ_ONCE(kdev->netdev->mtu));
	attr->port_num = 1;
	kiwi_qp_fill_cap(qp, &attr->cap);
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_type;
	return 0;
}

/*
 * Unpublish the QP's number. iw_cm calls iw_get_qp() and then iw_add_ref()
 * under one spinlock with interrupts disabled, an RCU read-side section:
 * once the number is gone, a grace period lets a lookup that found the QP
 * take its reference before destroy waits for the references to go.
 */
static void kiwi_qp_unpublish(struct kiwi_device *kdev, struct kiwi_qp *qp)
{
	unsigned long flags;

	xa_erase(&kdev->qp_xa, qp->ibqp.qp_num);
	/* After the qp_xa lock: iw_get_qp()'s mark under it is visible. */
	if (READ_ONCE(qp->cm_named))
		synchronize_rcu();
	spin_lock_irqsave(&qp->lock, flags);
	qp->destroyed = true;
	spin_unlock_irqrestore(&qp->lock, flags);
}

/*
 * The QP leaves the QPN table first, so iw_get_qp() cannot find it any
 * more. Every connection using it is reset at once, a connect still
 * waiting for its MPA Reply included (the CM detaches the QP and reports
 * CLOSE or CONNECT_REPLY, after which iw_cm drops its reference); destroy
 * waits only for those references, never for the peer.
 */
int kiwi_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct kiwi_device *kdev = to_kdev(ibqp->device);
	struct kiwi_qp *qp = to_kqp(ibqp);

	kiwi_qp_unpublish(kdev, qp);
	kiwi_qp_to_error(qp);
	kiwi_qp_llp_follow(qp, IB_QPS_ERR);
	kiwi_cm_abort_qp(qp);
	kiwi_qp_put(qp);
	wait_for_completion(&qp->released);
	put_pid(qp->owner);
	cancel_work_sync(&qp->tx.work);
	kiwi_cq_clean(to_kcq(ibqp->send_cq), ibqp);
	kiwi_cq_clean(to_kcq(ibqp->recv_cq), ibqp);
	kiwi_rx_gp_free(qp);
	kiwi_swq_free(qp);
	kiwi_ring_free(&qp->rq);
	kiwi_ring_free(&qp->sq);
	kiwi_stats_qp_del(qp);
	atomic_dec(&kdev->num_qp);
	return 0;
}
