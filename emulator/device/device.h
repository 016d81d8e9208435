/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The GDMA device model: hardware queues (SQ, RQ, CQ) living in
 * application memory, and the device thread that executes doorbells.
 *
 * The emulated kernel creates and destroys hardware queues with the verbs
 * objects that own them, registers MRs (emu_dev_mr_add) and programs the
 * ports' RX steering (emu_port_rx_program); what the device needs back
 * from it (contexts, completion and error events) goes through the
 * callbacks it registers (emu_device_set_ops), so the device never
 * includes the kernel's headers.  The device thread consumes doorbell
 * stores trapped on the contexts' doorbell pages (trap.h) in order, walks
 * the queues, moves frames through the ports' wire backends (backend.h)
 * and writes CQEs.  Both run under emu.lock, so a queue is never
 * destroyed while the device is inside it; the thread never holds the
 * lock while it sleeps.  Every function here expects emu.lock held unless
 * noted.  The datapath helpers other engines of the device (device/rc.c)
 * share are in hwq.h.
 */
#ifndef MANA_EMU_DEVICE_H
#define MANA_EMU_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hwq.h"

struct emu_hwq_req {
	enum emu_hwq_type type;
	struct emu_ucontext *ctx;
	uint64_t buf;
	uint32_t size;
	uint32_t port;
	struct emu_pd *pd;
	struct emu_hwq *cq;
	struct emu_cq *ucq;
	uint32_t count;
	uint32_t tx_vp_offset;
};

/* A hardware queue with a fresh id; starts the device thread. NULL: errno. */
struct emu_hwq *emu_hwq_create(const struct emu_hwq_req *req);
void emu_hwq_destroy(struct emu_hwq *q);
struct emu_hwq *emu_hwq_find(enum emu_hwq_type type, uint32_t id);

/* Open @port's wire backend if needed: 0 or -errno (message on stderr). */
int emu_port_attach(unsigned int port);
/*
 * --vm: @port's wire, joined now -- also the switch port a forked child
 * takes of its own, which emu_port_attach() leaves to the device's start.
 */
int emu_port_join(unsigned int port);

/* The kernel registers an MR (struct emu_dev_mr, hwq.h) / it goes. */
void emu_dev_mr_add(struct emu_dev_mr *mr);
void emu_dev_mr_del(struct emu_dev_mr *mr);
/* Is @key (lkey == rkey) some registered MR's? */
bool emu_dev_mr_key_used(uint32_t key);

/*
 * Device memory (GDMA_ALLOC_DM / GDMA_DESTROY_DM): @len bytes of the
 * adapter's own memory, zeroed, which only MRs (type DM) reach; NULL when
 * the request does not fit (@len 0, more than is left of
 * EMU_DM_CAPACITY, alignment above a page: the adapter's limits are not
 * public, these are ours).
 */
#define EMU_DM_CAPACITY (4u << 20)
/*
 * The emulated SKU's speed, which MANA_QUERY_LINK_CONFIG answers (its
 * qos_speed_mbps): what mana's ethtool reports from 6.17 on.
 */
#define EMU_DEV_SKU_SPEED_MBPS 100000u
void *emu_dev_dm_alloc(uint64_t len, uint32_t log_align);
void emu_dev_dm_free(void *mem, uint64_t len);

/* Program (@rx->programmed set) or clear (NULL) the steering of @port. */
void emu_port_rx_program(unsigned int port, const struct emu_port_rx *rx);

/* The kernel's callbacks (struct emu_device_ops, hwq.h), before any queue. */
void emu_device_set_ops(const struct emu_device_ops *ops);

/* Every context is gone: the device thread may stop (restarts on demand). */
void emu_device_idle(void);
/* The doorbell trap was just installed: the device thread waits on it too. */
void emu_device_trap_ready(void);

/*
 * Process exit (no lock held): stop the device thread, dump the statistics
 * (MANA_EMU_STATS / --stats), close the backends.
 */
void emu_device_shutdown(void);
/* A fatal signal ends the process: dump the statistics now (once). */
void emu_device_dump_on_signal(void);
/* In a forked child: the device thread did not come along. */
void emu_device_fork_child(void);

#endif /* MANA_EMU_DEVICE_H */
