// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CM MAD encoding and decoding (ib_cm.h), written from the IBA vol. 1
 * message layouts (12.6.5 REQ, 12.6.6 MRA, 12.6.7 REJ, 12.6.8 REP,
 * 12.6.9 RTU, 12.6.10 DREQ, 12.6.11 DREP) and the MAD header (13.4.3).
 * Bit fields are packed most significant bit first within their bytes.
 * Every field is described once, in a table per message, and both
 * directions walk the same table.
 */
#include "ib_cm.h"

#include <errno.h>
#include <string.h>

/* One field: byte offset after the MAD header, first bit (0 = MSB), width. */
struct cm_field {
	uint16_t off;
	uint8_t bit, width;
	size_t member;			/* offsetof(struct ib_cm_msg, ...) */
	uint8_t size;			/* sizeof the member: 1, 2, 4 or 8 */
};

#define F(o, b, w, m)                                                          \
	{ (o), (b), (w), offsetof(struct ib_cm_msg, m),                        \
	  sizeof(((struct ib_cm_msg *)0)->m) }

static const struct cm_field req_fields[] = {
	F(0, 0, 32, local_comm_id),
	F(8, 0, 64, service_id),
	F(16, 0, 64, local_ca_guid),
	F(28, 0, 32, local_qkey),
	F(32, 0, 24, local_qpn),
	F(35, 0, 8, responder_resources),
	F(39, 0, 8, initiator_depth),
	F(43, 0, 5, remote_cm_response_timeout),
	F(43, 5, 2, transport_type),
	F(43, 7, 1, flow_control),
	F(44, 0, 24, starting_psn),
	F(47, 0, 5, local_cm_response_timeout),
	F(47, 5, 3, retry_count),
	F(48, 0, 16, pkey),
	F(50, 0, 4, path_mtu),
	F(50, 5, 3, rnr_retry_count),
	F(51, 0, 4, max_cm_retries),
	F(51, 4, 1, srq),
	F(88, 0, 20, flow_label),
	F(91, 2, 6, packet_rate),
	F(92, 0, 8, traffic_class),
	F(93, 0, 8, hop_limit),
	F(94, 0, 4, sl),
	F(94, 4, 1, subnet_local),
	F(95, 0, 5, local_ack_timeout),
};

static const struct cm_field rep_fields[] = {
	F(0, 0, 32, local_comm_id),
	F(4, 0, 32, remote_comm_id),
	F(8, 0, 32, local_qkey),
	F(12, 0, 24, local_qpn),
	F(20, 0, 24, starting_psn),
	F(24, 0, 8, responder_resources),
	F(25, 0, 8, initiator_depth),
	F(26, 0, 5, target_ack_delay),
	F(26, 5, 2, failover_accepted),
	F(26, 7, 1, flow_control),
	F(27, 0, 3, rnr_retry_count),
	F(27, 3, 1, srq),
	F(28, 0, 64, local_ca_guid),
};

static const struct cm_field ids_fields[] = {	/* RTU, DREP */
	F(0, 0, 32, local_comm_id),
	F(4, 0, 32, remote_comm_id),
};

static const struct cm_field rej_fields[] = {
	F(0, 0, 32, local_comm_id),
	F(4, 0, 32, remote_comm_id),
	F(8, 0, 2, msg_rejected),
	F(9, 0, 7, reject_info_len),
	F(10, 0, 16, reason),
};

static const struct cm_field mra_fields[] = {
	F(0, 0, 32, local_comm_id),
	F(4, 0, 32, remote_comm_id),
	F(8, 0, 2, msg_rejected),
	F(9, 0, 5, service_timeout),
};

static const struct cm_field dreq_fields[] = {
	F(0, 0, 32, local_comm_id),
	F(4, 0, 32, remote_comm_id),
	F(8, 0, 24, remote_qpn),
};

#undef F

struct cm_layout {
	uint16_t attr_id;
	const char *name;
	const struct cm_field *fields;
	unsigned int nfields;
	uint16_t priv_off, priv_len;
};

#define L(id, n, f, po, pl) { id, n, f, sizeof(f) / sizeof(f[0]), po, pl }
static const struct cm_layout layouts[] = {
	L(IB_CM_ATTR_REQ, "REQ", req_fields, 140, IB_CM_REQ_PRIV),
	L(IB_CM_ATTR_MRA, "MRA", mra_fields, 10, IB_CM_MRA_PRIV),
	L(IB_CM_ATTR_REJ, "REJ", rej_fields, 84, IB_CM_REJ_PRIV),
	L(IB_CM_ATTR_REP, "REP", rep_fields, 36, IB_CM_REP_PRIV),
	L(IB_CM_ATTR_RTU, "RTU", ids_fields, 8, IB_CM_RTU_PRIV),
	L(IB_CM_ATTR_DREQ, "DREQ", dreq_fields, 12, IB_CM_DREQ_PRIV),
	L(IB_CM_ATTR_DREP, "DREP", ids_fields, 8, IB_CM_DREP_PRIV),
};
#undef L

static const struct cm_layout *layout_of(uint16_t attr_id)
{
	unsigned int i;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].attr_id == attr_id)
			return &layouts[i];
	return NULL;
}

size_t ib_cm_private_len(uint16_t attr_id)
{
	const struct cm_layout *l = layout_of(attr_id);

	return l ? l->priv_len : 0;
}

const char *ib_cm_attr_name(uint16_t attr_id)
{
	const struct cm_layout *l = layout_of(attr_id);

	return l ? l->name : "?";
}

static uint64_t member_get(const struct ib_cm_msg *m, const struct cm_field *f)
{
	const uint8_t *p = (const uint8_t *)m + f->member;

	switch (f->size) {
	case 1: return *p;
	case 2: return *(const uint16_t *)p;
	case 4: return *(const uint32_t *)p;
	default: return *(const uint64_t *)p;
	}
}

static void member_set(struct ib_cm_msg *m, const struct cm_field *f,
		       uint64_t v)
{
	uint8_t *p = (uint8_t *)m + f->member;

	switch (f->size) {
	case 1:
		/* bool members take 0/1 (width 1) */
		*p = (uint8_t)v;
		break;
	case 2: *(uint16_t *)p = (uint16_t)v; break;
	case 4: *(uint32_t *)p = (uint32_t)v; break;
	default: *(uint64_t *)p = v; break;
	}
}

/* The big-endian bit string at @d from bit @bit, @width bits wide. */
static uint64_t bits_get(const uint8_t *d, unsigned int bit,
			 unsigned int width)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < width; i++) {
		unsigned int b = bit + i;

		v = v << 1 | ((d[b / 8] >> (7 - b % 8)) & 1);
	}
	return v;
}

static void bits_put(uint8_t *d, unsigned int bit, unsigned int width,
		     uint64_t v)
{
	unsigned int i;

	for (i = 0; i < width; i++) {
		unsigned int b = bit + width - 1 - i;
		uint8_t mask = (uint8_t)(1u << (7 - b % 8));

		if ((v >> i) & 1)
			d[b / 8] |= mask;
		else
			d[b / 8] &= (uint8_t)~mask;
	}
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

int ib_cm_encode(const struct ib_cm_msg *m, uint8_t mad[IB_MAD_LEN])
{
	const struct cm_layout *l = layout_of(m->attr_id);
	uint8_t *d = mad + IB_MAD_HDR_LEN;
	unsigned int i;

	if (!l)
		return -EINVAL;
	if (m->attr_id == IB_CM_ATTR_REJ && m->reject_info_len > IB_CM_REJ_ARI)
		return -EINVAL;
	for (i = 0; i < l->nfields; i++) {
		const struct cm_field *f = &l->fields[i];
		uint64_t v = member_get(m, f);

		if (f->width < 64 && v >> f->width)
			return -EINVAL;
	}
	memset(mad, 0, IB_MAD_LEN);
	mad[0] = IB_MAD_BASE_VERSION;
	mad[1] = IB_MGMT_CLASS_CM;
	mad[2] = IB_CM_CLASS_VERSION;
	mad[3] = IB_MGMT_METHOD_SEND;
	for (i = 0; i < 8; i++)
		mad[8 + i] = (uint8_t)(m->tid >> (56 - 8 * i));
	put16(mad + 16, m->attr_id);
	for (i = 0; i < l->nfields; i++) {
		const struct cm_field *f = &l->fields[i];

		bits_put(d + f->off, f->bit, f->width, member_get(m, f));
	}
	if (m->attr_id == IB_CM_ATTR_REQ) {
		memcpy(d + 56, m->local_gid, 16);
		memcpy(d + 72, m->remote_gid, 16);
	}
	if (m->attr_id == IB_CM_ATTR_REJ)
		memcpy(d + 12, m->ari, IB_CM_REJ_ARI);
	memcpy(d + l->priv_off, m->private_data, l->priv_len);
	return 0;
}

int ib_cm_decode(const uint8_t *mad, size_t len, struct ib_cm_msg *m)
{
	const uint8_t *d = mad + IB_MAD_HDR_LEN;
	const struct cm_layout *l;
	unsigned int i;

	memset(m, 0, sizeof(*m));
	if (len != IB_MAD_LEN || mad[0] != IB_MAD_BASE_VERSION ||
	    mad[1] != IB_MGMT_CLASS_CM || mad[2] != IB_CM_CLASS_VERSION ||
	    mad[3] != IB_MGMT_METHOD_SEND || get16(mad + 4) ||
	    get16(mad + 18))
		return -EINVAL;
	l = layout_of(get16(mad + 16));
	if (!l)
		return -EINVAL;
	m->attr_id = l->attr_id;
	for (i = 0; i < 8; i++)
		m->tid = m->tid << 8 | mad[8 + i];
	for (i = 0; i < l->nfields; i++) {
		const struct cm_field *f = &l->fields[i];

		member_set(m, f, bits_get(d + f->off, f->bit, f->width));
	}
	if (m->attr_id == IB_CM_ATTR_REJ) {
		if (m->reject_info_len > IB_CM_REJ_ARI)
			return -EINVAL;
		memcpy(m->ari, d + 12, IB_CM_REJ_ARI);
	}
	if (m->attr_id == IB_CM_ATTR_REQ) {
		memcpy(m->local_gid, d + 56, 16);
		memcpy(m->remote_gid, d + 72, 16);
	}
	memcpy(m->private_data, d + l->priv_off, l->priv_len);
	return 0;
}
