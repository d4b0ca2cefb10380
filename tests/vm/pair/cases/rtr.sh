#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RFC 6581 RTR types on the wire, each in both roles: for every type a
# kiwi guest's mpa_rtr setting names alone (send, write, read; against
# siw write and read, as siw never accepts a Send RTR), short rping runs
# in both directions, so that each guest initiates once per type. Then one
# connection whose initiator (a kiwi guest with mpa_rtr=send) and
# responder (kiwi with mpa_rtr=write) name no type in common: the
# initiator must answer the Reply with the MPA Terminate 2/0/07 (no
# matching RTR option) and close; the connection must fail cleanly on both
# sides. The server guest captures it all; tests/vm/pair/run.sh checks the
# capture with tshark-check.sh (Terminates allowed) and mpa-wire-check.py:
# every initiator's first FPDU is an RTR of the agreed type, each guest
# initiated with every type, and the kiwi initiator sent the Terminate.
# Runs where at least one guest is kiwi and the other is iWARP (siw
# needs its p2p variant to send RTRs as initiator).

. "$KIWI_SRC/tests/vm/pair/lib.bash"

pcap=$KIWI_RESULTS/$PAIR_ID.pcap
pair_up
case "$PAIR_SERVER-$PAIR_CLIENT" in
kiwi-kiwi) types="send write read" ;;
kiwi-siw | siw-kiwi) types="write read" ;;
*)
	vt_log "rtr: needs kiwi and an iWARP peer, not $PAIR_SERVER-$PAIR_CLIENT"
	pair_down
	vt_finish
	;;
esac

# rtr_set TYPES: this guest's RTR types (kiwi only).
rtr_set() {
	[ "$PAIR_PROV" = kiwi ] || return 0
	echo "$1" > "/sys/class/infiniband/$PAIR_DEV/kiwi/mpa_rtr" ||
		vt_fail "cannot set mpa_rtr to $1"
}

pair_capture_begin "$pcap"
want=()
for t in $types; do
	rtr_set "$t"
	pair_barrier "rtr-$t" 60 || vt_die "the peer did not set RTR $t"
	pair_both "rtr-$t" 60 \
		rping -s -v -a "{me}" -p "{port}" -C 3 -- \
		rping -c -v -a "{peer}" -p "{port}" -C 3
	want+=(--want-rtr "$KIWI_MY_IP=$t")
done

# rtr_none: no RTR type in common: the kiwi guest that initiates offers
# send only, the responder accepts write only.
rtr_none() {
	local initiator=client listener=server expect=$PAIR_EXPECT
	[ "$PAIR_CLIENT" = kiwi ] || initiator=server
	[ "$initiator" = server ] && listener=client
	if [ "$PAIR_SIDE" = "$initiator" ]; then
		rtr_set send
		want+=(--want-rtr "$KIWI_MY_IP=none")
	else
		rtr_set write
	fi
	pair_barrier rtr-none 60 || vt_die "the peer did not set its RTR types"
	PAIR_EXPECT=refused
	pair_step rtr-none "$listener" 60 \
		rping -s -v -a "{me}" -p "{port}" -C 1 -- \
		rping -c -v -a "{peer}" -p "{port}" -C 1
	PAIR_EXPECT=$expect
	rtr_set send,write,read
}

# Only against a kiwi responder: when the initiator ends the connection
# before any RTR, siw (Linux 6.1) as responder reports IW_CM_EVENT_CLOSE
# for a connection iw_cm still holds in CONN_RECV (no RTR came, so no
# ESTABLISHED), and iw_cm's cm_close_handler() BUG()s: the siw guest's
# kernel dies (Documentation/interop.md).
if [ "$PAIR_SERVER-$PAIR_CLIENT" = kiwi-kiwi ]; then
	rtr_none
else
	vt_log "rtr-none: skipped, siw as responder crashes in iw_cm when the initiator ends the connection before any RTR"
fi

pair_barrier traffic-done 120
# The offers changed during the run: only markers and the RTRs sent are
# checked.
markers=N
[ "$PAIR_PROV" = kiwi ] &&
	markers=$(cat "/sys/class/infiniband/$PAIR_DEV/kiwi/mpa_markers")
echo "--expect $KIWI_MY_IP=$markers ${want[*]}" > "$KIWI_RESULTS/$PAIR_ID.expect"
if [ "$PAIR_SIDE" = server ]; then
	pair_capture_stop
	echo --allow-terminate > "$KIWI_RESULTS/$PAIR_ID.tshark-opts"
	vt_log "capture: $(stat -c %s "$pcap") bytes in $pcap"
fi
pair_down
vt_finish
