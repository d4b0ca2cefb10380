/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kiwi: DDP over SCTP (RFC 5043 draft, Documentation/sctp.md), the state
 * of one association shared by its CM endpoint (cm_sctp.c) and the SCTP
 * LLP (llp_sctp.c).
 *
 * One DDP Stream per association, on SCTP stream 0; every DATA chunk is
 * unordered and starts with its DDP-SSN. The receive side hands chunks
 * over in DDP-SSN order (the draft's window of KIWI_SCTP_SSN_WINDOW
 * chunks): the CM the Session Control messages of the startup, the QP
 * engine the DDP segments after attach. Once a QP is attached, a segment
 * that arrives ahead of a gap may be placed at once (rx_early.c): only
 * its header is kept for its turn, which delivers it.
 */
#ifndef KIWI_LLP_SCTP_H
#define KIWI_LLP_SCTP_H

#include <linux/net.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "proto/sctp_adapt.h"

struct ib_device;
struct kiwi_qp;
struct kiwi_rx_early;

/* The SCTP stream of kiwi's one DDP Stream per association. */
#define KIWI_SCTP_SID		0
/*
 * Octets of chunks held ahead of the next DDP-SSN, at most: chunks held
 * whole (not placed on arrival) and the headers of placed ones. The
 * headers of a full window of placed segments fit; see
 * Documentation/sctp.md for what a peer reaches it with.
 */
#define KIWI_SCTP_HOLD_MAX	(4U << 20)
/* Largest chunk user data read: DDP-SSN + a segment at a 9000 MTU. */
#define KIWI_SCTP_RBUF_LEN	9216

/**
 * struct kiwi_sctp_chunk - one chunk held until its DDP-SSN's turn
 * @ppid: its Payload Protocol Identifier (host order)
 * @len: octets in @data
 * @seg_len: a placed DDP segment: its length (@data keeps only the first
 *	     octets, its headers); else 0
 * @data: the user data, DDP-SSN first
 */
struct kiwi_sctp_chunk {
	u32 ppid;
	u32 len;
	u32 seg_len;
	u8 data[];
};

/**
 * struct kiwi_sctp_conn - an association carrying one DDP Stream
 * @sock: the one-to-one SCTP socket (the endpoint owns it)
 * @qp: the attached QP (llp_sctp.c: set at setup, cleared at stop under
 *	the socket wait queue's lock, which the write-space wakeup holds)
 * @wait: on the socket's wait queue: SCTP signals send space only there
 * @rx_work: reads the socket while a QP is attached
 * @mulpdu: largest DDP segment, from the path MTU at establishment
 * @tx_ssn: DDP-SSN of the next chunk sent (CM until attach, then TX,
 *	then the CM again after detach)
 * @rx_next: DDP-SSN of the next chunk to deliver (same owners, RX side)
 * @held: chunks received ahead of @rx_next (struct kiwi_sctp_chunk), by
 *	  DDP-SSN (same owners as @rx_next)
 * @held_len: octets of the chunks in @held (@hold_max at most)
 * @hold_max: octets @held may take (same owners as @held): none while a
 *	      responder reads the Initiate, which nothing may precede
 *	      (SCTP-019), KIWI_SCTP_HOLD_MAX once a QP reads
 * @early: the attached QP's record of Sends placed ahead of a gap
 *	   (kiwi_qp_rx.early; RX, reset at setup)
 * @peer_term: the peer's Session Terminate was delivered
 * @rbuf: receive buffer, KIWI_SCTP_RBUF_LEN octets
 */
struct kiwi_sctp_conn {
	struct socket *sock;
	struct kiwi_qp *qp;
	struct wait_queue_entry wait;
	struct work_struct rx_work;
	u32 mulpdu;
	u16 tx_ssn;
	u16 rx_next;
	struct xarray held;
	u32 held_len;
	u32 hold_max;
	struct kiwi_rx_early *early;
	bool peer_term;
	u8 *rbuf;
};

/**
 * struct kiwi_sctp_msg - one chunk, in DDP-SSN order
 * @ppid: Payload Protocol Identifier (host order)
 * @ssn: its DDP-SSN
 * @data: user data, DDP-SSN first
 * @len: octets at @data
 * @seg_len: a DDP segment placed when it arrived: its length (@data holds
 *	     only its headers); else 0
 */
struct kiwi_sctp_msg {
	u32 ppid;
	u16 ssn;
	const u8 *data;
	u32 len;
	u32 seg_len;
};

/* llp_sctp.c: sockets, chunk I/O and ordering */
struct kiwi_sctp_conn *kiwi_sctp_conn_alloc(bool responder);
void kiwi_sctp_conn_free(struct kiwi_sctp_conn *sc);
int kiwi_sctp_sock_prepare(struct socket *sock);
void kiwi_sctp_sock_attach(struct kiwi_sctp_conn *sc, struct socket *sock);
void kiwi_sctp_sock_detach(struct kiwi_sctp_conn *sc);
int kiwi_sctp_peer_check(struct kiwi_sctp_conn *sc);
int kiwi_sctp_send_ssc(struct kiwi_sctp_conn *sc, u16 ssn, u16 fn,
		       const void *pd, u32 pd_len);
int kiwi_sctp_next(struct kiwi_sctp_conn *sc, struct kiwi_sctp_msg *m,
		   struct ib_device *ibdev, struct kiwi_qp *qp);
void kiwi_sctp_consumed(struct kiwi_sctp_conn *sc);
bool kiwi_sctp_discard(struct kiwi_sctp_conn *sc);
bool kiwi_sctp_peer_closed(struct socket *sock, int *err);

/* cm_sctp.c: what RX tells the CM */
struct kiwi_ep;
void kiwi_ep_sctp_peer_term(struct kiwi_ep *ep);
void kiwi_ep_sctp_rx_ended(struct kiwi_ep *ep);

#endif /* KIWI_LLP_SCTP_H */
