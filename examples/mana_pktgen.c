// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mana-pktgen: the smallest complete custom MANA datapath.
 *
 * Verbs create the queues; manadv_init_obj() hands over their memory and
 * ids; from then on this program builds WQEs, rings doorbells and reads CQEs
 * itself, exactly as DPDK's net/mana does:
 *
 *   send QP per TX queue  -> post TX WQEs (short OOB + 1 SGE), ring the SQ
 *   RSS QP over RX WQs    -> post RX WQEs (1 SGE), ring the RQ
 *   each CQ               -> poll CQEs by owner bits, consume in order
 *
 * Modes: loopback (send and receive here, verify every frame), send, recv,
 * echo (return every received frame), reflect (answer IPv4/UDP frames).  With mana-emu's loopback backend:
 *   mana-emu -- mana-pktgen --frames=1000000 --size=64 --flows=4 --queues=4
 *
 * --cq-doorbell=never polls the CQs by owner bits alone and never tells the
 * device the consumer index, as DPDK's net/mana does (it rings a CQ only to
 * arm it for an interrupt).  At the end the program reads the context's
 * asynchronous events: a CQ error means the device reported completions lost.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <infiniband/verbs.h>
#include <infiniband/manadv.h>

#include "mana_dv.h"
#include "udp4_frame.h"
#include "providers/mana/toeplitz.h"

#define MAX_QUEUES 16
#define RX_BUF_SIZE 2048
#define BATCH 32
#define IDLE_SPIN 64	/* empty polls before yielding the CPU */
#define PAYLOAD_MAGIC 0x4d414e41u	/* "MANA" */

static const uint8_t rss_key[MANA_RSS_KEY_LEN] = MANA_RSS_SAMPLE_KEY;
#define RSS_FIELDS (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | \
		    IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)

/*
 * echo: return every frame unchanged; reflect: return IPv4/UDP frames to
 * their sender (addresses and ports swapped, so checksums stay valid) and
 * ignore everything else, e.g. to answer the Linux stack through a TAP.
 */
enum mode { MODE_LOOPBACK, MODE_SEND, MODE_RECV, MODE_ECHO, MODE_REFLECT };

struct config {
	enum mode mode;
	uint64_t frames;
	uint32_t size;
	uint32_t flows;
	uint32_t queues;
	uint32_t depth;
	uint32_t port;
	double timeout;
	bool quiet;
	bool cq_doorbell;		/* report consumed CQEs (default) */
	bool verify;			/* recv: check every frame as loopback does */
	bool own_queues;		/* queues on the provider's own rings */
	uint32_t rx_sleep_us;		/* pause after each RX poll that got frames */
	uint64_t progress;		/* say so on stderr once this many came */
	const char *resume_file;	/* after --progress frames, stop until it exists */
};

/* --dmac: where send mode's frames go (default the emulator's first MAC) */
static uint8_t dst_mac[6] = { 0x00, 0x0d, 0x3a, 0x00, 0x00, 0x01 };

struct txq {
	struct ibv_cq *ibcq;
	struct ibv_qp *qp;
	struct mana_dv_cq cq;
	struct mana_dv_sq sq;
	uint8_t *bufs;			/* depth frame buffers */
	uint64_t errors;
};

struct rxq {
	struct ibv_cq *ibcq;
	struct ibv_wq *wq;
	struct mana_dv_cq cq;
	struct mana_dv_rq rq;
	uint8_t *bufs;			/* slot = WQE count % depth */
	uint64_t frames, bytes, errors;
};

struct app {
	struct config cfg;
	struct ibv_context *ctx;
	struct ibv_pd *pd, *parent;
	struct ibv_mr *mr;
	uint8_t *mem;
	size_t mem_size;
	struct txq tx[MAX_QUEUES];
	struct rxq rx[MAX_QUEUES];
	struct ibv_rwq_ind_table *table;
	struct ibv_qp *rss;
	uint64_t *next_seq;		/* per flow, loopback verification */
	uint64_t sent, received, bad;
	uint64_t async_events, cq_errors;
};

/* ---- frames ------------------------------------------------------------ */

/* Flow @flow: its addresses and ports (MACs are the same for all). */
static void flow_address(uint32_t flow, struct udp4_flow *a)
{
	static const struct udp4_flow base = {
		.smac = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 },
		.src_ip = { 10, 0, 0, 1 }, .dst_ip = { 10, 0, 1, 1 },
		.dport = 4791,
	};

	*a = base;
	memcpy(a->dmac, dst_mac, 6);
	a->src_ip[3] += flow % 200;
	/* spread source ports: 4 flows land on 4 different queues of 4 */
	a->sport = 1024 + (flow * 29) % 60000;
}

static uint8_t pattern(uint64_t seq, uint32_t i)
{
	return (uint8_t)(seq * 31 + i * 7);
}

/* Ethernet + IPv4 + UDP, payload {magic, flow, seq, pattern...}. */
static void build_frame(uint8_t *f, uint32_t size, uint32_t flow, uint64_t seq)
{
	uint32_t i, pl_len = size - UDP4_FRAME_HDR;
	struct udp4_flow a;
	uint8_t *pl;

	flow_address(flow, &a);
	pl = udp4_frame_headers(f, size, &a);
	gdma_put_le32(pl, PAYLOAD_MAGIC);
	gdma_put_le32(pl + 4, flow);
	gdma_put_le64(pl + 8, seq);
	for (i = 16; i < pl_len; i++)
		pl[i] = pattern(seq, i);
}

/* 0 if @f is an intact frame of ours; fills flow and seq. */
static int check_frame(const uint8_t *f, uint32_t len, uint32_t want_size,
		       uint32_t *flow, uint64_t *seq)
{
	const uint8_t *pl = f + UDP4_FRAME_HDR;
	uint32_t i;

	if (len != want_size || len < UDP4_FRAME_HDR + 16 || f[12] != 0x08 || f[13] != 0 ||
	    f[23] != IPPROTO_UDP || gdma_get_le32(pl) != PAYLOAD_MAGIC)
		return -1;
	*flow = gdma_get_le32(pl + 4);
	*seq = gdma_get_le64(pl + 8);
	for (i = 16; i < len - UDP4_FRAME_HDR; i++)
		if (pl[i] != pattern(*seq, i))
			return -1;
	return 0;
}

/* The RX queue the device must pick for @flow: Toeplitz, 64-entry table. */
static uint32_t expected_queue(const struct config *cfg, uint32_t flow)
{
	struct mana_rss_tuple t = { .l3 = MANA_RSS_L3_IPV4, .l4_proto = IPPROTO_UDP,
				    .l4_valid = true };
	struct udp4_flow a;
	uint32_t hash, type;

	flow_address(flow, &a);
	memcpy(t.src, a.src_ip, 4);
	memcpy(t.dst, a.dst_ip, 4);
	t.sport = a.sport;
	t.dport = a.dport;
	if (mana_rss_hash(rss_key, RSS_FIELDS, &t, &hash, &type))
		return 0;
	/* mana_ib replicates the user table over the device's 64 entries */
	return (hash % 64) % cfg->queues;
}

/* ---- setup ------------------------------------------------------------- */

static int die(const char *what)
{
	fprintf(stderr, "mana-pktgen: %s: %s\n", what, strerror(errno));
	return -1;
}

static int setup_tx(struct app *a, uint32_t i)
{
	struct txq *q = &a->tx[i];
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = a->cfg.depth, .max_send_sge = 1 },
	};

	q->ibcq = ibv_create_cq(a->ctx, a->cfg.depth, NULL, NULL, 0);
	if (!q->ibcq)
		return die("ibv_create_cq(tx)");
	qa.send_cq = qa.recv_cq = q->ibcq;
	q->qp = ibv_create_qp(a->parent, &qa);
	if (!q->qp)
		return die("ibv_create_qp(raw)");
	/* the CQ id exists once the QP bound the CQ */
	errno = mana_dv_cq_init(&q->cq, q->ibcq);
	if (errno)
		return die("manadv_init_obj(CQ)");
	errno = mana_dv_sq_init(&q->sq, q->qp, &q->cq);
	if (errno)
		return die("manadv_init_obj(QP)");
	return 0;
}

static int setup_rx(struct app *a)
{
	struct ibv_wq *wqs[MAX_QUEUES];
	struct ibv_rwq_ind_table_init_attr ta = { .ind_tbl = wqs };
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_RX_HASH |
			     IBV_QP_INIT_ATTR_IND_TABLE,
		.pd = a->parent,
		.rx_hash_conf = {
			.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
			.rx_hash_key_len = sizeof(rss_key),
			.rx_hash_key = (uint8_t *)rss_key,
			.rx_hash_fields_mask = RSS_FIELDS,
		},
	};
	uint32_t i;

	for (i = 0; i < a->cfg.queues; i++) {
		struct ibv_wq_init_attr wa = {
			.wq_type = IBV_WQT_RQ, .max_wr = a->cfg.depth,
			.max_sge = 1, .pd = a->parent,
		};

		a->rx[i].ibcq = ibv_create_cq(a->ctx, a->cfg.depth, NULL, NULL, 0);
		if (!a->rx[i].ibcq)
			return die("ibv_create_cq(rx)");
		wa.cq = a->rx[i].ibcq;
		wqs[i] = a->rx[i].wq = ibv_create_wq(a->ctx, &wa);
		if (!wqs[i])
			return die("ibv_create_wq");
	}
	while ((1u << ta.log_ind_tbl_size) < a->cfg.queues)
		ta.log_ind_tbl_size++;
	a->table = ibv_create_rwq_ind_table(a->ctx, &ta);
	if (!a->table)
		return die("ibv_create_rwq_ind_table");
	qa.rwq_ind_tbl = a->table;
	a->rss = ibv_create_qp_ex(a->ctx, &qa);
	if (!a->rss)
		return die("ibv_create_qp_ex(rss)");

	/* ids exist only now that the RSS QP created the hardware queues */
	for (i = 0; i < a->cfg.queues; i++) {
		errno = mana_dv_rq_init(&a->rx[i].rq, a->rx[i].wq);
		if (errno)
			return die("manadv_init_obj(RWQ)");
		errno = mana_dv_cq_init(&a->rx[i].cq, a->rx[i].ibcq);
		if (errno)
			return die("manadv_init_obj(CQ)");
	}
	return 0;
}

static int setup_memory(struct app *a)
{
	size_t per_q = (size_t)a->cfg.depth * RX_BUF_SIZE;
	uint32_t i;

	a->mem_size = 2 * per_q * a->cfg.queues;
	if (posix_memalign((void **)&a->mem, 4096, a->mem_size))
		return die("posix_memalign");
	memset(a->mem, 0, a->mem_size);
	a->mr = ibv_reg_mr(a->pd, a->mem, a->mem_size, IBV_ACCESS_LOCAL_WRITE);
	if (!a->mr)
		return die("ibv_reg_mr");
	for (i = 0; i < a->cfg.queues; i++) {
		a->tx[i].bufs = a->mem + 2 * i * per_q;
		a->rx[i].bufs = a->tx[i].bufs + per_q;
	}
	return 0;
}

/*
 * Queue memory from the application, as DPDK does; rdma-core's libmana
 * insists on it, ours accepts either.  Page aligned and zeroed: a CQ must
 * start with owner bits 0, and rdma-core's libmana does not clear it.
 */
static void *queue_alloc(size_t size, void *data)
{
	void *p;

	(void)data;
	if (posix_memalign(&p, 4096, size))
		return NULL;
	memset(p, 0, size);
	return p;
}

static void queue_free(void *ptr, void *data)
{
	(void)data;
	free(ptr);
}

static int setup(struct app *a)
{
	struct manadv_ctx_allocators alloc = { .alloc = queue_alloc,
					       .free = queue_free };
	struct ibv_parent_domain_init_attr pa = {
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
	};
	struct ibv_device **list;
	uint32_t i;
	int n;

	list = ibv_get_device_list(&n);
	if (!list || !n)
		return die("no RDMA device (run under mana-emu?)");
	a->ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (!a->ctx)
		return die("ibv_open_device");
	a->pd = ibv_alloc_pd(a->ctx);
	if (!a->pd)
		return die("ibv_alloc_pd");
	/* MANA: the parent domain's pd_context names the port */
	pa.pd = a->pd;
	pa.pd_context = (void *)(uintptr_t)a->cfg.port;
	a->parent = ibv_alloc_parent_domain(a->ctx, &pa);
	if (!a->parent)
		return die("ibv_alloc_parent_domain");
	/*
	 * DPDK's way: the queues on our allocator.  --own-queues: on the
	 * provider's own rings, as a plain verbs application has them.
	 */
	errno = a->cfg.own_queues ? 0 :
		manadv_set_context_attr(a->ctx, MANADV_CTX_ATTR_BUF_ALLOCATORS, &alloc);
	if (errno)
		return die("manadv_set_context_attr");
	if (setup_memory(a))
		return -1;
	for (i = 0; i < a->cfg.queues; i++)
		if (setup_tx(a, i))
			return -1;
	return setup_rx(a);
}

static void teardown(struct app *a)
{
	uint32_t i;

	for (i = 0; i < a->cfg.queues; i++) {
		if (a->tx[i].qp)
			ibv_destroy_qp(a->tx[i].qp);
		if (a->tx[i].ibcq)
			ibv_destroy_cq(a->tx[i].ibcq);
	}
	if (a->rss)
		ibv_destroy_qp(a->rss);
	if (a->table)
		ibv_destroy_rwq_ind_table(a->table);
	for (i = 0; i < a->cfg.queues; i++) {
		if (a->rx[i].wq)
			ibv_destroy_wq(a->rx[i].wq);
		if (a->rx[i].ibcq)
			ibv_destroy_cq(a->rx[i].ibcq);
	}
	if (a->mr)
		ibv_dereg_mr(a->mr);
	free(a->mem);
	if (a->parent)
		ibv_dealloc_pd(a->parent);
	if (a->pd)
		ibv_dealloc_pd(a->pd);
	if (a->ctx)
		ibv_close_device(a->ctx);
	free(a->next_seq);
}

/* ---- datapath ---------------------------------------------------------- */

static bool post_rx(struct app *a, struct rxq *q)
{
	uint32_t slot = q->rq.posted % a->cfg.depth;

	return mana_dv_rq_post(&q->rq, (uintptr_t)(q->bufs + (size_t)slot * RX_BUF_SIZE),
			       a->mr->lkey, RX_BUF_SIZE);
}

static bool post_tx(struct app *a, struct txq *q, const uint8_t *frame, uint32_t len)
{
	return mana_dv_sq_post(&q->sq, (uintptr_t)frame, a->mr->lkey, len,
			       MANA_TXOOB_IPV4);
}

/* Every send asks for a completion, as DPDK does; one CQE frees one WQE. */
static int poll_tx(const struct app *a, struct txq *q)
{
	struct mana_cqe_header h;
	bool overflow = false;
	const uint8_t *cqe;
	int n = 0;

	while ((cqe = mana_dv_cq_next(&q->cq, &overflow))) {
		if (mana_cqe_header_decode(cqe, &h) || h.cqe_type != CQE_TX_OKAY)
			q->errors++;
		q->sq.completed++;
		n++;
	}
	if (overflow) {
		fprintf(stderr, "mana-pktgen: TX CQ overflow\n");
		return -1;
	}
	if (a->cfg.cq_doorbell)
		mana_dv_cq_consumed(&q->cq, q->sq.dv.db_page);
	return n;
}

static void account_rx(struct app *a, struct rxq *q, uint32_t qi,
		       const uint8_t *frame, uint32_t len)
{
	uint32_t flow;
	uint64_t seq;

	q->frames++;
	q->bytes += len;
	a->received++;
	/* a script waiting for the transfer to be under way */
	if (a->received == a->cfg.progress)
		fprintf(stderr, "mana-pktgen: received %" PRIu64 "\n",
			a->received);
	if (a->cfg.mode != MODE_LOOPBACK &&
	    !(a->cfg.mode == MODE_RECV && a->cfg.verify))
		return;
	/* recv: every frame of the sender's flows, in order, none lost */
	if (check_frame(frame, len, a->cfg.size, &flow, &seq) ||
	    flow >= a->cfg.flows || seq != a->next_seq[flow] ||
	    (a->cfg.mode == MODE_LOOPBACK && expected_queue(&a->cfg, flow) != qi)) {
		a->bad++;
		return;
	}
	a->next_seq[flow] += a->cfg.flows;
}

/* Swap Ethernet, IPv4 and UDP source and destination; false if not IPv4/UDP. */
static bool reflect_frame(uint8_t *f, uint32_t len)
{
	uint8_t tmp[6];
	uint32_t ihl;

	if (len < 42 || f[12] != 0x08 || f[13] != 0x00 || (f[14] >> 4) != 4 ||
	    f[23] != IPPROTO_UDP)
		return false;
	ihl = (f[14] & 0xf) * 4;
	if (len < 14 + ihl + 8)
		return false;
	memcpy(tmp, f, 6);
	memcpy(f, f + 6, 6);
	memcpy(f + 6, tmp, 6);
	memcpy(tmp, f + 26, 4);
	memcpy(f + 26, f + 30, 4);
	memcpy(f + 30, tmp, 4);
	memcpy(tmp, f + 14 + ihl, 2);
	memcpy(f + 14 + ihl, f + 16 + ihl, 2);
	memcpy(f + 16 + ihl, tmp, 2);
	return true;
}

static int poll_rx(struct app *a, uint32_t qi, struct txq *echo)
{
	struct rxq *q = &a->rx[qi];
	struct mana_rx_comp_oob oob;
	bool overflow = false;
	const uint8_t *cqe;
	uint32_t i, wqes;
	int n = 0;

	while ((cqe = mana_dv_cq_next(&q->cq, &overflow))) {
		if (mana_rx_comp_oob_decode(cqe, &oob)) {
			q->errors++;
			wqes = 1;
		} else {
			/* one WQE per delivered frame (coalesced CQEs carry up to 4) */
			wqes = mana_rx_comp_wqes(&oob);
			for (i = 0; i < mana_rx_comp_pkts(&oob); i++) {
				uint32_t slot = (q->rq.consumed + i) % a->cfg.depth;
				uint8_t *f = q->bufs + (size_t)slot * RX_BUF_SIZE;

				if (a->cfg.mode == MODE_REFLECT &&
				    !reflect_frame(f, oob.ppi[i].pkt_len))
					continue;	/* not ours to answer */
				account_rx(a, q, qi, f, oob.ppi[i].pkt_len);
				if (echo && !post_tx(a, echo, f, oob.ppi[i].pkt_len))
					q->errors++;
			}
			if (oob.cqe_type != CQE_RX_OKAY &&
			    oob.cqe_type != CQE_RX_COALESCED_4)
				q->errors++;
		}
		q->rq.consumed += wqes;
		n++;
	}
	/* a receiver slower than its sender (--rx-sleep) */
	if (n && a->cfg.rx_sleep_us)
		usleep(a->cfg.rx_sleep_us);
	if (overflow) {
		fprintf(stderr, "mana-pktgen: RX CQ %u overflow\n", qi);
		return -1;
	}
	if (a->cfg.cq_doorbell)
		mana_dv_cq_consumed(&q->cq, q->rq.dv.db_page);
	/* give the consumed buffers back a batch at a time, one doorbell */
	if (mana_dv_rq_want_refill(&q->rq)) {
		while (post_rx(a, q))
			;
		mana_dv_rq_ring(&q->rq);
	}
	return n;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t max_in_flight(const struct mana_dv_rq *rq)
{
	return rq->cap - mana_dv_rq_batch(rq) + 1;
}

static uint64_t min_u64(uint64_t x, uint64_t y)
{
	return x < y ? x : y;
}

/*
 * Wait for room for a whole burst (or what is left to send) rather than
 * send the odd frame as soon as one slot frees: otherwise, with a device
 * that keeps up, every burst would be a frame or two and each would cost
 * a doorbell.
 */
static bool burst_fits(const struct app *a)
{
	uint64_t want = min_u64(BATCH, a->cfg.frames - a->sent), lim;
	uint32_t i;

	if (a->cfg.mode == MODE_LOOPBACK) {
		lim = max_in_flight(&a->rx[0].rq);
		if (lim - min_u64(a->sent - a->received, lim) < min_u64(want, lim))
			return false;
	}
	for (i = 0; i < a->cfg.queues; i++) {
		const struct mana_dv_sq *sq = &a->tx[i].sq;

		if (sq->cap - (sq->posted - sq->completed) < min_u64(want, sq->cap))
			return false;
	}
	return true;
}

/* Send the next burst of frames (loopback/send); flow f goes out on f % queues. */
static int send_burst(struct app *a)
{
	bool posted[MAX_QUEUES] = { false };
	int n = 0, i;

	if (!burst_fits(a))
		return 0;
	for (i = 0; i < BATCH && a->sent < a->cfg.frames; i++) {
		/*
		 * Loopback: never more frames in flight than one RX queue
		 * surely holds (its ring less the buffers waiting for the
		 * next refill), or a queue that gets every flow drops some.
		 */
		if (a->cfg.mode == MODE_LOOPBACK &&
		    a->sent - a->received >= max_in_flight(&a->rx[0].rq))
			break;
		uint32_t flow = a->sent % a->cfg.flows;
		struct txq *q = &a->tx[flow % a->cfg.queues];
		uint8_t *f = q->bufs + (size_t)(q->sq.posted % a->cfg.depth) * RX_BUF_SIZE;

		/* the slot is free only while the SQ has room */
		if (mana_dv_sq_full(&q->sq))
			break;
		build_frame(f, a->cfg.size, flow, a->sent);
		if (!post_tx(a, q, f, a->cfg.size))
			break;
		posted[flow % a->cfg.queues] = true;
		a->sent++;
		n++;
	}
	/* one doorbell per queue per burst */
	for (i = 0; i < (int)a->cfg.queues; i++)
		if (posted[i])
			mana_dv_sq_ring(&a->tx[i].sq);
	return n;
}

static bool done(const struct app *a)
{
	uint32_t i;

	switch (a->cfg.mode) {
	case MODE_SEND:
		for (i = 0; i < a->cfg.queues; i++)
			if (a->tx[i].sq.completed != a->tx[i].sq.posted)
				return false;
		return a->sent == a->cfg.frames;
	case MODE_LOOPBACK:
	case MODE_RECV:
		return a->received >= a->cfg.frames;
	case MODE_ECHO:
	case MODE_REFLECT:
		/* done once every answer has left */
		for (i = 0; i < a->cfg.queues; i++)
			if (a->tx[i].sq.completed != a->tx[i].sq.posted)
				return false;
		return a->cfg.frames && a->received >= a->cfg.frames;
	}
	return true;
}

static int run(struct app *a)
{
	double last_progress = now();
	unsigned int idle = 0;
	uint32_t i, j;
	int ret;

	for (i = 0; i < a->cfg.queues; i++) {
		for (j = 0; j < a->cfg.depth; j++)
			if (!post_rx(a, &a->rx[i]))
				break;
		mana_dv_rq_ring(&a->rx[i].rq);
	}
	/*
	 * A receiving side is steered to only now: frames a peer sends
	 * earlier are dropped as a NIC without a receive queue drops them,
	 * so a script starts the sender after this line.
	 */
	if (a->cfg.mode != MODE_LOOPBACK && a->cfg.mode != MODE_SEND &&
	    !a->cfg.quiet)
		fprintf(stderr, "mana-pktgen: receiving on %u queues\n",
			a->cfg.queues);

	while (!done(a)) {
		int progress = 0;

		/*
		 * A receiver stopped at --progress (it reads nothing, its
		 * buffers fill) until a script creates --resume-file.
		 */
		if (a->cfg.resume_file && a->received >= a->cfg.progress) {
			if (access(a->cfg.resume_file, F_OK)) {
				usleep(1000);
				last_progress = now();
				continue;
			}
			a->cfg.resume_file = NULL;
		}

		if (a->cfg.mode == MODE_LOOPBACK || a->cfg.mode == MODE_SEND)
			progress += send_burst(a);
		for (i = 0; i < a->cfg.queues; i++) {
			struct txq *echo = a->cfg.mode == MODE_ECHO ||
					   a->cfg.mode == MODE_REFLECT ? &a->tx[i] : NULL;
			uint32_t before = echo ? echo->sq.posted : 0;

			ret = poll_rx(a, i, echo);
			if (ret < 0)
				return -1;
			progress += ret;
			if (echo && echo->sq.posted != before)
				mana_dv_sq_ring(&echo->sq);
			ret = poll_tx(a, &a->tx[i]);
			if (ret < 0)
				return -1;
			progress += ret;
		}
		if (progress) {
			last_progress = now();
			idle = 0;
			continue;
		}
		/*
		 * Nothing to do: after a short spin let the device (a thread
		 * of this process under mana-emu, maybe on the same core) run.
		 */
		if (++idle >= IDLE_SPIN)
			sched_yield();
		if (now() - last_progress > a->cfg.timeout) {
			fprintf(stderr, "mana-pktgen: no progress for %.1f s\n",
				a->cfg.timeout);
			return -1;
		}
	}
	return 0;
}

/*
 * The context's asynchronous events so far, without waiting: a CQ error
 * is the device saying that completions were overwritten unread.
 */
static void read_async_events(struct app *a)
{
	struct ibv_async_event ev;
	int fl = fcntl(a->ctx->async_fd, F_GETFL);

	if (fl < 0 || fcntl(a->ctx->async_fd, F_SETFL, fl | O_NONBLOCK))
		return;
	while (!ibv_get_async_event(a->ctx, &ev)) {
		a->async_events++;
		if (ev.event_type == IBV_EVENT_CQ_ERR)
			a->cq_errors++;
		ibv_ack_async_event(&ev);
	}
}

static int report(struct app *a)
{
	uint64_t want[MAX_QUEUES] = { 0 }, errors = 0;
	uint32_t f, i;
	bool split_ok = true;

	if (a->cfg.mode == MODE_LOOPBACK) {
		for (f = 0; f < a->cfg.flows; f++)
			want[expected_queue(&a->cfg, f)] +=
				a->cfg.frames / a->cfg.flows +
				(f < a->cfg.frames % a->cfg.flows);
	}
	for (i = 0; i < a->cfg.queues; i++) {
		errors += a->tx[i].errors + a->rx[i].errors;
		if (a->cfg.mode == MODE_LOOPBACK && want[i] != a->rx[i].frames)
			split_ok = false;
		if (!a->cfg.quiet)
			printf("rxq %u: frames %" PRIu64 " bytes %" PRIu64
			       " expected %" PRIu64 " errors %" PRIu64
			       " | txq %u: frames %u errors %" PRIu64 "\n",
			       i, a->rx[i].frames, a->rx[i].bytes, want[i],
			       a->rx[i].errors, i, a->tx[i].sq.completed,
			       a->tx[i].errors);
	}
	printf("sent %" PRIu64 " received %" PRIu64 " bad %" PRIu64
	       " errors %" PRIu64 " rss-split %s\n", a->sent, a->received,
	       a->bad, errors,
	       a->cfg.mode != MODE_LOOPBACK ? "n/a" : split_ok ? "ok" : "WRONG");
	if (a->ctx)
		read_async_events(a);
	printf("async-events %" PRIu64 " cq-errors %" PRIu64 "\n",
	       a->async_events, a->cq_errors);
	if (a->cq_errors)
		return 1;
	if (a->cfg.mode == MODE_LOOPBACK &&
	    (a->received != a->sent || a->bad || !split_ok))
		return 1;
	return errors ? 1 : 0;
}

/* ---- options ----------------------------------------------------------- */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mana-pktgen [--mode=loopback|send|recv|echo|reflect] [--frames=N]\n"
		"                   [--size=BYTES] [--flows=N] [--queues=N] [--depth=N]\n"
		"                   [--port=N] [--timeout=SECONDS] [--cq-doorbell=batch|never]\n"
		"                   [--dmac=XX:XX:XX:XX:XX:XX] [--verify] [--rx-sleep=US]\n"
		"                   [--progress=N [--resume-file=PATH]]\n"
		"                   [--own-queues] [--quiet]\n");
}

static int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || end == s || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct config *c)
{
	static const struct option opts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "frames", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 's' },
		{ "flows", required_argument, NULL, 'f' },
		{ "queues", required_argument, NULL, 'q' },
		{ "depth", required_argument, NULL, 'd' },
		{ "port", required_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 't' },
		{ "cq-doorbell", required_argument, NULL, 'c' },
		{ "quiet", no_argument, NULL, 'Q' },
		{ "dmac", required_argument, NULL, 'M' },
		{ "verify", no_argument, NULL, 'V' },
		{ "own-queues", no_argument, NULL, 'O' },
		{ "rx-sleep", required_argument, NULL, 'S' },
		{ "progress", required_argument, NULL, 'P' },
		{ "resume-file", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	uint64_t v;
	int o;

	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'm':
			if (!strcmp(optarg, "loopback"))
				c->mode = MODE_LOOPBACK;
			else if (!strcmp(optarg, "send"))
				c->mode = MODE_SEND;
			else if (!strcmp(optarg, "recv"))
				c->mode = MODE_RECV;
			else if (!strcmp(optarg, "echo"))
				c->mode = MODE_ECHO;
			else if (!strcmp(optarg, "reflect"))
				c->mode = MODE_REFLECT;
			else
				goto bad;
			break;
		case 'n':
			if (parse_u64(optarg, 0, UINT64_MAX / 2, &c->frames))
				goto bad;
			break;
		case 's':
			if (parse_u64(optarg, 60, RX_BUF_SIZE, &v))
				goto bad;
			c->size = v;
			break;
		case 'f':
			if (parse_u64(optarg, 1, 65535, &v))
				goto bad;
			c->flows = v;
			break;
		case 'q':
			if (parse_u64(optarg, 1, MAX_QUEUES, &v) || (v & (v - 1)))
				goto bad;
			c->queues = v;
			break;
		case 'd':
			if (parse_u64(optarg, 16, 1 << 16, &v))
				goto bad;
			c->depth = v;
			break;
		case 'p':
			if (parse_u64(optarg, 1, 255, &v))
				goto bad;
			c->port = v;
			break;
		case 't':
			c->timeout = strtod(optarg, NULL);
			if (c->timeout <= 0)
				goto bad;
			break;
		case 'c':
			if (!strcmp(optarg, "batch"))
				c->cq_doorbell = true;
			else if (!strcmp(optarg, "never"))
				c->cq_doorbell = false;
			else
				goto bad;
			break;
		case 'Q':
			c->quiet = true;
			break;
		case 'M':
			if (sscanf(optarg, "%2hhx:%2hhx:%2hhx:%2hhx:%2hhx:%2hhx%c",
				   &dst_mac[0], &dst_mac[1], &dst_mac[2],
				   &dst_mac[3], &dst_mac[4], &dst_mac[5],
				   (char *)&v) != 6)
				goto bad;
			break;
		case 'O':
			c->own_queues = true;
			break;
		case 'V':
			c->verify = true;
			break;
		case 'S':
			if (parse_u64(optarg, 0, 1000000, &v))
				goto bad;
			c->rx_sleep_us = v;
			break;
		case 'P':
			if (parse_u64(optarg, 1, UINT64_MAX, &c->progress))
				goto bad;
			break;
		case 'R':
			c->resume_file = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return -1;
	}
	return 0;
bad:
	for (v = 0; opts[v].name && opts[v].val != o; v++)
		;
	fprintf(stderr, "mana-pktgen: bad value '%s' for --%s\n", optarg,
		opts[v].name ? opts[v].name : "?");
	usage(stderr);
	return -1;
}

int main(int argc, char **argv)
{
	struct app a = {
		.cfg = { .mode = MODE_LOOPBACK, .frames = 10000, .size = 64,
			 .flows = 4, .queues = 4, .depth = 256, .port = 1,
			 .timeout = 10.0, .cq_doorbell = true },
	};
	int ret;

	if (parse_args(argc, argv, &a.cfg))
		return 2;
	a.next_seq = calloc(a.cfg.flows, sizeof(*a.next_seq));
	if (!a.next_seq)
		return 1;
	for (uint32_t f = 0; f < a.cfg.flows; f++)
		a.next_seq[f] = f;
	if (setup(&a) || run(&a)) {
		report(&a);
		teardown(&a);
		return 1;
	}
	ret = report(&a);
	teardown(&a);
	return ret;
}
