#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Faults in the middle of a transfer (ib_write_bw -D 30, then ib_read_bw
# -D 30, 64 KiB messages; PAIR_MODE quick, the CI's version: ib_write_bw
# -D 15 only), each followed by a fresh transfer that must work:
#  - mtu:    both guests drop eth0's MTU to 1280 and raise it back to 1500;
#            TCP follows the route MTU, so the transfer must succeed;
#  - down:   the client guest takes eth0 down for 3 s; TCP may carry the
#            connection over the gap or kiwi may fail it;
#  - delete: the client guest deletes its RDMA link; its application gets
#            a fatal device event, the server's a disconnect.
# Where failing is allowed, both applications must still end within 60 s
# of the fault (every WR completes, with an error if need be: perftest
# waits for each of its completions) and the lab's checks of the kernel
# log (no oops, WARNING, KASAN or lockdep report) apply. At the end
# `modprobe -r` unloads the provider and `rdma resource show` on the server
# is back at its baseline.

. "$KIWI_SRC/tests/vm/pair/lib.bash"

tools=(ib_write_bw ib_read_bw)
secs=30
if [ "$PAIR_MODE" = quick ]; then
	tools=(ib_write_bw)
	secs=15
fi

# soak_fault NAME TOOL FAULT MUST_PASS: TOOL (ib_write_bw | ib_read_bw) for
# $secs s; FAULT (a function) runs on both guests 8 s after the connection
# starts; MUST_PASS 1: both sides must exit 0.
soak_fault() {
	local name=$1 tool=$2 fault=$3 must=$4 pid rc i t0 cmd=("$2" -d "$PAIR_DEV" -R -F -s 65536 -D "$secs")
	PAIR_PORT=$((PAIR_PORT + 1))
	if [ "$PAIR_SIDE" = server ]; then
		"${cmd[@]}" -p "$PAIR_PORT" > "$VT_TMP/$name.out" 2>&1 &
		pid=$!
		pair_wait_listen "$PAIR_PORT" "$pid" 60 || vt_log "$name: no listener"
		pair_barrier "$name.listening" 120
	else
		pair_barrier "$name.listening" 120
		"${cmd[@]}" -p "$PAIR_PORT" "$KIWI_PEER_IP" > "$VT_TMP/$name.out" 2>&1 &
		pid=$!
	fi
	sleep 8
	"$fault"
	t0=$EPOCHSECONDS
	for ((i = 0; i < 900; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		vt_nap 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		wait "$pid"
		vt_fail "$name ($PAIR_SIDE): $tool still running 90 s after the fault"
		sed 's/^/    | /' "$VT_TMP/$name.out" | tail -n 15
	else
		wait "$pid"
		rc=$?
		if [ "$must" = 1 ] && [ "$rc" != 0 ]; then
			vt_fail "$name ($PAIR_SIDE): $tool exit $rc"
			sed 's/^/    | /' "$VT_TMP/$name.out" | tail -n 15
		else
			vt_pass "$name ($PAIR_SIDE): $tool ended $((EPOCHSECONDS - t0)) s after the fault, exit $rc"
		fi
	fi
	pair_barrier "$name.done" 180
}

fault_mtu() {
	ip link set eth0 mtu 1280
	sleep 5
	ip link set eth0 mtu 1500
}

fault_down() {
	[ "$PAIR_SIDE" = client ] || return 0
	ip link set eth0 down
	sleep 3
	ip link set eth0 up
	ip addr show dev eth0 | grep -q "inet $KIWI_MY_IP/" ||
		vt_log "eth0 lost its address: $(ip -br addr show dev eth0)"
}

fault_delete() {
	[ "$PAIR_SIDE" = client ] || return 0
	vt_check "rdma link delete $PAIR_DEV mid-transfer" timeout 60 rdma link delete "$PAIR_DEV"
}

# soak_after NAME: a fresh short transfer must work.
soak_after() {
	pair_step "$1.after" server 200 \
		ib_write_bw -d "$PAIR_DEV" -R -F -s 65536 -n 50 -p "{port}" -- \
		ib_write_bw -d "$PAIR_DEV" -R -F -s 65536 -n 50 -p "{port}" "{peer}"
}

pair_up
base_res=$(vt_res "$PAIR_DEV")
for tool in "${tools[@]}"; do
	soak_fault "mtu.$tool" "$tool" fault_mtu 1
	soak_after "mtu.$tool"
	soak_fault "down.$tool" "$tool" fault_down 0
	# Neighbour and route state return a moment after the link.
	sleep 2
	soak_after "down.$tool"
	soak_fault "delete.$tool" "$tool" fault_delete 0
	if [ "$PAIR_SIDE" = client ]; then
		vt_check "rdma link add after the delete" \
			timeout 60 rdma link add "$PAIR_DEV" type "$PAIR_PROV" netdev eth0
	fi
	pair_barrier "delete.$tool.readded" 120
	soak_after "delete.$tool"
done
pair_barrier faults-done 120
vt_eq "rdma resources after the faults" "$(vt_res "$PAIR_DEV")" "$base_res"
pair_down
vt_check "modprobe -r $PAIR_PROV after the faults" timeout 60 modprobe -r "$PAIR_PROV"
vt_finish
