#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Module unload: `modprobe -r kiwi` removes every kiwi device it still
# has (on eth0 and on lo); it is refused while a process holds verbs
# objects on one of them, until `rdma link delete` ends that use (the
# process sees IBV_EVENT_DEVICE_FATAL and cleans up); finally no kiwi
# module is left behind.

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

# 2. A process with a device open pins the module: `modprobe -r kiwi` is
# refused and changes nothing. `rdma link delete` still ends the process's
# use at once (DEVICE_FATAL; vt_hold checks the rest), which unpins it.
vt_link_add kiwiu0 lo || vt_die "cannot re-create kiwiu0 (autoload)"
"$VT_PROGS/vt_hold" -d kiwiu0 -t 90 -r "$VT_TMP/ready" > "$VT_TMP/hold.log" 2>&1 &
holder=$!
if vt_wait_file "$VT_TMP/ready" 60 $holder; then
	vt_log "kiwi refcnt with a holder: $(cat /sys/module/kiwi/refcnt)"
	if timeout 60 modprobe -r kiwi 2> "$VT_TMP/rmmod.err"; then
		vt_fail "modprobe -r kiwi succeeded while a process holds the device"
	else
		vt_pass "modprobe -r kiwi refused while in use: $(cat "$VT_TMP/rmmod.err")"
	fi
	vt_check "kiwi still loaded" test -e /sys/module/kiwi
	vt_eq "kiwi devices after the refused unload" "$(vt_kiwi_devs | tr '\n' ' ')" "kiwiu0 "
	vt_check "holder still running" kill -0 $holder
	vt_check "rdma link delete kiwiu0 while in use" timeout 60 rdma link delete kiwiu0
else
	vt_fail "vt_hold did not get ready: $(cat "$VT_TMP/hold.log")"
	kill -KILL $holder 2>/dev/null
fi
wait $holder
rc=$?
cat "$VT_TMP/hold.log"
vt_eq "vt_hold exit status" "$rc" 0
vt_eq "kiwi refcnt after the holder ended" "$(cat /sys/module/kiwi/refcnt)" 0
vt_check "modprobe -r kiwi after the holder ended" timeout 60 modprobe -r kiwi

# 3. Nothing left.
vt_check "lsmod does not list kiwi" test -z "$(lsmod | grep '^kiwi ')"
vt_check "no /sys/module/kiwi" test ! -e /sys/module/kiwi
vt_eq "kiwi devices at the end" "$(vt_kiwi_devs | tr '\n' ' ')" ""

vt_finish
