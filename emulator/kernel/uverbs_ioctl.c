// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RDMA_VERBS_IOCTL as the Linux uverbs core decodes it (uverbs_ioctl.c):
 * attribute specs and rules, the native methods, and the DEVICE/
 * INVOKE_WRITE bridge into the write() command handlers (uverbs.c).
 *
 * To add a native ioctl method: a handler, its attribute specs and a row
 * in methods[].
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
#include "emulator/core/gid.h"
#include "kernel.h"

enum spec_type { SPEC_PTR_IN, SPEC_PTR_OUT, SPEC_IDR, SPEC_FD };
enum spec_access { ACCESS_READ, ACCESS_DESTROY, ACCESS_NEW };

struct emu_attr_spec {
	uint16_t id;
	uint8_t type;
	bool mandatory;
	bool zero_trailing;	/* longer input allowed if the tail is zero */
	bool async;		/* SPEC_FD: async event fd, else comp channel */
	uint16_t min_len, len;
	uint8_t obj;		/* enum emu_obj_type for SPEC_IDR */
	uint8_t access;
};

/* Object types this device never creates (XRCD, SRQ): lookups fail. */
#define EMU_OBJ_NONE EMU_OBJ_TYPES

#define A_PTR_IN(_id, _min, _max, _mand)                                       \
	{ .id = _id, .type = SPEC_PTR_IN, .min_len = _min, .len = _max,        \
	  .mandatory = _mand }
#define A_PTR_OUT(_id, _min, _max, _mand)                                      \
	{ .id = _id, .type = SPEC_PTR_OUT, .min_len = _min, .len = _max,       \
	  .mandatory = _mand }
#define A_STRUCT_OUT(_id, _type, _last, _mand)                                 \
	{ .id = _id, .type = SPEC_PTR_OUT, .zero_trailing = true,              \
	  .min_len = OFFSETOFEND(_type, _last), .len = sizeof(_type),          \
	  .mandatory = _mand }
#define A_CONST_IN(_id, _mand) A_PTR_IN(_id, 8, 8, _mand)
#define A_FLAGS_IN(_id, _mand) A_PTR_IN(_id, 4, 8, _mand)
#define A_IDR(_id, _obj, _access)                                              \
	{ .id = _id, .type = SPEC_IDR, .obj = _obj, .access = _access,         \
	  .mandatory = true }
#define A_FD_NEW(_id)                                                          \
	{ .id = _id, .type = SPEC_FD, .access = ACCESS_NEW, .mandatory = true }
#define A_IDR_NEW(_id, _obj)                                                   \
	{ .id = _id, .type = SPEC_IDR, .obj = _obj, .access = ACCESS_NEW,      \
	  .mandatory = true }
#define A_IDR_IN(_id, _obj, _mand)                                             \
	{ .id = _id, .type = SPEC_IDR, .obj = _obj, .access = ACCESS_READ,     \
	  .mandatory = _mand }
#define A_FD_IN(_id, _async)                                                   \
	{ .id = _id, .type = SPEC_FD, .access = ACCESS_READ, .async = _async }
#define A_U32_IN(_id, _mand) A_PTR_IN(_id, 4, 4, _mand)
#define A_U64_IN(_id, _mand) A_PTR_IN(_id, 8, 8, _mand)
#define A_U32_OUT(_id, _mand) A_PTR_OUT(_id, 4, 4, _mand)

/* Attribute ids are small except UHW_IN/OUT; they get the last slots. */
#define ATTR_SLOTS 24
#define SLOT_UHW_IN (ATTR_SLOTS - 2)
#define SLOT_UHW_OUT (ATTR_SLOTS - 1)

struct emu_attr {
	bool present;
	uint16_t uidx;		/* index in the application's array */
	uint16_t len;
	uint64_t data;
	const void *ptr;	/* inline data (our copy) or user pointer */
	struct emu_obj *obj;
	struct emu_event_file *ev;	/* SPEC_FD, ACCESS_READ */
};

struct emu_method;

struct emu_call {
	struct emu_file *file;
	const struct emu_method *method;
	struct ib_uverbs_attr *uattrs;		/* our copy */
	struct ib_uverbs_attr *user_attrs;	/* the application's */
	struct emu_attr attrs[ATTR_SLOTS];
	struct emu_bundle b;
	const char *detail;			/* for the log */
};

struct emu_method {
	uint16_t object, method;
	const char *name;
	int (*handler)(struct emu_call *c);
	bool has_udata;
	const struct emu_attr_spec *specs;
	unsigned int nspecs;
};

static int attr_slot(unsigned int id)
{
	if (id == UVERBS_ATTR_UHW_IN)
		return SLOT_UHW_IN;
	if (id == UVERBS_ATTR_UHW_OUT)
		return SLOT_UHW_OUT;
	return id < SLOT_UHW_IN ? (int)id : -1;
}

static struct emu_attr *call_attr(struct emu_call *c, unsigned int id)
{
	int slot = attr_slot(id);

	if (slot < 0 || !c->attrs[slot].present)
		return NULL;
	return &c->attrs[slot];
}

bool call_has_attr(struct emu_call *c, unsigned int id)
{
	return call_attr(c, id) != NULL;
}

/* uverbs_set_output(): tell user space the attribute was written */
static int set_output(struct emu_call *c, struct emu_attr *a)
{
	struct ib_uverbs_attr *ua = &c->uattrs[a->uidx];

	ua->flags |= UVERBS_ATTR_F_VALID_OUTPUT;
	return emu_copy_to_user(&c->user_attrs[a->uidx].flags, &ua->flags,
				sizeof(ua->flags));
}

static int call_copy_to(struct emu_call *c, unsigned int id, const void *src,
			size_t len)
{
	struct emu_attr *a = call_attr(c, id);
	size_t n;

	if (!a)
		return -ENOENT;
	n = a->len < len ? a->len : len;
	if (emu_copy_to_user((void *)a->ptr, src, n))
		return -EFAULT;
	return set_output(c, a);
}

int call_copy_to_struct_or_zero(struct emu_call *c, unsigned int id,
				const void *src, size_t len)
{
	struct emu_attr *a = call_attr(c, id);

	if (!a)
		return -ENOENT;
	if (len < a->len &&
	    emu_clear_user(emu_user_off(a->ptr, len), a->len - len))
		return -EFAULT;
	return call_copy_to(c, id, src, len);
}

/* uverbs_get_const(): the raw 64-bit value, bounded by the C type */
static int call_get_const(struct emu_call *c, unsigned int id, uint64_t max,
			  uint64_t *out)
{
	struct emu_attr *a = call_attr(c, id);

	if (!a)
		return -ENOENT;
	if (a->data > max)
		return -EINVAL;
	*out = a->data;
	return 0;
}

/* uverbs_get_flags64(): absent means 0; 4 or 8 bytes; known bits only */
static int call_get_flags(struct emu_call *c, unsigned int id,
			  uint64_t allowed, uint64_t *out)
{
	struct emu_attr *a = call_attr(c, id);
	uint64_t v;

	*out = 0;
	if (!a)
		return 0;
	if (a->len == 8)
		v = a->data;
	else if (a->len == 4)
		v = (uint32_t)a->data;
	else
		return -EINVAL;
	if (v & ~allowed)
		return -EINVAL;
	*out = v;
	return 0;
}

static struct emu_ucontext *call_ctx(struct emu_call *c, int *err)
{
	*err = c->file->ctx ? 0 : -EINVAL;
	return c->file->ctx;
}

/* Fill an ib_udata from an IN and an OUT attribute (uverbs_fill_udata). */
static void call_fill_udata(struct emu_call *c, struct emu_udata *u,
			    unsigned int in_id, unsigned int out_id)
{
	struct emu_attr *in = call_attr(c, in_id);
	struct emu_attr *out = call_attr(c, out_id);

	udata_init(u, in ? in->ptr : NULL, in ? in->len : 0,
		   out ? (void *)out->ptr : NULL, out ? out->len : 0);
}

static int m_invoke_write(struct emu_call *c)
{
	const struct emu_write_cmd *cmd;
	uint64_t command;
	int ret;

	ret = call_get_const(c, UVERBS_ATTR_WRITE_CMD, UINT32_MAX, &command);
	if (ret)
		return ret;
	cmd = get_write_cmd(command, &ret);
	if (!cmd)
		return ret;
	c->detail = cmd->name;
	call_fill_udata(c, &c->b.ucore, UVERBS_ATTR_CORE_IN,
			UVERBS_ATTR_CORE_OUT);
	if (c->b.ucore.inlen < cmd->req_size ||
	    c->b.ucore.outlen < cmd->resp_size)
		return -ENOSPC;
	ret = fault_cmd(cmd->name);
	return ret ? ret : cmd->handler(&c->b);
}

static int m_get_context(struct emu_call *c)
{
	uint64_t core_support = IB_UVERBS_CORE_SUPPORT_OPTIONAL_MR_ACCESS;
	uint32_t ncv = emu_dev.num_comp_vectors;
	int ret;

	if (c->file->ctx)
		return -EINVAL;
	/* No async fd here: user space asks for one with ASYNC_EVENT/ALLOC. */
	ret = call_copy_to(c, UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS, &ncv,
			   sizeof(ncv));
	if (ret && ret != -ENOENT)
		return ret;
	ret = call_copy_to(c, UVERBS_ATTR_GET_CONTEXT_CORE_SUPPORT,
			   &core_support, sizeof(core_support));
	if (ret && ret != -ENOENT)
		return ret;
	return emu_ucontext_create(c->file, &c->b.uhw);
}

static int m_query_context(struct emu_call *c)
{
	uint64_t core_support = IB_UVERBS_CORE_SUPPORT_OPTIONAL_MR_ACCESS;
	uint32_t ncv = emu_dev.num_comp_vectors;
	int ret;

	call_ctx(c, &ret);
	if (ret)
		return ret;
	ret = call_copy_to(c, UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS, &ncv,
			   sizeof(ncv));
	if (ret && ret != -ENOENT)
		return ret;
	ret = call_copy_to(c, UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT,
			   &core_support, sizeof(core_support));
	return ret == -ENOENT ? 0 : ret;
}

static int m_query_port(struct emu_call *c)
{
	struct ib_uverbs_query_port_resp_ex resp = {};
	uint64_t port;
	int ret;

	call_ctx(c, &ret);
	if (ret)
		return ret;
	ret = call_get_const(c, UVERBS_ATTR_QUERY_PORT_PORT_NUM, UINT8_MAX,
			     &port);
	if (ret)
		return ret;
	ret = emu_query_port(emu_ibdev_of(c->file), port, &resp.legacy_resp);
	if (ret)
		return ret;
	return call_copy_to_struct_or_zero(c, UVERBS_ATTR_QUERY_PORT_RESP,
					   &resp, sizeof(resp));
}

/* copy_gid_entries_to_user(): entry_size may differ from ours */
static int gid_entries_out(struct emu_call *c, struct emu_attr *a,
			   const struct ib_uverbs_gid_entry *e, size_t n,
			   size_t entry_size)
{
	size_t i, len = entry_size < sizeof(*e) ? entry_size : sizeof(*e);
	char *dst = (char *)a->ptr;

	for (i = 0; i < n; i++, dst += entry_size) {
		if (emu_copy_to_user(dst, &e[i], len))
			return -EFAULT;
		if (entry_size > len &&
		    emu_clear_user(emu_user_off(dst, len), entry_size - len))
			return -EFAULT;
	}
	return set_output(c, a);
}

static int m_query_gid_table(struct emu_call *c)
{
	struct ib_uverbs_gid_entry e[MANA_EMU_MAX_PORTS * EMU_GID_TBL_LEN];
	struct emu_attr *entries;
	uint64_t flags, entry_size, max, num;
	int ret;

	ret = call_get_flags(c, UVERBS_ATTR_QUERY_GID_TABLE_FLAGS, 0, &flags);
	if (ret)
		return ret;
	ret = call_get_const(c, UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE,
			     UINT64_MAX, &entry_size);
	if (ret)
		return ret;
	if (!entry_size)
		return -EINVAL;
	entries = call_attr(c, UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES);
	if (entries->len % entry_size || !(entries->len / entry_size))
		return -EINVAL;
	call_ctx(c, &ret);
	if (ret)
		return ret;
	max = entries->len / entry_size;
	ret = emu_gid_table(emu_ibdev_of(c->file), e,
			    max < ARRAY_SIZE(e) ? max : ARRAY_SIZE(e));
	if (ret < 0)
		return ret;
	num = ret;
	ret = gid_entries_out(c, entries, e, num, entry_size);
	if (ret)
		return ret;
	return call_copy_to(c, UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES,
			    &num, sizeof(num));
}

static int m_query_gid_entry(struct emu_call *c)
{
	struct ib_uverbs_gid_entry e;
	uint64_t flags, port, index;
	int ret;

	ret = call_get_flags(c, UVERBS_ATTR_QUERY_GID_ENTRY_FLAGS, 0, &flags);
	if (ret)
		return ret;
	ret = call_get_const(c, UVERBS_ATTR_QUERY_GID_ENTRY_PORT, UINT32_MAX,
			     &port);
	if (ret)
		return ret;
	ret = call_get_const(c, UVERBS_ATTR_QUERY_GID_ENTRY_GID_INDEX,
			     UINT32_MAX, &index);
	if (ret)
		return ret;
	call_ctx(c, &ret);
	if (ret)
		return ret;
	ret = emu_gid_entry(emu_ibdev_of(c->file), port, index, &e);
	if (ret)
		return ret;
	return call_copy_to_struct_or_zero(c,
					   UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY,
					   &e, sizeof(e));
}

static int m_destroy(struct emu_call *c)
{
	return emu_obj_destroy(call_attr(c, 0)->obj);
}

static int m_async_event_alloc(struct emu_call *c)
{
	struct emu_attr *a = call_attr(c, UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE);
	struct emu_event_file *ev;
	int64_t fd;
	int ret;

	ret = emu_event_file_create(c->file, true, &ev);
	if (ret)
		return ret;
	/* The new fd number goes back in the attribute's data. */
	fd = ev->app_fd;
	c->uattrs[a->uidx].data = fd;
	if (emu_copy_to_user(&c->user_attrs[a->uidx].data, &fd, sizeof(fd))) {
		emu_event_file_abort(ev);
		return -EFAULT;
	}
	return 0;
}

static const struct emu_attr_spec invoke_write_specs[] = {
	A_PTR_IN(UVERBS_ATTR_CORE_IN, sizeof(uint32_t), UINT16_MAX, false),
	A_PTR_OUT(UVERBS_ATTR_CORE_OUT, 0, UINT16_MAX, false),
	A_CONST_IN(UVERBS_ATTR_WRITE_CMD, true),
};

static const struct emu_attr_spec get_context_specs[] = {
	A_PTR_OUT(UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS, 4, 4, false),
	A_PTR_OUT(UVERBS_ATTR_GET_CONTEXT_CORE_SUPPORT, 8, 8, false),
};

static const struct emu_attr_spec query_context_specs[] = {
	A_PTR_OUT(UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS, 4, 4, false),
	A_PTR_OUT(UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT, 8, 8, false),
};

static const struct emu_attr_spec query_port_specs[] = {
	A_CONST_IN(UVERBS_ATTR_QUERY_PORT_PORT_NUM, true),
	A_STRUCT_OUT(UVERBS_ATTR_QUERY_PORT_RESP,
		     struct ib_uverbs_query_port_resp_ex, reserved, true),
};

static const struct emu_attr_spec query_gid_table_specs[] = {
	A_CONST_IN(UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE, true),
	A_FLAGS_IN(UVERBS_ATTR_QUERY_GID_TABLE_FLAGS, false),
	A_PTR_OUT(UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES, 0, UINT16_MAX,
		  true),
	A_PTR_OUT(UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES, 8, 8, true),
};

static const struct emu_attr_spec query_gid_entry_specs[] = {
	A_CONST_IN(UVERBS_ATTR_QUERY_GID_ENTRY_PORT, true),
	A_CONST_IN(UVERBS_ATTR_QUERY_GID_ENTRY_GID_INDEX, true),
	A_FLAGS_IN(UVERBS_ATTR_QUERY_GID_ENTRY_FLAGS, false),
	A_STRUCT_OUT(UVERBS_ATTR_QUERY_GID_ENTRY_RESP_ENTRY,
		     struct ib_uverbs_gid_entry, netdev_ifindex, true),
};

static const struct emu_attr_spec pd_destroy_specs[] = {
	A_IDR(UVERBS_ATTR_DESTROY_PD_HANDLE, EMU_OBJ_PD, ACCESS_DESTROY),
};

static const struct emu_attr_spec mr_destroy_specs[] = {
	A_IDR(UVERBS_ATTR_DESTROY_MR_HANDLE, EMU_OBJ_MR, ACCESS_DESTROY),
};

static const struct emu_attr_spec async_alloc_specs[] = {
	A_FD_NEW(UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE),
};

/* ---- raw packet objects: native methods ------------------------------------ */

/* uverbs_copy_from(): an exact-size input attribute */
static int call_copy_from(struct emu_call *c, unsigned int id, void *dst,
			  size_t size)
{
	struct emu_attr *a = call_attr(c, id);

	if (!a)
		return -ENOENT;
	if (size < a->len)
		return -EINVAL;
	return emu_copy_from_user(dst, a->ptr, size) ? -EFAULT : 0;
}

/* uverbs_copy_from_or_zero(): a shorter attribute is zero-extended */
static int call_copy_from_or_zero(struct emu_call *c, unsigned int id,
				  void *dst, size_t size)
{
	struct emu_attr *a = call_attr(c, id);

	memset(dst, 0, size);
	if (!a)
		return 0;
	return emu_copy_from_user(dst, a->ptr, a->len < size ? a->len : size) ?
		       -EFAULT : 0;
}

/* The new object's handle goes back in the IDR attribute's data. */
static int call_set_handle(struct emu_call *c, unsigned int id,
			   uint64_t handle)
{
	struct emu_attr *a = call_attr(c, id);

	c->uattrs[a->uidx].data = handle;
	return emu_copy_to_user(&c->user_attrs[a->uidx].data, &handle,
				sizeof(handle)) ? -EFAULT : 0;
}

static void *call_obj(struct emu_call *c, unsigned int id)
{
	struct emu_attr *a = call_attr(c, id);

	return a ? a->obj : NULL;
}

static int m_cq_create(struct emu_call *c)
{
	struct emu_attr *ch = call_attr(c, UVERBS_ATTR_CREATE_CQ_COMP_CHANNEL);
	struct emu_cq_req req = { .channel = ch ? ch->ev : NULL };
	struct emu_ucontext *ctx;
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
	ret = call_copy_to(c, UVERBS_ATTR_CREATE_CQ_RESP_CQE, &cq->cqe,
			   sizeof(cq->cqe));
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

#define METHOD(_obj, _meth, _fn, _udata, _specs)                               \
	{ .object = UVERBS_OBJECT_##_obj, .method = UVERBS_METHOD_##_meth,     \
	  .name = #_obj "/" #_meth, .handler = _fn, .has_udata = _udata,       \
	  .specs = _specs, .nspecs = ARRAY_SIZE(_specs) }

static const struct emu_method methods[] = {
	METHOD(DEVICE, INVOKE_WRITE, m_invoke_write, true, invoke_write_specs),
	METHOD(DEVICE, GET_CONTEXT, m_get_context, true, get_context_specs),
	METHOD(DEVICE, QUERY_CONTEXT, m_query_context, false,
	       query_context_specs),
	METHOD(DEVICE, QUERY_PORT, m_query_port, false, query_port_specs),
	METHOD(DEVICE, QUERY_GID_TABLE, m_query_gid_table, false,
	       query_gid_table_specs),
	METHOD(DEVICE, QUERY_GID_ENTRY, m_query_gid_entry, false,
	       query_gid_entry_specs),
	METHOD(PD, PD_DESTROY, m_destroy, false, pd_destroy_specs),
	METHOD(MR, MR_DESTROY, m_destroy, false, mr_destroy_specs),
	METHOD(ASYNC_EVENT, ASYNC_EVENT_ALLOC, m_async_event_alloc, false,
	       async_alloc_specs),
	METHOD(CQ, CQ_CREATE, m_cq_create, true, cq_create_specs),
	METHOD(CQ, CQ_DESTROY, m_cq_destroy, false, cq_destroy_specs),
	METHOD(QP, QP_CREATE, m_qp_create, true, qp_create_specs),
	METHOD(QP, QP_DESTROY, m_qp_destroy, false, qp_destroy_specs),
	METHOD(WQ, WQ_CREATE, m_wq_create, true, wq_create_specs),
	METHOD(WQ, WQ_DESTROY, m_wq_destroy, false, wq_destroy_specs),
	METHOD(RWQ_IND_TBL, RWQ_IND_TBL_DESTROY, m_destroy, false,
	       ind_tbl_destroy_specs),
};

static const struct emu_method *find_method(unsigned int object,
					    unsigned int method)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(methods); i++)
		if (methods[i].object == object && methods[i].method == method)
			return &methods[i];
	return NULL;
}

static const struct emu_attr_spec uhw_in_spec =
	A_PTR_IN(UVERBS_ATTR_UHW_IN, 0, UINT16_MAX, false);
static const struct emu_attr_spec uhw_out_spec =
	A_PTR_OUT(UVERBS_ATTR_UHW_OUT, 0, UINT16_MAX, false);

static const struct emu_attr_spec *find_spec(const struct emu_method *m,
					     unsigned int id)
{
	unsigned int i;

	if (m->has_udata && id == UVERBS_ATTR_UHW_IN)
		return &uhw_in_spec;
	if (m->has_udata && id == UVERBS_ATTR_UHW_OUT)
		return &uhw_out_spec;
	for (i = 0; i < m->nspecs; i++)
		if (m->specs[i].id == id)
			return &m->specs[i];
	return NULL;
}

/* uverbs_is_attr_cleared(): the bytes past len of an input attribute */
static int attr_tail_cleared(const struct ib_uverbs_attr *ua, size_t len)
{
	if (ua->len <= sizeof(ua->data)) {
		uint64_t v = ua->data;

		return len >= 8 || !(v >> (len * 8));
	}
	return emu_user_is_cleared(emu_user_off((void *)(uintptr_t)ua->data,
						len),
				   ua->len - len);
}

static int process_ptr(struct emu_call *c, const struct emu_attr_spec *spec,
		       unsigned int i, struct emu_attr *a)
{
	const struct ib_uverbs_attr *ua = &c->uattrs[i];
	int ret;

	if (spec->type == SPEC_PTR_IN && ua->len > spec->len &&
	    spec->zero_trailing) {
		ret = attr_tail_cleared(ua, spec->len);
		if (ret <= 0)
			return ret < 0 ? ret : -EOPNOTSUPP;
	}
	if (ua->len < spec->min_len ||
	    (!spec->zero_trailing && ua->len > spec->len))
		return -EINVAL;
	if (ua->attr_data.reserved)
		return -EINVAL;
	/*
	 * Inline data is read where uverbs_fill_udata() points: in the
	 * application's attribute array (user memory, like every pointer
	 * read through emu_copy_from_user()).
	 */
	if (spec->type == SPEC_PTR_IN && ua->len <= sizeof(ua->data))
		a->ptr = &c->user_attrs[i].data;
	else
		a->ptr = (const void *)(uintptr_t)ua->data;
	return 0;
}

static int process_obj(struct emu_call *c, const struct emu_attr_spec *spec,
		       unsigned int i, struct emu_attr *a)
{
	const struct ib_uverbs_attr *ua = &c->uattrs[i];
	int ret;

	if (ua->attr_data.reserved || ua->len)
		return -EINVAL;
	if (spec->access == ACCESS_NEW) {
		/* New objects need a context; the handler creates them. */
		call_ctx(c, &ret);
		return ret;
	}
	if (spec->type == SPEC_FD) {
		/* an fd of the wrong kind or of another file: fget() fails */
		a->ev = emu_event_file_get(c->file, (int)ua->data, spec->async);
		return a->ev ? 0 : -EBADF;
	}
	a->obj = emu_obj_lookup(c->file->ctx, spec->obj, ua->data, &ret);
	return a->obj ? 0 : ret;
}

/* uverbs_set_attr() + uverbs_process_attr() for attribute i */
static int process_attr(struct emu_call *c, unsigned int i)
{
	const struct ib_uverbs_attr *ua = &c->uattrs[i];
	const struct emu_attr_spec *spec = find_spec(c->method, ua->attr_id);
	struct emu_attr *a;
	int ret;

	if (!spec)
		return ua->flags & UVERBS_ATTR_F_MANDATORY ? -EPROTONOSUPPORT :
							     0;
	a = &c->attrs[attr_slot(ua->attr_id)];
	if (a->present)
		return -EINVAL;
	if (spec->type == SPEC_PTR_IN || spec->type == SPEC_PTR_OUT)
		ret = process_ptr(c, spec, i, a);
	else
		ret = process_obj(c, spec, i, a);
	if (ret)
		return ret;
	a->present = true;
	a->uidx = i;
	a->len = ua->len;
	a->data = ua->data;
	return 0;
}

static int run_method(struct emu_call *c, unsigned int num_attrs)
{
	const struct emu_method *m = c->method;
	unsigned int i;
	int ret;

	for (i = 0; i < num_attrs; i++) {
		ret = process_attr(c, i);
		if (ret)
			return ret;
	}
	for (i = 0; i < m->nspecs; i++)
		if (m->specs[i].mandatory && !call_has_attr(c, m->specs[i].id))
			return -EINVAL;
	if (m->has_udata)
		call_fill_udata(c, &c->b.uhw, UVERBS_ATTR_UHW_IN,
				UVERBS_ATTR_UHW_OUT);
	/* INVOKE_WRITE counts as the write command it carries */
	ret = m->handler == m_invoke_write ? 0 : fault_cmd(m->name);
	if (ret)
		return ret;
	ret = m->handler(c);
	if (!ret && m->has_udata && call_has_attr(c, UVERBS_ATTR_UHW_OUT))
		ret = set_output(c, call_attr(c, UVERBS_ATTR_UHW_OUT));
	/* EPROTONOSUPPORT is reserved for "method not supported". */
	return ret == -EPROTONOSUPPORT ? -EINVAL : ret;
}

static int do_ioctl(struct emu_file *file, struct ib_uverbs_ioctl_hdr *uhdr,
		    struct emu_call *c)
{
	struct ib_uverbs_attr uattrs[(EMU_PAGE_SIZE - sizeof(*uhdr)) /
				     sizeof(struct ib_uverbs_attr)];
	struct ib_uverbs_ioctl_hdr hdr;

	if (emu_copy_from_user(&hdr, uhdr, sizeof(hdr)))
		return -EFAULT;
	c->detail = NULL;
	if (hdr.length > EMU_PAGE_SIZE ||
	    hdr.length != sizeof(hdr) + hdr.num_attrs * sizeof(uattrs[0]))
		return -EINVAL;
	if (hdr.reserved1 || hdr.reserved2)
		return -EPROTONOSUPPORT;
	if (hdr.driver_id != emu_dev.driver_id)
		return -EINVAL;
	c->method = find_method(hdr.object_id, hdr.method_id);
	if (!c->method)
		return -EPROTONOSUPPORT;
	if (emu_copy_from_user(uattrs, uhdr->attrs,
			       hdr.num_attrs * sizeof(uattrs[0])))
		return -EFAULT;
	c->uattrs = uattrs;
	c->user_attrs = uhdr->attrs;
	return run_method(c, hdr.num_attrs);
}

int emu_uverbs_ioctl(struct emu_file *file, unsigned long request, void *arg)
{
	struct emu_call c = { .file = file };
	struct ib_uverbs_ioctl_hdr hdr = {};
	int ret;

	c.b.file = file;
	c.b.call = &c;
	/* An old kernel, or any other ioctl: the file has no such command. */
	if (emu.opts.transport == MANA_EMU_TRANSPORT_WRITE ||
	    (unsigned int)request != RDMA_VERBS_IOCTL)
		ret = -ENOTTY;
	else
		ret = do_ioctl(file, arg, &c);
	if (emu_verbose()) {
		emu_copy_from_user(&hdr, arg, sizeof(hdr));
		emu_log("ioctl fd %d 0x%lx %s%s%s%s (object %u method %u) -> %s",
			file->fd, request,
			c.method ? c.method->name :
			emu.opts.transport == MANA_EMU_TRANSPORT_WRITE ?
				"refused (--transport=write)" : "?",
			c.detail ? "(" : "", c.detail ? c.detail : "",
			c.detail ? ")" : "", hdr.object_id, hdr.method_id,
			emu_errname(ret));
	}
	return ret;
}
