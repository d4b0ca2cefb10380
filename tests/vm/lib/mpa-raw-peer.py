# SPDX-License-Identifier: GPL-2.0
"""A raw TCP peer for kiwi's MPA startup:
python3 mpa-raw-peer.py MODE PORT IP [SECONDS]

silent-server  listen, accept and read the Request, never answer
big-ord        listen, accept, answer the Request with an RFC 6581 Reply
               whose ORD (200) exceeds the IRD a kiwi QP can serve
silent-client  connect and send nothing
bad            connect and send a malformed Request
request        connect, send a valid revision 1 Request (CRC), then wait;
               with MPA_RAW_GO=FILE in the environment the Request waits
               until FILE exists (peers that must send at the same moment)
stall          listen, accept, answer the Request with a Reply that agrees
               to it, then never read: the initiator's TX fills TCP's
               buffers and stalls; prints "held N" after SECONDS and closes;
               with MPA_RAW_RELEASE=FILE in the environment the hold ends
               as soon as FILE exists (the caller has seen what it wanted)
stall-drain    the same, but after the hold reads what arrives until the
               initiator has sent nothing for a second, prints "drained N"
               and closes: the stalled TX is woken and sends the rest
rev0-reply     listen, accept, answer the Request as an RDMAC RNIC does
               (RFC 5044 C.2.2): a revision 0 Reply, M=1, C=1, no private
               data; a kiwi initiator must fail its connect and close
big-pd-accept  listen, accept, answer the Request with a Reply that agrees
               to it and carries 300 octets of private data (valid MPA,
               more than an iw_cm event carries)
big-pd-reject  the same Reply with R=1: a rejection with 300 octets

A listening mode prints "listening" once it listens; with MPA_RAW_READY=FILE
in the environment a connecting mode writes "connected" to FILE once it is
connected. Every mode then prints
how the connection ended and after how many seconds since it was set up:
"eof", "eof after N octets", "data N" (a client's first answer), "reset"
or "timeout" (after SECONDS, default 60). big-ord first prints "term L/E/EC" when the first FPDU after
its Reply is a Terminate (RFC 6581 wants 2/0/06 from the initiator), else
"first FPDU: no Terminate"; so do rev0-reply and big-pd-*, whose counts
of octets leave out the Request.
"""
import os
import socket
import struct
import sys
import time


def read_exact(s, n):
    buf = b""
    while len(buf) < n:
        d = s.recv(n - len(buf))
        if not d:
            raise ConnectionResetError
        buf += d
    return buf


def answer_big_ord(s):
    hdr = read_exact(s, 20)
    pd = read_exact(s, struct.unpack(">H", hdr[18:20])[0])
    a_bit = struct.unpack(">H", pd[:2])[0] & 0x8000
    enh = struct.pack(">HH", a_bit | 0x4000 | 8, 0x8000 | 200)
    s.sendall(b"MPA ID Rep Frame" + bytes([0x50, 2]) + struct.pack(">H", 4) + enh)
    return len(hdr) + len(pd)


def agreeing_enh(hdr, pd):
    """The RFC 6581 field of a Reply that agrees to the Request @hdr, @pd:
    for an enhanced Request, IRD 16 / ORD 1 with the Request's
    peer-to-peer bit and one RTR type it offers (Write, else Read, else
    Send); nothing for another Request."""
    if not hdr[16] & 0x10 or len(pd) < 4:
        return b""
    ird, ord_ = struct.unpack(">HH", pd[:4])
    if ord_ & 0x8000:
        rtr = (0, 0x8000)
    elif ord_ & 0x4000:
        rtr = (0, 0x4000)
    else:
        rtr = (0x4000, 0)
    return struct.pack(">HH", (ird & 0x8000) | rtr[0] | 16, rtr[1] | 1)


def answer_agreeing(s):
    """A Reply that agrees to the Request: its revision and CRC flag and
    agreeing_enh()."""
    hdr = read_exact(s, 20)
    pd = read_exact(s, struct.unpack(">H", hdr[18:20])[0])
    enh = agreeing_enh(hdr, pd)
    s.sendall(b"MPA ID Rep Frame" + bytes([hdr[16] & 0x50, hdr[17]]) +
              struct.pack(">H", len(enh)) + enh)


def answer_rev0(s):
    """An RDMAC responder's Reply (RFC 5044 C.2.2): revision 0, M=1, C=1."""
    hdr = read_exact(s, 20)
    read_exact(s, struct.unpack(">H", hdr[18:20])[0])
    s.sendall(b"MPA ID Rep Frame" + bytes([0xC0, 0]) + struct.pack(">H", 0))


def answer_big_pd(s, reject):
    """answer_agreeing()'s Reply with 300 octets of private data after
    the RFC 6581 field, R=1 if @reject."""
    hdr = read_exact(s, 20)
    pd = read_exact(s, struct.unpack(">H", hdr[18:20])[0])
    body = agreeing_enh(hdr, pd) + bytes((i * 13 + 5) & 0xFF for i in range(300))
    flags = (hdr[16] & 0x50) | (0x20 if reject else 0)
    s.sendall(b"MPA ID Rep Frame" + bytes([flags, hdr[17]]) +
              struct.pack(">H", len(body)) + body)


ANSWERS = {
    "big-ord": answer_big_ord,
    "rev0-reply": answer_rev0,
    "big-pd-accept": lambda s: answer_big_pd(s, False),
    "big-pd-reject": lambda s: answer_big_pd(s, True),
}


def drain(s):
    """Read until the peer sends nothing for a second; octets read."""
    s.settimeout(1)
    got = 0
    try:
        while True:
            data = s.recv(65536)
            if not data:
                break
            got += len(data)
    except OSError:
        pass
    return got


def first_term(data):
    """Layer/EType/ECode of a Terminate FPDU (no markers) at @data."""
    if len(data) < 2:
        return None
    n = struct.unpack(">H", data[:2])[0]
    u = data[2:2 + n]
    if len(u) < 22 or u[0] & 0x80 or u[1] & 0x0F != 7:
        return None
    return "%d/%d/%02x" % (u[18] >> 4, u[18] & 0x0F, u[19])


def main():
    mode, port, ip = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    wait = float(sys.argv[4]) if len(sys.argv) > 4 else 60
    server = mode in ("silent-server", "stall", "stall-drain") or mode in ANSWERS
    if server:
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind((ip, port))
        ls.listen(1)
        ls.settimeout(90)
        print("listening", flush=True)
        s, _ = ls.accept()
    else:
        s = socket.create_connection((ip, port))
        ready = os.environ.get("MPA_RAW_READY")
        if ready:
            with open(ready, "w") as f:
                f.write("connected\n")
        if mode == "bad":
            s.sendall(b"MPA ID Bad Frame" + bytes([0x40, 1, 0, 0]))
        elif mode == "request":
            go = os.environ.get("MPA_RAW_GO")
            while go and not os.path.exists(go):
                time.sleep(0.01)
            s.sendall(b"MPA ID Req Frame" + bytes([0x40, 1, 0, 0]))
    t0 = time.time()
    s.settimeout(wait)
    got = 0
    after = b""
    if mode in ("stall", "stall-drain"):
        answer_agreeing(s)
        release = os.environ.get("MPA_RAW_RELEASE")
        end = time.time() + wait
        while time.time() < end and not (release and os.path.exists(release)):
            time.sleep(min(0.05, max(0, end - time.time())))
        print("held %.1f" % (time.time() - t0), flush=True)
        if mode == "stall-drain":
            print("drained %d" % drain(s), flush=True)
        s.close()
        return
    try:
        if mode in ANSWERS:
            got = ANSWERS[mode](s) or 0
        # A server reads until the initiator gives up; a client reports
        # the first thing it gets.
        while True:
            d = s.recv(1024)
            if not d:
                how = "eof after %d octets" % got if got else "eof"
                break
            got += len(d)
            after += d
            if not server:
                how = "data %d" % got
                break
    except ConnectionResetError:
        how = "reset"
    except socket.timeout:
        how = "timeout"
    if mode in ANSWERS:
        t = first_term(after)
        print("term " + t if t else "first FPDU: no Terminate", flush=True)
    print("%s %.1f" % (how, time.time() - t0), flush=True)


main()
