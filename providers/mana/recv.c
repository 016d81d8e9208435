// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The receive half of the verbs datapath: ibv_post_wq_recv on the WQs of
 * an RSS QP.  One lock and at most one doorbell per call; a one-SGE WR is
 * four stores into the ring and its WR id filed under its WR number.
 */
#include <stdlib.h>

#include "datapath.h"

int mana_rq_init(struct mana_context *ctx, struct mana_wq *wq)
{
	int ret = mana_ring_init(&wq->ring, wq->buf.size, wq->max_wr,
				 wq->max_sge, GDMA_RQ);

	if (ret)
		return ret;
	wq->ring.db_page = NULL;	/* mapped on first post: manadv users never post */
	wq->ibv_wq.post_recv = mana_post_wq_recv;
	return 0;
}

void mana_rq_fini(struct mana_wq *wq)
{
	mana_ring_fini(&wq->ring);
}

/* A WR of several SGEs (or a bad one): the general path. */
static int rq_put(struct mana_wq *wq, struct mana_cursor *c,
		  const struct ibv_recv_wr *wr)
{
	uint32_t size, off;

	if (wr->num_sge <= 0 || (uint32_t)wr->num_sge > wq->max_sge) {
		mana_err(wq->ibv_wq.context, "%d SGEs, the WQ takes 1..%u",
			 wr->num_sge, wq->max_sge);
		return EINVAL;
	}
	if (c->head == c->limit)
		return ENOMEM;
	size = mana_wqe_units(wr->num_sge);
	off = mana_ring_off(c->head, wq->ring.mask);
	/* the RX OOB is unused: zero */
	mana_put_wqe(wq->buf.addr, wq->ring.mask, off,
		     mana_wqe_hdr(wq->ring.hdr_template, wr->num_sge), 0,
		     wr->sg_list, wr->num_sge);
	mana_file_wr(&wq->ring, c->head - c->delta, wr->wr_id);
	mana_cursor_advance(c, size);
	return 0;
}

static int post_check(struct mana_wq *wq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	if (!wr) {
		if (bad_wr)
			*bad_wr = NULL;
		return EINVAL;
	}
	if (mana_ctx_fatal(wq->ibv_wq.context)) {
		*bad_wr = wr;
		return mana_fatal_error(wq->ibv_wq.context);
	}
	if (!wq->ring.db_page) {
		wq->ring.db_page = mana_get_db_page(to_mctx(wq->ibv_wq.context));
		if (!wq->ring.db_page) {
			*bad_wr = wr;
			return EIO;
		}
	}
	return 0;
}

int mana_post_wq_recv(struct ibv_wq *ibwq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	struct mana_wq *wq = to_mwq(ibwq);
	uint64_t *wr_ids = wq->ring.wr_ids;
	uint32_t ring_mask = wq->ring.mask;
	uint32_t wr_mask = wq->ring.wr_mask, num, num_limit;
	uint8_t *ring = wq->buf.addr, *ring_end = ring + ring_mask + 1, *wqe;
	uint64_t hdr1 = wq->ring.hdr1;
	struct mana_cursor c;
	int ret;

	ret = post_check(wq, wr, bad_wr);
	if (ret)
		return ret;

	mana_spin_lock(&wq->ring.lock);
	mana_cursor_start(&wq->ring, wq->limit, &c);
	/*
	 * In registers: the WR number at head, the one that may not be
	 * posted (head - num and limit - num stay delta: the fast path only
	 * adds one-unit WQEs) and where head is in the ring.
	 */
	num = c.head - c.delta;
	num_limit = c.limit - c.delta;
	wqe = ring + mana_ring_off(c.head, ring_mask);
	for (; wr; wr = wr->next) {
		if (mana_likely(wr->num_sge == 1 && num != num_limit)) {
			const struct ibv_sge *sg = wr->sg_list;

			mana_put_wqe1(wqe, 0, hdr1, 0, sg->addr, sg->lkey, sg->length);
			wr_ids[num++ & wr_mask] = wr->wr_id;
			wqe += GDMA_WQE_BU_SIZE;
			if (mana_unlikely(wqe == ring_end))
				wqe = ring;
			continue;
		}
		c.head = num + c.delta;
		ret = rq_put(wq, &c, wr);
		num = c.head - c.delta;
		num_limit = c.limit - c.delta;
		wqe = ring + mana_ring_off(c.head, ring_mask);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	c.head = num + c.delta;
	/* one doorbell for every WQE that made it, none for the rest */
	if (c.head != wq->ring.head_bu) {
		mana_ring_publish(&wq->ring, &c);
		mana_ring_doorbell(wq->ring.db_page, GDMA_DB_OFF_RQ,
				   (uint64_t)wq->wqid |
				   (uint64_t)(c.head * GDMA_WQE_BU_SIZE) << 32);
	}
	mana_spin_unlock(&wq->ring.lock);
	return ret;
}
