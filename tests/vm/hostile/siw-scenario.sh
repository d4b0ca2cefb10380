#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kiwi-lab: timeout=420
#
# The hostile-peer scenario against Linux siw instead of kiwi (proof of the
# harness; siw deviations show as XFAIL):
#   scripts/lab/run-scenario --kiwi-ko none tests/vm/hostile/siw-scenario.sh
HOSTILE_DEV=siw exec "${KIWI_SRC:-$(dirname "$0")/../../..}/tests/vm/scenarios/70-hostile-peer.sh"
