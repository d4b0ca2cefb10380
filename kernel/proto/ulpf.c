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
