#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Removing the RDMA device under running kernel ULPs. kiwi runs on a VLAN
# (eth0.7, 10.77.7.0/24), so that its net_device can be unregistered
# without cutting the guests apart. The server guest exports an NVMe-oF
# namespace (nvmet-rdma), an NFS export (nfsd, RDMA listener) and an iSER
# LUN (LIO); the client guest connects to all three at once. Then, one at
# a time, each step removes the device and brings it back:
#  client: rdma link delete; modprobe -r kiwi; the VLAN unregistered;
#          the VLAN down for 5 s (the device stays);
#  server: rdma link delete; modprobe -r kiwi.
# Every removal must finish within its time limit (no hang; the module
# unloads once the ULPs let go) and the device must be gone; once it is
# back, each ULP must carry I/O again, verified: the NFS mount and the
# iSER session recover by themselves, the NVMe host reconnects (target-side
# removal) or connects again (its device went away: nvme-rdma deletes the
# controller). Quick runs (make check-ulp) leave out the slowest steps:
# the client's link down and the server's module removal.

. "$KIWI_SRC/tests/vm/pair/lib.bash"
. "$KIWI_SRC/tests/vm/pair/ulp/lib.bash"

steps="c-link c-module c-unregister c-down s-link s-module"
[ "$PAIR_MODE" = quick ] && steps="c-link c-module c-unregister s-link"
[ "$PAIR_PROV" = kiwi ] || vt_die "removal needs kiwi on both sides (runs as kiwi-kiwi)"

RM_VLAN=eth0.7
KIWI_MY_IP=10.77.7.${KIWI_MY_IP##*.}
KIWI_PEER_IP=10.77.7.${KIWI_PEER_IP##*.}

# rm_vlan_up: the VLAN device with this guest's address on it.
rm_vlan_up() {
	ip link add link eth0 name "$RM_VLAN" type vlan id 7 &&
		ip addr add "$KIWI_MY_IP/24" dev "$RM_VLAN" &&
		ip link set "$RM_VLAN" up
}

# rm_dev_add: kiwi (loaded if needed) bound to the VLAN again.
rm_dev_add() {
	local out
	modprobe kiwi || { vt_fail "modprobe kiwi"; return 1; }
	if ! out=$(timeout 60 rdma link add "$PAIR_DEV" type kiwi netdev "$RM_VLAN" 2>&1); then
		vt_fail "rdma link add $PAIR_DEV on $RM_VLAN: $out"
		return 1
	fi
}

# rm_gone: the device left the RDMA core (within 30 s).
rm_gone() {
	if ulp_wait 30 test ! -e "/sys/class/infiniband/$PAIR_DEV"; then
		vt_pass "$1: $PAIR_DEV gone"
	else
		vt_fail "$1: $PAIR_DEV still registered 30 s later"
	fi
}

# rm_timed NAME LIMIT CMD...: a removal that must end within LIMIT s.
rm_timed() {
	local name=$1 limit=$2 t0 rc
	shift 2
	t0=$(date +%s)
	timeout "$limit" "$@" > "$VT_TMP/rm.out" 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then
		vt_pass "$name: '$*' took $(($(date +%s) - t0)) s"
	else
		vt_fail "$name: '$*' exit $rc after $(($(date +%s) - t0)) s: $(head -c 300 "$VT_TMP/rm.out")"
	fi
	return "$rc"
}

# rm_remove STEP: this guest removes its device (and brings it back).
rm_remove() {
	case "$1" in
	*-link)
		rm_timed "$1" 120 rdma link delete "$PAIR_DEV"
		rm_gone "$1"
		rm_dev_add
		;;
	*-module)
		rm_timed "$1" 120 modprobe -r kiwi
		if [ -d /sys/module/kiwi ]; then
			vt_fail "$1: kiwi still loaded (refcount $(cat /sys/module/kiwi/refcnt))"
		else
			vt_pass "$1: kiwi unloaded"
		fi
		rm_dev_add
		;;
	*-unregister)
		rm_timed "$1" 60 ip link del "$RM_VLAN"
		rm_gone "$1"
		# ib_iser logs every async event of its device.
		if [ "$PAIR_SIDE" = client ]; then
			if dmesg | grep -q "async event device fatal (8) on device $PAIR_DEV"; then
				vt_pass "$1: iSER got IB_EVENT_DEVICE_FATAL"
			else
				vt_fail "$1: no IB_EVENT_DEVICE_FATAL seen by iSER"
			fi
		fi
		rm_vlan_up || vt_fail "$1: cannot create $RM_VLAN again"
		rm_dev_add
		;;
	*-down)
		ip link set "$RM_VLAN" down
		ulp_wait 10 sh -c "rdma link show $PAIR_DEV/1 | grep -q 'state DOWN'" ||
			vt_fail "$1: port not DOWN after the link went down"
		sleep 5
		ip link set "$RM_VLAN" up
		if ulp_wait 10 sh -c "rdma link show $PAIR_DEV/1 | grep -q 'state ACTIVE'"; then
			vt_pass "$1: port DOWN for 5 s, ACTIVE again"
		else
			vt_fail "$1: port not ACTIVE after the link came up"
		fi
		;;
	esac
}

# --- client: the three sessions and their I/O checks ---

NVME_DEV=
ISER_DEV=
BLOCK=$VT_TMP/block

# rm_blk_io DEV OFFSET_MB: write 1 MiB of fresh data with O_DIRECT and read
# it back. Each command gets 60 s (I/O may hang while a ULP recovers).
rm_blk_io() {
	head -c 1048576 /dev/urandom > "$BLOCK"
	timeout 60 dd if="$BLOCK" of="$1" bs=64k seek=$(($2 * 16)) oflag=direct conv=fsync \
		status=none &&
		timeout 60 dd if="$1" of="$BLOCK.back" bs=64k skip=$(($2 * 16)) count=16 \
			iflag=direct status=none &&
		cmp -s "$BLOCK.back" "$BLOCK"
}

rm_nfs_io() {
	head -c 3000000 /dev/urandom > "$VT_TMP/nfs.src" &&
		timeout 60 cp "$VT_TMP/nfs.src" "$ULP_MNT/probe" &&
		timeout 60 sync "$ULP_MNT/probe" &&
		echo 3 > /proc/sys/vm/drop_caches &&
		timeout 60 cmp -s "$VT_TMP/nfs.src" "$ULP_MNT/probe"
}

# rm_check STEP NAME LIMIT CMD...: I/O of one ULP works within LIMIT s.
rm_check() {
	local step=$1 name=$2 limit=$3 t0
	shift 3
	t0=$(date +%s)
	until "$@" > /dev/null 2>&1; do
		if [ $(($(date +%s) - t0)) -ge "$limit" ]; then
			vt_fail "$step: $name I/O not working $limit s after the device returned"
			return 1
		fi
		sleep 2
	done
	vt_pass "$step: $name I/O verified ($(($(date +%s) - t0)) s)"
}

# rm_nvme_up: connect (once more) with reconnects allowed for 2 minutes.
rm_nvme_up() {
	ulp_nvme_connect rdma --ctrl-loss-tmo=120 --reconnect-delay=2 || return 1
	NVME_DEV=$ULP_DEV
}

rm_client_check() {
	local step=$1
	case "$step" in
	c-link | c-module | c-unregister)
		# The host's own device left: nvme-rdma deleted the controller.
		if ulp_wait 60 sh -c "! ls -d /sys/class/nvme/nvme* > /dev/null 2>&1"; then
			vt_pass "$step: nvme-rdma deleted its controller"
		else
			vt_fail "$step: NVMe controller still present"
		fi
		rm_nvme_up
		;;
	esac
	[ -n "$NVME_DEV" ] && rm_check "$step" NVMe 150 rm_blk_io "$NVME_DEV" 64
	rm_check "$step" NFS 180 rm_nfs_io
	[ -n "$ISER_DEV" ] && rm_check "$step" iSER 180 rm_blk_io "$ISER_DEV" 64
}

rm_client() {
	local s
	ulp_modprobe rpcrdma nfs nfsv4
	ulp_iscsid_up
	mkdir -p "$ULP_MNT"
	ulp_step_barrier targets-up 300
	rm_nvme_up
	timeout 120 mount -t nfs -o "rdma,port=$ULP_NFS_PORT,vers=4.2" \
		"$(ulp_nfs_src 4.2)" "$ULP_MNT" || vt_fail "NFS mount over RDMA"
	ulp_on_exit "timeout 60 umount -f -l $ULP_MNT"
	if ulp_run discovery 120 iscsiadm -m discovery -t st -p "$KIWI_PEER_IP:$ULP_ISCSI_PORT" -I iser &&
		ulp_run "iscsiadm login" 120 iscsiadm -m node -T "$ULP_IQN" \
			-p "$KIWI_PEER_IP:$ULP_ISCSI_PORT" -I iser --login &&
		ulp_wait 60 ulp_iser_disk; then
		ulp_on_exit "timeout 60 iscsiadm -m node -T $ULP_IQN --logout"
		ISER_DEV=$ULP_DEV
		# Quick recovery: the session waits this long for the device.
		iscsiadm -m node -T "$ULP_IQN" -o update -n node.session.timeo.replacement_timeout -v 300
	fi
	rm_client_check setup
	for s in $steps; do
		ulp_step_barrier "step-$s"
		[ "${s%%-*}" = c ] && rm_remove "$s"
		ulp_step_barrier "removed-$s" 300
		rm_client_check "$s"
	done
	ulp_cleanup
	ulp_step_barrier client-done
}

rm_server() {
	local s
	ulp_null_blk 1
	ulp_nvmet_export rdma "$ULP_DEV"
	ulp_nfsd_up
	ulp_lio_up
	ulp_step_barrier targets-up
	for s in $steps; do
		ulp_step_barrier "step-$s"
		[ "${s%%-*}" = s ] && rm_remove "$s"
		ulp_step_barrier "removed-$s" 300
	done
	ulp_step_barrier client-done 600
	ulp_cleanup
}

pair_up
timeout 60 rdma link delete "$PAIR_DEV" || vt_die "rdma link delete $PAIR_DEV on eth0"
modprobe 8021q || vt_die "modprobe 8021q"
rm_vlan_up || vt_die "cannot create $RM_VLAN"
ulp_on_exit "timeout 60 ip link del $RM_VLAN"
rm_dev_add || vt_die "kiwi on $RM_VLAN"
if [ "$PAIR_SIDE" = server ]; then
	rm_server
else
	rm_client
fi
pair_down
vt_finish
