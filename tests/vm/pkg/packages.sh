#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian packages in a guest that has no kiwi (tests/vm/pkg/run.sh
# boots it with --kiwi-ko none; the packages are in KIWI_BUILD/deb, from
# make deb): `apt install ./kiwi-dkms_*.deb ./libkiwi_*.deb` builds
# kiwi.ko with DKMS (signed with DKMS's MOK key) for the running kernel;
# then `rdma link add`, rping and perftest work through the packaged
# provider, and `man kiwi` renders. A kernel (headers) installation is
# replayed: with kiwi.ko removed from DKMS for the kernel, the hook a
# linux-headers package runs (/etc/kernel/header_postinst.d/dkms) builds
# it again. `apt remove --purge` leaves no file, DKMS entry or module.
# Everything the guest writes vanishes at power-off (tmpfs overlay).
# kiwi-lab: timeout=2400

. "$KIWI_SRC/tests/vm/scenarios/lib/common.bash"

DEBS=$KIWI_BUILD/deb
IP=${KIWI_MY_IP:-10.77.0.1}
KVER=$(uname -r)
PROVIDER=/usr/lib/x86_64-linux-gnu/libibverbs/libkiwi-rdmav34.so
DRIVER=/etc/libibverbs.d/kiwi.driver
export DEBIAN_FRONTEND=noninteractive

# 0. A guest without kiwi: no module, no provider (the lab's copies go).
modinfo kiwi > /dev/null 2>&1 && vt_die "kiwi.ko present before the packages"
rm -f "$PROVIDER" "$DRIVER"
ls "$DEBS"/kiwi-dkms_*_all.deb "$DEBS"/libkiwi_*_amd64.deb > /dev/null ||
	vt_die "no packages in $DEBS (make deb)"
ver=$(dpkg-deb -f "$DEBS"/kiwi-dkms_*_all.deb Version)

# 1. Install: DKMS builds and installs kiwi.ko.
t0=$(date +%s)
if apt install -y "$DEBS"/kiwi-dkms_*_all.deb "$DEBS"/libkiwi_*_amd64.deb \
	> "$VT_TMP/install.log" 2>&1; then
	vt_pass "apt install ./kiwi-dkms ./libkiwi in $(($(date +%s) - t0)) s"
else
	tail -n 30 "$VT_TMP/install.log"
	vt_die "apt install failed"
fi
grep -iE 'dkms|kiwi|sign' "$VT_TMP/install.log" | sed 's/^/    /' | head -n 30
vt_check "dkms status: kiwi/$ver installed for $KVER" \
	grep -q "kiwi/$ver, $KVER, x86_64: installed" <<<"$(dkms status kiwi)"
vt_eq "kiwi.ko from DKMS" "$(modinfo -n kiwi 2>&1)" \
	"/lib/modules/$KVER/updates/dkms/kiwi.ko"
vt_eq "kiwi.ko signed by DKMS's MOK key" "$(modinfo -F signer kiwi 2>&1)" \
	"DKMS module signing key"
vt_eq "kiwi.ko version" "$(modinfo -F version kiwi)" "$ver"
vt_check "libkiwi installed where libibverbs looks" test -f "$PROVIDER"
vt_check "kiwi.driver installed" grep -qx 'driver kiwi' "$DRIVER"

# 2. It works: device, provider, rping, perftest.
vt_link_add kiwi0 eth0 || vt_die "rdma link add kiwi0"
vt_check "ibv_devinfo -d kiwi0 through the packaged libkiwi" \
	grep -q 'transport:[[:space:]]*iWARP' <<<"$(ibv_devinfo -d kiwi0 2>&1)"
vt_rping "over the packaged kiwi" 7501 10 "$IP"
for t in ib_write_bw ib_read_bw; do
	$t -d kiwi0 -R -F -s 65536 -n 50 -p 7502 > "$VT_TMP/$t.srv" 2>&1 &
	srv=$!
	vt_wait_for 10 vt_listening 7502
	vt_check "$t 64 KiB x 50 on the packaged kiwi" \
		timeout 180 $t -d kiwi0 -R -F -s 65536 -n 50 -p 7502 "$IP"
	wait $srv
done

# 3. The manual page.
vt_eq "man -w kiwi" "$(man -w kiwi 2>&1)" /usr/share/man/man7/kiwi.7.gz
page=$(MANWIDTH=80 man -P cat kiwi 2> "$VT_TMP/man.err")
vt_check "man kiwi renders its sections" \
	sh -c 'for s in SETTINGS COUNTERS TRACEPOINTS "SECURE BOOT"; do
		grep -q "^$s" || exit 1; done' <<<"$page"
vt_check "man kiwi: settings and counters named" \
	grep -q 'mpa_timeout' <<<"$page"
vt_eq "man kiwi: no groff warnings" "$(man --warnings -P cat kiwi 2>&1 >/dev/null)" ""

# 4. A kernel installed later: the hook of linux-headers rebuilds kiwi.ko.
vt_link_del kiwi0
vt_check "modprobe -r kiwi" modprobe -r kiwi
dkms remove -m kiwi -v "$ver" -k "$KVER" > "$VT_TMP/remove.log" 2>&1
vt_check "kiwi.ko gone after dkms remove -k $KVER" \
	sh -c '! modinfo kiwi > /dev/null 2>&1'
t0=$(date +%s)
/etc/kernel/header_postinst.d/dkms "$KVER" > "$VT_TMP/hook.log" 2>&1
vt_log "header_postinst.d/dkms took $(($(date +%s) - t0)) s"
vt_check "kiwi.ko rebuilt by the kernel hook" \
	grep -q "kiwi/$ver, $KVER, x86_64: installed" <<<"$(dkms status kiwi)"
vt_link_add kiwi0 eth0 && vt_link_del kiwi0
modprobe -r kiwi

# 5. Remove and purge: nothing stays.
if apt remove --purge -y kiwi-dkms libkiwi > "$VT_TMP/purge.log" 2>&1; then
	vt_pass "apt remove --purge kiwi-dkms libkiwi"
else
	tail -n 20 "$VT_TMP/purge.log"
	vt_fail "apt remove --purge failed"
fi
vt_eq "dpkg knows no kiwi package" "$(dpkg -l 'kiwi*' 'libkiwi*' 2>/dev/null | grep -c '^[a-z][a-z] ')" 0
vt_eq "dkms status kiwi" "$(dkms status kiwi)" ""
left=$(find /usr/src /var/lib/dkms /lib/modules/"$KVER" /usr/lib/x86_64-linux-gnu/libibverbs \
	/etc/libibverbs.d /usr/share/man /usr/share/doc -name '*kiwi*' 2>/dev/null)
vt_eq "files left" "$left" ""
vt_check "no kiwi.ko for modprobe" sh -c '! modinfo kiwi > /dev/null 2>&1'
vt_finish
