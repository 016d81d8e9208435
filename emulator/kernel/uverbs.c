/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The uverbs write() ABI as the Linux uverbs core decodes it
 * (ib_uverbs_write + verify_hdr) and the command handlers, which the
 * ioctl path (uverbs_ioctl.c) reaches too, through DEVICE/INVOKE_WRITE.
 *
 * To add a write command: a handler and a row in write_cmds[] or
 * write_ex_cmds[].
 */
#include <infiniband/verbs.h>	/* before any rdma/ uAPI header */

#include "uverbs.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "emulator/core/emu.h"
#include "kernel.h"

/* Copy the core request: shorter is zero-filled, longer must be zero. */
static int emu_request(struct emu_bundle *b, void *req, size_t len)
{
	size_t n = b->ucore.inlen < len ? b->ucore.inlen : len;
	int ret;

	if (emu_copy_from_user(req, b->ucore.inbuf, n))
		return -EFAULT;
	if (b->ucore.inlen < len) {
		memset((char *)req + n, 0, len - n);
	} else if (b->ucore.inlen > len) {
		ret = emu_user_is_cleared(emu_user_off(b->ucore.inbuf, len),
					  b->ucore.inlen - len);
		if (ret <= 0)
			return ret < 0 ? ret : -EOPNOTSUPP;
	}
	return 0;
}

/* Write the core response; any extra room the caller gave is zeroed. */
static int emu_response(struct emu_bundle *b, const void *resp, size_t len)
{
	size_t n = b->ucore.outlen < len ? b->ucore.outlen : len;

	if (b->call && call_has_attr(b->call, UVERBS_ATTR_CORE_OUT))
		return call_copy_to_struct_or_zero(b->call,
						   UVERBS_ATTR_CORE_OUT, resp,
						   len);
	if (emu_copy_to_user(b->ucore.outbuf, resp, n))
		return -EFAULT;
	if (len < b->ucore.outlen &&
	    emu_clear_user(emu_user_off(b->ucore.outbuf, len),
			   b->ucore.outlen - len))
		return -EFAULT;
	return 0;
}

static struct emu_ucontext *bundle_ctx(struct emu_bundle *b, int *err)
{
	*err = b->file->ctx ? 0 : -EINVAL;
	return b->file->ctx;
}

/* A create command's response, or the new object undone if it fails. */
static int respond_created(struct emu_bundle *b, const void *resp, size_t len,
			   struct emu_obj *obj)
{
	int ret = emu_response(b, resp, len);

	if (ret)
		emu_obj_destroy(obj);
	return ret;
}

static int cmd_notsupp(struct emu_bundle *b)
{
	return -EOPNOTSUPP;
}

static int cmd_get_context(struct emu_bundle *b)
{
	struct ib_uverbs_get_context_resp resp = {};
	struct ib_uverbs_get_context cmd;
	struct emu_event_file *ev;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	if (b->file->ctx)
		return -EINVAL;
	ret = emu_event_file_create(b->file, true, &ev);
	if (ret)
		return ret;
	resp.async_fd = ev->app_fd;
	resp.num_comp_vectors = emu_dev.num_comp_vectors;
	ret = emu_response(b, &resp, sizeof(resp));
	if (ret)
		goto err;
	ret = emu_ucontext_create(b->file, &b->uhw);
	if (ret)
		goto err;
	return 0;
err:
	emu_event_file_abort(ev);
	return ret;
}

static int cmd_query_device(struct emu_bundle *b)
{
	struct ib_uverbs_ex_query_device_resp resp;
	struct ib_uverbs_query_device cmd;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	bundle_ctx(b, &ret);
	if (ret)
		return ret;
	emu_query_device(emu_ibdev_of(b->file), &resp);
	return emu_response(b, &resp.base, sizeof(resp.base));
}

static int cmd_ex_query_device(struct emu_bundle *b)
{
	struct ib_uverbs_ex_query_device_resp resp;
	struct ib_uverbs_ex_query_device cmd;
	int ret;

	bundle_ctx(b, &ret);
	if (ret)
		return ret;
	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	if (cmd.comp_mask || cmd.reserved)
		return -EINVAL;
	/* mana_ib_query_device: no driver input, empty driver output */
	ret = emu_udata_in_empty(&b->uhw);
	if (ret)
		return ret;
	if (emu_clear_user(b->uhw.outbuf, b->uhw.outlen))
		return -EFAULT;
	emu_query_device(emu_ibdev_of(b->file), &resp);
	resp.response_length = b->ucore.outlen < sizeof(resp) ?
				       b->ucore.outlen : sizeof(resp);
	return emu_response(b, &resp, sizeof(resp));
}

static int cmd_query_port(struct emu_bundle *b)
{
	struct ib_uverbs_query_port_resp resp;
	struct ib_uverbs_query_port cmd;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	bundle_ctx(b, &ret);
	if (ret)
		return ret;
	ret = emu_query_port(emu_ibdev_of(b->file), cmd.port_num, &resp);
	if (ret)
		return ret;
	return emu_response(b, &resp, sizeof(resp));
}

static int cmd_alloc_pd(struct emu_bundle *b)
{
	struct ib_uverbs_alloc_pd_resp resp = {};
	struct ib_uverbs_alloc_pd cmd;
	struct emu_ucontext *ctx;
	struct emu_pd *pd;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	ctx = bundle_ctx(b, &ret);
	if (ret)
		return ret;
	ret = emu_pd_alloc(ctx, &b->uhw, &pd);
	if (ret)
		return ret;
	resp.pd_handle = pd->obj.handle;
	return respond_created(b, &resp, sizeof(resp), &pd->obj);
}

/* uobj_perform_destroy(): look the handle up, destroy unless in use. */
static int destroy_handle(struct emu_bundle *b, enum emu_obj_type type,
			  uint32_t handle)
{
	struct emu_obj *obj;
	int ret;

	obj = emu_obj_lookup(b->file->ctx, type, handle, &ret);
	if (!obj)
		return ret;
	return emu_obj_destroy(obj);
}

static int cmd_dealloc_pd(struct emu_bundle *b)
{
	struct ib_uverbs_dealloc_pd cmd;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	return destroy_handle(b, EMU_OBJ_PD, cmd.pd_handle);
}

static int cmd_reg_mr(struct emu_bundle *b)
{
	struct ib_uverbs_reg_mr_resp resp = {};
	struct ib_uverbs_reg_mr cmd;
	struct emu_mr_req req;
	struct emu_obj *pd;
	struct emu_mr *mr;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	if ((cmd.start ^ cmd.hca_va) & (EMU_PAGE_SIZE - 1))
		return -EINVAL;
	bundle_ctx(b, &ret);
	if (ret)
		return ret;
	ret = emu_check_mr_access(cmd.access_flags);
	if (ret)
		return ret;
	pd = emu_obj_lookup(b->file->ctx, EMU_OBJ_PD, cmd.pd_handle, &ret);
	if (!pd)
		return -EINVAL;
	req = (struct emu_mr_req){ .start = cmd.start, .length = cmd.length,
				   .iova = cmd.hca_va,
				   .access = cmd.access_flags };
	ret = emu_mr_reg((struct emu_pd *)pd, &req, &b->uhw, &mr);
	if (ret)
		return ret;
	resp.mr_handle = mr->obj.handle;
	resp.lkey = mr->lkey;
	resp.rkey = mr->rkey;
	return respond_created(b, &resp, sizeof(resp), &mr->obj);
}

static int cmd_dereg_mr(struct emu_bundle *b)
{
	struct ib_uverbs_dereg_mr cmd;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	return destroy_handle(b, EMU_OBJ_MR, cmd.mr_handle);
}

static int cmd_create_comp_channel(struct emu_bundle *b)
{
	struct ib_uverbs_create_comp_channel_resp resp = {};
	struct ib_uverbs_create_comp_channel cmd;
	struct emu_event_file *ev;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	bundle_ctx(b, &ret);
	if (ret)
		return ret;
	ret = emu_event_file_create(b->file, false, &ev);
	if (ret)
		return ret;
	resp.fd = ev->app_fd;
	ret = emu_response(b, &resp, sizeof(resp));
	if (ret)
		emu_event_file_abort(ev);
	return ret;
}

/* ---- raw packet objects: write() commands ---------------------------------- */

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
	resp.base.cqe = cq->cqe;
	resp.response_length = response_length(b, sizeof(resp));
	return respond_created(b, &resp, sizeof(resp), &cq->obj);
}

static int cmd_create_cq(struct emu_bundle *b)
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

static int cmd_ex_create_cq(struct emu_bundle *b)
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

static int cmd_destroy_cq(struct emu_bundle *b)
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

static int cmd_create_qp(struct emu_bundle *b)
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

static int cmd_ex_create_qp(struct emu_bundle *b)
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

static int cmd_destroy_qp(struct emu_bundle *b)
{
	struct ib_uverbs_destroy_qp_resp resp = {};
	struct ib_uverbs_destroy_qp cmd;
	struct emu_qp *qp;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	qp = lookup_read(b, EMU_OBJ_QP, cmd.qp_handle);
	if (qp)
		resp.events_reported = qp->events_reported;
	ret = destroy_handle(b, EMU_OBJ_QP, cmd.qp_handle);
	if (ret)
		return ret;
	return emu_response(b, &resp, sizeof(resp));
}

/* mana_ib has no query_qp/modify_qp for raw packet QPs. */
static int qp_notsupp(struct emu_bundle *b, uint32_t handle)
{
	return lookup_read(b, EMU_OBJ_QP, handle) ? -EOPNOTSUPP : -EINVAL;
}

static int cmd_query_qp(struct emu_bundle *b)
{
	struct ib_uverbs_query_qp_resp resp;
	struct ib_uverbs_query_qp cmd;
	struct emu_qp *qp;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	qp = lookup_read(b, EMU_OBJ_QP, cmd.qp_handle);
	if (!qp || !qp->rc)
		return qp_notsupp(b, cmd.qp_handle);
	ret = emu_rc_qp_query(qp, cmd.attr_mask, &resp);
	return ret ? ret : emu_response(b, &resp, sizeof(resp));
}

static int cmd_modify_qp(struct emu_bundle *b)
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

static int cmd_ex_modify_qp(struct emu_bundle *b)
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

static int cmd_ex_create_wq(struct emu_bundle *b)
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

static int cmd_ex_destroy_wq(struct emu_bundle *b)
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

static int cmd_ex_modify_wq(struct emu_bundle *b)
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

static int cmd_ex_create_rwq_ind_tbl(struct emu_bundle *b)
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

static int cmd_ex_destroy_rwq_ind_tbl(struct emu_bundle *b)
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

#define WRITE_CMD(_cmd, _fn, _req, _resp, _udata)                              \
	[IB_USER_VERBS_CMD_##_cmd] = {                                         \
		.name = #_cmd, .handler = _fn, .has_udata = _udata,            \
		.has_resp = sizeof(_resp) > 0, .req_size = sizeof(_req),      \
		.resp_size = sizeof(_resp) }

struct no_resp {};

/* Every command the core knows; rows left empty answer EOPNOTSUPP. */
static const struct emu_write_cmd write_cmds[IB_USER_VERBS_CMD_OPEN_QP + 1] = {
	WRITE_CMD(GET_CONTEXT, cmd_get_context, struct ib_uverbs_get_context,
		  struct ib_uverbs_get_context_resp, true),
	WRITE_CMD(QUERY_DEVICE, cmd_query_device, struct ib_uverbs_query_device,
		  struct ib_uverbs_query_device_resp, false),
	WRITE_CMD(QUERY_PORT, cmd_query_port, struct ib_uverbs_query_port,
		  struct ib_uverbs_query_port_resp, false),
	WRITE_CMD(ALLOC_PD, cmd_alloc_pd, struct ib_uverbs_alloc_pd,
		  struct ib_uverbs_alloc_pd_resp, true),
	WRITE_CMD(DEALLOC_PD, cmd_dealloc_pd, struct ib_uverbs_dealloc_pd,
		  struct no_resp, false),
	WRITE_CMD(REG_MR, cmd_reg_mr, struct ib_uverbs_reg_mr,
		  struct ib_uverbs_reg_mr_resp, true),
	WRITE_CMD(DEREG_MR, cmd_dereg_mr, struct ib_uverbs_dereg_mr,
		  struct no_resp, false),
	WRITE_CMD(CREATE_COMP_CHANNEL, cmd_create_comp_channel,
		  struct ib_uverbs_create_comp_channel,
		  struct ib_uverbs_create_comp_channel_resp, false),
	WRITE_CMD(CREATE_CQ, cmd_create_cq, struct ib_uverbs_create_cq,
		  struct ib_uverbs_create_cq_resp, true),
	WRITE_CMD(DESTROY_CQ, cmd_destroy_cq, struct ib_uverbs_destroy_cq,
		  struct ib_uverbs_destroy_cq_resp, false),
	WRITE_CMD(CREATE_QP, cmd_create_qp, struct ib_uverbs_create_qp,
		  struct ib_uverbs_create_qp_resp, true),
	WRITE_CMD(QUERY_QP, cmd_query_qp, struct ib_uverbs_query_qp,
		  struct ib_uverbs_query_qp_resp, false),
	WRITE_CMD(MODIFY_QP, cmd_modify_qp, struct ib_uverbs_modify_qp,
		  struct no_resp, false),
	WRITE_CMD(DESTROY_QP, cmd_destroy_qp, struct ib_uverbs_destroy_qp,
		  struct ib_uverbs_destroy_qp_resp, false),
};

/* UAPI_DEF_WRITE_IO_EX / _I_EX: minimum request and response sizes */
#define WRITE_EX(_cmd, _fn, _req, _req_last, _resp, _resp_last)                \
	[IB_USER_VERBS_EX_CMD_##_cmd] = {                                      \
		.name = "EX_" #_cmd, .handler = _fn, .is_ex = true,            \
		.req_size = OFFSETOFEND(_req, _req_last),                      \
		.resp_size = OFFSETOFEND(_resp, _resp_last) }
#define WRITE_I_EX(_cmd, _fn, _req, _req_last)                                 \
	[IB_USER_VERBS_EX_CMD_##_cmd] = {                                      \
		.name = "EX_" #_cmd, .handler = _fn, .is_ex = true,            \
		.req_size = OFFSETOFEND(_req, _req_last) }

static const struct emu_write_cmd
	write_ex_cmds[IB_USER_VERBS_EX_CMD_MODIFY_CQ + 1] = {
	WRITE_EX(QUERY_DEVICE, cmd_ex_query_device,
		 struct ib_uverbs_ex_query_device, reserved,
		 struct ib_uverbs_ex_query_device_resp, response_length),
	WRITE_EX(CREATE_CQ, cmd_ex_create_cq, struct ib_uverbs_ex_create_cq,
		 reserved, struct ib_uverbs_ex_create_cq_resp, response_length),
	WRITE_EX(CREATE_QP, cmd_ex_create_qp, struct ib_uverbs_ex_create_qp,
		 comp_mask, struct ib_uverbs_ex_create_qp_resp,
		 response_length),
	WRITE_EX(MODIFY_QP, cmd_ex_modify_qp, struct ib_uverbs_ex_modify_qp,
		 base, struct ib_uverbs_ex_modify_qp_resp, response_length),
	WRITE_EX(CREATE_WQ, cmd_ex_create_wq, struct ib_uverbs_ex_create_wq,
		 max_sge, struct ib_uverbs_ex_create_wq_resp, wqn),
	WRITE_EX(DESTROY_WQ, cmd_ex_destroy_wq, struct ib_uverbs_ex_destroy_wq,
		 wq_handle, struct ib_uverbs_ex_destroy_wq_resp, reserved),
	WRITE_I_EX(MODIFY_WQ, cmd_ex_modify_wq, struct ib_uverbs_ex_modify_wq,
		   curr_wq_state),
	WRITE_EX(CREATE_RWQ_IND_TBL, cmd_ex_create_rwq_ind_tbl,
		 struct ib_uverbs_ex_create_rwq_ind_table, log_ind_tbl_size,
		 struct ib_uverbs_ex_create_rwq_ind_table_resp, ind_tbl_num),
	WRITE_I_EX(DESTROY_RWQ_IND_TBL, cmd_ex_destroy_rwq_ind_tbl,
		   struct ib_uverbs_ex_destroy_rwq_ind_table, ind_tbl_handle),
};

static const struct emu_write_cmd notsupp_cmd = {
	.name = "UNSUPPORTED", .handler = cmd_notsupp,
};

/* uapi_get_method(): the kernel's lookup and its errno for bad numbers */
const struct emu_write_cmd *get_write_cmd(uint32_t command, int *err)
{
	uint32_t idx = command & IB_USER_VERBS_CMD_COMMAND_MASK;
	const struct emu_write_cmd *cmd;

	*err = 0;
	if (command & ~(IB_USER_VERBS_CMD_FLAG_EXTENDED |
			IB_USER_VERBS_CMD_COMMAND_MASK)) {
		*err = -EINVAL;
		return NULL;
	}
	if (command & IB_USER_VERBS_CMD_FLAG_EXTENDED) {
		if (idx >= ARRAY_SIZE(write_ex_cmds))
			goto notsupp;
		cmd = &write_ex_cmds[idx];
	} else {
		if (idx >= ARRAY_SIZE(write_cmds))
			goto notsupp;
		cmd = &write_cmds[idx];
	}
	return cmd->handler ? cmd : &notsupp_cmd;
notsupp:
	*err = -EOPNOTSUPP;
	return NULL;
}

static bool user_range_ok(uint64_t addr, uint64_t len)
{
	return addr + len >= addr && addr + len <= USER_ADDR_LIMIT;
}

/* verify_hdr() of the uverbs core */
static int verify_hdr(const struct ib_uverbs_cmd_hdr *hdr,
		      const struct ib_uverbs_ex_cmd_hdr *ex, size_t count,
		      const struct emu_write_cmd *cmd)
{
	if (cmd->is_ex) {
		size_t body = count - sizeof(*hdr) - sizeof(*ex);

		if ((size_t)(hdr->in_words + ex->provider_in_words) * 8 != body)
			return -EINVAL;
		if (hdr->in_words * 8 < cmd->req_size)
			return -ENOSPC;
		if (ex->cmd_hdr_reserved)
			return -EINVAL;
		if (!ex->response)
			return hdr->out_words || ex->provider_out_words ?
				       -EINVAL : 0;
		if (!hdr->out_words && !ex->provider_out_words)
			return -EINVAL;
		if (hdr->out_words * 8 < cmd->resp_size)
			return -ENOSPC;
		if (!user_range_ok(ex->response,
				   (hdr->out_words + ex->provider_out_words) *
					   8ULL))
			return -EFAULT;
		return 0;
	}
	if ((size_t)hdr->in_words * 4 != count)
		return -EINVAL;
	if (count < cmd->req_size + sizeof(*hdr))
		return -ENOSPC;
	if ((size_t)hdr->out_words * 4 < cmd->resp_size)
		return -ENOSPC;
	return 0;
}

/* Split a plain (non-ex) command into core and driver parts. */
static int setup_write_bundle(struct emu_bundle *b,
			      const struct ib_uverbs_cmd_hdr *hdr,
			      const char *body, const struct emu_write_cmd *cmd)
{
	size_t in_len = hdr->in_words * 4 - sizeof(*hdr);
	size_t out_len = hdr->out_words * 4;
	uint64_t response = 0;

	if (cmd->has_udata)
		udata_init(&b->uhw, body + cmd->req_size,
			   in_len - cmd->req_size, NULL, 0);
	if (cmd->has_resp) {
		if (emu_copy_from_user(&response, body, sizeof(response)))
			return -EFAULT;
		if (cmd->has_udata) {
			b->uhw.outlen = out_len - cmd->resp_size;
			b->uhw.outbuf = b->uhw.outlen ?
				emu_user_off((void *)(uintptr_t)response,
					     cmd->resp_size) :
				NULL;
		}
	} else {
		out_len = 0;
	}
	if (cmd->has_udata) {
		in_len = cmd->req_size;
		if (cmd->has_resp)
			out_len = cmd->resp_size;
	}
	udata_init(&b->ucore, body, in_len, (void *)(uintptr_t)response,
		   out_len);
	return 0;
}

static void setup_ex_bundle(struct emu_bundle *b,
			    const struct ib_uverbs_cmd_hdr *hdr,
			    const struct ib_uverbs_ex_cmd_hdr *ex,
			    const char *body)
{
	char *resp = (char *)(uintptr_t)ex->response;
	size_t in = hdr->in_words * 8, out = hdr->out_words * 8;

	udata_init(&b->ucore, body, in, resp, out);
	udata_init(&b->uhw, body + in, ex->provider_in_words * 8,
		   resp ? emu_user_off(resp, out) : NULL,
		   ex->provider_out_words * 8);
}

/*
 * --fault=fail-cmd=N:ERRNO and mana_emu_fault_fail_cmd(): every uverbs
 * command (write or ioctl method, INVOKE_WRITE counted once) that gets as
 * far as its handler is numbered from 1; the chosen one fails with the
 * errno before the handler runs, as if the driver had refused it, and
 * leaves nothing behind.  Under emu.lock.
 */
static uint64_t cmd_count;
static uint64_t fail_at;	/* 0: none */
static int fail_errno;
static bool fail_from_options;
static bool fail_by_name;	/* --fault=fail-cmd=NAME:ERRNO still armed */

int fault_cmd(const char *name)
{
	if (!fail_from_options) {
		fail_from_options = true;
		fail_at = emu.opts.fault_fail_cmd;
		fail_by_name = emu.opts.fault_fail_name[0];
		fail_errno = emu.opts.fault_fail_errno;
	}
	++cmd_count;
	if (fail_by_name && !strcmp(name, emu.opts.fault_fail_name))
		fail_by_name = false;
	else if (!fail_at || cmd_count != fail_at)
		return 0;
	else
		fail_at = 0;
	if (emu_verbose())
		emu_log("--fault=fail-cmd: command %llu (%s) fails with %s",
			(unsigned long long)cmd_count, name,
			emu_errname(fail_errno));
	return -fail_errno;
}

EMU_EXPORT uint64_t mana_emu_command_count(void)
{
	uint64_t n;

	pthread_mutex_lock(&emu.lock);
	n = cmd_count;
	pthread_mutex_unlock(&emu.lock);
	return n;
}

EMU_EXPORT int mana_emu_fault_fail_cmd(uint64_t nth, int err)
{
	if (err <= 0 || err > 4095)
		return -EINVAL;
	pthread_mutex_lock(&emu.lock);
	fail_from_options = true;
	fail_at = nth ? cmd_count + nth : 0;
	fail_errno = err;
	pthread_mutex_unlock(&emu.lock);
	return 0;
}

ssize_t emu_uverbs_write(struct emu_file *file, const void *buf, size_t count)
{
	struct ib_uverbs_ex_cmd_hdr ex = {};
	const struct emu_write_cmd *cmd;
	struct ib_uverbs_cmd_hdr hdr;
	struct emu_bundle b = { .file = file };
	const char *body = buf;
	int ret;

	if (!file->writable)
		return -EBADF;
	if (count < sizeof(hdr))
		return -EINVAL;
	if (emu_copy_from_user(&hdr, buf, sizeof(hdr)))
		return -EFAULT;
	cmd = get_write_cmd(hdr.command, &ret);
	if (!cmd)
		goto out;
	if (cmd->is_ex) {
		ret = -EINVAL;
		if (count < sizeof(hdr) + sizeof(ex))
			goto out;
		ret = -EFAULT;
		if (emu_copy_from_user(&ex, body + sizeof(hdr), sizeof(ex)))
			goto out;
	}
	ret = verify_hdr(&hdr, &ex, count, cmd);
	if (ret)
		goto out;
	body += sizeof(hdr);
	if (cmd->is_ex) {
		setup_ex_bundle(&b, &hdr, &ex, body + sizeof(ex));
	} else {
		ret = setup_write_bundle(&b, &hdr, body, cmd);
		if (ret)
			goto out;
	}
	ret = fault_cmd(cmd->name);
	if (!ret)
		ret = cmd->handler(&b);
out:
	if (emu_verbose())
		emu_log("write fd %d cmd 0x%x %s -> %s", file->fd, hdr.command,
			cmd ? cmd->name : "?", emu_errname(ret));
	return ret ? ret : (ssize_t)count;
}
