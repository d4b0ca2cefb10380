#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lab scenario of tests/kunit/run.sh, run as root in a guest booted with the
# debug kernel. Loading kiwi_kunit.ko runs every KUnit suite in it; the KTAP
# goes to the kernel log, which the lab saves as kiwi-kunit.kmsg for run.sh to
# judge. Unloading it runs the module exit path under KASAN/kmemleak too.

set -euo pipefail

ko=$KIWI_BUILD/kunit/src/kiwi_kunit.ko
[ -r "$ko" ] || {
	echo "kiwi-kunit: $ko missing (tests/kunit/run.sh builds it)" >&2
	exit 1
}
[ -d /sys/kernel/debug/kunit ] || {
	echo "kiwi-kunit: $(uname -r) has no KUnit (boot the debug kernel)" >&2
	exit 1
}
insmod "$ko"
rmmod kiwi_kunit
