#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check-asan` / `make check-tsan` / `make check-sanitize`: the
# GoogleTest suites of the wire library (tests/unit/proto) and of libkiwi
# (tests/unit/userlib) built with sanitizers and run under ctest.
#
#   address  ASan + UBSan (-fno-sanitize-recover=all, leaks checked, -O0), both
#            suites
#   thread   TSan, libkiwi's suite only: the wire library has no threads
#
# Each kind gets its own CMake tree, $KIWI_BUILD/san-KIND (default
# KIWI_BUILD=REPO/build). Any sanitizer report fails the test that caused
# it. The provider load test (needs root and the real libibverbs) and the
# checklist cross-check run in check-unit only. Ends with 'N passed, N
# failed' over both kinds (a failed build counts as one failure); exit
# status 0 only if every test passed.
#
# usage: scripts/check-sanitize.sh address|thread...
# env:   JOBS (default nproc), KIWI_BUILD

set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${KIWI_BUILD:-$REPO/build}
JOBS=${JOBS:-$(nproc)}

[ $# -gt 0 ] || set -- address thread
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1

rc=0 passed=0 failed=0
for kind in "$@"; do
	case "$kind" in
	address | thread) ;;
	*)
		echo "check-sanitize: unknown sanitizer '$kind' (address, thread)" >&2
		exit 2
		;;
	esac
	dir=$BUILD/san-$kind
	targets=() tests='^(proto|userlib)\.'
	# ASan and UBSan need no optimiser to find what they find: -O0 builds
	# the suites in a third of the CPU -O2 takes (134 s against 378 s on
	# the 2-core CI machine) and runs them 20 s longer. TSan's stress
	# tests need -O2 to race as they do in the product.
	build_type=Debug
	if [ "$kind" = thread ]; then
		targets=(--target userlib_core_test)
		tests='^userlib\.'
		build_type=RelWithDebInfo
	fi
	echo "== $kind: $dir"
	if ! cmake -S "$REPO" -B "$dir" -DCMAKE_BUILD_TYPE="$build_type" \
		-DKIWI_SANITIZE="$kind" > /dev/null ||
		! cmake --build "$dir" -j "$JOBS" "${targets[@]}" > "$dir.build.log" 2>&1; then
		tail -n 30 "$dir.build.log" 2> /dev/null
		echo "check-sanitize: the $kind build failed"
		rc=1
		failed=$((failed + 1))
		continue
	fi
	out=$(mktemp)
	ctest --test-dir "$dir" --output-on-failure -j "$JOBS" \
		-R "$tests" -E '^userlib\.ProviderLoad$' | tee "$out"
	[ "${PIPESTATUS[0]}" = 0 ] || rc=1
	line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$out")
	rm -f "$out"
	if [ -z "$line" ]; then
		failed=$((failed + 1))
		continue
	fi
	f=$(sed -E 's/.*tests passed, ([0-9]+) tests failed out of.*/\1/' <<< "$line")
	n=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<< "$line")
	passed=$((passed + n - f))
	failed=$((failed + f))
done
echo "$passed passed, $failed failed"
exit $rc
