#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Traffic over a lossy link: both guests put tc netem on eth0's egress
# (SOAK_LOSS percent loss, default 2; 1 % duplication; 5 % reordering with
# a 2 ms delay), then run vt_integrity both ways (RDMA Write, Read, Send
# and every byte checked) and perftest Send, Write and Read bandwidth. TCP
# repairs the stream, so every run must pass with its data intact, no
# Terminate may be sent or received and nothing may hang (each step has a
# time limit). PAIR_MODE quick (the CI's version): shorter runs, and one
# vt_integrity run (the server guest's as its server) instead of one with
# each guest as server. Over DDP over SCTP (kiwi:llp=sctp on both guests)
# the lost chunks leave gaps, and each guest must have placed segments
# ahead of one (rx_placed_early).

. "$KIWI_SRC/tests/vm/pair/lib.bash"
vt_need_progs

loss=${SOAK_LOSS:-2}
n=400
[ "$PAIR_MODE" = quick ] && n=40
read -r -a opts <<< "$(pair_integrity_opts)"

soak_terminates() {
	dmesg | grep -cE 'kiwi: QP [0-9]+: (.*sending Terminate|Terminate from peer)'
}

modprobe sch_netem || vt_die "modprobe sch_netem failed"
pair_up
terms=$(soak_terminates)
# DDP over SCTP: chunks arrive unordered, so segments behind a lost one
# are placed ahead of the gap (rx_early.c).
sctp=0
[ "$(cat "/sys/class/infiniband/$PAIR_DEV/kiwi/llp" 2>/dev/null)" = sctp ] && sctp=1
[ "$sctp" = 0 ] || st0=$(vt_stats "$PAIR_DEV")
vt_check "netem on eth0: loss $loss%, duplicate 1%, reorder 5%" \
	tc qdisc add dev eth0 root netem delay 2ms loss "$loss%" duplicate 1% reorder 5% 50%
pair_barrier netem-on 60
integrity=(pair_both integrity.netem)
[ "$PAIR_MODE" = quick ] && integrity=(pair_step integrity.netem.s2c server)
"${integrity[@]}" 900 \
	"$VT_PROGS/vt_integrity" -s -a "{me}" -p "{port}" "${opts[@]}" -- \
	"$VT_PROGS/vt_integrity" -c "{peer}" -p "{port}" "${opts[@]}"
for t in ib_send_bw ib_write_bw ib_read_bw; do
	pair_step "$t.netem" server 600 \
		"$t" -d "$PAIR_DEV" -R -F -s 65536 -n "$n" -p "{port}" -- \
		"$t" -d "$PAIR_DEV" -R -F -s 65536 -n "$n" -p "{port}" "{peer}"
done
vt_log "netem: $(tc -s qdisc show dev eth0 | grep -oE 'Sent [0-9]+ bytes [0-9]+ pkt \(dropped [0-9]+' | head -n 1)"
vt_check "netem off" tc qdisc del dev eth0 root
[ "$PAIR_PROV" != kiwi ] || vt_eq "kiwi Terminates under netem" "$(($(soak_terminates) - terms))" 0
if [ "$sctp" = 1 ]; then
	st1=$(vt_stats "$PAIR_DEV")
	vt_log "segments placed ahead of a gap: $(($(vt_stat "$st1" rx_placed_early) - $(vt_stat "$st0" rx_placed_early)))"
	vt_stat_moved "$PAIR_DEV" "$st0" "$st1" rx_placed_early
fi
pair_down
vt_finish
