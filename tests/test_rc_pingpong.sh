#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Debian's ibv_rc_pingpong, unchanged, between two processes: each under
# its own mana-emu (own MAC and --ip), joined by a socket: wire.  Server
# and client must both succeed with their own data checks (--chk), over
# an IPv4 GID (ARP), an IPv6 link-local GID (EUI-64) and a global IPv6
# GID (neighbour solicitation), with completion events (-e), large
# messages, and lossy wire; the pcap must decode in tshark as RoCE.
set -uo pipefail
build=$1
emu=$build/bin/mana-emu
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$dir"' EXIT
# a TCP port per run, away from the other tests' (pingpong's out-of-band)
port=$((20000 + $$ % 20000))
fail=0

run() { # NAME "EMU OPTIONS" PINGPONG ARGS...
	local name=$1 opts=$2
	shift 2
	port=$((port + 1))
	rm -f "$dir/sw"
	# shellcheck disable=SC2086
	timeout 300 "$emu" --netdev-up --backend=socket:"$dir/sw" \
		--ip=10.2.0.1/24 --ip=fd00:2::1/64 --stats="$dir/s1" $opts -- \
		ibv_rc_pingpong -p $port --chk "$@" >"$dir/srv" 2>&1 &
	local srv=$!
	sleep 0.5
	# shellcheck disable=SC2086
	timeout 300 "$emu" --netdev-up --backend=socket:"$dir/sw" \
		--mac=00:0d:3a:00:10:01 --ip=10.2.0.2/24 --ip=fd00:2::2/64 \
		--stats="$dir/s2" $opts -- \
		ibv_rc_pingpong -p $port --chk "$@" 127.0.0.1 >"$dir/cli" 2>&1
	local c=$?
	wait $srv
	local s=$?
	if [ $c -ne 0 ] || [ $s -ne 0 ]; then
		echo "FAIL $name: client $c server $s"
		cat "$dir/srv" "$dir/cli"
		fail=1
		return 1
	fi
	echo "ok $name: $(tail -1 "$dir/cli")"
	grep -hE '^(rcqp|roce) ' "$dir/s1" "$dir/s2"
	return 0
}

run "IPv4 GID, default size" "" -g 1 -n 1000
run "IPv6 link-local GID" "" -g 0 -n 200
run "IPv6 global GID, events" "" -g 2 -n 200 -e
run "1 byte" "" -g 1 -s 1 -n 200
run "1 MiB" "" -g 1 -s 1048576 -n 10
run "lossy wire" "--fault=drop-roce=20,reorder-roce=15" -g 1 -s 20000 -n 100
if run "pcap" "--pcap=$dir/pp.pcap" -g 1 -s 3000 -n 5; then
	# 5 rounds each way of 3 packets (MTU 1024): 30 SEND packets
	n=$(tshark -r "$dir/pp.pcap" -Y 'infiniband.bth.opcode <= 5' \
		-T fields -e infiniband.bth.opcode -e infiniband.bth.psn \
		-e infiniband.bth.destqp 2>/dev/null | sort -u | wc -l)
	echo "pcap: $n distinct SEND packets"
	[ "$n" -eq 30 ] || { echo "FAIL pcap: $n SEND packets, want 30"; fail=1; }
fi
exit $fail
