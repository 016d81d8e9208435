// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The completion side of gdma.h, as a consumer meets it: 64-byte CQEs, the
 * MANA completion header, RX and TX completion OOBs, RDMA (RC) CQE data,
 * 16-byte EQEs and the owner-bit arithmetic.  Every layout has a field for every bit, so an
 * accepted entry must encode back to exactly the bytes it came from
 * (decode never accepts what encode would not produce), and the encoders
 * must refuse what the decoders refuse.
 */
#include <stdint.h>
#include <string.h>

#include "providers/mana/gdma.h"
#include "fuzz_check.h"
#include "fuzz_emu.h"

/* Field by field: struct padding is not part of a decoded value. */
static bool rx_eq(const struct mana_rx_comp_oob *a,
		  const struct mana_rx_comp_oob *b)
{
	unsigned int i;

	for (i = 0; i < MANA_RXCOMP_MAX_PKTS; i++)
		if (a->ppi[i].pkt_len != b->ppi[i].pkt_len ||
		    a->ppi[i].pkt_hash != b->ppi[i].pkt_hash)
			return false;
	return a->cqe_type == b->cqe_type && a->vendor_err == b->vendor_err &&
	       mana_rx_comp_flags(a) == mana_rx_comp_flags(b) &&
	       a->rx_wqe_offset == b->rx_wqe_offset;
}

static bool tx_eq(const struct mana_tx_comp_oob *a,
		  const struct mana_tx_comp_oob *b)
{
	return a->cqe_type == b->cqe_type && a->vendor_err == b->vendor_err &&
	       a->tx_data_offset == b->tx_data_offset &&
	       a->tx_sgl_offset == b->tx_sgl_offset &&
	       a->tx_wqe_offset == b->tx_wqe_offset;
}

static void cqe_round_trip(const uint8_t *wire)
{
	uint8_t again[GDMA_CQE_SIZE];
	struct gdma_cqe c;

	if (gdma_cqe_decode(wire, &c))
		return;
	FUZZ_CHECK(c.wq_num <= GDMA_QUEUE_ID_MAX && c.owner <= GDMA_OWNER_MASK);
	FUZZ_CHECK(c.owner == gdma_cqe_owner(wire));
	FUZZ_CHECK(!gdma_cqe_encode(&c, again));
	FUZZ_CHECK(!memcmp(again, wire, GDMA_CQE_SIZE));
}

static void header_round_trip(const uint8_t *data)
{
	struct mana_cqe_header h;
	uint8_t again[4];

	if (mana_cqe_header_decode(data, &h))
		return;
	FUZZ_CHECK(h.cqe_type == mana_cqe_fast_type(data));
	FUZZ_CHECK(!mana_cqe_header_encode(&h, again));
	FUZZ_CHECK(!memcmp(again, data, 4));
}

static void rx_round_trip(const uint8_t *data)
{
	uint8_t again[GDMA_CQE_DATA_SIZE];
	struct mana_rx_comp_oob o, o2;
	unsigned int n, i;

	if (mana_rx_comp_oob_decode(data, &o))
		return;
	FUZZ_CHECK(mana_cqe_type_is_rx(o.cqe_type));
	FUZZ_CHECK(!mana_rx_comp_oob_encode(&o, again));
	FUZZ_CHECK(!memcmp(again, data, GDMA_CQE_DATA_SIZE));
	FUZZ_CHECK(!mana_rx_comp_oob_decode(again, &o2));
	FUZZ_CHECK(rx_eq(&o, &o2));
	/* what the consumers derive stays inside the slots */
	n = mana_rx_comp_pkts(&o);
	FUZZ_CHECK(n <= mana_rx_comp_slots(o.cqe_type));
	FUZZ_CHECK(mana_rx_comp_wqes(&o) <= MANA_RXCOMP_MAX_PKTS);
	for (i = 0; i < n && o.cqe_type != CQE_RX_COALESCED_8; i++)
		FUZZ_CHECK(mana_rx_fast_len(data, i) == o.ppi[i].pkt_len);
}

static void tx_round_trip(const uint8_t *data)
{
	uint8_t again[GDMA_CQE_DATA_SIZE];
	struct mana_tx_comp_oob o;

	if (mana_tx_comp_oob_decode(data, &o))
		return;
	FUZZ_CHECK(!mana_tx_comp_oob_check(&o));
	FUZZ_CHECK(!mana_tx_comp_oob_encode(&o, again));
	FUZZ_CHECK(!memcmp(again, data, GDMA_CQE_DATA_SIZE));
}

/* RDMA (RC) CQE data: every bit is a field or reserved-zero. */
static void rdma_round_trip(const uint8_t *data)
{
	uint8_t again[GDMA_CQE_DATA_SIZE];
	struct mana_rdma_cqe c;

	if (mana_rdma_cqe_decode(data, &c))
		return;
	FUZZ_CHECK(!mana_rdma_cqe_check(&c));
	FUZZ_CHECK(!mana_rdma_cqe_encode(&c, again));
	FUZZ_CHECK(!memcmp(again, data, GDMA_CQE_DATA_SIZE));
}

static void eqe_round_trip(const uint8_t *wire)
{
	uint8_t again[GDMA_EQE_SIZE];
	struct gdma_eqe e;

	if (gdma_eqe_decode(wire, &e))
		return;
	FUZZ_CHECK(e.owner == gdma_eqe_owner(wire));
	FUZZ_CHECK(!gdma_eqe_encode(&e, again));
	FUZZ_CHECK(!memcmp(again, wire, GDMA_EQE_SIZE));
	FUZZ_CHECK(gdma_eqe_cq_id(&e) <= GDMA_QUEUE_ID_MAX);
}

/* Encoder side: any struct the encoder takes decodes back to itself. */
static void rx_encode_side(struct fuzz_in *in)
{
	struct mana_rx_comp_oob o = { 0 }, back;
	uint8_t wire[GDMA_CQE_DATA_SIZE];
	uint32_t fl = fuzz_u32(in);
	unsigned int i;

	o.cqe_type = fuzz_u8(in) & 0x3F;
	o.vendor_err = fuzz_u32(in) & 0x1FFFFFF;
	o.rx_vlan_id = fl & 0x1FFF;
	o.rx_vlantag_present = fl >> 13 & 1;
	o.rx_outer_iphdr_csum_succeed = fl >> 14 & 1;
	o.rx_outer_iphdr_csum_fail = fl >> 15 & 1;
	o.rx_hashtype = fuzz_u16(in) & 0x3FF;
	o.rx_iphdr_csum_succeed = fl >> 16 & 1;
	o.rx_iphdr_csum_fail = fl >> 17 & 1;
	o.rx_tcp_csum_succeed = fl >> 18 & 1;
	o.rx_tcp_csum_fail = fl >> 19 & 1;
	o.rx_udp_csum_succeed = fl >> 20 & 1;
	o.rx_udp_csum_fail = fl >> 21 & 1;
	for (i = 0; i < MANA_RXCOMP_MAX_PKTS; i++) {
		o.ppi[i].pkt_len = fuzz_u16(in);
		o.ppi[i].pkt_hash = fuzz_u32(in);
	}
	o.rx_wqe_offset = fuzz_u32(in);
	if (mana_rx_comp_oob_encode(&o, wire)) {
		FUZZ_CHECK(mana_rx_comp_oob_check(&o));
		return;
	}
	FUZZ_CHECK(!mana_rx_comp_oob_decode(wire, &back));
	FUZZ_CHECK(rx_eq(&o, &back));
}

static void tx_encode_side(struct fuzz_in *in)
{
	struct mana_tx_comp_oob o = { 0 }, back;
	uint8_t wire[GDMA_CQE_DATA_SIZE];

	o.cqe_type = fuzz_u8(in);
	o.vendor_err = fuzz_u32(in);
	o.tx_data_offset = fuzz_u32(in);
	o.tx_sgl_offset = fuzz_u8(in);
	o.tx_wqe_offset = fuzz_u32(in);
	if (mana_tx_comp_oob_encode(&o, wire))
		return;
	FUZZ_CHECK(!mana_tx_comp_oob_decode(wire, &back));
	FUZZ_CHECK(tx_eq(&o, &back));
}

/* Owner bits: the device's value for an index is new, the lap before empty. */
static void owner_arith(struct fuzz_in *in)
{
	uint32_t head = fuzz_u32(in), count = fuzz_u32(in);
	uint32_t tail, unc, k;

	if (!count) {
		FUZZ_CHECK(gdma_cqe_state(0, head, 0) == GDMA_CQE_OVERFLOW);
		return;
	}
	FUZZ_CHECK(gdma_queue_slot(head, count) < count);
	FUZZ_CHECK(gdma_cqe_state(gdma_owner_expected(head, count), head,
				  count) == GDMA_CQE_VALID);
	if (head >= count)
		FUZZ_CHECK(gdma_cqe_state(gdma_owner_expected(head - count,
							      count),
					  head, count) == GDMA_CQE_EMPTY);
	tail = gdma_cq_db_tail(head, count);
	if (count > GDMA_CQ_MAX_COUNT) {
		FUZZ_CHECK(!tail);
		return;
	}
	FUZZ_CHECK(tail <= GDMA_CQ_DB_TAIL_MAX);
	unc = gdma_cq_db_unconsumed(head, tail, count);
	FUZZ_CHECK(unc == 0);
	/* k new entries past the tail, within one u32 wrap of the index */
	k = count & 0xFFFF;
	if (head <= UINT32_MAX - k)
		FUZZ_CHECK(gdma_cq_db_unconsumed(head + k, tail, count) == k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t cqe[GDMA_CQE_SIZE] = { 0 };
	struct fuzz_in in = { data, size };
	struct fuzz_in rest;

	fuzz_take(&in, cqe, sizeof(cqe));
	cqe_round_trip(cqe);
	header_round_trip(cqe);
	rx_round_trip(cqe);
	tx_round_trip(cqe);
	rdma_round_trip(cqe);
	eqe_round_trip(cqe);
	eqe_round_trip(cqe + GDMA_CQE_SIZE - GDMA_EQE_SIZE);
	/* the rest of the input, if any, drives the encoders */
	rest = in;
	rx_encode_side(&rest);
	rest = in;
	tx_encode_side(&rest);
	rest = in;
	owner_arith(&rest);
	return 0;
}
