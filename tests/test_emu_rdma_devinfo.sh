#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The RDMA side of the emulated VM through Debian's tools: the GIDs in
# ibv_devinfo -v (our provider and the distribution's, ioctl and write),
# the addresses in `ip addr`, the kernel eras' devices in ibv_devinfo
# and `rdma link` (6.2's raw-only mana_0, one device, the split), and
# ibv_rc_pingpong on the split era's mana_0.  Usage: test_emu_rdma_devinfo.sh BUILD_DIR
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
	if [ "$st" -eq "$want" ]; then ok; else
		fail "$name: exit $st, want $want"; cat "$TMP/$name.out" "$TMP/$name.err" >&2
	fi
}
IPS="--ip=10.1.2.3/24 --ip=fd00::5/64"

for p in ours system; do
	for t in ioctl write; do
		n=gid_${p}_$t
		run $n 0 -- "$EMU" --provider=$p --transport=$t $IPS --netdev-up -- ibv_devinfo -v
		expect "$n GID 0" "$TMP/$n.out" 'GID\[  0\]:\s+fe80::20d:3aff:fe00:1, RoCE v2'
		expect "$n GID 1" "$TMP/$n.out" 'GID\[  1\]:\s+::ffff:10.1.2.3, RoCE v2'
		expect "$n GID 2" "$TMP/$n.out" 'GID\[  2\]:\s+fd00::5, RoCE v2'
		expect_not "$n no GID 3" "$TMP/$n.out" 'GID\[  3\]'
		expect "$n gid_tbl_len" "$TMP/$n.out" 'gid_tbl_len:\s+16'
		expect "$n CM_SUP" "$TMP/$n.out" 'port_cap_flags:\s+0x00010000'
		# 16 MiB from 7.1 (upstream c9a40f6531b8), 0 before
		expect "$n max_msg_sz" "$TMP/$n.out" 'max_msg_sz:\s+0x0$'
		expect "$n 4X EDR" "$TMP/$n.out" 'active_width:\s+4X'
		expect "$n rd_atom" "$TMP/$n.out" 'max_qp_rd_atom:\s+16'
		expect "$n active" "$TMP/$n.out" 'state:\s+PORT_ACTIVE'
	done
done
# query_port by era (ibv_devinfo and sysfs's rate): Debian's 6.12 asks the
# netdev's ethtool speed, which 6.12's mana lacks (1000 Mb/s: 1X SDR, no
# CM_SUP yet); 7.2 asks too and gets the SKU's 100 Gb/s (4X EDR), with
# CM_SUP and max_msg_sz
for k in 6.12 7.2; do
	run port_$k 0 -- "$BUILD/bin/mana-emu" --kernel=$k --provider=system -- \
		sh -c 'ibv_devinfo -v -d mana_0; cat /sys/class/infiniband/mana_0/ports/1/rate'
done
expect "6.12 1X" "$TMP/port_6.12.out" 'active_width:\s+1X \(1\)'
expect "6.12 SDR" "$TMP/port_6.12.out" 'active_speed:\s+2.5 Gbps \(1\)'
expect "6.12 rate" "$TMP/port_6.12.out" '^2.5 Gb/sec \(1X SDR\)$'
expect "6.12 no CM_SUP" "$TMP/port_6.12.out" 'port_cap_flags:\s+0x00000000'
expect "6.12 max_msg_sz" "$TMP/port_6.12.out" 'max_msg_sz:\s+0x0$'
expect "7.2 4X" "$TMP/port_7.2.out" 'active_width:\s+4X \(2\)'
expect "7.2 EDR" "$TMP/port_7.2.out" 'active_speed:\s+25.0 Gbps \(32\)'
expect "7.2 rate" "$TMP/port_7.2.out" '^100 Gb/sec \(4X EDR\)$'
expect "7.2 CM_SUP" "$TMP/port_7.2.out" 'port_cap_flags:\s+0x00010000'
expect "7.2 max_msg_sz" "$TMP/port_7.2.out" 'max_msg_sz:\s+0x1000000'

run mtu 0 -- "$EMU" --provider=system --mtu=9000 -- ibv_devinfo -v
expect "mtu 9000: active_mtu 4096" "$TMP/mtu.out" 'active_mtu:\s+4096 \(5\)'

run ipaddr 0 -- "$EMU" --ports=2 $IPS --ip=2:10.9.9.9/16 -- ip addr
expect "ip addr v4" "$TMP/ipaddr.out" 'inet 10.1.2.3/24 brd 10.1.2.255 scope global enP30832s1'
expect "ip addr v6" "$TMP/ipaddr.out" 'inet6 fd00::5/64 scope global'
expect "ip addr link-local" "$TMP/ipaddr.out" 'inet6 fe80::20d:3aff:fe00:1/64 scope link'
expect "ip addr port 2" "$TMP/ipaddr.out" 'inet 10.9.9.9/16 .* enP30832s1d1'
run ipaddr4 0 -- "$EMU" $IPS -- ip -4 addr
expect_not "ip -4 addr: no IPv6" "$TMP/ipaddr4.out" 'inet6'

# the kernel eras: one device, or manae_0 + mana_0
for p in ours system; do
	n=split_$p
	run $n 0 -- "$EMU" --era=split --provider=$p --ports=2 $IPS -- ibv_devinfo -v
	expect "$n manae_0" "$TMP/$n.out" '^hca_id:\tmanae_0$'
	expect "$n mana_0" "$TMP/$n.out" '^hca_id:\tmana_0$'
	tr '\n' ' ' <"$TMP/$n.out" >"$TMP/$n.flat"
	expect "$n manae_0 part 2" "$TMP/$n.flat" 'hca_id:\tmanae_0 .*?vendor_part_id:\s+2 .*?phys_port_cnt:\s+2 .*hca_id:\tmana_0'
	expect "$n mana_0 part 3" "$TMP/$n.flat" 'hca_id:\tmana_0 .*?vendor_part_id:\s+3 .*?phys_port_cnt:\s+1 '
	expect "$n GIDs on mana_0" "$TMP/$n.flat" 'hca_id:\tmana_0 .*GID\[  1\]:\s+::ffff:10.1.2.3'
	expect_not "$n no GIDs on manae_0" "$TMP/$n.flat" 'hca_id:\tmanae_0 .*GID.*hca_id:\tmana_0'
	n=single_$p
	run $n 0 -- "$EMU" --provider=$p --ports=2 $IPS -- ibv_devinfo -l
	expect "$n one device" "$TMP/$n.out" '^1 HCA found:'
done
run rdma_link 0 -- "$EMU" --era=split --ports=2 -- rdma link
expect "rdma link manae_0/2" "$TMP/rdma_link.out" '^link manae_0/2 .* netdev enP30832s1d1'
expect "rdma link mana_0/1" "$TMP/rdma_link.out" '^link mana_0/1 .* netdev enP30832s1'
expect_not "rdma link no mana_0/2" "$TMP/rdma_link.out" 'mana_0/2'

# 6.2, the raw-only mana_ib: no GIDs whatever --ip says, fixed limits,
# query_port filled nothing (state 0 even with the netdev up), no netdev
# paired with the ports and no node GUID; Debian's libmana (v44) and ours
for p in ours system; do
	n=k62_$p
	run $n 0 -- "$EMU" --kernel=6.2 --provider=$p --ports=2 --netdev-up $IPS -- ibv_devinfo -v
	expect "$n max_qp_wr" "$TMP/$n.out" 'max_qp_wr:\s+256$'
	expect "$n max_qp" "$TMP/$n.out" 'max_qp:\s+64$'
	expect "$n vendor 0" "$TMP/$n.out" 'vendor_id:\s+0x0000$'
	expect "$n one vector" "$TMP/$n.out" 'num_comp_vectors:\s+1$'
	expect "$n state 0" "$TMP/$n.out" 'state:\s+.*\(0\)$'
	expect "$n gid_tbl_len 0" "$TMP/$n.out" 'gid_tbl_len:\s+0$'
	expect_not "$n no GIDs" "$TMP/$n.out" 'GID\['
	expect_not "$n not active" "$TMP/$n.out" 'PORT_ACTIVE'
done
run k62_link 0 -- "$EMU" --kernel=6.2 --ports=2 --netdev-up -- rdma link
expect "6.2 rdma link state 0" "$TMP/k62_link.out" '^link mana_0/1 state NOP physical_state NOP'
expect_not "6.2 rdma link no netdev" "$TMP/k62_link.out" 'netdev'
run k62_dev 0 -- "$EMU" --kernel=6.2 -- rdma dev
expect "6.2 no node GUID" "$TMP/k62_dev.out" 'node_guid 0000:0000:0000:0000'

# split era traffic: Debian's ibv_rc_pingpong on mana_0 (uverbs1) of two
# emulated VMs joined by a socket: wire, with our provider
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
timeout 120 "$EMU" --era=split --netdev-up --backend=socket:"$TMP/sw" \
	--ip=10.2.0.1/24 -- ibv_rc_pingpong -d mana_0 -p "$port" --chk -g 1 \
	-n 100 >"$TMP/pp_srv.out" 2>&1 &
srv=$!
sleep 0.5
run pp_cli 0 -- timeout 120 "$EMU" --era=split --netdev-up \
	--backend=socket:"$TMP/sw" --mac=00:0d:3a:00:10:01 --ip=10.2.0.2/24 -- \
	ibv_rc_pingpong -d mana_0 -p "$port" --chk -g 1 -n 100 127.0.0.1
wait $srv && ok || { fail "split-era pingpong server"; cat "$TMP/pp_srv.out" >&2; }
expect "split-era pingpong" "$TMP/pp_cli.out" '100 iters in'

# usage errors name the option
run bad_ip 2 -- "$EMU" --ip=10.1.2.3 -- true
expect "--ip without LEN" "$TMP/bad_ip.err" '--ip: invalid value .10\.1\.2\.3.: no /LEN'
run bad_era 2 -- "$EMU" --era=both -- true
expect "--era" "$TMP/bad_era.err" '--era: invalid value .both.'
check_done
