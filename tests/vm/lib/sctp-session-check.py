#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""usage: sctp-session-check.py PCAP

Checks the DDP-over-SCTP associations in PCAP (classic pcap, Ethernet,
IPv4, whole frames) against the draft's rules that a capture shows:

  SCTP-026  every INIT and INIT-ACK asks for as many outbound streams as
            it allows inbound ones;
  SCTP-028  no DATA chunk is a fragment (B = E = 1): DDP cut the messages;
  SCTP-002, SCTP-008  on each stream, each direction's chunks of both PPIDs,
            in TSN order, carry the DDP-SSNs 0, 1, 2, ... without a gap;
  SCTP-009  each direction's Session Control messages follow the legal
            pattern: the initiator's first chunk is its Initiate, the
            responder's its Accept or Reject, and only a Terminate follows;
  SCTP-005  a Terminate carries no Private Data (exactly 4 octets);
  SCTP-019  the initiator sends its first DDP Segment only after the
            responder's Accept (in capture order, which causality keeps
            whichever end captured).

Prints one line per association and per finding; exit status 0 if every
association with Session Control messages passes, 1 if one does not, 2 if
PCAP cannot be read or holds no such association.
"""
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcapfile import ipv4_packets  # noqa: E402

PPID_SEG, PPID_SSC = 0x10, 0x11
FN_NAMES = {1: "Initiate", 2: "Accept", 3: "Reject", 4: "Terminate"}


def chunks(sctp):
    """(type, flags, value) of each chunk of an SCTP packet."""
    off = 12
    while off + 4 <= len(sctp):
        ctype, flags, length = struct.unpack(">BBH", sctp[off:off + 4])
        if length < 4:
            return
        yield ctype, flags, sctp[off + 4:off + length]
        off += (length + 3) & ~3


def packets(path):
    """(index, src, dst, sctp packet) of each IPv4 SCTP frame."""
    for i, src, dst, sctp, _ in ipv4_packets(path, 132):
        if len(sctp) < 12:
            continue
        sport, dport = struct.unpack(">HH", sctp[:4])
        yield (i, "%s:%d" % (socket.inet_ntoa(src), sport),
               "%s:%d" % (socket.inet_ntoa(dst), dport), sctp)


class Assoc:
    def __init__(self):
        self.initiator = None
        self.findings = []
        self.data = {}          # src -> {tsn: (index, flags, sid, ppid, payload)}

    def bad(self, what):
        self.findings.append(what)


def collect(path):
    assocs = {}
    for i, src, dst, sctp in packets(path):
        a = assocs.setdefault(tuple(sorted((src, dst))), Assoc())
        for ctype, flags, v in chunks(sctp):
            if ctype in (1, 2) and len(v) >= 12:
                os_, mis = struct.unpack(">HH", v[8:12])
                name = "INIT" if ctype == 1 else "INIT-ACK"
                if ctype == 1:
                    a.initiator = src
                if os_ != mis:
                    a.bad("%s from %s: %d outbound streams, %d inbound (SCTP-026)"
                          % (name, src, os_, mis))
            elif ctype == 0 and len(v) >= 12:
                tsn, sid, _, ppid = struct.unpack(">IHHI", v[:12])
                a.data.setdefault(src, {}).setdefault(
                    tsn, (i, flags, sid, ppid, v[12:]))
    return assocs


def judge_direction(a, src, initiator):
    """Findings for the chunks @src sent; returns the capture index of its
    first Accept and of its first DDP Segment (None if none)."""
    first_accept = first_seg = None
    next_ssn = {}
    ctl = []
    for tsn in sorted(a.data[src]):
        i, flags, sid, ppid, payload = a.data[src][tsn]
        if flags & 0x03 != 0x03:
            a.bad("%s TSN %d: a fragment (B=%d E=%d) (SCTP-028)"
                  % (src, tsn, flags >> 1 & 1, flags & 1))
            continue
        if len(payload) < 2:
            a.bad("%s TSN %d: no DDP-SSN" % (src, tsn))
            continue
        ssn = struct.unpack(">H", payload[:2])[0]
        want = next_ssn.get(sid, 0)
        if ssn != want:
            a.bad("%s stream %d TSN %d: DDP-SSN %d, expected %d (SCTP-002/008)"
                  % (src, sid, tsn, ssn, want))
        next_ssn[sid] = (ssn + 1) & 0xFFFF
        if ppid == PPID_SEG:
            if first_seg is None:
                first_seg = i
            continue
        if ppid != PPID_SSC or len(payload) < 4:
            a.bad("%s TSN %d: PPID %#x" % (src, tsn, ppid))
            continue
        fn = struct.unpack(">H", payload[2:4])[0]
        ctl.append((ssn, fn))
        if fn == 2 and first_accept is None:
            first_accept = i
        if fn == 4 and len(payload) != 4:
            a.bad("%s: a Terminate with %d octets of Private Data (SCTP-005)"
                  % (src, len(payload) - 4))
    opening = (1,) if initiator else (2, 3)
    names = " ".join(FN_NAMES.get(fn, str(fn)) for _, fn in ctl)
    if (not ctl or ctl[0][0] != 0 or ctl[0][1] not in opening or
            any(fn != 4 for _, fn in ctl[1:])):
        a.bad("%s (%s): Session Control messages %s (SCTP-009)"
              % (src, "initiator" if initiator else "responder", names or "none"))
    return first_accept, first_seg


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        assocs = collect(sys.argv[1])
    except (OSError, ValueError) as e:
        print("sctp-session-check: %s: %s" % (sys.argv[1], e), file=sys.stderr)
        return 2
    checked = failed = 0
    for key, a in sorted(assocs.items()):
        if a.initiator is None or len(a.data) != 2:
            continue
        responder = key[1] if key[0] == a.initiator else key[0]
        _, first_seg = judge_direction(a, a.initiator, True)
        accept, _ = judge_direction(a, responder, False)
        if first_seg is not None and (accept is None or first_seg < accept):
            a.bad("%s sent a DDP Segment before the Accept arrived (SCTP-019)"
                  % a.initiator)
        checked += 1
        chunks_seen = sum(len(d) for d in a.data.values())
        print("association %s -> %s: %d DATA chunks, %s"
              % (a.initiator, responder, chunks_seen,
                 "ok" if not a.findings else "%d findings" % len(a.findings)))
        for f in a.findings:
            print("  " + f)
        failed += bool(a.findings)
    print("%d associations checked, %d with findings" % (checked, failed))
    if not checked:
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
