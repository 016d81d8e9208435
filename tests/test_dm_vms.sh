#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# tests/test_dm.c between two emulated VMs (newest kernel) on the socket
# wire: the target writes half of its device memory with ibv_memcpy_to_dm
# and registers a DM MR; the initiator READs that half and WRITEs the
# other; the target finds both with ibv_memcpy_from_dm.  They talk over two
# FIFOs (the target's fds 3 and 4 are the initiator's 4 and 3).
#
# Usage: test_dm_vms.sh BUILD_DIR TEST_PROGRAM
set -u
BUILD=${1:?build dir}
PROG=${2:?test program}
EMU="$BUILD/bin/mana-emu"
. "$(dirname "$0")/check.sh"

mkfifo "$TMP/t2i" "$TMP/i2t"
# the timeout only turns a hang into a failure
timeout 300 "$EMU" --kernel=newest --netdev-up --backend=socket:"$TMP/wire" \
	--mac=00:0d:3a:00:0c:01 --ip=192.168.89.1/24 -- \
	"$PROG" target 4>"$TMP/t2i" 3<"$TMP/i2t" >"$TMP/target" 2>&1 &
tpid=$!
timeout 300 "$EMU" --kernel=newest --netdev-up --backend=socket:"$TMP/wire" \
	--mac=00:0d:3a:00:0d:01 --ip=192.168.89.2/24 -- \
	"$PROG" initiator 3<"$TMP/t2i" 4>"$TMP/i2t" >"$TMP/initiator" 2>&1
irc=$?
wait "$tpid"
trc=$?
check "target (status $trc)" test "$trc" -eq 0
check "initiator (status $irc)" test "$irc" -eq 0
echo "--- target:"
cat "$TMP/target"
echo "--- initiator:"
cat "$TMP/initiator"
check_done
