/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RNIC's reliable-connected engine, as the emulated mana_ib sees it.
 *
 * The kernel (kernel/rc_qp.c) owns the verbs QP: it checks the create and
 * modify commands as mana_ib and the uverbs core do, then hands the
 * hardware side to the device through this interface.  The device owns
 * the four hardware queues of the QP, the transport (PSNs, ACK/NAK, RNR
 * and retransmission timers, RoCEv2 packets on the port's wire), the
 * requester/responder CQEs and the neighbour (ARP/ND) resolution of the
 * destination GID.  The device reports a QP-fatal condition back through
 * the callback the kernel registers, so it never includes kernel.h.
 *
 * Every function here expects emu.lock held.
 */
#ifndef MANA_EMU_DEVICE_RC_H
#define MANA_EMU_DEVICE_RC_H

#include <stdbool.h>
#include <stdint.h>

struct emu_ucontext;
struct emu_pd;
struct emu_hwq;
struct emu_rc_qp_hw;

/* The four user queues, in mana_ib_create_rc_qp order. */
enum emu_rc_queue {
	EMU_RC_SQ_REQUESTER = 0,
	EMU_RC_SQ_RESPONDER = 1,
	EMU_RC_RQ_REQUESTER = 2,
	EMU_RC_RQ_RESPONDER = 3,
	EMU_RC_QUEUES = 4,
};

struct emu_rc_create_req {
	struct emu_ucontext *ctx;	/* its doorbell page rings the queues */
	struct emu_pd *pd;		/* lkeys of SGEs, rkeys of requests */
	struct emu_hwq *send_cq;	/* RNIC CQs (hardware CQ exists) */
	struct emu_hwq *recv_cq;
	unsigned int port;		/* 1-based; the GID table's port */
	uint64_t buf[EMU_RC_QUEUES];	/* user VAs, already checked pinned */
	uint32_t size[EMU_RC_QUEUES];	/* bytes */
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge;
	bool sq_sig_all;
	/*
	 * Unreliable connected (7.2): the same engine without ACKs: UC
	 * opcodes, a send WQE completes once sent (a UD_SEND CQE on the send
	 * CQ if signaled), a gap in the PSNs drops the message being
	 * received, responder errors drop the message silently.  Uses the
	 * SQ_REQUESTER and RQ_RESPONDER rings; SQ_RESPONDER holds the user's
	 * memory-management queue (never read) and RQ_REQUESTER is empty.
	 */
	bool uc;
};

/* IB QP states, numbered as enum ibv_qp_state. */
enum emu_rc_state {
	EMU_RC_RESET = 0,
	EMU_RC_INIT = 1,
	EMU_RC_RTR = 2,
	EMU_RC_RTS = 3,
	EMU_RC_SQD = 4,
	EMU_RC_SQE = 5,
	EMU_RC_ERR = 6,
};

/*
 * The attributes the device needs, already validated by the kernel (state
 * transition and required/allowed masks).  mask uses IBV_QP_* bit values;
 * fields whose bit is clear keep their previous value.
 */
struct emu_rc_attr {
	enum emu_rc_state state;
	uint32_t access_flags;		/* IBV_ACCESS_REMOTE_* */
	uint8_t path_mtu;		/* enum ibv_mtu: 1 = 256 ... 5 = 4096 */
	uint32_t dest_qp_num;		/* 24 bits */
	uint32_t rq_psn, sq_psn;	/* 24 bits */
	uint8_t max_rd_atomic, max_dest_rd_atomic;
	uint8_t min_rnr_timer;		/* IB encoding, 5 bits */
	uint8_t timeout;		/* 4.096 us * 2^timeout, 0 = infinite */
	uint8_t retry_cnt, rnr_retry;	/* 3 bits; rnr_retry 7 = infinite */
	/* address vector (IBV_QP_AV) */
	uint8_t dgid[16];
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint32_t flow_label;
};

/*
 * Create the hardware QP: four queues with fresh ids whose low two bits
 * are the subtype (send: requester 0, responder 1; receive: responder 0,
 * requester 1).  ids[] is in enum emu_rc_queue order; the QP number is
 * ids[EMU_RC_RQ_RESPONDER].  0 or -errno.
 */
int emu_rc_qp_hw_create(const struct emu_rc_create_req *req,
			struct emu_rc_qp_hw **out, uint32_t ids[EMU_RC_QUEUES]);

/*
 * Apply a modify (SET_QP_STATE): -EPROTO, nothing applied, when the
 * transition, its attributes or their values are not the QP state
 * machine's (lib/qp_modify.h).  Moving to RTR resolves the destination MAC
 * of dgid on the port's wire (may drop and retake emu.lock while it
 * waits); 0 or -errno (-EHOSTUNREACH when nobody answers).  Moving to ERR
 * stops both directions and writes no more CQEs for the QP (the provider
 * flushes its outstanding work requests itself, as rdma-core's does);
 * RESET forgets the queues' contents as the hardware does.
 */
int emu_rc_qp_hw_modify(struct emu_rc_qp_hw *hw, const struct emu_rc_attr *attr,
			uint32_t mask);

/* The current state: the device may have moved the QP to SQE or ERR. */
enum emu_rc_state emu_rc_qp_hw_state(const struct emu_rc_qp_hw *hw);

void emu_rc_qp_hw_destroy(struct emu_rc_qp_hw *hw);

/*
 * The device's QP-fatal report (GDMA_EQE_RNIC_QP_FATAL): the kernel turns
 * it into IBV_EVENT_QP_FATAL (or the more specific QP_REQ_ERR /
 * QP_ACCESS_ERR, numbered as enum ibv_event_type) on the owner's async fd.
 */
typedef void (*emu_rc_qp_event_fn)(void *kernel_qp, int ibv_event_type);
void emu_rc_set_event_handler(struct emu_rc_qp_hw *hw, emu_rc_qp_event_fn fn,
			      void *kernel_qp);

#endif /* MANA_EMU_DEVICE_RC_H */
