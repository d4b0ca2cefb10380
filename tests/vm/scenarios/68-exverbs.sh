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
# 0/1/09) is checked in the kernel log. Then vt_rereg: ibv_rereg_mr with
# IBV_REREG_MR_CHANGE_ACCESS (rights removed: the peer's Write and Read
# refused with the owner's Terminate, the old rkey refused; write rights
# added to a read-only MR: the peer's Write lands), _CHANGE_TRANSLATION
# (the peer's Write lands in the new buffer only; the old length refused),
# _CHANGE_PD (a QP of the new PD reads, one of the old PD is refused) and
# six refusals that leave the MR working (EINVAL three times, EOPNOTSUPP,
# EBUSY with a window bound, EFAULT). About 5 s in the lab.
# kiwi-lab: timeout=600

. "$(dirname "$0")/lib/common.bash"

IP=${KIWI_MY_IP:-10.77.0.1}

vt_kiwi0_up

dmesg -C
vt_run_prog vt_exverbs 300 -a "$IP" -p 7307
vt_run_prog vt_rereg 300 -a "$IP" -p 7308

if dmesg | grep -q "Terminate from peer: layer 0 type 1 code 0x09"; then
	vt_pass "Terminate 0/1/09 (STag cannot be invalidated) received"
else
	vt_fail "no Terminate 0/1/09 in the kernel log"
fi

vt_link_del kiwi0
vt_finish
