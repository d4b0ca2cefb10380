# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers of the kiwi VM scenarios (sourced, not run). A scenario
# records every failed check with vt_fail and ends with vt_finish, which
# exits 1 if any check failed. vt_die stops a scenario at once.
#
# Environment (set by scripts/lab/run-scenario): KIWI_SRC, KIWI_BUILD.

set -u

KIWI_SRC=${KIWI_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." && pwd)}
KIWI_BUILD=${KIWI_BUILD:-$KIWI_SRC/build}
VT_PROGS=$KIWI_BUILD/vmprogs
VT_NAME=$(basename "$0" .sh)
VT_FAILS=0
VT_TMP=$(mktemp -d "/tmp/$VT_NAME.XXXXXX")
# The hostile MPA peer (tests/vm/hostile/peer.py), as a command: "${VT_PEER[@]}"
# ARGS. It needs only the standard library: python3 -S skips site (its .pth
# files), a third of python3's start, which every case pays in a TCG guest.
# It is imported, not run as a script: python3 caches an imported module's
# bytecode (in the guest's tmpfs), and compiling its 2000 lines took each
# case about 0.2 s.
VT_PEER=(python3 -S -c 'import sys; sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = "peer.py"; import peer; sys.exit(peer.main())'
	"$KIWI_SRC/tests/vm/hostile")

# Memory cgroups (cgroup v2) for scenarios and pair cases that charge
# kiwi's memory to a process's cgroup. vt_cg_memory mounts the hierarchy
# at VT_CG_ROOT unless mounted, and enables the memory controller for its
# children; vt_cg_done unmounts it again if vt_cg_memory mounted it.
VT_CG_ROOT=/sys/fs/cgroup
VT_CG_MOUNTED=0
vt_cg_memory() {
	if ! grep -q "^cgroup2 $VT_CG_ROOT " /proc/mounts; then
		mount -t cgroup2 none "$VT_CG_ROOT" || vt_die "cannot mount cgroup2"
		VT_CG_MOUNTED=1
	fi
	echo +memory > "$VT_CG_ROOT/cgroup.subtree_control" || vt_die "no memory controller"
}

vt_cg_done() {
	[ "$VT_CG_MOUNTED" = 0 ] || umount "$VT_CG_ROOT"
}

# vt_cg_event CG NAME: counter NAME of cgroup CG's memory.events.
vt_cg_event() {
	sed -n "s/^$2 //p" "$1/memory.events"
}

# "${VT_CG_EXEC[@]}" CG CMD [ARGS...]: run CMD as a member of cgroup CG
# from its start (a shell joins CG and execs CMD). A command, not a
# function: run with &, $! is CMD's own process, to be signalled.
VT_CG_EXEC=(bash -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' _)

vt_log() {
	echo "[$VT_NAME] $*"
}

vt_pass() {
	echo "[$VT_NAME] ok: $*"
}

vt_fail() {
	echo "[$VT_NAME] FAIL: $*" >&2
	VT_FAILS=$((VT_FAILS + 1))
}

vt_die() {
	echo "[$VT_NAME] FATAL: $*" >&2
	exit 1
}

vt_finish() {
	rm -rf "$VT_TMP"
	if [ "$VT_FAILS" -ne 0 ]; then
		echo "[$VT_NAME] $VT_FAILS check(s) failed" >&2
		exit 1
	fi
	echo "[$VT_NAME] all checks passed"
	exit 0
}

# vt_check DESCRIPTION CMD...: CMD must succeed.
vt_check() {
	local what=$1
	shift
	if "$@"; then
		vt_pass "$what"
	else
		vt_fail "$what (command: $*)"
	fi
}

# vt_eq DESCRIPTION GOT WANT
vt_eq() {
	if [ "$2" = "$3" ]; then
		vt_pass "$1: $2"
	else
		vt_fail "$1: got '$2', expected '$3'"
	fi
}

# The test programs are built on the host (make -C tests/vm/progs, part of
# make check-vm); build them here only if that did not happen.
vt_need_progs() {
	local p missing=0
	# The list of tests/vm/progs/Makefile.
	for p in vt_query vt_async vt_objcycle vt_mr vt_badargs vt_qpstate vt_hold \
		vt_target vt_cmclient vt_flushrace vt_integrity vt_stress vt_qmem \
		vt_atomic vt_exverbs vt_mw vt_mwpair vt_xvpair vt_atompair; do
		[ -x "$VT_PROGS/$p" ] || missing=1
	done
	[ "$missing" = 0 ] && return 0
	vt_log "building the test programs into $VT_PROGS"
	make -s -C "$KIWI_SRC/tests/vm/progs" KIWI_BUILD="$KIWI_BUILD" ||
		vt_die "cannot build tests/vm/progs"
}

vt_dev_exists() {
	[ -e "/sys/class/infiniband/$1" ]
}

# vt_link_add NAME NETDEV: rdma link add, which must succeed and create NAME.
vt_link_add() {
	local out
	if ! out=$(rdma link add "$1" type kiwi netdev "$2" 2>&1); then
		vt_fail "rdma link add $1 netdev $2: $out"
		return 1
	fi
	if ! vt_dev_exists "$1"; then
		vt_fail "rdma link add $1 succeeded but /sys/class/infiniband/$1 is missing"
		return 1
	fi
	return 0
}

# vt_nap SECONDS: sleep without starting a process, for polling loops. A
# TCG guest spends about 90 ms of CPU on each `sleep` it execs (a loop that
# sleeps 0.2 s burns a quarter of a vCPU, CPU its peer guest and the host
# then lack); read -t on a pipe that never delivers costs nothing.
vt_nap() {
	[ -n "${VT_NAP_FD:-}" ] || exec {VT_NAP_FD}<> <(:)
	read -r -t "$1" -u "$VT_NAP_FD" || :
}

# vt_indent PREFIX: standard input with PREFIX before each line, in bash
# alone (sed's process costs a tenth of a second in a TCG guest).
vt_indent() {
	local l
	while IFS= read -r l || [ -n "$l" ]; do
		printf '%s%s\n' "$1" "$l"
	done
}

# vt_target's log (LOG below) has lines "conn K ..." about its connection
# K, "conn K end ..." the last of them.
# vt_target_ends LOG: how many connections have ended.
vt_target_ends() {
	grep -c '^conn [0-9]* end' "$1"
}

# vt_target_conn LOG K: the lines of connection K.
vt_target_conn() {
	grep "^conn $2 " "$1"
}

# vt_target_wait_end LOG K SECONDS: wait until connection K has ended.
# Polled every 0.05 s with builtins: a grep every 0.2 s cost 70-hostile-peer
# about 0.3 s per case, for a line that comes 0.2 s after the disconnect.
vt_target_wait_end() {
	local i log limit=$(($3 * 20))
	for ((i = 0; i < limit; i++)); do
		log=
		{ IFS= read -r -d "" log < "$1"; } 2>/dev/null
		[[ $'\n'$log == *$'\n'"conn $2 end"* ]] && return 0
		vt_nap 0.05
	done
	return 1
}

# vt_lines PATTERN TEXT: the lines of TEXT that match the bash pattern
# PATTERN, in bash alone (as vt_indent).
vt_lines() {
	local l
	while IFS= read -r l; do
		# shellcheck disable=SC2053 # PATTERN is a pattern
		[[ $l != $1 ]] || printf '%s\n' "$l"
	done <<<"$2"
}

# vt_wait_gone NAME [SECONDS]: wait until device NAME has been unregistered.
vt_wait_gone() {
	local i limit=$((${2:-10} * 10))
	for ((i = 0; i < limit; i++)); do
		vt_dev_exists "$1" || return 0
		vt_nap 0.1
	done
	return 1
}

# vt_link_del NAME: rdma link delete, which must succeed and remove NAME.
vt_link_del() {
	local out
	if ! out=$(timeout 60 rdma link delete "$1" 2>&1); then
		vt_fail "rdma link delete $1: $out"
		return 1
	fi
	if ! vt_wait_gone "$1" 10; then
		vt_fail "$1 still registered 10s after rdma link delete"
		return 1
	fi
	return 0
}

# vt_kiwi_devs: names of the registered kiwi devices, one per line. A
# kiwi device may have any name; it is the one with kiwi/abi_version.
vt_kiwi_devs() {
	local d
	for d in /sys/class/infiniband/*; do
		[ -e "$d/kiwi/abi_version" ] && basename "$d"
	done
	return 0
}

# vt_clean_links: delete every kiwi link left behind by an earlier scenario.
vt_clean_links() {
	local d
	for d in $(vt_kiwi_devs); do
		vt_log "removing leftover device $d"
		timeout 60 rdma link delete "$d" || vt_die "cannot delete leftover $d"
		vt_wait_gone "$d" 10 || vt_die "leftover $d does not go away"
	done
}

# The counters of vt_res, in its order.
VT_RES_KEYS="pd cq qp mr srq ctx cm_id"

# vt_res DEV: "pd=N cq=N qp=N mr=N srq=N ctx=N cm_id=N" for DEV from
# `rdma resource show` (all zero when DEV is not listed). In bash alone:
# the hostile and teardown scenarios call this after every case, and every
# process a TCG guest starts costs a tenth of a second (python3 a second).
vt_res() {
	local -A c
	local -a f
	local i k out=()
	while read -r -a f; do
		[[ "${f[0]:-}" != [0-9]*: ]] || f=("${f[@]:1}")
		[ "${f[0]:-}" = "$1:" ] || continue
		for ((i = 1; i + 1 < ${#f[@]}; i += 2)); do
			c[${f[i]}]=${f[i + 1]}
		done
	done < <(rdma resource show)
	for k in $VT_RES_KEYS; do
		out+=("$k=$((${c[$k]:-0}))")
	done
	echo "${out[*]}"
}

# vt_res_add COUNTS KEY=DELTA...: COUNTS (as printed by vt_res) plus deltas.
vt_res_add() {
	local -A c
	local kv k out=()
	for kv in $1; do
		c[${kv%%=*}]=${kv#*=}
	done
	shift
	for kv in "$@"; do
		k=${kv%%=*}
		c[$k]=$((${c[$k]:-0} + ${kv#*=}))
	done
	for k in $VT_RES_KEYS; do
		out+=("$k=${c[$k]:-0}")
	done
	echo "${out[*]}"
}

# vt_stats DEV: "name=value ..." of every counter of DEV's port 1, from
# `rdma statistic show link DEV/1` ("link DEV/1 name value ..."), in bash
# alone as vt_res. One printf pairs the fields: a loop over kiwi's 60-odd
# counters took 0.05 s in a TCG guest, and 70-hostile-peer calls this
# twice per case.
vt_stats() {
	local -a f
	local out
	while read -r -a f; do
		[ "${f[0]:-}" = link ] || continue
		f=("${f[@]:2}")
		# An unpaired last field is no counter.
		[ $((${#f[@]} % 2)) = 0 ] || unset 'f[-1]'
		out=
		[ ${#f[@]} = 0 ] || printf -v out '%s=%s ' "${f[@]}"
		echo "${out% }"
	done < <(rdma statistic show link "$1/1")
}

# vt_stat STATS NAME: one counter of a vt_stats line (empty if absent). In
# bash alone: scenarios call it hundreds of times, and every process a
# TCG guest starts costs a tenth of a second.
vt_stat() {
	local s=" $1 "
	[[ "$s" == *" $2="* ]] || return 0
	s=${s#*" $2="}
	echo "${s%% *}"
}

# vt_stat_moved WHAT BEFORE AFTER NAME...: each counter NAME must have
# grown from the vt_stats line BEFORE to AFTER.
vt_stat_moved() {
	local what=$1 before=$2 after=$3 n b a
	shift 3
	for n in "$@"; do
		b=$(vt_stat "$before" "$n")
		a=$(vt_stat "$after" "$n")
		if [ -n "$a" ] && [ -n "$b" ] && [ "$a" -gt "$b" ]; then
			vt_pass "$what: $n $b -> $a"
		else
			vt_fail "$what: counter $n did not grow ('$b' -> '$a')"
		fi
	done
}

# vt_query_get DEV KEY: one value printed by vt_query.
vt_query_get() {
	"$VT_PROGS/vt_query" -d "$1" | sed -n "s/^$2=//p"
}

# vt_wait_file FILE SECONDS PID: wait for a program's ready file; fail if
# the program (PID) exits first or the time runs out.
vt_wait_file() {
	local i limit=$(($2 * 10))
	for ((i = 0; i < limit; i++)); do
		[ -s "$1" ] && return 0
		kill -0 "$3" 2>/dev/null || return 1
		vt_nap 0.1
	done
	return 1
}

# vt_rping NAME PORT COUNT [LISTEN_ADDR [CONNECT_ADDR]]: an rping server
# and client, COUNT verified pings; both addresses default to eth0's
# (KIWI_MY_IP); VT_RPING_SIZE, if set, is rping's -S. Passes or fails one
# check named "rping NAME".
vt_rping() {
	local ip=${KIWI_MY_IP:-10.77.0.1}
	local name=$1 port=$2 n=$3 la=${4:-$ip} ca=${5:-$ip} srv rc out
	local size=(${VT_RPING_SIZE:+-S "$VT_RPING_SIZE"})

	rping -s -a "$la" -p "$port" -C "$n" "${size[@]}" -v > "$VT_TMP/srv.$port" 2>&1 &
	srv=$!
	# The client fails the check if the server never listens.
	vt_wait_for 20 vt_listening "$port" || :
	out=$(timeout 120 rping -c -a "$ca" -p "$port" -C "$n" "${size[@]}" -v 2>&1)
	rc=$?
	wait $srv
	if [ $rc = 0 ] && [ "$(grep -c 'ping data' <<<"$out")" = "$n" ]; then
		vt_pass "rping $name: $n pings"
	else
		vt_fail "rping $name: status $rc: $(tail -n 3 <<<"$out" | tr '\n' ' ') server: $(tail -n 3 "$VT_TMP/srv.$port" | tr '\n' ' ')"
	fi
}

# vt_listening PORT: a TCP or SCTP socket listens on PORT (for
# vt_wait_for).
vt_listening() {
	[ -n "$(ss -HltnS "sport = :$1")" ]
}

# vt_wait_for SECONDS CMD...: poll CMD every 0.2 s until it succeeds.
vt_wait_for() {
	local i limit=$(($1 * 5))
	shift
	for ((i = 0; i < limit; i++)); do
		"$@" && return 0
		vt_nap 0.2
	done
	return 1
}

# vt_veth_pair A B: create a veth pair with both ends up.
vt_veth_pair() {
	ip link add "$1" type veth peer name "$2" || return 1
	ip link set "$1" up && ip link set "$2" up
}

# vt_kiwi0_up: the test programs built, no leftover link, kiwi loaded and
# kiwi0 on eth0 (the single-guest data-path scenarios).
vt_kiwi0_up() {
	vt_need_progs
	vt_clean_links
	grep -q '^kiwi ' /proc/modules || vt_check "modprobe kiwi" modprobe kiwi
	vt_link_add kiwi0 eth0 || vt_die "no kiwi0"
}

# vt_run_prog PROG SECONDS ARGS...: run test program PROG with ARGS within
# SECONDS; one check that passes with the count of its ok lines if it
# exits 0; its output follows, indented.
vt_run_prog() {
	local prog=$1 secs=$2 t0=$SECONDS
	shift 2
	if timeout "$secs" "$VT_PROGS/$prog" "$@" > "$VT_TMP/$prog.out" 2>&1; then
		vt_pass "$prog: $(grep -c "^$prog: ok" "$VT_TMP/$prog.out") checks passed in $((SECONDS - t0)) s"
	else
		vt_fail "$prog failed"
	fi
	sed 's/^/    | /' "$VT_TMP/$prog.out"
}
