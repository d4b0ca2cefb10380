// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: ib_device_ops.rereg_user_mr, what ibv_rereg_mr(3) reaches.
 *
 * A reregistration never changes an MR in place: it builds a new MR under
 * a new STag (another index, a new key) with the new PD, rights and
 * translation and returns it; ib_core puts it in the old MR's place and
 * deregisters the old one in the same command. No access sees a mix of
 * old and new: the old MR becomes invalid for good and the accesses that
 * already passed its checks finish (kiwi_mr_quiesce(): one RCU grace
 * period if any may be running) before the new MR becomes valid. A peer
 * naming the old STag afterwards is refused like any invalid STag.
 *
 * Without IB_MR_REREG_TRANS the new MR takes over the old one's pinned
 * pages, so it maps exactly the registered memory, unless they were
 * pinned read-only and the new rights write (IB_ACCESS_LOCAL_WRITE and
 * what implies it): then the MR's address range is pinned again,
 * writable, which finds the pages mapped there now.
 *
 * Refused, with the old MR unchanged and valid: an MR with memory windows
 * bound (-EBUSY, as dereg_mr), a kernel MR (-EINVAL), rights that
 * kiwi_mr_access_ok() refuses, a length of 0 or above KIWI_MAX_MR_SIZE
 * (-EINVAL), memory ib_umem_get() cannot pin. ib_core itself refuses
 * flags other than IB_MR_REREG_TRANS, _PD and _ACCESS (-EOPNOTSUPP).
 */
#include "kiwi.h"

/* The old registration's values for what @flags does not change. */
static void kiwi_rereg_keep(const struct kiwi_mr *old, int flags, u64 *start,
			    u64 *length, u64 *iova, int *access)
{
	if (!(flags & IB_MR_REREG_ACCESS))
		*access = old->access;
	if (!(flags & IB_MR_REREG_TRANS)) {
		*start = old->umem->address;
		*length = old->length;
		*iova = old->iova;
	}
}

/*
 * Commit: no window binds to @old from now on (-EBUSY if one is bound,
 * and nothing changed), @old goes invalid and quiet, its pages move to
 * @mr if @take, and @mr is published valid.
 */
static struct ib_mr *kiwi_rereg_commit(struct ib_pd *ibpd,
				       struct kiwi_mr *old, struct kiwi_mr *mr,
				       bool take)
{
	/* Fully ordered: a bind sees -1, or we see its count. */
	if (atomic_cmpxchg(&old->mw_bound, 0, -1) != 0) {
		kiwi_mr_discard(ibpd, mr);
		return ERR_PTR(-EBUSY);
	}
	kiwi_mr_quiesce(old);
	if (take) {
		mr->umem = old->umem;
		mr->upages = old->upages;
		old->umem = NULL;
		old->upages = NULL;
	}
	return kiwi_mr_publish(ibpd, mr, KIWI_MR_VALID);
}

/**
 * kiwi_rereg_user_mr - ib_device_ops.rereg_user_mr
 * @ibmr: the MR to reregister
 * @flags: IB_MR_REREG_TRANS, IB_MR_REREG_PD, IB_MR_REREG_ACCESS
 * @start: with IB_MR_REREG_TRANS, user virtual address of the new memory
 * @length: with IB_MR_REREG_TRANS, its length
 * @iova: with IB_MR_REREG_TRANS, the address WRs and peers use for @start
 * @access: with IB_MR_REREG_ACCESS, the new IB_ACCESS_* flags
 * @ibpd: the PD of the result (@ibmr's own without IB_MR_REREG_PD)
 * @udata: user data (no driver data in kiwi's ABI)
 *
 * Return: the MR replacing @ibmr (never NULL: the change is never made in
 * place), or ERR_PTR(-EINVAL / -EOPNOTSUPP / -EBUSY / -ENOMEM / -EFAULT)
 * with @ibmr unchanged.
 */
struct ib_mr *kiwi_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 iova, int access,
				 struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct kiwi_mr *old = to_kmr(ibmr);
	struct kiwi_mr *mr;
	bool take;
	int rv;

	if (old->kind != KIWI_MR_USER)
		return ERR_PTR(-EINVAL);
	kiwi_rereg_keep(old, flags, &start, &length, &iova, &access);
	rv = kiwi_mr_user_args_ok(access, iova, length, udata);
	if (rv)
		return ERR_PTR(rv);
	take = !(flags & IB_MR_REREG_TRANS) &&
	       (old->umem->writable || !ib_access_writable(access));
	mr = kiwi_mr_new(ibpd, KIWI_MR_USER, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	kiwi_mr_set_range(mr, iova, length);
	if (!take) {
		rv = kiwi_mr_pin(mr, ibpd->device, start, length, access);
		if (rv) {
			kiwi_mr_discard(ibpd, mr);
			return ERR_PTR(rv);
		}
	}
	return kiwi_rereg_commit(ibpd, old, mr, take);
}
