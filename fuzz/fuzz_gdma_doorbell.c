// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Doorbell values as the device model meets them: an offset in the
 * doorbell page and a 64- or 32-bit value.  An accepted value encodes back
 * to itself; an encodable doorbell decodes back to itself; the WQ and CQ
 * tail arithmetic stays in range.
 */
#include <stdint.h>
#include <string.h>

#include "providers/mana/gdma.h"
#include "fuzz_check.h"
#include "fuzz_emu.h"

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

static void long_value(enum gdma_db_kind kind, uint64_t v)
{
	struct gdma_doorbell db, back;
	uint64_t again;

	if (gdma_doorbell_decode(kind, v, &db))
		return;
	FUZZ_CHECK(db.kind == kind);
	FUZZ_CHECK(!gdma_doorbell_check(&db));
	FUZZ_CHECK(!gdma_doorbell_encode(&db, &again));
	FUZZ_CHECK(again == v);
	FUZZ_CHECK(!gdma_doorbell_decode(kind, again, &back));
	FUZZ_CHECK(db_eq(&db, &back));
}

static void short_value(enum gdma_db_kind kind, uint32_t v)
{
	struct gdma_short_doorbell db;
	uint32_t again;

	if (gdma_short_doorbell_decode(kind, v, &db))
		return;
	FUZZ_CHECK(db.kind == kind && db.id <= GDMA_SHORT_DB_ID_MAX);
	FUZZ_CHECK(!gdma_short_doorbell_encode(&db, &again));
	FUZZ_CHECK(again == v);
}

static void encode_side(struct fuzz_in *in, enum gdma_db_kind kind)
{
	struct gdma_doorbell db = { .kind = kind }, back;
	uint8_t flags = fuzz_u8(in);
	uint64_t v;

	db.id = fuzz_u32(in);
	db.tail = fuzz_u32(in);
	db.wqe_cnt = fuzz_u8(in);
	db.client_high = fuzz_u8(in);
	db.client_low = fuzz_u32(in);
	db.mod_usec = fuzz_u16(in);
	db.mod_comps = fuzz_u8(in);
	db.arm = flags & 1;
	db.mod_usec_valid = flags >> 1 & 1;
	db.mod_comps_valid = flags >> 2 & 1;
	if (gdma_doorbell_encode(&db, &v)) {
		FUZZ_CHECK(gdma_doorbell_check(&db));
		return;
	}
	FUZZ_CHECK(!gdma_doorbell_decode(kind, v, &back));
	FUZZ_CHECK(db_eq(&db, &back));
}

static void tail_arith(struct fuzz_in *in)
{
	uint32_t head_bu = fuzz_u32(in), dev = fuzz_u32(in);
	uint32_t tail = gdma_wq_db_tail(head_bu);
	struct gdma_doorbell db = { .kind = GDMA_DB_SQ, .id = 1, .tail = tail };
	uint64_t v;

	/* every producer position makes a valid SQ doorbell */
	FUZZ_CHECK(!gdma_doorbell_encode(&db, &v));
	FUZZ_CHECK(gdma_wq_db_pending(tail, dev) == (uint32_t)(tail - dev));
	FUZZ_CHECK(gdma_wq_db_pending(tail, tail) == 0);
}

/*
 * Input: page offset (u16, taken modulo the page), the 64-bit value; the
 * rest drives the encoder side and the tail arithmetic.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size }, rest;
	uint32_t offset = fuzz_u16(&in) % GDMA_DB_PAGE_SIZE;
	uint64_t v = fuzz_u64(&in);
	enum gdma_db_kind kind;
	bool is_short;
	int k;

	if (!gdma_doorbell_kind_at(offset, &kind, &is_short)) {
		if (is_short)
			short_value(kind, (uint32_t)v);
		else
			long_value(kind, v);
	}
	/* the same value at every kind, long and short */
	for (k = GDMA_DB_SQ; k <= GDMA_DB_EQ + 1; k++) {
		long_value((enum gdma_db_kind)k, v);
		short_value((enum gdma_db_kind)k, (uint32_t)v);
		rest = in;
		encode_side(&rest, (enum gdma_db_kind)k);
	}
	FUZZ_CHECK(gdma_doorbell_decode((enum gdma_db_kind)0, v, NULL) ==
		   -EINVAL);
	rest = in;
	tail_arith(&rest);
	return 0;
}
