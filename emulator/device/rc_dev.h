/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Between the GDMA device (device.c) and its RC engine (rc*.c): the few
 * device services the engine borrows (CQE writer, MR checks, the port's
 * wire, the device thread's wake-up) and the hooks through which the
 * device hands the engine its doorbells, frames, rounds and statistics.
 * Everything here runs under emu.lock.
 */
#ifndef MANA_EMU_DEVICE_RC_DEV_H
#define MANA_EMU_DEVICE_RC_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct emu_hwq;
struct emu_pd;
struct emu_ucontext;

/* ---- device services (device.c) ---- */

/* Write one CQE (60 data bytes in @cqe) to @cq, owner dword added. */
void emu_dev_cq_post(struct emu_hwq *cq, uint8_t *cqe, uint32_t wq_num,
		     bool is_sq);

/* Why an MR check failed. */
enum emu_dev_mr_err {
	EMU_MR_OK = 0,
	EMU_MR_BAD_KEY,		/* no such key, or another PD's */
	EMU_MR_BAD_ACCESS,	/* the MR does not allow it */
	EMU_MR_BAD_RANGE,	/* [addr, addr + len) is not inside the MR */
};

/*
 * The application address of [addr, addr + len) in the MR of @pd named
 * by @key (lkey or rkey: the emulated kernel gives one key to both),
 * which must allow every IBV_ACCESS_* bit of @access (local read is always
 * allowed: @access 0).  len 0 needs no MR (IBA: any key).
 */
enum emu_dev_mr_err emu_dev_mr_map(const struct emu_pd *pd, uint32_t key,
				   uint64_t addr, uint64_t len,
				   unsigned int access, uintptr_t *va);

/*
 * A QP of @cq entered ERR: raise the completion event of an armed CQ
 * (its next CQE would), and answer the next arm with the event at once.
 */
void emu_dev_cq_wake(struct emu_hwq *cq);

/* Send a frame on @port's wire (attached by emu_port_attach()). */
void emu_dev_xmit(unsigned int port, const void *frame, size_t len);

/* The MAC of @port. */
void emu_dev_port_mac(unsigned int port, uint8_t mac[6]);

/* Make the device thread run a round soon (from any thread). */
void emu_dev_kick(void);

/* ---- engine hooks (rc_engine.c) ---- */

/* RC QPs alive: the hooks below are only worth a call when nonzero. */
extern unsigned int emu_rc_nqps;

/*
 * A 64-bit doorbell @value at a @kind of offset rung on @ctx's page: true
 * if it named one of the engine's queues (then it is handled).
 */
bool emu_rc_doorbell(struct emu_ucontext *ctx, unsigned int kind,
		     uint64_t value);

/* A frame received on @port: true if the engine took it (RoCEv2). */
bool emu_rc_rx(unsigned int port, const uint8_t *frame, size_t len);

/* One round: send, retransmit, expire timers, send coalesced ACKs. */
unsigned int emu_rc_work(void);

/*
 * Before the device thread sleeps: how long it may (ms, at most @max_ms);
 * also makes the SQs of requesters that wait for an ACK quiet.
 */
int emu_rc_sleep_ms(int max_ms);

/* Async-signal-safe: does a doorbell of SQ @sq_id wait for the next round? */
bool emu_rc_sq_quiet(uint32_t sq_id);

/* --stats lines ("rcqp ..."), each handed to @out. */
typedef void (*emu_rc_line_fn)(void *arg, const char *line);
void emu_rc_stats(emu_rc_line_fn out, void *arg);

#endif /* MANA_EMU_DEVICE_RC_DEV_H */
