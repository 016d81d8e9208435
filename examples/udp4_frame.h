/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Ethernet/IPv4/UDP frames as the examples and tests send them: headers
 * with the IPv4 checksum set and no UDP checksum (allowed over IPv4); the
 * caller writes the payload.
 */
#ifndef MANA_EXAMPLES_UDP4_FRAME_H
#define MANA_EXAMPLES_UDP4_FRAME_H

#include <string.h>
#include <netinet/in.h>

#include "providers/mana/inet.h"

#define UDP4_FRAME_HDR 42	/* Ethernet 14, IPv4 20, UDP 8 */

struct udp4_flow {
	uint8_t dmac[6], smac[6];
	uint8_t src_ip[4], dst_ip[4];
	uint16_t sport, dport;
};

/* The headers of a @len-byte frame of @fl; returns where the payload goes. */
static inline uint8_t *udp4_frame_headers(uint8_t *f, size_t len,
					  const struct udp4_flow *fl)
{
	uint8_t *ip = f + 14, *udp = ip + 20;

	memcpy(f, fl->dmac, 6);
	memcpy(f + 6, fl->smac, 6);
	mana_put_be16(f + 12, 0x0800);
	memset(ip, 0, 20);
	ip[0] = 0x45;
	mana_put_be16(ip + 2, (uint16_t)(len - 14));
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	memcpy(ip + 12, fl->src_ip, 4);
	memcpy(ip + 16, fl->dst_ip, 4);
	mana_put_be16(ip + 10, mana_inet_csum(ip, 20, 0));
	mana_put_be16(udp, fl->sport);
	mana_put_be16(udp + 2, fl->dport);
	mana_put_be16(udp + 4, (uint16_t)(len - 34));
	mana_put_be16(udp + 6, 0);
	return udp + 8;
}

#endif
