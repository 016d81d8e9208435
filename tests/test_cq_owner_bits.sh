#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# A datapath that polls its CQs by owner bits and never rings a CQ doorbell
# (DPDK's net/mana; mana-pktgen --cq-doorbell=never), many laps of every CQ
# with nothing lost: the device, which is never told the consumer index,
# must count no CQ drops and raise no CQ error (issue 17: it counted nearly
# every CQE as a drop and raised IB_EVENT_CQ_ERR after 8 laps).  The same
# run with the consumer index reported (the default) for comparison.
# Usage: test_cq_owner_bits.sh BUILD_DIR
set -u
BUILD=${1:?build dir}
EMU="$BUILD/bin/mana-emu"
PKTGEN="$BUILD/bin/mana-pktgen"
. "$(dirname "$0")/check.sh"

DEPTH=64
FRAMES=20000		# per queue 10000 TX and 10000 RX CQEs: 156 laps of 64
QUEUES=2

for db in never batch; do
	"$EMU" --stats="$TMP/$db.stats" -- "$PKTGEN" --frames=$FRAMES --depth=$DEPTH \
		--queues=$QUEUES --flows=4 --cq-doorbell=$db >"$TMP/$db.out" 2>&1
	check "$db: pktgen exits 0" test $? -eq 0
	expect "$db: every frame back" "$TMP/$db.out" \
		"^sent $FRAMES received $FRAMES bad 0 errors 0 rss-split ok$"
	expect "$db: no CQ error event" "$TMP/$db.out" "^async-events 0 cq-errors 0$"
	# every CQ went round at least 10 times, without a drop or an error
	n=$(awk '$1 == "cq"' "$TMP/$db.stats" | wc -l)
	check "$db: $((2 * QUEUES)) CQs in the stats ($n)" test "$n" -eq $((2 * QUEUES))
	laps=$(awk -v d=$DEPTH '$1 == "cq" { l = int($3 / d); if (m == "" || l < m) m = l } END { print m + 0 }' \
		"$TMP/$db.stats")
	check "$db: every CQ lapped >= 10 times ($laps)" test "$laps" -ge 10
	bad=$(awk '$1 == "cq" && ($5 || $6)' "$TMP/$db.stats")
	check "$db: no CQ drops or errors: ${bad:-none}" test -z "$bad"
	cqerr=$(awk '$1 == "device" { print $7 }' "$TMP/$db.stats")
	check "$db: the device raised no CQ error (${cqerr:-no column})" test "$cqerr" = 0
done
[ "$failed" -eq 0 ] || { cat "$TMP/never.out" "$TMP/never.stats"; }
check_done
