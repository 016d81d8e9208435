/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Emulated mana_ib (ETH device, raw packet only) and the parts of the
 * uverbs core that own objects: files, contexts, handles, use counts,
 * event files and the doorbell page mapping.  See kernel.h for the
 * object model; every function runs with emu.lock held.
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
#include "emulator/lib/libc.h"

struct emu_device emu_dev;

/* Live object counters for the test API. */
static uint32_t obj_counts[EMU_OBJ_TYPES];
static uint32_t ctx_count;
static uint32_t comp_channel_count;

/* Live contexts; serials are never reused, so a stale trap cookie misses. */
static struct emu_ucontext *contexts;
static uint64_t next_serial = 1;

/* Doorbell page 0 belongs to the kernel's own netdev. */
#define DB_PAGES 1024
static bool db_used[DB_PAGES] = { [0] = true };

static uint32_t next_pdn = 1;
static uint32_t next_key = 0x1000;

/* mana_ib limits of the ETH device (mana-kernel-and-gdma.md 2.10) */
#define MANA_MAX_QP 64
#define MANA_MAX_CQ 64
#define MANA_MAX_SGE 15
#define MANA_MAX_SEND_SGE 30
#define MANA_MAX_MR 0xFFFFFF
#define MANA_MAX_PD 0x6000
#define MANA_PAGE_SZ_CAP 0x3FF000ULL	/* 4K .. 2M */
#define MANA_CA_ACK_DELAY 16
#define MANA_MR_VALID_ACCESS                                                   \
	(IB_UVERBS_ACCESS_LOCAL_WRITE | IB_UVERBS_ACCESS_REMOTE_WRITE |        \
	 IB_UVERBS_ACCESS_REMOTE_READ | IB_UVERBS_ACCESS_REMOTE_ATOMIC |       \
	 IB_UVERBS_ACCESS_MW_BIND | IB_UVERBS_ACCESS_ZERO_BASED)
/* Core: every defined access bit up to HUGETLB plus the optional range. */
#define CORE_ACCESS_SUPPORTED                                                  \
	(((IB_UVERBS_ACCESS_HUGETLB << 1) - 1) |                               \
	 IB_UVERBS_ACCESS_OPTIONAL_RANGE)
#define IB_SPEED_EDR 32
#define IB_WIDTH_4X 2
#define IB_LINK_LAYER_ETHERNET 2

void emu_kernel_init(const struct mana_emu_options *opts)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int port;

	emu_dev.opts = opts;
	emu_dev.nports = opts->ports;
	for (port = 1; port <= opts->ports; port++) {
		mana_emu_port_mac(opts, port, emu_dev.ports[port - 1].mac);
		emu_dev.ports[port - 1].netdev_up = opts->netdev_up;
	}
	emu_dev.node_guid = emu_mac_to_guid(emu_dev.ports[0].mac);
	emu_dev.driver_id = opts->driver_id;
	emu_dev.max_qp_wr = opts->max_qp_wr;
	/* mana: one completion vector per queue pair of the adapter, <= 64 */
	emu_dev.num_comp_vectors = cpus < 1 ? 1 : cpus > 64 ? 64 : cpus;
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

void emu_query_device(struct ib_uverbs_ex_query_device_resp *resp)
{
	struct ib_uverbs_query_device_resp *b = &resp->base;

	memset(resp, 0, sizeof(*resp));
	b->fw_ver = EMU_FW_VER;
	b->node_guid = htobe64(emu_dev.node_guid);
	b->sys_image_guid = htobe64(emu_dev.node_guid);
	b->max_mr_size = UINT64_MAX;
	b->page_size_cap = MANA_PAGE_SZ_CAP;
	b->vendor_id = MANA_PCI_VENDOR_ID;
	b->vendor_part_id = EMU_VENDOR_PART_ID;
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
	b->phys_port_cnt = emu_dev.nports;
	resp->device_cap_flags_ex = EMU_DEVICE_CAP_FLAGS;
	resp->raw_packet_caps = IBV_RAW_PACKET_CAP_IP_CSUM;
}

bool emu_port_valid(unsigned int port)
{
	return port >= 1 && port <= emu_dev.nports;
}

/*
 * mana_ib reports the port as up only while its netdev is running with
 * carrier (research: mana-kernel-and-gdma.md 2.10, 4): DPDK's usual setup,
 * the VF interface down, reads DOWN/Disabled although raw QPs work.
 */
void emu_port_state(unsigned int port, uint8_t *state, uint8_t *phys_state)
{
	bool up = emu_dev.ports[port - 1].netdev_up;

	*state = up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	*phys_state = up ? 5 : 3;	/* LinkUp : Disabled */
}

int emu_query_port(unsigned int port, struct ib_uverbs_query_port_resp *resp)
{
	if (!emu_port_valid(port))
		return -EINVAL;
	memset(resp, 0, sizeof(*resp));
	emu_port_state(port, &resp->state, &resp->phys_state);
	resp->max_mtu = IBV_MTU_4096;
	resp->active_mtu = IBV_MTU_1024;	/* netdev MTU 1500 */
	resp->gid_tbl_len = 0;
	resp->pkey_tbl_len = 1;
	resp->active_width = IB_WIDTH_4X;
	resp->active_speed = IB_SPEED_EDR;
	resp->link_layer = IB_LINK_LAYER_ETHERNET;
	return 0;
}

/* ---- event files ---------------------------------------------------------- */

static void event_records_free(struct emu_event_file *ev)
{
	while (ev->head) {
		struct emu_event *e = ev->head;

		ev->head = e->next;
		free(e);
	}
	ev->tail = NULL;
}

int emu_event_file_create(struct emu_file *file, bool async,
			  struct emu_event_file **out)
{
	struct emu_event_file *ev;
	int sv[2], ret;

	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		ret = -errno;
		goto err_free;
	}
	/* Posting an event must never block the emulator. */
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	ret = emu_fd_register(sv[0], EMU_FD_EVENT, ev);
	if (ret)
		goto err_close;
	ev->async = async;
	ev->app_fd = sv[0];
	ev->dev_fd = sv[1];
	ev->owner = file;
	ev->next = file->events;
	file->events = ev;
	if (!async)
		comp_channel_count++;
	*out = ev;
	return 0;

err_close:
	close(sv[0]);
	emu_libc_close(sv[1]);
err_free:
	free(ev);
	return ret;
}

/*
 * Detach from the uverbs file: no more events, and the peer end closes so
 * a reader blocked in read() wakes up (and gets EIO).
 */
static void event_file_unlink(struct emu_event_file *ev)
{
	struct emu_event_file **pp;

	if (!ev->owner)
		return;
	for (pp = &ev->owner->events; *pp; pp = &(*pp)->next) {
		if (*pp == ev) {
			*pp = ev->next;
			break;
		}
	}
	if (!ev->async)
		comp_channel_count--;
	ev->owner = NULL;
	event_records_free(ev);
	if (ev->dev_fd >= 0)
		emu_libc_close(ev->dev_fd);
	ev->dev_fd = -1;
}

/* Undo a create whose command failed afterwards: the fd never existed. */
void emu_event_file_abort(struct emu_event_file *ev)
{
	event_file_unlink(ev);
	emu_fd_unregister(ev->app_fd);
	close(ev->app_fd);
	free(ev);
}

/*
 * The application closed its end; the caller closes app_fd itself.  A
 * channel still named by CQs lives on (silently) until the last one goes,
 * as the kernel's CQs hold a reference on the channel's file.
 */
void emu_event_file_app_closed(struct emu_event_file *ev)
{
	event_file_unlink(ev);
	emu_fd_unregister(ev->app_fd);
	ev->app_fd = -1;
	if (ev->cq_refs) {
		ev->app_closed = true;
		return;
	}
	free(ev);
}

size_t emu_event_size(const struct emu_event_file *ev)
{
	return ev->async ? sizeof(struct ib_uverbs_async_event_desc) :
			   sizeof(struct ib_uverbs_comp_event_desc);
}

/* The uverbs file went away: the event fds stay open but report EIO. */
static void event_files_detach(struct emu_file *file)
{
	while (file->events)
		event_file_unlink(file->events);
}

struct emu_event_file *emu_event_file_get(struct emu_file *file, int fd,
					  bool async)
{
	struct emu_event_file *ev = emu_fd_obj(fd, EMU_FD_EVENT);

	if (!ev || ev->owner != file || ev->async != async)
		return NULL;
	return ev;
}

void emu_event_post(struct emu_event_file *ev, struct emu_cq *cq,
		    const void *data, size_t len)
{
	static const char token;
	struct emu_event *e;

	if (!ev->owner || ev->dev_fd < 0)
		return;
	e = calloc(1, sizeof(*e));
	if (!e)
		return;
	e->cq = cq;
	memcpy(e->data, data, len < sizeof(e->data) ? len : sizeof(e->data));
	if (ev->tail)
		ev->tail->next = e;
	else
		ev->head = e;
	ev->tail = e;
	/* a full socket only delays the wake-up: the record stays queued */
	if (emu_libc_send(ev->dev_fd, &token, 1, MSG_DONTWAIT) < 0 && emu_verbose())
		emu_log("event fd %d: token not sent: %s", ev->app_fd,
			emu_errname(errno));
}

int emu_event_pop(struct emu_event_file *ev, void *out, size_t len)
{
	struct emu_event *e = ev->head;

	if (!e)
		return -EAGAIN;
	ev->head = e->next;
	if (!ev->head)
		ev->tail = NULL;
	memcpy(out, e->data, len);
	/* the destroy response reports what the application has read */
	if (e->cq)
		e->cq->comp_events_reported++;
	free(e);
	return 0;
}

/* A CQ goes away: its undelivered events go with it, tokens included. */
static void event_records_drop_cq(struct emu_event_file *ev,
				  struct emu_cq *cq)
{
	struct emu_event **pp = &ev->head, *e;
	char token;

	ev->tail = NULL;
	while ((e = *pp)) {
		if (e->cq != cq) {
			ev->tail = e;
			pp = &e->next;
			continue;
		}
		*pp = e->next;
		free(e);
		if (ev->app_fd >= 0)
			recv(ev->app_fd, &token, 1, MSG_DONTWAIT);
	}
}

void emu_post_device_fatal(void)
{
	struct ib_uverbs_async_event_desc desc = {
		.element = 0, .event_type = IBV_EVENT_DEVICE_FATAL,
	};
	struct emu_ucontext *ctx;
	struct emu_event_file *ev;

	for (ctx = contexts; ctx; ctx = ctx->next)
		for (ev = ctx->file->events; ev; ev = ev->next)
			if (ev->async)
				emu_event_post(ev, NULL, &desc, sizeof(desc));
}

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
static void *obj_create(struct emu_ucontext *ctx, enum emu_obj_type type,
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

static void obj_free(struct emu_obj *obj)
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

int emu_pd_alloc(struct emu_ucontext *ctx, const struct emu_udata *uhw,
		 struct emu_pd **out)
{
	struct { uint32_t comp_mask, reserved; } req = {};
	struct { uint32_t pdn, reserved; } resp = {};
	struct emu_pd *pd;
	int ret;

	/* Newer mana_ib takes {comp_mask} (SHORT_PDN); unknown bits refused. */
	if (uhw->inlen) {
		size_t n = uhw->inlen < sizeof(req) ? uhw->inlen : sizeof(req);

		if (emu_copy_from_user(&req, uhw->inbuf, n))
			return -EFAULT;
		if (uhw->inlen > sizeof(req)) {
			ret = emu_user_is_cleared(emu_user_off(uhw->inbuf,
								sizeof(req)),
						  uhw->inlen - sizeof(req));
			if (ret <= 0)
				return ret < 0 ? ret : -EOPNOTSUPP;
		}
		if (req.comp_mask & ~1u)
			return -EOPNOTSUPP;
	}
	pd = obj_create(ctx, EMU_OBJ_PD, sizeof(*pd), NULL, 0, NULL);
	if (!pd)
		return -ENOMEM;
	pd->pdn = next_pdn++;
	resp.pdn = pd->pdn;
	ret = emu_udata_respond(uhw, &resp, sizeof(resp));
	if (ret) {
		obj_free(&pd->obj);
		return ret;
	}
	*out = pd;
	return 0;
}

/* ---- MR -------------------------------------------------------------------- */

/* ib_check_mr_access(): the uverbs core's checks before the driver. */
int emu_check_mr_access(uint32_t access)
{
	if (access & (IB_UVERBS_ACCESS_REMOTE_ATOMIC |
		      IB_UVERBS_ACCESS_REMOTE_WRITE) &&
	    !(access & IB_UVERBS_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (access & ~CORE_ACCESS_SUPPORTED)
		return -EINVAL;
	/* No on-demand paging on MANA (no IBK_ON_DEMAND_PAGING): EOPNOTSUPP. */
	if (access & IB_UVERBS_ACCESS_ON_DEMAND)
		return -EOPNOTSUPP;
	return 0;
}

static bool access_writable(uint32_t access)
{
	return access & (IB_UVERBS_ACCESS_LOCAL_WRITE |
			 IB_UVERBS_ACCESS_REMOTE_WRITE |
			 IB_UVERBS_ACCESS_REMOTE_ATOMIC |
			 IB_UVERBS_ACCESS_MW_BIND);
}

/* Every page of [start, end) must be mapped (mincore fails otherwise). */
static int range_mapped(uintptr_t start, uintptr_t end)
{
	unsigned char vec[256];
	uintptr_t p;

	for (p = start; p < end; p += sizeof(vec) * EMU_PAGE_SIZE) {
		size_t len = end - p;

		if (len > sizeof(vec) * EMU_PAGE_SIZE)
			len = sizeof(vec) * EMU_PAGE_SIZE;
		if (mincore((void *)p, len, vec))
			return -EFAULT;
	}
	return 0;
}

static char *read_self_maps(void)
{
	size_t cap = 65536, used = 0;
	char *buf = malloc(cap);
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (!buf || fd < 0)
		goto err;
	while ((n = read(fd, buf + used, cap - used - 1)) > 0) {
		used += n;
		if (cap - used < 4096) {
			char *p = realloc(buf, cap * 2);

			if (!p)
				goto err;
			buf = p;
			cap *= 2;
		}
	}
	close(fd);
	buf[used] = 0;
	return buf;
err:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

/*
 * Pinning needs read access, write access when the MR is writable; a
 * hole in [start, end) also fails.  1: cannot check (no /proc).
 */
static int range_permitted(uintptr_t start, uintptr_t end, bool write)
{
	char *maps = read_self_maps(), *line, *save = NULL;
	uintptr_t covered = start;
	int ret = -EFAULT;

	if (!maps)
		return 1;
	for (line = strtok_r(maps, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long lo, hi;
		char perms[5];

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3)
			continue;
		if (hi <= covered || lo >= end)
			continue;
		if (lo > covered)
			break;
		if (perms[write ? 1 : 0] == '-')
			break;
		covered = hi;
		if (covered >= end) {
			ret = 0;
			break;
		}
	}
	free(maps);
	return ret;
}

/* ib_umem_get(): overflow, empty range, RLIMIT_MEMLOCK, mapping. */
static int umem_check(uint64_t start, uint64_t length, bool write,
		      uint64_t *pinned)
{
	uint64_t end = start + length, first, last;
	struct rlimit rl;
	int ret;

	if (end < start || ((end + EMU_PAGE_SIZE - 1) & ~(EMU_PAGE_SIZE - 1)) < end)
		return -EINVAL;
	first = start & ~(EMU_PAGE_SIZE - 1);
	last = (end + EMU_PAGE_SIZE - 1) & ~(EMU_PAGE_SIZE - 1);
	if (last == first)
		return -EINVAL;
	*pinned = last - first;
	if (geteuid() != 0 && !getrlimit(RLIMIT_MEMLOCK, &rl) &&
	    rl.rlim_cur != RLIM_INFINITY &&
	    emu_dev.pinned_bytes + *pinned > rl.rlim_cur)
		return -ENOMEM;
	/*
	 * The maps first: one read answers for any length, where mincore()
	 * walks the range a MiB at a time (terabytes of a reservation, such
	 * as ASan's shadow, took minutes: found by fuzz_uverbs_write).
	 */
	ret = range_permitted(first, last, write);
	if (ret <= 0)
		return ret;
	return range_mapped(first, last);
}

static uint64_t pinned_span(uint64_t start, uint64_t length)
{
	uint64_t first = start & ~(EMU_PAGE_SIZE - 1);
	uint64_t last = (start + length + EMU_PAGE_SIZE - 1) &
			~(EMU_PAGE_SIZE - 1);

	return last - first;
}

/* lkey -> MR, for the device's SGE checks */
#define MR_HASH_SIZE 1024
static struct emu_mr *mr_hash[MR_HASH_SIZE];

static struct emu_mr **mr_bucket(uint32_t lkey)
{
	return &mr_hash[lkey % MR_HASH_SIZE];
}

struct emu_mr *emu_mr_find(uint32_t lkey)
{
	struct emu_mr *mr;

	for (mr = *mr_bucket(lkey); mr; mr = mr->hash_next)
		if (mr->lkey == lkey)
			return mr;
	return NULL;
}

static void mr_release(struct emu_obj *obj)
{
	struct emu_mr *mr = (struct emu_mr *)obj, **pp;

	for (pp = mr_bucket(mr->lkey); *pp; pp = &(*pp)->hash_next) {
		if (*pp == mr) {
			*pp = mr->hash_next;
			break;
		}
	}
	emu_dev.pinned_bytes -= pinned_span(mr->start, mr->length);
}

int emu_mr_reg(struct emu_pd *pd, const struct emu_mr_req *req,
	       const struct emu_udata *uhw, struct emu_mr **out)
{
	struct emu_obj *dep = &pd->obj;
	uint32_t access = req->access & ~IB_UVERBS_ACCESS_OPTIONAL_RANGE;
	uint64_t pinned;
	struct emu_mr *mr;
	int ret;

	/* mana_ib_reg_user_mr: only the access bits the hardware knows */
	if (access & ~MANA_MR_VALID_ACCESS)
		return -EINVAL;
	ret = umem_check(req->start, req->length, access_writable(access),
			 &pinned);
	if (ret)
		return ret;
	mr = obj_create(pd->obj.ctx, EMU_OBJ_MR, sizeof(*mr), &dep, 1,
			mr_release);
	if (!mr)
		return -ENOMEM;
	emu_dev.pinned_bytes += pinned;
	mr->start = req->start;
	mr->length = req->length;
	mr->iova = req->iova;
	mr->access = req->access;
	/* GDMA hands out one key per MR; lkey == rkey. */
	mr->lkey = mr->rkey = next_key++;
	mr->hash_next = *mr_bucket(mr->lkey);
	*mr_bucket(mr->lkey) = mr;
	*out = mr;
	return 0;
}

/* ---- raw packet objects ---------------------------------------------------- */

/*
 * ib_copy_validate_udata_in(): at least @min bytes, a longer input must
 * be zero past the structure; the rest of @dst is zero-filled.
 */
static int udata_in(const struct emu_udata *uhw, void *dst, size_t size,
		    size_t min)
{
	size_t n = uhw->inlen < size ? uhw->inlen : size;
	int ret;

	memset(dst, 0, size);
	if (uhw->inlen < min)
		return -EINVAL;
	if (uhw->inlen > size) {
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
static int queue_umem(uint64_t addr, uint64_t size, bool ring,
		      uint64_t *pinned)
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
	if (!ev)
		return;
	event_records_drop_cq(ev, cq);
	if (!--ev->cq_refs && ev->app_closed)
		free(ev);
}

/* mana_ib_create_cq() on the ETH device: no hardware CQ until a QP. */
int emu_cq_create(struct emu_ucontext *ctx, const struct emu_cq_req *req,
		  const struct emu_udata *uhw, struct emu_cq **out)
{
	struct mana_ib_create_cq_resp resp = { .cqid = UINT32_MAX };
	struct mana_ib_create_cq ucmd;
	uint64_t pinned;
	struct emu_cq *cq;
	int ret;

	ret = udata_in(uhw, &ucmd, sizeof(ucmd), MANA_IB_CREATE_CQ_V1_LEN);
	if (ret)
		return ret;
	/* the RNIC flag is accepted and ignored: the device type decides */
	if (ucmd.flags & ~MANA_IB_CREATE_RNIC_CQ)
		return -EOPNOTSUPP;
	if (!req->cqe || req->cqe > emu_dev.max_qp_wr ||
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
 * (mana_cfg_vport: EBUSY while the netdev or anyone else holds it); the
 * PD is bound to that port from then on (another port: EINVAL).
 */
static int vport_get(struct emu_pd *pd, unsigned int port)
{
	struct emu_port *p = &emu_dev.ports[port - 1];
	int ret;

	if (pd->vport_use_count) {
		if (pd->vport_port != port)
			return -EINVAL;
		pd->vport_use_count++;
		return 0;
	}
	if (p->netdev_up || p->vport.pd)
		return -EBUSY;
	ret = emu_port_attach(port);
	if (ret)
		return ret;
	p->vport.pd = pd;
	pd->vport_port = port;
	pd->vport_use_count = 1;
	return 0;
}

static void vport_put(struct emu_pd *pd)
{
	if (--pd->vport_use_count)
		return;
	emu_dev.ports[pd->vport_port - 1].vport.pd = NULL;
	pd->vport_port = 0;
}

/* Hardware CQ for a verbs CQ being bound to a new SQ or RQ. */
static struct emu_hwq *hw_cq_create(struct emu_ucontext *ctx,
				    struct emu_cq *cq, uint32_t port)
{
	struct emu_hwq_req r = {
		.type = EMU_HWQ_CQ, .ctx = ctx, .buf = cq->buf_addr,
		.size = cq->cqe * GDMA_CQE_SIZE, .port = port, .ucq = cq,
		.count = cq->cqe,
	};
	struct emu_hwq *q = emu_hwq_create(&r);

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
		memset(v->indir, 0, sizeof(v->indir));
		v->default_rq = NULL;
		v->rss_enabled = false;
		v->num_entries = 0;
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
	/* one CQ per queue: mana_ib_install_cq_cb() */
	ret = -EINVAL;
	if (req->send_cq->hw)
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
	/* "Only one RSS QP per vport" */
	return emu_dev.ports[ucmd->port - 1].vport.rss_qp ? -EBUSY : 0;
}

/* Each RQ needs a CQ of its own, not bound to any other queue. */
static int rss_check_cqs(const struct emu_ind_tbl *t)
{
	uint32_t i, j, n = 1u << t->log_size;

	for (i = 0; i < n; i++) {
		if (t->wqs[i]->cq->hw || t->wqs[i]->hw)
			return -EINVAL;
		for (j = 0; j < i; j++)
			if (t->wqs[j]->cq == t->wqs[i]->cq)
				return -EINVAL;
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

	for (k = 0; k < EMU_RSS_INDIR; k++)
		v->indir[k] = qp->rqs[k % n];
	v->default_rq = qp->rqs[n - 1];
	v->rss_enabled = qp->tbl->log_size != 0;
	v->num_entries = n;
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
		ret = vport_get(req->pd, ucmd.port);
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
	qp->pd = req->pd;
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
	vport_put(req->pd);
	return ret;
}

/* mana_ib_create_qp() on the ETH device: raw packet QPs only. */
int emu_qp_create(struct emu_ucontext *ctx, const struct emu_qp_req *req,
		  const struct emu_udata *uhw, struct emu_qp **out)
{
	if (req->qp_type != IBV_QPT_RAW_PACKET)
		return -EINVAL;
	if (req->tbl)
		return qp_create_rss(ctx, req, uhw, out);
	return qp_create_raw(ctx, req, uhw, out);
}

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
	return file;
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
	/* MANA_IB_UCNTX_ALLOC_PDN_SUPPORT, for providers that ask */
	uint64_t resp_comp_mask = 1;
	struct emu_ucontext *ctx;
	int ret;

	ret = emu_udata_in_empty(uhw);
	if (ret)
		return ret;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ret = doorbell_alloc(&ctx->doorbell);
	if (ret)
		goto err_free;
	ret = emu_udata_respond(uhw, &resp_comp_mask, sizeof(resp_comp_mask));
	if (ret)
		goto err_db;
	ctx->serial = next_serial++;
	ctx->file = file;
	file->ctx = ctx;
	ctx->next = contexts;
	contexts = ctx;
	ctx_count++;
	return 0;

err_db:
	db_used[ctx->doorbell] = false;
err_free:
	free(ctx);
	return ret;
}

static void db_page_orphan(struct emu_ucontext *ctx);

static void ucontext_unlink(struct emu_ucontext *ctx)
{
	struct emu_ucontext **pp;

	for (pp = &contexts; *pp; pp = &(*pp)->next) {
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
	ctx->file->ctx = NULL;
	free(ctx->handles);
	free(ctx);
	if (!--ctx_count)
		emu_device_idle();
}

struct emu_ucontext *emu_ucontext_find(uint64_t serial)
{
	struct emu_ucontext *ctx;

	for (ctx = contexts; ctx; ctx = ctx->next)
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
	free(file);
}

/* ---- doorbell page mapping ------------------------------------------------- */

/*
 * mana_ib_mmap(): offset 0 maps the context's doorbell page.  Here it is a
 * trapped page (trap.h): write-protected, every store becomes an event for
 * the device thread, tagged with the context's serial.  A trap page can be
 * mapped only once, so every mmap() of a context returns the same address
 * and counts a reference; the page goes at the last munmap() of it.  A
 * page still mapped when its context is destroyed stays (stores to it are
 * ignored) until the application unmaps it.
 */
struct db_orphan {
	void *page;
	unsigned int maps;
	struct db_orphan *next;
};

static struct db_orphan *db_orphans;
static int db_pages_mapped;	/* read without the lock by munmap() */

static void db_pages_add(int n)
{
	__atomic_add_fetch(&db_pages_mapped, n, __ATOMIC_RELEASE);
}

static void *db_page_map(struct emu_ucontext *ctx, int *err)
{
	void *page;
	int ret;

	ret = trap_init();
	if (ret) {
		fprintf(stderr, "mana-emu: cannot map the doorbell page: the "
			"doorbell store trap is unavailable: %s\n",
			strerror(-ret));
		*err = -ret;
		return MAP_FAILED;
	}
	emu_device_trap_ready();
	page = trap_page_alloc((void *)(uintptr_t)ctx->serial);
	if (!page) {
		*err = errno;
		fprintf(stderr, "mana-emu: cannot map the doorbell page: %s\n",
			strerror(errno));
		return MAP_FAILED;
	}
	ctx->db_page = page;
	ctx->db_maps = 0;
	db_pages_add(1);
	return page;
}

void *emu_uverbs_mmap(struct emu_file *file, void *addr, size_t len,
		      int prot, int flags, off_t offset, int *err)
{
	struct emu_ucontext *ctx = file->ctx;

	*err = EINVAL;
	/* one page at offset 0, shared, wherever we put it */
	if (!ctx || offset != 0 || !len || len > EMU_PAGE_SIZE ||
	    (flags & MAP_TYPE) == MAP_PRIVATE ||
	    (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)))
		return MAP_FAILED;
	if ((prot & PROT_WRITE) && !file->writable) {
		*err = EACCES;
		return MAP_FAILED;
	}
	if (!ctx->db_page && db_page_map(ctx, err) == MAP_FAILED)
		return MAP_FAILED;
	ctx->db_maps++;
	return ctx->db_page;
}

bool emu_mmap_tracked(void)
{
	return __atomic_load_n(&db_pages_mapped, __ATOMIC_ACQUIRE) > 0;
}

static void db_page_orphan(struct emu_ucontext *ctx)
{
	struct db_orphan *o;

	if (!ctx->db_page)
		return;
	o = calloc(1, sizeof(*o));
	if (!o)
		return;		/* leaks one page; stores stay ignored */
	o->page = ctx->db_page;
	o->maps = ctx->db_maps;
	o->next = db_orphans;
	db_orphans = o;
	ctx->db_page = NULL;
}

static bool orphan_unmap(void *addr)
{
	struct db_orphan **pp, *o;

	for (pp = &db_orphans; (o = *pp); pp = &o->next) {
		if (o->page != addr)
			continue;
		if (!--o->maps) {
			trap_page_free(o->page);
			db_pages_add(-1);
			*pp = o->next;
			free(o);
		}
		return true;
	}
	return false;
}

bool emu_munmap_doorbell(void *addr, size_t len)
{
	struct emu_ucontext *ctx;

	if (!len || len > EMU_PAGE_SIZE)
		return false;
	for (ctx = contexts; ctx; ctx = ctx->next) {
		if (ctx->db_page != addr)
			continue;
		if (!--ctx->db_maps) {
			trap_page_free(ctx->db_page);
			ctx->db_page = NULL;
			db_pages_add(-1);
		}
		return true;
	}
	return orphan_unmap(addr);
}

static void page_collect(void *page, uintptr_t start, uintptr_t end,
			 uintptr_t *out, unsigned int max, unsigned int *n)
{
	uintptr_t p = (uintptr_t)page;

	if (page && p < end && p + EMU_PAGE_SIZE > start && *n < max)
		out[(*n)++] = p;
}

unsigned int emu_doorbell_pages_in(uintptr_t start, uintptr_t end,
				   uintptr_t *out, unsigned int max)
{
	struct emu_ucontext *ctx;
	struct db_orphan *o;
	unsigned int n = 0, i, j;

	for (ctx = contexts; ctx; ctx = ctx->next)
		page_collect(ctx->db_page, start, end, out, max, &n);
	for (o = db_orphans; o; o = o->next)
		page_collect(o->page, start, end, out, max, &n);
	/* in address order, for the caller's walk over the range */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && out[j - 1] > out[j]; j--) {
			uintptr_t t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
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
	out->comp_channels = comp_channel_count;
}
