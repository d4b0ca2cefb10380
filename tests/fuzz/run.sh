#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check-fuzz`: build and run every libFuzzer target tests/fuzz/*_fuzz.c.
#
# Each target is linked with clang -fsanitize=fuzzer,address,undefined
# -fno-sanitize-recover=all against the user-space build of the wire code
# (kernel/proto/*.c + kernel/proto/user/*.c, compiled once with the same
# sanitizers). It then runs for FUZZ_SECONDS on a temporary copy of its seed
# corpus tests/fuzz/corpus/<target>/ (the checkout is never written), with
# tests/fuzz/<target>.dict as dictionary when present. Any crash, leak,
# sanitizer report or timeout fails the target; the reproducer is kept in
# $KIWI_BUILD/fuzz/artifacts/. Per target one line with its executions; the
# last line is 'N passed, N failed'.
#
# usage: tests/fuzz/run.sh [TARGET...]     (default: every target)
# env:   FUZZ_SECONDS  run time per target (default 30; e.g. 300 for a long run)
#        FUZZ_RUNS     stop a target after this many executions instead (its
#                      time limit is then FUZZ_SECONDS, default a day); make
#                      check-fuzz-long runs 10^7 per target
#        KIWI_BUILD    build dir (default REPO/build); objects in KIWI_BUILD/fuzz
#        CC            clang (default clang)
#        FUZZ_NICE     nice level of the fuzzing processes (default 10)

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${KIWI_BUILD:-$REPO/build}/fuzz
RUNS=${FUZZ_RUNS:-}
if [ -n "$RUNS" ]; then
	SECONDS_EACH=${FUZZ_SECONDS:-86400}
else
	SECONDS_EACH=${FUZZ_SECONDS:-30}
fi
CC=${CC:-clang}
NICE=${FUZZ_NICE:-10}
SAN=("-fsanitize=address,undefined" -fno-sanitize-recover=all)
CFLAGS=(-g -O1 -fno-omit-frame-pointer -std=gnu11 -Wall -Wextra -Werror
	-I"$REPO/kernel" -I"$REPO/kernel/proto" -I"$REPO/include/uapi")

die() {
	echo "check-fuzz: $*" >&2
	echo "0 passed, 1 failed"
	exit 1
}

[[ "$SECONDS_EACH" =~ ^[1-9][0-9]*$ ]] || die "FUZZ_SECONDS='$SECONDS_EACH' is not a positive number"
[[ -z "$RUNS" || "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "FUZZ_RUNS='$RUNS' is not a positive number"
command -v "$CC" > /dev/null || die "$CC missing (apt-get install clang libclang-rt-14-dev)"

# The wire library, instrumented for coverage but without libFuzzer's main.
build_proto() {
	local src obj objs=()

	mkdir -p "$OUT/obj"
	for src in "$REPO"/kernel/proto/*.c "$REPO"/kernel/proto/user/*.c; do
		obj=$OUT/obj/$(basename "$(dirname "$src")")_$(basename "$src" .c).o
		if [ ! -e "$obj" ] || [ "$src" -nt "$obj" ] ||
		   [ -n "$(find "$REPO/kernel/proto" "$REPO/include/uapi" -name '*.h' -newer "$obj")" ]; then
			"$CC" "${CFLAGS[@]}" "${SAN[@]}" -fsanitize=fuzzer-no-link \
				-c "$src" -o "$obj" || return 1
		fi
		objs+=("$obj")
	done
	rm -f "$OUT/libkiwi_proto_fuzz.a"
	ar rcs "$OUT/libkiwi_proto_fuzz.a" "${objs[@]}"
}

build_target() {
	local name=$1

	"$CC" "${CFLAGS[@]}" "${SAN[@]}" -fsanitize=fuzzer \
		"$REPO/tests/fuzz/$name.c" "$OUT/libkiwi_proto_fuzz.a" -o "$OUT/bin/$name"
}

# run_target NAME: fuzz for SECONDS_EACH; prints the verdict line.
run_target() {
	local name=$1 work log rc=0 execs rate dict=() runs=() start secs

	work=$(mktemp -d "$OUT/corpus-$name.XXXXXX")
	log=$OUT/logs/$name.log
	[ -d "$REPO/tests/fuzz/corpus/$name" ] && cp -r "$REPO/tests/fuzz/corpus/$name/." "$work/"
	[ -r "$REPO/tests/fuzz/$name.dict" ] && dict=(-dict="$REPO/tests/fuzz/$name.dict")
	[ -z "$RUNS" ] || runs=(-runs="$RUNS")
	start=$(date +%s)
	mkdir -p "$OUT/artifacts"
	nice -n "$NICE" "$OUT/bin/$name" "${dict[@]}" "${runs[@]}" -max_total_time="$SECONDS_EACH" \
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$OUT/artifacts/$name-" "$work" > "$log" 2>&1 || rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	secs=$(($(date +%s) - start))
	rm -rf "$work"
	if [ "$rc" -eq 0 ] && ! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$log"; then
		printf 'PASS %s: %s execs in %s s (%s/s), seeds %s\n' "$name" "${execs:-?}" \
			"$secs" "${rate:-?}" "$(find "$REPO/tests/fuzz/corpus/$name" -type f 2> /dev/null | wc -l)"
		return 0
	fi
	printf 'FAIL %s: exit %s after %s execs; log %s\n' "$name" "$rc" "${execs:-?}" "$log"
	grep -E -m 8 'ERROR:|SUMMARY:|runtime error:|Test unit written|^    #[0-4] ' "$log" | sed 's/^/  /' || true
	return 1
}

main() {
	local names=() name passed=0 failed=0

	if [ $# -gt 0 ]; then
		names=("$@")
	else
		for name in "$REPO"/tests/fuzz/*_fuzz.c; do
			[ -e "$name" ] && names+=("$(basename "$name" .c)")
		done
	fi
	[ ${#names[@]} -gt 0 ] || die "no tests/fuzz/*_fuzz.c targets"
	mkdir -p "$OUT/bin" "$OUT/logs"
	build_proto || die "the wire code does not build with $CC and the sanitizers"
	for name in "${names[@]}"; do
		[ -r "$REPO/tests/fuzz/$name.c" ] || {
			echo "FAIL $name: no tests/fuzz/$name.c"
			failed=$((failed + 1))
			continue
		}
		if ! build_target "$name"; then
			echo "FAIL $name: does not build"
			failed=$((failed + 1))
			continue
		fi
		if run_target "$name"; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
		fi
	done
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}

main "$@"
