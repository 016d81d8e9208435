#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Debian's perftest, unchanged, between two emulated VMs (two mana-emu
# processes joined by a socket: wire, -x: the IPv4 GID): ib_send_bw,
# ib_write_bw, ib_read_bw, ib_write_lat, ib_send_lat and a 4-QP run must
# finish without errors; the capture of a short ib_write_bw decodes in
# tshark as RoCE with exactly messages x segments RDMA WRITE packets.
set -uo pipefail
build=$1
emu=$build/bin/mana-emu
command -v ib_write_bw >/dev/null || { echo "perftest missing (build.sh PACKAGES)"; exit 1; }
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$dir"' EXIT
port=$((40000 + $$ % 20000))
fail=0

run() { # "EMU OPTIONS" PROGRAM ARGS...
	local opts=$1 prog=$2
	shift 2
	port=$((port + 1))
	rm -f "$dir/sw"
	# shellcheck disable=SC2086
	timeout 300 "$emu" --netdev-up --backend=socket:"$dir/sw" \
		--ip=10.3.0.1/24 $opts -- "$prog" -p $port -x 1 "$@" \
		>"$dir/srv" 2>&1 &
	local srv=$!
	sleep 1
	# shellcheck disable=SC2086
	timeout 300 "$emu" --netdev-up --backend=socket:"$dir/sw" \
		--mac=00:0d:3a:00:20:01 --ip=10.3.0.2/24 $opts -- \
		"$prog" -p $port -x 1 "$@" 127.0.0.1 >"$dir/cli" 2>&1
	local c=$?
	wait $srv
	local s=$?
	if [ $c -ne 0 ] || [ $s -ne 0 ]; then
		echo "FAIL $prog $*: client $c server $s"
		cat "$dir/srv" "$dir/cli"
		fail=1
		return 1
	fi
	echo "ok $prog $*: $(grep -E '^ +[0-9]' "$dir/cli" | tail -1)"
}

run "" ib_send_bw -n 200
run "" ib_write_bw -n 200
run "" ib_read_bw -n 200
run "" ib_write_lat -n 200
run "" ib_send_lat -n 200
run "" ib_write_bw -n 50 -q 4
if run "--pcap=$dir/bw.pcap" ib_write_bw -n 20 -s 4096; then
	# 20 messages of 4096 bytes at MTU 1024: 4 segments each
	n=$(tshark -r "$dir/bw.pcap" -T fields -e infiniband.bth.opcode \
		-e infiniband.bth.psn -e infiniband.bth.destqp 2>/dev/null |
		awk '$1 >= 6 && $1 <= 11' | sort -u | wc -l)
	echo "pcap: $n RDMA WRITE packets"
	[ "$n" -eq 80 ] || { echo "FAIL pcap: $n RDMA WRITE packets, want 80"; fail=1; }
fi
exit $fail
