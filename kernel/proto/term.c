// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Terminate message codec (RFC 5040 sections 4.8 and 5.4; see term.h).
 */
#include "term.h"
#include "ddp.h"
#include "rdmap.h"

/* siw on little-endian hosts: M/D/R land here (research/anchors.md 10). */
#define KIWI_TERM_SIW_M		0x01
#define KIWI_TERM_SIW_D		0x02
#define KIWI_TERM_SIW_R		0x04
#define KIWI_TERM_SIW_MASK	0x07

/**
 * kiwi_term_body_len() - octets kiwi_term_encode() writes for @t.
 * @t: the Terminate body.
 *
 * Return: 4, plus 2 + the DDP header if one is carried, plus 28 if the
 * RDMA header is carried.
 */
u32 kiwi_term_body_len(const struct kiwi_term *t)
{
	u32 len = KIWI_TERM_CTRL_LEN + t->rdma_hdr_len;

	if (t->ddp_hdr_len)
		len += KIWI_TERM_SEGLEN_LEN + t->ddp_hdr_len;
	return len;
}

static bool kiwi_term_valid(const struct kiwi_term *t)
{
	if (t->layer > 0xf || t->etype > 0xf)
		return false;
	if (t->ddp_hdr_len &&
	    (!(t->hdrct & KIWI_TERM_HDRCT_D) ||
	     t->ddp_hdr_len != kiwi_ddp_hdr_len(t->ddp_hdr[0])))
		return false;
	if (t->rdma_hdr_len &&
	    (!(t->hdrct & KIWI_TERM_HDRCT_R) ||
	     t->rdma_hdr_len != KIWI_TERM_RDMA_HDR_LEN))
		return false;
	return true;
}

/**
 * kiwi_term_encode() - write a Terminate body (the DDP payload of QN 2).
 * @t: the body; a copied header may be carried only with its D or R flag,
 *	and a DDP header only with the length its own T bit implies.
 * @buf: output.
 * @cap: octets available at @buf.
 *
 * The 13 reserved bits are sent as zero (RDMAP-09). A flag without its
 * header is written as given (the short form of section 7.1 rule 1 uses
 * no flags; kiwi_term_from_err() never produces such a body).
 *
 * Return: octets written, -EINVAL for an inconsistent @t, -ENOSPC if @cap
 * is too small.
 */
int kiwi_term_encode(const struct kiwi_term *t, u8 *buf, u32 cap)
{
	u32 len = kiwi_term_body_len(t);
	u32 pos = KIWI_TERM_CTRL_LEN;

	if (!kiwi_term_valid(t))
		return -EINVAL;
	if (cap < len)
		return -ENOSPC;
	buf[0] = (u8)(t->layer << 4 | t->etype);
	buf[1] = t->ecode;
	buf[2] = t->hdrct & KIWI_TERM_HDRCT_MASK;
	buf[3] = 0;
	if (t->ddp_hdr_len) {
		put_unaligned_be16(t->seg_len, buf + pos);
		memcpy(buf + pos + KIWI_TERM_SEGLEN_LEN, t->ddp_hdr,
		       t->ddp_hdr_len);
		pos += KIWI_TERM_SEGLEN_LEN + t->ddp_hdr_len;
	}
	if (t->rdma_hdr_len)
		memcpy(buf + pos, t->rdma_hdr, t->rdma_hdr_len);
	return len;
}

static u8 kiwi_term_siw_hdrct(u8 b)
{
	u8 hdrct = 0;

	if (b & KIWI_TERM_SIW_M)
		hdrct |= KIWI_TERM_HDRCT_M;
	if (b & KIWI_TERM_SIW_D)
		hdrct |= KIWI_TERM_HDRCT_D;
	if (b & KIWI_TERM_SIW_R)
		hdrct |= KIWI_TERM_HDRCT_R;
	return hdrct;
}

/* The DDP Segment Length and DDP header, if flagged and complete. */
static u32 kiwi_term_take_ddp(struct kiwi_term *t, const u8 *p, u32 left)
{
	u32 hlen;

	if (!(t->hdrct & KIWI_TERM_HDRCT_D) ||
	    left < KIWI_TERM_SEGLEN_LEN + 1)
		return 0;
	hlen = kiwi_ddp_hdr_len(p[KIWI_TERM_SEGLEN_LEN]);
	if (left < KIWI_TERM_SEGLEN_LEN + hlen)
		return 0;
	t->seg_len = get_unaligned_be16(p);
	t->ddp_hdr_len = hlen;
	memcpy(t->ddp_hdr, p + KIWI_TERM_SEGLEN_LEN, hlen);
	return KIWI_TERM_SEGLEN_LEN + hlen;
}

/**
 * kiwi_term_decode() - read a received Terminate body.
 * @t: output; always in RFC 5040 representation.
 * @body: the DDP payload of the Terminate message.
 * @len: octets at @body.
 * @flags: KIWI_TERM_DEC_SIW_SWAPPED to read siw's little-endian bitfield
 *	layout (Layer and EType nibbles swapped, M/D/R at 0x01/0x02/0x04);
 *	see kiwi_term_siw_swapped().
 *
 * A copied header is taken only if its flag is set and @len holds all of
 * it; otherwise it is reported absent (length 0) while @t->hdrct keeps the
 * flags as received. Reserved bits and trailing octets are ignored.
 *
 * Return: octets of @body consumed (>= 4), or -EBADMSG if @len < 4.
 */
int kiwi_term_decode(struct kiwi_term *t, const u8 *body, u32 len,
		     unsigned int flags)
{
	u32 pos = KIWI_TERM_CTRL_LEN;

	memset(t, 0, sizeof(*t));
	if (len < KIWI_TERM_CTRL_LEN)
		return -EBADMSG;
	if (flags & KIWI_TERM_DEC_SIW_SWAPPED) {
		t->layer = body[0] & 0xf;
		t->etype = body[0] >> 4;
		t->hdrct = kiwi_term_siw_hdrct(body[2]);
	} else {
		t->layer = body[0] >> 4;
		t->etype = body[0] & 0xf;
		t->hdrct = body[2] & KIWI_TERM_HDRCT_MASK;
	}
	t->ecode = body[1];
	pos += kiwi_term_take_ddp(t, body + pos, len - pos);
	if ((t->hdrct & KIWI_TERM_HDRCT_R) &&
	    len - pos >= KIWI_TERM_RDMA_HDR_LEN) {
		t->rdma_hdr_len = KIWI_TERM_RDMA_HDR_LEN;
		memcpy(t->rdma_hdr, body + pos, KIWI_TERM_RDMA_HDR_LEN);
		pos += KIWI_TERM_RDMA_HDR_LEN;
	}
	return pos;
}

/*
 * RFC 6581's MPA errors "insufficient IRD" and "no matching RTR" answer
 * the MPA negotiation: the Terminate is the first FPDU its sender sends.
 */
static bool kiwi_term_startup_only(int err)
{
	return err == KIWI_TERM_ERR_LLP_IRD || err == KIWI_TERM_ERR_LLP_NO_RTR;
}

/**
 * kiwi_term_siw_swapped() - does a Terminate body look like siw's layout?
 * @body: the DDP payload of the Terminate message.
 * @len: octets at @body.
 * @startup_over: the peer can no longer send RFC 6581's startup errors:
 *	it sent a valid FPDU before this Terminate, or it is the MPA
 *	responder (only an initiator sends them, in place of its first FPDU).
 *
 * A heuristic, documented so that callers know its limits: the body is
 * taken as siw-swapped if its header-control octet has no RFC flag
 * (0xe0) but one of siw's (0x07), or if it has no flag at all, its
 * (Layer, EType, ECode) is defined with the two nibbles swapped, and in
 * RFC order it is either undefined (e.g. 0x02/0x02: siw's MPA CRC error)
 * or, @startup_over, one of the MPA errors only the first FPDU can carry
 * (0x20/0x06: RFC "insufficient IRD", siw's RDMAP "unexpected opcode";
 * 0x20/0x07 likewise). Symmetric codes such as 0x00 or 0x11 read the same
 * either way, so nothing is lost by guessing "not swapped" for them.
 *
 * Return: true if @body should be decoded with KIWI_TERM_DEC_SIW_SWAPPED.
 */
bool kiwi_term_siw_swapped(const u8 *body, u32 len, bool startup_over)
{
	int rfc;
	u8 hdrct;

	if (len < KIWI_TERM_CTRL_LEN)
		return false;
	hdrct = body[2];
	if (hdrct & KIWI_TERM_HDRCT_MASK)
		return false;
	if (hdrct & KIWI_TERM_SIW_MASK)
		return true;
	if (kiwi_term_err_lookup(body[0] & 0xf, body[0] >> 4, body[1]) < 0)
		return false;
	rfc = kiwi_term_err_lookup(body[0] >> 4, body[0] & 0xf, body[1]);
	return rfc < 0 || (startup_over && kiwi_term_startup_only(rfc));
}

/**
 * kiwi_term_build_msg() - a complete Terminate ULPDU.
 * @t: the body.
 * @msn: MSN of the message on QN 2 (the first Terminate uses 1).
 * @buf: output, KIWI_TERM_MSG_MAX octets always suffice.
 * @cap: octets available at @buf.
 *
 * Writes the untagged DDP header (L = 1, DV = 1, RDMAP control 0x47,
 * Invalidate STag 0, QN 2, MO 0; RDMAP-19) followed by the body.
 *
 * Return: ULPDU length, or the error of kiwi_term_encode().
 */
int kiwi_term_build_msg(const struct kiwi_term *t, u32 msn, u8 *buf, u32 cap)
{
	struct kiwi_ddp_hdr h = {
		.last = true,
		.dv = KIWI_DDP_VERSION,
		.ulp_ctrl = kiwi_rdmap_ctrl(KIWI_RDMAP_TERMINATE),
		.qn = KIWI_RDMAP_QN_TERMINATE,
		.msn = msn,
	};
	int rc;

	if (cap < KIWI_DDP_UNTAGGED_HDR_LEN)
		return -ENOSPC;
	rc = kiwi_term_encode(t, buf + KIWI_DDP_UNTAGGED_HDR_LEN,
			      cap - KIWI_DDP_UNTAGGED_HDR_LEN);
	if (rc < 0)
		return rc;
	kiwi_ddp_hdr_encode(&h, buf);
	return KIWI_DDP_UNTAGGED_HDR_LEN + rc;
}
