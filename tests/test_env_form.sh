#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The environment form (LD_PRELOAD=libmana-emu.so, no launcher) with
# Debian's ibv_devinfo, in the plain and the sanitizer build.  In the
# sanitizer build the ASan runtime must come first in LD_PRELOAD: then it
# works; without it the run must end with ASan's message saying so (it
# used to die of SIGSEGV without a word, inside another library's
# constructor calling our stat()).
# Usage: test_env_form.sh LIBMANA_EMU [ASAN_RUNTIME]
set -u
LIB=${1:?libmana-emu.so}
RT=${2:-}
. "$(dirname "$0")/check.sh"

LD_PRELOAD="${RT:+$RT }$LIB" MANA_EMU_OPTIONS="--ports=2" ibv_devinfo >"$TMP/ok.out" 2>&1
check "environment form runs ibv_devinfo (status $?)" test $? -eq 0
expect "ibv_devinfo sees the emulated device" "$TMP/ok.out" 'hca_id:\s+mana_0'
expect "with both ports" "$TMP/ok.out" 'port:\s+2'

# the tree goes to $TMPDIR when it is set, and is gone after exit, also
# when the process that made it has exec'd another program since
mkdir "$TMP/trees"
TMPDIR="$TMP/trees" LD_PRELOAD="${RT:+$RT }$LIB" MANA_EMU_OPTIONS="--ports=1" \
	sh -c 'exec ls "$TMPDIR"' >"$TMP/trees.out" 2>&1
expect "the tree is made in \$TMPDIR" "$TMP/trees.out" '^mana-emu\.\w{6}$'
check "the tree is removed at exit, after an exec" test -z "$(ls -A "$TMP/trees")"

if [ -n "$RT" ]; then
	LD_PRELOAD="$LIB" ibv_devinfo >"$TMP/nort.out" 2>&1
	rc=$?
	check "without the ASan runtime first: a failure, not a signal ($rc)" \
		test "$rc" -ne 0 -a "$rc" -lt 128
	expect "without the ASan runtime first: ASan says why" "$TMP/nort.out" \
		'ASan runtime does not come first'
	# a bad option still gets the emulator's own message (status 2)
	LD_PRELOAD="$RT $LIB" MANA_EMU_OPTIONS="--ports=9" ibv_devinfo >"$TMP/bad.out" 2>&1
	check "bad MANA_EMU_OPTIONS under ASan: status 2" test $? -eq 2
	expect "bad MANA_EMU_OPTIONS under ASan: the message" "$TMP/bad.out" '--ports'
fi
check_done
