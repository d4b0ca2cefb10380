#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The rdma-core tools see kiwi0 through libkiwi: ibv_devices lists it,
# ibv_devinfo -v reports an iWARP device with one ACTIVE Ethernet port and
# the same limits as ibv_query_device, libibverbs warns about no device,
# and an unprivileged user can open it.

. "$(dirname "$0")/lib/common.bash"

vt_need_progs
vt_clean_links
vt_link_add kiwi0 eth0 || vt_die "cannot create kiwi0"

out=$(IBV_SHOW_WARNINGS=1 ibv_devices 2>&1)
vt_log "ibv_devices: $(tr '\n' '|' <<< "$out")"
vt_check "ibv_devices lists kiwi0" grep -Eq '^[[:space:]]*kiwi0[[:space:]]+[0-9a-f]{16}$' <<< "$out"
vt_check "libibverbs prints no warning" test -z "$(grep -i warning <<< "$out")"

info=$(IBV_SHOW_WARNINGS=1 ibv_devinfo -v -d kiwi0 2>&1)
rc=$?
vt_eq "ibv_devinfo -v exit status" "$rc" 0
# field NAME: the value of "NAME: value" in the ibv_devinfo output.
field() {
	sed -n "s/^[[:space:]]*$1:[[:space:]]*//p" <<< "$info" | head -n 1
}
vt_eq "hca_id" "$(field hca_id)" kiwi0
vt_eq "transport" "$(field transport)" "iWARP (1)"
vt_eq "phys_port_cnt" "$(field phys_port_cnt)" 1
vt_eq "port state" "$(field state)" "PORT_ACTIVE (4)"
vt_eq "link_layer" "$(field link_layer)" Ethernet
query=$("$VT_PROGS/vt_query" -d kiwi0)
# queried NAME: the value vt_query printed for NAME.
queried() {
	sed -n "s/^$1=//p" <<< "$query"
}
for k in max_qp max_qp_wr max_sge max_cq max_cqe max_mr max_pd max_srq max_srq_wr max_srq_sge; do
	vt_eq "ibv_devinfo $k matches ibv_query_device" "$(field "$k")" "$(queried "$k")"
done
for k in max_qp max_qp_wr max_sge max_cq max_cqe max_mr max_pd; do
	v=$(queried "$k")
	if [ -n "$v" ] && [ "$v" -gt 0 ]; then
		vt_pass "$k is positive: $v"
	else
		vt_fail "$k is '$v', expected a positive limit"
	fi
done

nobody=$(runuser -u nobody -- ibv_devinfo -d kiwi0 2>&1)
vt_check "ibv_devinfo as user nobody" grep -q "transport:[[:space:]]*iWARP (1)" <<< "$nobody"

vt_link_del kiwi0
vt_finish
