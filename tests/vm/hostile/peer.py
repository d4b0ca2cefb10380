#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""A hostile iWARP peer: raw TCP against an RNIC's rdma_cm listener.

peer.py speaks MPA (RFC 5044, RFC 6581), DDP (RFC 5041) and RDMAP
(RFC 5040, RFC 7306) by hand, sends one malformed thing per case and checks
that the target answers the way the RFCs require: an MPA startup error is
answered by closing the connection; an error in Full Operation by a
Terminate message with the right Layer/EType/ECode, then a close. The
target is tests/vm/progs/vt_target, whose info file (-i) names the STags
and addresses to attack. See README.md here for the cases and references.

  peer.py --list [--group teardown]
  peer.py --selftest
  peer.py -i INFO -c CASE [--mpa-timeout S] [--layout rfc|auto] [--dd DEV]

With --dd DEV (the target is kiwi's device DEV in this host) the cases
that say so also read the target's QP from `rdma -j resource show qp -dd`
(kiwi's driver details, kiwi(7)) and check what it shows; without it they
note that the check was left out.

The "teardown" group (tests/vm/scenarios/75-teardown.sh) drives vt_target
through its "cmd:" Sends and checks that the target's side of a
connection ends in bounded time whatever this peer does.

Exit status: 0 the outcome was the expected one, 1 it was not, 2 usage or
setup error. Python 3 standard library only.
"""

import argparse
import json
import os
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
from crc32c import crc32c  # noqa: E402

# RFC 5044 Figure 5 (marker, 42-octet Send, CRC), as in tests/vectors.
_FIG5 = (bytes.fromhex("00000000002a4143") + bytes(8) +
         bytes.fromhex("00000001") + bytes(28) + bytes.fromhex("52239983"))


def selftest():
    ok = crc32c(b"123456789") == 0xE3069283
    ok &= crc32c(_FIG5[:48]) == struct.unpack("<I", _FIG5[48:])[0]
    # Without the leading marker (seeds-digest 2.5): what fpdu() frames.
    ok &= fpdu(_FIG5[6:48])[-4:] == struct.pack("<I", 0xC33E24B7)
    # With the leading marker: the whole figure.
    ok &= fpdu(_FIG5[6:48], marker=0) == _FIG5
    print("selftest:", "ok" if ok else "FAIL")
    return 0 if ok else 1


# --- wire formats -----------------------------------------------------------

REQ_KEY = b"MPA ID Req Frame"
REP_KEY = b"MPA ID Rep Frame"

OP_WRITE, OP_RREQ, OP_RRESP, OP_SEND = 0x0, 0x1, 0x2, 0x3
OP_TERM, OP_IMM, OP_IMM_SE, OP_ATOMIC_REQ = 0x7, 0x8, 0x9, 0xA
OP_ATOMIC_RESP = 0xB
QN_SEND, QN_RREQ, QN_TERM, QN_ARESP = 0, 1, 2, 3


def mpa_frame(key, rev=1, crc=1, markers=0, enhanced=None, pd=b"",
              pd_len=None):
    """MPA Request/Reply (RFC 5044 7.1.1; S bit and field: RFC 6581 6, 9)."""
    s_bit = 1 if enhanced is not None else 0
    flags = (markers << 7) | (crc << 6) | (s_bit << 4)
    data = (enhanced or b"") + pd
    n = len(data) if pd_len is None else pd_len
    return key + bytes([flags, rev]) + struct.pack(">H", n) + data


def enhanced_field(ird, ord_, p2p=0, send_rtr=0, write_rtr=0, read_rtr=0):
    return struct.pack(">HH", (p2p << 15) | (send_rtr << 14) | ird,
                       (write_rtr << 15) | (read_rtr << 14) | ord_)


# kiwi's ULP framing draft-00 startup field (kernel/proto/ulpf.h), after the
# RFC 6581 field in the private data: magic, mode (0 alignment), flags
# (0x01 packing), the 48-bit key its sender transmits with.
ULPF_MAGIC = b"KIWIULPF"


def ulpf_field(key, mode=0, flags=0):
    return ULPF_MAGIC + bytes([mode, flags]) + key


def ulpf_pdu(ulpdu, key):
    """A draft-00 framing PDU: Length, Key, one ULPDU (no pad, no CRC)."""
    return struct.pack(">H", len(ulpdu)) + key + ulpdu


def pad_len(n):
    return (4 - (n + 2) % 4) % 4


def fpdu(ulpdu, crc=True, bad_crc=False, len_field=None, marker=None):
    """One FPDU: ULPDU_Length, ULPDU, PAD, CRC (le32). With @marker, an
    MPA marker of that FPDUPTR leads it; the CRC covers the marker too (RFC
    5044 Figure 5). Markers elsewhere are not supported."""
    n = len(ulpdu)
    body = b"" if marker is None else struct.pack(">HH", 0, marker)
    body += struct.pack(">H", n if len_field is None else len_field)
    body += ulpdu + b"\0" * pad_len(n)
    v = crc32c(body) if crc else 0
    if bad_crc:
        v ^= 0xDEADBEEF
    return body + struct.pack("<I", v)


class MarkerTx:
    """Frames FPDUs into a stream with MPA markers every 512 octets of
    stream offset (RFC 5044 4.2-4.3, seeds-digest 2.3 transmit algorithm):
    a marker at a boundary between FPDUs has FPDUPTR 0 and counts in the
    CRC of the FPDU that follows; one inside an FPDU points back to that
    FPDU's ULPDU_Length. @off is the stream offset since the first octet
    after the startup frame; FPDUs are multiples of 4 octets, so markers
    always fall between 4-octet chunks."""

    INTERVAL = 512

    def __init__(self):
        self.off = 0
        self.placed = {"between": 0, "inside": 0, "before-crc": 0}

    def gap(self):
        """Octets from here to the next marker position."""
        return self.INTERVAL - self.off % self.INTERVAL

    def frame(self, ulpdu, wrong_ptr=0):
        """One FPDU with its markers; @wrong_ptr is added to the FPDUPTR
        of every marker inside this FPDU (the CRC still covers what is
        sent, so only the marker disagrees)."""
        n = len(ulpdu)
        body = struct.pack(">H", n) + ulpdu + b"\0" * pad_len(n)
        out = bytearray()
        covered = bytearray()
        hdr = None
        chunks = [body[i:i + 4] for i in range(0, len(body), 4)] + [None]
        for chunk in chunks:
            if self.off % self.INTERVAL == 0:
                if hdr is None:
                    ptr = 0
                    self.placed["between"] += 1
                else:
                    ptr = self.off - hdr + wrong_ptr
                    self.placed["inside" if chunk else "before-crc"] += 1
                m = struct.pack(">HH", 0, ptr)
                out += m
                covered += m
                self.off += 4
            if hdr is None:
                hdr = self.off
            if chunk is None:
                out += struct.pack("<I", crc32c(covered))
            else:
                out += chunk
                covered += chunk
            self.off += 4
        return bytes(out)


def tagged(op, stag, to, payload=b"", last=1, dv=1, rv=1):
    """Tagged DDP header (RFC 5041 4.2) with the RDMAP control octet."""
    return (bytes([0x80 | (last << 6) | dv, (rv << 6) | op]) +
            struct.pack(">IQ", stag, to & 0xFFFFFFFFFFFFFFFF) + payload)


def untagged(op, qn, msn, payload=b"", mo=0, inv=0, last=1, dv=1, rv=1):
    """Untagged DDP header (RFC 5041 4.3) with the RDMAP control octet."""
    return (bytes([(last << 6) | dv, (rv << 6) | op]) +
            struct.pack(">IIII", inv, qn, msn, mo) + payload)


def rreq_hdr(sink_stag, sink_to, size, src_stag, src_to):
    """RDMA Read Request header (RFC 5040 4.4), 28 octets."""
    return struct.pack(">IQIIQ", sink_stag, sink_to, size, src_stag, src_to)


def atomic_hdr(aop, req_id, stag, to, data, mask, cmp_data, cmp_mask):
    """RFC 7306 Atomic Request header (section 5.2.1), 52 octets."""
    return struct.pack(">IIIQQQQQ", aop & 0xF, req_id, stag, to, data, mask,
                       cmp_data, cmp_mask)


LAYER_NAMES = {0: "RDMAP", 1: "DDP", 2: "LLP"}
# (layer, etype, ecode) -> name, RFC 5040 4.8, RFC 5041 7.2, RFC 5044 8,
# RFC 6581 8 (see /work/shared/spec/rdmap-digest.md 1.7).
CODE_NAMES = {
    (0, 1, 0x00): "RDMAP remote protection: invalid STag",
    (0, 1, 0x01): "RDMAP remote protection: base or bounds violation",
    (0, 1, 0x02): "RDMAP remote protection: access rights violation",
    (0, 1, 0x03): "RDMAP remote protection: STag not associated with stream",
    (0, 1, 0x04): "RDMAP remote protection: TO wrap",
    (0, 1, 0x09): "RDMAP remote protection: STag cannot be invalidated",
    (0, 2, 0x05): "RDMAP remote operation: invalid RDMAP version",
    (0, 2, 0x06): "RDMAP remote operation: unexpected opcode",
    (0, 2, 0x07): "RDMAP remote operation: catastrophic, localized to stream",
    (0, 2, 0x08): "RDMAP remote operation: catastrophic, global",
    (1, 0, 0x00): "DDP local catastrophic",
    (1, 1, 0x00): "DDP tagged: invalid STag",
    (1, 1, 0x01): "DDP tagged: base or bounds violation",
    (1, 1, 0x02): "DDP tagged: STag not associated with DDP stream",
    (1, 1, 0x03): "DDP tagged: TO wrap",
    (1, 1, 0x04): "DDP tagged: invalid DDP version",
    (1, 2, 0x01): "DDP untagged: invalid QN",
    (1, 2, 0x02): "DDP untagged: invalid MSN, no buffer available",
    (1, 2, 0x03): "DDP untagged: invalid MSN, MSN range not valid",
    (1, 2, 0x04): "DDP untagged: invalid MO",
    (1, 2, 0x05): "DDP untagged: message too long for available buffer",
    (1, 2, 0x06): "DDP untagged: invalid DDP version",
    (2, 0, 0x01): "MPA: TCP connection closed",
    (2, 0, 0x02): "MPA: CRC error",
    (2, 0, 0x03): "MPA: marker and ULPDU length mismatch",
    (2, 0, 0x04): "MPA: invalid Request or Reply frame",
}


def code_str(c):
    name = CODE_NAMES.get(c)
    if name is None:
        name = LAYER_NAMES.get(c[0], "layer %d" % c[0]) + " (unnamed code)"
    return "%d/%d/0x%02x (%s)" % (c[0], c[1], c[2], name)


class Terminate:
    """A decoded Terminate body (RFC 5040 4.8)."""

    def __init__(self, body, layout):
        b0, b1, b2 = body[0], body[1], body[2]
        self.layout = layout
        if layout == "rfc":
            self.code = (b0 >> 4, b0 & 0xF, b1)
            self.m, self.d, self.r = b2 & 0x80, b2 & 0x40, b2 & 0x20
        else:
            # siw on little-endian hosts: C bitfields swap the nibbles and
            # put M/D/R at 0x01/0x02/0x04 (research/anchors.md section 10).
            self.code = (b0 & 0xF, b0 >> 4, b1)
            self.m, self.d, self.r = b2 & 0x01, b2 & 0x02, b2 & 0x04
        self.seg_len = None
        self.ddp_hdr = b""
        self.rdma_hdr = b""
        rest = body[4:]
        # Presence follows from the length, never from D/R alone (siw sets
        # R without a header; RFC 5040 7.1 allows the short form).
        if self.d and len(rest) >= 2 + 14:
            self.seg_len = struct.unpack(">H", rest[:2])[0]
            n = 14 if rest[2] & 0x80 else 18
            self.ddp_hdr = rest[2:2 + n]
            self.rdma_hdr = rest[2 + n:2 + n + 28]

    def __str__(self):
        flags = "".join(f for f, v in (("M", self.m), ("D", self.d),
                                       ("R", self.r)) if v) or "-"
        s = "Terminate %s hdrct=%s" % (code_str(self.code), flags)
        if self.seg_len is not None:
            s += " seg_len=%d ddp_hdr=%s" % (self.seg_len, self.ddp_hdr.hex())
        if self.rdma_hdr:
            s += " rdma_hdr=%d octets" % len(self.rdma_hdr)
        if self.layout != "rfc":
            s += " [decoded with siw's swapped bit layout]"
        return s


def decode_terminate(body, layout, expect):
    """Decode; in auto mode prefer the layout that yields an expected code."""
    if layout == "rfc" or len(body) < 4:
        return Terminate(body, "rfc")
    rfc, swapped = Terminate(body, "rfc"), Terminate(body, "siw")
    if rfc.code in expect:
        return rfc
    if swapped.code in expect:
        return swapped
    # Neither expected: guess from the flag bits siw uses.
    if body[2] & 0x07 and not body[2] & 0xE0:
        return swapped
    return rfc


# --- the connection ---------------------------------------------------------

class Closed(Exception):
    pass


class Conn:
    """A TCP connection to the target and an FPDU reader on it."""

    def __init__(self, info, rcvbuf=None):
        self.info = info
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.settimeout(10)
        self.sock.connect((info["addr"], int(info["port"])))
        self.buf = b""
        self.crc = True
        self.eof = None          # None (open), "fin" or "rst"
        self.ird = None
        self.msn = {QN_SEND: 1, QN_RREQ: 1}
        self.ulpf_tx = None      # draft-00 keys, set by ulpf_handshake()
        self.ulpf_rx = None

    def frame(self, ulpdu):
        """@ulpdu framed as this connection frames: an FPDU, or a draft-00
        framing PDU with our key."""
        if self.ulpf_tx:
            return ulpf_pdu(ulpdu, self.ulpf_tx)
        return fpdu(ulpdu)

    def send(self, data):
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            self.eof = self.eof or "rst"
            raise Closed()

    def fill(self, deadline):
        """Read more octets; False once closed or at the deadline."""
        if self.eof:
            return False
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        self.sock.settimeout(left)
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            return False
        except ConnectionResetError:
            self.eof = "rst"
            return False
        if not data:
            self.eof = "fin"
            return False
        self.buf += data
        return True

    def read_exact(self, n, deadline):
        while len(self.buf) < n:
            if not self.fill(deadline):
                return None
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def wait_close(self, seconds):
        """Discard what arrives until the target closes; the time taken."""
        start = time.monotonic()
        deadline = start + seconds
        while self.fill(deadline):
            pass
        return time.monotonic() - start if self.eof else None

    def read_ulpf(self, deadline):
        """The next draft-00 framing PDU's ULPDU; its key must be the one
        the target announced."""
        hdr = self.read_exact(8, deadline)
        if hdr is None:
            return None
        if hdr[2:] != self.ulpf_rx:
            raise Closed("the target framed with key %s, announced %s" %
                         (hdr[2:].hex(), self.ulpf_rx.hex()))
        return self.read_exact(struct.unpack(">H", hdr[:2])[0], deadline)

    def read_fpdu(self, deadline):
        """The next ULPDU, or None when closed/timed out."""
        if self.ulpf_rx:
            return self.read_ulpf(deadline)
        hdr = self.read_exact(2, deadline)
        if hdr is None:
            return None
        n = struct.unpack(">H", hdr)[0]
        rest = self.read_exact(n + pad_len(n) + 4, deadline)
        if rest is None:
            return None
        ulpdu = rest[:n]
        got = struct.unpack("<I", rest[-4:])[0]
        # Pure-Python CRC is slow in a TCG guest: bulk Read Response data
        # is not verified, every other FPDU is.
        bulk = n > 1024 and ulpdu[0] & 0x80 and ulpdu[1] & 0xF == OP_RRESP
        if self.crc and not bulk and got != crc32c(hdr + rest[:-4]):
            raise Closed("the target sent an FPDU with a bad CRC")
        return ulpdu

    def close(self):
        self.sock.close()


def read_reply(c, seconds=10):
    """Read an MPA Reply: (key, flags, rev, private data) or None."""
    deadline = time.monotonic() + seconds
    hdr = c.read_exact(20, deadline)
    if hdr is None:
        return None
    n = struct.unpack(">H", hdr[18:20])[0]
    pd = c.read_exact(n, deadline) if n else b""
    return hdr[:16], hdr[16], hdr[17], pd or b""


# --- outcomes -----------------------------------------------------------------

class Result:
    def __init__(self, name):
        self.name = name
        self.lines = []
        self.fails = []

    def seen(self, msg):
        self.lines.append(msg)
        print("  seen: " + msg)

    def fail(self, msg):
        self.fails.append(msg)
        print("  FAIL: " + msg)

    def note(self, msg):
        print("  note: " + msg)


def handshake(info, res, rev=2, rcvbuf=None, ird=8, ord_=8, marker=None,
              pd=b"", marker_tx=False, rtr=None):
    """Connect, MPA Request (C=1), validated Reply; the opener FPDU.

    pd: private data for the target (vt_target: b"vt:access=..." asks for
    a QP with exactly those remote rights).
    With @marker the target must ask for markers (M=1 in its Reply) and
    the opener goes out behind a marker at stream offset 0 whose FPDUPTR
    is @marker (0 is right: no FPDU is open there, RFC 5044 5). Everything
    the caller sends then must fit in the stream's first 512 octets.
    With @marker_tx the target must ask for markers as well and c.mtx (a
    MarkerTx) frames the opener and whatever the caller sends after it.
    With @rtr (RFC 6581 peer-to-peer mode: a dict of enhanced_field()'s
    RTR flags) the target must accept peer-to-peer mode, and no opener is
    sent: the caller's first FPDU is the RTR, or what stands in for it."""
    if marker_tx:
        marker = 0
    c = Conn(info, rcvbuf)
    enh = None
    if rev == 2:
        enh = enhanced_field(ird, ord_, p2p=1 if rtr else 0, **(rtr or {}))
    c.send(mpa_frame(REQ_KEY, rev=rev, crc=1, enhanced=enh, pd=pd))
    rep = read_reply(c)
    if rep is None:
        raise Closed("no MPA Reply (closed: %s)" % c.eof)
    key, flags, rrev, pd = rep
    if key != REP_KEY or flags & 0x20:
        raise Closed("bad or rejecting Reply: key=%r flags=0x%02x" %
                     (key, flags))
    if flags & 0x80 and marker is None:
        raise Closed("the target asks for markers; peer.py sends none")
    if marker is not None and not flags & 0x80:
        raise Closed("the target does not ask for markers (kiwi: set "
                     "mpa_markers)")
    c.crc = True     # we asked for CRC: both directions use it
    if rev == 2 and flags & 0x10 and len(pd) >= 4:
        v_ird, v_ord = struct.unpack(">HH", pd[:4])
        c.ird = v_ird & 0x3FFF
        res.seen("MPA Reply rev %d, responder IRD %d ORD %d" %
                 (rrev, c.ird, v_ord & 0x3FFF))
    else:
        res.seen("MPA Reply rev %d flags 0x%02x" % (rrev, flags))
    if rtr:
        if not (flags & 0x10 and len(pd) >= 4 and pd[0] & 0x80):
            raise Closed("the target's Reply does not take peer-to-peer "
                         "mode (kiwi: mpa_p2p)")
        return c
    # RFC 5044 7.1.2 rule 4: the responder sends nothing before a valid
    # FPDU arrived, so every case starts with a harmless one: a
    # zero-length RDMA Write, whose STag and TO are not checked (RFC 5041
    # 5.2), naming a non-zero STag (hardware refuses STag 0).
    opener = tagged(OP_WRITE, int(info["target_stag"], 0),
                    int(info["target_addr"], 0))
    if marker_tx:
        c.mtx = MarkerTx()
        c.send(c.mtx.frame(opener))
    else:
        c.send(fpdu(opener, marker=marker))
    return c


def ulpf_handshake(info, res):
    """Connect with kiwi's ULP framing draft-00 field in a revision 2
    Request (C=0, our random key); the Reply must carry the field too
    (kiwi: ulpf00=Y). Then both directions are draft-00 framing PDUs; the
    opener goes out framed with our key."""
    c = Conn(info)
    c.ulpf_tx = os.urandom(6)
    c.send(mpa_frame(REQ_KEY, rev=2, crc=0, enhanced=enhanced_field(8, 8),
                     pd=ulpf_field(c.ulpf_tx)))
    rep = read_reply(c)
    if rep is None:
        raise Closed("no MPA Reply (closed: %s)" % c.eof)
    key, flags, rrev, pd = rep
    if key != REP_KEY or flags & 0x20:
        raise Closed("bad or rejecting Reply: key=%r flags=0x%02x" %
                     (key, flags))
    f = pd[4:20] if flags & 0x10 else pd[:16]
    if f[:8] != ULPF_MAGIC or f[8:10] != b"\0\0":
        raise Closed("the target's Reply carries no ULPF field (kiwi: "
                     "ulpf00=Y)")
    c.ulpf_rx = f[10:16]
    c.crc = False
    res.seen("MPA Reply rev %d flags 0x%02x, ULPF key %s (ours %s)" %
             (rrev, flags, c.ulpf_rx.hex(), c.ulpf_tx.hex()))
    if flags & 0x40:
        res.fail("the target asks for CRC, which draft-00 framing has not")
    c.send(c.frame(tagged(OP_WRITE, int(info["target_stag"], 0),
                          int(info["target_addr"], 0))))
    return c


def collect(c, res, expect, layout, want_rresp=0, seconds=10,
            count_writes=False):
    """Read FPDUs until a Terminate, a close or the time limit.

    Returns (terminate or None, list of Read and Atomic Response ULPDUs);
    @want_rresp of them end the wait. With @count_writes, RDMA Write
    segments are counted in one line instead of seen one line each."""
    deadline = time.monotonic() + seconds
    rresp = []
    writes = [0]
    try:
        return collect_until(c, res, expect, layout, want_rresp, deadline,
                             writes if count_writes else None, rresp)
    finally:
        if count_writes:
            res.seen("%d RDMA Write segments" % writes[0])


def collect_until(c, res, expect, layout, want_rresp, deadline, writes,
                  rresp):
    """collect()'s loop; @writes, if not None, counts Write segments."""
    while True:
        try:
            u = c.read_fpdu(deadline)
        except Closed as e:
            res.fail(str(e))
            return None, rresp
        if u is None:
            return None, rresp
        if len(u) < 14:
            res.fail("runt ULPDU of %d octets from the target" % len(u))
            continue
        op = u[1] & 0xF
        if (u[0] & 0x80 and op == OP_RRESP) or \
                (not u[0] & 0x80 and op == OP_ATOMIC_RESP):
            rresp.append(u)
            if want_rresp and len(rresp) == want_rresp:
                return None, rresp
            continue
        if not u[0] & 0x80 and op == OP_TERM and len(u) >= 22:
            t = decode_terminate(u[18:], layout, expect)
            res.seen(str(t))
            return t, rresp
        if writes is not None and u[0] & 0x80 and op == OP_WRITE:
            writes[0] += 1
            continue
        res.seen("FPDU ctrl %02x%02x len %d" % (u[0], u[1], len(u)))


def expect_terminate(c, res, expect, layout, bad_hdr=None, want_d=True,
                     seconds=10, count_writes=False):
    """The target must answer with a Terminate in @expect, then close."""
    t, rresp = collect(c, res, expect, layout, seconds=seconds,
                       count_writes=count_writes)
    for u in rresp:
        res.seen("Read Response: STag 0x%08x TO 0x%x, %d octets" %
                 (struct.unpack(">I", u[2:6])[0],
                  struct.unpack(">Q", u[6:14])[0], len(u) - 14))
    if t is None:
        res.fail("expected a Terminate %s, seen none (connection %s)" %
                 (" or ".join(code_str(e) for e in expect),
                  c.eof or "still open"))
    else:
        if t.code not in expect:
            res.fail("expected Terminate %s, seen %s" %
                     (" or ".join(code_str(e) for e in expect),
                      code_str(t.code)))
        if t.layout != "rfc":
            res.note("the Terminate uses siw's swapped bit layout")
        if bad_hdr is not None and want_d and t.code in expect:
            if not t.ddp_hdr:
                res.fail("the Terminate carries no copy of the failed DDP "
                         "header (RFC 5040 4.8 Figure 10)")
            elif t.ddp_hdr != bad_hdr[:len(t.ddp_hdr)]:
                res.fail("copied DDP header %s differs from the one sent %s"
                         % (t.ddp_hdr.hex(), bad_hdr[:len(t.ddp_hdr)].hex()))
    took = c.wait_close(seconds)
    if took is None:
        res.fail("the target did not close the connection within %d s "
                 "after the error" % seconds)
    else:
        res.seen("connection closed by the target (%s) after %.2f s" %
                 (c.eof, took))
    return t


def expect_quiet_close(c, res, a, after, seconds=10):
    """After @after the target must close, sending no Terminate."""
    t, _ = collect(c, res, set(), a.layout, seconds=seconds)
    if t is not None:
        res.fail("unexpected Terminate after %s" % after)
    if not c.eof:
        res.fail("the target did not close after %s within %d s" %
                 (after, seconds))
    else:
        res.seen("connection closed by the target (%s)" % c.eof)


def expect_mpa_close(c, res, seconds, no_reply=True):
    """MPA startup error: the target closes, sending no Reply."""
    start = time.monotonic()
    deadline = start + seconds
    got = b""
    while c.fill(deadline):
        got += c.buf
        c.buf = b""
    took = time.monotonic() - start
    if got:
        res.seen("the target sent %d octets: %s" % (len(got), got[:24].hex()))
        if no_reply and got[:16] == REP_KEY:
            res.fail("the target answered with an MPA Reply (flags 0x%02x) "
                     "instead of closing (RFC 5044 7.1.2 rule 2)" % got[16])
    if not c.eof:
        res.fail("the connection is still open after %.1f s" % took)
        return None
    res.seen("connection closed by the target (%s) after %.2f s" %
             (c.eof, took))
    return took


# --- kiwi's driver details (rdma resource show qp -dd) ------------------------

def dd_qp(a, c):
    """The target's QP of connection @c in `rdma -j resource show qp -dd`
    on device a.dd (the one whose drv_raddr is our end), or None."""
    me = "%s:%d" % c.sock.getsockname()[:2]
    out = subprocess.run(["rdma", "-j", "resource", "show", "qp", "-dd"],
                         capture_output=True, text=True, check=False).stdout
    for q in json.loads(out or "[]"):
        if q.get("ifname") == a.dd and q.get("drv_raddr") == me:
            return q
    return None


def dd_wait(a, c, res, want, seconds=10):
    """Poll the target's QP (dd_qp) until each key of dict @want has its
    value (a missing key: None); fail otherwise. Returns the last entry
    seen, or None without --dd."""
    if not a.dd:
        res.note("driver details not checked (no --dd)")
        return None
    deadline = time.monotonic() + seconds
    while True:
        q = dd_qp(a, c)
        bad = {k: (q or {}).get(k) for k, v in want.items()
               if (q or {}).get(k) != v}
        if q and not bad:
            res.seen("-dd: " + ", ".join("%s=%s" % (k[4:], v)
                                         for k, v in sorted(want.items())))
            return q
        if time.monotonic() >= deadline:
            res.fail("-dd of the target's QP on %s: %s, want %s" %
                     (a.dd, bad if q else "no QP with our address",
                      {k: want[k] for k in bad} if q else want))
            return q
        time.sleep(0.1)


# --- the cases ------------------------------------------------------------------

CASES = {}


def case(name, doc, group="hostile"):
    def reg(fn):
        CASES[name] = (fn, doc, group)
        return fn
    return reg


def ival(info, key):
    return int(info[key], 0)


# MPA-049/051/060/064/068: a valid Request and Reply enter Full Operation.
@case("mpa-good-rev1", "control: rev 1 handshake, Write, Send, graceful close")
def c_good_rev1(info, res, a):
    return good(info, res, a, rev=1, read=False)


# RDMAP-08/14: the Read Response carries the Request's sink STag/TO and data.
# What handshake() agrees with kiwi (mpa_markers=N, mpa_crc_off=N).
DD_REV2 = {"drv_attached": 1, "drv_role": "responder", "drv_mpa_rev": 2,
           "drv_crc": 1, "drv_markers_tx": 0, "drv_markers_rx": 0,
           "drv_p2p": 0, "drv_framing": None, "drv_rx_failed": 0}


@case("mpa-good-rev2", "control: rev 2 handshake, Write, Send, Read, "
      "graceful close; -dd: rev 2, CRC, no markers, MPA framing, MSN 2")
def c_good_rev2(info, res, a):
    return good(info, res, a, rev=2, read=True, dd=DD_REV2)


# MPA-043/046/087: the target waits for whole FPDUs, however split.
@case("mpa-good-split", "control: rev 2, every FPDU sent in three pieces "
      "0.3 s apart (the target waits for whole FPDUs), graceful close")
def c_good_split(info, res, a):
    return good(info, res, a, rev=2, read=True, split=True)


# MPA-043/046/087: one octet per segment; every data_ready finds an FPDU
# not yet whole (kernel/rx_ahead.c must resume where it stopped).
@case("mpa-good-dribble", "control: rev 2, Write, Send and Read Request "
      "sent one octet per send() call, graceful close")
def c_good_dribble(info, res, a):
    return good(info, res, a, rev=2, read=True, dribble=True)


@case("mpa-good-markers", "control: the target asks for markers (kiwi: "
      "mpa_markers=Y); a correct marker, Write, Send, Read, graceful close")
def c_good_markers(info, res, a):
    return good(info, res, a, rev=2, read=True, marker=0)


def write_to_gap(c, stag, addr, pat, lo, hi, fpdu_extra):
    """Writes prefixes of @pat (at most len(@pat) octets, a multiple of 4)
    until the next marker position is @lo..@hi octets away (multiples of
    4), then returns the Write length that makes an FPDU end @fpdu_extra
    octets past that position (a tagged Write of k octets is an FPDU of
    20 + k octets when k is a multiple of 4)."""
    while not lo <= c.mtx.gap() <= hi:
        gap = c.mtx.gap()
        # Short of @lo: cross the marker; beyond @hi: land on @lo or nearer.
        k = len(pat) if gap < lo else min(len(pat), max(0, gap - 20 - lo))
        c.send(c.mtx.frame(tagged(OP_WRITE, stag, addr, pat[:k & ~3])))
    return c.mtx.gap() + fpdu_extra - 20


# MPA-021/025/033: markers wherever the stream puts them (inside FPDUs,
# before a CRC, between FPDUs), stripped and counted in the CRC.
@case("mpa-good-markers-stream", "control: the target asks for markers "
      "(kiwi: mpa_markers=Y); 80 Writes of 0..64 octets put markers inside "
      "FPDUs, right before a CRC and between FPDUs; then Send, Read, close")
def c_good_markers_stream(info, res, a):
    c = handshake(info, res, rev=2, marker_tx=True)
    n = ival(info, "control_len")
    pat = control_pattern(n)
    stag, addr = ival(info, "target_stag"), ival(info, "target_addr")
    for i in range(80):
        k = min(n, (i * 4) % (n + 4))
        c.send(c.mtx.frame(tagged(OP_WRITE, stag, addr, pat[:k])))
    # An FPDU whose CRC starts at a marker position, then one that ends
    # exactly at the next: the FPDU after it is led by a marker.
    k = write_to_gap(c, stag, addr, pat, 20, n + 16, 4)
    c.send(c.mtx.frame(tagged(OP_WRITE, stag, addr, pat[:k])))
    k = write_to_gap(c, stag, addr, pat, 20, n + 20, 0)
    c.send(c.mtx.frame(tagged(OP_WRITE, stag, addr, pat[:k])))
    c.send(c.mtx.frame(tagged(OP_WRITE, stag, addr, pat)))
    c.send(c.mtx.frame(untagged(OP_SEND, QN_SEND, 1,
                                b"hostile-peer control")))
    res.seen("markers sent: %s" % ", ".join(
        "%d %s" % (v, k) for k, v in c.mtx.placed.items()))
    if not all(c.mtx.placed.values()):
        res.fail("the stream did not put a marker in every position")
    c.send(c.mtx.frame(untagged(OP_RREQ, QN_RREQ, 1,
                                rreq_hdr(0x11223344, 0x1000, n, stag, addr))))
    t, resp = collect(c, res, set(), a.layout, want_rresp=1)
    if t is not None:
        res.fail("unexpected Terminate")
    elif len(resp) != 1 or resp[0][14:] != pat:
        res.fail("no Read Response returning the written data (connection "
                 "%s)" % (c.eof or "open"))
    c.sock.shutdown(socket.SHUT_WR)
    expect_quiet_close(c, res, a, "our FIN")


# MPA-080: a marker inside an FPDU that points elsewhere is an error, even
# when the CRC (computed over that marker) is good.
@case("mpa-bad-marker-inside", "the target asks for markers (kiwi: "
      "mpa_markers=Y); zero-length Writes, then a 64-octet Write outside "
      "the control window whose marker inside it has FPDUPTR 4 too large "
      "(CRC good): Terminate 2/0/03, nothing placed")
def c_bad_marker_inside(info, res, a):
    c = handshake(info, res, rev=2, marker_tx=True)
    stag, addr = ival(info, "target_stag"), ival(info, "target_addr")
    # Zero-length Writes (20-octet FPDUs) until the next marker position is
    # 24..76 octets away: a 64-octet Write (84 octets) then holds it.
    write_to_gap(c, stag, addr, b"", 24, 76, 0)
    before = c.mtx.placed["inside"]
    c.send(c.mtx.frame(tagged(OP_WRITE, stag, addr + 4096, bytes(range(64))),
                       wrong_ptr=4))
    if c.mtx.placed["inside"] != before + 1:
        res.fail("the bad Write holds no marker")
    expect_terminate(c, res, {(2, 0, 3)}, a.layout)


def control_pattern(n):
    return bytes((i * 7 + 1) & 0xFF for i in range(n))


def send_split(c, data):
    """Send in three pieces (the first ends inside ULPDU_Length)."""
    for piece in (data[:1], data[1:len(data) // 2], data[len(data) // 2:]):
        c.send(piece)
        time.sleep(0.3)


def send_dribble(c, data):
    """Send one octet per TCP segment (TCP_NODELAY is set)."""
    for i in range(len(data)):
        c.send(data[i:i + 1])


def good(info, res, a, rev, read, split=False, pd=b"", rresp=False,
         dribble=False, marker=None, ulpf=False, dd=None):
    """The control exchange; with @dd (a dict for dd_wait) the target's
    QP must show those driver details once the Send arrived."""
    if ulpf:
        c = ulpf_handshake(info, res)
    else:
        c = handshake(info, res, rev=rev, pd=pd, marker=marker)
    send = (lambda d: send_split(c, d)) if split else c.send
    if dribble:
        send = lambda d: send_dribble(c, d)
    n = ival(info, "control_len")
    pat = control_pattern(n)
    stag, addr = ival(info, "target_stag"), ival(info, "target_addr")
    send(c.frame(tagged(OP_WRITE, stag, addr, pat)))
    send(c.frame(untagged(OP_SEND, QN_SEND, 1, b"hostile-peer control")))
    if dd:
        dd_wait(a, c, res, dict(dd, drv_msn_rx_send=2, drv_rx_mo=0))
    if read:
        send(c.frame(untagged(OP_RREQ, QN_RREQ, 1,
                              rreq_hdr(0x11223344, 0x1000, n, stag, addr))))
        t, resp = collect(c, res, set(), a.layout, want_rresp=1)
        if t is not None:
            res.fail("unexpected Terminate")
        elif len(resp) != 1:
            res.fail("no Read Response (connection %s)" % (c.eof or "open"))
        else:
            u = resp[0]
            s, to = struct.unpack(">IQ", u[2:14])
            res.seen("Read Response STag 0x%08x TO 0x%x, %d octets" %
                     (s, to, len(u) - 14))
            if (s, to, u[14:]) != (0x11223344, 0x1000, pat) or \
                    not u[0] & 0x40:
                res.fail("the Read Response does not return the written "
                         "data to the requested sink STag/TO")
    if rresp:
        r = read_for_target(c, res, a, 64, 2)
        if r is not None:
            sink_stag, sink_to = r[0], r[1]
            c.send(fpdu(tagged(OP_RRESP, sink_stag, sink_to, bytes(32),
                               last=0)) +
                   fpdu(tagged(OP_RRESP, sink_stag, sink_to + 32,
                               bytes(range(32)))))
            t, _ = collect(c, res, set(), a.layout, seconds=2)
            if t is not None:
                res.fail("unexpected Terminate after a whole Read Response")
    # Graceful close: FIN; the target must close as well.
    c.sock.shutdown(socket.SHUT_WR)
    expect_quiet_close(c, res, a, "our FIN")


# ULP framing draft-00 (kiwi's ulpf00 setting on the target; README.md).

# The target frames with the key it announced (checked on every framing
# PDU) and takes ours; Write, Send and Read Request in, Read
# Response out.
@case("mpa-good-ulpf", "draft-00 framing (target: ulpf00=Y): rev 2 Request "
      "with our key, control Write, Send, Read Request; the Read Response "
      "comes framed with the target's key; -dd: framing ulpf00, no CRC")
def c_good_ulpf(info, res, a):
    good(info, res, a, 2, True, ulpf=True,
         dd=dict(DD_REV2, drv_crc=0, drv_framing="ulpf00"))


# A framing PDU with another key is not taken as one.
@case("ulpf-wrong-key", "draft-00 framing (target: ulpf00=Y): a Send "
      "framed with a key other than ours: Terminate 2/0/03 framed with the "
      "target's key, nothing delivered")
def c_ulpf_wrong_key(info, res, a):
    c = ulpf_handshake(info, res)
    bad = bytes(b ^ 0xFF for b in c.ulpf_tx)
    c.send(ulpf_pdu(untagged(OP_SEND, QN_SEND, 1, b"wrong key"), bad))
    expect_terminate(c, res, {(2, 0, 3)}, a.layout)


def ulpf_refused(info, res, a, pd):
    """The target (ulpf00=Y) answers a Request with @pd with a rejecting
    Reply and closes; the ULP never sees it."""
    c = Conn(info)
    c.send(mpa_frame(REQ_KEY, rev=2, crc=1, enhanced=enhanced_field(8, 8),
                     pd=pd))
    rep = read_reply(c, a.mpa_timeout + 5)
    if rep is None:
        res.fail("no MPA Reply (closed: %s)" % c.eof)
    elif rep[0] != REP_KEY or not rep[1] & 0x20:
        res.fail("the Reply does not reject (flags 0x%02x)" % rep[1])
    else:
        res.seen("rejecting MPA Reply, flags 0x%02x" % rep[1])
    took = c.wait_close(a.mpa_timeout + 5)
    if took is None:
        res.fail("the target did not close after its Reply")
    else:
        res.seen("connection closed by the target (%s) after %.2f s" %
                 (c.eof, took))


# No framed octet to a peer that did not enable framing: the target
# rejects the Request instead of entering Full Operation.
@case("mpa-ulpf-missing", "target with ulpf00=Y, a Request without the "
      "ULPF field: rejecting Reply, close")
def c_ulpf_missing(info, res, a):
    ulpf_refused(info, res, a, b"")


# A mode the target cannot send is refused.
@case("mpa-ulpf-marker-mode", "target with ulpf00=Y, a Request whose ULPF "
      "field asks for marker mode: rejecting Reply, close")
def c_ulpf_marker_mode(info, res, a):
    ulpf_refused(info, res, a, ulpf_field(os.urandom(6), mode=1))


# MPA startup errors (RFC 5044 7.1.2; rdmap-digest 2.2 for rev 2).

# MPA-050/062/070/081, SEC-14: a wrong key closes the connection.
@case("mpa-wrong-key", "Request with the Reply key (one octet off): close")
def c_wrong_key(info, res, a):
    c = Conn(info)
    c.send(mpa_frame(REP_KEY, rev=1))
    expect_mpa_close(c, res, a.mpa_timeout + 5)


# MPA-057/062: an unknown revision closes the connection.
@case("mpa-rev9", "Request with revision 9: close")
def c_rev9(info, res, a):
    c = Conn(info)
    c.send(mpa_frame(REQ_KEY, rev=9))
    expect_mpa_close(c, res, a.mpa_timeout + 5)


# MPA-058/074, SEC-13: PD_Length over 512 closes the connection.
@case("mpa-pdlen-513", "Request with PD_Length 513 (and 513 octets): close")
def c_pdlen(info, res, a):
    c = Conn(info)
    try:
        c.send(mpa_frame(REQ_KEY, rev=1, pd=bytes(513)))
    except Closed:
        pass
    expect_mpa_close(c, res, a.mpa_timeout + 5)


# MPA-057: RFC 5044 7.1.2 and Appendix C: revision 0 is an RDMAC peer.
@case("mpa-rev0", "RDMAC Request (revision 0, M=1, C=1), the target "
      "without mpa_rdmac: close, no Reply")
def c_rev0(info, res, a):
    c = Conn(info)
    c.send(mpa_frame(REQ_KEY, rev=0, crc=1, markers=1))
    expect_mpa_close(c, res, a.mpa_timeout + 5)


@case("mpa-rev0-rdmac", "RDMAC Request (revision 0, M=1, C=1), the target "
      "with mpa_rdmac=Y: a revision 1 Reply, then a graceful close "
      "(RFC 5044 C.2.1)")
def c_rev0_rdmac(info, res, a):
    c = Conn(info)
    c.send(mpa_frame(REQ_KEY, rev=0, crc=1, markers=1))
    rep = read_reply(c)
    if rep is None:
        res.fail("no MPA Reply (closed: %s)" % c.eof)
        return
    key, flags, rrev, pd = rep
    res.seen("MPA Reply rev %d flags 0x%02x" % (rrev, flags))
    if key != REP_KEY or rrev != 1:
        res.fail("the Reply is not a revision 1 Reply")
    expect_mpa_close(c, res, 10, no_reply=False)
    if c.eof != "fin":
        res.fail("the target ended the connection with %s, not a graceful "
                 "close" % (c.eof or "nothing"))


# MPA-063/071: iw_cm events carry at most 255 octets of private data (a u8
# length); more is private data the responder cannot accept.
@case("mpa-good-pdata-255", "control: rev 2 Request with 255 octets of "
      "private data (the most iw_cm carries), all of which must reach the "
      "ULP whole; Write, Send, graceful close")
def c_good_pdata_255(info, res, a):
    return good(info, res, a, rev=2, read=False, pd=control_pattern(255))


@case("mpa-pdata-256", "rev 2 Request with 256 octets of private data "
      "(valid MPA, more than iw_cm carries): a Reply with R=1, then the "
      "target closes; nothing reaches the ULP cut short")
def c_pdata_256(info, res, a):
    c = Conn(info)
    c.send(mpa_frame(REQ_KEY, rev=2, crc=1, enhanced=enhanced_field(8, 8),
                     pd=control_pattern(256)))
    rep = read_reply(c)
    if rep is None:
        res.fail("no MPA Reply (closed: %s)" % c.eof)
        return
    key, flags, rrev, pd = rep
    res.seen("MPA Reply rev %d flags 0x%02x, %d octets of private data" %
             (rrev, flags, len(pd)))
    if key != REP_KEY or not flags & 0x20:
        res.fail("the Reply does not reject (R=1)")
    expect_mpa_close(c, res, 10, no_reply=False)


# MPA-062: a badly formatted (cut) Request closes the connection.
@case("mpa-truncated", "12 octets of a Request, then FIN: close")
def c_truncated(info, res, a):
    c = Conn(info)
    c.send(mpa_frame(REQ_KEY, rev=1)[:12])
    c.sock.shutdown(socket.SHUT_WR)
    took = expect_mpa_close(c, res, a.mpa_timeout + 5)
    if took is not None and took > a.mpa_timeout + 2:
        res.fail("the close took %.1f s, longer than the MPA timeout (%d s): "
                 "the FIN was ignored" % (took, a.mpa_timeout))


# MPA-073/075, SEC-13: the startup timeout closes a silent peer.
@case("mpa-silent", "no Request at all: close at the MPA timeout")
def c_silent(info, res, a):
    c = Conn(info)
    expect_mpa_close(c, res, a.mpa_timeout + 5)


# TCP urgent data has no place in an MPA stream (as llp-tcp-urgent in Full
# Operation): a Request whose last octet is urgent must not wait out the
# MPA timeout one octet short.
@case("mpa-request-urgent", "a valid Request sent as TCP urgent data "
      "(MSG_OOB: its last octet is urgent): close well before the MPA "
      "timeout")
def c_request_urgent(info, res, a):
    c = Conn(info)
    c.sock.sendall(mpa_frame(REQ_KEY, rev=2, crc=1,
                             enhanced=enhanced_field(8, 8)), socket.MSG_OOB)
    res.seen("sent a rev 2 Request with MSG_OOB")
    took = expect_mpa_close(c, res, a.mpa_timeout + 5)
    if took is not None and took > a.mpa_timeout - 1:
        res.fail("the close took %.1f s, as long as the MPA timeout (%d s): "
                 "the urgent data went unnoticed" % (took, a.mpa_timeout))


# MPA-075, SEC-13: the timeout covers the whole startup frame.
@case("mpa-slowloris", "a valid Request at one octet per second: close at "
      "the MPA timeout, before it completes")
def c_slowloris(info, res, a):
    c = Conn(info)
    req = mpa_frame(REQ_KEY, rev=1)
    start = time.monotonic()
    for i in range(len(req)):
        try:
            c.send(req[i:i + 1])
        except Closed:
            break
        if c.fill(time.monotonic() + 1.0):
            break
        if c.eof:
            break
    if not c.eof:
        expect_mpa_close(c, res, a.mpa_timeout + 5)
    took = time.monotonic() - start
    if c.buf[:16] == REP_KEY:
        res.fail("the target completed the handshake with a slowloris")
    if not c.eof:
        return
    res.seen("connection closed by the target (%s) after %.2f s, %d octets "
             "sent" % (c.eof, took, min(len(req), int(took) + 1)))
    if took > a.mpa_timeout + 5:
        res.fail("closed only after %.1f s (MPA timeout %d s)" %
                 (took, a.mpa_timeout))


# FPDU errors after a good handshake.

def one_bad(info, res, a, seg, expect, want_d=True, **fk):
    c = handshake(info, res)
    c.send(fpdu(seg, **fk))
    expect_terminate(c, res, expect, a.layout, bad_hdr=seg[:18 if not
                     seg[0] & 0x80 else 14], want_d=want_d)


# MPA-034/044: a bad CRC makes the FPDU invalid before placement.
@case("mpa-bad-crc", "a Write into target with a wrong CRC: Terminate "
      "2/0/02, nothing placed")
def c_bad_crc(info, res, a):
    seg = tagged(OP_WRITE, ival(info, "target_stag"),
                 ival(info, "target_addr") + 4096, bytes(range(64)))
    one_bad(info, res, a, seg, {(2, 0, 2)}, want_d=False, bad_crc=True)


# MPA-080: a marker that disagrees with the framing is an error.
@case("mpa-bad-marker", "the target asks for markers (kiwi: "
      "mpa_markers=Y); the marker at stream offset 0 has FPDUPTR 4, not 0: "
      "Terminate 2/0/03")
def c_bad_marker(info, res, a):
    c = handshake(info, res, marker=4)
    expect_terminate(c, res, {(2, 0, 3)}, a.layout)


# MPA-043/079: framing by ULPDU_Length; the error is reported.
@case("mpa-ulpdu-len-mismatch", "ULPDU_Length 8 more than the Send it "
      "frames (a valid FPDU follows): framing lost, Terminate 2/0/02")
def c_len_mismatch(info, res, a):
    c = handshake(info, res)
    seg = untagged(OP_SEND, QN_SEND, 1, b"0123456789abcdef")
    c.send(fpdu(seg, len_field=len(seg) + 8) +
           fpdu(untagged(OP_SEND, QN_SEND, 2, b"after")))
    expect_terminate(c, res, {(2, 0, 2)}, a.layout)


@case("mpa-ulpdu-too-big", "one FPDU of ULPDU_Length 65535 (> 64768) "
      "holding a Send: Terminate 1/2/05, or an MPA error")
def c_too_big(info, res, a):
    seg = untagged(OP_SEND, QN_SEND, 1, bytes(65535 - 18))
    expect = {(1, 2, 5)} | {(2, 0, e) for e in range(1, 8)}
    one_bad(info, res, a, seg, expect, want_d=False)


@case("mpa-ulpdu-runt", "a 4-octet ULPDU (shorter than any DDP header), "
      "valid CRC: a Terminate, then close")
def c_runt(info, res, a):
    c = handshake(info, res)
    c.send(fpdu(b"\x41\x43\x00\x00"))
    expect = set(CODE_NAMES)
    expect_terminate(c, res, expect, a.layout)


# RDMAP-24: an unassigned opcode is refused.
@case("rdmap-opcode-unknown", "untagged opcode 0xC: Terminate 0/2/06")
def c_opcode(info, res, a):
    one_bad(info, res, a, untagged(0xC, QN_SEND, 1, b"12345678"),
            {(0, 2, 6)}, want_d=False)


# EXT-11..: RFC 7306 Atomic Requests (QN 1, 52 octets) on vt_target's
# atomic region (remote atomic right only). The responder checks, in order:
# AOpCode, 8-octet alignment of the Remote TO (section 8.2: 0/2/07, memory
# not touched), then RFC 5040 remote protection as for a Read Request.
ATOMIC_FETCH_ADD = 0            # CmpSwap is 2; 1 is reserved


def one_atomic(info, res, a, expect, aop=ATOMIC_FETCH_ADD, region="atomic",
               off=0, qn=QN_RREQ, cut=0, extra=b"", pd=b""):
    """One Atomic Request on @region + @off (FetchAdd of 1 unless @aop),
    its header @cut octets short or with @extra octets, over a connection
    made with private data @pd: Terminate in @expect, the region unchanged
    (vt_target's verdict)."""
    hdr = atomic_hdr(aop, 0x7306, ival(info, region + "_stag"),
                     ival(info, region + "_addr") + off, 1, 0, 0, 0)
    seg = untagged(OP_ATOMIC_REQ, qn, 1, hdr[:len(hdr) - cut] + extra)
    c = handshake(info, res, pd=pd)
    c.send(fpdu(seg))
    expect_terminate(c, res, expect, a.layout, bad_hdr=seg[:18])


@case("rfc7306-atomic-good", "control: FetchAdd of 1 on the atomic region's "
      "first word: an Atomic Response on QN 3 with the Request Identifier "
      "and the original value; then close")
def c_atomic_good(info, res, a):
    c = handshake(info, res)
    pat = 0x1717171717171717        # vt_target's PAT_ATOMIC
    hdr = atomic_hdr(ATOMIC_FETCH_ADD, 0x7306, ival(info, "atomic_stag"),
                     ival(info, "atomic_addr"), 1, 0, 0, 0)
    c.send(fpdu(untagged(OP_ATOMIC_REQ, QN_RREQ, 1, hdr)))
    t, resp = collect(c, res, set(), a.layout, want_rresp=1)
    if t is not None:
        res.fail("unexpected Terminate")
    elif len(resp) != 1:
        res.fail("no Atomic Response (connection %s)" % (c.eof or "open"))
    else:
        u = resp[0]
        qn, msn, mo = struct.unpack(">III", u[6:18])
        res.seen("Atomic Response QN %d MSN %d, %d octets" %
                 (qn, msn, len(u) - 18))
        if (qn, msn, mo, len(u)) != (QN_ARESP, 1, 0, 30) or \
                not u[0] & 0x40:
            res.fail("the Atomic Response is not one 12-octet message on "
                     "QN 3 with MSN 1")
        elif struct.unpack(">IQ", u[18:30]) != (0x7306, pat):
            res.fail("the Atomic Response returns %s, want Request "
                     "Identifier 0x7306 and 0x%x" % (u[18:30].hex(), pat))
    c.sock.shutdown(socket.SHUT_WR)
    expect_quiet_close(c, res, a, "our FIN")


# RFC 7306 sections 5.1.1 and 5.1.2: the masked forms, which kiwi's own
# requester never sends (libibverbs has none). Each Request waits for its
# Response (one outstanding, well within the IRD); a FetchAdd of 0 reads
# the word back, and a last CmpSwap puts vt_target's pattern back, so the
# memory verdict holds.
ATOMIC_CMP_SWAP = 2
ALL_ONES = (1 << 64) - 1
PAT_ATOMIC = 0x1717171717171717         # vt_target's PAT_ATOMIC


def atomic_rounds(info, res, a, ops):
    """Atomic Requests @ops, (aop, data, mask, cmp, cmp_mask, want), one
    at a time on the atomic region's first word: each answered on QN 3
    with its Request Identifier and the original value @want; then a
    quiet close."""
    c = handshake(info, res)
    for msn, (aop, data, mask, cmp_, cmask, want) in enumerate(ops, 1):
        rid = 0x73060 + msn
        hdr = atomic_hdr(aop, rid, ival(info, "atomic_stag"),
                         ival(info, "atomic_addr"), data, mask, cmp_, cmask)
        c.send(fpdu(untagged(OP_ATOMIC_REQ, QN_RREQ, msn, hdr)))
        t, resp = collect(c, res, set(), a.layout, want_rresp=1)
        if t is not None or len(resp) != 1:
            res.fail("request %d: no Atomic Response (%s)" %
                     (msn, "Terminate" if t else c.eof or "open"))
            return
        u = resp[0]
        qn, rmsn, mo = struct.unpack(">III", u[6:18])
        got = struct.unpack(">IQ", u[18:30])
        res.seen("request %d (AOpCode %d): Atomic Response QN %d MSN %d, "
                 "original 0x%016x" % (msn, aop, qn, rmsn, got[1]))
        if (qn, rmsn, mo, len(u)) != (QN_ARESP, msn, 0, 30):
            res.fail("request %d: the Response is not one 12-octet "
                     "message on QN 3 with MSN %d" % (msn, msn))
        elif got != (rid, want):
            res.fail("request %d: Response 0x%x 0x%016x, want 0x%x 0x%016x"
                     % (msn, got[0], got[1], rid, want))
    c.sock.shutdown(socket.SHUT_WR)
    expect_quiet_close(c, res, a, "our FIN")


@case("rfc7306-atomic-masked-add", "masked FetchAdd with an Add Mask "
      "splitting the word into 8-bit fields: each field adds on its own, "
      "its carry dropped (read back by a FetchAdd of 0); a CmpSwap puts "
      "the pattern back")
def c_atomic_masked_add(info, res, a):
    add, mask = 0x01FF01FF01FF01FF, 0x8080808080808080
    # 0x17 + 0x01 = 0x18; 0x17 + 0xFF = 0x116, the carry out of the field
    # dropped: 0x16. One 64-bit add would give 0x1916191619161916.
    result = 0x1816181618161816
    atomic_rounds(info, res, a, [
        (ATOMIC_FETCH_ADD, add, mask, 0, ALL_ONES, PAT_ATOMIC),
        (ATOMIC_FETCH_ADD, 0, 0, 0, ALL_ONES, result),
        (ATOMIC_CMP_SWAP, PAT_ATOMIC, ALL_ONES, result, ALL_ONES, result),
    ])


@case("rfc7306-atomic-masked-cmpswap", "masked CmpSwap: compared under the "
      "Compare Mask only, the Swap Mask's bits swapped in; one whose masked "
      "compare fails changes nothing (both read back); a CmpSwap puts the "
      "pattern back")
def c_atomic_masked_cmpswap(info, res, a):
    result = 0x17171717AAAAAAAA
    atomic_rounds(info, res, a, [
        # Only the high 16 bits are compared (they match), only the low
        # 32 bits swapped.
        (ATOMIC_CMP_SWAP, 0xAAAAAAAAAAAAAAAA, 0x00000000FFFFFFFF,
         0x1717FFFFFFFFFFFF, 0xFFFF000000000000, PAT_ATOMIC),
        (ATOMIC_FETCH_ADD, 0, 0, 0, ALL_ONES, result),
        # The top octet is 0x17, not 0x28: nothing swapped.
        (ATOMIC_CMP_SWAP, 0, ALL_ONES, 0x2800000000000000,
         0xFF00000000000000, result),
        (ATOMIC_FETCH_ADD, 0, 0, 0, ALL_ONES, result),
        (ATOMIC_CMP_SWAP, PAT_ATOMIC, ALL_ONES, result, ALL_ONES, result),
    ])


# EXT-06: an AOpCode that is neither FetchAdd (0) nor CmpSwap (2).
@case("rfc7306-atomic-aopcode", "Atomic Request with the reserved AOpCode "
      "1: Terminate 0/2/06, nothing changed")
def c_atomic_aop(info, res, a):
    one_atomic(info, res, a, {(0, 2, 6)}, aop=1)


@case("rfc7306-atomic-unaligned", "FetchAdd on a Remote TO 4 octets past "
      "an 8-octet boundary: Terminate 0/2/07, nothing changed")
def c_atomic_unaligned(info, res, a):
    one_atomic(info, res, a, {(0, 2, 7)}, off=4)


@case("rfc7306-atomic-short", "Atomic Request header of 51 octets: "
      "Terminate 0/2/ff, nothing changed")
def c_atomic_short(info, res, a):
    one_atomic(info, res, a, {(0, 2, 0xff)}, cut=1)


@case("rfc7306-atomic-long", "Atomic Request header of 53 octets: "
      "Terminate 1/2/05, nothing changed")
def c_atomic_long(info, res, a):
    one_atomic(info, res, a, {(1, 2, 5)}, extra=b"x")


@case("rfc7306-atomic-qn", "Atomic Request on QN 0: Terminate 1/2/01")
def c_atomic_qn(info, res, a):
    one_atomic(info, res, a, {(1, 2, 1)}, qn=QN_SEND)


@case("rfc7306-atomic-no-right", "FetchAdd on target (remote read and "
      "write, no remote atomic right), 8-octet aligned outside the control "
      "window: Terminate 0/1/02, nothing changed")
def c_atomic_no_right(info, res, a):
    one_atomic(info, res, a, {(0, 1, 2)}, region="target", off=133)


# RDMAP-25: kiwi lets a QP with remote read rights (what iw_cm grants)
# serve atomics; one with remote write only may not.
@case("rfc7306-atomic-qp-no-right", "FetchAdd on the atomic region over a "
      "QP created with remote write only (vt:access=w): Terminate 0/1/02, "
      "nothing changed")
def c_atomic_qp_no_right(info, res, a):
    one_atomic(info, res, a, {(0, 1, 2)}, pd=b"vt:access=w")


@case("rfc7306-atomic-bounds", "FetchAdd on the 8 octets right after the "
      "atomic region: Terminate 0/1/01, nothing changed")
def c_atomic_bounds(info, res, a):
    one_atomic(info, res, a, {(0, 1, 1)}, off=ival(info, "atomic_len"))


# RDMAP-04: a wrong RDMAP version is Terminate 0/2/05.
@case("rdmap-version", "Send with RDMAP version 2: Terminate 0/2/05")
def c_rv(info, res, a):
    one_bad(info, res, a, untagged(OP_SEND, QN_SEND, 1, b"12345678", rv=2),
            {(0, 2, 5)}, want_d=False)


# SEC-10: a wrong DDP version on a tagged segment.
@case("ddp-version-tagged", "Write with DDP version 2: Terminate 1/1/04")
def c_dv_t(info, res, a):
    seg = tagged(OP_WRITE, ival(info, "target_stag"),
                 ival(info, "target_addr") + 4096, b"x" * 16, dv=2)
    one_bad(info, res, a, seg, {(1, 1, 4)}, want_d=False)


# SEC-10: a wrong DDP version on an untagged segment.
@case("ddp-version-untagged", "Send with DDP version 2: Terminate 1/2/06")
def c_dv_u(info, res, a):
    one_bad(info, res, a, untagged(OP_SEND, QN_SEND, 1, b"12345678", dv=2),
            {(1, 2, 6)}, want_d=False)


def unknown_stag(info):
    known = {ival(info, k) for k in info if k.endswith("_stag")}
    s = 0x00DEAD00 | ((ival(info, "target_stag") + 0x55) & 0xFF)
    while s in known:
        s += 0x100
    return s


# SEC-01, DDP-025/068: an unknown STag places nothing.
@case("ddp-stag-invalid", "Write to an STag never registered: "
      "Terminate 1/1/00")
def c_stag_invalid(info, res, a):
    seg = tagged(OP_WRITE, unknown_stag(info), ival(info, "target_addr"),
                 b"x" * 16)
    one_bad(info, res, a, seg, {(1, 1, 0)})


@case("ddp-after-error", "Write to an unknown STag, then in the same "
      "flight a valid Write into target and a valid Send: Terminate 1/1/00, "
      "the later segments dropped (SEC-09, DDP-071)")
def c_after_error(info, res, a):
    c = handshake(info, res)
    bad = tagged(OP_WRITE, unknown_stag(info), ival(info, "target_addr"),
                 b"x" * 16)
    late = tagged(OP_WRITE, ival(info, "target_stag"),
                  ival(info, "target_addr") + ival(info, "target_len") // 2,
                  b"late write" * 4)
    c.send(fpdu(bad) + fpdu(late) +
           fpdu(untagged(OP_SEND, QN_SEND, 1, b"late send")))
    expect_terminate(c, res, {(1, 1, 0)}, a.layout, bad_hdr=bad[:14])


# SEC-01: an STag whose key octet differs is invalid.
@case("ddp-stag-wrong-key", "Write to target's STag index with another "
      "key octet: Terminate 1/1/00")
def c_stag_key(info, res, a):
    seg = tagged(OP_WRITE, ival(info, "target_stag") ^ 0x80,
                 ival(info, "target_addr") + 4096, b"x" * 16)
    one_bad(info, res, a, seg, {(1, 1, 0)})


# SEC-02, DDP-068: an STag of another PD places nothing.
@case("ddp-stag-other-pd", "Write to a valid STag of another PD: "
      "Terminate 1/1/02")
def c_stag_pd(info, res, a):
    seg = tagged(OP_WRITE, ival(info, "otherpd_stag"),
                 ival(info, "otherpd_addr"), b"x" * 16)
    one_bad(info, res, a, seg, {(1, 1, 2)})


# SEC-04, DDP-068/069: bounds exact to the octet; nothing placed.
@case("ddp-to-beyond-end", "Write whose last 8 octets leave target: "
      "Terminate 1/1/01, nothing placed")
def c_to_end(info, res, a):
    seg = tagged(OP_WRITE, ival(info, "target_stag"),
                 ival(info, "target_addr") + ival(info, "target_len") - 8,
                 b"x" * 16)
    one_bad(info, res, a, seg, {(1, 1, 1)})


# SEC-04, DDP-068: bounds exact to the octet.
@case("ddp-to-below-base", "Write starting one octet before target: "
      "Terminate 1/1/01")
def c_to_below(info, res, a):
    seg = tagged(OP_WRITE, ival(info, "target_stag"),
                 ival(info, "target_addr") - 1, b"x" * 16)
    one_bad(info, res, a, seg, {(1, 1, 1)})


# SEC-05, DDP-068: a TO + length beyond 2^64 places nothing.
@case("ddp-to-wrap", "Write at TO 2^64-8, 16 octets (TO + len wraps): "
      "Terminate 1/1/03 (or 1/1/01: TO is out of range too)")
def c_to_wrap(info, res, a):
    seg = tagged(OP_WRITE, ival(info, "target_stag"), (1 << 64) - 8,
                 b"x" * 16)
    one_bad(info, res, a, seg, {(1, 1, 3), (1, 1, 1)})


# SEC-08, DDP-066: untagged validation, invalid QN.
@case("ddp-wrong-qn", "Send on QN 5: Terminate 1/2/01")
def c_qn(info, res, a):
    one_bad(info, res, a, untagged(OP_SEND, 5, 1, b"12345678"), {(1, 2, 1)})


# SEC-08, DDP-066: untagged validation, MSN range.
@case("ddp-msn-out-of-window", "Send with MSN 1001 as the first message: "
      "Terminate 1/2/03")
def c_msn(info, res, a):
    one_bad(info, res, a, untagged(OP_SEND, QN_SEND, 1001, b"12345678"),
            {(1, 2, 3)})


# SEC-08, DDP-066: untagged validation, no buffer.
@case("ddp-send-no-recv", "Sends that use up every posted receive, then "
      "one more: Terminate 1/2/02")
def c_no_recv(info, res, a):
    one_too_many(info, res, a, OP_SEND, b"one-too-many")


def one_too_many(info, res, a, op, payload):
    """Sends that use up every posted receive, then one more message of
    opcode @op on QN 0: Terminate 1/2/02."""
    c = handshake(info, res)
    n = ival(info, "recv_count")
    for i in range(n):
        c.send(fpdu(untagged(OP_SEND, QN_SEND, 1 + i, b"fill%04d" % i)))
    seg = untagged(op, QN_SEND, 1 + n, payload)
    c.send(fpdu(seg))
    expect_terminate(c, res, {(1, 2, 2)}, a.layout, bad_hdr=seg[:18])


# SEC-08, DDP-066, RDMAP-17: a Send longer than its buffer.
@case("ddp-send-too-long", "Send longer than the receive buffer: "
      "Terminate 1/2/05, nothing beyond the buffer")
def c_send_long(info, res, a):
    n = ival(info, "recv_len") + 36
    one_bad(info, res, a, untagged(OP_SEND, QN_SEND, 1, b"L" * n),
            {(1, 2, 5)})


# EXT-10: RFC 7306 Immediate Data carries exactly 8 octets on QN 0 and
# consumes a receive; the value must fit the verbs' 32 bits (octets 4-7
# zero, Documentation/rfc7306.md).
IMM_OK = b"\xde\xad\xbe\xef\x00\x00\x00\x00"


@case("rfc7306-imm-long", "Immediate Data with 9 octets: Terminate 1/2/05")
def c_imm_long(info, res, a):
    one_bad(info, res, a, untagged(OP_IMM, QN_SEND, 1, IMM_OK + b"x"),
            {(1, 2, 5)})


@case("rfc7306-imm-short", "Immediate Data with SE, 7 octets: "
      "Terminate 0/2/ff")
def c_imm_short(info, res, a):
    one_bad(info, res, a, untagged(OP_IMM_SE, QN_SEND, 1, IMM_OK[:7]),
            {(0, 2, 0xff)})


@case("rfc7306-imm-qn", "Immediate Data on QN 1: Terminate 1/2/01")
def c_imm_qn(info, res, a):
    one_bad(info, res, a, untagged(OP_IMM, QN_RREQ, 1, IMM_OK), {(1, 2, 1)})


@case("rfc7306-imm-wide", "Immediate Data whose octets 4-7 are not zero "
      "(no 32-bit verbs value): Terminate 0/2/ff")
def c_imm_wide(info, res, a):
    one_bad(info, res, a, untagged(OP_IMM, QN_SEND, 1, b"\x01" * 8),
            {(0, 2, 0xff)})


@case("rfc7306-imm-no-recv", "Sends that use up every posted receive, "
      "then Immediate Data: Terminate 1/2/02")
def c_imm_no_recv(info, res, a):
    one_too_many(info, res, a, OP_IMM, IMM_OK)


# DDP-017/052: Immediate Data takes the receive WR of the next message; a
# Send under way on that MSN is not finished by it.
@case("rfc7306-imm-mid-send", "the first 16 octets of a Send (L=0), then "
      "Immediate Data with the same MSN: Terminate 1/2/04, no receive "
      "completes")
def c_imm_mid_send(info, res, a):
    c = handshake(info, res)
    first = untagged(OP_SEND, QN_SEND, 1, b"A" * 16, last=0)
    imm = untagged(OP_IMM, QN_SEND, 1, IMM_OK)
    c.send(fpdu(first) + fpdu(imm))
    expect_terminate(c, res, {(1, 2, 4)}, a.layout, bad_hdr=imm[:18])


# A Send in the middle of its segments: the target's QP shows the MO its
# next segment must continue at (kiwi's rx_mo), 0 again once the last one
# arrived and the MSN moved on (DDP-017: one message, one MSN).
@case("dd-mid-send", "a Send in three 16-octet segments: after two (L=0) "
      "-dd shows MO 32 and MSN 1, after the last MO 0 and MSN 2 (with "
      "--dd), graceful close")
def c_dd_mid_send(info, res, a):
    c = handshake(info, res)
    part = [untagged(OP_SEND, QN_SEND, 1, bytes([0x41 + i]) * 16, mo=16 * i,
                     last=int(i == 2)) for i in range(3)]
    c.send(fpdu(part[0]) + fpdu(part[1]))
    q = dd_wait(a, c, res, dict(DD_REV2, drv_rx_mo=32, drv_msn_rx_send=1))
    if q and not (q.get("drv_ird") == c.ird and
                  1 <= q.get("drv_ord", 0) <= 8 and
                  q.get("drv_laddr") == "%s:%s" % (info["addr"], info["port"])
                  and 0 < q.get("drv_mulpdu", 0) <= 65535):
        res.fail("-dd: ird %s (Reply: %s) ord %s (our IRD 8) laddr %s "
                 "mulpdu %s" % (q.get("drv_ird"), c.ird, q.get("drv_ord"),
                                q.get("drv_laddr"), q.get("drv_mulpdu")))
    c.send(fpdu(part[2]))
    dd_wait(a, c, res, dict(DD_REV2, drv_rx_mo=0, drv_msn_rx_send=2))
    c.sock.shutdown(socket.SHUT_WR)
    expect_quiet_close(c, res, a, "our FIN")


def one_rreq(info, res, a, src_stag, src_to, size, expect):
    seg = untagged(OP_RREQ, QN_RREQ, 1,
                   rreq_hdr(0x11223344, 0, size, src_stag, src_to))
    c = handshake(info, res)
    c.send(fpdu(seg))
    t = expect_terminate(c, res, expect, a.layout, bad_hdr=seg[:18])
    if t is not None and t.code in expect and t.rdma_hdr and \
            t.rdma_hdr != seg[18:46]:
        res.fail("copied Read Request header differs from the one sent")
    if t is not None and t.code in expect and not t.rdma_hdr:
        res.fail("the Terminate carries no copy of the Read Request header "
                 "(RFC 5040 4.8: R for a Read Request)")


def wait_send(c, res, prefix, seconds=10):
    """The payload of the next Send from the target that starts with
    @prefix, or None (other FPDUs are noted and skipped)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            u = c.read_fpdu(deadline)
        except Closed as e:
            res.fail(str(e))
            return None
        if u is None:
            res.fail("no Send %r from the target within %d s" %
                     (prefix, seconds))
            return None
        if len(u) >= 18 and not u[0] & 0x80 and u[1] & 0xF == OP_SEND and \
                u[18:].startswith(prefix):
            return u[18:]
        res.seen("FPDU ctrl %02x%02x len %d" % (u[0], u[1], len(u)))


# RDMAP-25 (RFC 5040 8.1.1 item 6): once a memory window is invalidated, a
# peer can no longer change the memory through its STag.
@case("rdmap-mw-invalidated", "Write through a type 2 memory window's STag "
      "after the target bound and invalidated it (cmd:mw): Terminate "
      "1/1/00, window memory unchanged")
def c_mw_invalidated(info, res, a):
    if "mw_addr" not in info:
        res.fail("the target has no memory window (ibv_alloc_mw failed)")
        return
    c = handshake(info, res)
    cmd(c, "mw")
    got = wait_send(c, res, b"mw:")
    if got is None:
        return
    stag = int(got[3:11], 16)
    res.seen("the window's STag was 0x%08x" % stag)
    seg = tagged(OP_WRITE, stag, ival(info, "mw_addr"), b"x" * 16)
    c.send(fpdu(seg))
    expect_terminate(c, res, {(1, 1, 0)}, a.layout, bad_hdr=seg[:18])


# SEC-07, RDMAP-24: a Read of an STag without remote read.
@case("rdmap-read-noread", "Read Request on an MR without remote read: "
      "Terminate 0/1/02")
def c_read_noread(info, res, a):
    one_rreq(info, res, a, ival(info, "noread_stag"),
             ival(info, "noread_addr"), 16, {(0, 1, 2)})


# RDMAP-24: Read Request source check a (invalid STag).
@case("rdmap-read-stag-invalid", "Read Request from an unknown STag: "
      "Terminate 0/1/00")
def c_read_stag(info, res, a):
    one_rreq(info, res, a, unknown_stag(info), ival(info, "target_addr"), 16,
             {(0, 1, 0)})


# RDMAP-24: Read Request source checks (bounds).
@case("rdmap-read-bounds", "Read Request 8 octets past the end of target: "
      "Terminate 0/1/01")
def c_read_bounds(info, res, a):
    one_rreq(info, res, a, ival(info, "target_stag"),
             ival(info, "target_addr") + ival(info, "target_len") - 8, 16,
             {(0, 1, 1)})


# RDMAP-21: a peer exceeding the IRD is terminated.
@case("rdmap-read-beyond-ird", "IRD + 2 Read Requests of 32 KiB while "
      "not reading: Terminate 0/2/07")
def c_ird(info, res, a):
    c = handshake(info, res, rcvbuf=4096, ird=1, ord_=1)
    ird = c.ird if c.ird is not None else ival(info, "ird")
    size = 32 * 1024
    data = b""
    for i in range(ird + 2):
        data += fpdu(untagged(OP_RREQ, QN_RREQ, 1 + i, rreq_hdr(
            0x11223344, i * size, size, ival(info, "target_stag"),
            ival(info, "target_addr"))))
    c.send(data)
    time.sleep(1)
    expect_terminate(c, res, {(0, 2, 7)}, a.layout, want_d=False,
                     seconds=20)


# EXT-05 (RFC 7306 section 5.2): Atomic Requests share the IRD with Read
# Requests; one beyond it is the peer's error, as a Read would be. The Read
# Requests stall TX (the peer does not read), so none of them leaves the
# IRD; the atomics are CmpSwaps whose compare fails, so an atomic that did
# run would not change the region either.
@case("rfc7306-atomic-beyond-ird", "IRD Read Requests of 32 KiB while "
      "not reading, then 2 failing CmpSwaps: Terminate 0/2/07")
def c_atomic_ird(info, res, a):
    c = handshake(info, res, rcvbuf=4096, ird=1, ord_=1)
    ird = c.ird if c.ird is not None else ival(info, "ird")
    size = 32 * 1024
    data = b""
    for i in range(ird):
        data += fpdu(untagged(OP_RREQ, QN_RREQ, 1 + i, rreq_hdr(
            0x11223344, i * size, size, ival(info, "target_stag"),
            ival(info, "target_addr"))))
    for i in range(2):
        hdr = atomic_hdr(2, 0x7306 + i, ival(info, "atomic_stag"),
                         ival(info, "atomic_addr"), 0, (1 << 64) - 1, 0,
                         (1 << 64) - 1)
        data += fpdu(untagged(OP_ATOMIC_REQ, QN_RREQ, 1 + ird + i, hdr))
    c.send(data)
    time.sleep(1)
    expect_terminate(c, res, {(0, 2, 7)}, a.layout, want_d=False,
                     seconds=20)


# A Terminate from the peer (RFC 5040 4.8, no headers copied).

def peer_terminate(info, res, a, code):
    c = handshake(info, res)
    layer, etype, ecode = code
    body = bytes([layer << 4 | etype, ecode, 0, 0])
    c.send(fpdu(untagged(OP_TERM, QN_TERM, 1, body)))
    res.seen("sent Terminate %s" % code_str(code))
    expect_quiet_close(c, res, a, "our Terminate")


@case("term-from-peer-rdmap", "the peer sends a Terminate 0/0/00 (RDMAP "
      "catastrophic): the target closes, sending none back")
def c_term_rdmap(info, res, a):
    peer_terminate(info, res, a, (0, 0, 0x00))


@case("term-from-peer-ddp", "the peer sends a Terminate 1/2/01 (DDP invalid "
      "QN): the target closes, sending none back")
def c_term_ddp(info, res, a):
    peer_terminate(info, res, a, (1, 2, 0x01))


@case("term-from-peer-llp", "the peer sends a Terminate 2/0/02 (MPA CRC "
      "error): the target closes, sending none back")
def c_term_llp(info, res, a):
    peer_terminate(info, res, a, (2, 0, 0x02))


# RFC 6581 section 9: an initiator that cannot go on (IRD, no RTR type it
# can use) sends an MPA-layer Terminate as its first FPDU, in place of the
# RTR. The responder receives it as a Terminate and answers nothing.
@case("term-in-place-of-rtr", "rev 2 peer-to-peer handshake (Write RTR "
      "offered); the first FPDU is a Terminate 2/0/06 (insufficient IRD) "
      "instead of the RTR: the target takes it as the peer's Terminate "
      "(term_rcvd_llp) and closes, sending no Terminate back")
def c_term_rtr(info, res, a):
    c = handshake(info, res, rtr={"write_rtr": 1})
    body = bytes([2 << 4 | 0, 0x06, 0, 0])
    c.send(fpdu(untagged(OP_TERM, QN_TERM, 1, body)))
    res.seen("sent Terminate %s as the first FPDU" % code_str((2, 0, 6)))
    expect_quiet_close(c, res, a, "our Terminate")


# TCP urgent data is no part of an MPA stream (RFC 5044 frames a plain
# byte stream), and a receiver reading with tcp_read_sock() cannot get
# past it: it must end the stream, not stall.
@case("llp-tcp-urgent", "a Write into target sent as TCP urgent data "
      "(MSG_OOB: its last octet is urgent), then a Send: Terminate 2/0/05 "
      "(LLP local catastrophic) within seconds, nothing placed")
def c_tcp_urgent(info, res, a):
    c = handshake(info, res)
    seg = tagged(OP_WRITE, ival(info, "target_stag"),
                 ival(info, "target_addr") + 4096, b"urgent" * 8)
    start = time.monotonic()
    c.sock.sendall(fpdu(seg), socket.MSG_OOB)
    c.send(fpdu(untagged(OP_SEND, QN_SEND, 1, b"after the urgent data")))
    res.seen("sent a Write with MSG_OOB, then a Send")
    if expect_terminate(c, res, {(2, 0, 5)}, a.layout) is not None:
        res.seen("Terminate and close %.2f s after the urgent data" %
                 (time.monotonic() - start))


# Incomplete messages (RFC 5041 5.3/5.4: the sink delivers a message only
# when all of it was placed; on an in-order LLP each segment continues the
# message where the last one ended): DDP-017/052/066, RDMAP-16.

# DDP-017/052, SEC-08: only a whole Send is delivered.
@case("ddp-send-mo-only-last", "a Send whose only segment has MO 16 and "
      "L=1 (its first 16 octets never sent): Terminate 1/2/04, no receive "
      "completes")
def c_send_only_last(info, res, a):
    seg = untagged(OP_SEND, QN_SEND, 1, b"tail-only", mo=16)
    one_bad(info, res, a, seg, {(1, 2, 4)})


# DDP-017/052, SEC-08: a Send with a hole is not delivered.
@case("ddp-send-mo-gap", "a Send of two segments with a gap (MO 0 16 "
      "octets, then MO 32 L=1): Terminate 1/2/04, no receive completes")
def c_send_gap(info, res, a):
    c = handshake(info, res)
    first = untagged(OP_SEND, QN_SEND, 1, b"A" * 16, last=0)
    second = untagged(OP_SEND, QN_SEND, 1, b"B" * 16, mo=32)
    c.send(fpdu(first) + fpdu(second))
    expect_terminate(c, res, {(1, 2, 4)}, a.layout, bad_hdr=second[:18])


# The peer's made-up Data Source for the Reads vt_target issues.
READ_SRC_STAG, READ_SRC_TO = 0x1234ABCD, 0x5000


def read_for_target(c, res, a, size, msn, seconds=10):
    """Ask vt_target (Send "vt:read") to Read @size octets from us; wait
    for its Read Request: (sink STag, sink TO, size) or None."""
    c.send(fpdu(untagged(OP_SEND, QN_SEND, msn, b"vt:read %x %x %d" %
                         (READ_SRC_STAG, READ_SRC_TO, size))))
    deadline = time.monotonic() + seconds
    while True:
        u = c.read_fpdu(deadline)
        if u is None:
            res.fail("no Read Request from the target (connection %s)" %
                     (c.eof or "open"))
            return None
        if not u[0] & 0x80 and u[1] & 0xF == OP_RREQ and len(u) >= 46:
            sstag, sto, n, src, srcto = struct.unpack(">IQIIQ", u[18:46])
            res.seen("Read Request: sink 0x%08x/0x%x, %d octets from "
                     "0x%08x/0x%x" % (sstag, sto, n, src, srcto))
            if (n, src, srcto) != (size, READ_SRC_STAG, READ_SRC_TO):
                res.fail("the Read Request does not ask for what vt:read "
                         "named")
            return sstag, sto, n
        res.seen("FPDU ctrl %02x%02x len %d" % (u[0], u[1], len(u)))


def bad_rresp(info, res, a, size, segs):
    """Answer a Read of @size with the segments @segs gives (a function of
    sink STag and TO returning ULPDUs); the last one's header is the bad
    one: Terminate 1/1/01."""
    c = handshake(info, res)
    r = read_for_target(c, res, a, size, 1)
    if r is None:
        return
    ulpdus = segs(r[0], r[1])
    c.send(b"".join(fpdu(u) for u in ulpdus))
    expect_terminate(c, res, {(1, 1, 1)}, a.layout, bad_hdr=ulpdus[-1][:14])


# RDMAP-20 (a WR completes only after DDP did): a Response answers only
# a Request that went out. The zero-length Read that follows kiwi's first
# Write with Immediate Data (Documentation/rfc7306.md) has its place in
# the ORD from the moment the WR is taken, but goes out only after the
# whole Write.
@case("rdmap-rresp-before-rreq", "the target's 8 MiB RDMA Write with "
      "Immediate Data stalls on a closed window; a zero-length L=1 Read "
      "Response arrives before any Read Request: Terminate 0/2/06, the "
      "Write does not complete successfully")
def c_rresp_before_rreq(info, res, a):
    c = handshake(info, res, rcvbuf=4096)
    cmd(c, "writeimm")
    time.sleep(1)
    u = tagged(OP_RRESP, 0, 0)
    c.send(fpdu(u))
    # Read on at the speed a 64 KiB window allows (a window of 4096
    # octets against the loopback's MSS waits for TCP's persist timer).
    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    expect_terminate(c, res, {(0, 2, 0x06)}, a.layout, bad_hdr=u[:14],
                     seconds=60, count_writes=True)


# RDMAP-13/16: a Read completes only when its sink is filled.
@case("rdmap-rresp-empty-last", "a zero-length L=1 Read Response to a "
      "64-octet Read: Terminate 1/1/01, the Read does not complete")
def c_rresp_empty(info, res, a):
    bad_rresp(info, res, a, 64,
              lambda stag, to: [tagged(OP_RRESP, stag, to)])


# RDMAP-13/16: a short Read Response does not complete the Read.
@case("rdmap-rresp-short", "a 32-octet L=1 Read Response to a 64-octet "
      "Read: Terminate 1/1/01, the Read does not complete")
def c_rresp_short(info, res, a):
    bad_rresp(info, res, a, 64,
              lambda stag, to: [tagged(OP_RRESP, stag, to, b"s" * 32)])


# RDMAP-16, DDP-052: a Read Response with a hole is refused.
@case("rdmap-rresp-gap", "a Read Response of 16 octets at the sink TO, "
      "then 16 at TO+32 with L=1, to a 48-octet Read: Terminate 1/1/01")
def c_rresp_gap(info, res, a):
    bad_rresp(info, res, a, 48,
              lambda stag, to: [tagged(OP_RRESP, stag, to, b"g" * 16,
                                       last=0),
                                tagged(OP_RRESP, stag, to + 32, b"h" * 16)])


# RDMAP-13/16: a Read Response in two segments completes the Read.
@case("mpa-good-rresp", "control: rev 2, Write, Send, Read, then a Read "
      "issued by the target answered in two Response segments: it "
      "completes")
def c_good_rresp(info, res, a):
    return good(info, res, a, rev=2, read=True, rresp=True)


# The QP's own rights (RFC 5040 8.1.1; qp_access_flags as the consumer
# set them): vt_target creates the QP with exactly the rights asked for.

# RDMAP-25: the QP's access rights are enforced (no remote write).
@case("rdmap-qp-no-remote-write", "Write into target on a QP created "
      "without remote write (remote read only): Terminate 0/1/02, nothing "
      "placed")
def c_qp_no_write(info, res, a):
    c = handshake(info, res, pd=b"vt:access=r")
    seg = tagged(OP_WRITE, ival(info, "target_stag"),
                 ival(info, "target_addr") + 4096, b"w" * 16)
    c.send(fpdu(seg))
    expect_terminate(c, res, {(0, 1, 2)}, a.layout, bad_hdr=seg[:14])


# RDMAP-25: the QP's access rights are enforced (no remote read).
@case("rdmap-qp-no-remote-read", "Read Request of target on a QP created "
      "without remote read (remote write only): Terminate 0/1/02, no Read "
      "Response")
def c_qp_no_read(info, res, a):
    c = handshake(info, res, pd=b"vt:access=w")
    seg = untagged(OP_RREQ, QN_RREQ, 1,
                   rreq_hdr(0x11223344, 0, 16, ival(info, "target_stag"),
                            ival(info, "target_addr")))
    c.send(fpdu(seg))
    t = expect_terminate(c, res, {(0, 1, 2)}, a.layout, bad_hdr=seg[:18])
    if t is not None and t.code == (0, 1, 2) and t.rdma_hdr and \
            t.rdma_hdr != seg[18:46]:
        res.fail("copied Read Request header differs from the one sent")


@case("mpa-good-qp-access", "control: a QP created with exactly remote "
      "read and write (vt:access=rw): Write, Send, Read succeed")
def c_good_qp_access(info, res, a):
    return good(info, res, a, rev=2, read=True, pd=b"vt:access=rw")


# --- teardown: the target's side ends in bounded time ---------------------------

TCP_ESTABLISHED, TCP_CLOSE, TCP_CLOSE_WAIT = 1, 7, 8
# The target closes a graceful close it cannot finish within drain_timeout
# (kiwi's default 3 s); allow for a slow guest.
TD_BOUND = 8


def tcp_state(c):
    return c.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0]


def cmd(c, text):
    """A Send that makes vt_target act (see vt_target.c)."""
    c.send(fpdu(untagged(OP_SEND, QN_SEND, c.msn[QN_SEND],
                         b"cmd:" + text.encode())))
    c.msn[QN_SEND] += 1


def wait_state_change(c, res, seconds):
    """Without reading: the seconds until the target sent FIN or RST."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        st = tcp_state(c)
        if st in (TCP_CLOSE, TCP_CLOSE_WAIT):
            took = time.monotonic() - start
            res.seen("the target %s the connection after %.2f s" %
                     ("reset" if st == TCP_CLOSE else "closed", took))
            return took
        time.sleep(0.05)
    return None


def disconnect_bounded(c, res, read):
    """The target disconnects; its side must end within TD_BOUND."""
    cmd(c, "disconnect")
    expect_end_within(c, res, TD_BOUND, read)
    abort(c)


def expect_end_within(c, res, seconds, read):
    if read:
        took = c.wait_close(seconds + 5)
        if took is not None:
            res.seen("connection closed by the target (%s) after %.2f s" %
                     (c.eof, took))
    else:
        took = wait_state_change(c, res, seconds + 5)
    if took is None or took > seconds:
        res.fail("the target's side did not end within %d s (%s)" %
                 (seconds, "after %.1f s" % took if took else "never"))


def hold_without_fin(c, seconds):
    """Read and drop what arrives, and keep our side open, @seconds."""
    deadline = time.monotonic() + seconds
    while c.fill(deadline):
        c.buf = b""
    time.sleep(max(0, deadline - time.monotonic()))


def abort(c):
    """Close with a reset: nothing of ours lingers."""
    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                      struct.pack("ii", 1, 0))
    c.close()


@case("td-read-unanswered", "a Read from the target is never answered; the "
      "target disconnects: its side ends within the drain bound",
      group="teardown")
def c_td_read(info, res, a):
    c = handshake(info, res)
    cmd(c, "read")
    disconnect_bounded(c, res, read=True)


@case("td-zero-window", "the target queued 2 MiB of Sends; a zero "
      "window, never read; the target disconnects: its side ends within "
      "the drain bound", group="teardown")
def c_td_zero(info, res, a):
    c = handshake(info, res, rcvbuf=4096)
    cmd(c, "send 8")
    disconnect_bounded(c, res, read=False)


@case("td-rreq-backlog", "IRD Read Requests of 256 KiB, responses "
      "never read; the target disconnects: its side ends within the drain "
      "bound", group="teardown")
def c_td_rreq(info, res, a):
    c = handshake(info, res, rcvbuf=4096, ird=16, ord_=16)
    ird = c.ird if c.ird is not None else ival(info, "ird")
    size = ival(info, "target_len")
    for i in range(ird):
        c.send(fpdu(untagged(OP_RREQ, QN_RREQ, 1 + i, rreq_hdr(
            0x11223344, 0, size, ival(info, "target_stag"),
            ival(info, "target_addr")))))
    disconnect_bounded(c, res, read=False)


@case("td-no-fin", "the target disconnects; this peer reads on but sends "
      "no FIN for 4 s: the target's QP and events must not wait for it",
      group="teardown")
def c_td_no_fin(info, res, a):
    c = handshake(info, res)
    cmd(c, "disconnect")
    hold_without_fin(c, 4)
    res.seen("the target's side: %s" % (c.eof or "still open"))
    if c.eof == "rst":
        res.fail("the target reset a connection it closed gracefully")
    c.close()


@case("td-destroy-graceful", "a Read never answered holds the target's "
      "drain after its disconnect; the target then destroys its QP: all it "
      "sent went out whole, so the stream ends with a FIN after its Read "
      "Request, not with a reset", group="teardown")
def c_td_destroy_graceful(info, res, a):
    c = handshake(info, res)
    cmd(c, "read")
    cmd(c, "disconnect")
    time.sleep(0.5)
    cmd(c, "destroy")
    deadline = time.monotonic() + TD_BOUND + 5
    ops = []
    while True:
        u = c.read_fpdu(deadline)
        if u is None:
            break
        ops.append(u[1] & 0xF)
    res.seen("the target sent %s, then %s" %
             (ops, c.eof or "nothing for %d s" % (TD_BOUND + 5)))
    if OP_RREQ not in ops:
        res.fail("the target's Read Request never arrived")
    if c.eof != "fin":
        res.fail("the target ended a stream it had begun to close "
                 "gracefully with %s" % (c.eof or "nothing"))
    c.close()


@case("td-destroy-fin", "the target sends a Send, then destroys its QP "
      "without any disconnect (perftest's end): all it sent went out "
      "whole, so the stream ends with a FIN, not with a reset that could "
      "throw away what TCP still holds", group="teardown")
def c_td_destroy_fin(info, res, a):
    c = handshake(info, res)
    cmd(c, "send 1")
    deadline = time.monotonic() + 10
    u = c.read_fpdu(deadline)
    while u is not None and not (u[1] & 0xF == OP_SEND and u[0] & 0x40):
        u = c.read_fpdu(deadline)
    if u is None:
        res.fail("the target's Send never arrived whole (%s)" %
                 (c.eof or "nothing for 10 s"))
        abort(c)
        return
    cmd(c, "destroy")
    took = c.wait_close(TD_BOUND + 5)
    res.seen("after its Send the target ended the stream with %s" %
             (c.eof or "nothing for %d s" % (TD_BOUND + 5)))
    if c.eof != "fin":
        res.fail("the target ended a stream whose frames all went out "
                 "with %s, not a FIN" % (c.eof or "nothing"))
    elif took > TD_BOUND:
        res.fail("the FIN came %.1f s after the destroy" % took)
    c.close()


@case("td-sqe-doorbell", "a Read outstanding and Sends queued behind a "
      "zero window, then a bad Write (the target's QP is TERMINATE, its "
      "Terminate stuck) and the target posts one more Send: every send WR "
      "still completes", group="teardown")
def c_td_sqe(info, res, a):
    c = handshake(info, res, rcvbuf=4096)
    cmd(c, "read")
    cmd(c, "send 14")
    cmd(c, "late 1500")
    time.sleep(0.3)
    c.send(fpdu(tagged(OP_WRITE, unknown_stag(info),
                       ival(info, "target_addr"), b"x" * 16)))
    wait_state_change(c, res, 4)
    abort(c)


@case("td-failed-wr", "a Read outstanding, then a Send with a wrong lkey "
      "fails locally: it completes with its own status after the Read",
      group="teardown")
def c_td_failed(info, res, a):
    c = handshake(info, res)
    cmd(c, "read")
    cmd(c, "badwr")
    took = c.wait_close(10)
    if took is None:
        res.fail("the target did not close after its local error")
    else:
        res.seen("connection closed by the target (%s) after %.2f s" %
                 (c.eof, took))
    abort(c)


@case("td-qp-shared", "a second connection the target accepts naming the "
      "first one's QP, sending all along: refused, and the first "
      "connection undisturbed", group="teardown")
def c_td_shared(info, res, a):
    c = handshake(info, res)
    b = Conn(info)
    b.send(mpa_frame(REQ_KEY, rev=2, crc=1, enhanced=enhanced_field(8, 8)))
    end = time.monotonic() + 1.5
    got = b""
    while time.monotonic() < end and not b.eof:
        try:
            b.send(b"\x55" * 64)
        except Closed:
            break
        b.fill(time.monotonic() + 0.03)
        got += b.buf
        b.buf = b""
    if got[:16] == REP_KEY:
        res.fail("the second connection got an MPA Reply")
    res.seen("second connection: %s" % (b.eof or "still open"))
    abort(b)
    # The first connection still works: Write, then read it back.
    n = ival(info, "control_len")
    pat = control_pattern(n)
    stag, addr = ival(info, "target_stag"), ival(info, "target_addr")
    c.send(fpdu(tagged(OP_WRITE, stag, addr, pat)))
    c.send(fpdu(untagged(OP_RREQ, QN_RREQ, 1,
                         rreq_hdr(0x11223344, 0x1000, n, stag, addr))))
    t, rresp = collect(c, res, set(), a.layout, want_rresp=1)
    if t is not None or len(rresp) != 1 or rresp[0][14:] != pat:
        res.fail("the first connection no longer works")
    c.sock.shutdown(socket.SHUT_WR)
    c.wait_close(10)


@case("td-reply-first", "the MPA Request and a bad FPDU in one segment: "
      "the target's first octets are its MPA Reply, then the Terminate",
      group="teardown")
def c_td_reply_first(info, res, a):
    c = Conn(info)
    seg = tagged(OP_WRITE, ival(info, "target_stag"),
                 ival(info, "target_addr"), b"x" * 16)
    c.send(mpa_frame(REQ_KEY, rev=2, crc=1, enhanced=enhanced_field(8, 8)) +
           fpdu(seg, bad_crc=True))
    rep = read_reply(c)
    if rep is None:
        res.fail("no MPA Reply (closed: %s)" % c.eof)
        return
    if rep[0] != REP_KEY:
        res.fail("the first octets are not an MPA Reply: %s" %
                 (rep[0] + bytes([rep[1], rep[2]])).hex())
        return
    res.seen("MPA Reply first")
    expect_terminate(c, res, {(2, 0, 2)}, a.layout)


@case("td-hold", "background helper: the target disconnects, this peer "
      "reads on and sends no FIN for 60 s", group="teardown-hold")
def c_td_hold(info, res, a):
    c = handshake(info, res)
    cmd(c, "disconnect")
    hold_without_fin(c, 60)
    abort(c)


# --- main -----------------------------------------------------------------------

def read_info(path):
    info = {}
    with open(path) as f:
        for line in f:
            if "=" in line:
                k, v = line.strip().split("=", 1)
                info[k] = v
    for k in ("addr", "port", "target_stag", "target_addr", "target_len",
              "noread_stag", "otherpd_stag", "recv_count", "recv_len"):
        if k not in info:
            raise SystemExit("peer.py: %s lacks %s" % (path, k))
    return info


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-i", "--info", help="vt_target's info file")
    ap.add_argument("-c", "--case", action="append", help="case to run")
    ap.add_argument("--mpa-timeout", type=int, default=5,
                    help="the target's MPA startup timeout in s")
    ap.add_argument("--layout", choices=("rfc", "auto"), default="rfc",
                    help="Terminate bit layout: rfc only, or also siw's")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--group", default="hostile",
                    help="the cases --list prints: hostile or teardown")
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--dd", metavar="DEV",
                    help="the target is kiwi device DEV here: check its "
                    "driver details where a case says so")
    a = ap.parse_args()
    if a.selftest:
        return selftest()
    if a.list:
        for name, (_, doc, group) in CASES.items():
            if group == a.group:
                print("%-24s %s" % (name, doc))
        return 0
    if not a.info or not a.case:
        ap.error("need --info and --case (or --list)")
    info = read_info(a.info)
    fails = 0
    for name in a.case:
        if name not in CASES:
            ap.error("unknown case %s (see --list)" % name)
        fn, doc, _ = CASES[name]
        print("case %s: %s" % (name, doc))
        res = Result(name)
        try:
            fn(info, res, a)
        except Closed as e:
            res.fail("connection: %s" % (e or "closed by the target"))
        except OSError as e:
            res.fail("socket error: %s" % e)
        if res.fails:
            fails += 1
            print("FAIL %s: %s" % (name, "; ".join(res.fails)))
        else:
            print("PASS %s" % name)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
