/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Emulated mana_ib: device attributes, uverbs files, user contexts and
 * the objects they own, with the rules the real driver and the uverbs
 * core apply.  Every function here expects emu.lock to be held.
 *
 * Object model: a uverbs file (one open() of the char device) holds at
 * most one user context.  The context owns every object created through
 * the file, each with a handle from one per-context handle space (lowest
 * free first, like the kernel's per-file xarray).  An object holds a use
 * reference on each object it depends on (MR -> PD, WQ -> PD and CQ, QP
 * -> PD, CQs and indirection table, table -> WQs); an object that is in
 * use cannot be destroyed (EBUSY).  Closing the file destroys everything
 * the context still owns, newest first.
 *
 * Raw packet objects follow mana_ib on the ETH device: a CQ and a WQ only
 * record their buffers; the hardware queues (device.h) come into being
 * with the QP that uses them (SQ + its CQ for a send QP, one RQ + CQ per
 * indirection table entry for an RSS QP) and go with it.  The first QP of
 * a PD on a port takes that port's vport (EBUSY while the kernel netdev or
 * another PD holds it); an RSS QP programs the vport's RX steering.
 */
#ifndef MANA_EMU_KERNEL_H
#define MANA_EMU_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emulator/core/emu.h"
#include "emulator/core/ibdev.h"
#include "emulator/device/device.h"

struct ib_uverbs_ex_query_device_resp;
struct ib_uverbs_query_port_resp;

/* Driver data (udata) or core data of one command, in application memory. */
struct emu_udata {
	const void *inbuf;
	size_t inlen;
	void *outbuf;
	size_t outlen;
};

int emu_udata_in_empty(const struct emu_udata *udata);
int emu_udata_respond(const struct emu_udata *udata, const void *src,
		      size_t len);

enum emu_obj_type {
	EMU_OBJ_PD,
	EMU_OBJ_MR,
	EMU_OBJ_CQ,
	EMU_OBJ_WQ,
	EMU_OBJ_QP,
	EMU_OBJ_IND_TBL,
	EMU_OBJ_MW,
	EMU_OBJ_DM,
	EMU_OBJ_TYPES,
};

struct emu_ucontext;

struct emu_obj {
	enum emu_obj_type type;
	uint32_t handle;
	struct emu_ucontext *ctx;
	unsigned int usecnt;		/* objects depending on this one */
	unsigned int ndeps;
	struct emu_obj **deps;		/* objects this one depends on */
	struct emu_obj *prev, *next;	/* creation order within ctx */
	void (*release)(struct emu_obj *obj);	/* type-specific teardown */
};

struct emu_pd {
	struct emu_obj obj;
	uint32_t pdn;
	/* mana_ib_cfg_vport(): the first raw QP on a PD binds it to a port */
	unsigned int vport_use_count;
	unsigned int vport_port;
};

struct emu_mr {
	struct emu_obj obj;
	uint64_t start, length, iova;
	uint32_t access, lkey, rkey;
	bool device_mem;		/* on a DM: nothing of the app's pinned */
	struct emu_dmabuf *dmabuf;	/* a dma-buf MR's buffer (referenced) */
	struct emu_dev_mr hw;		/* the device's view, in its lkey table */
};

/*
 * A memory window (7.1 on): GDMA_CREATE_MR of type MW1/MW2 gives it a key
 * of the MR key space.  Nothing binds it (MANA has no bind WQE and
 * mana_ib no bind verb), so the device sees a window of no bytes and no
 * rights: every remote access through its rkey fails its checks.
 */
struct emu_mw {
	struct emu_obj obj;
	uint8_t type;			/* IBV_MW_TYPE_1 or _2 (= IB_MW_TYPE_*) */
	uint32_t rkey;
	struct emu_dev_mr hw;		/* in the device's key table */
};

/* Device memory (alloc_dm): the adapter's bytes, reached only by MRs. */
struct emu_dm {
	struct emu_obj obj;
	uint64_t length;
	void *mem;			/* emu_dev_dm_alloc() */
};

struct emu_event_file;
struct emu_hwq;
struct backend;

struct emu_cq {
	struct emu_obj obj;
	uint64_t user_handle;
	uint64_t buf_addr;
	uint32_t cqe;
	uint32_t comp_vector;
	struct emu_event_file *channel;	/* completion channel or NULL */
	uint32_t comp_events_reported;	/* events the application read */
	uint32_t async_events_reported;	/* CQ_ERR events it read */
	struct emu_hwq *hw;		/* hardware CQ while a queue binds it */
	struct emu_hwq *rnic_hw;	/* RNIC CQ: hardware CQ made at create */
};

struct emu_wq {
	struct emu_obj obj;
	uint64_t user_handle;
	uint64_t buf_addr;
	uint32_t buf_size;
	uint32_t max_wr, max_sge;
	struct emu_pd *pd;
	struct emu_cq *cq;
	struct emu_hwq *hw;		/* hardware RQ while an RSS QP uses it */
};

struct emu_ind_tbl {
	struct emu_obj obj;
	uint32_t log_size;
	struct emu_wq **wqs;		/* the deps array: 1 << log_size entries */
};

struct emu_qp {
	struct emu_obj obj;
	bool rss;
	uint32_t port;
	uint32_t qp_num;
	struct emu_pd *pd;
	struct emu_hwq *sq;		/* raw send QP */
	struct emu_ind_tbl *tbl;	/* RSS QP */
	struct emu_hwq **rqs;		/* RSS QP: one RQ per table entry */
	uint8_t key[EMU_RSS_KEY_LEN];
	uint64_t fields_mask;
	struct emu_rc_qp *rc;		/* RC QP (rc_qp.c), else NULL */
	uint32_t events_reported;	/* async events the application read */
};

/*
 * The port's vport; its RX steering (CONFIG_VPORT_RX) and wire are the
 * device's (emu_ports[], device.h).
 */
struct emu_vport {
	struct emu_pd *pd;		/* mana_cfg_vport() holder, NULL if free */
	struct emu_qp *rss_qp;
};

struct emu_port {
	uint8_t mac[6];
	struct emu_vport vport;	/* the VF netdev's hold: link.c */
};

struct emu_device {
	const struct mana_emu_options *opts;
	unsigned int nports;
	struct emu_port ports[MANA_EMU_MAX_PORTS];
	uint64_t node_guid;		/* host order */
	uint32_t driver_id;
	uint32_t max_qp_wr;
	uint32_t num_comp_vectors;
	uint64_t pinned_bytes;		/* for RLIMIT_MEMLOCK */
	unsigned int nibdevs;		/* --era: the IB devices (ibdev.h) */
	struct emu_ibdev ibdev[EMU_MAX_IBDEVS];
};

extern struct emu_device emu_dev;

struct emu_event_file;

/*
 * One open() of /dev/infiniband/uverbsN.  --vm: @vm_tag is its identity
 * in the VM (core/vm.h); a file another process of the VM opened and
 * passed here over a Unix socket is @remote: it has no context in this
 * process, only its doorbell page can be mapped.
 */
struct emu_file {
	int fd;
	unsigned int devnum;
	bool writable;
	bool remote;
	uint64_t vm_tag;
	struct emu_ucontext *ctx;
	struct emu_event_file *events;	/* async fds and comp channels */
};

struct emu_ucontext {
	struct emu_file *file;
	uint64_t serial;		/* unique for the process: the trap cookie */
	uint32_t doorbell;		/* doorbell page index */
	void *db_page;			/* trapped doorbell page, while mapped */
	unsigned int db_maps;		/* mmaps of it not yet unmapped */
	struct emu_obj **handles;
	uint32_t nhandles;
	struct emu_obj *first, *last;	/* creation order */
	struct emu_ucontext *next;	/* all live contexts */
};

/* One queued event record (completion: 8 bytes, async: 16 bytes). */
struct emu_event {
	struct emu_event *next;
	struct emu_cq *cq;		/* completion event: its CQ */
	struct emu_qp *qp;		/* QP async event: its QP */
	uint8_t data[16];
};

/*
 * An async event fd or a completion channel.  Records are queued here;
 * the application's fd is one end of a socketpair that carries one token
 * byte per record, so poll()/epoll see it readable and a blocking read()
 * sleeps in the kernel.  A destroyed CQ takes its pending records (and as
 * many tokens) back, as the kernel's ib_uverbs_release_ucq() does.
 */
struct emu_event_file {
	bool async;
	bool app_closed;		/* fd gone, kept for the CQs using it */
	int app_fd;			/* given to the application */
	int dev_fd;			/* kept by the emulator to post events */
	unsigned int cq_refs;		/* CQs reporting to this channel */
	struct emu_event *head, *tail;
	struct emu_file *owner;		/* NULL once the uverbs file closed */
	struct emu_event_file *next;
};

void emu_kernel_init(const struct mana_emu_options *opts);

/* The IB device a uverbs file was opened on (uverbs<devnum>). */
static inline const struct emu_ibdev *emu_ibdev_of(const struct emu_file *f)
{
	return &emu_dev.ibdev[f->devnum];
}

/* The kernel version emulated (--kernel): every era-dependent choice. */
static inline const struct emu_era *kernel_era(void)
{
	return emu_era_get(emu.opts.kernel);
}

/*
 * link.c: link administration (mana_en's and hv_netvsc's ndo_open,
 * ndo_stop, ndo_change_mtu) and its meaning to the IB ports.  0 or
 * -errno as dev_change_flags() / dev_set_mtu() answer.
 */
struct emu_netdev;
bool emu_net_admin(void);
struct emu_link;
/* dev_change_flags(): only IFF_UP may change (else EOPNOTSUPP) */
int emu_link_change_flags(const struct emu_link *l, unsigned int flags);
/* SIOC[GS]IF{FLAGS,MTU}: -errno, 0, or 1 if @arg names no VM interface */
int emu_link_ioctl(unsigned long request, void *arg);
int emu_link_set_up(unsigned int ifindex, bool up);
int emu_link_set_mtu(unsigned int ifindex, long mtu);
/* The VF of @port: open (holds the vport), running with carrier, MTU. */
bool emu_port_netdev_open(unsigned int port);
bool emu_port_netdev_running(unsigned int port);
unsigned int emu_port_netdev_mtu(unsigned int port);
/* query_port's active width and speed (IB_WIDTH_*, IB_SPEED_*) */
void emu_port_width_speed(unsigned int port, uint8_t *width, uint8_t *speed);
/* mana_cfg_vport()/mana_uncfg_vport() of a raw QP's PD: 0 or -EBUSY */
int emu_port_vport_claim(unsigned int port);
void emu_port_vport_release(unsigned int port);
/* The netdev listener (core/netdev.h): port events. */
void emu_link_changed(unsigned int ifindex, const struct emu_netdev *old,
		      const struct emu_netdev *now);
/* Start the watcher of other processes' changes (once); after fork(). */
void emu_link_watch(void);
void emu_link_fork_child(void);

/* Query verbs (fill the core responses) */
void emu_query_device(const struct emu_ibdev *d,
		      struct ib_uverbs_ex_query_device_resp *resp);
/* IB port state and physical state as query_port and netlink report them */
void emu_port_state(unsigned int port, uint8_t *state, uint8_t *phys_state);
int emu_query_port(const struct emu_ibdev *d, unsigned int port,
		   struct ib_uverbs_query_port_resp *resp);
/* A port of the VM (1..--ports), or of the IB device @d. */
bool emu_port_valid(unsigned int port);
bool emu_ibdev_port_valid(const struct emu_ibdev *d, unsigned int port);

/* rnic.c: the RNIC attributes and the GID table of the RoCE port */
struct ib_uverbs_gid_entry;
void emu_rnic_query_device(struct ib_uverbs_ex_query_device_resp *resp);
void emu_rnic_query_port(const struct emu_ibdev *d, unsigned int port,
			 struct ib_uverbs_query_port_resp *resp);
uint8_t emu_port_active_mtu(unsigned int port);
int emu_gid_entry(const struct emu_ibdev *d, uint32_t port, uint32_t index,
		  struct ib_uverbs_gid_entry *e);
/* Every valid entry into out[max]: how many, or -EINVAL if more than max. */
int emu_gid_table(const struct emu_ibdev *d, struct ib_uverbs_gid_entry *out,
		  size_t max);

/* Files and contexts */
struct emu_file *emu_file_open(unsigned int devnum, int fd, bool writable);
/*
 * --vm: @fd came from another process; if it is one of the VM's uverbs
 * files, it names that file here too: the local file (sent to ourselves)
 * or a remote one.  0, or -ENOENT when it is no file of the VM.
 */
int emu_file_received(int fd, uint64_t tag);
/*
 * A command on a remote file: its context and objects live in the
 * process that opened it, which this emulation cannot reach (a known
 * difference): -EIO and one log line.
 */
int emu_remote_file_cmd(struct emu_file *file);
void emu_file_release(struct emu_file *file);
int emu_ucontext_create(struct emu_file *file, const struct emu_udata *uhw);
void emu_ucontext_destroy(struct emu_ucontext *ctx);

/* Event files: create, abort a not yet committed one, app closed its fd */
int emu_event_file_create(struct emu_file *file, bool async,
			  struct emu_event_file **out);
void emu_event_file_abort(struct emu_event_file *ev);
void emu_event_file_app_closed(struct emu_event_file *ev);
/* Size of one event record: async 16 bytes, completion 8 bytes */
size_t emu_event_size(const struct emu_event_file *ev);
/* The event file behind an fd of this uverbs file, or NULL. */
struct emu_event_file *emu_event_file_get(struct emu_file *file, int fd,
					  bool async);
/* Queue a record and its token; dropped if the fd is gone. */
void emu_event_post(struct emu_event_file *ev, struct emu_cq *cq,
		    const void *data, size_t len);
/* Take the oldest record: 0 and *out filled, or -EAGAIN. */
int emu_event_pop(struct emu_event_file *ev, void *out, size_t len);
/* IB_EVENT_DEVICE_FATAL to every context's async fds. */
void emu_post_device_fatal(void);
/* IB_EVENT_PORT_ACTIVE / PORT_ERR to every context of @d (link.c) */
void emu_post_port_event(const struct emu_ibdev *d, unsigned int port,
			 uint32_t event_type);

/* Objects */
struct emu_obj *emu_obj_lookup(struct emu_ucontext *ctx,
			       enum emu_obj_type type, uint64_t handle,
			       int *err);
int emu_obj_destroy(struct emu_obj *obj);

int emu_pd_alloc(struct emu_ucontext *ctx, const struct emu_udata *uhw,
		 struct emu_pd **out);

struct emu_mr_req {
	uint64_t start, length, iova;
	uint32_t access;
};

int emu_check_mr_access(uint32_t access);
/* mana_ib_alloc_mw (7.1): type 1 or 2, else -EINVAL */
int emu_mw_alloc(struct emu_pd *pd, uint8_t type, struct emu_mw **out);
int emu_mr_reg(struct emu_pd *pd, const struct emu_mr_req *req,
	       const struct emu_udata *uhw, struct emu_mr **out);
/*
 * mana_ib_reg_user_mr_dmabuf() from ib_umem_dmabuf_get_pinned() on: @req's
 * start is the offset into the dma-buf of @fd.
 */
int emu_dmabuf_mr_reg(struct emu_pd *pd, int fd, const struct emu_mr_req *req,
		      struct emu_mr **out);
/* mana_ib_reg_dm_mr(): @req's start is the offset into @dm, zero-based */
int emu_dm_mr_reg(struct emu_pd *pd, struct emu_dm *dm,
		  const struct emu_mr_req *req, struct emu_mr **out);

/* CQ (mana_ib_create_cq, ETH device) */
struct emu_cq_req {
	uint64_t user_handle;
	uint32_t cqe, comp_vector;
	struct emu_event_file *channel;
};

int emu_cq_create(struct emu_ucontext *ctx, const struct emu_cq_req *req,
		  const struct emu_udata *uhw, struct emu_cq **out);

/* WQ (mana_ib_create_wq) */
struct emu_wq_req {
	uint64_t user_handle;
	uint32_t wq_type, max_wr, max_sge, flags;
};

int emu_wq_create(struct emu_pd *pd, struct emu_cq *cq,
		  const struct emu_wq_req *req, const struct emu_udata *uhw,
		  struct emu_wq **out);

int emu_ind_tbl_create(struct emu_ucontext *ctx, uint32_t log_size,
		       struct emu_wq **wqs, struct emu_ind_tbl **out);

/* QP (mana_ib_create_qp: raw send QP, or RSS QP over a table) */
struct emu_qp_req {
	uint64_t user_handle;
	uint32_t qp_type;
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge;
	uint32_t max_inline_data;
	uint32_t create_flags;
	struct emu_pd *pd;
	struct emu_cq *send_cq, *recv_cq;
	struct emu_ind_tbl *tbl;
	bool sq_sig_all;
};

int emu_qp_create(struct emu_ucontext *ctx, const struct emu_qp_req *req,
		  const struct emu_udata *uhw, struct emu_qp **out);

/*
 * rc_qp.c: RNIC CQs and RC QPs (mana_ib_create_rc_qp and the core's
 * modify/query rules).  The hardware side is device/rc.h.
 */
struct ib_uverbs_modify_qp;
struct ib_uverbs_query_qp_resp;
struct emu_rc_qp;
/* The CQ's udata asked for an RNIC CQ: make its hardware CQ now. */
int emu_rnic_cq_create(struct emu_cq *cq);
void emu_rnic_cq_destroy(struct emu_cq *cq);
int emu_rc_qp_create(struct emu_ucontext *ctx, const struct emu_qp_req *req,
		     const struct emu_udata *uhw, struct emu_qp **out);
/* MODIFY_QP / EX_MODIFY_QP (@valid_mask: the bits the command may carry) */
int emu_rc_qp_modify(struct emu_qp *qp, const struct ib_uverbs_modify_qp *cmd,
		     uint32_t valid_mask, const struct emu_udata *uhw);

/* Doorbell page mapping (mmap of the uverbs fd) */
void *emu_uverbs_mmap(struct emu_file *file, void *addr, size_t len,
		      int prot, int flags, off_t offset, int *err);
bool emu_mmap_tracked(void);
/* munmap() of [addr, addr + len): true if it was a doorbell page (done). */
bool emu_munmap_doorbell(void *addr, size_t len);
/*
 * Trapped doorbell pages (mapped, or orphaned by a closed context) that
 * overlap [start, end), in address order: how many (at most @max).
 */
unsigned int emu_doorbell_pages_in(uintptr_t start, uintptr_t end,
				   uintptr_t *out, unsigned int max);
/* The live context with this serial (the trap cookie), or NULL. */
struct emu_ucontext *emu_ucontext_find(uint64_t serial);
uint32_t emu_ucontext_count(void);

/* Test API counters */
struct mana_emu_counts;
void emu_fill_counts(struct mana_emu_counts *out);

/*
 * ---- inside the emulated kernel only (kernel.c, event.c, mr.c, raw_qp.c,
 * doorbell.c): mana_ib's limits and the helpers one part lends another.
 */
/* mana_ib limits of the ETH device (mana-kernel-and-gdma.md 2.10) */
#define MANA_MAX_QP 64
#define MANA_MAX_CQ 64
#define MANA_MAX_SGE 15
#define MANA_MAX_SEND_SGE 30
#define MANA_MAX_MR 0xFFFFFF
#define MANA_MAX_PD 0x6000
/* 6.2's fixed answers (MANA_MAX_NUM_QUEUES, MAX_SEND_BUFFERS_PER_QUEUE) */
#define MANA_6_2_MAX_QP 64
#define MANA_6_2_MAX_QP_WR 256
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
#define IB_LINK_LAYER_INFINIBAND 1
#define IB_LINK_LAYER_ETHERNET 2

/* kernel.c: live contexts, and completion channels (for the test API) */
extern struct emu_ucontext *kernel_contexts;
extern uint32_t kernel_comp_channel_count;

/*
 * kernel.c: allocate and commit an object of @size bytes (struct emu_obj
 * first) with a use reference on each of @deps.
 */
void *obj_create(struct emu_ucontext *ctx, enum emu_obj_type type,
		 size_t size, struct emu_obj *const *deps,
		 unsigned int ndeps, void (*release)(struct emu_obj *));
void obj_free(struct emu_obj *obj);	/* unlink, drop deps, release, free */

/*
 * mr.c: ib_umem_get()'s checks (overflow, empty range, RLIMIT_MEMLOCK, the
 * range mapped with the access asked for); the pinned bytes it would add.
 */
int umem_check(uint64_t start, uint64_t length, bool write,
	       uint64_t *pinned);

/*
 * udmabuf.c: /dev/udmabuf (an fd of kind EMU_FD_UDMABUF) and the dma-bufs
 * it exports (EMU_FD_DMABUF).  emu_udmabuf_ioctl() answers UDMABUF_CREATE
 * and _LIST with the new dma-buf fd or -errno; emu_dmabuf_get() is
 * dma_buf_get() with a reference for an MR (-EBADF: no such fd, -EINVAL:
 * not a dma-buf).
 */
struct emu_dmabuf;
void *emu_udmabuf_open(int fd);
int emu_udmabuf_ioctl(unsigned long request, void *arg);
int emu_dmabuf_ioctl(unsigned long request, void *arg);
int *emu_udmabuf_owned_fd(void *obj, bool dmabuf);
void emu_udmabuf_release(void *obj, bool dmabuf);
void *emu_dmabuf_mmap(void *obj, void *addr, size_t len, int prot, int flags,
		      uint64_t offset, int *err);
struct emu_dmabuf *emu_dmabuf_get(int fd, int *err);
void emu_dmabuf_put(struct emu_dmabuf *d);
uint64_t emu_dmabuf_size(const struct emu_dmabuf *d);
void *emu_dmabuf_pages(const struct emu_dmabuf *d);

/* raw_qp.c: ib_copy_validate_udata_in(); a queue buffer's umem checks */
int udata_in(const struct emu_udata *uhw, void *dst, size_t size, size_t min);
int queue_umem(uint64_t addr, uint64_t size, bool ring, uint64_t *pinned);
uint64_t pinned_span(uint64_t start, uint64_t length);

/* event.c */
void event_files_detach(struct emu_file *file);
/* A CQ goes away: its undelivered events go with it. */
void event_records_drop_cq(struct emu_event_file *ev, struct emu_cq *cq);
/* A QP async event to every async fd of @ctx; a QP takes its own back. */
void emu_post_qp_event(struct emu_ucontext *ctx, struct emu_qp *qp,
		       uint64_t user_handle, uint32_t event_type);
void event_records_drop_qp(struct emu_ucontext *ctx, struct emu_qp *qp);

/* doorbell.c: the context goes, its doorbell page may stay mapped */
void db_page_orphan(struct emu_ucontext *ctx);

#endif /* MANA_EMU_KERNEL_H */
