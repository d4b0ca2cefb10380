#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The install part of `make check-pkg`, run by tests/vm/pkg/run.sh in its
# chroot of a fresh minbase Debian 12 (after `apt update`) with PKG_DEBS,
# PKG_KVER and PKG_KVER2 set: nothing the packages depend on is there;
# `apt install` of the two packages with the lab kernel's image and
# headers, rdmacm-utils, perftest, ibverbs-utils and man-db from the
# mirror, as a user would but without Recommends (the Depends alone must
# bring what the packages need, and fewer packages install faster), must
# resolve their Depends and make DKMS build
# kiwi.ko for PKG_KVER (the kernel the guest boots; INITRD=No: the lab
# makes its own initramfs); kiwi(7); then `apt install` of a second
# kernel's headers (PKG_KVER2), whose dpkg hook must make DKMS build
# kiwi.ko for that kernel too; with PKG_REINSTALL=1 `apt remove` and
# `apt install` of kiwi-dkms then with both kernels' headers present must
# remove and build kiwi.ko for both; with PKG_KVER2_IMAGE=1 its image as well,
# for a guest to boot. Without PKG_KVER2 (KIWI_PKG_KVER2=none) the hook
# is only run by hand for PKG_KVER.

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
pkg_dpkg_list > "${PKG_BASE_PKGS:?}"
for p in dkms gcc make openssl libibverbs1 rdma-core "linux-headers-$PKG_KVER"; do
	vt_check "fresh root: no $p before the packages" pkg_absent "$p"
done
export INITRD=No
pkg_install --no-install-recommends "linux-image-$PKG_KVER" "linux-headers-$PKG_KVER" \
	rdmacm-utils perftest ibverbs-utils man-db
for p in dkms openssl libibverbs1; do
	vt_check "apt installed $p for the packages" pkg_installed "$p"
done
pkg_man
if [ -n "$PKG_KVER2" ]; then
	pkg_new_kernel
	[ "${PKG_REINSTALL:-0}" = 0 ] || pkg_reinstall_every_kernel
	[ "${PKG_KVER2_IMAGE:-0}" = 0 ] || pkg_new_kernel_image
else
	vt_log "no second kernel: the headers hook runs by hand for $PKG_KVER"
	pkg_kernel_hook
fi
vt_finish
