#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The port follows its netdev (one end of a veth pair, so eth0 stays up):
# down/up moves the port to DOWN/ACTIVE in ibv_query_port, rdma(8) and
# sysfs and raises IBV_EVENT_PORT_ERR then IBV_EVENT_PORT_ACTIVE; an MTU
# change moves active_mtu to the largest IB MTU that fits (1500 -> 1024,
# 9000 -> 4096, 3000 -> 2048, 600 -> 512); unregistering the netdev
# removes the kiwi device.

. "$(dirname "$0")/lib/common.bash"

vt_need_progs
vt_clean_links

# wait_state DEV STATE: wait up to 10 s for vt_query port_state=STATE.
wait_state() {
	local i
	for ((i = 0; i < 100; i++)); do
		[ "$(vt_query_get "$1" port_state)" = "$2" ] && return 0
		vt_nap 0.1
	done
	return 1
}

# check_state DEV RDMA_STATE SYSFS_STATE VT_STATE DEVINFO_STATE
check_state() {
	if ! wait_state "$1" "$4"; then
		vt_fail "$1: ibv_query_port state is $(vt_query_get "$1" port_state), expected $4"
		return
	fi
	vt_pass "$1: ibv_query_port state $4"
	vt_check "$1: rdma link show state $2" \
		grep -q "$1/1 state $2 " <<< "$(rdma link show "$1/1")"
	vt_eq "$1: sysfs port state" "$(cat "/sys/class/infiniband/$1/ports/1/state")" "$3"
	vt_check "$1: ibv_devinfo state $5" \
		grep -q "state:[[:space:]]*$5" <<< "$(ibv_devinfo -d "$1")"
}

vt_veth_pair vpe0 vpe1 || vt_die "cannot create veth pair vpe0/vpe1"
vt_link_add kiwip0 vpe0 || vt_die "cannot create kiwip0 on vpe0"
check_state kiwip0 ACTIVE "4: ACTIVE" active "PORT_ACTIVE (4)"

# Down and up, with an async event listener.
"$VT_PROGS/vt_async" -d kiwip0 -e PORT_ERR,PORT_ACTIVE -t 60 -r "$VT_TMP/async.ready" &
async=$!
if vt_wait_file "$VT_TMP/async.ready" 30 $async; then
	ip link set vpe0 down
	check_state kiwip0 DOWN "1: DOWN" down "PORT_DOWN (1)"
	ip link set vpe0 up
	check_state kiwip0 ACTIVE "4: ACTIVE" active "PORT_ACTIVE (4)"
else
	vt_fail "vt_async did not get ready"
fi
if wait $async; then
	vt_pass "PORT_ERR then PORT_ACTIVE delivered"
else
	vt_fail "async events (vt_async exit status $?)"
fi

# MTU changes.
for pair in 1500:1024 9000:4096 3000:2048 600:512 1500:1024; do
	mtu=${pair%:*}
	want=${pair#*:}
	if ! ip link set vpe0 mtu "$mtu"; then
		vt_fail "cannot set vpe0 mtu $mtu"
		continue
	fi
	vt_eq "netdev mtu $mtu: active_mtu" "$(vt_query_get kiwip0 active_mtu)" "$want"
done
ip link set vpe0 mtu 9000
vt_check "ibv_devinfo active_mtu 4096 (5) at netdev mtu 9000" \
	grep -q "active_mtu:[[:space:]]*4096 (5)" <<< "$(ibv_devinfo -d kiwip0)"

# Netdev unregister takes the kiwi device with it.
vt_check "ip link del vpe0" ip link del vpe0
if vt_wait_gone kiwip0 10; then
	vt_pass "kiwip0 unregistered with its netdev"
else
	vt_fail "kiwip0 still registered 10 s after its netdev went away"
fi
vt_check "rdma link show lists no kiwip0" \
	test -z "$(rdma link show 2>&1 | grep kiwip0)"
vt_eq "kiwi devices at the end" "$(vt_kiwi_devs | tr '\n' ' ')" ""

vt_finish
