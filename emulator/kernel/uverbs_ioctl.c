// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RDMA_VERBS_IOCTL as the Linux uverbs core decodes it (uverbs_ioctl.c):
 * the header, the attribute specs and rules, the attribute accessors the
 * methods use, and the DEVICE/INVOKE_WRITE bridge into the write()
 * command handlers (uverbs.c).  The native methods are in
 * uverbs_methods.c (device, PD, MR, async events) and
 * uverbs_qp_methods.c (CQ, QP, WQ, RWQ indirection table).
 *
 * To add a native ioctl method: a handler, its attribute specs and one
 * row in its file's method table; a new file of methods adds its table
 * to method_tables[] below (one line) and to uverbs_ioctl.h.
 */
#include <infiniband/verbs.h>	/* before any rdma/ uAPI header */

#include "uverbs_ioctl.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "emulator/core/emu.h"
#include "kernel.h"
#include "uverbs.h"

static int attr_slot(unsigned int id)
{
	if (id == UVERBS_ATTR_UHW_IN)
		return SLOT_UHW_IN;
	if (id == UVERBS_ATTR_UHW_OUT)
		return SLOT_UHW_OUT;
	return id < SLOT_UHW_IN ? (int)id : -1;
}

struct emu_attr *call_attr(struct emu_call *c, unsigned int id)
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
int set_output(struct emu_call *c, struct emu_attr *a)
{
	struct ib_uverbs_attr *ua = &c->uattrs[a->uidx];

	ua->flags |= UVERBS_ATTR_F_VALID_OUTPUT;
	return emu_copy_to_user(&c->user_attrs[a->uidx].flags, &ua->flags,
				sizeof(ua->flags));
}

int call_copy_to(struct emu_call *c, unsigned int id, const void *src,
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
int call_get_const(struct emu_call *c, unsigned int id, uint64_t max,
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
int call_get_flags(struct emu_call *c, unsigned int id,
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

struct emu_ucontext *call_ctx(struct emu_call *c, int *err)
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

/* The generic DESTROY method: the object of attribute 0. */
int m_destroy(struct emu_call *c)
{
	return emu_obj_destroy(call_attr(c, 0)->obj);
}

/* uverbs_copy_from(): an exact-size input attribute */
int call_copy_from(struct emu_call *c, unsigned int id, void *dst,
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
int call_copy_from_or_zero(struct emu_call *c, unsigned int id,
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
int call_set_handle(struct emu_call *c, unsigned int id, uint64_t handle)
{
	struct emu_attr *a = call_attr(c, id);

	c->uattrs[a->uidx].data = handle;
	return emu_copy_to_user(&c->user_attrs[a->uidx].data, &handle,
				sizeof(handle)) ? -EFAULT : 0;
}

void *call_obj(struct emu_call *c, unsigned int id)
{
	struct emu_attr *a = call_attr(c, id);

	return a ? a->obj : NULL;
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

static const struct emu_attr_spec invoke_write_specs[] = {
	A_PTR_IN(UVERBS_ATTR_CORE_IN, sizeof(uint32_t), UINT16_MAX, false),
	A_PTR_OUT(UVERBS_ATTR_CORE_OUT, 0, UINT16_MAX, false),
	A_CONST_IN(UVERBS_ATTR_WRITE_CMD, true),
};

static const struct emu_method framework_methods[] = {
	METHOD(DEVICE, INVOKE_WRITE, m_invoke_write, true, invoke_write_specs),
};

static const struct emu_method_table framework_table =
	METHOD_TABLE(framework_methods);

/* Every method table, searched in order (no method is in two). */
static const struct emu_method_table *const method_tables[] = {
	&framework_table,
	&uverbs_device_methods,
	&uverbs_qp_methods,
	&uverbs_mem_methods,
};

/* A method absent from this kernel or device: EPROTONOSUPPORT. */
static const struct emu_method *find_method(const struct emu_call *c,
					    unsigned int object,
					    unsigned int method)
{
	const struct emu_method_table *t;
	const struct emu_method *m;
	size_t i, k;

	/* UAPI_DEF_OBJ_NEEDS_FN(dealloc_mw): no MW object before 7.1 */
	if (object == UVERBS_OBJECT_MW && !kernel_era()->mw)
		return NULL;
	for (k = 0; k < ARRAY_SIZE(method_tables); k++) {
		t = method_tables[k];
		for (i = 0; i < t->n; i++) {
			m = &t->methods[i];
			if (m->object == object && m->method == method)
				return !m->present || m->present(c) ? m : NULL;
		}
	}
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
	c->method = find_method(c, hdr.object_id, hdr.method_id);
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
	else if (file->remote)
		ret = emu_remote_file_cmd(file);
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
