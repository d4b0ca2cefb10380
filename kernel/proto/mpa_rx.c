// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Streaming MPA FPDU decoder (RFC 5044 sections 4-6 and 8).
 *
 * The decoder is fed the in-order TCP byte stream in chunks of any size and
 * answers with one event per call: the start of an FPDU with the first octets
 * of its ULPDU (enough for the DDP/RDMAP header), payload pieces pointing into
 * the caller's buffer with markers removed, then the end of the FPDU once the
 * CRC and the markers have been checked. FPDU boundaries come from
 * ULPDU_Length only (MPA-043); receivers never depend on segment alignment
 * (MPA-042/087). Markers are stripped and their FPDUPTR compared with the
 * position the length fields give (MPA-016/019/025).
 *
 * Placement versus delivery: payload events come before the CRC is known.
 * Nothing may be delivered or completed for the FPDU before KIWI_MPA_EV_END,
 * and a receiver that passes ULPDUs to DDP only after verifying them
 * (MPA-044/046, as kiwi.ko does with CRC on) runs a copy of the decoder (a
 * plain struct) over the whole FPDU first and feeds the real one only once
 * the copy reported KIWI_MPA_EV_END. After KIWI_MPA_EV_ERROR nothing more
 * is passed on this half-connection (MPA-082).
 */
#include "mpa.h"
#include "ulpf.h"

enum rx_state {
	RX_FHDR = 0,	/* framing header: ULPDU_Length or ULPF header */
	RX_UHDR,	/* first ULPDU octets, copied into rx->hdr */
	RX_PAYLOAD,	/* rest of the ULPDU, handed out in place */
	RX_PAD,
	RX_CRC,
	RX_END,		/* FPDU complete, END event pending */
	RX_ERROR,
};

static bool rx_is_mpa(const struct kiwi_mpa_rx *rx)
{
	return rx->cfg.profile == KIWI_FRAME_MPA;
}

static u32 rx_fhdr_len(const struct kiwi_mpa_rx *rx)
{
	return rx_is_mpa(rx) ? KIWI_MPA_HDR_LEN : KIWI_ULPF_HDR_LEN;
}

/* Octets that may be consumed before the next marker position. */
static size_t rx_room(const struct kiwi_mpa_rx *rx, size_t avail)
{
	if (!rx->cfg.markers)
		return avail;
	return min_t(size_t, avail, KIWI_MPA_MARKER_INTERVAL -
		     rx->off % KIWI_MPA_MARKER_INTERVAL);
}

/* Account for n consumed octets; covered ones go into a checked CRC. */
static void rx_take(struct kiwi_mpa_rx *rx, const u8 *p, size_t n,
		    bool covered)
{
	if (covered && rx_is_mpa(rx) && rx->cfg.crc)
		rx->crc = kiwi_crc32c(rx->crc, p, n);
	rx->off += (u32)n;
}

static void rx_fail(struct kiwi_mpa_rx *rx, struct kiwi_mpa_ev *ev, u8 err)
{
	rx->state = RX_ERROR;
	rx->err = err;
	ev->type = KIWI_MPA_EV_ERROR;
	ev->err = err;
	ev->ulpdu_len = rx->ulpdu_len;
}

/* State after the ULPDU has been consumed. */
static u8 rx_tail_state(const struct kiwi_mpa_rx *rx)
{
	if (!rx_is_mpa(rx))
		return RX_END;
	return rx->pad_left ? RX_PAD : RX_CRC;
}

static void rx_emit_header(struct kiwi_mpa_rx *rx, struct kiwi_mpa_ev *ev)
{
	ev->type = KIWI_MPA_EV_HEADER;
	ev->ulpdu_len = rx->ulpdu_len;
	ev->offset = 0;
	ev->len = rx->hdr_len;
	ev->data = rx->hdr;
	rx->state = rx->pos < rx->ulpdu_len ? RX_PAYLOAD : rx_tail_state(rx);
	rx->fld_len = 0;
}

static size_t rx_marker(struct kiwi_mpa_rx *rx, const u8 *p, size_t avail)
{
	size_t n = min_t(size_t, avail, KIWI_MPA_MARKER_LEN - rx->mk_len);
	u16 want;

	memcpy(rx->mk + rx->mk_len, p, n);
	rx->mk_len += (u8)n;
	rx->started = true;
	rx_take(rx, p, n, true);
	if (rx->mk_len < KIWI_MPA_MARKER_LEN)
		return n;
	rx->mk_len = 0;
	/* Between FPDUs the pointer is 0; inside, back to ULPDU_Length. */
	want = rx->in_fpdu ?
	       (u16)(rx->off - KIWI_MPA_MARKER_LEN - rx->fpdu_pos) : 0;
	if ((get_unaligned_be16(rx->mk + 2) & KIWI_MPA_FPDUPTR_MASK) !=
	    (want & KIWI_MPA_FPDUPTR_MASK))
		rx->marker_bad = true;
	return n;
}

static void rx_parse_fhdr(struct kiwi_mpa_rx *rx, struct kiwi_mpa_ev *ev)
{
	u16 len;

	if (rx_is_mpa(rx)) {
		len = get_unaligned_be16(rx->fld);
	} else if (!kiwi_ulpf_hdr_parse(rx->fld, rx->cfg.ulpf_key, &len)) {
		/* Key mismatch: framing lost, mapped to MPA error 3. */
		rx_fail(rx, ev, KIWI_MPA_ERR_MARKER);
		return;
	}
	rx->ulpdu_len = len;
	rx->pad_left = rx_is_mpa(rx) ? (u8)kiwi_mpa_pad(len) : 0;
	rx->hdr_len = (u8)min_t(u32, rx->hdr_want, len);
	rx->pos = 0;
	if (rx->hdr_len)
		rx->state = RX_UHDR;
	else
		rx_emit_header(rx, ev);
}

static size_t rx_fhdr(struct kiwi_mpa_rx *rx, const u8 *p, size_t avail,
		      struct kiwi_mpa_ev *ev)
{
	size_t n = min_t(size_t, rx_room(rx, avail),
			 rx_fhdr_len(rx) - rx->fld_len);

	if (!rx->in_fpdu) {
		rx->in_fpdu = true;
		rx->fpdu_pos = rx->off;
	}
	memcpy(rx->fld + rx->fld_len, p, n);
	rx->fld_len += (u8)n;
	rx_take(rx, p, n, true);
	if (rx->fld_len == rx_fhdr_len(rx))
		rx_parse_fhdr(rx, ev);
	return n;
}

static size_t rx_uhdr(struct kiwi_mpa_rx *rx, const u8 *p, size_t avail,
		      struct kiwi_mpa_ev *ev)
{
	size_t n = min_t(size_t, rx_room(rx, avail), rx->hdr_len - rx->pos);

	memcpy(rx->hdr + rx->pos, p, n);
	rx->pos += (u32)n;
	rx_take(rx, p, n, true);
	if (rx->pos == rx->hdr_len)
		rx_emit_header(rx, ev);
	return n;
}

static size_t rx_payload(struct kiwi_mpa_rx *rx, const u8 *p, size_t avail,
			 struct kiwi_mpa_ev *ev)
{
	size_t n = min_t(size_t, rx_room(rx, avail),
			 rx->ulpdu_len - rx->pos);

	ev->type = KIWI_MPA_EV_PAYLOAD;
	ev->ulpdu_len = rx->ulpdu_len;
	ev->offset = rx->pos;
	ev->len = (u32)n;
	ev->data = p;
	rx->pos += (u32)n;
	rx_take(rx, p, n, true);
	if (rx->pos == rx->ulpdu_len)
		rx->state = rx_tail_state(rx);
	return n;
}

static size_t rx_pad(struct kiwi_mpa_rx *rx, const u8 *p, size_t avail)
{
	size_t n = min_t(size_t, rx_room(rx, avail), rx->pad_left);

	/* Pad octets are ignored except in the CRC (MPA-012). */
	rx->pad_left -= (u8)n;
	rx_take(rx, p, n, true);
	if (!rx->pad_left)
		rx->state = RX_CRC;
	return n;
}

static size_t rx_crc(struct kiwi_mpa_rx *rx, const u8 *p, size_t avail,
		     struct kiwi_mpa_ev *ev)
{
	size_t n = min_t(size_t, rx_room(rx, avail),
			 KIWI_MPA_CRC_LEN - rx->fld_len);

	memcpy(rx->fld + rx->fld_len, p, n);
	rx->fld_len += (u8)n;
	rx_take(rx, p, n, false);
	if (rx->fld_len < KIWI_MPA_CRC_LEN)
		return n;
	/* With CRC off the field is present but never checked (MPA-013). */
	if (rx->cfg.crc && get_unaligned_le32(rx->fld) != ~rx->crc)
		rx_fail(rx, ev, KIWI_MPA_ERR_CRC);
	else
		rx->state = RX_END;
	return n;
}

static void rx_end(struct kiwi_mpa_rx *rx, struct kiwi_mpa_ev *ev)
{
	if (rx->marker_bad) {
		rx_fail(rx, ev, KIWI_MPA_ERR_MARKER);
		return;
	}
	ev->type = KIWI_MPA_EV_END;
	ev->ulpdu_len = rx->ulpdu_len;
	rx->state = RX_FHDR;
	rx->fld_len = 0;
	rx->crc = ~0U;
	rx->in_fpdu = false;
	rx->started = false;
	rx->pos = 0;
}

static size_t rx_step(struct kiwi_mpa_rx *rx, const u8 *p, size_t avail,
		      struct kiwi_mpa_ev *ev)
{
	if (rx->cfg.markers &&
	    (rx->mk_len || rx->off % KIWI_MPA_MARKER_INTERVAL == 0))
		return rx_marker(rx, p, avail);
	switch (rx->state) {
	case RX_FHDR:
		return rx_fhdr(rx, p, avail, ev);
	case RX_UHDR:
		return rx_uhdr(rx, p, avail, ev);
	case RX_PAYLOAD:
		return rx_payload(rx, p, avail, ev);
	case RX_PAD:
		return rx_pad(rx, p, avail);
	default:
		return rx_crc(rx, p, avail, ev);
	}
}

/**
 * kiwi_mpa_rx_feed() - decode the next part of the received stream.
 * @rx: decoder.
 * @data: received octets (may be NULL if @len is 0).
 * @len: octets at @data, any number.
 * @ev: output event.
 *
 * Consumes octets until one event is ready or @data is used up. The caller
 * handles @ev, then calls again with the unconsumed rest (possibly nothing)
 * until the event is KIWI_MPA_EV_NONE or KIWI_MPA_EV_ERROR. Octets beyond
 * @len are never read. A KIWI_MPA_EV_PAYLOAD event points into @data.
 *
 * Return: octets of @data consumed.
 */
size_t kiwi_mpa_rx_feed(struct kiwi_mpa_rx *rx, const u8 *data, size_t len,
			struct kiwi_mpa_ev *ev)
{
	size_t used = 0;

	memset(ev, 0, sizeof(*ev));
	while (ev->type == KIWI_MPA_EV_NONE) {
		if (rx->state == RX_ERROR) {
			rx_fail(rx, ev, rx->err);
			break;
		}
		if (rx->state == RX_END) {
			rx_end(rx, ev);
			continue;
		}
		if (used == len)
			break;
		used += rx_step(rx, data + used, len - used, ev);
	}
	return used;
}

/**
 * kiwi_mpa_rx_init() - start receive decoding on one direction.
 * @rx: decoder to initialise.
 * @cfg: negotiated parameters (copied).
 * @start_off: stream offset of the first octet, normally 0 (the first octet
 *	after the startup frame); must be a multiple of 4 with markers.
 * @hdr_want: ULPDU octets wanted in each KIWI_MPA_EV_HEADER, at most
 *	KIWI_MPA_RX_HDR_MAX.
 *
 * Return: 0, -EINVAL for a bad @hdr_want, or the error of
 * kiwi_mpa_cfg_check().
 */
int kiwi_mpa_rx_init(struct kiwi_mpa_rx *rx, const struct kiwi_mpa_cfg *cfg,
		     u32 start_off, u32 hdr_want)
{
	int ret = kiwi_mpa_cfg_check(cfg, start_off);

	if (ret)
		return ret;
	if (hdr_want > KIWI_MPA_RX_HDR_MAX)
		return -EINVAL;
	memset(rx, 0, sizeof(*rx));
	rx->cfg = *cfg;
	rx->off = start_off;
	rx->crc = ~0U;
	rx->hdr_want = (u8)hdr_want;
	rx->state = RX_FHDR;
	return 0;
}

/**
 * kiwi_mpa_rx_set_hdr_want() - change the header size of later FPDUs.
 * @rx: decoder.
 * @hdr_want: as for kiwi_mpa_rx_init(); the FPDU in progress keeps its own.
 *
 * Return: 0 or -EINVAL.
 */
int kiwi_mpa_rx_set_hdr_want(struct kiwi_mpa_rx *rx, u32 hdr_want)
{
	if (hdr_want > KIWI_MPA_RX_HDR_MAX)
		return -EINVAL;
	rx->hdr_want = (u8)hdr_want;
	return 0;
}

/**
 * kiwi_mpa_rx_close() - the TCP connection closed (FIN, RST, timeout).
 * @rx: decoder; stopped afterwards.
 *
 * Return: KIWI_MPA_ERR_LLP_CLOSED (error 1), or the earlier error if the
 * decoder had already stopped.
 */
enum kiwi_mpa_err kiwi_mpa_rx_close(struct kiwi_mpa_rx *rx)
{
	if (rx->state != RX_ERROR) {
		rx->state = RX_ERROR;
		rx->err = KIWI_MPA_ERR_LLP_CLOSED;
	}
	return (enum kiwi_mpa_err)rx->err;
}

/**
 * kiwi_mpa_rx_idle() - is the decoder between FPDUs?
 * @rx: decoder.
 *
 * Return: true if no FPDU or marker is partly received (a FIN now loses
 * nothing) and no error occurred.
 */
bool kiwi_mpa_rx_idle(const struct kiwi_mpa_rx *rx)
{
	return rx->state == RX_FHDR && !rx->in_fpdu && !rx->started;
}
