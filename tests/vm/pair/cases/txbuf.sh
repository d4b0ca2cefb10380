#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kiwi's transmit buffer (kernel/tx_buf.c, Documentation/datapath.md "One
# copy on transmit") between two guests, kiwi <-> kiwi over MPA/TCP:
#  1. Renewal: the client guest streams 64 KiB RDMA Writes to the server
#     guest (ib_write_bw -s 65536: 500 Writes, 100 in CI, 2000 in --full).
#     A Write's FPDUs need more than one 64 KiB buffer, so its second batch
#     is framed while TCP still holds the first, whose ACK is a round trip
#     away on the other guest: the client's tx_buf_renewed must grow by at
#     least a quarter of the Writes (measured: one per Write), and by at
#     most two per Write. Then twice as many 8 KiB Writes, one batch each:
#     each batch is framed after the octets TCP still holds in the buffer,
#     so the counter must grow by at least one and by at most one per two
#     Writes. Over loopback (62-ops) the receiver acknowledges inside TX's
#     send call and the counter barely moves.
#  2. Memory short: the client guest serves rping -S 65535 (200
#     iterations, in CI too) from a memory cgroup v2, which its QP's
#     transmit buffers are charged to; its RDMA Writes of 65535 octets
#     carry the data the server guest's rping client checks (-V). The
#     cgroup's pages are protected by memory.min inside a parent whose
#     memory.max is lowered (txbuf_cg_setup). Once it streams, rping is
#     stopped for a moment, TCP lets go of the buffers, the per-CPU charge
#     caches are emptied (a process in another cgroup on each CPU), and
#     memory.max is set 32 KiB above memory.current, never below it: no
#     new 64 KiB buffer can be charged. rping goes on; for 2 s TX waits for
#     TCP to return the buffer it has and frames into that one again:
#     tx_buf_short must grow, tx_octets too (the transfer lives), rping
#     must still run, the cgroup must have hit its limit (memory.events
#     max), and the kernel log must hold no warning, oops or OOM kill. With
#     memory.max back to max, renewal resumes and rping completes with
#     every iteration's data verified (exit 0 on both guests), no OOM kill
#     in the cgroup.
# The cgroup's process is the passive side: kiwi accepts connections in
# its connection manager's worker, so that socket's memory is charged to
# no cgroup. An active side's socket is made in the rdma_connect() caller
# and charged to its cgroup, and TCP's own charges at the limit
# (tcp_stream_alloc_skb(), GFP_KERNEL | __GFP_NOFAIL, in TX's copy path)
# then invoke the cgroup's OOM killer (seen in the first experiments: rping
# killed), as they would for any TCP socket of that cgroup.
# Runs for kiwi-kiwi over MPA/TCP only (DDP over SCTP copies each batch:
# its buffer is always free again).

. "$KIWI_SRC/tests/vm/pair/lib.bash"

# KIWI_VM_CI=1 (make check-pair-ci): fewer Writes. rping keeps its 200
# iterations there: with 100, about half of them ran before the squeeze
# and the rest during it, and rping could end with nothing left to
# renew a buffer for once memory.max was lifted.
writes=500
rounds=200
[ "${KIWI_VM_CI:-0}" = 1 ] && writes=100
[ "${PAIR_MODE:-}" = full ] && writes=2000

pair_up
S=/sys/class/infiniband/$PAIR_DEV/kiwi
llp=$(cat "$S/llp" 2>/dev/null)
if [ "$PAIR_SERVER-$PAIR_CLIENT" != kiwi-kiwi ] || [ "$llp" != tcp ]; then
	# DDP over SCTP copies each batch: its buffer is always free.
	vt_log "txbuf: needs kiwi-kiwi over MPA/TCP, not $PAIR_SERVER-$PAIR_CLIENT llp=$llp"
	pair_down
	vt_finish
fi

# txbuf_stat NAME [STATS]: one counter of this guest's device (of the
# vt_stats line STATS if given).
txbuf_stat() {
	vt_stat "${2:-$(vt_stats "$PAIR_DEV")}" "$1"
}

# txbuf_writes NAME SIZE COUNT MIN MAX: COUNT RDMA Writes of SIZE octets
# from the client guest; its tx_buf_renewed must grow by MIN to MAX.
txbuf_writes() {
	local r0 r1
	[ "$PAIR_SIDE" = client ] && r0=$(txbuf_stat tx_buf_renewed)
	pair_step "$1" server 300 \
		ib_write_bw -d "$PAIR_DEV" -R -F -s "$2" -n "$3" -p "{port}" -- \
		ib_write_bw -d "$PAIR_DEV" -R -F -s "$2" -n "$3" -p "{port}" "{peer}"
	[ "$PAIR_SIDE" = client ] && [ "$PAIR_LAST_OK" = 1 ] || return 0
	r1=$(txbuf_stat tx_buf_renewed)
	vt_log "$1: $3 RDMA Writes of $2 octets, client tx_buf_renewed $r0 -> $r1"
	vt_check "$1: tx_buf_renewed grew by $4 to $5 ($((r1 - r0)))" \
		test $((r1 - r0)) -ge "$4" -a $((r1 - r0)) -le "$5"
}

# 1. Renewal. A 64 KiB Write fills a buffer: about one new buffer per
# Write (two at most). 8 KiB Writes, one batch each, follow each other in
# a buffer TCP holds (tx_buf.c): about one new buffer per seven.
txbuf_writes txbuf.write 65536 "$writes" $((writes / 4)) $((writes * 2))
txbuf_writes txbuf.write8k 8192 $((writes * 2)) 1 $((writes / 2))

# 2. Memory short.
CG=$VT_CG_ROOT/kiwi-txbuf
CG_JOB=$CG/rping
CG_OTHER=$VT_CG_ROOT/kiwi-txbuf-other

# txbuf_cg_setup: the cgroup whose limit is lowered ($CG), the one rping
# serves from ($CG_JOB, inside it) and another one ($CG_OTHER). $CG_JOB's
# memory.min keeps the reclaim that $CG's limit starts off its pages (a
# cgroup's memory.min does not hold against its own limit's reclaim):
# reclaimed, rping's text pages (charged to it when it first ran them)
# had to be read in again at the limit, and that fault called the OOM
# killer (seen in a first run).
txbuf_cg_setup() {
	vt_cg_memory
	rmdir "$CG_JOB" "$CG" "$CG_OTHER" 2>/dev/null
	mkdir "$CG" "$CG_OTHER" || vt_die "cannot create $CG and $CG_OTHER"
	echo +memory > "$CG/cgroup.subtree_control" || vt_die "no memory controller in $CG"
	mkdir "$CG_JOB" || vt_die "cannot create $CG_JOB"
	echo max > "$CG_JOB/memory.min" || vt_die "cannot set $CG_JOB/memory.min"
}

# txbuf_drain_stocks: a charge of another cgroup on each CPU returns the
# pages the CPU's charge cache (memcg stock, up to 64 pages) holds for
# $CG: memory.current counts them, and a new buffer taken from them
# passes memory.max unseen.
txbuf_drain_stocks() {
	local c
	for ((c = 0; c < $(nproc); c++)); do
		"${VT_CG_EXEC[@]}" "$CG_OTHER" taskset -c "$c" true ||
			vt_log "txbuf: no charge on CPU $c"
	done
}

# txbuf_kmsg_bad FROM: kernel log lines after line FROM that report a
# problem.
txbuf_kmsg_bad() {
	dmesg | tail -n +$(($1 + 1)) |
		grep -E 'WARNING|BUG|Oops|Call Trace|out of memory|Killed process'
}

# txbuf_short_server: the client guest's side of the step txbuf.short, in
# the roles of pair_step (its listener): rping -s in $CG_JOB, $CG squeezed.
txbuf_short_server() {
	local pid rp rc i c cur max0 kmsg0 st0 st1 st2 st3 ev0 bad want
	pair_pick_cmd client "$@"
	PAIR_PORT=$((PAIR_PORT + 1))
	pair_fill_cmd
	PAIR_T0=$EPOCHSECONDS
	kmsg0=$(dmesg | wc -l)
	ev0=$(vt_cg_event "$CG" max)
	"${VT_CG_EXEC[@]}" "$CG_JOB" timeout -k 5 200 "${PAIR_RUN[@]}" \
		> "$VT_TMP/txbuf.short.out" 2>&1 &
	pid=$!
	pair_wait_listen "$PAIR_PORT" "$pid" 60 ||
		vt_log "txbuf.short: no rdma_cm listener on port $PAIR_PORT after 60 s"
	pair_barrier txbuf.short.listening 120
	st0=$(vt_stats "$PAIR_DEV")
	want=$(($(txbuf_stat tx_buf_renewed "$st0") + 20))
	for ((i = 0; i < 600; i++)); do
		[ "$(txbuf_stat tx_buf_renewed)" -ge "$want" ] && break
		kill -0 "$pid" 2>/dev/null || break
		vt_nap 0.1
	done
	rp=$(pgrep -P "$pid" -x rping)
	if [ -z "$rp" ] || [ "$i" = 600 ]; then
		vt_fail "txbuf.short: rping did not stream (20 renewals) within 60 s"
	else
		kill -STOP "$rp"
		sleep 0.5
		txbuf_drain_stocks
		cur=$(cat "$CG/memory.current")
		echo $((cur + 32768)) > "$CG/memory.max"
		max0=$(cat "$CG/memory.max")
		vt_log "txbuf.short: rping stopped, memory.current $cur, memory.max $max0" \
			"(now memory.current $(cat "$CG/memory.current"))"
		st1=$(vt_stats "$PAIR_DEV")
		kill -CONT "$rp"
		sleep 2
		st2=$(vt_stats "$PAIR_DEV")
		vt_check "txbuf.short: rping is alive after 2 s at memory.max" kill -0 "$rp"
		for c in tx_buf_short tx_octets tx_buf_renewed; do
			vt_log "txbuf.short: $c $(txbuf_stat $c "$st0") streaming," \
				"$(txbuf_stat $c "$st1") at the limit, $(txbuf_stat $c "$st2") 2 s later"
		done
		vt_stat_moved "txbuf.short: at memory.max" "$st1" "$st2" tx_buf_short tx_octets
		vt_check "txbuf.short: the cgroup hit memory.max (memory.events max $ev0 -> $(vt_cg_event "$CG" max))" \
			test "$(vt_cg_event "$CG" max)" -gt "$ev0"
		bad=$(txbuf_kmsg_bad "$kmsg0")
		vt_check "txbuf.short: nothing in the kernel log at memory.max${bad:+: $bad}" test -z "$bad"
		echo max > "$CG/memory.max"
	fi
	pair_barrier txbuf.short.done 260
	pair_reap "$pid" 20
	rc=$?
	st3=$(vt_stats "$PAIR_DEV")
	pair_judge txbuf.short client "$rc" "$VT_TMP/txbuf.short.out" "${PAIR_RUN[*]}"
	[ -n "${st2:-}" ] || return 0
	vt_log "txbuf.short: after memory.max went back to max: tx_buf_renewed" \
		"$(txbuf_stat tx_buf_renewed "$st2") -> $(txbuf_stat tx_buf_renewed "$st3")," \
		"tx_buf_short $(txbuf_stat tx_buf_short "$st3")"
	vt_stat_moved "txbuf.short: memory.max back to max" "$st2" "$st3" tx_buf_renewed
	vt_eq "txbuf.short: OOM kills in the cgroup" "$(vt_cg_event "$CG" oom_kill)" 0
}

# The client guest serves from the cgroup; the server guest's rping
# client checks every iteration's data (-V).
set -- rping -s -a "{me}" -p "{port}" -S 65535 -C "$rounds" -- \
	rping -c -a "{peer}" -p "{port}" -S 65535 -C "$rounds" -V
if [ "$PAIR_SIDE" = client ]; then
	txbuf_cg_setup
	txbuf_short_server "$@"
	rmdir "$CG_JOB" "$CG" "$CG_OTHER" || vt_fail "cannot remove $CG and $CG_OTHER"
	vt_cg_done
else
	pair_step txbuf.short client 200 "$@"
fi
pair_down
vt_finish
