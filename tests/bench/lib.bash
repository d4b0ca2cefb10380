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

# bench_check_steps STEP...: fail (exit 2) unless every step has a form
# tests/bench/pair/perf.sh's run_step() runs, NAME[@SIZE][.qN][.e][%CPU],
# so a misspelt BENCH_STEPS stops here rather than after two guests boot.
bench_check_steps() {
	local s bad=0
	local re='^(ib_(write|send|read|atomic)_(bw(@[0-9]+)?(\.q[0-9]+)?|lat(@[0-9]+)?)(\.e)?|tcp_bw(\.q[0-9]+)?|sctp_bw|tcp_lat)(%([0-9]+|any))?$'
	for s in "$@"; do
		[[ "$s" =~ $re ]] && continue
		echo "BENCH_STEPS: unknown step '$s' (NAME[@SIZE][.qN][.e][%CPU], NAME ib_{write,send,read,atomic}_{bw,lat}, tcp_bw, tcp_lat or sctp_bw)" >&2
		bad=1
	done
	[ "$bad" = 0 ] || exit 2
}
