#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# test_guest_mana.sh BUILD_DIR MANA_VFIO
#
# Issue 23, M1: Debian 13's own mana driver (kernel 6.12, in a QEMU guest
# under TCG) probes mana-vfio's VF over vfio-user.  Checks: the driver
# bound the PCI function without a probe failure, an eth* of driver mana
# with mana-vfio's MAC exists, `ip link set up` succeeds and the link is
# UP,LOWER_UP, the guest's own frames (IPv6 MLD/ND after link up) reach
# mana-vfio, and both QEMU and mana-vfio are gone afterwards with the
# socket removed.  Also: mana_ib, probing the RDMA device, stops at its
# first adapter request (M2's work), as a clean probe failure (no oops).
#
# Needs ./build.sh guest-root (build/guest/); skips (77) without it.
set -uo pipefail

BUILD=$(realpath "$1")
VFIO=$(realpath "$2")
HERE=$(dirname "$(realpath "$0")")
. "$HERE/../check.sh"

if [ ! -f "$BUILD/guest/stamp" ]; then
	echo "test_guest_mana: SKIPPED: no guest root (./build.sh guest-root)"
	exit 77
fi

MAC=00:0d:3a:12:34:56
cat >"$TMP/test.sh" <<'GUEST'
echo "== dmesg after modules"
dmesg | grep -E "mana|BUG|Oops|WARNING" 
echo "== interfaces"
for i in /sys/class/net/*; do
	echo "iface $(basename $i) driver=$(basename "$(readlink $i/device/driver)") mac=$(cat $i/address)"
done
ip link set eth0 up && echo "ip-link-up ok"
# the IPv6 stack sends MLD reports and DAD probes on its own once up
sleep 1
ip -o link show eth0
echo "== dmesg after link up"
dmesg | grep -E "mana|BUG|Oops|WARNING" | tail -5
GUEST
"$HERE/guest.sh" "$BUILD" initramfs "$TMP/initrd.gz" "$TMP/test.sh" || exit 1

SOCK=$TMP/mana.sock
"$VFIO" --socket="$SOCK" --mac=$MAC 2>"$TMP/server.log" &
server=$!
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
t0=$(date +%s%N)
# a stuck guest is a failure, not a hang: TCG boots in ~5 s here
timeout 300 "$HERE/guest.sh" "$BUILD" boot "$TMP/initrd.gz" \
	-object memory-backend-memfd,id=mem,size=512M,share=on \
	-machine pc,memory-backend=mem \
	-device "{\"driver\":\"vfio-user-pci\",\"socket\":{\"type\":\"unix\",\"path\":\"$SOCK\"}}" \
	>"$TMP/console.log" 2>&1
rc=$?
t1=$(date +%s%N)
wait "$server"
src=$?
echo "guest boot + test + power-off: $(( (t1 - t0) / 1000000 )) ms (qemu exit $rc, mana-vfio exit $src)"

check "qemu exits 0" test "$rc" -eq 0
check "mana-vfio exits 0 after the client" test "$src" -eq 0
expect "guest script ran" "$TMP/console.log" '^GUEST-EXIT 0'
expect "modules loaded" "$TMP/console.log" '^GUEST-MODULES'
expect_not "no module failed to load" "$TMP/console.log" 'GUEST-INSMOD-FAILED'
expect "driver reports the protocol" "$TMP/console.log" 'mana 0000:00:0.\.0: Microsoft Azure Network Adapter protocol version'
expect_not "mana probed without failure" "$TMP/console.log" \
	'probe with driver mana failed|gdma probe failed|mana 0000:00:0.\.0( eth0)?: Failed'
# the one request mana-vfio left unanswered is mana_ib's (below)
expect "only mana_ib's request unanswered" "$TMP/server.log" \
	'exit: .* unsupported=1 last_unsupported=0x30001 '
expect "eth0 bound to mana with our MAC" "$TMP/console.log" "^iface eth0 driver=mana mac=$MAC"
expect "ip link set up" "$TMP/console.log" '^ip-link-up ok'
expect "link UP,LOWER_UP" "$TMP/console.log" 'eth0: <[^>]*\bUP\b[^>]*LOWER_UP'
expect "vPort configured" "$TMP/console.log" 'eth0: Configured vPort'
expect "RX steering configured" "$TMP/console.log" 'eth0: Configured steering vPort .* entries 64'
expect_not "no oops or warning" "$TMP/console.log" 'BUG:|Oops|WARNING:|Call Trace'
# M2 starts here: mana_ib probes the RDMA device and fails cleanly
expect "mana_ib stops at its first adapter request" "$TMP/console.log" \
	'mana_ib.rdma mana.rdma.0: probe with driver mana_ib.rdma failed'
expect "HWC established once" "$TMP/server.log" 'exit: hwc_established=1 '
expect "the guest's frames reached mana-vfio" "$TMP/server.log" \
	"TX frame [0-9]+ bytes, $MAC -> 33:33:.* type 86dd"
expect "no guest DMA outside shared memory" "$TMP/server.log" 'dma_faults=0 '
expect "the HWC was torn down at power-off" "$TMP/server.log" 'HWC destroyed'
check "socket removed" test ! -e "$SOCK"
check "mana-vfio gone" sh -c "! kill -0 $server 2>/dev/null"
if [ "$failed" -ne 0 ]; then
	echo "== console" >&2; cat "$TMP/console.log" >&2
	echo "== mana-vfio" >&2; cat "$TMP/server.log" >&2
fi
check_done
