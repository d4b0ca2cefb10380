#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RFC 7306 atomics between two guests (Documentation/rfc7306.md): perftest's
# ib_atomic_lat and ib_atomic_bw over rdma_cm (-R), Fetch-and-Add and
# Compare-and-Swap, the client guest the requester. kiwi-kiwi (and rxe-rxe,
# with InfiniBand atomics): every run must complete. kiwi-kiwi also runs
# the many-client counter (tests/vm/progs/vt_atompair.c): 4 connections
# from the client guest, a thread each, Fetch-and-Add of 1 on one counter
# of the server guest while the server's CPU adds 1 with
# __atomic_fetch_add; the counter must end exact and every original value
# come back once. A kiwi requester
# against a siw responder (siw-kiwi): siw 6.1 has no atomics and answers an
# Atomic Request with Terminate 0/2/06, so the kiwi client's atomic must
# complete with IBV_WC_REM_OP_ERR within the time limit, not hang (a
# client that lost perftest's reconnect race runs once more: there the
# connection must work, only the atomic is refused). Other combos have no
# RFC 7306 requester facing a responder without it: skipped.

. "$KIWI_SRC/tests/vm/pair/lib.bash"

n=200 k=200
case "$PAIR_MODE" in
full) n=2000 k=2000 ;;
quick) n=50 k=100 ;;
esac

pair_up
steps="ib_atomic_lat.FETCH_AND_ADD ib_atomic_lat.CMP_AND_SWAP
	ib_atomic_bw.FETCH_AND_ADD ib_atomic_bw.CMP_AND_SWAP"
case "$PAIR_SERVER-$PAIR_CLIENT" in
kiwi-kiwi | rxe-rxe) ;;
siw-kiwi)
	PAIR_EXPECT=refused
	PAIR_CONNECTS=1
	steps=ib_atomic_lat.FETCH_AND_ADD
	;;
*)
	vt_log "atomics: needs an RFC 7306 requester, not $PAIR_SERVER-$PAIR_CLIENT"
	pair_down
	vt_finish
	;;
esac

for s in $steps; do
	t=${s%.*} op=${s#*.}
	pair_step "$s" server 120 \
		"$t" -d "$PAIR_DEV" -R -F -A "$op" -n "$n" -p "{port}" -- \
		"$t" -d "$PAIR_DEV" -R -F -A "$op" -n "$n" -p "{port}" "{peer}"
	# Refused: the kiwi client's atomic must complete with
	# IBV_WC_REM_OP_ERR (status 11: siw's 0/2/06 names it), not be
	# flushed and not fail the connection.
	if [ "$PAIR_EXPECT" = refused ] && [ "$PAIR_SIDE" = client ]; then
		if grep -q 'Failed status 11:' "$VT_TMP/$s.out"; then
			vt_pass "$s: siw's Terminate completed the atomic with IBV_WC_REM_OP_ERR"
		else
			vt_fail "$s: no IBV_WC_REM_OP_ERR (status 11) completion from the siw responder"
			sed 's/^/    | /' "$VT_TMP/$s.out" | tail -n 20
		fi
	fi
done
if [ "$PAIR_SERVER-$PAIR_CLIENT" = kiwi-kiwi ]; then
	vt_need_progs
	pair_step atomic-counter server 180 \
		"$VT_PROGS/vt_atompair" -s -a "{me}" -p "{port}" -n 4 -- \
		"$VT_PROGS/vt_atompair" -c "{peer}" -p "{port}" -n 4 -k "$k"
	grep -h 'vt_atompair:' "$VT_TMP/atomic-counter.out" | sed "s/^/[$VT_NAME] /"
fi
pair_down
vt_finish
