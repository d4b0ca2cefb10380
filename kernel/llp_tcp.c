// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: MPA over kernel TCP as the LLP under DDP (llp.h), and its variant
 * with the ULP framing draft-00 profile.
 *
 * Each DDP segment becomes one FPDU (RFC 5044 section 4: header, ULPDU,
 * pad, CRC, markers where negotiated), or with the profile one framing
 * PDU (draft-00 section 5: the 8-octet Length+Key header, the segment, no
 * packing), framed in place in the transmit buffer by proto/mpa; the
 * buffer goes to TCP with non-blocking kernel_sendmsg() calls. Receive
 * reads the socket with tcp_read_sock() and runs the decoder of the same
 * profile (rx.c, rx_ahead.c), which refuses a frame with another key than
 * the peer announced (MPA error 3, a Terminate; SEC-21).
 */
#include <linux/net.h>
#include <linux/tcp.h>
#include <net/sock.h>

#include "kiwi.h"
#include "conn.h"
#include "llp.h"

/*
 * MULPDU of the stream. With the draft-00 profile a framing PDU fits in
 * one segment of the current EMSS (ULPF-003/006), within the floor and
 * ceiling MPA keeps too (an EMSS below 136 octets, where the draft's
 * emergency mode would start, still gets 128-octet segments).
 */
static u32 kiwi_llp_tcp_mulpdu(struct sock *sk, const struct kiwi_llp_params *p)
{
	u32 emss = READ_ONCE(tcp_sk(sk)->mss_cache);

	if (!p->mpa.ulpf)
		return kiwi_mpa_mulpdu(emss, p->mpa.tx_markers);
	return clamp_t(u32, kiwi_ulpf_max_pdu(emss), KIWI_MPA_MULPDU_MIN,
		       KIWI_MPA_MULPDU_MAX);
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
	qp->tx.mulpdu = kiwi_llp_tcp_mulpdu(sock->sk, p);
	return 0;
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

/* The FPDUs form one byte stream: TCP takes as much of it as it can. */
static int kiwi_llp_tcp_send(struct kiwi_qp_tx *tx, struct socket *sock,
			     bool more)
{
	struct kvec kv = {
		.iov_base = tx->buf + tx->sent,
		.iov_len = tx->len - tx->sent,
	};
	struct msghdr msg = {
		.msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL,
	};

	if (more)
		msg.msg_flags |= MSG_MORE;
	return kernel_sendmsg(sock, &msg, &kv, 1, kv.iov_len);
}

const struct kiwi_llp_ops kiwi_llp_mpa_tcp = {
	.name = "mpa-tcp",
	.setup = kiwi_llp_tcp_setup,
	.seg_room = KIWI_MPA_HDR_LEN,
	.seg_wire_len = kiwi_llp_tcp_wire_len,
	.seg_frame = kiwi_llp_tcp_frame,
	.send = kiwi_llp_tcp_send,
	.receive = kiwi_rx_read,
	.close = kiwi_ep_llp_close,
	.drain = kiwi_ep_llp_drain,
};

/* The same stream with the ULP framing draft-00 profile (ulpf.h). */
const struct kiwi_llp_ops kiwi_llp_ulpf_tcp = {
	.name = "ulpf00-tcp",
	.setup = kiwi_llp_tcp_setup,
	.seg_room = KIWI_ULPF_HDR_LEN,
	.seg_wire_len = kiwi_llp_tcp_wire_len,
	.seg_frame = kiwi_llp_tcp_frame,
	.send = kiwi_llp_tcp_send,
	.receive = kiwi_rx_read,
	.close = kiwi_ep_llp_close,
	.drain = kiwi_ep_llp_drain,
};
