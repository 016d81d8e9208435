// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RC queue pairs through libibverbs and libmana, in one process: two QPs
 * on the emulated RNIC connected to each other over the port's loopback
 * wire (run under mana-emu with --ip so that the port has a RoCE GID).
 *
 *   test_verbs_rc ops       every opcode with its data checked, multi-SGE,
 *                           zero length, immediates, inline, unsignaled,
 *                           large messages, ibv_wr_* and the extended CQ
 *   test_verbs_rc flush     user ERR and a remote access error: every
 *                           outstanding WR completes exactly once
 *   test_verbs_rc bad       every RC verb with bad attributes: errno, and
 *                           nothing posted
 *   test_verbs_rc threads   one thread posts, another polls
 *   test_verbs_rc events    completion channel: req_notify_cq + events
 * A second argument --dev=NAME picks the device (the split era's RNIC).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "check.h"
#include "emu_client.h"
/* the provider's own QP (case wqe reads the WQEs it wrote) */
#include "providers/mana/rc.h"

#define BUF_SIZE (1u << 20)
#define DEPTH 64

struct side {
	struct ibv_cq *cq;		/* send and receive CQ of the QP */
	struct ibv_cq_ex *cqx;		/* the same CQ if made extended */
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
	bool ex;			/* QPs with ibv_wr_*, extended CQs */
	uint8_t timeout;		/* local ACK timeout; 0: 14 (67 ms) */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Up to @want completions; waits yield (no busy spin).  The bound only
 * keeps a broken build from hanging: no result depends on timing.
 */
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

/* Nothing more arrives: the device has gone quiet (a short pause). */
static int drain_extra(struct ibv_cq *cq)
{
	struct ibv_wc wc[8];
	int n, total = 0, i;

	for (i = 0; i < 20; i++) {
		n = ibv_poll_cq(cq, 8, wc);
		if (n > 0)
			total += n;
		usleep(1000);
	}
	return total;
}

static const char *dev_name;	/* --dev=NAME, else the first MANA device */

static struct ibv_context *open_dev(void)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int i, n;

	if (!dev_name)
		return emu_open_rnic();
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev_name))
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
		/* an IPv4-mapped GID: ::ffff:a.b.c.d */
		if (e->gid.raw[10] == 0xff && e->gid.raw[11] == 0xff)
			return i;
	}
	return -1;
}

static struct ibv_qp *make_qp(struct env *e, struct ibv_cq *cq, uint32_t inl)
{
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = e->pd,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 4, .max_recv_sge = 4,
			 .max_inline_data = inl },
	};

	if (e->ex) {
		qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		qa.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
				    IBV_QP_EX_WITH_RDMA_WRITE |
				    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
				    IBV_QP_EX_WITH_RDMA_READ;
	}
	return ibv_create_qp_ex(e->ctx, &qa);
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static int to_rtr(struct env *e, struct ibv_qp *qp, uint32_t dqpn, uint32_t psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = e->mtu,
		.dest_qp_num = dqpn, .rq_psn = psn, .max_dest_rd_atomic = 4,
		.min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = e->gid, .sgid_index = (uint8_t)e->gid_index,
				      .hop_limit = 64 } },
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

static int to_rts(struct env *e, struct ibv_qp *qp, uint32_t psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .timeout = e->timeout ? e->timeout : 14,
		.retry_cnt = 7,
		.rnr_retry = 7, .sq_psn = psn, .max_rd_atomic = 4,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			     IBV_QP_MAX_QP_RD_ATOMIC);
}

static int connect_pair(struct env *e, uint32_t psn0, uint32_t psn1)
{
	struct ibv_qp *a = e->s[0].qp, *b = e->s[1].qp;
	int ret;

	ret = to_init(a);
	if (!ret)
		ret = to_init(b);
	if (!ret)
		ret = to_rtr(e, a, b->qp_num, psn1);
	if (!ret)
		ret = to_rtr(e, b, a->qp_num, psn0);
	if (!ret)
		ret = to_rts(e, a, psn0);
	if (!ret)
		ret = to_rts(e, b, psn1);
	return ret;
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
}

/* Two connected QPs, a CQ and a registered buffer each. */
static int env_open(struct env *e, bool ex, uint32_t inl, uint32_t psn0,
		    uint32_t psn1)
{
	int i;

	memset(e, 0, sizeof(*e));
	e->ex = ex;
	e->ctx = open_dev();
	CHECK(e->ctx, "open the emulated mana device");
	if (!e->ctx)
		return -1;
	e->gid_index = find_gid(e);
	CHECK(e->gid_index >= 0, "a RoCE v2 IPv4 GID on port 1 (run with --ip)");
	if (e->gid_index < 0)
		return -1;
	e->pd = ibv_alloc_pd(e->ctx);
	CHECK(e->pd, "alloc_pd");
	if (!e->pd)
		return -1;
	for (i = 0; i < 2; i++) {
		struct side *s = &e->s[i];

		if (ex) {
			struct ibv_cq_init_attr_ex ca = {
				.cqe = 4 * DEPTH,
				.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
					    IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP,
			};

			s->cqx = ibv_create_cq_ex(e->ctx, &ca);
			s->cq = s->cqx ? ibv_cq_ex_to_cq(s->cqx) : NULL;
		} else {
			s->cq = ibv_create_cq(e->ctx, 4 * DEPTH, NULL, NULL, 0);
		}
		CHECK(s->cq, "create_cq %d: %s", i, strerror(errno));
		s->buf = aligned_alloc(4096, BUF_SIZE);
		if (s->buf)
			memset(s->buf, 0, BUF_SIZE);
		s->mr = s->buf ? ibv_reg_mr(e->pd, s->buf, BUF_SIZE,
					    IBV_ACCESS_LOCAL_WRITE |
					    IBV_ACCESS_REMOTE_WRITE |
					    IBV_ACCESS_REMOTE_READ) : NULL;
		CHECK(s->mr, "reg_mr %d: %s", i, strerror(errno));
		if (!s->cq || !s->mr)
			return -1;
		s->qp = make_qp(e, s->cq, inl);
		CHECK(s->qp, "create RC QP %d: %s", i, strerror(errno));
		if (!s->qp)
			return -1;
	}
	CHECK_ERRNO(connect_pair(e, psn0, psn1), 0);
	return 0;
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

static int post_recv(struct side *s, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)(s->buf + off), len, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(s->qp, &wr, &bad);
}

/* ---- ops ---------------------------------------------------------------- */

/* A one-WR post through ibv_post_send or ibv_wr_*, as the env says. */
static int post_one(struct env *e, struct side *s, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_qp_ex *x;

	if (!e->ex)
		return ibv_post_send(s->qp, wr, &bad);
	x = ibv_qp_to_qp_ex(s->qp);
	ibv_wr_start(x);
	x->wr_id = wr->wr_id;
	x->wr_flags = (unsigned int)wr->send_flags;
	switch (wr->opcode) {
	case IBV_WR_SEND:
		ibv_wr_send(x);
		break;
	case IBV_WR_SEND_WITH_IMM:
		ibv_wr_send_imm(x, wr->imm_data);
		break;
	case IBV_WR_RDMA_WRITE:
		ibv_wr_rdma_write(x, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr);
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		ibv_wr_rdma_write_imm(x, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr,
				      wr->imm_data);
		break;
	case IBV_WR_RDMA_READ:
		ibv_wr_rdma_read(x, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr);
		break;
	default:
		ibv_wr_abort(x);
		return EINVAL;
	}
	if (wr->send_flags & IBV_SEND_INLINE) {
		struct ibv_data_buf db[4];
		int i;

		for (i = 0; i < wr->num_sge; i++)
			db[i] = (struct ibv_data_buf){
				(void *)(uintptr_t)wr->sg_list[i].addr,
				wr->sg_list[i].length };
		ibv_wr_set_inline_data_list(x, (size_t)wr->num_sge, db);
	} else {
		ibv_wr_set_sge_list(x, (size_t)wr->num_sge, wr->sg_list);
	}
	return ibv_wr_complete(x);
}

/* One completion from @s's CQ, through ibv_poll_cq or the extended CQ. */
static int get_wc(struct env *e, struct side *s, struct ibv_wc *wc)
{
	struct ibv_poll_cq_attr pa = { 0 };
	double end = now() + 30;
	int ret;

	if (!e->ex)
		return wait_wc(s->cq, wc, 1);
	while (now() < end) {
		ret = ibv_start_poll(s->cqx, &pa);
		if (ret == ENOENT) {
			usleep(50);
			continue;
		}
		if (ret)
			return -1;
		memset(wc, 0, sizeof(*wc));
		wc->wr_id = s->cqx->wr_id;
		wc->status = s->cqx->status;
		wc->opcode = ibv_wc_read_opcode(s->cqx);
		wc->byte_len = ibv_wc_read_byte_len(s->cqx);
		wc->wc_flags = ibv_wc_read_wc_flags(s->cqx);
		wc->qp_num = ibv_wc_read_qp_num(s->cqx);
		wc->src_qp = ibv_wc_read_src_qp(s->cqx);
		wc->vendor_err = ibv_wc_read_vendor_err(s->cqx);
		if (wc->wc_flags & IBV_WC_WITH_IMM)
			wc->imm_data = ibv_wc_read_imm_data(s->cqx);
		ibv_end_poll(s->cqx);
		return 1;
	}
	return 0;
}

static void expect_wc(struct env *e, struct side *s, uint64_t wr_id,
		      enum ibv_wc_opcode op, uint32_t len, const char *what)
{
	struct ibv_wc wc;

	CHECK(get_wc(e, s, &wc) == 1, "%s: a completion", what);
	CHECK(wc.wr_id == wr_id && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == op && wc.qp_num == s->qp->qp_num,
	      "%s: wr_id %llu status %s opcode %d qp %u", what,
	      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
	      wc.opcode, wc.qp_num);
	if (op & IBV_WC_RECV)
		CHECK(wc.byte_len == len, "%s: byte_len %u, want %u", what,
		      wc.byte_len, len);
}

static void case_ops_api(bool ex)
{
	struct env e;
	struct side *a, *b;
	struct ibv_sge sge[4];
	struct ibv_send_wr wr;
	struct ibv_wc wc;
	uint32_t sizes[] = { 1, 64, 1000, 1024, 1025, 4096, 65536, 300000 };
	unsigned int i;
	int k;

	if (env_open(&e, ex, 128, 0xfffff0, 77))
		goto out;
	a = &e.s[0];
	b = &e.s[1];

	/* SEND of each size, one SGE; PSNs wrap past 2^24 on the way */
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		fill(a->buf, sizes[i], i);
		memset(b->buf, 0, sizes[i] + 16);
		CHECK_ERRNO(post_recv(b, 1000 + i, 0, BUF_SIZE / 2), 0);
		sge[0] = (struct ibv_sge){ (uintptr_t)a->buf, sizes[i], a->mr->lkey };
		wr = (struct ibv_send_wr){ .wr_id = i, .sg_list = sge, .num_sge = 1,
					   .opcode = IBV_WR_SEND,
					   .send_flags = IBV_SEND_SIGNALED };
		CHECK_ERRNO(post_one(&e, a, &wr), 0);
		expect_wc(&e, a, i, IBV_WC_SEND, sizes[i], "send");
		expect_wc(&e, b, 1000 + i, IBV_WC_RECV, sizes[i], "recv");
		CHECK(!memcmp(a->buf, b->buf, sizes[i]) && !b->buf[sizes[i]],
		      "send of %u bytes: data exact", sizes[i]);
	}

	/* multi-SGE SEND into a multi-SGE receive: every SGE counts */
	fill(a->buf, 4096, 9);
	memset(b->buf, 0, 8192);
	{
		struct ibv_sge rs[3] = {
			{ (uintptr_t)b->buf, 100, b->mr->lkey },
			{ (uintptr_t)(b->buf + 1000), 50, b->mr->lkey },
			{ (uintptr_t)(b->buf + 2000), 4000, b->mr->lkey },
		};
		struct ibv_recv_wr rw = { .wr_id = 77, .sg_list = rs, .num_sge = 3 };
		struct ibv_recv_wr *rbad;

		CHECK_ERRNO(ibv_post_recv(b->qp, &rw, &rbad), 0);
	}
	sge[0] = (struct ibv_sge){ (uintptr_t)a->buf, 30, a->mr->lkey };
	sge[1] = (struct ibv_sge){ (uintptr_t)(a->buf + 500), 90, a->mr->lkey };
	sge[2] = (struct ibv_sge){ (uintptr_t)(a->buf + 3000), 1000, a->mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 50, .sg_list = sge, .num_sge = 3,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	CHECK_ERRNO(post_one(&e, a, &wr), 0);
	expect_wc(&e, a, 50, IBV_WC_SEND, 0, "multi-SGE send");
	expect_wc(&e, b, 77, IBV_WC_RECV, 1120, "multi-SGE recv");
	{
		uint8_t want[1120];

		memcpy(want, a->buf, 30);
		memcpy(want + 30, a->buf + 500, 90);
		memcpy(want + 120, a->buf + 3000, 1000);
		CHECK(!memcmp(b->buf, want, 100) &&
		      !memcmp(b->buf + 1000, want + 100, 50) &&
		      !memcmp(b->buf + 2000, want + 150, 970),
		      "multi-SGE: the bytes land across the receive SGEs in order");
	}

	/* zero-length SEND with immediate, no SGE at all */
	CHECK_ERRNO(post_recv(b, 78, 0, 64), 0);
	wr = (struct ibv_send_wr){ .wr_id = 51, .opcode = IBV_WR_SEND_WITH_IMM,
				   .imm_data = htobe32(0x12345678),
				   .send_flags = IBV_SEND_SIGNALED };
	CHECK_ERRNO(post_one(&e, a, &wr), 0);
	expect_wc(&e, a, 51, IBV_WC_SEND, 0, "zero-length send with imm");
	CHECK(get_wc(&e, b, &wc) == 1 && wc.wr_id == 78 && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_RECV && wc.byte_len == 0 &&
	      (wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htobe32(0x12345678) &&
	      wc.src_qp == a->qp->qp_num,
	      "zero-length recv: imm %#x flags %#x len %u src_qp %u",
	      be32toh(wc.imm_data), wc.wc_flags, wc.byte_len, wc.src_qp);

	/* RDMA WRITE, two SGEs, no receive consumed */
	fill(a->buf, 8192, 3);
	memset(b->buf, 0, 16384);
	sge[0] = (struct ibv_sge){ (uintptr_t)a->buf, 3000, a->mr->lkey };
	sge[1] = (struct ibv_sge){ (uintptr_t)(a->buf + 4000), 2000, a->mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 52, .sg_list = sge, .num_sge = 2,
				   .opcode = IBV_WR_RDMA_WRITE,
				   .send_flags = IBV_SEND_SIGNALED,
				   .wr.rdma = { (uintptr_t)(b->buf + 100), b->mr->rkey } };
	CHECK_ERRNO(post_one(&e, a, &wr), 0);
	expect_wc(&e, a, 52, IBV_WC_RDMA_WRITE, 0, "write");
	CHECK(!memcmp(b->buf + 100, a->buf, 3000) &&
	      !memcmp(b->buf + 3100, a->buf + 4000, 2000) && !b->buf[99] &&
	      !b->buf[5100], "write: data exact, nothing around it");

	/* RDMA WRITE with immediate: the responder's receive completes */
	CHECK_ERRNO(post_recv(b, 79, 0, 16), 0);
	fill(a->buf, 2048, 4);
	wr = (struct ibv_send_wr){ .wr_id = 53, .sg_list = sge, .num_sge = 1,
				   .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				   .imm_data = htobe32(0xcafe0001),
				   .send_flags = IBV_SEND_SIGNALED,
				   .wr.rdma = { (uintptr_t)(b->buf + 8192), b->mr->rkey } };
	sge[0].length = 2048;
	CHECK_ERRNO(post_one(&e, a, &wr), 0);
	expect_wc(&e, a, 53, IBV_WC_RDMA_WRITE, 0, "write with imm");
	CHECK(get_wc(&e, b, &wc) == 1 && wc.wr_id == 79 &&
	      wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	      (wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htobe32(0xcafe0001) &&
	      wc.byte_len == 2048,
	      "write with imm at the responder: opcode %d imm %#x len %u",
	      wc.opcode, be32toh(wc.imm_data), wc.byte_len);
	CHECK(!memcmp(b->buf + 8192, a->buf, 2048), "write with imm: data exact");

	/* RDMA READ into three local SGEs, multi-packet */
	fill(b->buf + 65536, 10000, 5);
	memset(a->buf, 0, 20000);
	sge[0] = (struct ibv_sge){ (uintptr_t)a->buf, 1000, a->mr->lkey };
	sge[1] = (struct ibv_sge){ (uintptr_t)(a->buf + 2000), 5000, a->mr->lkey };
	sge[2] = (struct ibv_sge){ (uintptr_t)(a->buf + 9000), 4000, a->mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 54, .sg_list = sge, .num_sge = 3,
				   .opcode = IBV_WR_RDMA_READ,
				   .send_flags = IBV_SEND_SIGNALED,
				   .wr.rdma = { (uintptr_t)(b->buf + 65536), b->mr->rkey } };
	CHECK_ERRNO(post_one(&e, a, &wr), 0);
	CHECK(get_wc(&e, a, &wc) == 1 && wc.wr_id == 54 && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_RDMA_READ && wc.byte_len == 10000,
	      "read: status %s opcode %d len %u", ibv_wc_status_str(wc.status),
	      wc.opcode, wc.byte_len);
	CHECK(!memcmp(a->buf, b->buf + 65536, 1000) &&
	      !memcmp(a->buf + 2000, b->buf + 66536, 5000) &&
	      !memcmp(a->buf + 9000, b->buf + 71536, 4000) && !a->buf[1000] &&
	      !a->buf[13000], "read: data exact in every SGE");

	/* inline: the buffer is reused at once after post_send returns */
	CHECK_ERRNO(post_recv(b, 80, 0, 256), 0);
	fill(a->buf, 100, 6);
	{
		uint8_t want[100];

		memcpy(want, a->buf, 100);
		sge[0] = (struct ibv_sge){ (uintptr_t)a->buf, 60, 0 };
		sge[1] = (struct ibv_sge){ (uintptr_t)(a->buf + 60), 40, 0 };
		wr = (struct ibv_send_wr){ .wr_id = 55, .sg_list = sge, .num_sge = 2,
					   .opcode = IBV_WR_SEND,
					   .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE };
		CHECK_ERRNO(post_one(&e, a, &wr), 0);
		memset(a->buf, 0xee, 100);
		expect_wc(&e, a, 55, IBV_WC_SEND, 0, "inline send");
		expect_wc(&e, b, 80, IBV_WC_RECV, 100, "inline recv");
		CHECK(!memcmp(b->buf, want, 100), "inline: the data as it was at post time");
	}

	/* unsignaled WRs complete silently, the signaled one after them */
	for (k = 0; k < 10; k++) {
		fill(a->buf + k * 64, 64, 20 + k);
		sge[0] = (struct ibv_sge){ (uintptr_t)(a->buf + k * 64), 64, a->mr->lkey };
		wr = (struct ibv_send_wr){ .wr_id = 200 + k, .sg_list = sge, .num_sge = 1,
					   .opcode = IBV_WR_RDMA_WRITE,
					   .send_flags = k == 9 ? IBV_SEND_SIGNALED : 0,
					   .wr.rdma = { (uintptr_t)(b->buf + 200000 + k * 64),
							b->mr->rkey } };
		CHECK_ERRNO(post_one(&e, a, &wr), 0);
	}
	expect_wc(&e, a, 209, IBV_WC_RDMA_WRITE, 0, "the signaled write after 9 unsignaled");
	CHECK(!memcmp(b->buf + 200000, a->buf, 640), "unsignaled writes: data exact");
	CHECK(drain_extra(a->cq) == 0 && drain_extra(b->cq) == 0,
	      "no completion for unsignaled WRs");
out:
	env_close(&e);
}

/*
 * An RNIC CQ is not bound by max_cqe (the Ethernet queues' max_qp_wr):
 * mana_ib does not hold it to that, nor does rdma-core's libmana, and
 * libfabric's ofi_rxm asks for (tx + rx depth) x 256 entries.
 */
static void case_deep_cq(void)
{
	struct ibv_device_attr attr;
	struct ibv_context *ctx = open_dev();
	struct ibv_cq *cq;
	int want;

	CHECK(ctx, "open the emulated mana device");
	if (!ctx)
		return;
	CHECK_ERRNO(ibv_query_device(ctx, &attr), 0);
	want = 4 * attr.max_cqe + 1;
	cq = ibv_create_cq(ctx, want, NULL, NULL, 0);
	CHECK(cq && cq->cqe >= want, "a CQ of %d entries (max_cqe %d): %s, cqe %d",
	      want, attr.max_cqe, cq ? "made" : strerror(errno), cq ? cq->cqe : 0);
	if (cq)
		CHECK_ERRNO(ibv_destroy_cq(cq), 0);
	ibv_close_device(ctx);
}

static void case_ops(void)
{
	case_ops_api(false);
	case_ops_api(true);
	case_deep_cq();
}

/* ---- flush ------------------------------------------------------------- */

static void case_flush(void)
{
	uint64_t wakes = 0, now = 0;
	bool emu = !emu_wakeups(&wakes);
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	struct ibv_qp_init_attr ia;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc[2 * DEPTH];
	uint8_t seen[DEPTH] = { 0 };
	struct ibv_sge sge;
	struct side *a, *b;
	struct env e;
	int n, i, dup = 0;

	if (env_open(&e, false, 0, 1, 2))
		goto out;
	a = &e.s[0];
	b = &e.s[1];
	/*
	 * Retry exhaustion below waits for 8 expiries, each twice the last
	 * (rc_req.c): 4.2 ms (timeout 10) to start with, not 67 ms, makes
	 * that half a second instead of eight.
	 */
	e.timeout = 10;
	qa.qp_state = IBV_QPS_RESET;
	CHECK_ERRNO(ibv_modify_qp(a->qp, &qa, IBV_QP_STATE), 0);
	CHECK_ERRNO(ibv_modify_qp(b->qp, &qa, IBV_QP_STATE), 0);
	CHECK_ERRNO(connect_pair(&e, 100, 200), 0);
	qa.qp_state = IBV_QPS_ERR;

	/* user ERR: 20 receives outstanding, each flushed once */
	for (i = 0; i < 20; i++)
		CHECK_ERRNO(post_recv(b, i, 0, 64), 0);
	CHECK_ERRNO(ibv_modify_qp(b->qp, &qa, IBV_QP_STATE), 0);
	n = wait_wc(b->cq, wc, 20);
	CHECK(n == 20, "20 flushed receives, got %d", n);
	for (i = 0; i < n; i++) {
		CHECK(wc[i].status == IBV_WC_WR_FLUSH_ERR && wc[i].opcode == IBV_WC_RECV &&
		      wc[i].qp_num == b->qp->qp_num, "flush %d: %s", i,
		      ibv_wc_status_str(wc[i].status));
		if (wc[i].wr_id < DEPTH && seen[wc[i].wr_id]++)
			dup++;
	}
	CHECK(!dup, "no receive flushed twice");
	CHECK(drain_extra(b->cq) == 0, "nothing after the flush");
	/* a receive posted in ERR is flushed as well */
	CHECK_ERRNO(post_recv(b, 99, 0, 64), 0);
	CHECK(wait_wc(b->cq, wc, 1) == 1 && wc[0].wr_id == 99 &&
	      wc[0].status == IBV_WC_WR_FLUSH_ERR, "a receive posted in ERR is flushed");
	/* and so is a send (mana_rc(7)) */
	CHECK_ERRNO(ibv_post_send(b->qp, &(struct ibv_send_wr){ .wr_id = 98,
				  .opcode = IBV_WR_SEND }, &bad), 0);
	CHECK(wait_wc(b->cq, wc, 1) == 1 && wc[0].wr_id == 98 &&
	      wc[0].status == IBV_WC_WR_FLUSH_ERR && wc[0].opcode == IBV_WC_SEND,
	      "a send posted in ERR is flushed");

	/*
	 * a responder in ERR answers nothing: retry exceeded, the rest
	 * flushed.  The requester waits for an ACK after the first: the
	 * doorbells of the next two wake no sleeping device (mana-emu)
	 */
	sge = (struct ibv_sge){ (uintptr_t)a->buf, 64, a->mr->lkey };
	for (i = 0; i < 3; i++) {
		wr = (struct ibv_send_wr){ .wr_id = 40 + i, .sg_list = &sge, .num_sge = 1,
					   .opcode = IBV_WR_RDMA_WRITE,
					   .wr.rdma = { (uintptr_t)b->buf, b->mr->rkey } };
		if (i == 1 && emu) {
			usleep(50000);
			emu_wakeups(&wakes);
		}
		CHECK_ERRNO(ibv_post_send(a->qp, &wr, &bad), 0);
	}
	if (emu) {
		usleep(20000);
		emu_wakeups(&now);
		CHECK(now == wakes, "doorbells of a requester awaiting an ACK "
		      "woke the device %llu times", (unsigned long long)(now - wakes));
	}
	n = wait_wc(a->cq, wc, 3);
	CHECK(n == 3 && wc[0].wr_id == 40 && wc[0].status == IBV_WC_RETRY_EXC_ERR &&
	      wc[1].wr_id == 41 && wc[1].status == IBV_WC_WR_FLUSH_ERR &&
	      wc[2].wr_id == 42 && wc[2].status == IBV_WC_WR_FLUSH_ERR,
	      "to a QP in ERR: retry exceeded (unsignaled, still reported), then flushed (%d: %s)",
	      n, n > 0 ? ibv_wc_status_str(wc[0].status) : "-");
	CHECK(drain_extra(a->cq) == 0, "nothing after the flush");
	qa.qp_state = IBV_QPS_RESET;
	CHECK_ERRNO(ibv_modify_qp(a->qp, &qa, IBV_QP_STATE), 0);
	CHECK_ERRNO(ibv_modify_qp(b->qp, &qa, IBV_QP_STATE), 0);
	CHECK_ERRNO(connect_pair(&e, 300, 400), 0);

	/* bad rkey: remote access error on the requester, the rest flushed */
	memset(seen, 0, sizeof(seen));
	sge = (struct ibv_sge){ (uintptr_t)a->buf, 64, a->mr->lkey };
	for (i = 0; i < 8; i++) {
		wr = (struct ibv_send_wr){ .wr_id = i, .sg_list = &sge, .num_sge = 1,
					   .opcode = IBV_WR_RDMA_WRITE,
					   .send_flags = i % 2 ? IBV_SEND_SIGNALED : 0,
					   .wr.rdma = { (uintptr_t)b->buf,
							i == 3 ? b->mr->rkey ^ 0x5a5a00 :
								 b->mr->rkey } };
		CHECK_ERRNO(ibv_post_send(a->qp, &wr, &bad), 0);
	}
	n = wait_wc(a->cq, wc, 6);
	CHECK(n == 6, "writes 1 (ok), 3 (error) and 4..7 (flushed): %d completions", n);
	for (i = 0; i < n; i++) {
		enum ibv_wc_status want = wc[i].wr_id < 3 ? IBV_WC_SUCCESS :
					  wc[i].wr_id == 3 ? IBV_WC_REM_ACCESS_ERR :
							     IBV_WC_WR_FLUSH_ERR;

		CHECK(wc[i].status == want, "write %llu: %s, want %s",
		      (unsigned long long)wc[i].wr_id, ibv_wc_status_str(wc[i].status),
		      ibv_wc_status_str(want));
		if (wc[i].wr_id < DEPTH && seen[wc[i].wr_id]++)
			dup++;
	}
	CHECK(n < 1 || wc[0].wr_id == 1, "the first completion is write 1 (0 unsignaled)");
	CHECK(!dup, "no write completed twice");
	CHECK(drain_extra(a->cq) == 0, "nothing after the flush");
	memset(&qa, 0, sizeof(qa));
	CHECK_ERRNO(ibv_query_qp(a->qp, &qa, IBV_QP_STATE, &ia), 0);
	CHECK(qa.qp_state == IBV_QPS_ERR, "the requester QP is in ERR: %d", qa.qp_state);
	/* RESET and back: the QP works again */
	qa.qp_state = IBV_QPS_RESET;
	CHECK_ERRNO(ibv_modify_qp(a->qp, &qa, IBV_QP_STATE), 0);
	CHECK_ERRNO(ibv_modify_qp(b->qp, &qa, IBV_QP_STATE), 0);
	CHECK_ERRNO(connect_pair(&e, 500, 600), 0);
	CHECK_ERRNO(post_recv(b, 7, 0, 64), 0);
	fill(a->buf, 64, 77);
	wr = (struct ibv_send_wr){ .wr_id = 8, .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	CHECK_ERRNO(ibv_post_send(a->qp, &wr, &bad), 0);
	CHECK(wait_wc(a->cq, wc, 1) == 1 && wc[0].wr_id == 8 &&
	      wc[0].status == IBV_WC_SUCCESS, "after RESET: send ok");
	CHECK(wait_wc(b->cq, wc, 1) == 1 && wc[0].wr_id == 7 &&
	      wc[0].status == IBV_WC_SUCCESS && !memcmp(a->buf, b->buf, 64),
	      "after RESET: received");
out:
	env_close(&e);
}

/* ---- bad inputs ---------------------------------------------------------- */

static int create_err(struct env *e, struct ibv_qp_init_attr_ex *qa)
{
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp_ex(e->ctx, qa);
	if (qp) {
		ibv_destroy_qp(qp);
		return 0;
	}
	return errno;
}

static void case_bad(void)
{
	struct ibv_qp_init_attr_ex qa, base;
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_qp_attr at;
	struct ibv_sge sge[8];
	struct mana_emu_counts c0, c1;
	struct ibv_srq *srq = NULL;
	struct ibv_qp *fresh;
	struct ibv_wc wc[4];
	struct side *a, *b;
	struct env e;
	int i;

	if (env_open(&e, false, 16, 10, 20))
		goto out;
	a = &e.s[0];
	b = &e.s[1];
	base = (struct ibv_qp_init_attr_ex){
		.qp_type = IBV_QPT_RC, .send_cq = a->cq, .recv_cq = a->cq,
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = e.pd,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	CHECK(emu_counts(&c0) == 0, "counts");

	qa = base;
	qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qa.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP;
	CHECK_ERRNO(create_err(&e, &qa), EOPNOTSUPP);
	qa = base;
	qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	qa.send_ops_flags = IBV_QP_EX_WITH_BIND_MW;
	CHECK_ERRNO(create_err(&e, &qa), EOPNOTSUPP);
	qa = base;
	qa.cap.max_send_sge = 30;
	CHECK_ERRNO(create_err(&e, &qa), EINVAL);
	qa = base;
	qa.cap.max_recv_sge = 16;
	CHECK_ERRNO(create_err(&e, &qa), EINVAL);
	qa = base;
	qa.cap.max_send_wr = 1u << 30;
	CHECK_ERRNO(create_err(&e, &qa), EINVAL);
	qa = base;
	qa.cap.max_inline_data = 100000;
	CHECK_ERRNO(create_err(&e, &qa), EINVAL);
	qa = base;
	qa.recv_cq = NULL;
	CHECK_ERRNO(create_err(&e, &qa), EINVAL);
	qa = base;
	qa.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	qa.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	CHECK_ERRNO(create_err(&e, &qa), EOPNOTSUPP);
	{
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };

		srq = ibv_create_srq(e.pd, &sa);
		qa = base;
		qa.srq = srq ? srq : (struct ibv_srq *)&sa;
		if (srq)
			CHECK_ERRNO(create_err(&e, &qa), EOPNOTSUPP);
		else
			CHECK(errno == EOPNOTSUPP, "no SRQs: %s", strerror(errno));
	}
	qa = base;
	qa.qp_type = IBV_QPT_UC;
	CHECK_ERRNO(create_err(&e, &qa), EOPNOTSUPP);
	CHECK(emu_counts(&c1) == 0 && c1.qps == c0.qps, "no QP left behind (%u -> %u)",
	      c0.qps, c1.qps);

	/*
	 * modify: missing required attributes, wrong current state -- the
	 * device refuses them (EPROTO): mana_ib checks no transition
	 */
	fresh = ibv_create_qp_ex(e.ctx, &base);
	CHECK(fresh, "a fresh QP: %s", strerror(errno));
	if (fresh) {
		memset(&at, 0, sizeof(at));
		at.qp_state = IBV_QPS_RTR;
		CHECK_ERRNO(ibv_modify_qp(fresh, &at, IBV_QP_STATE), EPROTO);
		at.qp_state = IBV_QPS_INIT;
		CHECK_ERRNO(ibv_modify_qp(fresh, &at, IBV_QP_STATE), EPROTO);
		CHECK_ERRNO(to_init(fresh), 0);
		at.qp_state = IBV_QPS_RTS;
		CHECK_ERRNO(ibv_modify_qp(fresh, &at, IBV_QP_STATE), EPROTO);
		at.qp_state = IBV_QPS_RTR;
		at.cur_qp_state = IBV_QPS_RTS;
		CHECK_ERRNO(ibv_modify_qp(fresh, &at, IBV_QP_STATE | IBV_QP_CUR_STATE), EPROTO);
		/* post_send before RTS, post_recv in RESET */
		sge[0] = (struct ibv_sge){ (uintptr_t)a->buf, 8, a->mr->lkey };
		wr = (struct ibv_send_wr){ .wr_id = 1, .sg_list = sge, .num_sge = 1,
					   .opcode = IBV_WR_SEND };
		bad = NULL;
		CHECK(ibv_post_send(fresh, &wr, &bad) == EINVAL && bad == &wr,
		      "post_send in INIT: EINVAL, bad_wr");
		at.qp_state = IBV_QPS_RESET;
		CHECK_ERRNO(ibv_modify_qp(fresh, &at, IBV_QP_STATE), 0);
		rwr = (struct ibv_recv_wr){ .wr_id = 1, .sg_list = sge, .num_sge = 1 };
		rbad = NULL;
		CHECK(ibv_post_recv(fresh, &rwr, &rbad) == EINVAL && rbad == &rwr,
		      "post_recv in RESET: EINVAL, bad_wr");
		CHECK_ERRNO(ibv_destroy_qp(fresh), 0);
	}

	/* post_send: each bad WR second in a list; the first goes, it stops */
	{
		struct {
			const char *what;
			struct ibv_send_wr wr;
			int want;
		} cases[] = {
			{ "atomic", { .opcode = IBV_WR_ATOMIC_CMP_AND_SWP, .sg_list = sge,
				      .num_sge = 1 }, EINVAL },
			{ "fetch-add", { .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
					 .sg_list = sge, .num_sge = 1 }, EINVAL },
			{ "bind MW", { .opcode = IBV_WR_BIND_MW }, EINVAL },
			{ "local inv", { .opcode = IBV_WR_LOCAL_INV }, EINVAL },
			{ "send with inv", { .opcode = IBV_WR_SEND_WITH_INV }, EINVAL },
			{ "TSO", { .opcode = IBV_WR_TSO }, EINVAL },
			{ "too many SGEs", { .opcode = IBV_WR_SEND, .sg_list = sge,
					     .num_sge = 5 }, EINVAL },
			{ "negative SGEs", { .opcode = IBV_WR_SEND, .sg_list = sge,
					     .num_sge = -1 }, EINVAL },
			{ "SGEs without list", { .opcode = IBV_WR_SEND, .num_sge = 1 },
			  EINVAL },
			{ "inline too long", { .opcode = IBV_WR_SEND, .sg_list = sge,
					       .num_sge = 1,
					       .send_flags = IBV_SEND_INLINE }, EINVAL },
			{ "inline read", { .opcode = IBV_WR_RDMA_READ, .sg_list = sge,
					   .num_sge = 1, .send_flags = IBV_SEND_INLINE },
			  EINVAL },
			{ "IP checksum flag", { .opcode = IBV_WR_SEND,
						.send_flags = IBV_SEND_IP_CSUM }, EINVAL },
		};
		unsigned int k;

		for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
			struct ibv_send_wr first = { .wr_id = 1000 + k, .opcode = IBV_WR_RDMA_WRITE,
						     .sg_list = sge, .num_sge = 1,
						     .send_flags = IBV_SEND_SIGNALED,
						     .wr.rdma = { (uintptr_t)b->buf, b->mr->rkey } };
			struct ibv_send_wr third = first;

			sge[0] = (struct ibv_sge){ (uintptr_t)a->buf,
						   cases[k].wr.send_flags & IBV_SEND_INLINE ?
						   64 : 8, a->mr->lkey };
			first.next = &cases[k].wr;
			cases[k].wr.wr_id = 2000 + k;
			cases[k].wr.next = &third;
			third.wr_id = 3000 + k;
			third.next = NULL;
			bad = NULL;
			CHECK(ibv_post_send(a->qp, &first, &bad) == cases[k].want &&
			      bad == &cases[k].wr, "post_send %s: errno and bad_wr",
			      cases[k].what);
			CHECK(wait_wc(a->cq, wc, 1) == 1 && wc[0].wr_id == 1000 + k &&
			      wc[0].status == IBV_WC_SUCCESS, "%s: the WR before it went",
			      cases[k].what);
		}
		CHECK(drain_extra(a->cq) == 0, "nothing of the bad WRs or after them");
	}

	/* post_recv: too many SGEs */
	rwr = (struct ibv_recv_wr){ .wr_id = 5, .sg_list = sge, .num_sge = 5 };
	rbad = NULL;
	CHECK(ibv_post_recv(b->qp, &rwr, &rbad) == EINVAL && rbad == &rwr,
	      "post_recv with 5 SGEs: EINVAL");

	/* full: max_send_wr unsignaled WRs outstanding, the next is ENOMEM */
	sge[0] = (struct ibv_sge){ (uintptr_t)a->buf, 8, a->mr->lkey };
	for (i = 0; i < DEPTH + 1; i++) {
		wr = (struct ibv_send_wr){ .wr_id = 5000 + i, .sg_list = sge, .num_sge = 1,
					   .opcode = IBV_WR_RDMA_WRITE,
					   .wr.rdma = { (uintptr_t)b->buf, b->mr->rkey } };
		if (ibv_post_send(a->qp, &wr, &bad))
			break;
	}
	CHECK(i == DEPTH, "%d unsignaled WRs fit a queue of %d", i, DEPTH);
	CHECK_ERRNO(ibv_post_send(a->qp, &wr, &bad), ENOMEM);
	/* full receive queue */
	for (i = 0; i < DEPTH + 1; i++)
		if (post_recv(b, 6000 + i, 0, 8))
			break;
	CHECK(i == DEPTH, "%d receives fit a queue of %d", i, DEPTH);
	CHECK_ERRNO(post_recv(b, 7000, 0, 8), ENOMEM);

	/* ibv_wr_* on a QP made without send_ops_flags is not there */
	CHECK(ibv_qp_to_qp_ex(a->qp) == NULL ||
	      !(ibv_qp_to_qp_ex(a->qp)->wr_start), "no ibv_qp_ex without send_ops_flags");
out:
	if (srq)
		ibv_destroy_srq(srq);
	env_close(&e);
}

/* ibv_wr_* bad inputs: nothing posted, the error at ibv_wr_complete */
static void case_bad_ex(void)
{
	struct ibv_wc wc[4];
	struct ibv_qp_ex *x;
	unsigned int k;
	struct side *a, *b;
	struct env e;

	if (env_open(&e, true, 16, 10, 20))
		goto out;
	a = &e.s[0];
	b = &e.s[1];
	x = ibv_qp_to_qp_ex(a->qp);
	CHECK(x, "ibv_qp_ex");
	if (!x)
		goto out;
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, b->mr->rkey, (uintptr_t)b->buf);
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)a->buf, 8);
	ibv_wr_atomic_fetch_add(x, b->mr->rkey, (uintptr_t)b->buf, 1);
	CHECK_ERRNO(ibv_wr_complete(x), EOPNOTSUPP);
	/* the operations newer headers add are refused the same way */
#if MANA_RDMA_CORE >= 44
	ibv_wr_start(x);
	ibv_wr_atomic_write(x, b->mr->rkey, (uintptr_t)b->buf, a->buf);
	CHECK_ERRNO(ibv_wr_complete(x), EOPNOTSUPP);
#endif
#if MANA_RDMA_CORE >= 45
	ibv_wr_start(x);
	ibv_wr_flush(x, b->mr->rkey, (uintptr_t)b->buf, 8, IBV_FLUSH_GLOBAL,
		     IBV_FLUSH_RANGE);
	CHECK_ERRNO(ibv_wr_complete(x), EOPNOTSUPP);
#endif
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, a->buf, 64);
	CHECK_ERRNO(ibv_wr_complete(x), EINVAL);
	ibv_wr_start(x);
	x->wr_id = 2;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)a->buf, 8);
	ibv_wr_abort(x);
	CHECK(drain_extra(a->cq) == 0 && drain_extra(b->cq) == 0,
	      "a failed or aborted batch posts nothing");
	/* and the QP still works */
	ibv_wr_start(x);
	x->wr_id = 3;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, b->mr->rkey, (uintptr_t)b->buf);
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)a->buf, 8);
	CHECK_ERRNO(ibv_wr_complete(x), 0);
	CHECK(wait_wc(a->cq, wc, 1) == 1 && wc[0].wr_id == 3 &&
	      wc[0].status == IBV_WC_SUCCESS, "the next batch completes");
	/*
	 * WQEs are written as the WRs come: a batch that fails after some
	 * (one more than the SQ holds; a READ, then an unsupported WR) must
	 * take its WQEs, PSNs and the READ's landing WQE back, or the next
	 * batch goes out with the wrong PSNs and lands in the wrong place.
	 */
	ibv_wr_start(x);
	for (k = 0; k <= DEPTH; k++) {
		x->wr_id = 100 + k;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(x, b->mr->rkey, (uintptr_t)b->buf);
		ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)a->buf, 8);
	}
	CHECK_ERRNO(ibv_wr_complete(x), ENOMEM);
	ibv_wr_start(x);
	x->wr_id = 200;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(x, b->mr->rkey, (uintptr_t)b->buf + 4096);
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)a->buf + 4096, 16);
	ibv_wr_atomic_fetch_add(x, b->mr->rkey, (uintptr_t)b->buf, 1);
	CHECK_ERRNO(ibv_wr_complete(x), EOPNOTSUPP);
	CHECK(drain_extra(a->cq) == 0 && drain_extra(b->cq) == 0,
	      "a batch that failed after some WRs posts nothing");
	for (k = 0; k < 16; k++)
		b->buf[8192 + k] = (uint8_t)(0xa0 + k);
	ibv_wr_start(x);
	x->wr_id = 4;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(x, b->mr->rkey, (uintptr_t)b->buf + 8192);
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)a->buf + 8192, 16);
	x->wr_id = 5;
	ibv_wr_rdma_write(x, b->mr->rkey, (uintptr_t)b->buf);
	ibv_wr_set_sge(x, a->mr->lkey, (uintptr_t)a->buf, 8);
	CHECK_ERRNO(ibv_wr_complete(x), 0);
	CHECK(wait_wc(a->cq, wc, 2) == 2 && wc[0].wr_id == 4 && wc[1].wr_id == 5 &&
	      wc[0].status == IBV_WC_SUCCESS && wc[1].status == IBV_WC_SUCCESS &&
	      !memcmp(a->buf + 8192, b->buf + 8192, 16),
	      "after the rolled-back batches a READ and a WRITE complete, the READ's data in place");
out:
	env_close(&e);
}

/* ---- WQE bytes ------------------------------------------------------------ */

/* The WQE at @bu of @q (wrapping), @size bytes, into @out. */
static void ring_wqe(const struct mana_rc_queue *q, uint32_t bu, uint8_t *out,
		     uint32_t size)
{
	gdma_ring_read(q->buf.addr, q->ring_size,
		       gdma_wqe_ring_offset(bu, q->ring_size), out, size);
}

/* An SGL as gdma.h lays it out; none: the dummy SGE. */
static void put_sgl(uint8_t *p, const struct ibv_sge *sg, int n)
{
	int i;

	if (!n)
		gdma_put_le64(p, GDMA_DUMMY_SGE_ADDR);
	for (i = 0; i < n; i++) {
		gdma_put_le64(p + 16 * i, sg[i].addr);
		gdma_put_le32(p + 16 * i + 8, sg[i].lkey);
		gdma_put_le32(p + 16 * i + 12, sg[i].length);
	}
}

/* The receive WQE gdma.h's encoders make: @oob is the 8-byte OOB. */
static uint32_t expect_recv_wqe(uint8_t *w, const struct mana_rdma_recv_oob *oob,
				bool check_sn, const struct ibv_sge *sg, int n)
{
	struct gdma_wqe_header h = { .num_sge = (uint8_t)(n ? n : 1),
				     .oob_size = GDMA_OOB_SMALL,
				     .check_sn = check_sn };

	memset(w, 0, GDMA_MAX_SQE_SIZE);
	if (gdma_wqe_header_encode(&h, GDMA_RQ, w) ||
	    mana_rdma_recv_oob_encode(oob, w + GDMA_WQE_HDR_SIZE))
		return 0;
	put_sgl(w + gdma_wqe_sgl_offset(GDMA_OOB_SMALL), sg, n);
	return gdma_wqe_size(GDMA_OOB_SMALL, h.num_sge);
}

/*
 * One WR of each shape through ibv_post_send or ibv_wr_* (and receives of
 * one and three SGEs): every WQE the provider wrote in place, byte for
 * byte, is what gdma.h's checked encoders make of it (rdma-core's layout),
 * and every WR completes.
 */
static void case_wqe_api(bool ex)
{
	static const struct {
		enum ibv_wr_opcode op;
		int n;
		bool inl;
	} shapes[] = {
		{ IBV_WR_SEND, 1, false }, { IBV_WR_SEND, 0, false },
		{ IBV_WR_SEND_WITH_IMM, 1, false }, { IBV_WR_RDMA_WRITE, 1, false },
		{ IBV_WR_RDMA_WRITE, 3, false }, { IBV_WR_RDMA_WRITE_WITH_IMM, 1, false },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, 4, false }, { IBV_WR_RDMA_READ, 2, false },
		{ IBV_WR_SEND, 2, true }, { IBV_WR_RDMA_WRITE, 4, false },
	};
	uint8_t got[GDMA_MAX_SQE_SIZE], want[GDMA_MAX_SQE_SIZE];
	struct mana_rc_queue *sq, *rq, *rreq;
	struct mana_rc_qp *qa, *qb;
	struct ibv_send_wr wr;
	struct ibv_sge sg[4], rs[3];
	struct side *a, *b;
	unsigned int i, k;
	struct env e;

	if (env_open(&e, ex, 128, 0xfffffe, 5))
		goto out;
	a = &e.s[0];
	b = &e.s[1];
	qa = to_mrcqp(a->qp);
	qb = to_mrcqp(b->qp);
	sq = &qa->q[MANA_RC_SEND_QUEUE_REQUESTER];
	rreq = &qa->q[MANA_RC_RECV_QUEUE_REQUESTER];
	rq = &qb->q[MANA_RC_RECV_QUEUE_RESPONDER];
	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		bool recv = shapes[i].op == IBV_WR_SEND ||
			    shapes[i].op == IBV_WR_SEND_WITH_IMM ||
			    shapes[i].op == IBV_WR_RDMA_WRITE_WITH_IMM;
		struct mana_rdma_send_oob o = { .signaled = true };
		struct mana_rdma_recv_oob ro = { 0 };
		uint32_t at = sq->prod_bu, rat = rreq->prod_bu, len = 0, size;
		struct gdma_wqe_header h = { 0 };
		int n = shapes[i].n, rn = 1 + (int)(i % 2) * 2;

		/* inline: within the QP's max_inline_data (128) */
		for (k = 0; k < 4; k++)
			sg[k] = (struct ibv_sge){ (uintptr_t)(a->buf + 4096 * k + 8 * i),
						  (shapes[i].inl ? 30 : 100) + 10 * k,
						  a->mr->lkey };
		for (k = 0; k < (unsigned int)n; k++)
			len += sg[k].length;
		if (recv) {
			uint32_t rat2 = rq->prod_bu;

			for (k = 0; k < 3; k++)
				rs[k] = (struct ibv_sge){ (uintptr_t)(b->buf + 65536 * (k + 1)),
							  4096, b->mr->lkey };
			CHECK_ERRNO(ibv_post_recv(b->qp, &(struct ibv_recv_wr){
				.wr_id = 500 + i, .sg_list = rs, .num_sge = rn }, &(struct ibv_recv_wr *){ NULL }), 0);
			size = expect_recv_wqe(want, &ro, false, rs, rn);
			ring_wqe(rq, rat2, got, size);
			CHECK(size && !memcmp(got, want, size),
			      "shape %u: the receive WQE of %d SGEs as the encoders make it", i, rn);
		}
		wr = (struct ibv_send_wr){
			.wr_id = i, .sg_list = sg, .num_sge = n, .opcode = shapes[i].op,
			.send_flags = IBV_SEND_SIGNALED | (shapes[i].inl ? IBV_SEND_INLINE : 0),
			.imm_data = htobe32(0x1234500 + i),
			.wr.rdma = { (uintptr_t)(b->buf + 8192 * i), b->mr->rkey },
		};
		o.psn = qa->sq_psn;
		o.ssn = qa->ssn;
		if (ex && n == 1 && !shapes[i].inl) {
			/* ibv_wr_set_sge: its own one-SGE path */
			struct ibv_qp_ex *x = ibv_qp_to_qp_ex(a->qp);

			ibv_wr_start(x);
			x->wr_id = wr.wr_id;
			x->wr_flags = (unsigned int)wr.send_flags;
			switch (wr.opcode) {
			case IBV_WR_SEND:
				ibv_wr_send(x);
				break;
			case IBV_WR_SEND_WITH_IMM:
				ibv_wr_send_imm(x, wr.imm_data);
				break;
			case IBV_WR_RDMA_WRITE_WITH_IMM:
				ibv_wr_rdma_write_imm(x, wr.wr.rdma.rkey,
						      wr.wr.rdma.remote_addr, wr.imm_data);
				break;
			default:
				ibv_wr_rdma_write(x, wr.wr.rdma.rkey, wr.wr.rdma.remote_addr);
				break;
			}
			ibv_wr_set_sge(x, sg[0].lkey, sg[0].addr, sg[0].length);
			CHECK_ERRNO(ibv_wr_complete(x), 0);
		} else {
			CHECK_ERRNO(post_one(&e, a, &wr), 0);
		}

		switch (shapes[i].op) {
		case IBV_WR_SEND:
			o.wqe_type = MANA_WQE_RC_SEND;
			break;
		case IBV_WR_SEND_WITH_IMM:
			o.wqe_type = MANA_WQE_RC_SEND_IMM;
			o.imm = 0x1234500 + i;
			break;
		case IBV_WR_RDMA_WRITE_WITH_IMM:
			o.wqe_type = MANA_WQE_WRITE_IMM;
			o.imm = 0x1234500 + i;
			break;
		default:
			o.wqe_type = shapes[i].op == IBV_WR_RDMA_READ ? MANA_WQE_READ :
									MANA_WQE_WRITE;
			break;
		}
		if (mana_wqe_type_is_rdma(o.wqe_type)) {
			o.remote_addr = wr.wr.rdma.remote_addr;
			o.rkey = wr.wr.rdma.rkey;
			o.dma_len = len;
		}
		if (shapes[i].inl) {
			/* the data went to the WR's bounce slot: one SGE for it */
			sg[0] = (struct ibv_sge){
				(uintptr_t)(qa->inline_buf +
					    (size_t)((qa->sq_head - 1) & qa->swr_mask) *
					    qa->inline_stride),
				len, qa->inline_mr.ibv_mr.lkey };
			n = 1;
		}
		if (o.wqe_type == MANA_WQE_READ) {
			ro.psn_start = o.psn;
			size = expect_recv_wqe(want, &ro, true, sg, n);
			ring_wqe(rreq, rat, got, size);
			CHECK(size && !memcmp(got, want, size),
			      "shape %u: the READ's landing WQE as the encoders make it", i);
			n = 0;
		}
		memset(want, 0, sizeof(want));
		CHECK(!mana_rc_send_wqe_header(o.wqe_type, (uint32_t)n, qa->mtu, &h) &&
		      !gdma_wqe_header_encode(&h, GDMA_SQ, want) &&
		      !mana_rdma_send_oob_encode(&o, want + GDMA_WQE_HDR_SIZE),
		      "shape %u: the encoders take it", i);
		put_sgl(want + gdma_wqe_sgl_offset(h.oob_size), sg, n);
		size = gdma_wqe_size(h.oob_size, h.num_sge);
		CHECK(sq->prod_bu - at == size / GDMA_WQE_BU_SIZE,
		      "shape %u: %u units, want %u", i, sq->prod_bu - at,
		      size / GDMA_WQE_BU_SIZE);
		ring_wqe(sq, at, got, size);
		CHECK(!memcmp(got, want, size),
		      "shape %u (opcode %d, %d SGEs%s): the send WQE as the encoders make it",
		      i, shapes[i].op, shapes[i].n, shapes[i].inl ? ", inline" : "");
		expect_wc(&e, a, i, shapes[i].op == IBV_WR_RDMA_READ ? IBV_WC_RDMA_READ :
			  shapes[i].op == IBV_WR_SEND || shapes[i].op == IBV_WR_SEND_WITH_IMM ?
			  IBV_WC_SEND : IBV_WC_RDMA_WRITE, len, "sender");
		if (recv)
			expect_wc(&e, b, 500 + i, shapes[i].op == IBV_WR_RDMA_WRITE_WITH_IMM ?
				  IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV, len, "receiver");
	}
out:
	env_close(&e);
}

static void case_wqe(void)
{
	case_wqe_api(false);
	case_wqe_api(true);
}

/* ---- threads ------------------------------------------------------------- */

#define THREAD_MSGS 20000

struct thr {
	struct env *e;
	int errors;
	uint64_t got;
};

static void *poster(void *arg)
{
	struct thr *t = arg;
	struct side *a = &t->e->s[0], *b = &t->e->s[1];
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	uint64_t i;
	int ret;

	for (i = 0; i < THREAD_MSGS; i++) {
		sge = (struct ibv_sge){ (uintptr_t)(a->buf + (i % 64) * 64), 64,
					a->mr->lkey };
		wr = (struct ibv_send_wr){ .wr_id = i, .sg_list = &sge, .num_sge = 1,
					   .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
					   .imm_data = htobe32((uint32_t)i),
					   .send_flags = i % 8 == 7 ? IBV_SEND_SIGNALED : 0,
					   .wr.rdma = { (uintptr_t)b->buf, b->mr->rkey } };
		while ((ret = ibv_post_send(a->qp, &wr, &bad)) == ENOMEM)
			usleep(20);
		if (ret) {
			t->errors++;
			break;
		}
	}
	return NULL;
}

/* Receives for the write-with-imm stream, refilled as they complete. */
static void *receiver(void *arg)
{
	struct thr *t = arg;
	struct side *b = &t->e->s[1];
	struct ibv_wc wc[16];
	uint64_t next = 0;
	double end = now() + 120;
	int i, n;

	while (t->got < THREAD_MSGS && now() < end) {
		n = ibv_poll_cq(b->cq, 16, wc);
		if (n < 0) {
			t->errors++;
			break;
		}
		if (!n)
			usleep(20);
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS ||
			    be32toh(wc[i].imm_data) != (uint32_t)next)
				t->errors++;
			next++;
			t->got++;
			if (post_recv(b, next, 0, 8))
				t->errors++;
		}
	}
	return NULL;
}

static void *sender_poller(void *arg)
{
	struct thr *t = arg;
	struct side *a = &t->e->s[0];
	struct ibv_wc wc[16];
	uint64_t expect = 7;
	double end = now() + 120;
	int i, n;

	while (t->got < THREAD_MSGS / 8 && now() < end) {
		n = ibv_poll_cq(a->cq, 16, wc);
		if (n < 0) {
			t->errors++;
			break;
		}
		if (!n)
			usleep(20);
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS || wc[i].wr_id != expect)
				t->errors++;
			expect += 8;
			t->got++;
		}
	}
	return NULL;
}

static void case_threads(void)
{
	struct thr tp = { 0 }, tr = { 0 }, ts = { 0 };
	pthread_t p, r, s;
	struct env e;
	int i;

	if (env_open(&e, false, 0, 5, 6))
		goto out;
	tp.e = tr.e = ts.e = &e;
	for (i = 0; i < DEPTH; i++)
		CHECK_ERRNO(post_recv(&e.s[1], i, 0, 8), 0);
	pthread_create(&r, NULL, receiver, &tr);
	pthread_create(&s, NULL, sender_poller, &ts);
	pthread_create(&p, NULL, poster, &tp);
	pthread_join(p, NULL);
	pthread_join(s, NULL);
	pthread_join(r, NULL);
	CHECK(!tp.errors && !tr.errors && !ts.errors,
	      "poster %d, receiver %d, send poller %d errors", tp.errors, tr.errors,
	      ts.errors);
	CHECK(tr.got == THREAD_MSGS && ts.got == THREAD_MSGS / 8,
	      "%llu receives, %llu send completions",
	      (unsigned long long)tr.got, (unsigned long long)ts.got);
out:
	env_close(&e);
}

/* ---- completion channel -------------------------------------------------- */

static void case_events(void)
{
	struct ibv_comp_channel *ch;
	struct ibv_send_wr wr, *bad;
	struct ibv_cq *cq, *ev_cq;
	struct ibv_qp_init_attr_ex qa;
	struct ibv_wc wc[2];
	struct ibv_sge sge;
	struct pollfd pfd;
	struct side *a, *b;
	struct env e;
	void *ev_ctx;
	int round;

	if (env_open(&e, false, 0, 5, 6))
		goto out;
	a = &e.s[0];
	b = &e.s[1];
	/* B again, on a CQ with a channel */
	ch = ibv_create_comp_channel(e.ctx);
	cq = ch ? ibv_create_cq(e.ctx, 16, NULL, ch, 0) : NULL;
	CHECK(cq, "CQ with a channel");
	if (!cq)
		goto out;
	ibv_destroy_qp(b->qp);
	qa = (struct ibv_qp_init_attr_ex){
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = e.pd,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	b->qp = ibv_create_qp_ex(e.ctx, &qa);
	CHECK(b->qp, "QP on the channel's CQ");
	if (!b->qp)
		goto out_cq;
	{
		struct ibv_qp_attr at = { .qp_state = IBV_QPS_RESET };

		ibv_modify_qp(a->qp, &at, IBV_QP_STATE);
	}
	CHECK_ERRNO(connect_pair(&e, 40, 50), 0);
	pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	for (round = 0; round < 5; round++) {
		CHECK_ERRNO(post_recv(b, round, 0, 64), 0);
		CHECK_ERRNO(ibv_req_notify_cq(cq, 0), 0);
		sge = (struct ibv_sge){ (uintptr_t)a->buf, 64, a->mr->lkey };
		wr = (struct ibv_send_wr){ .wr_id = round, .sg_list = &sge, .num_sge = 1,
					   .opcode = IBV_WR_SEND,
					   .send_flags = IBV_SEND_SIGNALED };
		CHECK_ERRNO(ibv_post_send(a->qp, &wr, &bad), 0);
		CHECK(poll(&pfd, 1, 30000) == 1, "round %d: an event", round);
		ev_cq = NULL;
		CHECK(ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == 0 && ev_cq == cq,
		      "round %d: the event names the CQ", round);
		if (ev_cq)
			ibv_ack_cq_events(ev_cq, 1);
		CHECK(wait_wc(cq, wc, 1) == 1 && wc[0].wr_id == (uint64_t)round &&
		      wc[0].status == IBV_WC_SUCCESS, "round %d: the receive", round);
		CHECK(wait_wc(a->cq, wc, 1) == 1, "round %d: the send", round);
	}
	CHECK_ERRNO(ibv_req_notify_cq(cq, 1), EOPNOTSUPP);
	ibv_destroy_qp(b->qp);
	b->qp = NULL;
out_cq:
	ibv_destroy_cq(cq);
	ibv_destroy_comp_channel(ch);
out:
	env_close(&e);
}

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "";

	if (argc > 2 && !strncmp(argv[2], "--dev=", 6))
		dev_name = argv[2] + 6;

	if (!strcmp(which, "ops"))
		case_ops();
	else if (!strcmp(which, "flush"))
		case_flush();
	else if (!strcmp(which, "bad")) {
		case_bad();
		case_bad_ex();
	} else if (!strcmp(which, "threads"))
		case_threads();
	else if (!strcmp(which, "events"))
		case_events();
	else if (!strcmp(which, "wqe"))
		case_wqe();
	else {
		fprintf(stderr, "usage: %s ops|flush|bad|threads|events|wqe\n", argv[0]);
		return 2;
	}
	return check_done();
}
