#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The RDMA device taken away under an NFS over RDMA mount (kiwi-kiwi):
# nfsd exports a tmpfs with its RDMA listener (a wildcard one, port
# 20049), the client mounts it with NFSv4.2 over RDMA (a hard mount), and
# each step runs while a verifying fio writes a file on the mount (4 KiB
# O_DIRECT random writes at 100 IOPS: one RPC each, in flight when the
# device goes). Both sides first count the QPs the connection holds (there
# must be some), then:
#  host-link    the client's `rdma link delete` ends within ULP_RM_LIMIT
#               (60 s): rpcrdma got DEVICE_REMOVAL ("rpcrdma: removing
#               device") and let go of its connection; the server releases
#               its QP (none left on its kiwi0); `modprobe -r kiwi` on the
#               client succeeds (refcount zero); kiwi is added again, the
#               mount recovers by itself: fio's writes complete, or fail
#               with ENODEV only (see nr_host_link_fio), and a new
#               verifying fio passes.
#  host-module  `modprobe -r kiwi` on the client with the mount up: the
#               module unloads (rpcrdma let go: "removing device"), then
#               as host-link.
#  target-link  the server's `rdma link delete` and `modprobe -r kiwi`,
#               both in time; kiwi is added again, the wildcard listener
#               follows the new device, the client reconnects by itself.
#  host-down    the client's net_device down for 5 s: the port goes DOWN
#               and ACTIVE again, the mount recovers by itself.
# After each step fio must end within its limit and every block it wrote
# must read back intact (a hard mount: the writes are retried, not lost).
# Then, with the first mount gone:
#  host-unregister  both guests put a second kiwi device (kiwi7) on a VLAN
#               of eth0 (10.77.7.0/24); the server's joins nfsd's running
#               wildcard listener (two kiwi devices share its port, which
#               before kiwi's shared ports failed with EADDRINUSE and an
#               oops in rpcrdma's cleanup of it) and exports to the
#               client's VLAN address; the client mounts over the VLAN
#               (NFSv4.2, its QPs on kiwi7), `ip link del` of its VLAN
#               under the verifying fio ends within ULP_RM_LIMIT and
#               kiwi7 leaves with it; the VLAN and kiwi7 come back, the
#               mount recovers and every block reads back intact.
# The lab fails the case on any kernel Oops, BUG, WARNING, hung task or
# KASAN/lockdep/kmemleak report.

. "$KIWI_SRC/tests/vm/pair/lib.bash"
. "$KIWI_SRC/tests/vm/pair/ulp/lib.bash"

steps="host-link host-module target-link host-down"
# What the client mounts over the VLAN (host-unregister).
NR_VLAN_SRC=$ULP_VLAN_PEER_IP:$ULP_NFS4_PATH
[ "$PAIR_PROV" = kiwi ] || vt_die "nfs-removal runs kiwi on both sides (kiwi-kiwi)"

# --- server ---

nr_server() {
	local s
	ulp_nfsd_up
	ulp_step_barrier target-up
	for s in $steps; do
		ulp_rm_target_step "$s"
	done
	# nfsd stays up until the client unmounted (a hard mount's umount
	# waits for the server).
	ulp_step_barrier unmounted 300
	ulp_rm_target_unregister nr_export_vlan
	ulp_cleanup
}

# nr_export_vlan STEP: the export to the client's VLAN address (withdrawn
# with the others by ulp_nfsd_up's exportfs -ua at the end).
nr_export_vlan() {
	exportfs -o rw,no_root_squash,no_subtree_check,insecure,fsid=0 \
		"$ULP_VLAN_PEER_IP:$ULP_EXPORT" || vt_die "$1: exportfs"
}

# --- client ---

# nr_host_link_fio STEP: the writes in flight when the client's device
# went either complete once it is back, or fail with ENODEV only (rpcrdma
# in 6.1 fails an RPC whose reconnect finds no RDMA device, hard mount or
# not); then a new verifying fio on the mount passes.
nr_host_link_fio() {
	ulp_rm_fio_end "$1" 240
	case $? in
	0) vt_pass "$1: fio writes verified across the outage" ;;
	124) ;;
	*)
		if grep -q 'err=' "$VT_TMP/fio.$1.out" &&
			! grep 'err=' "$VT_TMP/fio.$1.out" | grep -qv 'err=19'; then
			vt_pass "$1: fio's writes failed with ENODEV while no device was there"
		else
			vt_fail "$1: fio failed across the outage, not with ENODEV"
		fi
		;;
	esac
	ulp_fio "$1.fio" 240 "$ULP_MNT/f.$1.after" --rw=randwrite --bs=4k \
		--iodepth=8 --size=4M
}

nr_client_step() {
	local step=$1
	ulp_rm_mark
	ulp_rm_fio_start "$step" "$ULP_MNT/f.$step"
	ulp_step_barrier "armed-$step"
	case "$step" in
	host-link)
		ulp_rm_has_qps "$step"
		ulp_rm_delete "$step"
		ulp_rm_dmesg "$step" "rpcrdma: removing device $PAIR_DEV" "rpcrdma got DEVICE_REMOVAL"
		ulp_rm_unload "$step"
		;;
	host-module)
		ulp_rm_has_qps "$step"
		ulp_rm_unload "$step"
		ulp_rm_dmesg "$step" "rpcrdma: removing device $PAIR_DEV" "rpcrdma got DEVICE_REMOVAL"
		;;
	esac
	ulp_step_barrier "io-$step"
	[ "$step" != host-down ] || ulp_rm_link_down "$step"
	if [ "$step" = host-link ] || [ "$step" = host-module ]; then
		ulp_step_barrier "released-$step"
		ulp_rm_dev_add "$step"
		nr_host_link_fio "$step"
	else
		ulp_rm_fio_verified "$step" 240
	fi
	vt_log "$step: $(ulp_rm_qps) QPs of $PAIR_DEV after the outage"
	ulp_step_barrier "done-$step"
}

# nr_client_unregister: a mount over the VLAN, whose net_device goes under
# a verifying fio and comes back.
nr_client_unregister() {
	local step=host-unregister mnt=$ULP_MNT.vlan
	ulp_step_barrier "vlan-$step" 600
	ulp_vlan_up "$step" || vt_die "$step: no VLAN device"
	mkdir -p "$mnt"
	ulp_run "$step.mount" 120 mount -t nfs \
		-o "rdma,port=$ULP_NFS_PORT,vers=4.2" "$NR_VLAN_SRC" "$mnt" ||
		vt_die "$step: NFS mount over the VLAN failed"
	ulp_on_exit "timeout 60 umount -f -l $mnt"
	ulp_rm_fio_start "$step" "$mnt/f.$step"
	ulp_step_barrier "armed-$step"
	ulp_rm_has_qps "$step" "$ULP_VLAN_DEV"
	ulp_vlan_unregister "$step"
	sleep 3
	ulp_vlan_up "$step.back" || vt_fail "$step: the VLAN is not back"
	ulp_rm_fio_verified "$step" 240
	ulp_run "$step.umount" 120 umount "$mnt"
	ulp_step_barrier "done-$step"
	ulp_vlan_unregister "$step.client"
}

nr_client() {
	local s
	ulp_modprobe rpcrdma nfs nfsv4
	mkdir -p "$ULP_MNT"
	ulp_step_barrier target-up
	ulp_run mount 120 mount -t nfs -o "rdma,port=$ULP_NFS_PORT,vers=4.2" \
		"$(ulp_nfs_src 4.2)" "$ULP_MNT" || vt_die "NFS mount over RDMA failed"
	ulp_on_exit "timeout 60 umount -f -l $ULP_MNT"
	# For the report below if umount hangs: rpcrdma's connection events.
	echo 1 2> /dev/null > /sys/kernel/tracing/events/rpcrdma/enable
	echo 1 2> /dev/null > /sys/kernel/tracing/events/sunrpc/xprt_disconnect_auto/enable
	echo 1 2> /dev/null > /sys/kernel/tracing/events/sunrpc/rpc_connect_status/enable
	for s in $steps; do
		nr_client_step "$s"
	done
	# If umount hangs, say what it waits for.
	if ! ulp_run umount 120 umount "$ULP_MNT"; then
		ulp_rm_stuck_tasks
		vt_log "RPCs in flight, QPs: $(ulp_rm_qps)"
		cat /sys/kernel/debug/sunrpc/rpc_clnt/*/tasks 2> /dev/null | sed 's/^/    | /'
		rdma resource show cm_id | sed 's/^/    | /'
		grep -vE '^#' /sys/kernel/tracing/trace | tail -n 80 | sed 's/^/    | /'
	fi
	ulp_step_barrier unmounted
	nr_client_unregister
	ulp_cleanup
}

pair_up
if [ "$PAIR_SIDE" = server ]; then
	nr_server
else
	nr_client
fi
pair_down
vt_finish
