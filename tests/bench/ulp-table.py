#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""usage: ulp-table.py RESULTS OUTDIR COMBO...

The table and chart of tests/bench/ulp.sh: reads the client guest's
PAIR_ID.bench files ("TRANSPORT ROW VALUE CPU_CLIENT CPU_SERVER" lines)
of every COMBO's ulp case under RESULTS/lab, prints one table with the
ratios kiwi/siw and kiwi/TCP, and writes it to OUTDIR/table.txt and a bar
chart of the values relative to kiwi to OUTDIR/ulp.svg. A kiwi COMBO whose
server side loads another build (kiwi:ko=NAME, tests/vm/pair/run.sh) is
listed below the table as "kiwi ko=NAME", with the ratio kiwi/that build:
before/after figures from the same run. Exit status 2 if there is no
figure at all.
"""
import glob
import os
import sys

ROWS = [
    ("nvme.randread.4k.qd1", "NVMe 4K randread QD1", "IOPS"),
    ("nvme.randwrite.4k.qd1", "NVMe 4K randwrite QD1", "IOPS"),
    ("nvme.randread.4k.qd32", "NVMe 4K randread QD32", "IOPS"),
    ("nvme.randwrite.4k.qd32", "NVMe 4K randwrite QD32", "IOPS"),
    ("nvme.read.128k.qd8", "NVMe 128K seq read", "MB/s"),
    ("nvme.write.128k.qd8", "NVMe 128K seq write", "MB/s"),
    ("nfs.write.seq", "NFS seq write", "MB/s"),
    ("nfs.read.seq", "NFS seq read", "MB/s"),
]
TRANSPORTS = ["kiwi", "siw", "tcp"]
TCP_NAME = {"nvme": "nvme-tcp", "nfs": "NFS/TCP"}


def other_build(combo):
    """NAME of a combo whose server is kiwi:...ko=NAME..., else None."""
    server = combo.split("-")[0].split(":")
    if server[0] != "kiwi" or len(server) < 2:
        return None
    for opt in server[1].split("+"):
        if opt.startswith("ko="):
            return opt[3:]
    return None


def load(results, combos):
    data = {}
    for combo in combos:
        ko = other_build(combo)
        label = combo.replace(":", "_").replace("=", "_")
        pattern = os.path.join(results, "lab", "*", label + ".ulp.bench")
        for path in glob.glob(pattern):
            with open(path) as f:
                for line in f:
                    parts = line.split()
                    if len(parts) != 5:
                        continue
                    t, row, val, cc, cs = parts
                    if ko and t == "kiwi":
                        t = "kiwi ko=" + ko
                    data[(t, row)] = (float(val), cc, cs)
    return data


def fmt(v):
    return "-" if v is None else ("%.0f" % v if v >= 100 else "%.1f" % v)


def ratio(a, b):
    return "-" if a is None or b is None or b == 0 else "%.2f" % (a / b)


def table(data):
    head = "%-24s %5s %9s %9s %9s %9s %9s   %-s" % (
        "row", "unit", "kiwi", "siw", "TCP", "kiwi/siw", "kiwi/TCP",
        "CPU us per I/O (MiB) initiator/target: kiwi | siw | TCP")
    lines = [head]
    for key, name, unit in ROWS:
        vals = {t: data.get((t, key)) for t in TRANSPORTS}
        v = {t: vals[t][0] if vals[t] else None for t in TRANSPORTS}
        cpu = " | ".join("%s/%s" % (vals[t][1], vals[t][2]) if vals[t] else "-"
                         for t in TRANSPORTS)
        lines.append("%-24s %5s %9s %9s %9s %9s %9s   %s" % (
            name, unit, fmt(v["kiwi"]), fmt(v["siw"]), fmt(v["tcp"]),
            ratio(v["kiwi"], v["siw"]), ratio(v["kiwi"], v["tcp"]), cpu))
    lines.append("TCP: nvme-tcp for the NVMe rows, NFSv4.2 over TCP for the NFS "
                 "rows; same guests, same boot as kiwi.")
    for t in sorted({t for t, _ in data if t.startswith("kiwi ko=")}):
        lines.append("")
        lines.append("%-24s %5s %9s %9s %9s   %-s" % (
            "row", "unit", "kiwi", t[5:], "ratio",
            "CPU us per I/O (MiB) initiator/target: kiwi | " + t[5:]))
        for key, name, unit in ROWS:
            a, b = data.get(("kiwi", key)), data.get((t, key))
            cpu = " | ".join("%s/%s" % (d[1], d[2]) if d else "-"
                             for d in (a, b))
            lines.append("%-24s %5s %9s %9s %9s   %s" % (
                name, unit, fmt(a[0] if a else None),
                fmt(b[0] if b else None),
                ratio(a[0] if a else None, b[0] if b else None), cpu))
    return lines


def svg(data):
    """Bars of each transport's value relative to kiwi's, per row."""
    w, row_h, left, scale = 760, 54, 200, 220.0
    colors = {"kiwi": "#2e7d32", "siw": "#1565c0", "tcp": "#9e9e9e"}
    h = 40 + row_h * len(ROWS) + 30
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (w, h),
           '<text x="10" y="20" font-size="14">Kernel ULPs: kiwi, siw and '
           'TCP, relative to kiwi (1.0 = kiwi)</text>']
    x1 = left + scale
    out.append('<line x1="%d" y1="30" x2="%d" y2="%d" stroke="#000" '
               'stroke-dasharray="4,3"/>' % (x1, x1, h - 30))
    for i, (key, name, unit) in enumerate(ROWS):
        y = 40 + i * row_h
        out.append('<text x="10" y="%d">%s (%s)</text>' % (y + 24, name, unit))
        base = data.get(("kiwi", key))
        for j, t in enumerate(TRANSPORTS):
            d = data.get((t, key))
            if not d or not base or not base[0]:
                continue
            rel = d[0] / base[0]
            bw = min(rel, 2.4) * scale
            yy = y + 4 + j * 15
            out.append('<rect x="%d" y="%d" width="%.0f" height="12" '
                       'fill="%s"/>' % (left, yy, bw, colors[t]))
            out.append('<text x="%.0f" y="%d">%s %s</text>' % (
                left + bw + 4, yy + 10, t, fmt(d[0])))
    out.append('<text x="10" y="%d">green kiwi, blue siw, grey TCP '
               '(nvme-tcp, NFS over TCP)</text>' % (h - 10))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    results, outdir, combos = sys.argv[1], sys.argv[2], sys.argv[3:]
    data = load(results, combos)
    lines = table(data)
    print("\n".join(lines))
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "table.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(outdir, "ulp.svg"), "w") as f:
        f.write(svg(data))
    print("table: %s, chart: %s" % (os.path.join(outdir, "table.txt"),
                                     os.path.join(outdir, "ulp.svg")))
    return 0 if data else 2


if __name__ == "__main__":
    sys.exit(main())
