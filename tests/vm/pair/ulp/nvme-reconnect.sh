#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NVMe over Fabrics on the queues error recovery made (kiwi-kiwi): the
# host's eth0 goes down for 5 s under a verifying fio, four times. The
# keep-alive in flight then usually outlives its 5 s timeout (TCP sends
# again only when its backed-off retransmission timer fires, seconds after
# the link is back), nvme-rdma starts error recovery and connects new
# queues; the target keeps its export throughout. After each outage the
# controller must be live again within 60 s and answer admin commands
# (`nvme id-ctrl`, three times 3 s apart, each bounded), and at the end
# `nvme disconnect`, whose shutdown Property Set goes on the newest admin
# queue, must end in time. A command still running after 10 s has both
# guests dump their RDMA and TCP state (ulp_diag_both). This is
# nvme-removal.sh's host-down step and last disconnect, repeated, without
# the device removals before them.

. "$KIWI_SRC/tests/vm/pair/lib.bash"
. "$KIWI_SRC/tests/vm/pair/ulp/lib.bash"

[ "$PAIR_PROV" = kiwi ] || vt_die "nvme-reconnect runs kiwi on both sides (kiwi-kiwi)"
cycles=4

rc_target() {
	ulp_null_blk 1
	ulp_nvmet_export rdma "$ULP_DEV"
	ulp_step_barrier target-up
	ulp_step_barrier host-done 900
	ulp_cleanup
}

# rc_ctrl: the sysfs directory of ULP_NQN's controller on this host.
rc_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/subsysnqn" ] && [ "$(cat "$c/subsysnqn")" = "$ULP_NQN" ] &&
			echo "$c" && return 0
	done
	return 1
}

# rc_probe STEP: the controller is live again and answers admin commands.
rc_probe() {
	local step=$1 ctrl i
	ctrl=$(rc_ctrl) || { vt_fail "$step: no controller"; return 1; }
	if ! ulp_wait 60 grep -qx live "$ctrl/state"; then
		vt_fail "$step: controller $(cat "$ctrl/state") 60 s after the outage"
		ulp_diag_both "$step: not live"
		return 1
	fi
	for i in 1 2 3; do
		ulp_run_diag "$step.id-ctrl$i" 10 70 nvme id-ctrl "/dev/${ctrl##*/}" ||
			return 1
		sleep 3
	done
}

rc_host() {
	local i
	ulp_step_barrier target-up
	ulp_nvme_connect rdma --ctrl-loss-tmo=120 --reconnect-delay=1 ||
		vt_die "nvme connect failed"
	for ((i = 1; i <= cycles; i++)); do
		ulp_rm_fio_start "down$i" "$ULP_DEV" --offset="$((i * 8))M"
		ulp_rm_link_down "down$i"
		ulp_rm_fio_verified "down$i" 300
		rc_probe "down$i" || break
	done
	ulp_run_diag "nvme disconnect" 10 70 nvme disconnect -n "$ULP_NQN"
	ulp_step_barrier host-done
	ulp_cleanup
}

pair_up
ulp_trace_on
ulp_diag_serve
if [ "$PAIR_SIDE" = server ]; then
	rc_target
else
	rc_host
fi
pair_down
vt_finish
