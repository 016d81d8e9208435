// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RC QPs: create (four queues, sized as rdma-core v64 sizes them), modify
 * (the kernel checks the transition; the provider follows path MTU, PSN and
 * state), query and destroy.
 */
#include <stdlib.h>
#include <string.h>

#include "rc.h"

MANA_DECLARE_DRV_CMD(mana_create_rc_qp, ibv_create_qp, ib_uverbs_create_qp_resp,
		     mana_ib_create_rc_qp, mana_ib_create_rc_qp_resp);
MANA_DECLARE_DRV_CMD(mana_create_uc_qp, ibv_create_qp, ib_uverbs_create_qp_resp,
		     mana_ib_create_uc_qp, mana_ib_create_uc_qp_resp);

#define MANA_RC_SEND_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
			  IBV_QP_EX_WITH_RDMA_WRITE | \
			  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
			  IBV_QP_EX_WITH_RDMA_READ)
/* UC: no RDMA READ (IBA 9.7.x) */
#define MANA_UC_SEND_OPS (MANA_RC_SEND_OPS & ~IBV_QP_EX_WITH_RDMA_READ)
/* WRITE_WITH_IMM takes one SGE slot for the immediate: 29 + 1 in 512 bytes */
#define MANA_RC_MAX_SEND_SGE (MANA_MAX_TX_SGE - 1)

static uint32_t hw_size(uint64_t bytes)
{
	return (uint32_t)mana_queue_size(bytes);
}

/* ---- CQ lists --------------------------------------------------------- */

static void cq_lock(struct mana_cq *cq)
{
	mana_spin_lock(&cq->lock);
}

static void cq_unlock(struct mana_cq *cq)
{
	mana_spin_unlock(&cq->lock);
}

static void cq_attach(struct mana_cq *cq, struct mana_rc_qp *qp, bool send)
{
	cq_lock(cq);
	if (send) {
		qp->send_next = cq->rc_send_qps;
		cq->rc_send_qps = qp;
	} else {
		qp->recv_next = cq->rc_recv_qps;
		cq->rc_recv_qps = qp;
	}
	if (!cq->rc) {
		mana_cq_set_rc(cq, true);
		mana_rc_cq_init_ex_ops(cq);
	}
	/* an arm before this QP was on the RNIC CQ, which it completes on */
	cq->arm_pending = false;
	atomic_store(&cq->bound, true);
	cq_unlock(cq);
}

static void cq_detach(struct mana_cq *cq, struct mana_rc_qp *qp, bool send)
{
	struct mana_rc_qp **p;

	cq_lock(cq);
	if (send) {
		for (p = &cq->rc_send_qps; *p; p = &(*p)->send_next)
			if (*p == qp) {
				*p = qp->send_next;
				break;
			}
	} else {
		for (p = &cq->rc_recv_qps; *p; p = &(*p)->recv_next)
			if (*p == qp) {
				*p = qp->recv_next;
				break;
			}
	}
	/* no RC QP left: the CQ may serve a raw queue again */
	if (!cq->rc_send_qps && !cq->rc_recv_qps) {
		mana_cq_set_rc(cq, false);
		mana_cq_init_ops(cq);
		atomic_store(&cq->bound, false);
	}
	cq_unlock(cq);
}

/* ---- create ----------------------------------------------------------- */

static int check_cq(struct ibv_context *ibctx, struct ibv_cq *ibcq,
		    const char *which)
{
	struct mana_cq *cq;

	if (!ibcq || ibcq->context != ibctx) {
		mana_err(ibctx, "RC QP needs a %s CQ of this context", which);
		return EINVAL;
	}
	cq = to_mcq(ibcq);
	if (cq->rnic_cqid == UINT32_MAX) {
		mana_err(ibctx, "the %s CQ has no hardware CQ (RNIC CQ): RC QPs need CQs created without an external allocator, on a kernel with RNIC support",
			 which);
		return EINVAL;
	}
	if (atomic_load(&cq->bound) && !cq->rc) {
		mana_err(ibctx, "the %s CQ already serves a raw packet queue",
			 which);
		return EINVAL;
	}
	return 0;
}

static int check_attr(struct mana_context *ctx, struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_context *ibctx = &ctx->ibv_ctx.context;
	struct mana_caps caps;
	int ret;

	if (attr->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD |
					  IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
					  IBV_QP_INIT_ATTR_CREATE_FLAGS)) {
		mana_err(ibctx, "unsupported RC QP comp_mask 0x%x", attr->comp_mask);
		return EOPNOTSUPP;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    attr->create_flags) {
		mana_err(ibctx, "unsupported QP create_flags 0x%x",
			 attr->create_flags);
		return EOPNOTSUPP;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    attr->qp_type == IBV_QPT_RC &&
	    (attr->send_ops_flags & ~(uint64_t)MANA_RC_SEND_OPS)) {
		mana_err(ibctx, "RC QPs send, write and read only (no atomics, MW binding, invalidation): send_ops_flags 0x%llx",
			 (unsigned long long)attr->send_ops_flags);
		return EOPNOTSUPP;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    attr->qp_type == IBV_QPT_UC &&
	    (attr->send_ops_flags & ~(uint64_t)MANA_UC_SEND_OPS)) {
		mana_err(ibctx, "UC QPs send and write only (no read, atomics, MW binding, invalidation): send_ops_flags 0x%llx",
			 (unsigned long long)attr->send_ops_flags);
		return EOPNOTSUPP;
	}
	if (!attr->pd || attr->pd->context != ibctx) {
		mana_err(ibctx, "QP needs a PD of this context");
		return EINVAL;
	}
	if (attr->srq) {
		mana_err(ibctx, "MANA has no shared receive queues");
		return EOPNOTSUPP;
	}
	ret = check_cq(ibctx, attr->send_cq, "send");
	if (ret)
		return ret;
	ret = check_cq(ibctx, attr->recv_cq, "receive");
	if (ret)
		return ret;
	ret = mana_get_caps(ctx, &caps);
	if (ret)
		return ret;
	/*
	 * max_send_wr 0 (a receive-only QP, as qperf's servers ask) still
	 * gets the hardware send queues (a page each): the RNIC answers
	 * requests and READs through them, and mana_ib creates all four.
	 */
	if (attr->cap.max_send_wr > caps.max_qp_wr ||
	    attr->cap.max_recv_wr > caps.max_qp_wr) {
		mana_err(ibctx, "max_send_wr %u (0..%u) or max_recv_wr %u (0..%u) out of range",
			 attr->cap.max_send_wr, caps.max_qp_wr,
			 attr->cap.max_recv_wr, caps.max_qp_wr);
		return EINVAL;
	}
	if (attr->cap.max_send_sge > MANA_RC_MAX_SEND_SGE ||
	    attr->cap.max_recv_sge > MANA_MAX_RX_SGE) {
		mana_err(ibctx, "max_send_sge %u (up to %u) or max_recv_sge %u (up to %u) out of range",
			 attr->cap.max_send_sge, MANA_RC_MAX_SEND_SGE,
			 attr->cap.max_recv_sge, MANA_MAX_RX_SGE);
		return EINVAL;
	}
	if (attr->cap.max_inline_data > MANA_MAX_INLINE_DATA) {
		mana_err(ibctx, "max_inline_data %u exceeds %u",
			 attr->cap.max_inline_data, MANA_MAX_INLINE_DATA);
		return EINVAL;
	}
	return 0;
}

/* Queue memory is ours: RC queues never come from DPDK's allocators. */
static int alloc_queue(struct mana_context *ctx, struct mana_rc_queue *q,
		       uint32_t ring_size, uint32_t extra)
{
	size_t len = ((size_t)ring_size + extra + MANA_PAGE_SIZE - 1) &
		     ~(size_t)(MANA_PAGE_SIZE - 1);
	void *addr;

	memset(q, 0, sizeof(*q));
	if (!ring_size || posix_memalign(&addr, MANA_PAGE_SIZE, len)) {
		mana_err(&ctx->ibv_ctx.context,
			 "cannot allocate a %zu-byte RC queue", len);
		return ENOMEM;
	}
	memset(addr, 0, len);
	q->buf.addr = addr;
	q->buf.size = len;
	q->buf.source = MANA_BUF_OWN;
	q->ring_size = ring_size;
	return 0;
}

static void free_queues(struct mana_rc_qp *qp)
{
	unsigned int i;

	for (i = 0; i < MANA_RC_QUEUE_COUNT; i++)
		mana_free_buf(&qp->q[i].buf);
}

/*
 * Sizes as rdma-core v64 computes them: the SQ has room for max_send_wr
 * WQEs of max_send_sge + 1 SGEs with the 24-byte OOB (the extra slot is
 * WRITE_WITH_IMM's immediate), followed by the rollback area; the two
 * hardware-internal queues get a page; the RQ max_recv_wr WQEs.
 */
static int alloc_queues(struct mana_context *ctx, struct mana_rc_qp *qp)
{
	uint32_t sizes[MANA_RC_QUEUE_COUNT];
	unsigned int i;
	int ret;

	sizes[MANA_RC_SEND_QUEUE_REQUESTER] =
		hw_size((uint64_t)qp->max_send_wr *
			mana_sq_wqe_size(qp->max_send_sge + 1));
	sizes[MANA_RC_SEND_QUEUE_RESPONDER] = MANA_PAGE_SIZE;
	sizes[MANA_RC_RECV_QUEUE_REQUESTER] = MANA_PAGE_SIZE;
	sizes[MANA_RC_RECV_QUEUE_RESPONDER] =
		hw_size((uint64_t)qp->max_recv_wr *
			mana_rq_wqe_size(qp->max_recv_sge));
	/*
	 * UC (rdma-core pull 1719): the memory-management queue takes
	 * max_send_wr WQEs of two SGEs; there is no receive requester.
	 */
	if (qp->uc) {
		sizes[MANA_RC_SEND_QUEUE_RESPONDER] =
			hw_size((uint64_t)(qp->max_send_wr ? qp->max_send_wr : 1) *
				mana_sq_wqe_size(2));
		sizes[MANA_RC_RECV_QUEUE_REQUESTER] = 0;
	}
	for (i = 0; i < MANA_RC_QUEUE_COUNT; i++) {
		if (!sizes[i])
			continue;
		ret = alloc_queue(ctx, &qp->q[i], sizes[i],
				  i == MANA_RC_SEND_QUEUE_REQUESTER ?
				  MANA_RC_ROLLBACK_SIZE : 0);
		if (ret) {
			free_queues(qp);
			return ret;
		}
	}
	qp->rollback = (struct mana_rc_rollback *)
		((uint8_t *)qp->q[MANA_RC_SEND_QUEUE_REQUESTER].buf.addr +
		 sizes[MANA_RC_SEND_QUEUE_REQUESTER]);
	qp->rollback->signature = MANA_RC_ROLLBACK_SIG;
	qp->rollback->size = MANA_RC_ROLLBACK_SIZE;
	return 0;
}

/* Queue ids as the uAPI promises them: 24 bits, subtypes in the low two. */
static bool ids_valid(const uint32_t *id)
{
	unsigned int i;

	for (i = 0; i < MANA_RC_QUEUE_COUNT; i++)
		if (id[i] > GDMA_QUEUE_ID_MAX || id[i] <= 1)
			return false;
	return (id[MANA_RC_SEND_QUEUE_REQUESTER] & 3) == 0 &&
	       (id[MANA_RC_SEND_QUEUE_RESPONDER] & 3) == 1 &&
	       (id[MANA_RC_RECV_QUEUE_RESPONDER] & 3) == 0 &&
	       (id[MANA_RC_RECV_QUEUE_REQUESTER] & 3) == 1 &&
	       id[MANA_RC_SEND_QUEUE_REQUESTER] >> 2 ==
	       id[MANA_RC_SEND_QUEUE_RESPONDER] >> 2 &&
	       id[MANA_RC_RECV_QUEUE_RESPONDER] >> 2 ==
	       id[MANA_RC_RECV_QUEUE_REQUESTER] >> 2;
}

/* UC: the send requester and receive responder ids as RC has them */
static bool uc_ids_valid(const uint32_t *id)
{
	return id[MANA_UC_SQ_REQUESTER] <= GDMA_QUEUE_ID_MAX &&
	       id[MANA_UC_RQ_RESPONDER] <= GDMA_QUEUE_ID_MAX &&
	       id[MANA_UC_SQ_MM] <= GDMA_QUEUE_ID_MAX &&
	       id[MANA_UC_SQ_REQUESTER] > 1 && id[MANA_UC_RQ_RESPONDER] > 1 &&
	       (id[MANA_UC_SQ_REQUESTER] & 3) == 0 &&
	       (id[MANA_UC_RQ_RESPONDER] & 3) == 0;
}

/*
 * The UC create: three queues.  A kernel without UC QPs (before 7.2)
 * answers EINVAL (mana_ib_create_qp's default); the attributes were
 * checked here already, so that is EOPNOTSUPP, as for any QP type MANA
 * lacks.
 */
static int create_cmd_uc(struct mana_context *ctx, struct mana_rc_qp *qp,
			 struct ibv_qp_init_attr_ex *cmd_attr)
{
	struct ibv_context *ibctx = &ctx->ibv_ctx.context;
	static const unsigned int map[MANA_UC_QUEUE_COUNT] = {
		[MANA_UC_SQ_REQUESTER] = MANA_RC_SEND_QUEUE_REQUESTER,
		[MANA_UC_RQ_RESPONDER] = MANA_RC_RECV_QUEUE_RESPONDER,
		[MANA_UC_SQ_MM] = MANA_RC_SEND_QUEUE_RESPONDER,
	};
	struct mana_create_uc_qp_resp resp;
	struct mana_create_uc_qp cmd;
	unsigned int i;
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	for (i = 0; i < MANA_UC_QUEUE_COUNT; i++) {
		cmd.drv.queue_buf[i] = (uintptr_t)qp->q[map[i]].buf.addr;
		cmd.drv.queue_size[i] = qp->q[map[i]].ring_size;
	}
	ret = ibv_cmd_create_qp_ex(ibctx, &qp->qp.vqp, cmd_attr, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret == EINVAL) {
		mana_err(ibctx, "CREATE_QP (UC) failed: EINVAL: this kernel has no UC QPs (mana_ib gains them in Linux 7.2): EOPNOTSUPP");
		return EOPNOTSUPP;
	}
	if (ret) {
		mana_err(ibctx, "CREATE_QP (UC) failed: %s", strerror(ret));
		return ret;
	}
	if (!uc_ids_valid(resp.drv.queue_id)) {
		mana_err(ibctx, "kernel returned invalid UC queue ids %#x %#x %#x",
			 resp.drv.queue_id[0], resp.drv.queue_id[1],
			 resp.drv.queue_id[2]);
		ibv_cmd_destroy_qp(&qp->qp.vqp.qp);
		return EPROTO;
	}
	for (i = 0; i < MANA_UC_QUEUE_COUNT; i++)
		qp->q[map[i]].id = resp.drv.queue_id[i];
	qp->qp.vqp.qp.qp_num = qp->q[MANA_RC_RECV_QUEUE_RESPONDER].id;
	return 0;
}

static int create_cmd(struct mana_context *ctx, struct mana_rc_qp *qp,
		      struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_context *ibctx = &ctx->ibv_ctx.context;
	struct mana_create_rc_qp_resp resp;
	struct ibv_qp_init_attr_ex cmd_attr;
	struct mana_create_rc_qp cmd;
	unsigned int i;
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	for (i = 0; i < MANA_RC_QUEUE_COUNT; i++) {
		cmd.drv.queue_buf[i] = (uintptr_t)qp->q[i].buf.addr;
		cmd.drv.queue_size[i] = qp->q[i].ring_size;
	}
	/*
	 * rdma-core v64 adds the 16-byte rollback area to queue_size[0]; the
	 * emulated kernel and device want whole pages and wrap the SQ at its
	 * size, so the area follows the ring in our allocation, unannounced
	 * (nobody but the provider reads it).
	 */
	cmd_attr = *attr;
	cmd_attr.comp_mask = IBV_QP_INIT_ATTR_PD;
	cmd_attr.cap.max_send_sge = qp->max_send_sge;
	cmd_attr.cap.max_recv_sge = qp->max_recv_sge;
	/* inline data never reaches the device: the provider copies it */
	cmd_attr.cap.max_inline_data = 0;
	if (qp->uc)
		return create_cmd_uc(ctx, qp, &cmd_attr);
	ret = ibv_cmd_create_qp_ex(ibctx, &qp->qp.vqp, &cmd_attr, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret) {
		mana_err(ibctx, "CREATE_QP (RC) failed: %s", strerror(ret));
		return ret;
	}
	if (!ids_valid(resp.drv.queue_id)) {
		mana_err(ibctx, "kernel returned invalid RC queue ids %#x %#x %#x %#x; kernel without RC support?",
			 resp.drv.queue_id[0], resp.drv.queue_id[1],
			 resp.drv.queue_id[2], resp.drv.queue_id[3]);
		ibv_cmd_destroy_qp(&qp->qp.vqp.qp);
		return EPROTO;
	}
	for (i = 0; i < MANA_RC_QUEUE_COUNT; i++)
		qp->q[i].id = resp.drv.queue_id[i];
	if (qp->qp.vqp.qp.qp_num != qp->q[MANA_RC_RECV_QUEUE_RESPONDER].id) {
		mana_warn(ibctx, "kernel QP number %u differs from the receive queue id %u; using the queue id",
			  qp->qp.vqp.qp.qp_num,
			  qp->q[MANA_RC_RECV_QUEUE_RESPONDER].id);
		qp->qp.vqp.qp.qp_num = qp->q[MANA_RC_RECV_QUEUE_RESPONDER].id;
	}
	return 0;
}

struct ibv_qp *mana_rc_create_qp(struct mana_context *ctx,
				 struct ibv_qp_init_attr_ex *attr)
{
	struct mana_rc_qp *qp;
	struct mana_pd *pd;
	int ret;

	ret = check_attr(ctx, attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	pd = to_mpd(attr->pd);
	qp->qp.kind = MANA_QP_RC;
	qp->qp.port = 1;
	qp->max_send_wr = attr->cap.max_send_wr;
	qp->max_recv_wr = attr->cap.max_recv_wr;
	qp->max_send_sge = attr->cap.max_send_sge ? attr->cap.max_send_sge : 1;
	qp->max_recv_sge = attr->cap.max_recv_sge ? attr->cap.max_recv_sge : 1;
	qp->max_inline_data = attr->cap.max_inline_data;
	qp->sq_sig_all = attr->sq_sig_all;
	qp->uc = attr->qp_type == IBV_QPT_UC;
	qp->send_cq = to_mcq(attr->send_cq);
	qp->recv_cq = to_mcq(attr->recv_cq);
	qp->path_mtu = IBV_MTU_1024;
	qp->mtu = mana_rc_mtu_bytes(qp->path_mtu);
	mana_spin_init(&qp->sq_lock);
	mana_spin_init(&qp->rq_lock);
	atomic_init(&qp->flushing, false);

	ret = alloc_queues(ctx, qp);
	if (ret)
		goto err_free;
	ret = mana_rc_sq_init(ctx, qp, pd);
	if (ret)
		goto err_queues;
	ret = create_cmd(ctx, qp, attr);
	if (ret)
		goto err_sq;

	cq_attach(qp->send_cq, qp, true);
	cq_attach(qp->recv_cq, qp, false);
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		mana_rc_init_ex_ops(qp);
	if (pd->protection_domain)
		atomic_fetch_add(&pd->refs, 1);

	attr->cap.max_send_wr = qp->max_send_wr;
	attr->cap.max_recv_wr = qp->max_recv_wr;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_recv_sge = qp->max_recv_sge;
	attr->cap.max_inline_data = qp->max_inline_data;
	qp->cap = attr->cap;
	qp->qp.cap = attr->cap;
	return &qp->qp.vqp.qp;

err_sq:
	mana_rc_sq_fini(qp);
err_queues:
	free_queues(qp);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

/* ---- destroy ---------------------------------------------------------- */

int mana_rc_destroy_qp(struct ibv_qp *ibqp)
{
	struct mana_rc_qp *qp = to_mrcqp(ibqp);
	struct mana_pd *pd = to_mpd(ibqp->pd);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret) {
		mana_err(ibqp->context, "DESTROY_QP failed: %s", strerror(ret));
		return ret;
	}
	/* its CQEs still in the CQs find no QP and are dropped */
	cq_detach(qp->send_cq, qp, true);
	cq_detach(qp->recv_cq, qp, false);
	if (pd->protection_domain)
		atomic_fetch_sub(&pd->refs, 1);
	mana_rc_sq_fini(qp);
	free_queues(qp);
	free(qp);
	return 0;
}

/* ---- modify ----------------------------------------------------------- */

void mana_rc_qp_to_err(struct mana_rc_qp *qp)
{
	qp->qp.vqp.qp.state = IBV_QPS_ERR;
	atomic_store(&qp->flushing, true);
}

static int flushed_opcode(enum ibv_wr_opcode op, uint8_t *wc_opcode)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		*wc_opcode = IBV_WC_SEND;
		return 0;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		*wc_opcode = IBV_WC_RDMA_WRITE;
		return 0;
	case IBV_WR_RDMA_READ:
		*wc_opcode = IBV_WC_RDMA_READ;
		return 0;
	default:
		return EINVAL;
	}
}

/*
 * A QP in ERR takes send WRs and flushes them, as the IBA has it (and as
 * it takes receives): the device never sees them, the poller completes
 * them with IBV_WC_WR_FLUSH_ERR after the QP's earlier WRs.  Their PSN is
 * one never sent, so never acknowledged.  A WR the QP could never take is
 * still refused, with bad_wr.
 */
int mana_rc_post_flushed(struct mana_rc_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr)
{
	struct ibv_context *ibctx = qp->qp.vqp.qp.context;
	struct mana_rc_swr *e;
	uint8_t opcode;

	for (; wr; wr = wr->next) {
		if (flushed_opcode(wr->opcode, &opcode) || wr->num_sge < 0 ||
		    (uint32_t)wr->num_sge > qp->max_send_sge) {
			mana_err(ibctx, "QP %u in ERR: opcode %d or num_sge %d not valid on this QP",
				 qp->qp.vqp.qp.qp_num, wr->opcode, wr->num_sge);
			*bad_wr = wr;
			return EINVAL;
		}
		if (qp->sq_head - __atomic_load_n(&qp->sq_tail, __ATOMIC_ACQUIRE) >=
		    qp->max_send_wr) {
			mana_err(ibctx, "send queue of QP %u is full (max_send_wr %u)",
				 qp->qp.vqp.qp.qp_num, qp->max_send_wr);
			*bad_wr = wr;
			return ENOMEM;
		}
		e = &qp->swr[qp->sq_head & qp->swr_mask];
		mana_rc_swr_flushed(qp, e, wr->wr_id, opcode);
		__atomic_store_n(&qp->sq_head, qp->sq_head + 1, __ATOMIC_RELEASE);
	}
	return 0;
}

/* Lock everything the datapath touches: both CQs, then SQ and RQ. */
static void lock_all(struct mana_rc_qp *qp)
{
	/* two CQs in address order: another QP may have them the other way */
	struct mana_cq *a = qp->send_cq < qp->recv_cq ? qp->send_cq : qp->recv_cq;
	struct mana_cq *b = qp->send_cq < qp->recv_cq ? qp->recv_cq : qp->send_cq;

	cq_lock(a);
	if (b != a)
		cq_lock(b);
	mana_spin_lock(&qp->sq_lock);
	mana_spin_lock(&qp->rq_lock);
}

static void unlock_all(struct mana_rc_qp *qp)
{
	mana_spin_unlock(&qp->rq_lock);
	mana_spin_unlock(&qp->sq_lock);
	if (qp->recv_cq != qp->send_cq)
		cq_unlock(qp->recv_cq);
	cq_unlock(qp->send_cq);
}

/* RESET: the hardware forgets the queues; so do we (no completions). */
static void reset_queues(struct mana_rc_qp *qp)
{
	unsigned int i;

	for (i = 0; i < MANA_RC_QUEUE_COUNT; i++) {
		if (qp->q[i].buf.addr)	/* UC has no receive requester */
			memset(qp->q[i].buf.addr, 0, qp->q[i].ring_size);
		qp->q[i].prod_bu = 0;
		qp->q[i].cons_bu = 0;
	}
	atomic_store(&qp->rollback->left, 0);
	atomic_store(&qp->rollback->right, 0);
	qp->sq_head = qp->sq_tail = 0;
	qp->rq_head = qp->rq_tail = 0;
	qp->sq_psn = 0;
	qp->armed = false;
	qp->sq_err = false;
	qp->rq_err = false;
	atomic_store(&qp->flushing, false);
}

/*
 * What the QP was given, for ibv_query_qp (mana_ib has no query_qp): the
 * kernel accepted @attr for the bits of @mask.  RESET forgets them all.
 */
static void record_attr(struct mana_rc_qp *qp, const struct ibv_qp_attr *attr,
			int mask)
{
	struct ibv_qp_attr *a = &qp->attr;

	if ((mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET)
		memset(a, 0, sizeof(*a));
	if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IBV_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IBV_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IBV_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IBV_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IBV_QP_AV)
		a->ah_attr = attr->ah_attr;
	if (mask & IBV_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IBV_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IBV_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn & MANA_RC_PSN_MASK;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IBV_QP_ALT_PATH) {
		a->alt_ah_attr = attr->alt_ah_attr;
		a->alt_pkey_index = attr->alt_pkey_index;
		a->alt_port_num = attr->alt_port_num;
		a->alt_timeout = attr->alt_timeout;
	}
	if (mask & IBV_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IBV_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn & MANA_RC_PSN_MASK;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IBV_QP_PATH_MIG_STATE)
		a->path_mig_state = attr->path_mig_state;
	if (mask & IBV_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
	if (mask & IBV_QP_RATE_LIMIT)
		a->rate_limit = attr->rate_limit;
}

int mana_rc_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		      int attr_mask)
{
	const int state_only = IBV_QP_STATE | IBV_QP_CUR_STATE |
			       IBV_QP_EN_SQD_ASYNC_NOTIFY;
	struct mana_rc_qp *qp = to_mrcqp(ibqp);
	struct ibv_modify_qp cmd;
	bool cqs;
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (ret) {
		mana_err(ibqp->context, "MODIFY_QP failed: %s (mask 0x%x, state %d -> %d)",
			 strerror(ret), attr_mask, ibqp->state,
			 (attr_mask & IBV_QP_STATE) ? (int)attr->qp_state : -1);
		return ret;
	}

	/*
	 * A state change alone, but to RESET, changes nothing the pollers
	 * read under their CQ locks (the flush flag is atomic): without them,
	 * so that a caller between ibv_start_poll and ibv_end_poll, which
	 * holds one, may move the QP to ERR.
	 */
	cqs = (attr_mask & ~state_only) ||
	      ((attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET);
	if (cqs) {
		lock_all(qp);
	} else {
		mana_spin_lock(&qp->sq_lock);
		mana_spin_lock(&qp->rq_lock);
	}
	record_attr(qp, attr, attr_mask);
	if (attr_mask & IBV_QP_PATH_MTU) {
		qp->path_mtu = attr->path_mtu;
		qp->mtu = mana_rc_mtu_bytes(attr->path_mtu);
	}
	if (attr_mask & IBV_QP_SQ_PSN) {
		qp->sq_psn = attr->sq_psn & MANA_RC_PSN_MASK;
		qp->acked_psn = mana_rc_psn_add(qp->sq_psn, MANA_RC_PSN_MASK);
		qp->ssn = 1;
	}
	if (attr_mask & IBV_QP_STATE) {
		switch (attr->qp_state) {
		case IBV_QPS_RESET:
			reset_queues(qp);
			break;
		case IBV_QPS_ERR:
			mana_rc_qp_to_err(qp);
			break;
		default:
			break;
		}
		ibqp->state = attr->qp_state;
	}
	if (cqs) {
		unlock_all(qp);
	} else {
		mana_spin_unlock(&qp->rq_lock);
		mana_spin_unlock(&qp->sq_lock);
	}
	/* the flushes are due now: wake a consumer asleep on the CQs */
	if ((attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_ERR) {
		mana_cq_rearm_for_flush(qp->send_cq);
		if (qp->recv_cq != qp->send_cq)
			mana_cq_rearm_for_flush(qp->recv_cq);
	}
	return 0;
}

/*
 * Answered from what the provider knows: mana_ib has no query_qp.  Every
 * attribute is filled whatever @attr_mask asks (a hint, ibv_query_qp(3)):
 * the state the provider tracks (ERR once an error CQE has been polled, or
 * after a device fatal), what modify_qp was given, the caps as granted,
 * and the next send PSN (the device does not report the responder's).
 */
int mana_rc_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		     int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct mana_rc_qp *qp = to_mrcqp(ibqp);

	(void)attr_mask;
	/*
	 * modify_qp writes under every lock, sq_lock among them; not the CQ
	 * locks here, as a caller between ibv_start_poll and ibv_end_poll
	 * holds one
	 */
	mana_spin_lock(&qp->sq_lock);
	*attr = qp->attr;
	attr->qp_state = ibqp->state;
	attr->sq_psn = qp->sq_psn;
	mana_spin_unlock(&qp->sq_lock);
	if (mana_ctx_fatal(ibqp->context))
		attr->qp_state = IBV_QPS_ERR;
	attr->cur_qp_state = attr->qp_state;
	if (!attr->port_num)
		attr->port_num = (uint8_t)qp->qp.port;
	attr->cap = qp->cap;
	attr->sq_draining = 0;

	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->qp_context = ibqp->qp_context;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->cap = qp->cap;
	init_attr->qp_type = ibqp->qp_type;
	init_attr->sq_sig_all = qp->sq_sig_all;
	return 0;
}
