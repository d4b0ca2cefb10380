#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kiwi-lab: timeout=900
#
# Hostile peer (tests/vm/hostile/README.md): vt_target listens on eth0's
# address through the RNIC; peer.py, in the same guest, speaks raw TCP to
# it and runs every case: malformed MPA Requests must be answered by a
# close (silent and slowloris peers at the MPA timeout), bad FPDUs by a
# Terminate with the right Layer/EType/ECode and a close. After each case:
# vt_target's memory verdict (guards, foreign MRs, the target beyond what
# the control case writes), `rdma resource show` back to the held set and
# no TCP connection left on the port except TIME-WAIT. The lab watches the
# console for oopses and WARNings. On kiwi each case must also move the
# counters it provokes (case_counters: `rdma statistic show link`), the
# cases that say so read the target's QP in `rdma resource show qp -dd`
# (peer.py --dd: MPA revision, CRC, markers, framing, IRD/ORD, MSN and
# the MO of a Send in the middle of its segments), the
# marker cases run with kiwi0's mpa_markers setting on, and the
# kiwi_terminate tracepoint must have seen Terminates sent and received.
#
# HOSTILE_DEV=siw runs the same cases against Linux siw (scripts/siw.sh)
# to prove the harness; tests/vm/hostile/siw-scenario.sh sets it. siw's
# known deviations are reported as XFAIL there and do not fail the run.
# HOSTILE_CASES limits the run to some cases (names as peer.py --list).

. "$(dirname "$0")/lib/common.bash"

DEV_KIND=${HOSTILE_DEV:-kiwi}
PORT=7470
IP=${KIWI_MY_IP:-10.77.0.1}
# kiwi is loaded with a short MPA startup timeout (seconds) for this test.
KIWI_MPA_TIMEOUT=3

# Cases whose malformed MPA Request must never reach the ULP.
MPA_CASES="mpa-wrong-key mpa-rev9 mpa-pdlen-513 mpa-truncated mpa-silent
	mpa-slowloris mpa-pdata-256 mpa-rev0 mpa-rev0-rdmac mpa-request-urgent
	mpa-ulpf-missing mpa-ulpf-marker-mode"

# siw 6.1 deviations (see the README's table); XFAIL under HOSTILE_DEV=siw.
# siw implements no MPA markers, so it never asks for them.
# siw has no RFC 7306 (immediate data, atomics): it answers every case
# with 0/2/06. siw has no memory windows (vt_target offers none).
# siw closes on an RDMAC Request without a Reply (RFC 5044 7.1.2).
# siw reads with tcp_read_sock() too, which stops at TCP urgent data, and
# reads its Request with recvmsg(), which drops the urgent octet (read
# from its source, not run). siw has no ULP framing draft-00 profile, and
# no Write with Immediate Data to stall (rdmap-rresp-before-rreq).
SIW_XFAIL="mpa-good-markers mpa-good-markers-stream mpa-bad-marker
	mpa-bad-marker-inside mpa-rev0-rdmac rfc7306-imm-long rfc7306-imm-short
	rfc7306-imm-qn rfc7306-imm-wide rfc7306-imm-no-recv rfc7306-imm-mid-send
	rfc7306-atomic-good rfc7306-atomic-aopcode rfc7306-atomic-unaligned
	rfc7306-atomic-short rfc7306-atomic-long rfc7306-atomic-qn
	rfc7306-atomic-no-right rfc7306-atomic-qp-no-right rfc7306-atomic-bounds
	rfc7306-atomic-beyond-ird rfc7306-atomic-masked-add
	rfc7306-atomic-masked-cmpswap llp-tcp-urgent mpa-request-urgent rdmap-mw-invalidated
	mpa-good-ulpf ulpf-wrong-key mpa-ulpf-missing mpa-ulpf-marker-mode
	rdmap-rresp-before-rreq"

# Cases that need kiwi's RFC 5044 Appendix C answer to RDMAC peers.
RDMAC_CASES="mpa-rev0-rdmac"

# Cases that need the ULP framing draft-00 profile (kiwi: ulpf00=Y).
ULPF_CASES="mpa-good-ulpf ulpf-wrong-key mpa-ulpf-missing mpa-ulpf-marker-mode"

# Cases that need the target to ask for markers (kiwi: mpa_markers=Y).
MARKER_CASES="mpa-good-markers mpa-good-markers-stream mpa-bad-marker
	mpa-bad-marker-inside"

# case_counters NAME: the kiwi counters case NAME must move.
case_counters() {
	case "$1" in
	mpa-good-rev2) echo "cm_requests mpa_req_rcvd mpa_rep_sent rx_fpdus" \
		"rx_octets tx_fpdus tx_octets read_req_served" ;;
	mpa-wrong-key | mpa-rev9 | mpa-pdlen-513 | mpa-rev0 | mpa-rev0-rdmac | \
		mpa-request-urgent)
		echo mpa_bad_frames ;;
	mpa-bad-crc) echo "rx_crc_errors term_sent_llp" ;;
	mpa-pdata-256) echo mpa_rej_sent ;;
	mpa-bad-marker | mpa-bad-marker-inside)
		echo "rx_marker_errors term_sent_llp" ;;
	rdmap-opcode-unknown | rdmap-rresp-before-rreq | \
		rfc7306-atomic-aopcode | \
		rfc7306-atomic-unaligned | rfc7306-atomic-bounds)
		echo term_sent_rdmap ;;
	rfc7306-atomic-qn | rfc7306-atomic-long) echo term_sent_ddp ;;
	rfc7306-atomic-good | rfc7306-atomic-masked-add | \
		rfc7306-atomic-masked-cmpswap) echo "rx_fpdus tx_fpdus" ;;
	ddp-stag-invalid | rdmap-mw-invalidated) echo term_sent_ddp ;;
	rdmap-read-beyond-ird | rfc7306-atomic-beyond-ird)
		echo "ird_exceeded term_sent_rdmap" ;;
	term-from-peer-rdmap) echo term_rcvd_rdmap ;;
	term-from-peer-ddp) echo term_rcvd_ddp ;;
	term-from-peer-llp | term-in-place-of-rtr) echo term_rcvd_llp ;;
	llp-tcp-urgent) echo "rx_urgent term_sent_llp" ;;
	esac
}

# case_trace NAME: a kiwi_terminate tracepoint line case NAME must add.
case_trace() {
	case "$1" in
	term-in-place-of-rtr) echo "received layer=2 etype=0 ecode=0x06" ;;
	llp-tcp-urgent) echo "sent layer=2 etype=0 ecode=0x05" ;;
	esac
}

# trace_count PATTERN: kiwi_terminate lines of kiwi0 with PATTERN so far.
trace_count() {
	grep -c "kiwi_terminate: dev=$DEV qpn=[0-9]* $1" "$TRACE/trace"
}

setup_kiwi() {
	local p
	modinfo kiwi >/dev/null 2>&1 || vt_die "no kiwi.ko for $(uname -r)"
	vt_clean_links
	modprobe -r kiwi 2>/dev/null
	p=$(modinfo -F parm kiwi | sed -n 's/^\(mpa[a-z_]*timeout[a-z_]*\):.*/\1/p' |
		head -n 1)
	if [ -n "$p" ]; then
		modprobe kiwi "$p=$KIWI_MPA_TIMEOUT" || vt_die "modprobe kiwi $p"
		MPA_TIMEOUT=$KIWI_MPA_TIMEOUT
		vt_log "kiwi loaded with $p=$KIWI_MPA_TIMEOUT"
	else
		vt_fail "kiwi has no MPA timeout module parameter"
		modprobe kiwi || vt_die "modprobe kiwi"
		MPA_TIMEOUT=10
	fi
	vt_link_add kiwi0 eth0 || vt_die "cannot create kiwi0"
	DEV=kiwi0
	LAYOUT=rfc
}

setup_siw() {
	local ko

	ko=$("$KIWI_SRC/scripts/siw.sh" --quiet) || vt_die "cannot build siw"
	modprobe -a ib_core libcrc32c
	insmod "$ko" || vt_die "insmod $ko"
	rdma link add siw0 type siw netdev eth0 || vt_die "rdma link add siw0"
	DEV=siw0
	LAYOUT=auto
	MPA_TIMEOUT=5		# siw_cm.h MPAREP_TIMEOUT
}

teardown_dev() {
	if [ "$DEV_KIND" = siw ]; then
		rdma link delete siw0
		rmmod siw
	else
		vt_link_del kiwi0
		# Later scenarios of the boot expect kiwi's default parameters.
		modprobe -r kiwi || vt_fail "modprobe -r kiwi"
	fi
}

# Connections on PORT other than the listener and TIME-WAIT.
lingering() {
	ss -tanH state all exclude listening exclude time-wait \
		"( sport = :$PORT or dport = :$PORT )"
}

is_mpa_case() {
	case " $(echo $MPA_CASES) " in *" $1 "*) return 0 ;; esac
	return 1
}

res_is_held() {
	[ "$(vt_res "$DEV")" = "$held" ]
}

no_lingering() {
	[ -z "$(lingering)" ]
}

# run_case NAME: one case, its outcome and the target's state afterwards.
run_case() {
	local name=$1 before k line conn="" bad=() rc t0 t1 s0 s1 n tr tr0

	tr=$(case_trace "$name")
	if [ "$DEV_KIND" = kiwi ]; then
		s0=$(vt_stats "$DEV")
		[ -z "$tr" ] || tr0=$(trace_count "$tr")
	fi
	if [ "$DEV_KIND" = kiwi ] && [[ " $(echo $MARKER_CASES) " = *" $name "* ]]; then
		echo Y > "/sys/class/infiniband/$DEV/kiwi/mpa_markers"
	fi
	if [ "$DEV_KIND" = kiwi ] && [[ " $ULPF_CASES " = *" $name "* ]]; then
		echo Y > "/sys/class/infiniband/$DEV/kiwi/ulpf00"
	fi
	if [ "$DEV_KIND" = kiwi ] && [[ " $RDMAC_CASES " = *" $name "* ]]; then
		echo Y > "/sys/class/infiniband/$DEV/kiwi/mpa_rdmac"
	fi
	before=$(vt_target_ends "$VT_TMP/target.log")
	k=$((before + 1))
	t0=$EPOCHSECONDS
	timeout 120 "${VT_PEER[@]}" -i "$VT_TMP/info" -c "$name" \
		--mpa-timeout "$MPA_TIMEOUT" --layout "$LAYOUT" \
		$([ "$DEV_KIND" = kiwi ] && echo --dd "$DEV") \
		>"$VT_TMP/case.log" 2>&1
	rc=$?
	vt_indent '    ' <"$VT_TMP/case.log"
	[ "$rc" = 0 ] || bad+=("$(sed -n "s/^FAIL $name: //p" "$VT_TMP/case.log" |
		head -c 400)")
	[ "$rc" = 0 ] || [ -n "${bad[0]}" ] || bad=("peer.py exit status $rc")

	if is_mpa_case "$name"; then
		vt_nap 0.5
		if [ "$(vt_target_ends "$VT_TMP/target.log")" != "$before" ] ||
		   vt_target_conn "$VT_TMP/target.log" "$k" >/dev/null; then
			bad+=("the malformed Request reached the ULP as a connection")
		fi
	elif vt_target_wait_end "$VT_TMP/target.log" "$k" 20; then
		conn=$(vt_target_conn "$VT_TMP/target.log" "$k")
		line=$(vt_lines "conn $k end*" "$conn")
		case "$line" in *mem=ok*) ;; *) bad+=("target memory changed") ;; esac
		case "$name:$line" in
		mpa-good-*:*control=written*) ;;
		mpa-good-*) bad+=("the control Write did not land") ;;
		*:*control=untouched*) ;;
		*) bad+=("the control window was written") ;;
		esac
		# iw_cm's whole 255 octets of private data reach the ULP.
		case "$name:$line" in
		mpa-good-pdata-255:*)
			[ -n "$(vt_lines "conn $k request pd=255 pattern*" "$conn")" ] ||
				bad+=("the 255 octets of private data did not reach vt_target whole")
			;;
		esac
		# SEC-09: nothing after the first error completes at the target.
		case "$name:$line" in
		ddp-after-error:*" wc_ok=0 "*) ;;
		ddp-after-error:*) bad+=("a segment after the error completed") ;;
		esac
		# DDP-017/052: an incomplete Send never completes a receive.
		case "$name:$line" in
		ddp-send-mo-*:*" wc_ok=0 "*) ;;
		ddp-send-mo-*) bad+=("an incomplete Send completed a receive") ;;
		esac
		# RDMAP-17: the receive WR a Send overflows completes with its
		# own length error (as on siw and rxe), not only as flushed.
		case "$name" in
		ddp-send-too-long)
			[ -n "$(vt_lines "conn $k wc *status=local length error*" "$conn")" ] ||
				bad+=("the overflowed receive did not complete with a local length error")
			;;
		esac
		# RDMAP-20: the Write with Immediate Data whose zero-length
		# Read had not gone out is not completed by a Response to it.
		case "$name" in
		rdmap-rresp-before-rreq)
			[ -z "$(vt_lines "conn $k wc *status=success opcode=1 *" "$conn")" ] ||
				bad+=("the Write with Immediate Data completed successfully")
			[ -n "$(vt_lines "conn $k posted writeimm*" "$conn")" ] ||
				bad+=("vt_target did not post the Write with Immediate Data")
			;;
		esac
		# RDMAP-16: a Read completes only when its sink was filled.
		case "$name:$line" in
		rdmap-rresp-*:*" read_ok=0 "*) ;;
		rdmap-rresp-*) bad+=("a Read completed without its whole Response") ;;
		mpa-good-rresp:*" read_ok=1 "*) ;;
		mpa-good-rresp:*) bad+=("the target's Read did not complete") ;;
		esac
	else
		bad+=("vt_target saw no end of connection $k within 20 s")
	fi
	[ -n "$conn" ] || conn=$(vt_target_conn "$VT_TMP/target.log" "$k")
	[ -z "$conn" ] || vt_indent '    target: ' <<<"$conn"

	vt_wait_for 15 res_is_held ||
		bad+=("rdma resource show: $(vt_res "$DEV"), held set $held")
	vt_wait_for 15 no_lingering ||
		bad+=("connections left on port $PORT: $(lingering | tr '\n' ' ')")
	if [ "$DEV_KIND" = kiwi ]; then
		echo N > "/sys/class/infiniband/$DEV/kiwi/mpa_markers"
		echo N > "/sys/class/infiniband/$DEV/kiwi/mpa_rdmac"
		echo N > "/sys/class/infiniband/$DEV/kiwi/ulpf00"
		s1=$(vt_stats "$DEV")
		for n in $(case_counters "$name"); do
			[ "$(vt_stat "$s1" "$n")" -gt "$(vt_stat "$s0" "$n")" ] ||
				bad+=("counter $n did not grow ($(vt_stat "$s0" "$n") -> $(vt_stat "$s1" "$n"))")
		done
		if [ -n "$tr" ] && [ "$(trace_count "$tr")" -le "$tr0" ]; then
			bad+=("no kiwi_terminate event \"$tr\"")
		fi
		[ -z "$(case_counters "$name")" ] ||
			vt_log "counters moved: $(for n in $(case_counters "$name"); do printf '%s %s->%s ' "$n" "$(vt_stat "$s0" "$n")" "$(vt_stat "$s1" "$n")"; done)"
	fi
	t1=$EPOCHSECONDS

	if [ ${#bad[@]} = 0 ]; then
		vt_pass "$name ($((t1 - t0)) s)"
		SUMMARY+="PASS  $name"$'\n'
	elif [ "$DEV_KIND" = siw ] && [[ " $(echo $SIW_XFAIL) " = *" $name "* ]]; then
		vt_log "XFAIL (known siw deviation) $name: ${bad[*]}"
		SUMMARY+="XFAIL $name: ${bad[*]}"$'\n'
	else
		vt_fail "$name: ${bad[*]}"
		SUMMARY+="FAIL  $name: ${bad[*]}"$'\n'
	fi
}

"${VT_PEER[@]}" --selftest >/dev/null || vt_die "peer.py CRC32c self-test"
[ -x "$VT_PROGS/vt_target" ] ||
	make -s -C "$KIWI_SRC/tests/vm/progs" KIWI_BUILD="$KIWI_BUILD" ||
	vt_die "cannot build tests/vm/progs"

case "$DEV_KIND" in
kiwi) setup_kiwi ;;
siw) setup_siw ;;
*) vt_die "HOSTILE_DEV must be kiwi or siw, not $DEV_KIND" ;;
esac
base=$(vt_res "$DEV")
TRACE=/sys/kernel/tracing
if [ "$DEV_KIND" = kiwi ]; then
	echo > "$TRACE/trace"
	echo 1 > "$TRACE/events/kiwi/kiwi_terminate/enable"
fi

"$VT_PROGS/vt_target" -a "$IP" -p "$PORT" -o "$VT_TMP/info" -d "$DEV" \
	>"$VT_TMP/target.log" 2>&1 &
target_pid=$!
vt_wait_file "$VT_TMP/info" 30 "$target_pid" || {
	cat "$VT_TMP/target.log"
	vt_die "vt_target did not start"
}
held=$(vt_res "$DEV")
# vt_target's two PDs plus the one librdmacm allocates for each device it
# binds an id to (its default PD); seven MRs, on kiwi an eighth for its
# window.
vt_eq "vt_target's held set" "$held" \
	"$(vt_res_add "$base" pd=3 cq=1 mr=$([ "$DEV_KIND" = kiwi ] && echo 8 || echo 7) ctx=1 cm_id=1)"
sed 's/^/    info: /' "$VT_TMP/info"

SUMMARY=""
RAN=" "
# ran_case NAME: case NAME ran in this scenario.
ran_case() {
	[[ "$RAN" = *" $1 "* ]]
}

for name in ${HOSTILE_CASES:-$("${VT_PEER[@]}" --list | awk '{print $1}')}; do
	RAN+="$name "
	vt_log "case $name"
	run_case "$name"
done

kill -TERM "$target_pid"
wait "$target_pid"
vt_eq "vt_target exit status (every memory verdict)" "$?" 0
tail -n 3 "$VT_TMP/target.log" | sed 's/^/    target: /'
vt_eq "resources after vt_target" "$(vt_res "$DEV")" "$base"
if [ "$DEV_KIND" = kiwi ]; then
	echo 0 > "$TRACE/events/kiwi/kiwi_terminate/enable"
	terms=$(grep -o 'kiwi_terminate: .*' "$TRACE/trace")
	vt_log "$(grep -c . <<<"$terms") kiwi_terminate events, e.g. $(head -n 1 <<<"$terms")"
	# Provoked by mpa-bad-crc and term-from-peer-ddp (unless HOSTILE_CASES
	# left them out).
	if ran_case mpa-bad-crc; then
		vt_check "tracepoint: Terminate 2/0/02 sent on $DEV" \
			grep -q "dev=$DEV qpn=[0-9]* sent layer=2 etype=0 ecode=0x02" <<<"$terms"
	fi
	if ran_case term-from-peer-ddp; then
		vt_check "tracepoint: Terminate 1/2/01 received on $DEV" \
			grep -q "dev=$DEV qpn=[0-9]* received layer=1 etype=2 ecode=0x01" <<<"$terms"
	fi
fi
teardown_dev

vt_log "summary ($DEV_KIND):"
printf '%s' "$SUMMARY" | sed 's/^/    /'
cp "$VT_TMP/target.log" "${KIWI_RESULTS:-$VT_TMP}/hostile-target-$DEV_KIND.log" 2>/dev/null
vt_finish
