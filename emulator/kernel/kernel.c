/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Emulated mana_ib (ETH device, raw packet only) and the parts of the
 * uverbs core that own objects: device and port queries, files, contexts,
 * handles, use counts, PDs.  The rest of the object model: event.c (event
 * files), mr.c (MRs), raw_qp.c (CQ, WQ, indirection table, QPs, vports),
 * doorbell.c (the doorbell page mapping).  See kernel.h for the object
 * model; every function runs with emu.lock held.
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
#include <rdma/mana-abi.h>

#include "emulator/device/device.h"
#include "emulator/core/emu_defs.h"
#include "emulator/mana_emu.h"
#include "providers/mana/gdma.h"
#include "emulator/device/trap.h"
#include "emulator/core/vm.h"
#include "emulator/lib/libc.h"

struct emu_device emu_dev;

/* Live object counters for the test API. */
static uint32_t obj_counts[EMU_OBJ_TYPES];
static uint32_t ctx_count;
uint32_t kernel_comp_channel_count;

/* Live contexts; serials are never reused, so a stale trap cookie misses. */
struct emu_ucontext *kernel_contexts;
static uint64_t next_serial = 1;

/* Doorbell page 0 belongs to the kernel's own netdev. */
#define DB_PAGES 1024
static bool db_used[DB_PAGES] = { [0] = true };

static uint32_t next_pdn = 0x10000;	/* long PDNs; short ones below */

/* ---- what the device asks of the kernel (device.h) -------------------- */

static unsigned int dev_ucontext_count(void)
{
	return ctx_count;
}

static void dev_cq_event(struct emu_cq *cq)
{
	struct ib_uverbs_comp_event_desc desc = {
		.cq_handle = cq->user_handle,
	};

	/* 6.2 attached raw CQs to no EQ: the interrupt never came */
	if (!kernel_era()->raw_cq_events)
		return;
	if (cq->channel)
		emu_event_post(cq->channel, cq, &desc, sizeof(desc));
}

static uintptr_t dev_db_page(const struct emu_ucontext *ctx)
{
	return (uintptr_t)ctx->db_page;
}

static const struct emu_device_ops device_ops = {
	.ucontext_find = emu_ucontext_find,
	.ucontext_count = dev_ucontext_count,
	.cq_event = dev_cq_event,
	.device_fatal = emu_post_device_fatal,
	.db_page = dev_db_page,
};

void emu_kernel_init(const struct mana_emu_options *opts)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int port;

	emu_dev.opts = opts;
	emu_dev.nports = opts->ports;
	for (emu_dev.nibdevs = 0;
	     emu_ibdev_get(opts, emu_dev.nibdevs,
			   &emu_dev.ibdev[emu_dev.nibdevs]);
	     emu_dev.nibdevs++)
		;
	for (port = 1; port <= opts->ports; port++)
		mana_emu_port_mac(opts, port, emu_dev.ports[port - 1].mac);
	/* 6.2's probe set no node GUID (the core reports 0) */
	emu_dev.node_guid = emu_era_get(opts->kernel)->ib_netdev ?
			    emu_mac_to_guid(emu_dev.ports[0].mac) : 0;
	emu_dev.driver_id = opts->driver_id;
	/* 6.2 had fixed limits, the adapter's from 6.8 */
	emu_dev.max_qp_wr = emu_era_get(opts->kernel)->adapter_caps ?
			    opts->max_qp_wr : MANA_6_2_MAX_QP_WR;
	/*
	 * mana: one completion vector per queue pair of the adapter, <= 64;
	 * before 6.10 one (6.2's raw CQs had no EQ).
	 */
	if (emu_era_get(opts->kernel)->comp_vectors)
		emu_dev.num_comp_vectors = cpus < 1 ? 1 : cpus > 64 ? 64 : cpus;
	else
		emu_dev.num_comp_vectors = 1;
	emu_device_set_ops(&device_ops);
}

/* ---- udata helpers ---------------------------------------------------- */

/* Driver input must be absent or all zero (ib_is_udata_in_empty). */
int emu_udata_in_empty(const struct emu_udata *udata)
{
	int ret;

	if (!udata->inlen)
		return 0;
	ret = emu_user_is_cleared(udata->inbuf, udata->inlen);
	if (ret < 0)
		return ret;
	return ret ? 0 : -EOPNOTSUPP;
}

/* Copy a driver response, truncated to what the caller provided. */
int emu_udata_respond(const struct emu_udata *udata, const void *src,
		      size_t len)
{
	size_t n = len < udata->outlen ? len : udata->outlen;

	return emu_copy_to_user(udata->outbuf, src, n);
}

/* ---- query verbs --------------------------------------------------------- */

/*
 * mana_ib_query_device() before the full answer: the limits only, every
 * other attribute left as the core zeroed it (vendor ids, page sizes,
 * GUIDs and raw_packet_caps 0; max_sge the core's min(send 30, recv 15)).
 * 6.2's limits are constants, 6.8's the adapter's.
 */
static void query_device_limits(const struct emu_ibdev *d,
				struct ib_uverbs_query_device_resp *b)
{
	bool caps = kernel_era()->adapter_caps;

	b->max_qp = caps ? MANA_MAX_QP : MANA_6_2_MAX_QP;
	b->max_qp_wr = emu_dev.max_qp_wr;
	b->max_cqe = emu_dev.max_qp_wr;
	b->max_cq = caps ? MANA_MAX_CQ : 0;
	b->max_mr = MANA_MAX_MR;
	b->max_mr_size = UINT64_MAX;
	b->max_sge = MANA_MAX_SGE;
	b->phys_port_cnt = d->nports;
}

void emu_query_device(const struct emu_ibdev *d,
		      struct ib_uverbs_ex_query_device_resp *resp)
{
	struct ib_uverbs_query_device_resp *b = &resp->base;

	memset(resp, 0, sizeof(*resp));
	if (!kernel_era()->device_attrs) {
		query_device_limits(d, b);
		return;
	}
	b->fw_ver = EMU_FW_VER;
	b->node_guid = htobe64(emu_dev.node_guid);
	b->sys_image_guid = htobe64(emu_dev.node_guid);
	b->max_mr_size = UINT64_MAX;
	b->page_size_cap = MANA_PAGE_SZ_CAP;
	/* vendor ids and raw_packet_caps: from the split (6.16), else 0 */
	if (kernel_era()->device_ids)
		b->vendor_id = MANA_PCI_VENDOR_ID;
	b->vendor_part_id = d->vendor_part_id;
	b->hw_ver = EMU_HW_VER;
	b->max_qp = MANA_MAX_QP;
	b->max_qp_wr = emu_dev.max_qp_wr;
	b->device_cap_flags = EMU_DEVICE_CAP_FLAGS;
	b->max_sge = MANA_MAX_SGE;	/* min(send 30, recv 15) */
	b->max_sge_rd = MANA_MAX_SGE;
	b->max_cq = MANA_MAX_CQ;
	b->max_cqe = emu_dev.max_qp_wr;
	b->max_mr = MANA_MAX_MR;
	b->max_pd = MANA_MAX_PD;
	b->atomic_cap = IBV_ATOMIC_NONE;
	b->max_ah = 0x7fffffff;
	b->max_pkeys = 1;
	b->local_ca_ack_delay = MANA_CA_ACK_DELAY;
	b->phys_port_cnt = d->nports;
	resp->device_cap_flags_ex = EMU_DEVICE_CAP_FLAGS;
	/* the ETH role only; the RC attributes on the RNIC only */
	if (d->raw && kernel_era()->device_ids)
		resp->raw_packet_caps = IBV_RAW_PACKET_CAP_IP_CSUM;
	if (d->rnic)
		emu_rnic_query_device(resp);
}

bool emu_port_valid(unsigned int port)
{
	return port >= 1 && port <= emu_dev.nports;
}

bool emu_ibdev_port_valid(const struct emu_ibdev *d, unsigned int port)
{
	return port >= 1 && port <= d->nports;
}

/*
 * mana_ib reports the port as up only while its netdev is running with
 * carrier (research: mana-kernel-and-gdma.md 2.10, 4): DPDK's usual setup,
 * the VF interface down, reads DOWN/Disabled although raw QPs work.
 */
void emu_port_state(unsigned int port, uint8_t *state, uint8_t *phys_state)
{
	bool up = emu_port_netdev_running(port);

	/* before 6.10 query_port filled nothing: NOP (0), phys_state 0 */
	if (!kernel_era()->port_attrs) {
		*state = 0;
		*phys_state = 0;
		return;
	}
	*state = up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	*phys_state = up ? 5 : 3;	/* LinkUp : Disabled */
}

/* query_port's width and speed: see emu_era_port_speed() */
void emu_port_width_speed(unsigned int port, uint8_t *width, uint8_t *speed)
{
	(void)port;	/* one SKU: every port of the adapter alike */
	emu_era_port_speed(kernel_era(), EMU_DEV_SKU_SPEED_MBPS, width, speed);
}

int emu_query_port(const struct emu_ibdev *d, unsigned int port,
		   struct ib_uverbs_query_port_resp *resp)
{
	if (!emu_ibdev_port_valid(d, port))
		return -EINVAL;
	memset(resp, 0, sizeof(*resp));
	/*
	 * Before 6.10 mana_ib_query_port() returned 0 and filled nothing
	 * and had no get_link_layer (both came with "implement port
	 * parameters"); the core's fallback for an IB CA node is InfiniBand
	 * (inferred: the core's fallback not read at 6.2).
	 */
	if (!kernel_era()->port_attrs) {
		resp->link_layer = IB_LINK_LAYER_INFINIBAND;
		return 0;
	}
	emu_port_state(port, &resp->state, &resp->phys_state);
	resp->max_mtu = IBV_MTU_4096;
	resp->active_mtu = emu_port_active_mtu(port);
	resp->pkey_tbl_len = 1;
	emu_port_width_speed(port, &resp->active_width, &resp->active_speed);
	resp->link_layer = IB_LINK_LAYER_ETHERNET;
	emu_rnic_query_port(d, port, resp);
	return 0;
}

/* ---- event files ---------------------------------------------------------- */
/* ---- objects --------------------------------------------------------------- */

static int handles_grow(struct emu_ucontext *ctx)
{
	uint32_t n = ctx->nhandles ? ctx->nhandles * 2 : 16;
	struct emu_obj **p = realloc(ctx->handles, n * sizeof(*p));

	if (!p)
		return -ENOMEM;
	memset(p + ctx->nhandles, 0, (n - ctx->nhandles) * sizeof(*p));
	ctx->handles = p;
	ctx->nhandles = n;
	return 0;
}

/* Lowest free handle, like the kernel's per-file xarray. */
static int handle_alloc(struct emu_ucontext *ctx, struct emu_obj *obj)
{
	uint32_t h;

	for (h = 0; h < ctx->nhandles && ctx->handles[h]; h++)
		;
	if (h == ctx->nhandles && handles_grow(ctx))
		return -ENOMEM;
	ctx->handles[h] = obj;
	obj->handle = h;
	return 0;
}

/*
 * Allocate and commit an object of size bytes (struct emu_obj first),
 * taking a use reference on each of deps.
 */
void *obj_create(struct emu_ucontext *ctx, enum emu_obj_type type,
		 size_t size, struct emu_obj *const *deps,
		 unsigned int ndeps, void (*release)(struct emu_obj *))
{
	struct emu_obj *obj = calloc(1, size);
	unsigned int i;

	if (!obj)
		return NULL;
	if (ndeps) {
		obj->deps = calloc(ndeps, sizeof(*obj->deps));
		if (!obj->deps)
			goto err;
		memcpy(obj->deps, deps, ndeps * sizeof(*deps));
	}
	if (handle_alloc(ctx, obj))
		goto err;
	obj->type = type;
	obj->ctx = ctx;
	obj->ndeps = ndeps;
	obj->release = release;
	for (i = 0; i < ndeps; i++)
		deps[i]->usecnt++;
	obj->prev = ctx->last;
	if (ctx->last)
		ctx->last->next = obj;
	else
		ctx->first = obj;
	ctx->last = obj;
	obj_counts[type]++;
	return obj;
err:
	free(obj->deps);
	free(obj);
	return NULL;
}

void obj_free(struct emu_obj *obj)
{
	struct emu_ucontext *ctx = obj->ctx;
	unsigned int i;

	for (i = 0; i < obj->ndeps; i++)
		obj->deps[i]->usecnt--;
	if (obj->prev)
		obj->prev->next = obj->next;
	else
		ctx->first = obj->next;
	if (obj->next)
		obj->next->prev = obj->prev;
	else
		ctx->last = obj->prev;
	ctx->handles[obj->handle] = NULL;
	obj_counts[obj->type]--;
	if (obj->release)
		obj->release(obj);
	free(obj->deps);
	free(obj);
}

/* Like the uverbs core: unknown handle ENOENT, wrong type EINVAL. */
struct emu_obj *emu_obj_lookup(struct emu_ucontext *ctx,
			       enum emu_obj_type type, uint64_t handle,
			       int *err)
{
	struct emu_obj *obj;

	if (!ctx || handle >= ctx->nhandles || !ctx->handles[handle]) {
		*err = -ENOENT;
		return NULL;
	}
	obj = ctx->handles[handle];
	if (obj->type != type) {
		*err = -EINVAL;
		return NULL;
	}
	return obj;
}

int emu_obj_destroy(struct emu_obj *obj)
{
	if (obj->usecnt)
		return -EBUSY;
	obj_free(obj);
	return 0;
}

/* ---- PD -------------------------------------------------------------------- */

/*
 * mana_ib_alloc_pd's driver data (7.1): {comp_mask, reserved} checked as
 * ib_copy_validate_udata_in_cm() does (shorter than the structure EINVAL,
 * a nonzero tail or an unknown comp_mask bit EOPNOTSUPP).  Empty input is
 * taken as all zero, so a provider that sends none (rdma-core v64) still
 * gets a PD (inferred: the kernel stays compatible with it).
 */
static int pd_udata_in(const struct emu_udata *uhw, struct mana_ib_alloc_pd *req)
{
	int ret;

	memset(req, 0, sizeof(*req));
	if (!uhw->inlen)
		return 0;
	ret = udata_in(uhw, req, sizeof(*req), sizeof(*req));
	if (!ret && (req->comp_mask & ~MANA_IB_PD_SHORT_PDN))
		ret = -EOPNOTSUPP;
	return ret;
}

/*
 * PD numbers: short ones (16 bits, asked for with SHORT_PDN) and long
 * ones from separate ranges, so that a PD without the flag does not use
 * up the short range (inferred: the hardware's numbering is not public).
 */
#define SHORT_PDN_MAX 0xffffu
static uint32_t next_short_pdn = 1;

int emu_pd_alloc(struct emu_ucontext *ctx, const struct emu_udata *uhw,
		 struct emu_pd **out)
{
	struct mana_ib_alloc_pd_resp resp = {};
	struct mana_ib_alloc_pd req;
	bool pdn = kernel_era()->pdn;
	struct emu_pd *pd;
	int ret;

	/* before 7.1 mana_ib never looks at the PD's driver data */
	if (pdn) {
		ret = pd_udata_in(uhw, &req);
		if (ret)
			return ret;
		/* GDMA_CREATE_PD failing: the short range is used up */
		if ((req.comp_mask & MANA_IB_PD_SHORT_PDN) &&
		    next_short_pdn > SHORT_PDN_MAX)
			return -EPROTO;
	}
	pd = obj_create(ctx, EMU_OBJ_PD, sizeof(*pd), NULL, 0, NULL);
	if (!pd)
		return -ENOMEM;
	/* --vm: numbered VM-wide, as the device numbers them */
	if (pdn && (req.comp_mask & MANA_IB_PD_SHORT_PDN))
		pd->pdn = emu_vm_active() ? emu_vm_next(EMU_VM_SHORT_PDN) :
					    next_short_pdn++;
	else
		pd->pdn = emu_vm_active() ? emu_vm_next(EMU_VM_PDN) :
					    next_pdn++;
	resp.pdn = pd->pdn;
	ret = pdn ? emu_udata_respond(uhw, &resp, sizeof(resp)) : 0;
	if (ret) {
		obj_free(&pd->obj);
		return ret;
	}
	*out = pd;
	return 0;
}

/*
 * The test API's view of a PD (mana_emu.h): the number mana_ib gave it,
 * whether or not this era told the application.
 */
EMU_EXPORT int mana_emu_pd_number(int cmd_fd, uint32_t handle, uint32_t *pdn)
{
	struct emu_file *file;
	struct emu_obj *obj = NULL;
	int ret = -EBADF;

	pthread_mutex_lock(&emu.lock);
	file = emu_fd_obj(cmd_fd, EMU_FD_UVERBS);
	if (file)
		obj = emu_obj_lookup(file->ctx, EMU_OBJ_PD, handle, &ret);
	if (obj) {
		*pdn = ((struct emu_pd *)obj)->pdn;
		ret = 0;
	}
	pthread_mutex_unlock(&emu.lock);
	return ret;
}

/* ---- MR -------------------------------------------------------------------- */
/* ---- files and contexts ---------------------------------------------------- */

struct emu_file *emu_file_open(unsigned int devnum, int fd, bool writable)
{
	struct emu_file *file = calloc(1, sizeof(*file));

	if (!file)
		return NULL;
	file->fd = fd;
	file->devnum = devnum;
	file->writable = writable;
	if (emu_fd_register(fd, EMU_FD_UVERBS, file)) {
		free(file);
		return NULL;
	}
	file->vm_tag = emu_vm_file_open(devnum, writable);
	return file;
}

int emu_remote_file_cmd(struct emu_file *file)
{
	emu_log("fd %d: a command on a uverbs file of another process of the "
		"VM is not emulated (only mmap of its doorbell page): EIO",
		file->fd);
	return -EIO;
}

int emu_file_received(int fd, uint64_t tag)
{
	struct emu_vm_file_info info;
	struct emu_file *file;
	struct emu_ucontext *ctx;

	if (emu_vm_file_find(tag, &info))
		return -ENOENT;
	if (info.mine) {
		/* sent to ourselves: another fd of the same file, as dup() */
		for (ctx = kernel_contexts; ctx; ctx = ctx->next)
			if (ctx->file->vm_tag == tag)
				return emu_fd_register(fd, EMU_FD_UVERBS,
						       ctx->file);
		/* a file without context: nothing to share */
		return -ENOENT;
	}
	file = calloc(1, sizeof(*file));
	if (!file)
		return -ENOMEM;
	file->fd = fd;
	file->devnum = info.devnum;
	file->writable = info.writable;
	file->remote = true;
	file->vm_tag = tag;
	if (emu_fd_register(fd, EMU_FD_UVERBS, file)) {
		free(file);
		return -EMFILE;
	}
	if (emu_verbose())
		emu_log("fd %d: uverbs%u of process %d of the VM (received)",
			fd, info.devnum, info.owner_pid);
	return 0;
}

static int doorbell_alloc(uint32_t *index)
{
	uint32_t i;

	for (i = 0; i < DB_PAGES; i++) {
		if (!db_used[i]) {
			db_used[i] = true;
			*index = i;
			return 0;
		}
	}
	return -ENOMEM;
}

/* mana_ib_alloc_ucontext() */
int emu_ucontext_create(struct emu_file *file, const struct emu_udata *uhw)
{
	struct mana_ib_alloc_ucontext_resp resp = {
		.comp_mask = MANA_IB_UCNTX_ALLOC_PDN_SUPPORT,
	};
	const struct emu_era *e = kernel_era();
	struct emu_ucontext *ctx;
	int ret;

	/* robust udata: input empty or zero; older kernels never read it */
	ret = e->robust_udata ? emu_udata_in_empty(uhw) : 0;
	if (ret)
		return ret;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ret = doorbell_alloc(&ctx->doorbell);
	if (ret)
		goto err_free;
	/* before 7.1 no driver response: the output is left untouched */
	ret = e->pdn ? emu_udata_respond(uhw, &resp, sizeof(resp)) : 0;
	if (ret)
		goto err_db;
	ctx->serial = next_serial++;
	ctx->file = file;
	emu_vm_file_set_ctx(file->vm_tag, ctx->serial);
	file->ctx = ctx;
	ctx->next = kernel_contexts;
	kernel_contexts = ctx;
	ctx_count++;
	return 0;

err_db:
	db_used[ctx->doorbell] = false;
err_free:
	free(ctx);
	return ret;
}


static void ucontext_unlink(struct emu_ucontext *ctx)
{
	struct emu_ucontext **pp;

	for (pp = &kernel_contexts; *pp; pp = &(*pp)->next) {
		if (*pp == ctx) {
			*pp = ctx->next;
			return;
		}
	}
}

/* Release everything the context owns, newest first, then the context. */
void emu_ucontext_destroy(struct emu_ucontext *ctx)
{
	while (ctx->last)
		obj_free(ctx->last);
	db_used[ctx->doorbell] = false;
	db_page_orphan(ctx);
	ucontext_unlink(ctx);
	emu_vm_file_set_ctx(ctx->file->vm_tag, 0);
	ctx->file->ctx = NULL;
	free(ctx->handles);
	free(ctx);
	if (!--ctx_count)
		emu_device_idle();
}

struct emu_ucontext *emu_ucontext_find(uint64_t serial)
{
	struct emu_ucontext *ctx;

	for (ctx = kernel_contexts; ctx; ctx = ctx->next)
		if (ctx->serial == serial)
			return ctx;
	return NULL;
}

uint32_t emu_ucontext_count(void)
{
	return ctx_count;
}

/* close() of the uverbs fd; the caller closes the fd itself. */
void emu_file_release(struct emu_file *file)
{
	if (file->ctx)
		emu_ucontext_destroy(file->ctx);
	event_files_detach(file);
	emu_fd_unregister(file->fd);
	if (!file->remote)
		emu_vm_file_close(file->vm_tag);
	free(file);
}

/* ---- test API -------------------------------------------------------------- */

void emu_fill_counts(struct mana_emu_counts *out)
{
	out->contexts = ctx_count;
	out->pds = obj_counts[EMU_OBJ_PD];
	out->mrs = obj_counts[EMU_OBJ_MR];
	out->cqs = obj_counts[EMU_OBJ_CQ];
	out->wqs = obj_counts[EMU_OBJ_WQ];
	out->qps = obj_counts[EMU_OBJ_QP];
	out->ind_tables = obj_counts[EMU_OBJ_IND_TBL];
	out->comp_channels = kernel_comp_channel_count;
	out->dms = obj_counts[EMU_OBJ_DM];
}
