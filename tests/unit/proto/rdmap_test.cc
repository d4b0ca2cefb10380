// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// RDMAP (RFC 5040): control octet, opcode table, Read Request codec and the
// section 7.2 receive checks (RDMAP-01..08, 11, 15, 17, 18, 24; EXT-02),
// the stream's rights and Read Response coverage (RDMAP-16).
#include <cstring>
#include <gtest/gtest.h>

#include <random>

#include "ddp_test_util.h"

extern "C" {
#include "proto/mpa.h"
}

using namespace ddptest;

namespace {

const kiwi_ddp_stream stream = {
	.pd = 1,
	.qp = 2,
	.access = KIWI_DDP_ACC_REMOTE_WRITE | KIWI_DDP_ACC_REMOTE_READ,
};

// RDMAP-01 and the digest's wire table: control octets with RV = 1.
TEST(Rdmap, ControlOctets)
{
	for (uint8_t op = 0; op <= 0xf; op++) {
		EXPECT_EQ(0x40 | op, kiwi_rdmap_ctrl(op));
		EXPECT_EQ(op, kiwi_rdmap_opcode(kiwi_rdmap_ctrl(op)));
		EXPECT_EQ(1, kiwi_rdmap_rv(kiwi_rdmap_ctrl(op)));
	}
	EXPECT_EQ(0, kiwi_rdmap_rv(0x03));
	EXPECT_EQ(3, kiwi_rdmap_rv(0xc3));
	EXPECT_EQ(3, kiwi_rdmap_opcode(0x73)); // reserved bits ignored
}

// RDMAP-03/07, EXT-02: T flag, queue and header size per opcode, written
// out independently of the implementation's table.
TEST(Rdmap, OpcodeTable)
{
	struct row {
		uint8_t op;
		bool supported, tagged;
		uint8_t qn;
		bool inv;
		uint32_t hdr_len;
	};
	const row rows[] = {
		{0x0, true, true, 0, false, 14},
		{0x1, true, false, 1, false, 46},
		{0x2, true, true, 0, false, 14},
		{0x3, true, false, 0, false, 18},
		{0x4, true, false, 0, true, 18},
		{0x5, true, false, 0, false, 18},
		{0x6, true, false, 0, true, 18},
		{0x7, true, false, 2, false, 22},
		{0x8, true, false, 0, false, 26},
		{0x9, true, false, 0, false, 26},
		{0xa, true, false, 1, false, 70},
		{0xb, true, false, 3, false, 30},
	};
	for (const row &r : rows) {
		const struct kiwi_rdmap_op_info *i = kiwi_rdmap_op_lookup(r.op);
		ASSERT_NE(nullptr, i) << int(r.op);
		EXPECT_EQ(r.supported, i->supported) << int(r.op);
		EXPECT_EQ(r.tagged, i->tagged) << int(r.op);
		if (!r.tagged) {
			EXPECT_EQ(r.qn, i->qn) << int(r.op);
		}
		EXPECT_EQ(r.inv, i->inv_stag) << int(r.op);
		EXPECT_EQ(r.hdr_len, kiwi_rdmap_hdr_len(r.op)) << int(r.op);
	}
	for (uint8_t op = 0xc; op <= 0xf; op++) {
		EXPECT_EQ(nullptr, kiwi_rdmap_op_lookup(op));
		EXPECT_EQ(0u, kiwi_rdmap_hdr_len(op));
		EXPECT_STREQ("unassigned", kiwi_rdmap_op_name(op));
	}
	EXPECT_STREQ("Send with SE and Invalidate", kiwi_rdmap_op_name(6));
}

// The receive path decodes the first KIWI_RDMAP_HDR_MAX octets: enough for
// every supported fixed header, and within what the MPA decoder hands out
// in one header event.
TEST(Rdmap, HeaderMaxCoversSupportedOpcodes)
{
	EXPECT_EQ(70u, (unsigned)KIWI_RDMAP_HDR_MAX);
	for (uint8_t op = 0; op <= 0xb; op++)
		EXPECT_LE(kiwi_rdmap_hdr_len(op), (uint32_t)KIWI_RDMAP_HDR_MAX)
			<< int(op);
	EXPECT_LE((unsigned)KIWI_RDMAP_HDR_MAX, (unsigned)KIWI_MPA_RX_HDR_MAX);
}

// RDMAP-06: the Invalidate STag is zero on TX for every other opcode.
TEST(Rdmap, SegHdrInvalidateOnlyForInvalidateSends)
{
	kiwi_ddp_seg seg{};
	kiwi_ddp_hdr h;

	seg.last = true;
	for (uint8_t op = 0; op <= 0xb; op++) {
		ASSERT_EQ(0, kiwi_rdmap_seg_hdr(&h, op, 0x55aa, 1, &seg));
		bool inv = op == KIWI_RDMAP_SEND_INV ||
			   op == KIWI_RDMAP_SEND_SE_INV;
		EXPECT_EQ(inv ? 0x55aau : 0u, h.ulp_word) << int(op);
		EXPECT_EQ(h.tagged ? 0x55aau : 0u, h.stag) << int(op);
		EXPECT_EQ(KIWI_TERM_ERR_NONE,
			  kiwi_rdmap_check_hdr(&h, op == 1     ? 28
						   : op == 7   ? 4
						   : op == 0xa ? 52
						   : op == 0xb ? 12
						   : op >= 8   ? 8
							       : 0))
			<< int(op);
	}
	for (uint8_t op = 0xc; op <= 0xf; op++)
		EXPECT_EQ(-EOPNOTSUPP, kiwi_rdmap_seg_hdr(&h, op, 0, 1, &seg));
}

// RDMAP-08: Read Request layout, field by field.
TEST(RdmapRreq, Golden)
{
	const Bytes wire = {0x00, 0x00, 0x00, 0x11, // sink STag
			    0,	  0,	0,    0,    0, 0, 0x40, 0x00, // sink TO
			    0x00, 0x01, 0x00, 0x00,		      // size
			    0xaa, 0xbb, 0xcc, 0xdd, // src STag
			    0x7f, 0xff, 0,    0,    0, 0, 0x10, 0x00}; // src TO
	kiwi_rdmap_rreq r;
	Bytes b(28);

	ASSERT_EQ(0, kiwi_rdmap_rreq_decode(&r, wire.data(), wire.size()));
	EXPECT_EQ(0x11u, r.sink_stag);
	EXPECT_EQ(0x4000u, r.sink_to);
	EXPECT_EQ(0x10000u, r.size);
	EXPECT_EQ(0xaabbccddu, r.src_stag);
	EXPECT_EQ(0x7fff000000001000ull, r.src_to);
	kiwi_rdmap_rreq_encode(&r, b.data());
	EXPECT_EQ(wire, b);
	EXPECT_EQ(-EBADMSG, kiwi_rdmap_rreq_decode(&r, wire.data(), 27));
}

TEST(RdmapRreq, RandomRoundTrip)
{
	std::mt19937_64 rng(5040);

	for (int i = 0; i < 5000; i++) {
		kiwi_rdmap_rreq a = {(uint32_t)rng(), rng(), (uint32_t)rng(),
				     (uint32_t)rng(), rng()},
				b;
		Bytes w(28);
		kiwi_rdmap_rreq_encode(&a, w.data());
		ASSERT_EQ(0, kiwi_rdmap_rreq_decode(&b, w.data(), 28));
		ASSERT_EQ(a.sink_stag, b.sink_stag);
		ASSERT_EQ(a.sink_to, b.sink_to);
		ASSERT_EQ(a.size, b.size);
		ASSERT_EQ(a.src_stag, b.src_stag);
		ASSERT_EQ(a.src_to, b.src_to);
	}
}

// RDMAP-11: after 2048 octets both TOs advance and the size shrinks.
TEST(RdmapRreq, AdvanceAfterPartialProgress)
{
	kiwi_rdmap_rreq r = {1, 0x1000, 10000, 2, 0x9000};

	kiwi_rdmap_rreq_advance(&r, 2048);
	EXPECT_EQ(0x1800u, r.sink_to);
	EXPECT_EQ(0x9800u, r.src_to);
	EXPECT_EQ(10000u - 2048, r.size);
	EXPECT_EQ(1u, r.sink_stag);
	kiwi_rdmap_rreq_advance(&r, 1u << 30);
	EXPECT_EQ(0u, r.size);
	EXPECT_EQ(0x1000u + 10000, r.sink_to);
}

// RDMAP-04: RV != 1 -> (0, 2, 05), after the DDP version check.
TEST(RdmapCheck, Version)
{
	for (uint8_t rv : {0, 2, 3}) {
		kiwi_ddp_hdr h = untagged(KIWI_RDMAP_SEND, 0, 1, 0);
		h.ulp_ctrl = (uint8_t)(rv << 6 | KIWI_RDMAP_SEND);
		EXPECT_EQ(KIWI_TERM_ERR_RDMAP_VERSION,
			  kiwi_rdmap_check_hdr(&h, 10));
		h.dv = 2;
		EXPECT_EQ(KIWI_TERM_ERR_DDP_U_VERSION,
			  kiwi_rdmap_check_hdr(&h, 10));
	}
}

// RDMAP-05: reserved RDMAP bits are ignored.
TEST(RdmapCheck, ReservedBitsIgnored)
{
	kiwi_ddp_hdr h = untagged(KIWI_RDMAP_SEND, 0, 1, 0);

	h.ulp_ctrl |= KIWI_RDMAP_CTRL_RSVD;
	h.ulp_word = 0x12345678; // RDMAP-06: ignored for a plain Send
	EXPECT_EQ(KIWI_TERM_ERR_NONE, kiwi_rdmap_check_hdr(&h, 10));
}

// RDMAP-24/EXT-12: unassigned and experimental opcodes are rejected
// cleanly with "unexpected opcode" (0, 2, 06), whatever T bit and QN they
// arrive with.
TEST(RdmapCheck, UnsupportedOpcodes)
{
	for (uint8_t op = 0xc; op <= 0xf; op++) {
		for (uint32_t qn = 0; qn < 4; qn++) {
			kiwi_ddp_hdr h = untagged(op, qn, 1, 0);
			EXPECT_EQ(KIWI_TERM_ERR_RDMAP_OPCODE,
				  kiwi_rdmap_check_hdr(&h, 8));
		}
		kiwi_ddp_hdr t = tagged(op, 1, 0);
		EXPECT_EQ(KIWI_TERM_ERR_RDMAP_OPCODE,
			  kiwi_rdmap_check_hdr(&t, 8));
	}
}

// RDMAP-03: opcode and T bit must agree -> unexpected opcode.
TEST(RdmapCheck, OpcodeVersusTaggedBit)
{
	for (uint8_t op = 0; op <= 7; op++) {
		bool tag = op == KIWI_RDMAP_WRITE || op == KIWI_RDMAP_READ_RESP;
		kiwi_ddp_hdr h = tag ? untagged(op, 0, 1, 0) : tagged(op, 1, 0);
		EXPECT_EQ(KIWI_TERM_ERR_RDMAP_OPCODE,
			  kiwi_rdmap_check_hdr(&h, 4))
			<< int(op);
	}
}

// RDMAP-03/17/19, DDP-031: an untagged opcode on the wrong queue is an
// invalid QN (1, 2, 01).
TEST(RdmapCheck, QueueNumberPerOpcode)
{
	const struct {
		uint8_t op;
		uint32_t qn;
		uint32_t len;
	} ok[] = {{1, 1, 28}, {3, 0, 9}, {4, 0, 9},    {5, 0, 9},
		  {6, 0, 9},  {7, 2, 4}, {0xa, 1, 52}, {0xb, 3, 12}};
	for (auto &c : ok) {
		for (uint32_t qn : {0u, 1u, 2u, 3u, 0xffffffffu}) {
			kiwi_ddp_hdr h = untagged(c.op, qn, 1, 0);
			EXPECT_EQ(qn == c.qn ? KIWI_TERM_ERR_NONE
					     : KIWI_TERM_ERR_DDP_U_INVALID_QN,
				  kiwi_rdmap_check_hdr(&h, c.len))
				<< int(c.op) << " qn " << qn;
		}
	}
}

// RDMAP-07: a Read Request carries exactly its 28-octet header in one
// segment; a Terminate 4..52 octets.
TEST(RdmapCheck, ShortMessageShapes)
{
	kiwi_ddp_hdr r = untagged(KIWI_RDMAP_READ_REQ, 1, 1, 0);

	EXPECT_EQ(KIWI_TERM_ERR_NONE, kiwi_rdmap_check_hdr(&r, 28));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_TOO_LONG, kiwi_rdmap_check_hdr(&r, 29));
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_OP_UNSPEC, kiwi_rdmap_check_hdr(&r, 27));
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_OP_UNSPEC, kiwi_rdmap_check_hdr(&r, 0));
	r.last = false;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_OP_UNSPEC, kiwi_rdmap_check_hdr(&r, 28));
	r = untagged(KIWI_RDMAP_READ_REQ, 1, 1, 14);
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_OP_UNSPEC, kiwi_rdmap_check_hdr(&r, 14));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_TOO_LONG, kiwi_rdmap_check_hdr(&r, 15));
	r = untagged(KIWI_RDMAP_READ_REQ, 1, 1, 0xffffffffu);
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_TOO_LONG,
		  kiwi_rdmap_check_hdr(&r, 0xffffffffu));

	kiwi_ddp_hdr t = untagged(KIWI_RDMAP_TERMINATE, 2, 1, 0);
	EXPECT_EQ(KIWI_TERM_ERR_NONE, kiwi_rdmap_check_hdr(&t, 4));
	EXPECT_EQ(KIWI_TERM_ERR_NONE, kiwi_rdmap_check_hdr(&t, 52));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_U_TOO_LONG, kiwi_rdmap_check_hdr(&t, 53));
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_OP_UNSPEC, kiwi_rdmap_check_hdr(&t, 3));
}

// EXT-02/10: Immediate Data (with SE) is untagged on QN 0 and carries
// exactly 8 octets in one segment: 7 or 9 octets, a split message, another
// queue or the T bit each get their Terminate.
TEST(RdmapCheck, ImmediateDataShape)
{
	for (uint8_t op : {KIWI_RDMAP_IMM, KIWI_RDMAP_IMM_SE}) {
		kiwi_ddp_hdr h = untagged(op, 0, 1, 0);

		EXPECT_EQ(KIWI_TERM_ERR_NONE, kiwi_rdmap_check_hdr(&h, 8));
		EXPECT_EQ(KIWI_TERM_ERR_DDP_U_TOO_LONG,
			  kiwi_rdmap_check_hdr(&h, 9));
		EXPECT_EQ(KIWI_TERM_ERR_RDMAP_OP_UNSPEC,
			  kiwi_rdmap_check_hdr(&h, 7));
		EXPECT_EQ(KIWI_TERM_ERR_RDMAP_OP_UNSPEC,
			  kiwi_rdmap_check_hdr(&h, 0));
		h.last = false;
		EXPECT_EQ(KIWI_TERM_ERR_RDMAP_OP_UNSPEC,
			  kiwi_rdmap_check_hdr(&h, 8));
		h = untagged(op, 0, 1, 4);
		EXPECT_EQ(KIWI_TERM_ERR_RDMAP_OP_UNSPEC,
			  kiwi_rdmap_check_hdr(&h, 4));
		for (uint32_t qn : {1u, 2u, 3u, 0xffffffffu}) {
			h = untagged(op, qn, 1, 0);
			EXPECT_EQ(KIWI_TERM_ERR_DDP_U_INVALID_QN,
				  kiwi_rdmap_check_hdr(&h, 8));
		}
		h = tagged(op, 1, 0);
		EXPECT_EQ(KIWI_TERM_ERR_RDMAP_OPCODE,
			  kiwi_rdmap_check_hdr(&h, 8));
	}
}

// The verbs value travels in octets 0-3 as stored (network order), octets
// 4-7 zero; a peer's non-zero octets 4-7 cannot be delivered.
TEST(Rdmap, ImmediateDataCodec)
{
	const uint8_t wire[8] = {0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0};
	__be32 imm = 0;
	uint8_t buf[8];

	std::memcpy(&imm, wire, sizeof(imm));
	std::memset(buf, 0x5a, sizeof(buf));
	kiwi_rdmap_imm_encode(imm, buf);
	EXPECT_EQ(0, std::memcmp(buf, wire, sizeof(buf)));

	__be32 out = 0;
	EXPECT_EQ(KIWI_TERM_ERR_NONE, kiwi_rdmap_imm_decode(&out, wire));
	EXPECT_EQ(imm, out);
	for (int i = 4; i < 8; i++) {
		uint8_t bad[8];

		std::memcpy(bad, wire, sizeof(bad));
		bad[i] = 1;
		EXPECT_EQ(KIWI_TERM_ERR_RDMAP_OP_UNSPEC,
			  kiwi_rdmap_imm_decode(&out, bad))
			<< i;
	}
}

// RFC 7306 section 1.1: a peer without the extension answers 0/2/06; with
// a copied DDP header, that header must be the Immediate Data's.
TEST(Rdmap, TerminateRefusingImmediateData)
{
	kiwi_term t{};

	t.layer = KIWI_TERM_LAYER_RDMAP;
	t.etype = KIWI_TERM_ET_RDMAP_REMOTE_OP;
	t.ecode = 0x06;
	EXPECT_TRUE(kiwi_rdmap_term_refuses_imm(&t)); // siw: no header
	t.ddp_hdr_len = KIWI_DDP_UNTAGGED_HDR_LEN;
	t.ddp_hdr[0] = 0x41;
	t.ddp_hdr[1] = kiwi_rdmap_ctrl(KIWI_RDMAP_IMM_SE);
	EXPECT_TRUE(kiwi_rdmap_term_refuses_imm(&t));
	t.ddp_hdr[1] = kiwi_rdmap_ctrl(KIWI_RDMAP_SEND);
	EXPECT_FALSE(kiwi_rdmap_term_refuses_imm(&t));
	t.ddp_hdr_len = 0;
	t.ecode = 0x07;
	EXPECT_FALSE(kiwi_rdmap_term_refuses_imm(&t));
	t.ecode = 0x06;
	t.layer = KIWI_TERM_LAYER_DDP;
	EXPECT_FALSE(kiwi_rdmap_term_refuses_imm(&t));
}

kiwi_ddp_stag_info src(uint64_t base, uint64_t len)
{
	kiwi_ddp_stag_info st{};
	st.valid = true;
	st.pd = 1;
	st.qp = KIWI_DDP_ANY_QP;
	st.access = KIWI_DDP_ACC_REMOTE_READ;
	st.base = base;
	st.len = len;
	return st;
}

// RFC 5040 section 7.2 a-e plus access: Read Request source checks.
TEST(RdmapCheck, ReadRequestSource)
{
	auto st = src(0x1000, 0x1000);
	kiwi_rdmap_rreq r = {5, 0, 0x1000, 9, 0x1000};

	EXPECT_EQ(KIWI_TERM_ERR_NONE, kiwi_rdmap_check_rreq(&r, &stream, &st));
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_INVALID_STAG,
		  kiwi_rdmap_check_rreq(&r, &stream, nullptr));
	st.valid = false;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_INVALID_STAG,
		  kiwi_rdmap_check_rreq(&r, &stream, &st));
	st = src(0x1000, 0x1000);
	st.pd = 7;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_STAG_STREAM,
		  kiwi_rdmap_check_rreq(&r, &stream, &st));
	st = src(0x1000, 0x1000);
	st.qp = 3;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_STAG_STREAM,
		  kiwi_rdmap_check_rreq(&r, &stream, &st));
	st = src(0x1000, 0x1000);
	st.access = KIWI_DDP_ACC_REMOTE_WRITE;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_ACCESS,
		  kiwi_rdmap_check_rreq(&r, &stream, &st));
	st = src(0x1000, 0x1000);
	r.src_to = 0xfff;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_BOUNDS,
		  kiwi_rdmap_check_rreq(&r, &stream, &st));
	r.src_to = 0x1001;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_BOUNDS,
		  kiwi_rdmap_check_rreq(&r, &stream, &st));
	r.src_to = ~0ull - 0x10;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_TO_WRAP,
		  kiwi_rdmap_check_rreq(&r, &stream, &st));
}

// RFC 5040 section 8.1.1: a QP whose consumer allows no remote reads
// refuses a Read Request (0, 1, 02) before its STag is looked at; a
// zero-size Read is still not checked (RDMAP-15).
TEST(RdmapCheck, ReadRequestStreamRights)
{
	const kiwi_ddp_stream wo = {
		.pd = 1, .qp = 2, .access = KIWI_DDP_ACC_REMOTE_WRITE};
	auto st = src(0x1000, 0x1000);
	kiwi_rdmap_rreq r = {5, 0, 0x1000, 9, 0x1000};

	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_ACCESS,
		  kiwi_rdmap_check_rreq(&r, &wo, &st));
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_ACCESS,
		  kiwi_rdmap_check_rreq(&r, &wo, nullptr));
	r.size = 0;
	EXPECT_EQ(KIWI_TERM_ERR_NONE, kiwi_rdmap_check_rreq(&r, &wo, nullptr));
}

enum kiwi_term_err rresp(uint32_t stag, uint64_t to, uint32_t len, bool last,
			 const kiwi_rdmap_rresp_view *v)
{
	kiwi_ddp_hdr h = tagged(KIWI_RDMAP_READ_RESP, stag, to);

	h.last = last;
	return kiwi_rdmap_check_rresp(&h, len, v);
}

// RDMAP-13/16: a Read Response fills the oldest Read's sink in order and
// its last segment completes it exactly; no Read outstanding is an
// unexpected opcode (0, 2, 06); a wrong sink STag is (1, 1, 00); a gap,
// an overrun, a short or a zero-length last segment is (1, 1, 01).
TEST(RdmapCheck, ReadResponseCoverage)
{
	kiwi_rdmap_rresp_view v = {0x55, 0x10000, 4096, 0};

	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_OPCODE,
		  rresp(0x55, 0x10000, 4096, true, nullptr));
	EXPECT_EQ(KIWI_TERM_ERR_NONE, rresp(0x55, 0x10000, 4096, true, &v));
	EXPECT_EQ(KIWI_TERM_ERR_NONE, rresp(0x55, 0x10000, 1000, false, &v));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_INVALID_STAG,
		  rresp(0x56, 0x10000, 4096, true, &v));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_BOUNDS,
		  rresp(0x55, 0x10001, 100, false, &v));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_BOUNDS,
		  rresp(0x55, 0x10000, 4097, false, &v));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_BOUNDS,
		  rresp(0x55, 0x10000, 4095, true, &v));
	// Zero length: STag and TO not checked (DDP-046), coverage is.
	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_BOUNDS, rresp(0, 0, 0, true, &v));
	EXPECT_EQ(KIWI_TERM_ERR_NONE, rresp(0, 0, 0, false, &v));
	v.placed = 1000;
	EXPECT_EQ(KIWI_TERM_ERR_NONE,
		  rresp(0x55, 0x10000 + 1000, 3096, true, &v));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_BOUNDS,
		  rresp(0x55, 0x10000, 3096, true, &v));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_BOUNDS,
		  rresp(0x55, 0x10000 + 1000, 3097, true, &v));
	v.placed = 4096;
	EXPECT_EQ(KIWI_TERM_ERR_NONE, rresp(0, 0, 0, true, &v));
	// A zero-size Read (the RFC 6581 RTR Read) takes one empty Response.
	kiwi_rdmap_rresp_view zero = {0, 0, 0, 0};
	EXPECT_EQ(KIWI_TERM_ERR_NONE, rresp(0x99, 0x1234, 0, true, &zero));
	EXPECT_EQ(KIWI_TERM_ERR_DDP_T_BOUNDS, rresp(0, 0, 1, true, &zero));
}

// The sink range of the future Read Response must not wrap either; the
// last octet at 2^64 - 1 is still fine.
TEST(RdmapCheck, ReadRequestSinkWrap)
{
	auto st = src(0x1000, 0x1000);
	kiwi_rdmap_rreq r = {5, ~0ull - 0xfff, 0x1000, 9, 0x1000};

	EXPECT_EQ(KIWI_TERM_ERR_NONE, kiwi_rdmap_check_rreq(&r, &stream, &st));
	r.sink_to++;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_TO_WRAP,
		  kiwi_rdmap_check_rreq(&r, &stream, &st));
	r.src_to = 0; // a source error is reported first
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_BOUNDS,
		  kiwi_rdmap_check_rreq(&r, &stream, &st));
}

// RDMAP-15: a zero-size Read is not validated at all (Read RTR).
TEST(RdmapCheck, ZeroSizeReadNotValidated)
{
	kiwi_rdmap_rreq r = {0, 0, 0, 0xdeadbeef, ~0ull};

	EXPECT_EQ(KIWI_TERM_ERR_NONE,
		  kiwi_rdmap_check_rreq(&r, &stream, nullptr));
}

// RDMAP-18: Send with Invalidate of a foreign or non-invalidatable STag.
TEST(RdmapCheck, Invalidate)
{
	auto st = src(0, 10);

	st.access = KIWI_DDP_ACC_REMOTE_INV;
	EXPECT_EQ(KIWI_TERM_ERR_NONE, kiwi_rdmap_check_inval(&stream, &st));
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_CANNOT_INVALIDATE,
		  kiwi_rdmap_check_inval(&stream, nullptr));
	st.qp = 9;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_CANNOT_INVALIDATE,
		  kiwi_rdmap_check_inval(&stream, &st));
	st.qp = 2;
	EXPECT_EQ(KIWI_TERM_ERR_NONE, kiwi_rdmap_check_inval(&stream, &st));
	st.pd = 3;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_CANNOT_INVALIDATE,
		  kiwi_rdmap_check_inval(&stream, &st));
	st.pd = 1;
	st.access = KIWI_DDP_ACC_REMOTE_WRITE;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_CANNOT_INVALIDATE,
		  kiwi_rdmap_check_inval(&stream, &st));
	st.access = KIWI_DDP_ACC_REMOTE_INV;
	st.valid = false;
	EXPECT_EQ(KIWI_TERM_ERR_RDMAP_CANNOT_INVALIDATE,
		  kiwi_rdmap_check_inval(&stream, &st));
}

} // namespace
