// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The MANA VF for the real mana driver (see mana_fn.h).  Facts: Linux
 * include/net/mana/{gdma,hw_channel,mana}.h and drivers/net/ethernet/
 * microsoft/mana/{gdma_main,hw_channel,shm_channel}.c (6.12), openvmm's
 * vm/devices/net/gdma for a device-side reading.
 *
 * Everything runs on the server's one thread, synchronously inside the
 * region write that rings a doorbell: the guest's request is answered
 * (response in its RQ buffer, CQE, EQE, MSI-X) before QEMU gets the reply
 * to its write.  Guest memory is only reached through ops->dma, which
 * fails closed outside the shared regions.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mana_fn.h"
#include "mana_gdma_req.h"
#include "rc.h"
#include "emulator/lib/qp_modify.h"
#include "providers/mana/gdma.h"

/* BAR0 layout: registers, the SMC aperture, the doorbell pages */
#define REG_DB_PAGE_OFFSET	0x08	/* GDMA_REG_DB_PAGE_OFFSET */
#define REG_DB_PAGE_SIZE	0x10	/* GDMA_REG_DB_PAGE_SIZE */
#define REG_SHM_OFFSET		0x18	/* GDMA_REG_SHM_OFFSET */
#define BAR0_SHM		0x1000
#define BAR0_DB			0x8000
#define DB_PAGES		((MANA_FN_BAR0_SIZE - BAR0_DB) / GDMA_DB_PAGE_SIZE)
#define SMC_DWORDS		8	/* 256-bit aperture */

/* PCI config space */
#define CFG_CAP_MSIX		0x40
#define MSIX_PBA_OFF		0x800

#define MAX_QUEUES		256
#define MAX_REGIONS		256
#define MAX_REGION_PAGES	16384	/* 64 MiB of 4 KiB pages per region */
#define HWC_QSIZE		4096	/* every HWC queue at bootstrap depth 1 */
#define HWC_MSG_MAX		4096	/* HW_CHANNEL_MAX_{REQUEST,RESPONSE}_SIZE */
#define HWC_DB			0	/* doorbell page of the HWC */
#define MANA_DB			1	/* ... and of the MANA device */
#define PDID			1
#define GPA_MKEY		0x11	/* the HWC's key for guest physical addresses */
#define VPORT_HANDLE		0x5600000000000001ULL	/* the one vPort */
#define MAX_WQOBJS		64
#define WQOBJ_HANDLE_BASE	0x7700000000000000ULL
#define FIRST_USER_DB		2	/* pages 0, 1: HWC and the devices */
#define MAX_PDS			64
#define PD_HANDLE_BASE		0x5000000000000000ULL
#define ADAPTER_HANDLE		0xAD00000000000001ULL	/* the one RDMA adapter */
#define MAX_MRS			64
#define MR_HANDLE_BASE		0x4D00000000000000ULL
#define MR_KEY_BASE		0x1000	/* lkey = rkey = base + index */
#define MAX_RNIC_CQS		64
#define RNIC_CQ_HANDLE_BASE	0xC000000000000000ULL
#define MAX_RC_QPS		64
#define RC_QP_HANDLE_BASE	0xDC00000000000000ULL
#define RC_SEND_BASE		0x400000U	/* RC queue ids, as mana-emu's */
#define RC_RECV_BASE		0x800000U
#define IB_QP_STATE		1ULL	/* attr_mask bit */
#define IB_QPS_ERR		6
#define MAX_MACS		4
#define MAX_GIDS		16	/* the kernel's gid_tbl_len */

struct dma_region {
	bool used;
	uint64_t handle;
	uint64_t length;
	uint32_t offset_in_page;	/* of the first listed page */
	uint32_t page_count;		/* 4 KiB pages */
	uint32_t pages_added;
	uint32_t span;			/* 4 KiB pages per listed page */
	uint64_t *pages;
};

struct queue {
	bool used;
	enum gdma_queue_type type;
	uint32_t id;
	uint32_t size;		/* bytes, a power of two */
	uint64_t *pages;	/* guest address of each 4 KiB page */
	uint32_t npages;
	uint32_t consumer;	/* SQ/RQ: bytes consumed (wraps at 2^32) */
	uint32_t tail;		/* SQ/RQ: last doorbell */
	uint64_t produced;	/* CQ/EQ: entries written */
	uint32_t msix;		/* EQ */
	uint32_t parent_eq;	/* CQ: EQ id, GDMA_CQ_NO_EQ for none */
	uint32_t db;		/* the doorbell page that rings it */
	bool armed;		/* CQ: its next CQE raises an EQE */
	bool wake;		/* CQ: its next arm raises one at once */
};

struct mana_fn {
	struct mana_fn_ops ops;
	uint8_t mac[6];
	uint8_t cfg[MANA_FN_CFG_SIZE];
	uint8_t bar4[MANA_FN_BAR4_SIZE];
	uint32_t smc[SMC_DWORDS];
	struct queue q[MAX_QUEUES];
	struct dma_region rg[MAX_REGIONS];
	uint64_t next_region;
	struct queue *hwc_eq, *hwc_cq, *hwc_rq, *hwc_sq;
	struct {
		uint64_t handle;
		struct queue *wq, *cq;
	} wqobj[MAX_WQOBJS];
	uint64_t default_rxobj;		/* CONFIG_VPORT_RX's; 0: none */
	uint32_t vport_db;		/* CONFIG_VPORT_TX's doorbell page */
	bool rx_enabled;
	bool registered;
	bool ib_registered;		/* REGISTER_DEVICE of MANA_IB */
	bool db_used[DB_PAGES];		/* user contexts' doorbell pages */
	bool pd_used[MAX_PDS];		/* pd_id = PDID + 1 + index */
	struct {			/* user MRs (CREATE_MR, GVA) */
		bool used;
		uint32_t pd;		/* index of its PD */
		uint32_t access;
		uint64_t va, length;
		uint32_t offset;	/* of va in the first page */
		uint64_t *pages;	/* 4 KiB pages, the region's */
		uint32_t npages;
	} mr[MAX_MRS];
	struct {			/* the adapter's CQs (MANA_IB_CREATE_CQ) */
		struct queue *q;	/* NULL: free */
		uint32_t users;		/* RC QPs naming it */
	} rcq[MAX_RNIC_CQS];
	struct {			/* RC QPs (MANA_IB_CREATE_RC_QP) */
		bool used;
		struct queue *q[MANA_RC_QUEUES];	/* FMR's NULL */
		uint32_t send_cq, recv_cq;	/* rcq[] indexes */
		uint32_t state;			/* enum ib_qp_state */
		uint32_t pd;			/* index of its PD */
		struct vrc_qp *vqp;		/* its RC transport (rc.c) */
	} rcqp[MAX_RC_QPS];
	struct {			/* the RDMA adapter (CREATE_ADAPTER) */
		bool live;
		uint32_t notify_eq;
		uint8_t mac[MAX_MACS][6];
		bool mac_used[MAX_MACS];
		struct {
			bool used;
			uint32_t type;
			uint8_t gid[16];
		} gid[MAX_GIDS];
	} rnic;
	struct vrc_dev *rc;		/* the RC transport of the RC QPs */
	struct mana_fn_stats st;
};

static void fn_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fn_log(const char *fmt, ...)
{
	va_list ap;

#ifdef MANA_FN_QUIET	/* the fuzzer: millions of refusals */
	return;
#endif
	fputs("mana-vfio: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ------------------------------------------------------------------------ */
/* Config space */

static void cfg_init(struct mana_fn *fn)
{
	uint8_t *c = fn->cfg;

	memset(c, 0, sizeof(fn->cfg));
	gdma_put_le16(c + 0x00, MANA_FN_VENDOR);
	gdma_put_le16(c + 0x02, MANA_FN_DEVICE);
	gdma_put_le16(c + 0x06, 0x0010);	/* status: capability list */
	c[0x08] = 0;				/* revision */
	c[0x0b] = 0x02;				/* class: network controller, */
	c[0x0a] = 0x00;				/* ethernet */
	gdma_put_le32(c + 0x10, 0x4);		/* BAR0: memory, 64-bit */
	gdma_put_le32(c + 0x20, 0x4);		/* BAR4: memory, 64-bit */
	gdma_put_le16(c + 0x2c, MANA_FN_VENDOR);
	gdma_put_le16(c + 0x2e, MANA_FN_DEVICE);
	c[0x34] = CFG_CAP_MSIX;
	c[CFG_CAP_MSIX] = 0x11;			/* MSI-X, last capability */
	gdma_put_le16(c + CFG_CAP_MSIX + 2, MANA_FN_MSIX - 1);
	gdma_put_le32(c + CFG_CAP_MSIX + 4, 0 | 4);		/* table: BAR4 + 0 */
	gdma_put_le32(c + CFG_CAP_MSIX + 8, MSIX_PBA_OFF | 4);	/* PBA */
}

int mana_fn_cfg_read(struct mana_fn *fn, uint64_t off, void *buf, uint32_t len)
{
	if (off >= MANA_FN_CFG_SIZE || len > MANA_FN_CFG_SIZE - off)
		return -EINVAL;
	memcpy(buf, fn->cfg + off, len);
	return 0;
}

/*
 * Only the command register and MSI-X's enable/mask bits are writable; QEMU
 * emulates BAR sizing itself, and a real function ignores writes to
 * read-only fields.
 */
int mana_fn_cfg_write(struct mana_fn *fn, uint64_t off, const void *buf,
		      uint32_t len)
{
	const uint8_t *b = buf;
	uint32_t i;

	if (off >= MANA_FN_CFG_SIZE || len > MANA_FN_CFG_SIZE - off)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		uint64_t o = off + i;

		if (o == 0x04)
			fn->cfg[o] = b[i] & 0x46;	/* memory, master, parity */
		else if (o == 0x05)
			fn->cfg[o] = b[i] & 0x05;	/* SERR, INTx disable */
		else if (o == CFG_CAP_MSIX + 3)
			fn->cfg[o] = b[i] & 0xc0;	/* enable, function mask */
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Guest memory of queues and regions */

static void *q_ptr(struct mana_fn *fn, const struct queue *q, uint32_t off,
		   uint32_t len)
{
	uint32_t o = off & (q->size - 1);
	void *p;

	/* entries never straddle a page: 16/64-byte entries, 32-byte BUs */
	if (o / MANA_PAGE_SIZE >= q->npages ||
	    (o % MANA_PAGE_SIZE) + len > MANA_PAGE_SIZE)
		return NULL;
	p = fn->ops.dma(fn->ops.ctx, q->pages[o / MANA_PAGE_SIZE] +
			o % MANA_PAGE_SIZE, len);
	if (!p)
		fn->st.dma_faults++;
	return p;
}

/* Copy @len bytes of a ring from @off, wrapping at its end. */
static int q_read(struct mana_fn *fn, const struct queue *q, uint32_t off,
		  void *buf, uint32_t len)
{
	uint8_t *b = buf;

	while (len) {
		uint32_t o = off & (q->size - 1);
		uint32_t n = MANA_PAGE_SIZE - o % MANA_PAGE_SIZE;
		void *p;

		if (n > len)
			n = len;
		p = q_ptr(fn, q, o, n);
		if (!p)
			return -EFAULT;
		memcpy(b, p, n);
		b += n;
		off += n;
		len -= n;
	}
	return 0;
}

static struct queue *q_find(struct mana_fn *fn, enum gdma_queue_type type,
			    uint32_t id)
{
	int i;

	for (i = 0; i < MAX_QUEUES; i++)
		if (fn->q[i].used && fn->q[i].type == type && fn->q[i].id == id)
			return &fn->q[i];
	return NULL;
}

/* Queue ids: one space per type, as the driver's cq_table indexes CQs. */
static struct queue *q_alloc(struct mana_fn *fn, enum gdma_queue_type type)
{
	uint32_t id;
	int i;

	for (id = 0; id < MAX_QUEUES; id++)
		if (!q_find(fn, type, id))
			break;
	for (i = 0; i < MAX_QUEUES; i++) {
		if (!fn->q[i].used) {
			memset(&fn->q[i], 0, sizeof(fn->q[i]));
			fn->q[i].used = true;
			fn->q[i].type = type;
			fn->q[i].id = id;
			fn->q[i].parent_eq = GDMA_CQ_NO_EQ;
			return &fn->q[i];
		}
	}
	return NULL;
}

static void q_free(struct queue *q)
{
	free(q->pages);
	memset(q, 0, sizeof(*q));
}

/* A queue over contiguous guest memory (the HWC's, from the SMC). */
static struct queue *q_contig(struct mana_fn *fn, enum gdma_queue_type type,
			      uint64_t gpa, uint32_t size)
{
	struct queue *q = q_alloc(fn, type);
	uint32_t i;

	if (!q)
		return NULL;
	q->size = size;
	q->npages = size / MANA_PAGE_SIZE;
	q->pages = calloc(q->npages, sizeof(*q->pages));
	if (!q->pages) {
		q_free(q);
		return NULL;
	}
	for (i = 0; i < q->npages; i++)
		q->pages[i] = gpa + (uint64_t)i * MANA_PAGE_SIZE;
	return q;
}

/* ------------------------------------------------------------------------ */
/* EQEs, CQEs, interrupts */

/*
 * The driver starts each EQ/CQ's head at one lap (INITIALIZED_OWNER_BIT),
 * so entry n (from 0) carries owner bits n / entries + 1.
 */
static int eq_post(struct mana_fn *fn, struct queue *eq, uint8_t type,
		   const uint32_t details[3])
{
	uint32_t n = eq->size / GDMA_EQE_SIZE;
	uint32_t slot = (uint32_t)(eq->produced % n);
	uint32_t owner = (uint32_t)((eq->produced / n + 1) & GDMA_OWNER_MASK);
	uint8_t *p = q_ptr(fn, eq, slot * GDMA_EQE_SIZE, GDMA_EQE_SIZE);

	if (!p) {
		fn_log("EQ %u: entry %u outside guest memory; event dropped",
		       eq->id, slot);
		return -EFAULT;
	}
	gdma_put_le32(p, details[0]);
	gdma_put_le32(p + 4, details[1]);
	gdma_put_le32(p + 8, details[2]);
	__atomic_thread_fence(__ATOMIC_RELEASE);	/* details before owner */
	gdma_put_le32(p + 12, type | owner << 29);
	eq->produced++;
	fn->ops.irq(fn->ops.ctx, eq->msix);
	return 0;
}

static int eq_post1(struct mana_fn *fn, struct queue *eq, uint8_t type,
		    uint32_t d0)
{
	uint32_t d[3] = { d0, 0, 0 };

	return eq_post(fn, eq, type, d);
}

/*
 * An armed CQ's next completion raises one EQE on its EQ and disarms it;
 * the driver re-arms with a CQ doorbell.  A CQ nobody arms (a user's CQ
 * that is only polled) raises none, so no event names it after its owner
 * forgot it.
 */
static int cq_event(struct mana_fn *fn, struct queue *cq)
{
	struct queue *eq;

	if (!cq->armed)
		return 0;
	cq->armed = false;
	eq = q_find(fn, GDMA_EQ, cq->parent_eq);
	return eq ? eq_post1(fn, eq, GDMA_EQE_COMPLETION, cq->id) : 0;
}

static int cq_post(struct mana_fn *fn, struct queue *cq,
		   const uint8_t data[GDMA_CQE_DATA_SIZE], uint32_t wq_num,
		   bool is_sq)
{
	uint32_t n = cq->size / GDMA_CQE_SIZE;
	uint32_t slot = (uint32_t)(cq->produced % n);
	struct gdma_cqe c = {
		.wq_num = wq_num, .is_sq = is_sq,
		.owner = (uint8_t)((cq->produced / n + 1) & GDMA_OWNER_MASK),
	};
	uint8_t wire[GDMA_CQE_SIZE];
	uint8_t *p = q_ptr(fn, cq, slot * GDMA_CQE_SIZE, GDMA_CQE_SIZE);

	memcpy(c.data, data, GDMA_CQE_DATA_SIZE);
	if (!p || gdma_cqe_encode(&c, wire)) {
		fn_log("CQ %u: entry %u outside guest memory; completion dropped",
		       cq->id, slot);
		return -EFAULT;
	}
	memcpy(p, wire, GDMA_CQE_SIZE - 4);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(p + GDMA_CQE_SIZE - 4, wire + GDMA_CQE_SIZE - 4, 4);
	cq->produced++;
	return cq_event(fn, cq);
}

/* ------------------------------------------------------------------------ */
/* Shared-memory channel: establishing and tearing down the HWC */

#define SMC_TYPE_ESTABLISH	1
#define SMC_TYPE_DESTROY	2
#define SMC_RESPONSE		(1U << 7)

static void hwc_destroy(struct mana_fn *fn)
{
	int i;

	for (i = 0; i < MAX_QUEUES; i++)
		if (fn->q[i].used)
			q_free(&fn->q[i]);
	for (i = 0; i < MAX_REGIONS; i++) {
		free(fn->rg[i].pages);
		memset(&fn->rg[i], 0, sizeof(fn->rg[i]));
	}
	fn->hwc_eq = fn->hwc_cq = fn->hwc_rq = fn->hwc_sq = NULL;
	memset(fn->wqobj, 0, sizeof(fn->wqobj));
	fn->default_rxobj = 0;
	fn->vport_db = MANA_DB;		/* until CONFIG_VPORT_TX names one */
	fn->rx_enabled = false;
	fn->registered = false;
	fn->ib_registered = false;
	memset(fn->db_used, 0, sizeof(fn->db_used));
	memset(fn->pd_used, 0, sizeof(fn->pd_used));
	for (i = 0; i < MAX_MRS; i++)
		free(fn->mr[i].pages);
	memset(fn->mr, 0, sizeof(fn->mr));
	memset(&fn->rnic, 0, sizeof(fn->rnic));
	/* their queues went with every other above */
	for (i = 0; i < MAX_RC_QPS; i++)
		if (fn->rcqp[i].vqp)
			vrc_qp_destroy(fn->rc, fn->rcqp[i].vqp);
	memset(fn->rcq, 0, sizeof(fn->rcq));
	memset(fn->rcqp, 0, sizeof(fn->rcqp));
}

static void hwc_init_data(struct mana_fn *fn, uint32_t type, uint32_t value)
{
	eq_post1(fn, fn->hwc_eq, GDMA_EQE_HWC_INIT_DATA, type << 24 | value);
}

static uint8_t smc_establish(struct mana_fn *fn)
{
	uint64_t pfn[4];
	uint16_t high = (uint16_t)(fn->smc[6] & 0xffff);
	uint16_t msix = (uint16_t)(fn->smc[6] >> 16);
	uint8_t raw[32];
	int i;

	for (i = 0; i < SMC_DWORDS; i++)
		gdma_put_le32(raw + 4 * i, fn->smc[i]);
	for (i = 0; i < 4; i++) {
		uint64_t low = 0;
		int j;

		for (j = 0; j < 6; j++)
			low |= (uint64_t)raw[6 * i + j] << (8 * j);
		pfn[i] = low | (uint64_t)((high >> (4 * i)) & 0xf) << 48;
	}
	if (msix >= MANA_FN_MSIX) {
		fn_log("SMC: EQ vector %u >= %u", msix, MANA_FN_MSIX);
		return 1;
	}
	hwc_destroy(fn);
	/* allocation order gives EQ 0, CQ 0, RQ 0, SQ 0 */
	fn->hwc_eq = q_contig(fn, GDMA_EQ, pfn[0] << 12, HWC_QSIZE);
	fn->hwc_cq = q_contig(fn, GDMA_CQ, pfn[1] << 12, HWC_QSIZE);
	fn->hwc_rq = q_contig(fn, GDMA_RQ, pfn[2] << 12, HWC_QSIZE);
	fn->hwc_sq = q_contig(fn, GDMA_SQ, pfn[3] << 12, HWC_QSIZE);
	if (!fn->hwc_eq || !fn->hwc_cq || !fn->hwc_rq || !fn->hwc_sq) {
		hwc_destroy(fn);
		return 1;
	}
	fn->hwc_eq->msix = msix;
	fn->hwc_cq->parent_eq = fn->hwc_eq->id;
	/* the driver re-arms the HWC's CQ after each event, never first */
	fn->hwc_cq->armed = true;
	fn->st.hwc_established++;
	fn_log("HWC established: EQ %#llx CQ %#llx RQ %#llx SQ %#llx, vector %u",
	       (unsigned long long)pfn[0] << 12, (unsigned long long)pfn[1] << 12,
	       (unsigned long long)pfn[2] << 12, (unsigned long long)pfn[3] << 12,
	       msix);
	eq_post1(fn, fn->hwc_eq, GDMA_EQE_HWC_INIT_EQ_ID_DB,
		 fn->hwc_eq->id | HWC_DB << 16);
	hwc_init_data(fn, 1, fn->hwc_cq->id);		/* HWC_INIT_DATA_CQID */
	hwc_init_data(fn, 2, fn->hwc_rq->id);		/* RQID */
	hwc_init_data(fn, 3, fn->hwc_sq->id);		/* SQID */
	hwc_init_data(fn, 4, 1);			/* QUEUE_DEPTH */
	hwc_init_data(fn, 5, HWC_MSG_MAX);		/* MAX_REQUEST */
	hwc_init_data(fn, 6, HWC_MSG_MAX);		/* MAX_RESPONSE */
	hwc_init_data(fn, 7, MAX_QUEUES);		/* MAX_NUM_CQS */
	hwc_init_data(fn, 8, PDID);			/* PDID */
	hwc_init_data(fn, 9, GPA_MKEY);			/* GPA_MKEY */
	eq_post1(fn, fn->hwc_eq, GDMA_EQE_HWC_INIT_DONE, 0);
	return 0;
}

/* The last dword's write hands the aperture to the "PF"; answer at once. */
static void smc_request(struct mana_fn *fn)
{
	uint32_t hdr = fn->smc[7];
	uint32_t type = hdr & 7, version = (hdr >> 3) & 7;
	uint8_t status;

	if (hdr & SMC_RESPONSE) {
		fn_log("SMC: a response written by the VF (%#x)", hdr);
		return;
	}
	switch (type) {
	case SMC_TYPE_ESTABLISH:
		status = smc_establish(fn);
		break;
	case SMC_TYPE_DESTROY:
		fn_log("HWC destroyed");
		hwc_destroy(fn);
		status = 0;
		break;
	default:
		fn_log("SMC: unknown message type %u", type);
		status = 1;
		break;
	}
	/* ownership (bit 31) back to the VF, response with our status */
	fn->smc[7] = type | version << 3 | SMC_RESPONSE | (uint32_t)status << 8;
}

/* ------------------------------------------------------------------------ */
/* HWC requests */

static struct dma_region *rg_find(struct mana_fn *fn, uint64_t handle)
{
	int i;

	for (i = 0; i < MAX_REGIONS; i++)
		if (fn->rg[i].used && fn->rg[i].handle == handle)
			return &fn->rg[i];
	return NULL;
}

/*
 * Listed pages of 4 KiB << page_type, each aligned to its size, kept as
 * the 4 KiB pages they cover (queues and MRs address those).
 */
static uint32_t rg_add_pages(struct dma_region *r, const uint8_t *list,
			     uint32_t n)
{
	uint32_t i, j;

	if (n > (r->page_count - r->pages_added) / r->span)
		return GDMA_STATUS_BAD_ARG;
	for (i = 0; i < n; i++) {
		uint64_t a = gdma_get_le64(list + 8 * i);

		if (a % ((uint64_t)MANA_PAGE_SIZE * r->span))
			return GDMA_STATUS_BAD_ARG;
		for (j = 0; j < r->span; j++)
			r->pages[r->pages_added++] = a + (uint64_t)j * MANA_PAGE_SIZE;
	}
	/* mana_ib sends a long list in parts and waits for this status */
	return r->pages_added < r->page_count ? GDMA_STATUS_MORE_ENTRIES : 0;
}

static uint32_t req_create_dma_region(struct mana_fn *fn, const uint8_t *req,
				      uint32_t len, uint8_t *resp)
{
	struct gdma_create_dma_region r;
	struct dma_region *rg = NULL;
	uint64_t pages4k;
	uint32_t st;
	int i;

	if (gdma_create_dma_region_decode(req, len, &r))
		return GDMA_STATUS_BAD_ARG;
	pages4k = (uint64_t)r.page_count << r.page_type;
	if (pages4k > MAX_REGION_PAGES ||
	    r.offset_in_page >= (uint64_t)MANA_PAGE_SIZE << r.page_type ||
	    r.length + r.offset_in_page > pages4k * MANA_PAGE_SIZE)
		return GDMA_STATUS_BAD_ARG;
	for (i = 0; i < MAX_REGIONS && !rg; i++)
		if (!fn->rg[i].used)
			rg = &fn->rg[i];
	if (!rg)
		return GDMA_STATUS_NO_RESOURCE;
	memset(rg, 0, sizeof(*rg));
	rg->pages = calloc(pages4k, sizeof(*rg->pages));
	if (!rg->pages)
		return GDMA_STATUS_NO_RESOURCE;
	rg->used = true;
	rg->handle = ++fn->next_region;
	rg->length = r.length;
	rg->offset_in_page = r.offset_in_page;
	rg->page_count = (uint32_t)pages4k;
	rg->span = 1U << r.page_type;
	st = rg_add_pages(rg, r.pages, r.list_len);
	if (st && st != GDMA_STATUS_MORE_ENTRIES) {
		free(rg->pages);
		memset(rg, 0, sizeof(*rg));
		return st;
	}
	gdma_put_le64(resp + GDMA_RESP_HDR_SIZE, rg->handle);
	return st;
}

static uint32_t req_region_add_pages(struct mana_fn *fn, const uint8_t *req,
				     uint32_t len)
{
	struct gdma_region_add_pages a;
	struct dma_region *rg;

	if (gdma_region_add_pages_decode(req, len, &a))
		return GDMA_STATUS_BAD_ARG;
	rg = rg_find(fn, a.handle);
	if (!rg)
		return GDMA_STATUS_BAD_ARG;
	return rg_add_pages(rg, a.pages, a.list_len);
}

static uint32_t req_destroy_dma_region(struct mana_fn *fn, const uint8_t *req,
				       uint32_t len)
{
	struct dma_region *rg;

	if (len < GDMA_REQ_HDR_SIZE + 8)
		return GDMA_STATUS_BAD_ARG;
	rg = rg_find(fn, gdma_get_le64(req + GDMA_REQ_HDR_SIZE));
	if (!rg)
		return GDMA_STATUS_BAD_ARG;
	free(rg->pages);
	memset(rg, 0, sizeof(*rg));
	return 0;
}

/*
 * A queue over a DMA region, which it takes over: the driver forgets the
 * handle once the queue exists (CREATE_QUEUE, CREATE_WQ_OBJ).
 */
static struct queue *q_from_region(struct mana_fn *fn, enum gdma_queue_type type,
				   uint64_t handle, uint32_t size)
{
	struct dma_region *rg = rg_find(fn, handle);
	struct queue *q;

	if (!rg || rg->pages_added != rg->page_count || rg->offset_in_page ||
	    size < MANA_PAGE_SIZE || !gdma_is_pow2(size) ||
	    (uint64_t)size > (uint64_t)rg->page_count * MANA_PAGE_SIZE)
		return NULL;
	q = q_alloc(fn, type);
	if (!q)
		return NULL;
	q->size = size;
	q->pages = rg->pages;
	q->npages = rg->page_count;
	memset(rg, 0, sizeof(*rg));
	return q;
}

static uint32_t req_create_queue(struct mana_fn *fn, const uint8_t *req,
				 uint32_t len, uint8_t *resp)
{
	struct gdma_create_queue c;
	struct queue *q;

	if (gdma_create_queue_decode(req, len, &c))
		return GDMA_STATUS_BAD_ARG;
	if (c.type == GDMA_EQ && c.msix >= MANA_FN_MSIX)
		return GDMA_STATUS_BAD_ARG;
	if (c.type == GDMA_CQ && c.parent_eq != GDMA_CQ_NO_EQ &&
	    !q_find(fn, GDMA_EQ, c.parent_eq))
		return GDMA_STATUS_BAD_ARG;
	q = q_from_region(fn, c.type, c.region, c.queue_size);
	if (!q)
		return GDMA_STATUS_BAD_ARG;
	q->msix = c.msix;
	q->parent_eq = c.parent_eq;
	q->db = c.doorbell;
	gdma_put_le32(resp + GDMA_RESP_HDR_SIZE, q->id);
	return 0;
}

static uint32_t req_disable_queue(struct mana_fn *fn, const uint8_t *req,
				  uint32_t len)
{
	struct queue *q;

	if (len < GDMA_REQ_HDR_SIZE + 12)
		return GDMA_STATUS_BAD_ARG;
	q = q_find(fn, gdma_get_le32(req + GDMA_REQ_HDR_SIZE),
		   gdma_get_le32(req + GDMA_REQ_HDR_SIZE + 4));
	if (!q || q == fn->hwc_eq || q == fn->hwc_cq || q == fn->hwc_rq ||
	    q == fn->hwc_sq)
		return GDMA_STATUS_BAD_ARG;
	q_free(q);
	return 0;
}

static uint32_t req_test_eqe(struct mana_fn *fn, const uint8_t *req,
			     uint32_t len)
{
	struct queue *eq;

	if (len < GDMA_REQ_HDR_SIZE + 4)
		return GDMA_STATUS_BAD_ARG;
	eq = q_find(fn, GDMA_EQ, gdma_get_le32(req + GDMA_REQ_HDR_SIZE));
	if (!eq)
		return GDMA_STATUS_BAD_ARG;
	eq_post1(fn, eq, GDMA_EQE_TEST_EVENT, 0);
	return 0;
}

/* The devices' PD, or one CREATE_PD made */
static bool pd_valid(const struct mana_fn *fn, uint32_t pdid)
{
	return pdid == PDID || (pdid > PDID && pdid - PDID - 1 < MAX_PDS &&
				fn->pd_used[pdid - PDID - 1]);
}

/* The devices' doorbell page, or one ALLOCATE_RESOURCE_RANGE gave */
static bool db_valid(const struct mana_fn *fn, uint32_t db)
{
	return db == MANA_DB || (db < DB_PAGES && fn->db_used[db]);
}

/* A WQ object: an SQ or RQ and its CQ, each over the region named. */
static uint32_t req_create_wqobj(struct mana_fn *fn, const uint8_t *req,
				 uint32_t len, uint8_t *r)
{
	struct mana_create_wqobj w;
	struct queue *wq, *cq;
	int i;

	if (mana_create_wqobj_decode(req, len, &w) || w.vport != VPORT_HANDLE ||
	    !q_find(fn, GDMA_EQ, w.cq_parent) || !rg_find(fn, w.wq_region) ||
	    !rg_find(fn, w.cq_region))
		return GDMA_STATUS_BAD_ARG;
	for (i = 0; i < MAX_WQOBJS && fn->wqobj[i].wq; i++)
		;
	if (i == MAX_WQOBJS)
		return GDMA_STATUS_NO_RESOURCE;
	wq = q_from_region(fn, w.wq_type, w.wq_region, w.wq_size);
	if (!wq)
		return GDMA_STATUS_BAD_ARG;
	cq = q_from_region(fn, GDMA_CQ, w.cq_region, w.cq_size);
	if (!cq) {
		q_free(wq);
		return GDMA_STATUS_BAD_ARG;
	}
	cq->parent_eq = w.cq_parent;
	wq->db = cq->db = fn->vport_db;
	fn->wqobj[i].wq = wq;
	fn->wqobj[i].cq = cq;
	fn->wqobj[i].handle = WQOBJ_HANDLE_BASE + (uint64_t)i;
	gdma_put_le32(r, wq->id);
	gdma_put_le32(r + 4, cq->id);
	gdma_put_le64(r + 8, fn->wqobj[i].handle);
	return 0;
}

/* The RQ of RX object @handle, or NULL. */
static struct queue *wqobj_rq(struct mana_fn *fn, uint64_t handle)
{
	uint64_t i = handle - WQOBJ_HANDLE_BASE;

	if (handle < WQOBJ_HANDLE_BASE || i >= MAX_WQOBJS || !fn->wqobj[i].wq ||
	    fn->wqobj[i].wq->type != GDMA_RQ)
		return NULL;
	return fn->wqobj[i].wq;
}

static uint32_t wqobj_destroy(struct mana_fn *fn, uint64_t handle)
{
	uint64_t i = handle - WQOBJ_HANDLE_BASE;

	if (handle < WQOBJ_HANDLE_BASE || i >= MAX_WQOBJS || !fn->wqobj[i].wq)
		return GDMA_STATUS_BAD_ARG;
	if (handle == fn->default_rxobj)
		fn->default_rxobj = 0;
	q_free(fn->wqobj[i].wq);
	q_free(fn->wqobj[i].cq);
	memset(&fn->wqobj[i], 0, sizeof(fn->wqobj[i]));
	return 0;
}

/*
 * Fencing an RQ: every WQE before it is done (no RX is modelled yet, so
 * none is pending) and its CQ gets a CQE_RX_OBJECT_FENCE, which the
 * driver waits for.
 */
static uint32_t wqobj_fence(struct mana_fn *fn, uint64_t handle)
{
	uint64_t i = handle - WQOBJ_HANDLE_BASE;
	uint8_t cqe[GDMA_CQE_DATA_SIZE] = { 0 };
	struct mana_cqe_header h = {
		.cqe_type = CQE_RX_OBJECT_FENCE, .client_type = MANA_CQE_COMPLETION,
	};

	if (handle < WQOBJ_HANDLE_BASE || i >= MAX_WQOBJS || !fn->wqobj[i].wq ||
	    fn->wqobj[i].wq->type != GDMA_RQ || mana_cqe_header_encode(&h, cqe))
		return GDMA_STATUS_BAD_ARG;
	cq_post(fn, fn->wqobj[i].cq, cqe, fn->wqobj[i].wq->id, false);
	return 0;
}

/*
 * MANA (Ethernet) requests, 0x20000 and up, to the registered device.
 * Unknown ones get the hardware's CMD_UNSUPPORTED, which 6.12 reports as
 * "Command 0x... failed" and newer kernels as -EOPNOTSUPP.
 */
static uint32_t mana_request(struct mana_fn *fn, const struct gdma_req_hdr *h,
			     const uint8_t *req, uint32_t len, uint8_t *resp,
			     uint32_t resp_len)
{
	uint8_t *r = resp + GDMA_RESP_HDR_SIZE;
	const uint8_t *q = req + GDMA_REQ_HDR_SIZE;

	if (h->msg_type >= 0x20000 && h->msg_type < 0x30000 &&
	    (!fn->registered || h->dev_id != GDMA_DEVICE_MANA))
		return GDMA_STATUS_BAD_ARG;
	switch (h->msg_type) {
	case MANA_QUERY_DEV_CONFIG:
		/* pf_cap_flags none; one vPort; v2 adds the adapter MTU */
		if (resp_len < GDMA_RESP_HDR_SIZE + 40)
			return GDMA_STATUS_BAD_ARG;
		gdma_put_le16(r + 32, 1);		/* max_num_vports */
		gdma_put_le32(r + 36, 64);		/* max_num_eqs */
		if (h->resp_version >= 2 && resp_len >= GDMA_RESP_HDR_SIZE + 48)
			gdma_put_le16(r + 40, 1514);	/* adapter_mtu */
		return 0;
	case MANA_QUERY_VPORT_CONFIG:
		if (resp_len < GDMA_RESP_HDR_SIZE + 32 ||
		    len < GDMA_REQ_HDR_SIZE + 4 || gdma_get_le32(q) != 0)
			return GDMA_STATUS_BAD_ARG;
		gdma_put_le32(r, 16);			/* max_num_sq */
		gdma_put_le32(r + 4, 16);		/* max_num_rq */
		gdma_put_le32(r + 8, 64);		/* num_indirection_ent */
		memcpy(r + 16, fn->mac, 6);
		gdma_put_le64(r + 24, VPORT_HANDLE);
		return 0;
	case MANA_CONFIG_VPORT_TX:
		/* vport, pdid, doorbell page: answer the tx vPort offset */
		if (resp_len < GDMA_RESP_HDR_SIZE + 4 ||
		    len < GDMA_REQ_HDR_SIZE + 16 ||
		    gdma_get_le64(q) != VPORT_HANDLE ||
		    !pd_valid(fn, gdma_get_le32(q + 8)) ||
		    !db_valid(fn, gdma_get_le32(q + 12)))
			return GDMA_STATUS_BAD_ARG;
		/* the vPort's queues ring the page it was configured with */
		fn->vport_db = gdma_get_le32(q + 12);
		gdma_put_le16(r, 0);			/* tx_vport_offset */
		r[2] = 1;				/* short_form_allowed */
		return 0;
	case MANA_CREATE_WQ_OBJ:
		if (resp_len < GDMA_RESP_HDR_SIZE + 16)
			return GDMA_STATUS_BAD_ARG;
		return req_create_wqobj(fn, req, len, r);
	case MANA_DESTROY_WQ_OBJ:
		if (len < GDMA_REQ_HDR_SIZE + 16)
			return GDMA_STATUS_BAD_ARG;
		return wqobj_destroy(fn, gdma_get_le64(q + 8));
	case MANA_FENCE_RQ:
		if (len < GDMA_REQ_HDR_SIZE + 8)
			return GDMA_STATUS_BAD_ARG;
		return wqobj_fence(fn, gdma_get_le64(q));
	case MANA_CONFIG_VPORT_RX:
		/*
		 * mana_cfg_rx_steer_req_v2: vport, num_indir_entries,
		 * indir_tab_offset, rx_enable @12, rss_enable @16,
		 * update_default_rxobj @20, ..., default_rxobj @24.  RSS is
		 * not modelled: frames go to the default RX object (with the
		 * one queue of -smp 1 the table names only that one).
		 */
		if (len < GDMA_REQ_HDR_SIZE + 32 || gdma_get_le64(q) != VPORT_HANDLE)
			return GDMA_STATUS_BAD_ARG;
		if (q[20]) {
			uint64_t obj = gdma_get_le64(q + 24);

			if (obj && !wqobj_rq(fn, obj))
				return GDMA_STATUS_BAD_ARG;
			fn->default_rxobj = obj;
		}
		fn->rx_enabled = gdma_get_le32(q + 12) != 0;
		return 0;
	default:
		return GDMA_STATUS_CMD_UNSUPPORTED;
	}
}

/* ------------------------------------------------------------------------ */
/* User contexts' resources: doorbell pages and protection domains */

/*
 * ALLOCATE_RESOURCE_RANGE of doorbell pages, which mana_ib asks one at a
 * time: the first free page at or after the search start on the
 * alignment, never the HWC's or the devices' page.
 */
static uint32_t req_alloc_range(struct mana_fn *fn, const uint8_t *req,
				uint32_t len, uint8_t *r, uint32_t resp_len)
{
	struct gdma_resource_range a;
	uint32_t i;

	if (gdma_alloc_resource_range_decode(req, len, &a) ||
	    resp_len < GDMA_RESP_HDR_SIZE + 4 ||
	    a.type != GDMA_RESOURCE_DOORBELL_PAGE || a.count != 1 ||
	    !a.alignment)
		return GDMA_STATUS_BAD_ARG;
	for (i = a.first; i < DB_PAGES; i++) {
		if (i < FIRST_USER_DB || i % a.alignment || fn->db_used[i])
			continue;
		fn->db_used[i] = true;
		gdma_put_le32(r, i);
		return 0;
	}
	return GDMA_STATUS_NO_RESOURCE;
}

static uint32_t req_destroy_range(struct mana_fn *fn, const uint8_t *req,
				  uint32_t len)
{
	struct gdma_resource_range d;

	if (gdma_destroy_resource_range_decode(req, len, &d) ||
	    d.type != GDMA_RESOURCE_DOORBELL_PAGE || d.count != 1 ||
	    d.first >= DB_PAGES || !fn->db_used[d.first])
		return GDMA_STATUS_BAD_ARG;
	fn->db_used[d.first] = false;
	return 0;
}

/* CREATE_PD: flags (6.12 sends none); handle and pd_id back */
static uint32_t req_create_pd(struct mana_fn *fn, const uint8_t *req,
			      uint32_t len, uint8_t *r, uint32_t resp_len)
{
	uint32_t i;

	if (len < GDMA_REQ_HDR_SIZE + 8 || resp_len < GDMA_RESP_HDR_SIZE + 16)
		return GDMA_STATUS_BAD_ARG;
	/* ALLOW_GPA_MR (bit 0) and SHORT_PDN (bit 2) of later kernels */
	if (gdma_get_le32(req + GDMA_REQ_HDR_SIZE) & ~0x5U)
		return GDMA_STATUS_BAD_ARG;
	for (i = 0; i < MAX_PDS; i++) {
		if (fn->pd_used[i])
			continue;
		fn->pd_used[i] = true;
		gdma_put_le64(r, PD_HANDLE_BASE + i);
		gdma_put_le32(r + 8, PDID + 1 + i);
		return 0;
	}
	return GDMA_STATUS_NO_RESOURCE;
}

static uint32_t req_destroy_pd(struct mana_fn *fn, const uint8_t *req,
			       uint32_t len)
{
	uint64_t i;

	if (len < GDMA_REQ_HDR_SIZE + 8)
		return GDMA_STATUS_BAD_ARG;
	i = gdma_get_le64(req + GDMA_REQ_HDR_SIZE) - PD_HANDLE_BASE;
	if (i >= MAX_PDS || !fn->pd_used[i])
		return GDMA_STATUS_BAD_ARG;
	fn->pd_used[i] = false;
	return 0;
}


/*
 * CREATE_MR of a user MR: a GVA MR over a complete region (which it takes
 * over, as mana_ib forgets the handle) in a PD this function made.
 */
static uint32_t req_create_mr(struct mana_fn *fn, const uint8_t *req,
			      uint32_t len, uint8_t *r, uint32_t resp_len)
{
	struct gdma_create_mr m;
	struct dma_region *rg;
	uint64_t pd;
	uint32_t i;

	if (gdma_create_mr_decode(req, len, &m) ||
	    resp_len < GDMA_RESP_HDR_SIZE + 16 || m.mr_type != GDMA_MR_TYPE_GVA)
		return GDMA_STATUS_BAD_ARG;
	pd = m.pd_handle - PD_HANDLE_BASE;
	rg = rg_find(fn, m.region);
	if (pd >= MAX_PDS || !fn->pd_used[pd] || !rg ||
	    rg->pages_added != rg->page_count || m.va + rg->length < m.va)
		return GDMA_STATUS_BAD_ARG;
	for (i = 0; i < MAX_MRS && fn->mr[i].used; i++)
		;
	if (i == MAX_MRS)
		return GDMA_STATUS_NO_RESOURCE;
	fn->mr[i].used = true;
	fn->mr[i].pd = (uint32_t)pd;
	fn->mr[i].access = m.access;
	fn->mr[i].va = m.va;
	fn->mr[i].length = rg->length;
	fn->mr[i].offset = rg->offset_in_page;
	fn->mr[i].pages = rg->pages;
	fn->mr[i].npages = rg->page_count;
	memset(rg, 0, sizeof(*rg));
	gdma_put_le64(r, MR_HANDLE_BASE + i);
	gdma_put_le32(r + 8, MR_KEY_BASE + i);
	gdma_put_le32(r + 12, MR_KEY_BASE + i);
	return 0;
}

static uint32_t req_destroy_mr(struct mana_fn *fn, const uint8_t *req,
			       uint32_t len)
{
	uint64_t i;

	if (len < GDMA_REQ_HDR_SIZE + 8)
		return GDMA_STATUS_BAD_ARG;
	i = gdma_get_le64(req + GDMA_REQ_HDR_SIZE) - MR_HANDLE_BASE;
	if (i >= MAX_MRS || !fn->mr[i].used)
		return GDMA_STATUS_BAD_ARG;
	free(fn->mr[i].pages);
	memset(&fn->mr[i], 0, sizeof(fn->mr[i]));
	return 0;
}

/* ------------------------------------------------------------------------ */
/* The RC transport's services (rc.h): rings, MRs, CQEs, events, the wire */

static int rc_ring_read(void *ctx, void *ring, uint32_t pos, void *buf,
			uint32_t len)
{
	return q_read(ctx, ring, pos, buf, len);
}

/*
 * [addr, addr + len) of a user MR of PD @pd with @access, page by page
 * through the guest's shared memory; every page is checked before a byte
 * moves, so a refused access lands nothing.  The kernel's GPA key is no
 * RC QP's.  Zero bytes need no key (IBA 9.7.5.1.3).
 */
static int rc_mem(void *ctx, uint32_t pd, uint32_t key, uint64_t addr,
		  uint8_t *buf, uint32_t len, unsigned int access, bool to_mem)
{
	struct mana_fn *fn = ctx;
	uint64_t i = (uint64_t)key - MR_KEY_BASE, off;
	uint32_t need = 0, done, n;
	int pass;
	uint8_t *p;

	if (!len)
		return 0;
	if (access & VRC_LOCAL_WRITE)
		need |= GDMA_ACCESS_LOCAL_WRITE;
	if (access & VRC_REMOTE_READ)
		need |= GDMA_ACCESS_REMOTE_READ;
	if (access & VRC_REMOTE_WRITE)
		need |= GDMA_ACCESS_REMOTE_WRITE;
	if (key < MR_KEY_BASE || i >= MAX_MRS || !fn->mr[i].used ||
	    fn->mr[i].pd != pd || (fn->mr[i].access & need) != need ||
	    addr < fn->mr[i].va || addr - fn->mr[i].va > fn->mr[i].length ||
	    len > fn->mr[i].length - (addr - fn->mr[i].va))
		return -EACCES;
	for (pass = buf ? 0 : 1; pass < 2; pass++) {
		for (done = 0; done < len; done += n) {
			off = fn->mr[i].offset + (addr + done - fn->mr[i].va);
			if (off / MANA_PAGE_SIZE >= fn->mr[i].npages)
				return -EACCES;
			n = MANA_PAGE_SIZE - off % MANA_PAGE_SIZE;
			if (n > len - done)
				n = len - done;
			p = fn->ops.dma(fn->ops.ctx,
					fn->mr[i].pages[off / MANA_PAGE_SIZE] +
					off % MANA_PAGE_SIZE, n);
			if (!p) {
				fn->st.dma_faults++;
				return -EACCES;
			}
			if (pass == 1 && buf && to_mem)
				memcpy(p, buf + done, n);
			else if (pass == 1 && buf)
				memcpy(buf + done, p, n);
		}
	}
	return 0;
}

static void rc_cqe(void *ctx, void *cq, const uint8_t *data, uint32_t wq_num,
		   bool is_sq)
{
	cq_post(ctx, cq, data, wq_num, is_sq);
}

/* GDMA_EQE_RNIC_QP_FATAL on the adapter's EQ: mana_ib's QP event. */
static void rc_fatal(void *ctx, uint32_t qpn)
{
	struct mana_fn *fn = ctx;
	struct queue *eq = fn->rnic.live ?
			   q_find(fn, GDMA_EQ, fn->rnic.notify_eq) : NULL;

	fn_log("RNIC: QP %#x to ERR (QP fatal event)", qpn);
	if (eq)
		eq_post1(fn, eq, GDMA_EQE_RNIC_QP_FATAL, qpn);
}

/* An RC QP entered ERR: its CQs' sleepers must poll (rc.h). */
static void rc_wake(void *ctx, void *cq)
{
	struct queue *q = cq;

	if (q->armed)
		cq_event(ctx, q);
	else
		q->wake = true;
}

static void rc_xmit(void *ctx, const uint8_t *frame, size_t len)
{
	struct mana_fn *fn = ctx;

	if (fn->ops.frame)
		fn->ops.frame(fn->ops.ctx, frame, (uint32_t)len);
}

static const struct vrc_ops rc_ops = {
	.ring_read = rc_ring_read, .mem = rc_mem, .cqe = rc_cqe,
	.fatal = rc_fatal, .wake = rc_wake, .xmit = rc_xmit,
};

/* The RC QP a queue id of the RC ranges names, or -1. */
static int rc_qp_of_queue(const struct mana_fn *fn, uint32_t id)
{
	uint32_t base = id >= RC_RECV_BASE ? RC_RECV_BASE : RC_SEND_BASE;
	uint32_t i;

	if (id < RC_SEND_BASE || (id & ~MANA_RC_QTYPE_MASK) < base + 4)
		return -1;
	i = ((id & ~MANA_RC_QTYPE_MASK) - base) / 4 - 1;
	return i < MAX_RC_QPS && fn->rcqp[i].used && fn->rcqp[i].vqp ?
	       (int)i : -1;
}

/* ------------------------------------------------------------------------ */
/* The RDMA adapter (MANA_IB device, 0x30000 and up) */

/*
 * The caps mana-emu's 6.11-era kernel reports for its device (emulator/
 * kernel: max_qp 64, max_cq 64, max_mr 2^24 - 1, max_pd 0x6000, 16 reads
 * in flight, max_qp_wr = max_cqe 8192, 30/15 SGEs), as a 6.12 mana_ib
 * derives them: max_qp_wr = min(requester SQ / 512, requester RQ / 256).
 * The fields 6.12 does not report (queue id limits, MWs, SRQs, inline
 * data) are this model's own values.
 */
static const struct mana_ib_adapter_caps adapter_caps = {
	.max_sq_id = MAX_QUEUES - 1, .max_rq_id = MAX_QUEUES - 1,
	.max_cq_id = MAX_QUEUES - 1,
	.max_qp_count = 64, .max_cq_count = 64, .max_mr_count = 0xFFFFFF,
	.max_pd_count = 0x6000,
	.max_inbound_read_limit = 16, .max_outbound_read_limit = 16,
	.mw_count = 0, .max_srq_count = 0,
	.max_requester_sq_size = 8192 * GDMA_MAX_SQE_SIZE,
	.max_responder_sq_size = 8192 * GDMA_MAX_SQE_SIZE,
	.max_requester_rq_size = 8192 * GDMA_MAX_RQE_SIZE,
	.max_responder_rq_size = 8192 * GDMA_MAX_RQE_SIZE,
	.max_send_sge_count = GDMA_MAX_TX_SGE,
	.max_recv_sge_count = GDMA_MAX_RX_SGE,
	.max_inline_data_size = 0,
};

static const char *gid_str(const uint8_t gid[16], char *buf, size_t len)
{
	static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

	if (!memcmp(gid, v4, 12))
		return inet_ntop(AF_INET, gid + 12, buf, (socklen_t)len);
	return inet_ntop(AF_INET6, gid, buf, (socklen_t)len);
}

/*
 * CONFIG_IP_ADDR: the port's GID table in the adapter.  Adding an entry
 * already there or removing one that is not is refused (the kernel's GID
 * cache never asks either); a seventeenth entry finds no room.
 */
static uint32_t rnic_config_ip(struct mana_fn *fn,
			       const struct mana_ib_config_addr *a)
{
	char buf[INET6_ADDRSTRLEN];
	int i, slot = -1;

	for (i = 0; i < MAX_GIDS; i++) {
		if (!fn->rnic.gid[i].used) {
			if (slot < 0)
				slot = i;
			continue;
		}
		if (fn->rnic.gid[i].type == a->sgid_type &&
		    !memcmp(fn->rnic.gid[i].gid, a->addr, 16))
			break;
	}
	if (a->op == MANA_IB_ADDR_OP_ADD) {
		if (i < MAX_GIDS)
			return GDMA_STATUS_BAD_ARG;
		if (slot < 0)
			return GDMA_STATUS_NO_RESOURCE;
		fn->rnic.gid[slot].used = true;
		fn->rnic.gid[slot].type = a->sgid_type;
		memcpy(fn->rnic.gid[slot].gid, a->addr, 16);
		fn->st.rnic_gids++;
	} else {
		if (i == MAX_GIDS)
			return GDMA_STATUS_BAD_ARG;
		fn->rnic.gid[i].used = false;
		fn->st.rnic_gids--;
	}
	if (fn->ops.verbose)
		fn_log("RNIC: GID %s %s (IPv%c)",
		       a->op == MANA_IB_ADDR_OP_ADD ? "add" : "remove",
		       gid_str(a->addr, buf, sizeof(buf)),
		       a->sgid_type == MANA_IB_SGID_IPV4 ? '4' : '6');
	return 0;
}

/* CONFIG_MAC_ADDR: the MACs the adapter answers RoCE frames for. */
static uint32_t rnic_config_mac(struct mana_fn *fn,
				const struct mana_ib_config_addr *a)
{
	int i, slot = -1;

	if (a->addr[0] & 1)	/* a multicast MAC is no station's */
		return GDMA_STATUS_BAD_ARG;
	for (i = 0; i < MAX_MACS; i++) {
		if (!fn->rnic.mac_used[i]) {
			if (slot < 0)
				slot = i;
			continue;
		}
		if (!memcmp(fn->rnic.mac[i], a->addr, 6))
			break;
	}
	if (a->op == MANA_IB_ADDR_OP_ADD) {
		if (i < MAX_MACS)
			return GDMA_STATUS_BAD_ARG;
		if (slot < 0)
			return GDMA_STATUS_NO_RESOURCE;
		fn->rnic.mac_used[slot] = true;
		memcpy(fn->rnic.mac[slot], a->addr, 6);
		fn->st.rnic_macs++;
	} else {
		if (i == MAX_MACS)
			return GDMA_STATUS_BAD_ARG;
		fn->rnic.mac_used[i] = false;
		fn->st.rnic_macs--;
	}
	if (fn->ops.verbose)
		fn_log("RNIC: MAC %s %02x:%02x:%02x:%02x:%02x:%02x",
		       a->op == MANA_IB_ADDR_OP_ADD ? "add" : "remove",
		       a->addr[0], a->addr[1], a->addr[2], a->addr[3],
		       a->addr[4], a->addr[5]);
	return 0;
}


/* The largest power of two <= @len, at least a page: a queue's ring. */
static uint32_t ring_size(uint64_t len)
{
	uint32_t s = MANA_PAGE_SIZE;

	while ((uint64_t)s * 2 <= len && s < (1U << 30))
		s *= 2;
	return s;
}

/* Can region @handle become a queue (complete, no page offset)? */
static bool region_queue_ok(struct mana_fn *fn, uint64_t handle)
{
	struct dma_region *rg = rg_find(fn, handle);

	return rg && rg->pages_added == rg->page_count && !rg->offset_in_page;
}

static struct queue *rnic_queue(struct mana_fn *fn, enum gdma_queue_type type,
				uint64_t handle, uint32_t db)
{
	struct dma_region *rg = rg_find(fn, handle);
	struct queue *q;

	q = rg ? q_from_region(fn, type, handle, ring_size(rg->length)) : NULL;
	if (q)
		q->db = db;
	return q;
}

/*
 * MANA_IB_CREATE_CQ: a CQ over the region (its ring the largest power of
 * two the region holds), raising its events on the EQ named, armed from
 * the user's doorbell page.
 */
static uint32_t rnic_create_cq(struct mana_fn *fn, const uint8_t *req,
			       uint32_t len, uint8_t *r, uint32_t resp_len)
{
	struct mana_ib_create_cq c;
	struct queue *q;
	uint32_t i;

	if (mana_ib_create_cq_decode(req, len, &c) ||
	    resp_len < GDMA_RESP_HDR_SIZE + 16 ||
	    !q_find(fn, GDMA_EQ, c.eq_id) || !db_valid(fn, c.doorbell) ||
	    !region_queue_ok(fn, c.region))
		return GDMA_STATUS_BAD_ARG;
	for (i = 0; i < MAX_RNIC_CQS && fn->rcq[i].q; i++)
		;
	if (i == MAX_RNIC_CQS)
		return GDMA_STATUS_NO_RESOURCE;
	q = rnic_queue(fn, GDMA_CQ, c.region, c.doorbell);
	if (!q)
		return GDMA_STATUS_NO_RESOURCE;
	q->parent_eq = c.eq_id;
	fn->rcq[i].q = q;
	fn->rcq[i].users = 0;
	gdma_put_le64(r, RNIC_CQ_HANDLE_BASE + i);
	gdma_put_le32(r + 8, q->id);
	return 0;
}

static int rnic_cq_index(const struct mana_fn *fn, uint64_t handle)
{
	uint64_t i = handle - RNIC_CQ_HANDLE_BASE;

	return handle >= RNIC_CQ_HANDLE_BASE && i < MAX_RNIC_CQS &&
	       fn->rcq[i].q ? (int)i : -1;
}

static uint32_t rnic_destroy_cq(struct mana_fn *fn, uint64_t handle)
{
	int i = rnic_cq_index(fn, handle);

	/* the kernel destroys a QP before its CQs */
	if (i < 0 || fn->rcq[i].users)
		return GDMA_STATUS_BAD_ARG;
	q_free(fn->rcq[i].q);
	fn->rcq[i].q = NULL;
	return 0;
}

/*
 * MANA_IB_CREATE_RC_QP: four queues (requester and responder SQ and RQ;
 * the FMR queue a user's QP has not), each over its region.  The QP
 * number 6.12 reports is the responder RQ's id.  Its RC transport (RoCEv2
 * on the wire) is rc.c's: requester SQ, responder RQ, requester RQ.
 */
static uint32_t rnic_create_rc_qp(struct mana_fn *fn, const uint8_t *req,
				  uint32_t len, uint8_t *r, uint32_t resp_len)
{
	static const enum gdma_queue_type type[MANA_RC_QUEUES] = {
		GDMA_SQ, GDMA_SQ, GDMA_SQ, GDMA_RQ, GDMA_RQ,
	};
	/*
	 * The ids come in groups of four, as our provider checks (and
	 * mana-emu makes them): requester SQ 4k, responder SQ 4k + 1,
	 * responder RQ 4k', requester RQ 4k' + 1; the QP number is the
	 * responder RQ's.  Both ranges lie above every Ethernet queue id.
	 */
	static const uint32_t rc_base[MANA_RC_QUEUES] = {
		RC_SEND_BASE, RC_SEND_BASE, 0, RC_RECV_BASE, RC_RECV_BASE,
	};
	static const uint32_t rc_low[MANA_RC_QUEUES] = { 0, 1, 0, 1, 0 };
	struct mana_ib_create_rc_qp c;
	uint64_t pd;
	int scq, rcq;
	uint32_t i, k;

	/* a user's QP (6.12 makes no other): no FMR queue */
	if (mana_ib_create_rc_qp_decode(req, len, &c) ||
	    resp_len < GDMA_RESP_HDR_SIZE + 32 || !db_valid(fn, c.doorbell) ||
	    c.flags != MANA_RC_FLAG_NO_FMR)
		return GDMA_STATUS_BAD_ARG;
	pd = c.pd - PD_HANDLE_BASE;
	scq = rnic_cq_index(fn, c.send_cq);
	rcq = rnic_cq_index(fn, c.recv_cq);
	if (pd >= MAX_PDS || !fn->pd_used[pd] || scq < 0 || rcq < 0)
		return GDMA_STATUS_BAD_ARG;
	for (k = 0; k < MANA_RC_QUEUES; k++)
		if (k != MANA_RC_QUEUE_FMR && !region_queue_ok(fn, c.region[k]))
			return GDMA_STATUS_BAD_ARG;
	for (i = 0; i < MAX_RC_QPS && fn->rcqp[i].used; i++)
		;
	if (i == MAX_RC_QPS)
		return GDMA_STATUS_NO_RESOURCE;
	memset(&fn->rcqp[i], 0, sizeof(fn->rcqp[i]));
	for (k = 0; k < MANA_RC_QUEUES; k++) {
		if (k == MANA_RC_QUEUE_FMR) {
			gdma_put_le32(r + 8 + 4 * k, 0xFFFFFFFFU);
			continue;
		}
		fn->rcqp[i].q[k] = rnic_queue(fn, type[k], c.region[k], c.doorbell);
		if (!fn->rcqp[i].q[k]) {
			while (k--)
				if (fn->rcqp[i].q[k])
					q_free(fn->rcqp[i].q[k]);
			memset(&fn->rcqp[i], 0, sizeof(fn->rcqp[i]));
			return GDMA_STATUS_NO_RESOURCE;
		}
		fn->rcqp[i].q[k]->id = rc_base[k] + 4 * (i + 1) + rc_low[k];
		gdma_put_le32(r + 8 + 4 * k, fn->rcqp[i].q[k]->id);
	}
	{
		struct vrc_qp_desc d = {
			.pd = (uint32_t)pd,
			.send_cq = fn->rcq[scq].q, .recv_cq = fn->rcq[rcq].q,
		};
		struct queue *sq = fn->rcqp[i].q[0], *rq = fn->rcqp[i].q[4];
		struct queue *rrq = fn->rcqp[i].q[3];

		d.sq = (struct vrc_ring_desc){ sq, sq->size, sq->id };
		d.rq = (struct vrc_ring_desc){ rq, rq->size, rq->id };
		d.rrq = (struct vrc_ring_desc){ rrq, rrq->size, rrq->id };
		if (vrc_qp_create(fn->rc, &d, &fn->rcqp[i].vqp)) {
			for (k = 0; k < MANA_RC_QUEUES; k++)
				if (fn->rcqp[i].q[k])
					q_free(fn->rcqp[i].q[k]);
			memset(&fn->rcqp[i], 0, sizeof(fn->rcqp[i]));
			return GDMA_STATUS_NO_RESOURCE;
		}
	}
	fn->rcqp[i].used = true;
	fn->rcqp[i].pd = (uint32_t)pd;
	fn->rcqp[i].send_cq = (uint32_t)scq;
	fn->rcqp[i].recv_cq = (uint32_t)rcq;
	fn->rcq[scq].users++;
	fn->rcq[rcq].users++;
	gdma_put_le64(r, RC_QP_HANDLE_BASE + i);
	return 0;
}

static int rc_qp_index(const struct mana_fn *fn, uint64_t handle)
{
	uint64_t i = handle - RC_QP_HANDLE_BASE;

	return handle >= RC_QP_HANDLE_BASE && i < MAX_RC_QPS &&
	       fn->rcqp[i].used ? (int)i : -1;
}

static uint32_t rnic_destroy_rc_qp(struct mana_fn *fn, uint64_t handle)
{
	int i = rc_qp_index(fn, handle);
	uint32_t k;

	if (i < 0)
		return GDMA_STATUS_BAD_ARG;
	vrc_qp_destroy(fn->rc, fn->rcqp[i].vqp);
	for (k = 0; k < MANA_RC_QUEUES; k++)
		if (fn->rcqp[i].q[k])
			q_free(fn->rcqp[i].q[k]);
	fn->rcq[fn->rcqp[i].send_cq].users--;
	fn->rcq[fn->rcqp[i].recv_cq].users--;
	memset(&fn->rcqp[i], 0, sizeof(fn->rcqp[i]));
	return 0;
}

/*
 * MANA_IB_SET_QP_STATE: mana_ib checks no transition, so the device
 * refuses what the QP state machine does not take, as mana-emu's device
 * does (emulator/lib/qp_modify.h: what the hardware answers is the open
 * question).  The attributes then go to the RC transport; the address
 * vector names the path: our MAC and GID, the peer's, the UDP source port
 * the kernel chose.
 */
static uint32_t rnic_set_qp_state(struct mana_fn *fn, const uint8_t *req,
				  uint32_t len)
{
	struct mana_ib_set_qp_state st;
	struct vrc_attr a = { 0 };
	struct qp_values v;
	uint32_t next;
	int i;

	if (mana_ib_set_qp_state_decode(req, len, &st))
		return GDMA_STATUS_BAD_ARG;
	i = rc_qp_index(fn, st.qp);
	if (i < 0 || ((st.attr_mask & IB_QP_STATE) && st.state > IB_QPS_ERR))
		return GDMA_STATUS_BAD_ARG;
	/* 6.12's request: no timeout or max_rd_atomic to look at */
	v = (struct qp_values){
		.path_mtu = (uint8_t)(st.path_mtu > 255 ? 255 : st.path_mtu),
		.max_dest_rd_atomic = (uint8_t)(st.max_dest_rd_atomic > 255 ?
						255 : st.max_dest_rd_atomic),
		.min_rnr_timer = (uint8_t)(st.min_rnr_timer > 255 ?
					   255 : st.min_rnr_timer),
		.retry_cnt = (uint8_t)(st.retry_cnt > 255 ? 255 : st.retry_cnt),
		.rnr_retry = (uint8_t)(st.rnr_retry > 255 ? 255 : st.rnr_retry),
		.dest_qpn = st.dest_qpn, .rq_psn = st.rq_psn,
		.sq_psn = st.sq_psn,
	};
	next = st.attr_mask & IB_QP_STATE ? st.state : fn->rcqp[i].state;
	if (st.attr_mask >> 32 ||
	    !qp_transition_ok(false, fn->rcqp[i].state, next,
			      (uint32_t)st.attr_mask | QPM_STATE) ||
	    !qp_values_ok(&v, (uint32_t)st.attr_mask)) {
		if (fn->ops.verbose)
			fn_log("RNIC: QP %#x: SET_QP_STATE %u -> %u mask %#llx refused",
			       fn->rcqp[i].q[4]->id, fn->rcqp[i].state, next,
			       (unsigned long long)st.attr_mask);
		return GDMA_STATUS_BAD_ARG;
	}
	a.mask = st.attr_mask;
	a.state = st.state;
	a.path_mtu = st.path_mtu;
	a.rq_psn = st.rq_psn;
	a.sq_psn = st.sq_psn;
	a.dest_qpn = st.dest_qpn;
	a.retry_cnt = st.retry_cnt;
	a.rnr_retry = st.rnr_retry;
	a.min_rnr_timer = st.min_rnr_timer;
	a.max_dest_rd_atomic = st.max_dest_rd_atomic;
	memcpy(a.smac, st.src_mac, 6);
	memcpy(a.dmac, st.dest_mac, 6);
	memcpy(a.sgid, st.src_addr, 16);
	memcpy(a.dgid, st.dest_addr, 16);
	a.sport = st.src_port;
	a.traffic_class = st.traffic_class;
	a.hop_limit = st.hop_limit;
	if (vrc_qp_modify(fn->rc, fn->rcqp[i].vqp, &a))
		return GDMA_STATUS_BAD_ARG;
	if (st.attr_mask & IB_QP_STATE) {
		fn->rcqp[i].state = st.state;
		if (fn->ops.verbose)
			fn_log("RNIC: QP %#x -> state %u (dest QP %#x)",
			       fn->rcqp[i].q[4]->id, st.state, st.dest_qpn);
	}
	return 0;
}

static uint32_t rnic_request(struct mana_fn *fn, const struct gdma_req_hdr *h,
			     const uint8_t *req, uint32_t len, uint8_t *resp,
			     uint32_t resp_len)
{
	uint8_t *r = resp + GDMA_RESP_HDR_SIZE;
	struct mana_ib_create_adapter ca;
	struct mana_ib_config_addr a;
	uint64_t adapter, obj;
	int i;

	if (!fn->ib_registered || h->dev_id != GDMA_DEVICE_MANA_IB)
		return GDMA_STATUS_BAD_ARG;
	switch (h->msg_type) {
	case MANA_IB_GET_ADAPTER_CAP:
		if (resp_len < GDMA_RESP_HDR_SIZE + MANA_IB_ADAPTER_CAPS_SIZE)
			return GDMA_STATUS_BAD_ARG;
		mana_ib_adapter_caps_encode(&adapter_caps, r);
		return 0;
	case MANA_IB_CREATE_ADAPTER:
		/* one adapter per function; its events go to a live EQ */
		if (mana_ib_create_adapter_decode(req, len, &ca) ||
		    resp_len < GDMA_RESP_HDR_SIZE + 8 || fn->rnic.live ||
		    !q_find(fn, GDMA_EQ, ca.notify_eq_id))
			return GDMA_STATUS_BAD_ARG;
		fn->rnic.live = true;
		fn->rnic.notify_eq = ca.notify_eq_id;
		fn->st.rnic_adapters++;
		gdma_put_le64(r, ADAPTER_HANDLE);
		return 0;
	default:
		break;
	}
	if (mana_ib_adapter_decode(req, len, &adapter) || !fn->rnic.live ||
	    adapter != ADAPTER_HANDLE)
		return GDMA_STATUS_BAD_ARG;
	switch (h->msg_type) {
	case MANA_IB_DESTROY_ADAPTER:
		for (i = 0; i < MAX_RNIC_CQS; i++)
			if (fn->rcq[i].q)
				return GDMA_STATUS_BAD_ARG;	/* objects first */
		/* its addresses go with it */
		memset(&fn->rnic, 0, sizeof(fn->rnic));
		fn->st.rnic_gids = fn->st.rnic_macs = 0;
		return 0;
	case MANA_IB_CONFIG_IP_ADDR:
		if (mana_ib_config_ip_decode(req, len, &a))
			return GDMA_STATUS_BAD_ARG;
		return rnic_config_ip(fn, &a);
	case MANA_IB_CONFIG_MAC_ADDR:
		if (mana_ib_config_mac_decode(req, len, &a))
			return GDMA_STATUS_BAD_ARG;
		return rnic_config_mac(fn, &a);
	case MANA_IB_CREATE_CQ:
		return rnic_create_cq(fn, req, len, r, resp_len);
	case MANA_IB_DESTROY_CQ:
		if (mana_ib_adapter_obj_decode(req, len, &adapter, &obj))
			return GDMA_STATUS_BAD_ARG;
		return rnic_destroy_cq(fn, obj);
	case MANA_IB_CREATE_RC_QP:
		return rnic_create_rc_qp(fn, req, len, r, resp_len);
	case MANA_IB_DESTROY_RC_QP:
		if (mana_ib_adapter_obj_decode(req, len, &adapter, &obj))
			return GDMA_STATUS_BAD_ARG;
		return rnic_destroy_rc_qp(fn, obj);
	case MANA_IB_SET_QP_STATE:
		return rnic_set_qp_state(fn, req, len);
	default:
		return GDMA_STATUS_CMD_UNSUPPORTED;
	}
}

/* Fill @resp (zeroed, @resp_len bytes) and return the status. */
static uint32_t hwc_dispatch(struct mana_fn *fn, const struct gdma_req_hdr *h,
			     const uint8_t *req, uint32_t len, uint8_t *resp,
			     uint32_t resp_len)
{
	uint8_t *r = resp + GDMA_RESP_HDR_SIZE;

	/* every reply body below fits the driver's own response struct */
	switch (h->msg_type) {
	case GDMA_VERIFY_VF_DRIVER_VERSION:
		if (resp_len < GDMA_RESP_HDR_SIZE + 40)
			return GDMA_STATUS_BAD_ARG;
		gdma_put_le64(r, 1);		/* GDMA_PROTOCOL_V1 */
		return 0;			/* pf_cap_flags: none */
	case GDMA_QUERY_MAX_RESOURCES:
		if (resp_len < GDMA_RESP_HDR_SIZE + 40)
			return GDMA_STATUS_BAD_ARG;
		gdma_put_le32(r + 4, 64);	/* max_sq */
		gdma_put_le32(r + 8, 64);	/* max_rq */
		gdma_put_le32(r + 12, 64);	/* max_cq */
		gdma_put_le32(r + 16, 64);	/* max_eq */
		gdma_put_le32(r + 20, DB_PAGES);	/* max_db */
		gdma_put_le32(r + 24, 64);	/* max_mst */
		gdma_put_le32(r + 28, 64);	/* max_cq_mod_ctx */
		gdma_put_le32(r + 32, 64);	/* max_mod_cq */
		gdma_put_le32(r + 36, MANA_FN_MSIX);	/* max_msix */
		return 0;
	case GDMA_LIST_DEVICES:
		if (resp_len < GDMA_RESP_HDR_SIZE + 8 + 4 * 64)
			return GDMA_STATUS_BAD_ARG;
		/*
		 * The RDMA device too: 6.12's mana always adds the mana.rdma
		 * auxiliary device, and mana_ib_probe registers gc->mana_ib
		 * whether or not it was listed (a NULL gdma_context oops when
		 * it was not); an RDMA-capable VF lists it.
		 */
		gdma_put_le32(r, 3);
		gdma_put_le32(r + 8, GDMA_DEVICE_HWC);
		gdma_put_le32(r + 12, GDMA_DEVICE_MANA);
		gdma_put_le32(r + 16, GDMA_DEVICE_MANA_IB);
		return 0;
	case GDMA_REGISTER_DEVICE:
		if (resp_len < GDMA_RESP_HDR_SIZE + 12 ||
		    (h->dev_id != GDMA_DEVICE_MANA &&
		     h->dev_id != GDMA_DEVICE_MANA_IB))
			return GDMA_STATUS_BAD_ARG;
		if (h->dev_id == GDMA_DEVICE_MANA)
			fn->registered = true;
		else
			fn->ib_registered = true;
		gdma_put_le32(r, PDID);
		gdma_put_le32(r + 4, GPA_MKEY);
		gdma_put_le32(r + 8, MANA_DB);
		return 0;
	case GDMA_DEREGISTER_DEVICE:
		if (h->dev_id == GDMA_DEVICE_MANA)
			fn->registered = false;
		else if (h->dev_id == GDMA_DEVICE_MANA_IB)
			fn->ib_registered = false;
		return 0;
	case GDMA_GENERATE_TEST_EQE:
		return req_test_eqe(fn, req, len);
	case GDMA_CREATE_QUEUE:
		if (resp_len < GDMA_RESP_HDR_SIZE + 4)
			return GDMA_STATUS_BAD_ARG;
		return req_create_queue(fn, req, len, resp);
	case GDMA_DISABLE_QUEUE:
		return req_disable_queue(fn, req, len);
	case GDMA_CREATE_DMA_REGION:
		if (resp_len < GDMA_RESP_HDR_SIZE + 8)
			return GDMA_STATUS_BAD_ARG;
		return req_create_dma_region(fn, req, len, resp);
	case GDMA_DMA_REGION_ADD_PAGES:
		return req_region_add_pages(fn, req, len);
	case GDMA_DESTROY_DMA_REGION:
		return req_destroy_dma_region(fn, req, len);
	case GDMA_ALLOCATE_RESOURCE_RANGE:
		return req_alloc_range(fn, req, len, r, resp_len);
	case GDMA_DESTROY_RESOURCE_RANGE:
		return req_destroy_range(fn, req, len);
	case GDMA_CREATE_PD:
		return req_create_pd(fn, req, len, r, resp_len);
	case GDMA_DESTROY_PD:
		return req_destroy_pd(fn, req, len);
	case GDMA_CREATE_MR:
		return req_create_mr(fn, req, len, r, resp_len);
	case GDMA_DESTROY_MR:
		return req_destroy_mr(fn, req, len);
	default:
		if (h->msg_type >= 0x30000 && h->msg_type < 0x40000)
			return rnic_request(fn, h, req, len, resp, resp_len);
		return mana_request(fn, h, req, len, resp, resp_len);
	}
}

/* One request from the HWC SQ's WQE at @off; its response to the RQ. */
static int hwc_request(struct mana_fn *fn, uint32_t off, uint32_t *wqe_size)
{
	static uint8_t req[HWC_MSG_MAX], resp[HWC_MSG_MAX];
	uint8_t wqe[GDMA_MAX_SQE_SIZE], rwqe[GDMA_MAX_RQE_SIZE];
	uint8_t cqe[GDMA_CQE_DATA_SIZE] = { 0 };
	struct gdma_wqe_view v = { 0 }, rv = { 0 };
	struct gdma_sge sge, rsge;
	struct gdma_req_hdr h;
	uint32_t resp_len, status, roff;
	void *p;

	if (q_read(fn, fn->hwc_sq, off, wqe, sizeof(wqe)) ||
	    gdma_wqe_view_decode(wqe, sizeof(wqe), GDMA_SQ, &v) ||
	    v.hdr.num_sge != 1) {
		fn_log("HWC SQ: malformed WQE at %#x; channel stopped", off);
		return -EINVAL;
	}
	*wqe_size = v.size;
	gdma_wqe_view_sge(wqe, &v, 0, &sge);
	if (sge.size < GDMA_REQ_HDR_SIZE || sge.size > HWC_MSG_MAX ||
	    sge.mkey != GPA_MKEY || !(p = fn->ops.dma(fn->ops.ctx, sge.addr, sge.size))) {
		fn_log("HWC SQ: request buffer %#llx+%u (key %#x) refused",
		       (unsigned long long)sge.addr, sge.size, sge.mkey);
		fn->st.dma_faults++;
		return -EFAULT;
	}
	memcpy(req, p, sge.size);
	if (gdma_req_hdr_decode(req, sge.size, &h)) {
		fn_log("HWC: malformed request header (type %#x); dropped",
		       gdma_get_le32(req + 4));
		return 0;
	}
	resp_len = h.resp_size;
	if (resp_len < GDMA_RESP_HDR_SIZE || resp_len > HWC_MSG_MAX)
		resp_len = GDMA_RESP_HDR_SIZE;
	memset(resp, 0, resp_len);
	status = hwc_dispatch(fn, &h, req, sge.size, resp, resp_len);
	if (status == GDMA_STATUS_CMD_UNSUPPORTED) {
		fn->st.unsupported++;
		fn->st.last_unsupported = h.msg_type;
		fn_log("HWC: request %#x unsupported", h.msg_type);
	} else if (status && status != GDMA_STATUS_MORE_ENTRIES) {
		fn_log("HWC: request %#x failed: status %#x", h.msg_type, status);
	} else if (fn->ops.verbose) {
		fn_log("HWC: request %#x (device %#x) ok", h.msg_type, h.dev_id);
	}
	fn->st.requests++;
	gdma_resp_hdr_encode(&h, resp_len, status, resp);

	/* the response goes to the RQ's next posted WQE */
	roff = fn->hwc_rq->consumer;
	if (roff == fn->hwc_rq->tail) {
		fn_log("HWC RQ: no WQE posted for the response to %#x; dropped",
		       h.msg_type);
		return 0;
	}
	if (q_read(fn, fn->hwc_rq, roff, rwqe, sizeof(rwqe)) ||
	    gdma_wqe_view_decode(rwqe, sizeof(rwqe), GDMA_RQ, &rv) ||
	    rv.hdr.num_sge != 1) {
		fn_log("HWC RQ: malformed WQE at %#x; channel stopped", roff);
		return -EINVAL;
	}
	gdma_wqe_view_sge(rwqe, &rv, 0, &rsge);
	if (rsge.size < resp_len || rsge.mkey != GPA_MKEY ||
	    !(p = fn->ops.dma(fn->ops.ctx, rsge.addr, resp_len))) {
		fn_log("HWC RQ: response buffer %#llx+%u refused",
		       (unsigned long long)rsge.addr, rsge.size);
		fn->st.dma_faults++;
		return -EFAULT;
	}
	memcpy(p, resp, resp_len);
	fn->hwc_rq->consumer += rv.size;
	/* hwc_rx_oob: wqe_offset at dword 3, tx_oob_data_size at dword 6 */
	gdma_put_le32(cqe + 12, roff & (fn->hwc_rq->size - 1));
	gdma_put_le32(cqe + 24, resp_len);
	return cq_post(fn, fn->hwc_cq, cqe, fn->hwc_rq->id, false);
}

static void hwc_sq_ring(struct mana_fn *fn, uint32_t tail)
{
	struct queue *sq = fn->hwc_sq;
	uint32_t size;

	sq->tail = tail;
	while (sq->consumer != sq->tail) {
		if (hwc_request(fn, sq->consumer, &size)) {
			sq->consumer = sq->tail;	/* stop: fail closed */
			return;
		}
		sq->consumer += size;
	}
}

/* ------------------------------------------------------------------------ */
/* Ethernet SQs: every WQE is a frame; it is read, counted and completed */

static struct queue *wqobj_cq(struct mana_fn *fn, const struct queue *wq)
{
	int i;

	for (i = 0; i < MAX_WQOBJS; i++)
		if (fn->wqobj[i].wq == wq)
			return fn->wqobj[i].cq;
	return NULL;
}

/*
 * Host address of the start of [addr, addr + len) under memory key @key
 * and in *n how many of its bytes follow contiguously: the kernel's GPA
 * key names guest physical memory, an MR's lkey its virtual range (up to
 * the end of a 4 KiB page at a time).  NULL when the key is unknown, the
 * range leaves the MR or shared memory, or a write meets a read-only MR.
 */
static uint8_t *sge_piece(struct mana_fn *fn, uint32_t key, uint64_t addr,
			  uint32_t len, bool write, uint32_t *n)
{
	uint64_t i = (uint64_t)key - MR_KEY_BASE, off;
	uint8_t *p;

	if (key == GPA_MKEY) {
		*n = len;
		p = fn->ops.dma(fn->ops.ctx, addr, len);
	} else {
		if (key < MR_KEY_BASE || i >= MAX_MRS || !fn->mr[i].used ||
		    (write && !(fn->mr[i].access & GDMA_ACCESS_LOCAL_WRITE)) ||
		    addr < fn->mr[i].va || addr - fn->mr[i].va > fn->mr[i].length ||
		    len > fn->mr[i].length - (addr - fn->mr[i].va))
			return NULL;
		off = fn->mr[i].offset + (addr - fn->mr[i].va);
		if (off / MANA_PAGE_SIZE >= fn->mr[i].npages)
			return NULL;
		*n = MANA_PAGE_SIZE - off % MANA_PAGE_SIZE;
		if (*n > len)
			*n = len;
		p = fn->ops.dma(fn->ops.ctx, fn->mr[i].pages[off / MANA_PAGE_SIZE] +
				off % MANA_PAGE_SIZE, *n);
	}
	if (!p)
		fn->st.dma_faults++;
	return p;
}

/* Copy @len bytes of an SGE's memory to @dst; -EFAULT if refused. */
static int sge_read(struct mana_fn *fn, const struct gdma_sge *sge,
		    uint8_t *dst, uint32_t len)
{
	uint32_t done = 0, n;
	uint8_t *p;

	for (; done < len; done += n) {
		p = sge_piece(fn, sge->mkey, sge->addr + done, len - done, false, &n);
		if (!p)
			return -EFAULT;
		memcpy(dst + done, p, n);
	}
	return 0;
}

/* ... and @len bytes of @src into it. */
static int sge_write(struct mana_fn *fn, const struct gdma_sge *sge,
		     const uint8_t *src, uint32_t len)
{
	uint32_t done = 0, n;
	uint8_t *p;

	for (; done < len; done += n) {
		p = sge_piece(fn, sge->mkey, sge->addr + done, len - done, true, &n);
		if (!p)
			return -EFAULT;
		memcpy(p, src + done, n);
	}
	return 0;
}

/*
 * Gather a frame from the WQE's SGEs (the kernel's: GPA key, one linear
 * part and page fragments; a user's: MR keys); -EFAULT when an SGE leaves
 * its MR or shared memory.
 */
static int tx_gather(struct mana_fn *fn, const uint8_t *wqe,
		     const struct gdma_wqe_view *v, uint8_t *frame,
		     uint32_t *len)
{
	uint32_t i, n = 0;

	for (i = 0; i < v->hdr.num_sge; i++) {
		struct gdma_sge sge;

		gdma_wqe_view_sge(wqe, v, i, &sge);
		if (sge.size > MANA_FN_MAX_FRAME - n)
			return -EINVAL;
		if (sge_read(fn, &sge, frame + n, sge.size))
			return -EFAULT;
		n += sge.size;
	}
	*len = n;
	return 0;
}

static void mana_sq_ring(struct mana_fn *fn, struct queue *sq, uint32_t tail)
{
	static uint8_t frame[MANA_FN_MAX_FRAME];
	struct queue *cq = wqobj_cq(fn, sq);
	uint8_t wqe[GDMA_MAX_SQE_SIZE], cqe[GDMA_CQE_DATA_SIZE];
	struct gdma_wqe_view v = { 0 };
	uint32_t len;
	uint8_t type;

	sq->tail = tail;
	while (cq && sq->consumer != sq->tail) {
		if (q_read(fn, sq, sq->consumer, wqe, sizeof(wqe)) ||
		    gdma_wqe_view_decode(wqe, sizeof(wqe), GDMA_SQ, &v) ||
		    v.hdr.num_sge == 0) {
			fn_log("SQ %u: malformed WQE at %#x; queue stopped",
			       sq->id, sq->consumer);
			sq->consumer = sq->tail;
			return;
		}
		type = CQE_TX_OKAY;
		if (tx_gather(fn, wqe, &v, frame, &len) || len < 14) {
			fn_log("SQ %u: frame at %#x refused", sq->id, sq->consumer);
			type = CQE_TX_INVALID_OOB;
		} else {
			fn->st.tx_frames++;
			fn->st.tx_bytes += len;
			if (fn->ops.frame)
				fn->ops.frame(fn->ops.ctx, frame, len);
		}
		mana_tx_comp_encode_one(cqe, type, sq->consumer / GDMA_WQE_BU_SIZE);
		sq->consumer += v.size;
		cq_post(fn, cq, cqe, sq->id, true);
	}
}

/* ------------------------------------------------------------------------ */
/* RX: a frame from the wire into the default RX object's next WQE */

int mana_fn_rx(struct mana_fn *fn, const uint8_t *frame, uint32_t len)
{
	struct mana_rx_comp_oob o = { .cqe_type = CQE_RX_OKAY };
	uint8_t wqe[GDMA_MAX_RQE_SIZE], cqe[GDMA_CQE_DATA_SIZE];
	struct gdma_wqe_view v = { 0 };
	struct queue *rq, *cq;
	uint32_t i, done = 0, off;

	/* RoCEv2 for one of the RC QPs is the RNIC's, whatever RX does */
	if (fn->rc && vrc_rx(fn->rc, frame, len))
		return 0;
	rq = fn->rx_enabled ? wqobj_rq(fn, fn->default_rxobj) : NULL;
	cq = rq ? wqobj_cq(fn, rq) : NULL;
	if (!cq || len == 0 || len > MANA_FN_MAX_FRAME) {
		fn->st.rx_drops++;
		return -ENODEV;
	}
	if (rq->consumer == rq->tail) {
		fn->st.rx_drops++;	/* no buffer posted: the NIC drops */
		return -EAGAIN;
	}
	off = rq->consumer;
	if (q_read(fn, rq, off, wqe, sizeof(wqe)) ||
	    gdma_wqe_view_decode(wqe, sizeof(wqe), GDMA_RQ, &v)) {
		fn_log("RQ %u: malformed WQE at %#x; queue stopped", rq->id, off);
		rq->consumer = rq->tail;
		fn->st.rx_drops++;
		return -EINVAL;
	}
	for (i = 0; i < v.hdr.num_sge && done < len; i++) {
		struct gdma_sge sge;
		uint32_t n;

		gdma_wqe_view_sge(wqe, &v, i, &sge);
		n = len - done < sge.size ? len - done : sge.size;
		if (sge_write(fn, &sge, frame + done, n))
			break;
		done += n;
	}
	rq->consumer += v.size;
	if (done < len) {
		o.cqe_type = CQE_RX_TRUNCATED;
		fn->st.rx_drops++;
	} else {
		fn->st.rx_frames++;
	}
	/* no checksum offload claimed: the stack checks them itself */
	o.ppi[0].pkt_len = (uint16_t)done;
	o.rx_wqe_offset = off / GDMA_WQE_BU_SIZE;
	if (mana_rx_comp_oob_encode(&o, cqe))
		return -EINVAL;
	return cq_post(fn, cq, cqe, rq->id, false);
}

/* ------------------------------------------------------------------------ */
/* BARs */

uint64_t mana_fn_bar_size(unsigned int bar)
{
	return bar == 0 ? MANA_FN_BAR0_SIZE : bar == 4 ? MANA_FN_BAR4_SIZE : 0;
}

static void doorbell(struct mana_fn *fn, uint32_t page, uint32_t off,
		     uint64_t v)
{
	enum gdma_db_kind kind;
	struct gdma_doorbell db;
	bool is_short;
	struct queue *q;
	int i;

	if (gdma_doorbell_kind_at(off, &kind, &is_short) || is_short ||
	    gdma_doorbell_decode(kind, v, &db)) {
		fn_log("doorbell page %u +%#x: value %#llx refused", page, off,
		       (unsigned long long)v);
		return;
	}
	switch (kind) {
	case GDMA_DB_SQ:
		if (fn->hwc_sq && page == HWC_DB && db.id == fn->hwc_sq->id) {
			hwc_sq_ring(fn, db.tail);
			return;
		}
		q = q_find(fn, GDMA_SQ, db.id);
		if (q && page == q->db && (i = rc_qp_of_queue(fn, db.id)) >= 0) {
			/* an RC QP's requester SQ (its responder SQ: no doorbell) */
			if (q == fn->rcqp[i].q[0])
				vrc_sq_doorbell(fn->rc, fn->rcqp[i].vqp, db.tail);
			return;
		}
		if (q && page == q->db) {
			mana_sq_ring(fn, q, db.tail);
			return;
		}
		q = NULL;
		break;
	case GDMA_DB_RQ:
		if (fn->hwc_rq && page == HWC_DB && db.id == fn->hwc_rq->id) {
			fn->hwc_rq->tail = db.tail;
			return;
		}
		q = q_find(fn, GDMA_RQ, db.id);
		if (q && page != q->db)
			q = NULL;
		if (q && (i = rc_qp_of_queue(fn, db.id)) >= 0)
			vrc_rq_doorbell(fn->rc, fn->rcqp[i].vqp,
					q == fn->rcqp[i].q[3], db.tail);
		break;
	case GDMA_DB_RQ_CLIENT:
		/* our provider's arm: an ARMED_CMPL once the PSN is acknowledged */
		q = q_find(fn, GDMA_RQ, db.id);
		i = q && page == q->db ? rc_qp_of_queue(fn, db.id) : -1;
		if (i >= 0 && q == fn->rcqp[i].q[3])
			vrc_arm(fn->rc, fn->rcqp[i].vqp, db.client_low);
		else
			fn_log("doorbell page %u: arm of no RC QP's queue %u",
			       page, db.id);
		return;
	case GDMA_DB_EQ:
		/*
		 * The driver takes at most 5 EQEs per interrupt, then arms
		 * with its head (entries from one lap in, modulo 8 laps): any
		 * entry past it raises the vector again, or it would wait
		 * forever on events already written.
		 */
		q = q_find(fn, GDMA_EQ, db.id);
		if (q && db.arm) {
			uint64_t n = q->size / GDMA_EQE_SIZE;

			if ((q->produced + n) % (n << GDMA_OWNER_BITS) != db.tail)
				fn->ops.irq(fn->ops.ctx, q->msix);
		}
		return;
	case GDMA_DB_CQ:
		/*
		 * Arming with the driver's head (entries from one lap in,
		 * modulo 8 laps, as for EQs): completions already past it
		 * raise the event now, else the next one will.  Any page: the
		 * kernel arms on its device's, a user on its context's.
		 */
		q = q_find(fn, GDMA_CQ, db.id);
		if (q && db.arm) {
			uint64_t n = q->size / GDMA_CQE_SIZE;

			q->armed = true;
			if ((q->produced + n) % (n << GDMA_OWNER_BITS) != db.tail ||
			    q->wake)
				cq_event(fn, q);
			q->wake = false;
		}
		return;
	default:
		return;
	}
	if (!q) {
		fn_log("doorbell page %u: no queue %u", page, db.id);
		return;
	}
	q->tail = db.tail;
}

int mana_fn_bar_read(struct mana_fn *fn, unsigned int bar, uint64_t off,
		     void *buf, uint32_t len)
{
	uint8_t regs[0x20] = { 0 };
	uint8_t smc[32];
	int i;

	if (off >= mana_fn_bar_size(bar) || len > mana_fn_bar_size(bar) - off)
		return -EINVAL;
	memset(buf, 0, len);
	if (bar == 4) {
		memcpy(buf, fn->bar4 + off, len);
		return 0;
	}
	if (off + len <= sizeof(regs)) {
		gdma_put_le64(regs + REG_DB_PAGE_OFFSET, BAR0_DB);
		gdma_put_le32(regs + REG_DB_PAGE_SIZE, GDMA_DB_PAGE_SIZE);
		gdma_put_le64(regs + REG_SHM_OFFSET, BAR0_SHM);
		memcpy(buf, regs + off, len);
	} else if (off >= BAR0_SHM && off + len <= BAR0_SHM + sizeof(smc)) {
		for (i = 0; i < SMC_DWORDS; i++)
			gdma_put_le32(smc + 4 * i, fn->smc[i]);
		memcpy(buf, smc + (off - BAR0_SHM), len);
	}
	/* other registers and the doorbells read as zero */
	return 0;
}

int mana_fn_bar_write(struct mana_fn *fn, unsigned int bar, uint64_t off,
		      const void *buf, uint32_t len)
{
	uint64_t v = 0;

	if (off >= mana_fn_bar_size(bar) || len > mana_fn_bar_size(bar) - off)
		return -EINVAL;
	if (bar == 4) {
		memcpy(fn->bar4 + off, buf, len);
		return 0;
	}
	if (off >= BAR0_SHM && off < BAR0_SHM + 32) {
		if (len != 4 || off % 4) {
			fn_log("SMC: %u-byte write at %#llx ignored", len,
			       (unsigned long long)off);
			return 0;
		}
		memcpy(&v, buf, 4);
		fn->smc[(off - BAR0_SHM) / 4] = (uint32_t)v;
		if ((off - BAR0_SHM) / 4 == SMC_DWORDS - 1)
			smc_request(fn);
		return 0;
	}
	if (off >= BAR0_DB) {
		if (len != 8 || off % 8) {
			fn_log("doorbell: %u-byte write at %#llx ignored", len,
			       (unsigned long long)off);
			return 0;
		}
		memcpy(&v, buf, 8);
		doorbell(fn, (uint32_t)((off - BAR0_DB) / GDMA_DB_PAGE_SIZE),
			 (uint32_t)((off - BAR0_DB) % GDMA_DB_PAGE_SIZE), v);
		return 0;
	}
	fn_log("BAR0: %u-byte write at %#llx ignored", len,
	       (unsigned long long)off);
	return 0;
}

/* ------------------------------------------------------------------------ */

void mana_fn_reset(struct mana_fn *fn)
{
	hwc_destroy(fn);
	memset(fn->smc, 0, sizeof(fn->smc));
	memset(fn->bar4, 0, sizeof(fn->bar4));
	cfg_init(fn);
}

struct mana_fn *mana_fn_new(const struct mana_fn_ops *ops, const uint8_t mac[6])
{
	struct mana_fn *fn = calloc(1, sizeof(*fn));
	struct vrc_ops ro = rc_ops;

	if (!fn)
		return NULL;
	fn->ops = *ops;
	memcpy(fn->mac, mac, 6);
	mana_fn_reset(fn);
	ro.ctx = fn;
	fn->rc = vrc_dev_new(&ro, mac);
	if (!fn->rc) {
		free(fn);
		return NULL;
	}
	return fn;
}

void mana_fn_free(struct mana_fn *fn)
{
	if (!fn)
		return;
	hwc_destroy(fn);
	vrc_dev_free(fn->rc);
	free(fn);
}

void mana_fn_tick(struct mana_fn *fn)
{
	vrc_tick(fn->rc, vrc_now_ns());
}

void mana_fn_get_stats(const struct mana_fn *fn, struct mana_fn_stats *st)
{
	struct vrc_stats r;

	*st = fn->st;
	vrc_get_stats(fn->rc, &r);
	st->rc_tx_packets = r.tx_packets;
	st->rc_rx_packets = r.rx_packets;
	st->rc_local_packets = r.local_packets;
	st->rc_retransmits = r.retransmits;
	st->rc_naks = r.rnr_naks_tx + r.seq_naks_tx;
	st->rc_errors = r.errors;
	st->rc_bad_packets = r.bad_packets;
}
