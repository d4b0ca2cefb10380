// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: the receive side of MPA over TCP (and of the draft-00 framing,
 * a variant of its framer): the LLP's @receive and @data_ready for both.
 *
 * kiwi_llp_tcp_receive() reads the socket with tcp_read_sock(), in
 * sk_data_ready for a segment alone and in the QP's read work (rx.read_work,
 * on kiwi_wq) for more, and runs the MPA decoder (proto/mpa) over every
 * octet; each event it finds goes to the DDP engine (rx.c): a segment's
 * header, its payload, its end. With CRC on, the decoder sees an FPDU only
 * once the whole of it is on the socket and its CRC was found good
 * (llp_tcp_ahead.c). TCP urgent data and MPA errors end the stream with
 * the LLP error the Terminate reports.
 */
#include <linux/skbuff.h>
#include <net/tcp.h>

#include "kiwi.h"
#include "conn.h"

static enum kiwi_term_err kiwi_llp_tcp_mpa_err(u8 err)
{
	switch (err) {
	case KIWI_MPA_ERR_CRC:
		return KIWI_TERM_ERR_LLP_CRC;
	case KIWI_MPA_ERR_MARKER:
		return KIWI_TERM_ERR_LLP_MARKER;
	case KIWI_MPA_ERR_LLP_CLOSED:
		return KIWI_TERM_ERR_LLP_CLOSED;
	default:
		return KIWI_TERM_ERR_LLP_LOCAL_CATA;
	}
}

/* An MPA error (enum kiwi_mpa_err) ends the stream. */
void kiwi_llp_tcp_fail_mpa(struct kiwi_qp *qp, u8 err)
{
	kiwi_rx_fail_llp(qp, kiwi_llp_tcp_mpa_err(err));
}

/* Run the decoder over @len received octets. */
static void kiwi_llp_tcp_feed(struct kiwi_qp *qp, const u8 *data, size_t len)
{
	struct kiwi_qp_rx *rx = &qp->rx;
	struct kiwi_mpa_ev ev;
	size_t used;

	do {
		used = kiwi_mpa_rx_feed(&rx->mpa, data, len, &ev);
		data += used;
		len -= used;
		switch (ev.type) {
		case KIWI_MPA_EV_HEADER:
			kiwi_rx_header(qp, &ev);
			break;
		case KIWI_MPA_EV_PAYLOAD:
			kiwi_rx_place(qp, ev.offset, ev.data, ev.len);
			break;
		case KIWI_MPA_EV_END:
			kiwi_rx_end(qp);
			break;
		case KIWI_MPA_EV_ERROR:
			kiwi_llp_tcp_fail_mpa(qp, ev.err);
			break;
		}
	} while (ev.type != KIWI_MPA_EV_NONE && !rx->failed);
}

/* Feed octets [@off, @off + @len) of @skb to the decoder. */
static void kiwi_llp_tcp_feed_skb(struct kiwi_qp *qp, struct sk_buff *skb,
				  unsigned int off, unsigned int len)
{
	struct skb_seq_state st;
	unsigned int done = 0, n;
	const u8 *data;

	if (!len)
		return;
	kiwi_qp_stat_add(&qp->stats, KIWI_STAT_RX_OCTETS, len);
	skb_prepare_seq_read(skb, off, off + len, &st);
	while ((n = skb_seq_read(done, &data, &st)) != 0) {
		/* The block returned may run past the end given above. */
		n = min(n, len - done);
		kiwi_llp_tcp_feed(qp, data, n);
		done += n;
		if (qp->rx.failed) {
			skb_abort_seq_read(&st);
			break;
		}
	}
}

/*
 * TCP urgent data (a peer's MSG_OOB, or a middlebox setting URG) has no
 * place in an MPA stream, and tcp_read_sock() stops at the urgent octet
 * for good: only recvmsg() reads past it and clears urg_data. So the
 * stream ends with an LLP error as soon as TCP knows of urgent data (TCP
 * notes it before it queues the segment's octets), instead of idling with
 * its window closed; nothing read after that is placed. The urgent octet
 * may still be on its way (TCP_URG_NOTYET): the stream stops there all
 * the same. Return: the stream has failed.
 */
static bool kiwi_llp_tcp_urgent(struct kiwi_qp *qp, struct sock *sk)
{
	if (qp->rx.failed)
		return true;
	if (likely(!READ_ONCE(tcp_sk(sk)->urg_data)))
		return false;
	kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_RX_URGENT);
	ibdev_info_ratelimited(qp->ibqp.device,
			       "QP %u: TCP urgent data from the peer\n",
			       qp->ibqp.qp_num);
	kiwi_rx_fail_llp(qp, KIWI_TERM_ERR_LLP_LOCAL_CATA);
	return true;
}

/* What kiwi_llp_tcp_receive() hands tcp_read_sock()'s actor. */
struct kiwi_llp_tcp_rx_ctx {
	struct kiwi_qp *qp;
	struct sock *sk;
};

/*
 * Returning fewer octets than offered (0 included) leaves the rest on the
 * socket: an FPDU not yet whole waits there for its last octets.
 */
static int kiwi_llp_tcp_actor(read_descriptor_t *desc, struct sk_buff *skb,
			      unsigned int off, size_t len)
{
	struct kiwi_llp_tcp_rx_ctx *ctx = desc->arg.data;
	struct kiwi_qp *qp = ctx->qp;
	u32 n = len;

	if (kiwi_llp_tcp_urgent(qp, ctx->sk))
		return len;
	if (qp->rx.ahead.on)
		n = kiwi_rx_ahead_checked(qp, ctx->sk, skb, off, len);
	kiwi_llp_tcp_feed_skb(qp, skb, off, n);
	return qp->rx.failed ? len : n;
}

/**
 * kiwi_llp_tcp_receive - consume what the socket holds
 * @qp: an attached QP
 * @sk: its socket, locked (bh_lock_sock in softirq, or owned)
 *
 * After an error the octets are read and dropped, so the peer is not
 * stalled by a full receive window while the Terminate goes out (up to
 * TCP urgent data, where reading stops: kiwi_llp_tcp_urgent() also runs when
 * no octet before the urgent one is left to read).
 */
void kiwi_llp_tcp_receive(struct kiwi_qp *qp, struct sock *sk)
{
	struct kiwi_llp_tcp_rx_ctx ctx = { .qp = qp, .sk = sk };
	read_descriptor_t desc = {
		.arg.data = &ctx,
		.count = 1,
	};

	tcp_read_sock(sk, &desc, kiwi_llp_tcp_actor);
	kiwi_llp_tcp_urgent(qp, sk);
}

/*
 * A stream that brings more than a segment at a time is read in a work
 * item, not in sk_data_ready's softirq. TCP acknowledges at the end of
 * every read that took more than a segment since its last ACK
 * (tcp_cleanup_rbuf()), so reading each GRO batch as it arrived made the
 * receiver send an ACK per two or three segments once several streams
 * interleaved, and the sender spend its CPU on them. The work reads what
 * has gathered by the time it runs, as a process reading the socket would
 * (nvme-tcp's io_work does the same).
 */
static void kiwi_llp_tcp_read_work(struct work_struct *work)
{
	struct kiwi_qp *qp = container_of(work, struct kiwi_qp, rx.read_work);
	struct sock *sk = qp->rx.read_sk;

	lock_sock(sk);
	if (READ_ONCE(qp->rx.active))
		kiwi_llp_tcp_receive(qp, sk);
	release_sock(sk);
}

/* At setup, before the socket's callbacks can reach @qp. */
void kiwi_llp_tcp_rx_init(struct kiwi_qp *qp, struct sock *sk)
{
	INIT_WORK(&qp->rx.read_work, kiwi_llp_tcp_read_work);
	qp->rx.read_sk = sk;
}

/**
 * kiwi_llp_tcp_data_ready - have what arrived read
 * @qp: an attached QP
 * @sk: its socket, locked (sk_data_ready: bh_lock_sock in softirq, or
 *	owned by the task whose release_sock() runs the backlog)
 *
 * At most a segment on the socket and no read queued: read it now. A
 * small message (a ping-pong's) then costs no wakeup: with every read
 * left to the work, latency doubled. Anything more goes to the read work.
 */
void kiwi_llp_tcp_data_ready(struct kiwi_qp *qp, struct sock *sk)
{
	if (!work_pending(&qp->rx.read_work) &&
	    tcp_inq(sk) <= inet_csk(sk)->icsk_ack.rcv_mss) {
		kiwi_llp_tcp_receive(qp, sk);
		return;
	}
	kiwi_qp_stat_inc(&qp->stats, KIWI_STAT_RX_READS_DEFERRED);
	queue_work(kiwi_wq, &qp->rx.read_work);
}

/* Detach: RX may no longer start (rx.active is clear); wait for a read. */
void kiwi_llp_tcp_stop(struct kiwi_qp *qp)
{
	cancel_work_sync(&qp->rx.read_work);
}
