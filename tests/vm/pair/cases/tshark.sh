#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Wire capture for tshark: the server guest records eth0's TCP traffic
# (tcpdump, whole frames) while short runs of rping (both directions),
# ib_write_bw, ib_read_bw, ib_send_bw (-R, 64 KiB and 3 B) and vt_integrity
# --quick go between the guests. The capture goes to
# KIWI_RESULTS/PAIR_ID.pcap; tests/vm/pair/run.sh decodes it on the host
# with tests/vm/pair/tshark-check.sh (tshark under TCG would take minutes)
# and walks every FPDU, marker and RTR with tests/vm/pair/mpa-wire-check.py.
# Each iWARP guest writes that checker's options to KIWI_RESULTS/PAIR_ID.expect:
# whether its startup frames must ask for markers (kiwi: the device's
# mpa_markers setting; siw never asks) and, on kiwi, the RTR types its
# peer-to-peer Requests must offer (mpa_rtr).

. "$KIWI_SRC/tests/vm/pair/lib.bash"
vt_need_progs

pcap=$KIWI_RESULTS/$PAIR_ID.pcap
pair_up
pair_wire_expect > "$KIWI_RESULTS/$PAIR_ID.expect"
pair_capture_begin "$pcap"
pair_both rping 120 \
	rping -s -v -a "{me}" -p "{port}" -C 20 -- \
	rping -c -v -a "{peer}" -p "{port}" -C 20
for t in ib_write_bw ib_read_bw ib_send_bw; do
	for s in 65536 3; do
		pair_step "$t.$s" server 120 \
			"$t" -d "$PAIR_DEV" -R -F -s "$s" -n 5 -p "{port}" -- \
			"$t" -d "$PAIR_DEV" -R -F -s "$s" -n 5 -p "{port}" "{peer}"
	done
done
read -r -a opts <<< "$(pair_integrity_opts)"
pair_step integrity server 300 \
	"$VT_PROGS/vt_integrity" -s -a "{me}" -p "{port}" --quick "${opts[@]}" -- \
	"$VT_PROGS/vt_integrity" -c "{peer}" -p "{port}" --quick "${opts[@]}"
pair_capture_end "$pcap"
pair_down
vt_finish
