#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Small messages posted one at a time share TCP segments, each segment
# still starting with an FPDU (kernel/llp_tcp.c, kiwi_llp_tcp_open_batch();
# RFC 5044 Appendix A.1: several whole FPDUs in one segment), kiwi <-> kiwi
# over MPA/TCP. The client guest delays what it sends by 20 ms (netem), so
# TCP, not kiwi, decides when segments leave (autocorking waits for the
# segments netem holds, and the congestion window fills); then it
# streams 2000 RDMA Writes and 2000 Sends of 8 octets (ib_write_bw,
# ib_send_bw -s 8), each a batch of its own. While TCP waits, later
# batches join the segment it has not sent yet: the client's TCP segments
# out (nstat TcpOutSegs, ACKs included) must stay below a quarter of its
# FPDUs (kiwi tx_fpdus) for the Writes and below two thirds for the
# Sends, whose client waits for perftest's credits (RDMA Writes from the
# server every 170 receives) and sends in bursts. Measured: the Writes
# took 84 to 162 segments for 2018 FPDUs, the Sends 232 to 663 for 2013
# (five runs); with the build before, whose batches each ended a segment
# (several messages shared a batch only while TX was busy), 1264 and 1683.
# The server guest captures with
# GRO off; run.sh's mpa-wire-check.py (--packed: the client's address)
# walks every FPDU with its CRC, requires every TCP payload the client
# sent to begin with an FPDU and some to hold several.
# With the ULP framing draft-00 profile (ulpf00=Y on both guests) each
# framing PDU must keep a segment of its own: TcpOutSegs at least
# tx_fpdus.
# Runs for kiwi-kiwi over MPA/TCP without markers (a marker may lead a
# segment).

. "$KIWI_SRC/tests/vm/pair/lib.bash"

n=2000
pcap=$KIWI_RESULTS/$PAIR_ID.pcap
pair_up
pair_only_kiwi_mpa pack
ulpf=$(cat "/sys/class/infiniband/$PAIR_DEV/kiwi/ulpf00")
{
	pair_wire_expect
	[ "$PAIR_SIDE" = client ] && [ "$ulpf" = N ] && echo "--packed $KIWI_MY_IP"
} > "$KIWI_RESULTS/$PAIR_ID.expect"

# pack_counts: "FPDUS SEGMENTS" this guest sent so far.
pack_counts() {
	echo "$(vt_stat "$(vt_stats "$PAIR_DEV")" tx_fpdus)" \
		"$(nstat -az TcpOutSegs | awk '$1 == "TcpOutSegs" { print $2 }')"
}

# pack_restore: eth0 as the other cases expect it, also after a vt_die.
pack_restore() {
	if [ "$PAIR_SIDE" = server ]; then
		ethtool -K eth0 gro on
	else
		tc qdisc del dev eth0 root 2>/dev/null
	fi
	pair_exit_trap
}

trap pack_restore EXIT
if [ "$PAIR_SIDE" = server ]; then
	ethtool -K eth0 gro off || vt_die "cannot turn GRO off"
else
	tc qdisc replace dev eth0 root netem delay 20ms ||
		vt_die "cannot delay eth0 with netem"
fi
pair_capture_begin "$pcap"
for t in ib_write_bw:1:4 ib_send_bw:2:3; do
	IFS=: read -r t most per <<< "$t"
	read -r f0 s0 < <(pack_counts)
	pair_step "pack.$t" server 120 \
		"$t" -d "$PAIR_DEV" -R -F -s 8 -n "$n" -p "{port}" -- \
		"$t" -d "$PAIR_DEV" -R -F -s 8 -n "$n" -p "{port}" "{peer}"
	if [ "$PAIR_SIDE" != client ] || [ "$PAIR_LAST_OK" != 1 ]; then
		continue
	fi
	read -r f1 s1 < <(pack_counts)
	f=$((f1 - f0)) s=$((s1 - s0))
	vt_log "pack.$t: $n messages of 8 octets, $f FPDUs in $s TCP segments"
	vt_check "pack.$t: FPDUs framed ($f >= $n)" test "$f" -ge "$n"
	if [ "$ulpf" = Y ]; then
		vt_check "pack.$t: a segment per draft-00 framing PDU ($s >= $f)" \
			test "$s" -ge "$f"
	else
		vt_check "pack.$t: FPDUs share segments ($s < $f * $most / $per)" \
			test $((s * per)) -lt $((f * most))
	fi
done
pair_capture_end "$pcap"
pair_down
vt_finish
