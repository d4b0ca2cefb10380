#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check-kunit`: run kiwi's KUnit suites under the debug kernel.
#
#  1. scripts/debug-kernel.sh: the KASAN/lockdep/kmemleak/KUnit kernel
#     (built first if its cache entry is cold, which takes long).
#  2. kiwi_kunit.ko (Kbuild, KIWI_KUNIT=1) = kernel/proto wire code +
#     tests/kunit/kunit_main.c + every tests/kunit/*_kunit.c, built against
#     that kernel by scripts/debug-module.sh in $KIWI_BUILD/kunit/src (so
#     the checkout's own kiwi.ko objects are never touched).
#  3. scripts/lab/run-scenario boots the debug kernel under TCG and runs the
#     scenario tests/kunit/kiwi-kunit.sh (insmod + rmmod); the lab fails the
#     run on any Oops/BUG/WARNING/KASAN/lockdep/kmemleak report.
#  4. tests/kunit/judge.sh (tests/kunit/ktap.py) judges the KTAP in the
#     guest's kernel log: every struct kunit_suite in tests/kunit/*.c must
#     report all planned cases.
#
# Last line: 'N passed, N failed' over KUnit cases; a missing suite, a planned
# case that never reported and a lab/kernel failure each count as failed.
# Exit status 0 only if nothing failed.
#
# usage: tests/kunit/run.sh [-v]   (-v streams the guest console)
# env:   KIWI_BUILD (default REPO/build), JOBS (default 2),
#        KUNIT_TIMEOUT (seconds for the scenario, default 600),
#        KUNIT_BOOT_TIMEOUT (boot + teardown allowance, default 900: a KASAN +
#        lockdep kernel boots slowly under TCG on a busy host)

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${KIWI_BUILD:-$REPO/build}
OUT=$BUILD/kunit
verbose=()

die() {
	echo "check-kunit: $*" >&2
	echo "0 passed, 1 failed"
	exit 1
}

case ${1:-} in
-v | --verbose) verbose=(-v) ;;
"") ;;
*) die "usage: tests/kunit/run.sh [-v]" ;;
esac

echo "check-kunit: building kiwi_kunit.ko"
env_file=$("$REPO/scripts/debug-module.sh" "$OUT/src" KIWI_KUNIT=1) ||
	die "the debug kernel or kiwi_kunit.ko does not build"
# shellcheck source=/dev/null
. "$env_file"

rm -rf "$OUT/vm"
lab_rc=0
"$REPO/scripts/lab/run-scenario" "${verbose[@]}" \
	--kernel "$KIWI_DEBUG_BZIMAGE" --module-dir "$KIWI_DEBUG_MODROOT" \
	--kiwi-ko none --src "$REPO" --build "$BUILD" --results "$OUT/vm" \
	--timeout "${KUNIT_TIMEOUT:-600}" --boot-timeout "${KUNIT_BOOT_TIMEOUT:-900}" \
	"$REPO/tests/kunit/kiwi-kunit.sh" 2>&1 | sed 's/^/  /' || lab_rc=${PIPESTATUS[0]}

exec "$REPO/tests/kunit/judge.sh" "$OUT/vm/single/kiwi-kunit.kmsg" "$lab_rc"
