// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fault sweep: build and tear down the object graph DPDK's net/mana builds
 * (context, PD, parent domain, TX CQs and QPs, RX CQs and WQs, indirection
 * table, RSS QP, MR) with the Nth uverbs command failing, for every N the
 * graph issues and for ENOMEM, EINVAL, EIO and EBUSY.  Each time:
 *   - the verb whose command failed returns that errno (create verbs: NULL
 *     and errno; destroy verbs: the value), and no other verb fails;
 *   - a destroy that failed succeeds when tried again;
 *   - after teardown the emulated kernel holds no object at all;
 *   - the same graph then builds and tears down cleanly.
 * Memory the provider or libibverbs would leak on an error path is found
 * by LeakSanitizer in the ASan pass.
 *
 * Usage (under mana-emu): test_fault_sweep [--provider=system]
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "emu_client.h"
#include "providers/mana/toeplitz.h"

#define QUEUES 2
#define DEPTH 64

static const uint8_t rss_key[MANA_RSS_KEY_LEN] = MANA_RSS_SAMPLE_KEY;

struct graph {
	struct ibv_context *ctx;
	struct ibv_pd *pd, *parent;
	struct ibv_cq *tx_cq[QUEUES], *rx_cq[QUEUES];
	struct ibv_qp *tx_qp[QUEUES], *rss_qp;
	struct ibv_wq *wq[QUEUES];
	struct ibv_rwq_ind_table *table;
	struct ibv_mr *mr;
	void *mr_buf;
};

static struct manadv_api api;

/* DPDK's queue memory: page aligned and zeroed */
static void *buf_alloc(size_t size, void *data)
{
	void *p;

	(void)data;
	if (posix_memalign(&p, 4096, size))
		return NULL;
	memset(p, 0, size);
	return p;
}

static void buf_free(void *ptr, void *data)
{
	(void)data;
	free(ptr);
}

static uint64_t (*cmd_count)(void);
static int (*fail_cmd)(uint64_t nth, int err);

/* The armed fault: command number (absolute), errno; 0 once seen. */
static uint64_t fault_at;
static int fault_err;
static const char *fault_verb;	/* the verb in which it fired */
static int fault_verb_ret;	/* what that verb returned (0: success) */

/*
 * Account for one verb: @before is the command count before it, @ret its
 * error (0 for success).  A verb that fails must be the one whose command
 * the fault hit, with that errno; a verb whose command was hit must fail.
 */
static void verb_done(const char *what, uint64_t before, int ret)
{
	uint64_t after = cmd_count();
	bool hit = fault_at && before < fault_at && fault_at <= after;

	if (hit) {
		fault_verb = what;
		fault_verb_ret = ret;
		CHECK(ret == fault_err, "%s: command %llu failed with %s, the verb "
		      "returned %d (%s)", what, (unsigned long long)fault_at,
		      strerror(fault_err), ret, strerror(ret));
		fault_at = 0;
	} else {
		CHECK(ret == 0, "%s failed with %s (no fault in it; fault %s at %llu)",
		      what, strerror(ret), strerror(fault_err),
		      (unsigned long long)fault_at);
	}
}

#define CREATE(g_field, what, call) ({ \
		uint64_t b_ = cmd_count(); \
		errno = 0; \
		(g_field) = (call); \
		verb_done(what, b_, (g_field) ? 0 : (errno ? errno : -1)); \
		(g_field) != NULL; \
	})

static int build(struct graph *g)
{
	struct ibv_parent_domain_init_attr pa = {
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.pd_context = (void *)(uintptr_t)1,
	};
	struct ibv_rwq_ind_table_init_attr ta = { .log_ind_tbl_size = 1 };
	struct ibv_qp_init_attr_ex qa = { 0 };
	struct ibv_device_attr_ex attr;
	uint64_t b;
	int i, ret;

	struct manadv_ctx_allocators al = { .alloc = buf_alloc, .free = buf_free };

	if (!CREATE(g->ctx, "ibv_open_device", emu_open_mana()))
		return -1;
	CHECK_ERRNO(api.set_context_attr(g->ctx, MANADV_CTX_ATTR_BUF_ALLOCATORS, &al), 0);
	b = cmd_count();
	ret = ibv_query_device_ex(g->ctx, NULL, &attr);
	verb_done("ibv_query_device_ex", b, ret);
	if (ret)
		return -1;
	if (!CREATE(g->pd, "ibv_alloc_pd", ibv_alloc_pd(g->ctx)))
		return -1;
	pa.pd = g->pd;
	if (!CREATE(g->parent, "ibv_alloc_parent_domain",
		    ibv_alloc_parent_domain(g->ctx, &pa)))
		return -1;
	for (i = 0; i < QUEUES; i++) {
		struct ibv_qp_init_attr sa = {
			.qp_type = IBV_QPT_RAW_PACKET,
			.cap = { .max_send_wr = DEPTH, .max_send_sge = 1 },
		};

		if (!CREATE(g->tx_cq[i], "ibv_create_cq (tx)",
			    ibv_create_cq(g->ctx, DEPTH, NULL, NULL, 0)))
			return -1;
		sa.send_cq = sa.recv_cq = g->tx_cq[i];
		if (!CREATE(g->tx_qp[i], "ibv_create_qp (tx)",
			    ibv_create_qp(g->parent, &sa)))
			return -1;
	}
	for (i = 0; i < QUEUES; i++) {
		struct ibv_wq_init_attr wa = {
			.wq_type = IBV_WQT_RQ, .max_wr = DEPTH, .max_sge = 1,
			.pd = g->parent,
		};

		if (!CREATE(g->rx_cq[i], "ibv_create_cq (rx)",
			    ibv_create_cq(g->ctx, DEPTH, NULL, NULL, 0)))
			return -1;
		wa.cq = g->rx_cq[i];
		if (!CREATE(g->wq[i], "ibv_create_wq", ibv_create_wq(g->ctx, &wa)))
			return -1;
	}
	ta.ind_tbl = g->wq;
	if (!CREATE(g->table, "ibv_create_rwq_ind_table",
		    ibv_create_rwq_ind_table(g->ctx, &ta)))
		return -1;
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_RX_HASH |
		       IBV_QP_INIT_ATTR_IND_TABLE;
	qa.pd = g->parent;
	qa.rwq_ind_tbl = g->table;
	qa.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	qa.rx_hash_conf.rx_hash_key_len = sizeof(rss_key);
	qa.rx_hash_conf.rx_hash_key = (uint8_t *)rss_key;
	qa.rx_hash_conf.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 |
		IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_SRC_PORT_UDP |
		IBV_RX_HASH_DST_PORT_UDP;
	if (!CREATE(g->rss_qp, "ibv_create_qp_ex (rss)",
		    ibv_create_qp_ex(g->ctx, &qa)))
		return -1;
	g->mr_buf = aligned_alloc(4096, 1 << 16);
	if (!CREATE(g->mr, "ibv_reg_mr",
		    ibv_reg_mr(g->pd, g->mr_buf, 1 << 16, IBV_ACCESS_LOCAL_WRITE)))
		return -1;
	return 0;
}

/* A destroy verb; if the fault made it fail, the second try must work. */
#define DESTROY(obj, what, fn) do { \
		if (obj) { \
			uint64_t b_ = cmd_count(); \
			int r_ = fn(obj); \
			verb_done(what, b_, r_); \
			if (r_) \
				CHECK_ERRNO(fn(obj), 0); \
			(obj) = NULL; \
		} \
	} while (0)

static void teardown(struct graph *g)
{
	int i;

	/* DPDK's stop: TX, then RX, then close */
	for (i = 0; i < QUEUES; i++) {
		DESTROY(g->tx_qp[i], "ibv_destroy_qp (tx)", ibv_destroy_qp);
		DESTROY(g->tx_cq[i], "ibv_destroy_cq (tx)", ibv_destroy_cq);
	}
	DESTROY(g->rss_qp, "ibv_destroy_qp (rss)", ibv_destroy_qp);
	DESTROY(g->table, "ibv_destroy_rwq_ind_table", ibv_destroy_rwq_ind_table);
	for (i = 0; i < QUEUES; i++) {
		DESTROY(g->wq[i], "ibv_destroy_wq", ibv_destroy_wq);
		DESTROY(g->rx_cq[i], "ibv_destroy_cq (rx)", ibv_destroy_cq);
	}
	DESTROY(g->mr, "ibv_dereg_mr", ibv_dereg_mr);
	DESTROY(g->parent, "ibv_dealloc_pd (parent)", ibv_dealloc_pd);
	DESTROY(g->pd, "ibv_dealloc_pd", ibv_dealloc_pd);
	DESTROY(g->ctx, "ibv_close_device", ibv_close_device);
	free(g->mr_buf);
	g->mr_buf = NULL;
}

static bool kernel_empty(void)
{
	struct mana_emu_counts c;

	return emu_counts(&c) == 0 && !c.contexts && !c.pds && !c.mrs &&
	       !c.cqs && !c.wqs && !c.qps && !c.ind_tables;
}

/* One run with command @nth (from now) failing with @err; false: no fault. */
static bool run_one(uint64_t nth, int err)
{
	struct graph g = { 0 };
	uint64_t start = cmd_count();

	fault_at = start + nth;
	fault_err = err;
	fault_verb = NULL;
	fail_cmd(nth, err);
	build(&g);
	teardown(&g);
	fail_cmd(0, 0);
	if (fault_at) {
		/* the graph issued fewer than nth commands: the sweep is over */
		CHECK(cmd_count() - start < nth, "command %llu was reached but "
		      "no verb saw it", (unsigned long long)nth);
		fault_at = 0;
		return false;
	}
	CHECK(kernel_empty(), "%s failing with %s (command %llu) left objects "
	      "in the kernel", fault_verb, strerror(err), (unsigned long long)nth);
	/* the same again without a fault: everything works */
	fault_err = 0;
	build(&g);
	CHECK(g.mr != NULL, "graph after %s failed with %s", fault_verb,
	      strerror(err));
	teardown(&g);
	CHECK(kernel_empty(), "clean run after a fault left objects");
	return true;
}

int main(int argc, char **argv)
{
	static const int errs[] = { ENOMEM, EINVAL, EIO, EBUSY };
	unsigned int e, runs = 0;
	uint64_t nth, commands = 0;

	(void)emu_client_system(argc, argv);
	cmd_count = (typeof(cmd_count))dlsym(RTLD_DEFAULT, MANA_EMU_COMMAND_COUNT_SYM);
	fail_cmd = (typeof(fail_cmd))dlsym(RTLD_DEFAULT, MANA_EMU_FAULT_FAIL_CMD_SYM);
	CHECK(cmd_count && fail_cmd, "run under mana-emu (no fault API)");
	CHECK(manadv_api_load(&api) == 0, "libmana.so.1: %s", dlerror());
	if (!cmd_count || !fail_cmd || !api.set_context_attr)
		return check_done();
	for (e = 0; e < sizeof(errs) / sizeof(errs[0]); e++) {
		for (nth = 1; run_one(nth, errs[e]); nth++)
			runs++;
		CHECK(nth > 10, "only %llu commands in the graph",
		      (unsigned long long)nth - 1);
		commands = nth - 1;
	}
	printf("%u faulted runs, %llu commands per graph\n", runs,
	       (unsigned long long)commands);
	return check_done();
}
