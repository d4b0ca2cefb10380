// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "kiwi_platform": the contract kernel/proto/platform.h gives the
 * wire code in the kernel build. kiwi_crc32c() must be the raw CRC32c
 * register (no implicit inversion, chainable), and the unaligned big-endian
 * accessors must match the on-wire octet order at any alignment.
 */
#include <kunit/test.h>

#include "proto/platform.h"

/* RFC 3720 B.4 check value: CRC32c("123456789") = 0xe3069283. */
static const u8 check_input[] = "123456789";
#define CHECK_LEN 9
#define CHECK_CRC 0xe3069283U

static void crc32c_check_value(struct kunit *test)
{
	u32 crc = ~kiwi_crc32c(~0U, check_input, CHECK_LEN);

	KUNIT_EXPECT_EQ(test, crc, CHECK_CRC);
}

static void crc32c_raw_register(struct kunit *test)
{
	/* A raw register over no data is its seed, whatever the seed. */
	KUNIT_EXPECT_EQ(test, kiwi_crc32c(~0U, check_input, 0), ~0U);
	KUNIT_EXPECT_EQ(test, kiwi_crc32c(0x12345678U, check_input, 0),
			0x12345678U);
	KUNIT_EXPECT_NE(test, kiwi_crc32c(~0U, check_input, CHECK_LEN),
			CHECK_CRC);
}

static void crc32c_chains(struct kunit *test)
{
	u32 whole = kiwi_crc32c(~0U, check_input, CHECK_LEN);
	size_t cut;

	for (cut = 0; cut <= CHECK_LEN; cut++) {
		u32 part = kiwi_crc32c(~0U, check_input, cut);

		part = kiwi_crc32c(part, check_input + cut, CHECK_LEN - cut);
		KUNIT_EXPECT_EQ_MSG(test, part, whole, "split at %zu", cut);
	}
}

static void be_accessors_wire_order(struct kunit *test)
{
	u8 buf[12];
	size_t off;

	for (off = 0; off < 4; off++) {
		memset(buf, 0, sizeof(buf));
		put_unaligned_be16(0x0102, buf + off);
		KUNIT_EXPECT_EQ(test, buf[off], 0x01);
		KUNIT_EXPECT_EQ(test, buf[off + 1], 0x02);
		KUNIT_EXPECT_EQ(test, get_unaligned_be16(buf + off), 0x0102);

		put_unaligned_be32(0xa1b2c3d4U, buf + off);
		KUNIT_EXPECT_EQ(test, buf[off], 0xa1);
		KUNIT_EXPECT_EQ(test, buf[off + 3], 0xd4);
		KUNIT_EXPECT_EQ(test, get_unaligned_be32(buf + off), 0xa1b2c3d4U);

		put_unaligned_be64(0x0102030405060708ULL, buf + off);
		KUNIT_EXPECT_EQ(test, buf[off], 0x01);
		KUNIT_EXPECT_EQ(test, buf[off + 7], 0x08);
		KUNIT_EXPECT_EQ(test, get_unaligned_be64(buf + off),
				0x0102030405060708ULL);
	}
}

static void le32_accessor_crc_order(struct kunit *test)
{
	u8 buf[5] = { 0 };

	/* Least significant octet first, at an odd offset. */
	put_unaligned_le32(0xe3069283U, buf + 1);
	KUNIT_EXPECT_EQ(test, buf[1], 0x83);
	KUNIT_EXPECT_EQ(test, buf[4], 0xe3);
	KUNIT_EXPECT_EQ(test, get_unaligned_le32(buf + 1), 0xe3069283U);
}

static struct kunit_case kiwi_platform_cases[] = {
	KUNIT_CASE(crc32c_check_value),
	KUNIT_CASE(crc32c_raw_register),
	KUNIT_CASE(crc32c_chains),
	KUNIT_CASE(be_accessors_wire_order),
	KUNIT_CASE(le32_accessor_crc_order),
	{}
};

static struct kunit_suite kiwi_platform_suite = {
	.name = "kiwi_platform",
	.test_cases = kiwi_platform_cases,
};

kunit_test_suites(&kiwi_platform_suite);
