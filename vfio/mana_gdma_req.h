/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * GDMA messages of the hardware channel (HWC), as the Linux mana driver
 * sends them (include/net/mana/gdma.h, mana.h; "HW DATA" structs, naturally
 * aligned, little-endian): the request and response headers and the
 * bodies mana-vfio parses.  Fail-closed like providers/mana/gdma.h: a
 * message shorter than its struct, a header whose sizes disagree with the
 * buffer, or a list longer than the message gives -EINVAL.
 */
#ifndef MANA_VFIO_GDMA_REQ_H
#define MANA_VFIO_GDMA_REQ_H

#include "providers/mana/gdma.h"

#define GDMA_REQ_HDR_SIZE	40
#define GDMA_RESP_HDR_SIZE	32

/* Statuses: 0 success; the driver fails every other (-EPROTO) but
 * CMD_UNSUPPORTED (-EOPNOTSUPP in newer kernels; the value is theirs).
 * BAD_ARG and NO_RESOURCE are this model's own choice of nonzero. */
#define GDMA_STATUS_CMD_UNSUPPORTED	0xFFFFFFFFU
#define GDMA_STATUS_MORE_ENTRIES	0x00000105U	/* a region's list continues */
#define GDMA_STATUS_BAD_ARG		0x00000001U
#define GDMA_STATUS_NO_RESOURCE		0x00000002U

enum gdma_request_type {
	GDMA_VERIFY_VF_DRIVER_VERSION = 1,
	GDMA_QUERY_MAX_RESOURCES = 2,
	GDMA_LIST_DEVICES = 3,
	GDMA_REGISTER_DEVICE = 4,
	GDMA_DEREGISTER_DEVICE = 5,
	GDMA_GENERATE_TEST_EQE = 10,
	GDMA_CREATE_QUEUE = 12,
	GDMA_DISABLE_QUEUE = 13,
	GDMA_ALLOCATE_RESOURCE_RANGE = 22,
	GDMA_DESTROY_RESOURCE_RANGE = 24,
	GDMA_CREATE_DMA_REGION = 25,
	GDMA_DMA_REGION_ADD_PAGES = 26,
	GDMA_DESTROY_DMA_REGION = 27,
	GDMA_CREATE_PD = 29,
	GDMA_DESTROY_PD = 30,
	GDMA_CREATE_MR = 31,
	GDMA_DESTROY_MR = 32,
};

#define GDMA_RESOURCE_DOORBELL_PAGE	27

#define GDMA_DEVICE_HWC		1
#define GDMA_DEVICE_MANA	2
#define GDMA_DEVICE_MANA_IB	3

/* gdma_req_hdr: req msg_hdr, expected resp msg_hdr, dev_id, activity_id */
struct gdma_req_hdr {
	uint32_t msg_type;
	uint16_t msg_version;
	uint16_t hwc_msg_id;
	uint32_t req_size;
	uint16_t resp_version;
	uint32_t resp_size;
	uint32_t dev_id;
	uint32_t activity_id;
};

/*
 * hdr_type must be GDMA_STANDARD_HEADER_TYPE (0) in both halves, the
 * request's size must equal the bytes sent, the response's type must echo
 * the request's, and the expected response must at least hold its header.
 */
static inline int gdma_req_hdr_decode(const uint8_t *b, uint32_t len,
				      struct gdma_req_hdr *out)
{
	struct gdma_req_hdr h;

	if (len < GDMA_REQ_HDR_SIZE || gdma_get_le32(b) ||
	    gdma_get_le32(b + 16))
		return -EINVAL;
	h.msg_type = gdma_get_le32(b + 4);
	h.msg_version = gdma_get_le16(b + 8);
	h.hwc_msg_id = gdma_get_le16(b + 10);
	h.req_size = gdma_get_le32(b + 12);
	h.resp_version = gdma_get_le16(b + 24);
	h.resp_size = gdma_get_le32(b + 28);
	h.dev_id = gdma_get_le32(b + 32);
	h.activity_id = gdma_get_le32(b + 36);
	if (h.req_size != len || gdma_get_le32(b + 20) != h.msg_type ||
	    h.resp_size < GDMA_RESP_HDR_SIZE)
		return -EINVAL;
	*out = h;
	return 0;
}

/* gdma_resp_hdr answering @h: @size bytes in all, @status. */
static inline void gdma_resp_hdr_encode(const struct gdma_req_hdr *h,
					uint32_t size, uint32_t status,
					uint8_t *b)
{
	gdma_put_le32(b, 0);
	gdma_put_le32(b + 4, h->msg_type);
	gdma_put_le16(b + 8, h->resp_version);
	gdma_put_le16(b + 10, h->hwc_msg_id);
	gdma_put_le32(b + 12, size);
	gdma_put_le32(b + 16, h->dev_id);
	gdma_put_le32(b + 20, h->activity_id);
	gdma_put_le32(b + 24, status);
	gdma_put_le32(b + 28, 0);
}

/* GDMA_CREATE_DMA_REGION: length, offset_in_page, page_type, count, list */
#define GDMA_PAGE_TYPE_MAX	9	/* 4 KiB << 9 = 2 MiB, mana_ib's largest */
struct gdma_create_dma_region {
	uint64_t length;
	uint32_t offset_in_page;
	uint32_t page_type;	/* pages of 4 KiB << page_type */
	uint32_t page_count;
	uint32_t list_len;
	const uint8_t *pages;	/* list_len little-endian u64 */
};

static inline int gdma_create_dma_region_decode(const uint8_t *b, uint32_t len,
						struct gdma_create_dma_region *out)
{
	struct gdma_create_dma_region r;
	const uint8_t *p = b + GDMA_REQ_HDR_SIZE;

	if (len < GDMA_REQ_HDR_SIZE + 24)
		return -EINVAL;
	r.length = gdma_get_le64(p);
	r.offset_in_page = gdma_get_le32(p + 8);
	r.page_type = gdma_get_le32(p + 12);
	r.page_count = gdma_get_le32(p + 16);
	r.list_len = gdma_get_le32(p + 20);
	r.pages = p + 24;
	/* 4 KiB .. 2 MiB pages; no more pages listed than counted */
	if (r.page_type > GDMA_PAGE_TYPE_MAX || !r.page_count || !r.length ||
	    r.list_len > r.page_count ||
	    (uint64_t)r.list_len * 8 != len - GDMA_REQ_HDR_SIZE - 24)
		return -EINVAL;
	*out = r;
	return 0;
}

/* GDMA_DMA_REGION_ADD_PAGES: handle, list_len, reserved, list */
struct gdma_region_add_pages {
	uint64_t handle;
	uint32_t list_len;
	const uint8_t *pages;
};

static inline int gdma_region_add_pages_decode(const uint8_t *b, uint32_t len,
					       struct gdma_region_add_pages *out)
{
	struct gdma_region_add_pages a;
	const uint8_t *p = b + GDMA_REQ_HDR_SIZE;

	if (len < GDMA_REQ_HDR_SIZE + 16)
		return -EINVAL;
	a.handle = gdma_get_le64(p);
	a.list_len = gdma_get_le32(p + 8);
	a.pages = p + 16;
	if (!a.list_len ||
	    (uint64_t)a.list_len * 8 != len - GDMA_REQ_HDR_SIZE - 16)
		return -EINVAL;
	*out = a;
	return 0;
}

/* GDMA_CREATE_QUEUE (gdma_create_queue_req, 96 bytes) */
struct gdma_create_queue {
	enum gdma_queue_type type;
	uint32_t pdid;
	uint32_t doorbell;
	uint64_t region;
	uint32_t queue_size;
	uint32_t log2_throttle;
	uint32_t msix;
	uint32_t parent_eq;
};

static inline int gdma_create_queue_decode(const uint8_t *b, uint32_t len,
					   struct gdma_create_queue *out)
{
	struct gdma_create_queue c;
	const uint8_t *p = b + GDMA_REQ_HDR_SIZE;
	uint32_t type;

	if (len != GDMA_REQ_HDR_SIZE + 56)
		return -EINVAL;
	type = gdma_get_le32(p);
	if (type < GDMA_SQ || type > GDMA_EQ)
		return -EINVAL;
	c.type = (enum gdma_queue_type)type;
	c.pdid = gdma_get_le32(p + 8);
	c.doorbell = gdma_get_le32(p + 12);
	c.region = gdma_get_le64(p + 16);
	c.queue_size = gdma_get_le32(p + 28);
	c.log2_throttle = gdma_get_le32(p + 32);
	c.msix = gdma_get_le32(p + 36);
	c.parent_eq = gdma_get_le32(p + 44);
	*out = c;
	return 0;
}

/* MANA (Ethernet) requests, include/net/mana/mana.h */
enum mana_command_code {
	MANA_QUERY_DEV_CONFIG = 0x20001,
	MANA_QUERY_GF_STAT = 0x20002,
	MANA_CONFIG_VPORT_TX = 0x20003,
	MANA_CREATE_WQ_OBJ = 0x20004,
	MANA_DESTROY_WQ_OBJ = 0x20005,
	MANA_FENCE_RQ = 0x20006,
	MANA_CONFIG_VPORT_RX = 0x20007,
	MANA_QUERY_VPORT_CONFIG = 0x20008,
};

/* MANA_CREATE_WQ_OBJ: vport, wq_type, reserved, two regions, sizes, ... */
struct mana_create_wqobj {
	uint64_t vport;
	enum gdma_queue_type wq_type;
	uint64_t wq_region;
	uint64_t cq_region;
	uint32_t wq_size;
	uint32_t cq_size;
	uint32_t cq_parent;
};

/* 6.12 sends the 88-byte V1 body; newer kernels append V2/V3 fields. */
static inline int mana_create_wqobj_decode(const uint8_t *b, uint32_t len,
					   struct mana_create_wqobj *out)
{
	struct mana_create_wqobj w;
	const uint8_t *p = b + GDMA_REQ_HDR_SIZE;
	uint32_t type;

	if (len < GDMA_REQ_HDR_SIZE + 48)
		return -EINVAL;
	type = gdma_get_le32(p + 8);
	if (type != GDMA_SQ && type != GDMA_RQ)
		return -EINVAL;
	w.vport = gdma_get_le64(p);
	w.wq_type = (enum gdma_queue_type)type;
	w.wq_region = gdma_get_le64(p + 16);
	w.cq_region = gdma_get_le64(p + 24);
	w.wq_size = gdma_get_le32(p + 32);
	w.cq_size = gdma_get_le32(p + 36);
	w.cq_parent = gdma_get_le32(p + 44);
	*out = w;
	return 0;
}

/*
 * GDMA_ALLOCATE_RESOURCE_RANGE (type, count, alignment, search start) and
 * GDMA_DESTROY_RESOURCE_RANGE (type, count, first): mana_ib's doorbell
 * page of a user context, one page at a time.
 */
struct gdma_resource_range {
	uint32_t type;
	uint32_t count;
	uint32_t alignment;	/* allocate only */
	uint32_t first;		/* allocate: where to start searching */
};

static inline int gdma_alloc_resource_range_decode(const uint8_t *b,
						   uint32_t len,
						   struct gdma_resource_range *out)
{
	const uint8_t *p = b + GDMA_REQ_HDR_SIZE;

	if (len < GDMA_REQ_HDR_SIZE + 16)
		return -EINVAL;
	out->type = gdma_get_le32(p);
	out->count = gdma_get_le32(p + 4);
	out->alignment = gdma_get_le32(p + 8);
	out->first = gdma_get_le32(p + 12);
	return 0;
}

static inline int gdma_destroy_resource_range_decode(const uint8_t *b,
						     uint32_t len,
						     struct gdma_resource_range *out)
{
	const uint8_t *p = b + GDMA_REQ_HDR_SIZE;

	if (len < GDMA_REQ_HDR_SIZE + 12)
		return -EINVAL;
	out->type = gdma_get_le32(p);
	out->count = gdma_get_le32(p + 4);
	out->alignment = 0;
	out->first = gdma_get_le32(p + 8);
	return 0;
}

/*
 * GDMA_CREATE_MR (gdma_create_mr_request, 6.12): pd_handle, mr_type,
 * reserved, then for GDMA_MR_TYPE_GVA (the one type 6.12 makes) the
 * region, the virtual address the MR starts at and its access flags.
 */
#define GDMA_MR_TYPE_GVA	2
#define GDMA_ACCESS_LOCAL_READ	(1U << 0)
#define GDMA_ACCESS_LOCAL_WRITE	(1U << 1)
#define GDMA_ACCESS_MASK	0x3FU	/* local/remote read/write, atomic, bind */
struct gdma_create_mr {
	uint64_t pd_handle;
	uint32_t mr_type;
	uint64_t region;
	uint64_t va;
	uint32_t access;
};

static inline int gdma_create_mr_decode(const uint8_t *b, uint32_t len,
					struct gdma_create_mr *out)
{
	const uint8_t *p = b + GDMA_REQ_HDR_SIZE;
	struct gdma_create_mr m;

	if (len < GDMA_REQ_HDR_SIZE + 40)
		return -EINVAL;
	m.pd_handle = gdma_get_le64(p);
	m.mr_type = gdma_get_le32(p + 8);
	m.region = gdma_get_le64(p + 16);
	m.va = gdma_get_le64(p + 24);
	m.access = gdma_get_le32(p + 32);
	if (m.access & ~GDMA_ACCESS_MASK)
		return -EINVAL;
	*out = m;
	return 0;
}

/*
 * The RDMA adapter (drivers/infiniband/hw/mana/mana_ib.h, 6.12): requests
 * to the MANA_IB device, each after the adapter's handle but the first two.
 */
enum mana_ib_command_code {
	MANA_IB_GET_ADAPTER_CAP = 0x30001,
	MANA_IB_CREATE_ADAPTER = 0x30002,
	MANA_IB_DESTROY_ADAPTER = 0x30003,
	MANA_IB_CONFIG_IP_ADDR = 0x30004,
	MANA_IB_CONFIG_MAC_ADDR = 0x30005,
	MANA_IB_CREATE_CQ = 0x30008,
	MANA_IB_DESTROY_CQ = 0x30009,
	MANA_IB_CREATE_RC_QP = 0x3000a,
	MANA_IB_DESTROY_RC_QP = 0x3000b,
	MANA_IB_SET_QP_STATE = 0x3000d,
};

/* mana_ib_query_adapter_caps_resp: 18 u32 after the header (V3 reply) */
#define MANA_IB_ADAPTER_CAPS_SIZE	72
struct mana_ib_adapter_caps {
	uint32_t max_sq_id, max_rq_id, max_cq_id;
	uint32_t max_qp_count, max_cq_count, max_mr_count, max_pd_count;
	uint32_t max_inbound_read_limit, max_outbound_read_limit;
	uint32_t mw_count, max_srq_count;
	uint32_t max_requester_sq_size, max_responder_sq_size;
	uint32_t max_requester_rq_size, max_responder_rq_size;
	uint32_t max_send_sge_count, max_recv_sge_count;
	uint32_t max_inline_data_size;
};

static inline void mana_ib_adapter_caps_encode(const struct mana_ib_adapter_caps *c,
					       uint8_t *b)
{
	const uint32_t v[MANA_IB_ADAPTER_CAPS_SIZE / 4] = {
		c->max_sq_id, c->max_rq_id, c->max_cq_id, c->max_qp_count,
		c->max_cq_count, c->max_mr_count, c->max_pd_count,
		c->max_inbound_read_limit, c->max_outbound_read_limit,
		c->mw_count, c->max_srq_count, c->max_requester_sq_size,
		c->max_responder_sq_size, c->max_requester_rq_size,
		c->max_responder_rq_size, c->max_send_sge_count,
		c->max_recv_sge_count, c->max_inline_data_size,
	};
	unsigned int i;

	for (i = 0; i < MANA_IB_ADAPTER_CAPS_SIZE / 4; i++)
		gdma_put_le32(b + 4 * i, v[i]);
}

/* mana_rnic_create_adapter_req: notify_eq_id, reserved, feature_flags */
struct mana_ib_create_adapter {
	uint32_t notify_eq_id;
	uint64_t feature_flags;
};

static inline int mana_ib_create_adapter_decode(const uint8_t *b, uint32_t len,
						struct mana_ib_create_adapter *out)
{
	const uint8_t *p = b + GDMA_REQ_HDR_SIZE;

	if (len < GDMA_REQ_HDR_SIZE + 16)
		return -EINVAL;
	out->notify_eq_id = gdma_get_le32(p);
	out->feature_flags = gdma_get_le64(p + 8);
	return 0;
}

/* The adapter handle every later request starts with. */
static inline int mana_ib_adapter_decode(const uint8_t *b, uint32_t len,
					 uint64_t *adapter)
{
	if (len < GDMA_REQ_HDR_SIZE + 8)
		return -EINVAL;
	*adapter = gdma_get_le64(b + GDMA_REQ_HDR_SIZE);
	return 0;
}

enum mana_ib_addr_op {
	MANA_IB_ADDR_OP_ADD = 1,
	MANA_IB_ADDR_OP_REMOVE = 2,
};

enum mana_ib_sgid_type {
	MANA_IB_SGID_IPV4 = 1,
	MANA_IB_SGID_IPV6 = 2,
};

/*
 * mana_rnic_config_addr_req (adapter, op, sgid_type, ip_addr[16]) and
 * mana_rnic_config_mac_addr_req (adapter, op, mac[6], reserved[6]).  The
 * driver writes both addresses byte-reversed (copy_in_reverse); the
 * decoders give them in network order.  An unknown op or type is refused.
 */
struct mana_ib_config_addr {
	uint64_t adapter;
	uint32_t op;
	uint32_t sgid_type;	/* IP only */
	uint8_t addr[16];	/* the GID, or the MAC in the first 6 */
};

static inline int mana_ib_config_ip_decode(const uint8_t *b, uint32_t len,
					   struct mana_ib_config_addr *out)
{
	const uint8_t *p = b + GDMA_REQ_HDR_SIZE;
	struct mana_ib_config_addr a;
	unsigned int i;

	if (len < GDMA_REQ_HDR_SIZE + 32)
		return -EINVAL;
	a.adapter = gdma_get_le64(p);
	a.op = gdma_get_le32(p + 8);
	a.sgid_type = gdma_get_le32(p + 12);
	for (i = 0; i < 16; i++)
		a.addr[i] = p[16 + 15 - i];
	if ((a.op != MANA_IB_ADDR_OP_ADD && a.op != MANA_IB_ADDR_OP_REMOVE) ||
	    (a.sgid_type != MANA_IB_SGID_IPV4 && a.sgid_type != MANA_IB_SGID_IPV6))
		return -EINVAL;
	*out = a;
	return 0;
}

static inline int mana_ib_config_mac_decode(const uint8_t *b, uint32_t len,
					    struct mana_ib_config_addr *out)
{
	const uint8_t *p = b + GDMA_REQ_HDR_SIZE;
	struct mana_ib_config_addr a = { 0 };
	unsigned int i;

	if (len < GDMA_REQ_HDR_SIZE + 24)
		return -EINVAL;
	a.adapter = gdma_get_le64(p);
	a.op = gdma_get_le32(p + 8);
	for (i = 0; i < 6; i++)
		a.addr[i] = p[12 + 5 - i];
	if (a.op != MANA_IB_ADDR_OP_ADD && a.op != MANA_IB_ADDR_OP_REMOVE)
		return -EINVAL;
	*out = a;
	return 0;
}

/* mana_rnic_create_cq_req: adapter, gdma_region, eq_id, doorbell_page */
struct mana_ib_create_cq {
	uint64_t adapter;
	uint64_t region;
	uint32_t eq_id;
	uint32_t doorbell;
};

static inline int mana_ib_create_cq_decode(const uint8_t *b, uint32_t len,
					   struct mana_ib_create_cq *out)
{
	const uint8_t *p = b + GDMA_REQ_HDR_SIZE;

	if (len < GDMA_REQ_HDR_SIZE + 24)
		return -EINVAL;
	out->adapter = gdma_get_le64(p);
	out->region = gdma_get_le64(p + 8);
	out->eq_id = gdma_get_le32(p + 16);
	out->doorbell = gdma_get_le32(p + 20);
	return 0;
}

/* Requests naming the adapter and one object: DESTROY_CQ, DESTROY_RC_QP */
static inline int mana_ib_adapter_obj_decode(const uint8_t *b, uint32_t len,
					     uint64_t *adapter, uint64_t *obj)
{
	if (len < GDMA_REQ_HDR_SIZE + 16)
		return -EINVAL;
	*adapter = gdma_get_le64(b + GDMA_REQ_HDR_SIZE);
	*obj = gdma_get_le64(b + GDMA_REQ_HDR_SIZE + 8);
	return 0;
}

/*
 * mana_rnic_create_qp_req (RC): adapter, pd, send and receive CQ handles,
 * the regions of the five queues in enum mana_rc_queue_type order (the
 * third, SEND_QUEUE_FMR, is 0 = GDMA_INVALID_DMA_REGION for a user's QP,
 * which says so with MANA_RC_FLAG_NO_FMR), two deprecated u64, flags,
 * doorbell page, max_send/recv_wr, max_send/recv_sge, reserved.
 */
#define MANA_RC_QUEUES		5
#define MANA_RC_QUEUE_FMR	2
#define MANA_RC_FLAG_NO_FMR	2ULL
struct mana_ib_create_rc_qp {
	uint64_t adapter, pd, send_cq, recv_cq;
	uint64_t region[MANA_RC_QUEUES];
	uint64_t flags;
	uint32_t doorbell;
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge;
};

static inline int mana_ib_create_rc_qp_decode(const uint8_t *b, uint32_t len,
					      struct mana_ib_create_rc_qp *out)
{
	const uint8_t *p = b + GDMA_REQ_HDR_SIZE;
	struct mana_ib_create_rc_qp q;
	unsigned int i;

	if (len < GDMA_REQ_HDR_SIZE + 120)
		return -EINVAL;
	q.adapter = gdma_get_le64(p);
	q.pd = gdma_get_le64(p + 8);
	q.send_cq = gdma_get_le64(p + 16);
	q.recv_cq = gdma_get_le64(p + 24);
	for (i = 0; i < MANA_RC_QUEUES; i++)
		q.region[i] = gdma_get_le64(p + 32 + 8 * i);
	q.flags = gdma_get_le64(p + 88);
	q.doorbell = gdma_get_le32(p + 96);
	q.max_send_wr = gdma_get_le32(p + 100);
	q.max_recv_wr = gdma_get_le32(p + 104);
	q.max_send_sge = gdma_get_le32(p + 108);
	q.max_recv_sge = gdma_get_le32(p + 112);
	/* the FMR queue's region and the NO_FMR flag go together */
	if ((q.flags & ~MANA_RC_FLAG_NO_FMR) ||
	    !(q.flags & MANA_RC_FLAG_NO_FMR) != !!q.region[MANA_RC_QUEUE_FMR])
		return -EINVAL;
	*out = q;
	return 0;
}

/*
 * mana_rnic_set_qp_state_req: adapter, qp, attr_mask, then the ib_qp_attr
 * fields 6.12 copies (state, path_mtu, PSNs, dest_qpn, ...) and the
 * address vector; the fields the model keeps.
 */
struct mana_ib_set_qp_state {
	uint64_t adapter, qp, attr_mask;
	uint32_t state, path_mtu, rq_psn, sq_psn, dest_qpn;
	uint32_t max_dest_rd_atomic, retry_cnt, rnr_retry, min_rnr_timer;
};

static inline int mana_ib_set_qp_state_decode(const uint8_t *b, uint32_t len,
					      struct mana_ib_set_qp_state *out)
{
	const uint8_t *p = b + GDMA_REQ_HDR_SIZE;

	/* 64 bytes of fields, then the 56-byte mana_ib_ah_attr */
	if (len < GDMA_REQ_HDR_SIZE + 64 + 56)
		return -EINVAL;
	out->adapter = gdma_get_le64(p);
	out->qp = gdma_get_le64(p + 8);
	out->attr_mask = gdma_get_le64(p + 16);
	out->state = gdma_get_le32(p + 24);
	out->path_mtu = gdma_get_le32(p + 28);
	out->rq_psn = gdma_get_le32(p + 32);
	out->sq_psn = gdma_get_le32(p + 36);
	out->dest_qpn = gdma_get_le32(p + 40);
	out->max_dest_rd_atomic = gdma_get_le32(p + 44);
	out->retry_cnt = gdma_get_le32(p + 48);
	out->rnr_retry = gdma_get_le32(p + 52);
	out->min_rnr_timer = gdma_get_le32(p + 56);
	return 0;
}

#endif /* MANA_VFIO_GDMA_REQ_H */
