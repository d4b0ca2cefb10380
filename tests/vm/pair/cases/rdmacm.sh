#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdmacm-utils in both directions: ucmatose (a few connections, Sends of
# several sizes) and rdma_server/rdma_client (the rdma_cm "simple" verbs
# example: one Send each way). In CI (pair_both_ci: KIWI_VM_CI=1, the same
# settings on both guests) the first direction only: the second runs the
# same code, guests swapped.

. "$KIWI_SRC/tests/vm/pair/lib.bash"

conns=4
msgs=100
[ "$PAIR_QUICK" = 1 ] && msgs=10

pair_up
# Not 65536: ucmatose -c 4 -S 65536 fails to connect on siw<->siw
# (RDMA_CM_EVENT_CONNECT_ERROR -22), so it proves nothing about kiwi.
for size in 100 4096; do
	pair_both_ci "ucmatose.$size" 240 \
		ucmatose -b "{me}" -p "{port}" -c "$conns" -C "$msgs" -S "$size" -- \
		ucmatose -s "{peer}" -p "{port}" -c "$conns" -C "$msgs" -S "$size"
done
pair_both_ci rdma_server 120 \
	rdma_server -s "{me}" -p "{port}" -- \
	rdma_client -s "{peer}" -p "{port}"
pair_down
vt_finish
