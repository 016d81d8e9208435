// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Table-driven rejections of the raw-packet control path: each case builds
 * what it needs, makes one bad request, checks the errno, cleans up and
 * checks that the emulated kernel holds exactly what it held before.
 *
 * Usage (under mana-emu, our provider): test_bad_inputs [PREFIX]
 *
 * With MANA_ORACLE=1 it checks nothing and prints each case's errno as
 * "bad_inputs.NAME = ERRNO" for the differential oracle (issue 23, M4:
 * tests/guest/oracle.sh), where the kernel is a real mana_ib with no
 * emulator to count its objects.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "emu_client.h"

static const uint8_t key40[40] = { 1, 2, 3, 4, 5, 6, 7, 8 };

struct env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_pd *parent;		/* port 1 */
	struct ibv_device_attr_ex attr;
	struct manadv_api api;
};

/* ---- small builders ---------------------------------------------------- */

/*
 * The parent domain's buffers come from these, as DPDK's do: a CQ made on
 * it has the application's ring, so the provider asks no RNIC CQ (which
 * would take the CQ's DMA region: a raw or RSS queue on it then fails at
 * the device, EPROTO, on a single-device mana_ib such as Debian's 6.12).
 */
static void *pd_alloc(struct ibv_pd *pd, void *ctx, size_t size,
		      size_t align, uint64_t type)
{
	void *p;

	(void)pd;
	(void)ctx;
	(void)type;
	if (posix_memalign(&p, align < 4096 ? 4096 : align, size))
		return NULL;
	memset(p, 0, size);
	return p;
}

static void pd_free(struct ibv_pd *pd, void *ctx, void *ptr, uint64_t type)
{
	(void)pd;
	(void)ctx;
	(void)type;
	free(ptr);
}

/* A CQ of @cqe for raw and RSS queues: its ring from the parent domain. */
static struct ibv_cq *raw_cq_of(struct env *e, uint32_t cqe)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = cqe, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
		.parent_domain = e->parent,
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(e->ctx, &ca);

	return cq ? ibv_cq_ex_to_cq(cq) : NULL;
}

/* 64 entries, a page: the smallest queue the hardware takes */
static struct ibv_cq *raw_cq(struct env *e)
{
	return raw_cq_of(e, 64);
}

static struct ibv_wq *mk_wq(struct env *e, struct ibv_cq *cq)
{
	struct ibv_wq_init_attr wa = {
		.wq_type = IBV_WQT_RQ, .max_wr = 64, .max_sge = 1,
		.pd = e->parent, .cq = cq,
	};

	return ibv_create_wq(e->ctx, &wa);
}

static struct ibv_qp *mk_sq(struct env *e, struct ibv_pd *pd, struct ibv_cq *cq,
			    uint32_t wr, uint32_t sge, uint32_t inl,
			    enum ibv_qp_type type)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = wr, .max_send_sge = sge,
			 .max_inline_data = inl },
	};

	return ibv_create_qp(pd, &qa);
}

static void rss_attr(struct env *e, struct ibv_qp_init_attr_ex *qa,
		     struct ibv_rwq_ind_table *t)
{
	memset(qa, 0, sizeof(*qa));
	qa->qp_type = IBV_QPT_RAW_PACKET;
	qa->comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_RX_HASH |
			IBV_QP_INIT_ATTR_IND_TABLE;
	qa->pd = e->parent;
	qa->rwq_ind_tbl = t;
	qa->rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	qa->rx_hash_conf.rx_hash_key_len = 40;
	qa->rx_hash_conf.rx_hash_key = (uint8_t *)key40;
	qa->rx_hash_conf.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4;
}

/*
 * A case whose own set-up failed (a kernel that refuses what it builds on:
 * the differential oracle runs this against the real mana_ib) answers
 * SETUP_FAILED + errno instead of calling a verb on NULL.
 */
#define SETUP_FAILED 10000

/* errno of a create call that returned NULL, or 0 if it wrongly worked */
/* @obj is evaluated once: a creation that succeeds is undone */
#define CREATE_ERRNO(obj, destroy) ({			\
	__typeof__(obj) o_ = (obj);			\
	o_ ? (destroy(o_), 0) : errno;			\
})

static int destroy_cq_void(struct ibv_cq *cq) { return ibv_destroy_cq(cq); }

/* cleanups that tolerate a failed creation */
static void xdestroy_cq(struct ibv_cq *cq)
{
	if (cq)
		ibv_destroy_cq(cq);
}

static void xdestroy_wq(struct ibv_wq *wq)
{
	if (wq)
		ibv_destroy_wq(wq);
}

static void xdestroy_table(struct ibv_rwq_ind_table *t)
{
	if (t)
		ibv_destroy_rwq_ind_table(t);
}

static void xdestroy_qp(struct ibv_qp *qp)
{
	if (qp)
		ibv_destroy_qp(qp);
}

static void xdealloc_pd(struct ibv_pd *pd)
{
	if (pd)
		ibv_dealloc_pd(pd);
}

/* ---- the cases ----------------------------------------------------------- */

static int cq_zero(struct env *e)
{
	return CREATE_ERRNO(ibv_create_cq(e->ctx, 0, NULL, NULL, 0), destroy_cq_void);
}

static int cq_negative(struct env *e)
{
	return CREATE_ERRNO(ibv_create_cq(e->ctx, -4, NULL, NULL, 0), destroy_cq_void);
}

/*
 * Deeper than max_cqe on the raw device: EINVAL where the CQ is an
 * Ethernet one (before 6.10's RNIC CQs; on 6.16's Ethernet device
 * manae_0, which has no RNIC objects), made where the provider's own
 * buffer makes it an RNIC CQ, which max_cqe does not bound (the single
 * device of 6.10 to 6.15).
 */
static int cq_too_deep_want(void)
{
	unsigned int v = emu_kernel_version();

	return v >= 6010 && v < 6016 ? 0 : EINVAL;
}

static int cq_too_deep(struct env *e)
{
	return CREATE_ERRNO(ibv_create_cq(e->ctx, e->attr.orig_attr.max_cqe + 1, NULL,
					  NULL, 0), destroy_cq_void);
}

static int cq_bad_vector(struct env *e)
{
	return CREATE_ERRNO(ibv_create_cq(e->ctx, 64, NULL, NULL,
					  e->ctx->num_comp_vectors), destroy_cq_void);
}

static int wq_with(struct env *e, uint32_t wr, uint32_t sge, enum ibv_wq_type type,
		   uint32_t comp_mask)
{
	struct ibv_cq *cq = raw_cq(e);
	struct ibv_wq_init_attr wa = {
		.wq_type = type, .max_wr = wr, .max_sge = sge, .pd = e->parent,
		.cq = cq, .comp_mask = comp_mask, .create_flags = 1,
	};
	struct ibv_wq *wq = ibv_create_wq(e->ctx, &wa);
	int err = wq ? 0 : errno;

	if (wq)
		ibv_destroy_wq(wq);
	xdestroy_cq(cq);
	return err;
}

static int wq_zero_wr(struct env *e) { return wq_with(e, 0, 1, IBV_WQT_RQ, 0); }
static int wq_too_deep(struct env *e)
{
	return wq_with(e, e->attr.orig_attr.max_qp_wr + 1, 1, IBV_WQT_RQ, 0);
}
static int wq_zero_sge(struct env *e) { return wq_with(e, 64, 0, IBV_WQT_RQ, 0); }
static int wq_16_sge(struct env *e) { return wq_with(e, 64, 16, IBV_WQT_RQ, 0); }
static int wq_flags(struct env *e)
{
	return wq_with(e, 64, 1, IBV_WQT_RQ, IBV_WQ_INIT_ATTR_FLAGS);
}
static int wq_comp_mask(struct env *e) { return wq_with(e, 64, 1, IBV_WQT_RQ, 1u << 6); }

static int wq_no_cq(struct env *e)
{
	struct ibv_wq *wq = mk_wq(e, NULL);

	if (wq)
		ibv_destroy_wq(wq);
	return wq ? 0 : errno;
}

/* an indirection table over n fresh WQs, log2 size given */
static int table_with(struct env *e, uint32_t log, uint32_t comp_mask)
{
	struct ibv_rwq_ind_table_init_attr ta = { .log_ind_tbl_size = log,
						  .comp_mask = comp_mask };
	struct ibv_cq *cq = raw_cq(e);
	struct ibv_wq *wq = mk_wq(e, cq), *wqs[128];
	struct ibv_rwq_ind_table *t;
	int i, err;

	for (i = 0; i < 128; i++)
		wqs[i] = wq;
	ta.ind_tbl = wqs;
	t = ibv_create_rwq_ind_table(e->ctx, &ta);
	err = t ? 0 : errno;
	if (t)
		ibv_destroy_rwq_ind_table(t);
	xdestroy_wq(wq);
	xdestroy_cq(cq);
	return err;
}

static int table_too_large(struct env *e) { return table_with(e, 7, 0); }
static int table_comp_mask(struct env *e) { return table_with(e, 0, 1); }

static int table_null(struct env *e)
{
	struct ibv_rwq_ind_table_init_attr ta = { .log_ind_tbl_size = 0 };
	struct ibv_rwq_ind_table *t = ibv_create_rwq_ind_table(e->ctx, &ta);

	if (t)
		ibv_destroy_rwq_ind_table(t);
	return t ? 0 : errno;
}

enum rss_fault { RSS_XOR, RSS_KEY32, RSS_NOKEY, RSS_FIELDS, RSS_SEND, RSS_SHARED_CQ,
		 RSS_BAD_PORT, RSS_TWICE, RSS_RECV_SGE, RSS_SAME_TABLE };

static int rss_with(struct env *e, enum rss_fault f)
{
	struct ibv_cq *cq[2] = { raw_cq(e), raw_cq(e) };
	struct ibv_wq *wq[2];
	struct ibv_rwq_ind_table_init_attr ta = { .log_ind_tbl_size = 1, .ind_tbl = wq };
	struct ibv_parent_domain_init_attr pa = {
		.pd = e->pd, .comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.pd_context = (void *)(uintptr_t)9,
	};
	struct ibv_pd *port9 = ibv_alloc_parent_domain(e->ctx, &pa);
	struct ibv_qp_init_attr_ex qa;
	struct ibv_rwq_ind_table *t;
	struct ibv_qp *qp, *first, *tx = NULL;
	struct ibv_cq *txcq = NULL;
	int err;

	/*
	 * A raw QP first where an RSS QP must be created, as DPDK does: from
	 * 7.2 the RSS QP takes the vport a raw QP of its PD configured.
	 */
	if (f == RSS_TWICE || f == RSS_SAME_TABLE) {
		txcq = raw_cq(e);
		tx = mk_sq(e, e->parent, txcq, 64, 1, 0, IBV_QPT_RAW_PACKET);
		CHECK(tx != NULL, "raw QP: %s", strerror(errno));
	}
	wq[0] = mk_wq(e, cq[0]);
	wq[1] = mk_wq(e, f == RSS_SHARED_CQ ? cq[0] : cq[1]);
	t = ibv_create_rwq_ind_table(e->ctx, &ta);
	rss_attr(e, &qa, t);
	switch (f) {
	case RSS_XOR: qa.rx_hash_conf.rx_hash_function = 2; break;
	case RSS_KEY32: qa.rx_hash_conf.rx_hash_key_len = 32; break;
	case RSS_NOKEY: qa.rx_hash_conf.rx_hash_key = NULL; break;
	case RSS_FIELDS: qa.rx_hash_conf.rx_hash_fields_mask |= IBV_RX_HASH_IPSEC_SPI; break;
	case RSS_SEND: qa.cap.max_send_wr = 16; break;
	case RSS_BAD_PORT: qa.pd = port9; break;
	case RSS_RECV_SGE: qa.cap.max_recv_sge = 16; break;
	case RSS_TWICE: {
		/* another table, other WQs, same vport */
		struct ibv_cq *cq2;
		struct ibv_wq *wq2;
		struct ibv_rwq_ind_table_init_attr ta2 = { .log_ind_tbl_size = 0,
							   .ind_tbl = &wq2 };
		struct ibv_qp_init_attr_ex qa2;
		struct ibv_rwq_ind_table *t2;

		cq2 = raw_cq(e);
		wq2 = mk_wq(e, cq2);
		t2 = ibv_create_rwq_ind_table(e->ctx, &ta2);
		rss_attr(e, &qa2, t2);
		first = ibv_create_qp_ex(e->ctx, &qa2);
		CHECK(first != NULL, "first RSS QP: %s", strerror(errno));
		qp = ibv_create_qp_ex(e->ctx, &qa);
		err = qp ? 0 : errno;
		if (qp)
			xdestroy_qp(qp);
		if (first)
			xdestroy_qp(first);
		xdestroy_table(t2);
		xdestroy_wq(wq2);
		xdestroy_cq(cq2);
		goto cleanup;
	}
	case RSS_SAME_TABLE:
		/*
		 * mana_ib from 7.2: pd->has_rss_qp -> EBUSY before the WQs are
		 * looked at; our provider answers so itself in every era.
		 */
		first = ibv_create_qp_ex(e->ctx, &qa);
		CHECK(first != NULL, "first RSS QP: %s", strerror(errno));
		qp = ibv_create_qp_ex(e->ctx, &qa);
		err = qp ? 0 : errno;
		xdestroy_qp(qp);
		xdestroy_qp(first);
		goto cleanup;
	default: break;
	}
	qp = ibv_create_qp_ex(e->ctx, &qa);
	err = qp ? 0 : errno;
	if (qp)
		ibv_destroy_qp(qp);
cleanup:
	if (t)
		ibv_destroy_rwq_ind_table(t);
	xdestroy_wq(wq[1]);
	xdestroy_wq(wq[0]);
	xdestroy_cq(cq[1]);
	xdestroy_cq(cq[0]);
	if (tx)
		xdestroy_qp(tx);
	if (txcq)
		xdestroy_cq(txcq);
	xdealloc_pd(port9);
	return err;
}

static int rss_xor(struct env *e) { return rss_with(e, RSS_XOR); }
static int rss_key32(struct env *e) { return rss_with(e, RSS_KEY32); }
static int rss_nokey(struct env *e) { return rss_with(e, RSS_NOKEY); }
static int rss_fields(struct env *e) { return rss_with(e, RSS_FIELDS); }
static int rss_send(struct env *e) { return rss_with(e, RSS_SEND); }
static int rss_shared_cq(struct env *e) { return rss_with(e, RSS_SHARED_CQ); }
static int rss_bad_port(struct env *e) { return rss_with(e, RSS_BAD_PORT); }
static int rss_recv_sge(struct env *e) { return rss_with(e, RSS_RECV_SGE); }
static int rss_twice(struct env *e) { return rss_with(e, RSS_TWICE); }
static int rss_same_table(struct env *e) { return rss_with(e, RSS_SAME_TABLE); }

static int sq_with(struct env *e, uint32_t wr, uint32_t sge, uint32_t inl,
		   enum ibv_qp_type type, bool no_cq, struct ibv_pd *pd)
{
	struct ibv_cq *cq = type == IBV_QPT_RAW_PACKET ? raw_cq(e) :
			    ibv_create_cq(e->ctx, 64, NULL, NULL, 0);
	struct ibv_qp *qp = mk_sq(e, pd ? pd : e->parent, no_cq ? NULL : cq, wr, sge,
				  inl, type);
	int err = qp ? 0 : errno;

	if (qp)
		ibv_destroy_qp(qp);
	xdestroy_cq(cq);
	return err;
}

static int sq_rc(struct env *e) { return sq_with(e, 64, 1, 0, IBV_QPT_RC, false, NULL); }
static int sq_ud(struct env *e) { return sq_with(e, 64, 1, 0, IBV_QPT_UD, false, NULL); }
static int sq_zero_wr(struct env *e)
{
	return sq_with(e, 0, 1, 0, IBV_QPT_RAW_PACKET, false, NULL);
}
static int sq_too_deep(struct env *e)
{
	return sq_with(e, e->attr.orig_attr.max_qp_wr + 1, 1, 0, IBV_QPT_RAW_PACKET,
		       false, NULL);
}
static int sq_31_sge(struct env *e)
{
	return sq_with(e, 64, 31, 0, IBV_QPT_RAW_PACKET, false, NULL);
}
static int sq_inline(struct env *e)
{
	return sq_with(e, 64, 1, 4096, IBV_QPT_RAW_PACKET, false, NULL);
}
static int sq_no_cq(struct env *e)
{
	return sq_with(e, 64, 1, 0, IBV_QPT_RAW_PACKET, true, NULL);
}

static int sq_bad_port(struct env *e)
{
	struct ibv_parent_domain_init_attr pa = {
		.pd = e->pd, .comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.pd_context = (void *)(uintptr_t)9,
	};
	struct ibv_pd *port9 = ibv_alloc_parent_domain(e->ctx, &pa);
	int err = sq_with(e, 64, 1, 0, IBV_QPT_RAW_PACKET, false, port9);

	xdealloc_pd(port9);
	return err;
}

/* one CQ for two send queues: the kernel binds a CQ to a single queue */
static int sq_shared_cq(struct env *e)
{
	struct ibv_cq *cq = raw_cq(e);
	struct ibv_qp *a = mk_sq(e, e->parent, cq, 64, 1, 0, IBV_QPT_RAW_PACKET);
	struct ibv_qp *b = mk_sq(e, e->parent, cq, 64, 1, 0, IBV_QPT_RAW_PACKET);
	int err = b ? 0 : errno;

	if (b)
		xdestroy_qp(b);
	if (a)
		xdestroy_qp(a);
	xdestroy_cq(cq);
	return err;
}

static int destroy_busy_cq(struct env *e)
{
	struct ibv_cq *cq = raw_cq(e);
	struct ibv_qp *qp;
	int err;

	if (!cq)
		return SETUP_FAILED + errno;
	qp = mk_sq(e, e->parent, cq, 64, 1, 0, IBV_QPT_RAW_PACKET);
	err = ibv_destroy_cq(cq);
	if (qp)
		ibv_destroy_qp(qp);
	if (err)
		xdestroy_cq(cq);
	return err;
}

static int destroy_busy_wq(struct env *e)
{
	struct ibv_cq *cq = raw_cq(e);
	struct ibv_wq *wq = mk_wq(e, cq);
	struct ibv_rwq_ind_table_init_attr ta = { .log_ind_tbl_size = 0, .ind_tbl = &wq };
	struct ibv_rwq_ind_table *t = ibv_create_rwq_ind_table(e->ctx, &ta);
	int err;

	if (!wq || !t) {
		err = SETUP_FAILED + errno;
		xdestroy_table(t);
		xdestroy_wq(wq);
		xdestroy_cq(cq);
		return err;
	}
	err = ibv_destroy_wq(wq);
	xdestroy_table(t);
	if (err)
		xdestroy_wq(wq);
	xdestroy_cq(cq);
	return err;
}

static int destroy_busy_table(struct env *e)
{
	struct ibv_cq *cq = raw_cq(e);
	struct ibv_wq *wq = mk_wq(e, cq);
	struct ibv_rwq_ind_table_init_attr ta = { .log_ind_tbl_size = 0, .ind_tbl = &wq };
	struct ibv_rwq_ind_table *t = ibv_create_rwq_ind_table(e->ctx, &ta);
	struct ibv_qp_init_attr_ex qa;
	struct ibv_qp *qp;
	int err;

	if (!t) {
		err = SETUP_FAILED + errno;
		xdestroy_wq(wq);
		xdestroy_cq(cq);
		return err;
	}
	rss_attr(e, &qa, t);
	qp = ibv_create_qp_ex(e->ctx, &qa);
	err = ibv_destroy_rwq_ind_table(t);
	if (qp)
		ibv_destroy_qp(qp);
	if (err)
		xdestroy_table(t);
	xdestroy_wq(wq);
	xdestroy_cq(cq);
	return err;
}

static int dealloc_busy_parent(struct env *e)
{
	struct ibv_cq *cq = raw_cq(e);
	struct ibv_wq *wq = mk_wq(e, cq);
	int err;

	if (!wq) {
		err = SETUP_FAILED + errno;
		xdestroy_cq(cq);
		return err;
	}
	err = ibv_dealloc_pd(e->parent);

	xdestroy_wq(wq);
	xdestroy_cq(cq);
	return err;
}

static int modify_wq_reset(struct env *e)
{
	struct ibv_cq *cq = raw_cq(e);
	struct ibv_wq *wq = mk_wq(e, cq);
	struct ibv_wq_attr a = { .attr_mask = IBV_WQ_ATTR_STATE, .wq_state = IBV_WQS_RDY };
	int err;

	if (!wq) {
		err = SETUP_FAILED + errno;
		xdestroy_cq(cq);
		return err;
	}
	CHECK_ERRNO(ibv_modify_wq(wq, &a), 0);	/* DPDK-style code asks for RDY */
	a.wq_state = IBV_WQS_RESET;
	err = ibv_modify_wq(wq, &a);
	xdestroy_wq(wq);
	xdestroy_cq(cq);
	return err;
}

static int init_obj_rss_as_qp(struct env *e)
{
	struct ibv_cq *cq = raw_cq(e);
	struct ibv_wq *wq = mk_wq(e, cq);
	struct ibv_rwq_ind_table_init_attr ta = { .log_ind_tbl_size = 0, .ind_tbl = &wq };
	struct ibv_rwq_ind_table *t = ibv_create_rwq_ind_table(e->ctx, &ta);
	struct ibv_qp_init_attr_ex qa;
	struct manadv_obj obj;
	struct manadv_qp out;
	struct ibv_qp *qp;
	int err;

	rss_attr(e, &qa, t);
	qp = ibv_create_qp_ex(e->ctx, &qa);
	memset(&obj, 0, sizeof(obj));
	obj.qp.in = qp;
	obj.qp.out = &out;
	err = e->api.init_obj(&obj, MANADV_OBJ_QP);
	xdestroy_qp(qp);
	xdestroy_table(t);
	xdestroy_wq(wq);
	xdestroy_cq(cq);
	return err;
}

/* a CQ whose device is not served by this provider */
static int init_obj_foreign(struct env *e)
{
	static uint64_t fake_device[712 / 8];
	struct ibv_context fake_ctx;
	struct ibv_cq fake_cq;
	struct manadv_obj obj;
	struct manadv_cq out;

	memset(&fake_ctx, 0, sizeof(fake_ctx));
	memset(&fake_cq, 0, sizeof(fake_cq));
	fake_ctx.device = (struct ibv_device *)fake_device;
	fake_cq.context = &fake_ctx;
	memset(&obj, 0, sizeof(obj));
	obj.cq.in = &fake_cq;
	obj.cq.out = &out;
	return e->api.init_obj(&obj, MANADV_OBJ_CQ);
}

static int init_obj_null_out(struct env *e)
{
	struct ibv_cq *cq = raw_cq(e);
	struct manadv_obj obj;
	int err;

	memset(&obj, 0, sizeof(obj));
	obj.cq.in = cq;
	err = e->api.init_obj(&obj, MANADV_OBJ_CQ);
	xdestroy_cq(cq);
	return err;
}

/*
 * A raw QP whose CQ (the application's ring, its depth as asked) is under
 * a page: mana_ib gives CREATE_WQ_OBJ cqe * 64 bytes and the device
 * refuses a queue smaller than a page (EPROTO).  DPDK never asks for
 * fewer than 64 entries; our own rings are a page at least.
 */
static int sq_small_cq(struct env *e)
{
	struct ibv_cq *cq = raw_cq_of(e, 32);
	struct ibv_qp *qp;
	int err;

	if (!cq)
		return SETUP_FAILED + errno;
	qp = mk_sq(e, e->parent, cq, 32, 1, 0, IBV_QPT_RAW_PACKET);
	err = qp ? 0 : errno;
	if (qp)
		ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	return err;
}

static const struct bad_case {
	const char *name;
	int (*run)(struct env *e);
	int want;
	/* the answer before 7.2 differs (no has_rss_qp before it) */
	bool before_7_2;
	int want_before_7_2;
	int (*want_fn)(void);	/* the answer depends on the era */
} cases[] = {
	{ "cq: zero entries", cq_zero, EINVAL },
	{ "cq: negative entries", cq_negative, EINVAL },
	{ "cq: deeper than max_cqe", cq_too_deep, EINVAL, .want_fn = cq_too_deep_want },
	{ "cq: comp_vector out of range", cq_bad_vector, EINVAL },
	{ "wq: zero max_wr", wq_zero_wr, EINVAL },
	{ "wq: deeper than max_qp_wr", wq_too_deep, EINVAL },
	{ "wq: zero SGEs", wq_zero_sge, EINVAL },
	{ "wq: 16 SGEs (RQE holds 15)", wq_16_sge, EINVAL },
	{ "wq: create flags", wq_flags, EOPNOTSUPP },
	{ "wq: unknown comp_mask", wq_comp_mask, EOPNOTSUPP },
	{ "wq: no CQ", wq_no_cq, EINVAL },
	{ "ind table: 128 entries", table_too_large, EINVAL },
	{ "ind table: comp_mask", table_comp_mask, EOPNOTSUPP },
	{ "ind table: no WQ array", table_null, EINVAL },
	{ "rss: hash function not Toeplitz", rss_xor, EINVAL },
	{ "rss: 32-byte key", rss_key32, EINVAL },
	{ "rss: no key", rss_nokey, EINVAL },
	{ "rss: IPsec SPI field", rss_fields, EINVAL },
	{ "rss: send queue requested", rss_send, EINVAL },
	{ "rss: two WQs share a CQ", rss_shared_cq, EINVAL },
	{ "rss: port 9", rss_bad_port, EINVAL },
	{ "rss: 16 receive SGEs", rss_recv_sge, EINVAL },
	/* before 7.2 the second one reprograms the port's steering */
	{ "rss: second RSS QP on a vport", rss_twice, EBUSY, true, 0 },
	/* the provider's own check, whatever the kernel (qp.c) */
	{ "rss: second RSS QP on the same table", rss_same_table, EBUSY },
	{ "qp: RC on one RNIC CQ, no receive queue (valid)", sq_rc, 0 },
	{ "qp: UD", sq_ud, EOPNOTSUPP },
	{ "qp: zero max_send_wr", sq_zero_wr, EINVAL },
	{ "qp: deeper than max_qp_wr", sq_too_deep, EINVAL },
	{ "qp: 31 SGEs (SQE holds 30)", sq_31_sge, EINVAL },
	{ "qp: inline data too large", sq_inline, EINVAL },
	{ "qp: no send CQ", sq_no_cq, EINVAL },
	{ "qp: port 9", sq_bad_port, EINVAL },
	{ "qp: CQ shared by two SQs", sq_shared_cq, EINVAL },
	{ "qp: CQ of 32 entries (under a page)", sq_small_cq, EPROTO },
	{ "destroy: CQ used by a QP", destroy_busy_cq, EBUSY },
	{ "destroy: WQ in a table", destroy_busy_wq, EBUSY },
	{ "destroy: table used by a QP", destroy_busy_table, EBUSY },
	{ "dealloc: parent domain used by a WQ", dealloc_busy_parent, EBUSY },
	{ "modify_wq: to RESET", modify_wq_reset, EOPNOTSUPP },
	{ "init_obj: RSS QP as a send QP", init_obj_rss_as_qp, EINVAL },
	{ "init_obj: CQ of another provider", init_obj_foreign, EINVAL },
	{ "init_obj: no output", init_obj_null_out, EINVAL },
};

static bool counts_equal(const struct mana_emu_counts *a, const struct mana_emu_counts *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* argv[1]: run only the cases whose name starts so ("rss:") */
int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : "";
	struct ibv_parent_domain_init_attr pa = { 0 };
	struct mana_emu_counts before, after;
	bool report;
	struct env e;
	size_t i;

	memset(&e, 0, sizeof(e));
	report = getenv("MANA_ORACLE") != NULL;
	if (report)	/* every answer out, even if a case crashes */
		setvbuf(stdout, NULL, _IOLBF, 0);
	CHECK(manadv_api_load(&e.api) == 0, "libmana.so.1");
	e.ctx = emu_open_mana();
	if (!e.ctx || !e.api.init_obj) {
		CHECK(0, "cannot open the device: %s", strerror(errno));
		return check_done();
	}
	CHECK_ERRNO(ibv_query_device_ex(e.ctx, NULL, &e.attr), 0);
	e.pd = ibv_alloc_pd(e.ctx);
	pa.pd = e.pd;
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT |
		       IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
	pa.pd_context = (void *)(uintptr_t)1;
	pa.alloc = pd_alloc;
	pa.free = pd_free;
	e.parent = ibv_alloc_parent_domain(e.ctx, &pa);

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got, want = cases[i].want;

		if (strncmp(cases[i].name, only, strlen(only)))
			continue;
		if (report) {
			got = cases[i].run(&e);
			if (got >= SETUP_FAILED)
				printf("bad_inputs.%s = set-up failed %s\n",
				       cases[i].name,
				       strerrorname_np(got - SETUP_FAILED));
			else
				printf("bad_inputs.%s = %s\n", cases[i].name,
				       got ? strerrorname_np(got) : "ok");
			continue;
		}
		if (cases[i].before_7_2 && emu_kernel_version() < 7002)
			want = cases[i].want_before_7_2;
		if (cases[i].want_fn)
			want = cases[i].want_fn();
		CHECK(emu_counts(&before) == 0, "counts");
		errno = 0;
		got = cases[i].run(&e);
		CHECK(got == want, "%s: got %d (%s), want %d (%s)",
		      cases[i].name, got, strerror(got), want, strerror(want));
		CHECK(emu_counts(&after) == 0 && counts_equal(&before, &after),
		      "%s: the kernel's objects changed (qps %u->%u cqs %u->%u wqs %u->%u)",
		      cases[i].name, before.qps, after.qps, before.cqs, after.cqs,
		      before.wqs, after.wqs);
	}

	CHECK_ERRNO(ibv_dealloc_pd(e.parent), 0);
	CHECK_ERRNO(ibv_dealloc_pd(e.pd), 0);
	CHECK_ERRNO(ibv_close_device(e.ctx), 0);
	if (report)
		return check_done();
	CHECK(emu_counts(&after) == 0 && after.contexts == 0 && after.pds == 0 &&
	      after.cqs == 0 && after.qps == 0 && after.wqs == 0, "leaks at close");
	return check_done();
}
