/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The device's data types (hardware queues, MRs, ports, the kernel's
 * callbacks) and the raw datapath's building blocks, shared by the
 * device's engines (the raw SQ/RQ walk, the RC transport in rc.c): the
 * CQE writer, the fault-safe user copy, the SGE check against the MRs,
 * and the doorbell actions.  Every function expects emu.lock held and
 * runs in the device thread unless noted.  The device's interface to the
 * rest of the emulator is device.h.
 */
#ifndef MANA_EMU_HWQ_H
#define MANA_EMU_HWQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emulator/core/options.h"
#include "providers/mana/gdma.h"

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
	bool flush_wake;		/* CQ: a QP of it entered ERR: the next arm fires */
	struct wq_cache *cache;		/* SQ/RQ: posted WQEs already read */
	/* SQ/RQ: the last MR an SGE named (cleared when that MR goes) */
	const struct emu_dev_mr *mr_last;
	struct emu_hwq *sq_next;	/* SQ: in the device's work list */
	bool sq_listed;
	/* RQ: frames waiting for a posted WQE (the NIC's receive buffer) */
	struct rx_hold *hold_head, *hold_tail;
	uint32_t hold_frames;
	size_t hold_bytes;
	struct emu_queue_stats st;
};

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
	uint32_t access;		/* IBV_ACCESS_*: remote checks (RC) */
	const struct emu_pd *pd;	/* compared with a queue's PD */
	struct emu_dev_mr *hash_next;
};

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
	/*
	 * --vm on loopback: the VM's other processes' ports, on a virtual
	 * switch of the VM's own; the RNIC's packets go there too
	 */
	struct backend *vm_wire;
	/* frames through lb not yet counted in the backend (cut: sent and
	 * received past the ring) */
	uint64_t lb_tx_frames, lb_tx_bytes, lb_cut_frames, lb_cut_bytes;
	struct emu_port_rx rx;
};

extern struct emu_dev_port emu_ports[MANA_EMU_MAX_PORTS];

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
	/* IB_EVENT_DEVICE_FATAL to every context */
	void (*device_fatal)(void);
	/* the user address of the context's doorbell page (test API) */
	uintptr_t (*db_page)(const struct emu_ucontext *ctx);
};


/*
 * Write CQE number cq->prod of @cq: @cqe (64 bytes, 8-byte aligned) holds
 * the 60 data bytes; the last dword (@wq_num, @is_sq, owner bits) is added
 * here and reaches the ring after the data.  An unwritable ring counts an
 * error on the CQ; an armed CQ raises its completion event.
 */
void emu_cq_post(struct emu_hwq *cq, uint8_t *cqe, uint32_t wq_num,
		 bool is_sq);

/*
 * Copy between device memory (@local) and application memory (@remote),
 * fault-safe: the bytes moved before the first bad address (all of them
 * on success); a bad address is counted (mana_emu_user_faults()).
 */
size_t emu_dev_ucopy(void *local, void *remote, size_t len, bool to_user);

/*
 * The application address an SGE names if it lies inside an MR of the
 * queue's PD (with LOCAL_WRITE when @write), else 0.
 */
uintptr_t emu_hwq_sge_map(struct emu_hwq *q, const struct gdma_sge *sge,
			  bool write);

/* SQ/RQ doorbell: a new tail (bytes, free-running); checked. */
void emu_wq_doorbell(struct emu_hwq *q, uint32_t tail);
/* CQ doorbell: the consumer is @n entries behind the producer. */
void emu_cq_doorbell(struct emu_hwq *cq, uint32_t n, bool arm);

#endif /* MANA_EMU_HWQ_H */
