// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RTM_GETADDR dumps: the addresses of the VM's interfaces, as
 * inet_dump_ifaddr()/inet6_dump_addr() send them.  Each VF interface
 * carries its IPv6 link-local address (from the MAC) and its --ip
 * addresses: the same list the RoCE GID table is made of (core/gid.h),
 * so `ip addr` and the GIDs agree.  lo carries 127.0.0.1/8 and ::1/128.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/if_addr.h>
#include <linux/rtnetlink.h>

#include "emulator/core/emu.h"
#include "emulator/core/gid.h"
#include "emulator/core/links.h"
#include "kernel.h"
#include "netlink_out.h"

static void send_addr(struct emu_nlsock *s, const struct nlmsghdr *req,
		      const struct emu_link *l, const struct mana_emu_ip *ip,
		      uint8_t scope)
{
	struct ifaddrmsg ifa = {
		.ifa_family = ip->family, .ifa_prefixlen = ip->prefix_len,
		.ifa_flags = IFA_F_PERMANENT, .ifa_scope = scope,
		.ifa_index = l->ifindex,
	};
	size_t alen = ip->family == AF_INET ? 4 : 16;
	uint8_t brd[4];
	struct nl_out o;
	uint32_t mask;

	out_begin(&o, RTM_NEWADDR, NLM_F_MULTI, req, s->portid);
	memcpy(o.buf + o.len, &ifa, sizeof(ifa));
	o.len += NLMSG_ALIGN(sizeof(ifa));
	out_put(&o, IFA_ADDRESS, ip->addr, alen);
	if (ip->family == AF_INET) {
		out_put(&o, IFA_LOCAL, ip->addr, alen);
		mask = ip->prefix_len >= 32 ? 0 : 0xffffffffu >> ip->prefix_len;
		memcpy(brd, ip->addr, 4);
		brd[0] |= mask >> 24;
		brd[1] |= mask >> 16;
		brd[2] |= mask >> 8;
		brd[3] |= mask;
		if (ip->prefix_len < 31)
			out_put(&o, IFA_BROADCAST, brd, 4);
		out_str(&o, IFA_LABEL, l->name);
	}
	out_u32(&o, IFA_FLAGS, IFA_F_PERMANENT);
	out_send(s, &o);
}

static void dump_link(struct emu_nlsock *s, const struct nlmsghdr *req,
		      const struct mana_emu_options *opts,
		      const struct emu_link *l, int family)
{
	struct emu_if_addr a[EMU_IF_ADDRS_MAX];
	unsigned int i, n;

	if (l->kind != EMU_LINK_LO && l->kind != EMU_LINK_VF)
		return;
	n = emu_if_addrs(opts, l->kind == EMU_LINK_LO, l->port, a);
	for (i = 0; i < n; i++)
		if (family == AF_UNSPEC || family == a[i].ip.family)
			send_addr(s, req, l, &a[i].ip, a[i].scope);
}

int emu_rtnl_getaddr(struct emu_nlsock *s, const struct nlmsghdr *req)
{
	const struct mana_emu_options *opts = emu_dev.opts;
	int family = AF_UNSPEC;
	struct emu_link l;
	unsigned int i;

	if (!(req->nlmsg_flags & NLM_F_DUMP))
		return -EOPNOTSUPP;
	/* rtgenmsg or ifaddrmsg: the family is the first byte of either */
	if (req->nlmsg_len >= NLMSG_LENGTH(1))
		family = *(const uint8_t *)NLMSG_DATA(req);
	if (family != AF_UNSPEC && family != AF_INET && family != AF_INET6) {
		out_done(s, req);
		return NL_DUMP_DONE;
	}
	for (i = 0; emu_link_get(opts, i, &l); i++)
		dump_link(s, req, opts, &l, family);
	out_done(s, req);
	return NL_DUMP_DONE;
}
