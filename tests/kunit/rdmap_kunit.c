// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites "kiwi_rdmap" and "kiwi_term": RDMAP opcode checks, the Read
 * Request codec and checks, and the Terminate error table and codec of
 * kernel/proto/rdmap*.c and term*.c in the kernel build.
 */
#include <kunit/test.h>

#include "proto/ddp.h"
#include "proto/rdmap.h"
#include "proto/term.h"

static const struct kiwi_ddp_stream kstream = {
	.pd = 1, .qp = 2,
	.access = KIWI_DDP_ACC_REMOTE_WRITE | KIWI_DDP_ACC_REMOTE_READ,
};

static void rdmap_ctrl_octets(struct kunit *test)
{
	u8 op;

	for (op = 0; op <= KIWI_RDMAP_OP_MAX; op++) {
		KUNIT_EXPECT_EQ(test, kiwi_rdmap_ctrl(op), 0x40 | op);
		KUNIT_EXPECT_EQ(test, kiwi_rdmap_opcode(kiwi_rdmap_ctrl(op)), op);
		KUNIT_EXPECT_EQ(test, kiwi_rdmap_rv(kiwi_rdmap_ctrl(op)), 1);
	}
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_hdr_len(KIWI_RDMAP_READ_REQ), 46U);
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_hdr_len(KIWI_RDMAP_TERMINATE), 22U);
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_hdr_len(KIWI_RDMAP_WRITE), 14U);
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_hdr_len(0xc), 0U);
}

static void rdmap_unsupported_opcodes(struct kunit *test)
{
	struct kiwi_ddp_hdr h = { .last = true, .dv = 1 };
	u8 op;

	for (op = KIWI_RDMAP_ATOMIC_RESP + 1; op <= KIWI_RDMAP_OP_MAX; op++) {
		h.ulp_ctrl = kiwi_rdmap_ctrl(op);
		h.qn = 0;
		KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_hdr(&h, 8),
				KIWI_TERM_ERR_RDMAP_OPCODE);
	}
	h.ulp_ctrl = 0x83;
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_hdr(&h, 8),
			KIWI_TERM_ERR_RDMAP_VERSION);
	h.ulp_ctrl = kiwi_rdmap_ctrl(KIWI_RDMAP_WRITE);
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_hdr(&h, 8),
			KIWI_TERM_ERR_RDMAP_OPCODE);
	h.ulp_ctrl = kiwi_rdmap_ctrl(KIWI_RDMAP_SEND);
	h.qn = 1;
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_hdr(&h, 8),
			KIWI_TERM_ERR_DDP_U_INVALID_QN);
}

static void rdmap_rreq_codec(struct kunit *test)
{
	static const u8 wire[KIWI_RDMAP_RREQ_LEN] = {
		0, 0, 0, 0x11, 0, 0, 0, 0, 0, 0, 0x40, 0,
		0, 1, 0, 0, 0xaa, 0xbb, 0xcc, 0xdd,
		0x7f, 0xff, 0, 0, 0, 0, 0x10, 0,
	};
	struct kiwi_rdmap_rreq r;
	u8 buf[KIWI_RDMAP_RREQ_LEN];

	KUNIT_ASSERT_EQ(test, kiwi_rdmap_rreq_decode(&r, wire, 28), 0);
	KUNIT_EXPECT_EQ(test, r.sink_stag, 0x11U);
	KUNIT_EXPECT_EQ(test, r.sink_to, 0x4000ULL);
	KUNIT_EXPECT_EQ(test, r.size, 0x10000U);
	KUNIT_EXPECT_EQ(test, r.src_stag, 0xaabbccddU);
	KUNIT_EXPECT_EQ(test, r.src_to, 0x7fff000000001000ULL);
	kiwi_rdmap_rreq_encode(&r, buf);
	KUNIT_EXPECT_EQ(test, memcmp(buf, wire, sizeof(wire)), 0);
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_rreq_decode(&r, wire, 27), -EBADMSG);
}

static void rdmap_imm(struct kunit *test)
{
	static const u8 wire[KIWI_RDMAP_IMM_LEN] = { 1, 2, 3, 4, 0, 0, 0, 0 };
	struct kiwi_ddp_hdr h = { .last = true, .dv = 1 };
	u8 buf[KIWI_RDMAP_IMM_LEN], bad[KIWI_RDMAP_IMM_LEN];
	__be32 imm;

	h.ulp_ctrl = kiwi_rdmap_ctrl(KIWI_RDMAP_IMM_SE);
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_hdr(&h, 8), KIWI_TERM_ERR_NONE);
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_hdr(&h, 9),
			KIWI_TERM_ERR_DDP_U_TOO_LONG);
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_hdr(&h, 7),
			KIWI_TERM_ERR_RDMAP_OP_UNSPEC);
	h.qn = 1;
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_hdr(&h, 8),
			KIWI_TERM_ERR_DDP_U_INVALID_QN);
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_imm_decode(&imm, wire),
			KIWI_TERM_ERR_NONE);
	kiwi_rdmap_imm_encode(imm, buf);
	KUNIT_EXPECT_EQ(test, memcmp(buf, wire, sizeof(wire)), 0);
	memcpy(bad, wire, sizeof(bad));
	bad[7] = 1;
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_imm_decode(&imm, bad),
			KIWI_TERM_ERR_RDMAP_OP_UNSPEC);
}

static void rdmap_rreq_checks(struct kunit *test)
{
	struct kiwi_ddp_stag_info st = {
		.valid = true, .pd = 1, .qp = KIWI_DDP_ANY_QP,
		.access = KIWI_DDP_ACC_REMOTE_READ, .base = 0x1000,
		.len = 0x1000,
	};
	struct kiwi_rdmap_rreq r = { .size = 0x1000, .src_to = 0x1000 };

	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_rreq(&r, &kstream, &st),
			KIWI_TERM_ERR_NONE);
	r.src_to = 0x1001;
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_rreq(&r, &kstream, &st),
			KIWI_TERM_ERR_RDMAP_BOUNDS);
	r.src_to = ~0ULL - 0x10;
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_rreq(&r, &kstream, &st),
			KIWI_TERM_ERR_RDMAP_TO_WRAP);
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_rreq(&r, &kstream, NULL),
			KIWI_TERM_ERR_RDMAP_INVALID_STAG);
	st.access = KIWI_DDP_ACC_REMOTE_WRITE;
	r.src_to = 0x1000;
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_rreq(&r, &kstream, &st),
			KIWI_TERM_ERR_RDMAP_ACCESS);
	st.qp = 3;
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_rreq(&r, &kstream, &st),
			KIWI_TERM_ERR_RDMAP_STAG_STREAM);
	r.size = 0;
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_rreq(&r, &kstream, NULL),
			KIWI_TERM_ERR_NONE);
}

/* A stream without remote read refuses a Read Request of any size > 0. */
static void rdmap_rreq_stream_rights(struct kunit *test)
{
	struct kiwi_ddp_stream wo = kstream;
	struct kiwi_rdmap_rreq r = { .size = 16, .src_to = 0x1000 };

	wo.access = KIWI_DDP_ACC_REMOTE_WRITE;
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_rreq(&r, &wo, NULL),
			KIWI_TERM_ERR_RDMAP_ACCESS);
	r.size = 0;
	KUNIT_EXPECT_EQ(test, kiwi_rdmap_check_rreq(&r, &wo, NULL),
			KIWI_TERM_ERR_NONE);
}

static enum kiwi_term_err krresp(u64 to, u32 len, bool last,
				 const struct kiwi_rdmap_rresp_view *v)
{
	struct kiwi_ddp_hdr h = {
		.tagged = true, .last = last, .dv = 1, .ulp_ctrl = 0x42,
		.stag = 0x77, .to = to,
	};

	return kiwi_rdmap_check_rresp(&h, len, v);
}

/* A Read Response covers the Read's sink in order, exactly. */
static void rdmap_rresp_coverage(struct kunit *test)
{
	struct kiwi_rdmap_rresp_view v = {
		.sink_stag = 0x77, .sink_to = 0x2000, .size = 100,
	};

	KUNIT_EXPECT_EQ(test, krresp(0x2000, 100, true, NULL),
			KIWI_TERM_ERR_RDMAP_OPCODE);
	KUNIT_EXPECT_EQ(test, krresp(0x2000, 100, true, &v),
			KIWI_TERM_ERR_NONE);
	KUNIT_EXPECT_EQ(test, krresp(0, 0, true, &v),
			KIWI_TERM_ERR_DDP_T_BOUNDS);
	KUNIT_EXPECT_EQ(test, krresp(0x2000, 60, true, &v),
			KIWI_TERM_ERR_DDP_T_BOUNDS);
	v.placed = 60;
	KUNIT_EXPECT_EQ(test, krresp(0x2000 + 60, 40, true, &v),
			KIWI_TERM_ERR_NONE);
	KUNIT_EXPECT_EQ(test, krresp(0x2000 + 61, 39, false, &v),
			KIWI_TERM_ERR_DDP_T_BOUNDS);
	v.sink_stag = 0x78;
	KUNIT_EXPECT_EQ(test, krresp(0x2000 + 60, 40, true, &v),
			KIWI_TERM_ERR_DDP_T_INVALID_STAG);
}

static struct kunit_case rdmap_cases[] = {
	KUNIT_CASE(rdmap_ctrl_octets),
	KUNIT_CASE(rdmap_unsupported_opcodes),
	KUNIT_CASE(rdmap_rreq_codec),
	KUNIT_CASE(rdmap_imm),
	KUNIT_CASE(rdmap_rreq_checks),
	KUNIT_CASE(rdmap_rreq_stream_rights),
	KUNIT_CASE(rdmap_rresp_coverage),
	{}
};

static struct kunit_suite rdmap_suite = {
	.name = "kiwi_rdmap",
	.test_cases = rdmap_cases,
};

/* (Layer, EType, ECode) from RFC 5040 Fig. 9, RFC 5041 7.2, RFC 6581 8. */
static const u8 term_triples[KIWI_TERM_ERR_COUNT][3] = {
	[KIWI_TERM_ERR_RDMAP_CATASTROPHIC] = { 0, 0, 0x00 },
	[KIWI_TERM_ERR_RDMAP_INVALID_STAG] = { 0, 1, 0x00 },
	[KIWI_TERM_ERR_RDMAP_BOUNDS] = { 0, 1, 0x01 },
	[KIWI_TERM_ERR_RDMAP_ACCESS] = { 0, 1, 0x02 },
	[KIWI_TERM_ERR_RDMAP_STAG_STREAM] = { 0, 1, 0x03 },
	[KIWI_TERM_ERR_RDMAP_TO_WRAP] = { 0, 1, 0x04 },
	[KIWI_TERM_ERR_RDMAP_CANNOT_INVALIDATE] = { 0, 1, 0x09 },
	[KIWI_TERM_ERR_RDMAP_PROT_UNSPEC] = { 0, 1, 0xff },
	[KIWI_TERM_ERR_RDMAP_VERSION] = { 0, 2, 0x05 },
	[KIWI_TERM_ERR_RDMAP_OPCODE] = { 0, 2, 0x06 },
	[KIWI_TERM_ERR_RDMAP_CATA_STREAM] = { 0, 2, 0x07 },
	[KIWI_TERM_ERR_RDMAP_CATA_GLOBAL] = { 0, 2, 0x08 },
	[KIWI_TERM_ERR_RDMAP_OP_CANNOT_INVALIDATE] = { 0, 2, 0x09 },
	[KIWI_TERM_ERR_RDMAP_OP_UNSPEC] = { 0, 2, 0xff },
	[KIWI_TERM_ERR_DDP_CATASTROPHIC] = { 1, 0, 0x00 },
	[KIWI_TERM_ERR_DDP_T_INVALID_STAG] = { 1, 1, 0x00 },
	[KIWI_TERM_ERR_DDP_T_BOUNDS] = { 1, 1, 0x01 },
	[KIWI_TERM_ERR_DDP_T_STAG_STREAM] = { 1, 1, 0x02 },
	[KIWI_TERM_ERR_DDP_T_TO_WRAP] = { 1, 1, 0x03 },
	[KIWI_TERM_ERR_DDP_T_VERSION] = { 1, 1, 0x04 },
	[KIWI_TERM_ERR_DDP_U_INVALID_QN] = { 1, 2, 0x01 },
	[KIWI_TERM_ERR_DDP_U_MSN_NOBUF] = { 1, 2, 0x02 },
	[KIWI_TERM_ERR_DDP_U_MSN_RANGE] = { 1, 2, 0x03 },
	[KIWI_TERM_ERR_DDP_U_MO] = { 1, 2, 0x04 },
	[KIWI_TERM_ERR_DDP_U_TOO_LONG] = { 1, 2, 0x05 },
	[KIWI_TERM_ERR_DDP_U_VERSION] = { 1, 2, 0x06 },
	[KIWI_TERM_ERR_LLP_CLOSED] = { 2, 0, 0x01 },
	[KIWI_TERM_ERR_LLP_CRC] = { 2, 0, 0x02 },
	[KIWI_TERM_ERR_LLP_MARKER] = { 2, 0, 0x03 },
	[KIWI_TERM_ERR_LLP_BAD_FRAME] = { 2, 0, 0x04 },
	[KIWI_TERM_ERR_LLP_LOCAL_CATA] = { 2, 0, 0x05 },
	[KIWI_TERM_ERR_LLP_IRD] = { 2, 0, 0x06 },
	[KIWI_TERM_ERR_LLP_NO_RTR] = { 2, 0, 0x07 },
};

static void term_code_table(struct kunit *test)
{
	struct kiwi_term_code c;
	int e;

	for (e = KIWI_TERM_ERR_NONE + 1; e < KIWI_TERM_ERR_COUNT; e++) {
		KUNIT_ASSERT_EQ(test, kiwi_term_code_of(e, &c), 0);
		KUNIT_EXPECT_EQ(test, c.layer, term_triples[e][0]);
		KUNIT_EXPECT_EQ(test, c.etype, term_triples[e][1]);
		KUNIT_EXPECT_EQ(test, c.ecode, term_triples[e][2]);
		KUNIT_EXPECT_EQ(test, kiwi_term_err_lookup(c.layer, c.etype,
							   c.ecode), e);
	}
	KUNIT_EXPECT_EQ(test, kiwi_term_code_of(KIWI_TERM_ERR_NONE, &c),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kiwi_term_err_lookup(3, 0, 0), -ENOENT);
}

static void term_message(struct kunit *test)
{
	static const u8 want[] = {
		0x41, 0x47, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0,
		0x20, 0x02, 0, 0,
	};
	struct kiwi_term t;
	u8 msg[KIWI_TERM_MSG_MAX];

	KUNIT_ASSERT_EQ(test, kiwi_term_from_err(&t, KIWI_TERM_ERR_LLP_CRC,
						 NULL, 0), 0);
	KUNIT_ASSERT_EQ(test, kiwi_term_build_msg(&t, 1, msg, sizeof(msg)),
			(int)sizeof(want));
	KUNIT_EXPECT_EQ(test, memcmp(msg, want, sizeof(want)), 0);
}

static void term_copied_headers(struct kunit *test)
{
	u8 seg[46] = { 0x41, 0x41, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1 };
	u8 body[KIWI_TERM_BODY_MAX];
	struct kiwi_term t, d;

	memset(seg + 18, 0x5a, 28);
	KUNIT_ASSERT_EQ(test, kiwi_term_from_err(&t, KIWI_TERM_ERR_RDMAP_ACCESS,
						 seg, sizeof(seg)), 0);
	KUNIT_ASSERT_EQ(test, kiwi_term_encode(&t, body, sizeof(body)), 52);
	KUNIT_EXPECT_EQ(test, body[0], 0x01);
	KUNIT_EXPECT_EQ(test, body[1], 0x02);
	KUNIT_EXPECT_EQ(test, body[2], 0xe0);
	KUNIT_EXPECT_EQ(test, body[5], 46);
	KUNIT_EXPECT_EQ(test, memcmp(body + 6, seg, 46), 0);
	KUNIT_ASSERT_EQ(test, kiwi_term_decode(&d, body, 52, 0), 52);
	KUNIT_EXPECT_EQ(test, d.ddp_hdr_len, 18);
	KUNIT_EXPECT_EQ(test, d.rdma_hdr_len, 28);
	KUNIT_ASSERT_EQ(test, kiwi_term_from_err(&t, KIWI_TERM_ERR_DDP_U_MO,
						 seg, sizeof(seg)), 0);
	KUNIT_EXPECT_EQ(test, kiwi_term_body_len(&t), 24U);
}

static void term_siw_swapped(struct kunit *test)
{
	static const u8 siw_crc[] = { 0x02, 0x02, 0x00, 0x00 };
	static const u8 rfc_crc[] = { 0x20, 0x02, 0x00, 0x00 };
	struct kiwi_term d;

	KUNIT_EXPECT_TRUE(test, kiwi_term_siw_swapped(siw_crc, 4, false));
	KUNIT_EXPECT_FALSE(test, kiwi_term_siw_swapped(rfc_crc, 4, true));
	KUNIT_ASSERT_EQ(test, kiwi_term_decode(&d, siw_crc, 4,
					       KIWI_TERM_DEC_SIW_SWAPPED), 4);
	KUNIT_EXPECT_EQ(test, d.layer, KIWI_TERM_LAYER_LLP);
	KUNIT_EXPECT_EQ(test, d.ecode, 0x02);
	KUNIT_EXPECT_EQ(test, kiwi_term_decode(&d, siw_crc, 3, 0), -EBADMSG);
}

static struct kunit_case term_cases[] = {
	KUNIT_CASE(term_code_table),
	KUNIT_CASE(term_message),
	KUNIT_CASE(term_copied_headers),
	KUNIT_CASE(term_siw_swapped),
	{}
};

static struct kunit_suite term_suite = {
	.name = "kiwi_term",
	.test_cases = term_cases,
};

kunit_test_suites(&rdmap_suite, &term_suite);
