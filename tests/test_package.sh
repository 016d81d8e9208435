#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The Debian packages (built on this machine, Debian 12) in fresh Debian 12
# and Debian 13 roots (mmdebstrap, from the Debian archive, not this
# machine's /usr) that already have ibverbs-providers (44.0 and 56.1: both
# private provider ABI 34), ibverbs-utils and python3-pyverbs.
#
# bookworm:
#   1. before: Debian's libmana serves the emulated device; record what a
#      driver-id-19 device gets and every file and link of the rdma-core
#      packages;
#   2. install the previous libmana-azure1 (PREVDIR), upgrade to ours, then
#      reinstall ours: Debian's ibv_devinfo and pyverbs under
#      mana-emu --provider=system map our libmana.so.1 (same bytes as in our
#      .deb), a program that asks the loader for libmana.so.1 gets ours, a
#      driver-id-19 device is bound by ours whatever order /etc/libibverbs.d
#      is read in;
#   3. apt-get install --reinstall ibverbs-providers keeps ours;
#   4. remove and purge ours (mana-emu stays): every file and link is as in
#      step 1, the diversions are gone, the device behaves as in step 1;
#   5. ours again, then ibverbs-providers upgraded within ABI 34 (Debian's
#      44.0-2 repacked as 44.1, whose real file is libmana.so.1.0.44.1):
#      ours stays; one of ABI 57 (its providers -rdmav57.so) is refused:
#      dpkg says libmana-azure1 breaks it, our trigger says why; purge: the
#      files and links of the 44.1 packages are back.
# trixie (the same bookworm-built packages):
#   1. before, as above; 2. install ours over 56.1: trixie's ibv_devinfo and
#   pyverbs map ours; 4. remove and purge: every file and link as before.
#
# Needs root (mmdebstrap, chroot, mounts); skips otherwise.  The roots are
# made in parallel; the .debs apt downloads for them are kept in
# $MANA_PKGTEST_CACHE (default /var/cache/libmana-pkgtest) and reused with
# this machine's own apt cache, so a second run downloads only the indexes.
# MANA_PKGTEST_BASE=DIR takes DIR/bookworm and DIR/trixie (roots made with
# the mmdebstrap line below) instead (development).
# Usage: test_package.sh DEBDIR PREVDIR
set -u
DEBDIR=$(realpath "${1:?directory with the .debs}")
PREVDIR=$(realpath "${2:?directory with the .debs of the previous version}")
SUITES="bookworm trixie"
MA=x86_64-linux-gnu
LIB=/usr/lib/$MA
CACHE=${MANA_PKGTEST_CACHE:-/var/cache/libmana-pkgtest}

if [ "$(id -u)" -ne 0 ]; then
	echo "test_package: SKIPPED: needs root (mmdebstrap, chroot and mounts)"
	exit 0
fi
for p in mmdebstrap unshare chroot; do
	command -v "$p" >/dev/null || { echo "test_package: $p missing" >&2; exit 1; }
done

. "$(dirname "$0")/check.sh"
# Mounts exist only inside the private namespaces of in_root, so removing
# the scratch directory never reaches the host's /dev or /proc.
trap 'rm -rf --one-file-system "$TMP"' EXIT

deb_of() { # deb_of DIR PACKAGE: the one .deb of PACKAGE in DIR
	local f
	f=$(ls "$1/$2"_*_amd64.deb 2>/dev/null)
	[ "$(printf '%s\n' "$f" | grep -c .)" -eq 1 ] ||
		{ echo "test_package: want one $2 .deb in $1, have: $f" >&2; exit 1; }
	echo "$f"
}
NEW_LIB=$(deb_of "$DEBDIR" libmana-azure1)
NEW_DEV=$(deb_of "$DEBDIR" libmana-azure-dev)
NEW_EMU=$(deb_of "$DEBDIR" mana-emu)
NEW_DIAG=$(deb_of "$DEBDIR" mana-diag)
PREV_LIB=$(deb_of "$PREVDIR" libmana-azure1)
PREV_DEV=$(deb_of "$PREVDIR" libmana-azure-dev)
NEW_VER=$(dpkg-deb -f "$NEW_LIB" Version)
PREV_VER=$(dpkg-deb -f "$PREV_LIB" Version)
dpkg --compare-versions "$PREV_VER" lt "$NEW_VER" ||
	{ echo "test_package: previous version $PREV_VER is not older than $NEW_VER" >&2; exit 1; }

# Our library as the package ships it, to compare mapped files against.
mkdir "$TMP/ours"
dpkg-deb -x "$NEW_LIB" "$TMP/ours"
OURS=$(readlink -f "$TMP/ours$LIB/libmana.so.1")

# ---- the roots ----------------------------------------------------------------
t0=$SECONDS
# make_root SUITE: $TMP/SUITE/root, in the background; log in $TMP/SUITE/mmdebstrap.log
make_root() {
	local suite=$1 root=$TMP/$1/root
	if [ -n "${MANA_PKGTEST_BASE:-}" ]; then
		cp -a "$MANA_PKGTEST_BASE/$suite/." "$root"
		return
	fi
	mkdir -p "$CACHE"
	# The cached .debs go in as hard links (cheap; where the file system
	# does not allow it, the root downloads them): what apt cannot use it
	# ignores.  What the root downloaded (one link) goes to $CACHE.  apt's
	# lists and the .debs stay in the root: the reinstall and the repacks
	# below take them from there.
	mmdebstrap --variant=apt --quiet \
		--skip=essential/unlink --skip=cleanup/apt/lists --skip=cleanup/apt/cache \
		--setup-hook='mkdir -p "$1/var/cache/apt/archives"' \
		--setup-hook="for d in /var/cache/apt/archives '$CACHE'; do
			find \"\$d\" -maxdepth 1 -name '*.deb' -exec cp -ln -t \"\$1/var/cache/apt/archives\" {} + 2>/dev/null
			done; true" \
		--customize-hook="find \"\$1/var/cache/apt/archives\" -maxdepth 1 -name '*.deb' -links 1 \\
			-exec cp -ln -t '$CACHE' {} + 2>/dev/null; true" \
		--include=ibverbs-providers,ibverbs-utils,python3-pyverbs,libibverbs-dev,pkg-config \
		"$suite" "$root" >"$TMP/$suite/mmdebstrap.log" 2>&1
}
pids=
for s in $SUITES; do
	mkdir -p "$TMP/$s"
	echo "test_package: building a $s root"
	make_root "$s" &
	pids="$pids $!"
done
for p in $pids; do
	wait "$p" || rootfail=1
done
for s in $SUITES; do
	if [ ! -x "$TMP/$s/root/usr/bin/ibv_devinfo" ]; then
		cat "$TMP/$s/mmdebstrap.log" >&2
		echo "test_package: making the $s root failed" >&2
		exit 1
	fi
done
echo "test_package: roots ready in $((SECONDS - t0)) s"

# in_root COMMAND...: run in the root with its own /proc and the host's /dev
in_root() {
	unshare --mount --pid --fork sh -c '
		root=$1; shift
		mount -t proc proc "$root/proc" &&
		mount --rbind /dev "$root/dev" &&
		exec chroot "$root" "$@"' sh "$ROOT" "$@"
}
# out NAME COMMAND...: in the root, stdout+stderr to $T/NAME
out() {
	local name=$1
	shift
	in_root "$@" >"$T/$name" 2>&1
}
# same_bytes DESCRIPTION PATH_IN_ROOT FILE: the root's file (after links) is FILE
same_bytes() {
	local real
	real=$(in_root readlink -f "$2")
	if cmp -s "$ROOT$real" "$3"; then ok; else fail "$S: $1: $2 -> $real is not $3"; fi
}
# installs NAME COMMAND...: the command succeeds in the root
installs() {
	local name=$1
	shift
	out "$name" "$@" || { fail "$S: $name: $*"; cat "$T/$name" >&2; }
}

# maps.py: open the first device with pyverbs (or dlopen libmana.so.1) and
# print which libmana files this process maps (the emulator's own excluded).
write_maps_py() {
	cat >"$ROOT/maps.py" <<'EOF'
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
}

# provider_checks TAG: what Debian's tools see, with our packages installed
provider_checks() {
	local tag=$1 f
	out "$tag.devinfo" mana-emu --provider=system -- ibv_devinfo -v
	expect "$S: $tag: ibv_devinfo sees the device" "$T/$tag.devinfo" '^hca_id:\tmana_0$'
	expect "$S: $tag: ibv_devinfo gets our provider (fw_ver)" "$T/$tag.devinfo" '^\tfw_ver:\t+\d+\.\d+\.\d+$'
	out "$tag.ld" env LD_DEBUG=files mana-emu --provider=system -- ibv_devinfo -l
	expect "$S: $tag: libibverbs dlopens libmana-rdmav34.so" "$T/$tag.ld" "calling init: $LIB/libibverbs/libmana-rdmav34.so"
	same_bytes "$tag: provider link" "$LIB/libibverbs/libmana-rdmav34.so" "$OURS"
	same_bytes "$tag: libmana.so.1 is ours" "$LIB/libmana.so.1" "$OURS"
	out "$tag.pyverbs" mana-emu --provider=system -- python3 /maps.py
	check "$S: $tag: pyverbs maps one libmana" test "$(grep -c . "$T/$tag.pyverbs")" -eq 1
	f=$(head -1 "$T/$tag.pyverbs")
	if [ -n "$f" ] && cmp -s "$ROOT$f" "$OURS"; then ok; else
		fail "$S: $tag: pyverbs mapped '$f', not ours"; cat "$T/$tag.pyverbs" >&2; fi
	out "$tag.dlopen" python3 /maps.py dlopen
	f=$(head -1 "$T/$tag.dlopen")
	if [ -n "$f" ] && cmp -s "$ROOT$f" "$OURS"; then ok; else
		fail "$S: $tag: the loader gave '$f' for libmana.so.1, not ours"; cat "$T/$tag.dlopen" >&2; fi
	out "$tag.ldconfig" ldconfig -p
	expect "$S: $tag: ld.so.cache: libmana.so.1 in the libdir" "$T/$tag.ldconfig" \
		"libmana\.so\.1 .* => (/usr)?/lib/$MA/libmana\.so\.1\$"
	# our match_device says so exactly when it takes a driver-id-19 device
	out "$tag.id19" mana-emu --provider=system --driver-id=19 -- ibv_devinfo -v
	expect "$S: $tag: driver id 19 is bound" "$T/$tag.id19" '^hca_id:\tmana_0$'
	expect "$S: $tag: driver id 19 is bound by ours" "$T/$tag.id19" 'libmana: .*driver id (is )?19'
}

# id19_any_order: the driver-id-19 device goes to ours whichever file of
# /etc/libibverbs.d is read first.  On tmpfs readdir() lists the newest
# entry first, so the directory is rebuilt there in both orders.
id19_any_order() {
	local order first
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
			>"$T/order.$order" 2>&1
		# readdir order as listed: mana.driver first in "mana-last"
		first=$(grep -m1 driver "$T/order.$order")
		if [ "$order" = mana-last ]; then
			check "$S: readdir lists mana.driver first ($order)" test "$first" = mana.driver
		else
			check "$S: readdir lists mana.driver last ($order)" test "$first" != mana.driver
		fi
		expect "$S: driver id 19, $order: ours binds" "$T/order.$order" 'libmana: .*driver id (is )?19'
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
		md5sum -c --quiet /tmp/sums.check' sh "$1" >"$T/md5.$1" 2>&1 ||
		{ cat "$T/md5.$1" >&2; return 1; }
}
# conffiles_ok PACKAGE: every conffile matches the hash dpkg recorded
conffiles_ok() {
	in_root sh -c '
		dpkg-query -W -f="\${Conffiles}\n" "$1" | while read -r path sum rest; do
			[ -n "$path" ] || continue
			printf "%s  %s\n" "$sum" "$(dpkg-divert --truename "$path")"
		done >/tmp/conf.check
		[ -s /tmp/conf.check ] && md5sum -c --quiet /tmp/conf.check' sh "$1" >"$T/conf.$1" 2>&1 ||
		{ cat "$T/conf.$1" >&2; return 1; }
}
# snapshot NAME: every path of the rdma-core packages, of libmana* in the
# libdir and of /etc/libibverbs.d: its type, link target or md5 (md5sums
# and conffile hashes skip links; this does not)
snapshot() {
	in_root sh -c '
		{ dpkg -L ibverbs-providers libibverbs-dev libibverbs1
		  ls -d /usr/lib/'$MA'/libmana* /usr/lib/'$MA'/libibverbs/* /etc/libibverbs.d/*
		} | sort -u | while read -r p; do
			if [ -L "$p" ]; then echo "L $p -> $(readlink "$p")"
			elif [ -f "$p" ]; then echo "F $p $(md5sum <"$p" | cut -c1-32)"
			elif [ -d "$p" ]; then echo "D $p"
			else echo "- $p"; fi
		done' >"$T/snap.$1" 2>&1
}
# same_snapshot DESCRIPTION A B
same_snapshot() {
	if diff -u "$T/snap.$2" "$T/snap.$3" >"$T/snap.diff"; then ok; else
		fail "$S: $1"; cat "$T/snap.diff" >&2; fi
}
# links_ok DEB: every symlink in DEB (there must be some) is in the root
# with its target
links_ok() {
	local list bad
	list=$(dpkg-deb -c "$1" | awk '$1 ~ /^l/ { print $6, $8 }')
	[ -n "$list" ] || { echo "no links listed in $1" >&2; return 1; }
	bad=$(printf '%s\n' "$list" | while read -r p target; do
		[ "$(readlink "$ROOT${p#.}")" = "$target" ] || echo "${p#.} -> $(readlink "$ROOT${p#.}") (want $target)"
	done)
	[ -z "$bad" ] || { echo "$bad" >&2; return 1; }
}
# cached_deb PACKAGE: the .deb of the installed version in the root's apt cache
cached_deb() {
	local v
	v=$(in_root dpkg-query -W -f='${Version}' "$1")
	echo "$ROOT/var/cache/apt/archives/${1}_${v/:/%3a}_amd64.deb"
}
diversions_of_ours() {
	in_root dpkg-divert --list | grep -c 'by libmana-azure'
}
diag_provider() {
	in_root mana-emu --provider=system "$@" -- mana-diag --json 2>>"$T/diag.err" |
		python3 -c 'import json, sys
j = json.load(sys.stdin)
c = [x for x in j["checks"] if x["id"] == "driver_id"][0]
print(c["verdict"], c["data"]["provider"], j["exit_status"])'
}
debian_lib() { # the real libmana file of the installed ibverbs-providers
	in_root sh -c "dpkg -L ibverbs-providers | grep -E '/libmana\.so\.1\.[0-9.]+\$'"
}

# before: Debian's libmana serves the device; the files and links are recorded
before() {
	echo "test_package: $S: 1. Debian's libmana"
	mkdir "$ROOT/debs"
	cp "$NEW_LIB" "$NEW_DEV" "$NEW_EMU" "$NEW_DIAG" "$ROOT/debs/"
	cp "$PREV_LIB" "$ROOT/debs/prev-libmana-azure1.deb"
	cp "$PREV_DEV" "$ROOT/debs/prev-libmana-azure-dev.deb"
	write_maps_py
	DISTRIB=$(debian_lib)
	# mana-emu alone (the CI case) next to Debian's libmana
	installs emu.install dpkg -i "/debs/${NEW_EMU##*/}"
	out emu.ours mana-emu -- ibv_devinfo -l
	expect "$S: mana-emu alone: --provider=ours says ours is not installed" "$T/emu.ours" \
		"mana-emu: warning: $LIB/mana-emu/libmana\.so\.1 not found"
	out before.devinfo mana-emu --provider=system -- ibv_devinfo -v
	expect "$S: before: Debian's libmana serves the device" "$T/before.devinfo" '^hca_id:\tmana_0$'
	expect_not "$S: before: Debian's libmana has no fw_ver" "$T/before.devinfo" 'fw_ver'
	out before.pyverbs mana-emu --provider=system -- python3 /maps.py
	expect "$S: before: pyverbs maps Debian's libmana" "$T/before.pyverbs" "^$DISTRIB\$"
	# Debian: erdma (the only provider naming driver id 19) takes the device
	out before.id19 mana-emu --provider=system --driver-id=19 -- ibv_devinfo -v
	expect "$S: before: driver id 19 is bound" "$T/before.id19" '^hca_id:\tmana_0$'
	expect_not "$S: before: driver id 19 is not ours" "$T/before.id19" 'libmana:'
	check "$S: distribution files intact before" md5sums_ok ibverbs-providers
	check "$S: libibverbs-dev files intact before" md5sums_ok libibverbs-dev
	snapshot before
	installs diag.install dpkg -i "/debs/${NEW_DIAG##*/}"
}

# installed TAG: ours in place, as every step after an install checks it
installed() {
	local tag=$1
	check "$S: $tag: 11 diversions" test "$(diversions_of_ours)" -eq 11
	provider_checks "$tag"
	check "$S: $tag: Debian's libmana kept intact" md5sums_ok ibverbs-providers
	check "$S: $tag: libibverbs-dev kept intact" md5sums_ok libibverbs-dev
	check "$S: $tag: Debian's conffiles intact" conffiles_ok ibverbs-providers
}

# purged TAG: remove, then purge ours; Debian's files come back
purged() {
	local tag=$1 p
	installs "$tag.remove" apt-get remove -y -qq libmana-azure-dev libmana-azure1
	for p in ibverbs-providers libibverbs-dev; do
		check "$S: $tag: after remove: $p files intact" md5sums_ok $p
	done
	installs "$tag.purge" apt-get purge -y -qq libmana-azure-dev libmana-azure1
	check "$S: $tag: no diversion left" test "$(diversions_of_ours)" -eq 0
	check "$S: $tag: store directories gone" test ! -e "$ROOT$LIB/libmana-azure1" \
		-a ! -e "$ROOT/etc/libmana-azure1" -a ! -e "$ROOT/usr/share/libmana-azure-dev"
	for p in ibverbs-providers libibverbs-dev; do
		check "$S: $tag: after purge: $p files intact" md5sums_ok $p
	done
	check "$S: $tag: after purge: Debian's conffiles intact" conffiles_ok ibverbs-providers
	check "$S: $tag: libmana.so.1 -> Debian's" test "$(readlink "$ROOT$LIB/libmana.so.1")" = "$(basename "$(debian_lib)")"
	out "$tag.devinfo" mana-emu --provider=system -- ibv_devinfo -v
	expect "$S: $tag: Debian's libmana serves the device" "$T/$tag.devinfo" '^hca_id:\tmana_0$'
	expect_not "$S: $tag: Debian's libmana has no fw_ver" "$T/$tag.devinfo" 'fw_ver'
	out "$tag.pyverbs" mana-emu --provider=system -- python3 /maps.py
	expect "$S: $tag: pyverbs maps Debian's libmana" "$T/$tag.pyverbs" "^$(debian_lib)\$"
	check "$S: $tag: mana-diag names rdma-core's libmana" \
		test "$(diag_provider)" = "OK rdma-core 0"
	out "$tag.id19" mana-emu --provider=system --driver-id=19 -- ibv_devinfo -v
	check "$S: $tag: driver id 19 behaves as before" cmp -s "$T/before.id19" "$T/$tag.id19"
}

# repack DEB VERSION [RENAME [ABI]]: DEB as VERSION (its exact dependency
# on ibverbs-providers 44.0-2 too), libmana.so.1.0.44.0 renamed to RENAME,
# the providers' -rdmav34.so to -rdmavABI.so; into $ROOT/debs
repack() {
	local deb=$1 ver=$2 rename=${3:-} abi=${4:-} d=$T/repack name f
	rm -rf "$d"
	dpkg-deb -R "$deb" "$d"
	sed -i -e "s/^Version: .*/Version: $ver/" \
		-e "s/ibverbs-providers (= 44\.0-2)/ibverbs-providers (= $ver)/" "$d/DEBIAN/control"
	if [ -n "$rename" ]; then
		mv "$d$LIB/libmana.so.1.0.44.0" "$d$LIB/$rename"
		ln -sfn "$rename" "$d$LIB/libmana.so.1"
		ln -sfn "../$rename" "$d$LIB/libibverbs/libmana-rdmav34.so"
		sed -i "s|libmana\.so\.1\.0\.44\.0|$rename|" "$d/DEBIAN/md5sums"
	fi
	if [ -n "$abi" ]; then
		for f in "$d$LIB"/libibverbs/*-rdmav34.so; do
			mv "$f" "${f%34.so}$abi.so"
		done
		sed -i "s|-rdmav34\.so|-rdmav$abi.so|" "$d/DEBIAN/md5sums"
	fi
	name=$(dpkg-deb -f "$deb" Package)_${ver}_amd64.deb
	dpkg-deb -b "$d" "$ROOT/debs/$name" >/dev/null
	echo "/debs/$name"
}

run_bookworm() {
	local prov44 up_prov up_dev abi57
	before
	echo "test_package: $S: 2. the previous libmana-azure1 ($PREV_VER), then ours ($NEW_VER)"
	installs prev.install apt-get install -y -qq /debs/prev-libmana-azure1.deb /debs/prev-libmana-azure-dev.deb
	out prev.devinfo mana-emu --provider=system -- ibv_devinfo -v
	expect "$S: previous version serves the device" "$T/prev.devinfo" '^\tfw_ver:\t'
	installs upgrade.install apt-get install -y -qq "/debs/${NEW_LIB##*/}" "/debs/${NEW_DEV##*/}"
	installed upgraded
	check "$S: upgraded: Debian's versioned file back in the libdir" test -f "$ROOT$DISTRIB"
	installs reinstall.log dpkg -i "/debs/${NEW_LIB##*/}" "/debs/${NEW_DEV##*/}"
	installed reinstalled
	id19_any_order
	check "$S: mana-diag: driver id 20 bound by ours, no failure" \
		test "$(diag_provider)" = "OK ours 0"
	check "$S: mana-diag: driver id 19 bound by ours (warned)" \
		test "$(diag_provider --driver-id=19)" = "WARN ours 0"
	# -dev: a pkg-config consumer gets our header
	out pc pkg-config --cflags --libs libmana
	expect "$S: pkg-config finds libmana" "$T/pc" '-lmana'
	mkdir -p "$T/dev"
	dpkg-deb -x "$NEW_DEV" "$T/dev"
	check "$S: manadv.h is ours" cmp -s "$ROOT/usr/include/infiniband/manadv.h" "$T/dev/usr/include/infiniband/manadv.h"

	echo "test_package: $S: 3. apt-get install --reinstall ibverbs-providers"
	installs reinst.log apt-get install -y -qq --reinstall ibverbs-providers libibverbs-dev
	installed reinst

	echo "test_package: $S: 4. remove and purge ours"
	purged purged
	snapshot purged
	same_snapshot "after purge: every file and link as before" before purged

	echo "test_package: $S: 5. ibverbs-providers upgraded underneath ours"
	installs again.install apt-get install -y -qq "/debs/${NEW_LIB##*/}" "/debs/${NEW_DEV##*/}"
	prov44=$(cached_deb ibverbs-providers)
	up_prov=$(repack "$prov44" 44.1-1~pkgtest libmana.so.1.0.44.1)
	up_dev=$(repack "$(cached_deb libibverbs-dev)" 44.1-1~pkgtest)
	installs up.install apt-get install -y -qq "$up_prov" "$up_dev"
	check "$S: ibverbs-providers 44.1 installed" test "$(in_root dpkg-query -W -f='${Version}' ibverbs-providers)" = 44.1-1~pkgtest
	installed within-abi
	check "$S: within ABI: 44.1's libmana.so.1.0.44.1 installed in place" test -f "$ROOT$LIB/libmana.so.1.0.44.1"
	check "$S: within ABI: 44.0's libmana.so.1.0.44.0 gone" test ! -e "$ROOT$LIB/libmana.so.1.0.44.0"
	abi57=$(repack "$prov44" 57.0-1~pkgtest "" 57)
	if out abi57.install dpkg -i "$abi57"; then
		fail "$S: ibverbs-providers 57 (private ABI 57) installed over ours"
	else ok; fi
	expect "$S: ABI 57 refused: dpkg says libmana-azure1 breaks it" "$T/abi57.install" \
		'libmana-azure1 \S+ breaks ibverbs-providers \(>= 57~\)'
	expect "$S: ABI 57 refused: and why" "$T/abi57.install" \
		'libmana-azure1: ibverbs-providers 57.0-1~pkgtest has private provider ABI 57; libmana-azure1 serves ABI 34'
	check "$S: ABI 57 left unconfigured" test "$(in_root dpkg-query -W -f='${Status}' ibverbs-providers)" != "install ok installed"
	# back to 44.1 (what apt would do: keep it back, or remove ours)
	installs abi57.back dpkg -i "$up_prov"
	installs abi57.configure dpkg --configure -a
	provider_checks after-abi57
	purged purged-44.1
	check "$S: after purge: the links of ibverbs-providers 44.1" links_ok "$ROOT$up_prov"
	check "$S: after purge: the links of libibverbs-dev 44.1" links_ok "$ROOT$up_dev"
}

run_trixie() {
	before
	echo "test_package: $S: 2. ours ($NEW_VER, built on Debian 12) over trixie's ibverbs-providers"
	installs install.log apt-get install -y -qq "/debs/${NEW_LIB##*/}" "/debs/${NEW_DEV##*/}"
	installed installed
	id19_any_order
	echo "test_package: $S: 4. remove and purge ours"
	purged purged
	snapshot purged
	same_snapshot "after purge: every file and link as before" before purged
	check "$S: after purge: the links of trixie's ibverbs-providers" links_ok \
		"$(cached_deb ibverbs-providers)"
}

for S in $SUITES; do
	t1=$SECONDS
	ROOT=$TMP/$S/root
	T=$TMP/$S
	"run_$S"
	echo "test_package: $S done in $((SECONDS - t1)) s"
done
echo "test_package: done in $((SECONDS - t0)) s"
check_done
