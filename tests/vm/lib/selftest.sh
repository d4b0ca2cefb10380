#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Lab self-test scenario: checks what the lab promises every scenario
# (root, the agreed environment, 9p root at the same paths, a writable
# overlay, lo and eth0 up with KIWI_MY_IP, RDMA core modules, the shared
# folder, the TSC as clocksource and CLOCK_MONOTONIC in step between the
# vCPUs: lib/clock-check.py) and prints what it found. Run: scripts/lab/run-scenario selftest

set -eu

fail() {
	echo "selftest: FAIL: $*" >&2
	exit 1
}

echo "kernel $(uname -r) on $(hostname), role $KIWI_ROLE"
[ "$(id -u)" = 0 ] || fail "not root"
for v in KIWI_SRC KIWI_BUILD KIWI_ROLE KIWI_MY_IP KIWI_SHARED KIWI_RESULTS KIWI_LIB; do
	[ -n "${!v:-}" ] || fail "$v is not set"
done
[ -f "$KIWI_SRC/scripts/lab/run-scenario" ] || fail "KIWI_SRC=$KIWI_SRC is not the repo"
echo overlay > /etc/kiwi-selftest || fail "root overlay not writable"
rm /etc/kiwi-selftest
ip -br addr show dev eth0 | grep -q "$KIWI_MY_IP/" || fail "eth0 lacks $KIWI_MY_IP"
ip -br link show dev lo | grep -q UP || fail "lo is down"
[ -e /sys/module/ib_uverbs ] || fail "ib_uverbs not loaded"
touch "$KIWI_SHARED/selftest.$KIWI_ROLE" || fail "shared folder not writable"
cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
[ "$cs" = tsc ] || fail "clocksource $cs, not tsc (tsc=reliable)"
"$KIWI_LIB/clock-check.py" || fail "clock-check.py failed (above)"
if [ "$KIWI_ROLE" != single ]; then
	ping -c 2 -W 5 "$KIWI_PEER_IP" || fail "peer $KIWI_PEER_IP unreachable"
	"$KIWI_LIB/barrier" selftest 120 || fail "barrier"
fi
if modinfo kiwi > /dev/null 2>&1; then
	echo "kiwi.ko installed: $(modinfo -F filename kiwi)"
else
	echo "kiwi.ko not installed"
fi
ls /etc/libibverbs.d/kiwi.driver 2> /dev/null || echo "libkiwi not installed"
lsmod | head -n 20
echo "selftest: ok"
