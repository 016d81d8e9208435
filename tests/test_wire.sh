#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Real frames through the emulated device, driven by examples/mana_pktgen
# (a manadv datapath): loopback with RSS, counters checked against the
# device's; Debian's libmana driving the same datapath; two processes
# joined by a socket backend; pcap captures counted by tshark; the Linux
# stack answering through a TAP port (root, own network namespace).
# Usage: test_wire.sh BUILD_DIR [FRAMES [loopback]]: FRAMES for the first
# loopback run (default 10^6); "loopback": that run only.
set -u
BUILD=${1:?build dir}
FRAMES=${2:-1000000}
ONLY=${3:-}
EMU="$BUILD/bin/mana-emu"
PKTGEN="$BUILD/bin/mana-pktgen"
. "$(dirname "$0")/check.sh"

# 1. loopback: FRAMES 64-byte frames, 4 flows over 4 RSS queues
"$EMU" --stats="$TMP/lo.stats" -- "$PKTGEN" --frames="$FRAMES" --size=64 --flows=4 \
	--queues=4 >"$TMP/lo.out" 2>&1
check "loopback run" grep -q "^sent $FRAMES received $FRAMES bad 0 errors 0 rss-split ok$" "$TMP/lo.out"
# every queue got its share, and the device counted what pktgen counted
got=$(sed -n 's/^rxq [0-9]*: frames \([0-9]*\) .*/\1/p' "$TMP/lo.out" | sort -n | tr '\n' ' ')
dev=$(awk '$1 == "rq" { print $3 }' "$TMP/lo.stats" | sort -n | tr '\n' ' ')
check "device RQ counters ($dev) match pktgen ($got)" test "$got" = "$dev"
sq=$(awk '$1 == "sq" { s += $3 } END { print s }' "$TMP/lo.stats")
check "device SQ counters ($sq) match frames sent" test "$sq" = "$FRAMES"
check "no drops or errors in the device" \
	test -z "$(awk '($1 == "rq" || $1 == "sq") && ($5 || $6)' "$TMP/lo.stats")"
cat "$TMP/lo.out"
if [ "$ONLY" = loopback ]; then
	check_done
	exit $?
fi

# 1b. 1500-byte frames, coalesced receive completions
"$EMU" --rx-coalesce -- "$PKTGEN" --frames=100000 --size=1500 --flows=8 --queues=4 \
	>"$TMP/big.out" 2>&1
check "1500-byte frames, coalesced CQEs" \
	grep -q "received 100000 bad 0 errors 0 rss-split ok" "$TMP/big.out"

# 2. Debian's libmana drives the same datapath (its queues: at most 256)
"$EMU" --provider=system -- "$PKTGEN" --frames=100000 --depth=256 >"$TMP/sys.out" 2>&1
check "rdma-core's libmana, same datapath" \
	grep -q "received 100000 bad 0 errors 0 rss-split ok" "$TMP/sys.out"

# 3. two processes joined by a socket: B echoes, A checks every frame.
# --timeout only ends a stuck run: each side may wait for the other's start
# (seconds on a loaded machine, more under ASan), so it is generous.
socket_failed=$failed
"$EMU" --backend=socket:"$TMP/wire" --stats="$TMP/b.stats" -- "$PKTGEN" --mode=echo \
	--frames=50000 --timeout=120 >"$TMP/b.out" 2>&1 &
echo_pid=$!
# B must receive before A sends: B's wire is up with its first queue, but a
# frame that arrives before B's receive queues exist is dropped (unsteered),
# as by a NIC, and A would wait for it forever.  Wait for B's word, as long
# as B takes (a loaded machine can take seconds), not a fixed time.
while ! grep -q '^mana-pktgen: receiving on' "$TMP/b.out" 2>/dev/null &&
	kill -0 "$echo_pid" 2>/dev/null; do sleep 0.05; done
"$EMU" --backend=socket:"$TMP/wire" --stats="$TMP/a.stats" -- "$PKTGEN" --frames=50000 \
	--timeout=120 >"$TMP/a.out" 2>&1
check "socket: A got every frame back" \
	grep -q "^sent 50000 received 50000 bad 0 errors 0 rss-split ok$" "$TMP/a.out"
wait "$echo_pid"
check "socket: B echoed and exited cleanly" test $? -eq 0
check "socket: B saw every frame" grep -q "received 50000 bad 0 errors 0" "$TMP/b.out"
if [ "$failed" -ne "$socket_failed" ]; then
	for f in a.out a.stats b.out b.stats; do
		echo "---- socket: $f" >&2
		cat "$TMP/$f" >&2
	done
fi

# 4. captures: exactly the frames sent (null wire), both directions (loopback)
if command -v tshark >/dev/null; then
	"$EMU" --backend=null --pcap="$TMP/tx.pcap" -- "$PKTGEN" --mode=send --frames=1000 \
		--quiet >/dev/null 2>&1
	n=$(tshark -r "$TMP/tx.pcap" 2>/dev/null | wc -l)
	check "pcap of 1000 sent frames has $n" test "$n" -eq 1000
	n=$(tshark -r "$TMP/tx.pcap" -Y 'udp.dstport == 4791 && frame.len == 64' 2>/dev/null | wc -l)
	check "tshark decodes them as UDP ($n)" test "$n" -eq 1000
	"$EMU" --pcap="$TMP/lo.pcap" -- "$PKTGEN" --frames=500 --quiet >/dev/null 2>&1
	n=$(tshark -r "$TMP/lo.pcap" 2>/dev/null | wc -l)
	check "loopback pcap holds both directions ($n of 1000)" test "$n" -eq 1000
else
	echo "SKIP: tshark not installed"
fi

# 5. TAP: the Linux stack reaches the example (UDP request, reflected reply)
if [ "$(id -u)" -eq 0 ] && [ -c /dev/net/tun ] && ip netns add "mana-emu-$$" 2>/dev/null; then
	cat >"$TMP/tap.sh" <<EOT
"$EMU" --backend=tap:mtap0 --pcap="$TMP/tap.pcap" -- "$PKTGEN" --mode=reflect \
	--frames=5 --queues=1 --timeout=10 >"$TMP/tap.out" 2>&1 &
pg=\$!
# mtap0 exists with pktgen's first queue; it answers once it receives
while ! grep -q '^mana-pktgen: receiving on' "$TMP/tap.out" 2>/dev/null &&
	kill -0 \$pg 2>/dev/null; do sleep 0.05; done
ip link set lo up
ip link set mtap0 up
ip addr add 10.9.0.1/24 dev mtap0
ip neigh add 10.9.0.2 lladdr 00:0d:3a:00:00:01 dev mtap0
/usr/bin/python3 - <<'PY'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.9.0.1", 5555))
s.settimeout(5)
ok = 0
for i in range(5):
    msg = b"mana %d" % i
    s.sendto(msg, ("10.9.0.2", 4791))
    data, peer = s.recvfrom(2048)
    ok += data == msg and peer == ("10.9.0.2", 4791)
print("udp replies ok:", ok)
PY
wait \$pg
EOT
	tap_failed=$failed
	ip netns exec "mana-emu-$$" timeout 60 bash "$TMP/tap.sh" >"$TMP/tap.log" 2>&1
	check "tap: the kernel's UDP socket got 5 replies" grep -q "udp replies ok: 5" "$TMP/tap.log"
	check "tap: pktgen answered 5 frames" grep -q "received 5 " "$TMP/tap.out"
	if [ "$failed" -ne "$tap_failed" ]; then
		echo "---- tap: the script's output" >&2
		cat "$TMP/tap.log" "$TMP/tap.out" >&2
	fi
	if command -v tshark >/dev/null; then
		n=$(tshark -r "$TMP/tap.pcap" -Y 'udp.port == 4791' 2>/dev/null | wc -l)
		check "tap: capture holds 5 requests and 5 replies ($n)" test "$n" -eq 10
	fi
	ip netns del "mana-emu-$$"
else
	echo "SKIP: TAP test needs root, /dev/net/tun and network namespaces"
fi

check_done
