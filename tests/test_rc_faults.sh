#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# RC traffic (test_rc_traffic --only-data) while the wire loses and
# reorders RoCE packets (--fault=drop-roce=N,reorder-roce=N): every byte
# must still arrive, and the device's counters must show that the faults
# happened and were recovered from (retransmissions, sequence NAKs).
set -euo pipefail
build=$1
prog=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
for fault in drop-roce=7 reorder-roce=5 drop-roce=10,reorder-roce=7; do
	echo "== --fault=$fault"
	if ! "$build/bin/mana-emu" --netdev-up --ip=10.1.0.1/24 \
		--fault="$fault" --stats="$dir/stats" -- "$prog" --only-data; then
		echo "FAIL: traffic under --fault=$fault"; fail=1; continue
	fi
	grep -E '^(rcqp|roce) ' "$dir/stats"
	read -r _ sent dropped reordered < <(grep '^roce ' "$dir/stats")
	retrans=$(awk '$1 == "rcqp" { n += $5 } END { print n + 0 }' "$dir/stats")
	case $fault in
	*drop*) [ "$dropped" -gt 0 ] || { echo "FAIL: nothing dropped"; fail=1; } ;;
	esac
	case $fault in
	*reorder*) [ "$reordered" -gt 0 ] || { echo "FAIL: nothing reordered"; fail=1; } ;;
	esac
	[ "$retrans" -gt 0 ] || { echo "FAIL: no retransmission"; fail=1; }
	[ "$sent" -gt 0 ] || { echo "FAIL: no RoCE packet"; fail=1; }
done
exit $fail
