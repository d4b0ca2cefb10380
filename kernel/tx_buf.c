// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: the transmit buffer (kiwi_qp_tx.buf) a QP frames its FPDUs in.
 *
 * The buffer is one compound page of KIWI_TX_BUF_LEN octets, the chunk.
 * TX copies each segment's payload from the MR into it and computes the
 * FPDU's CRC right after, while those octets are in cache; MPA/TCP then
 * hands the framed octets to TCP by reference (llp_tcp.c), so TCP copies
 * nothing. TCP holds references on the chunk until its octets are
 * acknowledged and the device let go of them, and retransmits from it:
 * a chunk with a reference besides the QP's own is never written again.
 * A batch is framed at the chunk's start when TCP holds none of it, else
 * right after the octets the batches before it took (tx.base), as long as
 * the largest FPDU the batch may start with fits there: TCP reads only the
 * octets it took, and those are never written again. When it does not
 * fit, TX takes a new chunk and drops its reference on the old, which is
 * freed with TCP's last; TCP treats its own page fragments the same way
 * (sk_page_frag_refill()). LLPs that copy (SCTP) leave the chunk free.
 *
 * The chunk and the fields here are TX's (tx.run_lock held) from attach
 * to detach.
 */
#include <linux/gfp.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>

#include "kiwi.h"
#include "llp.h"

/* The largest FPDU, markers and all, fits in a chunk. */
static_assert(KIWI_MPA_MULPDU_MAX + KIWI_MPA_GEN_MAX <= KIWI_TX_BUF_LEN);

/*
 * A new chunk, charged like the QP's other buffers (to its creator's
 * memory cgroup). @quick: fail rather than reclaim or compact (a poster's
 * system call; the worker tries harder).
 */
static struct page *kiwi_tx_chunk_alloc(struct kiwi_qp *qp, bool quick)
{
	gfp_t gfp = kiwi_qp_gfp(qp) | __GFP_COMP | __GFP_NOWARN;
	struct mem_cgroup *old;
	struct page *page;

	if (quick)
		gfp = (gfp & ~__GFP_RETRY_MAYFAIL) | __GFP_NORETRY;
	old = set_active_memcg(qp->memcg);
	page = alloc_pages(gfp, KIWI_TX_BUF_ORDER);
	set_active_memcg(old);
	return page;
}

/* The next batch is framed at @base in the chunk. */
static void kiwi_tx_buf_at(struct kiwi_qp_tx *tx, u32 base)
{
	tx->base = base;
	tx->buf = (u8 *)page_address(tx->chunk) + base;
}

static void kiwi_tx_chunk_set(struct kiwi_qp_tx *tx, struct page *page)
{
	tx->chunk = page;
	kiwi_tx_buf_at(tx, 0);
}

/**
 * kiwi_tx_buf_alloc - the first chunk, at attach
 * @qp: the QP
 *
 * Return: 0 or -ENOMEM.
 */
int kiwi_tx_buf_alloc(struct kiwi_qp *qp)
{
	struct page *page = kiwi_tx_chunk_alloc(qp, false);

	if (!page)
		return -ENOMEM;
	kiwi_tx_chunk_set(&qp->tx, page);
	return 0;
}

/**
 * kiwi_tx_buf_ready - may TX frame the next segment into the buffer?
 * @qp: the QP
 * @quick: a poster's system call: do not reclaim to get a new chunk
 *
 * Only the first segment of a batch can find the chunk held by TCP: the
 * batch before it was handed over whole. Then the batch follows the
 * octets TCP holds if an FPDU of the MULPDU fits after them (every segment
 * of the batch is at most that), else TX takes a new chunk.
 *
 * Return: true, or false if no chunk could be had (kiwi_tx_run() tries
 * again).
 */
bool kiwi_tx_buf_ready(struct kiwi_qp *qp, bool quick)
{
	struct kiwi_qp_tx *tx = &qp->tx;
	struct page *page;

	/*
	 * Only this QP's reference is left: TCP is done with the octets.
	 * put_page() orders TCP's last access before its decrement; our
	 * writes depend on this branch, so they come after the read.
	 */
	if (tx->len)
		return true;
	if (page_count(tx->chunk) == 1) {
		kiwi_tx_buf_at(tx, 0);
		return true;
	}
	if (tx->llp->seg_wire_len(tx, tx->mulpdu) <= KIWI_TX_BUF_LEN - tx->base)
		return true;
	page = kiwi_tx_chunk_alloc(qp, quick);
	if (!page) {
		kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_TX_BUF_SHORT);
		return false;
	}
	put_page(tx->chunk);
	kiwi_tx_chunk_set(tx, page);
	kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_TX_BUF_RENEWED);
	return true;
}

/**
 * kiwi_tx_buf_taken - the LLP took the whole batch
 * @tx: the QP's transmit state
 *
 * The next batch follows it in the chunk (kiwi_tx_buf_ready() goes back
 * to the start once TCP holds nothing).
 */
void kiwi_tx_buf_taken(struct kiwi_qp_tx *tx)
{
	kiwi_tx_buf_at(tx, tx->base + tx->len);
	tx->len = 0;
	tx->sent = 0;
}

/**
 * kiwi_tx_buf_free - detach: drop the QP's reference on the chunk
 * @tx: the QP's transmit state, TX stopped
 *
 * TCP may still hold the chunk for octets it has not delivered; it is
 * freed when they go.
 */
void kiwi_tx_buf_free(struct kiwi_qp_tx *tx)
{
	if (tx->chunk)
		put_page(tx->chunk);
	tx->chunk = NULL;
	tx->buf = NULL;
}
