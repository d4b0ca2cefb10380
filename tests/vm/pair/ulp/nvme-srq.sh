#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NVMe over Fabrics with the target's receives on shared receive queues
# (nvmet-rdma use_srq=1, kiwi target): nvmet posts its command buffers on
# SRQs of 1024 receives that every queue of the device shares, for as long
# as one of them lives, and reposts a buffer only when its receive
# completes; a queue's QP destroyed while others live must leave every
# receive it took and did not complete visibly on the SRQ
# (Documentation/datapath.md, kiwi_cq_clean()). The host connects, writes
# and verifies (fio, QD 32) and disconnects, three times (the I/O queues
# go before the admin queue); then the target's port is removed under a
# verifying fio and added back, every queue torn down mid-I/O and made
# again: fio must verify across it and the host reconnect. The target
# checks that nvmet took the SRQ path (use_srq reads Y, the kiwi device
# holds SRQs while the host is connected) and unloads nvmet-rdma at the
# end, so later cases load it with its defaults. Whether a receive was
# given back is not visible here: 64-kernel-verbs checks that.

. "$KIWI_SRC/tests/vm/pair/lib.bash"
. "$KIWI_SRC/tests/vm/pair/ulp/lib.bash"

[ "$PAIR_SERVER" = kiwi ] || vt_die "nvme-srq needs a kiwi target (kiwi-kiwi, kiwi-siw)"
cycles=3
case "$PAIR_MODE" in
quick) sz=8M ;;
*) sz=32M ;;
esac

# srq_target_up: nvmet-rdma loaded with use_srq=1, ULP_DEV exported.
srq_target_up() {
	ulp_null_blk 1
	ulp_configfs
	ulp_modprobe nvmet
	modprobe -r nvmet-rdma 2> /dev/null
	modprobe nvmet-rdma use_srq=1 || vt_die "modprobe nvmet-rdma use_srq=1 failed"
	ulp_on_exit "timeout 60 modprobe -r nvmet-rdma"
	vt_eq "nvmet-rdma use_srq" "$(cat /sys/module/nvmet_rdma/parameters/use_srq)" Y
	ulp_nvmet_export rdma "$ULP_DEV"
}

# srq_count: SRQs $PAIR_DEV holds now.
srq_count() {
	rdma res show srq dev "$PAIR_DEV" 2> /dev/null | grep -c 'srqn'
}

srq_target() {
	local i n
	srq_target_up
	ulp_step_barrier target-up
	for ((i = 1; i <= cycles; i++)); do
		ulp_step_barrier "connected-$i" 300
		n=$(srq_count)
		if [ "$n" -ge 1 ]; then
			vt_pass "cycle $i: $PAIR_DEV holds $n SRQ(s) while the host is connected"
		else
			vt_fail "cycle $i: $PAIR_DEV holds no SRQ: $(rdma res show srq 2>&1 | head -n 3)"
		fi
		ulp_step_barrier "disconnected-$i" 300
	done
	ulp_nvmet_port_cycle
	ulp_step_barrier host-done 600
	ulp_cleanup
}

# srq_host_cycle I: connect, write and verify, disconnect.
srq_host_cycle() {
	local i=$1
	if ulp_nvme_connect rdma; then
		ulp_fio "fio.cycle$i" 300 "$ULP_DEV" --rw=randwrite --bs=4k \
			--iodepth=32 --size="$sz" --offset=$(((i - 1) * 64))M
	fi
	ulp_step_barrier "connected-$i"
	ulp_nvme_disconnect "cycle $i"
	ulp_step_barrier "disconnected-$i"
}

srq_host() {
	local i dev
	ulp_step_barrier target-up
	for ((i = 1; i <= cycles; i++)); do
		srq_host_cycle "$i"
	done
	dev=
	ulp_nvme_connect rdma --ctrl-loss-tmo=60 --reconnect-delay=1 && dev=$ULP_DEV
	ulp_nvme_port_cycle "$dev" "$sz" 32
	[ -z "$dev" ] || ulp_nvme_disconnect
	ulp_cleanup
	ulp_step_barrier host-done
}

pair_up
if [ "$PAIR_SIDE" = server ]; then
	srq_target
else
	srq_host
fi
pair_down
vt_finish
