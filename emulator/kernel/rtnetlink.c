// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fake NETLINK_ROUTE: the link requests a tool asks about the VM's
 * interfaces (links.h), answered as rtnl_getlink()/rtnl_dump_ifinfo()
 * answer.  Address dumps: rtnetlink_addr.c; anything else is refused with -EOPNOTSUPP, so a program that
 * needs more of rtnetlink fails loudly instead of being misled.
 */
#include <net/if.h>
#include <errno.h>
#include <string.h>

#include <linux/if_arp.h>
#include <linux/rtnetlink.h>

#include "emulator/core/emu.h"
#include "kernel.h"
#include "emulator/core/links.h"
#include "netlink_out.h"

static const uint8_t broadcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static void send_link(struct emu_nlsock *s, const struct nlmsghdr *req,
		      uint16_t flags, const struct emu_link *l)
{
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
	bool running = l->flags & IFF_RUNNING;
	struct nl_out o;

	out_begin(&o, RTM_NEWLINK, flags, req, s->portid);
	ifi.ifi_type = l->kind == EMU_LINK_LO ? ARPHRD_LOOPBACK : ARPHRD_ETHER;
	ifi.ifi_index = l->ifindex;
	ifi.ifi_flags = l->flags;
	memcpy(o.buf + o.len, &ifi, sizeof(ifi));
	o.len += NLMSG_ALIGN(sizeof(ifi));
	out_str(&o, IFLA_IFNAME, l->name);
	out_u32(&o, IFLA_TXQLEN, 1000);
	out_u8(&o, IFLA_OPERSTATE, l->operstate);
	out_u8(&o, IFLA_LINKMODE, 0);
	out_u32(&o, IFLA_MTU, l->mtu);
	out_u32(&o, IFLA_GROUP, 0);
	out_u32(&o, IFLA_PROMISCUITY, 0);
	out_u32(&o, IFLA_NUM_TX_QUEUES, 1);
	out_u32(&o, IFLA_NUM_RX_QUEUES, 1);
	out_u8(&o, IFLA_CARRIER, running);
	if (l->master)
		out_u32(&o, IFLA_MASTER, l->master);
	out_put(&o, IFLA_ADDRESS, l->mac, 6);
	out_put(&o, IFLA_BROADCAST,
		l->kind == EMU_LINK_LO ? l->mac : broadcast, 6);
	if (l->kind == EMU_LINK_VF) {
		out_str(&o, IFLA_PARENT_DEV_NAME, "7870:00:00.0");
		out_str(&o, IFLA_PARENT_DEV_BUS_NAME, "pci");
	}
	out_send(s, &o);
}

/* The ifinfomsg of a request, or NULL when it is too short. */
static const struct ifinfomsg *req_ifinfo(const struct nlmsghdr *req)
{
	if (req->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg)))
		return NULL;
	return NLMSG_DATA(req);
}

/* IFLA_IFNAME of a request, NUL terminated, or NULL. */
static const char *req_ifname(const struct nlmsghdr *req, char *name)
{
	size_t off = NLMSG_LENGTH(sizeof(struct ifinfomsg));

	while (req->nlmsg_len >= off + NLA_HDRLEN) {
		const struct nlattr *nla =
			(const struct nlattr *)((const char *)req + off);
		size_t len = nla->nla_len;

		if (len < NLA_HDRLEN || len > req->nlmsg_len - off)
			return NULL;
		if ((nla->nla_type & NLA_TYPE_MASK) == IFLA_IFNAME) {
			len -= NLA_HDRLEN;
			if (!len || len > IFNAMSIZ)
				return NULL;
			memcpy(name, (const char *)nla + NLA_HDRLEN, len);
			name[len - 1] = 0;
			return name;
		}
		off += NLA_ALIGN(len);
	}
	return NULL;
}

static int getlink(struct emu_nlsock *s, const struct nlmsghdr *req)
{
	const struct mana_emu_options *o = emu_dev.opts;
	const struct ifinfomsg *ifi = req_ifinfo(req);
	char buf[IFNAMSIZ];
	const char *name;
	struct emu_link l;
	unsigned int i;

	if (req->nlmsg_flags & NLM_F_DUMP) {
		for (i = 0; emu_link_get(o, i, &l); i++)
			send_link(s, req, NLM_F_MULTI, &l);
		out_done(s, req);
		return NL_DUMP_DONE;
	}
	if (!ifi)
		return -EINVAL;
	name = req_ifname(req, buf);
	for (i = 0; emu_link_get(o, i, &l); i++) {
		if (ifi->ifi_index > 0 ? (unsigned int)ifi->ifi_index == l.ifindex :
			name && !strcmp(name, l.name)) {
			send_link(s, req, 0, &l);
			return 0;
		}
	}
	return ifi->ifi_index > 0 || name ? -ENODEV : -EINVAL;
}

int emu_rtnl_dispatch(struct emu_nlsock *s, const struct nlmsghdr *req)
{
	switch (req->nlmsg_type) {
	case RTM_GETLINK:
		return getlink(s, req);
	case RTM_GETADDR:
		return emu_rtnl_getaddr(s, req);
	default:
		return -EOPNOTSUPP;
	}
}
