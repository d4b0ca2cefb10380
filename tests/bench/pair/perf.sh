#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark case of tests/bench/pair.sh (run through tests/vm/pair/run.sh
# --cases-dir): between the two guests, with this combo's provider,
# ib_write_bw, ib_read_bw and ib_send_bw at 64 KiB and ib_send_lat at 8 B
# (perftest -R), then iperf3 over plain TCP in the same boot. The client
# guest writes "NAME VALUE" lines to KIWI_RESULTS/PAIR_ID.bench (MB/s for
# bandwidth, microseconds for latency); a step that fails records nothing.

. "$KIWI_SRC/tests/vm/pair/lib.bash"

bw_n=${BENCH_BW_ITERS:-500}
lat_n=${BENCH_LAT_ITERS:-1000}
res=$KIWI_RESULTS/$PAIR_ID.bench

# record NAME FIELD OUTFILE PATTERN: field FIELD of the last line of
# OUTFILE that starts with PATTERN (perftest's result row).
record() {
	local line v
	[ "$PAIR_SIDE" = client ] && [ "${PAIR_LAST_OK:-0}" = 1 ] || return 0
	line=$(grep -E "^ *$4 " "$3" | tail -n 1)
	vt_log "$1: ${line:-no result line}"
	v=$(awk -v f="$2" '{ print $f }' <<< "$line")
	[ -n "$v" ] && echo "$1 $v" >> "$res"
}

[ "$PAIR_SIDE" = client ] && : > "$res"
pair_up
# perftest times with the TSC, and TCG's vCPUs do not keep theirs in step:
# a run that moves between vCPUs measures nonsense (0.00 MB/s was seen).
# Each perftest process stays on vCPU 0.
pin=(taskset -c 0)
for t in ib_write_bw ib_read_bw ib_send_bw; do
	pair_step "$t" server 600 \
		"${pin[@]}" "$t" -d "$PAIR_DEV" -R -F -s 65536 -n "$bw_n" -p "{port}" -- \
		"${pin[@]}" "$t" -d "$PAIR_DEV" -R -F -s 65536 -n "$bw_n" -p "{port}" "{peer}"
	record "$t" 4 "$VT_TMP/$t.out" 65536
done
pair_step ib_send_lat server 600 \
	"${pin[@]}" ib_send_lat -d "$PAIR_DEV" -R -F -s 8 -n "$lat_n" -p "{port}" -- \
	"${pin[@]}" ib_send_lat -d "$PAIR_DEV" -R -F -s 8 -n "$lat_n" -p "{port}" "{peer}"
record ib_send_lat 5 "$VT_TMP/ib_send_lat.out" 8

# Plain TCP between the same guests: iperf3, 10 s, one stream.
PAIR_PORT=$((PAIR_PORT + 1))
if [ "$PAIR_SIDE" = server ]; then
	timeout 60 iperf3 -s -1 -p "$PAIR_PORT" > "$VT_TMP/iperf3.out" 2>&1 &
	pid=$!
	sleep 1
	pair_barrier iperf3.listening 60
	pair_barrier iperf3.done 120
	wait "$pid"
else
	pair_barrier iperf3.listening 60
	if timeout 60 iperf3 -c "$KIWI_PEER_IP" -p "$PAIR_PORT" -t 10 -J \
		> "$VT_TMP/iperf3.json" 2>&1; then
		python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("tcp %.1f" % (j["end"]["sum_received"]["bits_per_second"] / 8e6))' \
			"$VT_TMP/iperf3.json" >> "$res" && vt_pass "iperf3" ||
			vt_fail "iperf3: no result"
	else
		vt_fail "iperf3: $(tail -n 3 "$VT_TMP/iperf3.json")"
	fi
	pair_barrier iperf3.done 120
fi
pair_down
vt_finish
