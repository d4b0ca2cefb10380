#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""usage: sctp-first-chunks.py PCAP SRC_IPV4

For every IPv4 SCTP frame from SRC_IPV4 in PCAP (classic pcap, Ethernet),
print the first chunk's type, B and E flags, length and, for a DATA chunk,
its PPID: "TYPE B E LENGTH PPID" (PPID - for other chunks). Reads only the
headers, so a capture with a short snap length (tcpdump -s 128) works,
where tshark refuses to dissect truncated SCTP packets. Exit status 2 if
PCAP is not a classic Ethernet pcap.
"""
import socket
import struct
import sys


def frames(path):
    with open(path, "rb") as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            sys.exit("sctp-first-chunks: %s: no pcap header" % path)
        magic = hdr[:4]
        if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
            endian = "<"
        elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
            endian = ">"
        else:
            print("sctp-first-chunks: %s: not a classic pcap" % path, file=sys.stderr)
            sys.exit(2)
        if struct.unpack(endian + "I", hdr[20:24])[0] != 1:
            print("sctp-first-chunks: %s: not Ethernet" % path, file=sys.stderr)
            sys.exit(2)
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            incl = struct.unpack(endian + "I", rec[8:12])[0]
            yield f.read(incl)


def first_chunk(frame, src):
    if len(frame) < 14 + 20 or frame[12:14] != b"\x08\x00":
        return None
    ip = frame[14:]
    ihl = (ip[0] & 0x0F) * 4
    frag_off = struct.unpack(">H", ip[6:8])[0] & 0x1FFF
    if ip[9] != 132 or ip[12:16] != src or frag_off:
        return None
    chunk = ip[ihl + 12:]
    if len(chunk) < 4:
        return None
    ctype, flags, length = struct.unpack(">BBH", chunk[:4])
    ppid = "-"
    if ctype == 0 and len(chunk) >= 16:
        ppid = str(struct.unpack(">I", chunk[12:16])[0])
    return "%d %d %d %d %s" % (ctype, (flags >> 1) & 1, flags & 1, length, ppid)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    src = socket.inet_aton(sys.argv[2])
    for frame in frames(sys.argv[1]):
        line = first_chunk(frame, src)
        if line:
            print(line)


if __name__ == "__main__":
    main()
