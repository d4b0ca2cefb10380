// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DDP segmentation planner (RFC 5041 section 5.2; see ddp.h).
 *
 * A message of n octets becomes ceil(n / (MULPDU - header)) segments, and
 * a zero-length message exactly one (DDP-045). Segment k carries offset
 * k * (MULPDU - header); tagged segments add that offset to the initial TO
 * (DDP-044), untagged ones send it as MO (DDP-042). Only the final segment
 * has L = 1 (DDP-014) and it carries the highest offset (DDP-016).
 */
#include "ddp.h"

static u32 kiwi_ddp_seg_hdr(bool tagged)
{
	return tagged ? KIWI_DDP_TAGGED_HDR_LEN : KIWI_DDP_UNTAGGED_HDR_LEN;
}

/**
 * kiwi_ddp_seg_init() - start segmenting one message.
 * @it: iterator to initialise.
 * @tagged: tagged (RDMA Write, Read Response) or untagged message.
 * @msg_len: message length; u32, so below 2^32 by type (DDP-039).
 * @to: initial TO of a tagged message; ignored for untagged ones.
 * @mulpdu: the LLP's current MULPDU, DDP header included.
 *
 * Return: 0; -EINVAL if @mulpdu cannot hold the header plus one payload
 * octet; -EOVERFLOW if the tagged range [@to, @to + @msg_len) does not fit
 * in the 64-bit TO space (the peer would report TO wrap).
 */
int kiwi_ddp_seg_init(struct kiwi_ddp_seg_iter *it, bool tagged, u32 msg_len,
		      u64 to, u32 mulpdu)
{
	u32 hlen = kiwi_ddp_seg_hdr(tagged);

	memset(it, 0, sizeof(*it));
	if (mulpdu <= hlen)
		return -EINVAL;
	if (tagged && msg_len && to > ~(u64)0 - (msg_len - 1))
		return -EOVERFLOW;
	it->tagged = tagged;
	it->msg_len = msg_len;
	it->to = tagged ? to : 0;
	it->max_payload = mulpdu - hlen;
	return 0;
}

/**
 * kiwi_ddp_seg_resize() - change MULPDU for the segments not handed out yet.
 * @it: iterator from kiwi_ddp_seg_init().
 * @mulpdu: the LLP's MULPDU now, DDP header included.
 *
 * The LLP's MULPDU may change while a message is being segmented (a new
 * path MTU; DDP-002). Segments handed out keep their size (DDP-003), the
 * next ones are cut to the new MULPDU; offsets stay contiguous.
 *
 * Return: 0; -EINVAL if @mulpdu cannot hold the header plus one payload
 * octet, or if kiwi_ddp_seg_init() failed on @it (@it is unchanged: it
 * hands out no segment).
 */
int kiwi_ddp_seg_resize(struct kiwi_ddp_seg_iter *it, u32 mulpdu)
{
	u32 hlen = kiwi_ddp_seg_hdr(it->tagged);

	if (!it->max_payload || mulpdu <= hlen)
		return -EINVAL;
	it->max_payload = mulpdu - hlen;
	return 0;
}

/**
 * kiwi_ddp_seg_next() - the next segment of the message.
 * @it: iterator from kiwi_ddp_seg_init().
 * @seg: output.
 *
 * Return: true if @seg holds a segment, false once the L = 1 segment has
 * been returned.
 */
bool kiwi_ddp_seg_next(struct kiwi_ddp_seg_iter *it, struct kiwi_ddp_seg *seg)
{
	u32 left;

	if (it->done || !it->max_payload)
		return false;
	left = it->msg_len - it->off;
	seg->off = it->off;
	seg->len = min(left, it->max_payload);
	seg->to = it->tagged ? it->to + it->off : 0;
	seg->mo = it->tagged ? 0 : it->off;
	seg->last = seg->len == left;
	it->off += seg->len;
	it->done = seg->last;
	return true;
}

/**
 * kiwi_ddp_seg_count() - number of segments a message needs.
 * @tagged: tagged message.
 * @msg_len: message length.
 * @mulpdu: MULPDU, DDP header included.
 *
 * Return: the segment count (1 for a zero-length message), or 0 if @mulpdu
 * cannot hold the header plus one payload octet.
 */
u32 kiwi_ddp_seg_count(bool tagged, u32 msg_len, u32 mulpdu)
{
	u32 hlen = kiwi_ddp_seg_hdr(tagged);
	u32 per;

	if (mulpdu <= hlen)
		return 0;
	per = mulpdu - hlen;
	if (!msg_len)
		return 1;
	return msg_len / per + (msg_len % per ? 1 : 0);
}
