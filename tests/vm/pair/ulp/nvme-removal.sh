#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The RDMA device taken away under NVMe over Fabrics (kiwi-kiwi): nvmet
# exports a memory-backed null_blk on the server guest, the client guest
# is connected with nvme-rdma (reconnect_delay 1 s, ctrl_loss_tmo 120 s),
# and each step below runs while a verifying fio writes (4 KiB random, QD
# 8, rate-limited so that it is still writing when the device goes). Both
# sides first count the QPs the queues hold (there must be some), then:
#  host-link    the host's `rdma link delete`: it must end within
#               ULP_RM_LIMIT (60 s), nvme-rdma (ib_client remove) deletes
#               its controller, fio ends with I/O errors in time, the
#               target releases its queues (no QP left on its kiwi0),
#               `modprobe -r kiwi` succeeds (refcount zero); then kiwi is
#               added again, the host connects again and a verifying fio
#               passes.
#  target-link  the target's `rdma link delete` and `modprobe -r kiwi`:
#               nvmet-rdma removes its queues, the host starts error
#               recovery; kiwi comes back and the nvmet port is linked
#               again (nvmet-rdma in 6.1 drops a listener whose device
#               went away and does not listen again by itself); the host
#               reconnects by itself and the running fio's verify passes.
#  host-down    the host's net_device down for 5 s: the port goes DOWN
#               and ACTIVE again; the running fio's verify passes.
#  host-unregister  the host's net_device unregistered under the queues:
#               both guests put a second kiwi device (kiwi7) on a VLAN of
#               eth0 (10.77.7.0/24), the target exports the namespace on
#               a second nvmet port there, the host connects over it alone
#               (its eth0 controller disconnected first); `ip link del` of
#               the host's VLAN ends within ULP_RM_LIMIT and kiwi7 leaves
#               with it. kiwi ends the device's connections first, so
#               nvme-rdma starts its error recovery before the device goes
#               (before, its removal waited out its I/O and admin timeouts
#               on the dead queues: `ip link del` took about 100 s,
#               Documentation/ulps.md); its removal then deletes the
#               controller or finds the queues down and leaves it
#               reconnecting (rm_host_unregistered). The target's kiwi7
#               releases its queues' QPs (nvmet's keep-alive), `modprobe -r
#               kiwi` succeeds; the VLAN and both devices come back: a
#               reconnecting controller gets its queues back by itself and
#               the running fio verifies, a deleted one is connected again;
#               a new verifying fio passes; the target removes its
#               port and VLAN, the host connects over eth0 again.
#  host-module  (--full) `modprobe -r kiwi` on the host with the
#               controller connected: the module unloads once nvme-rdma
#               let go; connect again, verifying fio passes.
#  target-down  (--full) the target's net_device down for 5 s, as
#               host-down.
# Every removal and every wait is bounded; the lab fails the case on any
# kernel Oops, BUG, WARNING or KASAN/lockdep/kmemleak report. A `nvme
# disconnect` still running after 10 s has both guests dump their RDMA and
# TCP state and kiwi's trace (ulp_diag_both).

. "$KIWI_SRC/tests/vm/pair/lib.bash"
. "$KIWI_SRC/tests/vm/pair/ulp/lib.bash"

steps="host-link target-link host-down host-unregister"
[ "$PAIR_MODE" = full ] && steps="$steps host-module target-down"
# ULP_RM_STEPS: run these steps only (e.g. one being debugged).
steps=${ULP_RM_STEPS:-$steps}
[ "$PAIR_PROV" = kiwi ] || vt_die "nvme-removal runs kiwi on both sides (kiwi-kiwi)"

# --- target (server guest) ---

# The nvmet port of the VLAN (host-unregister).
RM_VLAN_PORT=3

# rm_target_vlan STEP: kiwi7 on the VLAN, the namespace exported there.
rm_target_vlan() {
	ulp_vlan_up "$1" || vt_die "$1: no VLAN device"
	ulp_nvmet_port_add rdma "$RM_VLAN_PORT" "$ULP_VLAN_MY_IP"
	ulp_step_barrier "vlan-$1"
}

rm_target_step() {
	local step=$1 dev=$PAIR_DEV
	ulp_rm_mark
	if [ "$step" = host-unregister ]; then
		rm_target_vlan "$step"
		dev=$ULP_VLAN_DEV
	fi
	ulp_step_barrier "armed-$step" 600
	ulp_rm_has_qps "$step" "$dev"
	ulp_step_barrier "io-$step" 600
	case "$step" in
	host-link | host-module | host-unregister)
		ulp_rm_no_qps "$step" "$dev"
		ulp_step_barrier "released-$step"
		;;
	target-link)
		ulp_rm_delete "$step"
		ulp_rm_dmesg "$step" "nvmet_rdma: Removing queue" "nvmet-rdma removed its queues"
		ulp_rm_unload "$step"
		sleep 3
		ulp_rm_dev_add "$step"
		ulp_nvmet_port_del rdma
		ulp_nvmet_port_add rdma
		vt_pass "$step: nvmet rdma port linked again"
		;;
	target-down)
		ulp_rm_link_down "$step"
		;;
	esac
	ulp_step_barrier "done-$step" 400
	if [ "$step" = host-unregister ]; then
		ulp_nvmet_port_del rdma "$RM_VLAN_PORT"
		ulp_vlan_unregister "$step.target"
	fi
}

rm_target() {
	local s
	ulp_null_blk 1
	ulp_nvmet_export rdma "$ULP_DEV"
	ulp_step_barrier target-up
	ulp_step_barrier connected 300
	for s in $steps; do
		rm_target_step "$s"
	done
	# The export stays until the host disconnected: unlinking the port
	# deletes the controller, and a shutdown Property Set the host sent
	# meanwhile is never answered (nvme-rdma waits its admin timeout).
	ulp_step_barrier host-done 300
	ulp_cleanup
}

# --- host (client guest) ---

# rm_connect STEP: nvme connect with reconnects allowed for 2 minutes.
rm_connect() {
	ulp_nvme_connect rdma --ctrl-loss-tmo=120 --reconnect-delay=1 ||
		vt_die "$1: nvme connect failed"
}

# rm_vlan_connect STEP: kiwi7 on the VLAN, connected over it (the target
# set its port up there first).
rm_vlan_connect() {
	ulp_vlan_up "$1" || vt_die "$1: no VLAN device"
	ULP_NVME_PEER=$ULP_VLAN_PEER_IP rm_connect "$1"
}

# rm_ctrl_state: the state of the host's controller, "none" without one.
rm_ctrl_state() {
	cat /sys/class/nvme/nvme*/state 2> /dev/null || echo none
}

# rm_host_unregistered STEP OFFSET: the VLAN is gone. kiwi ended kiwi7's
# connections before kiwi7 went, so nvme-rdma took them for a transport
# failure: its error recovery ran, and its removal of the device either
# still found the controller (deleted) or found its queues already down
# (it reconnects, as nvme-tcp does, until ctrl_loss_tmo). Then kiwi is
# unloaded and comes back with the VLAN; a reconnecting controller must
# get its queues back by itself and the running fio verify, a deleted one
# is connected again and a new fio verifies.
rm_host_unregistered() {
	local step=$1 off=$2 state
	ulp_rm_dmesg "$step" "starting error recovery" "nvme-rdma saw its queues fail first"
	state=$(rm_ctrl_state)
	vt_log "$step: the controller after the unregistration: $state"
	ulp_rm_unload "$step"
	ulp_step_barrier "io-$step"
	ulp_step_barrier "released-$step"
	ulp_rm_dev_add "$step"
	ulp_vlan_up "$step.back" || vt_die "$step: no VLAN device"
	if [ "$state" = none ]; then
		ulp_rm_fio_end "$step" 90
		ULP_NVME_PEER=$ULP_VLAN_PEER_IP rm_connect "$step"
	elif ulp_wait 60 sh -c "grep -qx live /sys/class/nvme/nvme*/state"; then
		vt_pass "$step: the controller reconnected by itself"
		ulp_rm_fio_verified "$step" 300
	else
		vt_fail "$step: the controller is $(rm_ctrl_state) 60 s after the VLAN came back"
	fi
	ulp_fio "$step.fio" 300 "$ULP_DEV" --rw=randwrite --bs=4k --iodepth=8 \
		--size=4M --offset="$((off + 8))M"
}

rm_host_step() {
	local step=$1 off=$2 ctrls dev=$PAIR_DEV
	ulp_rm_mark
	if [ "$step" = host-unregister ]; then
		ulp_run_diag "$step.disconnect" 10 60 nvme disconnect -n "$ULP_NQN"
		ulp_step_barrier "vlan-$step"
		rm_vlan_connect "$step"
		dev=$ULP_VLAN_DEV
	fi
	ulp_rm_fio_start "$step" "$ULP_DEV" --offset="${off}M"
	ulp_step_barrier "armed-$step"
	case "$step" in
	host-unregister)
		ulp_rm_has_qps "$step" "$dev"
		ulp_vlan_unregister "$step"
		rm_host_unregistered "$step" "$off"
		;;
	host-link | host-module)
		ulp_rm_has_qps "$step" "$dev"
		case "$step" in
		host-link) ulp_rm_delete "$step" ;;
		host-module) ulp_rm_unload "$step" ;;
		esac
		ulp_wait 60 sh -c "! ls -d /sys/class/nvme/nvme* > /dev/null 2>&1"
		ctrls=$(ls -d /sys/class/nvme/nvme* 2> /dev/null)
		if [ -z "$ctrls" ]; then
			vt_pass "$step: nvme-rdma deleted its controller"
		else
			vt_fail "$step: controller still present: $ctrls"
		fi
		# The device went away under it: fio must end, with errors.
		ulp_rm_fio_end "$step" 90
		case $? in
		0) vt_fail "$step: fio passed although its controller went away" ;;
		124) ;;
		*) vt_pass "$step: fio ended with I/O errors" ;;
		esac
		ulp_rm_dmesg "$step" "Removing ctrl: NQN \"$ULP_NQN\"" "nvme-rdma removed the controller"
		[ "$step" = host-module ] || ulp_rm_unload "$step"
		ulp_step_barrier "io-$step"
		ulp_step_barrier "released-$step"
		ulp_rm_dev_add "$step"
		rm_connect "$step"
		ulp_fio "$step.fio" 300 "$ULP_DEV" --rw=randwrite --bs=4k --iodepth=8 \
			--size=4M --offset="$((off + 8))M"
		;;
	target-link)
		ulp_step_barrier "io-$step"
		ulp_rm_fio_verified "$step" 300
		ulp_rm_dmesg "$step" "Successfully reconnected" "the host reconnected by itself"
		;;
	host-down)
		ulp_step_barrier "io-$step"
		ulp_rm_link_down "$step"
		ulp_rm_fio_verified "$step" 300
		;;
	target-down)
		ulp_step_barrier "io-$step"
		ulp_rm_fio_verified "$step" 300
		;;
	esac
	# The VLAN's controller goes before the target removes its port.
	if [ "$step" = host-unregister ]; then
		ulp_run_diag "$step.disconnect-vlan" 10 60 nvme disconnect -n "$ULP_NQN"
		ip link del "$ULP_VLAN"
		rm_connect "$step"
	fi
	ulp_step_barrier "done-$step"
}

rm_host() {
	local s off=0
	ulp_step_barrier target-up
	rm_connect setup
	ulp_step_barrier connected
	for s in $steps; do
		rm_host_step "$s" "$off"
		off=$((off + 32))
	done
	ulp_run_diag "nvme disconnect" 10 60 nvme disconnect -n "$ULP_NQN"
	ulp_step_barrier host-done
	ulp_cleanup
}

pair_up
ulp_trace_on
ulp_diag_serve
if [ "$PAIR_SIDE" = server ]; then
	rm_target
else
	rm_host
fi
pair_down
vt_finish
