// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * GDMA wire formats pinned by byte vectors.
 *
 * Every vector below was written by hand from the bit tables in
 * research/mana-kernel-and-gdma.md §3/§8 (and dpdk-mana-and-openvmm.md §3),
 * never produced by the encoder: decode(vector) must give the expected
 * struct and encode(struct) must give the vector.  Then tables of inputs
 * that must be rejected, the owner-bit arithmetic across laps and u32 wraps,
 * and WQEs that wrap at the end of a ring.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "providers/mana/gdma.h"
#include "check.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *hex(const void *p, size_t n)
{
	static char buf[4][1024];
	static int slot;
	const uint8_t *b = p;
	char *s = buf[slot++ & 3];
	size_t i, o = 0;

	for (i = 0; i < n && o + 4 < sizeof(buf[0]); i++)
		o += (size_t)snprintf(s + o, sizeof(buf[0]) - o, "%02x%s", b[i],
				      (i + 1) % 4 || i + 1 == n ? "" : " ");
	s[o] = 0;
	return s;
}

#define CHECK_BYTES(name, got, want, n) \
	CHECK(!memcmp(got, want, n), "%s:\n  got  %s\n  want %s", name, \
	      hex(got, n), hex(want, n))

static uint64_t le64(const uint8_t *b)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

static uint32_t le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

/* ------------------------------------------------------------------------ */
/* Doorbells */

static bool db_eq(const struct gdma_doorbell *a, const struct gdma_doorbell *b)
{
	return a->kind == b->kind && a->id == b->id && a->tail == b->tail &&
	       a->wqe_cnt == b->wqe_cnt && a->arm == b->arm &&
	       a->client_high == b->client_high &&
	       a->client_low == b->client_low && a->mod_usec == b->mod_usec &&
	       a->mod_usec_valid == b->mod_usec_valid &&
	       a->mod_comps == b->mod_comps &&
	       a->mod_comps_valid == b->mod_comps_valid;
}

static const struct {
	const char *name;
	uint8_t wire[8];
	struct gdma_doorbell db;
} db_vectors[] = {
	{ "SQ id 0x123 tail 0x4560",
	  { 0x23, 0x01, 0x00, 0x00, 0x60, 0x45, 0x00, 0x00 },
	  { .kind = GDMA_DB_SQ, .id = 0x123, .tail = 0x4560 } },
	{ "RQ id 0x42 wqe_cnt 5 tail 0x20",
	  { 0x42, 0x00, 0x00, 0x05, 0x20, 0x00, 0x00, 0x00 },
	  { .kind = GDMA_DB_RQ, .id = 0x42, .wqe_cnt = 5, .tail = 0x20 } },
	{ "RQ id 0xabcdef tail 0xffffffe0",
	  { 0xef, 0xcd, 0xab, 0x00, 0xe0, 0xff, 0xff, 0xff },
	  { .kind = GDMA_DB_RQ, .id = 0xabcdef, .tail = 0xffffffe0 } },
	{ "CQ id 0xabc tail 0x1234 arm",
	  { 0xbc, 0x0a, 0x00, 0x00, 0x34, 0x12, 0x00, 0x80 },
	  { .kind = GDMA_DB_CQ, .id = 0xabc, .tail = 0x1234, .arm = true } },
	{ "CQ id max tail max no arm",
	  { 0xff, 0xff, 0xff, 0x00, 0xff, 0xff, 0xff, 0x7f },
	  { .kind = GDMA_DB_CQ, .id = 0xffffff, .tail = 0x7fffffff } },
	{ "EQ id 0x10 tail 7 arm",
	  { 0x10, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x80 },
	  { .kind = GDMA_DB_EQ, .id = 0x10, .tail = 7, .arm = true } },
	{ "RQ client id 7 psn 0xabcd",
	  { 0x07, 0x00, 0x00, 0x01, 0xcd, 0xab, 0x00, 0x00 },
	  { .kind = GDMA_DB_RQ_CLIENT, .id = 7, .client_high = 1,
	    .client_low = 0xabcd } },
	{ "DIM id 5 usec 100 comps 16",
	  { 0x05, 0x00, 0x00, 0x00, 0x64, 0x80, 0x10, 0x80 },
	  { .kind = GDMA_DB_DIM, .id = 5, .mod_usec = 100,
	    .mod_usec_valid = true, .mod_comps = 16,
	    .mod_comps_valid = true } },
};

static const struct {
	const char *name;
	enum gdma_db_kind kind;
	uint64_t v;
} db_bad_decode[] = {
	{ "SQ reserved bit 24", GDMA_DB_SQ, 0x0000000001000001ULL },
	{ "SQ reserved bit 31", GDMA_DB_SQ, 0x0000000080000001ULL },
	{ "SQ tail not BU-aligned", GDMA_DB_SQ, 0x0000001000000001ULL },
	{ "RQ tail not BU-aligned", GDMA_DB_RQ, 0x0000000805000001ULL },
	{ "CQ reserved bit 24", GDMA_DB_CQ, 0x8000000001000001ULL },
	{ "EQ id above 16 bits", GDMA_DB_EQ, 0x0000000000010000ULL },
	{ "EQ reserved bit 31", GDMA_DB_EQ, 0x8000000080000000ULL },
	{ "DIM reserved bit 24", GDMA_DB_DIM, 0x0000000001000000ULL },
	{ "DIM reserved bit 42", GDMA_DB_DIM, 1ULL << 42 },
	{ "DIM reserved bit 56", GDMA_DB_DIM, 1ULL << 56 },
	{ "RQ client high 2", GDMA_DB_RQ_CLIENT, 0x0000000002000001ULL },
	{ "RQ client high 0", GDMA_DB_RQ_CLIENT, 0x0000000100000001ULL },
	{ "RQ client psn > 24 bits", GDMA_DB_RQ_CLIENT, 0x0100000001000001ULL },
	{ "unknown kind 0", (enum gdma_db_kind)0, 0 },
	{ "unknown kind 99", (enum gdma_db_kind)99, 0 },
};

static const struct {
	const char *name;
	struct gdma_doorbell db;
} db_bad_encode[] = {
	{ "SQ id 2^24", { .kind = GDMA_DB_SQ, .id = 0x1000000 } },
	{ "CQ id 2^24", { .kind = GDMA_DB_CQ, .id = 0x1000000 } },
	{ "EQ id 2^16", { .kind = GDMA_DB_EQ, .id = 0x10000 } },
	{ "CQ tail 2^31", { .kind = GDMA_DB_CQ, .tail = 0x80000000U } },
	{ "SQ tail 0x21", { .kind = GDMA_DB_SQ, .tail = 0x21 } },
	{ "SQ arm", { .kind = GDMA_DB_SQ, .arm = true } },
	{ "SQ wqe_cnt", { .kind = GDMA_DB_SQ, .wqe_cnt = 1 } },
	{ "RQ arm", { .kind = GDMA_DB_RQ, .arm = true } },
	{ "CQ wqe_cnt", { .kind = GDMA_DB_CQ, .wqe_cnt = 1 } },
	{ "CQ dim field", { .kind = GDMA_DB_CQ, .mod_comps = 1 } },
	{ "DIM usec 0x400", { .kind = GDMA_DB_DIM, .mod_usec = 0x400 } },
	{ "DIM tail", { .kind = GDMA_DB_DIM, .tail = 32 } },
	{ "RQ client tail", { .kind = GDMA_DB_RQ_CLIENT, .client_high = 1,
			      .tail = 32 } },
	{ "kind 0", { .kind = (enum gdma_db_kind)0 } },
};

static void test_doorbells(void)
{
	struct gdma_doorbell db;
	enum gdma_db_kind kind;
	bool is_short;
	uint64_t v;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(db_vectors); i++) {
		const char *n = db_vectors[i].name;
		uint8_t out[8];

		memset(&db, 0x5a, sizeof(db));
		CHECK(gdma_doorbell_decode(db_vectors[i].db.kind,
					   le64(db_vectors[i].wire), &db) == 0,
		      "%s: decode", n);
		CHECK(db_eq(&db, &db_vectors[i].db), "%s: decoded fields", n);
		v = 0;
		CHECK(gdma_doorbell_encode(&db_vectors[i].db, &v) == 0,
		      "%s: encode", n);
		gdma_put_le64(out, v);
		CHECK_BYTES(n, out, db_vectors[i].wire, 8);
	}
	for (i = 0; i < ARRAY_SIZE(db_bad_decode); i++)
		CHECK(gdma_doorbell_decode(db_bad_decode[i].kind,
					   db_bad_decode[i].v, &db) == -EINVAL,
		      "bad doorbell accepted: %s", db_bad_decode[i].name);
	for (i = 0; i < ARRAY_SIZE(db_bad_encode); i++) {
		v = 0x1234;
		CHECK(gdma_doorbell_encode(&db_bad_encode[i].db, &v) ==
		      -EINVAL && v == 0x1234, "bad doorbell encoded: %s",
		      db_bad_encode[i].name);
	}

	/* the page map of §3.2 */
	{
		static const struct {
			uint32_t off;
			enum gdma_db_kind kind;
			bool is_short;
		} map[] = {
			{ 0x000, GDMA_DB_SQ, false },
			{ 0x400, GDMA_DB_RQ, false },
			{ 0x408, GDMA_DB_RQ_CLIENT, false },
			{ 0x800, GDMA_DB_CQ, false },
			{ 0x820, GDMA_DB_DIM, false },
			{ 0xff8, GDMA_DB_EQ, false },
			{ 0x010, GDMA_DB_SQ, true },
			{ 0x410, GDMA_DB_RQ, true },
			{ 0x810, GDMA_DB_CQ, true },
			{ 0xff0, GDMA_DB_EQ, true },
		};
		static const uint32_t bad[] = { 0x008, 0x404, 0x808, 0xffc,
						0x1000, 0x7f8 };

		for (i = 0; i < ARRAY_SIZE(map); i++)
			CHECK(gdma_doorbell_kind_at(map[i].off, &kind,
						    &is_short) == 0 &&
			      kind == map[i].kind &&
			      is_short == map[i].is_short,
			      "doorbell offset 0x%x", map[i].off);
		for (i = 0; i < ARRAY_SIZE(bad); i++)
			CHECK(gdma_doorbell_kind_at(bad[i], &kind, &is_short) ==
			      -EINVAL, "offset 0x%x is no doorbell", bad[i]);
	}
}

static const struct {
	const char *name;
	uint8_t wire[4];
	struct gdma_short_doorbell db;
} sdb_vectors[] = {
	{ "short CQ id 0x12 +3 arm", { 0x03, 0x00, 0x12, 0x80 },
	  { .kind = GDMA_DB_CQ, .id = 0x12, .incr = 3, .arm = true } },
	{ "short SQ id 0xabc +0x40", { 0x40, 0x00, 0xbc, 0x0a },
	  { .kind = GDMA_DB_SQ, .id = 0xabc, .incr = 0x40 } },
	{ "short EQ id 0xfff +0xffff", { 0xff, 0xff, 0xff, 0x0f },
	  { .kind = GDMA_DB_EQ, .id = 0xfff, .incr = 0xffff } },
	{ "short RQ id 1 +0x20", { 0x20, 0x00, 0x01, 0x00 },
	  { .kind = GDMA_DB_RQ, .id = 1, .incr = 0x20 } },
};

static void test_short_doorbells(void)
{
	static const struct {
		const char *name;
		enum gdma_db_kind kind;
		uint32_t v;
	} bad[] = {
		{ "SQ with bit 31", GDMA_DB_SQ, 0x80000020 },
		{ "CQ reserved bit 28", GDMA_DB_CQ, 0x10000001 },
		{ "EQ reserved bit 30", GDMA_DB_EQ, 0x40000001 },
		{ "SQ incr not BU multiple", GDMA_DB_SQ, 0x00000010 },
		{ "RQ client has no short form", GDMA_DB_RQ_CLIENT, 0 },
		{ "DIM has no short form", GDMA_DB_DIM, 0 },
	};
	static const struct gdma_short_doorbell bad_enc[] = {
		{ .kind = GDMA_DB_CQ, .id = 0x1000 },
		{ .kind = GDMA_DB_RQ, .arm = true },
		{ .kind = GDMA_DB_SQ, .incr = 1 },
		{ .kind = GDMA_DB_DIM },
	};
	struct gdma_short_doorbell db;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sdb_vectors); i++) {
		const char *n = sdb_vectors[i].name;
		uint32_t v = 0;
		uint8_t out[4];

		memset(&db, 0x5a, sizeof(db));
		CHECK(gdma_short_doorbell_decode(sdb_vectors[i].db.kind,
						 le32(sdb_vectors[i].wire),
						 &db) == 0, "%s: decode", n);
		CHECK(db.kind == sdb_vectors[i].db.kind &&
		      db.id == sdb_vectors[i].db.id &&
		      db.incr == sdb_vectors[i].db.incr &&
		      db.arm == sdb_vectors[i].db.arm, "%s: fields", n);
		CHECK(gdma_short_doorbell_encode(&sdb_vectors[i].db, &v) == 0,
		      "%s: encode", n);
		gdma_put_le32(out, v);
		CHECK_BYTES(n, out, sdb_vectors[i].wire, 4);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		CHECK(gdma_short_doorbell_decode(bad[i].kind, bad[i].v, &db) ==
		      -EINVAL, "short doorbell accepted: %s", bad[i].name);
	for (i = 0; i < ARRAY_SIZE(bad_enc); i++) {
		uint32_t v;

		CHECK(gdma_short_doorbell_encode(&bad_enc[i], &v) == -EINVAL,
		      "bad short doorbell %zu encoded", i);
	}
}

/* Tails: SQ/RQ byte offsets wrap at 2^32, CQ/EQ tails modulo 8 laps. */
static void test_tails(void)
{
	struct gdma_doorbell db = { .kind = GDMA_DB_SQ, .id = 1 };
	uint8_t out[8];
	uint64_t v;

	CHECK(gdma_wq_db_tail(0) == 0, "tail(0)");
	CHECK(gdma_wq_db_tail(1) == 32, "tail(1)");
	CHECK(gdma_wq_db_tail(0x07ffffff) == 0xffffffe0U, "tail before wrap");
	CHECK(gdma_wq_db_tail(0x08000000) == 0, "tail wraps to 0");
	CHECK(gdma_wq_db_tail(0x08000003) == 0x60, "tail after wrap");
	CHECK(gdma_wq_db_tail(0xffffffffU) == 0xffffffe0U, "u32 head wrap");
	CHECK(gdma_wq_db_pending(0x20, 0xffffffc0U) == 0x60,
	      "pending across the 2^32 wrap");
	CHECK(gdma_wq_db_pending(0x1000, 0x1000) == 0, "nothing pending");

	db.tail = gdma_wq_db_tail(0x07ffffff);
	CHECK(gdma_doorbell_encode(&db, &v) == 0, "encode wrapped tail");
	gdma_put_le64(out, v);
	CHECK_BYTES("SQ tail 0xffffffe0", out,
		    ((const uint8_t[]){ 0x01, 0, 0, 0,
					0xe0, 0xff, 0xff, 0xff }), 8);

	CHECK(gdma_cq_db_tail(64, 64) == 64, "initial CQ tail = count");
	CHECK(gdma_cq_db_tail(512, 64) == 0, "8 laps wrap to 0");
	CHECK(gdma_cq_db_tail(600, 64) == 88, "600 %% 512");
	CHECK(gdma_cq_db_tail(192 * 8 + 5, 192) == 5, "non-pow2 count");
	CHECK(gdma_cq_db_tail(0xffffffffU, 4) == 31, "u32 head");
	CHECK(gdma_cq_db_tail(5, 0) == 0, "count 0");
	CHECK(gdma_cq_db_tail(5, 1U << 29) == 0, "count too large");
	CHECK(gdma_cq_db_tail(0xffffffffU, 1U << 28) == 0x7fffffffU,
	      "largest count fills 31 bits");

	CHECK(gdma_cq_db_unconsumed(70, 64, 64) == 6, "6 unconsumed");
	CHECK(gdma_cq_db_unconsumed(515, 510, 64) == 5, "unconsumed over wrap");
	CHECK(gdma_cq_db_unconsumed(64, 64, 64) == 0, "caught up");
	CHECK(gdma_cq_db_unconsumed(64 + 65, 64, 64) == 65, "overflowed");
}

/* ------------------------------------------------------------------------ */
/* WQE header and SGE */

static bool hdr_eq(const struct gdma_wqe_header *a,
		   const struct gdma_wqe_header *b)
{
	return a->num_sge == b->num_sge && a->oob_size == b->oob_size &&
	       a->oob_in_sgl == b->oob_in_sgl &&
	       a->last_vbytes == b->last_vbytes &&
	       a->client_data_unit == b->client_data_unit &&
	       a->num_padding_sgls == b->num_padding_sgls &&
	       a->consume_credit == b->consume_credit && a->fence == b->fence &&
	       a->check_sn == b->check_sn && a->sgl_direct == b->sgl_direct;
}

static const struct {
	const char *name;
	enum gdma_queue_type qt;
	uint8_t wire[8];
	struct gdma_wqe_header h;
} hdr_vectors[] = {
	{ "SQ 2 SGEs 8B OOB", GDMA_SQ, { 0, 0, 0, 0, 0x02, 0x02, 0, 0 },
	  { .num_sge = 2, .oob_size = 8 } },
	{ "RQ 1 SGE", GDMA_RQ, { 0, 0, 0, 0, 0x01, 0x02, 0, 0 },
	  { .num_sge = 1, .oob_size = 8 } },
	{ "RQ 15 SGEs", GDMA_RQ, { 0, 0, 0, 0, 0x0f, 0x02, 0, 0 },
	  { .num_sge = 15, .oob_size = 8 } },
	{ "RQ check_sn", GDMA_RQ, { 0, 0, 0, 0, 0x01, 0x02, 0x00, 0x40 },
	  { .num_sge = 1, .oob_size = 8, .check_sn = true } },
	{ "SQ 30 SGEs 24B OOB", GDMA_SQ, { 0, 0, 0, 0, 0x1e, 0x06, 0, 0 },
	  { .num_sge = 30, .oob_size = 24 } },
	{ "SQ LSO", GDMA_SQ, { 0, 0, 0, 0x36, 0x03, 0x0e, 0xa8, 0x05 },
	  { .num_sge = 3, .oob_size = 24, .oob_in_sgl = true,
	    .last_vbytes = 0x36, .client_data_unit = 1448 } },
	{ "SQ rdma-core 32B OOB", GDMA_SQ,
	  { 0x02, 0, 0, 0, 0x04, 0x27, 0x00, 0x40 },
	  { .num_sge = 4, .oob_size = 32, .num_padding_sgls = 2,
	    .fence = true, .check_sn = true } },
	{ "SQ consume_credit mtu 4096", GDMA_SQ,
	  { 0, 0, 0, 0, 0x01, 0x12, 0x00, 0x10 },
	  { .num_sge = 1, .oob_size = 8, .consume_credit = true,
	    .client_data_unit = 4096 } },
};

static const struct {
	const char *name;
	enum gdma_queue_type qt;
	uint8_t wire[8];
} hdr_bad[] = {
	{ "OOB size code 4 (16 B)", GDMA_SQ, { 0, 0, 0, 0, 2, 0x04, 0, 0 } },
	{ "OOB size code 0", GDMA_SQ, { 0, 0, 0, 0, 2, 0x00, 0, 0 } },
	{ "OOB size code 1", GDMA_SQ, { 0, 0, 0, 0, 2, 0x01, 0, 0 } },
	{ "SQ num_sge 31", GDMA_SQ, { 0, 0, 0, 0, 31, 0x02, 0, 0 } },
	{ "SQ num_sge 255", GDMA_SQ, { 0, 0, 0, 0, 255, 0x02, 0, 0 } },
	{ "SQ num_sge 0", GDMA_SQ, { 0, 0, 0, 0, 0, 0x02, 0, 0 } },
	{ "SQ 32B OOB, 30 SGEs", GDMA_SQ, { 0, 0, 0, 0, 30, 0x07, 0, 0 } },
	{ "RQ num_sge 16", GDMA_RQ, { 0, 0, 0, 0, 16, 0x02, 0, 0 } },
	{ "RQ num_sge 0", GDMA_RQ, { 0, 0, 0, 0, 0, 0x02, 0, 0 } },
	{ "RQ 24B OOB", GDMA_RQ, { 0, 0, 0, 0, 1, 0x06, 0, 0 } },
	{ "RQ oob_in_sgl", GDMA_RQ, { 0, 0, 0, 0, 1, 0x0a, 0, 0 } },
	{ "RQ client_data_unit", GDMA_RQ, { 0, 0, 0, 0, 1, 0x02, 0x01, 0 } },
	{ "RQ fence", GDMA_RQ, { 0, 0, 0, 0, 1, 0x22, 0, 0 } },
	{ "RQ padding sgls", GDMA_RQ, { 1, 0, 0, 0, 2, 0x02, 0, 0 } },
	{ "dw0 reserved bit 5", GDMA_SQ, { 0x20, 0, 0, 0, 1, 0x02, 0, 0 } },
	{ "dw0 reserved bit 23", GDMA_SQ, { 0, 0, 0x80, 0, 1, 0x02, 0, 0 } },
	{ "dw1 reserved bit 14", GDMA_SQ, { 0, 0, 0, 0, 1, 0x42, 0, 0 } },
	{ "dw1 reserved bit 15", GDMA_SQ, { 0, 0, 0, 0, 1, 0x82, 0, 0 } },
	{ "sgl_direct", GDMA_SQ, { 0, 0, 0, 0, 1, 0x02, 0, 0x80 } },
	{ "last_vbytes without oob_in_sgl", GDMA_SQ,
	  { 0, 0, 0, 0x10, 1, 0x02, 0, 0 } },
	{ "padding >= num_sge", GDMA_SQ, { 2, 0, 0, 0, 2, 0x02, 0, 0 } },
	{ "CQ is no work queue", GDMA_CQ, { 0, 0, 0, 0, 1, 0x02, 0, 0 } },
};

static const struct {
	const char *name;
	enum gdma_queue_type qt;
	struct gdma_wqe_header h;
} hdr_bad_enc[] = {
	{ "OOB 16", GDMA_SQ, { .num_sge = 1, .oob_size = 16 } },
	{ "OOB 0", GDMA_SQ, { .num_sge = 1, .oob_size = 0 } },
	{ "SQ 31 SGEs", GDMA_SQ, { .num_sge = 31, .oob_size = 8 } },
	{ "RQ 16 SGEs", GDMA_RQ, { .num_sge = 16, .oob_size = 8 } },
	{ "RQ 24B OOB", GDMA_RQ, { .num_sge = 1, .oob_size = 24 } },
	{ "client_data_unit 0x4000", GDMA_SQ,
	  { .num_sge = 1, .oob_size = 8, .client_data_unit = 0x4000 } },
	{ "padding 32", GDMA_SQ,
	  { .num_sge = 30, .oob_size = 8, .num_padding_sgls = 32 } },
	{ "EQ", GDMA_EQ, { .num_sge = 1, .oob_size = 8 } },
};

static void test_wqe_header(void)
{
	struct gdma_wqe_header h;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(hdr_vectors); i++) {
		const char *n = hdr_vectors[i].name;
		uint8_t out[8];

		memset(&h, 0x5a, sizeof(h));
		CHECK(gdma_wqe_header_decode(hdr_vectors[i].wire,
					     hdr_vectors[i].qt, &h) == 0,
		      "%s: decode", n);
		CHECK(hdr_eq(&h, &hdr_vectors[i].h), "%s: fields", n);
		memset(out, 0xee, sizeof(out));
		CHECK(gdma_wqe_header_encode(&hdr_vectors[i].h,
					     hdr_vectors[i].qt, out) == 0,
		      "%s: encode", n);
		CHECK_BYTES(n, out, hdr_vectors[i].wire, 8);
	}
	for (i = 0; i < ARRAY_SIZE(hdr_bad); i++)
		CHECK(gdma_wqe_header_decode(hdr_bad[i].wire, hdr_bad[i].qt,
					     &h) == -EINVAL,
		      "bad WQE header accepted: %s", hdr_bad[i].name);
	for (i = 0; i < ARRAY_SIZE(hdr_bad_enc); i++) {
		uint8_t out[8] = { 0 };

		CHECK(gdma_wqe_header_encode(&hdr_bad_enc[i].h,
					     hdr_bad_enc[i].qt, out) ==
		      -EINVAL && !le64(out),
		      "bad WQE header encoded: %s", hdr_bad_enc[i].name);
	}
}

static void test_sge(void)
{
	static const uint8_t wire[16] = {
		0x90, 0x78, 0x56, 0x34, 0x12, 0x7f, 0x00, 0x00,
		0x34, 0x12, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00,
	};
	struct gdma_sge want = { .addr = 0x00007f1234567890ULL,
				 .mkey = 0x1234, .size = 2048 };
	struct gdma_sge got = { 0 };
	uint8_t out[16];

	CHECK(gdma_sge_decode(wire, &got) == 0, "SGE decode");
	CHECK(got.addr == want.addr && got.mkey == want.mkey &&
	      got.size == want.size, "SGE fields");
	CHECK(gdma_sge_encode(&want, out) == 0, "SGE encode");
	CHECK_BYTES("SGE", out, wire, 16);
}

/* §3.4: short OOB k SGEs = ceil((16+16k)/32) BU, long ceil((32+16k)/32) */
static void test_wqe_sizes(void)
{
	static const struct {
		uint32_t oob, nsge, size;
	} t[] = {
		{ 8, 1, 32 },	{ 8, 2, 64 },	 { 8, 3, 64 },	  { 8, 4, 96 },
		{ 8, 15, 256 }, { 8, 30, 512 },	 { 24, 1, 64 },	  { 24, 2, 64 },
		{ 24, 3, 96 },	{ 24, 30, 512 }, { 32, 1, 64 },	  { 32, 2, 96 },
		{ 32, 29, 512 }, { 32, 30, 544 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++)
		CHECK(gdma_wqe_size(t[i].oob, t[i].nsge) == t[i].size,
		      "size(oob %u, %u SGEs) = %u, want %u", t[i].oob,
		      t[i].nsge, gdma_wqe_size(t[i].oob, t[i].nsge),
		      t[i].size);
	CHECK(gdma_wqe_size_bu(8, 1) == 1, "RQ 1 SGE = 1 BU");
	CHECK(gdma_wqe_size_bu(8, 15) == 8, "RQ 15 SGEs = 8 BU");
	CHECK(gdma_wqe_sgl_offset(8) == 16 && gdma_wqe_sgl_offset(24) == 32 &&
	      gdma_wqe_sgl_offset(32) == 48, "SGL offsets 16/32/48");
	CHECK(gdma_wqe_ring_offset(130, 4096) == 64, "ring offset wraps");
	CHECK(gdma_wqe_ring_offset(0xffffffffU, 8192) == 8192 - 32,
	      "ring offset at u32 head wrap");
	CHECK((GDMA_MAX_SQE_SIZE - 16 - 8) / 16 == GDMA_MAX_TX_SGE &&
	      (GDMA_MAX_RQE_SIZE - 16) / 16 == GDMA_MAX_RX_SGE,
	      "derived SGE limits");
}

/* ------------------------------------------------------------------------ */
/* TX OOB */

static bool txoob_eq(const struct mana_tx_oob *a, const struct mana_tx_oob *b)
{
	return a->pkt_fmt == b->pkt_fmt &&
	       a->is_outer_ipv4 == b->is_outer_ipv4 &&
	       a->is_outer_ipv6 == b->is_outer_ipv6 &&
	       a->comp_iphdr_csum == b->comp_iphdr_csum &&
	       a->comp_tcp_csum == b->comp_tcp_csum &&
	       a->comp_udp_csum == b->comp_udp_csum &&
	       a->suppress_txcqe_gen == b->suppress_txcqe_gen &&
	       a->vcq_num == b->vcq_num && a->trans_off == b->trans_off &&
	       a->vsq_frame == b->vsq_frame &&
	       a->short_vp_offset == b->short_vp_offset &&
	       a->is_encap == b->is_encap &&
	       a->inner_is_ipv6 == b->inner_is_ipv6 &&
	       a->inner_tcp_opt == b->inner_tcp_opt &&
	       a->inject_vlan_pri_tag == b->inject_vlan_pri_tag &&
	       a->pcp == b->pcp && a->dei == b->dei &&
	       a->vlan_id == b->vlan_id &&
	       a->inner_frame_offset == b->inner_frame_offset &&
	       a->inner_ip_rel_offset == b->inner_ip_rel_offset &&
	       a->long_vp_offset == b->long_vp_offset;
}

/* IPv4 TCP, checksums, suppressed CQE, CQ 0x123, SQ id 0x12c00, vport 5 */
static const uint8_t tx_short_wire[8] = {
	0xb4, 0x23, 0x01, 0x00, 0x22, 0x2c, 0x01, 0x05,
};
static const struct mana_tx_oob tx_short = {
	.pkt_fmt = MANA_SHORT_PKT_FMT, .is_outer_ipv4 = true,
	.comp_iphdr_csum = true, .comp_tcp_csum = true,
	.suppress_txcqe_gen = true, .vcq_num = 0x123, .trans_off = 34,
	.vsq_frame = 0x4b, .short_vp_offset = 5,
};

/* IPv6 UDP with VLAN 0x123 pcp 5 dei, long vport offset 0x100 */
static const uint8_t tx_long_wire[24] = {
	0x49, 0x42, 0x00, 0x00, 0x36, 0x00, 0x00, 0x00,
	0x08, 0x00, 0x3d, 0x12, 0x00, 0x00, 0x00, 0x01,
	0, 0, 0, 0, 0, 0, 0, 0,
};
static const struct mana_tx_oob tx_long = {
	.pkt_fmt = MANA_LONG_PKT_FMT, .is_outer_ipv6 = true,
	.comp_udp_csum = true, .vcq_num = 0x42, .trans_off = 54,
	.inject_vlan_pri_tag = true, .pcp = 5, .dei = true, .vlan_id = 0x123,
	.long_vp_offset = 0x100,
};

/* long form with every field set, to pin the inner-header bits */
static const uint8_t tx_long_all_wire[24] = {
	0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0x07, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0x0f,
	0, 0, 0, 0, 0, 0, 0, 0,
};
static const struct mana_tx_oob tx_long_all = {
	.pkt_fmt = MANA_LONG_PKT_FMT, .vcq_num = 0xffffff,
	.trans_off = 0x3ff, .vsq_frame = 0x3fff, .short_vp_offset = 0xff,
	.is_encap = true, .inner_is_ipv6 = true, .inner_tcp_opt = true,
	.inner_frame_offset = 0x3ff, .inner_ip_rel_offset = 0x3f,
	.long_vp_offset = 0xfff,
};

static void test_tx_oob_vectors(void)
{
	static const struct {
		const char *name;
		const uint8_t *wire;
		uint32_t size;
		const struct mana_tx_oob *oob;
	} v[] = {
		{ "short TX OOB", tx_short_wire, 8, &tx_short },
		{ "long TX OOB (VLAN)", tx_long_wire, 24, &tx_long },
		{ "long TX OOB (all fields)", tx_long_all_wire, 24,
		  &tx_long_all },
	};
	struct mana_tx_oob o;
	size_t i;

	CHECK(mana_tx_vsq_frame(0x12c00) == 0x4b, "vsq_frame = sqid >> 10");
	CHECK(mana_tx_vsq_frame(0xffffff) == 0x3fff, "vsq_frame 14 bits");
	for (i = 0; i < ARRAY_SIZE(v); i++) {
		uint8_t out[24];

		memset(&o, 0x5a, sizeof(o));
		CHECK(mana_tx_oob_decode(v[i].wire, v[i].size, 0, &o) == 0,
		      "%s: decode", v[i].name);
		CHECK(txoob_eq(&o, v[i].oob), "%s: fields", v[i].name);
		memset(out, 0xee, sizeof(out));
		CHECK(mana_tx_oob_encode(v[i].oob, out) == 0, "%s: encode",
		      v[i].name);
		CHECK(mana_tx_oob_size(v[i].oob->pkt_fmt) == v[i].size,
		      "%s: size", v[i].name);
		CHECK_BYTES(v[i].name, out, v[i].wire, v[i].size);
		if (v[i].size == 8)
			CHECK(out[8] == 0xee, "short OOB wrote past 8 bytes");
	}
}

static void test_tx_oob_bad(void)
{
	static const struct {
		const char *name;
		uint8_t wire[24];
		uint32_t size;
	} bad[] = {
		{ "pkt_fmt 2", { 0x02 }, 8 },
		{ "pkt_fmt 3", { 0x03 }, 24 },
		{ "short format in 24 bytes", { 0x00 }, 24 },
		{ "long format in 8 bytes", { 0x01 }, 8 },
		{ "32-byte OOB", { 0x01 }, 32 },
		{ "16-byte OOB", { 0x00 }, 16 },
		{ "IPv4 and IPv6", { 0x0c }, 8 },
		{ "TCP and UDP checksum", { 0x60 }, 8 },
		{ "long reserved dw0 bit 4", { 0x01, [8] = 0x10 }, 24 },
		{ "long reserved dw0 bit 15", { 0x01, [9] = 0x80 }, 24 },
		{ "long reserved dw1 bit 28", { 0x01, [15] = 0x10 }, 24 },
		{ "long reserved dword 2", { 0x01, [16] = 0x01 }, 24 },
		{ "long reserved dword 3", { 0x01, [23] = 0x80 }, 24 },
	};
	static const struct {
		const char *name;
		struct mana_tx_oob o;
	} bad_enc[] = {
		{ "pkt_fmt 2", { .pkt_fmt = 2 } },
		{ "vcq_num 2^24", { .vcq_num = 0x1000000 } },
		{ "trans_off 0x400", { .trans_off = 0x400 } },
		{ "vsq_frame 0x4000", { .vsq_frame = 0x4000 } },
		{ "short with VLAN", { .vlan_id = 1 } },
		{ "short with long vport", { .long_vp_offset = 1 } },
		{ "short with inject", { .inject_vlan_pri_tag = true } },
		{ "pcp 8", { .pkt_fmt = 1, .pcp = 8 } },
		{ "vlan 0x1000", { .pkt_fmt = 1, .vlan_id = 0x1000 } },
		{ "long vport 0x1000", { .pkt_fmt = 1,
					 .long_vp_offset = 0x1000 } },
		{ "inner frame 0x400", { .pkt_fmt = 1,
					 .inner_frame_offset = 0x400 } },
		{ "inner ip rel 0x40", { .pkt_fmt = 1,
					 .inner_ip_rel_offset = 0x40 } },
		{ "v4 and v6", { .is_outer_ipv4 = true,
				 .is_outer_ipv6 = true } },
	};
	/* what DPDK >= 24.03 writes for VLAN insertion: stack garbage */
	static const uint8_t dpdk_vlan[24] = {
		0x05, 0x2a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07,
		0xf8, 0xff, 0x3d, 0x12, 0xad, 0xde, 0xef, 0xbe,
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
	};
	struct mana_tx_oob o;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		CHECK(mana_tx_oob_decode(bad[i].wire, bad[i].size, 0, &o) ==
		      -EINVAL, "bad TX OOB accepted: %s", bad[i].name);
	for (i = 0; i < ARRAY_SIZE(bad_enc); i++) {
		uint8_t out[24] = { 0 };

		CHECK(mana_tx_oob_encode(&bad_enc[i].o, out) == -EINVAL,
		      "bad TX OOB encoded: %s", bad_enc[i].name);
	}
	CHECK(mana_tx_oob_decode(tx_short_wire, 8, 0x2, &o) == -EINVAL,
	      "unknown decode flag");

	CHECK(mana_tx_oob_decode(dpdk_vlan, 24, 0, &o) == -EINVAL,
	      "strict decode rejects DPDK's garbage");
	CHECK(mana_tx_oob_decode(dpdk_vlan, 24, MANA_TX_OOB_IGNORE_RSVD, &o) ==
	      0, "tolerant decode accepts DPDK's garbage");
	CHECK(o.pkt_fmt == MANA_LONG_PKT_FMT && o.is_outer_ipv4 &&
	      o.vcq_num == 0x2a && o.short_vp_offset == 7 &&
	      o.inject_vlan_pri_tag && o.pcp == 5 && o.dei &&
	      o.vlan_id == 0x123, "VLAN fields of DPDK's long OOB");
	/* the ignore flag never relaxes the short form or the format */
	CHECK(mana_tx_oob_decode(bad[6].wire, 8, MANA_TX_OOB_IGNORE_RSVD, &o) ==
	      -EINVAL, "tolerant decode still rejects v4+v6");
	CHECK(mana_tx_oob_decode(bad[3].wire, 8, MANA_TX_OOB_IGNORE_RSVD, &o) ==
	      -EINVAL, "tolerant decode still checks the size");
}

/* ------------------------------------------------------------------------ */
/* CQE, completion header, RX and TX completion OOBs */

static void test_cqe(void)
{
	uint8_t wire[64], out[64];
	struct gdma_cqe c = { .owner = 0 };
	struct gdma_cqe want = { .wq_num = 0xabcd, .is_sq = true, .owner = 5 };
	int i;

	for (i = 0; i < 60; i++)
		wire[i] = want.data[i] = (uint8_t)(0xa0 + i);
	wire[60] = 0xcd;
	wire[61] = 0xab;
	wire[62] = 0x00;
	wire[63] = 0xa1;	/* owner 5 in bits 29-31, is_sq bit 24 */

	CHECK(gdma_cqe_decode(wire, &c) == 0, "CQE decode");
	CHECK(!memcmp(c.data, want.data, 60) && c.wq_num == 0xabcd &&
	      c.is_sq && c.owner == 5, "CQE fields");
	CHECK(gdma_cqe_owner(wire) == 5, "owner from byte 63");
	CHECK(gdma_cqe_encode(&want, out) == 0, "CQE encode");
	CHECK_BYTES("CQE", out, wire, 64);

	wire[60] = wire[61] = wire[62] = 0xff;
	wire[63] = 0xe0;	/* RQ 0xffffff, owner 7 */
	CHECK(gdma_cqe_decode(wire, &c) == 0 && c.wq_num == 0xffffff &&
	      !c.is_sq && c.owner == 7, "CQE RQ owner 7");

	wire[63] = 0xe2;	/* reserved bit 25 (openvmm "cmpln") */
	CHECK(gdma_cqe_decode(wire, &c) == -EINVAL, "CQE bit 25");
	wire[63] = 0xf0;	/* reserved bit 28 */
	CHECK(gdma_cqe_decode(wire, &c) == -EINVAL, "CQE bit 28");

	want.wq_num = 0x1000000;
	CHECK(gdma_cqe_encode(&want, out) == -EINVAL, "CQE wq_num 2^24");
	want.wq_num = 1;
	want.owner = 8;
	CHECK(gdma_cqe_encode(&want, out) == -EINVAL, "CQE owner 8");
}

static void test_cqe_types(void)
{
	static const uint8_t known[] = { 1, 2, 3, 4, 7, 32, 33, 34, 35, 36,
					 37, 38, 39, 40, 41 };
	struct mana_cqe_header h;
	unsigned int t, k;
	uint8_t w[4];

	for (t = 0; t < 64; t++) {
		bool want = false;

		for (k = 0; k < sizeof(known); k++)
			want |= known[k] == t;
		gdma_put_le32(w, t | 1U << 6 | 0x123456U << 8);
		CHECK((mana_cqe_header_decode(w, &h) == 0) == want,
		      "CQE type %u %s", t, want ? "rejected" : "accepted");
		if (want)
			CHECK(h.cqe_type == t && h.client_type == 1 &&
			      h.vendor_err == 0x123456, "header type %u", t);
	}
	gdma_put_le32(w, CQE_RX_OKAY);		/* client type 0 */
	CHECK(mana_cqe_header_decode(w, &h) == -EINVAL, "client type 0");
	gdma_put_le32(w, CQE_RX_OKAY | 2U << 6);
	CHECK(mana_cqe_header_decode(w, &h) == -EINVAL, "client type 2");

	h = (struct mana_cqe_header){ .cqe_type = CQE_TX_OKAY,
				      .client_type = 1,
				      .vendor_err = 0x1000000 };
	CHECK(mana_cqe_header_encode(&h, w) == -EINVAL, "vendor_err 2^24");
	h.vendor_err = 0;
	h.cqe_type = 42;	/* openvmm's TX_GDMA_ERR */
	CHECK(mana_cqe_header_encode(&h, w) == -EINVAL, "type 42");
}

static bool rxoob_eq(const struct mana_rx_comp_oob *a,
		     const struct mana_rx_comp_oob *b)
{
	int i;

	for (i = 0; i < MANA_RXCOMP_MAX_PKTS; i++)
		if (a->ppi[i].pkt_len != b->ppi[i].pkt_len ||
		    a->ppi[i].pkt_hash != b->ppi[i].pkt_hash)
			return false;
	return a->cqe_type == b->cqe_type && a->vendor_err == b->vendor_err &&
	       a->rx_vlan_id == b->rx_vlan_id &&
	       a->rx_vlantag_present == b->rx_vlantag_present &&
	       a->rx_outer_iphdr_csum_succeed ==
		       b->rx_outer_iphdr_csum_succeed &&
	       a->rx_outer_iphdr_csum_fail == b->rx_outer_iphdr_csum_fail &&
	       a->rx_hashtype == b->rx_hashtype &&
	       a->rx_iphdr_csum_succeed == b->rx_iphdr_csum_succeed &&
	       a->rx_iphdr_csum_fail == b->rx_iphdr_csum_fail &&
	       a->rx_tcp_csum_succeed == b->rx_tcp_csum_succeed &&
	       a->rx_tcp_csum_fail == b->rx_tcp_csum_fail &&
	       a->rx_udp_csum_succeed == b->rx_udp_csum_succeed &&
	       a->rx_udp_csum_fail == b->rx_udp_csum_fail &&
	       a->rx_wqe_offset == b->rx_wqe_offset;
}

/* one 1514-byte TCP/IPv4 frame, VLAN 100, L4 hash, checksums good */
static const uint8_t rx_okay_wire[60] = {
	0x41, 0x00, 0x00, 0x00,	0x64, 0x10, 0xb6, 0x0b,
	0xea, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x78, 0xc1, 0xcc, 0x51,
	[56] = 0x40,
};
static const struct mana_rx_comp_oob rx_okay = {
	.cqe_type = CQE_RX_OKAY, .rx_vlan_id = 100, .rx_vlantag_present = true,
	.rx_hashtype = MANA_HASH_L4, .rx_iphdr_csum_succeed = true,
	.rx_tcp_csum_succeed = true,
	.ppi = { { .pkt_len = 1514, .pkt_hash = 0x51ccc178 } },
	.rx_wqe_offset = 0x40,
};

/* three coalesced UDP frames, L3 hash */
static const uint8_t rx_coal4_wire[60] = {
	0x42, 0x00, 0x00, 0x00,	0x00, 0x00, 0x49, 0x22,
	0x3c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x11, 0x11, 0x11, 0x11,
	0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x22, 0x22, 0x22, 0x22,
	0xdc, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x33, 0x33, 0x33, 0x33,
	[57] = 0x10,
};
static const struct mana_rx_comp_oob rx_coal4 = {
	.cqe_type = CQE_RX_COALESCED_4, .rx_hashtype = MANA_HASH_L3,
	.rx_iphdr_csum_succeed = true, .rx_udp_csum_succeed = true,
	.ppi = { { 60, 0x11111111 }, { 64, 0x22222222 },
		 { 1500, 0x33333333 } },
	.rx_wqe_offset = 0x1000,
};

/* five frames in the 8-packet layout */
static const uint8_t rx_coal8_wire[60] = {
	0x47, 0x00, 0x00, 0x00,	0x00, 0x00, 0x00, 0x00,
	0x11, 0x11, 0x11, 0x11, 0x3c, 0x00, 0x3d, 0x00, 0x22, 0x22, 0x22, 0x22,
	0x33, 0x33, 0x33, 0x33, 0x3e, 0x00, 0x3f, 0x00, 0x44, 0x44, 0x44, 0x44,
	0x55, 0x55, 0x55, 0x55, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
static const struct mana_rx_comp_oob rx_coal8 = {
	.cqe_type = CQE_RX_COALESCED_8,
	.ppi = { { 60, 0x11111111 }, { 61, 0x22222222 }, { 62, 0x33333333 },
		 { 63, 0x44444444 }, { 64, 0x55555555 } },
};

/* a truncated frame, vendor error 5, outer IP checksum failed */
static const uint8_t rx_trunc_wire[60] = {
	0x44, 0x05, 0x00, 0x00,	0x00, 0x40, 0x00, 0x00,
	0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	[56] = 0x20,
};
static const struct mana_rx_comp_oob rx_trunc = {
	.cqe_type = CQE_RX_TRUNCATED, .vendor_err = 5,
	.rx_outer_iphdr_csum_fail = true, .ppi = { { .pkt_len = 2048 } },
	.rx_wqe_offset = 0x20,
};

static const uint8_t rx_fence_wire[60] = { 0x43 };
static const struct mana_rx_comp_oob rx_fence = {
	.cqe_type = CQE_RX_OBJECT_FENCE,
};

static void test_rx_oob_vectors(void)
{
	static const struct {
		const char *name;
		const uint8_t *wire;
		const struct mana_rx_comp_oob *oob;
		unsigned int pkts, wqes;
	} v[] = {
		{ "RX OKAY", rx_okay_wire, &rx_okay, 1, 1 },
		{ "RX COALESCED_4", rx_coal4_wire, &rx_coal4, 3, 3 },
		{ "RX COALESCED_8", rx_coal8_wire, &rx_coal8, 5, 5 },
		{ "RX TRUNCATED", rx_trunc_wire, &rx_trunc, 0, 1 },
		{ "RX OBJECT_FENCE", rx_fence_wire, &rx_fence, 0, 0 },
	};
	struct mana_rx_comp_oob o;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(v); i++) {
		uint8_t out[60];

		memset(&o, 0x5a, sizeof(o));
		CHECK(mana_rx_comp_oob_decode(v[i].wire, &o) == 0,
		      "%s: decode", v[i].name);
		CHECK(rxoob_eq(&o, v[i].oob), "%s: fields", v[i].name);
		memset(out, 0xee, sizeof(out));
		CHECK(mana_rx_comp_oob_encode(v[i].oob, out) == 0,
		      "%s: encode", v[i].name);
		CHECK_BYTES(v[i].name, out, v[i].wire, 60);
		CHECK(mana_rx_comp_pkts(v[i].oob) == v[i].pkts &&
		      mana_rx_comp_wqes(v[i].oob) == v[i].wqes,
		      "%s: packets/WQEs", v[i].name);
	}
}

static void test_rx_oob_bad(void)
{
	static const struct {
		const char *name;
		const uint8_t *base;
		unsigned int off;
		uint8_t val;		/* byte @off := val */
	} bad[] = {
		{ "type 0", rx_okay_wire, 0, 0x40 },
		{ "type 5", rx_okay_wire, 0, 0x45 },
		{ "type 6", rx_okay_wire, 0, 0x46 },
		{ "TX type in RX OOB", rx_okay_wire, 0, 0x60 },
		{ "client type 0", rx_okay_wire, 0, 0x01 },
		{ "client type 2", rx_okay_wire, 0, 0x81 },
		{ "flags bit 15", rx_okay_wire, 5, 0x90 },
		{ "flags bit 31", rx_okay_wire, 7, 0x8b },
		{ "IP csum good and bad", rx_okay_wire, 7, 0x0f },
		{ "TCP csum good and bad", rx_okay_wire, 7, 0x1b },
		{ "UDP csum good and bad", rx_coal4_wire, 7, 0x62 },
		{ "outer csum good and bad", rx_trunc_wire, 5, 0x60 },
		{ "ppi0 reserved u16", rx_okay_wire, 10, 0x01 },
		{ "ppi0 reserved u32", rx_okay_wire, 15, 0x80 },
		{ "ppi3 reserved u32", rx_coal4_wire, 48, 0x01 },
		{ "OKAY with a second length", rx_okay_wire, 20, 0x01 },
		{ "OKAY with a second hash", rx_okay_wire, 28, 0x01 },
		{ "OKAY with a fourth length", rx_okay_wire, 44, 0x01 },
		{ "OKAY without a length", rx_fence_wire, 0, 0x41 },
		{ "COALESCED_4 without a first length", rx_coal4_wire, 8, 0 },
		{ "COALESCED_4 with a gap", rx_coal4_wire, 20, 0x00 },
		{ "COALESCED_4 hash after end", rx_coal4_wire, 52, 0x01 },
		{ "COALESCED_8 with a gap", rx_coal8_wire, 14, 0x00 },
		{ "COALESCED_8 hash after end", rx_coal8_wire, 44, 0x01 },
		{ "COALESCED_8 first length 0", rx_coal8_wire, 12, 0x00 },
		{ "FENCE with a second length", rx_fence_wire, 20, 0x01 },
		{ "TRUNCATED with a second length", rx_trunc_wire, 32, 0x01 },
	};
	struct mana_rx_comp_oob o;
	uint8_t w[60];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memcpy(w, bad[i].base, sizeof(w));
		CHECK(w[bad[i].off] != bad[i].val, "%s: vector changes nothing",
		      bad[i].name);
		w[bad[i].off] = bad[i].val;
		CHECK(mana_rx_comp_oob_decode(w, &o) == -EINVAL,
		      "bad RX OOB accepted: %s", bad[i].name);
	}

	o = rx_okay;
	o.rx_vlan_id = 0x1000;
	CHECK(mana_rx_comp_oob_encode(&o, w) == -EINVAL, "vlan 0x1000");
	o = rx_okay;
	o.rx_hashtype = 0x200;
	CHECK(mana_rx_comp_oob_encode(&o, w) == -EINVAL, "hashtype 0x200");
	o = rx_okay;
	o.ppi[1].pkt_len = 60;
	CHECK(mana_rx_comp_oob_encode(&o, w) == -EINVAL, "OKAY 2 packets");
	o = rx_coal4;
	o.ppi[4].pkt_len = 60;
	CHECK(mana_rx_comp_oob_encode(&o, w) == -EINVAL, "COALESCED_4 5th");
	o = rx_okay;
	o.cqe_type = CQE_TX_OKAY;
	CHECK(mana_rx_comp_oob_encode(&o, w) == -EINVAL, "TX type");
	o = rx_okay;
	o.vendor_err = 0x1000000;
	CHECK(mana_rx_comp_oob_encode(&o, w) == -EINVAL, "vendor_err 2^24");
}

static void test_tx_comp(void)
{
	static const uint8_t ok_wire[60] = { 0x60 };
	static const uint8_t err_wire[60] = {
		0x63, 0x01, 0x02, 0x00, 0x00, 0x10, 0x00, 0x00,
		0x03, 0x08, 0x00, 0x00,
	};
	static const struct {
		const char *name;
		const uint8_t *wire;
		struct mana_tx_comp_oob oob;
	} v[] = {
		{ "TX OKAY", ok_wire, { .cqe_type = CQE_TX_OKAY } },
		{ "TX INVALID_OOB", err_wire,
		  { .cqe_type = CQE_TX_INVALID_OOB, .vendor_err = 0x201,
		    .tx_data_offset = 0x1000, .tx_sgl_offset = 3,
		    .tx_wqe_offset = 0x40 } },
	};
	static const struct {
		const char *name;
		unsigned int off;
		uint8_t val;
	} bad[] = {
		{ "RX type", 0, 0x41 },
		{ "type 42", 0, 0x6a },
		{ "type 31", 0, 0x5f },
		{ "client type 0", 0, 0x20 },
		{ "reserved byte 12", 12, 0x01 },
		{ "reserved byte 59", 59, 0x80 },
	};
	struct mana_tx_comp_oob o;
	uint8_t w[60];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(v); i++) {
		memset(&o, 0x5a, sizeof(o));
		CHECK(mana_tx_comp_oob_decode(v[i].wire, &o) == 0,
		      "%s: decode", v[i].name);
		CHECK(o.cqe_type == v[i].oob.cqe_type &&
		      o.vendor_err == v[i].oob.vendor_err &&
		      o.tx_data_offset == v[i].oob.tx_data_offset &&
		      o.tx_sgl_offset == v[i].oob.tx_sgl_offset &&
		      o.tx_wqe_offset == v[i].oob.tx_wqe_offset,
		      "%s: fields", v[i].name);
		memset(w, 0xee, sizeof(w));
		CHECK(mana_tx_comp_oob_encode(&v[i].oob, w) == 0,
		      "%s: encode", v[i].name);
		CHECK_BYTES(v[i].name, w, v[i].wire, 60);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memcpy(w, ok_wire, sizeof(w));
		w[bad[i].off] = bad[i].val;
		CHECK(mana_tx_comp_oob_decode(w, &o) == -EINVAL,
		      "bad TX completion accepted: %s", bad[i].name);
	}
	o = v[1].oob;
	o.tx_sgl_offset = 32;
	CHECK(mana_tx_comp_oob_encode(&o, w) == -EINVAL, "sgl offset 32");
	o = v[1].oob;
	o.tx_wqe_offset = 0x8000000;
	CHECK(mana_tx_comp_oob_encode(&o, w) == -EINVAL, "wqe offset 2^27");
	o = v[1].oob;
	o.cqe_type = CQE_RX_OKAY;
	CHECK(mana_tx_comp_oob_encode(&o, w) == -EINVAL, "RX type");
}

/* ------------------------------------------------------------------------ */
/* EQE */

static void test_eqe(void)
{
	static const struct {
		const char *name;
		uint8_t wire[16];
		struct gdma_eqe e;
	} v[] = {
		{ "EQE completion cq 0x123",
		  { 0x23, 0x01, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0,
		    0x03, 0x00, 0x00, 0x20 },
		  { .details = { 0x123 }, .type = GDMA_EQE_COMPLETION,
		    .owner = 1 } },
		{ "EQE test event",
		  { 0xef, 0xbe, 0xad, 0xde, 0x01, 0, 0, 0, 0x02, 0, 0, 0,
		    0x40, 0x00, 0x02, 0xe0 },
		  { .details = { 0xdeadbeef, 1, 2 },
		    .type = GDMA_EQE_TEST_EVENT, .client_id = 2,
		    .owner = 7 } },
		{ "EQE reset request",
		  { [12] = 0x87 },
		  { .type = GDMA_EQE_HWC_RESET_REQUEST } },
		{ "EQE QP fatal",
		  { 0x09, 0, 0, 0, [12] = 0xb0, [15] = 0x60 },
		  { .details = { 9 }, .type = GDMA_EQE_RNIC_QP_FATAL,
		    .owner = 3 } },
	};
	static const struct {
		const char *name;
		unsigned int off;
		uint8_t val;
	} bad[] = {
		{ "type 0", 12, 0x00 },
		{ "type 4", 12, 0x04 },
		{ "type 128", 12, 0x80 },
		{ "type 136", 12, 0x88 },
		{ "type 177", 12, 0xb1 },
		{ "reserved bit 8", 13, 0x01 },
		{ "reserved bit 18", 14, 0x04 },
		{ "reserved bit 28", 15, 0x30 },
	};
	struct gdma_eqe e;
	uint8_t w[16];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(v); i++) {
		memset(&e, 0x5a, sizeof(e));
		CHECK(gdma_eqe_decode(v[i].wire, &e) == 0, "%s: decode",
		      v[i].name);
		CHECK(e.details[0] == v[i].e.details[0] &&
		      e.details[1] == v[i].e.details[1] &&
		      e.details[2] == v[i].e.details[2] &&
		      e.type == v[i].e.type &&
		      e.client_id == v[i].e.client_id &&
		      e.owner == v[i].e.owner, "%s: fields", v[i].name);
		CHECK(gdma_eqe_owner(v[i].wire) == v[i].e.owner,
		      "%s: owner from byte 15", v[i].name);
		CHECK(gdma_eqe_encode(&v[i].e, w) == 0, "%s: encode",
		      v[i].name);
		CHECK_BYTES(v[i].name, w, v[i].wire, 16);
	}
	CHECK(gdma_eqe_cq_id(&v[0].e) == 0x123, "completion CQ id");
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memcpy(w, v[0].wire, sizeof(w));
		w[bad[i].off] = bad[i].val;
		CHECK(gdma_eqe_decode(w, &e) == -EINVAL,
		      "bad EQE accepted: %s", bad[i].name);
	}
	e = v[0].e;
	e.client_id = 4;
	CHECK(gdma_eqe_encode(&e, w) == -EINVAL, "client id 4");
	e = v[0].e;
	e.owner = 8;
	CHECK(gdma_eqe_encode(&e, w) == -EINVAL, "owner 8");
}

/* ------------------------------------------------------------------------ */
/* Owner bits */

static void test_owner_table(void)
{
	static const struct {
		uint32_t head, count;
		uint8_t owner;
		enum gdma_cqe_state want;
	} t[] = {
		/* first lap: zeroed memory (0) is empty, 1 is new */
		{ 4, 4, 0, GDMA_CQE_EMPTY },
		{ 4, 4, 1, GDMA_CQE_VALID },
		{ 4, 4, 2, GDMA_CQE_OVERFLOW },
		{ 4, 4, 7, GDMA_CQE_OVERFLOW },
		{ 7, 4, 1, GDMA_CQE_VALID },
		{ 7, 4, 0, GDMA_CQE_EMPTY },
		/* second lap */
		{ 8, 4, 1, GDMA_CQE_EMPTY },
		{ 8, 4, 2, GDMA_CQE_VALID },
		{ 8, 4, 0, GDMA_CQE_OVERFLOW },
		{ 8, 4, 3, GDMA_CQE_OVERFLOW },
		/* lap 7 -> lap 8 wraps the 3 bits */
		{ 28, 4, 6, GDMA_CQE_EMPTY },
		{ 28, 4, 7, GDMA_CQE_VALID },
		{ 32, 4, 7, GDMA_CQE_EMPTY },
		{ 32, 4, 0, GDMA_CQE_VALID },
		{ 32, 4, 1, GDMA_CQE_OVERFLOW },
		/* u32 head wrap with a power-of-two count */
		{ 0xfffffffcU, 4, 6, GDMA_CQE_EMPTY },
		{ 0xfffffffcU, 4, 7, GDMA_CQE_VALID },
		{ 0, 4, 7, GDMA_CQE_EMPTY },
		{ 0, 4, 0, GDMA_CQE_VALID },
		/* DPDK counts need not be powers of two */
		{ 192, 192, 0, GDMA_CQE_EMPTY },
		{ 192 * 2 + 5, 192, 2, GDMA_CQE_VALID },
		{ 192 * 9, 192, 0, GDMA_CQE_EMPTY },
		{ 192 * 9, 192, 1, GDMA_CQE_VALID },
		/* only the low 3 bits of the argument count */
		{ 4, 4, 9, GDMA_CQE_VALID },
		/* no queue */
		{ 4, 0, 1, GDMA_CQE_OVERFLOW },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(t); i++)
		CHECK(gdma_cqe_state(t[i].owner, t[i].head, t[i].count) ==
		      t[i].want, "owner %u head 0x%x count %u", t[i].owner,
		      t[i].head, t[i].count);
	CHECK(gdma_owner_expected(4, 4) == 1 &&
	      gdma_owner_expected(31, 4) == 7 &&
	      gdma_owner_expected(32, 4) == 0 &&
	      gdma_owner_expected(0xffffffffU, 4) == 7,
	      "owner_expected");
	CHECK(gdma_queue_slot(13, 4) == 1 && gdma_queue_slot(13, 0) == 0,
	      "queue slot");
}

/* Device and poller run against each other as §3.6 describes them. */
struct sim {
	uint8_t ring[16][GDMA_CQE_SIZE];
	uint32_t count, prod, head, seq_out, seq_in;
};

static void sim_produce(struct sim *s)
{
	struct gdma_cqe c = { .wq_num = s->seq_out & GDMA_QUEUE_ID_MAX,
			      .owner = gdma_owner_expected(s->prod, s->count) };

	gdma_put_le32(c.data, s->seq_out++);
	gdma_cqe_encode(&c, s->ring[gdma_queue_slot(s->prod, s->count)]);
	s->prod++;
}

/* Returns the number of entries read; -1 on a state the test did not want. */
static int sim_poll(struct sim *s, enum gdma_cqe_state stop_want)
{
	int n = 0;

	for (;;) {
		const uint8_t *e = s->ring[gdma_queue_slot(s->head, s->count)];
		enum gdma_cqe_state st;
		struct gdma_cqe c;

		st = gdma_cqe_state(gdma_cqe_owner(e), s->head, s->count);
		if (st != GDMA_CQE_VALID)
			return st == stop_want ? n : -1;
		if (gdma_cqe_decode(e, &c) || le32(c.data) != s->seq_in)
			return -1;
		s->seq_in++;
		s->head++;
		n++;
	}
}

static void sim_run(uint32_t start, uint32_t count, unsigned int steps)
{
	struct sim s = { .count = count, .prod = start, .head = start };
	uint32_t rnd = 12345, i, slot;
	bool ok = true;

	/* memory holds the lap before @start, as if polled empty */
	for (slot = 0; slot < count; slot++) {
		struct gdma_cqe c = {
			.owner = gdma_owner_expected(start - count, count) };

		gdma_cqe_encode(&c, s.ring[slot]);
	}
	for (i = 0; i < steps && ok; i++) {
		uint32_t room = count - (s.prod - s.head), k;

		rnd = rnd * 1103515245U + 12345U;
		for (k = (rnd >> 16) % (room + 1); k; k--)
			sim_produce(&s);
		ok = sim_poll(&s, GDMA_CQE_EMPTY) >= 0;
	}
	CHECK(ok && s.seq_in == s.seq_out && s.seq_in > steps,
	      "simulation from 0x%x, count %u: %u of %u read", start, count,
	      s.seq_in, s.seq_out);

	/* one entry too many laps the poller: it must see overflow */
	for (i = 0; i <= count; i++)
		sim_produce(&s);
	CHECK(sim_poll(&s, GDMA_CQE_OVERFLOW) == 0,
	      "overflow detected from 0x%x, count %u", start, count);
}

static void test_owner_simulation(void)
{
	sim_run(8, 8, 400);
	sim_run(16, 16, 400);
	/* across the u32 wrap of head and tail */
	sim_run(0xffffff00U, 8, 400);
	sim_run(0xfffffff0U, 16, 400);
}

/* ------------------------------------------------------------------------ */
/* WQEs in a ring */

/*
 * An SQ WQE at BU 7 of a 256-byte ring (8 BUs): header, short OOB and SGE0
 * fill bytes 224..255, SGE1 and SGE2 wrap to bytes 0..31.
 */
static void build_wrapped_ring(uint8_t ring[256])
{
	static const uint8_t tail[32] = {
		0x00, 0x00, 0x00, 0x00, 0x03, 0x02, 0x00, 0x00,
		0xb4, 0x23, 0x01, 0x00, 0x22, 0x2c, 0x01, 0x05,
		0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x11, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
	};
	static const uint8_t head[32] = {
		0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x22, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00,
		0x00, 0x30, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
		0x33, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00,
	};

	memset(ring, 0, 256);
	memcpy(ring + 224, tail, 32);
	memcpy(ring, head, 32);
}

static void fill_wrapped_wqe(struct gdma_wqe *w)
{
	memset(w, 0, sizeof(*w));
	w->hdr.num_sge = 3;
	w->hdr.oob_size = 8;
	memcpy(w->oob, tx_short_wire, 8);
	w->sge[0] = (struct gdma_sge){ 0x1000, 0x11, 0x100 };
	w->sge[1] = (struct gdma_sge){ 0x2000, 0x22, 0x200 };
	w->sge[2] = (struct gdma_sge){ 0x100003000ULL, 0x33, 0x300 };
}

static void test_ring_wrap(void)
{
	uint8_t ring[256], built[256];
	struct gdma_wqe w = { .hdr.num_sge = 0 }, want;
	struct mana_tx_oob oob = { .pkt_fmt = 0 };
	uint32_t bu = 0;
	int i;

	build_wrapped_ring(built);
	fill_wrapped_wqe(&want);

	/* fetch: BU 7 and BU 7 + one ring lap land at the same place */
	CHECK(gdma_wqe_fetch(built, 256, 7, GDMA_SQ, &w, &bu) == 0 && bu == 2,
	      "fetch wrapped WQE");
	CHECK(hdr_eq(&w.hdr, &want.hdr), "wrapped WQE header");
	for (i = 0; i < 3; i++)
		CHECK(w.sge[i].addr == want.sge[i].addr &&
		      w.sge[i].mkey == want.sge[i].mkey &&
		      w.sge[i].size == want.sge[i].size, "wrapped SGE %d", i);
	CHECK(mana_tx_oob_decode(w.oob, w.hdr.oob_size, 0, &oob) == 0 &&
	      txoob_eq(&oob, &tx_short), "OOB of the wrapped WQE");
	CHECK(gdma_wqe_fetch(built, 256, 15, GDMA_SQ, &w, &bu) == 0 &&
	      w.sge[2].addr == 0x100003000ULL, "fetch one lap later");
	CHECK(gdma_wqe_fetch(built, 256, 7, GDMA_CQ, &w, &bu) == -EINVAL,
	      "a CQ holds no WQEs");

	/* post writes exactly the hand-built bytes */
	memset(ring, 0, sizeof(ring));
	CHECK(gdma_wqe_post(ring, 256, 15, GDMA_SQ, &want, &bu) == 0 &&
	      bu == 2, "post wrapped WQE");
	CHECK_BYTES("ring tail", ring + 224, built + 224, 32);
	CHECK_BYTES("ring head", ring, built, 32);

	/* padding to the BU boundary is zeroed; nothing else is touched */
	memset(ring, 0xee, sizeof(ring));
	want.hdr.num_sge = 2;
	CHECK(gdma_wqe_post(ring, 256, 0, GDMA_SQ, &want, &bu) == 0 && bu == 2,
	      "post 2 SGEs");
	CHECK(!le64(ring + 48) && !le64(ring + 56) && ring[64] == 0xee &&
	      ring[255] == 0xee, "padding zeroed, rest untouched");

	/* an RQ WQE as DPDK posts it: stale bytes in its 8-byte OOB */
	memset(ring, 0, sizeof(ring));
	memcpy(ring + 32, ((const uint8_t[]){ 0, 0, 0, 0, 0x01, 0x02, 0, 0,
					      0xde, 0xad, 0xbe, 0xef, 1, 2, 3,
					      4 }), 16);
	CHECK(gdma_wqe_fetch(ring, 256, 1, GDMA_RQ, &w, &bu) == 0 && bu == 1 &&
	      w.oob[0] == 0xde, "RQ OOB bytes are not validated");

	/* a corrupt header fails the fetch */
	ring[32 + 5] = 0x04;
	CHECK(gdma_wqe_fetch(ring, 256, 1, GDMA_RQ, &w, &bu) == -EINVAL,
	      "corrupt header");

	/* a 24-byte OOB WQE whose SGL starts exactly at the ring start */
	memset(&want, 0, sizeof(want));
	want.hdr.num_sge = 2;
	want.hdr.oob_size = 24;
	memcpy(want.oob, tx_long_wire, 24);
	want.sge[0] = (struct gdma_sge){ 0xa, 1, 2 };
	want.sge[1] = (struct gdma_sge){ 0xb, 3, 4 };
	memset(ring, 0, sizeof(ring));
	CHECK(gdma_wqe_post(ring, 256, 7, GDMA_SQ, &want, &bu) == 0 && bu == 2,
	      "post long OOB WQE");
	CHECK(ring[0] == 0xa && ring[16] == 0xb && ring[231] == 0 &&
	      ring[229] == 0x06 && ring[232] == 0x49, "long OOB placement");
	CHECK(gdma_wqe_fetch(ring, 256, 7, GDMA_SQ, &w, &bu) == 0 &&
	      w.sge[1].size == 4 && !memcmp(w.oob, tx_long_wire, 24),
	      "fetch long OOB WQE");

	/* ring helpers refuse bad geometry */
	CHECK(gdma_ring_read(ring, 100, 0, built, 8) == -EINVAL, "ring 100");
	CHECK(gdma_ring_read(ring, 256, 256, built, 8) == -EINVAL,
	      "offset = size");
	CHECK(gdma_ring_read(ring, 256, 0, built, 257) == -EINVAL,
	      "len > size");
	CHECK(gdma_ring_write(ring, 16, 0, built, 8) == -EINVAL, "ring 16");
	CHECK(gdma_wqe_post(ring, 32, 0, GDMA_SQ, &want, &bu) == -EINVAL,
	      "WQE larger than the ring");
	want.hdr.oob_size = 16;
	CHECK(gdma_wqe_post(ring, 256, 0, GDMA_SQ, &want, &bu) == -EINVAL,
	      "post with a bad header");
}

/*
 * The datapath's fast views (templates OR-ed with bits, fixed offsets) must
 * say exactly what the validating encoders and decoders say.
 */
static void test_fast_views(void)
{
	struct gdma_wqe_header h = { .num_sge = 1, .oob_size = GDMA_OOB_SMALL };
	struct mana_tx_oob base = { .pkt_fmt = MANA_SHORT_PKT_FMT, .vcq_num = 0x123,
				    .vsq_frame = 0x2a, .short_vp_offset = 7 };
	struct mana_tx_oob full = base;
	struct mana_rx_comp_oob rx = { 0 }, rx2;
	struct mana_tx_comp_oob tx = { .cqe_type = CQE_TX_INVALID_OOB,
				       .tx_wqe_offset = 0x1234 };
	uint8_t a[GDMA_CQE_DATA_SIZE], b[8];
	uint64_t tmpl;
	unsigned int n;

	for (n = 1; n <= GDMA_MAX_TX_SGE; n++) {
		h.num_sge = n;
		CHECK(gdma_wqe_header_encode(&h, GDMA_SQ, b) == 0, "hdr %u", n);
		if (n == 1)
			tmpl = gdma_ld64(b) & ~(0xFFULL << GDMA_WQE_HDR_NUM_SGE_SHIFT);
		CHECK(gdma_ld64(b) == (tmpl | (uint64_t)n << GDMA_WQE_HDR_NUM_SGE_SHIFT),
		      "header template + num_sge %u", n);
	}
	CHECK(mana_tx_oob_encode(&base, b) == 0, "base oob");
	tmpl = gdma_ld64(b);
	full.is_outer_ipv4 = full.comp_iphdr_csum = full.comp_udp_csum = true;
	full.suppress_txcqe_gen = true;
	full.trans_off = 34;
	CHECK(mana_tx_oob_encode(&full, b) == 0, "full oob");
	CHECK(gdma_ld64(b) == (tmpl | MANA_TXOOB_IPV4 | MANA_TXOOB_IP_CSUM |
			       MANA_TXOOB_UDP_CSUM | MANA_TXOOB_SUPPRESS_CQE |
			       34ULL << MANA_TXOOB_TRANS_OFF_SHIFT), "oob bits");
	full = base;
	full.is_outer_ipv6 = full.comp_tcp_csum = true;
	CHECK(mana_tx_oob_encode(&full, b) == 0 &&
	      gdma_ld64(b) == (tmpl | MANA_TXOOB_IPV6 | MANA_TXOOB_TCP_CSUM), "v6 tcp");

	rx.cqe_type = CQE_RX_COALESCED_4;
	rx.rx_vlan_id = 0x123;
	rx.rx_vlantag_present = rx.rx_iphdr_csum_succeed = rx.rx_tcp_csum_succeed = true;
	rx.ppi[0].pkt_len = 60;
	rx.ppi[1].pkt_len = 1514;
	rx.ppi[1].pkt_hash = 0xdeadbeef;
	CHECK(mana_rx_comp_oob_encode(&rx, a) == 0, "rx encode");
	CHECK(mana_cqe_fast_type(a) == CQE_RX_COALESCED_4, "fast type");
	CHECK(mana_rx_fast_len(a, 0) == 60 && mana_rx_fast_len(a, 1) == 1514 &&
	      mana_rx_fast_len(a, 2) == 0, "fast lengths");
	n = gdma_ld32(a + MANA_RXCOMP_FLAGS_OFF);
	CHECK((n & MANA_RXFL_VLAN_ID_MASK) == 0x123 && (n & MANA_RXFL_VLAN_PRESENT) &&
	      (n & MANA_RXFL_IP_OK) && (n & MANA_RXFL_TCP_OK) && !(n & MANA_RXFL_UDP_OK),
	      "fast flags 0x%x", n);
	CHECK(gdma_ld32(a + MANA_RXCOMP_PPI_OFF + MANA_RXCOMP_PPI_STRIDE +
			MANA_RXCOMP_PPI_HASH_OFF) == 0xdeadbeef, "fast hash");
	rx.rx_wqe_offset = 0x40;
	CHECK(mana_rx_comp_oob_encode(&rx, a) == 0 &&
	      gdma_ld32(a + MANA_RXCOMP_WQE_OFFSET_OFF) == 0x40, "rx wqe offset");
	CHECK(mana_rx_comp_oob_decode(a, &rx2) == 0 && rx2.ppi[1].pkt_len == 1514,
	      "round trip");

	CHECK(mana_tx_comp_oob_encode(&tx, a) == 0, "tx comp");
	CHECK(mana_cqe_fast_type(a) == CQE_TX_INVALID_OOB &&
	      gdma_ld32(a + MANA_TXCOMP_WQE_DW_OFF) >> MANA_TXCOMP_WQE_SHIFT == 0x1234,
	      "fast tx wqe offset");
}

/*
 * The in-place forms: mana_rx_comp_encode_one() writes the bytes of
 * mana_rx_comp_oob_encode() for a one-packet CQE_RX_OKAY and refuses what
 * it refuses; gdma_wqe_decode_linear() decodes what gdma_wqe_fetch() does.
 */
/*
 * Field by field: a decoded struct's padding bytes are not part of what a
 * decoder promises (struct copies may carry stack bytes in them).
 */
static bool wqe_same(const struct gdma_wqe *a, const struct gdma_wqe *b)
{
	const struct gdma_wqe_header *x = &a->hdr, *y = &b->hdr;
	uint32_t i;

	if (x->num_sge != y->num_sge || x->oob_size != y->oob_size ||
	    x->oob_in_sgl != y->oob_in_sgl ||
	    x->last_vbytes != y->last_vbytes ||
	    x->client_data_unit != y->client_data_unit ||
	    x->num_padding_sgls != y->num_padding_sgls ||
	    x->consume_credit != y->consume_credit || x->fence != y->fence ||
	    x->check_sn != y->check_sn || x->sgl_direct != y->sgl_direct ||
	    memcmp(a->oob, b->oob, sizeof(a->oob)))
		return false;
	for (i = 0; i < GDMA_MAX_TX_SGE; i++)
		if (a->sge[i].addr != b->sge[i].addr ||
		    a->sge[i].mkey != b->sge[i].mkey ||
		    a->sge[i].size != b->sge[i].size)
			return false;
	return true;
}

static void test_in_place(void)
{
	static const uint16_t hashtypes[] = { 0, 1, 0x40, MANA_HASH_ALL };
	uint8_t a[GDMA_CQE_DATA_SIZE], b[GDMA_CQE_DATA_SIZE];
	uint32_t seed = 12345, i, size_a, size_b;
	struct gdma_wqe w = { 0 }, x, y;
	uint8_t ring[GDMA_MAX_SQE_SIZE];

	for (i = 0; i < 4096; i++) {
		struct mana_rx_comp_oob o = { .cqe_type = CQE_RX_OKAY };
		int ra, rb;

		seed = seed * 1103515245 + 12345;
		o.rx_vlan_id = seed & 0xFFF;
		o.rx_vlantag_present = seed >> 12 & 1;
		o.rx_hashtype = hashtypes[seed >> 13 & 3];
		o.rx_iphdr_csum_succeed = seed >> 15 & 1;
		o.rx_iphdr_csum_fail = seed >> 16 & 1;
		o.rx_tcp_csum_succeed = seed >> 17 & 1;
		o.rx_tcp_csum_fail = seed >> 18 & 1;
		o.rx_udp_csum_succeed = seed >> 19 & 1;
		o.rx_udp_csum_fail = seed >> 20 & 1;
		o.rx_outer_iphdr_csum_succeed = seed >> 21 & 1;
		o.rx_outer_iphdr_csum_fail = seed >> 22 & 1;
		o.ppi[0].pkt_len = (uint16_t)(i % 7 ? seed >> 16 : 0);
		o.ppi[0].pkt_hash = seed * 31;
		o.rx_wqe_offset = seed >> 3;
		memset(a, 0xAA, sizeof(a));
		memset(b, 0xAA, sizeof(b));
		ra = mana_rx_comp_oob_encode(&o, a);
		rb = mana_rx_comp_encode_one(b, mana_rx_comp_flags(&o),
					     o.ppi[0].pkt_len, o.ppi[0].pkt_hash,
					     o.rx_wqe_offset);
		CHECK(ra == rb, "encode_one agrees on validity (%u)", i);
		CHECK(ra || !memcmp(a, b, sizeof(a)), "encode_one bytes (%u)", i);
	}
	CHECK(mana_rx_comp_encode_one(b, 1U << 15, 64, 0, 0) == -EINVAL,
	      "bit 15 refused");
	CHECK(mana_rx_comp_encode_one(b, 1U << 31, 64, 0, 0) == -EINVAL,
	      "bit 31 refused");

	w.hdr.num_sge = 2;
	w.hdr.oob_size = GDMA_OOB_LARGE;
	memset(w.oob, 0x5A, sizeof(w.oob));
	w.sge[0] = (struct gdma_sge){ 0x1000, 7, 64 };
	w.sge[1] = (struct gdma_sge){ 0x2000, 8, 128 };
	memset(ring, 0, sizeof(ring));
	CHECK(gdma_wqe_post(ring, sizeof(ring), 0, GDMA_SQ, &w, &size_a) == 0,
	      "post");
	memset(&x, 0, sizeof(x));
	memset(&y, 0, sizeof(y));
	CHECK(gdma_wqe_fetch(ring, sizeof(ring), 0, GDMA_SQ, &x, &size_a) == 0,
	      "fetch");
	CHECK(gdma_wqe_decode_linear(ring, size_a * GDMA_WQE_BU_SIZE, GDMA_SQ,
				     &y, &size_b) == 0 && size_a == size_b,
	      "decode_linear");
	CHECK(wqe_same(&x, &y), "same decoded WQE");
	CHECK(gdma_wqe_decode_linear(ring, size_a * GDMA_WQE_BU_SIZE - 1,
				     GDMA_SQ, &y, &size_b) == -EINVAL,
	      "one byte short refused");
	CHECK(gdma_wqe_decode_linear(ring, 4, GDMA_SQ, &y, &size_b) == -EINVAL,
	      "no header refused");
}

/*
 * gdma_wqe_view_decode() accepts exactly what gdma_wqe_decode_linear()
 * accepts, also when its header cache holds a good header and the next
 * header differs in one bit; its SGEs are the decoded ones.
 * mana_tx_comp_encode_one() writes and refuses as mana_tx_comp_oob_encode().
 */
static void test_wqe_view(void)
{
	static const enum gdma_queue_type qts[] = { GDMA_SQ, GDMA_RQ };
	struct gdma_wqe_view v;
	uint8_t a[GDMA_CQE_DATA_SIZE], b[GDMA_CQE_DATA_SIZE];
	uint8_t ring[GDMA_MAX_SQE_SIZE];
	uint32_t seed = 777, i, q, k, size, len;
	struct gdma_wqe w = { 0 }, x;
	struct gdma_sge sge;

	for (i = 0; i < 4096; i++) {
		struct mana_tx_comp_oob o = { 0 };
		int ra, rb;

		seed = seed * 1103515245 + 12345;
		o.cqe_type = (uint8_t)(seed >> 8) % 64;
		o.tx_wqe_offset = i % 5 ? seed >> 5 & 0x7FFFFFF : seed;
		memset(a, 0xAA, sizeof(a));
		memset(b, 0xAA, sizeof(b));
		ra = mana_tx_comp_oob_encode(&o, a);
		rb = mana_tx_comp_encode_one(b, o.cqe_type, o.tx_wqe_offset);
		CHECK(ra == rb, "tx encode_one agrees on validity (%u)", i);
		CHECK(ra || !memcmp(a, b, sizeof(a)), "tx encode_one bytes (%u)",
		      i);
	}

	for (q = 0; q < 2; q++) {
		memset(&w, 0, sizeof(w));
		w.hdr.num_sge = 3;
		w.hdr.oob_size = GDMA_OOB_SMALL;
		for (k = 0; k < 3; k++)
			w.sge[k] = (struct gdma_sge){ 0x1000 * (k + 1), 5 + k,
						      64 * (k + 1) };
		memset(ring, 0, sizeof(ring));
		CHECK(gdma_wqe_post(ring, sizeof(ring), 0, qts[q], &w, &size) ==
			      0, "post for the view");
		len = size * GDMA_WQE_BU_SIZE;
		memset(&v, 0, sizeof(v));
		CHECK(gdma_wqe_view_decode(ring, len, qts[q], &v) == 0 &&
			      v.size == len, "view decodes (%u)", q);
		for (k = 0; k < 3; k++) {
			gdma_wqe_view_sge(ring, &v, k, &sge);
			CHECK(!memcmp(&sge, &w.sge[k], sizeof(sge)),
			      "view SGE %u (%u)", k, q);
		}
		CHECK(gdma_wqe_view_decode(ring, len - 1, qts[q], &v) ==
			      -EINVAL, "cached header, one byte short (%u)", q);
		CHECK(gdma_wqe_view_decode(ring, 4, qts[q], &v) == -EINVAL,
		      "no header (%u)", q);
		/* every single-bit change of a good cached header */
		for (k = 0; k < 64; k++) {
			int rl, rv;

			ring[k / 8] ^= (uint8_t)(1u << k % 8);
			memset(&x, 0, sizeof(x));
			rl = gdma_wqe_decode_linear(ring, sizeof(ring), qts[q],
						    &x, NULL);
			rv = gdma_wqe_view_decode(ring, sizeof(ring), qts[q],
						  &v);
			CHECK(rl == rv, "bit %u: view agrees (%u)", k, q);
			CHECK(rv || (v.size == gdma_wqe_size(x.hdr.oob_size,
							       x.hdr.num_sge) &&
				     v.hdr.num_sge == x.hdr.num_sge),
			      "bit %u: same header (%u)", k, q);
			ring[k / 8] ^= (uint8_t)(1u << k % 8);
			CHECK(gdma_wqe_view_decode(ring, len, qts[q], &v) == 0,
			      "bit %u: good again (%u)", k, q);
		}
	}
}

int main(void)
{
	test_doorbells();
	test_short_doorbells();
	test_tails();
	test_wqe_header();
	test_sge();
	test_wqe_sizes();
	test_tx_oob_vectors();
	test_tx_oob_bad();
	test_cqe();
	test_cqe_types();
	test_rx_oob_vectors();
	test_rx_oob_bad();
	test_tx_comp();
	test_eqe();
	test_owner_table();
	test_owner_simulation();
	test_ring_wrap();
	test_fast_views();
	test_in_place();
	test_wqe_view();
	return check_done();
}
