#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The removal part of `make check-pkg`, run by tests/vm/pkg/run.sh in its
# throwaway chroot after the guest used the packages: `apt remove --purge`
# leaves no package, DKMS entry, file or module for modprobe, for either
# kernel; then the second kernel's packages go too.

. "$KIWI_SRC/tests/vm/scenarios/lib/common.bash"
. "$KIWI_SRC/tests/vm/pkg/lib.bash"

pkg_purge
[ -z "$PKG_KVER2" ] || pkg_new_kernel_purge
vt_finish
