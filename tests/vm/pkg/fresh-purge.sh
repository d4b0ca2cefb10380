#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The removal part of tests/vm/pkg/fresh.sh, in its chroot after the guest
# used the packages: `apt remove --purge kiwi-dkms libkiwi` leaves no
# package, DKMS entry, module or file (pkg_purge), and no file named
# after kiwi anywhere in the root but logs, nor a dpkg record of kiwi.

. "$KIWI_SRC/tests/vm/scenarios/lib/common.bash"
. "$KIWI_SRC/tests/vm/pkg/lib.bash"

pkg_purge
vt_eq "no file named after kiwi left in the root (but /tmp, /var/log)" \
	"$(find / -xdev \( -path /tmp -o -path /var/log \) -prune -o -iname '*kiwi*' -print)" ""
vt_check "dpkg's status names no kiwi package" sh -c '! grep -qi kiwi /var/lib/dpkg/status'
vt_finish
