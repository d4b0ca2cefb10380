#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/vm/pkg/run.sh [--full |
#                             [--boot-new-kernel] [--make-dkms] [--reinstall]]
#                            [run-scenario options]
#
# `make check-pkg` (part of make test): the Debian packages kiwi-dkms and
# libkiwi built from this tree, installed on a fresh Debian 12 as a user
# would, used and purged with their real maintainer scripts and DKMS
# hooks. Steps:
#   build    scripts/build-deb.sh (dpkg-buildpackage; lintian must be clean)
#   root     a minbase Debian 12 root (debootstrap --variant=minbase
#            bookworm, plus iproute2, kmod and procps, which the lab's
#            guest init needs and a standard install has), made once
#            and kept in /var/cache/kiwi/fresh/base-KEY, KEY a hash of
#            the suite, mirror and package list (about 2 minutes the
#            first time), as the lower layer of an overlay whose upper
#            layer is a tmpfs, in this script's private mount namespace;
#            apt's download cache is the host's (bound in: the packages
#            make deps installed on the host are not downloaded again);
#            `apt update` from Debian's mirror (KIWI_MIRROR,
#            KIWI_SECURITY_MIRROR) and `apt upgrade` (the base is made up
#            to date; this catches up with updates since)
#   new-kernel  a second kernel: the newest other release of the lab
#            kernel's flavour (amd64, cloud-amd64...) whose headers apt
#            offers; fails if there is none, unless KIWI_PKG_KVER2=none
#            says so on purpose (the headers hook then only runs by hand);
#            KIWI_PKG_KVER2=RELEASE picks it
#   install  tests/vm/pkg/install.sh in the chroot: nothing the packages
#            depend on is there; `apt install ./kiwi-dkms*.deb
#            ./libkiwi*.deb` with the lab kernel's image and headers,
#            rdmacm-utils, perftest, ibverbs-utils and man-db from the
#            mirror, without Recommends, must resolve the packages'
#            Depends (dkms, openssl, libibverbs1) and make DKMS build
#            kiwi.ko natively for the kernel the lab boots (the newest
#            /boot/vmlinuz-*); kiwi(7) renders; then `apt install` of the
#            second kernel's headers must make dpkg's DKMS hook build
#            kiwi.ko for it, with its vermagic; with --reinstall (make
#            check-pkg-full; two more DKMS builds, about 100 s) then `apt
#            remove kiwi-dkms` and `apt install` again with both kernels'
#            headers present must build kiwi.ko for both (kiwi-dkms's
#            own postinst builds for the kernel that is neither running
#            nor newest)
#   guest    a lab guest boots that root (run-scenario --root) and runs
#            tests/vm/pkg/use.sh: modprobe of the DKMS kiwi.ko, `rdma
#            link add`, ibv_devinfo, rping, ib_write_bw and ib_read_bw
#            through the packaged provider
#   purge    tests/vm/pkg/purge.sh in the chroot: `apt remove --purge
#            kiwi-dkms libkiwi` leaves no package, DKMS entry, module or
#            file named after kiwi, for either kernel; then the second
#            kernel's packages go
#   purge-left-nothing  tests/vm/pkg/unwind.sh in the chroot removes
#            every package the install added, back to the base's list;
#            then the overlay's upper layer must hold nothing it did not
#            hold after the root step but the package managers' records
# --make-dkms (make check-pkg-full) adds, between purge and
# purge-left-nothing, step make-dkms: tests/vm/pkg/make-dkms.sh, `make
# dkms` and `make dkms-remove` (the README's way without packages).
# --boot-new-kernel (make check-pkg-full; about 55 s more) also installs the
# second kernel's image and boots a second guest on it, step
# guest-new-kernel: the kiwi.ko its headers hook built loads and serves
# rping and perftest.
# DKMS compiles on the host: one build of kiwi.ko takes 640 s in a TCG
# guest. --full (`make check-pkg-full`, about 25 minutes) does it there
# anyway: build, then tests/vm/pkg/packages.sh in a guest booted without
# kiwi on the host's root, DKMS building under the running kernel. Other
# options go to scripts/lab/run-scenario. Needs root (debootstrap, mount
# namespace, overlay, chroot) and Debian's mirror. With KIWI_VM_LOCK=FILE
# the guest steps wait for `flock FILE` (machines that run other lab
# guests); the rest runs on the host, DKMS at nice 10. One line 'PASS STEP
# (Ns)' or 'FAIL STEP (Ns)' per step, then 'N passed, N failed'; exit
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

if [ "${1:-}" = --full ]; then
	shift
	step build bash "$REPO/scripts/build-deb.sh" "$DEBS" || { summary; exit; }
	step guest-full "$LAB" --kiwi-ko none "$@" "$PKG/packages.sh"
	summary
	exit
fi
if [ "$(id -u)" != 0 ]; then
	echo "check-pkg: needs root (debootstrap, mount namespace, overlay, chroot)"
	failed=$((failed + 1))
	summary
	exit
fi
# The rest runs in a private mount namespace: the mounts are this script's
# alone and go with it; the trap unmounts them all the same.
if [ "${KIWI_PKG_NS:-}" != 1 ]; then
	KIWI_PKG_NS=1 exec unshare --mount --propagation private bash "${BASH_SOURCE[0]}" "$@"
fi
boot_kver2=0 make_dkms=0 reinstall=0
while :; do
	case "${1:-}" in
	--boot-new-kernel) boot_kver2=1 ;;
	--reinstall) reinstall=1 ;;
	--make-dkms) make_dkms=1 ;;
	*) break ;;
	esac
	shift
done
step build bash "$REPO/scripts/build-deb.sh" "$DEBS" || { summary; exit; }

kernel=$(find /boot -maxdepth 1 -name 'vmlinuz-*' | sort -V | tail -n 1)
kver=${kernel#/boot/vmlinuz-}
kver2=
lock_lab=${KIWI_VM_LOCK:+flock $KIWI_VM_LOCK}
work=$(mktemp -d /tmp/kiwi-pkg.XXXXXX)
root=$work/root
upper=$work/upper
# What the base root has installed (install.sh writes it, unwind.sh reads
# it; in the root's /tmp, which upper_clean ignores).
BASE_PKGS=/tmp/kiwi-pkg-base.list

cleanup() {
	umount -R "$work" 2>/dev/null || umount -R -l "$work"
	rmdir "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# base_root: the cached minbase root's folder in $BASE, made first if
# missing (under a lock: two runs may want it at once; it appears under
# its name only when complete).
base_root() {
	local key tmp

	key=$(printf '%s\n' bookworm minbase "$MIRROR" "$SECURITY" "${LAB_PKGS[@]}" |
		sha256sum | cut -c1-16)
	BASE=$CACHE/base-$key
	[ -d "$BASE" ] && return 0
	mkdir -p "$CACHE" && exec {lock}> "$CACHE/.lock" && flock "$lock" || return 1
	[ -d "$BASE" ] && return 0
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
	# With the updates and security suites, as an installed system is.
	if ! { mount -t proc proc "$tmp/proc" &&
		chroot "$tmp" apt-get update && DEBIAN_FRONTEND=noninteractive \
		nice -n 10 chroot "$tmp" apt-get -y upgrade; } >> "$BASE.log" 2>&1; then
		tail -n 20 "$BASE.log"
		umount "$tmp/proc"
		rm -rf --one-file-system "$tmp"
		return 1
	fi
	umount "$tmp/proc"
	# The host's resolv.conf is bound over this one when the root is used.
	rm -rf "$tmp"/var/cache/apt/archives/*.deb "$tmp"/var/lib/apt/lists/*_* \
		"$tmp/etc/resolv.conf"
	: > "$tmp/etc/resolv.conf"
	mv "$tmp" "$BASE"
}

# upper_files: what the upper layer holds (but /tmp and /var/log): every
# file, symlink or whiteout, and the folders named after kiwi; one line
# each with its type, size, mtime and path (then ' -> ' and a symlink's
# target).
upper_files() {
	(cd "$upper" && find . \( -path ./tmp -o -path ./var/log \) -prune -o \
		\( -iname '*kiwi*' -o ! -type d \) -printf '%y %s %T@ %P -> %l\n')
}

# make_root: the base below a tmpfs overlay at $root, with /proc, /sys,
# /dev, a fresh /run, the host's resolv.conf and apt download cache, and
# this checkout read-only at its path (it may live on another file system
# than /); then `apt update` there.
make_root() {
	local d

	base_root || return 1
	mount -t tmpfs -o mode=0755 tmpfs "$work" &&
		mkdir "$upper" "$work/ovl-work" "$root" &&
		mount -t overlay overlay \
			-o "lowerdir=$BASE,upperdir=$upper,workdir=$work/ovl-work" "$root" || return 1
	for d in proc sys dev; do
		mount --rbind "/$d" "$root/$d" && mount --make-rslave "$root/$d" || return 1
	done
	mkdir -p /var/cache/apt/archives/partial "$root$REPO" &&
		mount -t tmpfs -o mode=0755 tmpfs "$root/run" &&
		mount --bind /var/cache/apt/archives "$root/var/cache/apt/archives" &&
		mount --bind /etc/resolv.conf "$root/etc/resolv.conf" &&
		mount --bind "$REPO" "$root$REPO" &&
		mount -o remount,bind,ro "$root$REPO" &&
		running_kernel &&
		echo "check-pkg: fresh Debian 12 root $root (base $BASE) for kernel $kver" &&
		in_root_run apt-get update > "$work/update.log" 2>&1 &&
		in_root_run apt-get -y upgrade >> "$work/update.log" 2>&1 || {
		tail -n 20 "$work/update.log" 2>/dev/null
		return 1
	}
	grep -E '^[0-9]+ upgraded' "$work/update.log"
	upper_files > "$work/upper.before"
}

# second_kernel: the newest kernel release of kver's flavour (amd64,
# cloud-amd64, rt-amd64...) other than kver whose headers apt offers in
# the root.
second_kernel() {
	chroot "$root" apt-cache pkgnames linux-headers- |
		sed -n "s/^linux-headers-\([0-9][0-9.]*-[0-9][0-9]*-${kver#*-*-}\)\$/\1/p" |
		grep -vxF "$kver" | sort -V -r | while read -r v; do
			chroot "$root" apt-cache show "linux-headers-$v" > /dev/null 2>&1 || continue
			echo "$v"
			break
		done
}

# new_kernel: pick kver2 (KIWI_PKG_KVER2: none or a release); no second
# kernel fails unless KIWI_PKG_KVER2=none asked for that.
new_kernel() {
	case "${KIWI_PKG_KVER2:-}" in
	none)
		echo "SKIP new-kernel: KIWI_PKG_KVER2=none: the headers hook is only run by hand for $kver"
		return 0
		;;
	'') kver2=$(second_kernel) ;;
	*) kver2=$KIWI_PKG_KVER2 ;;
	esac
	if [ -z "$kver2" ]; then
		echo "check-pkg: apt offers no linux-headers-*-${kver#*-*-} but $kver's; the" \
			"DKMS hook of a kernel installed later is not shown (KIWI_PKG_KVER2=none" \
			"skips it on purpose)"
		return 1
	fi
	echo "check-pkg: second kernel $kver2 (apt install linux-headers-$kver2 after the packages)"
}

# repo_dirs: the checkout's path and its parents, relative to /: they are
# in the upper layer (the bind mount's mount point), whatever their names.
repo_dirs() {
	local d=${REPO#/}

	while [ -n "$d" ] && [ "$d" != . ]; do
		echo "$d"
		d=$(dirname "$d")
	done
}

# symlinks_changed: the paths read, but for symlinks rewritten to their
# base target (/vmlinuz and /initrd.img after a kernel came and went).
symlinks_changed() {
	local f

	while read -r f; do
		[ -L "$upper/$f" ] && [ "$(readlink "$upper/$f")" = "$(readlink "$BASE/$f")" ] ||
			echo "$f"
	done
}

# system_groups_only: the paths read, but for /etc/group, /etc/gshadow and
# their backups that differ from the base's only by added system groups
# (gid below 1000) not named after kiwi, and the empty lock file of the
# tool that added them: Debian's maintainer scripts add such groups
# (libibverbs1's rdma, udev's kvm, render...) and leave them on purge.
system_groups_only() {
	local f added

	while read -r f; do
		case "$f" in
		etc/.pwd.lock) [ -s "$upper/$f" ] || continue ;;
		etc/group | etc/group- | etc/gshadow | etc/gshadow-)
			added=$(comm -3 <(sort "$BASE/${f%-}") <(sort "$upper/$f"))
			[ -n "$(grep -v $'^\t' <<<"$added")" ] ||
				[ -n "$(cut -f2 <<<"$added" | cut -d: -f1 | grep -i kiwi)" ] ||
				[ -n "$(cut -f2 <<<"$added" | cut -d: -f1 |
					grep -vxF -f <(awk -F: '$3 < 1000 { print $1 }' "$upper/etc/group"))" ] ||
				continue
			;;
		esac
		echo "$f"
	done
}

# upper_clean: after unwind.sh, the upper layer holds what the root gained
# since the root step (which brought the base up to date); only the
# package managers' records, logs and caches, the module indexes, DKMS's
# signing key (which outlives any module) and system groups may stay, and
# nothing named after kiwi but log lines.
upper_clean() {
	local records left lines

	records="^(var/lib/(dpkg|apt)/|var/cache/(apt|debconf|ldconfig|man)/|etc/ld\.so\.cache$"
	records+="|usr/lib/modules/($kver${kver2:+|$kver2})/modules\.|var/lib/dkms/mok\.(key|pub)$)"
	left=$({
		upper_files | grep -vxF -f "$work/upper.before" |
			sed 's/^[^ ]* [^ ]* [^ ]* //; s/ -> .*//' | grep -Ev "$records"
		cd "$upper" && find var/lib/dpkg var/lib/apt -iname '*kiwi*'
		grep -l kiwi var/lib/dpkg/status
	} 2>/dev/null | grep -vxF -f <(repo_dirs) | sort -u | symlinks_changed | system_groups_only)
	if [ -n "$left" ]; then
		echo "the purge left in the root:"
		mapfile -t lines <<<"$left"
		printf '    %s\n' "${lines[@]}"
		return 1
	fi
	echo "the purge left nothing of kiwi in the root"
}

# purge_left_nothing: unwind.sh takes the root back to the base's
# packages; then the upper layer must be clean.
purge_left_nothing() {
	in_root "$PKG/unwind.sh" && upper_clean
}

step root make_root || { summary; exit; }
step new-kernel new_kernel
if step install in_root "$PKG/install.sh"; then
	step guest $lock_lab "$LAB" --root "$root" "$@" "$PKG/use.sh"
	if [ "$boot_kver2" = 1 ] && [ -n "$kver2" ]; then
		step guest-new-kernel $lock_lab "$LAB" --root "$root" \
			--kernel "$root/boot/vmlinuz-$kver2" "$@" "$PKG/use.sh"
	fi
else
	failed=$((failed + 1))
	echo "FAIL guest: not run (the install failed)"
fi
step purge in_root "$PKG/purge.sh"
[ "$make_dkms" = 0 ] || step make-dkms in_root "$PKG/make-dkms.sh"
step purge-left-nothing purge_left_nothing
summary
