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

#include "emu_defs.h"
#include "mana_emu.h"

struct emu_device emu_dev;

/* Live object counters for the test API. */
static uint32_t obj_counts[EMU_OBJ_TYPES];
static uint32_t ctx_count;
static uint32_t comp_channel_count;

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

int emu_query_port(unsigned int port, struct ib_uverbs_query_port_resp *resp)
{
	if (!emu_port_valid(port))
		return -EINVAL;
	memset(resp, 0, sizeof(*resp));
	/* Always up: see README ("Port state"). */
	resp->state = IBV_PORT_ACTIVE;
	resp->phys_state = 5;	/* LinkUp */
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
	close(sv[1]);
err_free:
	free(ev);
	return ret;
}

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
}

/* Undo a create whose command failed afterwards: the fd never existed. */
void emu_event_file_abort(struct emu_event_file *ev)
{
	event_file_unlink(ev);
	emu_fd_unregister(ev->app_fd);
	close(ev->app_fd);
	close(ev->dev_fd);
	free(ev);
}

/* The application closed its end; the caller closes app_fd itself. */
void emu_event_file_app_closed(struct emu_event_file *ev)
{
	event_file_unlink(ev);
	emu_fd_unregister(ev->app_fd);
	close(ev->dev_fd);
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
			ret = emu_user_is_cleared((const char *)uhw->inbuf +
						  sizeof(req),
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
	/* No on-demand paging on MANA. */
	if (access & IB_UVERBS_ACCESS_ON_DEMAND)
		return -EINVAL;
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
 * hole in [start, end) also fails.  Cannot check: assume fine.
 */
static int range_permitted(uintptr_t start, uintptr_t end, bool write)
{
	char *maps = read_self_maps(), *line, *save = NULL;
	uintptr_t covered = start;
	int ret = -EFAULT;

	if (!maps)
		return 0;
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
	ret = range_mapped(first, last);
	if (ret)
		return ret;
	return range_permitted(first, last, write);
}

static void mr_release(struct emu_obj *obj)
{
	struct emu_mr *mr = (struct emu_mr *)obj;
	uint64_t first = mr->start & ~(EMU_PAGE_SIZE - 1);
	uint64_t last = (mr->start + mr->length + EMU_PAGE_SIZE - 1) &
			~(EMU_PAGE_SIZE - 1);

	emu_dev.pinned_bytes -= last - first;
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
	*out = mr;
	return 0;
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
	ctx->db_memfd = -1;
	ctx->file = file;
	file->ctx = ctx;
	ctx_count++;
	return 0;

err_db:
	db_used[ctx->doorbell] = false;
err_free:
	free(ctx);
	return ret;
}

/* Release everything the context owns, newest first, then the context. */
void emu_ucontext_destroy(struct emu_ucontext *ctx)
{
	while (ctx->last)
		obj_free(ctx->last);
	db_used[ctx->doorbell] = false;
	if (ctx->db_memfd >= 0)
		close(ctx->db_memfd);
	ctx->file->ctx = NULL;
	free(ctx->handles);
	free(ctx);
	ctx_count--;
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

struct db_map {
	uintptr_t addr;
	size_t len;
	uint32_t doorbell;
	struct db_map *next;
};

static struct db_map *db_maps;
static int db_map_count;

static int db_memfd(struct emu_ucontext *ctx)
{
	int fd;

	if (ctx->db_memfd >= 0)
		return ctx->db_memfd;
	/* One shared page per context, so every mapping sees the same bytes. */
	fd = memfd_create("mana-emu-doorbell", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, EMU_PAGE_SIZE)) {
		close(fd);
		return -errno;
	}
	ctx->db_memfd = fd;
	return fd;
}

/* mana_ib_mmap() + rdma_user_mmap_io(): offset 0, one page, shared. */
void *emu_uverbs_mmap(struct emu_file *file, void *addr, size_t len,
		      int prot, int flags, off_t offset, int *err)
{
	struct db_map *m;
	void *p;
	int fd;

	*err = EINVAL;
	if (!file->ctx || offset != 0 || !len || len > EMU_PAGE_SIZE ||
	    (flags & MAP_TYPE) == MAP_PRIVATE)
		return MAP_FAILED;
	if ((prot & PROT_WRITE) && !file->writable) {
		*err = EACCES;
		return MAP_FAILED;
	}
	fd = db_memfd(file->ctx);
	if (fd < 0) {
		*err = -fd;
		return MAP_FAILED;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		*err = ENOMEM;
		return MAP_FAILED;
	}
	flags &= ~(MAP_TYPE | MAP_ANONYMOUS);
	p = mmap(addr, len, prot, flags | MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		*err = errno;
		free(m);
		return MAP_FAILED;
	}
	m->addr = (uintptr_t)p;
	m->len = len;
	m->doorbell = file->ctx->doorbell;
	m->next = db_maps;
	db_maps = m;
	__atomic_add_fetch(&db_map_count, 1, __ATOMIC_RELEASE);
	return p;
}

bool emu_mmap_tracked(void)
{
	return __atomic_load_n(&db_map_count, __ATOMIC_ACQUIRE) > 0;
}

void emu_munmap_notify(void *addr, size_t len)
{
	uintptr_t lo = (uintptr_t)addr, hi = lo + len;
	struct db_map **pp = &db_maps;

	while (*pp) {
		struct db_map *m = *pp;

		if (m->addr >= lo && m->addr < hi) {
			*pp = m->next;
			free(m);
			__atomic_sub_fetch(&db_map_count, 1, __ATOMIC_RELEASE);
			continue;
		}
		pp = &m->next;
	}
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
