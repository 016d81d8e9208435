// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device and port queries, protection and parent domains, memory regions.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mana.h"

/*
 * The kernel reports firmware as one u64: major in the upper 32 bits, then
 * 16-bit minor and sub-minor (the common uverbs convention).
 */
void mana_format_fw_ver(uint64_t raw, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u.%u", (unsigned int)(raw >> 32),
		 (unsigned int)(raw >> 16) & 0xffff, (unsigned int)raw & 0xffff);
}

int mana_query_device_ex(struct ibv_context *context,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	int ret;

	if (!attr || attr_size < sizeof(attr->orig_attr)) {
		mana_err(context, "attribute buffer of %zu bytes is too small",
			 attr_size);
		return EINVAL;
	}

	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_query_device_any(context, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	mana_format_fw_ver(resp.base.fw_ver, attr->orig_attr.fw_ver,
			   sizeof(attr->orig_attr.fw_ver));
	mana_dbg(context, "max_qp %d max_qp_wr %d max_cqe %d max_sge %d",
		 attr->orig_attr.max_qp, attr->orig_attr.max_qp_wr,
		 attr->orig_attr.max_cqe, attr->orig_attr.max_sge);
	return 0;
}

int mana_query_port(struct ibv_context *context, uint8_t port,
		    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_query_port(context, port, attr, &cmd, sizeof(cmd));
}

MANA_DECLARE_DRV_CMD(mana_alloc_pd_cmd, ibv_alloc_pd, ib_uverbs_alloc_pd_resp,
		     mana_ib_alloc_pd, mana_ib_alloc_pd_resp);

/*
 * ALLOC_PD with mana_ib_alloc_pd only where the kernel said it reads it
 * (ALLOC_PDN_SUPPORT): an older mana_ib ignores driver data, and a
 * kernel with robust udata but without PD numbers would refuse it.
 */
struct ibv_pd *mana_alloc_pd_flags(struct ibv_context *context,
				   uint32_t flags)
{
	bool pdn = to_mctx(context)->kernel_caps &
		   MANA_IB_UCNTX_ALLOC_PDN_SUPPORT;
	struct mana_alloc_pd_cmd_resp resp;
	struct mana_alloc_pd_cmd cmd;
	struct mana_pd *pd;
	int ret;

	if (flags & ~(uint32_t)MANADV_PD_FLAGS_SHORT_PDN) {
		mana_err(context, "unknown PD flags 0x%x", flags);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((flags & MANADV_PD_FLAGS_SHORT_PDN) && !pdn) {
		mana_err(context,
			 "short PD numbers need a kernel with PD numbers (mana_ib 7.1)");
		errno = EOPNOTSUPP;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	if (flags & MANADV_PD_FLAGS_SHORT_PDN)
		cmd.drv.comp_mask = MANA_IB_PD_SHORT_PDN;
	ret = ibv_cmd_alloc_pd(context, &pd->ibv_pd, &cmd.ibv_cmd,
			       pdn ? sizeof(cmd) : sizeof(cmd.ibv_cmd),
			       &resp.ibv_resp,
			       pdn ? sizeof(resp) : sizeof(resp.ibv_resp));
	if (ret) {
		mana_err(context, "ALLOC_PD failed: %s", strerror(ret));
		free(pd);
		errno = ret;
		return NULL;
	}
	pd->pdn = resp.drv.pdn;
	pd->has_pdn = pdn;
	return &pd->ibv_pd;
}

struct ibv_pd *mana_alloc_pd(struct ibv_context *context)
{
	return mana_alloc_pd_flags(context, 0);
}

struct ibv_pd *mana_alloc_parent_domain(struct ibv_context *context,
					struct ibv_parent_domain_init_attr *attr)
{
	struct mana_pd *parent, *protection;

	if (ibv_check_alloc_parent_domain(attr)) {
		mana_err(context, "parent domain needs a protection domain");
		return NULL;
	}
	if (attr->comp_mask & ~(uint32_t)(IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT |
					  IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS)) {
		mana_err(context, "unsupported parent domain comp_mask 0x%x",
			 attr->comp_mask);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->td) {
		mana_err(context, "thread domains are not supported");
		errno = EOPNOTSUPP;
		return NULL;
	}

	protection = to_mpd(attr->pd);
	if (attr->pd->context != context || protection->protection_domain) {
		mana_err(context,
			 "pd must be a protection domain of this context, not a parent domain");
		errno = EINVAL;
		return NULL;
	}

	parent = calloc(1, sizeof(*parent));
	if (!parent) {
		errno = ENOMEM;
		return NULL;
	}
	parent->protection_domain = protection;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		parent->pd_context = attr->pd_context;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		if (!attr->alloc || !attr->free) {
			mana_err(context, "parent domain allocators need alloc and free");
			free(parent);
			errno = EINVAL;
			return NULL;
		}
		parent->alloc = attr->alloc;
		parent->free = attr->free;
	}
	ibv_initialize_parent_domain(&parent->ibv_pd, &protection->ibv_pd);
	atomic_fetch_add(&protection->refs, 1);
	return &parent->ibv_pd;
}

int mana_dealloc_pd(struct ibv_pd *ibpd)
{
	struct mana_pd *pd = to_mpd(ibpd);
	int ret;

	if (pd->protection_domain) {
		if (atomic_load(&pd->refs)) {
			mana_err(ibpd->context,
				 "parent domain still used by %d queue(s)",
				 atomic_load(&pd->refs));
			return EBUSY;
		}
		atomic_fetch_sub(&pd->protection_domain->refs, 1);
		free(pd);
		return 0;
	}

	if (atomic_load(&pd->refs)) {
		mana_err(ibpd->context,
			 "protection domain still has %d parent domain(s)",
			 atomic_load(&pd->refs));
		return EBUSY;
	}

	ret = ibv_cmd_dealloc_pd(ibpd);
	if (ret) {
		mana_err(ibpd->context, "DEALLOC_PD failed: %s", strerror(ret));
		return ret;
	}
	free(pd);
	return 0;
}

/*
 * The access rights mana_ib grants; anything else is refused by the kernel,
 * so refuse it here with a message instead.  Optional bits (relaxed
 * ordering) may always be dropped.
 */
#define MANA_MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
			IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED)

int mana_check_mr_access(int access)
{
	int required = access & ~IBV_ACCESS_OPTIONAL_RANGE;

	/* the kernel core's answer: the device has no on-demand paging */
	if (required & IBV_ACCESS_ON_DEMAND)
		return EOPNOTSUPP;
	if (required & ~MANA_MR_ACCESS)
		return EINVAL;
	/* Remote writers need local write permission (IB spec). */
	if ((required & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(required & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	return 0;
}

struct ibv_mr *mana_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			   uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int ret;

	if (!addr || !length) {
		mana_err(pd->context, "invalid region addr %p length %zu", addr,
			 length);
		errno = EINVAL;
		return NULL;
	}
	if ((uintptr_t)addr + length < (uintptr_t)addr) {
		mana_err(pd->context, "region %p + %zu wraps around", addr,
			 length);
		errno = EINVAL;
		return NULL;
	}
	ret = mana_check_mr_access(access);
	if (ret) {
		mana_err(pd->context, "unsupported access flags 0x%x", access);
		errno = ret;
		return NULL;
	}

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}

	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va,
			     access & ~IBV_ACCESS_OPTIONAL_RANGE, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		mana_err(pd->context, "REG_MR failed: %s", strerror(ret));
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * ibv_reg_dmabuf_mr (mana_ib 6.15 on): the kernel resolves the fd to a
 * dma-buf, checks the range in it and the MR flags of its era.
 */
struct ibv_mr *mana_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
				  size_t length, uint64_t iova, int fd,
				  int access)
{
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_reg_dmabuf_mr(&mana_real_pd(to_mpd(pd))->ibv_pd, offset,
				    length, iova, fd, access, vmr
#if MANA_RDMA_CORE >= 54
				    , NULL
#endif
				    );
	if (ret) {
		/* no ioctl (or no MR object) at all: no dma-buf MRs either */
		if (ret == ENOTTY || ret == EPROTONOSUPPORT)
			ret = EOPNOTSUPP;
		mana_err(pd->context,
			 "REG_DMABUF_MR (fd %d, %zu bytes at offset %" PRIu64
			 ", iova 0x%" PRIx64 ", access 0x%x) failed: %s", fd,
			 length, offset, iova, access, strerror(ret));
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

int mana_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret) {
		mana_err(vmr->ibv_mr.context, "DEREG_MR failed: %s",
			 strerror(ret));
		return ret;
	}
	free(vmr);
	return 0;
}

/*
 * Memory windows: mana_ib allocates them from Linux 7.1 (types 1 and 2;
 * EOPNOTSUPP before), as rdma-core v63's libmana does.  Nothing binds
 * one: the RNIC's work requests have no bind (its WQE types are sends,
 * writes, reads, local invalidate and fast register), so an MW's rkey
 * grants no remote access.
 */
struct ibv_mw *mana_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		mana_err(pd->context, "ALLOC_MW (type %d) failed: %s%s", type,
			 strerror(ret), ret == EOPNOTSUPP ?
			 " (memory windows need Linux 7.1 or later)" : "");
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

int mana_dealloc_mw(struct ibv_mw *mw)
{
	int ret;

	ret = ibv_cmd_dealloc_mw(mw);
	if (ret) {
		mana_err(mw->context, "DEALLOC_MW failed: %s", strerror(ret));
		return ret;
	}
	free(mw);
	return 0;
}

int mana_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind *bind)
{
	(void)mw;
	(void)bind;
	mana_err(qp->context, "ibv_bind_mw: MANA has no memory window binding: EOPNOTSUPP");
	return EOPNOTSUPP;
}
