// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 packet encoding and decoding (see roce.h).  Written from the
 * IBA layouts (BTH 9.2, RETH 9.3.3, AETH 9.3.5, Annex A17 for the UDP
 * encapsulation and the ICRC); every length is checked before it is used.
 */
#include "roce.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#define ETH_P_IPV4	0x0800
#define ETH_P_IPV6	0x86dd
#define IPPROTO_UDP_	17
#define IPV4_DF		0x4000

/* ---- opcodes ---------------------------------------------------------------- */

unsigned int roce_opcode_flags(uint8_t op)
{
	enum {
		S = ROCE_F_SEND | ROCE_F_PAYLOAD,
		W = ROCE_F_WRITE | ROCE_F_PAYLOAD,
		R = ROCE_F_READ_RESP | ROCE_F_PAYLOAD,
		F = ROCE_F_FIRST,
		L = ROCE_F_LAST,
	};

	switch (op) {
	case ROCE_SEND_FIRST:		return S | F;
	case ROCE_SEND_MIDDLE:		return S;
	case ROCE_SEND_LAST:		return S | L;
	case ROCE_SEND_LAST_IMM:	return S | L | ROCE_F_IMM;
	case ROCE_SEND_ONLY:		return S | F | L;
	case ROCE_SEND_ONLY_IMM:	return S | F | L | ROCE_F_IMM;
	case ROCE_SEND_LAST_INV:	return S | L | ROCE_F_IETH;
	case ROCE_SEND_ONLY_INV:	return S | F | L | ROCE_F_IETH;
	case ROCE_WRITE_FIRST:		return W | F | ROCE_F_RETH;
	case ROCE_WRITE_MIDDLE:		return W;
	case ROCE_WRITE_LAST:		return W | L;
	case ROCE_WRITE_LAST_IMM:	return W | L | ROCE_F_IMM;
	case ROCE_WRITE_ONLY:		return W | F | L | ROCE_F_RETH;
	case ROCE_WRITE_ONLY_IMM:
		return W | F | L | ROCE_F_RETH | ROCE_F_IMM;
	case ROCE_READ_REQ:		return F | L | ROCE_F_RETH;
	case ROCE_READ_RESP_FIRST:	return R | F | ROCE_F_AETH;
	case ROCE_READ_RESP_MIDDLE:	return R;
	case ROCE_READ_RESP_LAST:	return R | L | ROCE_F_AETH;
	case ROCE_READ_RESP_ONLY:	return R | F | L | ROCE_F_AETH;
	case ROCE_ACK:			return F | L | ROCE_F_AETH;
	case ROCE_UC_SEND_FIRST ... ROCE_UC_WRITE_ONLY_IMM:
		/* the RC layout of the same SEND or WRITE */
		return roce_opcode_flags(op - ROCE_UC) | ROCE_F_UC;
	case ROCE_UD_SEND_ONLY:
		return F | L | ROCE_F_DETH | ROCE_F_PAYLOAD;
	default:			return 0;
	}
}

static size_t ext_len(unsigned int fl)
{
	return (fl & ROCE_F_RETH ? ROCE_RETH_LEN : 0) +
	       (fl & ROCE_F_AETH ? ROCE_AETH_LEN : 0) +
	       (fl & ROCE_F_IMM ? ROCE_IMM_LEN : 0) +
	       (fl & ROCE_F_IETH ? ROCE_IETH_LEN : 0) +
	       (fl & ROCE_F_DETH ? ROCE_DETH_LEN : 0);
}

/* ---- byte helpers ------------------------------------------------------------ */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static bool gid_is_v4(const uint8_t *g)
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(g, prefix, sizeof(prefix));
}

/* ---- CRC-32 (IEEE 802.3, reflected) ------------------------------------------ */

/*
 * Slicing by 8: eight bytes per step through eight tables (8 KiB), about a
 * quarter of the instructions of the byte-wise table walk.  Every RoCE
 * packet is summed twice (sender and receiver), so at 4 KiB messages this
 * was most of the device thread's work per packet.
 */
static uint32_t crc_table[8][256];
#if defined(__x86_64__) && !defined(ROCE_CRC_TABLE_ONLY)
static bool crc_clmul_ok;	/* the CPU has PCLMULQDQ (set with the tables) */
#endif
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_fill(void)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (c = crc_table[0][i], j = 1; j < 8; j++) {
			c = crc_table[0][c & 0xff] ^ (c >> 8);
			crc_table[j][i] = c;
		}
#if defined(__x86_64__) && !defined(ROCE_CRC_TABLE_ONLY)
	crc_clmul_ok = __builtin_cpu_supports("pclmul");
#endif
}

static void crc_init(void)
{
	pthread_once(&crc_once, crc_fill);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint32_t crc_table_update(uint32_t crc, const uint8_t *p, size_t n)
{
	const uint32_t (*t)[256] = crc_table;

	for (; n >= 8; n -= 8, p += 8) {
		uint32_t lo = crc ^ le32(p), hi = le32(p + 4);

		crc = t[7][lo & 0xff] ^ t[6][lo >> 8 & 0xff] ^
		      t[5][lo >> 16 & 0xff] ^ t[4][lo >> 24] ^
		      t[3][hi & 0xff] ^ t[2][hi >> 8 & 0xff] ^
		      t[1][hi >> 16 & 0xff] ^ t[0][hi >> 24];
	}
	while (n--)
		crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__) && !defined(ROCE_CRC_TABLE_ONLY)
#include <immintrin.h>

/*
 * (ROCE_CRC_TABLE_ONLY: the table walk alone, for its test.)
 * Carry-less multiplication folding (Intel's "Fast CRC Computation for
 * Generic Polynomials Using PCLMULQDQ"): 16 bytes per two multiplies, an
 * eighth of the table walk's instructions at 4 KiB.  The constants are
 * x^(k) mod P(x) for the reflected IEEE polynomial, as the paper derives
 * them: 4x128-bit folds (k1, k2), 1x128 (k3, k4), 64->32 (k5), and the
 * Barrett pair (mu, P').  n >= 64, a multiple of 16.
 */
__attribute__((target("pclmul,sse2")))
static uint32_t crc_clmul(uint32_t crc, const uint8_t *p, size_t n)
{
	const __m128i k12 = _mm_set_epi64x(0x1c6e41596, 0x154442bd4);
	const __m128i k34 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0);
	const __m128i k5 = _mm_set_epi64x(0, 0x163cd6124);
	const __m128i mu_p = _mm_set_epi64x(0x1f7011641, 0x1db710641);
	const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
	__m128i x1, x2, x3, x4, t;

#define FOLD(x, k, next)						      \
	((x) = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128((x), (k), 0x00), \
					   _mm_clmulepi64_si128((x), (k), 0x11)), \
			     (next)))
	x1 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p),
			   _mm_cvtsi32_si128((int)crc));
	x2 = _mm_loadu_si128((const __m128i *)(p + 16));
	x3 = _mm_loadu_si128((const __m128i *)(p + 32));
	x4 = _mm_loadu_si128((const __m128i *)(p + 48));
	for (p += 64, n -= 64; n >= 64; p += 64, n -= 64) {
		FOLD(x1, k12, _mm_loadu_si128((const __m128i *)p));
		FOLD(x2, k12, _mm_loadu_si128((const __m128i *)(p + 16)));
		FOLD(x3, k12, _mm_loadu_si128((const __m128i *)(p + 32)));
		FOLD(x4, k12, _mm_loadu_si128((const __m128i *)(p + 48)));
	}
	FOLD(x1, k34, x2);
	FOLD(x1, k34, x3);
	FOLD(x1, k34, x4);
	for (; n >= 16; p += 16, n -= 16)
		FOLD(x1, k34, _mm_loadu_si128((const __m128i *)p));
#undef FOLD
	/* 128 -> 64 bits */
	x1 = _mm_xor_si128(_mm_clmulepi64_si128(x1, k34, 0x10),
			   _mm_srli_si128(x1, 8));
	/* 64 -> 32 bits */
	x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, mask32), k5, 0x00),
			   _mm_srli_si128(x1, 4));
	/* Barrett reduction */
	t = _mm_clmulepi64_si128(_mm_and_si128(x1, mask32), mu_p, 0x10);
	t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), mu_p, 0x00);
	x1 = _mm_xor_si128(x1, t);
	return (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(x1, 4));
}

#endif

/* after crc_init() */
static uint32_t crc_update(uint32_t crc, const uint8_t *p, size_t n)
{
#if defined(__x86_64__) && !defined(ROCE_CRC_TABLE_ONLY)
	if (n >= 64 && crc_clmul_ok) {
		size_t bulk = n & ~(size_t)15;

		crc = crc_clmul(crc, p, bulk);
		p += bulk;
		n -= bulk;
	}
#endif
	return crc_table_update(crc, p, n);
}

uint32_t roce_icrc(const uint8_t *ip, size_t len, bool ipv6)
{
	static const uint8_t lrh[8] = { 0xff, 0xff, 0xff, 0xff,
					0xff, 0xff, 0xff, 0xff };
	size_t ihl = ipv6 ? ROCE_IPV6_HLEN : ROCE_IPV4_HLEN;
	uint8_t h[ROCE_IPV6_HLEN + ROCE_UDP_HLEN + ROCE_BTH_LEN];
	size_t hl = ihl + ROCE_UDP_HLEN + ROCE_BTH_LEN;
	uint32_t crc;

	crc_init();
	if (len < hl)
		return 0;
	memcpy(h, ip, hl);
	if (ipv6) {
		/* version stays; traffic class and flow label become ones */
		h[0] |= 0x0f;
		h[1] = h[2] = h[3] = 0xff;
		h[7] = 0xff;		/* hop limit */
	} else {
		h[1] = 0xff;		/* TOS */
		h[8] = 0xff;		/* TTL */
		h[10] = h[11] = 0xff;	/* header checksum */
	}
	h[ihl + 6] = h[ihl + 7] = 0xff;	/* UDP checksum */
	h[ihl + ROCE_UDP_HLEN + 4] = 0xff;	/* BTH FECN, BECN, resv6a */
	crc = crc_update(0xffffffffu, lrh, sizeof(lrh));
	crc = crc_update(crc, h, hl);
	crc = crc_update(crc, ip + hl, len - hl);
	return ~crc;
}

/* ---- UDP source port ------------------------------------------------------------ */

uint16_t roce_udp_sport(uint32_t fl, uint32_t lqpn, uint32_t rqpn)
{
	uint32_t lo, hi;

	fl &= 0xfffff;
	if (!fl) {
		uint64_t v = (uint64_t)lqpn * rqpn;

		v ^= v >> 20;
		v ^= v >> 40;
		fl = (uint32_t)(v & 0xfffff);
	}
	lo = fl & 0x3fff;
	hi = fl & 0xfc000;
	lo ^= hi >> 14;
	return (uint16_t)(lo | 0xc000);
}

/* ---- RNR timer ----------------------------------------------------------------- */

uint32_t roce_rnr_timer_us(uint8_t code)
{
	/* IBA table 45, in units of 10 us; code 0 is 655.36 ms */
	static const uint32_t t10us[32] = {
		65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
		256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
		12288, 16384, 24576, 32768, 49152,
	};

	return t10us[code & 31] * 10;
}

/* ---- encode ---------------------------------------------------------------------- */

static uint16_t ipv4_csum(const uint8_t *h)
{
	uint32_t sum = 0;
	unsigned int i;

	for (i = 0; i < ROCE_IPV4_HLEN; i += 2)
		sum += get16(h + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static int encode_check(const struct roce_pkt *p, unsigned int fl)
{
	if (!fl || p->dqpn > ROCE_QPN_MASK || p->psn > ROCE_PSN_MASK ||
	    p->msn > 0xffffff || p->flow_label > 0xfffff ||
	    p->src_qpn > ROCE_QPN_MASK)
		return -EINVAL;
	if (p->payload_len && (!(fl & ROCE_F_PAYLOAD) || !p->payload))
		return -EINVAL;
	if (p->payload_len > ROCE_MAX_MTU)
		return -EINVAL;
	if (gid_is_v4(p->sgid) != gid_is_v4(p->dgid))
		return -EINVAL;
	return 0;
}

static uint8_t *put_ip(const struct roce_pkt *p, uint8_t *ip, size_t l4len,
		       bool v6)
{
	if (v6) {
		put32(ip, 6u << 28 | (uint32_t)p->traffic_class << 20 |
			  p->flow_label);
		put16(ip + 4, (uint16_t)l4len);
		ip[6] = IPPROTO_UDP_;
		ip[7] = p->hop_limit;
		memcpy(ip + 8, p->sgid, 16);
		memcpy(ip + 24, p->dgid, 16);
		return ip + ROCE_IPV6_HLEN;
	}
	ip[0] = 0x45;
	ip[1] = p->traffic_class;
	put16(ip + 2, (uint16_t)(ROCE_IPV4_HLEN + l4len));
	put16(ip + 4, 0);
	put16(ip + 6, IPV4_DF);
	ip[8] = p->hop_limit;
	ip[9] = IPPROTO_UDP_;
	put16(ip + 10, 0);
	memcpy(ip + 12, p->sgid + 12, 4);
	memcpy(ip + 16, p->dgid + 12, 4);
	put16(ip + 10, ipv4_csum(ip));
	return ip + ROCE_IPV4_HLEN;
}

static uint8_t *put_ext(const struct roce_pkt *p, uint8_t *q, unsigned int fl)
{
	if (fl & ROCE_F_RETH) {
		put32(q, (uint32_t)(p->va >> 32));
		put32(q + 4, (uint32_t)p->va);
		put32(q + 8, p->rkey);
		put32(q + 12, p->dma_len);
		q += ROCE_RETH_LEN;
	}
	if (fl & ROCE_F_AETH) {
		put32(q, (uint32_t)p->syndrome << 24 | p->msn);
		q += ROCE_AETH_LEN;
	}
	if (fl & ROCE_F_IMM) {
		put32(q, p->imm);
		q += ROCE_IMM_LEN;
	}
	if (fl & ROCE_F_IETH) {
		put32(q, p->ieth);
		q += ROCE_IETH_LEN;
	}
	if (fl & ROCE_F_DETH) {
		put32(q, p->qkey);
		put32(q + 4, p->src_qpn);	/* reserved byte 0 */
		q += ROCE_DETH_LEN;
	}
	return q;
}

int roce_encode(const struct roce_pkt *p, uint8_t *buf, size_t cap,
		size_t *len)
{
	unsigned int fl = roce_opcode_flags(p->opcode);
	bool v6 = !gid_is_v4(p->dgid);
	size_t ihl = v6 ? ROCE_IPV6_HLEN : ROCE_IPV4_HLEN;
	uint32_t pad = (4 - (p->payload_len & 3)) & 3;
	size_t ib_len, l4len, total;
	uint8_t *ip, *q;

	if (encode_check(p, fl))
		return -EINVAL;
	ib_len = ROCE_BTH_LEN + ext_len(fl) + p->payload_len + pad +
		 ROCE_ICRC_LEN;
	l4len = ROCE_UDP_HLEN + ib_len;
	total = ROCE_ETH_HLEN + ihl + l4len;
	if (total > cap)
		return -ENOSPC;
	memcpy(buf, p->dmac, 6);
	memcpy(buf + 6, p->smac, 6);
	put16(buf + 12, v6 ? ETH_P_IPV6 : ETH_P_IPV4);
	ip = buf + ROCE_ETH_HLEN;
	q = put_ip(p, ip, l4len, v6);
	put16(q, p->udp_sport);
	put16(q + 2, ROCE_UDP_PORT);
	put16(q + 4, (uint16_t)l4len);
	put16(q + 6, 0);
	q += ROCE_UDP_HLEN;
	q[0] = p->opcode;
	q[1] = (uint8_t)(p->se << 7 | p->mig << 6 | pad << 4);	/* tver 0 */
	put16(q + 2, p->pkey);
	put32(q + 4, p->dqpn);		/* FECN, BECN, resv6a: 0 */
	put32(q + 8, (uint32_t)p->ack_req << 31 | p->psn);
	q = put_ext(p, q + ROCE_BTH_LEN, fl);
	if (p->payload_len)
		memcpy(q, p->payload, p->payload_len);
	q += p->payload_len;
	memset(q, 0, pad);
	q += pad;
	{
		uint32_t icrc = roce_icrc(ip, (size_t)(q - ip), v6);

		q[0] = (uint8_t)icrc;
		q[1] = (uint8_t)(icrc >> 8);
		q[2] = (uint8_t)(icrc >> 16);
		q[3] = (uint8_t)(icrc >> 24);
	}
	*len = total;
	return 0;
}

/* ---- decode ---------------------------------------------------------------------- */

bool roce_frame_is_roce(const uint8_t *f, size_t len)
{
	uint16_t et;

	if (len < ROCE_ETH_HLEN + ROCE_IPV4_HLEN + ROCE_UDP_HLEN)
		return false;
	et = get16(f + 12);
	if (et == ETH_P_IPV4)
		return (f[14] & 0xf0) == 0x40 && f[23] == IPPROTO_UDP_ &&
		       len >= ROCE_ETH_HLEN + (size_t)(f[14] & 15) * 4 +
				      ROCE_UDP_HLEN &&
		       get16(f + 14 + (f[14] & 15) * 4 + 2) == ROCE_UDP_PORT;
	if (et == ETH_P_IPV6)
		return len >= ROCE_ETH_HLEN + ROCE_IPV6_HLEN + ROCE_UDP_HLEN &&
		       f[20] == IPPROTO_UDP_ &&
		       get16(f + 14 + ROCE_IPV6_HLEN + 2) == ROCE_UDP_PORT;
	return false;
}

/* The IP header: *l4 = UDP header, *l4len from the IP length fields. */
static int decode_ip(const uint8_t *f, size_t len, struct roce_pkt *p,
		     const uint8_t **l4, size_t *l4len)
{
	const uint8_t *ip = f + ROCE_ETH_HLEN;
	size_t avail = len - ROCE_ETH_HLEN;
	uint16_t et = get16(f + 12);

	if (et == ETH_P_IPV6) {
		uint32_t w;

		if (avail < ROCE_IPV6_HLEN || ip[0] >> 4 != 6 ||
		    ip[6] != IPPROTO_UDP_)
			return -EINVAL;
		w = get32(ip);
		p->ipv6 = true;
		p->traffic_class = (uint8_t)(w >> 20);
		p->flow_label = w & 0xfffff;
		p->hop_limit = ip[7];
		memcpy(p->sgid, ip + 8, 16);
		memcpy(p->dgid, ip + 24, 16);
		*l4len = get16(ip + 4);
		if (*l4len > avail - ROCE_IPV6_HLEN)
			return -EINVAL;
		*l4 = ip + ROCE_IPV6_HLEN;
		return 0;
	}
	if (et != ETH_P_IPV4 || avail < ROCE_IPV4_HLEN || ip[0] != 0x45 ||
	    ip[9] != IPPROTO_UDP_ || (get16(ip + 6) & 0x3fff) ||
	    ipv4_csum(ip) != 0)
		return -EINVAL;	/* options, fragments, bad checksum */
	p->ipv6 = false;
	p->traffic_class = ip[1];
	p->hop_limit = ip[8];
	p->flow_label = 0;
	memset(p->sgid, 0, 16);
	memset(p->dgid, 0, 16);
	p->sgid[10] = p->sgid[11] = p->dgid[10] = p->dgid[11] = 0xff;
	memcpy(p->sgid + 12, ip + 12, 4);
	memcpy(p->dgid + 12, ip + 16, 4);
	if (get16(ip + 2) < ROCE_IPV4_HLEN ||
	    get16(ip + 2) > avail)
		return -EINVAL;
	*l4len = get16(ip + 2) - ROCE_IPV4_HLEN;
	*l4 = ip + ROCE_IPV4_HLEN;
	return 0;
}

static void get_ext(struct roce_pkt *p, const uint8_t *q, unsigned int fl)
{
	if (fl & ROCE_F_RETH) {
		p->va = (uint64_t)get32(q) << 32 | get32(q + 4);
		p->rkey = get32(q + 8);
		p->dma_len = get32(q + 12);
		q += ROCE_RETH_LEN;
	}
	if (fl & ROCE_F_AETH) {
		p->syndrome = q[0];
		p->msn = get32(q) & 0xffffff;
		q += ROCE_AETH_LEN;
	}
	if (fl & ROCE_F_IMM) {
		p->imm = get32(q);
		q += ROCE_IMM_LEN;
	}
	if (fl & ROCE_F_IETH) {
		p->ieth = get32(q);
		q += ROCE_IETH_LEN;
	}
	if (fl & ROCE_F_DETH) {
		p->qkey = get32(q);
		p->src_qpn = get32(q + 4) & ROCE_QPN_MASK;
	}
}

int roce_decode(const uint8_t *f, size_t len, struct roce_pkt *p)
{
	const uint8_t *l4, *bth, *icrc;
	size_t l4len, ib_len, hdrs;
	unsigned int fl, pad;
	uint32_t want;

	memset(p, 0, sizeof(*p));
	if (len < ROCE_ETH_HLEN || decode_ip(f, len, p, &l4, &l4len))
		return -EINVAL;
	memcpy(p->dmac, f, 6);
	memcpy(p->smac, f + 6, 6);
	if (l4len < ROCE_UDP_HLEN + ROCE_BTH_LEN + ROCE_ICRC_LEN ||
	    get16(l4 + 2) != ROCE_UDP_PORT || get16(l4 + 4) != l4len)
		return -EINVAL;
	p->udp_sport = get16(l4);
	bth = l4 + ROCE_UDP_HLEN;
	ib_len = l4len - ROCE_UDP_HLEN;
	p->opcode = bth[0];
	fl = roce_opcode_flags(p->opcode);
	if (!fl || (bth[1] & 0x0f))	/* unknown opcode, tver != 0 */
		return -EINVAL;
	p->se = bth[1] >> 7;
	p->mig = (bth[1] >> 6) & 1;
	pad = (bth[1] >> 4) & 3;
	p->pkey = get16(bth + 2);
	p->dqpn = get32(bth + 4) & ROCE_QPN_MASK;
	p->ack_req = bth[8] >> 7;
	p->psn = get32(bth + 8) & ROCE_PSN_MASK;
	hdrs = ROCE_BTH_LEN + ext_len(fl);
	if (ib_len < hdrs + pad + ROCE_ICRC_LEN)
		return -EINVAL;
	p->payload_len = (uint32_t)(ib_len - hdrs - pad - ROCE_ICRC_LEN);
	if ((p->payload_len && !(fl & ROCE_F_PAYLOAD)) ||
	    p->payload_len > ROCE_MAX_MTU || ((p->payload_len + pad) & 3))
		return -EINVAL;
	get_ext(p, bth + ROCE_BTH_LEN, fl);
	/* DETH's reserved byte must be zero (fail closed) */
	if ((fl & ROCE_F_DETH) && bth[ROCE_BTH_LEN + 4])
		return -EINVAL;
	p->payload = p->payload_len ? bth + hdrs : NULL;
	icrc = bth + ib_len - ROCE_ICRC_LEN;
	want = roce_icrc(f + ROCE_ETH_HLEN, (size_t)(icrc - f - ROCE_ETH_HLEN),
			 p->ipv6);
	if (icrc[0] != (uint8_t)want || icrc[1] != (uint8_t)(want >> 8) ||
	    icrc[2] != (uint8_t)(want >> 16) || icrc[3] != (uint8_t)(want >> 24))
		return -EINVAL;
	return 0;
}
