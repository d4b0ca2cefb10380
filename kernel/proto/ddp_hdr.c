// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DDP segment header codec (RFC 5041 sections 4.1-4.3; see ddp.h).
 */
#include "ddp.h"

static u8 kiwi_ddp_ctrl(const struct kiwi_ddp_hdr *h)
{
	u8 ctrl = h->dv & KIWI_DDP_CTRL_DV;

	if (h->tagged)
		ctrl |= KIWI_DDP_CTRL_T;
	if (h->last)
		ctrl |= KIWI_DDP_CTRL_L;
	return ctrl;
}

/**
 * kiwi_ddp_hdr_decode() - decode the DDP header at the start of a segment.
 * @h: output.
 * @buf: the segment (the ULPDU).
 * @len: octets at @buf.
 *
 * Only the layout is decoded here; field values (DV included) are judged by
 * the kiwi_ddp_check_*() functions, so a peer's bad version still yields a
 * header for the Terminate. Fields not used by the header type are zero.
 *
 * Return: the header length (14 or 18), or -EBADMSG if @len is too short
 * to hold the header the T bit announces (DDP-037).
 */
int kiwi_ddp_hdr_decode(struct kiwi_ddp_hdr *h, const u8 *buf, u32 len)
{
	u32 hlen;

	memset(h, 0, sizeof(*h));
	if (len < 1)
		return -EBADMSG;
	hlen = kiwi_ddp_hdr_len(buf[0]);
	if (len < hlen)
		return -EBADMSG;

	h->tagged = buf[0] & KIWI_DDP_CTRL_T;
	h->last = buf[0] & KIWI_DDP_CTRL_L;
	h->rsvd = (buf[0] & KIWI_DDP_CTRL_RSVD) >> 2;
	h->dv = buf[0] & KIWI_DDP_CTRL_DV;
	h->ulp_ctrl = buf[1];
	if (h->tagged) {
		h->stag = get_unaligned_be32(buf + 2);
		h->to = get_unaligned_be64(buf + 6);
	} else {
		h->ulp_word = get_unaligned_be32(buf + 2);
		h->qn = get_unaligned_be32(buf + 6);
		h->msn = get_unaligned_be32(buf + 10);
		h->mo = get_unaligned_be32(buf + 14);
	}
	return hlen;
}

/**
 * kiwi_ddp_hdr_encode() - write a DDP header.
 * @h: the header; @h->rsvd is ignored (reserved bits are sent as zero,
 *	DDP-018) and @h->dv is sent as given (normally KIWI_DDP_VERSION).
 * @buf: room for KIWI_DDP_HDR_MAX octets.
 *
 * Return: octets written, 14 (tagged) or 18 (untagged).
 */
u32 kiwi_ddp_hdr_encode(const struct kiwi_ddp_hdr *h, u8 *buf)
{
	buf[0] = kiwi_ddp_ctrl(h);
	buf[1] = h->ulp_ctrl;
	if (h->tagged) {
		put_unaligned_be32(h->stag, buf + 2);
		put_unaligned_be64(h->to, buf + 6);
		return KIWI_DDP_TAGGED_HDR_LEN;
	}
	put_unaligned_be32(h->ulp_word, buf + 2);
	put_unaligned_be32(h->qn, buf + 6);
	put_unaligned_be32(h->msn, buf + 10);
	put_unaligned_be32(h->mo, buf + 14);
	return KIWI_DDP_UNTAGGED_HDR_LEN;
}
