/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RC engine's own state, shared by its files: rc_engine.c (QPs, doorbells,
 * rounds, timers, statistics), rc_req.c (requester), rc_resp.c
 * (responder), rc_neigh.c (ARP/ND) and rc_core.c (pure transport rules).
 * Everything runs under emu.lock, in the device thread except create,
 * modify and destroy.
 */
#ifndef MANA_EMU_DEVICE_RC_INT_H
#define MANA_EMU_DEVICE_RC_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "providers/mana/gdma.h"
#include "emulator/wire/roce.h"
#include "emulator/wire/roce_rc.h"
#include "rc.h"

#define RC_WINDOW	64	/* send WQEs in flight per QP */
#define RC_MAX_INFLIGHT	256	/* packets sent and not yet acknowledged */
#define RC_BURST	32	/* packets a QP sends per round */
#define RC_ARMS		64	/* pending arm doorbells per QP */
#define RC_ACK_EVERY	64	/* A bit within long messages */
#define RC_MSG_MAX	(16u << 20)	/* max_msg_sz of the port */
#define RC_RD_HIST	16	/* READs remembered (= max_dest_rd_atomic) */

/* One of the QP's user rings (byte positions are free-running). */
struct rc_ring {
	uint32_t id;
	uint64_t buf;
	uint32_t size;
	uint32_t head, tail;
};

/* A send WQE being executed by the requester. */
struct rc_msg {
	uint32_t wqe_pos;		/* SQ position of the WQE */
	uint8_t type;			/* enum mana_wqe_type */
	bool solicited;
	bool signaled;			/* UC: a CQE once sent */
	uint32_t psn, npkts;		/* first PSN, PSNs it takes */
	uint32_t len;
	uint64_t va;
	uint32_t rkey, imm, inv_key;
	uint32_t nsge;
	struct gdma_sge sge[GDMA_MAX_TX_SGE];
	/* READ: the RREQ WQE's buffers, responses placed so far */
	uint32_t rd_nsge;
	struct gdma_sge rd_sge[GDMA_MAX_RX_SGE];
	uint32_t rd_next;		/* next response PSN expected */
	bool rd_reissued;		/* re-requested after a gap */
};

struct rc_stats {
	uint64_t tx_packets, rx_packets, retransmits, rnr_naks_rx,
		 rnr_naks_tx, seq_naks_rx, seq_naks_tx, errors, bad_packets;
};

/* The responder's message in progress (a SEND or WRITE of many packets). */
struct rc_rmsg {
	bool active;
	bool is_send;
	uint32_t off;			/* bytes placed */
	/* SEND: the receive WQE */
	uint32_t wqe_pos, wqe_bu, nsge;
	struct gdma_sge sge[GDMA_MAX_RX_SGE];
	/* WRITE: the rkey is checked again at every packet (dereg fence) */
	uint64_t va;
	uint32_t rkey, dma_len;
};

/* A READ the responder executed: a duplicate must match it (IBA 9.7.5.2.5). */
struct rc_rd_done {
	uint32_t psn, npkts;
	uint64_t va;
	uint32_t rkey, len;
};

struct emu_rc_qp_hw {
	struct emu_rc_qp_hw *next;	/* the engine's list */
	struct emu_rc_qp_hw *hash_next;	/* by qp_num */
	struct emu_ucontext *ctx;
	struct emu_pd *pd;
	struct emu_hwq *send_cq, *recv_cq;
	unsigned int port;
	bool uc;			/* unreliable connected (rc.h) */
	struct rc_ring q[EMU_RC_QUEUES];
	uint32_t qpn;
	enum emu_rc_state state;
	struct emu_rc_attr attr;
	uint32_t mtu;			/* bytes */
	emu_rc_qp_event_fn event_fn;
	void *event_arg;
	/* path */
	uint8_t dmac[6], smac[6];
	uint8_t sgid[16];
	uint16_t sport;

	/* requester */
	struct rc_msg *msgs;		/* RC_WINDOW, a ring */
	uint32_t m_head, m_cnt;		/* oldest unacknowledged, count */
	uint32_t m_cur, pkt_cur;	/* next packet to send: message, index */
	uint32_t next_psn;		/* first PSN of the next new WQE */
	uint32_t una;			/* oldest unacknowledged PSN */
	uint32_t acked;			/* highest PSN acknowledged */
	uint32_t sent_end;		/* one past the highest PSN sent */
	uint32_t msn_seen;		/* the responder's last MSN */
	uint8_t retry_left, rnr_left;
	uint8_t backoff;		/* timer expiries without progress */
	uint64_t timer_ns;		/* 0: none */
	bool rnr_wait;			/* timer_ns is the RNR wait */
	uint32_t arm[RC_ARMS];
	uint32_t n_arm;
	bool listed;			/* in the work list */

	/* responder */
	uint32_t epsn;			/* expected PSN */
	uint32_t msn;
	bool nak_seq_sent;
	struct rc_rmsg r;
	bool ack_due;			/* a coalesced ACK is owed */
	bool sq_quiet;			/* its SQ doorbells wake no one */
	struct rc_rd_done rd_done[RC_RD_HIST];	/* a ring, newest at rd_n - 1 */
	uint32_t rd_n;

	struct rc_stats st;		/* UC: dropped packets in bad_packets */
};

/* ---- rc_engine.c ---- */
struct emu_rc_qp_hw *rc_qp_by_qpn(uint32_t qpn);
uint64_t rc_now_ns(void);
/* Send a packet of @qp (path fields filled in here); counts it. */
void rc_send_pkt(struct emu_rc_qp_hw *qp, struct roce_pkt *p);
/* The QP is broken: ERR, no more CQEs, the kernel is told @event (or -1). */
void rc_qp_fatal(struct emu_rc_qp_hw *qp, int ibv_event);
/* An error CQE; then the QP goes to ERR. */
void rc_error_cqe(struct emu_rc_qp_hw *qp, bool send_side, uint16_t verr,
		  uint32_t psn, uint8_t syndrome, uint8_t opcode);
/* Copy between a list of SGEs (at byte @off of it) and local memory. */
int rc_sgl_copy(struct emu_rc_qp_hw *qp, const struct gdma_sge *sge,
		uint32_t nsge, uint32_t off, uint8_t *buf, uint32_t len,
		bool to_user, unsigned int access);
/* Read and decode the WQE at ring @r's position @pos. */
int rc_wqe_read(const struct rc_ring *r, uint32_t pos, bool sq,
		struct gdma_wqe *w, uint32_t *size_bu);
void rc_schedule(struct emu_rc_qp_hw *qp);

/* ---- rc_req.c ---- */
unsigned int rc_req_work(struct emu_rc_qp_hw *qp);
void rc_req_rx(struct emu_rc_qp_hw *qp, const struct roce_pkt *p);
void rc_req_timer(struct emu_rc_qp_hw *qp);
void rc_req_arm(struct emu_rc_qp_hw *qp, uint32_t psn);
void rc_req_reset(struct emu_rc_qp_hw *qp);
bool rc_req_awaits_ack(struct emu_rc_qp_hw *qp);

/* ---- rc_resp.c ---- */
void rc_resp_rx(struct emu_rc_qp_hw *qp, const struct roce_pkt *p);
/* A UC QP's request packet (IBA 9.7.x for UC: no ACK, a gap drops). */
void uc_resp_rx(struct emu_rc_qp_hw *qp, const struct roce_pkt *p);
void rc_resp_flush_ack(struct emu_rc_qp_hw *qp);

/* ---- rc_neigh.c ---- */
/* An ARP or ND frame: answered if it asks for our address; true if ours. */
bool rc_neigh_rx(unsigned int port, const uint8_t *f, size_t len);
/* The MAC of @gid seen from @port (may wait, dropping emu.lock). */
int rc_neigh_resolve(unsigned int port, const uint8_t sgid[16],
		     const uint8_t dgid[16], uint8_t mac[6]);
/* Without waiting: known already (own, EUI-64, cache)?  Ask the wire. */
bool rc_neigh_lookup(unsigned int port, const uint8_t dgid[16],
		     uint8_t mac[6]);
void rc_neigh_ask(unsigned int port, const uint8_t sgid[16],
		  const uint8_t dgid[16]);

#endif /* MANA_EMU_DEVICE_RC_INT_H */
