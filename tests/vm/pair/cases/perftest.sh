#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perftest over rdma_cm (-R): ib_send_bw, ib_write_bw, ib_read_bw with -a
# (every power-of-two size from 2 B to 8 MiB; perftest has no upper bound
# option) and ib_send_lat, ib_write_lat, ib_read_lat, server on the lab's
# server guest. TCG guests are slow, so the iteration counts are small:
# -n 20 per size for bandwidth, -n 100 for latency (PAIR_MODE=full: 200 and
# 1000). The numbers mean nothing here; the runs must complete. Then
# ib_send_bw and ib_write_bw with 2000 messages of 64 B through a send
# queue 16 deep, and 1000 Reads of 64 B with three outstanding.
# siw cannot register the buffers of -a (its 8 MiB messages) in these
# guests, so with siw on either side the bandwidth tests run 2 B, 4 KiB,
# 64 KiB and 1 MiB one by one instead. Quick runs over DDP over SCTP
# (llp=sctp) run the bandwidth tests at 64 KiB only and no refill.
# A kiwi side over TCP reads bulk arrivals in the QP's read work and a
# lone segment at once (kernel/llp_tcp_rx.c): its rx_reads_deferred must
# grow in the bandwidth tests (each side receives bulk: Sends and Writes
# the server, Read Responses the client) and by less than half the
# messages in the latency tests, whose messages come one at a time.

. "$KIWI_SRC/tests/vm/pair/lib.bash"

bw_n=20
lat_n=100
case "$PAIR_MODE" in
full) bw_n=200 lat_n=1000 ;;
quick) bw_n=5 lat_n=20 ;;
esac

sizes=(-a)
case "$PAIR_SERVER $PAIR_CLIENT" in
*siw*) sizes=("-s 2" "-s 4096" "-s 65536" "-s 1048576") ;;
esac

pair_up
# Quick runs over DDP over SCTP (make check-pair): one size (64 KiB, many
# segments per message) for each bandwidth test, no refill runs; the
# sweep over every size is in --full.
refill="ib_send_bw ib_write_bw"
if [ "$PAIR_MODE" = quick ] && [ "$PAIR_PROV" = kiwi ] &&
	[ "$(cat "/sys/class/infiniband/$PAIR_DEV/kiwi/llp" 2>/dev/null)" = sctp ]; then
	sizes=("-s 65536")
	refill=
fi
kiwi_tcp=
if [ "$PAIR_PROV" = kiwi ] &&
	[ "$(cat "/sys/class/infiniband/$PAIR_DEV/kiwi/llp")" = tcp ]; then
	kiwi_tcp=1
	st0=$(vt_stats "$PAIR_DEV")
fi
for t in ib_send_bw ib_write_bw ib_read_bw; do
	for s in "${sizes[@]}"; do
		read -r -a sz <<< "$s"
		pair_step "$t${sz[1]:+.${sz[1]}}" server 400 \
			"$t" -d "$PAIR_DEV" -R -F "${sz[@]}" -n "$bw_n" -p "{port}" -- \
			"$t" -d "$PAIR_DEV" -R -F "${sz[@]}" -n "$bw_n" -p "{port}" "{peer}"
	done
done
if [ -n "$kiwi_tcp" ]; then
	vt_stat_moved "$PAIR_DEV, bandwidth tests" "$st0" "$(vt_stats "$PAIR_DEV")" \
		rx_reads_deferred
fi
# Small messages, many times the send queue depth: perftest keeps exactly
# tx-depth WRs in flight and posts the moment a completion arrives, so a
# slot freed after its completion became visible fails the post.
for t in $refill; do
	pair_step "$t.refill" server 200 \
		"$t" -d "$PAIR_DEV" -R -F -s 64 -t 16 -n 2000 -p "{port}" -- \
		"$t" -d "$PAIR_DEV" -R -F -s 64 -t 16 -n 2000 -p "{port}" "{peer}"
done
# Reads with three outstanding (-o 3: an ORD and IRD that are no power of
# two). kiwi's ORQ and IRQ counters start 16 short of wrapping
# (kernel/qp_dp.h), so these Reads take both ends' across the wrap, where a
# slot taken modulo 3 would jump and two outstanding Reads share one.
# Against siw: siw rounds the ORD it agreed up to a power of two
# (siw_qp_readq_init() in Linux 6.1) and keeps that many Reads outstanding,
# a fourth one here; a kiwi responder grants its IRD rounded up as well
# (kiwi_mpa_ird_grant()), so the fourth is served, not Terminated.
pair_step "ib_read_bw.o3" server 200 \
	ib_read_bw -d "$PAIR_DEV" -R -F -s 64 -o 3 -n 1000 -p "{port}" -- \
	ib_read_bw -d "$PAIR_DEV" -R -F -s 64 -o 3 -n 1000 -p "{port}" "{peer}"
[ -z "$kiwi_tcp" ] || st1=$(vt_stats "$PAIR_DEV")
for t in ib_send_lat ib_write_lat ib_read_lat; do
	pair_step "$t" server 200 \
		"$t" -d "$PAIR_DEV" -R -F -n "$lat_n" -p "{port}" -- \
		"$t" -d "$PAIR_DEV" -R -F -n "$lat_n" -p "{port}" "{peer}"
done
if [ -n "$kiwi_tcp" ]; then
	d1=$(vt_stat "$st1" rx_reads_deferred)
	d2=$(vt_stat "$(vt_stats "$PAIR_DEV")" rx_reads_deferred)
	vt_check "$PAIR_DEV, latency tests ($((3 * lat_n)) messages received): reads deferred $d1 -> $d2, fewer than $((lat_n / 2))" \
		test -n "$d1" -a -n "$d2" -a "$((${d2:-0} - ${d1:-0}))" -lt "$((lat_n / 2))"
fi
pair_down
vt_finish
