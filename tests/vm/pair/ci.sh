#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/vm/pair/ci.sh [--ci | --full]
#
# `--ci` (make check-pair-ci, the pair tier of make test): the subset CI
# can afford in one two-guest boot, plus the soak boot below, 20 minutes
# in a ci-fresh run (first boot 14, soak boot 5) before rping, rdmacm and
# integrity ran one direction for combos alike on both guests (KIWI_VM_CI
# below), captures went to the guests' tmpfs and the sctp case read its
# capture with one tshark pass: on a busy 2-core host the first boot's
# cases those touch then took 268 s, 351 in a run half an hour before
# (the other cases 205 s and 202; first boot 516 s, soak boot 346):
# kiwi<->kiwi rdmacm, integrity, rping, atomics, compat, mtu and txbuf
# (fewer Writes and iterations under KIWI_VM_CI: 22-24 s of a boot on
# 2026-11-30, 28 s in one after the rping and mtu cases) and pack; DDP over
# SCTP rping and the sctp case; the markers wire case;
# the draft-00 profile's rping, wire and mtu cases; siw:p2p as server with
# integrity, kiwi with siw:p2p's RTRs (rtr, its capture checked by tshark
# and mpa-wire-check.py), siw as shipped as client (rping); and the soak
# boot, which also runs the kernel ULPs' smoke cases (NVMe-oF, NFS over
# RDMA, iSER kiwi<->kiwi, ULP_SMOKE=1: about 2.5 minutes). Everything else
# below runs in make check-pair and check-pair-full only (the whole quick
# list took about 31 minutes, too much for CI).
#
# No option (make check-pair): the two-guest tests in short runs (--quick)
# in two two-guest boots, about 31 minutes: the first
# boot took 20 in a CI run before the compat, wire, SCTP and draft-00
# additions, which add about 7 (measured on a loaded host), the soak boot
# about 4:
#  - every case (rping, rdma_cm tools, perftest, integrity, tshark, RFC 7306
#    atomics, memory windows, the extended verbs with ibv_rereg_mr, and
#    compat: RDMAC revision 0 in both roles, private data of 0, 255 and
#    300 octets, the draft-00 profile against a kiwi without it in both
#    roles, mtu: FPDUs follow a path MTU that drops and rises
#    mid-connection, and txbuf: the transmit buffer is renewed while TCP
#    holds it, and a sender whose memory cgroup cannot be charged another
#    buffer waits and goes on, its data checked, and pack: small messages
#    share TCP segments, each still starting with an FPDU) for
#    kiwi<->kiwi, pack also with the draft-00 profile (a segment per
#    framing PDU);
#  - MPA markers kiwi<->kiwi: the tshark case with markers asked for by
#    both guests, and the wire case, where the client guest turns its
#    markers off (markers in one direction only, rping both ways);
#    tests/vm/pair/mpa-wire-check.py checks every marker captured;
#  - DDP over SCTP kiwi<->kiwi (llp=sctp): rping (verified data both ways),
#    the sctp case (tshark on the association and its PPIDs, a hostile
#    raw SCTP peer, the listener's backlog, Writes, Read Responses and
#    Sends placed ahead of a gap and delivered in order), the rdma_cm tools, the
#    integrity program (SRQ pass) and perftest (bandwidth at 64 KiB, the
#    latency tests; every size in --full);
#  - kiwi<->siw:p2p in both roles: integrity with a siw server, perftest
#    with a kiwi server; every RFC 6581 RTR type in both roles (rtr, also
#    kiwi<->kiwi); with the siw server, what a peer without them does
#    with kiwi's extensions: a kiwi requester's RFC 7306 atomic completes
#    with IBV_WC_REM_OP_ERR (atomics), the siw peer writes, reads and
#    invalidates a kiwi guest's memory window, then is refused (mw), siw
#    refuses the extended CQ and QP with EOPNOTSUPP (exverbs). For the cases whose server sends first
#    (ib_write_lat) siw runs RFC 6581 peer-to-peer mode (siw:p2p): a kiwi
#    responder, as RFC 5044 section 7.1.2 demands, sends nothing before
#    the initiator's first FPDU, and siw as shipped sends its RTR only with
#    peer_to_peer (Documentation/interop.md);
#  - siw as shipped in both roles (rping, integrity), CRC off and MPA
#    revision 1 against siw;
#  - the ULP framing draft-00 profile kiwi<->kiwi (ulpf00=Y on both): rping
#    both ways, data verified, the wire case (every framing PDU of a
#    captured rping walked with its key by mpa-wire-check.py), the mtu
#    case and the integrity program (SRQ pass); perftest and tshark in
#    --full;
#  - the short version of the load and fault soak kiwi<->kiwi
#    (tests/vm/soak/run.sh --quick, its own boot, about 4 minutes: netem,
#    connection churn, faults mid-transfer; make soak runs the long one),
#    then in the same boot the kernel ULPs' smoke cases
#    (tests/vm/pair/ulp with ULP_SMOKE=1; make check-ulp runs them whole).
# perftest with a siw server and a kiwi client, markers against siw
# (refused cleanly), and the cases mw and exverbs against siw as shipped
# (no p2p) in both roles, run in --full only.
# `--full` (make check-pair-full): the long sweeps of every combination:
# siw<->siw and rxe<->rxe as references, every case for kiwi<->siw:p2p,
# the MPA flavours against siw with integrity and perftest, markers refused
# in both roles, markers kiwi<->kiwi and the tshark case with markers asked
# for by the server only (its rping runs both ways, so markers flow on the
# initiator's side on one connection and the responder's on the other); the draft-00 profile (ulpf00=Y)
# kiwi<->kiwi with perftest, integrity and the tshark case (every framing
# PDU of the capture walked with its key by mpa-wire-check.py), and
# refused cleanly in both roles against a kiwi without it by rping. MPA
# revision 1 has no RTR message, so
# there a kiwi server runs server-first cases (ib_write_lat) only against
# kiwi with mpa_responder_waits=N: siw as initiator refuses a connection
# whose first FPDU arrives with the MPA Reply (interop.md).
# Ends with 'N passed, N failed'; exit status 0 only if all passed.

set -uo pipefail

PAIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/lab/summary.bash
. "$PAIR/../../../scripts/lab/summary.bash"
mode=--quick
[ "${1:-}" = --full ] && mode=--full

# The first boot's combos and cases; the soak's boot follows it.
first="kiwi-kiwi/rdmacm+perftest+integrity+tshark+rping+rtr+atomics+mw+exverbs+compat+mtu+txbuf+pack+ipsec kiwi:llp=sctp-kiwi:llp=sctp/rping+sctp+rdmacm+integrity+perftest kiwi:mpa_markers=Y-kiwi:mpa_markers=Y/tshark+wire siw:p2p-kiwi/integrity+atomics+mw+exverbs kiwi-siw:p2p/perftest+rtr+ipsec kiwi-siw/integrity siw-kiwi/rping kiwi:mpa_crc_off=Y-siw/rping siw:rev1-kiwi/rping kiwi:ulpf00=Y-kiwi:ulpf00=Y/rping+wire+mtu+pack+integrity"
[ "${1:-}" != --ci ] ||
	first="kiwi-kiwi/rdmacm+integrity+rping+atomics+compat+mtu+txbuf+pack kiwi:llp=sctp-kiwi:llp=sctp/rping+sctp kiwi:mpa_markers=Y-kiwi:mpa_markers=Y/wire siw:p2p-kiwi/integrity kiwi-siw:p2p/rtr siw-kiwi/rping kiwi:ulpf00=Y-kiwi:ulpf00=Y/rping+wire+mtu"
# KIWI_VM_CI=1 (passed into the guests): the rping, rdmacm and integrity
# cases of a combo with the same settings on both guests run one
# direction, not both (pair_ci_one_way in tests/vm/pair/lib.bash).
[ "${1:-}" != --ci ] || export KIWI_VM_CI=1
# The soak boot also runs the kernel ULPs' smoke cases (ULP_SMOKE=1,
# tests/vm/pair/ulp/lib.bash) kiwi<->kiwi; make check-ulp runs them whole.
export ULP_SMOKE=1
runs=("$first" "--cases-dir $PAIR/../soak/cases:$PAIR/ulp kiwi-kiwi/cycles+faults+netem+nvme+nfs+iser")
if [ "$mode" = --full ]; then
	runs=(
		"kiwi-kiwi siw:p2p-kiwi kiwi-siw:p2p siw-siw rxe-rxe"
		"--cases rping+integrity+perftest siw-kiwi kiwi:mpa_crc_off=Y-siw:p2p siw:crc-kiwi:mpa_crc_off=Y siw:rev1-kiwi kiwi:mpa_rev=1+mpa_responder_waits=N-kiwi:mpa_rev=1 siw:p2p-kiwi:mpa_p2p=N kiwi-siw/rping+integrity kiwi-siw:rev1/rping+integrity"
		"--cases rping kiwi:mpa_markers=Y-siw!refused siw-kiwi:mpa_markers=Y!refused"
		"--cases rping+integrity kiwi:mpa_markers=Y-kiwi:mpa_markers=Y"
		"--cases tshark kiwi:mpa_markers=Y-kiwi"
		"--cases rping+rdmacm+perftest+integrity+sctp kiwi:llp=sctp-kiwi:llp=sctp"
		"--cases-dir $PAIR/../soak/cases kiwi:llp=sctp-kiwi:llp=sctp/netem"
		"--cases rping+perftest+integrity+tshark kiwi:ulpf00=Y-kiwi:ulpf00=Y"
		"--cases rping kiwi:ulpf00=Y-kiwi!refused"
		"--cases mw+exverbs siw-kiwi kiwi-siw"
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
	line=$(last_summary "$out")
	rm -f "$out"
	if [ -n "$line" ]; then
		read -r p f <<< "$line"
	else
		p=0 f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
