#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The README's way without packages (make check-pkg-full: run.sh
# --make-dkms), in the chroot of the fresh Debian 12 root after the purge
# (dkms, make and the headers of PKG_KVER stay installed):
# `make dkms` copies the sources to /usr/src/kiwi-VER and has DKMS add,
# build and install kiwi.ko for PKG_KVER (the chroot's `uname -r`);
# `make dkms-remove` takes the module, the DKMS entry and the sources away.

. "$KIWI_SRC/tests/vm/scenarios/lib/common.bash"
. "$KIWI_SRC/tests/vm/pkg/lib.bash"

k=$PKG_KVER
ver=$(sed -n 's/^#define KIWI_FW_VERSION "\(.*\)"$/\1/p' "$KIWI_SRC/kernel/kiwi.h")
ko=/lib/modules/$k/updates/dkms/kiwi.ko

vt_eq "before make dkms: dkms status kiwi" "$(dkms status kiwi)" ""
t0=$SECONDS
if make -C "$KIWI_SRC" dkms > "$VT_TMP/dkms.log" 2>&1; then
	vt_pass "make dkms in $((SECONDS - t0)) s"
else
	tail -n 30 "$VT_TMP/dkms.log"
	vt_fail "make dkms failed"
fi
vt_check "dkms status: kiwi/$ver installed for $k" \
	grep -q "^kiwi/$ver, $k, x86_64: installed" <<<"$(dkms status kiwi)"
vt_eq "modprobe finds DKMS's kiwi.ko" "$(modinfo -k "$k" -n kiwi 2>&1)" "$ko"
vt_eq "its version" "$(modinfo -k "$k" -F version kiwi 2>&1)" "$ver"
vt_eq "its vermagic" "$(modinfo -k "$k" -F vermagic kiwi 2>&1 | cut -d' ' -f1)" "$k"
vt_check "make dkms-remove" make -C "$KIWI_SRC" dkms-remove
vt_eq "after make dkms-remove: dkms status kiwi" "$(dkms status kiwi)" ""
vt_check "after make dkms-remove: modprobe finds no kiwi" sh -c "! modprobe -n -S '$k' kiwi 2>/dev/null"
vt_eq "after make dkms-remove: no file named after kiwi (but /tmp, /var/log)" \
	"$(pkg_kiwi_files)" ""
vt_finish
