// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// libkiwi's choice of context features (ctx_features.h): what the kernel
// offered, what the library knows, what KIWI_ABI_FEATURES allows.
#include "ctx_features.h"

#include <gtest/gtest.h>
#include <rdma/kiwi-abi.h>

namespace kiwi {
namespace {

TEST(CtxFeatures, UnsetOrUnparsableAllowsEverything)
{
	for (const char *env : {static_cast<const char *>(nullptr), "", "x",
				"1x", "-1", "0x100000000"}) {
		const FeatureLimit l = parse_feature_limit(env);
		EXPECT_EQ(l.mask, static_cast<uint32_t>(KIWI_CTX_FEATURES))
			<< (env ? env : "(unset)");
		EXPECT_FALSE(l.legacy_resp) << (env ? env : "(unset)");
	}
}

TEST(CtxFeatures, ZeroAsksAsTheFirstVersion)
{
	for (const char *env : {"0", "0x0", "00"}) {
		const FeatureLimit l = parse_feature_limit(env);
		EXPECT_EQ(l.mask, 0u) << env;
		EXPECT_TRUE(l.legacy_resp) << env;
	}
}

TEST(CtxFeatures, AMaskLimitsWithTheCurrentResponse)
{
	const FeatureLimit l = parse_feature_limit("0x1");
	EXPECT_EQ(l.mask, 1u);
	EXPECT_FALSE(l.legacy_resp);
	EXPECT_EQ(parse_feature_limit("2").mask, 2u);
}

TEST(CtxFeatures, UsesOnlyWhatBothSidesHaveAndTheLimitAllows)
{
	const FeatureLimit all = parse_feature_limit(nullptr);
	const FeatureLimit none = parse_feature_limit("0");

	EXPECT_EQ(ctx_features(KIWI_CTX_FEAT_SQ_DOORBELL, all),
		  static_cast<uint32_t>(KIWI_CTX_FEAT_SQ_DOORBELL));
	// An older kernel wrote no features: zero.
	EXPECT_EQ(ctx_features(0, all), 0u);
	// A newer kernel's bits this library does not know are ignored.
	EXPECT_EQ(ctx_features(0xffffffffu, all),
		  static_cast<uint32_t>(KIWI_CTX_FEATURES));
	EXPECT_EQ(ctx_features(KIWI_CTX_FEAT_SQ_DOORBELL, none), 0u);
	EXPECT_EQ(ctx_features(KIWI_CTX_FEAT_SQ_DOORBELL,
			       parse_feature_limit("0x2")),
		  0u);
}

TEST(CtxFeatures, AllocCtxResponseGrewAtItsEnd)
{
	EXPECT_EQ(offsetof(kiwi_uresp_alloc_ctx, features),
		  static_cast<size_t>(KIWI_URESP_ALLOC_CTX_BASE));
	EXPECT_EQ(sizeof(kiwi_uresp_alloc_ctx), 32u);
}

} // namespace
} // namespace kiwi
