#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest part of `scripts/demo.sh --one`: create a kiwi link on eth0, show it
# through the rdma tool and through libibverbs/libkiwi, then remove it and
# unload kiwi.ko. Fails at the first step that fails.

set -euo pipefail

run() {
	echo
	echo "# $*"
	"$@"
}

modinfo kiwi > /dev/null 2>&1 || {
	echo "demo: no kiwi.ko for $(uname -r) in the guest (build it with make)" >&2
	exit 1
}
run rdma link add kiwi0 type kiwi netdev eth0
run rdma link show
run ibv_devices
run ibv_devinfo -v -d kiwi0
run rdma resource show
run rdma link delete kiwi0
run modprobe -r kiwi
if lsmod | grep -q '^kiwi '; then
	echo "demo: kiwi.ko still loaded after modprobe -r" >&2
	exit 1
fi
echo
echo "demo: kiwi0 created, shown and removed; kiwi.ko unloaded"
