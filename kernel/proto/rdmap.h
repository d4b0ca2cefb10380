/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RDMAP (RFC 5040): the control octet carried in DDP's RsvdULP octet, the
 * opcode table (RFC 5040 section 4; RFC 7306 Immediate Data and atomics),
 * the 28-octet Read Request header, the 8-octet Immediate Data, the 52-octet
 * Atomic Request and 12-octet Atomic Response headers and the RDMAP receive
 * checks of RFC 5040 section 7.2 and RFC 7306 section 8.
 *
 * RDMAP control octet (DDP octet 1): RV 0xc0 | reserved 0x30 | opcode 0x0f.
 *
 * Receive path, per segment, before any payload octet is placed:
 *  1. kiwi_ddp_hdr_decode() on the first KIWI_RDMAP_HDR_MAX ULPDU octets
 *     (or the whole ULPDU if shorter). A ULPDU too short for its DDP
 *     header (DDP-037) has no error code of its own: report it as
 *     KIWI_TERM_ERR_DDP_CATASTROPHIC without copied headers.
 *  2. kiwi_rdmap_check_hdr(): DDP version, RDMAP version, opcode, T bit,
 *     QN, Read Request/Terminate shape.
 *  3. Tagged: look up the STag, kiwi_ddp_check_tagged(); a Read Response
 *     first kiwi_rdmap_check_rresp() against the oldest outstanding Read.
 *     Untagged: look up the queue of the QN, kiwi_ddp_check_untagged().
 *     Read Request: kiwi_rdmap_rreq_decode() and kiwi_rdmap_check_rreq().
 *     Atomic Request: kiwi_rdmap_areq_decode() and kiwi_rdmap_check_areq().
 *     Send with Invalidate: kiwi_rdmap_check_inval() at delivery.
 *  4. On the first error: kiwi_term_from_err() with the failing ULPDU and
 *     kiwi_term_build_msg(); place nothing more (DDP-069/071).
 *  5. A received Terminate that passed 2-3 is read with kiwi_term_decode(),
 *     with KIWI_TERM_DEC_SIW_SWAPPED if kiwi_term_siw_swapped() says so.
 *
 * Pure code: no kernel objects, no locks, no allocation.
 */
#ifndef KIWI_PROTO_RDMAP_H
#define KIWI_PROTO_RDMAP_H

#include "platform.h"
#include "ddp.h"
#include "term.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KIWI_RDMAP_VERSION	1	/* RV of RFC 5040 */
#define KIWI_RDMAP_CTRL_RV	0xc0
#define KIWI_RDMAP_CTRL_RSVD	0x30
#define KIWI_RDMAP_CTRL_OP	0x0f

/**
 * enum kiwi_rdmap_op - RDMAP opcodes (RFC 5040 Fig. 4, RFC 7306 sec. 10).
 * @KIWI_RDMAP_WRITE: RDMA Write.
 * @KIWI_RDMAP_READ_REQ: RDMA Read Request.
 * @KIWI_RDMAP_READ_RESP: RDMA Read Response.
 * @KIWI_RDMAP_SEND: Send.
 * @KIWI_RDMAP_SEND_INV: Send with Invalidate.
 * @KIWI_RDMAP_SEND_SE: Send with Solicited Event.
 * @KIWI_RDMAP_SEND_SE_INV: Send with Solicited Event and Invalidate.
 * @KIWI_RDMAP_TERMINATE: Terminate.
 * @KIWI_RDMAP_IMM: RFC 7306 Immediate Data.
 * @KIWI_RDMAP_IMM_SE: RFC 7306 Immediate Data with Solicited Event.
 * @KIWI_RDMAP_ATOMIC_REQ: RFC 7306 Atomic Request.
 * @KIWI_RDMAP_ATOMIC_RESP: RFC 7306 Atomic Response.
 * @KIWI_RDMAP_OP_MAX: highest opcode value the 4-bit field can hold;
 *	0xc-0xe are unassigned and 0xf is reserved for experiments.
 */
enum kiwi_rdmap_op {
	KIWI_RDMAP_WRITE = 0x0,
	KIWI_RDMAP_READ_REQ = 0x1,
	KIWI_RDMAP_READ_RESP = 0x2,
	KIWI_RDMAP_SEND = 0x3,
	KIWI_RDMAP_SEND_INV = 0x4,
	KIWI_RDMAP_SEND_SE = 0x5,
	KIWI_RDMAP_SEND_SE_INV = 0x6,
	KIWI_RDMAP_TERMINATE = 0x7,
	KIWI_RDMAP_IMM = 0x8,
	KIWI_RDMAP_IMM_SE = 0x9,
	KIWI_RDMAP_ATOMIC_REQ = 0xa,
	KIWI_RDMAP_ATOMIC_RESP = 0xb,
	KIWI_RDMAP_OP_MAX = 0xf,
};

/* Untagged queue numbers (RFC 5040 section 3.1, RFC 7306 section 10.2). */
#define KIWI_RDMAP_QN_SEND		0
#define KIWI_RDMAP_QN_READ_REQ		1
#define KIWI_RDMAP_QN_TERMINATE		2
#define KIWI_RDMAP_QN_ATOMIC_RESP	3

#define KIWI_RDMAP_RREQ_LEN	28	/* Read Request header */
#define KIWI_RDMAP_IMM_LEN	8	/* RFC 7306 Immediate Data */
#define KIWI_RDMAP_AREQ_LEN	52	/* RFC 7306 Atomic Request header */
#define KIWI_RDMAP_ARESP_LEN	12	/* RFC 7306 Atomic Response header */
#define KIWI_RDMAP_ATOMIC_LEN	8	/* size and alignment of the target */
/* Largest fixed header of a supported message: DDP + Atomic Request. */
#define KIWI_RDMAP_HDR_MAX	(KIWI_DDP_UNTAGGED_HDR_LEN + KIWI_RDMAP_AREQ_LEN)

/* RFC 7306 Atomic Operation Subcodes (AOpCode, section 10.1). */
#define KIWI_RDMAP_AOP_FETCH_ADD	0x0
#define KIWI_RDMAP_AOP_CMP_SWAP		0x2	/* 0x1 is reserved */
#define KIWI_RDMAP_AOP_MASK		0xf
#define KIWI_RDMAP_TERM_MIN	4	/* Terminate Control field */

/**
 * struct kiwi_rdmap_op_info - one row of the opcode table.
 * @supported: kiwi implements the message (RFC 5040 opcodes 0-7, RFC 7306
 *	opcodes 0x8-0xb).
 * @tagged: the message uses the tagged DDP header.
 * @qn: untagged queue number.
 * @inv_stag: the Invalidate STag field (untagged octets 2-5) is used.
 * @rdmap_hdr: fixed RDMAP header octets after the DDP header (the minimum
 *	for a Terminate).
 */
struct kiwi_rdmap_op_info {
	bool supported;
	bool tagged;
	u8 qn;
	bool inv_stag;
	u8 rdmap_hdr;
};

/**
 * kiwi_rdmap_ctrl() - the RDMAP control octet for @op, RV = 1.
 * @op: enum kiwi_rdmap_op.
 *
 * Return: RV = 1, reserved bits 0, opcode @op.
 */
static inline u8 kiwi_rdmap_ctrl(u8 op)
{
	return (u8)(KIWI_RDMAP_VERSION << 6 | (op & KIWI_RDMAP_CTRL_OP));
}

/**
 * kiwi_rdmap_opcode() - opcode of an RDMAP control octet.
 * @ctrl: DDP octet 1.
 *
 * Return: the 4-bit opcode.
 */
static inline u8 kiwi_rdmap_opcode(u8 ctrl)
{
	return ctrl & KIWI_RDMAP_CTRL_OP;
}

/**
 * kiwi_rdmap_rv() - RDMAP version of a control octet.
 * @ctrl: DDP octet 1.
 *
 * Return: the 2-bit RV.
 */
static inline u8 kiwi_rdmap_rv(u8 ctrl)
{
	return (ctrl & KIWI_RDMAP_CTRL_RV) >> 6;
}

/**
 * struct kiwi_rdmap_rreq - RDMA Read Request header (RFC 5040 sec. 4.4).
 * @sink_stag: Data Sink STag, echoed in the Read Response.
 * @sink_to: Data Sink Tagged Offset, echoed in the Read Response.
 * @size: RDMA Read Message Size (0 is legal).
 * @src_stag: Data Source STag.
 * @src_to: Data Source Tagged Offset.
 */
struct kiwi_rdmap_rreq {
	u32 sink_stag;
	u64 sink_to;
	u32 size;
	u32 src_stag;
	u64 src_to;
};

/**
 * struct kiwi_rdmap_rresp_view - the Read a Read Response must answer.
 * @sink_stag: Data Sink STag of the oldest outstanding RDMA Read.
 * @sink_to: its Data Sink TO.
 * @size: its RDMA Read Message Size.
 * @placed: octets of its Read Response already placed.
 */
struct kiwi_rdmap_rresp_view {
	u32 sink_stag;
	u64 sink_to;
	u32 size;
	u32 placed;
};

/**
 * struct kiwi_rdmap_areq - RFC 7306 Atomic Request header (section 5.2.1).
 * @aop: AOpCode (KIWI_RDMAP_AOP_*).
 * @req_id: Request Identifier, echoed in the Response.
 * @stag: Remote STag.
 * @to: Remote Tagged Offset, 64-bit aligned.
 * @data: Add Data (FetchAdd) or Swap Data (CmpSwap).
 * @data_mask: Add Mask (FetchAdd: set bits end fields, 0 = plain add) or
 *	Swap Mask (CmpSwap: the bits swapped, all-ones = plain swap).
 * @cmp: Compare Data (CmpSwap; 0 for FetchAdd).
 * @cmp_mask: Compare Mask (CmpSwap: the bits compared; all-ones for
 *	FetchAdd).
 */
struct kiwi_rdmap_areq {
	u8 aop;
	u32 req_id;
	u32 stag;
	u64 to;
	u64 data;
	u64 data_mask;
	u64 cmp;
	u64 cmp_mask;
};

/**
 * struct kiwi_rdmap_aresp - RFC 7306 Atomic Response header (5.2.2).
 * @req_id: the Request Identifier of the Request it answers.
 * @orig: the target's value before the operation.
 */
struct kiwi_rdmap_aresp {
	u32 req_id;
	u64 orig;
};

const struct kiwi_rdmap_op_info *kiwi_rdmap_op_lookup(u8 op);
u32 kiwi_rdmap_hdr_len(u8 op);
const char *kiwi_rdmap_op_name(u8 op);
int kiwi_rdmap_seg_hdr(struct kiwi_ddp_hdr *h, u8 op, u32 stag, u32 msn,
		       const struct kiwi_ddp_seg *seg);

void kiwi_rdmap_rreq_encode(const struct kiwi_rdmap_rreq *r, u8 *buf);
int kiwi_rdmap_rreq_decode(struct kiwi_rdmap_rreq *r, const u8 *buf,
			   u32 len);
void kiwi_rdmap_rreq_advance(struct kiwi_rdmap_rreq *r, u32 done);
void kiwi_rdmap_imm_encode(__be32 imm, u8 *buf);
enum kiwi_term_err kiwi_rdmap_imm_decode(__be32 *imm, const u8 *buf);
bool kiwi_rdmap_term_refuses_imm(const struct kiwi_term *t);
void kiwi_rdmap_areq_encode(const struct kiwi_rdmap_areq *r, u8 *buf);
void kiwi_rdmap_areq_decode(struct kiwi_rdmap_areq *r, const u8 *buf);
void kiwi_rdmap_aresp_encode(const struct kiwi_rdmap_aresp *r, u8 *buf);
void kiwi_rdmap_aresp_decode(struct kiwi_rdmap_aresp *r, const u8 *buf);
bool kiwi_rdmap_atomic_apply(const struct kiwi_rdmap_areq *r, u64 orig,
			     u64 *val);
bool kiwi_rdmap_term_names_op(const struct kiwi_term *t, u8 op);
bool kiwi_rdmap_term_request_msn(const struct kiwi_term *t, u32 *msn);

enum kiwi_term_err kiwi_rdmap_check_hdr(const struct kiwi_ddp_hdr *h,
					u32 len);
enum kiwi_term_err
kiwi_rdmap_check_rreq(const struct kiwi_rdmap_rreq *r,
		      const struct kiwi_ddp_stream *s,
		      const struct kiwi_ddp_stag_info *st);
enum kiwi_term_err
kiwi_rdmap_check_areq(const struct kiwi_rdmap_areq *r,
		      const struct kiwi_ddp_stream *s,
		      const struct kiwi_ddp_stag_info *st);
enum kiwi_term_err
kiwi_rdmap_check_rresp(const struct kiwi_ddp_hdr *h, u32 len,
		       const struct kiwi_rdmap_rresp_view *v);
enum kiwi_term_err
kiwi_rdmap_check_inval(const struct kiwi_ddp_stream *s,
		       const struct kiwi_ddp_stag_info *st);

#ifdef __cplusplus
}
#endif

#endif /* KIWI_PROTO_RDMAP_H */
