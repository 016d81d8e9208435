// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive work queues and RSS indirection tables.  The kernel creates the
 * hardware RQ only when an RSS QP is built over the table, so wq_id and the
 * CQ's id come from the RSS QP response.
 */
#include <stdlib.h>
#include <string.h>

#include "mana.h"

MANA_DECLARE_DRV_CMD(mana_create_wq, ibv_create_wq, ib_uverbs_ex_create_wq_resp,
		     mana_ib_create_wq, mana_empty);

static int check_wq_attr(struct mana_context *ctx,
			 struct ibv_wq_init_attr *attr)
{
	struct ibv_context *ibctx = &ctx->ibv_ctx.context;
	struct mana_caps caps;
	int ret;

	if (attr->wq_type != IBV_WQT_RQ) {
		mana_err(ibctx, "WQ type %d is not supported (only RQ)",
			 attr->wq_type);
		return EOPNOTSUPP;
	}
	if (attr->comp_mask & ~(uint32_t)IBV_WQ_INIT_ATTR_FLAGS) {
		mana_err(ibctx, "unsupported WQ comp_mask 0x%x", attr->comp_mask);
		return EOPNOTSUPP;
	}
	if ((attr->comp_mask & IBV_WQ_INIT_ATTR_FLAGS) && attr->create_flags) {
		mana_err(ibctx, "unsupported WQ create flags 0x%x",
			 attr->create_flags);
		return EOPNOTSUPP;
	}
	if (!attr->pd || !attr->cq || attr->pd->context != ibctx ||
	    attr->cq->context != ibctx) {
		mana_err(ibctx, "WQ needs a PD and a CQ of this context");
		return EINVAL;
	}
	ret = mana_get_caps(ctx, &caps);
	if (ret)
		return ret;
	if (!attr->max_wr || attr->max_wr > caps.max_qp_wr) {
		mana_err(ibctx, "max_wr %u out of range 1..%u", attr->max_wr,
			 caps.max_qp_wr);
		return EINVAL;
	}
	if (!attr->max_sge || attr->max_sge > MANA_MAX_RX_SGE) {
		mana_err(ibctx, "max_sge %u out of range 1..%u", attr->max_sge,
			 MANA_MAX_RX_SGE);
		return EINVAL;
	}
	return 0;
}

struct ibv_wq *mana_create_wq(struct ibv_context *context,
			      struct ibv_wq_init_attr *attr)
{
	struct mana_context *ctx = to_mctx(context);
	struct mana_create_wq_resp resp;
	struct mana_create_wq cmd;
	struct mana_pd *pd;
	struct mana_wq *wq;
	size_t size;
	int ret;

	if (!attr) {
		errno = EINVAL;
		return NULL;
	}
	ret = check_wq_attr(ctx, attr);
	/* a WQ serves an RSS QP, a raw queue: its CQ must be an Ethernet one */
	if (!ret)
		ret = mana_cq_for_raw(to_mcq(attr->cq));
	if (ret) {
		errno = ret;
		return NULL;
	}

	wq = calloc(1, sizeof(*wq));
	if (!wq) {
		errno = ENOMEM;
		return NULL;
	}
	pd = to_mpd(attr->pd);
	wq->max_wr = attr->max_wr;
	/*
	 * A receive CQE completes one WR or more and the CQ serves this WQ
	 * alone: a shallower CQ bounds the receives outstanding (ENOMEM)
	 * rather than failing the create, as mana_ib does not.
	 */
	wq->limit = to_mcq(attr->cq)->count < attr->max_wr ?
		    to_mcq(attr->cq)->count : attr->max_wr;
	if (wq->limit < attr->max_wr)
		mana_dbg(context, "WQ CQ of %u entries: at most %u of max_wr %u receives outstanding",
			 wq->limit, wq->limit, attr->max_wr);
	wq->max_sge = attr->max_sge;
	wq->wqe_size = mana_rq_wqe_size(attr->max_sge);
	wq->wqid = UINT32_MAX;
	size = mana_queue_size((uint64_t)attr->max_wr * wq->wqe_size);
	ret = mana_alloc_buf(ctx, pd, size, MANADV_RES_TYPE_RQ, &wq->buf);
	if (ret)
		goto err_free;
	ret = mana_rq_init(ctx, wq);
	if (ret)
		goto err_buf;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	cmd.drv.wq_buf_addr = (uintptr_t)wq->buf.addr;
	cmd.drv.wq_buf_size = wq->buf.size;
	ret = ibv_cmd_create_wq(context, attr, &wq->ibv_wq, &cmd.ibv_cmd,
				sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret) {
		mana_err(context, "CREATE_WQ failed: %s", strerror(ret));
		goto err_rq;
	}
	/* ibv_cmd_create_wq does not touch post_recv; the inline wrapper calls it */
	wq->ibv_wq.post_recv = mana_post_wq_recv;
	/* report what the queue really holds */
	attr->max_wr = wq->max_wr;
	attr->max_sge = wq->max_sge;
	if (pd->protection_domain)
		atomic_fetch_add(&pd->refs, 1);
	return &wq->ibv_wq;

err_rq:
	mana_rq_fini(wq);
err_buf:
	mana_free_buf(&wq->buf);
err_free:
	free(wq);
	errno = ret;
	return NULL;
}

/*
 * mana_ib has no modify_wq.  A MANA RQ is ready as soon as it exists, so
 * the one transition portable code asks for, to RDY, is answered here.
 */
int mana_modify_wq(struct ibv_wq *ibwq, struct ibv_wq_attr *attr)
{
	const uint32_t known = IBV_WQ_ATTR_STATE | IBV_WQ_ATTR_CURR_STATE;

	if (!attr)
		return EINVAL;
	if (attr->attr_mask & ~known) {
		mana_err(ibwq->context, "unsupported WQ attributes 0x%x",
			 attr->attr_mask);
		return EOPNOTSUPP;
	}
	if ((attr->attr_mask & IBV_WQ_ATTR_CURR_STATE) &&
	    attr->curr_wq_state != ibwq->state) {
		mana_err(ibwq->context, "current WQ state is %d, not %d",
			 ibwq->state, attr->curr_wq_state);
		return EINVAL;
	}
	if (!(attr->attr_mask & IBV_WQ_ATTR_STATE))
		return 0;
	if (attr->wq_state != IBV_WQS_RDY) {
		mana_err(ibwq->context,
			 "WQ state %d is not supported: MANA RQs are always ready",
			 attr->wq_state);
		return EOPNOTSUPP;
	}
	ibwq->state = IBV_WQS_RDY;
	return 0;
}

int mana_destroy_wq(struct ibv_wq *ibwq)
{
	struct mana_wq *wq = to_mwq(ibwq);
	struct mana_pd *pd = to_mpd(ibwq->pd);
	int ret;

	if (atomic_load(&wq->ind_table_refs)) {
		mana_err(ibwq->context, "WQ is still in %d indirection table(s)",
			 atomic_load(&wq->ind_table_refs));
		return EBUSY;
	}
	ret = ibv_cmd_destroy_wq(ibwq);
	if (ret) {
		mana_err(ibwq->context, "DESTROY_WQ failed: %s", strerror(ret));
		return ret;
	}
	if (pd->protection_domain)
		atomic_fetch_sub(&pd->refs, 1);
	mana_rq_fini(wq);
	mana_free_buf(&wq->buf);
	free(wq);
	return 0;
}

struct ibv_rwq_ind_table *
mana_create_rwq_ind_table(struct ibv_context *context,
			  struct ibv_rwq_ind_table_init_attr *attr)
{
	struct ib_uverbs_ex_create_rwq_ind_table_resp resp;
	struct mana_rwq_ind_table *table;
	uint32_t i, size;
	int ret;

	if (!attr || !attr->ind_tbl) {
		mana_err(context, "indirection table without WQs");
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask) {
		mana_err(context, "unsupported comp_mask 0x%x", attr->comp_mask);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->log_ind_tbl_size > MANA_RSS_MAX_TABLE_LOG) {
		mana_err(context,
			 "indirection table of 2^%u entries, the device takes at most %u",
			 attr->log_ind_tbl_size, 1u << MANA_RSS_MAX_TABLE_LOG);
		errno = EINVAL;
		return NULL;
	}
	size = 1u << attr->log_ind_tbl_size;
	for (i = 0; i < size; i++) {
		if (!attr->ind_tbl[i] || attr->ind_tbl[i]->context != context) {
			mana_err(context, "entry %u is not a WQ of this context", i);
			errno = EINVAL;
			return NULL;
		}
	}

	table = calloc(1, sizeof(*table));
	if (!table)
		goto err_nomem;
	table->wqs = calloc(size, sizeof(*table->wqs));
	if (!table->wqs)
		goto err_nomem;
	table->size = size;

	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_rwq_ind_table(context, attr, &table->ibv_table,
					   &resp, sizeof(resp));
	if (ret) {
		mana_err(context, "CREATE_RWQ_IND_TBL failed: %s", strerror(ret));
		free(table->wqs);
		free(table);
		errno = ret;
		return NULL;
	}
	for (i = 0; i < size; i++) {
		table->wqs[i] = to_mwq(attr->ind_tbl[i]);
		atomic_fetch_add(&table->wqs[i]->ind_table_refs, 1);
	}
	return &table->ibv_table;

err_nomem:
	if (table)
		free(table->wqs);
	free(table);
	errno = ENOMEM;
	return NULL;
}

int mana_destroy_rwq_ind_table(struct ibv_rwq_ind_table *ibtable)
{
	struct mana_rwq_ind_table *table = to_mind(ibtable);
	uint32_t i;
	int ret;

	ret = ibv_cmd_destroy_rwq_ind_table(ibtable);
	if (ret) {
		mana_err(ibtable->context, "DESTROY_RWQ_IND_TBL failed: %s",
			 strerror(ret));
		return ret;
	}
	for (i = 0; i < table->size; i++)
		atomic_fetch_sub(&table->wqs[i]->ind_table_refs, 1);
	free(table->wqs);
	free(table);
	return 0;
}

int mana_init_obj_rwq(struct ibv_wq *ibwq, struct manadv_rwq *out)
{
	struct mana_wq *wq;
	void *db;

	if (!ibwq || !out || !mana_is_mana_context(ibwq->context))
		return EINVAL;
	wq = to_mwq(ibwq);
	db = mana_get_db_page(to_mctx(ibwq->context));
	if (!db)
		return errno ? errno : EIO;
	out->buf = wq->buf.addr;
	out->count = wq->max_wr;
	out->size = wq->buf.size;
	out->wq_id = wq->wqid;
	out->db_page = db;
	return 0;
}
