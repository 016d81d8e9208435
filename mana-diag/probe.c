// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --probe: on every port, build and tear down the objects DPDK's net/mana
 * builds (PD, parent domain naming the port, TX CQ and raw send QP, RX CQ,
 * WQ, indirection table, RSS QP), through whichever provider libibverbs
 * bound, and say which step failed and why.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <infiniband/manadv.h>

#include "diag.h"

#define PROBE_DEPTH 256

static const uint8_t rss_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
	0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb,
	0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
	0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

struct graph {
	struct ibv_pd *pd, *parent;
	struct ibv_cq *tx_cq, *rx_cq;
	struct ibv_qp *sq, *rss;
	struct ibv_wq *wq;
	struct ibv_rwq_ind_table *table;
};

/* DPDK hands the provider its own queue memory; so do we, zeroed. */
static void *probe_alloc(size_t size, void *data)
{
	void *p;

	if (posix_memalign(&p, 4096, size))
		return NULL;
	memset(p, 0, size);
	return p;
}

static void probe_free(void *ptr, void *data)
{
	free(ptr);
}

typedef int (*set_ctx_attr_fn)(struct ibv_context *,
			       enum manadv_set_ctx_attr_type, void *);

/*
 * manadv_set_context_attr of the libmana that serves @dev (rdma-core's
 * needs the allocators), never one of another library.
 */
static set_ctx_attr_fn find_set_ctx_attr(const struct diag_dev *dev)
{
	char buf[PATH_MAX], path[PATH_MAX];
	void *h, *sym;
	Dl_info info;

	if (!dev->provider_path[0])
		return NULL;
	h = dlopen("libmana.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return NULL;
	sym = dlsym(h, "manadv_set_context_attr");
	dlclose(h);	/* still loaded: libibverbs holds the provider */
	if (!sym || !dladdr(sym, &info) || !info.dli_fname ||
	    !realpath(info.dli_fname, buf))
		return NULL;
	snprintf(path, sizeof(path), "%s", buf);
	return strcmp(path, dev->provider_path) ? NULL : (set_ctx_attr_fn)sym;
}

static void graph_destroy(struct graph *g)
{
	if (g->rss)
		ibv_destroy_qp(g->rss);
	if (g->table)
		ibv_destroy_rwq_ind_table(g->table);
	if (g->wq)
		ibv_destroy_wq(g->wq);
	if (g->rx_cq)
		ibv_destroy_cq(g->rx_cq);
	if (g->sq)
		ibv_destroy_qp(g->sq);
	if (g->tx_cq)
		ibv_destroy_cq(g->tx_cq);
	if (g->parent)
		ibv_dealloc_pd(g->parent);
	if (g->pd)
		ibv_dealloc_pd(g->pd);
	memset(g, 0, sizeof(*g));
}

/* Build the graph on @port; on failure the step's name, errno set. */
static const char *graph_build(struct ibv_context *ctx, unsigned int port,
			       struct graph *g)
{
	struct ibv_parent_domain_init_attr pa = { 0 };
	struct ibv_qp_init_attr qa = { 0 };
	struct ibv_wq_init_attr wa = { 0 };
	struct ibv_rwq_ind_table_init_attr ta = { 0 };
	struct ibv_qp_init_attr_ex rq = { 0 };

	g->pd = ibv_alloc_pd(ctx);
	if (!g->pd)
		return "ibv_alloc_pd";
	pa.pd = g->pd;
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	pa.pd_context = (void *)(uintptr_t)port;	/* the port, as DPDK names it */
	g->parent = ibv_alloc_parent_domain(ctx, &pa);
	if (!g->parent)
		return "ibv_alloc_parent_domain";
	g->tx_cq = ibv_create_cq(ctx, PROBE_DEPTH, NULL, NULL, 0);
	if (!g->tx_cq)
		return "ibv_create_cq (TX)";
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qa.send_cq = qa.recv_cq = g->tx_cq;
	qa.cap.max_send_wr = PROBE_DEPTH;
	qa.cap.max_send_sge = 1;
	g->sq = ibv_create_qp(g->parent, &qa);
	if (!g->sq)
		return "ibv_create_qp (raw send)";
	g->rx_cq = ibv_create_cq(ctx, PROBE_DEPTH, NULL, NULL, 0);
	if (!g->rx_cq)
		return "ibv_create_cq (RX)";
	wa.wq_type = IBV_WQT_RQ;
	wa.max_wr = PROBE_DEPTH;
	wa.max_sge = 1;
	wa.pd = g->parent;
	wa.cq = g->rx_cq;
	g->wq = ibv_create_wq(ctx, &wa);
	if (!g->wq)
		return "ibv_create_wq";
	ta.log_ind_tbl_size = 0;
	ta.ind_tbl = &g->wq;
	g->table = ibv_create_rwq_ind_table(ctx, &ta);
	if (!g->table)
		return "ibv_create_rwq_ind_table";
	rq.qp_type = IBV_QPT_RAW_PACKET;
	rq.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_RX_HASH |
		       IBV_QP_INIT_ATTR_IND_TABLE;
	rq.pd = g->parent;
	rq.rwq_ind_tbl = g->table;
	rq.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	rq.rx_hash_conf.rx_hash_key_len = sizeof(rss_key);
	rq.rx_hash_conf.rx_hash_key = (uint8_t *)rss_key;
	rq.rx_hash_conf.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 |
		IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_SRC_PORT_UDP |
		IBV_RX_HASH_DST_PORT_UDP;
	g->rss = ibv_create_qp_ex(ctx, &rq);
	if (!g->rss)
		return "ibv_create_qp_ex (RSS)";
	return NULL;
}

static void explain(struct result *r, const struct diag_dev *dev,
		    const struct diag_port *p, int err)
{
	switch (err) {
	case EBUSY:
		sb_printf(&r->msg, ": the vport is held, by the kernel netdev "
			  "or by another process's raw QP");
		if (p->ndev[0])
			result_fix(r, "sudo ip link set dev %s down, and stop other "
				   "DPDK processes on this port", p->ndev);
		else
			result_fix(r, "stop other DPDK processes on this port");
		break;
	case EACCES:
	case EPERM:
		result_fix(r, "give access to /dev/infiniband/%s or run as root",
			   dev->uverbs);
		break;
	case ENOMEM:
		sb_printf(&r->msg, " (locked-memory limit or memory)");
		result_fix(r, "raise the locked-memory limit (ulimit -l unlimited, "
			   "or LimitMEMLOCK=infinity for a service)");
		break;
	default:
		break;
	}
	if (strcmp(dev->provider, "ours") && strcmp(dev->provider, "rdma-core"))
		sb_printf(&r->msg, "; %s is served by the %s provider, not a "
			  "MANA one (see driver_id)", dev->name,
			  dev->provider[0] ? dev->provider : "unknown");
}

static void probe_port(const struct diag_dev *dev, struct ibv_context *ctx,
		       const struct diag_port *p)
{
	char subject[DIAG_NAME * 2];
	struct graph g = { 0 };
	struct result *r;
	const char *step;
	int err;

	snprintf(subject, sizeof(subject), "%s/%u", dev->name, p->port);
	r = result_add("probe", subject);
	js_str(&r->data, "ibdev", dev->name);
	js_int(&r->data, "port", p->port);
	errno = 0;
	step = graph_build(ctx, p->port, &g);
	err = errno ? errno : EIO;
	graph_destroy(&g);
	js_str(&r->data, "failed_step", step);
	if (step) {
		js_int(&r->data, "errno", err);
		result_set(r, V_FAIL, "%s failed: %s (%s)", step, strerror(err),
			   strerrorname_np(err) ? strerrorname_np(err) : "?");
		/* mana_ib before 7.2 answered ENODEV for a held vport */
		if (err == ENODEV && !strcmp(step, "ibv_create_qp (raw send)"))
			explain(r, dev, p, EBUSY);
		else
			explain(r, dev, p, err);
		return;
	}
	js_null(&r->data, "errno");
	result_set(r, V_OK, "PD, parent domain, CQs, raw send QP, WQ, "
		   "indirection table and RSS QP created and destroyed");
}

static void probe_dev(const struct diag_dev *dev, struct ibv_device *ibdev)
{
	struct manadv_ctx_allocators a = {
		.alloc = probe_alloc, .free = probe_free,
	};
	set_ctx_attr_fn set_attr;
	struct ibv_context *ctx;
	struct result *r;
	unsigned int port;
	int err;

	ctx = ibv_open_device(ibdev);
	if (!ctx) {
		err = errno ? errno : EIO;
		r = result_add("probe", dev->name);
		js_str(&r->data, "ibdev", dev->name);
		js_str(&r->data, "failed_step", "ibv_open_device");
		js_int(&r->data, "errno", err);
		result_set(r, V_FAIL, "ibv_open_device failed: %s", strerror(err));
		if (!dev->node_ok) {
			/* libibverbs reports its last fallback's errno */
			sb_printf(&r->msg, "; /dev/infiniband/%s cannot be opened "
				  "(see rdma)", dev->uverbs);
			err = EACCES;
		}
		explain(r, dev, &dev->ports[0], err);
		return;
	}
	set_attr = find_set_ctx_attr(dev);
	if (set_attr)
		set_attr(ctx, MANADV_CTX_ATTR_BUF_ALLOCATORS, &a);
	for (port = 1; port <= dev->nports; port++)
		probe_port(dev, ctx, &dev->ports[port - 1]);
	ibv_close_device(ctx);
}

/*
 * The RNIC of a function that also has an Ethernet device (manae_N, from
 * Linux 6.16): raw packet QPs live on the Ethernet one; mana_ib refuses
 * them on the RNIC (EINVAL), so the RNIC has no DPDK graph to probe.
 */
static const struct diag_dev *eth_sibling(const struct diag *d,
					  const struct diag_dev *dev)
{
	unsigned int k;

	if (strncmp(dev->name, "mana_", 5))
		return NULL;
	for (k = 0; k < d->ndevs; k++)
		if (!strncmp(d->devs[k].name, "manae_", 6) &&
		    !strcmp(d->devs[k].bdf, dev->bdf))
			return &d->devs[k];
	return NULL;
}

void check_probe(struct diag *d)
{
	const struct diag_dev *eth;
	struct ibv_device **list;
	unsigned int k;
	int i, n;

	if (!d->probe) {
		result_set(result_add("probe", NULL), V_SKIP,
			   "not run (mana-diag --probe builds DPDK's objects on "
			   "every port)");
		return;
	}
	list = ibv_get_device_list(&n);
	for (k = 0; k < d->ndevs; k++) {
		struct diag_dev *dev = &d->devs[k];
		struct ibv_device *ibdev = NULL;

		for (i = 0; list && i < n; i++)
			if (!strcmp(ibv_get_device_name(list[i]), dev->name))
				ibdev = list[i];
		if (!ibdev) {
			result_set(result_add("probe", dev->name), V_SKIP,
				   "libibverbs does not list %s (see driver_id)",
				   dev->name);
			continue;
		}
		eth = eth_sibling(d, dev);
		if (eth) {
			result_set(result_add("probe", dev->name), V_SKIP,
				   "the RNIC of %s: raw packet QPs (DPDK's) are on "
				   "its Ethernet device %s", dev->bdf, eth->name);
			continue;
		}
		probe_dev(dev, ibdev);
	}
	if (!d->ndevs)
		result_set(result_add("probe", NULL), V_SKIP, "no RDMA device");
	if (list)
		ibv_free_device_list(list);
}
