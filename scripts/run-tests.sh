#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make test` (what CI runs): build, then the test tiers check-unit,
# check-fuzz, check-kunit, check-vm, check-vm-debug (the scenarios in
# DEBUG_VM_CI only), check-pkg, check-pair in that order, each one even
# when an earlier one failed. Arguments pick tiers (e.g.
# `scripts/run-tests.sh build check-unit`). Each tier's output goes to the
# terminal and to build/test-logs/TIER.log. A tier's count is taken from its last
# 'N passed, N failed' line (or ctest's summary); a tier that prints neither
# counts as one test. Ends with one line per tier and 'N passed, N failed';
# exit status 0 only if everything passed.

set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ALL_TIERS=(build check-unit check-fuzz check-kunit check-vm check-vm-debug check-pkg check-pair)
# Under the debug kernel CI runs the scenarios that drive connections, the
# QP state machine and device removal (about 4 minutes); the rest, the
# hostile peer included, run in `make check-vm-debug` (about 25 minutes).
DEBUG_VM_CI="45-qp-states 50-device-removal 60-cm-single"
JOBS=${JOBS:-2}
LOGS=$REPO/build/test-logs

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

tier_cmd() {
	case "$1" in
	build) make -C "$REPO" -j"$JOBS" JOBS="$JOBS" ;;
	check-vm-debug)
		make -C "$REPO" --no-print-directory JOBS="$JOBS" \
			DEBUG_VM="$DEBUG_VM_CI" "$1"
		;;
	*) make -C "$REPO" --no-print-directory JOBS="$JOBS" "$1" ;;
	esac
}

# counts LOG RC: print "PASSED FAILED" for a tier from its log and status.
counts() {
	local log=$1 rc=$2 line p=1 f=0
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
	if [ -n "$line" ]; then
		read -r p _ f _ <<< "$line"
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
start_all=$(date +%s)
for t in "${tiers[@]}"; do
	echo "===== $t"
	start=$(date +%s)
	tier_cmd "$t" < /dev/null 2>&1 | tee "$LOGS/$t.log"
	rc=${PIPESTATUS[0]}
	secs=$(($(date +%s) - start))
	read -r p f <<< "$(counts "$LOGS/$t.log" "$rc")"
	total_p=$((total_p + p))
	total_f=$((total_f + f))
	verdict=PASS
	[ "$rc" = 0 ] || verdict=FAIL
	summary+=("$(printf '%-12s %s  %4d passed, %3d failed  %5ds' "$t" "$verdict" "$p" "$f" "$secs")")
	echo "===== $t: $verdict after ${secs}s"
done

echo
echo "===== summary (logs in $LOGS, total $(($(date +%s) - start_all))s)"
printf '%s\n' "${summary[@]}"
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
