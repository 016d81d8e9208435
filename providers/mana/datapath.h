/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the three halves of the verbs datapath share: send.c (ibv_post_send,
 * ibv_wr_*), recv.c (ibv_post_wq_recv) and poll.c (ibv_poll_cq, extended
 * CQs, arming, the fatal flush).
 *
 * Rings are counted in 32-byte basic units (BU).  A WQE's info (WR id and
 * size) is filed under the unit it starts at, so every index is a mask of
 * a free-running counter; WRs are counted besides (see struct mana_cursor).
 */
#ifndef MANA_DATAPATH_H
#define MANA_DATAPATH_H

#include "mana.h"
#include "gdma.h"

#define mana_likely(x) __builtin_expect(!!(x), 1)
#define mana_unlikely(x) __builtin_expect(!!(x), 0)

/* Flags every send path accepts; SOLICITED and FENCE mean nothing here. */
#define MANA_SEND_FLAGS (IBV_SEND_SIGNALED | IBV_SEND_INLINE | \
			 IBV_SEND_IP_CSUM | IBV_SEND_SOLICITED | IBV_SEND_FENCE)
/* Flags the one-SGE fast paths handle themselves. */
#define MANA_SEND_FAST_FLAGS (IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | \
			      IBV_SEND_FENCE)

/* Units of a WQE: header, 8-byte OOB, @nsge SGEs. */
static inline uint32_t mana_wqe_units(uint32_t nsge)
{
	return (GDMA_WQE_HDR_SIZE + GDMA_OOB_SMALL + GDMA_SGE_SIZE * nsge +
		GDMA_WQE_BU_SIZE - 1) / GDMA_WQE_BU_SIZE;
}

static inline uint64_t mana_wqe_hdr(uint64_t hdr_template, uint32_t nsge)
{
	return hdr_template | (uint64_t)nsge << GDMA_WQE_HDR_NUM_SGE_SHIFT;
}

static inline void mana_put_sge(uint8_t *p, uint64_t addr, uint32_t lkey,
				uint32_t len)
{
	gdma_st64(p, addr);
	gdma_st64(p + 8, (uint64_t)lkey | (uint64_t)len << 32);
}

/* A WQE of one SGE at ring byte @off: one basic unit, never wrapping. */
static inline void mana_put_wqe1(uint8_t *ring, uint32_t off, uint64_t hdr,
				 uint64_t oob, uint64_t addr, uint32_t lkey,
				 uint32_t len)
{
	gdma_st64(ring + off, hdr);
	gdma_st64(ring + off + 8, oob);
	mana_put_sge(ring + off + 16, addr, lkey, len);
}

/*
 * A WQE of @n SGEs at ring byte @off (masked): header and OOB are 16 bytes
 * at a unit boundary and never wrap, each SGE wraps on its own.
 */
static inline void mana_put_wqe(uint8_t *ring, uint32_t ring_mask, uint32_t off,
				uint64_t hdr, uint64_t oob,
				const struct ibv_sge *sg, uint32_t n)
{
	uint32_t i;

	gdma_st64(ring + off, hdr);
	gdma_st64(ring + off + 8, oob);
	for (i = 0; i < n; i++)
		mana_put_sge(ring + ((off + 16 + i * GDMA_SGE_SIZE) & ring_mask),
			     sg[i].addr, sg[i].lkey, sg[i].length);
}

_Static_assert(sizeof(struct mana_wqe_info) == GDMA_WQE_BU_SIZE,
	       "WQE info mirrors the ring unit for unit");

/* The info of the WQE at ring byte offset @off (already masked). */
static inline struct mana_wqe_info *mana_wqe_info_at(struct mana_wqe_info *wqes,
						     uint32_t off)
{
	return (struct mana_wqe_info *)((uint8_t *)wqes + off);
}

static inline uint32_t mana_ring_off(uint32_t bu, uint32_t ring_mask)
{
	return (bu * GDMA_WQE_BU_SIZE) & ring_mask;
}

/* File the WR id and size of the WQE at ring byte @off. */
static inline void mana_file_wqe(struct mana_wqe_info *wqes, uint32_t off,
				 uint32_t size, uint64_t wr_id)
{
	struct mana_wqe_info *e = mana_wqe_info_at(wqes, off);

	e->wr_id = wr_id;
	e->size_bu = size;
}

/* Indexes written under one lock and read under another. */
static inline uint32_t mana_load_index(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void mana_store_index(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline void mana_ring_doorbell(void *db_page, uint32_t offset,
				      uint64_t value)
{
	/* WQEs and CQ consumption must be visible before the device looks */
	atomic_thread_fence(memory_order_release);
	/*
	 * A register, not memory: threads ring it for their own queues at
	 * once.  An atomic store says so (a plain MOV all the same).
	 */
	__atomic_store_n((volatile uint64_t *)((uint8_t *)db_page + offset), value,
			 __ATOMIC_RELAXED);
}

static inline bool mana_ctx_fatal(struct ibv_context *ibctx)
{
	return atomic_load_explicit(&to_mctx(ibctx)->fatal, memory_order_relaxed);
}

/* EIO, with one log line per context. */
int mana_fatal_error(struct ibv_context *ibctx);

uint32_t mana_roundup_pow2(uint32_t v);

int mana_ring_init(struct mana_ring *r, size_t bytes, uint32_t max_wr,
		   uint32_t max_sge, enum gdma_queue_type qt);
void mana_ring_fini(struct mana_ring *r);

/* A post starts where the ring's head is, with room for @max_wr WRs. */
static inline void mana_cursor_start(const struct mana_ring *r, uint32_t max_wr,
				     struct mana_cursor *c)
{
	c->head = r->head_bu;
	c->delta = r->head_bu - r->posted;
	c->limit = mana_load_index(&r->retired) + max_wr + c->delta;
}

/* A WQE of @size units went in at the cursor: one WR, whatever its size. */
static inline void mana_cursor_advance(struct mana_cursor *c, uint32_t size)
{
	c->head += size;
	c->delta += size - 1;
	c->limit += size - 1;
}

/* The WRs before the cursor are the poller's to see (before the doorbell). */
static inline void mana_ring_publish(struct mana_ring *r,
				     const struct mana_cursor *c)
{
	r->head_bu = c->head;
	mana_store_index(&r->posted, c->head - c->delta);
}

/* Nothing posted awaits completion (read by the poller). */
static inline bool mana_ring_idle(struct mana_ring *r)
{
	return r->retired == mana_load_index(&r->posted);
}

/* RQ: file the WR id of WR number @n. */
static inline void mana_file_wr(struct mana_ring *r, uint32_t n, uint64_t wr_id)
{
	r->wr_ids[n & r->wr_mask] = wr_id;
}

/*
 * RQ: the oldest outstanding WR, number @retired, completes: its WR id,
 * read before the slot is handed back to the poster.
 */
static inline uint64_t mana_ring_retire_nth(struct mana_ring *r, uint32_t retired)
{
	uint64_t wr_id = r->wr_ids[retired & r->wr_mask];

	mana_store_index(&r->retired, retired + 1);
	return wr_id;
}

static inline uint64_t mana_ring_retire(struct mana_ring *r)
{
	return mana_ring_retire_nth(r, r->retired);
}

#endif /* MANA_DATAPATH_H */
