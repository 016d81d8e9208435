#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The emulated VM's interfaces as Debian's iproute2 sees them: `ip link`
# over NETLINK_ROUTE (netvsc masters, MANA VFs enslaved to them, states),
# `rdma link` over RDMA netlink (port state and paired netdev), and the
# same facts in sysfs.  Usage: test_emu_links.sh BUILD_DIR
set -u
BUILD=${1:?build dir}
EMU="$BUILD/bin/mana-emu"
. "$(dirname "$0")/check.sh"
# written for the single-device era (one mana_0, vendor ids 0): 6.14
EMU=$(emu_at_era "$EMU" 6.14)

run() { # run NAME EXPECTED_STATUS EMU-OPTIONS... -- COMMAND...
	local name=$1 want=$2 st
	shift 2
	"$EMU" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	st=$?
	[ "$st" -eq "$want" ] && ok || { fail "$name: exit $st, want $want"; cat "$TMP/$name.out" "$TMP/$name.err" >&2; }
}

# the usual DPDK setup: everything down
run links 0 --ports=2 -- ip -o link show
[ "$(wc -l <"$TMP/links.out")" -eq 5 ] && ok || fail "5 interfaces: $(cat "$TMP/links.out")"
expect "lo" "$TMP/links.out" '^1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 state UNKNOWN'
expect "synthetic eth0" "$TMP/links.out" '^2: eth0: <BROADCAST,MULTICAST> mtu 1500 state DOWN .*link/ether 00:0d:3a:00:00:01 brd ff:ff:ff:ff:ff:ff'
expect "synthetic eth1" "$TMP/links.out" '^3: eth1: .*link/ether 00:0d:3a:00:00:02'
expect "VF of port 1" "$TMP/links.out" '^4: enP30832s1: <BROADCAST,MULTICAST,SLAVE> mtu 1500 master eth0 state DOWN .*link/ether 00:0d:3a:00:00:01'
expect "VF of port 2" "$TMP/links.out" '^5: enP30832s1d1: <BROADCAST,MULTICAST,SLAVE> mtu 1500 master eth1 state DOWN .*link/ether 00:0d:3a:00:00:02'
run one 0 --ports=2 -- ip -d link show dev enP30832s1d1
expect "by name, parent device" "$TMP/one.out" 'parentbus pci parentdev 7870:00:00.0'
run none 1 -- ip link show dev nosuch
expect "unknown name" "$TMP/none.err" 'does not exist'
run rdma 0 --ports=2 -- rdma link show
expect "rdma port 1" "$TMP/rdma.out" '^link mana_0/1 state DOWN physical_state DISABLED netdev enP30832s1 $'
expect "rdma port 2" "$TMP/rdma.out" '^link mana_0/2 state DOWN physical_state DISABLED netdev enP30832s1d1 $'
run sysfs 0 --ports=2 -- sh -c 'cd "$SYSFS_PATH" && cat class/net/enP30832s1/master/address class/net/enP30832s1/operstate class/infiniband/mana_0/ports/1/state class/infiniband/mana_0/ports/1/phys_state && ls class/net/eth1/ && readlink -f bus/pci/devices/7870:00:00.0/driver'
expect "sysfs master" "$TMP/sysfs.out" '^00:0d:3a:00:00:01$'
expect "sysfs operstate" "$TMP/sysfs.out" '^down$'
expect "sysfs port state" "$TMP/sysfs.out" '^1: DOWN$'
expect "sysfs phys state" "$TMP/sysfs.out" '^3: Disabled$'
expect "sysfs upper link" "$TMP/sysfs.out" '^upper_enP30832s1d1$'
expect "sysfs driver" "$TMP/sysfs.out" '/bus/pci/drivers/mana$'

# the VF up (netvsc opens it with its master): ports ACTIVE
run up 0 --netdev-up -- sh -c 'ip -o link show; rdma link show'
expect "up VF" "$TMP/up.out" '^3: enP30832s1: <BROADCAST,MULTICAST,SLAVE,UP,LOWER_UP> mtu 1500 master eth0 state UP'
expect "up master" "$TMP/up.out" '^2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> .*state UP'
expect "up rdma" "$TMP/up.out" '^link mana_0/1 state ACTIVE physical_state LINK_UP netdev enP30832s1 $'

# administered while the VM runs: the state is the run's, every process sees it
run admin 0 -- sh -c 'ip link set dev enP30832s1 up && ibv_devinfo -d mana_0 && ip -d link show dev enP30832s1 && cat "$SYSFS_PATH/class/net/enP30832s1/operstate" "$SYSFS_PATH/class/infiniband/mana_0/ports/1/phys_state" && ip link set dev enP30832s1 mtu 4000 && ibv_devinfo -d mana_0 && cat "$SYSFS_PATH/class/net/enP30832s1/mtu" && ip link set dev enP30832s1 down && ip -o link show dev enP30832s1 && rdma link show'
expect "admin up: PORT_ACTIVE" "$TMP/admin.out" 'state:[[:space:]]*PORT_ACTIVE \(4\)'
expect "admin up: ip -d link" "$TMP/admin.out" '^3: enP30832s1: <BROADCAST,MULTICAST,SLAVE,UP,LOWER_UP> mtu 1500 master eth0 state UP'
expect "admin up: operstate" "$TMP/admin.out" '^up$'
expect "admin up: phys_state" "$TMP/admin.out" '^5: LinkUp$'
expect "admin mtu: active_mtu" "$TMP/admin.out" 'active_mtu:[[:space:]]*2048 \(4\)'
expect "admin mtu: sysfs" "$TMP/admin.out" '^4000$'
expect "admin down: ip link" "$TMP/admin.out" '^3: enP30832s1: <BROADCAST,MULTICAST,SLAVE> mtu 4000 master eth0 state DOWN'
expect "admin down: rdma link" "$TMP/admin.out" '^link mana_0/1 state DOWN physical_state DISABLED'
# mana_en's MTU range: EINVAL, nothing changes
run badmtu 2 -- sh -c 'ip link set dev enP30832s1 mtu 9001 || ip link set dev enP30832s1 mtu 67 || exit 2'
expect "bad mtu" "$TMP/badmtu.err" 'Invalid argument'
# the master opens and closes the VF, and passes its MTU down
run master 0 -- sh -c 'ip link set dev eth0 up mtu 9000 && ip -o link show'
expect "master up: VF up" "$TMP/master.out" '^3: enP30832s1: <BROADCAST,MULTICAST,SLAVE,UP,LOWER_UP> mtu 9000 master eth0 state UP'
expect "master up" "$TMP/master.out" '^2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 state UP'
# what the VM does not emulate is refused, not faked
run rename 2 -- ip link set dev enP30832s1 name foo
expect "rename refused" "$TMP/rename.err" 'Operation not supported'

# without the mana module: no VF, no IB device
run nomana 0 --no-module=mana -- sh -c 'ip -o link show; rdma link show; ls "$SYSFS_PATH/module"'
expect_not "no VF" "$TMP/nomana.out" 'enP30832s1'
expect "synthetic stays" "$TMP/nomana.out" '^2: eth0:'
expect_not "no IB port" "$TMP/nomana.out" '^link mana_0'
expect_not "no mana module" "$TMP/nomana.out" '^mana'
# without RDMA netlink: rtnetlink still answers, rdma cannot
run nonl 0 --no-netlink -- sh -c 'ip -o link show; rdma link show; echo "rdma $?"'
expect "nonl ip" "$TMP/nonl.out" 'enP30832s1: .*master eth0'
expect_not "nonl rdma" "$TMP/nonl.out" '^link mana_0'

check_done
