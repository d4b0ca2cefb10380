/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kiwi: counters (stats.c), shown by ib_core's hw_stats: `rdma statistic
 * show link DEV/1`, /sys/class/infiniband/DEV/ports/1/hw_counters/, and
 * per QP through `rdma statistic qp bind`. kiwi(7) describes each one.
 *
 * A QP counts its own events in struct kiwi_qp_stats; the data path only
 * ever adds to an atomic64_t there (kiwi_qp_stat_add). Events before a QP
 * exists (connection management) are counted per device. Who a QP's
 * events belong to (the port, or an rdma_counter it is bound to) is
 * decided by the reader: see stats.c.
 */
#ifndef KIWI_STATS_H
#define KIWI_STATS_H

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/cache.h>
#include <linux/idr.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>

/**
 * enum kiwi_stat_id - the counters, in the order rdma(8) shows them
 * @KIWI_STAT_TX_FPDUS: FPDUs framed for sending
 * @KIWI_STAT_TX_OCTETS: octets of the MPA stream TCP took
 * @KIWI_STAT_TX_STALLS: times TX stopped because the socket was full
 * @KIWI_STAT_TX_WAKEUPS: times TCP's write-space callback resumed TX
 * @KIWI_STAT_TX_DOORBELLS: doorbells of user QPs (post_send system calls
 *	without a work request)
 * @KIWI_STAT_TX_DOORBELLS_DEFERRED: doorbells that found TX waiting for
 *	write space and left the new work requests to that wakeup
 * @KIWI_STAT_TX_BUF_RENEWED: transmit buffers replaced by a new one
 *	because TCP still held the old one's octets (tx_buf.c)
 * @KIWI_STAT_TX_BUF_SHORT: times no new transmit buffer could be had
 *	(memory short) and TX waited to try again (tx_buf.c)
 * @KIWI_STAT_RTR_SENT: RFC 6581 RTR messages sent (initiator)
 * @KIWI_STAT_RREQ_SERVED: inbound RDMA Read Requests whose Response started
 * @KIWI_STAT_AREQ_SERVED: inbound RFC 7306 Atomic Requests executed (their
 *	Response started)
 * @KIWI_STAT_TERM_SENT_RDMAP: Terminates sent, layer RDMAP
 * @KIWI_STAT_TERM_SENT_DDP: Terminates sent, layer DDP
 * @KIWI_STAT_TERM_SENT_LLP: Terminates sent, layer LLP (MPA)
 * @KIWI_STAT_RX_FPDUS: valid FPDUs received
 * @KIWI_STAT_RX_OCTETS: octets of the MPA stream processed
 * @KIWI_STAT_RX_CRC_ERRORS: FPDUs with a bad CRC
 * @KIWI_STAT_RX_MARKER_ERRORS: markers that do not point at an FPDU
 * @KIWI_STAT_RX_URGENT: streams ended by TCP urgent data from the peer
 * @KIWI_STAT_RX_READS_DEFERRED: TCP: arrivals left to the QP's read work
 *	(more than a segment on the socket, or a read already queued)
 * @KIWI_STAT_RX_PLACED_EARLY: DDP segments placed on arrival while
 *	segments before them (DDP-SSN order, DDP over SCTP) were missing
 * @KIWI_STAT_RTR_RCVD: RTR messages received (responder)
 * @KIWI_STAT_IRD_EXCEEDED: Read and Atomic Requests refused: IRD already
 *	in use
 * @KIWI_STAT_TERM_RCVD_RDMAP: Terminates received, layer RDMAP
 * @KIWI_STAT_TERM_RCVD_DDP: Terminates received, layer DDP
 * @KIWI_STAT_TERM_RCVD_LLP: Terminates received, layer LLP
 * @KIWI_STAT_QP_NUM: number of per-QP counters (those above)
 * @KIWI_STAT_CM_CONNECTS: connections started (iw_connect)
 * @KIWI_STAT_CM_CONNECT_ERRORS: of those, failed before ESTABLISHED
 * @KIWI_STAT_CM_REQUESTS: TCP connections a listener accepted
 * @KIWI_STAT_MPA_REQ_SENT: MPA Requests sent
 * @KIWI_STAT_MPA_REQ_RCVD: valid MPA Requests received and reported
 * @KIWI_STAT_MPA_REP_SENT: accepting MPA Replies sent
 * @KIWI_STAT_MPA_REP_RCVD: accepting MPA Replies received
 * @KIWI_STAT_MPA_REJ_SENT: rejecting MPA Replies sent (iw_reject)
 * @KIWI_STAT_MPA_REJ_RCVD: rejecting MPA Replies received
 * @KIWI_STAT_MPA_BAD_FRAMES: Requests and Replies refused as malformed or
 *	not negotiable (RFC 5044 7.1, RFC 6581)
 * @KIWI_STAT_MPA_IRD_REFUSED: of those, Replies refused for IRD (the
 *	responder's ORD above the IRD a kiwi QP can serve, RFC 6581 9.1)
 * @KIWI_STAT_SCTP_NO_ADAPT: SCTP associations aborted because the peer
 *	did not indicate the DDP adaptation layer (RFC 5043 draft 11.1)
 * @KIWI_STAT_SCTP_SSC_TERM_SENT: Session Terminates sent to refuse an
 *	Initiate (limit, private data iw_cm cannot carry), to end a session
 *	or to answer a chunk on an SCTP stream without a session
 * @KIWI_STAT_NUM: number of counters
 */
enum kiwi_stat_id {
	KIWI_STAT_TX_FPDUS,
	KIWI_STAT_TX_OCTETS,
	KIWI_STAT_TX_STALLS,
	KIWI_STAT_TX_WAKEUPS,
	KIWI_STAT_TX_DOORBELLS,
	KIWI_STAT_TX_DOORBELLS_DEFERRED,
	KIWI_STAT_TX_BUF_RENEWED,
	KIWI_STAT_TX_BUF_SHORT,
	KIWI_STAT_RTR_SENT,
	KIWI_STAT_RREQ_SERVED,
	KIWI_STAT_AREQ_SERVED,
	KIWI_STAT_TERM_SENT_RDMAP,
	KIWI_STAT_TERM_SENT_DDP,
	KIWI_STAT_TERM_SENT_LLP,
	KIWI_STAT_RX_FPDUS,
	KIWI_STAT_RX_OCTETS,
	KIWI_STAT_RX_CRC_ERRORS,
	KIWI_STAT_RX_MARKER_ERRORS,
	KIWI_STAT_RX_URGENT,
	KIWI_STAT_RX_READS_DEFERRED,
	KIWI_STAT_RX_PLACED_EARLY,
	KIWI_STAT_RTR_RCVD,
	KIWI_STAT_IRD_EXCEEDED,
	KIWI_STAT_TERM_RCVD_RDMAP,
	KIWI_STAT_TERM_RCVD_DDP,
	KIWI_STAT_TERM_RCVD_LLP,
	KIWI_STAT_QP_NUM,
	KIWI_STAT_CM_CONNECTS = KIWI_STAT_QP_NUM,
	KIWI_STAT_CM_CONNECT_ERRORS,
	KIWI_STAT_CM_REQUESTS,
	KIWI_STAT_MPA_REQ_SENT,
	KIWI_STAT_MPA_REQ_RCVD,
	KIWI_STAT_MPA_REP_SENT,
	KIWI_STAT_MPA_REP_RCVD,
	KIWI_STAT_MPA_REJ_SENT,
	KIWI_STAT_MPA_REJ_RCVD,
	KIWI_STAT_MPA_BAD_FRAMES,
	KIWI_STAT_MPA_IRD_REFUSED,
	KIWI_STAT_SCTP_NO_ADAPT,
	KIWI_STAT_SCTP_SSC_TERM_SENT,
	KIWI_STAT_NUM,
};

#define KIWI_STAT_DEV_NUM	(KIWI_STAT_NUM - KIWI_STAT_QP_NUM)

/**
 * struct kiwi_qp_stats - a QP's counters and last Terminates
 * @v: events of this QP so far (any context, atomic adds)
 * @charged: the part of @v already handed to an owner that no longer
 *	owns the QP (kiwi_dev_stats.lock)
 * @entry: in kiwi_dev_stats.qps from create to destroy (its lock)
 * @term_sent: the Terminate this QP sent, KIWI_TERM_SEEN | layer << 16 |
 *	etype << 8 | ecode, 0 if none (written once, WRITE_ONCE)
 * @term_rcvd: the Terminate the peer sent, same encoding
 */
struct kiwi_qp_stats {
	atomic64_t v[KIWI_STAT_QP_NUM] ____cacheline_aligned_in_smp;
	u64 charged[KIWI_STAT_QP_NUM];
	struct list_head entry;
	u32 term_sent;
	u32 term_rcvd;
};

#define KIWI_TERM_SEEN		BIT(24)

/**
 * struct kiwi_dev_stats - a device's counters
 * @lock: protects every QP's @charged and list entry, @hist, @qps,
 *	@counters and the QPs' ib_qp.counter; a mutex: every user sleeps
 *	anyway (verbs, sysfs, netlink)
 * @qps: every QP of the device (struct kiwi_qp_stats.entry)
 * @counters: the rdma_counters QPs are bound to (struct kiwi_counter)
 * @counter_ida: their ids
 * @hist: events of QPs that left the port's ownership (destroyed, bound
 *	to a counter), per-QP counter ids
 * @dev: connection management events (any context, atomic adds)
 */
struct kiwi_dev_stats {
	struct mutex lock;	/* see kernel-doc above */
	struct list_head qps;
	struct list_head counters;
	struct ida counter_ida;
	u64 hist[KIWI_STAT_QP_NUM];
	atomic64_t dev[KIWI_STAT_DEV_NUM];
};

/*
 * Both kinds of counter share one enum, so an id of the wrong kind would
 * index past the array it is counted in (a branch once counted a per-QP id
 * as a device one). The checks fold away for the constant ids every caller
 * passes; a wrong one warns once in the tests instead of corrupting memory.
 */

/* Data path: count @n events of @id (< KIWI_STAT_QP_NUM) on a QP. */
static inline void kiwi_qp_stat_add(struct kiwi_qp_stats *s,
				    enum kiwi_stat_id id, u64 n)
{
	if (WARN_ON_ONCE(id >= KIWI_STAT_QP_NUM))
		return;
	atomic64_add(n, &s->v[id]);
}

static inline void kiwi_qp_stat_inc(struct kiwi_qp_stats *s,
				    enum kiwi_stat_id id)
{
	kiwi_qp_stat_add(s, id, 1);
}

/* Connection management: one event of @id (>= KIWI_STAT_QP_NUM). */
static inline void kiwi_dev_stat_inc(struct kiwi_dev_stats *s,
				     enum kiwi_stat_id id)
{
	if (WARN_ON_ONCE(id < KIWI_STAT_QP_NUM || id >= KIWI_STAT_NUM))
		return;
	atomic64_inc(&s->dev[id - KIWI_STAT_QP_NUM]);
}

#endif /* KIWI_STATS_H */
