#!/bin/bash
# SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause
#
# QEMU lab scenario: rdma-core's own pyverbs tests (Debian ships the v44
# suite in /usr/share/doc/rdma-core/tests) against kiwi0 through libkiwi.
# Only the object/query modules apply to an unconnected iWARP device; the
# traffic tests connect QPs IB-style and cannot work on iWARP. Unsupported
# features must make the tests skip (EOPNOTSUPP), never fail.
set -u

modules=${KIWI_PYVERBS_TESTS:-"tests.test_device tests.test_pd tests.test_cq.CQAPITest tests.test_mr.MRTest.test_reg_mr_bad_flags tests.test_qp.QPTest tests.test_cqex tests.test_qpex"}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r /usr/share/doc/rdma-core/tests "$work/tests"
gunzip -f "$work"/tests/*.gz

rdma link add kiwi0 type kiwi netdev eth0 || { echo "FAIL rdma link add"; exit 1; }
cd "$work"
# shellcheck disable=SC2086 # $modules is a list
/usr/bin/python3 tests/run_tests.py --dev kiwi0 -v $modules 2>&1 | tee "$work/out"
rc=${PIPESTATUS[0]}
rdma link delete kiwi0
grep -E '^(Ran|OK|FAILED)' "$work/out"
exit "$rc"
