#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kiwi-lab: timeout=900
#
# The ring stress scenario (tests/vm/scenarios/65-ring-stress.sh) for ten
# minutes instead of 40 seconds. Not part of make check-vm:
#   flock /tmp/kiwi-vm.lock tests/vm/run.sh ring-stress-soak

VT_STRESS_SECONDS=${VT_STRESS_SECONDS:-600} exec bash \
	"$(dirname "$0")/../scenarios/65-ring-stress.sh"
