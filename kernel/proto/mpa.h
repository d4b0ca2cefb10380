/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * MPA framing (RFC 5044 sections 4-6): FPDU transmit planning, the streaming
 * FPDU decoder, markers, CRC and MULPDU, plus the experimental ULP framing
 * draft-00 profile (see ulpf.h).
 *
 * Pure code: no kernel objects, no locks, no allocation. Every state struct
 * below belongs to exactly one connection direction; the caller serialises
 * all calls on one struct (in kiwi.ko: the QP's TX lock for struct
 * kiwi_mpa_tx, the socket's receive path for struct kiwi_mpa_rx).
 *
 * Use, after the startup (mpa_hs.h) agreed struct kiwi_mpa_params p:
 *
 * Transmit: kiwi_mpa_tx_init(&tx, &cfg{markers = p.tx_markers, crc = p.crc},
 * 0) once; per DDP segment, kiwi_mpa_tx_plan(&tx, &plan, frags, n) with the
 * DDP header and payload pages as fragments, then send plan.piece[0..cnt) in
 * order, e.g. as a kvec array (or bio_vecs via piece.src/src_off for page
 * fragments) with kernel_sendmsg(..., MSG_EOR), before planning the next
 * FPDU. MULPDU for DDP segmentation: kiwi_mpa_mulpdu(emss, p.tx_markers).
 * To start every TCP segment with an FPDU, frame runs of FPDUs with
 * struct kiwi_mpa_seg (kiwi_mpa_seg_fits() before, kiwi_mpa_seg_add() after
 * each) and start each run in a segment of its own (MSG_EOR on what went
 * before), or let it join the unsent segment only if it fits there whole.
 *
 * Receive: kiwi_mpa_rx_init(&rx, &cfg{markers = p.rx_markers, crc = p.crc},
 * 0, hdr) once, hdr = the most ULPDU octets the caller wants to parse in one
 * piece (46 for a Read Request, 70 for a whole Terminate); from the
 * tcp_read_sock() actor, for each skb chunk call
 * kiwi_mpa_rx_feed() until it reports KIWI_MPA_EV_NONE: HEADER gives the
 * DDP/RDMAP header (validate, pick the target), PAYLOAD pieces are placed,
 * END completes the segment, ERROR stops the stream (send the Terminate with
 * layer LLP, EType MPA, ECode = ev.err, and do not close TCP for codes 2/3).
 * On FIN/RST call kiwi_mpa_rx_close() (error 1).
 */
#ifndef KIWI_PROTO_MPA_H
#define KIWI_PROTO_MPA_H

#include "platform.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KIWI_MPA_HDR_LEN	2	/* ULPDU_Length */
#define KIWI_MPA_CRC_LEN	4
#define KIWI_MPA_MARKER_LEN	4
#define KIWI_MPA_MARKER_INTERVAL 512
#define KIWI_MPA_FPDUPTR_MASK	0xfffcU	/* receivers treat the low 2 bits as 0 */
#define KIWI_MPA_MULPDU_MIN	128
#define KIWI_MPA_MULPDU_MAX	64768	/* also the largest ULPDU we transmit */
#define KIWI_MPA_ULPDU_WIRE_MAX	65535	/* largest ULPDU_Length a peer can send */

/* Largest generic header: the 8-octet ULP framing draft-00 header. */
#define KIWI_FRAME_HDR_MAX	8
/* Markers one FPDU can carry, worst case (leading marker included). */
#define KIWI_MPA_FPDU_MARKERS_MAX \
	((KIWI_MPA_HDR_LEN + KIWI_MPA_MULPDU_MAX + 3 + KIWI_MPA_CRC_LEN) / \
	 (KIWI_MPA_MARKER_INTERVAL - KIWI_MPA_MARKER_LEN) + 2)
/* Octets a transmit plan generates: header, markers, pad, CRC. */
#define KIWI_MPA_GEN_MAX \
	(KIWI_FRAME_HDR_MAX + KIWI_MPA_MARKER_LEN * KIWI_MPA_FPDU_MARKERS_MAX + \
	 3 + KIWI_MPA_CRC_LEN)
/*
 * Plan entries needed to frame nfrags caller fragments: each marker can split
 * one fragment in two and adds itself; plus header, pad and CRC.
 */
#define KIWI_MPA_PLAN_PIECES(nfrags) \
	((nfrags) + 2 * KIWI_MPA_FPDU_MARKERS_MAX + 3)

/**
 * enum kiwi_mpa_err - MPA error codes (RFC 5044 section 8, RFC 6581 sec. 8).
 *
 * These are the ECode values of a Terminate with Layer LLP, EType MPA.
 */
enum kiwi_mpa_err {
	KIWI_MPA_ERR_NONE = 0,
	KIWI_MPA_ERR_LLP_CLOSED = 1,	/* TCP closed, terminated or lost */
	KIWI_MPA_ERR_CRC = 2,		/* received CRC does not match */
	KIWI_MPA_ERR_MARKER = 3,	/* marker and ULPDU_Length disagree */
	KIWI_MPA_ERR_BAD_FRAME = 4,	/* invalid Request or Reply frame */
	KIWI_MPA_ERR_LOCAL_CATA = 5,	/* RFC 6581: local catastrophic */
	KIWI_MPA_ERR_IRD = 6,		/* RFC 6581: insufficient IRD */
	KIWI_MPA_ERR_NO_RTR = 7,	/* RFC 6581: no matching RTR option */
};

/**
 * enum kiwi_frame_profile - wire framing used on one direction.
 * @KIWI_FRAME_MPA: RFC 5044 MPA (the default and the only interoperable one).
 * @KIWI_FRAME_ULPF00: draft-ietf-tsvwg-tcp-ulp-frame-00 PDU alignment mode,
 *	packing off: 8-octet Length+Key header, no pad, no CRC, no markers.
 *	Experimental and off unless explicitly selected; it gives DDP no CRC
 *	(violates DDP LLP requirement 6 unless IPsec is used).
 */
enum kiwi_frame_profile {
	KIWI_FRAME_MPA = 0,
	KIWI_FRAME_ULPF00 = 1,
};

/**
 * struct kiwi_mpa_cfg - negotiated framing parameters for one direction.
 * @profile: enum kiwi_frame_profile.
 * @markers: markers every 512 octets (MPA only).
 * @crc: generate (TX) or check (RX) the CRC32c (MPA only). With @crc off the
 *	transmitter sends the field as zero (RFC 5044 section 4.4: the field is
 *	always present, its value unchecked; computing it would cost a pass
 *	over every octet) and the receiver ignores the field.
 * @ulpf_key: the 48-bit framing key (ULPF00 only), from a good RNG.
 */
struct kiwi_mpa_cfg {
	u8 profile;
	bool markers;
	bool crc;
	u8 ulpf_key[6];
};

/**
 * struct kiwi_mpa_frag - one caller-owned fragment of a ULPDU.
 * @base: first octet.
 * @len: octets.
 */
struct kiwi_mpa_frag {
	const void *base;
	u32 len;
};

#define KIWI_MPA_SRC_GEN (-1)

/**
 * struct kiwi_mpa_piece - one entry of a transmit plan, in wire order.
 * @base: first octet to send.
 * @len: octets.
 * @src: index of the caller fragment this piece comes from, or
 *	KIWI_MPA_SRC_GEN for octets generated into the plan's @gen buffer.
 * @src_off: offset of @base inside caller fragment @src (0 for generated).
 *
 * @src/@src_off let a caller that framed page fragments map a piece back to
 * its page (for a bio_vec) instead of using the virtual address.
 */
struct kiwi_mpa_piece {
	const u8 *base;
	u32 len;
	s32 src;
	u32 src_off;
};

/**
 * struct kiwi_mpa_plan - the wire image of one FPDU as a gather list.
 * @piece: caller-provided array of @cap entries; on success holds @cnt pieces
 *	that, sent in order, are the FPDU (with its markers).
 * @cap: entries in @piece; KIWI_MPA_PLAN_PIECES(nfrags) always suffices.
 * @cnt: entries used.
 * @wire_len: total octets of the FPDU on the wire (sum of the piece lengths).
 * @crc: the CRC32c sent (final value, host order).
 * @gen_len: octets used in @gen.
 * @gen: generated octets (header, markers, pad, CRC) the pieces point into;
 *	the plan must stay in place until the pieces have been sent.
 */
struct kiwi_mpa_plan {
	struct kiwi_mpa_piece *piece;
	u32 cap;
	u32 cnt;
	u32 wire_len;
	u32 crc;
	u32 gen_len;
	u8 gen[KIWI_MPA_GEN_MAX];
};

/**
 * struct kiwi_mpa_tx - transmit state of one direction.
 * @cfg: framing parameters.
 * @off: octets framed since SeqStart (the first octet after the startup
 *	frame), modulo 2^32; marker positions are relative to it, so the TCP
 *	sequence number never matters and its wrap is harmless (MPA-020).
 */
struct kiwi_mpa_tx {
	struct kiwi_mpa_cfg cfg;
	u32 off;
};

int kiwi_mpa_cfg_check(const struct kiwi_mpa_cfg *cfg, u32 start_off);
int kiwi_mpa_tx_init(struct kiwi_mpa_tx *tx, const struct kiwi_mpa_cfg *cfg,
		     u32 start_off);
int kiwi_mpa_tx_plan(struct kiwi_mpa_tx *tx, struct kiwi_mpa_plan *plan,
		     const struct kiwi_mpa_frag *frag, u32 nfrags);
u32 kiwi_mpa_fpdu_wire_len(const struct kiwi_mpa_tx *tx, u32 ulpdu_len);

u32 kiwi_mpa_mulpdu(u32 emss, bool markers);
u32 kiwi_mpa_pad(u32 ulpdu_len);

/**
 * struct kiwi_mpa_seg - FPDUs of one run against the LLP's segments (TX;
 *	mpa_seg.c).
 * @size: octets in one segment (the EMSS), 0: no alignment.
 * @fill: octets of the run's current segment taken, 0 on a segment
 *	boundary.
 * @pack: several whole FPDUs may share a segment.
 */
struct kiwi_mpa_seg {
	u32 size;
	u32 fill;
	bool pack;
};

void kiwi_mpa_seg_init(struct kiwi_mpa_seg *s, u32 size, bool pack);
bool kiwi_mpa_seg_fits(const struct kiwi_mpa_seg *s, u32 wire_len);
void kiwi_mpa_seg_add(struct kiwi_mpa_seg *s, u32 wire_len);

/*
 * Largest caller header the decoder hands out in one KIWI_MPA_EV_HEADER:
 * room for a whole Terminate message (18 + 4 + 2 + 18 + 28 = 70 octets).
 */
#define KIWI_MPA_RX_HDR_MAX 72

/**
 * enum kiwi_mpa_ev_type - what kiwi_mpa_rx_feed() reports.
 * @KIWI_MPA_EV_NONE: every octet given was consumed; feed more.
 * @KIWI_MPA_EV_HEADER: a new FPDU: @ulpdu_len is known and @data/@len are
 *	its first min(hdr_want, ulpdu_len) ULPDU octets (in the decoder).
 *	Exactly one per FPDU, before any payload event.
 * @KIWI_MPA_EV_PAYLOAD: ULPDU octets [@offset, @offset + @len) at @data,
 *	which points into the caller's buffer, markers removed.
 * @KIWI_MPA_EV_END: the FPDU ended and is valid (CRC good or not checked,
 *	markers consistent). Only now may the ULPDU be delivered.
 * @KIWI_MPA_EV_ERROR: @err holds the MPA error; the decoder is stopped and
 *	passes nothing more (MPA-082). The octets of the failed FPDU that were
 *	already handed out may have been placed but must not be delivered.
 */
enum kiwi_mpa_ev_type {
	KIWI_MPA_EV_NONE = 0,
	KIWI_MPA_EV_HEADER,
	KIWI_MPA_EV_PAYLOAD,
	KIWI_MPA_EV_END,
	KIWI_MPA_EV_ERROR,
};

/**
 * struct kiwi_mpa_ev - one decoder event.
 * @type: enum kiwi_mpa_ev_type.
 * @err: enum kiwi_mpa_err for KIWI_MPA_EV_ERROR, else 0.
 * @ulpdu_len: ULPDU length of the current FPDU.
 * @offset: ULPDU offset of @data.
 * @len: octets at @data.
 * @data: header copy (HEADER) or caller buffer (PAYLOAD), else NULL.
 */
struct kiwi_mpa_ev {
	u8 type;
	u8 err;
	u32 ulpdu_len;
	u32 offset;
	u32 len;
	const u8 *data;
};

/**
 * struct kiwi_mpa_rx - streaming FPDU decoder of one direction.
 *
 * All fields are private to mpa_rx.c; initialise with kiwi_mpa_rx_init().
 * The decoder only reads the octets it was given in the current call and
 * keeps no pointer into them after the call returns (the header and any
 * partial length, marker or CRC field are copied into the struct).
 */
struct kiwi_mpa_rx {
	struct kiwi_mpa_cfg cfg;
	u32 off;		/* stream octets consumed since SeqStart */
	u32 fpdu_pos;		/* value of off at the FPDU's length field */
	u32 crc;		/* running CRC register of the current FPDU */
	u32 ulpdu_len;
	u32 pos;		/* ULPDU octets consumed */
	u8 state;
	u8 err;
	u8 hdr_want;		/* ULPDU octets wanted in EV_HEADER */
	u8 hdr_len;		/* octets in hdr for this FPDU */
	u8 fld_len;		/* octets collected in fld */
	u8 pad_left;
	bool in_fpdu;		/* length field started (markers point back) */
	bool started;		/* octets of the next FPDU (marker) consumed */
	bool marker_bad;	/* a marker in this FPDU pointed elsewhere */
	u8 mk_len;		/* marker octets collected */
	u8 mk[KIWI_MPA_MARKER_LEN];
	u8 fld[KIWI_FRAME_HDR_MAX];
	u8 hdr[KIWI_MPA_RX_HDR_MAX];
};

int kiwi_mpa_rx_init(struct kiwi_mpa_rx *rx, const struct kiwi_mpa_cfg *cfg,
		     u32 start_off, u32 hdr_want);
int kiwi_mpa_rx_set_hdr_want(struct kiwi_mpa_rx *rx, u32 hdr_want);
size_t kiwi_mpa_rx_feed(struct kiwi_mpa_rx *rx, const u8 *data, size_t len,
			struct kiwi_mpa_ev *ev);
enum kiwi_mpa_err kiwi_mpa_rx_close(struct kiwi_mpa_rx *rx);
bool kiwi_mpa_rx_idle(const struct kiwi_mpa_rx *rx);

#ifdef __cplusplus
}
#endif

#endif /* KIWI_PROTO_MPA_H */
