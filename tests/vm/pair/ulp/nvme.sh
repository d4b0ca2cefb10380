#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NVMe over Fabrics over RDMA: nvmet (configfs) on the server guest exports
# a memory-backed null_blk through an rdma port; the client guest connects
# with nvme-rdma (nvme connect -t rdma) and runs:
#  - fio with verify: 4 KiB random writes at queue depth 1 and 32, 128 KiB
#    sequential writes, every block read back and checked (CRC32C);
#  - ext4 made, written (1 B to 5 MiB files and many small ones),
#    unmounted, checked with fsck, mounted again and compared;
#  - the target's port removed and re-added while a verifying fio runs:
#    the host must reconnect (reconnect_delay 1 s, ctrl_loss_tmo 60 s) and
#    fio's verify still pass;
#  - nvme disconnect.
# ULP_SMOKE=1 (make test): QD 32 and sequential fio, ext4 with 20 small
# files, no QD 1 run and no port removal.

. "$KIWI_SRC/tests/vm/pair/lib.bash"
. "$KIWI_SRC/tests/vm/pair/ulp/lib.bash"

# Data written (and read back) by each fio job: QD1, QD32, sequential, and
# across the port removal. Under TCG a QD1 I/O takes about 50 ms with any
# transport (nvme-tcp too), so QD1 stays small.
case "$PAIR_MODE" in
quick) sz=(512K 8M 16M 8M) ;;
full) sz=(8M 64M 128M 64M) ;;
*) sz=(2M 16M 32M 16M) ;;
esac

nvme_target() {
	ulp_null_blk 1
	ulp_nvmet_export rdma "$ULP_DEV"
	vt_pass "nvmet: $ULP_NQN exports $ULP_DEV on rdma $KIWI_MY_IP:$(ulp_nvme_svcid rdma)"
	ulp_step_barrier target-up
	[ "$ULP_SMOKE" = 1 ] || ulp_nvmet_port_cycle
	ulp_step_barrier host-done 600
	ulp_cleanup
}

nvme_host() {
	local dev='' small=200
	[ "$ULP_SMOKE" = 1 ] && small=20
	ulp_step_barrier target-up
	if ulp_nvme_connect rdma --ctrl-loss-tmo=60 --reconnect-delay=1; then
		dev=$ULP_DEV
		[ "$ULP_SMOKE" = 1 ] ||
			ulp_fio fio.rand4k.qd1 300 "$dev" --rw=randwrite --bs=4k --iodepth=1 \
				--size="${sz[0]}"
		ulp_fio fio.rand4k.qd32 300 "$dev" --rw=randwrite --bs=4k --iodepth=32 \
			--size="${sz[1]}" --offset=64M
		ulp_fio fio.seq128k 300 "$dev" --rw=write --bs=128k --iodepth=8 \
			--size="${sz[2]}" --offset=128M
		ULP_SMALL_FILES=$small ulp_fs_check ext4 "$dev"
	fi
	[ "$ULP_SMOKE" = 1 ] || ulp_nvme_port_cycle "$dev" "${sz[3]}" 8
	[ -z "$dev" ] || ulp_nvme_disconnect
	ulp_cleanup
	ulp_step_barrier host-done
}

pair_up
if [ "$PAIR_SIDE" = server ]; then
	nvme_target
else
	nvme_host
fi
pair_down
vt_finish
