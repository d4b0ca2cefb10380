// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ULP framing draft-00 header codec and limits (see ulpf.h).
 */
#include "ulpf.h"

/**
 * kiwi_ulpf_mode_check() - can this framing configuration carry DDP?
 * @mode: enum kiwi_ulpf_mode.
 * @packing: several ULP PDUs per framing PDU.
 *
 * Return: 0 for alignment mode without packing, -EOPNOTSUPP for marker mode
 * or packing (ULPF-022: an unsupported mode fails), -EINVAL otherwise.
 */
int kiwi_ulpf_mode_check(u32 mode, bool packing)
{
	if (mode == KIWI_ULPF_MODE_MARKERS || packing)
		return -EOPNOTSUPP;
	if (mode != KIWI_ULPF_MODE_ALIGN)
		return -EINVAL;
	return 0;
}

/**
 * kiwi_ulpf_max_pdu() - largest ULP PDU for alignment mode.
 * @emss: effective MSS of the connection.
 *
 * Return: EMSS minus the 8-octet header, at most 65528 (ULPF-003/006);
 * 0 when the header does not even fit (emergency mode is not supported).
 */
u32 kiwi_ulpf_max_pdu(u32 emss)
{
	if (emss <= KIWI_ULPF_HDR_LEN)
		return 0;
	return min(emss - KIWI_ULPF_HDR_LEN, (u32)KIWI_ULPF_PDU_MAX);
}

/**
 * kiwi_ulpf_hdr_build() - write an 8-octet framing header.
 * @hdr: 8 octets of output.
 * @len: octets of the framed PDU.
 * @key: the 6-octet key of this direction.
 */
void kiwi_ulpf_hdr_build(u8 *hdr, u16 len, const u8 *key)
{
	put_unaligned_be16(len, hdr);
	memcpy(hdr + 2, key, KIWI_ULPF_KEY_LEN);
}

/**
 * kiwi_ulpf_hdr_parse() - read an 8-octet framing header.
 * @hdr: 8 received octets.
 * @key: the key expected on this direction.
 * @len: output, the framed PDU length.
 *
 * Return: true if the key matches.
 */
bool kiwi_ulpf_hdr_parse(const u8 *hdr, const u8 *key, u16 *len)
{
	*len = get_unaligned_be16(hdr);
	return memcmp(hdr + 2, key, KIWI_ULPF_KEY_LEN) == 0;
}

static const u8 ulpf_pd_magic[8] = { 'K', 'I', 'W', 'I', 'U', 'L', 'P', 'F' };

/**
 * kiwi_ulpf_pd_build() - write the startup field (see ulpf.h).
 * @p: KIWI_ULPF_PD_LEN octets of output.
 * @key: the key this side transmits with.
 *
 * The field asks for alignment mode without packing, the only mode kiwi
 * receives.
 */
void kiwi_ulpf_pd_build(u8 *p, const u8 *key)
{
	memcpy(p, ulpf_pd_magic, sizeof(ulpf_pd_magic));
	p[8] = KIWI_ULPF_MODE_ALIGN;
	p[9] = 0;
	memcpy(p + 10, key, KIWI_ULPF_KEY_LEN);
}

/**
 * kiwi_ulpf_pd_parse() - read the startup field at the start of private data.
 * @p: the private data (after the RFC 6581 field).
 * @len: its octets.
 * @key: output, the peer's transmit key, when 0 is returned.
 *
 * Return: 0; -ENOENT when the private data does not start with the field;
 * -EOPNOTSUPP or -EINVAL when the peer asks for a mode kiwi cannot send
 * (kiwi_ulpf_mode_check(), ULPF-022).
 */
int kiwi_ulpf_pd_parse(const u8 *p, size_t len, u8 *key)
{
	int rv;

	if (len < KIWI_ULPF_PD_LEN ||
	    memcmp(p, ulpf_pd_magic, sizeof(ulpf_pd_magic)))
		return -ENOENT;
	rv = kiwi_ulpf_mode_check(p[8], p[9] & KIWI_ULPF_PD_PACKING);
	if (rv)
		return rv;
	memcpy(key, p + 10, KIWI_ULPF_KEY_LEN);
	return 0;
}
