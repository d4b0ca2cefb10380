// SPDX-License-Identifier: GPL-2.0
/*
 * kiwi_kunit.ko: KUnit suites over kiwi's wire code (kernel/proto/) and
 * the data path's memory access (kernel/mem_access.c).
 *
 * Every tests/kunit/<name>_kunit.c registers its suites with
 * kunit_test_suites(); KUnit runs them all when this module is loaded and
 * prints KTAP to the kernel log. Built only by tests/kunit/run.sh
 * (KIWI_KUNIT=1, see Kbuild) against a CONFIG_KUNIT kernel.
 */
#include <linux/module.h>

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit suites for the kiwi iWARP wire code and memory access");
