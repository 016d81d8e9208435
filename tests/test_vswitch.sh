#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# socket: as a virtual switch, between whole emulated VMs (mana-emu
# processes running examples/mana_pktgen):
# 1. a receiver slower than its sender (it sleeps after every poll that
#    found frames, and reposts its buffers) gets every frame in order: the
#    sender is held back, nothing is dropped -- the sender's port sent N,
#    the receiver's port and RQ took N, no drop counter moved;
# 2. eight VMs, four sender -> receiver pairs, each receiver its own MAC;
#    every receiver stops at a quarter of its frames (its sender held back
#    by the wire), then the first VM on the wire, its sender and one more
#    sender are killed with SIGKILL; the receivers go on; the two other
#    pairs get every frame, checked, in order, and nothing of anyone
#    else's.
# Usage: test_vswitch.sh BUILD_DIR
set -u
BUILD=${1:?build dir}
EMU="$BUILD/bin/mana-emu"
PKTGEN="$BUILD/bin/mana-pktgen"
. "$(dirname "$0")/check.sh"

# whatever happens, no VM outlives the test (two senders never end alone)
declare -a lp
cleanup() { [ ${#lp[@]} = 0 ] || kill -KILL "${lp[@]}" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT

mac() { printf '00:0d:3a:00:%02x:%02x' "$1" "$2"; }

# port line of a --stats file: "tx_frames tx_drops rx_frames rx_drops"
port_counts() { awk '$1 == "port" && $2 == 1 { print $4, $6, $7, $9 }' "$1"; }
rq_drops() { awk '$1 == "rq" { d += $5 } END { print d + 0 }' "$1"; }

# wait_for FILE PATTERN: until a VM says it is ready (bounded)
wait_for() {
	local i
	for i in $(seq 600); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# 1. slow receiver
N=30000
W="$TMP/slow"
"$EMU" --backend=socket:"$W" --mac="$(mac 1 1)" --stats="$TMP/r.stats" -- \
	"$PKTGEN" --mode=recv --frames=$N --queues=1 --flows=2 --verify \
	--rx-sleep=3000 --timeout=20 >"$TMP/r.out" 2>&1 &
rpid=$!
check "slow receiver started" wait_for "$TMP/r.out" "receiving on"
"$EMU" --backend=socket:"$W" --mac="$(mac 1 2)" --stats="$TMP/s.stats" -- \
	"$PKTGEN" --mode=send --frames=$N --queues=1 --flows=2 \
	--dmac="$(mac 1 1)" >"$TMP/s.out" 2>&1
check "fast sender exited cleanly" test $? -eq 0
wait $rpid
check "slow receiver exited cleanly" test $? -eq 0
expect "slow receiver got every frame, in order" "$TMP/r.out" \
	"^sent 0 received $N bad 0 errors 0"
read -r stx stxd srx srxd < <(port_counts "$TMP/s.stats")
read -r rtx rtxd rrx rrxd < <(port_counts "$TMP/r.stats")
check "sender's port sent $N (tx $stx, drops $stxd)" \
	test "$stx" = $N -a "$stxd" = 0
check "receiver's port took $N (rx $rrx, drops $rrxd)" \
	test "$rrx" = $N -a "$rrxd" = 0
check "receiver's RQ dropped nothing" test "$(rq_drops "$TMP/r.stats")" = 0
[ "$failed" = 0 ] || cat "$TMP/r.out" "$TMP/s.out" "$TMP/r.stats" "$TMP/s.stats" >&2

# 2. eight VMs on one wire, three killed mid-transfer
W="$TMP/eight"
BIG=1000000000		# pairs 0 and 1 send until killed
N=20000
for p in 0 1 2 3; do
	n=$N
	to=20
	[ $p -lt 2 ] && n=$BIG && to=3
	sleep_opt=
	[ $p = 3 ] && sleep_opt=--rx-sleep=1000	# one pair's receiver is slow
	"$EMU" --backend=socket:"$W" --mac="$(mac $((p + 2)) 1)" \
		--stats="$TMP/r$p.stats" -- "$PKTGEN" --mode=recv --frames=$n \
		--queues=1 --flows=1 --verify $sleep_opt --timeout=$to \
		--progress=$((N / 4)) --resume-file="$TMP/resume" \
		>"$TMP/r$p.out" 2>&1 &
	lp[$((2 * p))]=$!
	# in order: receiver 0 is the first VM on the wire
	if ! wait_for "$TMP/r$p.out" "receiving on"; then
		fail "receiver $p did not start:"
		cat "$TMP/r$p.out" >&2
		check_done
		exit 1
	fi
	"$EMU" --backend=socket:"$W" --mac="$(mac $((p + 2)) 2)" \
		--stats="$TMP/s$p.stats" -- "$PKTGEN" --mode=send --frames=$n \
		--queues=1 --flows=1 --dmac="$(mac $((p + 2)) 1)" --quiet \
		>"$TMP/s$p.out" 2>&1 &
	lp[$((2 * p + 1))]=$!
done
# mid-transfer: every receiver stops at a quarter of its frames (its
# sender is held back meanwhile) until $TMP/resume exists
for p in 0 1 2 3; do
	if ! wait_for "$TMP/r$p.out" "received $((N / 4))"; then
		fail "pair $p not under way:"
		tail -n 5 "$TMP/r$p.out" >&2
		check_done
		exit 1
	fi
done
# the VM's process is the command under each launcher
vm_pid() { pgrep -P "$1" -x mana-pktgen; }
killed=0
for i in 0 1 3; do		# receiver 0, sender 0, sender 1
	pid=$(vm_pid "${lp[$i]}") && kill -KILL "$pid" && killed=$((killed + 1))
done
check "three VMs killed mid-transfer ($killed)" test $killed = 3
touch "$TMP/resume"
for i in 0 1 3; do
	wait "${lp[$i]}"
	check "VM $i died of SIGKILL" test $? = 137
done
for p in 2 3; do
	wait "${lp[$((2 * p + 1))]}"
	check "sender $p exited cleanly" test $? -eq 0
	wait "${lp[$((2 * p))]}"
	check "receiver $p exited cleanly" test $? -eq 0
	expect "receiver $p got its sender's $N frames, checked, in order" \
		"$TMP/r$p.out" "^sent 0 received $N bad 0 errors 0"
	read -r stx stxd srx srxd < <(port_counts "$TMP/s$p.stats")
	check "sender $p's port sent $N, dropped none ($stx, $stxd)" \
		test "$stx" = $N -a "$stxd" = 0
	read -r rtx rtxd rrx rrxd < <(port_counts "$TMP/r$p.stats")
	check "receiver $p's port took exactly $N ($rrx)" test "$rrx" = $N
	check "receiver $p's RQ dropped nothing" \
		test "$(rq_drops "$TMP/r$p.stats")" = 0
done
# receiver 1 lost its sender: it gives up 3 s after its last frame
wait "${lp[2]}"
expect "receiver 1 took only its own sender's frames" "$TMP/r1.out" " bad 0 errors 0"
check "the wire's directory went with the last VM" test ! -e "$W"
[ "$failed" = 0 ] || { tail -n 5 "$TMP"/*.out; grep -H "^port\|^rq\|^sq" "$TMP"/*.stats; } >&2
check_done
