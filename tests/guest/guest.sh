#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# tests/guest/guest.sh BUILD_DIR initramfs OUT SCRIPT [FILE...]
#     a busybox initramfs (made now, from BUILD_DIR/guest/ of guest_root.sh)
#     with ib_core, ib_uverbs, mana, mana_ib and their dependencies
#     (uncompressed: busybox's insmod reads plain .ko) whose /init runs the
#     shell SCRIPT, prints "GUEST-EXIT <status>" and powers off; each FILE
#     is copied to its root (/NAME), e.g. a flag the script tests
# tests/guest/guest.sh BUILD_DIR boot INITRAMFS [QEMU ARGS...]
#     boots the trixie kernel with it under TCG (-smp 1: this machine's
#     /dev/kvm is paravirtual and cannot run a stock kernel), serial on
#     stdout, no network, no display; QEMU from the trixie root, run through
#     the root's own dynamic loader so the host needs no chroot or mounts
set -euo pipefail

BUILD=$(realpath "${1:?usage: guest.sh BUILD_DIR initramfs|boot ...}")
G=$BUILD/guest
cmd=${2:?}
shift 2
MODULES="ib_core ib_uverbs mana mana_ib"

module_closure() { # module names in load order (dependencies first)
	local kdir=$1 m f deps d
	shift
	for m in "$@"; do
		case " $LOADED " in *" $m "*) continue ;; esac
		f=$(find "$kdir" -name "$m.ko.xz" -o -name "$m.ko" | head -1)
		[ -n "$f" ] || { echo "guest: no module $m" >&2; exit 1; }
		deps=$(xz -dcf "$f" | tr '\0' '\n' | sed -n 's/^depends=//p' | tr ',' ' ')
		for d in $deps; do module_closure "$kdir" "$d"; done
		case " $LOADED " in *" $m "*) ;; *) LOADED="$LOADED $m"; ORDER+=("$f") ;; esac
	done
}

case "$cmd" in
initramfs)
	out=${1:?OUT}
	script=${2:?SCRIPT}
	kver=$(cat "$G/kernel/version")
	kdir=$G/kernel/x/usr/lib/modules/$kver
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	mkdir -p "$tmp"/{bin,dev,proc,sys,tmp,mod}
	cp "$G/busybox" "$tmp/bin/busybox"
	LOADED="" ORDER=()
	module_closure "$kdir" $MODULES
	: >"$tmp/mod/order"
	for f in "${ORDER[@]}"; do
		b=$(basename "$f" .xz)
		xz -dcf "$f" >"$tmp/mod/$b"
		echo "$b" >>"$tmp/mod/order"
	done
	cp "$script" "$tmp/test.sh"
	shift 2
	for f in "$@"; do cp "$f" "$tmp/"; done
	cat >"$tmp/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
echo "GUEST-UP $(cut -d' ' -f1 /proc/uptime)"
for m in $(cat /mod/order); do
	insmod /mod/$m || echo "GUEST-INSMOD-FAILED $m"
done
echo "GUEST-MODULES $(cut -d' ' -f1 /proc/uptime)"
sh /test.sh
echo "GUEST-EXIT $?"
poweroff -f
INIT
	chmod +x "$tmp/init" "$tmp/test.sh"
	(cd "$tmp" && find . | "$G/busybox" cpio -o -H newc 2>/dev/null | gzip -1) >"$out"
	;;
boot)
	initrd=${1:?INITRAMFS}
	shift
	R=$G/root
	exec "$R/lib64/ld-linux-x86-64.so.2" \
		--library-path "$R/usr/lib/x86_64-linux-gnu:$R/lib/x86_64-linux-gnu" \
		"$R/usr/bin/qemu-system-x86_64" -L "$R/usr/share/qemu" -L "$R/usr/share/seabios" \
		-accel tcg -smp 1 -m 512M -nodefaults -no-user-config \
		-display none -serial stdio -no-reboot \
		-kernel "$G/kernel/vmlinuz" -initrd "$initrd" \
		-append "console=ttyS0 quiet loglevel=4 panic=-1" "$@"
	;;
*)
	echo "guest.sh: unknown command $cmd (initramfs, boot)" >&2
	exit 2 ;;
esac
