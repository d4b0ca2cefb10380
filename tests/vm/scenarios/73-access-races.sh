#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A peer's in-flight accesses racing the owner's change of its memory
# (Documentation/datapath.md, invalidation and in-flight accesses), kiwi0
# on both ends over the guest's own address: vt_rerace. A thread keeps
# eight 16 KiB RDMA Writes and Reads in flight into a 64 KiB MR (or a type
# 2 window over it) while the owner, after a few ms, reregisters the MR
# to other memory (ibv_rereg_mr CHANGE_TRANSLATION), reregisters it with
# new keys (CHANGE_ACCESS) or invalidates the window (IBV_WR_LOCAL_INV,
# its completion polled), round by round, and writes a guard pattern over
# the old memory as soon as that returns. Every round: the stream ends
# with an error completion (the owner's Terminate), no successful Read
# brought the guard back, no Write landed in the guard, the new
# translation is untouched. VT_RERACE_ROUNDS rounds (24 by default); the
# lab fails the scenario on any kernel warning. About 20 s in the lab.
# kiwi-lab: timeout=600

. "$(dirname "$0")/lib/common.bash"

IP=${KIWI_MY_IP:-10.77.0.1}

vt_kiwi0_up

vt_run_prog vt_rerace 400 -a "$IP" -p 7311 -n "${VT_RERACE_ROUNDS:-24}"

vt_link_del kiwi0
vt_finish
