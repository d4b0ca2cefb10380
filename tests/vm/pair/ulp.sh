#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/vm/pair/ulp.sh [--removal] [--full | --debug] [run.sh options]
#
# `make check-ulp` (about 21 min under TCG; make test runs the smoke
# version, ULP_SMOKE=1, in check-pair-ci): the kernel's own RDMA users over
# kiwi, in one two-guest boot (tests/vm/pair/run.sh with the cases of
# tests/vm/pair/ulp/): NVMe over Fabrics (nvmet-rdma / nvme-rdma), NFS over
# RDMA (nfsd / rpcrdma) and iSER (LIO isert / ib_iser), the target on the
# lab's server guest and the initiator on its client guest, for
#   kiwi-kiwi   kiwi target, kiwi initiator
#   siw-kiwi    Linux siw target, kiwi initiator
#   kiwi-siw    kiwi target, Linux siw initiator
# Short runs (--quick). `--full` (make check-ulp-full): the normal sizes.
# `--debug` (make check-ulp-debug): the same short runs on the ULP flavour
# of the debug kernel (KIWI_DEBUG_FLAVOUR=ulp scripts/debug-kernel.sh,
# built first if cold: about 20 minutes), kiwi.ko and siw built against
# it, any KASAN, lockdep or kmemleak report fails the case; about three
# times as long as check-ulp. kiwi-kiwi also runs nvme-removal
# (`rdma link delete`, `modprobe -r kiwi`, the link down and the
# net_device unregistered under I/O, Documentation/ulps.md); kiwi-siw and
# kiwi-kiwi run nvme-srq (the target's nvmet-rdma with use_srq=1);
# `--removal`
# (make check-ulp-removal, about 14 min) runs nvme-removal, nfs-removal,
# iser-removal, nvme-reconnect (admin commands on the queues error
# recovery made after the link went down) and nvme-race (the target
# deletes the controller while the host disconnects); the last four are
# not part of check-ulp.
# ULP_COMBOS replaces the combos (e.g. ULP_COMBOS=kiwi-kiwi/nvme); other
# arguments go to run.sh.
# Ends with 'N passed, N failed'.

set -uo pipefail

PAIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$PAIR/../../.." && pwd)
BUILD=${KIWI_BUILD:-$REPO/build}
mode=--quick
debug=()
default_combos="siw-kiwi/nvme+nfs+iser kiwi-siw/nvme+nfs+iser+nvme-srq kiwi-kiwi/nvme+nfs+iser+nvme-removal+nvme-srq"
if [ "${1:-}" = --removal ]; then
	default_combos=kiwi-kiwi/nvme-removal+nfs-removal+iser-removal+nvme-reconnect+nvme-race
	shift
fi
case ${1:-} in
--full)
	mode=
	shift
	;;
--debug)
	shift
	src=$BUILD/ulp-debug/src
	if ! env_file=$(KIWI_DEBUG_FLAVOUR=ulp "$REPO/scripts/debug-module.sh" "$src"); then
		echo "check-ulp-debug: the debug kernel or kiwi.ko does not build"
		echo "0 passed, 1 failed"
		exit 1
	fi
	# shellcheck source=/dev/null
	. "$env_file"
	debug=(--kernel "$KIWI_DEBUG_BZIMAGE" --module-dir "$KIWI_DEBUG_MODROOT"
		--kiwi-ko "$src/kiwi.ko" --siw-kdir "$KIWI_DEBUG_KDIR"
		--case-timeout 1800 --boot-timeout 900)
	;;
esac
read -r -a combos <<< "${ULP_COMBOS:-$default_combos}"
# shellcheck disable=SC2086 # $mode is empty or one option
exec bash "$PAIR/run.sh" $mode --cases-dir "$PAIR/ulp" --mem 2048 \
	"${debug[@]}" "$@" "${combos[@]}"
