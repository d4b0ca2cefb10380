/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * DDP over SCTP: the wire rules of the adaptation layer
 * (draft-ietf-rddp-sctp, later RFC 5043; seeds-digest.md section 3).
 *
 * Every chunk of an association that negotiated the DDP Adaptation
 * Indication is an unordered DATA chunk whose user data starts with a
 * 16-bit DDP-SSN: a per-stream, per-direction counter over all chunks of a
 * DDP Stream Session, 0 at the session's first chunk, without gaps.
 *
 *   PPID 0x10, DDP Segment:      DDP-SSN (2) | DDP Segment (RFC 5041)
 *   PPID 0x11, Session Control:  DDP-SSN (2) | Function Code (2) |
 *                                Private Data (0..512; none in Terminate)
 *
 * Compiled into kiwi.ko (cm_sctp.c, llp_sctp.c: Documentation/sctp.md)
 * and into the user-space wire library, where it is unit-tested.
 *
 * Pure code: no kernel objects, no locks, no allocation.
 */
#ifndef KIWI_PROTO_SCTP_ADAPT_H
#define KIWI_PROTO_SCTP_ADAPT_H

#include "platform.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Adaptation Layer Indication value of DDP (INIT / INIT-ACK, 0xC006). */
#define KIWI_SCTP_ADAPT_DDP		0x00000001u
/* Payload Protocol Identifiers (IANA: RFC 5043). */
#define KIWI_SCTP_PPID_DDP_SEG		0x00000010u
#define KIWI_SCTP_PPID_SSC		0x00000011u

#define KIWI_SCTP_SSN_LEN		2
#define KIWI_SCTP_SSC_HDR_LEN		4	/* DDP-SSN, Function Code */
#define KIWI_SCTP_PD_MAX		512
#define KIWI_SCTP_SSC_MAX		(KIWI_SCTP_SSC_HDR_LEN + KIWI_SCTP_PD_MAX)
/*
 * SCTP streams asked for in each direction, equal (section 8, SCTP-026):
 * one DDP session runs on stream 0; the others let a chunk a peer sends on
 * another stream reach kiwi, which answers it with a Session Terminate.
 */
#define KIWI_SCTP_STREAMS		10
/* Chunks that may be unacknowledged on one stream (serial arithmetic). */
#define KIWI_SCTP_SSN_WINDOW		32767u

/* SCTP common header and DATA chunk header. */
#define KIWI_SCTP_COMMON_HDR_LEN	12
#define KIWI_SCTP_DATA_HDR_LEN		16

/**
 * enum kiwi_sctp_ssc_fn - Function Code of a Session Control message
 * @KIWI_SCTP_SSC_INITIATE: the active side opens a session
 * @KIWI_SCTP_SSC_ACCEPT: the passive side's ULP accepted it
 * @KIWI_SCTP_SSC_REJECT: the passive side's ULP refused it
 * @KIWI_SCTP_SSC_TERMINATE: the session ends (or the adaptation layer
 *	refused an Initiate); carries no Private Data
 */
enum kiwi_sctp_ssc_fn {
	KIWI_SCTP_SSC_INITIATE = 0x001,
	KIWI_SCTP_SSC_ACCEPT = 0x002,
	KIWI_SCTP_SSC_REJECT = 0x003,
	KIWI_SCTP_SSC_TERMINATE = 0x004,
};

/**
 * struct kiwi_sctp_ssc - one decoded Session Control message
 * @ssn: DDP-SSN
 * @fn: enum kiwi_sctp_ssc_fn
 * @pd: Private Data, inside the decoded buffer
 * @pd_len: octets of Private Data (the chunk's user data less 4)
 */
struct kiwi_sctp_ssc {
	u16 ssn;
	u16 fn;
	const u8 *pd;
	u32 pd_len;
};

int kiwi_sctp_ssc_encode(u8 *buf, u32 cap, u16 ssn, u16 fn, const u8 *pd,
			 u32 pd_len);
int kiwi_sctp_ssc_decode(struct kiwi_sctp_ssc *m, const u8 *buf, u32 len);
int kiwi_sctp_seg_decode(const u8 *buf, u32 len, u32 mulpdu, u16 *ssn);
u32 kiwi_sctp_mulpdu(u32 pmtu, bool ipv6);
bool kiwi_sctp_ssn_valid(u16 next, u16 ssn, u16 window);

#ifdef __cplusplus
}
#endif

#endif /* KIWI_PROTO_SCTP_ADAPT_H */
