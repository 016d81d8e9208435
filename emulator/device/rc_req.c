// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC requester: send WQEs become RoCEv2 request packets (segmented by
 * path MTU), ACK/NAKs retire them or rewind the send cursor (go-back-N,
 * IBA 9.7.4), READ responses are placed in the RREQ WQE's buffers, and
 * armed completions (the 0x408 doorbell) become ARMED_CMPL CQEs once
 * every PSN up to the armed one is acknowledged.
 *
 * The provider computes PSNs; the device trusts nothing: a WQE whose PSN
 * is not the next one, an unknown type, a bad OOB or SGL is a corrupted
 * WQE (error CQE, QP to ERR).
 */
#include "rc_int.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "emulator/core/emu.h"
#include "rc_dev.h"

static struct rc_msg *msg_at(struct emu_rc_qp_hw *qp, uint32_t i)
{
	return &qp->msgs[(qp->m_head + i) % RC_WINDOW];
}

static uint32_t msg_last_psn(const struct rc_msg *m)
{
	return roce_psn_add(m->psn, m->npkts - 1);
}

void rc_req_reset(struct emu_rc_qp_hw *qp)
{
	qp->m_head = qp->m_cnt = 0;
	qp->m_cur = qp->pkt_cur = 0;
	qp->timer_ns = 0;
	qp->rnr_wait = false;
	qp->n_arm = 0;
	qp->msn_seen = 0;
	qp->backoff = 0;
}

/* The PSN the send cursor points at. */
static uint32_t cursor_psn(struct emu_rc_qp_hw *qp)
{
	if (qp->m_cur >= qp->m_cnt)
		return qp->next_psn;
	return roce_psn_add(msg_at(qp, qp->m_cur)->psn, qp->pkt_cur);
}

/* PSNs sent and not acknowledged yet. */
static uint32_t inflight(struct emu_rc_qp_hw *qp)
{
	int32_t d = roce_psn_diff(cursor_psn(qp), roce_psn_add(qp->acked, 1));

	return d > 0 ? (uint32_t)d : 0;
}

/*
 * Sent requests are unacknowledged and nothing else holds the requester
 * back: an ACK (or the timer) will wake the device.
 */
bool rc_req_awaits_ack(struct emu_rc_qp_hw *qp)
{
	return (qp->state == EMU_RC_RTS || qp->state == EMU_RC_SQD) &&
	       !qp->uc && !qp->rnr_wait && inflight(qp);
}

/* READ requests sent whose responses are not all in. */
static uint32_t reads_out(struct emu_rc_qp_hw *qp)
{
	uint32_t i, n = 0;

	for (i = 0; i < qp->m_cur && i < qp->m_cnt; i++)
		n += msg_at(qp, i)->type == MANA_WQE_READ;
	return n;
}

/*
 * Each expiry without progress doubles the next wait (up to 32 times, at
 * most 2 s): the emulated wire stalls for as long as the host does not
 * schedule the peer's device thread (seconds on a loaded machine), which
 * real hardware never sees; retry_cnt still counts every expiry.
 */
static void timer_restart(struct emu_rc_qp_hw *qp)
{
	uint64_t t = rc_timeout_ns(qp->attr.timeout);

	t <<= qp->backoff < 5 ? qp->backoff : 5;
	if (t > 2000000000ull)
		t = 2000000000ull;
	qp->rnr_wait = false;
	qp->timer_ns = t && qp->m_cnt ? rc_now_ns() + t : 0;
}

static void corrupted(struct emu_rc_qp_hw *qp, uint32_t psn, uint8_t type)
{
	rc_error_cqe(qp, true, MANA_VERR_TX_GDMA_CORRUPTED_WQE, psn, 0, type);
}

/* ---- armed completions ------------------------------------------------------------- */

static void armed_cqe(struct emu_rc_qp_hw *qp)
{
	struct mana_rdma_cqe c = {
		.type = MANA_RDMA_CQE_ARMED_CMPL,
		.msn = qp->msn_seen & ROCE_PSN_MASK,
		.syndrome = ROCE_SYN_ACK(ROCE_CREDITS_INVALID),
		.psn = qp->acked,
	};
	uint8_t data[GDMA_CQE_SIZE] = { 0 };

	if (!mana_rdma_cqe_encode(&c, data))
		emu_dev_cq_post(qp->send_cq, data,
				qp->q[EMU_RC_RQ_REQUESTER].id, false);
}

/* Every arm at or below the acknowledged PSN: one CQE for all of them. */
static void arms_check(struct emu_rc_qp_hw *qp)
{
	uint32_t i, j = 0;
	bool hit = false;

	if (qp->state == EMU_RC_ERR)
		return;
	for (i = 0; i < qp->n_arm; i++) {
		if (roce_psn_diff(qp->arm[i], qp->acked) <= 0)
			hit = true;
		else
			qp->arm[j++] = qp->arm[i];
	}
	qp->n_arm = j;
	if (hit)
		armed_cqe(qp);
}

void rc_req_arm(struct emu_rc_qp_hw *qp, uint32_t psn)
{
	if (qp->n_arm == RC_ARMS) {
		qp->st.errors++;
		return;
	}
	qp->arm[qp->n_arm++] = psn;
	if (qp->state == EMU_RC_RTS || qp->state == EMU_RC_SQD ||
	    qp->state == EMU_RC_SQE)
		arms_check(qp);
}

/* ---- fetching WQEs ----------------------------------------------------------------------- */

static int sgl_len(const struct gdma_wqe *w, uint32_t first, uint32_t *len)
{
	uint64_t total = 0;
	uint32_t i;

	for (i = first; i < w->hdr.num_sge; i++)
		total += w->sge[i].size;
	if (total > RC_MSG_MAX)
		return -EMSGSIZE;
	*len = (uint32_t)total;
	return 0;
}

/* READ: its RREQ WQE (posted first) names the local buffers. */
static int fetch_read_dest(struct emu_rc_qp_hw *qp, struct rc_msg *m)
{
	struct rc_ring *r = &qp->q[EMU_RC_RQ_REQUESTER];
	struct mana_rdma_recv_oob ro;
	struct gdma_wqe w;
	uint32_t size_bu, len;

	if (r->head == r->tail || rc_wqe_read(r, r->head, false, &w, &size_bu) ||
	    mana_rdma_recv_oob_decode(w.oob, &ro) || ro.psn_start != m->psn ||
	    sgl_len(&w, 0, &len) || len < m->len)
		return -EINVAL;
	r->head += size_bu * GDMA_WQE_BU_SIZE;
	m->rd_nsge = w.hdr.num_sge;
	memcpy(m->rd_sge, w.sge, m->rd_nsge * sizeof(w.sge[0]));
	m->rd_next = m->psn;
	m->rd_reissued = false;
	return 0;
}

/* Decode the next SQ WQE into a new window slot; false to stop. */
static bool fetch_one(struct emu_rc_qp_hw *qp)
{
	struct rc_ring *sq = &qp->q[EMU_RC_SQ_REQUESTER];
	struct mana_rdma_send_oob o;
	struct rc_msg *m;
	struct gdma_wqe w;
	uint32_t size_bu;

	if (sq->head == sq->tail || qp->m_cnt == RC_WINDOW ||
	    qp->state != EMU_RC_RTS)
		return false;
	m = msg_at(qp, qp->m_cnt);
	memset(m, 0, offsetof(struct rc_msg, sge));
	if (rc_wqe_read(sq, sq->head, true, &w, &size_bu) ||
	    mana_rdma_send_oob_decode(w.oob, w.hdr.oob_size, &o)) {
		corrupted(qp, qp->next_psn, 0);
		return false;
	}
	if (o.psn != qp->next_psn) {
		corrupted(qp, o.psn, o.wqe_type);
		return false;
	}
	/* rdma-core puts the path MTU in client_data_unit */
	if (w.hdr.client_data_unit != qp->mtu) {
		rc_error_cqe(qp, true, MANA_VERR_TX_RDMA_MTU_ERR, o.psn, 0,
			     o.wqe_type);
		return false;
	}
	/* UC: SEND and WRITE (with immediate) only */
	if (qp->uc && o.wqe_type != MANA_WQE_RC_SEND &&
	    o.wqe_type != MANA_WQE_RC_SEND_IMM &&
	    o.wqe_type != MANA_WQE_WRITE && o.wqe_type != MANA_WQE_WRITE_IMM) {
		corrupted(qp, o.psn, o.wqe_type);
		return false;
	}
	m->wqe_pos = sq->head;
	m->type = o.wqe_type;
	m->solicited = o.solicited;
	m->signaled = o.signaled;
	m->psn = o.psn;
	m->imm = o.imm;
	m->inv_key = o.inv_key;
	m->va = o.remote_addr;
	m->rkey = o.rkey;
	/* rdma-core's padding SGEs (num_padding_sgls) carry no data */
	w.hdr.num_sge = (uint8_t)(w.hdr.num_sge - w.hdr.num_padding_sgls);
	if (sgl_len(&w, 0, &m->len)) {
		corrupted(qp, o.psn, o.wqe_type);
		return false;
	}
	m->nsge = w.hdr.num_sge;
	memcpy(m->sge, w.sge, m->nsge * sizeof(w.sge[0]));
	if (m->type == MANA_WQE_READ) {
		m->len = o.dma_len;
		m->nsge = 0;
	}
	if (m->len > RC_MSG_MAX) {	/* over max_msg_sz */
		rc_error_cqe(qp, true, MANA_VERR_TX_RDMA_WQE_LEN_ERR, o.psn, 0,
			     o.wqe_type);
		return false;
	}
	m->npkts = rc_npkts(m->len, qp->mtu);
	if (m->type == MANA_WQE_READ && fetch_read_dest(qp, m)) {
		corrupted(qp, o.psn, o.wqe_type);
		return false;
	}
	sq->head += size_bu * GDMA_WQE_BU_SIZE;
	qp->next_psn = roce_psn_add(qp->next_psn, m->npkts);
	qp->m_cnt++;
	return true;
}

/* ---- sending -------------------------------------------------------------------------------- */

static int send_packet(struct emu_rc_qp_hw *qp, struct rc_msg *m, uint32_t i)
{
	static uint8_t data[ROCE_MAX_MTU];
	struct roce_pkt p = { 0 };
	uint32_t off = i * qp->mtu, len = 0, end;
	int op = rc_opcode(m->type, i, m->npkts);

	if (op < 0)
		return -EINVAL;
	p.opcode = (uint8_t)op;
	p.psn = roce_psn_add(m->psn, i);
	if (m->type == MANA_WQE_READ) {
		/*
		 * again after a loss: only what has not arrived (IBA 9.4.4);
		 * a READ whose responses all came (a go-back-N rewind to an
		 * earlier READ passes over it) asks for its last one again,
		 * whose AETH retires it -- not for zero bytes at the PSN
		 * after it, which belongs to the next message
		 */
		p.psn = roce_psn_diff(m->rd_next, msg_last_psn(m)) > 0 ?
			msg_last_psn(m) : m->rd_next;
		off = (uint32_t)roce_psn_diff(p.psn, m->psn) * qp->mtu;
		p.va = m->va + off;
		p.rkey = m->rkey;
		p.dma_len = m->len - off;
		p.ack_req = true;
	} else {
		len = m->len - off < qp->mtu ? m->len - off : qp->mtu;
		if (rc_sgl_copy(qp, m->sge, m->nsge, off, data, len, false, 0))
			return -EACCES;
		p.payload = data;
		p.payload_len = len;
		p.va = m->va;
		p.rkey = m->rkey;
		p.dma_len = m->len;
		p.imm = m->imm;		/* the WQE holds the wire's number */
		p.ieth = m->inv_key;
		/* the last packet, and every RC_ACK_EVERY for long messages */
		p.ack_req = i + 1 == m->npkts || !((i + 1) % RC_ACK_EVERY);
		p.se = i + 1 == m->npkts && m->solicited;
	}
	if (qp->uc) {		/* the UC opcode; nobody acknowledges */
		p.opcode |= ROCE_UC;
		p.ack_req = false;
	}
	rc_send_pkt(qp, &p);
	/* a READ request asks for every PSN of its responses */
	end = roce_psn_add(m->type == MANA_WQE_READ ? msg_last_psn(m) : p.psn,
			   1);
	if (roce_psn_diff(end, qp->sent_end) > 0)
		qp->sent_end = end;
	return 0;
}

/*
 * UC: a message is done once its last packet is sent; the next signaled
 * one gets its CQE (in order, on the send CQ, as rdma-core's UC support
 * reads it: type UD_SEND on the send queue).
 */
static void uc_retire_sent(struct emu_rc_qp_hw *qp)
{
	struct mana_rdma_cqe c = { .type = MANA_RDMA_CQE_UD_SEND };
	uint8_t data[GDMA_CQE_SIZE] = { 0 };

	while (qp->m_cur && qp->state != EMU_RC_ERR) {
		struct rc_msg *m = msg_at(qp, 0);

		if (m->signaled && !mana_rdma_cqe_encode(&c, data))
			emu_dev_cq_post(qp->send_cq, data,
					qp->q[EMU_RC_SQ_REQUESTER].id, true);
		qp->m_head = (qp->m_head + 1) % RC_WINDOW;
		qp->m_cnt--;
		qp->m_cur--;
		qp->acked = msg_last_psn(m);
	}
}

unsigned int rc_req_work(struct emu_rc_qp_hw *qp)
{
	unsigned int sent = 0;
	struct rc_msg *m;

	if (qp->state != EMU_RC_RTS && qp->state != EMU_RC_SQD)
		return 0;
	while (fetch_one(qp))
		;
	while (sent < RC_BURST && !qp->rnr_wait && qp->m_cur < qp->m_cnt &&
	       qp->state != EMU_RC_ERR &&
	       (qp->uc || inflight(qp) < RC_MAX_INFLIGHT)) {
		m = msg_at(qp, qp->m_cur);
		if (m->type == MANA_WQE_READ && qp->pkt_cur == 0 &&
		    reads_out(qp) >= (qp->attr.max_rd_atomic ?
				      qp->attr.max_rd_atomic : 1u))
			break;
		if (send_packet(qp, m, qp->pkt_cur)) {
			rc_error_cqe(qp, true,
				     MANA_VERR_TX_ATB_MSG_ACCESS_VIOLATION,
				     m->psn, 0, m->type);
			break;
		}
		if (m->type == MANA_WQE_READ) {
			qp->pkt_cur = m->npkts;	/* one request: all PSNs */
		} else {
			qp->pkt_cur++;
		}
		if (qp->pkt_cur >= m->npkts) {
			qp->m_cur++;
			qp->pkt_cur = 0;
		}
		sent++;
		if (qp->uc) {
			uc_retire_sent(qp);
			while (fetch_one(qp))
				;
			continue;
		}
		if (!qp->timer_ns)
			timer_restart(qp);
	}
	return sent;
}

/* ---- acknowledgements -------------------------------------------------------------------- */

/* Rewind the send cursor to @psn (inside the window): go-back-N. */
static void rewind_to(struct emu_rc_qp_hw *qp, uint32_t psn)
{
	uint32_t i;

	for (i = 0; i < qp->m_cnt; i++) {
		struct rc_msg *m = msg_at(qp, i);
		int32_t d = roce_psn_diff(psn, m->psn);

		if (d >= 0 && (uint32_t)d < m->npkts) {
			qp->m_cur = i;
			/* a READ is asked again from its first missing PSN */
			qp->pkt_cur = m->type == MANA_WQE_READ ? 0 : (uint32_t)d;
			return;
		}
	}
	qp->m_cur = qp->m_cnt;
	qp->pkt_cur = 0;
}

/*
 * Everything up to @psn is acknowledged: retire the messages it covers.
 * A READ whose responses have not all been placed is not covered by a
 * later ACK: its responses were lost, ask again (IBA 9.7.5.1.3).
 */
static void ack_upto(struct emu_rc_qp_hw *qp, uint32_t psn)
{
	bool progress = false;

	while (qp->m_cnt) {
		struct rc_msg *m = msg_at(qp, 0);

		if (roce_psn_diff(msg_last_psn(m), psn) > 0)
			break;
		if (m->type == MANA_WQE_READ &&
		    roce_psn_diff(m->rd_next, msg_last_psn(m)) <= 0) {
			rewind_to(qp, m->psn);
			qp->st.retransmits++;
			break;
		}
		qp->m_head = (qp->m_head + 1) % RC_WINDOW;
		qp->m_cnt--;
		if (qp->m_cur)
			qp->m_cur--;
		else
			qp->pkt_cur = 0;
		progress = true;
	}
	/* an unfinished READ at the head holds its PSNs back */
	if (qp->m_cnt && msg_at(qp, 0)->type == MANA_WQE_READ &&
	    roce_psn_diff(psn, msg_at(qp, 0)->psn) >= 0)
		psn = roce_psn_add(msg_at(qp, 0)->psn, ROCE_PSN_MASK);
	if (roce_psn_diff(psn, qp->acked) > 0) {
		qp->acked = psn;
		progress = true;	/* also within a long message */
	}
	if (progress) {
		qp->backoff = 0;
		qp->retry_left = qp->attr.retry_cnt;
		qp->rnr_left = qp->attr.rnr_retry;
		if (!qp->rnr_wait)	/* a late ACK does not end the wait */
			timer_restart(qp);
	}
	arms_check(qp);
}

static void nak_error(struct emu_rc_qp_hw *qp, const struct roce_pkt *p,
		      uint16_t verr)
{
	struct rc_msg *m = qp->m_cnt ? msg_at(qp, 0) : NULL;

	rc_error_cqe(qp, true, verr, m ? m->psn : p->psn, p->syndrome,
		     m ? m->type : 0);
}

static void on_rnr(struct emu_rc_qp_hw *qp, const struct roce_pkt *p)
{
	qp->st.rnr_naks_rx++;
	if (qp->rnr_left == 0) {
		nak_error(qp, p, MANA_VERR_RX_RNR_NAK);
		return;
	}
	if (qp->rnr_left != 7)
		qp->rnr_left--;
	rewind_to(qp, p->psn);
	qp->rnr_wait = true;
	qp->timer_ns = rc_now_ns() +
		       (uint64_t)roce_rnr_timer_us(p->syndrome & 31) * 1000;
}

static void on_aeth(struct emu_rc_qp_hw *qp, const struct roce_pkt *p)
{
	uint32_t before = roce_psn_add(p->psn, ROCE_PSN_MASK);

	qp->msn_seen = p->msn;
	/* a NAK for what is already acknowledged is stale: a late copy */
	if (ROCE_SYN_KIND(p->syndrome) != ROCE_SYN_KIND_ACK &&
	    roce_psn_diff(p->psn, qp->acked) <= 0)
		return;
	switch (ROCE_SYN_KIND(p->syndrome)) {
	case ROCE_SYN_KIND_ACK:
		ack_upto(qp, p->psn);
		return;
	case ROCE_SYN_KIND_RNR:
		ack_upto(qp, before);
		on_rnr(qp, p);
		return;
	case ROCE_SYN_KIND_NAK:
		ack_upto(qp, before);
		break;
	default:
		qp->st.bad_packets++;
		return;
	}
	switch (p->syndrome & 31) {
	case ROCE_NAK_PSN_SEQ:
		qp->st.seq_naks_rx++;
		if (qp->rnr_wait)
			return;	/* the RNR retry will resend from there */
		if (qp->retry_left == 0) {
			nak_error(qp, p, MANA_VERR_TX_RETRY_LIMIT_EXCEEDED);
			return;
		}
		qp->retry_left--;	/* 7 is not infinite for retry_cnt */
		qp->st.retransmits++;
		rewind_to(qp, p->psn);
		timer_restart(qp);
		return;
	case ROCE_NAK_INVALID_REQ:
		nak_error(qp, p, MANA_VERR_RX_INVALID_REQ_NAK);
		return;
	case ROCE_NAK_REMOTE_ACCESS:
		nak_error(qp, p, MANA_VERR_RX_REMOTE_ACCESS_NAK);
		return;
	default:
		nak_error(qp, p, MANA_VERR_RX_REMOTE_OP_ERR_NAK);
		return;
	}
}

/* A READ response: place its payload, then its AETH (if any) acks. */
static void on_read_resp(struct emu_rc_qp_hw *qp, const struct roce_pkt *p)
{
	unsigned int fl = roce_opcode_flags(p->opcode);
	struct rc_msg *m = NULL;
	uint32_t i, idx;
	int ret;

	for (i = 0; i < qp->m_cnt && i < qp->m_cur + 1; i++) {
		struct rc_msg *c = msg_at(qp, i);
		int32_t d = roce_psn_diff(p->psn, c->psn);

		if (c->type == MANA_WQE_READ && d >= 0 &&
		    (uint32_t)d < c->npkts) {
			m = c;
			break;
		}
	}
	if (!m) {
		qp->st.bad_packets++;	/* late duplicate or bogus */
		return;
	}
	if (p->psn != m->rd_next) {
		/* a gap: ask for the rest once */
		if (roce_psn_diff(p->psn, m->rd_next) > 0 && !m->rd_reissued) {
			m->rd_reissued = true;
			qp->st.retransmits++;
			rewind_to(qp, m->psn);
		}
		/* a duplicate's data is dropped; its AETH still acknowledges */
		if (roce_psn_diff(p->psn, m->rd_next) < 0 && (fl & ROCE_F_AETH))
			on_aeth(qp, p);
		return;
	}
	idx = (uint32_t)roce_psn_diff(p->psn, m->psn);
	if (!rc_payload_len_ok(p->opcode, p->payload_len, qp->mtu) ||
	    (uint64_t)idx * qp->mtu + p->payload_len > m->len ||
	    (!!(fl & ROCE_F_LAST) != (idx + 1 == m->npkts))) {
		rc_error_cqe(qp, true, MANA_VERR_RX_READRESP_LEN_MISMATCH,
			     m->psn, 0, m->type);
		return;
	}
	ret = rc_sgl_copy(qp, m->rd_sge, m->rd_nsge, idx * qp->mtu,
			  (uint8_t *)p->payload, p->payload_len, true,
			  IBV_ACCESS_LOCAL_WRITE);
	if (ret) {
		rc_error_cqe(qp, true, MANA_VERR_RX_ATB_SGE_ADDR_RIGHT, m->psn,
			     0, m->type);
		return;
	}
	m->rd_next = roce_psn_add(m->rd_next, 1);
	/* forward progress: the retry budget and the timer start over */
	m->rd_reissued = false;
	qp->backoff = 0;
	qp->retry_left = qp->attr.retry_cnt;
	timer_restart(qp);
	if (fl & ROCE_F_AETH)
		on_aeth(qp, p);
}

void rc_req_rx(struct emu_rc_qp_hw *qp, const struct roce_pkt *p)
{
	if (qp->state != EMU_RC_RTS && qp->state != EMU_RC_SQD &&
	    qp->state != EMU_RC_SQE)
		return;
	/*
	 * An ACK, NAK or response for a PSN never transmitted is a ghost
	 * (IBA 9.7.5.1.x): ignored.  Not the PSNs of the WQEs fetched (up to
	 * RC_WINDOW messages ahead): one forged ACK would retire them all.
	 */
	if (roce_psn_diff(p->psn, qp->sent_end) >= 0) {
		qp->st.bad_packets++;
		return;
	}
	if (p->opcode == ROCE_ACK)
		on_aeth(qp, p);
	else
		on_read_resp(qp, p);
}

/* Retransmission or RNR timer expired. */
void rc_req_timer(struct emu_rc_qp_hw *qp)
{
	if (emu_verbose())
		emu_log("rc qp %u: timer (%s) acked %u next %u retry %u", qp->qpn,
			qp->rnr_wait ? "rnr" : "retransmit", qp->acked,
			qp->next_psn, qp->retry_left);
	qp->timer_ns = 0;
	if (qp->state == EMU_RC_ERR || !qp->m_cnt)
		return;
	if (qp->rnr_wait) {
		qp->rnr_wait = false;
		timer_restart(qp);
		return;
	}
	if (qp->retry_left == 0) {
		rc_error_cqe(qp, true, MANA_VERR_TX_RETRY_LIMIT_EXCEEDED,
			     msg_at(qp, 0)->psn, 0, msg_at(qp, 0)->type);
		return;
	}
	qp->retry_left--;
	qp->backoff++;
	qp->st.retransmits++;
	rewind_to(qp, roce_psn_add(qp->acked, 1));
	timer_restart(qp);
}
