// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Terminate (RFC 5040 sections 4.8, 7.1): the error table of every layer,
// copied-header rules, codec round trips, the full message and siw's
// swapped layout (RDMAP-09/10/19/23, DDP-070/073).
#include <gtest/gtest.h>

#include <random>

#include "ddp_test_util.h"

using namespace ddptest;

namespace {

struct Triple {
	kiwi_term_err err;
	uint8_t layer, etype, ecode;
};

// Written from RFC 5040 Fig. 9, RFC 5041 section 7.2, RFC 5044 and RFC 6581
// section 8, independently of term_code.c.
const Triple table[] = {
	{KIWI_TERM_ERR_RDMAP_CATASTROPHIC, 0, 0, 0x00},
	{KIWI_TERM_ERR_RDMAP_INVALID_STAG, 0, 1, 0x00},
	{KIWI_TERM_ERR_RDMAP_BOUNDS, 0, 1, 0x01},
	{KIWI_TERM_ERR_RDMAP_ACCESS, 0, 1, 0x02},
	{KIWI_TERM_ERR_RDMAP_STAG_STREAM, 0, 1, 0x03},
	{KIWI_TERM_ERR_RDMAP_TO_WRAP, 0, 1, 0x04},
	{KIWI_TERM_ERR_RDMAP_CANNOT_INVALIDATE, 0, 1, 0x09},
	{KIWI_TERM_ERR_RDMAP_PROT_UNSPEC, 0, 1, 0xff},
	{KIWI_TERM_ERR_RDMAP_VERSION, 0, 2, 0x05},
	{KIWI_TERM_ERR_RDMAP_OPCODE, 0, 2, 0x06},
	{KIWI_TERM_ERR_RDMAP_CATA_STREAM, 0, 2, 0x07},
	{KIWI_TERM_ERR_RDMAP_CATA_GLOBAL, 0, 2, 0x08},
	{KIWI_TERM_ERR_RDMAP_OP_CANNOT_INVALIDATE, 0, 2, 0x09},
	{KIWI_TERM_ERR_RDMAP_OP_UNSPEC, 0, 2, 0xff},
	{KIWI_TERM_ERR_DDP_CATASTROPHIC, 1, 0, 0x00},
	{KIWI_TERM_ERR_DDP_T_INVALID_STAG, 1, 1, 0x00},
	{KIWI_TERM_ERR_DDP_T_BOUNDS, 1, 1, 0x01},
	{KIWI_TERM_ERR_DDP_T_STAG_STREAM, 1, 1, 0x02},
	{KIWI_TERM_ERR_DDP_T_TO_WRAP, 1, 1, 0x03},
	{KIWI_TERM_ERR_DDP_T_VERSION, 1, 1, 0x04},
	{KIWI_TERM_ERR_DDP_U_INVALID_QN, 1, 2, 0x01},
	{KIWI_TERM_ERR_DDP_U_MSN_NOBUF, 1, 2, 0x02},
	{KIWI_TERM_ERR_DDP_U_MSN_RANGE, 1, 2, 0x03},
	{KIWI_TERM_ERR_DDP_U_MO, 1, 2, 0x04},
	{KIWI_TERM_ERR_DDP_U_TOO_LONG, 1, 2, 0x05},
	{KIWI_TERM_ERR_DDP_U_VERSION, 1, 2, 0x06},
	{KIWI_TERM_ERR_LLP_CLOSED, 2, 0, 0x01},
	{KIWI_TERM_ERR_LLP_CRC, 2, 0, 0x02},
	{KIWI_TERM_ERR_LLP_MARKER, 2, 0, 0x03},
	{KIWI_TERM_ERR_LLP_BAD_FRAME, 2, 0, 0x04},
	{KIWI_TERM_ERR_LLP_LOCAL_CATA, 2, 0, 0x05},
	{KIWI_TERM_ERR_LLP_IRD, 2, 0, 0x06},
	{KIWI_TERM_ERR_LLP_NO_RTR, 2, 0, 0x07},
};

// DDP-073/RDMAP-09: every error maps to its RFC triple, and back.
TEST(TermCode, EveryErrorHasItsTriple)
{
	ASSERT_EQ((size_t)KIWI_TERM_ERR_COUNT - 1,
		  sizeof(table) / sizeof(table[0]));
	for (const Triple &t : table) {
		kiwi_term_code c;
		ASSERT_EQ(0, kiwi_term_code_of(t.err, &c)) << t.err;
		EXPECT_EQ(t.layer, c.layer) << kiwi_term_err_name(t.err);
		EXPECT_EQ(t.etype, c.etype) << kiwi_term_err_name(t.err);
		EXPECT_EQ(t.ecode, c.ecode) << kiwi_term_err_name(t.err);
		EXPECT_EQ((int)t.err,
			  kiwi_term_err_lookup(t.layer, t.etype, t.ecode));
		EXPECT_STRNE("unknown", kiwi_term_err_name(t.err));
	}
	kiwi_term_code c;
	EXPECT_EQ(-EINVAL, kiwi_term_code_of(KIWI_TERM_ERR_NONE, &c));
	EXPECT_EQ(-EINVAL, kiwi_term_code_of(KIWI_TERM_ERR_COUNT, &c));
	EXPECT_STREQ("unknown", kiwi_term_err_name(KIWI_TERM_ERR_COUNT));
}

TEST(TermCode, LookupUnknownTriples)
{
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_CATASTROPHIC,
		  kiwi_term_err_lookup(0, 0, 0xff));
	EXPECT_EQ(-ENOENT, kiwi_term_err_lookup(0, 2, 0x02));
	EXPECT_EQ(-ENOENT, kiwi_term_err_lookup(1, 0, 0x01));
	EXPECT_EQ(-ENOENT, kiwi_term_err_lookup(1, 3, 0x00));
	EXPECT_EQ(-ENOENT, kiwi_term_err_lookup(2, 0, 0x08));
	EXPECT_EQ(-ENOENT, kiwi_term_err_lookup(3, 0, 0x00));
}

Bytes body(const kiwi_term &t)
{
	Bytes b(KIWI_TERM_BODY_MAX);
	int n = kiwi_term_encode(&t, b.data(), b.size());
	EXPECT_GE(n, 4);
	b.resize(n < 0 ? 0 : n);
	return b;
}

// Digest packing note: MPA insufficient IRD is 20 06 00 00; LLP errors
// carry no copied header.
TEST(TermEncode, GoldenLlp)
{
	kiwi_term t;

	ASSERT_EQ(0, kiwi_term_from_err(&t, KIWI_TERM_ERR_LLP_IRD, nullptr, 0));
	EXPECT_EQ(Bytes({0x20, 0x06, 0x00, 0x00}), body(t));
	ASSERT_EQ(0, kiwi_term_from_err(&t, KIWI_TERM_ERR_LLP_CRC, nullptr, 0));
	EXPECT_EQ(Bytes({0x20, 0x02, 0x00, 0x00}), body(t));
	Bytes seg = encode(untagged(KIWI_RDMAP_SEND, 0, 1, 0));
	ASSERT_EQ(0, kiwi_term_from_err(&t, KIWI_TERM_ERR_LLP_CRC, seg.data(),
					seg.size()));
	EXPECT_EQ(4u, body(t).size());
}

// DDP-070/RDMAP-10: a DDP error copies the DDP header and segment length.
TEST(TermEncode, DdpErrorCopiesDdpHeader)
{
	Bytes seg = encode(untagged(KIWI_RDMAP_SEND, 0, 7, 0));
	seg.resize(18 + 100, 0x5a);
	kiwi_term t;

	ASSERT_EQ(0, kiwi_term_from_err(&t, KIWI_TERM_ERR_DDP_U_MSN_NOBUF,
					seg.data(), seg.size()));
	Bytes b = body(t);
	Bytes want = {0x12, 0x02, 0xc0, 0x00, 0x00, 118};
	want.insert(want.end(), seg.begin(), seg.begin() + 18);
	EXPECT_EQ(want, b);

	Bytes tseg = encode(tagged(KIWI_RDMAP_WRITE, 0x99, 0x1234));
	tseg.resize(14 + 2, 0);
	ASSERT_EQ(0, kiwi_term_from_err(&t, KIWI_TERM_ERR_DDP_T_BOUNDS,
					tseg.data(), tseg.size()));
	b = body(t);
	ASSERT_EQ(4u + 2 + 14, b.size());
	EXPECT_EQ(0x11, b[0]);
	EXPECT_EQ(0x01, b[1]);
	EXPECT_EQ(0xc0, b[2]);
	EXPECT_EQ(Bytes(tseg.begin(), tseg.begin() + 14),
		  Bytes(b.begin() + 6, b.end()));
}

// RFC 5040 section 7.1 rule 3: RDMAP errors on a Read Request also copy the
// RDMA header (R); DDP errors on it do not; local catastrophic copies none.
TEST(TermEncode, ReadRequestCopiesRdmaHeader)
{
	Bytes seg = encode(untagged(KIWI_RDMAP_READ_REQ, 1, 3, 0));
	kiwi_rdmap_rreq r = {1, 2, 3, 4, 5};
	Bytes rh(28);
	kiwi_term t;

	kiwi_rdmap_rreq_encode(&r, rh.data());
	seg.insert(seg.end(), rh.begin(), rh.end());
	ASSERT_EQ(0, kiwi_term_from_err(&t, KIWI_TERM_ERR_RDMAP_BOUNDS,
					seg.data(), seg.size()));
	Bytes b = body(t);
	ASSERT_EQ(4u + 2 + 18 + 28, b.size());
	EXPECT_EQ(0x01, b[0]);
	EXPECT_EQ(0x01, b[1]);
	EXPECT_EQ(0xe0, b[2]);
	EXPECT_EQ(46, b[5]);
	EXPECT_EQ(rh, Bytes(b.begin() + 24, b.end()));

	ASSERT_EQ(0, kiwi_term_from_err(&t, KIWI_TERM_ERR_DDP_U_MSN_RANGE,
					seg.data(), seg.size()));
	EXPECT_EQ(0xc0, body(t)[2]);
	EXPECT_EQ(24u, body(t).size());
	ASSERT_EQ(0, kiwi_term_from_err(&t, KIWI_TERM_ERR_RDMAP_CATASTROPHIC,
					seg.data(), seg.size()));
	EXPECT_EQ(Bytes({0x00, 0x00, 0x00, 0x00}), body(t));

	// RDMAP-11: the caller may replace the header after partial progress.
	ASSERT_EQ(0, kiwi_term_from_err(&t, KIWI_TERM_ERR_RDMAP_CATA_STREAM,
					seg.data(), seg.size()));
	kiwi_rdmap_rreq_advance(&r, 2);
	kiwi_rdmap_rreq_encode(&r, t.rdma_hdr);
	b = body(t);
	kiwi_rdmap_rreq d;
	ASSERT_EQ(0, kiwi_rdmap_rreq_decode(&d, b.data() + 24, 28));
	EXPECT_EQ(4u, d.sink_to);
	EXPECT_EQ(1u, d.size);
	EXPECT_EQ(7u, d.src_to);
}

// Rule 1 / short segments: no incoming message or an incomplete header
// gives the short form.
TEST(TermEncode, NoOrPartialSegmentGivesShortForm)
{
	Bytes seg = encode(untagged(KIWI_RDMAP_SEND, 0, 1, 0));
	kiwi_term t;

	ASSERT_EQ(0, kiwi_term_from_err(&t, KIWI_TERM_ERR_DDP_U_MO, seg.data(),
					17));
	EXPECT_EQ(Bytes({0x12, 0x04, 0x00, 0x00}), body(t));
	ASSERT_EQ(0, kiwi_term_from_err(&t, KIWI_TERM_ERR_RDMAP_OPCODE, nullptr,
					0));
	EXPECT_EQ(Bytes({0x02, 0x06, 0x00, 0x00}), body(t));
	EXPECT_EQ(-EINVAL,
		  kiwi_term_from_err(&t, KIWI_TERM_ERR_NONE, nullptr, 0));
}

TEST(TermEncode, RejectsInconsistentBodies)
{
	kiwi_term t{};
	uint8_t b[KIWI_TERM_BODY_MAX];

	t.layer = 0x10;
	EXPECT_EQ(-EINVAL, kiwi_term_encode(&t, b, sizeof(b)));
	t = {};
	t.ddp_hdr_len = 18; // header without D
	EXPECT_EQ(-EINVAL, kiwi_term_encode(&t, b, sizeof(b)));
	t.hdrct = KIWI_TERM_HDRCT_D;
	EXPECT_EQ(24, kiwi_term_encode(&t, b, sizeof(b)));
	t.ddp_hdr[0] = 0x80; // tagged header claimed as 18 octets
	EXPECT_EQ(-EINVAL, kiwi_term_encode(&t, b, sizeof(b)));
	t = {};
	t.rdma_hdr_len = 28; // RDMA header without R
	EXPECT_EQ(-EINVAL, kiwi_term_encode(&t, b, sizeof(b)));
	t.hdrct = KIWI_TERM_HDRCT_R;
	EXPECT_EQ(32, kiwi_term_encode(&t, b, sizeof(b)));
	EXPECT_EQ(-ENOSPC, kiwi_term_encode(&t, b, 31));
}

// RDMAP-19: the whole Terminate message: untagged, L, QN 2, MO 0, 0x47.
TEST(TermMsg, GoldenMessage)
{
	kiwi_term t;
	uint8_t b[KIWI_TERM_MSG_MAX];

	ASSERT_EQ(0, kiwi_term_from_err(&t, KIWI_TERM_ERR_LLP_CRC, nullptr, 0));
	ASSERT_EQ(22, kiwi_term_build_msg(&t, 1, b, sizeof(b)));
	const Bytes want = {0x41, 0x47, 0, 0, 0, 0, 0, 0,    0,	   2, 0,
			    0,	  0,	1, 0, 0, 0, 0, 0x20, 0x02, 0, 0};
	EXPECT_EQ(want, Bytes(b, b + 22));
	kiwi_ddp_hdr h;
	ASSERT_EQ(18, kiwi_ddp_hdr_decode(&h, b, 22));
	EXPECT_EQ(KIWI_TERM_ERR_NONE, kiwi_rdmap_check_hdr(&h, 4));
	EXPECT_EQ(-ENOSPC, kiwi_term_build_msg(&t, 1, b, 21));
	EXPECT_EQ(-ENOSPC, kiwi_term_build_msg(&t, 1, b, 17));
}

// The largest Terminate fits KIWI_TERM_MSG_MAX (70) and is accepted by the
// receive checks.
TEST(TermMsg, LargestMessage)
{
	Bytes seg = encode(untagged(KIWI_RDMAP_READ_REQ, 1, 1, 0));
	seg.resize(46, 0x11);
	kiwi_term t;
	uint8_t b[KIWI_TERM_MSG_MAX];
	kiwi_ddp_hdr h;

	ASSERT_EQ(0, kiwi_term_from_err(&t, KIWI_TERM_ERR_RDMAP_ACCESS,
					seg.data(), seg.size()));
	ASSERT_EQ(70, kiwi_term_build_msg(&t, 1, b, sizeof(b)));
	ASSERT_EQ(18, kiwi_ddp_hdr_decode(&h, b, 70));
	EXPECT_EQ(KIWI_TERM_ERR_NONE, kiwi_rdmap_check_hdr(&h, 52));
}

void expect_same(const kiwi_term &a, const kiwi_term &b)
{
	EXPECT_EQ(a.layer, b.layer);
	EXPECT_EQ(a.etype, b.etype);
	EXPECT_EQ(a.ecode, b.ecode);
	EXPECT_EQ(a.hdrct, b.hdrct);
	EXPECT_EQ(a.ddp_hdr_len, b.ddp_hdr_len);
	EXPECT_EQ(a.rdma_hdr_len, b.rdma_hdr_len);
	if (a.ddp_hdr_len) {
		EXPECT_EQ(a.seg_len, b.seg_len);
		EXPECT_EQ(0, memcmp(a.ddp_hdr, b.ddp_hdr, a.ddp_hdr_len));
	}
	EXPECT_EQ(0, memcmp(a.rdma_hdr, b.rdma_hdr, a.rdma_hdr_len));
}

TEST(TermDecode, RoundTripEveryError)
{
	Bytes seg = encode(untagged(KIWI_RDMAP_READ_REQ, 1, 1, 0));
	seg.resize(46, 0x33);
	for (const Triple &e : table) {
		kiwi_term t, d;
		ASSERT_EQ(0, kiwi_term_from_err(&t, e.err, seg.data(),
						seg.size()));
		Bytes b = body(t);
		ASSERT_EQ((int)b.size(),
			  kiwi_term_decode(&d, b.data(), b.size(), 0));
		expect_same(t, d);
		EXPECT_EQ((int)e.err,
			  kiwi_term_err_lookup(d.layer, d.etype, d.ecode));
		EXPECT_FALSE(kiwi_term_siw_swapped(b.data(), b.size(), false));
		// RFC 6581's startup errors are a stream's first FPDU only.
		EXPECT_EQ(e.err == KIWI_TERM_ERR_LLP_IRD ||
				  e.err == KIWI_TERM_ERR_LLP_NO_RTR,
			  kiwi_term_siw_swapped(b.data(), b.size(), true));
	}
}

// siw's "unexpected opcode" (RDMAP 0/2/06, its answer to RFC 7306
// Immediate Data) reads as RFC 6581's MPA "insufficient IRD" (2/0/06) in RFC
// order. That MPA error can only be a stream's first FPDU: later, the bytes
// are siw's. The same for 0/2/07 against "no matching RTR".
TEST(TermDecode, SiwRemoteOperationMidStream)
{
	for (uint8_t code : {0x06, 0x07}) {
		const Bytes b = {0x20, code, 0x00, 0x00};
		kiwi_term d;

		EXPECT_FALSE(kiwi_term_siw_swapped(b.data(), b.size(), false));
		ASSERT_TRUE(kiwi_term_siw_swapped(b.data(), b.size(), true));
		ASSERT_EQ(4, kiwi_term_decode(&d, b.data(), b.size(),
					      KIWI_TERM_DEC_SIW_SWAPPED));
		EXPECT_EQ(code == 0x06 ? KIWI_TERM_ERR_RDMAP_OPCODE
				       : KIWI_TERM_ERR_RDMAP_CATA_STREAM,
			  kiwi_term_err_lookup(d.layer, d.etype, d.ecode));
		EXPECT_TRUE(code != 0x06 || kiwi_rdmap_term_refuses_imm(&d));
	}
	// An MPA error that may come at any time keeps its RFC reading.
	const Bytes cata = {0x20, 0x05, 0x00, 0x00};
	EXPECT_FALSE(kiwi_term_siw_swapped(cata.data(), cata.size(), true));
}

// RDMAP-09: reserved bits ignored; trailing zero fill ignored (digest 8.6).
TEST(TermDecode, ReservedAndTrailingIgnored)
{
	const Bytes b = {0x12, 0x05, 0x1f, 0xff, 0, 0, 0, 0, 0, 0};
	kiwi_term d;

	ASSERT_EQ(4, kiwi_term_decode(&d, b.data(), b.size(), 0));
	EXPECT_EQ(1, d.layer);
	EXPECT_EQ(2, d.etype);
	EXPECT_EQ(5, d.ecode);
	EXPECT_EQ(0, d.hdrct);
	EXPECT_EQ(-EBADMSG, kiwi_term_decode(&d, b.data(), 3, 0));
}

// Digest 8.5: flags are not trusted alone; the length decides presence.
TEST(TermDecode, FlagsWithoutHeaders)
{
	Bytes b = {0x01, 0x09, 0xe0, 0x00, 0x00, 0x20};
	kiwi_term d;

	ASSERT_EQ(4, kiwi_term_decode(&d, b.data(), b.size(), 0));
	EXPECT_EQ(0xe0, d.hdrct);
	EXPECT_EQ(0, d.ddp_hdr_len);
	EXPECT_EQ(0, d.rdma_hdr_len);
	// siw: R with an 18-octet DDP header and no RDMA header.
	Bytes hdr = encode(untagged(KIWI_RDMAP_SEND_INV, 0, 1, 0));
	b.insert(b.end(), hdr.begin(), hdr.end());
	ASSERT_EQ(24, kiwi_term_decode(&d, b.data(), b.size(), 0));
	EXPECT_EQ(18, d.ddp_hdr_len);
	EXPECT_EQ(0x20, d.seg_len);
	EXPECT_EQ(0, d.rdma_hdr_len);
	// R without D: the RDMA header directly follows the control field.
	Bytes r = {0x01, 0x00, 0x20, 0x00};
	r.resize(32, 0x7);
	ASSERT_EQ(32, kiwi_term_decode(&d, r.data(), r.size(), 0));
	EXPECT_EQ(28, d.rdma_hdr_len);
	EXPECT_EQ(0, d.ddp_hdr_len);
	EXPECT_EQ(r, body(d));
}

// research/anchors.md 10: siw swaps the Layer/EType nibbles and puts M/D/R
// at 0x01/0x02/0x04; recognised, decoded, never crashes.
TEST(TermDecode, SiwSwappedLayout)
{
	const Bytes crc = {0x02, 0x02, 0x00, 0x00};
	kiwi_term d;

	EXPECT_TRUE(kiwi_term_siw_swapped(crc.data(), crc.size(), false));
	ASSERT_EQ(4, kiwi_term_decode(&d, crc.data(), crc.size(),
				      KIWI_TERM_DEC_SIW_SWAPPED));
	EXPECT_EQ(KIWI_TERM_ERR_LLP_CRC,
		  kiwi_term_err_lookup(d.layer, d.etype, d.ecode));

	Bytes nobuf = {0x21, 0x02, 0x03, 0x00, 0x00, 0x30};
	Bytes hdr = encode(untagged(KIWI_RDMAP_SEND, 0, 1, 0));
	nobuf.insert(nobuf.end(), hdr.begin(), hdr.end());
	EXPECT_TRUE(kiwi_term_siw_swapped(nobuf.data(), nobuf.size(), false));
	ASSERT_EQ(24, kiwi_term_decode(&d, nobuf.data(), nobuf.size(),
				       KIWI_TERM_DEC_SIW_SWAPPED));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_MSN_NOBUF,
		  kiwi_term_err_lookup(d.layer, d.etype, d.ecode));
	EXPECT_EQ(KIWI_TERM_HDRCT_M | KIWI_TERM_HDRCT_D, d.hdrct);
	EXPECT_EQ(0x30, d.seg_len);
	EXPECT_EQ(0, memcmp(hdr.data(), d.ddp_hdr, 18));

	// RFC-layout bodies and symmetric codes are not taken for siw's.
	const Bytes rfc_crc = {0x20, 0x02, 0x00, 0x00};
	const Bytes rfc_ddp = {0x12, 0x02, 0xc0, 0x00};
	const Bytes zero = {0x00, 0x00, 0x00, 0x00};
	EXPECT_FALSE(kiwi_term_siw_swapped(rfc_crc.data(), 4, true));
	EXPECT_FALSE(kiwi_term_siw_swapped(rfc_ddp.data(), 4, true));
	EXPECT_FALSE(kiwi_term_siw_swapped(zero.data(), 4, true));
	EXPECT_FALSE(kiwi_term_siw_swapped(crc.data(), 3, true));
}

// Random bodies: decode never over-reads and re-encoding reproduces the
// consumed octets with the reserved bits cleared (the fuzz invariant).
TEST(TermDecode, RandomBodies)
{
	std::mt19937 rng(6581);

	for (int i = 0; i < 20000; i++) {
		uint32_t len = rng() % 80;
		Bytes b(len);
		for (auto &x : b)
			x = (uint8_t)rng();
		if (len > 2 && (rng() & 1))
			b[2] = (uint8_t)(b[2] & 0xe0);
		for (unsigned flags :
		     {0u, (unsigned)KIWI_TERM_DEC_SIW_SWAPPED}) {
			kiwi_term d;
			int n = kiwi_term_decode(&d, b.data(), len, flags);
			if (len < 4) {
				ASSERT_EQ(-EBADMSG, n);
				continue;
			}
			ASSERT_GE(n, 4);
			ASSERT_LE((uint32_t)n, len);
			Bytes e = body(d);
			ASSERT_EQ((size_t)n, e.size());
			if (!flags) {
				Bytes want(b.begin(), b.begin() + n);
				want[2] &= 0xe0;
				want[3] = 0;
				ASSERT_EQ(want, e);
			}
		}
	}
}

} // namespace
