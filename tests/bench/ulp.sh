#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/bench/ulp.sh [COMBO...] [run.sh options]
#
# `make bench-ulp`: the kernel ULPs over kiwi, over siw and over their TCP
# transports, side by side in one two-guest boot (tests/bench/ulp/ulp.sh
# for each COMBO, default kiwi-kiwi siw-siw; kiwi-kiwi's boot also runs
# nvme-tcp and NFS over TCP). Prints one table (IOPS or MB/s, and the CPU
# time per I/O or per MiB in the initiator and the target guest) with the
# ratios kiwi/siw and kiwi/TCP, and writes it with an SVG bar chart to
# build/bench-ulp/. Numbers, not a test: they compare only within one run
# (TCG guests; the host's load matters). BENCH_ULP_SECS, BENCH_ULP_NFS_MB
# size the runs. A combo kiwi:ko=NAME-kiwi:ko=NAME measures the kiwi.ko of
# build/ko/NAME/ in the same boot, listed below the table against kiwi
# (before/after figures). Exit status 2 if nothing could be measured.

set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=lib.bash
. "$REPO/tests/bench/lib.bash"
bench_split_args "$@"
[ ${#combos[@]} -gt 0 ] || combos=(kiwi-kiwi siw-siw)

out=$REPO/build/bench-ulp
results=$REPO/build/vm-results/bench-ulp-$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$out"
log=$out/run.log
echo "== kernel ULP benchmark: ${combos[*]} (results in $results)"
bash "$REPO/tests/vm/pair/run.sh" --cases-dir "$REPO/tests/bench/ulp" --mem 2048 \
	--results "$results" "${args[@]}" "${combos[@]}" > "$log" 2>&1
grep -E '^(PASS|FAIL)' "$log" | sed 's/^/  /'

python3 "$REPO/tests/bench/ulp-table.py" "$results" "$out" "${combos[@]}"
