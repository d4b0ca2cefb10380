#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest part of `make demo` (two guests, scripts/demo.sh): each
# guest creates kiwi0 on eth0, then rping and ib_write_bw (over rdma_cm)
# run from the client to the server. Every step is time-limited, so a
# failing side cannot hold the other one for long.

set -euo pipefail

run() {
	echo
	echo "# $*"
	"$@"
}

barrier() {
	"$KIWI_LIB/barrier" "$1" 90
}

run rdma link add kiwi0 type kiwi netdev eth0
run rdma link show
run ibv_devices
barrier links

# perftest turns TSC cycles into time with a frequency it samples when it
# reports. Under TCG that sampling can fail ("Correlation coefficient
# r^2: ... < 0.9", "Can't produce a report"; often while the guests kept
# time with the HPET, scripts/lab/README) and both sides exit 1: the
# client then asks for another run, up to five in all, through the shared
# folder. perftest stays on vCPU 0, as in the bench (tests/bench/pair/
# perf.sh). It runs a fixed count of 64 KiB Writes, as the
# bench does. With a duration (-D 5) instead, the sampling failed in all
# ten runs of two demos on a slow host (2026-11-30) and both demos failed;
# with 1000 Writes it failed in three runs of eight, five demos, all passed.
bw=(timeout 60 taskset -c 0 ib_write_bw -d kiwi0 -R -n 1000 --report_gbits)

# bw_client TRY: one client run; 0, 1 (failed) or 2 (run it again).
bw_client() {
	local out=/tmp/demo-bw.$1 rc=0

	run "${bw[@]}" -p $((18515 + $1)) "$KIWI_PEER_IP" 2>&1 | tee "$out" ||
		rc=1
	[ "$rc" = 0 ] && return 0
	[ "$1" -lt 5 ] && grep -q '^Correlation coefficient' "$out" && return 2
	return 1
}

if [ "$KIWI_ROLE" = server ]; then
	timeout 120 rping -s -a "$KIWI_MY_IP" -C 3 -v &
	rping_pid=$!
	barrier rping-listening
	run wait "$rping_pid"
	for try in 1 2 3 4 5; do
		"${bw[@]}" -p $((18515 + try)) &
		bw_pid=$!
		barrier "bw-listening.$try"
		rc=0
		run wait "$bw_pid" || rc=$?
		barrier "bw-done.$try"
		[ -e "$KIWI_SHARED/demo.bw-again.$try" ] || break
		echo "(perftest could not calibrate its clock: run $((try + 1)))"
	done
	[ "$rc" = 0 ] || exit "$rc"
else
	barrier rping-listening
	sleep 1
	run timeout 60 rping -c -a "$KIWI_PEER_IP" -C 3 -v
	for try in 1 2 3 4 5; do
		barrier "bw-listening.$try"
		sleep 1
		rc=0
		bw_client "$try" || rc=$?
		[ "$rc" = 2 ] && touch "$KIWI_SHARED/demo.bw-again.$try"
		barrier "bw-done.$try"
		[ "$rc" = 2 ] || break
	done
	[ "$rc" = 0 ] || exit "$rc"
fi
barrier finished
run rdma link delete kiwi0
run modprobe -r kiwi
