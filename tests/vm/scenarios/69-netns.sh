#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kiwi-lab: timeout=600
#
# kiwi devices in network namespaces. Two namespaces joined by a veth
# pair, a kiwi device created from inside each on its end: rping,
# vt_integrity and perftest (ib_write_bw over rdma_cm) between them;
# kiwi's listener socket in the namespace of its device and in no other,
# and so are both ends of a connection (sampled while an 8 s ib_write_bw
# runs: a check written for rping's short connections in the twelfth
# session sampled after they had ended). Wildcard listeners on one port in
# A and in B at once, each with its socket in its own namespace only; a
# device added later in a third namespace listens for that namespace's
# wildcard listener only. The devices are visible everywhere in this
# shared mode, their addresses are not: an rdma_cm listener on A's
# address from the initial namespace or a third one fails cleanly (the
# address is not theirs), and so does a client there. Then
# the RDMA subsystem in exclusive mode: each device moved into its
# namespace with `rdma dev set NAME netns NS` is seen there only (not in
# the initial namespace, not in the other one, not in a third), served by
# libkiwi there, and carries rping, vt_integrity and ib_write_bw. Deleting
# the namespaces removes the devices.

. "$(dirname "$0")/lib/common.bash"

vt_need_progs
vt_clean_links

NSA=kiwins_a NSB=kiwins_b NSC=kiwins_c
A_IP=10.79.0.1 B_IP=10.79.0.2 C_IP=10.79.1.1
PORT=7471

in_ns() {
	ip netns exec "$@"
}

# ns_up: namespaces A, B and C, A and B joined by the veth pair vna/vnb.
ns_up() {
	local ns
	for ns in $NSA $NSB $NSC; do
		ip netns add $ns && in_ns $ns ip link set lo up || return 1
	done
	ip link add vna netns $NSA type veth peer name vnb netns $NSB || return 1
	in_ns $NSA ip addr add $A_IP/24 dev vna &&
		in_ns $NSB ip addr add $B_IP/24 dev vnb &&
		in_ns $NSA ip link set vna up && in_ns $NSB ip link set vnb up
}

# ns_down: delete the namespaces; wait until the kernel dismantled them,
# which the RDMA subsystem's mode change needs (EBUSY until then).
ns_down() {
	ip netns del $NSA 2>/dev/null
	ip netns del $NSB 2>/dev/null
	ip netns del $NSC 2>/dev/null
}

# set_mode MODE: rdma system set netns MODE, retried while namespaces
# are still being dismantled.
set_mode() {
	vt_wait_for 30 rdma system set netns "$1"
}

# kiwi_devs_in NS: the kiwi devices NS sees (its own sysfs view).
kiwi_devs_in() {
	in_ns "$1" bash -c 'for d in /sys/class/infiniband/*; do
		[ -e "$d/kiwi/abi_version" ] && basename "$d"; done; true' |
		tr '\n' ' '
}

# listeners NS PORT: how many TCP sockets listen on PORT in NS ("init":
# the initial namespace).
listeners() {
	if [ "$1" = init ]; then
		ss -Hltn "sport = :$2" | wc -l
	else
		in_ns "$1" ss -Hltn "sport = :$2" | wc -l
	fi
}

# listening NS PORT: a TCP socket listens on PORT in NS.
listening() {
	[ "$(listeners "$1" "$2")" -gt 0 ]
}

# no_ns_devs: neither kiwiA nor kiwiB is registered anywhere.
no_ns_devs() {
	! rdma dev show | grep -qE 'kiwiA|kiwiB'
}

# ns_rping WHAT: 10 verified pings, server in A, client in B; while they
# run, kiwi's listener socket must be in A only.
ns_rping() {
	local srv out rc
	timeout 150 ip netns exec $NSA rping -s -a $A_IP -p $PORT -C 10 -v > "$VT_TMP/ns-srv" 2>&1 &
	srv=$!
	if vt_wait_for 10 listening $NSA $PORT; then
		vt_pass "$1: kiwi's listener is in $NSA"
	else
		vt_fail "$1: no listener on port $PORT in $NSA"
	fi
	vt_eq "$1: listeners on port $PORT outside $NSA" \
		"$(ss -Hltn "sport = :$PORT"; in_ns $NSB ss -Hltn "sport = :$PORT")" ""
	out=$(timeout 120 ip netns exec $NSB rping -c -a $A_IP -p $PORT -C 10 -v 2>&1)
	rc=$?
	[ $rc = 0 ] || kill $srv 2>/dev/null
	wait $srv
	if [ $rc = 0 ] && [ "$(grep -c 'ping data' <<<"$out")" = 10 ]; then
		vt_pass "$1: rping $NSB -> $NSA, 10 pings"
	else
		vt_fail "$1: rping status $rc: $(tail -n 3 <<<"$out" | tr '\n' ' ') server: $(tail -n 3 "$VT_TMP/ns-srv" | tr '\n' ' ')"
	fi
}

# ns_integrity WHAT: vt_integrity, server in B, client in A (kiwi on both
# ends: immediate data, no Send with Invalidate of a user MR).
ns_integrity() {
	local o=(-p $((PORT + 1)) --quick --no-inv --imm) srv out
	timeout 330 ip netns exec $NSB "$VT_PROGS/vt_integrity" -s -a $B_IP "${o[@]}" \
		> "$VT_TMP/ns-int" 2>&1 &
	srv=$!
	vt_wait_for 10 listening $NSB $((PORT + 1))
	if out=$(timeout 300 ip netns exec $NSA "$VT_PROGS/vt_integrity" -c $B_IP \
		"${o[@]}" 2>&1) && wait $srv; then
		vt_pass "$1: vt_integrity $NSA -> $NSB"
	else
		kill $srv 2>/dev/null
		vt_fail "$1: vt_integrity: $(tail -n 3 <<<"$out" | tr '\n' ' ') server: $(tail -n 3 "$VT_TMP/ns-int" | tr '\n' ' ')"
	fi
}

# ns_perftest WHAT: ib_write_bw over rdma_cm, 200 iterations of 64 KiB,
# server kiwiA in A, client kiwiB in B, with -F like every perftest run of
# the lab: perftest calibrates its clock before it reports (gettimeofday
# against the TSC, r^2 of at least 0.9), which under TCG on a loaded host
# fails after a good transfer ("Correlation coefficient r^2: 0.79 < 0.9",
# "Can't produce a report", exit status 1: two runs of five without -F);
# -F reports anyway. A client that loses perftest's reconnect race
# (tests/vm/pair/lib.bash, pair_perftest_race) runs once more; a failure
# logs both sides' output.
ns_perftest() {
	local p=$((PORT + 2)) srv rc attempt
	for attempt in 1 2; do
		timeout 120 ip netns exec $NSA ib_write_bw -d kiwiA -R -F -n 200 -p $p \
			> "$VT_TMP/ns-bw-srv" 2>&1 &
		srv=$!
		vt_wait_for 30 listening $NSA $p
		timeout 120 ip netns exec $NSB ib_write_bw -d kiwiB -R -F -n 200 -p $p $A_IP \
			> "$VT_TMP/ns-bw-cli" 2>&1
		rc=$?
		[ $rc = 0 ] || kill $srv 2>/dev/null
		wait $srv
		[ $rc != 0 ] || break
		vt_log "$1: ib_write_bw attempt $attempt: client status $rc; client, then server:"
		sed 's/^/    c| /' "$VT_TMP/ns-bw-cli"
		sed 's/^/    s| /' "$VT_TMP/ns-bw-srv"
		grep -q -e 'RDMA_CM_EVENT_REJECTED; error: -111' \
			-e 'Function rdma_connect failed' "$VT_TMP/ns-bw-cli" || break
		p=$((p + 10))
	done
	if [ $rc = 0 ]; then
		vt_pass "$1: ib_write_bw -R $NSB -> $NSA: $(grep -E '^ *65536 ' "$VT_TMP/ns-bw-cli" | tr -s ' ' | head -1)"
	else
		vt_fail "$1: ib_write_bw status $rc"
	fi
}

# conn_socks NS FILTER: NS's established TCP sockets that match FILTER
# (an ss expression), one line each.
conn_socks() {
	in_ns "$1" ss -Htn state established "$2"
}

# both_ends FROM TO: A has a socket matching FROM, B one matching TO.
both_ends() {
	[ -n "$(conn_socks $NSA "$1")" ] && [ -n "$(conn_socks $NSB "$2")" ]
}

# ns_conn_sockets WHAT: while ib_write_bw -D 8 runs from kiwiB in B to
# kiwiA in A (stopped once looked at), the responder's connection
# sockets are in A and the initiator's in B, and no namespace holds
# another's: not the initial one, not C.
ns_conn_sockets() {
	local p=$((PORT + 3)) srv cli seen=0
	local to="( dport = :$p )" from="( sport = :$p )"
	timeout 120 ip netns exec $NSA ib_write_bw -d kiwiA -R -F -D 8 -p $p \
		> "$VT_TMP/ns-cs-srv" 2>&1 &
	srv=$!
	vt_wait_for 30 listening $NSA $p
	timeout 120 ip netns exec $NSB ib_write_bw -d kiwiB -R -F -D 8 -p $p $A_IP \
		> "$VT_TMP/ns-cs-cli" 2>&1 &
	cli=$!
	if vt_wait_for 30 both_ends "$from" "$to"; then
		seen=1
		vt_pass "$1: connection sockets: responder's in $NSA ($(conn_socks $NSA "$from" | wc -l)), initiator's in $NSB ($(conn_socks $NSB "$to" | wc -l))"
		vt_eq "$1: initiator sockets in $NSA" "$(conn_socks $NSA "$to")" ""
		vt_eq "$1: responder sockets in $NSB" "$(conn_socks $NSB "$from")" ""
		vt_eq "$1: connection sockets in the initial namespace" \
			"$(ss -Htn state established "( sport = :$p or dport = :$p )")" ""
		vt_eq "$1: connection sockets in $NSC" \
			"$(conn_socks $NSC "( sport = :$p or dport = :$p )")" ""
	fi
	# Sampled: the rest of the 8 s transfer shows nothing more (it is
	# ns_perftest's to judge a whole one), so both ends are stopped.
	kill $cli $srv 2>/dev/null
	wait $cli
	wait $srv
	[ $seen = 1 ] || vt_fail "$1: no established connection on port $p in both $NSA and $NSB: client: $(tail -n 2 "$VT_TMP/ns-cs-cli" | tr '\n' ' ') server: $(tail -n 2 "$VT_TMP/ns-cs-srv" | tr '\n' ' ')"
}

# ns_wildcard WHAT: rdma_cm wildcard listeners (rping -s -a 0.0.0.0) on
# one port, first in A, then in B beside it: rdma_cm asks every device,
# kiwiB too, to listen for A's, and each namespace gets one socket of its
# own and no other's (a socket of A's listener in B took the port from
# B's, which then failed with EADDRINUSE). Each then serves a client from
# the other namespace.
ns_wildcard() {
	local p=$((PORT + 40)) sa sb ns
	timeout 120 ip netns exec $NSA rping -s -a 0.0.0.0 -p $p -C 1 -v \
		> "$VT_TMP/ns-wa" 2>&1 &
	sa=$!
	vt_wait_for 10 listening $NSA $p
	vt_eq "$1: wildcard listener of $NSA: sockets on port $p in $NSA" "$(listeners $NSA $p)" 1
	for ns in $NSB $NSC init; do
		vt_eq "$1: wildcard listener of $NSA: sockets on port $p in $ns" "$(listeners "$ns" $p)" 0
	done
	timeout 120 ip netns exec $NSB rping -s -a 0.0.0.0 -p $p -C 1 -v \
		> "$VT_TMP/ns-wb" 2>&1 &
	sb=$!
	if vt_wait_for 10 listening $NSB $p && kill -0 $sb 2>/dev/null; then
		vt_pass "$1: a wildcard listener on port $p in $NSB beside $NSA's"
	else
		vt_fail "$1: no wildcard listener on port $p in $NSB beside $NSA's: $(head -n 3 "$VT_TMP/ns-wb" | tr '\n' ' ')"
	fi
	vt_eq "$1: both listening: sockets on port $p in $NSA, $NSB, $NSC, init" \
		"$(listeners $NSA $p) $(listeners $NSB $p) $(listeners $NSC $p) $(listeners init $p)" "1 1 0 0"
	wild_client "$1" $NSB $A_IP $p $sa
	wild_client "$1" $NSA $B_IP $p $sb
}

# cm_listen_on PORT: rdma_cm holds a wildcard listen on PORT (on some
# device: one in no device's namespace has no socket to look for).
cm_listen_on() {
	rdma res show cm_id | grep -q "state LISTEN .*src-addr 0.0.0.0:$1 "
}

# ns_added_later WHAT: a device added after the wildcard listens serves
# its own namespace's only. rping -s -a 0.0.0.0 in A and in C (which has
# no kiwi device yet), then kiwiC on a veth in C: rdma_cm asks kiwiC to
# listen for both, from `rdma link add`'s process, in C. C gets a socket
# for its own listener, none for A's (with the caller's namespace standing
# for the listener's it got both), and C's listener serves a client in C
# through kiwiC (kiwi talks to itself).
ns_added_later() {
	local p=$((PORT + 50)) q=$((PORT + 51)) sa sc
	timeout 120 ip netns exec $NSA rping -s -a 0.0.0.0 -p $p -C 1 -v \
		> "$VT_TMP/ns-la" 2>&1 &
	sa=$!
	timeout 120 ip netns exec $NSC rping -s -a 0.0.0.0 -p $q -C 1 -v \
		> "$VT_TMP/ns-lc" 2>&1 &
	sc=$!
	vt_wait_for 10 listening $NSA $p
	vt_wait_for 10 cm_listen_on $q
	if ip link add vnc netns $NSC type veth peer name vnd netns $NSC &&
		in_ns $NSC ip addr add $C_IP/24 dev vnc &&
		in_ns $NSC ip link set vnd up && in_ns $NSC ip link set vnc up &&
		in_ns $NSC rdma link add kiwiC type kiwi netdev vnc; then
		vt_pass "$1: kiwiC added in $NSC after wildcard listens in $NSA and $NSC"
		vt_wait_for 10 listening $NSC $q
		vt_eq "$1: sockets in $NSC on port $p ($NSA's listener) and $q ($NSC's)" \
			"$(listeners $NSC $p) $(listeners $NSC $q)" "0 1"
		vt_eq "$1: sockets on port $p in $NSA after kiwiC came" "$(listeners $NSA $p)" 1
		wild_client "$1" $NSC $C_IP $q $sc
		vt_check "$1: rdma link delete kiwiC" rdma link delete kiwiC
	else
		vt_fail "$1: cannot add kiwiC in $NSC"
		kill $sc 2>/dev/null
		wait $sc
	fi
	kill $sa 2>/dev/null
	wait $sa
}

# wild_client WHAT NS ADDR PORT SERVER: one verified ping from NS to the
# rping server (process SERVER) listening on ADDR:PORT, which then ends.
wild_client() {
	local out rc
	out=$(timeout 60 ip netns exec "$2" rping -c -a "$3" -p "$4" -C 1 -v 2>&1)
	rc=$?
	if [ $rc = 0 ] && wait "$5"; then
		vt_pass "$1: rping from $2 to the wildcard listener on $3"
	else
		kill "$5" 2>/dev/null
		wait "$5"
		vt_fail "$1: rping from $2 to $3:$4: exit $rc: $(tail -n 2 <<<"$out" | tr '\n' ' ')"
	fi
}

# bound_elsewhere WHAT NS...: an rping server on A's address in each NS (a
# namespace name, or "init" for the initial one) fails at once, not hangs,
# and no listener appears in A; an rping client there fails cleanly too.
bound_elsewhere() {
	local what=$1 ns p=$((PORT + 30)) run out rc
	shift
	for ns in "$@"; do
		run=(timeout 20)
		[ "$ns" = init ] || run+=(ip netns exec "$ns")
		out=$("${run[@]}" rping -s -a $A_IP -p $p -C 1 2>&1)
		rc=$?
		if [ $rc != 0 ] && [ $rc != 124 ] && ! listening $NSA $p; then
			vt_pass "$what: rdma_cm listener on $A_IP from $ns refused (exit $rc: $(head -n 1 <<<"$out"))"
		else
			vt_fail "$what: rping -s -a $A_IP in $ns: exit $rc, listener in $NSA: $(in_ns $NSA ss -Hltn "sport = :$p")"
		fi
		out=$("${run[@]}" rping -c -a $A_IP -p $PORT -C 1 2>&1)
		rc=$?
		if [ $rc != 0 ] && [ $rc != 124 ]; then
			vt_pass "$what: rdma_cm client to $A_IP from $ns fails cleanly (exit $rc: $(head -n 1 <<<"$out"))"
		else
			vt_fail "$what: rping -c -a $A_IP in $ns: exit $rc"
		fi
	done
}

# ns_gone WHAT: after ns_down, the devices of A and B disappear.
ns_gone() {
	ns_down
	if vt_wait_for 30 no_ns_devs; then
		vt_pass "$1: deleting the namespaces removed kiwiA and kiwiB"
	else
		vt_fail "$1: still registered: $(rdma dev show | grep -E 'kiwiA|kiwiB')"
	fi
}

vt_check "the RDMA subsystem starts in shared mode" \
	grep -q 'netns shared' <<<"$(rdma system show)"

# Shared mode: the devices are visible everywhere, their sockets are not.
ns_down
if ns_up; then
	if in_ns $NSA rdma link add kiwiA type kiwi netdev vna &&
		in_ns $NSB rdma link add kiwiB type kiwi netdev vnb; then
		vt_pass "shared: rdma link add from inside $NSA and $NSB"
		ns_rping shared
		ns_integrity shared
		ns_perftest shared
		ns_conn_sockets shared
		ns_wildcard shared
		ns_added_later shared
		bound_elsewhere shared init $NSC
	else
		vt_fail "shared: rdma link add in a namespace refused"
	fi
	ns_gone shared
else
	vt_fail "cannot create the namespaces"
	ns_down
fi

# Exclusive mode: each device lives in one namespace only.
if ! set_mode exclusive; then
	vt_fail "rdma system set netns exclusive: $(rdma system show)"
	vt_finish
fi
if ns_up && in_ns $NSA rdma link add kiwiA type kiwi netdev vna &&
	in_ns $NSB rdma link add kiwiB type kiwi netdev vnb; then
	vt_check "exclusive: rdma dev set kiwiA netns $NSA" rdma dev set kiwiA netns $NSA
	vt_check "exclusive: rdma dev set kiwiB netns $NSB" rdma dev set kiwiB netns $NSB
	vt_eq "exclusive: kiwi devices in the initial namespace" "$(vt_kiwi_devs | tr '\n' ' ')" ""
	vt_eq "exclusive: kiwi devices in $NSA" "$(kiwi_devs_in $NSA)" "kiwiA "
	vt_eq "exclusive: kiwi devices in $NSB" "$(kiwi_devs_in $NSB)" "kiwiB "
	vt_eq "exclusive: kiwi devices in $NSC" "$(kiwi_devs_in $NSC)" ""
	vt_eq "exclusive: ibv_devices in $NSC" \
		"$(in_ns $NSC ibv_devices 2>/dev/null | grep -c kiwi)" 0
	vt_eq "exclusive: libkiwi serves kiwiA in $NSA" \
		"$(in_ns $NSA "$VT_PROGS/vt_query" -d kiwiA | sed -n 's/^transport_iwarp=//p')" 1
	ns_rping exclusive
	ns_integrity exclusive
	ns_perftest exclusive
	ns_conn_sockets exclusive
else
	vt_fail "exclusive: cannot set up the namespaces and devices"
fi
ns_gone exclusive
vt_check "back to shared mode" set_mode shared
vt_eq "kiwi devices at the end" "$(vt_kiwi_devs | tr '\n' ' ')" ""

vt_finish
