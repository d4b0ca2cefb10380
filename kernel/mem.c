// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: memory regions and their STags.
 *
 * An STag is index << 8 | key: the 24-bit index names the MR in the
 * device's mr_xa table, the 8-bit key is chosen at random at registration
 * (and by the consumer for fast-reg MRs, ib_update_fast_reg_key()), so a
 * stale STag of a freed and reused index is unlikely to match.
 * lkey == rkey == STag.
 *
 * Memory windows, atomics, zero-based and on-demand registrations are not
 * supported: such access flags fail with -EOPNOTSUPP.
 */
#include <linux/random.h>
#include <linux/slab.h>

#include "kiwi.h"

#define KIWI_MR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |	\
			IB_ACCESS_REMOTE_READ)

/* Validate MR access flags; optional (hint) flags are ignored. */
static int kiwi_mr_access_ok(int access)
{
	if (access & ~(KIWI_MR_ACCESS | IB_ACCESS_OPTIONAL))
		return -EOPNOTSUPP;
	if ((access & IB_ACCESS_REMOTE_WRITE) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/* Allocate a zeroed MR with a fresh STag, bounded by KIWI_MAX_MR. */
static struct kiwi_mr *kiwi_mr_new(struct ib_pd *ibpd, int access)
{
	struct kiwi_device *kdev = to_kdev(ibpd->device);
	struct kiwi_mr *mr;
	u32 idx;
	int rv;

	if (!kiwi_count_get(&kdev->num_mr, KIWI_MAX_MR))
		return ERR_PTR(-ENOMEM);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		rv = -ENOMEM;
		goto err_count;
	}
	rv = xa_alloc_cyclic(&kdev->mr_xa, &idx, mr,
			     XA_LIMIT(1, KIWI_STAG_INDEX_MAX), &kdev->mr_next,
			     GFP_KERNEL);
	if (rv < 0)
		goto err_free;
	mr->access = access;
	mr->ibmr.lkey = idx << KIWI_STAG_KEY_BITS | get_random_u8();
	mr->ibmr.rkey = mr->ibmr.lkey;
	return mr;

err_free:
	kfree(mr);
err_count:
	atomic_dec(&kdev->num_mr);
	return ERR_PTR(rv);
}

static void kiwi_mr_free_rcu(struct rcu_head *rcu)
{
	struct kiwi_mr *mr = container_of(rcu, struct kiwi_mr, rcu);

	kfree(mr->pages);
	kfree(mr);
}

/*
 * Unpublish the STag, then free the MR once concurrent RCU readers of
 * mr_xa are done (module exit waits for these callbacks: rcu_barrier()).
 */
static void kiwi_mr_delete(struct ib_device *ibdev, struct kiwi_mr *mr)
{
	struct kiwi_device *kdev = to_kdev(ibdev);

	xa_erase(&kdev->mr_xa, mr->ibmr.lkey >> KIWI_STAG_KEY_BITS);
	atomic_dec(&kdev->num_mr);
	call_rcu(&mr->rcu, kiwi_mr_free_rcu);
}

/* A kernel MR covering all of memory (ib_get_dma_mr()). */
struct ib_mr *kiwi_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct kiwi_mr *mr;
	int rv;

	rv = kiwi_mr_access_ok(access);
	if (rv)
		return ERR_PTR(rv);
	mr = kiwi_mr_new(ibpd, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->ibmr.length = U64_MAX;
	return &mr->ibmr;
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
 * Pins the pages with ib_umem_get().
 *
 * Return: the MR, or ERR_PTR(-EINVAL / -EOPNOTSUPP / -ENOMEM / -EFAULT).
 */
struct ib_mr *kiwi_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata)
{
	struct ib_umem *umem;
	struct kiwi_mr *mr;
	int rv;

	rv = kiwi_mr_access_ok(access);
	if (!rv)
		rv = kiwi_udata_in_ok(udata);
	if (rv)
		return ERR_PTR(rv);
	if (!length || length > KIWI_MAX_MR_SIZE)
		return ERR_PTR(-EINVAL);
	umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(umem))
		return ERR_CAST(umem);
	mr = kiwi_mr_new(ibpd, access);
	if (IS_ERR(mr)) {
		ib_umem_release(umem);
		return ERR_CAST(mr);
	}
	mr->umem = umem;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	return &mr->ibmr;
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
	mr = kiwi_mr_new(ibpd, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->pages = kcalloc(max_num_sg, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		kiwi_mr_delete(ibpd->device, mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->max_pages = max_num_sg;
	return &mr->ibmr;
}

static int kiwi_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct kiwi_mr *mr = to_kmr(ibmr);

	if (mr->npages == mr->max_pages)
		return -ENOMEM;
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
 * Return: number of @sg entries mapped, or -EINVAL for a non-fast-reg MR.
 */
int kiwi_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	struct kiwi_mr *mr = to_kmr(ibmr);

	if (!mr->pages)
		return -EINVAL;
	mr->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, kiwi_set_page);
}

int kiwi_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct kiwi_mr *mr = to_kmr(ibmr);

	ib_umem_release(mr->umem);
	kiwi_mr_delete(ibmr->device, mr);
	return 0;
}
