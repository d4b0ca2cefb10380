// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Where FPDUs fall in the LLP's segments (RFC 5044 section 5 and Appendix
 * A.1): a transmitter SHOULD start every TCP segment with an FPDU; several
 * whole FPDUs may share one segment.
 *
 * The caller frames FPDUs into runs it hands to TCP in one send each, each
 * run starting a segment: TCP cuts a run into segments of its MSS from the
 * run's first octet. So a run whose FPDUs each fill a segment exactly, or
 * share one without crossing its end, keeps every segment starting with an
 * FPDU; the next run starts a segment of its own, or joins the last one
 * whole where it fits (kernel/llp_tcp.c). This file counts the octets in
 * the run's current segment and says when an FPDU must start the next run
 * instead.
 */
#include "mpa.h"

/**
 * kiwi_mpa_seg_init() - start a run.
 * @s: state to initialise.
 * @size: octets in one LLP segment (the EMSS); 0 turns alignment off.
 * @pack: several whole FPDUs may share a segment (MPA; not the ULP framing
 *	draft-00 profile, whose framing PDUs each take a segment of their own).
 */
void kiwi_mpa_seg_init(struct kiwi_mpa_seg *s, u32 size, bool pack)
{
	s->size = size;
	s->fill = 0;
	s->pack = pack;
}

/**
 * kiwi_mpa_seg_fits() - may the next FPDU go into the current run?
 * @s: run state.
 * @wire_len: octets the FPDU takes on the wire (kiwi_mpa_fpdu_wire_len()).
 *
 * The first FPDU of a run always fits (one larger than a segment, below an
 * EMSS of 136 octets where MULPDU stays 128, then spans segments). A later
 * one fits when it starts a segment, or with packing when it ends within
 * the segment it starts in.
 *
 * Return: true if the FPDU may follow in this run; false if the run must be
 * sent first.
 */
bool kiwi_mpa_seg_fits(const struct kiwi_mpa_seg *s, u32 wire_len)
{
	if (!s->size || !s->fill)
		return true;
	return s->pack && wire_len <= s->size - s->fill;
}

/**
 * kiwi_mpa_seg_add() - an FPDU of @wire_len octets was framed into the run.
 * @s: run state.
 * @wire_len: its octets on the wire.
 */
void kiwi_mpa_seg_add(struct kiwi_mpa_seg *s, u32 wire_len)
{
	if (s->size)
		s->fill = (s->fill + wire_len) % s->size;
}
