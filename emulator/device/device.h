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

#include "emulator/core/options.h"

struct emu_ucontext;
struct emu_pd;
struct emu_cq;
struct rx_hold;
struct wq_cache;
struct backend;
struct backend_lb;
struct emu_dev_mr;

enum emu_hwq_type {
	EMU_HWQ_SQ = 1,		/* = MANA_EMU_QUEUE_SQ */
	EMU_HWQ_RQ = 2,
	EMU_HWQ_CQ = 3,
};

struct emu_queue_stats {
	uint64_t frames, bytes, drops, errors;
};

struct emu_hwq {
	enum emu_hwq_type type;
	uint32_t id;
	struct emu_hwq *hash_next;
	struct emu_ucontext *ctx;	/* owner: its doorbell page rings us */
	uint64_t buf;			/* user VA of the ring */
	uint32_t size;			/* bytes (CQ: entries * 64) */
	uint32_t port;
	struct emu_pd *pd;		/* SQ/RQ: the PD whose MRs SGEs name */
	struct emu_hwq *cq;		/* SQ/RQ: where completions go */
	struct emu_cq *ucq;		/* CQ: the verbs CQ (channel, handle) */
	uint32_t count;			/* CQ: entries */
	uint32_t tx_vp_offset;		/* SQ */
	/* device state */
	uint32_t head, tail;		/* SQ/RQ: consumed / rung, in bytes */
	uint32_t prod;			/* CQ: producer index, starts at count */
	uint32_t cons;			/* CQ: consumer index, last rung */
	uint32_t lost_upto;		/* CQ: overflow counted up to here */
	bool armed;			/* CQ: next CQE raises a completion event */
	struct wq_cache *cache;		/* SQ/RQ: posted WQEs already read */
	const struct emu_dev_mr *mr_last;	/* SQ/RQ: the last MR an SGE named */
	uint64_t mr_gen;		/* ... valid while no MR went since */
	struct emu_hwq *sq_next;	/* SQ: in the device's work list */
	bool sq_listed;
	/* RQ: frames waiting for a posted WQE (the NIC's receive buffer) */
	struct rx_hold *hold_head, *hold_tail;
	uint32_t hold_frames;
	size_t hold_bytes;
	struct emu_queue_stats st;
};

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
 * A registered memory region as the device checks SGEs against it: the
 * kernel fills one per MR (lkey, the PD it belongs to, its range and
 * whether the device may write it), adds it at registration and deletes
 * it before the MR goes.  The device keeps it in its lkey table.
 */
struct emu_dev_mr {
	uint64_t start, iova, length;
	uint32_t lkey;
	bool writable;			/* IBV_ACCESS_LOCAL_WRITE */
	const struct emu_pd *pd;	/* compared with a queue's PD */
	struct emu_dev_mr *hash_next;
};

void emu_dev_mr_add(struct emu_dev_mr *mr);
void emu_dev_mr_del(struct emu_dev_mr *mr);

#define EMU_RSS_INDIR 64		/* MANA_INDIRECT_TABLE_DEF_SIZE */
#define EMU_RSS_KEY_LEN 40

/* A port's RX steering as CONFIG_VPORT_RX programs it. */
struct emu_port_rx {
	bool programmed;		/* an RSS QP steers the port */
	bool rss_enabled;		/* hash (else everything to default_rq) */
	uint32_t num_entries;		/* size of the user's table */
	struct emu_hwq *indir[EMU_RSS_INDIR];
	struct emu_hwq *default_rq;
	uint8_t key[EMU_RSS_KEY_LEN];
	uint64_t fields_mask;		/* the QP's, for --rss-hash=mask */
};

/* A port as the device sees it. */
struct emu_dev_port {
	struct backend *backend;	/* opened with the first queue, kept */
	struct backend_lb *lb;		/* its inline ring (loopback), or NULL */
	/* frames through lb not yet counted in the backend */
	uint64_t lb_tx_frames, lb_tx_bytes;
	struct emu_port_rx rx;
};

extern struct emu_dev_port emu_ports[MANA_EMU_MAX_PORTS];

/* Program (@rx->programmed set) or clear (NULL) the steering of @port. */
void emu_port_rx_program(unsigned int port, const struct emu_port_rx *rx);

/*
 * What the device needs of the emulated kernel, registered by it before
 * the first queue; every callback is called with emu.lock held.
 */
struct emu_device_ops {
	/* the live context whose doorbell page has this trap cookie */
	struct emu_ucontext *(*ucontext_find)(uint64_t serial);
	unsigned int (*ucontext_count)(void);
	/* the completion event of an armed verbs CQ */
	void (*cq_event)(struct emu_cq *ucq);
	/* IB_EVENT_CQ_ERR: completions of @ucq were overwritten unread */
	void (*cq_error)(struct emu_ucontext *ctx, struct emu_cq *ucq);
	/* IB_EVENT_DEVICE_FATAL to every context */
	void (*device_fatal)(void);
	/* the user address of the context's doorbell page (test API) */
	uintptr_t (*db_page)(const struct emu_ucontext *ctx);
};

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
