// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RC datapath cost on the emulated RNIC, one process: two RC QPs on port 1
 * connected to each other over the loopback wire (run under
 * `mana-emu --netdev-up --ip=ADDR/LEN`).  QP A is the requester, QP B the
 * responder; each has its own CQ.  64-byte operations in bursts of 32, the
 * last of each burst signaled:
 *
 *   wv  RDMA WRITE,  ibv_post_send + ibv_poll_cq
 *   sv  SEND + RECV, ibv_post_recv + ibv_post_send + ibv_poll_cq
 *   wx  RDMA WRITE,  ibv_wr_* + ibv_start_poll
 *   sx  SEND + RECV, ibv_post_recv + ibv_wr_* + ibv_start_poll
 *
 * --callgrind: a fixed number of bursts per mode, the device drained
 * between posting and polling, a callgrind dump per mode ("rc-MODE");
 * bench/run.sh collects only the *_post and *_poll functions below (the
 * trap's entry turns collection off) and divides by the operation count.
 * default: operations/s and MB/s per mode, device running freely.
 * Every received byte is checked in both runs.
 *
 *   wf  RDMA WRITE, the floor: ibv_post_send + ibv_poll_cq reach
 *       floor_post_send()/floor_poll_cq() below instead of the provider's
 *   sf  SEND + RECV, the floor, with floor_post_recv()
 *
 * The floor is a minimal honest RC datapath for exactly this workload
 * (one SGE, SEND or WRITE, one QP per CQ, one thread), installed in the
 * context's ops behind the same libibverbs inline wrappers: it builds the
 * same WQEs, keeps the same shadow records and PSNs, rings the same
 * doorbells (SQ, RQ, arm) and fills the same work completions as the
 * provider, on the provider's own queues, but checks nothing, takes no
 * lock and handles no other case.  What the provider costs beyond it is
 * the price of its checks and generality.  It needs this tree's libmana
 * (its private QP and CQ layout): --modes= picks modes for another one.
 */
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <valgrind/callgrind.h>

#include "providers/mana/rc.h"

#define BURST 32
#define DEPTH 128		/* send and receive queue depth, > 2 bursts */
#define SLOT 4096		/* buffer slot per operation of a burst */
#define BUF_SIZE (2 * BURST * SLOT)	/* source half, destination half */

static uint32_t MSG = 64;	/* --size= */

struct bench {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq[2];		/* A's (requester), B's (responder) */
	struct ibv_cq_ex *cqx[2];
	struct ibv_qp *qp[2];
	struct ibv_qp_ex *qpx;		/* A's, for ibv_wr_* */
	uint8_t *buf;
	struct ibv_mr *mr;
	union ibv_gid gid;
	int gid_index;
	enum ibv_mtu mtu;
	bool ex;
	/* prebuilt work requests of one burst */
	struct ibv_sge ssge[BURST], rsge[BURST];
	struct ibv_send_wr swr[BURST];
	struct ibv_recv_wr rwr[BURST];
	uint64_t ops, errors, polls, seq;
};

static int (*emu_quiesce)(int timeout_ms);

static uint8_t *src_buf(struct bench *b, unsigned int k)
{
	return b->buf + (size_t)k * SLOT;
}

static uint8_t *dst_buf(struct bench *b, unsigned int k)
{
	return b->buf + (size_t)(BURST + k) * SLOT;
}

/* ---- setup --------------------------------------------------------------- */

static struct ibv_context *open_rnic(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	/* mana_0 serves RC in both eras (single: everything; split: the RNIC) */
	for (i = 0; i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "mana_0"))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

/* The port's first IPv4 RoCE v2 GID (::ffff:a.b.c.d); -1 if none. */
static int find_gid(struct bench *b)
{
	struct ibv_port_attr pa;
	int i;

	if (ibv_query_port(b->ctx, 1, &pa))
		return -1;
	b->mtu = pa.active_mtu;
	for (i = 0; i < pa.gid_tbl_len; i++) {
		if (ibv_query_gid(b->ctx, 1, i, &b->gid))
			continue;
		if (b->gid.raw[10] == 0xff && b->gid.raw[11] == 0xff)
			return i;
	}
	return -1;
}

static struct ibv_cq *make_cq(struct bench *b, int i)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 4 * DEPTH,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN,
	};

	if (!b->ex)
		return ibv_create_cq(b->ctx, 4 * DEPTH, NULL, NULL, 0);
	b->cqx[i] = ibv_create_cq_ex(b->ctx, &ca);
	return b->cqx[i] ? ibv_cq_ex_to_cq(b->cqx[i]) : NULL;
}

static struct ibv_qp *make_qp(struct bench *b, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = b->pd,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	if (b->ex) {
		qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		qa.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE;
	}
	return ibv_create_qp_ex(b->ctx, &qa);
}

static int connect_qp(struct bench *b, struct ibv_qp *qp, uint32_t dqpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	};
	int ret;

	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = b->mtu;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = b->gid;
	a.ah_attr.grh.sgid_index = (uint8_t)b->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static void teardown(struct bench *b)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (b->qp[i])
			ibv_destroy_qp(b->qp[i]);
		if (b->cq[i])
			ibv_destroy_cq(b->cq[i]);
	}
	if (b->mr)
		ibv_dereg_mr(b->mr);
	free(b->buf);
	if (b->pd)
		ibv_dealloc_pd(b->pd);
	if (b->ctx)
		ibv_close_device(b->ctx);
}

/* The work requests of one burst: operation k from slot k to slot k. */
static void prepare(struct bench *b, enum ibv_wr_opcode op)
{
	uint32_t lkey = b->mr->lkey;
	unsigned int k;

	for (k = 0; k < BURST; k++) {
		b->ssge[k] = (struct ibv_sge){ (uintptr_t)src_buf(b, k), MSG, lkey };
		b->rsge[k] = (struct ibv_sge){ (uintptr_t)dst_buf(b, k), SLOT, lkey };
		b->swr[k] = (struct ibv_send_wr){
			.wr_id = k, .sg_list = &b->ssge[k], .num_sge = 1,
			.opcode = op,
			.send_flags = k + 1 == BURST ? IBV_SEND_SIGNALED : 0,
			.next = k + 1 < BURST ? &b->swr[k + 1] : NULL,
			.wr.rdma = { (uintptr_t)dst_buf(b, k), b->mr->rkey },
		};
		b->rwr[k] = (struct ibv_recv_wr){
			.wr_id = k, .sg_list = &b->rsge[k], .num_sge = 1,
			.next = k + 1 < BURST ? &b->rwr[k + 1] : NULL,
		};
	}
}

static int setup(struct bench *b, bool ex, enum ibv_wr_opcode op)
{
	int i;

	memset(b, 0, sizeof(*b));
	b->ex = ex;
	b->ctx = open_rnic();
	if (!b->ctx) {
		fprintf(stderr, "bench_rc: no mana_0 device (run under mana-emu)\n");
		return -1;
	}
	b->gid_index = find_gid(b);
	if (b->gid_index < 0) {
		fprintf(stderr, "bench_rc: no IPv4 RoCE GID on port 1 (mana-emu --ip=)\n");
		goto err;
	}
	b->pd = ibv_alloc_pd(b->ctx);
	b->buf = aligned_alloc(4096, BUF_SIZE);
	if (!b->pd || !b->buf)
		goto err;
	memset(b->buf, 0, BUF_SIZE);
	b->mr = ibv_reg_mr(b->pd, b->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE);
	if (!b->mr)
		goto err;
	for (i = 0; i < 2; i++) {
		b->cq[i] = make_cq(b, i);
		b->qp[i] = b->cq[i] ? make_qp(b, b->cq[i]) : NULL;
		if (!b->qp[i])
			goto err;
	}
	if (connect_qp(b, b->qp[0], b->qp[1]->qp_num) ||
	    connect_qp(b, b->qp[1], b->qp[0]->qp_num))
		goto err;
	if (ex)
		b->qpx = ibv_qp_to_qp_ex(b->qp[0]);
	prepare(b, op);
	return 0;
err:
	fprintf(stderr, "bench_rc: setup failed: %s\n", strerror(errno));
	teardown(b);
	return -1;
}

/* ---- the measured functions ------------------------------------------------ */

/* classic verbs: one chained post of 32 WRITEs */
__attribute__((noinline)) static void wv_post(struct bench *b)
{
	struct ibv_send_wr *bad;

	if (ibv_post_send(b->qp[0], b->swr, &bad))
		b->errors++;
}

/* the requester's one completion per burst; 1 if it came */
static inline int req_poll(struct bench *b)
{
	struct ibv_wc wc;
	int n;

	n = ibv_poll_cq(b->cq[0], 1, &wc);
	if (n < 0 || (n == 1 && wc.status != IBV_WC_SUCCESS))
		b->errors++;
	return n == 1;
}

__attribute__((noinline)) static int wv_poll(struct bench *b)
{
	return req_poll(b);
}

__attribute__((noinline)) static void sv_post(struct bench *b)
{
	struct ibv_recv_wr *rbad;
	struct ibv_send_wr *sbad;

	if (ibv_post_recv(b->qp[1], b->rwr, &rbad) ||
	    ibv_post_send(b->qp[0], b->swr, &sbad))
		b->errors++;
}

/* the responder's receives, then the requester's completion */
__attribute__((noinline)) static int sv_poll(struct bench *b, int *recvs)
{
	struct ibv_wc wc[BURST];
	int n, k;

	n = ibv_poll_cq(b->cq[1], BURST, wc);
	for (k = 0; k < n; k++)
		if (wc[k].status != IBV_WC_SUCCESS || wc[k].byte_len != MSG ||
		    wc[k].opcode != IBV_WC_RECV)
			b->errors++;
	*recvs += n > 0 ? n : 0;
	/*
	 * Not wv_poll(): callgrind's --toggle-collect flips collection on
	 * entering each listed function, so a listed function called from
	 * another would not be counted (the requester's poll was missing
	 * from sv and sf before).
	 */
	return req_poll(b);
}

/* ibv_wr_*: one wr_start..wr_complete of 32 WRITEs */
__attribute__((noinline)) static void wx_post(struct bench *b)
{
	struct ibv_qp_ex *x = b->qpx;
	unsigned int k;

	ibv_wr_start(x);
	for (k = 0; k < BURST; k++) {
		x->wr_id = k;
		x->wr_flags = b->swr[k].send_flags;
		ibv_wr_rdma_write(x, b->mr->rkey, b->swr[k].wr.rdma.remote_addr);
		ibv_wr_set_sge(x, b->mr->lkey, b->ssge[k].addr, MSG);
	}
	if (ibv_wr_complete(x))
		b->errors++;
}

static int x_drain(struct bench *b, int i, bool recv)
{
	struct ibv_poll_cq_attr attr = { 0 };
	struct ibv_cq_ex *cq = b->cqx[i];
	int got = 0;

	if (ibv_start_poll(cq, &attr))
		return 0;
	do {
		if (cq->status != IBV_WC_SUCCESS ||
		    (recv && ibv_wc_read_byte_len(cq) != MSG))
			b->errors++;
		got++;
	} while (ibv_next_poll(cq) == 0);
	ibv_end_poll(cq);
	return got;
}

__attribute__((noinline)) static int wx_poll(struct bench *b)
{
	return x_drain(b, 0, false);
}

__attribute__((noinline)) static void sx_post(struct bench *b)
{
	struct ibv_qp_ex *x = b->qpx;
	struct ibv_recv_wr *rbad;
	unsigned int k;

	if (ibv_post_recv(b->qp[1], b->rwr, &rbad))
		b->errors++;
	ibv_wr_start(x);
	for (k = 0; k < BURST; k++) {
		x->wr_id = k;
		x->wr_flags = b->swr[k].send_flags;
		ibv_wr_send(x);
		ibv_wr_set_sge(x, b->mr->lkey, b->ssge[k].addr, MSG);
	}
	if (ibv_wr_complete(x))
		b->errors++;
}

__attribute__((noinline)) static int sx_poll(struct bench *b, int *recvs)
{
	*recvs += x_drain(b, 1, true);
	return x_drain(b, 0, false);
}

/* ---- the floor -------------------------------------------------------------- */

static int floor_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad)
{
	struct mana_rc_qp *qp = to_mrcqp(ibqp);
	struct mana_rc_queue *sq = &qp->q[MANA_RC_SEND_QUEUE_REQUESTER];
	uint32_t head = qp->sq_head, psn = qp->sq_psn, ssn = qp->ssn;
	uint32_t arm_psn = 0, shift = __builtin_ctz(qp->mtu);
	bool arm = false;
	int ret = 0;

	for (; wr; wr = wr->next) {
		uint32_t off = (sq->prod_bu * GDMA_WQE_BU_SIZE) & (sq->ring_size - 1);
		uint64_t *w = (uint64_t *)((uint8_t *)sq->buf.addr + off);
		bool write = wr->opcode == IBV_WR_RDMA_WRITE;
		uint32_t len = wr->sg_list->length, sig = !!(wr->send_flags & IBV_SEND_SIGNALED);
		uint32_t end = (psn + (len ? (len - 1) >> shift : 0)) & MANA_RC_PSN_MASK;
		struct mana_rc_swr *e = &qp->swr[head & qp->swr_mask];

		/* room in the SQ, and a 2-unit WQE never wraps an even producer */
		if (head - qp->sq_tail >= qp->max_send_wr || (sq->prod_bu & 1)) {
			*bad = wr;
			ret = ENOMEM;
			break;
		}
		w[0] = 1 | (uint64_t)(2u | 6u << 8 | qp->mtu << 16 | (uint32_t)!write << 30) << 32;
		w[1] = (write ? MANA_WQE_WRITE : MANA_WQE_RC_SEND) | sig << 6 | psn << 8 |
		       (uint64_t)ssn << 32;
		w[2] = write ? wr->wr.rdma.remote_addr >> 32 | wr->wr.rdma.remote_addr << 32 : 0;
		w[3] = write ? wr->wr.rdma.rkey | (uint64_t)len << 32 : 0;
		w[4] = wr->sg_list->addr;
		w[5] = wr->sg_list->lkey | (uint64_t)len << 32;
		w[6] = w[7] = 0;
		e->wr_id = wr->wr_id;
		e->end_psn = end;
		e->byte_len = len;
		e->size_bu = 2;
		e->rreq_bu = 0;
		e->opcode = write ? IBV_WC_RDMA_WRITE : IBV_WC_SEND;
		e->signaled = sig;
		if (sig && !qp->armed && !arm) {
			arm = true;
			arm_psn = end;
		}
		psn = (end + 1) & MANA_RC_PSN_MASK;
		ssn = (ssn + 1) & MANA_RC_PSN_MASK;
		sq->prod_bu += 2;
		head++;
	}
	qp->sq_psn = psn;
	qp->ssn = ssn;
	__atomic_store_n(&qp->sq_head, head, __ATOMIC_RELEASE);
	atomic_store_explicit(&qp->rollback->right, sq->prod_bu * GDMA_WQE_BU_SIZE,
			      memory_order_relaxed);
	mana_ring_doorbell(qp->db_page, GDMA_DB_OFF_SQ,
			   sq->id | (uint64_t)(sq->prod_bu * GDMA_WQE_BU_SIZE) << 32);
	if (arm) {
		qp->armed = true;
		mana_ring_doorbell(qp->db_page, GDMA_DB_OFF_RQ_CLIENT,
				   qp->q[MANA_RC_RECV_QUEUE_REQUESTER].id | 1u << 24 |
				   (uint64_t)arm_psn << 32);
	}
	return ret;
}

static int floor_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad)
{
	struct mana_rc_qp *qp = to_mrcqp(ibqp);
	struct mana_rc_queue *rq = &qp->q[MANA_RC_RECV_QUEUE_RESPONDER];
	uint32_t head = qp->rq_head, count = 0;
	int ret = 0;

	for (; wr; wr = wr->next) {
		uint64_t *w = (uint64_t *)((uint8_t *)rq->buf.addr +
					   ((rq->prod_bu * GDMA_WQE_BU_SIZE) & (rq->ring_size - 1)));
		struct mana_rc_rwr *e = &qp->rwr[head & qp->rwr_mask];

		if (head - qp->rq_tail >= qp->max_recv_wr) {
			*bad = wr;
			ret = ENOMEM;
			break;
		}
		w[0] = (uint64_t)(1u | 2u << 8) << 32;
		w[1] = 0;
		w[2] = wr->sg_list->addr;
		w[3] = wr->sg_list->lkey | (uint64_t)wr->sg_list->length << 32;
		e->wr_id = wr->wr_id;
		e->start_bu = rq->prod_bu++;
		e->size_bu = 1;
		head++;
		count++;
	}
	__atomic_store_n(&qp->rq_head, head, __ATOMIC_RELEASE);
	mana_ring_doorbell(qp->db_page, GDMA_DB_OFF_RQ, rq->id | (uint64_t)count << 24 |
			   (uint64_t)(rq->prod_bu * GDMA_WQE_BU_SIZE) << 32);
	return ret;
}

static int floor_poll_cq(struct ibv_cq *ibcq, int num, struct ibv_wc *wc)
{
	const uint32_t all = GDMA_OWNER_MASK << GDMA_CQE_OWNER_SHIFT;
	struct mana_cq *cq = to_mcq(ibcq);
	struct mana_rc_qp *sqp = cq->rc_send_qps, *rqp = cq->rc_recv_qps;
	int n = 0;

	while (n < num) {
		/* send completions the last ARMED_CMPL made due */
		if (cq->rc_due) {
			struct mana_rc_queue *sq = &sqp->q[MANA_RC_SEND_QUEUE_REQUESTER];
			uint32_t tail = sqp->sq_tail, cons = sq->cons_bu;
			const struct mana_rc_swr *e = NULL;

			for (; tail != sqp->sq_head; tail++) {
				e = &sqp->swr[tail & sqp->swr_mask];
				if (!mana_rc_psn_le(e->end_psn, sqp->acked_psn))
					break;
				cons += e->size_bu;
				if (e->signaled)
					break;
			}
			if (tail != sqp->sq_head && e->signaled &&
			    mana_rc_psn_le(e->end_psn, sqp->acked_psn)) {
				memset(&wc[n], 0, sizeof(wc[n]));
				wc[n].wr_id = e->wr_id;
				wc[n].opcode = e->opcode;
				wc[n].byte_len = e->byte_len;
				wc[n].qp_num = sqp->qp.vqp.qp.qp_num;
				n++;
				tail++;
			} else {
				cq->rc_due = false;
			}
			sq->cons_bu = cons;
			atomic_store_explicit(&sqp->rollback->left, cons * GDMA_WQE_BU_SIZE,
					      memory_order_relaxed);
			__atomic_store_n(&sqp->sq_tail, tail, __ATOMIC_RELEASE);
			continue;
		}
		const uint8_t *cqe = cq->next_cqe;
		uint32_t owner = cqe[GDMA_CQE_SIZE - 1] & all;
		uint32_t dw0, dw2;

		if (owner != cq->owner_bits)
			break;	/* empty (or overrun: not the floor's business) */
		atomic_thread_fence(memory_order_acquire);
		if (cqe + GDMA_CQE_SIZE == cq->end_cqe) {
			cq->next_cqe = cq->buf.addr;
			cq->lap++;
			cq->owner_bits = (cq->lap & GDMA_OWNER_MASK) << GDMA_CQE_OWNER_SHIFT;
		} else {
			cq->next_cqe = cqe + GDMA_CQE_SIZE;
		}
		memcpy(&dw0, cqe, 4);
		memcpy(&dw2, cqe + 8, 4);
		if ((uint8_t)dw0 == MANA_RDMA_CQE_ARMED_CMPL) {
			sqp->acked_psn = dw2 & MANA_RC_PSN_MASK;
			sqp->armed = false;	/* one signaled WR per post list here */
			cq->rc_due = true;
		} else {	/* MANA_RDMA_CQE_RC_SEND */
			const struct mana_rc_rwr *e = &rqp->rwr[rqp->rq_tail & rqp->rwr_mask];

			memset(&wc[n], 0, sizeof(wc[n]));
			wc[n].wr_id = e->wr_id;
			wc[n].opcode = IBV_WC_RECV;
			memcpy(&wc[n].byte_len, cqe + 4, 4);
			wc[n].qp_num = rqp->qp.vqp.qp.qp_num;
			wc[n].src_qp = rqp->attr.dest_qp_num;
			n++;
			rqp->q[MANA_RC_RECV_QUEUE_RESPONDER].cons_bu = e->start_bu + e->size_bu;
			__atomic_store_n(&rqp->rq_tail, rqp->rq_tail + 1, __ATOMIC_RELEASE);
		}
	}
	/* the device hears the consumer every few laps */
	if (cq->lap - cq->rang_lap >= 4) {
		uint32_t index = cq->lap * cq->count +
			(uint32_t)((cq->next_cqe - (const uint8_t *)cq->buf.addr) / GDMA_CQE_SIZE);

		mana_ring_doorbell(to_mctx(ibcq->context)->db_page, GDMA_DB_OFF_CQ,
				   cq->cqid | (uint64_t)(index % (cq->count << 3)) << 32);
		cq->rang_lap = cq->lap;
	}
	return n;
}

/* ---- driver ---------------------------------------------------------------- */

struct mode {
	const char *name, *what;
	bool ex, send, floor;
};

static const struct mode modes[] = {
	{ "wv", "RDMA WRITE, ibv_post_send + ibv_poll_cq", false, false, false },
	{ "sv", "SEND+RECV, ibv_post_recv/send + ibv_poll_cq", false, true, false },
	{ "wx", "RDMA WRITE, ibv_wr_* + ibv_start_poll", true, false, false },
	{ "sx", "SEND+RECV, ibv_post_recv + ibv_wr_* + ibv_start_poll", true, true, false },
	{ "wf", "RDMA WRITE, the floor behind ibv_post_send + ibv_poll_cq", false, false, true },
	{ "sf", "SEND+RECV, the floor behind ibv_post_recv/send + ibv_poll_cq", false, true, true },
};

/* The floor's functions in the context's ops (the QPs and CQs are ours). */
static void use_floor(struct bench *b)
{
	b->ctx->ops.post_send = floor_post_send;
	b->ctx->ops.post_recv = floor_post_recv;
	b->ctx->ops.poll_cq = floor_poll_cq;
}

/* Stamp the sources of the next burst: every byte tells its burst. */
static void stamp(struct bench *b)
{
	unsigned int k;

	b->seq++;
	for (k = 0; k < BURST; k++)
		memset(src_buf(b, k), (int)(b->seq * 31 + k) & 0xff, MSG);
}

static void verify(struct bench *b)
{
	unsigned int k;

	for (k = 0; k < BURST; k++)
		if (memcmp(src_buf(b, k), dst_buf(b, k), MSG))
			b->errors++;
}

static void post(struct bench *b, const struct mode *m)
{
	if (!m->ex)
		m->send ? sv_post(b) : wv_post(b);
	else
		m->send ? sx_post(b) : wx_post(b);
}

/* Polls once; the requester's completion and the receives so far. */
static int poll_once(struct bench *b, const struct mode *m, int *recvs)
{
	b->polls++;
	if (!m->ex)
		return m->send ? sv_poll(b, recvs) : wv_poll(b);
	return m->send ? sx_poll(b, recvs) : wx_poll(b);
}

/*
 * One burst, whole: post, then poll until the requester's completion (and
 * for SEND all 32 receives) is in.  With @drain the device is drained
 * before each poll, so a profile counts as few empty polls as it can.  A
 * bound of polls keeps a broken device from hanging the bench.
 */
static int burst(struct bench *b, const struct mode *m, bool drain)
{
	int done = 0, recvs = 0, want = m->send ? BURST : 0;
	unsigned long tries;

	stamp(b);
	post(b, m);
	for (tries = 0; tries < 10000000 && (!done || recvs < want); tries++) {
		if (drain)
			emu_quiesce(1000);
		done += poll_once(b, m, &recvs);
		if (!done || recvs < want) {
			if (drain && tries > 1000)
				return -1;
			if (!drain && tries % 64 == 63)
				sched_yield();
		}
	}
	if (!done || recvs != want)
		return -1;
	verify(b);
	b->ops += BURST;
	return 0;
}

static int profile(const struct mode *m, unsigned int bursts)
{
	enum ibv_wr_opcode op = m->send ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;
	struct bench b;
	unsigned int i;
	char name[16];
	int ret = 0;

	if (setup(&b, m->ex, op))
		return 1;
	if (m->floor)
		use_floor(&b);
	for (i = 0; i < 4 && !ret; i++)	/* warm up: first laps of the rings */
		ret = burst(&b, m, true);
	b.ops = b.polls = 0;
	CALLGRIND_ZERO_STATS;
	for (i = 0; i < bursts && !ret; i++)
		ret = burst(&b, m, true);
	snprintf(name, sizeof(name), "rc-%s", m->name);
	CALLGRIND_DUMP_STATS_AT(name);
	printf("profile rc-%s: %llu ops, %llu errors, %.3f polls/burst (%s)\n",
	       m->name, (unsigned long long)b.ops, (unsigned long long)b.errors,
	       bursts ? (double)b.polls / bursts : 0, m->what);
	teardown(&b);
	if (ret)
		fprintf(stderr, "bench_rc: rc-%s: a burst did not complete\n", m->name);
	return ret || b.errors || b.ops != (uint64_t)bursts * BURST;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Free-running bursts for @secs: operations/s, 0 on an error. */
static double throughput(const struct mode *m, double secs)
{
	enum ibv_wr_opcode op = m->send ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;
	double start, elapsed;
	struct bench b;
	int ret = 0;

	if (setup(&b, m->ex, op))
		return 0;
	if (m->floor)
		use_floor(&b);
	start = now();
	do {
		ret = burst(&b, m, false);
		elapsed = now() - start;
	} while (!ret && !b.errors && elapsed < secs);
	teardown(&b);
	if (ret || b.errors) {
		fprintf(stderr, "bench_rc: rc-%s: %llu errors%s\n", m->name,
			(unsigned long long)b.errors, ret ? ", a burst did not complete" : "");
		return 0;
	}
	return b.ops / elapsed;
}

/* Is @m in the comma-separated list @only (NULL: every mode)? */
static bool wanted(const struct mode *m, const char *only)
{
	size_t n = strlen(m->name);
	const char *p;

	if (!only)
		return true;
	for (p = only; (p = strstr(p, m->name)); p += n)
		if ((p == only || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	unsigned int bursts = 1000, i;
	const char *only = NULL;
	bool callgrind = false;
	double secs = 2.0;
	int ret = 0, a;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--callgrind"))
			callgrind = true;
		else if (!strncmp(argv[a], "--size=", 7))
			MSG = (uint32_t)atoi(argv[a] + 7);
		else if (!strncmp(argv[a], "--bursts=", 9))
			bursts = (unsigned int)atoi(argv[a] + 9);
		else if (!strncmp(argv[a], "--seconds=", 10))
			secs = atof(argv[a] + 10);
		else if (!strncmp(argv[a], "--modes=", 8))
			only = argv[a] + 8;
		else {
			fprintf(stderr, "usage: bench_rc [--callgrind [--bursts=N]] "
				"[--size=BYTES] [--seconds=S] [--modes=wv,sv,wx,sx,wf,sf]\n");
			return 2;
		}
	}
	if (MSG < 1 || MSG > SLOT || !bursts || secs <= 0) {
		fprintf(stderr, "bench_rc: --size must be 1..%u, --bursts and "
			"--seconds positive\n", SLOT);
		return 2;
	}
	emu_quiesce = (typeof(emu_quiesce))dlsym(RTLD_DEFAULT, "mana_emu_quiesce");
	if (callgrind) {
		if (!emu_quiesce) {
			fprintf(stderr, "bench_rc: mana_emu_quiesce missing: run under mana-emu\n");
			return 1;
		}
		for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
			if (wanted(&modes[i], only))
				ret |= profile(&modes[i], bursts);
		return ret;
	}
	printf("%-4s %14s %10s  %s\n", "mode", "ops/s", "MB/s", "");
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		double r;

		if (!wanted(&modes[i], only))
			continue;
		r = throughput(&modes[i], secs);

		if (!r)
			ret = 1;
		printf("%-4s %14.0f %10.2f  %u B %s\n", modes[i].name, r,
		       r * MSG / 1e6, MSG, modes[i].what);
	}
	return ret;
}
