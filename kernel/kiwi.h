/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kiwi: software iWARP RNIC. Core objects shared by the files in kernel/.
 *
 * Lock order (outermost first): kiwi_devices_lock -> qp->lock -> cq->lock
 * -> srq->lock (a polled or dropped completion gives its kernel SRQ WR's
 * slot back under the CQ's lock, srq.c); an MR's or window's state_lock is
 * a leaf, taken under qp->lock or alone. RTNL is never taken while one of
 * these is held; the netdev notifier runs under RTNL and takes
 * kiwi_devices_lock only.
 */
#ifndef KIWI_H
#define KIWI_H

#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/iw_cm.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/kiwi-abi.h>

#include "qp_dp.h"
#include "settings.h"
#include "stats.h"

/*
 * Allocations a user verb makes for its caller: charged to the caller's
 * memory cgroup, and failing with -ENOMEM at the cgroup's limit (or when
 * memory is short) instead of invoking the OOM killer or warning.
 */
#define KIWI_GFP_USER	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

#define KIWI_FW_VERSION "0.1.0"
/* The same version for query_device: major << 32 | minor << 16 | patch. */
#define KIWI_FW_VERSION_NUM	((0ULL << 32) | (1ULL << 16) | 0)
/*
 * A software device has no IEEE OUI. The vendor ID is "kiw" in ASCII so
 * tools that treat 0 as "no device" work; vendor_part_id stays 0.
 */
#define KIWI_VENDOR_ID		0x6b6977

/*
 * Device limits: what the software queues and tables really hold.
 * query_device reports them and every create/modify verb enforces them; a
 * request above a limit fails with -EINVAL, nothing is silently clamped.
 * The ring sizes are powers of two because ring slots are index & (n - 1);
 * a request is rounded up to the next power of two, which never exceeds
 * the (power-of-two) limit.
 *
 * The counts bound the per-object structures (about 150 MiB with every
 * count at its maximum). Queue memory, which grows with the sizes asked
 * for (a QP of 4096 + 4096 WRs costs 1.8 MiB, a CQ of 65536 CQEs 2 MiB),
 * is bounded by each device's budget instead (qmem.c,
 * kiwi.queue_mem_mb): the counts times the largest sizes would be about
 * 16 GiB.
 */
#define KIWI_MAX_QP		4096	/* QPs per device */
#define KIWI_MAX_QP_WR		4096	/* SQ and RQ ring entries */
#define KIWI_MAX_CQ		4096	/* CQs per device */
#define KIWI_MAX_CQE		65536	/* CQ ring entries */
#define KIWI_MAX_PD		65536	/* PDs per device */
#define KIWI_MAX_MR		65536	/* MRs per device (STag indices in use) */
#define KIWI_MAX_MW		65536	/* memory windows per device (STags too) */
#define KIWI_MAX_SRQ		1024	/* SRQs per device */
#define KIWI_MAX_SRQ_WR		4096	/* SRQ ring entries */
#define KIWI_MAX_ORD		128	/* outstanding RDMA Reads we issue per QP */
#define KIWI_MAX_IRD		128	/* inbound RDMA Reads we serve per QP */
#define KIWI_MAX_FRMR_PAGES	512	/* page list length of a fast-reg MR */
#define KIWI_FRMR_MIN_PAGE	SZ_4K	/* smallest page size of that list */
#define KIWI_MAX_MR_SIZE	BIT_ULL(40)	/* one MR; pinning limits apply too */
#define KIWI_MAX_SGE_RD		1	/* an RDMA Read sink is one STag + TO */

/* QPN space: 1 .. KIWI_MAX_QPN, allocated cyclically so numbers age out. */
#define KIWI_MAX_QPN		0xffffffU
/* STag = index (24 bits) << 8 | key (8 bits); index 0 is never used. */
#define KIWI_STAG_INDEX_MAX	0xffffffU
#define KIWI_STAG_KEY_BITS	8

static inline u32 kiwi_stag_index(u32 stag)
{
	return stag >> KIWI_STAG_KEY_BITS;
}

/**
 * struct kiwi_device - one kiwi ib_device bound to one net_device
 * @ibdev: the RDMA core device (must be first: ib_alloc_device)
 * @netdev: the bound net_device, held from newlink until dealloc_driver
 * @netdev_tracker: tracker of the @netdev reference
 * @list: entry in kiwi_devices, protected by kiwi_devices_lock
 * @port_state: last port state reported by an event; written under RTNL
 * @qp_xa: QPN -> struct kiwi_qp; the xarray's own lock
 * @qp_next: cyclic QPN cursor, under the @qp_xa lock
 * @qp_streams: the last stream identity given to a QP (kiwi_qp.stream_id;
 *              atomic)
 * @mr_xa: STag index -> struct kiwi_mr; the xarray's own lock, readers RCU
 * @mr_next: cyclic STag index cursor, under the @mr_xa lock
 * @num_pd: PDs in use (atomic, bounded by KIWI_MAX_PD)
 * @num_cq: CQs in use
 * @num_qp: QPs in use
 * @num_srq: SRQs in use
 * @num_mr: MRs in use
 * @num_mw: memory windows in use
 * @qmem_used: queue memory held by the device's objects, in octets,
 *             bounded by the budget (qmem.c)
 * @settings: the administrator's settings (settings.h)
 * @stats: counters (stats.h)
 * @gone_work: the net_device is being unregistered: unregisters the
 *             device once its connected QPs are gone (device.c)
 * @gone_deadline: jiffies after which @gone_work waits no longer
 * @gone: the net_device's unregistration was seen (RTNL): the core
 *        repeats NETDEV_UNREGISTER every second while references remain,
 *        which must neither move @gone_deadline nor queue @gone_work again
 */
struct kiwi_device {
	struct ib_device ibdev;
	struct net_device *netdev;
	netdevice_tracker netdev_tracker;
	struct list_head list;
	enum ib_port_state port_state;
	struct xarray qp_xa;
	u32 qp_next;
	atomic64_t qp_streams;
	struct xarray mr_xa;
	u32 mr_next;
	atomic_t num_pd;
	atomic_t num_cq;
	atomic_t num_qp;
	atomic_t num_srq;
	atomic_t num_mr;
	atomic_t num_mw;
	atomic64_t qmem_used;
	struct kiwi_settings settings;
	struct kiwi_dev_stats stats;
	struct delayed_work gone_work;
	unsigned long gone_deadline;
	bool gone;
};

/**
 * struct kiwi_mmap - a ring area user space maps with mmap(2)
 * @entry: the RDMA core's mmap entry; its key goes into create responses
 * @area: the vmalloc'd area, charged to the creator's memory cgroup and
 *        to the device's queue memory; freed (and the device's share given
 *        back) by mmap_free once the entry is removed and the last user
 *        mapping is gone
 */
struct kiwi_mmap {
	struct rdma_user_mmap_entry entry;
	void *area;
};

/**
 * struct kiwi_ring - a ring in the layout of include/uapi/rdma/kiwi-abi.h
 * @ctrl: control block at offset 0 of the area
 * @elems: first element, KIWI_RING_CTRL_SIZE octets into the area
 * @num: number of elements, a power of two
 * @elem_size: size of one element
 * @prod: the kernel's private producer index (rings the kernel produces)
 * @cons: the kernel's private consumer index (rings the kernel consumes)
 * @mmap: the user mapping, or NULL for a ring only the kernel uses
 * @kdev: the device whose queue memory holds the ring
 *
 * For a ring shared with user space the kernel never reads back its own
 * index from @ctrl: user space can write there. It keeps @prod or @cons and
 * publishes them with release stores. The owner of the ring (CQ, QP, SRQ)
 * serialises all access to @prod and @cons with its lock.
 */
struct kiwi_ring {
	struct kiwi_ring_ctrl *ctrl;
	void *elems;
	u32 num;
	u32 elem_size;
	u32 prod;
	u32 cons;
	u32 flags;	/* what ctrl->flags holds; a QP's rings: qp->lock */
	struct kiwi_mmap *mmap;
	struct kiwi_device *kdev;
};

/**
 * struct kiwi_ucontext - a process's context of a kiwi device
 * @ibuc: core context
 * @features: KIWI_CTX_FEAT_* offered to it at creation (the abi_features
 *            module parameter then), fixed for its lifetime
 */
struct kiwi_ucontext {
	struct ib_ucontext ibuc;
	u32 features;
};

struct kiwi_pd {
	struct ib_pd ibpd;
};

/* No kernel SRQ slot: a send or RQ completion, or a user SRQ's WR. */
#define KIWI_SRQ_NO_SLOT	U32_MAX

/**
 * struct kiwi_cq_kent - a kernel CQE's companions in its ring slot
 * @qp: the ib_qp it belongs to (a kernel work completion carries a QP
 *      pointer, which the ring element cannot)
 * @srq_slot: a receive from a kernel SRQ: the slot holding its WR's copy
 *            until the completion is polled (kiwi_srq_polled()) or
 *            dropped (kiwi_srq_put_back()); else KIWI_SRQ_NO_SLOT
 */
struct kiwi_cq_kent {
	struct ib_qp *qp;
	u32 srq_slot;
};

/**
 * struct kiwi_cq - completion queue
 * @ibcq: core CQ (must be first)
 * @lock: serialises producers (completions, flushes) and kernel pollers;
 *        protects @ring indices and @kent
 * @ring: CQE ring; mapped to user space for user CQs
 * @kent: kernel CQs only: what the kernel keeps beside the CQE in each
 *        ring slot
 * @overrun: set once by the first overrun (atomic); IB_EVENT_CQ_ERR is
 *           reported then and never again
 * @overrun_work: after the overrun, moves the QPs using the CQ to the
 *                error state (cq.c)
 */
struct kiwi_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* see kernel-doc above */
	struct kiwi_ring ring;
	struct kiwi_cq_kent *kent;
	atomic_t overrun;
	struct work_struct overrun_work;
};

/**
 * struct kiwi_srq - shared receive queue
 * @ibsrq: core SRQ (must be first)
 * @lock: protects @ring indices, @limit, @taken and @free_slot/@nfree
 * @ring: RQE ring; mapped to user space for user SRQs
 * @max_sge: SGEs per receive WR
 * @limit: armed low watermark for IB_EVENT_SRQ_LIMIT_REACHED, 0 when not
 *         armed; the receive path reports the event once and clears it
 * @held: receive WRs a QP took off the ring that are not done yet: for a
 *        user SRQ until their completion is on the CQ, for a kernel SRQ
 *        until the consumer polled it (as a hardware SRQ keeps the WR
 *        until then). A kernel post counts them as outstanding, so the
 *        WRs a QP holds for a grace period never exceed its room (rx_gp.c)
 *        and a WR given back always finds its ring slot free
 * @taken: kernel SRQs: a copy of each WR taken, by slot (@ring.num), until
 *         its completion is polled; NULL for user SRQs
 * @free_slot: kernel SRQs: a stack of the @nfree slots of @taken not in use
 * @nfree: entries on @free_slot
 */
struct kiwi_srq {
	struct ib_srq ibsrq;
	spinlock_t lock;	/* see kernel-doc above */
	struct kiwi_ring ring;
	u32 max_sge;
	u32 limit;
	atomic_t held;
	struct kiwi_rqe *taken;
	u32 *free_slot;
	u32 nfree;
};

/**
 * struct kiwi_qp - RC queue pair
 * @ibqp: core QP (must be first)
 * @lock: protects @state, @access, @ord, @ird and the kernel-side indices
 *        of @sq and @rq; taken with interrupts disabled (kernel consumers
 *        post from any context). RX holds it while it copies into an RQ
 *        element or a Read's sink, so no octet lands there after a flush
 *        (which takes it) completed the WR
 * @state: IB QP state
 * @access: IB_ACCESS_* allowed to the remote peer
 * @access_sets: how often modify_qp set @access since create or RESET,
 *               saturating at 2 (kiwi_llp_commit() reads it)
 * @ord: outstanding RDMA Reads this QP may issue
 * @ird: inbound RDMA Reads this QP serves
 * @max_send_sge: SGEs per send WR
 * @max_recv_sge: SGEs per receive WR
 * @max_inline: inline data octets per send WR
 * @sq_sig_type: IB_SIGNAL_ALL_WR or IB_SIGNAL_REQ_WR
 * @stream_id: the identity of the QP's stream to type 2 memory windows
 *             (struct kiwi_ddp_stream.qp): unique for the device's
 *             lifetime, unlike the QP number, which a later QP may reuse;
 *             never 0 (KIWI_INV_LOCAL) nor KIWI_DDP_ANY_QP; set at create
 *             and anew at each attach (qp->lock), so a window bound while
 *             the QP carried one stream serves no later one
 * @sq: send ring
 * @rq: receive ring; unused (num == 0) when the QP has an SRQ
 * @ref: users of the QP: the creator, the iWARP CM (iw_add_ref), each
 *       kiwi endpoint that took it for a connection (kiwi_qp_lookup), a
 *       pending Local Invalidate completion (qp_sq.c) and pending receive
 *       completions (rx_gp.c)
 * @released: completed when @ref drops to zero; destroy waits for it
 * @owner: who may bind a connection to the QP by its number (iw_connect,
 *         iw_accept): a user QP's creating process (thread group), a
 *         kernel QP's creating thread (kernel threads may too); a
 *         reference on the struct pid
 * @cm_named: iw_get_qp returned the QP (under the qp_xa lock): destroy
 *            waits one RCU grace period after unpublishing it
 * @destroyed: destroy began (qp->lock); no connection may take the QP
 * @llp_bound: a stream was attached and its detach has not finished
 *             (qp->lock): RX and TX may still hold what the stream used (an
 *             SRQ element, MR references, the transmit buffers) until
 *             then. The QP is not reset while it is set, so no other stream
 *             attaches over what the detach is about to free
 *             (kiwi_qp_llp_wait_detached())
 * @last_wqe: IB_EVENT_QP_LAST_WQE_REACHED was reported since the QP last
 *            left RESET (qp->lock); SRQ QPs only (kiwi_qp_last_wqe())
 * @memcg: user QPs: the memory cgroup of the creator, which the transmit
 *         buffers allocated later by the connection manager are charged to
 *         (held from create to destroy); NULL for kernel QPs
 * @tx: transmit side of the data path (qp_dp.h)
 * @rx: receive side of the data path (qp_dp.h)
 * @rx_gp: receive completions held for an RCU grace period (rx_gp.c)
 * @stats: counters and last Terminates (stats.h)
 *
 * iWARP states map onto @state: IDLE = INIT (RTR and RTS requests before a
 * connection is attached are accepted and leave the QP in INIT), RTS =
 * RTS, CLOSING = SQD, TERMINATE = SQE, ERROR = ERR.
 */
struct kiwi_qp {
	struct ib_qp ibqp;
	spinlock_t lock;	/* see kernel-doc above */
	enum ib_qp_state state;
	int access;
	u8 access_sets;
	u8 ord;
	u8 ird;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_inline;
	enum ib_sig_type sq_sig_type;
	u64 stream_id;
	struct kiwi_ring sq;
	struct kiwi_ring rq;
	struct kref ref;
	struct completion released;
	struct pid *owner;
	bool cm_named;
	bool destroyed;
	bool llp_bound;
	bool last_wqe;
	struct mem_cgroup *memcg;
	struct kiwi_qp_tx tx;
	struct kiwi_qp_rx rx;
	struct kiwi_rx_gp rx_gp;
	struct kiwi_qp_stats stats;
};

/**
 * enum kiwi_mr_kind - how an MR turns addresses into pages
 * @KIWI_MR_DMA: kernel virtual addresses, all of memory (ib_alloc_pd)
 * @KIWI_MR_USER: pinned user pages (ib_umem), addressed by the iova
 * @KIWI_MR_FAST_REG: a page list of kernel virtual addresses (map_mr_sg),
 *                    made valid by IB_WR_REG_MR
 * @KIWI_MR_MW: a memory window (mem_mw.c): a remote-access STag over a
 *              range of a user MR (its parent), valid while bound
 */
enum kiwi_mr_kind {
	KIWI_MR_DMA,
	KIWI_MR_USER,
	KIWI_MR_FAST_REG,
	KIWI_MR_MW,
};

/* kiwi_mr.state */
enum {
	KIWI_MR_INVALID,	/* no access; fast-reg MRs start here */
	KIWI_MR_VALID,		/* accessible under @stag */
	KIWI_MR_BUSY,		/* windows: being bound */
};

/**
 * struct kiwi_mr - memory region (user, DMA or fast-reg)
 * @ibmr: core MR
 * @kind: enum kiwi_mr_kind
 * @pd: the protection domain (ib_core sets ibmr.pd only after the create
 *      verb returned, and the STag is published before that)
 * @ref: one for the registration (dropped by dereg_mr), one per data-path
 *       holder (kiwi_mr_get); the last put frees the structure
 * @state: KIWI_MR_INVALID / VALID / BUSY, changed under @state_lock
 * @stag: the STag the MR is valid under (lkey == rkey); the index bits
 *        never change, the key changes with each fast-register
 * @access: IB_ACCESS_* of the registration
 * @iova: first address of the registration
 * @length: registered octets
 * @page_shift: fast-reg MRs: log2 of the page list's page size
 * @nreg: fast-reg MRs: page list entries in the registration
 * @umem: user MRs: the pinned memory
 * @upages: user MRs: the pinned pages in address order (O(1) lookup)
 * @pages: fast-reg MRs: page list (kernel virtual addresses) map_mr_sg
 *	   builds for the next registration
 * @reg_pages: fast-reg MRs: the page list of the registration, copied from
 *	       @pages by the fast-register: a map_mr_sg for the next I/O
 *	       while this registration is still valid changes nothing it
 *	       reaches
 * @max_pages: fast-reg MRs: capacity of @pages and @reg_pages
 * @npages: fast-reg MRs: entries map_mr_sg filled in
 * @mw_bound: MRs: windows bound to it; -1 once dereg_mr began or
 *            rereg_mr replaced the MR, after which no window binds
 *            (atomic)
 * @mw_seen: MRs: a window was bound to it once: dereg_mr waits a grace
 *           period, as a window's reader holds no reference on the MR
 * @mw_type: windows: IB_MW_TYPE_1 or IB_MW_TYPE_2; 0 once deallocated
 *           (written under @state_lock)
 * @state_lock: serialises the changes of @state and of the registration
 *              fields: a window's bind, invalidation and dealloc; an MR's
 *              fast-register, invalidation and quiesce (any context,
 *              interrupts disabled; a leaf lock). The data path reads
 *              @state without it.
 * @parent: windows: the MR it is bound to, holding a reference and one
 *          count of its @mw_bound; NULL while unbound. Written under
 *          @state_lock, read under RCU
 * @qp_stream: windows: the stream_id of the QP a type 2 window is bound
 *             to (not its number, which a later QP may reuse),
 *             KIWI_DDP_ANY_QP for type 1 (PD-scoped)
 * @rcu: frees the structure after RCU readers of the mr_xa are done
 *
 * Lifetime: the STag is published in kiwi_device.mr_xa only when the MR is
 * complete; lookups are RCU + refcount_inc_not_zero(@ref). dereg_mr
 * unpublishes the STag, makes the MR invalid and, if data-path holders
 * remain, waits one RCU grace period before it releases @umem, @upages and
 * @pages: every access to the memory (kiwi_mr_read/write, and the use of a
 * kiwi_mr_page result) runs inside an RCU read-side section and first
 * checks @state, so after the grace period nobody touches the memory.
 * Holders keep only the structure alive; dereg_mr never waits for them.
 *
 * Registration fields (@stag, @access, @iova, @length, @page_shift,
 * @nreg, the entries of @reg_pages) change only in a fast-register, under
 * @state_lock while @state is INVALID; they are published by the release
 * store of VALID and read after an acquire load of @state. @kind,
 * @pd, @umem, @upages, @max_pages are fixed at creation, except that
 * rereg_mr hands @umem and @upages over to the MR replacing this one once
 * kiwi_mr_quiesce() made this one invalid for good (mem_rereg.c). @pages
 * and @npages are written by map_mr_sg (process context, the consumer's
 * serialisation) and read only by the fast-register; readers of
 * @reg_pages bound indices by @nreg and @max_pages.
 *
 * A memory window uses the same fields for its binding (@stag, @access
 * holding remote rights only, @iova and @length in its parent's address
 * space) and the same @state protocol; bind, invalidate and dealloc
 * change them under @state_lock (mem_mw.c, mem_access.c). Page resolution
 * goes through @parent, whose own state is checked as well.
 */
struct kiwi_mr {
	struct ib_mr ibmr;
	enum kiwi_mr_kind kind;
	const struct ib_pd *pd;
	refcount_t ref;
	atomic_t state;
	u32 stag;
	int access;
	u64 iova;
	u64 length;
	u32 page_shift;
	u32 nreg;
	struct ib_umem *umem;
	struct page **upages;
	u64 *pages;
	u64 *reg_pages;
	u32 max_pages;
	u32 npages;
	atomic_t mw_bound;
	bool mw_seen;
	u8 mw_type;
	spinlock_t state_lock;	/* see kernel-doc above */
	struct kiwi_mr __rcu *parent;
	u64 qp_stream;
	struct rcu_head rcu;
};

/**
 * struct kiwi_mw - a memory window as ib_core sees it
 * @ibmw: core MW (must be first)
 * @win: the window's STag object, published in kiwi_device.mr_xa
 */
struct kiwi_mw {
	struct ib_mw ibmw;
	struct kiwi_mr *win;
};

static inline struct kiwi_device *to_kdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct kiwi_device, ibdev);
}

static inline struct kiwi_cq *to_kcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct kiwi_cq, ibcq);
}

static inline struct kiwi_qp *to_kqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct kiwi_qp, ibqp);
}

/* GFP flags for memory a QP holds: charged to the creator of a user QP. */
static inline gfp_t kiwi_qp_gfp(const struct kiwi_qp *qp)
{
	return qp->ibqp.uobject ? KIWI_GFP_USER : GFP_KERNEL;
}

static inline struct kiwi_srq *to_ksrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct kiwi_srq, ibsrq);
}

static inline struct kiwi_mr *to_kmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct kiwi_mr, ibmr);
}

static inline struct kiwi_mw *to_kmw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct kiwi_mw, ibmw);
}

/* The user context of a verb's udata, NULL for a kernel caller. */
static inline struct ib_ucontext *kiwi_uctx(struct ib_udata *udata)
{
	struct kiwi_ucontext *uctx;

	if (!udata)
		return NULL;
	uctx = rdma_udata_to_drv_context(udata, struct kiwi_ucontext, ibuc);
	return &uctx->ibuc;
}

/* The KIWI_CTX_FEAT_* of a user verb's context, 0 for a kernel caller. */
static inline u32 kiwi_uctx_features(struct ib_udata *udata)
{
	if (!udata)
		return 0;
	return rdma_udata_to_drv_context(udata, struct kiwi_ucontext,
					 ibuc)->features;
}

/* Reserve one unit of a per-device count bounded by @max; false when full. */
static inline bool kiwi_count_get(atomic_t *count, int max)
{
	if (atomic_inc_return(count) <= max)
		return true;
	atomic_dec(count);
	return false;
}

/*
 * main.c. kiwi_wq: the workqueue for work a teardown path cancels (SCTP RX,
 * a CQ overrun). WQ_MEM_RECLAIM: the CM's workqueue and kernel ULPs'
 * recovery workers are reclaim workqueues, and one may wait for a work only
 * on another (check_flush_dependency()); a system_wq work found running at
 * such a cancel was a workqueue WARNING.
 */
extern struct workqueue_struct *kiwi_wq;
int kiwi_device_list_add(struct kiwi_device *kdev);
void kiwi_device_unlist(struct kiwi_device *kdev);
void kiwi_device_recheck(struct kiwi_device *kdev);

/* device.c */
int kiwi_device_create(const char *name, struct net_device *ndev);
void kiwi_device_netdev_event(struct kiwi_device *kdev, unsigned long event);

/* verbs.c */
int kiwi_udata_in_ok(struct ib_udata *udata);
int kiwi_udata_respond(struct ib_udata *udata, void *resp, size_t len);
int kiwi_udata_respond_grown(struct ib_udata *udata, void *resp, size_t len,
			     size_t base);
int kiwi_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void kiwi_dealloc_ucontext(struct ib_ucontext *ibuc);
void kiwi_disassociate_ucontext(struct ib_ucontext *ibuc);
int kiwi_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int kiwi_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* qmem.c */
int kiwi_qmem_charge(struct kiwi_device *kdev, u64 bytes);
void kiwi_qmem_uncharge(struct kiwi_device *kdev, u64 bytes);

/* ring.c */
int kiwi_ring_alloc(struct kiwi_device *kdev, struct kiwi_ring *r, u32 num,
		    u32 elem_size, struct ib_ucontext *ibuc);
void kiwi_ring_free(struct kiwi_ring *r);
u64 kiwi_ring_key(const struct kiwi_ring *r);
u32 kiwi_ring_avail(const struct kiwi_ring *r);
u32 kiwi_ring_consumer(const struct kiwi_ring *r);
u32 kiwi_ring_room(const struct kiwi_ring *r);
void kiwi_ring_produced(struct kiwi_ring *r);
void kiwi_ring_consumed(struct kiwi_ring *r);
void kiwi_ring_unconsumed(struct kiwi_ring *r);
void kiwi_ring_discard(struct kiwi_ring *r);
void kiwi_ring_set_error(struct kiwi_ring *r, bool error);
void kiwi_ring_set_doorbell(struct kiwi_ring *r, bool needed);
u32 kiwi_ring_published(const struct kiwi_ring *r);
int kiwi_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void kiwi_mmap_free(struct rdma_user_mmap_entry *entry);

static inline void *kiwi_ring_elem(const struct kiwi_ring *r, u32 idx)
{
	return r->elems + (size_t)(idx & (r->num - 1)) * r->elem_size;
}

/* cq.c */
int kiwi_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata);
int kiwi_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int kiwi_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int kiwi_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int kiwi_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);

/*
 * kiwi_cq_push() results, OR-ed over a batch of pushes for kiwi_cq_signal():
 * both can come from one batch (a push that disarms, then one that finds
 * the CQ full), and each must be delivered.
 */
enum {
	KIWI_CQ_FIRE = BIT(0),		/* the armed completion event is due */
	KIWI_CQ_OVERRUN = BIT(1),	/* the CQ was full: a completion lost */
};

int kiwi_cq_push(struct kiwi_cq *cq, const struct kiwi_cqe *cqe,
		 struct ib_qp *qp, u32 srq_slot);
void kiwi_cq_signal(struct kiwi_cq *cq, int push_result);
void kiwi_cq_clean(struct kiwi_cq *cq, struct ib_qp *ibqp);

/* qp.c */
int kiwi_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *attr,
		   struct ib_udata *udata);
int kiwi_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata);
int kiwi_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init);
int kiwi_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
void kiwi_qp_get(struct kiwi_qp *qp);
void kiwi_qp_put(struct kiwi_qp *qp);
struct kiwi_qp *kiwi_qp_lookup(struct kiwi_device *kdev, int qpn, bool ref);
bool kiwi_qp_caller_owns(const struct kiwi_qp *qp);
bool kiwi_qp_destroyed(struct kiwi_qp *qp);

/* qp_post.c */
int kiwi_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr);
int kiwi_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr);
int kiwi_rqe_from_wr(struct kiwi_rqe *rqe, const struct ib_recv_wr *wr,
		     u32 max_sge);

/* qp_flush.c */
/* kiwi_qp_flush()'s result, reported once the QP lock is dropped */
struct kiwi_qp_flushed {
	int send_res;
	int recv_res;
	bool last_wqe;
};

void kiwi_qp_flush(struct kiwi_qp *qp, struct kiwi_qp_flushed *out);
void kiwi_qp_flush_report(struct kiwi_qp *qp,
			  const struct kiwi_qp_flushed *out);
int kiwi_rq_flush(struct kiwi_qp *qp);
u16 kiwi_sq_wc_opcode(u8 sq_opcode);

/* qp_sq.c: send queue bookkeeping of the data path */
int kiwi_swq_alloc(struct kiwi_qp *qp);
void kiwi_swq_free(struct kiwi_qp *qp);
u32 kiwi_sq_produced(struct kiwi_qp *qp);
int kiwi_sq_retire(struct kiwi_qp *qp);
void kiwi_sq_complete(struct kiwi_qp *qp, u32 idx, u8 status);
bool kiwi_sqe_is_read(const struct kiwi_qp *qp, const struct kiwi_sqe *sqe);
u8 kiwi_sq_execute(struct kiwi_qp *qp, u32 idx);
u8 kiwi_swqe_local_op(struct kiwi_qp *qp, const struct kiwi_swqe *w,
		      bool *gp);
void kiwi_sq_fail(struct kiwi_qp *qp, u32 idx, u8 status);
int kiwi_sq_fail_locked(struct kiwi_qp *qp, u32 idx, u8 status);
void kiwi_sq_discard(struct kiwi_qp *qp);
int kiwi_sq_flush(struct kiwi_qp *qp);

/* qp_llp.c: attach/detach, state changes from the data path */
bool kiwi_qp_connected(struct kiwi_qp *qp);
void kiwi_qp_event(struct kiwi_qp *qp, enum ib_event_type type);
bool kiwi_qp_to_error(struct kiwi_qp *qp);
void kiwi_qp_fail_wr(struct kiwi_qp *qp, u32 idx, u8 status);
bool kiwi_qp_last_wqe_due(struct kiwi_qp *qp);
void kiwi_qp_last_wqe(struct kiwi_qp *qp);
void kiwi_qp_llp_wait_detached(struct kiwi_qp *qp);
void kiwi_qp_close_llp(struct kiwi_qp *qp, bool abortive);
void kiwi_qp_drain_llp(struct kiwi_qp *qp);

/* qp_term.c: errors and Terminate messages */
void kiwi_qp_fail(struct kiwi_qp *qp, enum kiwi_term_err err,
		  const u8 *seg, u32 seg_len, u32 ulpdu_len);
void kiwi_qp_term_received(struct kiwi_qp *qp, const u8 *ulpdu, u32 len,
			   bool startup_over);

/* tx.c */
int kiwi_tx_wq_init(void);
void kiwi_tx_wq_exit(void);
void kiwi_tx_init(struct kiwi_qp *qp);
int kiwi_tx_attach(struct kiwi_qp *qp, u32 ord, u32 ird);
void kiwi_tx_release(struct kiwi_qp *qp);
int kiwi_tx_buf_alloc(struct kiwi_qp *qp);
bool kiwi_tx_buf_ready(struct kiwi_qp *qp, bool quick);
void kiwi_tx_buf_taken(struct kiwi_qp_tx *tx);
void kiwi_tx_buf_free(struct kiwi_qp_tx *tx);
void kiwi_tx_kick(struct kiwi_qp *qp);
void kiwi_tx_kick_now(struct kiwi_qp *qp);
bool kiwi_irq_push(struct kiwi_qp *qp, const struct kiwi_irq_ent *ent);
void kiwi_irq_served(struct kiwi_qp *qp);
int kiwi_tx_msg_begin(struct kiwi_tx_msg *m, struct kiwi_qp_tx *tx,
		      u8 op, u32 len, u64 to);
u32 kiwi_tx_request_msn(struct kiwi_qp *qp);
void kiwi_tx_rreq(struct kiwi_qp *qp, const struct kiwi_rdmap_rreq *r);
/* The ORQ entries a peer's refusal may concern (kiwi_tx_orq_refused()). */
enum kiwi_orq_kind {
	KIWI_ORQ_READ,		/* a Read WR */
	KIWI_ORQ_ATOMIC,	/* an atomic WR */
	KIWI_ORQ_PROBE,		/* the Read after an Immediate Data WR */
};

bool kiwi_tx_orq_refused(struct kiwi_qp *qp, enum kiwi_orq_kind kind,
			 const u32 *msn, u32 *idx);
void kiwi_tx_wr_failed(struct kiwi_qp *qp, u32 idx, u8 status);

/* tx_wr.c */
bool kiwi_tx_start_sqe(struct kiwi_qp *qp);
void kiwi_tx_read_refused(struct kiwi_qp *qp, const struct kiwi_term *t);

/* tx_imm.c: RFC 7306 Immediate Data, transmit side */
bool kiwi_sqe_is_imm(const struct kiwi_sqe *sqe);
bool kiwi_tx_imm_take(struct kiwi_qp *qp, struct kiwi_swqe *w, u32 idx);
u8 kiwi_tx_imm_plan(const struct kiwi_sqe *sqe, bool probe,
		    struct kiwi_tx_msg *m);
void kiwi_tx_imm_next(struct kiwi_qp *qp, struct kiwi_tx_msg *m);
void kiwi_tx_imm_confirmed(struct kiwi_qp *qp);
void kiwi_tx_imm_refused(struct kiwi_qp *qp, const struct kiwi_term *t);

/* tx_atomic.c: RFC 7306 atomics, transmit side */
bool kiwi_tx_aresp(struct kiwi_qp *qp, const struct kiwi_irq_ent *ent);
bool kiwi_sqe_is_atomic(const struct kiwi_qp *qp, const struct kiwi_sqe *sqe);
u8 kiwi_tx_setup_atomic(struct kiwi_qp *qp, u32 idx, struct kiwi_swqe *w,
			struct kiwi_tx_msg *m);
void kiwi_tx_atomic_refused(struct kiwi_qp *qp, const struct kiwi_term *t);

/* rx.c */
void kiwi_rx_stream(struct kiwi_qp *qp, struct kiwi_ddp_stream *s);
enum kiwi_term_err kiwi_rx_check_qn1(struct kiwi_qp *qp, u32 len);
struct kiwi_mr *kiwi_rx_lookup(struct kiwi_qp *qp, u32 stag,
			       struct kiwi_ddp_stag_info *st);
void kiwi_rx_release(struct kiwi_qp *qp);
void kiwi_rx_header(struct kiwi_qp *qp, const struct kiwi_mpa_ev *ev);
void kiwi_rx_place(struct kiwi_qp *qp, u32 uoff, const u8 *p, u32 len);
void kiwi_rx_end(struct kiwi_qp *qp);
void kiwi_rx_fail_llp(struct kiwi_qp *qp, enum kiwi_term_err err);
void kiwi_rx_segment(struct kiwi_qp *qp, const u8 *ulpdu, u32 len);
void kiwi_rx_segment_placed(struct kiwi_qp *qp, const u8 *hdr, u32 hdr_len,
			    u32 len);
/* rx_early.c */
bool kiwi_rx_early(struct kiwi_qp *qp, const u8 *ulpdu, u32 len);

/* rx_imm.c: RFC 7306 Immediate Data, receive side */
enum kiwi_term_err kiwi_rx_imm(struct kiwi_qp *qp);
void kiwi_rx_imm_done(struct kiwi_qp *qp);
void kiwi_rx_write_seen(struct kiwi_qp *qp);

/* rx_atomic.c: RFC 7306 atomics, receive side */
enum kiwi_term_err kiwi_rx_areq(struct kiwi_qp *qp);
enum kiwi_term_err kiwi_rx_aresp(struct kiwi_qp *qp);
void kiwi_rx_aresp_done(struct kiwi_qp *qp);

/* llp_tcp_rx.c, llp_tcp_ahead.c: MPA over TCP, receive side */
void kiwi_llp_tcp_receive(struct kiwi_qp *qp, struct sock *sk);
void kiwi_llp_tcp_rx_init(struct kiwi_qp *qp, struct sock *sk);
void kiwi_llp_tcp_data_ready(struct kiwi_qp *qp, struct sock *sk);
void kiwi_llp_tcp_stop(struct kiwi_qp *qp);
void kiwi_llp_tcp_fail_mpa(struct kiwi_qp *qp, u8 err);
void kiwi_rx_ahead_init(struct kiwi_qp *qp, struct sock *sk);
u32 kiwi_rx_ahead_checked(struct kiwi_qp *qp, struct sock *sk,
			  struct sk_buff *skb, u32 off, u32 len);

/* rx_rqe.c */
u8 kiwi_rqe_check(struct kiwi_qp *qp, const struct kiwi_rqe *rqe,
		  u32 max_sge, struct kiwi_mr **mr, u64 *len);
int kiwi_rqe_copy(const struct kiwi_rqe *rqe, struct kiwi_mr *const *mr,
		  u64 off, const u8 *src, u32 len);
enum kiwi_term_err kiwi_rx_take_rqe(struct kiwi_qp *qp);
int kiwi_rx_place_rqe(struct kiwi_qp *qp, u64 off, const u8 *src, u32 len);
bool kiwi_rx_complete_rqe_inv(struct kiwi_qp *qp, struct kiwi_cqe *cqe);
void kiwi_rx_complete_rqe(struct kiwi_qp *qp, struct kiwi_cqe *cqe);
void kiwi_rx_fail_rqe(struct kiwi_qp *qp, u8 status);
void kiwi_rx_release_rqe(struct kiwi_qp *qp);

/* rx_gp.c */
int kiwi_rx_gp_alloc(struct kiwi_qp *qp, const struct ib_qp_init_attr *attr,
		     bool user);
void kiwi_rx_gp_free(struct kiwi_qp *qp);
int kiwi_rx_gp_push(struct kiwi_qp *qp, const struct kiwi_cqe *cqe, bool srq,
		    u32 srq_slot, bool gp);
void kiwi_rx_gp_discard(struct kiwi_qp *qp);

/* srq.c */
int kiwi_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *attr,
		    struct ib_udata *udata);
int kiwi_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata);
int kiwi_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int kiwi_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int kiwi_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
bool kiwi_srq_take(struct kiwi_srq *srq, struct kiwi_rqe *rqe, u32 *slot,
		   bool *fire);
void kiwi_srq_polled(struct kiwi_srq *srq, u32 slot);
void kiwi_srq_put_back(struct kiwi_srq *srq, u32 slot);
void kiwi_srq_completed(struct kiwi_srq *srq, u32 slot);
void kiwi_srq_dropped(struct kiwi_srq *srq, u32 slot);

/* mem.c */
struct ib_mr *kiwi_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *kiwi_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata);
struct ib_mr *kiwi_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg);
int kiwi_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset);
int kiwi_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
int kiwi_mr_access_ok(int access);
int kiwi_mr_user_args_ok(int access, u64 iova, u64 length,
			 struct ib_udata *udata);
struct kiwi_mr *kiwi_mr_new(struct ib_pd *ibpd, enum kiwi_mr_kind kind,
			    int access);
struct ib_mr *kiwi_mr_publish(struct ib_pd *ibpd, struct kiwi_mr *mr,
			      int state);
void kiwi_mr_discard(struct ib_pd *ibpd, struct kiwi_mr *mr);
int kiwi_mr_pin(struct kiwi_mr *mr, struct ib_device *ibdev, u64 start,
		u64 length, int access);
void kiwi_mr_set_range(struct kiwi_mr *mr, u64 iova, u64 length);
void kiwi_mr_quiesce(struct kiwi_mr *mr);

/* mem_rereg.c: ibv_rereg_mr */
struct ib_mr *kiwi_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 iova, int access,
				 struct ib_pd *ibpd, struct ib_udata *udata);

/* mem_mw.c: memory windows */
int kiwi_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int kiwi_dealloc_mw(struct ib_mw *ibmw);
u8 kiwi_mw_bind(struct kiwi_qp *qp, const struct kiwi_sqe *sqe,
		bool *revoked);

/* cm.c */
int kiwi_iw_connect(struct iw_cm_id *id, struct iw_cm_conn_param *param);
int kiwi_iw_accept(struct iw_cm_id *id, struct iw_cm_conn_param *param);
int kiwi_iw_reject(struct iw_cm_id *id, const void *pdata, u8 pdata_len);
int kiwi_iw_create_listen(struct iw_cm_id *id, int backlog);
int kiwi_iw_destroy_listen(struct iw_cm_id *id);
void kiwi_iw_add_ref(struct ib_qp *ibqp);
void kiwi_iw_rem_ref(struct ib_qp *ibqp);
struct ib_qp *kiwi_iw_get_qp(struct ib_device *ibdev, int qpn);

/* stats.c: counters (stats.h) and the ib_device_ops that show them */
void kiwi_stats_dev_init(struct kiwi_dev_stats *s);
void kiwi_stats_dev_fini(struct kiwi_dev_stats *s);
void kiwi_stats_qp_add(struct kiwi_qp *qp);
void kiwi_stats_qp_del(struct kiwi_qp *qp);
void kiwi_stats_qp_fail(struct kiwi_qp *qp, enum kiwi_term_err err,
			const struct kiwi_term *t, bool sent);
void kiwi_stats_term_rcvd(struct kiwi_qp *qp, const struct kiwi_term *t);
struct rdma_hw_stats *kiwi_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port);
int kiwi_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index);
struct rdma_hw_stats *kiwi_counter_alloc_stats(struct rdma_counter *counter);
int kiwi_counter_bind_qp(struct rdma_counter *counter, struct ib_qp *ibqp);
int kiwi_counter_unbind_qp(struct ib_qp *ibqp);
int kiwi_counter_dealloc(struct rdma_counter *counter);
int kiwi_counter_update_stats(struct rdma_counter *counter);

/* restrack.c: driver details of `rdma resource show -dd` */
int kiwi_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int kiwi_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
int kiwi_fill_res_cm_id_entry(struct sk_buff *msg, struct rdma_cm_id *cm_id);

/* cm_ep.c: the CM workqueue; exit after every device is unregistered */
int kiwi_cm_init(void);
void kiwi_cm_exit(void);
void kiwi_cm_abort_qp(struct kiwi_qp *qp);
void kiwi_cm_abort_device(struct ib_device *ibdev);

#endif /* KIWI_H */
