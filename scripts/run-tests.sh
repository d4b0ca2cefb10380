#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make test` (what CI runs): build, then the test tiers check-unit,
# check-sanitize (the unit suites under ASan+UBSan and libkiwi's under TSan),
# check-fuzz (FUZZ_SECONDS 15 per target unless set), check-vm (with
# KIWI_VM_CI=1 unless set: the scenarios that say so run fewer
# repetitions; scripts/lab/run-scenario passes it to the guest),
# check-pair-ci (check-pair's CI subset), check-pkg (the Debian packages on
# a fresh Debian 12 root; DKMS builds natively), check-debug (KUnit and the
# scenarios in DEBUG_VM_CI, in one boot of the debug kernel) in that order,
# each one even when an earlier one failed.
# Some tiers run beside another (BESIDE below) when both are asked for: in
# the background at nice 10, one after another, their output following the
# other tier's. check-sanitize, check-fuzz and check-pkg (DKMS on the host,
# one short guest) run beside check-vm, whose one guest keeps about one of
# the two cores busy and outlasts the three (with check-pkg beside
# check-debug instead, CI waited 200 s for it after check-debug). When a debug kernel tier is asked for and the
# debug kernel is not cached (nor being built already, as .ci/run starts it
# during deps), its build starts in the background at nice 19 right after
# the build tier: it takes the CPU the guests of check-vm and check-pair-ci
# leave idle, and the debug tiers come last, waiting for it
# (scripts/debug-kernel.sh locks its cache entry). Its output goes to
# build/test-logs/debug-kernel.log.
# check-debug's modules (kiwi.ko, its KUnit build, tests/vm/kmod) are built
# against it in the background too, once it is there (debug-build.log).
# Arguments pick tiers (e.g. `scripts/run-tests.sh build check-unit`). Each
# tier's output goes to the terminal and to build/test-logs/TIER.log. A
# tier's count is taken from its last 'N passed, N failed' line (or ctest's
# summary); a tier that prints neither counts as one test. Ends with one
# line per tier and 'N passed, N failed'; exit status 0 only if everything
# passed.

set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lab/summary.bash
. "$REPO/scripts/lab/summary.bash"
ALL_TIERS=(build check-unit check-sanitize check-fuzz check-vm check-pair-ci check-pkg check-debug)
# Under the debug kernel CI runs the scenarios that drive connections, the
# QP state machine and device removal (about 4 minutes); the rest, the
# hostile peer included, run in `make check-vm-debug` (about 25 minutes).
DEBUG_VM_CI="45-qp-states 50-device-removal 60-cm-single"
JOBS=${JOBS:-2}
LOGS=$REPO/build/test-logs
# BESIDE[TIER]: the tiers that run beside TIER when both are asked for
# (see the top): TIER's guest leaves part of the two cores idle.
declare -A BESIDE=([check-vm]="check-sanitize check-fuzz check-pkg")

tiers=("$@")
[ ${#tiers[@]} -gt 0 ] || tiers=("${ALL_TIERS[@]}")
for t in "${tiers[@]}"; do
	case " ${ALL_TIERS[*]} " in
	*" $t "*) ;;
	*)
		echo "run-tests: unknown tier '$t' (tiers: ${ALL_TIERS[*]})" >&2
		exit 2
		;;
	esac
done
mkdir -p "$LOGS"

# asked T: true if tier T was asked for.
asked() {
	[[ " ${tiers[*]} " == *" $1 "* ]]
}

tier_cmd() {
	case "$1" in
	build) make -C "$REPO" -j"$JOBS" JOBS="$JOBS" ;;
	check-debug)
		make -C "$REPO" --no-print-directory JOBS="$JOBS" \
			DEBUG_VM="$DEBUG_VM_CI" "$1"
		;;
	check-fuzz)
		FUZZ_SECONDS=${FUZZ_SECONDS:-15} \
			make -C "$REPO" --no-print-directory JOBS="$JOBS" "$1"
		;;
	check-vm)
		KIWI_VM_CI=${KIWI_VM_CI:-1} \
			make -C "$REPO" --no-print-directory JOBS="$JOBS" "$1"
		;;
	*) make -C "$REPO" --no-print-directory JOBS="$JOBS" "$1" ;;
	esac
}

# start_debug_kernel: build a cold debug kernel in the background (see top).
start_debug_kernel() {
	asked check-debug || return 0
	echo "===== debug kernel"
	"$REPO/scripts/debug-kernel.sh" --background "$LOGS/debug-kernel.log" 2>&1
}

# counts LOG RC: print "PASSED FAILED" for a tier from its log and status.
counts() {
	local log=$1 rc=$2 line p=1 f=0 sum
	sum=$(last_summary "$log")
	if [ -n "$sum" ]; then
		read -r p f <<< "$sum"
	else
		line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$log" | tail -n 1)
		if [ -n "$line" ]; then
			f=$(sed -E 's/.*tests passed, ([0-9]+) tests failed out of.*/\1/' <<< "$line")
			p=$(($(sed -E 's/.*out of ([0-9]+).*/\1/' <<< "$line") - f))
		elif [ "$rc" != 0 ]; then
			p=0
			f=1
		fi
	fi
	# A failing tier counts as failed even if its counts say otherwise.
	[ "$rc" = 0 ] || [ "$f" -gt 0 ] || f=1
	echo "$p $f"
}

total_p=0 total_f=0
summary=()

# record TIER RC SECS [NOTE]: count a finished tier and add its summary line.
record() {
	local t=$1 rc=$2 secs=$3 note=${4:-} p f verdict=PASS
	read -r p f <<< "$(counts "$LOGS/$t.log" "$rc")"
	total_p=$((total_p + p))
	total_f=$((total_f + f))
	[ "$rc" = 0 ] || verdict=FAIL
	summary+=("$(printf '%-12s %s  %4d passed, %3d failed  %5ds%s' "$t" "$verdict" "$p" "$f" "$secs" "$note")")
	echo "===== $t: $verdict after ${secs}s$note"
}

# The lanes: while a tier of BESIDE runs, the tiers beside it that were
# asked for run one after another in the background at nice 10, their
# output only in their logs (printed when that tier is done); each writes
# "RC SECS" to LOGS/TIER.status. in_lane: every tier a lane runs.
in_lane=" "
for key in "${!BESIDE[@]}"; do
	asked "$key" || continue
	for t in ${BESIDE[$key]}; do
		! asked "$t" || in_lane+="$t "
	done
done
lane=()
lane_pid=
# start_lane TIER: start the lane beside TIER, if it has one.
start_lane() {
	local t
	lane=()
	lane_pid=
	for t in ${BESIDE[$1]:-}; do
		! asked "$t" || lane+=("$t")
	done
	[ ${#lane[@]} -gt 0 ] || return 0
	echo "===== beside $1: ${lane[*]} (output in $LOGS)"
	(
		renice -n 10 -p "$BASHPID" > /dev/null
		for t in "${lane[@]}"; do
			start=$(date +%s)
			tier_cmd "$t" < /dev/null > "$LOGS/$t.log" 2>&1
			echo "$? $(($(date +%s) - start))" > "$LOGS/$t.status"
		done
	) &
	lane_pid=$!
}
# finish_lane TIER: wait for the lane beside TIER and count its tiers.
finish_lane() {
	local t rc secs
	[ -n "$lane_pid" ] || return 0
	wait "$lane_pid"
	for t in "${lane[@]}"; do
		echo "===== $t (ran beside $1)"
		cat "$LOGS/$t.log"
		read -r rc secs < "$LOGS/$t.status" || rc=1 secs=0
		record "$t" "$rc" "$secs" " (beside $1)"
	done
}

# prebuild_debug: once the build tier is done, build check-debug's modules
# against the debug kernel in the background at nice 19 (tests/vm/debug.sh
# --build-only waits for the kernel): they are ready, not compiled on the
# critical path, when check-debug starts, which waits for this job first.
debug_build_pid=
prebuild_debug() {
	asked check-debug || return 0
	nice -n 19 bash "$REPO/tests/vm/debug.sh" --build-only --kunit \
		< /dev/null > "$LOGS/debug-build.log" 2>&1 &
	debug_build_pid=$!
}

start_all=$(date +%s)
for t in "${tiers[@]}"; do
	[[ "$in_lane" != *" $t "* ]] || continue
	start_lane "$t"
	# Its modules' build failing is check-debug's own failure to report.
	[ "$t" != check-debug ] || [ -z "$debug_build_pid" ] ||
		wait "$debug_build_pid"
	echo "===== $t"
	start=$(date +%s)
	tier_cmd "$t" < /dev/null 2>&1 | tee "$LOGS/$t.log"
	rc=${PIPESTATUS[0]}
	record "$t" "$rc" "$(($(date +%s) - start))"
	if [ "$t" = build ]; then
		start_debug_kernel
		prebuild_debug
	fi
	finish_lane "$t"
done
wait

echo
echo "===== summary (logs in $LOGS, total $(($(date +%s) - start_all))s)"
printf '%s\n' "${summary[@]}"
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
