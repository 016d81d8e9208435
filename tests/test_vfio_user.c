// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mana-vfio without QEMU: the vfio-user and HWC message layouts pinned by
 * byte vectors written from QEMU's docs/interop/vfio-user.rst and Linux's
 * include/net/mana/gdma.h tables, their fail-closed rejections, and the
 * MANA function driven as the 6.12 mana driver drives it (SMC bootstrap,
 * init EQEs, one HWC request and its response, CQE and EQE, an
 * unsupported request, a request buffer outside guest memory) over a
 * buffer standing in for guest RAM.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "emulator/lib/qp_modify.h"
#include "vfio/mana_fn.h"
#include "vfio/mana_gdma_req.h"
#include "vfio/vfio_user.h"

/* ---- vfio-user ---------------------------------------------------------- */

static void test_header(void)
{
	/* id 0x0102, REGION_READ (9), 32 bytes, command, error 0 */
	static const uint8_t v[16] = {
		0x02, 0x01, 0x09, 0x00, 0x20, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	uint8_t b[16], out[16];
	struct vfu_hdr h;

	CHECK(!vfu_hdr_decode(v, 32, &h), "header decodes");
	CHECK(h.id == 0x102 && h.cmd == 9 && h.size == 32 && !h.flags,
	      "header fields");
	CHECK(vfu_hdr_decode(v, 31, &h) == -EINVAL, "size != bytes read refused");
	memcpy(b, v, 16);
	b[8] = 1;	/* a reply sent to the server */
	CHECK(vfu_hdr_decode(b, 32, &h) == -EINVAL, "reply type refused");
	b[8] = 0x40;	/* an undefined flag */
	CHECK(vfu_hdr_decode(b, 32, &h) == -EINVAL, "reserved flag refused");
	b[8] = 0x10;	/* No_reply is fine */
	CHECK(!vfu_hdr_decode(b, 32, &h) && (h.flags & VFU_F_NO_REPLY), "No_reply");
	memcpy(b, v, 16);
	b[12] = 5;
	CHECK(vfu_hdr_decode(b, 32, &h) == -EINVAL, "error in a command refused");
	memcpy(b, v, 16);
	b[4] = 8;
	CHECK(vfu_hdr_decode(b, 8, &h) == -EINVAL, "size below the header refused");
	vfu_put32(b + 4, VFU_MAX_MSG + 1);
	CHECK(vfu_hdr_size(b, &h.size) == -EINVAL, "oversized message refused");

	/* the EINVAL reply to it: Reply type, Error bit, errno 22 */
	CHECK(!vfu_hdr_decode(v, 32, &h), "again");
	vfu_reply_hdr_encode(&h, 16, EINVAL, out);
	{
		static const uint8_t want[16] = {
			0x02, 0x01, 0x09, 0x00, 0x10, 0x00, 0x00, 0x00,
			0x21, 0x00, 0x00, 0x00, 0x16, 0x00, 0x00, 0x00,
		};

		CHECK(!memcmp(out, want, 16), "error reply bytes");
	}
}

static void test_payloads(void)
{
	static const uint8_t ver[] = { 0, 0, 1, 0, '{', '}', 0 };
	static const uint8_t ver_nonul[] = { 0, 0, 1, 0, '{', '}' };
	static const uint8_t ver_two[] = { 0, 0, 1, 0, '{', 0, '}', 0 };
	/* DMA_MAP: argsz 32, read|write, offset 0x1000, addr 0x100000, 1 MiB */
	static const uint8_t map[32] = {
		0x20, 0, 0, 0, 0x03, 0, 0, 0,
		0x00, 0x10, 0, 0, 0, 0, 0, 0,
		0x00, 0x00, 0x10, 0, 0, 0, 0, 0,
		0x00, 0x00, 0x10, 0, 0, 0, 0, 0,
	};
	uint8_t b[64];
	struct vfu_version v;
	struct vfu_dma_map m;
	struct vfu_dma_unmap u;
	struct vfu_set_irqs s;
	struct vfu_region_rw r;
	uint32_t idx;

	CHECK(!vfu_version_decode(ver, sizeof(ver), &v) && v.major == 0 &&
	      v.minor == 1 && !strcmp(v.json, "{}"), "version with JSON");
	CHECK(!vfu_version_decode(ver, 4, &v) && !v.json, "version without JSON");
	CHECK(vfu_version_decode(ver_nonul, sizeof(ver_nonul), &v) == -EINVAL,
	      "JSON without NUL refused");
	CHECK(vfu_version_decode(ver_two, sizeof(ver_two), &v) == -EINVAL,
	      "NUL inside the JSON refused");

	CHECK(!vfu_dma_map_decode(map, 32, &m) && m.flags == 3 &&
	      m.offset == 0x1000 && m.addr == 0x100000 && m.size == 0x100000,
	      "DMA_MAP fields");
	memcpy(b, map, 32);
	b[0] = 24;
	CHECK(vfu_dma_map_decode(b, 32, &m) == -EINVAL, "DMA_MAP argsz refused");
	memcpy(b, map, 32);
	b[4] = 4;
	CHECK(vfu_dma_map_decode(b, 32, &m) == -EINVAL, "DMA_MAP flag refused");
	memcpy(b, map, 32);
	memset(b + 16, 0xff, 8);
	CHECK(vfu_dma_map_decode(b, 32, &m) == -EINVAL, "DMA_MAP wrap refused");
	memcpy(b, map, 32);
	memset(b + 24, 0, 8);
	CHECK(vfu_dma_map_decode(b, 32, &m) == -EINVAL, "DMA_MAP size 0 refused");

	memset(b, 0, 24);
	b[0] = 24;
	vfu_put64(b + 8, 0x100000);
	vfu_put64(b + 16, 0x1000);
	CHECK(!vfu_dma_unmap_decode(b, 24, &u) && u.addr == 0x100000 &&
	      u.size == 0x1000, "DMA_UNMAP");
	b[4] = 1;
	CHECK(vfu_dma_unmap_decode(b, 24, &u) == -EINVAL, "DMA_UNMAP flags refused");

	memset(b, 0, 32);
	b[0] = 32;
	b[8] = 7;
	CHECK(!vfu_region_info_decode(b, 32, &idx) && idx == 7, "REGION_INFO index");
	b[16] = 1;
	CHECK(vfu_region_info_decode(b, 32, &idx) == -EINVAL,
	      "REGION_INFO nonzero size refused");
	{
		struct vfu_region_info ri = { .flags = 3, .index = 0, .size = 0x10000 };
		static const uint8_t want[32] = {
			0x20, 0, 0, 0, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		};

		vfu_region_info_encode(&ri, b);
		CHECK(!memcmp(b, want, 32), "REGION_INFO reply bytes");
	}

	/* SET_IRQS: argsz 20, EVENTFD|TRIGGER, MSI-X, start 0, count 2 */
	memset(b, 0, 24);
	b[0] = 20;
	b[4] = 0x24;
	b[8] = 2;
	b[16] = 2;
	CHECK(!vfu_set_irqs_decode(b, 20, 2, &s) && s.index == 2 && s.count == 2,
	      "SET_IRQS eventfds");
	CHECK(!vfu_set_irqs_decode(b, 20, 0, &s), "SET_IRQS de-assign");
	CHECK(vfu_set_irqs_decode(b, 20, 1, &s) == -EINVAL,
	      "SET_IRQS fd count != count refused");
	b[4] = 0x26;
	CHECK(vfu_set_irqs_decode(b, 20, 2, &s) == -EINVAL,
	      "SET_IRQS two data flags refused");
	b[4] = 0x21;	/* NONE|TRIGGER with count 0: disable all */
	b[16] = 0;
	CHECK(!vfu_set_irqs_decode(b, 20, 0, &s) && !s.count, "SET_IRQS disable");
	b[4] = 0x22;	/* BOOL|TRIGGER, count 2, bytes 1 0 */
	b[0] = 22;
	b[16] = 2;
	b[20] = 1;
	b[21] = 0;
	CHECK(!vfu_set_irqs_decode(b, 22, 0, &s) && s.bools[0] == 1, "SET_IRQS bool");
	b[21] = 2;
	CHECK(vfu_set_irqs_decode(b, 22, 0, &s) == -EINVAL, "SET_IRQS bool 2 refused");

	/* REGION_WRITE: offset 0x8ff8, region 0, 8 bytes */
	memset(b, 0, 24);
	vfu_put64(b, 0x8ff8);
	b[12] = 8;
	CHECK(!vfu_region_rw_decode(b, 24, true, &r) && r.count == 8 &&
	      r.data == b + 16, "REGION_WRITE");
	CHECK(vfu_region_rw_decode(b, 23, true, &r) == -EINVAL,
	      "REGION_WRITE short data refused");
	CHECK(!vfu_region_rw_decode(b, 16, false, &r), "REGION_READ");
	CHECK(vfu_region_rw_decode(b, 24, false, &r) == -EINVAL,
	      "REGION_READ with data refused");
	memset(b, 0xff, 8);
	CHECK(vfu_region_rw_decode(b, 16, false, &r) == -EINVAL,
	      "REGION_READ offset wrap refused");
}

/* ---- GDMA messages ------------------------------------------------------ */

static void req_hdr(uint8_t *b, uint32_t type, uint32_t req_size,
		    uint32_t resp_size, uint32_t dev)
{
	memset(b, 0, GDMA_REQ_HDR_SIZE);
	gdma_put_le32(b + 4, type);
	gdma_put_le16(b + 8, 1);
	gdma_put_le32(b + 12, req_size);
	gdma_put_le32(b + 20, type);
	gdma_put_le16(b + 24, 1);
	gdma_put_le32(b + 28, resp_size);
	gdma_put_le32(b + 32, dev);
}

static void test_gdma_msgs(void)
{
	/* mana_gd_init_req_hdr(VERIFY_VF_DRIVER_VERSION, 616, 72), msg id 3 */
	static const uint8_t v[40] = {
		0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 3, 0, 0x68, 0x02, 0, 0,
		0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0x48, 0, 0, 0,
		0, 0, 0, 0, 0x78, 0x56, 0x34, 0x12,
	};
	static const uint8_t want_resp[32] = {
		0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 3, 0, 0x48, 0, 0, 0,
		0, 0, 0, 0, 0x78, 0x56, 0x34, 0x12, 0xff, 0xff, 0xff, 0xff,
		0, 0, 0, 0,
	};
	uint8_t b[128], out[32];
	struct gdma_req_hdr h;
	struct gdma_create_queue c;
	struct gdma_create_dma_region r;

	memset(b, 0, sizeof(b));
	memcpy(b, v, 40);
	CHECK(gdma_req_hdr_decode(b, 40, &h) == -EINVAL,
	      "request shorter than its msg_size refused");
	gdma_put_le32(b + 12, 40);
	CHECK(!gdma_req_hdr_decode(b, 40, &h) && h.msg_type == 1 &&
	      h.hwc_msg_id == 3 && h.resp_size == 72 && h.activity_id == 0x12345678,
	      "request header fields");
	memcpy(b, v, 40);
	gdma_put_le32(b + 12, 40);
	b[0] = 1;
	CHECK(gdma_req_hdr_decode(b, 40, &h) == -EINVAL, "hdr_type 1 refused");
	b[0] = 0;
	b[20] = 2;
	CHECK(gdma_req_hdr_decode(b, 40, &h) == -EINVAL,
	      "response type != request type refused");
	b[20] = 1;
	gdma_put_le32(b + 28, 31);
	CHECK(gdma_req_hdr_decode(b, 40, &h) == -EINVAL,
	      "response smaller than its header refused");
	gdma_put_le32(b + 28, 72);
	CHECK(!gdma_req_hdr_decode(b, 40, &h), "again");
	gdma_resp_hdr_encode(&h, 72, GDMA_STATUS_CMD_UNSUPPORTED, out);
	CHECK(!memcmp(out, want_resp, 32), "response header bytes");

	/* CREATE_QUEUE of an EQ: region 9, 4096 bytes, vector 1 */
	req_hdr(b, GDMA_CREATE_QUEUE, 96, 36, GDMA_DEVICE_MANA);
	memset(b + 40, 0, 56);
	gdma_put_le32(b + 40, GDMA_EQ);
	gdma_put_le64(b + 56, 9);
	gdma_put_le32(b + 68, 4096);
	gdma_put_le32(b + 76, 1);
	CHECK(!gdma_create_queue_decode(b, 96, &c) && c.type == GDMA_EQ &&
	      c.region == 9 && c.queue_size == 4096 && c.msix == 1, "CREATE_QUEUE");
	CHECK(gdma_create_queue_decode(b, 95, &c) == -EINVAL,
	      "CREATE_QUEUE short refused");
	gdma_put_le32(b + 40, 5);
	CHECK(gdma_create_queue_decode(b, 96, &c) == -EINVAL,
	      "CREATE_QUEUE type 5 refused");

	/* CREATE_DMA_REGION: 8 KiB, 2 pages, both listed */
	req_hdr(b, GDMA_CREATE_DMA_REGION, 80, 40, GDMA_DEVICE_MANA);
	gdma_put_le64(b + 40, 8192);
	gdma_put_le32(b + 48, 0);
	gdma_put_le32(b + 52, 0);
	gdma_put_le32(b + 56, 2);
	gdma_put_le32(b + 60, 2);
	gdma_put_le64(b + 64, 0x1000);
	gdma_put_le64(b + 72, 0x3000);
	CHECK(!gdma_create_dma_region_decode(b, 80, &r) && r.page_count == 2 &&
	      r.list_len == 2 && gdma_get_le64(r.pages + 8) == 0x3000,
	      "CREATE_DMA_REGION");
	CHECK(gdma_create_dma_region_decode(b, 72, &r) == -EINVAL,
	      "CREATE_DMA_REGION list longer than the message refused");
	gdma_put_le32(b + 60, 3);
	CHECK(gdma_create_dma_region_decode(b, 80, &r) == -EINVAL,
	      "CREATE_DMA_REGION list > count refused");
}

/* ---- the function, driven like the 6.12 driver -------------------------- */

#define RAM_BASE	0x100000ULL
#define RAM_SIZE	(1U << 20)
#define EQ_GPA		(RAM_BASE + 0x00000)
#define CQ_GPA		(RAM_BASE + 0x01000)
#define RQ_GPA		(RAM_BASE + 0x02000)
#define SQ_GPA		(RAM_BASE + 0x03000)
#define REQ_GPA		(RAM_BASE + 0x10000)
#define RESP_GPA	(RAM_BASE + 0x20000)

static uint8_t *ram;
static unsigned int irqs[MANA_FN_MSIX];
static uint32_t rq_id, sq_id;	/* as the INIT_DATA EQEs named them */

static void *t_dma(void *ctx, uint64_t gpa, size_t len)
{
	(void)ctx;
	if (gpa < RAM_BASE || gpa + len > RAM_BASE + RAM_SIZE || gpa + len < gpa)
		return NULL;
	return ram + (gpa - RAM_BASE);
}

static void t_irq(void *ctx, uint32_t v)
{
	(void)ctx;
	if (v < MANA_FN_MSIX)
		irqs[v]++;
}

static uint8_t *g(uint64_t gpa) { return ram + (gpa - RAM_BASE); }

static void w32(struct mana_fn *fn, uint64_t off, uint32_t v)
{
	uint8_t b[4];

	gdma_put_le32(b, v);
	CHECK(!mana_fn_bar_write(fn, 0, off, b, 4), "BAR0 write %#llx",
	      (unsigned long long)off);
}

static void w64(struct mana_fn *fn, uint64_t off, uint64_t v)
{
	uint8_t b[8];

	gdma_put_le64(b, v);
	CHECK(!mana_fn_bar_write(fn, 0, off, b, 8), "BAR0 write %#llx",
	      (unsigned long long)off);
}

static uint64_t r64(struct mana_fn *fn, uint64_t off)
{
	uint8_t b[8];

	CHECK(!mana_fn_bar_read(fn, 0, off, b, 8), "BAR0 read %#llx",
	      (unsigned long long)off);
	return gdma_get_le64(b);
}

/* The SMC message of mana_smc_setup_hwc(): four 48-bit PFNs, vector 0. */
static void smc_establish(struct mana_fn *fn, uint64_t shm)
{
	uint64_t pfn[4] = { EQ_GPA >> 12, CQ_GPA >> 12, RQ_GPA >> 12, SQ_GPA >> 12 };
	uint8_t m[32] = { 0 };
	int i, j;

	for (i = 0; i < 4; i++)
		for (j = 0; j < 6; j++)
			m[6 * i + j] = (uint8_t)(pfn[i] >> (8 * j));
	gdma_put_le32(m + 28, 1);	/* ESTABLISH_HWC, version 0, request */
	for (i = 0; i < 8; i++)
		w32(fn, shm + 4 * i, gdma_get_le32(m + 4 * i));
}

/* Post a request in the HWC SQ at @sq_off, a response WQE in the RQ. */
static void hwc_send(struct mana_fn *fn, uint64_t db, uint32_t sq_off,
		     uint32_t rq_off, uint64_t req_gpa, uint32_t req_len)
{
	struct gdma_wqe_header sh = { .num_sge = 1, .oob_size = GDMA_OOB_LARGE };
	struct gdma_wqe_header rh = { .num_sge = 1, .oob_size = GDMA_OOB_SMALL };
	struct gdma_sge rs = { RESP_GPA, 0x11, 4096 }, ss = { req_gpa, 0x11, req_len };
	/* the rings are 4 KiB; the doorbells carry free-running offsets */
	uint8_t *rq = g(RQ_GPA) + rq_off % 4096, *sq = g(SQ_GPA) + sq_off % 4096;

	memset(rq, 0, 32);
	gdma_wqe_header_encode(&rh, GDMA_RQ, rq);
	gdma_sge_encode(&rs, rq + 16);
	w64(fn, db + GDMA_DB_OFF_RQ, rq_id | (uint64_t)(rq_off + 32) << 32);
	memset(sq, 0, 64);
	gdma_wqe_header_encode(&sh, GDMA_SQ, sq);
	gdma_sge_encode(&ss, sq + 32);
	w64(fn, db + GDMA_DB_OFF_SQ, sq_id | (uint64_t)(sq_off + 64) << 32);
}

static void test_function(void)
{
	struct mana_fn_ops ops = { t_dma, t_irq, NULL, NULL, false };
	static const uint8_t mac[6] = { 0, 0x0d, 0x3a, 1, 2, 3 };
	struct mana_fn_stats st;
	struct mana_fn *fn;
	uint8_t cfg[64], *e, *c;
	uint64_t db, shm;
	uint32_t i;

	ram = calloc(1, RAM_SIZE);
	fn = mana_fn_new(&ops, mac);
	CHECK(ram && fn, "function created");
	if (!ram || !fn)
		return;

	CHECK(!mana_fn_cfg_read(fn, 0, cfg, 64), "config read");
	CHECK(gdma_get_le16(cfg) == 0x1414 && gdma_get_le16(cfg + 2) == 0x00ba &&
	      cfg[0x0b] == 0x02 && cfg[0x34] == 0x40, "PCI 1414:00BA, network, caps");
	CHECK(mana_fn_cfg_read(fn, 250, cfg, 8) == -EINVAL,
	      "config read past 256 refused");
	CHECK(mana_fn_bar_read(fn, 0, MANA_FN_BAR0_SIZE - 4, cfg, 8) == -EINVAL,
	      "BAR0 read past its end refused");
	CHECK(mana_fn_bar_read(fn, 2, 0, cfg, 4) == -EINVAL, "BAR2 absent");

	db = r64(fn, 0x08);
	shm = r64(fn, 0x18);
	CHECK(db && shm && db < MANA_FN_BAR0_SIZE && shm < MANA_FN_BAR0_SIZE,
	      "doorbell and SHM offsets inside BAR0");
	smc_establish(fn, shm);
	CHECK(!mana_fn_bar_read(fn, 0, shm + 28, cfg, 4), "SMC read");
	CHECK(gdma_get_le32(cfg) == (1 | 1U << 7), "SMC: ESTABLISH response, "
	      "status 0, VF owns the aperture again (%#x)", gdma_get_le32(cfg));

	/* EQ_ID_DB, 9 INIT_DATA, INIT_DONE; first lap's owner bits are 1 */
	e = g(EQ_GPA);
	CHECK((gdma_get_le32(e + 12) & 0xff) == GDMA_EQE_HWC_INIT_EQ_ID_DB,
	      "first EQE: EQ id and doorbell");
	CHECK((gdma_get_le32(e + 10 * 16 + 12) & 0xff) == GDMA_EQE_HWC_INIT_DONE,
	      "eleventh EQE: INIT_DONE");
	for (i = 0; i < 11; i++)
		CHECK(gdma_get_le32(e + 16 * i + 12) >> 29 == 1, "EQE %u owner 1", i);
	CHECK(gdma_get_le32(e + 11 * 16 + 12) == 0, "no twelfth EQE");
	CHECK(gdma_get_le32(e + 16 + 0) == (1U << 24 | 0), "INIT_DATA CQID 0");
	CHECK(gdma_get_le32(e + 32) >> 24 == 2 && gdma_get_le32(e + 48) >> 24 == 3,
	      "INIT_DATA RQID, SQID");
	rq_id = gdma_get_le32(e + 32) & 0xffffff;
	sq_id = gdma_get_le32(e + 48) & 0xffffff;
	CHECK(irqs[0] == 11, "one interrupt per EQE on vector 0 (%u)", irqs[0]);

	/* re-arming the EQ after 5 of 11 entries raises the vector again */
	w64(fn, db + GDMA_DB_OFF_EQ, 0 | (uint64_t)(256 + 5) << 32 | 1ULL << 63);
	CHECK(irqs[0] == 12, "re-arm with EQEs pending: interrupt");
	w64(fn, db + GDMA_DB_OFF_EQ, 0 | (uint64_t)(256 + 11) << 32 | 1ULL << 63);
	CHECK(irqs[0] == 12, "re-arm with none pending: no interrupt");

	/* VERIFY_VF_DRIVER_VERSION: 616-byte request, 72-byte response */
	req_hdr(g(REQ_GPA), GDMA_VERIFY_VF_DRIVER_VERSION, 616, 72, GDMA_DEVICE_HWC);
	hwc_send(fn, db, 0, 0, REQ_GPA, 616);
	CHECK(gdma_get_le32(g(RESP_GPA) + 4) == GDMA_VERIFY_VF_DRIVER_VERSION &&
	      gdma_get_le32(g(RESP_GPA) + 12) == 72 &&
	      gdma_get_le32(g(RESP_GPA) + 24) == 0 &&
	      gdma_get_le64(g(RESP_GPA) + 32) == 1, "VERIFY answered: protocol 1");
	c = g(CQ_GPA);
	CHECK((gdma_get_le32(c + 60) & 0xffffff) == 0 &&
	      gdma_get_le32(c + 60) >> 29 == 1 && !(gdma_get_le32(c + 60) >> 24 & 1),
	      "RX CQE: RQ 0, owner 1, not SQ");
	CHECK(gdma_get_le32(c + 24) == 72, "CQE carries the response length");
	CHECK((gdma_get_le32(e + 11 * 16 + 12) & 0xff) == GDMA_EQE_COMPLETION &&
	      gdma_get_le32(e + 11 * 16) == 0, "COMPLETION EQE for CQ 0");

	/* an unknown request: CMD_UNSUPPORTED, counted, channel still alive */
	memset(g(RESP_GPA), 0, 64);
	req_hdr(g(REQ_GPA), 0x99, 48, 64, GDMA_DEVICE_HWC);
	hwc_send(fn, db, 64, 32, REQ_GPA, 48);
	CHECK(gdma_get_le32(g(RESP_GPA) + 24) == GDMA_STATUS_CMD_UNSUPPORTED,
	      "unknown request: CMD_UNSUPPORTED");
	mana_fn_get_stats(fn, &st);
	CHECK(st.requests == 2 && st.unsupported == 1 &&
	      st.last_unsupported == 0x99, "counted");

	/* a request buffer outside guest memory: refused, nothing written */
	memset(g(RESP_GPA), 0, 64);
	hwc_send(fn, db, 128, 64, RAM_BASE + RAM_SIZE - 16, 48);
	mana_fn_get_stats(fn, &st);
	CHECK(st.dma_faults == 1 && st.requests == 2 &&
	      gdma_get_le32(g(RESP_GPA) + 4) == 0, "DMA outside shared memory refused");

	/* a MANA request before REGISTER_DEVICE is refused */
	req_hdr(g(REQ_GPA), MANA_QUERY_DEV_CONFIG, 96, 80, GDMA_DEVICE_MANA);
	mana_fn_reset(fn);
	smc_establish(fn, shm);
	memset(g(RESP_GPA), 0, 64);
	hwc_send(fn, db, 0, 0, REQ_GPA, 96);
	CHECK(gdma_get_le32(g(RESP_GPA) + 24) == GDMA_STATUS_BAD_ARG,
	      "MANA request of an unregistered device refused");

	mana_fn_free(fn);
	free(ram);
}

/* ---- the MANA half: requests, WQ objects, RX, TX, fence ----------------- */

static uint32_t hwc_sq_off, hwc_rq_off;	/* the driver's ring positions */
static uint64_t hwc_db;
static uint8_t last_frame[64];
static uint32_t last_frame_len;

static void t_frame(void *ctx, const uint8_t *f, uint32_t len)
{
	(void)ctx;
	last_frame_len = len;
	memcpy(last_frame, f, len < 64 ? len : 64);
}

/* One HWC round trip; the response is at RESP_GPA; returns its status. */
static uint32_t hwc_call(struct mana_fn *fn, uint32_t len)
{
	memset(g(RESP_GPA), 0xee, 64);
	hwc_send(fn, hwc_db, hwc_sq_off, hwc_rq_off, REQ_GPA, len);
	hwc_sq_off += 64;
	hwc_rq_off += 32;
	return gdma_get_le32(g(RESP_GPA) + 24);
}

static uint8_t *mreq(uint32_t type, uint32_t len, uint32_t resp)
{
	uint8_t *b = g(REQ_GPA);

	memset(b, 0, len);
	req_hdr(b, type, len, resp, GDMA_DEVICE_MANA);
	return b + GDMA_REQ_HDR_SIZE;
}

/* Arm CQ @id with the driver's @head (entries from one lap in). */
static void cq_arm(struct mana_fn *fn, uint64_t db, uint32_t id, uint32_t head)
{
	struct gdma_doorbell d = { .kind = GDMA_DB_CQ, .id = id, .tail = head,
				   .arm = true };
	uint64_t v = 0;

	CHECK(!gdma_doorbell_encode(&d, &v), "CQ doorbell encodes");
	w64(fn, db + GDMA_DB_OFF_CQ, v);
}

/* CREATE_DMA_REGION of one page at @gpa: the handle, 0 on failure. */
static uint64_t region(struct mana_fn *fn, uint64_t gpa)
{
	uint8_t *q = mreq(GDMA_CREATE_DMA_REGION, GDMA_REQ_HDR_SIZE + 32, 40);

	gdma_put_le64(q, 4096);
	gdma_put_le32(q + 16, 1);
	gdma_put_le32(q + 20, 1);
	gdma_put_le64(q + 24, gpa);
	if (hwc_call(fn, GDMA_REQ_HDR_SIZE + 32))
		return 0;
	return gdma_get_le64(g(RESP_GPA) + 32);
}

#define M_EQ	(RAM_BASE + 0x30000)
#define M_SQ	(RAM_BASE + 0x40000)
#define M_SQCQ	(RAM_BASE + 0x41000)
#define M_RQ	(RAM_BASE + 0x42000)
#define M_RQCQ	(RAM_BASE + 0x43000)
#define M_RXBUF	(RAM_BASE + 0x50000)
#define M_TXBUF	(RAM_BASE + 0x60000)
#define M_MRBUF	(RAM_BASE + 0x70000)	/* two pages under a user MR */
#define MR_VA	0x7f0000000fe0ULL	/* where the MR starts for its user */

static void test_mana(void)
{
	struct mana_fn_ops ops = { t_dma, t_irq, t_frame, NULL, false };
	static const uint8_t mac[6] = { 0, 0x0d, 0x3a, 1, 2, 3 };
	struct gdma_wqe_header rh = { .num_sge = 1, .oob_size = GDMA_OOB_SMALL };
	struct gdma_wqe_header sh = { .num_sge = 1, .oob_size = GDMA_OOB_SMALL };
	struct gdma_sge rs = { M_RXBUF, 0x11, 2048 }, ts = { M_TXBUF, 0x11, 60 };
	uint8_t frame[60], *q, *c;
	uint64_t eqr, h1, h2, vport, sqobj, rqobj, mdb, pd, mr;
	uint32_t lkey;
	uint32_t eq_id, sq_id2, sqcq, rq_id2, rqcq, irq1, i;
	struct mana_fn_stats st;
	struct mana_fn *fn;

	ram = calloc(1, RAM_SIZE);
	fn = mana_fn_new(&ops, mac);
	CHECK(ram && fn, "function created");
	if (!ram || !fn)
		return;
	hwc_db = r64(fn, 0x08);
	smc_establish(fn, r64(fn, 0x18));
	rq_id = gdma_get_le32(g(EQ_GPA) + 32) & 0xffffff;
	sq_id = gdma_get_le32(g(EQ_GPA) + 48) & 0xffffff;

	mreq(GDMA_REGISTER_DEVICE, GDMA_REQ_HDR_SIZE, 44);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE) == 0, "REGISTER_DEVICE");
	mdb = hwc_db + 4096 * gdma_get_le32(g(RESP_GPA) + 40);
	CHECK(gdma_get_le32(g(RESP_GPA) + 36) == 0x11, "GPA key of the device");

	eqr = region(fn, M_EQ);
	CHECK(eqr, "EQ region");
	q = mreq(GDMA_CREATE_QUEUE, 96, 36);
	gdma_put_le32(q, GDMA_EQ);
	gdma_put_le64(q + 16, eqr);
	gdma_put_le32(q + 28, 4096);
	gdma_put_le32(q + 36, 1);		/* vector 1 */
	CHECK(hwc_call(fn, 96) == 0, "CREATE_QUEUE EQ");
	eq_id = gdma_get_le32(g(RESP_GPA) + 32);
	q = mreq(GDMA_CREATE_QUEUE, 96, 36);
	gdma_put_le32(q, GDMA_EQ);
	gdma_put_le64(q + 16, eqr);
	gdma_put_le32(q + 28, 4096);
	CHECK(hwc_call(fn, 96) == GDMA_STATUS_BAD_ARG,
	      "a region serves one queue only");

	q = mreq(MANA_QUERY_DEV_CONFIG, GDMA_REQ_HDR_SIZE + 48, 80);
	gdma_put_le16(g(REQ_GPA) + 24, 2);	/* response v2 */
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 48) == 0 &&
	      gdma_get_le16(g(RESP_GPA) + 64) == 1 &&
	      gdma_get_le16(g(RESP_GPA) + 72) == 1514,
	      "QUERY_DEV_CONFIG: one vPort, MTU 1514 in v2");
	q = mreq(MANA_QUERY_VPORT_CONFIG, GDMA_REQ_HDR_SIZE + 4, 64);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 4) == 0 &&
	      !memcmp(g(RESP_GPA) + 48, mac, 6) &&
	      gdma_get_le32(g(RESP_GPA) + 40) == 64, "QUERY_VPORT_CONFIG: MAC, 64");
	vport = gdma_get_le64(g(RESP_GPA) + 56);
	q = mreq(MANA_QUERY_VPORT_CONFIG, GDMA_REQ_HDR_SIZE + 4, 64);
	gdma_put_le32(q, 1);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 4) == GDMA_STATUS_BAD_ARG,
	      "vPort 1 does not exist");

	/* the vPort's TX: the devices' PD and doorbell page, nothing else */
	q = mreq(MANA_CONFIG_VPORT_TX, GDMA_REQ_HDR_SIZE + 16, 40);
	gdma_put_le64(q, vport);
	gdma_put_le32(q + 8, 1);
	gdma_put_le32(q + 12, 5);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 16) == GDMA_STATUS_BAD_ARG,
	      "CONFIG_VPORT_TX on an unallocated doorbell page refused");
	gdma_put_le32(q + 8, 7);
	gdma_put_le32(q + 12, 1);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 16) == GDMA_STATUS_BAD_ARG,
	      "CONFIG_VPORT_TX with an unknown PD refused");
	gdma_put_le32(q + 8, 1);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 16) == 0, "CONFIG_VPORT_TX");

	/* WQ objects: SQ + CQ, RQ + CQ, under the EQ */
	h1 = region(fn, M_SQ);
	h2 = region(fn, M_SQCQ);
	q = mreq(MANA_CREATE_WQ_OBJ, GDMA_REQ_HDR_SIZE + 48, 48);
	gdma_put_le64(q, vport);
	gdma_put_le32(q + 8, GDMA_SQ);
	gdma_put_le64(q + 16, h1);
	gdma_put_le64(q + 24, h2);
	gdma_put_le32(q + 32, 4096);
	gdma_put_le32(q + 36, 4096);
	gdma_put_le32(q + 44, eq_id);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 48) == 0, "CREATE_WQ_OBJ SQ");
	sq_id2 = gdma_get_le32(g(RESP_GPA) + 32);
	sqcq = gdma_get_le32(g(RESP_GPA) + 36);
	sqobj = gdma_get_le64(g(RESP_GPA) + 40);
	h1 = region(fn, M_RQ);
	h2 = region(fn, M_RQCQ);
	q = mreq(MANA_CREATE_WQ_OBJ, GDMA_REQ_HDR_SIZE + 48, 48);
	gdma_put_le64(q, vport);
	gdma_put_le32(q + 8, GDMA_RQ);
	gdma_put_le64(q + 16, h1);
	gdma_put_le64(q + 24, h2);
	gdma_put_le32(q + 32, 4096);
	gdma_put_le32(q + 36, 4096);
	gdma_put_le32(q + 44, eq_id);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 48) == 0, "CREATE_WQ_OBJ RQ");
	rq_id2 = gdma_get_le32(g(RESP_GPA) + 32);
	rqcq = gdma_get_le32(g(RESP_GPA) + 36);
	rqobj = gdma_get_le64(g(RESP_GPA) + 40);
	CHECK(sqcq != rqcq, "two CQs");

	/* RX before CONFIG_VPORT_RX: dropped */
	for (i = 0; i < sizeof(frame); i++)
		frame[i] = (uint8_t)(i * 7);
	CHECK(mana_fn_rx(fn, frame, 60) == -ENODEV, "RX off: dropped");
	q = mreq(MANA_CONFIG_VPORT_RX, GDMA_REQ_HDR_SIZE + 32, 32);
	gdma_put_le64(q, vport);
	gdma_put_le32(q + 12, 1);		/* rx_enable */
	q[20] = 1;				/* update_default_rxobj */
	gdma_put_le64(q + 24, sqobj);		/* an SQ is no RX object */
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 32) == GDMA_STATUS_BAD_ARG,
	      "CONFIG_VPORT_RX with an SQ refused");
	q = mreq(MANA_CONFIG_VPORT_RX, GDMA_REQ_HDR_SIZE + 32, 32);
	gdma_put_le64(q, vport);
	gdma_put_le32(q + 12, 1);
	q[20] = 1;
	gdma_put_le64(q + 24, rqobj);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 32) == 0, "CONFIG_VPORT_RX");
	CHECK(mana_fn_rx(fn, frame, 60) == -EAGAIN, "no RQ WQE: dropped");

	/* one RQ WQE, one frame: buffer, CQE_RX_OKAY, EQE on the EQ, vector 1 */
	gdma_wqe_header_encode(&rh, GDMA_RQ, g(M_RQ));
	gdma_sge_encode(&rs, g(M_RQ) + 16);
	w64(fn, mdb + GDMA_DB_OFF_RQ, rq_id2 | 32ULL << 32);
	/* the CQ armed with the driver's head: one lap (64 CQEs) in, none read */
	cq_arm(fn, mdb, rqcq, 64);
	irq1 = irqs[1];
	CHECK(mana_fn_rx(fn, frame, 60) == 0, "frame delivered");
	CHECK(!memcmp(g(M_RXBUF), frame, 60), "frame in the RX buffer");
	c = g(M_RQCQ);
	CHECK((gdma_get_le32(c) & 0x3f) == CQE_RX_OKAY &&
	      gdma_get_le16(c + 8) == 60 &&
	      (gdma_get_le32(c + 60) & 0xffffff) == rq_id2 &&
	      gdma_get_le32(c + 60) >> 29 == 1, "RX CQE: okay, 60 bytes, RQ, owner 1");
	CHECK((gdma_get_le32(g(M_EQ) + 12) & 0xff) == GDMA_EQE_COMPLETION &&
	      gdma_get_le32(g(M_EQ)) == rqcq && irqs[1] == irq1 + 1,
	      "EQE names the RQ's CQ, vector 1 raised");
	CHECK(mana_fn_rx(fn, frame, 60) == -EAGAIN, "WQE consumed");
	/* the event disarmed the CQ: the next completion raises none ... */
	gdma_wqe_header_encode(&rh, GDMA_RQ, g(M_RQ) + 32);
	gdma_sge_encode(&rs, g(M_RQ) + 48);
	w64(fn, mdb + GDMA_DB_OFF_RQ, rq_id2 | 64ULL << 32);
	CHECK(mana_fn_rx(fn, frame, 60) == 0 && irqs[1] == irq1 + 1 &&
	      (gdma_get_le32(g(M_EQ) + 16 + 12) & 0xff) == 0,
	      "unarmed CQ: CQE, no EQE");
	/* ... until re-armed with the first one read: the second is pending */
	cq_arm(fn, mdb, rqcq, 65);
	CHECK(irqs[1] == irq1 + 2 && gdma_get_le32(g(M_EQ) + 16) == rqcq,
	      "arming past a pending CQE raises its EQE at once");
	cq_arm(fn, mdb, rqcq, 66);
	CHECK(irqs[1] == irq1 + 2, "arming with nothing pending raises none");

	/* TX: one SQ WQE with a 60-byte frame -> frame out, CQE_TX_OKAY */
	memcpy(g(M_TXBUF), frame, 60);
	gdma_wqe_header_encode(&sh, GDMA_SQ, g(M_SQ));
	gdma_sge_encode(&ts, g(M_SQ) + 16);
	w64(fn, mdb + GDMA_DB_OFF_SQ, sq_id2 | 32ULL << 32);
	CHECK(last_frame_len == 60 && !memcmp(last_frame, frame, 60),
	      "the guest's frame left the device");
	last_frame_len = 0;
	w64(fn, mdb + 4096 + GDMA_DB_OFF_SQ, sq_id2 | 64ULL << 32);
	CHECK(last_frame_len == 0, "the SQ rung on another doorbell page: ignored");
	c = g(M_SQCQ);
	CHECK((gdma_get_le32(c) & 0x3f) == CQE_TX_OKAY &&
	      (gdma_get_le32(c + 60) >> 24 & 1), "TX CQE: okay, is_sq");
	ts.addr = RAM_BASE + RAM_SIZE - 8;	/* outside guest memory */
	gdma_wqe_header_encode(&sh, GDMA_SQ, g(M_SQ) + 32);
	gdma_sge_encode(&ts, g(M_SQ) + 48);
	last_frame_len = 0;
	w64(fn, mdb + GDMA_DB_OFF_SQ, sq_id2 | 64ULL << 32);
	CHECK(last_frame_len == 0 &&
	      (gdma_get_le32(c + 64) & 0x3f) == CQE_TX_INVALID_OOB,
	      "TX outside guest memory: error CQE, nothing sent");

	/*
	 * A user's frame: an MR over 64 bytes at page offset 0xfe0 (its
	 * region lists two pages, the second sent on with ADD_PAGES), an SGE
	 * with its lkey and virtual address: 60 bytes gathered across the
	 * page boundary.
	 */
	q = mreq(GDMA_CREATE_PD, GDMA_REQ_HDR_SIZE + 8, 48);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 8) == 0, "CREATE_PD");
	pd = gdma_get_le64(g(RESP_GPA) + 32);
	q = mreq(GDMA_CREATE_DMA_REGION, GDMA_REQ_HDR_SIZE + 32, 40);
	gdma_put_le64(q, 64);
	gdma_put_le32(q + 8, 0xfe0);
	gdma_put_le32(q + 16, 2);
	gdma_put_le32(q + 20, 1);
	gdma_put_le64(q + 24, M_MRBUF);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 32) == GDMA_STATUS_MORE_ENTRIES,
	      "CREATE_DMA_REGION with 1 of 2 pages: MORE_ENTRIES");
	h1 = gdma_get_le64(g(RESP_GPA) + 32);
	q = mreq(GDMA_DMA_REGION_ADD_PAGES, GDMA_REQ_HDR_SIZE + 24, 32);
	gdma_put_le64(q, h1);
	gdma_put_le32(q + 8, 1);
	gdma_put_le64(q + 16, M_MRBUF + 0x1000);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 24) == 0, "ADD_PAGES completes it");
	q = mreq(GDMA_CREATE_MR, GDMA_REQ_HDR_SIZE + 40, 48);
	gdma_put_le64(q, pd);
	gdma_put_le32(q + 8, 1);		/* GPA: not a user's */
	gdma_put_le64(q + 16, h1);
	gdma_put_le64(q + 24, MR_VA);
	gdma_put_le32(q + 32, 1);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 40) == GDMA_STATUS_BAD_ARG,
	      "CREATE_MR of a GPA MR refused");
	gdma_put_le32(q + 8, GDMA_MR_TYPE_GVA);
	gdma_put_le64(q, pd + 1);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 40) == GDMA_STATUS_BAD_ARG,
	      "CREATE_MR in an unknown PD refused");
	gdma_put_le64(q, pd);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 40) == 0, "CREATE_MR (GVA)");
	mr = gdma_get_le64(g(RESP_GPA) + 32);
	lkey = gdma_get_le32(g(RESP_GPA) + 40);
	CHECK(lkey != 0x11 && lkey == gdma_get_le32(g(RESP_GPA) + 44),
	      "lkey = rkey, not the GPA key");
	memcpy(g(M_MRBUF) + 0xfe0, frame, 32);
	memcpy(g(M_MRBUF) + 0x1000, frame + 32, 28);
	ts = (struct gdma_sge){ MR_VA + 4, lkey, 56 };
	gdma_wqe_header_encode(&sh, GDMA_SQ, g(M_SQ) + 64);
	gdma_sge_encode(&ts, g(M_SQ) + 80);
	last_frame_len = 0;
	w64(fn, mdb + GDMA_DB_OFF_SQ, sq_id2 | 96ULL << 32);
	CHECK(last_frame_len == 56 && !memcmp(last_frame, frame + 4, 56) &&
	      (gdma_get_le32(c + 128) & 0x3f) == CQE_TX_OKAY,
	      "a frame gathered through the MR, across its pages");
	ts = (struct gdma_sge){ MR_VA + 8, lkey, 60 };	/* 4 bytes past its end */
	gdma_wqe_header_encode(&sh, GDMA_SQ, g(M_SQ) + 96);
	gdma_sge_encode(&ts, g(M_SQ) + 112);
	last_frame_len = 0;
	w64(fn, mdb + GDMA_DB_OFF_SQ, sq_id2 | 128ULL << 32);
	CHECK(last_frame_len == 0 &&
	      (gdma_get_le32(c + 192) & 0x3f) == CQE_TX_INVALID_OOB,
	      "an SGE past its MR's end: error CQE");
	q = mreq(GDMA_DESTROY_MR, GDMA_REQ_HDR_SIZE + 8, 32);
	gdma_put_le64(q, mr);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 8) == 0, "DESTROY_MR");
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 8) == GDMA_STATUS_BAD_ARG,
	      "DESTROY_MR twice refused");
	ts = (struct gdma_sge){ MR_VA, lkey, 60 };
	gdma_wqe_header_encode(&sh, GDMA_SQ, g(M_SQ) + 128);
	gdma_sge_encode(&ts, g(M_SQ) + 144);
	w64(fn, mdb + GDMA_DB_OFF_SQ, sq_id2 | 160ULL << 32);
	CHECK(last_frame_len == 0 &&
	      (gdma_get_le32(c + 256) & 0x3f) == CQE_TX_INVALID_OOB,
	      "the lkey of a destroyed MR: error CQE");

	/* FENCE_RQ: CQE_RX_OBJECT_FENCE; an SQ cannot be fenced */
	q = mreq(MANA_FENCE_RQ, GDMA_REQ_HDR_SIZE + 8, 32);
	gdma_put_le64(q, rqobj);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 8) == 0 &&
	      (gdma_get_le32(g(M_RQCQ) + 128) & 0x3f) == CQE_RX_OBJECT_FENCE,
	      "FENCE_RQ: fence CQE");
	q = mreq(MANA_FENCE_RQ, GDMA_REQ_HDR_SIZE + 8, 32);
	gdma_put_le64(q, sqobj);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 8) == GDMA_STATUS_BAD_ARG,
	      "FENCE_RQ of an SQ refused");

	q = mreq(MANA_DESTROY_WQ_OBJ, GDMA_REQ_HDR_SIZE + 16, 32);
	gdma_put_le32(q, GDMA_RQ);
	gdma_put_le64(q + 8, rqobj);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 16) == 0, "DESTROY_WQ_OBJ");
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 16) == GDMA_STATUS_BAD_ARG,
	      "destroyed twice refused");
	CHECK(mana_fn_rx(fn, frame, 60) == -ENODEV, "RX object gone: dropped");
	mana_fn_get_stats(fn, &st);
	CHECK(st.rx_frames == 2 && st.rx_drops == 4 && st.tx_frames == 2,
	      "counted: rx 2, drops 4, tx 2");
	mana_fn_free(fn);
	free(ram);
}

/* ---- the RDMA adapter, driven like 6.12's mana_ib ----------------------- */

static uint8_t *ibreq(uint32_t type, uint32_t len, uint32_t resp)
{
	uint8_t *b = g(REQ_GPA);

	memset(b, 0, len);
	req_hdr(b, type, len, resp, GDMA_DEVICE_MANA_IB);
	return b + GDMA_REQ_HDR_SIZE;
}

static void test_rnic_msgs(void)
{
	/* CONFIG_IP_ADDR add, IPv4, GID ::ffff:10.77.0.2 written reversed */
	static const uint8_t ip[32] = {
		0x01, 0, 0, 0, 0, 0, 0, 0xad, 1, 0, 0, 0, 1, 0, 0, 0,
		0x02, 0x00, 0x4d, 0x0a, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	};
	static const uint8_t want_gid[16] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, 2,
	};
	/* CONFIG_MAC_ADDR remove 00:0d:3a:12:34:56 (reversed) */
	static const uint8_t mac[24] = {
		0x01, 0, 0, 0, 0, 0, 0, 0xad, 2, 0, 0, 0,
		0x56, 0x34, 0x12, 0x3a, 0x0d, 0x00, 0, 0, 0, 0, 0, 0,
	};
	static const uint8_t want_mac[6] = { 0, 0x0d, 0x3a, 0x12, 0x34, 0x56 };
	struct mana_ib_adapter_caps c = { .max_sq_id = 1, .max_inline_data_size = 18 };
	struct mana_ib_config_addr a;
	struct mana_ib_create_adapter ca;
	struct gdma_resource_range rr;
	uint8_t b[128];

	req_hdr(b, MANA_IB_CONFIG_IP_ADDR, 72, 32, GDMA_DEVICE_MANA_IB);
	memcpy(b + 40, ip, 32);
	CHECK(!mana_ib_config_ip_decode(b, 72, &a) && a.adapter == 0xad00000000000001ULL &&
	      a.op == MANA_IB_ADDR_OP_ADD && a.sgid_type == MANA_IB_SGID_IPV4 &&
	      !memcmp(a.addr, want_gid, 16), "CONFIG_IP_ADDR: GID in network order");
	CHECK(mana_ib_config_ip_decode(b, 71, &a) == -EINVAL,
	      "CONFIG_IP_ADDR short refused");
	b[48] = 3;
	CHECK(mana_ib_config_ip_decode(b, 72, &a) == -EINVAL,
	      "CONFIG_IP_ADDR op 3 refused");
	b[48] = 1;
	b[52] = 0;
	CHECK(mana_ib_config_ip_decode(b, 72, &a) == -EINVAL,
	      "CONFIG_IP_ADDR sgid type 0 refused");

	req_hdr(b, MANA_IB_CONFIG_MAC_ADDR, 64, 32, GDMA_DEVICE_MANA_IB);
	memcpy(b + 40, mac, 24);
	CHECK(!mana_ib_config_mac_decode(b, 64, &a) && a.op == MANA_IB_ADDR_OP_REMOVE &&
	      !memcmp(a.addr, want_mac, 6), "CONFIG_MAC_ADDR: MAC in network order");
	CHECK(mana_ib_config_mac_decode(b, 63, &a) == -EINVAL,
	      "CONFIG_MAC_ADDR short refused");
	b[48] = 0;
	CHECK(mana_ib_config_mac_decode(b, 64, &a) == -EINVAL,
	      "CONFIG_MAC_ADDR op 0 refused");

	/* CREATE_ADAPTER: notify EQ 3, feature flags 0 */
	req_hdr(b, MANA_IB_CREATE_ADAPTER, 56, 40, GDMA_DEVICE_MANA_IB);
	memset(b + 40, 0, 16);
	b[40] = 3;
	b[48] = 0x80;
	CHECK(!mana_ib_create_adapter_decode(b, 56, &ca) && ca.notify_eq_id == 3 &&
	      ca.feature_flags == 0x80, "CREATE_ADAPTER fields");
	CHECK(mana_ib_create_adapter_decode(b, 55, &ca) == -EINVAL,
	      "CREATE_ADAPTER short refused");

	/* ALLOCATE_RESOURCE_RANGE: doorbell pages (27), 1, aligned 1, from 0 */
	req_hdr(b, GDMA_ALLOCATE_RESOURCE_RANGE, 56, 36, GDMA_DEVICE_HWC);
	memset(b + 40, 0, 16);
	b[40] = 27;
	b[44] = 1;
	b[48] = 1;
	CHECK(!gdma_alloc_resource_range_decode(b, 56, &rr) && rr.type == 27 &&
	      rr.count == 1 && rr.alignment == 1 && rr.first == 0,
	      "ALLOCATE_RESOURCE_RANGE fields");
	CHECK(gdma_alloc_resource_range_decode(b, 55, &rr) == -EINVAL,
	      "ALLOCATE_RESOURCE_RANGE short refused");
	CHECK(gdma_destroy_resource_range_decode(b, 51, &rr) == -EINVAL,
	      "DESTROY_RESOURCE_RANGE short refused");

	/* the caps reply: 18 u32 in the struct's order */
	memset(b, 0xee, sizeof(b));
	mana_ib_adapter_caps_encode(&c, b);
	CHECK(gdma_get_le32(b) == 1 && gdma_get_le32(b + 68) == 18 &&
	      gdma_get_le32(b + 4) == 0 && b[72] == 0xee, "caps: 72 bytes, in order");
}

/* An RC QP's life as 6.12's mana_ib and our provider drive it. */
#define RC_MR_GPA	(RAM_BASE + 0x80000)	/* one page under an RC QP's MR */
#define RC_MR_VA	0x7f0000100000ULL
#define RC_SQ_GPA	(RAM_BASE + 0x51000)	/* rc_objects' regions */
#define RC_RQ_GPA	(RAM_BASE + 0x55000)
#define RC_CQ_GPA	(RAM_BASE + 0x50000)

/* A user MR of PD @pd over one page at @gpa; its key (lkey = rkey). */
static uint32_t rc_mr(struct mana_fn *fn, uint64_t pd, uint64_t gpa,
		      uint64_t va, uint32_t access)
{
	uint64_t h = region(fn, gpa);
	uint8_t *q = mreq(GDMA_CREATE_MR, GDMA_REQ_HDR_SIZE + 40, 48);

	gdma_put_le64(q, pd);
	gdma_put_le32(q + 8, GDMA_MR_TYPE_GVA);
	gdma_put_le64(q + 16, h);
	gdma_put_le64(q + 24, va);
	gdma_put_le32(q + 32, access);
	CHECK(h && hwc_call(fn, GDMA_REQ_HDR_SIZE + 40) == 0, "RC MR registered");
	return gdma_get_le32(g(RESP_GPA) + 40);
}

static void rc_db(struct mana_fn *fn, uint32_t page, enum gdma_db_kind kind,
		  uint32_t id, uint32_t tail_or_psn)
{
	struct gdma_doorbell d = { .kind = kind, .id = id, .tail = tail_or_psn };
	uint64_t v = 0;
	uint32_t off = kind == GDMA_DB_SQ ? GDMA_DB_OFF_SQ :
		       kind == GDMA_DB_RQ ? GDMA_DB_OFF_RQ : GDMA_DB_OFF_RQ_CLIENT;

	if (kind == GDMA_DB_RQ_CLIENT)
		CHECK(!gdma_arm_db_encode(id, tail_or_psn, &v), "arm encodes");
	else
		CHECK(!gdma_doorbell_encode(&d, &v), "doorbell encodes");
	w64(fn, r64(fn, 0x08) + (uint64_t)page * GDMA_DB_PAGE_SIZE + off, v);
}

/* An RC send WQE as our provider posts it, at byte @pos of the SQ. */
static uint32_t rc_send_wqe(uint32_t pos, uint8_t type, uint32_t psn,
			    uint32_t key, uint64_t va, uint32_t len,
			    uint64_t raddr, uint32_t rkey)
{
	struct mana_rdma_send_oob o = { .wqe_type = type, .psn = psn,
		.remote_addr = raddr, .rkey = rkey };
	struct gdma_wqe w = { 0 };
	uint32_t bu = 0;

	CHECK(!mana_rc_send_wqe_header(type, 1, 1024, &w.hdr) &&
	      !mana_rdma_send_oob_encode(&o, w.oob), "send WQE built");
	w.sge[0] = (struct gdma_sge){ va, key, len };
	CHECK(!gdma_wqe_post(g(RC_SQ_GPA), 4096, pos / 32, GDMA_SQ, &w, &bu),
	      "send WQE posted");
	return pos + bu * 32;
}

/*
 * The RC transport through the function: a QP connected to itself (the
 * path names our own MAC, so its packets loop inside the device), as the
 * driver's SET_QP_STATE requests carry it (MACs and GIDs byte-reversed);
 * a SEND into a receive WQE and a WRITE through the MR, the receive CQE
 * and the arm's ARMED_CMPL in the CQ; then a WRITE to an MR whose page
 * lies outside the guest's shared memory: refused (no byte anywhere), a
 * DMA fault counted, the QP's fatal event on the adapter's EQ.
 */
static void rc_traffic(struct mana_fn *fn, uint64_t adapter, uint64_t pd,
		       uint64_t qp, const uint32_t ids[5], uint32_t db)
{
	static const uint8_t mac[6] = { 0, 0x0d, 0x3a, 1, 2, 3 };
	static const uint8_t gid[16] = { [10] = 0xff, [11] = 0xff, 10, 77, 0, 2 };
	struct gdma_wqe rw = { 0 };
	struct mana_rdma_cqe c;
	struct mana_fn_stats st;
	uint32_t key, bad, pos, rpos = 0, i, bu = 0, faults;
	uint8_t *q, *mr = g(RC_MR_GPA);
	unsigned int state;
	bool fatal = false;

	key = rc_mr(fn, pd, RC_MR_GPA, RC_MR_VA, GDMA_ACCESS_LOCAL_READ |
		    GDMA_ACCESS_LOCAL_WRITE | GDMA_ACCESS_REMOTE_WRITE);
	/* the MR's page is shared; this one is past the guest's memory */
	bad = rc_mr(fn, pd, RAM_BASE + RAM_SIZE, RC_MR_VA + 0x10000,
		    GDMA_ACCESS_LOCAL_READ |
		    GDMA_ACCESS_LOCAL_WRITE | GDMA_ACCESS_REMOTE_WRITE);
	for (i = 0; i < 1000; i++)
		mr[i] = (uint8_t)(i * 5 + 1);
	for (state = 0; state <= 3; state++) {
		q = ibreq(MANA_IB_SET_QP_STATE, GDMA_REQ_HDR_SIZE + 120, 32);
		gdma_put_le64(q, adapter);
		gdma_put_le64(q + 8, qp);
		gdma_put_le32(q + 24, state);
		/* each transition with the attributes it requires (IBA) */
		gdma_put_le64(q + 16, QPM_STATE);
		if (state == 1)
			gdma_put_le64(q + 16, QPM_STATE | QPM_PKEY_INDEX |
				      QPM_ACCESS_FLAGS | QPM_PORT);
		if (state == 2) {	/* RTR: the path, to ourselves */
			gdma_put_le64(q + 16, QPM_STATE | QPM_AV | QPM_PATH_MTU |
				      QPM_DEST_QPN | QPM_RQ_PSN |
				      QPM_MAX_DEST_RD_ATOMIC | QPM_MIN_RNR_TIMER);
			gdma_put_le32(q + 28, 3);		/* 1024 */
			gdma_put_le32(q + 32, 100);		/* rq_psn */
			gdma_put_le32(q + 40, ids[4]);		/* itself */
			gdma_put_le32(q + 44, 1);	/* max_dest_rd_atomic */
			gdma_put_le32(q + 56, 12);	/* min_rnr_timer */
			for (i = 0; i < 16; i++)
				q[64 + i] = q[80 + i] = gid[15 - i];
			for (i = 0; i < 6; i++)
				q[96 + i] = q[102 + i] = mac[5 - i];
			q[108] = q[109] = MANA_IB_SGID_IPV4;
			q[110] = 64;
			gdma_put_le16(q + 112, 0xc001);
			gdma_put_le16(q + 114, 4791);
		} else if (state == 3) {
			gdma_put_le64(q + 16, QPM_STATE | QPM_SQ_PSN | QPM_TIMEOUT |
				      QPM_RETRY_CNT | QPM_RNR_RETRY |
				      QPM_MAX_QP_RD_ATOMIC);
			gdma_put_le32(q + 36, 100);		/* sq_psn */
			gdma_put_le32(q + 48, 7);		/* retry_cnt */
			gdma_put_le32(q + 52, 7);		/* rnr_retry */
		}
		CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 120) == 0,
		      "SET_QP_STATE %u with its attributes", state);
	}
	/* a receive WQE for 1000 bytes at MR + 2048 */
	rw.hdr.num_sge = 1;
	rw.hdr.oob_size = GDMA_OOB_SMALL;
	rw.sge[0] = (struct gdma_sge){ RC_MR_VA + 2048, key, 1000 };
	CHECK(!gdma_wqe_post(g(RC_RQ_GPA), 4096, 0, GDMA_RQ, &rw, &bu),
	      "receive WQE posted");
	rpos = bu * 32;
	rc_db(fn, db, GDMA_DB_RQ, ids[4], rpos);
	pos = rc_send_wqe(0, MANA_WQE_RC_SEND, 100, key, RC_MR_VA, 1000, 0, 0);
	pos = rc_send_wqe(pos, MANA_WQE_WRITE, 101, key, RC_MR_VA, 500,
			  RC_MR_VA + 3500, key);
	rc_db(fn, db, GDMA_DB_SQ, ids[0], pos);
	CHECK(!memcmp(mr, mr + 2048, 1000) && !memcmp(mr, mr + 3500, 500),
	      "SEND and WRITE landed through the MR");
	CHECK(!mana_rdma_cqe_decode(g(RC_CQ_GPA), &c) &&
	      c.type == MANA_RDMA_CQE_RC_SEND && c.msg_len == 1000 &&
	      c.rx_wqe_offset == 0, "the receive CQE (type %u verr %#x)", c.type,
	      c.vendor_error);
	rc_db(fn, db, GDMA_DB_RQ_CLIENT, ids[3], 101);
	CHECK(!mana_rdma_cqe_decode(g(RC_CQ_GPA) + 64, &c) &&
	      c.type == MANA_RDMA_CQE_ARMED_CMPL && c.psn == 101,
	      "ARMED_CMPL at the WRITE's PSN (type %u psn %u)", c.type, c.psn);
	mana_fn_get_stats(fn, &st);
	CHECK(st.rc_local_packets == 4 && !st.rc_errors,
	      "two requests, two ACKs, looped inside (%llu)",
	      (unsigned long long)st.rc_local_packets);

	/* outside shared memory: refused before a byte moves */
	faults = st.dma_faults;
	pos = rc_send_wqe(pos, MANA_WQE_WRITE, 102, key, RC_MR_VA, 500,
			  RC_MR_VA + 0x10000, bad);
	rc_db(fn, db, GDMA_DB_SQ, ids[0], pos);
	mana_fn_get_stats(fn, &st);
	CHECK(st.dma_faults > faults && st.rc_errors == 1,
	      "a WRITE into unshared memory: a DMA fault, refused");
	for (i = 0; i < 4096 / 16; i++)
		if (g(M_EQ)[16 * i + 12] == GDMA_EQE_RNIC_QP_FATAL &&
		    gdma_get_le32(g(M_EQ) + 16 * i) == ids[4])
			fatal = true;
	CHECK(fatal, "the QP's fatal event on the adapter's EQ");
}

static void rc_objects(struct mana_fn *fn, uint64_t adapter, uint32_t eq_id,
		       uint32_t db)
{
	uint64_t pd, cqr, cq, qp, rg[5] = { 0 };
	uint32_t ids[5], k;
	uint8_t *q;

	q = mreq(GDMA_CREATE_PD, GDMA_REQ_HDR_SIZE + 8, 48);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 8) == 0, "CREATE_PD");
	pd = gdma_get_le64(g(RESP_GPA) + 32);
	cqr = region(fn, RAM_BASE + 0x50000);
	q = ibreq(MANA_IB_CREATE_CQ, GDMA_REQ_HDR_SIZE + 24, 48);
	gdma_put_le64(q, adapter);
	gdma_put_le64(q + 8, cqr);
	gdma_put_le32(q + 16, eq_id);
	gdma_put_le32(q + 20, 7);		/* no such doorbell page */
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 24) == GDMA_STATUS_BAD_ARG,
	      "CREATE_CQ on an unallocated doorbell page refused");
	gdma_put_le32(q + 20, db);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 24) == 0, "MANA_IB_CREATE_CQ");
	cq = gdma_get_le64(g(RESP_GPA) + 32);

	for (k = 0; k < 5; k++)
		if (k != 2)
			rg[k] = region(fn, RAM_BASE + 0x51000 + 0x1000 * k);
	q = ibreq(MANA_IB_CREATE_RC_QP, GDMA_REQ_HDR_SIZE + 120, 64);
	gdma_put_le64(q, adapter);
	gdma_put_le64(q + 8, pd);
	gdma_put_le64(q + 16, cq);
	gdma_put_le64(q + 24, cq);
	for (k = 0; k < 5; k++)
		gdma_put_le64(q + 32 + 8 * k, rg[k]);
	gdma_put_le32(q + 96, db);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 120) == GDMA_STATUS_BAD_ARG,
	      "CREATE_RC_QP without NO_FMR (and no FMR queue) refused");
	gdma_put_le64(q + 88, MANA_RC_FLAG_NO_FMR);
	gdma_put_le64(q + 16, cq + 1);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 120) == GDMA_STATUS_BAD_ARG,
	      "CREATE_RC_QP with no such CQ refused");
	gdma_put_le64(q + 16, cq);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 120) == 0, "MANA_IB_CREATE_RC_QP");
	qp = gdma_get_le64(g(RESP_GPA) + 32);
	for (k = 0; k < 5; k++)
		ids[k] = gdma_get_le32(g(RESP_GPA) + 40 + 4 * k);
	/* our provider's rule: groups of four, requester/responder pairs */
	CHECK(ids[0] > 1 && !(ids[0] & 3) && ids[1] == ids[0] + 1 &&
	      ids[4] > 1 && !(ids[4] & 3) && ids[3] == ids[4] + 1 &&
	      ids[2] == 0xFFFFFFFFU && ids[4] <= 0xFFFFFF,
	      "RC queue ids %#x %#x - %#x %#x", ids[0], ids[1], ids[3], ids[4]);

	q = ibreq(MANA_IB_DESTROY_CQ, GDMA_REQ_HDR_SIZE + 16, 32);
	gdma_put_le64(q, adapter);
	gdma_put_le64(q + 8, cq);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 16) == GDMA_STATUS_BAD_ARG,
	      "DESTROY_CQ under a QP refused");
	q = ibreq(MANA_IB_DESTROY_ADAPTER, GDMA_REQ_HDR_SIZE + 8, 32);
	gdma_put_le64(q, adapter);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 8) == GDMA_STATUS_BAD_ARG,
	      "DESTROY_ADAPTER with objects left refused");

	/*
	 * SET_QP_STATE: the QP state machine (lib/qp_modify.h) -- RESET to
	 * RTS and INIT without its port refused, RESET -> INIT -> RTR -> RTS
	 * with the attributes each needs taken; a state past ERR refused
	 */
	q = ibreq(MANA_IB_SET_QP_STATE, GDMA_REQ_HDR_SIZE + 120, 32);
	gdma_put_le64(q, adapter);
	gdma_put_le64(q + 8, qp);
	gdma_put_le64(q + 16, QPM_STATE);
	gdma_put_le32(q + 24, QPS_RTS);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 120) == GDMA_STATUS_BAD_ARG,
	      "SET_QP_STATE RESET -> RTS refused");
	gdma_put_le64(q + 16, QPM_STATE | QPM_PKEY_INDEX | QPM_ACCESS_FLAGS);
	gdma_put_le32(q + 24, QPS_INIT);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 120) == GDMA_STATUS_BAD_ARG,
	      "SET_QP_STATE INIT without the port refused");
	gdma_put_le64(q + 16, QPM_STATE | QPM_PKEY_INDEX | QPM_ACCESS_FLAGS |
				QPM_PORT);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 120) == 0, "SET_QP_STATE INIT");
	gdma_put_le64(q + 16, QPM_STATE | QPM_AV | QPM_PATH_MTU | QPM_DEST_QPN |
				QPM_RQ_PSN | QPM_MAX_DEST_RD_ATOMIC |
				QPM_MIN_RNR_TIMER);
	gdma_put_le32(q + 24, QPS_RTR);
	gdma_put_le32(q + 28, 3);		/* path_mtu 1024 */
	gdma_put_le32(q + 44, 200);		/* max_dest_rd_atomic */
	/* an address vector the transport takes: IPv4 both ways, to 4791 */
	q[108] = q[109] = MANA_IB_SGID_IPV4;
	gdma_put_le16(q + 114, 4791);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 120) == GDMA_STATUS_BAD_ARG,
	      "SET_QP_STATE RTR with rd_atomic 200 refused");
	gdma_put_le32(q + 44, 1);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 120) == 0, "SET_QP_STATE RTR");
	gdma_put_le64(q + 16, QPM_STATE | QPM_TIMEOUT | QPM_RETRY_CNT |
				QPM_RNR_RETRY | QPM_SQ_PSN |
				QPM_MAX_QP_RD_ATOMIC);
	gdma_put_le32(q + 24, QPS_RTS);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 120) == 0, "SET_QP_STATE RTS");
	gdma_put_le64(q + 16, QPM_STATE);
	gdma_put_le32(q + 24, 7);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 120) == GDMA_STATUS_BAD_ARG,
	      "SET_QP_STATE to state 7 refused");
	gdma_put_le32(q + 24, 3);
	gdma_put_le32(g(REQ_GPA) + 12, GDMA_REQ_HDR_SIZE + 119);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 119) == GDMA_STATUS_BAD_ARG,
	      "a short SET_QP_STATE refused");
	/* an address vector of two families, or not to UDP 4791 */
	q = ibreq(MANA_IB_SET_QP_STATE, GDMA_REQ_HDR_SIZE + 120, 32);
	gdma_put_le64(q, adapter);
	gdma_put_le64(q + 8, qp);
	gdma_put_le64(q + 16, 128);
	q[108] = MANA_IB_SGID_IPV4;
	q[109] = MANA_IB_SGID_IPV6;
	gdma_put_le16(q + 114, 4791);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 120) == GDMA_STATUS_BAD_ARG,
	      "an IPv4-to-IPv6 path refused");
	q[109] = MANA_IB_SGID_IPV4;
	gdma_put_le16(q + 114, 4792);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 120) == GDMA_STATUS_BAD_ARG,
	      "a path not to UDP 4791 refused");
	rc_traffic(fn, adapter, pd, qp, ids, db);

	q = ibreq(MANA_IB_DESTROY_RC_QP, GDMA_REQ_HDR_SIZE + 16, 32);
	gdma_put_le64(q, adapter);
	gdma_put_le64(q + 8, qp);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 16) == 0, "DESTROY_RC_QP");
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 16) == GDMA_STATUS_BAD_ARG,
	      "DESTROY_RC_QP twice refused");
	q = ibreq(MANA_IB_DESTROY_CQ, GDMA_REQ_HDR_SIZE + 16, 32);
	gdma_put_le64(q, adapter);
	gdma_put_le64(q + 8, cq);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 16) == 0, "DESTROY_CQ after its QP");
	q = ibreq(MANA_IB_DESTROY_ADAPTER, GDMA_REQ_HDR_SIZE + 8, 32);
	gdma_put_le64(q, adapter);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 8) == 0, "DESTROY_ADAPTER at last");
}

static void test_rnic(void)
{
	struct mana_fn_ops ops = { t_dma, t_irq, NULL, NULL, false };
	static const uint8_t mac[6] = { 0, 0x0d, 0x3a, 1, 2, 3 };
	uint64_t eqr, adapter;
	uint32_t eq_id, db1, db2;
	struct mana_fn_stats st;
	struct mana_fn *fn;
	uint8_t *q;

	ram = calloc(1, RAM_SIZE);
	fn = mana_fn_new(&ops, mac);
	CHECK(ram && fn, "function created");
	if (!ram || !fn)
		return;
	hwc_sq_off = hwc_rq_off = 0;
	hwc_db = r64(fn, 0x08);
	smc_establish(fn, r64(fn, 0x18));
	rq_id = gdma_get_le32(g(EQ_GPA) + 32) & 0xffffff;
	sq_id = gdma_get_le32(g(EQ_GPA) + 48) & 0xffffff;

	ibreq(MANA_IB_GET_ADAPTER_CAP, GDMA_REQ_HDR_SIZE, 104);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE) == GDMA_STATUS_BAD_ARG,
	      "adapter caps before REGISTER_DEVICE refused");
	ibreq(GDMA_REGISTER_DEVICE, GDMA_REQ_HDR_SIZE, 44);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE) == 0, "REGISTER_DEVICE of MANA_IB");
	mreq(MANA_IB_GET_ADAPTER_CAP, GDMA_REQ_HDR_SIZE, 104);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE) == GDMA_STATUS_BAD_ARG,
	      "adapter caps of the Ethernet device refused");
	ibreq(MANA_IB_GET_ADAPTER_CAP, GDMA_REQ_HDR_SIZE, 100);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE) == GDMA_STATUS_BAD_ARG,
	      "adapter caps into a short response refused");
	ibreq(MANA_IB_GET_ADAPTER_CAP, GDMA_REQ_HDR_SIZE, 104);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE) == 0, "GET_ADAPTER_CAP");
	/* what 6.12 turns into ibv_query_device: mana-emu's numbers */
	q = g(RESP_GPA) + GDMA_RESP_HDR_SIZE;
	CHECK(gdma_get_le32(q + 12) == 64 && gdma_get_le32(q + 16) == 64 &&
	      gdma_get_le32(q + 20) == 0xFFFFFF && gdma_get_le32(q + 24) == 0x6000,
	      "max_qp 64, max_cq 64, max_mr 2^24-1, max_pd 0x6000");
	CHECK(gdma_get_le32(q + 28) == 16 && gdma_get_le32(q + 32) == 16,
	      "16 reads in flight each way");
	CHECK(gdma_get_le32(q + 44) / 512 == 8192 && gdma_get_le32(q + 52) / 256 == 8192,
	      "max_qp_wr 8192");
	CHECK(gdma_get_le32(q + 60) == 30 && gdma_get_le32(q + 64) == 15,
	      "30 send, 15 receive SGEs");

	/* the fatal-error EQ mana_ib makes first */
	eqr = region(fn, M_EQ);
	q = ibreq(GDMA_CREATE_QUEUE, 96, 36);
	gdma_put_le32(q, GDMA_EQ);
	gdma_put_le64(q + 16, eqr);
	gdma_put_le32(q + 28, 4096);
	CHECK(hwc_call(fn, 96) == 0, "CREATE_QUEUE EQ");
	eq_id = gdma_get_le32(g(RESP_GPA) + 32);

	q = ibreq(MANA_IB_CONFIG_MAC_ADDR, GDMA_REQ_HDR_SIZE + 24, 32);
	gdma_put_le64(q, 0xAD00000000000001ULL);
	gdma_put_le32(q + 8, MANA_IB_ADDR_OP_ADD);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 24) == GDMA_STATUS_BAD_ARG,
	      "CONFIG_MAC_ADDR before CREATE_ADAPTER refused");
	q = ibreq(MANA_IB_CREATE_ADAPTER, GDMA_REQ_HDR_SIZE + 16, 40);
	gdma_put_le32(q, eq_id + 1);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 16) == GDMA_STATUS_BAD_ARG,
	      "CREATE_ADAPTER with no such EQ refused");
	q = ibreq(MANA_IB_CREATE_ADAPTER, GDMA_REQ_HDR_SIZE + 16, 40);
	gdma_put_le32(q, eq_id);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 16) == 0, "CREATE_ADAPTER");
	adapter = gdma_get_le64(g(RESP_GPA) + 32);
	CHECK(adapter != 0, "adapter handle");
	q = ibreq(MANA_IB_CREATE_ADAPTER, GDMA_REQ_HDR_SIZE + 16, 40);
	gdma_put_le32(q, eq_id);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 16) == GDMA_STATUS_BAD_ARG,
	      "a second adapter refused");

	/* MAC: add (reversed on the wire), again refused, wrong handle */
	q = ibreq(MANA_IB_CONFIG_MAC_ADDR, GDMA_REQ_HDR_SIZE + 24, 32);
	gdma_put_le64(q, adapter);
	gdma_put_le32(q + 8, MANA_IB_ADDR_OP_ADD);
	q[12] = 3; q[13] = 2; q[14] = 1; q[15] = 0x3a; q[16] = 0x0d; q[17] = 0;
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 24) == 0, "CONFIG_MAC_ADDR add");
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 24) == GDMA_STATUS_BAD_ARG,
	      "the same MAC twice refused");
	q = ibreq(MANA_IB_CONFIG_MAC_ADDR, GDMA_REQ_HDR_SIZE + 24, 32);
	gdma_put_le64(q, adapter + 1);
	gdma_put_le32(q + 8, MANA_IB_ADDR_OP_ADD);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 24) == GDMA_STATUS_BAD_ARG,
	      "another adapter handle refused");
	q = ibreq(MANA_IB_CONFIG_MAC_ADDR, GDMA_REQ_HDR_SIZE + 24, 32);
	gdma_put_le64(q, adapter);
	gdma_put_le32(q + 8, MANA_IB_ADDR_OP_ADD);
	q[17] = 1;	/* 01:... reversed: multicast */
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 24) == GDMA_STATUS_BAD_ARG,
	      "a multicast MAC refused");

	/* GIDs: add, remove, remove again refused; the 17th finds no room */
	q = ibreq(MANA_IB_CONFIG_IP_ADDR, GDMA_REQ_HDR_SIZE + 32, 32);
	gdma_put_le64(q, adapter);
	gdma_put_le32(q + 8, MANA_IB_ADDR_OP_ADD);
	gdma_put_le32(q + 12, MANA_IB_SGID_IPV4);
	q[16] = 2; q[18] = 77; q[19] = 10; q[20] = 0xff; q[21] = 0xff;
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 32) == 0, "CONFIG_IP_ADDR add");
	mana_fn_get_stats(fn, &st);
	CHECK(st.rnic_gids == 1 && st.rnic_macs == 1 && st.rnic_adapters == 1,
	      "one adapter, MAC and GID");
	gdma_put_le32(q + 8, MANA_IB_ADDR_OP_REMOVE);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 32) == 0, "CONFIG_IP_ADDR remove");
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 32) == GDMA_STATUS_BAD_ARG,
	      "removing an absent GID refused");
	gdma_put_le32(q + 8, MANA_IB_ADDR_OP_ADD);
	gdma_put_le32(q + 12, MANA_IB_SGID_IPV6);
	for (q[0 + 16] = 0; q[16] < 16; q[16]++)
		CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 32) == 0, "GID %u", q[16]);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 32) == GDMA_STATUS_NO_RESOURCE,
	      "a 17th GID finds no room");

	/* a user context's doorbell pages: never the HWC's or devices' */
	q = mreq(GDMA_ALLOCATE_RESOURCE_RANGE, GDMA_REQ_HDR_SIZE + 16, 36);
	gdma_put_le32(q, GDMA_RESOURCE_DOORBELL_PAGE);
	gdma_put_le32(q + 4, 1);
	gdma_put_le32(q + 8, 1);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 16) == 0, "doorbell page allocated");
	db1 = gdma_get_le32(g(RESP_GPA) + 32);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 16) == 0, "a second one");
	db2 = gdma_get_le32(g(RESP_GPA) + 32);
	CHECK(db1 >= 2 && db2 >= 2 && db1 != db2, "pages %u, %u: distinct, >= 2",
	      db1, db2);
	q = mreq(GDMA_DESTROY_RESOURCE_RANGE, GDMA_REQ_HDR_SIZE + 12, 32);
	gdma_put_le32(q, GDMA_RESOURCE_DOORBELL_PAGE);
	gdma_put_le32(q + 4, 1);
	gdma_put_le32(q + 8, db1);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 12) == 0, "doorbell page freed");
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 12) == GDMA_STATUS_BAD_ARG,
	      "freed twice refused");
	gdma_put_le32(q + 8, 1);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 12) == GDMA_STATUS_BAD_ARG,
	      "the devices' page cannot be freed");

	/* a region of 8 KiB pages (mana_ib's best page size): aligned only */
	q = mreq(GDMA_CREATE_DMA_REGION, GDMA_REQ_HDR_SIZE + 32, 40);
	gdma_put_le64(q, 8192);
	gdma_put_le32(q + 12, 1);		/* 4 KiB << 1 */
	gdma_put_le32(q + 16, 1);
	gdma_put_le32(q + 20, 1);
	gdma_put_le64(q + 24, RAM_BASE + 0x41000);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 32) == GDMA_STATUS_BAD_ARG,
	      "an 8 KiB page at a 4 KiB boundary refused");
	gdma_put_le64(q + 24, RAM_BASE + 0x42000);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 32) == 0, "8 KiB pages");
	gdma_put_le32(q + 12, GDMA_PAGE_TYPE_MAX + 1);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 32) == GDMA_STATUS_BAD_ARG,
	      "pages over 2 MiB refused");

	/* PDs */
	q = mreq(GDMA_CREATE_PD, GDMA_REQ_HDR_SIZE + 8, 48);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 8) == 0 &&
	      gdma_get_le32(g(RESP_GPA) + 40) > 1, "CREATE_PD: a pd_id of its own");
	adapter = gdma_get_le64(g(RESP_GPA) + 32);	/* the PD handle */
	q = mreq(GDMA_DESTROY_PD, GDMA_REQ_HDR_SIZE + 8, 32);
	gdma_put_le64(q, adapter);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 8) == 0, "DESTROY_PD");
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 8) == GDMA_STATUS_BAD_ARG,
	      "DESTROY_PD twice refused");

	/* DESTROY_ADAPTER takes its addresses; then nothing is accepted */
	q = ibreq(MANA_IB_DESTROY_ADAPTER, GDMA_REQ_HDR_SIZE + 8, 32);
	gdma_put_le64(q, 0xAD00000000000001ULL);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 8) == 0, "DESTROY_ADAPTER");
	mana_fn_get_stats(fn, &st);
	CHECK(st.rnic_gids == 0 && st.rnic_macs == 0, "addresses gone with it");
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 8) == GDMA_STATUS_BAD_ARG,
	      "destroyed twice refused");
	/* an adapter request 6.12 never sends (0x3000c): CMD_UNSUPPORTED */
	q = ibreq(MANA_IB_CREATE_ADAPTER, GDMA_REQ_HDR_SIZE + 16, 40);
	gdma_put_le32(q, eq_id);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 16) == 0, "a new adapter");
	adapter = gdma_get_le64(g(RESP_GPA) + 32);
	q = ibreq(0x3000c, GDMA_REQ_HDR_SIZE + 8, 32);
	gdma_put_le64(q, adapter);
	CHECK(hwc_call(fn, GDMA_REQ_HDR_SIZE + 8) == GDMA_STATUS_CMD_UNSUPPORTED,
	      "unknown adapter request: CMD_UNSUPPORTED");
	rc_objects(fn, adapter, eq_id, db2);
	mana_fn_free(fn);
	free(ram);
}

int main(void)
{
	test_header();
	test_payloads();
	test_gdma_msgs();
	test_function();
	test_mana();
	test_rnic_msgs();
	test_rnic();
	return check_done();
}
