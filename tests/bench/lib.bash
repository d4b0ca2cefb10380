# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the two-guest benchmarks (tests/bench/pair.sh, ulp.sh).

# bench_split_args ARG...: the options (for tests/vm/pair/run.sh) into the
# array args, the others into combos. Options other than the flags below
# take a value (--kiwi-ko PATH, --timeout N, ...), as in run.sh.
bench_split_args() {
	args=()
	combos=()
	while [ $# -gt 0 ]; do
		case "$1" in
		--full | --quick | -v | --verbose | --print-logs) args+=("$1") ;;
		-*)
			args+=("$1" "${2:?$1 needs a value}")
			shift
			;;
		*) combos+=("$1") ;;
		esac
		shift
	done
}
