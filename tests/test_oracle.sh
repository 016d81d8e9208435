#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# test_oracle.sh BUILD_DIR self|eras
#
# The differential oracle of issue 23 (tests/guest/oracle.sh), on mana-emu
# alone: "self" collects twice with the same options and must find no
# difference (the probe prints nothing that varies by run, or the guest
# comparison would drown in noise); "eras" collects at --kernel=6.12 (the
# kernel of Debian 13's guest) and 7.2, must find differences without an
# explanation file, and none unexplained with tests/test_oracle_eras.txt
# (each one a row of the era table).
set -uo pipefail
BUILD=$(realpath "$1")
MODE=$2
HERE=$(dirname "$(realpath "$0")")
. "$HERE/check.sh"
ORACLE=$HERE/guest/oracle.sh
export ORACLE_PROBE=$BUILD/bin/oracle_probe ORACLE_BAD_INPUTS=$BUILD/bin/test_bad_inputs
export ORACLE_CONTRACT=$BUILD/bin/test_verbs_contract ORACLE_DIAG=$BUILD/bin/mana-diag

# collect DIR KERNEL: the RDMA parts with the netdev up and an address
# (GIDs), the misuse matrix and the contract cases with it down (raw QPs
# need the vport), mana-diag in both states
collect() {
	"$BUILD/bin/mana-emu" --kernel="$2" --netdev-up --ip=10.0.0.1/24 -- \
		"$ORACLE" collect "$1" probe devinfo diag_up || fail "collect $2 (probe)"
	"$BUILD/bin/mana-emu" --kernel="$2" -- "$ORACLE" collect "$1" bad_inputs \
		contract diag_down || fail "collect $2 (bad_inputs)"
	grep -q '^devices = [12]$' "$1/probe.txt" || fail "$1/probe.txt: $(head -3 "$1/probe.txt")"
	[ "$(grep -c '^bad_inputs\.' "$1/bad_inputs.txt")" -ge 30 ] ||
		fail "$1/bad_inputs.txt: $(head -3 "$1/bad_inputs.txt")"
	grep -q '^devinfo\.mana_0\.port1\.state = PORT_ACTIVE' "$1/devinfo.txt" ||
		fail "$1/devinfo.txt: no active mana_0 port"
	# every contract case ran to its end
	[ "$(grep -c '^contract\.[a-z]*\.exit = 0$' "$1/contract.txt")" -eq 5 ] &&
		[ "$(grep -c '^contract\.' "$1/contract.txt")" -ge 100 ] ||
		fail "$1/contract.txt: $(grep exit "$1/contract.txt")"
	grep -q '^diag\.up\.netdev\.mana_0/1\.operstate = up$' "$1/diag_up.txt" &&
		grep -Eq '^diag\.down\.probe\.manae?_0/1\.verdict = OK$' "$1/diag_down.txt" ||
		fail "$1/diag_*.txt: $(cat "$1/diag_up.txt" "$1/diag_down.txt")"
}

case $MODE in
self)
	collect "$TMP/a" 7.2
	collect "$TMP/b" 7.2
	"$ORACLE" diff "$TMP/a" "$TMP/b" >"$TMP/diff" ||
		fail "two runs with the same options differ: $(cat "$TMP/diff")"
	[ ! -s "$TMP/diff" ] || fail "unexpected output: $(cat "$TMP/diff")"
	;;
eras)
	collect "$TMP/old" 6.12
	collect "$TMP/new" 7.2
	if "$ORACLE" diff "$TMP/old" "$TMP/new" >"$TMP/raw"; then
		fail "6.12 and 7.2 found alike: $(head "$TMP/raw")"
	fi
	grep -q '^differs alloc_mw(type1): EOPNOTSUPP | ok$' "$TMP/raw" ||
		fail "memory windows (7.1) not among the differences: $(head "$TMP/raw")"
	"$ORACLE" diff "$TMP/old" "$TMP/new" "$HERE/test_oracle_eras.txt" >"$TMP/ex" ||
		fail "unexplained: $(grep '^differs' "$TMP/ex")"
	echo "$(grep -c '^explained' "$TMP/ex") differences, each explained by the era table"
	;;
*) fail "mode $MODE" ;;
esac
[ "$failed" -gt 0 ] || ok
check_done
