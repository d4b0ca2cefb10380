#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The removal part of `make check-pkg`, run by tests/vm/pkg/run.sh in its
# chroot after the guest used the packages: `apt remove --purge kiwi-dkms
# libkiwi` leaves no package, DKMS entry, module for modprobe (for either
# kernel) or file named after kiwi anywhere in the root, nor a dpkg record
# of kiwi; then the second kernel's packages go too.

. "$KIWI_SRC/tests/vm/scenarios/lib/common.bash"
. "$KIWI_SRC/tests/vm/pkg/lib.bash"

pkg_purge
vt_eq "no file named after kiwi left in the root (but /tmp, /var/log, /var/cache/man)" "$(pkg_kiwi_files)" ""
vt_check "dpkg's status names no kiwi package" sh -c '! grep -qi kiwi /var/lib/dpkg/status'
[ -z "$PKG_KVER2" ] || pkg_new_kernel_purge
vt_finish
