// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device memory: ibv_alloc_dm, ibv_reg_dm_mr, ibv_free_dm and the copies
 * ibv_memcpy_to_dm / ibv_memcpy_from_dm.
 *
 * mana_ib (Linux 7.0 on, RNIC device) allocates DM with GDMA_ALLOC_DM and
 * registers zero-based MRs on it, and that is all: it reports no
 * max_dm_size and maps no DM page into the process, so no CPU store
 * reaches device memory.  Only the RNIC does.  The copies therefore go
 * through the adapter itself: an RDMA WRITE (to DM) or READ (from DM)
 * between two RC QPs of the context connected to each other on port 1,
 * through a registered bounce buffer and an MR over the whole DM.  Those
 * are made at the first copy of the context (PD, CQ, two QPs, the
 * buffer's MR) and of each DM (its MR), and go with the context and the
 * DM.  A copy waits for its completion; a failed one leaves the QPs in
 * ERR, so the next copy makes and connects two new ones (the PD, and so
 * the DMs' MRs on it, stay).
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "mana.h"

/* one RDMA message per chunk of the bounce buffer */
#define DM_BOUNCE_SIZE (64u * 1024)

struct mana_dm {
	struct verbs_dm vdm;
	uint64_t length;
	struct ibv_mr *copy_mr;		/* the copier's MR over the DM */
};

struct mana_dm_copier {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[2];		/* [0] requester, [1] target */
	void *buf;
	struct ibv_mr *buf_mr;
	bool broken;			/* a copy failed: new QPs first */
};

static inline struct mana_dm *to_mdm(struct ibv_dm *dm)
{
	return container_of(dm, struct mana_dm, vdm.dm);
}

static void copier_destroy_qps(struct mana_dm_copier *c)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 2; i++) {
		if (c->qp[i])
			ibv_destroy_qp(c->qp[i]);
		c->qp[i] = NULL;
	}
	/* what the QPs left in the CQ (flushed work) goes with them */
	while (c->cq && ibv_poll_cq(c->cq, 1, &wc) > 0)
		;
}

static void copier_destroy(struct mana_dm_copier *c)
{
	copier_destroy_qps(c);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->buf_mr)
		ibv_dereg_mr(c->buf_mr);
	free(c->buf);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	free(c);
}

/* The first RoCE GID of port 1: where the two QPs address each other. */
static int loop_gid(struct ibv_context *ibctx, struct ibv_port_attr *pa,
		    union ibv_gid *gid)
{
	static const union ibv_gid zero;
	int i;

	for (i = 0; i < pa->gid_tbl_len; i++)
		if (!ibv_query_gid(ibctx, 1, i, gid) &&
		    memcmp(gid, &zero, sizeof(zero)))
			return i;
	return -1;
}

static int copier_connect(struct ibv_context *ibctx, struct mana_dm_copier *c)
{
	const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ;
	struct ibv_port_attr pa;
	struct ibv_qp_attr a;
	union ibv_gid gid;
	int gidx, i, ret;

	ret = ibv_query_port(ibctx, 1, &pa);
	if (ret)
		return ret;
	gidx = loop_gid(ibctx, &pa, &gid);
	if (gidx < 0) {
		mana_err(ibctx, "device memory copies need a RoCE GID on port 1");
		return EOPNOTSUPP;
	}
	for (i = 0; i < 2; i++) {
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_INIT;
		a.port_num = 1;
		a.qp_access_flags = access;
		ret = ibv_modify_qp(c->qp[i], &a, IBV_QP_STATE |
				    IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_ACCESS_FLAGS);
		if (ret)
			return ret;
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTR;
		a.path_mtu = pa.active_mtu;
		a.dest_qp_num = c->qp[!i]->qp_num;
		a.max_dest_rd_atomic = 1;
		a.min_rnr_timer = 1;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = gid;
		a.ah_attr.grh.sgid_index = gidx;
		a.ah_attr.grh.hop_limit = 1;
		a.ah_attr.port_num = 1;
		ret = ibv_modify_qp(c->qp[i], &a, IBV_QP_STATE | IBV_QP_AV |
				    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER);
		if (ret)
			return ret;
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 1;
		ret = ibv_modify_qp(c->qp[i], &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
				    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
		if (ret)
			return ret;
	}
	return 0;
}

/* Two RC QPs, connected to each other: after creation and after a failure. */
static int copier_make_qps(struct ibv_context *ibctx, struct mana_dm_copier *c)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = c->cq, .recv_cq = c->cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_all = 1,
	};
	int i, ret;

	copier_destroy_qps(c);
	for (i = 0; i < 2; i++) {
		c->qp[i] = ibv_create_qp(c->pd, &qa);
		if (!c->qp[i])
			return errno ? errno : ENOMEM;
	}
	ret = copier_connect(ibctx, c);
	if (!ret)
		c->broken = false;
	return ret;
}

static int copier_create(struct ibv_context *ibctx,
			 struct mana_dm_copier **out)
{
	struct mana_dm_copier *c = calloc(1, sizeof(*c));
	int ret;

	if (!c)
		return ENOMEM;
	c->pd = ibv_alloc_pd(ibctx);
	c->cq = c->pd ? ibv_create_cq(ibctx, 2, NULL, NULL, 0) : NULL;
	c->buf = aligned_alloc(MANA_PAGE_SIZE, DM_BOUNCE_SIZE);
	c->buf_mr = c->cq && c->buf ?
		    ibv_reg_mr(c->pd, c->buf, DM_BOUNCE_SIZE,
			       IBV_ACCESS_LOCAL_WRITE) : NULL;
	ret = c->buf_mr ? copier_make_qps(ibctx, c) : errno ? errno : ENOMEM;
	if (ret) {
		mana_err(ibctx, "device memory copier: %s", strerror(ret));
		copier_destroy(c);
		return ret;
	}
	*out = c;
	return 0;
}

/* One RDMA WRITE (to DM) or READ (from DM) of @len bytes, waited for. */
static int copy_chunk(struct ibv_context *ibctx, struct mana_dm_copier *c,
		      struct mana_dm *dm, uint64_t dm_offset, uint32_t len,
		      bool to_dm)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->buf, .length = len,
		.lkey = c->buf_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1,
		.opcode = to_dm ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = dm_offset,	/* zero-based MR */
			     .rkey = dm->copy_mr->rkey },
	}, *bad;
	struct ibv_wc wc;
	int n, ret;

	ret = ibv_post_send(c->qp[0], &wr, &bad);
	if (ret)
		return ret;
	/* the RC timers bound this: a lost copy ends in an error completion */
	while (!(n = ibv_poll_cq(c->cq, 1, &wc)))
		sched_yield();
	if (n < 0)
		return EIO;
	if (wc.status != IBV_WC_SUCCESS) {
		mana_err(ibctx, "device memory copy: %s (vendor error 0x%x)",
			 ibv_wc_status_str(wc.status), wc.vendor_err);
		return EIO;
	}
	return 0;
}

static int dm_copy(struct ibv_dm *ibdm, uint64_t dm_offset, void *host,
		   size_t length, bool to_dm)
{
	struct ibv_context *ibctx = ibdm->context;
	struct mana_context *ctx = to_mctx(ibctx);
	struct mana_dm *dm = to_mdm(ibdm);
	struct mana_dm_copier *c;
	uint32_t n;
	int ret = 0;

	if (dm_offset > dm->length || length > dm->length - dm_offset) {
		mana_err(ibctx, "copy of %zu bytes at %" PRIu64
			 " is past the end of the %" PRIu64 "-byte DM",
			 length, dm_offset, dm->length);
		return EINVAL;
	}
	if (!length)
		return 0;
	pthread_mutex_lock(&ctx->dm_lock);
	if (!ctx->dm_copier)
		ret = copier_create(ibctx, &ctx->dm_copier);
	c = ctx->dm_copier;
	if (!ret && c->broken)
		ret = copier_make_qps(ibctx, c);
	if (!ret && !dm->copy_mr) {
		dm->copy_mr = ibv_reg_dm_mr(c->pd, ibdm, 0, dm->length,
					    IBV_ACCESS_ZERO_BASED |
					    IBV_ACCESS_LOCAL_WRITE |
					    IBV_ACCESS_REMOTE_WRITE |
					    IBV_ACCESS_REMOTE_READ);
		if (!dm->copy_mr)
			ret = errno;
	}
	while (!ret && length) {
		n = length < DM_BOUNCE_SIZE ? (uint32_t)length : DM_BOUNCE_SIZE;
		if (to_dm)
			memcpy(c->buf, host, n);
		ret = copy_chunk(ibctx, c, dm, dm_offset, n, to_dm);
		if (ret)
			break;
		if (!to_dm)
			memcpy(host, c->buf, n);
		host = (char *)host + n;
		dm_offset += n;
		length -= n;
	}
	/* QPs in ERR (or never connected): new ones at the next copy */
	if (ret && c)
		c->broken = true;
	pthread_mutex_unlock(&ctx->dm_lock);
	return ret;
}

static int mana_memcpy_to_dm(struct ibv_dm *dm, uint64_t dm_offset,
			     const void *host_addr, size_t length)
{
	return dm_copy(dm, dm_offset, (void *)host_addr, length, true);
}

static int mana_memcpy_from_dm(void *host_addr, struct ibv_dm *dm,
			       uint64_t dm_offset, size_t length)
{
	return dm_copy(dm, dm_offset, host_addr, length, false);
}

struct ibv_dm *mana_alloc_dm(struct ibv_context *ibctx,
			     struct ibv_alloc_dm_attr *attr)
{
	struct mana_dm *dm;
	int ret;

	if (!attr || attr->comp_mask) {
		mana_err(ibctx, "ibv_alloc_dm_attr comp_mask 0x%x: none is known",
			 attr ? attr->comp_mask : 0);
		errno = EINVAL;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_alloc_dm(ibctx, attr, &dm->vdm, NULL);
	if (ret) {
		/*
		 * No DM object in the kernel (mana_ib before 7.0, the ETH
		 * device, or no ioctl at all): the device has no DM.
		 */
		if (ret == EPROTONOSUPPORT || ret == ENOTTY)
			ret = EOPNOTSUPP;
		mana_err(ibctx, "ALLOC_DM of %" PRIu64 " bytes failed: %s",
			 attr->length, strerror(ret));
		free(dm);
		errno = ret;
		return NULL;
	}
	dm->length = attr->length;
	dm->vdm.dm.memcpy_to_dm = mana_memcpy_to_dm;
	dm->vdm.dm.memcpy_from_dm = mana_memcpy_from_dm;
	return &dm->vdm.dm;
}

int mana_free_dm(struct ibv_dm *ibdm)
{
	struct mana_context *ctx = to_mctx(ibdm->context);
	struct mana_dm *dm = to_mdm(ibdm);
	int ret;

	pthread_mutex_lock(&ctx->dm_lock);
	if (dm->copy_mr) {
		ret = ibv_dereg_mr(dm->copy_mr);
		if (ret) {
			pthread_mutex_unlock(&ctx->dm_lock);
			return ret;
		}
		dm->copy_mr = NULL;
	}
	pthread_mutex_unlock(&ctx->dm_lock);
	ret = ibv_cmd_free_dm(&dm->vdm);
	if (ret) {
		/* the application's DM MRs still use it: EBUSY */
		mana_err(ibdm->context, "FREE_DM failed: %s", strerror(ret));
		return ret;
	}
	free(dm);
	return 0;
}

struct ibv_mr *mana_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
			      uint64_t dm_offset, size_t length,
			      unsigned int access)
{
	struct mana_dm *dm = to_mdm(ibdm);
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_reg_dm_mr(&mana_real_pd(to_mpd(pd))->ibv_pd, &dm->vdm,
				dm_offset, length, access, vmr, NULL);
	if (ret) {
		mana_err(pd->context,
			 "REG_DM_MR of %zu bytes at %" PRIu64 " (DM of %" PRIu64
			 " bytes, access 0x%x) failed: %s", length, dm_offset,
			 dm->length, access, strerror(ret));
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

void mana_dm_context_free(struct mana_context *ctx)
{
	if (ctx->dm_copier)
		copier_destroy(ctx->dm_copier);
	ctx->dm_copier = NULL;
	pthread_mutex_destroy(&ctx->dm_lock);
}
