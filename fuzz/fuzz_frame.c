// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A frame from the wire (a socket: peer's datagram, a TAP read, loopback),
 * through what the device's receive path does with it: the backend's
 * length rule, parse, VLAN strip and parse again, checksum verification,
 * the RSS hash for every hash-field mask; and the transmit path's
 * offloads on the same bytes.  Properties: every offset stays inside the
 * frame; after the TX checksum offload the RX check passes; a VLAN tag
 * inserted parses back and strips to the original bytes.
 */
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "emulator/wire/backend.h"
#include "emulator/device/frame.h"
#include "providers/mana/toeplitz.h"
#include "fuzz_check.h"

#define BUF_MAX (BACKEND_MAX_FRAME + EMU_VLAN_HLEN)

static const uint8_t key[MANA_RSS_KEY_LEN] = MANA_RSS_SAMPLE_KEY;

/*
 * The parser writes only the address bytes of the L3 type it sets (4 for
 * IPv4, 16 for IPv6); the rest of the arrays is not part of the result.
 */
static bool frame_eq(const struct emu_frame *a, const struct emu_frame *b)
{
	const struct mana_rss_tuple *x = &a->tuple, *y = &b->tuple;
	size_t alen = x->l3 == MANA_RSS_L3_IPV6 ? sizeof(x->src) :
		      x->l3 == MANA_RSS_L3_IPV4 ? 4 : 0;

	return a->vlan == b->vlan && a->tci == b->tci &&
	       a->l3_off == b->l3_off && a->l3_end == b->l3_end &&
	       a->l4_off == b->l4_off && a->l4_proto == b->l4_proto &&
	       a->fragment == b->fragment && x->l3 == y->l3 &&
	       x->l4_proto == y->l4_proto && x->l4_valid == y->l4_valid &&
	       !memcmp(x->src, y->src, alen) &&
	       !memcmp(x->dst, y->dst, alen) &&
	       x->sport == y->sport && x->dport == y->dport;
}

static void check_parse(const struct emu_frame *fr, size_t len)
{
	if (fr->vlan)
		FUZZ_CHECK(len >= EMU_ETH_HLEN + EMU_VLAN_HLEN);
	if (!fr->tuple.l3) {
		FUZZ_CHECK(!fr->l3_off && !fr->l4_proto);
		return;
	}
	FUZZ_CHECK(fr->l3_off >= EMU_ETH_HLEN && fr->l3_off < fr->l3_end);
	FUZZ_CHECK(fr->l3_end <= len);
	if (fr->l4_proto) {
		FUZZ_CHECK(fr->l4_proto == IPPROTO_TCP ||
			   fr->l4_proto == IPPROTO_UDP);
		FUZZ_CHECK(!fr->fragment && fr->tuple.l4_valid);
		FUZZ_CHECK(fr->l4_off > fr->l3_off);
		FUZZ_CHECK(fr->l4_off + (fr->l4_proto == IPPROTO_TCP ? 20u : 8u) <=
			   fr->l3_end);
	}
}

static void rss_all_masks(const struct emu_frame *fr)
{
	static const uint64_t masks[] = {
		0,
		IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4,
		IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6,
		IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 |
			IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP,
		IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 |
			IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP,
		IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6 |
			IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_UDP,
		~0ULL,
	};
	uint32_t hash, type;
	size_t i;

	for (i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		FUZZ_CHECK(!mana_rss_hash(key, masks[i], &fr->tuple, &hash,
					  &type));
		FUZZ_CHECK(!(type & (type - 1)) && !(type & ~MANA_HASH_ALL));
		if (!type)
			FUZZ_CHECK(!hash);
		if (type)
			FUZZ_CHECK(mana_rss_cqe_hashtype(type));
	}
}

/* device.c rx_frame(): strip the tag, parse, verify, hash. */
static void receive(const uint8_t *data, size_t len)
{
	static uint8_t f[BUF_MAX];
	struct emu_frame fr;
	enum emu_csum ip, l4;

	memcpy(f, data, len);
	emu_frame_parse(f, len, &fr);
	check_parse(&fr, len);
	if (fr.vlan) {
		len = emu_frame_vlan_strip(f, len);
		emu_frame_parse(f, len, &fr);
		check_parse(&fr, len);
	}
	emu_frame_rx_csum(f, &fr, &ip, &l4);
	if (fr.tuple.l3 != MANA_RSS_L3_IPV4)
		FUZZ_CHECK(ip == EMU_CSUM_NONE);
	if (!fr.l4_proto)
		FUZZ_CHECK(l4 == EMU_CSUM_NONE);
	rss_all_masks(&fr);
}

/* device.c transmit: offloads, then a VLAN tag in and out again. */
static void transmit(const uint8_t *data, size_t len)
{
	static uint8_t f[BUF_MAX], orig[BUF_MAX];
	struct emu_frame fr, fr2;
	enum emu_csum ip, l4;
	size_t len2;

	memcpy(f, data, len);
	emu_frame_parse(f, len, &fr);
	emu_frame_tx_csum(f, &fr, true, true, true);
	emu_frame_parse(f, len, &fr2);
	FUZZ_CHECK(frame_eq(&fr, &fr2));
	emu_frame_rx_csum(f, &fr, &ip, &l4);
	if (fr.tuple.l3 == MANA_RSS_L3_IPV4)
		FUZZ_CHECK(ip == EMU_CSUM_OK);
	if (fr.l4_proto)
		FUZZ_CHECK(l4 == EMU_CSUM_OK);

	memcpy(orig, f, len);
	len2 = emu_frame_vlan_insert(f, len, 0x2345);
	FUZZ_CHECK(len2 == len + EMU_VLAN_HLEN);
	emu_frame_parse(f, len2, &fr2);
	FUZZ_CHECK(fr2.vlan && fr2.tci == 0x2345);
	check_parse(&fr2, len2);
	FUZZ_CHECK(emu_frame_vlan_strip(f, len2) == len);
	FUZZ_CHECK(!memcmp(f, orig, len));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* what backend.c deliver() and rx_frame() let through */
	if (size < EMU_ETH_HLEN || size > BACKEND_MAX_FRAME)
		return 0;
	receive(data, size);
	transmit(data, size);
	return 0;
}
