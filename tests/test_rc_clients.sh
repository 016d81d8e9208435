#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Real RDMA clients, unchanged, between two emulated VMs: each side runs
# under its own mana-emu (its own MAC and IP address), the two devices are
# joined by the socket wire, and the programs meet over TCP on localhost as
# they would over the VMs' network.  RC traffic then flows as RoCEv2
# packets through the emulated RNICs.
#
# Usage: test_rc_clients.sh BUILD_DIR CASE [ARGS...]
#   pingpong [ARGS...]     Debian's ibv_rc_pingpong -c (it checks the data)
#   uc_pingpong [ARGS...]  Debian's ibv_uc_pingpong -c (UC QPs: run it
#                          "with --kernel=newest", Linux 7.2's UC)
#   perftest PROG [ARGS..] ib_send_bw, ib_write_bw, ib_read_bw, ib_*_lat
#   pcap write|pingpong    a short ib_write_bw or ibv_rc_pingpong captured
#                          and decoded by tshark
#   fault FAULT PROG [ARGS...]
#                          PROG (pingpong -c or a perftest) with the wire
#                          fault FAULT (--fault=) on both sides
#   pyverbs FAULT TESTS    tests/test_pyverbs_rc.py's data tests TESTS (a
#                          pytest -k expression) on one VM under FAULT
#   with EMU_OPTION CASE [ARGS...]
#                          CASE with one more mana-emu option on both VMs
set -u
BUILD=${1:?build dir}
CASE=${2:?case}
shift 2
EMU="$BUILD/bin/mana-emu"
. "$(dirname "$0")/check.sh"

# GIDs: 0 the link-local one made from the MAC (EUI-64), 1 the IPv4 one
# (::ffff:a.b.c.d, ARP), 2 the global IPv6 one (neighbour solicitation).
# The default is 1; a case may give its own -g / -x instead (perftest 25.x,
# Debian 13's, refuses -x given twice).
GID_INDEX=1
SERVER_OPTS=(--netdev-up --mac=00:0d:3a:00:01:01 --ip=192.168.77.1/24
	--ip=fd00:77::1/64)
CLIENT_OPTS=(--netdev-up --mac=00:0d:3a:00:02:01 --ip=192.168.77.2/24
	--ip=fd00:77::2/64)
WIRE=$TMP/wire
EXTRA_BOTH=()		# emulator options for both sides (faults)

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait until PID listens on TCP PORT (the server accepts one connection, so
# probing it by connecting would steal the client's); false if it died
# first.  Not the wire: perftest creates its QPs, and so joins the wire,
# only after the client connected; whichever side joins first binds PATH
# (the socket wire serialises that).
wait_listen() { # wait_listen PID PORT
	while kill -0 "$1" 2>/dev/null; do
		[ -n "$(ss -Hltn "sport = :$2" 2>/dev/null)" ] && return 0
		sleep 0.05
	done
	return 1
}

# run_pair NAME [SERVER_EMU_OPTS...] -- COMMAND...: server then client
# (the client gets 127.0.0.1 appended); both must exit 0.  The timeout only
# turns a hang into a failure before ctest's own (600 s) would; nothing is
# asserted about how long it takes (10000 pingpong rounds under ASan on a
# loaded 2-core machine took over two minutes).
run_pair() {
	local name=$1 port spid src crc
	shift
	local extra=() client_extra=()
	while [ "$1" != "--" ]; do extra+=("$1"); shift; done
	shift
	port=$(free_port)
	# each side's counters, for the fault checks and for a failure's report
	extra+=(--stats="$TMP/$name.server.stats")
	client_extra=(--stats="$TMP/$name.client.stats")
	timeout 500 "$EMU" "${SERVER_OPTS[@]}" --backend=socket:"$WIRE" \
		"${EXTRA_BOTH[@]}" "${extra[@]}" -- \
		"$@" -p "$port" >"$TMP/$name.server" 2>&1 &
	spid=$!
	if ! wait_listen "$spid" "$port"; then
		wait "$spid"
		fail "$name: server did not start (status $?)"
		cat "$TMP/$name.server" >&2
		return 1
	fi
	timeout 500 "$EMU" "${CLIENT_OPTS[@]}" --backend=socket:"$WIRE" \
		"${EXTRA_BOTH[@]}" "${client_extra[@]}" -- \
		"$@" -p "$port" 127.0.0.1 >"$TMP/$name.client" 2>&1
	crc=$?
	# a failed client leaves pingpong's server waiting for ever: end it
	# (timeout passes the signal on)
	[ "$crc" -eq 0 ] || kill -TERM "$spid" 2>/dev/null
	wait "$spid"
	src=$?
	if [ "$src" -eq 0 ] && [ "$crc" -eq 0 ]; then
		ok
		return 0
	fi
	fail "$name: server status $src, client status $crc"
	echo "--- server:" >&2
	cat "$TMP/$name.server" >&2
	echo "--- client:" >&2
	cat "$TMP/$name.client" >&2
	echo "--- server, client --stats:" >&2
	cat "$TMP/$name.server.stats" "$TMP/$name.client.stats" >&2 2>/dev/null
	return 1
}

gid_opt() { # gid_opt OPTION ARGS...: "OPTION $GID_INDEX" unless ARGS give OPTION
	local opt=$1 a
	shift
	for a in "$@"; do
		[ "$a" = "$opt" ] && return 0
	done
	echo "$opt $GID_INDEX"
}

pingpong() { # pingpong ARGS...
	# -c: every received buffer is checked against the pattern the peer sent
	run_pair pingpong -- ibv_rc_pingpong -d mana_0 $(gid_opt -g "$@") -c "$@" || return 1
	expect "pingpong: client finished" "$TMP/pingpong.client" '^\d+ iters in'
	expect "pingpong: server finished" "$TMP/pingpong.server" '^\d+ iters in'
	expect_not "pingpong: no errors" "$TMP/pingpong.server" 'Failed|failed|error'
	tail -1 "$TMP/pingpong.client"
}

uc_pingpong() { # uc_pingpong ARGS...
	run_pair uc_pingpong -- ibv_uc_pingpong -d mana_0 $(gid_opt -g "$@") -c "$@" ||
		return 1
	expect "uc_pingpong: client finished" "$TMP/uc_pingpong.client" '^\d+ iters in'
	expect "uc_pingpong: server finished" "$TMP/uc_pingpong.server" '^\d+ iters in'
	expect_not "uc_pingpong: no errors" "$TMP/uc_pingpong.server" 'Failed|failed|error'
	tail -1 "$TMP/uc_pingpong.client"
}

perftest() { # perftest PROG ARGS...
	local prog=$1
	shift
	run_pair "$prog" -- "$prog" -d mana_0 $(gid_opt -x "$@") "$@" || return 1
	for side in server client; do
		expect_not "$prog $side: no errors" "$TMP/$prog.$side" \
			'Completion with error|[Ff]ailed|Unable to|Couldn.t|[Ee]rror'
	done
	# the result table: one line of numbers under the header
	expect "$prog: results reported" "$TMP/$prog.client" \
		'^\s*\d+\s+\d+\s+[\d.]+'
	tail -2 "$TMP/$prog.client"
}

while [ "$CASE" = with ]; do
	EXTRA_BOTH+=("${1:?emulator option}")
	CASE=${2:?case}
	shift 2
done

case $CASE in
pingpong)
	pingpong "$@"
	;;
uc_pingpong)
	uc_pingpong "$@"
	;;
perftest)
	perftest "$@"
	;;
fault)
	# the same fault on both emulated VMs: requests, responses and ACKs of
	# both directions are hit.  pingpong -c checks every byte it receives;
	# perftest checks only that every work request completed without error
	# (the pyverbs case checks the data under drops).  pingpong gets no
	# drops: it has no closing handshake, so a side whose last message was
	# received exits, and if the ACK of that message is lost the peer's
	# retransmissions meet a QP that no longer exists and end in "transport
	# retry counter exceeded" -- on real hardware too.  perftest closes
	# with a handshake over its TCP connection.
	fault=${1:?fault}
	EXTRA_BOTH+=(--fault="$fault")
	shift
	prog=${1:?program}
	shift
	if [ "$prog" = pingpong ]; then
		pingpong "$@"
		name=pingpong
	else
		perftest "$prog" "$@"
		name=$prog
	fi
	# the fault really hit RoCE packets (--stats: "roce SENT DROPPED
	# REORDERED"), and the requesters went back for what was lost
	# ("rcqp QPN TX RX RETRANSMITS ...")
	cat "$TMP/$name".*.stats >"$TMP/stats" 2>/dev/null
	grep -h '^roce\|^rcqp' "$TMP/stats"
	hit=$(awk '$1 == "roce" { n += $3 + $4 } END { print n + 0 }' "$TMP/stats")
	resent=$(awk '$1 == "rcqp" { n += $5 } END { print n + 0 }' "$TMP/stats")
	check "$name: $fault hit $hit RoCE packets" test "$hit" -gt 0
	case $fault in
	drop-roce=*)
		check "$name: $resent packets retransmitted" test "$resent" -gt 0 ;;
	esac
	;;
pyverbs)
	# Two QPs of one process on the loopback wire, every RoCE packet of
	# both subject to the fault; each test checks its data byte by byte.
	fault=${1:?fault}
	tests=${2:?pytest -k expression}
	"$EMU" --netdev-up --ip=192.168.77.1/24 --fault="$fault" \
		--stats="$TMP/py.stats" -- /usr/bin/python3 -m pytest -q \
		-p no:cacheprovider "$(dirname "$0")/test_pyverbs_rc.py" \
		-k "$tests" >"$TMP/py.out" 2>&1
	rc=$?
	check "pyverbs under $fault: $(tail -1 "$TMP/py.out")" test "$rc" -eq 0
	expect "pyverbs: some tests ran" "$TMP/py.out" '^\d+ passed'
	grep '^roce' "$TMP/py.stats"
	hit=$(awk '$1 == "roce" { print $3 + $4 }' "$TMP/py.stats")
	check "$fault hit ${hit:-no} RoCE packets" test "${hit:-0}" -gt 0
	tail -1 "$TMP/py.out"
	[ "$failed" -eq 0 ] || cat "$TMP/py.out" >&2
	;;
pcap)
	# The server's port is captured (both directions); tshark decodes RoCE.
	# Counted are distinct (opcode, PSN, QPN) triples: a retransmission
	# (a timer firing on a loaded machine) repeats one and is no new packet.
	# RC opcodes: SEND First 0, Middle 1, Last 2, Only 4 (Last/Only with
	# immediate 3/5); RDMA WRITE First 6, Middle 7, Last 8, Only 10
	# (with immediate 9/11); Acknowledge 17.
	mtu=1024
	case ${1:?write or pingpong} in
	write)
		# ib_write_bw -n N sends exactly N messages (no warm-up for an RC
		# write_bw without --perform_warm_up); 8 KiB at path MTU 1024 is
		# 8 packets each: First, 6 Middle, Last
		iters=20 size=8192
		name=write_pcap
		ops='$1 >= 6 && $1 <= 11'
		want=$((iters * (size / mtu)))
		run_pair "$name" --pcap="$TMP/cap.pcap" -- ib_write_bw -d mana_0 \
			-x "$GID_INDEX" -n "$iters" -s "$size" -m "$mtu" || true
		;;
	pingpong)
		# N rounds of a 3000-byte SEND each way, 3 packets each
		iters=5 size=3000
		name=pingpong_pcap
		ops='$1 <= 5'
		want=$((iters * 2 * ((size + mtu - 1) / mtu)))
		run_pair "$name" --pcap="$TMP/cap.pcap" -- ibv_rc_pingpong -d mana_0 \
			-g "$GID_INDEX" -c -n "$iters" -s "$size" -m "$mtu" || true
		;;
	esac
	tshark -r "$TMP/cap.pcap" -Y infiniband -T fields -e infiniband.bth.opcode \
		-e infiniband.bth.psn -e infiniband.bth.destqp \
		>"$TMP/fields.txt" 2>"$TMP/tshark.err"
	check "tshark read the capture" test $? -eq 0
	got=$(awk "$ops" "$TMP/fields.txt" | sort -u | wc -l)
	check "$name: $got distinct data packets, messages x segments: $want" \
		test "$got" -eq "$want"
	check "$name: every RoCE packet has an opcode, a PSN and a QPN" \
		test -z "$(awk 'NF != 3' "$TMP/fields.txt")"
	acks=$(awk '$1 == 17' "$TMP/fields.txt" | wc -l)
	check "$name: acknowledgements on the wire ($acks)" test "$acks" -gt 0
	;;
*)
	echo "unknown case $CASE" >&2
	exit 2
	;;
esac
check_done
