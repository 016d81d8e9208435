/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the emulated NIC understands of an Ethernet frame: one optional
 * 802.1Q tag, IPv4 (options, fragments) or IPv6 (hop-by-hop, routing,
 * destination options and fragment headers), then TCP or UDP.  Used for
 * TX checksum offload, RX checksum verification, VLAN stripping and the
 * RSS hash input.
 */
#ifndef MANA_EMU_FRAME_H
#define MANA_EMU_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "providers/mana/toeplitz.h"

#define EMU_ETH_HLEN 14
#define EMU_VLAN_HLEN 4
#define EMU_ETH_P_8021Q 0x8100

enum emu_csum {
	EMU_CSUM_NONE,		/* nothing to check (no such header) */
	EMU_CSUM_OK,
	EMU_CSUM_BAD,
};

struct emu_frame {
	bool vlan;		/* an 802.1Q tag follows the MAC addresses */
	uint16_t tci;		/* its PCP/DEI/VID */
	uint16_t l3_off;	/* IP header, 0 if not IP */
	uint16_t l3_end;	/* end of the IP packet (Ethernet padding excluded) */
	uint16_t l4_off;	/* TCP/UDP header when l4_proto is set */
	uint8_t l4_proto;	/* IPPROTO_TCP or IPPROTO_UDP, else 0 */
	bool fragment;
	struct mana_rss_tuple tuple;
};

/* Parse @len bytes; never fails, a frame it does not understand is L2 only. */
void emu_frame_parse(const uint8_t *f, size_t len, struct emu_frame *fr);

/* TX offload: fill the IPv4 header and/or TCP/UDP checksum in place. */
void emu_frame_tx_csum(uint8_t *f, const struct emu_frame *fr, bool ip,
		       bool tcp, bool udp);

/* RX: verify the IPv4 header checksum and the TCP/UDP checksum. */
void emu_frame_rx_csum(const uint8_t *f, const struct emu_frame *fr,
		       enum emu_csum *ip, enum emu_csum *l4);

/*
 * emu_frame_rx_csum()'s usual case, inline: an IPv4 header of 20 bytes
 * (the one's complement sum of its ten words is 0xffff when it is right;
 * the sum does not depend on byte order).  @hdr: 20 readable bytes.
 */
static inline bool emu_ipv4_hdr20_ok(const uint8_t *hdr)
{
	uint64_t a, b, acc;
	uint32_t c;

	__builtin_memcpy(&a, hdr, 8);
	__builtin_memcpy(&b, hdr + 8, 8);
	__builtin_memcpy(&c, hdr + 16, 4);
	acc = (a & 0xffffffffu) + (a >> 32) + (b & 0xffffffffu) + (b >> 32) + c;
	acc = (acc & 0xffffffffu) + (acc >> 32);
	acc = (acc & 0xffffffffu) + (acc >> 32);
	acc = (acc & 0xffff) + (acc >> 16);	/* <= 0x1fffe */
	acc = (acc & 0xffff) + (acc >> 16);	/* <= 0xffff */
	return acc == 0xffff;
}

/*
 * Insert an 802.1Q tag after the MAC addresses of the @len-byte frame in
 * @f, which has room for 4 more bytes.  Returns the new length.
 */
size_t emu_frame_vlan_insert(uint8_t *f, size_t len, uint16_t tci);

/* Remove the tag found by emu_frame_parse(); returns the new length. */
size_t emu_frame_vlan_strip(uint8_t *f, size_t len);

#endif /* MANA_EMU_FRAME_H */
