#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Affiliated asynchronous events in one guest, kiwi0 on both ends over the
# guest's own address: vt_events (libibverbs over rdma_cm):
# IBV_EVENT_SRQ_LIMIT_REACHED once per armed limit (ibv_modify_srq,
# ibv_query_srq), IBV_EVENT_QP_LAST_WQE_REACHED for SRQ QPs moved to the
# error state (connected and not) and not for others, a CQ overrun's
# IBV_EVENT_CQ_ERR (once) with IBV_EVENT_QP_FATAL and the error state for
# its QP while a connection on other CQs goes on; ibv_resize_cq keeping
# unpolled completions in order, also while Sends arrive, EINVAL below
# them (ibv_rereg_mr: 68-exverbs). The lab fails the scenario on any
# kernel warning. About 15 s in the lab.
# kiwi-lab: timeout=600

. "$(dirname "$0")/lib/common.bash"

IP=${KIWI_MY_IP:-10.77.0.1}

vt_kiwi0_up

vt_run_prog vt_events 300 -a "$IP" -p 7311

vt_link_del kiwi0
vt_finish
