// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mana-vfio's untrusted input, two ways (the first byte chooses):
 *   0: one vfio-user message as QEMU would send it: the header decoder and
 *      the payload decoder of its command.  An accepted header's size is
 *      the message's; an accepted payload's pointers and counts stay inside
 *      the message.
 *   1: the MANA function driven by a guest: a guest RAM image (little-endian
 *      u16 length, then bytes, at 0x100000 in a 64 KiB RAM) and then 13-byte
 *      register operations (kind, offset u32, value u64) on config space and
 *      BAR0 (SMC, doorbells) and frames from the wire.  Whatever the guest
 *      writes, the device touches guest memory only through the DMA
 *      callback, which allows only RAM (ASan sees anything else), and
 *      never crashes.
 *   2: one HWC request as a guest's driver would send it, given straight
 *      to mana_gdma_req.h's decoders: an accepted header's size is the
 *      message's, accepted lists and addresses stay inside it, and the
 *      adapter's address decoders accept only the ops and types 6.12 sends.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "emulator/wire/roce.h"
#include "vfio/mana_fn.h"
#include "vfio/mana_gdma_req.h"
#include "vfio/rc.h"
#include "vfio/vfio_user.h"

#define RAM_BASE	0x100000ULL
#define RAM_SIZE	0x10000U

static uint8_t ram[RAM_SIZE];

static void *f_dma(void *ctx, uint64_t gpa, size_t len)
{
	(void)ctx;
	if (gpa < RAM_BASE || len > RAM_SIZE || gpa - RAM_BASE > RAM_SIZE - len)
		return NULL;
	return ram + (gpa - RAM_BASE);
}

static void f_irq(void *ctx, uint32_t v)
{
	(void)ctx;
	FUZZ_CHECK(v < MANA_FN_MSIX);
}

static void message(const uint8_t *m, size_t len)
{
	const uint8_t *p = m + VFU_HDR_SIZE;
	struct vfu_hdr h;
	size_t n;
	union {
		struct vfu_version v;
		struct vfu_dma_map map;
		struct vfu_dma_unmap unmap;
		struct vfu_set_irqs irqs;
		struct vfu_region_rw rw;
	} u;
	uint32_t idx;

	if (vfu_hdr_decode(m, len, &h))
		return;
	FUZZ_CHECK(h.size == len && h.size >= VFU_HDR_SIZE);
	n = len - VFU_HDR_SIZE;
	switch (h.cmd) {
	case VFU_VERSION:
		if (!vfu_version_decode(p, n, &u.v) && u.v.json)
			FUZZ_CHECK(u.v.json + strlen(u.v.json) == (const char *)p + n - 1);
		break;
	case VFU_DMA_MAP:
		if (!vfu_dma_map_decode(p, n, &u.map))
			FUZZ_CHECK(u.map.size && u.map.addr + u.map.size > u.map.addr);
		break;
	case VFU_DMA_UNMAP:
		vfu_dma_unmap_decode(p, n, &u.unmap);
		break;
	case VFU_DEVICE_GET_REGION_INFO:
		vfu_region_info_decode(p, n, &idx);
		break;
	case VFU_DEVICE_GET_IRQ_INFO:
		vfu_irq_info_decode(p, n, &idx);
		break;
	case VFU_DEVICE_SET_IRQS:
		/* a descriptor count from the payload's first byte, if any */
		if (!vfu_set_irqs_decode(p, n, n ? p[0] & 3 : 0, &u.irqs) &&
		    u.irqs.bools)
			FUZZ_CHECK(u.irqs.bools + u.irqs.count == p + n);
		break;
	case VFU_REGION_READ:
	case VFU_REGION_WRITE:
		if (!vfu_region_rw_decode(p, n, h.cmd == VFU_REGION_WRITE, &u.rw)) {
			FUZZ_CHECK(u.rw.count && u.rw.count <= VFU_MAX_DATA);
			if (u.rw.data)
				FUZZ_CHECK(u.rw.data + u.rw.count == p + n);
		}
		break;
	default:
		break;
	}
}

static void device(const uint8_t *d, size_t len)
{
	static const uint8_t mac[6] = { 0, 0x0d, 0x3a, 0, 0, 1 };
	struct mana_fn_ops ops = { f_dma, f_irq, NULL, NULL };
	struct mana_fn *fn;
	size_t img;
	uint8_t b[16] = { 0 };	/* the default case writes up to 15 bytes */

	if (len < 2)
		return;
	img = d[0] | (size_t)d[1] << 8;
	d += 2;
	len -= 2;
	if (img > len)
		img = len;
	if (img > RAM_SIZE)
		img = RAM_SIZE;
	memset(ram, 0, sizeof(ram));
	memcpy(ram, d, img);
	d += img;
	len -= img;
	fn = mana_fn_new(&ops, mac);
	FUZZ_CHECK(fn);
	for (; len >= 13; d += 13, len -= 13) {
		uint32_t off;
		uint64_t v;

		memcpy(&off, d + 1, 4);
		memcpy(&v, d + 5, 8);
		memcpy(b, &v, 8);
		switch (d[0] & 7) {
		case 0:
			mana_fn_bar_write(fn, 0, off % MANA_FN_BAR0_SIZE, b, 4);
			break;
		case 1:
			mana_fn_bar_write(fn, 0, off % MANA_FN_BAR0_SIZE, b, 8);
			break;
		case 2:
			mana_fn_cfg_write(fn, off % MANA_FN_CFG_SIZE, b, 4);
			break;
		case 3:
			mana_fn_bar_read(fn, 0, off % MANA_FN_BAR0_SIZE, b, 8);
			break;
		case 4:
			mana_fn_bar_write(fn, 4, off % MANA_FN_BAR4_SIZE, b, 4);
			break;
		case 5:
			mana_fn_reset(fn);
			break;
		case 6:
			/* a frame from the wire: bytes of the RAM image */
			mana_fn_rx(fn, ram + off % (RAM_SIZE / 2),
				   (uint32_t)(v % (RAM_SIZE / 2)));
			break;
		default:
			/* any region, offset and length: refused or served */
			mana_fn_bar_write(fn, d[0] >> 3, off, b, (uint32_t)(v & 15));
			break;
		}
	}
	mana_fn_free(fn);
}

static void gdma_request(const uint8_t *m, size_t size)
{
	uint32_t len = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	struct gdma_create_dma_region r;
	struct gdma_region_add_pages a;
	struct gdma_resource_range rr;
	struct mana_ib_create_adapter ca;
	struct mana_ib_config_addr ad;
	struct gdma_create_mr mr;
	struct mana_ib_create_cq cc;
	struct mana_ib_create_rc_qp rq;
	struct mana_ib_set_qp_state qs;
	struct gdma_create_queue q;
	struct mana_create_wqobj w;
	struct gdma_req_hdr h;
	uint64_t handle, obj;

	if (gdma_req_hdr_decode(m, len, &h))
		return;
	FUZZ_CHECK(h.req_size == len && h.resp_size >= GDMA_RESP_HDR_SIZE);
	if (!gdma_create_dma_region_decode(m, len, &r))
		FUZZ_CHECK(r.pages + 8 * (size_t)r.list_len == m + len &&
			   r.list_len <= r.page_count);
	if (!gdma_region_add_pages_decode(m, len, &a))
		FUZZ_CHECK(a.pages + 8 * (size_t)a.list_len == m + len);
	if (!gdma_create_queue_decode(m, len, &q))
		FUZZ_CHECK(q.type >= GDMA_SQ && q.type <= GDMA_EQ);
	if (!mana_create_wqobj_decode(m, len, &w))
		FUZZ_CHECK(w.wq_type == GDMA_SQ || w.wq_type == GDMA_RQ);
	if (!gdma_alloc_resource_range_decode(m, len, &rr))
		FUZZ_CHECK(len >= GDMA_REQ_HDR_SIZE + 16);
	if (!gdma_destroy_resource_range_decode(m, len, &rr))
		FUZZ_CHECK(len >= GDMA_REQ_HDR_SIZE + 12);
	if (!mana_ib_create_adapter_decode(m, len, &ca))
		FUZZ_CHECK(len >= GDMA_REQ_HDR_SIZE + 16);
	if (!mana_ib_adapter_decode(m, len, &handle))
		FUZZ_CHECK(len >= GDMA_REQ_HDR_SIZE + 8);
	if (!mana_ib_config_ip_decode(m, len, &ad))
		FUZZ_CHECK((ad.op == MANA_IB_ADDR_OP_ADD || ad.op == MANA_IB_ADDR_OP_REMOVE) &&
			   (ad.sgid_type == MANA_IB_SGID_IPV4 ||
			    ad.sgid_type == MANA_IB_SGID_IPV6));
	if (!gdma_create_mr_decode(m, len, &mr))
		FUZZ_CHECK(!(mr.access & ~GDMA_ACCESS_MASK));
	if (!gdma_create_dma_region_decode(m, len, &r))
		FUZZ_CHECK(r.page_type <= GDMA_PAGE_TYPE_MAX);
	if (!mana_ib_create_cq_decode(m, len, &cc))
		FUZZ_CHECK(len >= GDMA_REQ_HDR_SIZE + 24);
	if (!mana_ib_adapter_obj_decode(m, len, &handle, &obj))
		FUZZ_CHECK(len >= GDMA_REQ_HDR_SIZE + 16);
	if (!mana_ib_create_rc_qp_decode(m, len, &rq))
		FUZZ_CHECK(rq.flags == MANA_RC_FLAG_NO_FMR ?
			   !rq.region[MANA_RC_QUEUE_FMR] :
			   !rq.flags && rq.region[MANA_RC_QUEUE_FMR]);
	if (!mana_ib_set_qp_state_decode(m, len, &qs))
		FUZZ_CHECK(len >= GDMA_REQ_HDR_SIZE + 120 &&
			   (!(qs.attr_mask & MANA_IB_QP_AV) ||
			    (qs.src_addr_type == qs.dest_addr_type &&
			     qs.dest_port == 4791)));
	if (!mana_ib_config_mac_decode(m, len, &ad))
		FUZZ_CHECK(ad.op == MANA_IB_ADDR_OP_ADD || ad.op == MANA_IB_ADDR_OP_REMOVE);
}

/*
 * RoCEv2 into mana-vfio's RC transport (vfio/rc.c): a QP in RTS whose
 * rings hold nothing and whose one MR is 4 KiB of the harness's memory;
 * the input's bytes are a packet's fields (roce_encode() makes it valid,
 * ICRC included, so the engine's own checks are reached), fed to it a
 * few times.  Nothing it does may touch memory outside that MR.
 */
static uint8_t rc_mr[4096];

static int rc_ring_read(void *ctx, void *ring, uint32_t pos, void *buf,
			uint32_t len)
{
	(void)ctx; (void)ring; (void)pos;
	memset(buf, 0, len);
	return 0;
}

static int rc_mem(void *ctx, uint32_t pd, uint32_t key, uint64_t addr,
		  uint8_t *buf, uint32_t len, unsigned int access, bool to_mem)
{
	(void)ctx; (void)access;
	if (pd != 1 || key != 0x1000 || addr < 0x10000 ||
	    addr - 0x10000 > sizeof(rc_mr) || len > sizeof(rc_mr) - (addr - 0x10000))
		return -EACCES;
	if (buf && to_mem)
		memcpy(rc_mr + (addr - 0x10000), buf, len);
	else if (buf)
		memcpy(buf, rc_mr + (addr - 0x10000), len);
	return 0;
}

static void rc_cqe(void *ctx, void *cq, const uint8_t *data, uint32_t wq,
		   bool is_sq)
{
	struct mana_rdma_cqe c;

	(void)ctx; (void)cq; (void)wq; (void)is_sq;
	FUZZ_CHECK(!mana_rdma_cqe_decode(data, &c));
}

static void rc_fatal(void *ctx, uint32_t qpn)
{
	(void)ctx;
	FUZZ_CHECK(qpn == 0x800004);
}

static void rc_xmit(void *ctx, const uint8_t *f, size_t len)
{
	struct roce_pkt p;

	(void)ctx;
	FUZZ_CHECK(!roce_decode(f, len, &p));	/* what it sends is valid */
}

static void rc_transport(const uint8_t *d, size_t size)
{
	static uint8_t ring[3][4096], f[ROCE_MAX_FRAME];
	static const uint8_t mac[6] = { 0, 0x0d, 0x3a, 0, 0, 1 };
	struct vrc_ops ops = { .ring_read = rc_ring_read, .mem = rc_mem,
			       .cqe = rc_cqe, .fatal = rc_fatal, .xmit = rc_xmit };
	struct vrc_qp_desc qd = { .pd = 1, .send_cq = ring, .recv_cq = ring,
		.sq = { ring[0], 4096, 0x400004 }, .rq = { ring[1], 4096, 0x800004 },
		.rrq = { ring[2], 4096, 0x800005 } };
	struct vrc_attr a = { .mask = 1ULL | 128 | 256 | 4096 | 65536 | 1048576,
		.state = 2, .path_mtu = 1, .rq_psn = 10, .sq_psn = 20,
		.dest_qpn = 0x800008, .sgid = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 },
		.dgid = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 } };
	struct vrc_dev *dev = vrc_dev_new(&ops, mac);
	struct vrc_qp *qp;
	size_t len, i;

	if (!dev)
		return;
	if (vrc_qp_create(dev, &qd, &qp) || vrc_qp_modify(dev, qp, &a)) {
		vrc_dev_free(dev);
		return;
	}
	a.mask = 1;
	a.state = 3;
	vrc_qp_modify(dev, qp, &a);
	/* 24 bytes of fields per packet, the rest the payload */
	for (i = 0; i + 24 <= size && i < 24 * 8; i += 24) {
		struct roce_pkt p = {
			.dmac = { 0, 0x0d, 0x3a, 0, 0, 1 },
			.smac = { 0, 0x0d, 0x3a, 0, 0, 2 },
			.sgid = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 },
			.dgid = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 },
			.opcode = d[i], .ack_req = d[i + 1] & 1,
			.dqpn = d[i + 1] & 2 ? 0x800004 : 0x800008,
			.psn = (d[i + 2] | d[i + 3] << 8) % 40,
			.syndrome = d[i + 4], .msn = d[i + 5],
			.va = 0x10000 - 64 + (d[i + 6] | d[i + 7] << 8),
			.rkey = d[i + 8] & 1 ? 0x1000 : d[i + 9],
			.dma_len = d[i + 10] | d[i + 11] << 8,
			.imm = d[i + 12],
			.pkey = 0xffff,
			.payload = d + i + 24,
			.payload_len = (uint32_t)(d[i + 13] % 3 == 0 ? 0 :
				d[i + 13] % 3 == 1 ? 256 : d[i + 14]),
		};

		if (p.payload_len > size - i - 24)
			p.payload_len = (uint32_t)(size - i - 24);
		if (!roce_encode(&p, f, sizeof(f), &len))
			vrc_rx(dev, f, len);
		vrc_tick(dev, vrc_now_ns() + (uint64_t)d[i + 15] * 100000000ull);
	}
	vrc_dev_free(dev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	if (data[0] == 0)
		message(data + 1, size - 1);
	else if (data[0] == 1)
		device(data + 1, size - 1);
	else if (data[0] == 2)
		gdma_request(data + 1, size - 1);
	else if (data[0] == 3)
		rc_transport(data + 1, size - 1);
	return 0;
}
