// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Transmit: the SQ walk (WQEs viewed in place in the queue's cache), the
 * TX OOB and SGE checks, the gather into the wire's buffer, offloads, TX
 * CQEs, and the round-robin of SQs with work.
 */
#include "device.h"
#include "device_int.h"
#include "rx_fast.h"
#include "rc_dev.h"
#include "gsi.h"

#include <string.h>

static void tx_cqe(struct emu_hwq *sq, uint8_t type, uint32_t wqe_off)
{
	uint8_t data[GDMA_CQE_SIZE] __attribute__((aligned(8)));

	if (!mana_tx_comp_encode_one(data, type, wqe_off & 0x7FFFFFF))
		cq_post(sq->cq, data, sq->id, true);
}

struct tx_piece {
	void *va;
	uint32_t len;
};

/*
 * Check the SGEs of the WQE at @p (MR, bounds, size): a CQE error type,
 * or CQE_TX_OKAY with the pieces and *total.
 */
static uint8_t tx_sges(struct emu_hwq *sq, const uint8_t *p,
		       struct tx_piece *pc, unsigned int *npc, size_t *total)
{
	const struct gdma_wqe_view *v = &sq->cache->v;
	uint32_t i, nsge = v->hdr.num_sge - v->hdr.num_padding_sgls;
	struct gdma_sge sge;
	unsigned int n = 0;
	size_t sum = 0;
	uintptr_t va;

	/* most sends are one SGE: the loop below without the loop */
	if (nsge == 1) {
		gdma_wqe_view_sge(p, v, 0, &sge);
		if (!sge.size)
			return CQE_TX_INVALID_ETH_TYPE;
		va = sge_map(sq, &sge, false);
		if (!va)
			return CQE_TX_HDR_PROCESSING_ERROR;
		if (sge.size > BACKEND_MAX_FRAME)
			return CQE_TX_MTU_DROP;
		if (sge.size < ETH_MIN_LEN)
			return CQE_TX_INVALID_ETH_TYPE;
		pc[0].va = (void *)va;
		pc[0].len = sge.size;
		*npc = 1;
		*total = sge.size;
		return CQE_TX_OKAY;
	}
	for (i = 0; i < nsge; i++) {

		gdma_wqe_view_sge(p, v, i, &sge);
		if (!sge.size)
			continue;	/* the dummy SGE of an empty send */
		va = sge_map(sq, &sge, false);
		if (!va)
			return CQE_TX_HDR_PROCESSING_ERROR;
		if (sum + sge.size > BACKEND_MAX_FRAME)
			return CQE_TX_MTU_DROP;
		pc[n].va = (void *)va;
		pc[n++].len = sge.size;
		sum += sge.size;
	}
	if (sum < ETH_MIN_LEN)
		return CQE_TX_INVALID_ETH_TYPE;
	*npc = n;
	*total = sum;
	return CQE_TX_OKAY;
}

/* Gather the pieces into @f; inside an MR but unreadable (unmapped since). */
static uint8_t tx_gather(const struct tx_piece *pc, unsigned int n,
			 uint8_t *f)
{
	unsigned int i;

	/* most sends are one piece */
	if (n == 1)
		return ucopy(f, pc[0].va, pc[0].len, false) == pc[0].len ?
			       CQE_TX_OKAY : CQE_TX_HDR_PROCESSING_ERROR;
	for (i = 0; i < n; i++) {
		if (ucopy(f, pc[i].va, pc[i].len, false) != pc[i].len)
			return CQE_TX_HDR_PROCESSING_ERROR;
		f += pc[i].len;
	}
	return CQE_TX_OKAY;
}

/* Checksums, then the VLAN tag of a long OOB (checksums skip L2). */
static uint8_t tx_offload(const struct mana_tx_oob *oob, uint8_t *f,
			  size_t *len)
{
	struct emu_frame fr;
	uint16_t tci;

	if (oob->comp_iphdr_csum || oob->comp_tcp_csum || oob->comp_udp_csum) {
		emu_frame_parse(f, *len, &fr);
		emu_frame_tx_csum(f, &fr, oob->comp_iphdr_csum,
				  oob->comp_tcp_csum, oob->comp_udp_csum);
	}
	if (oob->pkt_fmt != MANA_LONG_PKT_FMT || !oob->inject_vlan_pri_tag)
		return CQE_TX_OKAY;
	if (*len + EMU_VLAN_HLEN > BACKEND_MAX_FRAME)
		return CQE_TX_MTU_DROP;
	tci = (uint16_t)(oob->pcp << 13 | oob->dei << 12 | oob->vlan_id);
	*len = emu_frame_vlan_insert(f, *len, tci);
	return CQE_TX_OKAY;
}

/* DPDK sets the short vport offset even in the long form. */
static bool tx_vp_ok(const struct emu_hwq *sq, const struct mana_tx_oob *o)
{
	if (sq->tx_vp_offset <= MANA_SHORT_VPORT_OFFSET_MAX)
		return o->short_vp_offset == sq->tx_vp_offset;
	return o->pkt_fmt == MANA_LONG_PKT_FMT &&
	       o->long_vp_offset == sq->tx_vp_offset;
}

/* The same raw OOB bytes as the last good one (8, 24 or 32 bytes). */
static inline bool oob_same(const struct wq_cache *c, const uint8_t *oob,
			    uint32_t size)
{
	uint64_t w;
	uint32_t i;

	/* every OOB size is 8 or more; the short form is the usual one */
	memcpy(&w, oob, sizeof(w));
	if (c->oob_size != size || w != c->oob_raw[0])
		return false;
	if (size == 8)
		return true;
	for (i = 1; i < size / 8; i++) {
		memcpy(&w, oob + 8 * i, sizeof(w));
		if (w != c->oob_raw[i])
			return false;
	}
	return true;
}

/* The TX OOB of the WQE at @p: checked, or the last good one of the SQ. */
static uint8_t tx_check_oob(const struct emu_hwq *sq, const uint8_t *p,
			    const struct mana_tx_oob **out)
{
	struct wq_cache *c = sq->cache;
	const struct gdma_wqe_header *h = &c->v.hdr;
	const uint8_t *oob = p + GDMA_WQE_HDR_SIZE;
	struct mana_tx_oob o;

	if (h->oob_in_sgl)
		return CQE_TX_INVALID_OOB;
	*out = &c->oob;
	if (oob_same(c, oob, h->oob_size))
		return CQE_TX_OKAY;
	/* DPDK leaves the reserved long-OOB bits (and trans_off) unset */
	if (mana_tx_oob_decode(oob, h->oob_size, MANA_TX_OOB_IGNORE_RSVD, &o))
		return CQE_TX_INVALID_OOB;
	if (o.vcq_num != sq->cq->id ||
	    o.vsq_frame != mana_tx_vsq_frame(sq->id))
		return CQE_TX_INVALID_OOB;
	if (!tx_vp_ok(sq, &o))
		return CQE_TX_VPORT_IDX_OUT_OF_RANGE;
	c->oob_size = h->oob_size;
	memcpy(c->oob_raw, oob, h->oob_size);
	c->oob = o;
	c->oob_offload = o.comp_iphdr_csum || o.comp_tcp_csum ||
			 o.comp_udp_csum ||
			 (o.pkt_fmt == MANA_LONG_PKT_FMT && o.inject_vlan_pri_tag);
	return CQE_TX_OKAY;
}

/*
 * Frames sent in one slice of an SQ, added to the queue's, the device's
 * and the port's counters once at its end (tx_tally_flush()).
 */
struct tx_tally {
	uint64_t frames, bytes, cut_frames, cut_bytes;
};

static inline __attribute__((always_inline)) void
tx_sent(struct tx_tally *t, size_t len)
{
	t->frames++;
	t->bytes += len;
	if (__builtin_expect(emu.opts.fault_fatal_after != 0, 0) &&
	    !devst.fatal_after_done &&
	    devst.tx_total + t->frames >= emu.opts.fault_fatal_after) {
		devst.fatal_after_done = true;
		dev_fatal("--fault=fatal-after");
	}
}

static void tx_tally_flush(struct emu_hwq *sq, const struct tx_tally *t)
{
	struct emu_dev_port *dp = &emu_ports[sq->port - 1];

	sq->st.frames += t->frames;
	sq->st.bytes += t->bytes;
	devst.tx_total += t->frames;
	dp->lb_cut_frames += t->cut_frames;
	dp->lb_cut_bytes += t->cut_bytes;
}

/* Where a loopback frame is built when it goes straight to the receiver. */
static uint8_t lb_frame[FRAME_MAX] __attribute__((aligned(8)));

/*
 * Execute the send WQE at @p; errors always get their own CQE.  The frame
 * is gathered straight into the backend's buffer.  Loopback (without
 * capture) cuts through: with nothing queued in its ring ahead of it, the
 * frame is built in the device's own buffer and received right after its
 * send completion, without passing through the ring; otherwise it takes
 * the ring's next slot and is received at the end of the slice.
 */
static inline __attribute__((always_inline)) void
tx_one(struct emu_hwq *sq, const uint8_t *p, uint32_t wqe_off, bool *cut_ok,
       struct tx_tally *t)
{
	struct emu_dev_port *dp = &emu_ports[sq->port - 1];
	struct tx_piece pc[GDMA_MAX_TX_SGE];
	const struct mana_tx_oob *oob;
	unsigned int npc = 0;
	uint8_t type, *f = NULL;
	bool in_ring = false, cut = false;
	size_t len = 0;

	type = tx_check_oob(sq, p, &oob);
	if (type == CQE_TX_OKAY)
		type = tx_sges(sq, p, pc, &npc, &len);
	if (type == CQE_TX_OKAY) {
		if (*cut_ok) {
			f = lb_frame;
			cut = true;
		} else if (dp->lb) {
			f = backend_lb_slot(dp->lb, len + EMU_VLAN_HLEN);
			in_ring = f != NULL;
			/* the frames after it queue behind it */
			*cut_ok = false;
		}
		if (!f)
			f = backend_tx_buf(dp->backend, len + EMU_VLAN_HLEN);
		type = tx_gather(pc, npc, f);
	}
	/* the cached OOB says once whether there is anything to do */
	if (type == CQE_TX_OKAY && sq->cache->oob_offload)
		type = tx_offload(oob, f, &len);
	if (type != CQE_TX_OKAY) {
		sq->st.errors++;
		tx_cqe(sq, type, wqe_off);
		return;
	}
	if (cut) {
		t->cut_frames++;
		t->cut_bytes += len;
	} else if (in_ring) {
		dp->lb_tx_frames++;
		dp->lb_tx_bytes += len;
		backend_lb_push(dp->lb, len);
	} else {
		backend_tx_commit(dp->backend, f, len);
	}
	tx_sent(t, len);
	if (!oob->suppress_txcqe_gen)
		tx_cqe(sq, CQE_TX_OKAY, wqe_off);
	/*
	 * dev_rx_frame(), its usual case inline: cut-through is only taken
	 * for a port that took RX (sq_process()), and tx_sges() and
	 * tx_offload() kept len within [ETH_MIN_LEN, BACKEND_MAX_FRAME].
	 * With RC QPs about, the frame may be the RNIC's: dev_rx_frame()
	 * offers it to the RC engine first.
	 */
	if (cut && (devst.fatal || emu_rc_nqps || emu_gsi_active ||
		    emu_ip_neigh_active ||
		    !rx_fast(sq->port, &dp->rx, f, len)))
		dev_rx_frame(sq->port, f, len);
}

/* Walk the SQ from the device head to the doorbell tail. */
static unsigned int sq_process(struct emu_hwq *sq, unsigned int budget)
{
	struct emu_dev_port *dp = &emu_ports[sq->port - 1];
	struct backend_lb *lb = dp->lb;
	/*
	 * Loopback frames cut through while its ring is empty, and only to a
	 * port that took RX (else they take the ring to dev_rx_frame()).
	 */
	bool cut_ok = lb && dp->rx.programmed && !backend_lb_queued(lb);
	struct tx_tally t = { 0 };
	unsigned int sent = 0;
	const uint8_t *p;
	uint32_t off;

	while (sq->head != sq->tail && !devst.fatal && sent < budget) {
		/*
		 * A wire pushing back (socket: a receiver's queue is full)
		 * pauses the port's transmitter: the WQE waits, as on a NIC
		 * whose link partner sent a pause.
		 */
		if (!lb && dp->backend && backend_tx_busy(dp->backend)) {
			devst.sq_blocked = true;
			break;
		}
		off = sq->head & (sq->size - 1);
		p = wqe_head(sq, GDMA_SQ);
		if (!p) {
			/* no size to skip by: drop what was rung */
			sq->st.errors++;
			tx_cqe(sq, CQE_TX_INVALID_OOB, off);
			sq->head = sq->tail;
			break;
		}
		tx_one(sq, p, off, &cut_ok, &t);
		sq->head += sq->cache->v.size;
		sent++;
	}
	tx_tally_flush(sq, &t);
	/* loopback frames arrive right after the work that sent them */
	if (sent)
		dev_poll_backend(sq->port);
	return sent;
}

/*
 * Queues work side by side, as the hardware's engines do: a doorbell only
 * latches the new tail (the device thread takes every doorbell rung so
 * far first), then each SQ with work sends a slice of SQ_SLICE WQEs per
 * round.  A receive queue refilled behind a long run of send doorbells is
 * thus refilled at once, not after all of them.
 */
void dev_sq_schedule(struct emu_hwq *sq)
{
	if (sq->sq_listed)
		return;
	sq->sq_listed = true;
	sq->sq_next = NULL;
	if (devst.sq_tail)
		devst.sq_tail->sq_next = sq;
	else
		devst.sq_head = sq;
	devst.sq_tail = sq;
}

void dev_sq_unschedule(struct emu_hwq *sq)
{
	struct emu_hwq **pp, *prev = NULL;

	if (!sq->sq_listed)
		return;
	for (pp = &devst.sq_head; *pp; prev = *pp, pp = &(*pp)->sq_next) {
		if (*pp != sq)
			continue;
		*pp = sq->sq_next;
		if (devst.sq_tail == sq)
			devst.sq_tail = prev;
		break;
	}
	sq->sq_listed = false;
}

/* One slice of every SQ with work, round robin. */
unsigned int dev_run_sqs(void)
{
	struct emu_hwq *sq, *last = devst.sq_tail;
	unsigned int n = 0;

	devst.sq_blocked = false;
	while ((sq = devst.sq_head) && !devst.fatal) {
		dev_sq_unschedule(sq);
		n += sq_process(sq, SQ_SLICE);
		if (sq->head != sq->tail)
			dev_sq_schedule(sq);
		if (sq == last)
			break;
	}
	return n;
}
