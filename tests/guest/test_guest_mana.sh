#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# test_guest_mana.sh BUILD_DIR MANA_VFIO [ping | socket MANA_EMU MANA_PKTGEN | kill |
#                                         verbs PROVIDER MANA_PKTGEN |
#                                         rcvm MANA_EMU PROVIDER]
#
# Issue 23, M1: Debian 13's own mana driver (kernel 6.12, in a QEMU guest
# under TCG) probes mana-vfio's VF over vfio-user.  Checks: the driver
# bound the PCI function without a probe failure, an eth* of driver mana
# with mana-vfio's MAC exists, `ip link set up` succeeds and the link is
# UP,LOWER_UP, the guest's own frames (IPv6 MLD/ND after link up) reach
# mana-vfio, and both QEMU and mana-vfio are gone afterwards with the
# socket removed.
#
# M2: mana_ib probes the RDMA device (GET_ADAPTER_CAP, its EQs,
# CREATE_ADAPTER, CONFIG_MAC_ADDR) and registers mana_0 with the node GUID
# of our MAC and one port, ACTIVE once eth0 is up; the RDMA core's GIDs
# reach the adapter as CONFIG_IP_ADDR: the link-local IPv6 GID at link up,
# 10.77.0.2 on `ip addr add` (in the port's GID table as ::ffff:10.77.0.2)
# and its removal on `ip addr del`; no request goes unanswered and dmesg
# has no mana_ib error.
#
# With "ping": mana-vfio's wire is a TAP in a network namespace holding
# 10.77.0.1, the guest's eth0 10.77.0.2, and the guest pings the host's
# stack through its mana driver and our device: 3 of 3 replies (needs
# root, /dev/net/tun and network namespaces; skips otherwise).
#
# With "socket": mana-vfio joins a socket: virtual switch; once the guest's
# driver has enabled RX (CONFIG_VPORT_RX seen in mana-vfio's log), a
# mana-emu VM on the same switch sends 100 frames to the guest's MAC with
# mana-pktgen (our provider on the emulated device), and the guest's own
# counters must show all 100 received by its mana driver.
#
# With "verbs" (M3): the guest also carries trixie's libibverbs and
# ibv_devinfo with PROVIDER (our libmana, plain or ASan: then preloaded
# with its runtime) as its only provider; `ibv_devinfo -v` on the real
# mana_ib must load ours and show mana_0 as mana-vfio describes it (the
# caps, port 1 ACTIVE, the GIDs), its user context costing one doorbell
# page (ALLOCATE/DESTROY_RESOURCE_RANGE).  Two trixie ibv_rc_pingpong
# (over lo, GID 1) make RC QPs through our provider (MANA_IB_CREATE_CQ,
# CREATE_RC_QP) and connect them to RTS (SET_QP_STATE); mana-vfio has no
# RC transport yet, so the ping-pong is cut off by a timeout.  Then, eth0 down (a raw QP
# needs the vPort the netdev holds), MANA_PKTGEN (our manadv datapath on
# our provider) loops 1000 frames through a raw QP and an RSS QP on the
# real mana_ib: PD, MRs, CQs, CREATE_WQ_OBJ, CONFIG_VPORT_TX/RX with the
# user's PD and doorbell page, WQEs and doorbells from userspace, frames
# back through mana-vfio's loopback wire: all 1000 received, verified.
#
# With "rcvm" (M3): RC between the guest and a mana-emu VM.  mana-vfio
# joins a socket: switch with two mana-emu VMs (our provider on the
# emulated device, 10.77.0.1 and 10.77.0.3); trixie's ibv_rc_pingpong in
# the guest (GID 1, 10.77.0.2) is first the server of the first VM's
# Debian ibv_rc_pingpong, then the client of the second's: 300 round trips
# of 4 KiB messages (four 1 KiB packets), data checked, both ends' counts.
# Their TCP exchange of QP numbers and GIDs goes over a second NIC of the
# guest (QEMU's user network: the host's loopback is 10.0.2.2, a host
# port forwarded to the guest's), since a mana-emu VM has no IP stack on
# the wire; the RoCE packets go over mana-vfio's wire only.
#
# With "kill": QEMU is killed (SIGKILL) once the driver has established the
# HWC; mana-vfio must notice the client gone, exit 0 and leave nothing
# (socket, process) behind.
#
# Needs ./build.sh guest-root (build/guest/); skips (77) without it.
set -uo pipefail

BUILD=$(realpath "$1")
VFIO=$(realpath "$2")
MODE=${3:-probe}
HERE=$(dirname "$(realpath "$0")")
. "$HERE/../check.sh"

if [ ! -f "$BUILD/guest/stamp" ]; then
	echo "test_guest_mana: SKIPPED: no guest root (./build.sh guest-root)"
	exit 77
fi

MAC=00:0d:3a:12:34:56
NS=
WIRE=()
if [ "$MODE" = ping ]; then
	if [ "$(id -u)" -ne 0 ] || [ ! -c /dev/net/tun ] ||
		! ip netns add "mana-vfio-$$" 2>/dev/null; then
		echo "test_guest_mana: SKIPPED: ping needs root, /dev/net/tun and netns"
		exit 77
	fi
	NS=mana-vfio-$$
	trap 'ip netns del "$NS" 2>/dev/null; rm -rf "$TMP"' EXIT
	WIRE=(--backend=tap:mvtap0)
elif [ "$MODE" = verbs ]; then
	# trixie's ibv_rc_pingpong, our mana-pktgen and test_verbs_threads
	export GUEST_PROVIDER=$4 GUEST_BINS="$BUILD/guest/verbs/usr/bin/ibv_rc_pingpong $5 ${6:-}"
	WIRE=(--backend=loopback)
elif [ "$MODE" = rcvm ]; then
	EMU=$4
	export GUEST_PROVIDER=$5 GUEST_BINS="$BUILD/guest/verbs/usr/bin/ibv_rc_pingpong"
	export GUEST_EXTRA_MODULES=virtio_net
	mkdir "$TMP/switch"
	WIRE=(--backend=socket:"$TMP/switch")
	# two free TCP ports: the guest's server, the second VM's server
	read -r P1 P2 < <(/usr/bin/python3 -c 'import socket
a, b = socket.socket(), socket.socket()
a.bind(("127.0.0.1", 0)); b.bind(("127.0.0.1", 0))
print(a.getsockname()[1], b.getsockname()[1])')
	echo "$P1 $P2" >"$TMP/rcvm.ports"
	NET=(-netdev "user,id=n0,hostfwd=tcp:127.0.0.1:$P1-10.0.2.15:$P1"
		-device virtio-net-pci,netdev=n0,romfile=)
elif [ "$MODE" = socket ]; then
	EMU=$4
	PKTGEN=$5
	mkdir "$TMP/switch"
	WIRE=(--backend=socket:"$TMP/switch")
fi
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
# mana_ib's device: the RDMA core adds a GID per address of eth0
ip addr add 10.77.0.2/24 dev eth0
echo "== infiniband"
for d in /sys/class/infiniband/*; do
	echo "ibdev $(basename $d) guid=$(cat $d/node_guid) ports=$(ls $d/ports | tr '\n' ' ')"
	for p in $d/ports/*; do
		echo "port $(basename $p) state=$(cat $p/state) link=$(cat $p/link_layer)"
		for g in $p/gids/*; do
			i=$(basename $g)
			case "$(cat $g)" in 0000:0000:0000:0000:0000:0000:0000:0000) continue ;; esac
			echo "gid $i $(cat $g) $(cat $p/gid_attrs/types/$i 2>/dev/null)"
		done
	done
done
if [ -e /ping ]; then
	ping -c 3 -W 5 10.77.0.1
fi
if [ -e /rcvm ]; then
	asan=/usr/lib/x86_64-linux-gnu/libasan.so.8
	[ -e $asan ] && export LD_PRELOAD=$asan
	read P1 P2 </rcvm.ports
	ip link set eth1 up
	ip addr add 10.0.2.15/24 dev eth1
	echo "== RC: the guest serves a mana-emu VM $(cut -d' ' -f1 /proc/uptime)"
	timeout 120 ibv_rc_pingpong -d mana_0 -g 1 -n 300 -s 4096 -c -p $P1 >/tmp/rcs 2>&1 &
	rcs=$!
	i=0
	# listening (IPv4 or IPv6 wildcard, as getaddrinfo orders them)
	while ! cat /proc/net/tcp /proc/net/tcp6 | grep -qE ":$(printf %04X $P1) 0+:0000 0A" &&
		[ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	echo "RC-GUEST-LISTENING $(cut -d' ' -f1 /proc/uptime)"
	wait $rcs
	echo "rc guest server exit $?"
	sed 's/^/rc guest server: /' /tmp/rcs
	echo "== RC: the guest is a mana-emu VM's client $(cut -d' ' -f1 /proc/uptime)"
	timeout 120 ibv_rc_pingpong -d mana_0 -g 1 -n 300 -s 4096 -c -p $P2 10.0.2.2 >/tmp/rcc 2>&1
	echo "rc guest client exit $? $(cut -d' ' -f1 /proc/uptime)"
	sed 's/^/rc guest client: /' /tmp/rcc
	unset LD_PRELOAD
fi
if [ -e /verbs ]; then
	# an ASan build's provider needs its runtime first (busybox is static)
	asan=/usr/lib/x86_64-linux-gnu/libasan.so.8
	[ -e $asan ] && export LD_PRELOAD=$asan
	echo "== ibv_devinfo -v"
	LD_DEBUG=files ibv_devinfo -v >/tmp/devinfo 2>/tmp/ld
	echo "ibv_devinfo exit $?"
	grep -o "calling init: .*libmana-rdmav34.so" /tmp/ld | head -1
	grep -v "^ *[0-9]*:" /tmp/ld
	cat /tmp/devinfo
	# RC: two QPs of mana_0 over lo (GID 1), 4 KiB messages of four
	# 1 KiB packets, data checked; the device loops its own MAC's
	# packets.  60 s bounds a failure.
	echo "== ibv_rc_pingpong"
	ip link set lo up
	timeout 60 ibv_rc_pingpong -d mana_0 -g 1 -n 300 -s 4096 -c >/tmp/rcs 2>&1 &
	rcs=$!
	# the server listens on 18515 (0x4853) once its QP exists
	i=0
	while ! cat /proc/net/tcp /proc/net/tcp6 | grep -qE ':4853 0+:0000 0A' &&
		[ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	timeout 60 ibv_rc_pingpong -d mana_0 -g 1 -n 300 -s 4096 -c 127.0.0.1
	echo "rc client exit $?"
	wait $rcs
	echo "rc server exit $?"
	sed 's/^/rc server: /' /tmp/rcs
	echo "== raw QP loopback"
	ip link set eth0 down
	mana-pktgen --mode=loopback --frames=1000 --queues=1 --verify --timeout=60
	echo "mana-pktgen exit $?"
	# again with the queues on the provider's own rings, as a plain verbs
	# program has them: 6.12 makes such a CQ an RNIC CQ, whose DMA region
	# a raw queue then cannot have, unless the provider makes it again
	echo "== raw QP loopback, own rings"
	mana-pktgen --mode=loopback --frames=1000 --queues=1 --verify --timeout=60 --own-queues
	echo "mana-pktgen own-queues exit $?"
	# the standard verbs datapath (ibv_post_wq_recv, ibv_post_send,
	# ibv_poll_cq) on raw queues: one thread receives, one polls, one
	# sends through the loopback, every completion in order
	echo "== verbs datapath"
	test_verbs_threads rq --count=20000 --queues=1 --depth=256
	echo "test_verbs_threads exit $?"
	unset LD_PRELOAD
fi
ip addr del 10.77.0.2/24 dev eth0 && echo "ip-addr-del ok"
# the GID goes from the adapter when the core's GID cache drops it
i=0
while [ -n "$(grep -l 0a4d:0002 /sys/class/infiniband/*/ports/1/gids/* 2>/dev/null)" ] &&
	[ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
echo "== dmesg at the end"
dmesg | grep -iE "mana|infiniband|BUG|Oops|WARNING" | tail -8
if [ -e /socket ]; then
	# the frames come once the host saw RX enabled; 60 s bounds a failure
	i=0
	while [ "$(cat /sys/class/net/eth0/statistics/rx_packets)" -lt 100 ] &&
		[ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	echo "rx_packets $(cat /sys/class/net/eth0/statistics/rx_packets)" \
		"rx_bytes $(cat /sys/class/net/eth0/statistics/rx_bytes)"
fi
GUEST
extra=()
case "$MODE" in ping | socket | verbs | rcvm)
	echo >"$TMP/$MODE"
	extra=("$TMP/$MODE") ;;
esac
[ "$MODE" = rcvm ] && extra+=("$TMP/rcvm.ports")
"$HERE/guest.sh" "$BUILD" initramfs "$TMP/initrd.gz" "$TMP/test.sh" "${extra[@]}" || exit 1

SOCK=$TMP/mana.sock
# verbose: the socket mode waits for the driver's CONFIG_VPORT_RX in the log
${NS:+ip netns exec "$NS"} env MANA_VFIO_VERBOSE=1 "$VFIO" --socket="$SOCK" --mac=$MAC \
	"${WIRE[@]}" 2>"$TMP/server.log" &
server=$!
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.05; done
if [ -n "$NS" ]; then
	# the TAP exists once mana-vfio listens; the host end of the wire
	ip netns exec "$NS" sh -c 'ip link set lo up && ip link set mvtap0 up &&
		ip addr add 10.77.0.1/24 dev mvtap0' || fail "TAP set up"
fi
t0=$(date +%s%N)
# a stuck guest is a failure, not a hang: TCG boots in ~5 s here
if [ "$MODE" = socket ]; then
	# a mana-emu VM on the switch sends once the guest's RX is on
	(
		while ! grep -q 'HWC: request 0x20007 .* ok' "$TMP/server.log"; do
			kill -0 "$server" 2>/dev/null || exit 1
			sleep 0.1
		done
		"$EMU" --backend=socket:"$TMP/switch" -- "$PKTGEN" --mode=send \
			--frames=100 --queues=1 --dmac=$MAC >"$TMP/pktgen.log" 2>&1
	) &
	sender=$!
fi
if [ "$MODE" = rcvm ]; then
	# the second VM serves from the start; the first connects to the
	# guest's server once it listens (through QEMU's forwarded port)
	timeout 200 "$EMU" --netdev-up --backend=socket:"$TMP/switch" \
		--mac=00:0d:3a:00:77:03 --ip=10.77.0.3/24 -- ibv_rc_pingpong \
		-d mana_0 -g 1 -n 300 -s 4096 -c -p "$P2" >"$TMP/vmsrv.log" 2>&1 &
	vmsrv=$!
	(
		while ! grep -q '^RC-GUEST-LISTENING' "$TMP/console.log" 2>/dev/null; do
			kill -0 "$server" 2>/dev/null || exit 1
			sleep 0.1
		done
		timeout 120 "$EMU" --netdev-up --backend=socket:"$TMP/switch" \
			--mac=00:0d:3a:00:77:01 --ip=10.77.0.1/24 -- ibv_rc_pingpong \
			-d mana_0 -g 1 -n 300 -s 4096 -c -p "$P1" 127.0.0.1 \
			>"$TMP/vmcli.log" 2>&1
		echo "exit $?" >>"$TMP/vmcli.log"
	) &
	sender=$!
fi
timeout 300 "$HERE/guest.sh" "$BUILD" boot "$TMP/initrd.gz" \
	-object memory-backend-memfd,id=mem,size=512M,share=on \
	-machine pc,memory-backend=mem \
	-device "{\"driver\":\"vfio-user-pci\",\"socket\":{\"type\":\"unix\",\"path\":\"$SOCK\"}}" \
	${NET[@]+"${NET[@]}"} >"$TMP/console.log" 2>&1 &
guest=$!
if [ "$MODE" = kill ]; then
	while ! grep -q 'HWC established' "$TMP/server.log"; do
		kill -0 "$guest" 2>/dev/null || break
		sleep 0.05
	done
	# QEMU is timeout's one child (guest.sh execs it)
	pkill -KILL -P "$guest"
fi
wait "$guest"
rc=$?
t1=$(date +%s%N)
[ -n "${sender:-}" ] && wait "$sender"
if [ -n "${vmsrv:-}" ]; then
	wait "$vmsrv"
	echo "exit $?" >>"$TMP/vmsrv.log"
fi
wait "$server"
src=$?
echo "guest boot + test + power-off: $(( (t1 - t0) / 1000000 )) ms" \
	"(qemu exit $rc, mana-vfio exit $src)"

if [ "$MODE" = kill ]; then
	check "qemu killed" test "$rc" -eq 137
	check "mana-vfio exits 0 after the client" test "$src" -eq 0
	expect "mana-vfio saw the client go" "$TMP/server.log" 'exit: hwc_established=1 '
	check "socket removed" test ! -e "$SOCK"
	check "mana-vfio gone" sh -c "! kill -0 $server 2>/dev/null"
	check_done
	exit
fi
check "qemu exits 0" test "$rc" -eq 0
check "mana-vfio exits 0 after the client" test "$src" -eq 0
expect "guest script ran" "$TMP/console.log" '^GUEST-EXIT 0'
expect "modules loaded" "$TMP/console.log" '^GUEST-MODULES'
expect_not "no module failed to load" "$TMP/console.log" 'GUEST-INSMOD-FAILED'
expect "driver reports the protocol" "$TMP/console.log" \
	'mana 0000:00:0.\.0: Microsoft Azure Network Adapter protocol version'
expect_not "mana probed without failure" "$TMP/console.log" \
	'probe with driver mana failed|gdma probe failed|mana 0000:00:0.\.0( eth0)?: Failed'
expect "every request answered" "$TMP/server.log" 'exit: .* unsupported=0 '
expect "eth0 bound to mana with our MAC" "$TMP/console.log" "^iface eth0 driver=mana mac=$MAC"
expect "ip link set up" "$TMP/console.log" '^ip-link-up ok'
expect "link UP,LOWER_UP" "$TMP/console.log" 'eth0: <[^>]*\bUP\b[^>]*LOWER_UP'
expect "vPort configured" "$TMP/console.log" 'eth0: Configured vPort'
expect "RX steering configured" "$TMP/console.log" 'eth0: Configured steering vPort .* entries 64'
expect_not "no oops or warning" "$TMP/console.log" 'BUG:|Oops|WARNING:|Call Trace'
# M2: mana_ib's device, its port and GIDs
expect_not "mana_ib probed without failure" "$TMP/console.log" \
	'probe with driver mana_ib|mana_ib.*Failed|infiniband.*Failed'
expect "mana_0 registered, node GUID from our MAC, one port" "$TMP/console.log" \
	'^ibdev mana_0 guid=020d:3aff:fe12:3456 ports=1 [^0-9]*$'
expect "port 1 ACTIVE on Ethernet" "$TMP/console.log" \
	'^port 1 state=4: ACTIVE link=Ethernet'
expect "the RDMA adapter created once" "$TMP/server.log" 'exit: .* rnic_adapters=1 '
expect "the adapter got our MAC" "$TMP/server.log" "RNIC: MAC add $MAC\$"
expect "link-local GID in the adapter" "$TMP/server.log" \
	'RNIC: GID add fe80::20d:3aff:fe12:3456 \(IPv6\)'
expect "10.77.0.2 in the port's GID table" "$TMP/console.log" \
	'^gid [0-9]+ 0000:0000:0000:0000:0000:ffff:0a4d:0002 RoCE v2'
expect "ip addr add: GID added to the adapter" "$TMP/server.log" \
	'RNIC: GID add 10.77.0.2 \(IPv4\)'
expect "ip addr del: GID removed from the adapter" "$TMP/server.log" \
	'RNIC: GID remove 10.77.0.2 \(IPv4\)'
expect "HWC established once" "$TMP/server.log" 'exit: hwc_established=1 '
expect "the guest's frames reached mana-vfio" "$TMP/server.log" \
	"TX frame [0-9]+ bytes, $MAC -> 33:33:.* type 86dd"
expect "no guest DMA outside shared memory" "$TMP/server.log" 'dma_faults=0 '
expect "the HWC was torn down at power-off" "$TMP/server.log" 'HWC destroyed'
if [ "$MODE" = ping ]; then
	expect "the guest's pings answered through mana" "$TMP/console.log" \
		'3 packets transmitted, 3 packets received'
	expect "frames delivered into the guest" "$TMP/server.log" 'rx_frames=[1-9]'
fi
if [ "$MODE" = socket ]; then
	expect "the mana-emu VM sent 100 frames" "$TMP/pktgen.log" '^sent 100 '
	expect "the guest's mana driver received all 100" "$TMP/console.log" \
		'^rx_packets 100 rx_bytes 6400'
	expect "mana-vfio delivered 100, dropped none" "$TMP/server.log" \
		'rx_frames=100 rx_drops=0'
fi
if [ "$MODE" = verbs ]; then
	expect "ibv_devinfo ran" "$TMP/console.log" '^ibv_devinfo exit 0'
	expect "libibverbs loaded our provider" "$TMP/console.log" \
		'calling init: /usr/lib/x86_64-linux-gnu/libibverbs/libmana-rdmav34.so'
	expect "mana_0 with our node GUID" "$TMP/console.log" \
		'node_guid:[[:space:]]+020d:3aff:fe12:3456'
	# mana-vfio's GET_ADAPTER_CAP as 6.12 reports it
	for f in 'max_qp:[[:space:]]+64' 'max_qp_wr:[[:space:]]+8192' \
		'max_cqe:[[:space:]]+8192' 'max_sge:[[:space:]]+15' \
		'max_cq:[[:space:]]+64' 'max_mr:[[:space:]]+16777215' \
		'max_pd:[[:space:]]+24576' 'max_qp_rd_atom:[[:space:]]+16' \
		'max_qp_init_rd_atom:[[:space:]]+16' 'local_ca_ack_delay:[[:space:]]+16'; do
		expect "ibv_devinfo: ${f%%:*}" "$TMP/console.log" "^[[:space:]]$f"
	done
	expect "port 1 ACTIVE" "$TMP/console.log" 'state:[[:space:]]+PORT_ACTIVE \(4\)'
	expect "port 1 on Ethernet" "$TMP/console.log" 'link_layer:[[:space:]]+Ethernet'
	expect "GID 1 is 10.77.0.2, RoCE v2" "$TMP/console.log" \
		'GID\[  1\]:[[:space:]]+::ffff:10.77.0.2, RoCE v2'
	expect "the user context's doorbell page allocated" "$TMP/server.log" \
		'HWC: request 0x16 \(device 0\) ok'
	expect "... and freed at close" "$TMP/server.log" \
		'HWC: request 0x18 \(device 0\) ok'
	expect "RC QPs made, connected" "$TMP/console.log" \
		'remote address: LID 0x0000, QPN 0x8[0-9a-f]{5}, PSN 0x[0-9a-f]+, GID ::ffff:10.77.0.2'
	expect_not "no RC create or modify failed" "$TMP/console.log" \
		"Couldn't|Failed to modify|Failed status"
	check "both RC QPs reached RTS" test \
		"$(grep -cE 'RNIC: QP 0x8[0-9a-f]{5} -> state 3 ' "$TMP/server.log")" -ge 2
	# the transfer itself: 300 round trips of 4 KiB, data checked (-c)
	grep -E '^(rc server: )?[0-9]+ (bytes|iters) in' "$TMP/console.log"
	grep -o 'rc_tx_packets=.*' "$TMP/server.log"
	expect "RC ping-pong over lo: the client's 300 iterations" "$TMP/console.log" \
		'^2457600 bytes in [0-9.]+ seconds'
	expect "... and the server's" "$TMP/console.log" \
		'^rc server: 300 iters in [0-9.]+ seconds'
	expect "both ends exit 0" "$TMP/console.log" '^rc client exit 0'
	expect "... the server too" "$TMP/console.log" '^rc server exit 0'
	# 600 messages of 4 packets plus their ACKs, all inside the device
	check "RC packets looped inside mana-vfio" test \
		"$(sed -n 's/.*rc_local_packets=\([0-9]*\).*/\1/p' "$TMP/server.log")" -ge 2400
	expect "no RC error, NAK or retransmission" "$TMP/server.log" \
		'rc_retransmits=0 rc_naks=0 rc_errors=0 rc_bad_packets=0'
	expect "raw QP loopback: 1000 sent, 1000 received and verified" \
		"$TMP/console.log" '^sent 1000 received 1000 bad 0 errors 0'
	expect "mana-pktgen exits 0" "$TMP/console.log" '^mana-pktgen exit 0'
	check "raw QP loopback on the provider's own rings too: 1000 sent, received, verified" \
		test "$(grep -c '^sent 1000 received 1000 bad 0 errors 0' "$TMP/console.log")" -eq 2
	expect "mana-pktgen --own-queues exits 0" "$TMP/console.log" '^mana-pktgen own-queues exit 0'
	expect "raw queues through the standard verbs datapath: every check passed" \
		"$TMP/console.log" '^[1-9][0-9]* passed, 0 failed'
	expect "test_verbs_threads exits 0" "$TMP/console.log" '^test_verbs_threads exit 0'
	expect "a user MR registered" "$TMP/server.log" 'HWC: request 0x1f \(device 0\) ok'
	expect "a user PD" "$TMP/server.log" 'HWC: request 0x1d \(device 0\) ok'
	# every frame sent came back (the guest's own IPv6 ones too, if any)
	expect "mana-vfio carried them all, dropped none" "$TMP/server.log" \
		'tx_frames=(\d{4,}) rx_frames=\1 rx_drops=0 '
fi
if [ "$MODE" = rcvm ]; then
	grep -E '^rc guest (server|client): [0-9]+ (bytes|iters) in|^GUEST-|^== RC|^RC-|^rc guest .*exit' \
		"$TMP/console.log"
	grep -o 'rc_tx_packets=.*' "$TMP/server.log"
	expect "the guest served: 300 round trips of 4 KiB" "$TMP/console.log" \
		'^rc guest server: 2457600 bytes in [0-9.]+ seconds'
	expect "... ends 0" "$TMP/console.log" '^rc guest server exit 0'
	expect "the mana-emu VM as its client: the same" "$TMP/vmcli.log" \
		'^300 iters in [0-9.]+ seconds'
	expect "... ends 0" "$TMP/vmcli.log" '^exit 0'
	expect "the guest as a client: 300 round trips of 4 KiB" "$TMP/console.log" \
		'^rc guest client: 2457600 bytes in [0-9.]+ seconds'
	expect "... ends 0" "$TMP/console.log" '^rc guest client exit 0 '
	expect "the mana-emu VM served them" "$TMP/vmsrv.log" \
		'^300 iters in [0-9.]+ seconds'
	expect "... ends 0" "$TMP/vmsrv.log" '^exit 0'
	# 2 x 600 messages of four packets, half of them and the ACKs received
	check "RC packets went over the wire, none looped" test \
		"$(sed -n 's/.*rc_rx_packets=\([0-9]*\) rc_local_packets=0 .*/\1/p' \
		"$TMP/server.log")" -ge 2400
	expect "no RC error" "$TMP/server.log" 'rc_errors=0 rc_bad_packets=0'
fi
check "socket removed" test ! -e "$SOCK"
check "mana-vfio gone" sh -c "! kill -0 $server 2>/dev/null"
if [ "$failed" -ne 0 ]; then
	echo "== console" >&2; cat "$TMP/console.log" >&2
	echo "== mana-vfio" >&2; grep -v '^mana-vfio: *cmd\|^mana-vfio:   ' "$TMP/server.log" >&2
	[ -f "$TMP/pktgen.log" ] && { echo "== mana-pktgen" >&2; cat "$TMP/pktgen.log" >&2; }
	for f in vmcli vmsrv; do
		[ -f "$TMP/$f.log" ] && { echo "== $f" >&2; cat "$TMP/$f.log" >&2; }
	done
fi
check_done
