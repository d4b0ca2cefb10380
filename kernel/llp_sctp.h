/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * kiwi: DDP over SCTP (RFC 5043 draft, Documentation/sctp.md), the state
 * of one association shared by its CM endpoint (cm_sctp.c) and the SCTP
 * LLP (llp_sctp.c).
 *
 * One DDP Stream per association, on SCTP stream 0; every DATA chunk is
 * unordered and starts with its DDP-SSN. The receive side puts chunks
 * back in DDP-SSN order (a window of KIWI_SCTP_REORDER chunks) before
 * anything reads them: the CM the Session Control messages of the
 * startup, the QP engine the DDP segments after attach.
 */
#ifndef KIWI_LLP_SCTP_H
#define KIWI_LLP_SCTP_H

#include <linux/net.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "proto/sctp_adapt.h"

struct ib_device;
struct kiwi_qp;

/* The SCTP stream of kiwi's one DDP Stream per association. */
#define KIWI_SCTP_SID		0
/* Chunks the receiver holds ahead of the next DDP-SSN (power of 2). */
#define KIWI_SCTP_REORDER	256
/* Largest chunk user data read: DDP-SSN + a segment at a 9000 MTU. */
#define KIWI_SCTP_RBUF_LEN	9216

/**
 * struct kiwi_sctp_chunk - one chunk's user data held out of order
 * @ppid: its Payload Protocol Identifier (host order)
 * @len: octets in @data
 * @data: the user data, DDP-SSN first
 */
struct kiwi_sctp_chunk {
	u32 ppid;
	u32 len;
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
 * @slot: chunks received ahead of @rx_next, at DDP-SSN % KIWI_SCTP_REORDER
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
	struct kiwi_sctp_chunk *slot[KIWI_SCTP_REORDER];
	bool peer_term;
	u8 *rbuf;
};

/**
 * struct kiwi_sctp_msg - one chunk, in DDP-SSN order
 * @ppid: Payload Protocol Identifier (host order)
 * @ssn: its DDP-SSN
 * @data: user data after the DDP-SSN
 * @len: octets at @data
 */
struct kiwi_sctp_msg {
	u32 ppid;
	u16 ssn;
	const u8 *data;
	u32 len;
};

/* llp_sctp.c: sockets, chunk I/O and ordering */
struct kiwi_sctp_conn *kiwi_sctp_conn_alloc(void);
void kiwi_sctp_conn_free(struct kiwi_sctp_conn *sc);
int kiwi_sctp_sock_prepare(struct socket *sock);
void kiwi_sctp_sock_attach(struct kiwi_sctp_conn *sc, struct socket *sock);
void kiwi_sctp_sock_detach(struct kiwi_sctp_conn *sc);
int kiwi_sctp_peer_check(struct kiwi_sctp_conn *sc);
int kiwi_sctp_send_ssc(struct kiwi_sctp_conn *sc, u16 ssn, u16 fn,
		       const void *pd, u32 pd_len);
int kiwi_sctp_next(struct kiwi_sctp_conn *sc, struct kiwi_sctp_msg *m,
		   struct ib_device *ibdev);
void kiwi_sctp_consumed(struct kiwi_sctp_conn *sc);
bool kiwi_sctp_discard(struct kiwi_sctp_conn *sc);
bool kiwi_sctp_peer_closed(struct socket *sock, int *err);

/* cm_sctp.c: what RX tells the CM */
struct kiwi_ep;
void kiwi_ep_sctp_peer_term(struct kiwi_ep *ep);
void kiwi_ep_sctp_rx_ended(struct kiwi_ep *ep);

#endif /* KIWI_LLP_SCTP_H */
