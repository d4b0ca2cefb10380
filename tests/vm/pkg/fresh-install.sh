#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The install part of tests/vm/pkg/fresh.sh, in its chroot of a fresh
# minbase Debian 12 with PKG_DEBS and PKG_KVER set: nothing the packages
# depend on is there; `apt install` of the two packages with the lab
# kernel's image and headers, rdmacm-utils, perftest and ibverbs-utils
# from the mirror must resolve their Depends and make DKMS build kiwi.ko
# for PKG_KVER. INITRD=No: the lab makes its own initramfs.

. "$KIWI_SRC/tests/vm/scenarios/lib/common.bash"
. "$KIWI_SRC/tests/vm/pkg/lib.bash"

# pkg_installed PACKAGE: dpkg has PACKAGE installed.
pkg_installed() {
	[ "$(dpkg-query -W -f '${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

# pkg_absent PACKAGE: dpkg has PACKAGE not installed.
pkg_absent() {
	! pkg_installed "$1"
}

pkg_no_kiwi
for p in dkms gcc make libibverbs1 rdma-core "linux-headers-$PKG_KVER"; do
	vt_check "fresh root: no $p before the packages" pkg_absent "$p"
done
pkg_apt die update "apt update" update
export INITRD=No
pkg_install "linux-image-$PKG_KVER" "linux-headers-$PKG_KVER" rdmacm-utils perftest ibverbs-utils
for p in dkms libibverbs1 rdma-core; do
	vt_check "apt installed $p for the packages" pkg_installed "$p"
done
vt_finish
