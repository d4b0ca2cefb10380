#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/bench/pair.sh [COMBO...] [run.sh options]
#
# The two-guest benchmark of `make bench`: in one two-guest boot, for
# kiwi-kiwi, siw-siw and rxe-rxe (or the COMBOs given, as in
# tests/vm/pair/run.sh), ib_write_bw, ib_read_bw, ib_send_bw at 64 KiB and
# ib_send_lat at 8 B over rdma_cm, plus iperf3 over plain TCP between the same
# guests after each, printed as one table. Numbers, not a test: figures are
# comparable only within one run (TCG guests; the host's load matters).
# BENCH_BW_ITERS (default 500) and BENCH_LAT_ITERS (default 1000) set the
# iteration counts. Exit status 2 if nothing could be measured.

set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=lib.bash
. "$REPO/tests/bench/lib.bash"
bench_split_args "$@"
[ ${#combos[@]} -gt 0 ] || combos=(kiwi-kiwi siw-siw rxe-rxe)

results=$REPO/build/vm-results/bench-$(date +%Y%m%d-%H%M%S)-$$
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "== two-guest benchmark: ${combos[*]} (results in $results)"
bash "$REPO/tests/vm/pair/run.sh" --cases-dir "$REPO/tests/bench/pair" \
	--results "$results" "${args[@]}" "${combos[@]}" > "$log" 2>&1
grep -E '^(PASS|FAIL)' "$log" | sed 's/^/  /'

python3 - "$results" "${combos[@]}" <<'PY'
import glob, os, sys

res, combos = sys.argv[1], sys.argv[2:]
cols = [("ib_write_bw", "write_bw MB/s"), ("ib_read_bw", "read_bw MB/s"),
        ("ib_send_bw", "send_bw MB/s"), ("ib_send_lat", "send_lat us"),
        ("tcp", "TCP MB/s")]
found = False
print("%-12s" % "64 KiB / 8 B" + "".join("%15s" % c[1] for c in cols))
for combo in combos:
    label = combo.replace(":", "_").replace("=", "_")
    vals = {}
    for f in glob.glob(os.path.join(res, "lab", "*", label + ".perf.bench")):
        for line in open(f):
            k, v = line.split()
            vals[k] = float(v)
    found |= bool(vals)
    print("%-12s" % combo + "".join(
        "%15s" % ("%.1f" % vals[k] if k in vals else "-") for k, _ in cols))
print("TCP: iperf3, one stream, right after that combo's perftest runs.")
print("-: no figure (the step failed, or perftest could not calibrate its clock")
print("   in five tries under TCG; the combo's log in the results says which).")
sys.exit(0 if found else 2)
PY
