// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC responder (IBA 9.7.5): the expected PSN, duplicates (re-ACKed;
 * a duplicate READ is executed again if it repeats a READ this QP
 * executed, else dropped), a sequence NAK once per gap, RNR
 * NAK when a SEND or WRITE with immediate finds no receive WQE, rkey,
 * bounds and access checks against the PD's MRs and the QP's
 * access_flags, receive CQEs, READ responses, and ACKs coalesced to one
 * per device round (at least at each message's last packet and whenever
 * the A bit asks).
 *
 * Errors, as the contract with the provider has them: a remote access
 * error NAKs and takes the QP to ERR with an async event but no CQE (no
 * receive WQE is involved); a receive buffer too small gives a receive
 * error CQE and NAK invalid request; a bad lkey in a receive WQE gives a
 * receive error CQE and NAK remote operational error.
 */
#include "rc_int.h"

#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "emulator/core/emu.h"
#include "rc_dev.h"

enum verdict { DONE, RNR, FAILED };

static void send_aeth(struct emu_rc_qp_hw *qp, uint32_t psn, uint8_t syn)
{
	struct roce_pkt p = {
		.opcode = ROCE_ACK,
		.psn = psn & ROCE_PSN_MASK,
		.syndrome = syn,
		.msn = qp->msn & ROCE_PSN_MASK,
	};

	if (qp->uc)		/* UC has no ACK and no NAK */
		return;
	rc_send_pkt(qp, &p);
}

void rc_resp_flush_ack(struct emu_rc_qp_hw *qp)
{
	if (!qp->ack_due)
		return;
	qp->ack_due = false;
	send_aeth(qp, roce_psn_add(qp->epsn, ROCE_PSN_MASK),
		  ROCE_SYN_ACK(ROCE_CREDITS_INVALID));
}

/* A NAK after any ACK still owed, so that the requester sees them in order. */
static void send_nak(struct emu_rc_qp_hw *qp, uint32_t psn, uint8_t syn)
{
	rc_resp_flush_ack(qp);
	send_aeth(qp, psn, syn);
}

/* UC: the message is dropped silently, the QP stays as it is */
static enum verdict uc_drop(struct emu_rc_qp_hw *qp)
{
	qp->st.bad_packets++;
	qp->r.active = false;
	return FAILED;
}

static enum verdict fail_nak(struct emu_rc_qp_hw *qp,
			     const struct roce_pkt *p, uint8_t code, int event)
{
	if (qp->uc)		/* rkey, access, length: no NAK to send */
		return uc_drop(qp);
	qp->st.errors++;
	send_nak(qp, p->psn, ROCE_SYN_NAK(code));
	rc_qp_fatal(qp, event);
	return FAILED;
}

/* A receive WQE was involved: its error CQE, then the NAK. */
static enum verdict fail_cqe(struct emu_rc_qp_hw *qp,
			     const struct roce_pkt *p, uint16_t verr,
			     uint8_t code)
{
	send_nak(qp, p->psn, ROCE_SYN_NAK(code));
	rc_error_cqe(qp, false, verr, p->psn, ROCE_SYN_NAK(code), p->opcode);
	return FAILED;
}

static enum verdict rnr(struct emu_rc_qp_hw *qp, const struct roce_pkt *p)
{
	if (qp->uc)		/* no receive WQE: UC drops the message */
		return uc_drop(qp);
	qp->st.rnr_naks_tx++;
	send_nak(qp, p->psn, ROCE_SYN_RNR(qp->attr.min_rnr_timer));
	/* the rest of the burst is dropped silently until the retry */
	qp->nak_seq_sent = true;
	return RNR;
}

static void recv_cqe(struct emu_rc_qp_hw *qp, uint8_t type, uint32_t len,
		     uint32_t psn, uint32_t imm, uint32_t wqe_pos)
{
	struct mana_rdma_cqe c = {
		.type = type,
		.msg_len = len,
		.psn = psn & ROCE_PSN_MASK,
		.imm = imm,
		.rx_wqe_offset = wqe_pos,
	};
	uint8_t data[GDMA_CQE_SIZE] = { 0 };

	if (!mana_rdma_cqe_encode(&c, data))
		emu_dev_cq_post(qp->recv_cq, data,
				qp->q[EMU_RC_RQ_RESPONDER].id, false);
}

/* Take the next receive WQE into qp->r (not consumed yet). */
static int recv_wqe(struct emu_rc_qp_hw *qp)
{
	struct rc_ring *rq = &qp->q[EMU_RC_RQ_RESPONDER];
	struct gdma_wqe w;
	uint32_t bu;
	int ret;

	if (rq->head == rq->tail)
		return -EAGAIN;
	ret = rc_wqe_read(rq, rq->head, false, &w, &bu);
	if (ret)
		return -EINVAL;
	qp->r.wqe_pos = rq->head;
	qp->r.wqe_bu = bu;
	qp->r.nsge = w.hdr.num_sge;
	memcpy(qp->r.sge, w.sge, w.hdr.num_sge * sizeof(w.sge[0]));
	return 0;
}

static void recv_consume(struct emu_rc_qp_hw *qp)
{
	qp->q[EMU_RC_RQ_RESPONDER].head += qp->r.wqe_bu * GDMA_WQE_BU_SIZE;
}

static enum verdict do_send(struct emu_rc_qp_hw *qp, const struct roce_pkt *p,
			    unsigned int fl)
{
	uint8_t type = MANA_RDMA_CQE_RC_SEND;
	uint32_t imm = 0;
	int ret;

	if (fl & ROCE_F_FIRST) {
		ret = recv_wqe(qp);
		if (ret == -EAGAIN)
			return rnr(qp, p);
		if (ret)
			return fail_cqe(qp, p, MANA_VERR_RX_MALFORMED_WQE,
					ROCE_NAK_REMOTE_OP);
		qp->r.active = true;
		qp->r.is_send = true;
		qp->r.off = 0;
	}
	ret = rc_sgl_copy(qp, qp->r.sge, qp->r.nsge, qp->r.off,
			  (uint8_t *)p->payload, p->payload_len, true,
			  IBV_ACCESS_LOCAL_WRITE);
	if (ret == -EMSGSIZE)
		return fail_cqe(qp, p, MANA_VERR_RX_MSG_LEN_OVFL,
				ROCE_NAK_INVALID_REQ);
	if (ret)
		return fail_cqe(qp, p, MANA_VERR_RX_ATB_SGE_ADDR_RIGHT,
				ROCE_NAK_REMOTE_OP);
	qp->r.off += p->payload_len;
	if (!(fl & ROCE_F_LAST))
		return DONE;
	if (fl & ROCE_F_IMM) {
		type = MANA_RDMA_CQE_RC_SEND_IMM;
		imm = p->imm;
	} else if (fl & ROCE_F_IETH) {
		type = MANA_RDMA_CQE_RC_SEND_INV;
		imm = p->ieth;
	}
	qp->msn++;
	recv_cqe(qp, type, qp->r.off, p->psn, imm, qp->r.wqe_pos);
	recv_consume(qp);
	qp->r.active = false;
	return DONE;
}

static enum verdict do_write(struct emu_rc_qp_hw *qp, const struct roce_pkt *p,
			     unsigned int fl)
{
	uintptr_t uva;
	int ret;

	if (fl & ROCE_F_FIRST) {
		if (!(qp->attr.access_flags & IBV_ACCESS_REMOTE_WRITE) ||
		    emu_dev_mr_map(qp->pd, p->rkey, p->va, p->dma_len,
				   IBV_ACCESS_REMOTE_WRITE, &uva))
			return fail_nak(qp, p, ROCE_NAK_REMOTE_ACCESS,
					IBV_EVENT_QP_ACCESS_ERR);
		qp->r.active = true;
		qp->r.is_send = false;
		qp->r.off = 0;
		qp->r.va = p->va;
		qp->r.rkey = p->rkey;
		qp->r.dma_len = p->dma_len;
	}
	/* with immediate: a receive WQE must be there before data lands */
	if (fl & ROCE_F_IMM) {
		ret = recv_wqe(qp);
		if (ret == -EAGAIN) {
			if (fl & ROCE_F_FIRST)
				qp->r.active = false;	/* comes again whole */
			return rnr(qp, p);
		}
		if (ret)
			return fail_cqe(qp, p, MANA_VERR_RX_MALFORMED_WQE,
					ROCE_NAK_REMOTE_OP);
	}
	if ((uint64_t)qp->r.off + p->payload_len > qp->r.dma_len ||
	    ((fl & ROCE_F_LAST) &&
	     qp->r.off + p->payload_len != qp->r.dma_len))
		return fail_nak(qp, p, ROCE_NAK_INVALID_REQ,
				IBV_EVENT_QP_REQ_ERR);
	/*
	 * The MR again at every packet, never an address kept from the
	 * first: once ibv_dereg_mr() has returned (it takes emu.lock, as
	 * this does) no later packet of the message lands; each gets the
	 * remote access NAK.
	 */
	if (p->payload_len &&
	    (emu_dev_mr_map(qp->pd, qp->r.rkey, qp->r.va + qp->r.off,
			    p->payload_len, IBV_ACCESS_REMOTE_WRITE, &uva) ||
	     emu_copy_user_one((void *)p->payload, (void *)uva,
			       p->payload_len, true) != p->payload_len))
		return fail_nak(qp, p, ROCE_NAK_REMOTE_ACCESS,
				IBV_EVENT_QP_ACCESS_ERR);
	qp->r.off += p->payload_len;
	if (!(fl & ROCE_F_LAST))
		return DONE;
	qp->msn++;
	if (fl & ROCE_F_IMM) {
		recv_cqe(qp, MANA_RDMA_CQE_RC_WRITE_IMM, qp->r.off, p->psn,
			 p->imm, qp->r.wqe_pos);
		recv_consume(qp);
	}
	qp->r.active = false;
	return DONE;
}

/*
 * READ responses for a request at @p->psn: a new one (@dup false: a bad
 * request is fatal) or a duplicate already matched against the READ it
 * repeats (@dup: the MR is checked again; if that fails now, the request
 * is dropped -- a duplicate never breaks the QP).
 */
static enum verdict do_read(struct emu_rc_qp_hw *qp, const struct roce_pkt *p,
			    bool dup)
{
	static uint8_t data[ROCE_MAX_MTU];
	uint32_t n, i, off = 0;
	uintptr_t uva;

	if (!(qp->attr.access_flags & IBV_ACCESS_REMOTE_READ) ||
	    p->dma_len > RC_MSG_MAX ||
	    emu_dev_mr_map(qp->pd, p->rkey, p->va, p->dma_len,
			   IBV_ACCESS_REMOTE_READ, &uva)) {
		if (dup) {
			qp->st.bad_packets++;
			return DONE;
		}
		return fail_nak(qp, p, ROCE_NAK_REMOTE_ACCESS,
				IBV_EVENT_QP_ACCESS_ERR);
	}
	n = rc_npkts(p->dma_len, qp->mtu);
	if (!dup) {
		struct rc_rd_done *d = &qp->rd_done[qp->rd_n++ % RC_RD_HIST];

		*d = (struct rc_rd_done){ .psn = p->psn, .npkts = n,
			.va = p->va, .rkey = p->rkey, .len = p->dma_len };
		qp->msn++;
	}
	rc_resp_flush_ack(qp);
	for (i = 0; i < n; i++) {
		struct roce_pkt r = { 0 };
		uint32_t len = p->dma_len - off < qp->mtu ?
			       p->dma_len - off : qp->mtu;

		r.opcode = n == 1 ? ROCE_READ_RESP_ONLY :
			   !i ? ROCE_READ_RESP_FIRST :
			   i + 1 == n ? ROCE_READ_RESP_LAST :
					ROCE_READ_RESP_MIDDLE;
		r.psn = roce_psn_add(p->psn, i);
		r.syndrome = ROCE_SYN_ACK(ROCE_CREDITS_INVALID);
		r.msn = qp->msn & ROCE_PSN_MASK;
		if (len && emu_copy_user_one(data, (void *)(uva + off), len,
					     false) != len) {
			if (dup)
				return DONE;
			return fail_nak(qp, p, ROCE_NAK_REMOTE_ACCESS,
					IBV_EVENT_QP_ACCESS_ERR);
		}
		r.payload = len ? data : NULL;
		r.payload_len = len;
		rc_send_pkt(qp, &r);
		off += len;
	}
	if (!dup)
		qp->epsn = roce_psn_add(qp->epsn, n);
	return DONE;
}

/*
 * A duplicate READ is executed again only as what the requester may ask
 * after a loss (IBA 9.7.5.2.5, 9.4.4): the rest of a READ this QP
 * executed, from one of its PSNs, same rkey, the address and length moved
 * on by whole MTUs.  Anything else in the (2^23 wide) duplicate range was
 * never a valid request: dropped, counted, the QP untouched.
 */
static bool read_dup_matches(struct emu_rc_qp_hw *qp, const struct roce_pkt *p)
{
	uint32_t i, n = qp->rd_n < RC_RD_HIST ? qp->rd_n : RC_RD_HIST;

	for (i = 0; i < n; i++) {
		const struct rc_rd_done *d = &qp->rd_done[i];
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

static void duplicate(struct emu_rc_qp_hw *qp, const struct roce_pkt *p,
		      unsigned int fl)
{
	if (p->opcode == ROCE_READ_REQ) {
		if (read_dup_matches(qp, p))
			do_read(qp, p, true);
		else
			qp->st.bad_packets++;
		return;
	}
	/* re-ACK the most recent PSN (IBA 9.7.5.1.2) */
	if (p->ack_req || (fl & ROCE_F_LAST))
		qp->ack_due = true;
}

void rc_resp_rx(struct emu_rc_qp_hw *qp, const struct roce_pkt *p)
{
	unsigned int fl = roce_opcode_flags(p->opcode);
	enum verdict v;

	if (qp->state != EMU_RC_RTR && qp->state != EMU_RC_RTS &&
	    qp->state != EMU_RC_SQD && qp->state != EMU_RC_SQE)
		return;
	switch (rc_psn_classify(p->psn, qp->epsn)) {
	case RC_PSN_AHEAD:
		if (!qp->nak_seq_sent) {
			qp->nak_seq_sent = true;
			qp->st.seq_naks_tx++;
			send_nak(qp, qp->epsn, ROCE_SYN_NAK(ROCE_NAK_PSN_SEQ));
		}
		return;
	case RC_PSN_DUPLICATE:
		duplicate(qp, p, fl);
		return;
	case RC_PSN_EXPECTED:
		break;
	}
	qp->nak_seq_sent = false;
	if (!rc_opcode_in_sequence(p->opcode, qp->r.active && qp->r.is_send,
				   qp->r.active && !qp->r.is_send) ||
	    !rc_payload_len_ok(p->opcode, p->payload_len, qp->mtu)) {
		qp->st.bad_packets++;
		fail_nak(qp, p, ROCE_NAK_INVALID_REQ, IBV_EVENT_QP_REQ_ERR);
		return;
	}
	if (fl & ROCE_F_SEND)
		v = do_send(qp, p, fl);
	else if (fl & ROCE_F_WRITE)
		v = do_write(qp, p, fl);
	else
		v = do_read(qp, p, false);
	if (v != DONE || p->opcode == ROCE_READ_REQ)
		return;
	qp->epsn = roce_psn_add(qp->epsn, 1);
	if (p->ack_req || (fl & ROCE_F_LAST))
		qp->ack_due = true;
}

/*
 * UC (IBA 9.7.x for UC): no ACKs, no NAKs, no duplicates.  A packet at
 * another PSN than the expected one means packets were lost: the message
 * in progress is dropped (a SEND's receive WQE is not consumed and takes
 * the next message) and only a FIRST or ONLY starts a new one, whatever
 * its PSN.  A MIDDLE or LAST without a message in progress is dropped.
 */
void uc_resp_rx(struct emu_rc_qp_hw *qp, const struct roce_pkt *p)
{
	unsigned int fl = roce_opcode_flags(p->opcode);

	if (qp->state != EMU_RC_RTR && qp->state != EMU_RC_RTS &&
	    qp->state != EMU_RC_SQD && qp->state != EMU_RC_SQE)
		return;
	if (p->psn != qp->epsn && qp->r.active)
		uc_drop(qp);
	qp->epsn = roce_psn_add(p->psn, 1);
	if (qp->r.active && (fl & ROCE_F_FIRST))
		uc_drop(qp);	/* a new message before the last one ended */
	if (!(fl & ROCE_F_FIRST) && !qp->r.active) {
		qp->st.bad_packets++;
		return;
	}
	if ((qp->r.active && !(fl & ROCE_F_SEND) != !qp->r.is_send) ||
	    !rc_payload_len_ok(p->opcode, p->payload_len, qp->mtu)) {
		uc_drop(qp);
		return;
	}
	if (fl & ROCE_F_SEND)
		do_send(qp, p, fl);
	else
		do_write(qp, p, fl);
}
