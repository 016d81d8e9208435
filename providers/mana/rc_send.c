// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC send and receive datapath: ibv_post_send, ibv_post_recv and
 * ibv_wr_* on RC QPs.
 *
 * A send WR becomes one SQ WQE (a READ also one receive WQE on the
 * receive-requester queue, where its response data lands) and a shadow
 * record with the message's last PSN: the device reports requester
 * progress only as ARMED_CMPL CQEs ("acknowledged up to PSN x"), which the
 * provider asks for with the arm doorbell at the last PSN of the oldest
 * signaled WR outstanding.
 *
 * MANA has no inline data: IBV_SEND_INLINE copies the data into a
 * registered bounce slot of the QP (one per shadow record), so the
 * application may reuse its buffer as soon as post_send returns, as the
 * verbs contract promises.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "rc.h"

#define RC_SEND_FLAGS (IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | \
		       IBV_SEND_FENCE | IBV_SEND_INLINE)
#define RC_MAX_MSG (1u << 31)

/* ---- setup ------------------------------------------------------------ */

static int inline_area(struct mana_context *ctx, struct mana_rc_qp *qp,
		       struct mana_pd *pd)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	size_t len;
	int ret;

	qp->inline_stride = (qp->max_inline_data + 63) & ~63u;
	len = (size_t)qp->inline_stride * (qp->swr_mask + 1);
	len = (len + MANA_PAGE_SIZE - 1) & ~(size_t)(MANA_PAGE_SIZE - 1);
	if (posix_memalign((void **)&qp->inline_buf, MANA_PAGE_SIZE, len))
		return ENOMEM;
	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_reg_mr(&mana_real_pd(pd)->ibv_pd, qp->inline_buf, len,
			     (uintptr_t)qp->inline_buf, IBV_ACCESS_LOCAL_WRITE,
			     &qp->inline_mr, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		mana_err(&ctx->ibv_ctx.context,
			 "cannot register the inline bounce area: %s", strerror(ret));
		free(qp->inline_buf);
		qp->inline_buf = NULL;
	}
	return ret;
}

int mana_rc_sq_init(struct mana_context *ctx, struct mana_rc_qp *qp,
		    struct mana_pd *pd)
{
	int ret = ENOMEM;

	qp->swr_mask = mana_roundup_pow2(qp->max_send_wr) - 1;
	qp->rwr_mask = mana_roundup_pow2(qp->max_recv_wr ? qp->max_recv_wr : 1) - 1;
	qp->swr = calloc(qp->swr_mask + 1, sizeof(*qp->swr));
	qp->rwr = calloc(qp->rwr_mask + 1, sizeof(*qp->rwr));
	if (!qp->swr || !qp->rwr)
		goto err;
	qp->db_page = mana_get_db_page(ctx);
	if (!qp->db_page) {
		ret = errno ? errno : EIO;
		goto err;
	}
	if (qp->max_inline_data) {
		ret = inline_area(ctx, qp, pd);
		if (ret)
			goto err;
	}
	return 0;

err:
	free(qp->swr);
	free(qp->rwr);
	qp->swr = NULL;
	qp->rwr = NULL;
	return ret;
}

void mana_rc_sq_fini(struct mana_rc_qp *qp)
{
	if (qp->inline_buf) {
		ibv_cmd_dereg_mr(&qp->inline_mr);
		free(qp->inline_buf);
		qp->inline_buf = NULL;
	}
	free(qp->swr);
	free(qp->rwr);
	free(qp->wr_list);
	free(qp->wr_sges);
	free(qp->wr_inline);
	qp->swr = NULL;
	qp->rwr = NULL;
}

/* ---- doorbells and WQEs ----------------------------------------------- */

static void ring(struct mana_rc_qp *qp, enum gdma_db_kind kind, uint32_t off,
		 uint32_t id, uint32_t tail, uint8_t wqe_cnt)
{
	struct gdma_doorbell db = { .kind = kind, .id = id, .tail = tail,
				    .wqe_cnt = wqe_cnt };
	uint64_t v;

	if (gdma_doorbell_encode(&db, &v))
		return;		/* ids were checked at create: cannot happen */
	mana_ring_doorbell(qp->db_page, off, v);
}

/* One ARMED_CMPL CQE, please, once @psn is acknowledged. */
void mana_rc_ring_arm(struct mana_rc_qp *qp, uint32_t psn)
{
	uint64_t v;

	if (gdma_arm_db_encode(qp->q[MANA_RC_RECV_QUEUE_REQUESTER].id, psn, &v))
		return;
	mana_ring_doorbell(qp->db_page, GDMA_DB_OFF_RQ_CLIENT, v);
}

/*
 * Write a WQE of header @hdr, inline OOB @oob (@oob_size bytes) and
 * @n SGEs at the producer of @q (wrapping as a ring does).  Its units.
 */
static uint32_t put_wqe(struct mana_rc_queue *q, const struct gdma_wqe_header *hdr,
			enum gdma_queue_type qt, const uint8_t *oob,
			uint32_t oob_size, const struct ibv_sge *sg, uint32_t n)
{
	uint8_t wqe[GDMA_MAX_SQE_SIZE];
	uint32_t sgl = gdma_wqe_sgl_offset(oob_size);
	uint32_t size = gdma_wqe_size(oob_size, hdr->num_sge);
	uint32_t i;

	memset(wqe, 0, size);
	if (gdma_wqe_header_encode(hdr, qt, wqe))
		return 0;
	memcpy(wqe + GDMA_WQE_HDR_SIZE, oob, oob_size);
	if (!n) {
		/* the hardware needs an SGE: a dummy one, zero bytes */
		gdma_put_le64(wqe + sgl, GDMA_DUMMY_SGE_ADDR);
	}
	for (i = 0; i < n; i++) {
		gdma_put_le64(wqe + sgl + i * GDMA_SGE_SIZE, sg[i].addr);
		gdma_put_le32(wqe + sgl + i * GDMA_SGE_SIZE + 8, sg[i].lkey);
		gdma_put_le32(wqe + sgl + i * GDMA_SGE_SIZE + 12, sg[i].length);
	}
	if (gdma_ring_write(q->buf.addr, q->ring_size,
			    gdma_wqe_ring_offset(q->prod_bu, q->ring_size),
			    wqe, size))
		return 0;
	q->prod_bu += size / GDMA_WQE_BU_SIZE;
	return size / GDMA_WQE_BU_SIZE;
}

static uint32_t queue_free_bu(const struct mana_rc_queue *q)
{
	uint32_t cons = __atomic_load_n(&q->cons_bu, __ATOMIC_ACQUIRE);

	return q->ring_size / GDMA_WQE_BU_SIZE - (q->prod_bu - cons);
}

/* ---- post_send -------------------------------------------------------- */

struct rc_op {
	uint8_t wqe_type;
	uint8_t wc_opcode;
};

static int wr_op(enum ibv_wr_opcode op, struct rc_op *out)
{
	switch (op) {
	case IBV_WR_SEND:
		*out = (struct rc_op){ MANA_WQE_RC_SEND, IBV_WC_SEND };
		return 0;
	case IBV_WR_SEND_WITH_IMM:
		*out = (struct rc_op){ MANA_WQE_RC_SEND_IMM, IBV_WC_SEND };
		return 0;
	case IBV_WR_RDMA_WRITE:
		*out = (struct rc_op){ MANA_WQE_WRITE, IBV_WC_RDMA_WRITE };
		return 0;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		*out = (struct rc_op){ MANA_WQE_WRITE_IMM, IBV_WC_RDMA_WRITE };
		return 0;
	case IBV_WR_RDMA_READ:
		*out = (struct rc_op){ MANA_WQE_READ, IBV_WC_RDMA_READ };
		return 0;
	default:
		return EINVAL;
	}
}

/* Everything about @wr that does not depend on queue space. */
static int check_wr(struct mana_rc_qp *qp, const struct ibv_send_wr *wr,
		    struct rc_op *op, uint64_t *len)
{
	struct ibv_context *ibctx = qp->qp.vqp.qp.context;
	int i;

	if (wr_op(wr->opcode, op)) {
		mana_err(ibctx, "opcode %d is not supported on MANA RC QPs (send, send with immediate, RDMA write (with immediate), RDMA read)",
			 wr->opcode);
		return EINVAL;
	}
	if (wr->send_flags & ~RC_SEND_FLAGS) {
		mana_err(ibctx, "unsupported send_flags 0x%x", wr->send_flags);
		return EINVAL;
	}
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->max_send_sge ||
	    (wr->num_sge && !wr->sg_list)) {
		mana_err(ibctx, "num_sge %d out of range 0..%u (or no sg_list)",
			 wr->num_sge, qp->max_send_sge);
		return EINVAL;
	}
	*len = 0;
	for (i = 0; i < wr->num_sge; i++)
		*len += wr->sg_list[i].length;
	if (*len > RC_MAX_MSG) {
		mana_err(ibctx, "message of %llu bytes exceeds %u",
			 (unsigned long long)*len, RC_MAX_MSG);
		return EINVAL;
	}
	if (wr->opcode == IBV_WR_RDMA_READ && wr->num_sge > (int)MANA_MAX_RX_SGE) {
		mana_err(ibctx, "an RDMA read lands in a receive WQE: at most %u SGEs, not %d",
			 MANA_MAX_RX_SGE, wr->num_sge);
		return EINVAL;
	}
	if (wr->send_flags & IBV_SEND_INLINE) {
		if (wr->opcode == IBV_WR_RDMA_READ) {
			mana_err(ibctx, "IBV_SEND_INLINE with RDMA read");
			return EINVAL;
		}
		if (*len > qp->max_inline_data) {
			mana_err(ibctx, "%llu bytes of inline data exceed max_inline_data %u",
				 (unsigned long long)*len, qp->max_inline_data);
			return EINVAL;
		}
	}
	return 0;
}

/* Gather the inline data of @wr into its bounce slot: one SGE for it. */
static void gather_inline(struct mana_rc_qp *qp, const struct ibv_send_wr *wr,
			  uint32_t slot, uint32_t len, struct ibv_sge *sge)
{
	uint8_t *dst = qp->inline_buf + (size_t)slot * qp->inline_stride;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length)
			memcpy(dst, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
		dst += wr->sg_list[i].length;
	}
	sge->addr = (uintptr_t)(qp->inline_buf + (size_t)slot * qp->inline_stride);
	sge->lkey = qp->inline_mr.ibv_mr.lkey;
	sge->length = len;
}

/* A READ's landing WQE on the receive requester; rung at once. */
static uint32_t post_rreq(struct mana_rc_qp *qp, uint32_t psn,
			  const struct ibv_sge *sg, uint32_t n)
{
	struct mana_rc_queue *q = &qp->q[MANA_RC_RECV_QUEUE_REQUESTER];
	struct mana_rdma_recv_oob roob = { .psn_start = psn };
	struct gdma_wqe_header hdr = {
		.num_sge = n ? n : 1, .oob_size = GDMA_OOB_SMALL, .check_sn = true,
	};
	uint8_t oob[GDMA_OOB_SMALL];
	uint32_t bu;

	if (mana_rdma_recv_oob_encode(&roob, oob))
		return 0;
	bu = put_wqe(q, &hdr, GDMA_RQ, oob, sizeof(oob), sg, n);
	if (bu)
		ring(qp, GDMA_DB_RQ, GDMA_DB_OFF_RQ, q->id,
		     gdma_wq_db_tail(q->prod_bu), 1);
	return bu;
}

/*
 * One send WR into the SQ: 0, or ENOMEM when the SQ (or for a READ the
 * receive requester) is full.  *signaled_psn gets its last PSN if it
 * completes with a CQE.
 */
static int post_one(struct mana_rc_qp *qp, const struct ibv_send_wr *wr,
		    const struct rc_op *op, uint32_t len, bool *signaled)
{
	struct mana_rc_queue *sq = &qp->q[MANA_RC_SEND_QUEUE_REQUESTER];
	uint32_t slot = qp->sq_head & qp->swr_mask;
	struct mana_rc_swr *e = &qp->swr[slot];
	struct mana_rdma_send_oob soob = {
		.wqe_type = op->wqe_type,
		.fence = !!(wr->send_flags & IBV_SEND_FENCE),
		.solicited = !!(wr->send_flags & IBV_SEND_SOLICITED),
		.psn = qp->sq_psn,
		.ssn = qp->ssn,
	};
	struct gdma_wqe_header hdr;
	const struct ibv_sge *sg = wr->sg_list;
	uint8_t oob[GDMA_OOB_XLARGE];
	uint32_t n = (uint32_t)wr->num_sge, npsn, size, rreq_bu = 0;
	struct ibv_sge bounce;

	if (qp->sq_head - __atomic_load_n(&qp->sq_tail, __ATOMIC_ACQUIRE) >=
	    qp->max_send_wr)
		return ENOMEM;
	if (op->wqe_type == MANA_WQE_READ &&
	    queue_free_bu(&qp->q[MANA_RC_RECV_QUEUE_REQUESTER]) <
	    gdma_wqe_size_bu(GDMA_OOB_SMALL, n ? n : 1))
		return ENOMEM;

	soob.signaled = (wr->send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all;
	npsn = mana_psn_count(len, qp->mtu);
	switch (op->wqe_type) {
	case MANA_WQE_RC_SEND_IMM:
		soob.imm = be32toh(wr->imm_data);
		break;
	case MANA_WQE_WRITE_IMM:
		soob.imm = be32toh(wr->imm_data);
		/* fall through */
	case MANA_WQE_WRITE:
	case MANA_WQE_READ:
		soob.remote_addr = wr->wr.rdma.remote_addr;
		soob.rkey = wr->wr.rdma.rkey;
		soob.dma_len = len;
		break;
	}
	if (mana_rdma_send_oob_encode(&soob, oob))
		return EINVAL;

	if (op->wqe_type == MANA_WQE_READ) {
		rreq_bu = post_rreq(qp, qp->sq_psn, sg, n);
		if (!rreq_bu)
			return EINVAL;
		n = 0;		/* the SQ WQE carries the dummy SGE */
	} else if ((wr->send_flags & IBV_SEND_INLINE) && n) {
		n = 0;
		if (len) {
			gather_inline(qp, wr, slot, len, &bounce);
			sg = &bounce;
			n = 1;
		}
	}
	/* rdma-core's layout: slots to the unit's end, the unused as padding */
	if (mana_rc_send_wqe_header(op->wqe_type, n, qp->mtu, &hdr))
		return EINVAL;
	size = put_wqe(sq, &hdr, GDMA_SQ, oob, hdr.oob_size, sg, n);
	if (!size)
		return EINVAL;

	e->wr_id = wr->wr_id;
	e->end_psn = mana_rc_psn_add(qp->sq_psn, npsn - 1);
	e->byte_len = len;
	e->size_bu = (uint16_t)size;
	e->rreq_bu = (uint16_t)rreq_bu;
	e->opcode = op->wc_opcode;
	e->signaled = soob.signaled;
	qp->sq_psn = mana_rc_psn_add(qp->sq_psn, npsn);
	qp->ssn = mana_rc_psn_add(qp->ssn, 1);
	*signaled = soob.signaled;
	return 0;
}

int mana_rc_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr)
{
	struct mana_rc_qp *qp = to_mrcqp(ibqp);
	struct ibv_context *ibctx = ibqp->context;
	struct mana_rc_queue *sq = &qp->q[MANA_RC_SEND_QUEUE_REQUESTER];
	uint32_t first_head, arm_psn = 0;
	bool arm = false, signaled;
	struct rc_op op;
	uint64_t len;
	int ret = 0;

	if (!wr) {
		if (bad_wr)
			*bad_wr = NULL;
		return EINVAL;
	}
	if (mana_ctx_fatal(ibctx)) {
		*bad_wr = wr;
		return mana_fatal_error(ibctx);
	}
	mana_spin_lock(&qp->sq_lock);
	if (ibqp->state != IBV_QPS_RTS) {
		mana_err(ibctx, "QP %u is in state %d: post_send needs RTS",
			 ibqp->qp_num, ibqp->state);
		ret = EINVAL;
		*bad_wr = wr;
		goto out;
	}
	first_head = sq->prod_bu;
	for (; wr; wr = wr->next) {
		ret = check_wr(qp, wr, &op, &len);
		if (!ret)
			ret = post_one(qp, wr, &op, (uint32_t)len, &signaled);
		if (ret) {
			if (ret == ENOMEM)
				mana_err(ibctx, "send queue of QP %u is full (max_send_wr %u)",
					 ibqp->qp_num, qp->max_send_wr);
			*bad_wr = wr;
			break;
		}
		if (signaled && !qp->armed && !arm) {
			arm = true;
			arm_psn = qp->swr[qp->sq_head & qp->swr_mask].end_psn;
		}
		__atomic_store_n(&qp->sq_head, qp->sq_head + 1, __ATOMIC_RELEASE);
	}
	if (sq->prod_bu != first_head) {
		atomic_store_explicit(&qp->rollback->right,
				      sq->prod_bu * GDMA_WQE_BU_SIZE,
				      memory_order_relaxed);
		ring(qp, GDMA_DB_SQ, GDMA_DB_OFF_SQ, sq->id,
		     gdma_wq_db_tail(sq->prod_bu), 0);
	}
	if (arm) {
		qp->armed = true;
		mana_rc_ring_arm(qp, arm_psn);
	}
out:
	mana_spin_unlock(&qp->sq_lock);
	return ret;
}

/* ---- post_recv -------------------------------------------------------- */

int mana_rc_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	struct mana_rc_qp *qp = to_mrcqp(ibqp);
	struct ibv_context *ibctx = ibqp->context;
	struct mana_rc_queue *rq = &qp->q[MANA_RC_RECV_QUEUE_RESPONDER];
	struct gdma_wqe_header hdr = { .oob_size = GDMA_OOB_SMALL };
	uint8_t oob[GDMA_OOB_SMALL] = { 0 };
	uint32_t start, size, count = 0;
	struct mana_rc_rwr *e;
	int ret = 0;

	if (!wr) {
		if (bad_wr)
			*bad_wr = NULL;
		return EINVAL;
	}
	if (mana_ctx_fatal(ibctx)) {
		*bad_wr = wr;
		return mana_fatal_error(ibctx);
	}
	mana_spin_lock(&qp->rq_lock);
	if (ibqp->state == IBV_QPS_RESET) {
		mana_err(ibctx, "QP %u is in RESET: post_recv needs INIT or later",
			 ibqp->qp_num);
		ret = EINVAL;
		*bad_wr = wr;
		goto out;
	}
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->max_recv_sge ||
		    (wr->num_sge && !wr->sg_list)) {
			mana_err(ibctx, "num_sge %d out of range 0..%u (or no sg_list)",
				 wr->num_sge, qp->max_recv_sge);
			ret = EINVAL;
		} else if (qp->rq_head - __atomic_load_n(&qp->rq_tail, __ATOMIC_ACQUIRE) >=
			   qp->max_recv_wr) {
			mana_err(ibctx, "receive queue of QP %u is full (max_recv_wr %u)",
				 ibqp->qp_num, qp->max_recv_wr);
			ret = ENOMEM;
		}
		if (ret) {
			*bad_wr = wr;
			break;
		}
		hdr.num_sge = (uint8_t)(wr->num_sge ? wr->num_sge : 1);
		start = rq->prod_bu;
		size = put_wqe(rq, &hdr, GDMA_RQ, oob, sizeof(oob), wr->sg_list,
			       (uint32_t)wr->num_sge);
		if (!size) {
			ret = EINVAL;
			*bad_wr = wr;
			break;
		}
		e = &qp->rwr[qp->rq_head & qp->rwr_mask];
		e->wr_id = wr->wr_id;
		e->start_bu = start;
		e->size_bu = size;
		__atomic_store_n(&qp->rq_head, qp->rq_head + 1, __ATOMIC_RELEASE);
		/* wqe_cnt is 8 bits: ring before it wraps */
		if (++count == 255) {
			ring(qp, GDMA_DB_RQ, GDMA_DB_OFF_RQ, rq->id,
			     gdma_wq_db_tail(rq->prod_bu), (uint8_t)count);
			count = 0;
		}
	}
	if (count)
		ring(qp, GDMA_DB_RQ, GDMA_DB_OFF_RQ, rq->id,
		     gdma_wq_db_tail(rq->prod_bu), (uint8_t)count);
out:
	mana_spin_unlock(&qp->rq_lock);
	return ret;
}

/* ---- ibv_wr_* --------------------------------------------------------- */

/*
 * WRs are built as ibv_send_wr records (inline data copied at once, as
 * the API allows the buffer to be reused) and posted together by
 * wr_complete through the same path as ibv_post_send.
 */
static inline struct mana_rc_qp *ex_to_rcqp(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct mana_rc_qp, qp.vqp.qp_ex);
}

static void wr_fail(struct mana_rc_qp *qp, int err, const char *what)
{
	if (!qp->wr_err) {
		qp->wr_err = err;
		mana_err(qp->qp.vqp.qp.context, "ibv_wr_*: %s", what);
	}
}

static void rc_wr_start(struct ibv_qp_ex *qpx)
{
	struct mana_rc_qp *qp = ex_to_rcqp(qpx);

	qp->wr_count = 0;
	qp->wr_err = 0;
	qp->wr_open = true;
}

/* A new WR record, or NULL (wr_err set). */
static struct ibv_send_wr *wr_new(struct mana_rc_qp *qp, enum ibv_wr_opcode op)
{
	struct ibv_qp_ex *qpx = &qp->qp.vqp.qp_ex;
	struct ibv_send_wr *wr;

	if (!qp->wr_open) {
		wr_fail(qp, EINVAL, "a WR outside ibv_wr_start/ibv_wr_complete");
		return NULL;
	}
	if (qp->wr_err)
		return NULL;
	if (qp->wr_count == qp->wr_cap) {
		wr_fail(qp, ENOMEM, "more WRs between ibv_wr_start and ibv_wr_complete than max_send_wr");
		return NULL;
	}
	wr = &qp->wr_list[qp->wr_count++];
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = qpx->wr_id;
	wr->send_flags = (int)qpx->wr_flags;
	wr->opcode = op;
	wr->sg_list = &qp->wr_sges[(size_t)(qp->wr_count - 1) * qp->max_send_sge];
	return wr;
}

static struct ibv_send_wr *wr_cur(struct mana_rc_qp *qp)
{
	if (qp->wr_err)
		return NULL;
	if (!qp->wr_open || !qp->wr_count) {
		wr_fail(qp, EINVAL, "data set before an opcode (ibv_wr_send, ...)");
		return NULL;
	}
	return &qp->wr_list[qp->wr_count - 1];
}

static void rc_wr_send(struct ibv_qp_ex *qpx)
{
	wr_new(ex_to_rcqp(qpx), IBV_WR_SEND);
}

static void rc_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct ibv_send_wr *wr = wr_new(ex_to_rcqp(qpx), IBV_WR_SEND_WITH_IMM);

	if (wr)
		wr->imm_data = imm;
}

static void rc_wr_rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op,
		       uint32_t rkey, uint64_t addr, __be32 imm)
{
	struct ibv_send_wr *wr = wr_new(ex_to_rcqp(qpx), op);

	if (!wr)
		return;
	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = addr;
	wr->imm_data = imm;
}

static void rc_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	rc_wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, addr, 0);
}

static void rc_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				 uint64_t addr, __be32 imm)
{
	rc_wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

static void rc_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	rc_wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, addr, 0);
}

static void rc_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n,
			       const struct ibv_sge *sg)
{
	struct mana_rc_qp *qp = ex_to_rcqp(qpx);
	struct ibv_send_wr *wr = wr_cur(qp);

	if (!wr)
		return;
	if (n > qp->max_send_sge) {
		wr_fail(qp, EINVAL, "more SGEs than max_send_sge");
		return;
	}
	if (n)
		memcpy(wr->sg_list, sg, n * sizeof(*sg));
	wr->num_sge = (int)n;
	wr->send_flags &= ~IBV_SEND_INLINE;
}

static void rc_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr,
			  uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	rc_wr_set_sge_list(qpx, 1, &sge);
}

static void rc_wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t n,
				       const struct ibv_data_buf *buf)
{
	struct mana_rc_qp *qp = ex_to_rcqp(qpx);
	struct ibv_send_wr *wr = wr_cur(qp);
	uint8_t *dst;
	size_t i, len = 0;

	if (!wr)
		return;
	for (i = 0; i < n; i++)
		len += buf[i].length;
	if (len > qp->max_inline_data || wr->opcode == IBV_WR_RDMA_READ) {
		wr_fail(qp, EINVAL, "inline data longer than max_inline_data (or on a read)");
		return;
	}
	/* copied now: the caller may reuse its buffers when this returns */
	dst = qp->wr_inline + (size_t)(qp->wr_count - 1) * qp->inline_stride;
	wr->sg_list[0].addr = (uintptr_t)dst;
	wr->sg_list[0].length = (uint32_t)len;
	wr->sg_list[0].lkey = 0;
	for (i = 0; i < n; i++) {
		if (buf[i].length)
			memcpy(dst, buf[i].addr, buf[i].length);
		dst += buf[i].length;
	}
	wr->num_sge = len ? 1 : 0;
	wr->send_flags |= IBV_SEND_INLINE;
}

static void rc_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				  size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	rc_wr_set_inline_data_list(qpx, 1, &buf);
}

/*
 * ibv_wr_complete posts the whole batch or nothing: every WR checked and
 * the room for all of them found first (only the poller frees room).
 */
static int wr_precheck(struct mana_rc_qp *qp)
{
	uint32_t i, rreq_bu = 0, used;
	struct rc_op op;
	uint64_t len;
	int ret;

	for (i = 0; i < qp->wr_count; i++) {
		ret = check_wr(qp, &qp->wr_list[i], &op, &len);
		if (ret)
			return ret;
		if (op.wqe_type == MANA_WQE_READ)
			rreq_bu += gdma_wqe_size_bu(GDMA_OOB_SMALL,
						    qp->wr_list[i].num_sge ?
						    (uint32_t)qp->wr_list[i].num_sge : 1);
	}
	used = qp->sq_head - __atomic_load_n(&qp->sq_tail, __ATOMIC_ACQUIRE);
	if (used + qp->wr_count > qp->max_send_wr ||
	    rreq_bu > queue_free_bu(&qp->q[MANA_RC_RECV_QUEUE_REQUESTER])) {
		mana_err(qp->qp.vqp.qp.context,
			 "send queue of QP %u has no room for %u WRs",
			 qp->qp.vqp.qp.qp_num, qp->wr_count);
		return ENOMEM;
	}
	return 0;
}

static int rc_wr_complete(struct ibv_qp_ex *qpx)
{
	struct mana_rc_qp *qp = ex_to_rcqp(qpx);
	struct ibv_send_wr *bad;
	uint32_t i;
	int ret;

	if (!qp->wr_open)
		return EINVAL;
	qp->wr_open = false;
	if (qp->wr_err)
		return qp->wr_err;
	if (!qp->wr_count)
		return 0;
	ret = wr_precheck(qp);
	if (ret)
		return ret;
	for (i = 0; i + 1 < qp->wr_count; i++)
		qp->wr_list[i].next = &qp->wr_list[i + 1];
	qp->wr_list[qp->wr_count - 1].next = NULL;
	return mana_rc_post_send(&qp->qp.vqp.qp, qp->wr_list, &bad);
}

static void rc_wr_abort(struct ibv_qp_ex *qpx)
{
	struct mana_rc_qp *qp = ex_to_rcqp(qpx);

	qp->wr_open = false;
	qp->wr_count = 0;
}

static void rc_wr_unsupported(struct mana_rc_qp *qp)
{
	wr_new(qp, IBV_WR_SEND);	/* keeps wr_err and the count honest */
	wr_fail(qp, EOPNOTSUPP, "operation not supported on MANA RC QPs (atomics, MW binding, invalidation, TSO, UD, XRC)");
}

static void rc_wr_atomic_cmp_swp(struct ibv_qp_ex *q, uint32_t r, uint64_t a,
				 uint64_t c, uint64_t s)
{
	rc_wr_unsupported(ex_to_rcqp(q));
}

static void rc_wr_atomic_fetch_add(struct ibv_qp_ex *q, uint32_t r, uint64_t a,
				   uint64_t add)
{
	rc_wr_unsupported(ex_to_rcqp(q));
}

static void rc_wr_bind_mw(struct ibv_qp_ex *q, struct ibv_mw *mw, uint32_t r,
			  const struct ibv_mw_bind_info *b)
{
	rc_wr_unsupported(ex_to_rcqp(q));
}

static void rc_wr_local_inv(struct ibv_qp_ex *q, uint32_t r)
{
	rc_wr_unsupported(ex_to_rcqp(q));
}

static void rc_wr_send_inv(struct ibv_qp_ex *q, uint32_t r)
{
	rc_wr_unsupported(ex_to_rcqp(q));
}

static void rc_wr_send_tso(struct ibv_qp_ex *q, void *h, uint16_t hs,
			   uint16_t mss)
{
	rc_wr_unsupported(ex_to_rcqp(q));
}

static void rc_wr_set_ud_addr(struct ibv_qp_ex *q, struct ibv_ah *ah,
			      uint32_t n, uint32_t k)
{
	struct mana_rc_qp *qp = ex_to_rcqp(q);

	wr_fail(qp, EOPNOTSUPP, "an RC QP has no UD address");
}

static void rc_wr_set_xrc_srqn(struct ibv_qp_ex *q, uint32_t n)
{
	wr_fail(ex_to_rcqp(q), EOPNOTSUPP, "an RC QP has no XRC SRQ");
}

/* the operations later rdma-core headers add: refused like the others */
#if MANA_RDMA_CORE >= 44
static void rc_wr_atomic_write(struct ibv_qp_ex *q, uint32_t r, uint64_t a,
			       const void *w)
{
	rc_wr_unsupported(ex_to_rcqp(q));
}
#endif
#if MANA_RDMA_CORE >= 45
static void rc_wr_flush(struct ibv_qp_ex *q, uint32_t r, uint64_t a, size_t len,
			uint8_t type, uint8_t level)
{
	rc_wr_unsupported(ex_to_rcqp(q));
}
#endif

void mana_rc_init_ex_ops(struct mana_rc_qp *qp)
{
	struct ibv_qp_ex *x = &qp->qp.vqp.qp_ex;
	size_t sge = qp->max_send_sge;

	qp->wr_cap = qp->max_send_wr;
	qp->wr_list = calloc(qp->wr_cap, sizeof(*qp->wr_list));
	qp->wr_sges = calloc((size_t)qp->wr_cap * sge, sizeof(*qp->wr_sges));
	if (!qp->inline_stride)
		qp->inline_stride = (qp->max_inline_data + 63) & ~63u;
	qp->wr_inline = calloc(qp->wr_cap, qp->inline_stride ? qp->inline_stride : 1);
	if (!qp->wr_list || !qp->wr_sges || !qp->wr_inline)
		qp->wr_cap = 0;	/* every wr_* then fails with ENOMEM */

	x->wr_atomic_cmp_swp = rc_wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = rc_wr_atomic_fetch_add;
	x->wr_bind_mw = rc_wr_bind_mw;
	x->wr_local_inv = rc_wr_local_inv;
	x->wr_rdma_read = rc_wr_rdma_read;
	x->wr_rdma_write = rc_wr_rdma_write;
	x->wr_rdma_write_imm = rc_wr_rdma_write_imm;
	x->wr_send = rc_wr_send;
	x->wr_send_imm = rc_wr_send_imm;
	x->wr_send_inv = rc_wr_send_inv;
	x->wr_send_tso = rc_wr_send_tso;
	x->wr_set_ud_addr = rc_wr_set_ud_addr;
	x->wr_set_xrc_srqn = rc_wr_set_xrc_srqn;
	x->wr_set_inline_data = rc_wr_set_inline_data;
	x->wr_set_inline_data_list = rc_wr_set_inline_data_list;
	x->wr_set_sge = rc_wr_set_sge;
	x->wr_set_sge_list = rc_wr_set_sge_list;
	x->wr_start = rc_wr_start;
	x->wr_complete = rc_wr_complete;
	x->wr_abort = rc_wr_abort;
#if MANA_RDMA_CORE >= 44
	x->wr_atomic_write = rc_wr_atomic_write;
#endif
#if MANA_RDMA_CORE >= 45
	x->wr_flush = rc_wr_flush;
#endif
	qp->qp.vqp.comp_mask |= VERBS_QP_EX;
}
