// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MPA framing configuration and sizes: pad and MULPDU (RFC 5044 sections
 * 4.1 and 4.5).
 */
#include "mpa.h"

/**
 * kiwi_mpa_cfg_check() - validate framing parameters.
 * @cfg: parameters of one direction.
 * @start_off: stream offset the direction starts at.
 *
 * Return: 0; -EINVAL for an unknown profile, CRC requested on ULPF00 (it has
 * none) or markers with a start offset that is not a multiple of 4;
 * -EOPNOTSUPP for markers on ULPF00 (draft-00 marker mode cannot carry DDP).
 */
int kiwi_mpa_cfg_check(const struct kiwi_mpa_cfg *cfg, u32 start_off)
{
	if (cfg->markers && start_off % 4)
		return -EINVAL;
	if (cfg->profile == KIWI_FRAME_MPA)
		return 0;
	if (cfg->profile != KIWI_FRAME_ULPF00)
		return -EINVAL;
	if (cfg->markers)
		return -EOPNOTSUPP;
	return cfg->crc ? -EINVAL : 0;
}

/**
 * kiwi_mpa_pad() - PAD octets after a ULPDU.
 * @ulpdu_len: ULPDU octets.
 *
 * Return: 0..3, so that ULPDU_Length field + ULPDU + PAD is a multiple of 4.
 */
u32 kiwi_mpa_pad(u32 ulpdu_len)
{
	return (4 - ((ulpdu_len + KIWI_MPA_HDR_LEN) & 3)) & 3;
}

/**
 * kiwi_mpa_mulpdu() - maximum ULPDU for an effective MSS.
 * @emss: min(TCP MSS, path MTU - headers), in octets.
 * @markers: markers are sent on this direction.
 *
 * With markers MULPDU = EMSS - (6 + 4 * ceil(EMSS / 512) + EMSS mod 4),
 * without them EMSS - (6 + EMSS mod 4) (MPA-035/036), then clamped to
 * [128, 64768] (MPA-006/038/039): the floor holds even for a tiny EMSS.
 *
 * Return: MULPDU in octets.
 */
u32 kiwi_mpa_mulpdu(u32 emss, bool markers)
{
	u32 overhead = KIWI_MPA_HDR_LEN + KIWI_MPA_CRC_LEN + (emss & 3);

	if (markers)
		overhead += KIWI_MPA_MARKER_LEN *
			    (emss / KIWI_MPA_MARKER_INTERVAL +
			     !!(emss % KIWI_MPA_MARKER_INTERVAL));
	if (emss <= overhead + KIWI_MPA_MULPDU_MIN)
		return KIWI_MPA_MULPDU_MIN;
	return min_t(u32, emss - overhead, KIWI_MPA_MULPDU_MAX);
}
