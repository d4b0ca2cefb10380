// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// RFC 7306 atomics on the wire: Atomic Request/Response layouts (EXT-05,
// EXT-07), header shapes (EXT-02/06/12), the FetchAdd and CmpSwap
// arithmetic with masks (sections 5.1.1, 5.1.2), the responder checks
// (EXT-04: alignment first; RFC 5040 protection checks as for a Read) and
// the Terminate a requester reads as answering an atomic.
#include <gtest/gtest.h>

#include <random>

#include "ddp_test_util.h"

using namespace ddptest;

namespace {

const kiwi_ddp_stream stream = {
	.pd = 1,
	.qp = 2,
	.access = KIWI_DDP_ACC_REMOTE_ATOMIC,
};

kiwi_ddp_stag_info target(uint64_t base, uint64_t len)
{
	kiwi_ddp_stag_info st{};
	st.valid = true;
	st.pd = 1;
	st.qp = KIWI_DDP_ANY_QP;
	st.access = KIWI_DDP_ACC_REMOTE_ATOMIC;
	st.base = base;
	st.len = len;
	return st;
}

kiwi_rdmap_areq faa(uint64_t to, uint64_t add)
{
	kiwi_rdmap_areq r{};
	r.aop = KIWI_RDMAP_AOP_FETCH_ADD;
	r.req_id = 7;
	r.stag = 0x100;
	r.to = to;
	r.data = add;
	r.cmp_mask = ~0ull;
	return r;
}

kiwi_rdmap_areq cas(uint64_t cmp, uint64_t swap)
{
	kiwi_rdmap_areq r{};
	r.aop = KIWI_RDMAP_AOP_CMP_SWAP;
	r.to = 0x1000;
	r.data = swap;
	r.data_mask = ~0ull;
	r.cmp = cmp;
	r.cmp_mask = ~0ull;
	return r;
}

} // namespace

// RFC 7306 Figure 3 / A.1, field by field: 4 octets with the AOpCode in
// the low nibble, then 32-bit Request Identifier and STag, five 64-bit
// fields, all big-endian.
TEST(RdmapAtomic, RequestGolden)
{
	const uint8_t wire[KIWI_RDMAP_AREQ_LEN] = {
		0,    0,    0,	  0x02, // AOpCode CmpSwap
		0x11, 0x22, 0x33, 0x44, // Request Identifier
		0xa1, 0xa2, 0xa3, 0xa4, // Remote STag
		0,    0,    0,	  0,	0,    0,    0x10, 0x08, // Remote TO
		1,    2,    3,	  4,	5,    6,    7,	  8,	// Swap Data
		0xff, 0xff, 0xff, 0xff, 0,    0,    0,	  0,	// Swap Mask
		9,    10,   11,	  12,	13,   14,   15,	  16,	// Compare Data
		0,    0,    0,	  0,	0xff, 0xff, 0xff, 0xff, // Compare Mask
	};
	kiwi_rdmap_areq r{};
	kiwi_rdmap_areq_decode(&r, wire);
	EXPECT_EQ(KIWI_RDMAP_AOP_CMP_SWAP, r.aop);
	EXPECT_EQ(0x11223344u, r.req_id);
	EXPECT_EQ(0xa1a2a3a4u, r.stag);
	EXPECT_EQ(0x1008u, r.to);
	EXPECT_EQ(0x0102030405060708ull, r.data);
	EXPECT_EQ(0xffffffff00000000ull, r.data_mask);
	EXPECT_EQ(0x090a0b0c0d0e0f10ull, r.cmp);
	EXPECT_EQ(0x00000000ffffffffull, r.cmp_mask);
	uint8_t out[KIWI_RDMAP_AREQ_LEN];
	memset(out, 0xee, sizeof(out));
	kiwi_rdmap_areq_encode(&r, out);
	EXPECT_EQ(0, memcmp(wire, out, sizeof(wire)));

	// The 28 reserved bits go out as zero and are ignored on receipt.
	uint8_t rsvd[KIWI_RDMAP_AREQ_LEN];
	memcpy(rsvd, wire, sizeof(rsvd));
	rsvd[0] = 0xff;
	rsvd[3] = 0xf0;
	kiwi_rdmap_areq_decode(&r, rsvd);
	EXPECT_EQ(0, r.aop);
	r.aop = 0xf2;
	kiwi_rdmap_areq_encode(&r, out);
	EXPECT_EQ(0, out[0]);
	EXPECT_EQ(2, out[3]);
}

// RFC 7306 Figure 6 / A.2: Request Identifier, then the 64-bit original
// value; 12 octets.
TEST(RdmapAtomic, ResponseGolden)
{
	const uint8_t wire[KIWI_RDMAP_ARESP_LEN] = {
		0xde, 0xad, 0xbe, 0xef, 0x80, 0, 0, 0, 0, 0, 0, 0x2a,
	};
	kiwi_rdmap_aresp r{};
	kiwi_rdmap_aresp_decode(&r, wire);
	EXPECT_EQ(0xdeadbeefu, r.req_id);
	EXPECT_EQ(0x800000000000002aull, r.orig);
	uint8_t out[KIWI_RDMAP_ARESP_LEN];
	kiwi_rdmap_aresp_encode(&r, out);
	EXPECT_EQ(0, memcmp(wire, out, sizeof(wire)));
}

TEST(RdmapAtomic, RandomRoundTrip)
{
	std::mt19937_64 rng(7306);
	for (int i = 0; i < 1000; i++) {
		kiwi_rdmap_areq a{}, b{};
		a.aop = rng() & 0xf;
		a.req_id = (uint32_t)rng();
		a.stag = (uint32_t)rng();
		a.to = rng();
		a.data = rng();
		a.data_mask = rng();
		a.cmp = rng();
		a.cmp_mask = rng();
		uint8_t buf[KIWI_RDMAP_AREQ_LEN];
		kiwi_rdmap_areq_encode(&a, buf);
		kiwi_rdmap_areq_decode(&b, buf);
		EXPECT_EQ(0, memcmp(&a, &b, sizeof(a)));
	}
}

// EXT-02/05/06: an Atomic Request is untagged on QN 1 with exactly 52
// octets in one segment, a Response on QN 3 with exactly 12.
TEST(RdmapAtomic, HeaderShapes)
{
	const struct {
		uint8_t op;
		uint32_t qn, len;
	} shapes[] = {{KIWI_RDMAP_ATOMIC_REQ, 1, 52},
		      {KIWI_RDMAP_ATOMIC_RESP, 3, 12}};
	for (auto &c : shapes) {
		kiwi_ddp_hdr h = untagged(c.op, c.qn, 1, 0);
		EXPECT_EQ(KIWI_TERM_ERR_NONE, kiwi_rdmap_check_hdr(&h, c.len));
		EXPECT_EQ(KIWI_TERM_ERR_DDP_U_TOO_LONG,
			  kiwi_rdmap_check_hdr(&h, c.len + 1));
		EXPECT_EQ(KIWI_TERM_ERR_RDMAP_OP_UNSPEC,
			  kiwi_rdmap_check_hdr(&h, c.len - 1));
		h.last = false;
		EXPECT_EQ(KIWI_TERM_ERR_RDMAP_OP_UNSPEC,
			  kiwi_rdmap_check_hdr(&h, c.len));
		for (uint32_t qn : {0u, 2u, 4u}) {
			if (qn == c.qn)
				continue;
			h = untagged(c.op, qn == 4 ? (c.qn == 1 ? 3 : 1) : qn,
				     1, 0);
			EXPECT_EQ(KIWI_TERM_ERR_DDP_U_INVALID_QN,
				  kiwi_rdmap_check_hdr(&h, c.len));
		}
		h = tagged(c.op, 1, 0);
		EXPECT_EQ(KIWI_TERM_ERR_RDMAP_OPCODE,
			  kiwi_rdmap_check_hdr(&h, c.len));
	}
	// Outgoing: T = 0, the queue of the table, Invalidate STag zero.
	kiwi_ddp_seg seg{};
	kiwi_ddp_hdr h;
	seg.last = true;
	ASSERT_EQ(0, kiwi_rdmap_seg_hdr(&h, KIWI_RDMAP_ATOMIC_REQ, 9, 5, &seg));
	EXPECT_FALSE(h.tagged);
	EXPECT_EQ(1u, h.qn);
	EXPECT_EQ(5u, h.msn);
	EXPECT_EQ(0u, h.ulp_word);
	ASSERT_EQ(0,
		  kiwi_rdmap_seg_hdr(&h, KIWI_RDMAP_ATOMIC_RESP, 9, 6, &seg));
	EXPECT_EQ(3u, h.qn);
}

// Section 5.1.1: FetchAdd returns nothing itself; the stored value is the
// sum, modulo 2^64 with mask 0, or per field with the carry out of each
// field's most significant bit (a set mask bit) dropped.
TEST(RdmapAtomic, FetchAdd)
{
	uint64_t v = 0;
	kiwi_rdmap_areq r = faa(0x1000, 5);
	ASSERT_TRUE(kiwi_rdmap_atomic_apply(&r, 10, &v));
	EXPECT_EQ(15u, v);
	r.data = ~0ull; // -1
	ASSERT_TRUE(kiwi_rdmap_atomic_apply(&r, 0, &v));
	EXPECT_EQ(~0ull, v);
	ASSERT_TRUE(kiwi_rdmap_atomic_apply(&r, 1, &v));
	EXPECT_EQ(0u, v);
	// Two 32-bit fields: the low field's carry does not reach the high.
	r.data = 1;
	r.data_mask = 0x0000000080000000ull;
	ASSERT_TRUE(kiwi_rdmap_atomic_apply(&r, 0x00000005ffffffffull, &v));
	EXPECT_EQ(0x0000000500000000ull, v);
	// Eight 8-bit fields, each adds 1 and wraps on its own.
	r.data = 0x0101010101010101ull;
	r.data_mask = 0x8080808080808080ull;
	ASSERT_TRUE(kiwi_rdmap_atomic_apply(&r, 0xff00ff00ff00ff7full, &v));
	EXPECT_EQ(0x0001000100010080ull, v);
	// Bit 63 set in the mask is the same as mask 0 for the top field.
	r.data = 1;
	r.data_mask = 0x8000000000000000ull;
	ASSERT_TRUE(kiwi_rdmap_atomic_apply(&r, ~0ull, &v));
	EXPECT_EQ(0u, v);
	// Random per-field check against a reference built field by field.
	std::mt19937_64 rng(5);
	for (int i = 0; i < 2000; i++) {
		uint64_t orig = rng(), add = rng(), mask = rng() & rng();
		r.data = add;
		r.data_mask = mask;
		ASSERT_TRUE(kiwi_rdmap_atomic_apply(&r, orig, &v));
		uint64_t want = 0;
		int lo = 0;
		for (int bit = 0; bit < 64; bit++) {
			if (bit != 63 && !(mask >> bit & 1))
				continue;
			int w = bit - lo + 1;
			uint64_t fm = w == 64 ? ~0ull : ((1ull << w) - 1);
			uint64_t f = ((orig >> lo) + (add >> lo)) & fm;
			want |= f << lo;
			lo = bit + 1;
		}
		ASSERT_EQ(want, v)
			<< std::hex << orig << " " << add << " " << mask;
	}
}

// Section 5.1.2: CmpSwap stores only when the compared bits match, and
// then only the swapped bits.
TEST(RdmapAtomic, CmpSwap)
{
	uint64_t v = 0xdead;
	kiwi_rdmap_areq r = cas(42, 99);
	ASSERT_TRUE(kiwi_rdmap_atomic_apply(&r, 42, &v));
	EXPECT_EQ(99u, v);
	v = 0xdead;
	EXPECT_FALSE(kiwi_rdmap_atomic_apply(&r, 43, &v));
	EXPECT_EQ(0xdeadu, v);
	// Compare only the low byte, swap only the high half.
	r.cmp = 0x11;
	r.cmp_mask = 0xff;
	r.data = 0xaaaaaaaa00000000ull | 0x1234;
	r.data_mask = 0xffffffff00000000ull;
	ASSERT_TRUE(kiwi_rdmap_atomic_apply(&r, 0x5555555577777711ull, &v));
	EXPECT_EQ(0xaaaaaaaa77777711ull, v);
	EXPECT_FALSE(kiwi_rdmap_atomic_apply(&r, 0x5555555577777712ull, &v));
	// Compare Mask 0 always matches.
	r.cmp_mask = 0;
	EXPECT_TRUE(kiwi_rdmap_atomic_apply(&r, 1, &v));
}

// EXT-04/06 and the RFC 5040 protection model: AOpCode, alignment (memory
// untouched: nothing else is looked at), then the Read Request's checks.
TEST(RdmapAtomic, ResponderChecks)
{
	auto st = target(0x1000, 0x100);
	kiwi_rdmap_areq r = faa(0x1000, 1);

	EXPECT_EQ(KIWI_TERM_ERR_NONE, kiwi_rdmap_check_areq(&r, &stream, &st));
	r.to = 0x10f8;
	EXPECT_EQ(KIWI_TERM_ERR_NONE, kiwi_rdmap_check_areq(&r, &stream, &st));
	for (uint8_t aop : {1, 3, 0xf}) {
		r.aop = aop;
		EXPECT_EQ(KIWI_TERM_ERR_RDMAP_OPCODE,
			  kiwi_rdmap_check_areq(&r, &stream, &st));
	}
	r = faa(0x1004, 1);
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_CATA_STREAM,
		  kiwi_rdmap_check_areq(&r, &stream, &st));
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_CATA_STREAM,
		  kiwi_rdmap_check_areq(&r, &stream, nullptr));
	r = faa(0x1001, 1);
	r.aop = KIWI_RDMAP_AOP_CMP_SWAP;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_CATA_STREAM,
		  kiwi_rdmap_check_areq(&r, &stream, &st));

	r = faa(0x1000, 1);
	kiwi_ddp_stream no_atomic = stream;
	no_atomic.access = KIWI_DDP_ACC_REMOTE_READ | KIWI_DDP_ACC_REMOTE_WRITE;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_ACCESS,
		  kiwi_rdmap_check_areq(&r, &no_atomic, &st));
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_INVALID_STAG,
		  kiwi_rdmap_check_areq(&r, &stream, nullptr));
	st.valid = false;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_INVALID_STAG,
		  kiwi_rdmap_check_areq(&r, &stream, &st));
	st = target(0x1000, 0x100);
	st.pd = 9;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_STAG_STREAM,
		  kiwi_rdmap_check_areq(&r, &stream, &st));
	st = target(0x1000, 0x100);
	st.access = KIWI_DDP_ACC_REMOTE_READ | KIWI_DDP_ACC_REMOTE_WRITE |
		    KIWI_DDP_ACC_LOCAL_WRITE;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_ACCESS,
		  kiwi_rdmap_check_areq(&r, &stream, &st));
	st = target(0x1000, 0x100);
	r.to = 0x0ff8;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_BOUNDS,
		  kiwi_rdmap_check_areq(&r, &stream, &st));
	r.to = 0x1100; // the 8 octets would end past the registration
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_BOUNDS,
		  kiwi_rdmap_check_areq(&r, &stream, &st));
	st = target(0, ~0ull);
	r.to = ~0ull - 15; // the last word inside: fine
	EXPECT_EQ(KIWI_TERM_ERR_NONE, kiwi_rdmap_check_areq(&r, &stream, &st));
	r.to = ~0ull - 7; // the 64-bit space's last word, past the end
	EXPECT_NE(KIWI_TERM_ERR_NONE, kiwi_rdmap_check_areq(&r, &stream, &st));
}

// A Terminate with a copied DDP header answers the message of that
// opcode; one without (siw's opcode errors) only as "unexpected opcode".
TEST(RdmapAtomic, TerminateNamesOpcode)
{
	kiwi_term t{};
	t.layer = KIWI_TERM_LAYER_RDMAP;
	t.etype = KIWI_TERM_ET_RDMAP_REMOTE_OP;
	t.ecode = 0x06;
	EXPECT_TRUE(kiwi_rdmap_term_names_op(&t, KIWI_RDMAP_ATOMIC_REQ));
	t.ecode = 0x07;
	EXPECT_FALSE(kiwi_rdmap_term_names_op(&t, KIWI_RDMAP_ATOMIC_REQ));
	t.ddp_hdr_len = KIWI_DDP_UNTAGGED_HDR_LEN;
	t.ddp_hdr[0] = 0x41;
	t.ddp_hdr[1] = kiwi_rdmap_ctrl(KIWI_RDMAP_ATOMIC_REQ);
	EXPECT_TRUE(kiwi_rdmap_term_names_op(&t, KIWI_RDMAP_ATOMIC_REQ));
	t.ddp_hdr[1] = kiwi_rdmap_ctrl(KIWI_RDMAP_READ_REQ);
	EXPECT_FALSE(kiwi_rdmap_term_names_op(&t, KIWI_RDMAP_ATOMIC_REQ));
}

// The copied header names the refused Request by its QN 1 MSN; a tagged,
// other-queue or partial header names none.
TEST(RdmapAtomic, TerminateRequestMsn)
{
	kiwi_term t{};
	kiwi_ddp_hdr h{};
	u32 msn = 0;

	h.last = true;
	h.dv = KIWI_DDP_VERSION;
	h.ulp_ctrl = kiwi_rdmap_ctrl(KIWI_RDMAP_READ_REQ);
	h.qn = KIWI_RDMAP_QN_READ_REQ;
	h.msn = 0xfffffff3;
	t.ddp_hdr_len = kiwi_ddp_hdr_encode(&h, t.ddp_hdr);
	ASSERT_EQ(KIWI_DDP_UNTAGGED_HDR_LEN, t.ddp_hdr_len);
	EXPECT_TRUE(kiwi_rdmap_term_request_msn(&t, &msn));
	EXPECT_EQ(0xfffffff3u, msn);
	t.ddp_hdr_len = KIWI_DDP_UNTAGGED_HDR_LEN - 1;
	EXPECT_FALSE(kiwi_rdmap_term_request_msn(&t, &msn));
	h.qn = KIWI_RDMAP_QN_SEND;
	t.ddp_hdr_len = kiwi_ddp_hdr_encode(&h, t.ddp_hdr);
	EXPECT_FALSE(kiwi_rdmap_term_request_msn(&t, &msn));
	h.tagged = true;
	t.ddp_hdr_len = kiwi_ddp_hdr_encode(&h, t.ddp_hdr);
	EXPECT_FALSE(kiwi_rdmap_term_request_msn(&t, &msn));
}
