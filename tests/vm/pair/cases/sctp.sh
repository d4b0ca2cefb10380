#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DDP over SCTP (RFC 5043 draft) between two kiwi guests whose devices use
# llp=sctp (combo kiwi:llp=sctp-kiwi:llp=sctp; the other cases of that
# combo run rping, the rdma_cm tools, perftest and the integrity program
# over it).
# 1. The server guest captures the SCTP traffic of rping runs in both
#    directions and checks it with tshark: every INIT and INIT-ACK carries
#    the Adaptation Layer Indication 0x00000001, every DATA chunk is
#    unordered (U=1) with PPID 0x10 (DDP Segment) or 0x11 (Session
#    Control), and each connection has its Session Control messages
#    (Initiate, Accept, a Terminate).
# 2. A hostile raw SCTP peer (tests/vm/lib/sctp-raw-peer.py) on the client
#    guest against a kiwi listener: without (or with another) adaptation
#    indication, a DDP Segment or an unknown PPID or function code as the
#    first chunk, the association is aborted; an Initiate with private data
#    iw_cm cannot carry gets a Session Terminate. The server's counters
#    sctp_no_adaptation, mpa_bad_frames and sctp_ssc_term_sent must grow,
#    and a good rping client connects to the same listener afterwards.
# Checklist items this case drives on the live path: SCTP-001/035 (the
# indication in INIT/INIT-ACK), SCTP-031 (U=1 on every DATA chunk),
# SCTP-011 (a Session Terminate at each connection's end: 6 control
# messages for 2 connections), SCTP-022/036/037 (no or another indication:
# aborted, no DDP chunk), SCTP-010 (a first chunk that fits no legal
# pattern: aborted), SCTP-012 (an Initiate the ULP cannot be shown gets a
# Terminate, never a Reject).
# Runs only for kiwi-kiwi with llp=sctp on both guests.

. "$KIWI_SRC/tests/vm/pair/lib.bash"

# Not *.pcap: run.sh judges those as MPA captures.
pcap=$KIWI_RESULTS/$PAIR_ID.sctp.cap
pair_up
llp=$(cat "/sys/class/infiniband/$PAIR_DEV/kiwi/llp" 2>/dev/null)
if [ "$PAIR_SERVER-$PAIR_CLIENT" != kiwi-kiwi ] || [ "$llp" != sctp ]; then
	vt_log "sctp: needs kiwi-kiwi with llp=sctp, not $PAIR_SERVER-$PAIR_CLIENT llp=$llp"
	pair_down
	vt_finish
fi

# --- 1. the association on the wire ------------------------------------------
[ "$PAIR_SIDE" = server ] && pair_capture_start "$pcap" sctp
pair_barrier capturing 60 || vt_die "the peer did not reach the capture"
pair_both rping 120 \
	rping -s -v -a "{me}" -p "{port}" -C 20 -- \
	rping -c -v -a "{peer}" -p "{port}" -C 20
pair_barrier traffic-done 120

# sctp_fields FILTER FIELD...: one line per matching chunk occurrence.
sctp_fields() {
	local filter=$1 f=()
	shift
	for x in "$@"; do f+=(-e "$x"); done
	tshark -r "$pcap" -Y "$filter" -T fields -E occurrence=a -E separator=' ' \
		"${f[@]}" 2>/dev/null
}

if [ "$PAIR_SIDE" = server ]; then
	pair_capture_stop
	inits=$(sctp_fields 'sctp.chunk_type == 1 || sctp.chunk_type == 2' \
		sctp.adaptation_layer_indication)
	n=$(wc -l <<<"$inits")
	good=$(grep -cxE '0x0*1|1' <<<"$inits")
	vt_check "every INIT/INIT-ACK ($n) carries adaptation indication 0x00000001 ($good)" \
		test "$n" -ge 4 -a "$good" = "$n"
	data=$(sctp_fields 'sctp.chunk_type == 0' sctp.data_payload_proto_id sctp.data_u_bit |
		tr ' ' '\n' | paste - -)
	total=$(grep -c . <<<"$data")
	segs=$(grep -cE '^16	(1|True)$' <<<"$data")
	ctrl=$(grep -cE '^17	(1|True)$' <<<"$data")
	vt_log "DATA chunks: $total, DDP Segments (PPID 0x10, U=1) $segs, Session Control (PPID 0x11, U=1) $ctrl"
	vt_check "every DATA chunk is unordered with PPID 0x10 or 0x11" \
		test "$total" -gt 0 -a "$((segs + ctrl))" = "$total"
	# Two connections: Initiate + Accept each, at least one Terminate each.
	vt_check "Session Control messages: $ctrl >= 6" test "$ctrl" -ge 6
	vt_check "DDP Segments: $segs >= 160 (20 rping iterations x 2 directions)" \
		test "$segs" -ge 160
fi

# --- 2. a hostile SCTP peer -----------------------------------------------
modes=no-adapt,other-adapt,seg-first,bad-ppid,bad-fn,big-pd
[ "$PAIR_SIDE" = server ] && st0=$(vt_stats "$PAIR_DEV")
pair_step hostile server 180 \
	rping -s -v -a "{me}" -p "{port}" -C 1 -- \
	bash -c "python3 $KIWI_SRC/tests/vm/lib/sctp-raw-peer.py $modes {port} {peer} 20 &&
		rping -c -v -a {peer} -p {port} -C 1"
if [ "$PAIR_SIDE" = client ]; then
	out=$VT_TMP/hostile.out
	sed 's/^/    | /' "$out"
	for m in no-adapt other-adapt seg-first bad-ppid bad-fn; do
		vt_check "$m: association aborted" grep -qE "^$m: abort " "$out"
	done
	vt_check "big-pd: Session Terminate, then the association ends" \
		grep -qE "^big-pd: ssc 4 (eof|abort) " "$out"
else
	st1=$(vt_stats "$PAIR_DEV")
	vt_log "counters: $(vt_stat "$st0" sctp_no_adaptation) -> $(vt_stat "$st1" sctp_no_adaptation) no-adapt," \
		"$(vt_stat "$st0" mpa_bad_frames) -> $(vt_stat "$st1" mpa_bad_frames) bad," \
		"$(vt_stat "$st0" sctp_ssc_term_sent) -> $(vt_stat "$st1" sctp_ssc_term_sent) term"
	vt_check "sctp_no_adaptation grew by 2" test \
		"$(($(vt_stat "$st1" sctp_no_adaptation) - $(vt_stat "$st0" sctp_no_adaptation)))" = 2
	vt_check "mpa_bad_frames grew by 3 or more" test \
		"$(($(vt_stat "$st1" mpa_bad_frames) - $(vt_stat "$st0" mpa_bad_frames)))" -ge 3
	vt_stat_moved "$PAIR_DEV" "$st0" "$st1" sctp_ssc_term_sent
fi
pair_down
vt_finish
