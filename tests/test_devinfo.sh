#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Debian's ibv_devinfo / ibv_devices against the emulated MANA device, with
# our provider and with the distribution's, in every discovery and transport
# mode.  Usage: test_devinfo.sh BUILD_DIR
set -u
BUILD=${1:?build dir}
EMU="$BUILD/bin/mana-emu"
. "$(dirname "$0")/check.sh"
# written for the single-device era (one mana_0, vendor ids 0): 6.14
EMU=$(emu_at_era "$EMU" 6.14)
run() { # run NAME EXPECTED_STATUS -- COMMAND...
	local name=$1 want=$2 st
	shift 3
	"$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	st=$?
	if [ "$want" = any ] || [ "$st" -eq "$want" ]; then ok; else
		fail "$name: exit $st, want $want"; cat "$TMP/$name.out" "$TMP/$name.err" >&2
	fi
}

# 1. ours, netlink, ioctl
run ours 0 -- "$EMU" -- ibv_devinfo -v
expect "ours" "$TMP/ours.out" '^hca_id:\tmana_0$'
expect "ours fw_ver (filled only by our provider)" "$TMP/ours.out" '^\tfw_ver:\t+\d+\.\d+\.\d+$'
# the default kernel (6.14): vendor ids came with the split (6.16)
expect "ours vendor" "$TMP/ours.out" '^\tvendor_id:\t+0x0000$'
expect "ours part" "$TMP/ours.out" '^\tvendor_part_id:\t+0$'
expect "ours link layer" "$TMP/ours.out" '^\t\t\tlink_layer:\t+Ethernet$'
# the port is as up as its netdev (mana_ib); DPDK's setup has it down
expect "ours state, netdev down" "$TMP/ours.out" 'state:\t+PORT_DOWN \(1\)'
expect "ours phys_state, netdev down" "$TMP/ours.out" 'phys_state:\t+DISABLED \(3\)'
run up 0 -- "$EMU" --netdev-up -- ibv_devinfo -v
expect "ours state, netdev up" "$TMP/up.out" 'state:\t+PORT_ACTIVE \(4\)'
expect "ours phys_state, netdev up" "$TMP/up.out" 'phys_state:\t+LINK_UP \(5\)'
run up_system 0 -- "$EMU" --netdev-up --provider=system -- ibv_devinfo
expect "system state, netdev up" "$TMP/up_system.out" 'state:\t+PORT_ACTIVE \(4\)'
expect_not "ours quiet" "$TMP/ours.err" '^libmana: '
run devices 0 -- "$EMU" -- ibv_devices
expect "ibv_devices" "$TMP/devices.out" '^\s+mana_0\s+[0-9a-f]{16}$'

# 2. Debian's libmana: the emulator speaks the kernel ABI it expects
run system 0 -- "$EMU" --provider=system -- ibv_devinfo -v
expect "system" "$TMP/system.out" '^hca_id:\tmana_0$'
expect "system vendor" "$TMP/system.out" '^\tvendor_id:\t+0x0000$'
expect "system link layer" "$TMP/system.out" 'link_layer:\t+Ethernet'
expect_not "system has no fw_ver" "$TMP/system.out" 'fw_ver'

# 3. without RDMA netlink: ours binds by PCI identity, rdma-core's cannot
run nonl 0 -- "$EMU" --no-netlink -- ibv_devinfo -v
expect "no-netlink ours" "$TMP/nonl.out" '^hca_id:\tmana_0$'
expect "no-netlink ours ports" "$TMP/nonl.out" 'link_layer:\t+Ethernet'
run nonl_system any -- "$EMU" --no-netlink --provider=system -- ibv_devinfo
expect_not "no-netlink system" "$TMP/nonl_system.out" 'hca_id'
expect "no-netlink system" "$TMP/nonl_system.err" 'No IB devices found|no userspace device-specific driver'

# 4. kernel numbering MANA 19: ours binds and says so once per process
run id19 0 -- "$EMU" --driver-id=19 -- ibv_devinfo -v
expect "driver-id 19 binds" "$TMP/id19.out" '^hca_id:\tmana_0$'
n=$(grep -c '^libmana: .*reports driver id 19' "$TMP/id19.err")
[ "$n" -eq 1 ] && ok || fail "driver-id 19: $n warnings, want 1"
expect "driver-id 19 says what to do" "$TMP/id19.err" 'Fix:'
# several scans and opens in one process still warn once
run id19_twice 0 -- "$EMU" --driver-id=19 -- /usr/bin/python3 -c '
import pyverbs.device as d
for _ in range(3):
    for dev in d.get_device_list():
        with d.Context(name=dev.name.decode()) as ctx:
            ctx.query_device()
'
n=$(grep -c '^libmana: ' "$TMP/id19_twice.err")
[ "$n" -eq 1 ] && ok || fail "driver-id 19, 3 scans: $n warnings, want 1"

# 4b. the write transport gives the same answers as ioctl
run write 0 -- "$EMU" --transport=write -- ibv_devinfo -v
if cmp -s "$TMP/ours.out" "$TMP/write.out"; then ok; else
	fail "write vs ioctl differ"; diff "$TMP/ours.out" "$TMP/write.out" >&2
fi
run write_system 0 -- "$EMU" --transport=write --provider=system -- ibv_devinfo -v
if cmp -s "$TMP/system.out" "$TMP/write_system.out"; then ok; else
	fail "system: write vs ioctl differ"; diff "$TMP/system.out" "$TMP/write_system.out" >&2
fi

# more ports
run ports 0 -- "$EMU" --ports=2 --mac=00:11:22:33:44:55 -- ibv_devinfo
expect "two ports" "$TMP/ports.out" 'phys_port_cnt:\t+2'
expect "port 2" "$TMP/ports.out" '^\t\tport:\t2$'

# usage errors
run badopt 2 -- "$EMU" --bogus -- true
expect "bad option named" "$TMP/badopt.err" 'bogus'
run badval 2 -- "$EMU" --driver-id=abc -- true
run badmac 2 -- "$EMU" --mac=00:11:22 -- true
run badtransport 2 -- "$EMU" --transport=carrier-pigeon -- true
run nocmd 2 -- "$EMU" --
# the command's exit status comes back
run status 3 -- "$EMU" -- sh -c 'exit 3'

check_done
