// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The standard verbs datapath for raw packet queues: ibv_post_send on send
 * QPs, ibv_post_wq_recv on receive WQs, ibv_poll_cq, the extended CQ and
 * ibv_wr_* APIs, CQ arming, and the device-fatal flush.
 *
 * Each call takes the queue's own lock once and rings at most one doorbell.
 * WQEs are built from per-queue templates that the validating encoders of
 * gdma.h produced at creation; per WR only flags and SGEs are added.
 */
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "mana.h"
#include "gdma.h"

#define MANA_SEND_FLAGS (IBV_SEND_SIGNALED | IBV_SEND_INLINE | \
			 IBV_SEND_IP_CSUM | IBV_SEND_SOLICITED | IBV_SEND_FENCE)

static uint32_t roundup_pow2(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static void ring_doorbell(void *db_page, uint32_t offset, uint64_t value)
{
	/* WQEs and CQ consumption must be visible before the device looks */
	atomic_thread_fence(memory_order_release);
	*(volatile uint64_t *)((uint8_t *)db_page + offset) = value;
}

static bool ctx_fatal(struct ibv_context *ibctx)
{
	return atomic_load_explicit(&to_mctx(ibctx)->fatal, memory_order_relaxed);
}

static int fatal_error(struct ibv_context *ibctx)
{
	struct mana_context *ctx = to_mctx(ibctx);

	if (!atomic_flag_test_and_set(&ctx->fatal_logged))
		mana_err(ibctx, "device is in fatal state: close and reopen it");
	return EIO;
}

/* ---- setup ------------------------------------------------------------- */

int mana_sq_init(struct mana_context *ctx, struct mana_qp *qp,
		 struct mana_pd *pd)
{
	struct gdma_wqe_header hdr = { .num_sge = 1, .oob_size = GDMA_OOB_SMALL };
	struct mana_tx_oob oob = {
		.pkt_fmt = MANA_SHORT_PKT_FMT,
		.vcq_num = qp->send_cq->cqid,
		.vsq_frame = mana_tx_vsq_frame(qp->sq_id),
		.short_vp_offset = qp->tx_vp_offset,
	};
	/* room for the long form: the encoder writes 8 or 24 bytes */
	uint8_t oob_wire[GDMA_OOB_LARGE], hdr_wire[GDMA_WQE_HDR_SIZE];
	size_t len;
	int ret;

	/* the validating encoders make the templates; per WR only bits are added */
	if (mana_tx_oob_encode(&oob, oob_wire) ||
	    gdma_wqe_header_encode(&hdr, GDMA_SQ, hdr_wire))
		return EINVAL;
	qp->oob_template = gdma_ld64(oob_wire);
	qp->hdr_template = gdma_ld64(hdr_wire) &
			   ~(0xFFULL << GDMA_WQE_HDR_NUM_SGE_SHIFT);
	errno = 0;

	qp->cap_bu = qp->sq_buf.size / GDMA_WQE_BU_SIZE;
	qp->shadow_mask = roundup_pow2(qp->max_send_wr) - 1;
	qp->shadow = calloc(qp->shadow_mask + 1, sizeof(*qp->shadow));
	if (!qp->shadow)
		return ENOMEM;
	if (pthread_spin_init(&qp->lock, PTHREAD_PROCESS_PRIVATE))
		goto err_shadow;
	qp->db_page = mana_get_db_page(ctx);
	if (!qp->db_page)
		goto err_lock;

	if (qp->max_inline_data) {
		/* one bounce slot per shadow entry, registered like user memory */
		struct ib_uverbs_reg_mr_resp resp;
		struct ibv_reg_mr cmd;

		qp->inline_stride = (qp->max_inline_data + 63) & ~63u;
		len = (size_t)qp->inline_stride * (qp->shadow_mask + 1);
		len = (len + MANA_PAGE_SIZE - 1) & ~(size_t)(MANA_PAGE_SIZE - 1);
		if (posix_memalign((void **)&qp->inline_buf, MANA_PAGE_SIZE, len))
			goto err_lock;
		memset(&cmd, 0, sizeof(cmd));
		ret = ibv_cmd_reg_mr(&mana_real_pd(pd)->ibv_pd, qp->inline_buf, len,
				     (uintptr_t)qp->inline_buf, IBV_ACCESS_LOCAL_WRITE,
				     &qp->inline_mr, &cmd, sizeof(cmd), &resp,
				     sizeof(resp));
		if (ret) {
			mana_err(&ctx->ibv_ctx.context,
				 "cannot register the inline bounce area: %s",
				 strerror(ret));
			free(qp->inline_buf);
			qp->inline_buf = NULL;
			errno = ret;
			goto err_lock;
		}
	}
	return 0;

err_lock:
	pthread_spin_destroy(&qp->lock);
err_shadow:
	free(qp->shadow);
	qp->shadow = NULL;
	return errno ? errno : ENOMEM;
}

void mana_sq_fini(struct mana_qp *qp)
{
	if (qp->inline_buf) {
		ibv_cmd_dereg_mr(&qp->inline_mr);
		free(qp->inline_buf);
	}
	if (qp->shadow)
		pthread_spin_destroy(&qp->lock);
	free(qp->shadow);
}

int mana_rq_init(struct mana_context *ctx, struct mana_wq *wq)
{
	struct gdma_wqe_header hdr = { .num_sge = 1, .oob_size = GDMA_OOB_SMALL };
	uint8_t wire[GDMA_WQE_HDR_SIZE];

	if (gdma_wqe_header_encode(&hdr, GDMA_RQ, wire))
		return EINVAL;
	wq->hdr_template = gdma_ld64(wire) & ~(0xFFULL << GDMA_WQE_HDR_NUM_SGE_SHIFT);
	wq->shadow_mask = roundup_pow2(wq->max_wr) - 1;
	wq->shadow = calloc(wq->shadow_mask + 1, sizeof(*wq->shadow));
	if (!wq->shadow)
		return ENOMEM;
	if (pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE)) {
		free(wq->shadow);
		wq->shadow = NULL;
		return ENOMEM;
	}
	wq->db_page = NULL;	/* mapped on first post: manadv users never post */
	wq->ibv_wq.post_recv = mana_post_wq_recv;
	return 0;
}

void mana_rq_fini(struct mana_wq *wq)
{
	if (wq->shadow)
		pthread_spin_destroy(&wq->lock);
	free(wq->shadow);
}

/* ---- building WQEs ----------------------------------------------------- */

static inline void put_sge(uint8_t *ring, uint32_t mask, uint32_t off,
			   uint64_t addr, uint32_t lkey, uint32_t len)
{
	uint8_t *p = ring + (off & mask);

	gdma_st64(p, addr);
	gdma_st64(p + 8, (uint64_t)lkey | (uint64_t)len << 32);
}

/*
 * IBV_SEND_IP_CSUM: find the IP and TCP/UDP headers in the frame's first
 * buffer and say which checksums to compute.  MANA completes TCP/UDP
 * checksums from the pseudo-header sum, which must be in the checksum field
 * (as DPDK's net/mana writes it); write it there.
 */
static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	return sum;
}

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
		sum = csum_add(0, f + l2 + 12, 8);
	} else if (type == 0x86dd) {
		if (len < l2 + 40)
			return EINVAL;
		l3 = 40;
		proto = f[l2 + 6];
		*bits |= MANA_TXOOB_IPV6;
		l4_len = (uint32_t)f[l2 + 4] << 8 | f[l2 + 5];
		sum = csum_add(0, f + l2 + 8, 32);
	} else {
		return EINVAL;
	}
	if (proto != IPPROTO_TCP && proto != IPPROTO_UDP)
		return 0;	/* IP header checksum only */
	if (l2 + l3 > MANA_TXOOB_TRANS_OFF_MAX ||
	    len < l2 + l3 + (proto == IPPROTO_TCP ? 20 : 8))
		return EINVAL;
	sum += proto + l4_len;
	sum = csum_fold(sum);
	if (proto == IPPROTO_TCP) {
		*bits |= MANA_TXOOB_TCP_CSUM;
		f[l2 + l3 + 16] = (uint8_t)(sum >> 8);
		f[l2 + l3 + 17] = (uint8_t)sum;
	} else {
		*bits |= MANA_TXOOB_UDP_CSUM;
		f[l2 + l3 + 6] = (uint8_t)(sum >> 8);
		f[l2 + l3 + 7] = (uint8_t)sum;
	}
	*bits |= (uint64_t)(l2 + l3) << MANA_TXOOB_TRANS_OFF_SHIFT;
	return 0;
}

/*
 * Reserve room for one WQE of @nsge SGEs.  The caller fills the SGEs and
 * then calls sq_finish_wqe(); nothing is visible to the device before the
 * doorbell.
 */
static inline int sq_reserve(struct mana_qp *qp, uint32_t nsge,
			     uint32_t *size_bu)
{
	*size_bu = (GDMA_WQE_HDR_SIZE + GDMA_OOB_SMALL + GDMA_SGE_SIZE * nsge +
		    GDMA_WQE_BU_SIZE - 1) / GDMA_WQE_BU_SIZE;
	if (qp->sh_head - qp->sh_tail >= qp->max_send_wr ||
	    qp->head_bu - qp->tail_bu + *size_bu > qp->cap_bu)
		return ENOMEM;
	return 0;
}

static inline uint8_t *sq_wqe(struct mana_qp *qp, uint32_t *off)
{
	*off = (qp->head_bu * GDMA_WQE_BU_SIZE) & (qp->sq_buf.size - 1);
	return qp->sq_buf.addr;
}

static inline void sq_finish_wqe(struct mana_qp *qp, uint32_t nsge,
				 uint32_t size_bu, uint64_t oob_bits,
				 uint64_t wr_id, bool signaled)
{
	uint8_t *ring = qp->sq_buf.addr;
	uint32_t off = (qp->head_bu * GDMA_WQE_BU_SIZE) & (qp->sq_buf.size - 1);
	struct mana_sq_shadow *sh = &qp->shadow[qp->sh_head & qp->shadow_mask];

	/* header and OOB never wrap: 16 bytes at a 32-byte boundary */
	gdma_st64(ring + off, qp->hdr_template |
		  (uint64_t)nsge << GDMA_WQE_HDR_NUM_SGE_SHIFT);
	gdma_st64(ring + off + 8, qp->oob_template | oob_bits |
		  (signaled ? 0 : MANA_TXOOB_SUPPRESS_CQE));
	sh->wr_id = wr_id;
	sh->wqe_bu = qp->head_bu;
	sh->size_bu = (uint16_t)size_bu;
	sh->signaled = signaled;
	qp->sh_head++;
	qp->head_bu += size_bu;
}

static void ring_sq(struct mana_qp *qp)
{
	ring_doorbell(qp->db_page, GDMA_DB_OFF_SQ,
		      (uint64_t)qp->sq_id |
		      (uint64_t)(qp->head_bu * GDMA_WQE_BU_SIZE) << 32);
}

/* Copy inline data into this WQE's bounce slot; returns its length. */
static int copy_inline(struct mana_qp *qp, const struct ibv_data_buf *bufs,
		       size_t n, uint32_t *len)
{
	uint8_t *slot = qp->inline_buf +
			(size_t)(qp->sh_head & qp->shadow_mask) * qp->inline_stride;
	size_t total = 0, i;

	for (i = 0; i < n; i++) {
		if (bufs[i].length > qp->max_inline_data - total)
			return EINVAL;
		memcpy(slot + total, bufs[i].addr, bufs[i].length);
		total += bufs[i].length;
	}
	*len = (uint32_t)total;
	return 0;
}

static uint64_t inline_addr(struct mana_qp *qp)
{
	return (uintptr_t)(qp->inline_buf +
			   (size_t)(qp->sh_head & qp->shadow_mask) * qp->inline_stride);
}

/* The frame's first bytes, for checksum parsing. */
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

/* IBV_SEND_INLINE: the data goes to this WQE's bounce slot. Kept apart: rare. */
static __attribute__((noinline)) int post_inline_send(struct mana_qp *qp,
						       struct ibv_send_wr *wr)
{
	struct ibv_data_buf bufs[GDMA_MAX_TX_SGE];
	uint32_t size_bu, off, i, len;
	uint64_t bits = 0;
	uint8_t *ring;
	int ret;

	if (wr->num_sge <= 0 || wr->num_sge > GDMA_MAX_TX_SGE) {
		mana_err(qp->vqp.qp.context, "inline send with %d buffers",
			 wr->num_sge);
		return EINVAL;
	}
	if (!qp->inline_buf) {
		mana_err(qp->vqp.qp.context,
			 "IBV_SEND_INLINE on a QP created with max_inline_data 0");
		return EINVAL;
	}
	ret = sq_reserve(qp, 1, &size_bu);
	if (ret)
		return ret;
	for (i = 0; i < (uint32_t)wr->num_sge; i++) {
		bufs[i].addr = (void *)(uintptr_t)wr->sg_list[i].addr;
		bufs[i].length = wr->sg_list[i].length;
	}
	if (copy_inline(qp, bufs, wr->num_sge, &len)) {
		mana_err(qp->vqp.qp.context, "inline data exceeds %u bytes",
			 qp->max_inline_data);
		return EINVAL;
	}
	ret = csum_for(qp, (void *)(uintptr_t)inline_addr(qp), len,
		       wr->send_flags, &bits);
	if (ret)
		return ret;
	ring = sq_wqe(qp, &off);
	put_sge(ring, qp->sq_buf.size - 1, off + 16, inline_addr(qp),
		qp->inline_mr.ibv_mr.lkey, len);
	sq_finish_wqe(qp, 1, size_bu, bits, wr->wr_id,
		      qp->sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED));
	return 0;
}

/* Errors: one log line each, out of the per-WR path. */
static __attribute__((noinline)) int bad_send(struct mana_qp *qp,
					       struct ibv_send_wr *wr)
{
	if (wr->opcode != IBV_WR_SEND)
		mana_err(qp->vqp.qp.context, "opcode %d is not supported (SEND only)",
			 wr->opcode);
	else if (wr->send_flags & ~MANA_SEND_FLAGS)
		mana_err(qp->vqp.qp.context, "unsupported send flags 0x%x",
			 wr->send_flags);
	else
		mana_err(qp->vqp.qp.context, "%d SGEs, the QP takes 1..%u",
			 wr->num_sge, qp->max_send_sge);
	return EINVAL;
}

static inline int post_one_send(struct mana_qp *qp, struct ibv_send_wr *wr)
{
	uint32_t size_bu, off, i;
	uint64_t bits = 0;
	uint8_t *ring;
	int ret;

	if (wr->opcode != IBV_WR_SEND || (wr->send_flags & ~MANA_SEND_FLAGS))
		return bad_send(qp, wr);
	if (wr->send_flags & IBV_SEND_INLINE)
		return post_inline_send(qp, wr);
	if (wr->num_sge <= 0 || (uint32_t)wr->num_sge > qp->max_send_sge)
		return bad_send(qp, wr);
	ret = sq_reserve(qp, wr->num_sge, &size_bu);
	if (ret)
		return ret;
	if (wr->send_flags & IBV_SEND_IP_CSUM) {
		ret = csum_for(qp, (void *)(uintptr_t)wr->sg_list[0].addr,
			       wr->sg_list[0].length, wr->send_flags, &bits);
		if (ret)
			return ret;
	}
	ring = sq_wqe(qp, &off);
	for (i = 0; i < (uint32_t)wr->num_sge; i++)
		put_sge(ring, qp->sq_buf.size - 1, off + 16 + i * GDMA_SGE_SIZE,
			wr->sg_list[i].addr, wr->sg_list[i].lkey,
			wr->sg_list[i].length);
	sq_finish_wqe(qp, wr->num_sge, size_bu, bits, wr->wr_id,
		      qp->sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED));
	return 0;
}

int mana_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	struct mana_qp *qp = to_mqp(ibqp);
	uint32_t start;
	int ret = 0;

	if (!wr) {
		if (bad_wr)
			*bad_wr = NULL;
		return EINVAL;
	}
	if (qp->kind != MANA_QP_RAW_SQ) {
		mana_err(ibqp->context, "an RSS QP cannot send");
		*bad_wr = wr;
		return EINVAL;
	}
	if (ctx_fatal(ibqp->context)) {
		*bad_wr = wr;
		return fatal_error(ibqp->context);
	}

	pthread_spin_lock(&qp->lock);
	start = qp->sh_head;
	for (; wr; wr = wr->next) {
		ret = post_one_send(qp, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	/* one doorbell for every WQE that made it, none for the rest */
	if (qp->sh_head != start)
		ring_sq(qp);
	pthread_spin_unlock(&qp->lock);
	return ret;
}

int mana_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	mana_err(ibqp->context,
		 "raw QPs have no receive queue: post to the WQs of the RSS QP (ibv_post_wq_recv)");
	if (bad_wr)
		*bad_wr = wr;
	return EOPNOTSUPP;
}

int mana_post_wq_recv(struct ibv_wq *ibwq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	struct mana_wq *wq = to_mwq(ibwq);
	uint32_t start, size_bu, off, i, mask = wq->buf.size - 1;
	uint8_t *ring = wq->buf.addr;
	int ret = 0;

	if (!wr) {
		if (bad_wr)
			*bad_wr = NULL;
		return EINVAL;
	}
	if (ctx_fatal(ibwq->context)) {
		*bad_wr = wr;
		return fatal_error(ibwq->context);
	}
	if (!wq->db_page) {
		wq->db_page = mana_get_db_page(to_mctx(ibwq->context));
		if (!wq->db_page) {
			*bad_wr = wr;
			return EIO;
		}
	}

	pthread_spin_lock(&wq->lock);
	start = wq->sh_head;
	for (; wr; wr = wr->next) {
		if (wr->num_sge <= 0 || (uint32_t)wr->num_sge > wq->max_sge) {
			mana_err(ibwq->context, "%d SGEs, the WQ takes 1..%u",
				 wr->num_sge, wq->max_sge);
			ret = EINVAL;
			break;
		}
		size_bu = (GDMA_WQE_HDR_SIZE + GDMA_OOB_SMALL +
			   GDMA_SGE_SIZE * wr->num_sge + GDMA_WQE_BU_SIZE - 1) /
			  GDMA_WQE_BU_SIZE;
		if (wq->sh_head - wq->sh_tail >= wq->max_wr ||
		    wq->head_bu - wq->tail_bu + size_bu > wq->buf.size / GDMA_WQE_BU_SIZE) {
			ret = ENOMEM;
			break;
		}
		off = (wq->head_bu * GDMA_WQE_BU_SIZE) & mask;
		gdma_st64(ring + off, wq->hdr_template |
			  (uint64_t)wr->num_sge << GDMA_WQE_HDR_NUM_SGE_SHIFT);
		gdma_st64(ring + off + 8, 0);	/* RX OOB: unused, zero */
		for (i = 0; i < (uint32_t)wr->num_sge; i++)
			put_sge(ring, mask, off + 16 + i * GDMA_SGE_SIZE,
				wr->sg_list[i].addr, wr->sg_list[i].lkey,
				wr->sg_list[i].length);
		wq->shadow[wq->sh_head & wq->shadow_mask] =
			(struct mana_rq_shadow){ .wr_id = wr->wr_id, .size_bu = size_bu };
		wq->sh_head++;
		wq->head_bu += size_bu;
	}
	if (ret)
		*bad_wr = wr;
	if (wq->sh_head != start)
		ring_doorbell(wq->db_page, GDMA_DB_OFF_RQ,
			      (uint64_t)wq->wqid |
			      (uint64_t)(wq->head_bu * GDMA_WQE_BU_SIZE) << 32);
	pthread_spin_unlock(&wq->lock);
	return ret;
}

/* ---- completions ------------------------------------------------------- */

static enum ibv_wc_status tx_error_status(uint8_t type)
{
	switch (type) {
	case CQE_TX_MTU_DROP:
		return IBV_WC_LOC_LEN_ERR;
	case CQE_TX_HDR_PROCESSING_ERROR:
		return IBV_WC_LOC_PROT_ERR;
	case CQE_TX_INVALID_OOB:
	case CQE_TX_INVALID_ETH_TYPE:
	case CQE_TX_SA_DROP:
	case CQE_TX_VLAN_TAGGING_VIOLATION:
		return IBV_WC_LOC_QP_OP_ERR;
	default:
		return IBV_WC_GENERAL_ERR;
	}
}

static void sq_pop(struct mana_qp *qp, struct mana_sq_shadow *out)
{
	*out = qp->shadow[qp->sh_tail & qp->shadow_mask];
	qp->sh_tail++;
	qp->tail_bu += out->size_bu;
}

/*
 * The WQE an error CQE reports: errors always complete, signaled or not,
 * so it may be an unsignaled WQE behind others that succeeded silently.
 * The CQE's WQE offset (bytes or 32-byte units into the ring) picks it;
 * without a match, the oldest outstanding WQE is the one.
 */
static bool tx_error_matches(struct mana_qp *qp, uint32_t wqe_bu, uint32_t off)
{
	uint32_t bytes = (wqe_bu * GDMA_WQE_BU_SIZE) & (qp->sq_buf.size - 1);

	return off == bytes || off == (wqe_bu & (qp->cap_bu - 1));
}

static int tx_completion(struct mana_cq *cq, const uint8_t *cqe,
			 struct mana_wc *wc)
{
	struct mana_qp *qp = cq->sq_qp;
	uint8_t type = mana_cqe_fast_type(cqe);
	struct mana_sq_shadow e;
	uint32_t off, i, n;

	if (qp->sh_tail == qp->sh_head)
		return 0;	/* nothing outstanding: a stray CQE */
	if (type == CQE_TX_OKAY) {
		do {
			sq_pop(qp, &e);
		} while (!e.signaled && qp->sh_tail != qp->sh_head);
		if (!e.signaled)
			return 0;
		wc->status = IBV_WC_SUCCESS;
		wc->vendor_err = 0;
	} else {
		off = gdma_ld32(cqe + MANA_TXCOMP_WQE_DW_OFF) >> MANA_TXCOMP_WQE_SHIFT;
		n = qp->sh_head - qp->sh_tail;
		for (i = 0; i < n; i++) {
			e = qp->shadow[(qp->sh_tail + i) & qp->shadow_mask];
			if (tx_error_matches(qp, e.wqe_bu, off) || e.signaled)
				break;
		}
		if (i == n || !tx_error_matches(qp, e.wqe_bu, off))
			i = 0;
		while (i--)
			sq_pop(qp, &e);	/* succeeded without a completion */
		sq_pop(qp, &e);
		wc->status = tx_error_status(type);
		wc->vendor_err = gdma_ld32(cqe) >> 8 ? gdma_ld32(cqe) >> 8 : type;
	}
	wc->wr_id = e.wr_id;
	wc->opcode = IBV_WC_SEND;
	wc->byte_len = 0;
	wc->wc_flags = 0;
	wc->qp_num = qp->vqp.qp.qp_num;
	return 1;
}

static void rq_pop(struct mana_wq *wq, struct mana_wc *wc)
{
	struct mana_rq_shadow *e = &wq->shadow[wq->sh_tail & wq->shadow_mask];

	wc->wr_id = e->wr_id;
	wq->sh_tail++;
	wq->tail_bu += e->size_bu;
}

/* IBV_WC_IP_CSUM_OK: the device verified the IP and the TCP/UDP checksum */
static inline uint32_t rx_wc_flags(uint32_t fl)
{
	return ((fl & MANA_RXFL_IP_OK) && (fl & (MANA_RXFL_TCP_OK | MANA_RXFL_UDP_OK))) ?
	       IBV_WC_IP_CSUM_OK : 0;
}

static void rx_emit(struct mana_cq *cq, struct mana_wc *wc)
{
	struct mana_rx_backlog *b = &cq->backlog;
	uint32_t fl = b->flags;

	rq_pop(cq->rq, wc);
	wc->status = IBV_WC_SUCCESS;
	wc->opcode = IBV_WC_RECV;
	wc->byte_len = b->len[b->next++];
	wc->vendor_err = 0;
	wc->qp_num = cq->rx_qp_num;
	wc->wc_flags = rx_wc_flags(fl);
	wc->vlan = (fl & MANA_RXFL_VLAN_PRESENT) ? (fl & MANA_RXFL_VLAN_ID_MASK) : 0;
}

static int rx_completion(struct mana_cq *cq, const uint8_t *cqe,
			 struct mana_wc *wc)
{
	struct mana_wq *wq = cq->rq;
	uint8_t type = mana_cqe_fast_type(cqe);
	struct mana_rx_backlog *b = &cq->backlog;
	unsigned int i;

	if (wq->sh_tail == wq->sh_head)
		return 0;	/* no posted buffer: a stray CQE */
	switch (type) {
	case CQE_RX_OKAY:
	case CQE_RX_COALESCED_4:
		b->flags = gdma_ld32(cqe + MANA_RXCOMP_FLAGS_OFF);
		b->count = 0;
		b->next = 0;
		for (i = 0; i < (type == CQE_RX_OKAY ? 1u : 4u); i++) {
			b->len[i] = mana_rx_fast_len(cqe, i);
			if (!b->len[i])
				break;
			b->count++;
		}
		if (!b->count)
			return 0;
		rx_emit(cq, wc);
		return 1;
	case CQE_RX_OBJECT_FENCE:
		return 0;
	default:
		rq_pop(wq, wc);
		wc->status = type == CQE_RX_TRUNCATED ? IBV_WC_LOC_LEN_ERR :
							IBV_WC_GENERAL_ERR;
		wc->opcode = IBV_WC_RECV;
		wc->byte_len = 0;
		wc->vendor_err = gdma_ld32(cqe) >> 8 ? gdma_ld32(cqe) >> 8 : type;
		wc->wc_flags = 0;
		wc->qp_num = cq->rx_qp_num;
		return 1;
	}
}

/* After a device fatal or a QP in ERR: every outstanding WR, flushed once. */
static int flush_one(struct mana_cq *cq, struct mana_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->status = IBV_WC_WR_FLUSH_ERR;
	if (cq->sq_qp) {
		struct mana_sq_shadow e;

		if (cq->sq_qp->sh_tail == cq->sq_qp->sh_head)
			return 0;
		sq_pop(cq->sq_qp, &e);
		wc->wr_id = e.wr_id;
		wc->opcode = IBV_WC_SEND;
		wc->qp_num = cq->sq_qp->vqp.qp.qp_num;
		return 1;
	}
	if (cq->rq && cq->rq->sh_tail != cq->rq->sh_head) {
		rq_pop(cq->rq, wc);
		wc->opcode = IBV_WC_RECV;
		wc->qp_num = cq->rx_qp_num;
		return 1;
	}
	return 0;
}

/*
 * The common receive completion: one frame, a posted buffer, no backlog.
 * true with its WR id, length and RX flag word, or false to leave it to
 * the general path (cq_next).
 */
static inline bool rx_fast(struct mana_cq *cq, uint64_t *wr_id, uint32_t *len,
			   uint32_t *fl)
{
	struct mana_wq *wq = cq->rq;
	const struct mana_rq_shadow *e;
	const uint8_t *cqe;
	uint32_t lap;

	if (!wq || cq->backlog.next < cq->backlog.count || wq->sh_tail == wq->sh_head)
		return false;
	lap = cq->head / cq->count;
	cqe = (const uint8_t *)cq->buf.addr +
	      (size_t)(cq->head - lap * cq->count) * GDMA_CQE_SIZE;
	if ((cqe[GDMA_CQE_SIZE - 1] >> GDMA_CQE_OWNER_SHIFT) != (lap & GDMA_OWNER_MASK))
		return false;	/* empty or lapped: the general path decides */
	atomic_thread_fence(memory_order_acquire);
	if (mana_cqe_fast_type(cqe) != CQE_RX_OKAY)
		return false;
	cq->head++;
	e = &wq->shadow[wq->sh_tail & wq->shadow_mask];
	wq->sh_tail++;
	wq->tail_bu += e->size_bu;
	*wr_id = e->wr_id;
	*len = mana_rx_fast_len(cqe, 0);
	*fl = gdma_ld32(cqe + MANA_RXCOMP_FLAGS_OFF);
	return true;
}

/*
 * Next completion of @cq: 1 and *wc filled, 0 when there is none, -1 when
 * the owner bits show the device lapped us (completions were lost).
 */
static int cq_next(struct mana_cq *cq, struct mana_wc *wc)
{
	const uint8_t *cqe;
	uint32_t lap, owner, len, fl;
	int ret;

	if (rx_fast(cq, &wc->wr_id, &len, &fl)) {
		wc->status = IBV_WC_SUCCESS;
		wc->opcode = IBV_WC_RECV;
		wc->byte_len = len;
		wc->vendor_err = 0;
		wc->qp_num = cq->rx_qp_num;
		wc->wc_flags = rx_wc_flags(fl);
		wc->vlan = (fl & MANA_RXFL_VLAN_PRESENT) ? (fl & MANA_RXFL_VLAN_ID_MASK) : 0;
		return 1;
	}
	if (cq->backlog.next < cq->backlog.count) {
		rx_emit(cq, wc);
		return 1;
	}
	for (;;) {
		lap = cq->head / cq->count;
		cqe = (const uint8_t *)cq->buf.addr +
		      (size_t)(cq->head - lap * cq->count) * GDMA_CQE_SIZE;
		owner = cqe[GDMA_CQE_SIZE - 1] >> GDMA_CQE_OWNER_SHIFT;
		if (owner == ((lap - 1) & GDMA_OWNER_MASK)) {
			/* empty: a dead device or a QP in error flushes the rest */
			if ((cq->sq_qp && cq->sq_qp->flushing) ||
			    ctx_fatal(cq->vcq.cq.context))
				return flush_one(cq, wc);
			return 0;
		}
		if (owner != (lap & GDMA_OWNER_MASK))
			return -1;
		atomic_thread_fence(memory_order_acquire);
		cq->head++;
		if (!cq->sq_qp && !cq->rq)
			continue;	/* unbound CQ: nothing to report */
		ret = cq->sq_qp ? tx_completion(cq, cqe, wc) :
				  rx_completion(cq, cqe, wc);
		if (ret)
			return ret;
	}
}

static void cq_lock(struct mana_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_lock(&cq->lock);
}

static void cq_unlock(struct mana_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_unlock(&cq->lock);
}

/* Tell the device how far we got: it must hear from us every 8 laps. */
static void cq_doorbell(struct mana_cq *cq, bool arm)
{
	struct mana_context *ctx = to_mctx(cq->vcq.cq.context);
	uint64_t tail = cq->head % (cq->count << 3);

	ring_doorbell(ctx->db_page, GDMA_DB_OFF_CQ,
		      (uint64_t)cq->cqid | tail << 32 | (uint64_t)arm << 63);
	cq->rang_lap = cq->head / cq->count;
}

static void cq_maybe_ring(struct mana_cq *cq)
{
	if (cq->head / cq->count - cq->rang_lap >= 4 && cq->cqid != UINT32_MAX &&
	    to_mctx(cq->vcq.cq.context)->db_page)
		cq_doorbell(cq, false);
}

static void overflow_error(struct mana_cq *cq)
{
	mana_err(cq->vcq.cq.context,
		 "CQ %u overflowed: the device wrote over completions not yet polled",
		 cq->cqid);
}

int mana_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct mana_cq *cq = to_mcq(ibcq);
	struct mana_wc c;
	int n, ret = 0;

	cq_lock(cq);
	for (n = 0; n < num_entries; n++) {
		uint32_t len, fl;

		/* the common receive completion goes straight into the WC */
		if (rx_fast(cq, &wc[n].wr_id, &len, &fl)) {
			wc[n].status = IBV_WC_SUCCESS;
			wc[n].opcode = IBV_WC_RECV;
			wc[n].vendor_err = 0;
			wc[n].byte_len = len;
			wc[n].qp_num = cq->rx_qp_num;
			wc[n].src_qp = 0;
			wc[n].wc_flags = rx_wc_flags(fl);
			wc[n].pkey_index = 0;
			wc[n].slid = 0;
			wc[n].sl = 0;
			wc[n].dlid_path_bits = 0;
			wc[n].imm_data = 0;
			continue;
		}
		ret = cq_next(cq, &c);
		if (ret <= 0)
			break;
		wc[n].wr_id = c.wr_id;
		wc[n].status = c.status;
		wc[n].opcode = c.opcode;
		wc[n].vendor_err = c.vendor_err;
		wc[n].byte_len = c.byte_len;
		wc[n].qp_num = c.qp_num;
		wc[n].src_qp = 0;
		wc[n].wc_flags = c.wc_flags;
		wc[n].pkey_index = 0;
		wc[n].slid = 0;
		wc[n].sl = 0;
		wc[n].dlid_path_bits = 0;
		wc[n].imm_data = 0;
	}
	if (n)
		cq_maybe_ring(cq);
	cq_unlock(cq);
	if (ret < 0 && !n) {
		overflow_error(cq);
		return -1;
	}
	return n;
}

int mana_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct mana_cq *cq = to_mcq(ibcq);

	if (cq->cqid == UINT32_MAX || !to_mctx(ibcq->context)->db_page) {
		mana_err(ibcq->context,
			 "CQ is not bound to a queue yet: create its QP first");
		return EINVAL;
	}
	/* raw Ethernet has no solicited events: any completion wakes */
	cq_lock(cq);
	cq_doorbell(cq, true);
	cq_unlock(cq);
	return 0;
}

void mana_async_event(struct ibv_context *ibctx, struct ibv_async_event *event)
{
	if (event->event_type != IBV_EVENT_DEVICE_FATAL)
		return;
	/* pollers flush every outstanding WR from now on; posts fail */
	atomic_store(&to_mctx(ibctx)->fatal, true);
	mana_err(ibctx, "device fatal event: outstanding work is flushed");
}

/* ---- extended CQ ------------------------------------------------------- */

static inline struct mana_cq *ex_to_mcq(struct ibv_cq_ex *cq)
{
	return container_of(cq, struct mana_cq, vcq.cq_ex);
}

static int ex_fetch(struct mana_cq *cq)
{
	int ret = cq_next(cq, &cq->cur);

	if (ret > 0) {
		cq->vcq.cq_ex.wr_id = cq->cur.wr_id;
		cq->vcq.cq_ex.status = cq->cur.status;
		return 0;
	}
	if (ret < 0) {
		overflow_error(cq);
		return EOVERFLOW;
	}
	return ENOENT;
}

static int ex_start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct mana_cq *cq = ex_to_mcq(ibcq);
	int ret;

	if (attr && attr->comp_mask)
		return EINVAL;
	cq_lock(cq);
	ret = ex_fetch(cq);
	if (ret)
		cq_unlock(cq);	/* end_poll is not called after a failure */
	return ret;
}

static int ex_next_poll(struct ibv_cq_ex *ibcq)
{
	return ex_fetch(ex_to_mcq(ibcq));
}

static void ex_end_poll(struct ibv_cq_ex *ibcq)
{
	struct mana_cq *cq = ex_to_mcq(ibcq);

	cq_maybe_ring(cq);
	cq_unlock(cq);
}

static enum ibv_wc_opcode ex_read_opcode(struct ibv_cq_ex *cq)
{
	return ex_to_mcq(cq)->cur.opcode;
}

static uint32_t ex_read_vendor_err(struct ibv_cq_ex *cq)
{
	return ex_to_mcq(cq)->cur.vendor_err;
}

static uint32_t ex_read_byte_len(struct ibv_cq_ex *cq)
{
	return ex_to_mcq(cq)->cur.byte_len;
}

static __be32 ex_read_imm_data(struct ibv_cq_ex *cq)
{
	return 0;
}

static uint32_t ex_read_qp_num(struct ibv_cq_ex *cq)
{
	return ex_to_mcq(cq)->cur.qp_num;
}

static uint32_t ex_read_zero32(struct ibv_cq_ex *cq)
{
	return 0;
}

static unsigned int ex_read_wc_flags(struct ibv_cq_ex *cq)
{
	return ex_to_mcq(cq)->cur.wc_flags;
}

static uint8_t ex_read_zero8(struct ibv_cq_ex *cq)
{
	return 0;
}

static uint16_t ex_read_cvlan(struct ibv_cq_ex *cq)
{
	return ex_to_mcq(cq)->cur.vlan;
}

void mana_cq_init_ops(struct mana_cq *cq)
{
	struct ibv_cq_ex *ex = &cq->vcq.cq_ex;

	ex->start_poll = ex_start_poll;
	ex->next_poll = ex_next_poll;
	ex->end_poll = ex_end_poll;
	ex->read_opcode = ex_read_opcode;
	ex->read_vendor_err = ex_read_vendor_err;
	ex->read_wc_flags = ex_read_wc_flags;
	if (cq->wc_flags_ex & IBV_WC_EX_WITH_BYTE_LEN)
		ex->read_byte_len = ex_read_byte_len;
	if (cq->wc_flags_ex & IBV_WC_EX_WITH_IMM)
		ex->read_imm_data = ex_read_imm_data;
	if (cq->wc_flags_ex & IBV_WC_EX_WITH_QP_NUM)
		ex->read_qp_num = ex_read_qp_num;
	if (cq->wc_flags_ex & IBV_WC_EX_WITH_SRC_QP)
		ex->read_src_qp = ex_read_zero32;
	if (cq->wc_flags_ex & IBV_WC_EX_WITH_SLID)
		ex->read_slid = ex_read_zero32;
	if (cq->wc_flags_ex & IBV_WC_EX_WITH_SL)
		ex->read_sl = ex_read_zero8;
	if (cq->wc_flags_ex & IBV_WC_EX_WITH_DLID_PATH_BITS)
		ex->read_dlid_path_bits = ex_read_zero8;
	if (cq->wc_flags_ex & IBV_WC_EX_WITH_CVLAN)
		ex->read_cvlan = ex_read_cvlan;
}

/* ---- ibv_wr_* ---------------------------------------------------------- */

static inline struct mana_qp *ex_to_mqp(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct mana_qp, vqp.qp_ex);
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct mana_qp *qp = ex_to_mqp(qpx);

	pthread_spin_lock(&qp->lock);
	qp->wr_start_head_bu = qp->head_bu;
	qp->wr_start_sh_head = qp->sh_head;
	qp->wr_err = ctx_fatal(qpx->qp_base.context) ? EIO : 0;
	qp->wr_open = false;
}

static void wr_fail(struct mana_qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
	qp->wr_open = false;
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	struct mana_qp *qp = ex_to_mqp(qpx);

	if (qp->wr_open)
		wr_fail(qp, EINVAL);	/* the previous send got no data */
	if (qpx->wr_flags & ~MANA_SEND_FLAGS & ~IBV_SEND_INLINE) {
		wr_fail(qp, EINVAL);
		return;
	}
	qp->wr_pending_id = qpx->wr_id;
	qp->wr_pending_flags = qpx->wr_flags;
	qp->wr_open = true;
}

static void wr_sges(struct mana_qp *qp, size_t n, const struct ibv_sge *sg)
{
	uint32_t size_bu, off, i;
	uint64_t bits = 0;
	uint8_t *ring;

	if (!qp->wr_open || qp->wr_err) {
		wr_fail(qp, EINVAL);
		return;
	}
	qp->wr_open = false;
	if (!n || n > qp->max_send_sge) {
		wr_fail(qp, EINVAL);
		return;
	}
	if (sq_reserve(qp, n, &size_bu)) {
		wr_fail(qp, ENOMEM);
		return;
	}
	if (csum_for(qp, (void *)(uintptr_t)sg[0].addr, sg[0].length,
		     qp->wr_pending_flags, &bits)) {
		wr_fail(qp, EINVAL);
		return;
	}
	ring = sq_wqe(qp, &off);
	for (i = 0; i < n; i++)
		put_sge(ring, qp->sq_buf.size - 1, off + 16 + i * GDMA_SGE_SIZE,
			sg[i].addr, sg[i].lkey, sg[i].length);
	sq_finish_wqe(qp, n, size_bu, bits, qp->wr_pending_id,
		      qp->sq_sig_all || (qp->wr_pending_flags & IBV_SEND_SIGNALED));
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr,
		       uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };
	struct mana_qp *qp = ex_to_mqp(qpx);
	uint32_t size_bu, off;
	uint8_t *ring;

	/* the common case inline; checksums, errors and full queues below */
	if (!qp->wr_open || qp->wr_err || (qp->wr_pending_flags & IBV_SEND_IP_CSUM) ||
	    sq_reserve(qp, 1, &size_bu)) {
		wr_sges(qp, 1, &sge);
		return;
	}
	qp->wr_open = false;
	ring = sq_wqe(qp, &off);
	put_sge(ring, qp->sq_buf.size - 1, off + 16, addr, lkey, length);
	sq_finish_wqe(qp, 1, size_bu, 0, qp->wr_pending_id,
		      qp->sq_sig_all || (qp->wr_pending_flags & IBV_SEND_SIGNALED));
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n,
			    const struct ibv_sge *sg)
{
	wr_sges(ex_to_mqp(qpx), n, sg);
}

static void wr_inline(struct mana_qp *qp, size_t n, const struct ibv_data_buf *bufs)
{
	uint32_t size_bu, off, len;
	uint64_t bits = 0;
	uint8_t *ring;

	if (!qp->wr_open || qp->wr_err || !qp->inline_buf || !n) {
		wr_fail(qp, EINVAL);
		return;
	}
	qp->wr_open = false;
	if (sq_reserve(qp, 1, &size_bu)) {
		wr_fail(qp, ENOMEM);
		return;
	}
	if (copy_inline(qp, bufs, n, &len) ||
	    csum_for(qp, (void *)(uintptr_t)inline_addr(qp), len,
		     qp->wr_pending_flags, &bits)) {
		wr_fail(qp, EINVAL);
		return;
	}
	ring = sq_wqe(qp, &off);
	put_sge(ring, qp->sq_buf.size - 1, off + 16, inline_addr(qp),
		qp->inline_mr.ibv_mr.lkey, len);
	sq_finish_wqe(qp, 1, size_bu, bits, qp->wr_pending_id,
		      qp->sq_sig_all || (qp->wr_pending_flags & IBV_SEND_SIGNALED));
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_inline(ex_to_mqp(qpx), 1, &buf);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t n,
				    const struct ibv_data_buf *bufs)
{
	wr_inline(ex_to_mqp(qpx), n, bufs);
}

static void wr_rollback(struct mana_qp *qp)
{
	qp->head_bu = qp->wr_start_head_bu;
	qp->sh_head = qp->wr_start_sh_head;
	qp->wr_open = false;
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct mana_qp *qp = ex_to_mqp(qpx);
	int err = qp->wr_err;

	if (!err && qp->wr_open)
		err = EINVAL;	/* a send without data */
	if (err) {
		mana_err(qpx->qp_base.context, "ibv_wr_complete: %s; nothing was posted",
			 strerror(err));
		wr_rollback(qp);
	} else if (qp->sh_head != qp->wr_start_sh_head) {
		ring_sq(qp);
	}
	pthread_spin_unlock(&qp->lock);
	return err;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	struct mana_qp *qp = ex_to_mqp(qpx);

	wr_rollback(qp);
	pthread_spin_unlock(&qp->lock);
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

static void wr_atomic_write(struct ibv_qp_ex *q, uint32_t r, uint64_t a,
			    const void *w)
{
	wr_unsupported(ex_to_mqp(q));
}

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
	x->wr_atomic_write = wr_atomic_write;
	qp->vqp.comp_mask |= VERBS_QP_EX;
}
