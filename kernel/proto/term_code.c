// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Terminate error table: enum kiwi_term_err <-> (Layer, EType, ECode), and
 * the copied headers each error carries (RFC 5040 sections 4.8 and 7.1,
 * RFC 5041 section 7.2, RFC 5044 / RFC 6581 MPA codes; see term.h).
 */
#include "term.h"
#include "ddp.h"
#include "rdmap.h"

#define KIWI_TC(l, t, c, cp) \
	{ .layer = KIWI_TERM_LAYER_##l, .etype = (t), .ecode = (c), \
	  .copy = (cp) }

/*
 * Copy rules: RDMAP remote protection and remote operation errors and all
 * DDP errors copy the failing segment's DDP header; RDMAP errors on a Read
 * Request also copy its RDMA header (section 7.1 rule 3). Local
 * catastrophic and LLP errors copy nothing (Figure 10).
 */
#define KIWI_CP_DR	(KIWI_TERM_COPY_DDP | KIWI_TERM_COPY_RDMA)
#define KIWI_CP_D	KIWI_TERM_COPY_DDP
#define KIWI_ET_PROT	KIWI_TERM_ET_RDMAP_REMOTE_PROT
#define KIWI_ET_OP	KIWI_TERM_ET_RDMAP_REMOTE_OP
#define KIWI_ET_T	KIWI_TERM_ET_DDP_TAGGED
#define KIWI_ET_U	KIWI_TERM_ET_DDP_UNTAGGED

static const struct kiwi_term_code kiwi_term_codes[KIWI_TERM_ERR_COUNT] = {
	[KIWI_TERM_ERR_RDMAP_CATASTROPHIC] = KIWI_TC(RDMAP, 0, 0x00, 0),
	[KIWI_TERM_ERR_RDMAP_INVALID_STAG] =
		KIWI_TC(RDMAP, KIWI_ET_PROT, 0x00, KIWI_CP_DR),
	[KIWI_TERM_ERR_RDMAP_BOUNDS] =
		KIWI_TC(RDMAP, KIWI_ET_PROT, 0x01, KIWI_CP_DR),
	[KIWI_TERM_ERR_RDMAP_ACCESS] =
		KIWI_TC(RDMAP, KIWI_ET_PROT, 0x02, KIWI_CP_DR),
	[KIWI_TERM_ERR_RDMAP_STAG_STREAM] =
		KIWI_TC(RDMAP, KIWI_ET_PROT, 0x03, KIWI_CP_DR),
	[KIWI_TERM_ERR_RDMAP_TO_WRAP] =
		KIWI_TC(RDMAP, KIWI_ET_PROT, 0x04, KIWI_CP_DR),
	[KIWI_TERM_ERR_RDMAP_CANNOT_INVALIDATE] =
		KIWI_TC(RDMAP, KIWI_ET_PROT, 0x09, KIWI_CP_DR),
	[KIWI_TERM_ERR_RDMAP_PROT_UNSPEC] =
		KIWI_TC(RDMAP, KIWI_ET_PROT, 0xff, KIWI_CP_DR),
	[KIWI_TERM_ERR_RDMAP_VERSION] =
		KIWI_TC(RDMAP, KIWI_ET_OP, 0x05, KIWI_CP_DR),
	[KIWI_TERM_ERR_RDMAP_OPCODE] =
		KIWI_TC(RDMAP, KIWI_ET_OP, 0x06, KIWI_CP_DR),
	[KIWI_TERM_ERR_RDMAP_CATA_STREAM] =
		KIWI_TC(RDMAP, KIWI_ET_OP, 0x07, KIWI_CP_DR),
	[KIWI_TERM_ERR_RDMAP_CATA_GLOBAL] =
		KIWI_TC(RDMAP, KIWI_ET_OP, 0x08, KIWI_CP_DR),
	[KIWI_TERM_ERR_RDMAP_OP_CANNOT_INVALIDATE] =
		KIWI_TC(RDMAP, KIWI_ET_OP, 0x09, KIWI_CP_DR),
	[KIWI_TERM_ERR_RDMAP_OP_UNSPEC] =
		KIWI_TC(RDMAP, KIWI_ET_OP, 0xff, KIWI_CP_DR),
	[KIWI_TERM_ERR_DDP_CATASTROPHIC] = KIWI_TC(DDP, 0, 0x00, KIWI_CP_D),
	[KIWI_TERM_ERR_DDP_T_INVALID_STAG] =
		KIWI_TC(DDP, KIWI_ET_T, 0x00, KIWI_CP_D),
	[KIWI_TERM_ERR_DDP_T_BOUNDS] = KIWI_TC(DDP, KIWI_ET_T, 0x01, KIWI_CP_D),
	[KIWI_TERM_ERR_DDP_T_STAG_STREAM] =
		KIWI_TC(DDP, KIWI_ET_T, 0x02, KIWI_CP_D),
	[KIWI_TERM_ERR_DDP_T_TO_WRAP] = KIWI_TC(DDP, KIWI_ET_T, 0x03, KIWI_CP_D),
	[KIWI_TERM_ERR_DDP_T_VERSION] = KIWI_TC(DDP, KIWI_ET_T, 0x04, KIWI_CP_D),
	[KIWI_TERM_ERR_DDP_U_INVALID_QN] =
		KIWI_TC(DDP, KIWI_ET_U, 0x01, KIWI_CP_D),
	[KIWI_TERM_ERR_DDP_U_MSN_NOBUF] =
		KIWI_TC(DDP, KIWI_ET_U, 0x02, KIWI_CP_D),
	[KIWI_TERM_ERR_DDP_U_MSN_RANGE] =
		KIWI_TC(DDP, KIWI_ET_U, 0x03, KIWI_CP_D),
	[KIWI_TERM_ERR_DDP_U_MO] = KIWI_TC(DDP, KIWI_ET_U, 0x04, KIWI_CP_D),
	[KIWI_TERM_ERR_DDP_U_TOO_LONG] = KIWI_TC(DDP, KIWI_ET_U, 0x05, KIWI_CP_D),
	[KIWI_TERM_ERR_DDP_U_VERSION] = KIWI_TC(DDP, KIWI_ET_U, 0x06, KIWI_CP_D),
	[KIWI_TERM_ERR_LLP_CLOSED] = KIWI_TC(LLP, 0, 0x01, 0),
	[KIWI_TERM_ERR_LLP_CRC] = KIWI_TC(LLP, 0, 0x02, 0),
	[KIWI_TERM_ERR_LLP_MARKER] = KIWI_TC(LLP, 0, 0x03, 0),
	[KIWI_TERM_ERR_LLP_BAD_FRAME] = KIWI_TC(LLP, 0, 0x04, 0),
	[KIWI_TERM_ERR_LLP_LOCAL_CATA] = KIWI_TC(LLP, 0, 0x05, 0),
	[KIWI_TERM_ERR_LLP_IRD] = KIWI_TC(LLP, 0, 0x06, 0),
	[KIWI_TERM_ERR_LLP_NO_RTR] = KIWI_TC(LLP, 0, 0x07, 0),
};

static const char *const kiwi_term_names[KIWI_TERM_ERR_COUNT] = {
	[KIWI_TERM_ERR_NONE] = "no error",
	[KIWI_TERM_ERR_RDMAP_CATASTROPHIC] = "RDMAP local catastrophic",
	[KIWI_TERM_ERR_RDMAP_INVALID_STAG] = "RDMAP invalid STag",
	[KIWI_TERM_ERR_RDMAP_BOUNDS] = "RDMAP base or bounds violation",
	[KIWI_TERM_ERR_RDMAP_ACCESS] = "RDMAP access rights violation",
	[KIWI_TERM_ERR_RDMAP_STAG_STREAM] = "RDMAP STag not on this stream",
	[KIWI_TERM_ERR_RDMAP_TO_WRAP] = "RDMAP TO wrap",
	[KIWI_TERM_ERR_RDMAP_CANNOT_INVALIDATE] = "RDMAP STag cannot be invalidated",
	[KIWI_TERM_ERR_RDMAP_PROT_UNSPEC] = "RDMAP unspecified protection error",
	[KIWI_TERM_ERR_RDMAP_VERSION] = "RDMAP invalid version",
	[KIWI_TERM_ERR_RDMAP_OPCODE] = "RDMAP unexpected opcode",
	[KIWI_TERM_ERR_RDMAP_CATA_STREAM] = "RDMAP catastrophic, stream",
	[KIWI_TERM_ERR_RDMAP_CATA_GLOBAL] = "RDMAP catastrophic, global",
	[KIWI_TERM_ERR_RDMAP_OP_CANNOT_INVALIDATE] =
		"RDMAP STag cannot be invalidated (operation)",
	[KIWI_TERM_ERR_RDMAP_OP_UNSPEC] = "RDMAP unspecified operation error",
	[KIWI_TERM_ERR_DDP_CATASTROPHIC] = "DDP local catastrophic",
	[KIWI_TERM_ERR_DDP_T_INVALID_STAG] = "DDP invalid STag",
	[KIWI_TERM_ERR_DDP_T_BOUNDS] = "DDP base or bounds violation",
	[KIWI_TERM_ERR_DDP_T_STAG_STREAM] = "DDP STag not on this stream",
	[KIWI_TERM_ERR_DDP_T_TO_WRAP] = "DDP TO wrap",
	[KIWI_TERM_ERR_DDP_T_VERSION] = "DDP invalid version (tagged)",
	[KIWI_TERM_ERR_DDP_U_INVALID_QN] = "DDP invalid QN",
	[KIWI_TERM_ERR_DDP_U_MSN_NOBUF] = "DDP invalid MSN, no buffer",
	[KIWI_TERM_ERR_DDP_U_MSN_RANGE] = "DDP invalid MSN range",
	[KIWI_TERM_ERR_DDP_U_MO] = "DDP invalid MO",
	[KIWI_TERM_ERR_DDP_U_TOO_LONG] = "DDP message too long for buffer",
	[KIWI_TERM_ERR_DDP_U_VERSION] = "DDP invalid version (untagged)",
	[KIWI_TERM_ERR_LLP_CLOSED] = "MPA connection lost",
	[KIWI_TERM_ERR_LLP_CRC] = "MPA CRC error",
	[KIWI_TERM_ERR_LLP_MARKER] = "MPA marker mismatch",
	[KIWI_TERM_ERR_LLP_BAD_FRAME] = "MPA invalid request or reply",
	[KIWI_TERM_ERR_LLP_LOCAL_CATA] = "MPA local catastrophic",
	[KIWI_TERM_ERR_LLP_IRD] = "MPA insufficient IRD",
	[KIWI_TERM_ERR_LLP_NO_RTR] = "MPA no matching RTR option",
};

/**
 * kiwi_term_code_of() - the wire code of an error.
 * @err: enum kiwi_term_err other than KIWI_TERM_ERR_NONE.
 * @code: output.
 *
 * Return: 0, or -EINVAL for KIWI_TERM_ERR_NONE and out-of-range values.
 */
int kiwi_term_code_of(enum kiwi_term_err err, struct kiwi_term_code *code)
{
	if ((u32)err >= KIWI_TERM_ERR_COUNT || err == KIWI_TERM_ERR_NONE)
		return -EINVAL;
	*code = kiwi_term_codes[err];
	return 0;
}

/**
 * kiwi_term_err_lookup() - the error a received (Layer, EType, ECode) means.
 * @layer: Layer nibble.
 * @etype: EType nibble.
 * @ecode: ECode octet.
 *
 * RDMAP local catastrophic accepts any ECode (RFC 6580 registers "all").
 *
 * Return: the enum kiwi_term_err value, or -ENOENT for a triple that no RFC
 * defines.
 */
int kiwi_term_err_lookup(u8 layer, u8 etype, u8 ecode)
{
	const struct kiwi_term_code *c;
	int e;

	if (layer == KIWI_TERM_LAYER_RDMAP &&
	    etype == KIWI_TERM_ET_RDMAP_LOCAL_CATA)
		return KIWI_TERM_ERR_RDMAP_CATASTROPHIC;
	for (e = KIWI_TERM_ERR_NONE + 1; e < KIWI_TERM_ERR_COUNT; e++) {
		c = &kiwi_term_codes[e];
		if (c->layer == layer && c->etype == etype && c->ecode == ecode)
			return e;
	}
	return -ENOENT;
}

/**
 * kiwi_term_err_name() - human-readable name for logs.
 * @err: enum kiwi_term_err.
 *
 * Return: a static string; "unknown" for out-of-range values.
 */
const char *kiwi_term_err_name(enum kiwi_term_err err)
{
	if ((u32)err >= KIWI_TERM_ERR_COUNT)
		return "unknown";
	return kiwi_term_names[err];
}

static bool kiwi_term_is_rreq(const u8 *seg, u32 seg_len)
{
	return !(seg[0] & KIWI_DDP_CTRL_T) &&
	       kiwi_rdmap_opcode(seg[1]) == KIWI_RDMAP_READ_REQ &&
	       seg_len >= KIWI_DDP_UNTAGGED_HDR_LEN + KIWI_RDMAP_RREQ_LEN;
}

/**
 * kiwi_term_from_err() - the Terminate body RFC 5040 requires for an error.
 * @t: output.
 * @err: the error (not KIWI_TERM_ERR_NONE).
 * @seg: the failing incoming segment (its ULPDU, from the DDP header on),
 *	or NULL when the error was found while building an outgoing message
 *	or concerns no incoming message (section 7.1 rule 1: no copied
 *	headers).
 * @seg_len: octets at @seg (the whole ULPDU if available).
 *
 * Copies the DDP header (setting M and D, DDP Segment Length = @seg_len,
 * the ULPDU length, header included) when the error class carries one and
 * @seg holds a complete header; copies the Read Request header (setting R)
 * for RDMAP errors on a Read Request. For a Read failing part way, the
 * caller replaces @t->rdma_hdr with kiwi_rdmap_rreq_advance()'s result.
 *
 * Return: 0, or -EINVAL for an invalid @err.
 */
int kiwi_term_from_err(struct kiwi_term *t, enum kiwi_term_err err,
		       const u8 *seg, u32 seg_len)
{
	struct kiwi_term_code c;
	u32 hlen;
	int rc;

	rc = kiwi_term_code_of(err, &c);
	if (rc)
		return rc;
	memset(t, 0, sizeof(*t));
	t->layer = c.layer;
	t->etype = c.etype;
	t->ecode = c.ecode;
	if (!seg || !seg_len || !(c.copy & KIWI_TERM_COPY_DDP))
		return 0;
	hlen = kiwi_ddp_hdr_len(seg[0]);
	if (seg_len < hlen)
		return 0;
	t->hdrct = KIWI_TERM_HDRCT_M | KIWI_TERM_HDRCT_D;
	t->seg_len = (u16)min_t(u32, seg_len, 0xffff);
	t->ddp_hdr_len = hlen;
	memcpy(t->ddp_hdr, seg, hlen);
	if ((c.copy & KIWI_TERM_COPY_RDMA) && kiwi_term_is_rreq(seg, seg_len)) {
		t->hdrct |= KIWI_TERM_HDRCT_R;
		t->rdma_hdr_len = KIWI_TERM_RDMA_HDR_LEN;
		memcpy(t->rdma_hdr, seg + hlen, KIWI_TERM_RDMA_HDR_LEN);
	}
	return 0;
}
