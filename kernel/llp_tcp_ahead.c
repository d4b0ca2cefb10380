// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: MPA checks ahead of delivery.
 *
 * An MPA receiver must verify an FPDU, its CRC included, before it passes
 * the ULPDU to DDP (RFC 5044 section 6; MPA-044/046): not one octet of an
 * FPDU with a bad CRC may be placed. With CRC on, a copy of the FPDU
 * decoder therefore runs ahead of the real one over the octets queued on
 * the socket, without consuming them, and the real decoder (llp_tcp_rx.c)
 * is fed only octets that belong to whole FPDUs the copy found good. The copy
 * stops at the end of the first whole FPDU, so each FPDU is checked and
 * then placed while its octets are still in the cache, instead of the
 * whole queue being checked before the first octet is placed. An FPDU not
 * yet whole stays on the socket until the rest arrives; the receive buffer
 * is made large enough that TCP's window always admits the largest FPDU a
 * peer may send. Without CRC there is nothing to verify ahead: the decoder
 * reads the stream as it comes.
 *
 * skb_seq_read() may return a block that runs past the end given to
 * skb_prepare_seq_read(): llp_tcp_rx.c clamps what it feeds to the end it
 * asked for.
 */
#include <linux/skbuff.h>
#include <net/tcp.h>

#include "kiwi.h"
#include "conn.h"

/*
 * Receive buffer for CRC streams: twice the largest FPDU (65535 octets of
 * ULPDU plus framing and markers) in payload, and room for skb overhead.
 */
#define KIWI_RX_AHEAD_RCVBUF	(512 * 1024)

/**
 * kiwi_rx_ahead_init - start checking ahead on a newly attached stream
 * @qp: the QP; RX does not run yet
 * @sk: its socket, positioned at the first FPDU octet
 *
 * Process context, before RX may run. The receive buffer and the window
 * clamp grow as tcp_set_rcvlowat() grows them, unless the socket's buffer
 * size was fixed.
 */
void kiwi_rx_ahead_init(struct kiwi_qp *qp, struct sock *sk)
{
	struct kiwi_rx_ahead *a = &qp->rx.ahead;

	memset(a, 0, sizeof(*a));
	a->on = qp->rx.mpa.cfg.crc;
	if (!a->on)
		return;
	lock_sock(sk);
	a->mpa = qp->rx.mpa;
	/* The copy checks every CRC; the decoder need not compute it again. */
	qp->rx.mpa.cfg.crc = false;
	a->seq = tcp_sk(sk)->copied_seq;
	a->good = a->seq;
	if (!(sk->sk_userlocks & SOCK_RCVBUF_LOCK) &&
	    sk->sk_rcvbuf < KIWI_RX_AHEAD_RCVBUF) {
		WRITE_ONCE(sk->sk_rcvbuf, KIWI_RX_AHEAD_RCVBUF);
		tcp_sk(sk)->window_clamp =
			max_t(u32, tcp_sk(sk)->window_clamp,
			      tcp_win_from_space(sk, KIWI_RX_AHEAD_RCVBUF));
	}
	release_sock(sk);
}

/*
 * Run the decoder copy over @skb from offset @off on, up to the end of the
 * first whole FPDU. Return: false once an FPDU was found whole or bad, true
 * if the copy needs the next skb's octets.
 */
static bool kiwi_rx_ahead_skb(struct kiwi_rx_ahead *a, struct sk_buff *skb,
			      u32 off)
{
	struct skb_seq_state st;
	struct kiwi_mpa_ev ev;
	unsigned int done = 0, n;
	const u8 *data;
	size_t used;

	skb_prepare_seq_read(skb, off, skb->len, &st);
	while ((n = skb_seq_read(done, &data, &st)) != 0) {
		done += n;
		while (n) {
			used = kiwi_mpa_rx_feed(&a->mpa, data, n, &ev);
			data += used;
			n -= used;
			a->seq += used;
			if (ev.type == KIWI_MPA_EV_END)
				a->good = a->seq;
			else if (ev.type == KIWI_MPA_EV_ERROR)
				a->err = ev.err;
			else
				continue;
			skb_abort_seq_read(&st);
			return false;
		}
	}
	return true;
}

/*
 * The queued skb holding the copy's next octet. A run stops at the end of
 * an FPDU, which the decoder then consumes up to, or at the end of the
 * queue. So the copy's next octet is either the first one offered (@skb),
 * or it lies past everything queued at its last run and is found from the
 * tail, passing over only the skbs queued since. NULL if the queue is
 * empty.
 */
static struct sk_buff *kiwi_rx_ahead_next(struct kiwi_rx_ahead *a,
					  struct sk_buff_head *q,
					  struct sk_buff *skb)
{
	if (a->seq - TCP_SKB_CB(skb)->seq < skb->len)
		return skb;
	skb = skb_peek_tail(q);
	while (skb && after(TCP_SKB_CB(skb)->seq, a->seq) &&
	       !skb_queue_is_first(q, skb))
		skb = skb_queue_prev(q, skb);
	return skb;
}

/*
 * Check the queued octets the copy has not read yet, up to the end of the
 * next whole FPDU. Each run starts at the copy's position, not at the skb
 * tcp_read_sock() offers, so a peer that dribbles an FPDU in many small
 * segments costs work linear in what it sends, not quadratic.
 */
static void kiwi_rx_ahead_run(struct kiwi_rx_ahead *a, struct sock *sk,
			      struct sk_buff *offered)
{
	struct sk_buff_head *q = &sk->sk_receive_queue;
	struct sk_buff *skb = kiwi_rx_ahead_next(a, q, offered);
	u32 start, off;

	if (!skb)
		return;
	skb_queue_walk_from(q, skb) {
		start = TCP_SKB_CB(skb)->seq;
		off = a->seq - start;
		if (before(a->seq, start) || off >= skb->len)
			continue;
		if (!kiwi_rx_ahead_skb(a, skb, off))
			return;
	}
}

/**
 * kiwi_rx_ahead_checked - how much of a chunk the decoder may have
 * @qp: an attached QP with CRC checking on
 * @sk: its socket, locked
 * @skb: the queued skb tcp_read_sock() offers
 * @off: offset of the offered octets in @skb
 * @len: octets offered
 *
 * Return: how many of the offered octets belong to FPDUs found good
 * (0 to @len). 0 with rx.failed unset means: wait for more octets; with
 * rx.failed set, the FPDU at the offered position was bad and its MPA
 * error has been reported.
 */
u32 kiwi_rx_ahead_checked(struct kiwi_qp *qp, struct sock *sk,
			  struct sk_buff *skb, u32 off, u32 len)
{
	struct kiwi_rx_ahead *a = &qp->rx.ahead;
	u32 pos = TCP_SKB_CB(skb)->seq + off;

	if (!after(a->good, pos) && !a->err)
		kiwi_rx_ahead_run(a, sk, skb);
	if (after(a->good, pos))
		return min(len, a->good - pos);
	if (a->err)
		kiwi_llp_tcp_fail_mpa(qp, a->err);
	return 0;
}
