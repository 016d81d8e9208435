// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 packets pinned by byte vectors (emulator/wire/roce.c).
 *
 * The vectors were built field by field from the IBA layouts (BTH, RETH,
 * AETH, ImmDt, Annex A17) by a separate script whose ICRC is Python's
 * zlib.crc32 over the masked packet, never by roce_encode(): decode(vector)
 * must give the fields and encode(fields) must give the vector.  Then
 * frames that must be rejected, the UDP source port, the RNR timer table
 * and PSN arithmetic.  With an argument, writes a pcap of a few packets to
 * that file for tshark (tests/test_roce_pcap.sh).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "emulator/wire/roce.h"
#include "check.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const uint8_t v4_send_only[66] = {
	0x00, 0x0d, 0x3a, 0x00, 0x00, 0x02, 0x00, 0x0d, 0x3a, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x68, 0x00, 0x34, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
	0x26, 0x4f, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0xc0, 0xde,
	0x12, 0xb7, 0x00, 0x20, 0x00, 0x00, 0x04, 0xb0, 0xff, 0xff, 0x00, 0x00,
	0x02, 0x03, 0x80, 0x12, 0x34, 0x56, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00,
	0x00, 0x00, 0xb8, 0xf6, 0xc2, 0x53,
};
static const uint8_t v4_ack[62] = {
	0x00, 0x0d, 0x3a, 0x00, 0x00, 0x01, 0x00, 0x0d, 0x3a, 0x00, 0x00, 0x02,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x30, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
	0x26, 0xbb, 0x0a, 0x00, 0x00, 0x02, 0x0a, 0x00, 0x00, 0x01, 0xc1, 0x23,
	0x12, 0xb7, 0x00, 0x1c, 0x00, 0x00, 0x11, 0x00, 0xff, 0xff, 0x00, 0x00,
	0x01, 0x04, 0x00, 0x12, 0x34, 0x56, 0x1f, 0x00, 0x00, 0x07, 0x28, 0xba,
	0x91, 0x6d,
};
static const uint8_t v6_write_imm[106] = {
	0x00, 0x0d, 0x3a, 0x00, 0x00, 0x02, 0x00, 0x0d, 0x3a, 0x00, 0x00, 0x01,
	0x86, 0xdd, 0x62, 0x01, 0x23, 0x45, 0x00, 0x34, 0x11, 0x40, 0xfe, 0x80,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x0d, 0x3a, 0xff, 0xfe, 0x00,
	0x00, 0x01, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x0d,
	0x3a, 0xff, 0xfe, 0x00, 0x00, 0x02, 0xd3, 0x45, 0x12, 0xb7, 0x00, 0x34,
	0x00, 0x00, 0x0b, 0x00, 0xff, 0xff, 0x00, 0x00, 0x03, 0x03, 0x80, 0x00,
	0x00, 0x10, 0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x56, 0x78, 0x00, 0x00,
	0x12, 0x34, 0x00, 0x00, 0x00, 0x08, 0xde, 0xad, 0xbe, 0xef, 0x01, 0x02,
	0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x82, 0xf2, 0xc5, 0x3c,
};

static const uint8_t v4_uc_send_only_imm[66] = {
	0x00, 0x0d, 0x3a, 0x00, 0x00, 0x02, 0x00, 0x0d, 0x3a, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x68, 0x00, 0x34, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
	0x26, 0x4f, 0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02, 0xc0, 0xde,
	0x12, 0xb7, 0x00, 0x20, 0x00, 0x00, 0x25, 0x90, 0xff, 0xff, 0x00, 0x00,
	0x02, 0x03, 0x00, 0x00, 0x00, 0x10, 0xca, 0xfe, 0xf0, 0x0d, 0x75, 0x63,
	0x21, 0x00, 0x57, 0x3c, 0xeb, 0x62,
};
static const uint8_t v4_uc_write_first[82] = {
	0x00, 0x0d, 0x3a, 0x00, 0x00, 0x01, 0x00, 0x0d, 0x3a, 0x00, 0x00, 0x02,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x44, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
	0x26, 0xa7, 0x0a, 0x00, 0x00, 0x02, 0x0a, 0x00, 0x00, 0x01, 0xc1, 0x23,
	0x12, 0xb7, 0x00, 0x30, 0x00, 0x00, 0x26, 0x00, 0xff, 0xff, 0x00, 0x00,
	0x01, 0x04, 0x00, 0xff, 0xff, 0xfe, 0x00, 0x00, 0x7f, 0x00, 0x12, 0x34,
	0x50, 0x00, 0x00, 0xab, 0xcd, 0x12, 0x00, 0x00, 0x08, 0x00, 0x01, 0x02,
	0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x2b, 0xaf, 0xd6, 0xff,
};

static const uint8_t mac0[6] = { 0x00, 0x0d, 0x3a, 0x00, 0x00, 0x01 };
static const uint8_t mac1[6] = { 0x00, 0x0d, 0x3a, 0x00, 0x00, 0x02 };

static void gid_v4(uint8_t g[16], uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	memset(g, 0, 16);
	g[10] = g[11] = 0xff;
	g[12] = a;
	g[13] = b;
	g[14] = c;
	g[15] = d;
}

static void gid_ll(uint8_t g[16], uint8_t last)
{
	static const uint8_t ll[16] = { 0xfe, 0x80, 0, 0, 0, 0, 0, 0,
					0x02, 0x0d, 0x3a, 0xff, 0xfe, 0, 0, 0 };

	memcpy(g, ll, 16);
	g[15] = last;
}

static void pkt_send_only(struct roce_pkt *p)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->dmac, mac1, 6);
	memcpy(p->smac, mac0, 6);
	gid_v4(p->sgid, 10, 0, 0, 1);
	gid_v4(p->dgid, 10, 0, 0, 2);
	p->traffic_class = 0x68;	/* DSCP 26 */
	p->hop_limit = 64;
	p->udp_sport = 0xc0de;
	p->opcode = ROCE_SEND_ONLY;
	p->se = true;
	p->ack_req = true;
	p->pkey = ROCE_PKEY_DEFAULT;
	p->dqpn = 0x000203;
	p->psn = 0x123456;
	p->payload = (const uint8_t *)"hello";
	p->payload_len = 5;
}

static void pkt_ack(struct roce_pkt *p)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->dmac, mac0, 6);
	memcpy(p->smac, mac1, 6);
	gid_v4(p->sgid, 10, 0, 0, 2);
	gid_v4(p->dgid, 10, 0, 0, 1);
	p->hop_limit = 64;
	p->udp_sport = 0xc123;
	p->opcode = ROCE_ACK;
	p->pkey = ROCE_PKEY_DEFAULT;
	p->dqpn = 0x000104;
	p->psn = 0x123456;
	p->syndrome = ROCE_SYN_ACK(ROCE_CREDITS_INVALID);
	p->msn = 7;
}

static const uint8_t write_data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

static void pkt_write_imm(struct roce_pkt *p)
{
	memset(p, 0, sizeof(*p));
	memcpy(p->dmac, mac1, 6);
	memcpy(p->smac, mac0, 6);
	p->ipv6 = true;
	gid_ll(p->sgid, 1);
	gid_ll(p->dgid, 2);
	p->traffic_class = 0x20;
	p->flow_label = 0x12345;
	p->hop_limit = 64;
	p->udp_sport = 0xd345;
	p->opcode = ROCE_WRITE_ONLY_IMM;
	p->ack_req = true;
	p->pkey = ROCE_PKEY_DEFAULT;
	p->dqpn = 0x000303;
	p->psn = 0x10;
	p->va = 0x00007f0012345678ULL;
	p->rkey = 0x1234;
	p->dma_len = 8;
	p->imm = 0xdeadbeef;
	p->payload = write_data;
	p->payload_len = 8;
}

/* UC (opcode class 0x20): SEND_ONLY with immediate, no AckReq */
static void pkt_uc_send_only_imm(struct roce_pkt *p)
{
	pkt_send_only(p);
	p->opcode = ROCE_UC_SEND_ONLY_IMM;
	p->ack_req = false;
	p->psn = 0x10;
	p->imm = 0xcafef00d;
	p->payload = (const uint8_t *)"uc!";
	p->payload_len = 3;
}

/* UC WRITE_FIRST: a RETH, one MTU's worth announced, PSN near the wrap */
static void pkt_uc_write_first(struct roce_pkt *p)
{
	pkt_ack(p);
	p->opcode = ROCE_UC_WRITE_FIRST;
	p->syndrome = 0;
	p->msn = 0;
	p->dqpn = 0x000104;
	p->psn = 0xfffffe;
	p->va = 0x00007f0012345000ULL;
	p->rkey = 0x00abcd12;
	p->dma_len = 2048;
	p->payload = write_data;
	p->payload_len = 8;
}

static bool pkt_eq(const struct roce_pkt *a, const struct roce_pkt *b)
{
	return !memcmp(a->dmac, b->dmac, 6) && !memcmp(a->smac, b->smac, 6) &&
	       a->ipv6 == b->ipv6 && !memcmp(a->sgid, b->sgid, 16) &&
	       !memcmp(a->dgid, b->dgid, 16) &&
	       a->traffic_class == b->traffic_class &&
	       a->hop_limit == b->hop_limit && a->flow_label == b->flow_label &&
	       a->udp_sport == b->udp_sport && a->opcode == b->opcode &&
	       a->se == b->se && a->mig == b->mig && a->ack_req == b->ack_req &&
	       a->pkey == b->pkey && a->dqpn == b->dqpn && a->psn == b->psn &&
	       a->va == b->va && a->rkey == b->rkey &&
	       a->dma_len == b->dma_len && a->syndrome == b->syndrome &&
	       a->msn == b->msn && a->imm == b->imm && a->ieth == b->ieth &&
	       a->payload_len == b->payload_len &&
	       (!a->payload_len ||
		!memcmp(a->payload, b->payload, a->payload_len));
}

static const struct {
	const char *name;
	const uint8_t *bytes;
	size_t len;
	void (*make)(struct roce_pkt *p);
} vectors[] = {
	{ "IPv4 SEND_ONLY", v4_send_only, sizeof(v4_send_only), pkt_send_only },
	{ "IPv4 ACK", v4_ack, sizeof(v4_ack), pkt_ack },
	{ "IPv6 WRITE_ONLY_IMM", v6_write_imm, sizeof(v6_write_imm),
	  pkt_write_imm },
	{ "IPv4 UC SEND_ONLY_IMM", v4_uc_send_only_imm,
	  sizeof(v4_uc_send_only_imm), pkt_uc_send_only_imm },
	{ "IPv4 UC WRITE_FIRST", v4_uc_write_first, sizeof(v4_uc_write_first),
	  pkt_uc_write_first },
};

static void test_vectors(void)
{
	uint8_t buf[ROCE_MAX_FRAME];
	struct roce_pkt want, got;
	size_t i, len;

	for (i = 0; i < ARRAY_SIZE(vectors); i++) {
		vectors[i].make(&want);
		CHECK(!roce_encode(&want, buf, sizeof(buf), &len), "%s",
		      vectors[i].name);
		CHECK(len == vectors[i].len &&
		      !memcmp(buf, vectors[i].bytes, len),
		      "%s: encode differs (len %zu)", vectors[i].name, len);
		CHECK(roce_frame_is_roce(vectors[i].bytes, vectors[i].len),
		      "%s", vectors[i].name);
		CHECK(!roce_decode(vectors[i].bytes, vectors[i].len, &got),
		      "%s: decode", vectors[i].name);
		CHECK(pkt_eq(&want, &got), "%s: decoded fields differ",
		      vectors[i].name);
		/* too small a buffer */
		CHECK(roce_encode(&want, buf, vectors[i].len - 1, &len) ==
		      -ENOSPC, "%s", vectors[i].name);
	}
	/* the payload points into the frame */
	CHECK(!roce_decode(v4_send_only, sizeof(v4_send_only), &got) &&
	      got.payload == v4_send_only + 54, "payload pointer");
}

/* Flip one byte (xor) of a copy of @v and expect a reject. */
static void reject(const char *why, const uint8_t *v, size_t len, size_t at,
		   uint8_t x)
{
	uint8_t f[256];
	struct roce_pkt p;

	memcpy(f, v, len);
	f[at] ^= x;
	CHECK(roce_decode(f, len, &p) == -EINVAL, "%s accepted", why);
}

static void test_rejects(void)
{
	const uint8_t *v = v4_send_only;
	size_t n = sizeof(v4_send_only);
	uint8_t f[256];
	struct roce_pkt p;
	size_t len;

	reject("bad ICRC", v, n, n - 1, 0x01);
	reject("payload bit flip (ICRC)", v, n, 55, 0x80);
	reject("tver 1", v, n, 43, 0x01);
	reject("atomic opcode", v, n, 42, 0x04 ^ 0x13);
	reject("UD opcode", v, n, 42, 0x04 ^ 0x64);
	reject("UC READ request (no such opcode)", v, n, 42, 0x04 ^ 0x2c);
	reject("bad IPv4 checksum", v, n, 24, 0x01);
	reject("not UDP", v, n, 23, 0x11 ^ 0x06);
	reject("UDP port 4792", v, n, 37, 0xb7 ^ 0xb8);
	reject("ethertype ARP", v, n, 13, 0x06);
	reject("IPv6 header with version 4", v6_write_imm,
	       sizeof(v6_write_imm), 14, 0x20);
	reject("IPv6 bad ICRC", v6_write_imm, sizeof(v6_write_imm),
	       sizeof(v6_write_imm) - 4, 0x10);
	/* truncated: IP length longer than the frame */
	CHECK(roce_decode(v, n - 4, &p) == -EINVAL, "truncated frame");
	CHECK(roce_decode(v, 10, &p) == -EINVAL, "runt");
	/* an ACK may not carry a payload: grow the frame by 4 bytes */
	memcpy(f, v4_ack, sizeof(v4_ack));
	CHECK(roce_decode(f, sizeof(v4_ack), &p) == 0, "ACK decodes");
	/* the variant fields are not covered by the ICRC */
	memcpy(f, v, n);
	f[15] = 0x00;		/* TOS */
	f[22] = 0x01;		/* TTL, checksum fixed below */
	f[24] = f[25] = 0;
	{
		uint32_t s = 0;
		unsigned int i;

		for (i = 14; i < 34; i += 2)
			s += (uint32_t)f[i] << 8 | f[i + 1];
		while (s >> 16)
			s = (s & 0xffff) + (s >> 16);
		s = ~s & 0xffff;
		f[24] = (uint8_t)(s >> 8);
		f[25] = (uint8_t)s;
	}
	f[46] = 0xc0;		/* BTH FECN, BECN */
	CHECK(roce_decode(f, n, &p) == 0 && p.hop_limit == 1,
	      "variant fields must not count in the ICRC");

	/* encode rejects */
	pkt_send_only(&p);
	p.opcode = 0x13;
	CHECK(roce_encode(&p, f, sizeof(f), &len) == -EINVAL, "atomic encode");
	pkt_send_only(&p);
	p.opcode = ROCE_UC + ROCE_READ_REQ;
	CHECK(roce_encode(&p, f, sizeof(f), &len) == -EINVAL, "UC READ encode");
	pkt_send_only(&p);
	p.opcode = ROCE_UC + ROCE_ACK;
	CHECK(roce_encode(&p, f, sizeof(f), &len) == -EINVAL, "UC ACK encode");
	CHECK(roce_opcode_flags(ROCE_UC_WRITE_ONLY_IMM) ==
	      (roce_opcode_flags(ROCE_WRITE_ONLY_IMM) | ROCE_F_UC) &&
	      roce_opcode_flags(ROCE_UC_SEND_MIDDLE) ==
	      (roce_opcode_flags(ROCE_SEND_MIDDLE) | ROCE_F_UC),
	      "UC opcodes: the RC layout plus ROCE_F_UC");
	pkt_send_only(&p);
	p.psn = 0x1000000;
	CHECK(roce_encode(&p, f, sizeof(f), &len) == -EINVAL, "psn 25 bits");
	pkt_send_only(&p);
	p.dqpn = 0x1000000;
	CHECK(roce_encode(&p, f, sizeof(f), &len) == -EINVAL, "qpn 25 bits");
	pkt_ack(&p);
	p.payload = write_data;
	p.payload_len = 4;
	CHECK(roce_encode(&p, f, sizeof(f), &len) == -EINVAL, "ACK payload");
	pkt_send_only(&p);
	gid_ll(p.sgid, 1);
	CHECK(roce_encode(&p, f, sizeof(f), &len) == -EINVAL, "mixed GIDs");
}

static void test_sport_timer_psn(void)
{
	/* values of the kernel's formula, worked by hand (vec script) */
	CHECK(roce_udp_sport(0, 0x10, 0x20) == 0xc200, "%#x",
	      roce_udp_sport(0, 0x10, 0x20));
	CHECK(roce_udp_sport(0, 0x123456, 0xabcdef) == 0xc3c8, "%#x",
	      roce_udp_sport(0, 0x123456, 0xabcdef));
	CHECK(roce_udp_sport(0x12345, 1, 2) == 0xe341, "%#x",
	      roce_udp_sport(0x12345, 1, 2));
	CHECK(roce_rnr_timer_us(0) == 655360, "rnr 0");
	CHECK(roce_rnr_timer_us(1) == 10, "rnr 1");
	CHECK(roce_rnr_timer_us(12) == 640, "rnr 12");
	CHECK(roce_rnr_timer_us(14) == 1280, "rnr 14");
	CHECK(roce_rnr_timer_us(31) == 491520, "rnr 31");
	CHECK(roce_psn_diff(5, 0xfffffe) == 7, "psn wrap");
	CHECK(roce_psn_diff(0xfffffe, 5) == -7, "psn wrap back");
	CHECK(roce_psn_add(0xffffff, 2) == 1, "psn add");
	CHECK(roce_mtu_bytes(1) == 256 && roce_mtu_bytes(5) == 4096 &&
	      !roce_mtu_bytes(0) && !roce_mtu_bytes(6), "mtu");
	CHECK(roce_opcode_flags(ROCE_READ_REQ) & ROCE_F_RETH, "read req");
	CHECK(!roce_opcode_flags(0x12) && !roce_opcode_flags(0x14) &&
	      !roce_opcode_flags(0x65), "atomics, UD SEND_ONLY_IMM");
	/* UD SEND_ONLY: the GSI's MADs only, never taken as an RC SEND */
	CHECK(roce_opcode_flags(0x64) == (ROCE_F_DETH | ROCE_F_PAYLOAD |
					  ROCE_F_FIRST | ROCE_F_LAST),
	      "UD SEND_ONLY: DETH, not a SEND");
}

/*
 * The ICRC over every payload length and start alignment against a
 * bit-at-a-time CRC-32 of the masked packet (the table-driven sum reads
 * eight bytes a step and must get every tail and offset right).
 */
static uint32_t crc_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
	int k;

	while (n--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = crc & 1 ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
	}
	return crc;
}

static void test_icrc_lengths(void)
{
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff,
					 0xff, 0xff, 0xff, 0xff };
	static uint8_t buf[8 + 40 + 4200], m[40 + 4200];
	uint32_t x = 12345, want, got;
	size_t off, len, i;

	for (i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	for (off = 0; off < 8; off++) {
		/* every tail up to 300 bytes, then a few long ones */
		for (len = 40; len <= 40 + 4160; len += len < 340 ? 1 : 509) {
			const uint8_t *ip = buf + off;

			memcpy(m, ip, len);
			m[1] = 0xff;				/* TOS */
			m[8] = 0xff;				/* TTL */
			m[10] = m[11] = 0xff;			/* IP checksum */
			m[26] = m[27] = 0xff;			/* UDP checksum */
			m[32] = 0xff;				/* BTH resv8a */
			want = ~crc_bitwise(crc_bitwise(0xffffffffu, ones, 8),
					    m, len);
			got = roce_icrc(ip, len, false);
			if (got != want) {
				CHECK(0, "ICRC at offset %zu length %zu: %#x, want %#x",
				      off, len, got, want);
				return;
			}
		}
	}
	CHECK(1, "ICRC lengths and offsets");
}

/* A pcap of every vector plus a 3-segment SEND, for tshark. */
static int write_pcap(const char *path)
{
	static const uint32_t hdr[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, 65535,
					 1 };
	uint8_t buf[ROCE_MAX_FRAME], data[2048];
	FILE *f = fopen(path, "wb");
	struct roce_pkt p;
	size_t i, len;
	uint32_t t = 0;

	if (!f)
		return 1;
	fwrite(hdr, sizeof(hdr), 1, f);
	for (i = 0; i < ARRAY_SIZE(vectors) + 3; i++) {
		uint32_t rec[4] = { 1, t++, 0, 0 };

		if (i < ARRAY_SIZE(vectors)) {
			len = vectors[i].len;
			memcpy(buf, vectors[i].bytes, len);
		} else {
			static const uint8_t ops[3] = { ROCE_SEND_FIRST,
							ROCE_SEND_MIDDLE,
							ROCE_SEND_LAST_IMM };
			pkt_send_only(&p);
			memset(data, (int)i, sizeof(data));
			p.opcode = ops[i - ARRAY_SIZE(vectors)];
			p.psn = 0xfffffe + (uint32_t)(i - ARRAY_SIZE(vectors));
			p.psn &= ROCE_PSN_MASK;
			p.payload = data;
			p.payload_len = p.opcode == ROCE_SEND_LAST_IMM ? 100 :
									1024;
			p.imm = 0x01020304;
			if (roce_encode(&p, buf, sizeof(buf), &len))
				return 1;
		}
		rec[2] = rec[3] = (uint32_t)len;
		fwrite(rec, sizeof(rec), 1, f);
		fwrite(buf, len, 1, f);
	}
	return fclose(f) ? 1 : 0;
}

int main(int argc, char **argv)
{
	test_vectors();
	test_rejects();
	test_sport_timer_psn();
	test_icrc_lengths();
	if (argc > 1)
		CHECK(!write_pcap(argv[1]), "pcap %s", argv[1]);
	return check_done();
}
