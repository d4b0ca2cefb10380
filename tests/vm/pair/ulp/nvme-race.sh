#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The target takes its export away while the host disconnects (kiwi-kiwi,
# or siw-siw for comparison): for each DELAY of a sweep both guests leave
# a barrier, the host runs `nvme disconnect`, the target unlinks its nvmet
# port DELAY s later (nvmet deletes the controller). Each disconnect must
# end within 20 s, and the host must connect again after it.
#
# The host's admin timeout is 8 s here (nvme_core admin_timeout, 60 s by
# default). Whenever the controller's deletion lands between the host's
# shutdown Property Set and its answer, nvmet drops the command (its
# queue is no longer live) and nvme-rdma, already deleting, only ends it
# at the admin timeout: "I/O N QID 0 timeout", "Property Set error: 881".
# The case logs how many disconnects waited so; with both sides' kiwi
# tracepoints and RDMA/TCP state dumped while one waits (ulp_diag_both).
# This is what made nvme-removal's last `nvme disconnect` wait 60 s
# (Documentation/ulps.md): its target cleaned up without waiting for the
# host.

. "$KIWI_SRC/tests/vm/pair/lib.bash"
. "$KIWI_SRC/tests/vm/pair/ulp/lib.bash"

delays="0 0.1 0.2 0.3 0.4 0.5 0.7 1.0"

race_target() {
	local d
	ulp_null_blk 1
	ulp_nvmet_export rdma "$ULP_DEV"
	ulp_step_barrier target-up
	for d in $delays; do
		ulp_step_barrier "go-$d" 300
		sleep "$d"
		ulp_nvmet_port_del rdma
		vt_log "delay $d: port unlinked at $(cut -d' ' -f1 /proc/uptime)"
		ulp_step_barrier "done-$d" 300
		ulp_nvmet_port_add rdma
		ulp_step_barrier "back-$d" 300
	done
	ulp_step_barrier host-done 300
	ulp_cleanup
}

race_host() {
	local d t0 t1 hangs=0
	modprobe nvme_core
	echo 8 > /sys/module/nvme_core/parameters/admin_timeout
	ulp_step_barrier target-up
	for d in $delays; do
		ulp_nvme_connect rdma --ctrl-loss-tmo=30 --reconnect-delay=1 ||
			vt_die "connect failed"
		ulp_rm_mark
		ulp_step_barrier "go-$d"
		t0=$(cut -d' ' -f1 /proc/uptime)
		ulp_run_diag "disconnect-$d" 5 20 nvme disconnect -n "$ULP_NQN"
		t1=$(cut -d' ' -f1 /proc/uptime)
		vt_log "delay $d: disconnect $t0 -> $t1: $(dmesg | tail -n "+$((ULP_KMSG0 + 1))" |
			grep -E 'QID 0 timeout|Property Set|error recovery|Removing' | tr '\n' ' ')"
		dmesg | tail -n "+$((ULP_KMSG0 + 1))" | grep -q 'QID 0 timeout' && hangs=$((hangs + 1))
		ulp_step_barrier "done-$d"
		ulp_step_barrier "back-$d"
	done
	vt_log "disconnects that waited for the admin timeout: $hangs of $(wc -w <<< "$delays")"
	ulp_step_barrier host-done
	ulp_cleanup
}

pair_up
ulp_trace_on
ulp_diag_serve
if [ "$PAIR_SIDE" = server ]; then
	race_target
else
	race_host
fi
pair_down
vt_finish
