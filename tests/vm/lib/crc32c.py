# SPDX-License-Identifier: GPL-2.0
"""CRC32c (Castagnoli, reflected polynomial 0x82F63B78), RFC 5044 section
4.4, for the lab's python peers and checkers (tests/vm/hostile/peer.py,
tests/vm/pair/mpa-wire-check.py). Table-driven, one octet at a time."""


def _table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _table()


def crc32c_update(crc, data):
    """Runs the register @crc (no pre- or post-inversion) over @data."""
    t = _TABLE
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def crc32c(data):
    """The CRC32c of @data as MPA sends it (before the little-endian
    octet order of the wire)."""
    return crc32c_update(0xFFFFFFFF, data) ^ 0xFFFFFFFF
