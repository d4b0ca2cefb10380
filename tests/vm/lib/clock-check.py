#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check that CLOCK_MONOTONIC never runs backwards between two vCPUs.

The lab boots its guests with tsc=reliable (scripts/lab/run-scenario), so
they read time from the TSC without Linux's check that the vCPUs' TSCs
agree. Two processes, pinned to two CPUs, pass a timestamp back and forth
through pipes: each one reads the clock after it received the other's
reading, so its own must not be smaller. Exit status 1 if one was.

usage: clock-check.py [ROUNDS]
"""

import os
import struct
import sys
import time


def bounce(cpu, rx, tx, rounds, first):
    """Receive the token ROUNDS times; return how often time ran backwards.

    The first side sends before its first receipt, so it must not answer its
    last one: the other side has received all its rounds and may be gone.
    """
    os.sched_setaffinity(0, {cpu})
    backwards = 0
    if first:
        os.write(tx, struct.pack("q", time.monotonic_ns()))
    for done in range(1, rounds + 1):
        data = os.read(rx, 8)
        if len(data) != 8:
            break
        now = time.monotonic_ns()
        if now < struct.unpack("q", data)[0]:
            backwards += 1
        if not (first and done == rounds):
            os.write(tx, struct.pack("q", time.monotonic_ns()))
    return backwards


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        print("clock-check: one CPU, nothing to compare")
        return 0
    a_rx, b_tx = os.pipe()
    b_rx, a_tx = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(a_rx)
        os.close(a_tx)
        os._exit(min(bounce(cpus[1], b_rx, b_tx, rounds, False), 100))
    os.close(b_rx)
    os.close(b_tx)
    back_a = bounce(cpus[0], a_rx, a_tx, rounds, True)
    os.close(a_tx)
    _, status = os.waitpid(pid, 0)
    back_b = os.waitstatus_to_exitcode(status)
    print(f"clock-check: {2 * rounds} hand-offs between CPU {cpus[0]} and "
          f"CPU {cpus[1]}, CLOCK_MONOTONIC ran backwards {back_a + back_b} times")
    return 1 if back_a or back_b else 0


if __name__ == "__main__":
    sys.exit(main())
