// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The emulated GDMA device, driven the way DPDK drives hardware: queues
 * from verbs and manadv, then WQEs, doorbells and CQEs written and read by
 * hand with providers/mana/gdma.h.  Checks frames, CQE contents and owner
 * bits, error completions and counters, drops, CQ overflow, RSS steering,
 * arming with a completion channel, offloads, faults, and doorbells rung
 * from two threads at once.
 *
 * Usage (under mana-emu): test_emu_device CASE
 *   loopback | errors | nobuf | overflow | rss | channel | threads |
 *   offload | coalesce | fatal | sigusr2 | drop_cqe | netdev |
 *   rss_udp | rss_udp_mask | die_term | die_abort | mprotect | rq_quiet
 * (nobuf wants --rx-hold=8, coalesce --rx-coalesce, fatal
 *  --fault=fatal-after=5, drop_cqe --fault=drop-cqe=3, netdev --netdev-up
 *  and VERBS_LOG_LEVEL=1 VERBS_LOG_FILE=FILE, rss_udp_mask --rss-hash=mask,
 *  die_* --fault=fatal-after=5 --stats=FILE: a device fatal, then the
 *  program dies of SIGTERM or abort(); the statistics must be written)
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "check.h"
#include "emu_client.h"
#include "examples/udp4_frame.h"
#include "providers/mana/gdma.h"
#include "providers/mana/toeplitz.h"

#define MAXQ 4
#define DEPTH 64		/* WQEs and CQEs per queue */
#define BUF_SIZE 2048
#define FRAME 128
#define TIMEOUT_S 5

static const uint8_t key[MANA_RSS_KEY_LEN] = MANA_RSS_SAMPLE_KEY;
#define FIELDS (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | \
		IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)

struct cqx {
	struct ibv_cq *ibcq;
	struct manadv_cq dv;
	uint32_t head;		/* consumer index, from count */
};

struct sqx {
	struct ibv_qp *qp;
	struct manadv_qp dv;
	struct cqx cq;
	uint32_t head_bu;
	uint8_t *bufs;		/* DEPTH frame buffers */
};

struct rqx {
	struct ibv_wq *wq;
	struct manadv_rwq dv;
	struct cqx cq;
	uint32_t head_bu;
	uint32_t posted, consumed;
	uint8_t *bufs;
};

static struct env {
	struct manadv_api api;
	struct ibv_context *ctx;
	struct ibv_pd *pd, *parent;
	struct ibv_mr *mr, *ro_mr;
	uint8_t *mem, *ro_mem;
	size_t mem_size;
	unsigned int nsq, nrq;
	struct sqx sq[MAXQ];
	struct rqx rq[MAXQ];
	struct ibv_rwq_ind_table *table;
	struct ibv_qp *rss;
	struct ibv_comp_channel *channel;
	uint16_t sport[MAXQ];	/* a UDP source port steered to RQ i */
	uint64_t fields;	/* the RSS QP's rx_hash_fields_mask */
} E = { .fields = FIELDS };

/* ---- emulator test API ---------------------------------------------------- */

static int emu_queue(uint32_t type, uint32_t id, struct mana_emu_queue_info *q)
{
	int (*fn)(uint32_t, uint32_t, struct mana_emu_queue_info *);

	fn = (typeof(fn))dlsym(RTLD_DEFAULT, MANA_EMU_QUEUE_INFO_SYM);
	return fn ? fn(type, id, q) : -ENOSYS;
}

/* The device thread's wake-ups so far (emu_client.h), which must be known. */
static uint64_t device_wakeups(void)
{
	uint64_t n = 0;

	CHECK(!emu_wakeups(&n), "mana_emu_device_wakeups not exported");
	return n;
}

/* Let the device finish its work and (very likely after 50 ms) sleep. */
static void device_asleep(void)
{
	int (*quiesce)(int);

	quiesce = (typeof(quiesce))dlsym(RTLD_DEFAULT, "mana_emu_quiesce");
	CHECK(quiesce && quiesce(2000) == 0, "mana_emu_quiesce");
	usleep(50000);
}

static struct mana_emu_queue_info qinfo(uint32_t type, uint32_t id)
{
	struct mana_emu_queue_info q;

	memset(&q, 0, sizeof(q));
	CHECK(emu_queue(type, id, &q) == 0, "queue %u/%u unknown", type, id);
	return q;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- frames ------------------------------------------------------------------ */

/*
 * Ethernet/IPv4/UDP, 10.0.0.1:sport -> 10.0.1.1:4791, payload {seq,
 * pattern}.  @good_csum: both checksums right, else both zero.
 */
static void build_frame(uint8_t *f, size_t len, uint16_t sport, uint32_t seq,
			bool good_csum)
{
	const struct udp4_flow fl = {
		.dmac = { 0x00, 0x0d, 0x3a, 0x00, 0x00, 0x01 },
		.smac = { 0x00, 0x0d, 0x3a, 0x00, 0x00, 0x01 },
		.src_ip = { 10, 0, 0, 1 }, .dst_ip = { 10, 0, 1, 1 },
		.sport = sport, .dport = 4791,
	};
	uint8_t *pl = udp4_frame_headers(f, len, &fl), *ip = f + 14, *udp = ip + 20;
	size_t i, ulen = len - 34;
	uint8_t pseudo[12];

	gdma_put_le32(pl, seq);
	for (i = 4; i < ulen - 8; i++)
		pl[i] = (uint8_t)(seq * 13 + i);
	if (!good_csum) {
		mana_put_be16(ip + 10, 0);	/* the UDP one is 0 already */
		return;
	}
	memcpy(pseudo, ip + 12, 8);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_UDP;
	mana_put_be16(pseudo + 10, (uint16_t)ulen);
	mana_put_be16(udp + 6, mana_inet_csum(udp, ulen, mana_csum_add(0, pseudo, 12)));
}

static uint16_t sport_for(unsigned int nrq, unsigned int q)
{
	struct mana_rss_tuple t = { .l3 = MANA_RSS_L3_IPV4,
				    .l4_proto = IPPROTO_UDP, .l4_valid = true,
				    .src = { 10, 0, 0, 1 }, .dst = { 10, 0, 1, 1 },
				    .dport = 4791 };
	uint32_t hash, type;
	uint16_t sp;

	for (sp = 2000; sp < 60000; sp++) {
		t.sport = sp;
		if (!mana_rss_hash(key, FIELDS, &t, &hash, &type) &&
		    (hash % 64) % nrq == q)
			return sp;
	}
	return 0;
}

static uint32_t hash_of(uint16_t sport)
{
	struct mana_rss_tuple t = { .l3 = MANA_RSS_L3_IPV4,
				    .l4_proto = IPPROTO_UDP, .l4_valid = true,
				    .src = { 10, 0, 0, 1 }, .dst = { 10, 0, 1, 1 },
				    .sport = sport, .dport = 4791 };
	uint32_t hash = 0, type;

	mana_rss_hash(key, FIELDS, &t, &hash, &type);
	return hash;
}

/* ---- doorbells, WQEs, CQEs -------------------------------------------------- */

static void ring(void *db_page, uint32_t off, const struct gdma_doorbell *db)
{
	uint64_t v = 0;

	CHECK(gdma_doorbell_encode(db, &v) == 0, "doorbell encode");
	atomic_thread_fence(memory_order_release);
	*(volatile uint64_t *)((uint8_t *)db_page + off) = v;
}

static void ring_sq(struct sqx *s)
{
	struct gdma_doorbell db = { .kind = GDMA_DB_SQ, .id = s->dv.sq_id,
				    .tail = gdma_wq_db_tail(s->head_bu) };

	ring(s->dv.db_page, GDMA_DB_OFF_SQ, &db);
}

static void ring_rq(struct rqx *r)
{
	struct gdma_doorbell db = { .kind = GDMA_DB_RQ, .id = r->dv.wq_id,
				    .tail = gdma_wq_db_tail(r->head_bu) };

	ring(r->dv.db_page, GDMA_DB_OFF_RQ, &db);
}

static void ring_cq(struct cqx *c, void *db_page, bool arm)
{
	struct gdma_doorbell db = { .kind = GDMA_DB_CQ, .id = c->dv.cq_id,
				    .tail = gdma_cq_db_tail(c->head, c->dv.count),
				    .arm = arm };

	ring(db_page, GDMA_DB_OFF_CQ, &db);
}

static struct mana_tx_oob tx_oob(const struct sqx *s)
{
	return (struct mana_tx_oob){
		.pkt_fmt = MANA_SHORT_PKT_FMT, .is_outer_ipv4 = true,
		.vcq_num = s->cq.dv.cq_id,
		.vsq_frame = mana_tx_vsq_frame(s->dv.sq_id),
		.short_vp_offset = (uint8_t)s->dv.tx_vp_offset,
	};
}

/* Post a TX WQE with @oob and one SGE; returns its ring offset. */
static uint32_t post_tx_oob(struct sqx *s, const struct mana_tx_oob *oob,
			    uint64_t addr, uint32_t lkey, uint32_t len)
{
	struct gdma_wqe w = { .hdr = { .num_sge = 1,
				       .oob_size = mana_tx_oob_size(oob->pkt_fmt) } };
	uint32_t size_bu = 0, off = gdma_wqe_ring_offset(s->head_bu, s->dv.sq_size);

	CHECK(mana_tx_oob_encode(oob, w.oob) == 0, "TX OOB encode");
	w.sge[0] = (struct gdma_sge){ .addr = addr, .mkey = lkey, .size = len };
	CHECK(gdma_wqe_post(s->dv.sq_buf, s->dv.sq_size, s->head_bu, GDMA_SQ, &w,
			    &size_bu) == 0, "TX WQE post");
	s->head_bu += size_bu;
	return off;
}

static uint32_t post_tx(struct sqx *s, const uint8_t *frame, uint32_t len)
{
	struct mana_tx_oob oob = tx_oob(s);

	return post_tx_oob(s, &oob, (uintptr_t)frame, E.mr->lkey, len);
}

static void post_rx(struct rqx *r)
{
	struct gdma_wqe w = { .hdr = { .num_sge = 1, .oob_size = GDMA_OOB_SMALL } };
	uint32_t size_bu = 0;

	w.sge[0] = (struct gdma_sge){
		.addr = (uintptr_t)(r->bufs + (size_t)(r->posted % DEPTH) * BUF_SIZE),
		.mkey = E.mr->lkey, .size = BUF_SIZE };
	CHECK(gdma_wqe_post(r->dv.buf, r->dv.size, r->head_bu, GDMA_RQ, &w,
			    &size_bu) == 0, "RX WQE post");
	r->head_bu += size_bu;
	r->posted++;
}

static void fill_rq(struct rqx *r)
{
	while (r->posted - r->consumed < DEPTH)
		post_rx(r);
	ring_rq(r);
}

/* The CQE at the consumer index, or NULL; *st says why not. */
static const uint8_t *cq_peek(struct cqx *c, enum gdma_cqe_state *st)
{
	const uint8_t *cqe = (const uint8_t *)c->dv.buf +
			     (size_t)gdma_queue_slot(c->head, c->dv.count) *
				     GDMA_CQE_SIZE;

	*st = gdma_cqe_state(gdma_cqe_owner(cqe), c->head, c->dv.count);
	if (*st != GDMA_CQE_VALID)
		return NULL;
	atomic_thread_fence(memory_order_acquire);
	return cqe;
}

/* Wait for the next CQE (they appear after the doorbell, asynchronously). */
static bool cq_next(struct cqx *c, struct gdma_cqe *out)
{
	double end = now() + TIMEOUT_S;
	enum gdma_cqe_state st;
	const uint8_t *cqe;

	do {
		cqe = cq_peek(c, &st);
		if (cqe) {
			CHECK(gdma_cqe_decode(cqe, out) == 0, "CQE decode");
			CHECK(out->owner == gdma_owner_expected(c->head, c->dv.count),
			      "owner bits %u at index %u", out->owner, c->head);
			c->head++;
			return true;
		}
		if (st == GDMA_CQE_OVERFLOW)
			return false;
		usleep(50);
	} while (now() < end);
	return false;
}

/* Give the device time to do whatever it would do: nothing must come. */
static bool cq_stays_empty(struct cqx *c, double seconds)
{
	double end = now() + seconds;
	enum gdma_cqe_state st;

	do {
		if (cq_peek(c, &st) || st == GDMA_CQE_OVERFLOW)
			return false;
		usleep(1000);
	} while (now() < end);
	return true;
}

static uint8_t tx_type(const struct gdma_cqe *c)
{
	struct mana_tx_comp_oob o;

	if (mana_tx_comp_oob_decode(c->data, &o))
		return 0;
	return o.cqe_type;
}

/* ---- setup ------------------------------------------------------------------- */

static void *buf_alloc(size_t size, void *data)
{
	void *p;

	return posix_memalign(&p, 4096, size) ? NULL : p;
}

static void buf_free(void *p, void *data)
{
	free(p);
}

static int cq_init(struct cqx *c)
{
	struct manadv_obj obj = { .cq = { .in = c->ibcq, .out = &c->dv } };
	int ret = E.api.init_obj(&obj, MANADV_OBJ_CQ);

	c->head = c->dv.count;
	return ret;
}

static bool setup_sq(struct sqx *s, uint8_t *bufs)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = DEPTH, .max_send_sge = 2 },
	};
	struct manadv_obj obj = { .qp = { .out = &s->dv } };

	s->bufs = bufs;
	s->cq.ibcq = ibv_create_cq(E.ctx, DEPTH, NULL, E.channel, 0);
	if (!s->cq.ibcq)
		return false;
	qa.send_cq = qa.recv_cq = s->cq.ibcq;
	s->qp = ibv_create_qp(E.parent, &qa);
	if (!s->qp)
		return false;
	obj.qp.in = s->qp;
	return !E.api.init_obj(&obj, MANADV_OBJ_QP) && !cq_init(&s->cq);
}

static bool setup_rss(void)
{
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_RX_HASH |
			     IBV_QP_INIT_ATTR_IND_TABLE,
		.pd = E.parent,
		.rx_hash_conf = { .rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
				  .rx_hash_key_len = sizeof(key),
				  .rx_hash_key = (uint8_t *)key,
				  .rx_hash_fields_mask = E.fields },
	};
	struct ibv_rwq_ind_table_init_attr ta = { 0 };
	struct ibv_wq *wqs[MAXQ];
	unsigned int i;

	for (i = 0; i < E.nrq; i++) {
		struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ,
					       .max_wr = DEPTH, .max_sge = 1,
					       .pd = E.parent };

		E.rq[i].cq.ibcq = ibv_create_cq(E.ctx, DEPTH, NULL, E.channel, 0);
		if (!E.rq[i].cq.ibcq)
			return false;
		wa.cq = E.rq[i].cq.ibcq;
		wqs[i] = E.rq[i].wq = ibv_create_wq(E.ctx, &wa);
		if (!wqs[i])
			return false;
	}
	while ((1u << ta.log_ind_tbl_size) < E.nrq)
		ta.log_ind_tbl_size++;
	ta.ind_tbl = wqs;
	E.table = ibv_create_rwq_ind_table(E.ctx, &ta);
	qa.rwq_ind_tbl = E.table;
	E.rss = E.table ? ibv_create_qp_ex(E.ctx, &qa) : NULL;
	if (!E.rss)
		return false;
	for (i = 0; i < E.nrq; i++) {
		struct manadv_obj obj = { .rwq = { .in = E.rq[i].wq,
						   .out = &E.rq[i].dv } };

		if (E.api.init_obj(&obj, MANADV_OBJ_RWQ) || cq_init(&E.rq[i].cq))
			return false;
		E.sport[i] = sport_for(E.nrq, i);
	}
	return true;
}

static bool setup(unsigned int nsq, unsigned int nrq, bool channel)
{
	struct ibv_parent_domain_init_attr pa = {
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.pd_context = (void *)(uintptr_t)1,
	};
	struct manadv_ctx_allocators al = { .alloc = buf_alloc, .free = buf_free };
	unsigned int i;

	E.nsq = nsq;
	E.nrq = nrq;
	if (manadv_api_load(&E.api))
		return false;
	E.ctx = emu_open_mana();
	if (!E.ctx || E.api.set_context_attr(E.ctx, MANADV_CTX_ATTR_BUF_ALLOCATORS, &al))
		return false;
	E.pd = ibv_alloc_pd(E.ctx);
	pa.pd = E.pd;
	E.parent = E.pd ? ibv_alloc_parent_domain(E.ctx, &pa) : NULL;
	E.mem_size = (size_t)2 * MAXQ * DEPTH * BUF_SIZE;
	if (!E.parent || posix_memalign((void **)&E.mem, 4096, E.mem_size))
		return false;
	memset(E.mem, 0, E.mem_size);
	E.mr = ibv_reg_mr(E.pd, E.mem, E.mem_size, IBV_ACCESS_LOCAL_WRITE);
	/* read-only for the device: fine to send from, not to receive into */
	E.ro_mem = E.mem + E.mem_size - 4096;
	E.ro_mr = ibv_reg_mr(E.pd, E.ro_mem, 4096, 0);
	if (!E.mr || !E.ro_mr)
		return false;
	if (channel && !(E.channel = ibv_create_comp_channel(E.ctx)))
		return false;
	for (i = 0; i < nsq; i++)
		if (!setup_sq(&E.sq[i], E.mem + (size_t)2 * i * DEPTH * BUF_SIZE))
			return false;
	for (i = 0; i < nrq; i++)
		E.rq[i].bufs = E.mem + (size_t)(2 * i + 1) * DEPTH * BUF_SIZE;
	return nrq ? setup_rss() : true;
}

static void teardown(void)
{
	unsigned int i;

	for (i = 0; i < E.nsq; i++) {
		if (E.sq[i].qp)
			CHECK_ERRNO(ibv_destroy_qp(E.sq[i].qp), 0);
		if (E.sq[i].cq.ibcq)
			CHECK_ERRNO(ibv_destroy_cq(E.sq[i].cq.ibcq), 0);
	}
	if (E.rss)
		CHECK_ERRNO(ibv_destroy_qp(E.rss), 0);
	if (E.table)
		CHECK_ERRNO(ibv_destroy_rwq_ind_table(E.table), 0);
	for (i = 0; i < E.nrq; i++) {
		if (E.rq[i].wq)
			CHECK_ERRNO(ibv_destroy_wq(E.rq[i].wq), 0);
		if (E.rq[i].cq.ibcq)
			CHECK_ERRNO(ibv_destroy_cq(E.rq[i].cq.ibcq), 0);
	}
	if (E.channel)
		CHECK_ERRNO(ibv_destroy_comp_channel(E.channel), 0);
	ibv_dereg_mr(E.mr);
	ibv_dereg_mr(E.ro_mr);
	ibv_dealloc_pd(E.parent);
	ibv_dealloc_pd(E.pd);
	CHECK_ERRNO(ibv_close_device(E.ctx), 0);
	free(E.mem);
}

/* ---- receive checks ------------------------------------------------------------ */

/* Receive one frame on @r; fills the decoded RX OOB and the CQE. */
static bool rx_one(struct rqx *r, struct mana_rx_comp_oob *o,
		   struct gdma_cqe *c)
{
	if (!cq_next(&r->cq, c))
		return false;
	CHECK(!c->is_sq && c->wq_num == r->dv.wq_id, "RX CQE wq_num %u is_sq %d",
	      c->wq_num, c->is_sq);
	return mana_rx_comp_oob_decode(c->data, o) == 0;
}

/* Frame @seq of @sport intact in RX buffer @slot, @len bytes long. */
static bool frame_ok(struct rqx *r, uint32_t slot, uint16_t sport,
		     uint32_t seq, size_t len, bool good_csum)
{
	uint8_t want[FRAME * 2];

	build_frame(want, len, sport, seq, good_csum);
	return !memcmp(r->bufs + (size_t)(slot % DEPTH) * BUF_SIZE, want, len);
}

/* ---- cases ---------------------------------------------------------------------- */

/* Frames through loopback over several CQ laps; every CQE field checked. */
static void case_loopback(void)
{
	struct sqx *s = &E.sq[0];
	struct rqx *r = &E.rq[0];
	unsigned int i, laps = 5, n = DEPTH * laps;
	uint16_t sport = E.sport[0];

	fill_rq(r);
	for (i = 0; i < n; i++) {
		uint8_t *f = s->bufs + (size_t)(i % DEPTH) * BUF_SIZE;
		struct mana_rx_comp_oob o;
		struct gdma_cqe c;
		uint32_t off, rx_off;

		build_frame(f, FRAME, sport, i, true);
		off = post_tx(s, f, FRAME);
		ring_sq(s);
		CHECK(cq_next(&s->cq, &c), "TX CQE %u", i);
		CHECK(c.is_sq && c.wq_num == s->dv.sq_id && tx_type(&c) == CQE_TX_OKAY,
		      "TX CQE %u: type %u wq %u", i, tx_type(&c), c.wq_num);
		{
			struct mana_tx_comp_oob t = { 0 };

			CHECK(!mana_tx_comp_oob_decode(c.data, &t) &&
			      t.tx_wqe_offset == off, "tx_wqe_offset %u want %u",
			      t.tx_wqe_offset, off);
		}
		rx_off = gdma_wqe_ring_offset(r->consumed, r->dv.size);
		CHECK(rx_one(r, &o, &c), "RX CQE %u", i);
		/* one WQ in the table: mana_ib programs RSS off, no hash */
		CHECK(o.cqe_type == CQE_RX_OKAY && o.ppi[0].pkt_len == FRAME &&
		      !o.ppi[0].pkt_hash && !o.rx_hashtype &&
		      o.rx_wqe_offset == rx_off,
		      "RX CQE %u: type %u len %u hash %#x type %#x off %u", i,
		      o.cqe_type, o.ppi[0].pkt_len, o.ppi[0].pkt_hash,
		      o.rx_hashtype, o.rx_wqe_offset);
		CHECK(o.rx_iphdr_csum_succeed && o.rx_udp_csum_succeed &&
		      !o.rx_iphdr_csum_fail && !o.rx_udp_csum_fail &&
		      !o.rx_vlantag_present, "RX flags of frame %u", i);
		CHECK(frame_ok(r, r->consumed, sport, i, FRAME, true),
		      "frame %u intact", i);
		r->consumed++;
		/* the kernel's rule: tell the device every few laps */
		if (i % DEPTH == DEPTH - 1) {
			ring_cq(&s->cq, s->dv.db_page, false);
			ring_cq(&r->cq, r->dv.db_page, false);
		}
		if (r->posted - r->consumed < DEPTH / 2)
			fill_rq(r);
	}
	{
		struct mana_emu_queue_info q = qinfo(MANA_EMU_QUEUE_SQ, s->dv.sq_id);

		CHECK(q.frames == n && q.bytes == (uint64_t)n * FRAME && !q.errors,
		      "SQ counters %llu %llu %llu", (unsigned long long)q.frames,
		      (unsigned long long)q.bytes, (unsigned long long)q.errors);
		q = qinfo(MANA_EMU_QUEUE_RQ, r->dv.wq_id);
		CHECK(q.frames == n && !q.drops && !q.errors, "RQ counters");
		q = qinfo(MANA_EMU_QUEUE_CQ, r->cq.dv.cq_id);
		CHECK(q.frames == n && !q.drops, "CQ counters");
	}
}

/*
 * The program mprotect()s the doorbell page: making it writable keeps the
 * trap (no doorbell lost, as on hardware where the page stays a device
 * page); taking write access away is refused with EACCES.
 */
static void case_mprotect(void)
{
	void *db = E.sq[0].dv.db_page;

	errno = 0;
	CHECK(mprotect(db, 4096, PROT_READ) == -1 && errno == EACCES,
	      "mprotect read-only: errno %d", errno);
	errno = 0;
	CHECK(mprotect(db, 4096, PROT_NONE) == -1 && errno == EACCES,
	      "mprotect PROT_NONE: errno %d", errno);
	errno = 0;
	CHECK(mprotect(db, 1, PROT_READ | PROT_WRITE | PROT_EXEC) == 0,
	      "mprotect RWX of part of the page: %s", strerror(errno));
	/* last: a writable page would take the stores without a trap */
	errno = 0;
	CHECK(mprotect(db, 4096, PROT_READ | PROT_WRITE) == 0,
	      "mprotect RW over the doorbell page: %s", strerror(errno));
	/* every doorbell still reaches the device */
	case_loopback();
}

/* One bad WQE: its error CQE, the counter, and the queue still works. */
static void tx_expect(struct sqx *s, uint8_t want, const char *what)
{
	struct mana_emu_queue_info before = qinfo(MANA_EMU_QUEUE_SQ, s->dv.sq_id);
	struct mana_emu_queue_info after;
	struct gdma_cqe c;

	ring_sq(s);
	CHECK(cq_next(&s->cq, &c), "%s: no CQE", what);
	CHECK(c.is_sq && c.wq_num == s->dv.sq_id && tx_type(&c) == want,
	      "%s: CQE type %u, want %u", what, tx_type(&c), want);
	after = qinfo(MANA_EMU_QUEUE_SQ, s->dv.sq_id);
	CHECK(after.errors == before.errors + (want != CQE_TX_OKAY) &&
	      after.frames == before.frames + (want == CQE_TX_OKAY),
	      "%s: counters", what);
}

static void case_errors(void)
{
	struct sqx *s = &E.sq[0];
	uint8_t *f = s->bufs;
	struct mana_tx_oob oob;
	struct gdma_cqe c;

	build_frame(f, FRAME, E.sport[0], 0, true);
	post_tx_oob(s, (oob = tx_oob(s), &oob), (uintptr_t)f, E.mr->lkey + 1000,
		    FRAME);
	tx_expect(s, CQE_TX_HDR_PROCESSING_ERROR, "bad lkey");
	post_tx_oob(s, &oob, (uintptr_t)E.mem + E.mem_size - 64, E.mr->lkey,
		    FRAME);
	tx_expect(s, CQE_TX_HDR_PROCESSING_ERROR, "SGE past the MR");
	post_tx_oob(s, &oob, (uintptr_t)E.ro_mem, E.ro_mr->lkey, FRAME);
	tx_expect(s, CQE_TX_OKAY, "read-only MR is fine for sending");
	oob.vcq_num ^= 1;
	post_tx_oob(s, &oob, (uintptr_t)f, E.mr->lkey, FRAME);
	tx_expect(s, CQE_TX_INVALID_OOB, "vcq mismatch");
	oob = tx_oob(s);
	oob.vsq_frame ^= 1;
	post_tx_oob(s, &oob, (uintptr_t)f, E.mr->lkey, FRAME);
	tx_expect(s, CQE_TX_INVALID_OOB, "vsq_frame mismatch");
	oob = tx_oob(s);
	oob.short_vp_offset ^= 0x40;
	post_tx_oob(s, &oob, (uintptr_t)f, E.mr->lkey, FRAME);
	tx_expect(s, CQE_TX_VPORT_IDX_OUT_OF_RANGE, "vport offset");
	oob = tx_oob(s);
	post_tx_oob(s, &oob, (uintptr_t)f, E.mr->lkey, 10);
	tx_expect(s, CQE_TX_INVALID_ETH_TYPE, "shorter than an Ethernet header");

	/* a reserved bit in the short OOB: the TX OOB does not decode */
	{
		uint32_t off = post_tx_oob(s, &oob, (uintptr_t)f, E.mr->lkey, FRAME);
		uint8_t *w = (uint8_t *)s->dv.sq_buf + off;

		w[8] = (w[8] & ~3) | 2;		/* pkt_fmt 2 */
		tx_expect(s, CQE_TX_INVALID_OOB, "bad packet format");
	}
	/* suppressed successes stay silent; errors never are */
	oob = tx_oob(s);
	oob.suppress_txcqe_gen = true;
	post_tx_oob(s, &oob, (uintptr_t)f, E.mr->lkey, FRAME);
	post_tx_oob(s, &oob, (uintptr_t)f, E.mr->lkey + 1000, FRAME);
	ring_sq(s);
	CHECK(cq_next(&s->cq, &c) && tx_type(&c) == CQE_TX_HDR_PROCESSING_ERROR,
	      "suppressed error still completes");
	post_tx_oob(s, &oob, (uintptr_t)f, E.mr->lkey, FRAME);
	ring_sq(s);
	CHECK(cq_stays_empty(&s->cq, 0.2), "suppressed success is silent");

	/* a doorbell running backwards is refused and counted */
	{
		struct mana_emu_queue_info before = qinfo(MANA_EMU_QUEUE_SQ,
							   s->dv.sq_id);
		struct gdma_doorbell db = { .kind = GDMA_DB_SQ, .id = s->dv.sq_id,
					    .tail = gdma_wq_db_tail(s->head_bu - 2) };

		ring(s->dv.db_page, GDMA_DB_OFF_SQ, &db);
		usleep(100000);
		CHECK(qinfo(MANA_EMU_QUEUE_SQ, s->dv.sq_id).errors ==
		      before.errors + 1, "backwards doorbell counted");
	}
	/* the queue still works */
	post_tx(s, f, FRAME);
	tx_expect(s, CQE_TX_OKAY, "after the errors");
}

/* @n frames (sequence 0..n-1) to RQ 0's port, each sent OK. */
static void send_frames(struct sqx *s, unsigned int n)
{
	struct gdma_cqe c;
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint8_t *f = s->bufs + (size_t)i * BUF_SIZE;

		build_frame(f, FRAME, E.sport[0], i, true);
		post_tx(s, f, FRAME);
	}
	ring_sq(s);
	for (i = 0; i < n; i++)
		CHECK(cq_next(&s->cq, &c) && tx_type(&c) == CQE_TX_OKAY, "TX %u", i);
}

/* The @n frames of send_frames(), received in order and intact. */
static void expect_frames(struct rqx *r, unsigned int n, const char *what)
{
	struct mana_rx_comp_oob o;
	struct gdma_cqe c;
	unsigned int i;

	for (i = 0; i < n; i++) {
		CHECK(rx_one(r, &o, &c) && o.ppi[0].pkt_len == FRAME,
		      "%s %u", what, i);
		CHECK(frame_ok(r, r->consumed, E.sport[0], i, FRAME, true),
		      "%s %u intact", what, i);
		r->consumed++;
	}
}

/* No posted receive WQE: the frame waits (--rx-hold=8), then drops. */
static void case_nobuf(void)
{
	struct sqx *s = &E.sq[0];
	struct rqx *r = &E.rq[0];
	struct mana_emu_queue_info q;
	uint64_t wakes;

	send_frames(s, 12);
	usleep(100000);
	q = qinfo(MANA_EMU_QUEUE_RQ, r->dv.wq_id);
	CHECK(q.drops == 4 && q.frames == 0, "RQ drops %llu, want 4 (8 held)",
	      (unsigned long long)q.drops);
	/*
	 * posting buffers delivers the held frames, oldest first; while
	 * frames wait for buffers an RQ doorbell wakes the device at once
	 */
	device_asleep();
	wakes = device_wakeups();
	fill_rq(r);
	CHECK(device_wakeups() > wakes, "the RQ doorbell woke the device holding frames");
	expect_frames(r, 8, "held frame");
	CHECK(cq_stays_empty(&r->cq, 0.1), "only the held frames");
}

/*
 * With no frame waiting for a buffer, RQ doorbells do not wake the
 * sleeping device: it takes them with the next frame's round, first.
 */
static void case_rq_quiet(void)
{
	struct sqx *s = &E.sq[0];
	struct rqx *r = &E.rq[0];
	struct mana_emu_queue_info q;
	unsigned int i;
	uint64_t wakes;

	device_asleep();
	wakes = device_wakeups();
	for (i = 0; i < 8; i++) {
		post_rx(r);
		ring_rq(r);
	}
	usleep(20000);
	CHECK(device_wakeups() == wakes, "8 RQ doorbells woke the device %llu times",
	      (unsigned long long)(device_wakeups() - wakes));
	send_frames(s, 8);
	expect_frames(r, 8, "frame into a buffer of the quiet doorbells:");
	q = qinfo(MANA_EMU_QUEUE_RQ, r->dv.wq_id);
	CHECK(q.frames == 8 && q.drops == 0, "RQ frames %llu drops %llu",
	      (unsigned long long)q.frames, (unsigned long long)q.drops);
}

/* The consumer sleeps through more than a lap: owner bits show it. */
static void case_overflow(void)
{
	struct sqx *s = &E.sq[0];
	unsigned int i, n = DEPTH + DEPTH / 2, sent;
	enum gdma_cqe_state st;
	struct gdma_cqe c;

	/* send n frames, never polling TX; no RSS QP so nothing is received */
	for (sent = 0; sent < n; sent += DEPTH / 2) {
		for (i = 0; i < DEPTH / 2; i++)
			post_tx(s, s->bufs, FRAME);
		ring_sq(s);
		usleep(100000);
	}
	CHECK(qinfo(MANA_EMU_QUEUE_CQ, s->cq.dv.cq_id).frames == n,
	      "all CQEs written");
	cq_peek(&s->cq, &st);
	CHECK(st == GDMA_CQE_OVERFLOW, "consumer at %u sees overflow (state %d)",
	      s->cq.head, st);
	/* the device learns it at the next CQ doorbell and counts the loss */
	ring_cq(&s->cq, s->dv.db_page, true);
	usleep(100000);
	CHECK(qinfo(MANA_EMU_QUEUE_CQ, s->cq.dv.cq_id).drops == n - DEPTH,
	      "lost CQEs counted: %llu",
	      (unsigned long long)qinfo(MANA_EMU_QUEUE_CQ, s->cq.dv.cq_id).drops);
	/* a consumer that catches up (skips to the oldest intact) goes on */
	s->cq.head += n - DEPTH;
	for (i = 0; i < DEPTH; i++)
		CHECK(cq_next(&s->cq, &c) && tx_type(&c) == CQE_TX_OKAY,
		      "intact CQE %u", i);
}

/* Each flow lands on the RQ the Toeplitz hash picks. */
static void case_rss(void)
{
	unsigned int i, q, sq = 0;
	struct mana_rx_comp_oob o;
	struct gdma_cqe c;

	for (q = 0; q < E.nrq; q++) {
		fill_rq(&E.rq[q]);
		CHECK(E.sport[q], "no flow for RQ %u", q);
	}
	for (i = 0; i < 4 * E.nrq; i++) {
		struct sqx *s = &E.sq[sq++ % E.nsq];
		uint8_t *f = s->bufs + (size_t)(i % DEPTH) * BUF_SIZE;

		q = i % E.nrq;
		build_frame(f, FRAME, E.sport[q], i, true);
		post_tx(s, f, FRAME);
		ring_sq(s);
		CHECK(cq_next(&s->cq, &c), "TX %u", i);
		CHECK(rx_one(&E.rq[q], &o, &c), "frame %u on RQ %u", i, q);
		CHECK(o.ppi[0].pkt_hash == hash_of(E.sport[q]) &&
		      o.rx_hashtype == MANA_HASH_L4,
		      "hash %#x want %#x, type %#x", o.ppi[0].pkt_hash,
		      hash_of(E.sport[q]), o.rx_hashtype);
		CHECK(frame_ok(&E.rq[q], E.rq[q].consumed, E.sport[q], i, FRAME,
			       true), "frame %u intact", i);
		E.rq[q].consumed++;
	}
	for (q = 0; q < E.nrq; q++)
		CHECK(cq_stays_empty(&E.rq[q].cq, 0.05), "RQ %u: nothing more", q);
	/* not IP: no hash, the default RQ (the table's last) */
	{
		struct sqx *s = &E.sq[0];
		struct rqx *def = &E.rq[E.nrq - 1];

		memset(s->bufs, 0, 64);
		s->bufs[12] = 0x88;
		s->bufs[13] = 0xb5;	/* local experimental ethertype */
		post_tx(s, s->bufs, 64);
		ring_sq(s);
		CHECK(cq_next(&s->cq, &c), "TX non-IP");
		CHECK(rx_one(def, &o, &c) && !o.rx_hashtype && !o.ppi[0].pkt_hash,
		      "non-IP frame on the default RQ");
	}
}

/*
 * testpmd's "port config all rss udp": a fields mask of UDP ports only.
 * mana_ib never passes the mask on, so the device hashes UDP frames by
 * their 4-tuple and spreads them, and other IPv4 by the address pair
 * (--rss-hash=device, the default).  With --rss-hash=mask (@by_mask) the
 * mask alone rules: no address bits, nothing hashable, all on the last RQ.
 */
static void case_rss_udp(bool by_mask)
{
	struct rqx *def = &E.rq[E.nrq - 1];
	struct mana_rx_comp_oob o;
	unsigned int i, q, want;
	struct gdma_cqe c;

	for (q = 0; q < E.nrq; q++) {
		fill_rq(&E.rq[q]);
		CHECK(E.sport[q], "no flow for RQ %u", q);
	}
	for (i = 0; i < 2 * E.nrq; i++) {
		struct sqx *s = &E.sq[0];
		uint8_t *f = s->bufs + (size_t)(i % DEPTH) * BUF_SIZE;
		struct rqx *r;

		q = i % E.nrq;
		want = by_mask ? E.nrq - 1 : q;
		r = &E.rq[want];
		build_frame(f, FRAME, E.sport[q], i, true);
		post_tx(s, f, FRAME);
		ring_sq(s);
		CHECK(cq_next(&s->cq, &c), "TX %u", i);
		CHECK(rx_one(r, &o, &c), "UDP frame %u (flow of RQ %u) on RQ %u",
		      i, q, want);
		if (by_mask)
			CHECK(!o.rx_hashtype && !o.ppi[0].pkt_hash,
			      "no hash by the mask: type %#x", o.rx_hashtype);
		else
			CHECK(o.rx_hashtype == MANA_HASH_L4 &&
			      o.ppi[0].pkt_hash == hash_of(E.sport[q]),
			      "4-tuple hash %#x want %#x, type %#x",
			      o.ppi[0].pkt_hash, hash_of(E.sport[q]),
			      o.rx_hashtype);
		CHECK(frame_ok(r, r->consumed, E.sport[q], i, FRAME, true),
		      "frame %u intact", i);
		r->consumed++;
	}
	/* IPv4 that is neither TCP nor UDP: the address pair (or nothing) */
	{
		struct sqx *s = &E.sq[0];
		uint8_t *f = s->bufs, in[8] = { 10, 0, 0, 1, 10, 0, 1, 1 };
		uint32_t h2 = 0;
		struct rqx *r;

		build_frame(f, FRAME, 1000, 0, false);
		f[14 + 9] = 47;		/* GRE */
		mana_toeplitz_hash(key, sizeof(key), in, sizeof(in), &h2);
		r = by_mask ? def : &E.rq[(h2 % 64) % E.nrq];
		post_tx(s, f, FRAME);
		ring_sq(s);
		CHECK(cq_next(&s->cq, &c), "TX GRE");
		CHECK(rx_one(r, &o, &c), "GRE frame on RQ of its address hash");
		CHECK(by_mask ? !o.rx_hashtype :
		      o.rx_hashtype == MANA_HASH_L3 && o.ppi[0].pkt_hash == h2,
		      "GRE hash %#x want %#x, type %#x", o.ppi[0].pkt_hash, h2,
		      o.rx_hashtype);
	}
	for (q = 0; q < E.nrq; q++)
		CHECK(cq_stays_empty(&E.rq[q].cq, 0.05), "RQ %u: nothing more", q);
}

/*
 * Raw CQs raise completion events from 6.8 ("Add CQ interrupt support for
 * RAW QP"); 6.2's had no EQ.  The era is in mana-emu's options.
 */
static bool raw_cq_events(void)
{
	return emu_kernel_version() >= 6008;
}

/*
 * 6.2: an armed CQ gets its CQEs and never an event.  The device thread
 * raises an event right after the CQE it belongs to, so once a later
 * CQE is visible the event would be in the channel already: no waiting.
 */
static void case_channel_no_eq(void)
{
	struct sqx *s = &E.sq[0];
	struct pollfd pfd = { .fd = E.channel->fd, .events = POLLIN };
	struct gdma_cqe c;

	ring_cq(&s->cq, s->dv.db_page, true);
	post_tx(s, s->bufs, FRAME);
	ring_sq(s);
	CHECK(cq_next(&s->cq, &c), "the CQE of the armed CQ");
	post_tx(s, s->bufs, FRAME);
	ring_sq(s);
	CHECK(cq_next(&s->cq, &c), "a later CQE");
	CHECK(poll(&pfd, 1, 0) == 0, "6.2: no completion event");
	/* arming with an unconsumed CQE: no event either */
	post_tx(s, s->bufs, FRAME);
	ring_sq(s);
	CHECK(cq_stays_empty(&s->cq, 0.05) == false, "CQE present");
	ring_cq(&s->cq, s->dv.db_page, true);
	post_tx(s, s->bufs, FRAME);
	ring_sq(s);
	CHECK(cq_next(&s->cq, &c) && cq_next(&s->cq, &c), "both CQEs");
	CHECK(poll(&pfd, 1, 0) == 0, "6.2: no immediate event");
}

/* Arm by CQ doorbell; the next CQE raises a completion event. */
static void case_channel(void)
{
	struct sqx *s = &E.sq[0];
	struct ibv_cq *ev_cq = NULL;
	void *ev_ctx = NULL;
	struct pollfd pfd = { .fd = E.channel->fd, .events = POLLIN };
	struct gdma_cqe c;
	unsigned int i;

	if (!raw_cq_events()) {
		case_channel_no_eq();
		return;
	}
	for (i = 0; i < 3; i++) {
		ring_cq(&s->cq, s->dv.db_page, true);
		usleep(20000);
		CHECK(poll(&pfd, 1, 0) == 0, "armed, nothing yet (%u)", i);
		post_tx(s, s->bufs, FRAME);
		ring_sq(s);
		CHECK(poll(&pfd, 1, TIMEOUT_S * 1000) == 1, "event fd readable");
		CHECK(ibv_get_cq_event(E.channel, &ev_cq, &ev_ctx) == 0 &&
		      ev_cq == s->cq.ibcq, "event for the armed CQ");
		ibv_ack_cq_events(s->cq.ibcq, 1);
		CHECK(cq_next(&s->cq, &c), "the CQE behind the event");
	}
	/* arming with an unconsumed CQE fires at once */
	post_tx(s, s->bufs, FRAME);
	ring_sq(s);
	CHECK(cq_stays_empty(&s->cq, 0.05) == false, "CQE present");
	ring_cq(&s->cq, s->dv.db_page, true);
	CHECK(poll(&pfd, 1, TIMEOUT_S * 1000) == 1 &&
	      ibv_get_cq_event(E.channel, &ev_cq, &ev_ctx) == 0,
	      "immediate event");
	ibv_ack_cq_events(s->cq.ibcq, 1);
	CHECK(cq_next(&s->cq, &c), "consume it");
	/* one shot: no more events without arming again */
	post_tx(s, s->bufs, FRAME);
	ring_sq(s);
	CHECK(cq_next(&s->cq, &c), "CQE");
	CHECK(poll(&pfd, 1, 100) == 0, "no event when not armed");
}

/* Two threads ring two SQs on the same doorbell page, back to back. */
struct ring_arg {
	struct sqx *s;
	unsigned int rounds;
	unsigned int errors;
};

static void *ring_thread(void *p)
{
	struct ring_arg *a = p;
	struct gdma_cqe c;
	unsigned int i, done = 0, posted = 0;

	for (i = 0; i < a->rounds; i++) {
		post_tx(a->s, a->s->bufs, FRAME);
		posted++;
		ring_sq(a->s);
		/* keep the SQ and CQ from filling: poll what has come */
		while (posted - done >= DEPTH / 2) {
			if (!cq_next(&a->s->cq, &c) || tx_type(&c) != CQE_TX_OKAY) {
				a->errors++;
				return NULL;
			}
			done++;
			if (done % DEPTH == 0)
				ring_cq(&a->s->cq, a->s->dv.db_page, false);
		}
	}
	while (done < posted) {
		if (!cq_next(&a->s->cq, &c)) {
			a->errors++;
			return NULL;
		}
		done++;
	}
	return NULL;
}

static void case_threads(void)
{
	struct ring_arg a[2] = { { &E.sq[0], 5000 }, { &E.sq[1], 5000 } };
	pthread_t t[2];
	unsigned int i;

	build_frame(E.sq[0].bufs, FRAME, E.sport[0], 0, true);
	build_frame(E.sq[1].bufs, FRAME, E.sport[0], 1, true);
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, ring_thread, &a[i]);
	for (i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		CHECK(!a[i].errors, "thread %u lost completions", i);
		CHECK(qinfo(MANA_EMU_QUEUE_SQ, E.sq[i].dv.sq_id).frames ==
		      a[i].rounds, "SQ %u sent every frame", i);
	}
}

/* TX checksum offload completes both checksums; VLAN insert and strip. */
static void case_offload(void)
{
	struct sqx *s = &E.sq[0];
	struct rqx *r = &E.rq[0];
	struct mana_rx_comp_oob o;
	struct mana_tx_oob oob;
	struct gdma_cqe c;
	uint8_t *f = s->bufs;

	fill_rq(r);
	/* zero checksums, the device fills them */
	build_frame(f, FRAME, E.sport[0], 7, false);
	oob = tx_oob(s);
	oob.comp_iphdr_csum = oob.comp_udp_csum = true;
	post_tx_oob(s, &oob, (uintptr_t)f, E.mr->lkey, FRAME);
	ring_sq(s);
	CHECK(cq_next(&s->cq, &c) && tx_type(&c) == CQE_TX_OKAY, "TX");
	CHECK(rx_one(r, &o, &c) && o.rx_iphdr_csum_succeed &&
	      o.rx_udp_csum_succeed, "checksums computed by the device");
	CHECK(frame_ok(r, r->consumed++, E.sport[0], 7, FRAME, true),
	      "frame equals the one with checksums");

	/* wrong checksums are reported as such */
	build_frame(f, FRAME, E.sport[0], 8, true);
	f[24] ^= 0xff;		/* IPv4 checksum */
	f[40] ^= 0xff;		/* UDP checksum */
	post_tx(s, f, FRAME);
	ring_sq(s);
	CHECK(cq_next(&s->cq, &c), "TX");
	CHECK(rx_one(r, &o, &c) && o.rx_iphdr_csum_fail && o.rx_udp_csum_fail,
	      "bad checksums flagged");
	r->consumed++;

	/* long OOB with a VLAN tag: inserted on TX, stripped and reported on RX */
	build_frame(f, FRAME, E.sport[0], 9, true);
	oob = tx_oob(s);
	oob.pkt_fmt = MANA_LONG_PKT_FMT;
	oob.inject_vlan_pri_tag = true;
	oob.vlan_id = 0x123;
	oob.pcp = 5;
	post_tx_oob(s, &oob, (uintptr_t)f, E.mr->lkey, FRAME);
	ring_sq(s);
	CHECK(cq_next(&s->cq, &c) && tx_type(&c) == CQE_TX_OKAY, "TX VLAN");
	CHECK(rx_one(r, &o, &c) && o.rx_vlantag_present && o.rx_vlan_id == 0x123 &&
	      o.ppi[0].pkt_len == FRAME && o.rx_udp_csum_succeed,
	      "VLAN stripped and reported (present %d id %#x len %u)",
	      o.rx_vlantag_present, o.rx_vlan_id, o.ppi[0].pkt_len);
	CHECK(frame_ok(r, r->consumed++, E.sport[0], 9, FRAME, true),
	      "untagged frame delivered");
}

/* --rx-coalesce: up to four frames per CQE, one WQE each. */
static void case_coalesce(void)
{
	struct sqx *s = &E.sq[0];
	struct rqx *r = &E.rq[0];
	unsigned int i, got = 0, cqes = 0, n = 10;
	struct mana_rx_comp_oob o;
	struct gdma_cqe c;

	fill_rq(r);
	for (i = 0; i < n; i++) {
		uint8_t *f = s->bufs + (size_t)i * BUF_SIZE;

		build_frame(f, FRAME, E.sport[0], i, true);
		post_tx(s, f, FRAME);
	}
	ring_sq(s);
	while (got < n && rx_one(r, &o, &c)) {
		unsigned int k = mana_rx_comp_pkts(&o);

		CHECK(o.cqe_type == (k > 1 ? CQE_RX_COALESCED_4 : CQE_RX_OKAY),
		      "type %u for %u packets", o.cqe_type, k);
		for (i = 0; i < k; i++) {
			CHECK(o.ppi[i].pkt_len == FRAME, "packet %u length", got);
			CHECK(frame_ok(r, r->consumed, E.sport[0], got, FRAME, true),
			      "packet %u intact", got);
			r->consumed++;
			got++;
		}
		cqes++;
	}
	CHECK(got == n && cqes < n && cqes >= (n + 3) / 4,
	      "%u packets in %u CQEs", got, cqes);
}

/* --fault=fatal-after=5: DEVICE_FATAL after the 5th frame, then silence. */
static void case_fatal(bool by_signal)
{
	struct ibv_async_event ev;
	struct sqx *s = &E.sq[0];
	struct gdma_cqe c;
	unsigned int i;

	for (i = 0; i < 8; i++)
		post_tx(s, s->bufs, FRAME);
	if (by_signal) {
		ring_sq(s);
		for (i = 0; i < 8; i++)
			CHECK(cq_next(&s->cq, &c), "CQE %u before the signal", i);
		kill(getpid(), SIGUSR2);
		post_tx(s, s->bufs, FRAME);
	}
	ring_sq(s);
	CHECK(ibv_get_async_event(E.ctx, &ev) == 0 &&
	      ev.event_type == IBV_EVENT_DEVICE_FATAL, "DEVICE_FATAL");
	ibv_ack_async_event(&ev);
	if (by_signal) {
		CHECK(cq_stays_empty(&s->cq, 0.2), "nothing after the fatal");
		return;
	}
	for (i = 0; i < 5; i++)
		CHECK(cq_next(&s->cq, &c), "CQE %u before the fatal", i);
	CHECK(cq_stays_empty(&s->cq, 0.2), "device stopped after 5 frames");
	CHECK(qinfo(MANA_EMU_QUEUE_SQ, s->dv.sq_id).frames == 5, "5 sent");
}

/* --fault=drop-cqe=3: the third CQE never appears. */
static void case_drop_cqe(void)
{
	struct sqx *s = &E.sq[0];
	struct gdma_cqe c;
	unsigned int i;

	for (i = 0; i < 5; i++)
		post_tx(s, s->bufs, FRAME);
	ring_sq(s);
	for (i = 0; i < 4; i++)
		CHECK(cq_next(&s->cq, &c), "CQE %u", i);
	CHECK(cq_stays_empty(&s->cq, 0.1), "one withheld");
	CHECK(qinfo(MANA_EMU_QUEUE_CQ, s->cq.dv.cq_id).drops == 1,
	      "withheld CQE counted");
}

/*
 * --netdev-up: the kernel netdev holds the port; raw QP creation fails
 * with EBUSY (before 7.2: ENODEV) and the provider says what to do
 * (VERBS_LOG_FILE).
 */
static int case_netdev(void)
{
	struct ibv_parent_domain_init_attr pa = {
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.pd_context = (void *)(uintptr_t)1,
	};
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RAW_PACKET,
				       .cap = { .max_send_wr = 16,
						.max_send_sge = 1 } };
	const char *log = getenv("VERBS_LOG_FILE");
	char text[8192] = "";
	struct ibv_qp *qp;
	FILE *f;
	size_t n;

	CHECK(log != NULL, "run with VERBS_LOG_LEVEL=1 VERBS_LOG_FILE=...");
	if (log) {
		f = fopen(log, "w");	/* this run's lines only */
		if (f)
			fclose(f);
	}
	CHECK(!manadv_api_load(&E.api), "libmana.so.1");
	E.ctx = emu_open_mana();
	CHECK(E.ctx != NULL, "open");
	if (!E.ctx || !log)
		return check_done();
	{
		struct manadv_ctx_allocators al = { .alloc = buf_alloc,
						    .free = buf_free };

		E.api.set_context_attr(E.ctx, MANADV_CTX_ATTR_BUF_ALLOCATORS, &al);
	}
	E.pd = ibv_alloc_pd(E.ctx);
	pa.pd = E.pd;
	E.parent = ibv_alloc_parent_domain(E.ctx, &pa);
	qa.send_cq = qa.recv_cq = ibv_create_cq(E.ctx, 16, NULL, NULL, 0);
	CHECK(E.parent && qa.send_cq, "setup");
	errno = 0;
	qp = ibv_create_qp(E.parent, &qa);
	CHECK(!qp && errno == (emu_kernel_version() >= 7002 ? EBUSY : ENODEV),
	      "raw QP with the netdev up: %s", qp ? "created" : strerror(errno));
	fflush(NULL);		/* libibverbs buffers its log stream */
	f = fopen(log, "r");
	n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
	text[n] = 0;
	if (f)
		fclose(f);
	CHECK(strstr(text, "set it down") && strstr(text, "ip link set"),
	      "provider log tells what to do: '%s'", text);
	if (qp)
		ibv_destroy_qp(qp);
	ibv_destroy_cq(qa.send_cq);
	ibv_dealloc_pd(E.parent);
	ibv_dealloc_pd(E.pd);
	ibv_close_device(E.ctx);
	return check_done();
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "loopback";
	struct {
		const char *name;
		unsigned int nsq, nrq;
		bool channel;
	} cfg[] = {
		{ "loopback", 1, 1 }, { "errors", 1, 0 }, { "nobuf", 1, 1 },
		{ "overflow", 1, 0 }, { "rss", 2, 4 }, { "channel", 1, 0, true },
		{ "threads", 2, 0 }, { "offload", 1, 1 }, { "coalesce", 1, 1 },
		{ "fatal", 1, 0 }, { "sigusr2", 1, 0 }, { "drop_cqe", 1, 0 },
		{ "rss_udp", 1, 4 }, { "rss_udp_mask", 1, 4 },
		{ "die_term", 1, 0 }, { "die_abort", 1, 0 },
		{ "mprotect", 1, 1 }, { "rq_quiet", 1, 1 },
	};
	unsigned int i;

	if (!strcmp(name, "netdev"))
		return case_netdev();
	for (i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++)
		if (!strcmp(cfg[i].name, name))
			break;
	if (i == sizeof(cfg) / sizeof(cfg[0])) {
		fprintf(stderr, "unknown case %s\n", name);
		return 2;
	}
	if (!strncmp(name, "rss_udp", 7))
		E.fields = IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP;
	CHECK(setup(cfg[i].nsq, cfg[i].nrq, cfg[i].channel),
	      "setup: %s", strerror(errno));
	if (check_failed)
		return check_done();
	if (!strcmp(name, "loopback"))
		case_loopback();
	else if (!strcmp(name, "errors"))
		case_errors();
	else if (!strcmp(name, "nobuf"))
		case_nobuf();
	else if (!strcmp(name, "overflow"))
		case_overflow();
	else if (!strcmp(name, "rss"))
		case_rss();
	else if (!strcmp(name, "channel"))
		case_channel();
	else if (!strcmp(name, "threads"))
		case_threads();
	else if (!strcmp(name, "offload"))
		case_offload();
	else if (!strcmp(name, "coalesce"))
		case_coalesce();
	else if (!strcmp(name, "rss_udp") || !strcmp(name, "rss_udp_mask"))
		case_rss_udp(!strcmp(name, "rss_udp_mask"));
	else if (!strcmp(name, "mprotect"))
		case_mprotect();
	else if (!strcmp(name, "rq_quiet"))
		case_rq_quiet();
	else if (!strncmp(name, "die_", 4)) {
		case_fatal(false);
		if (check_failed)
			return check_done();
		fflush(NULL);
		if (!strcmp(name, "die_abort"))
			abort();
		kill(getpid(), SIGTERM);
		CHECK(0, "still alive after SIGTERM");
	} else if (!strcmp(name, "fatal"))
		case_fatal(false);
	else if (!strcmp(name, "sigusr2"))
		case_fatal(true);
	else
		case_drop_cqe();
	teardown();
	return check_done();
}
