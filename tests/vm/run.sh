#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check-vm`: build tests/vm/progs, then run every
# tests/vm/scenarios/*.sh in the QEMU lab. The single-guest scenarios share
# one boot; scenarios carrying the line
#   # kiwi-lab: two-guest
# share one boot of two guests (server and client). Options are passed to
# scripts/lab/run-scenario (e.g. --kernel, --module-dir, --kiwi-ko, -v);
# arguments that are not options pick scenarios instead of all of them.
# A run of all scenarios also runs scripts/lab/selfcheck (the lab must
# pass a good scenario and fail bad ones), in a boot beside the scenarios'
# boot; KIWI_LAB_SELFCHECK=0 skips it.
# Ends with 'N passed, N failed'; exit status 0 only if all passed.

set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LAB=$REPO/scripts/lab/run-scenario
# shellcheck source=scripts/lab/summary.bash
. "$REPO/scripts/lab/summary.bash"

opts=()
picked=()
while [ $# -gt 0 ]; do
	case "$1" in
	--two | --shell | -v | --verbose) opts+=("$1") ;;
	-h | --help)
		sed -n '3,14s/^# \{0,1\}//p' "$0"
		exit 0
		;;
	-*)
		opts+=("$1" "${2:?$1 needs a value}")
		shift
		;;
	*) picked+=("$1") ;;
	esac
	shift
done

full=0
if [ ${#picked[@]} -eq 0 ]; then
	full=1
	for f in "$REPO"/tests/vm/scenarios/*.sh; do
		[ -f "$f" ] && picked+=("$f")
	done
fi
if [ ${#picked[@]} -eq 0 ]; then
	echo "no scenarios in tests/vm/scenarios"
	echo "0 passed, 0 failed"
	exit 0
fi

# Scenario helper programs are built on the host (the guests are slow).
build_dir=$REPO/build
for ((i = 0; i < ${#opts[@]}; i++)); do
	[ "${opts[$i]}" != --build ] || build_dir=${opts[$((i + 1))]}
done
if [ -f "$REPO/tests/vm/progs/Makefile" ] &&
	! make -s -C "$REPO/tests/vm/progs" KIWI_BUILD="$build_dir"; then
	echo "check-vm: tests/vm/progs does not build"
	echo "0 passed, 1 failed"
	exit 1
fi
# The test module (tests/vm/kmod) too, against kiwi.ko's kernel headers.
if [ -f "$REPO/tests/vm/kmod/Makefile" ] &&
	! make -s -C "$REPO/tests/vm/kmod" KIWI_BUILD="$build_dir" >/dev/null; then
	echo "check-vm: tests/vm/kmod does not build"
	echo "0 passed, 1 failed"
	exit 1
fi

# 12-names loads Linux siw: build it here (cached in /var/cache/kiwi),
# not slowly in the guest.
"$REPO/scripts/siw.sh" --quiet > /dev/null ||
	echo "check-vm: scripts/siw.sh failed; a scenario may build siw in the guest"

single=()
two=()
for s in "${picked[@]}"; do
	f=$s
	for d in scenarios lib; do
		[ -f "$f" ] || f=$REPO/tests/vm/$d/${s%.sh}.sh
	done
	[ -f "$f" ] || f=$s
	if grep -qE '^# *kiwi-lab: *two-guest' "$f" 2> /dev/null; then
		two+=("$f")
	else
		single+=("$f")
	fi
done

passed=0 failed=0
# count OUT: add the 'N passed, N failed' of a lab boot's output OUT to
# the totals.
count() {
	local summary p f
	summary=$(last_summary "$1")
	if [ -z "$summary" ]; then
		echo "check-vm: the lab did not report (see above)"
		failed=$((failed + 1))
		return
	fi
	read -r p f <<< "$summary"
	passed=$((passed + p))
	failed=$((failed + f))
}

# run_lab ARGS...: one lab boot; adds its 'N passed, N failed' to the totals.
run_lab() {
	local out
	out=$(mktemp)
	"$LAB" "${opts[@]}" "$@" | tee "$out"
	count "$out"
	rm -f "$out"
}

# A full run also checks the lab's own verdicts (scripts/lab/selfcheck),
# in a boot of its own beside the scenarios' (its output follows theirs):
# its guest mostly waits (for time limits, a stuck scenario, a guest that
# dies), about a minute the scenarios' boot waited for before.
selfcheck_pid=
if [ "$full" = 1 ] && [ "${KIWI_LAB_SELFCHECK:-1}" = 1 ]; then
	selfcheck_out=$(mktemp)
	"$REPO/scripts/lab/selfcheck" "${opts[@]}" > "$selfcheck_out" 2>&1 &
	selfcheck_pid=$!
fi
[ ${#single[@]} -eq 0 ] || run_lab "${single[@]}"
[ ${#two[@]} -eq 0 ] || run_lab --two "${two[@]}"
if [ -n "$selfcheck_pid" ]; then
	wait "$selfcheck_pid"
	cat "$selfcheck_out"
	count "$selfcheck_out"
	rm -f "$selfcheck_out"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
