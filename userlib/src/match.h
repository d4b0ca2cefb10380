// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// Which RDMA devices libkiwi claims: see match.cc.
#pragma once

#include "verbs_private.h"

namespace kiwi {

// libibverbs' match_device callback: true for a kiwi device of our ABI.
bool match_device(pabi::verbs_sysfs_dev *sysfs_dev) noexcept;

// True if @text (the contents of KIWI_SYSFS_ABI_FILE, @len octets) names
// ABI version @abi: decimal digits and at most one trailing newline.
bool abi_file_matches(const char *text, int len, unsigned int abi) noexcept;

} // namespace kiwi
