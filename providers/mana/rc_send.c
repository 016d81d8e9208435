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
/* the datapath's steps, one function per verb */
#define RC_INLINE static inline __attribute__((always_inline))

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

	/* UC: no acknowledgements to wait for, a CQE per signaled WR */
	if (qp->uc)
		return;
	if (gdma_arm_db_encode(qp->q[MANA_RC_RECV_QUEUE_REQUESTER].id, psn, &v))
		return;
	mana_ring_doorbell(qp->db_page, GDMA_DB_OFF_RQ_CLIENT, v);
}

/*
 * WQEs are written in place, word by word, straight into the ring (a WQE
 * that would wrap at the ring's end is built aside and copied): what
 * gdma.h's encoders produce, without building, checking and copying a
 * header, an OOB and the SGL one after another.  The layouts are the ones
 * mana_rc_send_wqe_header() and gdma_wqe_header_encode() define (the RC
 * tests decode every WQE the provider writes through them in the device).
 */
struct wqe_dst {
	uint64_t *w;			/* where the words go */
	uint32_t off, size;		/* ring offset, bytes */
	uint64_t tmp[GDMA_MAX_SQE_SIZE / 8];
};

static inline uint64_t *wqe_begin(struct mana_rc_queue *q, struct wqe_dst *d,
				  uint32_t size)
{
	d->off = gdma_wqe_ring_offset(q->prod_bu, q->ring_size);
	d->size = size;
	d->w = d->off + size <= q->ring_size ?
	       (uint64_t *)((uint8_t *)q->buf.addr + d->off) : d->tmp;
	return d->w;
}

static inline uint32_t wqe_end(struct mana_rc_queue *q, struct wqe_dst *d)
{
	if (d->w == d->tmp)
		gdma_ring_write(q->buf.addr, q->ring_size, d->off, d->tmp, d->size);
	q->prod_bu += d->size / GDMA_WQE_BU_SIZE;
	return d->size / GDMA_WQE_BU_SIZE;
}

static inline uint64_t sge_lo(const struct ibv_sge *sg)
{
	return htole64(sg->addr);
}

static inline uint64_t sge_hi(const struct ibv_sge *sg)
{
	return htole64((uint64_t)sg->lkey | (uint64_t)sg->length << 32);
}

/*
 * A receive WQE (RQ, or a READ's landing WQE on the receive requester):
 * the 8-byte OOB @oob, @n SGEs (0: the dummy one).  Its units.
 */
static __attribute__((noinline)) uint32_t
put_recv_wqe_n(struct mana_rc_queue *q, uint64_t oob, bool check_sn,
	       const struct ibv_sge *sg, uint32_t n)
{
	uint32_t slots = n ? n : 1, i;
	struct wqe_dst d;
	uint64_t *w = wqe_begin(q, &d, gdma_wqe_size(GDMA_OOB_SMALL, slots));

	w[0] = htole64((uint64_t)(slots | 2u << 8 | (uint32_t)check_sn << 30) << 32);
	w[1] = htole64(oob);
	if (!n) {
		w[2] = htole64(GDMA_DUMMY_SGE_ADDR);
		w[3] = 0;
	}
	for (i = 0; i < n; i++) {
		w[2 + 2 * i] = sge_lo(&sg[i]);
		w[3 + 2 * i] = sge_hi(&sg[i]);
	}
	/* the unit's last slot when the SGEs leave it free */
	if (!(slots & 1))
		w[2 + 2 * slots] = w[3 + 2 * slots] = 0;
	return wqe_end(q, &d);
}

/* The same, the usual one SGE (one unit, never wrapping) inline. */
RC_INLINE uint32_t put_recv_wqe(struct mana_rc_queue *q, uint64_t oob,
				    bool check_sn, const struct ibv_sge *sg,
				    uint32_t n)
{
	uint64_t *w;

	if (n != 1)
		return put_recv_wqe_n(q, oob, check_sn, sg, n);
	w = (uint64_t *)((uint8_t *)q->buf.addr +
			 gdma_wqe_ring_offset(q->prod_bu, q->ring_size));
	w[0] = htole64((uint64_t)(1u | 2u << 8 | (uint32_t)check_sn << 30) << 32);
	w[1] = htole64(oob);
	w[2] = sge_lo(sg);
	w[3] = sge_hi(sg);
	q->prod_bu++;
	return 1;
}

static uint32_t queue_free_bu(const struct mana_rc_queue *q)
{
	uint32_t cons = __atomic_load_n(&q->cons_bu, __ATOMIC_ACQUIRE);

	return q->ring_size / GDMA_WQE_BU_SIZE - (q->prod_bu - cons);
}

/* ---- post_send -------------------------------------------------------- */

/* The checks only READs and inline sends need. */
static int check_wr_rare(struct mana_rc_qp *qp, const struct ibv_send_wr *wr,
			 uint64_t len)
{
	struct ibv_context *ibctx = qp->qp.vqp.qp.context;

	if (wr->opcode == IBV_WR_RDMA_READ && qp->uc) {
		mana_err(ibctx, "RDMA read is not a UC operation (UC QPs send and write only)");
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
		if (len > qp->max_inline_data) {
			mana_err(ibctx, "%llu bytes of inline data exceed max_inline_data %u",
				 (unsigned long long)len, qp->max_inline_data);
			return EINVAL;
		}
	}
	return 0;
}

struct rc_op {
	uint8_t wqe_type;		/* 0: not supported */
	uint8_t wc_opcode;
};

/* What one send WR asks for, from an ibv_send_wr or the ibv_wr_* calls. */
struct rc_send {
	const struct rc_op *op;
	uint32_t flags;			/* IBV_SEND_* */
	uint64_t wr_id;
	uint64_t remote_addr;		/* WRITE*, READ */
	uint32_t rkey;
	__be32 imm;			/* *_WITH_IMM */
};

static const struct rc_op rc_ops[] = {
	[IBV_WR_SEND] = { MANA_WQE_RC_SEND, IBV_WC_SEND },
	[IBV_WR_SEND_WITH_IMM] = { MANA_WQE_RC_SEND_IMM, IBV_WC_SEND },
	[IBV_WR_RDMA_WRITE] = { MANA_WQE_WRITE, IBV_WC_RDMA_WRITE },
	[IBV_WR_RDMA_WRITE_WITH_IMM] = { MANA_WQE_WRITE_IMM, IBV_WC_RDMA_WRITE },
	[IBV_WR_RDMA_READ] = { MANA_WQE_READ, IBV_WC_RDMA_READ },
};

/* Bytes of @wr's message (its SGEs: a sum only beyond one). */
static inline uint64_t wr_len(const struct ibv_send_wr *wr)
{
	uint64_t len = 0;
	int i;

	if (wr->num_sge == 1)
		return wr->sg_list[0].length;
	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	return len;
}

/* Everything about @wr that does not depend on queue space: 0 or EINVAL. */
RC_INLINE int check_wr(struct mana_rc_qp *qp, const struct ibv_send_wr *wr,
			   const struct rc_op **op, uint64_t *len)
{
	struct ibv_context *ibctx = qp->qp.vqp.qp.context;
	uint32_t opc = (uint32_t)wr->opcode;

	if (opc >= sizeof(rc_ops) / sizeof(rc_ops[0]) || !rc_ops[opc].wqe_type) {
		mana_err(ibctx, "opcode %d is not supported on MANA RC QPs (send, send with immediate, RDMA write (with immediate), RDMA read)",
			 wr->opcode);
		return EINVAL;
	}
	*op = &rc_ops[opc];
	if (wr->send_flags & ~RC_SEND_FLAGS) {
		mana_err(ibctx, "unsupported send_flags 0x%x", wr->send_flags);
		return EINVAL;
	}
	if ((uint32_t)wr->num_sge > qp->max_send_sge ||
	    (wr->num_sge && !wr->sg_list)) {
		mana_err(ibctx, "num_sge %d out of range 0..%u (or no sg_list)",
			 wr->num_sge, qp->max_send_sge);
		return EINVAL;
	}
	*len = wr_len(wr);
	if (*len > RC_MAX_MSG) {
		mana_err(ibctx, "message of %llu bytes exceeds %u",
			 (unsigned long long)*len, RC_MAX_MSG);
		return EINVAL;
	}
	if (mana_unlikely(opc == IBV_WR_RDMA_READ || (wr->send_flags & IBV_SEND_INLINE)))
		return check_wr_rare(qp, wr, *len);
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
			  const struct ibv_sge *sg, uint32_t n, bool ring_now)
{
	struct mana_rc_queue *q = &qp->q[MANA_RC_RECV_QUEUE_REQUESTER];
	uint32_t bu;

	/* receive OOB: psn_start, psn_range 0 */
	bu = put_recv_wqe(q, psn & MANA_RC_PSN_MASK, true, sg, n);
	if (ring_now)
		ring(qp, GDMA_DB_RQ, GDMA_DB_OFF_RQ, q->id,
		     gdma_wq_db_tail(q->prod_bu), 1);
	return bu;
}

/*
 * The send WQE of one WR at the SQ's producer: header, the 24-byte RC send
 * OOB (32 for WRITE_IMM), @n SGEs (0: the dummy one) and zeroed padding
 * slots to the unit's end, counted in num_sge and num_padding_sgls as
 * rdma-core lays them out.  Its units, 0 if it cannot be (too large).
 */
static __attribute__((noinline)) uint32_t
put_send_wqe(struct mana_rc_qp *qp, const struct rc_send *wr, uint32_t type,
	     uint64_t oob0, uint32_t len,
	     const struct ibv_sge *sg, uint32_t n)
{
	struct mana_rc_queue *sq = &qp->q[MANA_RC_SEND_QUEUE_REQUESTER];
	bool ximm = type == MANA_WQE_WRITE_IMM;
	uint32_t sgl = ximm ? 48 : 32, used = n ? n : 1;
	uint32_t size = (sgl + used * GDMA_SGE_SIZE + GDMA_WQE_BU_SIZE - 1) &
			~(uint32_t)(GDMA_WQE_BU_SIZE - 1);
	uint32_t slots = (size - sgl) / GDMA_SGE_SIZE, i;
	uint64_t *w, *s, hdr, o1 = 0, o2 = 0;
	struct wqe_dst d;

	if (size > GDMA_MAX_SQE_SIZE)
		return 0;
	hdr = (uint64_t)(slots - used) |
	      (uint64_t)(slots | (ximm ? 7u : 6u) << 8 | qp->mtu << 16 |
			 (uint32_t)(type != MANA_WQE_WRITE && type != MANA_WQE_READ) << 30)
	      << 32;
	switch (type) {
	case MANA_WQE_RC_SEND_IMM:
		o1 = be32toh(wr->imm);
		break;
	case MANA_WQE_WRITE:
	case MANA_WQE_WRITE_IMM:
	case MANA_WQE_READ:
		/* address high dword first, then low, rkey, dma_len */
		o1 = wr->remote_addr >> 32 |
		     wr->remote_addr << 32;
		o2 = (uint64_t)wr->rkey | (uint64_t)len << 32;
		break;
	}
	w = wqe_begin(sq, &d, size);
	w[0] = htole64(hdr);
	w[1] = htole64(oob0);
	w[2] = htole64(o1);
	w[3] = htole64(o2);
	if (ximm) {
		w[4] = htole64(be32toh(wr->imm));
		w[5] = 0;
	}
	s = w + sgl / 8;
	if (!n) {
		s[0] = htole64(GDMA_DUMMY_SGE_ADDR);
		s[1] = 0;
	}
	for (i = 0; i < n; i++) {
		s[2 * i] = sge_lo(&sg[i]);
		s[2 * i + 1] = sge_hi(&sg[i]);
	}
	for (i = used; i < slots; i++)
		s[2 * i] = s[2 * i + 1] = 0;
	return wqe_end(sq, &d);
}

/*
 * The usual send WQE, one SGE and the 24-byte OOB (64 bytes: the SGE and
 * one padding slot), straight into the ring: its 2 units, or 0 when it
 * would wrap (put_send_wqe() then writes it).
 */
RC_INLINE uint32_t put_send_wqe1(struct mana_rc_qp *qp,
				     const struct rc_send *wr, uint32_t type,
				     uint64_t oob0, uint32_t len,
				     const struct ibv_sge *sg)
{
	struct mana_rc_queue *sq = &qp->q[MANA_RC_SEND_QUEUE_REQUESTER];
	uint32_t off = gdma_wqe_ring_offset(sq->prod_bu, sq->ring_size);
	uint64_t *w = (uint64_t *)((uint8_t *)sq->buf.addr + off);
	uint64_t o1 = 0, o2 = 0;

	if (off + 2 * GDMA_WQE_BU_SIZE > sq->ring_size)
		return 0;
	if (type == MANA_WQE_RC_SEND_IMM) {
		o1 = be32toh(wr->imm);
	} else if (type != MANA_WQE_RC_SEND) {
		o1 = wr->remote_addr >> 32 | wr->remote_addr << 32;
		o2 = (uint64_t)wr->rkey | (uint64_t)len << 32;
	}
	/* 2 slots, 1 of them padding; OOB code 6; MTU; check_sn but on WRITE */
	w[0] = htole64(1 | (uint64_t)(2u | 6u << 8 | qp->mtu << 16 |
				      (uint32_t)(type != MANA_WQE_WRITE) << 30) << 32);
	w[1] = htole64(oob0);
	w[2] = htole64(o1);
	w[3] = htole64(o2);
	w[4] = sge_lo(sg);
	w[5] = sge_hi(sg);
	w[6] = 0;
	w[7] = 0;
	sq->prod_bu += 2;
	return 2;
}

/*
 * One send WR into the SQ at @head, its data in @sg/@n (inline data is
 * already in the bounce slot): 0, or ENOMEM when the SQ (or for a READ the
 * receive requester) is full.  *signaled tells whether it completes with
 * a CQE.  A READ's landing WQE is rung at once unless @defer_rreq.
 */
RC_INLINE int post_one(struct mana_rc_qp *qp, uint32_t head,
			   const struct rc_send *wr, const struct ibv_sge *sg,
			   uint32_t n, uint32_t len, bool *signaled,
			   bool defer_rreq)
{
	struct mana_rc_swr *e = &qp->swr[head & qp->swr_mask];
	const struct rc_op *op = wr->op;
	uint32_t flags = wr->flags;
	uint32_t npsn, size, rreq_bu = 0, psn = qp->sq_psn;
	bool sig = !!((flags & IBV_SEND_SIGNALED) | qp->sq_sig_all);
	uint64_t oob0;

	if (head - __atomic_load_n(&qp->sq_tail, __ATOMIC_ACQUIRE) >=
	    qp->max_send_wr)
		return ENOMEM;
	if (mana_unlikely(op->wqe_type == MANA_WQE_READ)) {
		if (queue_free_bu(&qp->q[MANA_RC_RECV_QUEUE_REQUESTER]) <
		    gdma_wqe_size_bu(GDMA_OOB_SMALL, n ? n : 1))
			return ENOMEM;
		rreq_bu = post_rreq(qp, psn, sg, n, !defer_rreq);
		n = 0;		/* the SQ WQE carries the dummy SGE */
	}
	/* one PSN per MTU (a power of two), at least one */
	npsn = len <= qp->mtu ? 1 : (len + qp->mtu - 1) >> __builtin_ctz(qp->mtu);
	/* send OOB dword 0: type, fence, signaled, solicited, PSN; dword 1 SSN */
	oob0 = (uint64_t)(op->wqe_type | !!(flags & IBV_SEND_FENCE) << 5 |
			  (uint32_t)sig << 6 | !!(flags & IBV_SEND_SOLICITED) << 7 |
			  psn << 8) | (uint64_t)qp->ssn << 32;
	if (n == 1 && op->wqe_type != MANA_WQE_WRITE_IMM &&
	    (size = put_send_wqe1(qp, wr, op->wqe_type, oob0, len, sg)))
		;
	else if (!(size = put_send_wqe(qp, wr, op->wqe_type, oob0, len, sg, n)))
		return EINVAL;

	e->wr_id = wr->wr_id;
	e->end_psn = psn = mana_rc_psn_add(psn, npsn - 1);
	e->byte_len = len;
	e->size_bu = (uint16_t)size;
	e->rreq_bu = (uint16_t)rreq_bu;
	e->opcode = op->wc_opcode;
	e->signaled = sig;
	qp->sq_psn = mana_rc_psn_add(psn, 1);
	qp->ssn = mana_rc_psn_add(qp->ssn, 1);
	*signaled = sig;
	return 0;
}

/* An ibv_send_wr, checked: its inline data gathered, then post_one(). */
RC_INLINE int post_wr(struct mana_rc_qp *qp, uint32_t head,
			  const struct ibv_send_wr *wr, const struct rc_op *op,
			  uint32_t len, bool *signaled)
{
	struct rc_send s = {
		.op = op, .flags = (uint32_t)wr->send_flags, .wr_id = wr->wr_id,
		.remote_addr = wr->wr.rdma.remote_addr, .rkey = wr->wr.rdma.rkey,
		.imm = wr->imm_data,
	};
	const struct ibv_sge *sg = wr->sg_list;
	uint32_t n = (uint32_t)wr->num_sge;
	struct ibv_sge bounce;

	if (mana_unlikely(s.flags & IBV_SEND_INLINE) && n) {
		/* the SQ must have room before the slot is written */
		if (head - __atomic_load_n(&qp->sq_tail, __ATOMIC_ACQUIRE) >=
		    qp->max_send_wr)
			return ENOMEM;
		n = 0;
		if (len) {
			gather_inline(qp, wr, head & qp->swr_mask, len, &bounce);
			sg = &bounce;
			n = 1;
		}
	}
	return post_one(qp, head, &s, sg, n, len, signaled, false);
}

int mana_rc_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr)
{
	struct mana_rc_qp *qp = to_mrcqp(ibqp);
	struct ibv_context *ibctx = ibqp->context;
	struct mana_rc_queue *sq = &qp->q[MANA_RC_SEND_QUEUE_REQUESTER];
	uint32_t head, first_head, arm_psn = 0;
	bool arm = false, signaled;
	const struct rc_op *op;
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
	if (ibqp->state == IBV_QPS_ERR) {
		ret = mana_rc_post_flushed(qp, wr, bad_wr);
		goto out;
	}
	if (ibqp->state != IBV_QPS_RTS) {
		mana_err(ibctx, "QP %u is in state %d: post_send needs RTS",
			 ibqp->qp_num, ibqp->state);
		ret = EINVAL;
		*bad_wr = wr;
		goto out;
	}
	head = first_head = qp->sq_head;
	for (; wr; wr = wr->next) {
		ret = check_wr(qp, wr, &op, &len);
		if (!ret)
			ret = post_wr(qp, head, wr, op, (uint32_t)len, &signaled);
		if (mana_unlikely(ret)) {
			if (ret == ENOMEM)
				mana_err(ibctx, "send queue of QP %u is full (max_send_wr %u)",
					 ibqp->qp_num, qp->max_send_wr);
			*bad_wr = wr;
			break;
		}
		if (signaled && !qp->armed && !arm) {
			arm = true;
			arm_psn = qp->swr[head & qp->swr_mask].end_psn;
		}
		head++;
	}
	/* one doorbell for the list (the WRs before a bad one are posted) */
	if (head != first_head) {
		__atomic_store_n(&qp->sq_head, head, __ATOMIC_RELEASE);
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
	uint32_t head, tail, count = 0;
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
	head = qp->rq_head;
	tail = __atomic_load_n(&qp->rq_tail, __ATOMIC_ACQUIRE);
	for (; wr; wr = wr->next) {
		if ((uint32_t)wr->num_sge > qp->max_recv_sge ||
		    (wr->num_sge && !wr->sg_list)) {
			mana_err(ibctx, "num_sge %d out of range 0..%u (or no sg_list)",
				 wr->num_sge, qp->max_recv_sge);
			ret = EINVAL;
		} else if (head - tail >= qp->max_recv_wr &&
			   head - (tail = __atomic_load_n(&qp->rq_tail,
							 __ATOMIC_ACQUIRE)) >=
			   qp->max_recv_wr) {
			mana_err(ibctx, "receive queue of QP %u is full (max_recv_wr %u)",
				 ibqp->qp_num, qp->max_recv_wr);
			ret = ENOMEM;
		}
		if (mana_unlikely(ret)) {
			*bad_wr = wr;
			break;
		}
		e = &qp->rwr[head & qp->rwr_mask];
		e->wr_id = wr->wr_id;
		e->start_bu = rq->prod_bu;
		e->size_bu = put_recv_wqe(rq, 0, false, wr->sg_list,
					  (uint32_t)wr->num_sge);
		head++;
		/* wqe_cnt is 8 bits: ring before it wraps */
		if (mana_unlikely(++count == 255)) {
			__atomic_store_n(&qp->rq_head, head, __ATOMIC_RELEASE);
			ring(qp, GDMA_DB_RQ, GDMA_DB_OFF_RQ, rq->id,
			     gdma_wq_db_tail(rq->prod_bu), (uint8_t)count);
			count = 0;
		}
	}
	if (count) {
		__atomic_store_n(&qp->rq_head, head, __ATOMIC_RELEASE);
		ring(qp, GDMA_DB_RQ, GDMA_DB_OFF_RQ, rq->id,
		     gdma_wq_db_tail(rq->prod_bu), (uint8_t)count);
	}
out:
	mana_spin_unlock(&qp->rq_lock);
	return ret;
}

/* ---- ibv_wr_* --------------------------------------------------------- */

/*
 * Each WR goes into the SQ as its data is set (or as the next WR or
 * wr_complete comes, for one without data), under the SQ lock that
 * ibv_wr_start takes and ibv_wr_complete/ibv_wr_abort release, as other
 * providers do.  The batch is all or nothing: the first error is kept and
 * returned by ibv_wr_complete, which then rolls the producer back, as
 * ibv_wr_abort does; nothing is published (sq_head, doorbells) before
 * ibv_wr_complete.
 */
static inline struct mana_rc_qp *ex_to_rcqp(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct mana_rc_qp, qp.vqp.qp_ex);
}

static void wr_fail(struct mana_rc_qp *qp, int err, const char *what)
{
	qp->wr_pending = false;
	qp->wr_ok = false;
	if (!qp->wr_err) {
		qp->wr_err = err;
		mana_err(qp->qp.vqp.qp.context, "ibv_wr_*: %s", what);
	}
}

static void rc_wr_start(struct ibv_qp_ex *qpx)
{
	struct mana_rc_qp *qp = ex_to_rcqp(qpx);

	mana_spin_lock(&qp->sq_lock);
	qp->wr_open = true;
	qp->wr_ok = true;
	qp->wr_pending = false;
	qp->wr_arm = false;
	qp->wr_err = 0;
	qp->wr_head = qp->sq_head;
	qp->wr_prod_bu = qp->q[MANA_RC_SEND_QUEUE_REQUESTER].prod_bu;
	qp->wr_rreq_prod_bu = qp->q[MANA_RC_RECV_QUEUE_REQUESTER].prod_bu;
	qp->wr_psn = qp->sq_psn;
	qp->wr_ssn = qp->ssn;
}

/* The pending WR into the SQ with data @sg/@n, @len bytes. */
RC_INLINE void wr_finish(struct mana_rc_qp *qp, const struct ibv_sge *sg,
		      uint32_t n, uint32_t len)
{
	struct rc_send s = {
		.op = &rc_ops[qp->wr_cur.opcode], .flags = qp->wr_cur.flags,
		.wr_id = qp->wr_cur.wr_id, .remote_addr = qp->wr_cur.remote_addr,
		.rkey = qp->wr_cur.rkey, .imm = qp->wr_cur.imm,
	};
	bool sig;
	int ret;

	qp->wr_pending = false;
	ret = post_one(qp, qp->wr_head, &s, sg, n, len, &sig, true);
	if (mana_unlikely(ret)) {
		wr_fail(qp, ret, ret == ENOMEM ?
			"the send queue is full (more WRs than room for)" :
			"the WR cannot be posted");
		return;
	}
	if (sig && !qp->armed && !qp->wr_arm) {
		qp->wr_arm = true;
		qp->wr_arm_psn = qp->swr[qp->wr_head & qp->swr_mask].end_psn;
	}
	qp->wr_head++;
}

/* wr_new() when a WR is pending, the batch failed, or the flags are bad. */
static __attribute__((noinline)) bool wr_new_slow(struct mana_rc_qp *qp,
						  enum ibv_wr_opcode op)
{
	struct ibv_qp_ex *qpx = &qp->qp.vqp.qp_ex;
	uint32_t flags = qpx->wr_flags;

	if (!qp->wr_open) {
		wr_fail(qp, EINVAL, "a WR outside ibv_wr_start/ibv_wr_complete");
		return false;
	}
	if (qp->wr_pending)
		wr_finish(qp, NULL, 0, 0);	/* the last one had no data */
	if (qp->wr_err)
		return false;
	if (flags & ~RC_SEND_FLAGS) {
		wr_fail(qp, EINVAL, "unsupported wr_flags");
		return false;
	}
	qp->wr_pending = true;
	qp->wr_cur.opcode = (uint8_t)op;
	qp->wr_cur.flags = flags;
	qp->wr_cur.wr_id = qpx->wr_id;
	return true;
}

/*
 * Opcode @op for the next WR, or false (wr_err set).  wr_pending implies
 * an open batch without error (wr_fail clears it).
 */
RC_INLINE bool wr_new(struct mana_rc_qp *qp, enum ibv_wr_opcode op)
{
	struct ibv_qp_ex *qpx = &qp->qp.vqp.qp_ex;
	uint32_t flags = qpx->wr_flags;

	if (mana_unlikely(qp->wr_pending | !qp->wr_ok | !!(flags & ~RC_SEND_FLAGS)))
		return wr_new_slow(qp, op);
	qp->wr_pending = true;
	qp->wr_cur.opcode = (uint8_t)op;
	qp->wr_cur.flags = flags;
	qp->wr_cur.wr_id = qpx->wr_id;
	return true;
}

static __attribute__((noinline)) void wr_cur_fail(struct mana_rc_qp *qp)
{
	wr_fail(qp, EINVAL, "data set before an opcode (ibv_wr_send, ...)");
}

/* Whether data may be set on a pending WR (else wr_err is set). */
RC_INLINE bool wr_cur(struct mana_rc_qp *qp)
{
	if (mana_unlikely(!qp->wr_pending)) {
		wr_cur_fail(qp);
		return false;
	}
	return true;
}

static void rc_wr_send(struct ibv_qp_ex *qpx)
{
	wr_new(ex_to_rcqp(qpx), IBV_WR_SEND);
}

static void rc_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct mana_rc_qp *qp = ex_to_rcqp(qpx);

	if (wr_new(qp, IBV_WR_SEND_WITH_IMM))
		qp->wr_cur.imm = imm;
}

RC_INLINE void rc_wr_rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op,
			  uint32_t rkey, uint64_t addr, __be32 imm)
{
	struct mana_rc_qp *qp = ex_to_rcqp(qpx);

	if (!wr_new(qp, op))
		return;
	if (op == IBV_WR_RDMA_READ && (qp->wr_cur.flags & IBV_SEND_INLINE)) {
		wr_fail(qp, EINVAL, "IBV_SEND_INLINE with RDMA read");
		return;
	}
	qp->wr_cur.rkey = rkey;
	qp->wr_cur.remote_addr = addr;
	if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
		qp->wr_cur.imm = imm;
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
	struct mana_rc_qp *qp = ex_to_rcqp(qpx);

	if (mana_unlikely(qp->uc)) {
		wr_fail(qp, EINVAL, "RDMA read is not a UC operation (UC QPs send and write only)");
		return;
	}
	rc_wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, addr, 0);
}

static void rc_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n,
			       const struct ibv_sge *sg)
{
	struct mana_rc_qp *qp = ex_to_rcqp(qpx);
	uint64_t len = 0;
	size_t i;

	if (!wr_cur(qp))
		return;
	if (n > qp->max_send_sge) {
		wr_fail(qp, EINVAL, "more SGEs than max_send_sge");
		return;
	}
	if (qp->wr_cur.opcode == IBV_WR_RDMA_READ && n > MANA_MAX_RX_SGE) {
		wr_fail(qp, EINVAL, "an RDMA read lands in a receive WQE: too many SGEs");
		return;
	}
	for (i = 0; i < n; i++)
		len += sg[i].length;
	if (len > RC_MAX_MSG) {
		wr_fail(qp, EINVAL, "message longer than 2^31 bytes");
		return;
	}
	wr_finish(qp, sg, (uint32_t)n, (uint32_t)len);
}

static void rc_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr,
			  uint32_t length)
{
	struct mana_rc_qp *qp = ex_to_rcqp(qpx);
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };
	struct mana_rc_queue *sq = &qp->q[MANA_RC_SEND_QUEUE_REQUESTER];
	const struct rc_op *op = &rc_ops[qp->wr_cur.opcode];
	uint32_t head = qp->wr_head, psn = qp->sq_psn, flags = qp->wr_cur.flags;
	uint32_t off = gdma_wqe_ring_offset(sq->prod_bu, sq->ring_size);
	uint64_t *w = (uint64_t *)((uint8_t *)sq->buf.addr + off);
	struct mana_rc_swr *e = &qp->swr[head & qp->swr_mask];
	bool sig;

	/* the usual: one packet's SEND or WRITE, not at the ring's end, room */
	if (mana_likely(qp->wr_pending && length <= qp->mtu && qp->max_send_sge &&
			(op->wqe_type == MANA_WQE_RC_SEND ||
			 op->wqe_type == MANA_WQE_WRITE) &&
			off + 2 * GDMA_WQE_BU_SIZE <= sq->ring_size &&
			head - __atomic_load_n(&qp->sq_tail, __ATOMIC_ACQUIRE) <
			qp->max_send_wr)) {
		sig = !!((flags & IBV_SEND_SIGNALED) | qp->sq_sig_all);
		w[0] = htole64(1 | (uint64_t)(2u | 6u << 8 | qp->mtu << 16 |
			       (uint32_t)(op->wqe_type != MANA_WQE_WRITE) << 30) << 32);
		w[1] = htole64((uint64_t)(op->wqe_type | !!(flags & IBV_SEND_FENCE) << 5 |
					  (uint32_t)sig << 6 |
					  !!(flags & IBV_SEND_SOLICITED) << 7 | psn << 8) |
			       (uint64_t)qp->ssn << 32);
		if (op->wqe_type == MANA_WQE_WRITE) {
			w[2] = htole64(qp->wr_cur.remote_addr >> 32 |
				       qp->wr_cur.remote_addr << 32);
			w[3] = htole64((uint64_t)qp->wr_cur.rkey | (uint64_t)length << 32);
		} else {
			w[2] = w[3] = 0;
		}
		w[4] = htole64(addr);
		w[5] = htole64((uint64_t)lkey | (uint64_t)length << 32);
		w[6] = w[7] = 0;
		sq->prod_bu += 2;
		e->wr_id = qp->wr_cur.wr_id;
		e->end_psn = psn;
		e->byte_len = length;
		e->size_bu = 2;
		e->rreq_bu = 0;
		e->opcode = op->wc_opcode;
		e->signaled = sig;
		qp->sq_psn = mana_rc_psn_add(psn, 1);
		qp->ssn = mana_rc_psn_add(qp->ssn, 1);
		if (sig && !qp->armed && !qp->wr_arm) {
			qp->wr_arm = true;
			qp->wr_arm_psn = psn;
		}
		qp->wr_head = head + 1;
		qp->wr_pending = false;
		return;
	}
	if (mana_unlikely(!qp->wr_pending | (length > RC_MAX_MSG) |
			  !qp->max_send_sge)) {
		if (wr_cur(qp))
			wr_fail(qp, EINVAL, "an SGE on a QP of max_send_sge 0, or longer than 2^31 bytes");
		return;
	}
	wr_finish(qp, &sge, 1, length);
}

static void rc_wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t n,
				       const struct ibv_data_buf *buf)
{
	struct mana_rc_qp *qp = ex_to_rcqp(qpx);
	struct ibv_sge sge;
	uint8_t *dst;
	size_t i, len = 0;

	if (!wr_cur(qp))
		return;
	for (i = 0; i < n; i++)
		len += buf[i].length;
	if (len > qp->max_inline_data || qp->wr_cur.opcode == IBV_WR_RDMA_READ) {
		wr_fail(qp, EINVAL, "inline data longer than max_inline_data (or on a read)");
		return;
	}
	if (!len) {
		wr_finish(qp, NULL, 0, 0);
		return;
	}
	/* the bounce slot is the WR's own only once the SQ has room for it */
	if (qp->wr_head - __atomic_load_n(&qp->sq_tail, __ATOMIC_ACQUIRE) >=
	    qp->max_send_wr) {
		qp->wr_pending = false;
		wr_fail(qp, ENOMEM, "the send queue is full (more WRs than room for)");
		return;
	}
	/* copied now: the caller may reuse its buffers when this returns */
	dst = qp->inline_buf + (size_t)(qp->wr_head & qp->swr_mask) * qp->inline_stride;
	sge.addr = (uintptr_t)dst;
	sge.length = (uint32_t)len;
	sge.lkey = qp->inline_mr.ibv_mr.lkey;
	for (i = 0; i < n; i++) {
		if (buf[i].length)
			memcpy(dst, buf[i].addr, buf[i].length);
		dst += buf[i].length;
	}
	wr_finish(qp, &sge, 1, (uint32_t)len);
}

static void rc_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				  size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	rc_wr_set_inline_data_list(qpx, 1, &buf);
}

/* Undo an open batch: nothing of it was published. */
static void wr_rollback(struct mana_rc_qp *qp)
{
	qp->q[MANA_RC_SEND_QUEUE_REQUESTER].prod_bu = qp->wr_prod_bu;
	qp->q[MANA_RC_RECV_QUEUE_REQUESTER].prod_bu = qp->wr_rreq_prod_bu;
	qp->sq_psn = qp->wr_psn;
	qp->ssn = qp->wr_ssn;
	qp->wr_open = false;
	qp->wr_ok = false;
	qp->wr_pending = false;
}

/*
 * A batch built on a QP in ERR is flushed, as mana_rc_post_send() flushes
 * a list: its WQEs never reach the device (the producers go back), its
 * shadow entries stay as flushed ones (no WQE, the next unsent PSN) that
 * the poller completes with IBV_WC_WR_FLUSH_ERR in order.
 */
static void wr_flush_batch(struct mana_rc_qp *qp)
{
	uint32_t head = qp->wr_head, i;

	wr_rollback(qp);
	for (i = qp->sq_head; i != head; i++) {
		struct mana_rc_swr *e = &qp->swr[i & qp->swr_mask];

		mana_rc_swr_flushed(qp, e, e->wr_id, e->opcode);
	}
	__atomic_store_n(&qp->sq_head, head, __ATOMIC_RELEASE);
}

static int rc_wr_complete(struct ibv_qp_ex *qpx)
{
	struct mana_rc_qp *qp = ex_to_rcqp(qpx);
	struct ibv_qp *ibqp = &qp->qp.vqp.qp;
	struct mana_rc_queue *sq = &qp->q[MANA_RC_SEND_QUEUE_REQUESTER];
	struct mana_rc_queue *rreq = &qp->q[MANA_RC_RECV_QUEUE_REQUESTER];
	uint32_t i, rtail;
	int ret;

	if (!qp->wr_open)
		return EINVAL;
	if (qp->wr_pending)
		wr_finish(qp, NULL, 0, 0);
	ret = qp->wr_err;
	if (!ret && ibqp->state == IBV_QPS_ERR) {
		wr_flush_batch(qp);
		mana_spin_unlock(&qp->sq_lock);
		return 0;
	}
	if (!ret && ibqp->state != IBV_QPS_RTS) {
		mana_err(ibqp->context, "QP %u is in state %d: post_send needs RTS",
			 ibqp->qp_num, ibqp->state);
		ret = EINVAL;
	}
	if (ret) {
		wr_rollback(qp);
		mana_spin_unlock(&qp->sq_lock);
		return ret;
	}
	qp->wr_open = false;
	qp->wr_ok = false;
	if (qp->wr_head != qp->sq_head) {
		/* READs' landing WQEs first, one doorbell each as post_send does */
		rtail = qp->wr_rreq_prod_bu;
		for (i = qp->sq_head; rreq->prod_bu != qp->wr_rreq_prod_bu &&
		     i != qp->wr_head; i++) {
			if (!qp->swr[i & qp->swr_mask].rreq_bu)
				continue;
			rtail += qp->swr[i & qp->swr_mask].rreq_bu;
			ring(qp, GDMA_DB_RQ, GDMA_DB_OFF_RQ, rreq->id,
			     gdma_wq_db_tail(rtail), 1);
		}
		__atomic_store_n(&qp->sq_head, qp->wr_head, __ATOMIC_RELEASE);
		atomic_store_explicit(&qp->rollback->right,
				      sq->prod_bu * GDMA_WQE_BU_SIZE,
				      memory_order_relaxed);
		ring(qp, GDMA_DB_SQ, GDMA_DB_OFF_SQ, sq->id,
		     gdma_wq_db_tail(sq->prod_bu), 0);
	}
	if (qp->wr_arm) {
		qp->armed = true;
		mana_rc_ring_arm(qp, qp->wr_arm_psn);
	}
	mana_spin_unlock(&qp->sq_lock);
	return 0;
}

static void rc_wr_abort(struct ibv_qp_ex *qpx)
{
	struct mana_rc_qp *qp = ex_to_rcqp(qpx);

	if (!qp->wr_open)
		return;
	wr_rollback(qp);
	mana_spin_unlock(&qp->sq_lock);
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
