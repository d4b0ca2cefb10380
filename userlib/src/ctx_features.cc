// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
#include "ctx_features.h"

#include <rdma/kiwi-abi.h>

#include <cerrno>
#include <cstdlib>

namespace kiwi {

FeatureLimit parse_feature_limit(const char *env) noexcept
{
	const FeatureLimit all{.mask = KIWI_CTX_FEATURES, .legacy_resp = false};

	if (!env || !*env)
		return all;
	char *end = nullptr;
	errno = 0;
	const unsigned long v = std::strtoul(env, &end, 0);
	if (errno || *end || v > UINT32_MAX || *env == '-')
		return all;
	return {.mask = static_cast<uint32_t>(v), .legacy_resp = v == 0};
}

uint32_t ctx_features(uint32_t offered, const FeatureLimit &limit) noexcept
{
	return offered & limit.mask & KIWI_CTX_FEATURES;
}

} // namespace kiwi
