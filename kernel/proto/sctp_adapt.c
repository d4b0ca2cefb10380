// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DDP over SCTP adaptation layer: Session Control messages, DDP Segment
 * chunks, the MULPDU and the DDP-SSN window (sctp_adapt.h).
 */
#include "sctp_adapt.h"

/* The shortest DDP header (tagged, RFC 5041 section 4.2). */
#define KIWI_SCTP_DDP_HDR_MIN	14
/* The draft's floor on a chunk's user data (section 9): 2 + 2 + 512. */
#define KIWI_SCTP_USER_DATA_MIN	516

static bool kiwi_sctp_fn_known(u16 fn)
{
	return fn >= KIWI_SCTP_SSC_INITIATE && fn <= KIWI_SCTP_SSC_TERMINATE;
}

/* Private Data allowed with @fn: up to 512 octets, none in a Terminate. */
static bool kiwi_sctp_pd_ok(u16 fn, u32 pd_len)
{
	if (fn == KIWI_SCTP_SSC_TERMINATE)
		return pd_len == 0;
	return pd_len <= KIWI_SCTP_PD_MAX;
}

/**
 * kiwi_sctp_ssc_encode() - build a Session Control message
 * @buf: where the chunk's user data goes
 * @cap: octets available at @buf
 * @ssn: DDP-SSN of the message
 * @fn: enum kiwi_sctp_ssc_fn
 * @pd: Private Data (may be NULL when @pd_len is 0)
 * @pd_len: its length
 *
 * Return: octets written; -EINVAL for an unknown function, Private Data
 * over 512 octets or any in a Terminate; -ENOSPC if @cap is too small.
 */
int kiwi_sctp_ssc_encode(u8 *buf, u32 cap, u16 ssn, u16 fn, const u8 *pd,
			 u32 pd_len)
{
	if (!kiwi_sctp_fn_known(fn) || !kiwi_sctp_pd_ok(fn, pd_len))
		return -EINVAL;
	if (cap < KIWI_SCTP_SSC_HDR_LEN + pd_len)
		return -ENOSPC;
	put_unaligned_be16(ssn, buf);
	put_unaligned_be16(fn, buf + KIWI_SCTP_SSN_LEN);
	if (pd_len)
		memcpy(buf + KIWI_SCTP_SSC_HDR_LEN, pd, pd_len);
	return (int)(KIWI_SCTP_SSC_HDR_LEN + pd_len);
}

/**
 * kiwi_sctp_ssc_decode() - parse a received Session Control message
 * @m: the result; @m->pd points into @buf
 * @buf: the chunk's user data (PPID 0x11)
 * @len: its length
 *
 * The Private Data is what follows the Function Code: the draft gives it
 * no length field of its own.
 *
 * Return: 0, or -EINVAL for a message shorter than its header, an unknown
 * function, Private Data over 512 octets or any in a Terminate.
 */
int kiwi_sctp_ssc_decode(struct kiwi_sctp_ssc *m, const u8 *buf, u32 len)
{
	u16 fn;

	if (len < KIWI_SCTP_SSC_HDR_LEN)
		return -EINVAL;
	fn = get_unaligned_be16(buf + KIWI_SCTP_SSN_LEN);
	if (!kiwi_sctp_fn_known(fn) ||
	    !kiwi_sctp_pd_ok(fn, len - KIWI_SCTP_SSC_HDR_LEN))
		return -EINVAL;
	m->ssn = get_unaligned_be16(buf);
	m->fn = fn;
	m->pd_len = len - KIWI_SCTP_SSC_HDR_LEN;
	m->pd = m->pd_len ? buf + KIWI_SCTP_SSC_HDR_LEN : NULL;
	return 0;
}

/**
 * kiwi_sctp_seg_decode() - check a received DDP Segment chunk
 * @buf: the chunk's user data (PPID 0x10)
 * @len: its length
 * @mulpdu: the largest DDP Segment this side announced
 * @ssn: the DDP-SSN
 *
 * Return: 0, the DDP Segment starting KIWI_SCTP_SSN_LEN octets into @buf;
 * -EINVAL if no whole DDP header follows the DDP-SSN; -EMSGSIZE if the
 * segment is larger than @mulpdu (section 9: it MUST be rejected).
 */
int kiwi_sctp_seg_decode(const u8 *buf, u32 len, u32 mulpdu, u16 *ssn)
{
	if (len < KIWI_SCTP_SSN_LEN + KIWI_SCTP_DDP_HDR_MIN)
		return -EINVAL;
	if (len - KIWI_SCTP_SSN_LEN > mulpdu)
		return -EMSGSIZE;
	*ssn = get_unaligned_be16(buf);
	return 0;
}

/**
 * kiwi_sctp_mulpdu() - the largest DDP Segment for a path MTU
 * @pmtu: the association's path MTU
 * @ipv6: the path is IPv6 (40-octet header) rather than IPv4 (20)
 *
 * A segment travels with no IP or SCTP fragmentation: the MTU less the IP
 * header, the SCTP common header, the DATA chunk header and the DDP-SSN
 * (1450 for IPv4 and an MTU of 1500). Section 9's floor of 516 octets is
 * read as the floor of the chunk's user data, the size of the largest
 * Session Control message, so a DDP Segment is never limited below 514.
 *
 * Return: the MULPDU.
 */
u32 kiwi_sctp_mulpdu(u32 pmtu, bool ipv6)
{
	u32 over = (ipv6 ? 40 : 20) + KIWI_SCTP_COMMON_HDR_LEN +
		   KIWI_SCTP_DATA_HDR_LEN;
	u32 floor = KIWI_SCTP_USER_DATA_MIN - KIWI_SCTP_SSN_LEN;

	if (pmtu <= over + KIWI_SCTP_USER_DATA_MIN)
		return floor;
	return pmtu - over - KIWI_SCTP_SSN_LEN;
}

/**
 * kiwi_sctp_ssn_valid() - can a chunk with DDP-SSN @ssn be explained?
 * @next: the DDP-SSN the receiver delivers next
 * @ssn: the received chunk's DDP-SSN
 * @window: chunks the receiver holds for reordering, at most
 *	    KIWI_SCTP_SSN_WINDOW
 *
 * Serial arithmetic (section 10): a chunk is valid only if it lies less
 * than @window ahead of @next. Anything else (a duplicate, a chunk of an
 * earlier session, a guess far ahead) is checked before any resource is
 * given to it and may end the DDP Stream.
 *
 * Return: true if valid.
 */
bool kiwi_sctp_ssn_valid(u16 next, u16 ssn, u16 window)
{
	if (window > KIWI_SCTP_SSN_WINDOW)
		window = KIWI_SCTP_SSN_WINDOW;
	return (u16)(ssn - next) < window;
}
