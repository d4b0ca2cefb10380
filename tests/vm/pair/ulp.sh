#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/vm/pair/ulp.sh [--full] [run.sh options]
#
# `make check-ulp` (not in make test: over 40 min under TCG, one combo's
# three cases take about 13): the kernel's own RDMA users over
# kiwi, in one two-guest boot (tests/vm/pair/run.sh with the cases of
# tests/vm/pair/ulp/): NVMe over Fabrics (nvmet-rdma / nvme-rdma), NFS over
# RDMA (nfsd / rpcrdma) and iSER (LIO isert / ib_iser), the target on the
# lab's server guest and the initiator on its client guest, for
#   kiwi-kiwi   kiwi target, kiwi initiator
#   siw-kiwi    Linux siw target, kiwi initiator
#   kiwi-siw    kiwi target, Linux siw initiator
# Short runs (--quick). `--full` (make check-ulp-full): the normal sizes.
# Device removal under the ULPs has no test yet (Documentation/ulps.md).
# Ends with 'N passed, N failed'.

set -uo pipefail

PAIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=--quick
if [ "${1:-}" = --full ]; then
	mode=
	shift
fi
# shellcheck disable=SC2086 # $mode is empty or one option
exec bash "$PAIR/run.sh" $mode --cases-dir "$PAIR/ulp" --mem 2048 "$@" \
	siw-kiwi/nvme+nfs+iser kiwi-siw/nvme+nfs+iser kiwi-kiwi/nvme+nfs+iser
