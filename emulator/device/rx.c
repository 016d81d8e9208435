// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive: frames from the wires are parsed, steered (RSS or the default
 * RQ), scattered into the RQ's next WQE and completed (optionally
 * coalesced); frames that find no WQE wait in the RQ's receive buffer
 * (--rx-hold) for the next RQ doorbell.
 */
#include "device.h"
#include "device_int.h"
#include "rc_dev.h"
#include "gsi.h"

#include <string.h>
#include <netinet/in.h>
#include <infiniband/verbs.h>

#include "providers/mana/toeplitz.h"
#include "rx_fast.h"

void dev_coalesce_flush(struct coalesce *c)
{
	uint8_t data[GDMA_CQE_SIZE] __attribute__((aligned(8)));

	if (c->n > 1)
		c->oob.cqe_type = CQE_RX_COALESCED_4;
	if (!mana_rx_comp_oob_encode(&c->oob, data))
		emu_cq_post(c->rq->cq, data, c->rq->id, false);
	*c = devst.coal[--devst.ncoal];
}

static struct coalesce *coalesce_find(struct emu_hwq *rq)
{
	unsigned int i;

	for (i = 0; i < devst.ncoal; i++)
		if (devst.coal[i].rq == rq)
			return &devst.coal[i];
	return NULL;
}

/* Same flags dword: everything but the per-packet slots and the offset. */
static bool coalesce_fits(const struct mana_rx_comp_oob *a,
			  const struct mana_rx_comp_oob *b)
{
	return mana_rx_comp_flags(a) == mana_rx_comp_flags(b);
}

static void rx_complete(struct emu_hwq *rq, const struct mana_rx_comp_oob *o)
{
	uint8_t data[GDMA_CQE_SIZE] __attribute__((aligned(8)));
	struct coalesce *c = coalesce_find(rq);

	if (c && (o->cqe_type != CQE_RX_OKAY || !coalesce_fits(&c->oob, o))) {
		dev_coalesce_flush(c);
		c = NULL;
	}
	if (o->cqe_type == CQE_RX_OKAY && emu.opts.rx_coalesce) {
		if (!c) {
			if (devst.ncoal == sizeof(devst.coal) / sizeof(devst.coal[0]))
				dev_coalesce_flush(&devst.coal[0]);
			c = &devst.coal[devst.ncoal++];
			c->rq = rq;
			c->oob = *o;
			c->n = 1;
		} else {
			c->oob.ppi[c->n++] = o->ppi[0];
		}
		if (c->n == MANA_RXCOMP_NUM_PPI)
			dev_coalesce_flush(c);
		return;
	}
	if (!mana_rx_comp_oob_encode(o, data))
		emu_cq_post(rq->cq, data, rq->id, false);
}

/* Scatter @len bytes into the WQE's buffers: OKAY, TRUNCATED, or bad SGE. */
static uint8_t rx_scatter(struct emu_hwq *rq, const uint8_t *p,
			  const uint8_t *f, size_t len, bool *bad)
{
	const struct gdma_wqe_view *v = &rq->cache->v;
	size_t done = 0, chunk;
	struct gdma_sge sge;
	unsigned int i;
	uintptr_t va;

	*bad = false;
	/* most receive WQEs are one buffer: the loop below without the loop */
	if (v->hdr.num_sge == 1) {
		gdma_wqe_view_sge(p, v, 0, &sge);
		if (!sge.size)
			return CQE_RX_TRUNCATED;
		va = sge_map(rq, &sge, true);
		chunk = len < sge.size ? len : sge.size;
		if (!va || ucopy((void *)f, (void *)va, chunk, true) != chunk) {
			*bad = true;
			return CQE_RX_TRUNCATED;
		}
		return chunk == len ? CQE_RX_OKAY : CQE_RX_TRUNCATED;
	}
	for (i = 0; i < v->hdr.num_sge && done < len; i++) {

		gdma_wqe_view_sge(p, v, i, &sge);
		if (!sge.size)
			continue;
		va = sge_map(rq, &sge, true);
		if (!va) {
			*bad = true;
			return CQE_RX_TRUNCATED;
		}
		chunk = len - done < sge.size ? len - done : sge.size;
		if (ucopy((void *)(f + done), (void *)va, chunk, true) !=
		    chunk) {
			*bad = true;
			return CQE_RX_TRUNCATED;
		}
		done += chunk;
	}
	return done == len ? CQE_RX_OKAY : CQE_RX_TRUNCATED;
}

/* The checksum bits of the RX flags dword (mana_rx_comp_flags() layout). */
static uint32_t rx_csum_flags(const uint8_t *f, const struct emu_frame *fr)
{
	enum emu_csum ip, l4;
	uint32_t v;

	/* the usual frame: 20-byte IPv4 header, UDP without a checksum */
	if (fr->tuple.l3 == MANA_RSS_L3_IPV4 && fr->l4_proto == IPPROTO_UDP &&
	    f[fr->l3_off] == 0x45 && !f[fr->l4_off + 6] && !f[fr->l4_off + 7])
		return (emu_ipv4_hdr20_ok(f + fr->l3_off) ? 1U << 25 : 1U << 26) |
		       1U << 29;
	emu_frame_rx_csum(f, fr, &ip, &l4);
	v = (uint32_t)(ip == EMU_CSUM_OK) << 25 | (uint32_t)(ip == EMU_CSUM_BAD) << 26;
	if (fr->l4_proto == IPPROTO_TCP)
		v |= (uint32_t)(l4 == EMU_CSUM_OK) << 27 |
		     (uint32_t)(l4 == EMU_CSUM_BAD) << 28;
	else if (fr->l4_proto == IPPROTO_UDP)
		v |= (uint32_t)(l4 == EMU_CSUM_OK) << 29 |
		     (uint32_t)(l4 == EMU_CSUM_BAD) << 30;
	return v;
}

struct rx_meta {
	uint32_t hash, hashtype;
	bool vlan;
	uint16_t tci;
};

/* A good frame's completion: written in place unless RX coalescing is on. */
static void rx_complete_okay(struct emu_hwq *rq, const uint8_t *f, size_t len,
			     const struct emu_frame *fr,
			     const struct rx_meta *m, uint32_t wqe_off)
{
	uint32_t flags = (uint32_t)(m->tci & 0xFFF) | (uint32_t)m->vlan << 12 |
			 m->hashtype << 16 | rx_csum_flags(f, fr);
	struct mana_rx_comp_oob o;
	uint8_t cqe[GDMA_CQE_SIZE] __attribute__((aligned(8)));

	if (!emu.opts.rx_coalesce) {
		/* as the OOB encoder: a hash type it cannot carry, no CQE */
		if (m->hashtype <= MANA_HASH_ALL &&
		    !mana_rx_comp_encode_one(cqe, flags, (uint16_t)len, m->hash,
					     wqe_off))
			cq_post(rq->cq, cqe, rq->id, false);
		return;
	}
	memset(&o, 0, sizeof(o));
	o.cqe_type = CQE_RX_OKAY;
	o.rx_wqe_offset = wqe_off;
	o.rx_vlantag_present = m->vlan;
	o.rx_vlan_id = m->tci & 0xFFF;
	o.rx_hashtype = (uint16_t)m->hashtype;
	o.ppi[0].pkt_len = (uint16_t)len;
	o.ppi[0].pkt_hash = m->hash;
	o.rx_iphdr_csum_succeed = !!(flags & 1U << 25);
	o.rx_iphdr_csum_fail = !!(flags & 1U << 26);
	o.rx_tcp_csum_succeed = !!(flags & 1U << 27);
	o.rx_tcp_csum_fail = !!(flags & 1U << 28);
	o.rx_udp_csum_succeed = !!(flags & 1U << 29);
	o.rx_udp_csum_fail = !!(flags & 1U << 30);
	rx_complete(rq, &o);
}

/* Consume the RQ's next WQE for one frame and write the completion. */
static void rx_consume(struct emu_hwq *rq, const uint8_t *f, size_t len,
		       const struct emu_frame *fr, const struct rx_meta *m)
{
	const uint8_t *p;
	uint32_t wqe_off;
	uint8_t type;
	bool bad;

	if (rq->head == rq->tail) {
		rq->st.drops++;		/* no buffer posted */
		return;
	}
	wqe_off = rq->head & (rq->size - 1);
	p = wqe_head(rq, GDMA_RQ);
	if (!p) {
		rq->st.errors++;
		rq->st.drops++;
		rq->head = rq->tail;	/* no size to skip by */
		return;
	}
	rq->head += rq->cache->v.size;
	type = rx_scatter(rq, p, f, len, &bad);
	if (type != CQE_RX_OKAY) {
		struct mana_rx_comp_oob o = { .cqe_type = type,
					      .rx_wqe_offset = wqe_off };

		rq->st.errors += bad;
		rq->st.drops++;
		rx_complete(rq, &o);
		return;
	}
	rq->st.frames++;
	rq->st.bytes += len;
	rx_complete_okay(rq, f, len, fr, m, wqe_off);
}

/*
 * A frame that finds no posted WQE waits in the RQ's share of the NIC's
 * receive buffer (--rx-hold frames, RX_HOLD_BYTES) for the next RQ
 * doorbell; when that is full it is dropped and counted.
 */
#define RX_HOLD_BYTES (16u << 20)

struct rx_hold {
	struct rx_hold *next;
	struct rx_meta m;
	size_t len;
	uint8_t data[];
};

/* Full: the next frame might not fit.  The port stops taking frames. */
static bool hold_full(const struct emu_hwq *rq)
{
	return rq->hold_frames >= emu.opts.rx_hold ||
	       rq->hold_bytes + FRAME_MAX > RX_HOLD_BYTES;
}

/* Keep devst.port_holds_full in step with a change of @rq's buffer. */
static void hold_note(struct emu_hwq *rq, bool was_full)
{
	bool full = hold_full(rq);

	if (full != was_full && rq->port >= 1 && rq->port <= MANA_EMU_MAX_PORTS)
		devst.port_holds_full[rq->port - 1] += full ? 1 : -1;
}

static void rx_hold(struct emu_hwq *rq, const uint8_t *f, size_t len,
		    const struct rx_meta *m)
{
	bool was_full = hold_full(rq);
	struct rx_hold *h;

	if (rq->hold_frames >= emu.opts.rx_hold ||
	    rq->hold_bytes + len > RX_HOLD_BYTES) {
		rq->st.drops++;
		return;
	}
	h = malloc(sizeof(*h) + len);
	if (!h) {
		rq->st.drops++;
		return;
	}
	h->next = NULL;
	h->m = *m;
	h->len = len;
	memcpy(h->data, f, len);
	if (rq->hold_tail) {
		rq->hold_tail->next = h;
	} else {
		rq->hold_head = h;
		atomic_fetch_add(&devst.rqs_holding, 1);
	}
	rq->hold_tail = h;
	rq->hold_frames++;
	rq->hold_bytes += len;
	hold_note(rq, was_full);
}

static struct rx_hold *rx_hold_pop(struct emu_hwq *rq)
{
	struct rx_hold *h = rq->hold_head;
	bool was_full = hold_full(rq);

	rq->hold_head = h->next;
	if (!rq->hold_head) {
		rq->hold_tail = NULL;
		atomic_fetch_sub(&devst.rqs_holding, 1);
	}
	rq->hold_frames--;
	rq->hold_bytes -= h->len;
	hold_note(rq, was_full);
	return h;
}

/* New WQEs: the frames that were waiting for them go first. */
void dev_rx_release_held(struct emu_hwq *rq)
{
	struct emu_frame fr;
	struct rx_hold *h;

	while (rq->hold_head && rq->head != rq->tail && !devst.fatal) {
		h = rx_hold_pop(rq);
		emu_frame_parse(h->data, h->len, &fr);
		rx_consume(rq, h->data, h->len, &fr, &h->m);
		free(h);
	}
}

void dev_rx_hold_flush(struct emu_hwq *rq)
{
	while (rq->hold_head) {
		rq->st.drops++;
		free(rx_hold_pop(rq));
	}
}

/* In order: behind waiting frames, or into the next WQE. */
static inline __attribute__((always_inline)) void rx_deliver(struct emu_hwq *rq, const uint8_t *f, size_t len,
		       const struct emu_frame *fr, const struct rx_meta *m)
{
	if (rq->hold_head || rq->head == rq->tail)
		rx_hold(rq, f, len, m);
	else
		rx_consume(rq, f, len, fr, m);
}

/*
 * What the device hashes.  mana_ib programs CONFIG_VPORT_RX with
 * rss_hash_types = 0 and never passes the QP's fields mask on, so the
 * device picks the tuple by frame type: TCP and UDP over IPv4/IPv6 their
 * 4-tuple, other IP its address pair (emulator/README.md gives the
 * evidence).  --rss-hash=mask follows the QP's mask instead.
 */
#define DEVICE_HASH_FIELDS (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | \
			    IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6 | \
			    IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP | \
			    IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)

static uint64_t rx_hash_fields(const struct emu_port_rx *v)
{
	if (emu.opts.rss_hash == MANA_EMU_RSS_HASH_MASK)
		return v->fields_mask;
	return DEVICE_HASH_FIELDS;
}

/*
 * The Toeplitz table of each port's RSS key, built when an RSS QP
 * programs the port (emu_port_rx_program()).
 */
struct mana_toeplitz_table dev_rss_tables[MANA_EMU_MAX_PORTS];

void emu_port_rx_program(unsigned int port, const struct emu_port_rx *rx)
{
	struct emu_port_rx *v = &emu_ports[port - 1].rx;

	if (!rx) {
		memset(v, 0, sizeof(*v));
		return;
	}
	*v = *rx;
	mana_toeplitz_table_init(&dev_rss_tables[port - 1], v->key,
				 EMU_RSS_KEY_LEN);
}

/*
 * The Toeplitz hash of an IPv4 4-tuple (src, dst, sport, dport: 12 input
 * bytes), unrolled over the key's table: what mana_rss_hash_table() gives
 * for MANA_HASH_TCP_IPV4 and MANA_HASH_UDP_IPV4, the usual RSS frames.
 */
static uint32_t tz_ipv4_l4(const struct mana_toeplitz_table *tb,
			   const struct mana_rss_tuple *t)
{
	const uint8_t *s = t->src, *d = t->dst;

	return tb->t[0][s[0]] ^ tb->t[1][s[1]] ^ tb->t[2][s[2]] ^
	       tb->t[3][s[3]] ^ tb->t[4][d[0]] ^ tb->t[5][d[1]] ^
	       tb->t[6][d[2]] ^ tb->t[7][d[3]] ^
	       tb->t[8][t->sport >> 8] ^ tb->t[9][t->sport & 0xff] ^
	       tb->t[10][t->dport >> 8] ^ tb->t[11][t->dport & 0xff];
}

/* RX steering: Toeplitz over the chosen tuple, else the default RQ. */
static struct emu_hwq *rx_steer(unsigned int port, struct emu_port_rx *v,
				const struct emu_frame *fr, struct rx_meta *m)
{
	const struct mana_toeplitz_table *tb = &dev_rss_tables[port - 1];
	uint32_t hash, type;

	if (!v->rss_enabled)
		return v->default_rq;
	type = mana_rss_hash_type(rx_hash_fields(v), &fr->tuple);
	if (type == MANA_HASH_TCP_IPV4 || type == MANA_HASH_UDP_IPV4)
		hash = tz_ipv4_l4(tb, &fr->tuple);
	else if (mana_rss_hash_table(tb, rx_hash_fields(v), &fr->tuple, &hash,
				     &type))
		type = 0;
	if (!type)
		return v->default_rq;
	m->hash = hash;
	m->hashtype = mana_rss_cqe_hashtype(type);
	return v->indir[hash % EMU_RSS_INDIR];
}

/* rx_fast()'s completion of a frame that faulted in the RQ's buffer */
void dev_rx_truncated(struct emu_hwq *rq, uint32_t wqe_off)
{
	struct mana_rx_comp_oob o = { .cqe_type = CQE_RX_TRUNCATED,
				      .rx_wqe_offset = wqe_off };

	rq->st.errors++;
	rq->st.drops++;
	rx_complete(rq, &o);
}

/* Everything rx_fast() does not take: parse, strip a tag, steer, deliver. */
static __attribute__((noinline)) void rx_general(unsigned int port,
						 struct emu_port_rx *v,
						 const uint8_t *in, size_t len)
{
	static uint8_t f[FRAME_MAX];
	struct rx_meta m = { 0 };
	struct emu_frame fr;
	struct emu_hwq *rq;

	/* parsed where it lies; copied only to strip a tag */
	if (!emu_frame_parse_plain(in, len, &fr))
		emu_frame_parse(in, len, &fr);
	/* the tag is always stripped and reported (DPDK relies on it) */
	if (fr.vlan) {
		m.vlan = true;
		m.tci = fr.tci;
		memcpy(f, in, len);
		len = emu_frame_vlan_strip(f, len);
		emu_frame_parse(f, len, &fr);
		in = f;
	}
	rq = rx_steer(port, v, &fr, &m);
	if (rq)
		rx_deliver(rq, in, len, &fr, &m);
}

void dev_rx_frame(unsigned int port, const uint8_t *in, size_t len)
{
	struct emu_port_rx *v = &emu_ports[port - 1].rx;

	/*
	 * Frames for the RC engine (RoCEv2 to one of its QPs: IPv4 UDP to
	 * port 4791, which raw tests also use) are taken before rx_fast(),
	 * which would take them as raw frames, and whether or not a raw QP
	 * steers the port.
	 */
	if ((emu_rc_nqps || emu_gsi_active || emu_ip_neigh_active) &&
	    !devst.fatal &&
	    emu_rc_rx(port, in, len))
		return;
	if (devst.fatal || !v->programmed || len < ETH_MIN_LEN ||
	    len > BACKEND_MAX_FRAME) {
		devst.port_unsteered[port - 1]++;
		return;
	}
	if (!rx_fast(port, v, in, len))
		rx_general(port, v, in, len);
}
