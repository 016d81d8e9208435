/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Network byte order fields and the Internet checksum (one's complement
 * sum of big-endian 16-bit words), for the provider's checksum offload,
 * the emulated device and the example and test frames alike.
 */
#ifndef MANA_INET_H
#define MANA_INET_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t mana_get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void mana_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/*
 * @sum plus the words of @len bytes (an odd last byte padded), unfolded.
 * Big-endian 32-bit words at a time: 2^16 = 1 modulo 0xffff, so a word
 * pair adds what its two 16-bit words add once folded.
 */
static inline uint32_t mana_csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t acc = sum;
	uint32_t w;
	size_t i;

	for (i = 0; i + 4 <= len; i += 4) {
		memcpy(&w, p + i, 4);
		acc += __builtin_bswap32(w);
	}
	if (i + 2 <= len) {
		acc += mana_get_be16(p + i);
		i += 2;
	}
	if (i < len)
		acc += (uint32_t)p[i] << 8;
	while (acc >> 32)
		acc = (acc & 0xffffffffu) + (acc >> 32);
	return (uint32_t)acc;
}

static inline uint16_t mana_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* The checksum field for @len bytes over a partial @sum (0 if none). */
static inline uint16_t mana_inet_csum(const void *data, size_t len, uint32_t sum)
{
	return (uint16_t)~mana_csum_fold(mana_csum_add(sum, data, len));
}

#endif /* MANA_INET_H */
