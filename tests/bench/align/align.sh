#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# FPDU alignment on the wire (RFC 5044 Appendix A.1: every TCP segment
# starts with an FPDU), measured, not judged: run through
#   tests/vm/pair/run.sh --cases-dir tests/bench/align COMBO...
# The server guest turns GRO off (so its capture shows the segments as they
# came off the wire, not merged) and records eth0 while ib_write_bw and
# ib_send_bw move 64 KiB and 5000-octet messages (neither a multiple of
# MULPDU) from the client, and ib_read_bw 64 KiB Responses from the server.
# tests/vm/pair/run.sh walks the capture with mpa-wire-check.py, whose
# summary counts the TCP payloads that begin with an FPDU
# (KIWI_RESULTS/PAIR_ID.pcap.wire). BENCH_ALIGN_ITERS sets perftest's -n (200).

. "$KIWI_SRC/tests/vm/pair/lib.bash"
vt_need_progs

n=${BENCH_ALIGN_ITERS:-200}
pcap=$KIWI_RESULTS/$PAIR_ID.pcap
pair_up
pair_wire_expect > "$KIWI_RESULTS/$PAIR_ID.expect"
if [ "$PAIR_SIDE" = server ]; then
	ethtool -K eth0 gro off || vt_die "cannot turn GRO off"
	pair_capture_start "$pcap"
fi
pair_barrier capturing 60 || vt_die "the peer did not reach the capture"
for t in ib_write_bw ib_send_bw ib_read_bw; do
	for s in 65536 5000; do
		[ "$t.$s" = ib_read_bw.5000 ] && continue
		pair_step "$t.$s" server 300 \
			"$t" -d "$PAIR_DEV" -R -F -s "$s" -n "$n" -p "{port}" -- \
			"$t" -d "$PAIR_DEV" -R -F -s "$s" -n "$n" -p "{port}" "{peer}"
	done
done
pair_barrier traffic-done 300
if [ "$PAIR_SIDE" = server ]; then
	pair_capture_stop
	ethtool -K eth0 gro on
	vt_log "capture: $(stat -c %s "$pcap") bytes in $pcap"
fi
pair_down
vt_finish
