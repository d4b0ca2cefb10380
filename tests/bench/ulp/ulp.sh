#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The case of tests/bench/ulp.sh (run through tests/vm/pair/run.sh
# --cases-dir): the server guest is the target, the client guest runs fio.
# For this combo's RDMA provider, and with BENCH_ULP_TCP=1 in the combo's
# boot also for the kernel's TCP transports (same guests, same boot):
#  - NVMe over Fabrics (nvmet on a memory-backed null_blk; nvme-rdma, or
#    nvme-tcp): fio 4 KiB random read and write at queue depth 1 and 32,
#    128 KiB sequential read and write (queue depth 8), BENCH_ULP_SECS
#    seconds each (default 10), with the CPU time both guests spent per
#    I/O (/proc/stat, all CPUs, everything but idle and iowait);
#  - NFS (v4.2 over RDMA port 20049, or over TCP): sequential write of a
#    BENCH_ULP_NFS_MB MiB file (default 256; dd, fsync'd) and, after a
#    remount, its sequential read.
# The client writes "TRANSPORT ROW VALUE CPU_CLIENT CPU_SERVER" lines to
# KIWI_RESULTS/PAIR_ID.bench: VALUE in IOPS or MB/s, CPU in microseconds
# per I/O (per MiB for NFS). A failed step records nothing.

. "$KIWI_SRC/tests/vm/pair/lib.bash"
. "$KIWI_SRC/tests/vm/pair/ulp/lib.bash"

secs=${BENCH_ULP_SECS:-10}
nfs_mb=${BENCH_ULP_NFS_MB:-256}
res=$KIWI_RESULTS/$PAIR_ID.bench
transports=("$PAIR_PROV")
[ "$PAIR_COMBO" = kiwi-kiwi ] && transports+=(tcp)

# cpu_busy: jiffies (USER_HZ) all CPUs spent neither idle nor in iowait.
cpu_busy() {
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}

# bench_span NAME CMD...: run CMD on the client between two barriers; both
# guests measure their CPU time across it. Sets SPAN_CPU_CLIENT and
# SPAN_CPU_SERVER (jiffies) on the client; returns CMD's status there.
bench_span() {
	local name=$1 c0 rc=0
	shift
	ulp_step_barrier "$name.start"
	c0=$(cpu_busy)
	[ "$PAIR_SIDE" = client ] && { "$@"; rc=$?; }
	echo $(($(cpu_busy) - c0)) > "$KIWI_SHARED/bench.$PAIR_ID.$name.$PAIR_SIDE"
	ulp_step_barrier "$name.end"
	SPAN_CPU_CLIENT=$(cat "$KIWI_SHARED/bench.$PAIR_ID.$name.client")
	SPAN_CPU_SERVER=$(cat "$KIWI_SHARED/bench.$PAIR_ID.$name.server")
	return "$rc"
}

# record TRANSPORT ROW VALUE UNITS: a result line, CPU per unit of work.
record() {
	local per
	per=$(awk -v c="$SPAN_CPU_CLIENT" -v s="$SPAN_CPU_SERVER" -v n="$4" \
		'BEGIN { if (n > 0) printf "%.1f %.1f", c * 10000 / n, s * 10000 / n; else print "- -" }')
	echo "$1 $2 $3 $per" >> "$res"
	vt_log "$1 $2: $3 (cpu us/unit client server: $per)"
}

# fio_row TRANSPORT ROW RW BS QD: one fio job on the namespace.
fio_row() {
	local t=$1 row=$2 out=$VT_TMP/$1.$2.json v n
	if bench_span "$t.$row" timeout $((secs + 120)) fio --name="$row" \
		--filename="$ULP_DEV" --direct=1 --ioengine=libaio --rw="$3" --bs="$4" \
		--iodepth="$5" --time_based --runtime="$secs" --ramp_time=2 --size=512M \
		--output-format=json --output="$out"; then
		[ "$PAIR_SIDE" = client ] || return 0
		read -r v n < <(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
d = j["read"] if j["read"]["io_bytes"] else j["write"]
bs = int(sys.argv[2])
if bs > 4096:
    print("%.1f %d" % (d["bw_bytes"] / 1e6, d["total_ios"]))
else:
    print("%.0f %d" % (d["iops"], d["total_ios"]))
' "$out" "$(numfmt --from=iec "${4^^}")")
		# CPU per I/O over the whole span (ramp included: its I/Os too).
		n=$(awk -v n="$n" -v s="$secs" 'BEGIN { printf "%d", n * (s + 2) / s }')
		[ -n "$v" ] && record "$t" "$row" "$v" "$n"
	else
		[ "$PAIR_SIDE" = client ] && vt_fail "$t $row: fio failed: $(tail -n 5 "$out" 2>/dev/null)"
	fi
}

nvme_rows() {
	local t=$1 trtype=rdma
	[ "$t" = tcp ] && trtype=tcp
	if [ "$PAIR_SIDE" = server ]; then
		ulp_nvmet_export "$trtype" "$NULLB"
		ulp_step_barrier "$t.nvme.up"
	else
		ulp_step_barrier "$t.nvme.up"
		# Without a namespace the rows fail and record nothing.
		ulp_nvme_connect "$trtype" || ULP_DEV=/dev/null/none
		# Fill the area once so that reads hit written (allocated) blocks.
		fio --name=fill --filename="$ULP_DEV" --direct=1 --ioengine=libaio \
			--rw=write --bs=1M --iodepth=4 --size=512M > /dev/null 2>&1
	fi
	fio_row "$t" nvme.randread.4k.qd1 randread 4k 1
	fio_row "$t" nvme.randwrite.4k.qd1 randwrite 4k 1
	fio_row "$t" nvme.randread.4k.qd32 randread 4k 32
	fio_row "$t" nvme.randwrite.4k.qd32 randwrite 4k 32
	fio_row "$t" nvme.read.128k.qd8 read 128k 8
	fio_row "$t" nvme.write.128k.qd8 write 128k 8
	if [ "$PAIR_SIDE" = client ]; then
		nvme disconnect -n "$ULP_NQN" > /dev/null
	fi
	ulp_step_barrier "$t.nvme.down"
	[ "$PAIR_SIDE" = server ] && ulp_nvmet_port_del "$trtype"
}

# nfs_dd WRITE|READ: one large sequential file over the mount.
nfs_dd() {
	if [ "$1" = write ]; then
		dd if=/dev/zero of="$ULP_MNT/big" bs=1M count="$nfs_mb" conv=fsync status=none
	else
		dd if="$ULP_MNT/big" of=/dev/null bs=1M status=none
	fi
}

nfs_rows() {
	local t=$1 opts="vers=4.2,port=2049,proto=tcp" d
	[ "$t" = tcp ] || opts="vers=4.2,rdma,port=$ULP_NFS_PORT"
	[ "$PAIR_SIDE" = client ] &&
		{ timeout 120 mount -t nfs -o "$opts" "$(ulp_nfs_src 4.2)" "$ULP_MNT" ||
			vt_fail "$t: NFS mount -o $opts"; }
	for d in write read; do
		local t0 t1
		t0=$(date +%s.%N)
		if bench_span "$t.nfs.$d" nfs_dd "$d"; then
			t1=$(date +%s.%N)
			[ "$PAIR_SIDE" = client ] &&
				record "$t" "nfs.$d.seq" "$(awk -v a="$t0" -v b="$t1" -v m="$nfs_mb" \
					'BEGIN { printf "%.1f", m * 1.048576 / (b - a) }')" "$nfs_mb"
		else
			[ "$PAIR_SIDE" = client ] && vt_fail "$t: NFS $d failed"
		fi
		# Read what the server has, not the client's page cache.
		if [ "$PAIR_SIDE" = client ]; then
			umount "$ULP_MNT"
			timeout 120 mount -t nfs -o "$opts" "$(ulp_nfs_src 4.2)" "$ULP_MNT"
		fi
	done
	[ "$PAIR_SIDE" = client ] && { rm -f "$ULP_MNT/big"; umount "$ULP_MNT"; }
	ulp_step_barrier "$t.nfs.down"
}

[ "$PAIR_SIDE" = client ] && : > "$res"
pair_up
if [ "$PAIR_SIDE" = server ]; then
	ulp_null_blk 1
	NULLB=$ULP_DEV
	ulp_nfsd_up
else
	ulp_modprobe rpcrdma nfs nfsv4
	mkdir -p "$ULP_MNT"
fi
for t in "${transports[@]}"; do
	nvme_rows "$t"
	nfs_rows "$t"
done
ulp_cleanup
pair_down
vt_finish
