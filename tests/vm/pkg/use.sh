#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The part of `make check-pkg` that needs the running kernel: the guest
# boots the root tests/vm/pkg/run.sh installed the packages into (the lab
# adds neither kiwi.ko nor libkiwi there), loads the kiwi.ko the kernel
# hook built with DKMS, and runs ibv_devinfo, rping and perftest on kiwi0
# through the packaged provider.

. "$KIWI_SRC/tests/vm/scenarios/lib/common.bash"

PKG_DEBS=$KIWI_BUILD/deb
PKG_KVER=$(uname -r)
. "$KIWI_SRC/tests/vm/pkg/lib.bash"

pkg_check_installed "in the guest"
pkg_use "${KIWI_MY_IP:-10.77.0.1}"
vt_finish
