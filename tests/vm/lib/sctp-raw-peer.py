# SPDX-License-Identifier: GPL-2.0
"""A raw SCTP peer for kiwi's DDP over SCTP (RFC 5043 draft):
python3 sctp-raw-peer.py MODE[,MODE...] PORT IP [SECONDS]

Connects a one-to-one SCTP socket to a kiwi listener (llp=sctp), or for
the serve-* modes listens for a kiwi initiator, and misbehaves as MODE
says:

no-adapt     no Adaptation Layer Indication in the INIT, sends an Initiate
other-adapt  Adaptation Indication 0x2 (not DDP), sends an Initiate
seg-first    DDP indication, then a DDP Segment (PPID 0x10) as the first
             chunk instead of the Session Initiate
bad-ppid     DDP indication, first chunk with PPID 0x99
bad-fn       DDP indication, a Session Control message with function 9
big-pd       DDP indication, an Initiate with 300 octets of Private Data
             (more than an iw_cm event carries): the draft's answer is a
             Session Terminate, never a Reject
huge-pd      DDP indication, an Initiate with 513 octets of Private Data,
             more than the draft allows in any message (512)
seg-ahead    DDP indication, 8 Sends of 1000 octets as DDP-SSN 1 to 8 and
             no Initiate (DDP-SSN 0): nothing may come before the Initiate,
             so the listener must not keep them waiting for it
pre-stream   DDP indication, a Send on SCTP stream 1 before any Initiate;
             once a Session Terminate comes back on stream 1, the peer
             closes the association ("closed")

The mid-* modes first open a session (an Initiate with no Private Data,
the listener's Accept; the listener must have one Receive posted), then:
mid-dup      a one-segment Send (DDP-SSN 1), then the same chunk again
mid-overlap  a Send as DDP-SSN 3 (held: 1 and 2 are missing), then another
             chunk with DDP-SSN 3
mid-old      a Send with DDP-SSN 0, the Initiate's
mid-far      a Send with DDP-SSN 30000 (inside the draft's window of
             32767 chunks: held, not refused; see mid-beyond)
mid-big      a Send of 2000 octets (more than the MULPDU at MTU 1500)
mid-huge     a Send of 20000 octets (more than any MULPDU)
mid-stream   a Send as DDP-SSN 0 on SCTP stream 1, where no session runs;
             once a Session Terminate comes back on stream 1, a Session
             Terminate (DDP-SSN 1) on stream 0 ends the session
mid-flood    as mid-stream with FLOOD such Sends at once: once as many
             Session Terminates came back on stream 1, the Session
             Terminate on stream 0 (repeated events print as "EVENT xN")
mid-reorder  two Sends (MSN 1 and 2) as DDP-SSN 2 first, then 1, then a
             Session Terminate (DDP-SSN 3): nothing to refuse (the listener
             must have two Receives posted)
mid-beyond   a Send with DDP-SSN 40000, beyond the draft's window
mid-term-pd  a Session Terminate (DDP-SSN 1) with 4 octets of Private Data,
             which a Terminate must not carry

The ooo-* modes also open a session, against vt_target (its info file
named by the environment variable SCTP_PEER_INFO; it posts Receives of 64
octets), and send segments ahead of a gap in DDP-SSN; once the gap is
filled, a Session Terminate ends the session, but for the modes that
expect kiwi's Terminate:
ooo-write    an RDMA Write of vt_target's 64-octet control pattern into
             its target as DDP-SSN 2; then it waits (up to 20 s) for the
             file named by SCTP_PEER_PLACED, which a watcher of
             vt_target's memory creates once the pattern is there, and
             reports "placed" or "not-placed"; then DDP-SSN 1 (a Send)
             fills the gap
ooo-send     two Sends of 40 octets (MSN 1: octets 0x10.., MSN 2: 0x60..),
             two segments of 20 each, DDP-SSN 1 to 4, sent as 4, 2, 3, 1:
             the first Receive must complete with MSN 1, the second with
             MSN 2, each whole
ooo-overlap  a Send's first 20 octets (MO 0, DDP-SSN 3), then its last
             segment at MO 10 (DDP-SSN 4), overlapping it, then two
             zero-length Writes as DDP-SSN 1 and 2: a Terminate for
             "invalid MO" (1/2/04) in DDP-SSN 4's turn
ooo-dup      as ooo-overlap, with the last segment at MO 0 again
ooo-rresp    a Send "vt:read 1 0 64" (DDP-SSN 1) makes vt_target Read 64
             octets from us; its Read Request answered by two Read
             Responses of 32 octets, the last (DDP-SSN 3) sent before the
             first (DDP-SSN 2): "rreq" when the Read Request came, "no-rreq"
             if it did not
ooo-window   300 zero-length Writes as DDP-SSN 2 to 301, then DDP-SSN 1:
             more ahead of a gap than an older kiwi held, within the
             draft's window; nothing to refuse

beyond-backlog  BACKLOG (4, vt_cmpdata's rdma_listen backlog) associations
             with the DDP indication that send nothing, then one more that
             sends an Initiate: beyond the listener's backlog, it must get
             a Session Terminate (draft 6.4), never reach the ULP; the
             waiting associations are closed at the end
beyond-twice-backlog  twice BACKLOG such associations, then one more that
             sends nothing: beyond twice the backlog it is shut down unread
             ("eof"), before any Initiate; all are closed at the end

serve-big-accept  listen on IP:PORT with the DDP indication (prints
             "listening"), take one association, read its Session Initiate
             and answer it with an Accept carrying 300 octets of Private
             Data (more than an iw_cm event carries); the initiator must
             refuse it with a Session Terminate
serve-big-reject  the same with a Reject of 300 octets

For each MODE, one association and one line "MODE: EVENT...": "ssc FN"
for each Session Control message received (FN its function code), "term
L/T/C" for an RDMAP Terminate (layer, error type, error code in hex),
"chunk PPID" for anything else, each with "@SID" if not on stream 0, then
how it ended within SECONDS (default 30): "abort" (reset), "eof"
(SHUTDOWN) or "timeout".
"""
import os
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


def send(s, ppid, data, sid=0):
    info = struct.pack("=HHIII", sid, SCTP_UNORDERED, socket.htonl(ppid), 0, 0)
    s.sendmsg([data], [(IPPROTO_SCTP, SCTP_SNDINFO, info)])


def ssc(ssn, fn, pd=b""):
    return struct.pack(">HH", ssn, fn) + pd


def send_seg(ssn, msn=1, mo=0, payload=b"abcd"):
    """A DDP-SSN and a whole untagged RDMAP Send (queue 0)."""
    return struct.pack(">HBBIIII", ssn, 0x41, 0x43, 0, 0, msn, mo) + payload


def send_part(ssn, msn, mo, payload, last):
    """A DDP-SSN and one segment of an untagged RDMAP Send (queue 0)."""
    return struct.pack(">HBBIIII", ssn, 0x41 if last else 0x01, 0x43, 0, 0,
                       msn, mo) + payload


def write_seg(ssn, stag=0, to=0, payload=b""):
    """A DDP-SSN and a whole tagged RDMA Write (L=1)."""
    return struct.pack(">HBBIQ", ssn, 0xC1, 0x40, stag, to) + payload


def rresp_seg(ssn, stag, to, payload, last):
    """A DDP-SSN and one segment of an RDMA Read Response."""
    return struct.pack(">HBBIQ", ssn, 0xC1 if last else 0x81, 0x42, stag,
                       to) + payload


# Chunks mid-flood sends on stream 1: more than a reader of kiwi answers
# before it gives its worker back (KIWI_SCTP_FOREIGN_BUDGET, 16).
FLOOD = 100

# What each mid-* mode sends after the Accept: (SCTP stream, PPID, data).
MID = {
    "mid-dup": [(0, PPID_SEG, send_seg(1)), (0, PPID_SEG, send_seg(1))],
    "mid-overlap": [(0, PPID_SEG, send_seg(3, 3)),
                    (0, PPID_SEG, send_seg(3, 3, 0, b"efgh"))],
    "mid-old": [(0, PPID_SEG, send_seg(0))],
    "mid-far": [(0, PPID_SEG, send_seg(30000))],
    "mid-big": [(0, PPID_SEG, send_seg(1, 1, 0, b"b" * 2000))],
    "mid-huge": [(0, PPID_SEG, send_seg(1, 1, 0, b"h" * 20000))],
    "mid-stream": [(1, PPID_SEG, send_seg(0))],
    "mid-flood": [(1, PPID_SEG, send_seg(0))] * FLOOD,
    "mid-reorder": [(0, PPID_SEG, send_seg(2, 2)), (0, PPID_SEG, send_seg(1, 1)),
                    (0, PPID_SSC, ssc(3, 4))],
    "mid-beyond": [(0, PPID_SEG, send_seg(40000))],
    "mid-term-pd": [(0, PPID_SSC, ssc(1, 4, b"pdpd"))],
}

# vt_target's control pattern: octet i of its target is i * 7 + 1.
CTL = bytes((i * 7 + 1) & 0xFF for i in range(64))
OOO_MSG1 = bytes(range(0x10, 0x10 + 40))
OOO_MSG2 = bytes(range(0x60, 0x60 + 40))


def target_info():
    """vt_target's info file (SCTP_PEER_INFO) as a dict."""
    info = {}
    with open(os.environ["SCTP_PEER_INFO"]) as f:
        for line in f:
            key, _, val = line.strip().partition("=")
            info[key] = val
    return info


def ooo_steps(mode):
    """What an ooo-* mode sends: PPID and data, or "wait" for the watcher."""
    seg = lambda data: (PPID_SEG, data)
    if mode == "ooo-write":
        info = target_info()
        stag, to = int(info["target_stag"], 16), int(info["target_addr"], 16)
        return [seg(write_seg(2, stag, to, CTL)), "wait",
                seg(send_seg(1, 1, 0, b"gap")), (PPID_SSC, ssc(3, 4))]
    if mode == "ooo-send":
        return [seg(send_part(4, 2, 20, OOO_MSG2[20:], True)),
                seg(send_part(2, 1, 20, OOO_MSG1[20:], True)),
                seg(send_part(3, 2, 0, OOO_MSG2[:20], False)),
                seg(send_part(1, 1, 0, OOO_MSG1[:20], False)),
                (PPID_SSC, ssc(5, 4))]
    if mode in ("ooo-overlap", "ooo-dup"):
        mo = 10 if mode == "ooo-overlap" else 0
        return [seg(send_part(3, 1, 0, b"o" * 20, False)),
                seg(send_part(4, 1, mo, b"x" * 20, True)),
                seg(write_seg(1)), seg(write_seg(2))]
    if mode == "ooo-rresp":
        return [seg(send_seg(1, 1, 0, b"vt:read 1 0 64")), "rreq",
                (PPID_SSC, ssc(4, 4))]
    if mode == "ooo-window":
        return ([seg(write_seg(n)) for n in range(2, 302)] +
                [seg(write_seg(1)), (PPID_SSC, ssc(302, 4))])
    return None


def wait_placed(limit=20):
    """Wait for the watcher's file (SCTP_PEER_PLACED): "placed" or not."""
    path = os.environ["SCTP_PEER_PLACED"]
    end = time.time() + limit
    while time.time() < end:
        if os.path.exists(path):
            os.unlink(path)
            return "placed"
        time.sleep(0.1)
    return "not-placed"


def answer_rreq(s):
    """Wait for a Read Request; send its Response as DDP-SSN 3, then 2."""
    while True:
        data, ppid, _ = recv(s)
        if not data:
            return "no-rreq"
        # DDP-SSN, untagged header (18), RDMAP opcode 1: a Read Request.
        if ppid == PPID_SEG and len(data) >= 48 and data[3] & 0x0F == 1:
            break
    stag, to, size = struct.unpack(">IQI", data[20:36])
    body = bytes((i * 5 + 3) & 0xFF for i in range(size))
    half = size // 2
    send(s, PPID_SEG, rresp_seg(3, stag, to + half, body[half:], True))
    send(s, PPID_SEG, rresp_seg(2, stag, to, body[:half], False))
    return "rreq"


def open_session(s, limit):
    """Ask for a session on @s (@limit s for each event): its events so far
    and whether the peer accepted it ("ssc 2")."""
    s.settimeout(limit)
    send(s, PPID_SSC, ssc(0, 1))
    ev = [next_event(s)]
    if ev[-1] in ENDS:
        return ev, False
    if ev[-1] != "ssc 2":
        return ev + ["not-accepted"], False
    return ev, True


def send_failed(ev, e):
    """@ev and how a send failed with OSError @e."""
    return ev + ["abort" if e.errno in (104, 32) else "error-%d" % e.errno]


def run_ooo(s, mode, limit):
    """Open a session, then send @mode's segments; returns its events."""
    steps = ooo_steps(mode)
    ev, accepted = open_session(s, limit)
    if not accepted:
        return ev
    try:
        for step in steps:
            if step == "wait":
                ev.append(wait_placed())
            elif step == "rreq":
                ev.append(answer_rreq(s))
            else:
                send(s, *step)
    except OSError as e:
        return send_failed(ev, e)
    return collect(s, ev)


def event(data, ppid, sid):
    """How one received chunk is reported."""
    at = "@%d" % sid if sid else ""
    if ppid == PPID_SSC and len(data) >= 4:
        return "ssc %d%s" % (struct.unpack(">HH", data[:4])[1], at)
    # DDP-SSN, untagged DDP header (18), RDMAP opcode 7: a Terminate.
    if ppid == PPID_SEG and len(data) >= 22 and data[3] & 0x0F == 7:
        return "term %x/%x/%02x%s" % (data[20] >> 4, data[20] & 0x0F, data[21], at)
    return "chunk %#x%s" % (ppid, at)


def recv(s):
    """One message: (data, ppid, sid); data b"" at the end."""
    data, anc, _, _ = s.recvmsg(65536, 256)
    ppid = sid = 0
    for level, typ, val in anc:
        if level == IPPROTO_SCTP and typ == SCTP_RCVINFO:
            sid = struct.unpack_from("=H", val, 0)[0]
            ppid = socket.ntohl(struct.unpack_from("=I", val, 8)[0])
    return data, ppid, sid


# How an association ends for next_event().
ENDS = ("timeout", "abort", "eof")


def next_event(s):
    """The event of the next message @s brings, or how it ended (ENDS)."""
    try:
        data, ppid, sid = recv(s)
    except socket.timeout:
        return "timeout"
    except ConnectionResetError:
        return "abort"
    return event(data, ppid, sid) if data else "eof"


def run_mid(s, mode, limit):
    """Open a session, then misbehave as @mode; returns its events."""
    ev, accepted = open_session(s, limit)
    if not accepted:
        return ev
    try:
        for sid, ppid, data in MID[mode]:
            send(s, ppid, data, sid)
    except OSError as e:
        return send_failed(ev, e)
    answer = {"mid-stream": 1, "mid-flood": FLOOD}.get(mode, 0)
    return collect(s, ev, answer)


def collect(s, ev, answer_stream_terms=0, close_at=None):
    """@ev and every event @s brings until it ends; once
    @answer_stream_terms Session Terminates came on stream 1, they are
    answered with one on stream 0; at the event @close_at the association
    is closed ("closed")."""
    while True:
        ev.append(next_event(s))
        if ev[-1] in ENDS:
            return ev
        if ev[-1] == close_at:
            s.close()
            return ev + ["closed"]
        if ev[-1] == "ssc 4@1" and ev.count("ssc 4@1") == answer_stream_terms:
            send(s, PPID_SSC, ssc(1, 4))


def squeeze(ev):
    """@ev with each run of one event shown once, as "EVENT xN"."""
    out = []
    for e in ev:
        if out and out[-1][0] == e:
            out[-1][1] += 1
        else:
            out.append([e, 1])
    return [e if n == 1 else "%s x%d" % (e, n) for e, n in out]


def ddp_sock(ip, ind=1):
    """A one-to-one SCTP socket with Adaptation Layer Indication @ind (1:
    DDP; None: no indication)."""
    s = socket.socket(socket.AF_INET6 if ":" in ip else socket.AF_INET,
                      socket.SOCK_STREAM, IPPROTO_SCTP)
    if ind is not None:
        s.setsockopt(IPPROTO_SCTP, SCTP_ADAPTATION_LAYER, struct.pack("=I", ind))
    s.setsockopt(IPPROTO_SCTP, SCTP_RECVRCVINFO, 1)
    return s


def ddp_assoc(ip, port):
    """A one-to-one SCTP socket with the DDP indication, connected."""
    s = ddp_sock(ip)
    s.connect((ip, port))
    return s


BACKLOG = 4


def run_flood(port, ip, limit, silent, initiate):
    """@silent associations that send nothing, then one more, which sends
    an Initiate if @initiate; returns the last one's events."""
    held = [ddp_assoc(ip, port) for _ in range(silent)]
    # The listener takes associations in the order they came up.
    time.sleep(1)
    s = ddp_assoc(ip, port)
    s.settimeout(limit)
    if initiate:
        send(s, PPID_SSC, ssc(0, 1))
    ev = collect(s, [])
    for h in held:
        h.close()
    return ev


# What a serve-* mode answers an Initiate with.
SERVE = {"serve-big-accept": 2, "serve-big-reject": 3}


def run_serve(mode, port, ip, limit):
    """Listen, answer the first Initiate as @mode says; returns the events
    of that association (its Initiate first)."""
    ls = ddp_sock(ip)
    ls.bind((ip, port))
    ls.listen(1)
    print("listening")
    sys.stdout.flush()
    ls.settimeout(limit)
    try:
        s, _ = ls.accept()
    except socket.timeout:
        return ["timeout"]
    s.settimeout(limit)
    ev = [next_event(s)]
    if ev[-1] != "ssc 1":
        return ev + ["no-initiate"]
    pd = bytes((i * 13 + 5) & 0xFF for i in range(300))
    try:
        send(s, PPID_SSC, ssc(0, SERVE[mode], pd))
    except OSError as e:
        return send_failed(ev, e)
    return collect(s, ev)


def run(mode, port, ip, limit):
    """One association misbehaving as @mode; returns its events."""
    if mode in SERVE:
        return run_serve(mode, port, ip, limit)
    if mode == "beyond-backlog":
        return run_flood(port, ip, limit, BACKLOG, True)
    if mode == "beyond-twice-backlog":
        return run_flood(port, ip, limit, 2 * BACKLOG, False)
    s = ddp_sock(ip, {"no-adapt": None, "other-adapt": 2}.get(mode, 1))
    s.connect((ip, port))
    if mode in MID:
        return run_mid(s, mode, limit)
    if mode.startswith("ooo-") and ooo_steps(mode) is not None:
        return run_ooo(s, mode, limit)
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
    elif mode == "huge-pd":
        first = (PPID_SSC, ssc(0, 1, b"x" * 513))
    elif mode == "pre-stream":
        first = (PPID_SEG, send_seg(0), 1)
    elif mode == "seg-ahead":
        first = None
    else:
        return ["unknown-mode"]
    ev = []
    try:
        if first is None:
            for ssn in range(1, 9):
                send(s, PPID_SEG, send_seg(ssn, ssn, 0, b"a" * 1000))
        else:
            send(s, *first)
    except OSError as e:
        return send_failed([], e)
    s.settimeout(limit)
    return collect(s, ev, close_at="ssc 4@1" if mode == "pre-stream" else None)

def main():
    port, ip = int(sys.argv[2]), sys.argv[3]
    limit = float(sys.argv[4]) if len(sys.argv) > 4 else 30
    for mode in sys.argv[1].split(","):
        t0 = time.time()
        ev = run(mode, port, ip, limit)
        print("%s: %s (%.1f s)" % (mode, " ".join(squeeze(ev)),
                                   time.time() - t0))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
