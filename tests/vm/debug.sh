#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/vm/debug.sh [SCENARIO...] [tests/vm/run.sh options]
#
# `make check-vm-debug`: the check-vm scenarios under the debug kernel
# (KASAN, lockdep, kmemleak; scripts/debug-kernel.sh, built first if its
# cache entry is cold). kiwi.ko is built against that kernel from a copy
# of the sources in $KIWI_BUILD/vm-debug/src, so the checkout's own objects
# are never touched; the lab fails a scenario on any KASAN, lockdep or
# kmemleak report. Without SCENARIO arguments every scenario runs (about
# 25 minutes under TCG); `make test` runs the connection and QP scenarios
# (DEBUG_VM_CI in the Makefile). Ends with 'N passed, N failed'.

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${KIWI_BUILD:-$REPO/build}
OUT=$BUILD/vm-debug
JOBS=${JOBS:-2}

die() {
	echo "check-vm-debug: $*" >&2
	echo "0 passed, 1 failed"
	exit 1
}

env_file=$("$REPO/scripts/debug-kernel.sh") || die "debug kernel build failed"
# shellcheck source=/dev/null
. "$env_file"

mkdir -p "$OUT/src"
(cd "$REPO" && rsync -a --delete --relative \
	--exclude='*.o' --exclude='*.ko' --exclude='*.mod' --exclude='*.mod.c' \
	--exclude='.*.cmd' --exclude='*.order' --exclude='*.symvers' \
	./Kbuild ./include ./kernel "$OUT/src/")
echo "check-vm-debug: building kiwi.ko against $KIWI_DEBUG_RELEASE"
nice make -s -C "$KIWI_DEBUG_KDIR" M="$OUT/src" -j"$JOBS" modules ||
	die "kiwi.ko does not build against $KIWI_DEBUG_RELEASE"

KIWI_LAB_SELFCHECK=0 exec bash "$REPO/tests/vm/run.sh" \
	--kernel "$KIWI_DEBUG_BZIMAGE" --module-dir "$KIWI_DEBUG_MODROOT" \
	--kiwi-ko "$OUT/src/kiwi.ko" --timeout "${DEBUG_VM_TIMEOUT:-1500}" \
	--boot-timeout "${DEBUG_VM_BOOT_TIMEOUT:-900}" "$@"
