// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// DDP segment header codec (RFC 5041 section 4): golden bytes, round trips,
// reserved bits, short segments.
#include <gtest/gtest.h>

#include <random>

#include "ddp_test_util.h"

using namespace ddptest;

namespace {

// DDP-029/033: the Send header of RFC 5044 Figure 5 (offsets 0006..0017).
TEST(DdpHdr, GoldenUntaggedFigure5)
{
	const Bytes wire = {0x41, 0x43, 0, 0, 0, 0, 0, 0, 0,
			    0,	  0,	0, 0, 1, 0, 0, 0, 0};
	kiwi_ddp_hdr h;

	ASSERT_EQ(18, kiwi_ddp_hdr_decode(&h, wire.data(), wire.size()));
	EXPECT_FALSE(h.tagged);
	EXPECT_TRUE(h.last);
	EXPECT_EQ(1, h.dv);
	EXPECT_EQ(0x43, h.ulp_ctrl);
	EXPECT_EQ(0u, h.qn);
	EXPECT_EQ(1u, h.msn);
	EXPECT_EQ(0u, h.mo);
	EXPECT_EQ(wire, encode(untagged(KIWI_RDMAP_SEND, 0, 1, 0)));
}

// DDP-021: tagged layout, every field big-endian at its offset.
TEST(DdpHdr, GoldenTagged)
{
	const Bytes wire = {0xc1, 0x40, 0x12, 0x34, 0x56, 0x78, 0x01,
			    0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
	kiwi_ddp_hdr h;

	ASSERT_EQ(14, kiwi_ddp_hdr_decode(&h, wire.data(), wire.size()));
	EXPECT_TRUE(h.tagged);
	EXPECT_TRUE(h.last);
	EXPECT_EQ(0x12345678u, h.stag);
	EXPECT_EQ(0x0102030405060708ull, h.to);
	EXPECT_EQ(0u, h.qn);
	EXPECT_EQ(wire, encode(tagged(KIWI_RDMAP_WRITE, 0x12345678,
				      0x0102030405060708ull)));
}

// RDMAP-02/DDP-030: the untagged RsvdULP[8:39] word (Invalidate STag).
TEST(DdpHdr, UntaggedUlpWord)
{
	kiwi_ddp_hdr h = untagged(KIWI_RDMAP_SEND_INV, 0, 7, 1482, false);
	kiwi_ddp_hdr d;

	h.ulp_word = 0xdeadbeef;
	Bytes b = encode(h);
	EXPECT_EQ(0x01, b[0]); // T=0, L=0, DV=1
	EXPECT_EQ(0x44, b[1]);
	EXPECT_EQ(Bytes({0xde, 0xad, 0xbe, 0xef}),
		  Bytes(b.begin() + 2, b.begin() + 6));
	ASSERT_EQ(18, kiwi_ddp_hdr_decode(&d, b.data(), b.size()));
	EXPECT_EQ(0xdeadbeefu, d.ulp_word);
	EXPECT_EQ(1482u, d.mo);
	EXPECT_FALSE(d.last);
}

// DDP-018: reserved bits are sent as zero and not checked on receive.
TEST(DdpHdr, ReservedBitsZeroOnTxIgnoredOnRx)
{
	kiwi_ddp_hdr h = untagged(KIWI_RDMAP_SEND, 0, 1, 0);
	kiwi_ddp_hdr d;

	h.rsvd = 0xf;
	Bytes b = encode(h);
	EXPECT_EQ(0, b[0] & KIWI_DDP_CTRL_RSVD);
	b[0] |= KIWI_DDP_CTRL_RSVD;
	ASSERT_EQ(18, kiwi_ddp_hdr_decode(&d, b.data(), b.size()));
	EXPECT_EQ(0xf, d.rsvd);
	EXPECT_EQ(KIWI_TERM_ERR_NONE, kiwi_ddp_check_version(&d));
	EXPECT_EQ(1u, d.msn);
}

// DDP-037: a segment shorter than its header is rejected, never over-read.
TEST(DdpHdr, ShortSegmentRejected)
{
	Bytes b = encode(untagged(KIWI_RDMAP_SEND, 0, 1, 0));
	kiwi_ddp_hdr d;

	for (uint32_t len = 0; len < 18; len++)
		EXPECT_EQ(-EBADMSG, kiwi_ddp_hdr_decode(&d, b.data(), len))
			<< len;
	b = encode(tagged(KIWI_RDMAP_WRITE, 1, 2));
	for (uint32_t len = 0; len < 14; len++)
		EXPECT_EQ(-EBADMSG, kiwi_ddp_hdr_decode(&d, b.data(), len))
			<< len;
	EXPECT_EQ(14, kiwi_ddp_hdr_decode(&d, b.data(), 14));
}

TEST(DdpHdr, HeaderLengthFromControl)
{
	for (unsigned c = 0; c < 256; c++)
		EXPECT_EQ(c & 0x80 ? 14u : 18u, kiwi_ddp_hdr_len((uint8_t)c));
}

// Round trip of random headers: decode(encode(h)) == h, encode(decode(b)) == b
// with the reserved bits cleared.
TEST(DdpHdr, RandomRoundTrip)
{
	std::mt19937_64 rng(5041);

	for (int i = 0; i < 20000; i++) {
		Bytes b(18);
		for (auto &x : b)
			x = (uint8_t)rng();
		kiwi_ddp_hdr d, d2;
		int n = kiwi_ddp_hdr_decode(&d, b.data(), b.size());
		ASSERT_EQ((int)kiwi_ddp_hdr_len(b[0]), n);
		Bytes e = encode(d);
		Bytes want(b.begin(), b.begin() + n);
		want[0] &= (uint8_t)~KIWI_DDP_CTRL_RSVD;
		ASSERT_EQ(want, e);
		ASSERT_EQ(n, kiwi_ddp_hdr_decode(&d2, e.data(), e.size()));
		EXPECT_EQ(d.tagged, d2.tagged);
		EXPECT_EQ(d.last, d2.last);
		EXPECT_EQ(d.dv, d2.dv);
		EXPECT_EQ(d.ulp_ctrl, d2.ulp_ctrl);
		EXPECT_EQ(d.ulp_word, d2.ulp_word);
		EXPECT_EQ(d.stag, d2.stag);
		EXPECT_EQ(d.to, d2.to);
		EXPECT_EQ(d.qn, d2.qn);
		EXPECT_EQ(d.msn, d2.msn);
		EXPECT_EQ(d.mo, d2.mo);
	}
}

// DDP-032/034: MSN increments by one and wraps from 0xffffffff to 0.
TEST(DdpHdr, MsnWrap)
{
	EXPECT_EQ(2u, kiwi_ddp_msn_next(KIWI_DDP_MSN_INIT));
	EXPECT_EQ(0xffffffffu, kiwi_ddp_msn_next(0xfffffffeu));
	EXPECT_EQ(0u, kiwi_ddp_msn_next(0xffffffffu));
	EXPECT_EQ(1u, kiwi_ddp_msn_next(0u));
	Bytes b = encode(untagged(KIWI_RDMAP_SEND, 0,
				  kiwi_ddp_msn_next(0xffffffffu), 0));
	EXPECT_EQ(Bytes({0, 0, 0, 0}), Bytes(b.begin() + 10, b.begin() + 14));
}

} // namespace
