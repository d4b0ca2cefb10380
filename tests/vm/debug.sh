#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/vm/debug.sh [SCENARIO...] [tests/vm/run.sh options]
#
# `make check-vm-debug`: the check-vm scenarios under the debug kernel
# (KASAN, lockdep, kmemleak; scripts/debug-kernel.sh, built first if its
# cache entry is cold). kiwi.ko is built against that kernel by
# scripts/debug-module.sh in $KIWI_BUILD/vm-debug/src, so the checkout's
# own objects are never touched; the lab fails a scenario on any KASAN, lockdep or
# kmemleak report. Without SCENARIO arguments every scenario runs (about
# 25 minutes under TCG); `make test` runs the connection and QP scenarios
# (DEBUG_VM_CI in the Makefile). Ends with 'N passed, N failed'.

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${KIWI_BUILD:-$REPO/build}
OUT=$BUILD/vm-debug

die() {
	echo "check-vm-debug: $*" >&2
	echo "0 passed, 1 failed"
	exit 1
}

echo "check-vm-debug: building kiwi.ko"
env_file=$("$REPO/scripts/debug-module.sh" "$OUT/src") ||
	die "the debug kernel or kiwi.ko does not build"
# shellcheck source=/dev/null
. "$env_file"
# The scenarios' test module (tests/vm/kmod) for the debug kernel, from the
# same copy of the sources.
nice make -s -C "$KIWI_DEBUG_KDIR" M="$OUT/src/tests/vm/kmod" modules >&2 ||
	die "tests/vm/kmod does not build against the debug kernel"
ko=$OUT/src/tests/vm/kmod/kiwi_vmtest.ko
rel=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
mkdir -p "$BUILD/vmkmod/$rel"
cp "$ko" "$OUT/src/tests/vm/kmod/kiwi_kverbs.ko" "$BUILD/vmkmod/$rel/"

KIWI_LAB_SELFCHECK=0 exec bash "$REPO/tests/vm/run.sh" \
	--kernel "$KIWI_DEBUG_BZIMAGE" --module-dir "$KIWI_DEBUG_MODROOT" \
	--kiwi-ko "$OUT/src/kiwi.ko" --timeout "${DEBUG_VM_TIMEOUT:-1500}" \
	--boot-timeout "${DEBUG_VM_BOOT_TIMEOUT:-900}" "$@"
