// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Raw packet QPs: the send QP (one SQ and its CQ) and the RSS QP (receive
 * over the WQs of an indirection table, Toeplitz hashing).
 */
#include <stdlib.h>
#include <string.h>

#include "mana.h"
#include "rc.h"

MANA_DECLARE_DRV_CMD(mana_create_qp, ibv_create_qp, ib_uverbs_create_qp_resp,
		     mana_ib_create_qp, mana_ib_create_qp_resp);
MANA_DECLARE_DRV_CMD(mana_create_qp_rss, ibv_create_qp_ex,
		     ib_uverbs_ex_create_qp_resp, mana_ib_create_qp_rss,
		     mana_ib_create_qp_rss_resp);

#define MANA_RX_HASH_FIELDS (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | \
			     IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6 | \
			     IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP | \
			     IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)

/*
 * MANA takes the vport from the parent domain's pd_context (as DPDK sets
 * it); a plain PD, or a parent domain without a port, means port 1.
 */
static uint32_t qp_port(struct mana_pd *pd)
{
	uintptr_t port = (uintptr_t)pd->pd_context;

	return pd->protection_domain && port ? (uint32_t)port : 1;
}

/* ---- who holds a port ------------------------------------------------- */

static void raw_qp_add(struct mana_context *ctx, struct mana_qp *qp)
{
	pthread_mutex_lock(&ctx->lock);
	qp->ctx_next = ctx->raw_qps;
	ctx->raw_qps = qp;
	pthread_mutex_unlock(&ctx->lock);
}

static void raw_qp_del(struct mana_context *ctx, struct mana_qp *qp)
{
	struct mana_qp **p;

	pthread_mutex_lock(&ctx->lock);
	for (p = &ctx->raw_qps; *p; p = &(*p)->ctx_next) {
		if (*p == qp) {
			*p = qp->ctx_next;
			break;
		}
	}
	pthread_mutex_unlock(&ctx->lock);
}

/*
 * A raw QP of this context on @port: of another PD than @pd (want_rss
 * false), or an RSS QP (want_rss true).  Its number, or -1.  The kernel
 * answers only EBUSY; this context's own QPs are all we can know of who
 * holds the port.
 */
static int64_t port_holder(struct mana_context *ctx, uint32_t port,
			   struct mana_pd *pd, bool want_rss)
{
	struct mana_qp *qp;
	int64_t found = -1;

	pthread_mutex_lock(&ctx->lock);
	for (qp = ctx->raw_qps; qp && found < 0; qp = qp->ctx_next) {
		if (qp->port != port)
			continue;
		if (want_rss ? qp->kind == MANA_QP_RAW_RSS :
			       mana_real_pd(to_mpd(qp->vqp.qp.pd)) != mana_real_pd(pd))
			found = qp->vqp.qp.qp_num;
	}
	pthread_mutex_unlock(&ctx->lock);
	return found;
}

/* One log line for a create command that failed: who holds the port. */
static void create_qp_error(struct mana_context *ctx, struct mana_pd *pd,
			    uint32_t port, bool rss, int err)
{
	struct ibv_context *ibctx = &ctx->ibv_ctx.context;
	const char *what = rss ? "CREATE_QP (RSS)" : "CREATE_QP";
	int64_t qpn;

	/*
	 * A held vport: EBUSY from 7.2; before, mana_ib answered ENODEV for
	 * it, whoever held it (the netdev, another PD or context).
	 */
	if (err != EBUSY && err != ENODEV) {
		mana_err(ibctx, "%s failed: %s", what, strerror(err));
		return;
	}
	qpn = rss ? port_holder(ctx, port, pd, true) : -1;
	if (qpn >= 0) {
		mana_err(ibctx, "%s failed: %s: port %u already has an RSS QP in this context (QP %lld); a vport has one",
			 what, strerror(err), port, (long long)qpn);
		return;
	}
	qpn = port_holder(ctx, port, pd, false);
	if (qpn >= 0) {
		mana_err(ibctx, "%s failed: %s: port %u is held by another PD of this context (QP %lld); the raw QPs of a port must share one PD",
			 what, strerror(err), port, (long long)qpn);
		return;
	}
	mana_err(ibctx, "%s failed: %s: port %u is held outside this context: by another context (this process or another)%s, or by the kernel network interface (set it down: ip link set <ifname> down)",
		 what, strerror(err), port, rss ? " with raw QPs or an RSS QP" : " with raw QPs");
	mana_hint_vport_held(ibctx, port, err);
}

static int check_port(struct mana_context *ctx, uint32_t port)
{
	struct mana_caps caps;
	int ret;

	ret = mana_get_caps(ctx, &caps);
	if (ret)
		return ret;
	if (port < 1 || port > caps.phys_port_cnt) {
		mana_err(&ctx->ibv_ctx.context,
			 "port %u out of range 1..%u (pd_context of the parent domain)",
			 port, caps.phys_port_cnt);
		return EINVAL;
	}
	return 0;
}

/*
 * IBV_QP_INIT_ATTR_CREATE_FLAGS with no flag asks for nothing; any flag is
 * one raw packet QPs do not have (the same answer on both QP kinds).
 */
static int check_create_flags(struct ibv_context *ibctx,
			      const struct ibv_qp_init_attr_ex *attr)
{
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) ||
	    !attr->create_flags)
		return 0;
	mana_err(ibctx, "unsupported QP create_flags 0x%x", attr->create_flags);
	return EOPNOTSUPP;
}

static int check_sq_attr(struct mana_context *ctx,
			 struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_context *ibctx = &ctx->ibv_ctx.context;
	struct mana_caps caps;
	int ret;

	if (attr->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD |
					  IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
					  IBV_QP_INIT_ATTR_CREATE_FLAGS)) {
		mana_err(ibctx, "unsupported QP comp_mask 0x%x", attr->comp_mask);
		return EOPNOTSUPP;
	}
	ret = check_create_flags(ibctx, attr);
	if (ret)
		return ret;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~(uint64_t)IBV_QP_EX_WITH_SEND)) {
		mana_err(ibctx, "raw packet QPs send only: send_ops_flags 0x%llx",
			 (unsigned long long)attr->send_ops_flags);
		return EOPNOTSUPP;
	}
	if (!attr->pd || attr->pd->context != ibctx) {
		mana_err(ibctx, "QP needs a PD of this context");
		return EINVAL;
	}
	if (!attr->send_cq || attr->send_cq->context != ibctx) {
		mana_err(ibctx, "raw QP needs a send CQ of this context");
		return EINVAL;
	}
	if (attr->srq) {
		mana_err(ibctx, "raw QPs cannot use an SRQ");
		return EINVAL;
	}
	if (atomic_load(&to_mcq(attr->send_cq)->bound)) {
		mana_err(ibctx, "send CQ is already used by another queue; MANA binds one CQ to one queue");
		return EINVAL;
	}
	ret = mana_get_caps(ctx, &caps);
	if (ret)
		return ret;
	if (!attr->cap.max_send_wr || attr->cap.max_send_wr > caps.max_qp_wr) {
		mana_err(ibctx, "max_send_wr %u out of range 1..%u",
			 attr->cap.max_send_wr, caps.max_qp_wr);
		return EINVAL;
	}
	/*
	 * mana_ib ignores receive caps on a raw send QP (it has no receive
	 * queue; frames arrive on the WQs of an RSS QP): accepted, and given
	 * back as asked, as the kernel's response and rdma-core's libmana
	 * give them (ibv_create_qp(3): the caps returned are at least those
	 * asked).  ibv_post_recv on the QP still fails.
	 */
	if (attr->cap.max_recv_wr || attr->cap.max_recv_sge)
		mana_dbg(ibctx, "raw send QP: max_recv_wr %u and max_recv_sge %u ignored (no receive queue; receive on the WQs of an RSS QP)",
			 attr->cap.max_recv_wr, attr->cap.max_recv_sge);
	/*
	 * Every WR may complete (errors do, signaled or not) and the CQ serves
	 * this queue alone, so a CQ shallower than the queue bounds how many
	 * sends may be outstanding (post_send: ENOMEM) instead of failing the
	 * create: mana_ib and rdma-core's libmana accept it, and the verbs
	 * datapath still cannot overrun the CQ.
	 */
	if (to_mcq(attr->send_cq)->count < attr->cap.max_send_wr)
		mana_dbg(ibctx, "send CQ of %u entries: at most %u of max_send_wr %u sends outstanding",
			 to_mcq(attr->send_cq)->count,
			 to_mcq(attr->send_cq)->count, attr->cap.max_send_wr);
	if (attr->cap.max_send_sge > MANA_MAX_TX_SGE) {
		mana_err(ibctx, "max_send_sge %u exceeds %u",
			 attr->cap.max_send_sge, MANA_MAX_TX_SGE);
		return EINVAL;
	}
	if (attr->cap.max_inline_data > MANA_MAX_INLINE_DATA) {
		mana_err(ibctx, "max_inline_data %u exceeds %u",
			 attr->cap.max_inline_data, MANA_MAX_INLINE_DATA);
		return EINVAL;
	}
	return check_port(ctx, qp_port(to_mpd(attr->pd)));
}

static struct ibv_qp *create_sq_qp(struct mana_context *ctx,
				   struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_context *ibctx = &ctx->ibv_ctx.context;
	struct ibv_qp_init_attr_ex cmd_attr;
	struct mana_create_qp_resp resp;
	struct mana_create_qp cmd;
	struct mana_pd *pd;
	struct mana_cq *cq;
	struct mana_qp *qp;
	uint64_t bytes;
	int ret;

	ret = check_sq_attr(ctx, attr);
	if (!ret)
		ret = mana_cq_for_raw(to_mcq(attr->send_cq));
	if (ret) {
		errno = ret;
		return NULL;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	pd = to_mpd(attr->pd);
	cq = to_mcq(attr->send_cq);
	qp->kind = MANA_QP_RAW_SQ;
	qp->port = qp_port(pd);
	qp->max_send_wr = attr->cap.max_send_wr;
	qp->send_limit = cq->count < qp->max_send_wr ? cq->count :
						      qp->max_send_wr;
	qp->max_send_sge = attr->cap.max_send_sge ? attr->cap.max_send_sge : 1;
	qp->max_inline_data = attr->cap.max_inline_data;
	qp->sq_sig_all = attr->sq_sig_all;
	bytes = (uint64_t)qp->max_send_wr * mana_sq_wqe_size(qp->max_send_sge);
	ret = mana_alloc_buf(ctx, pd, mana_queue_size(bytes),
			     MANADV_RES_TYPE_SQ, &qp->sq_buf);
	if (ret)
		goto err_free;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	cmd.drv.sq_buf_addr = (uintptr_t)qp->sq_buf.addr;
	cmd.drv.sq_buf_size = qp->sq_buf.size;
	cmd.drv.port = qp->port;
	/* a short response must not pass for valid ids */
	resp.drv.sqid = UINT32_MAX;
	resp.drv.cqid = UINT32_MAX;
	cmd_attr = *attr;
	cmd_attr.comp_mask = IBV_QP_INIT_ATTR_PD;
	cmd_attr.cap.max_recv_wr = 0;
	cmd_attr.cap.max_recv_sge = 0;
	ret = ibv_cmd_create_qp_ex(ibctx, &qp->vqp, &cmd_attr, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret) {
		create_qp_error(ctx, pd, qp->port, false, ret);
		goto err_buf;
	}
	if (resp.drv.sqid == UINT32_MAX || resp.drv.cqid == UINT32_MAX) {
		mana_err(ibctx, "kernel returned no SQ/CQ id; kernel too old?");
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		ret = EPROTO;
		goto err_buf;
	}

	qp->sq_id = resp.drv.sqid;
	qp->tx_vp_offset = resp.drv.tx_vp_offset;
	qp->send_cq = cq;
	cq->cqid = resp.drv.cqid;
	ret = mana_sq_init(ctx, qp, pd);
	if (ret) {
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		cq->cqid = cq->rnic_cqid;
		goto err_buf;
	}
	atomic_store(&cq->bound, true);
	mana_cq_bind_sq(cq, qp);
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		mana_qp_init_ex_ops(qp);
	if (pd->protection_domain)
		atomic_fetch_add(&pd->refs, 1);

	/* the send side as it is; the receive caps as asked (see above) */
	attr->cap.max_send_wr = qp->max_send_wr;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_inline_data = qp->max_inline_data;
	qp->cap = attr->cap;
	raw_qp_add(ctx, qp);
	return &qp->vqp.qp;

err_buf:
	mana_free_buf(&qp->sq_buf);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

static int check_rss_attr(struct mana_context *ctx,
			  struct ibv_qp_init_attr_ex *attr)
{
	const uint32_t needed = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_RX_HASH |
				IBV_QP_INIT_ATTR_IND_TABLE;
	struct ibv_rx_hash_conf *hash = &attr->rx_hash_conf;
	struct ibv_context *ibctx = &ctx->ibv_ctx.context;
	struct mana_rwq_ind_table *table;
	struct mana_caps caps;
	uint32_t i, j;
	int ret;

	if ((attr->comp_mask & needed) != needed ||
	    (attr->comp_mask & ~(needed | IBV_QP_INIT_ATTR_CREATE_FLAGS))) {
		mana_err(ibctx,
			 "RSS QP needs exactly PD, RX_HASH and IND_TABLE (comp_mask 0x%x)",
			 attr->comp_mask);
		return EINVAL;
	}
	ret = check_create_flags(ibctx, attr);
	if (ret)
		return ret;
	if (!attr->pd || attr->pd->context != ibctx || !attr->rwq_ind_tbl ||
	    attr->rwq_ind_tbl->context != ibctx) {
		mana_err(ibctx, "RSS QP needs a PD and an indirection table of this context");
		return EINVAL;
	}
	if (hash->rx_hash_function != IBV_RX_HASH_FUNC_TOEPLITZ) {
		mana_err(ibctx, "hash function %u is not supported (Toeplitz only)",
			 hash->rx_hash_function);
		return EINVAL;
	}
	if (hash->rx_hash_key_len != MANA_IB_RX_HASH_KEY_LEN || !hash->rx_hash_key) {
		mana_err(ibctx, "Toeplitz key must be %u bytes (got %u)",
			 MANA_IB_RX_HASH_KEY_LEN, hash->rx_hash_key_len);
		return EINVAL;
	}
	if (hash->rx_hash_fields_mask & ~(uint64_t)MANA_RX_HASH_FIELDS) {
		mana_err(ibctx, "unsupported hash fields 0x%llx",
			 (unsigned long long)hash->rx_hash_fields_mask);
		return EINVAL;
	}
	if (attr->cap.max_send_wr || attr->send_cq || attr->srq) {
		mana_err(ibctx, "an RSS QP only receives: no send queue, send CQ or SRQ");
		return EINVAL;
	}
	ret = mana_get_caps(ctx, &caps);
	if (ret)
		return ret;
	/* as the uverbs core answers a QP over an indirection table */
	if (attr->cap.max_recv_wr || attr->cap.max_recv_sge) {
		mana_err(ibctx, "an RSS QP receives on its WQs: max_recv_wr %u and max_recv_sge %u must be 0 (set max_wr/max_sge of the WQs)",
			 attr->cap.max_recv_wr, attr->cap.max_recv_sge);
		return EINVAL;
	}

	/* mana_ib binds each WQ's CQ to exactly one hardware RQ. */
	table = to_mind(attr->rwq_ind_tbl);
	for (i = 0; i < table->size; i++) {
		struct mana_cq *cq = to_mcq(table->wqs[i]->ibv_wq.cq);

		/* as mana_ib: one RSS QP per vport (EBUSY) before the WQs */
		if (table->wqs[i]->wqid != UINT32_MAX) {
			mana_err(ibctx, "WQ %u already serves an RSS QP (one per vport)",
				 i);
			return EBUSY;
		}
		if (atomic_load(&cq->bound)) {
			mana_err(ibctx, "the CQ of WQ %u already belongs to a QP", i);
			return EINVAL;
		}
		for (j = 0; j < i; j++) {
			if (table->wqs[j] == table->wqs[i] ||
			    table->wqs[j]->ibv_wq.cq == table->wqs[i]->ibv_wq.cq) {
				mana_err(ibctx,
					 "entries %u and %u share a WQ or CQ; each RQ needs its own CQ",
					 j, i);
				return EINVAL;
			}
		}
	}
	return check_port(ctx, qp_port(to_mpd(attr->pd)));
}

static struct ibv_qp *create_rss_qp(struct mana_context *ctx,
				    struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_context *ibctx = &ctx->ibv_ctx.context;
	struct mana_create_qp_rss_resp *resp;
	struct ibv_qp_init_attr_ex cmd_attr;
	struct mana_create_qp_rss cmd;
	struct mana_rwq_ind_table *table;
	struct mana_pd *pd;
	struct mana_qp *qp;
	uint32_t i;
	int ret;

	ret = check_rss_attr(ctx, attr);
	if (ret) {
		errno = ret;
		return NULL;
	}

	qp = calloc(1, sizeof(*qp));
	resp = calloc(1, sizeof(*resp));
	if (!qp || !resp) {
		ret = ENOMEM;
		goto err_free;
	}
	pd = to_mpd(attr->pd);
	table = to_mind(attr->rwq_ind_tbl);
	qp->kind = MANA_QP_RAW_RSS;
	qp->port = qp_port(pd);
	qp->ind_table = table;

	memset(&cmd, 0, sizeof(cmd));
	cmd.drv.rx_hash_fields_mask = attr->rx_hash_conf.rx_hash_fields_mask;
	cmd.drv.rx_hash_function = MANA_IB_RX_HASH_FUNC_TOEPLITZ;
	cmd.drv.rx_hash_key_len = MANA_IB_RX_HASH_KEY_LEN;
	memcpy(cmd.drv.rx_hash_key, attr->rx_hash_conf.rx_hash_key,
	       MANA_IB_RX_HASH_KEY_LEN);
	cmd.drv.port = qp->port;
	/* zero create flags were accepted above; the kernel needs no word of them */
	cmd_attr = *attr;
	cmd_attr.comp_mask &= ~(uint32_t)IBV_QP_INIT_ATTR_CREATE_FLAGS;
	ret = ibv_cmd_create_qp_ex2(ibctx, &qp->vqp, &cmd_attr, &cmd.ibv_cmd,
				    sizeof(cmd), &resp->ibv_resp, sizeof(*resp));
	if (ret) {
		create_qp_error(ctx, pd, qp->port, true, ret);
		goto err_free;
	}
	if (resp->drv.num_entries != table->size) {
		mana_err(ibctx, "kernel described %llu RSS entries, the table has %u",
			 (unsigned long long)resp->drv.num_entries, table->size);
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		ret = EPROTO;
		goto err_free;
	}

	for (i = 0; i < table->size; i++) {
		struct mana_wq *wq = table->wqs[i];
		struct mana_cq *cq = to_mcq(wq->ibv_wq.cq);

		wq->wqid = resp->drv.entries[i].wqid;
		cq->cqid = resp->drv.entries[i].cqid;
		mana_cq_bind_rq(cq, wq, qp->vqp.qp.qp_num);
		atomic_store(&cq->bound, true);
	}
	if (pd->protection_domain)
		atomic_fetch_add(&pd->refs, 1);
	qp->cap = attr->cap;
	raw_qp_add(ctx, qp);
	free(resp);
	return &qp->vqp.qp;

err_free:
	free(resp);
	free(qp);
	errno = ret;
	return NULL;
}

struct ibv_qp *mana_create_qp_ex(struct ibv_context *context,
				 struct ibv_qp_init_attr_ex *attr)
{
	struct mana_context *ctx = to_mctx(context);

	if (!attr) {
		errno = EINVAL;
		return NULL;
	}
	if (mana_qp_type_rnic(attr->qp_type))
		return mana_rc_create_qp(ctx, attr);
	if (attr->qp_type != IBV_QPT_RAW_PACKET) {
		mana_err(context, "QP type %d is not supported (RAW_PACKET, RC and UC only)",
			 attr->qp_type);
		mana_hint(MANA_HINT_QP_TYPE,
			  "%s: ibv_create_qp: QP type %s (%d) is not supported by MANA (RAW_PACKET, RC and UC only): EOPNOTSUPP. Fix: use RC QPs (e.g. ibv_rc_pingpong) or RAW_PACKET QPs",
			  context->device->name,
			  mana_qp_type_name(attr->qp_type), attr->qp_type);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_IND_TABLE)
		return create_rss_qp(ctx, attr);
	return create_sq_qp(ctx, attr);
}

/*
 * MANA has no shared receive queues and no XRC (max_srq 0, as mana_ib
 * reports).  libibverbs would answer EOPNOTSUPP for us, but programs such
 * as ibv_srq_pingpong print only "Couldn't create SRQ": say why, once.
 */
static void *no_srq(struct ibv_context *context, const char *verb)
{
	mana_err(context, "%s: MANA has no shared receive queues or XRC", verb);
	mana_hint(MANA_HINT_SRQ,
		  "%s: %s: MANA has no shared receive queues or XRC domains (max_srq 0): EOPNOTSUPP. Fix: give each QP its own receive queue (e.g. ibv_rc_pingpong, not ibv_srq_pingpong)",
		  context->device->name, verb);
	errno = EOPNOTSUPP;
	return NULL;
}

struct ibv_srq *mana_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	(void)attr;
	return no_srq(pd->context, "ibv_create_srq");
}

struct ibv_srq *mana_create_srq_ex(struct ibv_context *context,
				   struct ibv_srq_init_attr_ex *attr)
{
	(void)attr;
	return no_srq(context, "ibv_create_srq_ex");
}

struct ibv_xrcd *mana_open_xrcd(struct ibv_context *context,
				struct ibv_xrcd_init_attr *attr)
{
	(void)attr;
	return no_srq(context, "ibv_open_xrcd");
}

struct ibv_qp *mana_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex attr_ex;
	struct ibv_qp *qp;

	if (!attr) {
		errno = EINVAL;
		return NULL;
	}
	memset(&attr_ex, 0, sizeof(attr_ex));
	memcpy(&attr_ex, attr, sizeof(*attr));
	attr_ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	attr_ex.pd = pd;
	qp = mana_create_qp_ex(pd->context, &attr_ex);
	if (qp)
		attr->cap = attr_ex.cap;
	return qp;
}

int mana_destroy_qp(struct ibv_qp *ibqp)
{
	struct mana_qp *qp = to_mqp(ibqp);
	struct mana_pd *pd = to_mpd(ibqp->pd);
	uint32_t i;
	int ret;

	if (mana_qp_type_rnic(ibqp->qp_type))
		return mana_rc_destroy_qp(ibqp);
	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret) {
		mana_err(ibqp->context, "DESTROY_QP failed: %s", strerror(ret));
		return ret;
	}

	raw_qp_del(to_mctx(ibqp->context), qp);
	/* the hardware queues are gone: ids no longer mean anything */
	if (qp->kind == MANA_QP_RAW_SQ) {
		qp->send_cq->cqid = qp->send_cq->rnic_cqid;
		mana_cq_unbind(qp->send_cq);
		atomic_store(&qp->send_cq->bound, false);
		mana_sq_fini(qp);
	} else {
		for (i = 0; i < qp->ind_table->size; i++) {
			struct mana_wq *wq = qp->ind_table->wqs[i];
			struct mana_cq *cq = to_mcq(wq->ibv_wq.cq);

			wq->wqid = UINT32_MAX;
			cq->cqid = cq->rnic_cqid;
			mana_cq_unbind(cq);
			atomic_store(&cq->bound, false);
		}
	}
	if (pd->protection_domain)
		atomic_fetch_sub(&pd->refs, 1);
	mana_free_buf(&qp->sq_buf);
	free(qp);
	return 0;
}

/*
 * mana_ib has no modify_qp for raw packet QPs: their hardware queues work
 * from creation.  Portable code still walks RESET→INIT→RTR→RTS, so the
 * state is tracked here and the port checked.
 */
int mana_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask)
{
	const int known = IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_PORT;
	struct mana_qp *qp = to_mqp(ibqp);

	if (!attr)
		return EINVAL;
	if (mana_qp_type_rnic(ibqp->qp_type))
		return mana_rc_modify_qp(ibqp, attr, attr_mask);
	if (attr_mask & ~known) {
		mana_err(ibqp->context,
			 "raw QPs support only state and port attributes (mask 0x%x)",
			 attr_mask);
		return EOPNOTSUPP;
	}
	if ((attr_mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != ibqp->state) {
		mana_err(ibqp->context, "QP is in state %d, not %d", ibqp->state,
			 attr->cur_qp_state);
		return EINVAL;
	}
	if ((attr_mask & IBV_QP_PORT) && attr->port_num != qp->port) {
		mana_err(ibqp->context, "QP is bound to port %u, not %u",
			 qp->port, attr->port_num);
		return EINVAL;
	}
	if (attr_mask & IBV_QP_STATE) {
		if (attr->qp_state > IBV_QPS_ERR) {
			mana_err(ibqp->context, "invalid QP state %d",
				 attr->qp_state);
			return EINVAL;
		}
		ibqp->state = attr->qp_state;
		/* an SQ in error flushes its outstanding work through the CQ */
		qp->flushing = attr->qp_state == IBV_QPS_ERR;
	}
	return 0;
}

int mana_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
		  struct ibv_qp_init_attr *init_attr)
{
	struct mana_qp *qp = to_mqp(ibqp);

	if (!attr || !init_attr)
		return EINVAL;
	if (mana_qp_type_rnic(ibqp->qp_type))
		return mana_rc_query_qp(ibqp, attr, attr_mask, init_attr);
	/*
	 * mana_ib has no query_qp: the provider answers what it tracks (raw
	 * queues run from creation; the state is the one modify_qp walked,
	 * ERR after a device fatal) and every attribute whatever the mask.
	 */
	memset(attr, 0, sizeof(*attr));
	memset(init_attr, 0, sizeof(*init_attr));
	attr->qp_state = mana_ctx_fatal(ibqp->context) ? IBV_QPS_ERR : ibqp->state;
	attr->cur_qp_state = attr->qp_state;
	attr->port_num = qp->port;
	attr->cap = qp->cap;
	init_attr->qp_context = ibqp->qp_context;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->cap = qp->cap;
	init_attr->qp_type = ibqp->qp_type;
	init_attr->sq_sig_all = qp->sq_sig_all;
	return 0;
}

int mana_init_obj_qp(struct ibv_qp *ibqp, struct manadv_qp *out)
{
	struct mana_qp *qp;
	void *db;

	if (!ibqp || !out || !mana_is_mana_context(ibqp->context))
		return EINVAL;
	qp = to_mqp(ibqp);
	if (qp->kind != MANA_QP_RAW_SQ)
		return EINVAL;
	db = mana_get_db_page(to_mctx(ibqp->context));
	if (!db)
		return errno ? errno : EIO;
	out->sq_buf = qp->sq_buf.addr;
	out->sq_count = qp->max_send_wr;
	out->sq_size = qp->sq_buf.size;
	out->sq_id = qp->sq_id;
	out->tx_vp_offset = qp->tx_vp_offset;
	out->db_page = db;
	return 0;
}
