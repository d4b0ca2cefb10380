#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Module load and device creation: `rdma link add` autoloads kiwi.ko,
# explicit modprobe works and creates no device by itself, the device is
# visible through rdma(8), sysfs and the uverbs char device as an iWARP
# RNIC with its kiwi/ sysfs group, and bad link requests are refused with
# the right error: a second link on the same netdev (EEXIST), a missing
# netdev (ENODEV), a name already in use. Names other than kiwi*: 12-names.

. "$(dirname "$0")/lib/common.bash"

vt_clean_links

# 1. Autoload through rdma link add.
if lsmod | grep -q '^kiwi '; then
	vt_check "modprobe -r kiwi (module left loaded)" modprobe -r kiwi
fi
vt_link_add kiwi0 eth0 || vt_die "cannot create kiwi0"
vt_check "rdma link add autoloaded kiwi.ko" grep -q '^kiwi ' /proc/modules

# 2. Visible as an iWARP RNIC.
link=$(rdma link show kiwi0/1)
vt_log "$link"
vt_check "rdma link show: ACTIVE, LINK_UP, netdev eth0" \
	grep -q 'kiwi0/1 state ACTIVE physical_state LINK_UP netdev eth0' <<< "$link"
dev=$(rdma dev show kiwi0)
vt_log "$dev"
vt_check "rdma dev show: node_type rnic" grep -q 'node_type rnic' <<< "$dev"
sys=/sys/class/infiniband/kiwi0
vt_eq "sysfs node_type" "$(cat $sys/node_type)" "4: RNIC"
vt_eq "sysfs port 1 state" "$(cat $sys/ports/1/state)" "4: ACTIVE"
vt_eq "sysfs port 1 link_layer" "$(cat $sys/ports/1/link_layer)" "Ethernet"
vt_eq "sysfs port count" "$(ls $sys/ports)" "1"
vt_eq "sysfs kiwi/abi_version (libkiwi's match)" "$(cat $sys/kiwi/abi_version)" "4"
uverbs=
for u in /sys/class/infiniband_verbs/uverbs*; do
	[ "$(cat "$u/ibdev" 2>/dev/null)" = kiwi0 ] && uverbs=$(basename "$u")
done
if [ -z "$uverbs" ]; then
	vt_fail "no uverbs char device for kiwi0"
else
	vt_eq "mode of /dev/infiniband/$uverbs" \
		"$(stat -c %a "/dev/infiniband/$uverbs" 2>&1)" "666"
fi

# 3. Refused link requests, each with its errno; nothing gets created.
# expect_refused DESC ERRTEXT ARGS...: rdma link add ARGS must fail with ERRTEXT.
expect_refused() {
	local what=$1 text=$2 out
	shift 2
	if out=$(rdma link add "$@" 2>&1); then
		vt_fail "$what: rdma link add $* succeeded"
		return
	fi
	if [ -n "$text" ] && ! grep -q "$text" <<< "$out"; then
		vt_fail "$what: got '$out', expected '$text'"
		return
	fi
	vt_pass "$what: $out"
}
expect_refused "second link on eth0" "File exists" kiwi1 type kiwi netdev eth0
vt_check "no device kiwi1" test ! -e /sys/class/infiniband/kiwi1
expect_refused "missing netdev" "No such device" kiwi2 type kiwi netdev nosuch0
vt_check "no device kiwi2" test ! -e /sys/class/infiniband/kiwi2
expect_refused "name kiwi0 already in use" "" kiwi0 type kiwi netdev lo
vt_eq "kiwi devices after the refusals" "$(vt_kiwi_devs | tr '\n' ' ')" "kiwi0 "
vt_check "kiwi0 still on eth0 and ACTIVE" \
	grep -q 'kiwi0/1 state ACTIVE physical_state LINK_UP netdev eth0' <<< "$(rdma link show kiwi0/1)"

# 4. Delete, unload, explicit load: no device until rdma link add.
vt_link_del kiwi0
vt_check "module stays loaded after link delete" grep -q '^kiwi ' /proc/modules
vt_check "modprobe -r kiwi" modprobe -r kiwi
vt_check "kiwi unloaded" test ! -e /sys/module/kiwi
vt_check "modprobe kiwi" modprobe kiwi
vt_check "kiwi loaded" grep -q '^kiwi ' /proc/modules
sleep 1
vt_eq "devices right after modprobe" "$(vt_kiwi_devs | tr '\n' ' ')" ""
vt_link_add kiwi0 eth0 && vt_link_del kiwi0

vt_finish
