// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: memory regions and their STags: the registration verbs (DMA, user
 * and fast-reg MRs, map_mr_sg, dereg_mr). What the QP engine calls (lookup,
 * checks, copies, invalidation, IB_WR_REG_MR) is in mem_access.c.
 *
 * An STag is index << 8 | key: the 24-bit index names the MR in the
 * device's mr_xa table, the 8-bit key is chosen at random at registration
 * (and by the consumer for fast-reg MRs, ib_update_fast_reg_key()), so a
 * stale STag of a freed and reused index is unlikely to match.
 * lkey == rkey == STag.
 *
 * kiwi has no DMA device, so ib_core uses virtual DMA: DMA addresses are
 * kernel virtual addresses. A DMA MR (ib_alloc_pd's local_dma_lkey: kiwi
 * does not claim IBK_LOCAL_DMA_LKEY) takes them as they are; a fast-reg
 * page list holds the kernel virtual addresses of pages.
 *
 * Memory windows (mem_mw.c) are STags of the same table. An MR with
 * windows bound cannot be deregistered (-EBUSY, as ibv_dereg_mr(3)
 * says). Reregistration (rereg_mr) is in mem_rereg.c. Zero-based and
 * on-demand registrations are not supported: such access flags fail
 * with -EOPNOTSUPP.
 */
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "kiwi.h"
#include "conn.h"

/* The per-device count an STag of @kind is charged to. */
static atomic_t *kiwi_mr_count(struct kiwi_device *kdev,
			       enum kiwi_mr_kind kind)
{
	return kind == KIWI_MR_MW ? &kdev->num_mw : &kdev->num_mr;
}

/**
 * kiwi_mr_new - allocate an STag object, unpublished
 * @ibpd: its protection domain
 * @kind: an MR kind, or KIWI_MR_MW for a memory window
 * @access: IB_ACCESS_* of the registration
 *
 * Allocates a zeroed MR and reserves an STag index for it, bounded by
 * KIWI_MAX_MR (KIWI_MAX_MW for windows). The index stays unpublished
 * (lookups see nothing) until kiwi_mr_publish().
 *
 * Return: the object in state KIWI_MR_INVALID, or ERR_PTR(-ENOMEM).
 */
struct kiwi_mr *kiwi_mr_new(struct ib_pd *ibpd, enum kiwi_mr_kind kind,
			    int access)
{
	struct kiwi_device *kdev = to_kdev(ibpd->device);
	atomic_t *count = kiwi_mr_count(kdev, kind);
	struct kiwi_mr *mr;
	u32 idx;
	int rv;

	if (!kiwi_count_get(count, kind == KIWI_MR_MW ? KIWI_MAX_MW :
						       KIWI_MAX_MR))
		return ERR_PTR(-ENOMEM);
	mr = kzalloc(sizeof(*mr),
		     kind == KIWI_MR_USER || kind == KIWI_MR_MW ?
		     KIWI_GFP_USER : GFP_KERNEL);
	if (!mr) {
		rv = -ENOMEM;
		goto err_count;
	}
	rv = xa_alloc_cyclic(&kdev->mr_xa, &idx, NULL,
			     XA_LIMIT(1, KIWI_STAG_INDEX_MAX), &kdev->mr_next,
			     GFP_KERNEL);
	if (rv < 0)
		goto err_free;
	mr->kind = kind;
	mr->pd = ibpd;
	refcount_set(&mr->ref, 1);
	atomic_set(&mr->state, KIWI_MR_INVALID);
	mr->stag = idx << KIWI_STAG_KEY_BITS | get_random_u8();
	mr->access = access;
	mr->ibmr.lkey = mr->stag;
	mr->ibmr.rkey = mr->stag;
	spin_lock_init(&mr->state_lock);
	return mr;

err_free:
	kfree(mr);
err_count:
	atomic_dec(count);
	return ERR_PTR(rv);
}

/* Release what the registration maps: pinned pages and page arrays. */
static void kiwi_mr_release_mem(struct kiwi_mr *mr)
{
	if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->upages);
	kfree(mr->pages);
	kfree(mr->reg_pages);
}

/* Undo kiwi_mr_new() for an MR that was never published. */
void kiwi_mr_discard(struct ib_pd *ibpd, struct kiwi_mr *mr)
{
	struct kiwi_device *kdev = to_kdev(ibpd->device);

	xa_erase(&kdev->mr_xa, kiwi_stag_index(mr->stag));
	atomic_dec(kiwi_mr_count(kdev, mr->kind));
	kiwi_mr_release_mem(mr);
	kfree(mr);
}

/*
 * Make the complete MR visible to STag lookups in state @state. On
 * failure the MR is discarded.
 */
struct ib_mr *kiwi_mr_publish(struct ib_pd *ibpd, struct kiwi_mr *mr,
			      int state)
{
	struct kiwi_device *kdev = to_kdev(ibpd->device);
	void *old;

	atomic_set(&mr->state, state);
	/* The index is reserved: storing into it allocates nothing. */
	old = xa_store(&kdev->mr_xa, kiwi_stag_index(mr->stag), mr, GFP_KERNEL);
	if (xa_is_err(old)) {
		kiwi_mr_discard(ibpd, mr);
		return ERR_PTR(xa_err(old));
	}
	return &mr->ibmr;
}

/* A kernel MR covering all of memory (ib_alloc_pd()'s local_dma_lkey). */
struct ib_mr *kiwi_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct kiwi_mr *mr;
	int rv;

	rv = kiwi_mr_access_ok(access);
	if (rv)
		return ERR_PTR(rv);
	mr = kiwi_mr_new(ibpd, KIWI_MR_DMA, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->iova = 0;
	mr->length = U64_MAX;
	mr->ibmr.length = U64_MAX;
	return kiwi_mr_publish(ibpd, mr, KIWI_MR_VALID);
}

/* The pinned pages of a user MR in address order, for O(1) lookup. */
static int kiwi_mr_user_pages(struct kiwi_mr *mr)
{
	struct ib_umem *umem = mr->umem;
	unsigned long first = ALIGN_DOWN(umem->address, PAGE_SIZE);
	size_t n = (ALIGN(umem->address + umem->length, PAGE_SIZE) - first) >>
		   PAGE_SHIFT;
	struct sg_page_iter it;
	size_t i = 0;

	mr->upages = kvcalloc(n, sizeof(*mr->upages), KIWI_GFP_USER);
	if (!mr->upages)
		return -ENOMEM;
	for_each_sgtable_page(&umem->sgt_append.sgt, &it, 0) {
		if (i == n)
			return -EFAULT;
		mr->upages[i++] = sg_page_iter_page(&it);
	}
	return i == n ? 0 : -EFAULT;
}

/**
 * kiwi_mr_pin - pin the memory of a user MR and list its pages
 * @mr: a user MR from kiwi_mr_new(), unpublished
 * @ibdev: the device
 * @start: user virtual address of the memory
 * @length: octets
 * @access: IB_ACCESS_* of the registration (write rights pin writable)
 *
 * On failure the caller discards @mr, which releases what was pinned.
 *
 * Return: 0, or -ENOMEM / -EFAULT / an ib_umem_get() error.
 */
int kiwi_mr_pin(struct kiwi_mr *mr, struct ib_device *ibdev, u64 start,
		u64 length, int access)
{
	struct ib_umem *umem = ib_umem_get(ibdev, start, length, access);

	if (IS_ERR(umem))
		return PTR_ERR(umem);
	mr->umem = umem;
	return kiwi_mr_user_pages(mr);
}

/* Set the geometry of a user MR: @iova names its first octet for peers. */
void kiwi_mr_set_range(struct kiwi_mr *mr, u64 iova, u64 length)
{
	mr->iova = iova;
	mr->length = length;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
}

/**
 * kiwi_mr_user_args_ok - validate a user registration's arguments
 * @access: IB_ACCESS_* flags (IB_ACCESS_MW_BIND allowed)
 * @iova: address the registration starts at for WRs and peers
 * @length: octets to register
 * @udata: the request's driver data
 *
 * What reg_user_mr and rereg_user_mr both check before pinning anything.
 * ib_core checks that the user's memory does not wrap, not that @iova
 * plus @length does not: an MR whose last octets lie beyond 2^64 could
 * never be reached whole, so it is refused.
 *
 * Return: 0, or the error of kiwi_mr_access_ok() or kiwi_udata_in_ok(),
 * or -EINVAL for a length of 0 or above KIWI_MAX_MR_SIZE, or a range that
 * wraps.
 */
int kiwi_mr_user_args_ok(int access, u64 iova, u64 length,
			 struct ib_udata *udata)
{
	int rv;

	rv = kiwi_mr_access_ok(access & ~IB_ACCESS_MW_BIND);
	if (!rv)
		rv = kiwi_udata_in_ok(udata);
	if (rv)
		return rv;
	if (!length || length > KIWI_MAX_MR_SIZE || length - 1 > U64_MAX - iova)
		return -EINVAL;
	return 0;
}

/**
 * kiwi_reg_user_mr - ib_device_ops.reg_user_mr
 * @ibpd: protection domain
 * @start: user virtual address of the memory
 * @length: length in octets, 1 .. KIWI_MAX_MR_SIZE
 * @iova: address the peer and the WRs use for @start
 * @access: IB_ACCESS_* flags
 * @udata: user data (no driver data in kiwi's ABI)
 *
 * Pins the pages with ib_umem_get() and lists them for the data path.
 * IB_ACCESS_MW_BIND is allowed here only: windows bind to user MRs.
 *
 * Return: the MR, or ERR_PTR(-EINVAL / -EOPNOTSUPP / -ENOMEM / -EFAULT).
 */
struct ib_mr *kiwi_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata)
{
	struct kiwi_mr *mr;
	int rv;

	rv = kiwi_mr_user_args_ok(access, iova, length, udata);
	if (rv)
		return ERR_PTR(rv);
	mr = kiwi_mr_new(ibpd, KIWI_MR_USER, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	kiwi_mr_set_range(mr, iova, length);
	rv = kiwi_mr_pin(mr, ibpd->device, start, length, access);
	if (rv) {
		kiwi_mr_discard(ibpd, mr);
		return ERR_PTR(rv);
	}
	return kiwi_mr_publish(ibpd, mr, KIWI_MR_VALID);
}

/* A fast-register MR (kernel consumers: ib_alloc_mr() + ib_map_mr_sg()). */
struct ib_mr *kiwi_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg)
{
	struct kiwi_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > KIWI_MAX_FRMR_PAGES)
		return ERR_PTR(-EINVAL);
	mr = kiwi_mr_new(ibpd, KIWI_MR_FAST_REG, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->pages = kcalloc(max_num_sg, sizeof(*mr->pages), GFP_KERNEL);
	mr->reg_pages = kcalloc(max_num_sg, sizeof(*mr->reg_pages), GFP_KERNEL);
	if (!mr->pages || !mr->reg_pages) {
		kiwi_mr_discard(ibpd, mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->max_pages = max_num_sg;
	return kiwi_mr_publish(ibpd, mr, KIWI_MR_INVALID);
}

/*
 * One page list entry: with virtual DMA it is the kernel virtual address of
 * a page-size block in the linear map (vmalloc'd buffers reach us through
 * their pages' linear addresses). Anything else is refused.
 */
static int kiwi_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct kiwi_mr *mr = to_kmr(ibmr);
	unsigned long last = addr + ibmr->page_size - 1;

	if (mr->npages == mr->max_pages)
		return -ENOMEM;
	if (!virt_addr_valid((void *)(unsigned long)addr) ||
	    !virt_addr_valid((void *)last))
		return -EINVAL;
	mr->pages[mr->npages++] = addr;
	return 0;
}

/**
 * kiwi_map_mr_sg - ib_device_ops.map_mr_sg: build a fast-reg page list
 * @ibmr: an MR from kiwi_alloc_mr()
 * @sg: scatterlist to map
 * @sg_nents: entries in @sg
 * @sg_offset: offset into the first entry (in/out)
 *
 * The list takes effect with the next IB_WR_REG_MR (kiwi_mr_fast_reg());
 * a registration that is still valid keeps its geometry until then.
 *
 * Return: number of @sg entries mapped, or -EINVAL for a non-fast-reg MR
 * or a page size that is not a power of two of at least 4 KiB.
 */
int kiwi_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	struct kiwi_mr *mr = to_kmr(ibmr);

	if (mr->kind != KIWI_MR_FAST_REG || !is_power_of_2(ibmr->page_size) ||
	    ibmr->page_size < KIWI_FRMR_MIN_PAGE)
		return -EINVAL;
	mr->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, kiwi_set_page);
}

/**
 * kiwi_dereg_mr - ib_device_ops.dereg_mr
 * @ibmr: the MR
 * @udata: user data (unused)
 *
 * Fails while memory windows are bound to the MR; from then on none can
 * be. Unpublishes the STag, invalidates the MR (kiwi_mr_quiesce()), then
 * unpins the memory. Holders keep only the structure, which the last
 * kiwi_mr_put() frees: dereg never waits for a stalled connection. An MR
 * that kiwi_rereg_user_mr() replaced is invalid already and may hold no
 * memory any more.
 *
 * Return: 0, or -EBUSY while windows are bound to the MR.
 */
int kiwi_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct kiwi_device *kdev = to_kdev(ibmr->device);
	struct kiwi_mr *mr = to_kmr(ibmr);

	/*
	 * Fully ordered: a bind sees -1, or we see its count. A rereg_mr
	 * that replaced the MR left -1.
	 */
	if (atomic_cmpxchg(&mr->mw_bound, 0, -1) > 0)
		return -EBUSY;
	xa_erase(&kdev->mr_xa, kiwi_stag_index(mr->stag));
	atomic_dec(&kdev->num_mr);
	kiwi_mr_quiesce(mr);
	kiwi_mr_release_mem(mr);
	kiwi_mr_put(mr);
	return 0;
}
