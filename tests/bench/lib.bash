# SPDX-License-Identifier: GPL-2.0
#
# Helpers of the two-guest benchmarks (tests/bench/pair.sh, ulp.sh, and
# in the guest tests/bench/pair/perf.sh).

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

# bench_parse_step STEP: split a step of BENCH_STEPS,
# NAME[@SIZE][.qN][.e][%CPU], into step_name, step_size, step_qps,
# step_events (1 for .e) and step_pin (empty for the default vCPU; a number
# or "any"); false unless NAME takes what the step gives it: perftest's
# tests (ib_{write,send,read,atomic}_{bw,lat}) a size and .e (perftest -e),
# the bandwidth tests (ib_*_bw, tcp_bw) .qN (perftest -q N, iperf3 -P N),
# tcp_lat and sctp_bw only %CPU. pair.sh checks BENCH_STEPS with it before
# the guests boot, tests/bench/pair/perf.sh parses each step with it in
# the guest: one grammar for both.
bench_parse_step() {
	local re='^([a-z_]+)(@([0-9]+))?(\.q([0-9]+))?(\.e)?(%([0-9]+|any))?$'

	[[ "$1" =~ $re ]] || return 1
	step_name=${BASH_REMATCH[1]}
	step_size=${BASH_REMATCH[3]}
	step_qps=${BASH_REMATCH[5]}
	step_events=${BASH_REMATCH[6]:+1}
	# shellcheck disable=SC2034 # read by the caller (perf.sh's run_step)
	step_pin=${BASH_REMATCH[8]}
	case "$step_name" in
	ib_write_bw | ib_send_bw | ib_read_bw | ib_atomic_bw) return 0 ;;
	ib_write_lat | ib_send_lat | ib_read_lat | ib_atomic_lat)
		[ -z "$step_qps" ]
		;;
	tcp_bw) [ -z "$step_size$step_events" ] ;;
	tcp_lat | sctp_bw) [ -z "$step_size$step_qps$step_events" ] ;;
	*) return 1 ;;
	esac
}

# bench_step_has_base STEP: true for the steps followed by their CPU base
# (NAME.base, the same step moving BENCH_CPU_BASE_ITERS messages), the
# table's two CPU columns: ib_write_bw and tcp_bw, written bare.
bench_step_has_base() {
	case "$1" in
	ib_write_bw | tcp_bw) return 0 ;;
	esac
	return 1
}

# bench_check_steps STEP...: fail (exit 2) unless bench_parse_step takes
# every step, so a misspelt BENCH_STEPS stops here rather than after two
# guests boot.
bench_check_steps() {
	local s bad=0

	for s in "$@"; do
		bench_parse_step "$s" && continue
		echo "BENCH_STEPS: unknown step '$s' (NAME[@SIZE][.qN][.e][%CPU], NAME ib_{write,send,read,atomic}_{bw,lat}, tcp_bw, tcp_lat or sctp_bw)" >&2
		bad=1
	done
	[ "$bad" = 0 ] || exit 2
}
