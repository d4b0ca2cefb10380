#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A peer's in-flight accesses racing the owner's change of its memory
# (Documentation/datapath.md, invalidation and in-flight accesses), kiwi0
# on both ends over the guest's own address: vt_rerace. A thread keeps
# eight 16 KiB RDMA Writes and Reads in flight into a 64 KiB MR (or a
# window over it) while the owner, after a few ms, reregisters the MR
# to other memory (ibv_rereg_mr CHANGE_TRANSLATION), reregisters it with
# new keys (CHANGE_ACCESS), invalidates a type 2 window (IBV_WR_LOCAL_INV,
# its completion polled), has the peer invalidate it (the peer's Send with
# Invalidate among its Writes and Reads, the owner's receive completion
# polled), unbinds a type 1 window (a zero-length ibv_bind_mw, its
# completion polled) or deallocates it (ibv_dealloc_mw), round by round,
# and writes a guard pattern over the old memory as soon as that returns. Every round: the stream ends
# with an error completion (the owner's Terminate), no successful Read
# brought the guard back, no Write landed in the guard, the new
# translation is untouched. VT_RERACE_ROUNDS rounds (24 by default).
# Then, with kiwi_vmtest.ko (tests/vm/kmod) on a kernel with kprobes,
# 12 rounds in which the next kiwi_mr_page call before each change spins
# 60 ms after its check, holding a copy that passed it open across the
# change (vt_rerace -D): the change must wait for it (kiwi_mr_quiesce(),
# the windows' grace period). The lab fails the scenario on any kernel
# warning.
# kiwi-lab: timeout=600

. "$(dirname "$0")/lib/common.bash"

IP=${KIWI_MY_IP:-10.77.0.1}
KMOD=$KIWI_BUILD/vmkmod/$(uname -r)/kiwi_vmtest.ko
VP=/sys/module/kiwi_vmtest/parameters

vt_kiwi0_up

vt_run_prog vt_rerace 400 -a "$IP" -p 7311 -n "${VT_RERACE_ROUNDS:-24}"

[ -f "$KMOD" ] || vt_die "no $KMOD (make -C tests/vm/kmod)"
insmod "$KMOD" dev=kiwi0 addr="$IP" port=7312 || vt_die "insmod $KMOD"
if [ "$(cat $VP/probes)" = Y ]; then
	vt_run_prog vt_rerace 400 -a "$IP" -p 7313 -n 12 -D "$VP"
else
	vt_log "SKIP the held copies: this kernel has no kprobes"
fi
rmmod kiwi_vmtest || vt_fail "rmmod kiwi_vmtest"

vt_link_del kiwi0
vt_finish
