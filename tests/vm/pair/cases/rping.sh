#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rping -v in both directions (server on the lab's server guest, then on the
# client guest): 1000 iterations (100 quick, 10000 full; each is a Send,
# an RDMA Read, an RDMA Write and a Send), the payload checked by rping -v
# against the pattern; both sides must print every iteration. In CI
# (pair_ci_one_way: KIWI_VM_CI=1, the same settings on both guests) the
# first direction only: the second runs the same code, guests swapped.

. "$KIWI_SRC/tests/vm/pair/lib.bash"

count=1000
[ "$PAIR_QUICK" = 1 ] && count=100
[ "$PAIR_MODE" = full ] && count=10000

# rping_lines NAME: how many ping data lines the step's output shows.
rping_lines() {
	grep -c 'ping data: rdma-ping-' "$VT_TMP/$1.out"
}

pair_up
dirs="s2c c2s"
pair_ci_one_way && dirs=s2c
for dir in $dirs; do
	srv=server
	[ "$dir" = c2s ] && srv=client
	pair_step "rping.$dir" "$srv" 300 \
		rping -s -v -a "{me}" -p "{port}" -C "$count" -- \
		rping -c -v -a "{peer}" -p "{port}" -C "$count"
	[ "$PAIR_EXPECT" = ok ] && [ "$PAIR_LAST_OK" = 1 ] || continue
	# The rping server prints every iteration; the client does not print
	# the last one (it has no reply to validate): siw<->siw shows
	# count and count-1.
	want=$count
	[ "$PAIR_SIDE" = "$srv" ] || want=$((count - 1))
	seen=$(rping_lines "rping.$dir")
	if [ "$seen" -ge "$want" ]; then
		vt_pass "rping.$dir: $seen iterations verified"
	else
		vt_fail "rping.$dir: $seen iterations verified, expected $want"
	fi
done
pair_down
vt_finish
