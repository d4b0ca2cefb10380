#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/vm/pkg/run.sh [--full | --boot-new-kernel] [run-scenario options]
#
# `make check-pkg` (part of make test, about 3 minutes): the Debian packages
# kiwi-dkms and libkiwi built from this tree, installed, used and purged
# with their real maintainer scripts and DKMS hooks, in four steps:
#   build    scripts/build-deb.sh (dpkg-buildpackage; lintian must be clean)
#   install  in a throwaway root (this script's private mount namespace: an
#            overlay of a tmpfs on the host root, chrooted into):
#            tests/vm/pkg/install.sh, where `apt install` makes DKMS build
#            kiwi.ko natively for the kernel the lab boots (the newest
#            /boot/vmlinuz-*), kiwi(7) renders, then `apt install` of a
#            second kernel's headers from Debian's mirror (the newest
#            other release of that flavour apt offers and the host has no
#            headers of) must make dpkg's DKMS hook build kiwi.ko for it,
#            with its vermagic; then `apt remove kiwi-dkms` and `apt
#            install` again with both kernels' headers present must build
#            kiwi.ko for both; a 'SKIP new-kernel' line if apt offers no
#            second kernel (the hook then runs by hand), a failure if the
#            install fails. KIWI_PKG_KVER2=none takes that path on purpose
#            (it must print SKIP and pass the rest); KIWI_PKG_KVER2=RELEASE
#            picks the second kernel
#   guest    a lab guest boots that root (run-scenario --root) and runs
#            tests/vm/pkg/use.sh: the DKMS kiwi.ko loads, rping and
#            perftest run through the packaged provider
#   purge    tests/vm/pkg/purge.sh in the chroot: `apt remove --purge`
#            leaves no package, DKMS entry or module for either kernel,
#            then the second kernel's packages go; the overlay's upper
#            layer must hold nothing of kiwi and nothing outside the
#            package managers' own records
# --boot-new-kernel (make check-pkg-full; about 55 s more) also installs the
# second kernel's image (9 s) and boots a second guest on it (45 s), step
# guest-new-kernel: the kiwi.ko its headers hook built loads and serves
# rping and perftest. Between the two, make check-pkg-full runs
# tests/vm/pkg/fresh.sh: the same on a fresh minbase Debian 12 root
# instead of the host's, where apt must resolve the packages' Depends.
# DKMS compiles on the host: one build of kiwi.ko takes 640 s in a TCG
# guest. --full (`make check-pkg-full`, about 25 minutes) does it there
# anyway: build, then tests/vm/pkg/packages.sh in a guest booted without
# kiwi, DKMS building under the running kernel. Options go to
# scripts/lab/run-scenario. Needs root (mount namespace, overlay, chroot).
# One line 'PASS STEP (Ns)' or 'FAIL STEP' per step, then 'N passed,
# N failed'; exit status 0 only if all passed.

set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
PKG=$REPO/tests/vm/pkg
DEBS=$REPO/build/deb
LAB=$REPO/scripts/lab/run-scenario

. "$PKG/steps.bash"

if [ "${1:-}" = --full ]; then
	shift
	step build bash "$REPO/scripts/build-deb.sh" "$DEBS" || { summary; exit; }
	step guest-full "$LAB" --kiwi-ko none "$@" "$PKG/packages.sh"
	summary
	exit
fi
if [ "$(id -u)" != 0 ]; then
	echo "check-pkg: needs root (mount namespace, overlay, chroot)"
	failed=$((failed + 1))
	summary
	exit
fi
# The rest runs in a private mount namespace: the mounts are this script's
# alone and go with it; the trap unmounts them all the same.
if [ "${KIWI_PKG_NS:-}" != 1 ]; then
	KIWI_PKG_NS=1 exec unshare --mount --propagation private bash "${BASH_SOURCE[0]}" "$@"
fi
boot_kver2=0
if [ "${1:-}" = --boot-new-kernel ]; then
	shift
	boot_kver2=1
fi
step build bash "$REPO/scripts/build-deb.sh" "$DEBS" || { summary; exit; }

kernel=$(find /boot -maxdepth 1 -name 'vmlinuz-*' | sort -V | tail -n 1)
kver=${kernel#/boot/vmlinuz-}

# second_kernel: the newest kernel release of kver's flavour (amd64,
# cloud-amd64, rt-amd64...) other than kver whose headers apt can install
# and are not installed yet (with them installed, the packages' postinst
# would build for it already).
second_kernel() {
	local v

	apt-cache pkgnames linux-headers- |
		sed -n "s/^linux-headers-\([0-9][0-9.]*-[0-9][0-9]*-${kver#*-*-}\)\$/\1/p" |
		sort -V -r | while read -r v; do
			[ "$v" != "$kver" ] || continue
			dpkg-query -W -f '${Status}' "linux-headers-$v" 2>/dev/null |
				grep -q ' installed$' && continue
			apt-cache show "linux-headers-$v" > /dev/null 2>&1 || continue
			echo "$v"
			break
		done
}
case "${KIWI_PKG_KVER2:-}" in
'') kver2=$(second_kernel) ;;
none) kver2= ;;
*) kver2=$KIWI_PKG_KVER2 ;;
esac
work=$(mktemp -d /tmp/kiwi-pkg.XXXXXX)
root=$work/root
upper=$work/upper

cleanup() {
	umount -R "$work" 2>/dev/null || umount -R -l "$work"
	rmdir "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# make_root: the host root below a tmpfs overlay at $root, with /proc,
# /sys, /dev, a fresh /run, and this checkout read-only at its path (it
# may live on another file system than /).
make_root() {
	local d

	mount -t tmpfs -o mode=0755 tmpfs "$work" &&
		mkdir "$upper" "$work/ovl-work" "$root" &&
		mount -t overlay overlay \
			-o "lowerdir=/,upperdir=$upper,workdir=$work/ovl-work" "$root" || return 1
	for d in proc sys dev; do
		mount --rbind "/$d" "$root/$d" && mount --make-rslave "$root/$d" || return 1
	done
	mount -t tmpfs -o mode=0755 tmpfs "$root/run" &&
		mkdir -p "$root$REPO" &&
		mount --bind "$REPO" "$root$REPO" &&
		mount -o remount,bind,ro "$root$REPO" &&
		running_kernel
}

# symlinks_changed: the paths read, but for symlinks rewritten to their old
# target (/vmlinuz and /initrd.img after a kernel came and went).
symlinks_changed() {
	local f

	while read -r f; do
		[ -L "$upper/$f" ] && [ "$(readlink "$upper/$f")" = "$(readlink "/$f")" ] ||
			echo "$f"
	done
}

# upper_clean: after the purge, the upper layer holds what the root gained
# since it was made; only the package managers' records, logs and caches,
# the module indexes and DKMS's signing key (which outlives any module) may
# stay, and nothing named after kiwi but log lines.
upper_clean() {
	local records left lines

	records="^(var/lib/(dpkg|apt)/|var/cache/(apt|debconf|ldconfig|man)/|etc/ld\.so\.cache$"
	records+="|usr/lib/modules/($kver|$kver2)/modules\.|var/lib/dkms/mok\.(key|pub)$)"
	left=$(cd "$upper" && {
		find . \( -path ./tmp -o -path ./var/log \) -prune -o \
			\( -iname '*kiwi*' -o ! -type d \) -print | sed 's|^\./||' |
			grep -Ev "$records"
		find var/lib/dpkg var/lib/apt -iname '*kiwi*'
		grep -l kiwi var/lib/dpkg/status
	} 2>/dev/null | sort -u | symlinks_changed)
	if [ -n "$left" ]; then
		echo "the purge left in the root:"
		mapfile -t lines <<<"$left"
		printf '    %s\n' "${lines[@]}"
		return 1
	fi
	echo "the purge left nothing of kiwi in the root"
}

if ! make_root; then
	echo "check-pkg: cannot make the throwaway root under $work"
	failed=$((failed + 1))
	summary
	exit
fi
echo "check-pkg: throwaway root $root for kernel $kver"
if [ -n "$kver2" ]; then
	echo "check-pkg: second kernel $kver2 (apt install linux-headers-$kver2 after the packages)"
elif [ "${KIWI_PKG_KVER2:-}" = none ]; then
	echo "SKIP new-kernel: KIWI_PKG_KVER2=none: the headers hook is only run by hand for $kver"
else
	echo "SKIP new-kernel: apt knows no linux-headers-*-${kver#*-*-} but $kver's" \
		"or installed ones: the headers hook is only run by hand for $kver"
fi
if step install in_root "$PKG/install.sh"; then
	step guest "$LAB" --root "$root" "$@" "$PKG/use.sh"
	if [ "$boot_kver2" = 1 ] && [ -n "$kver2" ]; then
		step guest-new-kernel "$LAB" --root "$root" --kernel "$root/boot/vmlinuz-$kver2" \
			"$@" "$PKG/use.sh"
	fi
else
	failed=$((failed + 1))
	echo "FAIL guest: not run (the install failed)"
fi
step purge in_root "$PKG/purge.sh"
step purge-left-nothing upper_clean
summary
