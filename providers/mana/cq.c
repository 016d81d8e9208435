// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues.  For raw packet queues the kernel creates the hardware
 * CQ together with the SQ or RQ that uses it, so cq_id is only known once a
 * QP binds the CQ.
 */
#include <stdlib.h>
#include <string.h>

#include "mana.h"
#include "datapath.h"

MANA_DECLARE_DRV_CMD(mana_create_cq, ibv_create_cq, ib_uverbs_create_cq_resp,
		     mana_ib_create_cq, mana_ib_create_cq_resp);

/*
 * The kernel's CQ over @cq's ring, on @channel and cq->comp_vector: an
 * RNIC CQ (a hardware CQ now, for RC QPs) if @rnic.  0 or an errno; the
 * ids (UINT32_MAX from kernels that return none) set on success.
 * @context: the CQ's own is not set before its first creation.
 */
static int kernel_cq(struct ibv_context *context, struct mana_cq *cq,
		     struct ibv_comp_channel *channel, bool rnic)
{
	struct mana_create_cq_resp resp;
	struct mana_create_cq cmd;
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	cmd.drv.buf_addr = (uintptr_t)cq->buf.addr;
	if (rnic)
		cmd.drv.flags = MANA_IB_CREATE_RNIC_CQ;
	/* Kernels that do not return a CQ id leave this untouched. */
	resp.drv.cqid = UINT32_MAX;
	ret = ibv_cmd_create_cq(context, (int)cq->count, channel,
				cq->comp_vector, &cq->vcq.cq, &cmd.ibv_cmd,
				sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (!ret)
		cq->cqid = cq->rnic_cqid = resp.drv.cqid;
	return ret;
}

static struct mana_cq *create_cq(struct ibv_context *context, int cqe,
				 struct ibv_comp_channel *channel,
				 int comp_vector, struct mana_pd *pd)
{
	struct mana_context *ctx = to_mctx(context);
	struct mana_caps caps;
	struct mana_cq *cq;
	int ret;

	ret = mana_get_caps(ctx, &caps);
	if (ret) {
		errno = ret;
		return NULL;
	}
	/*
	 * The largest CQ mana_ib takes at all; whether it is more than
	 * max_cqe allows depends on the CQ's kind (below).
	 */
	if (cqe <= 0 || (uint32_t)cqe > MANA_CQE_MAX) {
		mana_err(context, "cqe %d out of range 1..%u", cqe, MANA_CQE_MAX);
		errno = EINVAL;
		return NULL;
	}
	if (comp_vector < 0 || comp_vector >= context->num_comp_vectors) {
		mana_err(context, "comp_vector %d out of range 0..%d",
			 comp_vector, context->num_comp_vectors - 1);
		errno = EINVAL;
		return NULL;
	}

	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	cq->count = cqe;
	cq->cqid = UINT32_MAX;
	cq->comp_vector = comp_vector;
	mana_spin_init(&cq->lock);

	ret = mana_alloc_buf(ctx, pd,
			     mana_queue_size((uint64_t)cqe * MANA_CQE_SIZE),
			     MANADV_RES_TYPE_CQ, &cq->buf);
	if (ret)
		goto err_free;
	/*
	 * max_cqe is the Ethernet queues' limit (max_qp_wr): mana_ib holds a
	 * CQ on the application's buffer (DPDK's raw queues) to it, but not
	 * an RNIC CQ, which may be deeper, as rdma-core's libmana lets it be
	 * (libfabric's ofi_rxm asks for (tx + rx depth) x 256 entries).
	 * Kernels before RNIC CQs refuse a deep one themselves.
	 */
	if (cq->buf.source != MANA_BUF_OWN && (uint32_t)cqe > caps.max_cqe) {
		mana_err(context, "cqe %d out of range 1..%u for a CQ on the application's buffer",
			 cqe, caps.max_cqe);
		ret = EINVAL;
		goto err_buf;
	}
	/*
	 * A CQ on our own ring: its depth a power of two, as hardware queues
	 * are, and at least a page of CQEs, the smallest queue the hardware
	 * takes (MANA_MIN_QSIZE): the kernel hands the device cqe * 64 bytes
	 * for a raw queue's CQ (refused below a page, EPROTO, on mana-vfio as
	 * on mana-emu), and an RNIC CQ's ring is its whole DMA region, a page
	 * at least (rdma-core takes the whole buffer likewise; manadv users
	 * count on the depth they asked for when it is a power of two of a
	 * page or more).
	 */
	if (cq->buf.source == MANA_BUF_OWN &&
	    mana_roundup_pow2(cq->count) <= MANA_CQE_MAX)
		cq->count = mana_roundup_pow2(cq->count);
	if (cq->buf.source == MANA_BUF_OWN && cq->count < MANA_MIN_QSIZE / MANA_CQE_SIZE)
		cq->count = MANA_MIN_QSIZE / MANA_CQE_SIZE;
	mana_cq_init_consumer(cq);

	/*
	 * A hardware CQ now, for RC QPs (RNIC CQ), unless the buffer is the
	 * application's (DPDK's raw queues), as rdma-core decides.
	 */
	ret = kernel_cq(context, cq, channel, cq->buf.source == MANA_BUF_OWN);
	if (ret) {
		mana_err(context, "CREATE_CQ failed: %s", strerror(ret));
		goto err_buf;
	}
	/*
	 * No mana_ib sets the core's cqe, so the kernel answers 0: report
	 * the depth the ring really has, as applications size by it.
	 */
	cq->vcq.cq.cqe = (int)cq->count;
	return cq;

err_buf:
	mana_free_buf(&cq->buf);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

struct ibv_cq *mana_create_cq(struct ibv_context *context, int cqe,
			      struct ibv_comp_channel *channel, int comp_vector)
{
	struct mana_cq *cq = create_cq(context, cqe, channel, comp_vector, NULL);

	return cq ? &cq->vcq.cq : NULL;
}

#define MANA_CQ_EX_WC_FLAGS (IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_CVLAN)

/*
 * Extended CQ.  The kernel sees an ordinary CQ: the extended poll API is
 * entirely ours, so the plain CREATE_CQ command serves every kernel.
 */
struct ibv_cq_ex *mana_create_cq_ex(struct ibv_context *context,
				    struct ibv_cq_init_attr_ex *attr)
{
	const uint32_t masks = IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD;
	struct mana_pd *pd = NULL;
	struct mana_cq *cq;

	if (!attr || attr->cqe > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & ~masks) {
		mana_err(context, "unsupported CQ comp_mask 0x%x", attr->comp_mask);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->wc_flags & ~(uint64_t)MANA_CQ_EX_WC_FLAGS) {
		mana_err(context, "unsupported wc_flags 0x%llx (no timestamps, flow tags or TM)",
			 (unsigned long long)(attr->wc_flags & ~(uint64_t)MANA_CQ_EX_WC_FLAGS));
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) {
		mana_err(context, "unsupported CQ flags 0x%x", attr->flags);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		if (!attr->parent_domain || attr->parent_domain->context != context ||
		    !to_mpd(attr->parent_domain)->protection_domain) {
			mana_err(context, "CQ parent_domain must be a parent domain of this context");
			errno = EINVAL;
			return NULL;
		}
		pd = to_mpd(attr->parent_domain);
	}

	cq = create_cq(context, (int)attr->cqe, attr->channel, attr->comp_vector, pd);
	if (!cq)
		return NULL;
	cq->wc_flags_ex = attr->wc_flags;
	cq->single_threaded = (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
			      (attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED);
	mana_cq_init_ops(cq);
	return &cq->vcq.cq_ex;
}

/*
 * A raw queue (a send QP, or a WQ for an RSS QP) is to take @cq, no
 * queue of the kernel's uses it yet.  On a kernel whose one device has raw and
 * RC queues (6.10 to 6.15: Debian 13's 6.12), a CQ on our own ring became
 * an RNIC CQ, for RC QPs, and the RNIC CQ took the CQ's DMA region:
 * mana_ib would hand the raw queue no region and the hardware refuse it
 * (CREATE_WQ_OBJ, EPROTO), as the real 6.12 does in the guest
 * (tests/guest).  rdma-core's libmana never meets this, its raw queues
 * having the application's CQs.  A CQ no RC QP uses is made again, on
 * the same ring, channel and vector, as an Ethernet CQ.
 */
int mana_cq_for_raw(struct mana_cq *cq)
{
	struct ibv_cq *ibcq = &cq->vcq.cq;
	struct ibv_context *context = ibcq->context;
	struct ibv_comp_channel *channel = ibcq->channel;
	void *cq_context = ibcq->cq_context;
	struct mana_caps caps;
	int ret;

	if (cq->rnic_cqid == UINT32_MAX)
		return 0;
	if (cq->rc) {
		mana_err(context, "the CQ serves RC QPs: a raw queue needs a CQ of its own");
		return EINVAL;
	}
	ret = mana_get_caps(to_mctx(context), &caps);
	if (ret)
		return ret;
	if (cq->count > caps.max_cqe) {
		mana_err(context, "a raw queue's CQ holds at most max_cqe (%u) entries, this one %u",
			 caps.max_cqe, cq->count);
		return EINVAL;
	}
	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret) {
		mana_err(context, "DESTROY_CQ of the RNIC CQ failed: %s", strerror(ret));
		return ret;
	}
	ret = kernel_cq(context, cq, channel, false);
	/* what libibverbs set when the CQ was made */
	ibcq->channel = channel;
	ibcq->cq_context = cq_context;
	ibcq->cqe = (int)cq->count;
	if (ret) {
		mana_err(context, "CREATE_CQ (Ethernet CQ) failed: %s; the CQ is unusable",
			 strerror(ret));
		cq->no_kernel_cq = true;
		cq->cqid = cq->rnic_cqid = UINT32_MAX;
		return ret;
	}
	/* a kernel where every CQ of this device is an RNIC CQ says so again */
	mana_dbg(context, "RNIC CQ made an Ethernet CQ for a raw queue");
	return 0;
}

int mana_destroy_cq(struct ibv_cq *ibcq)
{
	struct mana_cq *cq = to_mcq(ibcq);
	int ret;

	ret = cq->no_kernel_cq ? 0 : ibv_cmd_destroy_cq(ibcq);
	if (ret) {
		mana_err(ibcq->context, "DESTROY_CQ failed: %s", strerror(ret));
		return ret;
	}
	mana_free_buf(&cq->buf);
	free(cq);
	return 0;
}

int mana_init_obj_cq(struct ibv_cq *ibcq, struct manadv_cq *out)
{
	struct mana_cq *cq;

	if (!ibcq || !out || !mana_is_mana_context(ibcq->context))
		return EINVAL;
	cq = to_mcq(ibcq);
	out->buf = cq->buf.addr;
	out->count = cq->count;
	out->cq_id = cq->cqid;
	return 0;
}
