#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/bench/ulp-profile.sh [COMBO...] [run.sh options]
#
# `make bench-ulp-profile`: where the CPU of both guests goes during fio 4
# KiB random reads at queue depth 32 over NVMe-oF, with the combo's RDMA
# provider (default kiwi-kiwi) and with nvme-tcp in the same boot
# (tests/bench/ulp-profile/nvme.sh): context switches per 100 I/Os and
# perf report's symbols, printed for each guest. Numbers, not a test.

set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=tests/bench/lib.bash
. "$REPO/tests/bench/lib.bash"
bench_split_args "$@"
[ ${#combos[@]} -gt 0 ] || combos=(kiwi-kiwi)

results=$REPO/build/vm-results/ulp-profile-$(date +%Y%m%d-%H%M%S)-$$
echo "== kernel ULP profile: ${combos[*]} (results in $results)"
bash "$REPO/tests/vm/pair/run.sh" --cases-dir "$REPO/tests/bench/ulp-profile" --mem 2048 \
	--results "$results" "${args[@]}" "${combos[@]}"
rc=$?
for f in "$results"/lab/*/ulp-profile.*.txt; do
	[ -e "$f" ] || continue
	echo "==== ${f##*/}"
	cat "$f"
done
exit "$rc"
