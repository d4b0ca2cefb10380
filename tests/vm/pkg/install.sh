#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The install part of `make check-pkg`, run by tests/vm/pkg/run.sh in its
# throwaway chroot of the host with PKG_DEBS, PKG_KVER and PKG_KVER2 set:
# `apt install` of the packages (DKMS builds kiwi.ko natively for PKG_KVER,
# the kernel the guest boots), kiwi(7), then `apt install` of a second
# kernel's headers (PKG_KVER2), whose dpkg hook must make DKMS build
# kiwi.ko for that kernel too; `apt remove` and `apt install` of
# kiwi-dkms then with both kernels' headers present must remove and
# build kiwi.ko for both; with PKG_KVER2_IMAGE=1 its image as well,
# for a guest to boot. Without PKG_KVER2 (apt knows no other
# kernel) the hook is only run by hand for PKG_KVER.

. "$KIWI_SRC/tests/vm/scenarios/lib/common.bash"
. "$KIWI_SRC/tests/vm/pkg/lib.bash"

pkg_no_kiwi
pkg_install
pkg_man
if [ -n "$PKG_KVER2" ]; then
	pkg_new_kernel
	pkg_reinstall_every_kernel
	[ "${PKG_KVER2_IMAGE:-0}" = 0 ] || pkg_new_kernel_image
else
	vt_log "no second kernel: the headers hook runs by hand for $PKG_KVER"
	pkg_kernel_hook
fi
vt_finish
