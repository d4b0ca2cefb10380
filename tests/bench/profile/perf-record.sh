#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The case of tests/bench/profile.sh (run through tests/vm/pair/run.sh
# --cases-dir): for each operation of PROFILE_OPS (default "write tcp"; any of
# write, send, read, each optionally with :qN for N QPs, perftest's -q, and
# :e for perftest -e, sleeping on a completion channel instead of polling
# (send and read only), as in "read write:q4 read:e"), ib_OP_bw at
# PROFILE_SIZE (default 64 KiB) between the two guests for PROFILE_ITERS
# messages (default 3000), and for "tcp" iperf3 moving as many octets, under
# `perf record -a -g` on both guests (cpu-clock: TCG has no PMU). Each
# guest writes its `perf report` summary (by symbol, by command and symbol,
# call graph) to KIWI_RESULTS/PAIR_ID.SIDE.OP.perf.txt, the throughput
# perftest or iperf3 printed to the client's log.

. "$KIWI_SRC/tests/vm/pair/lib.bash"

size=${PROFILE_SIZE:-65536}
iters=${PROFILE_ITERS:-3000}

pair_up
echo 0 > /proc/sys/kernel/kptr_restrict
echo -1 > /proc/sys/kernel/perf_event_paranoid

# perf_begin OP: perf record -a -g on this guest, recording once it says
# so, into VT_TMP/perf.OP.data. perf starts with its events disabled and is
# enabled through its control FIFO, whose acknowledgement says it is
# recording: under TCG perf takes tens of seconds to start, so a fixed
# window misses the transfer.
perf_begin() {
	local reply ctl=$VT_TMP/perf.$1.ctl ack=$VT_TMP/perf.$1.ack
	mkfifo "$ctl" "$ack"
	perf record -F 250 -a -g -e cpu-clock -o "$VT_TMP/perf.$1.data" -D -1 \
		--control "fifo:$ctl,$ack" -- sleep 900 \
		> "$KIWI_RESULTS/$PAIR_ID.$PAIR_SIDE.$1.perf-record.log" 2>&1 &
	PERF_PID=$!
	exec 8<> "$ctl" 9<> "$ack"
	echo enable >&8
	read -r -t 180 -u 9 reply || vt_fail "perf record did not start"
	vt_log "perf record: enabled ($reply)"
}

# perf_end OP TITLE RESULT: stop recording and write the report of OP, headed
# by TITLE and the line RESULT the benchmark printed, to the results.
perf_end() {
	local reply data=$VT_TMP/perf.$1.data
	echo disable >&8
	read -r -t 60 -u 9 reply
	kill -INT "$PERF_PID"
	wait "$PERF_PID"
	exec 8>&- 9>&-
	{
		echo "== $PAIR_ID $PAIR_SIDE: perf record -a -g -e cpu-clock around $2"
		echo "$3"
		echo "== by symbol (self)"
		perf report -i "$data" --stdio --no-children --sort sym -g none 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -n 60
		echo "== by command, symbol (self)"
		perf report -i "$data" --stdio --no-children --sort comm,sym -g none 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -n 40
		echo "== call graph (caller), top entries"
		perf report -i "$data" --stdio --children --sort sym -g caller,0.5,callee \
			--percent-limit 3 2>/dev/null | grep -v '^$' | head -n 300
		echo "== callers of the top symbols (self)"
		perf report -i "$data" --stdio --no-children --sort sym -g caller,0.5,callee \
			--percent-limit 2 2>/dev/null | grep -v '^$' | grep -v '^#' | head -n 600
	} > "$KIWI_RESULTS/$PAIR_ID.$PAIR_SIDE.$1.perf.txt" 2>&1
	rm -f "$data"
}

# profile_op OP QPS EVENTS: ib_OP_bw on QPS QPs, with -e if EVENTS is 1,
# under perf record, its report to the results (named OP, OP.qQPS for more
# than one QP, and .e added for -e).
profile_op() {
	local tool=ib_$1_bw qps=$2 op=$1 cmd result
	[ "$qps" = 1 ] || op=$1.q$qps
	cmd=(taskset -c 0 "$tool" -d "$PAIR_DEV" -R -F -q "$qps" -s "$size" -n "$iters" -p "{port}")
	[ "$3" = 0 ] || { op=$op.e cmd+=(-e); }
	perf_begin "$op"
	pair_step "$tool" server 900 "${cmd[@]}" -- "${cmd[@]}" "{peer}"
	result=$(grep -E "^ *$size " "$VT_TMP/$tool.out")
	vt_log "$tool: $(echo "$result" | tail -n 1)"
	perf_end "$op" "$tool -q $qps -s $size -n $iters" "$result"
}

# profile_tcp: iperf3 moving as many octets as a perftest op, one stream,
# both ends on vCPU 0 as perftest's, under perf record (named tcp): the
# TCP underneath, profiled the same way.
profile_tcp() {
	local octets=$((size * iters)) result
	perf_begin tcp
	pair_tcp_step iperf3 taskset -c 0 iperf3 -s -1 -p "{port}" -- \
		taskset -c 0 iperf3 -c "{peer}" -p "{port}" -n "$octets" ||
		vt_fail "iperf3: $(tail -n 3 "$VT_TMP/iperf3.out")"
	result=$(grep -E 'receiver$' "$VT_TMP/iperf3.out" 2>/dev/null)
	[ "$PAIR_SIDE" = client ] && vt_log "iperf3: $result"
	perf_end tcp "iperf3 -n $octets" "$result"
}

# profile_spec SPEC: one PROFILE_OPS entry, OP[:qN][:e].
profile_spec() {
	local op=${1%%:*} rest part qps=1 events=0
	rest=${1#"$op"}
	while [ -n "$rest" ]; do
		rest=${rest#:}
		part=${rest%%:*}
		rest=${rest#"$part"}
		case "$part" in
		q[1-9]*) qps=${part#q} ;;
		e) events=1 ;;
		*) vt_fail "PROFILE_OPS: unknown option '$part' in '$1'"; return ;;
		esac
	done
	case "$qps" in *[!0-9]*) vt_fail "PROFILE_OPS: bad QP count in '$1'"; return ;; esac
	case "$op" in
	tcp) [ "$1" = tcp ] || { vt_fail "PROFILE_OPS: tcp takes no options"; return; }
		profile_tcp
		return ;;
	write) [ "$events" = 0 ] || { vt_fail "PROFILE_OPS: perftest has no -e for write"; return; } ;;
	send | read) ;;
	*) vt_fail "PROFILE_OPS: unknown operation '$1'"; return ;;
	esac
	profile_op "$op" "$qps" "$events"
}

for spec in ${PROFILE_OPS:-write tcp}; do
	profile_spec "$spec"
done
pair_down
vt_finish
