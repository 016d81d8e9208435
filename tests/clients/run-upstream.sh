#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# By-hand fidelity check: clients nobody here wrote, run unchanged against
# mana-emu, one PASS/FAIL line per check.  It never builds them: give the
# directories of your own builds (README, "Fidelity: clients nobody here
# wrote", says how to make them).  CTest does not run it.
#
# usage: tests/clients/run-upstream.sh [--build DIR] [--rdma-core DIR]
#            [--rdma-core-tests DIR] [--dpdk DIR] [--runs N] [--seconds S]
#            [--only REGEX] [--logs DIR]
#   --build DIR            this project's build directory (default: build/)
#   --rdma-core DIR        an rdma-core in-place build (cmake -DIN_PLACE=1;
#                          DIR or DIR/build holds bin/ibv_devinfo, lib/,
#                          etc/libibverbs.d): its libibverbs and libmana,
#                          its ibv_rc_pingpong and run_tests.py (v64 tested)
#   --rdma-core-tests DIR  an rdma-core source tree whose tests/ run on the
#                          system's python3-pyverbs through OUR provider
#                          (v44 on Debian 12)
#   --dpdk DIR             a DPDK build directory (or a tree with build/)
#                          holding app/dpdk-testpmd with net/mana
#   --runs N, --seconds S  testpmd: N runs of S seconds (default 20 x 8)
#   --kernel VERSION       mana-emu --kernel (default: the emulator's,
#                          the newest); from 7.2's split the suites get
#                          --dev mana_0 (RDMA) or manae_0 (raw packet)
#   --only REGEX           run only the checks whose names match
#   --logs DIR             keep every log there (default: a temporary dir,
#                          kept when a check fails)
# Checks whose inputs are not given are listed as SKIP.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$HERE/../../build
RC='' RCT='' DPDK='' RUNS=20 SECS=8 ONLY=. LOGS='' KOPT=()
PY=${PYTHON:-/usr/bin/python3}
while [ $# -gt 0 ]; do
	case $1 in
	--build) BUILD=$2; shift 2 ;;
	--rdma-core) RC=$2; shift 2 ;;
	--rdma-core-tests) RCT=$2; shift 2 ;;
	--dpdk) DPDK=$2; shift 2 ;;
	--runs) RUNS=$2; shift 2 ;;
	--seconds) SECS=$2; shift 2 ;;
	--only) ONLY=$2; shift 2 ;;
	--kernel) KOPT=(--kernel="$2"); shift 2 ;;
	--logs) LOGS=$2; shift 2 ;;
	-h|--help) sed -n '3,27p' "$0"; exit 0 ;;
	*) echo "run-upstream.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
die() { echo "run-upstream.sh: $*" >&2; exit 2; }
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || die "no build directory (--build)"
EMU=$BUILD/bin/mana-emu
[ -x "$EMU" ] || die "$EMU missing: build this project first"
# the era's devices: one mana_0, or (the split, 6.16 on) manae_0 for raw
# packet QPs and mana_0 for RDMA
RDMA_DEV=mana_0 RAW_DEV=mana_0
if "$EMU" "${KOPT[@]}" -- ibv_devices 2>/dev/null | grep -qw manae_0; then
	RAW_DEV=manae_0
fi
if [ -n "$RC" ]; then
	[ -x "$RC/bin/ibv_devinfo" ] || RC=$RC/build
	if ! [ -x "$RC/bin/ibv_devinfo" ] || ! [ -d "$RC/lib" ]; then
		die "--rdma-core: no bin/ibv_devinfo in $RC (an in-place build)"
	fi
	RC=$(cd "$RC" && pwd)
fi
if [ -n "$RCT" ]; then
	[ -f "$RCT/tests/run_tests.py" ] || die "--rdma-core-tests: no tests/run_tests.py in $RCT"
	RCT=$(cd "$RCT" && pwd)
fi
if [ -n "$DPDK" ]; then
	[ -x "$DPDK/app/dpdk-testpmd" ] || DPDK=$DPDK/build
	[ -x "$DPDK/app/dpdk-testpmd" ] || die "--dpdk: no app/dpdk-testpmd in $DPDK"
fi
KEEP=1
if [ -z "$LOGS" ]; then
	LOGS=$(mktemp -d /tmp/run-upstream.XXXXXX)
	KEEP=0
fi
mkdir -p "$LOGS" || die "cannot make $LOGS"
LOGS=$(cd "$LOGS" && pwd)
passed=0 failed=0 skipped=0

result() { # result NAME pass|fail|skip DETAIL
	case $2 in
	pass) passed=$((passed + 1)); echo "PASS $1: $3" ;;
	fail) failed=$((failed + 1)); echo "FAIL $1: $3" ;;
	*) skipped=$((skipped + 1)); echo "SKIP $1: $3" ;;
	esac
}
want() { [[ $1 =~ $ONLY ]]; }

# the upstream stack: its libibverbs (which reads its own in-place config
# and so loads its libmana) and its libmana.so.1 for manadv users; ours is
# not preloaded
upstream() { LD_LIBRARY_PATH=$RC/lib "$EMU" "${KOPT[@]}" --provider=system "$@"; }

free_port() {
	"$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

check_devinfo() {
	local log=$LOGS/v64.devinfo.log
	LD_DEBUG=libs upstream -- "$RC/bin/ibv_devinfo" -v >"$log" 2>&1
	local rc=$?
	if [ $rc -ne 0 ]; then
		result v64.devinfo fail "status $rc ($log)"
	elif ! grep -q "calling init: $RC/lib/libmana-rdmav" "$log"; then
		result v64.devinfo fail "the in-place libmana was not loaded ($log)"
	elif ! grep -qP '^hca_id:\s+mana_0' "$log"; then
		result v64.devinfo fail "no mana_0 ($log)"
	else
		result v64.devinfo pass "mana_0 through $RC/lib/libmana-rdmav*.so"
	fi
}

check_pktgen() {
	local log=$LOGS/v64.pktgen_4q.log
	LD_DEBUG=libs upstream --stats="$LOGS/v64.pktgen_4q.stats" -- \
		"$BUILD/bin/mana-pktgen" --mode=loopback --queues=4 \
		--frames=100000 >"$log" 2>&1
	local rc=$?
	local last
	last=$(grep '^sent ' "$log" | tail -1)
	if [ $rc -ne 0 ]; then
		result v64.pktgen_4q fail "status $rc: ${last:-no result} ($log)"
	elif ! grep -q "calling init: $RC/lib/libmana.so.1" "$log"; then
		result v64.pktgen_4q fail "mana-pktgen did not get $RC/lib/libmana.so.1 ($log)"
	elif [[ $last != *"received 100000 bad 0 errors 0 rss-split ok"* ]]; then
		result v64.pktgen_4q fail "$last ($log)"
	else
		result v64.pktgen_4q pass "$last"
	fi
}

# two emulated VMs on one socket wire, v64's ibv_rc_pingpong -c on each
check_pingpong() { # check_pingpong NAME PINGPONG-ARGS...
	local name=$1 port spid src crc
	shift
	local wire=$LOGS/$name.wire
	rm -f "$wire"
	port=$(free_port)
	timeout 300 env LD_LIBRARY_PATH="$RC/lib" "$EMU" "${KOPT[@]}" --provider=system \
		--netdev-up --mac=00:0d:3a:00:01:01 --ip=192.168.77.1/24 \
		--backend=socket:"$wire" -- "$RC/bin/ibv_rc_pingpong" -d mana_0 \
		-g 1 -c -p "$port" "$@" >"$LOGS/$name.server" 2>&1 &
	spid=$!
	while kill -0 "$spid" 2>/dev/null &&
		[ -z "$(ss -Hltn "sport = :$port" 2>/dev/null)" ]; do
		sleep 0.05
	done
	timeout 300 env LD_LIBRARY_PATH="$RC/lib" "$EMU" "${KOPT[@]}" --provider=system \
		--netdev-up --mac=00:0d:3a:00:02:01 --ip=192.168.77.2/24 \
		--backend=socket:"$wire" -- "$RC/bin/ibv_rc_pingpong" -d mana_0 \
		-g 1 -c -p "$port" "$@" 127.0.0.1 >"$LOGS/$name.client" 2>&1
	crc=$?
	[ $crc -eq 0 ] || kill -TERM "$spid" 2>/dev/null
	wait "$spid"
	src=$?
	if [ $src -eq 0 ] && [ $crc -eq 0 ] &&
		grep -qP '^\d+ iters in' "$LOGS/$name.client"; then
		result "$name" pass "$(grep -P '^\d+ iters in' "$LOGS/$name.client")"
	else
		result "$name" fail "server $src, client $crc: $(tail -1 "$LOGS/$name.client") ($LOGS/$name.client)"
	fi
}

verdict() { # verdict NAME SUITE LOG
	local out rc
	out=$("$PY" "$HERE/unittest_verdict.py" "$2" "$HERE/expected.txt" "$3")
	rc=$?
	if [ $rc -eq 0 ]; then
		result "$1" pass "$(echo "$out" | head -1 | sed 's/^ *//') ($3)"
	else
		result "$1" fail "$(echo "$out" | head -1 | sed 's/^ *//') ($3)"
	fi
	echo "$out" | tail -n +2
}

check_v64_tests() {
	local log=$LOGS/v64.run_tests.log
	# --vm: the rdmacm tests fork their two sides, which must be
	# processes of one VM, as on a real one
	(cd "$LOGS" && upstream --vm="upstream-v64-$$" --netdev-up \
		--ip=192.168.77.1/24 -- \
		"$RC/bin/run_tests.py" --dev "$RDMA_DEV" -v >"$log" 2>&1)
	verdict v64.run_tests v64 "$log"
}

# The raw-packet tests want the VF netdev down (mana_ib answers ENODEV, from
# 7.2 EBUSY, while it holds the port), the RC tests want it up with an address: two passes.
RAW_TESTS='test_qp\.QPTest\.test_(create_raw_qp_|query_raw_qp|raw_qp_)|test_flow\.|test_rss_traffic\.'
NOT_RUN='test_parent_domain\.ParentDomainTrafficTest\.test_mem_align_srq_excq_rc_traffic'

v44() { # v44 EMU-OPTIONS... -- run_tests.py ARGS...
	(cd "$RCT/tests" && PYTHONPATH=$RCT "$EMU" "${KOPT[@]}" "$@")
}

check_v44_tests() {
	local list=$LOGS/v44.tests
	v44 --netdev-up --ip=192.168.77.1/24 -- "$PY" run_tests.py --list-tests \
		2>/dev/null | grep '^tests\.' >"$list"
	if ! [ -s "$list" ]; then
		result v44.run_tests fail "could not list the tests (python3-pyverbs installed?)"
		return
	fi
	local up raw
	# test ids have no blanks: one array element per line
	mapfile -t up < <(grep -Ev "$RAW_TESTS|$NOT_RUN" "$list")
	mapfile -t raw < <(grep -E "$RAW_TESTS" "$list")
	if want v44.run_tests; then
		v44 --vm="upstream-v44-$$" --netdev-up --ip=192.168.77.1/24 -- \
			"$PY" run_tests.py -v --dev "$RDMA_DEV" "${up[@]}" \
			>"$LOGS/v44.run_tests.log" 2>&1
		verdict v44.run_tests v44 "$LOGS/v44.run_tests.log"
	fi
	if want v44.run_tests_raw; then
		v44 -- "$PY" run_tests.py -v --dev "$RAW_DEV" "${raw[@]}" \
			>"$LOGS/v44.run_tests_raw.log" 2>&1
		verdict v44.run_tests_raw v44 "$LOGS/v44.run_tests_raw.log"
	fi
}

# periods of testpmd's --stats-period=1 output after the first one with
# packets received, and how many of those received none
fwd_periods() { # fwd_periods LOG -> "PERIODS ZERO"
	grep -o 'Rx-pps: *[0-9]*' "$1" 2>/dev/null |
		awk '{ if (s) { n++; if ($2 == 0) z++ } else if ($2 > 0) s = 1 }
		     END { print n + 0, z + 0 }'
}

# testpmd io forwarding over the loopback wire, RUNS times, each for SECS
# one-second periods after forwarding started (start-up on a loaded
# machine takes anything from 1 to 10 s, so it is not timed): a stall is a
# period without packets received after the first one with packets, or no
# packets within a minute; CQ drops are the device's --stats, which must be
# 0 when testpmd and the port lost nothing (DPDK polls owner bits and never
# rings a CQ doorbell).  mana-emu passes TERM on; testpmd stops cleanly.
check_testpmd() {
	local i log st pid end p z stalls=0 lossy=0 dropruns=0 bad=0 detail
	for i in $(seq 1 "$RUNS"); do
		log=$LOGS/testpmd.$i.log
		st=$LOGS/testpmd.$i.stats
		(cd "$LOGS" && exec "$EMU" "${KOPT[@]}" --stats="$st" -- \
			"$DPDK/app/dpdk-testpmd" --no-huge -m 1024 -l 0-1 \
			--no-shconf -a 7870:00:00.0 -- --forward-mode=io \
			--tx-first --total-num-mbufs=8192 --stats-period=1 \
			>"$log" 2>&1) &
		pid=$!
		end=$((SECONDS + SECS + 60))
		while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $end ]; do
			read -r p z < <(fwd_periods "$log")
			[ "$p" -ge "$SECS" ] && break
			sleep 1
		done
		kill -TERM "$pid" 2>/dev/null
		wait "$pid"
		read -r p z < <(fwd_periods "$log")
		local drops lost rx
		rx=$(grep -A1 'Accumulated forward' "$log" | grep -o 'RX-packets: *[0-9]*' | awk '{ print $2 }')
		drops=$(awk '$1 == "cq" { d += $5 } END { print d + 0 }' "$st" 2>/dev/null)
		lost=$(awk '$1 == "port" { l += $6 + $9 } END { print l + 0 }' "$st" 2>/dev/null)
		lost=$((lost + $(grep -A1 'Accumulated forward' "$log" | grep -o 'RX-dropped: *[0-9]*' | awk '{ s += $2 } END { print s + 0 }')))
		[ -n "$rx" ] && [ -s "$st" ] || bad=$((bad + 1))
		if [ "$z" -gt 0 ] || ! grep -qP 'Rx-pps:\s+[1-9]' "$log"; then
			stalls=$((stalls + 1))
		fi
		[ "$lost" -gt 0 ] && lossy=$((lossy + 1))
		[ "$lost" -eq 0 ] && [ "$drops" -gt 0 ] && dropruns=$((dropruns + 1))
		echo "  run $i: received ${rx:-?} in $p periods, $z without packets, lost $lost, CQ drops $drops"
	done
	detail="$RUNS runs: $stalls stalled, $dropruns with CQ drops where nothing was lost, $bad without a clean end, $lossy lossy ($LOGS/testpmd.*)"
	if [ $stalls -eq 0 ] && [ $dropruns -eq 0 ] && [ $bad -eq 0 ]; then
		result dpdk.testpmd pass "$detail"
	else
		result dpdk.testpmd fail "$detail"
	fi
}

if [ -n "$RC" ]; then
	want v64.devinfo && check_devinfo
	want v64.pktgen_4q && check_pktgen
	want v64.pingpong_64 && check_pingpong v64.pingpong_64 -s 64 -n 500
	want v64.pingpong_4k && check_pingpong v64.pingpong_4k -s 4096 -n 500
	want v64.pingpong_1m && check_pingpong v64.pingpong_1m -s 1048576 -n 20
	want v64.run_tests && check_v64_tests
else
	result v64.* skip "no --rdma-core"
fi
if [ -n "$RCT" ]; then
	{ want v44.run_tests || want v44.run_tests_raw; } && check_v44_tests
else
	result v44.* skip "no --rdma-core-tests"
fi
if [ -n "$DPDK" ]; then
	want dpdk.testpmd && check_testpmd
else
	result dpdk.* skip "no --dpdk"
fi
if [ $KEEP -eq 1 ] || [ $failed -gt 0 ]; then
	echo "logs: $LOGS"
else
	rm -rf "$LOGS"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
