// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The send half of the verbs datapath: ibv_post_send and ibv_wr_* on raw
 * packet QPs.
 *
 * Each call takes the QP's lock once and rings at most one doorbell.  WQEs
 * come from templates the validating encoders of gdma.h made at creation;
 * a one-SGE send without checksum offload or inline data (the common case)
 * is four stores into the ring and its WR id filed under its unit.  Every
 * other send takes the general path.
 */
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "datapath.h"
#include "inet.h"
#include "rc.h"

/* ---- setup ------------------------------------------------------------- */

static int sq_oob_templates(struct mana_qp *qp)
{
	struct mana_tx_oob oob = {
		.pkt_fmt = MANA_SHORT_PKT_FMT,
		.vcq_num = qp->send_cq->cqid,
		.vsq_frame = mana_tx_vsq_frame(qp->sq_id),
		.short_vp_offset = qp->tx_vp_offset,
	};
	/* room for the long form: the encoder writes 8 or 24 bytes */
	uint8_t oob_wire[GDMA_OOB_LARGE];
	uint64_t signaled;
	unsigned int i;

	if (mana_tx_oob_encode(&oob, oob_wire))
		return EINVAL;
	signaled = gdma_ld64(oob_wire);
	for (i = 0; i < sizeof(qp->oob_by_flags) / sizeof(qp->oob_by_flags[0]); i++)
		qp->oob_by_flags[i] = (i & IBV_SEND_SIGNALED) || qp->sq_sig_all ?
				      signaled : signaled | MANA_TXOOB_SUPPRESS_CQE;
	return 0;
}

/* One bounce slot per ring unit, registered like user memory. */
static int sq_inline_area(struct mana_context *ctx, struct mana_qp *qp,
			  struct mana_pd *pd)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	size_t len;
	int ret;

	qp->inline_stride = (qp->max_inline_data + 63) & ~63u;
	len = (size_t)qp->inline_stride * qp->ring.cap_bu;
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

int mana_sq_init(struct mana_context *ctx, struct mana_qp *qp,
		 struct mana_pd *pd)
{
	int ret;

	if (sq_oob_templates(qp))
		return EINVAL;
	ret = mana_ring_init(&qp->ring, qp->sq_buf.size, qp->max_send_wr,
			     qp->max_send_sge, GDMA_SQ);
	if (ret)
		return ret;
	qp->sig_mask = mana_roundup_pow2(qp->max_send_wr) - 1;
	qp->sig_ring = calloc(qp->sig_mask + 1, sizeof(*qp->sig_ring));
	ret = ENOMEM;
	if (!qp->sig_ring)
		goto err_free;
	qp->ring.db_page = mana_get_db_page(ctx);
	if (!qp->ring.db_page) {
		ret = errno ? errno : EIO;
		goto err_free;
	}
	if (qp->max_inline_data) {
		ret = sq_inline_area(ctx, qp, pd);
		if (ret)
			goto err_free;
	}
	return 0;

err_free:
	free(qp->sig_ring);
	qp->sig_ring = NULL;
	mana_ring_fini(&qp->ring);
	return ret;
}

void mana_sq_fini(struct mana_qp *qp)
{
	if (qp->inline_buf) {
		ibv_cmd_dereg_mr(&qp->inline_mr);
		free(qp->inline_buf);
	}
	free(qp->sig_ring);
	mana_ring_fini(&qp->ring);
}

/* ---- checksum offload -------------------------------------------------- */

/*
 * IBV_SEND_IP_CSUM: find the IP and TCP/UDP headers in the frame's first
 * buffer and say which checksums to compute.  MANA completes TCP/UDP
 * checksums from the pseudo-header sum, which must be in the checksum field
 * (as DPDK's net/mana writes it); write it there.
 */
static int tx_csum_bits(uint8_t *f, uint32_t len, uint64_t *bits)
{
	uint32_t l2 = 14, l3, l4_len, sum;
	uint16_t type;
	uint8_t proto;

	if (len < 14)
		return EINVAL;
	type = (uint16_t)(f[12] << 8 | f[13]);
	if (type == 0x8100 && len >= 18) {
		type = (uint16_t)(f[16] << 8 | f[17]);
		l2 = 18;
	}
	if (type == 0x0800) {
		if (len < l2 + 20 || (f[l2] >> 4) != 4)
			return EINVAL;
		l3 = (f[l2] & 0xf) * 4;
		proto = f[l2 + 9];
		*bits |= MANA_TXOOB_IPV4 | MANA_TXOOB_IP_CSUM;
		l4_len = ((uint32_t)f[l2 + 2] << 8 | f[l2 + 3]) - l3;
		sum = mana_csum_add(0, f + l2 + 12, 8);
	} else if (type == 0x86dd) {
		if (len < l2 + 40)
			return EINVAL;
		l3 = 40;
		proto = f[l2 + 6];
		*bits |= MANA_TXOOB_IPV6;
		l4_len = (uint32_t)f[l2 + 4] << 8 | f[l2 + 5];
		sum = mana_csum_add(0, f + l2 + 8, 32);
	} else {
		return EINVAL;
	}
	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP)
		return 0;	/* IP header checksum only */
	if (l2 + l3 > MANA_TXOOB_TRANS_OFF_MAX ||
	    len < l2 + l3 + (proto == IPPROTO_TCP ? 20 : 8))
		return EINVAL;
	sum += proto + l4_len;
	sum = mana_csum_fold(sum);
	if (proto == IPPROTO_TCP) {
		*bits |= MANA_TXOOB_TCP_CSUM;
		mana_put_be16(f + l2 + l3 + 16, (uint16_t)sum);
	} else {
		*bits |= MANA_TXOOB_UDP_CSUM;
		mana_put_be16(f + l2 + l3 + 6, (uint16_t)sum);
	}
	*bits |= (uint64_t)(l2 + l3) << MANA_TXOOB_TRANS_OFF_SHIFT;
	return 0;
}

static int csum_for(struct mana_qp *qp, void *first, uint32_t len, int flags,
		    uint64_t *bits)
{
	if (!(flags & IBV_SEND_IP_CSUM))
		return 0;
	if (tx_csum_bits(first, len, bits)) {
		mana_err(qp->vqp.qp.context,
			 "IBV_SEND_IP_CSUM: no IPv4/IPv6 header in the first %u bytes",
			 len);
		return EINVAL;
	}
	return 0;
}

/* ---- building WQEs ----------------------------------------------------- */

/*
 * What the one-SGE path reads per WQE, copied out of the QP so that the
 * stores into the ring (which may alias anything) do not force reloads.
 */
struct sq_fast {
	uint8_t *ring;
	struct mana_wqe_info *wqes;
	struct mana_sq_signaled *sig_ring;
	uint32_t ring_mask, sig_mask;
	uint64_t hdr1;
	uint64_t oob[2];
};

static inline void sq_fast_init(const struct mana_qp *qp, struct sq_fast *f)
{
	f->ring = qp->sq_buf.addr;
	f->wqes = qp->ring.wqes;
	f->sig_ring = qp->sig_ring;
	f->ring_mask = qp->ring.mask;
	f->sig_mask = qp->sig_mask;
	f->hdr1 = qp->ring.hdr1;
	f->oob[0] = qp->oob_by_flags[0];
	f->oob[1] = qp->oob_by_flags[IBV_SEND_SIGNALED];
}

_Static_assert(MANA_SEND_FAST_FLAGS == 7, "oob_by_flags has 8 entries");

static inline uint64_t oob_for(const struct mana_qp *qp, unsigned int flags)
{
	return qp->oob_by_flags[flags & MANA_SEND_FAST_FLAGS];
}

/* A signaled WQE starting at unit @head: the poller retires up to it. */
static inline void sq_signal(struct mana_sq_signaled *sig_ring, uint32_t sig_mask,
			     struct mana_cursor *c, uint32_t head)
{
	sig_ring[c->sig_head++ & sig_mask] =
		(struct mana_sq_signaled){ head, head - c->delta };
}

/* File the WQE at ring byte @off (the cursor's unit) and move past it. */
static inline void sq_commit(struct mana_wqe_info *wqes,
			     struct mana_sq_signaled *sig_ring, uint32_t sig_mask,
			     struct mana_cursor *c, uint32_t off,
			     uint32_t size, uint64_t oob, uint64_t wr_id)
{
	mana_file_wqe(wqes, off, size, wr_id);
	if (!(oob & MANA_TXOOB_SUPPRESS_CQE))
		sq_signal(sig_ring, sig_mask, c, c->head);
	mana_cursor_advance(c, size);
}

/*
 * The common send: one SGE, no checksum offload, no inline data, one
 * unit at @head.  The caller moves head on and files a signaled WQE.
 */
static inline void sq_put1(const struct sq_fast *f, uint32_t head,
			   uint64_t oob, uint64_t addr, uint32_t lkey,
			   uint32_t len, uint64_t wr_id)
{
	uint32_t off = mana_ring_off(head, f->ring_mask);

	mana_put_wqe1(f->ring, off, f->hdr1, oob, addr, lkey, len);
	mana_file_wqe(f->wqes, off, 1, wr_id);
}

/* Any send of @n SGEs (n >= 1), checksum bits already in @oob. */
static int sq_put(struct mana_qp *qp, struct mana_cursor *c, uint64_t oob,
		  const struct ibv_sge *sg, uint32_t n, uint64_t wr_id)
{
	uint32_t off;

	if (c->head == c->limit)
		return ENOMEM;
	off = mana_ring_off(c->head, qp->ring.mask);
	mana_put_wqe(qp->sq_buf.addr, qp->ring.mask, off,
		     mana_wqe_hdr(qp->ring.hdr_template, n), oob, sg, n);
	sq_commit(qp->ring.wqes, qp->sig_ring, qp->sig_mask, c, off,
		  mana_wqe_units(n), oob, wr_id);
	return 0;
}

/* IBV_SEND_INLINE: the data goes to the bounce slot of the WQE's unit. */
static int sq_put_inline(struct mana_qp *qp, struct mana_cursor *c,
			 const struct ibv_data_buf *bufs, size_t n,
			 unsigned int flags, uint64_t wr_id)
{
	uint8_t *slot;
	uint64_t bits = 0;
	size_t total = 0, i;
	struct ibv_sge sge;

	if (!qp->inline_buf) {
		mana_err(qp->vqp.qp.context,
			 "inline data on a QP created with max_inline_data 0");
		return EINVAL;
	}
	if (!n) {
		mana_err(qp->vqp.qp.context, "inline send without data");
		return EINVAL;
	}
	if (c->head == c->limit)
		return ENOMEM;
	slot = qp->inline_buf +
	       (size_t)(c->head & (qp->ring.cap_bu - 1)) * qp->inline_stride;
	for (i = 0; i < n; i++) {
		if (bufs[i].length > qp->max_inline_data - total) {
			mana_err(qp->vqp.qp.context, "inline data exceeds %u bytes",
				 qp->max_inline_data);
			return EINVAL;
		}
		memcpy(slot + total, bufs[i].addr, bufs[i].length);
		total += bufs[i].length;
	}
	if (csum_for(qp, slot, (uint32_t)total, flags, &bits))
		return EINVAL;
	sge = (struct ibv_sge){ .addr = (uintptr_t)slot, .length = (uint32_t)total,
				.lkey = qp->inline_mr.ibv_mr.lkey };
	return sq_put(qp, c, oob_for(qp, flags) | bits, &sge, 1, wr_id);
}

static void ring_sq(struct mana_qp *qp, const struct mana_cursor *c)
{
	mana_store_index(&qp->sig_head, c->sig_head);
	mana_ring_publish(&qp->ring, c);
	mana_ring_doorbell(qp->ring.db_page, GDMA_DB_OFF_SQ,
			   (uint64_t)qp->sq_id |
			   (uint64_t)(c->head * GDMA_WQE_BU_SIZE) << 32);
}

static void cursor_start(struct mana_qp *qp, struct mana_cursor *c)
{
	mana_cursor_start(&qp->ring, qp->send_limit, c);
	c->sig_head = qp->sig_head;
}

/* ---- ibv_post_send ----------------------------------------------------- */

static int post_general(struct mana_qp *qp, struct mana_cursor *c,
			struct ibv_send_wr *wr)
{
	struct ibv_data_buf bufs[GDMA_MAX_TX_SGE];
	uint64_t bits = 0;
	int i;

	if (wr->opcode != IBV_WR_SEND) {
		mana_err(qp->vqp.qp.context, "opcode %d is not supported (SEND only)",
			 wr->opcode);
		return EINVAL;
	}
	if (wr->send_flags & ~MANA_SEND_FLAGS) {
		mana_err(qp->vqp.qp.context, "unsupported send flags 0x%x",
			 wr->send_flags);
		return EINVAL;
	}
	if (wr->send_flags & IBV_SEND_INLINE) {
		if (wr->num_sge < 0 || wr->num_sge > GDMA_MAX_TX_SGE) {
			mana_err(qp->vqp.qp.context, "inline send with %d buffers",
				 wr->num_sge);
			return EINVAL;
		}
		for (i = 0; i < wr->num_sge; i++) {
			bufs[i].addr = (void *)(uintptr_t)wr->sg_list[i].addr;
			bufs[i].length = wr->sg_list[i].length;
		}
		return sq_put_inline(qp, c, bufs, wr->num_sge, wr->send_flags,
				     wr->wr_id);
	}
	if (wr->num_sge <= 0 || (uint32_t)wr->num_sge > qp->max_send_sge) {
		mana_err(qp->vqp.qp.context, "%d SGEs, the QP takes 1..%u",
			 wr->num_sge, qp->max_send_sge);
		return EINVAL;
	}
	if (csum_for(qp, (void *)(uintptr_t)wr->sg_list[0].addr,
		     wr->sg_list[0].length, wr->send_flags, &bits))
		return EINVAL;
	return sq_put(qp, c, oob_for(qp, wr->send_flags) | bits, wr->sg_list,
		      wr->num_sge, wr->wr_id);
}

/* Not a raw send QP: an RC QP posts in rc_send.c, an RSS QP cannot send. */
static int post_not_raw(struct mana_qp *qp, struct ibv_send_wr *wr,
			struct ibv_send_wr **bad_wr)
{
	if (qp->kind == MANA_QP_RC)
		return mana_rc_post_send(&qp->vqp.qp, wr, bad_wr);
	if (!wr) {
		if (bad_wr)
			*bad_wr = NULL;
		return EINVAL;
	}
	mana_err(qp->vqp.qp.context, "an RSS QP cannot send");
	*bad_wr = wr;
	return EINVAL;
}

static int post_check(struct mana_qp *qp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr)
{
	struct ibv_context *ibctx = qp->vqp.qp.context;

	if (!wr) {
		if (bad_wr)
			*bad_wr = NULL;
		return EINVAL;
	}
	if (mana_ctx_fatal(ibctx)) {
		*bad_wr = wr;
		return mana_fatal_error(ibctx);
	}
	return 0;
}

int mana_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	struct mana_qp *qp = to_mqp(ibqp);
	struct mana_cursor c;
	uint32_t head, limit;
	struct sq_fast f;
	uint64_t oob;
	int ret;

	/* the one test the raw path makes of the QP's kind */
	if (mana_unlikely(qp->kind != MANA_QP_RAW_SQ))
		return post_not_raw(qp, wr, bad_wr);
	ret = post_check(qp, wr, bad_wr);
	if (ret)
		return ret;

	mana_spin_lock(&qp->ring.lock);
	sq_fast_init(qp, &f);
	cursor_start(qp, &c);
	/* head and limit in registers; the rest of the cursor changes rarely */
	head = c.head;
	limit = c.limit;
	for (; wr; wr = wr->next) {
		if (mana_likely(wr->opcode == IBV_WR_SEND && wr->num_sge == 1 &&
				!(wr->send_flags & ~MANA_SEND_FAST_FLAGS) &&
				head != limit)) {
			oob = f.oob[!!(wr->send_flags & IBV_SEND_SIGNALED)];
			sq_put1(&f, head, oob, wr->sg_list->addr, wr->sg_list->lkey,
				wr->sg_list->length, wr->wr_id);
			if (!(oob & MANA_TXOOB_SUPPRESS_CQE))
				sq_signal(f.sig_ring, f.sig_mask, &c, head);
			head++;
			continue;
		}
		c.head = head;
		c.limit = limit;
		ret = post_general(qp, &c, wr);
		head = c.head;
		limit = c.limit;
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	c.head = head;
	/* one doorbell for every WQE that made it, none for the rest */
	if (c.head != qp->ring.head_bu)
		ring_sq(qp, &c);
	mana_spin_unlock(&qp->ring.lock);
	return ret;
}

int mana_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	if (mana_qp_type_rnic(ibqp->qp_type))
		return mana_rc_post_recv(ibqp, wr, bad_wr);
	mana_err(ibqp->context,
		 "raw QPs have no receive queue: post to the WQs of the RSS QP (ibv_post_wq_recv)");
	if (bad_wr)
		*bad_wr = wr;
	return EOPNOTSUPP;
}

/* ---- ibv_wr_* ---------------------------------------------------------- */

/*
 * WQEs are built past head_bu with the cursor in the QP (wr_cur) and
 * published by wr_complete, so a poller never sees half a batch and
 * wr_abort has nothing to undo.
 */
static inline struct mana_qp *ex_to_mqp(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct mana_qp, vqp.qp_ex);
}

static void wr_fail(struct mana_qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
	qp->wr_state = MANA_WR_FAILED;
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct mana_qp *qp = ex_to_mqp(qpx);

	mana_spin_lock(&qp->ring.lock);
	cursor_start(qp, &qp->wr_cur);
	qp->wr_err = 0;
	qp->wr_state = MANA_WR_IDLE;
	if (mana_ctx_fatal(qpx->qp_base.context))
		wr_fail(qp, EIO);
}

static __attribute__((noinline)) void wr_send_slow(struct mana_qp *qp,
						    unsigned int flags)
{
	if (qp->wr_state == MANA_WR_FAILED)
		return;
	if (qp->wr_state != MANA_WR_IDLE) {
		mana_err(qp->vqp.qp.context, "ibv_wr_send: the previous send has no data");
		wr_fail(qp, EINVAL);
		return;
	}
	/* INLINE is what wr_set_inline_data says; the flag adds nothing */
	if (flags & ~MANA_SEND_FLAGS) {
		mana_err(qp->vqp.qp.context, "unsupported send flags 0x%x", flags);
		wr_fail(qp, EINVAL);
		return;
	}
	qp->wr_pending_id = qp->vqp.qp_ex.wr_id;
	qp->wr_pending_flags = flags;
	qp->wr_state = MANA_WR_OPEN_SLOW;
}

/*
 * The common send: header, OOB and WR id go straight to the WQE at the
 * cursor (past the published head: nobody looks there yet), leaving the
 * SGE to wr_set_sge.  A full ring, other flags or a send out of turn take
 * the slow path, which answers at the data.
 */
static void wr_send(struct ibv_qp_ex *qpx)
{
	struct mana_qp *qp = ex_to_mqp(qpx);
	unsigned int flags = qpx->wr_flags;
	uint32_t head = qp->wr_cur.head, off;
	uint8_t *wqe;

	if (mana_unlikely(qp->wr_state != MANA_WR_IDLE ||
			  (flags & ~MANA_SEND_FAST_FLAGS) ||
			  head == qp->wr_cur.limit)) {
		wr_send_slow(qp, flags);
		return;
	}
	off = mana_ring_off(head, qp->ring.mask);
	wqe = qp->sq_buf.addr + off;
	gdma_st64(wqe, qp->ring.hdr1);
	gdma_st64(wqe + 8, oob_for(qp, flags));
	mana_file_wqe(qp->ring.wqes, off, 1, qpx->wr_id);
	qp->wr_state = (uintptr_t)(wqe + 16);
}

/* Data for the open send through the general path. */
static void wr_data(struct mana_qp *qp, const struct ibv_sge *sg, size_t n,
		    const struct ibv_data_buf *bufs)
{
	unsigned int flags = qp->wr_pending_flags;
	uint64_t bits = 0;
	int ret;

	if (qp->wr_state == MANA_WR_FAILED)
		return;
	if (qp->wr_state == MANA_WR_IDLE) {
		mana_err(qp->vqp.qp.context, "data without ibv_wr_send");
		wr_fail(qp, EINVAL);
		return;
	}
	if (qp->wr_state >= MANA_WR_STATES) {
		/* what wr_send put in the WQE; the general path rewrites it */
		flags = gdma_ld64((uint8_t *)qp->wr_state - 8) & MANA_TXOOB_SUPPRESS_CQE ?
			0 : IBV_SEND_SIGNALED;
		qp->wr_pending_id = mana_wqe_info_at(qp->ring.wqes,
			mana_ring_off(qp->wr_cur.head, qp->ring.mask))->wr_id;
	}
	if (bufs) {
		ret = sq_put_inline(qp, &qp->wr_cur, bufs, n, flags, qp->wr_pending_id);
	} else if (!n || n > qp->max_send_sge) {
		mana_err(qp->vqp.qp.context, "%zu SGEs, the QP takes 1..%u", n,
			 qp->max_send_sge);
		ret = EINVAL;
	} else {
		ret = csum_for(qp, (void *)(uintptr_t)sg[0].addr, sg[0].length,
			       flags, &bits);
		if (!ret)
			ret = sq_put(qp, &qp->wr_cur, oob_for(qp, flags) | bits, sg,
				     (uint32_t)n, qp->wr_pending_id);
	}
	if (ret) {
		wr_fail(qp, ret);
		return;
	}
	qp->wr_state = MANA_WR_IDLE;
}

static __attribute__((noinline)) void wr_sge_slow(struct mana_qp *qp, uint32_t lkey,
						   uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	wr_data(qp, &sge, 1, NULL);
}

/* The SGE of the send wr_send began (room checked there): it is done. */
static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr,
		       uint32_t length)
{
	struct mana_qp *qp = ex_to_mqp(qpx);
	struct mana_cursor *c = &qp->wr_cur;
	uint8_t *sge = (uint8_t *)qp->wr_state;

	if (mana_unlikely(qp->wr_state < MANA_WR_STATES)) {
		wr_sge_slow(qp, lkey, addr, length);
		return;
	}
	mana_put_sge(sge, addr, lkey, length);
	qp->wr_state = MANA_WR_IDLE;
	if (!(gdma_ld64(sge - 8) & MANA_TXOOB_SUPPRESS_CQE))
		sq_signal(qp->sig_ring, qp->sig_mask, c, c->head);
	c->head++;	/* mana_cursor_advance of one unit */
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n,
			    const struct ibv_sge *sg)
{
	wr_data(ex_to_mqp(qpx), sg, n, NULL);
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_data(ex_to_mqp(qpx), NULL, 1, &buf);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t n,
				    const struct ibv_data_buf *bufs)
{
	wr_data(ex_to_mqp(qpx), NULL, n, bufs);
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct mana_qp *qp = ex_to_mqp(qpx);
	int err = qp->wr_err;

	if (!err && qp->wr_state != MANA_WR_IDLE)
		err = EINVAL;	/* a send without data */
	if (err)
		mana_err(qpx->qp_base.context, "ibv_wr_complete: %s; nothing was posted",
			 strerror(err));
	else if (qp->wr_cur.head != qp->ring.head_bu)
		ring_sq(qp, &qp->wr_cur);
	qp->wr_state = MANA_WR_IDLE;
	mana_spin_unlock(&qp->ring.lock);
	return err;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	struct mana_qp *qp = ex_to_mqp(qpx);

	qp->wr_state = MANA_WR_IDLE;
	mana_spin_unlock(&qp->ring.lock);
}

/* Everything but SEND: recorded as an error that wr_complete returns. */
static void wr_unsupported(struct mana_qp *qp)
{
	mana_err(qp->vqp.qp.context, "raw packet QPs support only ibv_wr_send");
	wr_fail(qp, EOPNOTSUPP);
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *q, uint32_t r, uint64_t a,
			      uint64_t c, uint64_t s)
{
	wr_unsupported(ex_to_mqp(q));
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *q, uint32_t r, uint64_t a,
				uint64_t add)
{
	wr_unsupported(ex_to_mqp(q));
}

static void wr_bind_mw(struct ibv_qp_ex *q, struct ibv_mw *mw, uint32_t r,
		       const struct ibv_mw_bind_info *b)
{
	wr_unsupported(ex_to_mqp(q));
}

static void wr_local_inv(struct ibv_qp_ex *q, uint32_t r)
{
	wr_unsupported(ex_to_mqp(q));
}

static void wr_rdma(struct ibv_qp_ex *q, uint32_t r, uint64_t a)
{
	wr_unsupported(ex_to_mqp(q));
}

static void wr_rdma_write_imm(struct ibv_qp_ex *q, uint32_t r, uint64_t a,
			      __be32 imm)
{
	wr_unsupported(ex_to_mqp(q));
}

static void wr_send_imm(struct ibv_qp_ex *q, __be32 imm)
{
	wr_unsupported(ex_to_mqp(q));
}

static void wr_send_inv(struct ibv_qp_ex *q, uint32_t r)
{
	wr_unsupported(ex_to_mqp(q));
}

static void wr_send_tso(struct ibv_qp_ex *q, void *h, uint16_t hs, uint16_t mss)
{
	wr_unsupported(ex_to_mqp(q));
}

static void wr_set_ud_addr(struct ibv_qp_ex *q, struct ibv_ah *ah, uint32_t n,
			   uint32_t k)
{
	wr_unsupported(ex_to_mqp(q));
}

static void wr_set_xrc_srqn(struct ibv_qp_ex *q, uint32_t n)
{
	wr_unsupported(ex_to_mqp(q));
}

/* the operations later rdma-core headers add: refused like the others */
#if MANA_RDMA_CORE >= 44
static void wr_atomic_write(struct ibv_qp_ex *q, uint32_t r, uint64_t a,
			    const void *w)
{
	wr_unsupported(ex_to_mqp(q));
}
#endif
#if MANA_RDMA_CORE >= 45
static void wr_flush(struct ibv_qp_ex *q, uint32_t r, uint64_t a, size_t len,
		     uint8_t type, uint8_t level)
{
	wr_unsupported(ex_to_mqp(q));
}
#endif

void mana_qp_init_ex_ops(struct mana_qp *qp)
{
	struct ibv_qp_ex *x = &qp->vqp.qp_ex;

	x->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	x->wr_atomic_fetch_add = wr_atomic_fetch_add;
	x->wr_bind_mw = wr_bind_mw;
	x->wr_local_inv = wr_local_inv;
	x->wr_rdma_read = wr_rdma;
	x->wr_rdma_write = wr_rdma;
	x->wr_rdma_write_imm = wr_rdma_write_imm;
	x->wr_send = wr_send;
	x->wr_send_imm = wr_send_imm;
	x->wr_send_inv = wr_send_inv;
	x->wr_send_tso = wr_send_tso;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_set_xrc_srqn = wr_set_xrc_srqn;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
#if MANA_RDMA_CORE >= 44
	x->wr_atomic_write = wr_atomic_write;
#endif
#if MANA_RDMA_CORE >= 45
	x->wr_flush = wr_flush;
#endif
	qp->vqp.comp_mask |= VERBS_QP_EX;
}
