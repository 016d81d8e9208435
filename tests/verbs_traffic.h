/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Building blocks for plain-verbs traffic tests and benchmarks on the
 * emulated device: a port with N send QPs and an RSS QP over N WQs, frames
 * whose flow lands on a chosen RX queue, payload stamping and checking.
 */
#ifndef MANA_TESTS_VERBS_TRAFFIC_H
#define MANA_TESTS_VERBS_TRAFFIC_H

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>
#include <infiniband/verbs.h>

#include "examples/udp4_frame.h"
#include "providers/mana/toeplitz.h"

#define VT_MAX_QUEUES 16
#define VT_BUF 2048

static const uint8_t vt_key[MANA_RSS_KEY_LEN] = MANA_RSS_SAMPLE_KEY;
#define VT_FIELDS (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | \
		   IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)

struct vt_port {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *mem;
	size_t mem_size;
	unsigned int queues, depth;
	struct ibv_cq *tx_cq[VT_MAX_QUEUES], *rx_cq[VT_MAX_QUEUES];
	struct ibv_cq_ex *tx_cqx[VT_MAX_QUEUES], *rx_cqx[VT_MAX_QUEUES];
	struct ibv_qp *qp[VT_MAX_QUEUES], *rss;
	struct ibv_wq *wq[VT_MAX_QUEUES];
	struct ibv_rwq_ind_table *table;
	uint16_t sport[VT_MAX_QUEUES];	/* a UDP source port hashing to queue i */
	struct ibv_comp_channel *channel;
};

struct vt_opts {
	unsigned int queues, depth;
	unsigned int cq_depth;	/* 0: depth */
	bool ex_cq;		/* create_cq_ex */
	bool ex_qp;		/* send_ops_flags: ibv_wr_* */
	uint32_t max_inline;
	int sq_sig_all;
	bool channel;		/* CQs report to a completion channel */
};

static inline uint8_t *vt_tx_buf(struct vt_port *p, unsigned int q, unsigned int slot)
{
	return p->mem + ((size_t)q * 2 * p->depth + slot % p->depth) * VT_BUF;
}

static inline uint8_t *vt_rx_buf(struct vt_port *p, unsigned int q, unsigned int slot)
{
	return p->mem + ((size_t)q * 2 * p->depth + p->depth + slot % p->depth) * VT_BUF;
}

/* UDP source port whose flow the device steers to RX queue @q. */
static inline uint16_t vt_sport_for(unsigned int queues, unsigned int q)
{
	struct mana_rss_tuple t = { .l3 = MANA_RSS_L3_IPV4, .l4_proto = IPPROTO_UDP,
				    .l4_valid = true, .src = { 10, 0, 0, 1 },
				    .dst = { 10, 0, 1, 1 }, .dport = 4791 };
	uint32_t hash, type;
	uint16_t sp;

	for (sp = 1024; sp < 65535; sp++) {
		t.sport = sp;
		if (!mana_rss_hash(vt_key, VT_FIELDS, &t, &hash, &type) &&
		    (hash % 64) % queues == q)
			return sp;
	}
	return 0;
}

/* Ethernet/IPv4/UDP frame of @size bytes; payload {tag, seq, pattern}. */
static inline void vt_frame(uint8_t *f, uint32_t size, uint16_t sport,
			    uint32_t tag, uint64_t seq)
{
	struct udp4_flow fl = {
		.dmac = { 0x00, 0x0d, 0x3a, 0, 0, 1 }, .smac = { 0x02, 0, 0, 0, 0, 2 },
		.src_ip = { 10, 0, 0, 1 }, .dst_ip = { 10, 0, 1, 1 },
		.sport = sport, .dport = 4791,
	};
	uint8_t *pl = udp4_frame_headers(f, size, &fl);
	uint32_t i, n = size - UDP4_FRAME_HDR;

	memcpy(pl, &tag, 4);
	memcpy(pl + 4, &seq, 8);
	for (i = 12; i < n; i++)
		pl[i] = (uint8_t)(seq + i);
}

/* 0 if @f is a vt_frame of @size; returns its tag and seq. */
static inline int vt_check(const uint8_t *f, uint32_t len, uint32_t size,
			   uint32_t *tag, uint64_t *seq)
{
	const uint8_t *pl = f + UDP4_FRAME_HDR;
	uint32_t i;

	if (len != size || f[23] != IPPROTO_UDP)
		return -1;
	memcpy(tag, pl, 4);
	memcpy(seq, pl + 4, 8);
	for (i = 12; i < size - UDP4_FRAME_HDR; i++)
		if (pl[i] != (uint8_t)(*seq + i))
			return -1;
	return 0;
}

static inline struct ibv_cq *vt_cq(struct vt_port *p, const struct vt_opts *o,
				   struct ibv_cq_ex **cqx, int vec)
{
	unsigned int cqe = o->cq_depth ? o->cq_depth : p->depth;
	struct ibv_cq_init_attr_ex a = {
		.cqe = cqe, .channel = p->channel, .comp_vector = vec,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM,
	};

	*cqx = NULL;
	if (!o->ex_cq)
		return ibv_create_cq(p->ctx, cqe, NULL, p->channel, vec);
	*cqx = ibv_create_cq_ex(p->ctx, &a);
	return *cqx ? ibv_cq_ex_to_cq(*cqx) : NULL;
}

/* Everything a traffic test needs; 0 or an errno. */
static inline int vt_setup(struct vt_port *p, const struct vt_opts *o)
{
	struct ibv_device **list;
	struct ibv_rwq_ind_table_init_attr ta = { 0 };
	struct ibv_qp_init_attr_ex qa;
	unsigned int i;
	int n;

	memset(p, 0, sizeof(*p));
	p->queues = o->queues;
	p->depth = o->depth;
	list = ibv_get_device_list(&n);
	if (!list || !n)
		return ENODEV;
	p->ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (!p->ctx)
		return errno;
	if (o->channel) {
		p->channel = ibv_create_comp_channel(p->ctx);
		if (!p->channel)
			return errno;
	}
	p->pd = ibv_alloc_pd(p->ctx);
	if (!p->pd)
		return errno;
	p->mem_size = (size_t)p->queues * 2 * p->depth * VT_BUF;
	if (posix_memalign((void **)&p->mem, 4096, p->mem_size))
		return ENOMEM;
	memset(p->mem, 0, p->mem_size);
	p->mr = ibv_reg_mr(p->pd, p->mem, p->mem_size, IBV_ACCESS_LOCAL_WRITE);
	if (!p->mr)
		return errno;
	for (i = 0; i < p->queues; i++) {
		struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ, .max_wr = p->depth,
					       .max_sge = 2, .pd = p->pd };

		p->sport[i] = vt_sport_for(p->queues, i);
		p->tx_cq[i] = vt_cq(p, o, &p->tx_cqx[i], 0);
		p->rx_cq[i] = vt_cq(p, o, &p->rx_cqx[i], 0);
		if (!p->tx_cq[i] || !p->rx_cq[i])
			return errno;
		memset(&qa, 0, sizeof(qa));
		qa.qp_type = IBV_QPT_RAW_PACKET;
		qa.send_cq = qa.recv_cq = p->tx_cq[i];
		qa.cap.max_send_wr = p->depth;
		qa.cap.max_send_sge = 4;
		qa.cap.max_inline_data = o->max_inline;
		qa.sq_sig_all = o->sq_sig_all;
		qa.comp_mask = IBV_QP_INIT_ATTR_PD;
		qa.pd = p->pd;
		if (o->ex_qp) {
			qa.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
			qa.send_ops_flags = IBV_QP_EX_WITH_SEND;
		}
		p->qp[i] = ibv_create_qp_ex(p->ctx, &qa);
		if (!p->qp[i])
			return errno;
		wa.cq = p->rx_cq[i];
		p->wq[i] = ibv_create_wq(p->ctx, &wa);
		if (!p->wq[i])
			return errno;
	}
	while ((1u << ta.log_ind_tbl_size) < p->queues)
		ta.log_ind_tbl_size++;
	ta.ind_tbl = p->wq;
	p->table = ibv_create_rwq_ind_table(p->ctx, &ta);
	if (!p->table)
		return errno;
	memset(&qa, 0, sizeof(qa));
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_RX_HASH |
		       IBV_QP_INIT_ATTR_IND_TABLE;
	qa.pd = p->pd;
	qa.rwq_ind_tbl = p->table;
	qa.rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	qa.rx_hash_conf.rx_hash_key_len = sizeof(vt_key);
	qa.rx_hash_conf.rx_hash_key = (uint8_t *)vt_key;
	qa.rx_hash_conf.rx_hash_fields_mask = VT_FIELDS;
	p->rss = ibv_create_qp_ex(p->ctx, &qa);
	return p->rss ? 0 : errno;
}

static inline void vt_teardown(struct vt_port *p)
{
	unsigned int i;

	for (i = 0; i < p->queues; i++) {
		if (p->qp[i])
			ibv_destroy_qp(p->qp[i]);
		if (p->tx_cq[i])
			ibv_destroy_cq(p->tx_cq[i]);
	}
	if (p->rss)
		ibv_destroy_qp(p->rss);
	if (p->table)
		ibv_destroy_rwq_ind_table(p->table);
	for (i = 0; i < p->queues; i++) {
		if (p->wq[i])
			ibv_destroy_wq(p->wq[i]);
		if (p->rx_cq[i])
			ibv_destroy_cq(p->rx_cq[i]);
	}
	if (p->mr)
		ibv_dereg_mr(p->mr);
	free(p->mem);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	if (p->channel)
		ibv_destroy_comp_channel(p->channel);
	if (p->ctx)
		ibv_close_device(p->ctx);
	memset(p, 0, sizeof(*p));
}

/*
 * A polling loop that found nothing: spin a little (the answer is often
 * microseconds away), then yield, then nap, so that the emulated device's
 * thread gets a core even when the pollers outnumber the cores.  Reset
 * *idle to 0 on progress.  Only the wait strategy: no time is asserted.
 */
#define VT_IDLE_SPIN 64
#define VT_IDLE_YIELD 1024
static inline void vt_idle(unsigned int *idle)
{
	struct timespec nap = { 0, 50 * 1000 };

	if (*idle < VT_IDLE_YIELD)
		(*idle)++;
	if (*idle < VT_IDLE_SPIN)
		return;
	if (*idle < VT_IDLE_YIELD)
		sched_yield();
	else
		nanosleep(&nap, NULL);
}

/* Post receive buffers (wr_id = slot) until the WQ holds depth of them. */
static inline int vt_post_rx(struct vt_port *p, unsigned int q, uint64_t *posted,
			     uint64_t consumed)
{
	struct ibv_recv_wr wrs[32], *bad;
	struct ibv_sge sges[32];
	unsigned int n = 0;

	while (*posted - consumed < p->depth && n < 32) {
		sges[n].addr = (uintptr_t)vt_rx_buf(p, q, *posted);
		sges[n].length = VT_BUF;
		sges[n].lkey = p->mr->lkey;
		wrs[n].wr_id = *posted;
		wrs[n].sg_list = &sges[n];
		wrs[n].num_sge = 1;
		wrs[n].next = NULL;
		if (n)
			wrs[n - 1].next = &wrs[n];
		(*posted)++;
		n++;
	}
	return n ? ibv_post_wq_recv(p->wq[q], wrs, &bad) : 0;
}

#endif
