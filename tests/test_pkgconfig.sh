#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# libmana.pc: a program configured through the build tree's libmana.pc
# compiles against build/include/infiniband/manadv.h, links build/lib and
# runs with build/lib/libmana.so.1 (not the distribution's); the .pc that
# `cmake --install --prefix DIR` writes names DIR, and so do the provider
# link and mana.driver it installs.
# Usage: test_pkgconfig.sh BUILD_DIR [ASAN_RUNTIME]
set -u
BUILD=$(realpath "${1:?build dir}")
ASAN_RT=${2:-}
SRC=$(dirname "$(realpath "$0")")/pkgconfig_probe.c
. "$(dirname "$0")/check.sh"
CC=${CC:-cc}

# probe NAME PC_DIR: compile and link the probe through pkg-config
probe() {
	local name=$1 cflags libs
	cflags=$(PKG_CONFIG_PATH=$2 pkg-config --cflags libmana) &&
	libs=$(PKG_CONFIG_PATH=$2 pkg-config --libs libmana) || { fail "$name: pkg-config"; return 1; }
	# -M: the headers this compilation reads
	$CC $cflags -M "$SRC" >"$TMP/$name.deps" 2>&1 || { fail "$name: cc -M"; cat "$TMP/$name.deps" >&2; return 1; }
	$CC $cflags "$SRC" -o "$TMP/$name" $libs >"$TMP/$name.cc" 2>&1 ||
		{ fail "$name: build"; cat "$TMP/$name.cc" >&2; return 1; }
	ok
}

# ---- the build tree ----------------------------------------------------------
check "build-tree libmana.pc exists" test -f "$BUILD/lib/pkgconfig/libmana.pc"
expect "version" <(PKG_CONFIG_PATH=$BUILD/lib/pkgconfig pkg-config --modversion libmana) '^\d+\.\d+\.\d+$'
if probe build "$BUILD/lib/pkgconfig"; then
	expect "build: our manadv.h" "$TMP/build.deps" "\Q$BUILD/include/infiniband/manadv.h\E"
	expect_not "build: not the distribution's manadv.h" "$TMP/build.deps" '(^|\s)/usr/include/infiniband/manadv\.h'
	ldd "$TMP/build" >"$TMP/build.ldd" 2>&1
	expect "build: ldd resolves libmana.so.1 into build/lib" "$TMP/build.ldd" "libmana\.so\.1 => \Q$BUILD/lib/libmana.so.1\E "
	LD_PRELOAD=$ASAN_RT "$TMP/build" >"$TMP/build.run" 2>&1
	expect "build: manadv_init_obj comes from build/lib at run time" "$TMP/build.run" "^\Q$BUILD/lib/libmana.so.1\E\$"
fi

# ---- an installed tree --------------------------------------------------------
INST=$TMP/prefix
cmake --install "$BUILD" --prefix "$INST" >"$TMP/install.log" 2>&1 ||
	{ fail "cmake --install"; cat "$TMP/install.log" >&2; }
pc=$(find "$INST" -name libmana.pc)
check "installed libmana.pc exists" test -n "$pc"
if [ -n "$pc" ]; then
	expect "installed: prefix" "$pc" "^prefix=\Q$INST\E\$"
	expect_not "installed: no build-tree path" "$pc" "\Q$BUILD\E"
	if probe inst "$(dirname "$pc")"; then
		expect "installed: the installed manadv.h" "$TMP/inst.deps" "\Q$INST/include/infiniband/manadv.h\E"
		ldd "$TMP/inst" >"$TMP/inst.ldd" 2>&1
		expect_not "installed: no RPATH into the build tree" "$TMP/inst.ldd" "\Q$BUILD\E"
	fi
	libdir=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=libdir libmana)
	check "installed: provider link resolves to libmana.so.1" \
		test "$(readlink -f "$libdir/libibverbs/libmana-rdmav34.so")" = "$(readlink -f "$libdir/libmana.so.1")"
	expect "installed: mana.driver names the provider by path" "$INST/etc/libibverbs.d/mana.driver" \
		"^driver \Q$libdir/libibverbs/libmana\E\$"
fi
check_done
