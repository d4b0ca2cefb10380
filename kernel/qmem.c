// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kiwi: queue memory, the memory a verbs object costs in proportion to the
 * sizes its creator asks for: ring areas, the SQ shadow, the transmit
 * buffers of a connection, a kernel CQ's QP table. Every device counts it
 * against a budget (module parameter queue_mem_mb, by default one eighth
 * of RAM) so that no caller, however privileged, can make kiwi take the
 * machine's memory: a create verb over the budget fails with -ENOMEM.
 * What user space creates is also charged to the creator's memory cgroup
 * (KIWI_GFP_USER); Documentation/datapath.md has the numbers.
 */
#include <linux/mm.h>
#include <linux/moduleparam.h>

#include "kiwi.h"

/* MiB per device; 0 selects the default. Read at every charge. */
static unsigned int queue_mem_mb;

/* The budget of every device in octets. */
static u64 kiwi_qmem_budget(void)
{
	unsigned int mb = READ_ONCE(queue_mem_mb);

	if (mb)
		return (u64)mb << 20;
	return ((u64)totalram_pages() << PAGE_SHIFT) / 8;
}

static int kiwi_qmem_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%llu\n", kiwi_qmem_budget() >> 20);
}

static const struct kernel_param_ops kiwi_qmem_param_ops = {
	.set = param_set_uint,
	.get = kiwi_qmem_param_get,
};

module_param_cb(queue_mem_mb, &kiwi_qmem_param_ops, &queue_mem_mb, 0644);
MODULE_PARM_DESC(queue_mem_mb,
		 "Queue memory budget of each device in MiB (0: one eighth of RAM, the default; reads show the budget in force)");

/**
 * kiwi_qmem_charge - take @bytes of queue memory from @kdev's budget
 * @kdev: the device
 * @bytes: what the caller is about to allocate
 *
 * Return: 0, or -ENOMEM if the budget does not hold @bytes more.
 */
int kiwi_qmem_charge(struct kiwi_device *kdev, u64 bytes)
{
	u64 budget = kiwi_qmem_budget();
	s64 used = atomic64_read(&kdev->qmem_used);

	do {
		if (bytes > budget || used > budget - bytes)
			return -ENOMEM;
	} while (!atomic64_try_cmpxchg(&kdev->qmem_used, &used, used + bytes));
	return 0;
}

/* Give back what kiwi_qmem_charge() took. */
void kiwi_qmem_uncharge(struct kiwi_device *kdev, u64 bytes)
{
	WARN_ON_ONCE(atomic64_sub_return(bytes, &kdev->qmem_used) < 0);
}
