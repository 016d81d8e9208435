/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * GDMA / MANA wire formats: doorbells, WQEs, SGEs, TX OOBs, CQEs, RX/TX
 * completion OOBs and EQEs.
 *
 * This is the one definition shared by the provider's datapath and the
 * emulator's device model.  Every format is little-endian on the wire and is
 * read and written byte by byte with explicit shifts and masks, never through
 * bitfields or packed structs, so the layout does not depend on the compiler
 * or the host byte order.
 *
 * Each encoder and decoder validates fail-closed: unknown enum values, set
 * reserved bits and out-of-range fields give -EINVAL, on both sides, so a
 * producer that gets a layout wrong cannot be "understood" by a consumer that
 * gets it wrong the same way.  Nothing is written to the output when a call
 * fails.
 *
 * Bit positions follow research/mana-kernel-and-gdma.md §3 and §8; see
 * tests/test_gdma_wire.c for byte vectors written from those tables.
 */
#ifndef MANA_GDMA_H
#define MANA_GDMA_H

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Doorbell page: every queue of a context rings the same mmapped page. */
#define GDMA_DB_PAGE_SIZE	4096
#define GDMA_DB_OFF_SQ		0x000
#define GDMA_DB_OFF_RQ		0x400
#define GDMA_DB_OFF_RQ_CLIENT	0x408
#define GDMA_DB_OFF_CQ		0x800
#define GDMA_DB_OFF_DIM		0x820
#define GDMA_DB_OFF_EQ		0xFF8
/* 32-bit "short" doorbells; DPDK uses them only in 32-bit builds */
#define GDMA_DB_OFF_SQ_SHORT	0x010
#define GDMA_DB_OFF_RQ_SHORT	0x410
#define GDMA_DB_OFF_CQ_SHORT	0x810
#define GDMA_DB_OFF_EQ_SHORT	0xFF0

/* Sizes in bytes */
#define GDMA_WQE_BU_SIZE	32
#define GDMA_WQE_HDR_SIZE	8
#define GDMA_SGE_SIZE		16
#define GDMA_OOB_SMALL		8
#define GDMA_OOB_LARGE		24
#define GDMA_OOB_XLARGE		32
#define GDMA_MAX_SQE_SIZE	512
#define GDMA_MAX_RQE_SIZE	256
#define GDMA_MAX_TX_SGE		30	/* (512 - 16 - 8) / 16 */
#define GDMA_MAX_RX_SGE		15	/* (256 - 16) / 16 */
#define GDMA_CQE_SIZE		64
#define GDMA_CQE_DATA_SIZE	60
#define GDMA_EQE_SIZE		16
#define MANA_PAGE_SIZE		4096
#define MANA_MIN_QSIZE		4096

/* The SGE posted for a zero-length request ("per spec", kernel and DPDK). */
#define GDMA_DUMMY_SGE_ADDR	1ULL

#define GDMA_OWNER_BITS		3
#define GDMA_OWNER_MASK		0x7U
#define GDMA_QUEUE_ID_MAX	0xFFFFFFU	/* 24-bit SQ/RQ/CQ id */
#define GDMA_EQ_ID_MAX		0xFFFFU		/* EQ doorbells carry 16 bits */
#define GDMA_SHORT_DB_ID_MAX	0xFFFU
#define GDMA_SHORT_DB_INCR_MAX	0xFFFFU
#define GDMA_CQ_DB_TAIL_MAX	0x7FFFFFFFU	/* 31-bit CQ/EQ tail */
#define GDMA_CQ_MAX_COUNT	(1U << 28)	/* count << 3 fits the tail */
#define GDMA_CQ_NO_EQ		0xFFFF

enum gdma_queue_type {
	GDMA_SQ = 1,
	GDMA_RQ = 2,
	GDMA_CQ = 3,
	GDMA_EQ = 4,
};

/* mana_cqe_header.client_type of every MANA Ethernet CQE */
#define MANA_CQE_COMPLETION	1

enum mana_cqe_type {
	CQE_INVALID = 0,
	CQE_RX_OKAY = 1,
	CQE_RX_COALESCED_4 = 2,
	CQE_RX_OBJECT_FENCE = 3,
	CQE_RX_TRUNCATED = 4,
	/* only with the v5 cqe8 coalescing knob, which mana_ib never sets */
	CQE_RX_COALESCED_8 = 7,
	CQE_TX_OKAY = 32,
	CQE_TX_SA_DROP = 33,
	CQE_TX_MTU_DROP = 34,
	CQE_TX_INVALID_OOB = 35,
	CQE_TX_INVALID_ETH_TYPE = 36,
	CQE_TX_HDR_PROCESSING_ERROR = 37,
	CQE_TX_VF_DISABLED = 38,
	CQE_TX_VPORT_IDX_OUT_OF_RANGE = 39,
	CQE_TX_VPORT_DISABLED = 40,
	CQE_TX_VLAN_TAGGING_VIOLATION = 41,
	/*
	 * openvmm's emulator invents 42 (TX_GDMA_ERR); no Linux or DPDK
	 * consumer knows it, so it is rejected like any unknown type.
	 */
};

enum gdma_eqe_type {
	GDMA_EQE_COMPLETION = 3,
	GDMA_EQE_TEST_EVENT = 64,
	GDMA_EQE_HWC_INIT_EQ_ID_DB = 129,
	GDMA_EQE_HWC_INIT_DATA = 130,
	GDMA_EQE_HWC_INIT_DONE = 131,
	GDMA_EQE_HWC_FPGA_RECONFIG = 132,
	GDMA_EQE_HWC_SOC_RECONFIG_DATA = 133,
	GDMA_EQE_HWC_SOC_SERVICE = 134,
	GDMA_EQE_HWC_RESET_REQUEST = 135,
	GDMA_EQE_RNIC_QP_FATAL = 176,
};

/* NDIS hash types, the 9-bit rx_hashtype of an RX completion */
#define MANA_HASH_IPV4		(1U << 0)
#define MANA_HASH_TCP_IPV4	(1U << 1)
#define MANA_HASH_UDP_IPV4	(1U << 2)
#define MANA_HASH_IPV6		(1U << 3)
#define MANA_HASH_TCP_IPV6	(1U << 4)
#define MANA_HASH_UDP_IPV6	(1U << 5)
#define MANA_HASH_IPV6_EX	(1U << 6)
#define MANA_HASH_TCP_IPV6_EX	(1U << 7)
#define MANA_HASH_UDP_IPV6_EX	(1U << 8)
#define MANA_HASH_L3		(MANA_HASH_IPV4 | MANA_HASH_IPV6 | \
				 MANA_HASH_IPV6_EX)		/* 0x049 */
#define MANA_HASH_L4		(MANA_HASH_TCP_IPV4 | MANA_HASH_UDP_IPV4 | \
				 MANA_HASH_TCP_IPV6 | MANA_HASH_UDP_IPV6 | \
				 MANA_HASH_TCP_IPV6_EX | \
				 MANA_HASH_UDP_IPV6_EX)		/* 0x1B6 */
#define MANA_HASH_ALL		0x1FFU

/* ------------------------------------------------------------------------ */
/*
 * Little-endian access, alignment-safe: on a little-endian host one
 * unaligned load or store (memcpy), else byte by byte.
 */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define GDMA_LE_HOST 1
#else
#define GDMA_LE_HOST 0
#endif

static inline uint16_t gdma_get_le16(const void *p)
{
	const uint8_t *b = p;
	uint16_t v;

	if (GDMA_LE_HOST) {
		memcpy(&v, p, sizeof(v));
		return v;
	}
	return (uint16_t)(b[0] | (b[1] << 8));
}

static inline uint32_t gdma_get_le32(const void *p)
{
	const uint8_t *b = p;
	uint32_t v;

	if (GDMA_LE_HOST) {
		memcpy(&v, p, sizeof(v));
		return v;
	}
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

static inline uint64_t gdma_get_le64(const void *p)
{
	const uint8_t *b = p;
	uint64_t v;

	if (GDMA_LE_HOST) {
		memcpy(&v, p, sizeof(v));
		return v;
	}
	return (uint64_t)gdma_get_le32(b) |
	       (uint64_t)gdma_get_le32(b + 4) << 32;
}

static inline void gdma_put_le16(void *p, uint16_t v)
{
	uint8_t *b = p;

	if (GDMA_LE_HOST) {
		memcpy(p, &v, sizeof(v));
		return;
	}
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
}

static inline void gdma_put_le32(void *p, uint32_t v)
{
	uint8_t *b = p;

	if (GDMA_LE_HOST) {
		memcpy(p, &v, sizeof(v));
		return;
	}
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
	b[3] = (uint8_t)(v >> 24);
}

static inline void gdma_put_le64(void *p, uint64_t v)
{
	uint8_t *b = p;

	if (GDMA_LE_HOST) {
		memcpy(p, &v, sizeof(v));
		return;
	}
	gdma_put_le32(b, (uint32_t)v);
	gdma_put_le32(b + 4, (uint32_t)(v >> 32));
}

/* Field of @width bits at @shift; width < 64. */
static inline uint64_t gdma_bits(uint64_t v, unsigned int shift,
				 unsigned int width)
{
	return (v >> shift) & ((1ULL << width) - 1);
}

static inline bool gdma_is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/* ------------------------------------------------------------------------ */
/* Doorbells */

enum gdma_db_kind {
	GDMA_DB_SQ = 1,
	GDMA_DB_RQ,
	GDMA_DB_RQ_CLIENT,	/* rdma-core RC: arm a normal CQE at a PSN */
	GDMA_DB_CQ,
	GDMA_DB_DIM,		/* interrupt moderation (newest kernels) */
	GDMA_DB_EQ,
};

/*
 * A decoded 64-bit doorbell.  Which fields mean something depends on @kind:
 *   SQ, RQ:     id (24), tail = producer offset in bytes (head_bu * 32,
 *               free-running u32); RQ also wqe_cnt.
 *   CQ, EQ:     id (CQ 24 bits, EQ 16), tail = head % (count << 3) (31 bits),
 *               arm.
 *   RQ_CLIENT:  id (24), client_high (rdma-core always 1),
 *               client_low = PSN (24 bits).
 *   DIM:        id (24), mod_usec (10) + valid, mod_comps (8) + valid.
 * Fields that do not belong to @kind must be zero when encoding.
 */
struct gdma_doorbell {
	enum gdma_db_kind kind;
	uint32_t id;
	uint32_t tail;
	uint8_t wqe_cnt;
	bool arm;
	uint8_t client_high;
	uint32_t client_low;
	uint16_t mod_usec;
	bool mod_usec_valid;
	uint8_t mod_comps;
	bool mod_comps_valid;
};

/* Doorbell kind from an offset in the doorbell page; -EINVAL if none. */
static inline int gdma_doorbell_kind_at(uint32_t offset,
					enum gdma_db_kind *kind,
					bool *is_short)
{
	static const struct {
		uint16_t off;
		uint8_t kind;
		bool is_short;
	} map[] = {
		{ GDMA_DB_OFF_SQ, GDMA_DB_SQ, false },
		{ GDMA_DB_OFF_RQ, GDMA_DB_RQ, false },
		{ GDMA_DB_OFF_RQ_CLIENT, GDMA_DB_RQ_CLIENT, false },
		{ GDMA_DB_OFF_CQ, GDMA_DB_CQ, false },
		{ GDMA_DB_OFF_DIM, GDMA_DB_DIM, false },
		{ GDMA_DB_OFF_EQ, GDMA_DB_EQ, false },
		{ GDMA_DB_OFF_SQ_SHORT, GDMA_DB_SQ, true },
		{ GDMA_DB_OFF_RQ_SHORT, GDMA_DB_RQ, true },
		{ GDMA_DB_OFF_CQ_SHORT, GDMA_DB_CQ, true },
		{ GDMA_DB_OFF_EQ_SHORT, GDMA_DB_EQ, true },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (map[i].off != offset)
			continue;
		*kind = (enum gdma_db_kind)map[i].kind;
		*is_short = map[i].is_short;
		return 0;
	}
	return -EINVAL;
}

/* The fields a kind does not use must be clear. */
static inline bool gdma_db_extra_clear(const struct gdma_doorbell *db,
				       bool tail, bool wqe_cnt, bool arm,
				       bool client, bool dim)
{
	if (!tail && db->tail)
		return false;
	if (!wqe_cnt && db->wqe_cnt)
		return false;
	if (!arm && db->arm)
		return false;
	if (!client && (db->client_high || db->client_low))
		return false;
	if (!dim && (db->mod_usec || db->mod_usec_valid || db->mod_comps ||
		     db->mod_comps_valid))
		return false;
	return true;
}

static inline int gdma_doorbell_check(const struct gdma_doorbell *db)
{
	uint32_t id_max = db->kind == GDMA_DB_EQ ? GDMA_EQ_ID_MAX :
						   GDMA_QUEUE_ID_MAX;

	if (db->id > id_max)
		return -EINVAL;

	switch (db->kind) {
	case GDMA_DB_SQ:
		/* tail = head_bu * 32, so the low 5 bits are always 0 */
		if (db->tail % GDMA_WQE_BU_SIZE ||
		    !gdma_db_extra_clear(db, true, false, false, false, false))
			return -EINVAL;
		return 0;
	case GDMA_DB_RQ:
		if (db->tail % GDMA_WQE_BU_SIZE ||
		    !gdma_db_extra_clear(db, true, true, false, false, false))
			return -EINVAL;
		return 0;
	case GDMA_DB_CQ:
	case GDMA_DB_EQ:
		if (db->tail > GDMA_CQ_DB_TAIL_MAX ||
		    !gdma_db_extra_clear(db, true, false, true, false, false))
			return -EINVAL;
		return 0;
	case GDMA_DB_RQ_CLIENT:
		/*
		 * Only rdma-core writes this, always with high = 1 and a
		 * 24-bit PSN in low; accept nothing else until a source says
		 * what other values mean.
		 */
		if (db->client_high != 1 || db->client_low > 0xFFFFFF ||
		    !gdma_db_extra_clear(db, false, false, false, true, false))
			return -EINVAL;
		return 0;
	case GDMA_DB_DIM:
		if (db->mod_usec > 0x3FF ||
		    !gdma_db_extra_clear(db, false, false, false, false, true))
			return -EINVAL;
		return 0;
	}
	return -EINVAL;
}

static inline int gdma_doorbell_encode(const struct gdma_doorbell *db,
				       uint64_t *out)
{
	uint64_t v = db->id;

	if (gdma_doorbell_check(db))
		return -EINVAL;

	switch (db->kind) {
	case GDMA_DB_SQ:
		v |= (uint64_t)db->tail << 32;
		break;
	case GDMA_DB_RQ:
		v |= (uint64_t)db->wqe_cnt << 24 | (uint64_t)db->tail << 32;
		break;
	case GDMA_DB_CQ:
	case GDMA_DB_EQ:
		v |= (uint64_t)db->tail << 32 | (uint64_t)db->arm << 63;
		break;
	case GDMA_DB_RQ_CLIENT:
		v |= (uint64_t)db->client_high << 24 |
		     (uint64_t)db->client_low << 32;
		break;
	case GDMA_DB_DIM:
		v |= (uint64_t)db->mod_usec << 32 |
		     (uint64_t)db->mod_usec_valid << 47 |
		     (uint64_t)db->mod_comps << 48 |
		     (uint64_t)db->mod_comps_valid << 63;
		break;
	}
	*out = v;
	return 0;
}

/* Bits each kind leaves reserved; a set one fails decoding. */
static inline uint64_t gdma_db_reserved(enum gdma_db_kind kind)
{
	switch (kind) {
	case GDMA_DB_SQ:
	case GDMA_DB_CQ:
		return 0xFF000000ULL;
	case GDMA_DB_EQ:
		return 0xFFFF0000ULL;
	case GDMA_DB_DIM:
		return 0xFF000000ULL | 0x1FULL << 42 | 0x7FULL << 56;
	case GDMA_DB_RQ:
	case GDMA_DB_RQ_CLIENT:
		return 0;
	}
	return ~0ULL;
}

/*
 * Decode the value written at the doorbell of @kind.  The RQ's wqe_cnt is
 * returned as written: the kernel and DPDK >= 23.07 write 0, rdma-core RC
 * the batch size, and DPDK 22.11 a truncated descriptor count.
 */
static inline int gdma_doorbell_decode(enum gdma_db_kind kind, uint64_t v,
				       struct gdma_doorbell *out)
{
	struct gdma_doorbell db = { .kind = kind };

	if (v & gdma_db_reserved(kind))
		return -EINVAL;

	db.id = (uint32_t)gdma_bits(v, 0, kind == GDMA_DB_EQ ? 16 : 24);
	switch (kind) {
	case GDMA_DB_RQ:
		db.wqe_cnt = (uint8_t)gdma_bits(v, 24, 8);
		/* fall through */
	case GDMA_DB_SQ:
		db.tail = (uint32_t)(v >> 32);
		break;
	case GDMA_DB_CQ:
	case GDMA_DB_EQ:
		db.tail = (uint32_t)gdma_bits(v, 32, 31);
		db.arm = v >> 63;
		break;
	case GDMA_DB_RQ_CLIENT:
		db.client_high = (uint8_t)gdma_bits(v, 24, 8);
		db.client_low = (uint32_t)(v >> 32);
		break;
	case GDMA_DB_DIM:
		db.mod_usec = (uint16_t)gdma_bits(v, 32, 10);
		db.mod_usec_valid = gdma_bits(v, 47, 1);
		db.mod_comps = (uint8_t)gdma_bits(v, 48, 8);
		db.mod_comps_valid = v >> 63;
		break;
	default:
		return -EINVAL;
	}
	if (gdma_doorbell_check(&db))
		return -EINVAL;
	*out = db;
	return 0;
}

/*
 * 32-bit doorbell: incr is the tail increment since the last ring (SQ/RQ:
 * bytes, a multiple of 32; CQ/EQ: entries), id 12 bits, arm for CQ/EQ only.
 * Bits 28-30 are reserved; bit 31 is reserved on SQ/RQ.
 */
struct gdma_short_doorbell {
	enum gdma_db_kind kind;
	uint16_t id;
	uint16_t incr;
	bool arm;
};

static inline int
gdma_short_doorbell_check(const struct gdma_short_doorbell *db)
{
	if (db->id > GDMA_SHORT_DB_ID_MAX)
		return -EINVAL;
	switch (db->kind) {
	case GDMA_DB_SQ:
	case GDMA_DB_RQ:
		if (db->arm || db->incr % GDMA_WQE_BU_SIZE)
			return -EINVAL;
		return 0;
	case GDMA_DB_CQ:
	case GDMA_DB_EQ:
		return 0;
	default:
		return -EINVAL;
	}
}

static inline int
gdma_short_doorbell_encode(const struct gdma_short_doorbell *db, uint32_t *out)
{
	if (gdma_short_doorbell_check(db))
		return -EINVAL;
	*out = (uint32_t)db->incr | (uint32_t)db->id << 16 |
	       (uint32_t)db->arm << 31;
	return 0;
}

static inline int gdma_short_doorbell_decode(enum gdma_db_kind kind,
					     uint32_t v,
					     struct gdma_short_doorbell *out)
{
	struct gdma_short_doorbell db = {
		.kind = kind,
		.incr = (uint16_t)v,
		.id = (uint16_t)gdma_bits(v, 16, 12),
		.arm = v >> 31,
	};

	if (v & 0x70000000U || gdma_short_doorbell_check(&db))
		return -EINVAL;
	*out = db;
	return 0;
}

/* SQ/RQ doorbell tail: byte offset of the producer, wrapping at 2^32. */
static inline uint32_t gdma_wq_db_tail(uint32_t head_bu)
{
	return head_bu * GDMA_WQE_BU_SIZE;
}

/*
 * Bytes a WQ doorbell adds beyond the device's consumer offset, modulo 2^32
 * (what an emulator compares with the queue size).
 */
static inline uint32_t gdma_wq_db_pending(uint32_t db_tail, uint32_t dev_head)
{
	return db_tail - dev_head;
}

/*
 * CQ/EQ doorbell tail: the consumer index modulo 8 wraps.  @count is the
 * number of entries, 1..GDMA_CQ_MAX_COUNT (so count << 3 fits the 31-bit
 * field); other counts give 0.
 */
static inline uint32_t gdma_cq_db_tail(uint32_t head, uint32_t count)
{
	if (!count || count > GDMA_CQ_MAX_COUNT)
		return 0;
	return head % (count << GDMA_OWNER_BITS);
}

/*
 * Entries the device produced beyond a CQ/EQ doorbell tail, modulo 8 wraps:
 * 0 = caught up (arm waits for the next entry), 1..count = fire now, more =
 * the consumer is too far behind (openvmm does not notify).  @prod is the
 * device's producer index, which starts at count.
 */
static inline uint32_t gdma_cq_db_unconsumed(uint32_t prod, uint32_t db_tail,
					     uint32_t count)
{
	uint32_t span = count << GDMA_OWNER_BITS;

	if (!count || count > GDMA_CQ_MAX_COUNT)
		return 0;
	return (prod % span + span - db_tail % span) % span;
}

/* ------------------------------------------------------------------------ */
/* Owner bits (CQ and EQ) */

enum gdma_cqe_state {
	GDMA_CQE_EMPTY,
	GDMA_CQE_VALID,
	GDMA_CQE_OVERFLOW,
};

/*
 * Owner value of the entry at index @head of a queue of @count entries.  Both
 * sides start at head = tail = count, so the first lap carries owner 1 and
 * zeroed memory reads as the previous lap (0).  The device writes entry
 * @tail with gdma_owner_expected(tail, count).  With a count that is not a
 * power of two (DPDK allows multiples of 64) the lap number glitches when
 * the u32 index wraps; that is inherent to the hardware scheme.
 */
static inline uint8_t gdma_owner_expected(uint32_t head, uint32_t count)
{
	if (!count)
		return 0;
	return (uint8_t)((head / count) & GDMA_OWNER_MASK);
}

static inline uint32_t gdma_queue_slot(uint32_t head, uint32_t count)
{
	return count ? head % count : 0;
}

/*
 * Classify the owner bits read at slot head % count: the previous lap's value
 * means empty, the current lap's means a new entry, anything else means the
 * device lapped the consumer.  Read the owner, check, then a read barrier
 * before the rest of the entry (the device writes the owner byte last).
 */
static inline enum gdma_cqe_state gdma_cqe_state(uint8_t owner, uint32_t head,
						 uint32_t count)
{
	uint32_t lap, cur, old;

	if (!count)
		return GDMA_CQE_OVERFLOW;	/* no queue: never trust it */
	lap = head / count;
	cur = lap & GDMA_OWNER_MASK;
	old = (lap - 1) & GDMA_OWNER_MASK;
	owner &= GDMA_OWNER_MASK;
	if (owner == old)
		return GDMA_CQE_EMPTY;
	if (owner != cur)
		return GDMA_CQE_OVERFLOW;
	return GDMA_CQE_VALID;
}

/* Owner bits straight from a raw CQE (byte 63) or EQE (byte 15). */
static inline uint8_t gdma_cqe_owner(const void *cqe)
{
	return ((const uint8_t *)cqe)[GDMA_CQE_SIZE - 1] >> 5;
}

static inline uint8_t gdma_eqe_owner(const void *eqe)
{
	return ((const uint8_t *)eqe)[GDMA_EQE_SIZE - 1] >> 5;
}

/* ------------------------------------------------------------------------ */
/* WQE geometry and ring access */

/* The SGL starts 16-byte aligned after header + OOB: 16, 32 or 48. */
static inline uint32_t gdma_wqe_sgl_offset(uint32_t oob_size)
{
	return (GDMA_WQE_HDR_SIZE + oob_size + 15) & ~15U;
}

/* Bytes a WQE occupies in the ring, a multiple of the 32-byte BU. */
static inline uint32_t gdma_wqe_size(uint32_t oob_size, uint32_t num_sge)
{
	uint32_t len = gdma_wqe_sgl_offset(oob_size) + num_sge * GDMA_SGE_SIZE;

	return (len + GDMA_WQE_BU_SIZE - 1) & ~(uint32_t)(GDMA_WQE_BU_SIZE - 1);
}

static inline uint32_t gdma_wqe_size_bu(uint32_t oob_size, uint32_t num_sge)
{
	return gdma_wqe_size(oob_size, num_sge) / GDMA_WQE_BU_SIZE;
}

/* Byte offset of WQE @head_bu in a ring of @ring_size bytes (a power of 2). */
static inline uint32_t gdma_wqe_ring_offset(uint32_t head_bu,
					    uint32_t ring_size)
{
	return (head_bu * GDMA_WQE_BU_SIZE) & (ring_size - 1);
}

static inline int gdma_ring_check(uint32_t ring_size, uint32_t offset,
				  uint32_t len)
{
	if (!gdma_is_pow2(ring_size) || ring_size < GDMA_WQE_BU_SIZE ||
	    offset >= ring_size || len > ring_size)
		return -EINVAL;
	return 0;
}

/* Copy @len bytes out of a ring starting at @offset, wrapping at the end. */
static inline int gdma_ring_read(const void *ring, uint32_t ring_size,
				 uint32_t offset, void *dst, uint32_t len)
{
	uint32_t first;

	if (gdma_ring_check(ring_size, offset, len))
		return -EINVAL;
	first = ring_size - offset < len ? ring_size - offset : len;
	memcpy(dst, (const uint8_t *)ring + offset, first);
	memcpy((uint8_t *)dst + first, ring, len - first);
	return 0;
}

/* Copy @len bytes into a ring starting at @offset, wrapping at the end. */
static inline int gdma_ring_write(void *ring, uint32_t ring_size,
				  uint32_t offset, const void *src,
				  uint32_t len)
{
	uint32_t first;

	if (gdma_ring_check(ring_size, offset, len))
		return -EINVAL;
	first = ring_size - offset < len ? ring_size - offset : len;
	memcpy((uint8_t *)ring + offset, src, first);
	memcpy(ring, (const uint8_t *)src + first, len - first);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* WQE header (8 bytes) */

/*
 * Decoded DMA OOB header.  The last five fields are bits the kernel calls
 * reserved and rdma-core/DPDK name; they are carried so an RC producer can be
 * represented, and are zero for raw Ethernet WQEs.
 */
struct gdma_wqe_header {
	uint8_t num_sge;		/* SGL entries, padding included */
	uint8_t oob_size;		/* inline OOB bytes: 8, 24 or 32 */
	bool oob_in_sgl;		/* LSO: client OOB in SGE0 */
	uint8_t last_vbytes;		/* sgl[0].size with oob_in_sgl */
	uint16_t client_data_unit;	/* 14 bits, SQ only (LSO MSS, MTU) */
	uint8_t num_padding_sgls;	/* rdma-core SQ, 5 bits */
	bool consume_credit;
	bool fence;
	bool check_sn;
	bool sgl_direct;		/* not understood: always rejected */
};

/*
 * Inline OOB size code, bits 8-10 of dword 1: size / 4 for the 8- and
 * 24-byte OOBs (2, 6), but 7 for the 32-byte "extra large" one (rdma-core
 * adds 1 to the 24-byte code; openvmm's parser agrees).
 */
static inline int gdma_oob_code(uint32_t oob_size)
{
	switch (oob_size) {
	case GDMA_OOB_SMALL:
		return 2;
	case GDMA_OOB_LARGE:
		return 6;
	case GDMA_OOB_XLARGE:
		return 7;
	}
	return -EINVAL;
}

/* OOB bytes for a size code; 0 for a code with no defined size. */
static inline uint32_t gdma_oob_size_of_code(uint32_t code)
{
	switch (code) {
	case 2:
		return GDMA_OOB_SMALL;
	case 6:
		return GDMA_OOB_LARGE;
	case 7:
		return GDMA_OOB_XLARGE;
	}
	return 0;
}

static inline int gdma_wqe_header_check(const struct gdma_wqe_header *h,
					enum gdma_queue_type qt)
{
	bool sq = qt == GDMA_SQ;
	uint32_t max_sge = sq ? GDMA_MAX_TX_SGE : GDMA_MAX_RX_SGE;
	uint32_t max_size = sq ? GDMA_MAX_SQE_SIZE : GDMA_MAX_RQE_SIZE;

	if (!sq && qt != GDMA_RQ)
		return -EINVAL;
	if (gdma_oob_code(h->oob_size) < 0 ||
	    (!sq && h->oob_size != GDMA_OOB_SMALL))
		return -EINVAL;
	/* the kernel refuses 0 SGEs; zero-length sends use a dummy SGE */
	if (!h->num_sge || h->num_sge > max_sge ||
	    gdma_wqe_size(h->oob_size, h->num_sge) > max_size)
		return -EINVAL;
	if (h->client_data_unit > 0x3FFF || h->sgl_direct)
		return -EINVAL;
	if (h->num_padding_sgls > 0x1F || h->num_padding_sgls >= h->num_sge)
		return -EINVAL;
	/* last_vbytes is only defined together with the OOB in SGE0 */
	if (h->last_vbytes && !h->oob_in_sgl)
		return -EINVAL;
	/* rdma-core's RX layout reserves all but num_sge, oob size, check_sn */
	if (!sq && (h->oob_in_sgl || h->last_vbytes || h->client_data_unit ||
		    h->num_padding_sgls || h->consume_credit || h->fence))
		return -EINVAL;
	return 0;
}

static inline int gdma_wqe_header_encode(const struct gdma_wqe_header *h,
					 enum gdma_queue_type qt, void *wire)
{
	uint32_t dw0, dw1;

	if (gdma_wqe_header_check(h, qt))
		return -EINVAL;
	dw0 = (uint32_t)h->num_padding_sgls | (uint32_t)h->last_vbytes << 24;
	dw1 = (uint32_t)h->num_sge | (uint32_t)gdma_oob_code(h->oob_size) << 8 |
	      (uint32_t)h->oob_in_sgl << 11 |
	      (uint32_t)h->consume_credit << 12 | (uint32_t)h->fence << 13 |
	      (uint32_t)h->client_data_unit << 16 |
	      (uint32_t)h->check_sn << 30 | (uint32_t)h->sgl_direct << 31;
	gdma_put_le32(wire, dw0);
	gdma_put_le32((uint8_t *)wire + 4, dw1);
	return 0;
}

static inline int gdma_wqe_header_decode(const void *wire,
					 enum gdma_queue_type qt,
					 struct gdma_wqe_header *out)
{
	uint32_t dw0 = gdma_get_le32(wire);
	uint32_t dw1 = gdma_get_le32((const uint8_t *)wire + 4);
	struct gdma_wqe_header h = {
		.num_padding_sgls = (uint8_t)gdma_bits(dw0, 0, 5),
		.last_vbytes = (uint8_t)(dw0 >> 24),
		.num_sge = (uint8_t)dw1,
		.oob_size = (uint8_t)gdma_oob_size_of_code(
				(uint32_t)gdma_bits(dw1, 8, 3)),
		.oob_in_sgl = gdma_bits(dw1, 11, 1),
		.consume_credit = gdma_bits(dw1, 12, 1),
		.fence = gdma_bits(dw1, 13, 1),
		.client_data_unit = (uint16_t)gdma_bits(dw1, 16, 14),
		.check_sn = gdma_bits(dw1, 30, 1),
		.sgl_direct = dw1 >> 31,
	};

	/* dword 0 bits 5-23 and dword 1 bits 14-15 are reserved */
	if (dw0 & 0x00FFFFE0U || dw1 & 0x0000C000U)
		return -EINVAL;
	if (gdma_wqe_header_check(&h, qt))
		return -EINVAL;
	*out = h;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* SGE (16 bytes); every value is representable, so these cannot fail. */

struct gdma_sge {
	uint64_t addr;
	uint32_t mkey;
	uint32_t size;
};

static inline int gdma_sge_encode(const struct gdma_sge *sge, void *wire)
{
	uint8_t *b = wire;

	gdma_put_le64(b, sge->addr);
	gdma_put_le32(b + 8, sge->mkey);
	gdma_put_le32(b + 12, sge->size);
	return 0;
}

static inline int gdma_sge_decode(const void *wire, struct gdma_sge *out)
{
	const uint8_t *b = wire;

	out->addr = gdma_get_le64(b);
	out->mkey = gdma_get_le32(b + 8);
	out->size = gdma_get_le32(b + 12);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Whole WQEs in a ring */

/*
 * A WQE with its inline OOB kept as bytes: the SQ OOB is decoded separately
 * with mana_tx_oob_decode(); the RQ OOB carries no information (the kernel
 * zeroes it, DPDK leaves stale bytes there), so it is never validated.
 */
struct gdma_wqe {
	struct gdma_wqe_header hdr;
	uint8_t oob[GDMA_OOB_XLARGE];
	struct gdma_sge sge[GDMA_MAX_TX_SGE];
};

/*
 * Write @w at BU index @head_bu of a ring.  Header and OOB sit in the first
 * BUs; the SGL may wrap to the ring start.  Padding up to the BU boundary is
 * zeroed.  On success *size_bu (if not NULL) is what the producer adds to
 * its head.
 */
static inline int gdma_wqe_post(void *ring, uint32_t ring_size,
				uint32_t head_bu, enum gdma_queue_type qt,
				const struct gdma_wqe *w, uint32_t *size_bu)
{
	uint8_t buf[GDMA_MAX_SQE_SIZE] = { 0 };
	uint32_t size, sgl, off, i;

	if (gdma_wqe_header_encode(&w->hdr, qt, buf))
		return -EINVAL;
	size = gdma_wqe_size(w->hdr.oob_size, w->hdr.num_sge);
	if (size > ring_size)
		return -EINVAL;
	memcpy(buf + GDMA_WQE_HDR_SIZE, w->oob, w->hdr.oob_size);
	sgl = gdma_wqe_sgl_offset(w->hdr.oob_size);
	for (i = 0; i < w->hdr.num_sge; i++)
		gdma_sge_encode(&w->sge[i], buf + sgl + i * GDMA_SGE_SIZE);
	off = gdma_wqe_ring_offset(head_bu, ring_size);
	if (gdma_ring_write(ring, ring_size, off, buf, size))
		return -EINVAL;
	if (size_bu)
		*size_bu = size / GDMA_WQE_BU_SIZE;
	return 0;
}

/*
 * Read and validate the WQE at BU index @head_bu, honouring the wrap.  The
 * caller still checks *size_bu against the bytes the doorbell made
 * available.
 */
static inline int gdma_wqe_fetch(const void *ring, uint32_t ring_size,
				 uint32_t head_bu, enum gdma_queue_type qt,
				 struct gdma_wqe *out, uint32_t *size_bu)
{
	uint8_t buf[GDMA_MAX_SQE_SIZE];
	uint32_t off = gdma_wqe_ring_offset(head_bu, ring_size);
	struct gdma_wqe w = { 0 };
	uint32_t size, sgl, i;

	if (gdma_ring_read(ring, ring_size, off, buf, GDMA_WQE_HDR_SIZE) ||
	    gdma_wqe_header_decode(buf, qt, &w.hdr))
		return -EINVAL;
	size = gdma_wqe_size(w.hdr.oob_size, w.hdr.num_sge);
	if (gdma_ring_read(ring, ring_size, off, buf, size))
		return -EINVAL;
	memcpy(w.oob, buf + GDMA_WQE_HDR_SIZE, w.hdr.oob_size);
	sgl = gdma_wqe_sgl_offset(w.hdr.oob_size);
	for (i = 0; i < w.hdr.num_sge; i++)
		gdma_sge_decode(buf + sgl + i * GDMA_SGE_SIZE, &w.sge[i]);
	*out = w;
	if (size_bu)
		*size_bu = size / GDMA_WQE_BU_SIZE;
	return 0;
}

/*
 * gdma_wqe_fetch() for a WQE already linear in @buf (@len bytes from its
 * start, wrap undone by the caller): the same checks, decoded in place
 * into @out -- only the header, the OOB bytes the header names and the
 * SGEs it counts are written (the rest of @out is left as it was), no
 * zero-filled copy of the ring.  -EINVAL if the WQE is bad or runs past
 * @len.
 */
/*
 * The part after the header: @out->hdr holds a header that passed
 * gdma_wqe_header_decode() for this queue type (callers that see the same
 * header bytes again may reuse its decoded form).
 */
static inline int gdma_wqe_decode_body(const uint8_t *buf, uint32_t len,
				       struct gdma_wqe *out, uint32_t *size_bu)
{
	uint32_t size, sgl, i;

	size = gdma_wqe_size(out->hdr.oob_size, out->hdr.num_sge);
	if (size > len)
		return -EINVAL;
	memcpy(out->oob, buf + GDMA_WQE_HDR_SIZE, out->hdr.oob_size);
	sgl = gdma_wqe_sgl_offset(out->hdr.oob_size);
	for (i = 0; i < out->hdr.num_sge; i++)
		gdma_sge_decode(buf + sgl + i * GDMA_SGE_SIZE, &out->sge[i]);
	if (size_bu)
		*size_bu = size / GDMA_WQE_BU_SIZE;
	return 0;
}

/*
 * In-place view of a linear WQE for a consumer that walks a ring at speed
 * (the emulated device): the header is decoded (with every check of
 * gdma_wqe_header_decode()) only when its 8 raw bytes differ from the
 * last good header's, and the OOB and SGL stay where they are, read with
 * gdma_wqe_view_sge().  @v keeps the last good header between calls; zero
 * it before the first.  The WQE's size (*size, in bytes) is checked
 * against @len like gdma_wqe_decode_linear() does.  0 or -EINVAL.
 */
struct gdma_wqe_view {
	uint64_t hdr_raw;		/* the header bytes @hdr decodes */
	bool hdr_ok;
	struct gdma_wqe_header hdr;
	uint32_t size;			/* bytes, a multiple of the BU */
	uint32_t sgl_off;		/* SGL offset from the WQE start */
};

static inline int gdma_wqe_view_decode(const uint8_t *buf, uint32_t len,
				       enum gdma_queue_type qt,
				       struct gdma_wqe_view *v)
{
	uint64_t raw;

	if (len < GDMA_WQE_HDR_SIZE)
		return -EINVAL;
	memcpy(&raw, buf, sizeof(raw));
	if (!v->hdr_ok || raw != v->hdr_raw) {
		v->hdr_ok = false;
		if (gdma_wqe_header_decode(buf, qt, &v->hdr))
			return -EINVAL;
		v->hdr_raw = raw;
		v->hdr_ok = true;
		v->size = gdma_wqe_size(v->hdr.oob_size, v->hdr.num_sge);
		v->sgl_off = gdma_wqe_sgl_offset(v->hdr.oob_size);
	}
	return v->size > len ? -EINVAL : 0;
}

/* SGE @i of a WQE gdma_wqe_view_decode() accepted (i < hdr.num_sge). */
static inline void gdma_wqe_view_sge(const uint8_t *buf,
				     const struct gdma_wqe_view *v,
				     uint32_t i, struct gdma_sge *sge)
{
	gdma_sge_decode(buf + v->sgl_off + i * GDMA_SGE_SIZE, sge);
}

static inline int gdma_wqe_decode_linear(const uint8_t *buf, uint32_t len,
					 enum gdma_queue_type qt,
					 struct gdma_wqe *out,
					 uint32_t *size_bu)
{
	if (len < GDMA_WQE_HDR_SIZE ||
	    gdma_wqe_header_decode(buf, qt, &out->hdr))
		return -EINVAL;
	return gdma_wqe_decode_body(buf, len, out, size_bu);
}

/* ------------------------------------------------------------------------ */
/* MANA TX inline OOB: short (8 bytes) or short + long (24 bytes) */

enum mana_pkt_fmt {
	MANA_SHORT_PKT_FMT = 0,
	MANA_LONG_PKT_FMT = 1,
};

#define MANA_SHORT_VPORT_OFFSET_MAX	255

struct mana_tx_oob {
	/* short form, dword 0 */
	uint8_t pkt_fmt;
	bool is_outer_ipv4;
	bool is_outer_ipv6;
	bool comp_iphdr_csum;
	bool comp_tcp_csum;
	bool comp_udp_csum;
	bool suppress_txcqe_gen;
	uint32_t vcq_num;		/* 24 bits: the SQ's CQ id */
	/* short form, dword 1 */
	uint16_t trans_off;		/* 10 bits */
	uint16_t vsq_frame;		/* 14 bits: (sq id >> 10) */
	uint8_t short_vp_offset;
	/* long form only (pkt_fmt == MANA_LONG_PKT_FMT) */
	bool is_encap;
	bool inner_is_ipv6;
	bool inner_tcp_opt;
	bool inject_vlan_pri_tag;
	uint8_t pcp;			/* 3 bits */
	bool dei;
	uint16_t vlan_id;		/* 12 bits */
	uint16_t inner_frame_offset;	/* 10 bits */
	uint8_t inner_ip_rel_offset;	/* 6 bits */
	uint16_t long_vp_offset;	/* 12 bits */
};

/*
 * Decode flag: ignore the reserved bits of the long form instead of
 * rejecting them.  DPDK (>= 24.03, VLAN insertion) leaves everything in the
 * long OOB but the VLAN fields uninitialised, so a device model that must
 * accept DPDK passes this and ignores the garbage-bearing fields.
 */
#define MANA_TX_OOB_IGNORE_RSVD	(1U << 0)

static inline uint32_t mana_tx_vsq_frame(uint32_t sq_id)
{
	return (sq_id >> 10) & 0x3FFF;
}

static inline uint32_t mana_tx_oob_size(uint8_t pkt_fmt)
{
	return pkt_fmt == MANA_LONG_PKT_FMT ? GDMA_OOB_LARGE : GDMA_OOB_SMALL;
}

static inline bool mana_tx_oob_long_clear(const struct mana_tx_oob *o)
{
	return !o->is_encap && !o->inner_is_ipv6 && !o->inner_tcp_opt &&
	       !o->inject_vlan_pri_tag && !o->pcp && !o->dei && !o->vlan_id &&
	       !o->inner_frame_offset && !o->inner_ip_rel_offset &&
	       !o->long_vp_offset;
}

static inline int mana_tx_oob_check(const struct mana_tx_oob *o)
{
	if (o->pkt_fmt != MANA_SHORT_PKT_FMT && o->pkt_fmt != MANA_LONG_PKT_FMT)
		return -EINVAL;
	if (o->vcq_num > GDMA_QUEUE_ID_MAX || o->trans_off > 0x3FF ||
	    o->vsq_frame > 0x3FFF)
		return -EINVAL;
	/* contradictory requests: a frame is one of v4/v6, one of TCP/UDP */
	if ((o->is_outer_ipv4 && o->is_outer_ipv6) ||
	    (o->comp_tcp_csum && o->comp_udp_csum))
		return -EINVAL;
	if (o->pkt_fmt == MANA_SHORT_PKT_FMT)
		return mana_tx_oob_long_clear(o) ? 0 : -EINVAL;
	if (o->pcp > 7 || o->vlan_id > 0xFFF || o->inner_frame_offset > 0x3FF ||
	    o->inner_ip_rel_offset > 0x3F || o->long_vp_offset > 0xFFF)
		return -EINVAL;
	return 0;
}

/* Writes mana_tx_oob_size(oob->pkt_fmt) bytes. */
static inline int mana_tx_oob_encode(const struct mana_tx_oob *o, void *wire)
{
	uint8_t *b = wire;

	if (mana_tx_oob_check(o))
		return -EINVAL;
	gdma_put_le32(b, (uint32_t)o->pkt_fmt |
		      (uint32_t)o->is_outer_ipv4 << 2 |
		      (uint32_t)o->is_outer_ipv6 << 3 |
		      (uint32_t)o->comp_iphdr_csum << 4 |
		      (uint32_t)o->comp_tcp_csum << 5 |
		      (uint32_t)o->comp_udp_csum << 6 |
		      (uint32_t)o->suppress_txcqe_gen << 7 | o->vcq_num << 8);
	gdma_put_le32(b + 4, (uint32_t)o->trans_off |
		      (uint32_t)o->vsq_frame << 10 |
		      (uint32_t)o->short_vp_offset << 24);
	if (o->pkt_fmt == MANA_SHORT_PKT_FMT)
		return 0;
	gdma_put_le32(b + 8, (uint32_t)o->is_encap |
		      (uint32_t)o->inner_is_ipv6 << 1 |
		      (uint32_t)o->inner_tcp_opt << 2 |
		      (uint32_t)o->inject_vlan_pri_tag << 3 |
		      (uint32_t)o->pcp << 16 | (uint32_t)o->dei << 19 |
		      (uint32_t)o->vlan_id << 20);
	gdma_put_le32(b + 12, (uint32_t)o->inner_frame_offset |
		      (uint32_t)o->inner_ip_rel_offset << 10 |
		      (uint32_t)o->long_vp_offset << 16);
	gdma_put_le32(b + 16, 0);
	gdma_put_le32(b + 20, 0);
	return 0;
}

static inline void mana_tx_oob_decode_short(const uint8_t *b,
					    struct mana_tx_oob *o)
{
	uint32_t dw0 = gdma_get_le32(b), dw1 = gdma_get_le32(b + 4);

	o->pkt_fmt = (uint8_t)gdma_bits(dw0, 0, 2);
	o->is_outer_ipv4 = gdma_bits(dw0, 2, 1);
	o->is_outer_ipv6 = gdma_bits(dw0, 3, 1);
	o->comp_iphdr_csum = gdma_bits(dw0, 4, 1);
	o->comp_tcp_csum = gdma_bits(dw0, 5, 1);
	o->comp_udp_csum = gdma_bits(dw0, 6, 1);
	o->suppress_txcqe_gen = gdma_bits(dw0, 7, 1);
	o->vcq_num = dw0 >> 8;
	o->trans_off = (uint16_t)gdma_bits(dw1, 0, 10);
	o->vsq_frame = (uint16_t)gdma_bits(dw1, 10, 14);
	o->short_vp_offset = (uint8_t)(dw1 >> 24);
}

static inline int mana_tx_oob_decode_long(const uint8_t *b, unsigned int flags,
					  struct mana_tx_oob *o)
{
	uint32_t dw0 = gdma_get_le32(b), dw1 = gdma_get_le32(b + 4);
	uint32_t rsvd = (dw0 & 0x0000FFF0U) | (dw1 & 0xF0000000U) |
			gdma_get_le32(b + 8) | gdma_get_le32(b + 12);

	if (rsvd && !(flags & MANA_TX_OOB_IGNORE_RSVD))
		return -EINVAL;
	o->is_encap = gdma_bits(dw0, 0, 1);
	o->inner_is_ipv6 = gdma_bits(dw0, 1, 1);
	o->inner_tcp_opt = gdma_bits(dw0, 2, 1);
	o->inject_vlan_pri_tag = gdma_bits(dw0, 3, 1);
	o->pcp = (uint8_t)gdma_bits(dw0, 16, 3);
	o->dei = gdma_bits(dw0, 19, 1);
	o->vlan_id = (uint16_t)(dw0 >> 20);
	o->inner_frame_offset = (uint16_t)gdma_bits(dw1, 0, 10);
	o->inner_ip_rel_offset = (uint8_t)gdma_bits(dw1, 10, 6);
	o->long_vp_offset = (uint16_t)gdma_bits(dw1, 16, 12);
	return 0;
}

/*
 * Decode an SQ inline OOB of @oob_size bytes (from the WQE header).  The
 * packet format must agree with the size: short with 8, long with 24; the
 * 32-byte OOB is RC-only and rejected here.
 */
static inline int mana_tx_oob_decode(const void *wire, uint32_t oob_size,
				     unsigned int flags,
				     struct mana_tx_oob *out)
{
	const uint8_t *b = wire;
	struct mana_tx_oob o = { 0 };

	if (flags & ~MANA_TX_OOB_IGNORE_RSVD)
		return -EINVAL;
	mana_tx_oob_decode_short(b, &o);
	if (o.pkt_fmt > MANA_LONG_PKT_FMT ||
	    oob_size != mana_tx_oob_size(o.pkt_fmt))
		return -EINVAL;
	if (o.pkt_fmt == MANA_LONG_PKT_FMT &&
	    mana_tx_oob_decode_long(b + GDMA_OOB_SMALL, flags, &o))
		return -EINVAL;
	if (mana_tx_oob_check(&o))
		return -EINVAL;
	*out = o;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* CQE (64 bytes): 60 bytes of client data + wq_num/is_sq/owner */

struct gdma_cqe {
	uint8_t data[GDMA_CQE_DATA_SIZE];
	uint32_t wq_num;	/* 24 bits */
	bool is_sq;
	uint8_t owner;		/* 3 bits */
};

static inline int gdma_cqe_encode(const struct gdma_cqe *c, void *wire)
{
	uint8_t *b = wire;

	if (c->wq_num > GDMA_QUEUE_ID_MAX || c->owner > GDMA_OWNER_MASK)
		return -EINVAL;
	memcpy(b, c->data, GDMA_CQE_DATA_SIZE);
	gdma_put_le32(b + GDMA_CQE_DATA_SIZE, c->wq_num |
		      (uint32_t)c->is_sq << 24 | (uint32_t)c->owner << 29);
	return 0;
}

/*
 * Bits 25-28 of the last dword are reserved (openvmm names bit 25 "cmpln"
 * but never sets it); a set bit fails decoding.
 */
static inline int gdma_cqe_decode(const void *wire, struct gdma_cqe *out)
{
	const uint8_t *b = wire;
	uint32_t dw = gdma_get_le32(b + GDMA_CQE_DATA_SIZE);

	if (dw & 0x1E000000U)
		return -EINVAL;
	memcpy(out->data, b, GDMA_CQE_DATA_SIZE);
	out->wq_num = dw & GDMA_QUEUE_ID_MAX;
	out->is_sq = gdma_bits(dw, 24, 1);
	out->owner = (uint8_t)(dw >> 29);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* MANA completion header: first dword of every Ethernet CQE's data */

struct mana_cqe_header {
	uint8_t cqe_type;	/* 6 bits, enum mana_cqe_type */
	uint8_t client_type;	/* 2 bits, MANA_CQE_COMPLETION */
	uint32_t vendor_err;	/* 24 bits */
};

static inline bool mana_cqe_type_is_rx(uint32_t t)
{
	return (t >= CQE_RX_OKAY && t <= CQE_RX_TRUNCATED) ||
	       t == CQE_RX_COALESCED_8;
}

static inline bool mana_cqe_type_is_tx(uint32_t t)
{
	return t >= CQE_TX_OKAY && t <= CQE_TX_VLAN_TAGGING_VIOLATION;
}

static inline int mana_cqe_header_check(const struct mana_cqe_header *h)
{
	if (!mana_cqe_type_is_rx(h->cqe_type) &&
	    !mana_cqe_type_is_tx(h->cqe_type))
		return -EINVAL;
	if (h->client_type != MANA_CQE_COMPLETION ||
	    h->vendor_err > 0xFFFFFF)
		return -EINVAL;
	return 0;
}

static inline int mana_cqe_header_encode(const struct mana_cqe_header *h,
					 void *wire)
{
	if (mana_cqe_header_check(h))
		return -EINVAL;
	gdma_put_le32(wire, (uint32_t)h->cqe_type |
		      (uint32_t)h->client_type << 6 | h->vendor_err << 8);
	return 0;
}

static inline int mana_cqe_header_decode(const void *wire,
					 struct mana_cqe_header *out)
{
	uint32_t dw = gdma_get_le32(wire);
	struct mana_cqe_header h = {
		.cqe_type = (uint8_t)gdma_bits(dw, 0, 6),
		.client_type = (uint8_t)gdma_bits(dw, 6, 2),
		.vendor_err = dw >> 8,
	};

	if (mana_cqe_header_check(&h))
		return -EINVAL;
	*out = h;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* RX completion OOB (60 bytes) */

#define MANA_RXCOMP_NUM_PPI	4
#define MANA_RXCOMP_MAX_PKTS	8	/* CQE_RX_COALESCED_8 */

struct mana_rx_pkt_info {
	uint16_t pkt_len;
	uint32_t pkt_hash;
};

/*
 * ppi[0..3] map to the four 12-byte per-packet slots.  Only
 * CQE_RX_COALESCED_8 uses ppi[4..7]: there slot i carries packets 2i and
 * 2i+1 ({hash0 @0, len0 @4, len1 @6, hash1 @8}); pairing slot i with
 * packets 2i, 2i+1 in that order is our reading of the newest kernel
 * header, not seen in use.
 */
struct mana_rx_comp_oob {
	uint8_t cqe_type;
	uint32_t vendor_err;
	uint16_t rx_vlan_id;		/* 12 bits */
	bool rx_vlantag_present;
	bool rx_outer_iphdr_csum_succeed;
	bool rx_outer_iphdr_csum_fail;
	uint16_t rx_hashtype;		/* 9 bits, MANA_HASH_* */
	bool rx_iphdr_csum_succeed;
	bool rx_iphdr_csum_fail;
	bool rx_tcp_csum_succeed;
	bool rx_tcp_csum_fail;
	bool rx_udp_csum_succeed;
	bool rx_udp_csum_fail;
	struct mana_rx_pkt_info ppi[MANA_RXCOMP_MAX_PKTS];
	uint32_t rx_wqe_offset;
};

static inline unsigned int mana_rx_comp_slots(uint8_t cqe_type)
{
	switch (cqe_type) {
	case CQE_RX_COALESCED_4:
		return MANA_RXCOMP_NUM_PPI;
	case CQE_RX_COALESCED_8:
		return MANA_RXCOMP_MAX_PKTS;
	default:
		return 1;
	}
}

/*
 * Packet list rules the consumers rely on: OKAY and COALESCED_* carry at
 * least one packet (the kernel never expects pkt_len 0 in ppi[0]); packets
 * are contiguous from ppi[0] and everything after the first zero length is
 * zero (DPDK consumes one RQ WQE per non-zero length until the first zero,
 * so a stray length would desynchronise it); a type never carries more
 * packets than it has slots.  FENCE and TRUNCATED only need ppi[1..] clear.
 */
static inline int mana_rx_comp_ppi_check(const struct mana_rx_comp_oob *o)
{
	unsigned int n = mana_rx_comp_slots(o->cqe_type), i;
	bool data = o->cqe_type == CQE_RX_OKAY ||
		    o->cqe_type == CQE_RX_COALESCED_4 ||
		    o->cqe_type == CQE_RX_COALESCED_8;

	uint32_t rest = 0;

	if (data && !o->ppi[0].pkt_len)
		return -EINVAL;
	/* the used slots: from 1 up to the first zero length or the last */
	for (i = 1; i < n && o->ppi[i].pkt_len; i++)
		;
	/* that zero-length slot and every one after it: all zero */
	for (; i < MANA_RXCOMP_MAX_PKTS; i++)
		rest |= o->ppi[i].pkt_len | o->ppi[i].pkt_hash;
	return rest ? -EINVAL : 0;
}

static inline int mana_rx_comp_oob_check(const struct mana_rx_comp_oob *o)
{
	struct mana_cqe_header h = {
		.cqe_type = o->cqe_type,
		.client_type = MANA_CQE_COMPLETION,
		.vendor_err = o->vendor_err,
	};

	if (!mana_cqe_type_is_rx(o->cqe_type) || mana_cqe_header_check(&h))
		return -EINVAL;
	if (o->rx_vlan_id > 0xFFF || o->rx_hashtype > MANA_HASH_ALL)
		return -EINVAL;
	/* a checksum cannot both pass and fail */
	if ((o->rx_outer_iphdr_csum_succeed && o->rx_outer_iphdr_csum_fail) ||
	    (o->rx_iphdr_csum_succeed && o->rx_iphdr_csum_fail) ||
	    (o->rx_tcp_csum_succeed && o->rx_tcp_csum_fail) ||
	    (o->rx_udp_csum_succeed && o->rx_udp_csum_fail))
		return -EINVAL;
	return mana_rx_comp_ppi_check(o);
}

static inline uint32_t mana_rx_comp_flags(const struct mana_rx_comp_oob *o)
{
	return (uint32_t)o->rx_vlan_id | (uint32_t)o->rx_vlantag_present << 12 |
	       (uint32_t)o->rx_outer_iphdr_csum_succeed << 13 |
	       (uint32_t)o->rx_outer_iphdr_csum_fail << 14 |
	       (uint32_t)o->rx_hashtype << 16 |
	       (uint32_t)o->rx_iphdr_csum_succeed << 25 |
	       (uint32_t)o->rx_iphdr_csum_fail << 26 |
	       (uint32_t)o->rx_tcp_csum_succeed << 27 |
	       (uint32_t)o->rx_tcp_csum_fail << 28 |
	       (uint32_t)o->rx_udp_csum_succeed << 29 |
	       (uint32_t)o->rx_udp_csum_fail << 30;
}

static inline int mana_rx_comp_oob_encode(const struct mana_rx_comp_oob *o,
					  void *wire)
{
	uint8_t *buf = wire;	/* in place: every check comes first */
	struct mana_cqe_header h = {
		.cqe_type = o->cqe_type,
		.client_type = MANA_CQE_COMPLETION,
		.vendor_err = o->vendor_err,
	};
	unsigned int i;

	if (mana_rx_comp_oob_check(o) || mana_cqe_header_check(&h))
		return -EINVAL;
	memset(buf, 0, GDMA_CQE_DATA_SIZE);
	mana_cqe_header_encode(&h, buf);
	gdma_put_le32(buf + 4, mana_rx_comp_flags(o));
	for (i = 0; i < MANA_RXCOMP_NUM_PPI; i++) {
		uint8_t *s = buf + 8 + 12 * i;

		if (o->cqe_type == CQE_RX_COALESCED_8) {
			gdma_put_le32(s, o->ppi[2 * i].pkt_hash);
			gdma_put_le16(s + 4, o->ppi[2 * i].pkt_len);
			gdma_put_le16(s + 6, o->ppi[2 * i + 1].pkt_len);
			gdma_put_le32(s + 8, o->ppi[2 * i + 1].pkt_hash);
		} else {
			gdma_put_le16(s, o->ppi[i].pkt_len);
			gdma_put_le32(s + 8, o->ppi[i].pkt_hash);
		}
	}
	gdma_put_le32(buf + 56, o->rx_wqe_offset);
	return 0;
}

/*
 * The device's common case written straight into @wire: a CQE_RX_OKAY for
 * one packet, from the flags dword mana_rx_comp_flags() would build.  The
 * bytes are those mana_rx_comp_oob_encode() writes for that completion,
 * after the same checks (bits 15 and 31 of the flags are not fields).
 * mana_rx_comp_words_one() gives its first three 8-byte words as
 * little-endian values (the other data words are zero but for the WQE
 * offset in bytes 56-59).
 */
#define MANA_RX_FLAGS_PAIRS	(1U << 13 | 1U << 25 | 1U << 27 | 1U << 29)

static inline int mana_rx_comp_words_one(uint64_t w[3], uint32_t flags,
					 uint16_t pkt_len, uint32_t pkt_hash)
{
	/* a length; no checksum both passed and failed; no stray bit */
	if (!pkt_len || (flags & flags >> 1 & MANA_RX_FLAGS_PAIRS) ||
	    (flags & (1U << 15 | 1U << 31)))
		return -EINVAL;
	w[0] = (uint64_t)CQE_RX_OKAY | (uint64_t)MANA_CQE_COMPLETION << 6 |
	       (uint64_t)flags << 32;
	w[1] = pkt_len;
	w[2] = pkt_hash;
	return 0;
}

static inline int mana_rx_comp_encode_one(void *wire, uint32_t flags,
					  uint16_t pkt_len, uint32_t pkt_hash,
					  uint32_t wqe_offset)
{
	uint8_t *b = wire;
	uint64_t w[3];

	if (mana_rx_comp_words_one(w, flags, pkt_len, pkt_hash))
		return -EINVAL;
	/* whole words, the zero ones included: no byte-wise clear */
	gdma_put_le64(b, w[0]);
	gdma_put_le64(b + 8, w[1]);
	gdma_put_le64(b + 16, w[2]);
	gdma_put_le64(b + 24, 0);
	gdma_put_le64(b + 32, 0);
	gdma_put_le64(b + 40, 0);
	gdma_put_le64(b + 48, 0);
	gdma_put_le32(b + 56, wqe_offset);
	return 0;
}

static inline int mana_rx_comp_ppi_decode(const uint8_t *b, uint8_t type,
					  struct mana_rx_comp_oob *o)
{
	unsigned int i;

	for (i = 0; i < MANA_RXCOMP_NUM_PPI; i++) {
		const uint8_t *s = b + 8 + 12 * i;

		if (type == CQE_RX_COALESCED_8) {
			o->ppi[2 * i].pkt_hash = gdma_get_le32(s);
			o->ppi[2 * i].pkt_len = gdma_get_le16(s + 4);
			o->ppi[2 * i + 1].pkt_len = gdma_get_le16(s + 6);
			o->ppi[2 * i + 1].pkt_hash = gdma_get_le32(s + 8);
			continue;
		}
		/* bytes 2-7 of a slot are reserved in the 4-packet layout */
		if (gdma_get_le16(s + 2) || gdma_get_le32(s + 4))
			return -EINVAL;
		o->ppi[i].pkt_len = gdma_get_le16(s);
		o->ppi[i].pkt_hash = gdma_get_le32(s + 8);
	}
	return 0;
}

static inline int mana_rx_comp_oob_decode(const void *wire,
					  struct mana_rx_comp_oob *out)
{
	const uint8_t *b = wire;
	struct mana_rx_comp_oob o = { 0 };
	struct mana_cqe_header h;
	uint32_t fl = gdma_get_le32(b + 4);

	if (mana_cqe_header_decode(b, &h) || !mana_cqe_type_is_rx(h.cqe_type))
		return -EINVAL;
	/* flags bits 15 and 31 are reserved */
	if (fl & 0x80008000U)
		return -EINVAL;
	o.cqe_type = h.cqe_type;
	o.vendor_err = h.vendor_err;
	o.rx_vlan_id = (uint16_t)gdma_bits(fl, 0, 12);
	o.rx_vlantag_present = gdma_bits(fl, 12, 1);
	o.rx_outer_iphdr_csum_succeed = gdma_bits(fl, 13, 1);
	o.rx_outer_iphdr_csum_fail = gdma_bits(fl, 14, 1);
	o.rx_hashtype = (uint16_t)gdma_bits(fl, 16, 9);
	o.rx_iphdr_csum_succeed = gdma_bits(fl, 25, 1);
	o.rx_iphdr_csum_fail = gdma_bits(fl, 26, 1);
	o.rx_tcp_csum_succeed = gdma_bits(fl, 27, 1);
	o.rx_tcp_csum_fail = gdma_bits(fl, 28, 1);
	o.rx_udp_csum_succeed = gdma_bits(fl, 29, 1);
	o.rx_udp_csum_fail = gdma_bits(fl, 30, 1);
	if (mana_rx_comp_ppi_decode(b, o.cqe_type, &o))
		return -EINVAL;
	o.rx_wqe_offset = gdma_get_le32(b + 56);
	if (mana_rx_comp_oob_check(&o))
		return -EINVAL;
	*out = o;
	return 0;
}

/* Packets an RX completion delivers. */
static inline unsigned int mana_rx_comp_pkts(const struct mana_rx_comp_oob *o)
{
	unsigned int n = 0;

	if (o->cqe_type != CQE_RX_OKAY && o->cqe_type != CQE_RX_COALESCED_4 &&
	    o->cqe_type != CQE_RX_COALESCED_8)
		return 0;
	while (n < mana_rx_comp_slots(o->cqe_type) && o->ppi[n].pkt_len)
		n++;
	return n;
}

/*
 * RQ WQEs an RX completion consumes: one per packet, one for a truncated
 * frame, none for a fence.
 */
static inline unsigned int mana_rx_comp_wqes(const struct mana_rx_comp_oob *o)
{
	if (o->cqe_type == CQE_RX_TRUNCATED)
		return 1;
	return mana_rx_comp_pkts(o);
}

/* ------------------------------------------------------------------------ */
/* TX completion OOB (60 bytes) */

/*
 * tx_wqe_offset is 27 bits; its unit is unverified (probably BUs).  No known
 * consumer reads it or tx_data_offset.
 */
struct mana_tx_comp_oob {
	uint8_t cqe_type;
	uint32_t vendor_err;
	uint32_t tx_data_offset;
	uint8_t tx_sgl_offset;		/* 5 bits */
	uint32_t tx_wqe_offset;		/* 27 bits */
};

static inline int mana_tx_comp_oob_check(const struct mana_tx_comp_oob *o)
{
	if (!mana_cqe_type_is_tx(o->cqe_type) || o->vendor_err > 0xFFFFFF ||
	    o->tx_sgl_offset > 0x1F || o->tx_wqe_offset > 0x7FFFFFF)
		return -EINVAL;
	return 0;
}

static inline int mana_tx_comp_oob_encode(const struct mana_tx_comp_oob *o,
					  void *wire)
{
	uint8_t *b = wire;
	struct mana_cqe_header h = {
		.cqe_type = o->cqe_type,
		.client_type = MANA_CQE_COMPLETION,
		.vendor_err = o->vendor_err,
	};

	if (mana_tx_comp_oob_check(o))
		return -EINVAL;
	memset(b, 0, GDMA_CQE_DATA_SIZE);
	mana_cqe_header_encode(&h, b);
	gdma_put_le32(b + 4, o->tx_data_offset);
	gdma_put_le32(b + 8,
		      (uint32_t)o->tx_sgl_offset | o->tx_wqe_offset << 5);
	return 0;
}

/*
 * A TX completion with only its type and WQE offset, as the device writes
 * most of them: mana_tx_comp_oob_encode() of { cqe_type, tx_wqe_offset }
 * (the same checks) without building the struct.
 */
static inline int mana_tx_comp_encode_one(void *wire, uint8_t cqe_type,
					  uint32_t wqe_offset)
{
	uint8_t *b = wire;

	if (!mana_cqe_type_is_tx(cqe_type) || wqe_offset > 0x7FFFFFF)
		return -EINVAL;
	gdma_put_le64(b, (uint64_t)cqe_type |
			 (uint64_t)MANA_CQE_COMPLETION << 6);
	gdma_put_le64(b + 8, (uint64_t)wqe_offset << 5);
	gdma_put_le64(b + 16, 0);
	gdma_put_le64(b + 24, 0);
	gdma_put_le64(b + 32, 0);
	gdma_put_le64(b + 40, 0);
	gdma_put_le64(b + 48, 0);
	gdma_put_le32(b + 56, 0);
	return 0;
}

static inline int mana_tx_comp_oob_decode(const void *wire,
					  struct mana_tx_comp_oob *out)
{
	const uint8_t *b = wire;
	struct mana_cqe_header h;
	uint32_t dw2 = gdma_get_le32(b + 8);
	unsigned int i;

	if (mana_cqe_header_decode(b, &h) || !mana_cqe_type_is_tx(h.cqe_type))
		return -EINVAL;
	for (i = 12; i < GDMA_CQE_DATA_SIZE; i++)
		if (b[i])
			return -EINVAL;
	out->cqe_type = h.cqe_type;
	out->vendor_err = h.vendor_err;
	out->tx_data_offset = gdma_get_le32(b + 4);
	out->tx_sgl_offset = (uint8_t)gdma_bits(dw2, 0, 5);
	out->tx_wqe_offset = dw2 >> 5;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* EQE (16 bytes) */

struct gdma_eqe {
	uint32_t details[3];	/* meaning depends on type */
	uint8_t type;		/* enum gdma_eqe_type */
	uint8_t client_id;	/* 2 bits */
	uint8_t owner;		/* 3 bits */
};

static inline bool gdma_eqe_type_known(uint32_t t)
{
	switch (t) {
	case GDMA_EQE_COMPLETION:
	case GDMA_EQE_TEST_EVENT:
	case GDMA_EQE_RNIC_QP_FATAL:
		return true;
	}
	return t >= GDMA_EQE_HWC_INIT_EQ_ID_DB &&
	       t <= GDMA_EQE_HWC_RESET_REQUEST;
}

static inline int gdma_eqe_check(const struct gdma_eqe *e)
{
	if (!gdma_eqe_type_known(e->type) || e->client_id > 3 ||
	    e->owner > GDMA_OWNER_MASK)
		return -EINVAL;
	return 0;
}

static inline int gdma_eqe_encode(const struct gdma_eqe *e, void *wire)
{
	uint8_t *b = wire;

	if (gdma_eqe_check(e))
		return -EINVAL;
	gdma_put_le32(b, e->details[0]);
	gdma_put_le32(b + 4, e->details[1]);
	gdma_put_le32(b + 8, e->details[2]);
	gdma_put_le32(b + 12, (uint32_t)e->type | (uint32_t)e->client_id << 16 |
		      (uint32_t)e->owner << 29);
	return 0;
}

static inline int gdma_eqe_decode(const void *wire, struct gdma_eqe *out)
{
	const uint8_t *b = wire;
	uint32_t info = gdma_get_le32(b + 12);
	struct gdma_eqe e = {
		.details = { gdma_get_le32(b), gdma_get_le32(b + 4),
			     gdma_get_le32(b + 8) },
		.type = (uint8_t)info,
		.client_id = (uint8_t)gdma_bits(info, 16, 2),
		.owner = (uint8_t)(info >> 29),
	};

	/* bits 8-15 and 18-28 are reserved */
	if (info & 0x1FFCFF00U || gdma_eqe_check(&e))
		return -EINVAL;
	*out = e;
	return 0;
}

/* CQ id of a GDMA_EQE_COMPLETION (the kernel masks details[0] to 24 bits). */
static inline uint32_t gdma_eqe_cq_id(const struct gdma_eqe *e)
{
	return e->details[0] & GDMA_QUEUE_ID_MAX;
}

/* ------------------------------------------------------------------------ */
/*
 * RNIC (RC) formats, as rdma-core v64 drives the hardware
 * (research/mana-kernel-and-gdma.md §3.9, libmana-features-and-issues.md §4).
 * One RC QP is four queues; their ids share the upper bits and carry the
 * queue's role in the low two bits.  qp_num is the receive responder's id.
 */
#define MANA_RC_QTYPE_MASK	0x3U

enum mana_rc_send_qtype {
	MANA_RC_SQ_REQ = 0,	/* send requester: the provider's SQ */
	MANA_RC_SQ_RESP = 1,	/* send responder (hardware-internal) */
	MANA_RC_SQ_MMQ = 2,
};

enum mana_rc_recv_qtype {
	MANA_RC_RQ_RESP = 0,	/* receive responder: the RQ, qp_num */
	MANA_RC_RQ_REQ = 1,	/* receive requester: READ buffers, arming */
};

static inline uint32_t mana_rc_qid_subtype(uint32_t id)
{
	return id & MANA_RC_QTYPE_MASK;
}

/* The part of an id shared by a QP's queues (rdma-core's table key). */
static inline uint32_t mana_rc_qid_base(uint32_t id)
{
	return id & ~MANA_RC_QTYPE_MASK;
}

/*
 * Queue id from a base (low two bits clear, nonzero, 24 bits) and the
 * subtype of its side: 0-2 on the send side, 0-1 on the receive side.
 */
static inline int mana_rc_qid_make(uint32_t base, bool is_send,
				   uint32_t subtype, uint32_t *id)
{
	uint32_t max = is_send ? MANA_RC_SQ_MMQ : MANA_RC_RQ_REQ;

	if (!base || base & MANA_RC_QTYPE_MASK || base > GDMA_QUEUE_ID_MAX ||
	    subtype > max)
		return -EINVAL;
	*id = base | subtype;
	return 0;
}

/*
 * Whether an error CQE reports a send-side (requester) failure, the way
 * rdma-core v64 sorts them: on an SQ any queue but the send responder, on
 * an RQ only the receive requester.
 */
static inline bool mana_rc_cqe_is_send(uint32_t wqid, bool is_sq)
{
	uint32_t t = mana_rc_qid_subtype(wqid);

	return is_sq ? t != MANA_RC_SQ_RESP : t == MANA_RC_RQ_REQ;
}

/* ------------------------------------------------------------------------ */
/* PSNs and sequence numbers: 24 bits, compared modulo 2^24 (IBA 9.7.2). */

#define MANA_PSN_MASK		0xFFFFFFU

static inline uint32_t mana_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & MANA_PSN_MASK;
}

/* a comes before b: b is within the 2^23 PSNs after a */
static inline bool mana_psn_lt(uint32_t a, uint32_t b)
{
	uint32_t d = (b - a) & MANA_PSN_MASK;

	return d && d < 0x800000U;
}

/*
 * PSNs a message of @len bytes takes at path MTU @mtu bytes: one per MTU,
 * at least one (a zero-length message is one packet).  0 for mtu 0.
 */
static inline uint32_t mana_psn_count(uint32_t len, uint32_t mtu)
{
	if (!mtu)
		return 0;
	return len ? (uint32_t)(((uint64_t)len + mtu - 1) / mtu) : 1;
}

/* ------------------------------------------------------------------------ */
/*
 * Arm doorbell (0x408 "RQ client", on the receive requester's id): ask for
 * one ARMED_CMPL CQE once everything up to @psn is acknowledged.  A view
 * of the RQ_CLIENT doorbell above, which already holds high == 1 and a
 * 24-bit PSN.
 */
static inline int gdma_arm_db_encode(uint32_t rreq_id, uint32_t psn,
				     uint64_t *out)
{
	struct gdma_doorbell db = {
		.kind = GDMA_DB_RQ_CLIENT,
		.id = rreq_id,
		.client_high = 1,
		.client_low = psn,
	};

	return gdma_doorbell_encode(&db, out);
}

static inline int gdma_arm_db_decode(uint64_t v, uint32_t *rreq_id,
				     uint32_t *psn)
{
	struct gdma_doorbell db;

	if (gdma_doorbell_decode(GDMA_DB_RQ_CLIENT, v, &db))
		return -EINVAL;
	*rreq_id = db.id;
	*psn = db.client_low;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* RNIC WQE types (rdma_send_oob.wqe_type, 5 bits) */

enum mana_wqe_type {
	MANA_WQE_UD_SEND = 0,
	MANA_WQE_UD_SEND_IMM = 1,
	MANA_WQE_RC_SEND = 2,
	MANA_WQE_RC_SEND_IMM = 3,
	MANA_WQE_RC_SEND_INV = 4,
	MANA_WQE_WRITE = 5,
	MANA_WQE_WRITE_IMM = 6,
	MANA_WQE_READ = 7,
	MANA_WQE_UD_RECV = 8,
	MANA_WQE_RC_RECV = 9,
	MANA_WQE_LOCAL_INV = 10,
	MANA_WQE_REG_MR = 11,
};

#define MANA_WQE_TYPE_COUNT	12

/* The types an RC send OOB may carry (the others have other layouts). */
static inline bool mana_wqe_type_is_rc_send(uint32_t t)
{
	return t >= MANA_WQE_RC_SEND && t <= MANA_WQE_READ;
}

static inline bool mana_wqe_type_is_rdma(uint32_t t)
{
	return t == MANA_WQE_WRITE || t == MANA_WQE_WRITE_IMM ||
	       t == MANA_WQE_READ;
}

/*
 * RC send OOB: 24 bytes, or 32 for WRITE_IMM, whose "extra large" OOB adds
 * the first SGE slot {le32 immediate, le32 reserved, u64 padding}; its first
 * 8 bytes are OOB bytes 24-31 here (header oob code 7, the SGL then starts at
 * WQE byte 48), the padding lies between the OOB and the SGL and must be 0.
 *
 *   dw0: wqe_type 0-4, fence 5, signaled 6, solicited 7, psn 8-31
 *   dw1: ssn 0-23, reserved 24-31
 *   16 bytes: RC_SEND_IMM {immediate, 0, 0, 0}; RC_SEND_INV {inv_key, 0...};
 *             RC_SEND all zero; WRITE/WRITE_IMM/READ {address_hi,
 *             address_low, rkey, dma_len}.
 *
 * imm is the number the WQE holds as a little-endian dword, that is
 * be32toh(wr->imm_data): the RoCE wire carries it big-endian and the
 * receiver's wc.imm_data is htobe32(imm).
 */
struct mana_rdma_send_oob {
	uint8_t wqe_type;	/* enum mana_wqe_type, RC send types only */
	bool fence;
	bool signaled;
	bool solicited;
	uint32_t psn;		/* 24 bits: the message's first PSN */
	uint32_t ssn;		/* 24 bits */
	uint32_t imm;		/* RC_SEND_IMM, WRITE_IMM */
	uint32_t inv_key;	/* RC_SEND_INV */
	uint64_t remote_addr;	/* WRITE, WRITE_IMM, READ */
	uint32_t rkey;
	uint32_t dma_len;
};

static inline uint32_t mana_rdma_send_oob_size(uint32_t wqe_type)
{
	return wqe_type == MANA_WQE_WRITE_IMM ? GDMA_OOB_XLARGE :
						 GDMA_OOB_LARGE;
}

static inline int
mana_rdma_send_oob_check(const struct mana_rdma_send_oob *o)
{
	uint32_t t = o->wqe_type;

	if (!mana_wqe_type_is_rc_send(t) || o->psn > MANA_PSN_MASK ||
	    o->ssn > MANA_PSN_MASK)
		return -EINVAL;
	/* a field of another type's variant must be clear */
	if (o->imm && t != MANA_WQE_RC_SEND_IMM && t != MANA_WQE_WRITE_IMM)
		return -EINVAL;
	if (o->inv_key && t != MANA_WQE_RC_SEND_INV)
		return -EINVAL;
	if (!mana_wqe_type_is_rdma(t) &&
	    (o->remote_addr || o->rkey || o->dma_len))
		return -EINVAL;
	return 0;
}

/* Writes mana_rdma_send_oob_size(o->wqe_type) bytes. */
static inline int mana_rdma_send_oob_encode(const struct mana_rdma_send_oob *o,
					    void *wire)
{
	uint8_t *b = wire;

	if (mana_rdma_send_oob_check(o))
		return -EINVAL;
	memset(b, 0, mana_rdma_send_oob_size(o->wqe_type));
	gdma_put_le32(b, (uint32_t)o->wqe_type | (uint32_t)o->fence << 5 |
		      (uint32_t)o->signaled << 6 |
		      (uint32_t)o->solicited << 7 | o->psn << 8);
	gdma_put_le32(b + 4, o->ssn);
	switch (o->wqe_type) {
	case MANA_WQE_RC_SEND_IMM:
		gdma_put_le32(b + 8, o->imm);
		break;
	case MANA_WQE_RC_SEND_INV:
		gdma_put_le32(b + 8, o->inv_key);
		break;
	case MANA_WQE_WRITE_IMM:
		gdma_put_le32(b + 24, o->imm);
		/* fall through */
	case MANA_WQE_WRITE:
	case MANA_WQE_READ:
		gdma_put_le32(b + 8, (uint32_t)(o->remote_addr >> 32));
		gdma_put_le32(b + 12, (uint32_t)o->remote_addr);
		gdma_put_le32(b + 16, o->rkey);
		gdma_put_le32(b + 20, o->dma_len);
		break;
	}
	return 0;
}

/* Bytes 8-23 a variant leaves unused: they must read as zero. */
static inline bool mana_rdma_send_oob_tail_clear(const uint8_t *b,
						 uint32_t type)
{
	unsigned int from, i;

	if (mana_wqe_type_is_rdma(type))
		return true;
	from = type == MANA_WQE_RC_SEND ? 8 : 12;
	for (i = from; i < GDMA_OOB_LARGE; i++)
		if (b[i])
			return false;
	return true;
}

/*
 * Decode an SQ inline OOB of @oob_size bytes (from the WQE header): 32 for
 * WRITE_IMM, 24 for the other RC types; anything else is rejected.
 */
static inline int mana_rdma_send_oob_decode(const void *wire,
					    uint32_t oob_size,
					    struct mana_rdma_send_oob *out)
{
	const uint8_t *b = wire;
	uint32_t dw0 = gdma_get_le32(b), dw1 = gdma_get_le32(b + 4);
	struct mana_rdma_send_oob o = {
		.wqe_type = (uint8_t)gdma_bits(dw0, 0, 5),
		.fence = gdma_bits(dw0, 5, 1),
		.signaled = gdma_bits(dw0, 6, 1),
		.solicited = gdma_bits(dw0, 7, 1),
		.psn = dw0 >> 8,
		.ssn = dw1 & MANA_PSN_MASK,
	};

	if (!mana_wqe_type_is_rc_send(o.wqe_type) ||
	    oob_size != mana_rdma_send_oob_size(o.wqe_type) ||
	    dw1 >> 24 || !mana_rdma_send_oob_tail_clear(b, o.wqe_type))
		return -EINVAL;
	switch (o.wqe_type) {
	case MANA_WQE_RC_SEND_IMM:
		o.imm = gdma_get_le32(b + 8);
		break;
	case MANA_WQE_RC_SEND_INV:
		o.inv_key = gdma_get_le32(b + 8);
		break;
	case MANA_WQE_WRITE_IMM:
		/* the extra slot's reserved dword */
		if (gdma_get_le32(b + 28))
			return -EINVAL;
		o.imm = gdma_get_le32(b + 24);
		/* fall through */
	case MANA_WQE_WRITE:
	case MANA_WQE_READ:
		o.remote_addr = (uint64_t)gdma_get_le32(b + 8) << 32 |
				gdma_get_le32(b + 12);
		o.rkey = gdma_get_le32(b + 16);
		o.dma_len = gdma_get_le32(b + 20);
		break;
	}
	*out = o;
	return 0;
}

/*
 * Size of an RC send WQE in BUs for @num_sge SGEs (0 = the dummy SGE) of
 * a message of @wqe_type, as rdma-core lays it out (WRITE_IMM: one more
 * slot).  A READ's SQ WQE always carries just the dummy SGE; its SGL goes
 * on the RREQ WQE (mana_rc_recv_wqe_size_bu()).  0 if it cannot be posted
 * (not an RC send type, over GDMA_MAX_SQE_SIZE).
 */
static inline uint32_t mana_rc_send_wqe_size_bu(uint32_t wqe_type,
						uint32_t num_sge)
{
	uint32_t size;

	if (!mana_wqe_type_is_rc_send(wqe_type) || num_sge > GDMA_MAX_TX_SGE)
		return 0;
	if (!num_sge || wqe_type == MANA_WQE_READ)
		num_sge = 1;	/* READ's SGL is on the RREQ WQE */
	size = gdma_wqe_size(mana_rdma_send_oob_size(wqe_type), num_sge);
	return size > GDMA_MAX_SQE_SIZE ? 0 : size / GDMA_WQE_BU_SIZE;
}

/* Path MTUs an RC WQE's client_data_unit may carry (IB MTU 256-4096). */
static inline bool mana_rc_mtu_valid(uint32_t mtu)
{
	return gdma_is_pow2(mtu) && mtu >= 256 && mtu <= 4096;
}

/*
 * The GDMA header of an RC send WQE as rdma-core v64 builds it: every SGL
 * slot up to the BU boundary is counted in num_sge and the unused trailing
 * ones (zeroed) in num_padding_sgls; WRITE_IMM counts its extra slot in the
 * OOB (code 7) instead of num_sge; check_sn on the types that consume a
 * receive WQE at the responder (RC_SEND*, WRITE_IMM); client_data_unit = the
 * path MTU in bytes; the header's fence bit stays clear (the send OOB
 * carries IBV_SEND_FENCE).  @num_sge 0, and any READ, = the dummy SGE.
 */
static inline int mana_rc_send_wqe_header(uint32_t wqe_type, uint32_t num_sge,
					  uint32_t mtu,
					  struct gdma_wqe_header *out)
{
	uint32_t bu = mana_rc_send_wqe_size_bu(wqe_type, num_sge);
	uint32_t oob = mana_rdma_send_oob_size(wqe_type);
	uint32_t slots, used;
	struct gdma_wqe_header h = { 0 };

	if (!bu || !mana_rc_mtu_valid(mtu))
		return -EINVAL;
	used = !num_sge || wqe_type == MANA_WQE_READ ? 1 : num_sge;
	slots = (bu * GDMA_WQE_BU_SIZE - gdma_wqe_sgl_offset(oob)) /
		GDMA_SGE_SIZE;
	h.num_sge = (uint8_t)slots;
	h.num_padding_sgls = (uint8_t)(slots - used);
	h.oob_size = (uint8_t)oob;
	h.client_data_unit = (uint16_t)mtu;
	h.check_sn = wqe_type != MANA_WQE_WRITE && wqe_type != MANA_WQE_READ;
	if (gdma_wqe_header_check(&h, GDMA_SQ))
		return -EINVAL;
	*out = h;
	return 0;
}

/* SGEs of an SQ WQE that carry data: the slots minus the padding ones. */
static inline uint32_t mana_rc_send_wqe_sges(const struct gdma_wqe_header *h)
{
	return (uint32_t)h->num_sge - h->num_padding_sgls;
}

/*
 * Size in BUs of a receive WQE (RQ, or a READ's RREQ WQE) with @num_sge
 * SGEs (0 = the dummy SGE) and the 8-byte OOB; 0 over GDMA_MAX_RX_SGE.
 */
static inline uint32_t mana_rc_recv_wqe_size_bu(uint32_t num_sge)
{
	if (num_sge > GDMA_MAX_RX_SGE)
		return 0;
	return gdma_wqe_size_bu(GDMA_OOB_SMALL, num_sge ? num_sge : 1);
}

/* ------------------------------------------------------------------------ */
/*
 * RC receive OOB (8 bytes): dw0 psn_start 0-23, dw1 psn_range 0-23; the top
 * bytes are reserved.  Zero on RQ receive WQEs; on a READ's RREQ WQE
 * psn_start is the READ's first PSN (rdma-core leaves psn_range 0).
 */
struct mana_rdma_recv_oob {
	uint32_t psn_start;
	uint32_t psn_range;
};

static inline int mana_rdma_recv_oob_encode(const struct mana_rdma_recv_oob *o,
					    void *wire)
{
	uint8_t *b = wire;

	if (o->psn_start > MANA_PSN_MASK || o->psn_range > MANA_PSN_MASK)
		return -EINVAL;
	gdma_put_le32(b, o->psn_start);
	gdma_put_le32(b + 4, o->psn_range);
	return 0;
}

static inline int mana_rdma_recv_oob_decode(const void *wire,
					    struct mana_rdma_recv_oob *out)
{
	const uint8_t *b = wire;
	uint32_t dw0 = gdma_get_le32(b), dw1 = gdma_get_le32(b + 4);

	if (dw0 > MANA_PSN_MASK || dw1 > MANA_PSN_MASK)
		return -EINVAL;
	out->psn_start = dw0;
	out->psn_range = dw1;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* RDMA CQE data (60 bytes; the trailing dword is struct gdma_cqe's) */

enum mana_rdma_cqe_type {
	MANA_RDMA_CQE_NOP = 0,
	MANA_RDMA_CQE_UD_SEND = 1,
	MANA_RDMA_CQE_UD_SEND_IMM = 2,
	MANA_RDMA_CQE_RC_SEND = 3,
	MANA_RDMA_CQE_RC_SEND_IMM = 4,
	MANA_RDMA_CQE_RC_SEND_INV = 5,
	MANA_RDMA_CQE_RC_WRITE_IMM = 6,
	MANA_RDMA_CQE_ARMED_CMPL = 7,
	MANA_RDMA_CQE_LWR = 8,
	MANA_RDMA_CQE_ERROR = 34,
};

/* IBA AETH syndrome: 000xxxxx ACK, 001xxxxx RNR NAK, 011xxxxx NAK */
#define MANA_SYNDROME_ACK(credits)	(0x00 | (credits))
#define MANA_SYNDROME_RNR_NAK(timer)	(0x20 | (timer))
#define MANA_SYNDROME_NAK(code)		(0x60 | (code))

static inline bool mana_syndrome_is_ack(uint8_t syndrome)
{
	return (syndrome & 0xE0) == 0;
}

static inline bool mana_rdma_cqe_type_is_recv(uint32_t t)
{
	return t >= MANA_RDMA_CQE_RC_SEND && t <= MANA_RDMA_CQE_RC_WRITE_IMM;
}

/*
 * A UC send WQE completed (sent): type UD_SEND on the send queue, as
 * rdma-core's UC support (pull 1719) reads it -- the type and the CQE's
 * queue only, one per signaled WQE in order.  No field of it is known, so
 * all are written as zero and a nonzero one is refused.
 */
static inline bool mana_rdma_cqe_type_is_send(uint32_t t)
{
	return t == MANA_RDMA_CQE_UD_SEND;
}

/*
 * A decoded RC CQE.  Encoded and decoded: the responder types (RC_SEND ..
 * RC_WRITE_IMM), ARMED_CMPL, ERROR and the UC send completion (UD_SEND,
 * no fields); NOP, UD_SEND_IMM and LWR are never written for RC or UC
 * QPs and are rejected.
 *
 *   responder: msg_len u32 @4; psn 24 @8; imm u32 @12 (RC_SEND: 0;
 *              RC_SEND_INV: the invalidated rkey; the IMM types: imm as in
 *              mana_rdma_send_oob); rx_wqe_offset u32 @16.
 *   ARMED_CMPL: dw1 msn 0-23, syndrome 24-31; dw2 psn 0-23 (highest PSN
 *              acknowledged).
 *   ERROR:     dw0 vendor_error 8-17 (10 bits, nonzero); dw1 msn, syndrome;
 *              dw2 psn 0-23, opcode 24-31; dw3 rsp_msn 0-23; dw4 rsp_psn.
 *
 * rx_wqe_offset is the consumed WQE's free-running position in bytes, BU
 * index * 32 wrapping at 2^32 (the unit of the RQ doorbell tail), not its
 * offset in the ring: rdma-core v64 divides it by 32 and compares it with
 * its 27-bit BU producer index.  A multiple of 32.
 */
struct mana_rdma_cqe {
	uint8_t type;		/* enum mana_rdma_cqe_type */
	uint32_t msg_len;
	uint32_t psn;		/* all three layouts, 24 bits */
	uint32_t imm;
	uint32_t rx_wqe_offset;
	uint32_t msn;		/* 24 bits, ARMED_CMPL and ERROR */
	uint8_t syndrome;
	uint16_t vendor_error;	/* ERROR: enum mana_error_code, 10 bits */
	uint8_t opcode;
	uint32_t rsp_msn;	/* 24 bits */
	uint32_t rsp_psn;	/* 24 bits */
};

static inline int mana_rdma_cqe_check(const struct mana_rdma_cqe *c)
{
	bool recv = mana_rdma_cqe_type_is_recv(c->type);
	bool err = c->type == MANA_RDMA_CQE_ERROR;
	bool armed = c->type == MANA_RDMA_CQE_ARMED_CMPL;

	if (mana_rdma_cqe_type_is_send(c->type))
		return c->msg_len || c->psn || c->imm || c->rx_wqe_offset ||
		       c->msn || c->syndrome || c->vendor_error || c->opcode ||
		       c->rsp_msn || c->rsp_psn ? -EINVAL : 0;
	if ((!recv && !err && !armed) || c->psn > MANA_PSN_MASK ||
	    c->msn > MANA_PSN_MASK || c->rsp_msn > MANA_PSN_MASK ||
	    c->rsp_psn > MANA_PSN_MASK)
		return -EINVAL;
	if (recv)
		return c->msn || c->syndrome || c->vendor_error || c->opcode ||
		       c->rsp_msn || c->rsp_psn ||
		       c->rx_wqe_offset % GDMA_WQE_BU_SIZE ||
		       (c->type == MANA_RDMA_CQE_RC_SEND && c->imm) ?
		       -EINVAL : 0;
	if (c->msg_len || c->imm || c->rx_wqe_offset)
		return -EINVAL;
	if (armed)
		return c->vendor_error || c->opcode || c->rsp_msn ||
		       c->rsp_psn ? -EINVAL : 0;
	return !c->vendor_error || c->vendor_error > 0x3FF ? -EINVAL : 0;
}

/* Writes the 60 bytes of CQE data. */
static inline int mana_rdma_cqe_encode(const struct mana_rdma_cqe *c,
				       void *wire)
{
	uint8_t *b = wire;

	if (mana_rdma_cqe_check(c))
		return -EINVAL;
	memset(b, 0, GDMA_CQE_DATA_SIZE);
	gdma_put_le32(b, (uint32_t)c->type | (uint32_t)c->vendor_error << 8);
	if (mana_rdma_cqe_type_is_send(c->type))
		return 0;
	if (mana_rdma_cqe_type_is_recv(c->type)) {
		gdma_put_le32(b + 4, c->msg_len);
		gdma_put_le32(b + 8, c->psn);
		gdma_put_le32(b + 12, c->imm);
		gdma_put_le32(b + 16, c->rx_wqe_offset);
		return 0;
	}
	gdma_put_le32(b + 4, c->msn | (uint32_t)c->syndrome << 24);
	gdma_put_le32(b + 8, c->psn | (uint32_t)c->opcode << 24);
	gdma_put_le32(b + 12, c->rsp_msn);
	gdma_put_le32(b + 16, c->rsp_psn);
	return 0;
}

static inline int mana_rdma_cqe_decode(const void *wire,
				       struct mana_rdma_cqe *out)
{
	const uint8_t *b = wire;
	uint32_t dw0 = gdma_get_le32(b), dw1 = gdma_get_le32(b + 4);
	uint32_t dw2 = gdma_get_le32(b + 8), dw3 = gdma_get_le32(b + 12);
	uint32_t dw4 = gdma_get_le32(b + 16);
	struct mana_rdma_cqe c = { .type = (uint8_t)dw0 };
	uint64_t rest = 0, v;
	unsigned int i;

	/* bytes 20-59 belong to no RC layout (five 8-byte words) */
	for (i = 20; i < GDMA_CQE_DATA_SIZE; i += 8) {
		memcpy(&v, b + i, sizeof(v));
		rest |= v;
	}
	if (rest)
		return -EINVAL;
	if (mana_rdma_cqe_type_is_send(c.type)) {
		if (dw0 >> 8 || dw1 || dw2 || dw3 || dw4)
			return -EINVAL;
	} else if (mana_rdma_cqe_type_is_recv(c.type)) {
		if (dw0 >> 8 || dw2 >> 24)
			return -EINVAL;
		c.msg_len = dw1;
		c.psn = dw2;
		c.imm = dw3;
		c.rx_wqe_offset = dw4;
	} else if (c.type == MANA_RDMA_CQE_ARMED_CMPL ||
		   c.type == MANA_RDMA_CQE_ERROR) {
		/* dw0 18-31 reserved (ARMED_CMPL: 8-31); dw3, dw4 24-31 */
		if (dw0 >> 18 || dw3 >> 24 || dw4 >> 24)
			return -EINVAL;
		c.vendor_error = (uint16_t)gdma_bits(dw0, 8, 10);
		c.msn = dw1 & MANA_PSN_MASK;
		c.syndrome = (uint8_t)(dw1 >> 24);
		c.psn = dw2 & MANA_PSN_MASK;
		c.opcode = (uint8_t)(dw2 >> 24);
		c.rsp_msn = dw3;
		c.rsp_psn = dw4;
	} else {
		return -EINVAL;
	}
	if (mana_rdma_cqe_check(&c))
		return -EINVAL;
	*out = c;
	return 0;
}

/* ------------------------------------------------------------------------ */
/*
 * Vendor error codes of RDMA error CQEs (rdma-core v64 enum mana_error_code;
 * values exact, names shortened).  The hardware field is 10 bits; SW_FLUSHED
 * is the provider's own code for flushed WRs and never on the wire.  The
 * ibv_wc_status each maps to is in rc_err.h.
 */
#define MANA_VENDOR_ERRORS(X)						\
	X(OK, 0x000)							\
	X(RX_OP_REQ, 0x003)						\
	X(RX_PKT_LEN, 0x005)						\
	X(RX_ATB_RKEY_MISCONFIG_ERR, 0x043)				\
	X(RX_ATB_RKEY_ADDR_RIGHT, 0x083)				\
	X(RX_ATB_RKEY_ADDR_RANGE, 0x0c3)				\
	X(RX_MSG_LEN_OVFL, 0x102)					\
	X(RX_MISBEHAVING_CLIENT, 0x108)					\
	X(RX_MALFORMED_WQE, 0x109)					\
	X(RX_CLIENT_ID, 0x10a)						\
	X(RX_GFID, 0x10b)						\
	X(RX_PCIE, 0x10c)						\
	X(RX_READRESP_LEN_MISMATCH, 0x10f)				\
	X(RX_NO_AVAIL_WQE, 0x111)					\
	X(RX_ATB_SGE_MISSCONFIG, 0x143)					\
	X(RX_ATB_WQE_MISCONFIG, 0x145)					\
	X(RX_INVALID_REQ_NAK, 0x161)					\
	X(RX_REMOTE_ACCESS_NAK, 0x162)					\
	X(RX_REMOTE_OP_ERR_NAK, 0x163)					\
	X(RX_RNR_NAK, 0x164)						\
	X(RX_ATB_SGE_ADDR_RIGHT, 0x183)					\
	X(RX_ATB_WQE_ADDR_RIGHT, 0x185)					\
	X(RX_ATB_SGE_ADDR_RANGE, 0x1c3)					\
	X(RX_ATB_WQE_ADDR_RANGE, 0x1c5)					\
	X(TX_RETRY_LIMIT_EXCEEDED, 0x1c6)				\
	X(RX_NOT_EMPTY_ON_DISABLE, 0x1c7)				\
	X(TX_GDMA_CORRUPTED_WQE, 0x201)					\
	X(TX_ATB_WQE_ACCESS_VIOLATION, 0x202)				\
	X(TX_ATB_WQE_ADDR_RANGE, 0x203)					\
	X(TX_ATB_WQE_CONFIG_ERR, 0x204)					\
	X(TX_PCIE_WQE, 0x205)						\
	X(TX_ATB_MSG_ACCESS_VIOLATION, 0x206)				\
	X(TX_ATB_MSG_ADDR_RANGE, 0x207)					\
	X(TX_ATB_MSG_CONFIG_ERR, 0x208)					\
	X(TX_PCIE_MSG, 0x209)						\
	X(TX_GDMA_INVALID_STATE, 0x20a)					\
	X(TX_MISBEHAVING_CLIENT, 0x20b)					\
	X(TX_RDMA_MALFORMED_WQE_SIZE, 0x210)				\
	X(TX_RDMA_MALFORMED_WQE_FIELD, 0x211)				\
	X(TX_RDMA_INVALID_STATE, 0x212)					\
	X(TX_RDMA_INVALID_NPT, 0x213)					\
	X(TX_RDMA_INVALID_SGID, 0x214)					\
	X(TX_RDMA_WQE_UNSUPPORTED, 0x215)				\
	X(TX_RDMA_WQE_LEN_ERR, 0x216)					\
	X(TX_RDMA_MTU_ERR, 0x217)					\
	X(TX_RDMA_VFID_MISMATCH, 0x218)					\
	X(TX_RDMA_ATB_CMD_MISS, 0x220)					\
	X(TX_RDMA_ATB_CMD_IDX_ERROR, 0x221)				\
	X(TX_RDMA_ATB_CMD_TAG_MISMATCH_ERROR, 0x222)			\
	X(TX_RDMA_ATB_CMD_PDID_MISMATCH_ERROR, 0x223)			\
	X(TX_RDMA_ATB_CMD_AR_ERROR, 0x224)				\
	X(TX_RDMA_ATB_CMD_PT_OVF, 0x225)				\
	X(TX_RDMA_ATB_CMD_PT_LENGTH_MISMATCH, 0x226)			\
	X(TX_RDMA_ATB_CMD_ILLEGAL_CMD, 0x227)				\
	X(HW_MAX, 0x3ff)						\
	X(SW_FLUSHED, 0xfff)

#define MANA_VENDOR_ERR_ENUM(name, value)	MANA_VERR_##name = value,
enum mana_error_code {
	MANA_VENDOR_ERRORS(MANA_VENDOR_ERR_ENUM)
};
#undef MANA_VENDOR_ERR_ENUM

#define MANA_VERR_HW_FIELD_MAX	0x3FFU	/* error CQE vendor_error: 10 bits */

/* Name of a vendor error for logs; NULL for a code not in the list. */
static inline const char *mana_vendor_err_name(uint32_t code)
{
#define MANA_VENDOR_ERR_CASE(name, value)	case value: return #name;
	switch (code) {
	MANA_VENDOR_ERRORS(MANA_VENDOR_ERR_CASE)
	}
#undef MANA_VENDOR_ERR_CASE
	return NULL;
}

/* ------------------------------------------------------------------------ */
/*
 * Fast-path views of the same formats, for the provider's per-packet code:
 * whole little-endian words and bit positions instead of decoded structs.
 * Templates built once with the validating encoders above are OR-ed with
 * these bits; test_gdma_wire pins every constant against the encoders and
 * decoders so the two views cannot drift apart.
 */
static inline uint32_t gdma_ld32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline uint64_t gdma_ld64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static inline void gdma_st32(void *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void gdma_st64(void *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

/* WQE header as one u64: num_sge in bits 32-39. */
#define GDMA_WQE_HDR_NUM_SGE_SHIFT	32

/* Short TX OOB as one u64 (dword 0 low, dword 1 high). */
#define MANA_TXOOB_IPV4			(1ULL << 2)
#define MANA_TXOOB_IPV6			(1ULL << 3)
#define MANA_TXOOB_IP_CSUM		(1ULL << 4)
#define MANA_TXOOB_TCP_CSUM		(1ULL << 5)
#define MANA_TXOOB_UDP_CSUM		(1ULL << 6)
#define MANA_TXOOB_SUPPRESS_CQE		(1ULL << 7)
#define MANA_TXOOB_TRANS_OFF_SHIFT	32
#define MANA_TXOOB_TRANS_OFF_MAX	0x3FFu

/* CQE: type in the low 6 bits of byte 0; owner in the top 3 of byte 63. */
#define MANA_CQE_TYPE_MASK		0x3Fu
#define GDMA_CQE_OWNER_SHIFT		5	/* within byte 63 */

/* RX completion OOB */
#define MANA_RXCOMP_FLAGS_OFF		4
#define MANA_RXCOMP_PPI_OFF		8
#define MANA_RXCOMP_PPI_STRIDE		12
#define MANA_RXCOMP_PPI_HASH_OFF	8	/* within a slot (4-packet layout) */
#define MANA_RXCOMP_WQE_OFFSET_OFF	56
#define MANA_RXFL_VLAN_ID_MASK		0xFFFu
#define MANA_RXFL_VLAN_PRESENT		(1U << 12)
#define MANA_RXFL_IP_OK			(1U << 25)
#define MANA_RXFL_IP_FAIL		(1U << 26)
#define MANA_RXFL_TCP_OK		(1U << 27)
#define MANA_RXFL_TCP_FAIL		(1U << 28)
#define MANA_RXFL_UDP_OK		(1U << 29)
#define MANA_RXFL_UDP_FAIL		(1U << 30)

/* TX completion OOB: tx_wqe_offset in bits 5-31 of the dword at 8. */
#define MANA_TXCOMP_WQE_DW_OFF		8
#define MANA_TXCOMP_WQE_SHIFT		5

static inline uint8_t mana_cqe_fast_type(const void *cqe)
{
	return ((const uint8_t *)cqe)[0] & MANA_CQE_TYPE_MASK;
}

static inline uint16_t mana_rx_fast_len(const void *cqe, unsigned int i)
{
	const uint8_t *s = (const uint8_t *)cqe + MANA_RXCOMP_PPI_OFF +
			   MANA_RXCOMP_PPI_STRIDE * i;

	return (uint16_t)(s[0] | s[1] << 8);
}

#endif /* MANA_GDMA_H */
