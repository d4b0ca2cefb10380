// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DDP out-of-order placement: the placed octets of one untagged message
 * (ddp_runs.h).
 */
#include "ddp_runs.h"

/**
 * kiwi_ddp_runs_fits() - may octets [@lo, @hi) of the message be placed?
 * @r: what was placed out of order
 * @in_order: octets [0, @in_order) placed in order as well (0 if none)
 * @lo: message offset of the first octet (@lo < @hi)
 * @hi: message offset just past the last one
 *
 * Return: false if the range meets octets placed already, or if @r has
 * no room to record it (it neither joins a run nor finds a free one).
 */
bool kiwi_ddp_runs_fits(const struct kiwi_ddp_runs *r, u32 in_order,
			u32 lo, u32 hi)
{
	bool joins = false;
	u32 i;

	if (lo >= hi || lo < in_order)
		return false;
	for (i = 0; i < r->n; i++) {
		if (lo < r->hi[i] && r->lo[i] < hi)
			return false;
		joins = joins || r->hi[i] == lo || r->lo[i] == hi;
	}
	return joins || r->n < KIWI_DDP_RUNS_MAX;
}

/**
 * kiwi_ddp_runs_add() - record octets [@lo, @hi) as placed
 * @r: the record
 * @lo: message offset of the first octet
 * @hi: message offset just past the last one
 *
 * Only after kiwi_ddp_runs_fits() allowed the range: it extends the first
 * run it touches, or takes a free one.
 */
void kiwi_ddp_runs_add(struct kiwi_ddp_runs *r, u32 lo, u32 hi)
{
	u32 i;

	for (i = 0; i < r->n; i++) {
		if (r->hi[i] == lo) {
			r->hi[i] = hi;
			return;
		}
		if (r->lo[i] == hi) {
			r->lo[i] = lo;
			return;
		}
	}
	if (r->n < KIWI_DDP_RUNS_MAX) {
		r->lo[r->n] = lo;
		r->hi[r->n++] = hi;
	}
}

