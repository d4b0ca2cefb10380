#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""usage: sctp-first-chunks.py PCAP SRC_IPV4

For every IPv4 SCTP frame from SRC_IPV4 in PCAP (classic pcap, Ethernet),
print the first chunk's type, B and E flags, length and, for a DATA chunk,
its PPID: "TYPE B E LENGTH PPID" (PPID - for other chunks). Reads only the
headers, so a capture with a short snap length (tcpdump -s 128) works,
where tshark refuses to dissect truncated SCTP packets. Exit status 2 if
PCAP cannot be read as a classic Ethernet pcap.
"""
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcapfile import ipv4_packets  # noqa: E402


def first_chunk(sctp):
    chunk = sctp[12:]
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
    try:
        for _, saddr, _, sctp, _ in ipv4_packets(sys.argv[1], 132):
            line = first_chunk(sctp) if saddr == src else None
            if line:
                print(line)
    except (OSError, ValueError) as e:
        print("sctp-first-chunks: %s: %s" % (sys.argv[1], e), file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
