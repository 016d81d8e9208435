// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory windows and UC queue pairs through libibverbs and libmana, in one
 * process (run under mana-emu with --ip, and --kernel for the era):
 *
 *   test_verbs_uc mw       (7.1 on) ibv_alloc_mw of both types and
 *                          ibv_dealloc_mw; a WRITE through a window's rkey
 *                          (never bound: MANA has no bind) and through a
 *                          deallocated one gets IBV_WC_REM_ACCESS_ERR and
 *                          leaves memory untouched; REG_MR with MW_BIND;
 *                          ibv_bind_mw, IBV_WR_BIND_MW, a bad type
 *   test_verbs_uc mw_old   (before 7.1) ibv_alloc_mw EOPNOTSUPP, REG_MR with
 *                          MW_BIND EINVAL
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "check.h"
#include "emu_client.h"

#define BUF_SIZE (64u << 10)
#define DEPTH 32

struct side {
	struct ibv_cq *cq;
	struct ibv_cq_ex *cqx;
	struct ibv_qp *qp;
	uint8_t *buf;
	struct ibv_mr *mr;
};

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct side s[2];
	int gid_index;
	union ibv_gid gid;
	enum ibv_mtu mtu;
	enum ibv_qp_type type;
	bool ex;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Up to @want completions; the bound only keeps a broken build from hanging. */
static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, int want)
{
	double end = now() + 30;
	int got = 0, n;

	while (got < want && now() < end) {
		n = ibv_poll_cq(cq, want - got, wc + got);
		if (n < 0)
			return n;
		got += n;
		if (!n)
			usleep(50);
	}
	return got;
}

/* The RNIC: mana_0 (from 6.16 manae_0 is the Ethernet device) */
static struct ibv_context *open_rnic(void)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int i, n;

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "mana_0"))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

static int find_gid(struct env *e)
{
	struct ibv_port_attr pa;
	int i;

	if (ibv_query_port(e->ctx, 1, &pa))
		return -1;
	e->mtu = pa.active_mtu;
	for (i = 0; i < pa.gid_tbl_len; i++) {
		if (ibv_query_gid(e->ctx, 1, i, &e->gid))
			continue;
		if (e->gid.raw[10] == 0xff && e->gid.raw[11] == 0xff)
			return i;
	}
	return -1;
}

static struct ibv_qp *make_qp(struct env *e, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = e->type, .send_cq = cq, .recv_cq = cq,
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = e->pd,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 2, .max_recv_sge = 2 },
	};

	if (e->ex) {
		qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		qa.send_ops_flags = IBV_QP_EX_WITH_SEND |
				    IBV_QP_EX_WITH_SEND_WITH_IMM |
				    IBV_QP_EX_WITH_RDMA_WRITE |
				    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	}
	return ibv_create_qp_ex(e->ctx, &qa);
}

static int to_init(struct env *e, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	};

	if (e->type == IBV_QPT_RC)
		a.qp_access_flags |= IBV_ACCESS_REMOTE_READ;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* The attributes IBA's table for the QP type requires (UC: no rd/rnr). */
static int to_rtr(struct env *e, struct ibv_qp *qp, uint32_t dqpn, uint32_t psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = e->mtu,
		.dest_qp_num = dqpn, .rq_psn = psn, .max_dest_rd_atomic = 4,
		.min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = e->gid,
				      .sgid_index = (uint8_t)e->gid_index,
				      .hop_limit = 64 } },
	};
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

	if (e->type == IBV_QPT_RC)
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	return ibv_modify_qp(qp, &a, mask);
}

static int to_rts(struct env *e, struct ibv_qp *qp, uint32_t psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
		.rnr_retry = 7, .sq_psn = psn, .max_rd_atomic = 4,
	};
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (e->type == IBV_QPT_RC)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(qp, &a, mask);
}

static void env_close(struct env *e)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (e->s[i].qp)
			ibv_destroy_qp(e->s[i].qp);
		if (e->s[i].cq)
			ibv_destroy_cq(e->s[i].cq);
		if (e->s[i].mr)
			ibv_dereg_mr(e->s[i].mr);
		free(e->s[i].buf);
	}
	if (e->pd)
		ibv_dealloc_pd(e->pd);
	if (e->ctx)
		ibv_close_device(e->ctx);
	memset(e, 0, sizeof(*e));
}

/* Two QPs of @type connected to each other, a CQ and a buffer each. */
static int env_open(struct env *e, enum ibv_qp_type type, bool ex)
{
	int i;

	memset(e, 0, sizeof(*e));
	e->type = type;
	e->ex = ex;
	e->ctx = open_rnic();
	CHECK(e->ctx, "open the emulated mana device");
	if (!e->ctx)
		return -1;
	e->gid_index = find_gid(e);
	CHECK(e->gid_index >= 0, "a RoCE v2 IPv4 GID on port 1 (run with --ip)");
	e->pd = ibv_alloc_pd(e->ctx);
	CHECK(e->pd, "alloc_pd");
	if (e->gid_index < 0 || !e->pd)
		return -1;
	for (i = 0; i < 2; i++) {
		struct side *s = &e->s[i];

		if (ex) {
			struct ibv_cq_init_attr_ex ca = {
				.cqe = 4 * DEPTH,
				.wc_flags = IBV_WC_EX_WITH_BYTE_LEN |
					    IBV_WC_EX_WITH_IMM |
					    IBV_WC_EX_WITH_QP_NUM,
			};

			s->cqx = ibv_create_cq_ex(e->ctx, &ca);
			s->cq = s->cqx ? ibv_cq_ex_to_cq(s->cqx) : NULL;
		} else {
			s->cq = ibv_create_cq(e->ctx, 4 * DEPTH, NULL, NULL, 0);
		}
		s->buf = aligned_alloc(4096, BUF_SIZE);
		if (s->buf)
			memset(s->buf, 0, BUF_SIZE);
		s->mr = s->buf ? ibv_reg_mr(e->pd, s->buf, BUF_SIZE,
					    IBV_ACCESS_LOCAL_WRITE |
					    IBV_ACCESS_REMOTE_WRITE |
					    IBV_ACCESS_REMOTE_READ) : NULL;
		CHECK(s->cq && s->mr, "CQ and MR %d: %s", i, strerror(errno));
		if (!s->cq || !s->mr)
			return -1;
		s->qp = make_qp(e, s->cq);
		CHECK(s->qp, "create %s QP %d: %s",
		      type == IBV_QPT_UC ? "UC" : "RC", i, strerror(errno));
		if (!s->qp)
			return -1;
	}
	CHECK_ERRNO(to_init(e, e->s[0].qp), 0);
	CHECK_ERRNO(to_init(e, e->s[1].qp), 0);
	CHECK_ERRNO(to_rtr(e, e->s[0].qp, e->s[1].qp->qp_num, 0x200), 0);
	CHECK_ERRNO(to_rtr(e, e->s[1].qp, e->s[0].qp->qp_num, 0x100), 0);
	CHECK_ERRNO(to_rts(e, e->s[0].qp, 0x100), 0);
	CHECK_ERRNO(to_rts(e, e->s[1].qp, 0x200), 0);
	return 0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

static int post_write(struct side *s, uint64_t wr_id, uint32_t len,
		      uint64_t va, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, len, s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = va, .rkey = rkey },
	}, *bad;

	return ibv_post_send(s->qp, &wr, &bad);
}

/* ---- memory windows ------------------------------------------------------------- */

/* A WRITE with @rkey at the peer's buffer: its status; the buffer stays 0. */
static int write_through(struct env *e, uint32_t rkey, const char *what)
{
	struct ibv_wc wc;
	int st;

	memset(e->s[0].buf, 0xa5, 4096);
	CHECK_ERRNO(post_write(&e->s[0], 7, 4096,
			       (uintptr_t)e->s[1].buf, rkey), 0);
	st = wait_wc(e->s[0].cq, &wc, 1) == 1 ? (int)wc.status : -1;
	CHECK(all_zero(e->s[1].buf, BUF_SIZE),
	      "%s: nothing landed in the target's memory", what);
	return st;
}

static void case_mw(void)
{
	struct ibv_mw *mw1, *mw2;
	struct ibv_mr *bmr;
	struct ibv_pd *pd2;
	struct env e;
	uint32_t key;
	int st;

	if (env_open(&e, IBV_QPT_RC, false))
		goto out;
	mw1 = ibv_alloc_mw(e.pd, IBV_MW_TYPE_1);
	CHECK(mw1 && mw1->type == IBV_MW_TYPE_1 && mw1->pd == e.pd,
	      "ibv_alloc_mw type 1: %s", strerror(errno));
	mw2 = ibv_alloc_mw(e.pd, IBV_MW_TYPE_2);
	CHECK(mw2 && mw2->type == IBV_MW_TYPE_2,
	      "ibv_alloc_mw type 2: %s", strerror(errno));
	if (!mw1 || !mw2)
		goto out;
	CHECK(mw1->rkey != mw2->rkey && mw1->rkey != e.s[1].mr->rkey,
	      "every window has its own rkey");
	/* the kernel's type check (neither 1 nor 2) */
	errno = 0;
	CHECK(!ibv_alloc_mw(e.pd, (enum ibv_mw_type)3) && errno == EINVAL,
	      "ibv_alloc_mw type 3: EINVAL (%s)", strerror(errno));
	/* REG_MR with MW_BIND is accepted from the MW era on */
	bmr = ibv_reg_mr(e.pd, e.s[1].buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	CHECK(bmr, "REG_MR with IBV_ACCESS_MW_BIND: %s", strerror(errno));

	/* binding: type 1 through the provider (none), type 2 as a WR */
	if (bmr) {
		struct ibv_mw_bind b = {
			.wr_id = 1, .send_flags = IBV_SEND_SIGNALED,
			.bind_info = { .mr = bmr, .addr = (uintptr_t)e.s[1].buf,
				       .length = 4096,
				       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
		};
		struct ibv_send_wr wr = {
			.wr_id = 2, .opcode = IBV_WR_BIND_MW,
			.send_flags = IBV_SEND_SIGNALED,
			.bind_mw = { .mw = mw2, .rkey = mw2->rkey,
				     .bind_info = b.bind_info },
		}, *bad = NULL;

		CHECK_ERRNO(ibv_bind_mw(e.s[1].qp, mw1, &b), EOPNOTSUPP);
		CHECK_ERRNO(ibv_post_send(e.s[1].qp, &wr, &bad), EINVAL);
		CHECK(bad == &wr, "IBV_WR_BIND_MW is the bad WR");
		/* libibverbs' own checks come first */
		CHECK_ERRNO(ibv_bind_mw(e.s[1].qp, mw2, &b), EINVAL);
		pd2 = ibv_alloc_pd(e.ctx);
		if (pd2) {
			struct ibv_mw *other = ibv_alloc_mw(pd2, IBV_MW_TYPE_1);

			CHECK(other, "a window on a second PD");
			if (other) {
				CHECK_ERRNO(ibv_bind_mw(e.s[1].qp, other, &b),
					    EPERM);
				CHECK_ERRNO(ibv_dealloc_mw(other), 0);
			}
			CHECK_ERRNO(ibv_dealloc_pd(pd2), 0);
		}
	}
	/* the QPs are still in RTS: nothing was posted */
	{
		struct ibv_wc wc;

		CHECK(ibv_poll_cq(e.s[1].cq, 1, &wc) == 0,
		      "no completion for the refused binds");
	}

	/* a window grants nothing: its rkey is refused by the responder */
	st = write_through(&e, mw2->rkey, "WRITE through a type 2 window");
	CHECK(st == IBV_WC_REM_ACCESS_ERR,
	      "WRITE through an unbound window: IBV_WC_REM_ACCESS_ERR (%d)", st);
	if (bmr)
		CHECK_ERRNO(ibv_dereg_mr(bmr), 0);
	key = mw1->rkey;
	CHECK_ERRNO(ibv_dealloc_mw(mw1), 0);
	CHECK_ERRNO(ibv_dealloc_mw(mw2), 0);
	env_close(&e);

	/* a deallocated window's rkey, on fresh QPs */
	if (env_open(&e, IBV_QPT_RC, false))
		goto out;
	st = write_through(&e, key, "WRITE through a deallocated window");
	CHECK(st == IBV_WC_REM_ACCESS_ERR,
	      "WRITE through a deallocated window: IBV_WC_REM_ACCESS_ERR (%d)",
	      st);
out:
	env_close(&e);
}

static void case_mw_old(void)
{
	struct ibv_context *ctx = open_rnic();
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	void *buf = aligned_alloc(4096, 4096);
	double t0;

	CHECK(pd && buf, "device, PD, buffer");
	if (!pd || !buf)
		goto out;
	t0 = now();
	errno = 0;
	CHECK(!ibv_alloc_mw(pd, IBV_MW_TYPE_2) && errno == EOPNOTSUPP,
	      "ibv_alloc_mw before 7.1: EOPNOTSUPP (%s)", strerror(errno));
	errno = 0;
	CHECK(!ibv_alloc_mw(pd, IBV_MW_TYPE_1) && errno == EOPNOTSUPP,
	      "ibv_alloc_mw type 1 before 7.1: EOPNOTSUPP (%s)",
	      strerror(errno));
	printf("# two refused ALLOC_MW took %.0f us\n", (now() - t0) * 1e6);
	errno = 0;
	CHECK(!ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_MW_BIND) && errno == EINVAL,
	      "REG_MR with MW_BIND before 7.1: EINVAL (%s)", strerror(errno));
out:
	free(buf);
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";

	if (!strcmp(c, "mw"))
		case_mw();
	else if (!strcmp(c, "mw_old"))
		case_mw_old();
	else {
		fprintf(stderr, "usage: %s mw|mw_old\n", argv[0]);
		return 2;
	}
	return check_done();
}
