# SPDX-License-Identifier: GPL-2.0
"""A raw SCTP peer for kiwi's DDP over SCTP (RFC 5043 draft):
python3 sctp-raw-peer.py MODE[,MODE...] PORT IP [SECONDS]

Connects a one-to-one SCTP socket to a kiwi listener (llp=sctp) and
misbehaves as MODE says:

no-adapt     no Adaptation Layer Indication in the INIT, sends an Initiate
other-adapt  Adaptation Indication 0x2 (not DDP), sends an Initiate
seg-first    DDP indication, then a DDP Segment (PPID 0x10) as the first
             chunk instead of the Session Initiate
bad-ppid     DDP indication, first chunk with PPID 0x99
bad-fn       DDP indication, a Session Control message with function 9
big-pd       DDP indication, an Initiate with 300 octets of Private Data
             (more than an iw_cm event carries): the draft's answer is a
             Session Terminate, never a Reject

For each MODE, one association and one line "MODE: EVENT...": "ssc FN"
for each Session Control message received (FN its function code), "chunk
PPID" for anything else, then how it ended within SECONDS (default 30):
"abort" (reset), "eof" (SHUTDOWN) or "timeout".
"""
import socket
import struct
import sys
import time

IPPROTO_SCTP = 132
SCTP_ADAPTATION_LAYER = 7
SCTP_RECVRCVINFO = 32
SCTP_SNDINFO = 2
SCTP_RCVINFO = 3
SCTP_UNORDERED = 1
PPID_SEG = 0x10
PPID_SSC = 0x11


def send(s, ppid, data):
    info = struct.pack("=HHIII", 0, SCTP_UNORDERED, socket.htonl(ppid), 0, 0)
    s.sendmsg([data], [(IPPROTO_SCTP, SCTP_SNDINFO, info)])


def ssc(ssn, fn, pd=b""):
    return struct.pack(">HH", ssn, fn) + pd


def run(mode, port, ip, limit):
    """One association misbehaving as @mode; returns its events."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_SCTP)
    if mode != "no-adapt":
        ind = 2 if mode == "other-adapt" else 1
        s.setsockopt(IPPROTO_SCTP, SCTP_ADAPTATION_LAYER, struct.pack("=I", ind))
    s.setsockopt(IPPROTO_SCTP, SCTP_RECVRCVINFO, 1)
    s.connect((ip, port))
    if mode in ("no-adapt", "other-adapt"):
        first = (PPID_SSC, ssc(0, 1, b"hello"))
    elif mode == "seg-first":
        # A tagged DDP header (RDMA Write, L=1) with 4 payload octets.
        first = (PPID_SEG, struct.pack(">HBBIQ", 0, 0xC1, 0x40, 1, 0) + b"abcd")
    elif mode == "bad-ppid":
        first = (0x99, ssc(0, 1))
    elif mode == "bad-fn":
        first = (PPID_SSC, ssc(0, 9))
    elif mode == "big-pd":
        first = (PPID_SSC, ssc(0, 1, b"x" * 300))
    else:
        return ["unknown-mode"]
    ev = []
    try:
        send(s, *first)
    except OSError as e:
        return ["abort" if e.errno in (104, 32) else "error-%d" % e.errno]
    s.settimeout(limit)
    while True:
        try:
            data, anc, _, _ = s.recvmsg(65536, 256)
        except socket.timeout:
            return ev + ["timeout"]
        except ConnectionResetError:
            return ev + ["abort"]
        if not data:
            return ev + ["eof"]
        ppid = 0
        for level, typ, val in anc:
            if level == IPPROTO_SCTP and typ == SCTP_RCVINFO:
                ppid = socket.ntohl(struct.unpack_from("=I", val, 8)[0])
        if ppid == PPID_SSC and len(data) >= 4:
            ev.append("ssc %d" % struct.unpack(">HH", data[:4])[1])
        else:
            ev.append("chunk %#x" % ppid)


def main():
    port, ip = int(sys.argv[2]), sys.argv[3]
    limit = float(sys.argv[4]) if len(sys.argv) > 4 else 30
    for mode in sys.argv[1].split(","):
        t0 = time.time()
        ev = run(mode, port, ip, limit)
        print("%s: %s (%.1f s)" % (mode, " ".join(ev), time.time() - t0))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
