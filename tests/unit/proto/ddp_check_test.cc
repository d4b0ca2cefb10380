// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// DDP receive validation (RFC 5041 section 7.1) and every error number of
// section 7.2 (DDP-046, DDP-066, DDP-068, DDP-073, SEC-01..05, SEC-08/10),
// the stream's own rights and MO continuity on an in-order LLP.
#include <gtest/gtest.h>

#include "ddp_test_util.h"

using namespace ddptest;

namespace {

const kiwi_ddp_stream stream = {
	.pd = 3,
	.qp = 17,
	.access = KIWI_DDP_ACC_REMOTE_WRITE | KIWI_DDP_ACC_REMOTE_READ,
};

kiwi_ddp_stag_info mr(uint64_t base, uint64_t len)
{
	kiwi_ddp_stag_info st{};
	st.valid = true;
	st.pd = 3;
	st.qp = KIWI_DDP_ANY_QP;
	st.access = KIWI_DDP_ACC_REMOTE_WRITE | KIWI_DDP_ACC_LOCAL_WRITE;
	st.base = base;
	st.len = len;
	return st;
}

enum kiwi_term_err wr(uint64_t to, uint32_t len, const kiwi_ddp_stag_info *st)
{
	kiwi_ddp_hdr h = tagged(KIWI_RDMAP_WRITE, 0x100, to);

	return kiwi_ddp_check_tagged(&h, len, KIWI_DDP_ACC_REMOTE_WRITE,
				     &stream, st);
}

TEST(DdpCheckTagged, ValidWrite)
{
	auto st = mr(0x10000, 4096);

	EXPECT_EQ(KIWI_TERM_ERR_NONE, wr(0x10000, 4096, &st));
	EXPECT_EQ(KIWI_TERM_ERR_NONE, wr(0x10800, 2048, &st));
}

// SEC-01/DDP-025: unknown STag, invalidated STag -> (1, 1, 00).
TEST(DdpCheckTagged, InvalidStag)
{
	auto st = mr(0, 4096);

	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_INVALID_STAG, wr(0, 1, nullptr));
	st.valid = false;
	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_INVALID_STAG, wr(0, 1, &st));
}

// SEC-02/03, DDP-074/075/077/084/085: PD and stream association -> (1, 1, 02).
TEST(DdpCheckTagged, StagNotOnStream)
{
	auto st = mr(0, 4096);

	st.pd = 4;
	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_STAG_STREAM, wr(0, 1, &st));
	st = mr(0, 4096);
	st.qp = 18; // memory window bound to another QP
	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_STAG_STREAM, wr(0, 1, &st));
	st.qp = 17; // bound to this QP
	EXPECT_EQ(KIWI_TERM_ERR_NONE, wr(0, 1, &st));
}

// SEC-04/DDP-086: bounds exact to the octet -> (1, 1, 01).
TEST(DdpCheckTagged, BoundsExactToTheOctet)
{
	auto st = mr(0x1000, 0x100);

	EXPECT_EQ(KIWI_TERM_ERR_NONE, wr(0x1000, 0x100, &st));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_BOUNDS, wr(0x0fff, 0x100, &st));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_BOUNDS, wr(0x1000, 0x101, &st));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_BOUNDS, wr(0x1001, 0x100, &st));
	EXPECT_EQ(KIWI_TERM_ERR_NONE, wr(0x10ff, 1, &st));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_BOUNDS, wr(0x1100, 1, &st));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_BOUNDS,
		  wr(0xffffffff00001000ull, 1, &st));
}

// SEC-05: TO + length beyond 2^64 is a TO wrap (1, 1, 03), even when the
// wrapped sum lands inside the buffer.
TEST(DdpCheckTagged, ToWrap)
{
	auto st = mr(0, 0x1000);

	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_TO_WRAP, wr(~0ull - 7, 16, &st));
	auto top = mr(~0ull - 0xff, 0x100);
	EXPECT_EQ(KIWI_TERM_ERR_NONE, wr(~0ull - 0xff, 0x100, &top));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_TO_WRAP, wr(~0ull - 0xff, 0x101, &top));
	EXPECT_EQ(0, kiwi_ddp_to_range(0, ~0ull, ~0ull - 1, 1));
	EXPECT_EQ(-ERANGE, kiwi_ddp_to_range(0, ~0ull, ~0ull, 1));
	EXPECT_EQ(-EOVERFLOW, kiwi_ddp_to_range(0, ~0ull, ~0ull, 2));
	EXPECT_EQ(-ERANGE, kiwi_ddp_to_range(10, 5, 9, 1));
}

// SEC-10/DDP-020: DV != 1 on a tagged segment -> (1, 1, 04), even for zero
// length; the version is checked before the STag.
TEST(DdpCheckTagged, Version)
{
	for (uint8_t dv : {0, 2, 3}) {
		kiwi_ddp_hdr h = tagged(KIWI_RDMAP_WRITE, 1, 0);
		h.dv = dv;
		EXPECT_EQ(KIWI_TERM_ERR_DDP_T_VERSION,
			  kiwi_ddp_check_tagged(&h, 0, 0, &stream, nullptr));
		EXPECT_EQ(KIWI_TERM_ERR_DDP_T_VERSION,
			  kiwi_ddp_check_tagged(&h, 10, 0, &stream, nullptr));
	}
}

// DDP-046: zero-length tagged segments: STag and TO are not checked.
TEST(DdpCheckTagged, ZeroLengthNotChecked)
{
	auto st = mr(0, 16);

	EXPECT_EQ(KIWI_TERM_ERR_NONE, wr(0xdeadbeef, 0, nullptr));
	st.pd = 99;
	EXPECT_EQ(KIWI_TERM_ERR_NONE, wr(~0ull, 0, &st));
}

// SEC-07: a read-only STag is not writable; DDP has no access code, so
// kiwi reports the RDMAP access-rights error (0, 1, 02).
TEST(DdpCheckTagged, AccessRights)
{
	auto st = mr(0, 4096);
	kiwi_ddp_hdr h = tagged(KIWI_RDMAP_READ_RESP, 0x100, 0);

	st.access = KIWI_DDP_ACC_REMOTE_READ;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_ACCESS, wr(0, 1, &st));
	st.access = KIWI_DDP_ACC_LOCAL_WRITE;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_ACCESS, wr(0, 1, &st));
	EXPECT_EQ(KIWI_TERM_ERR_NONE,
		  kiwi_ddp_check_tagged(&h, 1, KIWI_DDP_ACC_LOCAL_WRITE,
					&stream, &st));
}

// RFC 5040 section 8.1.1: a QP whose consumer allows no remote writes
// refuses a Write into any STag (0, 1, 02), before the STag is looked at;
// a Read Response sink needs no remote right of the stream.
TEST(DdpCheckTagged, StreamRights)
{
	const kiwi_ddp_stream ro = {
		.pd = 3, .qp = 17, .access = KIWI_DDP_ACC_REMOTE_READ};
	auto st = mr(0, 4096);
	kiwi_ddp_hdr h = tagged(KIWI_RDMAP_WRITE, 0x100, 0);
	kiwi_ddp_hdr rr = tagged(KIWI_RDMAP_READ_RESP, 0x100, 0);

	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_ACCESS,
		  kiwi_ddp_check_tagged(&h, 1, KIWI_DDP_ACC_REMOTE_WRITE, &ro,
					&st));
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_ACCESS,
		  kiwi_ddp_check_tagged(&h, 1, KIWI_DDP_ACC_REMOTE_WRITE, &ro,
					nullptr));
	EXPECT_EQ(KIWI_TERM_ERR_NONE,
		  kiwi_ddp_check_tagged(&h, 0, KIWI_DDP_ACC_REMOTE_WRITE, &ro,
					nullptr));
	EXPECT_EQ(KIWI_TERM_ERR_NONE,
		  kiwi_ddp_check_tagged(&rr, 1, KIWI_DDP_ACC_LOCAL_WRITE, &ro,
					&st));
}

// Order of checks: invalid STag beats association beats bounds.
TEST(DdpCheckTagged, CheckOrder)
{
	auto st = mr(0, 16);

	st.pd = 9;
	st.access = 0;
	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_STAG_STREAM, wr(100, 100, &st));
	st.pd = 3;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_ACCESS, wr(100, 100, &st));
	st.valid = false;
	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_INVALID_STAG, wr(100, 100, &st));
}

kiwi_ddp_queue_view queue(uint32_t msn_lo, uint32_t win, uint32_t buf_len,
			  bool has_buf = true, uint32_t mo_next = 0)
{
	kiwi_ddp_queue_view q{};
	q.msn_lo = msn_lo;
	q.msn_win = win;
	q.has_buf = has_buf;
	q.buf_len = buf_len;
	q.mo_next = mo_next;
	return q;
}

enum kiwi_term_err send(uint32_t msn, uint32_t mo, uint32_t len,
			const kiwi_ddp_queue_view *q)
{
	kiwi_ddp_hdr h = untagged(KIWI_RDMAP_SEND, 0, msn, mo);

	return kiwi_ddp_check_untagged(&h, len, q);
}

TEST(DdpCheckUntagged, ValidSend)
{
	auto q = queue(1, 1, 2048);
	auto second = queue(1, 1, 2048, true, 1482);

	EXPECT_EQ(KIWI_TERM_ERR_NONE, send(1, 0, 1482, &q));
	EXPECT_EQ(KIWI_TERM_ERR_NONE, send(1, 1482, 566, &second));
}

// DDP-017/052: on an in-order LLP each segment starts where the placed
// octets end, so an L = 1 segment completes a whole message. A first
// segment with MO > 0 (a Send that is only its last segment), a gap and an
// overlap are all "invalid MO" (1, 2, 04), as siw reports them.
TEST(DdpCheckUntagged, MoContinuity)
{
	auto first = queue(1, 1, 4096);
	auto mid = queue(1, 1, 4096, true, 1000);

	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_MO, send(1, 1000, 24, &first));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_MO, send(1, 1, 0, &first));
	EXPECT_EQ(KIWI_TERM_ERR_NONE, send(1, 1000, 24, &mid));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_MO, send(1, 1001, 24, &mid));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_MO, send(1, 999, 24, &mid));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_MO, send(1, 0, 24, &mid));
	// MSN and buffer errors are reported before the MO.
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_MSN_RANGE, send(2, 1001, 24, &mid));
}

// SEC-08: each untagged error number (1, 2, 01..05).
TEST(DdpCheckUntagged, ErrorNumbers)
{
	auto q = queue(5, 1, 1000);
	auto full = queue(5, 1, 1000, true, 1000);
	auto end = queue(5, 1, 1000, true, 999);
	auto nobuf = queue(5, 1, 0, false);

	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_INVALID_QN, send(5, 0, 1, nullptr));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_MSN_NOBUF, send(5, 0, 1, &nobuf));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_MSN_RANGE, send(6, 0, 1, &q));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_MSN_RANGE, send(4, 0, 1, &q));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_MO, send(5, 1001, 0, &q));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_TOO_LONG, send(5, 1000, 1, &full));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_TOO_LONG, send(5, 0, 1001, &q));
	EXPECT_EQ(KIWI_TERM_ERR_NONE, send(5, 1000, 0, &full));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_MO,
		  send(5, 0xffffffffu, 0xffffffffu, &q));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_TOO_LONG,
		  send(5, 999, 0xffffffffu, &end));
}

// SEC-10: DV != 1 on an untagged segment -> (1, 2, 06).
TEST(DdpCheckUntagged, Version)
{
	auto q = queue(1, 1, 100);
	kiwi_ddp_hdr h = untagged(KIWI_RDMAP_SEND, 0, 1, 0);

	h.dv = 0;
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_VERSION,
		  kiwi_ddp_check_untagged(&h, 1, &q));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_VERSION,
		  kiwi_ddp_check_untagged(&h, 1, nullptr));
}

// DDP-034: the MSN window is computed modulo 2^32 across the wrap.
TEST(DdpCheckUntagged, MsnWindowAcrossWrap)
{
	auto q = queue(0xfffffffeu, 4, 100);

	EXPECT_EQ(KIWI_TERM_ERR_NONE, send(0xfffffffeu, 0, 1, &q));
	EXPECT_EQ(KIWI_TERM_ERR_NONE, send(0xffffffffu, 0, 1, &q));
	EXPECT_EQ(KIWI_TERM_ERR_NONE, send(0, 0, 1, &q));
	EXPECT_EQ(KIWI_TERM_ERR_NONE, send(1, 0, 1, &q));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_MSN_RANGE, send(2, 0, 1, &q));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_MSN_RANGE, send(0xfffffffdu, 0, 1, &q));
	auto closed = queue(1, 0, 100);
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_MSN_RANGE, send(1, 0, 1, &closed));
}

// RDMAP-17: a zero-length Send still needs a buffer (it consumes one).
TEST(DdpCheckUntagged, ZeroLengthNeedsBuffer)
{
	auto nobuf = queue(1, 1, 0, false);
	auto empty = queue(1, 1, 0);

	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_MSN_NOBUF, send(1, 0, 0, &nobuf));
	EXPECT_EQ(KIWI_TERM_ERR_NONE, send(1, 0, 0, &empty));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_TOO_LONG, send(1, 0, 1, &empty));
}

// Header type and check function must agree; misuse is a local error.
TEST(DdpCheck, WrongHeaderTypeIsCatastrophic)
{
	auto q = queue(1, 1, 100);
	auto st = mr(0, 100);
	kiwi_ddp_hdr t = tagged(KIWI_RDMAP_WRITE, 1, 0);
	kiwi_ddp_hdr u = untagged(KIWI_RDMAP_SEND, 0, 1, 0);

	EXPECT_EQ(KIWI_TERM_ERR_DDP_CATASTROPHIC,
		  kiwi_ddp_check_untagged(&t, 1, &q));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_CATASTROPHIC,
		  kiwi_ddp_check_tagged(&u, 1, 0, &stream, &st));
}

} // namespace
