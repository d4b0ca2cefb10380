#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An ABI that can grow (Documentation/abi.md, kiwi(7)): libkiwi and kiwi.ko
# use the context features both have. In one guest, kiwi0 on both ends
# over the guest's own address, with 16 KiB socket buffers so that the
# first Write stalls the send engine (as in 62-ops), vt_abifeat (libibverbs
# over rdma_cm) posts 64 RDMA Writes of 64 KiB one by one and counts their
# doorbell write(2) calls, then checks every Write's data and a Send:
# 1. kiwi.ko loaded with abi_features=0 answers as a kiwi.ko without the
#    doorbell feature: libkiwi falls back to ringing on every post
#    (exactly 64) and the traffic works;
# 2. abi_features back to all, libkiwi limited by KIWI_ABI_FEATURES=0,
#    which also makes it ask with the first version's (shorter) context
#    response, as a libkiwi from before the features: kiwi.ko answers it
#    and every post rings;
# 3. all features on both sides: fewer than 64 calls, libkiwi skipped the
#    doorbell while the engine was stalled (so 1 and 2 show the masks at
#    work, not a path that rings anyway); the same with
#    KIWI_ABI_FEATURES=0x1, a mask that keeps the feature.
# abi_features and the socket buffers are left as they were. About 10 s in
# the lab.
# kiwi-lab: timeout=600

. "$(dirname "$0")/lib/common.bash"

IP=${KIWI_MY_IP:-10.77.0.1}
P=/sys/module/kiwi/parameters/abi_features

wmem=$(sysctl -n net.ipv4.tcp_wmem)
rmem=$(sysctl -n net.ipv4.tcp_rmem)
sysctl -qw net.ipv4.tcp_wmem="4096 16384 16384" \
	net.ipv4.tcp_rmem="4096 16384 16384"

vt_clean_links
grep -q '^kiwi ' /proc/modules && modprobe -r kiwi
vt_check "modprobe kiwi abi_features=0" modprobe kiwi abi_features=0
vt_eq "abi_features parameter" "$(cat "$P")" 0
vt_kiwi0_up
vt_run_prog vt_abifeat 300 -a "$IP" -p 7309 -m every

echo 1 > "$P"
vt_eq "abi_features parameter, back to the default" "$(cat "$P")" 1
KIWI_ABI_FEATURES=0 vt_run_prog vt_abifeat 300 -a "$IP" -p 7309 -m every
vt_run_prog vt_abifeat 300 -a "$IP" -p 7309 -m fewer
KIWI_ABI_FEATURES=0x1 vt_run_prog vt_abifeat 300 -a "$IP" -p 7309 -m fewer

sysctl -qw net.ipv4.tcp_wmem="$wmem" net.ipv4.tcp_rmem="$rmem"
vt_link_del kiwi0
vt_finish
