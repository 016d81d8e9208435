// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RoCE GID table of the emulated ports (gid.h): computed from the
 * options every time, so sysfs, the GID ioctls, rtnetlink and the
 * device's ARP/ND answers cannot disagree.
 */
#include "gid.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/rtnetlink.h>

bool emu_gid_roce_port(const struct mana_emu_options *o, unsigned int port)
{
	return port == 1 && port <= o->ports;
}

void emu_gid_link_local(const struct mana_emu_options *o, unsigned int port,
			uint8_t gid[16])
{
	uint8_t mac[6];

	mana_emu_port_mac(o, port, mac);
	memset(gid, 0, 16);
	gid[0] = 0xfe;
	gid[1] = 0x80;
	/* EUI-64: the U/L bit flipped, ff:fe in the middle */
	gid[8] = mac[0] ^ 0x02;
	gid[9] = mac[1];
	gid[10] = mac[2];
	gid[11] = 0xff;
	gid[12] = 0xfe;
	gid[13] = mac[3];
	gid[14] = mac[4];
	gid[15] = mac[5];
}

/* The GID of an --ip address: IPv4 as ::ffff:a.b.c.d (rdma_ip2gid). */
static void ip_gid(const struct mana_emu_ip *ip, uint8_t gid[16])
{
	if (ip->family == AF_INET6) {
		memcpy(gid, ip->addr, 16);
		return;
	}
	memset(gid, 0, 16);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(gid + 12, ip->addr, 4);
}

/* The @n-th (0-based) --ip address of @port, or NULL. */
static const struct mana_emu_ip *port_ip(const struct mana_emu_options *o,
					 unsigned int port, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < o->nips; i++)
		if (o->ips[i].port == port && !n--)
			return &o->ips[i];
	return NULL;
}

unsigned int emu_gid_count(const struct mana_emu_options *o, unsigned int port)
{
	unsigned int n = 0;

	if (!emu_gid_roce_port(o, port))
		return 0;
	while (port_ip(o, port, n))
		n++;
	return 1 + n;
}

int emu_gid_get(const struct mana_emu_options *o, unsigned int port,
		unsigned int index, uint8_t gid[16])
{
	const struct mana_emu_ip *ip;

	if (!emu_gid_roce_port(o, port) || index >= EMU_GID_TBL_LEN)
		return -EINVAL;
	if (!index) {
		emu_gid_link_local(o, port, gid);
		return 0;
	}
	ip = port_ip(o, port, index - 1);
	if (!ip)
		return -ENODATA;
	ip_gid(ip, gid);
	return 0;
}

bool emu_gid_port_owns(const struct mana_emu_options *o, unsigned int port,
		       const uint8_t gid[16])
{
	const struct mana_emu_ip *ip;
	uint8_t g[16];
	unsigned int n;

	if (port < 1 || port > o->ports)
		return false;
	emu_gid_link_local(o, port, g);
	if (!memcmp(g, gid, 16))
		return true;
	for (n = 0; (ip = port_ip(o, port, n)); n++) {
		ip_gid(ip, g);
		if (!memcmp(g, gid, 16))
			return true;
	}
	return false;
}

void emu_gid_format(const uint8_t gid[16], char *buf, unsigned long len)
{
	snprintf(buf, len,
		 "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:"
		 "%02x%02x:%02x%02x",
		 gid[0], gid[1], gid[2], gid[3], gid[4], gid[5], gid[6], gid[7],
		 gid[8], gid[9], gid[10], gid[11], gid[12], gid[13], gid[14],
		 gid[15]);
}

unsigned int emu_if_addrs(const struct mana_emu_options *o, bool loopback,
			  unsigned int port, struct emu_if_addr out[EMU_IF_ADDRS_MAX])
{
	unsigned int i, n = 0;

	memset(out, 0, sizeof(*out) * EMU_IF_ADDRS_MAX);
	if (loopback) {
		out[0].ip = (struct mana_emu_ip){ .family = AF_INET, .prefix_len = 8,
						  .addr = { 127, 0, 0, 1 } };
		out[0].scope = RT_SCOPE_HOST;
		out[1].ip = (struct mana_emu_ip){ .family = AF_INET6,
						  .prefix_len = 128,
						  .addr = { [15] = 1 } };
		out[1].scope = RT_SCOPE_HOST;
		return 2;
	}
	for (i = 0; i < o->nips && n < MANA_EMU_MAX_IPS; i++)
		if (o->ips[i].port == port) {
			out[n].ip = o->ips[i];
			out[n++].scope = RT_SCOPE_UNIVERSE;
		}
	out[n].ip.family = AF_INET6;
	out[n].ip.prefix_len = 64;
	out[n].ip.port = port;
	emu_gid_link_local(o, port, out[n].ip.addr);
	out[n++].scope = RT_SCOPE_LINK;
	return n;
}

bool emu_ip_in_subnet(const struct mana_emu_ip *ip, const uint8_t *addr)
{
	unsigned int b, bits = ip->prefix_len;

	for (b = 0; b < bits; b++)
		if ((ip->addr[b / 8] ^ addr[b / 8]) & (0x80 >> (b % 8)))
			return false;
	return true;
}
