#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""usage: plot.py CSV PNG

The plot of `make bench-sweep`: bandwidth against message size from the CSV
that tests/bench/pair-table.py writes, one panel per operation (RDMA Write,
Send, Read), one line per combo (provider pair and CRC setting: solid with
CRC on, dashed with CRC off), and the run's TCP figure (iperf3, the median
of its rounds) as a horizontal line for reference. A message size's point
is the median of the rounds, its bar the smallest and largest round.
Drawn by gnuplot (Debian's gnuplot-nox, pngcairo).
Exit status 2 if the CSV has no size to plot or gnuplot fails.
"""
import csv
import os
import statistics
import subprocess
import sys
import tempfile

OPS = [("ib_write_bw", "RDMA Write"), ("ib_send_bw", "Send"),
       ("ib_read_bw", "RDMA Read")]


def size_of(metric, op):
    """Message size of a bandwidth figure of @op, or None."""
    if metric == op:
        return 65536
    if metric.startswith(op + "@"):
        size = metric.split("@", 1)[1]
        return int(size) if size.isdigit() else None
    return None


def load(path):
    """{combo: (crc, {op: {size: [values]}}, [tcp values])} in file order."""
    combos = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            combo = row["combo"]
            crc, series, tcp = combos.setdefault(
                combo, (row["crc"], {op: {} for op, _ in OPS}, []))
            value = float(row["value"])
            if row["metric"] == "tcp_bw":
                tcp.append(value)
                continue
            for op, _ in OPS:
                size = size_of(row["metric"], op)
                if size is not None:
                    series[op].setdefault(size, []).append(value)
    return combos


def write_data(tmp, combos):
    """One data file per combo and op; return {(combo, op): path}."""
    files = {}
    for i, (combo, (_, series, _)) in enumerate(combos.items()):
        for op, _ in OPS:
            points = sorted(series[op].items())
            if len(points) < 2:
                continue
            path = os.path.join(tmp, "%d.%s.dat" % (i, op))
            with open(path, "w") as f:
                for size, vals in points:
                    f.write("%d %.3f %.3f %.3f\n" % (
                        size, statistics.median(vals), min(vals), max(vals)))
            files[(combo, op)] = path
    return files


def script(png, combos, files, tcp):
    lines = [
        "set terminal pngcairo noenhanced size 1500,640 font ',10'",
        "set output '%s'" % png,
        "set multiplot layout 1,%d title 'kiwi, siw, rxe and TCP between two"
        " QEMU guests (MiB/s, log scale; solid: CRC on, dashed: CRC off)'" % len(OPS),
        "set logscale xy",
        "set xrange [5:2600000]",
        "set xtics ('8 B' 8, '64 B' 64, '512 B' 512, '4 KiB' 4096,"
        " '32 KiB' 32768, '256 KiB' 262144, '1 MiB' 1048576)",
        "set format y '%g'",
        "set xlabel 'message size'",
        "set ylabel 'MiB/s (log)'",
        "set grid",
        "set key outside below font ',8'",
    ]
    for op, title in OPS:
        plots = []
        for i, (combo, (crc, _, _)) in enumerate(combos.items()):
            path = files.get((combo, op))
            if not path:
                continue
            dash = "dt 1" if crc != "off" else "dt 2"
            plots.append("'%s' using 1:2:3:4 with yerrorlines lc %d %s title '%s'"
                         % (path, i + 1, dash, "%s (CRC %s)" % (combo, crc)))
        if tcp is not None:
            plots.append("%.3f with lines lc rgb 'black' dt 3 title 'TCP"
                         " (iperf3) %.1f'" % (tcp, tcp))
        lines.append("set title '%s'" % title)
        lines.append("plot " + ", ".join(plots) if plots else
                     "plot NaN notitle")
    lines.append("unset multiplot")
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    csv_path, png = sys.argv[1], sys.argv[2]
    combos = load(csv_path)
    tcp_all = [v for _, _, tcp in combos.values() for v in tcp]
    tcp = statistics.median(tcp_all) if tcp_all else None
    with tempfile.TemporaryDirectory() as tmp:
        files = write_data(tmp, combos)
        if not files:
            print("plot: %s has no message-size sweep (make bench-sweep)"
                  % csv_path)
            return 2
        gp = os.path.join(tmp, "plot.gp")
        with open(gp, "w") as f:
            f.write(script(png, combos, files, tcp))
        if subprocess.run(["gnuplot", gp]).returncode != 0:
            print("plot: gnuplot failed", file=sys.stderr)
            return 2
    print("plot: %s" % png)
    return 0


sys.exit(main())
