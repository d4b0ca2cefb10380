#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/vm/pair/run.sh [options] [COMBO...]
#
# Two-guest tests (make check-pair): for every COMBO, every case of
# tests/vm/pair/cases/ runs between the lab's server guest (10.77.0.1) and
# client guest (10.77.0.2) in one two-guest boot; then the captures of the
# tshark case are decoded on the host by tests/vm/pair/tshark-check.sh and
# their MPA framing, markers and RTRs checked by
# tests/vm/pair/mpa-wire-check.py.
#
# COMBO is SERVER-CLIENT, each side PROVIDER[:OPT[+OPT...]]:
#   kiwi[:param=value+...]   kiwi.ko with those module parameters; ko=NAME
#                            loads build/ko/NAME/kiwi.ko instead (an older
#                            build, for before/after figures in one boot)
#   siw[:variant+...]        siw built by scripts/siw.sh (crc strict rev1 p2p gso)
#   rxe                      Debian's rdma_rxe (RoCEv2; not iWARP)
# and optional suffixes '!refused': the connection must fail cleanly (reject
# or close within the time limit, no hang), e.g. kiwi:markers=1-siw!refused;
# '@quick', '@normal', '@full': this combo runs in that mode whatever the
# option says, e.g. siw-kiwi@quick;
# and last '/CASE+CASE...': only these cases for this combo, e.g.
# siw:p2p-kiwi/perftest+integrity (one boot can run different sets).
# Default COMBOs: $PAIR_COMBOS or "siw-siw rxe-rxe kiwi-kiwi kiwi-siw siw-kiwi".
#
# Options:
#   --cases "A B"   cases to run (default: every cases/*.sh; PAIR_CASES)
#   --cases-dir D[:D...]  take the cases from these directories (the first
#                   that has CASE.sh) instead of tests/vm/pair/cases
#                   (tests/bench/pair.sh runs its own case this way)
#   --full          long sweeps (perftest -a over every size with more
#                   iterations, rping -C 10000); make check-pair-full
#   --quick         short runs (what make bench and smoke runs use)
#   --siw-kdir DIR  kernel tree to build siw against (default: from --kbuild,
#                   else Debian's headers)
#   --case-timeout SEC  limit per case instead of the mode's (420 s, full
#                   1800 s): slower kernels (make check-ulp-debug)
#   --results DIR   lab result folder (default build/vm-results/pair-<time>)
#   other options go to scripts/lab/run-scenario (--kernel, --kbuild,
#   --module-dir, --kiwi-ko, -v, --timeout, ...)
# Ends with 'N passed, N failed'; exit status 0 only if all passed.

set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
PAIR=$REPO/tests/vm/pair
LAB=$REPO/scripts/lab/run-scenario
# shellcheck source=scripts/lab/summary.bash
. "$REPO/scripts/lab/summary.bash"

lab_opts=()
cases=${PAIR_CASES:-}
cases_dirs=("$PAIR/cases")
mode=normal
siw_kdir=
case_timeout=
results=
combos=()
while [ $# -gt 0 ]; do
	case "$1" in
	--cases) cases=${2:?}; shift ;;
	--cases-dir)
		IFS=: read -r -a cases_dirs <<< "${2:?}"
		for i in "${!cases_dirs[@]}"; do
			cases_dirs[i]=$(cd "${cases_dirs[i]}" && pwd) || exit 2
		done
		shift
		;;
	--full) mode=full ;;
	--quick) mode=quick ;;
	--siw-kdir) siw_kdir=${2:?}; shift ;;
	--case-timeout) case_timeout=${2:?}; shift ;;
	--results) results=${2:?}; shift ;;
	--kbuild)
		lab_opts+=("$1" "${2:?}")
		[ -n "$siw_kdir" ] || siw_kdir=$2
		shift
		;;
	-v | --verbose | --print-logs) lab_opts+=("$1") ;;
	-h | --help)
		sed -n '3,42s/^# \{0,1\}//p' "$0"
		exit 0
		;;
	-*)
		lab_opts+=("$1" "${2:?$1 needs a value}")
		shift
		;;
	*) combos+=("$1") ;;
	esac
	shift
done
if [ ${#combos[@]} -eq 0 ]; then
	read -r -a combos <<< "${PAIR_COMBOS:-siw-siw rxe-rxe kiwi-kiwi kiwi-siw siw-kiwi}"
fi
if [ -z "$cases" ]; then
	cases=$(for d in "${cases_dirs[@]}"; do (cd "$d" && ls -- *.sh); done |
		sed 's/\.sh$//' | tr '\n' ' ')
fi

fail_setup() {
	echo "check-pair: $*"
	echo "0 passed, 1 failed"
	exit 1
}

build_dir=$REPO/build
make -s -C "$REPO/tests/vm/progs" KIWI_BUILD="$build_dir" ||
	fail_setup "tests/vm/progs does not build"

[ -n "$results" ] || results=$build_dir/vm-results/pair-$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$results"
wrappers=$results/cases
mkdir -p "$wrappers"

# siw_ko VARIANTS: the siw.ko for VARIANTS ('+'-separated), built if needed.
siw_ko() {
	local v=${1:-default}
	"$REPO/scripts/siw.sh" ${siw_kdir:+--kdir "$siw_kdir"} --quiet --variant "${v//+/,}"
}

# case_file CASE: the script of CASE, from the first cases directory with it.
case_file() {
	local d
	for d in "${cases_dirs[@]}"; do
		[ -f "$d/$1.sh" ] && { echo "$d/$1.sh"; return 0; }
	done
	return 1
}

# side SPEC: "PROVIDER|SIW_KO|KIWI_PARAMS" for one side of a combo ('|', not
# a tab: read collapses runs of whitespace separators, losing empty fields).
side() {
	local prov=${1%%:*} opt= ko=
	[ "$prov" = "$1" ] || opt=${1#*:}
	case "$prov" in
	siw) ko=$(siw_ko "$opt") || return 1 ;;
	kiwi) opt=${opt//+/ } ;;
	rxe) [ -z "$opt" ] || { echo "rxe takes no options" >&2; return 1; } ;;
	*) echo "unknown provider '$prov'" >&2; return 1 ;;
	esac
	[ "$prov" = kiwi ] || opt=
	printf '%s|%s|%s\n' "$prov" "$ko" "$opt"
}

# limit_for MODE: seconds a case may take (--case-timeout overrides).
limit_for() {
	[ -n "$case_timeout" ] && { echo "$case_timeout"; return; }
	case "$1" in
	full) echo 1800 ;;
	*) echo 420 ;;
	esac
}

# The caller's SOAK_*, BENCH_*, PROFILE_* and ULP_* variables reach the cases
# (tests/vm/soak/cases, tests/bench, tests/vm/pair/ulp).
pass_env=
for v in $(compgen -e | grep -E '^(SOAK|BENCH|PROFILE|ULP)_'); do
	pass_env+=$(printf 'export %s=%q' "$v" "${!v}")$'\n'
done

scenarios=()
port=20000
for combo in "${combos[@]}"; do
	expect=ok
	cmode=$mode
	spec=$combo
	combo_cases=$cases
	if [[ "$spec" = */* ]]; then
		combo_cases=${spec#*/}
		combo_cases=${combo_cases//+/ }
		spec=${spec%%/*}
	fi
	case "$spec" in *@quick | *@normal | *@full) cmode=${spec##*@} spec=${spec%@*} ;; esac
	case "$spec" in *'!refused') expect=refused; spec=${spec%!refused} ;; esac
	a=${spec%%-*}
	b=${spec#*-}
	[ "$a" != "$spec" ] || fail_setup "combo '$combo' is not SERVER-CLIENT"
	IFS='|' read -r pa koa ka <<< "$(side "$a")" || fail_setup "combo '$combo': bad server side"
	IFS='|' read -r pb kob kb <<< "$(side "$b")" || fail_setup "combo '$combo': bad client side"
	[ -n "$pa" ] && [ -n "$pb" ] || fail_setup "combo '$combo': cannot prepare"
	label=$(tr ':=' '_' <<< "$spec")
	for c in $combo_cases; do
		file=$(case_file "$c") || fail_setup "no case $c in ${cases_dirs[*]}"
		id=$label.$c
		port=$((port + 100))
		cat > "$wrappers/$id.sh" <<EOF
#!/bin/bash
# Generated by tests/vm/pair/run.sh: case $c for $combo.
# kiwi-lab: two-guest
# kiwi-lab: timeout=$(limit_for "$cmode")
export PAIR_ID='$id' PAIR_COMBO='$combo' PAIR_EXPECT='$expect' PAIR_MODE='$cmode'
export PAIR_QUICK=$([ "$cmode" = quick ] && echo 1 || echo 0) PAIR_PORT_BASE=$port
export PAIR_SERVER='$pa' PAIR_SIW_KO_SERVER='$koa' PAIR_KIWI_PARAMS_SERVER='$ka'
export PAIR_CLIENT='$pb' PAIR_SIW_KO_CLIENT='$kob' PAIR_KIWI_PARAMS_CLIENT='$kb'
${pass_env}exec bash "$file"
EOF
		chmod +x "$wrappers/$id.sh"
		scenarios+=("$wrappers/$id.sh")
	done
done

out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$LAB" --two --results "$results/lab" "${lab_opts[@]}" "${scenarios[@]}" | tee "$out"
summary=$(last_summary "$out")
if [ -z "$summary" ]; then
	echo "check-pair: the lab did not report (see above)"
	passed=0 failed=1
else
	read -r passed failed <<< "$summary"
fi

# The tshark and rtr cases leave a capture (on the server guest), each
# iWARP guest the mpa-wire-check.py options its settings imply (ID.expect)
# and the capturing guest tshark-check.sh options (ID.tshark-opts); a case
# that provokes Terminates allows them in both checkers. tshark's iwarp_mpa
# dissector loses the FPDU boundaries of a direction that carries markers
# and then reads payload as headers (a "Terminate" with L=0, "malformed"
# frames, in captures whose every FPDU mpa-wire-check.py walked), and it
# has no dissector for the ULP framing draft-00 profile at all: in both
# cases (an expectation "=Y": markers or ulpf00 asked for) tshark judges the
# startup frames only and mpa-wire-check.py the FPDUs or framing PDUs.
for pcap in "$results"/lab/*/*.pcap; do
	[ -f "$pcap" ] || continue
	rel=${pcap#"$results"/lab/}
	id=$(basename "$pcap" .pcap)
	read -r -a topts <<< "$(cat "$results"/lab/*/"$id.tshark-opts" 2>/dev/null)"
	expect=$(cat "$results"/lab/*/"$id.expect" 2>/dev/null | tr "\n" " ")
	wopts=()
	[[ " ${topts[*]} " = *" --allow-terminate "* ]] && wopts=(--allow-terminate)
	[[ "$expect" = *=Y* ]] && topts+=(--startup-only)
	if "$PAIR/tshark-check.sh" "${topts[@]}" "$pcap" > "$pcap.check" 2>&1; then
		echo "PASS tshark $rel ($(tail -n 1 "$pcap.check"))"
		passed=$((passed + 1))
	else
		echo "FAIL tshark $rel:"
		sed 's/^/    /' "$pcap.check" | tail -n 20
		failed=$((failed + 1))
	fi
	[ -n "$expect" ] || continue
	read -r -a expect <<< "$expect"
	if python3 "$PAIR/mpa-wire-check.py" "${wopts[@]}" "${expect[@]}" "$pcap" > "$pcap.wire" 2>&1; then
		echo "PASS mpa-wire-check $rel ($(tail -n 1 "$pcap.wire"))"
		passed=$((passed + 1))
	else
		echo "FAIL mpa-wire-check $rel:"
		grep -v '^ok ' "$pcap.wire" | tail -n 20 | sed 's/^/    /'
		failed=$((failed + 1))
	fi
done
echo "results: $results"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
