// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RFC 7306 atomic operations on the wire (section 5; see rdmap.h).
 *
 * Atomic Request header, after the untagged DDP header (QN 1):
 *   0 Reserved (28) | AOpCode (4) | 4 Request Identifier (32) |
 *   8 Remote STag (32) | 12 Remote TO (64) | 20 Add or Swap Data (64) |
 *   28 Add or Swap Mask (64) | 36 Compare Data (64) | 44 Compare Mask (64) |
 *   52 end
 * Atomic Response header, after the untagged DDP header (QN 3):
 *   0 Original Request Identifier (32) | 4 Original Remote Data Value (64) |
 *   12 end
 */
#include "rdmap.h"

/**
 * kiwi_rdmap_areq_encode() - write an Atomic Request header.
 * @r: the request; the reserved bits go out as zero.
 * @buf: KIWI_RDMAP_AREQ_LEN octets of output.
 */
void kiwi_rdmap_areq_encode(const struct kiwi_rdmap_areq *r, u8 *buf)
{
	put_unaligned_be32(r->aop & KIWI_RDMAP_AOP_MASK, buf);
	put_unaligned_be32(r->req_id, buf + 4);
	put_unaligned_be32(r->stag, buf + 8);
	put_unaligned_be64(r->to, buf + 12);
	put_unaligned_be64(r->data, buf + 20);
	put_unaligned_be64(r->data_mask, buf + 28);
	put_unaligned_be64(r->cmp, buf + 36);
	put_unaligned_be64(r->cmp_mask, buf + 44);
}

/**
 * kiwi_rdmap_areq_decode() - read an Atomic Request header.
 * @r: output.
 * @buf: the KIWI_RDMAP_AREQ_LEN octets after the DDP header (the caller's
 *	kiwi_rdmap_check_hdr() made sure they are all there).
 *
 * The 28 reserved bits are ignored (RFC 7306 section 5.2.1).
 */
void kiwi_rdmap_areq_decode(struct kiwi_rdmap_areq *r, const u8 *buf)
{
	r->aop = buf[3] & KIWI_RDMAP_AOP_MASK;
	r->req_id = get_unaligned_be32(buf + 4);
	r->stag = get_unaligned_be32(buf + 8);
	r->to = get_unaligned_be64(buf + 12);
	r->data = get_unaligned_be64(buf + 20);
	r->data_mask = get_unaligned_be64(buf + 28);
	r->cmp = get_unaligned_be64(buf + 36);
	r->cmp_mask = get_unaligned_be64(buf + 44);
}

/**
 * kiwi_rdmap_aresp_encode() - write an Atomic Response header.
 * @r: the response.
 * @buf: KIWI_RDMAP_ARESP_LEN octets of output.
 */
void kiwi_rdmap_aresp_encode(const struct kiwi_rdmap_aresp *r, u8 *buf)
{
	put_unaligned_be32(r->req_id, buf);
	put_unaligned_be64(r->orig, buf + 4);
}

/**
 * kiwi_rdmap_aresp_decode() - read an Atomic Response header.
 * @r: output.
 * @buf: the KIWI_RDMAP_ARESP_LEN octets after the DDP header.
 */
void kiwi_rdmap_aresp_decode(struct kiwi_rdmap_aresp *r, const u8 *buf)
{
	r->req_id = get_unaligned_be32(buf);
	r->orig = get_unaligned_be64(buf + 4);
}

/* Bits @lo..@hi of a 64-bit word (@lo <= @hi <= 63). */
static u64 kiwi_rdmap_bits(u32 lo, u32 hi)
{
	u64 upto = hi == 63 ? ~(u64)0 : ((u64)1 << (hi + 1)) - 1;

	return upto & ~(((u64)1 << lo) - 1);
}

/*
 * FetchAdd with an Add Mask (RFC 7306 section 5.1.1): a set bit marks the
 * most significant bit of a field, and the carry out of it is dropped.
 * Each field is added on its own; mask 0 is one 64-bit add.
 */
static u64 kiwi_rdmap_masked_add(u64 orig, u64 add, u64 mask)
{
	u64 sum = 0, field;
	u32 lo = 0, bit;

	for (bit = 0; bit < 64; bit++) {
		if (bit != 63 && !(mask & (u64)1 << bit))
			continue;
		field = kiwi_rdmap_bits(lo, bit);
		sum |= ((orig & field) + (add & field)) & field;
		lo = bit + 1;
	}
	return sum;
}

/**
 * kiwi_rdmap_atomic_apply() - the value an atomic stores.
 * @r: a checked request (AOpCode FetchAdd or CmpSwap).
 * @orig: the target's value before the operation, in host order.
 * @val: out: the value to store.
 *
 * Pure arithmetic of RFC 7306 sections 5.1.1 and 5.1.2; the caller runs
 * it inside a compare-and-exchange loop on the target so that the whole
 * read-modify-write is atomic.
 *
 * Return: true if @val must be stored, false if memory stays unchanged
 * (a CmpSwap whose compare failed).
 */
bool kiwi_rdmap_atomic_apply(const struct kiwi_rdmap_areq *r, u64 orig,
			     u64 *val)
{
	if (r->aop == KIWI_RDMAP_AOP_FETCH_ADD) {
		*val = kiwi_rdmap_masked_add(orig, r->data, r->data_mask);
		return true;
	}
	if ((orig ^ r->cmp) & r->cmp_mask)
		return false;
	*val = (orig & ~r->data_mask) | (r->data & r->data_mask);
	return true;
}

/**
 * kiwi_rdmap_check_areq() - responder checks of an incoming Atomic Request.
 * @r: decoded request.
 * @s: the receiving stream.
 * @st: the caller's lookup of @r->stag, or NULL if no such STag.
 *
 * In order: the AOpCode is FetchAdd or CmpSwap ("unexpected opcode",
 * 0/2/06: RFC 7306 names no code for an unsupported AOpCode); the Remote
 * TO is 64-bit aligned (0/2/07, RFC 7306 sections 5.1 and 8.2: memory is
 * not touched); then the RFC 5040 remote protection checks a Read Request
 * gets: the stream allows remote atomics, STag valid, on this PD and
 * stream, with the remote atomic right, the 8 octets in bounds and not
 * wrapping.
 *
 * Return: KIWI_TERM_ERR_NONE, or the error to report.
 */
enum kiwi_term_err
kiwi_rdmap_check_areq(const struct kiwi_rdmap_areq *r,
		      const struct kiwi_ddp_stream *s,
		      const struct kiwi_ddp_stag_info *st)
{
	int rc;

	if (r->aop != KIWI_RDMAP_AOP_FETCH_ADD &&
	    r->aop != KIWI_RDMAP_AOP_CMP_SWAP)
		return KIWI_TERM_ERR_RDMAP_OPCODE;
	if (r->to & (KIWI_RDMAP_ATOMIC_LEN - 1))
		return KIWI_TERM_ERR_RDMAP_CATA_STREAM;
	if (!(s->access & KIWI_DDP_ACC_REMOTE_ATOMIC))
		return KIWI_TERM_ERR_RDMAP_ACCESS;
	if (!st || !st->valid)
		return KIWI_TERM_ERR_RDMAP_INVALID_STAG;
	if (!kiwi_ddp_stag_on_stream(s, st))
		return KIWI_TERM_ERR_RDMAP_STAG_STREAM;
	if (!(st->access & KIWI_DDP_ACC_REMOTE_ATOMIC))
		return KIWI_TERM_ERR_RDMAP_ACCESS;
	rc = kiwi_ddp_to_range(st->base, st->len, r->to, KIWI_RDMAP_ATOMIC_LEN);
	if (rc == -EOVERFLOW)
		return KIWI_TERM_ERR_RDMAP_TO_WRAP;
	if (rc)
		return KIWI_TERM_ERR_RDMAP_BOUNDS;
	return KIWI_TERM_ERR_NONE;
}

/**
 * kiwi_rdmap_term_names_op() - does a received Terminate concern opcode
 * @op, or (with no copied DDP header) refuse some opcode?
 * @t: the decoded Terminate.
 * @op: the RDMAP opcode of the message in question.
 *
 * A Terminate with a copied DDP header names the failed message's opcode.
 * One without it concerns @op only if it is "unexpected opcode" (0/2/06):
 * the answer of a peer without RFC 7306 (siw sends no copied header for
 * opcode errors).
 *
 * Return: true if @t answers a message of opcode @op.
 */
bool kiwi_rdmap_term_names_op(const struct kiwi_term *t, u8 op)
{
	if (t->ddp_hdr_len >= 2)
		return kiwi_rdmap_opcode(t->ddp_hdr[1]) == op;
	return kiwi_term_err_lookup(t->layer, t->etype, t->ecode) ==
	       KIWI_TERM_ERR_RDMAP_OPCODE;
}

/**
 * kiwi_rdmap_term_request_msn() - the Read or Atomic Request a received
 * Terminate names by its MSN.
 * @t: the decoded Terminate.
 * @msn: output: the Request's MSN on QN 1.
 *
 * A Terminate for a refused Request copies the whole untagged DDP header
 * of the failed segment (RFC 5040 section 4.8), whose QN and MSN name it
 * among the Requests outstanding.
 *
 * Return: true if @t carries the whole untagged header of a QN 1 message.
 */
bool kiwi_rdmap_term_request_msn(const struct kiwi_term *t, u32 *msn)
{
	struct kiwi_ddp_hdr h;

	if (t->ddp_hdr_len != KIWI_DDP_UNTAGGED_HDR_LEN ||
	    kiwi_ddp_hdr_decode(&h, t->ddp_hdr, t->ddp_hdr_len) < 0 ||
	    h.tagged || h.qn != KIWI_RDMAP_QN_READ_REQ)
		return false;
	*msn = h.msn;
	return true;
}
