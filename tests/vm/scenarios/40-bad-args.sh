#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Invalid verbs arguments are refused with the right errno (vt_badargs):
# CQ/QP/SRQ sizes one beyond the limits ibv_query_device reports (EINVAL),
# remote write without local write (EINVAL), regions over unmapped or
# read-only memory (EFAULT), RLIMIT_MEMLOCK for an unprivileged user
# (ENOMEM, EPERM at 0), QP types other than RC (EOPNOTSUPP), cqe=-1 and
# MR length beyond max_mr_size and an MR whose iova + length passes 2^64
# (EINVAL; one ending at 2^64 - 1 registers). Nothing leaks.

. "$(dirname "$0")/lib/common.bash"

vt_need_progs
vt_clean_links
vt_link_add kiwi0 eth0 || vt_die "cannot create kiwi0"
base=$(vt_res kiwi0)

"$VT_PROGS/vt_badargs" -d kiwi0
vt_eq "vt_badargs exit status" "$?" 0
vt_eq "resources after vt_badargs" "$(vt_res kiwi0)" "$base"

vt_link_del kiwi0
vt_finish
