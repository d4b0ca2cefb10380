#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make deps`: install every Debian 12 package kiwi needs to build, run and
# test. Idempotent; does not touch apt at all when everything is present.
# Makes sure the headers of the newest installed amd64 kernel image exist
# (the QEMU lab boots that image, kiwi.ko is built against those headers).
#
# usage: deps.sh [--debug-kernel | --bench]
#   --debug-kernel  only what scripts/debug-kernel.sh needs (compiler, kernel
#                   build tools, linux-source-6.1): .ci/run installs these
#                   first and starts the debug kernel build in the
#                   background while the rest installs.
#   --bench         also the plotting tool of make bench-sweep (gnuplot-nox).

set -euo pipefail

PKGS=(
	# build
	gcc g++ make cmake pkg-config git bc flex bison libelf-dev libssl-dev
	dwarves cpio kmod file xz-utils zstd gzip
	linux-headers-amd64 linux-image-amd64 linux-source-6.1
	# rdma-core: provider build, tools, tests
	rdma-core ibverbs-providers ibverbs-utils rdmacm-utils libibverbs-dev
	librdmacm-dev perftest python3 python3-pyverbs
	# native test tiers, fuzzing, analysis
	libgtest-dev libgmock-dev googletest libbenchmark-dev clang llvm lld
	libclang-rt-14-dev clang-format clang-tidy sparse shellcheck
	# QEMU lab and system tests
	qemu-system-x86 qemu-utils busybox-static iproute2 iputils-ping ethtool
	procps psmisc util-linux coreutils rsync tshark tcpdump iperf3 sockperf
	# operations: tracepoint capture, Debian packages and DKMS, man page,
	# debootstrap (make check-pkg's fresh Debian 12 root)
	trace-cmd linux-perf build-essential dpkg-dev debhelper dh-dkms dkms fakeroot
	lintian debootstrap
	man-db openssl
	# the kernel ULPs over RDMA: NVMe-oF, NFS, iSER (make test's smoke cases,
	# make check-ulp, make bench-ulp); targetcli needs a system D-Bus
	nvme-cli fio nfs-kernel-server targetcli-fb open-iscsi e2fsprogs dbus
)

# The plot of make bench-sweep (tests/bench/plot.py; deps.sh --bench).
BENCH_PKGS=(gnuplot-nox)

# What scripts/debug-kernel.sh needs: a subset of PKGS.
DEBUG_KERNEL_PKGS=(gcc make bc flex bison libelf-dev libssl-dev cpio kmod
	xz-utils linux-source-6.1)

APT_OPTS=(-y -o DPkg::Lock::Timeout=900 --no-install-recommends)
export DEBIAN_FRONTEND=noninteractive

as_root() {
	if [ "$(id -u)" = 0 ]; then
		"$@"
	elif command -v sudo > /dev/null; then
		sudo -E "$@"
	else
		echo "deps: need root for: $*" >&2
		exit 1
	fi
}

missing_pkgs() {
	local p status
	for p in "$@"; do
		status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2> /dev/null || true)
		[ "${status:0:2}" = ii ] || echo "$p"
	done
}

newest_kernel() {
	find /boot -maxdepth 1 -name 'vmlinuz-*-amd64' -printf '%f\n' |
		sed 's/^vmlinuz-//' | sort -V | tail -n 1
}

# nothing_boots_here: this root is a chroot or a container (make ci-fresh's
# chroot, CI in a container), so no kernel installed into it ever boots it.
nothing_boots_here() {
	ischroot || [ -e /.dockerenv ] || [ -e /run/.containerenv ] ||
		systemd-detect-virt --container --quiet 2> /dev/null
}

# The lab boots /boot/vmlinuz-* with an initramfs of its own
# (scripts/lab/mkinitramfs) and never Debian's. Where nothing boots the
# root, INITRD=No skips Debian's: the kernel's postinst hook then makes
# none and links no /initrd.img, so initramfs-tools' trigger finds no
# kernel to make one for either. mkinitramfs took 160 CPU-s (57 user,
# 104 system) for one kernel on a 2-core machine, and a new root made
# two (the kernel's hook, then the trigger).
if nothing_boots_here; then
	export INITRD=No
fi

# install_pkgs PKG...: apt-get install those of PKG not installed yet.
install_pkgs() {
	local missing
	mapfile -t missing < <(missing_pkgs "$@")
	[ ${#missing[@]} -gt 0 ] || return 0
	echo "deps: installing ${missing[*]}"
	as_root apt-get update -o DPkg::Lock::Timeout=900
	as_root apt-get install "${APT_OPTS[@]}" "${missing[@]}"
}

case ${1:-} in
--debug-kernel)
	install_pkgs "${DEBUG_KERNEL_PKGS[@]}"
	echo "deps: the debug kernel's build dependencies are present"
	exit 0
	;;
--bench)
	PKGS+=("${BENCH_PKGS[@]}")
	;;
"") ;;
*)
	echo "usage: deps.sh [--debug-kernel | --bench]" >&2
	exit 2
	;;
esac

install_pkgs "${PKGS[@]}"

kver=$(newest_kernel)
if [ -z "$kver" ]; then
	echo "deps: no /boot/vmlinuz-*-amd64 after installing linux-image-amd64" >&2
	exit 1
fi
if [ -n "$(missing_pkgs "linux-headers-$kver")" ]; then
	echo "deps: installing headers for the newest kernel image $kver"
	as_root apt-get update -o DPkg::Lock::Timeout=900
	as_root apt-get install "${APT_OPTS[@]}" "linux-headers-$kver"
fi
if [ ! -e "/lib/modules/$kver/build" ]; then
	echo "deps: /lib/modules/$kver/build missing after installing linux-headers-$kver" >&2
	exit 1
fi
as_root mkdir -p /var/cache/kiwi
echo "deps: ${#PKGS[@]} packages present; kernel $kver with headers /lib/modules/$kver/build"
