// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The emulated mana_ib kernel driven straight through its uverbs ABI, with
 * no libibverbs and no provider: write() commands and RDMA_VERBS_IOCTL
 * methods built by hand, checking the raw-packet control path's
 * rejections, what a created queue looks like to the device, the doorbell
 * mapping, and that closing the fd releases everything.
 *
 * Usage (under mana-emu --ports=2): test_emu_kernel_abi
 *        (under mana-emu --netdev-up): test_emu_kernel_abi --netdev-up
 * The kernel era (--kernel) decides what some commands answer; the test
 * reads it from MANA_EMU_OPTIONS and checks that era's answers.
 */
#include <infiniband/verbs.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/mana-abi.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "check.h"
#include "emulator/mana_emu.h"

#define DEV "/dev/infiniband/uverbs0"
#define PAGE 4096UL
#define DRIVER_ID 20
/* mana-emu's default --max-qp-wr; 6.2's fixed MAX_SEND_BUFFERS_PER_QUEUE */
#define MAX_QP_WR (kver >= 6008 ? 8192 : 256)

#include "uverbs_raw.h"

static long kver;		/* the emulated kernel, MAJOR * 1000 + MINOR */
#define ROBUST_UDATA (kver >= 7001)	/* driver data tails checked */
#define RNIC (kver >= 6010)		/* CQ response, port attributes */
/*
 * The per-vPort EQ series (7.2): cfg_vport's errno as is (before, mana_ib
 * remapped mana_cfg_vport()'s EBUSY to ENODEV), a PD stays on its first
 * port, the RSS QP takes a vport reference, one RSS QP per vport.
 */
#define VPORT_REFS (kver >= 7002)
#define VPORT_BUSY (VPORT_REFS ? EBUSY : ENODEV)

/* ---- emulator test API -------------------------------------------------- */

static int emu_counts(struct mana_emu_counts *out)
{
	int (*fn)(struct mana_emu_counts *) =
		(typeof(fn))dlsym(RTLD_DEFAULT, MANA_EMU_OBJECT_COUNTS_SYM);

	return fn ? fn(out) : -1;
}

static int emu_queue(uint32_t type, uint32_t id, struct mana_emu_queue_info *q)
{
	int (*fn)(uint32_t, uint32_t, struct mana_emu_queue_info *) =
		(typeof(fn))dlsym(RTLD_DEFAULT, MANA_EMU_QUEUE_INFO_SYM);

	return fn ? fn(type, id, q) : -ENOSYS;
}

static int emu_rss(uint32_t port, struct mana_emu_rss_info *r)
{
	int (*fn)(uint32_t, struct mana_emu_rss_info *) =
		(typeof(fn))dlsym(RTLD_DEFAULT, MANA_EMU_RSS_INFO_SYM);

	return fn ? fn(port, r) : -ENOSYS;
}

/* ---- verbs over raw commands ---------------------------------------------- */

struct kctx {
	int fd, async_fd;
	uint32_t ncv;
	uint32_t pd, pd2;
	uint8_t *mem;		/* 1 MiB registered, queue buffers carved from it */
	uint32_t lkey;
};

static int k_open(struct kctx *k)
{
	struct ib_uverbs_get_context_resp resp = { .async_fd = -1 };
	struct ib_uverbs_get_context cmd = { .response = (uintptr_t)&resp };

	memset(k, 0, sizeof(*k));
	k->fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (k->fd < 0)
		return errno;
	if (uv_write(k->fd, IB_USER_VERBS_CMD_GET_CONTEXT, &cmd, sizeof(cmd),
		     NULL, 0, sizeof(resp)))
		return errno;
	k->async_fd = resp.async_fd;
	k->ncv = resp.num_comp_vectors;
	return 0;
}

static int k_pd(struct kctx *k, uint32_t *handle)
{
	struct ib_uverbs_alloc_pd_resp resp = {};
	struct ib_uverbs_alloc_pd cmd = { .response = (uintptr_t)&resp };
	int ret;

	ret = uv_write(k->fd, IB_USER_VERBS_CMD_ALLOC_PD, &cmd, sizeof(cmd),
		       NULL, 0, sizeof(resp));
	*handle = resp.pd_handle;
	return ret;
}

static int k_mr(struct kctx *k, void *addr, size_t len, uint32_t *lkey)
{
	struct ib_uverbs_reg_mr_resp resp = {};
	struct ib_uverbs_reg_mr cmd = {
		.response = (uintptr_t)&resp, .start = (uintptr_t)addr,
		.length = len, .hca_va = (uintptr_t)addr, .pd_handle = k->pd,
		.access_flags = IBV_ACCESS_LOCAL_WRITE,
	};
	int ret;

	ret = uv_write(k->fd, IB_USER_VERBS_CMD_REG_MR, &cmd, sizeof(cmd),
		       NULL, 0, sizeof(resp));
	*lkey = resp.lkey;
	return ret;
}

/* REG_MR of [addr, addr + len) at iova addr with @access; the MR handle. */
static int k_mr_access(struct kctx *k, void *addr, size_t len, uint32_t access,
		       uint32_t *handle)
{
	struct ib_uverbs_reg_mr_resp resp = {};
	struct ib_uverbs_reg_mr cmd = {
		.response = (uintptr_t)&resp, .start = (uintptr_t)addr,
		.length = len, .hca_va = (uintptr_t)addr, .pd_handle = k->pd,
		.access_flags = access,
	};
	int ret;

	ret = uv_write(k->fd, IB_USER_VERBS_CMD_REG_MR, &cmd, sizeof(cmd),
		       NULL, 0, sizeof(resp));
	*handle = resp.mr_handle;
	return ret;
}

static int k_dereg_mr(struct kctx *k, uint32_t handle)
{
	struct ib_uverbs_dereg_mr cmd = { .mr_handle = handle };

	return uv_write(k->fd, IB_USER_VERBS_CMD_DEREG_MR, &cmd, sizeof(cmd),
			NULL, 0, 0);
}

/* CREATE_CQ with @udata_len bytes of mana_ib_create_cq. */
static int k_cq_ex(struct kctx *k, uint32_t cqe, uint64_t buf, uint32_t vector,
		   size_t udata_len, uint16_t flags, uint32_t *handle,
		   uint32_t *cqid)
{
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct mana_ib_create_cq_resp drv;
	} resp = { .drv.cqid = 0x12345678 };
	struct ib_uverbs_create_cq cmd = {
		.response = (uintptr_t)&resp, .user_handle = 0xC0FFEE,
		.cqe = cqe, .comp_vector = vector, .comp_channel = -1,
	};
	uint8_t drv[24] = { 0 };
	struct mana_ib_create_cq *u = (void *)drv;
	int ret;

	u->buf_addr = buf;
	u->flags = flags;
	if (udata_len > 16)
		drv[20] = 1;	/* a nonzero byte past the structure */
	ret = uv_write(k->fd, IB_USER_VERBS_CMD_CREATE_CQ, &cmd, sizeof(cmd),
		       drv, udata_len, sizeof(resp));
	if (handle)
		*handle = resp.core.cq_handle;
	if (cqid)
		*cqid = resp.drv.cqid;
	return ret;
}

static int k_cq(struct kctx *k, uint32_t cqe, void *buf, uint32_t *handle)
{
	return k_cq_ex(k, cqe, (uintptr_t)buf, 0, 16, 0, handle, NULL);
}

static int k_destroy_cq(struct kctx *k, uint32_t handle)
{
	struct ib_uverbs_destroy_cq_resp resp = { 7, 7 };
	struct ib_uverbs_destroy_cq cmd = { .response = (uintptr_t)&resp,
					    .cq_handle = handle };
	int ret;

	ret = uv_write(k->fd, IB_USER_VERBS_CMD_DESTROY_CQ, &cmd, sizeof(cmd),
		       NULL, 0, sizeof(resp));
	/* libibverbs waits for these counts: they must be written */
	if (!ret)
		CHECK(resp.comp_events_reported == 0 &&
		      resp.async_events_reported == 0, "destroy_cq response");
	return ret;
}

static int k_wq_ex(struct kctx *k, uint32_t pd, uint32_t cq, uint64_t buf,
		   uint32_t size, size_t udata_len, uint32_t *handle)
{
	struct ib_uverbs_ex_create_wq_resp resp = {};
	struct ib_uverbs_ex_create_wq cmd = {
		.wq_type = IBV_WQT_RQ, .user_handle = 1, .pd_handle = pd,
		.cq_handle = cq, .max_wr = 64, .max_sge = 1,
	};
	struct mana_ib_create_wq u = { .wq_buf_addr = buf, .wq_buf_size = size };
	int ret;

	ret = uv_write_ex(k->fd, IB_USER_VERBS_EX_CMD_CREATE_WQ, &cmd,
			  sizeof(cmd), &u, udata_len, &resp, sizeof(resp), 0);
	if (handle)
		*handle = resp.wq_handle;
	return ret;
}

static int k_wq(struct kctx *k, uint32_t cq, void *buf, uint32_t *handle)
{
	return k_wq_ex(k, k->pd, cq, (uintptr_t)buf, 4 * PAGE, 16, handle);
}

static int k_destroy_wq(struct kctx *k, uint32_t handle)
{
	struct ib_uverbs_ex_destroy_wq_resp resp = {};
	struct ib_uverbs_ex_destroy_wq cmd = { .wq_handle = handle };

	return uv_write_ex(k->fd, IB_USER_VERBS_EX_CMD_DESTROY_WQ, &cmd,
			   sizeof(cmd), NULL, 0, &resp, sizeof(resp), 0);
}

static int k_table(struct kctx *k, uint32_t log, const uint32_t *wqs,
		   uint32_t *handle)
{
	struct ib_uverbs_ex_create_rwq_ind_table_resp resp = {};
	struct {
		struct ib_uverbs_ex_create_rwq_ind_table cmd;
		uint32_t wqs[130];
	} c = { .cmd.log_ind_tbl_size = log };
	size_t n = 1u << log, len = sizeof(c.cmd) + ((n * 4 + 7) & ~7UL);
	int ret;

	memcpy(c.wqs, wqs, n * 4);
	ret = uv_write_ex(k->fd, IB_USER_VERBS_EX_CMD_CREATE_RWQ_IND_TBL, &c,
			  len, NULL, 0, &resp, sizeof(resp), 0);
	/* libibverbs refuses a response_length below 16 */
	if (!ret)
		CHECK(resp.response_length >= 16, "table response_length %u",
		      resp.response_length);
	if (handle)
		*handle = resp.ind_tbl_handle;
	return ret;
}

static int k_destroy_table(struct kctx *k, uint32_t handle)
{
	struct ib_uverbs_ex_destroy_rwq_ind_table cmd = {
		.ind_tbl_handle = handle };

	return uv_write_ex(k->fd, IB_USER_VERBS_EX_CMD_DESTROY_RWQ_IND_TBL,
			   &cmd, sizeof(cmd), NULL, 0, NULL, 0, 0);
}

struct sq_req {
	uint32_t pd, cq, wr, sge, port, size;
	uint64_t buf;
	size_t udata_len;
};

static int k_sq(struct kctx *k, const struct sq_req *r, uint32_t *handle,
		struct mana_ib_create_qp_resp *drv, uint32_t *qpn)
{
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct mana_ib_create_qp_resp drv;
	} resp = {};
	struct ib_uverbs_create_qp cmd = {
		.response = (uintptr_t)&resp, .user_handle = 2,
		.pd_handle = r->pd, .send_cq_handle = r->cq,
		.recv_cq_handle = r->cq, .max_send_wr = r->wr,
		.max_send_sge = r->sge, .qp_type = IBV_QPT_RAW_PACKET,
	};
	struct mana_ib_create_qp u = { .sq_buf_addr = r->buf,
				       .sq_buf_size = r->size, .port = r->port };
	int ret;

	ret = uv_write(k->fd, IB_USER_VERBS_CMD_CREATE_QP, &cmd, sizeof(cmd),
		       &u, r->udata_len, sizeof(resp));
	if (handle)
		*handle = resp.core.qp_handle;
	if (drv)
		*drv = resp.drv;
	if (qpn)
		*qpn = resp.core.qpn;
	return ret;
}

static struct sq_req sq_default(struct kctx *k, uint32_t cq, void *buf)
{
	return (struct sq_req){ .pd = k->pd, .cq = cq, .wr = 64, .sge = 1,
				.port = 1, .size = 4 * PAGE,
				.buf = (uintptr_t)buf,
				.udata_len = sizeof(struct mana_ib_create_qp) };
}

static int k_destroy_qp(struct kctx *k, uint32_t handle)
{
	struct ib_uverbs_destroy_qp_resp resp = { .events_reported = 9 };
	struct ib_uverbs_destroy_qp cmd = { .response = (uintptr_t)&resp,
					    .qp_handle = handle };
	int ret;

	ret = uv_write(k->fd, IB_USER_VERBS_CMD_DESTROY_QP, &cmd, sizeof(cmd),
		       NULL, 0, sizeof(resp));
	if (!ret)
		CHECK(resp.events_reported == 0, "destroy_qp response");
	return ret;
}

struct rss_req {
	uint32_t pd, table, port, key_len, fields;
	uint8_t func;
	uint32_t max_recv_sge;
	size_t udata_len;
};

static int k_rss(struct kctx *k, const struct rss_req *r, uint32_t *handle,
		 struct mana_ib_create_qp_rss_resp *out)
{
	struct {
		struct ib_uverbs_ex_create_qp_resp core;
		struct mana_ib_create_qp_rss_resp drv;
	} resp = {};
	struct ib_uverbs_ex_create_qp cmd = {
		.user_handle = 3, .pd_handle = r->pd,
		.qp_type = IBV_QPT_RAW_PACKET,
		.comp_mask = IB_UVERBS_CREATE_QP_MASK_IND_TABLE,
		.rwq_ind_tbl_handle = r->table, .max_recv_sge = r->max_recv_sge,
	};
	struct mana_ib_create_qp_rss u = {
		.rx_hash_fields_mask = r->fields, .rx_hash_function = r->func,
		.rx_hash_key_len = r->key_len, .port = r->port,
	};
	unsigned int i;
	int ret;

	for (i = 0; i < sizeof(u.rx_hash_key); i++)
		u.rx_hash_key[i] = (uint8_t)(i * 7 + 1);
	ret = uv_write_ex(k->fd, IB_USER_VERBS_EX_CMD_CREATE_QP, &cmd,
			  sizeof(cmd), &u, r->udata_len, &resp,
			  sizeof(resp.core), sizeof(resp.drv));
	if (handle)
		*handle = resp.core.base.qp_handle;
	if (out)
		*out = resp.drv;
	return ret;
}

static struct rss_req rss_default(struct kctx *k, uint32_t table)
{
	return (struct rss_req){ .pd = k->pd, .table = table, .port = 1,
				 .key_len = 40, .func = 1,
				 .fields = IBV_RX_HASH_SRC_IPV4 |
					   IBV_RX_HASH_DST_IPV4,
				 .udata_len = sizeof(struct mana_ib_create_qp_rss) };
}

static void k_close(struct kctx *k)
{
	if (k->async_fd >= 0)
		close(k->async_fd);
	close(k->fd);
}

/* ---- fixtures ---------------------------------------------------------------- */

static struct kctx K;
static uint8_t *mem;		/* page-aligned scratch, 64 pages */
static uint8_t *ro_page;	/* mapped read-only */
static uint8_t *gone_page;	/* no access */
static uint8_t *half_page;	/* mapped, the page after it no access */

#define BUF(i) (mem + (i) * 4 * PAGE)	/* 16 KiB slots */

static bool counts_equal(const struct mana_emu_counts *a,
			 const struct mana_emu_counts *b)
{
	return !memcmp(a, b, sizeof(*a));
}

/* ---- CQ -------------------------------------------------------------------- */

static void test_cq(void)
{
	uint32_t h, cqid;

	CHECK_ERRNO(k_cq_ex(&K, 64, (uintptr_t)BUF(0), 0, 16, 0, &h, &cqid), 0);
	/* 6.2 had no CQ response: the output is left as it was */
	CHECK(cqid == (RNIC ? UINT32_MAX : 0x12345678),
	      "ETH CQ id %#x (kernel %ld)", cqid, kver);
	CHECK_ERRNO(k_destroy_cq(&K, h), 0);
	/* the 6.2 layout: buf_addr only */
	CHECK_ERRNO(k_cq_ex(&K, 64, (uintptr_t)BUF(0), 0, 8, 0, &h, NULL), 0);
	CHECK_ERRNO(k_destroy_cq(&K, h), 0);
	CHECK_ERRNO(k_cq_ex(&K, 64, (uintptr_t)BUF(0), 0, 4, 0, NULL, NULL),
		    EINVAL);
	/*
	 * A nonzero byte past the structure and an unknown flag: robust
	 * udata (7.1) refuses both; older kernels copy min(inlen, 16) and
	 * never test the flags.
	 */
	CHECK_ERRNO(k_cq_ex(&K, 64, (uintptr_t)BUF(0), 0, 24, 0, &h, NULL),
		    ROBUST_UDATA ? EOPNOTSUPP : 0);
	if (!ROBUST_UDATA)
		CHECK_ERRNO(k_destroy_cq(&K, h), 0);
	CHECK_ERRNO(k_cq_ex(&K, 64, (uintptr_t)BUF(0), 0, 16, 2, &h, NULL),
		    ROBUST_UDATA ? EOPNOTSUPP : 0);
	if (!ROBUST_UDATA)
		CHECK_ERRNO(k_destroy_cq(&K, h), 0);
	CHECK_ERRNO(k_cq_ex(&K, 64, (uintptr_t)BUF(0) + 64, 0, 16, 0, NULL,
			    NULL), EINVAL);
	CHECK_ERRNO(k_cq_ex(&K, 0, (uintptr_t)BUF(0), 0, 16, 0, NULL, NULL),
		    EINVAL);
	CHECK_ERRNO(k_cq_ex(&K, MAX_QP_WR + 1, (uintptr_t)BUF(0), 0, 16, 0,
			    NULL, NULL), EINVAL);
	CHECK_ERRNO(k_cq_ex(&K, 64, (uintptr_t)BUF(0), K.ncv, 16, 0, NULL,
			    NULL), EINVAL);
	CHECK_ERRNO(k_cq_ex(&K, 64, (uintptr_t)gone_page, 0, 16, 0, NULL,
			    NULL), EFAULT);
	/* the device writes CQEs: the ring must be writable */
	CHECK_ERRNO(k_cq_ex(&K, 64, (uintptr_t)ro_page, 0, 16, 0, NULL, NULL),
		    EFAULT);
	/* 128 CQEs of 64 bytes run past the one mapped page */
	CHECK_ERRNO(k_cq_ex(&K, 128, (uintptr_t)half_page, 0, 16, 0, NULL,
			    NULL), EFAULT);
}

/* ---- WQ and indirection table ---------------------------------------------- */

static void test_wq(void)
{
	struct ib_uverbs_ex_modify_wq mod = { .attr_mask = IBV_WQ_ATTR_STATE,
					      .wq_state = IBV_WQS_RDY };
	uint32_t cq, wq, wq2, t;

	CHECK_ERRNO(k_cq(&K, 64, BUF(0), &cq), 0);
	CHECK_ERRNO(k_wq_ex(&K, K.pd, cq, (uintptr_t)BUF(1), 4 * PAGE, 8, NULL),
		    EINVAL);
	CHECK_ERRNO(k_wq_ex(&K, K.pd, cq, (uintptr_t)BUF(1), 6000, 16, NULL),
		    EINVAL);
	CHECK_ERRNO(k_wq_ex(&K, K.pd, cq, (uintptr_t)BUF(1), 2048, 16, NULL),
		    EINVAL);
	CHECK_ERRNO(k_wq_ex(&K, K.pd, cq, (uintptr_t)BUF(1) + 32, PAGE, 16,
			    NULL), EINVAL);
	CHECK_ERRNO(k_wq_ex(&K, K.pd, cq, (uintptr_t)gone_page, PAGE, 16, NULL),
		    EFAULT);
	CHECK_ERRNO(k_wq_ex(&K, K.pd, cq, (uintptr_t)BUF(1), 4 * PAGE, 16, &wq),
		    0);

	/* mana_ib has no modify_wq */
	mod.wq_handle = wq;
	CHECK_ERRNO(uv_write_ex(K.fd, IB_USER_VERBS_EX_CMD_MODIFY_WQ, &mod,
				sizeof(mod), NULL, 0, NULL, 0, 0), EOPNOTSUPP);

	/* in use: the CQ by the WQ, the WQ by a table */
	CHECK_ERRNO(k_destroy_cq(&K, cq), EBUSY);
	CHECK_ERRNO(k_table(&K, 0, &wq, &t), 0);
	CHECK_ERRNO(k_destroy_wq(&K, wq), EBUSY);
	CHECK_ERRNO(k_destroy_table(&K, t), 0);
	CHECK_ERRNO(k_destroy_wq(&K, wq), 0);

	/* the core takes up to 2^13 entries; RSS creation checks the 64 */
	CHECK_ERRNO(k_wq(&K, cq, BUF(1), &wq2), 0);
	{
		uint32_t many[128];
		unsigned int i;

		for (i = 0; i < 128; i++)
			many[i] = wq2;
		CHECK_ERRNO(k_table(&K, 7, many, &t), 0);
		{
			struct rss_req r = rss_default(&K, t);

			CHECK_ERRNO(k_rss(&K, &r, NULL, NULL), EINVAL);
		}
		CHECK_ERRNO(k_destroy_table(&K, t), 0);
	}
	CHECK_ERRNO(k_destroy_wq(&K, wq2), 0);
	CHECK_ERRNO(k_destroy_cq(&K, cq), 0);
}

/* ---- raw send QP ----------------------------------------------------------- */

static void sq_case(struct sq_req r, int want, const char *what)
{
	int got = k_sq(&K, &r, NULL, NULL, NULL);

	CHECK(got == want, "%s: got %d (%s), want %d (%s)", what, got,
	      strerror(got), want, strerror(want));
}

static void test_sq_rejections(uint32_t cq)
{
	struct sq_req r;

	r = sq_default(&K, cq, BUF(2));
	r.udata_len = 12;
	sq_case(r, EINVAL, "short udata");
	r = sq_default(&K, cq, BUF(2));
	r.wr = MAX_QP_WR + 1;
	sq_case(r, EINVAL, "max_send_wr");
	r = sq_default(&K, cq, BUF(2));
	r.sge = 31;
	sq_case(r, EINVAL, "max_send_sge 31");
	r = sq_default(&K, cq, BUF(2));
	r.port = 0;
	sq_case(r, EINVAL, "port 0");
	r.port = 9;
	sq_case(r, EINVAL, "port 9");
	r = sq_default(&K, cq, BUF(2) + 512);
	sq_case(r, EINVAL, "unaligned SQ");
	r = sq_default(&K, cq, BUF(2));
	r.size = 3 * PAGE;
	sq_case(r, EINVAL, "SQ size not a power of two");
	r.size = 1024;
	sq_case(r, EINVAL, "SQ smaller than a page");
	r = sq_default(&K, cq, gone_page);
	r.size = PAGE;
	sq_case(r, EFAULT, "unmapped SQ");
}

static void test_sq(void)
{
	struct mana_ib_create_qp_resp drv;
	struct mana_emu_queue_info q;
	struct sq_req r;
	uint32_t cq, cq2, qp, qpn;
	struct {
		struct ib_uverbs_query_qp cmd;
	} query;

	CHECK_ERRNO(k_cq(&K, 64, BUF(0), &cq), 0);
	CHECK_ERRNO(k_cq(&K, 64, BUF(1), &cq2), 0);
	test_sq_rejections(cq);

	r = sq_default(&K, cq, BUF(2));
	CHECK_ERRNO(k_sq(&K, &r, &qp, &drv, &qpn), 0);
	CHECK(qpn == drv.sqid, "qp_num %u, sqid %u", qpn, drv.sqid);
	CHECK(emu_queue(MANA_EMU_QUEUE_SQ, drv.sqid, &q) == 0 &&
	      q.buf_addr == (uintptr_t)BUF(2) && q.buf_size == 4 * PAGE &&
	      q.cq_id == drv.cqid && q.port == 1 &&
	      q.tx_vp_offset == drv.tx_vp_offset, "SQ as the device sees it");
	CHECK(emu_queue(MANA_EMU_QUEUE_CQ, drv.cqid, &q) == 0 &&
	      q.buf_addr == (uintptr_t)BUF(0) && q.entries == 64 &&
	      q.buf_size == 64 * 64, "CQ as the device sees it");
	CHECK(emu_queue(MANA_EMU_QUEUE_RQ, drv.sqid, &q) == -ENOENT,
	      "ids are per type");

	/* the CQ is bound to that SQ now */
	r = sq_default(&K, cq, BUF(3));
	/* its DMA region went to that SQ: the device refuses (EPROTO) */
	sq_case(r, EPROTO, "CQ already bound");
	CHECK_ERRNO(k_destroy_cq(&K, cq), EBUSY);

	/* same PD, same port: fine; the PD is bound to port 1 */
	r = sq_default(&K, cq2, BUF(3));
	r.port = 2;
	if (VPORT_REFS) {
		sq_case(r, EINVAL, "PD bound to port 1, QP on port 2");
	} else {
		uint32_t qp2;

		/* before 7.2: the PD's later QPs skip the vport, any port */
		CHECK_ERRNO(k_sq(&K, &r, &qp2, NULL, NULL), 0);
		CHECK_ERRNO(k_destroy_qp(&K, qp2), 0);
	}

	/*
	 * mana_ib has no query_qp (any QP type, any version): the core drops
	 * QUERY_QP and answers EOPNOTSUPP before it looks at the handle.
	 * Its modify_qp refuses raw QPs.
	 */
	memset(&query, 0, sizeof(query));
	query.cmd.qp_handle = qp;
	query.cmd.response = (uintptr_t)mem;
	CHECK_ERRNO(uv_write(K.fd, IB_USER_VERBS_CMD_QUERY_QP, &query.cmd,
			     sizeof(query.cmd), NULL, 0,
			     sizeof(struct ib_uverbs_query_qp_resp)),
		    EOPNOTSUPP);
	query.cmd.qp_handle = 0xbad;
	CHECK_ERRNO(uv_write(K.fd, IB_USER_VERBS_CMD_QUERY_QP, &query.cmd,
			     sizeof(query.cmd), NULL, 0,
			     sizeof(struct ib_uverbs_query_qp_resp)),
		    EOPNOTSUPP);
	{
		struct ib_uverbs_modify_qp mod = { .qp_handle = qp,
						   .attr_mask = IBV_QP_STATE,
						   .qp_state = IBV_QPS_RTS };

		CHECK_ERRNO(uv_write(K.fd, IB_USER_VERBS_CMD_MODIFY_QP, &mod,
				     sizeof(mod), NULL, 0, 0), EOPNOTSUPP);
	}
	CHECK_ERRNO(k_destroy_qp(&K, qp), 0);
	CHECK(emu_queue(MANA_EMU_QUEUE_SQ, drv.sqid, &q) == -ENOENT,
	      "SQ gone with its QP");
	CHECK_ERRNO(k_destroy_cq(&K, cq2), 0);
	CHECK_ERRNO(k_destroy_cq(&K, cq), 0);
}

/* Another context (and PD) holding port 1's vport: EBUSY (before 7.2: ENODEV). */
static void test_vport_busy(void)
{
	struct kctx other;
	uint32_t cq, ocq, qp;
	struct sq_req r;

	CHECK_ERRNO(k_cq(&K, 64, BUF(0), &cq), 0);
	r = sq_default(&K, cq, BUF(2));
	CHECK_ERRNO(k_sq(&K, &r, &qp, NULL, NULL), 0);

	CHECK_ERRNO(k_open(&other), 0);
	CHECK_ERRNO(k_pd(&other, &other.pd), 0);
	CHECK_ERRNO(k_cq(&other, 64, BUF(8), &ocq), 0);
	r = sq_default(&other, ocq, BUF(9));
	CHECK_ERRNO(k_sq(&other, &r, NULL, NULL, NULL), VPORT_BUSY);
	/* port 2 is free */
	r.port = 2;
	CHECK_ERRNO(k_sq(&other, &r, NULL, NULL, NULL), 0);
	k_close(&other);	/* releases its QP, CQ, PD and context */

	/* a second PD of the same context is another vport user too */
	CHECK_ERRNO(k_pd(&K, &K.pd2), 0);
	{
		uint32_t cq3;

		CHECK_ERRNO(k_cq(&K, 64, BUF(4), &cq3), 0);
		r = sq_default(&K, cq3, BUF(5));
		r.pd = K.pd2;
		CHECK_ERRNO(k_sq(&K, &r, NULL, NULL, NULL), VPORT_BUSY);
		CHECK_ERRNO(k_destroy_cq(&K, cq3), 0);
	}
	CHECK_ERRNO(k_destroy_qp(&K, qp), 0);
	CHECK_ERRNO(k_destroy_cq(&K, cq), 0);
	{
		struct ib_uverbs_dealloc_pd cmd = { .pd_handle = K.pd2 };

		CHECK_ERRNO(uv_write(K.fd, IB_USER_VERBS_CMD_DEALLOC_PD, &cmd,
				     sizeof(cmd), NULL, 0, 0), 0);
	}
}

/* ---- RSS QP ----------------------------------------------------------------- */

static void rss_case(struct rss_req r, int want, const char *what)
{
	int got = k_rss(&K, &r, NULL, NULL);

	CHECK(got == want, "%s: got %d (%s), want %d (%s)", what, got,
	      strerror(got), want, strerror(want));
}

static void test_rss(void)
{
	struct mana_ib_create_qp_rss_resp resp;
	struct mana_emu_rss_info info;
	struct mana_emu_queue_info q;
	uint32_t cq[3], wq[3], t, t2, qp, sq = 0, sq_cq = 0;
	struct rss_req r;
	unsigned int i;

	for (i = 0; i < 3; i++) {
		CHECK_ERRNO(k_cq(&K, 64, BUF(i), &cq[i]), 0);
		CHECK_ERRNO(k_wq(&K, cq[i], BUF(3 + i), &wq[i]), 0);
	}
	CHECK_ERRNO(k_table(&K, 1, wq, &t), 0);

	r = rss_default(&K, t);
	r.udata_len = 32;
	rss_case(r, EINVAL, "short RSS udata");
	r = rss_default(&K, t);
	r.func = 2;
	rss_case(r, EINVAL, "hash function not Toeplitz");
	r = rss_default(&K, t);
	r.key_len = 41;
	rss_case(r, EINVAL, "key longer than 40");
	r = rss_default(&K, t);
	r.port = 9;
	rss_case(r, EINVAL, "port 9");
	r = rss_default(&K, t);
	r.max_recv_sge = 16;
	rss_case(r, EINVAL, "receive SGEs on an RSS QP");
	CHECK(emu_rss(1, &info) == -ENOENT, "no steering before an RSS QP");

	/* WQs 0 and 2 both complete into CQ 0 */
	{
		uint32_t shared_wq, pair[2];

		CHECK_ERRNO(k_wq(&K, cq[0], BUF(6), &shared_wq), 0);
		pair[0] = wq[0];
		pair[1] = shared_wq;
		CHECK_ERRNO(k_table(&K, 1, pair, &t2), 0);
		r = rss_default(&K, t2);
		/*
		 * the second RX object finds the CQ's region taken: EPROTO;
		 * 7.2 refuses first, as no raw QP gave the PD a vport
		 */
		rss_case(r, VPORT_REFS ? EINVAL : EPROTO, "two RQs on one CQ");
		CHECK_ERRNO(k_destroy_table(&K, t2), 0);
		CHECK_ERRNO(k_destroy_wq(&K, shared_wq), 0);
	}

	/*
	 * 7.2: the RSS QP takes a reference on the vport a raw QP of its PD
	 * configured, on that port (else EINVAL); before, it needs none.
	 */
	if (VPORT_REFS) {
		struct sq_req sr;

		r = rss_default(&K, t);
		rss_case(r, EINVAL, "RSS QP on a PD without a raw QP");
		CHECK_ERRNO(k_cq(&K, 64, BUF(7), &sq_cq), 0);
		sr = sq_default(&K, sq_cq, BUF(8));
		CHECK_ERRNO(k_sq(&K, &sr, &sq, NULL, NULL), 0);
		r.port = 2;
		rss_case(r, EINVAL, "RSS QP on another port than the PD's");
	}

	r = rss_default(&K, t);
	CHECK_ERRNO(k_rss(&K, &r, &qp, &resp), 0);
	CHECK(resp.num_entries == 2, "num_entries %llu",
	      (unsigned long long)resp.num_entries);
	CHECK(emu_rss(1, &info) == 0 && info.enabled && info.num_entries == 2 &&
	      info.default_rq == resp.entries[1].wqid &&
	      info.fields_mask == r.fields, "steering state");
	for (i = 0; i < 64; i++)
		CHECK(info.rq_ids[i] == resp.entries[i % 2].wqid,
		      "indirection entry %u", i);
	CHECK(info.key[0] == 1 && info.key[39] == (uint8_t)(39 * 7 + 1),
	      "key as given");
	for (i = 0; i < 2; i++)
		CHECK(emu_queue(MANA_EMU_QUEUE_RQ, resp.entries[i].wqid, &q) == 0 &&
		      q.buf_addr == (uintptr_t)BUF(3 + i) &&
		      q.buf_size == 4 * PAGE && q.cq_id == resp.entries[i].cqid,
		      "RQ %u as the device sees it", i);

	/*
	 * One RSS QP per vport (7.2); before, a second one programs the
	 * port's steering over the first's (no check, no vport reference).
	 */
	{
		uint32_t one, qp2;

		CHECK_ERRNO(k_table(&K, 0, &wq[2], &one), 0);
		r = rss_default(&K, one);
		if (VPORT_REFS) {
			rss_case(r, EBUSY, "second RSS QP");
		} else {
			CHECK_ERRNO(k_rss(&K, &r, &qp2, &resp), 0);
			CHECK(emu_rss(1, &info) == 0 && info.num_entries == 1 &&
			      info.default_rq == resp.entries[0].wqid,
			      "the second RSS QP steers the port");
			CHECK_ERRNO(k_destroy_qp(&K, qp2), 0);
		}
		CHECK_ERRNO(k_destroy_table(&K, one), 0);
		/* the same table again: has_rss_qp is checked before the WQs */
		r = rss_default(&K, t);
		if (VPORT_REFS)
			rss_case(r, EBUSY, "second RSS QP on the same table");
	}

	CHECK_ERRNO(k_destroy_table(&K, t), EBUSY);
	CHECK_ERRNO(k_destroy_wq(&K, wq[0]), EBUSY);
	CHECK_ERRNO(k_destroy_qp(&K, qp), 0);
	CHECK(emu_rss(1, &info) == -ENOENT, "steering off after destroy");

	/* key length 0: mana_ib makes up a key */
	r = rss_default(&K, t);
	r.key_len = 0;
	CHECK_ERRNO(k_rss(&K, &r, &qp, NULL), 0);
	CHECK(emu_rss(1, &info) == 0, "steering with a random key");
	if (VPORT_REFS) {
		struct kctx other;
		uint32_t ocq;
		struct sq_req sr;

		/* the RSS QP alone holds the vport now */
		CHECK_ERRNO(k_destroy_qp(&K, sq), 0);
		CHECK_ERRNO(k_destroy_cq(&K, sq_cq), 0);
		CHECK_ERRNO(k_open(&other), 0);
		CHECK_ERRNO(k_pd(&other, &other.pd), 0);
		CHECK_ERRNO(k_cq(&other, 64, BUF(9), &ocq), 0);
		sr = sq_default(&other, ocq, BUF(10));
		CHECK_ERRNO(k_sq(&other, &sr, NULL, NULL, NULL), EBUSY);
		k_close(&other);
	}
	CHECK_ERRNO(k_destroy_qp(&K, qp), 0);

	CHECK_ERRNO(k_destroy_table(&K, t), 0);
	for (i = 0; i < 3; i++) {
		CHECK_ERRNO(k_destroy_wq(&K, wq[i]), 0);
		CHECK_ERRNO(k_destroy_cq(&K, cq[i]), 0);
	}
}

/* ---- native ioctl methods ------------------------------------------------------ */

static int ioc_cq_create(struct kctx *k, uint64_t buf, uint16_t udata_len,
			 uint32_t *handle)
{
	struct mana_ib_create_cq u = { .buf_addr = buf };
	struct mana_ib_create_cq_resp ur = {};
	uint32_t cqe = 64, vector = 0, resp_cqe = 0xdead;
	uint64_t user_handle = 5;
	struct ib_uverbs_attr *h;
	struct ioc c;
	int ret;

	ioc_init(&c, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE);
	h = ioc_attr(&c, UVERBS_ATTR_CREATE_CQ_HANDLE, 0, 0);
	ioc_ptr(&c, UVERBS_ATTR_CREATE_CQ_CQE, &cqe, 4);
	ioc_ptr(&c, UVERBS_ATTR_CREATE_CQ_USER_HANDLE, &user_handle, 8);
	ioc_ptr(&c, UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, &vector, 4);
	ioc_attr(&c, UVERBS_ATTR_CREATE_CQ_RESP_CQE, 4, (uintptr_t)&resp_cqe);
	ioc_ptr(&c, UVERBS_ATTR_UHW_IN, &u, udata_len);
	ioc_attr(&c, UVERBS_ATTR_UHW_OUT, sizeof(ur), (uintptr_t)&ur);
	ret = ioc_run(k->fd, &c);
	if (!ret) {
		/* no mana_ib sets ib_cq.cqe: the core's answer is 0 */
		CHECK(resp_cqe == 0 && ur.cqid == (RNIC ? UINT32_MAX : 0),
		      "ioctl CQ output");
		*handle = h->data;
	}
	return ret;
}

static int ioc_destroy(struct kctx *k, uint16_t obj, uint16_t method,
		       uint16_t resp_attr, uint32_t handle, void *resp,
		       uint16_t resp_len)
{
	struct ioc c;

	ioc_init(&c, obj, method);
	ioc_attr(&c, 0, 0, handle);
	if (resp_len)
		ioc_attr(&c, resp_attr, resp_len, (uintptr_t)resp);
	return ioc_run(k->fd, &c);
}

static int ioc_sq_create(struct kctx *k, uint32_t cq, void *buf,
			 uint32_t *handle, uint32_t *qpn)
{
	struct ib_uverbs_qp_cap cap = { .max_send_wr = 64, .max_send_sge = 1 };
	struct ib_uverbs_qp_cap rcap = {};
	struct mana_ib_create_qp u = { .sq_buf_addr = (uintptr_t)buf,
				       .sq_buf_size = 4 * PAGE, .port = 1 };
	struct mana_ib_create_qp_resp ur = {};
	uint64_t user_handle = 6, type = IB_UVERBS_QPT_RAW_PACKET;
	struct ib_uverbs_attr *h;
	struct ioc c;
	int ret;

	ioc_init(&c, UVERBS_OBJECT_QP, UVERBS_METHOD_QP_CREATE);
	h = ioc_attr(&c, UVERBS_ATTR_CREATE_QP_HANDLE, 0, 0);
	ioc_attr(&c, UVERBS_ATTR_CREATE_QP_PD_HANDLE, 0, k->pd);
	ioc_attr(&c, UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE, 0, cq);
	ioc_attr(&c, UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE, 0, cq);
	ioc_ptr(&c, UVERBS_ATTR_CREATE_QP_USER_HANDLE, &user_handle, 8);
	ioc_ptr(&c, UVERBS_ATTR_CREATE_QP_CAP, &cap, sizeof(cap));
	ioc_ptr(&c, UVERBS_ATTR_CREATE_QP_TYPE, &type, 8);
	ioc_attr(&c, UVERBS_ATTR_CREATE_QP_RESP_CAP, sizeof(rcap),
		 (uintptr_t)&rcap);
	ioc_attr(&c, UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, 4, (uintptr_t)qpn);
	ioc_ptr(&c, UVERBS_ATTR_UHW_IN, &u, sizeof(u));
	ioc_attr(&c, UVERBS_ATTR_UHW_OUT, sizeof(ur), (uintptr_t)&ur);
	ret = ioc_run(k->fd, &c);
	if (!ret) {
		CHECK(*qpn == ur.sqid && rcap.max_send_wr == 64,
		      "ioctl QP output");
		*handle = h->data;
	}
	return ret;
}

/* ---- era-dependent context, PD and QP types ---------------------------------- */

/*
 * GET_CONTEXT on a fresh fd with @in_len bytes of driver input (byte 0
 * @in0); the driver response (8 bytes, 0xee before) in *drv.
 */
static int k_context_drv(size_t in_len, uint8_t in0, uint64_t *drv, int *fdp)
{
	struct {
		struct ib_uverbs_get_context_resp core;
		uint64_t drv;
	} resp = { .core.async_fd = -1 };
	struct ib_uverbs_get_context cmd = { .response = (uintptr_t)&resp };
	uint8_t in[16] = { in0 };
	int fd, ret;

	memset(&resp.drv, 0xee, sizeof(resp.drv));
	fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno;
	ret = uv_write(fd, IB_USER_VERBS_CMD_GET_CONTEXT, &cmd, sizeof(cmd), in,
		       in_len, sizeof(resp));
	*drv = resp.drv;
	if (!ret)
		close(resp.core.async_fd);
	if (fdp && !ret)
		*fdp = fd;
	else
		close(fd);
	return ret;
}

/* ALLOC_PD with @in_len bytes of mana_ib_alloc_pd; the driver response. */
static int k_pd_drv(int fd, const struct mana_ib_alloc_pd *in, size_t in_len,
		    struct mana_ib_alloc_pd_resp *drv, uint32_t *handle)
{
	struct {
		struct ib_uverbs_alloc_pd_resp core;
		struct mana_ib_alloc_pd_resp drv;
	} resp;
	struct ib_uverbs_alloc_pd cmd = { .response = (uintptr_t)&resp };
	uint8_t buf[16] = { 0 };
	int ret;

	memcpy(buf, in, sizeof(*in));
	memset(&resp, 0xee, sizeof(resp));
	ret = uv_write(fd, IB_USER_VERBS_CMD_ALLOC_PD, &cmd, sizeof(cmd), buf,
		       in_len, sizeof(resp));
	*drv = resp.drv;
	*handle = resp.core.pd_handle;
	return ret;
}

/*
 * 7.1 (robust udata, PD numbers): alloc_ucontext answers comp_mask
 * ALLOC_PDN_SUPPORT and wants its input empty or zero; alloc_pd takes
 * {comp_mask, reserved} and answers the PD number, 16 bits with
 * SHORT_PDN.  Older kernels read no driver input and write no driver
 * output for either.
 */
static void test_context_pd(void)
{
	bool pdn = kver >= 7001;
	struct mana_ib_alloc_pd_resp pr;
	struct mana_ib_alloc_pd in = {};
	uint32_t h, h2;
	uint64_t drv;
	int fd = -1;

	CHECK_ERRNO(k_context_drv(0, 0, &drv, &fd), 0);
	CHECK(pdn ? drv == MANA_IB_UCNTX_ALLOC_PDN_SUPPORT :
		    drv == 0xeeeeeeeeeeeeeeeeull,
	      "ucontext driver response %#llx", (unsigned long long)drv);
	CHECK_ERRNO(k_context_drv(8, 0, &drv, NULL), 0);
	CHECK_ERRNO(k_context_drv(8, 1, &drv, NULL), pdn ? EOPNOTSUPP : 0);
	if (fd < 0)
		return;

	/* no driver input: a long PDN (rdma-core v64 sends none) */
	CHECK_ERRNO(k_pd_drv(fd, &in, 0, &pr, &h), 0);
	CHECK(pdn ? pr.pdn > 0xffff && pr.reserved == 0 :
		    pr.pdn == 0xeeeeeeee && pr.reserved == 0xeeeeeeee,
	      "PD response %#x %#x", pr.pdn, pr.reserved);
	in.comp_mask = MANA_IB_PD_SHORT_PDN;
	CHECK_ERRNO(k_pd_drv(fd, &in, sizeof(in), &pr, &h2), 0);
	CHECK(pdn ? pr.pdn && pr.pdn <= 0xffff : pr.pdn == 0xeeeeeeee,
	      "short PDN %#x", pr.pdn);
	/* shorter than the structure; unknown bit; nonzero tail */
	CHECK_ERRNO(k_pd_drv(fd, &in, 4, &pr, &h), pdn ? EINVAL : 0);
	in.comp_mask = 2;
	CHECK_ERRNO(k_pd_drv(fd, &in, sizeof(in), &pr, &h), pdn ? EOPNOTSUPP : 0);
	in.comp_mask = 0;
	in.reserved = 1;
	CHECK_ERRNO(k_pd_drv(fd, &in, sizeof(in), &pr, &h), 0);
	CHECK(pdn ? pr.pdn > 0xffff : pr.pdn == 0xeeeeeeee,
	      "reserved is not checked: %#x", pr.pdn);
	close(fd);
}

/* CREATE_QP of @type with the RC driver data (@ucmd) on K's PD. */
static int k_qp_type(uint32_t type, uint32_t scq, uint32_t rcq,
		     const struct mana_ib_create_rc_qp *ucmd, uint32_t *handle)
{
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct mana_ib_create_rc_qp_resp drv;
	} resp = {};
	struct ib_uverbs_create_qp cmd = {
		.response = (uintptr_t)&resp, .user_handle = 3,
		.pd_handle = K.pd, .send_cq_handle = scq, .recv_cq_handle = rcq,
		.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
		.max_recv_sge = 1, .qp_type = type,
	};
	int ret;

	ret = uv_write(K.fd, IB_USER_VERBS_CMD_CREATE_QP, &cmd, sizeof(cmd),
		       ucmd, sizeof(*ucmd), sizeof(resp));
	*handle = resp.core.qp_handle;
	return ret;
}

/*
 * Which QP types userspace may create: RC from 6.11 (on the device with
 * RNIC objects: uverbs0 before the 6.16 split), UD never -- before 6.14
 * mana_ib did not know the type (EINVAL), from 6.14 UD QPs exist for
 * kernel users only (EOPNOTSUPP).
 */
static void test_qp_types(void)
{
	struct mana_ib_create_rc_qp u = {};
	uint32_t cq, h;
	unsigned int i;

	CHECK_ERRNO(k_cq_ex(&K, 64, (uintptr_t)BUF(8), 0, 16,
			    MANA_IB_CREATE_RNIC_CQ, &cq, NULL), 0);
	for (i = 0; i < 4; i++) {
		u.queue_buf[i] = (uintptr_t)BUF(10) + i * PAGE;
		u.queue_size[i] = PAGE;
	}
	CHECK_ERRNO(k_qp_type(IBV_QPT_UD, cq, cq, &u, &h),
		    kver >= 6014 ? EOPNOTSUPP : EINVAL);
	if (kver < 6016) {
		CHECK_ERRNO(k_qp_type(IBV_QPT_RC, cq, cq, &u, &h),
			    kver >= 6011 ? 0 : EINVAL);
		if (kver >= 6011)
			CHECK_ERRNO(k_destroy_qp(&K, h), 0);
	}
	CHECK_ERRNO(k_destroy_cq(&K, cq), 0);
}

static void test_ioctl(void)
{
	struct ib_uverbs_destroy_cq_resp cresp = { 3, 3 };
	struct ib_uverbs_destroy_qp_resp qresp = { 3 };
	uint32_t cq, qp, qpn;

	/* --transport=write: a kernel without the ioctl ABI */
	if (ioc_cq_create(&K, (uintptr_t)BUF(0), 4, &cq) == ENOTTY) {
		printf("ioctl methods skipped: ENOTTY\n");
		return;
	}
	CHECK_ERRNO(ioc_cq_create(&K, (uintptr_t)BUF(0), 4, &cq), EINVAL);
	CHECK_ERRNO(ioc_cq_create(&K, (uintptr_t)BUF(0) + 8, 16, &cq), EINVAL);
	CHECK_ERRNO(ioc_cq_create(&K, (uintptr_t)BUF(0), 16, &cq), 0);
	CHECK_ERRNO(ioc_sq_create(&K, cq, BUF(2), &qp, &qpn), 0);
	/* QUERY_QP through DEVICE/INVOKE_WRITE: the core's EOPNOTSUPP too */
	{
		struct ib_uverbs_query_qp_resp qr;
		struct ib_uverbs_query_qp q = { .qp_handle = qp };
		uint64_t wcmd = IB_USER_VERBS_CMD_QUERY_QP;
		struct ioc c;

		ioc_init(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE);
		ioc_attr(&c, UVERBS_ATTR_CORE_IN, sizeof(q), (uintptr_t)&q);
		ioc_attr(&c, UVERBS_ATTR_CORE_OUT, sizeof(qr), (uintptr_t)&qr);
		ioc_ptr(&c, UVERBS_ATTR_WRITE_CMD, &wcmd, sizeof(wcmd));
		CHECK_ERRNO(ioc_run(K.fd, &c), EOPNOTSUPP);
		q.qp_handle = 0xbad;	/* before any handle is looked up */
		CHECK_ERRNO(ioc_run(K.fd, &c), EOPNOTSUPP);
	}
	CHECK_ERRNO(ioc_destroy(&K, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_DESTROY,
				UVERBS_ATTR_DESTROY_CQ_RESP, cq, &cresp,
				sizeof(cresp)), EBUSY);
	CHECK_ERRNO(ioc_destroy(&K, UVERBS_OBJECT_QP, UVERBS_METHOD_QP_DESTROY,
				UVERBS_ATTR_DESTROY_QP_RESP, qp, &qresp,
				sizeof(qresp)), 0);
	CHECK(qresp.events_reported == 0, "ioctl destroy_qp response");
	CHECK_ERRNO(ioc_destroy(&K, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_DESTROY,
				UVERBS_ATTR_DESTROY_CQ_RESP, cq, &cresp,
				sizeof(cresp)), 0);
	CHECK(!cresp.comp_events_reported && !cresp.async_events_reported,
	      "ioctl destroy_cq response");
}

/* ---- query verbs by era ------------------------------------------------------ */

/*
 * 6.2's mana_ib answered query_device with fixed limits and nothing else
 * (no node GUID either), filled nothing in query_port (state NOP, no
 * GIDs, the core's InfiniBand fallback for the link layer) and had one
 * completion vector; 6.8 took the limits from the adapter, 6.10 brought
 * the full answers and a vector per adapter queue.
 */
static void test_query_era(void)
{
	struct ib_uverbs_query_device_resp d;
	struct ib_uverbs_query_device dc = { .response = (uintptr_t)&d };
	struct ib_uverbs_query_port_resp p;
	struct ib_uverbs_query_port pc = { .response = (uintptr_t)&p,
					   .port_num = 1 };

	memset(&d, 0xee, sizeof(d));
	CHECK_ERRNO(uv_write(K.fd, IB_USER_VERBS_CMD_QUERY_DEVICE, &dc,
			     sizeof(dc), NULL, 0, sizeof(d)), 0);
	CHECK(d.max_qp == 64 && d.max_qp_wr == (uint32_t)MAX_QP_WR &&
	      d.max_cqe == (uint32_t)MAX_QP_WR && d.max_sge == 15 &&
	      d.phys_port_cnt == 2, "limits: qp %u wr %u cqe %u sge %u ports %u",
	      d.max_qp, d.max_qp_wr, d.max_cqe, d.max_sge, d.phys_port_cnt);
	CHECK(RNIC ? d.max_pd && d.page_size_cap && d.max_pkeys == 1 :
		     !d.max_pd && !d.page_size_cap && !d.fw_ver && !d.max_pkeys,
	      "max_pd %u, page sizes %#llx", d.max_pd,
	      (unsigned long long)d.page_size_cap);
	/* vendor ids came with the split (6.16): 0 before */
	CHECK(kver >= 6016 ? d.vendor_id == 0x1414 && d.vendor_part_id == 2 :
			     !d.vendor_id && !d.vendor_part_id,
	      "device ids %#x/%u", d.vendor_id, d.vendor_part_id);
	/* 6.2 .. 6.9 set one vector; the adapter's queue count from 6.10 */
	if (!RNIC)
		CHECK(K.ncv == 1, "one completion vector, not %u", K.ncv);
	CHECK(RNIC ? d.node_guid != 0 : d.node_guid == 0,
	      "node GUID %#llx", (unsigned long long)d.node_guid);

	memset(&p, 0xee, sizeof(p));
	CHECK_ERRNO(uv_write(K.fd, IB_USER_VERBS_CMD_QUERY_PORT, &pc,
			     sizeof(pc), NULL, 0, sizeof(p)), 0);
	/* GIDs on uverbs0's port 1 until the split moved them to mana_0 */
	CHECK(RNIC ? p.state == IBV_PORT_DOWN && p.link_layer == 2 &&
		     p.gid_tbl_len == (kver < 6016 ? 16 : 0) &&
		     p.max_mtu == IBV_MTU_4096 :
		     !p.state && !p.phys_state && !p.max_mtu &&
		     !p.active_mtu && !p.gid_tbl_len && !p.pkey_tbl_len &&
		     p.link_layer == 1,
	      "port 1: state %u phys %u mtu %u/%u gids %u link layer %u",
	      p.state, p.phys_state, p.max_mtu, p.active_mtu, p.gid_tbl_len,
	      p.link_layer);
	pc.port_num = 3;
	CHECK_ERRNO(uv_write(K.fd, IB_USER_VERBS_CMD_QUERY_PORT, &pc,
			     sizeof(pc), NULL, 0, sizeof(p)), EINVAL);
}

/* ---- doorbell page ------------------------------------------------------------ */

static void test_mmap(void)
{
	struct mana_emu_queue_info q;
	struct mana_ib_create_qp_resp drv;
	void *a, *b, *c;
	uint32_t cq, qp;
	struct sq_req r;

	c = mmap(NULL, PAGE, PROT_WRITE, MAP_SHARED, K.fd, PAGE);
	CHECK(c == MAP_FAILED && errno == EINVAL, "offset != 0: %s",
	      c == MAP_FAILED ? strerror(errno) : "mapped");
	c = mmap(NULL, PAGE, PROT_WRITE, MAP_PRIVATE, K.fd, 0);
	CHECK(c == MAP_FAILED && errno == EINVAL, "private mapping");
	c = mmap(NULL, 2 * PAGE, PROT_WRITE, MAP_SHARED, K.fd, 0);
	CHECK(c == MAP_FAILED && errno == EINVAL, "two pages");

	a = mmap(NULL, PAGE, PROT_WRITE, MAP_SHARED, K.fd, 0);
	b = mmap(NULL, PAGE, PROT_WRITE, MAP_SHARED, K.fd, 0);
	CHECK(a != MAP_FAILED && a == b, "every mapping of a context is the same page");

	CHECK_ERRNO(k_cq(&K, 64, BUF(0), &cq), 0);
	r = sq_default(&K, cq, BUF(2));
	CHECK_ERRNO(k_sq(&K, &r, &qp, &drv, NULL), 0);
	CHECK(emu_queue(MANA_EMU_QUEUE_SQ, drv.sqid, &q) == 0 &&
	      q.db_page == (uintptr_t)a, "queue info names the mapping");
	/* reference counted: the first munmap keeps the page */
	CHECK(munmap(a, PAGE) == 0, "munmap 1");
	CHECK(emu_queue(MANA_EMU_QUEUE_SQ, drv.sqid, &q) == 0 &&
	      q.db_page == (uintptr_t)a, "still mapped once");
	/* a doorbell for nothing of ours is ignored, not fatal */
	*(volatile uint64_t *)((uint8_t *)a + 0x800) = 0xFFFFFF;
	CHECK(munmap(b, PAGE) == 0, "munmap 2");
	CHECK(emu_queue(MANA_EMU_QUEUE_SQ, drv.sqid, &q) == 0 && !q.db_page,
	      "unmapped after the last munmap");
	CHECK_ERRNO(k_destroy_qp(&K, qp), 0);
	CHECK_ERRNO(k_destroy_cq(&K, cq), 0);
}

/* ---- MR registration: the uverbs core's answers ------------------------------ */

/* Register with @access: @ok says whether this era's mana_ib takes it. */
static void mr_case(int access, bool ok, const char *what)
{
	uint32_t mr;
	int got = k_mr_access(&K, mem, PAGE, access, &mr);

	CHECK(got == (ok ? 0 : EINVAL), "%s (kernel %ld): got %d (%s)", what,
	      kver, got, strerror(got));
	if (!got)
		CHECK_ERRNO(k_dereg_mr(&K, mr), 0);
}

/*
 * mana_ib's access bits by era: 6.2 local write, remote write and read
 * only; optional bits (relaxed ordering) ignored from 6.10; remote atomic
 * and zero-based from 6.16; MW_BIND with the MWs of 7.1.
 */
static void test_mr_era(void)
{
	mr_case(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ, true, "the 6.2 set");
	mr_case(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING,
		kver >= 6010, "relaxed ordering");
	mr_case(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
		kver >= 6016, "remote atomic");
	mr_case(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ZERO_BASED, kver >= 6016,
		"zero based");
	mr_case(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND, kver >= 7001,
		"MW bind");
}

static void test_mr(void)
{
	uint32_t mr;

	/* ib_check_mr_access(): no IBK_ON_DEMAND_PAGING -> EOPNOTSUPP */
	CHECK_ERRNO(k_mr_access(&K, mem, PAGE, IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_ON_DEMAND, &mr), EOPNOTSUPP);
	/* ...but only after the bits the core does not know at all */
	CHECK_ERRNO(k_mr_access(&K, mem, PAGE, IBV_ACCESS_ON_DEMAND |
				IBV_ACCESS_REMOTE_WRITE, &mr), EINVAL);
	/* ib_umem_get(): zero pages to pin -> EINVAL */
	CHECK_ERRNO(k_mr_access(&K, mem, 0, IBV_ACCESS_LOCAL_WRITE, &mr), EINVAL);
	/* inside a page, length 0 still spans that page: the core pins it */
	CHECK_ERRNO(k_mr_access(&K, mem + 100, 0, IBV_ACCESS_LOCAL_WRITE, &mr), 0);
	CHECK_ERRNO(k_dereg_mr(&K, mr), 0);
	CHECK_ERRNO(k_mr_access(&K, mem, PAGE, IBV_ACCESS_LOCAL_WRITE, &mr), 0);
	CHECK_ERRNO(k_dereg_mr(&K, mr), 0);
	test_mr_era();
}

/* ---- close releases everything --------------------------------------------- */

static void test_close_releases(void)
{
	struct mana_emu_counts before, during, after;
	uint32_t cq[2], wq, t, qp, lkey;
	struct kctx k2;
	struct sq_req r;
	struct rss_req rr;

	CHECK(emu_counts(&before) == 0, "counts");
	CHECK_ERRNO(k_open(&k2), 0);
	CHECK_ERRNO(k_pd(&k2, &k2.pd), 0);
	CHECK_ERRNO(k_mr(&k2, mem, 64 * PAGE, &lkey), 0);
	CHECK_ERRNO(k_cq(&k2, 64, BUF(10), &cq[0]), 0);
	CHECK_ERRNO(k_cq(&k2, 64, BUF(11), &cq[1]), 0);
	CHECK_ERRNO(k_wq(&k2, cq[1], BUF(12), &wq), 0);
	CHECK_ERRNO(k_table(&k2, 0, &wq, &t), 0);
	r = sq_default(&k2, cq[0], BUF(13));
	r.port = 2;
	CHECK_ERRNO(k_sq(&k2, &r, &qp, NULL, NULL), 0);
	rr = rss_default(&k2, t);
	rr.port = 2;
	CHECK_ERRNO(k_rss(&k2, &rr, NULL, NULL), 0);
	CHECK(mmap(NULL, PAGE, PROT_WRITE, MAP_SHARED, k2.fd, 0) != MAP_FAILED,
	      "doorbell mapping");
	CHECK(emu_counts(&during) == 0 && during.qps == before.qps + 2 &&
	      during.contexts == before.contexts + 1, "objects exist");
	k_close(&k2);
	CHECK(emu_counts(&after) == 0 && counts_equal(&before, &after),
	      "close released everything (qps %u, cqs %u, contexts %u)",
	      after.qps, after.cqs, after.contexts);
	{
		struct mana_emu_rss_info info;

		CHECK(emu_rss(2, &info) == -ENOENT, "port 2 steering released");
	}
}

/* ---- --netdev-up ---------------------------------------------------------------- */

static void test_netdev_up(void)
{
	uint32_t cq[2], wq, t;
	struct sq_req r;
	struct rss_req rr;

	CHECK_ERRNO(k_cq(&K, 64, BUF(0), &cq[0]), 0);
	r = sq_default(&K, cq[0], BUF(2));
	CHECK_ERRNO(k_sq(&K, &r, NULL, NULL, NULL), VPORT_BUSY);
	CHECK_ERRNO(k_cq(&K, 64, BUF(1), &cq[1]), 0);
	CHECK_ERRNO(k_wq(&K, cq[1], BUF(3), &wq), 0);
	CHECK_ERRNO(k_table(&K, 0, &wq, &t), 0);
	rr = rss_default(&K, t);
	/*
	 * 7.2: no raw QP of the PD could configure the vport, so the RSS QP
	 * has none to take (EINVAL); before, it programs the steering
	 * without the vport.
	 */
	if (VPORT_REFS) {
		CHECK_ERRNO(k_rss(&K, &rr, NULL, NULL), EINVAL);
	} else {
		uint32_t qp;

		CHECK_ERRNO(k_rss(&K, &rr, &qp, NULL), 0);
		CHECK_ERRNO(k_destroy_qp(&K, qp), 0);
	}
	CHECK_ERRNO(k_destroy_table(&K, t), 0);
	CHECK_ERRNO(k_destroy_wq(&K, wq), 0);
	CHECK_ERRNO(k_destroy_cq(&K, cq[1]), 0);
	CHECK_ERRNO(k_destroy_cq(&K, cq[0]), 0);
}

/* Run @fn and check the kernel holds the same objects afterwards. */
static void run(void (*fn)(void), const char *name)
{
	struct mana_emu_counts before, after;

	CHECK(emu_counts(&before) == 0, "counts");
	fn();
	CHECK(emu_counts(&after) == 0 && counts_equal(&before, &after),
	      "%s left objects behind (qps %u cqs %u wqs %u tables %u)", name,
	      after.qps, after.cqs, after.wqs, after.ind_tables);
}

int main(int argc, char **argv)
{
	bool netdev_up = argc > 1 && !strcmp(argv[1], "--netdev-up");
	struct mana_emu_counts end;

	mem = mmap(NULL, 64 * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro_page = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	/*
	 * Inaccessible, and kept reserved (PROT_NONE rather than unmapped):
	 * an unmapped hole is soon filled by another mapping of the process
	 * (seen under ASan in a Debian 13 root), and then is no bad address.
	 */
	gone_page = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	half_page = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(half_page + PAGE, PAGE, PROT_NONE);
	CHECK(mem != MAP_FAILED && ro_page != MAP_FAILED, "scratch memory");
	kver = emu_kernel_version();
	CHECK_ERRNO(k_open(&K), 0);
	CHECK_ERRNO(k_pd(&K, &K.pd), 0);
	if (check_failed)
		return check_done();

	if (netdev_up) {
		run(test_netdev_up, "netdev-up");
	} else {
		run(test_cq, "cq");
		run(test_wq, "wq");
		run(test_sq, "sq");
		run(test_vport_busy, "vport");
		run(test_rss, "rss");
		run(test_ioctl, "ioctl");
		run(test_mmap, "mmap");
		run(test_mr, "mr");
		run(test_context_pd, "context_pd");
		run(test_qp_types, "qp_types");
		run(test_query_era, "query_era");
		test_close_releases();
	}
	k_close(&K);
	CHECK(emu_counts(&end) == 0 && !end.contexts && !end.pds && !end.cqs &&
	      !end.qps, "leaks at close");
	return check_done();
}
