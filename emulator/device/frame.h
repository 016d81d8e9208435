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

#include <string.h>
#include <netinet/in.h>

#include "providers/mana/inet.h"
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

#define EMU_IPV4_MIN_HLEN 20
#define EMU_TCP_MIN_HLEN 20
#define EMU_UDP_HLEN 8

/*
 * The usual frame, untagged IPv4 without options, parsed in one go: the
 * same result as emu_frame_parse() (its parse_ipv4() and parse_l4() for
 * ihl 5 at offset 14), inline for the receive path.  false: not such a
 * frame (nothing written).
 */
static inline bool emu_frame_parse_plain(const uint8_t *f, size_t len,
					 struct emu_frame *fr)
{
	const uint8_t *ip = f + EMU_ETH_HLEN;
	uint16_t tot, end, l4 = EMU_ETH_HLEN + EMU_IPV4_MIN_HLEN;
	uint8_t proto;
	bool frag;

	if (len < EMU_ETH_HLEN + EMU_IPV4_MIN_HLEN || f[12] != 0x08 ||
	    f[13] != 0x00 || ip[0] != 0x45)
		return false;
	tot = mana_get_be16(ip + 2);
	if (tot < EMU_IPV4_MIN_HLEN || EMU_ETH_HLEN + (size_t)tot > len)
		return false;
	end = EMU_ETH_HLEN + tot;
	frag = (mana_get_be16(ip + 6) & 0x3fff) != 0;
	proto = ip[9];
	fr->vlan = false;
	fr->tci = 0;
	fr->l3_off = EMU_ETH_HLEN;
	fr->l3_end = end;
	fr->fragment = frag;
	fr->tuple.l3 = MANA_RSS_L3_IPV4;
	fr->tuple.l4_proto = proto;
	memcpy(fr->tuple.src, ip + 12, 4);
	memcpy(fr->tuple.dst, ip + 16, 4);
	if (!frag && ((proto == IPPROTO_UDP && l4 + EMU_UDP_HLEN <= end) ||
		      (proto == IPPROTO_TCP && l4 + EMU_TCP_MIN_HLEN <= end &&
		       l4 + (size_t)(f[l4 + 12] >> 4) * 4 <= end))) {
		fr->l4_proto = proto;
		fr->l4_off = l4;
		fr->tuple.l4_valid = true;
		fr->tuple.sport = mana_get_be16(f + l4);
		fr->tuple.dport = mana_get_be16(f + l4 + 2);
		return true;
	}
	fr->l4_proto = 0;
	fr->l4_off = 0;
	fr->tuple.l4_valid = false;
	fr->tuple.sport = 0;
	fr->tuple.dport = 0;
	return true;
}

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
