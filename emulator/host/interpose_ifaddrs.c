// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * getifaddrs(): the VM's interfaces and addresses, as `ip addr` shows
 * them through the emulated rtnetlink (kernel/rtnetlink*.c).  glibc builds
 * its list over a netlink socket of its own, past our interposers, so it
 * would show the host's interfaces: libfabric's verbs provider takes its
 * source addresses from this list (a passive endpoint with no node, rxm),
 * and found none of the VM's.  The list is one allocation, as glibc's is,
 * so glibc's freeifaddrs() (a free()) releases it.  AF_PACKET entries
 * carry the link address but no statistics (ifa_data NULL).
 */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <netpacket/packet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/core/emu.h"
#include "emulator/core/gid.h"
#include "emulator/core/links.h"
#include "emulator/kernel/kernel.h"
#include "init.h"
#include "interpose.h"

struct ifa_entry {
	struct ifaddrs ifa;
	struct sockaddr_storage addr, mask, brd;
	char name[IFNAMSIZ];
};

/* Address @ip (AF_INET/AF_INET6, @prefix bits) on link @l, into @e. */
static void fill_ip(struct ifa_entry *e, const struct emu_link *l,
		    const struct mana_emu_ip *ip)
{
	unsigned int i, bits = ip->prefix_len;

	if (ip->family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)&e->addr;
		struct sockaddr_in *m = (struct sockaddr_in *)&e->mask;
		struct sockaddr_in *b = (struct sockaddr_in *)&e->brd;
		uint32_t mask = bits ? ~0u << (32 - (bits > 32 ? 32 : bits)) : 0;

		a->sin_family = m->sin_family = AF_INET;
		memcpy(&a->sin_addr, ip->addr, 4);
		m->sin_addr.s_addr = htonl(mask);
		if (l->flags & IFF_BROADCAST) {
			b->sin_family = AF_INET;
			b->sin_addr.s_addr = a->sin_addr.s_addr | ~m->sin_addr.s_addr;
			e->ifa.ifa_broadaddr = (struct sockaddr *)b;
		}
	} else {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&e->addr;
		struct sockaddr_in6 *m = (struct sockaddr_in6 *)&e->mask;

		a->sin6_family = m->sin6_family = AF_INET6;
		memcpy(&a->sin6_addr, ip->addr, 16);
		if (ip->addr[0] == 0xfe && (ip->addr[1] & 0xc0) == 0x80)
			a->sin6_scope_id = l->ifindex;
		for (i = 0; i < 16; i++, bits = bits > 8 ? bits - 8 : 0)
			m->sin6_addr.s6_addr[i] =
				(uint8_t)(0xff00 >> (bits > 8 ? 8 : bits));
	}
	e->ifa.ifa_addr = (struct sockaddr *)&e->addr;
	e->ifa.ifa_netmask = (struct sockaddr *)&e->mask;
}

static void fill_link(struct ifa_entry *e, const struct emu_link *l)
{
	struct sockaddr_ll *ll = (struct sockaddr_ll *)&e->addr;

	ll->sll_family = AF_PACKET;
	ll->sll_ifindex = (int)l->ifindex;
	ll->sll_hatype = l->kind == EMU_LINK_LO ? ARPHRD_LOOPBACK : ARPHRD_ETHER;
	ll->sll_halen = 6;
	memcpy(ll->sll_addr, l->mac, 6);
	e->ifa.ifa_addr = (struct sockaddr *)&e->addr;
}

/*
 * Entries of link @l in @e (NULL: count only): its AF_PACKET entry (@pass
 * 0), else its addresses (emu_if_addrs(): rtnetlink's list).
 */
static unsigned int link_entries(const struct mana_emu_options *o,
				 const struct emu_link *l, int pass,
				 struct ifa_entry *e)
{
	struct emu_if_addr a[EMU_IF_ADDRS_MAX];
	unsigned int i, n;

	if (pass == 0)
		n = 1;
	else if (l->kind == EMU_LINK_LO || l->kind == EMU_LINK_VF)
		n = emu_if_addrs(o, l->kind == EMU_LINK_LO, l->port, a);
	else
		n = 0;
	for (i = 0; e && i < n; i++) {
		snprintf(e[i].name, IFNAMSIZ, "%s", l->name);
		e[i].ifa.ifa_name = e[i].name;
		e[i].ifa.ifa_flags = l->flags;
		if (pass == 0)
			fill_link(&e[i], l);
		else
			fill_ip(&e[i], l, &a[i].ip);
	}
	return n;
}

static unsigned int all_entries(const struct mana_emu_options *o,
				struct ifa_entry *e)
{
	struct emu_link l;
	unsigned int i, n = 0;
	int pass;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; emu_link_get(o, i, &l); i++)
			n += link_entries(o, &l, pass, e ? e + n : NULL);
	return n;
}

EMU_EXPORT int getifaddrs(struct ifaddrs **ifap)
{
	const struct mana_emu_options *o = &emu.opts;
	struct ifa_entry *e;
	unsigned int i, n;

	if (!emu_ready())
		return REAL(getifaddrs)(ifap);
	n = all_entries(o, NULL);
	e = calloc(n ? n : 1, sizeof(*e));
	if (!e)
		return -1;	/* errno ENOMEM */
	n = all_entries(o, e);
	for (i = 0; i + 1 < n; i++)
		e[i].ifa.ifa_next = &e[i + 1].ifa;
	*ifap = n ? &e[0].ifa : NULL;
	if (!n)
		free(e);
	return 0;
}
