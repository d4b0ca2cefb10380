#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The RDMA device taken away under an iSER session (kiwi-kiwi): LIO exports
# a ramdisk LUN through an iSER portal (ulp_lio_up), open-iscsi logs in
# over the iser interface, and each step runs while a verifying fio writes
# the disk (4 KiB random writes at 100 IOPS, QD 8: commands in flight when
# the device goes). Both sides first count the QPs the session holds
# (there must be some), then:
#  host-link    the initiator's `rdma link delete` ends within ULP_RM_LIMIT
#               (60 s) and ib_iser fails the connection (libiscsi:
#               "detected conn error"); the target releases its QPs (none
#               left on its kiwi0); `modprobe -r kiwi` on the initiator
#               succeeds; kiwi is added again and iscsid's recovery logs
#               the session in again by itself.
#  host-module  `modprobe -r kiwi` on the initiator with the session up:
#               the module unloads (ib_iser let go), then as host-link.
#  target-link  the target's `rdma link delete` and `modprobe -r kiwi` in
#               time; isert drops the portal's listener with the device, so
#               after `rdma link add` the portal's iSER is switched off and
#               on again (Documentation/ulps.md); the initiator logs in
#               again by itself.
#  host-down    the initiator's net_device down for 5 s: the port goes
#               DOWN and ACTIVE again, the session recovers.
# After each step the session must be logged in again within ISER_RM_BACK
# and fio must end within its limit with every block it wrote read back
# intact (the SCSI commands wait in the session's recovery, within
# open-iscsi's replacement_timeout of 120 s, and are sent again). Then a
# logout, and:
#  host-unregister  both guests put a second kiwi device (kiwi7) on a VLAN
#               of eth0 (10.77.7.0/24); the target's joins isert's running
#               wildcard listener (the portal 0.0.0.0) beside kiwi0; the
#               initiator discovers and logs in over the VLAN (its QPs on
#               kiwi7), `ip link del` of its VLAN under the verifying fio
#               ends within ULP_RM_LIMIT and kiwi7 leaves with it; the
#               VLAN and kiwi7 come back, the session logs in again by
#               itself and every block reads back intact; a logout.
# The lab fails the case on any kernel Oops, BUG, WARNING, hung
# task or KASAN/lockdep/kmemleak report.

. "$KIWI_SRC/tests/vm/pair/lib.bash"
. "$KIWI_SRC/tests/vm/pair/ulp/lib.bash"

steps="host-link host-module target-link host-down"
# Seconds the session may take to be logged in again once the device is
# back (iscsid retries about every 2-5 s).
ISER_RM_BACK=120
[ "$PAIR_PROV" = kiwi ] || vt_die "iser-removal runs kiwi on both sides (kiwi-kiwi)"

# --- target (server guest) ---

# ir_portal_again STEP: the portal's iSER off and on, a new listener on the
# new device.
ir_portal_again() {
	local p=/iscsi/$ULP_IQN/tpg1/portals/0.0.0.0:$ULP_ISCSI_PORT
	if ulp_targetcli "$1.portal" "$p enable_iser false" "$p enable_iser true"; then
		vt_pass "$1: the portal listens for iSER again"
	else
		vt_fail "$1: cannot enable iSER on the portal again"
	fi
}

ir_target() {
	local s
	ulp_lio_up
	ulp_step_barrier target-up
	ulp_step_barrier logged-in 300
	for s in $steps; do
		ulp_rm_target_step "$s" ir_portal_again
	done
	ulp_step_barrier logged-out 300
	ulp_rm_target_unregister
	ulp_cleanup
}

# --- initiator (client guest) ---

# shellcheck disable=SC2317 # run through ulp_wait
ir_logged_in() {
	iscsiadm -m session -P 1 2> /dev/null |
		grep -q 'iSCSI Session State: LOGGED_IN'
}

# ir_back STEP: the session is logged in again within ISER_RM_BACK s.
ir_back() {
	local t0
	t0=$EPOCHSECONDS
	if ulp_wait "$ISER_RM_BACK" ir_logged_in; then
		vt_pass "$1: session logged in again after $((EPOCHSECONDS - t0)) s"
	else
		vt_fail "$1: session not logged in $ISER_RM_BACK s later: $(iscsiadm -m session -P 1 2>&1 | grep -E 'State' | tr '\n' ' ')"
		tail -n 20 "$VT_TMP/iscsid.log" 2> /dev/null | sed 's/^/    | /'
	fi
}

ir_client_step() {
	local step=$1 off=$2
	ulp_rm_mark
	ulp_rm_fio_start "$step" "$ULP_DEV" --offset="${off}M"
	ulp_step_barrier "armed-$step"
	ulp_rm_has_qps "$step"
	case "$step" in
	host-link)
		ulp_rm_delete "$step"
		ulp_rm_dmesg "$step" "detected conn error" "ib_iser failed the connection"
		ulp_rm_unload "$step"
		ulp_step_barrier "io-$step"
		ulp_step_barrier "released-$step"
		ulp_rm_dev_add "$step"
		;;
	host-module)
		ulp_rm_unload "$step"
		ulp_rm_dmesg "$step" "detected conn error" "ib_iser failed the connection"
		ulp_step_barrier "io-$step"
		ulp_step_barrier "released-$step"
		ulp_rm_dev_add "$step"
		;;
	target-link)
		ulp_step_barrier "io-$step"
		;;
	host-down)
		ulp_step_barrier "io-$step"
		ulp_rm_link_down "$step"
		;;
	esac
	ir_back "$step"
	ulp_rm_fio_verified "$step" 300
	vt_log "$step: $(ulp_rm_qps) QPs of $PAIR_DEV after the outage"
	ulp_step_barrier "done-$step"
}

# ir_client_unregister: a session over the VLAN, whose net_device goes
# under a verifying fio and comes back.
ir_client_unregister() {
	local step=host-unregister portal=$ULP_VLAN_PEER_IP:$ULP_ISCSI_PORT
	ulp_step_barrier "vlan-$step" 600
	ulp_vlan_up "$step" || vt_die "$step: no VLAN device"
	ulp_run "$step.discovery" 120 iscsiadm -m discovery -t st -p "$portal" \
		-I iser || vt_die "$step: iSER discovery over the VLAN failed"
	ulp_run "$step.login" 120 iscsiadm -m node -T "$ULP_IQN" -p "$portal" \
		-I iser --login || vt_die "$step: iSER login over the VLAN failed"
	ulp_on_exit "timeout 60 iscsiadm -m node -T $ULP_IQN -p $portal --logout"
	ulp_wait 60 ulp_iser_disk || vt_die "$step: no SCSI disk after login"
	ulp_rm_mark
	ulp_rm_fio_start "$step" "$ULP_DEV"
	ulp_step_barrier "armed-$step"
	ulp_rm_has_qps "$step" "$ULP_VLAN_DEV"
	ulp_vlan_unregister "$step"
	sleep 3
	ulp_vlan_up "$step.back" || vt_fail "$step: the VLAN is not back"
	ir_back "$step"
	ulp_rm_fio_verified "$step" 300
	ulp_run "$step.logout" 120 iscsiadm -m node -T "$ULP_IQN" -p "$portal" \
		--logout || vt_fail "$step: iSER logout"
	ulp_step_barrier "done-$step"
	ulp_vlan_unregister "$step.client"
}

ir_client() {
	local s off=0
	ulp_iscsid_up
	ulp_step_barrier target-up
	ulp_run discovery 120 iscsiadm -m discovery -t st \
		-p "$KIWI_PEER_IP:$ULP_ISCSI_PORT" -I iser ||
		vt_die "iSER discovery failed"
	ulp_run login 120 iscsiadm -m node -T "$ULP_IQN" \
		-p "$KIWI_PEER_IP:$ULP_ISCSI_PORT" -I iser --login ||
		vt_die "iSER login failed"
	ulp_on_exit "timeout 60 iscsiadm -m node -T $ULP_IQN --logout"
	ulp_wait 60 ulp_iser_disk || vt_die "no SCSI disk after login"
	ulp_iser_disk
	ulp_step_barrier logged-in
	for s in $steps; do
		ir_client_step "$s" "$off"
		off=$((off + 8))
	done
	ulp_run logout 120 iscsiadm -m node -T "$ULP_IQN" --logout ||
		vt_fail "iSER logout after the removals"
	ulp_step_barrier logged-out
	ir_client_unregister
	ulp_cleanup
}

pair_up
if [ "$PAIR_SIDE" = server ]; then
	ir_target
else
	ir_client
fi
pair_down
vt_finish
