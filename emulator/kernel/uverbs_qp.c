// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The write() commands on queue objects: CQs, QPs, WQs and RWQ
 * indirection tables (mana_ib's raw packet QPs, RSS QPs and their WQs).
 * The write ABI itself and the command tables are in uverbs.c; the ioctl
 * path reaches these through DEVICE/INVOKE_WRITE too.
 */
#include <infiniband/verbs.h>	/* before any rdma/ uAPI header */

#include "uverbs.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include <rdma/ib_user_verbs.h>

#include "emulator/core/emu.h"
#include "kernel.h"

static int response_length(struct emu_bundle *b, size_t len)
{
	return b->ucore.outlen < len ? b->ucore.outlen : len;
}

/* create_cq() of the core, then mana_ib */
static int create_cq(struct emu_bundle *b,
		     const struct ib_uverbs_ex_create_cq *cmd)
{
	struct ib_uverbs_ex_create_cq_resp resp = {};
	struct emu_cq_req req = {
		.user_handle = cmd->user_handle, .cqe = cmd->cqe,
		.comp_vector = cmd->comp_vector,
	};
	struct emu_ucontext *ctx;
	struct emu_cq *cq;
	int ret;

	ctx = bundle_ctx(b, &ret);
	if (ret)
		return ret;
	if (cmd->comp_vector >= emu_dev.num_comp_vectors)
		return -EINVAL;
	if (cmd->comp_channel >= 0) {
		req.channel = emu_event_file_get(b->file, cmd->comp_channel,
						 false);
		if (!req.channel)
			return -EBADF;
	}
	/* no completion timestamps on MANA */
	if (cmd->flags)
		return -EOPNOTSUPP;
	ret = emu_cq_create(ctx, &req, &b->uhw, &cq);
	if (ret)
		return ret;
	resp.base.cq_handle = cq->obj.handle;
	/* no mana_ib sets ib_cq.cqe, which the core answers: 0 */
	resp.base.cqe = 0;
	resp.response_length = response_length(b, sizeof(resp));
	return respond_created(b, &resp, sizeof(resp), &cq->obj);
}

int cmd_create_cq(struct emu_bundle *b)
{
	struct ib_uverbs_ex_create_cq ex = {};
	struct ib_uverbs_create_cq cmd;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	ex.user_handle = cmd.user_handle;
	ex.cqe = cmd.cqe;
	ex.comp_vector = cmd.comp_vector;
	ex.comp_channel = cmd.comp_channel;
	return create_cq(b, &ex);
}

int cmd_ex_create_cq(struct emu_bundle *b)
{
	struct ib_uverbs_ex_create_cq cmd;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	if (cmd.comp_mask || cmd.reserved)
		return -EINVAL;
	return create_cq(b, &cmd);
}

int cmd_destroy_cq(struct emu_bundle *b)
{
	struct ib_uverbs_destroy_cq_resp resp = {};
	struct ib_uverbs_destroy_cq cmd;
	struct emu_obj *obj;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	obj = emu_obj_lookup(b->file->ctx, EMU_OBJ_CQ, cmd.cq_handle, &ret);
	if (!obj)
		return ret;
	/* what the application read; libibverbs waits for it to be acked */
	resp.comp_events_reported = ((struct emu_cq *)obj)->comp_events_reported;
	resp.async_events_reported = ((struct emu_cq *)obj)->async_events_reported;
	ret = emu_obj_destroy(obj);
	if (ret)
		return ret;
	return emu_response(b, &resp, sizeof(resp));
}

/* uobj_get_obj_read(): an unknown handle is EINVAL for write() commands */
static void *lookup_read(struct emu_bundle *b, enum emu_obj_type type,
			 uint32_t handle)
{
	int err;

	return emu_obj_lookup(b->file->ctx, type, handle, &err);
}

int qp_type_known(uint32_t type)
{
	switch (type) {
	case IB_UVERBS_QPT_RC:
	case IB_UVERBS_QPT_UC:
	case IB_UVERBS_QPT_UD:
	case IB_UVERBS_QPT_RAW_PACKET:
	case IB_UVERBS_QPT_XRC_INI:
	case IB_UVERBS_QPT_XRC_TGT:
	case IB_UVERBS_QPT_DRIVER:
		return 0;
	}
	return -EINVAL;
}

#define QP_CREATE_FLAGS_WRITE                                                  \
	(IB_UVERBS_QP_CREATE_BLOCK_MULTICAST_LOOPBACK | (1u << 2) |            \
	 (1u << 3) | (1u << 4) | IB_UVERBS_QP_CREATE_SCATTER_FCS |            \
	 IB_UVERBS_QP_CREATE_CVLAN_STRIPPING | (1u << 10) |                   \
	 IB_UVERBS_QP_CREATE_PCI_WRITE_END_PADDING)

/* The handles of a create_qp() command, resolved as the core does. */
static int qp_write_objs(struct emu_bundle *b,
			 const struct ib_uverbs_ex_create_qp *cmd,
			 struct emu_qp_req *req)
{
	bool has_sq = true;

	if (cmd->comp_mask & IB_UVERBS_CREATE_QP_MASK_IND_TABLE) {
		req->tbl = lookup_read(b, EMU_OBJ_IND_TBL,
				       cmd->rwq_ind_tbl_handle);
		if (!req->tbl)
			return -EINVAL;
	}
	if (req->tbl && (cmd->max_recv_wr || cmd->max_recv_sge || cmd->is_srq))
		return -EINVAL;
	if (req->tbl && !cmd->max_send_wr)
		has_sq = false;
	/* no XRC domains and no SRQs exist on this device */
	if (cmd->qp_type == IB_UVERBS_QPT_XRC_TGT ||
	    (cmd->is_srq && cmd->qp_type != IB_UVERBS_QPT_XRC_INI))
		return -EINVAL;
	if (!req->tbl && cmd->qp_type != IB_UVERBS_QPT_XRC_INI &&
	    cmd->recv_cq_handle != cmd->send_cq_handle) {
		req->recv_cq = lookup_read(b, EMU_OBJ_CQ, cmd->recv_cq_handle);
		if (!req->recv_cq)
			return -EINVAL;
	}
	if (has_sq)
		req->send_cq = lookup_read(b, EMU_OBJ_CQ, cmd->send_cq_handle);
	if (!req->tbl && cmd->qp_type != IB_UVERBS_QPT_XRC_INI &&
	    !req->recv_cq)
		req->recv_cq = req->send_cq;
	req->pd = lookup_read(b, EMU_OBJ_PD, cmd->pd_handle);
	if (!req->pd || (!req->send_cq && has_sq))
		return -EINVAL;
	return 0;
}

/* create_qp() of the core */
static int create_qp(struct emu_bundle *b,
		     const struct ib_uverbs_ex_create_qp *cmd)
{
	struct ib_uverbs_ex_create_qp_resp resp = {};
	struct emu_qp_req req = {
		.user_handle = cmd->user_handle, .qp_type = cmd->qp_type,
		.max_send_wr = cmd->max_send_wr, .max_recv_wr = cmd->max_recv_wr,
		.max_send_sge = cmd->max_send_sge,
		.max_recv_sge = cmd->max_recv_sge,
		.max_inline_data = cmd->max_inline_data,
		.create_flags = cmd->create_flags,
		.sq_sig_all = cmd->sq_sig_all,
	};
	struct emu_ucontext *ctx;
	struct emu_qp *qp;
	int ret;

	ctx = bundle_ctx(b, &ret);
	if (!ret)
		ret = qp_type_known(cmd->qp_type);
	if (!ret)
		ret = qp_write_objs(b, cmd, &req);
	if (ret)
		return ret;
	if (cmd->create_flags & ~QP_CREATE_FLAGS_WRITE)
		return -EINVAL;
	ret = emu_qp_create(ctx, &req, &b->uhw, &qp);
	if (ret)
		return ret;
	resp.base.qp_handle = qp->obj.handle;
	resp.base.qpn = qp->qp_num;
	resp.base.max_send_wr = cmd->max_send_wr;
	resp.base.max_recv_wr = cmd->max_recv_wr;
	resp.base.max_send_sge = cmd->max_send_sge;
	resp.base.max_recv_sge = cmd->max_recv_sge;
	resp.base.max_inline_data = cmd->max_inline_data;
	resp.response_length = response_length(b, sizeof(resp));
	return respond_created(b, &resp, sizeof(resp), &qp->obj);
}

int cmd_create_qp(struct emu_bundle *b)
{
	struct ib_uverbs_ex_create_qp ex = {};
	struct ib_uverbs_create_qp cmd;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	ex.user_handle = cmd.user_handle;
	ex.pd_handle = cmd.pd_handle;
	ex.send_cq_handle = cmd.send_cq_handle;
	ex.recv_cq_handle = cmd.recv_cq_handle;
	ex.srq_handle = cmd.srq_handle;
	ex.max_send_wr = cmd.max_send_wr;
	ex.max_recv_wr = cmd.max_recv_wr;
	ex.max_send_sge = cmd.max_send_sge;
	ex.max_recv_sge = cmd.max_recv_sge;
	ex.max_inline_data = cmd.max_inline_data;
	ex.sq_sig_all = cmd.sq_sig_all;
	ex.qp_type = cmd.qp_type;
	ex.is_srq = cmd.is_srq;
	return create_qp(b, &ex);
}

int cmd_ex_create_qp(struct emu_bundle *b)
{
	struct ib_uverbs_ex_create_qp cmd;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	if (cmd.comp_mask & ~IB_UVERBS_CREATE_QP_SUP_COMP_MASK || cmd.reserved)
		return -EINVAL;
	return create_qp(b, &cmd);
}

int cmd_destroy_qp(struct emu_bundle *b)
{
	struct ib_uverbs_destroy_qp_resp resp = {};
	struct ib_uverbs_destroy_qp cmd;
	struct emu_qp *qp;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	/* the async events the application read; libibverbs waits for them */
	qp = lookup_read(b, EMU_OBJ_QP, cmd.qp_handle);
	if (qp)
		resp.events_reported = qp->events_reported;
	ret = destroy_handle(b, EMU_OBJ_QP, cmd.qp_handle);
	if (ret)
		return ret;
	return emu_response(b, &resp, sizeof(resp));
}

/* mana_ib's modify_qp refuses raw packet QPs. */
static int qp_notsupp(struct emu_bundle *b, uint32_t handle)
{
	return lookup_read(b, EMU_OBJ_QP, handle) ? -EOPNOTSUPP : -EINVAL;
}

int cmd_modify_qp(struct emu_bundle *b)
{
	struct ib_uverbs_modify_qp cmd;
	struct emu_qp *qp;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	qp = lookup_read(b, EMU_OBJ_QP, cmd.qp_handle);
	if (!qp)
		return -EINVAL;
	if ((cmd.attr_mask & IBV_QP_PORT) && !emu_port_valid(cmd.port_num))
		return -EINVAL;
	/* IB_QP_ATTR_STANDARD_BITS: the write command has no rate limit */
	if (qp->rc)
		return emu_rc_qp_modify(qp, &cmd, (1u << 21) - 1, &b->uhw);
	return -EOPNOTSUPP;
}

int cmd_ex_modify_qp(struct emu_bundle *b)
{
	struct ib_uverbs_ex_modify_qp_resp resp = {};
	struct ib_uverbs_ex_modify_qp cmd;
	struct emu_qp *qp;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	qp = lookup_read(b, EMU_OBJ_QP, cmd.base.qp_handle);
	if (!qp || !qp->rc)
		return qp_notsupp(b, cmd.base.qp_handle);
	/* up to IB_USER_LAST_QP_ATTR_MASK (IB_QP_RATE_LIMIT) */
	ret = emu_rc_qp_modify(qp, &cmd.base, (IBV_QP_RATE_LIMIT << 1) - 1,
			       &b->uhw);
	if (ret)
		return ret;
	resp.response_length = response_length(b, sizeof(resp));
	return emu_response(b, &resp, sizeof(resp));
}

int cmd_ex_create_wq(struct emu_bundle *b)
{
	struct ib_uverbs_ex_create_wq_resp resp = {};
	struct ib_uverbs_ex_create_wq cmd;
	struct emu_wq_req req;
	struct emu_obj *pd, *cq;
	struct emu_wq *wq;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	if (cmd.comp_mask)
		return -EOPNOTSUPP;
	bundle_ctx(b, &ret);
	if (ret)
		return ret;
	pd = lookup_read(b, EMU_OBJ_PD, cmd.pd_handle);
	cq = lookup_read(b, EMU_OBJ_CQ, cmd.cq_handle);
	if (!pd || !cq)
		return -EINVAL;
	req = (struct emu_wq_req){ .user_handle = cmd.user_handle,
				   .wq_type = cmd.wq_type,
				   .max_wr = cmd.max_wr, .max_sge = cmd.max_sge,
				   .flags = cmd.create_flags };
	ret = emu_wq_create((struct emu_pd *)pd, (struct emu_cq *)cq, &req,
			    &b->uhw, &wq);
	if (ret)
		return ret;
	resp.wq_handle = wq->obj.handle;
	resp.max_wr = cmd.max_wr;
	resp.max_sge = cmd.max_sge;
	resp.response_length = response_length(b, sizeof(resp));
	return respond_created(b, &resp, sizeof(resp), &wq->obj);
}

int cmd_ex_destroy_wq(struct emu_bundle *b)
{
	struct ib_uverbs_ex_destroy_wq_resp resp = {};
	struct ib_uverbs_ex_destroy_wq cmd;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	if (cmd.comp_mask)
		return -EOPNOTSUPP;
	resp.response_length = response_length(b, sizeof(resp));
	ret = destroy_handle(b, EMU_OBJ_WQ, cmd.wq_handle);
	if (ret)
		return ret;
	return emu_response(b, &resp, sizeof(resp));
}

int cmd_ex_modify_wq(struct emu_bundle *b)
{
	struct ib_uverbs_ex_modify_wq cmd;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	if (!cmd.attr_mask || cmd.attr_mask > (IBV_WQ_ATTR_STATE |
					       IBV_WQ_ATTR_CURR_STATE |
					       IBV_WQ_ATTR_FLAGS))
		return -EINVAL;
	if (!lookup_read(b, EMU_OBJ_WQ, cmd.wq_handle))
		return -EINVAL;
	if (((cmd.attr_mask & IBV_WQ_ATTR_CURR_STATE) &&
	     cmd.curr_wq_state > IBV_WQS_ERR) ||
	    ((cmd.attr_mask & IBV_WQ_ATTR_STATE) && cmd.wq_state > IBV_WQS_ERR))
		return -EINVAL;
	return -EOPNOTSUPP;	/* mana_ib has no modify_wq */
}

/* The WQ handles follow the command: uverbs_request_next/finish(). */
static int ind_tbl_wqs(struct emu_bundle *b, uint32_t n, struct emu_wq **wqs)
{
	const char *p = emu_user_off(b->ucore.inbuf, 8);
	size_t need = 8 + (size_t)n * sizeof(uint32_t);
	uint32_t i, handle;
	int ret;

	if (b->ucore.inlen < need)
		return -ENOSPC;
	ret = emu_user_is_cleared(emu_user_off(p, n * sizeof(uint32_t)),
				  b->ucore.inlen - need);
	if (ret <= 0)
		return ret < 0 ? ret : -EOPNOTSUPP;
	for (i = 0; i < n; i++) {
		if (emu_copy_from_user(&handle,
				       emu_user_off(p, i * sizeof(handle)),
				       sizeof(handle)))
			return -EFAULT;
		wqs[i] = lookup_read(b, EMU_OBJ_WQ, handle);
		if (!wqs[i])
			return -EINVAL;
	}
	return 0;
}

int cmd_ex_create_rwq_ind_tbl(struct emu_bundle *b)
{
	struct ib_uverbs_ex_create_rwq_ind_table_resp resp = {};
	struct ib_uverbs_ex_create_rwq_ind_table cmd;
	struct emu_ind_tbl *t;
	struct emu_wq **wqs;
	int ret;

	if (b->ucore.inlen < sizeof(cmd))
		return -ENOSPC;
	if (emu_copy_from_user(&cmd, b->ucore.inbuf, sizeof(cmd)))
		return -EFAULT;
	if (cmd.comp_mask)
		return -EOPNOTSUPP;
	if (cmd.log_ind_tbl_size > IB_USER_VERBS_MAX_LOG_IND_TBL_SIZE)
		return -EINVAL;
	bundle_ctx(b, &ret);
	if (ret)
		return ret;
	wqs = calloc(1u << cmd.log_ind_tbl_size, sizeof(*wqs));
	if (!wqs)
		return -ENOMEM;
	ret = ind_tbl_wqs(b, 1u << cmd.log_ind_tbl_size, wqs);
	if (!ret)
		ret = emu_ind_tbl_create(b->file->ctx, cmd.log_ind_tbl_size, wqs,
					 &t);
	free(wqs);
	if (ret)
		return ret;
	resp.ind_tbl_handle = t->obj.handle;
	resp.response_length = response_length(b, sizeof(resp));
	return respond_created(b, &resp, sizeof(resp), &t->obj);
}

int cmd_ex_destroy_rwq_ind_tbl(struct emu_bundle *b)
{
	struct ib_uverbs_ex_destroy_rwq_ind_table cmd;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	if (cmd.comp_mask)
		return -EOPNOTSUPP;
	return destroy_handle(b, EMU_OBJ_IND_TBL, cmd.ind_tbl_handle);
}
