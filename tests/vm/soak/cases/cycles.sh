#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Connection churn: cmtime opens SOAK_CONNS RC connections at once (default
# 1000; each with its QP), then closes them all, SOAK_ROUNDS times (default
# 10: 10,000 connect/disconnect cycles); then SOAK_ABORTS rping clients
# (default 100) are killed at random moments of their handshake or
# transfer while a persistent rping server (-P) serves on. Afterwards both
# guests must be back where they started: the same `rdma resource show`
# counts and slab usage within SOAK_SLAB_KB (default 8192) of the baseline.
# PAIR_MODE quick (the CI's version): 100 connections, 2 rounds, 20 aborts.

. "$KIWI_SRC/tests/vm/pair/lib.bash"

conns=${SOAK_CONNS:-1000}
rounds=${SOAK_ROUNDS:-10}
aborts=${SOAK_ABORTS:-100}
slab_kb=${SOAK_SLAB_KB:-8192}
if [ "$PAIR_MODE" = quick ]; then
	conns=100 rounds=2 aborts=20
fi

slab() {
	sync
	echo 2 > /proc/sys/vm/drop_caches
	awk '/^Slab:/ { print $2 }' /proc/meminfo
}

# soak_settle BASE: wait up to 60 s for the resource counts to return to BASE.
soak_settle() {
	local i
	for ((i = 0; i < 120; i++)); do
		[ "$(vt_res "$PAIR_DEV")" = "$1" ] && return 0
		vt_nap 0.5
	done
	return 1
}

pair_up
base_res=$(vt_res "$PAIR_DEV")
base_slab=$(slab)
vt_log "baseline: $base_res, slab ${base_slab} kB"

# soak_persistent NAME SERVER_CMD... -- CLIENT_FUNCTION: SERVER_CMD (a
# server that serves until killed: cmtime, rping -P) on the server guest;
# CLIENT_FUNCTION runs on the client guest and judges itself; afterwards the
# server must still be alive.
soak_persistent() {
	local name=$1 cmd=() srv
	shift
	while [ "$1" != -- ]; do cmd+=("$1"); shift; done
	shift
	PAIR_PORT=$((PAIR_PORT + 1))
	if [ "$PAIR_SIDE" = server ]; then
		stdbuf -oL "${cmd[@]}" -p "$PAIR_PORT" > "$VT_TMP/$name.srv" 2>&1 &
		srv=$!
		pair_wait_listen "$PAIR_PORT" "$srv" 60 || vt_fail "$name: no listener"
		pair_barrier "$name.listening" 120
		pair_barrier "$name.done" 3600
		if kill -0 "$srv" 2>/dev/null; then
			vt_pass "$name: the server lived through it"
			kill -TERM "$srv"
		else
			vt_fail "$name: the server died: $(tail -n 5 "$VT_TMP/$name.srv")"
		fi
		wait "$srv" 2>/dev/null
	else
		pair_barrier "$name.listening" 120
		"$@"
		pair_barrier "$name.done" 3600
	fi
}

# cmtime_rounds: the client's side of the connection churn.
cmtime_rounds() {
	local r
	for ((r = 1; r <= rounds; r++)); do
		if timeout 900 cmtime -s "$KIWI_PEER_IP" -p "$PAIR_PORT" -c "$conns" \
			> "$VT_TMP/cmtime.$r" 2>&1; then
			vt_pass "cmtime round $r: $conns connections opened at once and closed"
		else
			vt_fail "cmtime round $r failed"
			tail -n 15 "$VT_TMP/cmtime.$r" | sed 's/^/    | /'
		fi
	done
	grep -E 'connect|disconnect' "$VT_TMP/cmtime.$rounds" | sed "s/^/[$VT_NAME] round $rounds: /"
}

# aborted_clients: rping clients killed at random moments.
aborted_clients() {
	local i ms ok=0
	for ((i = 0; i < aborts; i++)); do
		ms=$((RANDOM % 1500 + 1))
		timeout -s KILL "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))" \
			rping -c -a "$KIWI_PEER_IP" -p "$PAIR_PORT" -C 50 -S 4096 > /dev/null 2>&1
		[ $? = 137 ] || ok=$((ok + 1))
	done
	vt_log "aborted clients: $aborts started, $ok ended before their kill"
	# One whole run after the storm: the server still serves.
	vt_check "rping after $aborts aborted clients" \
		timeout 120 rping -c -a "$KIWI_PEER_IP" -p "$PAIR_PORT" -C 20 -S 4096
}

soak_persistent cmtime cmtime -b "$KIWI_MY_IP" -- cmtime_rounds
soak_persistent rping-P rping -s -P -a "$KIWI_MY_IP" -- aborted_clients 2>/dev/null

pair_barrier churn-done 300
if soak_settle "$base_res"; then
	vt_pass "rdma resources back to baseline ($base_res)"
else
	vt_fail "rdma resources: $(vt_res "$PAIR_DEV"), baseline $base_res"
fi
now_slab=$(slab)
vt_log "slab: ${base_slab} kB before, ${now_slab} kB after"
if [ $((now_slab - base_slab)) -le "$slab_kb" ]; then
	vt_pass "slab within $slab_kb kB of the baseline"
else
	vt_fail "slab grew by $((now_slab - base_slab)) kB (limit $slab_kb)"
fi
pair_down
vt_finish
