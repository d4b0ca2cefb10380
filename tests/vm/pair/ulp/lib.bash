# SPDX-License-Identifier: GPL-2.0
#
# Guest-side helpers of the kernel ULP cases (tests/vm/pair/ulp/*.sh):
# NVMe over Fabrics, NFS over RDMA and iSER between the lab's server guest
# (the target: nvmet, nfsd, LIO) and client guest (the initiator: nvme-rdma,
# the NFS client with rpcrdma, ib_iser). Sourced after
# tests/vm/pair/lib.bash (pair_up, pair_barrier, vt_*).
#
# Every helper that sets something up registers its teardown with
# ulp_on_exit, so that a case that fails half-way leaves no session, mount
# or target behind for the next case of the same boot (the next case
# unloads the RDMA provider, which the ULPs must have let go of).

ULP_NQN=nqn.2024-01.org.kiwi:ulp
ULP_IQN=iqn.2024-01.org.kiwi:ulp
ULP_NFS_PORT=20049
ULP_ISCSI_PORT=3260
ULP_EXPORT=/srv/kiwi-ulp
# The export is NFSv4's pseudo root (fsid=0): the guest's / is an overlay,
# which cannot be exported, so NFSv4 could not walk down to ULP_EXPORT.
ULP_NFS4_PATH=/
ULP_MNT=/mnt/kiwi-ulp
# 1: the smoke version of each case that make test runs (check-pair-ci's
# soak boot, tests/vm/pair/ci.sh): the ULP carries verified data both ways
# and lets go of the device, in a fraction of the quick run's time; each
# case says what it leaves out. Set by the host (run.sh passes ULP_*).
ULP_SMOKE=${ULP_SMOKE:-0}

# Teardown steps, run last-registered first by ulp_cleanup (EXIT trap).
ULP_EXIT=()

ulp_on_exit() {
	ULP_EXIT+=("$*")
}

ulp_cleanup() {
	local i
	for ((i = ${#ULP_EXIT[@]} - 1; i >= 0; i--)); do
		eval "${ULP_EXIT[$i]}" > /dev/null 2>&1
	done
	ULP_EXIT=()
}

ulp_exit_trap() {
	ulp_cleanup
	pair_exit_trap
}
trap ulp_exit_trap EXIT

# ulp_run NAME LIMIT CMD...: run CMD with a time limit, its output in
# $VT_TMP/NAME.out; pass or fail NAME by its exit status. Returns it.
ulp_run() {
	local name=$1 limit=$2 t0 rc
	shift 2
	t0=$EPOCHSECONDS
	timeout -k 10 "$limit" "$@" > "$VT_TMP/$name.out" 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then
		vt_pass "$name ($((EPOCHSECONDS - t0)) s)"
	else
		vt_fail "$name: exit $rc$([ "$rc" = 124 ] && echo ", timed out after $limit s"): $*"
		sed 's/^/    | /' "$VT_TMP/$name.out" | tail -n 30
	fi
	return "$rc"
}

# ulp_wait SECONDS CMD...: poll CMD every 0.2 s until it succeeds.
ulp_wait() {
	local i limit=$(($1 * 5))
	shift
	for ((i = 0; i < limit; i++)); do
		"$@" > /dev/null 2>&1 && return 0
		vt_nap 0.2
	done
	return 1
}

# ulp_configfs: configfs mounted (nvmet and LIO live there). Debian builds
# it as a module, which the lab's early mount cannot load.
ulp_configfs() {
	mountpoint -q /sys/kernel/config && return 0
	if ! modprobe configfs || ! mount -t configfs configfs /sys/kernel/config; then
		vt_die "cannot mount configfs"
	fi
}

# ulp_modprobe MODULE...: load ULP modules or stop the case.
ulp_modprobe() {
	local m
	for m in "$@"; do
		modprobe "$m" || vt_die "modprobe $m failed"
	done
}

# ulp_peer_ok: the initiator side of a step may start (the target is up).
# ulp_target_wait: the target keeps its export until the initiator is done.
ulp_step_barrier() {
	pair_barrier "$1" "${2:-300}" || vt_die "the peer guest did not reach '$1'"
}

# --- block devices (target side) ---

# ulp_null_blk GB: a memory-backed null_blk of GB GiB (pages are allocated
# as they are written); its path in ULP_DEV. Memory-backed, so that what is
# written reads back (fio verify).
ulp_null_blk() {
	modprobe null_blk nr_devices=1 gb="$1" bs=4096 memory_backed=1 queue_mode=2 ||
		vt_die "modprobe null_blk failed"
	ulp_on_exit "timeout 60 modprobe -r null_blk"
	ULP_DEV=/dev/nullb0
	ulp_wait 10 test -b "$ULP_DEV" || vt_die "no $ULP_DEV"
}

# --- NVMe over Fabrics ---

NVMET_CFG=/sys/kernel/config/nvmet

# ulp_nvmet_export TRTYPE DEV: export DEV as namespace 1 of ULP_NQN on a
# port of transport TRTYPE (rdma | tcp) at this guest's address.
ulp_nvmet_export() {
	local trtype=$1 dev=$2 s=$NVMET_CFG/subsystems/$ULP_NQN
	ulp_configfs
	ulp_modprobe nvmet "nvmet-$trtype"
	if [ ! -d "$s" ]; then
		mkdir "$s" || vt_die "cannot create nvmet subsystem $ULP_NQN"
		ulp_on_exit "rmdir $s"
		echo 1 > "$s/attr_allow_any_host"
		mkdir "$s/namespaces/1"
		ulp_on_exit "echo 0 > $s/namespaces/1/enable; rmdir $s/namespaces/1"
		echo "$dev" > "$s/namespaces/1/device_path"
		echo 1 > "$s/namespaces/1/enable" || vt_die "cannot enable namespace $dev"
	fi
	ulp_nvmet_port_add "$trtype"
}

# ulp_nvme_svcid TRTYPE: the TCP port of TRTYPE's listener. rdma and tcp
# differ: over iWARP an RDMA listener is a TCP listener too.
ulp_nvme_svcid() {
	case "$1" in
	rdma) echo 4420 ;;
	tcp) echo 4421 ;;
	esac
}

# ulp_nvmet_port_id TRTYPE: the nvmet port number used for TRTYPE.
ulp_nvmet_port_id() {
	case "$1" in
	rdma) echo 1 ;;
	tcp) echo 2 ;;
	esac
}

# ulp_nvmet_port_add TRTYPE [ID ADDR]: create the port (number ID, default
# ulp_nvmet_port_id's, at ADDR, default this guest's) and link the
# subsystem to it.
ulp_nvmet_port_add() {
	local trtype=$1 id=${2:-$(ulp_nvmet_port_id "$1")} addr=${3:-$KIWI_MY_IP} p
	p=$NVMET_CFG/ports/$id
	if [ ! -d "$p" ]; then
		mkdir "$p" || vt_die "cannot create nvmet port $p"
		ulp_on_exit "ulp_nvmet_port_del $trtype $id"
		echo "$trtype" > "$p/addr_trtype"
		echo ipv4 > "$p/addr_adrfam"
		echo "$addr" > "$p/addr_traddr"
		ulp_nvme_svcid "$trtype" > "$p/addr_trsvcid"
	fi
	ln -s "$NVMET_CFG/subsystems/$ULP_NQN" "$p/subsystems/$ULP_NQN" ||
		vt_die "cannot link $ULP_NQN to the $trtype port"
}

# ulp_nvmet_port_del TRTYPE [ID]: unlink the subsystem and remove the port.
ulp_nvmet_port_del() {
	local p
	p=$NVMET_CFG/ports/${2:-$(ulp_nvmet_port_id "$1")}
	[ -d "$p" ] || return 0
	rm -f "$p/subsystems/$ULP_NQN"
	rmdir "$p"
}

# ulp_nvmet_port_cycle: once the host runs I/O, the target's rdma port is
# removed and, 5 s later, added again (the host must reconnect).
ulp_nvmet_port_cycle() {
	ulp_step_barrier io-running 600
	ulp_nvmet_port_del rdma || vt_fail "removing the nvmet rdma port"
	vt_pass "nvmet: port removed while the host writes"
	sleep 5
	ulp_nvmet_port_add rdma
	vt_pass "nvmet: port added again"
	ulp_step_barrier port-back
}

# ulp_nvme_port_cycle DEV SIZE IODEPTH: the host's side of
# ulp_nvmet_port_cycle: a verifying fio of SIZE at 256 MiB into DEV runs
# across the port's removal and must pass, and the host must have
# reconnected. DEV empty (not connected): the barriers only.
ulp_nvme_port_cycle() {
	local dev=$1 fio_pid rc
	if [ -n "$dev" ]; then
		fio --name=reconnect --filename="$dev" --direct=1 --ioengine=libaio \
			--verify=crc32c --verify_fatal=1 --rw=randwrite --bs=4k \
			--iodepth="$3" --size="$2" --offset=256M \
			> "$VT_TMP/fio.reconnect.out" 2>&1 &
		fio_pid=$!
		sleep 2
	fi
	ulp_step_barrier io-running
	ulp_step_barrier port-back 120
	[ -n "${fio_pid:-}" ] || return 0
	timeout 240 tail --pid="$fio_pid" -f /dev/null
	wait "$fio_pid"
	rc=$?
	if [ "$rc" = 0 ]; then
		vt_pass "fio.reconnect: writes verified across the port removal"
	else
		vt_fail "fio.reconnect: exit $rc"
		sed 's/^/    | /' "$VT_TMP/fio.reconnect.out" | tail -n 30
	fi
	if dmesg | grep -qE 'nvme[0-9]+: Successfully reconnected'; then
		vt_pass "host reconnected: $(dmesg | grep -E 'Successfully reconnected' | tail -n 1 | sed 's/^\[[^]]*\] //')"
	else
		vt_fail "no 'Successfully reconnected' from the NVMe host"
	fi
}

# ulp_nvme_dev: the block device of namespace 1 of ULP_NQN on this host.
ulp_nvme_dev() {
	local c ns
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/subsysnqn" ] || continue
		[ "$(cat "$c/subsysnqn")" = "$ULP_NQN" ] || continue
		for ns in "$c"/nvme*n1 /sys/block/nvme*c*n1; do
			[ -e "$ns" ] || continue
			echo "/dev/$(basename "$ns" | sed 's/c[0-9]*n/n/')"
			return 0
		done
	done
	return 1
}

# ulp_nvme_connect TRTYPE [nvme connect options]: connect to the peer's
# ULP_NQN (at ULP_NVME_PEER, default the peer's eth0 address); the
# namespace's block device in ULP_DEV.
ulp_nvme_connect() {
	local trtype=$1 peer=${ULP_NVME_PEER:-$KIWI_PEER_IP}
	shift
	ulp_modprobe "nvme-$trtype"
	ulp_on_exit "timeout 60 nvme disconnect -n $ULP_NQN"
	if ! timeout 120 nvme connect -t "$trtype" -a "$peer" -s "$(ulp_nvme_svcid "$trtype")" \
		-n "$ULP_NQN" "$@" > "$VT_TMP/nvme-connect.out" 2>&1; then
		vt_fail "nvme connect -t $trtype -a $peer $*:"
		sed 's/^/    | /' "$VT_TMP/nvme-connect.out"
		return 1
	fi
	ulp_wait 30 ulp_nvme_dev || { vt_fail "no namespace after nvme connect"; return 1; }
	ULP_DEV=$(ulp_nvme_dev)
	ulp_wait 30 test -b "$ULP_DEV" || { vt_fail "no $ULP_DEV"; return 1; }
	vt_pass "nvme connect -t $trtype: $ULP_DEV"
}

# ulp_nvme_disconnect [LABEL]: nvme disconnect from ULP_NQN; the controller
# must be gone within 30 s.
ulp_nvme_disconnect() {
	local label=${1:+ ($1)}
	ulp_run "nvme disconnect$label" 60 nvme disconnect -n "$ULP_NQN"
	ulp_wait 30 sh -c "! ls /sys/class/nvme/nvme* >/dev/null 2>&1" ||
		vt_fail "controller still present after nvme disconnect$label"
}

# --- fio ---

# ulp_fio NAME LIMIT DEV FIO-OPTIONS...: one fio job on DEV (direct I/O,
# libaio) whose data is verified: fio writes a pattern with a CRC32C
# header per block and reads every block back.
ulp_fio() {
	local name=$1 limit=$2 dev=$3
	shift 3
	ulp_run "$name" "$limit" fio --name="$name" --filename="$dev" --direct=1 \
		--ioengine=libaio --verify=crc32c --verify_fatal=1 \
		--do_verify=1 --output-format=normal "$@"
}

# ulp_fs_check NAME DEV: mkfs.ext4, mount, write files, unmount, fsck,
# mount again and compare every file's checksum.
ulp_fs_check() {
	local name=$1 dev=$2 mnt=$ULP_MNT.fs sums
	mkdir -p "$mnt"
	ulp_run "$name.mkfs" 120 mkfs.ext4 -q -F "$dev" || return 1
	ulp_run "$name.mount" 60 mount "$dev" "$mnt" || return 1
	ulp_on_exit "timeout 60 umount -l $mnt"
	ulp_write_tree "$mnt" 2> "$VT_TMP/$name.write.err" ||
		vt_fail "$name: writing files failed: $(tail -n 3 "$VT_TMP/$name.write.err")"
	sums=$(cd "$mnt" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
	ulp_run "$name.umount" 60 umount "$mnt" || return 1
	ulp_run "$name.fsck" 120 fsck.ext4 -f -n "$dev" || return 1
	ulp_run "$name.remount" 60 mount "$dev" "$mnt" || return 1
	if [ "$(cd "$mnt" && find . -type f -print0 | sort -z | xargs -0 sha256sum)" = "$sums" ]; then
		vt_pass "$name: $(wc -l <<< "$sums") files read back after fsck"
	else
		vt_fail "$name: files differ after unmount, fsck and mount"
	fi
	umount "$mnt"
}

# ulp_write_tree DIR: files of awkward sizes (1 B to 5 MiB, beyond a
# 2 MiB fast-register page list) and a directory of ULP_SMALL_FILES
# (default 200) small ones. The small files are slices of one random
# text written by bash itself: a process per file costs about 80 ms in a
# TCG guest, which made this loop most of a case's time.
ulp_write_tree() {
	local dir=$1 s i text
	for s in 1 511 4095 4097 65537 1048576 2097153 5242881; do
		head -c "$s" /dev/urandom > "$dir/size-$s" || return 1
	done
	mkdir -p "$dir/small"
	text=$(head -c 4800 /dev/urandom | base64 -w 0)
	for ((i = 0; i < ${ULP_SMALL_FILES:-200}; i++)); do
		printf '%s' "${text:i * 53 % 3400:i * 37 % 3000 + 1}" > "$dir/small/f$i" ||
			return 1
	done
	sync
}

# --- NFS over RDMA ---

# ulp_nfs_src VERS: the peer's export as NFS version VERS mounts it.
ulp_nfs_src() {
	case "$1" in
	4*) echo "$KIWI_PEER_IP:$ULP_NFS4_PATH" ;;
	*) echo "$KIWI_PEER_IP:$ULP_EXPORT" ;;
	esac
}

# ulp_daemon NAME CMD...: start a daemon in the foreground mode of CMD in
# the background, in a session of its own (iscsid signals its whole
# process group when it stops); it is stopped (by its PID) when the case
# ends.
ulp_daemon() {
	local name=$1
	shift
	setsid "$@" > "$VT_TMP/$name.log" 2>&1 < /dev/null &
	ulp_on_exit "kill $!; timeout 30 tail --pid=$! -f /dev/null"
}

# ulp_nfsd_up: nfsd exporting a tmpfs at ULP_EXPORT to the peer, TCP 2049
# and RDMA ULP_NFS_PORT listeners.
# Without systemd in the guest the daemons are started by hand: rpcbind
# (NFSv3 registers with it), mountd (export upcalls, NFSv3 MOUNT).
ulp_nfsd_up() {
	ulp_modprobe nfsd rpcrdma
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd ||
		vt_die "cannot mount the nfsd filesystem"
	mkdir -p "$ULP_EXPORT" /run/rpcbind /var/lib/nfs/v4recovery
	mount -t tmpfs -o size=512m tmpfs "$ULP_EXPORT" || vt_die "cannot mount a tmpfs to export"
	ulp_on_exit "timeout 60 umount -l $ULP_EXPORT"
	ulp_daemon rpcbind rpcbind -f -w
	ulp_wait 10 rpcinfo -p 127.0.0.1 || vt_die "rpcbind did not start"
	# A short grace period: NFSv4 OPENs wait for it after nfsd starts.
	echo 10 > /proc/fs/nfsd/nfsv4leasetime
	echo 10 > /proc/fs/nfsd/nfsv4gracetime
	exportfs -o rw,no_root_squash,no_subtree_check,insecure,fsid=0 \
		"$KIWI_PEER_IP:$ULP_EXPORT" || vt_die "exportfs failed"
	ulp_on_exit "timeout 60 exportfs -ua"
	ulp_daemon mountd rpc.mountd -F
	rpc.nfsd 4 || vt_die "rpc.nfsd failed"
	ulp_on_exit "timeout 60 rpc.nfsd 0"
	echo "rdma $ULP_NFS_PORT" > /proc/fs/nfsd/portlist ||
		vt_die "cannot add the RDMA listener (port $ULP_NFS_PORT) to nfsd"
	vt_pass "nfsd: $ULP_EXPORT exported, listeners: $(tr '\n' ' ' < /proc/fs/nfsd/portlist)"
}

# --- iSER ---

# ulp_targetcli NAME CMDS: run targetcli once over the command lines CMDS
# (one Python start under TCG costs seconds).
ulp_targetcli() {
	local name=$1
	shift
	printf '%s\n' "$@" exit > "$VT_TMP/$name.tcl"
	ulp_run "$name" 180 sh -c "targetcli < $VT_TMP/$name.tcl"
}

# ulp_lio_up: LIO exports a 256 MiB ramdisk LUN as ULP_IQN through an
# iSER-enabled portal on every address, port ULP_ISCSI_PORT.
#
# LIO opens an iSCSI/TCP listener on every portal and adds the iSER one
# beside it on the same address and port. Over a software iWARP device
# (kiwi, siw) an RDMA listener is a TCP listener of the host's stack, so
# the two collide (EADDRINUSE). The portal is therefore created from a
# network namespace of its own: its TCP listener lives there, unreachable,
# and the iSER listener, which isert always opens in the initial
# namespace, gets the port (Documentation/ulps.md).
ulp_lio_up() {
	local t=/iscsi/$ULP_IQN/tpg1 np
	np=/sys/kernel/config/target/iscsi/$ULP_IQN/tpgt_1/np/0.0.0.0:$ULP_ISCSI_PORT
	ulp_configfs
	ulp_modprobe target_core_mod iscsi_target_mod ib_isert
	# targetcli asks the system D-Bus for tcmu-runner's backstores and
	# fails without one.
	# The socket of an earlier case's daemon may be left behind.
	mkdir -p /run/dbus
	rm -f /run/dbus/system_bus_socket
	ulp_daemon dbus dbus-daemon --system --nofork --nopidfile
	ulp_wait 10 test -S /run/dbus/system_bus_socket || vt_die "no system D-Bus for targetcli"
	ulp_on_exit "timeout 120 targetcli clearconfig confirm=True"
	ulp_targetcli lio.setup \
		"set global auto_add_default_portal=false auto_save_on_exit=false auto_cd_after_create=false" \
		"/backstores/ramdisk create name=ulp size=256M" \
		"/iscsi create $ULP_IQN" \
		"$t/luns create /backstores/ramdisk/ulp" \
		"$t set attribute authentication=0 demo_mode_write_protect=0 generate_node_acls=1 cache_dynamic_acls=1" ||
		vt_die "LIO setup failed"
	ulp_run lio.portal 120 unshare --net targetcli "$t/portals create 0.0.0.0 $ULP_ISCSI_PORT" ||
		vt_die "LIO: cannot create the portal"
	ulp_run lio.iser 120 targetcli "$t/portals/0.0.0.0:$ULP_ISCSI_PORT enable_iser true" ||
		vt_die "LIO: cannot enable iSER on the portal"
	[ "$(cat "$np/iser")" = 1 ] || vt_die "the portal is not iSER-enabled"
	vt_pass "LIO: $ULP_IQN on an iSER portal 0.0.0.0:$ULP_ISCSI_PORT"
}

# ulp_iscsid_up: the open-iscsi daemon (no systemd in the guest). sd_mod is
# loaded by hand too: without udev nothing loads it for the new LUN.
ulp_iscsid_up() {
	ulp_modprobe ib_iser sd_mod
	mkdir -p /run/lock/iscsi /var/lib/iscsi
	ulp_daemon iscsid iscsid -f
	ulp_wait 30 sh -c "iscsiadm -m session 2>&1 | grep -q 'No active sessions'" ||
		vt_die "iscsid did not start: $(cat "$VT_TMP/iscsid.log")"
	ulp_on_exit "timeout 60 iscsiadm -m node -o delete"
}

# ulp_iser_disk: the SCSI disk of the iSER session to ULP_IQN, in ULP_DEV.
ulp_iser_disk() {
	local d
	d=$(iscsiadm -m session -P 3 2>/dev/null | awk '/Attached scsi disk/ { print $4; exit }')
	[ -n "$d" ] && [ -b "/dev/$d" ] || return 1
	ULP_DEV=/dev/$d
}

# --- device removal (nvme-removal.sh, nfs-removal.sh; kiwi on eth0) ---

# How long `rdma link delete` and `modprobe -r kiwi` may take with a ULP
# attached (they took 0-1 s each under TCG).
ULP_RM_LIMIT=60

# ulp_rm_timed NAME LIMIT CMD...: an action that must end within LIMIT s.
ulp_rm_timed() {
	local name=$1 limit=$2 t0 rc
	shift 2
	t0=$EPOCHSECONDS
	timeout -k 10 "$limit" "$@" > "$VT_TMP/$name.out" 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then
		vt_pass "$name: '$*' took $((EPOCHSECONDS - t0)) s"
	else
		vt_fail "$name: '$*' exit $rc after $((EPOCHSECONDS - t0)) s: $(head -c 300 "$VT_TMP/$name.out")"
	fi
	return "$rc"
}

# ulp_rm_gone STEP WHAT DEV CMD...: CMD ends in time (checked as STEP.WHAT),
# and the RDMA device DEV left the RDMA core with it.
ulp_rm_gone() {
	local step=$1 what=$2 dev=$3
	shift 3
	ulp_rm_timed "$step.$what" "$ULP_RM_LIMIT" "$@"
	if ulp_wait 30 test ! -e "/sys/class/infiniband/$dev"; then
		vt_pass "$step: $dev gone after '$*'"
	else
		vt_fail "$step: $dev still registered 30 s after '$*'"
	fi
}

# ulp_rm_delete STEP: `rdma link delete` in time, and the device left the
# RDMA core.
ulp_rm_delete() {
	ulp_rm_gone "$1" delete "$PAIR_DEV" rdma link delete "$PAIR_DEV"
}

# ulp_rm_unload STEP: modprobe -r kiwi (no ULP holds it any more), in time.
ulp_rm_unload() {
	ulp_rm_timed "$1.unload" "$ULP_RM_LIMIT" modprobe -r kiwi
	if [ -d /sys/module/kiwi ]; then
		vt_fail "$1: kiwi still loaded (refcnt $(cat /sys/module/kiwi/refcnt))"
	else
		vt_pass "$1: kiwi unloaded"
	fi
}

# ulp_rm_dev_add STEP: kiwi loaded and bound to eth0 again.
ulp_rm_dev_add() {
	local out
	[ -d /sys/module/kiwi ] || pair_load_kiwi
	ulp_trace_again
	if ! out=$(timeout 60 rdma link add "$PAIR_DEV" type kiwi netdev eth0 2>&1); then
		vt_fail "$1: rdma link add $PAIR_DEV again: $out"
		return 1
	fi
	vt_pass "$1: $PAIR_DEV added again"
}

# ulp_rm_port_state STEP STATE: the port reaches STATE within 10 s.
ulp_rm_port_state() {
	if ulp_wait 10 sh -c "rdma link show $PAIR_DEV/1 | grep -q 'state $2 '"; then
		vt_pass "$1: port $2"
	else
		vt_fail "$1: port not $2: $(rdma link show "$PAIR_DEV/1")"
	fi
}

# ulp_rm_link_down STEP: eth0 down for 5 s, then up again.
ulp_rm_link_down() {
	ip link set eth0 down
	ulp_rm_port_state "$1" DOWN
	sleep 5
	ip link set eth0 up
	ulp_rm_port_state "$1" ACTIVE
}

# ulp_rm_qps [DEV]: how many QPs device DEV (default this guest's PAIR_DEV)
# has, kernel ones included.
ulp_rm_qps() {
	rdma resource show qp link "${1:-$PAIR_DEV}/1" 2> /dev/null | grep -c lqpn
}

# ulp_rm_has_qps STEP [DEV]: the ULP holds QPs of DEV (default PAIR_DEV)
# now, so that a later ulp_rm_no_qps has something to see go.
ulp_rm_has_qps() {
	local n dev=${2:-$PAIR_DEV}
	n=$(ulp_rm_qps "$dev")
	if [ "$n" -gt 0 ]; then
		vt_pass "$1: the ULP holds $n QPs of $dev"
	else
		vt_fail "$1: no QP on $dev although the ULP is connected"
	fi
}

# ulp_rm_qps_gone [DEV]: device DEV (default PAIR_DEV) holds no QP.
ulp_rm_qps_gone() {
	[ "$(ulp_rm_qps "$@")" = 0 ]
}

# ulp_rm_no_qps STEP [DEV]: every kernel QP of DEV (default PAIR_DEV) was
# released.
ulp_rm_no_qps() {
	local dev=${2:-$PAIR_DEV}
	if ulp_wait 60 ulp_rm_qps_gone "$dev"; then
		vt_pass "$1: every QP of $dev released"
	else
		vt_fail "$1: QPs left 60 s later: $(rdma resource show qp link "$dev/1" | head -n 5)"
	fi
}

# A second RDMA device of this guest's provider on a VLAN of eth0
# (ULP_VLAN, 10.77.7.0/24, the last byte of eth0's address), so that its
# net_device can be unregistered without cutting the guests apart. The
# VLAN has a MAC address of its own: an iWARP device's GID is its
# net_device's MAC, and rdma_cm binds an address to the first device
# whose GID matches, so with eth0's MAC every connection would go
# through kiwi0 (Documentation/ulps.md).
ULP_VLAN=eth0.7
ULP_VLAN_DEV=${PAIR_PROV}7
ULP_VLAN_MY_IP=10.77.7.${KIWI_MY_IP##*.}
ULP_VLAN_PEER_IP=10.77.7.${KIWI_PEER_IP##*.}
ULP_VLAN_MAC=02:00:4b:77:07:$(printf %02x "${KIWI_MY_IP##*.}")

# ulp_vlan_up STEP: ULP_VLAN up with this guest's address and ULP_VLAN_DEV
# bound to it.
ulp_vlan_up() {
	local out
	ulp_on_exit "ip link del $ULP_VLAN"
	if ! out=$({ ip link add link eth0 name "$ULP_VLAN" address "$ULP_VLAN_MAC" \
		type vlan id 7 &&
		ip addr add "$ULP_VLAN_MY_IP/24" dev "$ULP_VLAN" &&
		ip link set "$ULP_VLAN" up &&
		timeout 60 rdma link add "$ULP_VLAN_DEV" type "$PAIR_PROV" netdev "$ULP_VLAN"; } 2>&1); then
		vt_fail "$1: $ULP_VLAN with $ULP_VLAN_DEV: $out"
		return 1
	fi
	vt_pass "$1: $ULP_VLAN_DEV on $ULP_VLAN ($ULP_VLAN_MY_IP)"
}

# ulp_vlan_unregister STEP: `ip link del ULP_VLAN` (the net_device
# unregistered) ends in time, and ULP_VLAN_DEV left the RDMA core with it.
ulp_vlan_unregister() {
	ulp_rm_gone "$1" unregister "$ULP_VLAN_DEV" ip link del "$ULP_VLAN"
}

# ulp_rm_mark: STEP begins; ulp_rm_dmesg looks at the kernel log from here.
ulp_rm_mark() {
	ULP_KMSG0=$(dmesg | wc -l)
}

# ulp_rm_dmesg STEP PATTERN WHAT: the kernel logged PATTERN (ERE) since
# ulp_rm_mark.
ulp_rm_dmesg() {
	if dmesg | tail -n "+$((ULP_KMSG0 + 1))" | grep -qE "$2"; then
		vt_pass "$1: $3"
	else
		vt_fail "$1: no '$2' in the kernel log ($3)"
	fi
}

# ulp_rm_fio_start STEP FILE [FIO-OPTION...]: a verifying fio in the
# background (ULP_RM_FIO is its pid): 1024 4 KiB random writes at 100 IOPS,
# QD 8, about 10 s of writing and then 10 s of reading back, so that it is
# still writing when the device goes.
ulp_rm_fio_start() {
	local step=$1 file=$2
	shift 2
	fio --name="$step" --filename="$file" --direct=1 --ioengine=libaio \
		--verify=crc32c --verify_fatal=1 --rw=randwrite --bs=4k \
		--iodepth=8 --size=4M --rate_iops=100 "$@" \
		> "$VT_TMP/fio.$step.out" 2>&1 &
	ULP_RM_FIO=$!
	sleep 3
	kill -0 "$ULP_RM_FIO" 2> /dev/null ||
		vt_fail "$step: fio ended before the device went: $(tail -n 3 "$VT_TMP/fio.$step.out")"
}

# ulp_rm_fio_end STEP LIMIT: wait (at most LIMIT s) for the background
# fio; returns its exit status, 124 if it had to be killed.
ulp_rm_fio_end() {
	local rc
	if ! timeout "$2" tail --pid="$ULP_RM_FIO" -f /dev/null; then
		vt_fail "$1: fio still running $2 s later (I/O hangs)"
		# Not waited for: a task stuck in the kernel stays so.
		kill -9 "$ULP_RM_FIO"
		return 124
	fi
	wait "$ULP_RM_FIO"
	rc=$?
	[ "$rc" = 0 ] || grep -E 'error|err=|verify|bad' "$VT_TMP/fio.$1.out" | head -n 8 | sed 's/^/    | /'
	return "$rc"
}

# ulp_rm_fio_verified STEP LIMIT: the background fio ends within LIMIT s
# and every block it wrote read back intact.
ulp_rm_fio_verified() {
	if ulp_rm_fio_end "$1" "$2"; then
		vt_pass "$1: fio writes verified across the outage"
	else
		vt_fail "$1: fio failed across the outage"
	fi
}

# ulp_rm_target_step STEP [READD-CMD...]: the target's side of a removal
# step whose initiator runs the I/O (nfs-removal, iser-removal). Both
# sides count the ULP's QPs, then for
#  host-link    the initiator's device goes: every QP of this side's is
#               released (the ULP saw the connection end);
#  target-link  this side's `rdma link delete`, `modprobe -r kiwi` and
#               `rdma link add` in time, then READD-CMD STEP (what the ULP
#               needs to listen on the new device);
#  others       the initiator alone acts.
ulp_rm_target_step() {
	local step=$1
	shift
	ulp_rm_mark
	ulp_step_barrier "armed-$step" 600
	ulp_rm_has_qps "$step"
	ulp_step_barrier "io-$step" 600
	case "$step" in
	host-link | host-module)
		ulp_rm_no_qps "$step"
		ulp_step_barrier "released-$step"
		;;
	target-link)
		ulp_rm_delete "$step"
		ulp_rm_unload "$step"
		ulp_rm_dev_add "$step"
		[ $# -eq 0 ] || "$@" "$step"
		;;
	esac
	ulp_step_barrier "done-$step" 600
}

# ulp_rm_target_unregister [CMD...]: the target's side of host-unregister
# (nfs-removal, iser-removal): ULP_VLAN_DEV on the VLAN joins the ULP's
# running wildcard listener, CMD STEP runs (what the ULP needs to serve
# the initiator's VLAN address), the initiator's QPs are counted on it;
# once the initiator is done the VLAN is unregistered in its turn.
ulp_rm_target_unregister() {
	local step=host-unregister
	ulp_vlan_up "$step" || vt_die "$step: no VLAN device"
	[ $# -eq 0 ] || "$@" "$step"
	ulp_step_barrier "vlan-$step"
	ulp_step_barrier "armed-$step" 600
	ulp_rm_has_qps "$step" "$ULP_VLAN_DEV"
	ulp_step_barrier "done-$step" 600
	ulp_vlan_unregister "$step.target"
}

# ulp_rm_stuck_tasks: log the kernel stack of every task in D state (what
# an operation that timed out waits for).
ulp_rm_stuck_tasks() {
	local t
	for t in /proc/[0-9]*; do
		grep -q '^State:.*D' "$t/status" 2> /dev/null || continue
		vt_log "stuck: $(cat "$t/comm") (${t#/proc/}):"
		sed 's/^/    | /' "$t/stack"
	done
}

# --- diagnostics (what a hung ULP command waits for) ---

ULP_TRACEFS=/sys/kernel/tracing

# ulp_trace_on: record every kiwi tracepoint (QP and CM states, MPA
# negotiation, Terminates, posts, WR starts, completions) in a 4 MiB ring,
# so that ulp_diag shows what happened to the last work requests.
ulp_trace_on() {
	[ -d "$ULP_TRACEFS/events" ] || mount -t tracefs tracefs "$ULP_TRACEFS" 2> /dev/null
	[ -d "$ULP_TRACEFS/events/kiwi" ] || return 0
	echo 4096 > "$ULP_TRACEFS/buffer_size_kb"
	echo > "$ULP_TRACEFS/trace"
	ULP_TRACING=1
	ulp_trace_again
	ulp_on_exit "echo 0 > $ULP_TRACEFS/events/kiwi/enable"
}

# ulp_trace_again: after kiwi was loaded again, its tracepoints too.
ulp_trace_again() {
	[ -n "${ULP_TRACING:-}" ] && echo 1 > "$ULP_TRACEFS/events/kiwi/enable"
}

# ulp_diag WHY: this guest's RDMA and TCP state, for a command that hangs:
# the device's counters, every QP with kiwi's driver attributes (MSNs,
# Terminates, attached), the CM ids, the TCP sockets with their queues
# (Send-Q holds what TCP was not acknowledged, Recv-Q what kiwi did not
# read), the kiwi tracepoints of the last work requests and the kernel
# log's tail.
ulp_diag() {
	local dev
	vt_log "diag ($PAIR_SIDE, $1) at $(cut -d' ' -f1 /proc/uptime) s:"
	{
		for dev in /sys/class/infiniband/*; do
			[ -e "$dev" ] || continue
			rdma statistic show link "${dev##*/}/1"
		done
		rdma resource show qp -dd
		rdma resource show cm_id
		ss -tnio
		if [ -r "$ULP_TRACEFS/trace" ]; then
			echo "kiwi states and Terminates:"
			grep -E 'kiwi_(qp_state|cm_state|cm_event|mpa_nego|terminate)' \
				"$ULP_TRACEFS/trace" | tail -n 60
			echo "last kiwi events:"
			grep -v '^#' "$ULP_TRACEFS/trace" | tail -n 60
		fi
		dmesg | tail -n 20
	} 2>&1 | sed 's/^/    | /'
}

# ulp_diag_serve: in the background, dump this guest's state (ulp_diag)
# whenever the peer asks (ulp_diag_both). Stopped when the case ends.
ulp_diag_serve() {
	local req
	(
		while :; do
			for req in "$KIWI_SHARED/pair.$PAIR_ID.diag.$PAIR_SIDE".*; do
				[ -e "$req" ] && [ "${req%.done}" = "$req" ] || continue
				ulp_diag "asked by the $PAIR_OTHER: $(cat "$req")"
				mv "$req" "$req.done"
			done
			vt_nap 0.5
		done
	) &
	ulp_on_exit "kill $!"
}

# ulp_diag_both WHY: dump this guest's state and have the peer dump its own
# at the same moment (its ulp_diag_serve), waiting at most 20 s for it.
ulp_diag_both() {
	local req
	req=$KIWI_SHARED/pair.$PAIR_ID.diag.$PAIR_OTHER.$(date +%s%N)
	echo "$1" > "$req"
	ulp_diag "$1"
	ulp_wait 20 test -e "$req.done" || vt_log "diag: the $PAIR_OTHER did not answer"
}

# ulp_run_diag NAME SOON LIMIT CMD...: as ulp_run, but a CMD still running
# after SOON s has both guests dump their state (ulp_diag_both) while it
# hangs; it is then given up to LIMIT s in all. (The clock, not a count of
# polls: under TCG a poll that forks takes longer than its sleep.)
ulp_run_diag() {
	local name=$1 soon=$2 limit=$3 t0 pid rc
	shift 3
	t0=$SECONDS
	timeout -k 10 "$limit" "$@" > "$VT_TMP/$name.out" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2> /dev/null && [ $((SECONDS - t0)) -lt "$soon" ]; do
		vt_nap 0.2
	done
	if kill -0 "$pid" 2> /dev/null; then
		ulp_diag_both "$name still running after $soon s: $*"
		ulp_rm_stuck_tasks
	fi
	wait "$pid"
	rc=$?
	if [ "$rc" = 0 ]; then
		vt_pass "$name ($((SECONDS - t0)) s)"
	else
		vt_fail "$name: exit $rc$([ "$rc" = 124 ] && echo ", timed out after $limit s"): $*"
		sed 's/^/    | /' "$VT_TMP/$name.out" | tail -n 30
	fi
	return "$rc"
}
