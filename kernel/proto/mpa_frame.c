// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MPA Request/Reply frame codec (RFC 5044 section 7.1.1, RFC 6581 section 6
 * and 9). See mpa_hs.h for the layout.
 */
#include "mpa_hs.h"

static const u8 mpa_key_req[KIWI_MPA_KEY_LEN] = {
	'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R',
	'e', 'q', ' ', 'F', 'r', 'a', 'm', 'e',
};

static const u8 mpa_key_rep[KIWI_MPA_KEY_LEN] = {
	'M', 'P', 'A', ' ', 'I', 'D', ' ', 'R',
	'e', 'p', ' ', 'F', 'r', 'a', 'm', 'e',
};

static enum kiwi_mpa_status frame_key(const u8 *buf, bool want_reply,
				      bool *reply)
{
	if (!memcmp(buf, mpa_key_req, KIWI_MPA_KEY_LEN))
		*reply = false;
	else if (!memcmp(buf, mpa_key_rep, KIWI_MPA_KEY_LEN))
		*reply = true;
	else
		return KIWI_MPA_ST_BAD_KEY;
	if (*reply == want_reply)
		return KIWI_MPA_ST_OK;
	return want_reply ? KIWI_MPA_ST_INIT_INIT : KIWI_MPA_ST_RESP_RESP;
}

static void frame_parse_enh(const u8 *p, struct kiwi_mpa_frame *f)
{
	u16 ird = get_unaligned_be16(p);
	u16 ord = get_unaligned_be16(p + 2);

	f->p2p = !!(ird & KIWI_MPA_ENH_P2P);
	f->rtr = 0;
	/* B/C/D mean nothing without A (ECE-11): ignore them then. */
	if (f->p2p) {
		if (ird & KIWI_MPA_ENH_RTR_SEND)
			f->rtr |= KIWI_MPA_RTR_SEND;
		if (ord & KIWI_MPA_ENH_RTR_WRITE)
			f->rtr |= KIWI_MPA_RTR_WRITE;
		if (ord & KIWI_MPA_ENH_RTR_READ)
			f->rtr |= KIWI_MPA_RTR_READ;
	}
	f->ird = ird & KIWI_MPA_IRD_ORD_MASK;
	f->ord = ord & KIWI_MPA_IRD_ORD_MASK;
}

/**
 * kiwi_mpa_frame_parse() - validate and decode a received startup frame.
 * @buf: received octets from the start of the frame.
 * @len: octets available at @buf (any number, also more than the frame).
 * @want_reply: true at the initiator (expects a Reply), false at the
 *	responder.
 * @f: output, valid when KIWI_MPA_ST_OK is returned; @f->pdata points into
 *	@buf.
 * @frame_len: output: with KIWI_MPA_ST_OK the frame's length; with
 *	KIWI_MPA_ST_NEED_MORE the total octets needed to go on (20 until the
 *	fixed part is in, then 20 + PD_Length).
 *
 * Checks the key, PD_Length <= 512 (MPA-058/074) and the enhanced field's
 * presence. The revision is reported, not judged: that is the negotiation's
 * job. R, Res and the rest are not checked (MPA-055/056). Never reads past
 * @len.
 *
 * Return: enum kiwi_mpa_status.
 */
enum kiwi_mpa_status kiwi_mpa_frame_parse(const u8 *buf, size_t len,
					  bool want_reply,
					  struct kiwi_mpa_frame *f,
					  size_t *frame_len)
{
	enum kiwi_mpa_status st;
	u16 pd_len;
	u8 flags;

	*frame_len = KIWI_MPA_FRAME_HDR_LEN;
	memset(f, 0, sizeof(*f));
	/* A wrong key is reported as soon as its octets are in. */
	if (len < KIWI_MPA_KEY_LEN)
		return KIWI_MPA_ST_NEED_MORE;
	st = frame_key(buf, want_reply, &f->reply);
	if (st != KIWI_MPA_ST_OK)
		return st;
	if (len < KIWI_MPA_FRAME_HDR_LEN)
		return KIWI_MPA_ST_NEED_MORE;
	flags = buf[16];
	f->markers = !!(flags & KIWI_MPA_FLAG_M);
	f->crc = !!(flags & KIWI_MPA_FLAG_C);
	f->reject = f->reply && (flags & KIWI_MPA_FLAG_R);
	f->enhanced = !!(flags & KIWI_MPA_FLAG_S);
	f->res = flags & KIWI_MPA_FLAG_RES;
	f->rev = buf[17];
	pd_len = get_unaligned_be16(buf + 18);
	if (pd_len > KIWI_MPA_PD_MAX ||
	    (f->enhanced && pd_len < KIWI_MPA_ENH_LEN))
		return KIWI_MPA_ST_BAD_PDLEN;
	*frame_len = KIWI_MPA_FRAME_HDR_LEN + pd_len;
	if (len < *frame_len)
		return KIWI_MPA_ST_NEED_MORE;
	f->pdata = buf + KIWI_MPA_FRAME_HDR_LEN;
	f->pdata_len = pd_len;
	if (f->enhanced) {
		frame_parse_enh(f->pdata, f);
		f->pdata += KIWI_MPA_ENH_LEN;
		f->pdata_len -= KIWI_MPA_ENH_LEN;
	}
	return KIWI_MPA_ST_OK;
}

/**
 * kiwi_mpa_frame_take_ulpf() - find the ULP framing startup field.
 * @f: a frame from kiwi_mpa_frame_parse().
 *
 * When @f's private data starts with a valid field (ulpf.h) the field is
 * removed from @f->pdata, @f->ulpf is set and @f->ulpf_key holds the key.
 *
 * Return: KIWI_MPA_ST_OK if the field was there, else KIWI_MPA_ST_NO_ULPF
 * (absent, or a mode kiwi cannot send: ULPF-022), @f unchanged.
 */
enum kiwi_mpa_status kiwi_mpa_frame_take_ulpf(struct kiwi_mpa_frame *f)
{
	if (kiwi_ulpf_pd_parse(f->pdata, f->pdata_len, f->ulpf_key))
		return KIWI_MPA_ST_NO_ULPF;
	f->ulpf = true;
	f->pdata += KIWI_ULPF_PD_LEN;
	f->pdata_len -= KIWI_ULPF_PD_LEN;
	return KIWI_MPA_ST_OK;
}

/**
 * kiwi_mpa_frame_build() - encode a startup frame.
 * @f: frame; @f->res is ignored (reserved bits are sent as 0), R is only
 *	sent in a Reply, the enhanced field only when @f->enhanced, the ULP
 *	framing startup field only when @f->ulpf.
 * @buf: output.
 * @cap: octets available at @buf.
 * @frame_len: output, octets written.
 *
 * Return: 0; -EMSGSIZE if the private data (with the enhanced and ULP
 * framing fields) exceeds 512 octets (MPA-059); -EINVAL for an IRD/ORD above
 * 14 bits or private data length without a pointer; -ENOSPC if @cap is too
 * small.
 */
int kiwi_mpa_frame_build(const struct kiwi_mpa_frame *f, u8 *buf, size_t cap,
			 size_t *frame_len)
{
	u32 pd_len = f->pdata_len + (f->enhanced ? KIWI_MPA_ENH_LEN : 0) +
		     (f->ulpf ? KIWI_ULPF_PD_LEN : 0);
	u16 ird, ord;
	u8 *p;

	if (pd_len > KIWI_MPA_PD_MAX)
		return -EMSGSIZE;
	if (f->ird > KIWI_MPA_IRD_ORD_MASK || f->ord > KIWI_MPA_IRD_ORD_MASK ||
	    (f->pdata_len && !f->pdata))
		return -EINVAL;
	if (cap < KIWI_MPA_FRAME_HDR_LEN + pd_len)
		return -ENOSPC;
	memcpy(buf, f->reply ? mpa_key_rep : mpa_key_req, KIWI_MPA_KEY_LEN);
	buf[16] = (f->markers ? KIWI_MPA_FLAG_M : 0) |
		  (f->crc ? KIWI_MPA_FLAG_C : 0) |
		  (f->reply && f->reject ? KIWI_MPA_FLAG_R : 0) |
		  (f->enhanced ? KIWI_MPA_FLAG_S : 0);
	buf[17] = f->rev;
	put_unaligned_be16((u16)pd_len, buf + 18);
	p = buf + KIWI_MPA_FRAME_HDR_LEN;
	if (f->enhanced) {
		ird = f->ird;
		ord = f->ord;
		if (f->p2p) {
			ird |= KIWI_MPA_ENH_P2P;
			if (f->rtr & KIWI_MPA_RTR_SEND)
				ird |= KIWI_MPA_ENH_RTR_SEND;
			if (f->rtr & KIWI_MPA_RTR_WRITE)
				ord |= KIWI_MPA_ENH_RTR_WRITE;
			if (f->rtr & KIWI_MPA_RTR_READ)
				ord |= KIWI_MPA_ENH_RTR_READ;
		}
		put_unaligned_be16(ird, p);
		put_unaligned_be16(ord, p + 2);
		p += KIWI_MPA_ENH_LEN;
	}
	if (f->ulpf) {
		kiwi_ulpf_pd_build(p, f->ulpf_key);
		p += KIWI_ULPF_PD_LEN;
	}
	if (f->pdata_len)
		memcpy(p, f->pdata, f->pdata_len);
	*frame_len = KIWI_MPA_FRAME_HDR_LEN + pd_len;
	return 0;
}
