#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: scripts/ci-fresh.sh [DIR]
#
# `make ci-fresh`: how long `.ci/run` takes on a machine where nothing was
# installed for kiwi. Bootstraps Debian 12 (debootstrap, minbase) into DIR
# (default /var/tmp/kiwi-fresh, removed first), adds what a new machine of
# this kind already has (compilers, cmake, GoogleTest, clang tools, git,
# python3: the list below), clones this checkout's HEAD into it (with
# ../shared/spec beside it, as CI has) and runs
# `bash .ci/run` there under chroot, with /proc, /sys and /dev of the host.
# Inside, /var/cache/kiwi starts empty, so the debug kernel builds cold and
# every package is downloaded and installed: the timings at the end are a new
# machine's, provided nothing else loads this one. Takes about 45 minutes,
# root, Debian's mirror reachable. While it runs, `vmstat 30` samples the
# host's CPU into DIR.vmstat.log (which parts of the run leave cores idle),
# and the end prints the share of both cores the whole run kept busy.
# Exit status: .ci/run's.

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${1:-/var/tmp/kiwi-fresh}
MIRROR=${KIWI_MIRROR:-http://deb.debian.org/debian}
# What a new machine of this kind comes with (the environment's machine
# description): the part of it kiwi's scripts rely on.
PREINSTALLED=(g++ make cmake git python3 perl ca-certificates curl xz-utils
	libgtest-dev libgmock-dev libbenchmark-dev clang-format clang-tidy
	cppcheck gdb valgrind sudo)
MOUNTS=(proc sys dev dev/pts)

die() {
	echo "ci-fresh: $*" >&2
	exit 1
}

unmount_all() {
	local i
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		mountpoint -q "$DIR/${MOUNTS[$i]}" && umount -l "$DIR/${MOUNTS[$i]}"
	done
	mountpoint -q "$DIR" && umount -l "$DIR"
	return 0
}

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, mounts)"
command -v debootstrap > /dev/null ||
	DEBIAN_FRONTEND=noninteractive apt-get install -y debootstrap
case $DIR in
/ | "") die "refusing to use '$DIR'" ;;
esac
if [ -d "$DIR" ]; then
	unmount_all
	rm -rf --one-file-system "$DIR"
fi
trap unmount_all EXIT

echo "ci-fresh: bootstrapping Debian 12 into $DIR"
debootstrap --variant=minbase bookworm "$DIR" "$MIRROR" > "$DIR.debootstrap.log" 2>&1 ||
	die "debootstrap failed (see $DIR.debootstrap.log)"
cp /etc/resolv.conf "$DIR/etc/"
# The root of the chroot is a mount point, as a machine's root is:
# check-pkg's `unshare --propagation private` fails on one that is not.
mount --bind "$DIR" "$DIR"
for m in "${MOUNTS[@]}"; do
	mount --bind "/$m" "$DIR/$m"
done
echo "ci-fresh: installing what a new machine already has"
chroot "$DIR" env DEBIAN_FRONTEND=noninteractive sh -c \
	"apt-get update -q && apt-get install -y -q ${PREINSTALLED[*]}" \
	> "$DIR.preinstall.log" 2>&1 ||
	die "installing the machine's own packages failed (see $DIR.preinstall.log)"
git clone -q "$REPO" "$DIR/root/kiwi"
# CI's clone has the project's shared texts beside it: the checklist check
# (check-unit) compares Documentation/checklist.md with the spec digests and
# passes silently without them.
if [ -d "$REPO/../shared/spec" ]; then
	mkdir -p "$DIR/root/shared"
	cp -r "$REPO/../shared/spec" "$DIR/root/shared/"
fi
echo "ci-fresh: bash .ci/run at $(git -C "$REPO" rev-parse --short HEAD), log $DIR.ci.log"
# cpu_ticks: "BUSY IDLE" from /proc/stat's first line (user nice system
# idle iowait irq softirq steal): idle counts iowait, neither counts steal
# (time this machine's hypervisor gave to others).
cpu_ticks() {
	local -a f
	read -r -a f < /proc/stat
	echo "$((f[1] + f[2] + f[3] + f[6] + f[7])) $((f[4] + f[5]))"
}
rc=0
read -r busy0 idle0 <<< "$(cpu_ticks)"
vmstat -n -t 30 > "$DIR.vmstat.log" &
vmstat_pid=$!
chroot "$DIR" sh -c 'cd /root/kiwi && bash .ci/run' > "$DIR.ci.log" 2>&1 || rc=$?
kill "$vmstat_pid"
read -r busy1 idle1 <<< "$(cpu_ticks)"
sed -n '/^##### timings/,$p' "$DIR.ci.log"
echo "ci-fresh: the host's CPUs were busy (steal left out)" \
	"$((100 * (busy1 - busy0) / (busy1 - busy0 + idle1 - idle0)))% of the run" \
	"(vmstat every 30 s: $DIR.vmstat.log)"
exit "$rc"
