// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RNIC CQs and reliable-connected QPs as mana_ib and the uverbs core
 * handle them (research mana-kernel-and-gdma.md 1.3, 2.4, 2.8):
 *
 * - an RNIC CQ has its hardware CQ from create_cq on (cqid returned);
 * - create_rc_qp takes four user queues (mana_ib_create_rc_qp, 48 bytes:
 *   short EINVAL, nonzero tail EOPNOTSUPP), RNIC CQs only, caps within
 *   the device's limits, and answers the four queue ids; qp_num is the
 *   receive responder's id;
 * - modify makes the uverbs core's checks only (ports, states <= ERR,
 *   the AV: RoCE needs a GRH, sgid_index a valid GID of the port; no
 *   alternate path; PSNs masked to 24 bits), as no mana_ib calls
 *   ib_modify_qp_is_ok(), then hands the attributes to the device
 *   (device/rc.h), which refuses what its state machine does not take
 *   (lib/qp_modify.h): EPROTO, a GDMA status;
 * - no query_qp (the core answers EOPNOTSUPP); the test API reports what
 *   modify set and the device's current state;
 * - the device's QP-fatal report becomes an async event on the owner's
 *   async fds.
 */
#include <infiniband/verbs.h>	/* before any rdma/ uAPI header */

#include "kernel.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/mana-abi.h>

#include "emulator/core/gid.h"
#include "emulator/device/device.h"
#include "emulator/device/rc.h"
#include "emulator/mana_emu.h"
#include "providers/mana/gdma.h"

#define RC_PORT 1			/* the RoCE port (gid.h) */
#define PSN_MASK 0xffffffu
#define RC_MAX_RD_ATOMIC 16		/* = max_qp_rd_atom (rnic.c) */

struct emu_rc_qp {
	struct emu_rc_qp_hw *hw;
	bool uc;			/* IB_QPT_UC (7.2) */
	uint64_t user_handle;
	uint64_t pinned;
	struct ib_uverbs_qp_cap cap;
	bool sq_sig_all;
	enum emu_rc_state state;	/* as last set by modify */
	struct emu_rc_attr attr;	/* what modify set so far */
	uint32_t access_flags;
	uint8_t port;			/* IB_QP_PORT, 0 before INIT */
	uint8_t core_port;		/* ib_qp.port: RESET keeps it */
	uint8_t av_port;
};

/* ---- RNIC CQs -------------------------------------------------------------- */

int emu_rnic_cq_create(struct emu_cq *cq)
{
	struct emu_hwq_req r = {
		.type = EMU_HWQ_CQ, .ctx = cq->obj.ctx, .buf = cq->buf_addr,
		.size = cq->cqe * GDMA_CQE_SIZE, .port = RC_PORT, .ucq = cq,
		.count = cq->cqe,
	};

	cq->rnic_hw = emu_hwq_create(&r);
	return cq->rnic_hw ? 0 : -errno;
}

void emu_rnic_cq_destroy(struct emu_cq *cq)
{
	if (!cq->rnic_hw)
		return;
	emu_hwq_destroy(cq->rnic_hw);
	cq->rnic_hw = NULL;
}

/* ---- create / destroy ------------------------------------------------------- */

/* The device's QP-fatal report (device/rc.h), as mana_ib passes it on. */
static void rc_qp_event(void *kernel_qp, int ibv_event_type)
{
	struct emu_qp *qp = kernel_qp;

	emu_post_qp_event(qp->obj.ctx, qp, qp->rc->user_handle,
			  ibv_event_type);
}

static struct emu_qp *rc_qp_by_num(uint32_t qpn)
{
	struct emu_ucontext *ctx;
	struct emu_qp *qp;
	uint32_t h;

	for (ctx = kernel_contexts; ctx; ctx = ctx->next) {
		for (h = 0; h < ctx->nhandles; h++) {
			qp = (struct emu_qp *)ctx->handles[h];
			if (qp && qp->obj.type == EMU_OBJ_QP && qp->rc &&
			    qp->qp_num == qpn)
				return qp;
		}
	}
	return NULL;
}

EMU_EXPORT int mana_emu_rc_qp_event(uint32_t qpn, int event_type)
{
	struct emu_qp *qp;
	int ret = -EINVAL;

	if (event_type != IBV_EVENT_QP_FATAL &&
	    event_type != IBV_EVENT_QP_REQ_ERR &&
	    event_type != IBV_EVENT_QP_ACCESS_ERR)
		return ret;
	pthread_mutex_lock(&emu.lock);
	qp = rc_qp_by_num(qpn);
	if (qp)
		rc_qp_event(qp, event_type);
	pthread_mutex_unlock(&emu.lock);
	return qp ? 0 : -ENOENT;
}

static void rc_qp_release(struct emu_obj *obj)
{
	struct emu_qp *qp = (struct emu_qp *)obj;
	struct emu_rc_qp *rc = qp->rc;

	if (!rc)
		return;
	if (rc->hw)
		emu_rc_qp_hw_destroy(rc->hw);
	event_records_drop_qp(obj->ctx, qp);
	emu_dev.pinned_bytes -= rc->pinned;
	free(rc);
	qp->rc = NULL;
}

/* The device's limits (query_device): EINVAL beyond them. */
static int rc_check_caps(const struct emu_qp_req *req)
{
	if (req->max_send_wr > emu_dev.max_qp_wr ||
	    req->max_recv_wr > emu_dev.max_qp_wr)
		return -EINVAL;
	if (req->max_send_sge > GDMA_MAX_TX_SGE ||
	    req->max_recv_sge > GDMA_MAX_RX_SGE)
		return -EINVAL;
	if (req->create_flags)
		return -EINVAL;
	/* RC needs RNIC CQs: a CQ made without the flag has no hardware CQ */
	if (!req->send_cq || !req->recv_cq || !req->send_cq->rnic_hw ||
	    !req->recv_cq->rnic_hw)
		return -EINVAL;
	return 0;
}

/*
 * Each queue as mana_ib_create_queue() takes it: ib_umem_get() (not
 * empty, pinned writable) and a zero-offset DMA region (page aligned).
 * The size need not be whole pages: the region covers the last partial
 * page, and upstream libmana's send queue is a power of two of pages plus
 * its 16-byte rollback area.
 */
static int rc_check_queues(const uint64_t *buf, const uint32_t *size,
			   unsigned int n, uint64_t *pinned)
{
	uint64_t p;
	unsigned int i;
	int ret;

	*pinned = 0;
	for (i = 0; i < n; i++) {
		ret = queue_umem(buf[i], size[i], false, &p);
		if (ret)
			return ret;
		*pinned += p;
	}
	return 0;
}

static struct emu_qp *rc_qp_obj(struct emu_ucontext *ctx,
				const struct emu_qp_req *req)
{
	struct emu_obj *deps[3] = { &req->pd->obj, &req->send_cq->obj,
				    &req->recv_cq->obj };
	struct emu_qp *qp;

	qp = obj_create(ctx, EMU_OBJ_QP, sizeof(*qp), deps,
			req->send_cq == req->recv_cq ? 2 : 3, rc_qp_release);
	if (!qp)
		return NULL;
	qp->rc = calloc(1, sizeof(*qp->rc));
	if (!qp->rc) {
		obj_free(&qp->obj);
		return NULL;
	}
	return qp;
}

static int rc_hw_create(struct emu_qp *qp, const struct emu_qp_req *req,
			const uint64_t buf[EMU_RC_QUEUES],
			const uint32_t size[EMU_RC_QUEUES],
			uint32_t ids[EMU_RC_QUEUES])
{
	struct emu_rc_create_req hr = {
		.ctx = qp->obj.ctx, .pd = req->pd,
		.send_cq = req->send_cq->rnic_hw,
		.recv_cq = req->recv_cq->rnic_hw, .port = RC_PORT,
		.max_send_wr = req->max_send_wr, .max_recv_wr = req->max_recv_wr,
		.max_send_sge = req->max_send_sge,
		.max_recv_sge = req->max_recv_sge,
		.sq_sig_all = req->sq_sig_all, .uc = qp->rc->uc,
	};
	unsigned int i;
	int ret;

	/*
	 * The device's ring is the region's whole WQE units: a tail shorter
	 * than one (the rollback area) is not ring, and a send queue of
	 * only that (max_send_wr 0) has an empty ring.
	 */
	for (i = 0; i < EMU_RC_QUEUES; i++) {
		hr.buf[i] = buf[i];
		hr.size[i] = size[i] & ~(GDMA_WQE_BU_SIZE - 1);
	}
	ret = emu_rc_qp_hw_create(&hr, &qp->rc->hw, ids);
	if (ret)
		return ret;
	emu_rc_set_event_handler(qp->rc->hw, rc_qp_event, qp);
	return 0;
}

static void rc_init(struct emu_rc_qp *rc, const struct emu_qp_req *req)
{
	rc->user_handle = req->user_handle;
	rc->cap.max_send_wr = req->max_send_wr;
	rc->cap.max_recv_wr = req->max_recv_wr;
	rc->cap.max_send_sge = req->max_send_sge;
	rc->cap.max_recv_sge = req->max_recv_sge;
	rc->cap.max_inline_data = req->max_inline_data;
	rc->sq_sig_all = req->sq_sig_all;
	rc->state = EMU_RC_RESET;
}

/*
 * The user's queues in the device's order (enum emu_rc_queue): RC's four
 * as they come; UC's three (mana_ib_create_uc_qp) on the send requester,
 * receive responder and, for the memory-management queue, the send
 * responder slot; no receive requester.
 */
static int rc_udata(const struct emu_qp_req *req, const struct emu_udata *uhw,
		    uint64_t buf[EMU_RC_QUEUES], uint32_t size[EMU_RC_QUEUES])
{
	struct mana_ib_create_rc_qp rc;
	struct mana_ib_create_uc_qp uc;
	unsigned int i;
	int ret;

	memset(buf, 0, EMU_RC_QUEUES * sizeof(*buf));
	memset(size, 0, EMU_RC_QUEUES * sizeof(*size));
	if (req->qp_type == IBV_QPT_RC) {
		ret = udata_in(uhw, &rc, sizeof(rc), sizeof(rc));
		for (i = 0; !ret && i < EMU_RC_QUEUES; i++) {
			buf[i] = rc.queue_buf[i];
			size[i] = rc.queue_size[i];
		}
		return ret;
	}
	ret = udata_in(uhw, &uc, sizeof(uc), sizeof(uc));
	if (ret)
		return ret;
	/* robust udata: no comp_mask bit is known */
	if (uc.comp_mask)
		return -EOPNOTSUPP;
	buf[EMU_RC_SQ_REQUESTER] = uc.queue_buf[MANA_UC_SQ_REQUESTER];
	size[EMU_RC_SQ_REQUESTER] = uc.queue_size[MANA_UC_SQ_REQUESTER];
	buf[EMU_RC_RQ_RESPONDER] = uc.queue_buf[MANA_UC_RQ_RESPONDER];
	size[EMU_RC_RQ_RESPONDER] = uc.queue_size[MANA_UC_RQ_RESPONDER];
	buf[EMU_RC_SQ_RESPONDER] = uc.queue_buf[MANA_UC_SQ_MM];
	size[EMU_RC_SQ_RESPONDER] = uc.queue_size[MANA_UC_SQ_MM];
	return 0;
}

/* mana_ib_create_rc_qp() and (7.2) the UC QP create */
int emu_rc_qp_create(struct emu_ucontext *ctx, const struct emu_qp_req *req,
		     const struct emu_udata *uhw, struct emu_qp **out)
{
	bool uc = req->qp_type == IBV_QPT_UC;
	uint64_t buf[EMU_RC_QUEUES], pinned = 0, p;
	uint32_t size[EMU_RC_QUEUES], ids[EMU_RC_QUEUES];
	struct emu_qp *qp;
	unsigned int i;
	int ret;

	ret = rc_udata(req, uhw, buf, size);
	if (!ret)
		ret = rc_check_caps(req);
	for (i = 0; !ret && i < EMU_RC_QUEUES; i++) {
		if (uc && i == EMU_RC_RQ_REQUESTER)
			continue;
		ret = rc_check_queues(&buf[i], &size[i], 1, &p);
		pinned += p;
	}
	if (ret)
		return ret;
	qp = rc_qp_obj(ctx, req);
	if (!qp)
		return -ENOMEM;
	rc_init(qp->rc, req);
	qp->rc->uc = uc;
	qp->pd = req->pd;
	qp->port = RC_PORT;
	ret = rc_hw_create(qp, req, buf, size, ids);
	if (ret)
		goto err;
	qp->rc->pinned = pinned;
	emu_dev.pinned_bytes += pinned;
	qp->qp_num = ids[EMU_RC_RQ_RESPONDER];
	if (uc) {
		struct mana_ib_create_uc_qp_resp resp = {
			.queue_id = {
				[MANA_UC_SQ_REQUESTER] = ids[EMU_RC_SQ_REQUESTER],
				[MANA_UC_RQ_RESPONDER] = ids[EMU_RC_RQ_RESPONDER],
				[MANA_UC_SQ_MM] = ids[EMU_RC_SQ_RESPONDER],
			},
		};

		ret = emu_udata_respond(uhw, &resp, sizeof(resp));
	} else {
		struct mana_ib_create_rc_qp_resp resp = {};

		for (i = 0; i < EMU_RC_QUEUES; i++)
			resp.queue_id[i] = ids[i];
		ret = emu_udata_respond(uhw, &resp, sizeof(resp));
	}
	if (ret)
		goto err;
	*out = qp;
	return 0;
err:
	obj_free(&qp->obj);
	return ret;
}

/* ---- modify ------------------------------------------------------------------ */

/* The core's port and AV checks, then RoCE's: GRH, a valid sgid. */
static int rc_check_av(const struct emu_ibdev *dev, const struct emu_rc_qp *rc,
		       const struct ib_uverbs_modify_qp *cmd, uint32_t mask)
{
	const struct ib_uverbs_qp_dest *d = &cmd->dest;
	uint8_t port = mask & IBV_QP_PORT ? cmd->port_num : rc->port;
	uint8_t gid[16];

	if (!(mask & IBV_QP_AV))
		return 0;
	if (!emu_ibdev_port_valid(dev, d->port_num))
		return -EINVAL;
	/*
	 * modify_qp(): to RTR the AV's port must be the QP's (set at INIT);
	 * otherwise (SQD) an IB_QP_PORT given with it must match
	 */
	if ((mask & IBV_QP_STATE) && cmd->qp_state == IBV_QPS_RTR ?
	    d->port_num != rc->core_port :
	    (mask & IBV_QP_PORT) && d->port_num != port)
		return -EINVAL;
	if (!d->is_global)
		return -EINVAL;		/* RoCE: ib_resolve_eth_dmac() */
	if (emu_gid_get(emu_dev.opts, d->port_num, d->sgid_index, gid))
		return -EINVAL;
	return 0;
}

/*
 * The uverbs core's own checks of the values (mana_ib adds none): a port
 * of the device, and no alternate path on RoCE (_ib_modify_qp(): APM is
 * IB's).  The state machine and the other values are the device's
 * (device/rc.h, lib/qp_modify.h).
 */
static int rc_check_core(const struct emu_ibdev *d,
			 const struct ib_uverbs_modify_qp *cmd, uint32_t mask)
{
	if ((mask & IBV_QP_PORT) && !emu_ibdev_port_valid(d, cmd->port_num))
		return -EINVAL;
	if (mask & IBV_QP_ALT_PATH)
		return -EINVAL;
	return 0;
}

/* The attributes present, over what the QP already has. */
static void rc_apply(struct emu_rc_attr *a, const struct ib_uverbs_modify_qp *cmd,
		     uint32_t mask)
{
	const struct ib_uverbs_qp_dest *d = &cmd->dest;

	if (mask & IBV_QP_ACCESS_FLAGS)
		a->access_flags = cmd->qp_access_flags;
	if (mask & IBV_QP_PATH_MTU)
		a->path_mtu = cmd->path_mtu;
	if (mask & IBV_QP_DEST_QPN)
		a->dest_qp_num = cmd->dest_qp_num;
	/* _ib_modify_qp() masks PSNs to 24 bits (a warning, no error) */
	if (mask & IBV_QP_RQ_PSN)
		a->rq_psn = cmd->rq_psn & PSN_MASK;
	if (mask & IBV_QP_SQ_PSN)
		a->sq_psn = cmd->sq_psn & PSN_MASK;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = cmd->max_rd_atomic;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = cmd->max_dest_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = cmd->min_rnr_timer;
	if (mask & IBV_QP_TIMEOUT)
		a->timeout = cmd->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		a->retry_cnt = cmd->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		a->rnr_retry = cmd->rnr_retry;
	if (mask & IBV_QP_AV) {
		memcpy(a->dgid, d->dgid, sizeof(a->dgid));
		a->sgid_index = d->sgid_index;
		a->hop_limit = d->hop_limit;
		a->traffic_class = d->traffic_class;
		a->flow_label = d->flow_label & 0xfffff;	/* 20 bits */
		/*
		 * ib_resolve_eth_dmac(): off-link the route's hop limit (64)
		 * replaces the caller's; a link-local dgid keeps it.
		 */
		if (d->dgid[0] != 0xfe || (d->dgid[1] & 0xc0) != 0x80)
			a->hop_limit = 64;
	}
}

static int rc_states(const struct emu_rc_qp *rc,
		     const struct ib_uverbs_modify_qp *cmd, uint32_t mask,
		     enum emu_rc_state *cur, enum emu_rc_state *next)
{
	enum emu_rc_state actual = emu_rc_qp_hw_state(rc->hw);

	/* the core's only state check; mana_ib sends no cur_qp_state */
	if (((mask & IBV_QP_CUR_STATE) && cmd->cur_qp_state > IBV_QPS_ERR) ||
	    ((mask & IBV_QP_STATE) && cmd->qp_state > IBV_QPS_ERR))
		return -EINVAL;
	*cur = actual;
	*next = mask & IBV_QP_STATE ? cmd->qp_state : actual;
	return 0;
}

int emu_rc_qp_modify(struct emu_qp *qp, const struct ib_uverbs_modify_qp *cmd,
		     uint32_t valid_mask, const struct emu_udata *uhw)
{
	const struct emu_ibdev *d = emu_ibdev_of(qp->obj.ctx->file);
	struct emu_rc_qp *rc = qp->rc;
	uint32_t mask = cmd->attr_mask;
	enum emu_rc_state cur, next;
	struct emu_rc_attr attr;
	int ret;

	if (mask & ~valid_mask)
		return -EOPNOTSUPP;
	/*
	 * No driver data: robust udata (7.1) wants the input empty or zero;
	 * older mana_ib_modify_qp() never read it.
	 */
	ret = kernel_era()->robust_udata ? emu_udata_in_empty(uhw) : 0;
	if (!ret)
		ret = rc_states(rc, cmd, mask, &cur, &next);
	if (!ret)
		ret = rc_check_core(d, cmd, mask);
	if (!ret)
		ret = rc_check_av(d, rc, cmd, mask);
	if (ret)
		return ret;
	attr = next == EMU_RC_RESET ? (struct emu_rc_attr){} : rc->attr;
	rc_apply(&attr, cmd, mask);
	attr.state = next;
	/*
	 * The device may drop emu.lock while it resolves the destination
	 * (device/rc.h): hold the QP as the core's uobject lock does, so a
	 * concurrent destroy gets EBUSY instead of freeing it under us.
	 */
	qp->obj.usecnt++;
	ret = emu_rc_qp_hw_modify(rc->hw, &attr, mask | IBV_QP_STATE);
	qp->obj.usecnt--;
	if (ret)
		return ret;
	rc->attr = attr;
	rc->state = next;
	if (next == EMU_RC_RESET)
		rc->port = rc->av_port = 0;
	if (mask & IBV_QP_PORT)
		rc->port = rc->core_port = cmd->port_num;
	if (mask & IBV_QP_AV)
		rc->av_port = cmd->dest.port_num;
	return 0;
}

/* ---- query ------------------------------------------------------------------- */

static void rc_qp_query(struct emu_qp *qp, struct ib_uverbs_query_qp_resp *resp)
{
	const struct emu_rc_qp *rc = qp->rc;
	const struct emu_rc_attr *a = &rc->attr;
	enum emu_rc_state state = emu_rc_qp_hw_state(rc->hw);

	memset(resp, 0, sizeof(*resp));
	memcpy(resp->dest.dgid, a->dgid, sizeof(a->dgid));
	resp->dest.flow_label = a->flow_label;
	resp->dest.sgid_index = a->sgid_index;
	resp->dest.hop_limit = a->hop_limit;
	resp->dest.traffic_class = a->traffic_class;
	resp->dest.is_global = rc->av_port != 0;
	resp->dest.port_num = rc->av_port;
	resp->max_send_wr = rc->cap.max_send_wr;
	resp->max_recv_wr = rc->cap.max_recv_wr;
	resp->max_send_sge = rc->cap.max_send_sge;
	resp->max_recv_sge = rc->cap.max_recv_sge;
	resp->max_inline_data = rc->cap.max_inline_data;
	resp->rq_psn = a->rq_psn;
	resp->sq_psn = a->sq_psn;
	resp->dest_qp_num = a->dest_qp_num;
	resp->qp_access_flags = a->access_flags;
	resp->qp_state = state;
	resp->cur_qp_state = state;
	resp->path_mtu = a->path_mtu;
	resp->path_mig_state = IBV_MIG_MIGRATED;
	resp->sq_draining = 0;
	resp->max_rd_atomic = a->max_rd_atomic;
	resp->max_dest_rd_atomic = a->max_dest_rd_atomic;
	resp->min_rnr_timer = a->min_rnr_timer;
	resp->port_num = rc->port;
	resp->timeout = a->timeout;
	resp->retry_cnt = a->retry_cnt;
	resp->rnr_retry = a->rnr_retry;
	resp->sq_sig_all = rc->sq_sig_all;
}

/*
 * The test API's view of an RC QP (mana_emu.h): no mana_ib has query_qp
 * (QUERY_QP is EOPNOTSUPP), but the emulator keeps what modify set for the
 * device, and tests read it here.
 */
EMU_EXPORT int mana_emu_rc_qp_query(uint32_t qpn,
				    struct ib_uverbs_query_qp_resp *out)
{
	struct emu_qp *qp;

	pthread_mutex_lock(&emu.lock);
	qp = rc_qp_by_num(qpn);
	if (qp)
		rc_qp_query(qp, out);
	pthread_mutex_unlock(&emu.lock);
	return qp ? 0 : -ENOENT;
}
