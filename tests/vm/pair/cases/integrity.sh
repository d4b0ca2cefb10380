#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vt_integrity (tests/vm/progs/vt_integrity.c) in both directions, with the
# receives on the QP's RQ and then on an SRQ (SRQ only in quick runs with
# siw): RDMA Write, RDMA Read, Send
# and Send with Invalidate of patterned buffers from 1 B to 1 MiB at odd
# offsets, every byte checked by the receiving side (and the bytes around
# each target); Send with Invalidate where both sides allow it, immediate
# data (RFC 7306) kiwi <-> kiwi (pair_integrity_opts). Between kiwi and
# siw, a kiwi client's RDMA Write with Immediate, and on a second
# connection its Send with Immediate, to a siw server must fail cleanly:
# IBV_WC_REM_OP_ERR at kiwi (siw's Terminate "unexpected opcode"), flushed
# receives at siw, no hang (vt_integrity --imm-refused[=send]).
# In CI (pair_both_ci: KIWI_VM_CI=1, kiwi <-> kiwi alike) one direction
# only: the other runs the same code with the guests swapped.

. "$KIWI_SRC/tests/vm/pair/lib.bash"
vt_need_progs
[ -x "$VT_PROGS/vt_integrity" ] || vt_die "no $VT_PROGS/vt_integrity"

read -r -a opts <<< "$(pair_integrity_opts)"
# A wait of vt_integrity that times out shows the guest's TCP connections
# and QPs first (a Read a siw peer never answered, CI 2026-12-02).
export VT_INTEGRITY_STUCK_CMD='ss -tnie; rdma resource show qp -dd'

# Quick runs against siw, over DDP over SCTP (llp=sctp) and with the ULP
# framing draft-00 profile (ulpf00=Y) take the SRQ pass only: the RQ pass
# is the same wire traffic, and kiwi's RQ is covered kiwi <-> kiwi over
# MPA.
queues="rq srq"
case "$PAIR_MODE $PAIR_SERVER $PAIR_CLIENT" in
quick*siw*) queues=srq ;;
esac

pair_up
S=/sys/class/infiniband/$PAIR_DEV/kiwi
if [ "$PAIR_MODE" = quick ] && [ "$PAIR_PROV" = kiwi ] &&
	{ [ "$(cat "$S/llp" 2>/dev/null)" = sctp ] ||
		[ "$(cat "$S/ulpf00" 2>/dev/null)" = Y ]; }; then
	queues=srq
fi
for rq in $queues; do
	o=("${opts[@]}")
	[ "$rq" = srq ] && o+=(--srq)
	pair_both_ci "integrity.$rq" 400 \
		"$VT_PROGS/vt_integrity" -s -a "{me}" -p "{port}" "${o[@]}" -- \
		"$VT_PROGS/vt_integrity" -c "{peer}" -p "{port}" "${o[@]}"
	if [ "$PAIR_EXPECT" = ok ]; then
		grep -h 'drove' "$VT_TMP"/integrity."$rq".*.out | sed "s/^/[$VT_NAME] /"
	fi
done
# The siw guest serves, the kiwi guest sends immediate data to it.
case "$PAIR_SERVER $PAIR_CLIENT" in
"siw kiwi") imm_srv=server ;;
"kiwi siw") imm_srv=client ;;
*) imm_srv= ;;
esac
if [ -n "$imm_srv" ] && [ "$PAIR_EXPECT" = ok ]; then
	for how in write send; do
		opt=--imm-refused
		[ "$how" = send ] && opt=--imm-refused=send
		pair_step "integrity.imm-refused-$how" "$imm_srv" 120 \
			"$VT_PROGS/vt_integrity" -s -a "{me}" -p "{port}" --imm-refused -- \
			"$VT_PROGS/vt_integrity" -c "{peer}" -p "{port}" "$opt"
		grep -h 'refused\|flushed' "$VT_TMP/integrity.imm-refused-$how.out" | sed "s/^/[$VT_NAME] /"
	done
fi
pair_down
vt_finish
