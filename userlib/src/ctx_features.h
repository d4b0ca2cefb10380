// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// Which context features (KIWI_CTX_FEAT_* of kiwi-abi.h) libkiwi uses: those
// the kernel offered (zero from a kernel that predates them), that this
// library knows, and that the environment allows. Kernel-independent, so
// the unit tests link it.
#pragma once

#include <cstdint>

namespace kiwi {

// The limit KIWI_ABI_FEATURES sets (kiwi(7)).
struct FeatureLimit {
	uint32_t mask;	  // context features libkiwi may use
	bool legacy_resp; // ask with the alloc_ctx response of the first
			  // version, as a library from before features does
};

// Parses KIWI_ABI_FEATURES (nullptr: unset): a number in C notation (1,
// 0x1, 0). Unset, empty or not a whole number: every feature. 0 also
// selects the first version's response.
FeatureLimit parse_feature_limit(const char *env) noexcept;

// The context features a context uses.
uint32_t ctx_features(uint32_t offered, const FeatureLimit &limit) noexcept;

} // namespace kiwi
