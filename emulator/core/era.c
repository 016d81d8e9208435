// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The table of kernel eras (era.h).  Each row is the first kernel with a
 * change to mana_ib's userspace ABI or behaviour; the evidence for its
 * version is next to it.  6.2 is read from the v6.2 source; every later
 * version is inferred from the date a patch reached rdma-next (rdma-core's
 * "Update kernel headers" commits, the linux-rdma mails), not read from a
 * release tag.
 */
#include "era.h"

#include <stdlib.h>
#include <string.h>

/* A row and everything before it (each era keeps the older behaviour). */
#define K6_8 .adapter_caps = true, .raw_cq_events = true, .jumbo_mtu = true
#define K6_10 K6_8, .comp_vectors = true, .ib_netdev = true, \
	.rnic_cq_flag = true, .port_attrs = true, \
	.device_attrs = true, .mr_optional = true
#define K6_11 K6_10, .rc_qp = true
/* 6.12 as Debian 13 ships it: 6.11 and one 6.12.y backport (eth_speed) */
#define K6_12 K6_11, .eth_speed = true
#define K6_14 K6_11, .ud_kernel_only = true, .port_events = true, \
	.port_cm_sup = true, .netdev_ksettings = true
#define K6_15 K6_14, .dmabuf_mr = true
#define K6_16 K6_15, .split = true, .device_ids = true, \
	.mr_atomic_zbva = true
#define K6_17 K6_16, .ucma_write_event = true, .netdev_sku_speed = true
#define K7_0 K6_17, .cq_type_from_device = true, .dm = true
#define K7_1 K7_0, .robust_udata = true, .pdn = true, .mw = true, \
	.port_max_msg_sz = true
#define K7_2 K7_1, .vport_refs = true, .uc_qp = true, .eth_speed = true

const struct emu_era emu_eras[EMU_KERNEL_COUNT] = {
	/*
	 * The first mana_ib (v6.2; qp.c read at 0604aa87, device.c, main.c,
	 * cq.c and mr.c in their first text and the diff context of the
	 * patches that changed them): raw packet QPs only, fixed
	 * limits (max_qp 64, max_qp_wr = max_cqe 256), one completion
	 * vector, query_port and query_gid fill nothing, create_cq takes
	 * {buf_addr} and answers nothing, a cfg_vport failure is ENODEV.
	 */
	[EMU_KERNEL_6_2] = { .version = "6.2" },
	/*
	 * "RDMA/mana_ib: query device capabilities" (posted 2023-12-04, so
	 * the 6.8 window): max_qp, max_cq, max_mr, max_qp_wr = max_cqe from
	 * the adapter; "Add CQ interrupt support for RAW QP" (same series,
	 * 2023-12-15): raw CQs get an EQ, so completion events (6.2 created
	 * them with GDMA_CQ_NO_EQ: an armed CQ never raised one).  Jumbo
	 * frames ("net: mana: Add support for jumbo frame", April 2023, so
	 * 6.4; put in this row): the VF's MTU range is 68 .. the adapter's
	 * MTU - 14 (9000), where 6.2's mana_probe_port() set min = max =
	 * 1500.
	 */
	[EMU_KERNEL_6_8] = { .version = "6.8", .inferred = true, K6_8 },
	/*
	 * RNIC CQs (create_cq flags bit 0, resp {cqid}): rdma-core synced
	 * the header on 2024-05-08 to a 6.10 merge-window commit.  The RNIC
	 * series also brought "implement port parameters" (posted
	 * 2024-04-10: query_port state, MTU, GIDs on port 1), "Use
	 * num_comp_vectors of ib_device" (posted 2024-04-12: one vector per
	 * adapter queue; 6.2 .. 6.9 set 1) and the port's netdev with the
	 * node GUID from its MAC (ib_device_set_netdev; 6.2's probe set
	 * neither, the version it came in is inferred).  The full
	 * query_device answer (page sizes, max_pd, ack delay, ...) is put here
	 * (inferred: not read in a 6.8/6.9 text), and "ignore optional
	 * access flags for MRs" (posted 2024-06-05 as a fix: 6.10-rc, and
	 * stable trees may carry it into older kernels).
	 */
	[EMU_KERNEL_6_10] = { .version = "6.10", .inferred = true, K6_10 },
	/* create_rc_qp: rdma-core's sync of 2024-06-30 (6.11 window) */
	[EMU_KERNEL_6_11] = { .version = "6.11", .inferred = true, K6_11 },
	/*
	 * --kernel=6.12 is Debian 13's 6.12 (6.12.117, read in its
	 * linux-source and answered by the QEMU guest, tests/guest/): 6.11's
	 * mana_ib plus "RDMA/mana_ib: Use ib_get_eth_speed for reporting port
	 * speed" (a Fixes: patch posted 2026-05-12, mainline in the 7.2
	 * window as d28654518c8d, in linux-6.12.y since 2026-07-21): width
	 * and speed follow the netdev's ethtool speed, and 6.12's mana has no
	 * get_link_ksettings, so the core's fallback 1000 Mb/s gives 1X/SDR.
	 * A 6.12 before that backport answered 4X/EDR as 6.11 does.
	 */
	[EMU_KERNEL_6_12] = { .version = "6.12", K6_12 },
	/*
	 * UD/GSI QPs for kernel users (userspace gets EOPNOTSUPP).  The core
	 * dispatches IB_EVENT_PORT_ACTIVE/PORT_ERR when the netdev a port is
	 * bound to (ib_device_set_netdev) starts or stops running with
	 * carrier ("RDMA/core: Support link status events dispatching", in
	 * rdma for-next for the 6.14 window: linux-next's merge fix of
	 * 2025-01-06); mana_ib dispatches none of its own.  The UD series'
	 * last patch, "RDMA/mana_ib: indicate CM support" (posted
	 * 2025-01-20): port 1 reports IB_PORT_CM_SUP.  The netdev got
	 * ethtool's get_link_ksettings ("net: mana: Add get_link and
	 * get_link_ksettings in ethtool", September 2024, so 6.13; put in
	 * this row), without a speed.
	 */
	[EMU_KERNEL_6_14] = { .version = "6.14", .inferred = true, K6_14 },
	/* reg_user_mr_dmabuf (posted 2025-02-10) */
	[EMU_KERNEL_6_15] = { .version = "6.15", .inferred = true, K6_15 },
	/*
	 * The ETH/RNIC split (posted April 2025); the CQ type still follows
	 * the create_cq flag.  The same patch made query_device report
	 * vendor_id, vendor_part_id (the GDMA device type) and, on the ETH
	 * device, raw_packet_caps: before, all three were 0 (DPDK checks the
	 * latter two only when vendor_part_id is nonzero, "compatible with
	 * all kernel versions").  MRs with REMOTE_ATOMIC and ZERO_BASED came in
	 * the same month ("Access remote atomic for MRs", "support of the
	 * zero based MRs", posted 2025-04-04); MW_BIND with the MWs (7.1).
	 */
	[EMU_KERNEL_6_16] = { .version = "6.16", .inferred = true, K6_16 },
	/*
	 * no change to mana_ib's userspace ABI (DM came in 7.0, MWs in
	 * 7.1); the core's ucma gained RESOLVE_IB_SERVICE and
	 * WRITE_CM_EVENT ("RDMA/ucma: Support write an event into a CM",
	 * rdma-next 2025-06-30, so 6.17); "net: mana: Add speed support in
	 * mana_get_link_ksettings" (v3 posted 2025-06-17 to net-next, so
	 * 6.17): the netdev's speed is the SKU's, asked of the hardware
	 * (MANA_QUERY_LINK_CONFIG; SPEED_UNKNOWN when that fails).
	 */
	[EMU_KERNEL_6_17] = { .version = "6.17", .inferred = true, K6_17 },
	/*
	 * "take CQ type from the device type" (posted 2026-01-09); "device
	 * memory support" (v2 posted 2026-01-27 and applied to rdma-next the
	 * same day, so the 7.0 window): alloc_dm, dealloc_dm, reg_dm_mr on
	 * the RNIC device only, no max_dm_size in query_device, no mmap of
	 * DM (rdma-core v62's libmana: "basic implementation").
	 */
	[EMU_KERNEL_7_0] = { .version = "7.0", .inferred = true, K7_0 },
	/*
	 * "Adopt robust udata" and "return PD number to the user": accepted
	 * in April 2026 (rdma-core pull 1696), synced to rdma-core in
	 * August 2026.  "RDMA/mana_ib: memory windows" (alloc_mw and
	 * dealloc_mw, types 1 and 2 as GDMA_CREATE_MR types MW1 = 6 and
	 * MW2 = 7; REG_MR accepts IB_ACCESS_MW_BIND): v3 posted 2026-03-31,
	 * "applied to for-next" 2026-04-09, so the 7.1 window (rdma-core's
	 * alloc_mw of v63 was merged the next day).  "RDMA/mana_ib: Report
	 * max_msg_sz in mana_ib_query_port" (16 MiB on the RNIC: upstream
	 * c9a40f6531b8, a Fixes: patch of 2026-05-12 in 7.1-rc, also in
	 * 7.0.y; not in Debian's 6.12, where 6.12's query_port lacks the
	 * RNIC branch it patches).
	 */
	[EMU_KERNEL_7_1] = { .version = "7.1", .inferred = true, K7_1 },
	/*
	 * "net: mana: Per-vPort EQ and MSI-X management" (v12 pulled into
	 * net-next on 2026-06-05, rebased on 7.1-rc1, so the 7.2 window):
	 * mana_ib_cfg_vport() returns mana_cfg_vport()'s errno (EBUSY for a
	 * held vport) instead of ENODEV, a PD stays on its first port
	 * (EINVAL), and the RSS QP takes a vport reference with one RSS QP
	 * per vport (EBUSY).  Before, a second RSS QP reprogrammed the
	 * port's steering.  UC QPs ("RDMA/mana_ib: UC QP support for UAPI",
	 * kernel commit 6aad80a1d4e7, synced by rdma-core pull 1719 on
	 * 2026-08-14, which is still in review): the newest row, inferred.
	 * ib_get_eth_speed() in query_port (see 6.12).
	 */
	[EMU_KERNEL_7_2] = { .version = "7.2", .inferred = true, K7_2 },
};

const struct emu_era *emu_era_get(unsigned int kernel)
{
	return &emu_eras[kernel < EMU_KERNEL_COUNT ? kernel :
			 EMU_KERNEL_DEFAULT];
}

/* "6.14" -> 6 * 1000 + 14; -1 if not MAJOR.MINOR */
static long version_number(const char *s)
{
	unsigned long major, minor;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	major = strtoul(s, &end, 10);
	if (*end != '.' || end[1] < '0' || end[1] > '9')
		return -1;
	minor = strtoul(end + 1, &end, 10);
	if (*end || major > 99 || minor > 999)
		return -1;
	return (long)(major * 1000 + minor);
}

int emu_era_lookup(const char *name)
{
	long want = version_number(name);
	int i;

	if (!strcmp(name, "newest"))
		return EMU_KERNEL_NEWEST;
	if (want < 0 || want > version_number(emu_eras[EMU_KERNEL_NEWEST].version))
		return -1;
	for (i = EMU_KERNEL_COUNT - 1; i >= 0; i--)
		if (version_number(emu_eras[i].version) <= want)
			return i;
	return -1;
}

/* ib_verbs.h: enum ib_port_width, enum ib_port_speed */
enum { W1X = 1, W4X = 2, W2X = 16 };
enum { SDR = 1, DDR = 2, FDR10 = 8, EDR = 32, HDR = 64, NDR = 128 };

/*
 * ib_get_width_and_speed() for a netdev that reports no lanes (mana): the
 * IB link for the first rate bucket at or above @mbps.
 */
static void eth_width_speed(uint32_t mbps, uint8_t *width, uint8_t *speed)
{
	static const struct {
		uint32_t upto;
		uint8_t width, speed;
	} map[] = {
		{ 1000, W1X, SDR }, { 10000, W1X, FDR10 }, { 20000, W4X, DDR },
		{ 25000, W1X, EDR }, { 40000, W4X, FDR10 }, { 50000, W2X, EDR },
		{ 100000, W4X, EDR }, { 200000, W4X, HDR },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (mbps <= map[i].upto) {
			*width = map[i].width;
			*speed = map[i].speed;
			return;
		}
	*width = W4X;
	*speed = NDR;
}

void emu_era_port_speed(const struct emu_era *e, uint32_t sku_mbps,
			uint8_t *width, uint8_t *speed)
{
	uint32_t mbps;

	if (!e->eth_speed) {
		*width = W4X;
		*speed = EDR;
		return;
	}
	/*
	 * The netdev's ethtool speed: none before mana had
	 * get_link_ksettings (ib_get_eth_speed() then takes 1000 Mb/s),
	 * never set (0, taken as it is) until it asked the hardware for the
	 * SKU's speed.
	 */
	if (!e->netdev_ksettings)
		mbps = 1000;
	else
		mbps = e->netdev_sku_speed ? sku_mbps : 0;
	eth_width_speed(mbps, width, speed);
}
