#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The end of `make check-pkg`, run by tests/vm/pkg/run.sh in its chroot
# after purge.sh: `apt remove --purge` of every package the install added
# (the packages' Depends, the kernel, the tools), so that dpkg's list is
# the base root's again (PKG_BASE_PKGS) and run.sh can check that the
# overlay's upper layer holds nothing but the package managers' records.

. "$KIWI_SRC/tests/vm/scenarios/lib/common.bash"
. "$KIWI_SRC/tests/vm/pkg/lib.bash"

: "${PKG_BASE_PKGS:?}"
mapfile -t added < <(pkg_dpkg_list | comm -13 "$PKG_BASE_PKGS" -)
vt_log "removing the ${#added[@]} packages the install added"
t0=$SECONDS
# sudo (dkms recommends it) refuses to go unless told.
if SUDO_FORCE_REMOVE=yes apt-get -y remove --purge "${added[@]}" > "$VT_TMP/unwind.log" 2>&1; then
	vt_pass "apt remove --purge of ${#added[@]} packages in $((SECONDS - t0)) s"
else
	tail -n 30 "$VT_TMP/unwind.log"
	vt_fail "apt remove --purge of the packages the install added"
fi
vt_eq "dpkg's packages are the base root's" \
	"$(pkg_dpkg_list | comm -3 "$PKG_BASE_PKGS" - | tr -d '\t')" ""
vt_finish
