#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Judge the KUnit KTAP output of kiwi_kunit.ko found in a kernel log.

usage: ktap.py KERNEL_LOG SOURCE.c...

Every `struct kunit_suite` in the SOURCE files must appear in KERNEL_LOG
with as many case results as its plan announces. Prints one line per suite,
the diagnostics of each failed case, and exits 1 if any case failed, any
planned case did not report, or any suite is missing. Case counts go to the
last line: 'cases: N passed, N failed, N skipped'.
"""

import re
import sys

STAMP = re.compile(r'^(<\d+>)?\[\s*\d+\.\d+\]\s?')
SUBTEST = re.compile(r'^    # Subtest: (\S+)$')
PLAN = re.compile(r'^    1\.\.(\d+)$')
CASE = re.compile(r'^    (not ok|ok) \d+ (\S+)(?: # SKIP(.*))?$')
DIAG = re.compile(r'^\s+# (\S+?): (.*)$')
SUITE_END = re.compile(r'^(not ok|ok) \d+ (\S+)(?: # SKIP.*)?$')
SUITE_DEF = re.compile(
    r'struct\s+kunit_suite\s+\w+\s*=\s*\{[^}]*?\.name\s*=\s*"([^"]+)"', re.S)


class Suite:
    def __init__(self, name):
        self.name = name
        self.plan = None
        self.cases = []  # (case, status) with status ok|fail|skip
        self.diag = {}  # case -> diagnostic lines
        self.verdict = None

    def count(self, status):
        return sum(1 for _, s in self.cases if s == status)


def expected_suites(paths):
    names = []
    for path in paths:
        with open(path, encoding='utf-8') as f:
            names += SUITE_DEF.findall(f.read())
    return names


def parse(lines):
    suites = {}
    cur = None
    diag_case = None
    for raw in lines:
        line = STAMP.sub('', raw.rstrip('\n'))
        m = SUBTEST.match(line)
        if m:
            cur = suites.setdefault(m.group(1), Suite(m.group(1)))
            continue
        if cur is None:
            continue
        m = PLAN.match(line)
        if m and cur.plan is None:
            cur.plan = int(m.group(1))
            continue
        m = CASE.match(line)
        if m:
            status = 'skip' if m.group(3) is not None else \
                ('ok' if m.group(1) == 'ok' else 'fail')
            cur.cases.append((m.group(2), status))
            diag_case = None
            continue
        m = DIAG.match(line)
        if m:
            diag_case = m.group(1)
            cur.diag.setdefault(diag_case, []).append(line.strip())
            continue
        if diag_case and line.startswith('    '):
            cur.diag[diag_case].append(line.strip())
            continue
        m = SUITE_END.match(line)
        if m and m.group(2) == cur.name:
            cur.verdict = m.group(1)
            cur = None
    return suites


def judge(suites, wanted):
    passed = failed = skipped = 0
    bad = False
    for name in wanted:
        s = suites.get(name)
        if s is None:
            print(f'FAIL suite {name}: missing from the kernel log')
            failed += 1
            bad = True
            continue
        ok, fail, skip = s.count('ok'), s.count('fail'), s.count('skip')
        lost = max((s.plan or 0) - len(s.cases), 0)
        passed, failed, skipped = passed + ok, failed + fail + lost, \
            skipped + skip
        state = 'ok' if not fail and not lost and s.verdict else 'FAIL'
        print(f'{state} suite {name}: {ok} passed, {fail} failed, '
              f'{skip} skipped of {s.plan}'
              + ('' if s.verdict else ' (suite did not finish)'))
        for case, status in s.cases:
            if status == 'fail':
                print(f'  not ok {case}')
                for d in s.diag.get(case, []):
                    print(f'    {d}')
        if lost:
            print(f'  {lost} planned case(s) never reported')
        bad = bad or state == 'FAIL'
    for name in sorted(set(suites) - set(wanted)):
        print(f'note: suite {name} in the log is not defined in tests/kunit')
    print(f'cases: {passed} passed, {failed} failed, {skipped} skipped')
    return not bad and passed + failed > 0


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding='utf-8', errors='replace') as f:
        suites = parse(f)
    wanted = expected_suites(sys.argv[2:])
    if not wanted:
        sys.exit('ktap.py: no struct kunit_suite in the sources')
    sys.exit(0 if judge(suites, wanted) else 1)


if __name__ == '__main__':
    main()
