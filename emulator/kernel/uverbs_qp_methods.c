// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The native ioctl methods on queue objects (CQ, QP, WQ, RWQ indirection
 * table), with their attribute specs.  The ioctl framework is in
 * uverbs_ioctl.c.  A new method: its handler, its specs and one row in
 * qp_methods[].
 */
#include <infiniband/verbs.h>	/* before any rdma/ uAPI header */

#include "uverbs_ioctl.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "emulator/core/emu.h"
#include "kernel.h"
#include "uverbs.h"

static int m_cq_create(struct emu_call *c)
{
	struct emu_attr *ch = call_attr(c, UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL);
	struct emu_cq_req req = { .channel = ch ? ch->ev : NULL };
	struct emu_ucontext *ctx;
	uint32_t zero = 0;
	uint64_t flags;
	struct emu_cq *cq;
	int ret;

	ctx = call_ctx(c, &ret);
	if (!ret)
		ret = call_copy_from(c, UVERBS_ATTR_CREATE_CQ_COMP_VECTOR,
				     &req.comp_vector, sizeof(req.comp_vector));
	if (!ret)
		ret = call_copy_from(c, UVERBS_ATTR_CREATE_CQ_CQE, &req.cqe,
				     sizeof(req.cqe));
	if (!ret)
		ret = call_copy_from(c, UVERBS_ATTR_CREATE_CQ_USER_HANDLE,
				     &req.user_handle, sizeof(req.user_handle));
	if (!ret)
		ret = call_get_flags(c, UVERBS_ATTR_CREATE_CQ_FLAGS,
				     IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION |
				     IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN, &flags);
	if (ret)
		return ret;
	if (req.comp_vector >= emu_dev.num_comp_vectors)
		return -EINVAL;
	if (flags)
		return -EOPNOTSUPP;
	ret = emu_cq_create(ctx, &req, &c->b.uhw, &cq);
	if (ret)
		return ret;
	/* no mana_ib sets ib_cq.cqe, which the core answers: 0 */
	ret = call_copy_to(c, UVERBS_ATTR_CREATE_CQ_RESP_CQE, &zero,
			   sizeof(zero));
	if (!ret)
		ret = call_set_handle(c, UVERBS_ATTR_CREATE_CQ_HANDLE,
				      cq->obj.handle);
	if (ret)
		emu_obj_destroy(&cq->obj);
	return ret;
}

/* The core destroys first, then the handler reports (uobj_destroy). */
static int m_cq_destroy(struct emu_call *c)
{
	struct emu_cq *cq = call_obj(c, UVERBS_ATTR_DESTROY_CQ_HANDLE);
	struct ib_uverbs_destroy_cq_resp resp = {
		.comp_events_reported = cq->comp_events_reported,
		.async_events_reported = cq->async_events_reported,
	};
	int ret;

	ret = emu_obj_destroy(&cq->obj);
	if (ret)
		return ret;
	return call_copy_to(c, UVERBS_ATTR_DESTROY_CQ_RESP, &resp,
			    sizeof(resp));
}

static bool call_valid(struct emu_call *c, unsigned int id)
{
	return call_has_attr(c, id);
}

/* The objects of QP_CREATE, resolved as UVERBS_METHOD_QP_CREATE does. */
static int qp_method_objs(struct emu_call *c, const struct ib_uverbs_qp_cap *cap,
			  struct emu_qp_req *req)
{
	if (req->qp_type == IB_UVERBS_QPT_XRC_TGT)
		return -ENOENT;		/* no XRC domain can exist */
	if (call_valid(c, UVERBS_ATTR_CREATE_QP_XRCD_HANDLE) ||
	    (call_valid(c, UVERBS_ATTR_CREATE_QP_SRQ_HANDLE) &&
	     req->qp_type == IB_UVERBS_QPT_XRC_INI))
		return -EINVAL;
	req->pd = call_obj(c, UVERBS_ATTR_CREATE_QP_PD_HANDLE);
	if (!req->pd)
		return -ENOENT;
	req->tbl = call_obj(c, UVERBS_ATTR_CREATE_QP_IND_TABLE_HANDLE);
	if (req->tbl) {
		if (cap->max_recv_wr || cap->max_recv_sge ||
		    call_valid(c, UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE) ||
		    call_valid(c, UVERBS_ATTR_CREATE_QP_SRQ_HANDLE))
			return -EINVAL;
		if (!cap->max_send_wr)
			return 0;
		req->send_cq = call_obj(c, UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE);
		return req->send_cq ? 0 : -ENOENT;
	}
	req->send_cq = call_obj(c, UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE);
	if (!req->send_cq)
		return -ENOENT;
	if (req->qp_type == IB_UVERBS_QPT_XRC_INI)
		return 0;
	req->recv_cq = call_obj(c, UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE);
	return req->recv_cq ? 0 : -ENOENT;
}

#define QP_CREATE_FLAGS_IOCTL                                                  \
	(IB_UVERBS_QP_CREATE_BLOCK_MULTICAST_LOOPBACK |                        \
	 IB_UVERBS_QP_CREATE_SCATTER_FCS | IB_UVERBS_QP_CREATE_CVLAN_STRIPPING | \
	 IB_UVERBS_QP_CREATE_PCI_WRITE_END_PADDING |                          \
	 IB_UVERBS_QP_CREATE_SQ_SIG_ALL)

/* check_creation_flags() of the core */
static int qp_method_flags(struct emu_call *c, struct emu_qp_req *req)
{
	uint64_t flags;
	int ret;

	ret = call_get_flags(c, UVERBS_ATTR_CREATE_QP_FLAGS,
			     QP_CREATE_FLAGS_IOCTL, &flags);
	if (ret)
		return ret;
	req->sq_sig_all = flags & IB_UVERBS_QP_CREATE_SQ_SIG_ALL;
	flags &= ~(uint64_t)IB_UVERBS_QP_CREATE_SQ_SIG_ALL;
	if (flags && req->qp_type != IB_UVERBS_QPT_RAW_PACKET &&
	    req->qp_type != IB_UVERBS_QPT_UD)
		return -EINVAL;
	if ((flags & (IB_UVERBS_QP_CREATE_SCATTER_FCS |
		      IB_UVERBS_QP_CREATE_CVLAN_STRIPPING)) &&
	    req->qp_type != IB_UVERBS_QPT_RAW_PACKET)
		return -EINVAL;
	req->create_flags = flags;
	return 0;
}

static int qp_method_outputs(struct emu_call *c,
			     const struct ib_uverbs_qp_cap *cap,
			     struct emu_qp *qp)
{
	int ret;

	ret = call_copy_to_struct_or_zero(c, UVERBS_ATTR_CREATE_QP_RESP_CAP,
					  cap, sizeof(*cap));
	if (!ret)
		ret = call_copy_to(c, UVERBS_ATTR_CREATE_QP_RESP_QP_NUM,
				   &qp->qp_num, sizeof(qp->qp_num));
	if (!ret)
		ret = call_set_handle(c, UVERBS_ATTR_CREATE_QP_HANDLE,
				      qp->obj.handle);
	return ret;
}

static int m_qp_create(struct emu_call *c)
{
	struct ib_uverbs_qp_cap cap;
	struct emu_ucontext *ctx;
	struct emu_qp_req req = {};
	uint64_t type;
	struct emu_qp *qp;
	int ret;

	ctx = call_ctx(c, &ret);
	if (!ret)
		ret = call_copy_from_or_zero(c, UVERBS_ATTR_CREATE_QP_CAP, &cap,
					     sizeof(cap));
	if (!ret)
		ret = call_copy_from(c, UVERBS_ATTR_CREATE_QP_USER_HANDLE,
				     &req.user_handle, sizeof(req.user_handle));
	if (!ret)
		ret = call_get_const(c, UVERBS_ATTR_CREATE_QP_TYPE, INT32_MAX,
				     &type);
	if (ret)
		return ret;
	req.qp_type = type;
	ret = qp_type_known(req.qp_type);
	if (!ret)
		ret = qp_method_objs(c, &cap, &req);
	if (!ret)
		ret = qp_method_flags(c, &req);
	if (ret)
		return ret;
	req.max_send_wr = cap.max_send_wr;
	req.max_recv_wr = cap.max_recv_wr;
	req.max_send_sge = cap.max_send_sge;
	req.max_recv_sge = cap.max_recv_sge;
	req.max_inline_data = cap.max_inline_data;
	ret = emu_qp_create(ctx, &req, &c->b.uhw, &qp);
	if (ret)
		return ret;
	ret = qp_method_outputs(c, &cap, qp);
	if (ret)
		emu_obj_destroy(&qp->obj);
	return ret;
}

static int m_qp_destroy(struct emu_call *c)
{
	struct emu_qp *qp = call_obj(c, UVERBS_ATTR_DESTROY_QP_HANDLE);
	struct ib_uverbs_destroy_qp_resp resp = {
		.events_reported = qp->events_reported,
	};
	int ret;

	ret = emu_obj_destroy(&qp->obj);
	if (ret)
		return ret;
	return call_copy_to(c, UVERBS_ATTR_DESTROY_QP_RESP, &resp,
			    sizeof(resp));
}

static int m_wq_create(struct emu_call *c)
{
	struct emu_pd *pd = call_obj(c, UVERBS_ATTR_CREATE_WQ_PD_HANDLE);
	struct emu_cq *cq = call_obj(c, UVERBS_ATTR_CREATE_WQ_CQ_HANDLE);
	struct emu_wq_req req = {};
	uint64_t flags, type;
	struct emu_wq *wq;
	int ret;

	ret = call_get_flags(c, UVERBS_ATTR_CREATE_WQ_FLAGS,
			     IB_UVERBS_WQ_FLAGS_CVLAN_STRIPPING |
			     IB_UVERBS_WQ_FLAGS_SCATTER_FCS |
			     IB_UVERBS_WQ_FLAGS_DELAY_DROP |
			     IB_UVERBS_WQ_FLAGS_PCI_WRITE_END_PADDING, &flags);
	if (!ret)
		ret = call_copy_from(c, UVERBS_ATTR_CREATE_WQ_MAX_SGE,
				     &req.max_sge, sizeof(req.max_sge));
	if (!ret)
		ret = call_copy_from(c, UVERBS_ATTR_CREATE_WQ_MAX_WR,
				     &req.max_wr, sizeof(req.max_wr));
	if (!ret)
		ret = call_copy_from(c, UVERBS_ATTR_CREATE_WQ_USER_HANDLE,
				     &req.user_handle, sizeof(req.user_handle));
	if (!ret)
		ret = call_get_const(c, UVERBS_ATTR_CREATE_WQ_TYPE, INT32_MAX,
				     &type);
	if (ret)
		return ret;
	if (type != IBV_WQT_RQ || !cq)
		return -EINVAL;
	req.wq_type = type;
	req.flags = flags;
	ret = emu_wq_create(pd, cq, &req, &c->b.uhw, &wq);
	if (ret)
		return ret;
	ret = call_copy_to(c, UVERBS_ATTR_CREATE_WQ_RESP_MAX_WR, &req.max_wr,
			   sizeof(req.max_wr));
	if (!ret)
		ret = call_copy_to(c, UVERBS_ATTR_CREATE_WQ_RESP_MAX_SGE,
				   &req.max_sge, sizeof(req.max_sge));
	if (!ret) {
		uint32_t wqn = 0;	/* mana_ib never sets wq_num */

		ret = call_copy_to(c, UVERBS_ATTR_CREATE_WQ_RESP_WQ_NUM, &wqn,
				   sizeof(wqn));
		if (ret == -ENOENT)
			ret = 0;
	}
	if (!ret)
		ret = call_set_handle(c, UVERBS_ATTR_CREATE_WQ_HANDLE,
				      wq->obj.handle);
	if (ret)
		emu_obj_destroy(&wq->obj);
	return ret;
}

static int m_wq_destroy(struct emu_call *c)
{
	uint32_t events = 0;
	int ret;

	ret = emu_obj_destroy(call_obj(c, UVERBS_ATTR_DESTROY_WQ_HANDLE));
	if (ret)
		return ret;
	return call_copy_to(c, UVERBS_ATTR_DESTROY_WQ_RESP, &events,
			    sizeof(events));
}

static const struct emu_attr_spec cq_create_specs[] = {
	A_IDR_NEW(UVERBS_ATTR_CREATE_CQ_HANDLE, EMU_OBJ_CQ),
	A_U32_IN(UVERBS_ATTR_CREATE_CQ_CQE, true),
	A_U64_IN(UVERBS_ATTR_CREATE_CQ_USER_HANDLE, true),
	A_FD_IN(UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL, false),
	A_U32_IN(UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, true),
	A_FLAGS_IN(UVERBS_ATTR_CREATE_CQ_FLAGS, false),
	A_U32_OUT(UVERBS_ATTR_CREATE_CQ_RESP_CQE, true),
	A_FD_IN(UVERBS_ATTR_CREATE_CQ_EVENT_FD, true),
};

static const struct emu_attr_spec cq_destroy_specs[] = {
	A_IDR(UVERBS_ATTR_DESTROY_CQ_HANDLE, EMU_OBJ_CQ, ACCESS_DESTROY),
	A_PTR_OUT(UVERBS_ATTR_DESTROY_CQ_RESP,
		  sizeof(struct ib_uverbs_destroy_cq_resp),
		  sizeof(struct ib_uverbs_destroy_cq_resp), true),
};

static const struct emu_attr_spec qp_create_specs[] = {
	A_IDR_NEW(UVERBS_ATTR_CREATE_QP_HANDLE, EMU_OBJ_QP),
	A_IDR_IN(UVERBS_ATTR_CREATE_QP_XRCD_HANDLE, EMU_OBJ_NONE, false),
	A_IDR_IN(UVERBS_ATTR_CREATE_QP_PD_HANDLE, EMU_OBJ_PD, false),
	A_IDR_IN(UVERBS_ATTR_CREATE_QP_SRQ_HANDLE, EMU_OBJ_NONE, false),
	A_IDR_IN(UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE, EMU_OBJ_CQ, false),
	A_IDR_IN(UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE, EMU_OBJ_CQ, false),
	A_IDR_IN(UVERBS_ATTR_CREATE_QP_IND_TABLE_HANDLE, EMU_OBJ_IND_TBL,
		 false),
	A_U64_IN(UVERBS_ATTR_CREATE_QP_USER_HANDLE, true),
	{ .id = UVERBS_ATTR_CREATE_QP_CAP, .type = SPEC_PTR_IN,
	  .zero_trailing = true, .mandatory = true,
	  .min_len = sizeof(struct ib_uverbs_qp_cap),
	  .len = sizeof(struct ib_uverbs_qp_cap) },
	A_CONST_IN(UVERBS_ATTR_CREATE_QP_TYPE, true),
	A_FLAGS_IN(UVERBS_ATTR_CREATE_QP_FLAGS, false),
	A_U32_IN(UVERBS_ATTR_CREATE_QP_SOURCE_QPN, false),
	A_FD_IN(UVERBS_ATTR_CREATE_QP_EVENT_FD, true),
	A_STRUCT_OUT(UVERBS_ATTR_CREATE_QP_RESP_CAP, struct ib_uverbs_qp_cap,
		     max_inline_data, true),
	A_U32_OUT(UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, true),
};

static const struct emu_attr_spec qp_destroy_specs[] = {
	A_IDR(UVERBS_ATTR_DESTROY_QP_HANDLE, EMU_OBJ_QP, ACCESS_DESTROY),
	A_PTR_OUT(UVERBS_ATTR_DESTROY_QP_RESP,
		  sizeof(struct ib_uverbs_destroy_qp_resp),
		  sizeof(struct ib_uverbs_destroy_qp_resp), true),
};

static const struct emu_attr_spec wq_create_specs[] = {
	A_IDR_NEW(UVERBS_ATTR_CREATE_WQ_HANDLE, EMU_OBJ_WQ),
	A_IDR_IN(UVERBS_ATTR_CREATE_WQ_PD_HANDLE, EMU_OBJ_PD, true),
	A_CONST_IN(UVERBS_ATTR_CREATE_WQ_TYPE, true),
	A_U64_IN(UVERBS_ATTR_CREATE_WQ_USER_HANDLE, true),
	A_U32_IN(UVERBS_ATTR_CREATE_WQ_MAX_WR, true),
	A_U32_IN(UVERBS_ATTR_CREATE_WQ_MAX_SGE, true),
	A_FLAGS_IN(UVERBS_ATTR_CREATE_WQ_FLAGS, true),
	A_IDR_IN(UVERBS_ATTR_CREATE_WQ_CQ_HANDLE, EMU_OBJ_CQ, false),
	A_FD_IN(UVERBS_ATTR_CREATE_WQ_EVENT_FD, true),
	A_U32_OUT(UVERBS_ATTR_CREATE_WQ_RESP_MAX_WR, true),
	A_U32_OUT(UVERBS_ATTR_CREATE_WQ_RESP_MAX_SGE, true),
	A_U32_OUT(UVERBS_ATTR_CREATE_WQ_RESP_WQ_NUM, false),
};

static const struct emu_attr_spec wq_destroy_specs[] = {
	A_IDR(UVERBS_ATTR_DESTROY_WQ_HANDLE, EMU_OBJ_WQ, ACCESS_DESTROY),
	A_U32_OUT(UVERBS_ATTR_DESTROY_WQ_RESP, true),
};

static const struct emu_attr_spec ind_tbl_destroy_specs[] = {
	A_IDR(UVERBS_ATTR_DESTROY_RWQ_IND_TBL_HANDLE, EMU_OBJ_IND_TBL,
	      ACCESS_DESTROY),
};

static const struct emu_method qp_methods[] = {
	METHOD(CQ, CQ_CREATE, m_cq_create, true, cq_create_specs),
	METHOD(CQ, CQ_DESTROY, m_cq_destroy, false, cq_destroy_specs),
	METHOD(QP, QP_CREATE, m_qp_create, true, qp_create_specs),
	METHOD(QP, QP_DESTROY, m_qp_destroy, false, qp_destroy_specs),
	METHOD(WQ, WQ_CREATE, m_wq_create, true, wq_create_specs),
	METHOD(WQ, WQ_DESTROY, m_wq_destroy, false, wq_destroy_specs),
	METHOD(RWQ_IND_TBL, RWQ_IND_TBL_DESTROY, m_destroy, false,
	       ind_tbl_destroy_specs),
};

const struct emu_method_table uverbs_qp_methods = METHOD_TABLE(qp_methods);
