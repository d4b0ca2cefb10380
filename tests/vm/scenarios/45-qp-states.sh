#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# QP state machine without a connection (vt_qpstate): RESET/INIT at
# creation, INIT with the iw_cm attribute mask, RTS refused with EINVAL,
# ERR, back to RESET and INIT, out-of-range state refused, each checked
# with ibv_query_qp; a Send posted in INIT is refused and dropped.

. "$(dirname "$0")/lib/common.bash"

vt_need_progs
vt_clean_links
vt_link_add kiwi0 eth0 || vt_die "cannot create kiwi0"
base=$(vt_res kiwi0)

"$VT_PROGS/vt_qpstate" -d kiwi0
vt_eq "vt_qpstate exit status" "$?" 0
vt_eq "resources after vt_qpstate" "$(vt_res kiwi0)" "$base"

vt_link_del kiwi0
vt_finish
