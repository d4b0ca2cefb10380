#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""usage: pair-table.py LABDIR CSV COMBO...

The table of tests/bench/pair.sh: reads both guests' PAIR_ID.bench files
("NAME ROUND VALUE" lines, tests/bench/pair/perf.sh) of every COMBO under
LABDIR, writes every figure to CSV and prints the medians of the rounds with
their spread, guest CPU per GiB, and the ratios kiwi/TCP and kiwi/siw with
the same CRC setting. Exit status 2 if there is no figure at all.
"""
import csv
import os
import statistics
import sys

BW = [("ib_write_bw", "write"), ("ib_send_bw", "send"), ("ib_read_bw", "read"),
      ("tcp_bw", "TCP"), ("sctp_bw", "SCTP")]
LAT = [("ib_send_lat", "send"), ("ib_write_lat", "write"), ("tcp_lat", "TCP")]
# perftest -e: both ends sleep on a completion channel, as iperf3 sleeps
# (perftest has no -e for ib_write_bw).
EVENTS = [("ib_send_bw.e", "send -e"), ("ib_read_bw.e", "read -e")]


def unit(name):
    if name.startswith("cpu."):
        return "s"
    if name.startswith("bytes."):
        return "B"
    if name.startswith("doorbells."):
        return "count"
    return "us" if "_lat" in name else "MiB/s"


def side_asks_crc(side):
    prov, _, opts = side.partition(":")
    opts = opts.split("+") if opts else []
    if prov == "kiwi":
        return "mpa_crc_off=1" not in opts
    if prov == "siw":
        return "crc" in opts
    return None


def describe(combo):
    """(providers, crc) of COMBO: crc is on when either side asks for it;
    "sctp" for DDP over SCTP, which has no MPA and whose packets SCTP
    checksums with its own CRC32c."""
    spec = combo.split("/")[0].split("@")[0].split("!")[0]
    a, b = spec.split("-", 1)
    provs = "-".join(sorted({a.split(":")[0], b.split(":")[0]}))
    if "llp=sctp" in spec:
        return provs, "sctp"
    asks = [side_asks_crc(a), side_asks_crc(b)]
    if None in asks:
        return provs, "-"
    return provs, "on" if any(asks) else "off"


def load(labdir, combo):
    """{name: {round: value}} of the client; cpu.* summed over both guests."""
    label = combo.split("/")[0].replace(":", "_").replace("=", "_")
    vals, info = {}, {}
    for side in ("client", "server"):
        path = os.path.join(labdir, side, label + ".perf.bench")
        if not os.path.exists(path):
            continue
        for line in open(path):
            f = line.split()
            if len(f) != 3:
                continue
            if f[0] == "info":
                info["%s.%s" % (f[1], side)] = f[2]
                continue
            name, rnd, v = f[0], int(f[1]), float(f[2])
            if side == "server" and not name.startswith("cpu."):
                continue
            d = vals.setdefault(name, {})
            d[rnd] = d.get(rnd, 0.0) + v if name.startswith("cpu.") else v
    return vals, info


def med(vals, name):
    v = list(vals.get(name, {}).values())
    return statistics.median(v) if v else None


def spread(vals, name):
    v = list(vals.get(name, {}).values())
    m = statistics.median(v) if v else 0
    return (max(v) - min(v)) / m * 100 if len(v) > 1 and m else None


def cell(vals, name, fmt="%.1f"):
    m = med(vals, name)
    if m is None:
        return "-"
    s = spread(vals, name)
    return (fmt % m) + ("" if s is None else " ±%.0f%%" % (s / 2))


def cpu_per_gib(vals, name):
    """Median over rounds of (CPU s of both guests) / (GiB moved). Where
    NAME.base ran (the same step moving next to nothing, perf.sh), only its
    rounds count, each less its base's CPU and octets: what moving the
    octets cost, not starting the programs and connecting."""
    cpu, nb = vals.get("cpu." + name, {}), vals.get("bytes." + name, {})
    cpu0 = vals.get("cpu." + name + ".base", {})
    nb0 = vals.get("bytes." + name + ".base", {})
    r = []
    for k in cpu:
        if cpu0 and k not in cpu0:
            continue
        c, b = cpu[k] - cpu0.get(k, 0.0), nb.get(k, 0) - nb0.get(k, 0)
        if b > 0 and c > 0:
            r.append(c / (b / 2**30))
    return statistics.median(r) if r else None


def ratio(a, b):
    return "%.2fx" % (a / b) if a is not None and b else "-"


def step_key(n):
    """Sort key of a NAME[@SIZE][.QUALIFIER][%CPU] figure name."""
    base = n.split("%")[0]
    if "@" not in base:
        return (base, 0, n)
    op, rest = base.split("@", 1)
    return (op, int(rest.split(".")[0]), n)


def sweep(data, combos, wid):
    """The BENCH_SWEEP and NAME@SIZE / NAME%CPU figures, if any; under each
    bandwidth figure its guest CPU s/GiB."""
    names = sorted({n for c in combos for n in data[c][0]
                    if ("@" in n or "%" in n or
                        n.split("%")[0].endswith((".q4", ".q16", ".bidir", ".q4.e", ".q16.e")))
                    and not n.startswith(("cpu.", "bytes."))},
                   key=step_key)
    if not names:
        return
    print("\nSweep, NAME@SIZE and NAME%CPU steps (median of the rounds they ran in;"
          " MiB/s, latency µs\n median; doorbells.*: send doorbells the kiwi client"
          " rang; %CPU: pinned to that vCPU,\n %any: not pinned; CPU s/GiB: both"
          " guests, per GiB moved, -q and -b counting every QP and direction,\n"
          " the whole step's CPU, starting and connecting included)")
    print("%-26s" % "figure" + "".join("%*s" % (wid, c) for c in combos))
    for n in names:
        print("%-26s" % n + "".join("%*s" % (wid, "%.1f" % med(data[c][0], n)
                                             if med(data[c][0], n) is not None else "-")
                                    for c in combos))
        if n.startswith(("doorbells.", "cpu.", "bytes.")) or "_bw" not in n:
            continue
        cpus = [cpu_per_gib(data[c][0], n) for c in combos]
        if any(cpus):
            print("%-26s" % "  CPU s/GiB" + "".join(
                "%*s" % (wid, "%.1f" % x if x else "-") for x in cpus))


def main():
    labdir, out, combos = sys.argv[1], sys.argv[2], sys.argv[3:]
    data = {c: load(labdir, c) for c in combos}
    rows = []
    for c in combos:
        provs, crc = describe(c)
        for name, d in sorted(data[c][0].items()):
            for rnd, v in sorted(d.items()):
                rows.append([c, provs, crc, name, unit(name), rnd, v])
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["combo", "providers", "crc", "metric", "unit", "round", "value"])
        w.writerows(rows)
    if not rows:
        print("no figures (see the logs in %s)" % labdir)
        return 2

    wid = max(len(c) for c in combos) + 2
    evs = [e for e in EVENTS if any(e[0] in data[c][0] for c in combos)]
    print("\nBandwidth, 64 KiB messages, MiB/s (median of rounds ±half the spread)")
    print("%-*s %4s" % (wid, "combo", "crc") + "".join("%14s" % h for _, h in BW + evs)
          + "%12s%12s" % ("CPU s/GiB", "TCP CPU"))
    for c in combos:
        v = data[c][0]
        cpus = [cpu_per_gib(v, n) for n in ("ib_write_bw", "tcp_bw")]
        print("%-*s %4s" % (wid, c, describe(c)[1])
              + "".join("%14s" % cell(v, n) for n, _ in BW + evs)
              + "".join("%12s" % ("%.1f" % x if x else "-") for x in cpus))
    print("(CPU s/GiB: CPU seconds of both guests per GiB moved, write and TCP, less"
          " what the\n same step moving %s messages cost (starting, connecting,"
          " tearing down); every\n benchmark process pinned to vCPU %s, RDMA and TCP"
          " alike; -e: perftest sleeping on a\n completion channel instead of polling)"
          % (os.environ.get("BENCH_CPU_BASE_ITERS", "10"), os.environ.get("BENCH_PIN", "0")))
    print("\nLatency, µs one way (RDMA 8 B, TCP 14 B): median / 99th percentile")
    print("%-*s %4s" % (wid, "combo", "crc") + "".join("%16s" % h for _, h in LAT))
    for c in combos:
        v = data[c][0]
        print("%-*s %4s" % (wid, c, describe(c)[1]) + "".join(
            "%16s" % ("%s / %s" % (cell(v, n + ".p50", "%.0f").split(" ")[0],
                                   cell(v, n + ".p99", "%.0f").split(" ")[0]))
            for n, _ in LAT))

    every = {}
    for c in combos:
        for n in ("tcp_bw", "tcp_lat.p50"):
            every.setdefault(n, []).extend(data[c][0].get(n, {}).values())
    tcp = {n: statistics.median(v) if v else None for n, v in every.items()}
    print("\nRatios (/TCP: against the TCP rounds right after that combo's, which"
          " track the host's load;\n else every TCP round of this run: %s MiB/s, %s µs;"
          " /SCTP: against iperf3 over SCTP in\n the rounds of a DDP over SCTP combo)" % (
              "%.1f" % tcp["tcp_bw"] if tcp.get("tcp_bw") else "-",
              "%.0f" % tcp["tcp_lat.p50"] if tcp.get("tcp_lat.p50") else "-"))
    rw = 2 * wid
    print("%-*s %4s %10s %10s %10s %10s %10s" % (
        rw, "combo", "crc", "write", "send", "read", "send_lat", "write_lat")
          + "".join(" %10s" % h for _, h in evs))
    for c in combos:
        provs, crc = describe(c)
        if provs != "kiwi":
            continue
        v = data[c][0]
        own_bw = med(v, "tcp_bw") or tcp.get("tcp_bw")
        own_lat = med(v, "tcp_lat.p50") or tcp.get("tcp_lat.p50")
        print("%-*s %4s" % (rw, c + " /TCP", crc) + "".join(
            " %10s" % ratio(med(v, n), own_bw) for n, _ in BW[:3]) + "".join(
            " %10s" % ratio(med(v, n + ".p50"), own_lat) for n in
            ("ib_send_lat", "ib_write_lat")) + "".join(
            " %10s" % ratio(med(v, n), own_bw) for n, _ in evs))
        if med(v, "sctp_bw"):
            print("%-*s %4s" % (rw, c + " /SCTP", crc) + "".join(
                " %10s" % ratio(med(v, n), med(v, "sctp_bw")) for n, _ in BW[:3]))
        for s in combos:
            if describe(s) != ("siw", crc):
                continue
            w = data[s][0]
            print("%-*s %4s" % (rw, c + " /" + s, crc) + "".join(
                " %10s" % ratio(med(v, n), med(w, n)) for n, _ in BW[:3]) + "".join(
                " %10s" % ratio(med(v, n + ".p50"), med(w, n + ".p50")) for n in
                ("ib_send_lat", "ib_write_lat")) + "".join(
                " %10s" % ratio(med(v, n), med(w, n)) for n, _ in evs))
    sweep(data, combos, wid)
    drivers = sorted({d for c in combos for k, d in data[c][1].items()
                      if k.startswith("crc32c.")})
    print("\ncrc32c driver in the guests: %s (TCG emulates SSE4.2's crc32 instruction)"
          % (", ".join(drivers) or "unknown"))
    cycles = crc32c_cycles(data, combos)
    if cycles:
        print("crc32c TSC cycles per octet, 4 KiB blocks (tcrypt; median over the guests"
              " of every combo): " + ", ".join("%s %s" % dc for dc in cycles))
    print("CSV: %s" % out)
    print("-: no figure (the step failed, or perftest could not calibrate its clock")
    print("   in five tries under TCG; the combo's log says which).")
    return 0


def crc32c_cycles(data, combos):
    """[(driver, median cycles per octet)] from the guests' tcrypt runs."""
    per = {}
    for c in combos:
        for k, v in data[c][1].items():
            if k.startswith("crc32c_cycles_") and v != "-":
                per.setdefault(k[len("crc32c_cycles_"):].rsplit(".", 1)[0],
                               []).append(float(v))
    return [(d, "%.2f" % statistics.median(v)) for d, v in sorted(per.items())]


sys.exit(main())
