#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check-pkg-full`: the Debian packages in a guest that has no kiwi
# (tests/vm/pkg/run.sh --full boots it with --kiwi-ko none; the packages
# are in KIWI_BUILD/deb, from make deb). Everything of make check-pkg, but
# with DKMS building under the running kernel, as on a real host (about
# 640 s per build under TCG, twice): `apt install` builds kiwi.ko, kiwi(7)
# renders, the linux-headers hook builds it again for a kernel DKMS has not
# built it for, `rdma link add`, rping and perftest work through the
# packaged provider, and `apt remove --purge` leaves no file, DKMS entry
# or module. Everything the guest writes vanishes at power-off.
# kiwi-lab: timeout=2400

. "$KIWI_SRC/tests/vm/scenarios/lib/common.bash"

PKG_DEBS=$KIWI_BUILD/deb
PKG_KVER=$(uname -r)
. "$KIWI_SRC/tests/vm/pkg/lib.bash"

# The lab's own kiwi.ko is not installed (--kiwi-ko none); its libkiwi goes.
rm -f "$PKG_PROVIDER" "$PKG_DRIVER"
pkg_no_kiwi
pkg_install
pkg_man
pkg_kernel_hook
pkg_use "${KIWI_MY_IP:-10.77.0.1}"
pkg_purge
vt_finish
