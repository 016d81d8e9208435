/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Identity of the emulated MANA VF, shared by the sysfs generator, the
 * netlink responder and the uverbs device model so that every view of
 * the device agrees.
 */
#ifndef MANA_EMU_DEFS_H
#define MANA_EMU_DEFS_H

#include <stdint.h>

#include <rdma/mana-abi.h>

#define EMU_UVERBS_MAJOR 231
#define EMU_UVERBS_MINOR_BASE 192
#define EMU_UVERBS_ABI 1		/* MANA_IB_UVERBS_ABI_VERSION */
#define EMU_UVERBS_CLASS_ABI 6		/* IB_USER_VERBS_ABI_VERSION */
#define EMU_PCI_BDF "7870:00:00.0"
#define EMU_PCI_SUBSYS_VENDOR 0x1414
#define EMU_PCI_SUBSYS_DEVICE 0x0001
#define EMU_CDEV_DIR "/dev/infiniband/"
/* rdma_cm (the ucma misc device): ABI 4, misc major, a minor of ours */
#define EMU_UCMA_ABI 4
#define EMU_UCMA_MAJOR 10
#define EMU_UCMA_MINOR 58

/* IB device names, uverbs indexes and vendor_part_id: ibdev.h (--era) */
#define EMU_HW_VER 0
/* 1.0.1 encoded major << 32 | minor << 16 | sub */
#define EMU_FW_VER ((1ULL << 32) | (0ULL << 16) | 1ULL)
#define EMU_FW_VER_STR "1.0.1"
/* mana_ib reports only RC_RNR_NAK_GEN (IB_UVERBS_DEVICE_RC_RNR_NAK_GEN) */
#define EMU_DEVICE_CAP_FLAGS (1ULL << 12)

/*
 * EUI-64 from an EUI-48: flip the U/L bit and insert ff:fe in the middle.
 * Returned in host order (the value netlink carries; uverbs wants it
 * big-endian).
 */
static inline uint64_t emu_mac_to_guid(const uint8_t mac[6])
{
	return (uint64_t)(mac[0] ^ 0x02) << 56 | (uint64_t)mac[1] << 48 |
	       (uint64_t)mac[2] << 40 | 0xffULL << 32 | 0xfeULL << 24 |
	       (uint64_t)mac[3] << 16 | (uint64_t)mac[4] << 8 | mac[5];
}

#endif /* MANA_EMU_DEFS_H */
