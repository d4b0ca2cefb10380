# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the two-guest benchmarks (tests/bench/pair.sh, ulp.sh).

# bench_split_args ARG...: the arguments starting with '-' into the array
# args (options for tests/vm/pair/run.sh), the others into combos.
bench_split_args() {
	local a
	args=()
	combos=()
	for a in "$@"; do
		case "$a" in
		-*) args+=("$a") ;;
		*) combos+=("$a") ;;
		esac
	done
}
