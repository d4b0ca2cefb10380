#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Memory windows in one guest, kiwi0 on both ends over the guest's own
# address: vt_mw (libibverbs over rdma_cm). Device flags and max_mw; type
# 1 (ibv_bind_mw, new key, peer Write and Read through the window, rebind,
# use from another QP of the PD, zero-length unbind); type 2
# (IBV_WR_BIND_MW under the consumer's key, Local Invalidate, Send with
# Invalidate reported as IBV_WC_WITH_INV, rebinds); dereg_mr refused while
# a window is bound, dealloc of a bound window; eight refused accesses
# (bounds, rights, after Local Invalidate, after Send with Invalidate,
# after unbind, old rkey, after dealloc, a type 2 window from another QP),
# each with the owner's Terminate checked in `rdma res show qp -dd` and
# the memory unchanged; six binds the kernel refuses (IBV_WC_MW_BIND_ERR)
# and two libkiwi refuses; ibv_wr_bind_mw of two type 2 windows in one
# batch, peer access, ibv_wr_local_inv and a refused Read after it, a
# type 1 window refused by the builder, a user MR's Local Invalidate alike
# from ibv_wr_local_inv and ibv_post_send; rdma_disconnect right behind a
# Local Invalidate of a type 2 window closes the stream gracefully once it
# completed (the peer sees DISCONNECTED within 5 s, drain_timeout 10 s).
# About 3 s in the lab (8 s on the debug kernel).

# kiwi-lab: timeout=600

. "$(dirname "$0")/lib/common.bash"

IP=${KIWI_MY_IP:-10.77.0.1}

vt_kiwi0_up
# A close that waits for the SQ must not last until drain_timeout:
# vt_mw's close behind a Local Invalidate tells 10 s from under 5.
echo 10 > /sys/class/infiniband/kiwi0/kiwi/drain_timeout

vt_run_prog vt_mw 300 -a "$IP" -p 7307

vt_link_del kiwi0
vt_finish
