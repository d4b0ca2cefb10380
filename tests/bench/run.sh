#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make bench: build and run the wire-library benchmark (tests/bench/
# proto_bench.cc, Google Benchmark) and print a table of throughputs with the
# ratio decode+CRC(64 KiB) / memcpy(64 KiB). Numbers, never pass/fail; the
# exit status is non-zero only if the benchmark cannot be built or run.
#
# Each benchmark runs BENCH_REPS times and the median is shown (the machine
# is shared, single runs are noisy).
#
# Environment: KIWI_BUILD (CMake build dir, default build/user), BENCH_MIN_TIME
# (seconds per repetition, default 0.2), BENCH_REPS (default 3), BENCH_JOBS
# (default 2).
set -u -o pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${KIWI_BUILD:-$ROOT/build/user}
MIN_TIME=${BENCH_MIN_TIME:-0.2}
REPS=${BENCH_REPS:-3}
JOBS=${BENCH_JOBS:-2}

die() {
	echo "bench: $*" >&2
	exit 2
}

# Build proto_bench in the project build; if the whole-project configure
# fails (another component broken), build just kernel/proto + tests/bench in
# a private directory.
build_bench() {
	if cmake -S "$ROOT" -B "$BUILD" >/dev/null 2>&1 &&
	   cmake --build "$BUILD" --target proto_bench -j "$JOBS" >/dev/null 2>&1; then
		BENCH_BIN=$BUILD/tests/bench/proto_bench
		return 0
	fi
	echo "bench: project build failed, building proto_bench alone" >&2
	SCRATCH=$(mktemp -d /tmp/kiwi-bench.XXXXXX) || die "mktemp failed"
	cat >"$SCRATCH/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(kiwi_bench C CXX)
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_C_STANDARD 11)
set(KIWI_UAPI_INCLUDE $ROOT/include/uapi)
add_subdirectory($ROOT/kernel/proto proto)
add_subdirectory($ROOT/tests/bench bench)
CMAKE
	cmake -S "$SCRATCH" -B "$SCRATCH/build" -DCMAKE_BUILD_TYPE=Release >/dev/null ||
		die "configure failed"
	cmake --build "$SCRATCH/build" --target proto_bench -j "$JOBS" >/dev/null ||
		die "build failed"
	BENCH_BIN=$SCRATCH/build/bench/proto_bench
}

build_bench
[ -x "$BENCH_BIN" ] || die "no benchmark binary"
JSON=$(mktemp /tmp/kiwi-bench-json.XXXXXX) || die "mktemp failed"
trap 'rm -f "$JSON"; [ -n "${SCRATCH:-}" ] && rm -rf "$SCRATCH"' EXIT

echo "== kiwi wire library benchmark ($(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
"$BENCH_BIN" --benchmark_min_time="$MIN_TIME" --benchmark_repetitions="$REPS" \
	--benchmark_report_aggregates_only=true --benchmark_format=json \
	--benchmark_out="$JSON" --benchmark_out_format=json >/dev/null ||
	die "benchmark run failed"

python3 - "$JSON" <<'PY' || die "cannot format results"
import json, sys

runs = json.load(open(sys.argv[1]))["benchmarks"]
names = {
    "BM_Memcpy": "memcpy (hot)",
    "BM_MemcpyCold": "memcpy (cold, 64 MiB set)",
    "BM_Crc32c": "crc32c only",
    "BM_BuildCrc": "FPDU build+CRC",
    "BM_DecodeCrc": "FPDU decode+CRC",
    "BM_DecodeCrcPlace": "FPDU decode+CRC+place",
}
rate = {}
print("%-28s %8s %7s %8s %12s %10s" % ("operation", "payload", "ULPDU", "markers",
                                      "GB/s (CPU)", "ns/op"))
print("(median of the repetitions, CPU time)")
for r in runs:
    if r.get("error_occurred"):
        print("%s: ERROR %s" % (r["name"], r.get("error_message")))
        continue
    if r.get("run_type") == "aggregate" and r.get("aggregate_name") != "median":
        continue
    parts = [p for p in r.get("run_name", r["name"]).split("/")
             if not p.startswith("repeats:")]
    args = dict(p.split(":") for p in parts[1:])
    size = int(args["bytes"])
    gbs = r["bytes_per_second"] / 1e9
    ns = r["cpu_time"] if r["time_unit"] == "ns" else r["cpu_time"] * 1e3
    key = (parts[0], size, args.get("ulpdu"), args.get("markers"))
    rate[key] = gbs
    print("%-28s %8s %7s %8s %12.2f %10.0f" % (
        names.get(parts[0], parts[0]), "%dK" % (size // 1024),
        args.get("ulpdu", "-"), {"0": "no", "1": "yes"}.get(args.get("markers"), "-"),
        gbs, ns))
hot = rate.get(("BM_Memcpy", 65536, None, None))
cold = rate.get(("BM_MemcpyCold", 65536, None, None))
for m in ("0", "1"):
    dec = rate.get(("BM_DecodeCrc", 65536, "64768", m))
    if dec and hot and cold:
        print("ratio decode+CRC(64KiB, markers %s) / memcpy(64KiB): %.2f hot, %.2f cold (target >= 0.5)"
              % ("on" if m == "1" else "off", dec / hot, dec / cold))
PY
