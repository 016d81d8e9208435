// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The verbs contracts issue 9 found broken, checked through plain verbs
 * (under mana-emu, VERBS_LOG_FILE set by the test):
 *   caps     every create verb returns caps >= those requested, or fails
 *   flags    IBV_QP_INIT_ATTR_CREATE_FLAGS: 0 accepted, any flag EOPNOTSUPP
 *   busy     EBUSY on a port says who holds it
 *   notify   ibv_req_notify_cq(cq, 1): EOPNOTSUPP, as rdma-core's libmana
 *   overrun --laps=L   a CQ the device laps L times (sends posted through
 *            manadv, nothing polled), then a CQ doorbell tells it the
 *            consumer index: no async event (no mana_ib raises
 *            IB_EVENT_CQ_ERR), ibv_poll_cq -1 by the owner bits, up to 6
 *            laps, the most that index (mod 8 laps) can show: at 7 and 8
 *            it reads, like the owner bits, as an empty and a full ring
 *
 * With MANA_ORACLE=1 (report mode, for the differential oracle of issue 23,
 * tests/guest/oracle.sh, where the kernel may be a real mana_ib with no
 * mana-emu test API) caps, flags, busy, notify and shallow check nothing
 * that fails the run: every answer they check (errno by name, the caps
 * and depths returned) is printed as "contract.CASE.WHAT = VALUE", nothing
 * that varies by run.  overrun is not among them: it needs the test's
 * manadv datapath and a wait for the device's CQEs, timing-bound on TCG.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "check.h"
#include "emu_client.h"
#include "verbs_traffic.h"
#include "providers/mana/gdma.h"

static const char *log_path;
static long log_off;

/* report mode (MANA_ORACLE): print the answers, fail on none */
static bool report;
static const char *case_name;

/* "contract.CASE.WHAT = VALUE" (@fmt gives "WHAT = VALUE"), in report mode */
static void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	va_list ap;

	if (!report)
		return;
	printf("contract.%s.", case_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* An errno by name, "ok" for 0. */
static const char *ename(int err)
{
	return err ? strerrorname_np(err) : "ok";
}

/* A QP's caps, or the errno its creation failed with. */
static const char *caps_str(char *buf, size_t len, const void *obj, int err,
			    const struct ibv_qp_cap *c)
{
	if (!obj)
		return ename(err);
	snprintf(buf, len, "ok send %u/%u recv %u/%u inline %u", c->max_send_wr,
		 c->max_send_sge, c->max_recv_wr, c->max_recv_sge,
		 c->max_inline_data);
	return buf;
}

/* The verbs log written since the last call contains @what. */
static int log_has(const char *what)
{
	char buf[16384];
	size_t n = 0;
	FILE *f;

	if (!log_path)
		return 0;
	fflush(NULL);	/* libibverbs' stream for VERBS_LOG_FILE */
	f = fopen(log_path, "r");
	if (!f)
		return 0;
	if (!fseek(f, log_off, SEEK_SET))
		n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	log_off = ftell(f);
	fclose(f);
	return strstr(buf, what) != NULL;
}

/* Forget what the log holds so far (it may hold earlier runs too). */
static void log_skip(void)
{
	FILE *f;

	fflush(NULL);
	f = fopen(log_path, "r");
	if (!f)
		return;
	if (!fseek(f, 0, SEEK_END))
		log_off = ftell(f);
	fclose(f);
}

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
};

static int env_open(struct env *e)
{
	struct ibv_device **list;
	int n;

	memset(e, 0, sizeof(*e));
	list = ibv_get_device_list(&n);
	if (!list || !n)
		return ENODEV;
	e->ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (!e->ctx)
		return errno;
	e->pd = ibv_alloc_pd(e->ctx);
	return e->pd ? 0 : errno;
}

static void env_close(struct env *e)
{
	if (e->pd)
		ibv_dealloc_pd(e->pd);
	if (e->ctx)
		ibv_close_device(e->ctx);
}

/* A raw send QP on @pd with a CQ of @cqe; NULL and errno on failure. */
static struct ibv_qp *sq_create(struct env *e, struct ibv_pd *pd,
				struct ibv_qp_init_attr_ex *qa, int cqe,
				struct ibv_cq **cq)
{
	struct ibv_qp *qp;

	*cq = ibv_create_cq(e->ctx, cqe, NULL, NULL, 0);
	if (!*cq)
		return NULL;
	qa->qp_type = IBV_QPT_RAW_PACKET;
	qa->send_cq = qa->recv_cq = *cq;
	qa->pd = pd;
	qa->comp_mask |= IBV_QP_INIT_ATTR_PD;
	qp = ibv_create_qp_ex(e->ctx, qa);
	if (!qp) {
		int err = errno;

		ibv_destroy_cq(*cq);
		*cq = NULL;
		errno = err;
	}
	return qp;
}

static void sq_destroy(struct ibv_qp *qp, struct ibv_cq *cq)
{
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
}

/* An RSS QP over one fresh WQ; errno. */
struct rss {
	struct ibv_cq *cq;
	struct ibv_wq *wq;
	struct ibv_rwq_ind_table *table;
	struct ibv_qp *qp;
};

static int rss_create(struct env *e, struct rss *r, struct ibv_qp_init_attr_ex *qa)
{
	struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ, .max_wr = 64,
				       .max_sge = 1, .pd = e->pd };
	struct ibv_rwq_ind_table_init_attr ta = { 0 };

	memset(r, 0, sizeof(*r));
	r->cq = ibv_create_cq(e->ctx, 64, NULL, NULL, 0);
	if (!r->cq)
		return errno;
	wa.cq = r->cq;
	r->wq = ibv_create_wq(e->ctx, &wa);
	if (!r->wq)
		return errno;
	ta.ind_tbl = &r->wq;
	r->table = ibv_create_rwq_ind_table(e->ctx, &ta);
	if (!r->table)
		return errno;
	qa->qp_type = IBV_QPT_RAW_PACKET;
	qa->comp_mask |= IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_RX_HASH |
			 IBV_QP_INIT_ATTR_IND_TABLE;
	qa->pd = e->pd;
	qa->rwq_ind_tbl = r->table;
	qa->rx_hash_conf = (struct ibv_rx_hash_conf){
		.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
		.rx_hash_key_len = sizeof(vt_key), .rx_hash_key = (uint8_t *)vt_key,
		.rx_hash_fields_mask = VT_FIELDS,
	};
	r->qp = ibv_create_qp_ex(e->ctx, qa);
	return r->qp ? 0 : errno;
}

static void rss_destroy(struct rss *r)
{
	if (r->qp)
		ibv_destroy_qp(r->qp);
	if (r->table)
		ibv_destroy_rwq_ind_table(r->table);
	if (r->wq)
		ibv_destroy_wq(r->wq);
	if (r->cq)
		ibv_destroy_cq(r->cq);
}

/* ---- caps: returned >= requested, or the call fails --------------------- */

static const uint32_t depths[] = { 1, 3, 100, 255, 256, 1000 };
#define NDEPTHS (sizeof(depths) / sizeof(depths[0]))

static void check_qp_caps(const char *how, const struct ibv_qp_cap *want,
			  const struct ibv_qp_cap *got)
{
	CHECK(got->max_send_wr >= want->max_send_wr &&
	      got->max_send_sge >= want->max_send_sge &&
	      got->max_recv_wr >= want->max_recv_wr &&
	      got->max_recv_sge >= want->max_recv_sge &&
	      got->max_inline_data >= want->max_inline_data,
	      "%s: asked %u/%u/%u/%u/%u, got %u/%u/%u/%u/%u (send wr/sge, recv wr/sge, inline)",
	      how, want->max_send_wr, want->max_send_sge, want->max_recv_wr,
	      want->max_recv_sge, want->max_inline_data, got->max_send_wr,
	      got->max_send_sge, got->max_recv_wr, got->max_recv_sge,
	      got->max_inline_data);
}

/* A send QP through ibv_create_qp and ibv_create_qp_ex, then query_qp. */
static void caps_sq(struct env *e, struct ibv_qp_cap want)
{
	struct ibv_qp_init_attr_ex qa = { .cap = want };
	struct ibv_qp_init_attr ia = { .cap = want, .qp_type = IBV_QPT_RAW_PACKET };
	struct ibv_qp_init_attr qia;
	struct ibv_qp_attr attr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	char asked[48], buf[96];
	int ret, err;

	snprintf(asked, sizeof(asked), "%u,%u,%u", want.max_send_wr,
		 want.max_send_sge, want.max_inline_data);
	qp = sq_create(e, e->pd, &qa, want.max_send_wr, &cq);
	err = errno;
	CHECK(qp, "create_qp_ex send QP of %u: %s", want.max_send_wr, strerror(err));
	say("create_qp_ex(%s) = %s", asked, caps_str(buf, sizeof(buf), qp, err, &qa.cap));
	if (qp) {
		check_qp_caps("create_qp_ex", &want, &qa.cap);
		ret = ibv_query_qp(qp, &attr, IBV_QP_CAP, &qia);
		CHECK(!ret, "query_qp");
		say("query_qp(%s) = %s", asked,
		    caps_str(buf, sizeof(buf), ret ? NULL : qp, ret, &qia.cap));
		check_qp_caps("query_qp", &want, &qia.cap);
	}
	sq_destroy(qp, cq);

	ia.send_cq = ia.recv_cq = cq = ibv_create_cq(e->ctx, want.max_send_wr, NULL, NULL, 0);
	qp = cq ? ibv_create_qp(e->pd, &ia) : NULL;
	err = errno;
	CHECK(qp, "create_qp send QP of %u: %s", want.max_send_wr, strerror(err));
	say("create_qp(%s) = %s", asked, caps_str(buf, sizeof(buf), qp, err, &ia.cap));
	if (qp)
		check_qp_caps("create_qp", &want, &ia.cap);
	sq_destroy(qp, cq);
}

static void case_caps(void)
{
	struct ibv_qp_init_attr_ex qa;
	struct ibv_cq_init_attr_ex ca;
	struct ibv_cq_ex *cqx;
	struct ibv_cq *cq;
	struct ibv_wq *wq;
	struct ibv_qp *qp;
	struct env e;
	struct rss r;
	unsigned int i, sge;
	char buf[96];
	int ret;

	ret = env_open(&e);
	CHECK_ERRNO(ret, 0);
	say("open = %s", ename(ret));
	if (!e.pd)
		goto out;
	for (i = 0; i < NDEPTHS; i++) {
		for (sge = 0; sge <= 4; sge += 2)
			caps_sq(&e, (struct ibv_qp_cap){ .max_send_wr = depths[i],
							 .max_send_sge = sge,
							 .max_inline_data = sge * 50 });

		cq = ibv_create_cq(e.ctx, depths[i], NULL, NULL, 0);
		ret = errno;
		CHECK(cq && (uint32_t)cq->cqe >= depths[i], "create_cq %u: cqe %d",
		      depths[i], cq ? cq->cqe : -1);
		if (cq)
			say("create_cq(%u) = ok cqe %d", depths[i], cq->cqe);
		else
			say("create_cq(%u) = %s", depths[i], ename(ret));
		for (sge = 1; cq && sge <= 15; sge += 7) {
			struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ,
						       .max_wr = depths[i], .max_sge = sge,
						       .pd = e.pd, .cq = cq };

			wq = ibv_create_wq(e.ctx, &wa);
			ret = errno;
			CHECK(wq && wa.max_wr >= depths[i] && wa.max_sge >= sge,
			      "create_wq %u/%u: got %u/%u (%s)", depths[i], sge,
			      wa.max_wr, wa.max_sge, wq ? "created" : strerror(errno));
			if (wq)
				say("create_wq(%u,%u) = ok max_wr %u max_sge %u",
				    depths[i], sge, wa.max_wr, wa.max_sge);
			else
				say("create_wq(%u,%u) = %s", depths[i], sge, ename(ret));
			if (wq)
				ibv_destroy_wq(wq);
		}
		if (cq)
			ibv_destroy_cq(cq);

		ca = (struct ibv_cq_init_attr_ex){ .cqe = depths[i],
						   .wc_flags = IBV_WC_EX_WITH_BYTE_LEN };
		cqx = ibv_create_cq_ex(e.ctx, &ca);
		ret = errno;
		CHECK(cqx && (uint32_t)ibv_cq_ex_to_cq(cqx)->cqe >= depths[i],
		      "create_cq_ex %u: cqe %d", depths[i],
		      cqx ? ibv_cq_ex_to_cq(cqx)->cqe : -1);
		if (cqx)
			say("create_cq_ex(%u) = ok cqe %d", depths[i],
			    ibv_cq_ex_to_cq(cqx)->cqe);
		else
			say("create_cq_ex(%u) = %s", depths[i], ename(ret));
		if (cqx)
			ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
	}

	/* receive caps belong to the WQs: an RSS QP asking for them fails */
	qa = (struct ibv_qp_init_attr_ex){ 0 };
	ret = rss_create(&e, &r, &qa);
	CHECK_ERRNO(ret, 0);
	say("rss_qp(no caps) = %s", caps_str(buf, sizeof(buf), r.qp, ret, &qa.cap));
	if (r.qp)
		check_qp_caps("RSS QP", &(struct ibv_qp_cap){ 0 }, &qa.cap);
	rss_destroy(&r);
	log_skip();
	qa = (struct ibv_qp_init_attr_ex){ .cap = { .max_recv_wr = 100, .max_recv_sge = 2 } };
	ret = rss_create(&e, &r, &qa);
	CHECK_ERRNO(ret, EINVAL);
	say("rss_qp(receive caps) = %s", ename(ret));
	CHECK(report || log_has("an RSS QP receives on its WQs"),
	      "log line for RSS receive caps");
	rss_destroy(&r);

	/*
	 * a send QP has no receive queue: mana_ib ignores receive caps, so
	 * they are accepted and given back as asked (never below the request)
	 */
	qa = (struct ibv_qp_init_attr_ex){ .cap = { .max_send_wr = 64, .max_send_sge = 1,
						    .max_recv_wr = 1, .max_recv_sge = 1 } };
	qp = sq_create(&e, e.pd, &qa, 64, &cq);
	ret = errno;
	CHECK(qp, "send QP with receive caps: %s", strerror(ret));
	say("send_qp(receive caps) = %s", caps_str(buf, sizeof(buf), qp, ret, &qa.cap));
	CHECK(qa.cap.max_recv_wr == 1 && qa.cap.max_recv_sge == 1,
	      "receive caps returned %u/%u", qa.cap.max_recv_wr, qa.cap.max_recv_sge);
	sq_destroy(qp, cq);
out:
	env_close(&e);
}

/* ---- a queue deeper than its CQ: accepted, outstanding WRs bounded ---------- */

/* Signaled sends of one 64-byte frame; how many were posted before ENOMEM. */
static unsigned int post_sends(struct ibv_qp *qp, struct ibv_mr *mr,
			       unsigned int n, int *err)
{
	struct ibv_sge sge = { .addr = (uintptr_t)mr->addr, .length = 64,
			       .lkey = mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	unsigned int i;

	*err = 0;
	for (i = 0; i < n; i++) {
		wr.wr_id = i;
		*err = ibv_post_send(qp, &wr, &bad);
		if (*err)
			break;
	}
	return i;
}

/* Receives of one 2 KiB buffer each; how many were posted before ENOMEM. */
static unsigned int post_recvs(struct ibv_wq *wq, struct ibv_mr *mr,
			       unsigned int n, int *err)
{
	struct ibv_sge sge = { .addr = (uintptr_t)mr->addr, .length = 2048,
			       .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	unsigned int i;

	*err = 0;
	for (i = 0; i < n; i++) {
		wr.wr_id = i;
		*err = ibv_post_wq_recv(wq, &wr, &bad);
		if (*err)
			break;
	}
	return i;
}

/*
 * mana_ib and rdma-core's libmana accept a raw QP or WQ deeper than its CQ
 * (pyverbs' raw-QP tests make such pairs); the CQ serves that one queue,
 * so the provider bounds the WRs outstanding by the CQ's depth: post
 * answers ENOMEM (queue full) until completions are polled, and the CQ
 * never overruns.  The CQ is the shallowest there is: a page of CQEs (a
 * CQ asked smaller gets that many, the hardware's smallest queue).
 */
#define SHALLOW_CQ 64u
#define SHALLOW_Q 256u

static void case_shallow(void)
{
	struct ibv_qp_init_attr_ex qa = { .cap = { .max_send_wr = SHALLOW_Q,
						   .max_send_sge = 1 } };
	struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ, .max_wr = SHALLOW_Q,
				       .max_sge = 1 };
	struct ibv_async_event ev;
	struct ibv_mr *mr = NULL;
	struct ibv_wq *wq = NULL;
	struct ibv_cq *cq, *rcq = NULL;
	struct ibv_wc wc[8];
	unsigned int got, posted, round, bad, idle;
	struct ibv_qp *qp;
	uint8_t *buf;
	struct env e;
	int err, n, ret;

	ret = env_open(&e);
	CHECK_ERRNO(ret, 0);
	say("open = %s", ename(ret));
	if (!e.pd)
		goto out;
	buf = aligned_alloc(4096, 4096);
	memset(buf, 0, 4096);
	vt_frame(buf, 64, 1024, 0, 0);
	mr = ibv_reg_mr(e.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr, "reg_mr: %s", strerror(errno));
	qp = sq_create(&e, e.pd, &qa, 4, &cq);
	ret = errno;
	CHECK(qp, "send QP of %u on a CQ asked of 4: %s", SHALLOW_Q, strerror(ret));
	if (qp)
		say("send_qp(%u on a CQ of 4) = ok max_send_wr %u cqe %d", SHALLOW_Q,
		    qa.cap.max_send_wr, cq->cqe);
	else
		say("send_qp(%u on a CQ of 4) = %s", SHALLOW_Q, ename(ret));
	if (!qp || !mr)
		goto free;
	CHECK(qa.cap.max_send_wr == SHALLOW_Q, "max_send_wr returned %u", qa.cap.max_send_wr);
	CHECK(cq->cqe == SHALLOW_CQ, "a CQ asked of 4 holds a page of CQEs: cqe %d", cq->cqe);
	ret = ibv_modify_qp(qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT },
			    IBV_QP_STATE);
	if (!ret)
		ret = ibv_modify_qp(qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR },
				    IBV_QP_STATE);
	if (!ret)
		ret = ibv_modify_qp(qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS },
				    IBV_QP_STATE);
	CHECK(!ret, "raw QP to RTS");
	say("send_qp.to_rts = %s", ename(ret));
	for (round = 0; round < 3; round++) {
		/* the CQ's depth, then queue full */
		posted = post_sends(qp, mr, SHALLOW_CQ + 1, &err);
		CHECK(posted == SHALLOW_CQ && err == ENOMEM,
		      "round %u: %u sends, then ENOMEM (posted %u, err %d)", round,
		      SHALLOW_CQ, posted, err);
		say("round%u.post_send = %u then %s", round, posted, ename(err));
		/*
		 * In report mode a device that never completes must not hang
		 * the collection: about 10 s, then the count so far.
		 */
		for (got = 0, bad = 0, idle = 0, n = 0; got < posted;) {
			n = ibv_poll_cq(cq, 8, wc);
			CHECK(n >= 0, "poll_cq %d", n);
			if (n < 0)
				break;
			for (int i = 0; i < n; i++) {
				CHECK(wc[i].status == IBV_WC_SUCCESS &&
				      wc[i].wr_id == got + (unsigned int)i,
				      "completion %u: status %d wr_id %llu", got + i,
				      wc[i].status, (unsigned long long)wc[i].wr_id);
				bad += wc[i].status != IBV_WC_SUCCESS ||
				       wc[i].wr_id != got + (unsigned int)i;
			}
			got += (unsigned int)n;
			if (!n) {
				if (report && ++idle > 10000)
					break;
				usleep(1000);
			}
		}
		say("round%u.completions = %u (%u not in order or failed)%s", round,
		    got, bad, n < 0 ? ", poll_cq -1" : "");
	}
	sq_destroy(qp, cq);

	/* a WQ of 256 on a CQ of 64: 64 receives outstanding */
	rcq = ibv_create_cq(e.ctx, SHALLOW_CQ, NULL, NULL, 0);
	CHECK(rcq, "CQ of %u", SHALLOW_CQ);
	if (!rcq)
		goto free;
	wa.pd = e.pd;
	wa.cq = rcq;
	wq = ibv_create_wq(e.ctx, &wa);
	ret = errno;
	CHECK(wq && wa.max_wr == SHALLOW_Q, "WQ of %u on a CQ of %u: %s", SHALLOW_Q,
	      SHALLOW_CQ, strerror(ret));
	if (wq)
		say("wq(%u on a CQ of %u) = ok max_wr %u", SHALLOW_Q, SHALLOW_CQ, wa.max_wr);
	else
		say("wq(%u on a CQ of %u) = %s", SHALLOW_Q, SHALLOW_CQ, ename(ret));
	if (wq) {
		posted = post_recvs(wq, mr, SHALLOW_CQ + 1, &err);
		CHECK(posted == SHALLOW_CQ && err == ENOMEM,
		      "%u receives, then ENOMEM (posted %u, err %d)", SHALLOW_CQ,
		      posted, err);
		say("wq.post_recv = %u then %s", posted, ename(err));
	}
	/* no overrun was ever reported */
	fcntl(e.ctx->async_fd, F_SETFL, fcntl(e.ctx->async_fd, F_GETFL) | O_NONBLOCK);
	ret = ibv_get_async_event(e.ctx, &ev);
	CHECK(ret != 0, "no async event (got %d)", ev.event_type);
	if (ret)
		say("async_event = none");
	else
		say("async_event = %s", ibv_event_type_str(ev.event_type));
	if (!ret)
		ibv_ack_async_event(&ev);
	if (wq)
		ibv_destroy_wq(wq);
	ibv_destroy_cq(rcq);
free:
	if (mr)
		ibv_dereg_mr(mr);
	free(buf);
out:
	env_close(&e);
}

/* ---- create_flags -------------------------------------------------------- */

static void case_flags(void)
{
	struct ibv_qp_init_attr_ex qa;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct env e;
	struct rss r;
	int ret;

	ret = env_open(&e);
	CHECK_ERRNO(ret, 0);
	say("open = %s", ename(ret));
	if (!e.pd)
		goto out;
	qa = (struct ibv_qp_init_attr_ex){ .cap = { .max_send_wr = 64, .max_send_sge = 1 },
					   .comp_mask = IBV_QP_INIT_ATTR_CREATE_FLAGS };
	qp = sq_create(&e, e.pd, &qa, 64, &cq);
	ret = qp ? 0 : errno;
	CHECK(qp, "send QP, create_flags 0: %s", strerror(ret));
	say("send_qp(0) = %s", ename(ret));
	sq_destroy(qp, cq);
	log_skip();
	qa = (struct ibv_qp_init_attr_ex){ .cap = { .max_send_wr = 64, .max_send_sge = 1 },
					   .comp_mask = IBV_QP_INIT_ATTR_CREATE_FLAGS,
					   .create_flags = IBV_QP_CREATE_SCATTER_FCS };
	qp = sq_create(&e, e.pd, &qa, 64, &cq);
	ret = qp ? 0 : errno;
	sq_destroy(qp, cq);
	CHECK(ret == EOPNOTSUPP, "send QP, create_flags SCATTER_FCS: EOPNOTSUPP (errno %d)",
	      ret);
	say("send_qp(SCATTER_FCS) = %s", ename(ret));
	CHECK(report || log_has("unsupported QP create_flags"), "log line (send QP)");

	qa = (struct ibv_qp_init_attr_ex){ .comp_mask = IBV_QP_INIT_ATTR_CREATE_FLAGS };
	ret = rss_create(&e, &r, &qa);
	CHECK_ERRNO(ret, 0);
	say("rss_qp(0) = %s", ename(ret));
	rss_destroy(&r);
	qa = (struct ibv_qp_init_attr_ex){ .comp_mask = IBV_QP_INIT_ATTR_CREATE_FLAGS,
					   .create_flags = IBV_QP_CREATE_CVLAN_STRIPPING };
	ret = rss_create(&e, &r, &qa);
	CHECK_ERRNO(ret, EOPNOTSUPP);
	say("rss_qp(CVLAN_STRIPPING) = %s", ename(ret));
	CHECK(report || log_has("unsupported QP create_flags"), "log line (RSS QP)");
	rss_destroy(&r);
out:
	env_close(&e);
}

/* ---- EBUSY: who holds the port --------------------------------------------- */

/* A raw send QP of 64 on @pd (its CQ in *@cq); *@err: 0, or its errno. */
static struct ibv_qp *busy_sq(struct env *e, struct ibv_pd *pd,
			      struct ibv_cq **cq, int *err)
{
	struct ibv_qp_init_attr_ex qa = { .cap = { .max_send_wr = 64, .max_send_sge = 1 } };
	struct ibv_qp *qp = sq_create(e, pd, &qa, 64, cq);

	*err = qp ? 0 : errno;
	return qp;
}

/*
 * The port held elsewhere: a raw QP on @pd fails with @busy and the
 * verbs log says @why; reported as @key.
 */
static void busy_refused(struct env *e, struct ibv_pd *pd, int busy,
			 const char *key, const char *why)
{
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int ret;

	log_skip();
	qp = busy_sq(e, pd, &cq, &ret);
	CHECK(!qp && ret == busy, "%s: errno %d, want %d", key, ret, busy);
	say("%s = %s", key, ename(ret));
	CHECK(report || log_has(why), "%s: log says \"%s\"", key, why);
	sq_destroy(qp, cq);
}

static void case_busy(void)
{
	/* mana_ib before 7.2 answered ENODEV for a held vport */
	int busy = emu_kernel_version() >= 7002 ? EBUSY : ENODEV;
	struct ibv_qp_init_attr_ex qa;
	struct ibv_cq *cq_a, *cq_b;
	struct ibv_qp *qp_a, *qp_b;
	struct ibv_pd *pd_b;
	struct env e, other;
	struct rss r1, r2;
	int ret;

	ret = env_open(&e);
	CHECK_ERRNO(ret, 0);
	say("open = %s", ename(ret));
	ret = env_open(&other);
	CHECK_ERRNO(ret, 0);
	say("open_other = %s", ename(ret));
	if (!e.pd || !other.pd)
		goto out;
	pd_b = ibv_alloc_pd(e.ctx);
	qp_a = busy_sq(&e, e.pd, &cq_a, &ret);
	CHECK(qp_a, "first raw QP: %s", strerror(ret));
	say("first_raw_qp = %s", ename(ret));

	busy_refused(&e, pd_b, busy, "raw_qp_other_pd",
		     "held by another PD of this context");
	busy_refused(&other, other.pd, busy, "raw_qp_other_context",
		     "held outside this context");

	/*
	 * A second RSS QP on the vport, same context: EBUSY from 7.2; before,
	 * it reprograms the port's steering.
	 */
	qa = (struct ibv_qp_init_attr_ex){ 0 };
	ret = rss_create(&e, &r1, &qa);
	CHECK_ERRNO(ret, 0);
	say("rss_qp = %s", ename(ret));
	log_skip();
	qa = (struct ibv_qp_init_attr_ex){ 0 };
	ret = rss_create(&e, &r2, &qa);
	say("second_rss_qp = %s", ename(ret));
	if (busy == EBUSY) {
		CHECK_ERRNO(ret, EBUSY);
		CHECK(report || log_has("already has an RSS QP in this context"),
		      "log names the RSS QP");
	} else {
		CHECK_ERRNO(ret, 0);
	}
	rss_destroy(&r2);
	rss_destroy(&r1);
	sq_destroy(qp_a, cq_a);

	/* the port free again: the other PD takes it */
	qp_b = busy_sq(&e, pd_b, &cq_b, &ret);
	CHECK(qp_b, "raw QP on the other PD once the port is free: %s", strerror(ret));
	say("raw_qp_other_pd_port_free = %s", ename(ret));
	sq_destroy(qp_b, cq_b);
	if (pd_b)
		ibv_dealloc_pd(pd_b);
out:
	env_close(&other);
	env_close(&e);
}

/* ---- ibv_req_notify_cq --------------------------------------------------- */

static void case_notify(void)
{
	struct ibv_qp_init_attr_ex qa = { .cap = { .max_send_wr = 64, .max_send_sge = 1 } };
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct env e;
	int ret;

	ret = env_open(&e);
	CHECK_ERRNO(ret, 0);
	say("open = %s", ename(ret));
	if (!e.pd)
		goto out;
	qp = sq_create(&e, e.pd, &qa, 64, &cq);
	ret = qp ? 0 : errno;
	CHECK(qp, "send QP: %s", strerror(ret));
	say("send_qp = %s", ename(ret));
	if (qp) {
		log_skip();
		ret = ibv_req_notify_cq(cq, 1);
		CHECK_ERRNO(ret, EOPNOTSUPP);
		say("req_notify_cq(solicited) = %s", ename(ret));
		CHECK(report || log_has("solicited-only arming is not supported"),
		      "log line");
		ret = ibv_req_notify_cq(cq, 0);
		CHECK_ERRNO(ret, 0);
		say("req_notify_cq(any) = %s", ename(ret));
	}
	sq_destroy(qp, cq);
out:
	env_close(&e);
}

/* ---- a CQ overrun by a manadv datapath -------------------------------------- */

static unsigned int laps = 1;

/* The TX CQE in @slot names the WQE at unit @bu (in bytes or units). */
static bool cqe_names(const uint8_t *cq_buf, uint32_t slot, uint32_t bu)
{
	const volatile uint8_t *cqe = cq_buf + (size_t)slot * GDMA_CQE_SIZE;
	uint32_t off = (uint32_t)cqe[MANA_TXCOMP_WQE_DW_OFF] |
		       (uint32_t)cqe[MANA_TXCOMP_WQE_DW_OFF + 1] << 8 |
		       (uint32_t)cqe[MANA_TXCOMP_WQE_DW_OFF + 2] << 16 |
		       (uint32_t)cqe[MANA_TXCOMP_WQE_DW_OFF + 3] << 24;

	off >>= MANA_TXCOMP_WQE_SHIFT;
	return off == bu * GDMA_WQE_BU_SIZE || off == bu;
}

static void case_overrun(void)
{
	/* the CQ a page of CQEs, the SQ deep enough for 7 laps of it */
	struct ibv_qp_init_attr_ex qa = { .cap = { .max_send_wr = 512, .max_send_sge = 1 } };
	struct gdma_wqe_header h = { .num_sge = 1, .oob_size = GDMA_OOB_SMALL };
	struct manadv_qp dqp;
	struct manadv_cq dcq;
	struct manadv_obj obj = { .qp = { .out = &dqp }, .cq = { .out = &dcq } };
	struct ibv_async_event ev;
	struct manadv_api api = { 0 };
	struct mana_tx_oob oob = { .pkt_fmt = MANA_SHORT_PKT_FMT };
	uint8_t w[GDMA_OOB_LARGE], *frame = NULL;
	uint64_t hdr, oob_word;
	struct ibv_wc wc[8];
	struct ibv_mr *mr = NULL;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint32_t i, n;
	struct env e;
	int ret;

	CHECK_ERRNO(env_open(&e), 0);
	CHECK(!manadv_api_load(&api), "manadv in the loaded libmana");
	if (!e.pd || !api.init_obj)
		goto out;
	qp = sq_create(&e, e.pd, &qa, 64, &cq);
	CHECK(qp, "send QP of 512 on a CQ of 64: %s", strerror(errno));
	if (!qp)
		goto out;
	obj.qp.in = qp;
	obj.cq.in = cq;
	CHECK_ERRNO(api.init_obj(&obj, MANADV_OBJ_QP | MANADV_OBJ_CQ), 0);
	frame = aligned_alloc(4096, 4096);
	memset(frame, 0, 4096);
	vt_frame(frame, 64, 1024, 0, 0);
	mr = ibv_reg_mr(e.pd, frame, 4096, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr, "reg_mr");
	/* the device is @laps laps ahead of a consumer that never polled */
	n = (laps + 1) * dcq.count;
	CHECK(n <= dqp.sq_size / GDMA_WQE_BU_SIZE, "%u WQEs fit the SQ ring", n);
	oob.vcq_num = dcq.cq_id;
	oob.vsq_frame = mana_tx_vsq_frame(dqp.sq_id);
	oob.short_vp_offset = dqp.tx_vp_offset;
	if (!mr || n > dqp.sq_size / GDMA_WQE_BU_SIZE ||
	    gdma_wqe_header_encode(&h, GDMA_SQ, w))
		goto destroy;
	hdr = gdma_ld64(w);
	if (mana_tx_oob_encode(&oob, w))
		goto destroy;
	oob_word = gdma_ld64(w);
	for (i = 0; i < n; i++) {
		uint8_t *wqe = (uint8_t *)dqp.sq_buf + (size_t)i * GDMA_WQE_BU_SIZE;

		gdma_st64(wqe, hdr);
		gdma_st64(wqe + 8, oob_word);
		gdma_st64(wqe + 16, (uintptr_t)frame);
		gdma_st64(wqe + 24, (uint64_t)mr->lkey | (uint64_t)64 << 32);
	}
	atomic_thread_fence(memory_order_release);
	*(volatile uint64_t *)((uint8_t *)dqp.db_page + GDMA_DB_OFF_SQ) =
		dqp.sq_id | (uint64_t)gdma_wq_db_tail(n) << 32;
	/* until the last completion is in its slot (the test's bound: ctest's) */
	while (!cqe_names(dcq.buf, (n - 1) % dcq.count, n - 1))
		usleep(1000);
	/*
	 * The consumer's position reaches the device with a CQ doorbell.  No
	 * mana_ib turns anything the device says into IB_EVENT_CQ_ERR (its EQ
	 * handler knows completions and QP_FATAL only): no async event, the
	 * owner bits alone tell the provider (after a grace for the device to
	 * take the doorbell, so that an event would be there).
	 */
	log_skip();
	CHECK_ERRNO(ibv_req_notify_cq(cq, 0), 0);
	usleep(200 * 1000);
	fcntl(e.ctx->async_fd, F_SETFL, fcntl(e.ctx->async_fd, F_GETFL) | O_NONBLOCK);
	ret = ibv_get_async_event(e.ctx, &ev);
	CHECK(ret != 0, "%u laps: no async event (got %d)", laps, ret ? 0 : ev.event_type);
	if (!ret)
		ibv_ack_async_event(&ev);
	/* never empty, never stale completions: an error, every time */
	for (i = 0; i < 3; i++)
		CHECK(ibv_poll_cq(cq, 8, wc) == -1, "%u laps: poll %u returns -1", laps, i);
	CHECK(log_has("overflowed"), "one log line for the overrun");
destroy:
	if (mr)
		ibv_dereg_mr(mr);
	free(frame);
	sq_destroy(qp, cq);
out:
	env_close(&e);
}

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "caps";
	int i;

	for (i = 2; i < argc; i++)
		if (!strncmp(argv[i], "--laps=", 7))
			laps = atoi(argv[i] + 7);

	report = getenv("MANA_ORACLE") != NULL;
	case_name = which;
	log_path = getenv("VERBS_LOG_FILE");
	if (!log_path && !report) {
		fprintf(stderr, "set VERBS_LOG_FILE (and VERBS_LOG_LEVEL)\n");
		return 2;
	}
	if (report) {
		/* every answer out, even if a case crashes */
		setvbuf(stdout, NULL, _IOLBF, 0);
		if (!strcmp(which, "overrun")) {
			fprintf(stderr, "overrun has no report mode\n");
			return 2;
		}
	}
	if (!strcmp(which, "caps"))
		case_caps();
	else if (!strcmp(which, "flags"))
		case_flags();
	else if (!strcmp(which, "busy"))
		case_busy();
	else if (!strcmp(which, "notify"))
		case_notify();
	else if (!strcmp(which, "shallow"))
		case_shallow();
	else if (!strcmp(which, "overrun") && laps >= 1 && laps <= 6)
		case_overrun();
	else {
		fprintf(stderr, "unknown case %s\n", which);
		return 2;
	}
	/* report mode: the answers are the result, the checks only a note */
	if (report) {
		fprintf(stderr, "%d passed, %d failed\n", check_passed, check_failed);
		return 0;
	}
	return check_done();
}
