// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RDMAP receive validation (RFC 5040 section 7.2; see rdmap.h).
 */
#include "rdmap.h"

/* Largest Terminate body kiwi accepts: control, length, DDP + RDMA header. */
#define KIWI_RDMAP_TERM_MAX	KIWI_TERM_BODY_MAX

/*
 * Read Request and Terminate are short messages with their own header; kiwi
 * accepts each only as one complete segment (MO 0, L = 1). Every legal
 * MULPDU (>= 128) holds either in one segment, so only a hostile or broken
 * peer splits them.
 */
static enum kiwi_term_err kiwi_rdmap_check_short(const struct kiwi_ddp_hdr *h,
						 u32 len, u32 min_len,
						 u32 max_len)
{
	if ((u64)h->mo + len > max_len)
		return KIWI_TERM_ERR_DDP_U_TOO_LONG;
	if (h->mo || !h->last || len < min_len)
		return KIWI_TERM_ERR_RDMAP_OP_UNSPEC;
	return KIWI_TERM_ERR_NONE;
}

static enum kiwi_term_err kiwi_rdmap_check_op(const struct kiwi_ddp_hdr *h,
					      u8 op, u32 len)
{
	const struct kiwi_rdmap_op_info *info = kiwi_rdmap_op_lookup(op);

	if (!info || !info->supported || info->tagged != h->tagged)
		return KIWI_TERM_ERR_RDMAP_OPCODE;
	if (!h->tagged && h->qn != info->qn)
		return KIWI_TERM_ERR_DDP_U_INVALID_QN;
	if (op == KIWI_RDMAP_READ_REQ)
		return kiwi_rdmap_check_short(h, len, KIWI_RDMAP_RREQ_LEN,
					      KIWI_RDMAP_RREQ_LEN);
	if (op == KIWI_RDMAP_TERMINATE)
		return kiwi_rdmap_check_short(h, len, KIWI_RDMAP_TERM_MIN,
					      KIWI_RDMAP_TERM_MAX);
	if (op == KIWI_RDMAP_IMM || op == KIWI_RDMAP_IMM_SE)
		return kiwi_rdmap_check_short(h, len, KIWI_RDMAP_IMM_LEN,
					      KIWI_RDMAP_IMM_LEN);
	if (op == KIWI_RDMAP_ATOMIC_REQ)
		return kiwi_rdmap_check_short(h, len, KIWI_RDMAP_AREQ_LEN,
					      KIWI_RDMAP_AREQ_LEN);
	if (op == KIWI_RDMAP_ATOMIC_RESP)
		return kiwi_rdmap_check_short(h, len, KIWI_RDMAP_ARESP_LEN,
					      KIWI_RDMAP_ARESP_LEN);
	return KIWI_TERM_ERR_NONE;
}

/**
 * kiwi_rdmap_check_hdr() - header checks of every incoming segment.
 * @h: decoded DDP header.
 * @len: payload octets after the DDP header.
 *
 * Runs, in order: DDP version; RDMAP version (RDMAP-04); opcode assigned
 * and supported (unassigned and reserved opcodes get "unexpected opcode",
 * RDMAP-24); T bit matches the opcode; untagged QN matches the opcode (a
 * Send or Immediate Data on QN 1 is "invalid QN", as siw reports it); Read
 * Request exactly 28 octets, Terminate 4..52 octets, Immediate Data
 * exactly 8 octets (EXT-10), Atomic Request exactly 52 and Atomic Response
 * exactly 12 octets, in one segment (RDMAP-07): longer is "DDP message too
 * long", shorter or split is RDMAP "unspecified". Reserved RDMAP bits and
 * the Invalidate STag of the other opcodes are ignored (RDMAP-05/06).
 * Buffer, STag and MSN checks follow with kiwi_ddp_check_tagged()/
 * kiwi_ddp_check_untagged().
 *
 * Return: KIWI_TERM_ERR_NONE, or the error to report.
 */
enum kiwi_term_err kiwi_rdmap_check_hdr(const struct kiwi_ddp_hdr *h, u32 len)
{
	enum kiwi_term_err err = kiwi_ddp_check_version(h);

	if (err)
		return err;
	if (kiwi_rdmap_rv(h->ulp_ctrl) != KIWI_RDMAP_VERSION)
		return KIWI_TERM_ERR_RDMAP_VERSION;
	return kiwi_rdmap_check_op(h, kiwi_rdmap_opcode(h->ulp_ctrl), len);
}

/**
 * kiwi_rdmap_check_rreq() - Data Source checks of an incoming Read Request.
 * @r: decoded Read Request header.
 * @s: the receiving stream.
 * @st: the caller's lookup of @r->src_stag, or NULL if no such STag.
 *
 * A zero-size Read is not checked at all (RDMAP-15). Otherwise, in order:
 * the stream allows remote reads (the QP's access flags), STag valid, STag
 * on this PD and stream, the STag's remote read right, TO wrap, bounds
 * (RFC 5040 section 7.2 a-e plus the access rules of section 8.1.1).
 * Last, the Data Sink range the Read Response will carry must not wrap
 * either: such a Response could not be segmented (kiwi_ddp_seg_init()
 * refuses it), so it is reported as TO wrap up front.
 *
 * Return: KIWI_TERM_ERR_NONE, or the RDMAP remote protection error.
 */
enum kiwi_term_err
kiwi_rdmap_check_rreq(const struct kiwi_rdmap_rreq *r,
		      const struct kiwi_ddp_stream *s,
		      const struct kiwi_ddp_stag_info *st)
{
	int rc;

	if (!r->size)
		return KIWI_TERM_ERR_NONE;
	if (!(s->access & KIWI_DDP_ACC_REMOTE_READ))
		return KIWI_TERM_ERR_RDMAP_ACCESS;
	if (!st || !st->valid)
		return KIWI_TERM_ERR_RDMAP_INVALID_STAG;
	if (!kiwi_ddp_stag_on_stream(s, st))
		return KIWI_TERM_ERR_RDMAP_STAG_STREAM;
	if (!(st->access & KIWI_DDP_ACC_REMOTE_READ))
		return KIWI_TERM_ERR_RDMAP_ACCESS;
	rc = kiwi_ddp_to_range(st->base, st->len, r->src_to, r->size);
	if (rc == -EOVERFLOW)
		return KIWI_TERM_ERR_RDMAP_TO_WRAP;
	if (rc)
		return KIWI_TERM_ERR_RDMAP_BOUNDS;
	if (r->sink_to > ~(u64)0 - (r->size - 1))
		return KIWI_TERM_ERR_RDMAP_TO_WRAP;
	return KIWI_TERM_ERR_NONE;
}

/**
 * kiwi_rdmap_check_rresp() - does a Read Response segment answer the Read?
 * @h: decoded header of a Read Response segment (T = 1).
 * @len: its payload octets.
 * @v: the oldest outstanding Read and the octets of its Response already
 *	placed, or NULL if no Read is outstanding.
 *
 * A Read Response with no Read outstanding is an "unexpected opcode". On an
 * in-order LLP the Response of a Read is one tagged message whose segments
 * arrive in order: a segment with payload must name the Read's Data Sink
 * STag ("invalid STag" otherwise) and start where the placed octets end,
 * TO = sink TO + placed, without running past the Read's size. The L = 1
 * segment must complete the Read exactly: placed + @len == size, so a
 * zero-length or short last segment cannot complete a Read whose sink was
 * not filled. Those range errors have no code of their own and are
 * reported as tagged "base or bounds violation", as siw does. The STag and
 * TO of a zero-length segment are not checked (DDP-046). Memory checks of
 * the sink follow with kiwi_ddp_check_tagged().
 *
 * Return: KIWI_TERM_ERR_NONE, or the error to report.
 */
enum kiwi_term_err
kiwi_rdmap_check_rresp(const struct kiwi_ddp_hdr *h, u32 len,
		       const struct kiwi_rdmap_rresp_view *v)
{
	if (!v)
		return KIWI_TERM_ERR_RDMAP_OPCODE;
	if (len && h->stag != v->sink_stag)
		return KIWI_TERM_ERR_DDP_T_INVALID_STAG;
	if (len && h->to != v->sink_to + v->placed)
		return KIWI_TERM_ERR_DDP_T_BOUNDS;
	if ((u64)v->placed + len > v->size)
		return KIWI_TERM_ERR_DDP_T_BOUNDS;
	if (h->last && v->placed + len != v->size)
		return KIWI_TERM_ERR_DDP_T_BOUNDS;
	return KIWI_TERM_ERR_NONE;
}

/**
 * kiwi_rdmap_check_inval() - may the peer invalidate this STag?
 * @s: the receiving stream.
 * @st: the caller's lookup of the Invalidate STag of a Send with
 *	(SE and) Invalidate, or NULL if no such STag.
 *
 * The STag must be valid, belong to this PD and stream, and be marked
 * remotely invalidatable by the owner (RFC 5040 sections 5.3 and 8.1.1-7).
 *
 * Return: KIWI_TERM_ERR_NONE, or "STag cannot be invalidated" (RDMAP-18).
 */
enum kiwi_term_err
kiwi_rdmap_check_inval(const struct kiwi_ddp_stream *s,
		       const struct kiwi_ddp_stag_info *st)
{
	if (!st || !st->valid || !kiwi_ddp_stag_on_stream(s, st) ||
	    !(st->access & KIWI_DDP_ACC_REMOTE_INV))
		return KIWI_TERM_ERR_RDMAP_CANNOT_INVALIDATE;
	return KIWI_TERM_ERR_NONE;
}
