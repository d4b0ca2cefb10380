/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RDMAP Terminate message (RFC 5040 sections 4.8, 5.4, 7.1) and the table of
 * every error a Terminate can report: RDMAP (RFC 5040 section 4.8), DDP
 * (RFC 5041 section 7.2) and LLP = MPA (RFC 5044, RFC 6581 section 8).
 *
 * Wire layout of the Terminate body (the DDP payload of a QN 2 message):
 *
 *   octet 0   Layer (high nibble) | EType (low nibble)
 *   octet 1   ECode
 *   octet 2   M 0x80 | D 0x40 | R 0x20 | reserved 0x1f
 *   octet 3   reserved
 *   then      DDP Segment Length (16 bits) and the terminated DDP header
 *             (14 or 18 octets), present iff D; then the terminated RDMA
 *             header (the 28-octet Read Request header), present iff R.
 *
 * Pure code: no kernel objects, no locks, no allocation. Every function works
 * on caller-owned memory only and may be called from any context.
 */
#ifndef KIWI_PROTO_TERM_H
#define KIWI_PROTO_TERM_H

#include "platform.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Layer nibble. */
#define KIWI_TERM_LAYER_RDMAP	0x0
#define KIWI_TERM_LAYER_DDP	0x1
#define KIWI_TERM_LAYER_LLP	0x2

/* EType nibble, per layer. */
#define KIWI_TERM_ET_RDMAP_LOCAL_CATA	0x0
#define KIWI_TERM_ET_RDMAP_REMOTE_PROT	0x1
#define KIWI_TERM_ET_RDMAP_REMOTE_OP	0x2
#define KIWI_TERM_ET_DDP_LOCAL_CATA	0x0
#define KIWI_TERM_ET_DDP_TAGGED		0x1
#define KIWI_TERM_ET_DDP_UNTAGGED	0x2
#define KIWI_TERM_ET_LLP_MPA		0x0

/* Header control bits, octet 2 of the body. */
#define KIWI_TERM_HDRCT_M	0x80	/* DDP Segment Length is valid */
#define KIWI_TERM_HDRCT_D	0x40	/* length + DDP header follow */
#define KIWI_TERM_HDRCT_R	0x20	/* RDMA (Read Request) header follows */
#define KIWI_TERM_HDRCT_MASK	0xe0

#define KIWI_TERM_CTRL_LEN	4	/* Layer..reserved */
#define KIWI_TERM_SEGLEN_LEN	2
#define KIWI_TERM_DDP_HDR_MAX	18	/* untagged DDP header */
#define KIWI_TERM_DDP_HDR_MIN	14	/* tagged DDP header */
#define KIWI_TERM_RDMA_HDR_LEN	28	/* Read Request header */
#define KIWI_TERM_BODY_MAX	(KIWI_TERM_CTRL_LEN + KIWI_TERM_SEGLEN_LEN + \
				 KIWI_TERM_DDP_HDR_MAX + KIWI_TERM_RDMA_HDR_LEN)
/* Whole Terminate ULPDU: its own untagged DDP header plus the largest body. */
#define KIWI_TERM_MSG_MAX	(KIWI_TERM_DDP_HDR_MAX + KIWI_TERM_BODY_MAX)

/**
 * enum kiwi_term_err - every reason kiwi can send or recognise in a Terminate.
 *
 * KIWI_TERM_ERR_NONE means "valid". Every other value maps to exactly one
 * (Layer, EType, ECode) triple through kiwi_term_code_of(). The receive-side
 * validators in ddp.h and rdmap.h return these values.
 *
 * @KIWI_TERM_ERR_NONE: no error.
 * @KIWI_TERM_ERR_RDMAP_CATASTROPHIC: RDMAP local catastrophic (0/0/00).
 * @KIWI_TERM_ERR_RDMAP_INVALID_STAG: remote protection, invalid STag (0/1/00).
 * @KIWI_TERM_ERR_RDMAP_BOUNDS: remote protection, base or bounds (0/1/01).
 * @KIWI_TERM_ERR_RDMAP_ACCESS: remote protection, access rights (0/1/02).
 * @KIWI_TERM_ERR_RDMAP_STAG_STREAM: STag not associated with the RDMAP
 *	stream (0/1/03).
 * @KIWI_TERM_ERR_RDMAP_TO_WRAP: remote protection, TO wrap (0/1/04).
 * @KIWI_TERM_ERR_RDMAP_CANNOT_INVALIDATE: remote protection, STag cannot be
 *	invalidated (0/1/09); what kiwi sends for a bad Send with Invalidate.
 * @KIWI_TERM_ERR_RDMAP_PROT_UNSPEC: remote protection, unspecified (0/1/ff).
 * @KIWI_TERM_ERR_RDMAP_VERSION: remote operation, invalid RDMAP version
 *	(0/2/05).
 * @KIWI_TERM_ERR_RDMAP_OPCODE: remote operation, unexpected opcode (0/2/06).
 * @KIWI_TERM_ERR_RDMAP_CATA_STREAM: remote operation, catastrophic error
 *	localized to the stream (0/2/07), e.g. an IRD overrun.
 * @KIWI_TERM_ERR_RDMAP_CATA_GLOBAL: remote operation, global catastrophic
 *	error (0/2/08).
 * @KIWI_TERM_ERR_RDMAP_OP_CANNOT_INVALIDATE: remote operation, STag cannot be
 *	invalidated (0/2/09); RFC 5040 lists 0x09 under both types, kiwi
 *	accepts this one on receive and sends the protection form.
 * @KIWI_TERM_ERR_RDMAP_OP_UNSPEC: remote operation, unspecified (0/2/ff).
 * @KIWI_TERM_ERR_DDP_CATASTROPHIC: DDP local catastrophic (1/0/00).
 * @KIWI_TERM_ERR_DDP_T_INVALID_STAG: tagged buffer, invalid STag (1/1/00).
 * @KIWI_TERM_ERR_DDP_T_BOUNDS: tagged buffer, base or bounds (1/1/01).
 * @KIWI_TERM_ERR_DDP_T_STAG_STREAM: tagged buffer, STag not associated with
 *	the DDP stream (PD or stream mismatch) (1/1/02).
 * @KIWI_TERM_ERR_DDP_T_TO_WRAP: tagged buffer, TO wrap (1/1/03).
 * @KIWI_TERM_ERR_DDP_T_VERSION: tagged buffer, invalid DDP version (1/1/04).
 * @KIWI_TERM_ERR_DDP_U_INVALID_QN: untagged buffer, invalid QN (1/2/01).
 * @KIWI_TERM_ERR_DDP_U_MSN_NOBUF: invalid MSN, no buffer (1/2/02).
 * @KIWI_TERM_ERR_DDP_U_MSN_RANGE: invalid MSN, range not valid (1/2/03).
 * @KIWI_TERM_ERR_DDP_U_MO: invalid MO (1/2/04).
 * @KIWI_TERM_ERR_DDP_U_TOO_LONG: message too long for the buffer (1/2/05).
 * @KIWI_TERM_ERR_DDP_U_VERSION: untagged buffer, invalid DDP version (1/2/06).
 * @KIWI_TERM_ERR_LLP_CLOSED: MPA, TCP connection closed or lost (2/0/01).
 * @KIWI_TERM_ERR_LLP_CRC: MPA CRC error (2/0/02).
 * @KIWI_TERM_ERR_LLP_MARKER: MPA marker and ULPDU length mismatch (2/0/03).
 * @KIWI_TERM_ERR_LLP_BAD_FRAME: invalid MPA Request or Reply frame (2/0/04).
 * @KIWI_TERM_ERR_LLP_LOCAL_CATA: RFC 6581 local catastrophic (2/0/05).
 * @KIWI_TERM_ERR_LLP_IRD: RFC 6581 insufficient IRD resources (2/0/06).
 * @KIWI_TERM_ERR_LLP_NO_RTR: RFC 6581 no matching RTR option (2/0/07).
 * @KIWI_TERM_ERR_COUNT: number of values.
 */
enum kiwi_term_err {
	KIWI_TERM_ERR_NONE = 0,
	KIWI_TERM_ERR_RDMAP_CATASTROPHIC,
	KIWI_TERM_ERR_RDMAP_INVALID_STAG,
	KIWI_TERM_ERR_RDMAP_BOUNDS,
	KIWI_TERM_ERR_RDMAP_ACCESS,
	KIWI_TERM_ERR_RDMAP_STAG_STREAM,
	KIWI_TERM_ERR_RDMAP_TO_WRAP,
	KIWI_TERM_ERR_RDMAP_CANNOT_INVALIDATE,
	KIWI_TERM_ERR_RDMAP_PROT_UNSPEC,
	KIWI_TERM_ERR_RDMAP_VERSION,
	KIWI_TERM_ERR_RDMAP_OPCODE,
	KIWI_TERM_ERR_RDMAP_CATA_STREAM,
	KIWI_TERM_ERR_RDMAP_CATA_GLOBAL,
	KIWI_TERM_ERR_RDMAP_OP_CANNOT_INVALIDATE,
	KIWI_TERM_ERR_RDMAP_OP_UNSPEC,
	KIWI_TERM_ERR_DDP_CATASTROPHIC,
	KIWI_TERM_ERR_DDP_T_INVALID_STAG,
	KIWI_TERM_ERR_DDP_T_BOUNDS,
	KIWI_TERM_ERR_DDP_T_STAG_STREAM,
	KIWI_TERM_ERR_DDP_T_TO_WRAP,
	KIWI_TERM_ERR_DDP_T_VERSION,
	KIWI_TERM_ERR_DDP_U_INVALID_QN,
	KIWI_TERM_ERR_DDP_U_MSN_NOBUF,
	KIWI_TERM_ERR_DDP_U_MSN_RANGE,
	KIWI_TERM_ERR_DDP_U_MO,
	KIWI_TERM_ERR_DDP_U_TOO_LONG,
	KIWI_TERM_ERR_DDP_U_VERSION,
	KIWI_TERM_ERR_LLP_CLOSED,
	KIWI_TERM_ERR_LLP_CRC,
	KIWI_TERM_ERR_LLP_MARKER,
	KIWI_TERM_ERR_LLP_BAD_FRAME,
	KIWI_TERM_ERR_LLP_LOCAL_CATA,
	KIWI_TERM_ERR_LLP_IRD,
	KIWI_TERM_ERR_LLP_NO_RTR,
	KIWI_TERM_ERR_COUNT
};

/* Which copied headers a Terminate for an error carries (RFC 5040 Fig. 10). */
#define KIWI_TERM_COPY_DDP	0x1	/* DDP header + segment length */
#define KIWI_TERM_COPY_RDMA	0x2	/* Read Request header, if the failed
					 * message was a Read Request
					 */

/**
 * struct kiwi_term_code - the wire code of one enum kiwi_term_err.
 * @layer: KIWI_TERM_LAYER_*.
 * @etype: KIWI_TERM_ET_*.
 * @ecode: error code octet.
 * @copy: KIWI_TERM_COPY_* headers the Terminate carries for this error.
 */
struct kiwi_term_code {
	u8 layer;
	u8 etype;
	u8 ecode;
	u8 copy;
};

/**
 * struct kiwi_term - a decoded or to-be-encoded Terminate body.
 * @layer: Layer nibble.
 * @etype: EType nibble.
 * @ecode: ECode octet.
 * @hdrct: the M/D/R bits as sent or received (KIWI_TERM_HDRCT_*).
 * @seg_len: DDP Segment Length; on the wire iff @ddp_hdr_len != 0.
 * @ddp_hdr_len: octets in @ddp_hdr: 0 (absent), 14 (tagged) or 18.
 * @rdma_hdr_len: octets in @rdma_hdr: 0 (absent) or 28.
 * @ddp_hdr: the terminated DDP header, as received.
 * @rdma_hdr: the terminated Read Request header.
 *
 * A received Terminate may set D or R without carrying the header (siw sets
 * R for Send with Invalidate, RFC 5040 section 7.1 allows short forms), so
 * the presence of a copied header is given by its length field, never by
 * @hdrct alone.
 */
struct kiwi_term {
	u8 layer;
	u8 etype;
	u8 ecode;
	u8 hdrct;
	u16 seg_len;
	u8 ddp_hdr_len;
	u8 rdma_hdr_len;
	u8 ddp_hdr[KIWI_TERM_DDP_HDR_MAX];
	u8 rdma_hdr[KIWI_TERM_RDMA_HDR_LEN];
};

/* kiwi_term_decode() flag: the body uses siw's swapped bit layout. */
#define KIWI_TERM_DEC_SIW_SWAPPED	0x1

int kiwi_term_code_of(enum kiwi_term_err err, struct kiwi_term_code *code);
int kiwi_term_err_lookup(u8 layer, u8 etype, u8 ecode);
const char *kiwi_term_err_name(enum kiwi_term_err err);

int kiwi_term_from_err(struct kiwi_term *t, enum kiwi_term_err err,
		       const u8 *seg, u32 seg_len);
u32 kiwi_term_body_len(const struct kiwi_term *t);
int kiwi_term_encode(const struct kiwi_term *t, u8 *buf, u32 cap);
int kiwi_term_decode(struct kiwi_term *t, const u8 *body, u32 len,
		     unsigned int flags);
bool kiwi_term_siw_swapped(const u8 *body, u32 len, bool startup_over);
int kiwi_term_build_msg(const struct kiwi_term *t, u32 msn, u8 *buf,
			u32 cap);

#ifdef __cplusplus
}
#endif

#endif /* KIWI_PROTO_TERM_H */
