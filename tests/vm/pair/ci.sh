#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/vm/pair/ci.sh [--full]
#
# `make check-pair` (part of make test): the two-guest tests in the short
# form CI can afford (--quick runs): every case kiwi<->kiwi, kiwi<->siw in
# both roles (rping, rdma_cm tools, perftest, integrity, tshark); rping
# with CRC off, MPA revision 1 and peer-to-peer mode against siw; and the
# combinations that must be refused cleanly (markers against siw, which
# does not implement them). `--full` (make check-pair-full): the long
# sweeps, adding siw<->siw and rxe<->rxe as references and the MPA
# flavours against siw with integrity and perftest too.
# Ends with 'N passed, N failed'; exit status 0 only if all passed.

set -uo pipefail

PAIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=--quick
[ "${1:-}" = --full ] && mode=--full

runs=(
	"kiwi-kiwi kiwi-siw siw-kiwi"
	"--cases rping kiwi:mpa_markers=Y-siw!refused siw-kiwi:mpa_markers=Y!refused kiwi:mpa_crc_off=Y-siw siw:rev1-kiwi kiwi-siw:p2p"
)
if [ "$mode" = --full ]; then
	runs+=(
		"siw-siw rxe-rxe"
		"--cases rping+integrity+perftest kiwi:mpa_crc_off=Y-siw siw:crc-kiwi:mpa_crc_off=Y siw:rev1-kiwi kiwi-siw:rev1 kiwi-siw:p2p siw:p2p-kiwi:mpa_p2p=N"
		"--cases rping kiwi:mpa_markers=Y-kiwi:mpa_markers=Y"
	)
fi

passed=0 failed=0
for r in "${runs[@]}"; do
	read -r -a args <<< "$r"
	for ((i = 0; i < ${#args[@]}; i++)); do
		[ "${args[$i]}" != --cases ] || args[$((i + 1))]=${args[$((i + 1))]//+/ }
	done
	out=$(mktemp)
	bash "$PAIR/run.sh" "$mode" "${args[@]}" | tee "$out"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -n 1)
	rm -f "$out"
	if [ -n "$line" ]; then
		read -r p _ f _ <<< "$line"
	else
		p=0 f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
