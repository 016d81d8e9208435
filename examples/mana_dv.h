/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A minimal MANA direct datapath over manadv, as an application (DPDK's
 * net/mana, mana-pktgen, the benchmarks) writes it: WQEs into the rings,
 * doorbells into the shared page, CQEs read by owner bits.
 *
 * Encoding rules come from providers/mana/gdma.h.  Each queue keeps a WQE
 * header and TX OOB built once with the validating encoders; per packet
 * only the SGE and a few flag bits are written.
 */
#ifndef MANA_EXAMPLES_DV_H
#define MANA_EXAMPLES_DV_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <infiniband/manadv.h>

#include "providers/mana/gdma.h"

/*
 * Doorbells are the expensive part of a datapath (an uncached MMIO write
 * on hardware, a trapped store under mana-emu): ring each queue at most
 * once per burst of this many WQEs or CQEs.
 */
#define MANA_DV_DB_BATCH 32

/*
 * A completion queue: the consumer index starts at count (owner lap 1);
 * @rung is the index last reported with a CQ doorbell.
 */
struct mana_dv_cq {
	struct manadv_cq dv;
	uint32_t head, rung;
};

/*
 * Queues whose WQEs all have one SGE and the short OOB: 32 bytes, one
 * basic unit each, so the producer index in units is the WQE count.
 */
struct mana_dv_sq {
	struct manadv_qp dv;
	uint32_t posted, completed, cap;
	uint64_t hdr, oob;		/* templates: 1 SGE, short OOB */
};

struct mana_dv_rq {
	struct manadv_rwq dv;
	uint32_t posted, consumed, cap;
	uint64_t hdr;
};

static inline uint32_t mana_dv_min(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static inline int mana_dv_cq_init(struct mana_dv_cq *cq, struct ibv_cq *ibcq)
{
	struct manadv_obj obj = { .cq = { .in = ibcq, .out = &cq->dv } };
	int ret = manadv_init_obj(&obj, MANADV_OBJ_CQ);

	cq->head = cq->rung = cq->dv.count;
	return ret;
}

static inline int mana_dv_sq_init(struct mana_dv_sq *sq, struct ibv_qp *qp,
				  const struct mana_dv_cq *cq)
{
	struct manadv_obj obj = { .qp = { .in = qp, .out = &sq->dv } };
	struct gdma_wqe_header h = { .num_sge = 1, .oob_size = GDMA_OOB_SMALL };
	uint8_t w[GDMA_OOB_LARGE];	/* the encoder may write the long form */
	int ret = manadv_init_obj(&obj, MANADV_OBJ_QP);
	struct mana_tx_oob oob = {
		.pkt_fmt = MANA_SHORT_PKT_FMT,
		.vcq_num = cq->dv.cq_id,
		.vsq_frame = mana_tx_vsq_frame(sq->dv.sq_id),
		.short_vp_offset = sq->dv.tx_vp_offset,
	};

	if (ret)
		return ret;
	if (gdma_wqe_header_encode(&h, GDMA_SQ, w))
		return EINVAL;
	sq->hdr = gdma_ld64(w);
	if (mana_tx_oob_encode(&oob, w))
		return EINVAL;
	sq->oob = gdma_ld64(w);
	sq->posted = sq->completed = 0;
	sq->cap = mana_dv_min(sq->dv.sq_count, sq->dv.sq_size / GDMA_WQE_BU_SIZE);
	return 0;
}

static inline int mana_dv_rq_init(struct mana_dv_rq *rq, struct ibv_wq *wq)
{
	struct manadv_obj obj = { .rwq = { .in = wq, .out = &rq->dv } };
	struct gdma_wqe_header h = { .num_sge = 1, .oob_size = GDMA_OOB_SMALL };
	uint8_t w[GDMA_WQE_HDR_SIZE];
	int ret = manadv_init_obj(&obj, MANADV_OBJ_RWQ);

	if (ret)
		return ret;
	if (gdma_wqe_header_encode(&h, GDMA_RQ, w))
		return EINVAL;
	rq->hdr = gdma_ld64(w);
	rq->posted = rq->consumed = 0;
	rq->cap = mana_dv_min(rq->dv.count, rq->dv.size / GDMA_WQE_BU_SIZE);
	return 0;
}

/* Everything written to the rings must be visible before the doorbell. */
static inline void mana_dv_ring(void *db_page, uint32_t offset, uint64_t v)
{
	atomic_thread_fence(memory_order_release);
	*(volatile uint64_t *)((uint8_t *)db_page + offset) = v;
}

static inline void mana_dv_sq_ring(struct mana_dv_sq *sq)
{
	mana_dv_ring(sq->dv.db_page, GDMA_DB_OFF_SQ,
		     sq->dv.sq_id | (uint64_t)gdma_wq_db_tail(sq->posted) << 32);
}

/* wqe_cnt stays 0 as the hardware specification asks for receive queues */
static inline void mana_dv_rq_ring(struct mana_dv_rq *rq)
{
	mana_dv_ring(rq->dv.db_page, GDMA_DB_OFF_RQ,
		     rq->dv.wq_id | (uint64_t)gdma_wq_db_tail(rq->posted) << 32);
}

/* Report the consumer index (no interrupt); needed at least every 8 laps. */
static inline void mana_dv_cq_ring(struct mana_dv_cq *cq, void *db_page, bool arm)
{
	mana_dv_ring(db_page, GDMA_DB_OFF_CQ,
		     cq->dv.cq_id | (uint64_t)gdma_cq_db_tail(cq->head, cq->dv.count) << 32 |
		     (uint64_t)arm << 63);
	cq->rung = cq->head;
}

/*
 * After polling: report the consumer index only once a burst's worth of
 * CQEs (at most a quarter of the ring) was consumed since the last report,
 * so the device hears of progress well within a lap without a doorbell per
 * poll.
 */
static inline void mana_dv_cq_consumed(struct mana_dv_cq *cq, void *db_page)
{
	uint32_t every = mana_dv_min(MANA_DV_DB_BATCH, cq->dv.count / 4);

	if (cq->head - cq->rung >= (every ? every : 1))
		mana_dv_cq_ring(cq, db_page, false);
}

static inline bool mana_dv_sq_full(const struct mana_dv_sq *sq)
{
	return sq->posted - sq->completed >= sq->cap;
}

/*
 * Post one frame (1 SGE).  @oob_bits: MANA_TXOOB_* checksum/format bits,
 * MANA_TXOOB_SUPPRESS_CQE for no completion.  false when the SQ is full.
 */
static inline bool mana_dv_sq_post(struct mana_dv_sq *sq, uint64_t addr,
				   uint32_t lkey, uint32_t len, uint64_t oob_bits)
{
	uint8_t *wqe;

	if (mana_dv_sq_full(sq))
		return false;
	wqe = (uint8_t *)sq->dv.sq_buf +
	      gdma_wqe_ring_offset(sq->posted, sq->dv.sq_size);
	gdma_st64(wqe, sq->hdr);
	gdma_st64(wqe + 8, sq->oob | oob_bits);
	gdma_st64(wqe + 16, addr);
	gdma_st64(wqe + 24, (uint64_t)lkey | (uint64_t)len << 32);
	sq->posted++;
	return true;
}

/*
 * Receive WQEs given back per RQ doorbell: a burst, or a quarter of the
 * ring if that is smaller.  Up to this many minus one buffers may sit
 * unposted, so a sender that must not overrun the RQ keeps at most
 * cap - mana_dv_rq_batch() + 1 frames in flight.
 */
static inline uint32_t mana_dv_rq_batch(const struct mana_dv_rq *rq)
{
	uint32_t b = mana_dv_min(MANA_DV_DB_BATCH, rq->cap / 4);

	return b ? b : 1;
}

/* Room for at least a batch of receive WQEs: time to refill and ring. */
static inline bool mana_dv_rq_want_refill(const struct mana_dv_rq *rq)
{
	return rq->cap - (rq->posted - rq->consumed) >= mana_dv_rq_batch(rq);
}

static inline bool mana_dv_rq_post(struct mana_dv_rq *rq, uint64_t addr,
				   uint32_t lkey, uint32_t len)
{
	uint8_t *wqe;

	if (rq->posted - rq->consumed >= rq->cap)
		return false;
	wqe = (uint8_t *)rq->dv.buf + gdma_wqe_ring_offset(rq->posted, rq->dv.size);
	gdma_st64(wqe, rq->hdr);
	gdma_st64(wqe + 8, 0);
	gdma_st64(wqe + 16, addr);
	gdma_st64(wqe + 24, (uint64_t)lkey | (uint64_t)len << 32);
	rq->posted++;
	return true;
}

/*
 * The next CQE, or NULL.  The device writes the owner bits last: check
 * them, then read the rest after an acquire fence.
 */
static inline const uint8_t *mana_dv_cq_next(struct mana_dv_cq *cq, bool *overflow)
{
	const uint8_t *cqe = (const uint8_t *)cq->dv.buf +
			     gdma_queue_slot(cq->head, cq->dv.count) * GDMA_CQE_SIZE;
	enum gdma_cqe_state st;

	st = gdma_cqe_state(gdma_cqe_owner(cqe), cq->head, cq->dv.count);
	if (st == GDMA_CQE_OVERFLOW)
		*overflow = true;
	if (st != GDMA_CQE_VALID)
		return NULL;
	atomic_thread_fence(memory_order_acquire);
	cq->head++;
	return cqe;
}

#endif
