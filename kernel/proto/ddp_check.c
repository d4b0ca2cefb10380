// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DDP receive validation (RFC 5041 section 7.1) with the error numbers of
 * section 7.2 (see ddp.h). Every check runs before a single payload octet
 * is placed; the caller turns a non-zero result into a Terminate with
 * kiwi_term_from_err() and drops everything the stream receives afterwards.
 */
#include "ddp.h"

/**
 * kiwi_ddp_check_version() - DV check (DDP-019/020, SEC-10).
 * @h: decoded header.
 *
 * Return: KIWI_TERM_ERR_NONE if DV is 1, else the tagged or untagged
 * "invalid DDP version" error.
 */
enum kiwi_term_err kiwi_ddp_check_version(const struct kiwi_ddp_hdr *h)
{
	if (h->dv == KIWI_DDP_VERSION)
		return KIWI_TERM_ERR_NONE;
	return h->tagged ? KIWI_TERM_ERR_DDP_T_VERSION :
			   KIWI_TERM_ERR_DDP_U_VERSION;
}

/**
 * kiwi_ddp_to_range() - does [@to, @to + @len) lie inside a tagged buffer?
 * @base: TO of the buffer's first octet.
 * @size: octets in the buffer.
 * @to: TO of the access.
 * @len: octets accessed.
 *
 * Bounds are exact to the octet (SEC-04). The wrap test comes first, so an
 * access whose 64-bit end wraps around is reported as a wrap even when the
 * wrapped sum would land inside the buffer (SEC-05).
 *
 * Return: 0 if inside, -EOVERFLOW if the last octet's TO exceeds 2^64 - 1,
 * -ERANGE if the access leaves the buffer.
 */
int kiwi_ddp_to_range(u64 base, u64 size, u64 to, u32 len)
{
	if (len && to > ~(u64)0 - (len - 1))
		return -EOVERFLOW;
	if (to < base || to - base > size)
		return -ERANGE;
	if (len > size - (to - base))
		return -ERANGE;
	return 0;
}

/**
 * kiwi_ddp_check_tagged() - validate a tagged segment before placement.
 * @h: decoded header (T = 1).
 * @len: payload octets of the segment.
 * @need: KIWI_DDP_ACC_* rights the placement needs (remote write for an
 *	RDMA Write, local write for a Read Response sink).
 * @s: the receiving stream.
 * @st: the caller's lookup of @h->stag, or NULL if no such STag exists.
 *
 * Order: version; then, for @len > 0 only (DDP-046: STag and TO of a
 * zero-length tagged segment are not checked): the stream allows the
 * remote rights in @need, STag valid, STag on this PD and stream, STag
 * access rights, TO wrap, bounds. DDP has no access code, so a missing
 * right (of the stream or of the STag) is reported as RDMAP "access
 * rights violation" (RFC 5040 section 8.1.1).
 *
 * Return: KIWI_TERM_ERR_NONE, or the error to report.
 */
enum kiwi_term_err
kiwi_ddp_check_tagged(const struct kiwi_ddp_hdr *h, u32 len, u32 need,
		      const struct kiwi_ddp_stream *s,
		      const struct kiwi_ddp_stag_info *st)
{
	enum kiwi_term_err err = kiwi_ddp_check_version(h);
	int rc;

	if (err || !len)
		return err;
	if (!h->tagged)
		return KIWI_TERM_ERR_DDP_CATASTROPHIC;
	if (need & ~KIWI_DDP_ACC_LOCAL_WRITE & ~s->access)
		return KIWI_TERM_ERR_RDMAP_ACCESS;
	if (!st || !st->valid)
		return KIWI_TERM_ERR_DDP_T_INVALID_STAG;
	if (!kiwi_ddp_stag_on_stream(s, st))
		return KIWI_TERM_ERR_DDP_T_STAG_STREAM;
	if ((st->access & need) != need)
		return KIWI_TERM_ERR_RDMAP_ACCESS;
	rc = kiwi_ddp_to_range(st->base, st->len, h->to, len);
	if (rc == -EOVERFLOW)
		return KIWI_TERM_ERR_DDP_T_TO_WRAP;
	if (rc)
		return KIWI_TERM_ERR_DDP_T_BOUNDS;
	return KIWI_TERM_ERR_NONE;
}

/**
 * kiwi_ddp_check_untagged() - validate an untagged segment before placement.
 * @h: decoded header (T = 0).
 * @len: payload octets of the segment.
 * @q: the caller's view of queue @h->qn, or NULL if the stream has no
 *	such queue.
 *
 * Order: version, QN, MSN window, buffer present, MO where the message's
 * placed octets end (@q->mo_next; a gap, an overlap or a message that
 * starts with MO > 0 is "invalid MO", as siw reports it) and inside the
 * buffer, MO + @len inside the buffer. A zero-length segment is checked as
 * well: a zero-length untagged message still consumes a buffer.
 *
 * Return: KIWI_TERM_ERR_NONE, or the error to report.
 */
enum kiwi_term_err
kiwi_ddp_check_untagged(const struct kiwi_ddp_hdr *h, u32 len,
			const struct kiwi_ddp_queue_view *q)
{
	enum kiwi_term_err err = kiwi_ddp_check_version(h);

	if (err)
		return err;
	if (h->tagged)
		return KIWI_TERM_ERR_DDP_CATASTROPHIC;
	if (!q)
		return KIWI_TERM_ERR_DDP_U_INVALID_QN;
	if ((u32)(h->msn - q->msn_lo) >= q->msn_win)
		return KIWI_TERM_ERR_DDP_U_MSN_RANGE;
	if (!q->has_buf)
		return KIWI_TERM_ERR_DDP_U_MSN_NOBUF;
	if (h->mo != q->mo_next || h->mo > q->buf_len)
		return KIWI_TERM_ERR_DDP_U_MO;
	if ((u64)h->mo + len > q->buf_len)
		return KIWI_TERM_ERR_DDP_U_TOO_LONG;
	return KIWI_TERM_ERR_NONE;
}
