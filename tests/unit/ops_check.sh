#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/unit/ops_check.sh [KIWI7]
#
# What an administrator reads about kiwi against what kiwi.ko has (ctest
# ops-check, no VM):
#  - kiwi(7) (Documentation/kiwi.7, or KIWI7) names in its own section
#    every counter (kernel/stats.c), every per-device setting and module
#    parameter (kernel/settings.c, kernel/qmem.c), every `rdma resource
#    show -dd` key (kernel/restrack.c) and every tracepoint
#    (kernel/kiwi_trace.h);
#  - every kernel log call is rate-limited or dynamic debug (kiwi(7):
#    "kiwi's kernel log lines ... are rate-limited"), but for the calls in
#    HAND_LIMITED, each once in a file that checks __ratelimit();
#  - every kernel log call names its device: ibdev_<level>_ratelimited or
#    ibdev_dbg (or an ibdev_ call in HAND_LIMITED), but for the calls in
#    NAMELESS_LOG (no ib_device exists yet there).
# One 'ok:' or 'FAIL:' line per check, then 'N passed, N failed'; exit
# status 0 only if all passed.

set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
K=$REPO/kernel
MAN=${1:-$REPO/Documentation/kiwi.7}
passed=0 failed=0

ok() {
	passed=$((passed + 1))
	echo "ok: $*"
}

bad() {
	failed=$((failed + 1))
	echo "FAIL: $*"
}

# section NAME: the text of kiwi(7)'s section .SH NAME, up to the next .SH.
section() {
	awk -v s=".SH $1" '/^\.SH / { on = ($0 == s) } on' "$MAN"
}

# names_in WHAT SECTION NAME...: each NAME occurs as a word in SECTION.
names_in() {
	local what=$1 sec text n missing=()

	sec=$2
	shift 2
	text=$(section "$sec")
	[ -n "$text" ] || {
		bad "kiwi(7) has no section $sec"
		return
	}
	[ $# -gt 0 ] || {
		bad "no $what found in the sources (did a pattern go stale?)"
		return
	}
	for n in "$@"; do
		grep -qw -- "$n" <<<"$text" || missing+=("$n")
	done
	if [ ${#missing[@]} = 0 ]; then
		ok "kiwi(7) $sec names all $# $what"
	else
		bad "kiwi(7) $sec does not name the $what: ${missing[*]}"
	fi
}

mapfile -t counters < <(sed -n 's/^\t\[KIWI_STAT_[A-Z_]*\]\.name = "\([a-z_0-9]*\)",$/\1/p' "$K/stats.c")
names_in counters COUNTERS "${counters[@]}"

mapfile -t settings < <(sed -n 's/^\t\[KIWI_SET_[A-Z_0-9]*\] = { "\([a-z_0-9]*\)",.*/\1/p' "$K/settings.c")
names_in "per-device settings" SETTINGS "${settings[@]}" abi_version

mapfile -t params < <(sed -n -e 's/^KIWI_PARAM(\([a-z_0-9]*\),.*/\1/p' \
	-e 's/^module_param[a-z_]*(\([a-z_0-9]*\),.*/\1/p' "$K"/*.c)
names_in "module parameters" SETTINGS "${params[@]}"

mapfile -t keys < <(grep -ho '(msg, "[a-z_0-9]*"' "$K/restrack.c" |
	sed 's/(msg, "\(.*\)"/\1/' | sort -u)
names_in "rdma resource -dd keys" "RESOURCE DETAILS" "${keys[@]}"

mapfile -t events < <(sed -n -e 's/^TRACE_EVENT[A-Z_]*(\([a-z_0-9]*\),$/\1/p' \
	-e 's/^DEFINE_EVENT([a-z_0-9]*, \([a-z_0-9]*\),$/\1/p' "$K/kiwi_trace.h")
names_in tracepoints TRACEPOINTS "${events[@]}"

# Kernel log calls rate-limited by hand: a ratelimit_state of their own,
# checked before the call. Each entry is FILE:TEXT, TEXT the start of the
# call as it stands in FILE.
HAND_LIMITED=(
	# A refused setting, one budget per kind of setting: a flood of bad
	# integers leaves a bad boolean's refusal logged (62-ops).
	"kernel/settings.c:ibdev_notice(ibdev, \"%s: refused '%.*s': expected %s\\n\","
	"kernel/settings.c:pr_notice(\"kiwi: parameter %s: refused '%.*s': expected %s\\n\","
)
hand_list=$(printf '%s\n' "${HAND_LIMITED[@]}")

# Kernel log calls: only the rate-limited ones, dynamic debug and WARN.
loud_re='(\b(pr|dev|ibdev|netdev)_(emerg|alert|crit|err|warn|warning|notice|info|cont)(_once)?\('
loud_re+='|\bprintk\().*'
loud=$(cd "$REPO" && grep -HoE "$loud_re" kernel/*.c kernel/*.h |
	grep -vxF -f <(echo "$hand_list"))
if [ -z "$loud" ]; then
	ok "every kernel log call is rate-limited or dynamic debug (${#HAND_LIMITED[@]} by hand)"
else
	bad "kernel log calls that are not rate-limited:"
	mapfile -t lines <<<"$loud"
	printf '    %s\n' "${lines[@]}"
fi
for e in "${HAND_LIMITED[@]}"; do
	f=$REPO/${e%%:*}
	if [ "$(grep -cF -- "${e#*:}" "$f")" = 1 ] &&
	   grep -qE '^\s*if \(!__ratelimit\(' "$f"; then
		ok "the one call rate-limited by hand: ${e:0:40}..."
	else
		bad "'$e' is not once in its file beside a __ratelimit() check"
	fi
done

# Kernel log calls that name no device: allowed only where no ib_device
# exists yet. Each entry is FILE:TEXT, TEXT the start of the call.
NAMELESS_LOG=(
	# rdma link add of a netdev kiwi cannot use: the line names the
	# requested device name and the netdev instead.
	'kernel/main.c:pr_info_ratelimited("%s on %s: not an Ethernet or loopback net_device\n",'
	# A refused module parameter: a default for devices made later.
	"${HAND_LIMITED[1]}"
)
log_re='\b((pr|dev|netdev|ibdev)_(emerg|alert|crit|err|warn|warning|notice|info|cont|dbg|debug|devel)'
log_re+='(_once|_ratelimited)?|printk(_once|_ratelimited|_deferred)?)\('
calls=$(cd "$REPO" && grep -HoE "$log_re.*" kernel/*.c kernel/*.h |
	grep -vE ':(ibdev_(emerg|alert|crit|err|warn|notice|info)_ratelimited|ibdev_dbg)\(' |
	grep -vxF -f <(grep -F ':ibdev_' <<<"$hand_list"))
nameless=$(grep -vxF -f <(printf '%s\n' "${NAMELESS_LOG[@]}") <<<"$calls")
if [ -z "$nameless" ]; then
	ok "every kernel log call names its device (but ${#NAMELESS_LOG[@]} allowed)"
else
	bad "kernel log calls that do not name their device (ibdev_*_ratelimited, ibdev_dbg):"
	mapfile -t lines <<<"$nameless"
	printf '    %s\n' "${lines[@]}"
fi
# Each allowed call is there once: a copy of it elsewhere in the file is
# not allowed by its entry, a stale entry goes.
for e in "${NAMELESS_LOG[@]}"; do
	n=$(grep -cxF -- "$e" <<<"$calls")
	if [ "$n" = 1 ]; then
		ok "the one allowed nameless log call in ${e%%:*}"
	else
		bad "the allowed nameless log call '$e' occurs $n times"
	fi
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
