// SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
//
// libkiwi claims a device by a property of the device, not by its name:
// every kiwi ib_device has the sysfs file KIWI_SYSFS_ABI_FILE
// (/sys/class/infiniband/DEV/kiwi/abi_version), which no other driver
// creates. So `rdma link add eth0_kiwi type kiwi netdev eth0` and a later
// `rdma dev set eth0_kiwi name NEW` work, and siw, rxe or hardware devices
// in the same machine are left to their own providers. libibverbs then
// checks the uverbs ABI version (match_min/max_abi_version) on its own.
#include "match.h"

#include <rdma/kiwi-abi.h>

namespace kiwi {

bool abi_file_matches(const char *text, int len, unsigned int abi) noexcept
{
	unsigned long value = 0;
	int i = 0;

	if (len > 0 && text[len - 1] == '\n')
		len--;
	if (len <= 0 || len > 9)
		return false;
	for (; i < len; i++) {
		if (text[i] < '0' || text[i] > '9')
			return false;
		value = value * 10 + static_cast<unsigned long>(text[i] - '0');
	}
	return value == abi;
}

bool match_device(pabi::verbs_sysfs_dev *sysfs_dev) noexcept
{
	char buf[16];

	if (sysfs_dev->node_type != IBV_NODE_RNIC)
		return false;
	const int len = pabi::ibv_read_ibdev_sysfs_file(
		buf, sizeof(buf), sysfs_dev, "%s", KIWI_SYSFS_ABI_FILE);
	return len > 0 && abi_file_matches(buf, len, KIWI_ABI_VERSION);
}

} // namespace kiwi
