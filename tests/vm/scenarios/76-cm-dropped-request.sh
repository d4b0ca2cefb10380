#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kiwi-lab: timeout=300
#
# A CONNECT_REQUEST iw_cm drops (Documentation/cm.md, "Startup rules"):
# iw_cm drops a request without a word when its listener is being
# destroyed (or it cannot make an id for it), so nobody accepts or
# rejects that connection. kiwi must end it within mpa_timeout of the
# request, whatever its peer does. kiwi_vmtest's "dropreq" test
# (tests/vm/kmod/vmtest_iwcm.c) listens straight on iw_cm, holds the first
# request in its handler and destroys the listener meanwhile; two raw
# peers (tests/vm/lib/mpa-raw-peer.py request) each send a valid Request
# and then stay silent. One is rejected by the handler 5 s after its
# request (an MPA Reply: within mpa_timeout, 8 s here); the other's
# request is dropped: its connection must end (RST) within mpa_timeout
# plus a margin, and no socket may stay on the port. Then the same with
# mpa_timeout 30 s and `rdma link delete` right after the listener went:
# device removal must end the dropped request at once (before the fix it
# waited for mpa_timeout: removal skipped a responder's children).

. "$(dirname "$0")/lib/common.bash"

IP=${KIWI_MY_IP:-10.77.0.1}
PORT=7476
MPA_TIMEOUT=8
BOUND=$((MPA_TIMEOUT + 4))	# seconds from the Request to the end
WAIT=30				# how long a peer waits for anything
RAW=$KIWI_LIB/mpa-raw-peer.py
KMOD=$KIWI_BUILD/vmkmod/$(uname -r)/kiwi_vmtest.ko
VP=/sys/module/kiwi_vmtest/parameters

[ -f "$KMOD" ] || vt_die "no $KMOD (make -C tests/vm/kmod)"
vt_clean_links
modprobe -r kiwi 2>/dev/null
modprobe kiwi mpa_timeout=$MPA_TIMEOUT ||
	vt_die "modprobe kiwi mpa_timeout=$MPA_TIMEOUT"
vt_link_add kiwi0 eth0 || vt_die "cannot create kiwi0"
insmod "$KMOD" dev=kiwi0 addr="$IP" port=$PORT || vt_die "insmod $KMOD"

# Connections on PORT other than the listener and TIME-WAIT.
lingering() {
	ss -tanH state all "( sport = :$PORT or dport = :$PORT )" |
		awk '$1 != "LISTEN" && $1 != "TIME-WAIT"'
}

no_lingering() {
	[ -z "$(lingering)" ]
}

# start_peers PREFIX WAIT LIMIT: the two raw peers (output in
# VT_TMP/PREFIX.a and .b, pids in peers) connect, and once both
# connections are up send their Requests together: the second must reach
# the listener within VT_DESTROY_MS (2.5 s) of the first, which two
# Python starts under a loaded TCG guest do not promise.
start_peers() {
	local p go=$VT_TMP/$1.go
	rm -f "$go"
	peers=()
	for p in a b; do
		MPA_RAW_GO=$go timeout "$3" python3 "$RAW" request $PORT "$IP" "$2" \
			> "$VT_TMP/$1.$p" 2>&1 &
		peers+=($!)
	done
	vt_wait_for 30 two_connected || vt_fail "the raw peers did not connect"
	touch "$go"
}

two_connected() {
	[ "$(ss -tanH state established "( dport = :$PORT )" | wc -l)" -ge 2 ]
}

echo dropreq > $VP/run &
run=$!
vt_wait_for 30 vt_listening $PORT || vt_die "dropreq does not listen"
start_peers peer $WAIT $((WAIT + 10))
wait $run
vt_eq "dropreq" "$(cat $VP/result)" "PASS requests=1"
wait "${peers[@]}"
rejected=0
ended=0
for p in a b; do
	res=$(cat "$VT_TMP/peer.$p")
	vt_log "peer $p: $res"
	read -r how secs _ <<<"$res"
	case "$how" in
	data) rejected=$((rejected + 1)) ;;
	reset | eof) [ "${secs%.*}" -lt $BOUND ] && ended=$((ended + 1)) ;;
	esac
done
vt_eq "requests the handler rejected (an MPA Reply)" $rejected 1
vt_eq "dropped requests ended by kiwi within ${BOUND} s" $ended 1
vt_wait_for 5 no_lingering ||
	vt_fail "connections left on port $PORT: $(lingering | tr '\n' ' ')"

# 2. A dropped request ended by device removal, well before mpa_timeout.
echo 30 > /sys/class/infiniband/kiwi0/kiwi/mpa_timeout
echo dropreq > $VP/run &
run=$!
vt_wait_for 30 vt_listening $PORT || vt_die "dropreq does not listen"
start_peers rm 60 70
wait $run
vt_eq "dropreq before the removal" "$(cat $VP/result)" "PASS requests=1"
t0=$(date +%s%N)
vt_link_del kiwi0
wait "${peers[@]}"
t=$((($(date +%s%N) - t0) / 1000000))
res="$(cat "$VT_TMP/rm.a") / $(cat "$VT_TMP/rm.b")"
vt_log "peers: $res"
grep -q '^reset\|^eof' "$VT_TMP/rm.a" "$VT_TMP/rm.b" && [ $t -lt 5000 ] &&
	vt_pass "the dropped request ended $t ms into device removal" ||
	vt_fail "the dropped request ended $t ms into device removal: $res"
vt_wait_for 5 no_lingering ||
	vt_fail "connections left on port $PORT: $(lingering | tr '\n' ' ')"

rmmod kiwi_vmtest || vt_fail "rmmod kiwi_vmtest"
vt_check "modprobe -r kiwi" timeout 60 modprobe -r kiwi
vt_finish
