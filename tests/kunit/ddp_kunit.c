// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "kiwi_ddp": the DDP header codec, the segmentation planner
 * and the receive validation of kernel/proto/ddp*.c, run in the kernel
 * build of the same sources the user-space tests use.
 */
#include <kunit/test.h>

#include "proto/ddp.h"
#include "proto/rdmap.h"

/* RFC 5044 Figure 5: the DDP header of the first Send (MSN 1). */
static const u8 fig5_hdr[KIWI_DDP_UNTAGGED_HDR_LEN] = {
	0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
};

static const u8 write_hdr[KIWI_DDP_TAGGED_HDR_LEN] = {
	0xc1, 0x40, 0x12, 0x34, 0x56, 0x78,
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
};

static const struct kiwi_ddp_stream kstream = {
	.pd = 3, .qp = 17,
	.access = KIWI_DDP_ACC_REMOTE_WRITE | KIWI_DDP_ACC_REMOTE_READ,
};

static void ddp_hdr_untagged(struct kunit *test)
{
	struct kiwi_ddp_hdr h;
	u8 buf[KIWI_DDP_HDR_MAX];

	KUNIT_ASSERT_EQ(test, kiwi_ddp_hdr_decode(&h, fig5_hdr,
						  sizeof(fig5_hdr)), 18);
	KUNIT_EXPECT_FALSE(test, h.tagged);
	KUNIT_EXPECT_TRUE(test, h.last);
	KUNIT_EXPECT_EQ(test, h.dv, 1);
	KUNIT_EXPECT_EQ(test, h.ulp_ctrl, 0x43);
	KUNIT_EXPECT_EQ(test, h.qn, 0U);
	KUNIT_EXPECT_EQ(test, h.msn, 1U);
	KUNIT_EXPECT_EQ(test, h.mo, 0U);
	KUNIT_EXPECT_EQ(test, kiwi_ddp_hdr_encode(&h, buf), 18U);
	KUNIT_EXPECT_EQ(test, memcmp(buf, fig5_hdr, sizeof(fig5_hdr)), 0);
}

static void ddp_hdr_tagged(struct kunit *test)
{
	struct kiwi_ddp_hdr h;
	u8 buf[KIWI_DDP_HDR_MAX];

	KUNIT_ASSERT_EQ(test, kiwi_ddp_hdr_decode(&h, write_hdr,
						  sizeof(write_hdr)), 14);
	KUNIT_EXPECT_TRUE(test, h.tagged);
	KUNIT_EXPECT_EQ(test, h.stag, 0x12345678U);
	KUNIT_EXPECT_EQ(test, h.to, 0x0102030405060708ULL);
	KUNIT_EXPECT_EQ(test, kiwi_ddp_hdr_encode(&h, buf), 14U);
	KUNIT_EXPECT_EQ(test, memcmp(buf, write_hdr, sizeof(write_hdr)), 0);
}

static void ddp_hdr_short_and_reserved(struct kunit *test)
{
	struct kiwi_ddp_hdr h;
	u8 buf[KIWI_DDP_HDR_MAX];

	KUNIT_EXPECT_EQ(test, kiwi_ddp_hdr_decode(&h, fig5_hdr, 17), -EBADMSG);
	KUNIT_EXPECT_EQ(test, kiwi_ddp_hdr_decode(&h, write_hdr, 13), -EBADMSG);
	KUNIT_EXPECT_EQ(test, kiwi_ddp_hdr_decode(&h, fig5_hdr, 0), -EBADMSG);
	memcpy(buf, fig5_hdr, sizeof(fig5_hdr));
	buf[0] |= KIWI_DDP_CTRL_RSVD;
	KUNIT_ASSERT_EQ(test, kiwi_ddp_hdr_decode(&h, buf, 18), 18);
	KUNIT_EXPECT_EQ(test, kiwi_ddp_check_version(&h), KIWI_TERM_ERR_NONE);
	kiwi_ddp_hdr_encode(&h, buf);
	KUNIT_EXPECT_EQ(test, buf[0], 0x41);
}

static void ddp_msn_wrap(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, kiwi_ddp_msn_next(0xffffffffU), 0U);
	KUNIT_EXPECT_EQ(test, kiwi_ddp_msn_next(KIWI_DDP_MSN_INIT), 2U);
}

static void ddp_seg_examples(struct kunit *test)
{
	struct kiwi_ddp_seg_iter it;
	struct kiwi_ddp_seg s;

	KUNIT_ASSERT_EQ(test, kiwi_ddp_seg_init(&it, false, 2048, 0, 1500), 0);
	KUNIT_ASSERT_TRUE(test, kiwi_ddp_seg_next(&it, &s));
	KUNIT_EXPECT_EQ(test, s.mo, 0U);
	KUNIT_EXPECT_EQ(test, s.len, 1482U);
	KUNIT_EXPECT_FALSE(test, s.last);
	KUNIT_ASSERT_TRUE(test, kiwi_ddp_seg_next(&it, &s));
	KUNIT_EXPECT_EQ(test, s.mo, 1482U);
	KUNIT_EXPECT_EQ(test, s.len, 566U);
	KUNIT_EXPECT_TRUE(test, s.last);
	KUNIT_EXPECT_FALSE(test, kiwi_ddp_seg_next(&it, &s));

	KUNIT_ASSERT_EQ(test, kiwi_ddp_seg_init(&it, true, 2048, 16384, 1500),
			0);
	KUNIT_ASSERT_TRUE(test, kiwi_ddp_seg_next(&it, &s));
	KUNIT_EXPECT_EQ(test, s.to, 16384ULL);
	KUNIT_EXPECT_EQ(test, s.len, 1486U);
	KUNIT_ASSERT_TRUE(test, kiwi_ddp_seg_next(&it, &s));
	KUNIT_EXPECT_EQ(test, s.to, 17870ULL);
	KUNIT_EXPECT_EQ(test, s.len, 562U);
	KUNIT_EXPECT_TRUE(test, s.last);
	KUNIT_EXPECT_FALSE(test, kiwi_ddp_seg_next(&it, &s));
}

static void ddp_seg_zero_length(struct kunit *test)
{
	struct kiwi_ddp_seg_iter it;
	struct kiwi_ddp_seg s;

	KUNIT_ASSERT_EQ(test, kiwi_ddp_seg_init(&it, true, 0, 8, 128), 0);
	KUNIT_ASSERT_TRUE(test, kiwi_ddp_seg_next(&it, &s));
	KUNIT_EXPECT_EQ(test, s.len, 0U);
	KUNIT_EXPECT_TRUE(test, s.last);
	KUNIT_EXPECT_FALSE(test, kiwi_ddp_seg_next(&it, &s));
	KUNIT_EXPECT_EQ(test, kiwi_ddp_seg_count(false, 0, 128), 1U);
	KUNIT_EXPECT_EQ(test, kiwi_ddp_seg_init(&it, false, 1, 0, 18),
			-EINVAL);
}

static enum kiwi_term_err kwr(u64 to, u32 len,
			      const struct kiwi_ddp_stag_info *st)
{
	struct kiwi_ddp_hdr h = {
		.tagged = true, .last = true, .dv = 1, .ulp_ctrl = 0x40,
		.stag = 0x100, .to = to,
	};

	return kiwi_ddp_check_tagged(&h, len, KIWI_DDP_ACC_REMOTE_WRITE,
				     &kstream, st);
}

static void ddp_check_tagged_codes(struct kunit *test)
{
	struct kiwi_ddp_stag_info st = {
		.valid = true, .pd = 3, .qp = KIWI_DDP_ANY_QP,
		.access = KIWI_DDP_ACC_REMOTE_WRITE, .base = 0x1000,
		.len = 0x100,
	};

	KUNIT_EXPECT_EQ(test, kwr(0x1000, 0x100, &st), KIWI_TERM_ERR_NONE);
	KUNIT_EXPECT_EQ(test, kwr(0x1000, 0x101, &st),
			KIWI_TERM_ERR_DDP_T_BOUNDS);
	KUNIT_EXPECT_EQ(test, kwr(0xfff, 1, &st), KIWI_TERM_ERR_DDP_T_BOUNDS);
	KUNIT_EXPECT_EQ(test, kwr(~0ULL - 7, 16, &st),
			KIWI_TERM_ERR_DDP_T_TO_WRAP);
	KUNIT_EXPECT_EQ(test, kwr(0x1000, 1, NULL),
			KIWI_TERM_ERR_DDP_T_INVALID_STAG);
	KUNIT_EXPECT_EQ(test, kwr(0xdead, 0, NULL), KIWI_TERM_ERR_NONE);
	st.qp = 18;
	KUNIT_EXPECT_EQ(test, kwr(0x1000, 1, &st),
			KIWI_TERM_ERR_DDP_T_STAG_STREAM);
	st.qp = KIWI_DDP_ANY_QP;
	st.pd = 4;
	KUNIT_EXPECT_EQ(test, kwr(0x1000, 1, &st),
			KIWI_TERM_ERR_DDP_T_STAG_STREAM);
	st.pd = 3;
	st.access = KIWI_DDP_ACC_REMOTE_READ;
	KUNIT_EXPECT_EQ(test, kwr(0x1000, 1, &st), KIWI_TERM_ERR_RDMAP_ACCESS);
	st.valid = false;
	KUNIT_EXPECT_EQ(test, kwr(0x1000, 1, &st),
			KIWI_TERM_ERR_DDP_T_INVALID_STAG);
}

/* A stream without remote write refuses any Write with payload. */
static void ddp_check_tagged_stream_rights(struct kunit *test)
{
	struct kiwi_ddp_stream ro = kstream;
	struct kiwi_ddp_stag_info st = {
		.valid = true, .pd = 3, .qp = KIWI_DDP_ANY_QP,
		.access = KIWI_DDP_ACC_REMOTE_WRITE | KIWI_DDP_ACC_LOCAL_WRITE,
		.base = 0x1000, .len = 0x100,
	};
	struct kiwi_ddp_hdr h = {
		.tagged = true, .last = true, .dv = 1, .ulp_ctrl = 0x40,
		.stag = 0x100, .to = 0x1000,
	};

	ro.access = KIWI_DDP_ACC_REMOTE_READ;
	KUNIT_EXPECT_EQ(test, kiwi_ddp_check_tagged(&h, 1,
						    KIWI_DDP_ACC_REMOTE_WRITE,
						    &ro, &st),
			KIWI_TERM_ERR_RDMAP_ACCESS);
	KUNIT_EXPECT_EQ(test, kiwi_ddp_check_tagged(&h, 0,
						    KIWI_DDP_ACC_REMOTE_WRITE,
						    &ro, NULL),
			KIWI_TERM_ERR_NONE);
	KUNIT_EXPECT_EQ(test, kiwi_ddp_check_tagged(&h, 1,
						    KIWI_DDP_ACC_LOCAL_WRITE,
						    &ro, &st),
			KIWI_TERM_ERR_NONE);
}

static enum kiwi_term_err ksend(u8 dv, u32 msn, u32 mo, u32 len,
				const struct kiwi_ddp_queue_view *q)
{
	struct kiwi_ddp_hdr h = {
		.last = true, .dv = dv, .ulp_ctrl = 0x43, .msn = msn, .mo = mo,
	};

	return kiwi_ddp_check_untagged(&h, len, q);
}

static void ddp_check_untagged_codes(struct kunit *test)
{
	struct kiwi_ddp_queue_view q = {
		.msn_lo = 0xffffffffU, .msn_win = 2, .has_buf = true,
		.buf_len = 1000,
	};

	KUNIT_EXPECT_EQ(test, ksend(1, 0, 0, 1000, &q), KIWI_TERM_ERR_NONE);
	KUNIT_EXPECT_EQ(test, ksend(1, 0, 0, 1, NULL),
			KIWI_TERM_ERR_DDP_U_INVALID_QN);
	KUNIT_EXPECT_EQ(test, ksend(1, 1, 0, 1, &q),
			KIWI_TERM_ERR_DDP_U_MSN_RANGE);
	KUNIT_EXPECT_EQ(test, ksend(1, 0, 1001, 0, &q),
			KIWI_TERM_ERR_DDP_U_MO);
	KUNIT_EXPECT_EQ(test, ksend(1, 0, 1, 0, &q), KIWI_TERM_ERR_DDP_U_MO);
	q.mo_next = 1000;
	KUNIT_EXPECT_EQ(test, ksend(1, 0, 1000, 1, &q),
			KIWI_TERM_ERR_DDP_U_TOO_LONG);
	KUNIT_EXPECT_EQ(test, ksend(1, 0, 999, 0, &q), KIWI_TERM_ERR_DDP_U_MO);
	KUNIT_EXPECT_EQ(test, ksend(1, 0, 1000, 0, &q), KIWI_TERM_ERR_NONE);
	q.mo_next = 0;
	KUNIT_EXPECT_EQ(test, ksend(2, 0, 0, 1, &q),
			KIWI_TERM_ERR_DDP_U_VERSION);
	q.has_buf = false;
	KUNIT_EXPECT_EQ(test, ksend(1, 0xffffffffU, 0, 0, &q),
			KIWI_TERM_ERR_DDP_U_MSN_NOBUF);
}

static struct kunit_case ddp_cases[] = {
	KUNIT_CASE(ddp_hdr_untagged),
	KUNIT_CASE(ddp_hdr_tagged),
	KUNIT_CASE(ddp_hdr_short_and_reserved),
	KUNIT_CASE(ddp_msn_wrap),
	KUNIT_CASE(ddp_seg_examples),
	KUNIT_CASE(ddp_seg_zero_length),
	KUNIT_CASE(ddp_check_tagged_codes),
	KUNIT_CASE(ddp_check_tagged_stream_rights),
	KUNIT_CASE(ddp_check_untagged_codes),
	{}
};

static struct kunit_suite ddp_suite = {
	.name = "kiwi_ddp",
	.test_cases = ddp_cases,
};

kunit_test_suites(&ddp_suite);
