/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The network interfaces of the emulated Azure VM, one table for sysfs,
 * NETLINK_ROUTE and RDMA netlink so every view agrees.
 *
 * On Azure every vNIC is a synthetic hv_netvsc interface (eth0, eth1,
 * ...) and, with Accelerated Networking, a MANA VF interface per vport
 * that netvsc enslaves: the VF's master is the synthetic interface, both
 * carry the same MAC, the VF has IFF_SLAVE, and netvsc opens and closes
 * the VF with itself.  The VF is named by udev from the PCI domain
 * (0x7870 = 30832) and dev_port: enP30832s1, enP30832s1d1, ...
 * ifindex: lo 1, the synthetic interfaces 2.., then the VFs.
 */
#ifndef MANA_EMU_LINKS_H
#define MANA_EMU_LINKS_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <linux/if.h>

#include "netdev.h"
#include "options.h"

#define EMU_VF_NAME "enP30832s1"

enum emu_link_kind {
	EMU_LINK_LO,
	EMU_LINK_SYNTHETIC,	/* hv_netvsc, the master */
	EMU_LINK_VF,		/* mana, the slave that owns the vport */
};

struct emu_link {
	enum emu_link_kind kind;
	unsigned int ifindex;
	char name[IFNAMSIZ];
	uint8_t mac[6];
	unsigned int flags;	/* IFF_* as RTM_NEWLINK carries them */
	uint8_t operstate;	/* IF_OPER_* */
	bool carrier;
	unsigned int master;	/* ifindex, 0 = none */
	unsigned int port;	/* IB port of a VF (1-based), else 0 */
	unsigned int mtu;	/* now (netdev.h); at start lo 65536, else --mtu */
};

static inline unsigned int emu_link_count(const struct mana_emu_options *o)
{
	return 1 + o->ports * (mana_emu_has_netdevs(o) ? 2 : 1);
}

static inline unsigned int emu_link_vf_ifindex(const struct mana_emu_options *o,
					       unsigned int port)
{
	return 2 + o->ports + port - 1;
}

/* The static flags of the @i-th interface, its state aside. */
static inline bool emu_link_static(const struct mana_emu_options *o,
				   unsigned int i, struct emu_link *l)
{
	memset(l, 0, sizeof(*l));
	if (i >= emu_link_count(o))
		return false;
	l->ifindex = i + 1;
	if (i == 0) {
		l->kind = EMU_LINK_LO;
		snprintf(l->name, sizeof(l->name), "lo");
		l->flags = IFF_LOOPBACK;
		return true;
	}
	l->flags = IFF_BROADCAST | IFF_MULTICAST;
	if (i <= o->ports) {
		l->kind = EMU_LINK_SYNTHETIC;
		snprintf(l->name, sizeof(l->name), "eth%u", i - 1);
		mana_emu_port_mac(o, i, l->mac);
		return true;
	}
	l->kind = EMU_LINK_VF;
	l->port = i - o->ports;
	l->flags |= IFF_SLAVE;
	l->master = l->port + 1;
	if (l->port == 1)
		snprintf(l->name, sizeof(l->name), EMU_VF_NAME);
	else
		snprintf(l->name, sizeof(l->name), EMU_VF_NAME "d%u",
			 (l->port - 1) & 7);	/* ports <= MANA_EMU_MAX_PORTS */
	mana_emu_port_mac(o, l->port, l->mac);
	return true;
}

/*
 * The @i-th interface (0-based, ifindex order) as it is now (flags,
 * operstate, MTU from netdev.h); false past the end.
 */
static inline bool emu_link_get(const struct mana_emu_options *o,
				unsigned int i, struct emu_link *l)
{
	struct emu_netdev nd;

	if (!emu_link_static(o, i, l) || !emu_netdev_get(o, i + 1, &nd))
		return false;
	l->flags = emu_netdev_ifflags(&nd, l->flags);
	l->operstate = nd.operstate;
	l->carrier = (nd.flags & IFF_UP) && nd.carrier;
	l->mtu = nd.mtu;
	return true;
}

/* The interface named @name (ifindex order), if the VM has it. */
static inline bool emu_link_by_name(const struct mana_emu_options *o,
				    const char *name, struct emu_link *l)
{
	unsigned int i;

	for (i = 0; emu_link_static(o, i, l); i++)
		if (!strncmp(l->name, name, IFNAMSIZ))
			return emu_link_get(o, i, l);
	return false;
}

/* The VF interface of IB port @port, if the mana driver made one. */
static inline bool emu_link_of_port(const struct mana_emu_options *o,
				    unsigned int port, struct emu_link *l)
{
	if (!mana_emu_has_netdevs(o) || port < 1 || port > o->ports)
		return false;
	return emu_link_get(o, emu_link_vf_ifindex(o, port) - 1, l);
}

#endif /* MANA_EMU_LINKS_H */
