#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel verbs the kernel ULPs use (tests/vm/kmod/kiwi_kverbs.c), over
# a loopback connection through kiwi0's own address: kernel QPs and CQs in
# every poll context (DIRECT, SOFTIRQ, WORKQUEUE, UNBOUND_WORKQUEUE); Sends
# posted from process context, with interrupts off, from a softirq and from
# a hard interrupt; fast registration with partial first and last pages,
# Send with Invalidate (IB_WC_WITH_INVALIDATE), Read with Invalidate,
# Local Invalidate (also between two Sends in one post),
# max_fast_reg_page_list_len; ib_drain_qp/sq/rq with the flushes in order;
# a receive WR with a bad lkey completes with IB_WC_LOC_PROT_ERR (RQ and
# SRQ); a Local Invalidate whose QP fails right after it (modify to ERR, a
# failing WR) completes once, everything in posted order; RFC 7306 atomics (Fetch-and-Add,
# Compare-and-Swap, and their masked forms: IB_WC_MASKED_*, the target
# added field by field, compared and swapped under the masks) into a
# fast-reg MR; the
# asynchronous events a kernel consumer gets: ib_modify_srq's IB_SRQ_LIMIT
# raises IB_EVENT_SRQ_LIMIT_REACHED once, at the Send that leaves fewer
# receives, and disarms itself; ib_resize_cq keeps the completions not
# polled yet, in order, and refuses a size below them; an SRQ QP moved to
# the error state gets IB_EVENT_QP_LAST_WQE_REACHED once; a CQ overrun
# raises IB_EVENT_CQ_ERR once, IB_EVENT_QP_FATAL and the error state for
# its QP, and keeps the completions it had room for; a batch of flushes that
# fills an armed CQ's last entry and overruns it calls the completion
# handler too; the SRQ receives a destroyed QP took and completed, never
# polled, go back on the SRQ and a new QP receives into them. The module prints one line per
# check and loads only if all passed. The kiwi_post_send and kiwi_post_recv
# tracepoints record the kernel consumer's work requests meanwhile.

. "$(dirname "$0")/lib/common.bash"

ko=$KIWI_BUILD/vmkmod/$(uname -r)/kiwi_kverbs.ko
[ -f "$ko" ] || vt_die "no $ko (make -C tests/vm/kmod KDIR=<this kernel's tree>)"
IP=${KIWI_MY_IP:-10.77.0.1}

vt_clean_links
grep -q '^kiwi ' /proc/modules || vt_check "modprobe kiwi" modprobe kiwi
vt_link_add kiwi0 eth0 || vt_die "no kiwi0"
base=$(vt_res kiwi0)

TRACE=/sys/kernel/tracing
echo > "$TRACE/trace"
for ev in kiwi_post_send kiwi_post_recv; do
	echo 1 > "$TRACE/events/kiwi/$ev/enable"
done
before=$(dmesg | wc -l)
timeout 300 insmod "$ko" dev=kiwi0 addr="$IP" port=19870
rc=$?
dmesg | tail -n "+$((before + 1))" | grep -E 'kiwi_kverbs: ' | sed 's/^\[[^]]*\] //' > "$VT_TMP/kv.out"
sed "s/^/[$VT_NAME] /" "$VT_TMP/kv.out"
vt_eq "insmod kiwi_kverbs (every check passed)" "$rc" 0
# Four poll contexts of 35 checks each, two more for the page list limit,
# four for the bad receive on an RQ, three on an SRQ, six each for the
# Local Invalidate when the QP fails (modify to ERR, a failing WR), twelve
# for the SRQ limit, resize_cq and last WQE, seven for the CQ overrun,
# ten for the SRQ receives a destroyed QP gives back.
summary=$(grep -oE '[0-9]+ passed, [0-9]+ failed' "$VT_TMP/kv.out" | tail -n 1)
vt_eq "kiwi_kverbs summary" "$summary" "201 passed, 0 failed"
[ -d /sys/module/kiwi_kverbs ] && rmmod kiwi_kverbs
for ev in kiwi_post_send kiwi_post_recv; do
	echo 0 > "$TRACE/events/kiwi/$ev/enable"
done
# A Send (IB_WR_SEND 2) and a receive (opcode -1) of a kiwi0 QP.
vt_check "tracepoint kiwi_post_send: a kernel Send on kiwi0" \
	grep -qE 'kiwi_post_send: dev=kiwi0 qpn=[0-9]+ wr_id=0x[0-9a-f]+ opcode=2 num_sge=[0-9]+' \
	"$TRACE/trace"
vt_check "tracepoint kiwi_post_recv: a kernel receive on kiwi0" \
	grep -qE 'kiwi_post_recv: dev=kiwi0 qpn=[0-9]+ wr_id=0x[0-9a-f]+ opcode=-1 num_sge=[0-9]+' \
	"$TRACE/trace"
for ev in kiwi_post_send kiwi_post_recv; do
	grep -m 1 -o "$ev: .*" "$TRACE/trace" | sed "s/^/[$VT_NAME]     /"
done
vt_eq "resources after kiwi_kverbs" "$(vt_res kiwi0)" "$base"

vt_link_del kiwi0
vt_finish
