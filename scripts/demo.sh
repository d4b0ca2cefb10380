#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: boot a QEMU guest, create a kiwi iWARP device on its eth0,
# show it with the rdma tool and ibv_devices/ibv_devinfo (through libkiwi),
# show its resources, delete it and unload kiwi.ko.
# `scripts/demo.sh --two` boots two guests and runs rping and ib_write_bw
# between them. Other options go to scripts/lab/run-scenario (e.g. -v).
# Build first (make demo does).

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAB=$REPO/scripts/lab

scenario=$LAB/demo/one-guest.sh
opts=()
for a in "$@"; do
	case "$a" in
	--two)
		scenario=$LAB/demo/two-guests.sh
		opts+=(--two)
		;;
	*) opts+=("$a") ;;
	esac
done

[ -f "$REPO/kiwi.ko" ] || echo "demo: $REPO/kiwi.ko is missing; run make first" >&2
exec "$LAB/run-scenario" --print-logs "${opts[@]}" "$scenario"
