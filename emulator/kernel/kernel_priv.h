/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared inside the emulated kernel (the kernel/ sources) only: mana_ib's limits
 * and the helpers one part of the object model lends another.
 */
#ifndef MANA_EMU_KERNEL_PRIV_H
#define MANA_EMU_KERNEL_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <rdma/ib_user_verbs.h>

#include "kernel.h"

/* mana_ib limits of the ETH device (mana-kernel-and-gdma.md 2.10) */
#define MANA_MAX_QP 64
#define MANA_MAX_CQ 64
#define MANA_MAX_SGE 15
#define MANA_MAX_SEND_SGE 30
#define MANA_MAX_MR 0xFFFFFF
#define MANA_MAX_PD 0x6000
#define MANA_PAGE_SZ_CAP 0x3FF000ULL	/* 4K .. 2M */
#define MANA_CA_ACK_DELAY 16
#define MANA_MR_VALID_ACCESS                                                   \
	(IB_UVERBS_ACCESS_LOCAL_WRITE | IB_UVERBS_ACCESS_REMOTE_WRITE |        \
	 IB_UVERBS_ACCESS_REMOTE_READ | IB_UVERBS_ACCESS_REMOTE_ATOMIC |       \
	 IB_UVERBS_ACCESS_MW_BIND | IB_UVERBS_ACCESS_ZERO_BASED)
/* Core: every defined access bit up to HUGETLB plus the optional range. */
#define CORE_ACCESS_SUPPORTED                                                  \
	(((IB_UVERBS_ACCESS_HUGETLB << 1) - 1) |                               \
	 IB_UVERBS_ACCESS_OPTIONAL_RANGE)
#define IB_SPEED_EDR 32
#define IB_WIDTH_4X 2
#define IB_LINK_LAYER_ETHERNET 2

/* kernel.c: live contexts, and completion channels (for the test API) */
extern struct emu_ucontext *kernel_contexts;
extern uint32_t kernel_comp_channel_count;

/*
 * kernel.c: allocate and commit an object of @size bytes (struct emu_obj
 * first) with a use reference on each of @deps.
 */
void *obj_create(struct emu_ucontext *ctx, enum emu_obj_type type,
		 size_t size, struct emu_obj *const *deps,
		 unsigned int ndeps, void (*release)(struct emu_obj *));
void obj_free(struct emu_obj *obj);	/* unlink, drop deps, release, free */

/*
 * mr.c: ib_umem_get()'s checks (overflow, empty range, RLIMIT_MEMLOCK, the
 * range mapped with the access asked for); the pinned bytes it would add.
 */
int umem_check(uint64_t start, uint64_t length, bool write,
	       uint64_t *pinned);
uint64_t pinned_span(uint64_t start, uint64_t length);

/* event.c */
void event_files_detach(struct emu_file *file);
/* A CQ goes away: its undelivered events go with it. */
void event_records_drop_cq(struct emu_event_file *ev, struct emu_cq *cq);

/* doorbell.c: the context goes, its doorbell page may stay mapped */
void db_page_orphan(struct emu_ucontext *ctx);

#endif /* MANA_EMU_KERNEL_PRIV_H */
