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
#    "kiwi's kernel log lines ... are rate-limited").
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

# Kernel log calls: only the rate-limited ones, dynamic debug and WARN.
loud=$(grep -nE '\b(pr|dev|ibdev|netdev)_(emerg|alert|crit|err|warn|warning|notice|info|cont)(_once)?\(|\bprintk\(' \
	"$K"/*.c "$K"/*.h | sed "s|^$REPO/||")
if [ -z "$loud" ]; then
	ok "every kernel log call is rate-limited or dynamic debug"
else
	bad "kernel log calls that are not rate-limited:"
	mapfile -t lines <<<"$loud"
	printf '    %s\n' "${lines[@]}"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
