// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Toeplitz RSS hash and the selection of what to hash.
 *
 * Hash-type mapping (mana_rss_hash_type):
 *
 *   MANA hashes whole NDIS tuples, never a single address or port, so each
 *   pair of IBV_RX_HASH_* bits enables its tuple when either bit is set:
 *     SRC_IPV4 | DST_IPV4          -> IPv4 frames hash the 2-tuple
 *     SRC_IPV6 | DST_IPV6          -> IPv6 frames hash the 2-tuple
 *     SRC_PORT_TCP | DST_PORT_TCP  -> TCP frames of an enabled family hash
 *                                     the 4-tuple (TCP_IPV4 / TCP_IPV6)
 *     SRC_PORT_UDP | DST_PORT_UDP  -> likewise UDP_IPV4 / UDP_IPV6
 *   Taking either bit also accepts what DPDK asks for IPv6
 *   (SRC_IPV6 | SRC_IPV6, a typo in every version).
 *
 *   A frame whose ports are unusable (fragment, truncated header) falls back
 *   to its 2-tuple; port bits without the family's address bits select
 *   nothing, as NDIS has no ports-only type.  The IPv6 "_EX" types (which
 *   hash home-address/routing-header addresses) are never chosen, and
 *   IBV_RX_HASH_INNER / IPSEC_SPI are ignored.
 *
 *   The kernel does not pass the mask to the device (rss_hash_types = 0,
 *   whose meaning is unverified), so a device model that wants real
 *   hardware's behaviour may pass all bits instead of the QP's mask.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "toeplitz.h"

/*
 * Table-driven: for a given key, the hash contribution of byte value v at
 * input position i is fixed (the XOR of the key windows of v's set bits),
 * so a hash is one lookup and XOR per input byte.  The table of the last
 * key used is kept per thread (a device hashes every frame with the same
 * key); keys longer than TZ_KEY_MAX take the bitwise path.
 */
#define TZ_KEY_MAX MANA_RSS_KEY_LEN

static __thread struct mana_toeplitz_table tz_cache;

/* The 32 key bits that start at input bit @bit. */
static uint32_t tz_window(const uint8_t *key, size_t bit)
{
	size_t byte = bit / 8, shift = bit % 8;
	uint64_t w = (uint64_t)key[byte] << 32 | (uint64_t)key[byte + 1] << 24 |
		     (uint64_t)key[byte + 2] << 16 |
		     (uint64_t)key[byte + 3] << 8;

	if (shift)
		w |= key[byte + 4];
	return (uint32_t)(w >> (8 - shift));
}

int mana_toeplitz_table_init(struct mana_toeplitz_table *tb,
			     const uint8_t *key, size_t key_len)
{
	size_t i, n;
	unsigned int v, b;

	if (!tb || !key || key_len < 4 || key_len > TZ_KEY_MAX)
		return -EINVAL;
	n = key_len - 4;
	for (i = 0; i < n; i++) {
		uint32_t bitw[8];

		for (b = 0; b < 8; b++)		/* bit 7 is the first in */
			bitw[b] = tz_window(key, i * 8 + (7 - b));
		tb->t[i][0] = 0;
		for (v = 1; v < 256; v++) {
			b = (unsigned int)__builtin_ctz(v);
			tb->t[i][v] = tb->t[i][v & (v - 1)] ^ bitw[b];
		}
	}
	memcpy(tb->key, key, key_len);
	tb->key_len = key_len;
	return 0;
}

static uint32_t tz_lookup(const struct mana_toeplitz_table *tb,
			  const uint8_t *in, size_t len)
{
	uint32_t result = 0;
	size_t i;

	for (i = 0; i < len; i++)
		result ^= tb->t[i][in[i]];
	return result;
}

static uint32_t tz_bitwise(const uint8_t *key, const uint8_t *in, size_t len)
{
	uint32_t window, result = 0;
	size_t i;
	int b;

	/* window = the 32 key bits that start at the current input bit */
	window = (uint32_t)key[0] << 24 | (uint32_t)key[1] << 16 |
		 (uint32_t)key[2] << 8 | key[3];
	for (i = 0; i < len; i++) {
		uint8_t next = key[i + 4];

		for (b = 7; b >= 0; b--) {
			if (in[i] & (1U << b))
				result ^= window;
			window = window << 1 | ((next >> b) & 1U);
		}
	}
	return result;
}

int mana_toeplitz_hash(const uint8_t *key, size_t key_len, const void *data,
		       size_t len, uint32_t *hash)
{
	struct mana_toeplitz_table *tb = &tz_cache;

	if (!key || !hash || (!data && len) || key_len < 4 ||
	    len > key_len - 4)
		return -EINVAL;
	if (key_len > TZ_KEY_MAX) {
		*hash = tz_bitwise(key, data, len);
		return 0;
	}
	if (tb->key_len != key_len || memcmp(tb->key, key, key_len))
		mana_toeplitz_table_init(tb, key, key_len);
	*hash = tz_lookup(tb, data, len);
	return 0;
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

size_t mana_rss_input_ipv4(uint8_t *out, const uint8_t src[4],
			   const uint8_t dst[4])
{
	memcpy(out, src, 4);
	memcpy(out + 4, dst, 4);
	return 8;
}

size_t mana_rss_input_ipv4_l4(uint8_t *out, const uint8_t src[4],
			      const uint8_t dst[4], uint16_t sport,
			      uint16_t dport)
{
	size_t n = mana_rss_input_ipv4(out, src, dst);

	put_be16(out + n, sport);
	put_be16(out + n + 2, dport);
	return n + 4;
}

size_t mana_rss_input_ipv6(uint8_t *out, const uint8_t src[16],
			   const uint8_t dst[16])
{
	memcpy(out, src, 16);
	memcpy(out + 16, dst, 16);
	return 32;
}

size_t mana_rss_input_ipv6_l4(uint8_t *out, const uint8_t src[16],
			      const uint8_t dst[16], uint16_t sport,
			      uint16_t dport)
{
	size_t n = mana_rss_input_ipv6(out, src, dst);

	put_be16(out + n, sport);
	put_be16(out + n + 2, dport);
	return n + 4;
}

uint32_t mana_rss_hash_type(uint64_t fields_mask,
			    const struct mana_rss_tuple *t)
{
	bool v6 = t->l3 == MANA_RSS_L3_IPV6;
	uint64_t l3_bits = v6 ? IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6 :
				IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4;
	uint64_t tcp = IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP;
	uint64_t udp = IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP;

	if (t->l3 != MANA_RSS_L3_IPV4 && !v6)
		return 0;
	if (!(fields_mask & l3_bits))
		return 0;
	if (t->l4_valid && t->l4_proto == IPPROTO_TCP && (fields_mask & tcp))
		return v6 ? MANA_HASH_TCP_IPV6 : MANA_HASH_TCP_IPV4;
	if (t->l4_valid && t->l4_proto == IPPROTO_UDP && (fields_mask & udp))
		return v6 ? MANA_HASH_UDP_IPV6 : MANA_HASH_UDP_IPV4;
	return v6 ? MANA_HASH_IPV6 : MANA_HASH_IPV4;
}

/* Hash input for @type; 0 bytes for a type this file never selects. */
static size_t rss_input(const struct mana_rss_tuple *t, uint32_t type,
			uint8_t *out)
{
	switch (type) {
	case MANA_HASH_IPV4:
		return mana_rss_input_ipv4(out, t->src, t->dst);
	case MANA_HASH_TCP_IPV4:
	case MANA_HASH_UDP_IPV4:
		return mana_rss_input_ipv4_l4(out, t->src, t->dst, t->sport,
					      t->dport);
	case MANA_HASH_IPV6:
		return mana_rss_input_ipv6(out, t->src, t->dst);
	case MANA_HASH_TCP_IPV6:
	case MANA_HASH_UDP_IPV6:
		return mana_rss_input_ipv6_l4(out, t->src, t->dst, t->sport,
					      t->dport);
	}
	return 0;
}

int mana_rss_hash(const uint8_t key[MANA_RSS_KEY_LEN], uint64_t fields_mask,
		  const struct mana_rss_tuple *t, uint32_t *hash,
		  uint32_t *type)
{
	uint8_t input[MANA_RSS_INPUT_MAX];
	size_t len;

	if (!key || !t || !hash || !type)
		return -EINVAL;
	*type = mana_rss_hash_type(fields_mask, t);
	*hash = 0;
	len = rss_input(t, *type, input);
	if (!len)
		return 0;
	return mana_toeplitz_hash(key, MANA_RSS_KEY_LEN, input, len, hash);
}

int mana_rss_hash_table(const struct mana_toeplitz_table *tb,
			uint64_t fields_mask, const struct mana_rss_tuple *t,
			uint32_t *hash, uint32_t *type)
{
	uint8_t input[MANA_RSS_INPUT_MAX];
	size_t len;

	if (!tb || tb->key_len != MANA_RSS_KEY_LEN || !t || !hash || !type)
		return -EINVAL;
	*type = mana_rss_hash_type(fields_mask, t);
	*hash = 0;
	len = rss_input(t, *type, input);
	if (len)
		*hash = tz_lookup(tb, input, len);
	return 0;
}
