#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/vm/soak/run.sh [--quick] [pair options] [COMBO...]
#
# Load and fault tests between two guests (make soak; `--quick` is the
# short version make test runs): the cases of tests/vm/soak/cases/ run
# through tests/vm/pair/run.sh, by default for kiwi-kiwi:
#   netem   integrity and perftest over a link with loss, duplication and
#           reordering (SOAK_LOSS percent loss, default 2)
#   cycles  SOAK_ROUNDS x SOAK_CONNS connections at once (10 x 1000) and
#           SOAK_ABORTS clients killed mid-handshake (100); resources and
#           slab back to baseline
#   faults  MTU change, netdev down and RDMA link delete mid-transfer
# Without --quick each case may take 30 minutes (the full pair mode);
# COMBOs and options as for tests/vm/pair/run.sh (e.g. --cases "netem").
# The SOAK_* variables reach the guests through the lab's environment.
# Ends with 'N passed, N failed'; exit status 0 only if all passed.

set -uo pipefail

SOAK=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=--full
if [ "${1:-}" = --quick ]; then
	mode=--quick
	shift
fi
args=("$@")
has_combo=0
for a in "${args[@]}"; do
	case "$a" in kiwi* | siw* | rxe*) has_combo=1 ;; esac
done
[ "$has_combo" = 1 ] || args+=(kiwi-kiwi)
exec bash "$SOAK/../pair/run.sh" "$mode" --cases-dir "$SOAK/cases" "${args[@]}"
