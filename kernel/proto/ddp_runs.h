/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * DDP out-of-order placement: the octets of one untagged message placed
 * so far, kept as a few runs of message offsets (RFC 5041 section 5.3:
 * a Data Sink may place segments in any order, but must not let a
 * segment write octets another segment of the message already placed).
 *
 * kiwi.ko places a Send's segments that arrive ahead of a gap (DDP over
 * SCTP, kernel/rx_early.c) only if kiwi_ddp_runs_fits() allows it. The
 * record is small by design: a message split into more separate runs
 * than it holds is placed in order instead, so it needs no allocation.
 *
 * Pure code: no kernel objects, no locks, no allocation.
 */
#ifndef KIWI_PROTO_DDP_RUNS_H
#define KIWI_PROTO_DDP_RUNS_H

#include "platform.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Separate runs of placed octets one record holds. */
#define KIWI_DDP_RUNS_MAX	4

/**
 * struct kiwi_ddp_runs - placed octets of one message
 * @n: runs in @lo and @hi
 * @lo: message offset of each run's first octet
 * @hi: message offset just past each run's last octet (@lo < @hi)
 *
 * Runs never overlap; zero-initialise for a message with nothing placed.
 */
struct kiwi_ddp_runs {
	u32 n;
	u32 lo[KIWI_DDP_RUNS_MAX];
	u32 hi[KIWI_DDP_RUNS_MAX];
};

bool kiwi_ddp_runs_fits(const struct kiwi_ddp_runs *r, u32 in_order,
			u32 lo, u32 hi);
void kiwi_ddp_runs_add(struct kiwi_ddp_runs *r, u32 lo, u32 hi);

#ifdef __cplusplus
}
#endif

#endif /* KIWI_PROTO_DDP_RUNS_H */
