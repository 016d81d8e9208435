// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completions of RC QPs on RNIC CQs: ibv_poll_cq and the extended CQ.
 *
 * One CQ may serve many RC QPs, as sender and as receiver; a CQE names its
 * queue (wqid, is_sq) and the QP is found on the CQ's lists.
 *   - ARMED_CMPL (send CQ): everything up to its PSN is acknowledged; the
 *     send WRs ending there complete (a CQE for the signaled ones), and the
 *     next signaled WR is armed.
 *   - receive CQEs (recv CQ): the oldest receive WR completes.
 *   - ERROR: the QP is in ERR.  The send WRs before the failing PSN
 *     complete, the failing one (or, on the receive side, the oldest
 *     receive) carries the error, and every other outstanding WR of the QP
 *     is flushed (IBV_WC_WR_FLUSH_ERR) exactly once, as the hardware
 *     writes no flush CQEs.
 * Flushing waits until the CQ has no CQE left, so that the CQEs written
 * before the QP went to ERR are reported first.
 */
#include <endian.h>
#include <string.h>

#include "rc.h"
#include "rc_err.h"

/* the poller's steps, inlined into each verb */
#define RC_INLINE static inline __attribute__((always_inline))

static inline uint32_t owner_bits(const uint8_t *cqe)
{
	return cqe[GDMA_CQE_SIZE - 1] & (GDMA_OWNER_MASK << GDMA_CQE_OWNER_SHIFT);
}

static void rc_cq_lock(struct mana_cq *cq)
{
	if (!cq->single_threaded)
		mana_spin_lock(&cq->lock);
}

static void rc_cq_unlock(struct mana_cq *cq)
{
	if (!cq->single_threaded)
		mana_spin_unlock(&cq->lock);
}

/* ---- the CQ ring ------------------------------------------------------ */

enum { CQ_EMPTY, CQ_ENTRY, CQ_OVERRUN };

RC_INLINE int cq_fetch(struct mana_cq *cq, const uint8_t **out)
{
	const uint32_t lap_bit = 1u << GDMA_CQE_OWNER_SHIFT;
	const uint32_t all = GDMA_OWNER_MASK << GDMA_CQE_OWNER_SHIFT;
	const uint8_t *cqe = cq->next_cqe;
	uint32_t owner = owner_bits(cqe);

	if (owner == ((cq->owner_bits - lap_bit) & all))
		return CQ_EMPTY;
	if (owner != cq->owner_bits) {
		mana_cq_set_overrun(cq);
		return CQ_OVERRUN;
	}
	atomic_thread_fence(memory_order_acquire);
	cqe += GDMA_CQE_SIZE;
	if (cqe == cq->end_cqe) {
		cqe = cq->buf.addr;
		cq->lap++;
		cq->owner_bits = (cq->lap & GDMA_OWNER_MASK) << GDMA_CQE_OWNER_SHIFT;
	}
	*out = cq->next_cqe;
	cq->next_cqe = cqe;
	return CQ_ENTRY;
}

/* The device must hear how far we got at least every 8 laps. */
static void cq_ring(struct mana_cq *cq)
{
	uint32_t index, tail;
	uint64_t v;

	index = cq->lap * cq->count +
		(uint32_t)((cq->next_cqe - (const uint8_t *)cq->buf.addr) / GDMA_CQE_SIZE);
	tail = index % (cq->count << 3);
	v = (uint64_t)cq->cqid | (uint64_t)tail << 32;
	mana_ring_doorbell(to_mctx(cq->vcq.cq.context)->db_page, GDMA_DB_OFF_CQ, v);
	cq->rang_lap = cq->lap;
}

RC_INLINE void cq_maybe_ring(struct mana_cq *cq)
{
	if (mana_unlikely(cq->lap - cq->rang_lap >= 4))
		cq_ring(cq);
}

/* ---- QPs -------------------------------------------------------------- */

static struct mana_rc_qp *find_qp(struct mana_cq *cq, uint32_t wqid, bool send,
				  bool is_sq)
{
	struct mana_rc_qp *qp;
	unsigned int q;

	if (send) {
		q = is_sq ? MANA_RC_SEND_QUEUE_REQUESTER : MANA_RC_RECV_QUEUE_REQUESTER;
		for (qp = cq->rc_send_qps; qp; qp = qp->send_next)
			if (qp->q[q].id == wqid)
				return qp;
		return NULL;
	}
	for (qp = cq->rc_recv_qps; qp; qp = qp->recv_next)
		if (qp->q[MANA_RC_RECV_QUEUE_RESPONDER].id == wqid)
			return qp;
	return NULL;
}

static void wc_init(struct ibv_wc *wc, struct mana_rc_qp *qp, uint64_t wr_id,
		    enum ibv_wc_status status, enum ibv_wc_opcode opcode,
		    uint32_t vendor_err)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = wr_id;
	wc->status = status;
	wc->opcode = opcode;
	wc->vendor_err = status == IBV_WC_SUCCESS ? 0 : vendor_err;
	wc->qp_num = qp->qp.vqp.qp.qp_num;
}

/*
 * The next send completion of @qp that is due, into @wc: 1, or 0 if none.
 * Unsignaled WRs that are done retire on the way; their queue space goes
 * back to the posters once, after the walk (consumer before sq_tail: a
 * poster that sees the tail sees the space).  Flushed WRs only if @flush.
 */
static int sq_emit(struct mana_rc_qp *qp, struct ibv_wc *wc, bool flush)
{
	struct mana_rc_queue *sq = &qp->q[MANA_RC_SEND_QUEUE_REQUESTER];
	struct mana_rc_queue *rreq = &qp->q[MANA_RC_RECV_QUEUE_REQUESTER];
	uint32_t head = __atomic_load_n(&qp->sq_head, __ATOMIC_ACQUIRE);
	uint32_t tail = qp->sq_tail, cons = sq->cons_bu, rcons = 0;
	enum ibv_wc_status st;
	const struct mana_rc_swr *e;
	uint32_t vendor = 0;
	int got = 0;

	for (; tail != head; tail++) {
		e = &qp->swr[tail & qp->swr_mask];
		if (mana_unlikely(qp->sq_err)) {
			if (mana_psn_lt(e->end_psn, qp->sq_err_psn)) {
				st = IBV_WC_SUCCESS;
			} else {
				vendor = qp->sq_err_vendor;
				st = mana_vendor_err_to_wc_status(vendor);
				if (st == IBV_WC_SUCCESS)
					st = IBV_WC_GENERAL_ERR;
				qp->sq_err = false;
			}
		} else if (e->size_bu &&	/* 0: mana_rc_swr_flushed() */
			   mana_rc_psn_le(e->end_psn, qp->acked_psn)) {
			st = IBV_WC_SUCCESS;
		} else if (flush && atomic_load(&qp->flushing)) {
			st = IBV_WC_WR_FLUSH_ERR;
			vendor = MANA_VERR_SW_FLUSHED;
		} else {
			break;
		}
		cons += e->size_bu;
		rcons += e->rreq_bu;
		if (st == IBV_WC_SUCCESS && !e->signaled)
			continue;
		wc_init(wc, qp, e->wr_id, st, e->opcode, vendor);
		wc->byte_len = e->byte_len;
		got = 1;
		tail++;
		break;
	}
	if (tail != qp->sq_tail) {
		__atomic_store_n(&sq->cons_bu, cons, __ATOMIC_RELEASE);
		if (rcons)
			__atomic_store_n(&rreq->cons_bu, rreq->cons_bu + rcons,
					 __ATOMIC_RELEASE);
		atomic_store_explicit(&qp->rollback->left, cons * GDMA_WQE_BU_SIZE,
				      memory_order_relaxed);
		__atomic_store_n(&qp->sq_tail, tail, __ATOMIC_RELEASE);
	}
	return got;
}

static void rq_retire(struct mana_rc_qp *qp, const struct mana_rc_rwr *e)
{
	struct mana_rc_queue *rq = &qp->q[MANA_RC_RECV_QUEUE_RESPONDER];

	__atomic_store_n(&rq->cons_bu, e->start_bu + e->size_bu, __ATOMIC_RELEASE);
	__atomic_store_n(&qp->rq_tail, qp->rq_tail + 1, __ATOMIC_RELEASE);
}

/* The receive side's error or flush completions that are due. */
static int rq_emit(struct mana_rc_qp *qp, struct ibv_wc *wc, bool flush)
{
	uint32_t head = __atomic_load_n(&qp->rq_head, __ATOMIC_ACQUIRE);
	struct mana_rc_rwr e;

	if (qp->rq_tail == head)
		return 0;
	e = qp->rwr[qp->rq_tail & qp->rwr_mask];
	if (qp->rq_err) {
		enum ibv_wc_status st = mana_vendor_err_to_wc_status(qp->rq_err_vendor);

		qp->rq_err = false;
		rq_retire(qp, &e);
		wc_init(wc, qp, e.wr_id, st == IBV_WC_SUCCESS ? IBV_WC_GENERAL_ERR : st,
			IBV_WC_RECV, qp->rq_err_vendor);
		return 1;
	}
	if (flush && atomic_load(&qp->flushing)) {
		rq_retire(qp, &e);
		wc_init(wc, qp, e.wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV,
			MANA_VERR_SW_FLUSHED);
		return 1;
	}
	return 0;
}

/* Any completion due on this CQ that needs no CQE. */
static int emit_due(struct mana_cq *cq, struct ibv_wc *wc, bool flush)
{
	struct mana_rc_qp *qp;

	for (qp = cq->rc_send_qps; qp; qp = qp->send_next)
		if (sq_emit(qp, wc, flush))
			return 1;
	for (qp = cq->rc_recv_qps; qp; qp = qp->recv_next)
		if (rq_emit(qp, wc, flush))
			return 1;
	return 0;
}

/* Arm the oldest signaled WR not yet acknowledged, if any. */
static void rearm(struct mana_rc_qp *qp)
{
	const struct mana_rc_swr *e;
	uint32_t i;

	mana_spin_lock(&qp->sq_lock);
	qp->armed = false;
	if (!atomic_load(&qp->flushing)) {
		for (i = qp->sq_tail; i != qp->sq_head; i++) {
			e = &qp->swr[i & qp->swr_mask];
			if (e->signaled && !mana_rc_psn_le(e->end_psn, qp->acked_psn)) {
				qp->armed = true;
				mana_rc_ring_arm(qp, e->end_psn);
				break;
			}
		}
	}
	mana_spin_unlock(&qp->sq_lock);
}

/*
 * UC: the device completed (sent) the next signaled WR.  Its end PSN
 * becomes the "acknowledged" PSN, so that sq_emit() completes it and
 * retires the unsignaled WRs before it, as for RC.
 */
static void uc_sent(struct mana_rc_qp *qp)
{
	const struct mana_rc_swr *e;
	uint32_t i;

	mana_spin_lock(&qp->sq_lock);
	for (i = qp->sq_tail; i != qp->sq_head; i++) {
		e = &qp->swr[i & qp->swr_mask];
		if (e->signaled && e->size_bu &&
		    !mana_rc_psn_le(e->end_psn, qp->acked_psn)) {
			qp->acked_psn = e->end_psn;
			break;
		}
	}
	mana_spin_unlock(&qp->sq_lock);
	if (i == qp->sq_head)
		mana_warn(qp->qp.vqp.qp.context,
			  "QP %u: send CQE with no signaled send outstanding, dropped",
			  qp->qp.vqp.qp.qp_num);
}

static int recv_cqe(struct mana_rc_qp *qp, const struct mana_rdma_cqe *c,
		    struct ibv_wc *wc)
{
	uint32_t head = __atomic_load_n(&qp->rq_head, __ATOMIC_ACQUIRE);
	struct mana_rc_rwr e;

	if (qp->rq_tail == head) {
		mana_warn(qp->qp.vqp.qp.context,
			  "QP %u: receive CQE with no receive posted, dropped",
			  qp->qp.vqp.qp.qp_num);
		return 0;
	}
	e = qp->rwr[qp->rq_tail & qp->rwr_mask];
	if (c->rx_wqe_offset != e.start_bu * GDMA_WQE_BU_SIZE)
		mana_warn(qp->qp.vqp.qp.context,
			  "QP %u: receive CQE for WQE at %u, expected %u; completing the oldest",
			  qp->qp.vqp.qp.qp_num, c->rx_wqe_offset,
			  e.start_bu * GDMA_WQE_BU_SIZE);
	rq_retire(qp, &e);
	wc_init(wc, qp, e.wr_id, IBV_WC_SUCCESS,
		c->type == MANA_RDMA_CQE_RC_WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM :
							IBV_WC_RECV, 0);
	wc->byte_len = c->msg_len;
	wc->src_qp = qp->attr.dest_qp_num;
	if (c->type == MANA_RDMA_CQE_RC_SEND_IMM ||
	    c->type == MANA_RDMA_CQE_RC_WRITE_IMM) {
		wc->imm_data = htobe32(c->imm);
		wc->wc_flags = IBV_WC_WITH_IMM;
	} else if (c->type == MANA_RDMA_CQE_RC_SEND_INV) {
		wc->invalidated_rkey = c->imm;
		wc->wc_flags = IBV_WC_WITH_INV;
	}
	return 1;
}

static void bad_cqe(struct mana_cq *cq, const uint8_t *cqe)
{
	mana_err(cq->vcq.cq.context,
		 "CQ %u: undecodable RDMA CQE (dword0 %#x, last dword %#x), dropped",
		 cq->cqid, gdma_ld32(cqe), gdma_ld32(cqe + GDMA_CQE_DATA_SIZE));
}

static inline uint64_t ld64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

/*
 * The usual CQE, a SEND received (no immediate) for the oldest receive
 * WR, taken from its words with the checks gdma_cqe_decode() and
 * mana_rdma_cqe_decode() make: 1 with a completion in @wc, 0 if it did
 * not come from a known QP, -1 if it is anything else (process_cqe() then
 * decodes it and reports what is odd).
 */
RC_INLINE int recv_fast(struct mana_cq *cq, const uint8_t *raw,
			 struct ibv_wc *wc)
{
	uint64_t w0 = ld64(raw), w1 = ld64(raw + 8), w2, w7;
	const struct mana_rc_rwr *e;
	struct mana_rc_qp *qp;
	uint32_t trailer, wqid, tail;

	/* type 3 and nothing else in dword 0; PSN 24 bits; no immediate */
	if ((uint32_t)w0 != MANA_RDMA_CQE_RC_SEND || w1 & 0xFFFFFFFFFF000000ULL)
		return -1;
	/* bytes 20-59 clear, the WQE offset in units, no reserved trailer bit */
	w2 = ld64(raw + 16);
	w7 = ld64(raw + 56);
	trailer = (uint32_t)(w7 >> 32);
	if ((w2 >> 32 | ld64(raw + 24) | ld64(raw + 32) | ld64(raw + 40) |
	     ld64(raw + 48) | (uint32_t)w7) || w2 % GDMA_WQE_BU_SIZE ||
	    trailer & 0x1E000000U)
		return -1;
	wqid = trailer & GDMA_QUEUE_ID_MAX;
	for (qp = cq->rc_recv_qps; qp; qp = qp->recv_next)
		if (qp->q[MANA_RC_RECV_QUEUE_RESPONDER].id == wqid)
			break;
	if (!qp)
		return -1;
	tail = qp->rq_tail;
	e = &qp->rwr[tail & qp->rwr_mask];
	if (tail == __atomic_load_n(&qp->rq_head, __ATOMIC_ACQUIRE) ||
	    (uint32_t)w2 != e->start_bu * GDMA_WQE_BU_SIZE)
		return -1;
	wc_init(wc, qp, e->wr_id, IBV_WC_SUCCESS, IBV_WC_RECV, 0);
	wc->byte_len = (uint32_t)(w0 >> 32);
	wc->src_qp = qp->attr.dest_qp_num;
	__atomic_store_n(&qp->q[MANA_RC_RECV_QUEUE_RESPONDER].cons_bu,
			 e->start_bu + e->size_bu, __ATOMIC_RELEASE);
	__atomic_store_n(&qp->rq_tail, tail + 1, __ATOMIC_RELEASE);
	return 1;
}

/* Any CQE but the usual receive: 1 if it gave a completion in @wc, else 0. */
static int process_cqe_slow(struct mana_cq *cq, const uint8_t *raw,
			    struct ibv_wc *wc)
{
	struct mana_rdma_cqe c;
	struct mana_rc_qp *qp;
	struct gdma_cqe g;
	bool send;

	if (gdma_cqe_decode(raw, &g) || mana_rdma_cqe_decode(g.data, &c)) {
		bad_cqe(cq, raw);
		return 0;
	}
	send = c.type == MANA_RDMA_CQE_ARMED_CMPL ||
	       (mana_rdma_cqe_type_is_send(c.type) && g.is_sq) ||
	       (c.type == MANA_RDMA_CQE_ERROR && mana_rc_cqe_is_send(g.wq_num, g.is_sq));
	qp = find_qp(cq, g.wq_num, send, g.is_sq);
	if (!qp)
		return 0;	/* a destroyed QP's */

	switch (c.type) {
	case MANA_RDMA_CQE_UD_SEND:
		if (!send || !qp->uc) {
			bad_cqe(cq, raw);
			return 0;
		}
		uc_sent(qp);
		cq->rc_due = true;
		return 0;
	case MANA_RDMA_CQE_ARMED_CMPL:
		if (mana_syndrome_is_ack(c.syndrome) &&
		    mana_rc_psn_le(qp->acked_psn, c.psn))
			qp->acked_psn = c.psn;
		rearm(qp);
		cq->rc_due = true;
		return 0;
	case MANA_RDMA_CQE_ERROR:
		mana_dbg(cq->vcq.cq.context,
			 "QP %u: error CQE vendor_err %#x (%s), %s side, psn %u",
			 qp->qp.vqp.qp.qp_num, c.vendor_error,
			 mana_vendor_err_name(c.vendor_error) ?: "?",
			 send ? "send" : "receive", c.psn);
		if (send) {
			qp->sq_err = true;
			qp->sq_err_psn = c.psn;
			qp->sq_err_vendor = c.vendor_error;
		} else {
			qp->rq_err = true;
			qp->rq_err_vendor = c.vendor_error;
		}
		cq->rc_due = true;
		/* the device moved the QP to ERR; the rest is flushed */
		mana_rc_qp_to_err(qp);
		return 0;
	default:
		return recv_cqe(qp, &c, wc);
	}
}

/* One CQE: 1 if it gave a completion in @wc, else 0. */
RC_INLINE int process_cqe(struct mana_cq *cq, const uint8_t *raw,
			  struct ibv_wc *wc)
{
	if (recv_fast(cq, raw, wc) > 0)
		return 1;
	return process_cqe_slow(cq, raw, wc);
}

/* Up to @max completions, CQ lock held; -1 if the CQ overflowed. */
static int poll_locked(struct mana_cq *cq, int max, struct ibv_wc *wc)
{
	const uint8_t *cqe;
	int n = 0, r;

	while (n < max) {
		if (cq->rc_due) {
			if (emit_due(cq, &wc[n], false)) {
				n++;
				continue;
			}
			cq->rc_due = false;
		}
		r = cq_fetch(cq, &cqe);
		if (r == CQ_ENTRY) {
			n += process_cqe(cq, cqe, &wc[n]);
			continue;
		}
		if (r == CQ_OVERRUN) {
			mana_err(cq->vcq.cq.context,
				 "CQ %u overflowed: the device wrote over completions not yet polled",
				 cq->cqid);
			return n ? n : -1;
		}
		/* nothing more from the device: now the flushes */
		if (!emit_due(cq, &wc[n], true))
			break;
		n++;
	}
	if (n)
		cq_maybe_ring(cq);
	return n;
}

int mana_rc_poll_cq(struct mana_cq *cq, int num_entries, struct ibv_wc *wc)
{
	int n;

	if (num_entries <= 0)
		return 0;
	if (mana_cq_overrun(cq))
		return -1;
	rc_cq_lock(cq);
	n = poll_locked(cq, num_entries, wc);
	rc_cq_unlock(cq);
	return n;
}

/* ---- extended CQ ------------------------------------------------------ */

static inline struct mana_cq *ex_cq(struct ibv_cq_ex *cq)
{
	return container_of(cq, struct mana_cq, vcq.cq_ex);
}

RC_INLINE int ex_fetch(struct mana_cq *cq)
{
	const uint8_t *cqe;
	int n = 0;

	/*
	 * The usual next entry, a CQE of its own (nothing due without one):
	 * straight to process_cqe() instead of poll_locked()'s loop.
	 */
	if (!cq->rc_due && cq_fetch(cq, &cqe) == CQ_ENTRY &&
	    (n = process_cqe(cq, cqe, &cq->rc_cur)))
		cq_maybe_ring(cq);
	else
		n = poll_locked(cq, 1, &cq->rc_cur);

	if (n <= 0)
		return n < 0 ? EOVERFLOW : ENOENT;
	cq->vcq.cq_ex.wr_id = cq->rc_cur.wr_id;
	cq->vcq.cq_ex.status = cq->rc_cur.status;
	return 0;
}

static int rc_start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	struct mana_cq *cq = ex_cq(ibcq);
	int ret;

	if (attr && attr->comp_mask)
		return EINVAL;
	if (mana_cq_overrun(cq))
		return EOVERFLOW;
	rc_cq_lock(cq);
	ret = ex_fetch(cq);
	if (ret)
		rc_cq_unlock(cq);	/* end_poll is not called after a failure */
	return ret;
}

static int rc_next_poll(struct ibv_cq_ex *ibcq)
{
	return ex_fetch(ex_cq(ibcq));
}

static void rc_end_poll(struct ibv_cq_ex *ibcq)
{
	rc_cq_unlock(ex_cq(ibcq));
}

static enum ibv_wc_opcode rc_read_opcode(struct ibv_cq_ex *cq)
{
	return ex_cq(cq)->rc_cur.opcode;
}

static uint32_t rc_read_vendor_err(struct ibv_cq_ex *cq)
{
	return ex_cq(cq)->rc_cur.vendor_err;
}

static uint32_t rc_read_byte_len(struct ibv_cq_ex *cq)
{
	return ex_cq(cq)->rc_cur.byte_len;
}

static __be32 rc_read_imm_data(struct ibv_cq_ex *cq)
{
	return ex_cq(cq)->rc_cur.imm_data;
}

static uint32_t rc_read_qp_num(struct ibv_cq_ex *cq)
{
	return ex_cq(cq)->rc_cur.qp_num;
}

static uint32_t rc_read_src_qp(struct ibv_cq_ex *cq)
{
	return ex_cq(cq)->rc_cur.src_qp;
}

static unsigned int rc_read_wc_flags(struct ibv_cq_ex *cq)
{
	return ex_cq(cq)->rc_cur.wc_flags;
}

static uint32_t rc_read_zero32(struct ibv_cq_ex *cq)
{
	return 0;
}

static uint8_t rc_read_zero8(struct ibv_cq_ex *cq)
{
	return 0;
}

static uint16_t rc_read_zero16(struct ibv_cq_ex *cq)
{
	return 0;
}

void mana_rc_cq_init_ex_ops(struct mana_cq *cq)
{
	struct ibv_cq_ex *ex = &cq->vcq.cq_ex;

	ex->start_poll = rc_start_poll;
	ex->next_poll = rc_next_poll;
	ex->end_poll = rc_end_poll;
	ex->read_opcode = rc_read_opcode;
	ex->read_vendor_err = rc_read_vendor_err;
	ex->read_wc_flags = rc_read_wc_flags;
	if (cq->wc_flags_ex & IBV_WC_EX_WITH_BYTE_LEN)
		ex->read_byte_len = rc_read_byte_len;
	if (cq->wc_flags_ex & IBV_WC_EX_WITH_IMM)
		ex->read_imm_data = rc_read_imm_data;
	if (cq->wc_flags_ex & IBV_WC_EX_WITH_QP_NUM)
		ex->read_qp_num = rc_read_qp_num;
	if (cq->wc_flags_ex & IBV_WC_EX_WITH_SRC_QP)
		ex->read_src_qp = rc_read_src_qp;
	if (cq->wc_flags_ex & IBV_WC_EX_WITH_SLID)
		ex->read_slid = rc_read_zero32;
	if (cq->wc_flags_ex & IBV_WC_EX_WITH_SL)
		ex->read_sl = rc_read_zero8;
	if (cq->wc_flags_ex & IBV_WC_EX_WITH_DLID_PATH_BITS)
		ex->read_dlid_path_bits = rc_read_zero8;
	if (cq->wc_flags_ex & IBV_WC_EX_WITH_CVLAN)
		ex->read_cvlan = rc_read_zero16;
}
