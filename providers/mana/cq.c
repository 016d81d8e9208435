// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues.  For raw packet queues the kernel creates the hardware
 * CQ together with the SQ or RQ that uses it, so cq_id is only known once a
 * QP binds the CQ.
 */
#include <stdlib.h>
#include <string.h>

#include "mana.h"

MANA_DECLARE_DRV_CMD(mana_create_cq, ibv_create_cq, ib_uverbs_create_cq_resp,
		     mana_ib_create_cq, mana_ib_create_cq_resp);

struct ibv_cq *mana_create_cq(struct ibv_context *context, int cqe,
			      struct ibv_comp_channel *channel, int comp_vector)
{
	struct mana_context *ctx = to_mctx(context);
	struct mana_create_cq_resp resp;
	struct mana_create_cq cmd;
	struct mana_caps caps;
	struct mana_cq *cq;
	int ret;

	ret = mana_get_caps(ctx, &caps);
	if (ret) {
		errno = ret;
		return NULL;
	}
	if (cqe <= 0 || (uint32_t)cqe > caps.max_cqe) {
		mana_err(context, "cqe %d out of range 1..%u", cqe, caps.max_cqe);
		errno = EINVAL;
		return NULL;
	}
	if (comp_vector < 0 || comp_vector >= context->num_comp_vectors) {
		mana_err(context, "comp_vector %d out of range 0..%d",
			 comp_vector, context->num_comp_vectors - 1);
		errno = EINVAL;
		return NULL;
	}

	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	cq->count = cqe;
	cq->cqid = UINT32_MAX;

	ret = mana_alloc_buf(ctx, NULL,
			     mana_queue_size((uint64_t)cqe * MANA_CQE_SIZE),
			     MANADV_RES_TYPE_CQ, &cq->buf);
	if (ret)
		goto err_free;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	cmd.drv.buf_addr = (uintptr_t)cq->buf.addr;
	/* Kernels that do not return a CQ id leave this untouched. */
	resp.drv.cqid = UINT32_MAX;
	ret = ibv_cmd_create_cq(context, cqe, channel, comp_vector,
				&cq->vcq.cq, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret) {
		mana_err(context, "CREATE_CQ failed: %s", strerror(ret));
		goto err_buf;
	}
	cq->cqid = resp.drv.cqid;
	return &cq->vcq.cq;

err_buf:
	mana_free_buf(&cq->buf);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

int mana_destroy_cq(struct ibv_cq *ibcq)
{
	struct mana_cq *cq = to_mcq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret) {
		mana_err(ibcq->context, "DESTROY_CQ failed: %s", strerror(ret));
		return ret;
	}
	mana_free_buf(&cq->buf);
	free(cq);
	return 0;
}

int mana_init_obj_cq(struct ibv_cq *ibcq, struct manadv_cq *out)
{
	struct mana_cq *cq;

	if (!ibcq || !out || !mana_is_mana_context(ibcq->context))
		return EINVAL;
	cq = to_mcq(ibcq);
	out->buf = cq->buf.addr;
	out->count = cq->count;
	out->cq_id = cq->cqid;
	return 0;
}
