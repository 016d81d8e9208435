#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# mana-diag under mana-emu: a healthy 2-port device, then each failure the
# emulator can stage (driver id 19, no RDMA netlink, VF interface up, no
# huge pages, no access to the uverbs node, no device, a missing module),
# each checked on the verdict line, the fix and the --json fields, with
# the documented exit status.  Usage: test_diag.sh BUILD_DIR
set -u
BUILD=${1:?build dir}
EMU="$BUILD/bin/mana-emu"
DIAG="$BUILD/bin/mana-diag"
. "$(dirname "$0")/check.sh"

# diag NAME STATUS [EMU OPTIONS...] -- [MANA-DIAG OPTIONS...]: text and JSON
diag() {
	local name=$1 want=$2 st
	shift 2
	# written for the single-device era (one mana_0): 6.14
	local emu_opts=(--kernel=6.14)
	while [ "$1" != -- ]; do emu_opts+=("$1"); shift; done
	shift
	"$EMU" "${emu_opts[@]}" -- $AS "$DIAG" "$@" >"$TMP/$name.txt" 2>"$TMP/$name.err"
	st=$?
	[ "$st" -eq "$want" ] && ok || { fail "$name: exit $st, want $want"; cat "$TMP/$name.txt" "$TMP/$name.err" >&2; }
	"$EMU" "${emu_opts[@]}" -- $AS "$DIAG" --json "$@" >"$TMP/$name.json" 2>>"$TMP/$name.err"
	st=$?
	[ "$st" -eq "$want" ] && ok || fail "$name --json: exit $st, want $want"
	jcheck "$name: JSON parses (json.tool)" "$name" 'True'
	jcheck "$name: json.tool" "$name" 'json.dumps(j, indent=4) is not None'
	jcheck "$name: exit_status field" "$name" "j['exit_status'] == $want and j['result'] == ('ok' if $want == 0 else 'fail')"
}

# jcheck DESCRIPTION NAME PYTHON-EXPRESSION: j is the report, c(id[, subject])
# the first check with that id (and subject).  Noted here, evaluated by
# jcheck_all in one python3 at the end: a python3 start per check made this
# test the slowest of all on a loaded 2-core machine.
jcheck() {
	printf '%s\t%s\t%s\n' "$1" "$TMP/$2.json" "$3" >>"$TMP/jchecks"
}

jcheck_all() {
	local out
	out=$(python3 - "$TMP/jchecks" <<'EOF'
import json, sys
passed = failed = 0
for line in open(sys.argv[1]):
    what, path, expr = line.rstrip('\n').split('\t', 2)
    try:
        j = json.load(open(path))
        def c(cid, subject=None):
            for x in j['checks']:
                if x['id'] == cid and (subject is None or x['subject'] == subject):
                    return x
            raise KeyError((cid, subject))
        ids = [x['id'] for x in j['checks']]
        good = bool(eval(expr))
    except Exception as e:
        good = False
        print('%s: %r' % (what, e), file=sys.stderr)
    if good:
        passed += 1
    else:
        failed += 1
        print('FAIL: %s: not (%s)' % (what, expr), file=sys.stderr)
        try:
            sys.stderr.write(open(path).read())
        except OSError:
            pass
print(passed, failed)
EOF
	)
	[ -n "$out" ] || { fail "jcheck_all: python3 failed"; return; }
	passed=$((passed + ${out% *}))
	failed=$((failed + ${out#* }))
}

# Runs as root in CI; the uverbs permission case needs an unprivileged user.
AS=

# ---- a healthy 2-port device -------------------------------------------------
diag healthy 0 --ports=2 -- --probe
for id in pci kernel rdma driver_id libibverbs; do
	expect "healthy $id" "$TMP/healthy.txt" "^OK +$id "
done
expect "healthy port 1" "$TMP/healthy.txt" '^OK +netdev +mana_0/1: VF enP30832s1 \(00:0d:3a:00:00:01\) down, master eth0 down'
expect "healthy port 2" "$TMP/healthy.txt" '^OK +netdev +mana_0/2: VF enP30832s1d1 \(00:0d:3a:00:00:02\) down, master eth1 down'
expect "healthy probe 1" "$TMP/healthy.txt" '^OK +probe +mana_0/1: .*created and destroyed'
expect "healthy probe 2" "$TMP/healthy.txt" '^OK +probe +mana_0/2: .*created and destroyed'
# the split (6.16 on): the RNIC mana_0 has no raw QPs, its manae_0 does
diag split 0 --kernel=7.2 -- --probe
expect "split: the RNIC is not probed" "$TMP/split.txt" '^SKIP +probe +mana_0: the RNIC of 7870:00:00.0: raw packet QPs \(DPDK.s\) are on its Ethernet device manae_0'
expect "split: the Ethernet device is" "$TMP/split.txt" '^OK +probe +manae_0/1: .*created and destroyed'
expect_not "split has no FAIL" "$TMP/split.txt" '^FAIL'
# huge pages: the emulated pools; the mount table is the host's (WARN without one)
expect "healthy hugepages" "$TMP/healthy.txt" '^(OK|WARN) +hugepages +2048kB: 1024 \(1024 free; node0 1024\)'
expect_not "healthy has no FAIL" "$TMP/healthy.txt" '^FAIL'
jcheck "healthy: check order" healthy "ids == ['pci', 'kernel', 'rdma', 'driver_id', 'libibverbs', 'netdev', 'netdev', 'hugepages', 'probe', 'probe']"
jcheck "healthy: pci data" healthy "c('pci')['data']['functions'] == [{'bdf': '7870:00:00.0', 'vendor': '1414', 'device': '00ba', 'driver': 'mana'}]"
jcheck "healthy: modules" healthy "all(c('kernel')['data'][m] for m in ('mana', 'mana_ib', 'ib_uverbs'))"
jcheck "healthy: uverbs node" healthy "c('rdma', 'mana_0')['data'] == {'ibdev': 'mana_0', 'bdf': '7870:00:00.0', 'uverbs': 'uverbs0', 'node': '/dev/infiniband/uverbs0', 'mode': '0666', 'access': True}"
jcheck "healthy: driver id" healthy "c('driver_id')['data']['driver_id'] == 20 and c('driver_id')['data']['provider'] == 'ours' and c('driver_id')['data']['netlink']"
jcheck "healthy: libibverbs" healthy "c('libibverbs')['data']['private_abi'] == 34 and c('libibverbs')['data']['libmana_preloaded']"
jcheck "healthy: port 2 pairing" healthy "(lambda d: d['netdev'] == 'enP30832s1d1' and d['master'] == 'eth1' and d['mac'] == d['master_mac'] == '00:0d:3a:00:00:02' and d['admin_up'] is False and d['port_state'] == 'DOWN')(c('netdev', 'mana_0/2')['data'])"
jcheck "healthy: hugepages data" healthy "c('hugepages')['data']['sizes'][0] == {'size_kb': 2048, 'total': 1024, 'free': 1024, 'nodes': [{'node': 0, 'total': 1024, 'free': 1024}]}"
jcheck "healthy: probe data" healthy "all(c('probe', 'mana_0/%d' % p)['data']['failed_step'] is None for p in (1, 2))"
jcheck "healthy: no fix anywhere but hugetlbfs" healthy "all(x['fix'] is None for x in j['checks'] if x['id'] != 'hugepages')"
# rdma-core's libmana serves the same device as well (driver id 20)
diag healthy_system 0 --ports=2 --provider=system -- --probe
expect "system binds" "$TMP/healthy_system.txt" "^OK +driver_id +mana_0: driver id 20 .*bound by rdma-core's libmana"
jcheck "system: provider" healthy_system "c('driver_id')['data']['provider'] == 'rdma-core' and not c('libibverbs')['data']['libmana_preloaded']"
jcheck "system: probe" healthy_system "c('probe', 'mana_0/2')['verdict'] == 'OK'"

# ---- two MANA providers: the soname finds ours, libibverbs' config Debian's ----
# (mana-diag resolves the name in a fresh link-map namespace, where a
# sanitizer-built libmana cannot load: ASan wants its runtime first)
if grep -qa __asan_init "$BUILD/lib/libmana.so.1"; then
	echo "SKIP: two-providers case needs a libmana built without sanitizers"
else
	export LD_LIBRARY_PATH="$BUILD/lib"
	diag conflict 0 --provider=system --
	unset LD_LIBRARY_PATH
	expect "conflict verdict" "$TMP/conflict.txt" '^WARN +libibverbs +.*two MANA providers: programs linked with libmana.so.1 \(DPDK\) load \S+/lib/libmana.so.1\S*, libibverbs alone loads '
	expect "conflict fix" "$TMP/conflict.txt" '^ +fix: install one libmana'
	jcheck "conflict: fields" conflict "(lambda d: d['libmana_so'] != d['mana_provider'] and d['mana_provider'] is not None and d['libmana_preloaded'] is False)(c('libibverbs')['data'])"
fi

# ---- driver id 19: Debian's erdma provider takes the device -------------------
diag id19 1 --driver-id=19 --provider=system -- --probe
expect "id19 verdict" "$TMP/id19.txt" "^FAIL +driver_id +mana_0: driver id mismatch: the kernel reports 19 .*binds mana_0 to the erdma provider"
expect "id19 fix" "$TMP/id19.txt" "^ +fix: install this project's libmana, which binds MANA by PCI identity whatever the driver id"
expect "id19 probe says who serves it" "$TMP/id19.txt" '^FAIL +probe +mana_0/1: .*served by the erdma provider'
jcheck "id19: fields" id19 "c('driver_id')['data'] | {'provider_path': None} == {'netlink': True, 'driver_id': 19, 'expected': 20, 'provider': 'erdma', 'provider_path': None}"
jcheck "id19: fix field" id19 "'PCI identity' in c('driver_id')['fix']"
# ours binds it anyway: a warning, not a failure
diag id19_ours 0 --driver-id=19 --
expect "id19 ours" "$TMP/id19_ours.txt" "^WARN +driver_id +mana_0: the kernel reports driver id 19 .*this project's libmana binds mana_0"
jcheck "id19 ours: fields" id19_ours "c('driver_id')['data']['provider'] == 'ours' and c('driver_id')['verdict'] == 'WARN'"

# ---- no RDMA netlink -----------------------------------------------------------
diag nonl 1 --no-netlink --provider=system -- --probe
expect "no netlink verdict" "$TMP/nonl.txt" '^FAIL +driver_id +mana_0: no RDMA netlink \(Protocol not supported\): libibverbs found mana_0 through sysfs \(driver id 0\) and no provider binds it'
expect "no netlink fix" "$TMP/nonl.txt" "^ +fix: install this project's libmana"
# without RDMA netlink the ports and netdevs still come from sysfs
expect "no netlink netdev from sysfs" "$TMP/nonl.txt" '^OK +netdev +mana_0/1: VF enP30832s1 '
expect "no netlink: nothing to probe" "$TMP/nonl.txt" '^SKIP +probe +mana_0: libibverbs does not list mana_0'
jcheck "no netlink: fields" nonl "c('driver_id')['data'] == {'netlink': False, 'driver_id': None, 'expected': 20, 'provider': None, 'provider_path': None}"
diag nonl_ours 0 --no-netlink --
expect "no netlink, ours" "$TMP/nonl_ours.txt" "^WARN +driver_id +mana_0: no RDMA netlink .*this project's libmana does"

# ---- the VF interface is up: raw QPs get ENODEV (EBUSY from 7.2) ---------------
diag vfup 1 --netdev-up -- --probe
expect "VF up verdict" "$TMP/vfup.txt" '^FAIL +netdev +mana_0/1: VF enP30832s1 \(00:0d:3a:00:00:01, master eth0\) is UP: the kernel holds the vport, raw QP creation \(DPDK\) fails \(ENODEV; EBUSY from Linux 7.2\)'
expect "VF up fix" "$TMP/vfup.txt" '^ +fix: sudo ip link set dev enP30832s1 down'
expect "VF up probe" "$TMP/vfup.txt" '^FAIL +probe +mana_0/1: ibv_create_qp \(raw send\) failed: No such device \(ENODEV\): the vport is held'
jcheck "VF up: fields" vfup "(lambda d: d['admin_up'] is True and d['operstate'] == 'up' and d['master'] == 'eth0' and d['master_up'] is True and d['port_state'] == 'ACTIVE')(c('netdev', 'mana_0/1')['data'])"
jcheck "VF up: fix field" vfup "c('netdev', 'mana_0/1')['fix'].startswith('sudo ip link set dev enP30832s1 down')"
jcheck "VF up: probe fields" vfup "c('probe', 'mana_0/1')['data']['errno'] == 19 and c('probe', 'mana_0/1')['data']['failed_step'] == 'ibv_create_qp (raw send)'"
# 7.2 (the split era: raw QPs on manae_0): EBUSY
diag vfup72 1 --netdev-up --kernel=7.2 -- --probe
expect "VF up 7.2 probe" "$TMP/vfup72.txt" '^FAIL +probe +manae_0/1: ibv_create_qp \(raw send\) failed: Device or resource busy \(EBUSY\): the vport is held'
jcheck "VF up 7.2: probe fields" vfup72 "c('probe', 'manae_0/1')['data']['errno'] == 16"

# ---- no huge pages ----------------------------------------------------------------
diag nohuge 1 --hugepages=0 --
expect "no hugepages verdict" "$TMP/nohuge.txt" '^FAIL +hugepages +2048kB: 0 \(0 free; node0 0\), 1048576kB: 0 .*no huge pages reserved for DPDK'
expect "no hugepages fix" "$TMP/nohuge.txt" '^ +fix: echo 1024 \| sudo tee /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages'
jcheck "no hugepages: fields" nohuge "all(s['total'] == 0 for s in c('hugepages')['data']['sizes']) and len(c('hugepages')['data']['sizes']) == 2"

# ---- no access to the uverbs node (as an unprivileged user) -------------------------
# nobody may not reach the build tree (a clone in root's 0700 home): the
# launcher, mana-diag and the libraries the launcher preloads (it finds them
# in ../lib next to itself) are copied into a 0755 directory of their own.
EMU_ROOT=$EMU DIAG_ROOT=$DIAG
if [ "$(id -u)" -eq 0 ]; then
	AS="setpriv --reuid=65534 --regid=65534 --clear-groups"
	PUB=$(mktemp -d /tmp/mana-diag-test.XXXXXX)
	trap 'rm -rf "$TMP" "$PUB"' EXIT
	mkdir "$PUB/bin" "$PUB/lib"
	cp "$EMU" "$DIAG" "$PUB/bin/" &&
		cp -P "$BUILD"/lib/libmana-emu.so "$BUILD"/lib/libmana.so* "$PUB/lib/" &&
		chmod -R a+rX "$PUB" || fail "copying the programs for nobody into $PUB"
	EMU=$PUB/bin/mana-emu DIAG=$PUB/bin/mana-diag
	$AS test -x "$DIAG" || fail "nobody cannot run $DIAG"
fi
diag noaccess 1 --uverbs-mode=0600 -- --probe
EMU=$EMU_ROOT DIAG=$DIAG_ROOT
expect "no access verdict" "$TMP/noaccess.txt" '^FAIL +rdma +mana_0: on 7870:00:00.0: uid \d+ cannot open /dev/infiniband/uverbs0 \(crw-------, uid 0 gid 0\): Permission denied'
expect "no access fix" "$TMP/noaccess.txt" '^ +fix: run as root, or give access: sudo chmod 0666 /dev/infiniband/uverbs0'
expect "no access probe" "$TMP/noaccess.txt" '^FAIL +probe +mana_0: ibv_open_device failed'
jcheck "no access: fields" noaccess "c('rdma', 'mana_0')['data']['access'] is False and c('rdma', 'mana_0')['data']['mode'] == '0600'"
# the same node is fine for root, as the kernel's permission check says
AS=
diag noaccess_root 0 --uverbs-mode=0600 --
expect "root may open a 0600 node" "$TMP/noaccess_root.txt" '^OK +rdma +mana_0: .*crw-------\) read/write'

# ---- no device at all (Accelerated Networking off) -----------------------------------
diag nodev 1 --no-device --
expect "no device verdict" "$TMP/nodev.txt" '^FAIL +pci +no MANA PCI function \(1414:00ba, 00b9, 00c1\) in .*: Accelerated Networking is off'
expect "no device fix" "$TMP/nodev.txt" '^ +fix: enable Accelerated Networking on the VM.s network interfaces'
expect "no device skips the rest" "$TMP/nodev.txt" '^SKIP +driver_id +no RDMA device'
jcheck "no device: fields" nodev "c('pci')['data']['functions'] == [] and c('kernel')['verdict'] == 'SKIP' and c('netdev')['verdict'] == 'SKIP'"

jcheck "no device: an Azure VM with Accelerated Networking off" nodev "(lambda d: d['cause'] == 'accelnet_off' and d['vmbus'] is True and d['azure_dmi'] is True and d['sys_vendor'] == 'Microsoft Corporation' and d['chassis_asset_tag'] == '7783-7084-3265-9085-8269-3286-77')(c('pci')['data'])"
jcheck "healthy: no cause" healthy "c('pci')['data']['cause'] is None and c('pci')['data']['azure_dmi'] is True"

# ---- not an Azure VM at all: no VMBus, no Azure DMI (a sysfs tree of our own) ----
# bare NAME [DMI VENDOR [ASSET TAG]] [--vmbus]: mana-diag on a tree with no PCI function
bare() {
	local name=$1 root=$TMP/$1.sys
	shift
	mkdir -p "$root/bus/pci/devices" "$root/module"
	if [ "${1:-}" = --vmbus ]; then
		mkdir -p "$root/bus/vmbus/devices"
		shift
	fi
	if [ $# -gt 0 ]; then
		mkdir -p "$root/class/dmi/id"
		echo "$1" >"$root/class/dmi/id/sys_vendor"
		[ $# -lt 2 ] || echo "$2" >"$root/class/dmi/id/chassis_asset_tag"
	fi
	SYSFS_PATH=$root "$DIAG" >"$TMP/$name.txt" 2>"$TMP/$name.err"
	[ $? -eq 1 ] && ok || fail "$name: want exit 1"
	SYSFS_PATH=$root "$DIAG" --json >"$TMP/$name.json" 2>>"$TMP/$name.err"
}
bare qemu QEMU "0"
expect "not Azure verdict" "$TMP/qemu.txt" "^FAIL +pci +not an Azure VM: no VMBus \\(\\S+/qemu.sys/bus/vmbus absent\\) and no Azure DMI \\(sys_vendor 'QEMU'\\), so no MANA PCI function: MANA exists only on Azure VMs\$"
expect "not Azure fix" "$TMP/qemu.txt" '^ +fix: run this on an Azure VM whose size offers Accelerated Networking'
expect_not "not Azure: not blamed on Accelerated Networking" "$TMP/qemu.txt" 'Accelerated Networking is off'
jcheck "not Azure: cause" qemu "(lambda d: d['cause'] == 'not_azure' and d['vmbus'] is False and d['azure_dmi'] is False and d['sys_vendor'] == 'QEMU')(c('pci')['data']) and c('pci')['verdict'] == 'FAIL'"
bare nodmi
expect "no DMI at all: not Azure" "$TMP/nodmi.txt" '^FAIL +pci +not an Azure VM: .*sys_vendor unreadable'
jcheck "no DMI: cause" nodmi "c('pci')['data']['cause'] == 'not_azure' and c('pci')['data']['sys_vendor'] is None"
# Microsoft's vendor without Azure's asset tag (Hyper-V elsewhere) and no VMBus: not Azure
bare hyperv "Microsoft Corporation" "0000-0000"
jcheck "Microsoft DMI without the Azure tag: not Azure" hyperv "c('pci')['data']['cause'] == 'not_azure'"
# the Azure DMI alone, or VMBus alone: an Azure VM, Accelerated Networking off
bare azdmi "Microsoft Corporation" "7783-7084-3265-9085-8269-3286-77"
expect "Azure DMI: Accelerated Networking" "$TMP/azdmi.txt" '^FAIL +pci +no MANA PCI function .*: Accelerated Networking is off'
jcheck "Azure DMI: cause" azdmi "c('pci')['data']['cause'] == 'accelnet_off' and c('pci')['data']['azure_dmi'] is True"
bare vmbus --vmbus
jcheck "VMBus alone: Accelerated Networking off" vmbus "c('pci')['data']['cause'] == 'accelnet_off' and c('pci')['data']['vmbus'] is True"

# ---- a missing module -------------------------------------------------------------------
diag nomod 1 --no-module=mana_ib --
expect "missing module verdict" "$TMP/nomod.txt" '^FAIL +kernel +Linux .*; not loaded: mana_ib$'
expect "missing module fix" "$TMP/nomod.txt" '^ +fix: sudo modprobe -a mana_ib'
jcheck "missing module: fields" nomod "c('kernel')['data']['mana_ib'] is False and c('rdma')['verdict'] == 'FAIL'"

# ---- --oracle: the kernel's and the device's answers, nothing of the machine ----------
# (the differential oracle's diag part, tests/guest/oracle.sh)
"$EMU" --kernel=6.14 --ports=2 -- $AS "$DIAG" --probe --oracle >"$TMP/oracle.txt" 2>"$TMP/oracle.err"
[ $? -eq 0 ] && ok || fail "--oracle healthy: want exit 0"
expect "oracle: every line a key = value" "$TMP/oracle.txt" '^diag\.[a-z_]+(\.[^ =]+)+ = '
expect_not "oracle: nothing else" "$TMP/oracle.txt" '^($|[^d]|d[^i]|.*[^ ] = $)'
[ "$(grep -c '\.verdict = ' "$TMP/oracle.txt")" -eq 8 ] && ok ||
	fail "oracle: 8 verdicts (of 10 checks, libibverbs and hugepages left out): $(grep '\.verdict' "$TMP/oracle.txt")"
expect "oracle: pci function" "$TMP/oracle.txt" '^diag\.pci\.functions\.0\.device = 00ba$'
expect "oracle: port 2's state" "$TMP/oracle.txt" '^diag\.netdev\.mana_0/2\.port_state = DOWN$'
expect "oracle: probe" "$TMP/oracle.txt" '^diag\.probe\.mana_0/1\.failed_step = null$'
expect "oracle: driver id" "$TMP/oracle.txt" '^diag\.driver_id\.mana_0\.driver_id = 20$'
expect_not "oracle: nothing of the machine" "$TMP/oracle.txt" '7870:00|enP30832|eth[01]|uverbs0 \(|/dev/|libibverbs|hugepages|release|Linux|bdf|master|ifindex|mode'
# a held vport: the probe's errno by name
"$EMU" --kernel=6.14 --netdev-up -- $AS "$DIAG" --probe --oracle >"$TMP/oracle_up.txt" 2>"$TMP/oracle_up.err"
[ $? -eq 1 ] && ok || fail "--oracle held vport: want exit 1"
expect "oracle: held vport errno" "$TMP/oracle_up.txt" '^diag\.probe\.mana_0/1\.errno = ENODEV$'
expect "oracle: held vport verdict" "$TMP/oracle_up.txt" '^diag\.netdev\.mana_0/1\.verdict = FAIL$'

# ---- could not run: exit 2 ------------------------------------------------------------------
"$DIAG" --bogus >/dev/null 2>"$TMP/bogus.err"
[ $? -eq 2 ] && ok || fail "bad option: want exit 2"
SYSFS_PATH=/nonexistent "$DIAG" >/dev/null 2>"$TMP/nosysfs.err"
[ $? -eq 2 ] && ok || fail "no sysfs: want exit 2"
expect "no sysfs says so" "$TMP/nosysfs.err" 'sysfs root /nonexistent'

jcheck_all
check_done
