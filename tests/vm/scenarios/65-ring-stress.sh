#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Receives posted while the QP's flush runs are not lost (vt_flushrace).
# libkiwi against kiwi.ko under concurrency (vt_stress): two connected QPs
# in one process over kiwi0, threads posting Sends, Writes, Reads and
# receives, waiters on completion channels or busy-polling, the connection
# ended at random (either QP to error, both, or a graceful disconnect)
# while the threads keep posting. Every WR must complete exactly once, a
# refused post must leave nothing behind, no completion event may be lost
# and nothing may hang; some posts must have found TX running and skipped
# the doorbell (while the QPs are connected, tx_doorbells grows less than
# the number of ibv_post_send calls).
# VT_STRESS_SECONDS sets the length (default 40, 20 with KIWI_VM_CI=1 as
# in make test's check-vm: 22 to 32 rounds on a 2-core machine against 64
# in 40 s, each ending the connection one of vt_stress's ways at random,
# the SRQ and waiter modes alternating as before;
# tests/vm/lib/ring-stress-soak.sh runs it for 10 minutes).

. "$(dirname "$0")/lib/common.bash"

IP=${KIWI_MY_IP:-10.77.0.1}
secs=${VT_STRESS_SECONDS:-$([ "${KIWI_VM_CI:-0}" = 1 ] && echo 20 || echo 40)}

vt_need_progs
vt_clean_links
vt_link_add kiwi0 eth0 || vt_die "cannot create kiwi0"
base=$(vt_res kiwi0)

# Receives posted while the flush of a full receive queue runs.
timeout -k 10 120 "$VT_PROGS/vt_flushrace" -d kiwi0 -n 20
vt_eq "vt_flushrace exit status" "$?" 0

timeout -k 10 $((secs + 120)) "$VT_PROGS/vt_stress" -a "$IP" -t "$secs" \
	> "$VT_TMP/stress.out"
vt_eq "vt_stress exit status" "$?" 0
cat "$VT_TMP/stress.out"
# Posts while TX runs skip the doorbell (KIWI_RING_F_DOORBELL clear): while
# both QPs are connected (no receive rings then) the kernel counts fewer
# doorbells than there were ibv_post_send calls. (Most of vt_stress's posts
# go to QPs in the error state, where every post rings.)
line=$(sed -n 's/^vt_stress: while connected: ibv_post_send calls //p' "$VT_TMP/stress.out")
calls=${line%%,*}
rung=${line##*doorbells }
vt_check "vt_stress: posts while connected skipped the doorbell (${rung:-?} doorbells for ${calls:-?} posts)" \
	test -n "$line" -a "${rung:-0}" -lt "${calls:-0}"
# The connection manager drops its last references asynchronously.
for ((i = 0; i < 50; i++)); do
	[ "$(vt_res kiwi0)" = "$base" ] && break
	vt_nap 0.2
done
vt_eq "resources after vt_stress" "$(vt_res kiwi0)" "$base"

vt_link_del kiwi0
vt_finish
