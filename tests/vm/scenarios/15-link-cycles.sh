#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kiwi-lab: timeout=900
#
# 100 cycles of `rdma link add`/`rdma link delete` on eth0, each checked
# through sysfs and rdma(8); then links on the loopback device and on both
# ends of a veth pair at once, each ACTIVE and usable through libkiwi.
# KIWI_VM_CI=1 (make test's check-vm) runs 20 cycles: each cycle takes
# the same path, and 100 took 55 s of a 2-core CI machine.

. "$(dirname "$0")/lib/common.bash"

vt_need_progs
vt_clean_links

cycles=$([ "${KIWI_VM_CI:-0}" = 1 ] && echo 20 || echo 100)
start=$(date +%s%N)
for ((i = 1; i <= cycles; i++)); do
	out=$(rdma link add kiwi0 type kiwi netdev eth0 2>&1) ||
		{ vt_fail "cycle $i: rdma link add: $out"; break; }
	link=$(rdma link show kiwi0/1 2>&1)
	# A bash match, not grep: each of the cycles' processes costs.
	[[ "$link" == *"state ACTIVE "*" netdev eth0"* ]] ||
		{ vt_fail "cycle $i: rdma link show: $link"; break; }
	out=$(timeout 60 rdma link delete kiwi0 2>&1) ||
		{ vt_fail "cycle $i: rdma link delete: $out"; break; }
	vt_wait_gone kiwi0 10 ||
		{ vt_fail "cycle $i: kiwi0 still registered after delete"; break; }
done
if ((i > cycles)); then
	vt_pass "$cycles add/delete cycles in $((($(date +%s%N) - start) / 1000000)) ms"
fi
vt_eq "kiwi devices after the cycles" "$(vt_kiwi_devs | tr '\n' ' ')" ""

# check_port DEV NETDEV: DEV is ACTIVE on NETDEV and reachable via libkiwi.
check_port() {
	vt_check "$1 ACTIVE on $2" \
		grep -q "$1/1 state ACTIVE physical_state LINK_UP netdev $2" <<< "$(rdma link show "$1/1")"
	local q
	q=$("$VT_PROGS/vt_query" -d "$1")
	vt_eq "$1 transport through libkiwi is iWARP" "$(sed -n 's/^transport_iwarp=//p' <<< "$q")" 1
	vt_eq "$1 port state through libkiwi" "$(sed -n 's/^port_state=//p' <<< "$q")" active
}

# Loopback.
if vt_link_add kiwilo lo; then
	check_port kiwilo lo
	vt_link_del kiwilo
fi

# Both ends of a veth pair, at the same time.
if vt_veth_pair vtc0 vtc1; then
	if vt_link_add kiwiv0 vtc0 && vt_link_add kiwiv1 vtc1; then
		check_port kiwiv0 vtc0
		check_port kiwiv1 vtc1
		vt_objs=$("$VT_PROGS/vt_objcycle" -d kiwiv1 -n 20 2>&1) ||
			vt_fail "vt_objcycle on kiwiv1: $vt_objs"
	fi
	for d in kiwiv0 kiwiv1; do
		vt_dev_exists $d && vt_link_del $d
	done
	ip link del vtc0
else
	vt_fail "cannot create veth pair vtc0/vtc1"
fi
vt_eq "kiwi devices at the end" "$(vt_kiwi_devs | tr '\n' ' ')" ""

vt_finish
