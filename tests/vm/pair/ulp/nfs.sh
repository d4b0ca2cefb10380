#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NFS over RDMA: nfsd on the server guest exports a tmpfs with an RDMA
# listener on port 20049 (next to TCP 2049, which NFSv3's MOUNT protocol
# and the server's mountd use); the client guest mounts it with
# `-o rdma,port=20049`, NFSv3 and then NFSv4.2, and for each:
#  - the mount really is RDMA (proto=rdma in /proc/mounts);
#  - files from 1 B to 9 MiB (beyond kiwi's 2 MiB fast-register page
#    list) and 200 small files are written, the export unmounted, mounted
#    again and every file read back and compared by SHA-256, on the client
#    and against the server's own checksums of what it stored;
#  - umount/mount cycles, each reading a file back.
# ULP_SMOKE=1 (make test): NFSv4.2 only, 20 small files, one remount.

. "$KIWI_SRC/tests/vm/pair/lib.bash"
. "$KIWI_SRC/tests/vm/pair/ulp/lib.bash"

cycles=3 versions="3 4.2" small=200
[ "$PAIR_MODE" = quick ] && cycles=2
[ "$PAIR_MODE" = full ] && cycles=10
[ "$ULP_SMOKE" = 1 ] && cycles=1 versions=4.2 small=20

nfs_target() {
	local v
	ulp_nfsd_up
	ulp_step_barrier nfsd-up
	for v in $versions; do
		ulp_step_barrier "nfs$v.written" 600
		(cd "$ULP_EXPORT" && find . -type f -print0 | sort -z | xargs -0 sha256sum) \
			> "$KIWI_SHARED/nfs.$PAIR_ID.$v.server-sums"
		ulp_step_barrier "nfs$v.summed"
		ulp_step_barrier "nfs$v.done" 600
		rm -rf "${ULP_EXPORT:?}"/*
	done
	ulp_cleanup
}

# nfs_mount VERS: mount the peer's export over RDMA.
nfs_mount() {
	timeout 120 mount -t nfs -o "rdma,port=$ULP_NFS_PORT,vers=$1,nolock" \
		"$(ulp_nfs_src "$1")" "$ULP_MNT" > "$VT_TMP/mount.out" 2>&1
}

nfs_client_version() {
	local v=$1 sums i ok=1
	if ! nfs_mount "$v"; then
		vt_fail "mount NFSv$v over RDMA: $(cat "$VT_TMP/mount.out")"
		ok=0
	fi
	if [ "$ok" = 1 ]; then
		ulp_on_exit "timeout 60 umount -f -l $ULP_MNT"
		if grep -E " $ULP_MNT nfs4? " /proc/mounts | grep -q 'proto=rdma'; then
			vt_pass "NFSv$v mounted over RDMA: $(grep " $ULP_MNT " /proc/mounts | cut -d' ' -f4 | tr ',' '\n' | grep -E '^(vers|proto|port|rsize|wsize)=' | tr '\n' ' ')"
		else
			vt_fail "NFSv$v mount is not RDMA: $(grep " $ULP_MNT " /proc/mounts)"
		fi
		ULP_SMALL_FILES=$small ulp_write_tree "$ULP_MNT" 2> "$VT_TMP/write.err" ||
			vt_fail "NFSv$v: writing files: $(tail -n 3 "$VT_TMP/write.err")"
		head -c 9437187 /dev/urandom > "$ULP_MNT/size-9437187" ||
			vt_fail "NFSv$v: writing a 9 MiB file"
		sums=$(cd "$ULP_MNT" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
		umount "$ULP_MNT" || vt_fail "NFSv$v: umount"
	fi
	ulp_step_barrier "nfs$v.written"
	ulp_step_barrier "nfs$v.summed"
	if [ "$ok" = 1 ]; then
		if [ "$(cat "$KIWI_SHARED/nfs.$PAIR_ID.$v.server-sums")" = "$sums" ]; then
			vt_pass "NFSv$v: the server stored every file as written ($(wc -l <<< "$sums") files)"
		else
			vt_fail "NFSv$v: the server's files differ from what the client wrote"
		fi
		for ((i = 1; i <= cycles; i++)); do
			if ! nfs_mount "$v"; then
				vt_fail "NFSv$v: mount cycle $i: $(cat "$VT_TMP/mount.out")"
				break
			fi
			if [ "$i" = 1 ]; then
				if [ "$(cd "$ULP_MNT" && find . -type f -print0 | sort -z | xargs -0 sha256sum)" = "$sums" ]; then
					vt_pass "NFSv$v: every file read back intact after a remount"
				else
					vt_fail "NFSv$v: files read back differ"
				fi
			elif ! sha256sum "$ULP_MNT/size-9437187" | grep -q "$(grep size-9437187 <<< "$sums" | cut -d' ' -f1)"; then
				vt_fail "NFSv$v: mount cycle $i: the 9 MiB file differs"
			fi
			umount "$ULP_MNT" || { vt_fail "NFSv$v: umount in cycle $i"; break; }
		done
		[ "$i" -gt "$cycles" ] && vt_pass "NFSv$v: $cycles umount/mount cycles"
	fi
	ulp_step_barrier "nfs$v.done"
}

nfs_client() {
	local v
	ulp_modprobe rpcrdma nfs nfsv3 nfsv4
	mkdir -p "$ULP_MNT"
	ulp_step_barrier nfsd-up
	for v in $versions; do
		nfs_client_version "$v"
	done
	ulp_cleanup
}

pair_up
if [ "$PAIR_SIDE" = server ]; then
	nfs_target
else
	nfs_client
fi
pair_down
vt_finish
