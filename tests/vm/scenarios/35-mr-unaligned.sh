#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Memory regions at unaligned addresses with odd lengths (vt_mr) report the
# registered addr/length and distinct keys, and the kernel's view in
# `rdma resource show mr` (mrlen, lkey, rkey) matches what user space got.

. "$(dirname "$0")/lib/common.bash"

vt_need_progs
vt_clean_links
vt_link_add kiwi0 eth0 || vt_die "cannot create kiwi0"
base=$(vt_res kiwi0)

"$VT_PROGS/vt_mr" -d kiwi0 -H "$VT_TMP/ready" > "$VT_TMP/mr.log" 2>&1 &
pid=$!
if vt_wait_file "$VT_TMP/ready" 60 $pid; then
	# The (length, lkey, rkey) triples vt_mr printed, and the kernel's.
	user=$(sed -n 's/^mr addr=[^ ]* length=\([0-9]*\) lkey=0x\([0-9a-f]*\) rkey=0x\([0-9a-f]*\)$/\1 \2 \3/p' \
		"$VT_TMP/mr.log" | sort)
	kern=$(rdma -j -d resource show mr | python3 -c '
import json, sys
for r in json.load(sys.stdin):
    if r.get("ifname") == "kiwi0" and r.get("comm") == "vt_mr":
        print(r["mrlen"], "%x" % int(r["lkey"], 16), "%x" % int(r["rkey"], 16))
' | sort)
	vt_eq "number of regions vt_mr registered" "$(grep -c . <<< "$user")" 11
	if [ "$user" = "$kern" ]; then
		vt_pass "rdma resource show mr matches the 11 regions"
	else
		vt_fail "rdma resource show mr differs: user [$(tr '\n' ',' <<< "$user")] kernel [$(tr '\n' ',' <<< "$kern")]"
	fi
	kill -USR1 $pid
else
	vt_fail "vt_mr did not get ready"
fi
wait $pid
rc=$?
cat "$VT_TMP/mr.log"
vt_eq "vt_mr exit status" "$rc" 0
vt_eq "resources after vt_mr" "$(vt_res kiwi0)" "$base"

vt_link_del kiwi0
vt_finish
