#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or reuse from the cache) kiwi's debug kernel: Debian's linux-source-6.1
# with allnoconfig + scripts/debug-kernel.config: the smallest kernel the lab
# boots (KASAN, lockdep, kmemleak, KUnit, RDMA with siw/rxe, built-in
# virtio/9p/overlay). KIWI_DEBUG_FLAVOUR=ulp selects the ULP flavour, a
# kernel of its own that adds scripts/debug-kernel-ulp.config (NVMe-oF,
# NFS over RDMA, iSER) for make check-ulp-debug; CI builds only the base.
#
# The cache entry is /var/cache/kiwi/debug-kernel/<hash>/, <hash> covering every
# input of the final .config and of the compiler, and holds:
#   linux/        the configured and built tree, usable as KDIR for M= builds
#   bzImage       the kernel image
#   modules/      staging root: modules/lib/modules/<release>/ with modules.dep
#   kernel.env    KIWI_DEBUG_KDIR, KIWI_DEBUG_BZIMAGE, KIWI_DEBUG_MODROOT,
#                 KIWI_DEBUG_RELEASE (shell assignments)
# It is built only when cold (.complete missing), niced, with -j$JOBS (2).
#
# Tried and kept out of debug-kernel.config (2026-11-29, 2-core machine):
# CONFIG_ACPI=n with KASAN_OUTLINE cut the build from 2263 to 1892 CPU-s
# (drivers/acpi alone 198 CPU-s at -j1), but without ACPI's MADT the guest
# finds its CPUs in SeaBIOS's MP table, which lists only the boot CPU: the
# debug guest ran on 1 vCPU, losing the races the debug tiers are for, and
# check-debug took 436 CPU-s instead of 303. KASAN_OUTLINE alone compiles
# net/ipv4 in 113 CPU-s against 131 inline; its cost at run time under TCG
# was not measured apart from the 1-vCPU guest.
#
# usage: debug-kernel.sh [--print-dir | --config-only | --background LOG]
#   (no option)       build if cold, then print the kernel.env path on stdout
#   --print-dir       print the cache directory (built or not) and exit
#   --config-only     write and check linux/.config, do not compile
#   --background LOG  if cold and nobody is building it yet, start the build
#                     at nice 19 in the background (output to LOG) and
#                     return at once; a later call without option waits for
#                     it on the cache entry's lock

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FRAGMENTS=("$REPO/scripts/debug-kernel.config")
case ${KIWI_DEBUG_FLAVOUR:-base} in
base) ;;
ulp) FRAGMENTS+=("$REPO/scripts/debug-kernel-ulp.config") ;;
*) echo "debug-kernel: KIWI_DEBUG_FLAVOUR is base or ulp" >&2; exit 1 ;;
esac
TARBALL=${KIWI_LINUX_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
CACHE_ROOT=${KIWI_CACHE:-/var/cache/kiwi}/debug-kernel
JOBS=${JOBS:-2}
# Bump when the recipe below changes in a way the inputs do not show.
RECIPE=2

die() {
	echo "debug-kernel: $*" >&2
	exit 1
}

log() {
	echo "debug-kernel: $*" >&2
}

cache_key() {
	local srcver
	srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null ||
		 stat -c '%s %Y' "$TARBALL")
	{
		echo "recipe $RECIPE"
		echo "source $srcver"
		echo "base allnoconfig"
		gcc --version | head -n1
		cat "${FRAGMENTS[@]}"
	} | sha256sum | cut -c1-16
}

# Every line of the fragments must survive olddefconfig; "=n" means unset.
verify_config() {
	local cfg=$1 line opt val bad=0

	while IFS= read -r line; do
		case $line in
		CONFIG_*=*) ;;
		*) continue ;;
		esac
		opt=${line%%=*}
		val=${line#*=}
		if [ "$val" = n ]; then
			if grep -q "^$opt=" "$cfg"; then
				log "$opt: wanted n, got $(grep "^$opt=" "$cfg")"
				bad=1
			fi
		elif ! grep -qxF "$opt=$val" "$cfg"; then
			log "$opt: wanted $val, got $(grep "^$opt=\|^# $opt is" "$cfg" || echo absent)"
			bad=1
		fi
	done < <(cat "${FRAGMENTS[@]}")
	return $bad
}

configure() {
	local tree=$1

	make -s -C "$tree" allnoconfig
	(cd "$tree" && ./scripts/kconfig/merge_config.sh -m .config \
		"${FRAGMENTS[@]}" >/dev/null)
	make -s -C "$tree" olddefconfig
	verify_config "$tree/.config" || die "olddefconfig dropped fragment options (see above)"
	log "config checked: every line of ${FRAGMENTS[*]#"$REPO"/} kept"
}

extract() {
	local dir=$1 top

	rm -rf "$dir/linux" "$dir/src.tmp"
	mkdir -p "$dir/src.tmp"
	log "extracting $TARBALL"
	tar -xJf "$TARBALL" -C "$dir/src.tmp"
	top=$(ls "$dir/src.tmp")
	[ "$(echo "$top" | wc -l)" -eq 1 ] || die "unexpected tarball layout"
	mv "$dir/src.tmp/$top" "$dir/linux"
	rmdir "$dir/src.tmp"
}

build() {
	local dir=$1 tree=$1/linux release start

	start=$(date +%s)
	extract "$dir"
	configure "$tree"
	[ "${CONFIG_ONLY:-0}" = 1 ] && return 0
	log "building bzImage + modules with -j$JOBS (niced: nice 10), this takes a while"
	nice make -s -C "$tree" -j"$JOBS" bzImage modules
	release=$(make -s -C "$tree" kernelrelease)
	rm -rf "$dir/modules"
	nice make -s -C "$tree" INSTALL_MOD_PATH="$dir/modules" modules_install
	cp "$tree/arch/x86/boot/bzImage" "$dir/bzImage"
	cat > "$dir/kernel.env" <<-ENV
		KIWI_DEBUG_KDIR=$tree
		KIWI_DEBUG_BZIMAGE=$dir/bzImage
		KIWI_DEBUG_MODROOT=$dir/modules
		KIWI_DEBUG_RELEASE=$release
	ENV
	touch "$dir/.complete"
	times > "$dir/cpu-times"
	log "built $release in $(( $(date +%s) - start )) s (CPU of the build, user and system: $(tail -n 1 "$dir/cpu-times"))"
}

# background DIR LOG: see --background above.
background() {
	local dir=$1 log=$2

	if [ -e "$dir/.complete" ]; then
		log "cache warm: $dir"
		return 0
	fi
	mkdir -p "$dir" "$(dirname "$log")"
	if ! flock -n "$dir/.lock" true; then
		log "already being built in $dir"
		return 0
	fi
	nice -n 19 "$0" < /dev/null > "$log" 2>&1 &
	log "cold: building in the background at nice 19 (log $log)"
}

main() {
	local dir

	[ -r "$TARBALL" ] || die "$TARBALL missing (apt-get install linux-source-6.1)"
	dir=$CACHE_ROOT/$(cache_key)
	case ${1:-} in
	--print-dir)
		echo "$dir"
		return 0
		;;
	--config-only)
		CONFIG_ONLY=1
		;;
	--background)
		[ -n "${2:-}" ] || die "--background needs a log file"
		background "$dir" "$2"
		return 0
		;;
	"") ;;
	*)
		die "usage: debug-kernel.sh [--print-dir | --config-only | --background LOG]"
		;;
	esac

	mkdir -p "$dir"
	exec 9> "$dir/.lock"
	flock 9
	if [ -e "$dir/.complete" ]; then
		log "cache warm: $dir"
	else
		build "$dir"
		[ "${CONFIG_ONLY:-0}" = 1 ] && return 0
	fi
	echo "$dir/kernel.env"
}

main "$@"
