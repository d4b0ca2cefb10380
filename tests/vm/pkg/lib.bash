# SPDX-License-Identifier: GPL-2.0
#
# The checks of the Debian packages kiwi-dkms and libkiwi (sourced after
# tests/vm/scenarios/lib/common.bash). Each function runs the real
# packages' maintainer scripts or hooks and records its checks with
# vt_pass/vt_fail. They run in a lab guest (tests/vm/pkg/packages.sh, make
# check-pkg-full) or, where no running kernel is needed, in a throwaway
# chroot on the host (tests/vm/pkg/run.sh, make check-pkg): so nothing
# here asks `uname -r`; the kernel is PKG_KVER.
#
# Environment: PKG_DEBS (the folder of make deb), PKG_KVER (the kernel
# the module is built for), PKG_KVER2 (optional: a second kernel whose
# headers, and with PKG_KVER2_IMAGE=1 image, apt installs after the
# packages, make check-pkg).

: "${PKG_DEBS:?}" "${PKG_KVER:?}"
PKG_KVER2=${PKG_KVER2:-}
PKG_PROVIDER=/usr/lib/x86_64-linux-gnu/libibverbs/libkiwi-rdmav34.so
PKG_DRIVER=/etc/libibverbs.d/kiwi.driver
PKG_VER=$(dpkg-deb -f "$PKG_DEBS"/kiwi-dkms_*_all.deb Version 2>/dev/null)
# The packages pkg_new_kernel added, for pkg_new_kernel_purge (in /tmp,
# which the purge's upper-layer check ignores; kept across the chroot runs).
PKG_KVER2_PKGS=/tmp/kiwi-pkg-kernel2.list
export DEBIAN_FRONTEND=noninteractive

# pkg_dpkg_list: the packages dpkg knows, installed or with config files
# left, sorted.
pkg_dpkg_list() {
	dpkg-query -W -f '${db:Status-Status} ${Package}\n' |
		awk '$1 != "not-installed" { print $2 }' | sort
}

# pkg_kiwi_files: every file named after kiwi in the root, but in /tmp,
# /var/log, man-db's cache of formatted pages (/var/cache/man: `man kiwi`
# left kiwi.7 there; man-db's daily job expires it) and the checkout at
# KIWI_SRC (with the folders above it).
pkg_kiwi_files() {
	local f d

	find / -xdev \( -path /tmp -o -path /var/log -o -path /var/cache/man -o \
		-path "$KIWI_SRC" \) -prune -o \
		-iname '*kiwi*' -print | while read -r f; do
		d=$KIWI_SRC
		while [ "$d" != / ] && [ "$d" != "$f" ]; do d=$(dirname "$d"); done
		[ "$d" = "$f" ] || echo "$f"
	done
}

# pkg_kiwi_ko [KVER]: every kiwi.ko in the module tree of KVER (PKG_KVER).
pkg_kiwi_ko() {
	find "/lib/modules/${1:-$PKG_KVER}/" -name 'kiwi.ko*' 2>/dev/null
}

# pkg_no_kiwi: nothing of kiwi before the packages (a root that had kiwi
# installed proves nothing about them).
pkg_no_kiwi() {
	[ -n "$PKG_VER" ] || vt_die "no packages in $PKG_DEBS (make deb)"
	[ -z "$(pkg_kiwi_ko)" ] || vt_die "kiwi.ko present before the packages: $(pkg_kiwi_ko)"
	[ ! -e "$PKG_PROVIDER" ] || vt_die "$PKG_PROVIDER present before the packages"
	[ ! -e /var/lib/dkms/kiwi ] || vt_die "kiwi in the DKMS tree before the packages"
}

# pkg_apt die|fail LOG WHAT APT-ARG...: `apt-get -y APT-ARG...`, its output
# in $VT_TMP/LOG.log, passes as "WHAT in N s"; if it fails, the log's last
# 30 lines are shown and "WHAT failed" is vt_die (die) or vt_fail (fail),
# status 1.
pkg_apt() {
	local on_fail=vt_$1 log=$VT_TMP/$2.log what=$3 t0=$SECONDS

	shift 3
	if apt-get -y "$@" > "$log" 2>&1; then
		vt_pass "$what in $((SECONDS - t0)) s"
		return 0
	fi
	tail -n 30 "$log"
	"$on_fail" "$what failed"
	return 1
}

# pkg_install [PACKAGE...]: `apt install ./kiwi-dkms_*.deb
# ./libkiwi_*.deb PACKAGE...` (PACKAGEs from the mirror, in the same
# transaction), whose postinst builds and installs kiwi.ko with DKMS.
pkg_install() {
	pkg_apt die install "apt install ./kiwi-dkms ./libkiwi${*:+ $*}" \
		install "$PKG_DEBS"/kiwi-dkms_*_all.deb "$PKG_DEBS"/libkiwi_*_amd64.deb "$@"
	grep -iE 'dkms|kiwi|sign|building' "$VT_TMP/install.log" | sed 's/^/    /' | head -n 30
	pkg_check_installed "installed by apt"
}

# pkg_check_installed WHEN [KVER]: kiwi.ko built by DKMS for KVER
# (PKG_KVER), with that kernel's vermagic, signed with DKMS's MOK key, the
# only kiwi.ko of that kernel; libkiwi in place.
pkg_check_installed() {
	local k=${2:-$PKG_KVER}
	local ko=/lib/modules/$k/updates/dkms/kiwi.ko

	vt_check "dkms status $1: kiwi/$PKG_VER installed for $k" \
		grep -q "^kiwi/$PKG_VER, $k, x86_64: installed" <<<"$(dkms status kiwi)"
	vt_eq "$1: the kernel's only kiwi.ko is DKMS's" "$(pkg_kiwi_ko "$k")" "$ko"
	vt_eq "$1: modprobe finds it" "$(modinfo -k "$k" -n kiwi 2>&1)" "$ko"
	vt_eq "$1: signed by DKMS's MOK key" \
		"$(modinfo -k "$k" -F signer kiwi 2>&1)" "DKMS module signing key"
	vt_eq "$1: version" "$(modinfo -k "$k" -F version kiwi 2>&1)" "$PKG_VER"
	vt_eq "$1: vermagic" "$(modinfo -k "$k" -F vermagic kiwi 2>&1 | cut -d' ' -f1)" "$k"
	vt_eq "libkiwi where libibverbs looks" "$(dpkg -S "$PKG_PROVIDER" 2>&1)" \
		"libkiwi:amd64: $PKG_PROVIDER"
	vt_check "kiwi.driver names the provider" grep -qx 'driver kiwi' "$PKG_DRIVER"
}

# pkg_man: kiwi(7) is installed and renders with its sections and names
# every parameter modinfo lists for the packaged kiwi.ko.
pkg_man() {
	local page s

	vt_eq "man -w kiwi" "$(man -w kiwi 2>&1)" /usr/share/man/man7/kiwi.7.gz
	page=$(MANWIDTH=80 man -P cat kiwi 2>&1)
	for s in NAME DESCRIPTION DEVICES SETTINGS COUNTERS 'RESOURCE DETAILS' TRACEPOINTS \
		MODES INTEROPERABILITY LIMITS 'SECURE BOOT' 'SEE ALSO'; do
		vt_check "man kiwi renders section $s" grep -qx "$s" <<<"$page"
	done
	for s in $(modinfo -k "$PKG_KVER" -F parm kiwi | sed -n 's/^\([a-z0-9_]*\):.*/\1/p'); do
		vt_check "man kiwi describes the module parameter $s" grep -qw -- "$s" <<<"$page"
	done
	vt_eq "man kiwi: no groff warnings" \
		"$(MANWIDTH=80 man --warnings -P cat kiwi 2>&1 > /dev/null)" ""
}

# pkg_kernel_hook: a kernel installed later. DKMS knows kiwi but has no
# build for PKG_KVER, as for any new kernel (`dkms unbuild` keeps the
# sources registered; `dkms remove` of the only kernel would unregister
# kiwi altogether, which no kernel upgrade does). The hook a linux-headers
# package runs must build and install kiwi.ko again.
pkg_kernel_hook() {
	local t0

	dkms unbuild -m kiwi -v "$PKG_VER" -k "$PKG_KVER" > "$VT_TMP/unbuild.log" 2>&1 ||
		vt_fail "dkms unbuild -k $PKG_KVER: $(tail -n 3 "$VT_TMP/unbuild.log")"
	vt_eq "no kiwi.ko after dkms unbuild -k $PKG_KVER" "$(pkg_kiwi_ko)" ""
	vt_eq "dkms status after unbuild" "$(dkms status kiwi)" "kiwi/$PKG_VER: added"
	t0=$SECONDS
	/etc/kernel/header_postinst.d/dkms "$PKG_KVER" > "$VT_TMP/hook.log" 2>&1
	vt_log "header_postinst.d/dkms $PKG_KVER took $((SECONDS - t0)) s"
	sed 's/^/    /' "$VT_TMP/hook.log" | head -n 20
	pkg_check_installed "rebuilt by the kernel hook"
}

# pkg_new_kernel: a kernel installed after the packages, for real: `apt
# install linux-headers-PKG_KVER2` from Debian's mirror, whose postinst
# runs /etc/kernel/header_postinst.d, where DKMS's hook must build and
# install kiwi.ko for that kernel; kiwi stays installed for PKG_KVER.
pkg_new_kernel() {
	local k=$PKG_KVER2

	: > "$PKG_KVER2_PKGS"
	vt_eq "no kiwi.ko for $k before its headers" "$(pkg_kiwi_ko "$k")" ""
	vt_eq "dkms status before linux-headers-$k: no build for $k" \
		"$(dkms status kiwi | grep -c ", $k,")" 0
	pkg_kernel_apt "linux-headers-$k"
	grep -iE 'dkms|kiwi|sign|building' "$VT_TMP/kernel2.log" | sed 's/^/    /' | head -n 20
	pkg_check_installed "built by linux-headers-$k's hook" "$k"
	pkg_check_installed "and still" "$PKG_KVER"
}

# pkg_reinstall_every_kernel: with PKG_KVER2's headers installed too,
# `apt remove kiwi-dkms` takes kiwi.ko from both kernels, and `apt install`
# of it again builds kiwi.ko for both. Debian's DKMS postinst builds for
# the running and the newest kernel, PKG_KVER here (check-pkg's chroot
# runs PKG_KVER as far as `uname -r` tells); kiwi-dkms's own postinst must
# build it for PKG_KVER2, as for any kernel neither running nor newest.
pkg_reinstall_every_kernel() {
	local k

	pkg_apt die remove "apt remove kiwi-dkms" remove kiwi-dkms
	for k in $PKG_KVER $PKG_KVER2; do
		vt_eq "after apt remove kiwi-dkms: no kiwi.ko for $k" "$(pkg_kiwi_ko "$k")" ""
	done
	vt_eq "after apt remove kiwi-dkms: dkms status kiwi" "$(dkms status kiwi)" ""
	pkg_apt die reinstall "apt install ./kiwi-dkms again, with two kernels' headers" \
		install "$PKG_DEBS"/kiwi-dkms_*_all.deb
	grep -iE 'building|kiwi-dkms|installing' "$VT_TMP/reinstall.log" | sed 's/^/    /' | head -n 20
	vt_eq "DKMS's postinst builds for the running kernel only (kiwi-dkms's for $PKG_KVER2)" \
		"$(tr -d '\r' < "$VT_TMP/reinstall.log" | grep -m 1 '^Building for')" \
		"Building for $PKG_KVER"
	pkg_check_installed "installed with two kernels" "$PKG_KVER"
	pkg_check_installed "installed with two kernels" "$PKG_KVER2"
}

# pkg_new_kernel_image: PKG_KVER2's image too, for a guest to boot it
# (INITRD=No: the lab makes its own initramfs). DKMS's kernel hook finds
# kiwi.ko built for it already; it must stay the one the headers hook built.
pkg_new_kernel_image() {
	INITRD=No pkg_kernel_apt --no-install-recommends "linux-image-$PKG_KVER2"
	vt_check "/boot/vmlinuz-$PKG_KVER2 installed" test -r "/boot/vmlinuz-$PKG_KVER2"
	pkg_check_installed "with linux-image-$PKG_KVER2" "$PKG_KVER2"
}

# pkg_kernel_apt [APT-OPTION...] PACKAGE: `apt install` PACKAGE of PKG_KVER2,
# fatal with the reason if it fails; what it added goes to PKG_KVER2_PKGS
# for the purge.
pkg_kernel_apt() {
	dpkg-query -W -f '${Package}\n' | sort > "$VT_TMP/before.pkgs"
	pkg_apt die kernel2 "apt install ${*: -1} from Debian's mirror" install "$@"
	dpkg-query -W -f '${Package}\n' | sort | comm -13 "$VT_TMP/before.pkgs" - \
		> "$VT_TMP/added.pkgs"
	cat "$VT_TMP/added.pkgs" >> "$PKG_KVER2_PKGS"
	vt_log "apt install ${*: -1} added: $(paste -sd' ' "$VT_TMP/added.pkgs")"
}

# pkg_new_kernel_purge: remove what pkg_new_kernel installed, so that the
# root is back to the host's but for the package managers' records.
pkg_new_kernel_purge() {
	local pkgs

	mapfile -t pkgs < "$PKG_KVER2_PKGS"
	[ ${#pkgs[@]} -gt 0 ] || vt_die "no record of the packages linux-headers-$PKG_KVER2 added"
	pkg_apt fail kernel2-purge "apt remove --purge ${pkgs[*]}" remove --purge "${pkgs[@]}"
}

# pkg_purge: `apt remove --purge` leaves no package, DKMS entry, file or
# module for modprobe, for PKG_KVER and PKG_KVER2.
pkg_purge() {
	local left k

	pkg_apt fail purge "apt remove --purge kiwi-dkms libkiwi" remove --purge kiwi-dkms libkiwi
	vt_eq "dpkg knows no kiwi package" \
		"$(dpkg -l 'kiwi*' 'libkiwi*' 2>/dev/null | grep -c '^[a-z][a-z] ')" 0
	vt_eq "dkms status kiwi" "$(dkms status kiwi)" ""
	left=$(find /usr/src /var/lib/dkms /lib/modules /usr/lib/x86_64-linux-gnu \
		/etc /usr/share/man /usr/share/doc /var/lib/dpkg/info -name '*kiwi*' 2>/dev/null)
	vt_eq "files left" "$left" ""
	for k in $PKG_KVER $PKG_KVER2; do
		vt_check "modprobe finds no kiwi for $k" sh -c "! modprobe -n -S '$k' kiwi 2>/dev/null"
	done
}

# pkg_use IP: in a guest, the packaged kiwi.ko loads and the packaged
# provider serves ibv_devinfo, rping and perftest on kiwi0 over eth0.
pkg_use() {
	local ip=$1 t srv

	vt_check "modprobe kiwi" modprobe kiwi
	vt_eq "the loaded kiwi is the package's" "$(cat /sys/module/kiwi/version 2>&1)" "$PKG_VER"
	vt_link_add kiwi0 eth0 || vt_die "rdma link add kiwi0"
	vt_check "ibv_devinfo -d kiwi0 through the packaged libkiwi" \
		grep -q 'transport:[[:space:]]*iWARP' <<<"$(ibv_devinfo -d kiwi0 2>&1)"
	vt_rping "over the packaged kiwi" 7501 10 "$ip"
	for t in ib_write_bw ib_read_bw; do
		$t -d kiwi0 -R -F -s 65536 -n 50 -p 7502 > "$VT_TMP/$t.srv" 2>&1 &
		srv=$!
		vt_wait_for 10 vt_listening 7502
		vt_check "$t 64 KiB x 50 on the packaged kiwi" \
			timeout 180 $t -d kiwi0 -R -F -s 65536 -n 50 -p 7502 "$ip"
		wait $srv
	done
	vt_link_del kiwi0
	vt_check "modprobe -r kiwi" modprobe -r kiwi
}
