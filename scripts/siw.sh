#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: scripts/siw.sh [--kdir DIR] [--variant SPEC] [--quiet]
#        scripts/siw.sh --all [--kdir DIR]
#
# Builds Linux siw (drivers/infiniband/sw/siw) out of tree from Debian's
# /usr/src/linux-source-6.1.tar.xz against the kernel build tree DIR (default:
# the Debian guest kernel's headers, /lib/modules/<newest>/build; give the
# debug kernel's tree to build for it) and prints the path of siw.ko. siw is
# the reference peer of kiwi's interop tests; Debian's kernel does not ship it.
#
# The result is cached outside the checkout in
#   /var/cache/kiwi/siw/<kernel-release>-<hash>/siw.ko
# where <hash> covers this script, the source tarball, the kernel tree and the
# variant; a cached module is reused (a build takes ~10-60 s).
#
# siw 6.1 has no module parameters: its MPA choices are `const` globals in
# siw_main.c. A variant is a comma-separated list that changes them before
# the build (the siw sources are otherwise untouched):
#   default  siw as shipped: MPA rev 2, CRC not requested (accepted if asked)
#   crc      mpa_crc_required = true (siw requests CRC and insists on it)
#   strict   mpa_crc_strict = true (siw refuses a peer that wants CRC)
#   rev1     mpa_version = 1 (MPA revision 1, no RFC 6581 IRD/ORD)
#   p2p      peer_to_peer = true (RFC 6581 peer-to-peer mode, RTR message)
#   gso      try_gso = true
# --all builds the variants the pair tests use (default crc strict rev1 p2p
# crc,rev1) and prints one "VARIANT PATH" line each.
#
# Environment: KIWI_CACHE (default /var/cache/kiwi), LINUX_SOURCE_TAR.

set -euo pipefail

CACHE=${KIWI_CACHE:-/var/cache/kiwi}/siw
TAR=${LINUX_SOURCE_TAR:-/usr/src/linux-source-6.1.tar.xz}
ALL_VARIANTS=(default crc strict rev1 p2p crc,rev1)

die() {
	echo "siw.sh: $*" >&2
	exit 1
}

kdir=
variant=default
quiet=0
all=0
while [ $# -gt 0 ]; do
	case "$1" in
	--kdir) kdir=${2:?--kdir needs a directory}; shift ;;
	--variant) variant=${2:?--variant needs a value}; shift ;;
	--quiet | -q) quiet=1 ;;
	--all) all=1 ;;
	-h | --help)
		sed -n '3,29s/^# \{0,1\}//p' "$0"
		exit 0
		;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
	shift
done

if [ -z "$kdir" ]; then
	kdir=$(ls -d /lib/modules/*/build 2>/dev/null | sort -V | tail -n 1)
	[ -n "$kdir" ] || die "no kernel headers in /lib/modules/*/build; give --kdir"
fi
kdir=$(readlink -f "$kdir")
uts=$kdir/include/generated/utsrelease.h
[ -f "$uts" ] || die "$kdir is not a prepared kernel build tree (no $uts)"
krel=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$uts")
[ -n "$krel" ] || die "cannot read the kernel release from $uts"
[ -f "$TAR" ] || die "no $TAR (apt-get install linux-source-6.1)"

# normalise SPEC: sorted, unique, validated; "default" alone means no change.
normalise() {
	local v out=()
	IFS=, read -r -a parts <<< "$1"
	for v in "${parts[@]}"; do
		case "$v" in
		default | '') ;;
		crc | strict | rev1 | p2p | gso) out+=("$v") ;;
		*) die "unknown variant '$v' (default crc strict rev1 p2p gso)" ;;
		esac
	done
	[ ${#out[@]} -gt 0 ] || { echo default; return; }
	printf '%s\n' "${out[@]}" | sort -u | paste -sd, -
}

# set_const FILE C-DECLARATION-AS-SHIPPED REPLACEMENT: the replacement must
# happen exactly once, so a changed siw source fails loudly.
set_const() {
	local file=$1 from=$2 to=$3
	[ "$(grep -cxF "$from" "$file")" = 1 ] ||
		die "siw source changed: '$from' not found once in $file"
	sed -i "s|^${from}\$|${to}|" "$file"
}

# pristine: the siw sources as shipped, extracted once per tarball (the
# xz tarball is read to its siw folder, which dominates the build time).
pristine() {
	local d
	d=$CACHE/src-$(stat -c '%s-%Y' "$TAR")
	if [ ! -d "$d/siw" ]; then
		mkdir -p "$CACHE"
		local t
		t=$(mktemp -d "$CACHE/.src.XXXXXX")
		tar -xJf "$TAR" -C "$t" --strip-components=4 \
			linux-source-6.1/drivers/infiniband/sw/siw ||
			die "cannot extract siw from $TAR"
		mkdir -p "$d"
		mv "$t/siw" "$d/siw" 2>/dev/null || [ -d "$d/siw" ] || die "cannot cache siw sources"
		rm -rf "$t"
	fi
	echo "$d/siw"
}

# build VARIANT: print the path of the cached siw.ko, building it if needed.
build() {
	local v key dir work src log
	v=$(normalise "$1")
	key=$({
		cat "$0"
		stat -c '%s %Y' "$TAR"
		echo "$kdir $krel $v"
		cat "$kdir/Module.symvers" 2>/dev/null | md5sum
	} | sha256sum | cut -c1-16)
	dir=$CACHE/$krel-$key
	if [ -f "$dir/siw.ko" ]; then
		echo "$dir/siw.ko"
		return
	fi
	mkdir -p "$CACHE"
	work=$(mktemp -d "$CACHE/.build.XXXXXX")
	log=$work/build.log
	cp -r "$(pristine)" "$work/siw"
	src=$work/siw
	case ",$v," in *,crc,*)
		set_const "$src/siw_main.c" 'const bool mpa_crc_required;' \
			'const bool mpa_crc_required = true;' ;;
	esac
	case ",$v," in *,strict,*)
		set_const "$src/siw_main.c" 'const bool mpa_crc_strict;' \
			'const bool mpa_crc_strict = true;' ;;
	esac
	case ",$v," in *,rev1,*)
		set_const "$src/siw_main.c" 'u_char mpa_version = MPA_REVISION_2;' \
			'u_char mpa_version = MPA_REVISION_1;' ;;
	esac
	case ",$v," in *,p2p,*)
		set_const "$src/siw_main.c" 'const bool peer_to_peer;' \
			'const bool peer_to_peer = true;' ;;
	esac
	case ",$v," in *,gso,*)
		set_const "$src/siw_main.c" 'const bool try_gso;' \
			'const bool try_gso = true;' ;;
	esac
	# Out of tree, CONFIG_RDMA_SIW is unset: name the module directly.
	sed -i 's/^obj-\$(CONFIG_RDMA_SIW) += siw.o$/obj-m += siw.o/' "$src/Makefile"
	grep -q '^obj-m += siw.o$' "$src/Makefile" || die "siw Makefile changed"
	[ "$quiet" = 1 ] || echo "siw.sh: building siw ($v) for $krel in $dir" >&2
	if ! make -C "$kdir" M="$src" -j "$(nproc)" modules > "$log" 2>&1; then
		tail -n 30 "$log" >&2
		rm -rf "$work"
		die "siw build failed"
	fi
	mkdir -p "$dir"
	cp "$src/siw.ko" "$dir/siw.ko.tmp"
	echo "$v" > "$dir/variant"
	mv "$dir/siw.ko.tmp" "$dir/siw.ko"
	rm -rf "$work"
	echo "$dir/siw.ko"
}

if [ "$all" = 1 ]; then
	for v in "${ALL_VARIANTS[@]}"; do
		echo "$(normalise "$v") $(build "$v")"
	done
else
	build "$variant"
fi
