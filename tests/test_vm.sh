#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# One emulated VM, many processes (mana-emu --vm=NAME, issue 20):
#   join      a second process sees the first one's device (its options)
#             and the VM ends with its last process
#   conflict  a joiner contradicting a device option: one line naming the
#             option and both values, status 2, its command never runs
#             (launcher and environment form)
#   killed    kill -9 of the creator: the others keep the VM, and its
#             vport is free again, as the kernel releases a dead process's
#   vport.V   a raw QP in one process makes another's fail as kernel V's
#             mana_ib answers (7.1: ENODEV, 7.2: EBUSY); numbers VM-wide
#   fdpass    DPDK multi-process: the uverbs fd passed over SCM_RIGHTS,
#             frames posted by the receiver on the sender's SQ arrive
#   link.V    issue 20's first acceptance point, kernel V: `ip link set
#             dev VF up` in one process, and another's ibv_devinfo says
#             PORT_ACTIVE, a third's sysfs `up`, a fourth's raw QP fails
#             as the era says; down: PORT_DOWN, raw QPs work; a raw QP
#             held by one process: a second's fails, a third's `ip link
#             set dev VF up` is EBUSY
#   events.V  (kernel V) a process blocked in ibv_get_async_event gets PORT_ERR and
#             PORT_ACTIVE when other processes of the VM flip eth0
#   cm        rping server and client in two processes of the VM; a REQ
#             nobody in the VM listens for is rejected at once
#   fork      a process forks both rdma_cm sides (rdma-core's rdmacm
#             tests): the children are processes of the VM; without --vm
#             a forked child says once that it is a VM of its own
#   rc        Debian's ibv_rc_pingpong server and client in two processes
#             of the VM on the default loopback wire: their QPNs differ and
#             every message arrives (--chk)
#
# Usage: test_vm.sh BUILD_DIR TEST_VM CASE [ASAN_RUNTIME]
set -u
BUILD=${1:?build dir}
PROG=${2:?test_vm}
CASE=${3:?case}
RT=${4:-}	# the sanitizer build's runtime, first in LD_PRELOAD
EMU="$BUILD/bin/mana-emu"
. "$(dirname "$0")/check.sh"

# a runtime directory of our own: no other test's (or user's) VM named v
export XDG_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
VMFILE="$XDG_RUNTIME_DIR/mana-emu/vm-v"
bg=()
cleanup() {
	local p
	for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# until PATH exists (the process making it runs concurrently; the test's
# own timeout bounds the wait)
wait_for() { # wait_for PATH [PID]: false if PID ends first
	while [ ! -e "$1" ]; do
		if [ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null; then
			[ -e "$1" ]
			return
		fi
		sleep 0.05
	done
}

# Debian's ip, under the sanitizer build's runtime: its own leaks are not ours
ip_vm() {
	ASAN_OPTIONS=detect_leaks=0 timeout 60 "$EMU" --vm=v -- ip "$@"
}

guid_of() { # the node GUID ibv_devinfo shows in VM v
	timeout 60 "$EMU" --vm=v -- ibv_devinfo 2>&1 | awk '/node_guid/ { print $2; exit }'
}

case $CASE in
join)
	timeout 120 "$EMU" --vm=v --mac=00:0d:3a:aa:bb:01 --ports=2 -- sleep 100 &
	creator=$!
	bg+=("$creator")
	wait_for "$VMFILE"
	timeout 60 "$EMU" --vm=v -- ibv_devinfo >"$TMP/devinfo" 2>&1
	check "ibv_devinfo in the joined VM (status $?)" test $? -eq 0
	expect "the creator's MAC names the device" "$TMP/devinfo" \
		'node_guid:\s+020d:3aff:feaa:bb01'
	expect "the creator's two ports" "$TMP/devinfo" 'port:\s+2'
	# a process without --vm has its own VM, with the defaults
	timeout 60 "$EMU" -- ibv_devinfo >"$TMP/own" 2>&1
	expect_not "without --vm: its own VM" "$TMP/own" 'feaa:bb01'
	kill "$creator"
	wait "$creator"
	check "the VM ends with its last process" test ! -e "$VMFILE"
	# a new VM of the same name is made afresh, with its own options
	check "a new VM v has the defaults" test "$(guid_of)" = 020d:3aff:fe00:0001
	;;
conflict)
	timeout 120 "$EMU" --vm=v --ports=2 -- sleep 100 &
	bg+=($!)
	wait_for "$VMFILE"
	timeout 60 "$EMU" --vm=v --ports=1 -- touch "$TMP/ran" 2>"$TMP/err"
	rc=$?
	check "a conflicting joiner exits 2 (status $rc)" test $rc -eq 2
	check "its command did not run" test ! -e "$TMP/ran"
	check "one line" test "$(wc -l <"$TMP/err")" -eq 1
	expect "the option and both values" "$TMP/err" \
		"^mana-emu: --vm=v: --ports: this process asks for '--ports=1', the VM has '--ports=2'$"
	# options it leaves out, or gives as the VM has them, are fine
	timeout 60 "$EMU" --vm=v --ports=2 --verbose -- true 2>/dev/null
	check "the same value, and a process option of its own" test $? -eq 0
	# the environment form: the library checks as it joins
	LD_PRELOAD="${RT:+$RT }$BUILD/lib/libmana-emu.so" ASAN_OPTIONS=detect_leaks=0 \
		MANA_EMU_OPTIONS="--vm=v --kernel=6.14" \
		timeout 60 touch "$TMP/ran" 2>"$TMP/err2"
	rc=$?
	check "environment form: status 2 (got $rc)" test $rc -eq 2
	check "environment form: nothing ran" test ! -e "$TMP/ran"
	expect "environment form: the option and both values" "$TMP/err2" \
		"--kernel: this process asks for '--kernel=6.14', the VM has '\\(default\\)'"
	;;
killed)
	"$EMU" --vm=v --mac=00:0d:3a:aa:bb:01 -- "$PROG" hold "$TMP/sock" \
		>"$TMP/hold" 2>&1 &
	launcher=$!
	bg+=("$launcher")
	wait_for "$TMP/sock"
	# a member that has joined (its marker comes after the library's
	# constructor) before the creator dies, and that execs after it died:
	# its new image joins a VM whose only other process is dead, which is
	# not stale (the member lives on in that image)
	timeout 120 "$EMU" --vm=v -- sh -c 'touch "$1"
		while [ ! -e "$2" ]; do sleep 0.05; done
		exec sh -c "touch $3; exec sleep 100"' sh \
		"$TMP/member" "$TMP/go" "$TMP/member2" &
	bg+=($!)
	wait_for "$TMP/member"
	ino=$(stat -c '%i %.9W' "$VMFILE")
	# kill -9 the creator itself (the launcher's child), holding the vport
	creator=$(pgrep -x -P "$launcher" test_vm)
	check "the creator runs ($creator)" test -n "$creator"
	kill -9 "$creator"
	wait "$launcher"
	touch "$TMP/go"
	wait_for "$TMP/member2"
	check "the same VM, not made anew ($ino)" \
		test "$(stat -c '%i %.9W' "$VMFILE" 2>/dev/null)" = "$ino"
	check "the VM lives on" test -e "$VMFILE"
	check "with the creator's options" test "$(guid_of)" = 020d:3aff:feaa:bb01
	timeout 60 "$EMU" --vm=v -- "$PROG" raw >"$TMP/raw" 2>&1
	rc=$?
	check "the dead creator's vport is free again (status $rc)" test $rc -eq 0
	cat "$TMP/raw"
	;;
vport.*)
	kernel=${CASE#vport.}
	timeout 120 "$EMU" --vm=v --ports=2 --kernel="$kernel" -- "$PROG" hold "$TMP/sock" \
		>"$TMP/hold" 2>&1 &
	holder=$!
	bg+=("$holder")
	wait_for "$TMP/sock" "$holder" || fail "the holder ended before it held"
	timeout 120 "$EMU" --vm=v -- "$PROG" busy "$TMP/sock" >"$TMP/busy" 2>&1
	rc=$?
	wait "$holder"
	hrc=$?
	check "busy (status $rc)" test $rc -eq 0
	check "holder (status $hrc)" test $hrc -eq 0
	echo "--- holder:"; cat "$TMP/hold"
	echo "--- busy:"; cat "$TMP/busy"
	;;
fdpass)
	timeout 240 "$EMU" --vm=v -- "$PROG" primary "$TMP/sock" 32 >"$TMP/primary" 2>&1 &
	primary=$!
	bg+=("$primary")
	if ! wait_for "$TMP/sock" "$primary"; then
		fail "the primary ended before it listened"
		cat "$TMP/primary"
		check_done
		exit
	fi
	timeout 240 "$EMU" --vm=v -- "$PROG" secondary "$TMP/sock" >"$TMP/secondary" 2>&1
	rc=$?
	wait "$primary"
	prc=$?
	check "secondary (status $rc)" test $rc -eq 0
	check "primary (status $prc)" test $prc -eq 0
	echo "--- primary:"; cat "$TMP/primary"
	echo "--- secondary:"; cat "$TMP/secondary"
	;;
link.*)
	kernel=${CASE#link.}
	vf=enP30832s1
	vm() { timeout 60 "$EMU" --vm=v "$@"; }
	timeout 120 "$EMU" --vm=v --ports=2 --kernel="$kernel" -- sleep 100 &
	bg+=($!)
	wait_for "$VMFILE"
	ip_vm link set dev $vf up
	check "ip link set dev $vf up (status $?)" test $? -eq 0
	vm -- ibv_devinfo >"$TMP/up" 2>&1
	expect "another process's ibv_devinfo: PORT_ACTIVE" "$TMP/up" \
		'state:\s+PORT_ACTIVE'
	check "another process's sysfs: operstate up" \
		test "$(vm -- cat /sys/class/net/$vf/operstate)" = up
	vm -- "$PROG" raw held >"$TMP/raw_up" 2>&1
	check "a raw QP while the VF is up fails as kernel $kernel says (status $?)" \
		test $? -eq 0
	cat "$TMP/raw_up"
	ip_vm link set dev $vf down
	check "ip link set dev $vf down (status $?)" test $? -eq 0
	vm -- ibv_devinfo >"$TMP/down" 2>&1
	expect "ibv_devinfo: PORT_DOWN" "$TMP/down" 'state:\s+PORT_DOWN'
	expect_not "ibv_devinfo: no PORT_ACTIVE" "$TMP/down" 'PORT_ACTIVE'
	check "sysfs: operstate down" \
		test "$(vm -- cat /sys/class/net/$vf/operstate)" = down
	vm -- "$PROG" raw >"$TMP/raw_down" 2>&1
	check "a raw QP with the VF down works (status $?)" test $? -eq 0
	# a process holding the vport with its raw QP ...
	timeout 120 "$EMU" --vm=v -- "$PROG" hold "$TMP/sock" >"$TMP/hold" 2>&1 &
	holder=$!
	bg+=("$holder")
	wait_for "$TMP/sock"
	# ... makes a third process's ip link set up fail
	ip_vm link set dev $vf up 2>"$TMP/ebusy"
	rc=$?
	check "ip link set up while a raw QP holds the vport fails (status $rc)" \
		test $rc -ne 0
	expect "EBUSY" "$TMP/ebusy" 'Device or resource busy'
	vm -- ibv_devinfo >"$TMP/still" 2>&1
	expect_not "the port stays down" "$TMP/still" 'PORT_ACTIVE'
	# ... and a second process's raw QP on that port fail (port 2 works)
	vm -- "$PROG" busy "$TMP/sock" >"$TMP/busy" 2>&1
	check "a second process's raw QP (status $?)" test $? -eq 0
	wait "$holder"
	check "holder (status $?)" test $? -eq 0
	# the holder gone, the VF can open again
	ip_vm link set dev $vf up
	check "ip link set up once the holder closed (status $?)" test $? -eq 0
	echo "--- busy:"; cat "$TMP/busy"
	;;
events.*)
	kernel=${CASE#events.}
	vm() { timeout 60 "$EMU" --vm=v "$@"; }
	mkdir "$TMP/ev"
	timeout 120 "$EMU" --vm=v --netdev-up --kernel="$kernel" -- \
		"$PROG" events "$TMP/ev" \
		>"$TMP/events" 2>&1 &
	waiter=$!
	bg+=("$waiter")
	wait_for "$TMP/ev/ready"
	ip_vm link set dev eth0 down
	check "ip link set dev eth0 down (status $?)" test $? -eq 0
	wait_for "$TMP/ev/err"
	ip_vm link set dev eth0 up
	check "ip link set dev eth0 up (status $?)" test $? -eq 0
	wait "$waiter"
	check "the waiter got PORT_ERR, then PORT_ACTIVE (status $?)" test $? -eq 0
	cat "$TMP/events"
	;;
rc)
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	timeout 120 "$EMU" --vm=v --netdev-up --ip=10.9.0.1/24 -- \
		ibv_rc_pingpong -d mana_0 -p "$port" --chk -g 1 -n 100 \
		>"$TMP/srv" 2>&1 &
	srv=$!
	bg+=("$srv")
	# until the server listens (the test's timeout bounds the wait)
	while ! ss -Hltn "sport = :$port" | grep -q .; do sleep 0.05; done
	timeout 120 "$EMU" --vm=v -- ibv_rc_pingpong -d mana_0 -p "$port" \
		--chk -g 1 -n 100 127.0.0.1 >"$TMP/cli" 2>&1
	check "client (status $?)" test $? -eq 0
	wait "$srv"
	check "server (status $?)" test $? -eq 0
	expect "the client's 100 iterations" "$TMP/cli" '^100 iters in'
	expect "the server's 100 iterations" "$TMP/srv" '^100 iters in'
	qpn() { awk '/local address/ { for (i = 1; i < NF; i++) if ($i == "QPN") print $(i + 1) }' "$1"; }
	check "QPNs differ in the VM ($(qpn "$TMP/srv"), $(qpn "$TMP/cli"))" \
		test "$(qpn "$TMP/srv")" != "$(qpn "$TMP/cli")"
	cat "$TMP/srv" "$TMP/cli"
	;;
cm)
	# rdma_cm between two processes of one VM: the server's listener
	# takes the REQ every process's CM sees; a REQ nobody in the VM
	# listens for gets a REJ (invalid service ID) at once, from the one
	# process that answers for the VM, not a time-out
	timeout 120 "$EMU" --vm=v --netdev-up --ip=10.9.0.1/24 -- sleep 100 &
	bg+=($!)
	wait_for "$VMFILE"
	timeout 120 "$EMU" --vm=v --verbose -- \
		rping -s -a 10.9.0.1 -p 7174 -C 20 -V -v >"$TMP/srv" 2>&1 &
	srv=$!
	bg+=("$srv")
	# until the server's listener is in the VM (rping -c retries nothing)
	while kill -0 "$srv" 2>/dev/null &&
	      ! grep -q 'rdma_cm fd [0-9]*: LISTEN -> 0' "$TMP/srv"; do
		sleep 0.05
	done
	start=$(date +%s)
	timeout 120 "$EMU" --vm=v -- rping -c -a 10.9.0.1 -p 7175 -C 1 \
		>"$TMP/rej" 2>&1
	check "nobody listens: rping fails (status $?)" test $? -ne 0
	expect "nobody listens: REJECTED, invalid service ID" "$TMP/rej" \
		'RDMA_CM_EVENT_REJECTED, error 8'
	check "nobody listens: at once, not after the REQ's retries" \
		test $(($(date +%s) - start)) -lt 10
	timeout 120 "$EMU" --vm=v -- rping -c -a 10.9.0.1 -p 7174 -C 20 -V -v \
		>"$TMP/cli" 2>&1
	rc=$?
	rping_exit_race "$rc" "$TMP/cli" && rc=0
	check "client (status $rc)" test $rc -eq 0
	wait "$srv"
	rc=$?
	rping_exit_race "$rc" "$TMP/srv" && rc=0
	check "server (status $rc)" test $rc -eq 0
	check "20 pings answered" test "$(grep -c '^ping data' "$TMP/cli")" -eq 20
	cat "$TMP/rej" "$TMP/cli"
	grep -v '^mana-emu: \(ioctl\|mmap\)' "$TMP/srv"
	;;
fork)
	# rdma-core's rdmacm tests' shape: a process forks both sides
	ASAN_OPTIONS=detect_leaks=0 timeout 120 "$EMU" --vm=v --netdev-up \
		--ip=10.9.0.1/24 -- /usr/bin/python3 \
		"$(dirname "$0")/test_cm_fork.py" 10.9.0.1 >"$TMP/out" 2>&1
	check "both forked sides (status $?)" test $? -eq 0
	expect "every message intact" "$TMP/out" '^PASS$'
	cat "$TMP/out"
	# a forked child's switch port comes with its first rdma_cm id, not
	# inside LISTEN: qperf's server child tells its peer the port after
	# BIND, and a REQ sent while LISTEN joined the switch was lost
	rm -rf "$TMP/sw"
	ASAN_OPTIONS=detect_leaks=0 timeout 60 "$EMU" --vm=vj --netdev-up \
		--ip=10.9.0.1/24 --backend=socket:"$TMP/sw" -- /usr/bin/python3 -c '
import glob, os, sys
from pyverbs.cmid import CMEventChannel, CMID
pid = os.fork()
if pid == 0:
    CMID(creator=CMEventChannel())
    port = glob.glob(sys.argv[1] + "/p.%d.*" % os.getpid())
    print("child on the switch:", "yes" if port else "no", flush=True)
    os._exit(0)
os.waitpid(pid, 0)' "$TMP/sw" >"$TMP/join" 2>&1
	check "join: status $?" test $? -eq 0
	expect "the child is on the switch once it has an id" "$TMP/join" \
		'^child on the switch: yes$'
	cat "$TMP/join"
	# without --vm a forked child is a VM of its own, and says so once
	ASAN_OPTIONS=detect_leaks=0 timeout 60 "$EMU" --netdev-up \
		--ip=10.9.0.1/24 -- /usr/bin/python3 -c '
import os
from pyverbs.cmid import CMEventChannel, CMID
pid = os.fork()
if pid == 0:
    CMID(creator=CMEventChannel())
    CMID(creator=CMEventChannel())
    os._exit(0)
os.waitpid(pid, 0)
CMID(creator=CMEventChannel())' >"$TMP/alone" 2>&1
	check "alone: status $?" test $? -eq 0
	check "alone: the child says it once" \
		test "$(grep -c 'was forked without --vm' "$TMP/alone")" -eq 1
	cat "$TMP/alone"
	;;
*)
	echo "unknown case $CASE" >&2
	exit 2
	;;
esac
check_done
