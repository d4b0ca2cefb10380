#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Queue memory (rings, SQ shadows, transmit buffers): each device counts
# it against its budget (kiwi.queue_mem_mb) and charges it to the memory
# cgroup of the process that creates the object.
#  1. With queue_mem_mb=16, CQs fill the budget exactly to the page and
#     the next object fails with ENOMEM; destroyed objects give their
#     share back (vt_qmem budget).
#  2. In a cgroup with memory.max=48M, creating CQs of 65536 entries and
#     then QPs of 4096+4096 WRs fails with ENOMEM inside the cgroup, whose
#     memory.current holds the rings; nothing is OOM-killed and the machine
#     keeps its memory (vt_qmem memcg).
#  3. Connecting 8 QP pairs in a cgroup charges their transmit buffers
#     (a 64 KiB frame buffer per QP, allocated by the connection manager's
#     worker) to it
#     (vt_qmem connect).

. "$(dirname "$0")/lib/common.bash"

IP=${KIWI_MY_IP:-10.77.0.1}
PARAM=/sys/module/kiwi/parameters/queue_mem_mb
CG=$VT_CG_ROOT/kiwi-qmem

vt_need_progs
vt_clean_links
vt_link_add kiwi0 eth0 || vt_die "cannot create kiwi0"
# 1. The budget, exact to the page.
budget_checks() {
	local default_mb total_mb

	default_mb=$(cat "$PARAM")
	total_mb=$(($(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo) / 1024))
	vt_eq "default budget: one eighth of RAM ($total_mb MiB)" "$default_mb" $((total_mb / 8))
	echo 16 > "$PARAM"
	vt_eq "queue_mem_mb after writing 16" "$(cat "$PARAM")" 16
	if "$VT_PROGS/vt_qmem" -d kiwi0 budget 16; then
		vt_pass "vt_qmem budget 16"
	else
		vt_fail "vt_qmem budget 16"
	fi
	echo 0 > "$PARAM"
	vt_eq "queue_mem_mb back to automatic" "$(cat "$PARAM")" "$default_mb"
	vt_check "queue_mem_mb refuses nonsense" bash -c "! echo x > $PARAM 2>/dev/null"
}
if [ -w "$PARAM" ]; then
	budget_checks
else
	vt_fail "kiwi has no writable queue_mem_mb parameter"
fi

# 2./3. Memory cgroups.
vt_cg_memory
rmdir "$CG" 2>/dev/null
mkdir "$CG" || vt_die "cannot create $CG"

# hold_at FILE PID STAGE_REGEX: wait until the program (PID) reached a
# stage matching STAGE_REGEX; print the stage line.
hold_at() {
	local i
	for ((i = 0; i < 1200; i++)); do
		if grep -qE "$3" "$1" 2>/dev/null; then
			cat "$1"
			return 0
		fi
		kill -0 "$2" 2>/dev/null || return 1
		vt_nap 0.1
	done
	return 1
}

# run_in_cg LOG ARGS...: start vt_qmem inside $CG in the background.
run_in_cg() {
	local log=$1
	shift
	"${VT_CG_EXEC[@]}" "$CG" "$VT_PROGS/vt_qmem" "$@" > "$log" 2>&1 &
}

avail_before=$(sed -n 's/^MemAvailable: *\([0-9]*\) kB/\1/p' /proc/meminfo)
echo 48M > "$CG/memory.max"
max_before=$(vt_cg_event "$CG" max)
hold=$VT_TMP/hold
run_in_cg "$VT_TMP/memcg.log" -d kiwi0 -H "$hold" memcg 256
pid=$!
if line=$(hold_at "$hold" $pid '^cq '); then
	n=${line#cq }
	cur=$(cat "$CG/memory.current")
	vt_log "holding $n CQs of 65536 entries: memory.current $((cur >> 20)) MiB"
	want=$((n * (2101248)))
	[ "$cur" -ge "$want" ] && vt_pass "the cgroup holds the $n CQ rings ($((want >> 20)) MiB)" ||
		vt_fail "memory.current $cur is below the $n CQ rings ($want)"
	[ "$n" -ge 1 ] && [ "$want" -le $((48 << 20)) ] &&
		vt_pass "CQ creation stopped inside memory.max ($n CQs)" ||
		vt_fail "$n CQs of 2 MiB in a 48 MiB cgroup"
	kill -USR1 $pid
else
	vt_fail "vt_qmem memcg did not reach the CQ stage"
fi
if line=$(hold_at "$hold" $pid '^qp '); then
	n=${line#qp }
	cur=$(cat "$CG/memory.current")
	vt_log "holding $n QPs of 4096+4096 WRs: memory.current $((cur >> 20)) MiB"
	# SQ ring 516 KiB + RQ ring 452 KiB + SQ shadow: at least 1.4 MiB each.
	want=$((n * 1468006))
	[ "$cur" -ge "$want" ] && vt_pass "the cgroup holds the $n QPs' queues" ||
		vt_fail "memory.current $cur is below $n QPs' rings ($want)"
	kill -USR1 $pid
else
	vt_fail "vt_qmem memcg did not reach the QP stage"
fi
wait $pid
rc=$?
cat "$VT_TMP/memcg.log"
vt_eq "vt_qmem memcg exit status" "$rc" 0
vt_eq "OOM kills in the cgroup" "$(vt_cg_event "$CG" oom_kill)" 0
[ "$(vt_cg_event "$CG" max)" -gt "$max_before" ] && vt_pass "the cgroup hit memory.max" ||
	vt_fail "memory.events max did not move: the limit was never reached"
avail_after=$(sed -n 's/^MemAvailable: *\([0-9]*\) kB/\1/p' /proc/meminfo)
vt_log "MemAvailable before $((avail_before >> 10)) MiB, after $((avail_after >> 10)) MiB"

echo 256M > "$CG/memory.max"
rm -f "$hold"
run_in_cg "$VT_TMP/connect.log" -a "$IP" -H "$hold" connect 8
pid=$!
if hold_at "$hold" $pid '^created' > /dev/null; then
	c1=$(cat "$CG/memory.current")
	kill -USR1 $pid
	if hold_at "$hold" $pid '^connected' > /dev/null; then
		c2=$(cat "$CG/memory.current")
		vt_log "memory.current: $((c1 >> 10)) KiB created, $((c2 >> 10)) KiB connected"
		# 16 QPs x 64 KiB of frame buffer. memory.current also moves
		# by pages the cgroup frees meanwhile (seen: 1016 KiB for
		# 1024, 4092 KiB for 4096 with 256 KiB buffers), so ask for 12
		# buffers; uncharged, it moves by ~0.
		[ $((c2 - c1)) -ge $((12 << 16)) ] &&
			vt_pass "connecting charged $(((c2 - c1) >> 10)) KiB (16 frame buffers are 1024 KiB)" ||
			vt_fail "connecting charged $(((c2 - c1) >> 10)) KiB, below 12 x 64 KiB"
		kill -USR1 $pid
	else
		vt_fail "vt_qmem connect did not connect"
	fi
else
	vt_fail "vt_qmem connect did not reach the created stage"
fi
wait $pid
rc=$?
cat "$VT_TMP/connect.log"
vt_eq "vt_qmem connect exit status" "$rc" 0

rmdir "$CG" || vt_fail "cannot remove $CG"
vt_cg_done
vt_link_del kiwi0
vt_finish
