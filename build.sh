#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# ./build.sh demo           build, then show the emulated device with ibv_devinfo
# ./build.sh test           build, run every test but those labelled 'guest',
#                           then again under ASan+UBSan (also without 'long')
# ./build.sh build [ARGS]   configure and build into build/ (ARGS go to cmake)
# ./build.sh deb            Debian packages from the tracked files into
#                           build-deb/ (dpkg-buildpackage -b), then lintian
# ./build.sh pkgtest        install the packages into fresh Debian 12 and 13
#                           roots and check the takeover from ibverbs-providers,
#                           the upgrade from the previous version (root)
# ./build.sh fuzz [SECONDS] build the libFuzzer harnesses (clang) into
#                           build-fuzz/, replay their corpus, then fuzz each
#                           for SECONDS (default 60); non-zero on any crash
# ./build.sh tsan           ThreadSanitizer build (build-tsan/), threaded tests
# ./build.sh guest-root     the kernel-in-the-loop environment in build/guest/
#                           (issue 23): a trixie root with QEMU from
#                           trixie-backports, trixie's kernel and busybox
#                           (mmdebstrap, Debian archive only; needs root)
# ./build.sh guest-test     guest-root, build, then the tests labelled 'guest':
#                           Debian's own mana driver probing mana-vfio's VF
#                           in a QEMU/TCG guest, with mana-vfio plain and
#                           under ASan+UBSan, the differential oracle included
# ./build.sh guest-oracle   guest-root, build, then issue 23's differential
#                           oracle: the same clients under mana-emu and on
#                           the guest's real mana_ib, every difference printed
# ./build.sh fresh-root SUITE [COMMAND...]
#                           clone this commit into /root/libmana of a fresh
#                           Debian SUITE root (bookworm, trixie; mmdebstrap
#                           minbase + git) and run ./build.sh COMMAND there for
#                           each COMMAND (default: demo test), as root
#
# Missing Debian packages are installed when run as root; otherwise the
# exact apt-get line is printed.
set -euo pipefail

cd "$(dirname "$0")"
TOP=$(pwd)

PACKAGES=(
	cmake gcc libc6-dev make pkg-config
	libibverbs-dev ibverbs-utils ibverbs-providers
	libnl-3-dev libnl-route-3-dev
	python3 python3-pyverbs python3-pytest
	pandoc man-db
	tshark iproute2 valgrind perftest rdmacm-utils qperf libfabric-bin
)
# ./build.sh deb: the packaging tools; the build dependencies themselves
# come from debian/control (apt-get build-dep).  pkgtest also: mmdebstrap.
DEB_PACKAGES=(debhelper dpkg-dev lintian)
# Only ./build.sh fuzz needs these: clang and its libFuzzer runtime.
FUZZ_PACKAGES=(clang-14 libclang-rt-14-dev)

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
	# another build.sh may be installing too (.ci/run overlaps steps)
	apt-get -o DPkg::Lock::Timeout=600 update -qq
	apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing
}

configure_and_build() {
	local dir=$1
	shift
	cmake -S "$TOP" -B "$TOP/$dir" -DMANA_WERROR=ON "$@"
	cmake --build "$TOP/$dir" -j "$(nproc)"
}

run_tests() { # run_tests DIR [CTEST ARGS...]
	local dir=$1
	shift
	# most tests wait on wires, sockets, peers and timers: two per core
	# keep the cores busy
	ctest --test-dir "$TOP/$dir" --output-on-failure --timeout 600 \
		-j "$(( $(nproc) * 2 ))" "$@"
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
	apt-get -o DPkg::Lock::Timeout=600 update -qq
	apt-get -o DPkg::Lock::Timeout=600 build-dep -y -qq "$TOP"
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

# The packages of the version before this one (debian/changelog's previous
# entry), for pkgtest's upgrade path: the newest commit whose changelog
# names another version than this tree's, exported into
# build-pkgtest/prev-COMMIT/ and built there once (later runs reuse it).
# Prints the directory with the .debs.
prev_debs() {
	local ver c dir
	ver=$(dpkg-parsechangelog -l "$TOP/debian/changelog" -S Version)
	for c in $(git -C "$TOP" log --format=%H -- debian/changelog); do
		c=$(git -C "$TOP" rev-parse "$c^" 2>/dev/null) || continue
		[ "$(git -C "$TOP" show "$c:debian/changelog" | dpkg-parsechangelog -l - -S Version)" != "$ver" ] &&
			break
	done
	[ -n "${c:-}" ] || { echo "build.sh: no earlier version in debian/changelog's history" >&2; exit 1; }
	dir=$TOP/build-pkgtest/prev-$(git -C "$TOP" rev-parse --short "$c")
	if ! ls "$dir"/libmana-azure1_*.deb >/dev/null 2>&1; then
		echo "build.sh: building the previous version's packages ($c) in $dir" >&2
		rm -rf "$dir"
		mkdir -p "$dir/src"
		git -C "$TOP" archive "$c" | tar -xf - -C "$dir/src"
		(cd "$dir/src" && dpkg-buildpackage -b -us -uc -j"$(nproc)") >"$dir/build.log" 2>&1 ||
			{ tail -30 "$dir/build.log" >&2; echo "build.sh: building $c failed" >&2; exit 1; }
		rm -rf "$dir/src"
	fi
	echo "$dir"
}

# One harness for $2 seconds on a scratch copy of its corpus; prints
# "name executions cov ft crashes" and returns non-zero on a crash.
fuzz_one() {
	local name=$1 secs=$2 out=$TOP/build-fuzz/run/$1
	local log=$out/log rc=0 execs cov ft crashes

	rm -rf "$out"
	mkdir -p "$out/corpus" "$out/artifacts"
	"$TOP/build-fuzz/bin/fuzz_$name" -max_total_time="$secs" -timeout=25 \
		-print_final_stats=1 -artifact_prefix="$out/artifacts/" \
		"$out/corpus" "$TOP/fuzz/corpus/$name" >"$log" 2>&1 || rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
	ft=$(grep -Eo 'ft: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
	crashes=$(find "$out/artifacts" -type f | wc -l)
	printf '%-14s %12s %6s %6s %8s\n' "$name" "${execs:-?}" "${cov:-?}" \
		"${ft:-?}" "$crashes"
	if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
		echo "build.sh: fuzz_$name failed (exit $rc); log: $log" >&2
		grep -E 'ERROR|property failed|SUMMARY' "$log" | head -5 >&2
		ls "$out/artifacts" >&2
		return 1
	fi
}

fuzz() {
	local secs=${1:-60} failed=0 name names

	case "$secs" in
	''|*[!0-9]*|0)
		echo "build.sh: fuzz SECONDS must be a positive number" >&2
		exit 2 ;;
	esac
	ensure_packages "${PACKAGES[@]}" "${FUZZ_PACKAGES[@]}"
	cmake -S "$TOP" -B "$TOP/build-fuzz" -DMANA_WERROR=ON -DMANA_FUZZ=ON \
		-DCMAKE_C_COMPILER=clang-14
	cmake --build "$TOP/build-fuzz" -j "$(nproc)"
	echo "== corpus replay (every saved input once) =="
	run_tests build-fuzz
	names=$(cd "$TOP/build-fuzz/bin" && ls fuzz_* | sed 's/^fuzz_//' |
		grep -v '^make_corpus$')
	echo "== fuzzing each harness for ${secs}s =="
	printf '%-14s %12s %6s %6s %8s\n' harness executions cov ft crashes
	for name in $names; do
		fuzz_one "$name" "$secs" || failed=1
	done
	return $failed
}

# A fresh Debian root, as a user who has only installed git would have it:
# mmdebstrap's minbase plus git and ca-certificates, this commit cloned into
# /root/libmana (root's home is 0700 there, as on any Debian), then
# ./build.sh COMMAND for each COMMAND, timed.  The root gets its own /proc,
# /dev/shm and mount namespace (the mounts vanish with it), and is a mount
# point itself (ip netns exec remounts / as a slave); the host's /usr is
# never touched.  Downloaded .debs are kept per suite in $MANA_FRESH_CACHE
# (default /var/cache/libmana-fresh-root/SUITE) and hard-linked into the next
# root, so a second run downloads nothing.
fresh_root() {
	local suite=${1:-} cache root host_suite seed=() c t0 rc=0

	case "$suite" in
	bookworm|trixie|forky|sid) ;;
	*)
		echo "build.sh: fresh-root SUITE: bookworm, trixie, forky or sid" >&2
		exit 2 ;;
	esac
	shift
	[ $# -gt 0 ] || set -- demo test
	if [ "$(id -u)" -ne 0 ]; then
		echo "build.sh: fresh-root needs root (mmdebstrap, chroot, mounts)" >&2
		exit 1
	fi
	ensure_packages mmdebstrap git
	cache=${MANA_FRESH_CACHE:-/var/cache/libmana-fresh-root}/$suite
	mkdir -p "$cache"
	# the host's own cache serves a root of the host's suite (read only)
	host_suite=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
	[ "$host_suite" = "$suite" ] && seed=(/var/cache/apt/archives)
	# global: the EXIT trap runs after this function's locals are gone
	FRESH_TMP=$(mktemp -d "${TMPDIR:-/var/tmp}/libmana-fresh-$suite.XXXXXX")
	root=$FRESH_TMP/root
	# the root's mounts live in a private namespace: nothing to unmount here
	trap 'rm -rf --one-file-system "$FRESH_TMP"' EXIT
	trap 'exit 130' INT TERM

	echo "== fresh-root $suite: mmdebstrap minbase + git, ca-certificates =="
	t0=$SECONDS
	# dpkg without fsync (a root thrown away after the run: its dpkg time
	# under load was most of the setup), apt's lists kept for build.sh
	if ! mmdebstrap --variant=minbase --include=git,ca-certificates \
		--dpkgopt=force-unsafe-io --skip=cleanup/apt/lists \
		--skip=cleanup/apt/cache --skip=essential/unlink \
		--setup-hook='mkdir -p "$1/var/cache/apt/archives"' \
		--setup-hook="for d in $cache ${seed[*]}; do find \"\$d\" -maxdepth 1 -name '*.deb' -exec cp -ln -t \"\$1/var/cache/apt/archives/\" {} + ; done" \
		"$suite" "$root" >"$FRESH_TMP/mmdebstrap.log" 2>&1; then
		cat "$FRESH_TMP/mmdebstrap.log" >&2
		echo "build.sh: mmdebstrap $suite failed" >&2
		exit 1
	fi
	echo "fresh-root $suite: root ready in $((SECONDS - t0)) s"
	echo force-unsafe-io >"$root/etc/dpkg/dpkg.cfg.d/libmana-fresh-root"
	git clone -q "$TOP" "$root/root/libmana"
	cp /etc/resolv.conf "$root/etc/resolv.conf"
	# A Debian system resolves "localhost" from /etc/hosts (bookworm's
	# installer and cloud images write it; trixie's netbase ships it); a
	# minbase bookworm root has none, and libfabric's server binds
	# "localhost" (cm.fi_pingpong)
	[ -e "$root/etc/hosts" ] ||
		printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' \
			>"$root/etc/hosts"
	for c in "$@"; do
		echo "== fresh-root $suite: ./build.sh $c (in /root/libmana) =="
		t0=$SECONDS
		unshare --mount --pid --fork sh -c '
			root=$1; shift
			mount --bind "$root" "$root" &&
			mount -t proc proc "$root/proc" &&
			mount --rbind /dev "$root/dev" &&
			mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm" &&
			mount --rbind /sys "$root/sys" &&
			exec chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb \
				LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
				sh -c "cd /root/libmana && exec ./build.sh \"\$@\"" sh "$@"' \
			sh "$root" $c || rc=$?
		echo "fresh-root $suite: ./build.sh $c: exit $rc, $((SECONDS - t0)) s"
		[ "$rc" -eq 0 ] || break
	done
	# only what this run downloaded: the rest are links to the cache already
	find "$root/var/cache/apt/archives" -maxdepth 1 -name '*.deb' -links 1 \
		-exec cp -ln -t "$cache/" {} + 2>/dev/null || true
	return "$rc"
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
	# 'guest' boots QEMU guests: ./build.sh guest-test runs them
	run_tests build -LE guest
	# the 'long' tests (10^6 frames) run once, above; their smaller
	# variants, which still wrap every ring many times, run here too
	echo "== again with AddressSanitizer + UndefinedBehaviorSanitizer (without label 'long') =="
	configure_and_build build-asan -DMANA_SANITIZE=ON "$@"
	run_tests build-asan -LE 'long|guest'
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
deb)
	ensure_build_deps
	build_debs
	;;
pkgtest)
	ensure_build_deps mmdebstrap
	prev=$(prev_debs)
	build_debs
	tests/test_package.sh "$TOP/build-deb" "$prev"
	;;
fuzz)
	fuzz "$@"
	;;
fresh-root)
	fresh_root "$@"
	;;
guest-root)
	ensure_packages mmdebstrap xz-utils
	mkdir -p "$TOP/build"
	tests/guest/guest_root.sh "$TOP/build"
	;;
guest-test)
	ensure_packages
	ensure_packages mmdebstrap xz-utils
	configure_and_build build "$@"
	tests/guest/guest_root.sh "$TOP/build"
	run_tests build -L guest
	# the server under the sanitizers, against the same guest
	configure_and_build build-asan -DMANA_SANITIZE=ON "$@"
	mkdir -p "$TOP/build-asan"
	ln -sfn "$TOP/build/guest" "$TOP/build-asan/guest"
	run_tests build-asan -L guest
	;;
guest-oracle)
	# issue 23's M4: mana-emu against the real mana_ib, every difference
	ensure_packages
	ensure_packages mmdebstrap xz-utils
	configure_and_build build "$@"
	tests/guest/guest_root.sh "$TOP/build"
	ctest --test-dir "$TOP/build" --output-on-failure -L oracle
	;;
-h|--help|help)
	sed -n '3,35p' "$0" | sed 's/^# \{0,1\}//'
	;;
*)
	echo "build.sh: unknown command '$cmd' (demo, test, tsan, build, deb, pkgtest, fuzz, fresh-root, guest-root, guest-test, guest-oracle)" >&2
	exit 2
	;;
esac
