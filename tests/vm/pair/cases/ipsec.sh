#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# iWARP under IPsec (SEC-19; RFC 5040-5044 section on security leave
# protection to IPsec under TCP or SCTP, and kiwi must run unchanged over
# it): the two guests protect all IP traffic between them with static
# `ip xfrm` ESP security associations (AES-GCM, anti-replay window 64;
# no IKE, which is the environment's, not the RNIC's), one pair of SAs
# per direction, and the usual traffic runs over them:
#  1. Transport mode, then tunnel mode: rping with its payload checked
#     (-V), and ib_send_bw, ib_write_bw, ib_read_bw of 64 KiB. Each
#     guest's outbound and inbound SAs must have carried at least as many
#     packets as rping made iterations (the policies require ESP, so
#     nothing went around them).
#  2. The Phase-2 delete (MPA-086, DDP-101): during a 12 s ib_write_bw
#     (transport mode) each guest deletes its SAs, waits 2 s with the
#     policies still requiring ESP (its packets are dropped meanwhile) and
#     installs new ones with new SPIs and keys. TCP retransmits across the
#     gap, the transfer must end normally, the new SAs must carry packets,
#     and no Terminate may have been sent or received. On a kiwi side
#     without markers, the QP's MULPDU (rdma resource show -dd) must be
#     the one of the EMSS the SAs leave, which TCP's MSS for the socket
#     shows (MPA-036; below 1448, this MTU's EMSS without IPsec).
# Runs for any combo; kiwi's counters are checked when this side is kiwi.
# Checklist items this case drives on the live path: SEC-19 (transport and
# tunnel mode, SA deleted and re-created mid-transfer), DDP-098 (ESP with
# anti-replay), DDP-099 (tunnel mode), DDP-101 and MPA-086 (the Phase-2
# delete leaves the stream up), MPA-036 (MULPDU of the EMSS under ESP).
# IKE is the environment's (strongSwan, say), not kiwi's: not tested.

. "$KIWI_SRC/tests/vm/pair/lib.bash"

count=200
[ "$PAIR_MODE" = full ] && count=2000
bw_n=100
[ "$PAIR_MODE" = full ] && bw_n=1000

me=$KIWI_MY_IP
peer=$KIWI_PEER_IP
srv=$me cli=$peer
[ "$PAIR_SIDE" = server ] || srv=$peer cli=$me
reqid=7

ipsec_flush() {
	ip xfrm policy flush
	ip xfrm state flush
}

# ipsec_sa GEN DIR: the number of generation GEN's SA for DIR (sc: server
# to client, cs: client to server). Both guests compute the same.
ipsec_sa() {
	local d=0
	[ "$2" = cs ] && d=1
	echo $(($1 * 2 + d))
}

# ipsec_spi GEN DIR: that SA's SPI.
ipsec_spi() {
	printf '0x%x' $((0x1000 + $(ipsec_sa "$1" "$2")))
}

# ipsec_key GEN DIR: that SA's 160-bit AES-GCM key and salt.
ipsec_key() {
	printf '0x%032x%08x' $((0x5a000 + $(ipsec_sa "$1" "$2"))) $((0x5a17 + $1))
}

# ipsec_states MODE GEN: generation GEN's two SAs (one per direction).
ipsec_states() {
	local mode=$1 gen=$2 dir s d
	for dir in sc cs; do
		s=$srv d=$cli
		[ "$dir" = cs ] && s=$cli d=$srv
		ip xfrm state add src "$s" dst "$d" proto esp \
			spi "$(ipsec_spi "$gen" "$dir")" reqid "$reqid" \
			mode "$mode" replay-window 64 \
			aead 'rfc4106(gcm(aes))' "$(ipsec_key "$gen" "$dir")" 128 ||
			return 1
	done
}

# ipsec_up MODE: SAs of generation 0 and the policies that require ESP for
# everything between the two guests, both ways.
ipsec_up() {
	local mode=$1
	ipsec_flush
	ipsec_states "$mode" 0 &&
	ip xfrm policy add src "$me/32" dst "$peer/32" dir out \
		tmpl src "$me" dst "$peer" proto esp reqid "$reqid" mode "$mode" &&
	ip xfrm policy add src "$peer/32" dst "$me/32" dir in \
		tmpl src "$peer" dst "$me" proto esp reqid "$reqid" mode "$mode"
}

# ipsec_packets GEN DIR: packets the SA carried so far (0 if none).
ipsec_packets() {
	local s=$srv d=$cli n
	[ "$2" = cs ] && s=$cli d=$srv
	n=$(ip -s xfrm state get src "$s" dst "$d" proto esp \
		spi "$(ipsec_spi "$1" "$2")" 2>/dev/null |
		sed -n 's/.* \([0-9]\+\)(packets).*/\1/p' | head -n 1)
	echo "${n:-0}"
}

# ipsec_carried WHAT GEN MIN: both of generation GEN's SAs carried at least
# MIN packets on this guest.
ipsec_carried() {
	local dir n
	for dir in sc cs; do
		n=$(ipsec_packets "$2" "$dir")
		if [ "$n" -ge "$3" ]; then
			vt_pass "$1: SA $dir (spi $(ipsec_spi "$2" "$dir")) carried $n packets"
		else
			vt_fail "$1: SA $dir (spi $(ipsec_spi "$2" "$dir")) carried $n packets, expected at least $3"
		fi
	done
}

# ipsec_traffic MODE: rping with its data checked and the three bandwidth
# tests, all over generation 0's SAs of MODE.
ipsec_traffic() {
	local mode=$1 t
	pair_step "ipsec.$mode.rping" server 300 \
		rping -s -V -a "{me}" -p "{port}" -C "$count" -- \
		rping -c -V -a "{peer}" -p "{port}" -C "$count"
	for t in ib_send_bw ib_write_bw ib_read_bw; do
		pair_step "ipsec.$mode.$t" server 300 \
			"$t" -d "$PAIR_DEV" -R -F -s 65536 -n "$bw_n" -p "{port}" -- \
			"$t" -d "$PAIR_DEV" -R -F -s 65536 -n "$bw_n" -p "{port}" "{peer}"
	done
	ipsec_carried "$mode" 0 "$count"
}

# ipsec_rekey: once this guest has a TCP connection to the peer (the
# transfer's: nothing else between the guests runs over TCP) and the peer
# too, let the transfer run 3 s, delete the SAs, wait 2 s, install
# generation 1. Both guests delete at the same moment: SAs of different
# generations at the two ends for longer would let TCP's retransmission
# timer back off past the transfer. Logs what it did into
# VT_TMP/ipsec.rekey.
ipsec_rekey() {
	local i
	for ((i = 0; i < 120; i++)); do
		[ -z "$(ss -tnH state established dst "$peer")" ] || break
		vt_nap 0.5
	done
	pair_barrier "ipsec.rekey.go" 60
	vt_nap 3
	{
		echo "running before the delete: $(pgrep -c ib_write_bw)"
		rdma -j -dd resource show qp link "$PAIR_DEV/1" |
			grep -o '"drv_mulpdu":[0-9]*' | head -n 1
		ss -tniH state established dst "$peer" | grep -o ' mss:[0-9]*' |
			head -n 1
		ip xfrm state deleteall proto esp
		vt_nap 2
		ipsec_states transport 1 && echo "generation 1 installed"
	} > "$VT_TMP/ipsec.rekey" 2>&1
}

# ipsec_mulpdu: kiwi's MULPDU follows the EMSS that ESP leaves (RFC 5044
# section 4.5, MPA-036 without markers: EMSS - (6 + EMSS mod 4)), as the
# TCP socket's MSS under the SAs shows; smaller than the 1448 of this MTU
# without IPsec.
ipsec_mulpdu() {
	local m e
	m=$(sed -n 's/^"drv_mulpdu":\([0-9]*\)$/\1/p' "$VT_TMP/ipsec.rekey")
	e=$(sed -n 's/^ mss:\([0-9]*\)$/\1/p' "$VT_TMP/ipsec.rekey")
	if [ -z "$m" ] || [ -z "$e" ]; then
		vt_fail "MULPDU under ESP: no QP or no TCP socket seen (mulpdu '$m', mss '$e')"
	elif [ "$e" -lt 1448 ] && [ "$m" = $((e - 6 - e % 4)) ]; then
		vt_pass "MULPDU under ESP: $m for the socket's MSS $e"
	else
		vt_fail "MULPDU under ESP: $m for the socket's MSS $e, expected $((e - 6 - e % 4)) and an MSS below 1448"
	fi
}

trap ipsec_flush EXIT
pair_up
for mode in transport tunnel; do
	if ! ipsec_up "$mode"; then
		vt_fail "ip xfrm: no $mode mode SAs (modules esp4, xfrm_user?)"
		continue
	fi
	pair_barrier "ipsec.$mode.up" 60
	ipsec_traffic "$mode"
	pair_barrier "ipsec.$mode.done" 300
done

ipsec_up transport || vt_fail "ip xfrm: transport mode SAs for the rekey"
pair_barrier "ipsec.rekey.up" 60
if [ "$PAIR_PROV" = kiwi ]; then
	st0=$(vt_stats "$PAIR_DEV")
fi
ipsec_rekey &
rekey_pid=$!
pair_step "ipsec.rekey.ib_write_bw" server 120 \
	ib_write_bw -d "$PAIR_DEV" -R -F -s 65536 -D 12 -p "{port}" -- \
	ib_write_bw -d "$PAIR_DEV" -R -F -s 65536 -D 12 -p "{port}" "{peer}"
wait "$rekey_pid"
vt_indent "    rekey: " < "$VT_TMP/ipsec.rekey"
vt_check "the SAs were replaced while ib_write_bw ran" \
	grep -q '^running before the delete: [1-9]' "$VT_TMP/ipsec.rekey"
vt_check "generation 1 installed" grep -q 'generation 1 installed' "$VT_TMP/ipsec.rekey"
ipsec_carried "after the rekey" 1 1
if [ "$PAIR_PROV" = kiwi ]; then
	[ "$(cat "/sys/class/infiniband/$PAIR_DEV/kiwi/mpa_markers")" = N ] &&
		ipsec_mulpdu
	st1=$(vt_stats "$PAIR_DEV")
	for c in term_sent_rdmap term_sent_ddp term_sent_llp \
		term_rcvd_rdmap term_rcvd_ddp term_rcvd_llp; do
		vt_eq "kiwi $c across the rekey" \
			"$(($(vt_stat "$st1" "$c") - $(vt_stat "$st0" "$c")))" 0
	done
fi
pair_barrier "ipsec.rekey.done" 120
ipsec_flush
pair_down
vt_finish
