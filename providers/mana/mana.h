/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef MANA_PROVIDER_H
#define MANA_PROVIDER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "libibverbs/driver.h"
#include <rdma/mana-abi.h>
#include "manadv.h"
#include "gdma.h"

/*
 * The datapath's per-queue lock, held for a few dozen instructions: a
 * test-and-set spin, inline (pthread_spin_lock costs a call into libc).
 */
struct mana_spinlock {
	atomic_int taken;
};

static inline void mana_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

static inline void mana_spin_init(struct mana_spinlock *l)
{
	atomic_init(&l->taken, 0);
}

static inline void mana_spin_lock(struct mana_spinlock *l)
{
	while (atomic_exchange_explicit(&l->taken, 1, memory_order_acquire))
		while (atomic_load_explicit(&l->taken, memory_order_relaxed))
			mana_cpu_relax();
}

static inline bool mana_spin_trylock(struct mana_spinlock *l)
{
	return !atomic_exchange_explicit(&l->taken, 1, memory_order_acquire);
}

static inline void mana_spin_unlock(struct mana_spinlock *l)
{
	atomic_store_explicit(&l->taken, 0, memory_order_release);
}

struct mana_device {
	struct verbs_device verbs_dev;
	/* driver id the kernel expects in every ioctl header */
	uint32_t kernel_driver_id;
};

/* Device limits the provider checks before asking the kernel. */
struct mana_caps {
	uint32_t max_qp_wr;
	uint32_t max_cqe;
	uint32_t phys_port_cnt;
};

struct mana_context {
	struct verbs_context ibv_ctx;
	pthread_mutex_t lock;		/* allocators, doorbell, caps */
	struct manadv_ctx_allocators allocators;
	void *db_page;
	bool caps_valid;
	struct mana_caps caps;
	atomic_bool fatal;		/* IBV_EVENT_DEVICE_FATAL seen */
	atomic_flag fatal_logged;
	/* raw QPs of this context (under lock): who holds a port, for EBUSY */
	struct mana_qp *raw_qps;
	/* alloc_ucontext's comp_mask: MANA_IB_UCNTX_* the kernel offers */
	uint64_t kernel_caps;
	/* device memory copies (dm.c): made at the first, under dm_lock */
	pthread_mutex_t dm_lock;
	struct mana_dm_copier *dm_copier;
};

/*
 * A protection domain, or a parent domain wrapping one.  MANA uses the
 * parent domain's pd_context as the port number of raw packet QPs.
 */
struct mana_pd {
	struct ibv_pd ibv_pd;
	struct mana_pd *protection_domain;	/* set for parent domains */
	void *pd_context;
	/* parent domain allocators (IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) */
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	/* userspace users: parent domains of a PD, queues of a parent domain */
	atomic_int refs;
	uint32_t pdn;			/* the kernel's PD number (7.1 on) */
	bool has_pdn;
};

/*
 * A queue buffer and how to give it back: the allocator that provided it is
 * remembered with the data it was called with, so a later change of the
 * context's allocators cannot pair a buffer with the wrong free().
 */
enum mana_buf_source {
	MANA_BUF_OWN,
	MANA_BUF_CTX_ALLOCATOR,
	MANA_BUF_PD_ALLOCATOR,
};

struct mana_buf {
	void *addr;
	size_t size;
	enum mana_buf_source source;
	void (*ctx_free)(void *ptr, void *data);
	void *ctx_data;
	struct mana_pd *pd;
	uint64_t resource_type;
};

struct mana_qp;
struct mana_wq;
struct mana_rc_qp;

/*
 * One completion as the datapath decodes it.  Opcode and QP number are
 * properties of the CQ (bound to one SQ or one RQ), not of each entry.
 */
struct mana_wc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t rx_flags;		/* RX OOB flag dword, 0 for sends */
};

/* The RX completion being consumed: one CQE may carry up to 4 frames. */
struct mana_rx_backlog {
	uint32_t flags;			/* RX OOB flag dword */
	uint16_t len[4];
	uint8_t next, left;		/* next frame, frames not yet polled */
};

/*
 * Locking: each queue (SQ, RQ, CQ) has its own spinlock, taken once per
 * post/poll call, so different queues never contend; it is skipped for
 * CQs created with IBV_CREATE_CQ_ATTR_SINGLE_THREADED.  A queue's tail
 * moves under its CQ's lock and its head under its own: each side only
 * reads the other's index (atomically), never writes it.
 */
struct mana_cq {
	struct verbs_cq vcq;
	struct mana_buf buf;
	uint32_t count;			/* CQEs, as requested */
	uint32_t cqid;			/* UINT32_MAX until a queue binds it */
	int comp_vector;		/* as created, for mana_cq_for_raw() */
	bool no_kernel_cq;		/* mana_cq_for_raw() lost it */
	atomic_bool bound;		/* to one SQ or RQ, as the kernel allows */
	/* datapath */
	struct mana_spinlock lock;
	bool single_threaded;
	/*
	 * Consumer position: the next CQE, in lap @lap (both sides start at
	 * index count: lap 1), and the owner bits (top of byte 63) it has
	 * when new.  The index is lap * count + slot.
	 */
	const uint8_t *next_cqe, *end_cqe;
	uint32_t lap;
	uint32_t owner_bits;
	uint32_t rang_lap;		/* lap at the last CQ doorbell */
	bool arm_pending;		/* armed while no queue bound it */
	bool notify_asked;		/* ibv_req_notify_cq() was called */
	/*
	 * What sends ibv_poll_cq off the raw path, tested once per poll:
	 * MANA_CQ_OVERRUN (completions were lost, by owner bits or
	 * IBV_EVENT_CQ_ERR: polls fail), MANA_CQ_RC (RC QPs complete here).
	 */
	_Atomic uint8_t slow;
	struct mana_qp *sq_qp;		/* bound send QP, or */
	struct mana_wq *rq;		/* bound receive WQ */
	/* rq while no coalesced frames wait, else a queue that is never ready */
	struct mana_wq *fast_rq;
	/*
	 * Between ibv_start_poll and ibv_end_poll, the fast path's position in
	 * fast_rq: the next WR number, its WR ids, and the CQE where it stops
	 * (set at the start: no further than the buffers then posted, so any
	 * CQE beyond is a stray for the general path, and no further than
	 * end_cqe, so it never wraps; next_cqe may be left at end_cqe, to be
	 * wrapped by ex_publish).  retired catches up at the end, or before
	 * the general path runs.
	 */
	const uint8_t *ex_stop;
	const uint64_t *ex_wr_ids;
	uint32_t ex_next, ex_wr_mask;
	uint32_t qp_num;		/* of the bound QP (the RSS QP for a WQ) */
	enum ibv_wc_opcode opcode;	/* SEND or RECV, by the bound queue */
	struct mana_rx_backlog backlog;
	/*
	 * The entry ibv_start_poll/next_poll is on: wr_id and status in the
	 * cq_ex, the rest read from cur_cqe, the CQE itself (fast path) or
	 * cur_rx, where the general path writes what it decoded in CQE layout.
	 */
	const uint8_t *cur_cqe;
	uint8_t cur_rx[16];
	struct mana_wc cur;
	uint32_t wc_flags_ex;		/* requested IBV_WC_EX_WITH_* */
	/*
	 * RNIC CQ (rc_poll.c): the hardware CQ made at create (rnic_cqid,
	 * UINT32_MAX if none), the RC QPs completing here, and the entry the
	 * extended CQ is on.  rc is set while RC QPs use it; a raw queue binds
	 * only a CQ that is not rc.
	 */
	bool rc;			/* mirrored in slow (MANA_CQ_RC) */
	uint32_t rnic_cqid;
	struct mana_rc_qp *rc_send_qps, *rc_recv_qps;
	/*
	 * Under the CQ lock: an ARMED_CMPL or ERROR CQE was processed, so
	 * send WRs (or a receive error) may be due without a CQE of their
	 * own; clear once a walk of the QPs finds none.
	 */
	bool rc_due;
	struct ibv_wc rc_cur;
};

/*
 * A WQE of a send or receive ring, kept in a side array laid out like the
 * ring itself: the info of the WQE at ring byte X is at byte X of the
 * array, so one offset serves both.
 */
struct mana_wqe_info {
	uint64_t wr_id;
	uint32_t size_bu;
	uint32_t reserved[5];
};

/*
 * The datapath side of an SQ or RQ.  Counted in 32-byte units; the ring
 * holds cap_bu of them (a power of two), enough for max_wr WQEs of max_sge,
 * so only WRs need counting.  The poster owns head_bu and posted, the
 * poller tail_bu and retired; each reads the other's count, never writes it.
 * An SQ files its WQEs by unit (wqes: a send error names a WQE by its
 * offset); an RQ completes in order, so it files WR ids by WR number
 * (wr_ids, wr_mask + 1 >= max_wr entries) and keeps no tail.
 */
struct mana_ring {
	struct mana_spinlock lock;	/* posters */
	uint32_t head_bu, posted;
	uint32_t tail_bu, retired;
	uint32_t cap_bu;
	uint32_t mask;			/* ring bytes - 1 */
	struct mana_wqe_info *wqes;	/* SQ: cap_bu entries */
	uint64_t *wr_ids;		/* RQ: by WR number */
	uint32_t wr_mask;
	uint64_t hdr_template;		/* WQE header, num_sge = 0 */
	uint64_t hdr1;			/* WQE header, 1 SGE */
	void *db_page;
};

struct mana_wq {
	struct ibv_wq ibv_wq;
	struct mana_buf buf;
	uint32_t max_wr;
	uint32_t limit;			/* outstanding WRs: min(max_wr, CQ depth) */
	uint32_t max_sge;
	uint32_t wqe_size;
	uint32_t wqid;			/* UINT32_MAX until an RSS QP uses it */
	atomic_int ind_table_refs;
	struct mana_ring ring;		/* db_page mapped on the first post */
};

struct mana_rwq_ind_table {
	struct ibv_rwq_ind_table ibv_table;
	uint32_t size;
	struct mana_wq **wqs;
};

enum mana_qp_kind {
	MANA_QP_RAW_SQ,			/* sends on one SQ */
	MANA_QP_RAW_RSS,		/* receives on the WQs of a table */
	MANA_QP_RC,			/* reliable connected (rc.h) */
};

/* A signaled send: where it starts and its WR number. */
struct mana_sq_signaled {
	uint32_t start_bu;
	uint32_t seq;
};

/*
 * Where a post is: the next unit (and, for sends, signaled-ring slot).
 * The WR count is head - delta (delta grows by size - 1 per WQE), and
 * limit is the head at which max_wr are outstanding, so a one-unit WQE
 * only moves head.  The ring's head_bu and posted (and the QP's sig_head)
 * catch up when the doorbell rings.
 */
struct mana_cursor {
	uint32_t head, limit, sig_head, delta;
};

/* ibv_wr_* between wr_start and wr_complete/abort */
enum mana_wr_state {
	MANA_WR_IDLE,			/* next: wr_send */
	MANA_WR_OPEN_SLOW,		/* wr_send done, data for the full path */
	MANA_WR_FAILED,			/* wr_err set: complete posts nothing */
	MANA_WR_STATES			/* from here up: an address (wr_state) */
};

struct mana_qp {
	struct verbs_qp vqp;
	struct mana_qp *ctx_next;	/* the context's raw_qps list */
	enum mana_qp_kind kind;
	uint32_t port;
	struct mana_buf sq_buf;
	uint32_t max_send_wr;
	uint32_t send_limit;		/* outstanding WRs: min(max_send_wr, CQ depth) */
	uint32_t max_send_sge;
	uint32_t max_inline_data;
	uint32_t sq_id;
	uint32_t tx_vp_offset;
	struct mana_cq *send_cq;
	struct mana_rwq_ind_table *ind_table;
	struct ibv_qp_cap cap;
	uint8_t sq_sig_all;
	/* send datapath */
	struct mana_ring ring;
	/* the signaled WQEs outstanding, oldest first (sig_mask + 1 entries) */
	struct mana_sq_signaled *sig_ring;
	uint32_t sig_mask;
	uint32_t sig_head, sig_tail;
	/*
	 * TX OOB by the send flags a fast path takes (FENCE, SIGNALED,
	 * SOLICITED): signaled if IBV_SEND_SIGNALED or sq_sig_all
	 */
	uint64_t oob_by_flags[8];
	uint8_t *inline_buf;		/* IBV_SEND_INLINE: a slot per unit */
	struct verbs_mr inline_mr;
	uint32_t inline_stride;
	bool flushing;			/* QP in ERR: poll flushes the SQ */
	/* ibv_wr_*: WQEs are built past head_bu and published by wr_complete */
	/*
	 * An enum mana_wr_state, or (MANA_WR_STATES and up) a send wr_send
	 * opened on the fast path: the address of its SGE slot, with header,
	 * OOB and WR id already in the WQE at wr_cur.head.  One word, so the
	 * common wr_send/wr_set_sge pair tests and sets one field.
	 */
	uintptr_t wr_state;
	struct mana_cursor wr_cur;
	uint64_t wr_pending_id;		/* MANA_WR_OPEN_SLOW */
	int wr_pending_flags;
	int wr_err;
};

static inline struct mana_context *to_mctx(struct ibv_context *ctx)
{
	return container_of(ctx, struct mana_context, ibv_ctx.context);
}

static inline struct mana_device *to_mdev(struct ibv_device *dev)
{
	return container_of(dev, struct mana_device, verbs_dev.device);
}

static inline struct mana_pd *to_mpd(struct ibv_pd *pd)
{
	return container_of(pd, struct mana_pd, ibv_pd);
}

enum {
	MANA_CQ_OVERRUN = 1 << 0,
	MANA_CQ_RC = 1 << 1,
};

static inline bool mana_cq_overrun(struct mana_cq *cq)
{
	return atomic_load_explicit(&cq->slow, memory_order_relaxed) &
	       MANA_CQ_OVERRUN;
}

static inline void mana_cq_set_overrun(struct mana_cq *cq)
{
	atomic_fetch_or_explicit(&cq->slow, MANA_CQ_OVERRUN,
				 memory_order_relaxed);
}

/* Under the CQ lock: RC QPs start or stop completing on @cq. */
static inline void mana_cq_set_rc(struct mana_cq *cq, bool rc)
{
	cq->rc = rc;
	if (rc)
		atomic_fetch_or_explicit(&cq->slow, MANA_CQ_RC,
					 memory_order_relaxed);
	else
		atomic_fetch_and_explicit(&cq->slow, (uint8_t)~MANA_CQ_RC,
					  memory_order_relaxed);
}

static inline struct mana_cq *to_mcq(struct ibv_cq *cq)
{
	return container_of(cq, struct mana_cq, vcq.cq);
}

static inline struct mana_wq *to_mwq(struct ibv_wq *wq)
{
	return container_of(wq, struct mana_wq, ibv_wq);
}

static inline struct mana_rwq_ind_table *to_mind(struct ibv_rwq_ind_table *t)
{
	return container_of(t, struct mana_rwq_ind_table, ibv_table);
}

static inline struct mana_qp *to_mqp(struct ibv_qp *qp)
{
	return container_of(qp, struct mana_qp, vqp.qp);
}

/* The protection domain behind a PD or parent domain. */
static inline struct mana_pd *mana_real_pd(struct mana_pd *pd)
{
	return pd->protection_domain ? pd->protection_domain : pd;
}

/* One line through the verbs log (VERBS_LOG_LEVEL / VERBS_LOG_FILE). */
#define mana_log(ibctx, level, fmt, ...) \
	__verbs_log(container_of(ibctx, struct verbs_context, context), level, \
		    "%s: %s:%d: " fmt "\n", (ibctx)->device->name, __func__, \
		    __LINE__, ##__VA_ARGS__)
#define mana_err(ibctx, fmt, ...) mana_log(ibctx, VERBS_LOG_ERR, fmt, ##__VA_ARGS__)
#define mana_warn(ibctx, fmt, ...) mana_log(ibctx, VERBS_LOG_WARN, fmt, ##__VA_ARGS__)
#define mana_dbg(ibctx, fmt, ...) mana_log(ibctx, VERBS_LOG_DEBUG, fmt, ##__VA_ARGS__)

extern const struct verbs_device_ops mana_dev_ops;

/* hint.c: the one line a user needs, once per process (MANA_QUIET) */
enum mana_hint {
	MANA_HINT_VPORT_HELD,
	MANA_HINT_DRIVER_ID,
	MANA_HINT_QP_TYPE,
	MANA_HINT_PCI_ID,
	MANA_HINT_SRQ,
	MANA_HINT_NR
};
void mana_hint(enum mana_hint which, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* raw QP creation got EBUSY/ENODEV from outside this context: say why */
void mana_hint_vport_held(struct ibv_context *ibctx, uint32_t port, int err);
const char *mana_qp_type_name(int qp_type);

bool mana_is_mana_context(struct ibv_context *ctx);

/* verbs.c */
int mana_query_device_ex(struct ibv_context *context,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size);
int mana_query_port(struct ibv_context *context, uint8_t port,
		    struct ibv_port_attr *attr);
struct ibv_pd *mana_alloc_pd(struct ibv_context *context);
/* dm.c */
struct ibv_dm *mana_alloc_dm(struct ibv_context *ibctx,
			     struct ibv_alloc_dm_attr *attr);
int mana_free_dm(struct ibv_dm *ibdm);
struct ibv_mr *mana_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
			      uint64_t dm_offset, size_t length,
			      unsigned int access);
void mana_dm_context_free(struct mana_context *ctx);
struct ibv_mr *mana_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
				  size_t length, uint64_t iova, int fd,
				  int access);
struct ibv_pd *mana_alloc_pd_flags(struct ibv_context *context,
				   uint32_t flags);
struct ibv_pd *mana_alloc_parent_domain(struct ibv_context *context,
					struct ibv_parent_domain_init_attr *attr);
int mana_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *mana_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			   uint64_t hca_va, int access);
int mana_dereg_mr(struct verbs_mr *vmr);
struct ibv_mw *mana_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int mana_dealloc_mw(struct ibv_mw *mw);
int mana_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		 struct ibv_mw_bind *bind);
void mana_format_fw_ver(uint64_t raw, char *buf, size_t len);
int mana_check_mr_access(int access);
int mana_get_caps(struct mana_context *ctx, struct mana_caps *caps);
void *mana_get_db_page(struct mana_context *ctx);

/* Hardware queue geometry (GDMA). */
#define MANA_CQE_SIZE 64u
/* mana_ib's bound on a CQ's entries: its bytes must fit in 32 bits */
#define MANA_CQE_MAX (UINT32_MAX / MANA_CQE_SIZE)
#define MANA_WQE_BU_SIZE 32u
#define MANA_WQE_HEADER_SIZE 8u
#define MANA_WQE_SGE_SIZE 16u
#define MANA_RQ_OOB_SIZE 8u
#define MANA_SQ_LONG_OOB_SIZE 24u
#define MANA_MAX_TX_SGE 30u	/* 512-byte SQE */
#define MANA_MAX_RX_SGE 15u	/* 256-byte RQE */
#define MANA_RSS_MAX_TABLE_LOG 6u	/* 64 entries */
#define MANA_MAX_INLINE_DATA 256u

uint32_t mana_rq_wqe_size(uint32_t sge);
uint32_t mana_sq_wqe_size(uint32_t sge);
size_t mana_queue_size(uint64_t bytes);
int mana_alloc_buf(struct mana_context *ctx, struct mana_pd *pd, size_t size,
		   uint64_t resource_type, struct mana_buf *buf);
void mana_free_buf(struct mana_buf *buf);

/* send.c, recv.c, poll.c */
int mana_sq_init(struct mana_context *ctx, struct mana_qp *qp, struct mana_pd *pd);
void mana_sq_fini(struct mana_qp *qp);
int mana_rq_init(struct mana_context *ctx, struct mana_wq *wq);
void mana_rq_fini(struct mana_wq *wq);
void mana_cq_init_ops(struct mana_cq *cq);
void mana_cq_bind_sq(struct mana_cq *cq, struct mana_qp *qp);
void mana_cq_bind_rq(struct mana_cq *cq, struct mana_wq *wq, uint32_t qp_num);
void mana_cq_unbind(struct mana_cq *cq);
void mana_cq_init_consumer(struct mana_cq *cq);
void mana_qp_init_ex_ops(struct mana_qp *qp);
int mana_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr);
int mana_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);
int mana_post_wq_recv(struct ibv_wq *wq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);
int mana_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int mana_req_notify_cq(struct ibv_cq *cq, int solicited_only);
void mana_async_event(struct ibv_context *context, struct ibv_async_event *event);
struct ibv_cq_ex *mana_create_cq_ex(struct ibv_context *context,
				    struct ibv_cq_init_attr_ex *attr);

/* cq.c, wq.c, qp.c */
struct ibv_cq *mana_create_cq(struct ibv_context *context, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector);
int mana_destroy_cq(struct ibv_cq *cq);
int mana_cq_for_raw(struct mana_cq *cq);
struct ibv_wq *mana_create_wq(struct ibv_context *context,
			      struct ibv_wq_init_attr *attr);
int mana_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr);
int mana_destroy_wq(struct ibv_wq *wq);
struct ibv_rwq_ind_table *
mana_create_rwq_ind_table(struct ibv_context *context,
			  struct ibv_rwq_ind_table_init_attr *attr);
int mana_destroy_rwq_ind_table(struct ibv_rwq_ind_table *table);
struct ibv_qp *mana_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_srq *mana_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
struct ibv_srq *mana_create_srq_ex(struct ibv_context *context,
				   struct ibv_srq_init_attr_ex *attr);
struct ibv_xrcd *mana_open_xrcd(struct ibv_context *context,
				struct ibv_xrcd_init_attr *attr);
struct ibv_qp *mana_create_qp_ex(struct ibv_context *context,
				 struct ibv_qp_init_attr_ex *attr);
int mana_destroy_qp(struct ibv_qp *qp);
int mana_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
int mana_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		  struct ibv_qp_init_attr *init_attr);

#endif /* MANA_PROVIDER_H */
