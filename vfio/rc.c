// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mana-vfio's RC transport (rc.h says why it is not the emulator's engine).
 * The contract with the provider is the emulator's (emulator/README.md
 * "The RNIC: RC transport"): send WQEs carry their first PSN and the path
 * MTU, requester progress is reported only as ARMED_CMPL CQEs the provider
 * asks for with the arm doorbell, receive CQEs name the consumed WQE by
 * its free-running offset, an error CQE takes the QP to ERR and the
 * provider flushes the rest.
 *
 * Requester: WQEs fetched in order into a window, segmented by path MTU,
 * go-back-N on a sequence NAK or a timeout, RNR waits, READ responses
 * placed in the READ's RREQ WQE.  Responder: the expected PSN, duplicates
 * re-ACKed (a duplicate READ re-executed only if it repeats one this QP
 * executed), one sequence NAK per gap, RNR NAK without a receive WQE,
 * rkey, PD, range and access checks at every packet, ACK at each
 * message's end and whenever the A bit asks.  Frames to our own MAC (two
 * QPs of this function) loop inside the device, as an RNIC loops them.
 */
#include "rc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emulator/wire/roce.h"
#include "emulator/wire/roce_rc.h"
#include "providers/mana/gdma.h"

#define WINDOW		64	/* send WQEs in flight per QP */
#define MAX_INFLIGHT	256	/* PSNs sent and not acknowledged */
#define ARMS		64	/* pending arm doorbells per QP */
#define ACK_EVERY	64	/* A bit within long messages */
#define MSG_MAX		(16u << 20)
#define RD_HIST		16	/* READs remembered for duplicates */
#define LOCAL_MAX	1024	/* looped-back frames waiting */
/*
 * 6.12's SET_QP_STATE carries no local_ack_timeout: the device's own,
 * 14 (67 ms, what ibv_rc_pingpong and rdma_cm ask for).
 */
#define TIMEOUT		14
#define BACKOFF_MAX	5	/* a timer expiry without progress doubles */

/* IB_QP_* attribute bits (enum ib_qp_attr_mask) */
#define QPA_STATE		(1ULL << 0)
#define QPA_AV			(1ULL << 7)
#define QPA_PATH_MTU		(1ULL << 8)
#define QPA_RETRY_CNT		(1ULL << 10)
#define QPA_RNR_RETRY		(1ULL << 11)
#define QPA_RQ_PSN		(1ULL << 12)
#define QPA_MIN_RNR_TIMER	(1ULL << 15)
#define QPA_SQ_PSN		(1ULL << 16)
#define QPA_DEST_QPN		(1ULL << 20)

enum { RESET, INIT, RTR, RTS, SQD, SQE, ERR };

struct ring {
	void *ring;
	uint32_t size, id;
	uint32_t head, tail;	/* free-running bytes */
};

struct msg {
	uint8_t type;		/* enum mana_wqe_type */
	bool solicited;
	uint32_t psn, npkts, len;
	uint64_t va;
	uint32_t rkey, imm, inv_key;
	uint32_t nsge;
	struct gdma_sge sge[GDMA_MAX_TX_SGE];
	uint32_t rd_nsge;	/* READ: the RREQ WQE's buffers */
	struct gdma_sge rd_sge[GDMA_MAX_RX_SGE];
	uint32_t rd_next;	/* next response PSN expected */
	bool rd_reissued;
};

struct rd_done {
	uint32_t psn, npkts, rkey, len;
	uint64_t va;
};

struct vrc_qp {
	struct vrc_qp *next;
	uint32_t pd;
	void *send_cq, *recv_cq;
	struct ring sq, rq, rrq;
	uint32_t qpn, state, mtu;
	struct vrc_attr a;

	/* requester */
	struct msg *msgs;		/* WINDOW, a ring from m_head */
	uint32_t m_head, m_cnt, m_cur, pkt_cur;
	uint32_t next_psn, acked, sent_end, msn_seen;
	uint32_t retry_left, rnr_left, backoff;
	uint64_t timer_ns;
	bool rnr_wait;
	uint32_t arm[ARMS], n_arm;

	/* responder */
	uint32_t epsn, msn;
	bool nak_seq_sent, ack_due;
	struct {
		bool active, is_send;
		uint32_t off, wqe_pos, wqe_bu, nsge;
		struct gdma_sge sge[GDMA_MAX_RX_SGE];
		uint64_t va;
		uint32_t rkey, dma_len;
	} r;
	struct rd_done rd[RD_HIST];
	uint32_t rd_n;
};

struct lframe {
	struct lframe *next;
	size_t len;
	uint8_t f[];
};

struct vrc_dev {
	struct vrc_ops ops;
	uint8_t mac[6];
	struct vrc_qp *qps;
	struct lframe *lhead, **ltail;
	unsigned int nlocal;
	bool draining;
	struct vrc_stats st;
};

uint64_t vrc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct msg *msg_at(struct vrc_qp *qp, uint32_t i)
{
	return &qp->msgs[(qp->m_head + i) % WINDOW];
}

static uint32_t msg_last(const struct msg *m)
{
	return roce_psn_add(m->psn, m->npkts - 1);
}

/* ---- frames out, and the loop to our own MAC ---------------------------- */

static void process(struct vrc_dev *dev, const uint8_t *f, size_t len);

/* Frames to ourselves wait here and are taken in order, never recursively. */
static void drain(struct vrc_dev *dev)
{
	struct lframe *l;

	if (dev->draining)
		return;
	dev->draining = true;
	while ((l = dev->lhead)) {
		dev->lhead = l->next;
		if (!dev->lhead)
			dev->ltail = &dev->lhead;
		dev->nlocal--;
		process(dev, l->f, l->len);
		free(l);
	}
	dev->draining = false;
}

static void send_pkt(struct vrc_dev *dev, struct vrc_qp *qp, struct roce_pkt *p)
{
	static uint8_t f[ROCE_MAX_FRAME];
	struct lframe *l;
	size_t len;

	memcpy(p->dmac, qp->a.dmac, 6);
	memcpy(p->smac, qp->a.smac, 6);
	memcpy(p->sgid, qp->a.sgid, 16);
	memcpy(p->dgid, qp->a.dgid, 16);
	/* the kernel passes the DSCP (stable 6.12: traffic_class >> 2) */
	p->traffic_class = (uint8_t)(qp->a.traffic_class << 2);
	p->hop_limit = qp->a.hop_limit ? qp->a.hop_limit : 64;
	p->udp_sport = qp->a.sport;
	p->pkey = ROCE_PKEY_DEFAULT;
	p->dqpn = qp->a.dest_qpn & ROCE_QPN_MASK;
	if (roce_encode(p, f, sizeof(f), &len)) {
		dev->st.errors++;
		return;
	}
	dev->st.tx_packets++;
	if (memcmp(p->dmac, dev->mac, 6)) {
		dev->ops.xmit(dev->ops.ctx, f, len);
		return;
	}
	/* to a QP of ours: looped inside, dropped if the loop is full */
	dev->st.local_packets++;
	if (dev->nlocal >= LOCAL_MAX || !(l = malloc(sizeof(*l) + len))) {
		dev->st.errors++;
		return;
	}
	l->next = NULL;
	l->len = len;
	memcpy(l->f, f, len);
	*dev->ltail = l;
	dev->ltail = &l->next;
	dev->nlocal++;
}

/* ---- errors -------------------------------------------------------------- */

static void qp_err(struct vrc_dev *dev, struct vrc_qp *qp, bool notify)
{
	if (qp->state == ERR)
		return;
	qp->state = ERR;
	qp->timer_ns = 0;
	qp->ack_due = false;
	if (dev->ops.wake) {
		dev->ops.wake(dev->ops.ctx, qp->send_cq);
		if (qp->recv_cq != qp->send_cq)
			dev->ops.wake(dev->ops.ctx, qp->recv_cq);
	}
	if (notify && dev->ops.fatal)
		dev->ops.fatal(dev->ops.ctx, qp->qpn);
}

/* An error CQE (send side: on the send CQ for the SQ), then ERR. */
static void error_cqe(struct vrc_dev *dev, struct vrc_qp *qp, bool send_side,
		      uint16_t verr, uint32_t psn, uint8_t syndrome,
		      uint8_t opcode)
{
	struct mana_rdma_cqe c = {
		.type = MANA_RDMA_CQE_ERROR,
		.vendor_error = verr,
		.msn = (send_side ? qp->msn_seen : qp->msn) & ROCE_PSN_MASK,
		.syndrome = syndrome,
		.psn = psn & ROCE_PSN_MASK,
		.opcode = opcode,
	};
	uint8_t data[GDMA_CQE_SIZE] = { 0 };

	if (qp->state == ERR)
		return;
	dev->st.errors++;
	if (!mana_rdma_cqe_encode(&c, data)) {
		if (send_side)
			dev->ops.cqe(dev->ops.ctx, qp->send_cq, data, qp->sq.id,
				     true);
		else
			dev->ops.cqe(dev->ops.ctx, qp->recv_cq, data, qp->rq.id,
				     false);
	}
	qp_err(dev, qp, false);
}

/* ---- rings and memory ------------------------------------------------------ */

/* The WQE at @pos of @r (only what the doorbell published is read). */
static int wqe_read(struct vrc_dev *dev, const struct ring *r, uint32_t pos,
		    bool sq, struct gdma_wqe *w, uint32_t *size_bu)
{
	uint8_t buf[GDMA_MAX_SQE_SIZE];
	uint32_t max = sq ? GDMA_MAX_SQE_SIZE : GDMA_MAX_RQE_SIZE;
	uint32_t avail = r->tail - pos;

	if (avail > max)
		avail = max;
	if (!avail)
		return -ENOENT;
	if (dev->ops.ring_read(dev->ops.ctx, r->ring, pos, buf, avail))
		return -EFAULT;
	return gdma_wqe_decode_linear(buf, avail, sq ? GDMA_SQ : GDMA_RQ, w,
				      size_bu);
}

/* Between @buf and a list of SGEs from byte @off of it; -EMSGSIZE if short. */
static int sgl_copy(struct vrc_dev *dev, struct vrc_qp *qp,
		    const struct gdma_sge *sge, uint32_t nsge, uint32_t off,
		    uint8_t *buf, uint32_t len, bool to_mem)
{
	uint32_t i, piece;

	for (i = 0; i < nsge && len; i++) {
		if (off >= sge[i].size) {
			off -= sge[i].size;
			continue;
		}
		piece = sge[i].size - off < len ? sge[i].size - off : len;
		if (dev->ops.mem(dev->ops.ctx, qp->pd, sge[i].mkey,
				 sge[i].addr + off, buf, piece,
				 to_mem ? VRC_LOCAL_WRITE : 0, to_mem))
			return -EACCES;
		off = 0;
		buf += piece;
		len -= piece;
	}
	return len ? -EMSGSIZE : 0;
}

static int sgl_len(const struct gdma_wqe *w, uint32_t n, uint32_t *len)
{
	uint64_t total = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		total += w->sge[i].size;
	if (total > MSG_MAX)
		return -EMSGSIZE;
	*len = (uint32_t)total;
	return 0;
}

/* ---- requester: ACK progress and arms -------------------------------------- */

static void timer_restart(struct vrc_qp *qp)
{
	uint64_t t = rc_timeout_ns(TIMEOUT);

	t <<= qp->backoff < BACKOFF_MAX ? qp->backoff : BACKOFF_MAX;
	qp->rnr_wait = false;
	qp->timer_ns = qp->m_cnt ? vrc_now_ns() + t : 0;
}

static void arms_check(struct vrc_dev *dev, struct vrc_qp *qp)
{
	struct mana_rdma_cqe c = {
		.type = MANA_RDMA_CQE_ARMED_CMPL,
		.syndrome = ROCE_SYN_ACK(ROCE_CREDITS_INVALID),
	};
	uint8_t data[GDMA_CQE_SIZE] = { 0 };
	uint32_t i, j = 0;
	bool hit = false;

	if (qp->state == ERR)
		return;
	for (i = 0; i < qp->n_arm; i++) {
		if (roce_psn_diff(qp->arm[i], qp->acked) <= 0)
			hit = true;
		else
			qp->arm[j++] = qp->arm[i];
	}
	qp->n_arm = j;
	if (!hit)
		return;
	/* one CQE for every arm the acknowledgement reached */
	c.msn = qp->msn_seen & ROCE_PSN_MASK;
	c.psn = qp->acked;
	if (!mana_rdma_cqe_encode(&c, data))
		dev->ops.cqe(dev->ops.ctx, qp->send_cq, data, qp->rrq.id, false);
}

void vrc_arm(struct vrc_dev *dev, struct vrc_qp *qp, uint32_t psn)
{
	if (qp->n_arm == ARMS) {
		dev->st.errors++;
		return;
	}
	qp->arm[qp->n_arm++] = psn & ROCE_PSN_MASK;
	if (qp->state == RTS || qp->state == SQD || qp->state == SQE)
		arms_check(dev, qp);
	drain(dev);
}

/* Point the send cursor at @psn (inside the window): go-back-N. */
static void rewind_to(struct vrc_qp *qp, uint32_t psn)
{
	uint32_t i;

	for (i = 0; i < qp->m_cnt; i++) {
		struct msg *m = msg_at(qp, i);
		int32_t d = roce_psn_diff(psn, m->psn);

		if (d >= 0 && (uint32_t)d < m->npkts) {
			qp->m_cur = i;
			qp->pkt_cur = m->type == MANA_WQE_READ ? 0 : (uint32_t)d;
			return;
		}
	}
	qp->m_cur = qp->m_cnt;
	qp->pkt_cur = 0;
}

/* Everything up to @psn acknowledged: retire what it covers. */
static void ack_upto(struct vrc_dev *dev, struct vrc_qp *qp, uint32_t psn)
{
	bool progress = false;

	while (qp->m_cnt) {
		struct msg *m = msg_at(qp, 0);

		if (roce_psn_diff(msg_last(m), psn) > 0)
			break;
		/* a READ not all placed is not covered: its responses were lost */
		if (m->type == MANA_WQE_READ &&
		    roce_psn_diff(m->rd_next, msg_last(m)) <= 0) {
			rewind_to(qp, m->psn);
			dev->st.retransmits++;
			break;
		}
		qp->m_head = (qp->m_head + 1) % WINDOW;
		qp->m_cnt--;
		if (qp->m_cur)
			qp->m_cur--;
		else
			qp->pkt_cur = 0;
		progress = true;
	}
	if (qp->m_cnt && msg_at(qp, 0)->type == MANA_WQE_READ &&
	    roce_psn_diff(psn, msg_at(qp, 0)->psn) >= 0)
		psn = roce_psn_add(msg_at(qp, 0)->psn, ROCE_PSN_MASK);
	if (roce_psn_diff(psn, qp->acked) > 0) {
		qp->acked = psn;
		progress = true;
	}
	if (progress) {
		qp->backoff = 0;
		qp->retry_left = qp->a.retry_cnt;
		qp->rnr_left = qp->a.rnr_retry;
		if (!qp->rnr_wait)
			timer_restart(qp);
	}
	arms_check(dev, qp);
}

static void nak_error(struct vrc_dev *dev, struct vrc_qp *qp,
		      const struct roce_pkt *p, uint16_t verr)
{
	struct msg *m = qp->m_cnt ? msg_at(qp, 0) : NULL;

	error_cqe(dev, qp, true, verr, m ? m->psn : p->psn, p->syndrome,
		  m ? m->type : 0);
}

static void on_aeth(struct vrc_dev *dev, struct vrc_qp *qp,
		    const struct roce_pkt *p)
{
	uint32_t before = roce_psn_add(p->psn, ROCE_PSN_MASK);

	qp->msn_seen = p->msn;
	/* a NAK for what is acknowledged already is a late copy */
	if (ROCE_SYN_KIND(p->syndrome) != ROCE_SYN_KIND_ACK &&
	    roce_psn_diff(p->psn, qp->acked) <= 0)
		return;
	switch (ROCE_SYN_KIND(p->syndrome)) {
	case ROCE_SYN_KIND_ACK:
		ack_upto(dev, qp, p->psn);
		return;
	case ROCE_SYN_KIND_RNR:
		ack_upto(dev, qp, before);
		dev->st.rnr_naks_rx++;
		if (!qp->rnr_left) {
			nak_error(dev, qp, p, MANA_VERR_RX_RNR_NAK);
			return;
		}
		if (qp->rnr_left != 7)	/* 7: retry for ever */
			qp->rnr_left--;
		rewind_to(qp, p->psn);
		qp->rnr_wait = true;
		qp->timer_ns = vrc_now_ns() +
			(uint64_t)roce_rnr_timer_us(p->syndrome & 31) * 1000;
		return;
	case ROCE_SYN_KIND_NAK:
		ack_upto(dev, qp, before);
		break;
	default:
		dev->st.bad_packets++;
		return;
	}
	switch (p->syndrome & 31) {
	case ROCE_NAK_PSN_SEQ:
		dev->st.seq_naks_rx++;
		if (qp->rnr_wait)
			return;
		if (!qp->retry_left) {
			nak_error(dev, qp, p, MANA_VERR_TX_RETRY_LIMIT_EXCEEDED);
			return;
		}
		qp->retry_left--;
		dev->st.retransmits++;
		rewind_to(qp, p->psn);
		timer_restart(qp);
		return;
	case ROCE_NAK_INVALID_REQ:
		nak_error(dev, qp, p, MANA_VERR_RX_INVALID_REQ_NAK);
		return;
	case ROCE_NAK_REMOTE_ACCESS:
		nak_error(dev, qp, p, MANA_VERR_RX_REMOTE_ACCESS_NAK);
		return;
	default:
		nak_error(dev, qp, p, MANA_VERR_RX_REMOTE_OP_ERR_NAK);
		return;
	}
}

/* A READ response: its payload into the RREQ WQE's buffers, then its AETH. */
static void on_read_resp(struct vrc_dev *dev, struct vrc_qp *qp,
			 const struct roce_pkt *p)
{
	unsigned int fl = roce_opcode_flags(p->opcode);
	struct msg *m = NULL;
	uint32_t i, idx;

	for (i = 0; i < qp->m_cnt && i < qp->m_cur + 1; i++) {
		struct msg *c = msg_at(qp, i);
		int32_t d = roce_psn_diff(p->psn, c->psn);

		if (c->type == MANA_WQE_READ && d >= 0 && (uint32_t)d < c->npkts) {
			m = c;
			break;
		}
	}
	if (!m) {
		dev->st.bad_packets++;
		return;
	}
	if (p->psn != m->rd_next) {
		if (roce_psn_diff(p->psn, m->rd_next) > 0 && !m->rd_reissued) {
			m->rd_reissued = true;	/* a gap: ask for the rest once */
			dev->st.retransmits++;
			rewind_to(qp, m->psn);
		}
		if (roce_psn_diff(p->psn, m->rd_next) < 0 && (fl & ROCE_F_AETH))
			on_aeth(dev, qp, p);
		return;
	}
	idx = (uint32_t)roce_psn_diff(p->psn, m->psn);
	if (!rc_payload_len_ok(p->opcode, p->payload_len, qp->mtu) ||
	    (uint64_t)idx * qp->mtu + p->payload_len > m->len ||
	    !!(fl & ROCE_F_LAST) != (idx + 1 == m->npkts)) {
		error_cqe(dev, qp, true, MANA_VERR_RX_READRESP_LEN_MISMATCH,
			  m->psn, 0, m->type);
		return;
	}
	if (sgl_copy(dev, qp, m->rd_sge, m->rd_nsge, idx * qp->mtu,
		     (uint8_t *)p->payload, p->payload_len, true)) {
		error_cqe(dev, qp, true, MANA_VERR_RX_ATB_SGE_ADDR_RIGHT,
			  m->psn, 0, m->type);
		return;
	}
	m->rd_next = roce_psn_add(m->rd_next, 1);
	m->rd_reissued = false;
	qp->backoff = 0;
	qp->retry_left = qp->a.retry_cnt;
	timer_restart(qp);
	if (fl & ROCE_F_AETH)
		on_aeth(dev, qp, p);
}

/* ---- requester: fetching and sending --------------------------------------- */

/* A READ's RREQ WQE (posted before it) names the local buffers. */
static int fetch_read_dest(struct vrc_dev *dev, struct vrc_qp *qp,
			   struct msg *m)
{
	struct mana_rdma_recv_oob ro;
	struct gdma_wqe w;
	uint32_t bu, len;

	if (wqe_read(dev, &qp->rrq, qp->rrq.head, false, &w, &bu) ||
	    mana_rdma_recv_oob_decode(w.oob, &ro) || ro.psn_start != m->psn ||
	    sgl_len(&w, w.hdr.num_sge, &len) || len < m->len)
		return -EINVAL;
	qp->rrq.head += bu * GDMA_WQE_BU_SIZE;
	m->rd_nsge = w.hdr.num_sge;
	memcpy(m->rd_sge, w.sge, m->rd_nsge * sizeof(w.sge[0]));
	m->rd_next = m->psn;
	m->rd_reissued = false;
	return 0;
}

static void corrupted(struct vrc_dev *dev, struct vrc_qp *qp, uint32_t psn,
		      uint8_t type)
{
	error_cqe(dev, qp, true, MANA_VERR_TX_GDMA_CORRUPTED_WQE, psn, 0, type);
}

/* The next SQ WQE into the window; false to stop. */
static bool fetch_one(struct vrc_dev *dev, struct vrc_qp *qp)
{
	struct mana_rdma_send_oob o;
	struct gdma_wqe w;
	struct msg *m;
	uint32_t bu, n;

	if (qp->sq.head == qp->sq.tail || qp->m_cnt == WINDOW ||
	    qp->state != RTS)
		return false;
	m = msg_at(qp, qp->m_cnt);
	memset(m, 0, offsetof(struct msg, sge));
	if (wqe_read(dev, &qp->sq, qp->sq.head, true, &w, &bu) ||
	    mana_rdma_send_oob_decode(w.oob, w.hdr.oob_size, &o)) {
		corrupted(dev, qp, qp->next_psn, 0);
		return false;
	}
	if (o.psn != qp->next_psn || w.hdr.num_padding_sgls > w.hdr.num_sge ||
	    (o.wqe_type != MANA_WQE_RC_SEND && o.wqe_type != MANA_WQE_RC_SEND_IMM &&
	     o.wqe_type != MANA_WQE_RC_SEND_INV && o.wqe_type != MANA_WQE_WRITE &&
	     o.wqe_type != MANA_WQE_WRITE_IMM && o.wqe_type != MANA_WQE_READ)) {
		corrupted(dev, qp, o.psn, o.wqe_type);
		return false;
	}
	if (w.hdr.client_data_unit != qp->mtu) {	/* the provider's path MTU */
		error_cqe(dev, qp, true, MANA_VERR_TX_RDMA_MTU_ERR, o.psn, 0,
			  o.wqe_type);
		return false;
	}
	m->type = o.wqe_type;
	m->solicited = o.solicited;
	m->psn = o.psn;
	m->imm = o.imm;
	m->inv_key = o.inv_key;
	m->va = o.remote_addr;
	m->rkey = o.rkey;
	n = w.hdr.num_sge - w.hdr.num_padding_sgls;	/* padding carries nothing */
	if (sgl_len(&w, n, &m->len)) {
		corrupted(dev, qp, o.psn, o.wqe_type);
		return false;
	}
	m->nsge = n;
	memcpy(m->sge, w.sge, n * sizeof(w.sge[0]));
	if (m->type == MANA_WQE_READ) {
		m->len = o.dma_len;
		m->nsge = 0;
	}
	if (m->len > MSG_MAX) {
		error_cqe(dev, qp, true, MANA_VERR_TX_RDMA_WQE_LEN_ERR, o.psn, 0,
			  o.wqe_type);
		return false;
	}
	m->npkts = rc_npkts(m->len, qp->mtu);
	if (m->type == MANA_WQE_READ && fetch_read_dest(dev, qp, m)) {
		corrupted(dev, qp, o.psn, o.wqe_type);
		return false;
	}
	qp->sq.head += bu * GDMA_WQE_BU_SIZE;
	qp->next_psn = roce_psn_add(qp->next_psn, m->npkts);
	qp->m_cnt++;
	return true;
}

static int send_packet(struct vrc_dev *dev, struct vrc_qp *qp, struct msg *m,
		       uint32_t i)
{
	static uint8_t data[ROCE_MAX_MTU];
	struct roce_pkt p = { 0 };
	uint32_t off = i * qp->mtu, len, end;
	int op = rc_opcode(m->type, i, m->npkts);

	if (op < 0)
		return -EINVAL;
	p.opcode = (uint8_t)op;
	p.psn = roce_psn_add(m->psn, i);
	if (m->type == MANA_WQE_READ) {
		/* again after a loss: only what has not arrived (IBA 9.4.4) */
		p.psn = roce_psn_diff(m->rd_next, msg_last(m)) > 0 ?
			msg_last(m) : m->rd_next;
		off = (uint32_t)roce_psn_diff(p.psn, m->psn) * qp->mtu;
		p.va = m->va + off;
		p.rkey = m->rkey;
		p.dma_len = m->len - off;
		p.ack_req = true;
	} else {
		len = m->len - off < qp->mtu ? m->len - off : qp->mtu;
		if (sgl_copy(dev, qp, m->sge, m->nsge, off, data, len, false))
			return -EACCES;
		p.payload = data;
		p.payload_len = len;
		p.va = m->va;
		p.rkey = m->rkey;
		p.dma_len = m->len;
		p.imm = m->imm;
		p.ieth = m->inv_key;
		p.ack_req = i + 1 == m->npkts || !((i + 1) % ACK_EVERY);
		p.se = i + 1 == m->npkts && m->solicited;
	}
	send_pkt(dev, qp, &p);
	end = roce_psn_add(m->type == MANA_WQE_READ ? msg_last(m) : p.psn, 1);
	if (roce_psn_diff(end, qp->sent_end) > 0)
		qp->sent_end = end;
	return 0;
}

static uint32_t inflight(struct vrc_qp *qp)
{
	uint32_t cur = qp->m_cur >= qp->m_cnt ? qp->next_psn :
		       roce_psn_add(msg_at(qp, qp->m_cur)->psn, qp->pkt_cur);
	int32_t d = roce_psn_diff(cur, roce_psn_add(qp->acked, 1));

	return d > 0 ? (uint32_t)d : 0;
}

static uint32_t reads_out(struct vrc_qp *qp)
{
	uint32_t i, n = 0;

	for (i = 0; i < qp->m_cur && i < qp->m_cnt; i++)
		n += msg_at(qp, i)->type == MANA_WQE_READ;
	return n;
}

static void req_work(struct vrc_dev *dev, struct vrc_qp *qp)
{
	struct msg *m;

	if (qp->state != RTS && qp->state != SQD)
		return;
	while (fetch_one(dev, qp))
		;
	while (!qp->rnr_wait && qp->m_cur < qp->m_cnt && qp->state != ERR &&
	       inflight(qp) < MAX_INFLIGHT) {
		m = msg_at(qp, qp->m_cur);
		/* 6.12 passes no max_rd_atomic: one READ at a time */
		if (m->type == MANA_WQE_READ && qp->pkt_cur == 0 && reads_out(qp))
			break;
		if (send_packet(dev, qp, m, qp->pkt_cur)) {
			error_cqe(dev, qp, true,
				  MANA_VERR_TX_ATB_MSG_ACCESS_VIOLATION, m->psn,
				  0, m->type);
			break;
		}
		qp->pkt_cur = m->type == MANA_WQE_READ ? m->npkts : qp->pkt_cur + 1;
		if (qp->pkt_cur >= m->npkts) {
			qp->m_cur++;
			qp->pkt_cur = 0;
		}
		if (!qp->timer_ns)
			timer_restart(qp);
	}
}

/* ---- responder ---------------------------------------------------------------- */

static void send_aeth(struct vrc_dev *dev, struct vrc_qp *qp, uint32_t psn,
		      uint8_t syn)
{
	struct roce_pkt p = {
		.opcode = ROCE_ACK,
		.psn = psn & ROCE_PSN_MASK,
		.syndrome = syn,
		.msn = qp->msn & ROCE_PSN_MASK,
	};

	send_pkt(dev, qp, &p);
}

static void flush_ack(struct vrc_dev *dev, struct vrc_qp *qp)
{
	if (!qp->ack_due)
		return;
	qp->ack_due = false;
	send_aeth(dev, qp, roce_psn_add(qp->epsn, ROCE_PSN_MASK),
		  ROCE_SYN_ACK(ROCE_CREDITS_INVALID));
}

/* A NAK after any ACK still owed, in order. */
static void send_nak(struct vrc_dev *dev, struct vrc_qp *qp, uint32_t psn,
		     uint8_t syn)
{
	flush_ack(dev, qp);
	send_aeth(dev, qp, psn, syn);
}

/* No receive WQE involved: NAK, ERR, the kernel's QP-fatal event. */
static bool fail_nak(struct vrc_dev *dev, struct vrc_qp *qp,
		     const struct roce_pkt *p, uint8_t code)
{
	dev->st.errors++;
	send_nak(dev, qp, p->psn, ROCE_SYN_NAK(code));
	qp_err(dev, qp, true);
	return false;
}

/* A receive WQE involved: NAK, then its error CQE. */
static bool fail_cqe(struct vrc_dev *dev, struct vrc_qp *qp,
		     const struct roce_pkt *p, uint16_t verr, uint8_t code)
{
	send_nak(dev, qp, p->psn, ROCE_SYN_NAK(code));
	error_cqe(dev, qp, false, verr, p->psn, ROCE_SYN_NAK(code), p->opcode);
	return false;
}

static bool rnr(struct vrc_dev *dev, struct vrc_qp *qp, const struct roce_pkt *p)
{
	dev->st.rnr_naks_tx++;
	send_nak(dev, qp, p->psn, ROCE_SYN_RNR(qp->a.min_rnr_timer));
	qp->nak_seq_sent = true;	/* the rest of the burst: silently */
	return false;
}

static void recv_cqe(struct vrc_dev *dev, struct vrc_qp *qp, uint8_t type,
		     uint32_t len, uint32_t psn, uint32_t imm)
{
	struct mana_rdma_cqe c = {
		.type = type, .msg_len = len, .psn = psn & ROCE_PSN_MASK,
		.imm = imm, .rx_wqe_offset = qp->r.wqe_pos,
	};
	uint8_t data[GDMA_CQE_SIZE] = { 0 };

	if (!mana_rdma_cqe_encode(&c, data))
		dev->ops.cqe(dev->ops.ctx, qp->recv_cq, data, qp->rq.id, false);
	qp->rq.head += qp->r.wqe_bu * GDMA_WQE_BU_SIZE;
}

/* The next receive WQE into qp->r (consumed at its CQE). */
static int recv_wqe(struct vrc_dev *dev, struct vrc_qp *qp)
{
	struct gdma_wqe w;
	uint32_t bu;

	if (qp->rq.head == qp->rq.tail)
		return -EAGAIN;
	if (wqe_read(dev, &qp->rq, qp->rq.head, false, &w, &bu))
		return -EINVAL;
	qp->r.wqe_pos = qp->rq.head;
	qp->r.wqe_bu = bu;
	qp->r.nsge = w.hdr.num_sge;
	memcpy(qp->r.sge, w.sge, w.hdr.num_sge * sizeof(w.sge[0]));
	return 0;
}

static bool do_send(struct vrc_dev *dev, struct vrc_qp *qp,
		    const struct roce_pkt *p, unsigned int fl)
{
	uint8_t type = MANA_RDMA_CQE_RC_SEND;
	uint32_t imm = 0;
	int ret;

	if (fl & ROCE_F_FIRST) {
		ret = recv_wqe(dev, qp);
		if (ret == -EAGAIN)
			return rnr(dev, qp, p);
		if (ret)
			return fail_cqe(dev, qp, p, MANA_VERR_RX_MALFORMED_WQE,
					ROCE_NAK_REMOTE_OP);
		qp->r.active = true;
		qp->r.is_send = true;
		qp->r.off = 0;
	}
	ret = sgl_copy(dev, qp, qp->r.sge, qp->r.nsge, qp->r.off,
		       (uint8_t *)p->payload, p->payload_len, true);
	if (ret == -EMSGSIZE)
		return fail_cqe(dev, qp, p, MANA_VERR_RX_MSG_LEN_OVFL,
				ROCE_NAK_INVALID_REQ);
	if (ret)
		return fail_cqe(dev, qp, p, MANA_VERR_RX_ATB_SGE_ADDR_RIGHT,
				ROCE_NAK_REMOTE_OP);
	qp->r.off += p->payload_len;
	if (!(fl & ROCE_F_LAST))
		return true;
	if (fl & ROCE_F_IMM) {
		type = MANA_RDMA_CQE_RC_SEND_IMM;
		imm = p->imm;
	} else if (fl & ROCE_F_IETH) {
		type = MANA_RDMA_CQE_RC_SEND_INV;
		imm = p->ieth;
	}
	qp->msn++;
	recv_cqe(dev, qp, type, qp->r.off, p->psn, imm);
	qp->r.active = false;
	return true;
}

static bool do_write(struct vrc_dev *dev, struct vrc_qp *qp,
		     const struct roce_pkt *p, unsigned int fl)
{
	int ret;

	if (fl & ROCE_F_FIRST) {
		/* the whole range first: nothing lands of a bad request */
		if (p->dma_len > MSG_MAX ||
		    dev->ops.mem(dev->ops.ctx, qp->pd, p->rkey, p->va, NULL,
				 p->dma_len, VRC_REMOTE_WRITE, true))
			return fail_nak(dev, qp, p, ROCE_NAK_REMOTE_ACCESS);
		qp->r.active = true;
		qp->r.is_send = false;
		qp->r.off = 0;
		qp->r.va = p->va;
		qp->r.rkey = p->rkey;
		qp->r.dma_len = p->dma_len;
	}
	if (fl & ROCE_F_IMM) {	/* a receive WQE must be there first */
		ret = recv_wqe(dev, qp);
		if (ret == -EAGAIN) {
			if (fl & ROCE_F_FIRST)
				qp->r.active = false;
			return rnr(dev, qp, p);
		}
		if (ret)
			return fail_cqe(dev, qp, p, MANA_VERR_RX_MALFORMED_WQE,
					ROCE_NAK_REMOTE_OP);
	}
	if ((uint64_t)qp->r.off + p->payload_len > qp->r.dma_len ||
	    ((fl & ROCE_F_LAST) && qp->r.off + p->payload_len != qp->r.dma_len))
		return fail_nak(dev, qp, p, ROCE_NAK_INVALID_REQ);
	/* the MR again at every packet: a deregistered one takes no more */
	if (p->payload_len &&
	    dev->ops.mem(dev->ops.ctx, qp->pd, qp->r.rkey, qp->r.va + qp->r.off,
			 (uint8_t *)p->payload, p->payload_len,
			 VRC_REMOTE_WRITE, true))
		return fail_nak(dev, qp, p, ROCE_NAK_REMOTE_ACCESS);
	qp->r.off += p->payload_len;
	if (!(fl & ROCE_F_LAST))
		return true;
	qp->msn++;
	if (fl & ROCE_F_IMM)
		recv_cqe(dev, qp, MANA_RDMA_CQE_RC_WRITE_IMM, qp->r.off, p->psn,
			 p->imm);
	qp->r.active = false;
	return true;
}

/* READ responses; @dup: a repeated READ (a failure then only drops it). */
static void do_read(struct vrc_dev *dev, struct vrc_qp *qp,
		    const struct roce_pkt *p, bool dup)
{
	static uint8_t data[ROCE_MAX_MTU];
	uint32_t n, i, off = 0, len;

	if (p->dma_len > MSG_MAX ||
	    dev->ops.mem(dev->ops.ctx, qp->pd, p->rkey, p->va, NULL,
			 p->dma_len, VRC_REMOTE_READ, false)) {
		if (dup)
			dev->st.bad_packets++;
		else
			fail_nak(dev, qp, p, ROCE_NAK_REMOTE_ACCESS);
		return;
	}
	n = rc_npkts(p->dma_len, qp->mtu);
	if (!dup) {
		qp->rd[qp->rd_n++ % RD_HIST] = (struct rd_done){
			.psn = p->psn, .npkts = n, .rkey = p->rkey,
			.len = p->dma_len, .va = p->va };
		qp->msn++;
	}
	flush_ack(dev, qp);
	for (i = 0; i < n; i++) {
		struct roce_pkt r = { 0 };

		len = p->dma_len - off < qp->mtu ? p->dma_len - off : qp->mtu;
		r.opcode = n == 1 ? ROCE_READ_RESP_ONLY : !i ? ROCE_READ_RESP_FIRST :
			   i + 1 == n ? ROCE_READ_RESP_LAST : ROCE_READ_RESP_MIDDLE;
		r.psn = roce_psn_add(p->psn, i);
		r.syndrome = ROCE_SYN_ACK(ROCE_CREDITS_INVALID);
		r.msn = qp->msn & ROCE_PSN_MASK;
		if (len && dev->ops.mem(dev->ops.ctx, qp->pd, p->rkey, p->va + off,
					data, len, VRC_REMOTE_READ, false)) {
			if (!dup)
				fail_nak(dev, qp, p, ROCE_NAK_REMOTE_ACCESS);
			return;
		}
		r.payload = len ? data : NULL;
		r.payload_len = len;
		send_pkt(dev, qp, &r);
		off += len;
	}
	if (!dup)
		qp->epsn = roce_psn_add(qp->epsn, n);
}

/* A duplicate READ is run again only as the rest of one this QP ran. */
static bool read_dup_ok(struct vrc_qp *qp, const struct roce_pkt *p)
{
	uint32_t i, n = qp->rd_n < RD_HIST ? qp->rd_n : RD_HIST;

	for (i = 0; i < n; i++) {
		const struct rd_done *d = &qp->rd[i];
		int32_t k = roce_psn_diff(p->psn, d->psn);
		uint64_t off;

		if (k < 0 || (uint32_t)k >= d->npkts)
			continue;
		off = (uint64_t)(uint32_t)k * qp->mtu;
		if (p->rkey == d->rkey && p->va == d->va + off &&
		    (uint64_t)p->dma_len + off == d->len)
			return true;
	}
	return false;
}

static void resp_rx(struct vrc_dev *dev, struct vrc_qp *qp,
		    const struct roce_pkt *p)
{
	unsigned int fl = roce_opcode_flags(p->opcode);
	bool ok;

	switch (rc_psn_classify(p->psn, qp->epsn)) {
	case RC_PSN_AHEAD:
		if (!qp->nak_seq_sent) {
			qp->nak_seq_sent = true;
			dev->st.seq_naks_tx++;
			send_nak(dev, qp, qp->epsn, ROCE_SYN_NAK(ROCE_NAK_PSN_SEQ));
		}
		return;
	case RC_PSN_DUPLICATE:
		if (p->opcode == ROCE_READ_REQ) {
			if (read_dup_ok(qp, p))
				do_read(dev, qp, p, true);
			else
				dev->st.bad_packets++;
		} else if (p->ack_req || (fl & ROCE_F_LAST)) {
			qp->ack_due = true;	/* re-ACK (IBA 9.7.5.1.2) */
		}
		return;
	case RC_PSN_EXPECTED:
		break;
	}
	qp->nak_seq_sent = false;
	if (!rc_opcode_in_sequence(p->opcode, qp->r.active && qp->r.is_send,
				   qp->r.active && !qp->r.is_send) ||
	    !rc_payload_len_ok(p->opcode, p->payload_len, qp->mtu)) {
		dev->st.bad_packets++;
		fail_nak(dev, qp, p, ROCE_NAK_INVALID_REQ);
		return;
	}
	if (fl & ROCE_F_SEND) {
		ok = do_send(dev, qp, p, fl);
	} else if (fl & ROCE_F_WRITE) {
		ok = do_write(dev, qp, p, fl);
	} else {
		do_read(dev, qp, p, false);
		return;
	}
	if (!ok)
		return;
	qp->epsn = roce_psn_add(qp->epsn, 1);
	if (p->ack_req || (fl & ROCE_F_LAST))
		qp->ack_due = true;
}

/* ---- frames in -------------------------------------------------------------- */

static struct vrc_qp *qp_by_qpn(struct vrc_dev *dev, uint32_t qpn)
{
	struct vrc_qp *qp;

	for (qp = dev->qps; qp; qp = qp->next)
		if (qp->qpn == qpn)
			return qp;
	return NULL;
}

/* A decoded packet for @qp (the caller found it by the BTH's QPN). */
static void process_pkt(struct vrc_dev *dev, struct vrc_qp *qp,
			const struct roce_pkt *p)
{
	unsigned int fl = roce_opcode_flags(p->opcode);

	dev->st.rx_packets++;
	if (qp->state != RTR && qp->state != RTS && qp->state != SQD &&
	    qp->state != SQE)
		return;
	/* RC only: UC is not this QP's transport (IBA 9.6.1.5) */
	if (fl & ROCE_F_UC) {
		dev->st.bad_packets++;
		return;
	}
	if (p->opcode == ROCE_ACK || (fl & ROCE_F_READ_RESP)) {
		/*
		 * nothing acknowledges a PSN never sent: one forged ACK must
		 * not retire the WQEs fetched ahead
		 */
		if (qp->state == RTR || roce_psn_diff(p->psn, qp->sent_end) >= 0) {
			dev->st.bad_packets++;
			return;
		}
		if (p->opcode == ROCE_ACK)
			on_aeth(dev, qp, p);
		else
			on_read_resp(dev, qp, p);
		req_work(dev, qp);
	} else {
		resp_rx(dev, qp, p);
		flush_ack(dev, qp);
	}
}

/* Only a valid packet for one of our QPs is the RNIC's (UD: no QP1 here). */
static struct vrc_qp *rx_qp(struct vrc_dev *dev, const uint8_t *f, size_t len,
			    struct roce_pkt *p)
{
	if (!dev->qps || !roce_frame_is_roce(f, len) || roce_decode(f, len, p) ||
	    (roce_opcode_flags(p->opcode) & ROCE_F_DETH))
		return NULL;
	return qp_by_qpn(dev, p->dqpn);
}

static void process(struct vrc_dev *dev, const uint8_t *f, size_t len)
{
	struct vrc_qp *qp;
	struct roce_pkt p;

	qp = rx_qp(dev, f, len, &p);
	if (qp)
		process_pkt(dev, qp, &p);
}

bool vrc_rx(struct vrc_dev *dev, const uint8_t *f, size_t len)
{
	struct vrc_qp *qp;
	struct roce_pkt p;

	qp = rx_qp(dev, f, len, &p);
	if (!qp)
		return false;
	process_pkt(dev, qp, &p);
	drain(dev);
	return true;
}

/* ---- doorbells, timers ----------------------------------------------------------- */

/* The raw queues' rule: whole BUs, never more than a ring ahead. */
static bool ring_tail(struct vrc_dev *dev, struct ring *r, uint32_t tail)
{
	if (tail % GDMA_WQE_BU_SIZE || tail - r->tail > r->size ||
	    tail - r->head > r->size) {
		dev->st.errors++;
		return false;
	}
	r->tail = tail;
	return true;
}

void vrc_sq_doorbell(struct vrc_dev *dev, struct vrc_qp *qp, uint32_t tail)
{
	if (ring_tail(dev, &qp->sq, tail))
		req_work(dev, qp);
	drain(dev);
}

void vrc_rq_doorbell(struct vrc_dev *dev, struct vrc_qp *qp, bool requester,
		     uint32_t tail)
{
	ring_tail(dev, requester ? &qp->rrq : &qp->rq, tail);
}

void vrc_tick(struct vrc_dev *dev, uint64_t now)
{
	struct vrc_qp *qp;

	for (qp = dev->qps; qp; qp = qp->next) {
		if (!qp->timer_ns || now < qp->timer_ns)
			continue;
		qp->timer_ns = 0;
		if (qp->state == ERR || !qp->m_cnt)
			continue;
		if (qp->rnr_wait) {
			qp->rnr_wait = false;
			timer_restart(qp);
		} else if (!qp->retry_left) {
			error_cqe(dev, qp, true,
				  MANA_VERR_TX_RETRY_LIMIT_EXCEEDED,
				  msg_at(qp, 0)->psn, 0, msg_at(qp, 0)->type);
			continue;
		} else {
			qp->retry_left--;
			qp->backoff++;
			dev->st.retransmits++;
			rewind_to(qp, roce_psn_add(qp->acked, 1));
			timer_restart(qp);
		}
		req_work(dev, qp);
	}
	drain(dev);
}

/* ---- QPs ------------------------------------------------------------------------- */

int vrc_qp_create(struct vrc_dev *dev, const struct vrc_qp_desc *d,
		  struct vrc_qp **out)
{
	const struct vrc_ring_desc *rd[3] = { &d->sq, &d->rq, &d->rrq };
	struct vrc_qp *qp;
	int i;

	if (!d->send_cq || !d->recv_cq)
		return -EINVAL;
	for (i = 0; i < 3; i++)
		if (!rd[i]->ring || rd[i]->size < GDMA_WQE_BU_SIZE ||
		    rd[i]->size & (rd[i]->size - 1))
			return -EINVAL;
	qp = calloc(1, sizeof(*qp));
	if (!qp || !(qp->msgs = calloc(WINDOW, sizeof(*qp->msgs)))) {
		free(qp);
		return -ENOMEM;
	}
	qp->pd = d->pd;
	qp->send_cq = d->send_cq;
	qp->recv_cq = d->recv_cq;
	qp->sq = (struct ring){ d->sq.ring, d->sq.size, d->sq.id, 0, 0 };
	qp->rq = (struct ring){ d->rq.ring, d->rq.size, d->rq.id, 0, 0 };
	qp->rrq = (struct ring){ d->rrq.ring, d->rrq.size, d->rrq.id, 0, 0 };
	qp->qpn = d->rq.id;
	qp->state = RESET;
	/* as the emulator's device: 1024 until a modify names the path MTU */
	qp->a.path_mtu = 3;
	qp->next = dev->qps;
	dev->qps = qp;
	*out = qp;
	return 0;
}

void vrc_qp_destroy(struct vrc_dev *dev, struct vrc_qp *qp)
{
	struct vrc_qp **pp;

	for (pp = &dev->qps; *pp; pp = &(*pp)->next) {
		if (*pp == qp) {
			*pp = qp->next;
			break;
		}
	}
	free(qp->msgs);
	free(qp);
}

static void qp_reset(struct vrc_qp *qp)
{
	qp->sq.head = qp->sq.tail = qp->rq.head = qp->rq.tail = 0;
	qp->rrq.head = qp->rrq.tail = 0;
	qp->m_head = qp->m_cnt = qp->m_cur = qp->pkt_cur = 0;
	qp->timer_ns = 0;
	qp->rnr_wait = false;
	qp->n_arm = 0;
	qp->epsn = qp->msn = qp->msn_seen = 0;
	qp->nak_seq_sent = qp->ack_due = false;
	memset(&qp->r, 0, sizeof(qp->r));
	qp->rd_n = 0;
}

int vrc_qp_modify(struct vrc_dev *dev, struct vrc_qp *qp,
		  const struct vrc_attr *n)
{
	uint32_t to = n->mask & QPA_STATE ? n->state : qp->state;
	struct vrc_attr *a = &qp->a;

	if (to > ERR)
		return -EINVAL;
	if (n->mask & QPA_PATH_MTU) {
		if (!roce_mtu_bytes((uint8_t)n->path_mtu) || n->path_mtu > 5)
			return -EINVAL;
		a->path_mtu = n->path_mtu;
	}
	if (n->mask & QPA_DEST_QPN)
		a->dest_qpn = n->dest_qpn & ROCE_QPN_MASK;
	if (n->mask & QPA_RQ_PSN)
		a->rq_psn = n->rq_psn & ROCE_PSN_MASK;
	if (n->mask & QPA_SQ_PSN)
		a->sq_psn = n->sq_psn & ROCE_PSN_MASK;
	if (n->mask & QPA_RETRY_CNT)
		a->retry_cnt = n->retry_cnt & 7;
	if (n->mask & QPA_RNR_RETRY)
		a->rnr_retry = n->rnr_retry & 7;
	if (n->mask & QPA_MIN_RNR_TIMER)
		a->min_rnr_timer = n->min_rnr_timer & 31;
	if (n->mask & QPA_AV) {
		memcpy(a->smac, n->smac, 6);
		memcpy(a->dmac, n->dmac, 6);
		memcpy(a->sgid, n->sgid, 16);
		memcpy(a->dgid, n->dgid, 16);
		a->sport = n->sport;
		a->traffic_class = n->traffic_class;
		a->hop_limit = n->hop_limit;
	}
	if (to == RESET) {
		qp_reset(qp);
	} else if (to == RTR && qp->state != RTR) {
		qp->mtu = roce_mtu_bytes((uint8_t)a->path_mtu);
		qp->epsn = a->rq_psn;
	} else if (to == RTS && qp->state == RTR) {
		qp->m_head = qp->m_cnt = qp->m_cur = qp->pkt_cur = 0;
		qp->next_psn = qp->sent_end = a->sq_psn;
		qp->acked = roce_psn_add(a->sq_psn, ROCE_PSN_MASK);
		qp->retry_left = a->retry_cnt;
		qp->rnr_left = a->rnr_retry;
	}
	if (to == ERR) {
		qp_err(dev, qp, false);
		return 0;
	}
	qp->state = to;
	if (to == RTS)
		req_work(dev, qp);	/* WQEs posted before RTS */
	drain(dev);
	return 0;
}

uint32_t vrc_qp_state(const struct vrc_qp *qp)
{
	return qp->state;
}

/* ---- the device ---------------------------------------------------------------- */

struct vrc_dev *vrc_dev_new(const struct vrc_ops *ops, const uint8_t mac[6])
{
	struct vrc_dev *dev = calloc(1, sizeof(*dev));

	if (!dev)
		return NULL;
	dev->ops = *ops;
	memcpy(dev->mac, mac, 6);
	dev->ltail = &dev->lhead;
	return dev;
}

void vrc_dev_free(struct vrc_dev *dev)
{
	struct lframe *l;

	if (!dev)
		return;
	while (dev->qps)
		vrc_qp_destroy(dev, dev->qps);
	while ((l = dev->lhead)) {
		dev->lhead = l->next;
		free(l);
	}
	free(dev);
}

void vrc_get_stats(const struct vrc_dev *dev, struct vrc_stats *st)
{
	*st = dev->st;
}
