/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Inside the device model only (device.c, cq.c, umem.c, tx.c, rx.c,
 * stats.c): the device's state and the datapath helpers the engines
 * inline.  Other layers use device.h; other engines hwq.h.
 */
#ifndef MANA_EMU_DEVICE_INT_H
#define MANA_EMU_DEVICE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "frame.h"
#include "hwq.h"
#include "trap.h"
#include "emulator/core/emu.h"
#include "emulator/wire/backend.h"
#include "providers/mana/gdma.h"

#define HWQ_HASH_SIZE 256
#define HWQ_TYPES 3
#define EVENT_BATCH 4096	/* doorbells latched per round */
#define SQ_SLICE 32		/* WQEs an SQ sends per round */
#define RXQ_MAX 4096		/* frames queued by backend threads */
#define SLEEP_MS 200
#define FRAME_MAX (BACKEND_MAX_FRAME + EMU_VLAN_HLEN)
#define ETH_MIN_LEN EMU_ETH_HLEN
#define RETIRED_MAX 65536	/* destroyed queues kept for the stats dump */

struct rx_frame;

struct retired {
	enum emu_hwq_type type;
	uint32_t id;
	struct emu_queue_stats st;
};

/* RX completions being packed into one CQE_RX_COALESCED_4 */
struct coalesce {
	struct emu_hwq *rq;
	struct mana_rx_comp_oob oob;
	unsigned int n;
};

/* The device's state, under emu.lock unless marked. */
struct device_state {
	struct emu_hwq *hash[HWQ_TYPES + 1][HWQ_HASH_SIZE];
	uint32_t next_id[HWQ_TYPES + 1];
	/* thread: state under emu.lock */
	bool running, stop_req, shutdown;
	bool used;			/* this process had hardware queues */
	pthread_cond_t stopped;
	bool sigusr2_done;		/* SIGUSR2 handler looked at */
	/* a forked child of a VM: ports to join the VM's switch anew */
	uint32_t vm_wire_reopen;
	_Atomic int fatal_req;		/* SIGUSR2 */
	bool fatal, fatal_after_done;
	unsigned int fatal_count;	/* device fatals raised, for --stats */
	uint64_t tx_total, cqe_total;
	/* backend threads -> device thread, per port */
	pthread_mutex_t rxq_lock;
	struct rx_frame *rxq_head[MANA_EMU_MAX_PORTS];
	struct rx_frame *rxq_tail[MANA_EMU_MAX_PORTS];
	_Atomic unsigned int rxq_len[MANA_EMU_MAX_PORTS];
	/* RQs holding frames for want of WQEs: RQ doorbells wake us */
	_Atomic unsigned int rqs_holding;
	/* RQs of the port whose receive buffer (--rx-hold) is full */
	unsigned int port_holds_full[MANA_EMU_MAX_PORTS];
	bool sq_blocked;		/* an SQ waits for its wire's room */
	/* device-wide counters */
	uint64_t doorbells, bad_doorbells, foreign_doorbells;
	uint64_t cq_overruns;		/* CQ overruns seen at a doorbell */
	uint64_t port_unsteered[MANA_EMU_MAX_PORTS];
	uint64_t port_rxq_drops[MANA_EMU_MAX_PORTS];
	bool foreign_logged, bad_logged;
	struct retired *retired;
	size_t nretired, retired_cap;
	struct coalesce coal[16];
	unsigned int ncoal;
	struct emu_hwq *sq_head, *sq_tail;	/* SQs with work */
	/* rounds that found nothing to do, for mana_emu_quiesce() */
	uint64_t idle_rounds;
	pthread_cond_t idle;
	_Atomic uint64_t sleep_syscalls;	/* futex waits */
	/* user copies go straight to mana_emu_ucopy() (the fixup is in place) */
	bool ucopy_direct;
	_Atomic uint64_t ucopy_faults;	/* bad addresses met by those */
	const struct emu_device_ops *ops;
	int gsi_sleep_ms;		/* the GSI consumer's next timer */
};

extern struct device_state devst;

/* device.c */
void dev_wake(void);
void dev_fatal(const char *why);
unsigned int dev_poll_backend(unsigned int port);
void dev_stop(void);
void dev_mr_forget(const struct emu_dev_mr *mr);
/* QP1 opens: @port's wire attached, the device thread running */
int dev_gsi_start(unsigned int port);
/* cq.c */
void dev_cq_notify(struct emu_hwq *cq);
/* umem.c */
int dev_wq_cache_fill(struct emu_hwq *q);
const struct emu_dev_mr *dev_mr_lookup(struct emu_hwq *q, uint32_t lkey);
/* The MR with this key (lkey == rkey), whatever its PD; NULL if none. */
const struct emu_dev_mr *dev_mr_find(uint32_t key);
/* tx.c */
void dev_sq_schedule(struct emu_hwq *sq);
void dev_sq_unschedule(struct emu_hwq *sq);
unsigned int dev_run_sqs(void);
/* rx.c */
void dev_rx_frame(unsigned int port, const uint8_t *f, size_t len);
void dev_coalesce_flush(struct coalesce *c);
void dev_rx_hold_flush(struct emu_hwq *rq);
void dev_rx_release_held(struct emu_hwq *rq);

/*
 * Fault-safe copies to and from application memory.  Once the doorbell
 * trap's fixup hook is in place (trap_fixup_ready()), the string-move
 * routine of host/emu.c is called directly: a bad address makes it return
 * the bytes not copied instead of crashing.  Before that (no doorbell page
 * mapped yet) emu_copy_user_one() takes the slow, system-call path.
 */
size_t mana_emu_ucopy(void *dst, const void *src, size_t len);
/* A 64-byte CQE, eight ordered 8-byte stores (core/user_copy.c): 0 or fault. */
size_t mana_emu_ucqe(void *dst, const void *src);
/* The same with words 3-6 zero and the others in registers. */
size_t mana_emu_ucqe4(void *dst, uint64_t w0, uint64_t w1, uint64_t w2,
		      uint64_t w7);

static inline __attribute__((always_inline)) size_t
ucopy(void *local, void *remote, size_t len, bool to_user)
{
	size_t left;

#ifdef MANA_EMU_FUZZ
	/* the harness's user-arena check is inside emu_copy_user_one() */
	return emu_copy_user_one(local, remote, len, to_user);
#endif
	if (__builtin_expect(!devst.ucopy_direct, 0)) {
		left = len - emu_copy_user_one(local, remote, len, to_user);
		devst.ucopy_direct = trap_fixup_ready();
		return len - left;
	}
	left = to_user ? mana_emu_ucopy(remote, local, len) :
			 mana_emu_ucopy(local, remote, len);
	if (__builtin_expect(left != 0, 0)) {
		devst.ucopy_faults++;
		return len - left;
	}
	/* len itself, so that the caller's "!= len" folds away */
	return len;
}

/*
 * Store a whole CQE at @slot, the 8 bytes holding the owner bits after
 * the rest: one call of ordered 8-byte stores once copies are direct,
 * else the data and then the owner word through ucopy().
 */
static inline __attribute__((always_inline)) bool
cqe_store(uint8_t *slot, uint8_t *cqe)
{
#ifndef MANA_EMU_FUZZ
	if (__builtin_expect(devst.ucopy_direct, 1)) {
		if (__builtin_expect(mana_emu_ucqe(slot, cqe) != 0, 0)) {
			devst.ucopy_faults++;
			return false;
		}
		return true;
	}
#endif
	return ucopy(cqe, slot, GDMA_CQE_SIZE - 8, true) == GDMA_CQE_SIZE - 8 &&
	       ucopy(cqe + GDMA_CQE_SIZE - 8, slot + GDMA_CQE_SIZE - 8, 8,
		     true) == 8;
}

/*
 * WQEs are read from the ring in chunks: posted WQEs do not change until
 * they complete, so the bytes between the device head and the doorbell
 * tail may be read once and decoded in place from the copy.
 */
#define WQ_CACHE_SIZE 8192

struct wq_cache {
	uint32_t start, len;		/* ring offsets (free-running) held */
	struct gdma_wqe_view v;		/* the last good header */
	/* SQ: the last TX OOB that passed tx_check_oob(), raw and decoded */
	uint32_t oob_size;		/* 0: none */
	uint64_t oob_raw[GDMA_OOB_XLARGE / 8];
	struct mana_tx_oob oob;
	bool oob_offload;		/* oob asks for checksums or a tag */
	uint8_t data[WQ_CACHE_SIZE] __attribute__((aligned(8)));
};

/*
 * The WQE at the device head, decoded in place in the queue's cache
 * (never past the doorbell tail): its bytes, or NULL if it cannot be read
 * or is bad (then there is no size to skip it by).
 */
static inline __attribute__((always_inline)) const uint8_t *
wqe_head(struct emu_hwq *q, enum gdma_queue_type qt)
{
	uint32_t max = qt == GDMA_SQ ? GDMA_MAX_SQE_SIZE : GDMA_MAX_RQE_SIZE;
	uint32_t need = q->tail - q->head < max ? q->tail - q->head : max;
	struct wq_cache *c = q->cache;
	const uint8_t *p;
	uint32_t at;

	if (__builtin_expect(!c, 0)) {
		c = q->cache = calloc(1, sizeof(*c));
		if (!c)
			return NULL;
	}
	at = q->head - c->start;
	if (at >= c->len || c->len - at < need) {
		if (dev_wq_cache_fill(q))
			return NULL;
		at = 0;
	}
	p = c->data + at;
	return gdma_wqe_view_decode(p, need, qt, &c->v) ? NULL : p;
}

/*
 * The application address an SGE names: a key of an MR of the queue's PD
 * whose [iova, iova + length) holds the range, with write access if the
 * device writes there (local read is always allowed).  0 if not.  Most
 * SGEs of a queue name the MR the previous one named.
 */
static inline uintptr_t sge_map(struct emu_hwq *q, const struct gdma_sge *sge,
				bool write)
{
	const struct emu_dev_mr *mr = q->mr_last;
	uint64_t end = sge->addr + sge->size;

	if (__builtin_expect(!mr || mr->lkey != sge->mkey, 0)) {
		mr = dev_mr_lookup(q, sge->mkey);
		if (!mr)
			return 0;
	}
	if (write && !mr->writable)
		return 0;
	if (end < sge->addr || sge->addr < mr->iova ||
	    end > mr->iova + mr->length)
		return 0;
	return (uintptr_t)(mr->start + (sge->addr - mr->iova));
}

/*
 * Where CQE number cq->prod goes and its last dword (wq_num, is_sq, owner
 * bits), or NULL if it is not written (--fault=drop-cqe, a bad id).
 */
static inline __attribute__((always_inline)) uint8_t *
cq_slot(struct emu_hwq *cq, uint32_t wq_num, bool is_sq, uint32_t *last)
{
	/* gdma_owner_expected() and gdma_queue_slot() with one division */
	uint32_t n = cq->count, lap = n ? cq->prod / n : 0;
	uint32_t owner = lap & GDMA_OWNER_MASK;
	uint32_t idx = n ? cq->prod - lap * n : 0;

	if (__builtin_expect(emu.opts.fault_drop_cqe != 0, 0) &&
	    ++devst.cqe_total == emu.opts.fault_drop_cqe) {
		cq->st.drops++;		/* --fault=drop-cqe: lost for good */
		return NULL;
	}
	/* gdma_cqe_encode()'s checks */
	if (wq_num > GDMA_QUEUE_ID_MAX || owner > GDMA_OWNER_MASK)
		return NULL;
	*last = wq_num | (uint32_t)is_sq << 24 | owner << 29;
	return (uint8_t *)(uintptr_t)cq->buf + (size_t)idx * GDMA_CQE_SIZE;
}

/* The CQE at cq_slot() was stored (@ok) or faulted: account, notify. */
static inline __attribute__((always_inline)) void
cq_posted(struct emu_hwq *cq, bool ok)
{
	if (!ok) {
		cq->st.errors++;
		return;
	}
	/*
	 * Written whatever the consumer did: the device knows the consumer
	 * index only from CQ doorbells, which DPDK never rings (emu_cq_doorbell
	 * judges overruns).
	 */
	cq->prod++;
	cq->st.frames++;
	if (cq->armed) {
		cq->armed = false;
		dev_cq_notify(cq);
	}
}

/*
 * Write CQE number cq->prod: @cqe holds the 60 data bytes, encoded in
 * place by the caller; the last dword (wq_num, is_sq, owner bits) is
 * added here.  Stored in order, as hardware writes: bytes 0-55, then the
 * 8 bytes that hold the owner bits (cqe_store()).
 */
static inline __attribute__((always_inline)) void
cq_post(struct emu_hwq *cq, uint8_t *cqe, uint32_t wq_num, bool is_sq)
{
	uint32_t last;
	uint8_t *slot = cq_slot(cq, wq_num, is_sq, &last);

	if (!slot)
		return;
	gdma_put_le32(cqe + GDMA_CQE_DATA_SIZE, last);
	atomic_thread_fence(memory_order_release);
	cq_posted(cq, cqe_store(slot, cqe));
}

/*
 * cq_post() of a CQE whose data words 3-6 are zero, from its words 0-2
 * and the dword at byte 56 (little-endian values): stored from registers
 * (mana_emu_ucqe4) once copies are direct.
 */
static inline __attribute__((always_inline)) void
cq_post4(struct emu_hwq *cq, uint64_t w0, uint64_t w1, uint64_t w2,
	 uint32_t dw14, uint32_t wq_num, bool is_sq)
{
	uint8_t cqe[GDMA_CQE_SIZE] __attribute__((aligned(8)));
	uint32_t last;
	uint8_t *slot = cq_slot(cq, wq_num, is_sq, &last);

	if (!slot)
		return;
	atomic_thread_fence(memory_order_release);
#if !defined(MANA_EMU_FUZZ) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (__builtin_expect(devst.ucopy_direct, 1)) {
		bool ok = mana_emu_ucqe4(slot, w0, w1, w2,
				    dw14 | (uint64_t)last << 32) == 0;
		if (__builtin_expect(!ok, 0))
			devst.ucopy_faults++;
		cq_posted(cq, ok);
		return;
	}
#endif
	gdma_put_le64(cqe, w0);
	gdma_put_le64(cqe + 8, w1);
	gdma_put_le64(cqe + 16, w2);
	memset(cqe + 24, 0, 32);
	gdma_put_le32(cqe + 56, dw14);
	gdma_put_le32(cqe + GDMA_CQE_DATA_SIZE, last);
	cq_posted(cq, cqe_store(slot, cqe));
}

#endif /* MANA_EMU_DEVICE_INT_H */
