#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/vm/debug.sh [--build-only] [--kunit] [SCENARIO...]
#                          [tests/vm/run.sh options]
#
# `make check-vm-debug`: the check-vm scenarios under the debug kernel
# (KASAN, lockdep, kmemleak; scripts/debug-kernel.sh, built first if its
# cache entry is cold). kiwi.ko is built against that kernel by
# scripts/debug-module.sh in $KIWI_BUILD/vm-debug/src, so the checkout's
# own objects are never touched; the lab fails a scenario on any KASAN, lockdep or
# kmemleak report. Without SCENARIO arguments every scenario runs (about
# 25 minutes under TCG); `make test` runs the connection and QP scenarios
# (DEBUG_VM_CI in scripts/run-tests.sh).
# --kunit (`make check-debug`, the debug tier of make test): the same boot
# first runs kiwi's KUnit suites (tests/kunit/kiwi-kunit.sh, judged by
# tests/kunit/judge.sh as in make check-kunit), so that the slow debug
# kernel boots once for both. Ends with 'N passed, N failed' (scenarios plus
# KUnit cases).
# --build-only: build what the run needs (kiwi.ko, tests/vm/kmod and with
# --kunit kiwi_kunit.ko against the debug kernel, waiting for that kernel
# if it is being built) and exit; scripts/run-tests.sh runs it in the
# background so that check-debug finds its modules built.

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/lab/summary.bash
. "$REPO/scripts/lab/summary.bash"
BUILD=${KIWI_BUILD:-$REPO/build}
OUT=$BUILD/vm-debug

die() {
	echo "check-vm-debug: $*" >&2
	echo "0 passed, 1 failed"
	exit 1
}

build_only=0
if [ "${1:-}" = --build-only ]; then
	build_only=1
	shift
fi
kunit=0
if [ "${1:-}" = --kunit ]; then
	kunit=1
	shift
fi

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
if [ "$build_only" = 1 ] && [ "$kunit" = 0 ]; then
	exit 0
fi

vm=(--kernel "$KIWI_DEBUG_BZIMAGE" --module-dir "$KIWI_DEBUG_MODROOT"
	--kiwi-ko "$OUT/src/kiwi.ko" --timeout "${DEBUG_VM_TIMEOUT:-1500}"
	--boot-timeout "${DEBUG_VM_BOOT_TIMEOUT:-900}")
if [ "$kunit" = 0 ]; then
	KIWI_LAB_SELFCHECK=0 exec bash "$REPO/tests/vm/run.sh" "${vm[@]}" "$@"
fi

echo "check-vm-debug: building kiwi_kunit.ko"
"$REPO/scripts/debug-module.sh" "$BUILD/kunit/src" KIWI_KUNIT=1 > /dev/null ||
	die "kiwi_kunit.ko does not build against the debug kernel"
[ "$build_only" = 0 ] || exit 0
# Naming the KUnit scenario picks scenarios: name all of them if none was.
# Options as tests/vm/run.sh reads them: all but these take a value.
scenarios=0
for ((i = 1; i <= $#; i++)); do
	case ${!i} in
	--two | --shell | -v | --verbose) ;;
	-*) i=$((i + 1)) ;;
	*) scenarios=1 ;;
	esac
done
[ "$scenarios" = 1 ] || set -- "$@" "$REPO"/tests/vm/scenarios/*.sh
results=$OUT/vm
rm -rf "$results"
out=$(mktemp)
KIWI_LAB_SELFCHECK=0 bash "$REPO/tests/vm/run.sh" "${vm[@]}" --results "$results" \
	"$REPO/tests/kunit/kiwi-kunit.sh" "$@" | tee "$out" || true
read -r vm_p vm_f <<< "$(last_summary "$out")"
rm -f "$out"
echo "check-debug: KUnit"
# The lab's verdict on the KUnit scenario is in the scenario counts above.
kunit_out=$("$REPO/tests/kunit/judge.sh" "$results/single/kiwi-kunit.kmsg" 0) || true
echo "$kunit_out" | sed '$d'
read -r ku_p _ ku_f _ <<< "$(echo "$kunit_out" | tail -n 1)"
passed=$((${vm_p:-0} + ku_p))
failed=$((${vm_f:-1} + ku_f))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
