#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# tests/guest/guest_root.sh BUILD_DIR
#
# The guest environment of the kernel-in-the-loop tests (issue 23), made
# from Debian's archive only and cached in BUILD_DIR/guest/ (never in the
# repository):
#   root/      a trixie root (mmdebstrap) with qemu-system-x86 from
#              trixie-backports: trixie's own 10.0 has no vfio-user client
#   kernel/    trixie's linux-image (vmlinuz, modules, System.map), unpacked
#              with dpkg-deb rather than installed, so no initramfs-tools run
#   busybox    busybox-static's binary, for the initramfs made at test time
#   verbs/     libibverbs1, ibverbs-utils and libnl (their dependencies
#              besides libc), unpacked: the guest's verbs userspace, which
#              loads our provider (libibverbs1 has no providers of its own)
# A second run with the same inputs (this script) does nothing.  Needs root
# (mmdebstrap's chroot mode).  Downloaded .debs are hard-linked to and from
# the trixie cache of ./build.sh fresh-root ($MANA_FRESH_CACHE), so the
# archive is read once per machine.
set -euo pipefail

BUILD=$(realpath "${1:?usage: guest_root.sh BUILD_DIR}")
G=$BUILD/guest
CACHE=${MANA_FRESH_CACHE:-/var/cache/libmana-fresh-root}/trixie
MIRROR=${MANA_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# the stamp is this script's hash: changing it remakes the root
STAMP=$(sha256sum "$0" | cut -c1-16)

if [ -f "$G/stamp" ] && [ "$(cat "$G/stamp")" = "$STAMP" ] &&
	[ -x "$G/root/usr/bin/qemu-system-x86_64" ] && [ -f "$G/kernel/vmlinuz" ] &&
	[ -x "$G/verbs/usr/bin/ibv_devinfo" ]; then
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "guest_root: needs root (mmdebstrap); run: sudo $0 $1" >&2
	exit 1
fi
command -v mmdebstrap >/dev/null || { echo "guest_root: needs mmdebstrap" >&2; exit 1; }

rm -rf --one-file-system "$G"
mkdir -p "$G" "$CACHE"
t0=$SECONDS
# QEMU from backports by an explicit target release, with the three
# packages it depends on by version (apt picks no backports version on its
# own).  The kernel and busybox are fetched as .debs inside the root (its
# apt knows trixie) and unpacked below, not installed.
BPO=trixie-backports
INCLUDE=qemu-system-x86/$BPO,qemu-system-common/$BPO,qemu-system-data/$BPO,seabios/$BPO
SEED="find '$CACHE' -maxdepth 1 -name '*.deb' \
	-exec cp -ln -t \"\$1/var/cache/apt/archives/\" {} + 2>/dev/null || true"
# the versioned kernel image linux-image-amd64 depends on, busybox, verbs
VERBS="libibverbs1 ibverbs-utils libnl-3-200 libnl-route-3-200"
FETCH='mkdir -p "$1/opt/debs" && chroot "$1" sh -c "cd /opt/debs &&
	apt-get download -q busybox-static '"$VERBS"' \$(apt-cache depends linux-image-amd64 |
	sed -n \"s/^ *Depends: \(linux-image-[0-9].*\)/\1/p\")"'
if ! mmdebstrap --variant=apt --quiet --include="$INCLUDE" \
	--dpkgopt=force-unsafe-io \
	--skip=cleanup/apt/lists --skip=cleanup/apt/cache --skip=essential/unlink \
	--setup-hook='mkdir -p "$1/var/cache/apt/archives"' \
	--setup-hook="$SEED" --customize-hook="$FETCH" \
	trixie "$G/root" \
	"deb $MIRROR trixie main" "deb $MIRROR trixie-backports main" \
	>"$G/mmdebstrap.log" 2>&1; then
	tail -30 "$G/mmdebstrap.log" >&2
	echo "guest_root: mmdebstrap failed (log: $G/mmdebstrap.log)" >&2
	exit 1
fi
find "$G/root/var/cache/apt/archives" "$G/root/opt/debs" -maxdepth 1 -name '*.deb' \
	-links 1 -exec cp -ln -t "$CACHE/" {} + 2>/dev/null || true

mkdir -p "$G/kernel/x" "$G/bb" "$G/verbs"
dpkg-deb -x "$G"/root/opt/debs/linux-image-*.deb "$G/kernel/x"
dpkg-deb -x "$G"/root/opt/debs/busybox-static_*.deb "$G/bb"
for p in $VERBS; do dpkg-deb -x "$G"/root/opt/debs/"${p}"_*.deb "$G/verbs"; done
rm -rf "$G/verbs/usr/share"
cp "$G/bb/usr/bin/busybox" "$G/busybox"
rm -rf "$G/bb"
kver=$(ls "$G/kernel/x/usr/lib/modules")
ln -s "x/boot/vmlinuz-$kver" "$G/kernel/vmlinuz"
echo "$kver" >"$G/kernel/version"
chroot "$G/root" qemu-system-x86_64 --version | head -1 >"$G/qemu-version"
echo "$STAMP" >"$G/stamp"
echo "guest_root: trixie root, kernel $kver, in $((SECONDS - t0)) s"
