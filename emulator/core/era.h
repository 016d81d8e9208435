/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel eras as data (--kernel=VERSION): every behaviour of the emulated
 * mana_ib and uverbs core that differs between Linux versions is one flag
 * of struct emu_era, set from the version that introduced it.  Code asks
 * emu_era_of(opts)->flag and never compares versions.
 *
 * Versions come from mana_ib's history (research mana-kernel-and-gdma.md
 * 1.4, 2.1, 2.4, 2.8, 2.11; rdma-core's kernel-header syncs; the linux-rdma
 * patch mails): the ones marked inferred in era.c are the merge window
 * after the patch was posted or accepted, not read from a release.
 */
#ifndef MANA_EMU_ERA_H
#define MANA_EMU_ERA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct emu_era {
	const char *version;		/* "6.14": what --kernel takes */
	bool inferred;			/* version not pinned to a release */
	/* --- what this kernel does (each implied by the later ones) --- */
	bool adapter_caps;		/* limits from the adapter, not 6.2's */
	bool jumbo_mtu;			/* VF MTU 68..9000, not only 1500 */
	bool raw_cq_events;		/* raw CQs on an EQ: completion events */
	bool comp_vectors;		/* num_comp_vectors: the adapter's queues */
	bool ib_netdev;			/* port netdev and node GUID set */
	bool rnic_cq_flag;		/* RNIC objects: GIDs, create_cq flags */
	bool port_attrs;		/* query_port fills in the port */
	bool device_attrs;		/* query_device: page sizes, every limit */
	bool vport_refs;		/* cfg_vport errno as is, RSS vport ref */
	bool mr_optional;		/* reg_mr ignores IB_ACCESS_OPTIONAL bits */
	bool mr_atomic_zbva;		/* reg_mr: REMOTE_ATOMIC, ZERO_BASED */
	bool rc_qp;			/* create_rc_qp: RC QPs from userspace */
	bool ud_kernel_only;		/* UD QPs exist, userspace: EOPNOTSUPP */
	bool port_events;		/* core: PORT_ACTIVE/ERR from the netdev */
	bool port_cm_sup;		/* query_port: CM_SUP on the RoCE port */
	bool port_max_msg_sz;		/* query_port: max_msg_sz 16 MiB (RNIC) */
	/*
	 * query_port's width and speed from ib_get_eth_speed() (the
	 * netdev's ethtool speed) instead of 4X/EDR.  Not implied by the
	 * later rows: mainline has it from 7.2, Debian's 6.12 by backport.
	 */
	bool eth_speed;
	bool netdev_ksettings;		/* mana's ethtool get_link_ksettings */
	bool netdev_sku_speed;		/* ... with the SKU's speed (hardware) */
	bool split;			/* manae_0 (ETH) + mana_0 (RNIC) */
	bool device_ids;		/* vendor ids, raw_packet_caps reported */
	bool cq_type_from_device;	/* RNIC CQ by device type, flag ignored */
	bool robust_udata;		/* driver data: tails, comp_mask checked */
	bool pdn;			/* ucontext comp_mask, alloc_pd {pdn} */
	bool dmabuf_mr;			/* reg_user_mr_dmabuf */
	bool dm;			/* alloc_dm / reg_dm_mr (RNIC device) */
	bool mw;			/* alloc_mw / dealloc_mw, REG_MR MW_BIND */
	bool uc_qp;			/* create_qp IB_QPT_UC (3 queues) */
	/* ucma: RESOLVE_IB_SERVICE and WRITE_CM_EVENT (the IB core's) */
	bool ucma_write_event;
};

/* Indexes into the table (era.c), oldest first. */
enum emu_kernel {
	EMU_KERNEL_6_2,
	EMU_KERNEL_6_8,
	EMU_KERNEL_6_10,
	EMU_KERNEL_6_11,
	EMU_KERNEL_6_12,
	EMU_KERNEL_6_14,
	EMU_KERNEL_6_15,
	EMU_KERNEL_6_16,
	EMU_KERNEL_6_17,
	EMU_KERNEL_7_0,
	EMU_KERNEL_7_1,
	EMU_KERNEL_7_2,
	EMU_KERNEL_COUNT,
	/*
	 * The default.  Every era's features are emulated (dma-buf MRs 6.15,
	 * DM 7.0, MWs 7.1, UC 7.2).
	 */
	EMU_KERNEL_NEWEST = EMU_KERNEL_7_2,
	EMU_KERNEL_DEFAULT = EMU_KERNEL_NEWEST,
};

extern const struct emu_era emu_eras[EMU_KERNEL_COUNT];

/* The era of @kernel (an enum emu_kernel; out of range: the default). */
const struct emu_era *emu_era_get(unsigned int kernel);

/*
 * "newest" or "MAJOR.MINOR": the newest era not after that version (6.13
 * is 6.12's era); -1 before 6.2 (no mana_ib) or after the newest era
 * (unknown), or not a version.
 */
int emu_era_lookup(const char *name);

/*
 * query_port's active_width and active_speed (IB_WIDTH_*, IB_SPEED_*
 * values) in era @e on an adapter whose SKU speed is @sku_mbps: 4X/EDR
 * hard-coded, or ib_get_eth_speed() of the netdev's ethtool speed.
 */
void emu_era_port_speed(const struct emu_era *e, uint32_t sku_mbps,
			uint8_t *width, uint8_t *speed);

#endif /* MANA_EMU_ERA_H */
