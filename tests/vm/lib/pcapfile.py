# SPDX-License-Identifier: GPL-2.0
"""Frames of a classic pcap file of Ethernet (tcpdump -w), and the IPv4
packets in them, for the capture checkers (tests/vm/pair/mpa-wire-check.py,
sctp-first-chunks.py, sctp-session-check.py, tcp-first-pdu.py)."""
import struct


def ethernet_frames(path):
    """Yields (frame, orig_len) for each record of the classic pcap file at
    path: the captured octets and the frame's length on the wire; a last
    record the file ends inside (a capture cut off) is left out. Raises
    ValueError if path is not a classic pcap of Ethernet (pcapng is not
    read)."""
    with open(path, "rb") as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            raise ValueError("not a pcap file")
        magic = hdr[:4]
        if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
            end = "<"
        elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
            end = ">"
        else:
            raise ValueError("not a pcap file (pcapng is not read)")
        linktype = struct.unpack(end + "I", hdr[20:24])[0]
        if linktype != 1:
            raise ValueError("link type %d is not Ethernet" % linktype)
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            incl, orig = struct.unpack(end + "II", rec[8:16])
            frame = f.read(incl)
            if len(frame) < incl:
                return
            yield frame, orig


def ipv4_packets(path, proto):
    """Yields (index, src, dst, l4, l4_len) for each IPv4 packet of IP
    protocol proto in the pcap file at path that is not a later fragment:
    the frame's index in the file, source and destination addresses (4
    octets each), the IP payload as captured (a short snap length cuts it)
    and its length on the wire (from the IP total length)."""
    for i, (frame, _) in enumerate(ethernet_frames(path)):
        if len(frame) < 14 + 20 or frame[12:14] != b"\x08\x00":
            continue
        ip = frame[14:]
        ihl = (ip[0] & 0x0F) * 4
        total, frag = struct.unpack(">HH", ip[2:4] + ip[6:8])
        if ip[9] != proto or frag & 0x1FFF:
            continue
        yield i, ip[12:16], ip[16:20], ip[ihl:total], total - ihl
