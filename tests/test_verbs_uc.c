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
 *   test_verbs_uc uc       (7.2) two UC QPs: SEND, SEND_WITH_IMM, RDMA WRITE
 *                          and RDMA WRITE_WITH_IMM of 0 to 3 MTUs, data and
 *                          completions checked; unsignaled sends; READ and
 *                          atomics EINVAL; the RC-only modify attributes
 *                          EINVAL; destroy; an RC and a UC pair sharing
 *                          their CQs
 *   test_verbs_uc uc_ex    the same through ibv_wr_* and the extended CQ
 *   test_verbs_uc uc_gap   forged UC packets with gaps in their PSNs: the
 *                          message being received is dropped (a SEND's
 *                          receive WQE takes the next message), a new one
 *                          starts at any PSN, no ACK or error anywhere
 *   test_verbs_uc uc_loss  (--fault=drop-roce=N) 300 three-packet SENDs:
 *                          every send completes, every message received is
 *                          whole, the ones that lost a packet never arrive
 *   test_verbs_uc uc_old   (before 7.2) ibv_create_qp UC: EOPNOTSUPP
 *   test_verbs_uc uc2vm victim|attacker
 *                          two VMs on the socket wire (test_rc_attack.sh):
 *                          SEND, SEND_WITH_IMM, WRITE, WRITE_WITH_IMM from
 *                          the "attacker" (requester) to the "victim"
 */
#include <endian.h>
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
#include "emulator/mana_emu.h"

#define BUF_SIZE (64u << 10)

/* the emulator's test API, found at run time (the test links no emulator) */
static int (*emu_quiesce_fn)(int);
static int (*emu_forge)(uint32_t, const struct mana_emu_rc_pkt *);

static int emu_quiesce(int ms)
{
	return emu_quiesce_fn ? emu_quiesce_fn(ms) : -ENOSYS;
}
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
		/* an MR without MW_BIND, a range beyond the MR: no bind either */
		b.bind_info.mr = e.s[1].mr;
		CHECK_ERRNO(ibv_bind_mw(e.s[1].qp, mw1, &b), EOPNOTSUPP);
		b.bind_info.mr = bmr;
		b.bind_info.length = 2 * BUF_SIZE;
		CHECK_ERRNO(ibv_bind_mw(e.s[1].qp, mw1, &b), EOPNOTSUPP);
		b.bind_info.length = 4096;
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


/* ---- UC queue pairs --------------------------------------------------------------- */

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8) + 1);
}

static int post_recv(struct side *s, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(s->qp, &wr, &bad);
}

/* One send WR of @len bytes from the sender's buffer at @off. */
static int post_op(struct env *e, enum ibv_wr_opcode op, uint64_t wr_id,
		   uint32_t off, uint32_t len, uint32_t roff, uint32_t imm,
		   unsigned int flags)
{
	struct side *s = &e->s[0], *r = &e->s[1];
	struct ibv_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = flags, .imm_data = htobe32(imm),
		.wr.rdma = { .remote_addr = (uintptr_t)r->buf + roff,
			     .rkey = r->mr->rkey },
	}, *bad;

	if (!e->ex)
		return ibv_post_send(s->qp, &wr, &bad);
	ibv_wr_start(ibv_qp_to_qp_ex(s->qp));
	s->qp->qp_context = NULL;
	{
		struct ibv_qp_ex *x = ibv_qp_to_qp_ex(s->qp);

		x->wr_id = wr_id;
		x->wr_flags = flags;
		switch (op) {
		case IBV_WR_SEND:
			ibv_wr_send(x);
			break;
		case IBV_WR_SEND_WITH_IMM:
			ibv_wr_send_imm(x, htobe32(imm));
			break;
		case IBV_WR_RDMA_WRITE:
			ibv_wr_rdma_write(x, r->mr->rkey,
					  (uintptr_t)r->buf + roff);
			break;
		case IBV_WR_RDMA_WRITE_WITH_IMM:
			ibv_wr_rdma_write_imm(x, r->mr->rkey,
					      (uintptr_t)r->buf + roff,
					      htobe32(imm));
			break;
		default:
			ibv_wr_rdma_read(x, r->mr->rkey,
					 (uintptr_t)r->buf + roff);
			break;
		}
		ibv_wr_set_sge(x, s->mr->lkey, (uintptr_t)s->buf + off, len);
		return ibv_wr_complete(x);
	}
}

/* The next completion of @s, through the extended CQ when the env has one. */
static int get_wc(struct env *e, struct side *s, struct ibv_wc *wc)
{
	struct ibv_poll_cq_attr pa = {};
	double end = now() + 30;
	int ret;

	if (!e->ex)
		return wait_wc(s->cq, wc, 1) == 1 ? 0 : -1;
	do {
		ret = ibv_start_poll(s->cqx, &pa);
		if (ret == ENOENT)
			usleep(50);
	} while (ret == ENOENT && now() < end);
	if (ret)
		return -1;
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = s->cqx->wr_id;
	wc->status = s->cqx->status;
	wc->opcode = ibv_wc_read_opcode(s->cqx);
	wc->byte_len = ibv_wc_read_byte_len(s->cqx);
	wc->qp_num = ibv_wc_read_qp_num(s->cqx);
	wc->wc_flags = ibv_wc_read_wc_flags(s->cqx);
	if (wc->wc_flags & IBV_WC_WITH_IMM)
		wc->imm_data = ibv_wc_read_imm_data(s->cqx);
	ibv_end_poll(s->cqx);
	return 0;
}

static void expect_wc(struct env *e, struct side *s, uint64_t wr_id,
		      enum ibv_wc_opcode op, uint32_t len, int imm,
		      const char *what)
{
	struct ibv_wc wc;

	CHECK(!get_wc(e, s, &wc), "%s: a completion", what);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == wr_id &&
	      wc.opcode == op && wc.qp_num == s->qp->qp_num,
	      "%s: status %d wr_id %llu opcode %d", what, wc.status,
	      (unsigned long long)wc.wr_id, wc.opcode);
	if (op & IBV_WC_RECV)
		CHECK(wc.byte_len == len, "%s: byte_len %u, want %u", what,
		      wc.byte_len, len);
	if (imm >= 0)
		CHECK((wc.wc_flags & IBV_WC_WITH_IMM) &&
		      be32toh(wc.imm_data) == (uint32_t)imm,
		      "%s: immediate %#x", what, be32toh(wc.imm_data));
	else if (op & IBV_WC_RECV)
		CHECK(!(wc.wc_flags & IBV_WC_WITH_IMM), "%s: no immediate",
		      what);
}

static void uc_traffic(bool ex)
{
	uint32_t mtu, sizes[5], i;
	struct env e;
	struct side *s, *r;
	unsigned int k;

	if (env_open(&e, IBV_QPT_UC, ex))
		goto out;
	s = &e.s[0];
	r = &e.s[1];
	CHECK(s->qp->qp_type == IBV_QPT_UC, "a UC QP");
	mtu = 128u << e.mtu;
	sizes[0] = 0;
	sizes[1] = 1;
	sizes[2] = mtu;
	sizes[3] = mtu + 1;
	sizes[4] = 3 * mtu;
	for (k = 0; k < 4; k++) {
		static const enum ibv_wr_opcode ops[4] = {
			IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
			IBV_WR_RDMA_WRITE_WITH_IMM,
		};
		static const char *const names[4] = {
			"SEND", "SEND_WITH_IMM", "RDMA_WRITE",
			"RDMA_WRITE_WITH_IMM",
		};
		enum ibv_wr_opcode op = ops[k];
		bool recv = op != IBV_WR_RDMA_WRITE;

		for (i = 0; i < 5; i++) {
			uint32_t len = sizes[i], imm = 0x1000 * k + i;
			int want_imm = op == IBV_WR_SEND_WITH_IMM ||
				       op == IBV_WR_RDMA_WRITE_WITH_IMM ?
				       (int)imm : -1;
			char what[64];

			snprintf(what, sizeof(what), "UC %s of %u bytes",
				 names[k], len);
			fill(s->buf, len, k * 8 + i);
			memset(r->buf, 0, 4 * mtu + 64);
			if (recv)
				CHECK_ERRNO(post_recv(r, 100 + i, 0, 4 * mtu), 0);
			CHECK_ERRNO(post_op(&e, op, i, 0, len, 0, imm,
					    IBV_SEND_SIGNALED), 0);
			expect_wc(&e, s, i, op == IBV_WR_SEND ||
				  op == IBV_WR_SEND_WITH_IMM ? IBV_WC_SEND :
				  IBV_WC_RDMA_WRITE, len, -1, what);
			if (recv)
				expect_wc(&e, r, 100 + i,
					  op == IBV_WR_RDMA_WRITE_WITH_IMM ?
					  IBV_WC_RECV_RDMA_WITH_IMM :
					  IBV_WC_RECV, len, want_imm, what);
			else
				CHECK(!emu_quiesce(10000), "%s: quiet",
				      what);
			CHECK(!memcmp(r->buf, s->buf, len) &&
			      r->buf[len] == 0, "%s: data", what);
		}
	}
	/* unsignaled WRs complete silently before the next signaled one */
	fill(s->buf, 256, 77);
	for (i = 0; i < 4; i++)
		CHECK_ERRNO(post_op(&e, IBV_WR_RDMA_WRITE, 500 + i, 64 * i, 64,
				    1024 + 64 * i, 0,
				    i == 3 ? IBV_SEND_SIGNALED : 0), 0);
	expect_wc(&e, s, 503, IBV_WC_RDMA_WRITE, 0, -1,
		  "the signaled WRITE after three unsignaled ones");
	CHECK(!memcmp(r->buf + 1024, s->buf, 256),
	      "four WRITEs, three unsignaled: data");
	{
		struct ibv_wc wc;

		CHECK(ibv_poll_cq(s->cq, 1, &wc) == 0,
		      "no completion for the unsignaled WRITEs");
	}

	/* UC has no READ and no atomics: EINVAL, nothing posted */
	CHECK_ERRNO(post_op(&e, IBV_WR_RDMA_READ, 9, 0, 64, 0, 0,
			    IBV_SEND_SIGNALED), EINVAL);
	if (!ex) {
		struct ibv_sge sge = { (uintptr_t)s->buf, 8, s->mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 10, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.atomic = { .remote_addr = (uintptr_t)r->buf,
				       .rkey = r->mr->rkey, .compare_add = 1 },
		}, *bad = NULL;

		CHECK_ERRNO(ibv_post_send(s->qp, &wr, &bad), EINVAL);
		CHECK(bad == &wr, "the atomic is the bad WR");
	}
	CHECK(!emu_quiesce(10000), "device quiet");
	{
		struct ibv_wc wc;

		CHECK(ibv_poll_cq(s->cq, 1, &wc) == 0 &&
		      ibv_poll_cq(r->cq, 1, &wc) == 0,
		      "no completion for the refused WRs");
	}
	/* still usable: one more SEND */
	fill(s->buf, 100, 99);
	CHECK_ERRNO(post_recv(r, 600, 0, 4096), 0);
	CHECK_ERRNO(post_op(&e, IBV_WR_SEND, 601, 0, 100, 0, 0,
			    IBV_SEND_SIGNALED), 0);
	expect_wc(&e, s, 601, IBV_WC_SEND, 100, -1, "SEND after the refusals");
	expect_wc(&e, r, 600, IBV_WC_RECV, 100, -1, "SEND after the refusals");
	CHECK_ERRNO(ibv_destroy_qp(s->qp), 0);
	s->qp = NULL;
out:
	env_close(&e);
}

/* ib_modify_qp_is_ok() for UC: the RC-only attributes are refused */
static void uc_modify(void)
{
	struct ibv_qp_attr a;
	struct env e;
	struct ibv_qp *qp;

	memset(&e, 0, sizeof(e));
	e.type = IBV_QPT_UC;
	e.ctx = open_rnic();
	e.gid_index = e.ctx ? find_gid(&e) : -1;
	e.pd = e.ctx ? ibv_alloc_pd(e.ctx) : NULL;
	e.s[0].cq = e.ctx ? ibv_create_cq(e.ctx, 16, NULL, NULL, 0) : NULL;
	CHECK(e.pd && e.s[0].cq && e.gid_index >= 0, "device, PD, CQ, GID");
	if (!e.pd || !e.s[0].cq || e.gid_index < 0)
		goto out;
	qp = e.s[0].qp = make_qp(&e, e.s[0].cq);
	CHECK(qp, "UC QP");
	if (!qp)
		goto out;
	CHECK_ERRNO(to_init(&e, qp), 0);
	/*
	 * INIT -> RTR with RC's max_dest_rd_atomic and min_rnr_timer: the
	 * device refuses what UC does not take (EPROTO; mana_ib checks none)
	 */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = e.mtu;
	a.dest_qp_num = qp->qp_num;
	a.ah_attr = (struct ibv_ah_attr){ .is_global = 1, .port_num = 1,
		.grh = { .dgid = e.gid, .sgid_index = (uint8_t)e.gid_index,
			 .hop_limit = 64 } };
	CHECK_ERRNO(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC),
		    EPROTO);
	CHECK_ERRNO(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MIN_RNR_TIMER),
		    EPROTO);
	/* without the required RQ PSN */
	CHECK_ERRNO(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
				  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN), EPROTO);
	CHECK_ERRNO(to_rtr(&e, qp, qp->qp_num, 0), 0);
	/* RTR -> RTS with RC's timeout, retry counts, rd_atomic */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	CHECK_ERRNO(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
				  IBV_QP_TIMEOUT), EPROTO);
	CHECK_ERRNO(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
				  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY), EPROTO);
	CHECK_ERRNO(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
				  IBV_QP_MAX_QP_RD_ATOMIC), EPROTO);
	CHECK_ERRNO(ibv_modify_qp(qp, &a, IBV_QP_STATE), EPROTO);
	CHECK_ERRNO(to_rts(&e, qp, 0), 0);
	CHECK(qp->state == IBV_QPS_RTS, "UC QP in RTS");
	/* back to RESET and again */
	a.qp_state = IBV_QPS_RESET;
	CHECK_ERRNO(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	CHECK_ERRNO(to_init(&e, qp), 0);
out:
	env_close(&e);
}

/* An RC pair and a UC pair on the same two CQs: completions find their QP. */
static void uc_mixed(void)
{
	struct ibv_qp *u0 = NULL, *u1 = NULL;
	struct ibv_wc wc[8];
	struct env e;
	unsigned int i, n, seen = 0;

	if (env_open(&e, IBV_QPT_RC, false))
		goto out;
	e.type = IBV_QPT_UC;
	u0 = make_qp(&e, e.s[0].cq);
	u1 = make_qp(&e, e.s[1].cq);
	CHECK(u0 && u1, "UC QPs on the RC QPs' CQs: %s", strerror(errno));
	if (!u0 || !u1)
		goto out;
	CHECK_ERRNO(to_init(&e, u0), 0);
	CHECK_ERRNO(to_init(&e, u1), 0);
	CHECK_ERRNO(to_rtr(&e, u0, u1->qp_num, 0x500), 0);
	CHECK_ERRNO(to_rtr(&e, u1, u0->qp_num, 0x500), 0);
	CHECK_ERRNO(to_rts(&e, u0, 0x500), 0);
	CHECK_ERRNO(to_rts(&e, u1, 0x500), 0);
	fill(e.s[0].buf, 8192, 5);
	for (i = 0; i < 4; i++) {
		struct ibv_sge rsge = { (uintptr_t)e.s[1].buf + 8192 + i * 1024,
					1024, e.s[1].mr->lkey };
		struct ibv_recv_wr rwr = { .wr_id = 200 + i, .sg_list = &rsge,
					   .num_sge = 1 }, *rbad;
		struct ibv_sge sge = { (uintptr_t)e.s[0].buf + i * 1024, 1000,
				       e.s[0].mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 100 + i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		}, *bad;
		struct ibv_qp *tx = i & 1 ? u0 : e.s[0].qp;
		struct ibv_qp *rx = i & 1 ? u1 : e.s[1].qp;

		CHECK_ERRNO(ibv_post_recv(rx, &rwr, &rbad), 0);
		CHECK_ERRNO(ibv_post_send(tx, &wr, &bad), 0);
	}
	n = (unsigned int)wait_wc(e.s[0].cq, wc, 4);
	CHECK(n == 4, "four send completions on the shared CQ (%u)", n);
	for (i = 0; i < n; i++) {
		unsigned int k = (unsigned int)wc[i].wr_id - 100;

		CHECK(k < 4 && wc[i].status == IBV_WC_SUCCESS &&
		      wc[i].opcode == IBV_WC_SEND &&
		      wc[i].qp_num == (k & 1 ? u0 : e.s[0].qp)->qp_num,
		      "send %u: status %d on QP %u", k, wc[i].status,
		      wc[i].qp_num);
		seen |= 1u << (k & 3);
	}
	n = (unsigned int)wait_wc(e.s[1].cq, wc, 4);
	CHECK(n == 4, "four receive completions on the shared CQ (%u)", n);
	for (i = 0; i < n; i++) {
		unsigned int k = (unsigned int)wc[i].wr_id - 200;

		CHECK(k < 4 && wc[i].status == IBV_WC_SUCCESS &&
		      wc[i].byte_len == 1000 &&
		      wc[i].qp_num == (k & 1 ? u1 : e.s[1].qp)->qp_num &&
		      !memcmp(e.s[1].buf + 8192 + k * 1024,
			      e.s[0].buf + k * 1024, 1000),
		      "receive %u: status %d on QP %u, data", k, wc[i].status,
		      wc[i].qp_num);
		seen |= 16u << (k & 3);
	}
	CHECK(seen == 0xff, "every WR completed once (%#x)", seen);
out:
	if (u0)
		ibv_destroy_qp(u0);
	if (u1)
		ibv_destroy_qp(u1);
	env_close(&e);
}

/* ---- UC: lost packets --------------------------------------------------------------- */

static int forge(struct side *s, uint8_t opcode, uint32_t psn,
		 const void *data, uint32_t len, uint64_t va, uint32_t rkey,
		 uint32_t dma_len, uint32_t imm)
{
	struct mana_emu_rc_pkt p = {
		.opcode = opcode, .psn = psn, .payload = data,
		.payload_len = len, .va = va, .rkey = rkey,
		.dma_len = dma_len, .imm = imm,
	};

	return emu_forge ? emu_forge(s->qp->qp_num, &p) : -ENOSYS;
}

static void uc_gap(void)
{
	struct env e;
	struct side *s, *r;
	uint8_t *a, *b, *c;
	uint32_t mtu;
	struct ibv_wc wc;
	uint64_t va;

	if (env_open(&e, IBV_QPT_UC, false))
		goto out;
	s = &e.s[0];
	r = &e.s[1];
	mtu = 128u << e.mtu;
	a = malloc(mtu);
	b = malloc(mtu);
	c = malloc(mtu);
	if (!a || !b || !c)
		goto free;
	memset(a, 0xaa, mtu);
	memset(b, 0xbb, mtu);
	memset(c, 0xcc, mtu);
	CHECK_ERRNO(post_recv(r, 1, 0, 4 * mtu), 0);
	CHECK_ERRNO(post_recv(r, 2, 4 * mtu, 4 * mtu), 0);

	/* SEND: FIRST at 0x100, the MIDDLE at 0x101 lost, LAST at 0x102 */
	CHECK_ERRNO(forge(s, 0x20, 0x100, a, mtu, 0, 0, 0, 0), 0);
	CHECK_ERRNO(forge(s, 0x22, 0x102, b, 100, 0, 0, 0, 0), 0);
	/* a MIDDLE of nothing, then an ONLY at a PSN never expected */
	CHECK_ERRNO(forge(s, 0x21, 0x103, b, mtu, 0, 0, 0, 0), 0);
	CHECK_ERRNO(forge(s, 0x24, 0x200, c, 50, 0, 0, 0, 0), 0);
	CHECK(!emu_quiesce(10000), "device quiet");
	CHECK(wait_wc(r->cq, &wc, 1) == 1 && wc.status == IBV_WC_SUCCESS &&
	      wc.wr_id == 1 && wc.byte_len == 50 &&
	      wc.opcode == IBV_WC_RECV,
	      "the SEND with a gap is dropped, its receive WQE takes the next (wr_id %llu, %u bytes)",
	      (unsigned long long)wc.wr_id, wc.byte_len);
	CHECK(r->buf[0] == 0xcc && r->buf[49] == 0xcc,
	      "the ONLY after the gap landed");

	/* WRITE: FIRST lands, LAST after a gap is dropped */
	va = (uintptr_t)r->buf + 16 * mtu;
	CHECK_ERRNO(forge(s, 0x26, 0x201, a, mtu, va, r->mr->rkey, 3 * mtu, 0),
		    0);
	CHECK_ERRNO(forge(s, 0x28, 0x203, b, mtu, 0, 0, 0, 0), 0);
	/* a WRITE_ONLY_IMM with a bad rkey: dropped silently */
	CHECK_ERRNO(forge(s, 0x2b, 0x204, c, 8, va, r->mr->rkey ^ 0x80, 8,
			  0x5555), 0);
	/* then a good one: the second receive WQE */
	CHECK_ERRNO(forge(s, 0x2b, 0x205, c, 8, va + 8 * mtu, r->mr->rkey, 8,
			  0x1234), 0);
	CHECK(!emu_quiesce(10000), "device quiet");
	CHECK(wait_wc(r->cq, &wc, 1) == 1 && wc.status == IBV_WC_SUCCESS &&
	      wc.wr_id == 2 && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	      be32toh(wc.imm_data) == 0x1234,
	      "only the good WRITE_ONLY_IMM completes (wr_id %llu imm %#x)",
	      (unsigned long long)wc.wr_id, be32toh(wc.imm_data));
	CHECK(r->buf[16 * mtu] == 0xaa && r->buf[17 * mtu - 1] == 0xaa &&
	      r->buf[18 * mtu] == 0 && r->buf[24 * mtu] == 0xcc,
	      "the WRITE's first packet stays, its LAST after the gap did not land");
	CHECK(ibv_poll_cq(r->cq, 1, &wc) == 0 && ibv_poll_cq(s->cq, 1, &wc) == 0,
	      "no other completion, no error");
	/* the QPs are fine: a real SEND both ways of the API */
	CHECK_ERRNO(post_recv(r, 3, 0, 4096), 0);
	fill(s->buf, 300, 3);
	CHECK_ERRNO(post_op(&e, IBV_WR_SEND, 4, 0, 300, 0, 0,
			    IBV_SEND_SIGNALED), 0);
	expect_wc(&e, s, 4, IBV_WC_SEND, 300, -1, "SEND after the gaps");
	expect_wc(&e, r, 3, IBV_WC_RECV, 300, -1, "SEND after the gaps");
	CHECK(!memcmp(r->buf, s->buf, 300), "its data");
free:
	free(a);
	free(b);
	free(c);
out:
	env_close(&e);
}

#define LOSS_MSGS 300

/* Under --fault=drop-roce=N: whole messages or none. */
static void uc_loss(void)
{
	uint32_t mtu, len, i, got = 0, sent = 0;
	struct env e;
	struct side *s, *r;
	struct ibv_wc wc;

	if (env_open(&e, IBV_QPT_UC, false))
		goto out;
	s = &e.s[0];
	r = &e.s[1];
	mtu = 128u << e.mtu;
	len = 3 * mtu - 7;
	/* more receives than messages, each 4 MTUs */
	for (i = 0; i < DEPTH; i++)
		CHECK_ERRNO(post_recv(r, i, i * 4 * mtu % (BUF_SIZE / 2), 4 * mtu),
			    0);
	for (i = 0; i < LOSS_MSGS; i++) {
		uint32_t off = BUF_SIZE / 2;

		/* the message's number in its first bytes, then a pattern */
		fill(s->buf + off, len, i);
		memcpy(s->buf + off, &i, sizeof(i));
		CHECK_ERRNO(post_op(&e, IBV_WR_SEND, i, off, len, 0, 0,
				    IBV_SEND_SIGNALED), 0);
		CHECK(wait_wc(s->cq, &wc, 1) == 1 &&
		      wc.status == IBV_WC_SUCCESS && wc.wr_id == i,
		      "UC SEND %u completes once sent (status %d)", i,
		      wc.status);
		sent++;
		CHECK(!emu_quiesce(10000), "device quiet");
		while (ibv_poll_cq(r->cq, 1, &wc) == 1) {
			uint32_t id, slot = (uint32_t)wc.wr_id;
			uint8_t *p = r->buf + slot * 4 * mtu % (BUF_SIZE / 2);
			uint8_t want[4096 * 3];

			memcpy(&id, p, sizeof(id));
			fill(want, len, id);
			memcpy(want, &id, sizeof(id));
			CHECK(wc.status == IBV_WC_SUCCESS && wc.byte_len == len &&
			      id <= i && !memcmp(p, want, len),
			      "received message %u is whole (status %d, %u bytes)",
			      id, wc.status, wc.byte_len);
			got++;
			CHECK_ERRNO(post_recv(r, slot, slot * 4 * mtu % (BUF_SIZE / 2),
					      4 * mtu), 0);
		}
	}
	printf("# %u UC SENDs of %u bytes: %u received whole, %u lost a packet\n",
	       sent, len, got, sent - got);
	CHECK(got < sent && got > 0,
	      "some messages lost a packet and were dropped (%u of %u arrived)",
	      got, sent);
out:
	env_close(&e);
}

static void uc_old(void)
{
	struct ibv_context *ctx = open_rnic();
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = ctx ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	double t0;

	CHECK(pd && cq, "device, PD, CQ");
	if (!pd || !cq)
		goto out;
	ia.send_cq = ia.recv_cq = cq;
	t0 = now();
	errno = 0;
	CHECK(!ibv_create_qp(pd, &ia) && errno == EOPNOTSUPP,
	      "UC QP before 7.2: EOPNOTSUPP (%s)", strerror(errno));
	printf("# the refused UC create took %.0f us\n", (now() - t0) * 1e6);
out:
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
}

/* ---- UC between two VMs (tests/test_rc_attack.sh: fds 3 in, 4 out) ---------------- */

static FILE *peer_in, *peer_out;

static void say(const char *w)
{
	fprintf(peer_out, "%s\n", w);
	fflush(peer_out);
}

static int hear(const char *w)
{
	char line[64];

	if (!fgets(line, sizeof(line), peer_in))
		return -1;
	line[strcspn(line, "\n")] = 0;
	return strcmp(line, w) ? -1 : 0;
}

/*
 * "victim": the responder (receives SEND, SEND_WITH_IMM, WRITE_WITH_IMM
 * and a WRITE into its buffer); "attacker": the requester.  Data patterns
 * are known to both from the message number.
 */
static void uc_two_vms(bool responder)
{
	static const enum ibv_wr_opcode ops[4] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM,
	};
	struct env e;
	struct side *me;
	uint32_t mtu, len[4], i, pqpn, prkey;
	unsigned long long pva;
	char hex[40];
	union ibv_gid pgid;
	unsigned int k, b;

	memset(&e, 0, sizeof(e));
	e.type = IBV_QPT_UC;
	peer_in = fdopen(3, "r");
	peer_out = fdopen(4, "w");
	CHECK(peer_in && peer_out, "peer channel on fds 3 and 4");
	e.ctx = open_rnic();
	e.gid_index = e.ctx ? find_gid(&e) : -1;
	e.pd = e.ctx ? ibv_alloc_pd(e.ctx) : NULL;
	me = &e.s[0];
	me->cq = e.ctx ? ibv_create_cq(e.ctx, 64, NULL, NULL, 0) : NULL;
	me->buf = aligned_alloc(4096, BUF_SIZE);
	CHECK(peer_in && peer_out && e.gid_index >= 0 && e.pd && me->cq &&
	      me->buf, "device, GID, PD, CQ, buffer");
	if (!peer_in || !peer_out || e.gid_index < 0 || !e.pd || !me->cq ||
	    !me->buf)
		goto out;
	memset(me->buf, 0, BUF_SIZE);
	me->mr = ibv_reg_mr(e.pd, me->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_WRITE);
	me->qp = me->mr ? make_qp(&e, me->cq) : NULL;
	CHECK(me->qp, "UC QP: %s", strerror(errno));
	if (!me->qp)
		goto out;
	CHECK_ERRNO(to_init(&e, me->qp), 0);
	fprintf(peer_out, "%u %llu %u ", me->qp->qp_num,
		(unsigned long long)(uintptr_t)me->buf, me->mr->rkey);
	for (k = 0; k < 16; k++)
		fprintf(peer_out, "%02x", e.gid.raw[k]);
	fprintf(peer_out, "\n");
	fflush(peer_out);
	CHECK(fscanf(peer_in, "%u %llu %u %32s", &pqpn, &pva, &prkey, hex) == 4 &&
	      fgetc(peer_in) == '\n', "the peer's QP, buffer and GID");
	for (k = 0; k < 16 && sscanf(hex + 2 * k, "%2x", &b) == 1; k++)
		pgid.raw[k] = (uint8_t)b;
	e.gid = pgid;		/* to_rtr() aims at e.gid */
	CHECK_ERRNO(to_rtr(&e, me->qp, pqpn, 0x300), 0);
	CHECK_ERRNO(to_rts(&e, me->qp, 0x300), 0);
	mtu = 128u << e.mtu;
	len[0] = 100;
	len[1] = 3 * mtu;
	len[2] = 2 * mtu + 5;
	len[3] = 0;
	if (responder) {
		struct ibv_wc wc;
		static const uint32_t want_len[3] = { 0, 1, 3 };

		for (i = 0; i < 3; i++)
			CHECK_ERRNO(post_recv(me, i, i * 4 * mtu, 4 * mtu), 0);
		say("ready");
		CHECK(!hear("sent"), "the requester sent");
		for (i = 0; i < 3; i++) {
			CHECK(wait_wc(me->cq, &wc, 1) == 1 &&
			      wc.status == IBV_WC_SUCCESS && wc.wr_id == i &&
			      wc.byte_len == len[want_len[i]],
			      "receive %u: status %d wr_id %llu %u bytes", i,
			      wc.status, (unsigned long long)wc.wr_id,
			      wc.byte_len);
			if (i)
				CHECK((wc.wc_flags & IBV_WC_WITH_IMM) &&
				      be32toh(wc.imm_data) == 0xabc0 + want_len[i],
				      "receive %u: immediate", i);
		}
		for (i = 0; i < 2; i++) {
			uint8_t *want = malloc(len[i]);

			if (want)
				fill(want, len[i], i);
			CHECK(want && !memcmp(me->buf + i * 4 * mtu, want, len[i]),
			      "SEND %u: data across the wire", i);
			free(want);
		}
		{
			uint8_t *want = malloc(len[2]);

			if (want)
				fill(want, len[2], 2);
			CHECK(want && !memcmp(me->buf + BUF_SIZE / 2, want, len[2]),
			      "WRITE: data across the wire");
			free(want);
		}
		CHECK(ibv_poll_cq(me->cq, 1, &wc) == 0, "nothing else");
		say("ok");
	} else {
		struct ibv_wc wc;

		e.s[1].mr = NULL;
		CHECK(!hear("ready"), "the responder is ready");
		for (k = 0; k < 4; k++) {
			struct ibv_sge sge = { (uintptr_t)me->buf + k * 4 * mtu,
					       len[k], me->mr->lkey };
			struct ibv_send_wr wr = {
				.wr_id = k, .sg_list = &sge, .num_sge = 1,
				.opcode = ops[k], .send_flags = IBV_SEND_SIGNALED,
				.imm_data = htobe32(0xabc0 + k),
				.wr.rdma = { .remote_addr = pva + BUF_SIZE / 2,
					     .rkey = prkey },
			}, *bad;

			fill(me->buf + k * 4 * mtu, len[k], k);
			CHECK_ERRNO(ibv_post_send(me->qp, &wr, &bad), 0);
		}
		for (k = 0; k < 4; k++)
			CHECK(wait_wc(me->cq, &wc, 1) == 1 &&
			      wc.status == IBV_WC_SUCCESS && wc.wr_id == k,
			      "UC WR %u sent (status %d)", k, wc.status);
		say("sent");
		CHECK(!hear("ok"), "the responder checked everything");
	}
out:
	env_close(&e);
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";

	emu_quiesce_fn = (int (*)(int))dlsym(RTLD_DEFAULT, "mana_emu_quiesce");
	emu_forge = (int (*)(uint32_t, const struct mana_emu_rc_pkt *))
		dlsym(RTLD_DEFAULT, MANA_EMU_RC_FORGE_SYM);
	CHECK(emu_quiesce_fn && emu_forge, "the emulator's test API");

	if (!strcmp(c, "mw"))
		case_mw();
	else if (!strcmp(c, "mw_old"))
		case_mw_old();
	else if (!strcmp(c, "uc")) {
		uc_traffic(false);
		uc_modify();
		uc_mixed();
	} else if (!strcmp(c, "uc_ex"))
		uc_traffic(true);
	else if (!strcmp(c, "uc_gap"))
		uc_gap();
	else if (!strcmp(c, "uc_loss"))
		uc_loss();
	else if (!strcmp(c, "uc_old"))
		uc_old();
	else if (!strcmp(c, "uc2vm") && argc > 2)
		uc_two_vms(!strcmp(argv[2], "victim"));
	else {
		fprintf(stderr, "usage: %s mw|mw_old|uc|uc_ex|uc_gap|uc_loss|uc_old\n",
			argv[0]);
		return 2;
	}
	return check_done();
}
