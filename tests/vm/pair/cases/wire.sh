#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A short wire capture for tests/vm/pair/mpa-wire-check.py, cheaper than
# the tshark case: the server guest records eth0's TCP traffic while rping
# (10 iterations of 20000 octets, data verified) runs in both directions;
# run.sh walks every FPDU or framing PDU of it on the host, as for the
# tshark case. A 20000-octet Read Response or Write is a batch kiwi hands
# to TCP by reference (batches under 4 KiB are copied), so the checker's
# "every TCP payload begins with an FPDU" covers both ways of sending.
# - With MPA markers asked for by both guests (mpa_markers=Y on both, the
#   combo kiwi:mpa_markers=Y-kiwi:mpa_markers=Y), the client guest first
#   sets its mpa_markers to N: each receiver chooses for itself (RFC 5044
#   section 7.1.1, MPA-017/018), so markers flow toward the server guest
#   only, on both connections (whichever side initiates), and the checker
#   finds them in that direction and in no other (the tshark case of the
#   same combo covers markers both ways).
# - With the ULP framing draft-00 profile on both guests (ulpf00=Y), every
#   framing PDU is checked with the key its sender announced: the profile
#   in both directions (ULPF-010), keys constant within a direction and
#   different across them (ULPF-011), one DDP segment per framing PDU
#   (ULPF-012).
# Runs where both guests are iWARP over MPA/TCP.

. "$KIWI_SRC/tests/vm/pair/lib.bash"

pcap=$KIWI_RESULTS/$PAIR_ID.pcap
pair_up
case "$PAIR_SERVER $PAIR_CLIENT" in
*rxe*)
	vt_log "wire: needs two iWARP guests, not $PAIR_SERVER-$PAIR_CLIENT"
	pair_down
	vt_finish
	;;
esac
S=/sys/class/infiniband/$PAIR_DEV/kiwi
[ "$PAIR_PROV" = kiwi ] && cat "$S/mpa_markers" > "$KIWI_SHARED/pair.$PAIR_ID.markers.$PAIR_SIDE"
pair_barrier markers-known 60 || vt_die "the peer did not come"
peer_markers=$(cat "$KIWI_SHARED/pair.$PAIR_ID.markers.$PAIR_OTHER" 2>/dev/null)
if [ "$PAIR_SIDE" = client ] && [ "$PAIR_PROV" = kiwi ] &&
	[ "$(cat "$S/mpa_markers")" = Y ] && [ "$peer_markers" = Y ]; then
	echo N > "$S/mpa_markers" || vt_fail "cannot set mpa_markers to N"
	vt_log "markers in one direction: the client guest asks for none"
fi
pair_wire_expect > "$KIWI_RESULTS/$PAIR_ID.expect"
pair_capture_begin "$pcap"
pair_both rping 120 \
	rping -s -V -S 20000 -a "{me}" -p "{port}" -C 10 -- \
	rping -c -V -S 20000 -a "{peer}" -p "{port}" -C 10
pair_capture_end "$pcap"
pair_down
vt_finish
