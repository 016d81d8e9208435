// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Toeplitz RSS hash against the published verification vectors.
 *
 * argv[1] is tests/vectors/toeplitz-ipv4.tsv (IPv4 2- and 4-tuple hashes).
 * The IPv6 rows below are the same suite's IPv6 table, as published in
 * Microsoft's "Verifying the RSS Hash Calculation" (windows-driver-docs,
 * network/verifying-the-rss-hash-calculation.md).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "providers/mana/toeplitz.h"
#include "check.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* the verification suite's key */
static const uint8_t ms_key[MANA_RSS_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
	0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb,
	0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
	0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

static const struct {
	const char *src, *dst;
	uint16_t sport, dport;
	uint32_t hash_l3, hash_l4;
} v6_vectors[] = {
	{ "3ffe:2501:200:1fff::7", "3ffe:2501:200:3::1", 2794, 1766,
	  0x2cc18cd5, 0x40207d3d },
	{ "3ffe:501:8::260:97ff:fe40:efab", "ff02::1", 14230, 4739,
	  0x0f0c461c, 0xdde51bbf },
	{ "3ffe:1900:4545:3:200:f8ff:fe21:67cf", "fe80::200:f8ff:fe21:67cf",
	  44251, 38024, 0x4b61e985, 0x02d1feef },
};

#define V4_MASK (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4)
#define V6_MASK (IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6)
#define TCP_MASK (IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP)
#define UDP_MASK (IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)

/* Checks one flow both through the raw inputs and through mana_rss_hash(). */
static void check_flow(const char *name, const struct mana_rss_tuple *base,
		       uint32_t want_l3, uint32_t want_l4)
{
	bool v6 = base->l3 == MANA_RSS_L3_IPV6;
	uint64_t l3 = v6 ? V6_MASK : V4_MASK;
	uint8_t in[MANA_RSS_INPUT_MAX];
	struct mana_rss_tuple t = *base;
	uint32_t hash = 0, type = 0;
	size_t n;

	n = v6 ? mana_rss_input_ipv6(in, t.src, t.dst) :
		 mana_rss_input_ipv4(in, t.src, t.dst);
	CHECK(n == (v6 ? 32U : 8U), "%s: 2-tuple length", name);
	CHECK(mana_toeplitz_hash(ms_key, sizeof(ms_key), in, n, &hash) == 0 &&
	      hash == want_l3, "%s: 2-tuple 0x%08x, want 0x%08x", name, hash,
	      want_l3);

	n = v6 ? mana_rss_input_ipv6_l4(in, t.src, t.dst, t.sport, t.dport) :
		 mana_rss_input_ipv4_l4(in, t.src, t.dst, t.sport, t.dport);
	CHECK(n == (v6 ? 36U : 12U), "%s: 4-tuple length", name);
	CHECK(mana_toeplitz_hash(ms_key, sizeof(ms_key), in, n, &hash) == 0 &&
	      hash == want_l4, "%s: 4-tuple 0x%08x, want 0x%08x", name, hash,
	      want_l4);

	/* the emulator's explicit table gives the same hashes */
	{
		static struct mana_toeplitz_table tb;
		uint32_t h2 = 0, ty2 = 0;

		CHECK(mana_toeplitz_table_init(&tb, ms_key, sizeof(ms_key)) == 0,
		      "%s: table", name);
		t.l4_proto = IPPROTO_TCP;
		t.l4_valid = true;
		CHECK(mana_rss_hash_table(&tb, l3, &t, &h2, &ty2) == 0 &&
		      h2 == want_l3, "%s: table 2-tuple 0x%08x", name, h2);
		CHECK(mana_rss_hash_table(&tb, l3 | TCP_MASK, &t, &h2, &ty2) == 0 &&
		      h2 == want_l4, "%s: table 4-tuple 0x%08x", name, h2);
		t = *base;
	}

	t.l4_proto = IPPROTO_TCP;
	t.l4_valid = true;
	CHECK(mana_rss_hash(ms_key, l3 | TCP_MASK, &t, &hash, &type) == 0 &&
	      hash == want_l4 &&
	      type == (v6 ? MANA_HASH_TCP_IPV6 : MANA_HASH_TCP_IPV4),
	      "%s: TCP flow", name);
	t.l4_proto = IPPROTO_UDP;
	CHECK(mana_rss_hash(ms_key, l3 | UDP_MASK, &t, &hash, &type) == 0 &&
	      hash == want_l4 &&
	      type == (v6 ? MANA_HASH_UDP_IPV6 : MANA_HASH_UDP_IPV4),
	      "%s: UDP flow", name);
	/* UDP frame, only TCP ports configured: addresses only */
	CHECK(mana_rss_hash(ms_key, l3 | TCP_MASK, &t, &hash, &type) == 0 &&
	      hash == want_l3 && type == (v6 ? MANA_HASH_IPV6 : MANA_HASH_IPV4),
	      "%s: UDP frame under a TCP mask", name);
	/* a fragment hashes its addresses even when ports are configured */
	t.l4_proto = IPPROTO_TCP;
	t.l4_valid = false;
	CHECK(mana_rss_hash(ms_key, l3 | TCP_MASK, &t, &hash, &type) == 0 &&
	      hash == want_l3, "%s: fragment", name);
	/* the other family's bits do not hash this frame */
	CHECK(mana_rss_hash(ms_key, (v6 ? V4_MASK : V6_MASK) | TCP_MASK, &t,
			    &hash, &type) == 0 && !type && !hash,
	      "%s: other family", name);
}

static int parse_ip(const char *s, struct mana_rss_tuple *t)
{
	memset(t->src, 0, sizeof(t->src));
	if (inet_pton(AF_INET, s, t->src) == 1)
		return MANA_RSS_L3_IPV4;
	if (inet_pton(AF_INET6, s, t->src) == 1)
		return MANA_RSS_L3_IPV6;
	return -1;
}

static int parse_tuple(const char *src, const char *dst, uint16_t sport,
		       uint16_t dport, struct mana_rss_tuple *t)
{
	struct mana_rss_tuple d;
	int l3 = parse_ip(src, t), l3d = parse_ip(dst, &d);

	if (l3 < 0 || l3 != l3d)
		return -1;
	memcpy(t->dst, d.src, sizeof(t->dst));
	t->l3 = (enum mana_rss_l3)l3;
	t->sport = sport;
	t->dport = dport;
	t->l4_proto = 0;
	t->l4_valid = false;
	return 0;
}

static int run_tsv(const char *path)
{
	char line[512], src[64], dst[64];
	unsigned int sport, dport;
	int rows = 0, key_seen = 0;
	unsigned long h3, h4;
	FILE *f;

	f = fopen(path, "r");
	CHECK(f, "cannot open %s", path);
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		struct mana_rss_tuple t;

		if (line[0] == '#') {
			key_seen |= !!strstr(line,
				"6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b"
				"30b477cb2da38030f20c6a42b73bbeac01fa");
			continue;
		}
		if (line[0] == '\n')
			continue;
		if (sscanf(line, "%63s %u %63s %u %lx %lx", src, &sport, dst,
			   &dport, &h3, &h4) != 6 || sport > 0xffff ||
		    dport > 0xffff ||
		    parse_tuple(src, dst, (uint16_t)sport, (uint16_t)dport,
				&t)) {
			CHECK(0, "malformed line: %s", line);
			continue;
		}
		check_flow(src, &t, (uint32_t)h3, (uint32_t)h4);
		rows++;
	}
	fclose(f);
	CHECK(key_seen, "%s does not name the suite's key", path);
	return rows;
}

static void test_ipv6(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(v6_vectors); i++) {
		struct mana_rss_tuple t;

		CHECK(parse_tuple(v6_vectors[i].src, v6_vectors[i].dst,
				  v6_vectors[i].sport, v6_vectors[i].dport,
				  &t) == 0 && t.l3 == MANA_RSS_L3_IPV6,
		      "parse %s", v6_vectors[i].src);
		check_flow(v6_vectors[i].src, &t, v6_vectors[i].hash_l3,
			   v6_vectors[i].hash_l4);
	}
}

static void test_selection(void)
{
	struct mana_rss_tuple t = { .l3 = MANA_RSS_L3_IPV6,
				    .l4_proto = IPPROTO_TCP, .l4_valid = true };
	uint32_t hash = 1, type = 1;

	/* DPDK asks for IPv6 with SRC_IPV6 | SRC_IPV6 */
	CHECK(mana_rss_hash_type(IBV_RX_HASH_SRC_IPV6, &t) == MANA_HASH_IPV6,
	      "DPDK's IPv6 mask");
	CHECK(mana_rss_hash_type(IBV_RX_HASH_SRC_IPV6 |
				 IBV_RX_HASH_DST_PORT_TCP, &t) ==
	      MANA_HASH_TCP_IPV6, "half pairs");
	CHECK(mana_rss_hash_type(TCP_MASK, &t) == 0, "ports without addresses");
	CHECK(mana_rss_hash_type(0, &t) == 0, "empty mask");
	CHECK(mana_rss_hash_type(~0ULL, &t) == MANA_HASH_TCP_IPV6, "all bits");
	t.l4_proto = 47;	/* GRE: addresses only */
	CHECK(mana_rss_hash_type(~0ULL, &t) == MANA_HASH_IPV6, "other L4");
	t.l3 = MANA_RSS_L3_NONE;
	CHECK(mana_rss_hash_type(~0ULL, &t) == 0, "not IP");
	CHECK(mana_rss_hash(ms_key, ~0ULL, &t, &hash, &type) == 0 && !hash &&
	      !type, "not IP: no hash");
	CHECK(mana_rss_hash(NULL, 0, &t, &hash, &type) == -EINVAL, "NULL key");
	CHECK(mana_rss_hash(ms_key, 0, NULL, &hash, &type) == -EINVAL,
	      "NULL tuple");

	CHECK(mana_rss_cqe_hashtype(MANA_HASH_TCP_IPV4) == 0x1b6 &&
	      mana_rss_cqe_hashtype(MANA_HASH_UDP_IPV6) == 0x1b6 &&
	      mana_rss_cqe_hashtype(MANA_HASH_IPV4) == 0x049 &&
	      mana_rss_cqe_hashtype(MANA_HASH_IPV6) == 0x049 &&
	      mana_rss_cqe_hashtype(0) == 0, "CQE hash type groups");
}

static void test_hash_limits(void)
{
	static const uint8_t zero[37];
	uint8_t ones[4] = { 0x80, 0, 0, 0 };
	uint32_t hash = 7;

	/* 36 bytes is the most a 40-byte key covers */
	CHECK(mana_toeplitz_hash(ms_key, 40, zero, 36, &hash) == 0 && !hash,
	      "36 zero bytes");
	CHECK(mana_toeplitz_hash(ms_key, 40, zero, 37, &hash) == -EINVAL,
	      "37 bytes");
	CHECK(mana_toeplitz_hash(ms_key, 3, zero, 0, &hash) == -EINVAL,
	      "3-byte key");
	CHECK(mana_toeplitz_hash(ms_key, 40, NULL, 1, &hash) == -EINVAL,
	      "NULL data");
	CHECK(mana_toeplitz_hash(ms_key, 40, NULL, 0, &hash) == 0 && !hash,
	      "empty input");
	/* the first input bit selects the first 32 key bits */
	CHECK(mana_toeplitz_hash(ms_key, 40, ones, 1, &hash) == 0 &&
	      hash == 0x6d5a56da, "first bit");
	/* the last bit of a 1-byte input selects key bits 7..38 */
	ones[0] = 0x01;
	CHECK(mana_toeplitz_hash(ms_key, 40, ones, 1, &hash) == 0 &&
	      hash == (0x6d5a56daU << 7 | 0x25U >> 1), "eighth bit");
}

int main(int argc, char **argv)
{
	int rows;

	if (argc < 2) {
		fprintf(stderr, "usage: %s toeplitz-ipv4.tsv\n", argv[0]);
		CHECK(0, "no vector file given");
		return check_done();
	}
	rows = run_tsv(argv[1]);
	CHECK(rows >= 5, "only %d IPv4 vectors in %s", rows, argv[1]);
	test_ipv6();
	test_selection();
	test_hash_limits();
	return check_done();
}
