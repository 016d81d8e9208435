// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The manadv direct-verbs API.
 */
#include <stdlib.h>
#include <string.h>

#include "mana.h"
#include "manadv_impl.h"

int manadv_set_context_attr(struct ibv_context *ibctx,
			    enum manadv_set_ctx_attr_type type, void *attr)
{
	struct manadv_ctx_allocators *allocators = attr;
	struct mana_context *ctx;

	if (!mana_is_mana_context(ibctx))
		return EINVAL;
	if (type != MANADV_CTX_ATTR_BUF_ALLOCATORS) {
		mana_err(ibctx, "unknown context attribute type %d", type);
		return EOPNOTSUPP;
	}
	if (!allocators || !allocators->alloc != !allocators->free) {
		mana_err(ibctx, "allocators need both alloc and free");
		return EINVAL;
	}

	ctx = to_mctx(ibctx);
	pthread_mutex_lock(&ctx->lock);
	ctx->allocators = *allocators;
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

int manadv_init_obj(struct manadv_obj *obj, uint64_t obj_type)
{
	const uint64_t known = MANADV_OBJ_QP | MANADV_OBJ_CQ | MANADV_OBJ_RWQ |
			       MANADV_OBJ_PD;
	int ret;

	if (!obj || !obj_type || (obj_type & ~known))
		return EINVAL;

	if (obj_type & MANADV_OBJ_QP) {
		ret = mana_init_obj_qp(obj->qp.in, obj->qp.out);
		if (ret)
			return ret;
	}
	if (obj_type & MANADV_OBJ_CQ) {
		ret = mana_init_obj_cq(obj->cq.in, obj->cq.out);
		if (ret)
			return ret;
	}
	if (obj_type & MANADV_OBJ_RWQ) {
		ret = mana_init_obj_rwq(obj->rwq.in, obj->rwq.out);
		if (ret)
			return ret;
	}
	if (obj_type & MANADV_OBJ_PD) {
		ret = mana_init_obj_pd(obj->pd.in, obj->pd.out);
		if (ret)
			return ret;
	}
	return 0;
}

/* A parent domain answers with the number of its protection domain. */
int mana_init_obj_pd(struct ibv_pd *ibpd, struct manadv_pd *out)
{
	struct mana_pd *pd;

	if (!ibpd || !out || !mana_is_mana_context(ibpd->context))
		return EINVAL;
	pd = mana_real_pd(to_mpd(ibpd));
	if (!pd->has_pdn) {
		mana_err(ibpd->context,
			 "the kernel gave no PD number (mana_ib before 7.1)");
		return EOPNOTSUPP;
	}
	out->pdn = pd->pdn;
	return 0;
}

struct ibv_pd *manadv_alloc_pd(struct ibv_context *context, uint32_t flags)
{
	if (!mana_is_mana_context(context)) {
		errno = EINVAL;
		return NULL;
	}
	return mana_alloc_pd_flags(context, flags);
}
