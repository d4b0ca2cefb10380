#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The extended verbs API in one guest, kiwi0 on both ends over the guest's
# own address: vt_exverbs (libibverbs over rdma_cm): ibv_query_device_ex;
# the refusals of ibv_create_cq_ex (timestamps, CVLAN, flow tag, tag
# matching, IGNORE_OVERRUN, parent domains: EOPNOTSUPP; unknown bits:
# EINVAL) and ibv_create_qp_ex (TSO, atomic write, XRC,
# creation flags, UD: EOPNOTSUPP; unknown bits: EINVAL); ibv_create_cq_ex
# CQs read with ibv_start_poll/next_poll/end_poll and every accessor kiwi
# offers; every ibv_wr_* builder kiwi offers but the windows' (63-mw), a batch of seven WRs in one
# ibv_wr_start/ibv_wr_complete (one doorbell write), Read, atomics;
# ibv_wr_abort and failing batches post nothing; a Send with Invalidate
# naming a user MR, which the responder refuses to invalidate: its
# Terminate (RDMAP remote protection, "STag cannot be invalidated",
# 0/1/09) is checked in the kernel log. About 5 s in the lab.
# kiwi-lab: timeout=600

. "$(dirname "$0")/lib/common.bash"

IP=${KIWI_MY_IP:-10.77.0.1}

vt_kiwi0_up

dmesg -C
vt_run_prog vt_exverbs 300 -a "$IP" -p 7307

if dmesg | grep -q "Terminate from peer: layer 0 type 1 code 0x09"; then
	vt_pass "Terminate 0/1/09 (STag cannot be invalidated) received"
else
	vt_fail "no Terminate 0/1/09 in the kernel log"
fi

vt_link_del kiwi0
vt_finish
