#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark case of tests/bench/pair.sh (run through tests/vm/pair/run.sh
# --cases-dir). Between the two guests, with this combo's provider, BENCH_REPS
# rounds (default 3) of: ib_write_bw, ib_send_bw, ib_read_bw at 64 KiB;
# ib_send_bw.e and ib_read_bw.e (the same with perftest -e: perftest has
# no -e for ib_write_bw); ib_send_lat and ib_write_lat at 8 B (perftest -R);
# then, in the same boot,
# plain TCP: iperf3 (one stream) moving as many octets as one 64 KiB
# perftest step (BENCH_BW_ITERS x 64 KiB), and a TCP ping-pong of 14 B
# (sockperf pp: 14 octets is its smallest message, its own header; an 8 B
# TCP ping-pong would need another tool, and 14 or 8 octets are one small
# segment either way).
#
# Pinning, the same for RDMA and TCP: every perftest, iperf3 and sockperf
# process, client and server, runs on vCPU BENCH_PIN (default 0) with
# taskset. It was taken for perftest, which times with the TSC, when the
# guests judged their TSCs out of step; they now keep time with the TSC,
# in step between vCPUs (scripts/lab/README), and the pinning stays so
# that figures compare with the earlier tables'.
# TCP gets the same policy so that the ratios compare like with like (the
# kernel's own work, softirqs, TX workers, runs where the kernel puts it in
# both cases). A step NAME%CPU pins that step to vCPU CPU instead, or
# leaves it unpinned with NAME%any (e.g. "tcp_bw%any" for iperf3 as a user
# would run it; perftest's figures are then unreliable).
#
# BENCH_STEPS (default all: "ib_write_bw ib_send_bw ib_read_bw ib_send_bw.e
# ib_read_bw.e ib_send_lat ib_write_lat tcp_bw tcp_lat", and sctp_bw, iperf3 over one SCTP
# association, when kiwi runs DDP over SCTP) picks the steps of each round, in the order
# given, e.g. "ib_write_bw ib_send_bw" for a short before/after of two
# kiwi.ko builds. A step NAME@SIZE there (e.g. "ib_write_bw@64
# ib_send_lat@8") runs perftest NAME with SIZE-octet messages in each round;
# NAME@SIZE%CPU pins it as above.
# A step NAME.e (e.g. "ib_send_bw.e", "ib_read_bw.q4.e") runs perftest -e:
# both ends sleep on a completion channel, as iperf3 sleeps in its system
# calls, where by default they poll their CQs (a polling vCPU takes host
# CPU the guests' kernels would otherwise use; under TCG on a host of few
# cores that is not free; perftest refuses -e for ib_write_bw).
# A step NAME.qN (e.g. "ib_write_bw.q16 tcp_bw.q16") runs on N connections:
# perftest -q N, or for tcp_bw iperf3 -P N moving N times the octets.
# BENCH_SWEEP=1 adds to each round bandwidth at 8 B, 64 B, 512 B, 4 KiB,
# 16 KiB, 256 KiB and 1 MiB,
# 64 KiB with 4 and 16 QPs (-q) and bidirectional (-b), iperf3 with 4 and
# 16 streams (tcp_bw.q4, tcp_bw.q16: the TCP figures to hold -q against),
# and latency at 4 KiB.
# BENCH_OBSERVE=1 records per step where the time went in each guest
# (observe.bash: per-vCPU time, interrupts, nstat, kiwi's counters; ss
# samples only with BENCH_OBSERVE_SS=SECONDS, which disturb the figures).
#
# Each guest writes "NAME ROUND VALUE" lines to KIWI_RESULTS/PAIR_ID.bench:
# the client the figures (MiB/s: perftest's "MB/sec" is 2^20 octets per
# second, and iperf3's bytes are converted the same way; latency in µs, the
# median and the 99th percentile, one way, i.e. half a round trip, as both
# perftest and sockperf report it), both guests "cpu.NAME" (CPU seconds that
# guest spent, all CPUs, from /proc/stat, during that step) and "bytes.NAME"
# (octets the step moved, both directions together: perftest's -q QPs each
# move -n messages, and with -b both sides do); after the steps
# ib_write_bw and tcp_bw, whose CPU the table reports, both guests also
# "cpu.NAME.base" and "bytes.NAME.base": the same step moving only
# BENCH_CPU_BASE_ITERS messages (default 10; 0: none), what every step
# costs whatever it moves (starting the programs, opening the device,
# connecting, registering, tearing down), which the table takes off
# before it divides by the octets; and a kiwi client
# "doorbells.NAME" (the
# send doorbells its device counted during the step, tx_doorbells: posts
# that found the kernel's TX running rang none). "info crc32c DRIVER" names
# the guest's crc32c implementation, "info crc32c_cycles_DRIVER N" its
# cost and the other driver's (crc32c_cycles). A step that fails records nothing.
#
# A step may take 120 s plus one second per MiB it moves (at least 1 MiB/s;
# BENCH_STEP_LIMIT=SECONDS sets it instead): one that hangs is then killed
# and logged with what perftest printed, and the rounds go on. Fifteen
# seconds before the limit each guest logs its TCP sockets (ss -tmio), its
# QPs (rdma res show qp -dd) and the kiwi counters that moved, so that a
# hang shows where it stopped.
#
# BENCH_CRC32C=generic leaves the guests' crypto API crc32c-generic only:
# crc32c-intel is unloaded and kept from loading again before the provider
# loads (kiwi's libcrc32c and siw's shash bind to the best crc32c there is
# when they start). Under TCG the SSE4.2 crc32 instruction crc32c-intel
# uses is emulated, several times slower than crc32c-generic's table
# lookups (crc32c_cycles); this shows what CRC costs without that penalty,
# for kiwi and siw alike. The product is the same: it runs so on any
# kernel without crc32c-intel. It stays so for the rest of the boot.

. "$KIWI_SRC/tests/vm/pair/lib.bash"
# shellcheck source=../lib.bash
. "$KIWI_SRC/tests/bench/lib.bash"
# shellcheck source=observe.bash
. "$KIWI_SRC/tests/bench/pair/observe.bash"

reps=${BENCH_REPS:-3}
bw_n=${BENCH_BW_ITERS:-500}
lat_n=${BENCH_LAT_ITERS:-1000}
base_n=${BENCH_CPU_BASE_ITERS:-10}
tcp_secs=${BENCH_TCP_SECONDS:-5}
pin_default=${BENCH_PIN:-0}
steps=" ${BENCH_STEPS:-ib_write_bw ib_send_bw ib_read_bw ib_send_bw.e ib_read_bw.e ib_send_lat
	ib_write_lat tcp_bw tcp_lat} "
res=$KIWI_RESULTS/$PAIR_ID.bench
round=0

# cpu_jiffies: busy time of all CPUs so far, in USER_HZ ticks.
cpu_jiffies() {
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}

# cpu_note NAME T0 BYTES [T1]: this guest's CPU seconds from jiffies T0 to
# T1 (default now).
cpu_note() {
	local t1=${4:-$(cpu_jiffies)}
	echo "cpu.$1 $round $(awk -v a="$2" -v b="$t1" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.3f", (b - a) / hz }')" >> "$res"
	echo "bytes.$1 $round $3" >> "$res"
}

# record NAME FIELD OUTFILE PATTERN: field FIELD of the last line of
# OUTFILE that starts with PATTERN (perftest's result row). Returns 2 if
# perftest could not calibrate its clock (see measure) or printed no
# finite number there (under TCG its latency rows sometimes read "inf"),
# else 0.
record() {
	local line v
	[ "$PAIR_SIDE" = client ] && [ "${PAIR_LAST_OK:-0}" = 1 ] || return 0
	line=$(grep -E "^ *$4 " "$3" | tail -n 1)
	vt_log "$1: ${line:-no result line}"
	v=$(awk -v f="$2" '{ print $f }' <<< "$line")
	if grep -q '^Correlation coefficient r^2: .* < 0.9' "$3" &&
		awk -v v="$v" 'BEGIN { exit !(v + 0 == 0) }'; then
		vt_log "$1: perftest's clock calibration failed, result 0"
		return 2
	fi
	if [ -n "$v" ] && ! [[ "$v" =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
		vt_log "$1: perftest printed '$v', no figure"
		return 2
	fi
	[ -n "$v" ] && echo "$1 $round $v" >> "$res"
	return 0
}

# pin_cmd CPU: the command prefix that pins a benchmark process to vCPU
# CPU ("any": none).
pin_cmd() {
	[ "$1" = any ] || echo "taskset -c $1"
}

# measure NAME SIZE PERFTEST [OPTION...]: one perftest step, recorded:
# bandwidth (field 4, "BW average", MiB/s; field 3, "BW peak", is the
# fastest single iteration, not a throughput; field 5 is the message rate
# in Mpps) for *_bw, median (field 5) and
# 99th percentile (field 8) for *_lat. perftest converts TSC cycles to time with a
# frequency it samples against gettimeofday() when it reports; under TCG
# that sampling sometimes fails ("Correlation coefficient r^2: ... < 0.9")
# and perftest then prints 0.00. Such a step runs again, at most five times
# in all; the client tells the server through the shared folder.
# MEASURE_PIN (default BENCH_PIN) is the vCPU both perftest processes run on.
# With MEASURE_BASE=1 the step moves base_n messages and records only its
# CPU and octets (NAME is then the base's, NAME.base), in one try: a figure
# perftest could not time does not matter there.
# perftest's Send test over iWARP paces its client with credits: the server
# RDMA-Writes its count of receives into the client's memory (every third
# of its receive queue), which raises no completion there. A client with
# -e that reaches the edge of its window (the receive queue's depth, -r,
# 512 by default, ahead of the last credit) when none of its signalled
# Sends is outstanding sleeps on its CQ for good, and so does the server
# (2026-12-02, 3000 Sends on LAB_WIRE=tap: the three stalls logged had
# each posted exactly a credit the server wrote plus 511). So a Send step
# of more than 512 messages gets a receive queue as deep as its messages
# (send_rx_depth): its window never closes, up to 4096 messages a QP.
measure() {
	local name=$1 size=$2 try again t0 t1 n=$bw_n out db0 a qps=1 dirs=1 prev=
	local tries=5
	shift 2
	db0=$(doorbells)
	case "$1" in *_lat) n=$lat_n ;; esac
	[ "${MEASURE_BASE:-0}" = 0 ] || { n=$base_n tries=1 db0=; }
	for a in "$@"; do
		[ "$prev" = -q ] && qps=$a
		[ "$a" = -b ] && dirs=2
		prev=$a
	done
	[ "$1" != ib_send_bw ] || [ "$n" -le 512 ] || set -- "$@" -r "$(send_rx_depth "$n" "$qps")"
	# shellcheck disable=SC2207 # pin_cmd prints words, or nothing
	local cmd=($(pin_cmd "${MEASURE_PIN:-$pin_default}") "$@" -d "$PAIR_DEV" -R -F
		-s "$size" -n "$n" -p "{port}")
	local limit=${BENCH_STEP_LIMIT:-$((120 + size * n * qps * dirs / 1048576))} watch
	for ((try = 1; try <= tries; try++)); do
		again=$KIWI_SHARED/pair.$PAIR_ID.$name.$round.$try.again
		observe_begin "$name"
		t0=$(cpu_jiffies)
		stuck_watch $((limit > 30 ? limit - 15 : limit / 2)) "$name" &
		watch=$!
		pair_step "$name" server "$limit" "${cmd[@]}" -- "${cmd[@]}" "{peer}"
		kill "$watch" 2> /dev/null
		wait "$watch" 2> /dev/null
		t1=$(cpu_jiffies)
		observe_end "$name"
		out=$VT_TMP/$name.out
		if [ "$PAIR_SIDE" = client ] && [ "${MEASURE_BASE:-0}" = 0 ]; then
			case "$1" in
			*_lat)
				record "$name.p50" 5 "$out" "$size" &&
					record "$name.p99" 8 "$out" "$size"
				;;
			*) record "$name" 4 "$out" "$size" ;;
			esac || [ "$try" = "$tries" ] || touch "$again"
		fi
		pair_barrier "$name.$round.$try.judged" 60
		[ -e "$again" ] || break
	done
	case "$1" in *_bw) cpu_note "$name" "$t0" $((size * n * qps * dirs)) "$t1" ;; esac
	if [ "$PAIR_SIDE" = client ] && [ -n "$db0" ]; then
		echo "doorbells.$name $round $(($(doorbells) - db0))" >> "$res"
	fi
}

# send_rx_depth N QPS: perftest's -r for N Sends on each of QPS QPs: N, at
# most 4096 (kiwi's deepest queue), and at most 65536 receive completions
# in all (kiwi's largest CQ: perftest's receive CQ holds -r times -q).
send_rx_depth() {
	local r=$(($1 < 4096 ? $1 : 4096))
	echo $((r * $2 > 65536 ? 65536 / $2 : r))
}

# stuck_report NAME: step NAME is about to reach its limit; log this guest's
# TCP sockets to the peer, its QPs and CQs, the kiwi counters that are not
# zero, and where the benchmark's processes wait (pair_stacks).
stuck_report() {
	vt_log "$1: still running near its limit; sockets, QPs, CQs, counters:"
	{
		ss -tmio dst "$KIWI_PEER_IP"
		rdma res show qp -dd
		rdma res show cq -dd
		[ "$PAIR_PROV" != kiwi ] || vt_stats "$PAIR_DEV" | tr ' ' '\n' | grep -v '=0$'
	} 2>&1 | sed 's/^/    | /'
	# shellcheck disable=SC2046 # the PIDs are words
	pair_stacks $(pgrep -f '^(ib_[a-z_]+|iperf3|sockperf) ')
}

# stuck_watch SECONDS NAME: stuck_report NAME after SECONDS, unless killed
# first (its sleep goes with it).
stuck_watch() {
	local s
	sleep "$1" &
	s=$!
	trap 'kill "$s" 2> /dev/null; exit 0' TERM
	wait "$s" && stuck_report "$2"
}

# doorbells: the send doorbells this guest's kiwi device counted so far;
# nothing on other providers.
doorbells() {
	[ "$PAIR_PROV" = kiwi ] || return 0
	vt_stat "$(vt_stats "$PAIR_DEV")" tx_doorbells
}

# tcp_bw NAME CPU [--sctp | -P N]: iperf3, one stream (one SCTP association
# with --sctp, a client option: the server follows the client; N streams
# with -P N), as many octets as a 64 KiB perftest step on as many QPs, both
# ends on vCPU CPU (pin_cmd); received MiB/s. MEASURE_BASE=1 as for measure:
# base_n times 64 KiB, CPU and octets only.
tcp_bw() {
	local t0 t1 rc=0 n=$bw_n octets pin proto=("${@:3}")
	[ "${MEASURE_BASE:-0}" = 0 ] || n=$base_n
	octets=$((65536 * n))
	[ "${3:-}" = -P ] && octets=$((octets * $4))
	pin=$(pin_cmd "$2")
	observe_begin "$1"
	t0=$(cpu_jiffies)
	# shellcheck disable=SC2086 # pin: words or nothing
	pair_tcp_step "$1" $pin iperf3 -s -1 -p "{port}" -- \
		$pin iperf3 "${proto[@]}" -c "{peer}" -p "{port}" -n "$octets" -J || rc=$?
	t1=$(cpu_jiffies)
	observe_end "$1"
	[ "$PAIR_SIDE" = client ] || { cpu_note "$1" "$t0" 0 "$t1"; return 0; }
	local v
	if [ "$rc" = 0 ] && v=$(python3 -c '
import json, sys
e = json.load(open(sys.argv[1]))["end"]["sum_received"]
print("%.1f %d" % (e["bytes"] / e["seconds"] / 2**20, e["bytes"]))' \
		"$VT_TMP/$1.out"); then
		[ "${MEASURE_BASE:-0}" = 1 ] || echo "$1 $round ${v% *}" >> "$res"
		cpu_note "$1" "$t0" "${v#* }" "$t1"
		vt_pass "iperf3 ${proto[*]} ($1): ${v% *} MiB/s"
	else
		vt_fail "iperf3 ${proto[*]} ($1): $(tail -n 3 "$VT_TMP/$1.out")"
	fi
}

# tcp_lat NAME CPU: sockperf ping-pong over TCP, both ends on vCPU CPU:
# median and 99th percentile of half the round trip, µs. 14 B messages:
# sockperf's smallest (its own header).
tcp_lat() {
	local rc=0 p50 p99 pin
	pin=$(pin_cmd "$2")
	# shellcheck disable=SC2086 # pin: words or nothing
	pair_tcp_step "$1" $pin sockperf sr --tcp -i 0.0.0.0 -p "{port}" -- \
		$pin sockperf pp --tcp -i "{peer}" -p "{port}" -m 14 -t "$tcp_secs" || rc=$?
	[ "$PAIR_SIDE" = client ] || return 0
	p50=$(awk '/percentile 50.000 =/ { print $NF }' "$VT_TMP/$1.out")
	p99=$(awk '/percentile 99.000 =/ { print $NF }' "$VT_TMP/$1.out")
	if [ "$rc" = 0 ] && [ -n "$p50" ] && [ -n "$p99" ]; then
		echo "$1.p50 $round $p50" >> "$res"
		echo "$1.p99 $round $p99" >> "$res"
		vt_pass "sockperf pp ($1): median $p50 µs, p99 $p99 µs"
	else
		vt_fail "sockperf pp ($1): $(tail -n 3 "$VT_TMP/$1.out")"
	fi
}

# crc32c_driver: the crc32c implementation the crypto API picks (highest
# priority); under TCG crc32c-intel's SSE4.2 instruction is emulated.
crc32c_driver() {
	awk '/^name/ { n = $3 } /^driver/ { d = $3 } /^priority/ {
		if (n == "crc32c" && $3 > best) { best = $3; pick = d } }
		END { print pick ? pick : "none" }' /proc/crypto
}

# crc32c_cycles DRIVER: TSC cycles per octet of crc32c DRIVER over 4 KiB
# blocks, from tcrypt's cycle-counting speed test (sec=0: 8 runs after 4
# warm-ups, a fraction of a second; tcrypt refuses to stay loaded by
# design); "-" if it did not run. Under TCG the count is the host's TSC:
# it compares drivers within a guest, it is no absolute speed.
crc32c_cycles() {
	local before
	before=$(dmesg | wc -l)
	modprobe tcrypt mode=300 alg="$1" sec=0 2>/dev/null
	dmesg | tail -n "+$((before + 1))" | awk '
		/\( *4096 byte blocks, *4096 bytes per update/ {
			for (i = 1; i < NF; i++)
				if ($(i + 1) == "cycles/operation,") {
					printf "%.2f\n", $i / 4096; found = 1; exit
				}
		}
		END { if (!found) print "-" }'
}

# crc32c_generic_only: crc32c-intel unloaded and blocked (BENCH_CRC32C).
crc32c_generic_only() {
	pair_unload_providers
	echo "install crc32c_intel /bin/false" > /etc/modprobe.d/kiwi-bench-crc32c.conf
	[ -d /sys/module/libcrc32c ] && modprobe -r libcrc32c
	[ -d /sys/module/crc32c_intel ] && modprobe -r crc32c_intel
	[ -d /sys/module/crc32c_intel ] &&
		vt_die "BENCH_CRC32C=generic: crc32c_intel stays loaded (held by: $(ls /sys/module/crc32c_intel/holders))"
	modprobe crc32c_generic || vt_die "modprobe crc32c_generic failed"
}

# sweep: the BENCH_SWEEP steps of one round.
sweep() {
	local s t
	for s in 8 64 512 4096 16384 262144 1048576; do
		for t in ib_write_bw ib_send_bw ib_read_bw; do
			measure "$t@$s" "$s" "$t"
		done
	done
	measure "ib_write_bw.q4" 65536 ib_write_bw -q 4
	measure "ib_write_bw.q16" 65536 ib_write_bw -q 16
	tcp_bw "tcp_bw.q4" "$pin_default" -P 4
	tcp_bw "tcp_bw.q16" "$pin_default" -P 16
	measure "ib_write_bw.bidir" 65536 ib_write_bw -b
	measure "ib_send_lat@4096" 4096 ib_send_lat
	measure "ib_write_lat@4096" 4096 ib_write_lat
}

# run_step STEP: one step of BENCH_STEPS (its grammar: bench_parse_step
# in tests/bench/lib.bash): perftest with -q N and -e as the step asks, or
# iperf3 (-P N for tcp_bw.qN) or sockperf; then its CPU base, if it has one.
run_step() {
	local step_name step_size step_qps step_events step_pin
	local pin size qps=() events=()

	if ! bench_parse_step "$1"; then
		vt_fail "BENCH_STEPS: unknown step '$1'"
		return
	fi
	pin=${step_pin:-$pin_default}
	[ -z "$step_qps" ] || qps=(-q "$step_qps")
	[ -z "$step_events" ] || events=(-e)
	case "$step_name" in
	ib_*_bw) size=${step_size:-65536} ;;
	ib_*_lat) size=${step_size:-8} ;;
	esac
	case "$step_name" in
	ib_*) MEASURE_PIN=$pin measure "$1" "$size" "$step_name" "${qps[@]}" "${events[@]}" ;;
	tcp_bw) tcp_bw "$1" "$pin" "${qps[@]/#-q/-P}" ;;
	sctp_bw) tcp_bw "$1" "$pin" --sctp ;;
	tcp_lat) tcp_lat "$1" "$pin" ;;
	esac
	[ "$base_n" -gt 0 ] && bench_step_has_base "$1" || return 0
	case "$step_name" in
	ib_write_bw) MEASURE_PIN=$pin MEASURE_BASE=1 measure "$1.base" 65536 ib_write_bw ;;
	tcp_bw) MEASURE_BASE=1 tcp_bw "$1.base" "$pin" ;;
	esac
}

[ "$PAIR_SIDE" = client ] && : > "$res"
[ "$PAIR_SIDE" = server ] && : > "$res"
case "${BENCH_CRC32C:-}" in
'') ;;
generic) crc32c_generic_only ;;
*) vt_die "BENCH_CRC32C: '$BENCH_CRC32C' is not 'generic'" ;;
esac
pair_up
# DDP over SCTP is measured against SCTP too: iperf3 over one association.
if [ -z "${BENCH_STEPS:-}" ] &&
	[ "$(cat "/sys/class/infiniband/$PAIR_DEV/kiwi/llp" 2>/dev/null)" = sctp ]; then
	steps+="sctp_bw "
fi
echo "info crc32c $(crc32c_driver)" >> "$res"
vt_log "crc32c driver: $(crc32c_driver)"
for d in crc32c-intel crc32c-generic; do
	c=$(crc32c_cycles "$d")
	echo "info crc32c_cycles_$d $c" >> "$res"
	vt_log "crc32c $d: $c TSC cycles per octet (tcrypt, 4 KiB blocks)"
done
for ((round = 1; round <= reps; round++)); do
	for t in $steps; do
		run_step "$t"
	done
	[ "${BENCH_SWEEP:-0}" = 1 ] && sweep
done
pair_down
vt_finish
