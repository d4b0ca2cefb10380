#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The case of tests/bench/ulp-profile.sh (run through tests/vm/pair/run.sh
# --cases-dir): where the guests' CPU goes while fio runs 4 KiB random
# reads at queue depth 32 over NVMe-oF, with this combo's RDMA provider and
# then, in the same boot, with nvme-tcp. The server guest is the target
# (nvmet on a memory-backed null_blk), the client runs fio for
# PROFILE_ULP_SECS seconds (default 40). Both guests run `perf record -a`
# (started first: perf needs tens of seconds to start in a TCG guest) and
# count their context switches (/proc/stat ctxt) across fio's run, and
# which tasks they switched to (a hist trigger on sched_switch keyed by
# next_comm, counted in the kernel: tracing every switch would cost more
# than the switches). Each
# guest writes KIWI_RESULTS/ulp-profile.COMBO.SIDE.txt: per transport, the
# context switches per I/O, then perf report's symbols and objects.

# shellcheck source=../../vm/pair/lib.bash
. "$KIWI_SRC/tests/vm/pair/lib.bash"
# shellcheck source=../../vm/pair/ulp/lib.bash
. "$KIWI_SRC/tests/vm/pair/ulp/lib.bash"

secs=${PROFILE_ULP_SECS:-40}
out=$KIWI_RESULTS/ulp-profile.$PAIR_ID.$PAIR_SIDE.txt

# ctxt: context switches since boot, all CPUs.
ctxt() {
	local k v
	while read -r k v _; do
		[ "$k" != ctxt ] || { echo "$v"; return; }
	done < /proc/stat
}
SWITCH=/sys/kernel/tracing/events/sched/sched_switch/trigger
HIST='hist:keys=next_comm:sort=hitcount.descending'
# switched_to: the tasks switched to most since the trigger was set.
switched_to() {
	grep -E '^\{' "${SWITCH%/trigger}/hist" | head -n 12 |
		sed -E 's/^\{ next_comm: *([^ ]+) *\} hitcount: *([0-9]+)/    switches to \1: \2/'
}

# profile TRANSPORT: one fio run under perf in both guests.
profile() {
	local t=$1 perf_pid c0 c1 ios
	if [ "$PAIR_SIDE" = server ]; then
		ulp_nvmet_export "$t" "$NULLB"
		ulp_step_barrier "$t.up"
	else
		ulp_step_barrier "$t.up"
		ulp_nvme_connect "$t" || vt_fail "$t: nvme connect"
	fi
	perf record -a -o "$VT_TMP/perf.$t" -- sleep $((secs + 300)) > "$VT_TMP/perf.$t.log" 2>&1 &
	perf_pid=$!
	sleep 45
	ulp_step_barrier "$t.perf"
	echo "$HIST" > "$SWITCH"
	c0=$(ctxt)
	if [ "$PAIR_SIDE" = client ]; then
		# Terse output, field 6: the KiB read.
		if fio --name=randread --filename="$ULP_DEV" --direct=1 --ioengine=libaio \
			--rw=randread --bs=4k --iodepth=32 --time_based --runtime="$secs" \
			--size=512M --output-format=terse > "$VT_TMP/fio.$t" 2>&1; then
			ios=$(($(cut -d';' -f6 "$VT_TMP/fio.$t") / 4))
			vt_pass "$t: fio, $((ios / secs)) I/Os a second"
		else
			ios=0
			vt_fail "$t: fio: $(tail -n 3 "$VT_TMP/fio.$t")"
		fi
		echo "$ios" > "$KIWI_SHARED/ulp-profile.$PAIR_ID.$t.ios"
	fi
	ulp_step_barrier "$t.fio"
	c1=$(ctxt)
	switched_to > "$VT_TMP/switched.$t"
	echo "!$HIST" > "$SWITCH"
	ios=$(<"$KIWI_SHARED/ulp-profile.$PAIR_ID.$t.ios")
	kill -INT "$perf_pid"
	wait "$perf_pid"
	{
		echo "== $t: $ios I/Os, $((c1 - c0)) context switches," \
			"$(((c1 - c0) * 100 / (ios > 0 ? ios : 1))) per 100 I/Os"
		cat "$VT_TMP/switched.$t"
		perf report --stdio --no-children --sort dso,sym --percent-limit 0.7 \
			-i "$VT_TMP/perf.$t" 2>/dev/null | grep '%'
		perf report --stdio --no-children --sort dso --percent-limit 0.5 \
			-i "$VT_TMP/perf.$t" 2>/dev/null | grep '%'
	} >> "$out"
	[ "$PAIR_SIDE" = client ] && nvme disconnect -n "$ULP_NQN" > /dev/null
	ulp_step_barrier "$t.down"
	[ "$PAIR_SIDE" = server ] && ulp_nvmet_port_del "$t"
	vt_log "$(grep "^== $t" "$out")"
}

: > "$out"
pair_up
if [ "$PAIR_SIDE" = server ]; then
	ulp_null_blk 1
	NULLB=$ULP_DEV
fi
profile rdma
profile tcp
ulp_cleanup
pair_down
vt_finish
