// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Raw packet objects as mana_ib creates them: CQ, WQ, RWQ indirection
 * table, raw send QP and RSS QP, the port's vport and its RX steering,
 * and the hardware queues (device layer) each QP brings into being.
 */
#include "kernel.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "emulator/device/device.h"
#include "emulator/core/emu_defs.h"
#include "emulator/mana_emu.h"
#include "providers/mana/gdma.h"
#include "emulator/device/trap.h"
#include "emulator/core/vm.h"
#include "emulator/lib/libc.h"

/*
 * Driver input of at least @min bytes (EINVAL), copied and zero-filled.
 * What lies past the structure: robust-udata kernels
 * (ib_copy_validate_udata_in) refuse anything but zeros with EOPNOTSUPP;
 * older ones (ib_copy_from_udata of min(size, inlen)) never read it.
 */
int udata_in(const struct emu_udata *uhw, void *dst, size_t size, size_t min)
{
	size_t n = uhw->inlen < size ? uhw->inlen : size;
	int ret;

	memset(dst, 0, size);
	if (uhw->inlen < min)
		return -EINVAL;
	if (uhw->inlen > size && kernel_era()->robust_udata) {
		ret = emu_user_is_cleared(emu_user_off(uhw->inbuf, size),
					  uhw->inlen - size);
		if (ret <= 0)
			return ret < 0 ? ret : -EOPNOTSUPP;
	}
	return emu_copy_from_user(dst, uhw->inbuf, n);
}

/*
 * A queue buffer as mana_ib_create_zero_offset_dma_region() takes it:
 * page aligned (EINVAL), pinned with write access (EFAULT, ENOMEM).  WQ
 * buffers must also be a power of two of at least a page, because the
 * hardware wraps ring offsets with a mask.
 */
int queue_umem(uint64_t addr, uint64_t size, bool ring, uint64_t *pinned)
{
	if (!size || addr & (EMU_PAGE_SIZE - 1))
		return -EINVAL;
	if (ring && (size < EMU_PAGE_SIZE || size > UINT32_MAX ||
		     (size & (size - 1))))
		return -EINVAL;
	return umem_check(addr, size, true, pinned);
}

static void cq_release(struct emu_obj *obj)
{
	struct emu_cq *cq = (struct emu_cq *)obj;
	struct emu_event_file *ev = cq->channel;

	emu_dev.pinned_bytes -= pinned_span(cq->buf_addr,
					    (uint64_t)cq->cqe * GDMA_CQE_SIZE);
	emu_rnic_cq_destroy(cq);
	if (!ev)
		return;
	event_records_drop_cq(ev, cq);
	if (!--ev->cq_refs && ev->app_closed)
		free(ev);
}

/*
 * mana_ib_create_cq(): on the ETH device no hardware CQ until a QP; with
 * the RNIC flag (mid era) the hardware CQ now, its id in the response.  A
 * raw QP may still use an RNIC CQ: it gets a second hardware CQ on the
 * same buffer (cq->hw), as the mid-era kernel made one.
 */
int emu_cq_create(struct emu_ucontext *ctx, const struct emu_cq_req *req,
		  const struct emu_udata *uhw, struct emu_cq **out)
{
	struct mana_ib_create_cq_resp resp = { .cqid = UINT32_MAX };
	struct mana_ib_create_cq ucmd;
	uint64_t pinned;
	const struct emu_ibdev *d;
	struct emu_cq *cq;
	bool rnic;
	int ret;

	ret = udata_in(uhw, &ucmd, sizeof(ucmd), MANA_IB_CREATE_CQ_V1_LEN);
	if (ret)
		return ret;
	/* robust udata: comp_mask (the old flags) with unknown bits */
	if (kernel_era()->robust_udata &&
	    (ucmd.comp_mask & ~MANA_IB_CREATE_RNIC_CQ))
		return -EOPNOTSUPP;
	/*
	 * An RNIC CQ is not bound by max_qp_wr.  Before 7.0 the flag
	 * decides (on a device with RNIC objects); from 7.0 the device type
	 * (the ETH device ignores the flag, on the RNIC every CQ is one).
	 */
	d = emu_ibdev_of(ctx->file);
	rnic = d->rnic_cq_always ||
	       (!d->rnic_cq_never && d->rnic &&
		(ucmd.flags & MANA_IB_CREATE_RNIC_CQ));
	if (!req->cqe || (!rnic && req->cqe > emu_dev.max_qp_wr) ||
	    req->cqe > UINT32_MAX / GDMA_CQE_SIZE)
		return -EINVAL;
	ret = queue_umem(ucmd.buf_addr, (uint64_t)req->cqe * GDMA_CQE_SIZE,
			 false, &pinned);
	if (ret)
		return ret;
	cq = obj_create(ctx, EMU_OBJ_CQ, sizeof(*cq), NULL, 0, cq_release);
	if (!cq)
		return -ENOMEM;
	emu_dev.pinned_bytes += pinned;
	cq->user_handle = req->user_handle;
	cq->buf_addr = ucmd.buf_addr;
	cq->cqe = req->cqe;
	cq->comp_vector = req->comp_vector % emu_dev.num_comp_vectors;
	cq->channel = req->channel;
	if (cq->channel)
		cq->channel->cq_refs++;
	ret = rnic ? emu_rnic_cq_create(cq) : 0;
	if (!ret && rnic)
		resp.cqid = cq->rnic_hw->id;
	/* before 6.10 create_cq had no response: the output stays as it was */
	if (!ret && kernel_era()->rnic_cq_flag)
		ret = emu_udata_respond(uhw, &resp, sizeof(resp));
	if (ret) {
		obj_free(&cq->obj);
		return ret;
	}
	*out = cq;
	return 0;
}

static void wq_release(struct emu_obj *obj)
{
	struct emu_wq *wq = (struct emu_wq *)obj;

	emu_dev.pinned_bytes -= pinned_span(wq->buf_addr, wq->buf_size);
}

/* mana_ib_create_wq(): the buffer only; the RQ comes with an RSS QP. */
int emu_wq_create(struct emu_pd *pd, struct emu_cq *cq,
		  const struct emu_wq_req *req, const struct emu_udata *uhw,
		  struct emu_wq **out)
{
	struct emu_obj *deps[2] = { &pd->obj, &cq->obj };
	struct mana_ib_create_wq ucmd;
	uint64_t pinned;
	struct emu_wq *wq;
	int ret;

	if (req->wq_type != IBV_WQT_RQ)
		return -EINVAL;
	ret = udata_in(uhw, &ucmd, sizeof(ucmd), sizeof(ucmd));
	if (ret)
		return ret;
	ret = queue_umem(ucmd.wq_buf_addr, ucmd.wq_buf_size, true, &pinned);
	if (ret)
		return ret;
	wq = obj_create(pd->obj.ctx, EMU_OBJ_WQ, sizeof(*wq), deps, 2,
			wq_release);
	if (!wq)
		return -ENOMEM;
	emu_dev.pinned_bytes += pinned;
	wq->user_handle = req->user_handle;
	wq->buf_addr = ucmd.wq_buf_addr;
	wq->buf_size = ucmd.wq_buf_size;
	wq->max_wr = req->max_wr;
	wq->max_sge = req->max_sge;
	wq->pd = pd;
	wq->cq = cq;
	*out = wq;
	return 0;
}

static void ind_tbl_release(struct emu_obj *obj)
{
	free(((struct emu_ind_tbl *)obj)->wqs);
}

/* The table holds a use reference on each entry's WQ (duplicates too). */
int emu_ind_tbl_create(struct emu_ucontext *ctx, uint32_t log_size,
		       struct emu_wq **wqs, struct emu_ind_tbl **out)
{
	uint32_t i, n = 1u << log_size;
	struct emu_obj **deps;
	struct emu_ind_tbl *t;

	deps = calloc(n, sizeof(*deps));
	if (!deps)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		deps[i] = &wqs[i]->obj;
	t = obj_create(ctx, EMU_OBJ_IND_TBL, sizeof(*t), deps, n,
		       ind_tbl_release);
	free(deps);
	if (!t)
		return -ENOMEM;
	t->wqs = calloc(n, sizeof(*t->wqs));
	if (!t->wqs) {
		obj_free(&t->obj);
		return -ENOMEM;
	}
	memcpy(t->wqs, wqs, n * sizeof(*wqs));
	t->log_size = log_size;
	*out = t;
	return 0;
}

/*
 * mana_ib_cfg_vport(): the first QP of a PD takes the port's vport
 * (mana_cfg_vport: EBUSY while the netdev or anyone else holds it); from
 * 7.2 the PD is bound to that port from then on (another port: EINVAL).
 */
static int vport_get(struct emu_pd *pd, unsigned int port)
{
	struct emu_port *p = &emu_dev.ports[port - 1];
	bool refs = kernel_era()->vport_refs;
	int ret;

	/*
	 * Without vport_refs (6.2 .. 7.1, see era.c) the PD's later QPs skip the
	 * configuration whatever their port, and the QP answers any
	 * mana_cfg_vport() failure with ENODEV.
	 */
	if (pd->vport_use_count) {
		if (pd->vport_port != port && refs)
			return -EINVAL;
		ret = refs ? 0 : emu_port_attach(port);
		if (!ret)
			pd->vport_use_count++;
		return ret;
	}
	/* the VF, another PD, or another process of the VM holds it */
	if (emu_port_netdev_open(port) || p->vport.pd ||
	    emu_port_vport_claim(port))
		return refs ? -EBUSY : -ENODEV;
	ret = emu_port_attach(port);
	if (ret) {
		emu_port_vport_release(port);
		return ret;
	}
	p->vport.pd = pd;
	pd->vport_port = port;
	pd->vport_use_count = 1;
	return 0;
}

static void vport_put(struct emu_pd *pd)
{
	if (--pd->vport_use_count)
		return;
	emu_port_vport_release(pd->vport_port);
	emu_dev.ports[pd->vport_port - 1].vport.pd = NULL;
	pd->vport_port = 0;
}

/*
 * The CQ's DMA region is gone once a queue took it or the CQ became an
 * RNIC CQ (mana_ib_gd_create_cq() hands it to the CQ handle): a raw or
 * RSS queue on it gets GDMA_INVALID_DMA_REGION to CREATE_WQ_OBJ.
 */
static bool cq_region_taken(const struct emu_cq *cq)
{
	return cq->hw || cq->rnic_hw;
}

/*
 * Hardware CQ for a verbs CQ being bound to a new SQ or RQ.  mana_ib
 * gives CREATE_WQ_OBJ the CQ's size as cqe * 64 bytes, and the device
 * refuses a queue smaller than a page (MANA_MIN_QSIZE: the drivers never
 * make a smaller one, rdma-core's libmana and DPDK never ask for one;
 * mana-vfio refuses it too): EPROTO, the status mana_ib turns it into.
 */
static struct emu_hwq *hw_cq_create(struct emu_ucontext *ctx,
				    struct emu_cq *cq, uint32_t port)
{
	struct emu_hwq_req r = {
		.type = EMU_HWQ_CQ, .ctx = ctx, .buf = cq->buf_addr,
		.size = cq->cqe * GDMA_CQE_SIZE, .port = port, .ucq = cq,
		.count = cq->cqe,
	};
	struct emu_hwq *q;

	if (r.size < MANA_MIN_QSIZE) {
		errno = EPROTO;
		return NULL;
	}
	q = emu_hwq_create(&r);

	if (q)
		cq->hw = q;
	return q;
}

static void hw_cq_destroy(struct emu_cq *cq)
{
	if (!cq->hw)
		return;
	emu_hwq_destroy(cq->hw);
	cq->hw = NULL;
}

/* MANA's vport offset for the short TX OOB; nonzero to catch a zero. */
static uint32_t port_tx_vp_offset(uint32_t port)
{
	return port;
}

/* mana_disable_vport_rx(), then the RQs (and their CQs) go. */
static void rss_unprogram(struct emu_qp *qp)
{
	struct emu_vport *v = &emu_dev.ports[qp->port - 1].vport;
	uint32_t i, n = 1u << qp->tbl->log_size;

	if (v->rss_qp == qp) {
		emu_port_rx_program(qp->port, NULL);
		v->rss_qp = NULL;
	}
	for (i = 0; i < n && qp->rqs; i++) {
		struct emu_wq *wq = qp->tbl->wqs[i];

		if (!qp->rqs[i])
			continue;
		hw_cq_destroy(wq->cq);
		emu_hwq_destroy(qp->rqs[i]);
		wq->hw = NULL;
	}
	free(qp->rqs);
	qp->rqs = NULL;
}

/* Tolerates a half-built QP: whatever exists is undone. */
static void qp_release(struct emu_obj *obj)
{
	struct emu_qp *qp = (struct emu_qp *)obj;
	struct emu_cq *cq;

	if (qp->rss) {
		rss_unprogram(qp);
	} else if (qp->sq) {
		cq = qp->sq->cq->ucq;
		emu_dev.pinned_bytes -= pinned_span(qp->sq->buf, qp->sq->size);
		emu_hwq_destroy(qp->sq);
		hw_cq_destroy(cq);
	}
	if (qp->pd)
		vport_put(qp->pd);
}

static struct emu_qp *qp_obj(struct emu_ucontext *ctx,
			     const struct emu_qp_req *req)
{
	struct emu_obj *deps[4];
	unsigned int n = 0;

	deps[n++] = &req->pd->obj;
	if (req->send_cq)
		deps[n++] = &req->send_cq->obj;
	if (req->recv_cq)
		deps[n++] = &req->recv_cq->obj;
	if (req->tbl)
		deps[n++] = &req->tbl->obj;
	return obj_create(ctx, EMU_OBJ_QP, sizeof(struct emu_qp), deps, n,
			  qp_release);
}

static int sq_check(const struct emu_qp_req *req,
		    const struct mana_ib_create_qp *ucmd)
{
	if (req->max_send_wr > emu_dev.max_qp_wr)
		return -EINVAL;
	if (req->max_send_sge > GDMA_MAX_TX_SGE)
		return -EINVAL;
	if (!emu_port_valid(ucmd->port))
		return -EINVAL;
	return req->send_cq ? 0 : -EINVAL;
}

static int sq_hw_create(struct emu_qp *qp, const struct emu_qp_req *req,
			const struct mana_ib_create_qp *ucmd)
{
	struct emu_hwq_req r = {
		.type = EMU_HWQ_SQ, .ctx = qp->obj.ctx,
		.buf = ucmd->sq_buf_addr, .size = ucmd->sq_buf_size,
		.port = ucmd->port, .pd = req->pd,
		.tx_vp_offset = port_tx_vp_offset(ucmd->port),
	};

	r.cq = hw_cq_create(qp->obj.ctx, req->send_cq, ucmd->port);
	if (!r.cq)
		return -errno;
	qp->sq = emu_hwq_create(&r);
	if (!qp->sq) {
		hw_cq_destroy(req->send_cq);
		return -errno;
	}
	qp->qp_num = qp->sq->id;
	return 0;
}

/* mana_ib_create_qp_raw(), checks in its order */
static int qp_create_raw(struct emu_ucontext *ctx,
			 const struct emu_qp_req *req,
			 const struct emu_udata *uhw, struct emu_qp **out)
{
	struct mana_ib_create_qp_resp resp = {};
	struct mana_ib_create_qp ucmd;
	uint64_t pinned;
	struct emu_qp *qp;
	int ret;

	ret = udata_in(uhw, &ucmd, sizeof(ucmd), sizeof(ucmd));
	if (!ret)
		ret = sq_check(req, &ucmd);
	if (!ret)
		ret = vport_get(req->pd, ucmd.port);
	if (ret)
		return ret;
	ret = queue_umem(ucmd.sq_buf_addr, ucmd.sq_buf_size, true, &pinned);
	if (ret)
		goto err_vport;
	/*
	 * One CQ per queue: mana_ib hands CREATE_WQ_OBJ the CQ's DMA region,
	 * which the first queue took (GDMA_INVALID_DMA_REGION after it), so
	 * the device refuses the command (EPROTO) before
	 * mana_ib_install_cq_cb() could say EINVAL -- 6.12 and the newest.
	 */
	ret = -EPROTO;
	if (cq_region_taken(req->send_cq))
		goto err_vport;
	ret = -ENOMEM;
	qp = qp_obj(ctx, req);
	if (!qp)
		goto err_vport;
	qp->port = ucmd.port;
	qp->pd = req->pd;		/* the QP owns the vport reference now */
	ret = sq_hw_create(qp, req, &ucmd);
	if (ret)
		goto err_qp;
	emu_dev.pinned_bytes += pinned;
	resp.sqid = qp->sq->id;
	resp.cqid = qp->sq->cq->id;
	resp.tx_vp_offset = qp->sq->tx_vp_offset;
	ret = emu_udata_respond(uhw, &resp, sizeof(resp));
	if (ret)
		goto err_qp;
	*out = qp;
	return 0;

err_qp:
	obj_free(&qp->obj);
	return ret;
err_vport:
	vport_put(req->pd);
	return ret;
}

static int rss_check(const struct emu_qp_req *req,
		     const struct mana_ib_create_qp_rss *ucmd)
{
	if (req->max_recv_wr > emu_dev.max_qp_wr)
		return -EINVAL;
	if (req->max_recv_sge > GDMA_MAX_RX_SGE)
		return -EINVAL;
	if ((1u << req->tbl->log_size) > EMU_RSS_INDIR)
		return -EINVAL;
	if (ucmd->rx_hash_function != MANA_IB_RX_HASH_FUNC_TOEPLITZ)
		return -EINVAL;
	if (ucmd->rx_hash_key_len > EMU_RSS_KEY_LEN)
		return -EINVAL;
	if (!emu_port_valid(ucmd->port))
		return -EINVAL;
	return 0;
}

/*
 * The RSS QP's hold on the vport (7.2, vport_refs): a reference on the
 * vport a raw QP of the same PD configured on that port (none, or another
 * port: EINVAL), and "Only one RSS QP per vport" (EBUSY).  Before, none:
 * mana_ib programmed the port's RX steering without looking at who held
 * the vport, and a second RSS QP reprograms it.
 */
static int rss_vport_get(struct emu_pd *pd, unsigned int port)
{
	if (!kernel_era()->vport_refs)
		return emu_port_attach(port);
	if (!pd->vport_use_count || pd->vport_port != port)
		return -EINVAL;
	if (emu_dev.ports[port - 1].vport.rss_qp)
		return -EBUSY;
	pd->vport_use_count++;
	return 0;
}

/*
 * Each RQ needs its WQ's and its CQ's DMA regions, which an earlier RX
 * object (of this table or of another QP) took: the device refuses
 * CREATE_WQ_OBJ over the invalid region (EPROTO, as for a raw SQ).
 */
static int rss_check_cqs(const struct emu_ind_tbl *t)
{
	uint32_t i, j, n = 1u << t->log_size;

	for (i = 0; i < n; i++) {
		if (cq_region_taken(t->wqs[i]->cq) || t->wqs[i]->hw)
			return -EPROTO;
		for (j = 0; j < i; j++)
			if (t->wqs[j]->cq == t->wqs[i]->cq)
				return -EPROTO;
	}
	return 0;
}

static int rss_hw_create(struct emu_qp *qp,
			 struct mana_ib_create_qp_rss_resp *resp)
{
	uint32_t i, n = 1u << qp->tbl->log_size;

	qp->rqs = calloc(n, sizeof(*qp->rqs));
	if (!qp->rqs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct emu_wq *wq = qp->tbl->wqs[i];
		struct emu_hwq_req r = {
			.type = EMU_HWQ_RQ, .ctx = qp->obj.ctx,
			.buf = wq->buf_addr, .size = wq->buf_size,
			.port = qp->port, .pd = wq->pd,
		};

		r.cq = hw_cq_create(qp->obj.ctx, wq->cq, qp->port);
		if (!r.cq)
			return -errno;
		qp->rqs[i] = emu_hwq_create(&r);
		if (!qp->rqs[i]) {
			hw_cq_destroy(wq->cq);
			return -errno;
		}
		wq->hw = qp->rqs[i];
		resp->entries[i].cqid = r.cq->id;
		resp->entries[i].wqid = qp->rqs[i]->id;
	}
	return 0;
}

/*
 * MANA_CONFIG_VPORT_RX as mana_ib programs it: the user table replicated
 * over 64 entries, the last WQ as default, RSS only with more than one.
 */
static void rss_program(struct emu_qp *qp)
{
	struct emu_vport *v = &emu_dev.ports[qp->port - 1].vport;
	uint32_t k, n = 1u << qp->tbl->log_size;
	struct emu_port_rx rx = {
		.programmed = true,
		.rss_enabled = qp->tbl->log_size != 0,
		.num_entries = n,
		.default_rq = qp->rqs[n - 1],
		.fields_mask = qp->fields_mask,
	};

	for (k = 0; k < EMU_RSS_INDIR; k++)
		rx.indir[k] = qp->rqs[k % n];
	memcpy(rx.key, qp->key, sizeof(rx.key));
	emu_port_rx_program(qp->port, &rx);
	v->rss_qp = qp;
}

static void rss_key(struct emu_qp *qp,
		    const struct mana_ib_create_qp_rss *ucmd)
{
	uint32_t i;

	memcpy(qp->key, ucmd->rx_hash_key, ucmd->rx_hash_key_len);
	if (ucmd->rx_hash_key_len)
		return;
	/* netdev_rss_key_fill(): any key will do */
	for (i = 0; i < EMU_RSS_KEY_LEN; i++)
		qp->key[i] = (uint8_t)random();
}

/* mana_ib_create_qp_rss() */
static int qp_create_rss(struct emu_ucontext *ctx,
			 const struct emu_qp_req *req,
			 const struct emu_udata *uhw, struct emu_qp **out)
{
	struct mana_ib_create_qp_rss_resp resp = {};
	struct mana_ib_create_qp_rss ucmd;
	struct emu_qp *qp;
	int ret;

	ret = udata_in(uhw, &ucmd, sizeof(ucmd), sizeof(ucmd));
	if (!ret)
		ret = rss_check(req, &ucmd);
	if (!ret)
		ret = rss_vport_get(req->pd, ucmd.port);
	if (ret)
		return ret;
	ret = rss_check_cqs(req->tbl);
	if (ret)
		goto err_vport;
	ret = -ENOMEM;
	qp = qp_obj(ctx, req);
	if (!qp)
		goto err_vport;
	qp->rss = true;
	qp->port = ucmd.port;
	/* the QP owns the vport reference, if the era takes one */
	qp->pd = kernel_era()->vport_refs ? req->pd : NULL;
	qp->tbl = req->tbl;
	qp->fields_mask = ucmd.rx_hash_fields_mask;
	rss_key(qp, &ucmd);
	ret = rss_hw_create(qp, &resp);
	if (ret)
		goto err_qp;
	rss_program(qp);
	qp->qp_num = qp->rqs[0]->id;
	resp.num_entries = 1u << req->tbl->log_size;
	ret = emu_udata_respond(uhw, &resp, sizeof(resp));
	if (ret)
		goto err_qp;
	*out = qp;
	return 0;

err_qp:
	obj_free(&qp->obj);
	return ret;
err_vport:
	if (kernel_era()->vport_refs)
		vport_put(req->pd);
	return ret;
}

/* mana_ib_create_qp() on the ETH device: raw packet QPs only. */
int emu_qp_create(struct emu_ucontext *ctx, const struct emu_qp_req *req,
		  const struct emu_udata *uhw, struct emu_qp **out)
{
	const struct emu_ibdev *d = emu_ibdev_of(ctx->file);
	const struct emu_era *e = kernel_era();

	if (req->qp_type == IBV_QPT_RC && d->rnic && e->rc_qp)
		return emu_rc_qp_create(ctx, req, uhw, out);
	/* 7.2: UC QPs on the RNIC; before, the switch's default: EINVAL */
	if (req->qp_type == IBV_QPT_UC && d->rnic && e->uc_qp)
		return emu_rc_qp_create(ctx, req, uhw, out);
	/* 6.14 on: UD QPs are for kernel users, userspace gets EOPNOTSUPP */
	if (req->qp_type == IBV_QPT_UD && e->ud_kernel_only)
		return -EOPNOTSUPP;
	/* split era: raw packet QPs on the ETH device only */
	if (req->qp_type != IBV_QPT_RAW_PACKET || !d->raw)
		return -EINVAL;
	if (req->tbl)
		return qp_create_rss(ctx, req, uhw, out);
	return qp_create_raw(ctx, req, uhw, out);
}
