#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kiwi-lab: timeout=600
#
# The device goes away while a process (vt_hold) holds one of every verbs
# object open: first by `rdma link delete`, then by unregistering its
# netdev. The removal must finish promptly (the driver disassociates user
# contexts instead of waiting for them to close), the process must see
# IBV_EVENT_DEVICE_FATAL, EIO from new verbs and successful destruction of
# its objects, and a new device on the same netdev must start from the
# resource baseline and work. For the netdev's removal the holder keeps a
# QP in ERR, as one a connection used: the removal waits up to 3 s for
# such QPs and must then go on, though the core repeats NETDEV_UNREGISTER
# every second while kiwi still holds the netdev (before the fix each
# repeat restarted the 3 s, and the removal waited for the holder to exit).

. "$(dirname "$0")/lib/common.bash"

vt_need_progs
vt_clean_links

# start_holder DEV [ARG...]: run vt_hold on DEV in the background (sets
# $holder).
start_holder() {
	rm -f "$VT_TMP/ready"
	"$VT_PROGS/vt_hold" -d "$@" -t 90 -r "$VT_TMP/ready" > "$VT_TMP/hold.log" 2>&1 &
	holder=$!
	vt_wait_file "$VT_TMP/ready" 60 $holder
}

# remove DESCRIPTION CMD...: run the removal and give it 60 s; if it hangs
# (a driver without disassociate waits for the holder to close), end the
# holder so that the removal can complete, and fail.
remove() {
	local what=$1 t0 rc rp i
	shift
	t0=$(date +%s%N)
	"$@" &
	rp=$!
	for ((i = 0; i < 600; i++)); do
		kill -0 $rp 2>/dev/null || break
		vt_nap 0.1
	done
	if kill -0 $rp 2>/dev/null; then
		vt_fail "$what did not finish within 60 s while a process held the device"
		kill -KILL $holder 2>/dev/null
		wait $rp
		return 1
	fi
	wait $rp
	rc=$?
	if [ "$rc" != 0 ]; then
		vt_fail "$what failed (status $rc)"
		return 1
	fi
	vt_pass "$what took $((($(date +%s%N) - t0) / 1000000)) ms with a holder"
}

# finish_holder: vt_hold must exit 0 (it checks what it saw).
finish_holder() {
	local rc
	wait $holder
	rc=$?
	cat "$VT_TMP/hold.log"
	vt_eq "vt_hold exit status" "$rc" 0
}

# 1. rdma link delete.
vt_link_add kiwi0 eth0 || vt_die "cannot create kiwi0"
fresh=$(vt_res kiwi0)
vt_log "fresh device: $fresh"
if start_holder kiwi0; then
	vt_eq "resources held by vt_hold" "$(vt_res kiwi0)" \
		"$(vt_res_add "$fresh" ctx=1 pd=1 mr=1 cq=2 srq=1 qp=2)"
	if remove "rdma link delete kiwi0" rdma link delete kiwi0; then
		vt_check "kiwi0 unregistered" vt_wait_gone kiwi0 10
	fi
	finish_holder
else
	vt_fail "vt_hold did not get ready: $(cat "$VT_TMP/hold.log")"
	kill $holder 2>/dev/null
	wait $holder
fi
if vt_dev_exists kiwi0; then
	vt_link_del kiwi0
fi
for u in /sys/class/infiniband_verbs/uverbs*; do
	[ "$(cat "$u/ibdev" 2>/dev/null)" = kiwi0 ] &&
		vt_fail "$(basename "$u") still names kiwi0 after removal"
done

# The same netdev takes a new device, which starts clean and works.
if vt_link_add kiwi0 eth0; then
	vt_eq "resources of the new kiwi0" "$(vt_res kiwi0)" "$fresh"
	out=$("$VT_PROGS/vt_objcycle" -d kiwi0 -n 20 2>&1)
	vt_eq "vt_objcycle on the new kiwi0" "$?" 0
	[ -z "$out" ] || vt_log "$out"
	vt_link_del kiwi0
fi

# 2. Netdev unregister.
if vt_veth_pair vrm0 vrm1 && vt_link_add kiwir0 vrm0; then
	if start_holder kiwir0 -e; then
		if remove "ip link del vrm0" ip link del vrm0; then
			vt_check "kiwir0 unregistered with its netdev" vt_wait_gone kiwir0 10
		fi
		finish_holder
	else
		vt_fail "vt_hold did not get ready on kiwir0: $(cat "$VT_TMP/hold.log")"
		kill $holder 2>/dev/null
		wait $holder
	fi
else
	vt_fail "cannot set up kiwir0 on a veth pair"
fi
ip link del vrm0 2>/dev/null
vt_eq "kiwi devices at the end" "$(vt_kiwi_devs | tr '\n' ' ')" ""

vt_finish
