#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# kill -9 of the mana-emu launcher ends its command (an application with
# the emulated NIC on the wire) and removes its sysfs tree, every time
# (issue 17: 7 of 7 kills left both).  The command is a shell that writes
# its pid and tree, then execs mana-pktgen receiving forever: PR_SET_PDEATHSIG
# must survive the exec.  Then a normal run: the tree is gone and the
# launcher exits with the command's status.
# Usage: test_launcher_kill.sh BUILD_DIR [RUNS]
set -u
BUILD=${1:?build dir}
RUNS=${2:-7}
EMU="$BUILD/bin/mana-emu"
PKTGEN="$BUILD/bin/mana-pktgen"
. "$(dirname "$0")/check.sh"

# wait_for DESCRIPTION COMMAND...: until COMMAND succeeds (at most ~20 s: an
# upper bound for a loaded machine, not a measurement)
wait_for() {
	local what=$1
	shift
	for _ in $(seq 200); do
		"$@" && return 0
		sleep 0.1
	done
	echo "gave up waiting: $what" >&2
	return 1
}
# a process that has ended (gone, dead or a zombie nobody reaped yet); one
# reaped between a look at /proc and the read of its stat counts as gone
ended() {
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 0
	[ -z "$st" ] || [ "$st" = Z ] || [ "$st" = X ]
}
all_ended() {
	local p
	for p in "$@"; do ended "$p" || return 1; done
}

for run in $(seq "$RUNS"); do
	info="$TMP/info.$run"
	# shellcheck disable=SC2016 # expanded by the command's shell
	"$EMU" -- sh -c 'echo $$ "$MANA_EMU_SYSFS" >"$1.tmp" && mv "$1.tmp" "$1" &&
		exec "$2" --mode=recv --frames=1000000000 --timeout=100000 --quiet' \
		sh "$info" "$PKTGEN" >"$TMP/out.$run" 2>&1 &
	launcher=$!
	if ! wait_for "run $run: the command started" test -s "$info"; then
		fail "run $run: the command did not start"
		kill -9 "$launcher"
		cat "$TMP/out.$run" >&2
		continue
	fi
	read -r child tree <"$info"
	# the launcher's children: the command and its reaper
	kids=$(ps -o pid= --ppid "$launcher" | tr '\n' ' ')
	check "run $run: $tree exists before the kill" test -d "$tree"
	kill -9 "$launcher"
	wait "$launcher" 2>/dev/null
	wait_for "run $run: command $child ends" ended "$child"
	check "run $run: the command ($child) ended with its launcher" ended "$child"
	wait_for "run $run: $tree removed" test ! -e "$tree"
	check "run $run: the tree $tree was removed" test ! -e "$tree"
	# shellcheck disable=SC2086 # a list of pids
	wait_for "run $run: the launcher's children ($kids) end" all_ended $kids
	# shellcheck disable=SC2086
	check "run $run: nothing of the launcher is left ($kids)" all_ended $kids
	# a failed run must not leave a receiver spinning for a day
	for p in $kids; do ended "$p" || kill -9 "$p"; done
	case $tree in */mana-emu.??????) rm -rf "$tree" ;; esac
done

# a normal run: the command's status, its tree gone, nothing left behind
# shellcheck disable=SC2016
"$EMU" -- sh -c 'echo "$MANA_EMU_SYSFS" >"$1"; exit 7' sh "$TMP/normal" >/dev/null 2>&1
check "normal run: the command's status" test $? -eq 7
check "normal run: its tree was removed" test ! -e "$(cat "$TMP/normal")"
check_done
