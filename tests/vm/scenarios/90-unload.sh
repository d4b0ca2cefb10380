#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Module unload: `modprobe -r kiwi` removes every kiwi device it still
# has (on eth0 and on lo), also while a process holds verbs objects on
# one of them (the process sees IBV_EVENT_DEVICE_FATAL and cleans up), and
# finally leaves no kiwi module behind.

. "$(dirname "$0")/lib/common.bash"

vt_need_progs
grep -q '^kiwi ' /proc/modules || vt_check "modprobe kiwi" modprobe kiwi

# 1. Unload with two devices registered and nobody using them.
vt_clean_links
vt_link_add kiwi0 eth0
vt_link_add kiwiu0 lo
vt_check "modprobe -r kiwi with two devices" timeout 60 modprobe -r kiwi
vt_check "kiwi unloaded" test ! -e /sys/module/kiwi
vt_eq "kiwi devices after unload" "$(vt_kiwi_devs | tr '\n' ' ')" ""

# 2. Unload while vt_hold holds objects on kiwiu0.
vt_link_add kiwiu0 lo || vt_die "cannot re-create kiwiu0 (autoload)"
"$VT_PROGS/vt_hold" -d kiwiu0 -t 90 -r "$VT_TMP/ready" > "$VT_TMP/hold.log" 2>&1 &
holder=$!
if vt_wait_file "$VT_TMP/ready" 60 $holder; then
	timeout 60 modprobe -r kiwi
	rc=$?
	if [ "$rc" = 0 ]; then
		vt_pass "modprobe -r kiwi while a process holds objects"
	else
		vt_fail "modprobe -r kiwi while a process holds objects: status $rc"
		kill -KILL $holder 2>/dev/null
	fi
else
	vt_fail "vt_hold did not get ready: $(cat "$VT_TMP/hold.log")"
	kill -KILL $holder 2>/dev/null
fi
wait $holder
rc=$?
cat "$VT_TMP/hold.log"
vt_eq "vt_hold exit status" "$rc" 0
grep -q '^kiwi ' /proc/modules && vt_check "modprobe -r kiwi after the holder ended" timeout 60 modprobe -r kiwi

# 3. Nothing left.
vt_check "lsmod does not list kiwi" test -z "$(lsmod | grep '^kiwi ')"
vt_check "no /sys/module/kiwi" test ! -e /sys/module/kiwi
vt_eq "kiwi devices at the end" "$(vt_kiwi_devs | tr '\n' ' ')" ""

vt_finish
