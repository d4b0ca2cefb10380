#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/vm/pkg/fresh.sh [run-scenario options]
#
# Part of `make check-pkg-full` (not CI): the Debian packages on a fresh
# Debian 12, where nothing they depend on is installed, so that apt must
# resolve their Depends from the mirror as on a user's machine (check-pkg's
# root is the host's, which has every dependency already). Steps:
#   build    scripts/build-deb.sh (lintian clean)
#   root     a minbase Debian 12 root (debootstrap --variant=minbase
#            bookworm, plus iproute2, kmod and procps, which the lab's
#            guest init needs and a standard install has), unpacked from
#            /var/cache/kiwi/fresh/base-KEY.tar, KEY a hash of the suite,
#            mirror and package list (made once, about 2 minutes), on a
#            tmpfs in this script's private mount namespace; apt's
#            downloads are kept in /var/cache/kiwi/fresh/archives
#   install  tests/vm/pkg/fresh-install.sh in the chroot: `apt install
#            ./kiwi-dkms*.deb ./libkiwi*.deb` with the lab kernel's image
#            and headers, rdmacm-utils, perftest and ibverbs-utils from the
#            mirror, as a user would; DKMS builds kiwi.ko natively
#   guest    a lab guest boots that root (run-scenario --root) and runs
#            tests/vm/pkg/use.sh: modprobe kiwi, `rdma link add`,
#            ibv_devinfo, rping, ib_write_bw and ib_read_bw over kiwi0
#   purge    tests/vm/pkg/fresh-purge.sh in the chroot: `apt remove
#            --purge kiwi-dkms libkiwi` leaves no package, DKMS entry,
#            module or file named after kiwi
#   make-dkms  tests/vm/pkg/make-dkms.sh in the chroot, on the root the
#            purge left: `make dkms` (as the README says, without
#            packages) builds and installs kiwi.ko with DKMS, `make
#            dkms-remove` takes it all away again
# With KIWI_VM_LOCK=FILE the guest step waits for `flock FILE` (machines
# that run other lab guests); the rest runs on the host, DKMS at nice 10
# (two builds of kiwi.ko). Needs root
# and Debian's mirror (KIWI_MIRROR, KIWI_SECURITY_MIRROR). One line 'PASS
# STEP (Ns)' or 'FAIL STEP (Ns)' per step, then 'N passed, N failed'; exit
# status 0 only if all passed.

set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
PKG=$REPO/tests/vm/pkg
DEBS=$REPO/build/deb
LAB=$REPO/scripts/lab/run-scenario
CACHE=/var/cache/kiwi/fresh
MIRROR=${KIWI_MIRROR:-http://deb.debian.org/debian}
SECURITY=${KIWI_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
# Beyond minbase: what the lab's guest init runs (ip, modprobe, ps), all
# in any standard Debian install. Nothing the packages depend on.
LAB_PKGS=(iproute2 kmod procps)

. "$PKG/steps.bash"

if [ "$(id -u)" != 0 ]; then
	echo "check-pkg: needs root (debootstrap, mount namespace, chroot)"
	failed=$((failed + 1))
	summary
	exit
fi
if [ "${KIWI_PKG_NS:-}" != 1 ]; then
	KIWI_PKG_NS=1 exec unshare --mount --propagation private bash "${BASH_SOURCE[0]}" "$@"
fi
kernel=$(find /boot -maxdepth 1 -name 'vmlinuz-*' | sort -V | tail -n 1)
kver=${kernel#/boot/vmlinuz-}
work=$(mktemp -d /tmp/kiwi-fresh.XXXXXX)
root=$work/root

cleanup() {
	umount -R "$work" 2>/dev/null || umount -R -l "$work"
	rmdir "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# base_tar: the cached minbase root's tarball, made first if missing.
base_tar() {
	local key tmp

	key=$(printf '%s\n' bookworm minbase "$MIRROR" "$SECURITY" "${LAB_PKGS[@]}" |
		sha256sum | cut -c1-16)
	BASE=$CACHE/base-$key.tar
	[ -s "$BASE" ] && return 0
	mkdir -p "$CACHE"
	tmp=$(mktemp -d "$CACHE/bootstrap.XXXXXX")
	echo "check-pkg: debootstrap --variant=minbase bookworm (log $BASE.log)"
	if ! nice -n 10 debootstrap --variant=minbase \
		--include="$(IFS=,; echo "${LAB_PKGS[*]}")" bookworm "$tmp" "$MIRROR" \
		> "$BASE.log" 2>&1; then
		tail -n 20 "$BASE.log"
		rm -rf --one-file-system "$tmp"
		return 1
	fi
	rm -f "$tmp/etc/apt/sources.list"
	printf 'Types: deb\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\nTypes: deb\nURIs: %s\nSuites: bookworm-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
		"$MIRROR" "$SECURITY" > "$tmp/etc/apt/sources.list.d/debian.sources"
	rm -rf "$tmp"/var/cache/apt/archives/*.deb "$tmp"/var/lib/apt/lists/*_*
	tar -C "$tmp" -cf "$BASE.tmp" . && mv "$BASE.tmp" "$BASE"
	rm -rf --one-file-system "$tmp"
	[ -s "$BASE" ]
}

# make_root: the cached base unpacked on a tmpfs at $root, with /proc,
# /sys, /dev, a fresh /run, the host's resolv.conf, apt's download cache
# and this checkout read-only at its path.
make_root() {
	local d

	base_tar || return 1
	mount -t tmpfs -o mode=0755 tmpfs "$work" && mkdir "$root" &&
		tar -C "$root" -xf "$BASE" || return 1
	for d in proc sys dev; do
		mount --rbind "/$d" "$root/$d" && mount --make-rslave "$root/$d" || return 1
	done
	mkdir -p "$CACHE/archives/partial" "$root$REPO" &&
		mount -t tmpfs -o mode=0755 tmpfs "$root/run" &&
		mount --bind "$CACHE/archives" "$root/var/cache/apt/archives" &&
		mount --bind "$REPO" "$root$REPO" &&
		mount -o remount,bind,ro "$root$REPO" &&
		cp /etc/resolv.conf "$root/etc/resolv.conf" &&
		running_kernel
}

step build bash "$REPO/scripts/build-deb.sh" "$DEBS" || { summary; exit; }
step root make_root || { summary; exit; }
echo "check-pkg: fresh Debian 12 root $root (base $BASE) for kernel $kver"
if step install in_root "$PKG/fresh-install.sh"; then
	step guest ${KIWI_VM_LOCK:+flock "$KIWI_VM_LOCK"} "$LAB" --root "$root" "$@" "$PKG/use.sh"
else
	failed=$((failed + 1))
	echo "FAIL guest: not run (the install failed)"
fi
step purge in_root "$PKG/fresh-purge.sh"
step make-dkms in_root "$PKG/make-dkms.sh"
summary
