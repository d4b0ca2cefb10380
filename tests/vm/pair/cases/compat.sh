#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# MPA startup paths between two kiwi guests that no ordinary connection
# takes (combo kiwi-kiwi, MPA/TCP):
# 1. RDMAC revision 0, kiwi as responder (RFC 5044 C.2.1): the hostile
#    peer (tests/vm/hostile/peer.py) on the client guest sends an RDMAC
#    Request (revision 0, M=1, C=1) to vt_target on the server guest. With
#    mpa_rdmac=N (the default), case mpa-rev0: closed, no Reply; with
#    mpa_rdmac=Y, case mpa-rev0-rdmac: a revision 1 Reply, then a graceful
#    close (FIN). Neither Request reaches vt_target (no rdma_cm event) and
#    mpa_bad_frames grows by 2 (MPA-057, MPA-062).
# 2. RDMAC revision 0, kiwi as initiator (C.2.2): a raw server on the
#    server guest (tests/vm/lib/mpa-raw-peer.py rev0-reply) answers the
#    client guest's Request with a revision 0 Reply (M=1, C=1). The connect
#    fails (RDMA_CM_EVENT_CONNECT_ERROR, status -EPROTO) and the initiator
#    sends no octet after its Request; it resets the connection with
#    mpa_rdmac=N and closes it gracefully (FIN) with mpa_rdmac=Y, as C.2.2
#    says (MPA-057, MPA-065, MPA-066).
# 3. A Reply with 300 octets of private data, more than an iw_cm event
#    carries (mpa-raw-peer.py big-pd-accept, big-pd-reject): the kiwi
#    initiator's connect fails with -EMSGSIZE instead of delivering it cut
#    short. The accepting Reply is answered with the MPA Terminate 2/0/05
#    (RFC 6581: a local failure in this phase) and a FIN, the rejecting
#    one with a FIN alone (MPA-065).
# 4. Private data of 0 and 255 octets (the most iw_cm carries) in the
#    Request, the accepting Reply and the rejecting Reply (rdma_reject),
#    both ways (tests/vm/progs/vt_cmpdata), each checked octet by octet;
#    mpa_rej_sent and mpa_rej_rcvd move (MPA-059, MPA-063, MPA-067).
# 5. The ULP framing draft-00 profile against a kiwi without it: the
#    server guest sets ulpf00=Y. The client guest's Request, without the
#    draft-00 field, gets a rejecting Reply (RDMA_CM_EVENT_REJECTED, no
#    private data) and never reaches the server's ULP; the server's
#    Request, with the field, reaches the client guest's ULP (to it the
#    field is 16 octets of private data) and the server's connect fails on the Reply
#    without the field (RDMA_CM_EVENT_CONNECT_ERROR, -EPROTO) (ULPF-010:
#    the profile runs only when both ends ask for it).
# Runs only for kiwi-kiwi with MPA/TCP.

. "$KIWI_SRC/tests/vm/pair/lib.bash"
vt_need_progs

pair_up
S=/sys/class/infiniband/$PAIR_DEV/kiwi
llp=$(cat "$S/llp" 2>/dev/null || echo tcp)
if [ "$PAIR_SERVER-$PAIR_CLIENT" != kiwi-kiwi ] || [ "$llp" != tcp ]; then
	vt_log "compat: needs kiwi-kiwi over MPA/TCP, not $PAIR_SERVER-$PAIR_CLIENT llp=$llp"
	pair_down
	vt_finish
fi
RAW=$KIWI_SRC/tests/vm/lib/mpa-raw-peer.py

# set_kiwi SETTING VALUE: this guest's device setting (new connections).
set_kiwi() {
	echo "$2" > "$S/$1" || vt_fail "cannot set $1 to $2"
}

# --- 1. RDMAC revision 0, kiwi as responder -----------------------------
info=$KIWI_SHARED/pair.$PAIR_ID.target-info
if [ "$PAIR_SIDE" = server ]; then
	st0=$(vt_stats "$PAIR_DEV")
	"$VT_PROGS/vt_target" -a "$KIWI_MY_IP" -p "$((PAIR_PORT + 50))" \
		-o "$VT_TMP/target-info" -d "$PAIR_DEV" > "$VT_TMP/target.log" 2>&1 &
	target=$!
	vt_wait_file "$VT_TMP/target-info" 30 "$target" ||
		vt_fail "vt_target did not start: $(tail -n 3 "$VT_TMP/target.log")"
	cp "$VT_TMP/target-info" "$info"
fi
pair_barrier target-up 60 || vt_die "the peer did not reach the revision 0 test"
for rdmac in N Y; do
	case_name=mpa-rev0
	[ "$rdmac" = Y ] && case_name=mpa-rev0-rdmac
	[ "$PAIR_SIDE" = server ] && set_kiwi mpa_rdmac "$rdmac"
	pair_barrier "rev0-$rdmac" 60 || vt_die "the peer did not set mpa_rdmac"
	if [ "$PAIR_SIDE" = client ]; then
		timeout 60 python3 "$KIWI_SRC/tests/vm/hostile/peer.py" -i "$info" \
			-c "$case_name" --mpa-timeout "$(cat "$S/mpa_timeout")" \
			> "$VT_TMP/$case_name.out" 2>&1
		rc=$?
		sed 's/^/    | /' "$VT_TMP/$case_name.out"
		vt_eq "$case_name: responder with mpa_rdmac=$rdmac (peer.py exit)" "$rc" 0
	fi
	pair_barrier "rev0-$rdmac-done" 90
done
if [ "$PAIR_SIDE" = server ]; then
	set_kiwi mpa_rdmac N
	kill -TERM "$target"
	wait "$target"
	vt_eq "vt_target exit status (memory verdict)" "$?" 0
	vt_eq "rdma_cm events the revision 0 Requests caused at vt_target" \
		"$(grep -c '^conn ' "$VT_TMP/target.log")" 0
	st1=$(vt_stats "$PAIR_DEV")
	vt_eq "mpa_bad_frames grew by 2" \
		"$(($(vt_stat "$st1" mpa_bad_frames) - $(vt_stat "$st0" mpa_bad_frames)))" 2
fi

# --- 2. RDMAC revision 0, kiwi as initiator -----------------------------
# how_ended OUT: the raw server's last line without its seconds.
how_ended() {
	tail -n 1 "$1" | sed 's/ [0-9.]*$//'
}
st0=$(vt_stats "$PAIR_DEV")
for rdmac in N Y; do
	[ "$PAIR_SIDE" = client ] && set_kiwi mpa_rdmac "$rdmac"
	pair_raw_step "rev0-reply-$rdmac" server 60 \
		python3 "$RAW" rev0-reply "{port}" "{me}" 20 -- \
		"$VT_PROGS/vt_cmpdata" -a "{peer}" -p "{port}" -x F0
	out=$VT_TMP/rev0-reply-$rdmac.out
	if [ "$PAIR_SIDE" = client ]; then
		vt_check "rev0-reply-$rdmac: the connect fails with -EPROTO" \
			grep -q '^step 0: RDMA_CM_EVENT_CONNECT_ERROR, status -71$' "$out"
		continue
	fi
	vt_check "rev0-reply-$rdmac: the initiator sent no FPDU after the Reply" \
		grep -qx 'first FPDU: no Terminate' "$out"
	want=reset
	[ "$rdmac" = Y ] && want=eof
	vt_eq "rev0-reply-$rdmac: the initiator's close (nothing after its Request)" \
		"$(how_ended "$out")" "$want"
done
[ "$PAIR_SIDE" = client ] && set_kiwi mpa_rdmac N

# --- 3. a Reply with private data iw_cm cannot carry ----------------------
for how in accept reject; do
	pair_big_pd_step "$how" python3 "$RAW" "big-pd-$how" "{port}" "{me}" 20
	[ "$PAIR_SIDE" = server ] || continue
	out=$VT_TMP/big-pd-$how.out
	if [ "$how" = accept ]; then
		vt_check "big-pd-accept: the initiator sent the MPA Terminate 2/0/05" \
			grep -qx 'term 2/0/05' "$out"
		vt_check "big-pd-accept: then closed gracefully" \
			grep -qE '^eof after [0-9]+ octets ' "$out"
	else
		vt_check "big-pd-reject: no FPDU, a graceful close" \
			test "$(tail -n 2 "$out" | sed 's/ [0-9.]*$//' | tr '\n' ' ')" = \
			"first FPDU: no Terminate eof "
	fi
done
if [ "$PAIR_SIDE" = client ]; then
	st1=$(vt_stats "$PAIR_DEV")
	vt_eq "cm_connect_errors grew by 4 (revision 0 and private data)" \
		"$(($(vt_stat "$st1" cm_connect_errors) - $(vt_stat "$st0" cm_connect_errors)))" 4
fi

# --- 4. private data of 0 and 255 octets, both ways -------------------------
pair_pdata_both

# --- 5. draft-00 against a kiwi without it --------------------------------
[ "$PAIR_SIDE" = server ] && set_kiwi ulpf00 Y
pair_barrier ulpf-set 60 || vt_die "the peer did not set ulpf00"
pair_raw_step ulpf-responder server 60 \
	"$VT_PROGS/vt_cmpdata" -s -a "{me}" -p "{port}" -x A0 -- \
	"$VT_PROGS/vt_cmpdata" -a "{peer}" -p "{port}" -x R0
if [ "$PAIR_SIDE" = client ]; then
	vt_eq "ulpf-responder: the initiator without the profile is rejected (exit)" \
		"$STEP_RC" 0
else
	vt_eq "ulpf-responder: CONNECT_REQUESTs the responder's ULP saw" \
		"$(grep -c '^step 0: request' "$VT_TMP/ulpf-responder.out")" 0
fi
pair_raw_step ulpf-initiator client 60 \
	"$VT_PROGS/vt_cmpdata" -s -a "{me}" -p "{port}" -x A0 -- \
	"$VT_PROGS/vt_cmpdata" -a "{peer}" -p "{port}" -x F0
if [ "$PAIR_SIDE" = server ]; then
	vt_check "ulpf-initiator: the connect fails with -EPROTO on the Reply without the field" \
		grep -q '^step 0: RDMA_CM_EVENT_CONNECT_ERROR, status -71$' "$VT_TMP/ulpf-initiator.out"
	set_kiwi ulpf00 N
else
	# vt_cmpdata fails the step: it wanted none.
	vt_check "ulpf-initiator: to the responder without the profile the field is 16 octets of private data" \
		grep -q 'step 0: request: 16 octets of private data, want 0' "$VT_TMP/ulpf-initiator.out"
fi
pair_down
vt_finish
