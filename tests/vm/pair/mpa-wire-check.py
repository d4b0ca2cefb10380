#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""usage: tests/vm/pair/mpa-wire-check.py [--expect HOST=Y|N ...]
           [--rtr-offer HOST=TYPE,... ...] [--want-rtr HOST=TYPE ...]
           [--ulpf HOST=Y|N ...] [--packed HOST ...] [--no-crc]
           [--allow-terminate] PCAP
       tests/vm/pair/mpa-wire-check.py --selftest

Checks the MPA framing of every iWARP connection in PCAP octet by octet,
markers and RFC 6581 RTR messages included (tshark's iwarp_mpa dissector
shows marker fields but checks none of them, and knows no RTR). For each TCP connection whose payload starts with an
MPA Request and is answered by a Reply, each direction is reassembled from
its SYN and walked FPDU by FPDU as RFC 5044 (seeds-digest 2.3) lays it out:

  - markers are where the receiver's startup frame asked for them (M bit)
    and nowhere else: one at the first octet after the startup frame, then
    one every 512 octets of TCP sequence space (MPA-017/018/022/053);
  - every marker has RESERVED 0 and an FPDUPTR whose low two bits are 0 and
    that points back to the ULPDU_Length of the FPDU holding it, or is 0
    when it falls between FPDUs (MPA-014/015/016/019/021/023/024);
  - every FPDU's CRC32c (over header, markers, ULPDU and pad) is right when
    either startup frame asked for CRC (MPA-031/033; --no-crc skips the
    arithmetic);
  - a direction ends on an FPDU boundary;
  - no FPDU is an RDMAP Terminate (unless --allow-terminate);
  - when both startup frames are RFC 6581 peer-to-peer ones, the
    initiator's first FPDU is one RTR (zero-length Send, Write or Read
    Request) of a type both frames name or, when they name none in common,
    a Terminate 2/0/07 (no matching RTR option).

It also counts, per direction and in the summary, the captured TCP payloads
after the startup frame that begin with an FPDU (or the marker leading it):
RFC 5044 Appendix A.1's aligned segments, counted, never judged. A guest
capturing with GRO on sees the segments it receives merged.

A connection whose Request and Reply both carry kiwi's ULP framing draft-00
startup field (kernel/proto/ulpf.h: "KIWIULPF", mode, flags, 48-bit key
after the RFC 6581 field) is walked as draft-00 PDU alignment mode instead:
every framing PDU is the 8-octet Length+Key header and one DDP segment, no
pad, CRC or markers, and its Key is the one its sender announced
(SEC-21; ULPF-011: constant within a direction), and it starts a DDP
segment (DDP and RDMAP version 1) that ends where the next framing PDU
begins (ULPF-012: no packing); both directions use the profile when both
frames ask for it (ULPF-010); the keys of all directions in the capture
must differ (ULPF-011). When only one of the two
frames carries the field, no octet may follow either startup frame (the
side that asked for the profile refuses the other).

--expect HOST=Y says the startup frames HOST (an IPv4 address) sends must
ask for markers (N: must not); the check fails when no marker was checked
although some frame asked for them, or when a direction could not be
judged (a TCP hole in the capture).
--rtr-offer HOST=TYPE,... says the peer-to-peer Requests HOST sends must
offer exactly these RTR types; --want-rtr HOST=TYPE that at least one
connection HOST initiated must have sent that RTR (none: the Terminate for
no common type).
--ulpf HOST=Y says the startup frames HOST sends must carry the draft-00
field (N: must not), and with Y that some framing PDU was checked.
--packed HOST judges the alignment of what HOST sends: every captured TCP
payload of its directions begins with an FPDU, and some payload holds
several (small messages sharing segments, RFC 5044 Appendix A.1); the
capturing guest must not merge received segments (GRO off).
--allow-terminate accepts Terminates (each is still listed); the
capture of a case that provokes them passes it.
--selftest walks RFC 5044's Figures 5 and 6 and broken copies of them.
Prints one line per direction and a summary; exit 0 if clean, 1 if not,
2 on a usage error.
"""

import argparse
import bisect
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from crc32c import crc32c_update  # noqa: E402
from pcapfile import ethernet_frames  # noqa: E402

ULPF_MAGIC = b"KIWIULPF"
ULPF_PDU_MAX = 65528
REQ_KEY = b"MPA ID Req Frame"
REP_KEY = b"MPA ID Rep Frame"
MARKER_INTERVAL = 512


def read_pcap(path):
    """Yields (src, sport, dst, dport, seq, flags, payload) of TCP/IPv4."""
    for frame, orig in ethernet_frames(path):
        if len(frame) < orig:
            raise ValueError("a frame is truncated (capture with -s 0)")
        if len(frame) < 34 or frame[12:14] != b"\x08\x00":
            continue
        ip = frame[14:]
        ihl = (ip[0] & 0x0F) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        if ip[9] != 6:
            continue
        src = ".".join(str(b) for b in ip[12:16])
        dst = ".".join(str(b) for b in ip[16:20])
        tcp = ip[ihl:total]
        sport, dport, seq = struct.unpack(">HHI", tcp[:8])
        doff = (tcp[12] >> 4) * 4
        yield src, sport, dst, dport, seq, tcp[13], tcp[doff:]


class Flow:
    """One direction of a TCP connection, reassembled from its SYN."""

    def __init__(self):
        self.isn = None
        self.segs = {}

    def add(self, seq, flags, payload):
        if flags & 0x02:
            self.isn = (seq + 1) & 0xFFFFFFFF
        if payload:
            self.segs.setdefault(seq, payload)

    def offsets(self):
        """Where each captured payload starts, relative to the SYN."""
        return sorted((s - self.isn) & 0xFFFFFFFF for s in self.segs)

    def stream(self):
        """The payload octets in order, or None when there is a hole."""
        if self.isn is None:
            return None
        out = bytearray()
        for rel, p in sorted(((s - self.isn) & 0xFFFFFFFF, p)
                             for s, p in self.segs.items()):
            if rel > len(out):
                return None
            if rel + len(p) > len(out):
                out += p[len(out) - rel:]
        return bytes(out)


class Walk:
    """Walks one direction's FPDUs after its startup frame."""

    def __init__(self, data, start, markers, crc):
        self.data = data
        self.pos = start
        self.start = start
        self.markers = markers
        self.crc = crc
        self.n_markers = 0
        self.n_between = 0
        self.n_fpdus = 0
        self.first = None
        self.terms = []
        self.starts = set()

    def off(self):
        return self.pos - self.start

    def marker(self, hdr_off, state):
        m = self.data[self.pos:self.pos + 4]
        if len(m) < 4:
            return None
        res, ptr = struct.unpack(">HH", m)
        at = self.off()
        want = 0 if hdr_off is None else at - hdr_off
        if res != 0:
            raise ValueError("marker at offset %d: RESERVED 0x%04x" % (at, res))
        if ptr != want:
            raise ValueError("marker at offset %d: FPDUPTR %d, want %d" %
                             (at, ptr, want))
        self.n_markers += 1
        self.n_between += hdr_off is None
        state[0] = crc32c_update(state[0], m) if self.crc else 0
        self.pos += 4
        return m

    def take(self, n, hdr_off, state, crc=True):
        """n FPDU octets with the markers inside them checked and removed,
        the CRC in @state updated in wire order (the octets themselves only
        with @crc); None at the end of the data."""
        out = bytearray()
        while len(out) < n:
            if self.markers and self.off() % MARKER_INTERVAL == 0:
                if self.marker(hdr_off, state) is None:
                    return None
            room = n - len(out)
            if self.markers:
                room = min(room, MARKER_INTERVAL - self.off() % MARKER_INTERVAL)
            chunk = self.data[self.pos:self.pos + room]
            if not chunk:
                return None
            if self.crc and crc:
                state[0] = crc32c_update(state[0], chunk)
            out += chunk
            self.pos += len(chunk)
        return bytes(out)

    def fpdu(self):
        """One FPDU; False at a clean end of the data."""
        if self.pos == len(self.data):
            return False
        self.starts.add(self.pos)
        state = [0xFFFFFFFF]
        if self.markers and self.off() % MARKER_INTERVAL == 0:
            if self.marker(None, state) is None:
                raise ValueError("direction ends inside a marker")
        hdr_off = self.off()
        hdr = self.take(2, hdr_off, state)
        if hdr is None:
            raise ValueError("direction ends inside an FPDU header")
        ulen = struct.unpack(">H", hdr)[0]
        body = self.take(ulen + (-(2 + ulen) % 4), hdr_off, state)
        if body is None:
            raise ValueError("direction ends inside an FPDU (offset %d)" %
                             hdr_off)
        got = self.take(4, hdr_off, state, crc=False)
        if got is None:
            raise ValueError("direction ends before an FPDU's CRC")
        if self.crc:
            want = state[0] ^ 0xFFFFFFFF
            if struct.unpack("<I", got)[0] != want:
                raise ValueError("FPDU at offset %d: bad CRC" % hdr_off)
        if self.first is None:
            self.first = body[:ulen]
        if is_term(body[:ulen]):
            self.terms.append((hdr_off, body[18:20]))
        self.n_fpdus += 1
        return True


class UlpfWalk(Walk):
    """Walks one direction's draft-00 framing PDUs (PDU alignment mode,
    packing off) after its startup frame."""

    def __init__(self, data, start, key):
        super().__init__(data, start, False, False)
        self.key = key

    def fpdu(self):
        if self.pos == len(self.data):
            return False
        self.starts.add(self.pos)
        at = self.off()
        hdr = self.data[self.pos:self.pos + 8]
        if len(hdr) < 8:
            raise ValueError("direction ends inside a framing header")
        ulen = struct.unpack(">H", hdr[:2])[0]
        if hdr[2:] != self.key:
            raise ValueError("framing PDU at offset %d: key %s, announced %s"
                             % (at, hdr[2:].hex(), self.key.hex()))
        body = self.data[self.pos + 8:self.pos + 8 + ulen]
        if len(body) < ulen:
            raise ValueError("direction ends inside a framing PDU (offset %d)"
                             % at)
        if ulen < 14 or body[0] & 0x03 != 1 or body[1] >> 6 != 1:
            raise ValueError("framing PDU at offset %d: no DDP segment of "
                             "version 1 starts its %d octets" % (at, ulen))
        self.pos += 8 + ulen
        if self.first is None:
            self.first = body
        if is_term(body):
            self.terms.append((at, body[18:20]))
        self.n_fpdus += 1
        return True


RTR_NAMES = ("send", "write", "read")


class Startup:
    """An MPA Request or Reply at the start of a direction's data."""

    def __init__(self, data):
        flags = data[16]
        self.markers = bool(flags & 0x80)
        self.crc = bool(flags & 0x40)
        self.reject = bool(flags & 0x20)
        self.enhanced = bool(flags & 0x10) and data[17] == 2
        pd_len = struct.unpack(">H", data[18:20])[0]
        self.length = 20 + pd_len
        self.p2p = False
        self.rtr = set()
        f = 24 if self.enhanced else 20
        self.ulpf_key = None
        if data[f:f + 8] == ULPF_MAGIC and len(data) >= f + 16:
            self.ulpf_key = data[f + 10:f + 16]
            self.ulpf_mode = (data[f + 8], data[f + 9])
        if self.enhanced and pd_len >= 4:
            ird, ord_ = struct.unpack(">HH", data[20:24])
            self.p2p = bool(ird & 0x8000)
            # RFC 6581 section 9: B (Send) in IRD, C (Write), D (Read) in ORD.
            for name, bit in (("send", ird & 0x4000), ("write", ord_ & 0x8000),
                              ("read", ord_ & 0x4000)):
                if bit:
                    self.rtr.add(name)


def rtr_kind(ulpdu):
    """The RTR message @ulpdu is (RFC 6581 section 8, rdmap-digest 2.6):
    a zero-length Send on QN 0, RDMA Write, or Read Request of RDMARDSZ 0
    on QN 1, each the last segment of its message; None if none."""
    if len(ulpdu) < 2 or not ulpdu[0] & 0x40:
        return None
    op = ulpdu[1] & 0x0F
    if ulpdu[0] & 0x80:
        return "write" if op == 0 and len(ulpdu) == 14 else None
    if len(ulpdu) < 18:
        return None
    qn, _, mo = struct.unpack(">III", ulpdu[6:18])
    if op == 3 and qn == 0 and mo == 0 and len(ulpdu) == 18:
        return "send"
    if op == 1 and qn == 1 and mo == 0 and len(ulpdu) == 18 + 28 and \
            struct.unpack(">I", ulpdu[30:34])[0] == 0:
        return "read"
    return None


def is_term(ulpdu):
    """@ulpdu is an RDMAP Terminate (untagged, opcode 7, RFC 5040 4.8)."""
    return len(ulpdu) >= 2 and not ulpdu[0] & 0x80 and ulpdu[1] & 0x0F == 7


def is_mpa_term(ulpdu, ecode):
    """@ulpdu is a Terminate (QN 2) of Layer LLP, EType MPA, ECode @ecode."""
    return bool(ulpdu) and len(ulpdu) >= 22 and is_term(ulpdu) and \
        ulpdu[6:10] == b"\0\0\0\2" and \
        ulpdu[18] == 0x20 and ulpdu[19] == ecode


class Checker:
    """Collects the verdicts over every connection of one capture."""

    def __init__(self, expect, rtr_offer, do_crc, allow_term, ulpf=None,
                 packed=()):
        self.expect = expect
        self.packed = set(packed)
        self.shared = {}
        self.ulpf = ulpf or {}
        self.ulpf_frames = 0
        self.keys = set()
        self.allow_term = allow_term
        self.rtr_offer = rtr_offer
        self.do_crc = do_crc
        self.bad = 0
        self.conns = self.markers = self.fpdus = self.asked = 0
        self.terms = 0
        self.rtrs = {}
        self.payloads = self.aligned = 0

    def fail(self, msg):
        print("FAIL " + msg)
        self.bad = 1

    def frames(self, conn, ini, req, resp, rep):
        """The startup frames against what each host was set to ask."""
        for host, frame in ((ini, req), (resp, rep)):
            want = self.expect.get(host)
            if want is not None and frame.markers != want:
                self.fail("%s: %s asked for markers=%s, want %s" %
                          (conn, host, frame.markers, want))
            want = self.ulpf.get(host)
            has = frame.ulpf_key is not None
            if want is not None and has != want:
                self.fail("%s: %s sent the ULPF field=%s, want %s" %
                          (conn, host, has, want))
            if has and frame.ulpf_mode != (0, 0):
                self.fail("%s: %s asked for ULPF mode/flags %s, not "
                          "alignment without packing" % (conn, host,
                                                         frame.ulpf_mode))
        offer = self.rtr_offer.get(ini)
        if req.p2p and offer is not None and req.rtr != offer:
            self.fail("%s: %s offered RTR %s, want %s" %
                      (conn, ini, ",".join(sorted(req.rtr)),
                       ",".join(sorted(offer))))

    def alignment(self, w, data, start, offs, sender):
        """Of the captured TCP payloads after the startup frame (@offs, from
        the SYN), how many begin with an FPDU (its leading marker, if any):
        RFC 5044 Appendix A.1. Counted; judged only for a --packed
        @sender."""
        after = [o for o in offs if start <= o < len(data)]
        n = sum(o in w.starts for o in after)
        self.payloads += len(after)
        self.aligned += n
        note = ", %d of %d TCP payloads begin with an FPDU" % (n, len(after))
        if sender not in self.packed:
            return note
        if n != len(after):
            self.fail("%s: %d of its %d TCP payloads do not begin with an "
                      "FPDU" % (sender, len(after) - n, len(after)))
        starts = sorted(w.starts)
        ends = after[1:] + [len(data)]
        shared = sum(1 for o, e in zip(after, ends)
                     if bisect.bisect_left(starts, e) -
                     bisect.bisect_left(starts, o) > 1)
        self.shared[sender] = self.shared.get(sender, 0) + shared
        return note + ", %d of them holding several" % shared

    def direction(self, name, data, start, markers, crc, key=None, offs=(),
                  sender=None):
        """Walks one direction (draft-00 framing PDUs with @key; @offs: where
        its captured TCP payloads start; @sender: its source address); its
        first ULPDU, or False on an error."""
        w = UlpfWalk(data, start, key) if key else Walk(data, start, markers,
                                                         crc)
        try:
            while w.fpdu():
                pass
        except ValueError as e:
            self.fail("%s (markers %s): %s" % (name, "on" if markers else
                                                "off", e))
            return False
        for off, ctrl in w.terms:
            what = "%s: Terminate at offset %d (Layer/EType/ECode %s)" % (
                name, off, "%d/%d/0x%02x" % (ctrl[0] >> 4, ctrl[0] & 0x0F,
                                             ctrl[1]) if len(ctrl) == 2
                else "cut short")
            if self.allow_term:
                print("note " + what)
            else:
                self.fail(what)
        self.terms += len(w.terms)
        self.asked += markers
        self.markers += w.n_markers
        self.fpdus += w.n_fpdus
        aligned = self.alignment(w, data, start, offs, sender)
        if key:
            self.ulpf_frames += w.n_fpdus
            print("ok   %s: draft-00, %d framing PDUs, key %s on each%s" %
                  (name, w.n_fpdus, key.hex(), aligned))
            return w.first
        print("ok   %s: markers %s, %d FPDUs, %d markers (%d between FPDUs)"
              "%s%s" % (name, "on" if markers else "off", w.n_fpdus,
                        w.n_markers, w.n_between, ", CRC checked" if crc
                        else "", aligned))
        return w.first

    def rtr(self, conn, ini, req, rep, first, resp_first):
        """In peer-to-peer mode the initiator's first FPDU is one RTR of a
        type both frames name (RFC 6581 section 9.2)."""
        if not (req.p2p and rep.p2p):
            return
        kind = rtr_kind(first) if first else None
        agreed = req.rtr & rep.rtr
        if not agreed and is_mpa_term(first, 7):
            # RFC 6581 9.2: no matching RTR option, Terminate 2/0/07. The
            # responder takes it as a Terminate, not as a missing RTR.
            kind = "none"
            agreed = {kind}
            if is_mpa_term(resp_first, 7):
                self.fail("%s: the responder answered the initiator's "
                          "Terminate with its own 2/0/07" % conn)
        if kind is None or kind not in agreed:
            self.fail("%s: first FPDU from the initiator is %s, not an RTR "
                      "of %s" % (conn, kind or "no RTR",
                                 ",".join(sorted(agreed)) or "(none)"))
            return
        self.rtrs[(ini, kind)] = self.rtrs.get((ini, kind), 0) + 1
        print("ok   %s: %s RTR (offered %s, accepted %s)" %
              (conn, kind, ",".join(sorted(req.rtr)),
               ",".join(sorted(rep.rtr))))

    def connection(self, key, a, b, offs=((), ())):
        src, sport, dst, dport = key
        conn = "%s:%d<->%s:%d" % key
        self.conns += 1
        req, rep = Startup(a), Startup(b)
        self.frames(conn, src, req, dst, rep)
        if rep.reject:
            return
        if (req.ulpf_key is None) != (rep.ulpf_key is None):
            if len(a) > req.length or len(b) > rep.length:
                self.fail("%s: octets after the startup frames although only "
                          "one side offered ULPF" % conn)
            else:
                print("ok   %s: ULPF offered by one side only, no octet "
                      "after the startup frames" % conn)
            return
        for k in (req.ulpf_key, rep.ulpf_key):
            if k is None:
                continue
            if k in self.keys:
                self.fail("%s: ULPF key %s used before" % (conn, k.hex()))
            self.keys.add(k)
        crc = (req.crc or rep.crc) and self.do_crc
        # Initiator->Responder carries markers iff the Reply asked for them.
        first = self.direction("%s:%d->%s:%d" % key, a, req.length,
                               rep.markers, crc, req.ulpf_key, offs[0], src)
        resp_first = self.direction("%s:%d->%s:%d" % (dst, dport, src, sport),
                                    b, rep.length, req.markers, crc,
                                    rep.ulpf_key, offs[1], dst)
        if first is not False:
            self.rtr(conn, src, req, rep, first, resp_first or None)


def check(path, expect, rtr_offer, want_rtr, do_crc, allow_term, ulpf=None,
          packed=()):
    flows = {}
    for src, sport, dst, dport, seq, flags, payload in read_pcap(path):
        flows.setdefault((src, sport, dst, dport), Flow()).add(seq, flags,
                                                                payload)
    c = Checker(expect, rtr_offer, do_crc, allow_term, ulpf, packed)
    for key, fl in sorted(flows.items()):
        src, sport, dst, dport = key
        back = flows.get((dst, dport, src, sport))
        a = fl.stream()
        if a is None or not a.startswith(REQ_KEY):
            if fl.segs and a is None and fl.segs[min(fl.segs)][:16] == REQ_KEY:
                c.fail("%s:%d->%s:%d: hole in the capture" % key)
            continue
        b = back.stream() if back else None
        if b is None or len(b) < 20 or not b.startswith(REP_KEY):
            c.fail("%s:%d->%s:%d: no whole MPA Reply in the capture" % key)
            continue
        c.connection(key, a, b, (fl.offsets(), back.offsets()))
    if c.asked and not c.markers:
        c.fail("markers were asked for but none was on the wire")
    if not c.conns:
        c.fail("no MPA connection in the capture")
    if any((ulpf or {}).values()) and not c.ulpf_frames:
        c.fail("the ULPF field was expected but no framing PDU was checked")
    for host in packed:
        if not c.shared.get(host):
            c.fail("no TCP payload from %s held several FPDUs" % host)
    for host, kind in want_rtr:
        if not c.rtrs.get((host, kind)):
            c.fail("no connection initiated by %s sent a %s RTR" %
                   (host, kind))
    rtrs = ", ".join("%s from %s: %d" % (k, h, n)
                     for (h, k), n in sorted(c.rtrs.items()))
    print("%s: %d MPA connections, %d FPDUs (%d draft-00 framing PDUs, %d "
          "keys), %d markers checked, %d directions with markers, %d "
          "Terminates, RTRs: %s; %d of %d TCP payloads begin with an FPDU" %
          ("clean" if not c.bad else "NOT clean", c.conns, c.fpdus,
           c.ulpf_frames, len(c.keys), c.markers, c.asked, c.terms,
           rtrs or "none", c.aligned, c.payloads))
    return c.bad


def _walk_ok(data):
    w = Walk(data, 0, True, True)
    try:
        while w.fpdu():
            pass
    except ValueError:
        return None
    return w.n_fpdus, w.n_markers


def _ulpf_walk(data, key):
    w = UlpfWalk(data, 0, key)
    try:
        while w.fpdu():
            pass
    except ValueError:
        return None
    return w.n_fpdus


def _ulpf_selftest():
    """Two draft-00 framing PDUs walk; a wrong key or a cut one does not."""
    key = bytes.fromhex("0a0b0c0d0e0f")
    seg = bytes.fromhex("c140") + bytes(12)
    two = (struct.pack(">H", len(seg)) + key + seg) * 2
    ok = _ulpf_walk(two, key) == 2
    dv0 = (struct.pack(">H", len(seg)) + key + b"\xc0" + seg[1:])
    ok &= _ulpf_walk(dv0, key) is None
    ok &= _ulpf_walk(two, bytes(6)) is None
    ok &= _ulpf_walk(two[:-1], key) is None
    ok &= _ulpf_walk(two[:8 + len(seg) + 5], key) is None
    rq = Startup(REQ_KEY + bytes.fromhex("1002001480000000") +
                 ULPF_MAGIC + b"\0\0" + key)
    ok &= rq.ulpf_key == key and rq.ulpf_mode == (0, 0) and rq.p2p
    return ok


def selftest():
    """RFC 5044 Figures 5 and 6 (seeds-digest 2.4) pass; broken copies of
    them do not."""
    send = bytes.fromhex("4143") + bytes(8)
    fig5 = (bytes.fromhex("00000000002a") + send + bytes.fromhex("00000001") +
            bytes(28) + bytes.fromhex("52239983"))
    # Figure 6 follows a marker and a 464-octet Send (octets 0..0x1eb).
    first = (bytes.fromhex("0000000001e2") + send + bytes.fromhex("00000001") +
             bytes(4 + 464))
    first += struct.pack("<I", crc32c_update(0xFFFFFFFF, first) ^ 0xFFFFFFFF)
    fig6 = (first + bytes.fromhex("002a") + send + bytes.fromhex("00000002") +
            bytes(4) + bytes.fromhex("00000014") + bytes(24) +
            bytes.fromhex("84925898"))
    ok = _walk_ok(fig5) == (1, 1) and len(first) == 0x1ec
    ok &= _walk_ok(fig6) == (2, 2)
    bad_ptr = fig6[:0x202] + b"\x00\x10" + fig6[0x204:]
    bad_res = fig6[:0x200] + b"\x00\x01" + fig6[0x202:]
    ok &= _walk_ok(bad_ptr) is None and _walk_ok(bad_res) is None
    ok &= _walk_ok(fig5[4:]) is None and _walk_ok(fig5[:-1]) is None
    ok &= _walk_ok(fig6[:-1] + b"\x99") is None
    ok &= rtr_kind(send[:2] + bytes(4) + bytes(4) + bytes(8)) == "send"
    ok &= rtr_kind(bytes.fromhex("c040") + bytes(12)) == "write"
    rreq = bytes.fromhex("4141") + bytes(4) + bytes.fromhex("0000000100000001")
    ok &= rtr_kind(rreq + bytes(4 + 28)) == "read"
    ok &= rtr_kind(rreq + bytes(4 + 15) + b"\1" + bytes(12)) is None
    ok &= rtr_kind(bytes.fromhex("4143") + bytes(17)) is None
    term = bytes.fromhex("4147") + bytes(8) + bytes.fromhex("00000001") + \
        bytes(4) + bytes.fromhex("20070000")
    ok &= is_mpa_term(term[:6] + b"\0\0\0\2" + term[10:], 7)
    ok &= not is_mpa_term(term, 7)
    fpdu = struct.pack(">H", len(term)) + term + bytes(-(2 + len(term)) % 4)
    fpdu += struct.pack("<I", crc32c_update(0xFFFFFFFF, fpdu) ^ 0xFFFFFFFF)
    w = Walk(fpdu, 0, False, True)
    ok &= w.fpdu() and w.terms == [(0, bytes.fromhex("2007"))]
    w = Walk(fig5, 0, True, True)
    ok &= w.fpdu() and not w.terms
    ok &= _ulpf_selftest()
    print("selftest:", "ok" if ok else "FAIL")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--rtr-offer", action="append", default=[])
    ap.add_argument("--want-rtr", action="append", default=[])
    ap.add_argument("--ulpf", action="append", default=[])
    ap.add_argument("--packed", action="append", default=[])
    ap.add_argument("--no-crc", action="store_true")
    ap.add_argument("--allow-terminate", action="store_true")
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("pcap", nargs="?")
    args = ap.parse_args()
    if args.selftest:
        return selftest()
    if not args.pcap:
        ap.error("a PCAP is needed")
    expect = {}
    for e in args.expect:
        host, _, v = e.partition("=")
        if v not in ("Y", "N"):
            ap.error("--expect HOST=Y|N")
        expect[host] = v == "Y"
    ulpf = {}
    for e in args.ulpf:
        host, _, v = e.partition("=")
        if v not in ("Y", "N"):
            ap.error("--ulpf HOST=Y|N")
        ulpf[host] = v == "Y"
    offer = {}
    for e in args.rtr_offer:
        host, _, v = e.partition("=")
        offer[host] = set(v.split(","))
        if not offer[host] <= set(RTR_NAMES):
            ap.error("--rtr-offer HOST=TYPE[,TYPE...] (send, write, read)")
    want = []
    for e in args.want_rtr:
        host, _, v = e.partition("=")
        if v not in RTR_NAMES + ("none",):
            ap.error("--want-rtr HOST=TYPE (send, write, read, none)")
        want.append((host, v))
    try:
        return check(args.pcap, expect, offer, want, not args.no_crc,
                     args.allow_terminate, ulpf, args.packed)
    except (OSError, ValueError) as e:
        print("cannot read %s: %s" % (args.pcap, e))
        return 2


if __name__ == "__main__":
    sys.exit(main())
