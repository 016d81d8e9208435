#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Real RC clients, unchanged: Debian's ibv_rc_pingpong, server and client
# in two processes, each under its own mana-emu (own --mac and --ip),
# joined by a socket: wire; -g 1 is the port's IPv4 RoCE v2 GID.
# Usage: test_rc_clients.sh BUILD_DIR [quick]
set -u
BUILD=${1:?build dir}
QUICK=${2:-}
EMU="$BUILD/bin/mana-emu"
. "$(dirname "$0")/check.sh"
# the TCP port the two sides meet on, one per run (runs may overlap in ctest)
PORT=$((20000 + $$ % 20000))

# pair NAME SERVER-CMD... -- CLIENT-CMD...: both must exit 0
pair() {
	local name=$1 wire="$TMP/$1.wire" srv=() cli=() spid
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	"$EMU" --backend=socket:"$wire" --ip=10.0.0.1/24 --mac=00:0d:3a:00:00:01 \
		--netdev-up -- "${srv[@]}" >"$TMP/$name.srv" 2>&1 &
	spid=$!
	# the server must own the wire before the client joins; as long as it takes
	while [ ! -S "$wire" ] && kill -0 "$spid" 2>/dev/null; do sleep 0.05; done
	"$EMU" --backend=socket:"$wire" --ip=10.0.0.2/24 --mac=00:0d:3a:00:00:02 \
		--netdev-up -- "${cli[@]}" >"$TMP/$name.cli" 2>&1
	check "$name: client exits 0" test $? -eq 0
	wait "$spid"
	check "$name: server exits 0" test $? -eq 0
	PORT=$((PORT + 1))
}

pingpong() { # pingpong NAME ARGS...
	local name=$1
	shift
	pair "$name" ibv_rc_pingpong -d mana_0 -g 1 -c -p "$PORT" "$@" -- \
		ibv_rc_pingpong -d mana_0 -g 1 -c -p "$PORT" "$@" 127.0.0.1
	expect "$name: iterations done" "$TMP/$name.cli" '^\d+ iters in'
	expect_not "$name: no errors" "$TMP/$name.srv" 'Failed|failed|error'
	tail -1 "$TMP/$name.cli"
}

pingpong pp_default
pingpong pp_events -e
pingpong pp_s1 -s 1
pingpong pp_1m -s 1048576 -n 50
if [ "$QUICK" != quick ]; then
	pingpong pp_n10000 -n 10000
	pingpong pp_events_4k -e -s 4096 -n 2000
fi
check_done
