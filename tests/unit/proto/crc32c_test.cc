// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// CRC32c: standard vectors through kiwi_crc32c() and through each user-space
// implementation (SSE4.2 and the table fallback), against a bitwise model.
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "mpa_test_util.h"

extern "C" {
#include "proto/platform.h"
#include "proto/user/crc32c.h"
}
#include "vectors/mpa_vectors.h"

namespace {

using Impl = u32 (*)(u32, const void *, size_t);

struct Named {
	const char *name;
	Impl fn;
};

class Crc32cImpl : public ::testing::TestWithParam<Named> {
protected:
	void SetUp() override
	{
		if (GetParam().fn == kiwi_crc32c_hw &&
		    !kiwi_crc32c_hw_available())
			GTEST_SKIP() << "no SSE4.2 on this CPU";
		if (GetParam().fn == kiwi_crc32c_fold &&
		    !kiwi_crc32c_fold_available())
			GTEST_SKIP() << "no AVX-512 VPCLMULQDQ on this CPU";
	}
	u32 final_crc(const void *p, size_t n)
	{
		return ~GetParam().fn(~0U, p, n);
	}
};

TEST_P(Crc32cImpl, CheckValue123456789)
{
	EXPECT_EQ(CRC32C_CHECK_123456789, final_crc("123456789", 9));
}

// MPA-032: CRC32c "as in iSCSI": the RFC 3720 B.4 vectors.
TEST_P(Crc32cImpl, Rfc3720Vectors)
{
	uint8_t b[32];

	memset(b, 0, sizeof(b));
	EXPECT_EQ(CRC32C_RFC3720_ZEROS, final_crc(b, 32));
	memset(b, 0xff, sizeof(b));
	EXPECT_EQ(CRC32C_RFC3720_ONES, final_crc(b, 32));
	for (int i = 0; i < 32; i++)
		b[i] = uint8_t(i);
	EXPECT_EQ(CRC32C_RFC3720_INC, final_crc(b, 32));
	for (int i = 0; i < 32; i++)
		b[i] = uint8_t(31 - i);
	EXPECT_EQ(CRC32C_RFC3720_DEC, final_crc(b, 32));
}

// Raw-register contract of the kernel's crc32c(): no implicit inversion.
TEST_P(Crc32cImpl, RawRegisterContract)
{
	EXPECT_EQ(0u, GetParam().fn(0, "", 0));
	EXPECT_EQ(0x12345678u, GetParam().fn(0x12345678u, "", 0));
	EXPECT_EQ(mpatest::bitwise_crc32c((const uint8_t *)"a", 1, 0),
		  GetParam().fn(0, "a", 1));
}

// Every length 0..1100 and alignment 0..7, and chaining in two calls, match
// the bitwise model; covers all 3-way block sizes and the tails.
TEST_P(Crc32cImpl, MatchesBitwiseAllLengthsAndAlignments)
{
	auto data = mpatest::pattern(2200, 7);

	for (size_t align = 0; align < 8; align++) {
		for (size_t len = 0; len <= 2100; len += (len < 64 ? 1 : 13)) {
			const uint8_t *p = data.data() + align;
			u32 ref = mpatest::bitwise_crc32c(p, len, 0x9abcdef0u);
			ASSERT_EQ(ref, GetParam().fn(0x9abcdef0u, p, len))
				<< "len " << len << " align " << align;
			size_t cut = len / 3;
			u32 two = GetParam().fn(0x9abcdef0u, p, cut);
			two = GetParam().fn(two, p + cut, len - cut);
			ASSERT_EQ(ref, two);
		}
	}
}

TEST_P(Crc32cImpl, LargeBuffers)
{
	for (size_t len :
	     {3 * 256, 511, 512, 513, 767, 768, 1024 + 63, 3 * 1024, 3 * 4096,
	      3 * 4096 + 3 * 1024 + 769, 65536, 65536 + 17, 200000}) {
		auto data = mpatest::pattern(len + 1, uint32_t(len));
		ASSERT_EQ(mpatest::bitwise_crc32c(data.data() + 1, len),
			  GetParam().fn(~0U, data.data() + 1, len))
			<< len;
	}
}

INSTANTIATE_TEST_SUITE_P(Impls, Crc32cImpl,
			 ::testing::Values(Named{"fold", kiwi_crc32c_fold},
					   Named{"hw", kiwi_crc32c_hw},
					   Named{"sw", kiwi_crc32c_sw},
					   Named{"dispatch", kiwi_crc32c}),
			 [](const auto &info) {
				 return std::string(info.param.name);
			 });

// MPA-032: golden FPDU CRCs (Figure 5 with its leading marker, Figure 6
// with the marker inside; without the marker Figure 5 would differ).
TEST(Crc32c, GoldenFigureCrcs)
{
	EXPECT_EQ(MPA_FIG5_CRC, ~kiwi_crc32c(~0U, mpa_fig5_wire, 48));
	EXPECT_EQ(MPA_FIG6_CRC, ~kiwi_crc32c(~0U, mpa_fig6_wire, 48));
	EXPECT_EQ(MPA_FIG5_CRC_NO_MARKER,
		  ~kiwi_crc32c(~0U, mpa_fig5_wire + 4, 44));
}

} // namespace
