// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MPA FPDU transmit planning (RFC 5044 sections 4.1-4.4).
 *
 * kiwi_mpa_tx_plan() turns a ULPDU given as caller fragments into a gather
 * list in wire order: generated octets (ULPDU_Length or the ULPF header,
 * markers, pad, CRC) interleaved with slices of the caller's fragments, which
 * are never copied. The CRC32c runs over every covered octet in wire order,
 * markers included (MPA-021/033). The list suits kernel_sendmsg() with a
 * kvec or bio_vec iterator built from the pieces.
 */
#include "mpa.h"
#include "ulpf.h"

/* Cursor used while one plan is built. */
struct tx_build {
	struct kiwi_mpa_tx *tx;
	struct kiwi_mpa_plan *plan;
	u32 crc;		/* running CRC register */
	u32 hdr_pos;		/* tx->off of the FPDU's length field */
	bool in_fpdu;		/* the length field has been emitted */
};

static bool tx_is_mpa(const struct kiwi_mpa_tx *tx)
{
	return tx->cfg.profile == KIWI_FRAME_MPA;
}

/* Append one piece, merging with the previous one when contiguous. */
static int tx_add_piece(struct tx_build *b, const u8 *base, u32 len,
			s32 src, u32 src_off)
{
	struct kiwi_mpa_plan *plan = b->plan;
	struct kiwi_mpa_piece *last;

	if (!len)
		return 0;
	if (tx_is_mpa(b->tx) && b->tx->cfg.crc)
		b->crc = kiwi_crc32c(b->crc, base, len);
	b->tx->off += len;
	plan->wire_len += len;
	if (plan->cnt) {
		last = &plan->piece[plan->cnt - 1];
		if (last->src == src && last->base + last->len == base) {
			last->len += len;
			return 0;
		}
	}
	if (plan->cnt == plan->cap)
		return -ENOSPC;
	last = &plan->piece[plan->cnt++];
	last->base = base;
	last->len = len;
	last->src = src;
	last->src_off = src_off;
	return 0;
}

/* Reserve n octets of the plan's generated-octet buffer. */
static u8 *tx_gen(struct tx_build *b, u32 n)
{
	u8 *p = b->plan->gen + b->plan->gen_len;

	b->plan->gen_len += n;
	return p;
}

/* Emit a marker if the stream position is a marker position. */
static int tx_marker(struct tx_build *b)
{
	u8 *m;
	u32 ptr;

	if (!b->tx->cfg.markers || b->tx->off % KIWI_MPA_MARKER_INTERVAL)
		return 0;
	/* FPDUPTR: back to the length field, 0 before it (MPA-019/021). */
	ptr = b->in_fpdu ? b->tx->off - b->hdr_pos : 0;
	m = tx_gen(b, KIWI_MPA_MARKER_LEN);
	put_unaligned_be16(0, m);
	put_unaligned_be16((u16)ptr, m + 2);
	return tx_add_piece(b, m, KIWI_MPA_MARKER_LEN, KIWI_MPA_SRC_GEN, 0);
}

/* Emit octets, stopping at each marker position to insert the marker. */
static int tx_emit(struct tx_build *b, const u8 *base, u32 len, s32 src)
{
	u32 done = 0;
	u32 chunk;
	int ret;

	while (done < len) {
		ret = tx_marker(b);
		if (ret)
			return ret;
		chunk = len - done;
		if (b->tx->cfg.markers)
			chunk = min_t(u32, chunk, KIWI_MPA_MARKER_INTERVAL -
				      b->tx->off % KIWI_MPA_MARKER_INTERVAL);
		ret = tx_add_piece(b, base + done, chunk, src,
				   src == KIWI_MPA_SRC_GEN ? 0 : done);
		if (ret)
			return ret;
		done += chunk;
	}
	return 0;
}

static int tx_header(struct tx_build *b, u32 ulpdu_len)
{
	u8 *h;
	int ret;

	if (!tx_is_mpa(b->tx)) {
		h = tx_gen(b, KIWI_ULPF_HDR_LEN);
		kiwi_ulpf_hdr_build(h, (u16)ulpdu_len, b->tx->cfg.ulpf_key);
		return tx_emit(b, h, KIWI_ULPF_HDR_LEN, KIWI_MPA_SRC_GEN);
	}
	/* A marker due here precedes the header and belongs to this FPDU. */
	ret = tx_marker(b);
	if (ret)
		return ret;
	b->hdr_pos = b->tx->off;
	b->in_fpdu = true;
	h = tx_gen(b, KIWI_MPA_HDR_LEN);
	put_unaligned_be16((u16)ulpdu_len, h);
	return tx_emit(b, h, KIWI_MPA_HDR_LEN, KIWI_MPA_SRC_GEN);
}

static int tx_trailer(struct tx_build *b, u32 ulpdu_len)
{
	u32 pad = kiwi_mpa_pad(ulpdu_len);
	u8 *p;
	int ret;

	if (!tx_is_mpa(b->tx))
		return 0;
	if (pad) {
		p = tx_gen(b, pad);
		memset(p, 0, pad);
		ret = tx_emit(b, p, pad, KIWI_MPA_SRC_GEN);
		if (ret)
			return ret;
	}
	/* A marker right before the CRC is covered by it (rule 1). */
	ret = tx_marker(b);
	if (ret)
		return ret;
	b->plan->crc = b->tx->cfg.crc ? ~b->crc : 0;
	p = tx_gen(b, KIWI_MPA_CRC_LEN);
	put_unaligned_le32(b->plan->crc, p);	/* LS octet first */
	b->in_fpdu = false;
	return tx_add_piece(b, p, KIWI_MPA_CRC_LEN, KIWI_MPA_SRC_GEN, 0);
}

/**
 * kiwi_mpa_tx_init() - start transmit framing on one direction.
 * @tx: state to initialise.
 * @cfg: negotiated parameters (copied).
 * @start_off: initial stream offset, normally 0 (the first octet after the
 *	startup frame); tests use it to exercise the 32-bit wrap.
 *
 * Return: 0 or the error of kiwi_mpa_cfg_check().
 */
int kiwi_mpa_tx_init(struct kiwi_mpa_tx *tx, const struct kiwi_mpa_cfg *cfg,
		     u32 start_off)
{
	int ret = kiwi_mpa_cfg_check(cfg, start_off);

	if (ret)
		return ret;
	tx->cfg = *cfg;
	tx->off = start_off;
	return 0;
}

/**
 * kiwi_mpa_tx_plan() - frame one ULPDU.
 * @tx: transmit state; advanced by the FPDU's wire length on success.
 * @plan: output; @plan->piece and @plan->cap must be set by the caller.
 * @frag: the ULPDU as caller fragments, in order (zero-length ones allowed).
 * @nfrags: entries in @frag.
 *
 * The caller must send every piece, in order, before planning the next FPDU
 * (the marker positions depend on it), and must keep the fragments and the
 * plan unchanged until then: the CRC was computed from them here.
 *
 * Return: 0; -EINVAL for an empty ULPDU; -EMSGSIZE above 64768 octets for MPA
 * (MPA-007) or 65528 for ULPF00 (ULPF-003); -ENOSPC if @plan->cap is too
 * small. On error @tx is unchanged.
 */
int kiwi_mpa_tx_plan(struct kiwi_mpa_tx *tx, struct kiwi_mpa_plan *plan,
		     const struct kiwi_mpa_frag *frag, u32 nfrags)
{
	struct tx_build b = { .tx = tx, .plan = plan, .crc = ~0U };
	u32 start = tx->off;
	u64 ulpdu_len = 0;
	u32 i;
	int ret;

	for (i = 0; i < nfrags; i++)
		ulpdu_len += frag[i].len;
	if (!ulpdu_len)
		return -EINVAL;
	if (ulpdu_len > (tx_is_mpa(tx) ? KIWI_MPA_MULPDU_MAX : KIWI_ULPF_PDU_MAX))
		return -EMSGSIZE;
	plan->cnt = 0;
	plan->wire_len = 0;
	plan->gen_len = 0;
	plan->crc = 0;
	ret = tx_header(&b, (u32)ulpdu_len);
	for (i = 0; !ret && i < nfrags; i++)
		ret = tx_emit(&b, (const u8 *)frag[i].base, frag[i].len, (s32)i);
	if (!ret)
		ret = tx_trailer(&b, (u32)ulpdu_len);
	if (ret)
		tx->off = start;
	return ret;
}

/**
 * kiwi_mpa_fpdu_wire_len() - octets the next FPDU will take on the wire.
 * @tx: transmit state (not changed).
 * @ulpdu_len: ULPDU octets.
 *
 * Return: header + ULPDU + pad + CRC + the markers falling inside it.
 */
u32 kiwi_mpa_fpdu_wire_len(const struct kiwi_mpa_tx *tx, u32 ulpdu_len)
{
	u32 body, wire, off, step;

	if (!tx_is_mpa(tx))
		return KIWI_ULPF_HDR_LEN + ulpdu_len;
	body = KIWI_MPA_HDR_LEN + ulpdu_len + kiwi_mpa_pad(ulpdu_len);
	wire = body + KIWI_MPA_CRC_LEN;
	if (!tx->cfg.markers)
		return wire;
	off = tx->off;
	while (body) {
		if (off % KIWI_MPA_MARKER_INTERVAL == 0) {
			off += KIWI_MPA_MARKER_LEN;
			wire += KIWI_MPA_MARKER_LEN;
		}
		step = min_t(u32, body, KIWI_MPA_MARKER_INTERVAL -
			     off % KIWI_MPA_MARKER_INTERVAL);
		off += step;
		body -= step;
	}
	if (off % KIWI_MPA_MARKER_INTERVAL == 0)
		wire += KIWI_MPA_MARKER_LEN;
	return wire;
}
