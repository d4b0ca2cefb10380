// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// DDP segmentation planner (RFC 5041 section 5.2): the seed examples, zero
// length, limits and a randomised property check.
#include <gtest/gtest.h>

#include <random>

#include "ddp_test_util.h"

using namespace ddptest;

namespace {

std::vector<kiwi_ddp_seg> plan(bool tagged, uint32_t len, uint64_t to,
			       uint32_t mulpdu)
{
	kiwi_ddp_seg_iter it;
	kiwi_ddp_seg s;
	std::vector<kiwi_ddp_seg> v;

	EXPECT_EQ(0, kiwi_ddp_seg_init(&it, tagged, len, to, mulpdu));
	while (kiwi_ddp_seg_next(&it, &s))
		v.push_back(s);
	EXPECT_FALSE(kiwi_ddp_seg_next(&it, &s));
	return v;
}

// DDP-036/042: 2048 octets untagged at MULPDU 1500 -> MO 0 (1482), MO 1482
// (566).
TEST(DdpSeg, SeedExampleUntagged)
{
	auto v = plan(false, 2048, 0, 1500);

	ASSERT_EQ(2u, v.size());
	EXPECT_EQ(0u, v[0].mo);
	EXPECT_EQ(1482u, v[0].len);
	EXPECT_FALSE(v[0].last);
	EXPECT_EQ(1482u, v[1].mo);
	EXPECT_EQ(566u, v[1].len);
	EXPECT_TRUE(v[1].last);
	EXPECT_EQ(2u, kiwi_ddp_seg_count(false, 2048, 1500));
}

// DDP-044: 2048 octets tagged at TO 16384 -> TO 16384 (1486), 17870 (562).
TEST(DdpSeg, SeedExampleTagged)
{
	auto v = plan(true, 2048, 16384, 1500);

	ASSERT_EQ(2u, v.size());
	EXPECT_EQ(16384u, v[0].to);
	EXPECT_EQ(1486u, v[0].len);
	EXPECT_FALSE(v[0].last);
	EXPECT_EQ(17870u, v[1].to);
	EXPECT_EQ(562u, v[1].len);
	EXPECT_TRUE(v[1].last);
	EXPECT_EQ(0u, v[1].mo);
}

// DDP-045: a zero-length message is exactly one segment, with L = 1.
TEST(DdpSeg, ZeroLengthIsOneSegment)
{
	for (bool t : {false, true}) {
		auto v = plan(t, 0, 4096, 128);
		ASSERT_EQ(1u, v.size());
		EXPECT_EQ(0u, v[0].len);
		EXPECT_TRUE(v[0].last);
		EXPECT_EQ(t ? 4096u : 0u, v[0].to);
		EXPECT_EQ(1u, kiwi_ddp_seg_count(t, 0, 128));
	}
}

// An exact multiple of the payload size gives no empty trailing segment.
TEST(DdpSeg, ExactMultiple)
{
	auto v = plan(false, 2 * 1482, 0, 1500);

	ASSERT_EQ(2u, v.size());
	EXPECT_EQ(1482u, v[1].len);
	EXPECT_TRUE(v[1].last);
}

TEST(DdpSeg, MulpduTooSmall)
{
	kiwi_ddp_seg_iter it;
	kiwi_ddp_seg s;

	EXPECT_EQ(-EINVAL, kiwi_ddp_seg_init(&it, false, 10, 0, 18));
	EXPECT_FALSE(kiwi_ddp_seg_next(&it, &s));
	EXPECT_EQ(-EINVAL, kiwi_ddp_seg_init(&it, true, 10, 0, 14));
	EXPECT_EQ(0, kiwi_ddp_seg_init(&it, true, 10, 0, 15));
	EXPECT_EQ(0u, kiwi_ddp_seg_count(false, 10, 18));
	EXPECT_EQ(10u, kiwi_ddp_seg_count(true, 10, 15));
}

// DDP-002/003: MULPDU changes while a message is segmented (a path MTU
// change): segments handed out keep their size, the next ones follow the new
// MULPDU, offsets stay contiguous and only the final segment has L = 1.
TEST(DdpSeg, ResizeMidMessage)
{
	kiwi_ddp_seg_iter it;
	kiwi_ddp_seg s;

	ASSERT_EQ(0, kiwi_ddp_seg_init(&it, true, 5000, 4096, 1442));
	ASSERT_TRUE(kiwi_ddp_seg_next(&it, &s));
	EXPECT_EQ(1428u, s.len);
	ASSERT_EQ(0, kiwi_ddp_seg_resize(&it, 1202));
	ASSERT_TRUE(kiwi_ddp_seg_next(&it, &s));
	EXPECT_EQ(1428u, s.off);
	EXPECT_EQ(4096u + 1428u, s.to);
	EXPECT_EQ(1188u, s.len);
	EXPECT_FALSE(s.last);
	ASSERT_EQ(0, kiwi_ddp_seg_resize(&it, 8942));
	ASSERT_TRUE(kiwi_ddp_seg_next(&it, &s));
	EXPECT_EQ(2616u, s.off);
	EXPECT_EQ(2384u, s.len);
	EXPECT_TRUE(s.last);
	EXPECT_FALSE(kiwi_ddp_seg_next(&it, &s));
}

// A MULPDU that cannot carry the header is refused and changes nothing; an
// iterator whose init failed stays without segments.
TEST(DdpSeg, ResizeRefused)
{
	kiwi_ddp_seg_iter it;
	kiwi_ddp_seg s;

	ASSERT_EQ(0, kiwi_ddp_seg_init(&it, false, 100, 0, 128));
	EXPECT_EQ(-EINVAL, kiwi_ddp_seg_resize(&it, 18));
	ASSERT_TRUE(kiwi_ddp_seg_next(&it, &s));
	EXPECT_EQ(100u, s.len);
	EXPECT_EQ(-EOVERFLOW, kiwi_ddp_seg_init(&it, true, 9, ~0ull - 7, 1500));
	EXPECT_EQ(-EINVAL, kiwi_ddp_seg_resize(&it, 1500));
	EXPECT_FALSE(kiwi_ddp_seg_next(&it, &s));
}

// The tagged range must fit the 64-bit TO space (the peer reports TO wrap).
TEST(DdpSeg, TaggedToOverflow)
{
	kiwi_ddp_seg_iter it;
	const uint64_t top = ~0ull;

	EXPECT_EQ(0, kiwi_ddp_seg_init(&it, true, 8, top - 7, 1500));
	EXPECT_EQ(-EOVERFLOW, kiwi_ddp_seg_init(&it, true, 9, top - 7, 1500));
	EXPECT_EQ(0, kiwi_ddp_seg_init(&it, true, 0, top, 1500));
	EXPECT_EQ(0, kiwi_ddp_seg_init(&it, false, 9, top, 1500));
}

// Largest message (2^32 - 1, DDP-039) at the smallest MULPDU: counts agree.
TEST(DdpSeg, LargestMessageCount)
{
	const uint32_t len = 0xffffffffu;

	EXPECT_EQ(len / 110 + 1, kiwi_ddp_seg_count(false, len, 128));
	EXPECT_EQ(len / 64750 + 1, kiwi_ddp_seg_count(true, len, 64764));
}

// DDP-014/015/016/038/040/049/053, MPA-005/037: for random messages every
// segment fits MULPDU, segments are contiguous and increasing, cover the
// message exactly (so MO_last + len_last is the message length), and only the
// final (highest-offset, last handed out) segment has L = 1.
TEST(DdpSeg, RandomProperties)
{
	std::mt19937 rng(5);

	for (int i = 0; i < 3000; i++) {
		bool t = rng() & 1;
		uint32_t hdr = t ? 14 : 18;
		uint32_t mulpdu = 128 + rng() % (64768 - 127);
		uint32_t len = rng() % 300000;
		uint64_t to = t ? (uint64_t)rng() << 20 : 0;
		auto v = plan(t, len, to, mulpdu);
		uint64_t off = 0;

		ASSERT_EQ(kiwi_ddp_seg_count(t, len, mulpdu), v.size());
		for (size_t k = 0; k < v.size(); k++) {
			ASSERT_LE(v[k].len + hdr, mulpdu);
			ASSERT_EQ(off, v[k].off);
			if (t) {
				ASSERT_EQ(to + off, v[k].to);
			} else {
				ASSERT_EQ(off, v[k].mo);
			}
			ASSERT_EQ(k + 1 == v.size(), v[k].last);
			if (k + 1 < v.size()) {
				ASSERT_EQ(mulpdu - hdr, v[k].len);
			}
			off += v[k].len;
		}
		ASSERT_EQ(len, off);
	}
}

// RDMAP-01/03 + DDP-019/022/024/026/028/031/035, MPA-088: the headers of every
// segment of a multi-segment Write and Send carry constant STag / QN / MSN /
// RDMAP octet.
TEST(DdpSeg, SegmentHeadersFromRdmap)
{
	kiwi_ddp_seg_iter it;
	kiwi_ddp_seg s;
	kiwi_ddp_hdr h;
	int n = 0;

	ASSERT_EQ(0, kiwi_ddp_seg_init(&it, true, 10000, 0x1000, 1500));
	while (kiwi_ddp_seg_next(&it, &s)) {
		ASSERT_EQ(0, kiwi_rdmap_seg_hdr(&h, KIWI_RDMAP_WRITE, 0xabcd, 0,
						&s));
		Bytes b = encode(h);
		ASSERT_EQ(14u, b.size());
		EXPECT_EQ(s.last ? 0xc1 : 0x81, b[0]);
		EXPECT_EQ(0x40, b[1]);
		EXPECT_EQ(Bytes({0, 0, 0xab, 0xcd}),
			  Bytes(b.begin() + 2, b.begin() + 6));
		EXPECT_EQ(0x1000u + s.off, h.to);
		n++;
	}
	EXPECT_EQ(7, n);
	n = 0;
	ASSERT_EQ(0, kiwi_ddp_seg_init(&it, false, 3000, 0, 1500));
	while (kiwi_ddp_seg_next(&it, &s)) {
		ASSERT_EQ(0, kiwi_rdmap_seg_hdr(&h, KIWI_RDMAP_SEND_SE_INV,
						0x77, 9, &s));
		Bytes b = encode(h);
		EXPECT_EQ(s.last ? 0x41 : 0x01, b[0]);
		EXPECT_EQ(0x46, b[1]);
		EXPECT_EQ(0x77u, h.ulp_word);
		EXPECT_EQ(0u, h.qn);
		EXPECT_EQ(9u, h.msn);
		EXPECT_EQ(s.off, h.mo);
		n++;
	}
	EXPECT_EQ(3, n);
}

} // namespace
