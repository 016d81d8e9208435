/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RoCE GID table of each port, derived from the VM's addresses as the
 * kernel's GID cache derives it from the netdev: index 0 is the IPv6
 * link-local address made from the port's MAC (EUI-64), then one entry per
 * --ip address of the port in the order given (IPv4 as ::ffff:a.b.c.d).
 * Every entry is RoCE v2 (MANA encapsulates in UDP only).  One table for
 * sysfs, the GID ioctls, rtnetlink addresses and the device's ARP/ND
 * answers, so every view agrees.
 */
#ifndef MANA_EMU_GID_H
#define MANA_EMU_GID_H

#include <stdbool.h>
#include <stdint.h>

#include "options.h"

#define EMU_GID_TBL_LEN 16	/* gid_tbl_len of the RNIC port */

/*
 * Does @port have a GID table at all?  Only port 1 is a RoCE port: the
 * single-device era gives ROCE_UDP_ENCAP to port 1 only, and the split
 * era's RNIC device has one port (research 2.1, 2.10).  Other ports have
 * gid_tbl_len 0.
 */
bool emu_gid_roce_port(const struct mana_emu_options *o, unsigned int port);

/* Entries in use on @port (1-based): 1 + its --ip addresses; 0 if not RoCE. */
unsigned int emu_gid_count(const struct mana_emu_options *o, unsigned int port);

/* GID @index of @port: 0, or -EINVAL (bad port) / -ENODATA (empty slot). */
int emu_gid_get(const struct mana_emu_options *o, unsigned int port,
		unsigned int index, uint8_t gid[16]);

/* Does @port own this address (a GID, IPv4 mapped)? For ARP/ND answers. */
bool emu_gid_port_owns(const struct mana_emu_options *o, unsigned int port,
		       const uint8_t gid[16]);

/* The port's IPv6 link-local address from its MAC (GID index 0). */
void emu_gid_link_local(const struct mana_emu_options *o, unsigned int port,
			uint8_t gid[16]);

/*
 * The addresses of an interface, as `ip addr` lists them (rtnetlink's
 * RTM_GETADDR and getifaddrs() show the same ones, in this order): lo's
 * 127.0.0.1/8 and ::1/128 (@loopback), else the VF of @port's --ip
 * addresses and its link-local fe80::/64.  @scope is RT_SCOPE_*.
 */
#define EMU_IF_ADDRS_MAX (MANA_EMU_MAX_IPS + 2)
struct emu_if_addr {
	struct mana_emu_ip ip;
	uint8_t scope;
};
unsigned int emu_if_addrs(const struct mana_emu_options *o, bool loopback,
			  unsigned int port, struct emu_if_addr out[EMU_IF_ADDRS_MAX]);

/* Is @addr (4 or 16 bytes, by @ip's family) in @ip's subnet? */
bool emu_ip_in_subnet(const struct mana_emu_ip *ip, const uint8_t *addr);

/* "fe80:0000:...:0001", as sysfs prints a GID (40 bytes with the NUL). */
void emu_gid_format(const uint8_t gid[16], char *buf, unsigned long len);

/* Is the GID an IPv4-mapped address (::ffff:a.b.c.d)? */
static inline bool emu_gid_is_v4(const uint8_t gid[16])
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	for (unsigned int i = 0; i < 12; i++)
		if (gid[i] != prefix[i])
			return false;
	return true;
}

#endif /* MANA_EMU_GID_H */
