#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kiwi-lab: timeout=600
#
# Several kiwi devices in one network namespace listening on one wildcard
# address and port, as rdma_cm asks of every device for a listen on
# 0.0.0.0 or :: (nfsd's "rdma 20049", rping -s, rdma_server). kiwi0 on
# eth0, kiwi_a and kiwi_b on the two ends of a veth pair, each end with
# an address of its own: one persistent rping server on the wildcard
# address serves a client connecting to each device's address, exactly
# one TCP socket listens on the port, and each connection is counted by
# the device whose address it reached (cm_requests); the same over :: with
# IPv6 and IPv4 clients. A device deleted under the listen leaves the
# others listening; one added afterwards (kiwi_b again, rdma_cm's listen
# on a new device) serves its own address. A port a process holds is
# refused with EADDRINUSE and leaves no listener. No listener is left at
# the end.

. "$(dirname "$0")/lib/common.bash"

IP=${KIWI_MY_IP:-10.77.0.1}
A_IP=10.78.1.1 B_IP=10.78.2.1
A_IP6=fd78:1::1 B_IP6=fd78:2::1
PORT=7161 PORT6=7162 HELD=7163

vt_kiwi0_up
vt_veth_pair vsa vsb || vt_die "no veth pair"
{ ip addr add $A_IP/24 dev vsa && ip addr add $B_IP/24 dev vsb; } ||
	vt_die "no IPv4 addresses on the veth pair"
{ ip -6 addr add $A_IP6/64 dev vsa nodad &&
	ip -6 addr add $B_IP6/64 dev vsb nodad; } ||
	vt_die "no IPv6 addresses on the veth pair"
vt_link_add kiwi_a vsa || vt_die "no kiwi_a"
vt_link_add kiwi_b vsb || vt_die "no kiwi_b"

# listeners PORT: TCP sockets listening on PORT.
listeners() {
	ss -Hltn "sport = :$1" | wc -l
}

# requests DEV: DEV's cm_requests counter.
requests() {
	vt_stat "$(vt_stats "$1")" cm_requests
}

srv=
# server ADDR PORT: a persistent rping server on ADDR, listening.
server() {
	rping -s -P -a "$1" -p "$2" > "$VT_TMP/srv.$2" 2>&1 &
	srv=$!
	vt_wait_for 30 vt_listening "$2" ||
		vt_fail "rping -s -a $1 -p $2 is not listening: $(tail -n 3 "$VT_TMP/srv.$2" | tr '\n' ' ')"
}

server_stop() {
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	srv=
}

# ping_dev DEV ADDR PORT: 3 verified pings to ADDR; DEV, and no other
# kiwi device, counts the connection.
ping_dev() {
	local dev=$1 addr=$2 port=$3 d out rc
	local -A before
	for d in kiwi0 kiwi_a kiwi_b; do
		vt_dev_exists $d && before[$d]=$(requests $d)
	done
	out=$(timeout 60 rping -c -a "$addr" -p "$port" -C 3 -V 2>&1)
	rc=$?
	if [ $rc = 0 ]; then
		vt_pass "rping to $addr port $port"
	else
		vt_fail "rping to $addr port $port: status $rc: $(tail -n 3 <<<"$out" | tr '\n' ' ')"
	fi
	for d in "${!before[@]}"; do
		if [ "$d" = "$dev" ]; then
			vt_eq "$d counts the connection to $addr" \
				"$(requests $d)" $((before[$d] + 1))
		else
			vt_eq "$d does not count the connection to $addr" \
				"$(requests $d)" "${before[$d]}"
		fi
	done
}

# 1. IPv4 wildcard: one socket, each connection on its own device.
server 0.0.0.0 $PORT
vt_eq "one TCP listener on port $PORT for three devices" "$(listeners $PORT)" 1
ping_dev kiwi0 "$IP" $PORT
ping_dev kiwi_a $A_IP $PORT
ping_dev kiwi_b $B_IP $PORT

# 2. A device deleted under the listen, then added again.
vt_link_del kiwi_b || vt_fail "rdma link delete kiwi_b"
vt_eq "the listener stays for kiwi0 and kiwi_a" "$(listeners $PORT)" 1
ping_dev kiwi_a $A_IP $PORT
vt_link_add kiwi_b vsb || vt_die "no kiwi_b again"
ping_dev kiwi_b $B_IP $PORT
ping_dev kiwi0 "$IP" $PORT
server_stop
vt_wait_for 10 test "$(listeners $PORT)" = 0 ||
	vt_fail "a listener is left on port $PORT"

# 3. IPv6 wildcard (not IPv6-only): IPv6 and IPv4 clients.
server :: $PORT6
vt_eq "one TCP listener on port $PORT6 for three devices" "$(listeners $PORT6)" 1
ping_dev kiwi_a $A_IP6 $PORT6
ping_dev kiwi_b $B_IP6 $PORT6
ping_dev kiwi_b $B_IP $PORT6
server_stop

# 4. A port a process holds: EADDRINUSE, no listener left by kiwi.
python3 -c '
import socket, sys, time
s = socket.socket()
s.bind(("0.0.0.0", int(sys.argv[1])))
s.listen()
time.sleep(60)' $HELD &
holder=$!
vt_wait_for 30 vt_listening $HELD || vt_fail "the holder does not listen"
out=$(timeout 30 rping -s -a 0.0.0.0 -p $HELD -C 1 2>&1)
rc=$?
if [ $rc != 0 ] && [[ "$out" == *"in use"* ]]; then
	vt_pass "rping -s on a held port fails: $(tail -n 1 <<<"$out")"
else
	vt_fail "rping -s on a held port: status $rc: $(tail -n 3 <<<"$out" | tr '\n' ' ')"
fi
vt_eq "only the holder listens on port $HELD" "$(listeners $HELD)" 1
kill $holder
wait $holder 2>/dev/null
server 0.0.0.0 $HELD
ping_dev kiwi_a $A_IP $HELD
server_stop

for p in $PORT $PORT6 $HELD; do
	vt_wait_for 10 test "$(listeners $p)" = 0 ||
		vt_fail "a listener is left on port $p"
done
vt_link_del kiwi_a
vt_link_del kiwi_b
ip link del vsa
vt_finish
