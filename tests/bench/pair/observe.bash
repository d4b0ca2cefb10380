# SPDX-License-Identifier: GPL-2.0
#
# Where a benchmark step's time goes, from cheap counters (sourced by
# perf.sh; BENCH_OBSERVE=1). Around each step, each guest appends to
# KIWI_RESULTS/PAIR_ID.SIDE.obs:
#   - per vCPU: seconds of user, system, softirq, hardirq and idle time
#     (/proc/stat deltas) and the step's wall time;
#   - the interrupts each vCPU took per virtio line (/proc/interrupts);
#   - the kernel's TCP and IP counters that moved (nstat deltas:
#     segments, DelayedACKs, pure ACKs, backlog, prune and collapse);
#   - the kiwi device's counters that moved (rdma statistic);
#   - with BENCH_OBSERVE_SS=SECONDS, `ss -tmi` of the TCP connections to
#     the peer, sampled that often while the step runs (cwnd, rtt,
#     send-buffer and receive-window limits, skmem).
# The counters cost two snapshots per step. The ss samples are off by
# default: each one runs processes, and under TCG that is not cheap. With
# a sample every 0.5 s kiwi's CPU per GiB was 2070 s against 475 to 590
# without (one boot each, 2026-12-01), its 8 B send latency 7582 and 6504
# µs against 996 to 1270, and perftest's clock calibration failed in half
# the steps: figures taken with samples describe a disturbed run.

# obs_snap FILE: the counters observe_end compares.
obs_snap() {
	{
		grep '^cpu[0-9]' /proc/stat
		grep -E 'virtio' /proc/interrupts | sed 's/^ */irq /'
		[ "$PAIR_PROV" = kiwi ] && vt_stats "$PAIR_DEV" | tr ' ' '\n' | sed 's/^/kiwi /; s/=/ /'
		date +%s.%N | sed 's/^/time /'
	} > "$1"
}

# observe_begin NAME: start observing step NAME.
observe_begin() {
	[ "${BENCH_OBSERVE:-0}" = 1 ] || return 0
	obs_snap "$VT_TMP/obs.0"
	nstat -n > /dev/null 2>&1
	OBS_SS=
	[ -n "${BENCH_OBSERVE_SS:-}" ] || return 0
	(
		while :; do
			echo "-- $(date +%T.%N | cut -c1-12)"
			ss -Htmi dst "$KIWI_PEER_IP"
			sleep "$BENCH_OBSERVE_SS"
		done
	) > "$VT_TMP/obs.ss" 2>&1 &
	OBS_SS=$!
}

# observe_end NAME: stop observing and append what moved to the .obs file.
observe_end() {
	[ "${BENCH_OBSERVE:-0}" = 1 ] || return 0
	if [ -n "$OBS_SS" ]; then
		kill "$OBS_SS" 2>/dev/null
		wait "$OBS_SS" 2>/dev/null
	fi
	obs_snap "$VT_TMP/obs.1"
	{
		echo "== $1 round $round ($PAIR_SIDE, $PAIR_PROV)"
		awk -v hz="$(getconf CLK_TCK)" '
		FNR == 1 { f++ }
		$1 == "time" { t[f] = $2 }
		$1 ~ /^cpu[0-9]/ {
			for (i = 2; i <= 9; i++) c[f, $1, i] = $i
			cpus[$1] = 1
		}
		$1 == "irq" {
			for (i = 3; i <= NF && $i ~ /^[0-9]+$/; i++) q[f, $2, i - 3] = $i
			name[$2] = $NF; nq[$2] = i - 3
		}
		$1 == "kiwi" { k[f, $2] = $3; kn[$2] = 1 }
		END {
			printf "wall %.2f s\n", t[2] - t[1]
			printf "%-6s %7s %7s %7s %7s %7s  (s)\n", "vcpu", "user", "sys", "softirq", "irq", "idle"
			for (p in cpus) {
				d[2] = c[2, p, 2] + c[2, p, 3] - c[1, p, 2] - c[1, p, 3]
				d[4] = c[2, p, 4] - c[1, p, 4]
				d[8] = c[2, p, 8] - c[1, p, 8]
				d[7] = c[2, p, 7] - c[1, p, 7]
				d[5] = c[2, p, 5] + c[2, p, 6] - c[1, p, 5] - c[1, p, 6]
				printf "%-6s %7.2f %7.2f %7.2f %7.2f %7.2f\n", p, d[2] / hz,
					d[4] / hz, d[8] / hz, d[7] / hz, d[5] / hz
			}
			for (l in nq) {
				s = "irq " l " " name[l] ":"
				for (i = 0; i < nq[l]; i++) s = s " cpu" i "=" q[2, l, i] - q[1, l, i]
				print s
			}
			for (n in kn) if (k[2, n] != k[1, n]) printf "kiwi %s %d\n", n, k[2, n] - k[1, n]
		}' "$VT_TMP/obs.0" "$VT_TMP/obs.1"
		nstat 2>/dev/null | grep -E '^(IpExtInOctets|IpExtOutOctets|TcpInSegs|TcpOutSegs|TcpRetransSegs|TcpExt(DelayedACKs|DelayedACKLocked|TCPPureAcks|TCPHPAcks|TCPHPHits|TCPBacklogCoalesce|TCPBacklogDrop|PruneCalled|RcvPruned|TCPRcvCollapsed|TCPRcvCoalesce|TCPOFOQueue|TCPSackRecovery|TCPLossProbes|TCPWantZeroWindowAdv|TCPToZeroWindowAdv|TCPFromZeroWindowAdv|TCPAutoCorking|TCPOrigDataSent|TCPDelivered|TCPACKSkippedSeq|TCPZeroWindowDrop|TCPRcvQDrop|TCPMemoryPressures|TCPSpuriousRtxHostQueues|TCPTimeouts))[[:space:]]' |
			awk '{ printf "nstat %s %s\n", $1, $2 }'
		if [ -n "$OBS_SS" ]; then
			echo "ss -tmi samples:"
			sed 's/^/  /' "$VT_TMP/obs.ss"
		fi
	} >> "$KIWI_RESULTS/$PAIR_ID.$PAIR_SIDE.obs"
}
