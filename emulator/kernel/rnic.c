// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RNIC side of the emulated mana_ib: the attributes query_device and
 * query_port add for RC (research mana-kernel-and-gdma.md 2.10), and the
 * GID table as the uverbs core's cache presents it (QUERY_GID_TABLE /
 * QUERY_GID_ENTRY; core/gid.h holds the entries).
 */
#include <infiniband/verbs.h>	/* before any rdma/ uAPI header */

#include "kernel.h"

#include <errno.h>
#include <string.h>

#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>

#include "emulator/core/gid.h"
#include "emulator/core/links.h"

/*
 * Inbound and outbound RDMA READs in flight per QP.  The adapter's
 * GET_ADAPTER_CAP answer is not public; 16 is what the emulated device
 * honours for max_rd_atomic / max_dest_rd_atomic.
 */
#define EMU_RNIC_MAX_RD_ATOM 16
#define EMU_RNIC_MAX_MSG_SZ (16u << 20)	/* NEWEST mana_ib: 16 MiB */

void emu_rnic_query_device(struct ib_uverbs_ex_query_device_resp *resp)
{
	struct ib_uverbs_query_device_resp *b = &resp->base;

	b->max_qp_rd_atom = EMU_RNIC_MAX_RD_ATOM;
	b->max_qp_init_rd_atom = EMU_RNIC_MAX_RD_ATOM;
	b->max_res_rd_atom = EMU_RNIC_MAX_RD_ATOM * b->max_qp;
	b->atomic_cap = IBV_ATOMIC_NONE;
}

/* ib_mtu_int_to_enum() of the VF interface's MTU */
uint8_t emu_port_active_mtu(unsigned int port)
{
	unsigned int mtu = emu_port_netdev_mtu(port);

	if (mtu >= 4096)
		return IBV_MTU_4096;
	if (mtu >= 2048)
		return IBV_MTU_2048;
	if (mtu >= 1024)
		return IBV_MTU_1024;
	if (mtu >= 512)
		return IBV_MTU_512;
	return IBV_MTU_256;
}

/* mana_ib_query_port(): the RNIC fields of a RoCE port. */
void emu_rnic_query_port(const struct emu_ibdev *d, unsigned int port,
			 struct ib_uverbs_query_port_resp *resp)
{
	if (!emu_ibdev_roce_port(d, port))
		return;
	resp->gid_tbl_len = EMU_GID_TBL_LEN;
	if (kernel_era()->port_cm_sup)
		resp->port_cap_flags = IBV_PORT_CM_SUP;
	if (kernel_era()->port_max_msg_sz)
		resp->max_msg_sz = EMU_RNIC_MAX_MSG_SZ;
}

static uint32_t gid_ifindex(unsigned int port)
{
	struct emu_link l;

	return emu_link_of_port(emu_dev.opts, port, &l) ? l.ifindex : 0;
}

/* rdma_get_gid_attr(): -EINVAL past the table, -ENODATA for an empty slot */
int emu_gid_entry(const struct emu_ibdev *d, uint32_t port, uint32_t index,
		  struct ib_uverbs_gid_entry *e)
{
	uint8_t gid[16];
	int ret;

	/* a port without RoCE has a GID table of size 0 */
	if (!emu_ibdev_port_valid(d, port) || !emu_ibdev_roce_port(d, port))
		return -EINVAL;
	ret = emu_gid_get(emu_dev.opts, port, index, gid);
	if (ret)
		return ret;
	memset(e, 0, sizeof(*e));
	memcpy(e->gid, gid, sizeof(gid));
	e->gid_index = index;
	e->port_num = port;
	e->gid_type = IB_UVERBS_GID_TYPE_ROCE_V2;	/* MANA: UDP only */
	e->netdev_ifindex = gid_ifindex(port);
	return 0;
}

/* rdma_query_gid_table(): every valid entry of every port, or -EINVAL. */
int emu_gid_table(const struct emu_ibdev *d, struct ib_uverbs_gid_entry *out,
		  size_t max)
{
	unsigned int port, i, n;
	size_t count = 0;

	for (port = 1; port <= d->nports; port++) {
		if (!emu_ibdev_roce_port(d, port))
			continue;
		n = emu_gid_count(emu_dev.opts, port);
		for (i = 0; i < n; i++) {
			if (count >= max)
				return -EINVAL;
			emu_gid_entry(d, port, i, &out[count++]);
		}
	}
	return count;
}
