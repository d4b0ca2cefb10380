#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tests/vm/pair/tshark-check.sh [--min-fpdus N] [--allow-terminate]
#                                      [--allow-reject] [--startup-only]
#                                      [-d DECODE_AS] PCAP
#
# Decodes PCAP (a capture of iWARP traffic: MPA over TCP) with tshark's
# iWARP dissectors (iwarp_mpa, iwarp_ddp_rdmap) and fails on any
#   - malformed frame (_ws.malformed),
#   - expert info of severity error (any protocol),
#   - bad MPA CRC (the dissector shows a good CRC as iwarp_mpa.crc_check
#     and a bad one as iwarp_mpa.crc, "should be ..."),
#   - MPA expert finding: reserved bits set, wrong revision, bad length,
#     a reject (unless --allow-reject),
#   - RDMAP Terminate (unless --allow-terminate),
#   - TCP segment missing from the capture (the capture cannot be judged),
# or when fewer than N frames (default 1) carry an MPA FPDU (the dissector
# did not recognise the connection: it needs the MPA Request/Reply).
# The rpcordma heuristic is disabled: it reads rping and perftest payloads
# as broken RPC-over-RDMA and marks them malformed (siw's traffic too).
# --startup-only judges only the MPA Requests/Replies and the capture's
# completeness: tshark's dissector loses the FPDU boundaries of a direction
# that carries MPA markers and then reports payload as malformed frames or
# Terminates, so on such captures tests/vm/pair/mpa-wire-check.py alone
# judges the FPDUs.
# DECODE_AS (e.g. tcp.port==20001,iwarp_mpa) is passed as tshark -d.
# Prints what it found; the last line is a one-line summary. Exit 0 if clean,
# 1 if not, 2 on a usage error or when tshark cannot read the file.

set -uo pipefail

min_fpdus=1
allow_term=0
allow_reject=0
startup_only=0
decode=()
while [ $# -gt 1 ]; do
	case "$1" in
	--min-fpdus) min_fpdus=${2:?}; shift ;;
	--allow-terminate) allow_term=1 ;;
	--allow-reject) allow_reject=1 ;;
	--startup-only) startup_only=1 ;;
	-d) decode+=(-d "${2:?}"); shift ;;
	*) break ;;
	esac
	shift
done
if [ $# -ne 1 ] || [ ! -r "$1" ]; then
	sed -n '3,5s/^# \{0,1\}//p' "$0" >&2
	exit 2
fi
pcap=$1

tshark_r() {
	tshark -n -r "$pcap" --disable-protocol rpcordma "${decode[@]}" "$@" 2>/dev/null
}

# count FILTER: frames matching FILTER.
count() {
	tshark_r -Y "$1" -T fields -e frame.number | wc -l
}

# report WHAT FILTER: print up to 10 matching frames; return 1 if any.
report() {
	local n
	n=$(count "$2")
	[ "$n" -eq 0 ] && return 0
	echo "$n frame(s) with $1 ($2), e.g.:"
	tshark_r -Y "$2" -T fields -e frame.number -e tcp.srcport -e tcp.dstport \
		-e _ws.col.Protocol -e _ws.col.Info -e _ws.expert.message | head -n 10 |
		sed 's/^/    /'
	return 1
}

if ! total=$(tshark -n -r "$pcap" -T fields -e frame.number 2>&1 | wc -l) ||
	! tshark -n -r "$pcap" -c 1 > /dev/null 2>&1; then
	echo "tshark cannot read $pcap"
	exit 2
fi

bad=0
if [ "$startup_only" = 0 ]; then
	report "malformed packets" '_ws.malformed' || bad=1
	report "expert errors" '_ws.expert.severity == error' || bad=1
	report "bad MPA CRC" 'iwarp_mpa.crc' || bad=1
	[ "$allow_term" = 1 ] ||
		report "RDMAP Terminate" 'iwarp_rdma.terminate' || bad=1
fi
report "MPA reserved bits set" 'iwarp_mpa.res.not_set0' || bad=1
report "wrong MPA revision" 'iwarp_mpa.rev.not_set1' || bad=1
report "bad MPA length" 'iwarp_mpa.bad_length' || bad=1
report "segments missing from the capture" 'tcp.analysis.lost_segment' || bad=1
[ "$allow_reject" = 1 ] || report "MPA rejects" 'iwarp_mpa.rej_flag == 1' || bad=1

fpdus=$(count iwarp_mpa.fpdu)
reqs=$(count iwarp_mpa.req)
crc_good=$(count 'iwarp_mpa.crc_check')
if [ "$startup_only" = 0 ] && [ "$fpdus" -lt "$min_fpdus" ]; then
	echo "only $fpdus frame(s) decoded as MPA FPDUs (want >= $min_fpdus): the dissector did not follow the connection"
	bad=1
fi
summary="$total frames, $reqs MPA requests, $fpdus with FPDUs, $crc_good with a good CRC"
[ "$startup_only" = 0 ] || summary+=" (startup frames judged only)"
if [ "$bad" = 0 ]; then
	echo "clean: $summary"
	exit 0
fi
echo "NOT clean: $summary"
exit 1
