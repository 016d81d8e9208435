#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The Debian packages in a fresh Debian 12 root (mmdebstrap, from the Debian
# archive, not this machine's /usr) that already has ibverbs-providers,
# ibverbs-utils and python3-pyverbs:
#   1. before: Debian's libmana serves the emulated device; record what a
#      driver-id-19 device gets;
#   2. install ours (twice: install, then the upgrade path): Debian's
#      ibv_devinfo and pyverbs under mana-emu --provider=system map our
#      libmana.so.1 (same bytes as in our .deb), a program that asks the
#      loader for libmana.so.1 gets ours, a driver-id-19 device is bound by
#      ours whatever order /etc/libibverbs.d is read in;
#   3. apt-get install --reinstall ibverbs-providers keeps ours;
#   4. remove and purge ours (mana-emu stays): every file of ibverbs-providers
#      and libibverbs-dev matches dpkg's md5sums again, the diversions are
#      gone, and the device behaves as in step 1.
# Needs root (chroot, mounts); skips otherwise.  Usage: test_package.sh DEBDIR
set -u
DEBDIR=$(realpath "${1:?directory with the .debs}")
SUITE=bookworm
MA=x86_64-linux-gnu
LIB=/usr/lib/$MA

if [ "$(id -u)" -ne 0 ]; then
	echo "test_package: SKIPPED: needs root (mmdebstrap, chroot and mounts)"
	exit 0
fi
for p in mmdebstrap unshare chroot; do
	command -v "$p" >/dev/null || { echo "test_package: $p missing" >&2; exit 1; }
done

. "$(dirname "$0")/check.sh"
ROOT=$TMP/root
# Mounts exist only inside the private namespaces of in_root, so removing
# the scratch directory never reaches the host's /dev or /proc.
trap 'rm -rf --one-file-system "$TMP"' EXIT

# in_root COMMAND...: run in the root with its own /proc and the host's /dev
in_root() {
	unshare --mount --pid --fork sh -c '
		root=$1; shift
		mount -t proc proc "$root/proc" &&
		mount --rbind /dev "$root/dev" &&
		exec chroot "$root" "$@"' sh "$ROOT" "$@"
}
# out NAME COMMAND...: in the root, stdout+stderr to $TMP/NAME
out() {
	local name=$1
	shift
	in_root "$@" >"$TMP/$name" 2>&1
}
# same_bytes DESCRIPTION PATH_IN_ROOT FILE: the root's file (after links) is FILE
same_bytes() {
	local real
	real=$(in_root readlink -f "$2")
	if cmp -s "$ROOT$real" "$3"; then ok; else fail "$1: $2 -> $real is not $3"; fi
}

t0=$SECONDS
if [ -n "${MANA_PKGTEST_BASE:-}" ]; then
	# a pristine root made earlier with the mmdebstrap line below (development)
	echo "test_package: copying the root from $MANA_PKGTEST_BASE"
	cp -a "$MANA_PKGTEST_BASE" "$ROOT"
else
echo "test_package: building a $SUITE root with mmdebstrap"
# apt's lists and the downloaded .debs stay: the reinstall below takes
# ibverbs-providers from the cache and needs no download.
if ! mmdebstrap --variant=apt --quiet \
	--skip=cleanup/apt/lists --skip=cleanup/apt/cache \
	--include=ibverbs-providers,ibverbs-utils,python3-pyverbs,libibverbs-dev,pkg-config \
	"$SUITE" "$ROOT" >"$TMP/mmdebstrap.log" 2>&1; then
	cat "$TMP/mmdebstrap.log" >&2
	echo "test_package: mmdebstrap failed" >&2
	exit 1
fi
fi
echo "test_package: root ready in $((SECONDS - t0)) s"

mkdir "$ROOT/debs"
cp "$DEBDIR"/libmana-azure1_*.deb "$DEBDIR"/libmana-azure-dev_*.deb \
	"$DEBDIR"/mana-emu_*.deb "$DEBDIR"/mana-diag_*.deb "$ROOT/debs/"
# Our library as the package ships it, to compare mapped files against.
mkdir "$TMP/ours"
dpkg-deb -x "$DEBDIR"/libmana-azure1_*.deb "$TMP/ours"
OURS=$(readlink -f "$TMP/ours$LIB/libmana.so.1")
DISTRIB=$(in_root sh -c "dpkg -L ibverbs-providers | grep -E '/libmana\.so\.1\.[0-9.]+\$'")

cat >"$ROOT/maps.py" <<'EOF'
# Open the first device with pyverbs and print which libmana files this
# process maps (the emulator's own library excluded).
import ctypes
import sys
from pyverbs.device import Context, get_device_list
if sys.argv[1:] == ['dlopen']:
    ctypes.CDLL('libmana.so.1')
else:
    Context(name=get_device_list()[0].name.decode())
seen = set()
for line in open('/proc/self/maps'):
    path = line.split()[-1]
    if '/libmana' in path and 'mana-emu' not in path and path not in seen:
        seen.add(path)
        print(path)
EOF

# provider_checks TAG: what Debian's tools see, with our packages installed
provider_checks() {
	local tag=$1 f
	out "$tag.devinfo" mana-emu --provider=system -- ibv_devinfo -v
	expect "$tag: ibv_devinfo sees the device" "$TMP/$tag.devinfo" '^hca_id:\tmana_0$'
	expect "$tag: ibv_devinfo gets our provider (fw_ver)" "$TMP/$tag.devinfo" '^\tfw_ver:\t+\d+\.\d+\.\d+$'
	out "$tag.ld" env LD_DEBUG=files mana-emu --provider=system -- ibv_devinfo -l
	expect "$tag: libibverbs dlopens libmana-rdmav34.so" "$TMP/$tag.ld" "calling init: $LIB/libibverbs/libmana-rdmav34.so"
	same_bytes "$tag: provider link" "$LIB/libibverbs/libmana-rdmav34.so" "$OURS"
	out "$tag.pyverbs" mana-emu --provider=system -- python3 /maps.py
	check "$tag: pyverbs maps one libmana" test "$(grep -c . "$TMP/$tag.pyverbs")" -eq 1
	f=$(head -1 "$TMP/$tag.pyverbs")
	if [ -n "$f" ] && cmp -s "$ROOT$f" "$OURS"; then ok; else
		fail "$tag: pyverbs mapped '$f', not ours"; cat "$TMP/$tag.pyverbs" >&2; fi
	out "$tag.dlopen" python3 /maps.py dlopen
	f=$(head -1 "$TMP/$tag.dlopen")
	if [ -n "$f" ] && cmp -s "$ROOT$f" "$OURS"; then ok; else
		fail "$tag: the loader gave '$f' for libmana.so.1, not ours"; cat "$TMP/$tag.dlopen" >&2; fi
	# our match_device says so exactly when it takes a driver-id-19 device
	out "$tag.id19" mana-emu --provider=system --driver-id=19 -- ibv_devinfo -v
	expect "$tag: driver id 19 is bound" "$TMP/$tag.id19" '^hca_id:\tmana_0$'
	expect "$tag: driver id 19 is bound by ours" "$TMP/$tag.id19" 'libmana: Warning: .*driver id is 19'
}

# id19_any_order: the driver-id-19 device goes to ours whichever file of
# /etc/libibverbs.d is read first.  On tmpfs readdir() lists the newest
# entry first, so the directory is rebuilt there in both orders.
id19_any_order() {
	local order
	for order in mana-first mana-last; do
		unshare --mount --pid --fork sh -c '
			set -e
			root=$1; order=$2
			mount -t proc proc "$root/proc"
			mount --rbind /dev "$root/dev"
			rm -rf "$root/tmp/conf"
			cp -a "$root/etc/libibverbs.d" "$root/tmp/conf"
			mount -t tmpfs tmpfs "$root/etc/libibverbs.d"
			exec chroot "$root" sh -c "$3" sh "$order"' sh "$ROOT" "$order" '
			set -e
			cd /tmp/conf
			others=$(ls | grep -v "^mana.driver$")
			if [ "$1" = mana-last ]; then
				cp -a $others /etc/libibverbs.d/; cp -a mana.driver /etc/libibverbs.d/
			else
				cp -a mana.driver /etc/libibverbs.d/; cp -a $others /etc/libibverbs.d/
			fi
			ls -f /etc/libibverbs.d | grep driver
			mana-emu --provider=system --driver-id=19 -- ibv_devinfo -v' \
			>"$TMP/order.$order" 2>&1
		# readdir order as listed: mana.driver first in "mana-last"
		local first
		first=$(grep -m1 driver "$TMP/order.$order")
		if [ "$order" = mana-last ]; then
			check "readdir lists mana.driver first ($order)" test "$first" = mana.driver
		else
			check "readdir lists mana.driver last ($order)" test "$first" != mana.driver
		fi
		expect "driver id 19, $order: ours binds" "$TMP/order.$order" 'libmana: Warning: .*driver id is 19'
	done
}

# md5sums_ok PACKAGE: every file of PACKAGE is as dpkg installed it, at
# the path dpkg keeps it under (the diverted one while ours are installed)
md5sums_ok() {
	in_root sh -c '
		sums=$(dpkg-query --control-path "$1" md5sums) && [ -s "$sums" ] || exit 1
		while read -r sum path; do
			printf "%s  %s\n" "$sum" "$(dpkg-divert --truename "/$path")"
		done <"$sums" >/tmp/sums.check
		md5sum -c --quiet /tmp/sums.check' sh "$1" >"$TMP/md5.$1" 2>&1
}
# conffiles_ok PACKAGE: every conffile matches the hash dpkg recorded
conffiles_ok() {
	in_root sh -c '
		dpkg-query -W -f="\${Conffiles}\n" "$1" | while read -r path sum rest; do
			[ -n "$path" ] || continue
			printf "%s  %s\n" "$sum" "$(dpkg-divert --truename "$path")"
		done >/tmp/conf.check
		[ -s /tmp/conf.check ] && md5sum -c --quiet /tmp/conf.check' sh "$1" >"$TMP/conf.$1" 2>&1 ||
		{ cat "$TMP/conf.$1" >&2; return 1; }
}

# ---- 1. Debian's libmana, before -------------------------------------------
echo "test_package: 1. Debian's libmana"
# mana-emu alone (the CI case) next to Debian's libmana
out emu.install dpkg -i /debs/mana-emu_0.1.0_amd64.deb ||
	{ fail "mana-emu installs alone"; cat "$TMP/emu.install" >&2; }
out emu.ours mana-emu -- ibv_devinfo -l
expect "mana-emu alone: --provider=ours says ours is not installed" "$TMP/emu.ours" \
	"mana-emu: warning: $LIB/mana-emu/libmana\.so\.1 not found"
out before.devinfo mana-emu --provider=system -- ibv_devinfo -v
expect "before: Debian's libmana serves the device" "$TMP/before.devinfo" '^hca_id:\tmana_0$'
expect_not "before: Debian's libmana has no fw_ver" "$TMP/before.devinfo" 'fw_ver'
out before.pyverbs mana-emu --provider=system -- python3 /maps.py
expect "before: pyverbs maps Debian's libmana" "$TMP/before.pyverbs" "^$DISTRIB\$"
# Debian: erdma (the only provider naming driver id 19) takes the device
out before.id19 mana-emu --provider=system --driver-id=19 -- ibv_devinfo -v
expect "before: driver id 19 is bound" "$TMP/before.id19" '^hca_id:\tmana_0$'
expect_not "before: driver id 19 is not ours" "$TMP/before.id19" 'libmana: Warning'
check "distribution files intact before" md5sums_ok ibverbs-providers
check "libibverbs-dev files intact before" md5sums_ok libibverbs-dev

# ---- 2. install ours (install, then again: the upgrade path) ---------------
echo "test_package: 2. install ours"
out install.log apt-get install -y -qq /debs/libmana-azure1_0.1.0_amd64.deb \
	/debs/libmana-azure-dev_0.1.0_amd64.deb ||
	{ fail "install our packages"; cat "$TMP/install.log" >&2; }
out reinstall.log dpkg -i /debs/libmana-azure1_0.1.0_amd64.deb /debs/libmana-azure-dev_0.1.0_amd64.deb ||
	{ fail "reinstall our packages"; cat "$TMP/reinstall.log" >&2; }
out diversions dpkg-divert --list
check "12 diversions" test "$(grep -c 'by libmana-azure' "$TMP/diversions")" -eq 12
out ldconfig ldconfig -p
expect "ld.so.cache: libmana.so.1 in the libdir" "$TMP/ldconfig" "libmana\.so\.1 .* => (/usr)?/lib/$MA/libmana\.so\.1\$"
same_bytes "libmana.so.1 is ours" "$LIB/libmana.so.1" "$OURS"
provider_checks installed
out installed.ours mana-emu -- python3 /maps.py
check "installed: --provider=ours preloads our libmana" cmp -s "$ROOT$(head -1 "$TMP/installed.ours")" "$OURS"
id19_any_order
# mana-diag, installed on its own, names the provider libibverbs binds
out diag.install apt-get install -y -qq /debs/mana-diag_0.1.0_amd64.deb ||
	{ fail "install mana-diag"; cat "$TMP/diag.install" >&2; }
diag_provider() {
	in_root mana-emu --provider=system "$@" -- mana-diag --json |
		python3 -c 'import json, sys
j = json.load(sys.stdin)
c = [x for x in j["checks"] if x["id"] == "driver_id"][0]
print(c["verdict"], c["data"]["provider"], j["exit_status"])'
}
check "mana-diag: driver id 20 bound by ours, no failure" \
	test "$(diag_provider)" = "OK ours 0"
check "mana-diag: driver id 19 bound by ours (warned)" \
	test "$(diag_provider --driver-id=19)" = "WARN ours 0"
# -dev: a pkg-config consumer gets our header
out pc pkg-config --cflags --libs libmana
expect "pkg-config finds libmana" "$TMP/pc" '-lmana'
mkdir -p "$TMP/dev"
dpkg-deb -x "$DEBDIR"/libmana-azure-dev_*.deb "$TMP/dev"
check "manadv.h is ours" cmp -s "$ROOT/usr/include/infiniband/manadv.h" "$TMP/dev/usr/include/infiniband/manadv.h"
check "Debian's libmana kept aside intact" md5sums_ok ibverbs-providers

# ---- 3. reinstalling ibverbs-providers keeps ours ---------------------------
echo "test_package: 3. apt-get install --reinstall ibverbs-providers"
out reinst.log apt-get install -y -qq --reinstall ibverbs-providers libibverbs-dev ||
	{ fail "reinstall ibverbs-providers"; cat "$TMP/reinst.log" >&2; }
same_bytes "after reinstall: libmana.so.1 is ours" "$LIB/libmana.so.1" "$OURS"
provider_checks reinstalled
check "after reinstall: Debian's libmana kept aside intact" md5sums_ok ibverbs-providers
check "after reinstall: Debian's conffiles intact" conffiles_ok ibverbs-providers

# ---- 4. remove and purge ours: Debian's files and behaviour come back -------
echo "test_package: 4. remove and purge ours"
out remove.log apt-get remove -y -qq libmana-azure-dev libmana-azure1 ||
	{ fail "remove our packages"; cat "$TMP/remove.log" >&2; }
for p in ibverbs-providers libibverbs-dev; do
	if md5sums_ok $p; then ok; else fail "after remove: $p files differ"; cat "$TMP/md5.$p" >&2; fi
done
check "after remove: Debian's conffiles intact" conffiles_ok ibverbs-providers
out purge.log apt-get purge -y -qq libmana-azure-dev libmana-azure1 ||
	{ fail "purge our packages"; cat "$TMP/purge.log" >&2; }
out diversions.after dpkg-divert --list
expect_not "no diversion left" "$TMP/diversions.after" 'libmana-azure'
check "store directories gone" test ! -e "$ROOT$LIB/libmana-azure1" -a ! -e "$ROOT/etc/libmana-azure1" \
	-a ! -e "$ROOT/usr/share/libmana-azure-dev"
check "libmana.so.1 -> Debian's" test "$(readlink "$ROOT$LIB/libmana.so.1")" = "${DISTRIB##*/}"
for p in ibverbs-providers libibverbs-dev; do
	if md5sums_ok $p; then ok; else fail "after purge: $p files differ"; cat "$TMP/md5.$p" >&2; fi
done
check "after purge: Debian's conffiles intact" conffiles_ok ibverbs-providers
out after.devinfo mana-emu --provider=system -- ibv_devinfo -v
expect "after: Debian's libmana serves the device" "$TMP/after.devinfo" '^hca_id:\tmana_0$'
expect_not "after: Debian's libmana has no fw_ver" "$TMP/after.devinfo" 'fw_ver'
out after.pyverbs mana-emu --provider=system -- python3 /maps.py
expect "after: pyverbs maps Debian's libmana" "$TMP/after.pyverbs" "^$DISTRIB\$"
check "after: mana-diag names rdma-core's libmana" \
	test "$(diag_provider)" = "OK rdma-core 0"
out after.id19 mana-emu --provider=system --driver-id=19 -- ibv_devinfo -v
check "after: driver id 19 behaves as before" cmp -s "$TMP/before.id19" "$TMP/after.id19"

echo "test_package: done in $((SECONDS - t0)) s"
check_done
