// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The GDMA device model (see device.h): hardware queues, the device
 * thread, doorbells, TX (gather, offloads, backend), RX (steering,
 * scatter, completions), CQEs, arming and completion events, faults and
 * statistics.
 *
 * Application memory (rings, CQEs, frame buffers) is only touched through
 * emu_copy_user_iov() (process_vm_readv/writev), so a bad address costs an
 * error CQE or a counter, never a crash of the device thread.  Posted WQEs
 * are read in chunks; a CQE is written with its owner dword last.
 *
 * Doorbells only latch new tails; the queues then run side by side like
 * the hardware's engines (run_sqs): a receive queue refilled behind a long
 * run of send doorbells gets its buffers at once, not after all the sends.
 * Frames that find no receive WQE wait in the RQ's receive buffer
 * (--rx-hold) for the next RQ doorbell, and are dropped when it is full.
 *
 * CQ overflow: the device never waits for the consumer.  It writes CQE
 * number p at slot p % count with owner bits (p / count) & 7 (producer
 * index from count), so a consumer that falls a whole lap behind finds
 * owner bits one lap ahead of what it expects and knows completions were
 * lost.  The device learns the consumer position only from CQ doorbells;
 * when one shows the consumer more than count entries behind the
 * producer, the entries overwritten unread are counted as CQ drops.
 */
#include "device.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <netinet/in.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "emulator/wire/backend.h"
#include "emulator/core/emu.h"
#include "frame.h"
#include "rc_dev.h"
#include "emulator/kernel/kernel.h"
#include "emulator/mana_emu.h"
#include "providers/mana/gdma.h"
#include "providers/mana/toeplitz.h"
#include "trap.h"

#define HWQ_HASH_SIZE 256
#define HWQ_TYPES 3
#define EVENT_BATCH 4096	/* doorbells latched per round */
#define SQ_SLICE 32		/* WQEs an SQ sends per round */
#define RXQ_MAX 4096		/* frames queued by backend threads */
#define SLEEP_MS 200
#define FRAME_MAX (BACKEND_MAX_FRAME + EMU_VLAN_HLEN)
#define ETH_MIN_LEN EMU_ETH_HLEN
#define RETIRED_MAX 65536	/* destroyed queues kept for the stats dump */

/* First id of each type: nonzero, different per type, SQ ids above 1023 so
 * that vsq_frame (sq id >> 10) is not trivially 0. */
static const uint32_t id_base[HWQ_TYPES + 1] = {
	[EMU_HWQ_SQ] = 1048, [EMU_HWQ_RQ] = 536, [EMU_HWQ_CQ] = 24,
};

struct rx_frame {
	struct rx_frame *next;
	unsigned int port;
	size_t len;
	uint8_t data[];
};

struct retired {
	enum emu_hwq_type type;
	uint32_t id;
	struct emu_queue_stats st;
};

/* RX completions being packed into one CQE_RX_COALESCED_4 */
struct coalesce {
	struct emu_hwq *rq;
	struct mana_rx_comp_oob oob;
	unsigned int n;
};

static struct {
	struct emu_hwq *hash[HWQ_TYPES + 1][HWQ_HASH_SIZE];
	uint32_t next_id[HWQ_TYPES + 1];
	/* thread: state under emu.lock */
	bool running, stop_req, shutdown;
	bool used;			/* this process had hardware queues */
	pthread_cond_t stopped;
	int wake_fd;
	_Atomic int fatal_req;		/* SIGUSR2 */
	bool fatal, fatal_after_done;
	unsigned int fatal_count;	/* device fatals raised, for --stats */
	uint64_t tx_total, cqe_total;
	/* backend threads -> device thread */
	pthread_mutex_t rxq_lock;
	struct rx_frame *rxq_head, *rxq_tail;
	unsigned int rxq_len;
	/* device-wide counters */
	uint64_t doorbells, bad_doorbells, foreign_doorbells;
	uint64_t port_unsteered[MANA_EMU_MAX_PORTS];
	uint64_t port_rxq_drops[MANA_EMU_MAX_PORTS];
	bool foreign_logged, bad_logged;
	struct retired *retired;
	size_t nretired, retired_cap;
	struct coalesce coal[16];
	unsigned int ncoal;
	struct emu_hwq *sq_head, *sq_tail;	/* SQs with work */
	/* rounds that found nothing to do, for mana_emu_quiesce() */
	uint64_t idle_rounds;
	pthread_cond_t idle;
	_Atomic uint64_t sleep_syscalls;	/* poll + read per sleep */
} dev = {
	.stopped = PTHREAD_COND_INITIALIZER,
	.idle = PTHREAD_COND_INITIALIZER,
	.rxq_lock = PTHREAD_MUTEX_INITIALIZER,
	.wake_fd = -1,
};

static __thread bool in_device_thread;

static void device_start(void);
static void cq_post(struct emu_hwq *cq, uint8_t *cqe, uint32_t wq_num,
		    bool is_sq);
static void rx_frame(unsigned int port, const uint8_t *f, size_t len);
static void coalesce_flush(struct coalesce *c);
static void rx_hold_flush(struct emu_hwq *rq);
static void sq_unschedule(struct emu_hwq *sq);
static unsigned int run_sqs(void);

/* ---- hardware queues ------------------------------------------------------ */

static struct emu_hwq **hwq_bucket(enum emu_hwq_type type, uint32_t id)
{
	return &dev.hash[type][id % HWQ_HASH_SIZE];
}

struct emu_hwq *emu_hwq_find(enum emu_hwq_type type, uint32_t id)
{
	struct emu_hwq *q;

	if (type < EMU_HWQ_SQ || type > EMU_HWQ_CQ)
		return NULL;
	for (q = *hwq_bucket(type, id); q; q = q->hash_next)
		if (q->id == id)
			return q;
	return NULL;
}

/* Next free id of @type in the 24-bit space, ids of live queues skipped. */
static int hwq_id_alloc(enum emu_hwq_type type, uint32_t *id)
{
	uint32_t tries;

	if (!dev.next_id[type])
		dev.next_id[type] = id_base[type];
	for (tries = 0; tries < GDMA_QUEUE_ID_MAX; tries++) {
		uint32_t cand = dev.next_id[type]++;

		if (dev.next_id[type] > GDMA_QUEUE_ID_MAX)
			dev.next_id[type] = id_base[type];
		if (!emu_hwq_find(type, cand)) {
			*id = cand;
			return 0;
		}
	}
	return -ENOSPC;
}

struct emu_hwq *emu_hwq_create(const struct emu_hwq_req *req)
{
	struct emu_hwq *q = calloc(1, sizeof(*q));
	int ret;

	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	ret = hwq_id_alloc(req->type, &q->id);
	if (ret) {
		free(q);
		errno = -ret;
		return NULL;
	}
	q->type = req->type;
	q->ctx = req->ctx;
	q->buf = req->buf;
	q->size = req->size;
	q->port = req->port;
	q->pd = req->pd;
	q->cq = req->cq;
	q->ucq = req->ucq;
	q->count = req->count;
	q->tx_vp_offset = req->tx_vp_offset;
	/* both sides start at count: the first lap carries owner bits 1 */
	q->prod = q->count;
	q->cons = q->count;
	q->lost_upto = q->count;
	q->hash_next = *hwq_bucket(q->type, q->id);
	*hwq_bucket(q->type, q->id) = q;
	dev.used = true;
	device_start();
	return q;
}

static void hwq_retire(const struct emu_hwq *q)
{
	struct retired *r;

	if (dev.nretired == dev.retired_cap) {
		size_t cap = dev.retired_cap ? dev.retired_cap * 2 : 64;

		if (cap > RETIRED_MAX)
			return;
		r = realloc(dev.retired, cap * sizeof(*r));
		if (!r)
			return;
		dev.retired = r;
		dev.retired_cap = cap;
	}
	r = &dev.retired[dev.nretired++];
	r->type = q->type;
	r->id = q->id;
	r->st = q->st;
}

void emu_hwq_destroy(struct emu_hwq *q)
{
	struct emu_hwq **pp;
	unsigned int i;

	for (i = 0; i < dev.ncoal; i++) {
		if (dev.coal[i].rq == q || dev.coal[i].rq->cq == q) {
			/* its CQ goes with it: nobody could read the CQE */
			dev.coal[i] = dev.coal[--dev.ncoal];
			i--;
		}
	}
	for (pp = hwq_bucket(q->type, q->id); *pp; pp = &(*pp)->hash_next) {
		if (*pp == q) {
			*pp = q->hash_next;
			break;
		}
	}
	rx_hold_flush(q);
	sq_unschedule(q);
	hwq_retire(q);
	free(q->cache);
	free(q);
}

/* ---- the device thread ---------------------------------------------------- */

static void wake(void)
{
	static const uint64_t one = 1;

	/* raw: also called from the SIGUSR2 handler */
	if (dev.wake_fd >= 0 &&
	    syscall(SYS_write, dev.wake_fd, &one, sizeof(one)) < 0)
		return;
}

static void sigusr2_handler(int sig)
{
	int saved = errno;

	atomic_store(&dev.fatal_req, 1);
	wake();
	errno = saved;
}

/* SIGUSR2 raises a device fatal, unless the application wants it. */
static void install_sigusr2(void)
{
	struct sigaction sa = { .sa_handler = sigusr2_handler,
				.sa_flags = SA_RESTART };
	struct sigaction old;

	if (sigaction(SIGUSR2, NULL, &old) || old.sa_handler != SIG_DFL ||
	    (old.sa_flags & SA_SIGINFO))
		return;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR2, &sa, NULL);
}

void emu_device_trap_ready(void)
{
	wake();
}

void emu_device_idle(void)
{
	dev.stop_req = true;
	/* a device fatal lasts until every user is gone (a reset) */
	dev.fatal = false;
	wake();
}

/* Raise IB_EVENT_DEVICE_FATAL; the device stops processing queues. */
static void device_fatal(const char *why)
{
	if (dev.fatal)
		return;
	dev.fatal = true;
	dev.fatal_count++;
	if (emu_verbose())
		emu_log("device fatal (%s): async event to every context", why);
	emu_post_device_fatal();
}

static void handle_doorbell(const struct trap_event *ev);

static unsigned int pop_doorbells(void)
{
	struct trap_event ev;
	unsigned int n = 0;

	while (n < EVENT_BATCH && !trap_event_pop(&ev)) {
		handle_doorbell(&ev);
		n++;
	}
	return n;
}

static void rx_cb(void *rx_ctx, unsigned int port, const void *frame,
		  size_t len);

/* Loopback frames are delivered here, in the device thread. */
static unsigned int poll_backends(void)
{
	unsigned int port, n = 0;

	for (port = 1; port <= emu_dev.nports; port++) {
		struct backend *b = emu_dev.ports[port - 1].vport.backend;

		if (b)
			n += backend_poll(b);
	}
	return n;
}

/* Frames queued by socket/tap backend threads. */
static unsigned int drain_rxq(void)
{
	struct rx_frame *f, *next;
	unsigned int n = 0;

	pthread_mutex_lock(&dev.rxq_lock);
	f = dev.rxq_head;
	dev.rxq_head = dev.rxq_tail = NULL;
	dev.rxq_len = 0;
	pthread_mutex_unlock(&dev.rxq_lock);
	for (; f; f = next, n++) {
		next = f->next;
		rx_frame(f->port, f->data, f->len);
		free(f);
	}
	return n;
}

static void coalesce_flush_all(void)
{
	while (dev.ncoal)
		coalesce_flush(&dev.coal[dev.ncoal - 1]);
}

static bool device_work(void)
{
	unsigned int n = 0;

	/* first: doorbells rung after the signal must not be served */
	if (atomic_exchange(&dev.fatal_req, 0)) {
		device_fatal("SIGUSR2");
		n++;
	}
	n += pop_doorbells();
	n += run_sqs();
	n += poll_backends();
	n += drain_rxq();
	if (emu_rc_nqps)
		n += emu_rc_work();
	coalesce_flush_all();
	/* SQs with work left mean another round at once, unless fatal */
	return n > 0 || (dev.sq_head && !dev.fatal);
}

/* Sleep until a doorbell, a frame, a signal or a stop request. */
static void device_sleep(int timeout_ms)
{
	struct pollfd pfd[2];
	int tfd = trap_event_fd(), n = 0;
	uint64_t v;

	if (tfd >= 0) {
		if (trap_event_arm())
			return;
		pfd[n].fd = tfd;
		pfd[n++].events = POLLIN;
	}
	pfd[n].fd = dev.wake_fd;
	pfd[n++].events = POLLIN;
	poll(pfd, n, timeout_ms);
	if (tfd >= 0)
		trap_event_disarm();
	if (read(dev.wake_fd, &v, sizeof(v)) < 0)
		v = 0;
	atomic_fetch_add_explicit(&dev.sleep_syscalls, 2, memory_order_relaxed);
}

static bool device_should_exit(void)
{
	return dev.shutdown || (dev.stop_req && !emu_ucontext_count());
}

static void *device_main(void *arg)
{
	int sleep_ms = SLEEP_MS;
	bool busy;

	in_device_thread = true;
	pthread_mutex_lock(&emu.lock);
	for (;;) {
		busy = device_work();
		if (!busy) {
			dev.idle_rounds++;
			pthread_cond_broadcast(&dev.idle);
		}
		if (device_should_exit())
			break;
		sleep_ms = emu_rc_nqps ? emu_rc_sleep_ms(SLEEP_MS) : SLEEP_MS;
		pthread_mutex_unlock(&emu.lock);
		if (!busy)
			device_sleep(sleep_ms);
		pthread_mutex_lock(&emu.lock);
	}
	dev.running = false;
	pthread_cond_broadcast(&dev.stopped);
	pthread_mutex_unlock(&emu.lock);
	return NULL;
}

/* Started with the first hardware queue; a stop request is cancelled. */
static void device_start(void)
{
	pthread_attr_t attr;
	sigset_t set, old;
	pthread_t t;

	dev.stop_req = false;
	if (dev.running || dev.shutdown)
		return;
	if (dev.wake_fd < 0) {
		dev.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (dev.wake_fd < 0)
			return;
		install_sigusr2();
	}
	/* the application's asynchronous signals are not ours to take */
	sigfillset(&set);
	sigdelset(&set, SIGSEGV);
	sigdelset(&set, SIGBUS);
	sigdelset(&set, SIGILL);
	sigdelset(&set, SIGFPE);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_sigmask(SIG_SETMASK, &set, &old);
	if (!pthread_create(&t, &attr, device_main, NULL))
		dev.running = true;
	else
		fprintf(stderr, "mana-emu: cannot start the device thread\n");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
}

void emu_device_fork_child(void)
{
	dev.running = false;
	dev.wake_fd = -1;	/* shared with the parent: make our own */
}

/* ---- ports ----------------------------------------------------------------- */

static void rx_cb(void *rx_ctx, unsigned int port, const void *frame,
		  size_t len)
{
	struct rx_frame *f;

	/* loopback: we are inside backend_poll(), under emu.lock */
	if (in_device_thread) {
		rx_frame(port, frame, len);
		return;
	}
	f = malloc(sizeof(*f) + len);
	if (!f)
		return;
	f->next = NULL;
	f->port = port;
	f->len = len;
	memcpy(f->data, frame, len);
	pthread_mutex_lock(&dev.rxq_lock);
	if (dev.rxq_len >= RXQ_MAX) {
		dev.port_rxq_drops[port - 1]++;
		pthread_mutex_unlock(&dev.rxq_lock);
		free(f);
		return;
	}
	if (dev.rxq_tail)
		dev.rxq_tail->next = f;
	else
		dev.rxq_head = f;
	dev.rxq_tail = f;
	dev.rxq_len++;
	pthread_mutex_unlock(&dev.rxq_lock);
	wake();
}

int emu_port_attach(unsigned int port)
{
	struct emu_vport *v = &emu_dev.ports[port - 1].vport;
	const char *spec = mana_emu_port_backend(&emu.opts, port);

	if (v->backend)
		return 0;
	v->backend = backend_open(spec, emu.opts.pcap[0] ? emu.opts.pcap : NULL,
				  port, rx_cb, NULL);
	if (!v->backend)
		return errno ? -errno : -EIO;
	if (emu_verbose())
		emu_log("port %u: backend %s%s%s", port, spec,
			emu.opts.pcap[0] ? ", capture " : "", emu.opts.pcap);
	return 0;
}

/* ---- application memory ---------------------------------------------------- */

/*
 * WQEs are read from the ring in chunks: posted WQEs do not change until
 * they complete, so the bytes between the device head and the doorbell
 * tail may be read once and decoded from the copy.
 */
#define WQ_CACHE_SIZE 8192

struct wq_cache {
	uint32_t start, len;		/* ring offsets (free-running) held */
	/* the last header that passed the checks, raw and decoded */
	bool hdr_ok;
	uint8_t hdr_raw[GDMA_WQE_HDR_SIZE];
	struct gdma_wqe_header hdr;
	/* SQ: the last TX OOB that passed tx_check_oob(), raw and decoded */
	uint32_t oob_size;		/* 0: none */
	uint8_t oob_raw[GDMA_OOB_XLARGE];
	struct mana_tx_oob oob;
	uint8_t data[WQ_CACHE_SIZE];
};

/* Read up to WQ_CACHE_SIZE posted bytes from the head, wrap included. */
static int wq_cache_fill(struct emu_hwq *q)
{
	struct wq_cache *c = q->cache;
	uint32_t want = q->tail - q->head, off, first;
	struct iovec l[2], r[2];
	unsigned int n = 1;

	if (want > WQ_CACHE_SIZE)
		want = WQ_CACHE_SIZE;
	off = q->head & (q->size - 1);
	first = q->size - off < want ? q->size - off : want;
	l[0] = (struct iovec){ c->data, first };
	r[0] = (struct iovec){ (void *)(uintptr_t)(q->buf + off), first };
	if (first < want) {
		l[1] = (struct iovec){ c->data + first, want - first };
		r[1] = (struct iovec){ (void *)(uintptr_t)q->buf, want - first };
		n = 2;
	}
	c->start = q->head;
	c->len = 0;
	if (emu_copy_user_iov(l, r, n, false) != want)
		return -EFAULT;
	c->len = want;
	return 0;
}

/*
 * Decode in place, never past @len (the doorbell tail).  A queue's WQEs
 * mostly repeat one header: the same 8 bytes as the last header that
 * passed gdma_wqe_header_decode() decode to the same result.
 */
static int wqe_decode(struct wq_cache *c, const uint8_t *p, uint32_t len,
		      enum gdma_queue_type qt, struct gdma_wqe *w,
		      uint32_t *size_bu)
{
	if (len < GDMA_WQE_HDR_SIZE)
		return -EINVAL;
	if (c->hdr_ok && !memcmp(p, c->hdr_raw, GDMA_WQE_HDR_SIZE)) {
		w->hdr = c->hdr;
		return gdma_wqe_decode_body(p, len, w, size_bu);
	}
	if (gdma_wqe_header_decode(p, qt, &w->hdr))
		return -EINVAL;
	memcpy(c->hdr_raw, p, GDMA_WQE_HDR_SIZE);
	c->hdr = w->hdr;
	c->hdr_ok = true;
	return gdma_wqe_decode_body(p, len, w, size_bu);
}

/* Decode the WQE at the device head (never past the doorbell tail). */
static int wqe_fetch(struct emu_hwq *q, enum gdma_queue_type qt,
		     struct gdma_wqe *w, uint32_t *size_bu)
{
	uint32_t max = qt == GDMA_SQ ? GDMA_MAX_SQE_SIZE : GDMA_MAX_RQE_SIZE;
	uint32_t need = q->tail - q->head < max ? q->tail - q->head : max;
	struct wq_cache *c = q->cache;
	uint32_t at;

	if (!c) {
		c = q->cache = calloc(1, sizeof(*c));
		if (!c)
			return -ENOMEM;
	}
	at = q->head - c->start;
	if (at >= c->len || c->len - at < need) {
		if (wq_cache_fill(q))
			return -EFAULT;
		at = 0;
	}
	return wqe_decode(c, c->data + at, need, qt, w, size_bu);
}

/*
 * The application address an SGE names: a key of an MR of the queue's PD
 * whose [iova, iova + length) holds the range, with write access if the
 * device writes there (local read is always allowed).  0 if not.
 */
static uintptr_t sge_map(const struct emu_hwq *q, const struct gdma_sge *sge,
			 bool write)
{
	struct emu_mr *mr = emu_mr_find(sge->mkey);
	uint64_t end = sge->addr + sge->size;

	if (!mr || mr->obj.deps[0] != &q->pd->obj)
		return 0;
	if (write && !(mr->access & IBV_ACCESS_LOCAL_WRITE))
		return 0;
	if (end < sge->addr || sge->addr < mr->iova ||
	    end > mr->iova + mr->length)
		return 0;
	return (uintptr_t)(mr->start + (sge->addr - mr->iova));
}

/* ---- completions ------------------------------------------------------------ */

static void cq_notify(struct emu_hwq *cq)
{
	struct ib_uverbs_comp_event_desc desc = {
		.cq_handle = cq->ucq->user_handle,
	};

	if (cq->ucq->channel)
		emu_event_post(cq->ucq->channel, cq->ucq, &desc, sizeof(desc));
}

static void cq_count_lost(struct emu_hwq *cq, uint32_t cons);

/*
 * Write CQE number cq->prod: @cqe holds the 60 data bytes, encoded in
 * place by the caller; the last dword (wq_num, is_sq, owner bits) is
 * added here.  The data go first, the dword holding the owner bits after
 * a release fence, as hardware does.
 */
static void cq_post(struct emu_hwq *cq, uint8_t *cqe, uint32_t wq_num,
		    bool is_sq)
{
	uint32_t owner = gdma_owner_expected(cq->prod, cq->count);
	uint8_t *slot;

	if (emu.opts.fault_drop_cqe &&
	    ++dev.cqe_total == emu.opts.fault_drop_cqe) {
		cq->st.drops++;		/* --fault=drop-cqe: lost for good */
		return;
	}
	/* gdma_cqe_encode()'s checks, on the caller's buffer */
	if (wq_num > GDMA_QUEUE_ID_MAX || owner > GDMA_OWNER_MASK)
		return;
	gdma_put_le32(cqe + GDMA_CQE_DATA_SIZE,
		      wq_num | (uint32_t)is_sq << 24 | owner << 29);
	slot = (uint8_t *)(uintptr_t)cq->buf +
	       (size_t)gdma_queue_slot(cq->prod, cq->count) * GDMA_CQE_SIZE;
	/*
	 * Two copies in order: the owner dword is a separate store after the
	 * data (x86 keeps stores in order; a string move's own stores need not
	 * be, hence not one copy).
	 */
	atomic_thread_fence(memory_order_release);
	if (emu_copy_user_one(cqe, slot, GDMA_CQE_DATA_SIZE, true) !=
	    GDMA_CQE_DATA_SIZE ||
	    emu_copy_user_one(cqe + GDMA_CQE_DATA_SIZE, slot + GDMA_CQE_DATA_SIZE,
			      4, true) != 4) {
		cq->st.errors++;
		return;
	}
	cq->prod++;
	cq->st.frames++;
	/*
	 * Eight laps past the consumer's last report: its doorbell index (mod
	 * 8 laps) could no longer show the overrun, so it is one now.
	 */
	if (cq->prod - cq->cons >= 8 * cq->count)
		cq_count_lost(cq, cq->cons);
	if (cq->armed) {
		cq->armed = false;
		cq_notify(cq);
	}
}

/*
 * Entries overwritten before the consumer (at @cons) reached them.  An
 * overrun the consumer has not been told of (none since the position it
 * last reported) raises IB_EVENT_CQ_ERR for the CQ.
 */
static void cq_count_lost(struct emu_hwq *cq, uint32_t cons)
{
	uint32_t from = cons, upto = cq->prod - cq->count;
	bool told = (int32_t)(cq->lost_upto - cons) > 0;

	if (cq->prod - cons <= cq->count)
		return;
	if (told)
		from = cq->lost_upto;
	if ((int32_t)(upto - from) > 0) {
		cq->st.drops += upto - from;
		cq->lost_upto = upto;
		if (!told)
			emu_post_cq_error(cq->ctx, cq->ucq);
	}
}

/*
 * CQ doorbell: the consumer is @n entries behind the producer.  Arm: fire
 * now if something is unconsumed, else on the next CQE; a consumer that
 * was lapped gets no event.  Without arm it only reports progress (a
 * pending arm stays: rdma-core style providers ring unarmed every few
 * laps while the application waits for an event).
 */
static void cq_doorbell(struct emu_hwq *cq, uint32_t n, bool arm)
{
	cq->cons = cq->prod - n;
	cq_count_lost(cq, cq->cons);
	if (!arm)
		return;
	if (!n) {
		cq->armed = true;
	} else if (n <= cq->count) {
		cq->armed = false;
		cq_notify(cq);
	} else {
		cq->armed = false;
	}
}

static void tx_cqe(struct emu_hwq *sq, uint8_t type, uint32_t wqe_off)
{
	struct mana_tx_comp_oob o = {
		.cqe_type = type, .tx_wqe_offset = wqe_off & 0x7FFFFFF,
	};
	uint8_t data[GDMA_CQE_SIZE];

	if (mana_tx_comp_oob_encode(&o, data))
		return;
	cq_post(sq->cq, data, sq->id, true);
}

/* ---- transmit ---------------------------------------------------------------- */

/* Gather the SGEs into @f; a CQE error type, or CQE_TX_OKAY and *len. */
static uint8_t tx_gather(struct emu_hwq *sq, const struct gdma_wqe *w,
			 uint8_t *f, size_t *len)
{
	uint32_t i, nsge = w->hdr.num_sge - w->hdr.num_padding_sgls;
	struct iovec l[GDMA_MAX_TX_SGE], r[GDMA_MAX_TX_SGE];
	unsigned int n = 0;
	size_t total = 0;

	for (i = 0; i < nsge; i++) {
		const struct gdma_sge *sge = &w->sge[i];
		uintptr_t va;

		if (!sge->size)
			continue;	/* the dummy SGE of an empty send */
		va = sge_map(sq, sge, false);
		if (!va)
			return CQE_TX_HDR_PROCESSING_ERROR;
		if (total + sge->size > BACKEND_MAX_FRAME)
			return CQE_TX_MTU_DROP;
		l[n] = (struct iovec){ f + total, sge->size };
		r[n++] = (struct iovec){ (void *)va, sge->size };
		total += sge->size;
	}
	if (total < ETH_MIN_LEN)
		return CQE_TX_INVALID_ETH_TYPE;
	/* inside an MR but not readable (unmapped since): the MR is bad */
	if ((n == 1 ? emu_copy_user_one(l[0].iov_base, r[0].iov_base, total,
					false) :
		      emu_copy_user_iov(l, r, n, false)) != total)
		return CQE_TX_HDR_PROCESSING_ERROR;
	*len = total;
	return CQE_TX_OKAY;
}

/* Checksums, then the VLAN tag of a long OOB (checksums skip L2). */
static uint8_t tx_offload(const struct mana_tx_oob *oob, uint8_t *f,
			  size_t *len)
{
	struct emu_frame fr;
	uint16_t tci;

	if (oob->comp_iphdr_csum || oob->comp_tcp_csum || oob->comp_udp_csum) {
		emu_frame_parse(f, *len, &fr);
		emu_frame_tx_csum(f, &fr, oob->comp_iphdr_csum,
				  oob->comp_tcp_csum, oob->comp_udp_csum);
	}
	if (oob->pkt_fmt != MANA_LONG_PKT_FMT || !oob->inject_vlan_pri_tag)
		return CQE_TX_OKAY;
	if (*len + EMU_VLAN_HLEN > BACKEND_MAX_FRAME)
		return CQE_TX_MTU_DROP;
	tci = (uint16_t)(oob->pcp << 13 | oob->dei << 12 | oob->vlan_id);
	*len = emu_frame_vlan_insert(f, *len, tci);
	return CQE_TX_OKAY;
}

/* DPDK sets the short vport offset even in the long form. */
static bool tx_vp_ok(const struct emu_hwq *sq, const struct mana_tx_oob *o)
{
	if (sq->tx_vp_offset <= MANA_SHORT_VPORT_OFFSET_MAX)
		return o->short_vp_offset == sq->tx_vp_offset;
	return o->pkt_fmt == MANA_LONG_PKT_FMT &&
	       o->long_vp_offset == sq->tx_vp_offset;
}

static uint8_t tx_check_oob(const struct emu_hwq *sq, const struct gdma_wqe *w,
			    struct mana_tx_oob *oob)
{
	struct wq_cache *c = sq->cache;

	/* the same bytes as the last good OOB of this SQ: the same result */
	if (!w->hdr.oob_in_sgl && c->oob_size &&
	    c->oob_size == w->hdr.oob_size && !memcmp(c->oob_raw, w->oob, c->oob_size)) {
		*oob = c->oob;
		return CQE_TX_OKAY;
	}
	/* DPDK leaves the reserved long-OOB bits (and trans_off) unset */
	if (w->hdr.oob_in_sgl ||
	    mana_tx_oob_decode(w->oob, w->hdr.oob_size,
			       MANA_TX_OOB_IGNORE_RSVD, oob))
		return CQE_TX_INVALID_OOB;
	if (oob->vcq_num != sq->cq->id ||
	    oob->vsq_frame != mana_tx_vsq_frame(sq->id))
		return CQE_TX_INVALID_OOB;
	if (!tx_vp_ok(sq, oob))
		return CQE_TX_VPORT_IDX_OUT_OF_RANGE;
	if (w->hdr.oob_size <= sizeof(c->oob_raw)) {
		c->oob_size = w->hdr.oob_size;
		memcpy(c->oob_raw, w->oob, c->oob_size);
		c->oob = *oob;
	}
	return CQE_TX_OKAY;
}

static void tx_sent(struct emu_hwq *sq, size_t len)
{
	sq->st.frames++;
	sq->st.bytes += len;
	dev.tx_total++;
	if (emu.opts.fault_fatal_after && !dev.fatal_after_done &&
	    dev.tx_total >= emu.opts.fault_fatal_after) {
		dev.fatal_after_done = true;
		device_fatal("--fault=fatal-after");
	}
}

/* Execute one send WQE; errors always get their own CQE. */
static void tx_one(struct emu_hwq *sq, const struct gdma_wqe *w,
		   uint32_t wqe_off)
{
	static uint8_t frame[FRAME_MAX];
	struct mana_tx_oob oob;
	size_t len = 0;
	uint8_t type;

	type = tx_check_oob(sq, w, &oob);
	if (type == CQE_TX_OKAY)
		type = tx_gather(sq, w, frame, &len);
	if (type == CQE_TX_OKAY)
		type = tx_offload(&oob, frame, &len);
	if (type != CQE_TX_OKAY) {
		sq->st.errors++;
		tx_cqe(sq, type, wqe_off);
		return;
	}
	backend_xmit(emu_dev.ports[sq->port - 1].vport.backend, frame, len);
	tx_sent(sq, len);
	if (!oob.suppress_txcqe_gen)
		tx_cqe(sq, CQE_TX_OKAY, wqe_off);
}

/* Walk the SQ from the device head to the doorbell tail. */
static unsigned int sq_process(struct emu_hwq *sq, unsigned int budget)
{
	unsigned int sent = 0;
	struct gdma_wqe w;
	uint32_t size_bu, off;

	while (sq->head != sq->tail && !dev.fatal && sent < budget) {
		off = sq->head & (sq->size - 1);
		if (wqe_fetch(sq, GDMA_SQ, &w, &size_bu) ||
		    size_bu * GDMA_WQE_BU_SIZE > sq->tail - sq->head) {
			/* no size to skip by: drop what was rung */
			sq->st.errors++;
			tx_cqe(sq, CQE_TX_INVALID_OOB, off);
			sq->head = sq->tail;
			break;
		}
		tx_one(sq, &w, off);
		sq->head += size_bu * GDMA_WQE_BU_SIZE;
		sent++;
	}
	/* loopback frames arrive right after the work that sent them */
	if (sent)
		poll_backends();
	return sent;
}

/*
 * Queues work side by side, as the hardware's engines do: a doorbell only
 * latches the new tail (the device thread takes every doorbell rung so
 * far first), then each SQ with work sends a slice of SQ_SLICE WQEs per
 * round.  A receive queue refilled behind a long run of send doorbells is
 * thus refilled at once, not after all of them.
 */
static void sq_schedule(struct emu_hwq *sq)
{
	if (sq->sq_listed)
		return;
	sq->sq_listed = true;
	sq->sq_next = NULL;
	if (dev.sq_tail)
		dev.sq_tail->sq_next = sq;
	else
		dev.sq_head = sq;
	dev.sq_tail = sq;
}

static void sq_unschedule(struct emu_hwq *sq)
{
	struct emu_hwq **pp, *prev = NULL;

	if (!sq->sq_listed)
		return;
	for (pp = &dev.sq_head; *pp; prev = *pp, pp = &(*pp)->sq_next) {
		if (*pp != sq)
			continue;
		*pp = sq->sq_next;
		if (dev.sq_tail == sq)
			dev.sq_tail = prev;
		break;
	}
	sq->sq_listed = false;
}

/* One slice of every SQ with work, round robin. */
static unsigned int run_sqs(void)
{
	struct emu_hwq *sq, *last = dev.sq_tail;
	unsigned int n = 0;

	while ((sq = dev.sq_head) && !dev.fatal) {
		sq_unschedule(sq);
		n += sq_process(sq, SQ_SLICE);
		if (sq->head != sq->tail)
			sq_schedule(sq);
		if (sq == last)
			break;
	}
	return n;
}

/* ---- receive ------------------------------------------------------------------ */

static void coalesce_flush(struct coalesce *c)
{
	uint8_t data[GDMA_CQE_SIZE];

	if (c->n > 1)
		c->oob.cqe_type = CQE_RX_COALESCED_4;
	if (!mana_rx_comp_oob_encode(&c->oob, data))
		cq_post(c->rq->cq, data, c->rq->id, false);
	*c = dev.coal[--dev.ncoal];
}

static struct coalesce *coalesce_find(struct emu_hwq *rq)
{
	unsigned int i;

	for (i = 0; i < dev.ncoal; i++)
		if (dev.coal[i].rq == rq)
			return &dev.coal[i];
	return NULL;
}

/* Same flags dword: everything but the per-packet slots and the offset. */
static bool coalesce_fits(const struct mana_rx_comp_oob *a,
			  const struct mana_rx_comp_oob *b)
{
	return mana_rx_comp_flags(a) == mana_rx_comp_flags(b);
}

static void rx_complete(struct emu_hwq *rq, const struct mana_rx_comp_oob *o)
{
	uint8_t data[GDMA_CQE_SIZE];
	struct coalesce *c = coalesce_find(rq);

	if (c && (o->cqe_type != CQE_RX_OKAY || !coalesce_fits(&c->oob, o))) {
		coalesce_flush(c);
		c = NULL;
	}
	if (o->cqe_type == CQE_RX_OKAY && emu.opts.rx_coalesce) {
		if (!c) {
			if (dev.ncoal == sizeof(dev.coal) / sizeof(dev.coal[0]))
				coalesce_flush(&dev.coal[0]);
			c = &dev.coal[dev.ncoal++];
			c->rq = rq;
			c->oob = *o;
			c->n = 1;
		} else {
			c->oob.ppi[c->n++] = o->ppi[0];
		}
		if (c->n == MANA_RXCOMP_NUM_PPI)
			coalesce_flush(c);
		return;
	}
	if (!mana_rx_comp_oob_encode(o, data))
		cq_post(rq->cq, data, rq->id, false);
}

/* Scatter @len bytes into the WQE's buffers: OKAY, TRUNCATED, or bad SGE. */
static uint8_t rx_scatter(struct emu_hwq *rq, const struct gdma_wqe *w,
			  const uint8_t *f, size_t len, bool *bad)
{
	struct iovec l[GDMA_MAX_RX_SGE], r[GDMA_MAX_RX_SGE];
	size_t done = 0, chunk;
	unsigned int i, n = 0;

	*bad = false;
	for (i = 0; i < w->hdr.num_sge && done < len; i++) {
		const struct gdma_sge *sge = &w->sge[i];
		uintptr_t va;

		if (!sge->size)
			continue;
		va = sge_map(rq, sge, true);
		if (!va) {
			*bad = true;
			return CQE_RX_TRUNCATED;
		}
		chunk = len - done < sge->size ? len - done : sge->size;
		l[n] = (struct iovec){ (void *)(f + done), chunk };
		r[n++] = (struct iovec){ (void *)va, chunk };
		done += chunk;
	}
	if ((n == 1 ? emu_copy_user_one(l[0].iov_base, r[0].iov_base, done,
					true) :
		      emu_copy_user_iov(l, r, n, true)) != done) {
		*bad = true;
		return CQE_RX_TRUNCATED;
	}
	return done == len ? CQE_RX_OKAY : CQE_RX_TRUNCATED;
}

/* The checksum bits of the RX flags dword (mana_rx_comp_flags() layout). */
static uint32_t rx_csum_flags(const uint8_t *f, const struct emu_frame *fr)
{
	enum emu_csum ip, l4;
	uint32_t v;

	emu_frame_rx_csum(f, fr, &ip, &l4);
	v = (uint32_t)(ip == EMU_CSUM_OK) << 25 | (uint32_t)(ip == EMU_CSUM_BAD) << 26;
	if (fr->l4_proto == IPPROTO_TCP)
		v |= (uint32_t)(l4 == EMU_CSUM_OK) << 27 |
		     (uint32_t)(l4 == EMU_CSUM_BAD) << 28;
	else if (fr->l4_proto == IPPROTO_UDP)
		v |= (uint32_t)(l4 == EMU_CSUM_OK) << 29 |
		     (uint32_t)(l4 == EMU_CSUM_BAD) << 30;
	return v;
}

struct rx_meta {
	uint32_t hash, hashtype;
	bool vlan;
	uint16_t tci;
};

/* A good frame's completion: written in place unless RX coalescing is on. */
static void rx_complete_okay(struct emu_hwq *rq, const uint8_t *f, size_t len,
			     const struct emu_frame *fr,
			     const struct rx_meta *m, uint32_t wqe_off)
{
	uint32_t flags = (uint32_t)(m->tci & 0xFFF) | (uint32_t)m->vlan << 12 |
			 m->hashtype << 16 | rx_csum_flags(f, fr);
	struct mana_rx_comp_oob o;
	uint8_t cqe[GDMA_CQE_SIZE];

	if (!emu.opts.rx_coalesce) {
		/* as the OOB encoder: a hash type it cannot carry, no CQE */
		if (m->hashtype <= MANA_HASH_ALL &&
		    !mana_rx_comp_encode_one(cqe, flags, (uint16_t)len, m->hash,
					     wqe_off))
			cq_post(rq->cq, cqe, rq->id, false);
		return;
	}
	memset(&o, 0, sizeof(o));
	o.cqe_type = CQE_RX_OKAY;
	o.rx_wqe_offset = wqe_off;
	o.rx_vlantag_present = m->vlan;
	o.rx_vlan_id = m->tci & 0xFFF;
	o.rx_hashtype = (uint16_t)m->hashtype;
	o.ppi[0].pkt_len = (uint16_t)len;
	o.ppi[0].pkt_hash = m->hash;
	o.rx_iphdr_csum_succeed = !!(flags & 1U << 25);
	o.rx_iphdr_csum_fail = !!(flags & 1U << 26);
	o.rx_tcp_csum_succeed = !!(flags & 1U << 27);
	o.rx_tcp_csum_fail = !!(flags & 1U << 28);
	o.rx_udp_csum_succeed = !!(flags & 1U << 29);
	o.rx_udp_csum_fail = !!(flags & 1U << 30);
	rx_complete(rq, &o);
}

/* Consume the RQ's next WQE for one frame and write the completion. */
static void rx_consume(struct emu_hwq *rq, const uint8_t *f, size_t len,
		       const struct emu_frame *fr, const struct rx_meta *m)
{
	uint32_t size_bu, wqe_off;
	struct gdma_wqe w;
	uint8_t type;
	bool bad;

	if (rq->head == rq->tail) {
		rq->st.drops++;		/* no buffer posted */
		return;
	}
	wqe_off = rq->head & (rq->size - 1);
	if (wqe_fetch(rq, GDMA_RQ, &w, &size_bu) ||
	    size_bu * GDMA_WQE_BU_SIZE > rq->tail - rq->head) {
		rq->st.errors++;
		rq->st.drops++;
		rq->head = rq->tail;	/* no size to skip by */
		return;
	}
	rq->head += size_bu * GDMA_WQE_BU_SIZE;
	type = rx_scatter(rq, &w, f, len, &bad);
	if (type != CQE_RX_OKAY) {
		struct mana_rx_comp_oob o = { .cqe_type = type,
					      .rx_wqe_offset = wqe_off };

		rq->st.errors += bad;
		rq->st.drops++;
		rx_complete(rq, &o);
		return;
	}
	rq->st.frames++;
	rq->st.bytes += len;
	rx_complete_okay(rq, f, len, fr, m, wqe_off);
}

/*
 * A frame that finds no posted WQE waits in the RQ's share of the NIC's
 * receive buffer (--rx-hold frames, RX_HOLD_BYTES) for the next RQ
 * doorbell; when that is full it is dropped and counted.
 */
#define RX_HOLD_BYTES (16u << 20)

struct rx_hold {
	struct rx_hold *next;
	struct rx_meta m;
	size_t len;
	uint8_t data[];
};

static void rx_hold(struct emu_hwq *rq, const uint8_t *f, size_t len,
		    const struct rx_meta *m)
{
	struct rx_hold *h;

	if (rq->hold_frames >= emu.opts.rx_hold ||
	    rq->hold_bytes + len > RX_HOLD_BYTES) {
		rq->st.drops++;
		return;
	}
	h = malloc(sizeof(*h) + len);
	if (!h) {
		rq->st.drops++;
		return;
	}
	h->next = NULL;
	h->m = *m;
	h->len = len;
	memcpy(h->data, f, len);
	if (rq->hold_tail)
		rq->hold_tail->next = h;
	else
		rq->hold_head = h;
	rq->hold_tail = h;
	rq->hold_frames++;
	rq->hold_bytes += len;
}

static struct rx_hold *rx_hold_pop(struct emu_hwq *rq)
{
	struct rx_hold *h = rq->hold_head;

	rq->hold_head = h->next;
	if (!rq->hold_head)
		rq->hold_tail = NULL;
	rq->hold_frames--;
	rq->hold_bytes -= h->len;
	return h;
}

/* New WQEs: the frames that were waiting for them go first. */
static void rx_release_held(struct emu_hwq *rq)
{
	struct emu_frame fr;
	struct rx_hold *h;

	while (rq->hold_head && rq->head != rq->tail && !dev.fatal) {
		h = rx_hold_pop(rq);
		emu_frame_parse(h->data, h->len, &fr);
		rx_consume(rq, h->data, h->len, &fr, &h->m);
		free(h);
	}
}

static void rx_hold_flush(struct emu_hwq *rq)
{
	while (rq->hold_head) {
		rq->st.drops++;
		free(rx_hold_pop(rq));
	}
}

/* In order: behind waiting frames, or into the next WQE. */
static void rx_deliver(struct emu_hwq *rq, const uint8_t *f, size_t len,
		       const struct emu_frame *fr, const struct rx_meta *m)
{
	if (rq->hold_head || rq->head == rq->tail)
		rx_hold(rq, f, len, m);
	else
		rx_consume(rq, f, len, fr, m);
}

/*
 * What the device hashes.  mana_ib programs CONFIG_VPORT_RX with
 * rss_hash_types = 0 and never passes the QP's fields mask on, so the
 * device picks the tuple by frame type: TCP and UDP over IPv4/IPv6 their
 * 4-tuple, other IP its address pair (emulator/README.md gives the
 * evidence).  --rss-hash=mask follows the QP's mask instead.
 */
#define DEVICE_HASH_FIELDS (IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | \
			    IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6 | \
			    IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP | \
			    IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP)

static uint64_t rx_hash_fields(const struct emu_vport *v)
{
	if (emu.opts.rss_hash == MANA_EMU_RSS_HASH_MASK)
		return v->rss_qp->fields_mask;
	return DEVICE_HASH_FIELDS;
}

/*
 * The Toeplitz table of each port's RSS key (device thread, under
 * emu.lock), rebuilt when the key differs: QPs come and go, keys rarely.
 */
static struct mana_toeplitz_table rss_tables[MANA_EMU_MAX_PORTS];

static const struct mana_toeplitz_table *rss_table(unsigned int port,
						   const uint8_t *key)
{
	struct mana_toeplitz_table *tb = &rss_tables[port - 1];

	if (tb->key_len != MANA_RSS_KEY_LEN ||
	    memcmp(tb->key, key, MANA_RSS_KEY_LEN))
		mana_toeplitz_table_init(tb, key, MANA_RSS_KEY_LEN);
	return tb;
}

/* RX steering: Toeplitz over the chosen tuple, else the default RQ. */
static struct emu_hwq *rx_steer(unsigned int port, struct emu_vport *v,
				const struct emu_frame *fr, struct rx_meta *m)
{
	uint32_t hash, type;

	if (v->rss_enabled &&
	    !mana_rss_hash_table(rss_table(port, v->rss_qp->key),
				 rx_hash_fields(v), &fr->tuple, &hash, &type) &&
	    type) {
		m->hash = hash;
		m->hashtype = mana_rss_cqe_hashtype(type);
		return v->indir[hash % EMU_RSS_INDIR];
	}
	return v->default_rq;
}

static void rx_frame(unsigned int port, const uint8_t *in, size_t len)
{
	static uint8_t f[FRAME_MAX];
	struct emu_vport *v = &emu_dev.ports[port - 1].vport;
	struct rx_meta m = { 0 };
	struct emu_frame fr;
	struct emu_hwq *rq;

	if (emu_rc_nqps && !dev.fatal && emu_rc_rx(port, in, len))
		return;		/* RoCEv2: the RNIC's */
	if (dev.fatal || !v->rss_qp || len < ETH_MIN_LEN ||
	    len > BACKEND_MAX_FRAME) {
		dev.port_unsteered[port - 1]++;
		return;
	}
	/* parsed where it lies; copied only to strip a tag */
	emu_frame_parse(in, len, &fr);
	/* the tag is always stripped and reported (DPDK relies on it) */
	if (fr.vlan) {
		m.vlan = true;
		m.tci = fr.tci;
		memcpy(f, in, len);
		len = emu_frame_vlan_strip(f, len);
		emu_frame_parse(f, len, &fr);
		in = f;
	}
	rq = rx_steer(port, v, &fr, &m);
	if (rq)
		rx_deliver(rq, in, len, &fr, &m);
}

/* ---- doorbells ------------------------------------------------------------- */

static void bad_doorbell(const struct trap_event *ev, const char *why)
{
	dev.bad_doorbells++;
	if (emu_verbose() && !dev.bad_logged) {
		dev.bad_logged = true;
		emu_log("doorbell ignored (%s): offset 0x%x width %u value "
			"0x%llx (logged once)", why, ev->offset, ev->width,
			(unsigned long long)ev->value);
	}
}

static void foreign_doorbell(const struct trap_event *ev, uint32_t id)
{
	dev.foreign_doorbells++;
	if (emu_verbose() && !dev.foreign_logged) {
		dev.foreign_logged = true;
		emu_log("doorbell for queue %u ignored: no such queue in the "
			"context whose page was rung (offset 0x%x; logged once)",
			id, ev->offset);
	}
}

/*
 * SQ/RQ tail: accepted if it moves forward by at most the ring size and
 * leaves at most the ring size outstanding; the same tail again is a
 * harmless no-op (DPDK rings after an empty refill).
 */
static void wq_doorbell(struct emu_hwq *q, uint32_t tail)
{
	if (tail == q->tail)
		return;
	if (tail % GDMA_WQE_BU_SIZE || tail - q->tail > q->size ||
	    tail - q->head > q->size) {
		q->st.errors++;
		return;
	}
	q->tail = tail;
	if (q->type == EMU_HWQ_SQ)
		sq_schedule(q);
	else
		rx_release_held(q);
}

static enum emu_hwq_type db_queue_type(enum gdma_db_kind kind)
{
	switch (kind) {
	case GDMA_DB_SQ:
		return EMU_HWQ_SQ;
	case GDMA_DB_RQ:
		return EMU_HWQ_RQ;
	case GDMA_DB_CQ:
		return EMU_HWQ_CQ;
	default:
		return 0;
	}
}

static void long_doorbell(struct emu_hwq *q, const struct gdma_doorbell *db)
{
	if (q->type == EMU_HWQ_CQ)
		cq_doorbell(q, gdma_cq_db_unconsumed(q->prod, db->tail,
						     q->count), db->arm);
	else
		wq_doorbell(q, db->tail);
}

/* 32-bit form: increments since the last ring (bytes, or CQ entries). */
static void short_doorbell(struct emu_hwq *q,
			   const struct gdma_short_doorbell *db)
{
	if (q->type == EMU_HWQ_CQ)
		cq_doorbell(q, q->prod - (q->cons + db->incr), db->arm);
	else
		wq_doorbell(q, q->tail + db->incr);
}

static void handle_doorbell(const struct trap_event *ev)
{
	uintptr_t serial = (uintptr_t)ev->cookie;
	struct emu_ucontext *ctx = emu_ucontext_find(serial);
	struct gdma_short_doorbell sdb = { 0 };
	struct gdma_doorbell db = { 0 };
	enum gdma_db_kind kind;
	struct emu_hwq *q;
	bool is_short;
	uint32_t id;

	dev.doorbells++;
	if (gdma_doorbell_kind_at(ev->offset, &kind, &is_short) ||
	    ev->width != (is_short ? 4u : 8u))
		return bad_doorbell(ev, "no doorbell at this offset and width");
	if (emu_rc_nqps && !is_short && ctx && !dev.fatal &&
	    emu_rc_doorbell(ctx, kind, ev->value))
		return;		/* an RC QP's queue */
	if (!db_queue_type(kind))
		return bad_doorbell(ev, "RQ client, DIM and EQ doorbells are "
				    "not emulated");
	if (is_short ? gdma_short_doorbell_decode(kind, (uint32_t)ev->value,
						  &sdb) :
		       gdma_doorbell_decode(kind, ev->value, &db))
		return bad_doorbell(ev, "reserved bits or bad tail");
	id = is_short ? sdb.id : db.id;
	q = emu_hwq_find(db_queue_type(kind), id);
	if (!ctx || !q || q->ctx != ctx)
		return foreign_doorbell(ev, id);
	if (dev.fatal)
		return;
	if (is_short)
		short_doorbell(q, &sdb);
	else
		long_doorbell(q, &db);
}

/* ---- statistics and the test API ------------------------------------------- */

static const char *type_name(enum emu_hwq_type t)
{
	return t == EMU_HWQ_SQ ? "sq" : t == EMU_HWQ_RQ ? "rq" : "cq";
}

/*
 * The statistics file is written with plain write() through a small
 * buffer: the same code runs from a fatal signal's handler (stats_out is
 * async-signal-safe but for vsnprintf of integers and strings).
 */
struct stats_out {
	int fd;
	int err;		/* first -errno */
	size_t n;
	char buf[4096];
};

static void sout_flush(struct stats_out *o)
{
	size_t off = 0;
	ssize_t w;

	while (off < o->n && !o->err) {
		w = write(o->fd, o->buf + off, o->n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			o->err = w < 0 ? -errno : -EIO;
		else
			off += w;
	}
	o->n = 0;
}

static void __attribute__((format(printf, 2, 3)))
sout(struct stats_out *o, const char *fmt, ...)
{
	va_list ap;
	int len;

	if (o->n > sizeof(o->buf) - 256)
		sout_flush(o);
	va_start(ap, fmt);
	len = vsnprintf(o->buf + o->n, sizeof(o->buf) - o->n, fmt, ap);
	va_end(ap);
	if (len > 0)
		o->n += (size_t)len < sizeof(o->buf) - o->n ?
			(size_t)len : sizeof(o->buf) - o->n - 1;
}

static void dump_queue(struct stats_out *f, enum emu_hwq_type t, uint32_t id,
		       const struct emu_queue_stats *st)
{
	sout(f, "%s %u %llu %llu %llu %llu\n", type_name(t), id,
	     (unsigned long long)st->frames, (unsigned long long)st->bytes,
	     (unsigned long long)st->drops, (unsigned long long)st->errors);
}

static void dump_ports(struct stats_out *f)
{
	struct backend_stats bs;
	unsigned int p;

	sout(f, "# port N SPEC tx_frames tx_bytes tx_drops rx_frames "
	     "rx_bytes rx_drops unsteered\n");
	for (p = 1; p <= emu_dev.nports; p++) {
		struct backend *b = emu_dev.ports[p - 1].vport.backend;

		memset(&bs, 0, sizeof(bs));
		if (b)
			backend_stats(b, &bs);
		sout(f, "port %u %s %llu %llu %llu %llu %llu %llu %llu\n", p,
		     mana_emu_port_backend(&emu.opts, p),
		     (unsigned long long)bs.tx_frames,
		     (unsigned long long)bs.tx_bytes,
		     (unsigned long long)bs.tx_drops,
		     (unsigned long long)bs.rx_frames,
		     (unsigned long long)bs.rx_bytes,
		     (unsigned long long)(bs.rx_drops +
					  dev.port_rxq_drops[p - 1]),
		     (unsigned long long)dev.port_unsteered[p - 1]);
	}
}

static void stats_line(void *arg, const char *line)
{
	sout(arg, "%s\n", line);
}

/*
 * Destroyed queues first (in destruction order), then the live ones.
 * 0 or -errno, with the message on stderr.
 */
static int dump_stats(const char *path)
{
	static struct stats_out o;	/* not on a signal handler's stack */
	unsigned int t, b;
	struct emu_hwq *q;
	size_t i;

	o.n = 0;
	o.err = 0;
	o.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (o.fd < 0) {
		o.err = -errno;
		goto out;
	}
	sout(&o, "# type id frames bytes drops errors\n");
	for (i = 0; i < dev.nretired; i++)
		dump_queue(&o, dev.retired[i].type, dev.retired[i].id,
			   &dev.retired[i].st);
	for (t = EMU_HWQ_SQ; t <= EMU_HWQ_CQ; t++)
		for (b = 0; b < HWQ_HASH_SIZE; b++)
			for (q = dev.hash[t][b]; q; q = q->hash_next)
				dump_queue(&o, q->type, q->id, &q->st);
	dump_ports(&o);
	emu_rc_stats(stats_line, &o);
	sout(&o, "# device doorbells bad_doorbells foreign_doorbells "
	     "frames_sent fatals\n");
	sout(&o, "device %llu %llu %llu %llu %u\n",
	     (unsigned long long)dev.doorbells,
	     (unsigned long long)dev.bad_doorbells,
	     (unsigned long long)dev.foreign_doorbells,
	     (unsigned long long)dev.tx_total, dev.fatal_count);
	sout_flush(&o);
	if (close(o.fd) && !o.err && errno != EINTR)
		o.err = -errno;
out:
	if (o.err) {
		char msg[PATH_MAX + 96];
		int len = snprintf(msg, sizeof(msg), "mana-emu: stats %s: %s\n",
				   path, strerror(-o.err));

		if (len > 0 && write(STDERR_FILENO, msg, strnlen(msg, sizeof(msg))) < 0)
			len = 0;	/* nowhere left to say it */
		emu_report_failure('S');
	}
	return o.err;
}

/*
 * A fatal signal is about to end the process: write the statistics now,
 * as exit would.  Without the lock if another thread holds it (the
 * process is dying; a torn counter beats no file).
 */
void emu_device_dump_on_signal(void)
{
	const char *path = emu.opts.stats[0] ? emu.opts.stats :
					       getenv(MANA_EMU_ENV_STATS);
	bool locked = !pthread_mutex_trylock(&emu.lock);
	static atomic_bool done;

	if (path && *path && dev.used && !atomic_exchange(&done, true))
		dump_stats(path);
	if (locked)
		pthread_mutex_unlock(&emu.lock);
}

/* Wait (bounded) for the device thread to leave. */
static void device_stop(void)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	dev.shutdown = true;
	wake();
	while (dev.running &&
	       pthread_cond_timedwait(&dev.stopped, &emu.lock, &until) !=
		       ETIMEDOUT)
		;
}

void emu_device_shutdown(void)
{
	const char *path = emu.opts.stats[0] ? emu.opts.stats :
					       getenv(MANA_EMU_ENV_STATS);
	unsigned int p;

	pthread_mutex_lock(&emu.lock);
	device_stop();
	/* processes that never had a queue (helpers, children) keep quiet */
	if (path && *path && dev.used)
		dump_stats(path);
	pthread_mutex_unlock(&emu.lock);
	if (dev.running)
		return;		/* still inside the queues: leave it all */
	for (p = 1; p <= emu_dev.nports; p++) {
		backend_close(emu_dev.ports[p - 1].vport.backend);
		emu_dev.ports[p - 1].vport.backend = NULL;
	}
}

EMU_EXPORT uint64_t mana_emu_user_faults(void)
{
	uint64_t pvm, faults;

	emu_user_copy_counters(&pvm, &faults);
	return faults;
}

EMU_EXPORT uint64_t mana_emu_device_syscalls(void)
{
	uint64_t pvm, faults;

	emu_user_copy_counters(&pvm, &faults);
	return pvm + atomic_load(&dev.sleep_syscalls);
}

/*
 * Wait until the device has handled every doorbell rung and every frame
 * received before the call: one whole round that found no work, begun
 * after we took the lock.  Stores are queued before they return, so none
 * can be missed.
 */
EMU_EXPORT int mana_emu_quiesce(int timeout_ms)
{
	struct timespec until;
	uint64_t round;
	int ret = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&emu.lock);
	round = dev.idle_rounds;
	while (dev.running && dev.idle_rounds == round && !ret) {
		wake();
		ret = pthread_cond_timedwait(&dev.idle, &emu.lock, &until);
	}
	pthread_mutex_unlock(&emu.lock);
	return ret ? -ETIMEDOUT : 0;
}

EMU_EXPORT int mana_emu_queue_info(uint32_t type, uint32_t id,
				   struct mana_emu_queue_info *out)
{
	struct emu_hwq *q;
	int ret = -ENOENT;

	pthread_mutex_lock(&emu.lock);
	q = emu_hwq_find(type, id);
	if (q && out) {
		memset(out, 0, sizeof(*out));
		out->type = q->type;
		out->id = q->id;
		out->buf_addr = q->buf;
		out->buf_size = q->size;
		out->entries = q->type == EMU_HWQ_CQ ? q->count : 0;
		out->cq_id = q->cq ? q->cq->id : UINT32_MAX;
		out->port = q->port;
		out->tx_vp_offset = q->tx_vp_offset;
		out->db_page = (uintptr_t)q->ctx->db_page;
		out->frames = q->st.frames;
		out->bytes = q->st.bytes;
		out->drops = q->st.drops;
		out->errors = q->st.errors;
		ret = 0;
	}
	pthread_mutex_unlock(&emu.lock);
	return ret;
}

EMU_EXPORT int mana_emu_rss_info(uint32_t port, struct mana_emu_rss_info *out)
{
	struct emu_vport *v;
	int ret = -ENOENT;
	unsigned int k;

	pthread_mutex_lock(&emu.lock);
	if (emu_port_valid(port) && out) {
		v = &emu_dev.ports[port - 1].vport;
		if (v->rss_qp) {
			memset(out, 0, sizeof(*out));
			out->enabled = v->rss_enabled;
			out->num_entries = v->num_entries;
			out->default_rq = v->default_rq->id;
			for (k = 0; k < EMU_RSS_INDIR; k++)
				out->rq_ids[k] = v->indir[k]->id;
			memcpy(out->key, v->rss_qp->key, sizeof(out->key));
			out->fields_mask = v->rss_qp->fields_mask;
			ret = 0;
		}
	}
	pthread_mutex_unlock(&emu.lock);
	return ret;
}

/* ---- services for the RC engine (rc_dev.h) ---------------------------------- */

void emu_dev_cq_post(struct emu_hwq *cq, uint8_t *cqe, uint32_t wq_num,
		     bool is_sq)
{
	cq_post(cq, cqe, wq_num, is_sq);
}

enum emu_dev_mr_err emu_dev_mr_map(const struct emu_pd *pd, uint32_t key,
				   uint64_t addr, uint64_t len,
				   unsigned int access, uintptr_t *va)
{
	struct emu_mr *mr;
	uint64_t end = addr + len;

	*va = 0;
	if (!len)
		return EMU_MR_OK;
	mr = emu_mr_find(key);
	if (!mr || mr->obj.deps[0] != &pd->obj)
		return EMU_MR_BAD_KEY;
	if ((mr->access & access) != access)
		return EMU_MR_BAD_ACCESS;
	if (end < addr || addr < mr->iova || end > mr->iova + mr->length)
		return EMU_MR_BAD_RANGE;
	*va = (uintptr_t)(mr->start + (addr - mr->iova));
	return EMU_MR_OK;
}

void emu_dev_xmit(unsigned int port, const void *frame, size_t len)
{
	struct backend *b = emu_dev.ports[port - 1].vport.backend;

	if (b)
		backend_xmit(b, frame, len);
}

void emu_dev_port_mac(unsigned int port, uint8_t mac[6])
{
	memcpy(mac, emu_dev.ports[port - 1].mac, 6);
}

void emu_dev_kick(void)
{
	wake();
}
