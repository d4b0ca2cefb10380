#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Connection management in one guest: rping client and server on kiwi0
# (eth0), loopback through the guest's own address, in every MPA flavour
# kiwi0's settings select, over IPv4 and IPv6, with specific and wildcard
# listeners, and over SCTP with 20000-octet pings (the loopback's MTU);
# connect to a port without listener; a silent peer on either side
# (mpa_timeout); a bad Request; a listener destroyed with a pending
# child; a local port another socket holds; module parameter validation;
# unload at the end. (62-ops checks the settings themselves.)
# kiwi-lab: timeout=600

. "$(dirname "$0")/lib/common.bash"

IP=${KIWI_MY_IP:-10.77.0.1}
P=/sys/module/kiwi/parameters
S=/sys/class/infiniband/kiwi0/kiwi
PEER=$KIWI_LIB/mpa-raw-peer.py

vt_clean_links
grep -q '^kiwi ' /proc/modules || vt_check "modprobe kiwi" modprobe kiwi
vt_link_add kiwi0 eth0 || vt_die "no kiwi0"

# 1. Parameters: nonsense is refused, the old value stays.
for bad in "mpa_rev 3" "mpa_rev 0" "mpa_timeout 0" "mpa_timeout 601" "mpa_timeout x" "mpa_markers maybe"; do
	set -- $bad
	if echo "$2" > "$P/$1" 2>/dev/null; then
		vt_fail "$1=$2 accepted"
	else
		vt_pass "$1=$2 refused"
	fi
done
vt_eq "mpa_rev default" "$(cat $P/mpa_rev)" 2
vt_eq "mpa_timeout default" "$(cat $P/mpa_timeout)" 10
echo 3 > $S/mpa_timeout

# 2. Data path in each flavour (kiwi0 on both ends).
vt_rping "rev2 p2p crc" 7101 10
echo N > $S/mpa_p2p
vt_rping "rev2 no-p2p" 7102 10
echo 1 > $S/mpa_rev
vt_rping "rev1" 7103 10
echo 2 > $S/mpa_rev
echo Y > $S/mpa_crc_off
vt_rping "no crc" 7104 10
echo N > $S/mpa_crc_off
echo Y > $S/mpa_markers
vt_rping "markers" 7105 10
echo N > $S/mpa_markers
echo Y > $S/mpa_p2p
vt_rping "wildcard listener" 7106 10 0.0.0.0
ip -6 addr add fd77::1/64 dev eth0 nodad
vt_rping "IPv6" 7107 10 fd77::1 fd77::1
vt_rping "IPv6 wildcard listener" 7108 10 :: fd77::1
ip -6 addr del fd77::1/64 dev eth0
# DDP over SCTP through the guest's own address: the loopback's MTU of
# 65536 must not make segments larger than a kiwi receiver reads in one
# chunk (9216 octets), so rpings of 20000 octets go through (before the
# fix the receiver refused the first large segment and ended the
# association).
if vt_check "modprobe sctp" modprobe sctp; then
	echo sctp > $S/llp
	VT_RPING_SIZE=20000 vt_rping "llp=sctp, 20000 octets over the loopback" 7109 10
	echo tcp > $S/llp
fi

# 3. No listener: refused at once.
t0=$EPOCHSECONDS
out=$(timeout 60 rping -c -a "$IP" -p 7199 -C 1 -v 2>&1)
rc=$?
t1=$EPOCHSECONDS
if [ $rc != 0 ] && [ $((t1 - t0)) -lt 10 ] && grep -q "REJECTED\|error" <<<"$out"; then
	vt_pass "no listener: refused after $((t1 - t0)) s"
else
	vt_fail "no listener: status $rc after $((t1 - t0)) s: $out"
fi

# 4. Silent responder: the connect times out after mpa_timeout (3 s).
python3 "$PEER" silent-server 7110 "$IP" > "$VT_TMP/silent-srv" 2>&1 &
peer=$!
# A python3 start takes seconds in a loaded TCG guest: wait for its listen.
vt_wait_for 60 grep -q listening "$VT_TMP/silent-srv" ||
	vt_fail "silent responder: the raw peer does not listen"
t0=$EPOCHSECONDS
out=$(timeout 60 rping -c -a "$IP" -p 7110 -C 1 -v 2>&1)
rc=$?
t1=$EPOCHSECONDS
wait $peer
if [ $rc != 0 ] && [ $((t1 - t0)) -ge 2 ] && [ $((t1 - t0)) -lt 20 ]; then
	vt_pass "silent responder: connect failed after $((t1 - t0)) s ($(tr '\n' ' ' <<<"$out" | tail -c 120))"
else
	vt_fail "silent responder: status $rc after $((t1 - t0)) s: $out"
fi
vt_log "raw peer saw: $(cat "$VT_TMP/silent-srv" | tr '\n' ' ')"

# 5. Silent initiator and a bad Request: the responder closes.
rping -s -a "$IP" -p 7111 -C 1 > "$VT_TMP/srv.7111" 2>&1 &
srv=$!
vt_wait_for 20 vt_listening 7111 || vt_fail "rping -s on 7111 did not listen"
res=$(timeout 60 python3 "$PEER" silent-client 7111 "$IP" 2>&1)
set -- $res
if [ "${1:-}" = reset ] || [ "${1:-}" = eof ]; then
	vt_pass "silent initiator: $res"
else
	vt_fail "silent initiator: $res"
fi
res=$(timeout 60 python3 "$PEER" bad 7111 "$IP" 2>&1)
set -- $res
if { [ "${1:-}" = reset ] || [ "${1:-}" = eof ]; } && [ "${2%.*}" -lt 2 ]; then
	vt_pass "bad Request key: $res"
else
	vt_fail "bad Request key: $res"
fi

# 6. Listener destroyed while a child still waits for its Request. The
# rping server of step 5 must still listen: neither peer may have reached
# it (kiwi answers both before any iw_cm event).
if kill -0 $srv 2>/dev/null; then
	vt_pass "rping server still running after the silent and bad initiators"
else
	vt_fail "rping server gone after the silent and bad initiators; its output:"
	sed 's/^/    | /' "$VT_TMP/srv.7111"
fi
echo 30 > $S/mpa_timeout
# The listener goes once the peer is connected (python3 alone takes more
# than 2 s to start under the debug kernel) and kiwi had a second to take
# the connection as a child.
MPA_RAW_READY=$VT_TMP/pending.connected \
	python3 "$PEER" silent-client 7111 "$IP" > "$VT_TMP/pending" 2>&1 &
peer=$!
vt_wait_file "$VT_TMP/pending.connected" 60 "$peer" ||
	vt_fail "the silent initiator did not connect within 60 s"
sleep 1
kill $srv
wait $srv
wait $peer
res=$(cat "$VT_TMP/pending")
set -- $res
if { [ "${1:-}" = reset ] || [ "${1:-}" = eof ]; } && [ "${2%.*}" -lt 20 ]; then
	vt_pass "listener destroyed, pending child closed: $res"
else
	vt_fail "listener destroyed, pending child: $res"
fi
echo 10 > $S/mpa_timeout

# 6b. The local port rdma_cm chose (its own port space, which TCP does not
# see) is held by another socket of the host, bound without SO_REUSEADDR as
# one in TIME_WAIT may be: the connection still comes up, on a port TCP
# picks (kiwi_cm_bind_local()).
cat > "$VT_TMP/srcport.py" <<'PY'
import socket
import subprocess
import sys
from pyverbs.cmid import CMID, AddrInfo
import pyverbs.cm_enums as ce
from pyverbs.qp import QPInitAttr, QPCap

ip, port, src = sys.argv[1], sys.argv[2], sys.argv[3]
held = socket.socket()
held.bind((ip, int(src)))
attr = QPInitAttr(cap=QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1,
                            max_recv_sge=1))
ai = AddrInfo(src=ip, src_service=src, dst=ip, dst_service=port,
              port_space=ce.RDMA_PS_TCP)
cid = CMID(creator=ai, qp_init_attr=attr)
try:
    cid.connect()
except Exception as e:
    print("refused: %s" % e)
    sys.exit(1)
ss = subprocess.run(["ss", "-Htn", "state", "established",
                     "( dport = :%s )" % port], capture_output=True,
                    text=True).stdout.split()
print("connected from local port", ss[2].rsplit(":", 1)[1] if len(ss) > 2 else "none")
cid.close()
PY
rping -s -a "$IP" -p 7150 -C 1 > "$VT_TMP/srcport.srv" 2>&1 &
srv=$!
vt_wait_for 20 vt_listening 7150 || vt_fail "rping -s on 7150 did not listen"
out=$(timeout 60 python3 "$VT_TMP/srcport.py" "$IP" 7150 7151 2>&1 | tail -n 3)
kill $srv 2>/dev/null
wait $srv 2>/dev/null
case "$out" in
"connected from local port 7151" | "connected from local port none")
	vt_fail "source port held by another socket: $out" ;;
"connected from local port "*)
	vt_pass "source port 7151 held by another socket: $out" ;;
*) vt_fail "source port held by another socket: $out" ;;
esac

# 7. Nothing left behind; unload.
sleep 1
vt_eq "rdma cm_ids left" "$(rdma resource show cm_id 2>/dev/null | wc -l)" 0
# TIME-WAIT is TCP's own and harmless; anything else is a leaked socket.
left=$(ss -Htan | grep -v '^TIME-WAIT' | grep ':71[0-9][0-9] ')
vt_eq "TCP sockets left on 71xx" "$(grep -c . <<<"$left")" 0
[ -z "$left" ] || vt_log "left: $left"
vt_check "unload" timeout 60 modprobe -r kiwi
vt_finish
