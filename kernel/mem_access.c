// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: memory access for the data path (kernel/conn.h): STag lookup with
 * a reference, the checks of RFC 5040/5041 (valid STag, PD, access rights,
 * bounds), address to page resolution, copies, invalidation and the
 * fast-register work request. Uses no ib_core function, so the KUnit
 * module links it alone (tests/kunit/mem_kunit.c).
 *
 * Every access to registered memory runs inside an RCU read-side section
 * and checks that the MR is still valid, so dereg_mr can release the
 * memory after one grace period (see struct kiwi_mr). Addresses are
 * iova-based: the TO of a tagged message, or the addr of an SGE.
 *
 * A memory window is an STag of the same table (KIWI_MR_MW): the same
 * lookup, validity protocol and validators see it; its pages are its
 * parent MR's, resolved through the parent inside the same RCU section.
 * Its STag is for peers only: a local SGE naming it fails the checks.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/vmalloc.h>

#include "kiwi.h"
#include "conn.h"

#define KIWI_MR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |	\
			IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)

/**
 * kiwi_mr_access_ok - validate the access flags of a registration
 * @access: IB_ACCESS_* flags; optional (hint) flags are ignored
 *
 * Return: 0, -EOPNOTSUPP for unsupported rights, -EINVAL for remote write
 * or remote atomic without local write (the verbs rule).
 */
int kiwi_mr_access_ok(int access)
{
	if (access & ~(KIWI_MR_ACCESS | IB_ACCESS_OPTIONAL))
		return -EOPNOTSUPP;
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/**
 * kiwi_mr_get - look an STag up for the data path
 * @kdev: the device
 * @stag: the STag (lkey or rkey)
 *
 * Any context. Only a valid MR whose current key matches is returned. An
 * STag that is stale, guessed or invalidated takes no reference at all,
 * not even for a moment: a reference held while the consumer registers
 * the MR again makes that fast-register fail (-EBUSY), and a peer must
 * not be able to cause that by probing STags. (A lookup racing the
 * consumer's own invalidation of a valid STag may still hold one
 * briefly.)
 *
 * Return: the MR with a reference (drop it with kiwi_mr_put()), or NULL.
 */
struct kiwi_mr *kiwi_mr_get(struct kiwi_device *kdev, u32 stag)
{
	struct kiwi_mr *mr;

	rcu_read_lock();
	mr = xa_load(&kdev->mr_xa, kiwi_stag_index(stag));
	/* The structure is freed after a grace period (kfree_rcu). */
	if (mr && (atomic_read(&mr->state) != KIWI_MR_VALID ||
		   READ_ONCE(mr->stag) != stag))
		mr = NULL;
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	if (!mr)
		return NULL;
	/* Pairs with the full barriers of dereg and fast-register. */
	smp_mb__after_atomic();
	if (atomic_read(&mr->state) != KIWI_MR_VALID ||
	    READ_ONCE(mr->stag) != stag) {
		kiwi_mr_put(mr);
		return NULL;
	}
	return mr;
}

/* Drop a reference; the last one (after dereg_mr) frees the structure. */
void kiwi_mr_put(struct kiwi_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		kfree_rcu(mr, rcu);
}

/* Is [@addr, @addr + @len) inside [@iova, @iova + @length)? No overflow. */
static bool kiwi_mr_covers(u64 iova, u64 length, u64 addr, u64 len)
{
	return addr >= iova && len <= length && addr - iova <= length - len;
}

/**
 * kiwi_mr_check - may this access use @mr?
 * @mr: the MR from kiwi_mr_get(@stag)
 * @stag: the STag of the access
 * @pd: the PD of the QP doing the access
 * @access: IB_ACCESS_* rights the access needs (0: local read)
 * @addr: first address (iova-based)
 * @len: octets; 0 checks the STag, PD and rights and that @addr is inside
 *       or at the end of the registration
 *
 * For the local SGEs of work requests: a memory window's STag is not a
 * local key, and fails as an invalid STag.
 *
 * Return: KIWI_MEM_OK or the first failed check, in the order of RFC 5041
 * section 7.1: STag valid (and key), PD, rights, bounds.
 */
enum kiwi_mem_status kiwi_mr_check(const struct kiwi_mr *mr, u32 stag,
				   const struct ib_pd *pd, int access,
				   u64 addr, u64 len)
{
	if (mr->kind == KIWI_MR_MW ||
	    atomic_read_acquire(&mr->state) != KIWI_MR_VALID ||
	    READ_ONCE(mr->stag) != stag)
		return KIWI_MEM_STAG;
	if (mr->pd != pd)
		return KIWI_MEM_PD;
	if ((READ_ONCE(mr->access) & access) != access)
		return KIWI_MEM_ACCESS;
	if (!kiwi_mr_covers(READ_ONCE(mr->iova), READ_ONCE(mr->length), addr,
			    len))
		return KIWI_MEM_BOUNDS;
	return KIWI_MEM_OK;
}

/**
 * kiwi_mr_stag_info - what proto/'s receive validators know of an STag
 * @mr: the MR from kiwi_mr_get(@stag)
 * @stag: the STag a peer named
 * @st: filled in for kiwi_ddp_check_tagged(), kiwi_rdmap_check_rreq() and
 *      kiwi_rdmap_check_inval()
 *
 * A snapshot: placement re-checks validity and bounds at each copy. The PD
 * identity is the ib_pd's address (kiwi_ddp_stream.pd of the QP alike).
 * The peer may invalidate only a fast-reg MR registered with remote
 * rights (see kiwi_mr_inval_check()) and a type 2 window, which is bound
 * to one QP (stream); a type 1 window is PD-scoped like an MR.
 */
void kiwi_mr_stag_info(const struct kiwi_mr *mr, u32 stag,
		       struct kiwi_ddp_stag_info *st)
{
	int access;

	st->valid = atomic_read_acquire(&mr->state) == KIWI_MR_VALID &&
		    READ_ONCE(mr->stag) == stag;
	access = READ_ONCE(mr->access);
	st->pd = (uintptr_t)mr->pd;
	st->qp = KIWI_DDP_ANY_QP;
	st->access = kiwi_ddp_acc(access);
	if (mr->kind == KIWI_MR_FAST_REG &&
	    (access & (IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE)))
		st->access |= KIWI_DDP_ACC_REMOTE_INV;
	if (mr->kind == KIWI_MR_MW) {
		st->qp = READ_ONCE(mr->qp_stream);
		st->access &= ~KIWI_DDP_ACC_LOCAL_WRITE;
		if (READ_ONCE(mr->mw_type) == IB_MW_TYPE_2)
			st->access |= KIWI_DDP_ACC_REMOTE_INV;
	}
	st->base = READ_ONCE(mr->iova);
	st->len = READ_ONCE(mr->length);
}

/* The page of a kernel virtual address: linear map or vmalloc. */
static struct page *kiwi_kva_page(unsigned long kva)
{
	if (virt_addr_valid((void *)kva))
		return virt_to_page((void *)kva);
	if (is_vmalloc_addr((void *)kva))
		return vmalloc_to_page((void *)kva);
	return NULL;
}

/*
 * The kernel virtual address of octet @pos of a fast-reg registration:
 * page list entry, then the offset in that page-size block. *@chunk is
 * limited to the rest of the block. 0 if the page list does not reach.
 */
static unsigned long kiwi_mr_frmr_kva(const struct kiwi_mr *mr, u64 pos,
				      u32 *chunk)
{
	u32 shift = READ_ONCE(mr->page_shift);
	u64 bsz = BIT_ULL(shift);
	u64 idx, in;

	pos += READ_ONCE(mr->iova) & (bsz - 1);
	idx = pos >> shift;
	in = pos & (bsz - 1);
	if (idx >= READ_ONCE(mr->nreg) || idx >= mr->max_pages)
		return 0;
	*chunk = min_t(u64, *chunk, bsz - in);
	return READ_ONCE(mr->reg_pages[idx]) + in;
}

/**
 * kiwi_mr_page - resolve an address of a valid MR to a page
 * @mr: an MR the caller holds
 * @addr: the address (iova-based)
 * @len: octets wanted from @addr, at least 1
 * @page: the page holding @addr
 * @offset: offset of @addr in *@page
 * @chunk: octets from *@offset on that are in *@page (1 .. @len)
 *
 * The caller must be in an RCU read-side section (rcu_read_lock(), or
 * bottom halves disabled) from this call until it is done with *@page:
 * dereg_mr releases the memory one grace period after invalidating.
 * Writing to *@page needs a registration with IB_ACCESS_LOCAL_WRITE
 * (kiwi_mr_check()): pages of a read-only user MR may be shared. A
 * window resolves through the MR it is bound to, which must be valid too.
 *
 * Return: 0, or -EFAULT if the MR is not valid or the range is not in it.
 */
int kiwi_mr_page(const struct kiwi_mr *mr, u64 addr, u32 len,
		 struct page **page, u32 *offset, u32 *chunk)
{
	u64 iova = READ_ONCE(mr->iova);
	const struct kiwi_mr *parent;
	unsigned long kva;
	u64 pos;

	RCU_LOCKDEP_WARN(!rcu_read_lock_any_held(),
			 "page resolved outside an RCU read-side section");
	if (!len || atomic_read_acquire(&mr->state) != KIWI_MR_VALID ||
	    !kiwi_mr_covers(iova, READ_ONCE(mr->length), addr, len))
		return -EFAULT;
	if (mr->kind == KIWI_MR_MW) {
		parent = rcu_dereference_check(mr->parent,
					       rcu_read_lock_any_held());
		return parent && parent->kind != KIWI_MR_MW ?
		       kiwi_mr_page(parent, addr, len, page, offset, chunk) :
		       -EFAULT;
	}
	pos = addr - iova;
	*chunk = len;
	if (mr->kind == KIWI_MR_USER) {
		pos += offset_in_page(mr->umem->address);
		*page = mr->upages[pos >> PAGE_SHIFT];
		*offset = offset_in_page(pos);
	} else {
		kva = mr->kind == KIWI_MR_FAST_REG ?
		      kiwi_mr_frmr_kva(mr, pos, chunk) : (unsigned long)addr;
		*page = kva ? kiwi_kva_page(kva) : NULL;
		*offset = offset_in_page(kva);
	}
	if (!*page)
		return -EFAULT;
	*chunk = min_t(u32, *chunk, PAGE_SIZE - *offset);
	return 0;
}

/* Copy between @buf and [@addr, @addr + @len) of @mr, page by page. */
static int kiwi_mr_copy(const struct kiwi_mr *mr, u64 addr, u8 *buf, u32 len,
			bool to_mr)
{
	struct page *page;
	u32 off, n;
	int rv = 0;

	rcu_read_lock();
	while (len) {
		rv = kiwi_mr_page(mr, addr, len, &page, &off, &n);
		if (rv)
			break;
		if (to_mr)
			memcpy_to_page(page, off, buf, n);
		else
			memcpy_from_page(buf, page, off, n);
		addr += n;
		buf += n;
		len -= n;
	}
	rcu_read_unlock();
	return rv;
}

/*
 * May @mr's pages be written? An MR needs local write (remote write
 * implies it): a read-only user MR's pages were pinned without write
 * access. A window needs remote write, which it gets only over an MR
 * with local write (kiwi_mw_bind()).
 */
static bool kiwi_mr_writable(const struct kiwi_mr *mr)
{
	return READ_ONCE(mr->access) & (mr->kind == KIWI_MR_MW ?
					IB_ACCESS_REMOTE_WRITE :
					IB_ACCESS_LOCAL_WRITE);
}

/**
 * kiwi_mr_write - copy into registered memory
 * @mr: an MR the caller holds and checked for this range
 * @addr: first address (iova-based)
 * @src: the octets
 * @len: how many
 *
 * Any context. The MR must be writable (kiwi_mr_writable()).
 *
 * Return: 0, or -EFAULT (MR invalidated meanwhile, or out of range).
 */
int kiwi_mr_write(const struct kiwi_mr *mr, u64 addr, const void *src,
		  u32 len)
{
	if (!kiwi_mr_writable(mr))
		return -EFAULT;
	return kiwi_mr_copy(mr, addr, (u8 *)src, len, true);
}

/**
 * kiwi_mr_read - copy out of registered memory
 * @mr: an MR the caller holds and checked for this range
 * @addr: first address (iova-based)
 * @dst: where to
 * @len: how many octets
 *
 * Return: 0, or -EFAULT (MR invalidated meanwhile, or out of range).
 */
int kiwi_mr_read(const struct kiwi_mr *mr, u64 addr, void *dst, u32 len)
{
	return kiwi_mr_copy(mr, addr, dst, len, false);
}

/**
 * kiwi_mr_atomic - execute an RFC 7306 atomic on registered memory
 * @mr: an MR the caller holds and checked for the request
 *      (kiwi_rdmap_check_areq(): remote atomic right, aligned, in bounds)
 * @r: the request
 * @orig: out: the target's value before the operation
 *
 * Any context. The read-modify-write is a compare-and-exchange loop on the
 * kernel mapping of the target page, so it is atomic against every other
 * atomic on the host, the CPU's own (IB_ATOMIC_GLOB) included: an aligned
 * 8-octet target never crosses a page. A failed CmpSwap only reads. A
 * registration whose iova and address differ in their low bits may map an
 * aligned TO to an unaligned address: that is refused like a vanished MR.
 *
 * Return: 0, or -EFAULT (MR invalidated meanwhile, out of range, no
 * remote atomic right, or an unaligned mapping).
 */
int kiwi_mr_atomic(const struct kiwi_mr *mr, const struct kiwi_rdmap_areq *r,
		   u64 *orig)
{
	struct page *page;
	u64 *word, old, val;
	bool stored = false;
	u32 off, n;
	int rv;

	if (!(READ_ONCE(mr->access) & IB_ACCESS_REMOTE_ATOMIC))
		return -EFAULT;
	rcu_read_lock();
	rv = kiwi_mr_page(mr, r->to, sizeof(u64), &page, &off, &n);
	if (!rv && (n != sizeof(u64) || !IS_ALIGNED(off, sizeof(u64))))
		rv = -EFAULT;
	if (!rv) {
		word = kmap_local_page(page) + off;
		old = READ_ONCE(*word);
		do {
			stored = kiwi_rdmap_atomic_apply(r, old, &val);
			if (!stored)
				break;
		} while (!try_cmpxchg64(word, &old, val));
		kunmap_local(word);
		if (stored)
			flush_dcache_page(page);
		*orig = old;
	}
	rcu_read_unlock();
	return rv;
}

/**
 * kiwi_mw_detach - a window lets go of the MR it was bound to
 * @win: the window, its state_lock held, its state no longer VALID
 *
 * Any context. The MR's count of bound windows drops (ordered after the
 * state change, for kiwi_dereg_mr()) and so does the window's reference.
 * Readers that fetched the parent under RCU before keep using it for the
 * rest of their section: the MR's dereg waits a grace period (mw_seen).
 */
void kiwi_mw_detach(struct kiwi_mr *win)
{
	struct kiwi_mr *parent;

	parent = rcu_replace_pointer(win->parent, NULL,
				     lockdep_is_held(&win->state_lock));
	if (!parent)
		return;
	/* The window's new state is visible before dereg_mr may proceed. */
	smp_mb__before_atomic();
	atomic_dec(&parent->mw_bound);
	kiwi_mr_put(parent);
}

/*
 * Invalidate type 2 window @mw under @stag for a QP in @pd: Local
 * Invalidate (@peer_qp KIWI_INV_LOCAL), or a peer's Send with Invalidate
 * on the QP of stream_id @peer_qp, which must be the QP the window is
 * bound to. A type
 * 1 window cannot be invalidated (it is unbound by a zero-length bind).
 */
static enum kiwi_mem_status kiwi_mw_invalidate(struct kiwi_mr *mw, u32 stag,
					       const struct ib_pd *pd,
					       u64 peer_qp)
{
	enum kiwi_mem_status st = KIWI_MEM_OK;
	unsigned long flags;

	if (READ_ONCE(mw->stag) != stag)
		return KIWI_MEM_STAG;
	if (mw->pd != pd)
		return KIWI_MEM_PD;
	if (READ_ONCE(mw->mw_type) != IB_MW_TYPE_2)
		return KIWI_MEM_ACCESS;
	spin_lock_irqsave(&mw->state_lock, flags);
	if (READ_ONCE(mw->stag) != stag) {
		st = KIWI_MEM_STAG;
	} else if (atomic_read(&mw->state) != KIWI_MR_VALID) {
		if (peer_qp != KIWI_INV_LOCAL)
			st = KIWI_MEM_STAG;
	} else if (peer_qp != KIWI_INV_LOCAL &&
		   READ_ONCE(mw->qp_stream) != peer_qp) {
		st = KIWI_MEM_ACCESS;
	} else {
		/* Fully ordered like the MRs' cmpxchg: see kiwi_mr_get(). */
		atomic_xchg(&mw->state, KIWI_MR_INVALID);
		kiwi_mw_detach(mw);
	}
	spin_unlock_irqrestore(&mw->state_lock, flags);
	return st;
}

/*
 * May @stag of @mr be invalidated by a WR of a QP in @pd? Only fast-reg
 * MRs can be (as in rxe): a user or DMA MR lives until dereg_mr. A peer
 * (Send with Invalidate) may invalidate only an MR registered for remote
 * access, an STag meant for peers (RFC 5040 section 8.1.1, item 7: such
 * an MR is PD-scoped, an exception kept for the kernel ULPs that rely on
 * it). Windows: kiwi_mw_invalidate().
 */
static enum kiwi_mem_status kiwi_mr_inval_check(const struct kiwi_mr *mr,
						u32 stag,
						const struct ib_pd *pd,
						bool remote)
{
	if (READ_ONCE(mr->stag) != stag)
		return KIWI_MEM_STAG;
	if (mr->pd != pd)
		return KIWI_MEM_PD;
	if (mr->kind != KIWI_MR_FAST_REG)
		return KIWI_MEM_ACCESS;
	if (remote && !(READ_ONCE(mr->access) &
			(IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE)))
		return KIWI_MEM_ACCESS;
	return KIWI_MEM_OK;
}

/*
 * Take @mr from VALID to INVALID if it is still registered under @stag.
 * The key was checked before; a fast-register may have re-registered the
 * MR under another key since, which this must not invalidate. Under
 * @mr->state_lock: a state seen there is not changed under us by another
 * invalidation, a fast-register or a dereg, so two invalidations of one
 * key at once both succeed and none undoes a dereg's INVALID.
 */
static enum kiwi_mem_status kiwi_mr_inval_state(struct kiwi_mr *mr, u32 stag,
						bool remote)
{
	enum kiwi_mem_status st = KIWI_MEM_OK;
	unsigned long flags;

	spin_lock_irqsave(&mr->state_lock, flags);
	if (READ_ONCE(mr->stag) != stag)
		st = KIWI_MEM_STAG;
	else if (atomic_read(&mr->state) != KIWI_MR_VALID)
		st = remote ? KIWI_MEM_STAG : KIWI_MEM_OK;
	else	/* Fully ordered: see kiwi_mr_get(). */
		atomic_xchg(&mr->state, KIWI_MR_INVALID);
	spin_unlock_irqrestore(&mr->state_lock, flags);
	return st;
}

/**
 * kiwi_mr_invalidate - Local Invalidate, or a received Send with Invalidate
 * @kdev: the device
 * @stag: the STag to invalidate
 * @pd: the PD of the QP
 * @peer_qp: KIWI_INV_LOCAL (0) for a Local Invalidate, else the stream_id
 *           of the QP whose peer asked (Send with Invalidate)
 *
 * Any context. Later checks and accesses fail; an access already copying on
 * another CPU finishes that one copy, within an RCU grace period: a Local
 * Invalidate WR, a Read with Invalidate and a received Send with
 * Invalidate complete only after one (kiwi_sq_execute(), rx_gp.c) unless
 * no access holds the MR (kiwi_mr_inval_busy()).
 * Invalidating an invalid STag again is allowed locally; a peer must name
 * a valid one.
 *
 * Return: KIWI_MEM_OK; KIWI_MEM_STAG (no such STag, wrong key, or not
 * valid for a peer); KIWI_MEM_PD (another PD); KIWI_MEM_ACCESS: the STag
 * cannot be invalidated (not a fast-reg MR or a type 2 window; for a peer,
 * an MR without remote rights or a window bound to another QP: RDMAP
 * "STag cannot be invalidated").
 */
enum kiwi_mem_status kiwi_mr_invalidate(struct kiwi_device *kdev, u32 stag,
					const struct ib_pd *pd, u64 peer_qp)
{
	bool remote = peer_qp != KIWI_INV_LOCAL;
	enum kiwi_mem_status st = KIWI_MEM_STAG;
	struct kiwi_mr *mr;

	rcu_read_lock();
	mr = xa_load(&kdev->mr_xa, kiwi_stag_index(stag));
	if (mr && mr->kind == KIWI_MR_MW) {
		st = kiwi_mw_invalidate(mr, stag, pd, peer_qp);
		rcu_read_unlock();
		return st;
	}
	if (mr)
		st = kiwi_mr_inval_check(mr, stag, pd, remote);
	if (st == KIWI_MEM_OK)
		st = kiwi_mr_inval_state(mr, stag, remote);
	rcu_read_unlock();
	return st;
}

/**
 * kiwi_mr_inval_busy - may an access to an invalidated STag still copy?
 * @kdev: the device
 * @stag: an STag the caller just invalidated (kiwi_mr_invalidate())
 *
 * Any context. The completion that hands the memory back to the consumer
 * waits an RCU grace period only if this returns true. Every copy into or
 * out of registered memory runs while its caller holds a reference from
 * kiwi_mr_get(), which fails once the STag is invalid; a holder drops its
 * reference only after its last copy. So when a fast-reg MR's own
 * reference is its only one, no copy runs and none can start: the memory
 * is the consumer's at once. This is dereg_mr's rule. A window (an access
 * through it holds the window, and may still read its parent), an MR a
 * window was ever bound to, or an STag no longer found: true.
 *
 * Return: true if the completion must wait for a grace period.
 */
bool kiwi_mr_inval_busy(struct kiwi_device *kdev, u32 stag)
{
	struct kiwi_mr *mr;
	bool busy = true;

	rcu_read_lock();
	mr = xa_load(&kdev->mr_xa, kiwi_stag_index(stag));
	if (mr && mr->kind == KIWI_MR_FAST_REG) {
		/*
		 * Pairs with kiwi_mr_get(): a lookup that took its reference
		 * after this read sees the MR invalid and drops it unused.
		 */
		smp_mb();
		busy = refcount_read(&mr->ref) != 1 || READ_ONCE(mr->mw_seen);
		/* The last holder's copies come before its put (release). */
		if (!busy)
			smp_acquire__after_ctrl_dep();
	}
	rcu_read_unlock();
	return busy;
}

/**
 * kiwi_mr_quiesce - invalidate an MR for good and let its accesses end
 * @mr: a user, DMA or fast-reg MR whose windows can no longer bind
 *      (@mr->mw_bound is -1)
 *
 * Makes @mr invalid. If data-path holders remain, or a window was ever
 * bound (an access through a window holds the window, not the MR), one
 * RCU grace period lets accesses that already passed the state check
 * finish (they run under rcu_read_lock()); later ones fail. Afterwards no
 * access uses @mr's memory: the caller may release or hand it over.
 */
void kiwi_mr_quiesce(struct kiwi_mr *mr)
{
	unsigned long flags;

	/* Not while an invalidation or a fast-register looks at the state. */
	spin_lock_irqsave(&mr->state_lock, flags);
	atomic_set(&mr->state, KIWI_MR_INVALID);
	spin_unlock_irqrestore(&mr->state_lock, flags);
	/* Pairs with kiwi_mr_get(): a later holder sees INVALID. */
	smp_mb();
	if (refcount_read(&mr->ref) != 1 || READ_ONCE(mr->mw_seen))
		synchronize_rcu();
	else	/* order the caller's release after the last holder's put */
		smp_acquire__after_ctrl_dep();
}

/**
 * kiwi_mr_fast_reg - execute IB_WR_REG_MR
 * @mr: a fast-reg MR
 * @key: the STag to register under (ib_reg_wr.key); its index must be the
 *       MR's, its low 8 bits are the new key
 * @access: IB_ACCESS_* of the registration
 *
 * Takes the page list, iova and length from the last map_mr_sg. The MR
 * must be invalid, and no data-path holder from an earlier registration
 * may still hold it (its later accesses would reach the new one).
 *
 * Return: 0; -EINVAL for a wrong MR, key, page list or state; -EOPNOTSUPP
 * for unsupported access; -EBUSY while old holders remain.
 */
int kiwi_mr_fast_reg(struct kiwi_mr *mr, u32 key, int access)
{
	u32 psz = mr->ibmr.page_size;
	u64 iova = mr->ibmr.iova;
	u64 length = mr->ibmr.length;
	u32 n = mr->npages;
	unsigned long flags;
	u64 end;
	int rv;

	if (mr->kind != KIWI_MR_FAST_REG ||
	    kiwi_stag_index(key) != kiwi_stag_index(mr->stag))
		return -EINVAL;
	rv = kiwi_mr_access_ok(access);
	if (rv)
		return rv;
	if (!is_power_of_2(psz) || psz < KIWI_FRMR_MIN_PAGE ||
	    n > mr->max_pages ||
	    check_add_overflow(iova & (psz - 1), length, &end) ||
	    end > (u64)n << ilog2(psz))
		return -EINVAL;
	spin_lock_irqsave(&mr->state_lock, flags);
	if (atomic_read(&mr->state) != KIWI_MR_INVALID) {
		spin_unlock_irqrestore(&mr->state_lock, flags);
		return -EINVAL;
	}
	/* Pairs with kiwi_mr_get(): it sees INVALID or we see its reference. */
	smp_mb();
	if (refcount_read(&mr->ref) != 1) {
		spin_unlock_irqrestore(&mr->state_lock, flags);
		return -EBUSY;
	}
	WRITE_ONCE(mr->stag, key);
	WRITE_ONCE(mr->access, access);
	WRITE_ONCE(mr->iova, iova);
	WRITE_ONCE(mr->length, length);
	WRITE_ONCE(mr->page_shift, ilog2(psz));
	WRITE_ONCE(mr->nreg, n);
	memcpy(mr->reg_pages, mr->pages, n * sizeof(*mr->pages));
	atomic_set_release(&mr->state, KIWI_MR_VALID);
	spin_unlock_irqrestore(&mr->state_lock, flags);
	return 0;
}
