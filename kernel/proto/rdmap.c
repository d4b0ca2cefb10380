// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RDMAP opcode table and outgoing segment headers (RFC 5040 sections 4.1,
 * 4.2 and Appendix A; RFC 7306 section 4; see rdmap.h).
 */
#include "rdmap.h"

#define KIWI_OP(sup, tag, q, inv, hdr) \
	{ .supported = (sup), .tagged = (tag), .qn = (q), .inv_stag = (inv), \
	  .rdmap_hdr = (hdr) }

/* Assigned opcodes: 0x0-0xb. */
#define KIWI_RDMAP_OPS	(KIWI_RDMAP_ATOMIC_RESP + 1)

/* Indexed by opcode; rows 0xc-0xf are absent (unassigned / experimental). */
static const struct kiwi_rdmap_op_info kiwi_rdmap_ops[KIWI_RDMAP_OPS] = {
	[KIWI_RDMAP_WRITE] = KIWI_OP(true, true, 0, false, 0),
	[KIWI_RDMAP_READ_REQ] = KIWI_OP(true, false, KIWI_RDMAP_QN_READ_REQ,
					false, KIWI_RDMAP_RREQ_LEN),
	[KIWI_RDMAP_READ_RESP] = KIWI_OP(true, true, 0, false, 0),
	[KIWI_RDMAP_SEND] = KIWI_OP(true, false, KIWI_RDMAP_QN_SEND, false, 0),
	[KIWI_RDMAP_SEND_INV] = KIWI_OP(true, false, KIWI_RDMAP_QN_SEND,
					true, 0),
	[KIWI_RDMAP_SEND_SE] = KIWI_OP(true, false, KIWI_RDMAP_QN_SEND,
				       false, 0),
	[KIWI_RDMAP_SEND_SE_INV] = KIWI_OP(true, false, KIWI_RDMAP_QN_SEND,
					   true, 0),
	[KIWI_RDMAP_TERMINATE] = KIWI_OP(true, false, KIWI_RDMAP_QN_TERMINATE,
					 false, KIWI_RDMAP_TERM_MIN),
	/* RFC 7306 Immediate Data: supported. */
	[KIWI_RDMAP_IMM] = KIWI_OP(true, false, KIWI_RDMAP_QN_SEND, false,
				   KIWI_RDMAP_IMM_LEN),
	[KIWI_RDMAP_IMM_SE] = KIWI_OP(true, false, KIWI_RDMAP_QN_SEND,
				      false, KIWI_RDMAP_IMM_LEN),
	/* RFC 7306 atomics: requests share QN 1 with Read Requests. */
	[KIWI_RDMAP_ATOMIC_REQ] = KIWI_OP(true, false, KIWI_RDMAP_QN_READ_REQ,
					  false, KIWI_RDMAP_AREQ_LEN),
	[KIWI_RDMAP_ATOMIC_RESP] = KIWI_OP(true, false,
					   KIWI_RDMAP_QN_ATOMIC_RESP, false,
					   KIWI_RDMAP_ARESP_LEN),
};

static const char *const kiwi_rdmap_names[KIWI_RDMAP_OPS] = {
	[KIWI_RDMAP_WRITE] = "RDMA Write",
	[KIWI_RDMAP_READ_REQ] = "RDMA Read Request",
	[KIWI_RDMAP_READ_RESP] = "RDMA Read Response",
	[KIWI_RDMAP_SEND] = "Send",
	[KIWI_RDMAP_SEND_INV] = "Send with Invalidate",
	[KIWI_RDMAP_SEND_SE] = "Send with SE",
	[KIWI_RDMAP_SEND_SE_INV] = "Send with SE and Invalidate",
	[KIWI_RDMAP_TERMINATE] = "Terminate",
	[KIWI_RDMAP_IMM] = "Immediate Data",
	[KIWI_RDMAP_IMM_SE] = "Immediate Data with SE",
	[KIWI_RDMAP_ATOMIC_REQ] = "Atomic Request",
	[KIWI_RDMAP_ATOMIC_RESP] = "Atomic Response",
};

/**
 * kiwi_rdmap_op_lookup() - the opcode table row of @op.
 * @op: opcode (any value).
 *
 * Return: the row, or NULL for unassigned and experimental opcodes.
 */
const struct kiwi_rdmap_op_info *kiwi_rdmap_op_lookup(u8 op)
{
	if (op >= KIWI_RDMAP_OPS)
		return NULL;
	return &kiwi_rdmap_ops[op];
}

/**
 * kiwi_rdmap_hdr_len() - octets of DDP plus fixed RDMAP header of @op.
 * @op: opcode.
 *
 * Return: 14 for Write and Read Response, 18 for the Sends, 46 for a Read
 * Request, 22 (the minimum) for a Terminate, 26 for Immediate Data, 70
 * for an Atomic Request, 30 for an Atomic Response, 0 for unassigned
 * opcodes.
 */
u32 kiwi_rdmap_hdr_len(u8 op)
{
	const struct kiwi_rdmap_op_info *info = kiwi_rdmap_op_lookup(op);

	if (!info)
		return 0;
	return (info->tagged ? KIWI_DDP_TAGGED_HDR_LEN :
			       KIWI_DDP_UNTAGGED_HDR_LEN) + info->rdmap_hdr;
}

/**
 * kiwi_rdmap_op_name() - human-readable opcode name for logs.
 * @op: opcode.
 *
 * Return: a static string; "unassigned" for opcodes 0xc-0xf.
 */
const char *kiwi_rdmap_op_name(u8 op)
{
	if (op >= KIWI_RDMAP_OPS)
		return "unassigned";
	return kiwi_rdmap_names[op];
}

/**
 * kiwi_rdmap_seg_hdr() - DDP header of one outgoing segment of an RDMAP
 * message.
 * @h: output.
 * @op: opcode; must be supported.
 * @stag: tagged messages: the Data Sink STag; Send with (SE and)
 *	Invalidate: the STag to invalidate; ignored otherwise (sent as 0,
 *	RDMAP-06).
 * @msn: untagged messages: the message's MSN on its queue.
 * @seg: the segment from kiwi_ddp_seg_next().
 *
 * Fills T, L, DV = 1, the RDMAP control octet (RV = 1), STag/TO or
 * QN/MSN/MO following the opcode table (RDMAP-01..03).
 *
 * Return: 0, or -EOPNOTSUPP for an opcode kiwi does not implement.
 */
int kiwi_rdmap_seg_hdr(struct kiwi_ddp_hdr *h, u8 op, u32 stag, u32 msn,
		       const struct kiwi_ddp_seg *seg)
{
	const struct kiwi_rdmap_op_info *info = kiwi_rdmap_op_lookup(op);

	if (!info || !info->supported)
		return -EOPNOTSUPP;
	memset(h, 0, sizeof(*h));
	h->tagged = info->tagged;
	h->last = seg->last;
	h->dv = KIWI_DDP_VERSION;
	h->ulp_ctrl = kiwi_rdmap_ctrl(op);
	if (info->tagged) {
		h->stag = stag;
		h->to = seg->to;
		return 0;
	}
	h->ulp_word = info->inv_stag ? stag : 0;
	h->qn = info->qn;
	h->msn = msn;
	h->mo = seg->mo;
	return 0;
}

/**
 * kiwi_rdmap_imm_encode() - the 8 octets of an Immediate Data message.
 * @imm: the verbs immediate value as it sits in memory (network order).
 * @buf: 8 octets out.
 *
 * RFC 7306 section 6.2 carries 64 opaque bits; verbs have 32. kiwi puts
 * the 32-bit value in octets 0-3, in the order the consumer stored it, and
 * zeroes octets 4-7.
 */
void kiwi_rdmap_imm_encode(__be32 imm, u8 *buf)
{
	memcpy(buf, &imm, sizeof(imm));
	memset(buf + sizeof(imm), 0, KIWI_RDMAP_IMM_LEN - sizeof(imm));
}

/**
 * kiwi_rdmap_imm_decode() - the verbs immediate value of an Immediate Data
 * message.
 * @imm: out: octets 0-3 as they are (network order, as ib_wc/ibv_wc keep
 *	it).
 * @buf: the 8 octets after the DDP header.
 *
 * Return: KIWI_TERM_ERR_NONE, or KIWI_TERM_ERR_RDMAP_OP_UNSPEC if octets
 * 4-7 are not zero: a value kiwi cannot hand to a verbs consumer, which
 * must not be cut silently.
 */
enum kiwi_term_err kiwi_rdmap_imm_decode(__be32 *imm, const u8 *buf)
{
	static const u8 zero[KIWI_RDMAP_IMM_LEN - sizeof(__be32)];

	memcpy(imm, buf, sizeof(*imm));
	if (memcmp(buf + sizeof(*imm), zero, sizeof(zero)))
		return KIWI_TERM_ERR_RDMAP_OP_UNSPEC;
	return KIWI_TERM_ERR_NONE;
}

/**
 * kiwi_rdmap_term_refuses_imm() - does a received Terminate say the peer
 * does not implement Immediate Data?
 * @t: the decoded Terminate.
 *
 * RFC 7306 section 1.1: a peer without the extension answers Immediate
 * Data with Remote Operation Error / Unexpected OpCode (0/2/06). The
 * copied DDP header, if the peer sent one, must name opcode 0x8 or 0x9;
 * siw sends none for opcode errors.
 *
 * Return: true if @t is that answer.
 */
bool kiwi_rdmap_term_refuses_imm(const struct kiwi_term *t)
{
	u8 op;

	if (kiwi_term_err_lookup(t->layer, t->etype, t->ecode) !=
	    KIWI_TERM_ERR_RDMAP_OPCODE)
		return false;
	if (t->ddp_hdr_len < 2)
		return true;
	op = kiwi_rdmap_opcode(t->ddp_hdr[1]);
	return op == KIWI_RDMAP_IMM || op == KIWI_RDMAP_IMM_SE;
}
