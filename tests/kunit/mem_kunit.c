// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "kiwi_mem": the data path's memory access (kernel/mem_access.c)
 * on hand-built MRs: the order of the STag checks, overflow-safe bounds,
 * address to page resolution for fast-reg, user and DMA MRs (linear map and
 * vmalloc), copies across page boundaries, lookups, invalidation rules,
 * the fast-register work request and memory windows. The MRs here never
 * lose their last reference, so the tests own their memory.
 */
#include <kunit/test.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "kiwi.h"
#include "conn.h"

#define NPAGES 3

struct mem_env {
	struct kiwi_device *kdev;
	struct ib_pd pd[2];
	struct page *page[NPAGES];
};

static int kiwi_mem_test_init(struct kunit *test)
{
	struct mem_env *env = kunit_kzalloc(test, sizeof(*env), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, env);
	env->kdev = kunit_kzalloc(test, sizeof(*env->kdev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, env->kdev);
	xa_init_flags(&env->kdev->mr_xa, XA_FLAGS_ALLOC1);
	for (i = 0; i < NPAGES; i++) {
		env->page[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		KUNIT_ASSERT_NOT_NULL(test, env->page[i]);
	}
	test->priv = env;
	return 0;
}

static void kiwi_mem_test_exit(struct kunit *test)
{
	struct mem_env *env = test->priv;
	int i;

	xa_destroy(&env->kdev->mr_xa);
	for (i = 0; i < NPAGES; i++)
		__free_page(env->page[i]);
}

/* A valid MR of @kind at STag index @idx, key 0x5a, in pd[0]. */
static struct kiwi_mr *mk_mr(struct kunit *test, enum kiwi_mr_kind kind,
			     u32 idx, int access, u64 iova, u64 length)
{
	struct mem_env *env = test->priv;
	struct kiwi_mr *mr = kunit_kzalloc(test, sizeof(*mr), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, mr);
	mr->kind = kind;
	mr->pd = &env->pd[0];
	refcount_set(&mr->ref, 1);
	spin_lock_init(&mr->state_lock);
	atomic_set(&mr->state, KIWI_MR_VALID);
	mr->stag = idx << KIWI_STAG_KEY_BITS | 0x5a;
	mr->access = access;
	mr->iova = iova;
	mr->length = length;
	return mr;
}

/* A fast-reg MR over the env's pages (not contiguous), 4 KiB blocks. */
static struct kiwi_mr *mk_frmr(struct kunit *test, int access, u64 iova,
			       u64 length)
{
	struct mem_env *env = test->priv;
	struct kiwi_mr *mr = mk_mr(test, KIWI_MR_FAST_REG, 7, access, iova,
				   length);
	int i;

	mr->pages = kunit_kcalloc(test, NPAGES, sizeof(u64), GFP_KERNEL);
	mr->reg_pages = kunit_kcalloc(test, NPAGES, sizeof(u64), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mr->pages);
	KUNIT_ASSERT_NOT_NULL(test, mr->reg_pages);
	for (i = 0; i < NPAGES; i++) {
		mr->pages[i] = (unsigned long)page_address(env->page[i]);
		mr->reg_pages[i] = mr->pages[i];
	}
	mr->max_pages = NPAGES;
	mr->npages = NPAGES;
	mr->nreg = NPAGES;
	mr->page_shift = PAGE_SHIFT;
	return mr;
}

static void check_order(struct kunit *test)
{
	struct mem_env *env = test->priv;
	const struct ib_pd *pd = &env->pd[0];
	struct kiwi_mr *mr = mk_frmr(test, IB_ACCESS_LOCAL_WRITE, 0x1000,
				     0x2000);
	u32 stag = mr->stag;

	KUNIT_EXPECT_EQ(test, kiwi_mr_check(mr, stag, pd, 0, 0x1000, 0x2000),
			KIWI_MEM_OK);
	KUNIT_EXPECT_EQ(test, kiwi_mr_check(mr, stag ^ 1, pd, 0, 0x1000, 1),
			KIWI_MEM_STAG);
	KUNIT_EXPECT_EQ(test, kiwi_mr_check(mr, stag, &env->pd[1], 0, 0x1000,
					    1), KIWI_MEM_PD);
	KUNIT_EXPECT_EQ(test, kiwi_mr_check(mr, stag, pd,
					    IB_ACCESS_REMOTE_WRITE, 0x1000, 1),
			KIWI_MEM_ACCESS);
	KUNIT_EXPECT_EQ(test, kiwi_mr_check(mr, stag, pd, 0, 0x1000, 0x2001),
			KIWI_MEM_BOUNDS);
	/* The STag first, then PD, then rights, then bounds. */
	KUNIT_EXPECT_EQ(test, kiwi_mr_check(mr, stag, &env->pd[1],
					    IB_ACCESS_REMOTE_WRITE, 0, 1),
			KIWI_MEM_PD);
	KUNIT_EXPECT_EQ(test, kiwi_mr_check(mr, stag, pd,
					    IB_ACCESS_REMOTE_READ, 0, 1),
			KIWI_MEM_ACCESS);
	atomic_set(&mr->state, KIWI_MR_INVALID);
	KUNIT_EXPECT_EQ(test, kiwi_mr_check(mr, stag, &env->pd[1], 0, 0x1000,
					    1), KIWI_MEM_STAG);
}

static void check_bounds(struct kunit *test)
{
	struct mem_env *env = test->priv;
	const struct ib_pd *pd = &env->pd[0];
	struct kiwi_mr *top = mk_mr(test, KIWI_MR_USER, 1, 0, U64_MAX - 4095,
				    4096);
	struct kiwi_mr *all = mk_mr(test, KIWI_MR_DMA, 2, 0, 0, U64_MAX);
	u32 st = top->stag, sa = all->stag;

	KUNIT_EXPECT_EQ(test, kiwi_mr_check(top, st, pd, 0, U64_MAX, 1),
			KIWI_MEM_OK);
	KUNIT_EXPECT_EQ(test, kiwi_mr_check(top, st, pd, 0, U64_MAX, 2),
			KIWI_MEM_BOUNDS);
	KUNIT_EXPECT_EQ(test, kiwi_mr_check(top, st, pd, 0, U64_MAX - 4096, 1),
			KIWI_MEM_BOUNDS);
	KUNIT_EXPECT_EQ(test, kiwi_mr_check(top, st, pd, 0, U64_MAX - 4095,
					    4096), KIWI_MEM_OK);
	KUNIT_EXPECT_EQ(test, kiwi_mr_check(top, st, pd, 0, U64_MAX - 4095,
					    4097), KIWI_MEM_BOUNDS);
	KUNIT_EXPECT_EQ(test, kiwi_mr_check(top, st, pd, 0, U64_MAX - 10,
					    U64_MAX), KIWI_MEM_BOUNDS);
	/* Zero octets: inside or at the end of the registration. */
	KUNIT_EXPECT_EQ(test, kiwi_mr_check(all, sa, pd, 0, U64_MAX, 0),
			KIWI_MEM_OK);
	KUNIT_EXPECT_EQ(test, kiwi_mr_check(all, sa, pd, 0, 0, U64_MAX),
			KIWI_MEM_OK);
	KUNIT_EXPECT_EQ(test, kiwi_mr_check(all, sa, pd, 0, 1, U64_MAX),
			KIWI_MEM_BOUNDS);
}

/* Fast-reg: the iova's offset in the first block, then block by block. */
static void frmr_pages(struct kunit *test)
{
	struct mem_env *env = test->priv;
	u64 iova = 0x7000000ULL + 0x100;
	struct kiwi_mr *mr = mk_frmr(test, IB_ACCESS_LOCAL_WRITE, iova,
				     NPAGES * PAGE_SIZE - 0x100);
	struct page *page;
	u32 off, chunk;

	rcu_read_lock();
	KUNIT_EXPECT_EQ(test, kiwi_mr_page(mr, iova, 8192, &page, &off,
					   &chunk), 0);
	KUNIT_EXPECT_PTR_EQ(test, page, env->page[0]);
	KUNIT_EXPECT_EQ(test, off, 0x100U);
	KUNIT_EXPECT_EQ(test, chunk, (u32)PAGE_SIZE - 0x100);
	KUNIT_EXPECT_EQ(test, kiwi_mr_page(mr, iova + PAGE_SIZE - 0x100 + 5,
					   10, &page, &off, &chunk), 0);
	KUNIT_EXPECT_PTR_EQ(test, page, env->page[1]);
	KUNIT_EXPECT_EQ(test, off, 5U);
	KUNIT_EXPECT_EQ(test, chunk, 10U);
	KUNIT_EXPECT_EQ(test, kiwi_mr_page(mr, iova + mr->length - 1, 1, &page,
					   &off, &chunk), 0);
	KUNIT_EXPECT_PTR_EQ(test, page, env->page[2]);
	KUNIT_EXPECT_EQ(test, off, (u32)PAGE_SIZE - 1);
	KUNIT_EXPECT_EQ(test, kiwi_mr_page(mr, iova + mr->length, 1, &page,
					   &off, &chunk), -EFAULT);
	KUNIT_EXPECT_EQ(test, kiwi_mr_page(mr, iova, 0, &page, &off, &chunk),
			-EFAULT);
	/* A page list shorter than the registration claims. */
	mr->nreg = 1;
	KUNIT_EXPECT_EQ(test, kiwi_mr_page(mr, iova + PAGE_SIZE, 1, &page,
					   &off, &chunk), -EFAULT);
	rcu_read_unlock();
}

/* A write across three separate pages lands where the list says. */
static void frmr_copy(struct kunit *test)
{
	struct mem_env *env = test->priv;
	u32 len = NPAGES * PAGE_SIZE - 0x100;
	struct kiwi_mr *mr = mk_frmr(test, IB_ACCESS_LOCAL_WRITE, 0x100, len);
	u8 *src = kunit_kmalloc(test, len, GFP_KERNEL);
	u8 *back = kunit_kzalloc(test, len, GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, back);
	for (i = 0; i < len; i++)
		src[i] = i * 7 + 3;
	KUNIT_ASSERT_EQ(test, kiwi_mr_write(mr, 0x100, src, len), 0);
	KUNIT_EXPECT_EQ(test, *(u8 *)page_address(env->page[0]), 0);
	KUNIT_EXPECT_EQ(test, memcmp(page_address(env->page[0]) + 0x100, src,
				     PAGE_SIZE - 0x100), 0);
	KUNIT_EXPECT_EQ(test, memcmp(page_address(env->page[1]),
				     src + PAGE_SIZE - 0x100, PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, memcmp(page_address(env->page[2]),
				     src + 2 * PAGE_SIZE - 0x100, PAGE_SIZE),
			0);
	KUNIT_ASSERT_EQ(test, kiwi_mr_read(mr, 0x100, back, len), 0);
	KUNIT_EXPECT_EQ(test, memcmp(back, src, len), 0);
	KUNIT_EXPECT_EQ(test, kiwi_mr_write(mr, 0x100 + len - 1, src, 2),
			-EFAULT);
	/* Invalidated: no more copies either way. */
	atomic_set(&mr->state, KIWI_MR_INVALID);
	KUNIT_EXPECT_EQ(test, kiwi_mr_write(mr, 0x100, src, 1), -EFAULT);
	KUNIT_EXPECT_EQ(test, kiwi_mr_read(mr, 0x100, back, 1), -EFAULT);
}

/* User MRs: the iova is the address, the umem's page offset is kept. */
static void user_pages(struct kunit *test)
{
	struct mem_env *env = test->priv;
	u64 iova = 0xdead0000ULL + 0x234;
	struct kiwi_mr *mr = mk_mr(test, KIWI_MR_USER, 3, IB_ACCESS_LOCAL_WRITE,
				   iova, 2 * PAGE_SIZE - 0x234);
	struct ib_umem *umem = kunit_kzalloc(test, sizeof(*umem), GFP_KERNEL);
	struct page *page;
	u32 off, chunk;

	KUNIT_ASSERT_NOT_NULL(test, umem);
	umem->address = 0x7f0000000000UL + 0x234;
	struct page *page1;
	u32 off1, chunk1;
	int rv[3];

	mr->umem = umem;
	mr->upages = env->page;
	/* Resolve under RCU; judge outside (a failed expectation allocates). */
	rcu_read_lock();
	rv[0] = kiwi_mr_page(mr, iova, mr->length, &page, &off, &chunk);
	rv[1] = kiwi_mr_page(mr, iova + PAGE_SIZE - 0x234, 1, &page1, &off1,
			     &chunk1);
	rv[2] = kiwi_mr_page(mr, iova + 2 * PAGE_SIZE - 0x234, 1, &page1,
			     &off1, &chunk1);
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, rv[0], 0);
	KUNIT_EXPECT_PTR_EQ(test, page, env->page[0]);
	KUNIT_EXPECT_EQ(test, off, 0x234U);
	KUNIT_EXPECT_EQ(test, chunk, (u32)PAGE_SIZE - 0x234);
	KUNIT_EXPECT_EQ(test, rv[1], 0);
	KUNIT_EXPECT_PTR_EQ(test, page1, env->page[1]);
	KUNIT_EXPECT_EQ(test, off1, 0U);
	KUNIT_EXPECT_EQ(test, rv[2], -EFAULT);
}

/* The DMA MR takes kernel virtual addresses: linear map and vmalloc. */
static void dma_kva(struct kunit *test)
{
	struct kiwi_mr *mr = mk_mr(test, KIWI_MR_DMA, 4, IB_ACCESS_LOCAL_WRITE,
				   0, U64_MAX);
	size_t len = 3 * PAGE_SIZE;
	u8 *vbuf = vzalloc(len);
	u8 *src = kunit_kmalloc(test, len, GFP_KERNEL);
	u8 *kbuf = kunit_kzalloc(test, 64, GFP_KERNEL);
	size_t i;

	KUNIT_ASSERT_NOT_NULL(test, vbuf);
	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, kbuf);
	for (i = 0; i < len; i++)
		src[i] = i ^ 0xa5;
	KUNIT_EXPECT_EQ(test, kiwi_mr_write(mr, (unsigned long)vbuf + 100,
					    src, len - 200), 0);
	KUNIT_EXPECT_EQ(test, memcmp(vbuf + 100, src, len - 200), 0);
	KUNIT_EXPECT_EQ(test, vbuf[99], 0);
	KUNIT_EXPECT_EQ(test, vbuf[len - 100], 0);
	KUNIT_EXPECT_EQ(test, kiwi_mr_write(mr, (unsigned long)kbuf + 1, src,
					    62), 0);
	KUNIT_EXPECT_EQ(test, memcmp(kbuf + 1, src, 62), 0);
	KUNIT_EXPECT_EQ(test, kbuf[63], 0);
	/* Not a kernel address: refused, not dereferenced. */
	KUNIT_EXPECT_EQ(test, kiwi_mr_write(mr, 0x1000, src, 1), -EFAULT);
	vfree(vbuf);
}

static void write_needs_local_write(struct kunit *test)
{
	struct kiwi_mr *mr = mk_frmr(test, IB_ACCESS_REMOTE_READ, 0,
				     PAGE_SIZE);
	u8 buf[4] = { 1, 2, 3, 4 };

	KUNIT_EXPECT_EQ(test, kiwi_mr_write(mr, 0, buf, sizeof(buf)), -EFAULT);
	KUNIT_EXPECT_EQ(test, kiwi_mr_read(mr, 0, buf, sizeof(buf)), 0);
	KUNIT_EXPECT_EQ(test, buf[0], 0);
}

static void get_rules(struct kunit *test)
{
	struct mem_env *env = test->priv;
	struct kiwi_mr *mr = mk_frmr(test, IB_ACCESS_LOCAL_WRITE, 0, PAGE_SIZE);
	u32 stag = mr->stag;

	KUNIT_ASSERT_EQ(test, xa_err(xa_store(&env->kdev->mr_xa,
					      kiwi_stag_index(stag), mr,
					      GFP_KERNEL)), 0);
	KUNIT_EXPECT_PTR_EQ(test, kiwi_mr_get(env->kdev, stag), mr);
	KUNIT_EXPECT_EQ(test, refcount_read(&mr->ref), 2U);
	kiwi_mr_put(mr);
	KUNIT_EXPECT_EQ(test, refcount_read(&mr->ref), 1U);
	KUNIT_EXPECT_NULL(test, kiwi_mr_get(env->kdev, stag ^ 0x01));
	KUNIT_EXPECT_NULL(test, kiwi_mr_get(env->kdev, stag + 0x100));
	KUNIT_EXPECT_NULL(test, kiwi_mr_get(env->kdev, 0));
	atomic_set(&mr->state, KIWI_MR_INVALID);
	KUNIT_EXPECT_NULL(test, kiwi_mr_get(env->kdev, stag));
	atomic_set(&mr->state, KIWI_MR_VALID);
	refcount_set(&mr->ref, 0);
	KUNIT_EXPECT_NULL(test, kiwi_mr_get(env->kdev, stag));
	refcount_set(&mr->ref, 1);
	KUNIT_EXPECT_EQ(test, refcount_read(&mr->ref), 1U);
}

/*
 * Local and remote invalidation: who may invalidate what (PD, access,
 * MR kind), and that an invalidated STag then fails the placement check
 * as an invalid STag (SEC-06).
 */
static void invalidate_rules(struct kunit *test)
{
	struct mem_env *env = test->priv;
	struct kiwi_device *kdev = env->kdev;
	const struct ib_pd *pd = &env->pd[0];
	struct kiwi_mr *fr = mk_frmr(test, IB_ACCESS_LOCAL_WRITE |
				     IB_ACCESS_REMOTE_WRITE, 0, PAGE_SIZE);
	struct kiwi_mr *loc = mk_mr(test, KIWI_MR_FAST_REG, 8,
				    IB_ACCESS_LOCAL_WRITE, 0, 0);
	struct kiwi_mr *usr = mk_mr(test, KIWI_MR_USER, 9,
				    IB_ACCESS_REMOTE_WRITE |
				    IB_ACCESS_LOCAL_WRITE, 0, 0);
	struct kiwi_mr *mrs[] = { fr, loc, usr };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(mrs); i++)
		KUNIT_ASSERT_EQ(test, xa_err(xa_store(&kdev->mr_xa,
				kiwi_stag_index(mrs[i]->stag), mrs[i],
				GFP_KERNEL)), 0);
	KUNIT_EXPECT_EQ(test, kiwi_mr_invalidate(kdev, 0x4200, pd, true),
			KIWI_MEM_STAG);
	KUNIT_EXPECT_EQ(test, kiwi_mr_invalidate(kdev, fr->stag ^ 1, pd, true),
			KIWI_MEM_STAG);
	KUNIT_EXPECT_EQ(test, kiwi_mr_invalidate(kdev, fr->stag, &env->pd[1],
						 true), KIWI_MEM_PD);
	KUNIT_EXPECT_EQ(test, kiwi_mr_invalidate(kdev, usr->stag, pd, false),
			KIWI_MEM_ACCESS);
	KUNIT_EXPECT_EQ(test, kiwi_mr_invalidate(kdev, loc->stag, pd, true),
			KIWI_MEM_ACCESS);
	KUNIT_EXPECT_EQ(test, kiwi_mr_invalidate(kdev, loc->stag, pd, false),
			KIWI_MEM_OK);
	KUNIT_EXPECT_EQ(test, atomic_read(&fr->state), KIWI_MR_VALID);
	KUNIT_EXPECT_EQ(test, kiwi_mr_invalidate(kdev, fr->stag, pd, true),
			KIWI_MEM_OK);
	KUNIT_EXPECT_EQ(test, atomic_read(&fr->state), KIWI_MR_INVALID);
	KUNIT_EXPECT_EQ(test, kiwi_mr_check(fr, fr->stag, pd, 0, 0, 1),
			KIWI_MEM_STAG);
	/* Again: a peer must name a valid STag, locally it is harmless. */
	KUNIT_EXPECT_EQ(test, kiwi_mr_invalidate(kdev, fr->stag, pd, true),
			KIWI_MEM_STAG);
	KUNIT_EXPECT_EQ(test, kiwi_mr_invalidate(kdev, fr->stag, pd, false),
			KIWI_MEM_OK);
	KUNIT_EXPECT_EQ(test, atomic_read(&usr->state), KIWI_MR_VALID);
}

/*
 * After an invalidation, the completion waits a grace period only while an
 * access may still copy: a data-path holder of the MR (taken before the
 * invalidation), an MR a window was ever bound to, a window, an STag not
 * found. A fast-reg MR with no holder is the consumer's at once; a lookup
 * after the invalidation takes no reference that would make it wait.
 */
static void inval_busy_rule(struct kunit *test)
{
	struct mem_env *env = test->priv;
	struct kiwi_device *kdev = env->kdev;
	const struct ib_pd *pd = &env->pd[0];
	struct kiwi_mr *fr = mk_frmr(test, IB_ACCESS_LOCAL_WRITE |
				     IB_ACCESS_REMOTE_WRITE, 0, PAGE_SIZE);
	struct kiwi_mr *held;

	KUNIT_ASSERT_EQ(test, xa_err(xa_store(&kdev->mr_xa,
					      kiwi_stag_index(fr->stag), fr,
					      GFP_KERNEL)), 0);
	held = kiwi_mr_get(kdev, fr->stag);
	KUNIT_ASSERT_PTR_EQ(test, held, fr);
	KUNIT_EXPECT_EQ(test, kiwi_mr_invalidate(kdev, fr->stag, pd, 7),
			KIWI_MEM_OK);
	KUNIT_EXPECT_TRUE(test, kiwi_mr_inval_busy(kdev, fr->stag));
	KUNIT_EXPECT_NULL(test, kiwi_mr_get(kdev, fr->stag));
	KUNIT_EXPECT_TRUE(test, kiwi_mr_inval_busy(kdev, fr->stag));
	kiwi_mr_put(held);
	KUNIT_EXPECT_FALSE(test, kiwi_mr_inval_busy(kdev, fr->stag));
	KUNIT_EXPECT_EQ(test, kiwi_mr_invalidate(kdev, fr->stag, pd,
						 KIWI_INV_LOCAL), KIWI_MEM_OK);
	KUNIT_EXPECT_FALSE(test, kiwi_mr_inval_busy(kdev, fr->stag));
	fr->mw_seen = true;
	KUNIT_EXPECT_TRUE(test, kiwi_mr_inval_busy(kdev, fr->stag));
	fr->mw_seen = false;
	fr->kind = KIWI_MR_MW;
	KUNIT_EXPECT_TRUE(test, kiwi_mr_inval_busy(kdev, fr->stag));
	fr->kind = KIWI_MR_FAST_REG;
	KUNIT_EXPECT_TRUE(test, kiwi_mr_inval_busy(kdev, fr->stag + 0x100));
}

/*
 * The receive path judges an STag as rx.c does: kiwi_mr_stag_info() of the
 * MR behind it, then proto/'s validators with the QP as stream (PD by
 * address, the QP's remote rights). DDP-068, RDMAP-18/24, SEC-01/02/06/07.
 */
static void stag_info_judged_by_proto(struct kunit *test)
{
	struct mem_env *env = test->priv;
	struct kiwi_ddp_stream s = {
		.pd = (uintptr_t)&env->pd[0], .qp = 5,
		.access = KIWI_DDP_ACC_REMOTE_WRITE | KIWI_DDP_ACC_REMOTE_READ,
	};
	struct kiwi_mr *fr = mk_frmr(test, IB_ACCESS_LOCAL_WRITE |
				     IB_ACCESS_REMOTE_WRITE, 0x1000, 0x2000);
	struct kiwi_mr *usr = mk_mr(test, KIWI_MR_USER, 9,
				    IB_ACCESS_LOCAL_WRITE |
				    IB_ACCESS_REMOTE_READ, 0x8000, 0x100);
	struct kiwi_ddp_hdr h = {
		.tagged = true, .last = true, .dv = 1, .ulp_ctrl = 0x40,
		.stag = fr->stag, .to = 0x1000,
	};
	struct kiwi_rdmap_rreq r = { .size = 0x100, .src_to = 0x8000 };
	struct kiwi_ddp_stag_info st;

	kiwi_mr_stag_info(fr, fr->stag, &st);
	KUNIT_EXPECT_TRUE(test, st.valid);
	KUNIT_EXPECT_EQ(test, st.access, KIWI_DDP_ACC_LOCAL_WRITE |
			KIWI_DDP_ACC_REMOTE_WRITE | KIWI_DDP_ACC_REMOTE_INV);
	KUNIT_EXPECT_EQ(test, kiwi_ddp_check_tagged(&h, 0x2000,
				KIWI_DDP_ACC_REMOTE_WRITE, &s, &st),
			KIWI_TERM_ERR_NONE);
	KUNIT_EXPECT_EQ(test, kiwi_ddp_check_tagged(&h, 0x2001,
				KIWI_DDP_ACC_REMOTE_WRITE, &s, &st),
			KIWI_TERM_ERR_DDP_T_BOUNDS);
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_inval(&s, &st),
			KIWI_TERM_ERR_NONE);
	s.pd = (uintptr_t)&env->pd[1];
	KUNIT_EXPECT_EQ(test, kiwi_ddp_check_tagged(&h, 1,
				KIWI_DDP_ACC_REMOTE_WRITE, &s, &st),
			KIWI_TERM_ERR_DDP_T_STAG_STREAM);
	s.pd = (uintptr_t)&env->pd[0];
	kiwi_mr_stag_info(fr, fr->stag ^ 1, &st);
	KUNIT_EXPECT_FALSE(test, st.valid);
	KUNIT_EXPECT_EQ(test, kiwi_ddp_check_tagged(&h, 1,
				KIWI_DDP_ACC_REMOTE_WRITE, &s, &st),
			KIWI_TERM_ERR_DDP_T_INVALID_STAG);

	/* A user MR: readable, not writable remotely, not invalidatable. */
	kiwi_mr_stag_info(usr, usr->stag, &st);
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_rreq(&r, &s, &st),
			KIWI_TERM_ERR_NONE);
	h.stag = usr->stag;
	h.to = 0x8000;
	KUNIT_EXPECT_EQ(test, kiwi_ddp_check_tagged(&h, 1,
				KIWI_DDP_ACC_REMOTE_WRITE, &s, &st),
			KIWI_TERM_ERR_RDMAP_ACCESS);
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_inval(&s, &st),
			KIWI_TERM_ERR_RDMAP_CANNOT_INVALIDATE);
	/* The QP's own rights come first. */
	s.access = KIWI_DDP_ACC_REMOTE_WRITE;
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_rreq(&r, &s, &st),
			KIWI_TERM_ERR_RDMAP_ACCESS);
	atomic_set(&usr->state, KIWI_MR_INVALID);
	kiwi_mr_stag_info(usr, usr->stag, &st);
	KUNIT_EXPECT_FALSE(test, st.valid);
}

/* An invalid fast-reg MR with map_mr_sg's geometry in its ib_mr. */
static struct kiwi_mr *mk_mapped(struct kunit *test)
{
	struct kiwi_mr *mr = mk_frmr(test, 0, 0, 0);

	atomic_set(&mr->state, KIWI_MR_INVALID);
	mr->ibmr.page_size = PAGE_SIZE;
	mr->ibmr.iova = 0xffff888000000000ULL + 0x80;
	mr->ibmr.length = NPAGES * PAGE_SIZE - 0x80;
	return mr;
}

/*
 * map_mr_sg for the next I/O while the registration is still valid (a
 * ULP's Local Invalidate chained before the next REG_MR) prepares the next
 * registration only: an access under the valid key still reaches the
 * registered pages.
 */
static void fast_reg_page_list(struct kunit *test)
{
	struct mem_env *env = test->priv;
	struct kiwi_mr *mr = mk_mapped(test);
	int rw = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	u32 key = (mr->stag & ~0xffU) | 0xc3;
	u8 *p0 = page_address(env->page[0]), *p1 = page_address(env->page[1]);
	u8 v = 0x5a;

	KUNIT_ASSERT_EQ(test, kiwi_mr_fast_reg(mr, key, rw), 0);
	mr->pages[0] = (unsigned long)p1;
	KUNIT_ASSERT_EQ(test, kiwi_mr_write(mr, mr->ibmr.iova, &v, 1), 0);
	KUNIT_EXPECT_EQ(test, p0[0x80], 0x5a);
	KUNIT_EXPECT_EQ(test, p1[0x80], 0);
	/* The next registration takes the new list. */
	atomic_set(&mr->state, KIWI_MR_INVALID);
	KUNIT_ASSERT_EQ(test, kiwi_mr_fast_reg(mr, key + 1, rw), 0);
	v = 0xa5;
	KUNIT_ASSERT_EQ(test, kiwi_mr_write(mr, mr->ibmr.iova, &v, 1), 0);
	KUNIT_EXPECT_EQ(test, p0[0x80], 0x5a);
	KUNIT_EXPECT_EQ(test, p1[0x80], 0xa5);
}

static void fast_reg_rules(struct kunit *test)
{
	struct mem_env *env = test->priv;
	struct kiwi_mr *mr = mk_mapped(test);
	int rw = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	u32 old = mr->stag, key = (old & ~0xffU) | 0xc3;

	KUNIT_EXPECT_EQ(test, kiwi_mr_fast_reg(mr, key + 0x100, rw), -EINVAL);
	KUNIT_EXPECT_EQ(test, kiwi_mr_fast_reg(mr, key, IB_ACCESS_REMOTE_WRITE),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kiwi_mr_fast_reg(mr, key, IB_ACCESS_MW_BIND),
			-EOPNOTSUPP);
	mr->ibmr.length++;
	KUNIT_EXPECT_EQ(test, kiwi_mr_fast_reg(mr, key, rw), -EINVAL);
	mr->ibmr.length--;
	mr->npages = 0;
	KUNIT_EXPECT_EQ(test, kiwi_mr_fast_reg(mr, key, rw), -EINVAL);
	mr->npages = NPAGES;
	mr->ibmr.page_size = 3000;
	KUNIT_EXPECT_EQ(test, kiwi_mr_fast_reg(mr, key, rw), -EINVAL);
	mr->ibmr.page_size = PAGE_SIZE;
	/* A holder from the old registration blocks a new one. */
	refcount_inc(&mr->ref);
	KUNIT_EXPECT_EQ(test, kiwi_mr_fast_reg(mr, key, rw), -EBUSY);
	KUNIT_EXPECT_EQ(test, atomic_read(&mr->state), KIWI_MR_INVALID);
	kiwi_mr_put(mr);
	KUNIT_ASSERT_EQ(test, kiwi_mr_fast_reg(mr, key, rw), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&mr->state), KIWI_MR_VALID);
	KUNIT_EXPECT_EQ(test, kiwi_mr_check(mr, key, &env->pd[0],
					    IB_ACCESS_REMOTE_WRITE,
					    mr->ibmr.iova, mr->ibmr.length),
			KIWI_MEM_OK);
	KUNIT_EXPECT_EQ(test, kiwi_mr_check(mr, old, &env->pd[0], 0,
					    mr->ibmr.iova, 1), KIWI_MEM_STAG);
	/* Still valid: no second registration on top. */
	KUNIT_EXPECT_EQ(test, kiwi_mr_fast_reg(mr, key, rw), -EINVAL);
}

/*
 * A type 2 window of QP 5 over 64 octets of a DMA MR: copies resolve
 * through the parent and stay in the window's bounds; the window is no
 * local key; proto/ sees it bound to its QP (all 64 bits of the stream_id)
 * and invalidatable by that stream's peer only; invalidation lets go of
 * the parent (SEC-02/06).
 */
static void window_rules(struct kunit *test)
{
	struct mem_env *env = test->priv;
	const struct ib_pd *pd = &env->pd[0];
	u8 *buf = kunit_kzalloc(test, 256, GFP_KERNEL);
	struct kiwi_mr *parent = mk_mr(test, KIWI_MR_DMA, 20,
				       IB_ACCESS_LOCAL_WRITE, 0, U64_MAX);
	u64 iova = (unsigned long)buf + 64;
	struct kiwi_mr *win = mk_mr(test, KIWI_MR_MW, 21,
				    IB_ACCESS_REMOTE_WRITE, iova, 64);
	struct kiwi_ddp_stream s = {
		.pd = (uintptr_t)pd, .qp = 5,
		.access = KIWI_DDP_ACC_REMOTE_WRITE,
	};
	struct kiwi_ddp_hdr h = {
		.tagged = true, .last = true, .dv = 1, .ulp_ctrl = 0x40,
		.stag = win->stag, .to = iova,
	};
	struct kiwi_ddp_stag_info st;
	u8 src[65];

	KUNIT_ASSERT_NOT_NULL(test, buf);
	memset(src, 0x3c, sizeof(src));
	win->mw_type = IB_MW_TYPE_2;
	win->qp_stream = 5;
	spin_lock_init(&win->state_lock);
	refcount_set(&parent->ref, 2);
	atomic_set(&parent->mw_bound, 1);
	RCU_INIT_POINTER(win->parent, parent);
	KUNIT_ASSERT_EQ(test, xa_err(xa_store(&env->kdev->mr_xa,
				kiwi_stag_index(win->stag), win, GFP_KERNEL)), 0);

	KUNIT_EXPECT_EQ(test, kiwi_mr_write(win, iova, src, 64), 0);
	KUNIT_EXPECT_EQ(test, buf[64], 0x3c);
	KUNIT_EXPECT_EQ(test, buf[127], 0x3c);
	KUNIT_EXPECT_EQ(test, buf[63], 0);
	KUNIT_EXPECT_EQ(test, buf[128], 0);
	KUNIT_EXPECT_EQ(test, kiwi_mr_write(win, iova + 1, src, 64), -EFAULT);
	KUNIT_EXPECT_EQ(test, kiwi_mr_write(win, iova - 1, src, 1), -EFAULT);
	KUNIT_EXPECT_EQ(test, buf[128], 0);
	KUNIT_EXPECT_EQ(test, kiwi_mr_check(win, win->stag, pd, 0, iova, 1),
			KIWI_MEM_STAG);
	atomic_set(&parent->state, KIWI_MR_INVALID);
	KUNIT_EXPECT_EQ(test, kiwi_mr_write(win, iova, src, 1), -EFAULT);
	atomic_set(&parent->state, KIWI_MR_VALID);

	kiwi_mr_stag_info(win, win->stag, &st);
	KUNIT_EXPECT_TRUE(test, st.valid);
	KUNIT_EXPECT_EQ(test, st.qp, 5ULL);
	KUNIT_EXPECT_EQ(test, st.access, KIWI_DDP_ACC_REMOTE_WRITE |
			KIWI_DDP_ACC_REMOTE_INV);
	KUNIT_EXPECT_EQ(test, kiwi_ddp_check_tagged(&h, 64,
				KIWI_DDP_ACC_REMOTE_WRITE, &s, &st),
			KIWI_TERM_ERR_NONE);
	KUNIT_EXPECT_EQ(test, kiwi_ddp_check_tagged(&h, 65,
				KIWI_DDP_ACC_REMOTE_WRITE, &s, &st),
			KIWI_TERM_ERR_DDP_T_BOUNDS);
	s.qp = 6;
	KUNIT_EXPECT_EQ(test, kiwi_ddp_check_tagged(&h, 1,
				KIWI_DDP_ACC_REMOTE_WRITE, &s, &st),
			KIWI_TERM_ERR_DDP_T_STAG_STREAM);
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_inval(&s, &st),
			KIWI_TERM_ERR_RDMAP_CANNOT_INVALIDATE);
	/*
	 * Bound to a QP by its 64-bit stream_id, not by its number: a later
	 * QP that reuses number 5 is another stream (here one whose low 32
	 * bits match).
	 */
	win->qp_stream = BIT_ULL(32) | 5;
	kiwi_mr_stag_info(win, win->stag, &st);
	s.qp = 5;
	KUNIT_EXPECT_EQ(test, kiwi_ddp_check_tagged(&h, 1,
				KIWI_DDP_ACC_REMOTE_WRITE, &s, &st),
			KIWI_TERM_ERR_DDP_T_STAG_STREAM);
	KUNIT_EXPECT_EQ(test, kiwi_mr_invalidate(env->kdev, win->stag, pd, 5),
			KIWI_MEM_ACCESS);
	win->qp_stream = 5;

	KUNIT_EXPECT_EQ(test, kiwi_mr_invalidate(env->kdev, win->stag, pd, 6),
			KIWI_MEM_ACCESS);
	KUNIT_EXPECT_EQ(test, kiwi_mr_invalidate(env->kdev, win->stag,
						 &env->pd[1], 5), KIWI_MEM_PD);
	KUNIT_EXPECT_EQ(test, kiwi_mr_invalidate(env->kdev, win->stag ^ 1, pd,
						 5), KIWI_MEM_STAG);
	KUNIT_EXPECT_EQ(test, kiwi_mr_invalidate(env->kdev, win->stag, pd, 5),
			KIWI_MEM_OK);
	KUNIT_EXPECT_EQ(test, atomic_read(&win->state), KIWI_MR_INVALID);
	KUNIT_EXPECT_NULL(test, rcu_access_pointer(win->parent));
	KUNIT_EXPECT_EQ(test, atomic_read(&parent->mw_bound), 0);
	KUNIT_EXPECT_EQ(test, refcount_read(&parent->ref), 1U);
	KUNIT_EXPECT_EQ(test, kiwi_mr_write(win, iova, src, 1), -EFAULT);
	/* Again: the peer must name a valid STag; locally harmless. */
	KUNIT_EXPECT_EQ(test, kiwi_mr_invalidate(env->kdev, win->stag, pd, 5),
			KIWI_MEM_STAG);
	KUNIT_EXPECT_EQ(test, kiwi_mr_invalidate(env->kdev, win->stag, pd,
						 KIWI_INV_LOCAL), KIWI_MEM_OK);
	/* A type 1 window cannot be invalidated at all. */
	win->mw_type = IB_MW_TYPE_1;
	KUNIT_EXPECT_EQ(test, kiwi_mr_invalidate(env->kdev, win->stag, pd,
						 KIWI_INV_LOCAL),
			KIWI_MEM_ACCESS);
}

struct stale_probe {
	struct kiwi_device *kdev;
	u32 stag;
	unsigned long lookups;
};

/* A peer probing a stale STag, as fast as it can. */
static int stale_prober(void *arg)
{
	struct stale_probe *p = arg;
	struct kiwi_mr *mr;

	while (!kthread_should_stop()) {
		mr = kiwi_mr_get(p->kdev, p->stag);
		if (mr)
			kiwi_mr_put(mr);
		p->lookups++;
		cond_resched();
	}
	return 0;
}

/*
 * Lookups of a stale STag on another CPU never make the consumer's
 * fast-register fail: they take no reference, not even for a moment.
 */
static void stale_probe_no_ref(struct kunit *test)
{
	struct mem_env *env = test->priv;
	struct kiwi_mr *mr = mk_mapped(test);
	int rw = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	struct stale_probe p = { .kdev = env->kdev, .stag = mr->stag };
	struct task_struct *t;
	unsigned int i, busy = 0;
	u32 key;

	KUNIT_ASSERT_EQ(test, xa_err(xa_store(&env->kdev->mr_xa,
					      kiwi_stag_index(mr->stag), mr,
					      GFP_KERNEL)), 0);
	t = kthread_run(stale_prober, &p, "kiwi-stale-probe");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	for (i = 0; i < 20000; i++) {
		key = (p.stag & ~0xffU) | (0xc0 + (i & 1));
		if (kiwi_mr_fast_reg(mr, key, rw) == -EBUSY) {
			busy++;
			continue;
		}
		kiwi_mr_invalidate(env->kdev, key, &env->pd[0], false);
		cond_resched();
	}
	kthread_stop(t);
	kunit_info(test, "%lu stale lookups during 20000 registrations\n",
		   p.lookups);
	KUNIT_EXPECT_EQ(test, busy, 0U);
	KUNIT_EXPECT_EQ(test, refcount_read(&mr->ref), 1U);
}

struct inval_racer {
	struct kiwi_device *kdev;
	const struct ib_pd *pd;
	u32 stag;
	unsigned long calls;
};

/* A peer's Sends with Invalidate of either of two keys, as fast as it can. */
static int inval_racer(void *arg)
{
	struct inval_racer *r = arg;

	while (!kthread_should_stop()) {
		kiwi_mr_invalidate(r->kdev, r->stag | (0xc0 + (r->calls & 1)),
				   r->pd, 7);
		r->calls++;
		if (!(r->calls & 63))
			cond_resched();
	}
	return 0;
}

/*
 * Invalidations on another CPU, of the current key and of a stale one,
 * racing the consumer's fast-registers, Local Invalidates and deregs
 * (kiwi_mr_quiesce()) of the same MR: a Local Invalidate of the current
 * key always succeeds (invalidating an invalid STag is allowed locally),
 * an MR quiesced stays invalid (its memory goes next), and the next
 * fast-register finds it invalid. Before the state lock an invalidation
 * of a stale key parked the MR BUSY and stored VALID back, over a dereg's
 * INVALID, and a Local Invalidate that met BUSY failed.
 */
static void invalidation_races(struct kunit *test)
{
	struct mem_env *env = test->priv;
	struct kiwi_mr *mr = mk_mapped(test);
	int rw = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	struct inval_racer r = {
		.kdev = env->kdev, .pd = &env->pd[0],
		.stag = mr->stag & ~0xffU,
	};
	unsigned int i, reg_failed = 0, inval_failed = 0, revived = 0;
	struct task_struct *t;
	u32 key;

	KUNIT_ASSERT_EQ(test, xa_err(xa_store(&env->kdev->mr_xa,
					      kiwi_stag_index(mr->stag), mr,
					      GFP_KERNEL)), 0);
	t = kthread_run(inval_racer, &r, "kiwi-inval-race");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	for (i = 0; i < 200000; i++) {
		key = r.stag | (0xc0 + (i & 1));
		if (kiwi_mr_fast_reg(mr, key, rw)) {
			reg_failed++;
			atomic_set(&mr->state, KIWI_MR_INVALID);
			continue;
		}
		if (i & 2) {
			if (kiwi_mr_invalidate(env->kdev, key, &env->pd[0],
					       KIWI_INV_LOCAL) != KIWI_MEM_OK)
				inval_failed++;
		} else {
			kiwi_mr_quiesce(mr);
			if (atomic_read(&mr->state) != KIWI_MR_INVALID)
				revived++;
		}
		if (!(i & 255))
			cond_resched();
	}
	kthread_stop(t);
	kunit_info(test, "%lu racing invalidations during %u registrations\n",
		   r.calls, i);
	KUNIT_EXPECT_GT(test, r.calls, 1000UL);
	KUNIT_EXPECT_EQ(test, reg_failed, 0U);
	KUNIT_EXPECT_EQ(test, inval_failed, 0U);
	KUNIT_EXPECT_EQ(test, revived, 0U);
}

static struct kunit_case mem_cases[] = {
	KUNIT_CASE(check_order),
	KUNIT_CASE(check_bounds),
	KUNIT_CASE(frmr_pages),
	KUNIT_CASE(frmr_copy),
	KUNIT_CASE(user_pages),
	KUNIT_CASE(dma_kva),
	KUNIT_CASE(write_needs_local_write),
	KUNIT_CASE(get_rules),
	KUNIT_CASE(invalidate_rules),
	KUNIT_CASE(inval_busy_rule),
	KUNIT_CASE(stag_info_judged_by_proto),
	KUNIT_CASE(fast_reg_rules),
	KUNIT_CASE(fast_reg_page_list),
	KUNIT_CASE(window_rules),
	KUNIT_CASE(stale_probe_no_ref),
	KUNIT_CASE(invalidation_races),
	{}
};

static struct kunit_suite mem_suite = {
	.name = "kiwi_mem",
	.init = kiwi_mem_test_init,
	.exit = kiwi_mem_test_exit,
	.test_cases = mem_cases,
};

kunit_test_suites(&mem_suite);
