# SPDX-License-Identifier: GPL-2.0
#
# Guest-side helpers of the two-guest pair tests (sourced by
# tests/vm/pair/cases/*.sh through the wrappers tests/vm/pair/run.sh
# generates). Builds on tests/vm/scenarios/lib/common.bash (vt_pass, vt_fail,
# vt_finish).
#
# Environment set by the wrapper:
#   PAIR_SERVER, PAIR_CLIENT  provider of the lab's server / client guest:
#                             kiwi | siw | rxe
#   PAIR_SIW_KO_SERVER, PAIR_SIW_KO_CLIENT   siw.ko for that guest (siw only)
#   PAIR_KIWI_PARAMS_SERVER, PAIR_KIWI_PARAMS_CLIENT  kiwi module parameters
#   PAIR_EXPECT   "ok" (traffic must work) or "refused" (the connection must
#                 fail cleanly and quickly: markers against siw)
#   PAIR_QUICK    1: fewer iterations (the bench and tshark captures)
# and by the lab: KIWI_ROLE, KIWI_MY_IP, KIWI_PEER_IP, KIWI_LIB, KIWI_RESULTS,
# KIWI_VM_CI (1 in ci.sh --ci: pair_ci_one_way).

# shellcheck source=../scenarios/lib/common.bash
. "$KIWI_SRC/tests/vm/scenarios/lib/common.bash"

PAIR_EXPECT=${PAIR_EXPECT:-ok}
PAIR_QUICK=${PAIR_QUICK:-0}
PAIR_SIDE=$KIWI_ROLE
if [ "$PAIR_SIDE" = server ]; then
	PAIR_OTHER=client
	PAIR_PROV=${PAIR_SERVER:?}
	PAIR_PEER_PROV=${PAIR_CLIENT:?}
	PAIR_SIW_KO=${PAIR_SIW_KO_SERVER:-}
	PAIR_KIWI_PARAMS=${PAIR_KIWI_PARAMS_SERVER:-}
else
	PAIR_OTHER=server
	PAIR_PROV=${PAIR_CLIENT:?}
	PAIR_PEER_PROV=${PAIR_SERVER:?}
	PAIR_SIW_KO=${PAIR_SIW_KO_CLIENT:-}
	PAIR_KIWI_PARAMS=${PAIR_KIWI_PARAMS_CLIENT:-}
fi
PAIR_DEV=${PAIR_PROV}0
# Each step gets a fresh TCP port so that a late or lingering peer of an
# earlier step can never be mistaken for the current one.
PAIR_PORT=${PAIR_PORT_BASE:-20000}

PAIR_ID=${PAIR_ID:-$VT_NAME}

# pair_barrier NAME [SECONDS]: like $KIWI_LIB/barrier (the n-th NAME here
# meets the n-th NAME on the peer), scoped to this case (PAIR_ID), and
# failing at once when the peer's case has already exited, so that a case
# that dies early on one guest does not leave the other waiting at every
# later barrier.
pair_barrier() {
	local name=$1 limit=${2:-120} gen deadline f
	[ "$KIWI_ROLE" = single ] && return 0
	# Builtins only: both guests sit here often, and every process a TCG
	# guest starts while it waits takes CPU from the other (vt_nap).
	f=$VT_TMP/barrier.$name
	gen=0
	[ ! -s "$f" ] || read -r gen < "$f"
	gen=$((gen + 1))
	echo "$gen" > "$f"
	: > "$KIWI_SHARED/pair.$PAIR_ID.$name.$gen.$PAIR_SIDE"
	deadline=$((SECONDS + limit))
	while [ ! -e "$KIWI_SHARED/pair.$PAIR_ID.$name.$gen.$PAIR_OTHER" ]; do
		if [ -e "$KIWI_SHARED/pair.$PAIR_ID.exited.$PAIR_OTHER" ] ||
			[ -e "$KIWI_SHARED/lab.dead.$PAIR_OTHER" ]; then
			vt_log "barrier $name: the $PAIR_OTHER guest has left this case"
			return 1
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			vt_log "barrier $name: no $PAIR_OTHER after ${limit}s"
			return 1
		fi
		vt_nap 0.2
	done
}

pair_exit_trap() {
	touch "$KIWI_SHARED/pair.$PAIR_ID.exited.$PAIR_SIDE"
	if [ -n "${PAIR_TCPDUMP:-}" ]; then
		kill -INT "$PAIR_TCPDUMP" 2>/dev/null
		# What was captured goes to the results, for the report.
		wait "$PAIR_TCPDUMP" 2>/dev/null
		pair_capture_save
	fi
}
trap pair_exit_trap EXIT

# pair_unload_providers: delete every RDMA link and unload siw and rxe, so
# that this case's module variant and parameters apply.
pair_unload_providers() {
	local d
	for d in /sys/class/infiniband/*; do
		[ -e "$d" ] || continue
		timeout 60 rdma link delete "$(basename "$d")" 2>/dev/null
	done
	for d in siw rdma_rxe kiwi; do
		if [ -d "/sys/module/$d" ]; then
			timeout 60 modprobe -r "$d" 2>/dev/null || rmmod "$d" 2>/dev/null ||
				vt_log "cannot unload $d"
		fi
	done
}

# pair_load_siw: insmod the wanted siw.ko (its dependencies first).
pair_load_siw() {
	local dep
	[ -f "$PAIR_SIW_KO" ] || vt_die "no siw.ko given (PAIR_SIW_KO_$PAIR_SIDE)"
	for dep in $(modinfo -F depends "$PAIR_SIW_KO" | tr , ' '); do
		modprobe "$dep" || vt_die "modprobe $dep (needed by siw) failed"
	done
	insmod "$PAIR_SIW_KO" || vt_die "insmod $PAIR_SIW_KO failed"
	vt_log "siw: $(cat "$(dirname "$PAIR_SIW_KO")/variant" 2>/dev/null || echo ?)"
}

# pair_load_kiwi: modprobe kiwi with PAIR_KIWI_PARAMS; with ko=NAME among
# them, insmod KIWI_BUILD/ko/NAME/kiwi.ko (its dependencies first) instead.
pair_load_kiwi() {
	local p params=() ko= dep
	for p in $PAIR_KIWI_PARAMS; do
		case "$p" in
		ko=*) ko=$KIWI_BUILD/ko/${p#ko=}/kiwi.ko ;;
		*) params+=("$p") ;;
		esac
	done
	if [ -z "$ko" ]; then
		modinfo kiwi > /dev/null 2>&1 || vt_die "no kiwi.ko for $(uname -r)"
		modprobe kiwi "${params[@]}" || vt_die "modprobe kiwi ${params[*]} failed"
		return
	fi
	[ -f "$ko" ] || vt_die "no $ko"
	for dep in $(modinfo -F depends "$ko" | tr , ' '); do
		modprobe "$dep" || vt_die "modprobe $dep (needed by kiwi) failed"
	done
	insmod "$ko" "${params[@]}" || vt_die "insmod $ko ${params[*]} failed"
}

# pair_up: bring up this guest's provider on eth0 as PAIR_DEV, then meet
# the peer guest.
pair_up() {
	local out
	pair_unload_providers
	case "$PAIR_PROV" in
	siw) pair_load_siw ;;
	rxe) modprobe rdma_rxe || vt_die "modprobe rdma_rxe failed" ;;
	kiwi) pair_load_kiwi ;;
	*) vt_die "unknown provider '$PAIR_PROV'" ;;
	esac
	if ! out=$(timeout 60 rdma link add "$PAIR_DEV" type "$PAIR_PROV" netdev eth0 2>&1); then
		vt_die "rdma link add $PAIR_DEV type $PAIR_PROV netdev eth0: $out"
	fi
	vt_log "$KIWI_ROLE: $PAIR_DEV ($PAIR_PROV${PAIR_KIWI_PARAMS:+ $PAIR_KIWI_PARAMS})," \
		"peer runs $PAIR_PEER_PROV"
	pair_barrier "pair-up" 180 || vt_die "the peer guest did not bring its device up"
}

# pair_down: remove the device (a provider that cannot let go fails).
pair_down() {
	pair_barrier "pair-down" 300 || vt_fail "the peer guest did not finish"
	if ! timeout 60 rdma link delete "$PAIR_DEV"; then
		vt_fail "rdma link delete $PAIR_DEV"
	fi
}

# pair_wait_listen PORT PID SECONDS: wait until an rdma_cm listener on PORT
# exists (rdma resource show cm_id) and, for an iWARP provider, its TCP
# socket listens (SCTP for a kiwi device whose llp setting is sctp), or PID
# exits, or the time runs out. rdma_cm shows a wildcard listener before it
# has listened on each device: a client that connects in between is
# refused (and perftest then crashes).
pair_wait_listen() {
	local port=$1 pid=$2 i limit=$(($3 * 5)) tcp=0 proto=-t
	case "$PAIR_PROV" in kiwi | siw) tcp=1 ;; esac
	[ "$PAIR_PROV" = kiwi ] &&
		[ "$(cat "/sys/class/infiniband/$PAIR_DEV/kiwi/llp" 2>/dev/null)" = sctp ] &&
		proto=-S
	for ((i = 0; i < limit; i++)); do
		if rdma resource show cm_id 2>/dev/null |
			grep -E "state LISTEN" | grep -qE "src-addr [^ ]*:$port( |$)" &&
			{ [ "$tcp" = 0 ] || [ -n "$(ss -Hln "$proto" "sport = :$port")" ]; }; then
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || return 1
		vt_nap 0.2
	done
	return 1
}

# pair_pick_cmd SIDE CMD_A -- CMD_B: PAIR_CMD becomes CMD_A on the guest
# whose role is SIDE (server|client), CMD_B on the other.
pair_pick_cmd() {
	local side=$1
	shift
	PAIR_CMD=()
	if [ "$PAIR_SIDE" = "$side" ]; then
		while [ $# -gt 0 ] && [ "$1" != -- ]; do PAIR_CMD+=("$1"); shift; done
	else
		while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done
		shift
		PAIR_CMD=("$@")
	fi
}

# pair_fill_cmd: PAIR_RUN becomes PAIR_CMD with {port} (PAIR_PORT), {peer}
# and {me} filled in.
pair_fill_cmd() {
	PAIR_RUN=("${PAIR_CMD[@]//\{port\}/$PAIR_PORT}")
	PAIR_RUN=("${PAIR_RUN[@]//\{peer\}/$KIWI_PEER_IP}")
	PAIR_RUN=("${PAIR_RUN[@]//\{me\}/$KIWI_MY_IP}")
}

# pair_tcp_step NAME SERVER_CMD -- CLIENT_CMD: a plain TCP client/server pair
# on a fresh port ({port}, {peer} as in pair_step); the client's output in
# VT_TMP/NAME.out. Return: the client's exit status (the server's: 0).
pair_tcp_step() {
	local name=$1 pid rc=0
	shift
	PAIR_PORT=$((PAIR_PORT + 1))
	pair_pick_cmd server "$@"
	pair_fill_cmd
	if [ "$PAIR_SIDE" = server ]; then
		timeout 180 "${PAIR_RUN[@]}" > "$VT_TMP/$name.srv" 2>&1 &
		pid=$!
		sleep 1
		pair_barrier "$name.listening" 60
		pair_barrier "$name.done" 240
		kill "$pid" 2>/dev/null
		wait "$pid"
		return 0
	fi
	pair_barrier "$name.listening" 60
	timeout 180 "${PAIR_RUN[@]}" > "$VT_TMP/$name.out" 2>&1 || rc=$?
	pair_barrier "$name.done" 240
	return "$rc"
}

# pair_step NAME SERVER_SIDE LIMIT SERVER_CMD -- CLIENT_CMD: one client/server
# run with a fresh port. The guest whose role is SERVER_SIDE (server|client)
# runs SERVER_CMD and, once its rdma_cm listener exists, lets the other
# guest run CLIENT_CMD. "{port}" and "{peer}" in the commands are replaced by
# the step's port and the other guest's address. Both commands are limited
# to LIMIT seconds. With PAIR_EXPECT=ok both must exit 0; with "refused" the
# client must fail within LIMIT (and no side may hang). Output goes to
# $VT_TMP/NAME.out and, on failure, to the log. A perftest client that lost
# perftest's own reconnect race (pair_perftest_race), a step whose siw
# peer-to-peer server lost siw's own RTR race (pair_siw_rtr_race), and one
# whose siw server refused without a Terminate (pair_siw_term_race and
# pair_imm_flushed), run once more, with a fresh server and port.
pair_step() {
	local name=$1 srv_side=$2 limit=$3 c rc pid out attempt race again
	shift 3
	pair_pick_cmd "$srv_side" "$@"
	out=$VT_TMP/$name.out
	for attempt in 1 2; do
		PAIR_PORT=$((PAIR_PORT + 1))
		pair_fill_cmd
		c=("${PAIR_RUN[@]}")
		race=$KIWI_SHARED/pair.$PAIR_ID.$name.race.$attempt
		PAIR_T0=$EPOCHSECONDS
		if [ "$PAIR_SIDE" = "$srv_side" ]; then
			timeout -k 5 "$limit" "${c[@]}" > "$out" 2>&1 &
			pid=$!
			pair_wait_listen "$PAIR_PORT" "$pid" 60 ||
				vt_log "$name: no rdma_cm listener on port $PAIR_PORT after 60 s"
			pair_barrier "$name.listening" 120
			pair_barrier "$name.done" $((limit + 60))
			pair_reap "$pid" 20
			rc=$?
		else
			pair_barrier "$name.listening" 120
			timeout -k 5 "$limit" "${c[@]}" > "$out" 2>&1
			rc=$?
			[ "$attempt" = 1 ] && pair_perftest_race "$rc" "$out" "${c[*]}" &&
				echo "perftest's reconnect race (second connection refused)" > "$race"
			pair_barrier "$name.done" $((limit + 60))
		fi
		again=
		if [ "$attempt" = 1 ] && pair_siw_side "$srv_side"; then
			if [ "$PAIR_SIDE" = "$srv_side" ]; then
				pair_siw_p2p "$srv_side" && pair_siw_rtr_race "$rc" "$out" &&
					echo "siw's RTR race (its server never reported ESTABLISHED; see interop.md)" > "$race"
				pair_siw_term_race "$out" && : > "$race.siw-busy"
			else
				pair_imm_flushed "$rc" "$out" && : > "$race.flushed"
			fi
			pair_barrier "$name.judged" 60
			[ -e "$race.siw-busy" ] && [ -e "$race.flushed" ] &&
				again="siw's Send was in progress when it refused, and it closed without a Terminate (see interop.md)"
		fi
		[ -e "$race" ] || [ -n "$again" ] || break
		vt_log "$name: ${again:-$(cat "$race")}, once more"
		sed 's/^/    | /' "$out" | tail -n 8
	done
	pair_judge "$name" "$srv_side" "$rc" "$out" "${c[*]}"
}

# pair_perftest_race RC OUTFILE CMD: the perftest client (a perftest tool
# anywhere in CMD, also inside a shell's command string as pair_mtu_dip's)
# lost a race of perftest's own making. perftest -R connects twice to the
# same port: a first connection exchanges the test parameters, then the
# server destroys its listener and listens anew for the test's connection. A
# client quicker than its server connects the second time before the new
# listener exists and TCP refuses it. A client whose connect is asynchronous
# (kiwi, rxe) gets RDMA_CM_EVENT_REJECTED, status -111, and perftest's error
# path then crashes in librdmacm (seen with a siw server under TCG: siw's
# log shows the listener gone for 180 ms). siw connects its TCP socket
# inside rdma_connect(), so a siw client sees rdma_connect() fail instead,
# and its server waits for a connection that never comes (seen in CI with a
# kiwi server, ib_write_bw; with ib_send_bw perftest words it "Failed to
# connect through RDMA CM. ERRNO: Connection refused." and may crash). With
# PAIR_EXPECT=refused the race counts only where the connection must work
# and an operation on it is what the peer refuses (PAIR_CONNECTS=1, the
# atomics case against siw): there the refusal shows as a failed completion,
# never as a refused connection.
pair_perftest_race() {
	{ [ "$PAIR_EXPECT" = ok ] || [ "${PAIR_CONNECTS:-0}" = 1 ]; } &&
		[ "$1" != 0 ] &&
		[[ $3 =~ (^|[[:space:]])ib_[a-z_]+_(bw|lat)([[:space:]]|$) ]] &&
		grep -q -e 'RDMA_CM_EVENT_REJECTED; error: -111' \
			-e 'Function rdma_connect failed' \
			-e 'ERRNO: Connection refused' "$2"
}

# pair_siw_side SIDE: the guest SIDE (server or client) runs siw.
pair_siw_side() {
	if [ "$1" = client ]; then
		[ "$PAIR_CLIENT" = siw ]
	else
		[ "$PAIR_SERVER" = siw ]
	fi
}

# pair_siw_p2p SIDE: the guest SIDE (server or client) runs siw built with
# peer_to_peer (scripts/siw.sh --variant p2p), which waits for an RTR.
pair_siw_p2p() {
	local ko=$PAIR_SIW_KO_SERVER
	[ "$1" = client ] && ko=$PAIR_SIW_KO_CLIENT
	pair_siw_side "$1" && grep -qw p2p "${ko%/*}/variant" 2>/dev/null
}

# pair_siw_term_race OUTFILE: the siw side of vt_integrity --imm-refused
# refused the kiwi peer's Immediate Data while its own last Send was still
# in progress, which that Send's IBV_WC_LOC_QP_OP_ERR shows. siw may then
# send no Terminate (siw_qp.c, siw_send_terminate(): "op in progress") and
# only close the stream, so the kiwi WR is flushed instead of completing
# with IBV_WC_REM_OP_ERR (captured 2026-12-02: FIN, no Terminate; see
# interop.md). The step runs again only if the kiwi side also saw that
# flush (pair_imm_flushed): a siw that did send its Terminate is no race.
pair_siw_term_race() {
	grep -q 'sent before the refused message, completed: local QP operation error' "$1"
}

# pair_imm_flushed RC OUTFILE: the kiwi client of vt_integrity
# --imm-refused failed because its Immediate Data WR was flushed.
pair_imm_flushed() {
	[ "$1" != 0 ] &&
		grep -q 'completion status Work Request Flushed Error (5), expected IBV_WC_REM_OP_ERR' "$2"
}

# pair_siw_rtr_race RC OUTFILE: a siw peer-to-peer server accepted but never
# reported ESTABLISHED. siw's accept sends the MPA Reply before it watches
# the socket for the initiator's RTR; what arrives in between wakes nobody,
# and when the initiator's first message came in that window as well
# nothing wakes siw again (siw_cm.c, siw_accept(); see interop.md). A
# ULP that waits for ESTABLISHED (vt_integrity, vt_cm's programs) says so.
pair_siw_rtr_race() {
	[ "$PAIR_EXPECT" = ok ] && [ "$1" != 0 ] &&
		grep -q 'no RDMA_CM_EVENT_ESTABLISHED within' "$2"
}

# pair_stuck_report PID: where PID and its children (timeout's program) are
# blocked, before pair_reap kills them: each thread's state and kernel
# stack, then the TCP connections on PAIR_PORT with what each holds unread
# (Recv-Q) and unsent (Send-Q). Whether a silent peer never got the data or
# got it and never read it shows there.
pair_stuck_report() {
	# shellcheck disable=SC2046 # the children's PIDs are words
	pair_stacks "$1" $(pgrep -P "$1")
	ss -tnieH state all "( sport = :$PAIR_PORT or dport = :$PAIR_PORT )" |
		vt_indent "[$VT_NAME] stuck: "
}

# pair_stacks PID...: a log line for each thread of each PID: its state,
# its system call (with the file a read or write is on: a completion
# channel, rdma_cm's device, a socket) and its kernel stack.
pair_stacks() {
	local p t f frames state sc fd
	for p in "$@"; do
		for t in /proc/"$p"/task/*; do
			state=$(<"$t/stat") 2>/dev/null || continue
			state=${state##*) }
			frames=
			while read -r _ f; do
				frames+=" ${f%%+*}"
			done 2>/dev/null <"$t/stack"
			sc=
			read -r sc fd _ 2>/dev/null <"$t/syscall"
			case "$sc" in
			0 | 1) sc="$sc on $(readlink "/proc/$p/fd/$((fd))")" ;;
			esac
			vt_log "stuck: pid $p thread ${t##*/} state ${state%% *} syscall ${sc:-?}:${frames:- (no kernel stack)}"
		done
	done
}

# pair_reap PID SECONDS: the exit status of PID, which gets SECONDS to exit
# (the client has finished); 125 if it had to be killed (after
# pair_stuck_report).
pair_reap() {
	local pid=$1 i
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		vt_nap 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		pair_stuck_report "$pid"
		kill -TERM "$pid" 2>/dev/null
		wait "$pid"
		return 125
	fi
	wait "$pid"
}

# pair_raw_step NAME LISTENER LIMIT LISTEN_CMD -- CONNECT_CMD: for a
# listener that is not an rdma_cm one (a raw MPA or SCTP peer, or
# vt_cmpdata): LISTEN_CMD runs on the guest whose role is LISTENER
# (server|client), CONNECT_CMD on the other once LISTEN_CMD printed
# "listening" ({port}, {me} and {peer} as for pair_step). Each side's
# output goes to $VT_TMP/NAME.out and its log, its exit status to STEP_RC.
# The listener gets 5 s after the initiator ended and is then stopped
# (STEP_RC 125): a listener whose connection must never reach it is
# stopped so.
pair_raw_step() {
	local name=$1 side=$2 limit=$3 c pid out=$VT_TMP/$1.out
	shift 3
	pair_pick_cmd "$side" "$@"
	PAIR_PORT=$((PAIR_PORT + 1))
	pair_fill_cmd
	c=("${PAIR_RUN[@]}")
	if [ "$PAIR_SIDE" = "$side" ]; then
		timeout -k 5 "$limit" "${c[@]}" > "$out" 2>&1 &
		pid=$!
		vt_wait_for 30 pair_raw_listening "$out" "$pid" ||
			vt_log "$name: the listener did not start"
		pair_barrier "$name.listening" 60
		pair_barrier "$name.done" $((limit + 30))
		pair_reap "$pid" 5
		STEP_RC=$?
	else
		pair_barrier "$name.listening" 60
		timeout -k 5 "$limit" "${c[@]}" > "$out" 2>&1
		STEP_RC=$?
		pair_barrier "$name.done" $((limit + 30))
	fi
	vt_log "$name ($PAIR_SIDE): exit $STEP_RC"
	sed 's/^/    | /' "$out"
}

# pair_raw_listening OUT PID: OUT shows "listening", or PID ended.
pair_raw_listening() {
	grep -q '^listening' "$1" || ! kill -0 "$2" 2>/dev/null
}

# pair_big_pd_step HOW LISTEN_CMD...: LISTEN_CMD, a raw listener on the
# server guest that answers with 300 octets of private data (more than an
# iw_cm event carries), against a kiwi initiator on the client guest
# (vt_cmpdata), whose connect must fail with -EMSGSIZE. The step's output
# is in $VT_TMP/big-pd-HOW.out.
pair_big_pd_step() {
	local how=$1
	shift
	pair_raw_step "big-pd-$how" server 60 "$@" -- \
		"$VT_PROGS/vt_cmpdata" -a "{peer}" -p "{port}" -x F0
	[ "$PAIR_SIDE" = client ] || return 0
	vt_check "big-pd-$how: the connect fails with -EMSGSIZE" \
		grep -q '^step 0: RDMA_CM_EVENT_CONNECT_ERROR, status -90$' "$VT_TMP/big-pd-$how.out"
}

# pair_mtu_dip NAME: ib_send_bw of 4000-octet messages from the client
# guest to the server guest for 12 s; 4 s in, the client's eth0 goes from
# MTU 1500 to 1200, 4 s later back to 1500 (set again afterwards, should
# the step have ended early).
pair_mtu_dip() {
	pair_step "$1" server 120 \
		ib_send_bw -d "$PAIR_DEV" -R -F -D 12 -s 4000 -p "{port}" -- \
		bash -c "(sleep 4; ip link set eth0 mtu 1200; sleep 4; ip link set eth0 mtu 1500) &
			ib_send_bw -d $PAIR_DEV -R -F -D 12 -s 4000 -p {port} {peer}; rc=\$?; wait; exit \$rc"
	[ "$PAIR_SIDE" != client ] || ip link set eth0 mtu 1500
}

# pair_mtu_phases BIG SMALL: of pair_mtu_dip's capture, one line per
# segment in the order sent (the length of the PDU it begins with, or
# "frag" for a piece of a PDU), print "OLD LOW AGAIN LATE": the lines BIG
# before the first SMALL, the lines SMALL, the lines BIG after the first
# SMALL and the "frag" lines after it.
pair_mtu_phases() {
	awk -v big="$1" -v small="$2" '
		$1 == small { low = 1; n_low++; next }
		$1 == big { if (low) n_again++; else n_old++; next }
		low && $1 == "frag" { n_late++ }
		END { print n_old + 0, n_low + 0, n_again + 0, n_late + 0 }'
}

# pair_rping_exit_race RC OUTFILE: an rping server that ended normally (the
# client disconnected: "wait for RDMA_READ_ADV state 10") may still exit
# with status 255: its event thread waits in rdma_get_cm_event() while the
# main thread destroys the event channel, whatever the transport. The
# iterations are judged apart.
pair_rping_exit_race() {
	[ "$1" = 255 ] &&
		grep -qx 'wait for RDMA_READ_ADV state 10' "$2" &&
		grep -qx 'rdma_get_cm_event: Bad file descriptor' "$2"
}

# pair_judge NAME SERVER_SIDE RC OUTFILE CMD: record the verdict of one side of a step.
pair_judge() {
	local name=$1 role=server rc=$3 out=$4 cmd=$5
	[ "$PAIR_SIDE" = "$2" ] || role=client
	if [ "$PAIR_EXPECT" = refused ]; then
		if [ "$role" = server ] && [ "$rc" = 125 ]; then
			vt_pass "$name (server): stopped after the refused client"
		elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
			vt_fail "$name ($role): hung until the time limit instead of failing cleanly"
			sed 's/^/    | /' "$out" | tail -n 20
		elif [ "$rc" = 0 ] && [ "$role" = client ]; then
			vt_fail "$name ($role): connected although it must be refused"
		else
			vt_pass "$name ($role): refused cleanly (exit $rc)"
		fi
		return
	fi
	if [ "$rc" = 0 ] && grep -q 'Failed to disconnect RDMA CM' "$out"; then
		# perftest's rdma_disconnect() failed but perftest exits 0.
		vt_fail "$name ($role): perftest's rdma_disconnect() failed ('Failed to disconnect RDMA CM connection')"
		PAIR_LAST_OK=1
	elif [ "$rc" = 0 ]; then
		vt_pass "$name ($role, $((EPOCHSECONDS - PAIR_T0)) s)"
		PAIR_LAST_OK=1
	elif pair_rping_exit_race "$rc" "$out"; then
		vt_pass "$name ($role, $((EPOCHSECONDS - PAIR_T0)) s; rping's own exit race, see interop.md)"
		PAIR_LAST_OK=1
	else
		[ "$rc" = 124 ] && rc="$rc, timed out"
		[ "$rc" = 125 ] && rc="$rc, still running 20 s after the client ended"
		vt_fail "$name ($role): exit $rc after $((EPOCHSECONDS - PAIR_T0)) s: $cmd"
		sed 's/^/    | /' "$out" | tail -n 25
		PAIR_LAST_OK=0
	fi
}

# pair_both NAME LIMIT SERVER_CMD -- CLIENT_CMD: pair_step in both
# directions: first the lab's server guest serves, then the client guest.
pair_both() {
	local name=$1 limit=$2
	shift 2
	pair_step "$name.s2c" server "$limit" "$@"
	pair_step "$name.c2s" client "$limit" "$@"
}

# pair_pdata_both: vt_cmpdata's steps A0,A255,R0,R255 (accept with 0 and
# with 255 octets of private data, then reject with each) in both
# directions. Every step's private data arrives intact, and each guest's
# mpa_rej_sent and mpa_rej_rcvd grow by one per direction.
pair_pdata_both() {
	local script=A0,A255,R0,R255 st0 st1 d c
	st0=$(vt_stats "$PAIR_DEV")
	pair_both pdata 120 \
		"$VT_PROGS/vt_cmpdata" -s -a "{me}" -p "{port}" -x "$script" -- \
		"$VT_PROGS/vt_cmpdata" -a "{peer}" -p "{port}" -x "$script"
	for d in s2c c2s; do
		sed 's/^/    | /' "$VT_TMP/pdata.$d.out"
		vt_eq "pdata.$d: steps whose private data arrived intact" \
			"$(grep -c 'octets of private data intact' "$VT_TMP/pdata.$d.out")" 4
	done
	st1=$(vt_stats "$PAIR_DEV")
	for c in mpa_rej_sent mpa_rej_rcvd; do
		vt_eq "$c grew by 2 (one direction each)" \
			"$(($(vt_stat "$st1" $c) - $(vt_stat "$st0" $c)))" 2
	done
}

# pair_capture_start FILE [FILTER] / pair_capture_stop: tcpdump of eth0's
# TCP traffic (or what FILTER selects, e.g. sctp; whole frames) into FILE,
# for tests/vm/pair/tshark-check.sh.
# Under TCG tcpdump falls behind bursts: a 128 MiB capture buffer keeps the
# kernel from dropping frames (a capture with gaps cannot be judged).
# tcpdump writes into the guest's tmpfs (PAIR_PCAP_TMP), and the capture
# is copied to FILE (on 9p, in the results) when it stops: each frame
# written to 9p (-U) cost tcpdump a round trip to the host, and it
# trailed an mtu case's 30,000 frames by some ten seconds.
pair_capture_start() {
	PAIR_PCAP=$1
	PAIR_PCAP_TMP=$VT_TMP/capture.$(basename "$1")
	tcpdump -i eth0 -s "${PAIR_SNAPLEN:-0}" -B 131072 -U -w "$PAIR_PCAP_TMP" \
		"${2:-tcp}" > "$VT_TMP/tcpdump.log" 2>&1 &
	PAIR_TCPDUMP=$!
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q 'listening on' "$VT_TMP/tcpdump.log" && return 0
		vt_nap 0.1
	done
	vt_fail "tcpdump did not start: $(cat "$VT_TMP/tcpdump.log")"
}

# pair_capture_begin FILE [FILTER]: the server guest starts
# pair_capture_start FILE [FILTER], then both guests meet at "capturing".
pair_capture_begin() {
	[ "$PAIR_SIDE" = server ] && pair_capture_start "$@"
	pair_barrier capturing 60 || vt_die "the peer did not reach the capture"
}

# pair_capture_end FILE: both guests meet at "traffic-done", then the
# server guest stops the capture and logs FILE's size.
pair_capture_end() {
	pair_barrier traffic-done 120
	if [ "$PAIR_SIDE" = server ]; then
		pair_capture_stop
		vt_log "capture: $(stat -c %s "$1") bytes in $1"
	fi
}

# tcpdump writes each frame (-U) and, under TCG, trails a burst by
# seconds; at SIGINT it exits without writing what it has not yet read (a
# CI capture lost the last 2,000 frames of a run). So it stops only once
# the file has not grown for two seconds (at most two minutes); then the
# capture goes to FILE.
pair_capture_stop() {
	[ -n "${PAIR_TCPDUMP:-}" ] || return 0
	local i size last=-1 still=0
	for ((i = 0; i < 120 && still < 2; i++)); do
		sleep 1
		size=$(stat -c %s "$PAIR_PCAP_TMP" 2>/dev/null || echo 0)
		if [ "$size" = "$last" ]; then
			still=$((still + 1))
		else
			still=0
		fi
		last=$size
	done
	kill -INT "$PAIR_TCPDUMP" 2>/dev/null
	wait "$PAIR_TCPDUMP" 2>/dev/null
	PAIR_TCPDUMP=
	pair_capture_save
	vt_log "capture: $(grep -E 'packets (captured|received|dropped)' "$VT_TMP/tcpdump.log" | tr '\n' ' ')"
}

# pair_capture_save: the capture from the guest's tmpfs to its FILE.
pair_capture_save() {
	[ -f "${PAIR_PCAP_TMP:-}" ] || return 0
	cp "$PAIR_PCAP_TMP" "$PAIR_PCAP" || vt_fail "cannot copy the capture to $PAIR_PCAP"
	rm -f "$PAIR_PCAP_TMP"
}

# pair_only_kiwi_mpa CASE: after pair_up, end case CASE here (passing)
# unless both guests run kiwi over MPA/TCP without markers, as the cases
# that count where TCP segments begin need (a marker may lead a segment).
pair_only_kiwi_mpa() {
	local s=/sys/class/infiniband/$PAIR_DEV/kiwi llp
	llp=$(cat "$s/llp" 2>/dev/null)
	if [ "$PAIR_SERVER-$PAIR_CLIENT" = kiwi-kiwi ] && [ "$llp" = tcp ] &&
		[ "$(cat "$s/mpa_markers")" != Y ]; then
		return 0
	fi
	vt_log "$1: needs kiwi-kiwi over MPA/TCP without markers, not $PAIR_SERVER-$PAIR_CLIENT llp=$llp"
	pair_down
	vt_finish
}

# pair_wire_expect: tests/vm/pair/mpa-wire-check.py options this guest's
# settings imply: whether its startup frames ask for markers and, on kiwi,
# the RTR types its peer-to-peer Requests offer and whether they carry the
# ULP framing draft-00 field (ulpf00; N on a kiwi.ko without the setting).
# Nothing for rxe.
pair_wire_expect() {
	local s=/sys/class/infiniband/$PAIR_DEV/kiwi
	case "$PAIR_PROV" in
	kiwi) echo "--expect $KIWI_MY_IP=$(cat "$s/mpa_markers")" \
		"--rtr-offer $KIWI_MY_IP=$(cat "$s/mpa_rtr")" \
		"--ulpf $KIWI_MY_IP=$(cat "$s/ulpf00" 2>/dev/null || echo N)" ;;
	siw) echo "--expect $KIWI_MY_IP=N --ulpf $KIWI_MY_IP=N" ;;
	esac
}

# pair_ci_one_way: true in a CI run (KIWI_VM_CI=1: ci.sh --ci) of a
# symmetric combo (the same provider, siw.ko and kiwi parameters on both
# guests, as kiwi-kiwi): there a step's second direction (pair_both) runs
# the same code in the same roles as its first, the guests swapped, and
# the cases that say so run the first direction alone.
pair_ci_one_way() {
	[ "${KIWI_VM_CI:-0}" = 1 ] && [ "$PAIR_SERVER" = "$PAIR_CLIENT" ] &&
		[ "${PAIR_SIW_KO_SERVER:-}" = "${PAIR_SIW_KO_CLIENT:-}" ] &&
		[ "${PAIR_KIWI_PARAMS_SERVER:-}" = "${PAIR_KIWI_PARAMS_CLIENT:-}" ]
}

# pair_both_ci NAME LIMIT SERVER_CMD -- CLIENT_CMD: pair_both, or where
# pair_ci_one_way its first direction alone (the step NAME.s2c).
pair_both_ci() {
	if pair_ci_one_way; then
		local name=$1
		shift
		pair_step "$name.s2c" server "$@"
	else
		pair_both "$@"
	fi
}

# pair_integrity_opts: vt_integrity options for this combo. Send with
# Invalidate needs an STag the receiver lets a peer invalidate: siw
# invalidates any MR; kiwi and rxe only fast-register MRs (IBTA; RFC 5040
# has the Terminate "STag cannot be invalidated" for the rest), which user
# space cannot make, so with kiwi or rxe on either side it is left out.
# Immediate data (RFC 7306) only kiwi implements on iWARP: kiwi <-> kiwi.
pair_integrity_opts() {
	local o=()
	[ "$PAIR_QUICK" = 1 ] && o+=(--quick)
	case "$PAIR_SERVER $PAIR_CLIENT" in
	*kiwi* | *rxe*) o+=(--no-inv) ;;
	esac
	[ "$PAIR_SERVER $PAIR_CLIENT" = "kiwi kiwi" ] && o+=(--imm)
	echo "${o[*]}"
}
