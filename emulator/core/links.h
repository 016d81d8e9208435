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
	unsigned int master;	/* ifindex, 0 = none */
	unsigned int port;	/* IB port of a VF (1-based), else 0 */
	unsigned int mtu;	/* lo 65536, the others --mtu */
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

/* The @i-th interface (0-based, ifindex order); false past the end. */
static inline bool emu_link_get(const struct mana_emu_options *o,
				unsigned int i, struct emu_link *l)
{
	unsigned int up = IFF_UP | IFF_RUNNING | IFF_LOWER_UP;

	memset(l, 0, sizeof(*l));
	if (i >= emu_link_count(o))
		return false;
	l->ifindex = i + 1;
	if (i == 0) {
		l->kind = EMU_LINK_LO;
		snprintf(l->name, sizeof(l->name), "lo");
		l->flags = IFF_LOOPBACK | up;
		l->operstate = IF_OPER_UNKNOWN;
		l->mtu = 65536;
		return true;
	}
	l->flags = IFF_BROADCAST | IFF_MULTICAST;
	l->mtu = o->mtu;
	/* netvsc brings the VF up and down with the synthetic interface */
	if (o->netdev_up)
		l->flags |= up;
	l->operstate = o->netdev_up ? IF_OPER_UP : IF_OPER_DOWN;
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

/* The VF interface of IB port @port, if the mana driver made one. */
static inline bool emu_link_of_port(const struct mana_emu_options *o,
				    unsigned int port, struct emu_link *l)
{
	if (!mana_emu_has_netdevs(o) || port < 1 || port > o->ports)
		return false;
	return emu_link_get(o, emu_link_vf_ifindex(o, port) - 1, l);
}

#endif /* MANA_EMU_LINKS_H */
