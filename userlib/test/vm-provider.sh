#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
#
# QEMU lab scenario for libkiwi (scripts/lab/run-scenario
# userlib/test/vm-provider.sh): libibverbs must pick libkiwi for a kiwi
# device, ibv_devinfo must show it as iWARP, and kiwi_provider_smoke must
# pass its checks of every object kind and the ring paths.
set -u

fail=0
say() { echo "vm-provider: $*"; }
bad() { say "FAIL $*"; fail=1; }

smoke=$KIWI_BUILD/user/userlib/kiwi_provider_smoke
[ -x "$smoke" ] || { say "FAIL $smoke not built"; exit 1; }

rdma link add kiwi0 type kiwi netdev eth0 || { say "FAIL rdma link add"; exit 1; }

ibv_devices | tee /tmp/ibv_devices.out
grep -q kiwi0 /tmp/ibv_devices.out || bad "ibv_devices does not list kiwi0"

if ibv_devinfo -v -d kiwi0 >/tmp/devinfo.out 2>&1; then
	sed -n '1,12p' /tmp/devinfo.out
	grep -q 'transport:[[:space:]]*iWARP' /tmp/devinfo.out ||
		bad "ibv_devinfo: transport is not iWARP"
	grep -q 'fw_ver:' /tmp/devinfo.out || bad "ibv_devinfo: no fw_ver"
else
	cat /tmp/devinfo.out
	bad "ibv_devinfo -d kiwi0 failed"
fi

"$smoke" kiwi0 || bad "kiwi_provider_smoke"

rdma link delete kiwi0 || bad "rdma link delete kiwi0"
[ $fail = 0 ] && say PASS
exit $fail
