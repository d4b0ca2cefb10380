#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/kunit/judge.sh KMSG LAB_STATUS
#
# The verdict on one guest run of tests/kunit/kiwi-kunit.sh, shared by
# tests/kunit/run.sh (make check-kunit) and tests/vm/debug.sh --kunit (the
# debug tier of make test): tests/kunit/ktap.py judges the KTAP in KMSG (the
# scenario's kernel log) against every struct kunit_suite in tests/kunit/*.c;
# a non-zero LAB_STATUS (kernel report, crash or timeout) counts as one more
# failure. Last line: 'N passed, N failed' over KUnit cases; exit status 0
# only if nothing failed.

set -uo pipefail

KUNIT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
kmsg=${1:?usage: judge.sh KMSG LAB_STATUS}
lab_rc=${2:?usage: judge.sh KMSG LAB_STATUS}

if [ ! -r "$kmsg" ]; then
	echo "check-kunit: no kernel log from the guest ($kmsg)"
	echo "0 passed, 1 failed"
	exit 1
fi
ktap_rc=0
summary=$("$KUNIT/ktap.py" "$kmsg" "$KUNIT"/*.c) || ktap_rc=$?
echo "$summary"

counts=$(echo "$summary" | sed -n 's/^cases: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p')
read -r passed failed <<< "${counts:-0 1}"
if [ "$lab_rc" -ne 0 ]; then
	echo "check-kunit: the lab run failed (kernel report, crash or timeout): $(dirname "$kmsg")"
	failed=$((failed + 1))
fi
if [ "$ktap_rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
	failed=1
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
