#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/bench/profile.sh [COMBO...] [run.sh options]
#
# Where the time goes: ib_write_bw and iperf3 moving as many octets (or each
# of PROFILE_OPS: ib_OP_bw for write, send and read, "tcp" for iperf3)
# between the two lab guests (default combo kiwi-kiwi) under `perf record
# -a -g` in both guests (tests/bench/profile/perf-record.sh; PROFILE_OPS,
# PROFILE_SIZE and PROFILE_ITERS reach it). Prints each guest's perf report
# summary; the files stay in the results folder it names. `make
# bench-profile` runs it with the defaults.

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
