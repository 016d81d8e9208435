#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# tests/test_rc_attack.c (or test_verbs_uc's uc2vm case: the "victim" is the
# UC responder) between two emulated VMs joined by the socket wire:
# the victim and the attacker, each under its own mana-emu (own MAC and IP
# address), talking over two FIFOs (the victim's fds 3 and 4 are the
# attacker's 4 and 3).  Both must exit 0.
#
# Usage: test_rc_attack.sh BUILD_DIR TEST_PROGRAM CASE
set -u
BUILD=${1:?build dir}
PROG=${2:?test program}
CASE=${3:?case}
EMU="$BUILD/bin/mana-emu"
. "$(dirname "$0")/check.sh"

mkfifo "$TMP/v2a" "$TMP/a2v"
# memory windows (7.1) and UC QPs (7.2): the newest era
KERNEL=()
case "$CASE" in mw|uc*) KERNEL=(--kernel=newest) ;; esac
# fds opened in the same order on both sides (v2a first), so that neither
# open blocks for ever; the timeout only turns a hang into a failure
timeout 300 "$EMU" "${KERNEL[@]}" --netdev-up --backend=socket:"$TMP/wire" \
	--mac=00:0d:3a:00:0a:01 --ip=192.168.88.1/24 -- \
	"$PROG" "$CASE" victim 4>"$TMP/v2a" 3<"$TMP/a2v" >"$TMP/victim" 2>&1 &
vpid=$!
timeout 300 "$EMU" "${KERNEL[@]}" --netdev-up --backend=socket:"$TMP/wire" \
	--mac=00:0d:3a:00:0b:01 --ip=192.168.88.2/24 -- \
	"$PROG" "$CASE" attacker 3<"$TMP/v2a" 4>"$TMP/a2v" >"$TMP/attacker" 2>&1
arc=$?
wait "$vpid"
vrc=$?
check "$CASE: victim (status $vrc)" test "$vrc" -eq 0
check "$CASE: attacker (status $arc)" test "$arc" -eq 0
echo "--- victim:"
cat "$TMP/victim"
echo "--- attacker:"
cat "$TMP/attacker"
check_done
