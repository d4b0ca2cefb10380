// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: MPA over kernel TCP as the LLP under DDP (llp.h), and its variant
 * with the ULP framing draft-00 profile.
 *
 * Each DDP segment becomes one FPDU (RFC 5044 section 4: header, ULPDU,
 * pad, CRC, markers where negotiated), or with the profile one framing
 * PDU (draft-00 section 5: the 8-octet Length+Key header, the segment, no
 * packing), framed in place in the transmit buffer by proto/mpa; the
 * buffer goes to TCP by reference, with non-blocking sendpage calls. FPDUs are
 * sized and batched so that every TCP segment starts with one (RFC 5044
 * Appendix A.1; proto/mpa_seg.c), MULPDU following the EMSS per batch. Receive
 * reads the socket with tcp_read_sock() and runs the decoder of the same
 * profile (llp_tcp_rx.c, llp_tcp_ahead.c), which refuses a frame with
 * another key than the peer announced (MPA error 3, a Terminate; SEC-21).
 */
#include <linux/net.h>
#include <linux/tcp.h>
#include <net/dst.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "kiwi.h"
#include "conn.h"
#include "llp.h"

/*
 * MULPDU for an EMSS. With the draft-00 profile a framing PDU fits in one
 * segment of the current EMSS (ULPF-003/006), within the floor and ceiling
 * MPA keeps too (an EMSS below 136 octets, where the draft's emergency mode
 * would start, still gets 128-octet segments).
 */
static u32 kiwi_llp_tcp_mulpdu(const struct kiwi_mpa_tx *mpa, u32 emss)
{
	if (mpa->cfg.profile == KIWI_FRAME_MPA)
		return kiwi_mpa_mulpdu(emss, mpa->cfg.markers);
	return clamp_t(u32, kiwi_ulpf_max_pdu(emss), KIWI_MPA_MULPDU_MIN,
		       KIWI_MPA_MULPDU_MAX);
}

/* A path MTU TCP has not applied yet: its MTU, else 0 (RCU or socket lock). */
static u32 kiwi_llp_tcp_new_pmtu(struct sock *sk)
{
	struct dst_entry *dst = __sk_dst_get(sk);

	if (dst && dst_mtu(dst) != READ_ONCE(inet_csk(sk)->icsk_pmtu_cookie))
		return dst_mtu(dst);
	return 0;
}

/*
 * The EMSS TCP cuts the stream with: its MSS for the usual options. A path
 * MTU change TCP has not applied yet (it does so at its next send) is
 * applied first, under the socket lock as TCP does, so the batch about to
 * be framed is sized for the new path. Option space TCP takes for a while
 * (SACK blocks) is not subtracted: FPDUs stay at the full size and such
 * segments lose alignment until the option goes.
 */
static u32 kiwi_llp_tcp_emss(struct sock *sk)
{
	u32 mtu;

	rcu_read_lock();
	mtu = kiwi_llp_tcp_new_pmtu(sk);
	rcu_read_unlock();
	if (mtu) {
		lock_sock(sk);
		mtu = kiwi_llp_tcp_new_pmtu(sk);
		if (mtu)
			tcp_sync_mss(sk, mtu);
		release_sock(sk);
	}
	return READ_ONCE(tcp_sk(sk)->mss_cache);
}

/* The framers of both directions and the MULPDU of the TCP stream. */
static int kiwi_llp_tcp_setup(struct kiwi_qp *qp, struct socket *sock,
			      const struct kiwi_llp_params *p)
{
	struct kiwi_mpa_cfg tc = {
		.profile = p->mpa.ulpf ? KIWI_FRAME_ULPF00 : KIWI_FRAME_MPA,
		.markers = p->mpa.tx_markers,
		.crc = p->mpa.crc,
	};
	struct kiwi_mpa_cfg rc = tc;

	memcpy(tc.ulpf_key, p->mpa.ulpf_tx_key, sizeof(tc.ulpf_key));
	memcpy(rc.ulpf_key, p->mpa.ulpf_rx_key, sizeof(rc.ulpf_key));
	rc.markers = p->mpa.rx_markers;
	if (kiwi_mpa_tx_init(&qp->tx.mpa, &tc, 0) ||
	    kiwi_mpa_rx_init(&qp->rx.mpa, &rc, 0, KIWI_MPA_RX_HDR_MAX))
		return -EINVAL;
	kiwi_rx_ahead_init(qp, sock->sk);
	kiwi_llp_tcp_rx_init(qp, sock->sk);
	qp->tx.mulpdu = kiwi_llp_tcp_mulpdu(&qp->tx.mpa,
					    kiwi_llp_tcp_emss(sock->sk));
	return 0;
}

/*
 * A batch starts a TCP segment. Its FPDUs are sized to fill one each: the
 * MULPDU of the EMSS now (without markers and with an EMSS that is a
 * multiple of 4, an FPDU of MULPDU is exactly one EMSS on the wire). MPA
 * packs whole FPDUs into a segment where they fit; draft-00 gives each
 * framing PDU a segment of its own.
 */
static void kiwi_llp_tcp_batch(struct kiwi_qp_tx *tx, struct socket *sock)
{
	u32 emss = kiwi_llp_tcp_emss(sock->sk);

	WRITE_ONCE(tx->mulpdu, kiwi_llp_tcp_mulpdu(&tx->mpa, emss));
	kiwi_mpa_seg_init(&tx->seg, emss,
			  tx->mpa.cfg.profile == KIWI_FRAME_MPA);
}

static u32 kiwi_llp_tcp_wire_len(const struct kiwi_qp_tx *tx, u32 ulpdu_len)
{
	return kiwi_mpa_fpdu_wire_len(&tx->mpa, ulpdu_len);
}

/*
 * Frame the ULPDU staged after the framing header's room. The plan's pieces
 * are laid out in wire order back to front: every ULPDU piece moves to a
 * position at or after the one it was staged at, so no piece overwrites
 * one not yet moved.
 */
static int kiwi_llp_tcp_frame(struct kiwi_qp_tx *tx, u32 ulpdu_len)
{
	u8 *base = tx->buf + tx->len;
	struct kiwi_mpa_frag frag = {
		.base = base + tx->llp->seg_room,
		.len = ulpdu_len,
	};
	struct kiwi_mpa_plan *plan = &tx->plan;
	const struct kiwi_mpa_piece *pc;
	u32 pos, i;
	int rv;

	plan->piece = tx->pieces;
	plan->cap = ARRAY_SIZE(tx->pieces);
	rv = kiwi_mpa_tx_plan(&tx->mpa, plan, &frag, 1);
	if (rv)
		return rv;
	pos = plan->wire_len;
	for (i = plan->cnt; i-- > 0;) {
		pc = &plan->piece[i];
		pos -= pc->len;
		if (pc->base != base + pos)
			memmove(base + pos, pc->base, pc->len);
	}
	tx->len += plan->wire_len;
	return 0;
}

/*
 * Under the socket lock, before a batch's first octet goes to TCP. TCP
 * appends to the segment it has not sent yet (the write queue's tail)
 * unless that segment ends a record (TCP_SKB_CB()->eor, what MSG_EOR
 * sets). A batch starts a TCP segment of its own, its FPDUs sized and
 * placed for that (proto/mpa_seg.c); with MPA it may instead join the
 * unsent one when it fits there whole: every FPDU of it then lies in that
 * segment, which still starts with an FPDU. That is how small messages
 * posted one at a time, each a batch of its own, share segments while
 * TCP waits for the device or the window (RFC 5044 Appendix A.1: several
 * whole FPDUs in one segment), as a TCP application's small writes do.
 * Otherwise, and always with the draft-00 profile (one framing PDU per
 * segment), the unsent segment's record ends first. The MSS is TCP's for
 * the usual options, as in kiwi_llp_tcp_emss(), after a path MTU change
 * TCP is about to apply. TCP puts the rest of an appended batch in a new
 * segment when the segment's fragments run out mid-copy, so the batch
 * joins only where as many more fit as it may take: one per page it spans,
 * and one more where the page TCP copies into ends within it.
 */
static void kiwi_llp_tcp_open_batch(struct kiwi_qp_tx *tx, struct sock *sk,
				    size_t size)
{
	struct sk_buff *skb = tcp_write_queue_tail(sk);
	u32 mtu;

	if (!skb || !tcp_skb_can_collapse_to(skb))
		return;
	mtu = kiwi_llp_tcp_new_pmtu(sk);
	if (mtu)
		tcp_sync_mss(sk, mtu);
	if (tx->mpa.cfg.profile != KIWI_FRAME_MPA ||
	    skb->len + size > tcp_sk(sk)->mss_cache ||
	    skb_shinfo(skb)->nr_frags + DIV_ROUND_UP(size, PAGE_SIZE) + 1 >
	    READ_ONCE(sysctl_max_skb_frags))
		TCP_SKB_CB(skb)->eor = 1;
}

/*
 * With the draft-00 profile the batch's last octet ends a record: TCP
 * appends nothing more to the segment that carries it, also when it
 * retransmits (what MSG_EOR does for sendmsg; this kernel's sendpage has no
 * such flag). The segment is the tail of the write queue, or of the
 * retransmit queue once it went out. An MPA batch's last segment stays
 * open: kiwi_llp_tcp_open_batch() decides at the next batch, and
 * retransmission joins segments only within one MSS
 * (tcp_retrans_try_collapse()), where the first still starts with an FPDU.
 */
static void kiwi_llp_tcp_end_batch(struct kiwi_qp_tx *tx, struct sock *sk)
{
	struct sk_buff *skb;

	if (tx->mpa.cfg.profile == KIWI_FRAME_MPA)
		return;
	skb = tcp_write_queue_tail(sk);
	if (!skb)
		skb = tcp_rtx_queue_tail(sk);
	if (skb)
		TCP_SKB_CB(skb)->eor = 1;
}

/* A small rest of a batch goes to TCP by copy, as a system call's data. */
static int kiwi_llp_tcp_send_copy(struct kiwi_qp_tx *tx, struct sock *sk)
{
	struct kvec kv = {
		.iov_base = tx->buf + tx->sent,
		.iov_len = tx->len - tx->sent,
	};
	struct msghdr msg = {
		.msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL,
	};

	return kernel_sendmsg_locked(sk, &msg, &kv, 1, kv.iov_len);
}

/*
 * The FPDUs form one byte stream: TCP takes as much of it as it can. Each
 * batch starts a TCP segment with its first FPDU, whatever its EMSS, or
 * joins the unsent one whole (kiwi_llp_tcp_open_batch()). Nothing is
 * corked (MSG_MORE): a segment that is not full may hold a message's end.
 *
 * TCP takes the octets by reference to the chunk (tx_buf.c), without
 * copying them, unless fewer than KIWI_TX_COPY_MAX are left: copying those
 * costs less than a new chunk for the next batch, which a chunk TCP holds
 * would need (small messages, one at a time, would each take one).
 */
static int kiwi_llp_tcp_send(struct kiwi_qp_tx *tx, struct socket *sock)
{
	struct sock *sk = sock->sk;
	size_t size = tx->len - tx->sent;
	int rv;

	lock_sock(sk);
	if (!tx->sent)
		kiwi_llp_tcp_open_batch(tx, sk, size);
	if (size < KIWI_TX_COPY_MAX)
		rv = kiwi_llp_tcp_send_copy(tx, sk);
	else
		rv = kernel_sendpage_locked(sk, tx->chunk,
					    tx->base + tx->sent, size,
					    MSG_DONTWAIT | MSG_NOSIGNAL);
	if (rv > 0 && rv == size)
		kiwi_llp_tcp_end_batch(tx, sk);
	release_sock(sk);
	return rv;
}

const struct kiwi_llp_ops kiwi_llp_mpa_tcp = {
	.name = "mpa-tcp",
	.setup = kiwi_llp_tcp_setup,
	.seg_room = KIWI_MPA_HDR_LEN,
	.seg_wire_len = kiwi_llp_tcp_wire_len,
	.seg_frame = kiwi_llp_tcp_frame,
	.batch = kiwi_llp_tcp_batch,
	.send = kiwi_llp_tcp_send,
	.receive = kiwi_llp_tcp_receive,
	.data_ready = kiwi_llp_tcp_data_ready,
	.close = kiwi_ep_llp_close,
	.drain = kiwi_ep_llp_drain,
	.stop = kiwi_llp_tcp_stop,
};

/* The same stream with the ULP framing draft-00 profile (ulpf.h). */
const struct kiwi_llp_ops kiwi_llp_ulpf_tcp = {
	.name = "ulpf00-tcp",
	.setup = kiwi_llp_tcp_setup,
	.seg_room = KIWI_ULPF_HDR_LEN,
	.seg_wire_len = kiwi_llp_tcp_wire_len,
	.seg_frame = kiwi_llp_tcp_frame,
	.batch = kiwi_llp_tcp_batch,
	.send = kiwi_llp_tcp_send,
	.receive = kiwi_llp_tcp_receive,
	.data_ready = kiwi_llp_tcp_data_ready,
	.close = kiwi_ep_llp_close,
	.drain = kiwi_ep_llp_drain,
	.stop = kiwi_llp_tcp_stop,
};
