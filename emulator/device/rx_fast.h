/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The usual received frame in one pass (rx_fast()), inline in rx.c's
 * dev_rx_frame() and in the loopback cut-through of tx.c, which receives
 * the frame it just sent without a call.
 */
#ifndef MANA_EMU_DEVICE_RX_FAST_H
#define MANA_EMU_DEVICE_RX_FAST_H

#include <netinet/in.h>
#include <infiniband/verbs.h>

#include "device.h"
#include "device_int.h"
#include "providers/mana/toeplitz.h"

/* rx.c */
extern struct mana_toeplitz_table dev_rss_tables[MANA_EMU_MAX_PORTS];
void dev_rx_truncated(struct emu_hwq *rq, uint32_t wqe_off);

/* tz_ipv4_l4() of the 12 input bytes as they lie in the frame */
static inline uint32_t tz_ipv4_l4_raw(const struct mana_toeplitz_table *tb,
				      const uint8_t *in)
{
	return tb->t[0][in[0]] ^ tb->t[1][in[1]] ^ tb->t[2][in[2]] ^
	       tb->t[3][in[3]] ^ tb->t[4][in[4]] ^ tb->t[5][in[5]] ^
	       tb->t[6][in[6]] ^ tb->t[7][in[7]] ^ tb->t[8][in[8]] ^
	       tb->t[9][in[9]] ^ tb->t[10][in[10]] ^ tb->t[11][in[11]];
}

#define IPV4_ADDR_FIELDS (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4)
#define UDP_PORT_FIELDS (IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)

/*
 * The usual frame in one pass: untagged IPv4 without options, UDP without
 * a checksum, not a fragment, into an RQ with a posted one-SGE WQE that
 * holds it, nothing held before it, no RX coalescing.  The same result as
 * the general path of dev_rx_frame() (parse, steer, deliver, consume,
 * scatter, complete) without its structures.  false: not such a frame
 * or not such a queue, and nothing was done (the cached WQE bytes and MR
 * of the RQ aside, which the general path finds again); a WQE that cannot
 * be read and a frame that faults are completed here, as the general
 * path would, so that no fault is met and counted twice.
 */
static inline __attribute__((always_inline)) bool
rx_fast(unsigned int port, const struct emu_port_rx *v, const uint8_t *f,
	size_t len)
{
	const uint8_t *ip = f + EMU_ETH_HLEN;
	uint32_t hash = 0, hashtype = 0, flags, wqe_off;
	uint16_t tot;
	struct gdma_sge sge;
	struct emu_hwq *rq;
	const uint8_t *p;
	uintptr_t va;
	uint64_t w[3];

	/* emu_frame_parse_plain()'s checks, for UDP with its whole header */
	if (len < EMU_ETH_HLEN + EMU_IPV4_MIN_HLEN + EMU_UDP_HLEN ||
	    f[12] != 0x08 || f[13] != 0x00 || ip[0] != 0x45 ||
	    ip[9] != IPPROTO_UDP || (mana_get_be16(ip + 6) & 0x3fff))
		return false;
	tot = mana_get_be16(ip + 2);
	if (tot < EMU_IPV4_MIN_HLEN + EMU_UDP_HLEN ||
	    EMU_ETH_HLEN + (size_t)tot > len || ip[26] || ip[27])
		return false;
	/* rx_steer(): an IPv4 UDP 4-tuple unless the mask leaves it out */
	if (v->rss_enabled) {
		if (emu.opts.rss_hash == MANA_EMU_RSS_HASH_MASK &&
		    (!(v->fields_mask & IPV4_ADDR_FIELDS) ||
		     !(v->fields_mask & UDP_PORT_FIELDS)))
			return false;
		hash = tz_ipv4_l4_raw(&dev_rss_tables[port - 1], ip + 12);
		hashtype = mana_rss_cqe_hashtype(MANA_HASH_UDP_IPV4);
		rq = v->indir[hash % EMU_RSS_INDIR];
	} else {
		rq = v->default_rq;
	}
	/* rx_deliver() and rx_consume() */
	if (!rq || rq->hold_head || rq->head == rq->tail ||
	    emu.opts.rx_coalesce)
		return false;
	wqe_off = rq->head & (rq->size - 1);
	p = wqe_head(rq, GDMA_RQ);
	if (!p) {
		/* as rx_consume(): reading it again could fault again */
		rq->st.errors++;
		rq->st.drops++;
		rq->head = rq->tail;
		return true;
	}
	if (rq->cache->v.hdr.num_sge != 1)
		return false;
	gdma_wqe_view_sge(p, &rq->cache->v, 0, &sge);
	if (sge.size < len)
		return false;
	va = sge_map(rq, &sge, true);
	if (!va)
		return false;
	rq->head += rq->cache->v.size;
	if (ucopy((void *)f, (void *)va, len, true) != len) {
		dev_rx_truncated(rq, wqe_off);
		return true;
	}
	rq->st.frames++;
	rq->st.bytes += len;
	/* rx_complete_okay(): no tag; the IPv4 header checked, UDP OK */
	flags = hashtype << 16 | 1U << 29 |
		(emu_ipv4_hdr20_ok(ip) ? 1U << 25 : 1U << 26);
	if (!mana_rx_comp_words_one(w, flags, (uint16_t)len, hash))
		cq_post4(rq->cq, w[0], w[1], w[2], wqe_off, rq->id, false);
	return true;
}

#endif /* MANA_EMU_DEVICE_RX_FAST_H */
