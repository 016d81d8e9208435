// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The emulated kernel's netlink: a request buffer sent on a fake
 * NETLINK_RDMA or NETLINK_ROUTE socket (emu_nl_sendmsg, as the
 * sendmsg/sendto/send interposers call it), in one or two pieces, with or
 * without a destination address.  Properties: the call returns the bytes sent or a
 * -errno; every reply queued is one well-formed netlink message (its
 * length the datagram's, attributes inside it, errors negative).
 */
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "emulator/core/emu.h"
#include "emulator/kernel/netlink.h"
#include "fuzz_check.h"
#include "fuzz_emu.h"

/* [0] NETLINK_RDMA, [1] NETLINK_ROUTE */
static int app_fds[2] = { -1, -1 };
static struct emu_nlsock *socks[2];
static const int protocols[2] = { NETLINK_RDMA, NETLINK_ROUTE };

static void open_sockets(void)
{
	int i;

	fuzz_emu_setup();
	pthread_mutex_lock(&emu.lock);
	for (i = 0; i < 2; i++) {
		app_fds[i] = emu_nl_socket(SOCK_RAW | SOCK_CLOEXEC, protocols[i]);
		FUZZ_CHECK(app_fds[i] >= 0);
		socks[i] = emu_fd_obj(app_fds[i], EMU_FD_NETLINK);
		FUZZ_CHECK(socks[i]);
	}
	pthread_mutex_unlock(&emu.lock);
}

/* The family header between nlmsghdr and the attributes: rtnetlink's */
static size_t family_hdr_len(int route, uint16_t type)
{
	if (!route)
		return 0;	/* RDMA netlink has none */
	/* the two it answers: links, and the VFs' addresses (RoCE GIDs) */
	FUZZ_CHECK(type == RTM_NEWLINK || type == RTM_NEWADDR);
	return NLMSG_ALIGN(type == RTM_NEWLINK ? sizeof(struct ifinfomsg) :
						  sizeof(struct ifaddrmsg));
}

static void check_reply(int route, const uint8_t *buf, size_t n)
{
	const struct nlmsghdr *h = (const void *)buf;
	size_t off;

	FUZZ_CHECK(n >= NLMSG_HDRLEN && h->nlmsg_len == n);
	if (h->nlmsg_type == NLMSG_ERROR) {
		int err;

		FUZZ_CHECK(n >= NLMSG_HDRLEN + sizeof(int) + NLMSG_HDRLEN);
		memcpy(&err, buf + NLMSG_HDRLEN, sizeof(err));
		FUZZ_CHECK(err <= 0 && err > -4096);
		return;
	}
	if (h->nlmsg_type == NLMSG_DONE)
		return;
	off = NLMSG_HDRLEN + family_hdr_len(route, h->nlmsg_type);
	FUZZ_CHECK(off <= n);
	while (off + NLA_HDRLEN <= n) {
		const struct nlattr *a = (const void *)(buf + off);

		FUZZ_CHECK(a->nla_len >= NLA_HDRLEN && off + a->nla_len <= n);
		off += NLA_ALIGN(a->nla_len);
	}
	FUZZ_CHECK(off >= n);
}

static void drain(int route)
{
	static uint8_t buf[65536];
	ssize_t n;

	while ((n = recv(app_fds[route], buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		check_reply(route, buf, (size_t)n);
}

/*
 * Input: flags (bit 0: a destination address from the next 12 bytes;
 * bit 1: two iovecs, split at the next byte; bit 2: NETLINK_ROUTE, else
 * NETLINK_RDMA), then the request bytes.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	uint8_t *arena = fuzz_arena(), *name = arena, *req = arena + 64;
	struct msghdr msg = { 0 };
	struct iovec iov[2];
	uint8_t flags, split = 0;
	ssize_t ret;
	size_t len;
	int route;

	if (app_fds[0] < 0)
		open_sockets();
	flags = fuzz_u8(&in);
	route = !!(flags & 4);
	if (flags & 1) {
		fuzz_take(&in, name, sizeof(struct sockaddr_nl));
		msg.msg_name = name;
		msg.msg_namelen = flags >> 4;	/* 0..15: short ones too */
	}
	if (flags & 2)
		split = fuzz_u8(&in);
	len = in.left < FUZZ_ARENA_SIZE - 64 ? in.left : FUZZ_ARENA_SIZE - 64;
	memcpy(req, in.p, len);
	iov[0].iov_base = req;
	iov[0].iov_len = split < len ? split : len;
	iov[1].iov_base = req + iov[0].iov_len;
	iov[1].iov_len = len - iov[0].iov_len;
	msg.msg_iov = iov;
	msg.msg_iovlen = flags & 2 ? 2 : 1;
	if (!(flags & 2))
		iov[0].iov_len = len;

	pthread_mutex_lock(&emu.lock);
	ret = emu_nl_sendmsg(socks[route], &msg);
	pthread_mutex_unlock(&emu.lock);
	FUZZ_CHECK(ret == (ssize_t)len || (ret < 0 && ret > -4096));
	drain(route);
	return 0;
}
