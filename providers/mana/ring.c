// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the send and receive halves of the verbs datapath share: the ring
 * state of an SQ or RQ, and the device-fatal error.
 */
#include <stdlib.h>

#include "datapath.h"

uint32_t mana_roundup_pow2(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

int mana_fatal_error(struct ibv_context *ibctx)
{
	struct mana_context *ctx = to_mctx(ibctx);

	if (!atomic_flag_test_and_set(&ctx->fatal_logged))
		mana_err(ibctx, "device is in fatal state: close and reopen it");
	return EIO;
}

/*
 * A ring of @bytes for @max_wr WQEs of up to @max_sge SGEs.  The WQE header
 * template comes from the validating encoder; per WR only num_sge is added.
 */
int mana_ring_init(struct mana_ring *r, size_t bytes, uint32_t max_wr,
		   uint32_t max_sge, enum gdma_queue_type qt)
{
	struct gdma_wqe_header hdr = { .num_sge = 1, .oob_size = GDMA_OOB_SMALL };
	uint8_t wire[GDMA_WQE_HDR_SIZE];

	if (gdma_wqe_header_encode(&hdr, qt, wire))
		return EINVAL;
	r->hdr_template = gdma_ld64(wire) & ~(0xFFULL << GDMA_WQE_HDR_NUM_SGE_SHIFT);
	r->hdr1 = mana_wqe_hdr(r->hdr_template, 1);
	r->cap_bu = bytes / GDMA_WQE_BU_SIZE;
	r->mask = bytes - 1;
	/* counting WRs is enough only if max_wr of the largest WQEs fit */
	if ((uint64_t)max_wr * mana_wqe_units(max_sge) > r->cap_bu)
		return EINVAL;
	if (qt == GDMA_RQ) {
		r->wr_mask = mana_roundup_pow2(max_wr) - 1;
		r->wr_ids = calloc(r->wr_mask + 1, sizeof(*r->wr_ids));
		if (!r->wr_ids)
			return ENOMEM;
	} else {
		r->wqes = calloc(r->cap_bu, sizeof(*r->wqes));
		if (!r->wqes)
			return ENOMEM;
	}
	mana_spin_init(&r->lock);
	return 0;
}

void mana_ring_fini(struct mana_ring *r)
{
	free(r->wqes);
	r->wqes = NULL;
	free(r->wr_ids);
	r->wr_ids = NULL;
}
