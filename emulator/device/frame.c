// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ethernet/IP/TCP/UDP parsing and Internet checksums for the device model
 * (see frame.h).  Every offset is checked against the bytes present: a
 * truncated or odd frame degrades to "not understood", never to a read
 * past the buffer.
 */
#include "frame.h"

#include <string.h>
#include <netinet/in.h>

#include "providers/mana/inet.h"

#define ETH_P_IPV4 0x0800
#define ETH_P_IPV6 0x86DD
#define IPV4_MIN_HLEN 20
#define IPV6_HLEN 40
#define TCP_MIN_HLEN 20
#define UDP_HLEN 8
#define IPV6_EXT_HOPOPTS 0
#define IPV6_EXT_ROUTING 43
#define IPV6_EXT_FRAGMENT 44
#define IPV6_EXT_DSTOPTS 60
#define IPV6_MAX_EXT 8		/* give up on longer header chains */

static inline __attribute__((always_inline)) void
parse_l4(const uint8_t *f, struct emu_frame *fr, uint8_t proto, uint16_t off)
{
	size_t need = proto == IPPROTO_TCP ? TCP_MIN_HLEN : UDP_HLEN;

	fr->tuple.l4_proto = proto;
	if (fr->fragment || (proto != IPPROTO_TCP && proto != IPPROTO_UDP) ||
	    off + need > fr->l3_end)
		return;
	if (proto == IPPROTO_TCP && off + (size_t)(f[off + 12] >> 4) * 4 >
	    fr->l3_end)
		return;
	fr->l4_proto = proto;
	fr->l4_off = off;
	fr->tuple.l4_valid = true;
	fr->tuple.sport = mana_get_be16(f + off);
	fr->tuple.dport = mana_get_be16(f + off + 2);
}

static void parse_ipv4(const uint8_t *f, size_t len, struct emu_frame *fr,
		       uint16_t off)
{
	const uint8_t *ip = f + off;
	size_t hlen, tot;

	if ((size_t)off + IPV4_MIN_HLEN > len || ip[0] >> 4 != 4)
		return;
	hlen = (size_t)(ip[0] & 0xf) * 4;
	tot = mana_get_be16(ip + 2);
	if (hlen < IPV4_MIN_HLEN || tot < hlen || off + tot > len)
		return;
	fr->l3_off = off;
	fr->l3_end = off + tot;
	/* MF set or a nonzero offset: ports are not in this fragment */
	fr->fragment = (mana_get_be16(ip + 6) & 0x3fff) != 0;
	fr->tuple.l3 = MANA_RSS_L3_IPV4;
	memcpy(fr->tuple.src, ip + 12, 4);
	memcpy(fr->tuple.dst, ip + 16, 4);
	parse_l4(f, fr, ip[9], off + hlen);
}

/* Skip IPv6 extension headers; returns the upper-layer protocol. */
static uint8_t ipv6_skip_ext(const uint8_t *f, struct emu_frame *fr,
			     uint16_t *off)
{
	uint8_t next = f[fr->l3_off + 6];
	int i;

	for (i = 0; i < IPV6_MAX_EXT; i++) {
		const uint8_t *h = f + *off;
		size_t hlen;

		switch (next) {
		case IPV6_EXT_HOPOPTS:
		case IPV6_EXT_ROUTING:
		case IPV6_EXT_DSTOPTS:
			if (*off + 8u > fr->l3_end)
				return 0;
			hlen = ((size_t)h[1] + 1) * 8;
			break;
		case IPV6_EXT_FRAGMENT:
			if (*off + 8u > fr->l3_end)
				return 0;
			fr->fragment = true;
			hlen = 8;
			break;
		default:
			return next;
		}
		next = h[0];
		if (*off + hlen > fr->l3_end)
			return 0;
		*off += hlen;
	}
	return 0;
}

static void parse_ipv6(const uint8_t *f, size_t len, struct emu_frame *fr,
		       uint16_t off)
{
	const uint8_t *ip = f + off;
	uint16_t l4;
	uint8_t proto;

	if ((size_t)off + IPV6_HLEN > len || ip[0] >> 4 != 6 ||
	    off + IPV6_HLEN + (size_t)mana_get_be16(ip + 4) > len)
		return;
	fr->l3_off = off;
	fr->l3_end = off + IPV6_HLEN + mana_get_be16(ip + 4);
	fr->tuple.l3 = MANA_RSS_L3_IPV6;
	memcpy(fr->tuple.src, ip + 8, 16);
	memcpy(fr->tuple.dst, ip + 24, 16);
	l4 = off + IPV6_HLEN;
	proto = ipv6_skip_ext(f, fr, &l4);
	parse_l4(f, fr, proto, l4);
}

void emu_frame_parse(const uint8_t *f, size_t len, struct emu_frame *fr)
{
	uint16_t type, off = EMU_ETH_HLEN;

	if (emu_frame_parse_plain(f, len, fr))
		return;

	/*
	 * Field by field rather than a memset of the whole struct: the
	 * tuple's addresses are only read for the L3 type set below, which
	 * copies them.
	 */
	fr->vlan = false;
	fr->tci = 0;
	fr->l3_off = 0;
	fr->l3_end = 0;
	fr->l4_off = 0;
	fr->l4_proto = 0;
	fr->fragment = false;
	fr->tuple.l3 = MANA_RSS_L3_NONE;
	fr->tuple.l4_proto = 0;
	fr->tuple.l4_valid = false;
	fr->tuple.sport = 0;
	fr->tuple.dport = 0;
	if (len < EMU_ETH_HLEN)
		return;
	type = mana_get_be16(f + 12);
	if (type == EMU_ETH_P_8021Q && len >= EMU_ETH_HLEN + EMU_VLAN_HLEN) {
		fr->vlan = true;
		fr->tci = mana_get_be16(f + 14);
		type = mana_get_be16(f + 16);
		off += EMU_VLAN_HLEN;
	}
	if (type == ETH_P_IPV4)
		parse_ipv4(f, len, fr, off);
	else if (type == ETH_P_IPV6)
		parse_ipv6(f, len, fr, off);
}

/*
 * One's complement sums eight bytes at a time: the words are added as
 * little-endian into a 64-bit accumulator and the folded result swapped
 * once at the end (RFC 1071: the sum does not depend on byte order), so
 * a big-endian 16-bit value x joins a sum as bswap16(x).
 */
static inline __attribute__((always_inline)) uint64_t
csum_acc(uint64_t acc, const uint8_t *p, size_t len)
{
	uint64_t w;
	uint32_t v;
	uint16_t h;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, sizeof(w));
		acc += (w & 0xffffffffu) + (w >> 32);
	}
	if (i + 4 <= len) {
		memcpy(&v, p + i, sizeof(v));
		acc += v;
		i += 4;
	}
	if (i + 2 <= len) {
		memcpy(&h, p + i, sizeof(h));
		acc += h;
		i += 2;
	}
	if (i < len)
		acc += p[i];	/* the odd byte is the high byte of its BE word */
	return acc;
}

/* The accumulator folded to 16 bits, in network (big-endian) order. */
static inline uint16_t csum_fold(uint64_t acc)
{
	acc = (acc & 0xffffffffu) + (acc >> 32);
	acc = (acc & 0xffffffffu) + (acc >> 32);
	acc = (acc & 0xffff) + (acc >> 16);
	acc = (acc & 0xffff) + (acc >> 16);
	acc = (acc & 0xffff) + (acc >> 16);
	return __builtin_bswap16((uint16_t)acc);
}

/* mana_csum_fold(mana_csum_add(0, p, len)) */
static uint16_t csum16(const uint8_t *p, size_t len)
{
	return csum_fold(csum_acc(0, p, len));
}

/* csum16() of an IPv4 header, unrolled for the usual 20 bytes */
static inline uint16_t ipv4_hdr_sum(const uint8_t *hdr)
{
	size_t hlen = (size_t)(hdr[0] & 0xf) * 4;

	if (hlen == 20)
		return csum_fold(csum_acc(0, hdr, 20));
	return csum16(hdr, hlen);
}

/*
 * The folded sum of the L4 segment and its pseudo-header (RFC 793/768,
 * RFC 8200 8.1).
 */
static uint16_t l4_sum(const uint8_t *f, const struct emu_frame *fr)
{
	uint32_t l4len = fr->l3_end - fr->l4_off;
	const uint8_t *ip = f + fr->l3_off;
	uint64_t acc;

	if (fr->tuple.l3 == MANA_RSS_L3_IPV4)
		acc = csum_acc(0, ip + 12, 8);
	else
		acc = csum_acc(0, ip + 8, 32);
	acc += __builtin_bswap16(fr->l4_proto) +
	       __builtin_bswap16((uint16_t)(l4len >> 16)) +
	       __builtin_bswap16((uint16_t)l4len);
	return csum_fold(csum_acc(acc, f + fr->l4_off, l4len));
}

static unsigned int l4_csum_off(uint8_t proto)
{
	return proto == IPPROTO_TCP ? 16 : 6;
}

void emu_frame_tx_csum(uint8_t *f, const struct emu_frame *fr, bool ip,
		       bool tcp, bool udp)
{
	uint8_t *hdr = f + fr->l3_off;
	uint16_t c;

	if (ip && fr->tuple.l3 == MANA_RSS_L3_IPV4) {
		mana_put_be16(hdr + 10, 0);
		c = ~ipv4_hdr_sum(hdr);
		mana_put_be16(hdr + 10, c);
	}
	/* a request that does not match the frame is not applied */
	if (!fr->l4_proto || (fr->l4_proto == IPPROTO_TCP && !tcp) ||
	    (fr->l4_proto == IPPROTO_UDP && !udp))
		return;
	/* computed from scratch: any pre-filled pseudo-header sum is replaced */
	mana_put_be16(f + fr->l4_off + l4_csum_off(fr->l4_proto), 0);
	c = ~l4_sum(f, fr);
	if (fr->l4_proto == IPPROTO_UDP && !c)
		c = 0xffff;	/* 0 means "no checksum" for UDP */
	mana_put_be16(f + fr->l4_off + l4_csum_off(fr->l4_proto), c);
}

void emu_frame_rx_csum(const uint8_t *f, const struct emu_frame *fr,
		       enum emu_csum *ip, enum emu_csum *l4)
{
	const uint8_t *hdr = f + fr->l3_off;
	uint16_t sum;

	*ip = EMU_CSUM_NONE;
	*l4 = EMU_CSUM_NONE;
	if (fr->tuple.l3 == MANA_RSS_L3_IPV4) {
		sum = ipv4_hdr_sum(hdr);
		*ip = sum == 0xffff ? EMU_CSUM_OK : EMU_CSUM_BAD;
	}
	if (!fr->l4_proto)
		return;
	/* IPv4 UDP may go without a checksum; nothing to fail */
	if (fr->l4_proto == IPPROTO_UDP && fr->tuple.l3 == MANA_RSS_L3_IPV4 &&
	    !mana_get_be16(f + fr->l4_off + 6)) {
		*l4 = EMU_CSUM_OK;
		return;
	}
	sum = l4_sum(f, fr);
	*l4 = sum == 0xffff ? EMU_CSUM_OK : EMU_CSUM_BAD;
}

size_t emu_frame_vlan_insert(uint8_t *f, size_t len, uint16_t tci)
{
	memmove(f + 16, f + 12, len - 12);
	mana_put_be16(f + 12, EMU_ETH_P_8021Q);
	mana_put_be16(f + 14, tci);
	return len + EMU_VLAN_HLEN;
}

size_t emu_frame_vlan_strip(uint8_t *f, size_t len)
{
	memmove(f + 12, f + 16, len - 16);
	return len - EMU_VLAN_HLEN;
}
