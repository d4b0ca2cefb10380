#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RFC 7306 immediate data in one guest, kiwi0 on both ends over the guest's
# own address: vt_integrity --imm (RDMA Write with Immediate at every size,
# Send with Immediate without payload, with and without solicited events,
# values, lengths, opcodes and events checked at the receiver, both
# directions), with the receives on the RQ and then on an SRQ.
# kiwi-lab: timeout=900

. "$(dirname "$0")/lib/common.bash"

IP=${KIWI_MY_IP:-10.77.0.1}

vt_kiwi0_up

port=7660
for rq in rq srq; do
	o=(--imm --quick --no-inv)
	[ "$rq" = srq ] && o+=(--srq)
	port=$((port + 1))
	timeout 300 "$VT_PROGS/vt_integrity" -s -a "$IP" -p $port "${o[@]}" \
		> "$VT_TMP/imm.$rq.srv" 2>&1 &
	srv=$!
	vt_wait_for 30 vt_listening $port || vt_fail "vt_integrity $rq: no listener"
	timeout 300 "$VT_PROGS/vt_integrity" -c "$IP" -p $port "${o[@]}" \
		> "$VT_TMP/imm.$rq.cli" 2>&1
	rc=$?
	wait $srv
	src=$?
	if [ $rc = 0 ] && [ $src = 0 ]; then
		vt_pass "vt_integrity --imm ($rq): $(grep -h drove "$VT_TMP/imm.$rq.cli" | sed 's/.*drove //')"
	else
		vt_fail "vt_integrity --imm ($rq): client $rc, server $src"
		sed 's/^/    | /' "$VT_TMP/imm.$rq.cli" "$VT_TMP/imm.$rq.srv" | tail -n 20
	fi
	grep -q 'Writes with Immediate' "$VT_TMP/imm.$rq.srv" ||
		vt_fail "vt_integrity $rq: the server drove no immediate data"
done

vt_link_del kiwi0
vt_finish
