// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The completion half of the verbs datapath: ibv_poll_cq, the extended
 * CQ (ibv_start_poll and friends), CQ arming and the device-fatal flush.
 *
 * A CQ serves exactly one SQ or one RQ (the kernel binds it), so opcode
 * and QP number are the CQ's.  A plain one-frame receive completion takes
 * a fast path (rx_batch for ibv_poll_cq, rx_fast for the extended CQ);
 * everything else (sends, coalesced frames, errors, empty or lapped rings,
 * the flush) the general one (cq_next).
 */
#include <stddef.h>
#include <string.h>

#include "datapath.h"
#include "rc.h"

/*
 * What fast_rq points to when the fast path must not run: it has retired
 * all it posted (nothing), so the fast paths see no posted buffer and step
 * aside without a NULL test.
 */
static struct mana_wq never_ready;

/* Consumer and device both start at index count: lap 1, owner bits 1. */
void mana_cq_init_consumer(struct mana_cq *cq)
{
	cq->next_cqe = cq->buf.addr;
	cq->end_cqe = (const uint8_t *)cq->buf.addr + (size_t)cq->count * GDMA_CQE_SIZE;
	cq->lap = 1;
	cq->rang_lap = 1;
	cq->owner_bits = 1u << GDMA_CQE_OWNER_SHIFT;
	cq->fast_rq = &never_ready;
}

static uint32_t cq_index(const struct mana_cq *cq)
{
	return cq->lap * cq->count +
	       (uint32_t)((cq->next_cqe - (const uint8_t *)cq->buf.addr) / GDMA_CQE_SIZE);
}

static void cq_arm_pending(struct mana_cq *cq);

void mana_cq_bind_sq(struct mana_cq *cq, struct mana_qp *qp)
{
	cq->rq = NULL;
	cq->fast_rq = &never_ready;
	cq->qp_num = qp->vqp.qp.qp_num;
	cq->opcode = IBV_WC_SEND;
	cq->sq_qp = qp;
	cq_arm_pending(cq);
}

void mana_cq_bind_rq(struct mana_cq *cq, struct mana_wq *wq, uint32_t qp_num)
{
	cq->sq_qp = NULL;
	cq->qp_num = qp_num;
	cq->opcode = IBV_WC_RECV;
	cq->rq = wq;
	cq->fast_rq = cq->backlog.left ? &never_ready : wq;
	cq_arm_pending(cq);
}

void mana_cq_unbind(struct mana_cq *cq)
{
	cq->sq_qp = NULL;
	cq->rq = NULL;
	cq->fast_rq = &never_ready;
}

/* ---- decoding completions ---------------------------------------------- */

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

static uint32_t cqe_vendor_err(const uint8_t *cqe, uint8_t type)
{
	return gdma_ld32(cqe) >> 8 ? gdma_ld32(cqe) >> 8 : type;
}

static void wc_set(struct mana_wc *wc, uint64_t wr_id, enum ibv_wc_status st,
		   uint32_t vendor_err)
{
	wc->wr_id = wr_id;
	wc->status = st;
	wc->vendor_err = vendor_err;
	wc->byte_len = 0;
	wc->rx_flags = 0;
}

/*
 * Retire the send WQE at unit @tail_bu, WR number @n, and every WR before
 * it; its WR id.  The signaled-ring entries of the retired WRs are passed
 * before the new count is published: from that store on, the poster may
 * reuse their slots (the signaled ring has only roundup_pow2(max_send_wr)
 * of them), so nothing may read them after it.
 */
static uint64_t sq_retire_at(struct mana_qp *qp, uint32_t tail_bu, uint32_t n)
{
	const struct mana_wqe_info *e =
		mana_wqe_info_at(qp->ring.wqes, mana_ring_off(tail_bu, qp->ring.mask));
	uint32_t sig_head = mana_load_index(&qp->sig_head);
	uint64_t wr_id = e->wr_id;

	qp->ring.tail_bu = tail_bu + e->size_bu;
	while (qp->sig_tail != sig_head &&
	       (int32_t)(qp->sig_ring[qp->sig_tail & qp->sig_mask].seq - n) <= 0)
		qp->sig_tail++;
	mana_store_index(&qp->ring.retired, n + 1);
	return wr_id;
}

/* The oldest outstanding send WQE. */
static uint64_t sq_retire(struct mana_qp *qp)
{
	return sq_retire_at(qp, qp->ring.tail_bu, qp->ring.retired);
}

/*
 * Does the error CQE's WQE offset (bytes or units into the ring) name the
 * WQE at unit @bu?
 */
static bool tx_error_matches(struct mana_qp *qp, uint32_t bu, uint32_t off)
{
	return off == mana_ring_off(bu, qp->ring.mask) ||
	       off == (bu & (qp->ring.cap_bu - 1));
}

/*
 * A send error: errors always complete, signaled or not, so the WQE may be
 * an unsignaled one behind others that succeeded silently (up to the first
 * signaled WQE, whose own completion would have come first).  The CQE's
 * WQE offset picks it; without a match, the oldest outstanding one.  Its
 * WR id; those before it are retired without a completion.
 */
static uint64_t tx_error_retire(struct mana_qp *qp, const uint8_t *cqe)
{
	uint32_t off = gdma_ld32(cqe + MANA_TXCOMP_WQE_DW_OFF) >> MANA_TXCOMP_WQE_SHIFT;
	uint32_t posted = mana_load_index(&qp->ring.posted), first_sig = posted;
	uint32_t pos = qp->ring.tail_bu, n = qp->ring.retired;

	if (qp->sig_tail != mana_load_index(&qp->sig_head))
		first_sig = qp->sig_ring[qp->sig_tail & qp->sig_mask].seq;
	for (; n != posted; n++) {
		if (tx_error_matches(qp, pos, off))
			return sq_retire_at(qp, pos, n);
		if (n == first_sig)
			break;
		pos += mana_wqe_info_at(qp->ring.wqes,
					mana_ring_off(pos, qp->ring.mask))->size_bu;
	}
	return sq_retire(qp);
}

static int tx_completion(struct mana_cq *cq, const uint8_t *cqe,
			 struct mana_wc *wc)
{
	struct mana_qp *qp = cq->sq_qp;
	uint8_t type = mana_cqe_fast_type(cqe);
	struct mana_sq_signaled sig;

	if (mana_ring_idle(&qp->ring))
		return 0;	/* nothing outstanding: a stray CQE */
	if (type == CQE_TX_OKAY) {
		/* the oldest signaled WQE; those before it succeeded silently */
		if (qp->sig_tail == mana_load_index(&qp->sig_head))
			return 0;
		sig = qp->sig_ring[qp->sig_tail & qp->sig_mask];
		wc_set(wc, sq_retire_at(qp, sig.start_bu, sig.seq), IBV_WC_SUCCESS, 0);
		return 1;
	}
	wc_set(wc, tx_error_retire(qp, cqe), tx_error_status(type),
	       cqe_vendor_err(cqe, type));
	return 1;
}

static void rx_emit(struct mana_cq *cq, struct mana_wc *wc)
{
	struct mana_rx_backlog *b = &cq->backlog;

	wc_set(wc, mana_ring_retire(&cq->rq->ring), IBV_WC_SUCCESS, 0);
	wc->byte_len = b->len[b->next++];
	wc->rx_flags = b->flags;
	if (!--b->left)
		cq->fast_rq = cq->rq;	/* nothing held back any more */
}

static int rx_completion(struct mana_cq *cq, const uint8_t *cqe,
			 struct mana_wc *wc)
{
	struct mana_wq *wq = cq->rq;
	uint8_t type = mana_cqe_fast_type(cqe);
	struct mana_rx_backlog *b = &cq->backlog;
	unsigned int i;

	if (mana_ring_idle(&wq->ring))
		return 0;	/* no posted buffer: a stray CQE */
	switch (type) {
	case CQE_RX_OKAY:
	case CQE_RX_COALESCED_4:
		b->flags = gdma_ld32(cqe + MANA_RXCOMP_FLAGS_OFF);
		b->next = 0;
		b->left = 0;
		for (i = 0; i < (type == CQE_RX_OKAY ? 1u : 4u); i++) {
			b->len[i] = mana_rx_fast_len(cqe, i);
			if (!b->len[i])
				break;
			b->left++;
		}
		if (!b->left)
			return 0;
		cq->fast_rq = &never_ready;	/* the held-back frames go first */
		rx_emit(cq, wc);
		return 1;
	case CQE_RX_OBJECT_FENCE:
		return 0;
	default:
		wc_set(wc, mana_ring_retire(&wq->ring),
		       type == CQE_RX_TRUNCATED ? IBV_WC_LOC_LEN_ERR : IBV_WC_GENERAL_ERR,
		       cqe_vendor_err(cqe, type));
		return 1;
	}
}

/* After a device fatal or a QP in ERR: every outstanding WR, flushed once. */
static int flush_one(struct mana_cq *cq, struct mana_wc *wc)
{
	if (cq->sq_qp) {
		if (mana_ring_idle(&cq->sq_qp->ring))
			return 0;
		wc_set(wc, sq_retire(cq->sq_qp), IBV_WC_WR_FLUSH_ERR, 0);
		return 1;
	}
	if (cq->rq && !mana_ring_idle(&cq->rq->ring)) {
		wc_set(wc, mana_ring_retire(&cq->rq->ring), IBV_WC_WR_FLUSH_ERR, 0);
		return 1;
	}
	return 0;
}

/* Owner bits of a raw CQE, in place (top 3 bits of byte 63). */
static inline uint32_t cqe_owner_bits(const uint8_t *cqe)
{
	return cqe[GDMA_CQE_SIZE - 1] & (GDMA_OWNER_MASK << GDMA_CQE_OWNER_SHIFT);
}

/* The consumer wrapped: a new lap expects new owner bits. */
static inline uint32_t cq_next_lap(struct mana_cq *cq)
{
	cq->lap++;
	cq->owner_bits = (cq->lap & GDMA_OWNER_MASK) << GDMA_CQE_OWNER_SHIFT;
	return cq->owner_bits;
}

/* Past the CQE at the consumer index. */
static inline void cq_advance(struct mana_cq *cq, const uint8_t *cqe)
{
	cqe += GDMA_CQE_SIZE;
	if (mana_unlikely(cqe == cq->end_cqe)) {
		cqe = cq->buf.addr;
		cq_next_lap(cq);
	}
	cq->next_cqe = cqe;
}

/*
 * The common receive completion: one frame for a posted buffer, nothing
 * held back.  Its CQE (the WR id in *wr_id), or NULL to leave it to
 * cq_next.  Positions as ex_sync left them (struct mana_cq): the stray and
 * wrap checks were made there, once per ibv_start_poll, in ex_stop.
 */
static inline const uint8_t *rx_fast(struct mana_cq *cq, uint64_t *wr_id)
{
	const uint8_t *cqe = cq->next_cqe;

	if (cqe == cq->ex_stop || cqe_owner_bits(cqe) != cq->owner_bits)
		return NULL;	/* empty, lapped, stray or wrapping: cq_next decides */
	atomic_thread_fence(memory_order_acquire);
	if (mana_cqe_fast_type(cqe) != CQE_RX_OKAY)
		return NULL;
	*wr_id = cq->ex_wr_ids[cq->ex_next++ & cq->ex_wr_mask];
	cq->next_cqe = cqe + GDMA_CQE_SIZE;
	return cqe;
}

/*
 * The fast path's position from fast_rq, once per ibv_start_poll (and
 * after the general path): no further than the buffers posted now, nor
 * than the end of the ring.
 */
static inline void ex_sync(struct mana_cq *cq)
{
	const struct mana_ring *r = &cq->fast_rq->ring;
	uint32_t avail = mana_load_index(&r->posted) - r->retired;
	size_t room = (size_t)(cq->end_cqe - cq->next_cqe) / GDMA_CQE_SIZE;

	cq->ex_next = r->retired;
	cq->ex_wr_ids = r->wr_ids;
	cq->ex_wr_mask = r->wr_mask;
	cq->ex_stop = cq->next_cqe + (avail < room ? avail : room) * GDMA_CQE_SIZE;
}

/* What the fast path took goes back to the poster; its position wraps. */
static inline void ex_publish(struct mana_cq *cq)
{
	struct mana_ring *r = &cq->fast_rq->ring;

	if (cq->ex_next != r->retired)
		mana_store_index(&r->retired, cq->ex_next);
	if (mana_unlikely(cq->next_cqe == cq->end_cqe)) {
		cq->next_cqe = cq->buf.addr;
		cq_next_lap(cq);
	}
}

/*
 * Next completion of @cq: 1 and *wc filled, 0 when there is none, -1 when
 * the owner bits show the device lapped us (completions were lost).
 */
static int cq_next(struct mana_cq *cq, struct mana_wc *wc)
{
	const uint32_t lap_bit = 1u << GDMA_CQE_OWNER_SHIFT;
	const uint32_t all = GDMA_OWNER_MASK << GDMA_CQE_OWNER_SHIFT;
	const uint8_t *cqe;
	uint32_t owner;
	int ret;

	if (cq->backlog.left) {
		rx_emit(cq, wc);
		return 1;
	}
	for (;;) {
		cqe = cq->next_cqe;
		owner = cqe_owner_bits(cqe);
		if (owner == ((cq->owner_bits - lap_bit) & all)) {
			/* empty: a dead device or a QP in error flushes the rest */
			if ((cq->sq_qp && cq->sq_qp->flushing) ||
			    mana_ctx_fatal(cq->vcq.cq.context))
				return flush_one(cq, wc);
			return 0;
		}
		if (owner != cq->owner_bits) {
			mana_cq_set_overrun(cq);
			return -1;
		}
		atomic_thread_fence(memory_order_acquire);
		cq_advance(cq, cqe);
		if (cq->sq_qp)
			ret = tx_completion(cq, cqe, wc);
		else if (cq->rq)
			ret = rx_completion(cq, cqe, wc);
		else
			ret = 0;	/* unbound CQ: nothing to report */
		if (ret)
			return ret;
	}
}

static void cq_lock(struct mana_cq *cq)
{
	if (!cq->single_threaded)
		mana_spin_lock(&cq->lock);
}

static void cq_unlock(struct mana_cq *cq)
{
	if (!cq->single_threaded)
		mana_spin_unlock(&cq->lock);
}

/* Tell the device how far we got: it must hear from us every 8 laps. */
static void cq_doorbell(struct mana_cq *cq, bool arm)
{
	struct mana_context *ctx = to_mctx(cq->vcq.cq.context);
	uint64_t tail = cq_index(cq) % (cq->count << 3);

	mana_ring_doorbell(ctx->db_page, GDMA_DB_OFF_CQ,
			   (uint64_t)cq->cqid | tail << 32 | (uint64_t)arm << 63);
	cq->rang_lap = cq->lap;
}

/*
 * A CQ armed before a raw queue bound it: arm the hardware CQ that queue
 * gave it (a CQ without one until now, or an RNIC CQ whose raw queue
 * completes on a hardware CQ of its own).  No completion can have
 * happened in between, so the event is the one the caller asked for.
 */
static void cq_arm_pending(struct mana_cq *cq)
{
	cq_lock(cq);
	if (cq->arm_pending && cq->cqid != UINT32_MAX) {
		cq->arm_pending = false;
		cq_doorbell(cq, true);
	}
	cq_unlock(cq);
}

static void cq_maybe_ring(struct mana_cq *cq)
{
	if (cq->lap - cq->rang_lap >= 4 && cq->cqid != UINT32_MAX &&
	    to_mctx(cq->vcq.cq.context)->db_page)
		cq_doorbell(cq, false);
}

static inline bool cq_overrun(struct mana_cq *cq)
{
	return mana_cq_overrun(cq);
}

static void overflow_error(struct mana_cq *cq)
{
	mana_err(cq->vcq.cq.context,
		 "CQ %u overflowed: the device wrote over completions not yet polled",
		 cq->cqid);
}

/*
 * IBV_WC_IP_CSUM_OK: the device verified the IP and the TCP/UDP checksum.
 * A table over the five flag bits from IP_OK to UDP_OK, a branch-free
 * lookup on the receive path.
 */
#define RXFL_CSUM_SHIFT 25
_Static_assert(MANA_RXFL_IP_OK == 1u << RXFL_CSUM_SHIFT &&
	       MANA_RXFL_TCP_OK == 1u << (RXFL_CSUM_SHIFT + 2) &&
	       MANA_RXFL_UDP_OK == 1u << (RXFL_CSUM_SHIFT + 4),
	       "checksum flag bits as the table assumes");
#define CSUM_OK(i) (((i) & 1) && ((i) & 0x14) ? IBV_WC_IP_CSUM_OK : 0)
#define CSUM_OK4(i) CSUM_OK(i), CSUM_OK((i) + 1), CSUM_OK((i) + 2), CSUM_OK((i) + 3)
static const uint8_t csum_ok[32] = {
	CSUM_OK4(0), CSUM_OK4(4), CSUM_OK4(8), CSUM_OK4(12),
	CSUM_OK4(16), CSUM_OK4(20), CSUM_OK4(24), CSUM_OK4(28),
};

static inline uint32_t rx_wc_flags(uint32_t fl)
{
	return csum_ok[(fl >> RXFL_CSUM_SHIFT) & 31];
}

static inline uint16_t rx_vlan(uint32_t fl)
{
	return (fl & MANA_RXFL_VLAN_PRESENT) ? (fl & MANA_RXFL_VLAN_ID_MASK) : 0;
}

/* Two adjacent 32-bit fields of a WC in one store. */
static inline void wc_pair(void *dst, uint32_t first, uint32_t second)
{
	uint32_t v[2] = { first, second };

	memcpy(dst, v, sizeof(v));
}

#define WC_ADJACENT(a, b) \
	_Static_assert(offsetof(struct ibv_wc, b) == offsetof(struct ibv_wc, a) + 4, \
		       #a " and " #b " are adjacent")
WC_ADJACENT(status, opcode);
WC_ADJACENT(vendor_err, byte_len);
WC_ADJACENT(imm_data, qp_num);
WC_ADJACENT(src_qp, wc_flags);
_Static_assert(sizeof(struct ibv_wc) - offsetof(struct ibv_wc, pkey_index) == 8,
	       "pkey_index, slid, sl, dlid_path_bits and padding: 8 bytes");

/*
 * Everything of a WC but wr_id, in five stores.  Opcode and QP number are
 * the CQ's, passed in so that a loop can keep them in registers.
 */
static inline void fill_wc(struct ibv_wc *wc, uint32_t opcode, uint32_t qp_num,
			   enum ibv_wc_status status, uint32_t vendor_err,
			   uint32_t byte_len, uint32_t rx_flags)
{
	wc_pair(&wc->status, status, opcode);
	wc_pair(&wc->vendor_err, vendor_err, byte_len);
	wc_pair(&wc->imm_data, 0, qp_num);
	wc_pair(&wc->src_qp, 0, rx_wc_flags(rx_flags));
	memset(&wc->pkey_index, 0, 8);
}

/*
 * Plain receive completions, as many as come in a row (at most @max), with
 * the CQ and WQ positions in locals: what rx_fast does per entry, for a
 * whole burst.
 */
static int rx_batch(struct mana_cq *cq, struct ibv_wc *wc, int max)
{
	struct mana_wq *wq = cq->fast_rq;
	const uint64_t *wr_ids = wq->ring.wr_ids;
	const uint8_t *cqe = cq->next_cqe, *end = cq->end_cqe;
	uint32_t owner = cq->owner_bits, opcode = cq->opcode, qp_num = cq->qp_num;
	uint32_t n0 = wq->ring.retired, idx = n0, wr_mask = wq->ring.wr_mask;
	/* no more than there are buffers posted: a CQE beyond is a stray */
	uint32_t avail = mana_load_index(&wq->ring.posted) - n0;
	struct ibv_wc *w = wc, *wc_end;
	int n;

	wc_end = wc + (avail < (uint32_t)max ? avail : (uint32_t)max);

	for (; w != wc_end; w++) {
		if (cqe_owner_bits(cqe) != owner)
			break;
		atomic_thread_fence(memory_order_acquire);
		if (mana_cqe_fast_type(cqe) != CQE_RX_OKAY)
			break;
		w->wr_id = wr_ids[idx++ & wr_mask];
		fill_wc(w, opcode, qp_num, IBV_WC_SUCCESS, 0, mana_rx_fast_len(cqe, 0),
			gdma_ld32(cqe + MANA_RXCOMP_FLAGS_OFF));
		cqe += GDMA_CQE_SIZE;
		if (mana_unlikely(cqe == end)) {
			cqe = cq->buf.addr;
			owner = cq_next_lap(cq);
		}
	}
	n = (int)(w - wc);
	if (n) {
		cq->next_cqe = cqe;
		mana_store_index(&wq->ring.retired, idx);
	}
	return n;
}

int mana_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct mana_cq *cq = to_mcq(ibcq);
	struct mana_wc c;
	int n, ret = 0;

	if (num_entries <= 0)
		return cq->rc ? mana_rc_poll_cq(cq, num_entries, wc) : 0;
	/* one test for both: RC QPs complete in rc_poll.c; an overrun fails */
	if (mana_unlikely(atomic_load_explicit(&cq->slow, memory_order_relaxed)))
		return cq->rc ? mana_rc_poll_cq(cq, num_entries, wc) :
				-1;	/* logged when it was found */
	cq_lock(cq);
	n = cq->rq ? rx_batch(cq, wc, num_entries) : 0;
	while (n < num_entries) {
		/* anything else: one entry the general way, then fast again */
		ret = cq_next(cq, &c);
		if (ret <= 0)
			break;
		wc[n].wr_id = c.wr_id;
		fill_wc(&wc[n], cq->opcode, cq->qp_num, c.status, c.vendor_err,
			c.byte_len, c.rx_flags);
		n++;
		if (cq->rq)
			n += rx_batch(cq, wc + n, num_entries - n);
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

	/*
	 * Raw Ethernet has no solicited completions to wait for: refuse, as
	 * rdma-core's libmana does (EOPNOTSUPP), rather than arm for all.
	 */
	if (solicited_only) {
		mana_err(ibcq->context,
			 "solicited-only arming is not supported: arm with solicited_only 0");
		return EOPNOTSUPP;
	}
	cq_lock(cq);
	cq->notify_asked = true;
	/* not bound yet: armed again (or only) when its queue is created */
	if (!atomic_load(&cq->bound))
		cq->arm_pending = true;
	if (cq->cqid != UINT32_MAX)
		cq_doorbell(cq, true);
	cq_unlock(cq);
	return 0;
}

/*
 * A QP of @cq was moved to ERR and its WRs are now flushed on poll: arm
 * the CQ again, so that a consumer asleep on its channel is woken to poll
 * them (the device answers the arm that follows a QP's ERR with the
 * event at once).  Only for a CQ the application ever armed: an extra
 * event is one verbs allows, an event never asked for is not.  A CQ
 * whose lock is held is being polled (the modify may come from inside
 * ibv_start_poll/ibv_end_poll): that poller sees the flushes itself; a
 * single-threaded CQ's one thread is the caller, not asleep.
 */
void mana_cq_rearm_for_flush(struct mana_cq *cq)
{
	if (cq->single_threaded || !mana_spin_trylock(&cq->lock))
		return;
	if (cq->notify_asked && cq->cqid != UINT32_MAX)
		cq_doorbell(cq, true);
	mana_spin_unlock(&cq->lock);
}

void mana_async_event(struct ibv_context *ibctx, struct ibv_async_event *event)
{
	struct mana_cq *cq;

	if (event->event_type == IBV_EVENT_CQ_ERR && event->element.cq) {
		/*
		 * The device overwrote completions not yet polled, however
		 * many laps (owner bits alias at 8): the CQ is broken for good.
		 */
		cq = to_mcq(event->element.cq);
		mana_cq_set_overrun(cq);
		overflow_error(cq);
		return;
	}
	if ((event->event_type == IBV_EVENT_QP_FATAL ||
	     event->event_type == IBV_EVENT_QP_REQ_ERR ||
	     event->event_type == IBV_EVENT_QP_ACCESS_ERR) &&
	    event->element.qp &&
	    mana_qp_type_rnic(event->element.qp->qp_type)) {
		/* the device stopped the QP: flush once the CQEs are read */
		mana_rc_qp_to_err(to_mrcqp(event->element.qp));
		return;
	}
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

static __attribute__((noinline)) int ex_fetch_slow(struct mana_cq *cq)
{
	int ret;

	/* the general path counts from retired, and may switch fast_rq */
	ex_publish(cq);
	ret = cq_next(cq, &cq->cur);

	if (ret > 0) {
		ex_sync(cq);
		/* the fast path does not write status: it runs after successes only */
		if (cq->cur.status != IBV_WC_SUCCESS)
			cq->ex_stop = cq->next_cqe;
		cq->vcq.cq_ex.wr_id = cq->cur.wr_id;
		cq->vcq.cq_ex.status = cq->cur.status;
		/* for the readers, in the places of a receive CQE */
		memset(cq->cur_rx, 0, sizeof(cq->cur_rx));
		gdma_st32(cq->cur_rx + MANA_RXCOMP_FLAGS_OFF, cq->cur.rx_flags);
		cq->cur_rx[MANA_RXCOMP_PPI_OFF] = (uint8_t)cq->cur.byte_len;
		cq->cur_rx[MANA_RXCOMP_PPI_OFF + 1] = (uint8_t)(cq->cur.byte_len >> 8);
		cq->cur_cqe = cq->cur_rx;
		return 0;
	}
	/* nothing more this poll: the fast path stands aside until ex_sync */
	cq->ex_stop = cq->next_cqe;
	cq->ex_next = cq->fast_rq->ring.retired;
	if (ret < 0) {
		overflow_error(cq);
		return EOVERFLOW;
	}
	return ENOENT;
}

/*
 * wr_id into the cq_ex, the rest for the readers.  The status is already
 * IBV_WC_SUCCESS whenever the fast path runs (ex_start_poll, and an entry
 * of another status parks the fast path until the next slow fetch).
 */
static inline int ex_fetch(struct mana_cq *cq)
{
	struct ibv_cq_ex *ex = &cq->vcq.cq_ex;
	const uint8_t *cqe = rx_fast(cq, &ex->wr_id);

	if (mana_likely(cqe)) {
		cq->cur_cqe = cqe;
		return 0;
	}
	return ex_fetch_slow(cq);
}

static int ex_start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct mana_cq *cq = ex_to_mcq(ibcq);
	int ret;

	if (attr && attr->comp_mask)
		return EINVAL;
	if (mana_unlikely(cq_overrun(cq)))
		return EOVERFLOW;
	cq_lock(cq);
	ibcq->status = IBV_WC_SUCCESS;
	ex_sync(cq);
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

	ex_publish(cq);
	cq_maybe_ring(cq);
	cq_unlock(cq);
}

static enum ibv_wc_opcode ex_read_opcode(struct ibv_cq_ex *cq)
{
	return ex_to_mcq(cq)->opcode;
}

static uint32_t ex_read_vendor_err(struct ibv_cq_ex *cq)
{
	/* the fast path leaves cur.vendor_err alone: it is only set on errors */
	return cq->status == IBV_WC_SUCCESS ? 0 : ex_to_mcq(cq)->cur.vendor_err;
}

static uint32_t ex_read_byte_len(struct ibv_cq_ex *cq)
{
	return mana_rx_fast_len(ex_to_mcq(cq)->cur_cqe, 0);
}

static __be32 ex_read_imm_data(struct ibv_cq_ex *cq)
{
	return 0;
}

static uint32_t ex_read_qp_num(struct ibv_cq_ex *cq)
{
	return ex_to_mcq(cq)->qp_num;
}

static uint32_t ex_read_zero32(struct ibv_cq_ex *cq)
{
	return 0;
}

static unsigned int ex_read_wc_flags(struct ibv_cq_ex *cq)
{
	return rx_wc_flags(gdma_ld32(ex_to_mcq(cq)->cur_cqe + MANA_RXCOMP_FLAGS_OFF));
}

static uint8_t ex_read_zero8(struct ibv_cq_ex *cq)
{
	return 0;
}

static uint16_t ex_read_cvlan(struct ibv_cq_ex *cq)
{
	return rx_vlan(gdma_ld32(ex_to_mcq(cq)->cur_cqe + MANA_RXCOMP_FLAGS_OFF));
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
