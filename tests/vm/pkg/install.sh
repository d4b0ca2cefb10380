#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The install part of `make check-pkg`, run by tests/vm/pkg/run.sh in its
# throwaway chroot of the host with PKG_DEBS and PKG_KVER set: `apt
# install` of the packages (DKMS builds kiwi.ko natively for PKG_KVER, the
# kernel the guest boots), kiwi(7), and the linux-headers hook building
# kiwi.ko again for a kernel DKMS has not built it for.

. "$KIWI_SRC/tests/vm/scenarios/lib/common.bash"
. "$KIWI_SRC/tests/vm/pkg/lib.bash"

pkg_no_kiwi
pkg_install
pkg_man
pkg_kernel_hook
vt_finish
