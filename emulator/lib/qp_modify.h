/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the emulated MANA device (device/rc_engine.c) and mana-vfio
 * (vfio/mana_fn.c) answer to MANA_IB_SET_QP_STATE: the IB spec's QP state
 * machine, as the Linux core's ib_modify_qp_is_ok() encodes it for RC and
 * UC -- transitions that exist, the attributes each requires and those it
 * allows -- and the attribute values a QP can take.
 *
 * mana_ib checks none of this (6.12 and the newest: no
 * ib_modify_qp_is_ok() call, the uverbs core checks ports and the AV
 * only), so the hardware is what answers an invalid transition.  What it
 * answers is not known: both device models refuse one (a GDMA status the
 * kernel returns as EPROTO), the same way, so mana-emu and a guest on
 * mana-vfio agree.  The open question is in README's fidelity notes.
 *
 * Header only: mana-vfio reaches emulator/lib/ and links none of it.
 */
#ifndef MANA_EMU_LIB_QP_MODIFY_H
#define MANA_EMU_LIB_QP_MODIFY_H

#include <stdbool.h>
#include <stdint.h>

/* enum ib_qp_attr_mask (= enum ibv_qp_attr_mask) */
enum {
	QPM_STATE = 1u << 0,
	QPM_CUR_STATE = 1u << 1,
	QPM_EN_SQD_ASYNC_NOTIFY = 1u << 2,
	QPM_ACCESS_FLAGS = 1u << 3,
	QPM_PKEY_INDEX = 1u << 4,
	QPM_PORT = 1u << 5,
	QPM_QKEY = 1u << 6,
	QPM_AV = 1u << 7,
	QPM_PATH_MTU = 1u << 8,
	QPM_TIMEOUT = 1u << 9,
	QPM_RETRY_CNT = 1u << 10,
	QPM_RNR_RETRY = 1u << 11,
	QPM_RQ_PSN = 1u << 12,
	QPM_MAX_QP_RD_ATOMIC = 1u << 13,
	QPM_ALT_PATH = 1u << 14,
	QPM_MIN_RNR_TIMER = 1u << 15,
	QPM_SQ_PSN = 1u << 16,
	QPM_MAX_DEST_RD_ATOMIC = 1u << 17,
	QPM_PATH_MIG_STATE = 1u << 18,
	QPM_DEST_QPN = 1u << 20,
};

/* enum ib_qp_state */
enum { QPS_RESET, QPS_INIT, QPS_RTR, QPS_RTS, QPS_SQD, QPS_SQE, QPS_ERR };

#define QPM_RC_PATH_OPT (QPM_ALT_PATH | QPM_ACCESS_FLAGS |                     \
			 QPM_MIN_RNR_TIMER | QPM_PATH_MIG_STATE)
#define QPM_UC_PATH_OPT (QPM_ALT_PATH | QPM_ACCESS_FLAGS | QPM_PATH_MIG_STATE)

struct qp_transition {
	bool valid;
	uint32_t req, opt;
};

/*
 * The transition cur -> next of an RC (or UC) QP with attributes @mask
 * (QPM_STATE included or not): a transition the spec has, every attribute
 * it requires, none it does not allow.
 */
static inline bool qp_transition_ok(bool uc, unsigned int cur,
				    unsigned int next, uint32_t mask)
{
	/* [cur][next]; UC: RC's without acknowledgement and READ attributes */
	static const struct qp_transition rc[QPS_ERR + 1][QPS_ERR + 1] = {
		[QPS_RESET] = {
			[QPS_RESET] = { true, 0, 0 },
			[QPS_INIT] = { true, QPM_PKEY_INDEX | QPM_PORT |
					     QPM_ACCESS_FLAGS, 0 },
		},
		[QPS_INIT] = {
			[QPS_RESET] = { true, 0, 0 },
			[QPS_ERR] = { true, 0, 0 },
			[QPS_INIT] = { true, 0, QPM_PKEY_INDEX | QPM_PORT |
						QPM_ACCESS_FLAGS },
			[QPS_RTR] = { true, QPM_AV | QPM_PATH_MTU |
					    QPM_DEST_QPN | QPM_RQ_PSN |
					    QPM_MAX_DEST_RD_ATOMIC |
					    QPM_MIN_RNR_TIMER,
				      QPM_ALT_PATH | QPM_ACCESS_FLAGS |
				      QPM_PKEY_INDEX },
		},
		[QPS_RTR] = {
			[QPS_RESET] = { true, 0, 0 },
			[QPS_ERR] = { true, 0, 0 },
			[QPS_RTS] = { true, QPM_TIMEOUT | QPM_RETRY_CNT |
					    QPM_RNR_RETRY | QPM_SQ_PSN |
					    QPM_MAX_QP_RD_ATOMIC,
				      QPM_CUR_STATE | QPM_RC_PATH_OPT },
		},
		[QPS_RTS] = {
			[QPS_RESET] = { true, 0, 0 },
			[QPS_ERR] = { true, 0, 0 },
			[QPS_RTS] = { true, 0, QPM_CUR_STATE | QPM_RC_PATH_OPT },
			[QPS_SQD] = { true, 0, QPM_EN_SQD_ASYNC_NOTIFY },
		},
		[QPS_SQD] = {
			[QPS_RESET] = { true, 0, 0 },
			[QPS_ERR] = { true, 0, 0 },
			[QPS_RTS] = { true, 0, QPM_CUR_STATE | QPM_RC_PATH_OPT },
			[QPS_SQD] = { true, 0, QPM_PORT | QPM_AV | QPM_TIMEOUT |
						QPM_RETRY_CNT | QPM_RNR_RETRY |
						QPM_MAX_QP_RD_ATOMIC |
						QPM_MAX_DEST_RD_ATOMIC |
						QPM_PKEY_INDEX |
						QPM_RC_PATH_OPT },
		},
		[QPS_SQE] = {
			[QPS_RESET] = { true, 0, 0 },
			[QPS_ERR] = { true, 0, 0 },
			[QPS_RTS] = { true, 0, 0 },
		},
		[QPS_ERR] = {
			[QPS_RESET] = { true, 0, 0 },
			[QPS_ERR] = { true, 0, 0 },
		},
	};
	static const struct qp_transition ucx[QPS_ERR + 1][QPS_ERR + 1] = {
		[QPS_RESET] = {
			[QPS_RESET] = { true, 0, 0 },
			[QPS_INIT] = { true, QPM_PKEY_INDEX | QPM_PORT |
					     QPM_ACCESS_FLAGS, 0 },
		},
		[QPS_INIT] = {
			[QPS_RESET] = { true, 0, 0 },
			[QPS_ERR] = { true, 0, 0 },
			[QPS_INIT] = { true, 0, QPM_PKEY_INDEX | QPM_PORT |
						QPM_ACCESS_FLAGS },
			[QPS_RTR] = { true, QPM_AV | QPM_PATH_MTU |
					    QPM_DEST_QPN | QPM_RQ_PSN,
				      QPM_ALT_PATH | QPM_ACCESS_FLAGS |
				      QPM_PKEY_INDEX },
		},
		[QPS_RTR] = {
			[QPS_RESET] = { true, 0, 0 },
			[QPS_ERR] = { true, 0, 0 },
			[QPS_RTS] = { true, QPM_SQ_PSN,
				      QPM_CUR_STATE | QPM_UC_PATH_OPT },
		},
		[QPS_RTS] = {
			[QPS_RESET] = { true, 0, 0 },
			[QPS_ERR] = { true, 0, 0 },
			[QPS_RTS] = { true, 0, QPM_CUR_STATE | QPM_UC_PATH_OPT },
			[QPS_SQD] = { true, 0, QPM_EN_SQD_ASYNC_NOTIFY },
		},
		[QPS_SQD] = {
			[QPS_RESET] = { true, 0, 0 },
			[QPS_ERR] = { true, 0, 0 },
			[QPS_RTS] = { true, 0, QPM_CUR_STATE | QPM_UC_PATH_OPT },
			[QPS_SQD] = { true, 0, QPM_AV | QPM_PKEY_INDEX |
						QPM_UC_PATH_OPT },
		},
		[QPS_SQE] = {
			[QPS_RESET] = { true, 0, 0 },
			[QPS_ERR] = { true, 0, 0 },
			[QPS_RTS] = { true, 0, QPM_CUR_STATE | QPM_ACCESS_FLAGS },
		},
		[QPS_ERR] = {
			[QPS_RESET] = { true, 0, 0 },
			[QPS_ERR] = { true, 0, 0 },
		},
	};
	const struct qp_transition *t;

	if (cur > QPS_ERR || next > QPS_ERR)
		return false;
	t = uc ? &ucx[cur][next] : &rc[cur][next];
	if ((mask & QPM_CUR_STATE) && cur != QPS_RTR && cur != QPS_RTS &&
	    cur != QPS_SQD && cur != QPS_SQE)
		return false;
	return t->valid && (mask & t->req) == t->req &&
	       !(mask & ~(t->req | t->opt | QPM_STATE));
}

/* MANA's limit on outstanding RDMA READs/atomics (max_qp_rd_atom) */
#define QP_MAX_RD_ATOMIC 16

/*
 * The values of the attributes of @mask the device takes, each within
 * what a QP can hold: an MTU enum 256..4096, a 24-bit QPN and PSNs,
 * rd_atomic up to QP_MAX_RD_ATOMIC, 5-bit timers and 3-bit counts.
 */
struct qp_values {
	uint8_t path_mtu, max_rd_atomic, max_dest_rd_atomic;
	uint8_t min_rnr_timer, timeout, retry_cnt, rnr_retry;
	uint32_t dest_qpn, rq_psn, sq_psn;
};

static inline bool qp_values_ok(const struct qp_values *v, uint32_t mask)
{
	return !((mask & QPM_PATH_MTU) && (v->path_mtu < 1 || v->path_mtu > 5)) &&
	       !((mask & QPM_DEST_QPN) && (v->dest_qpn >> 24)) &&
	       !((mask & QPM_RQ_PSN) && (v->rq_psn >> 24)) &&
	       !((mask & QPM_SQ_PSN) && (v->sq_psn >> 24)) &&
	       !((mask & QPM_MAX_QP_RD_ATOMIC) &&
		 v->max_rd_atomic > QP_MAX_RD_ATOMIC) &&
	       !((mask & QPM_MAX_DEST_RD_ATOMIC) &&
		 v->max_dest_rd_atomic > QP_MAX_RD_ATOMIC) &&
	       !((mask & QPM_MIN_RNR_TIMER) && v->min_rnr_timer > 31) &&
	       !((mask & QPM_TIMEOUT) && v->timeout > 31) &&
	       !((mask & QPM_RETRY_CNT) && v->retry_cnt > 7) &&
	       !((mask & QPM_RNR_RETRY) && v->rnr_retry > 7);
}

#endif /* MANA_EMU_LIB_QP_MODIFY_H */
