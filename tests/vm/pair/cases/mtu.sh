#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The MULPDU follows the path MTU mid-connection over MPA/TCP (RFC 5044
# section 8 and Appendix A: an FPDU fills one TCP segment of the current
# EMSS) and over the ULP framing draft-00 profile (ULPF-005: the EMSS
# change reaches the framer): an ib_send_bw of 4000-octet messages from the
# client guest for 12 s; 4 s in its eth0 goes from MTU 1500 to 1200, 4 s
# later back to 1500. The server guest captures the client's segments
# (headers and the payload's first octets, tests/vm/lib/tcp-first-pdu.py)
# and counts the TCP payloads that begin with a full-size PDU: at EMSS 1448
# (MTU 1500 with TCP timestamps) an MPA FPDU carries 1442 octets of ULPDU
# (2 + 1442 + CRC 4 = 1448), a draft-00 PDU 1440 (8-octet header); at EMSS
# 1148 (MTU 1200) 1142 and 1140. Full-size PDUs must be seen before the
# drop, smaller ones after it and full-size ones again once the MTU is
# back. Receive offloads merge segments in the capture; each merged
# payload still begins where a segment did. Checklist items this case
# drives on the live path: MPA-004 (MPA gives DDP the MULPDU of the
# current EMSS), MPA-036 (MULPDU without markers = EMSS - (6 + EMSS mod
# 4): 1448 -> 1442, 1148 -> 1142), MPA-037 (full segments as large as the
# MULPDU), ULPF-005 (the EMSS change reaches the draft-00 framer).
# Runs for kiwi-kiwi over MPA/TCP without markers (a marker may lead a
# segment).

. "$KIWI_SRC/tests/vm/pair/lib.bash"

pair_up
pair_only_kiwi_mpa mtu
S=/sys/class/infiniband/$PAIR_DEV/kiwi
big=1442 small=1142 what="MPA FPDUs"
if [ "$(cat "$S/ulpf00")" = Y ]; then
	big=1440 small=1140 what="draft-00 framing PDUs"
fi

cap=$KIWI_RESULTS/$PAIR_ID.mtu.cap
PAIR_SNAPLEN=128 pair_capture_begin "$cap"
pair_mtu_dip mtu
pair_capture_end "$cap"
if [ "$PAIR_SIDE" = server ]; then
	read -r before during after _ < <(python3 "$KIWI_SRC/tests/vm/lib/tcp-first-pdu.py" \
		"$cap" "$KIWI_PEER_IP" | pair_mtu_phases "$big" "$small")
	vt_log "mtu: TCP payloads from the client beginning with a full-size PDU ($what):" \
		"$before of $big octets before the drop, $during of $small after it," \
		"$after of $big once the MTU was back"
	vt_check "mtu: full-size PDUs of $big octets before the drop ($before >= 50)" \
		test "$before" -ge 50
	vt_check "mtu: PDUs of $small octets at MTU 1200 ($during >= 50)" \
		test "$during" -ge 50
	vt_check "mtu: PDUs of $big octets again once the MTU rose ($after >= 50)" \
		test "$after" -ge 50
fi
pair_down
vt_finish
