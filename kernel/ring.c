// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: rings shared with user space (layout in kiwi-abi.h) and their
 * mmap(2) plumbing. A ring area is queue memory (qmem.c): the device's
 * budget holds it from allocation until the area is freed, which for a
 * user ring is when its object is destroyed (the mmap entry's last
 * reference: a mapping does not hold one); a user ring's pages are
 * charged to the creator's memory cgroup and stay until the last mapping
 * of them is gone.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "kiwi.h"

static int kiwi_ring_map(struct kiwi_ring *r, void *area, size_t len,
			 struct ib_ucontext *ibuc)
{
	struct kiwi_mmap *m;
	int rv;

	m = kzalloc(sizeof(*m), KIWI_GFP_USER);
	if (!m)
		return -ENOMEM;
	m->area = area;
	rv = rdma_user_mmap_entry_insert(ibuc, &m->entry, len);
	if (rv) {
		kfree(m);
		return rv;
	}
	r->mmap = m;
	return 0;
}

/* Octets of a ring area: the control block and @num elements, in pages. */
static size_t kiwi_ring_len(u32 num, u32 elem_size)
{
	return PAGE_ALIGN(KIWI_RING_CTRL_SIZE + (size_t)num * elem_size);
}

/**
 * kiwi_ring_alloc - allocate a zeroed ring
 * @kdev: the device whose queue memory the ring takes
 * @r: ring to set up
 * @num: number of elements, a power of two
 * @elem_size: size of one element
 * @ibuc: user context the ring is mapped into, or NULL for a kernel ring
 *
 * A user ring gets an mmap entry whose key kiwi_ring_key() returns; its
 * memory then belongs to the entry and is freed by kiwi_mmap_free().
 *
 * Return: 0 or a negative errno (-ENOMEM: over the device's budget, the
 * caller's memory cgroup limit, or out of memory).
 */
int kiwi_ring_alloc(struct kiwi_device *kdev, struct kiwi_ring *r, u32 num,
		    u32 elem_size, struct ib_ucontext *ibuc)
{
	size_t len = kiwi_ring_len(num, elem_size);
	gfp_t gfp = ibuc ? KIWI_GFP_USER : GFP_KERNEL;
	void *area;
	int rv;

	/* Empty on every failure: kiwi_ring_free() of it does nothing. */
	memset(r, 0, sizeof(*r));
	if (WARN_ON_ONCE(!is_power_of_2(num)))
		return -EINVAL;
	rv = kiwi_qmem_charge(kdev, len);
	if (rv)
		return rv;
	/* Not vmalloc_user(): it cannot charge a memory cgroup. */
	area = __vmalloc(len, gfp | __GFP_ZERO);
	if (!area) {
		kiwi_qmem_uncharge(kdev, len);
		return -ENOMEM;
	}
	r->ctrl = area;
	r->elems = area + KIWI_RING_CTRL_SIZE;
	r->num = num;
	r->elem_size = elem_size;
	r->kdev = kdev;
	if (ibuc) {
		rv = kiwi_ring_map(r, area, len, ibuc);
		if (rv) {
			vfree(area);
			kiwi_qmem_uncharge(kdev, len);
			r->ctrl = NULL;
			return rv;
		}
	}
	return 0;
}

/**
 * kiwi_ring_free - release a ring set up by kiwi_ring_alloc()
 * @r: the ring; a ring that was never allocated is ignored
 *
 * A user ring's pages stay until user space unmaps them (the mapping holds
 * them), so a process that still touches a destroyed object's ring cannot
 * reach freed memory; the device's queue memory gives them back at once.
 */
void kiwi_ring_free(struct kiwi_ring *r)
{
	if (!r->ctrl)
		return;
	if (r->mmap) {
		rdma_user_mmap_entry_remove(&r->mmap->entry);
	} else {
		vfree(r->ctrl);
		kiwi_qmem_uncharge(r->kdev, kiwi_ring_len(r->num, r->elem_size));
	}
	r->ctrl = NULL;
	r->mmap = NULL;
}

/* The mmap key of a user ring, KIWI_INVALID_MMAP_KEY for none. */
u64 kiwi_ring_key(const struct kiwi_ring *r)
{
	if (!r->mmap)
		return KIWI_INVALID_MMAP_KEY;
	return rdma_user_mmap_get_offset(&r->mmap->entry);
}

/*
 * Elements produced by the other side and not yet consumed by the kernel.
 * A user producer index further ahead than the ring size is nonsense; it is
 * capped so a hostile value cannot make the kernel walk past the ring.
 */
u32 kiwi_ring_avail(const struct kiwi_ring *r)
{
	/* Acquire: pairs with user space's release of the new elements. */
	u32 prod = r->mmap ? smp_load_acquire(&r->ctrl->producer) : r->prod;

	return min(prod - r->cons, r->num);
}

/*
 * The consumer index of a ring the kernel produces into: a user ring's as
 * user space last published it (unvalidated), else the kernel's own.
 */
u32 kiwi_ring_consumer(const struct kiwi_ring *r)
{
	/* Acquire: the consumer is done reading the slots it released. */
	return r->mmap ? smp_load_acquire(&r->ctrl->consumer) : r->cons;
}

/* Free slots for the kernel as producer; a bogus user index means none. */
u32 kiwi_ring_room(const struct kiwi_ring *r)
{
	u32 used = r->prod - kiwi_ring_consumer(r);

	return used > r->num ? 0 : r->num - used;
}

/* Publish the element at the kernel's producer index. */
void kiwi_ring_produced(struct kiwi_ring *r)
{
	r->prod++;
	/* Release: the element is written before the index moves. */
	smp_store_release(&r->ctrl->producer, r->prod);
}

/* Hand the element at the kernel's consumer index back to the producer. */
void kiwi_ring_consumed(struct kiwi_ring *r)
{
	r->cons++;
	/* Release: the element is read before the slot is handed back. */
	smp_store_release(&r->ctrl->consumer, r->cons);
}

/*
 * Take back the element before the kernel's consumer index, written there
 * again (a kernel-only ring whose slot before it is free).
 */
void kiwi_ring_unconsumed(struct kiwi_ring *r)
{
	r->cons--;
	/* Release as in kiwi_ring_consumed(). */
	smp_store_release(&r->ctrl->consumer, r->cons);
}

/* Drop every produced element without completing it (QP reset). */
void kiwi_ring_discard(struct kiwi_ring *r)
{
	if (!r->ctrl)
		return;
	/* Acquire as in kiwi_ring_avail(). */
	r->cons = r->mmap ? smp_load_acquire(&r->ctrl->producer) : r->prod;
	/* Release as in kiwi_ring_consumed(). */
	smp_store_release(&r->ctrl->consumer, r->cons);
}

/*
 * Set or clear @flag in the ring's flags. The kernel keeps its own copy
 * and only ever stores it: what user space writes into the shared word is
 * never read back.
 */
static void kiwi_ring_flag(struct kiwi_ring *r, u32 flag, bool on)
{
	u32 flags = on ? r->flags | flag : r->flags & ~flag;

	if (!r->ctrl || flags == r->flags)
		return;
	r->flags = flags;
	WRITE_ONCE(r->ctrl->flags, flags);
}

/*
 * Tell user space whether the kernel still consumes this ring. Setting
 * the flag orders nothing by itself: kiwi_qp_flush() has the barrier.
 */
void kiwi_ring_set_error(struct kiwi_ring *r, bool error)
{
	kiwi_ring_flag(r, KIWI_RING_F_ERROR, error);
}

/*
 * Tell user space whether new SQEs need the doorbell (KIWI_RING_F_DOORBELL).
 * Setting it orders nothing by itself: the caller fences before it reads
 * the producer index again (kiwi_tx_park(), kiwi_qp_flush()).
 */
void kiwi_ring_set_doorbell(struct kiwi_ring *r, bool needed)
{
	kiwi_ring_flag(r, KIWI_RING_F_DOORBELL, needed);
}

/*
 * The producer index as the other side last published it, without
 * validation: only compared with an earlier value of itself.
 */
u32 kiwi_ring_published(const struct kiwi_ring *r)
{
	/* Acquire as in kiwi_ring_avail(). */
	return smp_load_acquire(&r->ctrl->producer);
}

/* Map every page of a ring area, as remap_vmalloc_range() would. */
static int kiwi_ring_insert(struct vm_area_struct *vma, void *area)
{
	unsigned long addr;
	int rv;

	for (addr = vma->vm_start; addr < vma->vm_end; addr += PAGE_SIZE) {
		rv = vm_insert_page(vma, addr, vmalloc_to_page(area));
		if (rv)
			return rv;
		area += PAGE_SIZE;
	}
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	return 0;
}

/**
 * kiwi_mmap - ib_device_ops.mmap: map a ring area by its mmap key
 * @ibuc: the user context
 * @vma: the mapping; its offset is the key, its size must be the ring's
 *
 * Return: 0, -EINVAL for an unknown key or a wrong size or flags, or the
 * error of vm_insert_page().
 */
int kiwi_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	struct kiwi_mmap *m;
	int rv;

	/* Checks MAP_SHARED and that the size is the entry's. */
	entry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!entry)
		return -EINVAL;
	m = container_of(entry, struct kiwi_mmap, entry);
	rv = kiwi_ring_insert(vma, m->area);
	rdma_user_mmap_entry_put(entry);
	return rv;
}

/* ib_device_ops.mmap_free: the last reference to a ring area is gone. */
void kiwi_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct kiwi_mmap *m = container_of(entry, struct kiwi_mmap, entry);

	vfree(m->area);
	kiwi_qmem_uncharge(to_kdev(entry->ucontext->device),
			   (u64)entry->npages << PAGE_SHIFT);
	kfree(m);
}
