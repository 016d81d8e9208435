#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# tests/guest/guest.sh BUILD_DIR initramfs OUT SCRIPT [FILE...]
#     a busybox initramfs (made now, from BUILD_DIR/guest/ of guest_root.sh)
#     with ib_core, ib_uverbs, mana, mana_ib and their dependencies
#     (uncompressed: busybox's insmod reads plain .ko) whose /init runs the
#     shell SCRIPT, prints "GUEST-EXIT <status>" and powers off; each FILE
#     is copied to its root (/NAME), e.g. a flag the script tests.  With
#     GUEST_PROVIDER=PATH (our libmana) it also carries the guest's verbs
#     userspace: trixie's libibverbs, ibv_devinfo (from BUILD_DIR/guest/
#     verbs/), their libraries (libnl; libc from the trixie root) and PATH
#     as the only provider (/etc/libibverbs.d/mana.driver); each of
#     GUEST_BINS (host-built programs) goes to /usr/bin with the libraries
#     it needs, searched in the guest's tree, the trixie root, then the
#     host (an ASan build's runtime)
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
# GUEST_EXTRA_MODULES: more, loaded last (virtio_net: eth1 after mana's eth0)
MODULES="ib_core ib_uverbs mana mana_ib ${GUEST_EXTRA_MODULES:-}"

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

# ELF file $1 and the libraries it needs (by soname, transitively) into
# $2/usr/lib/x86_64-linux-gnu, from the first of LIBDIRS that has each
LIBDIRS=()
copy_needed() {
	local f=$1 dst=$2/usr/lib/x86_64-linux-gnu n d
	for n in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		[ -e "$dst/$n" ] && continue
		for d in "${LIBDIRS[@]}"; do
			if [ -e "$d/$n" ]; then
				cp -L "$d/$n" "$dst/$n"
				copy_needed "$dst/$n" "$2"
				continue 2
			fi
		done
		echo "guest: no library $n (for $f)" >&2
		exit 1
	done
}

# The verbs userspace with $GUEST_PROVIDER as its one provider (above).
add_verbs() {
	local root=$1 lib=$1/usr/lib/x86_64-linux-gnu V=$G/verbs b
	[ -x "$V/usr/bin/ibv_devinfo" ] ||
		{ echo "guest: no $V (./build.sh guest-root)" >&2; exit 1; }
	mkdir -p "$lib/libibverbs" "$root/usr/bin" "$root/lib64" "$root/etc/libibverbs.d"
	LIBDIRS=("$V/usr/lib/x86_64-linux-gnu" "$G/root/usr/lib/x86_64-linux-gnu"
		/usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu)
	cp -L "$G/root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" "$lib/"
	ln -s ../usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$root/lib64/"
	for b in ibv_devinfo ibv_devices; do
		cp "$V/usr/bin/$b" "$root/usr/bin/"
		copy_needed "$root/usr/bin/$b" "$root"
	done
	# libmana.so.1 for manadv users, the provider name libibverbs loads
	cp -L "$GUEST_PROVIDER" "$lib/libmana.so.1"
	ln -s ../libmana.so.1 "$lib/libibverbs/libmana-rdmav34.so"
	copy_needed "$lib/libmana.so.1" "$root"
	echo "driver mana" >"$root/etc/libibverbs.d/mana.driver"
	for b in ${GUEST_BINS:-}; do
		cp "$b" "$root/usr/bin/"
		copy_needed "$root/usr/bin/$(basename "$b")" "$root"
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
	[ -z "${GUEST_PROVIDER:-}" ] || add_verbs "$tmp"
	shift 2
	for f in "$@"; do cp "$f" "$tmp/"; done
	cat >"$tmp/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/usr/bin
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
