#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kiwi-lab: timeout=600
#
# 1000 create/destroy cycles of PD, MR, completion channel, CQ with and
# without channel, SRQ and two RC QPs (vt_objcycle), then one held set
# whose objects `rdma resource show` must count exactly (summary and the
# qp/cq/mr/pd/srq lists), then everything back to the baseline. Two
# processes cycling at once exercise the object tables concurrently; user
# nobody cycles too.

. "$(dirname "$0")/lib/common.bash"

vt_need_progs
vt_clean_links
vt_link_add kiwi0 eth0 || vt_die "cannot create kiwi0"

base=$(vt_res kiwi0)
vt_log "baseline: $base"

# list_count TYPE COMM: entries of `rdma resource show TYPE` on kiwi0 owned by COMM.
list_count() {
	rdma -j -d resource show "$1" | python3 -c '
import json, sys
print(sum(1 for r in json.load(sys.stdin)
          if r.get("ifname") == "kiwi0" and r.get("comm") == sys.argv[1]))
' "$2"
}

"$VT_PROGS/vt_objcycle" -d kiwi0 -n 1000 -H "$VT_TMP/ready" > "$VT_TMP/cycle.log" 2>&1 &
pid=$!
if vt_wait_file "$VT_TMP/ready" 240 $pid; then
	vt_eq "resources while one set is held" "$(vt_res kiwi0)" \
		"$(vt_res_add "$base" ctx=1 pd=1 mr=1 cq=2 srq=1 qp=2)"
	for t in pd:1 mr:1 cq:2 srq:1 qp:2; do
		vt_eq "rdma resource show ${t%:*} entries of vt_objcycle" \
			"$(list_count "${t%:*}" vt_objcycle)" "${t#*:}"
	done
	kill -USR1 $pid
else
	vt_fail "vt_objcycle did not reach the held set"
fi
wait $pid
rc=$?
cat "$VT_TMP/cycle.log"
vt_eq "vt_objcycle exit status" "$rc" 0
vt_eq "resources after vt_objcycle" "$(vt_res kiwi0)" "$base"

# Two processes at once.
"$VT_PROGS/vt_objcycle" -d kiwi0 -n 300 > "$VT_TMP/a.log" 2>&1 &
a=$!
"$VT_PROGS/vt_objcycle" -d kiwi0 -n 300 > "$VT_TMP/b.log" 2>&1 &
b=$!
wait $a
ra=$?
wait $b
rb=$?
cat "$VT_TMP/a.log" "$VT_TMP/b.log"
vt_eq "two concurrent vt_objcycle exit statuses" "$ra $rb" "0 0"
vt_eq "resources after the concurrent cycles" "$(vt_res kiwi0)" "$base"

# An unprivileged user (default RLIMIT_MEMLOCK) can do the same. The
# program runs from a copy nobody can reach: the checkout may sit under a
# private home (/root) that nobody cannot enter.
prog=$(mktemp -d)
chmod 755 "$prog"
install -m 755 "$VT_PROGS/vt_objcycle" "$prog/"
out=$(runuser -u nobody -- "$prog/vt_objcycle" -d kiwi0 -n 50 2>&1)
rc=$?
echo "$out"
vt_eq "vt_objcycle as user nobody exit status" "$rc" 0
vt_eq "resources after the unprivileged cycles" "$(vt_res kiwi0)" "$base"
rm -r "$prog"

vt_link_del kiwi0
vt_finish
