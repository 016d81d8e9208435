#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# ./build.sh demo           build, then show the emulated device with ibv_devinfo
# ./build.sh test           build, run every test, then again under ASan+UBSan
# ./build.sh build [ARGS]   configure and build into build/ (ARGS go to cmake)
# ./build.sh tsan           ThreadSanitizer build (build-tsan/), threaded tests
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

missing_packages() {
	local p
	for p in "${PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || echo "$p"
	done
}

ensure_packages() {
	local missing
	missing=$(missing_packages | tr '\n' ' ')
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
tsan)
	ensure_packages
	configure_and_build build-tsan -DMANA_TSAN=ON "$@"
	ctest --test-dir "$TOP/build-tsan" --output-on-failure --timeout 600 -L tsan
	;;
build)
	ensure_packages
	configure_and_build build "$@"
	;;
-h|--help|help)
	sed -n '3,10p' "$0" | sed 's/^# \{0,1\}//'
	;;
*)
	echo "build.sh: unknown command '$cmd' (demo, test, tsan, build)" >&2
	exit 2
	;;
esac
