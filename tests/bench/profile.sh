#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/bench/profile.sh [COMBO...] [run.sh options]
#
# Where the time goes: ib_write_bw (or each ib_OP_bw of PROFILE_OPS, e.g.
# "write send", and "tcp" for iperf3 moving as many octets) between the two
# lab guests (default combo kiwi-kiwi) under `perf record -a -g` in both
# guests (tests/bench/profile/perf-record.sh;
# PROFILE_OPS, PROFILE_SIZE and PROFILE_ITERS reach it). Prints each guest's
# perf report summary; the files stay in the results folder it names.

set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=lib.bash
. "$REPO/tests/bench/lib.bash"
bench_split_args "$@"
[ ${#combos[@]} -gt 0 ] || combos=(kiwi-kiwi)

results=$REPO/build/vm-results/profile-$(date +%Y%m%d-%H%M%S)-$$
bash "$REPO/tests/vm/pair/run.sh" --cases-dir "$REPO/tests/bench/profile" \
	--results "$results" "${args[@]}" "${combos[@]}"
rc=$?
for f in "$results"/lab/*/*.perf.txt; do
	[ -f "$f" ] && cat "$f"
done
exit "$rc"
