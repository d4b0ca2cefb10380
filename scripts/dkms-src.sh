#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: scripts/dkms-src.sh [--version VER] [--dkms-conf] DIR
#
# Copies what DKMS needs to build kiwi.ko into DIR (normally
# /usr/src/kiwi-VER): Kbuild, the sources of kernel/ and kernel/proto/ and
# the uAPI header; nothing of the build tree. VER defaults to kiwi's
# version (KIWI_FW_VERSION in kernel/kiwi.h) and must equal it, so the
# module, its DKMS version and the Debian package agree. --dkms-conf also
# writes DIR/dkms.conf from debian/kiwi-dkms.dkms (dh_dkms installs it
# itself for the package). Used by debian/rules and `make dkms`.

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=
conf=0
while [ $# -gt 1 ]; do
	case "$1" in
	--version) version=${2:?--version needs a value}; shift ;;
	--dkms-conf) conf=1 ;;
	*) break ;;
	esac
	shift
done
dest=${1:?usage: $0 [--version VER] [--dkms-conf] DIR}

kiwi_version=$(sed -n 's/^#define KIWI_FW_VERSION "\(.*\)"$/\1/p' "$REPO/kernel/kiwi.h")
[ -n "$kiwi_version" ] || { echo "dkms-src: no KIWI_FW_VERSION in kernel/kiwi.h" >&2; exit 1; }
version=${version:-$kiwi_version}
if [ "$version" != "$kiwi_version" ]; then
	echo "dkms-src: version $version is not kiwi.ko's $kiwi_version (kernel/kiwi.h)" >&2
	exit 1
fi

mkdir -p "$dest/kernel/proto" "$dest/include/uapi/rdma"
install -m 0644 "$REPO/Kbuild" "$dest/"
install -m 0644 "$REPO"/kernel/*.[ch] "$dest/kernel/"
install -m 0644 "$REPO"/kernel/proto/*.[ch] "$dest/kernel/proto/"
install -m 0644 "$REPO/include/uapi/rdma/kiwi-abi.h" "$dest/include/uapi/rdma/"
if [ "$conf" = 1 ]; then
	sed "s/#MODULE_VERSION#/$version/" "$REPO/debian/kiwi-dkms.dkms" \
		> "$dest/dkms.conf"
fi
