/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * MPA startup: Request/Reply frames (RFC 5044 section 7.1) with the RFC 6581
 * enhanced connection establishment field, and the negotiation of the
 * framing and RDMA parameters from local policy and the peer's frame.
 *
 *  0..15  key "MPA ID Req Frame" / "MPA ID Rep Frame"
 *  16     M 0x80 | C 0x40 | R 0x20 | S 0x10 (RFC 6581) | Res 0x0f
 *  17     Rev
 *  18..19 PD_Length (private data, the enhanced field included)
 *  20..23 enhanced field if S: A|B|IRD(14), C|D|ORD(14), big-endian
 *  ..     ULP private data
 *
 * RDMAC (revision 0) peers: kiwi is a non-permissive IETF implementation
 * (RFC 5044 appendix C): a revision 0 frame is refused with
 * KIWI_MPA_ST_BAD_REV and the connection is closed. A responder may first send
 * the Reply kiwi_mpa_respond() prepared (revision 1) as appendix C.2.1
 * describes; an initiator just closes (C.2.2). Version-0 DDP/RDMAP is never
 * generated.
 */
#ifndef KIWI_PROTO_MPA_HS_H
#define KIWI_PROTO_MPA_HS_H

#include "platform.h"
#include "ulpf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KIWI_MPA_KEY_LEN	16
#define KIWI_MPA_FRAME_HDR_LEN	20
#define KIWI_MPA_PD_MAX		512	/* PD_Length limit, enhanced field incl. */
#define KIWI_MPA_ENH_LEN	4
#define KIWI_MPA_FRAME_MAX	(KIWI_MPA_FRAME_HDR_LEN + KIWI_MPA_PD_MAX)

#define KIWI_MPA_FLAG_M		0x80
#define KIWI_MPA_FLAG_C		0x40
#define KIWI_MPA_FLAG_R		0x20
#define KIWI_MPA_FLAG_S		0x10
#define KIWI_MPA_FLAG_RES	0x0f

#define KIWI_MPA_REV_RDMAC	0
#define KIWI_MPA_REV_1		1
#define KIWI_MPA_REV_2		2

/* RFC 6581 enhanced field bits, on the big-endian 16-bit IRD/ORD words. */
#define KIWI_MPA_ENH_P2P	0x8000	/* A: peer-to-peer, RTR expected */
#define KIWI_MPA_ENH_RTR_SEND	0x4000	/* B: zero-length Send RTR */
#define KIWI_MPA_ENH_RTR_WRITE	0x8000	/* C: zero-length RDMA Write RTR */
#define KIWI_MPA_ENH_RTR_READ	0x4000	/* D: zero-length RDMA Read RTR */
#define KIWI_MPA_IRD_ORD_MASK	0x3fff
#define KIWI_MPA_IRD_ORD_NONE	0x3fff	/* "not negotiated, left to ULP" */

/* RTR type set, as used in struct kiwi_mpa_frame and the policy. */
#define KIWI_MPA_RTR_SEND	0x1
#define KIWI_MPA_RTR_WRITE	0x2
#define KIWI_MPA_RTR_READ	0x4
#define KIWI_MPA_RTR_ALL	0x7

/**
 * struct kiwi_mpa_frame - a Request or Reply, decoded.
 * @reply: key is "MPA ID Rep Frame".
 * @markers: M, the sender wants markers on what it receives.
 * @crc: C, the sender wants CRC.
 * @reject: R (Reply only).
 * @enhanced: S, the private data starts with the RFC 6581 field.
 * @rev: revision.
 * @res: the 4 reserved flag bits as received (sent as 0, never checked).
 * @p2p: A (enhanced only).
 * @rtr: KIWI_MPA_RTR_* set of B/C/D (enhanced only).
 * @ird: IRD, 14 bits (enhanced only).
 * @ord: ORD, 14 bits (enhanced only).
 * @ulpf: the ULP framing draft-00 startup field (ulpf.h) precedes the ULP
 *	private data. kiwi_mpa_frame_build() writes it when set;
 *	kiwi_mpa_frame_parse() leaves it false and the field in @pdata, since
 *	only a side with the profile on looks for it (kiwi_mpa_frame_take_ulpf()).
 * @ulpf_key: the key in that field: the frame sender's transmit key.
 * @pdata: ULP private data (after the enhanced field); on parse it points
 *	into the parsed buffer.
 * @pdata_len: octets of ULP private data.
 */
struct kiwi_mpa_frame {
	bool reply;
	bool markers;
	bool crc;
	bool reject;
	bool enhanced;
	u8 rev;
	u8 res;
	bool p2p;
	u8 rtr;
	u16 ird;
	u16 ord;
	bool ulpf;
	u8 ulpf_key[KIWI_ULPF_KEY_LEN];
	const u8 *pdata;
	u16 pdata_len;
};

/**
 * enum kiwi_mpa_status - outcome of parsing or negotiating a startup frame.
 * @KIWI_MPA_ST_OK: valid / agreed.
 * @KIWI_MPA_ST_NEED_MORE: partial frame; more octets needed.
 * @KIWI_MPA_ST_BAD_KEY: neither MPA key (MPA-050/052/070).
 * @KIWI_MPA_ST_INIT_INIT: a Request where a Reply was expected: both ends
 *	are initiators (MPA-072).
 * @KIWI_MPA_ST_RESP_RESP: a Reply where a Request was expected.
 * @KIWI_MPA_ST_BAD_PDLEN: PD_Length above 512 (MPA-058) or too short for the
 *	enhanced field.
 * @KIWI_MPA_ST_BAD_REV: a revision we cannot interoperate with (MPA-057):
 *	0 (RDMAC, see above), above our maximum, or S set below revision 2.
 * @KIWI_MPA_ST_BAD_ENH: the enhanced field breaks RFC 6581 (an S=1 Reply to
 *	an S=0 Request, A not copied back).
 * @KIWI_MPA_ST_REJECTED: the Reply has R=1 (MPA-067): leave TCP open.
 * @KIWI_MPA_ST_IRD: insufficient IRD (RFC 6581 section 9.1).
 * @KIWI_MPA_ST_NO_RTR: no usable RTR type (RFC 6581 section 9.2).
 * @KIWI_MPA_ST_NO_ULPF: this side requires the ULP framing draft-00 profile
 *	and the peer's frame carries no usable startup field for it.
 */
enum kiwi_mpa_status {
	KIWI_MPA_ST_OK = 0,
	KIWI_MPA_ST_NEED_MORE,
	KIWI_MPA_ST_BAD_KEY,
	KIWI_MPA_ST_INIT_INIT,
	KIWI_MPA_ST_RESP_RESP,
	KIWI_MPA_ST_BAD_PDLEN,
	KIWI_MPA_ST_BAD_REV,
	KIWI_MPA_ST_BAD_ENH,
	KIWI_MPA_ST_REJECTED,
	KIWI_MPA_ST_IRD,
	KIWI_MPA_ST_NO_RTR,
	KIWI_MPA_ST_NO_ULPF,
};

/**
 * enum kiwi_mpa_action - what the connection manager does after a status.
 * @KIWI_MPA_ACT_PROCEED: continue the startup / enter Full Operation.
 * @KIWI_MPA_ACT_WAIT: read more octets.
 * @KIWI_MPA_ACT_CLOSE: close TCP at once and report (errors 4).
 * @KIWI_MPA_ACT_EXIT_OPEN: exit MPA, leave TCP to the ULP (reject).
 * @KIWI_MPA_ACT_TERM_CLOSE: send an MPA Terminate (codes 6/7), then close.
 */
enum kiwi_mpa_action {
	KIWI_MPA_ACT_PROCEED = 0,
	KIWI_MPA_ACT_WAIT,
	KIWI_MPA_ACT_CLOSE,
	KIWI_MPA_ACT_EXIT_OPEN,
	KIWI_MPA_ACT_TERM_CLOSE,
};

/**
 * struct kiwi_mpa_policy - local startup policy.
 * @crc_off: the administrator asked to prefer no CRC (C=0). CRC is still
 *	used unless the peer also sends C=0 (MPA-026). Default false.
 * @markers: ask the peer to send markers (M=1).
 * @rev: highest revision used and accepted: 1 or 2. Revision 1 frames are
 *	always accepted (RFC 6581 section 6).
 * @enhanced: initiator: send the RFC 6581 field (needs @rev 2). A responder
 *	always answers an S=1 Request with S=1 when @rev is 2.
 * @p2p: initiator: ask for peer-to-peer mode (RTR).
 * @rtr: KIWI_MPA_RTR_* this side can send (initiator) / accept (responder);
 *	must not be empty when @rev is 2.
 * @ird: inbound RDMA Read depth this side offers, or KIWI_MPA_IRD_ORD_NONE.
 * @ord: outbound RDMA Read depth this side wants, or KIWI_MPA_IRD_ORD_NONE.
 * @ird_max: largest IRD this side can raise @ird to.
 * @ord_min: responder: smallest ORD its ULP can work with; a Request whose
 *	IRD is lower is refused with KIWI_MPA_ST_IRD. 0 for none.
 * @ulpf: use the ULP framing draft-00 profile (ulpf.h) after the startup,
 *	and only it: send the startup field, refuse a peer without one. Both
 *	directions then run it, without CRC and markers whatever @crc_off and
 *	@markers say.
 * @ulpf_key: with @ulpf, the key this side transmits with (48 random bits).
 */
struct kiwi_mpa_policy {
	bool crc_off;
	bool markers;
	u8 rev;
	bool enhanced;
	bool p2p;
	u8 rtr;
	u16 ird;
	u16 ord;
	u16 ird_max;
	u16 ord_min;
	bool ulpf;
	u8 ulpf_key[KIWI_ULPF_KEY_LEN];
};

/**
 * struct kiwi_mpa_params - the agreed parameters.
 * @tx_markers: send markers (the peer's M).
 * @rx_markers: expect markers (our M).
 * @crc: generate and check CRC (either side's C).
 * @rev: revision of the peer's frame.
 * @ddp_version: DDP/RDMAP version to use (1; MPA-010/088).
 * @enhanced: RFC 6581 field exchanged.
 * @p2p: peer-to-peer mode agreed.
 * @rtr: responder: RTR types accepted (sent in the Reply); initiator: the one
 *	type to send.
 * @ird: our IRD to use.
 * @ord: our ORD to use.
 * @peer_ird: the peer's IRD exactly as received (ECE-05/09).
 * @peer_ord: the peer's ORD exactly as received.
 * @ulpf: both directions use the ULP framing draft-00 profile (@crc and the
 *	markers are then false).
 * @ulpf_tx_key: with @ulpf, the key to send with (the policy's).
 * @ulpf_rx_key: with @ulpf, the key the peer sends with (from its frame).
 */
struct kiwi_mpa_params {
	bool tx_markers;
	bool rx_markers;
	bool crc;
	u8 rev;
	u8 ddp_version;
	bool enhanced;
	bool p2p;
	u8 rtr;
	u16 ird;
	u16 ord;
	u16 peer_ird;
	u16 peer_ord;
	bool ulpf;
	u8 ulpf_tx_key[KIWI_ULPF_KEY_LEN];
	u8 ulpf_rx_key[KIWI_ULPF_KEY_LEN];
};

enum kiwi_mpa_status kiwi_mpa_frame_parse(const u8 *buf, size_t len,
					  bool want_reply,
					  struct kiwi_mpa_frame *f,
					  size_t *frame_len);
enum kiwi_mpa_status kiwi_mpa_frame_take_ulpf(struct kiwi_mpa_frame *f);
int kiwi_mpa_frame_build(const struct kiwi_mpa_frame *f, u8 *buf, size_t cap,
			 size_t *frame_len);

int kiwi_mpa_policy_check(const struct kiwi_mpa_policy *pol);
u16 kiwi_mpa_ird_grant(u16 want, u16 max);
int kiwi_mpa_make_request(const struct kiwi_mpa_policy *pol,
			  const u8 *pdata, u16 pdata_len,
			  struct kiwi_mpa_frame *req);
enum kiwi_mpa_status kiwi_mpa_respond(const struct kiwi_mpa_policy *pol,
				      const struct kiwi_mpa_frame *req,
				      struct kiwi_mpa_frame *rep,
				      struct kiwi_mpa_params *out);
enum kiwi_mpa_status kiwi_mpa_check_reply(const struct kiwi_mpa_policy *pol,
					  const struct kiwi_mpa_frame *req,
					  const struct kiwi_mpa_frame *rep,
					  struct kiwi_mpa_params *out);
enum kiwi_mpa_action kiwi_mpa_status_action(enum kiwi_mpa_status st);
u8 kiwi_mpa_status_ecode(enum kiwi_mpa_status st);

#ifdef __cplusplus
}
#endif

#endif /* KIWI_PROTO_MPA_HS_H */
