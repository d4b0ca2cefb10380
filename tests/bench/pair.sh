#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/bench/pair.sh [--sweep] [COMBO...] [run.sh options]
#
# The two-guest benchmark of `make bench`. In one two-guest boot, for each
# COMBO (as in tests/vm/pair/run.sh) the case tests/bench/pair/perf.sh runs
# BENCH_REPS rounds (default 3) of perftest (64 KiB write/send/read
# bandwidth, polling its CQs as perftest does by default; send and read
# again with -e, sleeping on a completion channel as iperf3 sleeps in its
# system calls; 8 B send/write latency), iperf3 (as many octets as a perftest
# step) and a TCP ping-pong (14 B, sockperf's smallest: its own header)
# between the same guests, every benchmark process of RDMA and TCP alike
# pinned to vCPU BENCH_PIN (default 0; why, and TCP under the same policy:
# tests/bench/pair/perf.sh).
# Prints one table: the median of the rounds and their
# spread ((max - min) / median), MiB/s for bandwidth (perftest's MB/sec is
# MiB/s), µs for latency (median and 99th percentile of half the round
# trip), guest CPU seconds per GiB moved (both guests, less what the same
# step moving BENCH_CPU_BASE_ITERS messages cost), the ratios kiwi/TCP
# and kiwi/siw with the same CRC setting; and writes every figure as CSV to
# build/bench/pair-TIME.csv. The default run (7 combos, 3 rounds) takes
# 20 to 60 minutes under TCG, by the host (a combo 140 to 540 s on
# 2026-11-30 and 2026-12-01); each combo's case may take 240 s per round
# (with BENCH_STEPS 30 s a step, 180 more for a .qN step, 30 more for
# ib_write_bw's and tcp_bw's CPU base; 780 more with --sweep) plus 120,
# unless --case-timeout says otherwise.
#
# Default combos, CRC like with like:
#   kiwi-kiwi (MPA CRC on: kiwi asks for it), siw:crc-siw:crc (CRC on),
#   kiwi:mpa_crc_off=1-kiwi:mpa_crc_off=1 (CRC off), siw-siw (CRC off: siw
#   does not ask), kiwi-siw:p2p (kiwi server, siw client with RFC 6581's
#   RTR: kiwi asks for CRC, siw accepts: CRC on; without peer-to-peer a
#   siw client never sends first and ib_write_lat's server, which does,
#   waits for good against a kiwi responder, Documentation/interop.md), and
#   kiwi:mpa_markers=1-kiwi:mpa_markers=1 (MPA markers and CRC on; siw has
#   no markers), and kiwi:llp=sctp-kiwi:llp=sctp (DDP over SCTP, no MPA;
#   its rounds also run iperf3 over SCTP, and its ratios are taken against
#   that too).
# --sweep (BENCH_SWEEP=1) adds rxe-rxe and, in every round, bandwidth from 8 B
# to 1 MiB, 64 KiB with -q 4, -q 16 and -b, and 4 KiB latency (about 25 min
# per combo with three rounds; BENCH_REPS=1 for a quick look); and plots bandwidth
# against message size to build/bench/pair-TIME.png (tests/bench/plot.py,
# gnuplot: make bench-sweep installs it).
# BENCH_STEPS picks the steps of a round, NAME%CPU pins one elsewhere
# (tests/bench/pair/perf.sh); BENCH_OBSERVE=1 records per step where the
# time went (per-vCPU time, interrupts, nstat, kiwi counters; ss -tmi
# samples with BENCH_OBSERVE_SS=SECONDS, which disturb the figures) in
# the results folder's lab/*/COMBO.perf.*.obs (tests/bench/pair/observe.bash).
# BENCH_CRC32C=generic runs every combo of the boot on the guests'
# crc32c-generic instead of crc32c-intel, whose SSE4.2 instruction TCG
# emulates slowly (tests/bench/pair/perf.sh); the table names the driver.
# LAB_WIRE=tap runs the boot on a wire with NIC offloads (checksum, TSO,
# large receives) instead of the lab's default Unix-socket wire, which has
# none (scripts/lab/README); figures from the two wires do not compare.
# A combo kiwi:ko=NAME-kiwi:ko=NAME loads build/ko/NAME/kiwi.ko (another
# build, e.g. main's, copied there) for before/after figures in one boot.
# BENCH_BW_ITERS (500; iperf3 moves as many 64 KiB), BENCH_LAT_ITERS (1000),
# BENCH_TCP_SECONDS (5, the ping-pong) set the lengths. Numbers, not a
# test: figures compare only within one run (TCG guests, a shared host). Exit status 2 if nothing could be measured.

set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=lib.bash
. "$REPO/tests/bench/lib.bash"
sweep=0
rest=()
for a in "$@"; do
	case "$a" in
	--sweep) sweep=1 ;;
	*) rest+=("$a") ;;
	esac
done
bench_split_args "${rest[@]}"
# shellcheck disable=SC2086 # the steps are words
bench_check_steps ${BENCH_STEPS:-}
if [ ${#combos[@]} -eq 0 ]; then
	combos=(kiwi-kiwi siw:crc-siw:crc kiwi:mpa_crc_off=1-kiwi:mpa_crc_off=1 siw-siw kiwi-siw:p2p
		kiwi:mpa_markers=1-kiwi:mpa_markers=1 kiwi:llp=sctp-kiwi:llp=sctp)
	[ "$sweep" = 0 ] || combos+=(rxe-rxe)
fi
export BENCH_SWEEP=$sweep
# A round of one combo took up to 140 s (siw-siw, TCG), a sweep round
# about 500: the case limit grows with the rounds unless one is given
# (run.sh's default of 420 s cut siw-siw's third round short). Chosen
# steps get 30 s each and a 16-QP step 180 s more (siw:crc's took 160 s;
# three rounds of 11 steps with two of them outran 840 s).
# The sweep's own steps add 780 s a round, chosen steps or not (siw:crc's
# one sweep round took 878 s in all on 2026-11-30; with BENCH_STEPS the
# sweep once got only the chosen steps' time, and siw and rxe ran out).
round=240
if [ -n "${BENCH_STEPS:-}" ]; then
	round=0
	for s in $BENCH_STEPS; do
		round=$((round + 30))
		[[ "$s" != *.q* ]] || round=$((round + 180))
		! bench_step_has_base "$s" || round=$((round + 30))
	done
fi
[ "$sweep" = 0 ] || round=$((round + 780))
if [[ " ${args[*]} " != *" --case-timeout "* ]]; then
	args+=(--case-timeout "$((${BENCH_REPS:-3} * round + 120))")
fi

stamp=$(date +%Y%m%d-%H%M%S)
results=$REPO/build/vm-results/bench-$stamp-$$
csv=$REPO/build/bench/pair-$stamp.csv
mkdir -p "$REPO/build/bench"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "== two-guest benchmark: ${combos[*]} (results in $results)"
if [ "${LAB_WIRE:-unix}" = tap ]; then
	echo "   wire: host bridge and taps, NIC offloads on (LAB_WIRE=tap)"
else
	echo "   wire: Unix socket, no NIC offloads (the lab's default)"
fi
start=$(date +%s)
bash "$REPO/tests/vm/pair/run.sh" --cases-dir "$REPO/tests/bench/pair" \
	--results "$results" "${args[@]}" "${combos[@]}" > "$log" 2>&1
grep -E '^(PASS|FAIL)' "$log" | sed 's/^/  /'
echo "(took $(($(date +%s) - start)) s)"
python3 "$REPO/tests/bench/pair-table.py" "$results/lab" "$csv" "${combos[@]}"
rc=$?
if [ "$sweep" = 1 ] && [ "$rc" = 0 ]; then
	python3 "$REPO/tests/bench/plot.py" "$csv" "${csv%.csv}.png" || rc=$?
fi
exit "$rc"
