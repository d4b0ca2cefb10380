#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: boot two QEMU guests on one virtual Ethernet, create a kiwi
# iWARP device on each eth0 and run rping and ib_write_bw (over rdma_cm)
# between them (scripts/lab/demo/two-guests.sh). `scripts/demo.sh --one`
# boots one guest instead and shows the device with the rdma tool,
# ibv_devices and ibv_devinfo (through libkiwi) and its resources. Other
# options go to scripts/lab/run-scenario (e.g. -v). Build first (make demo
# does).

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAB=$REPO/scripts/lab

scenario=$LAB/demo/two-guests.sh
guests=(--two)
opts=()
for a in "$@"; do
	case "$a" in
	--one)
		scenario=$LAB/demo/one-guest.sh
		guests=()
		;;
	*) opts+=("$a") ;;
	esac
done

[ -f "$REPO/kiwi.ko" ] || echo "demo: $REPO/kiwi.ko is missing; run make first" >&2
exec "$LAB/run-scenario" --print-logs "${guests[@]}" "${opts[@]}" "$scenario"
