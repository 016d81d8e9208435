/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The IB devices mana_ib registers for the one MANA PCI function, by
 * kernel era (--kernel, core/era.h), one table for sysfs, RDMA netlink,
 * the uverbs char devices and the verbs (research mana-kernel-and-gdma.md
 * 2.1, 2.4):
 *
 * - raw only (6.2 .. 6.9): one mana_0, raw packet QPs on every port,
 *   no RNIC objects, no GIDs;
 * - before the split (6.10 .. 6.15): one mana_0 serves raw packet QPs on
 *   every port and RNIC objects (RC QPs, RNIC CQs chosen by the
 *   create_cq flag) on port 1; like every kernel before the split it
 *   reports vendor_part_id 0;
 * - split (6.16 on): manae_0, the ETH device (GDMA type 2): raw packet QPs
 *   on every port, no GIDs; and mana_0, the RNIC device (GDMA type 3, one
 *   port without the multi-port feature): RC QPs, no raw QPs.  The
 *   create_cq flag still picks the CQ type until 7.0, where the device
 *   type does (every CQ of mana_0 an RNIC CQ, none of manae_0).  uverbs0
 *   is manae_0, uverbs1 mana_0.
 */
#ifndef MANA_EMU_IBDEV_H
#define MANA_EMU_IBDEV_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "options.h"

#define EMU_MAX_IBDEVS 2

struct emu_ibdev {
	unsigned int index;		/* netlink index, uverbs<index> */
	char name[16];
	bool raw;			/* raw packet QPs (the ETH role) */
	bool rnic;			/* RNIC objects on port 1 */
	bool rnic_cq_always;		/* every CQ is an RNIC CQ */
	bool rnic_cq_never;		/* the create_cq flag is ignored */
	uint32_t vendor_part_id;	/* GDMA device type */
	unsigned int nports;		/* phys_port_cnt */
};

static inline unsigned int emu_ibdev_count(const struct mana_emu_options *o)
{
	return emu_era_get(o->kernel)->split ? 2 : 1;
}

/* Device @i (0-based): false past the end. */
static inline bool emu_ibdev_get(const struct mana_emu_options *o,
				 unsigned int i, struct emu_ibdev *d)
{
	const struct emu_era *e = emu_era_get(o->kernel);
	bool split = e->split;

	if (i >= emu_ibdev_count(o))
		return false;
	*d = (struct emu_ibdev){
		.index = i, .raw = !split || i == 0,
		.rnic = e->rnic_cq_flag && (!split || i == 1),
		.rnic_cq_always = e->cq_type_from_device && split && i == 1,
		.rnic_cq_never = e->cq_type_from_device && split && i == 0,
		.vendor_part_id = !e->device_ids ? 0 : split && i == 1 ? 3 : 2,
		.nports = split && i == 1 ? 1 : o->ports,
	};
	snprintf(d->name, sizeof(d->name), "%s", split && !i ? "manae_0" :
		 "mana_0");
	return true;
}

/* The RoCE port of @d (the GID table's, core/gid.h): port 1 of the RNIC. */
static inline bool emu_ibdev_roce_port(const struct emu_ibdev *d,
				       unsigned int port)
{
	return d->rnic && port == 1;
}

#endif /* MANA_EMU_IBDEV_H */
