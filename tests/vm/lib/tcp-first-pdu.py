#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""usage: tcp-first-pdu.py PCAP SRC_IPV4

For every IPv4 TCP frame from SRC_IPV4 in PCAP (classic pcap, Ethernet)
that carries payload, print the first two octets of the payload as a
number: the ULPDU Length of an MPA FPDU without markers, or the Length of
a ULP framing draft-00 PDU, when the payload begins with one. Reads only
the headers and those two octets, so a capture with a short snap length
(tcpdump -s 128) works. Exit status 2 if PCAP cannot be read.
"""
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcapfile import ipv4_packets  # noqa: E402


def first_length(tcp, tcp_len):
    """The first two payload octets of TCP segment @tcp (@tcp_len octets on
    the wire), or None if it carries fewer."""
    if len(tcp) < 20:
        return None
    doff = (tcp[12] >> 4) * 4
    if tcp_len - doff < 2 or len(tcp) < doff + 2:
        return None
    return struct.unpack(">H", tcp[doff:doff + 2])[0]


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    src = socket.inet_aton(sys.argv[2])
    try:
        for _, saddr, _, tcp, tcp_len in ipv4_packets(sys.argv[1], 6):
            n = first_length(tcp, tcp_len) if saddr == src else None
            if n is not None:
                print(n)
    except (OSError, ValueError) as e:
        print("tcp-first-pdu: %s: %s" % (sys.argv[1], e), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
