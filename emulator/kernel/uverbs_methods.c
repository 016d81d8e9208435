// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The native ioctl methods on the device, PDs, MRs and async event
 * files, with their attribute specs.  The ioctl framework is in
 * uverbs_ioctl.c.  A new method: its handler, its specs and one row in
 * device_methods[].
 */
#include <infiniband/verbs.h>	/* before any rdma/ uAPI header */

#include "uverbs_ioctl.h"

#include <errno.h>
#include <stdint.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "emulator/core/emu.h"
#include "emulator/core/gid.h"
#include "kernel.h"
#include "uverbs.h"

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

static const struct emu_attr_spec mw_destroy_specs[] = {
	A_IDR(UVERBS_ATTR_DESTROY_MW_HANDLE, EMU_OBJ_MW, ACCESS_DESTROY),
};

static const struct emu_attr_spec async_alloc_specs[] = {
	A_FD_NEW(UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE),
};

static const struct emu_method device_methods[] = {
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
	/* the era's check is in find_method (uverbs_ioctl.c) */
	METHOD(MW, MW_DESTROY, m_destroy, false, mw_destroy_specs),
	METHOD(ASYNC_EVENT, ASYNC_EVENT_ALLOC, m_async_event_alloc, false,
	       async_alloc_specs),
};

const struct emu_method_table uverbs_device_methods =
	METHOD_TABLE(device_methods);
