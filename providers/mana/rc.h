/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reliable-connected QPs on the MANA RNIC: what rc_qp.c (create, modify,
 * query, destroy), rc_send.c (post_send, post_recv, ibv_wr_*) and
 * rc_poll.c (poll_cq and the extended CQ of RNIC CQs) share.
 *
 * The raw packet datapath never sees any of this: the verbs entry points
 * test the QP type (or the CQ's rc flag) once, at the top, and hand RC
 * objects over here.
 *
 * An RC QP is four hardware queues (enum mana_ib_rc_user_queue).  The
 * provider keeps a shadow record per outstanding WR: the hardware reports
 * requester progress only as "acknowledged up to PSN x" (ARMED_CMPL CQEs
 * that the provider asks for through the arm doorbell) and responder
 * progress per consumed receive WQE.
 */
#ifndef MANA_RC_H
#define MANA_RC_H

#include <string.h>

#include "datapath.h"

#define MANA_RC_PSN_MASK	0xFFFFFFu
#define MANA_RC_ROLLBACK_SIZE	16u
#define MANA_RC_ROLLBACK_SIG	0x4B424C52u	/* "RLBK" */

/*
 * The 16 bytes after the SQ ring (rdma-core's layout): the provider keeps
 * the window of WQEs in flight in them; the device does not read them.
 */
struct mana_rc_rollback {
	uint32_t signature;
	uint32_t size;
	_Atomic uint32_t left;		/* consumed, bytes, free-running */
	_Atomic uint32_t right;		/* posted, bytes, free-running */
};

struct mana_rc_queue {
	struct mana_buf buf;
	uint32_t id;
	uint32_t ring_size;		/* bytes, a power of two */
	uint32_t prod_bu;		/* free-running, poster's */
	uint32_t cons_bu;		/* free-running, poller's */
};

/* A send WR in flight. */
struct mana_rc_swr {
	uint64_t wr_id;
	uint32_t end_psn;		/* its last PSN */
	uint32_t byte_len;
	uint16_t size_bu;		/* SQ WQE */
	uint16_t rreq_bu;		/* RREQ WQE of a READ, else 0 */
	uint8_t opcode;			/* enum ibv_wc_opcode */
	bool signaled;
	uint8_t inline_slot;		/* data copied to the bounce slot */
};

/* A receive WR in flight. */
struct mana_rc_rwr {
	uint64_t wr_id;
	uint32_t start_bu;		/* free-running unit where it starts */
	uint32_t size_bu;
};

struct mana_rc_qp {
	struct mana_qp qp;		/* kind MANA_QP_RC; vqp inside */
	struct mana_rc_queue q[MANA_RC_QUEUE_COUNT];
	struct mana_rc_rollback *rollback;
	struct mana_cq *send_cq, *recv_cq;
	struct mana_rc_qp *send_next, *recv_next;	/* the CQs' lists */
	void *db_page;
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge;
	uint32_t max_inline_data;
	struct ibv_qp_cap cap;		/* as granted */
	uint8_t sq_sig_all;
	/*
	 * Unreliable connected (mana_rc(7), kernel 7.2): the same rings and
	 * datapath without ACKs -- three queues (no receive requester; the
	 * send responder slot holds the memory-management queue), no arm
	 * doorbell, a UD_SEND CQE per signaled WR once it is sent, no READ.
	 */
	bool uc;

	/*
	 * Send side, under sq_lock: posters, and the poller when it retires
	 * (sq_tail is then stored with release, read by posters with acquire).
	 */
	struct mana_spinlock sq_lock;
	struct mana_rc_swr *swr;
	uint32_t swr_mask;
	uint32_t sq_head, sq_tail;	/* WRs, free-running */
	uint32_t sq_psn;		/* next PSN to use */
	uint32_t ssn;			/* next send sequence number */
	uint32_t mtu;			/* path MTU, bytes */
	uint8_t path_mtu;		/* enum ibv_mtu */
	bool armed;			/* an ARMED_CMPL is asked for */
	uint8_t *inline_buf;		/* max_send_wr slots of inline_stride */
	uint32_t inline_stride;
	struct verbs_mr inline_mr;
	/* attributes the datapath reports (dest_qp_num: the WCs' src_qp) */
	struct ibv_qp_attr attr;

	/* receive side, under rq_lock (posters) / recv CQ lock (poller) */
	struct mana_spinlock rq_lock;
	struct mana_rc_rwr *rwr;
	uint32_t rwr_mask;
	uint32_t rq_head, rq_tail;

	/* completion state, under the send CQ's lock */
	uint32_t acked_psn;		/* highest PSN acknowledged */
	bool sq_err;			/* an error CQE names sq_err_psn */
	uint32_t sq_err_psn, sq_err_vendor;
	/* under the recv CQ's lock */
	bool rq_err;
	uint32_t rq_err_vendor;
	/* QP in ERR: every outstanding WR completes as flushed, once */
	atomic_bool flushing;

	/*
	 * ibv_wr_* between wr_start and wr_complete, sq_lock held: WQEs are
	 * written at the producer as the WRs come and published (or the
	 * producer, PSN and SSN rolled back) by wr_complete (wr_abort).
	 */
	bool wr_open;			/* between wr_start and the end */
	bool wr_ok;			/* open, no error yet */
	bool wr_pending;		/* an opcode given, its data not yet */
	bool wr_arm;
	int wr_err;
	uint32_t wr_head;		/* WRs written, free-running */
	uint32_t wr_arm_psn;
	uint32_t wr_prod_bu, wr_rreq_prod_bu, wr_psn, wr_ssn;	/* at wr_start */
	struct {
		uint64_t wr_id, remote_addr;
		uint32_t flags, rkey;
		__be32 imm;
		uint8_t opcode;		/* enum ibv_wr_opcode */
	} wr_cur;			/* the pending WR */
};

static inline struct mana_rc_qp *to_mrcqp(struct ibv_qp *qp)
{
	return container_of(to_mqp(qp), struct mana_rc_qp, qp);
}

/* An RNIC QP (RC or UC): rc_*.c serve it. */
static inline bool mana_qp_type_rnic(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC || t == IBV_QPT_UC;
}

static inline uint32_t mana_rc_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & MANA_RC_PSN_MASK;
}

/* Is @a at or before @b in 24-bit PSN order? */
static inline bool mana_rc_psn_le(uint32_t a, uint32_t b)
{
	return ((b - a) & MANA_RC_PSN_MASK) < 0x800000u;
}

static inline uint32_t mana_rc_mtu_bytes(uint8_t path_mtu)
{
	return path_mtu >= IBV_MTU_256 && path_mtu <= IBV_MTU_4096 ?
	       1u << (path_mtu + 7) : 1024u;
}

/* rc_qp.c */
struct ibv_qp *mana_rc_create_qp(struct mana_context *ctx,
				 struct ibv_qp_init_attr_ex *attr);
int mana_rc_destroy_qp(struct ibv_qp *qp);
int mana_rc_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask);
int mana_rc_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		     int attr_mask, struct ibv_qp_init_attr *init_attr);
/* the QP went to ERR (device error or user): flush from now on */
void mana_rc_qp_to_err(struct mana_rc_qp *qp);
/* poll.c: arm a CQ the application armed before, after a QP's ERR */
void mana_cq_rearm_for_flush(struct mana_cq *cq);
/*
 * @e as a send WR taken in ERR: no WQE (size_bu 0, which the poller reads
 * as never sent, so never acknowledged) and the next unsent PSN; the
 * poller completes it with IBV_WC_WR_FLUSH_ERR after the QP's earlier WRs.
 */
static inline void mana_rc_swr_flushed(const struct mana_rc_qp *qp,
				       struct mana_rc_swr *e, uint64_t wr_id,
				       uint8_t opcode)
{
	memset(e, 0, sizeof(*e));
	e->wr_id = wr_id;
	e->opcode = opcode;
	e->end_psn = qp->sq_psn;
}

/* post_send in ERR, sq_lock held: the WRs complete as flushed */
int mana_rc_post_flushed(struct mana_rc_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);

/* rc_send.c */
int mana_rc_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);
int mana_rc_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);
void mana_rc_init_ex_ops(struct mana_rc_qp *qp);
void mana_rc_ring_arm(struct mana_rc_qp *qp, uint32_t psn);
int mana_rc_sq_init(struct mana_context *ctx, struct mana_rc_qp *qp,
		    struct mana_pd *pd);
void mana_rc_sq_fini(struct mana_rc_qp *qp);

/* rc_poll.c */
int mana_rc_poll_cq(struct mana_cq *cq, int num_entries, struct ibv_wc *wc);
void mana_rc_cq_init_ex_ops(struct mana_cq *cq);

#endif /* MANA_RC_H */
