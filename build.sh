#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# ./build.sh demo           build, then show the emulated device with ibv_devinfo
# ./build.sh test           build, run every test, then again under ASan+UBSan
# ./build.sh build [ARGS]   configure and build into build/ (ARGS go to cmake)
# ./build.sh deb            Debian packages from the tracked files into
#                           build-deb/ (dpkg-buildpackage -b), then lintian
# ./build.sh pkgtest        install the packages into a fresh Debian 12 root and
#                           check the takeover from ibverbs-providers (root)
#
# Missing Debian packages are installed when run as root; otherwise the
# exact apt-get line is printed.
set -euo pipefail

cd "$(dirname "$0")"
TOP=$(pwd)

PACKAGES=(
	cmake gcc make pkg-config
	libibverbs-dev ibverbs-utils ibverbs-providers
	libnl-3-dev libnl-route-3-dev
	python3 python3-pyverbs python3-pytest
	pandoc man-db
	tshark iproute2 valgrind
)
# ./build.sh deb: the packaging tools; the build dependencies themselves
# come from debian/control (apt-get build-dep).  pkgtest also: mmdebstrap.
DEB_PACKAGES=(debhelper dpkg-dev lintian)

missing_packages() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || echo "$p"
	done
}

ensure_packages() { # ensure_packages [PACKAGE...] (default: PACKAGES)
	local missing
	[ $# -gt 0 ] || set -- "${PACKAGES[@]}"
	missing=$(missing_packages "$@" | tr '\n' ' ')
	[ -z "${missing// }" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "build.sh: missing Debian packages. Install them with:" >&2
		echo "  sudo apt-get install -y $missing" >&2
		exit 1
	fi
	echo "build.sh: installing $missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends $missing
}

configure_and_build() {
	local dir=$1
	shift
	cmake -S "$TOP" -B "$TOP/$dir" -DMANA_WERROR=ON "$@"
	cmake --build "$TOP/$dir" -j "$(nproc)"
}

run_tests() {
	local dir=$1
	ctest --test-dir "$TOP/$dir" --output-on-failure --timeout 600
}

ensure_build_deps() {
	ensure_packages "${DEB_PACKAGES[@]}" "$@"
	(cd "$TOP" && dpkg-checkbuilddeps) 2>/dev/null && return 0
	if [ "$(id -u)" -ne 0 ]; then
		(cd "$TOP" && dpkg-checkbuilddeps) || true
		echo "build.sh: install them with: sudo apt-get build-dep $TOP" >&2
		exit 1
	fi
	echo "build.sh: installing the build dependencies of debian/control"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get build-dep -y -qq "$TOP"
}

project_version() {
	sed -n 's/^project(libmana VERSION \([0-9.]*\).*/\1/p' "$TOP/CMakeLists.txt"
}

# The tracked files (as they are in the work tree) are copied to
# build-deb/libmana-VERSION and built there, so the repository stays clean and
# untracked files cannot leak into a package.  The .debs land in build-deb/.
build_debs() {
	local ver deb_ver src
	ver=$(project_version)
	deb_ver=$(dpkg-parsechangelog -l "$TOP/debian/changelog" -S Version)
	if [ "$ver" != "$deb_ver" ]; then
		echo "build.sh: CMakeLists.txt says version $ver but debian/changelog says $deb_ver;" \
			"add a debian/changelog entry for $ver" >&2
		exit 1
	fi
	rm -rf "$TOP/build-deb"
	src="$TOP/build-deb/libmana-$ver"
	mkdir -p "$src"
	git -C "$TOP" ls-files -z | (cd "$TOP" && tar --null -T - -cf -) | tar -xf - -C "$src"
	(cd "$src" && dpkg-buildpackage -b -us -uc -j"$(nproc)")
	echo "== lintian =="
	lintian --fail-on error --info "$TOP"/build-deb/*.changes
	ls -l "$TOP"/build-deb/*.deb
}

cmd=${1:-build}
[ $# -gt 0 ] && shift
case "$cmd" in
demo)
	ensure_packages
	configure_and_build build "$@"
	echo "== ibv_devices under mana-emu (our provider) =="
	build/bin/mana-emu -- ibv_devices
	echo "== ibv_devinfo -v under mana-emu (our provider) =="
	build/bin/mana-emu -- ibv_devinfo -v
	;;
test)
	ensure_packages
	configure_and_build build "$@"
	run_tests build
	echo "== again with AddressSanitizer + UndefinedBehaviorSanitizer =="
	configure_and_build build-asan -DMANA_SANITIZE=ON "$@"
	run_tests build-asan
	;;
build)
	ensure_packages
	configure_and_build build "$@"
	;;
deb)
	ensure_build_deps
	build_debs
	;;
pkgtest)
	ensure_build_deps mmdebstrap
	build_debs
	tests/test_package.sh "$TOP/build-deb"
	;;
-h|--help|help)
	sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//'
	;;
*)
	echo "build.sh: unknown command '$cmd' (demo, test, build, deb, pkgtest)" >&2
	exit 2
	;;
esac
