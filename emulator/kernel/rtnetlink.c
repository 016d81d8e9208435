// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fake NETLINK_ROUTE: the link requests a tool asks about the VM's
 * interfaces (links.h), answered as rtnl_getlink()/rtnl_dump_ifinfo()
 * answer, and `ip link set` (RTM_NEWLINK/RTM_SETLINK on an existing
 * interface: up, down, mtu; link.c makes the change).  Address dumps:
 * rtnetlink_addr.c; anything else is refused with -EOPNOTSUPP, so a
 * program that needs more of rtnetlink fails loudly instead of being
 * misled.
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

/*
 * Attribute @type of a request (NULL if absent); *@bad when the
 * attributes do not parse or one outside @known (a bit per IFLA_*) is
 * there.
 */
static const struct nlattr *req_attr(const struct nlmsghdr *req, int type,
				     uint64_t known, bool *bad)
{
	size_t off = NLMSG_LENGTH(sizeof(struct ifinfomsg));
	const struct nlattr *found = NULL;

	*bad = false;
	while (req->nlmsg_len >= off + NLA_HDRLEN) {
		const struct nlattr *nla =
			(const struct nlattr *)((const char *)req + off);
		size_t len = nla->nla_len;
		int t = nla->nla_type & NLA_TYPE_MASK;

		if (len < NLA_HDRLEN || len > req->nlmsg_len - off) {
			*bad = true;
			return NULL;
		}
		if (t >= 64 || !(known & (1ull << t)))
			*bad = true;
		if (t == type)
			found = nla;
		off += NLA_ALIGN(len);
	}
	return found;
}

/* IFLA_IFNAME of a request, NUL terminated, or NULL. */
static const char *req_ifname(const struct nlmsghdr *req, char *name)
{
	const struct nlattr *nla;
	size_t len;
	bool bad;

	nla = req_attr(req, IFLA_IFNAME, ~0ull, &bad);
	if (!nla)
		return NULL;
	len = nla->nla_len - NLA_HDRLEN;
	if (!len || len > IFNAMSIZ)
		return NULL;
	memcpy(name, (const char *)nla + NLA_HDRLEN, len);
	name[len - 1] = 0;
	return name;
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

/*
 * rtnl_newlink()/rtnl_setlink() on an existing interface: do_setlink()
 * sets the MTU, then the flags.  Only IFF_UP and IFLA_MTU are emulated:
 * any other attribute or flag change is refused before anything changes.
 */
static int setlink(const struct nlmsghdr *req)
{
	const uint64_t known = 1ull << IFLA_IFNAME | 1ull << IFLA_MTU |
			       1ull << IFLA_EXT_MASK;
	const struct mana_emu_options *o = emu_dev.opts;
	const struct ifinfomsg *ifi = req_ifinfo(req);
	const struct nlattr *mtu;
	unsigned int flags;
	char buf[IFNAMSIZ];
	const char *name;
	struct emu_link l;
	bool bad, found;
	uint32_t v;
	int ret;

	if (!emu_net_admin())
		return -EPERM;
	if (!ifi)
		return -EINVAL;
	name = req_ifname(req, buf);
	if (ifi->ifi_index > 0)
		found = emu_link_get(o, ifi->ifi_index - 1, &l);
	else
		found = name && emu_link_by_name(o, name, &l);
	if (!found) {
		/* ip link add: no interface of a new kind in this VM */
		if (req->nlmsg_type == RTM_NEWLINK &&
		    (req->nlmsg_flags & NLM_F_CREATE))
			return -EOPNOTSUPP;
		/*
		 * rtnl_newlink() answers ENODEV also when no link is named
		 * (iproute2 probes it so: EINVAL or EOPNOTSUPP would send it
		 * to the old ioctls), rtnl_setlink() EINVAL.
		 */
		return ifi->ifi_index > 0 || name ||
		       req->nlmsg_type == RTM_NEWLINK ? -ENODEV : -EINVAL;
	}
	mtu = req_attr(req, IFLA_MTU, known, &bad);
	/* a name other than the interface's is a rename */
	if (bad || (name && ifi->ifi_index > 0 && strcmp(name, l.name))) {
		emu_log("rtnetlink: %s: only up, down and mtu are emulated",
			l.name);
		return -EOPNOTSUPP;
	}
	flags = ifi->ifi_flags;
	if (ifi->ifi_change)	/* rtnl_dev_combine_flags() */
		flags = (flags & ifi->ifi_change) |
			(l.flags & ~ifi->ifi_change);
	if (mtu) {
		if (mtu->nla_len < NLA_HDRLEN + sizeof(v))
			return -EINVAL;
		memcpy(&v, (const char *)mtu + NLA_HDRLEN, sizeof(v));
		ret = emu_link_set_mtu(l.ifindex, v);
		if (ret)
			return ret;
	}
	if (!ifi->ifi_flags && !ifi->ifi_change)
		return 0;
	/* the MTU may have changed the flags' view of the link: look again */
	if (!emu_link_get(o, l.ifindex - 1, &l))
		return -ENODEV;
	return emu_link_change_flags(&l, flags);
}

int emu_rtnl_dispatch(struct emu_nlsock *s, const struct nlmsghdr *req)
{
	switch (req->nlmsg_type) {
	case RTM_GETLINK:
		return getlink(s, req);
	case RTM_NEWLINK:
	case RTM_SETLINK:
		return setlink(req);
	case RTM_GETADDR:
		return emu_rtnl_getaddr(s, req);
	default:
		return -EOPNOTSUPP;
	}
}
