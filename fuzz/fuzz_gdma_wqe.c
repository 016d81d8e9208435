// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The work-queue side of gdma.h, as the device meets it: a ring of
 * application bytes with a WQE (header, inline OOB, SGL, maybe wrapping)
 * at any BU index, and the SQ's TX OOB in it.  An accepted header or OOB
 * encodes back to the same bytes; a fetched WQE posted again at the same
 * place fetches back the same; the encoders refuse what the checks
 * refuse and what they produce decodes to what they were given.
 */
#include <stdint.h>
#include <string.h>

#include "providers/mana/gdma.h"
#include "fuzz_check.h"
#include "fuzz_emu.h"

#define RING_MAX 4096

static bool hdr_eq(const struct gdma_wqe_header *a,
		   const struct gdma_wqe_header *b)
{
	return a->num_sge == b->num_sge && a->oob_size == b->oob_size &&
	       a->oob_in_sgl == b->oob_in_sgl &&
	       a->last_vbytes == b->last_vbytes &&
	       a->client_data_unit == b->client_data_unit &&
	       a->num_padding_sgls == b->num_padding_sgls &&
	       a->consume_credit == b->consume_credit &&
	       a->fence == b->fence && a->check_sn == b->check_sn &&
	       a->sgl_direct == b->sgl_direct;
}

static bool wqe_eq(const struct gdma_wqe *a, const struct gdma_wqe *b)
{
	unsigned int i;

	if (!hdr_eq(&a->hdr, &b->hdr) ||
	    memcmp(a->oob, b->oob, a->hdr.oob_size))
		return false;
	for (i = 0; i < a->hdr.num_sge; i++)
		if (a->sge[i].addr != b->sge[i].addr ||
		    a->sge[i].mkey != b->sge[i].mkey ||
		    a->sge[i].size != b->sge[i].size)
			return false;
	return true;
}

static bool txoob_eq(const struct mana_tx_oob *a, const struct mana_tx_oob *b)
{
	return a->pkt_fmt == b->pkt_fmt && a->is_outer_ipv4 == b->is_outer_ipv4 &&
	       a->is_outer_ipv6 == b->is_outer_ipv6 &&
	       a->comp_iphdr_csum == b->comp_iphdr_csum &&
	       a->comp_tcp_csum == b->comp_tcp_csum &&
	       a->comp_udp_csum == b->comp_udp_csum &&
	       a->suppress_txcqe_gen == b->suppress_txcqe_gen &&
	       a->vcq_num == b->vcq_num && a->trans_off == b->trans_off &&
	       a->vsq_frame == b->vsq_frame &&
	       a->short_vp_offset == b->short_vp_offset &&
	       a->is_encap == b->is_encap &&
	       a->inner_is_ipv6 == b->inner_is_ipv6 &&
	       a->inner_tcp_opt == b->inner_tcp_opt &&
	       a->inject_vlan_pri_tag == b->inject_vlan_pri_tag &&
	       a->pcp == b->pcp && a->dei == b->dei &&
	       a->vlan_id == b->vlan_id &&
	       a->inner_frame_offset == b->inner_frame_offset &&
	       a->inner_ip_rel_offset == b->inner_ip_rel_offset &&
	       a->long_vp_offset == b->long_vp_offset;
}

static void header_round_trip(const uint8_t *wire, enum gdma_queue_type qt)
{
	struct gdma_wqe_header h;
	uint8_t again[GDMA_WQE_HDR_SIZE];

	if (gdma_wqe_header_decode(wire, qt, &h))
		return;
	FUZZ_CHECK(!gdma_wqe_header_encode(&h, qt, again));
	FUZZ_CHECK(!memcmp(again, wire, sizeof(again)));
	FUZZ_CHECK(gdma_wqe_size(h.oob_size, h.num_sge) <=
		   (qt == GDMA_SQ ? GDMA_MAX_SQE_SIZE : GDMA_MAX_RQE_SIZE));
}

static void tx_oob_round_trip(const uint8_t *oob, uint32_t oob_size)
{
	struct mana_tx_oob o, back;
	uint8_t again[GDMA_OOB_XLARGE];

	if (!mana_tx_oob_decode(oob, oob_size, 0, &o)) {
		FUZZ_CHECK(mana_tx_oob_size(o.pkt_fmt) == oob_size);
		FUZZ_CHECK(!mana_tx_oob_encode(&o, again));
		FUZZ_CHECK(!memcmp(again, oob, oob_size));
		FUZZ_CHECK(!mana_tx_oob_decode(oob, oob_size,
					       MANA_TX_OOB_IGNORE_RSVD, &back));
		FUZZ_CHECK(txoob_eq(&o, &back));
	}
	/* DPDK's form: reserved bits ignored, the named fields still checked */
	if (!mana_tx_oob_decode(oob, oob_size, MANA_TX_OOB_IGNORE_RSVD, &o)) {
		FUZZ_CHECK(!mana_tx_oob_encode(&o, again));
		FUZZ_CHECK(!mana_tx_oob_decode(again, oob_size, 0, &back));
		FUZZ_CHECK(txoob_eq(&o, &back));
	}
	FUZZ_CHECK(mana_tx_oob_decode(oob, oob_size, 2, &o) == -EINVAL);
}

/* A WQE in a ring: fetch, post it again where it was, fetch the same. */
static void ring_round_trip(const uint8_t *ring, uint32_t ring_size,
			    uint32_t head_bu, enum gdma_queue_type qt)
{
	static uint8_t again[RING_MAX];
	struct gdma_wqe w, w2;
	uint32_t size_bu, size_bu2, off, hdr_off, i;

	if (gdma_wqe_fetch(ring, ring_size, head_bu, qt, &w, &size_bu))
		return;
	FUZZ_CHECK(size_bu >= 1 && size_bu * GDMA_WQE_BU_SIZE <= ring_size);
	FUZZ_CHECK(size_bu == gdma_wqe_size_bu(w.hdr.oob_size, w.hdr.num_sge));
	memset(again, 0xA5, ring_size);
	FUZZ_CHECK(!gdma_wqe_post(again, ring_size, head_bu, qt, &w,
				  &size_bu2));
	FUZZ_CHECK(size_bu2 == size_bu);
	FUZZ_CHECK(!gdma_wqe_fetch(again, ring_size, head_bu, qt, &w2,
				   &size_bu2));
	FUZZ_CHECK(size_bu2 == size_bu && wqe_eq(&w, &w2));
	/* header, OOB and SGL bytes are the input's; nothing outside moved */
	off = gdma_wqe_ring_offset(head_bu, ring_size);
	for (i = 0; i < GDMA_WQE_HDR_SIZE + w.hdr.oob_size; i++) {
		hdr_off = (off + i) & (ring_size - 1);
		FUZZ_CHECK(again[hdr_off] == ring[hdr_off]);
	}
	for (i = size_bu * GDMA_WQE_BU_SIZE; i < ring_size; i++)
		FUZZ_CHECK(again[(off + i) & (ring_size - 1)] == 0xA5);
	if (qt == GDMA_SQ)
		tx_oob_round_trip(w.oob, w.hdr.oob_size);
}

static void header_encode_side(struct fuzz_in *in, enum gdma_queue_type qt)
{
	struct gdma_wqe_header h = { 0 }, back;
	uint8_t wire[GDMA_WQE_HDR_SIZE];
	uint32_t f = fuzz_u32(in);

	h.num_sge = fuzz_u8(in);
	h.oob_size = fuzz_u8(in);
	h.last_vbytes = fuzz_u8(in);
	h.client_data_unit = fuzz_u16(in);
	h.num_padding_sgls = fuzz_u8(in);
	h.oob_in_sgl = f & 1;
	h.consume_credit = f >> 1 & 1;
	h.fence = f >> 2 & 1;
	h.check_sn = f >> 3 & 1;
	h.sgl_direct = f >> 4 & 1;
	if (gdma_wqe_header_encode(&h, qt, wire)) {
		FUZZ_CHECK(gdma_wqe_header_check(&h, qt));
		return;
	}
	FUZZ_CHECK(!gdma_wqe_header_decode(wire, qt, &back));
	FUZZ_CHECK(hdr_eq(&h, &back));
}

static void tx_oob_encode_side(struct fuzz_in *in)
{
	struct mana_tx_oob o = { 0 }, back;
	uint8_t wire[GDMA_OOB_LARGE];
	uint32_t f = fuzz_u32(in);

	o.pkt_fmt = f & 3;
	o.is_outer_ipv4 = f >> 2 & 1;
	o.is_outer_ipv6 = f >> 3 & 1;
	o.comp_iphdr_csum = f >> 4 & 1;
	o.comp_tcp_csum = f >> 5 & 1;
	o.comp_udp_csum = f >> 6 & 1;
	o.suppress_txcqe_gen = f >> 7 & 1;
	o.is_encap = f >> 8 & 1;
	o.inner_is_ipv6 = f >> 9 & 1;
	o.inner_tcp_opt = f >> 10 & 1;
	o.inject_vlan_pri_tag = f >> 11 & 1;
	o.dei = f >> 12 & 1;
	o.pcp = f >> 13 & 0xF;
	o.vcq_num = fuzz_u32(in) & 0x1FFFFFF;
	o.trans_off = fuzz_u16(in) & 0x7FF;
	o.vsq_frame = fuzz_u16(in) & 0x7FFF;
	o.short_vp_offset = fuzz_u8(in);
	o.vlan_id = fuzz_u16(in) & 0x1FFF;
	o.inner_frame_offset = fuzz_u16(in) & 0x7FF;
	o.inner_ip_rel_offset = fuzz_u8(in) & 0x7F;
	o.long_vp_offset = fuzz_u16(in) & 0x1FFF;
	if (mana_tx_oob_encode(&o, wire)) {
		FUZZ_CHECK(mana_tx_oob_check(&o));
		return;
	}
	FUZZ_CHECK(!mana_tx_oob_decode(wire, mana_tx_oob_size(o.pkt_fmt), 0,
				       &back));
	FUZZ_CHECK(txoob_eq(&o, &back));
}

/*
 * Input: queue type (bit 0), ring size 32 << (0..7), head BU, then the
 * ring's bytes (repeated to fill it); the encoders read from the start.
 */
/* The RC send OOB (24 or 32 bytes) and receive OOB: same property. */
static void rdma_oob_round_trip(const uint8_t *oob, uint32_t oob_size)
{
	struct mana_rdma_send_oob so;
	struct mana_rdma_recv_oob ro;
	uint8_t again[GDMA_OOB_XLARGE];

	if (!mana_rdma_send_oob_decode(oob, oob_size, &so)) {
		FUZZ_CHECK(mana_rdma_send_oob_size(so.wqe_type) == oob_size);
		FUZZ_CHECK(!mana_rdma_send_oob_encode(&so, again));
		FUZZ_CHECK(!memcmp(again, oob, oob_size));
	}
	if (oob_size == GDMA_OOB_SMALL && !mana_rdma_recv_oob_decode(oob, &ro)) {
		FUZZ_CHECK(!mana_rdma_recv_oob_encode(&ro, again));
		FUZZ_CHECK(!memcmp(again, oob, GDMA_OOB_SMALL));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t ring[RING_MAX];
	struct fuzz_in in = { data, size }, enc = { data, size }, rest;
	uint8_t bare[GDMA_OOB_XLARGE];
	enum gdma_queue_type qt;
	uint32_t ring_size, head_bu, i;
	uint8_t sel;

	sel = fuzz_u8(&in);
	qt = sel & 1 ? GDMA_RQ : GDMA_SQ;
	ring_size = GDMA_WQE_BU_SIZE << (sel >> 1 & 7);
	head_bu = fuzz_u32(&in);
	if (in.left) {
		for (i = 0; i < ring_size; i++)
			ring[i] = in.p[i % in.left];
	} else {
		memset(ring, 0, ring_size);
	}
	/* the bytes after the head BU, zero-filled, as a bare header and OOB */
	rest = in;
	fuzz_take(&rest, bare, sizeof(bare));
	header_round_trip(bare, qt);
	ring_round_trip(ring, ring_size, head_bu, qt);
	tx_oob_round_trip(bare, GDMA_OOB_SMALL);
	tx_oob_round_trip(bare, GDMA_OOB_LARGE);
	tx_oob_round_trip(bare, GDMA_OOB_XLARGE);
	rdma_oob_round_trip(bare, GDMA_OOB_SMALL);
	rdma_oob_round_trip(bare, GDMA_OOB_LARGE);
	rdma_oob_round_trip(bare, GDMA_OOB_XLARGE);
	header_encode_side(&enc, qt);
	tx_oob_encode_side(&enc);
	return 0;
}
