#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vt_integrity (tests/vm/progs/vt_integrity.c) in both directions, with the
# receives on the QP's RQ and then on an SRQ: RDMA Write, RDMA Read, Send
# and Send with Invalidate of patterned buffers from 1 B to 1 MiB at odd
# offsets, every byte checked by the receiving side (and the bytes around
# each target); Send with Invalidate where both sides allow it
# (pair_integrity_opts).

. "$KIWI_SRC/tests/vm/pair/lib.bash"
vt_need_progs
[ -x "$VT_PROGS/vt_integrity" ] || vt_die "no $VT_PROGS/vt_integrity"

read -r -a opts <<< "$(pair_integrity_opts)"

pair_up
for rq in rq srq; do
	o=("${opts[@]}")
	[ "$rq" = srq ] && o+=(--srq)
	pair_both "integrity.$rq" 400 \
		"$VT_PROGS/vt_integrity" -s -a "{me}" -p "{port}" "${o[@]}" -- \
		"$VT_PROGS/vt_integrity" -c "{peer}" -p "{port}" "${o[@]}"
	if [ "$PAIR_EXPECT" = ok ]; then
		grep -h 'drove' "$VT_TMP"/integrity."$rq".*.out | sed "s/^/[$VT_NAME] /"
	fi
done
pair_down
vt_finish
