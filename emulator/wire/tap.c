// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * tap:IFNAME: frames go to and come from a Linux TAP interface (IFF_TAP,
 * IFF_NO_PI), read by the shared receive thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend_int.h"
#include "pcap.h"
#include "emulator/lib/libc.h"
#include <sys/ioctl.h>

#include <linux/if.h>
#include <linux/if_tun.h>

int backend_tap_receive_one(struct backend *b)
{
	ssize_t n = emu_libc_read(b->fd, b->rxbuf, b->rxbuf_size);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0)
		return -EIO;
	backend_deliver(b, b->rxbuf, n);
	return 1;
}

static const char *tap_hint(int err)
{
	switch (err) {
	case EPERM:
	case EACCES:
		return " (needs root / CAP_NET_ADMIN)";
	case ENOENT:
	case ENODEV:
	case ENXIO:
		return " (no TUN/TAP support: modprobe tun)";
	case EBUSY:
		return " (already attached elsewhere: one backend per TAP)";
	case EINVAL:
		return " (an interface of that name exists and is not a TAP)";
	default:
		return "";
	}
}

int backend_tap_open(struct backend *b)
{
	struct ifreq ifr;
	int ret;

	b->fd = emu_libc_open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (b->fd < 0) {
		ret = -errno;
		fprintf(stderr, "mana-emu: %s: /dev/net/tun: %s%s\n", b->name,
			strerror(-ret), tap_hint(-ret));
		return ret;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	memcpy(ifr.ifr_name, b->arg, strlen(b->arg));	/* < IFNAMSIZ */
	/* Creates the interface, or attaches to an existing TAP so named. */
	if (emu_libc_ioctl(b->fd, TUNSETIFF, &ifr)) {
		ret = -errno;
		fprintf(stderr, "mana-emu: %s: TUNSETIFF: %s%s\n", b->name,
			strerror(-ret), tap_hint(-ret));
		return ret;
	}
	return backend_rx_thread_start(b, TAP_READ_MAX);
}

bool backend_tap_xmit(struct backend *b, const void *frame, size_t len)
{
	ssize_t n;

	if (b->pcap)
		pcap_write(b->pcap, frame, len);
	do
		n = emu_libc_write(b->fd, frame, len);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len;
}
