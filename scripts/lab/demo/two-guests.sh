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

if [ "$KIWI_ROLE" = server ]; then
	timeout 120 rping -s -a "$KIWI_MY_IP" -C 3 -v &
	rping_pid=$!
	barrier rping-listening
	run wait "$rping_pid"
	timeout 120 ib_write_bw -d kiwi0 -R -D 5 --report_gbits &
	bw_pid=$!
	barrier bw-listening
	run wait "$bw_pid"
else
	barrier rping-listening
	sleep 1
	run timeout 60 rping -c -a "$KIWI_PEER_IP" -C 3 -v
	barrier bw-listening
	sleep 1
	run timeout 60 ib_write_bw -d kiwi0 -R -D 5 --report_gbits "$KIWI_PEER_IP"
fi
barrier finished
run rdma link delete kiwi0
run modprobe -r kiwi
