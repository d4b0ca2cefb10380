#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# DDP over SCTP (RFC 5043 draft) between two kiwi guests whose devices use
# llp=sctp (combo kiwi:llp=sctp-kiwi:llp=sctp; the other cases of that
# combo run rping, the rdma_cm tools, perftest and the integrity program
# over it).
# 1. The server guest captures the SCTP traffic of rping runs of 3000
#    octets in both directions and checks it with tshark: every INIT and
#    INIT-ACK carries the Adaptation Layer Indication 0x00000001, every
#    DATA chunk is unordered (U=1) with PPID 0x10 (DDP Segment) or 0x11
#    (Session Control), and each connection has its Session Control
#    messages (Initiate, Accept, a Terminate); and with
#    tests/vm/lib/sctp-session-check.py: every INIT and INIT-ACK asks for
#    as many outbound as inbound streams, no DATA chunk is a fragment (DDP
#    cut the 3000-octet messages), each direction's DDP-SSNs run 0, 1, 2...
#    without a gap across both PPIDs, the initiator opens with its
#    Initiate and the responder with its Accept and only a Terminate
#    follows, which carries no Private Data, and the initiator's first DDP
#    Segment follows the Accept.
# 2. A hostile raw SCTP peer (tests/vm/lib/sctp-raw-peer.py) on the client
#    guest against a kiwi listener: without (or with another) adaptation
#    indication, a DDP Segment or an unknown PPID or function code as the
#    first chunk, or an Initiate with more Private Data than the draft's
#    512 octets, or DDP Segments ahead of the Initiate (DDP-SSN 1 to 8,
#    none 0: aborted at once, not held until mpa_timeout), the association
#    is aborted; an Initiate with private data
#    iw_cm cannot carry gets a Session Terminate, and so does a Send on
#    SCTP stream 1 before any Initiate, on stream 1 (counted and logged on
#    the listener's device). The server's counters sctp_no_adaptation,
#    mpa_bad_frames and sctp_ssc_term_sent must grow, and a good rping
#    client connects to the same listener afterwards.
# 3. Private data and rdma_reject() both ways (tests/vm/progs/vt_cmpdata.c):
#    0 and 255 octets in the Initiate reach the listener's CONNECT_REQUEST,
#    0 and 255 octets in the Accept reach the initiator's ESTABLISHED and
#    in the Reject its REJECTED event, each checked octet by octet; the
#    counters mpa_rej_sent and mpa_rej_rcvd move.
# 3b. An Accept and a Reject with 300 octets of private data, from a raw
#    SCTP listener (sctp-raw-peer.py serve-big-*): the kiwi initiator's
#    connect fails with -EMSGSIZE, it answers with a Session Terminate
#    and logs and counts the refusal.
# 4. A hostile raw SCTP peer after a good Initiate and Accept: a duplicate
#    DDP-SSN (delivered or held), a DDP-SSN from before the session or
#    beyond the draft's window of 32767, a segment larger than the MULPDU or than any
#    chunk kiwi reads, a Session Terminate with Private Data: each gets an RDMAP Terminate and the association
#    ends; a segment on SCTP stream 1, where no session runs, gets a
#    Session Terminate on stream 1 and the session on stream 0 goes on
#    until the peer's Terminate, also after 100 such segments at once
#    (more than kiwi's reader answers before it yields its worker: it
#    must come back for the rest); two Sends as DDP-SSN 2, then 1 are taken
#    in DDP-SSN order (SCTP-032). The listener's counters term_sent_ddp and
#    sctp_ssc_term_sent move, its rdma resources return to where they
#    were, and a good initiator connects afterwards.
# 4b. Out-of-order placement, in-order delivery (seed 000 5.3), against
#    vt_target: an RDMA Write sent ahead of a gap is in vt_target's memory
#    before the gap is filled (tests/vm/lib/mem-watch.py reads it there);
#    two 2-segment Sends sent in the DDP-SSN order 4, 2, 3, 1 complete in
#    MSN order, each whole; a Send segment that overlaps, or repeats the
#    MO of, one placed ahead of a gap is not placed and its turn gets the
#    Terminate for "invalid MO" (1/2/04); 300 segments ahead of a gap
#    (more than the 256 an older kiwi held) are taken; the Read Responses
#    answering a Read of vt_target, sent last first, complete the Read.
#    rx_placed_early counts exactly the 7 segments placed ahead of gaps.
# 5. mpa_markers, mpa_crc_off and ulpf00 set to Y on an llp=sctp device:
#    rdma_listen and rdma_connect fail with EOPNOTSUPP (each guest alone).
# 6. IPv6 (fd77::/64): rping with data verification and vt_cmpdata.
# 7. The path MTU drops, then rises, mid-connection: after the client's
#    eth0 goes from MTU 1500 to 1200 during an ib_send_bw, its DDP Segments
#    follow the new MULPDU (1150) as whole DATA chunks; only segments
#    framed before SCTP took the new path MTU are fragmented by SCTP
#    (section 9, SCTP-027); once eth0 is back at 1500 they grow to 1450
#    again.
# 2b. Beyond the listener's backlog: four associations that send nothing
#    fill vt_cmpdata's backlog of 4, a fifth one's Initiate gets a Session
#    Terminate (sctp_ssc_term_sent moves, the listener's device logs it),
#    the ULP sees only the good initiator that follows.
# 2c. Beyond twice that backlog: eight silent associations, a ninth is
#    shut down unread; the ULP again sees only the good initiator after it.
# Checklist items this case drives on the live path: SCTP-001/035 (the
# indication in INIT/INIT-ACK), SCTP-031 (U=1 on every DATA chunk),
# SCTP-026 (as many inbound as outbound streams), SCTP-028 (no chunk
# fragmented while DDP can cut the message instead), SCTP-002/008
# (DDP-SSNs in sequence, without a gap), SCTP-009 (each session's
# Session Control messages in a legal pattern; illegal ones: seg-first,
# bad-fn, mid-*), SCTP-005 (no Private Data in a Terminate sent; one
# received with it ends the stream: mid-term-pd), SCTP-019 (no DDP
# Segment before the Accept), SCTP-004 (an Initiate over 512 octets of
# Private Data refused: huge-pd), SCTP-007 (with 4 Initiates waiting, the
# fifth gets a Terminate: 2b),
# SCTP-011 (a Session Terminate at each connection's end: 6 control
# messages for 2 connections), SCTP-022/036/037 (no or another indication:
# aborted, no DDP chunk), SCTP-010 (a first chunk that fits no legal
# pattern: aborted), SCTP-012 (an Initiate the ULP cannot be shown gets a
# Terminate, never a Reject), SCTP-003/006/013 (private data, possibly
# none, in Initiate, Accept and Reject, reported to the ULP whole; the ULP
# decides), SCTP-014/015 (a finite limit on Initiates waiting, those
# beyond it answered with a Terminate), SCTP-030 (an oversize segment ends the stream), SCTP-032
# (chunks taken in DDP-SSN order, not by arrival or TSN), SCTP-034 (a
# DDP-SSN beyond the window is refused before anything is allocated),
# SCTP-032 again and DDP-006/017/052 (segments placed on arrival ahead of
# a gap, a message delivered only once all of it and every message before
# it is placed, in the order sent: ooo-write, ooo-send).
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
pair_capture_begin "$pcap" sctp
pair_both rping 120 \
	rping -s -v -S 3000 -a "{me}" -p "{port}" -C 20 -- \
	rping -c -v -S 3000 -a "{peer}" -p "{port}" -C 20
pair_barrier traffic-done 120

# sctp_fields: one line per packet with an INIT, INIT-ACK or DATA chunk:
# "TYPES|INDICATIONS|PPIDS|U-BITS", the values of each field joined by
# commas. One tshark pass: its start takes seconds under TCG.
sctp_fields() {
	tshark -r "$pcap" -Y 'sctp.chunk_type == 0 || sctp.chunk_type == 1 || sctp.chunk_type == 2' \
		-T fields -E occurrence=a -E 'separator=|' -e sctp.chunk_type \
		-e sctp.adaptation_layer_indication -e sctp.data_payload_proto_id \
		-e sctp.data_u_bit 2>/dev/null
}

if [ "$PAIR_SIDE" = server ]; then
	pair_capture_stop
	fields=$(sctp_fields)
	# The indications of the packets with an INIT or INIT-ACK.
	inits=$(awk -F'|' '$1 ~ /(^|,)[12](,|$)/ { print $2 }' <<<"$fields")
	n=$(wc -l <<<"$inits")
	good=$(grep -cxE '0x0*1|1' <<<"$inits")
	vt_check "every INIT/INIT-ACK ($n) carries adaptation indication 0x00000001 ($good)" \
		test "$n" -ge 4 -a "$good" = "$n"
	# PPID and U bit of the packets with a DATA chunk.
	data=$(awk -F'|' '$1 ~ /(^|,)0(,|$)/ { print $3 "\t" $4 }' <<<"$fields")
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
	out=$(python3 "$KIWI_SRC/tests/vm/lib/sctp-session-check.py" "$pcap")
	rc=$?
	vt_indent "    | " <<<"$out"
	vt_eq "both associations keep the draft's rules (stream counts, no fragments, DDP-SSNs, session pattern)" \
		"$rc $(tail -n 1 <<<"$out")" "0 2 associations checked, 0 with findings"
fi

# --- 2. a hostile SCTP peer -----------------------------------------------
modes=no-adapt,other-adapt,seg-first,bad-ppid,bad-fn,huge-pd,big-pd,pre-stream,seg-ahead
# The log line of a chunk answered on another stream (kernel/llp_sctp.c).
foreign='SCTP chunk on stream 1, which carries no DDP session'
if [ "$PAIR_SIDE" = server ]; then
	st0=$(vt_stats "$PAIR_DEV")
	log0=$(dmesg | grep -c "$foreign")
fi
pair_step hostile server 180 \
	rping -s -v -a "{me}" -p "{port}" -C 1 -- \
	bash -c "python3 $KIWI_SRC/tests/vm/lib/sctp-raw-peer.py $modes {port} {peer} 20 &&
		rping -c -v -a {peer} -p {port} -C 1"
if [ "$PAIR_SIDE" = client ]; then
	out=$VT_TMP/hostile.out
	sed 's/^/    | /' "$out"
	for m in no-adapt other-adapt seg-first bad-ppid bad-fn huge-pd; do
		vt_check "$m: association aborted" grep -qE "^$m: abort " "$out"
	done
	vt_check "big-pd: Session Terminate, then the association ends" \
		grep -qE "^big-pd: ssc 4 (eof|abort) " "$out"
	vt_check "pre-stream: a Send on stream 1 before any session gets a Session Terminate on stream 1" \
		grep -qE "^pre-stream: ssc 4@1 closed " "$out"
	# Before, the listener held them (up to 4 MiB an association) until
	# mpa_timeout (10 s) ended the association.
	vt_check "seg-ahead: 8 DDP Segments ahead of any Initiate: aborted within 5 s" \
		grep -qE "^seg-ahead: abort \([0-4]\.[0-9] s\)" "$out"
else
	st1=$(vt_stats "$PAIR_DEV")
	vt_log "counters: $(vt_stat "$st0" sctp_no_adaptation) -> $(vt_stat "$st1" sctp_no_adaptation) no-adapt," \
		"$(vt_stat "$st0" mpa_bad_frames) -> $(vt_stat "$st1" mpa_bad_frames) bad," \
		"$(vt_stat "$st0" sctp_ssc_term_sent) -> $(vt_stat "$st1" sctp_ssc_term_sent) term"
	vt_check "sctp_no_adaptation grew by 2" test \
		"$(($(vt_stat "$st1" sctp_no_adaptation) - $(vt_stat "$st0" sctp_no_adaptation)))" = 2
	vt_check "mpa_bad_frames grew by 4 or more" test \
		"$(($(vt_stat "$st1" mpa_bad_frames) - $(vt_stat "$st0" mpa_bad_frames)))" -ge 4
	vt_stat_moved "$PAIR_DEV" "$st0" "$st1" sctp_ssc_term_sent
	vt_check "pre-stream: the listener's device logged the Terminate on stream 1" \
		test "$(dmesg | grep -c "$foreign")" -gt "$log0"
fi

# flood STEP MODE: vt_cmpdata listens (backlog 4) while sctp-raw-peer.py
# MODE floods it with associations, then a good initiator connects: it is
# accepted, and the ULP saw it alone. Output in VT_TMP/STEP.out.
flood() {
	local out=$VT_TMP/$1.out
	pair_step "$1" server 120 \
		"$VT_PROGS/vt_cmpdata" -s -a "{me}" -p "{port}" -x A0 -- \
		bash -c "python3 $KIWI_SRC/tests/vm/lib/sctp-raw-peer.py $2 {port} {peer} 20 &&
			$VT_PROGS/vt_cmpdata -a {peer} -p {port} -x A0"
	sed 's/^/    | /' "$out"
	if [ "$PAIR_SIDE" = client ]; then
		vt_check "$2: a good initiator is accepted afterwards" \
			grep -q 'step 0: accept: 0 octets of private data intact' "$out"
	else
		vt_eq "$2: connections the ULP saw" "$(grep -c '^step [0-9]*: request' "$out")" 1
	fi
}

# --- 2b. beyond the listener's backlog (SCTP-014/015) -------------------------
# vt_cmpdata listens with backlog 4: four associations that send no
# Initiate fill it, a fifth one's Initiate gets a Session Terminate and
# never reaches the ULP.
backlog_log="SCTP Session Initiate beyond the listener's backlog refused"
if [ "$PAIR_SIDE" = server ]; then
	st0=$(vt_stats "$PAIR_DEV")
	log0=$(dmesg | grep -c "$backlog_log")
fi
flood backlog beyond-backlog
if [ "$PAIR_SIDE" = client ]; then
	vt_check "beyond-backlog: the fifth Initiate gets a Session Terminate, then the association ends" \
		grep -qE '^beyond-backlog: ssc 4 (eof|abort) ' "$VT_TMP/backlog.out"
else
	st1=$(vt_stats "$PAIR_DEV")
	vt_stat_moved "$PAIR_DEV" "$st0" "$st1" sctp_ssc_term_sent
	vt_check "the listener's device logged the refused Initiate" \
		test "$(dmesg | grep -c "$backlog_log")" -gt "$log0"
fi

# --- 2c. beyond twice the listener's backlog ----------------------------------
# Eight associations that send no Initiate: four fill the backlog, four
# more are held to have their Initiate refused; a ninth is shut down
# unread (SCTP SHUTDOWN, no Session Control message), which bounds what a
# flood of associations holds.
flood backlog2 beyond-twice-backlog
[ "$PAIR_SIDE" = server ] ||
	vt_check "beyond-twice-backlog: the ninth association is shut down unread" \
		grep -qE '^beyond-twice-backlog: eof ' "$VT_TMP/backlog2.out"

# --- 3. private data and Reject, both ways ----------------------------------
pair_pdata_both

# --- 3b. an Accept or Reject with private data iw_cm cannot carry ----------
# A raw SCTP listener on the server guest answers the client guest's
# Initiate with 300 octets of Private Data: the connect fails with
# -EMSGSIZE (nothing cut short reaches the ULP) and the initiator ends the
# session with a Session Terminate.
refused_log="SCTP Session Accept or Reject with private data over the 255 octets iw_cm delivers refused"
if [ "$PAIR_SIDE" = client ]; then
	st0=$(vt_stats "$PAIR_DEV")
	log0=$(dmesg | grep -c "$refused_log")
fi
for how in accept reject; do
	pair_big_pd_step "$how" \
		python3 "$KIWI_SRC/tests/vm/lib/sctp-raw-peer.py" "serve-big-$how" "{port}" "{me}" 20
	[ "$PAIR_SIDE" = client ] ||
		vt_check "big-pd-$how: the initiator answers with a Session Terminate" \
			grep -qE "^serve-big-$how: ssc 1 ssc 4 (eof|abort) " "$VT_TMP/big-pd-$how.out"
done
if [ "$PAIR_SIDE" = client ]; then
	st1=$(vt_stats "$PAIR_DEV")
	vt_eq "cm_connect_errors grew by 2" \
		"$(($(vt_stat "$st1" cm_connect_errors) - $(vt_stat "$st0" cm_connect_errors)))" 2
	vt_eq "the initiator's device logged both refusals" \
		"$(($(dmesg | grep -c "$refused_log") - log0))" 2
fi

# --- 4. a hostile SCTP peer mid-connection -------------------------------
mid=(mid-dup mid-overlap mid-old mid-beyond mid-big mid-huge mid-term-pd mid-stream mid-reorder mid-flood)
mids=$(IFS=,; echo "${mid[*]}")
if [ "$PAIR_SIDE" = server ]; then
	st0=$(vt_stats "$PAIR_DEV")
	res0=$(vt_res "$PAIR_DEV")
fi
pair_step hostile-mid server 240 \
	"$VT_PROGS/vt_cmpdata" -s -a "{me}" -p "{port}" -x A0,A0,A0,A0,A0,A0,A0,A0,A0,A0,A16 -- \
	bash -c "python3 $KIWI_SRC/tests/vm/lib/sctp-raw-peer.py $mids {port} {peer} 20 &&
		$VT_PROGS/vt_cmpdata -a {peer} -p {port} -x A16"
out=$VT_TMP/hostile-mid.out
sed 's/^/    | /' "$out"
if [ "$PAIR_SIDE" = client ]; then
	# Terminate 1/0/00: layer DDP, local catastrophic error.
	for m in "${mid[@]::7}"; do
		vt_check "$m: RDMAP Terminate (DDP, catastrophic), then the association ends" \
			grep -qE "^$m: ssc 2 term 1/0/00 (ssc 4 )?(eof|abort) " "$out"
	done
	vt_check "mid-stream: Session Terminate on stream 1, the session on stream 0 ends only at the peer's Terminate" \
		grep -qE '^mid-stream: ssc 2 ssc 4@1 (eof|abort) ' "$out"
	vt_check "mid-reorder: DDP-SSN 2 before 1 delivered in order, nothing refused" \
		grep -qE '^mid-reorder: ssc 2 (eof|abort) ' "$out"
	vt_check "mid-flood: 100 segments on stream 1 each get a Session Terminate there, the session on stream 0 ends only at the peer's Terminate" \
		grep -qE '^mid-flood: ssc 2 ssc 4@1 x100 (eof|abort) ' "$out"
	vt_check "a good initiator connects afterwards" \
		grep -q 'step 0: accept: 16 octets of private data intact' "$out"
else
	vt_eq "connections accepted and ended" "$(grep -c '^step [0-9]*: ended' "$out")" 11
	st1=$(vt_stats "$PAIR_DEV")
	vt_log "counters: term_sent_ddp $(vt_stat "$st0" term_sent_ddp) -> $(vt_stat "$st1" term_sent_ddp)," \
		"sctp_ssc_term_sent $(vt_stat "$st0" sctp_ssc_term_sent) -> $(vt_stat "$st1" sctp_ssc_term_sent)"
	vt_check "term_sent_ddp grew by 7 or more" test \
		"$(($(vt_stat "$st1" term_sent_ddp) - $(vt_stat "$st0" term_sent_ddp)))" -ge 7
	vt_stat_moved "$PAIR_DEV" "$st0" "$st1" sctp_ssc_term_sent
	res_back() { [ "$(vt_res "$PAIR_DEV")" = "$res0" ]; }
	vt_wait_for 20 res_back
	vt_eq "rdma resources after the hostile peer" "$(vt_res "$PAIR_DEV")" "$res0"
fi

# --- 4b. placement ahead of a gap, delivery in order ------------------------
ooo=(ooo-write ooo-send ooo-rresp ooo-overlap ooo-dup ooo-window)
info=$KIWI_SHARED/pair.$PAIR_ID.ooo.info
placed=$KIWI_SHARED/pair.$PAIR_ID.ooo.placed
ctl=$(python3 -c 'print(bytes((i * 7 + 1) & 255 for i in range(64)).hex())')
if [ "$PAIR_SIDE" = server ]; then
	rm -f "$info" "$placed"
	st0=$(vt_stats "$PAIR_DEV")
fi
pair_step ooo server 120 \
	bash -c "$VT_PROGS/vt_target -a {me} -p {port} -o $info -n ${#ooo[@]} & t=\$!
		python3 $KIWI_SRC/tests/vm/lib/mem-watch.py $info target_addr $ctl $placed 60
		wait \$t" -- \
	env SCTP_PEER_INFO="$info" SCTP_PEER_PLACED="$placed" \
	python3 "$KIWI_SRC/tests/vm/lib/sctp-raw-peer.py" "$(IFS=,; echo "${ooo[*]}")" \
		"{port}" "{peer}" 20
out=$VT_TMP/ooo.out
sed 's/^/    | /' "$out"
if [ "$PAIR_SIDE" = client ]; then
	vt_check "ooo-write: the Write ahead of the gap was in memory before the gap was filled" \
		grep -qE '^ooo-write: ssc 2 placed (ssc 4 )?(eof|abort) ' "$out"
	for m in ooo-send ooo-window; do
		vt_check "$m: nothing refused" grep -qE "^$m: ssc 2 (ssc 4 )?(eof|abort) " "$out"
	done
	vt_check "ooo-rresp: vt_target's Read answered, nothing refused" \
		grep -qE '^ooo-rresp: ssc 2 rreq (ssc 4 )?(eof|abort) ' "$out"
	for m in ooo-overlap ooo-dup; do
		vt_check "$m: Terminate for invalid MO (DDP, untagged, 04) in its turn" \
			grep -qE "^$m: ssc 2 term 1/2/04 (ssc 4 )?(eof|abort) " "$out"
	done
else
	st1=$(vt_stats "$PAIR_DEV")
	hex() { python3 -c "print(bytes(range($1, $1 + 32)).hex())"; }
	recv=$(grep -E 'wc wr_id=[01] status=success opcode=128 len=40 ' "$out" |
		sed -E 's/^conn [0-9]+ wc wr_id=([01]) .* data=([0-9a-f]*)$/\1 \2/')
	vt_eq "ooo-send: the Receives complete in MSN order, each whole" \
		"$(tr '\n' ' ' <<<"$recv")" "0 $(hex 0x10) 1 $(hex 0x60) "
	vt_check "ooo-write: the watcher saw the Write in vt_target's memory" \
		grep -q '^mem-watch: pattern at' "$out"
	vt_eq "vt_target: connections ended with memory intact" \
		"$(grep -c ' end why=.* mem=ok ' "$out")" "${#ooo[@]}"
	vt_check "ooo-write: the control window holds the Write" \
		grep -qE ' end why=.* control=written ' "$out"
	vt_check "ooo-rresp: the Read, its last Response placed first, completed" \
		grep -qE ' end why=.* read_ok=1 ' "$out"
	vt_eq "rx_placed_early grew by 7" \
		"$(($(vt_stat "$st1" rx_placed_early) - $(vt_stat "$st0" rx_placed_early)))" 7
	vt_check "term_sent_ddp grew by 2 or more" test \
		"$(($(vt_stat "$st1" term_sent_ddp) - $(vt_stat "$st0" term_sent_ddp)))" -ge 2
fi

# --- 5. MPA-only settings are refused on SCTP (each guest alone) ----------
# vt_cmpdata, not rping: an rping client whose rdma_connect() failed waits
# 30 s for an event that never comes.
S=/sys/class/infiniband/$PAIR_DEV/kiwi
port=$((7300 + ${KIWI_MY_IP##*.} * 10))
for set in mpa_markers mpa_crc_off ulpf00; do
	echo Y > "$S/$set" || vt_fail "cannot set $set=Y"
	out=$(timeout 30 "$VT_PROGS/vt_cmpdata" -s -a "$KIWI_MY_IP" -p "$port" -x A0 2>&1)
	vt_check "$set=Y: rdma_listen fails with EOPNOTSUPP ($(tr '\n' ' ' <<<"$out"))" \
		grep -q 'listen on .*: Operation not supported' <<<"$out"
	out=$(timeout 30 "$VT_PROGS/vt_cmpdata" -a "$KIWI_PEER_IP" -p "$((port + 1))" -x A0 2>&1)
	vt_check "$set=Y: rdma_connect fails with EOPNOTSUPP ($(tr '\n' ' ' <<<"$out"))" \
		grep -q 'rdma_connect: Operation not supported' <<<"$out"
	echo N > "$S/$set"
done

# --- 6. IPv6 ----------------------------------------------------------------
me6=fd77::1 peer6=fd77::2
[ "$PAIR_SIDE" = client ] && me6=fd77::2 peer6=fd77::1
ip -6 addr add "$me6/64" dev eth0 nodad || vt_fail "ip -6 addr add $me6"
pair_barrier ipv6-up 60 || vt_fail "the peer did not bring up IPv6"
ping -6 -c 1 -W 10 "$peer6" > /dev/null || vt_fail "no IPv6 path to $peer6"
pair_step rping6 server 120 \
	rping -s -V -S 3000 -a fd77::1 -p "{port}" -C 10 -- \
	rping -c -V -S 3000 -a fd77::1 -p "{port}" -C 10
pair_step pdata6 client 120 \
	"$VT_PROGS/vt_cmpdata" -s -a fd77::2 -p "{port}" -x A255,R255 -- \
	"$VT_PROGS/vt_cmpdata" -a fd77::2 -p "{port}" -x A255,R255
vt_check "pdata6: private data intact over IPv6" \
	test "$(grep -c 'octets of private data intact' "$VT_TMP/pdata6.out")" = 2
ip -6 addr del "$me6/64" dev eth0

# --- 7. the path MTU drops, then rises, mid-connection (section 9) --------
# ib_send_bw of 4000-octet messages from the client for 12 s; 4 s in, the
# client's eth0 goes from MTU 1500 to 1200, 4 s later back to 1500. SCTP
# takes each new path MTU at its next packet and kiwi's next TX batch its
# MULPDU: 1150 octets (1200 - IPv4 20 - SCTP 12 - DATA 16 - DDP-SSN 2),
# so full segments then travel as whole DATA chunks of 1168 octets (B = E
# = 1); a kiwi that kept 1450 sends 1452-octet messages SCTP must cut
# into fragments of at most 1152 (B or E clear). Segments framed before
# SCTP noticed the drop are fragmented (2 to 304 chunks in the first
# runs); as SCTP sends in TSN order, none may follow the first whole
# 1168-octet chunk but for a retransmission of an earlier one (at most
# 10). Once the MTU is back, whole 1468-octet chunks follow the 1168-octet
# ones again: the MULPDU rises with the path MTU, up to the one the
# association started with. The capture keeps 128 octets of each frame,
# the headers, which tests/vm/lib/sctp-first-chunks.py reads (the first
# chunk of each of the client's packets).
pmtu_cap=$KIWI_RESULTS/$PAIR_ID.pmtu.cap
PAIR_SNAPLEN=128 pair_capture_begin "$pmtu_cap" sctp
pair_mtu_dip pmtu
pair_barrier traffic-done 120
if [ "$PAIR_SIDE" = server ]; then
	pair_capture_stop
	# tshark does not dissect truncated SCTP packets: read the headers.
	chunks=$(python3 "$KIWI_SRC/tests/vm/lib/sctp-first-chunks.py" "$pmtu_cap" \
		"$KIWI_PEER_IP" | grep -E '^0 [01] [01] [0-9]+ 16$')
	# Whole chunks (B = E = 1) by their length, fragments as "frag".
	read -r whole_old whole_new whole_again late < <(awk '
		{ print ($2 == 1 && $3 == 1) ? $4 : "frag" }' <<<"$chunks" |
		pair_mtu_phases 1468 1168)
	frag=$(grep -cvE '^0 1 1 |^$' <<<"$chunks")
	vt_log "pmtu: DDP Segment chunks from the client: $(grep -c . <<<"$chunks")," \
		"whole at MULPDU 1450 before the drop: $whole_old, whole at MULPDU 1150: $whole_new," \
		"whole at 1450 after it: $whole_again, fragments: $frag," \
		"fragments after the first whole 1168-octet chunk: $late"
	vt_check "pmtu: whole 1450-octet segments before the drop ($whole_old >= 50)" \
		test "$whole_old" -ge 50
	vt_check "pmtu: whole 1150-octet segments after it ($whole_new >= 50)" \
		test "$whole_new" -ge 50
	vt_check "pmtu: no fragments after the first whole 1150-octet segment but retransmissions ($late <= 10)" \
		test "$late" -le 10
	vt_check "pmtu: whole 1450-octet segments again once the MTU rose ($whole_again >= 50)" \
		test "$whole_again" -ge 50
fi
pair_down
vt_finish
