# SPDX-License-Identifier: GPL-2.0
"""Watch a test program's memory for a pattern:
python3 mem-watch.py INFO KEY HEX FLAG [SECONDS]

INFO is a key=value file naming the program's pid ("pid=") and the
address KEY ("target_addr=0x...", as vt_target writes it). Polls the
program's memory (/proc/PID/mem, root) until the octets at that address
equal HEX, then creates the file FLAG and exits 0; exits 1 if they did not
within SECONDS (default 30). tests/vm/pair/cases/sctp.sh uses it to see an
RDMA Write placed while DDP segments before it are still missing.
"""
import os
import sys
import time


def main():
    info_path, key, pattern, flag = sys.argv[1:5]
    limit = float(sys.argv[5]) if len(sys.argv) > 5 else 30
    want = bytes.fromhex(pattern)
    end = time.time() + limit
    info = {}
    while time.time() < end and not ("pid" in info and key in info):
        try:
            with open(info_path) as f:
                info = dict(l.strip().partition("=")[::2] for l in f if "=" in l)
        except OSError:
            pass
        time.sleep(0.1)
    if "pid" not in info or key not in info:
        print("mem-watch: no %s in %s" % (key, info_path))
        return 1
    addr = int(info[key], 16)
    # Unbuffered reads: a buffered file would serve the same octets again.
    fd = os.open("/proc/%s/mem" % info["pid"], os.O_RDONLY)
    try:
        while time.time() < end:
            if os.pread(fd, len(want), addr) == want:
                open(flag, "w").close()
                print("mem-watch: pattern at %#x" % addr)
                return 0
            time.sleep(0.05)
    finally:
        os.close(fd)
    print("mem-watch: no pattern at %#x within %.0f s" % (addr, limit))
    return 1


if __name__ == "__main__":
    sys.exit(main())
