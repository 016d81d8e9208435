/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Toeplitz RSS hash as MANA computes it (40-byte key), the hash inputs for
 * IPv4/IPv6 2- and 4-tuples, and the choice of NDIS hash type for a packet.
 */
#ifndef MANA_TOEPLITZ_H
#define MANA_TOEPLITZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdma.h"

#define MANA_RSS_KEY_LEN	40	/* MANA_HASH_KEY_SIZE */
#define MANA_RSS_INPUT_MAX	36	/* IPv6 4-tuple */

/*
 * The key of Microsoft's published RSS verification suite: what the
 * examples and the tests steer with (test_toeplitz keeps its own copy, as
 * the vectors give it).
 */
#define MANA_RSS_SAMPLE_KEY { \
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, \
	0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, \
	0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, \
	0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa, \
}

/*
 * Toeplitz hash of @len bytes of @data under @key.  Input bit i selects the
 * 32 key bits starting at bit i, so the key must hold len + 4 bytes: a
 * 40-byte key covers up to 36 input bytes.  -EINVAL if it does not.
 */
int mana_toeplitz_hash(const uint8_t *key, size_t key_len, const void *data,
		       size_t len, uint32_t *hash);

/*
 * Hash inputs in network byte order: source address, destination address,
 * then (4-tuple) source port, destination port.  Addresses are given as they
 * appear on the wire; ports in host order.  Each returns the bytes written
 * to @out (8, 12, 32 or 36).
 */
size_t mana_rss_input_ipv4(uint8_t *out, const uint8_t src[4],
			   const uint8_t dst[4]);
size_t mana_rss_input_ipv4_l4(uint8_t *out, const uint8_t src[4],
			      const uint8_t dst[4], uint16_t sport,
			      uint16_t dport);
size_t mana_rss_input_ipv6(uint8_t *out, const uint8_t src[16],
			   const uint8_t dst[16]);
size_t mana_rss_input_ipv6_l4(uint8_t *out, const uint8_t src[16],
			      const uint8_t dst[16], uint16_t sport,
			      uint16_t dport);

enum mana_rss_l3 {
	MANA_RSS_L3_NONE = 0,
	MANA_RSS_L3_IPV4,
	MANA_RSS_L3_IPV6,
};

/* What RSS needs to know about a received frame. */
struct mana_rss_tuple {
	enum mana_rss_l3 l3;
	uint8_t l4_proto;	/* IPPROTO_TCP, IPPROTO_UDP, or other */
	bool l4_valid;		/* ports usable: no fragment, whole header */
	uint8_t src[16];	/* network order; IPv4 uses the first 4 bytes */
	uint8_t dst[16];
	uint16_t sport;		/* host order */
	uint16_t dport;
};

/*
 * The NDIS hash type (one MANA_HASH_* bit) used for a frame, or 0 for none,
 * given the IBV_RX_HASH_* fields mask of the RSS QP.  See toeplitz.c for the
 * mapping.
 */
uint32_t mana_rss_hash_type(uint64_t fields_mask,
			    const struct mana_rss_tuple *t);

/*
 * Hash a frame: *type = mana_rss_hash_type(), *hash = Toeplitz of the
 * matching input (0 when *type is 0).  -EINVAL on a NULL argument.
 */
int mana_rss_hash(const uint8_t key[MANA_RSS_KEY_LEN], uint64_t fields_mask,
		  const struct mana_rss_tuple *t, uint32_t *hash,
		  uint32_t *type);

/*
 * Table-driven Toeplitz for one key: the hash contribution of each byte
 * value at each input position, built once (about 9k entries) so that a
 * hash is one lookup and XOR per input byte.  For callers that hash many
 * inputs with one key (the emulated device); mana_toeplitz_hash() keeps
 * such a table of the last key per thread.
 */
struct mana_toeplitz_table {
	size_t key_len;			/* 0: not built */
	uint8_t key[MANA_RSS_KEY_LEN];
	uint32_t t[MANA_RSS_INPUT_MAX][256];
};

/* Build @tb for @key (4..MANA_RSS_KEY_LEN bytes): 0, or -EINVAL. */
int mana_toeplitz_table_init(struct mana_toeplitz_table *tb,
			     const uint8_t *key, size_t key_len);

/* mana_rss_hash() with the table of its key (MANA_RSS_KEY_LEN bytes). */
int mana_rss_hash_table(const struct mana_toeplitz_table *tb,
			uint64_t fields_mask, const struct mana_rss_tuple *t,
			uint32_t *hash, uint32_t *type);

/*
 * rx_hashtype to report in the RX completion for a hash of @type: the whole
 * L3 or L4 group.  DPDK sets the mbuf RSS flag only when rx_hashtype equals
 * MANA_HASH_L3 or MANA_HASH_L4 exactly, while the kernel bit-tests
 * MANA_HASH_L4; the group value satisfies both.  (That hardware reports the
 * group is inferred from DPDK's test, not documented.)
 */
static inline uint32_t mana_rss_cqe_hashtype(uint32_t type)
{
	if (type & MANA_HASH_L4)
		return MANA_HASH_L4;
	if (type & MANA_HASH_L3)
		return MANA_HASH_L3;
	return 0;
}

#endif /* MANA_TOEPLITZ_H */
