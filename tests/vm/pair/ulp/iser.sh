#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# iSER: LIO (configured with targetcli) on the server guest exports a
# ramdisk LUN through an iSER-enabled portal; open-iscsi on the client
# guest, with the iser interface:
#  - SendTargets discovery, login (the session's transport must be iser);
#  - fio with verify on the disk; ext4 made, written, unmounted, checked
#    with fsck and read back;
#  - logout, login again: the files are still there and intact; logout.
# ULP_SMOKE=1 (make test): random-write fio, ext4 with 20 small files and
# one logout; no sequential fio and no second login.

. "$KIWI_SRC/tests/vm/pair/lib.bash"
. "$KIWI_SRC/tests/vm/pair/ulp/lib.bash"

sz=16
[ "$PAIR_MODE" = quick ] && sz=8
[ "$PAIR_MODE" = full ] && sz=128

iser_target() {
	ulp_lio_up
	ulp_step_barrier lio-up
	ulp_step_barrier iser-done 900
	ulp_cleanup
}

# iser_login: log in to ULP_IQN over iSER; the disk in ULP_DEV.
iser_login() {
	ulp_run "iscsiadm login$1" 120 iscsiadm -m node -T "$ULP_IQN" \
		-p "$KIWI_PEER_IP:$ULP_ISCSI_PORT" -I iser --login || return 1
	ulp_on_exit "timeout 60 iscsiadm -m node -T $ULP_IQN --logout"
	if ! ulp_wait 60 ulp_iser_disk; then
		vt_fail "no SCSI disk after login$1"
		return 1
	fi
	ulp_iser_disk
	if iscsiadm -m session -P 1 | grep -q 'Iface Transport: iser'; then
		vt_pass "session$1 over iSER: $ULP_DEV"
	else
		vt_fail "session$1 is not iSER: $(iscsiadm -m session -P 1 | grep Transport)"
	fi
}

# iser_relogin: logout and login again; ext4's files must be intact.
iser_relogin() {
	local mnt=$ULP_MNT.fs sums
	mkdir -p "$mnt"
	mount "$ULP_DEV" "$mnt" &&
		sums=$(cd "$mnt" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
	umount "$mnt"
	ulp_run "iscsiadm logout" 120 iscsiadm -m node -T "$ULP_IQN" --logout
	if iser_login " again"; then
		mount "$ULP_DEV" "$mnt" || vt_fail "mount after the second login"
		if [ -n "$sums" ] &&
			[ "$(cd "$mnt" && find . -type f -print0 | sort -z | xargs -0 sha256sum)" = "$sums" ]; then
			vt_pass "files intact after logout and login"
		else
			vt_fail "files differ after logout and login"
		fi
		umount "$mnt"
		ulp_run "iscsiadm logout again" 120 iscsiadm -m node -T "$ULP_IQN" --logout
	fi
}

iser_initiator() {
	local small=200
	[ "$ULP_SMOKE" = 1 ] && small=20
	ulp_iscsid_up
	ulp_step_barrier lio-up
	if ulp_run discovery 120 iscsiadm -m discovery -t st -p "$KIWI_PEER_IP:$ULP_ISCSI_PORT" -I iser &&
		grep -q "$ULP_IQN" "$VT_TMP/discovery.out" && iser_login ""; then
		ulp_fio fio.rand4k.qd16 300 "$ULP_DEV" --rw=randwrite --bs=4k --iodepth=16 --size="${sz}M"
		[ "$ULP_SMOKE" = 1 ] ||
			ulp_fio fio.seq128k 300 "$ULP_DEV" --rw=write --bs=128k --iodepth=4 --size="$((sz * 2))M" --offset=64M
		ULP_SMALL_FILES=$small ulp_fs_check ext4 "$ULP_DEV"
		if [ "$ULP_SMOKE" = 1 ]; then
			ulp_run "iscsiadm logout" 120 iscsiadm -m node -T "$ULP_IQN" --logout
		else
			iser_relogin
		fi
	fi
	ulp_cleanup
	ulp_step_barrier iser-done
}

pair_up
if [ "$PAIR_SIDE" = server ]; then
	iser_target
else
	iser_initiator
fi
pair_down
vt_finish
