// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: counters through ib_core's hw_stats (stats.h lists them).
 *
 * The port's counters (`rdma statistic show link DEV/1`) are the device's
 * connection management events plus every QP's events that belong to the
 * port. A QP belongs to the port unless it is bound to an rdma_counter
 * (`rdma statistic qp bind ...`); then its events from the binding on
 * belong to that counter, which ib_core adds to the port's total itself.
 * A QP's events are never moved: each QP remembers in @charged how much of
 * its running total it has already handed to an earlier owner (the port's
 * @hist, or a counter's), and an owner's value is its history plus what
 * its current QPs counted beyond @charged. A QP changes owner, and leaves
 * at destroy, under kiwi_dev_stats.lock, which every reader takes too, so
 * every event is counted exactly once.
 */
#include <linux/slab.h>
#include <rdma/rdma_counter.h>

#include "kiwi.h"
#include "conn.h"

static const struct rdma_stat_desc kiwi_stat_descs[KIWI_STAT_NUM] = {
	[KIWI_STAT_TX_FPDUS].name = "tx_fpdus",
	[KIWI_STAT_TX_OCTETS].name = "tx_octets",
	[KIWI_STAT_TX_STALLS].name = "tx_stalls",
	[KIWI_STAT_TX_WAKEUPS].name = "tx_wakeups",
	[KIWI_STAT_TX_DOORBELLS].name = "tx_doorbells",
	[KIWI_STAT_TX_DOORBELLS_DEFERRED].name = "tx_doorbells_deferred",
	[KIWI_STAT_TX_BUF_RENEWED].name = "tx_buf_renewed",
	[KIWI_STAT_TX_BUF_SHORT].name = "tx_buf_short",
	[KIWI_STAT_RTR_SENT].name = "rtr_sent",
	[KIWI_STAT_RREQ_SERVED].name = "read_req_served",
	[KIWI_STAT_AREQ_SERVED].name = "atomic_req_served",
	[KIWI_STAT_TERM_SENT_RDMAP].name = "term_sent_rdmap",
	[KIWI_STAT_TERM_SENT_DDP].name = "term_sent_ddp",
	[KIWI_STAT_TERM_SENT_LLP].name = "term_sent_llp",
	[KIWI_STAT_RX_FPDUS].name = "rx_fpdus",
	[KIWI_STAT_RX_OCTETS].name = "rx_octets",
	[KIWI_STAT_RX_CRC_ERRORS].name = "rx_crc_errors",
	[KIWI_STAT_RX_MARKER_ERRORS].name = "rx_marker_errors",
	[KIWI_STAT_RX_URGENT].name = "rx_urgent",
	[KIWI_STAT_RX_READS_DEFERRED].name = "rx_reads_deferred",
	[KIWI_STAT_RX_PLACED_EARLY].name = "rx_placed_early",
	[KIWI_STAT_RTR_RCVD].name = "rtr_rcvd",
	[KIWI_STAT_IRD_EXCEEDED].name = "ird_exceeded",
	[KIWI_STAT_TERM_RCVD_RDMAP].name = "term_rcvd_rdmap",
	[KIWI_STAT_TERM_RCVD_DDP].name = "term_rcvd_ddp",
	[KIWI_STAT_TERM_RCVD_LLP].name = "term_rcvd_llp",
	[KIWI_STAT_CM_CONNECTS].name = "cm_connects",
	[KIWI_STAT_CM_CONNECT_ERRORS].name = "cm_connect_errors",
	[KIWI_STAT_CM_REQUESTS].name = "cm_requests",
	[KIWI_STAT_MPA_REQ_SENT].name = "mpa_req_sent",
	[KIWI_STAT_MPA_REQ_RCVD].name = "mpa_req_rcvd",
	[KIWI_STAT_MPA_REP_SENT].name = "mpa_rep_sent",
	[KIWI_STAT_MPA_REP_RCVD].name = "mpa_rep_rcvd",
	[KIWI_STAT_MPA_REJ_SENT].name = "mpa_rej_sent",
	[KIWI_STAT_MPA_REJ_RCVD].name = "mpa_rej_rcvd",
	[KIWI_STAT_MPA_BAD_FRAMES].name = "mpa_bad_frames",
	[KIWI_STAT_MPA_IRD_REFUSED].name = "mpa_ird_refused",
	[KIWI_STAT_SCTP_NO_ADAPT].name = "sctp_no_adaptation",
	[KIWI_STAT_SCTP_SSC_TERM_SENT].name = "sctp_ssc_term_sent",
};

/**
 * struct kiwi_counter - kiwi's side of an rdma_counter
 * @entry: in kiwi_dev_stats.counters
 * @counter: the core's counter
 * @hist: events of QPs that were bound to it and are no longer
 */
struct kiwi_counter {
	struct list_head entry;
	const struct rdma_counter *counter;
	u64 hist[KIWI_STAT_QP_NUM];
};

void kiwi_stats_dev_init(struct kiwi_dev_stats *s)
{
	mutex_init(&s->lock);
	INIT_LIST_HEAD(&s->qps);
	INIT_LIST_HEAD(&s->counters);
	ida_init(&s->counter_ida);
}

void kiwi_stats_dev_fini(struct kiwi_dev_stats *s)
{
	ida_destroy(&s->counter_ida);
	mutex_destroy(&s->lock);
}

/* Under the lock: hand what @qs counted since its last hand-over to @to. */
static void kiwi_stats_settle(struct kiwi_qp_stats *qs, u64 *to)
{
	u64 now;
	int i;

	for (i = 0; i < KIWI_STAT_QP_NUM; i++) {
		now = atomic64_read(&qs->v[i]);
		to[i] += now - qs->charged[i];
		qs->charged[i] = now;
	}
}

/* Under the lock: add what @qs counted beyond its last hand-over. */
static void kiwi_stats_pending(const struct kiwi_qp_stats *qs, u64 *sum)
{
	int i;

	for (i = 0; i < KIWI_STAT_QP_NUM; i++)
		sum[i] += atomic64_read(&qs->v[i]) - qs->charged[i];
}

static struct kiwi_counter *kiwi_counter_find(struct kiwi_dev_stats *s,
					      const struct rdma_counter *c)
{
	struct kiwi_counter *kc;

	lockdep_assert_held(&s->lock);
	list_for_each_entry(kc, &s->counters, entry)
		if (kc->counter == c)
			return kc;
	return NULL;
}

/* Under the lock: the history array of whoever owns @qp now. */
static u64 *kiwi_stats_owner(struct kiwi_dev_stats *s, struct kiwi_qp *qp)
{
	struct kiwi_counter *kc = NULL;

	if (qp->ibqp.counter)
		kc = kiwi_counter_find(s, qp->ibqp.counter);
	return kc ? kc->hist : s->hist;
}

/* A new QP starts counting (end of create_qp). */
void kiwi_stats_qp_add(struct kiwi_qp *qp)
{
	struct kiwi_dev_stats *s = &to_kdev(qp->ibqp.device)->stats;

	mutex_lock(&s->lock);
	list_add_tail(&qp->stats.entry, &s->qps);
	mutex_unlock(&s->lock);
}

/* A QP goes (end of destroy_qp): its events stay with its owner. */
void kiwi_stats_qp_del(struct kiwi_qp *qp)
{
	struct kiwi_dev_stats *s = &to_kdev(qp->ibqp.device)->stats;

	mutex_lock(&s->lock);
	kiwi_stats_settle(&qp->stats, kiwi_stats_owner(s, qp));
	list_del(&qp->stats.entry);
	mutex_unlock(&s->lock);
}

/* The port's and each rdma_counter's values: one layout (ib_core adds). */
static struct rdma_hw_stats *kiwi_alloc_stats(void)
{
	return rdma_alloc_hw_stats_struct(kiwi_stat_descs, KIWI_STAT_NUM,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

struct rdma_hw_stats *kiwi_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port)
{
	return kiwi_alloc_stats();
}

/**
 * kiwi_get_hw_stats - ib_device_ops.get_hw_stats: the port's counters
 * @ibdev: the device
 * @stats: from kiwi_alloc_hw_port_stats()
 * @port: 1
 * @index: the counter asked for; all are filled in
 *
 * Return: KIWI_STAT_NUM, every counter updated.
 */
int kiwi_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index)
{
	struct kiwi_dev_stats *s = &to_kdev(ibdev)->stats;
	struct kiwi_qp *qp;
	int i;

	mutex_lock(&s->lock);
	memcpy(stats->value, s->hist, sizeof(s->hist));
	list_for_each_entry(qp, &s->qps, stats.entry)
		if (!qp->ibqp.counter)
			kiwi_stats_pending(&qp->stats, stats->value);
	mutex_unlock(&s->lock);
	for (i = KIWI_STAT_QP_NUM; i < KIWI_STAT_NUM; i++)
		stats->value[i] = atomic64_read(&s->dev[i - KIWI_STAT_QP_NUM]);
	return KIWI_STAT_NUM;
}

struct rdma_hw_stats *kiwi_counter_alloc_stats(struct rdma_counter *counter)
{
	return kiwi_alloc_stats();
}

/**
 * kiwi_counter_bind_qp - ib_device_ops.counter_bind_qp
 * @counter: the counter; a new one (id 0) gets an id here
 * @ibqp: the QP, not bound yet (ib_core checks)
 *
 * What the QP counted so far stays with the port.
 *
 * Return: 0 or -ENOMEM.
 */
int kiwi_counter_bind_qp(struct rdma_counter *counter, struct ib_qp *ibqp)
{
	struct kiwi_dev_stats *s = &to_kdev(ibqp->device)->stats;
	struct kiwi_qp *qp = to_kqp(ibqp);
	struct kiwi_counter *kc;
	int id;

	mutex_lock(&s->lock);
	kc = kiwi_counter_find(s, counter);
	if (!kc) {
		kc = kzalloc(sizeof(*kc), GFP_KERNEL);
		id = kc ? ida_alloc_min(&s->counter_ida, 1, GFP_KERNEL) :
			  -ENOMEM;
		if (id < 0) {
			kfree(kc);
			mutex_unlock(&s->lock);
			return id;
		}
		counter->id = id;
		kc->counter = counter;
		list_add_tail(&kc->entry, &s->counters);
	}
	kiwi_stats_settle(&qp->stats, kiwi_stats_owner(s, qp));
	ibqp->counter = counter;
	mutex_unlock(&s->lock);
	return 0;
}

/* ib_device_ops.counter_unbind_qp: what the QP counted stays counted. */
int kiwi_counter_unbind_qp(struct ib_qp *ibqp)
{
	struct kiwi_dev_stats *s = &to_kdev(ibqp->device)->stats;
	struct kiwi_qp *qp = to_kqp(ibqp);

	mutex_lock(&s->lock);
	kiwi_stats_settle(&qp->stats, kiwi_stats_owner(s, qp));
	ibqp->counter = NULL;
	mutex_unlock(&s->lock);
	return 0;
}

/* ib_device_ops.counter_dealloc: the last QP left it (ib_core kept the sum). */
int kiwi_counter_dealloc(struct rdma_counter *counter)
{
	struct kiwi_dev_stats *s = &to_kdev(counter->device)->stats;
	struct kiwi_counter *kc;

	mutex_lock(&s->lock);
	kc = kiwi_counter_find(s, counter);
	if (kc) {
		list_del(&kc->entry);
		ida_free(&s->counter_ida, counter->id);
	}
	mutex_unlock(&s->lock);
	kfree(kc);
	return 0;
}

/* ib_device_ops.counter_update_stats: history plus its QPs' events. */
int kiwi_counter_update_stats(struct rdma_counter *counter)
{
	struct kiwi_dev_stats *s = &to_kdev(counter->device)->stats;
	u64 *value = counter->stats->value;
	struct kiwi_counter *kc;
	struct kiwi_qp *qp;

	memset(value, 0, sizeof(*value) * KIWI_STAT_NUM);
	mutex_lock(&s->lock);
	kc = kiwi_counter_find(s, counter);
	if (kc)
		memcpy(value, kc->hist, sizeof(kc->hist));
	list_for_each_entry(qp, &s->qps, stats.entry)
		if (qp->ibqp.counter == counter)
			kiwi_stats_pending(&qp->stats, value);
	mutex_unlock(&s->lock);
	return 0;
}

static u32 kiwi_term_pack(const struct kiwi_term *t)
{
	return KIWI_TERM_SEEN | t->layer << 16 | t->etype << 8 | t->ecode;
}

/**
 * kiwi_stats_qp_fail - count a locally detected error of a QP
 * @qp: the QP
 * @err: the error (kiwi_qp_fail)
 * @t: the Terminate built for it
 * @sent: it is the QP's first error: @t goes out
 *
 * Any context.
 */
void kiwi_stats_qp_fail(struct kiwi_qp *qp, enum kiwi_term_err err,
			const struct kiwi_term *t, bool sent)
{
	if (err == KIWI_TERM_ERR_LLP_CRC)
		kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_RX_CRC_ERRORS);
	else if (err == KIWI_TERM_ERR_LLP_MARKER)
		kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_RX_MARKER_ERRORS);
	if (!sent || t->layer > KIWI_TERM_LAYER_LLP)
		return;
	kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_TERM_SENT_RDMAP + t->layer);
	WRITE_ONCE(qp->stats.term_sent, kiwi_term_pack(t));
}

/* The peer's Terminate @t arrived (RX). Unknown layers are not counted. */
void kiwi_stats_term_rcvd(struct kiwi_qp *qp, const struct kiwi_term *t)
{
	WRITE_ONCE(qp->stats.term_rcvd, kiwi_term_pack(t));
	if (t->layer <= KIWI_TERM_LAYER_LLP)
		kiwi_qp_stat_inc(&qp->stats,
				 KIWI_STAT_TERM_RCVD_RDMAP + t->layer);
}
