#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# test_guest_oracle.sh BUILD_DIR MANA_VFIO [REPORT]
#
# Issue 23, M4: the differential oracle.  The same clients
# (tests/guest/oracle.sh collect: oracle_probe, test_bad_inputs's misuse
# matrix, ibv_devinfo -v, test_verbs_contract's report mode, mana-diag
# --oracle with the netdev up and down) run once in the QEMU guest, on Debian 13's own
# mana_ib (6.12) driving mana-vfio's device, and once under
# mana-emu --kernel=6.12 with the same MAC and address; every difference in
# errno, returned caps and reported attributes is printed.  Each must be
# explained by a line of tests/guest/oracle-explained.txt (where mana-emu
# is right and the difference lies elsewhere, or is not modelled, with the
# reason), or the test fails.  REPORT: also write the whole report there.
#
# Needs ./build.sh guest-root (build/guest/); skips (77) without it.
set -uo pipefail

BUILD=$(realpath "$1")
VFIO=$(realpath "$2")
REPORT=${3:-}
HERE=$(dirname "$(realpath "$0")")
. "$HERE/../check.sh"

if [ ! -f "$BUILD/guest/stamp" ]; then
	echo "test_guest_oracle: SKIPPED: no guest root (./build.sh guest-root)"
	exit 77
fi

DIAG_UP=diag_up DIAG_DOWN=diag_down DIAG_BIN=$BUILD/bin/mana-diag

MAC=00:0d:3a:12:34:56
IP=10.77.0.2/24
ORACLE=$HERE/oracle.sh

# the guest: the RDMA parts and diag_up with eth0 up and an address (the
# GID), the misuse matrix, the contract cases and diag_down with it down
# (raw QPs need the vport); each file printed between markers on the
# console
cat >"$TMP/test.sh" <<GUEST
# an ASan build's provider and programs need their runtime first
asan=/usr/lib/x86_64-linux-gnu/libasan.so.8
[ -e \$asan ] && export LD_PRELOAD=\$asan
export ORACLE_PROBE=/usr/bin/oracle_probe ORACLE_BAD_INPUTS=/usr/bin/test_bad_inputs
export ORACLE_CONTRACT=/usr/bin/test_verbs_contract ORACLE_DIAG=/usr/bin/mana-diag
ip link set eth0 up
ip addr add $IP dev eth0
i=0
while [ -z "\$(grep -l 0a4d:0002 /sys/class/infiniband/*/ports/1/gids/* 2>/dev/null)" ] &&
	[ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done
sh /oracle.sh collect /tmp/o probe devinfo $DIAG_UP
ip link set eth0 down
sh /oracle.sh collect /tmp/o bad_inputs contract $DIAG_DOWN
for f in probe.txt bad_inputs.txt devinfo.txt contract.txt diag_up.txt diag_down.txt \
	probe.err bad_inputs.err contract.err diag_up.err diag_down.err; do
	[ -f /tmp/o/\$f ] || continue
	echo "ORACLE-FILE \$f"
	cat /tmp/o/\$f
	echo "ORACLE-END"
done
dmesg | grep -iE "BUG|Oops|WARNING|mana_ib" | tail -5
GUEST

export GUEST_PROVIDER=$BUILD/lib/libmana.so.1
export GUEST_BINS="$BUILD/bin/oracle_probe $BUILD/bin/test_bad_inputs $BUILD/bin/test_verbs_contract $DIAG_BIN"
"$HERE/guest.sh" "$BUILD" initramfs "$TMP/initrd.gz" "$TMP/test.sh" "$ORACLE" ||
	exit 1

SOCK=$TMP/mana.sock
"$VFIO" --socket="$SOCK" --mac=$MAC --backend=loopback 2>"$TMP/server.log" &
server=$!
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
# as many CPUs as mana-emu counts (num_comp_vectors: one per CPU, both
# sides); QEMU takes the last -smp
timeout 300 "$HERE/guest.sh" "$BUILD" boot "$TMP/initrd.gz" \
	-smp "$(getconf _NPROCESSORS_ONLN)" \
	-object memory-backend-memfd,id=mem,size=512M,share=on \
	-machine pc,memory-backend=mem \
	-device "{\"driver\":\"vfio-user-pci\",\"socket\":{\"type\":\"unix\",\"path\":\"$SOCK\"}}" \
	>"$TMP/console.log" 2>&1
rc=$?
wait "$server"
check "the guest ran its script (qemu exit $rc)" grep -q '^GUEST-EXIT 0' "$TMP/console.log"

# the guest's answers, out of the console (serial line ends are CRLF)
mkdir -p "$TMP/guest"
tr -d '\r' <"$TMP/console.log" | awk -v dir="$TMP/guest" '
	/^ORACLE-FILE / { f = dir "/" $2; printf "" >f; next }
	/^ORACLE-END$/ { close(f); f = ""; next }
	f != "" { print >>f }'
check "the guest's probe saw mana_0" grep -q '^devices = 1$' "$TMP/guest/probe.txt"
check "the guest ran the 5 contract cases to their end" \
	test "$(grep -c '^contract\.[a-z]*\.exit = 0$' "$TMP/guest/contract.txt")" -eq 5
check "the guest ran mana-diag, netdev up" \
	grep -q '^diag\.up\.exit = ran$' "$TMP/guest/diag_up.txt"
check "the guest ran mana-diag, netdev down" \
	grep -q '^diag\.down\.exit = ran$' "$TMP/guest/diag_down.txt"

# the same clients under mana-emu at the guest's kernel
export ORACLE_PROBE=$BUILD/bin/oracle_probe ORACLE_BAD_INPUTS=$BUILD/bin/test_bad_inputs
export ORACLE_CONTRACT=$BUILD/bin/test_verbs_contract ORACLE_DIAG=$BUILD/bin/mana-diag
"$BUILD/bin/mana-emu" --kernel=6.12 --mac=$MAC --netdev-up --ip=$IP -- \
	"$ORACLE" collect "$TMP/emu" probe devinfo $DIAG_UP
"$BUILD/bin/mana-emu" --kernel=6.12 --mac=$MAC -- "$ORACLE" collect "$TMP/emu" bad_inputs \
	contract $DIAG_DOWN

"$ORACLE" diff "$TMP/emu" "$TMP/guest" "$HERE/oracle-explained.txt" >"$TMP/report"
drc=$?
[ -z "$REPORT" ] || cp "$TMP/report" "$REPORT"
echo "== mana-emu (left) against the guest's mana_ib (right)"
cat "$TMP/report"
for f in "$TMP"/guest/*.txt; do
	printf '%s %s keys; ' "$(basename "$f" .txt)" "$(grep -c . "$f")"
done
echo
echo "$(grep -c '^explained' "$TMP/report") explained, $(grep -c '^differs' "$TMP/report") unexplained"
check "no unexplained difference" test "$drc" -eq 0
if [ "$failed" -gt 0 ]; then
	echo "== console"
	tail -60 "$TMP/console.log"
fi
check_done
