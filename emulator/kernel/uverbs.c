/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The uverbs write() ABI as the Linux uverbs core decodes it
 * (ib_uverbs_write + verify_hdr) and the command handlers, which the
 * ioctl path (uverbs_ioctl.c) reaches too, through DEVICE/INVOKE_WRITE.
 *
 * The commands on contexts, PDs, MRs and completion channels are here;
 * those on queue objects (CQ, QP, WQ, RWQ indirection table) are in
 * uverbs_qp.c.  To add a write command: a handler (here, in uverbs_qp.c,
 * or in a file of its own with its prototype in uverbs.h) and one row in
 * write_cmds[] or write_ex_cmds[].
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

int emu_request(struct emu_bundle *b, void *req, size_t len)
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

int emu_response(struct emu_bundle *b, const void *resp, size_t len)
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

struct emu_ucontext *bundle_ctx(struct emu_bundle *b, int *err)
{
	*err = b->file->ctx ? 0 : -EINVAL;
	return b->file->ctx;
}

int respond_created(struct emu_bundle *b, const void *resp, size_t len,
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

int destroy_handle(struct emu_bundle *b, enum emu_obj_type type,
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

/* ib_uverbs_alloc_mw: the PD, then the type, then mana_ib (7.1 on) */
static int cmd_alloc_mw(struct emu_bundle *b)
{
	struct ib_uverbs_alloc_mw_resp resp = {};
	struct ib_uverbs_alloc_mw cmd;
	struct emu_obj *pd;
	struct emu_mw *mw;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	bundle_ctx(b, &ret);
	if (ret)
		return ret;
	pd = emu_obj_lookup(b->file->ctx, EMU_OBJ_PD, cmd.pd_handle, &ret);
	if (!pd)
		return -EINVAL;
	ret = emu_mw_alloc((struct emu_pd *)pd, cmd.mw_type, &mw);
	if (ret)
		return ret;
	resp.mw_handle = mw->obj.handle;
	resp.rkey = mw->rkey;
	return respond_created(b, &resp, sizeof(resp), &mw->obj);
}

static int cmd_dealloc_mw(struct emu_bundle *b)
{
	struct ib_uverbs_dealloc_mw cmd;
	int ret;

	ret = emu_request(b, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	return destroy_handle(b, EMU_OBJ_MW, cmd.mw_handle);
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
	/* without mana_ib's alloc_mw (before 7.1) the core drops both */
	WRITE_CMD(ALLOC_MW, cmd_alloc_mw, struct ib_uverbs_alloc_mw,
		  struct ib_uverbs_alloc_mw_resp, true),
	WRITE_CMD(DEALLOC_MW, cmd_dealloc_mw, struct ib_uverbs_dealloc_mw,
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
	/*
	 * QUERY_QP: no row.  mana_ib has no query_qp in any version, so the
	 * core drops the command (UAPI_DEF_METHOD_NEEDS_FN) and answers
	 * EOPNOTSUPP before it reads a handle, as for any unknown command.
	 */
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
		/* UAPI_DEF_METHOD_NEEDS_FN(alloc_mw / dealloc_mw) */
		if ((idx == IB_USER_VERBS_CMD_ALLOC_MW ||
		     idx == IB_USER_VERBS_CMD_DEALLOC_MW) && !kernel_era()->mw)
			goto notsupp;
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
	if (file->remote)
		return emu_remote_file_cmd(file);
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
