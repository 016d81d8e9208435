#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# 300 raw QPs, each destroyed right after a send rang its SQ doorbell: the
# device must serve every doorbell before the destroy that follows it, as
# hardware sees the store before the destroy command; none may count as a
# doorbell for a queue that does not exist (foreign_doorbells; issue 17's
# clients saw them in 14 of 20 testpmd runs, at port stop).
# Usage: test_db_destroy.sh BUILD_DIR
set -u
BUILD=${1:?build dir}
. "$(dirname "$0")/check.sh"

"$BUILD/bin/mana-emu" --stats="$TMP/stats" -- \
	"$BUILD/bin/test_verbs_compat" dbdestroy >"$TMP/out" 2>&1
check "test_verbs_compat dbdestroy passes" test $? -eq 0
read -r doorbells bad foreign < <(awk '$1 == "device" { print $2, $3, $4 }' "$TMP/stats")
check "300 doorbells or more rung (${doorbells:-none})" test "${doorbells:-0}" -ge 300
check "no bad doorbell (${bad:-none})" test "${bad:-x}" = 0
check "no doorbell for a queue gone (foreign_doorbells ${foreign:-none})" \
	test "${foreign:-x}" = 0
[ "$failed" -eq 0 ] || cat "$TMP/out" "$TMP/stats"
check_done
