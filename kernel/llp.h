/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kiwi: the lower layer protocol (LLP) under DDP, as the QP engine sees it.
 *
 * RDMAP and DDP (tx*.c, rx*.c) build and consume DDP segments; how a
 * segment travels is the LLP's business: MPA FPDUs on a TCP stream, or
 * draft-00 framing PDUs on one (llp_tcp.c), or SCTP DATA chunks
 * (llp_sctp.c). The engine reaches the LLP only through one
 * struct kiwi_llp_ops, chosen by the connection manager at attach
 * (kiwi_llp_params.ops) and fixed until detach.
 *
 * The transmit buffer (kiwi_qp_tx.buf) is shared: the engine stages each
 * DDP segment in it at the offset the LLP names, the LLP frames it in
 * place and later hands the framed octets to its socket. Framing and
 * sending run only in TX (tx.run_lock held), receiving only in RX (the
 * socket's lock held), so an implementation needs no lock of its own for
 * the state it keeps in kiwi_qp_tx and kiwi_qp_rx.
 */
#ifndef KIWI_LLP_H
#define KIWI_LLP_H

#include <linux/types.h>

struct kiwi_qp;
struct kiwi_qp_tx;
struct kiwi_ep;
struct kiwi_llp_params;
struct socket;
struct sock;

/**
 * struct kiwi_llp_ops - one lower layer under DDP
 * @name: short name for logs and resource details
 * @setup: attach, before the QP enters RTS: initialise framing and
 *         receive state in @qp and set qp->tx.mulpdu from what the
 *         stream allows. Process context, TX and RX not running.
 *         Return 0 or a negative errno (the attach fails).
 * @seg_room: octets the LLP writes before the DDP segment in the transmit
 *            buffer (the ULPDU starts that far into the segment's slot)
 * @seg_wire_len: octets a DDP segment of @ulpdu_len octets takes in the
 *                transmit buffer once framed
 * @seg_frame: frame, in place, the DDP segment of @ulpdu_len octets staged
 *             at tx->buf + tx->len + @seg_room; advance tx->len past it.
 *             Return 0 or a negative errno (nothing framed).
 * @batch: optional: the transmit buffer is empty and a batch of segments
 *         is about to be framed into it: refresh tx->mulpdu from what
 *         the stream allows now and, where segments are aligned to
 *         the stream's, reset tx->seg (segments already framed were
 *         sent as they were). TX context (process, may sleep). Without
 *         it MULPDU stays as @setup set it; tx->seg stays as attach left
 *         it unless this resets it.
 * @send: hand octets [tx->sent, tx->len) of the transmit buffer to @sock,
 *        never blocking. Return the octets taken (possibly fewer than
 *        offered), or a negative errno (-EAGAIN: no room now; the
 *        socket's write space reaches kiwi_qp_tx_space() when there is).
 * @receive: deliver what @sk holds to the DDP engine now, or, where the
 *           LLP cannot read in the caller's context, as soon as it can.
 *           @sk owned (lock_sock): at attach, and by the CM before it
 *           lets go of a stream whose peer closed.
 * @data_ready: @sk has more to read (sk_data_ready: @sk locked, in softirq
 *              or by the task running its backlog; sk_callback_lock held
 *              for reading): read it now or have it read soon.
 * @close: ask the connection manager to close the association or stream
 *         (see kiwi_ep_llp_close()). Any context.
 * @drain: a graceful close began: bound it (see kiwi_ep_llp_drain()).
 *         Any context.
 * @stop: optional: detach, after RX may no longer start: wait for any
 *        receive work of the LLP's own and let go of @qp. Process context.
 */
struct kiwi_llp_ops {
	const char *name;
	int (*setup)(struct kiwi_qp *qp, struct socket *sock,
		     const struct kiwi_llp_params *p);
	u32 seg_room;
	u32 (*seg_wire_len)(const struct kiwi_qp_tx *tx, u32 ulpdu_len);
	int (*seg_frame)(struct kiwi_qp_tx *tx, u32 ulpdu_len);
	void (*batch)(struct kiwi_qp_tx *tx, struct socket *sock);
	int (*send)(struct kiwi_qp_tx *tx, struct socket *sock);
	void (*receive)(struct kiwi_qp *qp, struct sock *sk);
	void (*data_ready)(struct kiwi_qp *qp, struct sock *sk);
	void (*close)(struct kiwi_ep *ep, bool abortive);
	void (*drain)(struct kiwi_ep *ep);
	void (*stop)(struct kiwi_qp *qp);
};

/* MPA (RFC 5044) over kernel TCP. */
extern const struct kiwi_llp_ops kiwi_llp_mpa_tcp;
/* ULP framing draft-00 (PDU alignment mode) over kernel TCP, llp_tcp.c. */
extern const struct kiwi_llp_ops kiwi_llp_ulpf_tcp;
/* DDP over SCTP (RFC 5043 draft), llp_sctp.c. */
extern const struct kiwi_llp_ops kiwi_llp_sctp;

#endif /* KIWI_LLP_H */
