// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RNIC's RC engine (device/rc.h): QPs and their four queues, the
 * doorbells that name them, the device-thread rounds and timers, RoCEv2
 * frames in and out (with the drop/reorder wire faults), error CQEs and
 * the statistics.  The requester is rc_req.c, the responder rc_resp.c,
 * neighbour resolution rc_neigh.c.
 *
 * Queue ids: the send side's ids come from 0x400000 up, the receive
 * side's from 0x800000 up, four apart, the low two bits the subtype; the
 * raw queues' ids (from 24, 536 and 1048) stay far below.  The send
 * responder queue (user order 1) is hardware-internal: the device never
 * reads it.  Nor does it read the SQ's 16-byte rollback area {'RLBK',
 * size, left, right}: that is the provider's own bookkeeping.
 */
#include "rc_int.h"
#include "gsi.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "emulator/core/emu.h"
#include "emulator/core/gid.h"
#include "emulator/core/vm.h"
#include "emulator/lib/qp_modify.h"
#include "emulator/mana_emu.h"
#include "device.h"
#include "rc_dev.h"

#define SEND_BASE	0x400000u
#define RECV_BASE	0x800000u
#define QP_HASH		256
#define RETIRED_MAX	4096

unsigned int emu_rc_nqps;

static struct {
	struct emu_rc_qp_hw *list;
	struct emu_rc_qp_hw *hash[QP_HASH];
	uint32_t next_base;		/* offset of the next id pair */
	/* wire faults */
	uint64_t roce_tx;		/* RoCE packets offered to the wire */
	uint64_t rng;			/* the faults' pseudo-random sequence */
	uint64_t dropped, reordered;
	uint8_t held[ROCE_MAX_FRAME];	/* --fault=reorder-roce */
	size_t held_len;
	unsigned int held_port;
	/* mana_emu_rc_wire_hold() */
	bool hold;
	int hold_pass;
	struct rc_held {
		unsigned int port;
		size_t len;
		uint8_t f[];
	} **holdq;
	size_t nhold;
	/* statistics of destroyed QPs */
	struct rc_retired {
		uint32_t qpn;
		struct rc_stats st;
	} *retired;
	size_t nretired;
} rc = { .rng = 0x9e3779b97f4a7c15ull };

/* ---- helpers ------------------------------------------------------------------ */

uint64_t rc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct emu_rc_qp_hw *rc_qp_by_qpn(uint32_t qpn)
{
	struct emu_rc_qp_hw *qp;

	for (qp = rc.hash[qpn % QP_HASH]; qp; qp = qp->hash_next)
		if (qp->qpn == qpn)
			return qp;
	return NULL;
}

static struct emu_rc_qp_hw *qp_by_queue_id(uint32_t id)
{
	if (id >= RECV_BASE)
		return rc_qp_by_qpn(id & ~MANA_RC_QTYPE_MASK);
	if (id >= SEND_BASE)
		return rc_qp_by_qpn((id & ~MANA_RC_QTYPE_MASK) - SEND_BASE +
				    RECV_BASE);
	return NULL;
}

/*
 * One chance in @n (xorshift64, a fixed seed: every run the same).  Not a
 * strict "every Nth": a retry cycle whose length is a multiple of N would
 * lose the same packet every time and never get through, which no real
 * wire does.
 */
static bool one_in(unsigned long long n)
{
	rc.rng ^= rc.rng << 13;
	rc.rng ^= rc.rng >> 7;
	rc.rng ^= rc.rng << 17;
	return n && !(rc.rng % n);
}

#define HOLD_MAX 4096

/* A packet mana_emu_rc_wire_hold() keeps back: true if kept (or lost). */
static bool wire_hold(unsigned int port, const uint8_t *f, size_t len)
{
	struct rc_held *h;

	if (!rc.hold)
		return false;
	if (rc.hold_pass > 0) {
		rc.hold_pass--;
		return false;
	}
	if (rc.nhold == HOLD_MAX || !(h = malloc(sizeof(*h) + len)))
		return true;	/* a loss, as on a full wire */
	h->port = port;
	h->len = len;
	memcpy(h->f, f, len);
	rc.holdq[rc.nhold++] = h;
	return true;
}

EMU_EXPORT int mana_emu_rc_wire_hold(int pass)
{
	size_t i;
	int ret = 0;

	pthread_mutex_lock(&emu.lock);
	if (pass >= 0) {
		if (!rc.holdq)
			rc.holdq = calloc(HOLD_MAX, sizeof(*rc.holdq));
		if (rc.holdq) {
			rc.hold = true;
			rc.hold_pass = pass;
		} else {
			ret = -ENOMEM;
		}
	} else {
		rc.hold = false;
		for (i = 0; i < rc.nhold; i++) {
			emu_dev_xmit(rc.holdq[i]->port, rc.holdq[i]->f,
				     rc.holdq[i]->len);
			free(rc.holdq[i]);
		}
		rc.nhold = 0;
	}
	pthread_mutex_unlock(&emu.lock);
	return ret;
}

static void wire_out(unsigned int port, const uint8_t *f, size_t len)
{
	rc.roce_tx++;
	if (wire_hold(port, f, len))
		return;
	if (emu.opts.fault_drop_roce && one_in(emu.opts.fault_drop_roce)) {
		rc.dropped++;
		return;
	}
	if (rc.held_len) {
		/* the packet after a held one overtakes it */
		emu_dev_xmit(port, f, len);
		emu_dev_xmit(rc.held_port, rc.held, rc.held_len);
		rc.held_len = 0;
		return;
	}
	if (emu.opts.fault_reorder_roce &&
	    one_in(emu.opts.fault_reorder_roce)) {
		memcpy(rc.held, f, len);
		rc.held_len = len;
		rc.held_port = port;
		rc.reordered++;
		return;
	}
	emu_dev_xmit(port, f, len);
}

/* A held packet nothing overtook this round goes out late but in order. */
static void wire_flush_held(void)
{
	if (!rc.held_len)
		return;
	emu_dev_xmit(rc.held_port, rc.held, rc.held_len);
	rc.held_len = 0;
}

void rc_send_pkt(struct emu_rc_qp_hw *qp, struct roce_pkt *p)
{
	static uint8_t f[ROCE_MAX_FRAME];
	size_t len;

	memcpy(p->dmac, qp->dmac, 6);
	memcpy(p->smac, qp->smac, 6);
	memcpy(p->sgid, qp->sgid, 16);
	memcpy(p->dgid, qp->attr.dgid, 16);
	p->traffic_class = qp->attr.traffic_class;
	p->hop_limit = qp->attr.hop_limit ? qp->attr.hop_limit : 64;
	p->flow_label = qp->attr.flow_label & 0xfffff;
	p->udp_sport = qp->sport;
	p->pkey = ROCE_PKEY_DEFAULT;
	p->dqpn = qp->attr.dest_qp_num & ROCE_QPN_MASK;
	if (emu_gid_is_v4(p->dgid))
		p->traffic_class = (uint8_t)(qp->attr.traffic_class & ~3u);
	if (roce_encode(p, f, sizeof(f), &len)) {
		qp->st.errors++;
		return;
	}
	qp->st.tx_packets++;
	wire_out(qp->port, f, len);
}

void rc_schedule(struct emu_rc_qp_hw *qp)
{
	qp->listed = true;
	emu_dev_kick();
}

void rc_qp_fatal(struct emu_rc_qp_hw *qp, int ibv_event)
{
	if (qp->state == EMU_RC_ERR)
		return;
	qp->state = EMU_RC_ERR;
	qp->timer_ns = 0;
	qp->ack_due = false;
	if (emu_verbose())
		emu_log("rc qp %u: to ERR", qp->qpn);
	/*
	 * The provider completes the outstanding WRs as flushed when it next
	 * polls; a consumer asleep on an armed CQ (rping's CQ thread after
	 * rdma_disconnect) must be woken to poll, as flush completions wake
	 * it on an RNIC that writes them: the armed CQs raise their event.
	 */
	emu_dev_cq_wake(qp->send_cq);
	if (qp->recv_cq != qp->send_cq)
		emu_dev_cq_wake(qp->recv_cq);
	if (ibv_event >= 0 && qp->event_fn)
		qp->event_fn(qp->event_arg, ibv_event);
}

void rc_error_cqe(struct emu_rc_qp_hw *qp, bool send_side, uint16_t verr,
		  uint32_t psn, uint8_t syndrome, uint8_t opcode)
{
	struct mana_rdma_cqe c = {
		.type = MANA_RDMA_CQE_ERROR,
		.vendor_error = verr,
		.msn = qp->msn_seen & ROCE_PSN_MASK,
		.syndrome = syndrome,
		.psn = psn & ROCE_PSN_MASK,
		.opcode = opcode,
	};
	uint8_t data[GDMA_CQE_SIZE] = { 0 };

	if (qp->state == EMU_RC_ERR)
		return;
	qp->st.errors++;
	if (emu_verbose())
		emu_log("rc qp %u: error CQE %s (%#x) psn %u", qp->qpn,
			mana_vendor_err_name(verr) ? mana_vendor_err_name(verr) :
			"?", verr, psn);
	if (!send_side)
		c.msn = qp->msn & ROCE_PSN_MASK;
	if (!mana_rdma_cqe_encode(&c, data)) {
		if (send_side)
			emu_dev_cq_post(qp->send_cq, data,
					qp->q[EMU_RC_SQ_REQUESTER].id, true);
		else
			emu_dev_cq_post(qp->recv_cq, data,
					qp->q[EMU_RC_RQ_RESPONDER].id, false);
	}
	rc_qp_fatal(qp, -1);
}

int rc_sgl_copy(struct emu_rc_qp_hw *qp, const struct gdma_sge *sge,
		uint32_t nsge, uint32_t off, uint8_t *buf, uint32_t len,
		bool to_user, unsigned int access)
{
	uint32_t i;

	for (i = 0; i < nsge && len; i++) {
		uint32_t piece, skip;
		uintptr_t va;

		if (off >= sge[i].size) {
			off -= sge[i].size;
			continue;
		}
		skip = off;
		off = 0;
		piece = sge[i].size - skip < len ? sge[i].size - skip : len;
		if (emu_dev_mr_map(qp->pd, sge[i].mkey, sge[i].addr + skip,
				   piece, access, &va))
			return -EACCES;
		if (emu_copy_user_one(buf, (void *)va, piece, to_user) != piece)
			return -EFAULT;
		buf += piece;
		len -= piece;
	}
	return len ? -EMSGSIZE : 0;
}

int rc_wqe_read(const struct rc_ring *r, uint32_t pos, bool sq,
		struct gdma_wqe *w, uint32_t *size_bu)
{
	uint8_t buf[GDMA_MAX_SQE_SIZE];
	uint32_t max = sq ? GDMA_MAX_SQE_SIZE : GDMA_MAX_RQE_SIZE;
	uint32_t avail = r->tail - pos, off, first;

	if (avail > max)
		avail = max;
	if (!avail)
		return -ENOENT;
	off = pos % r->size;
	first = r->size - off < avail ? r->size - off : avail;
	if (emu_copy_user_one(buf, (void *)(uintptr_t)(r->buf + off), first,
			      false) != first)
		return -EFAULT;
	if (first < avail &&
	    emu_copy_user_one(buf + first, (void *)(uintptr_t)r->buf,
			      avail - first, false) != avail - first)
		return -EFAULT;
	return gdma_wqe_decode_linear(buf, avail, sq ? GDMA_SQ : GDMA_RQ, w,
				      size_bu);
}

/* ---- create, modify, destroy ------------------------------------------------- */

int emu_rc_qp_hw_create(const struct emu_rc_create_req *req,
			struct emu_rc_qp_hw **out, uint32_t ids[EMU_RC_QUEUES])
{
	struct emu_rc_qp_hw *qp;
	uint32_t send_base, recv_base = 0, tries;
	unsigned int i;
	int ret;

	if (!req->send_cq || !req->recv_cq || !req->pd || !req->port)
		return -EINVAL;
	/* an empty ring (a receive-only QP's send queue) takes no doorbell */
	for (i = 0; i < EMU_RC_QUEUES; i++)
		if (req->size[i] % GDMA_WQE_BU_SIZE)
			return -EINVAL;
	ret = emu_port_attach(req->port);
	if (ret)
		return ret;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	qp->msgs = calloc(RC_WINDOW, sizeof(*qp->msgs));
	if (!qp->msgs) {
		free(qp);
		return -ENOMEM;
	}
	/*
	 * a fresh id pair not in use (wraps within the 22-bit spaces); with
	 * --vm not in use in the VM: the QPN names the QP on the VM's wire
	 */
	if (emu_vm_active()) {
		uint32_t k;

		ret = emu_vm_qid_alloc(EMU_VM_QID_RC, 1, SEND_BASE / 4 - 1, &k);
		if (ret) {
			free(qp->msgs);
			free(qp);
			return ret;
		}
		rc.next_base = k * 4;
		recv_base = RECV_BASE + rc.next_base;
	}
	for (tries = 0; !emu_vm_active(); tries++) {
		if (tries > SEND_BASE / 4) {
			free(qp->msgs);
			free(qp);
			return -ENOSPC;
		}
		rc.next_base = (rc.next_base + 4) % SEND_BASE;
		if (!rc.next_base)
			continue;
		recv_base = RECV_BASE + rc.next_base;
		if (!rc_qp_by_qpn(recv_base))
			break;
	}
	send_base = SEND_BASE + rc.next_base;
	qp->q[EMU_RC_SQ_REQUESTER].id = send_base | MANA_RC_SQ_REQ;
	qp->q[EMU_RC_SQ_RESPONDER].id = send_base | MANA_RC_SQ_RESP;
	qp->q[EMU_RC_RQ_REQUESTER].id = recv_base | MANA_RC_RQ_REQ;
	qp->q[EMU_RC_RQ_RESPONDER].id = recv_base | MANA_RC_RQ_RESP;
	for (i = 0; i < EMU_RC_QUEUES; i++) {
		qp->q[i].buf = req->buf[i];
		qp->q[i].size = req->size[i];
		ids[i] = qp->q[i].id;
	}
	qp->qpn = qp->q[EMU_RC_RQ_RESPONDER].id;
	qp->ctx = req->ctx;
	qp->pd = req->pd;
	qp->send_cq = req->send_cq;
	qp->recv_cq = req->recv_cq;
	qp->port = req->port;
	qp->uc = req->uc;
	qp->state = EMU_RC_RESET;
	qp->attr.state = EMU_RC_RESET;
	qp->attr.path_mtu = IBV_MTU_1024;
	qp->next = rc.list;
	rc.list = qp;
	qp->hash_next = rc.hash[qp->qpn % QP_HASH];
	rc.hash[qp->qpn % QP_HASH] = qp;
	emu_rc_nqps++;
	*out = qp;
	return 0;
}

static void qp_reset(struct emu_rc_qp_hw *qp)
{
	unsigned int i;

	for (i = 0; i < EMU_RC_QUEUES; i++)
		qp->q[i].head = qp->q[i].tail = 0;
	rc_req_reset(qp);
	qp->epsn = 0;
	qp->msn = 0;
	qp->nak_seq_sent = false;
	qp->ack_due = false;
	memset(&qp->r, 0, sizeof(qp->r));
	qp->rd_n = 0;
}

static void attr_merge(struct emu_rc_attr *a, const struct emu_rc_attr *n,
		       uint32_t mask)
{
	if (mask & IBV_QP_ACCESS_FLAGS)
		a->access_flags = n->access_flags;
	if (mask & IBV_QP_PATH_MTU)
		a->path_mtu = n->path_mtu;
	if (mask & IBV_QP_DEST_QPN)
		a->dest_qp_num = n->dest_qp_num;
	if (mask & IBV_QP_RQ_PSN)
		a->rq_psn = n->rq_psn & ROCE_PSN_MASK;
	if (mask & IBV_QP_SQ_PSN)
		a->sq_psn = n->sq_psn & ROCE_PSN_MASK;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = n->max_rd_atomic;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = n->max_dest_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = n->min_rnr_timer & 31;
	if (mask & IBV_QP_TIMEOUT)
		a->timeout = n->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		a->retry_cnt = n->retry_cnt & 7;
	if (mask & IBV_QP_RNR_RETRY)
		a->rnr_retry = n->rnr_retry & 7;
	if (mask & IBV_QP_AV) {
		memcpy(a->dgid, n->dgid, 16);
		a->sgid_index = n->sgid_index;
		a->hop_limit = n->hop_limit;
		a->traffic_class = n->traffic_class;
		a->flow_label = n->flow_label;
	}
}

/* RTR: the path (source GID and MAC, destination MAC, UDP port). */
static int qp_path(struct emu_rc_qp_hw *qp)
{
	int ret;

	qp->mtu = roce_mtu_bytes(qp->attr.path_mtu);
	if (!qp->mtu)
		return -EINVAL;
	ret = emu_gid_get(&emu.opts, qp->port, qp->attr.sgid_index, qp->sgid);
	if (ret)
		return ret;
	if (emu_gid_is_v4(qp->sgid) != emu_gid_is_v4(qp->attr.dgid))
		return -EINVAL;
	emu_dev_port_mac(qp->port, qp->smac);
	qp->sport = roce_udp_sport(qp->attr.flow_label, qp->qpn,
				   qp->attr.dest_qp_num);
	return rc_neigh_resolve(qp->port, qp->sgid, qp->attr.dgid, qp->dmac);
}

int emu_rc_qp_hw_modify(struct emu_rc_qp_hw *qp, const struct emu_rc_attr *attr,
			uint32_t mask)
{
	enum emu_rc_state to = mask & IBV_QP_STATE ? attr->state : qp->state;
	struct emu_rc_attr merged = qp->attr;
	const struct qp_values v = {
		.path_mtu = attr->path_mtu, .max_rd_atomic = attr->max_rd_atomic,
		.max_dest_rd_atomic = attr->max_dest_rd_atomic,
		.min_rnr_timer = attr->min_rnr_timer, .timeout = attr->timeout,
		.retry_cnt = attr->retry_cnt, .rnr_retry = attr->rnr_retry,
		.dest_qpn = attr->dest_qp_num, .rq_psn = attr->rq_psn,
		.sq_psn = attr->sq_psn,
	};
	int ret;

	/*
	 * SET_QP_STATE: a transition the state machine lacks, a required
	 * attribute missing or one not allowed, a value the QP cannot hold
	 * -- a failed command (the open question of lib/qp_modify.h), so
	 * nothing half-set reaches the path (no RTR without an AV)
	 */
	if (!qp_transition_ok(qp->uc, qp->state, to, mask) ||
	    !qp_values_ok(&v, mask))
		return -EPROTO;
	attr_merge(&merged, attr, mask);
	if (to == EMU_RC_RTR && qp->state != EMU_RC_RTR) {
		struct emu_rc_attr old = qp->attr;

		qp->attr = merged;
		ret = qp_path(qp);	/* may drop and retake emu.lock */
		if (ret) {
			qp->attr = old;
			return ret;
		}
		qp->epsn = merged.rq_psn;
	}
	qp->attr = merged;
	qp->attr.state = to;
	if (to == EMU_RC_RESET) {
		qp_reset(qp);
	} else if (to == EMU_RC_RTS && qp->state == EMU_RC_RTR) {
		rc_req_reset(qp);
		qp->next_psn = qp->una = qp->sent_end = merged.sq_psn;
		qp->acked = roce_psn_add(merged.sq_psn, ROCE_PSN_MASK);
		qp->retry_left = merged.retry_cnt;
		qp->rnr_left = merged.rnr_retry;
	}
	if (to == EMU_RC_ERR) {
		rc_qp_fatal(qp, -1);
		return 0;
	}
	qp->state = to;
	if (to == EMU_RC_RTS)
		rc_schedule(qp);
	return 0;
}

enum emu_rc_state emu_rc_qp_hw_state(const struct emu_rc_qp_hw *qp)
{
	return qp->state;
}

void emu_rc_set_event_handler(struct emu_rc_qp_hw *qp, emu_rc_qp_event_fn fn,
			      void *kernel_qp)
{
	qp->event_fn = fn;
	qp->event_arg = kernel_qp;
}

static void qp_retire(const struct emu_rc_qp_hw *qp)
{
	struct rc_retired *r;

	if (rc.nretired >= RETIRED_MAX)
		return;
	r = realloc(rc.retired, (rc.nretired + 1) * sizeof(*r));
	if (!r)
		return;
	rc.retired = r;
	r[rc.nretired].qpn = qp->qpn;
	r[rc.nretired++].st = qp->st;
}

/* ---- quiet doorbells ------------------------------------------------------------ */

/*
 * A requester with unacknowledged requests in flight is woken by their
 * ACK (or its timer) anyway: a doorbell rung meanwhile waits for that
 * round (trap_set_quiet_hook()), where it goes out with the others rung
 * since.  Without it every doorbell of a streaming sender (perftest's
 * one WR per post) woke the device, which then sent one message per round
 * trip while the application it preempted waited.  A QP whose slot is
 * taken (another QP's, by hash) stays loud.
 */
#define QUIET_SLOTS 1024
static _Atomic uint32_t quiet_sq[QUIET_SLOTS];	/* an SQ id + 1, or 0 */
static unsigned int nquiet;

static _Atomic uint32_t *quiet_slot(uint32_t sq_id)
{
	return &quiet_sq[(sq_id >> 2) % QUIET_SLOTS];
}

static void sq_quiet_set(struct emu_rc_qp_hw *qp, bool on)
{
	uint32_t id = qp->q[EMU_RC_SQ_REQUESTER].id, empty = 0;

	if (on == qp->sq_quiet)
		return;
	if (!on) {
		atomic_store(quiet_slot(id), 0);
		nquiet--;
	} else if (atomic_compare_exchange_strong(quiet_slot(id), &empty,
						  id + 1)) {
		nquiet++;
	} else {
		return;
	}
	qp->sq_quiet = on;
}

/* Async-signal-safe (the trap handler): a quiet SQ's doorbell? */
bool emu_rc_sq_quiet(uint32_t sq_id)
{
	return atomic_load_explicit(quiet_slot(sq_id), memory_order_relaxed) ==
	       sq_id + 1;
}

void emu_rc_qp_hw_destroy(struct emu_rc_qp_hw *qp)
{
	struct emu_rc_qp_hw **pp;

	for (pp = &rc.list; *pp; pp = &(*pp)->next)
		if (*pp == qp) {
			*pp = qp->next;
			break;
		}
	for (pp = &rc.hash[qp->qpn % QP_HASH]; *pp; pp = &(*pp)->hash_next)
		if (*pp == qp) {
			*pp = qp->hash_next;
			break;
		}
	emu_rc_nqps--;
	sq_quiet_set(qp, false);
	emu_vm_qid_free(EMU_VM_QID_RC, (qp->qpn - RECV_BASE) / 4);
	qp_retire(qp);
	free(qp->msgs);
	free(qp);
}

/* ---- doorbells ------------------------------------------------------------------ */

/* The same acceptance rule as the raw queues' (device.c wq_doorbell). */
static void ring_tail(struct emu_rc_qp_hw *qp, struct rc_ring *r,
		      uint32_t tail)
{
	if (tail == r->tail)
		return;
	if (tail % GDMA_WQE_BU_SIZE || tail - r->tail > r->size ||
	    tail - r->head > r->size) {
		qp->st.errors++;
		return;
	}
	r->tail = tail;
}

bool emu_rc_doorbell(struct emu_ucontext *ctx, unsigned int kind,
		     uint64_t value)
{
	struct gdma_doorbell db;
	struct emu_rc_qp_hw *qp;

	if (!emu_rc_nqps || (kind != GDMA_DB_SQ && kind != GDMA_DB_RQ &&
			 kind != GDMA_DB_RQ_CLIENT))
		return false;
	if (gdma_doorbell_decode(kind, value, &db))
		return false;
	qp = qp_by_queue_id(db.id);
	if (!qp || qp->ctx != ctx)
		return false;
	if (kind == GDMA_DB_SQ && db.id == qp->q[EMU_RC_SQ_REQUESTER].id) {
		ring_tail(qp, &qp->q[EMU_RC_SQ_REQUESTER], db.tail);
		rc_schedule(qp);
	} else if (kind == GDMA_DB_RQ &&
		   db.id == qp->q[EMU_RC_RQ_RESPONDER].id) {
		ring_tail(qp, &qp->q[EMU_RC_RQ_RESPONDER], db.tail);
	} else if (kind == GDMA_DB_RQ &&
		   db.id == qp->q[EMU_RC_RQ_REQUESTER].id) {
		ring_tail(qp, &qp->q[EMU_RC_RQ_REQUESTER], db.tail);
	} else if (kind == GDMA_DB_RQ_CLIENT &&
		   db.id == qp->q[EMU_RC_RQ_REQUESTER].id) {
		rc_req_arm(qp, db.client_low & ROCE_PSN_MASK);
	} else {
		qp->st.errors++;	/* a queue of ours, the wrong doorbell */
	}
	return true;
}

/* ---- forged packets (security tests) ----------------------------------------- */

EMU_EXPORT int mana_emu_rc_forge(uint32_t qpn, const struct mana_emu_rc_pkt *in)
{
	struct emu_rc_qp_hw *qp;
	struct roce_pkt p = {
		.opcode = in->opcode,
		.ack_req = !!in->ack_req,
		.syndrome = in->syndrome,
		.psn = in->psn & ROCE_PSN_MASK,
		.msn = in->msn & ROCE_PSN_MASK,
		.va = in->va,
		.rkey = in->rkey,
		.dma_len = in->dma_len,
		.imm = in->imm,
		.payload = in->payload,
		.payload_len = in->payload_len,
	};
	uint64_t errors;
	int ret = -ENOENT;

	pthread_mutex_lock(&emu.lock);
	qp = emu_rc_nqps ? rc_qp_by_qpn(qpn) : NULL;
	if (qp && qp->mtu) {
		errors = qp->st.errors;
		rc_send_pkt(qp, &p);
		ret = qp->st.errors == errors ? 0 : -EINVAL;
		if (!ret)
			wire_flush_held();
	}
	pthread_mutex_unlock(&emu.lock);
	return ret;
}

/* ---- frames in ------------------------------------------------------------------- */

bool emu_rc_rx(unsigned int port, const uint8_t *f, size_t len)
{
	struct emu_rc_qp_hw *qp;
	struct roce_pkt p;

	if (!emu_rc_nqps && !emu_gsi_active && !emu_ip_neigh_active)
		return false;
	if (!roce_frame_is_roce(f, len))
		return rc_neigh_rx(port, f, len);
	/*
	 * Only a valid packet for one of our QPs is the RNIC's: other UDP to
	 * 4791 (raw-queue traffic, DPDK tests) stays on the Ethernet path.
	 */
	if (roce_decode(f, len, &p))
		return false;
	/* UD: only QP1's management datagrams (the kernel CM's) */
	if (roce_opcode_flags(p.opcode) & ROCE_F_DETH)
		return gsi_rx(port, &p);
	qp = rc_qp_by_qpn(p.dqpn);
	if (!qp || qp->port != port)
		return false;
	if (qp->state == EMU_RC_RESET || qp->state == EMU_RC_INIT ||
	    qp->state == EMU_RC_ERR)
		return true;
	qp->st.rx_packets++;
	/* a transport the QP does not speak: dropped (IBA 9.6.1.5.x) */
	if (!(roce_opcode_flags(p.opcode) & ROCE_F_UC) != !qp->uc) {
		qp->st.bad_packets++;
		return true;
	}
	if (qp->uc)
		uc_resp_rx(qp, &p);
	else if (p.opcode == ROCE_ACK ||
		 (roce_opcode_flags(p.opcode) & ROCE_F_READ_RESP))
		rc_req_rx(qp, &p);
	else
		rc_resp_rx(qp, &p);
	return true;
}

/* ---- rounds and timers -------------------------------------------------------------- */

unsigned int emu_rc_work(void)
{
	struct emu_rc_qp_hw *qp;
	unsigned int n = 0;
	uint64_t now;

	if (!emu_rc_nqps)
		return 0;
	now = rc_now_ns();
	for (qp = rc.list; qp; qp = qp->next) {
		if (qp->timer_ns && now >= qp->timer_ns)
			rc_req_timer(qp);
		if (qp->listed || qp->state == EMU_RC_RTS ||
		    qp->state == EMU_RC_SQD)
			n += rc_req_work(qp);
		if (qp->ack_due)
			rc_resp_flush_ack(qp);
	}
	wire_flush_held();
	return n;
}

int emu_rc_sleep_ms(int max_ms)
{
	struct emu_rc_qp_hw *qp;
	uint64_t now, next = 0;

	if (!emu_rc_nqps)
		return max_ms;
	for (qp = rc.list; qp; qp = qp->next) {
		sq_quiet_set(qp, rc_req_awaits_ack(qp));
		if (qp->timer_ns && (!next || qp->timer_ns < next))
			next = qp->timer_ns;
	}
	/* quiet doorbells wait at most a millisecond, an ACK lost or not */
	if (nquiet && max_ms > 1)
		max_ms = 1;
	if (!next)
		return max_ms;
	now = rc_now_ns();
	if (next <= now)
		return 0;
	next = (next - now + 999999) / 1000000;
	return next < (uint64_t)max_ms ? (int)next : max_ms;
}

/* ---- statistics --------------------------------------------------------------------- */

static void stat_line(emu_rc_line_fn out, void *arg, uint32_t qpn,
		      const struct rc_stats *s)
{
	char line[256];

	snprintf(line, sizeof(line),
		 "rcqp %u %llu %llu %llu %llu %llu %llu %llu %llu %llu", qpn,
		 (unsigned long long)s->tx_packets,
		 (unsigned long long)s->rx_packets,
		 (unsigned long long)s->retransmits,
		 (unsigned long long)s->rnr_naks_rx,
		 (unsigned long long)s->rnr_naks_tx,
		 (unsigned long long)s->seq_naks_rx,
		 (unsigned long long)s->seq_naks_tx,
		 (unsigned long long)s->errors,
		 (unsigned long long)s->bad_packets);
	out(arg, line);
}

void emu_rc_stats(emu_rc_line_fn out, void *arg)
{
	struct emu_rc_qp_hw *qp;
	char line[160];
	size_t i;

	if (!rc.nretired && !rc.list && !rc.roce_tx)
		return;
	out(arg, "# rcqp qpn tx_packets rx_packets retransmits rnr_naks_rx "
		 "rnr_naks_tx seq_naks_rx seq_naks_tx errors bad_packets");
	for (i = 0; i < rc.nretired; i++)
		stat_line(out, arg, rc.retired[i].qpn, &rc.retired[i].st);
	for (qp = rc.list; qp; qp = qp->next)
		stat_line(out, arg, qp->qpn, &qp->st);
	out(arg, "# roce packets_sent fault_dropped fault_reordered");
	snprintf(line, sizeof(line), "roce %llu %llu %llu",
		 (unsigned long long)rc.roce_tx,
		 (unsigned long long)rc.dropped,
		 (unsigned long long)rc.reordered);
	out(arg, line);
}
