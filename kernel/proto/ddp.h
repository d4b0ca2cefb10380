/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * DDP (RFC 5041 = draft-ietf-rddp-ddp-06): segment header codec, the
 * transmit segmentation planner and the receive-side validation of
 * section 7.1 with the error numbers of section 7.2.
 *
 * Header layouts (offsets from the first DDP octet = first ULPDU octet):
 *
 *   tagged (14):   0 ctrl | 1 RsvdULP | 2 STag (32) | 6 TO (64)
 *   untagged (18): 0 ctrl | 1 RsvdULP[0:7] | 2 RsvdULP[8:39] (32) |
 *                  6 QN (32) | 10 MSN (32) | 14 MO (32)
 *   ctrl:          T 0x80 | L 0x40 | reserved 0x3c | DV 0x03
 *
 * Pure code: no kernel objects, no locks, no allocation. The structs below
 * are plain values owned by the caller; the segmentation iterator belongs to
 * one message being transmitted and is used by one thread at a time (in
 * kiwi.ko: under the QP's send lock).
 */
#ifndef KIWI_PROTO_DDP_H
#define KIWI_PROTO_DDP_H

#include "platform.h"
#include "term.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KIWI_DDP_TAGGED_HDR_LEN		14
#define KIWI_DDP_UNTAGGED_HDR_LEN	18
#define KIWI_DDP_HDR_MAX		KIWI_DDP_UNTAGGED_HDR_LEN

#define KIWI_DDP_CTRL_T		0x80
#define KIWI_DDP_CTRL_L		0x40
#define KIWI_DDP_CTRL_RSVD	0x3c
#define KIWI_DDP_CTRL_DV	0x03

#define KIWI_DDP_VERSION	1	/* DV of RFC 5041 (DDP-019) */
#define KIWI_DDP_MSN_INIT	1	/* first MSN of every queue (DDP-033) */

/**
 * struct kiwi_ddp_hdr - one decoded DDP segment header.
 * @tagged: T bit.
 * @last: L bit.
 * @dv: DDP version (2 bits).
 * @rsvd: the four reserved control bits as received (not checked, DDP-018);
 *	ignored by the encoder, which always sends zero.
 * @ulp_ctrl: RsvdULP octet 1 (the RDMAP control octet).
 * @ulp_word: untagged RsvdULP[8:39] (RDMAP: Invalidate STag); 0 if tagged.
 * @stag: tagged: STag; 0 if untagged.
 * @to: tagged: Tagged Offset; 0 if untagged.
 * @qn: untagged: Queue Number; 0 if tagged.
 * @msn: untagged: Message Sequence Number; 0 if tagged.
 * @mo: untagged: Message Offset; 0 if tagged.
 */
struct kiwi_ddp_hdr {
	bool tagged;
	bool last;
	u8 dv;
	u8 rsvd;
	u8 ulp_ctrl;
	u32 ulp_word;
	u32 stag;
	u64 to;
	u32 qn;
	u32 msn;
	u32 mo;
};

/**
 * kiwi_ddp_hdr_len() - DDP header length for a control octet.
 * @ctrl: first octet of a DDP segment.
 *
 * Return: 14 if the T bit is set, else 18.
 */
static inline u32 kiwi_ddp_hdr_len(u8 ctrl)
{
	return (ctrl & KIWI_DDP_CTRL_T) ? KIWI_DDP_TAGGED_HDR_LEN :
					  KIWI_DDP_UNTAGGED_HDR_LEN;
}

/**
 * kiwi_ddp_msn_next() - the MSN after @msn.
 * @msn: a Message Sequence Number.
 *
 * Return: @msn + 1 modulo 2^32; 0xffffffff is followed by 0 (DDP-034).
 */
static inline u32 kiwi_ddp_msn_next(u32 msn)
{
	return msn + 1U;
}

int kiwi_ddp_hdr_decode(struct kiwi_ddp_hdr *h, const u8 *buf, u32 len);
u32 kiwi_ddp_hdr_encode(const struct kiwi_ddp_hdr *h, u8 *buf);

/**
 * struct kiwi_ddp_seg - one segment of a planned message.
 * @off: offset of the segment's first payload octet in the message.
 * @len: payload octets (the DDP header is not counted).
 * @to: tagged: TO of the segment (initial TO + @off).
 * @mo: untagged: MO of the segment (= @off).
 * @last: the segment carries L = 1.
 */
struct kiwi_ddp_seg {
	u32 off;
	u32 len;
	u64 to;
	u32 mo;
	bool last;
};

/**
 * struct kiwi_ddp_seg_iter - segmentation state of one outgoing message.
 * @to: initial TO (tagged only).
 * @msg_len: message length.
 * @max_payload: payload octets per segment: MULPDU minus the DDP header.
 * @off: payload octets already handed out.
 * @done: the L = 1 segment was handed out.
 * @tagged: tagged message.
 *
 * Initialise with kiwi_ddp_seg_init(); the fields are private to ddp_seg.c.
 */
struct kiwi_ddp_seg_iter {
	u64 to;
	u32 msg_len;
	u32 max_payload;
	u32 off;
	bool done;
	bool tagged;
};

int kiwi_ddp_seg_init(struct kiwi_ddp_seg_iter *it, bool tagged, u32 msg_len,
		      u64 to, u32 mulpdu);
int kiwi_ddp_seg_resize(struct kiwi_ddp_seg_iter *it, u32 mulpdu);
bool kiwi_ddp_seg_next(struct kiwi_ddp_seg_iter *it, struct kiwi_ddp_seg *seg);
u32 kiwi_ddp_seg_count(bool tagged, u32 msg_len, u32 mulpdu);

/* Access bits of struct kiwi_ddp_stag_info. */
#define KIWI_DDP_ACC_LOCAL_WRITE	0x1	/* placement of Read Responses */
#define KIWI_DDP_ACC_REMOTE_WRITE	0x2	/* RDMA Write target */
#define KIWI_DDP_ACC_REMOTE_READ	0x4	/* RDMA Read source */
#define KIWI_DDP_ACC_REMOTE_INV		0x8	/* peer may invalidate it */
#define KIWI_DDP_ACC_REMOTE_ATOMIC	0x10	/* RFC 7306 atomic target */

/* struct kiwi_ddp_stag_info.qp of an STag usable from any stream of its PD. */
#define KIWI_DDP_ANY_QP		0xffffffffffffffffULL

/**
 * struct kiwi_ddp_stream - local identity and rights of the receiving stream.
 * @pd: identity of the QP's protection domain (the caller's choice of
 *	value: an id or an address; only compared for equality).
 * @qp: QP (stream) id, unique among the streams an STag may be bound to
 *	while it is bound (the caller's choice); never KIWI_DDP_ANY_QP.
 * @access: KIWI_DDP_ACC_REMOTE_WRITE / _READ / _ATOMIC: the
 *	remote operations the QP's consumer allows on this stream (its
 *	qp_access_flags). Local write is a right of STags only.
 *
 * Local values only: nothing a peer sends can change them (SEC-11).
 */
struct kiwi_ddp_stream {
	uintptr_t pd;
	u64 qp;
	u32 access;
};

/**
 * struct kiwi_ddp_stag_info - the caller's STag lookup result.
 * @valid: the STag exists and is valid (registered, not invalidated).
 * @pd: identity of the STag's protection domain (as kiwi_ddp_stream.pd).
 * @qp: QP the STag is bound to (a QP-bound memory window), or
 *	KIWI_DDP_ANY_QP for a PD-scoped STag.
 * @access: KIWI_DDP_ACC_* rights granted.
 * @base: TO of the first octet of the tagged buffer.
 * @len: octets in the tagged buffer.
 */
struct kiwi_ddp_stag_info {
	bool valid;
	uintptr_t pd;
	u64 qp;
	u32 access;
	u64 base;
	u64 len;
};

/**
 * struct kiwi_ddp_queue_view - the caller's state of one untagged queue.
 * @msn_lo: lowest MSN the queue may legally receive now (the MSN of the
 *	oldest message not yet delivered).
 * @msn_win: number of MSNs from @msn_lo that are legal (at least 1 for a
 *	usable queue); an MSN outside [@msn_lo, @msn_lo + @msn_win), computed
 *	modulo 2^32, is "MSN range not valid".
 * @has_buf: a buffer is available for the segment's MSN.
 * @buf_len: octets in that buffer.
 * @mo_next: octets of the message @msn_lo already placed: on an in-order
 *	LLP (MPA over TCP) the next segment of the queue must carry exactly
 *	this MO (0 for a message's first segment). Messages whose segments
 *	each start where the last one ended are whole when L = 1 arrives
 *	(DDP-017/052).
 */
struct kiwi_ddp_queue_view {
	u32 msn_lo;
	u32 msn_win;
	bool has_buf;
	u32 buf_len;
	u32 mo_next;
};

/**
 * kiwi_ddp_stag_on_stream() - is an STag associated with this stream?
 * @s: the receiving stream.
 * @st: the STag's lookup result.
 *
 * Both association mechanisms of RFC 5041 section 8.2 (DDP-077): the PDs
 * must match, and a stream-bound STag must be bound to this stream.
 *
 * Return: true if associated.
 */
static inline bool kiwi_ddp_stag_on_stream(const struct kiwi_ddp_stream *s,
					   const struct kiwi_ddp_stag_info *st)
{
	if (st->pd != s->pd)
		return false;
	return st->qp == KIWI_DDP_ANY_QP || st->qp == s->qp;
}

enum kiwi_term_err kiwi_ddp_check_version(const struct kiwi_ddp_hdr *h);
enum kiwi_term_err
kiwi_ddp_check_tagged(const struct kiwi_ddp_hdr *h, u32 len, u32 need,
		      const struct kiwi_ddp_stream *s,
		      const struct kiwi_ddp_stag_info *st);
enum kiwi_term_err
kiwi_ddp_check_untagged(const struct kiwi_ddp_hdr *h, u32 len,
			const struct kiwi_ddp_queue_view *q);
int kiwi_ddp_to_range(u64 base, u64 size, u64 to, u32 len);

#ifdef __cplusplus
}
#endif

#endif /* KIWI_PROTO_DDP_H */
