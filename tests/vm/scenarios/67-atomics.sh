#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RFC 7306 atomics in one guest, kiwi0 on both ends over the guest's own
# address: vt_atomic (libibverbs over rdma_cm): atomic_cap IBV_ATOMIC_GLOB;
# Fetch-and-Add and Compare-and-Swap from both ends (original values,
# stored values, a failed compare); ORD and IRD stay as negotiated through
# a modify in RTS; a burst of 32 atomics posted at once
# (8 x ORD: the requester holds them back, ird_exceeded stays, originals in
# order); 4 connections x 2000 Fetch-and-Add on
# one counter while the CPU adds 1 a million times on the target side
# (the counter must end exact, every original distinct); an unaligned
# target, an MR without remote atomic access and a responder QP without
# remote rights each fail the WR with its status, leave the target alone
# and put the requester's QP in error with an async event; a Read, and an
# atomic behind a valid one, refused behind a 4 MiB Read fail that WR (the
# Terminate's MSN names it) and flush those before it. The
# Terminates the responder sent are checked in the kernel log, the
# atomic_req_served counter (`rdma statistic`) against the atomics served. Then
# perftest's ib_atomic_lat and ib_atomic_bw over rdma_cm (-R) (they must run).
# About 15 s in the lab.

# kiwi-lab: timeout=900

. "$(dirname "$0")/lib/common.bash"

IP=${KIWI_MY_IP:-10.77.0.1}

vt_kiwi0_up

dmesg -C
st0=$(vt_stats kiwi0)
vt_run_prog vt_atomic 600 -a "$IP" -p 7306
st1=$(vt_stats kiwi0)
# kiwi0 serves every atomic vt_atomic makes: at least the 4 x 2000
# Fetch-and-Add of the counter test.
a0=$(vt_stat "$st0" atomic_req_served)
a1=$(vt_stat "$st1" atomic_req_served)
vt_check "atomic_req_served counted the atomics served ($a0 -> $a1, at least 8000)" \
	test -n "$a0" -a -n "$a1" -a "$((${a1:-0} - ${a0:-0}))" -ge 8000
# The burst of 32 atomics (8 x ORD) stayed within the responder's IRD.
vt_eq "ird_exceeded after vt_atomic" "$(vt_stat "$st1" ird_exceeded)" \
	"$(vt_stat "$st0" ird_exceeded)"

# The responder's Terminates, as the requester logged them (RFC 7306
# section 8.2: 0/2/07 for an unaligned target; remote protection 0/1/02
# for missing rights).
for code in "layer 0 type 2 code 0x07" "layer 0 type 1 code 0x02"; do
	if dmesg | grep -q "Terminate from peer: $code"; then
		vt_pass "Terminate $code received"
	else
		vt_fail "no Terminate $code in the kernel log"
	fi
done

# atomic_perftest T: perftest T's server and client over rdma_cm on the
# guest's own address; the client's exit status.
atomic_perftest() {
	local t=$1 port=$((18515 + RANDOM % 1000)) srv rc

	timeout 120 "$t" -d kiwi0 -R -F -p "$port" -n 1000 > "$VT_TMP/$t.srv" 2>&1 &
	srv=$!
	vt_wait_for 30 vt_listening "$port" ||
		vt_log "$t: no listener on port $port after 30 s"
	timeout 120 "$t" -d kiwi0 -R -F -p "$port" -n 1000 "$IP" > "$VT_TMP/$t.cli" 2>&1
	rc=$?
	[ "$rc" = 0 ] || kill "$srv" 2>/dev/null
	wait "$srv"
	return "$rc"
}

# A client that connects the second time before perftest's server listens
# anew is refused (tests/vm/pair/lib.bash, pair_perftest_race): once more.
for t in ib_atomic_lat ib_atomic_bw; do
	command -v "$t" >/dev/null || { vt_fail "$t not installed"; continue; }
	for attempt in 1 2; do
		t0=$SECONDS
		if atomic_perftest "$t"; then
			vt_pass "$t -R ($((SECONDS - t0)) s): $(grep -E '^ *8 ' "$VT_TMP/$t.cli" | tr -s ' ' | head -1)"
			break
		elif [ "$attempt" = 1 ] &&
			grep -q 'RDMA_CM_EVENT_REJECTED; error: -111' "$VT_TMP/$t.cli"; then
			vt_log "$t: perftest's reconnect race, once more"
		else
			vt_fail "$t -R failed"
			sed 's/^/    | /' "$VT_TMP/$t.cli" "$VT_TMP/$t.srv" | tail -n 20
			break
		fi
	done
done

vt_link_del kiwi0
vt_finish
