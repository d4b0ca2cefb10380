/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ULP Framing for TCP, draft-ietf-tsvwg-tcp-ulp-frame-00: the PDU alignment
 * mode header, used by the KIWI_FRAME_ULPF00 profile of the MPA framer.
 *
 * Supported: PDU alignment mode with packing off (one DDP segment per framing
 * PDU), which is all DDP can use. Not supported (-EOPNOTSUPP): marker mode
 * (it has no length header, so DDP segments could not be delimited),
 * packing, emergency mode. There is no in-band negotiation in the draft; both
 * ends must be configured out of band before the first framed octet.
 *
 * kiwi's out-of-band configuration (Documentation/ulpf.md): each side's
 * admin turns the profile on; the MPA Request and Reply then carry, as the
 * first octets of their private data after the RFC 6581 field, the startup
 * field below, by which each receiver asks for alignment mode and each
 * sender announces its key (draft section 4's "receiver's desired mode" and
 * "sender's framing key"):
 *
 *  octets 0-7   "KIWIULPF"
 *  octet  8     mode the sender of the field wants to receive (0: alignment)
 *  octet  9     flags: 0x01 packing (never set; refused when received)
 *  octets 10-15 the key the sender of the field transmits with
 *
 *  octets 0-1  Length: octets of the framed ULP PDU (header excluded)
 *  octets 2-7  Key: 48 random bits, fixed per connection and direction
 */
#ifndef KIWI_PROTO_ULPF_H
#define KIWI_PROTO_ULPF_H

#include "platform.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KIWI_ULPF_HDR_LEN	8
#define KIWI_ULPF_KEY_LEN	6
#define KIWI_ULPF_PDU_MAX	65528	/* 2^16 - 8 (ULPF-003) */
#define KIWI_ULPF_PD_LEN	16	/* the startup field in private data */
#define KIWI_ULPF_PD_PACKING	0x01

/**
 * enum kiwi_ulpf_mode - framing modes of draft-00 section 2.
 * @KIWI_ULPF_MODE_ALIGN: PDU alignment mode (supported, packing off).
 * @KIWI_ULPF_MODE_MARKERS: marker mode (not supported for DDP).
 */
enum kiwi_ulpf_mode {
	KIWI_ULPF_MODE_ALIGN = 0,
	KIWI_ULPF_MODE_MARKERS = 1,
};

int kiwi_ulpf_mode_check(u32 mode, bool packing);
u32 kiwi_ulpf_max_pdu(u32 emss);
void kiwi_ulpf_hdr_build(u8 *hdr, u16 len, const u8 *key);
bool kiwi_ulpf_hdr_parse(const u8 *hdr, const u8 *key, u16 *len);
void kiwi_ulpf_pd_build(u8 *p, const u8 *key);
int kiwi_ulpf_pd_parse(const u8 *p, size_t len, u8 *key);

#ifdef __cplusplus
}
#endif

#endif /* KIWI_PROTO_ULPF_H */
