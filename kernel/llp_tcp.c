// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: MPA over kernel TCP as the LLP under DDP (llp.h).
 *
 * Each DDP segment becomes one FPDU (RFC 5044 section 4: header, ULPDU,
 * pad, CRC, markers where negotiated), framed in place in the transmit
 * buffer by proto/mpa; the buffer goes to TCP with non-blocking
 * kernel_sendmsg() calls. Receive reads the socket with tcp_read_sock()
 * and runs the FPDU decoder (rx.c, rx_ahead.c).
 */
#include <linux/net.h>
#include <linux/tcp.h>
#include <net/sock.h>

#include "kiwi.h"
#include "conn.h"
#include "llp.h"

/* The MPA framers of both directions and the MULPDU of the TCP stream. */
static int kiwi_llp_tcp_setup(struct kiwi_qp *qp, struct socket *sock,
			      const struct kiwi_llp_params *p)
{
	struct kiwi_mpa_cfg tc = {
		.profile = KIWI_FRAME_MPA,
		.markers = p->mpa.tx_markers,
		.crc = p->mpa.crc,
	};
	struct kiwi_mpa_cfg rc = tc;

	rc.markers = p->mpa.rx_markers;
	if (kiwi_mpa_tx_init(&qp->tx.mpa, &tc, 0) ||
	    kiwi_mpa_rx_init(&qp->rx.mpa, &rc, 0, KIWI_MPA_RX_HDR_MAX))
		return -EINVAL;
	kiwi_rx_ahead_init(qp, sock->sk);
	qp->tx.mulpdu = kiwi_mpa_mulpdu(READ_ONCE(tcp_sk(sock->sk)->mss_cache),
					p->mpa.tx_markers);
	return 0;
}

static u32 kiwi_llp_tcp_wire_len(const struct kiwi_qp_tx *tx, u32 ulpdu_len)
{
	return kiwi_mpa_fpdu_wire_len(&tx->mpa, ulpdu_len);
}

/*
 * Frame the ULPDU staged after the MPA header's room. The plan's pieces
 * are laid out in wire order back to front: every ULPDU piece moves to a
 * position at or after the one it was staged at, so no piece overwrites
 * one not yet moved.
 */
static int kiwi_llp_tcp_frame(struct kiwi_qp_tx *tx, u32 ulpdu_len)
{
	u8 *base = tx->buf + tx->len;
	struct kiwi_mpa_frag frag = {
		.base = base + KIWI_MPA_HDR_LEN,
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
