// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: memory windows (IB types 1 and 2B; RFC 5040 STags that grant
 * remote access to a range of an MR).
 *
 * A window is an STag object of kind KIWI_MR_MW in the device's STag table
 * (kernel/mem.c): data-path lookups, checks, page resolution and
 * invalidation treat it like an MR (mem_access.c), with the pages of the
 * MR it is bound to, its parent. User space alone has windows: ib_core
 * offers alloc_mw only through uverbs, and kernel WRs cannot bind.
 *
 * Binding is a send queue WR (KIWI_WR_BIND_MW) that TX executes in SQ
 * order: libkiwi posts one for ibv_bind_mw() (type 1) and for
 * IBV_WR_BIND_MW (type 2). The SQE is hostile input: the window is found
 * by the index of the new STag and must belong to the QP's PD, so a
 * process can bind only its own windows, to its own MRs.
 *
 * Rules (IBA 10.6.7 as libibverbs exposes them, rxe for reference):
 *  - the MR is a user MR of the same PD registered with
 *    IB_ACCESS_MW_BIND, the range lies inside it, and remote write or
 *    remote atomic needs the MR's local write; zero-based windows are
 *    not supported;
 *  - type 1: PD-scoped (any QP of the PD may use it); binding again
 *    replaces the binding, a zero-length bind unbinds it; it cannot be
 *    invalidated;
 *  - type 2 (2B: PD and QP): bound to the QP that bound it, only when not
 *    bound (invalidate first), never with zero length; invalidated by
 *    Local Invalidate or by the peer's Send with Invalidate on that QP;
 *  - the key byte of the new STag is the consumer's.
 * A failed bind completes with IB_WC_MW_BIND_ERR and the QP goes to error.
 *
 * Rebinding a bound type 1 window, like fast-registering an MR again,
 * fails while a data-path holder of the old binding remains (an access
 * in flight); unbinding and invalidation never wait: later accesses fail,
 * and the WR completes after an RCU grace period, when the copies that
 * passed their check before are done.
 */
#include "kiwi.h"
#include "conn.h"

#define KIWI_MW_ACCESS	(IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_ATOMIC)

/**
 * kiwi_alloc_mw - ib_device_ops.alloc_mw
 * @ibmw: the core MW; ib_core set its PD and type (1 or 2)
 * @udata: user data (no driver data in kiwi's ABI)
 *
 * The window starts unbound (invalid) under a fresh STag with a random
 * key, which ib_core returns as its rkey.
 *
 * Return: 0, -EINVAL (driver data), -ENOMEM (KIWI_MAX_MW reached).
 */
int kiwi_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct kiwi_mw *mw = to_kmw(ibmw);
	struct kiwi_mr *win;
	struct ib_mr *pub;
	int rv;

	rv = kiwi_udata_in_ok(udata);
	if (rv)
		return rv;
	win = kiwi_mr_new(ibmw->pd, KIWI_MR_MW, 0);
	if (IS_ERR(win))
		return PTR_ERR(win);
	win->mw_type = ibmw->type;
	win->qp_stream = KIWI_DDP_ANY_QP;
	pub = kiwi_mr_publish(ibmw->pd, win, KIWI_MR_INVALID);
	if (IS_ERR(pub))
		return PTR_ERR(pub);
	mw->win = win;
	ibmw->rkey = win->stag;
	return 0;
}

/**
 * kiwi_dealloc_mw - ib_device_ops.dealloc_mw
 * @ibmw: the MW
 *
 * Allowed while bound: unpublishes the STag and unbinds the window. As for
 * dereg_mr, if data-path holders remain one RCU grace period lets the
 * copies that passed their check finish before this returns.
 *
 * Return: 0.
 */
int kiwi_dealloc_mw(struct ib_mw *ibmw)
{
	struct kiwi_device *kdev = to_kdev(ibmw->device);
	struct kiwi_mr *win = to_kmw(ibmw)->win;
	unsigned long flags;

	xa_erase(&kdev->mr_xa, kiwi_stag_index(win->stag));
	spin_lock_irqsave(&win->state_lock, flags);
	atomic_xchg(&win->state, KIWI_MR_INVALID);
	kiwi_mw_detach(win);
	/* A bind in flight (it holds the window) fails from now on. */
	WRITE_ONCE(win->mw_type, 0);
	spin_unlock_irqrestore(&win->state_lock, flags);
	atomic_dec(&kdev->num_mw);
	if (refcount_read(&win->ref) != 1)
		synchronize_rcu();
	else	/* order the free after the last holder's put */
		smp_acquire__after_ctrl_dep();
	kiwi_mr_put(win);
	return 0;
}

/*
 * The window at the index of @stag if it is one of @pd's, with a
 * reference: whatever its state or key (the bind sets the key).
 */
static struct kiwi_mr *kiwi_mw_lookup(struct kiwi_device *kdev, u32 stag,
				      const struct ib_pd *pd)
{
	struct kiwi_mr *win;

	rcu_read_lock();
	win = xa_load(&kdev->mr_xa, kiwi_stag_index(stag));
	if (win && (win->kind != KIWI_MR_MW || win->pd != pd ||
		    !refcount_inc_not_zero(&win->ref)))
		win = NULL;
	rcu_read_unlock();
	return win;
}

/*
 * The MR of a binding with length: a valid user MR of @win's PD that
 * allows binding and @access, covering the range. Return it held, or
 * NULL.
 */
static struct kiwi_mr *kiwi_mw_parent(struct kiwi_device *kdev,
				      const struct kiwi_mr *win,
				      const struct kiwi_sqe_bind *b, int access)
{
	struct kiwi_mr *mr = kiwi_mr_get(kdev, b->mr_lkey);
	int mr_access;

	if (!mr)
		return NULL;
	mr_access = READ_ONCE(mr->access);
	if (mr->kind != KIWI_MR_USER || !(mr_access & IB_ACCESS_MW_BIND) ||
	    ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	     !(mr_access & IB_ACCESS_LOCAL_WRITE)) ||
	    kiwi_mr_check(mr, b->mr_lkey, win->pd, 0, b->addr,
			  b->length) != KIWI_MEM_OK) {
		kiwi_mr_put(mr);
		return NULL;
	}
	return mr;
}

/*
 * Under @win->state_lock: may the window take a new binding? Type 2 only when
 * not bound; type 1 also when bound; neither once deallocated, nor while
 * holders of an old binding remain (besides the registration and our
 * lookup). On success the window is BUSY, and was @old before: no lookup
 * takes a new reference.
 */
static bool kiwi_mw_claim(struct kiwi_mr *win, int *old)
{
	int from = atomic_read(&win->state);

	if (!win->mw_type || from == KIWI_MR_BUSY ||
	    (from == KIWI_MR_VALID && win->mw_type != IB_MW_TYPE_1))
		return false;
	/* Fully ordered: kiwi_mr_get() sees BUSY or we see its reference. */
	if (atomic_cmpxchg(&win->state, from, KIWI_MR_BUSY) != from)
		return false;
	if (refcount_read(&win->ref) != 2) {
		atomic_set(&win->state, from);
		return false;
	}
	*old = from;
	return true;
}

/*
 * Under @win->state_lock, @win BUSY: take @parent (held; the reference
 * passes to the window) for the binding @b. False if the MR is being
 * deregistered.
 */
static bool kiwi_mw_attach(struct kiwi_qp *qp, struct kiwi_mr *win,
			   struct kiwi_mr *parent, u32 stag,
			   const struct kiwi_sqe_bind *b)
{
	WRITE_ONCE(parent->mw_seen, true);
	if (!atomic_inc_unless_negative(&parent->mw_bound))
		return false;
	kiwi_mw_detach(win);
	rcu_assign_pointer(win->parent, parent);
	WRITE_ONCE(win->stag, stag);
	WRITE_ONCE(win->access, b->access);
	WRITE_ONCE(win->iova, b->addr);
	WRITE_ONCE(win->length, b->length);
	WRITE_ONCE(win->qp_stream, win->mw_type == IB_MW_TYPE_2 ?
		   qp->stream_id : KIWI_DDP_ANY_QP);
	atomic_set_release(&win->state, KIWI_MR_VALID);
	return true;
}

/*
 * Under @win->state_lock: a zero-length bind of type 1 window @win. It is
 * unbound at once, whatever holders remain, under its new STag.
 */
static void kiwi_mw_unbind(struct kiwi_mr *win, u32 stag)
{
	atomic_xchg(&win->state, KIWI_MR_INVALID);
	kiwi_mw_detach(win);
	WRITE_ONCE(win->stag, stag);
	WRITE_ONCE(win->access, 0);
	WRITE_ONCE(win->length, 0);
}

/* Under @win->state_lock: bind with @parent (held), or unbind if NULL. */
static bool kiwi_mw_bind_locked(struct kiwi_qp *qp, struct kiwi_mr *win,
				struct kiwi_mr *parent, u32 stag,
				const struct kiwi_sqe_bind *b)
{
	int old;

	if (!parent) {
		if (win->mw_type != IB_MW_TYPE_1)
			return false;
		kiwi_mw_unbind(win, stag);
		return true;
	}
	if (!kiwi_mw_claim(win, &old))
		return false;
	if (kiwi_mw_attach(qp, win, parent, stag, b))
		return true;
	atomic_set(&win->state, old);
	return false;
}

/**
 * kiwi_mw_bind - execute a KIWI_WR_BIND_MW send queue element
 * @qp: the QP that posted it (TX context)
 * @sqe: the element, copied out of the ring (hostile)
 * @revoked: set when the bind took access away (a zero-length bind of a
 *           type 1 window): the WR completes after an RCU grace period
 *
 * Return: IB_WC_SUCCESS or IB_WC_MW_BIND_ERR.
 */
u8 kiwi_mw_bind(struct kiwi_qp *qp, const struct kiwi_sqe *sqe, bool *revoked)
{
	struct kiwi_device *kdev = to_kdev(qp->ibqp.device);
	const struct kiwi_sqe_bind *b = &sqe->bind;
	struct kiwi_mr *parent = NULL;
	struct kiwi_mr *win;
	unsigned long flags;
	bool ok = false;

	*revoked = false;
	win = kiwi_mw_lookup(kdev, sqe->inv_or_rkey, qp->ibqp.pd);
	if (!win)
		return IB_WC_MW_BIND_ERR;
	if (b->access & ~KIWI_MW_ACCESS)
		goto out;
	if (b->length) {
		parent = kiwi_mw_parent(kdev, win, b, b->access);
		if (!parent)
			goto out;
	}
	spin_lock_irqsave(&win->state_lock, flags);
	ok = kiwi_mw_bind_locked(qp, win, parent, sqe->inv_or_rkey, b);
	spin_unlock_irqrestore(&win->state_lock, flags);
	if (ok)
		parent = NULL;
	*revoked = ok && !b->length;
out:
	if (parent)
		kiwi_mr_put(parent);
	kiwi_mr_put(win);
	return ok ? IB_WC_SUCCESS : IB_WC_MW_BIND_ERR;
}
