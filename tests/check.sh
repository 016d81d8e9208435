# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The shell tests' counterpart of check.h: source it, count checks with the
# helpers below, end with check_done.  Gives a scratch directory $TMP.
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
passed=0
failed=0

ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
check() { # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@"; then ok; else fail "$what"; fi
}
expect() { # expect DESCRIPTION FILE PATTERN
	if grep -qP -- "$3" "$2"; then ok; else fail "$1: no /$3/ in $2:"; cat "$2" >&2; fi
}
expect_not() { # expect_not DESCRIPTION FILE PATTERN
	if grep -qP -- "$3" "$2"; then fail "$1: unexpected /$3/ in $2"; cat "$2" >&2; else ok; fi
}
# emu_at_era MANA_EMU VERSION: a mana-emu that always runs --kernel=VERSION
# (a wrapper in $TMP), for a test written for one era's device layout
emu_at_era() {
	printf '#!/bin/sh\nexec "%s" --kernel=%s "$@"\n' "$1" "$2" >"$TMP/mana-emu-k$2"
	chmod +x "$TMP/mana-emu-k$2"
	echo "$TMP/mana-emu-k$2"
}
# rping_exit_race STATUS LOG: true when a whole rping server run ended
# only in Debian 12's rping (rdma-core 44) racing its own exit: main
# destroys the event channel while its CM thread may still call
# rdma_get_cm_event(), which fails EBADF and exit()s 255 (on a real kernel
# too; fixed upstream in "rping: terminate CM event thread before
# exiting", 2025-07-03); its CQ thread may still print a flushed
# completion after that line
rping_exit_race() {
	[ "$1" -eq 255 ] && grep -q 'DISCONNECT EVENT' "$2" &&
		grep -qx 'rdma_get_cm_event: Bad file descriptor' "$2" &&
		echo "rping's own exit race (rdma-core 44), not counted"
}
check_done() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}
