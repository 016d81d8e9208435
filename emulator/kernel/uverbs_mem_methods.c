// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The native ioctl methods on device memory and the MR methods beyond
 * REG_MR: DM_ALLOC / DM_FREE (the uverbs core's DM object, present only
 * where mana_ib sets dealloc_dm: the RNIC device from 7.0), MR/DM_MR_REG
 * and MR/REG_DMABUF_MR, with the core's checks before mana_ib's
 * (uverbs_std_types_dm.c, uverbs_std_types_mr.c).
 */
#include <infiniband/verbs.h>	/* before any rdma/ uAPI header */

#include "uverbs_ioctl.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>

#include "emulator/core/emu.h"
#include "kernel.h"
#include "uverbs.h"

/* mana_ib_dev_dm_ops: set on the RNIC device only, from 7.0 */
static bool dm_present(const struct emu_call *c)
{
	return kernel_era()->dm && emu_ibdev_of(c->file)->rnic;
}

static void dm_release(struct emu_obj *obj)
{
	struct emu_dm *dm = (struct emu_dm *)obj;

	emu_dev_dm_free(dm->mem, dm->length);
}

/* UVERBS_METHOD_DM_ALLOC, then mana_ib_alloc_dm (GDMA_ALLOC_DM) */
static int m_dm_alloc(struct emu_call *c)
{
	struct emu_ucontext *ctx;
	uint32_t alignment;
	uint64_t length;
	struct emu_dm *dm;
	void *mem;
	int ret;

	ctx = call_ctx(c, &ret);
	if (!ret)
		ret = call_copy_from(c, UVERBS_ATTR_ALLOC_DM_LENGTH, &length,
				     sizeof(length));
	if (!ret)
		ret = call_copy_from(c, UVERBS_ATTR_ALLOC_DM_ALIGNMENT,
				     &alignment, sizeof(alignment));
	if (ret)
		return ret;
	/* the adapter refuses: a nonzero status, which mana_ib makes EPROTO */
	mem = emu_dev_dm_alloc(length, alignment);
	if (!mem)
		return -EPROTO;
	dm = obj_create(ctx, EMU_OBJ_DM, sizeof(*dm), NULL, 0, dm_release);
	if (!dm) {
		emu_dev_dm_free(mem, length);
		return -ENOMEM;
	}
	dm->mem = mem;
	dm->length = length;
	ret = call_set_handle(c, UVERBS_ATTR_ALLOC_DM_HANDLE, dm->obj.handle);
	if (ret)
		emu_obj_destroy(&dm->obj);
	return ret;
}

/* UVERBS_METHOD_DM_MR_REG: the core's checks, then mana_ib_reg_dm_mr */
static int m_dm_mr_reg(struct emu_call *c)
{
	struct emu_dm *dm = call_obj(c, UVERBS_ATTR_REG_DM_MR_DM_HANDLE);
	struct emu_pd *pd = call_obj(c, UVERBS_ATTR_REG_DM_MR_PD_HANDLE);
	struct emu_mr_req req = {};
	uint64_t offset, length, access;
	struct emu_mr *mr;
	int ret;

	ret = call_copy_from(c, UVERBS_ATTR_REG_DM_MR_OFFSET, &offset,
			     sizeof(offset));
	if (!ret)
		ret = call_copy_from(c, UVERBS_ATTR_REG_DM_MR_LENGTH, &length,
				     sizeof(length));
	if (!ret)
		ret = call_get_flags(c, UVERBS_ATTR_REG_DM_MR_ACCESS_FLAGS,
				     CORE_ACCESS_SUPPORTED, &access);
	if (ret)
		return ret;
	/* DM MRs are zero-based: there is no address to give */
	if (!(access & IB_UVERBS_ACCESS_ZERO_BASED))
		return -EINVAL;
	ret = emu_check_mr_access(access);
	if (ret)
		return ret;
	if (offset > dm->length || length > dm->length ||
	    length > dm->length - offset)
		return -EINVAL;
	req.start = offset;
	req.length = length;
	req.access = access;
	ret = emu_dm_mr_reg(pd, dm, &req, &mr);
	if (ret)
		return ret;
	ret = call_copy_to(c, UVERBS_ATTR_REG_DM_MR_RESP_LKEY, &mr->lkey,
			   sizeof(mr->lkey));
	if (!ret)
		ret = call_copy_to(c, UVERBS_ATTR_REG_DM_MR_RESP_RKEY,
				   &mr->rkey, sizeof(mr->rkey));
	if (!ret)
		ret = call_set_handle(c, UVERBS_ATTR_REG_DM_MR_HANDLE,
				      mr->obj.handle);
	if (ret)
		emu_obj_destroy(&mr->obj);
	return ret;
}

/*
 * UVERBS_METHOD_REG_DMABUF_MR: the core's checks (in the core since 5.12,
 * EOPNOTSUPP from a driver without reg_user_mr_dmabuf: mana_ib before
 * 6.15), then mana_ib_reg_user_mr_dmabuf.
 */
static int m_dmabuf_mr_reg(struct emu_call *c)
{
	struct emu_pd *pd = call_obj(c, UVERBS_ATTR_REG_DMABUF_MR_PD_HANDLE);
	struct emu_mr_req req = {};
	uint64_t access;
	struct emu_mr *mr;
	uint32_t fd;
	int ret;

	if (!kernel_era()->dmabuf_mr)
		return -EOPNOTSUPP;
	ret = call_copy_from(c, UVERBS_ATTR_REG_DMABUF_MR_OFFSET, &req.start,
			     sizeof(req.start));
	if (!ret)
		ret = call_copy_from(c, UVERBS_ATTR_REG_DMABUF_MR_LENGTH,
				     &req.length, sizeof(req.length));
	if (!ret)
		ret = call_copy_from(c, UVERBS_ATTR_REG_DMABUF_MR_IOVA, &req.iova,
				     sizeof(req.iova));
	if (ret)
		return ret;
	if ((req.start ^ req.iova) & (EMU_PAGE_SIZE - 1))
		return -EINVAL;
	ret = call_copy_from(c, UVERBS_ATTR_REG_DMABUF_MR_FD, &fd, sizeof(fd));
	if (!ret)
		ret = call_get_flags(c, UVERBS_ATTR_REG_DMABUF_MR_ACCESS_FLAGS,
				     IB_UVERBS_ACCESS_LOCAL_WRITE |
				     IB_UVERBS_ACCESS_REMOTE_READ |
				     IB_UVERBS_ACCESS_REMOTE_WRITE |
				     IB_UVERBS_ACCESS_REMOTE_ATOMIC |
				     IB_UVERBS_ACCESS_RELAXED_ORDERING, &access);
	if (ret)
		return ret;
	ret = emu_check_mr_access(access);
	if (ret)
		return ret;
	req.access = access;
	ret = emu_dmabuf_mr_reg(pd, (int)fd, &req, &mr);
	if (ret)
		return ret;
	ret = call_copy_to(c, UVERBS_ATTR_REG_DMABUF_MR_RESP_LKEY, &mr->lkey,
			   sizeof(mr->lkey));
	if (!ret)
		ret = call_copy_to(c, UVERBS_ATTR_REG_DMABUF_MR_RESP_RKEY,
				   &mr->rkey, sizeof(mr->rkey));
	if (!ret)
		ret = call_set_handle(c, UVERBS_ATTR_REG_DMABUF_MR_HANDLE,
				      mr->obj.handle);
	if (ret)
		emu_obj_destroy(&mr->obj);
	return ret;
}

static const struct emu_attr_spec dmabuf_mr_reg_specs[] = {
	A_IDR_NEW(UVERBS_ATTR_REG_DMABUF_MR_HANDLE, EMU_OBJ_MR),
	A_IDR_IN(UVERBS_ATTR_REG_DMABUF_MR_PD_HANDLE, EMU_OBJ_PD, true),
	A_U64_IN(UVERBS_ATTR_REG_DMABUF_MR_OFFSET, true),
	A_U64_IN(UVERBS_ATTR_REG_DMABUF_MR_LENGTH, true),
	A_U64_IN(UVERBS_ATTR_REG_DMABUF_MR_IOVA, true),
	A_U32_IN(UVERBS_ATTR_REG_DMABUF_MR_FD, true),
	A_FLAGS_IN(UVERBS_ATTR_REG_DMABUF_MR_ACCESS_FLAGS, false),
	A_U32_OUT(UVERBS_ATTR_REG_DMABUF_MR_RESP_LKEY, true),
	A_U32_OUT(UVERBS_ATTR_REG_DMABUF_MR_RESP_RKEY, true),
};

static const struct emu_attr_spec dm_alloc_specs[] = {
	A_IDR_NEW(UVERBS_ATTR_ALLOC_DM_HANDLE, EMU_OBJ_DM),
	A_U64_IN(UVERBS_ATTR_ALLOC_DM_LENGTH, true),
	A_U32_IN(UVERBS_ATTR_ALLOC_DM_ALIGNMENT, true),
};

static const struct emu_attr_spec dm_free_specs[] = {
	A_IDR(UVERBS_ATTR_FREE_DM_HANDLE, EMU_OBJ_DM, ACCESS_DESTROY),
};

static const struct emu_attr_spec dm_mr_reg_specs[] = {
	A_IDR_NEW(UVERBS_ATTR_REG_DM_MR_HANDLE, EMU_OBJ_MR),
	A_U64_IN(UVERBS_ATTR_REG_DM_MR_OFFSET, true),
	A_U64_IN(UVERBS_ATTR_REG_DM_MR_LENGTH, true),
	A_IDR_IN(UVERBS_ATTR_REG_DM_MR_PD_HANDLE, EMU_OBJ_PD, true),
	A_FLAGS_IN(UVERBS_ATTR_REG_DM_MR_ACCESS_FLAGS, false),
	A_IDR_IN(UVERBS_ATTR_REG_DM_MR_DM_HANDLE, EMU_OBJ_DM, true),
	A_U32_OUT(UVERBS_ATTR_REG_DM_MR_RESP_LKEY, true),
	A_U32_OUT(UVERBS_ATTR_REG_DM_MR_RESP_RKEY, true),
};

static const struct emu_method mem_methods[] = {
	METHOD_IF(DM, DM_ALLOC, m_dm_alloc, false, dm_alloc_specs,
		  dm_present),
	METHOD_IF(DM, DM_FREE, m_destroy, false, dm_free_specs, dm_present),
	/* the core disables a method whose attribute names a missing object */
	METHOD_IF(MR, DM_MR_REG, m_dm_mr_reg, false, dm_mr_reg_specs,
		  dm_present),
	METHOD(MR, REG_DMABUF_MR, m_dmabuf_mr_reg, false, dmabuf_mr_reg_specs),
};

const struct emu_method_table uverbs_mem_methods = METHOD_TABLE(mem_methods);
