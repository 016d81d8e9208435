/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The IB devices mana_ib registers for the one MANA PCI function, by
 * kernel era (--era), one table for sysfs, RDMA netlink, the uverbs char
 * devices and the verbs (research mana-kernel-and-gdma.md 2.1, 2.4):
 *
 * - single (before the April 2025 split, default): one mana_0 serves raw
 *   packet QPs on every port and RNIC objects (RC QPs, RNIC CQs chosen by
 *   the create_cq flag) on port 1; it reports vendor_part_id 2 as today's
 *   emulated device always has;
 * - split (newest): manae_0, the ETH device (GDMA type 2): raw packet QPs
 *   on every port, no GIDs; and mana_0, the RNIC device (GDMA type 3, one
 *   port without the multi-port feature): every CQ an RNIC CQ, RC QPs, no
 *   raw QPs.  uverbs0 is manae_0, uverbs1 mana_0.
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
	uint32_t vendor_part_id;	/* GDMA device type */
	unsigned int nports;		/* phys_port_cnt */
};

static inline unsigned int emu_ibdev_count(const struct mana_emu_options *o)
{
	return o->era == MANA_EMU_ERA_SPLIT ? 2 : 1;
}

/* Device @i (0-based): false past the end. */
static inline bool emu_ibdev_get(const struct mana_emu_options *o,
				 unsigned int i, struct emu_ibdev *d)
{
	bool split = o->era == MANA_EMU_ERA_SPLIT;

	if (i >= emu_ibdev_count(o))
		return false;
	*d = (struct emu_ibdev){
		.index = i, .raw = !split || i == 0, .rnic = !split || i == 1,
		.rnic_cq_always = split && i == 1,
		.vendor_part_id = split && i == 1 ? 3 : 2,
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
