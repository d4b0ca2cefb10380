// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// DDP out-of-order placement of an untagged message (RFC 5041 section
// 5.3, seeds-digest 1.5): the record of placed octets that kiwi.ko's
// rx_early.c consults before it places a Send segment that arrived ahead
// of a gap (DDP over SCTP), live-tested by tests/vm/pair/cases/sctp.sh.
#include <gtest/gtest.h>

#include <algorithm>

#include "proto/ddp_runs.h"

namespace {

// Place [lo, hi) if the record allows it; return whether it did.
bool place(kiwi_ddp_runs *r, uint32_t in_order, uint32_t lo, uint32_t hi)
{
	if (!kiwi_ddp_runs_fits(r, in_order, lo, hi))
		return false;
	kiwi_ddp_runs_add(r, lo, hi);
	return true;
}

uint64_t covered(const kiwi_ddp_runs &r)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < r.n; i++)
		n += r.hi[i] - r.lo[i];
	return n;
}

// Segments of a 3 x 1432-octet message in every arrival order: each is
// placed once, nothing twice, and the runs end up covering all of it.
TEST(DdpRuns, EveryOrderCoversTheMessageOnce)
{
	const uint32_t seg = 1432;
	int order[3] = {0, 1, 2};

	do {
		kiwi_ddp_runs r = {};

		for (int i : order)
			EXPECT_TRUE(place(&r, 0, i * seg, (i + 1) * seg));
		EXPECT_EQ(covered(r), 3u * seg);
		for (int i = 0; i < 3; i++)
			EXPECT_FALSE(kiwi_ddp_runs_fits(&r, 0, i * seg,
							(i + 1) * seg));
	} while (std::next_permutation(order, order + 3));
}

// A duplicate, and any segment that overlaps a placed one by an octet,
// is refused; one that only touches it is not.
TEST(DdpRuns, OverlapAndDuplicateAreRefused)
{
	kiwi_ddp_runs r = {};

	ASSERT_TRUE(place(&r, 0, 1000, 2000));
	EXPECT_FALSE(kiwi_ddp_runs_fits(&r, 0, 1000, 2000));
	EXPECT_FALSE(kiwi_ddp_runs_fits(&r, 0, 1999, 2500));
	EXPECT_FALSE(kiwi_ddp_runs_fits(&r, 0, 500, 1001));
	EXPECT_FALSE(kiwi_ddp_runs_fits(&r, 0, 1200, 1300));
	EXPECT_FALSE(kiwi_ddp_runs_fits(&r, 0, 0, 3000));
	EXPECT_TRUE(kiwi_ddp_runs_fits(&r, 0, 2000, 2100));
	EXPECT_TRUE(kiwi_ddp_runs_fits(&r, 0, 900, 1000));
}

// The message in progress: octets placed in order, [0, in_order), count
// as placed too.
TEST(DdpRuns, OctetsPlacedInOrderCount)
{
	kiwi_ddp_runs r = {};

	EXPECT_FALSE(kiwi_ddp_runs_fits(&r, 1432, 0, 1432));
	EXPECT_FALSE(kiwi_ddp_runs_fits(&r, 1432, 1000, 2000));
	EXPECT_TRUE(kiwi_ddp_runs_fits(&r, 1432, 1432, 2864));
	EXPECT_TRUE(kiwi_ddp_runs_fits(&r, 1432, 4000, 5000));
}

// Empty ranges are never placed.
TEST(DdpRuns, EmptyRangeIsRefused)
{
	kiwi_ddp_runs r = {};

	EXPECT_FALSE(kiwi_ddp_runs_fits(&r, 0, 5, 5));
	EXPECT_FALSE(kiwi_ddp_runs_fits(&r, 0, 6, 5));
}

// The record is bounded: a fifth separate run does not fit, a range that
// joins a run still does.
TEST(DdpRuns, RoomIsBounded)
{
	kiwi_ddp_runs r = {};

	for (uint32_t i = 0; i < KIWI_DDP_RUNS_MAX; i++)
		ASSERT_TRUE(place(&r, 0, i * 100, i * 100 + 10));
	EXPECT_FALSE(kiwi_ddp_runs_fits(&r, 0, 1000, 1010));
	EXPECT_TRUE(place(&r, 0, 10, 20));
	EXPECT_TRUE(place(&r, 0, 90, 100));
	EXPECT_EQ(r.n, (uint32_t)KIWI_DDP_RUNS_MAX);
	EXPECT_EQ(covered(r), 4u * 10 + 20);
}

} // namespace
