# SPDX-License-Identifier: GPL-2.0
"""Frames of a classic pcap file of Ethernet (tcpdump -w), for the capture
checkers (tests/vm/pair/mpa-wire-check.py, sctp-first-chunks.py)."""
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
