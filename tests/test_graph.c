// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The object graph DPDK's net/mana builds, created with plain verbs and
 * manadv, checked field by field against what the emulated device recorded,
 * and torn down in DPDK's order with nothing left behind.
 *
 * Usage (under mana-emu): test_graph [--provider=system] [--queues=N] [--depth=D]
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "providers/mana/toeplitz.h"
#include "emu_client.h"

#define MAX_QUEUES 16

static const uint8_t rss_key[MANA_RSS_KEY_LEN] = MANA_RSS_SAMPLE_KEY;

struct alloc_stats {
	int allocs, frees, null_frees;
	size_t live_bytes;
};

static void *graph_alloc(size_t size, void *data)
{
	struct alloc_stats *st = data;
	void *p;

	if (posix_memalign(&p, 4096, size))
		return NULL;
	memset(p, 0xa5, size);	/* the provider must zero it */
	st->allocs++;
	st->live_bytes += size;
	return p;
}

static void graph_free(void *ptr, void *data)
{
	struct alloc_stats *st = data;

	/* rdma-core's libmana frees the RSS QP's (absent) send queue: NULL */
	if (!ptr) {
		st->null_frees++;
		return;
	}
	st->frees++;
	free(ptr);
}

struct graph {
	struct ibv_context *ctx;
	struct ibv_pd *pd, *parent;
	struct ibv_cq *tx_cq[MAX_QUEUES], *rx_cq[MAX_QUEUES];
	struct ibv_qp *tx_qp[MAX_QUEUES], *rss_qp;
	struct ibv_wq *wq[MAX_QUEUES];
	struct ibv_rwq_ind_table *table;
	struct ibv_mr *mr[2];
	void *mr_buf[2];
	int queues, depth, max_sge;
};

static struct manadv_api api;
static bool system_provider;
static struct alloc_stats stats;

static int emu_queue(uint32_t type, uint32_t id, struct mana_emu_queue_info *q)
{
	int (*fn)(uint32_t, uint32_t, struct mana_emu_queue_info *);

	fn = (typeof(fn))dlsym(RTLD_DEFAULT, "mana_emu_queue_info");
	return fn ? fn(type, id, q) : -ENOSYS;
}

static int emu_rss(uint32_t port, struct mana_emu_rss_info *r)
{
	int (*fn)(uint32_t, struct mana_emu_rss_info *);

	fn = (typeof(fn))dlsym(RTLD_DEFAULT, "mana_emu_rss_info");
	return fn ? fn(port, r) : -ENOSYS;
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static void set_allocators(struct graph *g)
{
	struct manadv_ctx_allocators a = {
		.alloc = graph_alloc, .free = graph_free, .data = &stats,
	};

	CHECK_ERRNO(api.set_context_attr(g->ctx, MANADV_CTX_ATTR_BUF_ALLOCATORS, &a), 0);
}

static void check_cq(struct ibv_cq *cq, int depth, const char *what, int i)
{
	struct mana_emu_queue_info q;
	struct manadv_obj obj;
	struct manadv_cq out;
	unsigned int k;

	memset(&obj, 0, sizeof(obj));
	obj.cq.in = cq;
	obj.cq.out = &out;
	CHECK_ERRNO(api.init_obj(&obj, MANADV_OBJ_CQ), 0);
	CHECK(out.count == (uint32_t)depth, "%s cq %d count %u", what, i, out.count);
	CHECK(out.cq_id != UINT32_MAX, "%s cq %d has no id", what, i);
	CHECK(((uintptr_t)out.buf & 4095) == 0, "%s cq %d buffer alignment", what, i);
	/* rdma-core's libmana trusts the allocator to zero; ours zeroes */
	for (k = 0; !system_provider && k < (uint32_t)depth * 64; k += 64)
		if (((uint8_t *)out.buf)[k + 63])
			break;
	CHECK(system_provider || k >= (uint32_t)depth * 64,
	      "%s cq %d buffer not zeroed", what, i);
	CHECK(emu_queue(MANA_EMU_QUEUE_CQ, out.cq_id, &q) == 0,
	      "%s cq %d id %u unknown to the device", what, i, out.cq_id);
	CHECK(q.buf_addr == (uintptr_t)out.buf, "%s cq %d buffer %p vs device 0x%llx",
	      what, i, out.buf, (unsigned long long)q.buf_addr);
	CHECK(q.entries == out.count, "%s cq %d entries %u vs device %u", what, i,
	      out.count, q.entries);
	CHECK(q.buf_size >= (uint64_t)out.count * 64, "%s cq %d device size", what, i);
}

static void build_tx(struct graph *g)
{
	int i;

	for (i = 0; i < g->queues; i++) {
		struct ibv_qp_init_attr qa = {
			.qp_type = IBV_QPT_RAW_PACKET,
			.sq_sig_all = 0,
			.cap = { .max_send_wr = g->depth, .max_send_sge = g->max_sge },
		};
		struct mana_emu_queue_info q;
		struct manadv_obj obj;
		struct manadv_qp out;

		set_allocators(g);
		g->tx_cq[i] = ibv_create_cq(g->ctx, g->depth, NULL, NULL, 0);
		CHECK(g->tx_cq[i] != NULL, "tx cq %d: %s", i, strerror(errno));
		if (!g->tx_cq[i])
			return;
		qa.send_cq = qa.recv_cq = g->tx_cq[i];
		g->tx_qp[i] = ibv_create_qp(g->parent, &qa);
		CHECK(g->tx_qp[i] != NULL, "tx qp %d: %s", i, strerror(errno));
		if (!g->tx_qp[i])
			return;

		memset(&obj, 0, sizeof(obj));
		obj.qp.in = g->tx_qp[i];
		obj.qp.out = &out;
		CHECK_ERRNO(api.init_obj(&obj, MANADV_OBJ_QP), 0);
		CHECK(out.sq_count == (uint32_t)g->depth, "sq %d count %u", i, out.sq_count);
		CHECK(is_pow2(out.sq_size) && out.sq_size >= 4096, "sq %d size %u", i,
		      out.sq_size);
		/* ours: room for depth WQEs of max_sge SGEs with a long OOB */
		CHECK(system_provider || (uint64_t)out.sq_size >= (uint64_t)g->depth *
		      ((8 + 24 + 16 * g->max_sge + 31) & ~31u), "sq %d too small", i);
		CHECK(out.db_page != NULL, "sq %d doorbell page", i);
		CHECK(emu_queue(MANA_EMU_QUEUE_SQ, out.sq_id, &q) == 0,
		      "sq %d id %u unknown to the device", i, out.sq_id);
		CHECK(q.buf_addr == (uintptr_t)out.sq_buf && q.buf_size == out.sq_size,
		      "sq %d buffer", i);
		CHECK(q.tx_vp_offset == out.tx_vp_offset, "sq %d vp offset", i);
		CHECK(q.port == 1, "sq %d port %u", i, q.port);
		CHECK(q.db_page == (uintptr_t)out.db_page, "sq %d doorbell page mapping", i);
		check_cq(g->tx_cq[i], g->depth, "tx", i);
		CHECK(emu_queue(MANA_EMU_QUEUE_SQ, out.sq_id, &q) == 0 &&
		      q.cq_id != UINT32_MAX, "sq %d completes into a CQ", i);
	}
}

static void build_rx(struct graph *g)
{
	struct ibv_rwq_ind_table_init_attr ta = { 0 };
	struct ibv_qp_init_attr_ex qa;
	struct mana_emu_rss_info rss;
	int i, log = 0;

	for (i = 0; i < g->queues; i++) {
		struct ibv_wq_init_attr wa = {
			.wq_type = IBV_WQT_RQ, .max_wr = g->depth, .max_sge = 1,
			.pd = g->parent,
		};

		set_allocators(g);
		g->rx_cq[i] = ibv_create_cq(g->ctx, g->depth, NULL, NULL, 0);
		CHECK(g->rx_cq[i] != NULL, "rx cq %d: %s", i, strerror(errno));
		if (!g->rx_cq[i])
			return;
		wa.cq = g->rx_cq[i];
		g->wq[i] = ibv_create_wq(g->ctx, &wa);
		CHECK(g->wq[i] != NULL, "wq %d: %s", i, strerror(errno));
		if (!g->wq[i])
			return;
	}
	while ((1 << log) < g->queues)
		log++;
	ta.log_ind_tbl_size = log;
	ta.ind_tbl = g->wq;
	g->table = ibv_create_rwq_ind_table(g->ctx, &ta);
	CHECK(g->table != NULL, "ind table: %s", strerror(errno));
	if (!g->table)
		return;

	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_RX_HASH |
		       IBV_QP_INIT_ATTR_IND_TABLE;
	qa.pd = g->parent;
	qa.rwq_ind_tbl = g->table;
	qa.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	qa.rx_hash_conf.rx_hash_key_len = sizeof(rss_key);
	qa.rx_hash_conf.rx_hash_key = (uint8_t *)rss_key;
	qa.rx_hash_conf.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 |
		IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP;
	g->rss_qp = ibv_create_qp_ex(g->ctx, &qa);
	CHECK(g->rss_qp != NULL, "rss qp: %s", strerror(errno));
	if (!g->rss_qp)
		return;

	CHECK(emu_rss(1, &rss) == 0, "device has no RSS state for port 1");
	CHECK(rss.enabled == (g->queues > 1), "rss enabled %u", rss.enabled);
	CHECK(!memcmp(rss.key, rss_key, sizeof(rss_key)), "rss key");
	for (i = 0; i < g->queues; i++) {
		struct mana_emu_queue_info q;
		struct manadv_obj obj;
		struct manadv_rwq out;
		int k;

		memset(&obj, 0, sizeof(obj));
		obj.rwq.in = g->wq[i];
		obj.rwq.out = &out;
		CHECK_ERRNO(api.init_obj(&obj, MANADV_OBJ_RWQ), 0);
		CHECK(out.count == (uint32_t)g->depth, "rq %d count", i);
		CHECK(is_pow2(out.size) && out.size >= (uint32_t)g->depth * 32, "rq %d size %u",
		      i, out.size);
		CHECK(out.wq_id != UINT32_MAX, "rq %d has no id", i);
		CHECK(emu_queue(MANA_EMU_QUEUE_RQ, out.wq_id, &q) == 0,
		      "rq %d id %u unknown to the device", i, out.wq_id);
		CHECK(q.buf_addr == (uintptr_t)out.buf && q.buf_size == out.size,
		      "rq %d buffer", i);
		CHECK(q.db_page == (uintptr_t)out.db_page, "rq %d doorbell page", i);
		check_cq(g->rx_cq[i], g->depth, "rx", i);
		{
			struct manadv_obj o2;
			struct manadv_cq c;

			memset(&o2, 0, sizeof(o2));
			o2.cq.in = g->rx_cq[i];
			o2.cq.out = &c;
			api.init_obj(&o2, MANADV_OBJ_CQ);
			CHECK(q.cq_id == c.cq_id, "rq %d completes into its CQ", i);
		}
		/* the table is replicated to the device's 64 entries */
		for (k = i; k < 64; k += g->queues)
			CHECK(rss.rq_ids[k] == out.wq_id, "indirection entry %d", k);
	}
}

static void build_mrs(struct graph *g)
{
	int i;

	for (i = 0; i < 2; i++) {
		g->mr_buf[i] = aligned_alloc(4096, 1 << 20);
		g->mr[i] = ibv_reg_mr(g->pd, g->mr_buf[i], 1 << 20, IBV_ACCESS_LOCAL_WRITE);
		CHECK(g->mr[i] != NULL, "mr %d: %s", i, strerror(errno));
	}
}

static void teardown(struct graph *g)
{
	int i;

	/* DPDK's stop: TX first, then RX, then close */
	for (i = 0; i < g->queues; i++) {
		if (g->tx_qp[i])
			CHECK_ERRNO(ibv_destroy_qp(g->tx_qp[i]), 0);
		if (g->tx_cq[i])
			CHECK_ERRNO(ibv_destroy_cq(g->tx_cq[i]), 0);
	}
	if (g->rss_qp)
		CHECK_ERRNO(ibv_destroy_qp(g->rss_qp), 0);
	if (g->table)
		CHECK_ERRNO(ibv_destroy_rwq_ind_table(g->table), 0);
	for (i = 0; i < g->queues; i++) {
		if (g->wq[i])
			CHECK_ERRNO(ibv_destroy_wq(g->wq[i]), 0);
		if (g->rx_cq[i])
			CHECK_ERRNO(ibv_destroy_cq(g->rx_cq[i]), 0);
	}
	for (i = 0; i < 2; i++) {
		if (g->mr[i])
			CHECK_ERRNO(ibv_dereg_mr(g->mr[i]), 0);
		free(g->mr_buf[i]);
	}
	CHECK_ERRNO(ibv_dealloc_pd(g->parent), 0);
	CHECK_ERRNO(ibv_dealloc_pd(g->pd), 0);
	CHECK_ERRNO(ibv_close_device(g->ctx), 0);
}

int main(int argc, char **argv)
{
	struct ibv_parent_domain_init_attr pa = { 0 };
	struct ibv_device_attr_ex attr;
	struct mana_emu_counts counts;
	struct graph g = { .queues = 4, .depth = 256 };
	int i;

	system_provider = emu_client_system(argc, argv);
	for (i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--queues=", 9))
			g.queues = atoi(argv[i] + 9);
		else if (!strncmp(argv[i], "--depth=", 8))
			g.depth = atoi(argv[i] + 8);
	}
	if (g.queues < 1 || g.queues > MAX_QUEUES || (g.queues & (g.queues - 1))) {
		fprintf(stderr, "--queues must be a power of two up to %d\n", MAX_QUEUES);
		return 2;
	}
	CHECK(manadv_api_load(&api) == 0, "libmana.so.1: %s", dlerror());
	g.ctx = emu_open_mana();
	CHECK(g.ctx != NULL, "open: %s", strerror(errno));
	if (!g.ctx || !api.init_obj)
		return check_done();

	CHECK_ERRNO(ibv_query_device_ex(g.ctx, NULL, &attr), 0);
	g.max_sge = attr.orig_attr.max_sge;
	g.pd = ibv_alloc_pd(g.ctx);
	pa.pd = g.pd;
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	pa.pd_context = (void *)(uintptr_t)1;
	g.parent = ibv_alloc_parent_domain(g.ctx, &pa);
	CHECK(g.pd && g.parent, "pd/parent: %s", strerror(errno));
	if (!g.pd || !g.parent)
		return check_done();

	build_tx(&g);
	build_rx(&g);
	build_mrs(&g);
	CHECK(emu_counts(&counts) == 0, "counts");
	CHECK(counts.qps == (uint32_t)g.queues + 1 && counts.cqs == 2u * g.queues &&
	      counts.wqs == (uint32_t)g.queues, "device holds %u qps %u cqs %u wqs",
	      counts.qps, counts.cqs, counts.wqs);
	teardown(&g);

	/* per queue pair: TX CQ, SQ, RX CQ, RQ */
	CHECK(stats.allocs == 4 * g.queues && stats.frees == stats.allocs,
	      "allocator: %d allocs, %d frees", stats.allocs, stats.frees);
	CHECK(system_provider || !stats.null_frees, "ours never frees NULL");
	CHECK(emu_counts(&counts) == 0 && counts.contexts == 0 && counts.pds == 0 &&
	      counts.mrs == 0 && counts.cqs == 0 && counts.wqs == 0 && counts.qps == 0 &&
	      counts.ind_tables == 0, "leaked objects");
	return check_done();
}
