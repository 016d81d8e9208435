// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The GDMA device model (see device.h): the hardware queue table, the
 * device thread and its rounds, the ports' wires, doorbells and device
 * fatals.  The datapath is in tx.c (SQs), rx.c (RX steering and RQs),
 * cq.c (CQEs, CQ doorbells), umem.c (WQE caches, MRs); statistics and the
 * test API in stats.c; the shared state in device_int.h.
 *
 * Application memory (rings, CQEs, frame buffers) is only touched through
 * the fault-safe copy (device_int.h), so a bad address costs an error CQE
 * or a counter, never a crash of the device thread.
 *
 * Doorbells only latch new tails; the queues then run side by side like
 * the hardware's engines (dev_run_sqs): a receive queue refilled behind a
 * long run of send doorbells gets its buffers at once, not after all the
 * sends.  Frames that find no receive WQE wait in the RQ's receive buffer
 * (--rx-hold) for the next RQ doorbell, and are dropped when it is full.
 */
#include "device.h"
#include "device_int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "emulator/core/vm.h"
#include "emulator/lib/libc.h"
#include "emulator/lib/quiet_thread.h"
#include "rc_dev.h"
#include "emulator/core/gid.h"
#include "gsi.h"

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

struct device_state devst = {
	.stopped = PTHREAD_COND_INITIALIZER,
	.idle = PTHREAD_COND_INITIALIZER,
	.rxq_lock = PTHREAD_MUTEX_INITIALIZER,
};

static void device_start(void);

struct emu_dev_port emu_ports[MANA_EMU_MAX_PORTS];

void emu_device_set_ops(const struct emu_device_ops *ops)
{
	devst.ops = ops;
}

/* ---- hardware queues ------------------------------------------------------ */

static struct emu_hwq **hwq_bucket(enum emu_hwq_type type, uint32_t id)
{
	return &devst.hash[type][id % HWQ_HASH_SIZE];
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

/* An MR goes: no SQ or RQ may keep it as the last MR its SGEs named. */
void dev_mr_forget(const struct emu_dev_mr *mr)
{
	unsigned int t, b;
	struct emu_hwq *q;

	for (t = EMU_HWQ_SQ; t <= EMU_HWQ_RQ; t++)
		for (b = 0; b < HWQ_HASH_SIZE; b++)
			for (q = devst.hash[t][b]; q; q = q->hash_next)
				if (q->mr_last == mr)
					q->mr_last = NULL;
}

/* Next free id of @type in the 24-bit space, ids of live queues skipped. */
static int hwq_id_alloc(enum emu_hwq_type type, uint32_t *id)
{
	uint32_t tries;

	/* --vm: ids unique in the VM, as the device's are */
	if (emu_vm_active())
		return emu_vm_qid_alloc(type, id_base[type], GDMA_QUEUE_ID_MAX,
					id);
	if (!devst.next_id[type])
		devst.next_id[type] = id_base[type];
	for (tries = 0; tries < GDMA_QUEUE_ID_MAX; tries++) {
		uint32_t cand = devst.next_id[type]++;

		if (devst.next_id[type] > GDMA_QUEUE_ID_MAX)
			devst.next_id[type] = id_base[type];
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
	devst.used = true;
	device_start();
	return q;
}

static void hwq_retire(const struct emu_hwq *q)
{
	struct retired *r;

	if (devst.nretired == devst.retired_cap) {
		size_t cap = devst.retired_cap ? devst.retired_cap * 2 : 64;

		if (cap > RETIRED_MAX)
			return;
		r = realloc(devst.retired, cap * sizeof(*r));
		if (!r)
			return;
		devst.retired = r;
		devst.retired_cap = cap;
	}
	r = &devst.retired[devst.nretired++];
	r->type = q->type;
	r->id = q->id;
	r->st = q->st;
}

static unsigned int pop_doorbells(void);

void emu_hwq_destroy(struct emu_hwq *q)
{
	struct emu_hwq **pp;
	unsigned int i;

	/*
	 * Doorbells rung before the destroy reached the hardware before its
	 * command did: serve them now (emu.lock held: we are the ring's one
	 * consumer meanwhile), never later as rings for a queue gone.
	 */
	while (pop_doorbells() == EVENT_BATCH)
		;
	for (i = 0; i < devst.ncoal; i++) {
		if (devst.coal[i].rq == q || devst.coal[i].rq->cq == q) {
			/* its CQ goes with it: nobody could read the CQE */
			devst.coal[i] = devst.coal[--devst.ncoal];
			i--;
		}
	}
	for (pp = hwq_bucket(q->type, q->id); *pp; pp = &(*pp)->hash_next) {
		if (*pp == q) {
			*pp = q->hash_next;
			break;
		}
	}
	dev_rx_hold_flush(q);
	dev_sq_unschedule(q);
	emu_vm_qid_free(q->type, q->id);
	hwq_retire(q);
	free(q->cache);
	free(q);
}

/* ---- the device thread ---------------------------------------------------- */

/*
 * The device thread sleeps on the doorbell queue's futex, which also
 * takes these kicks (frames queued, requests): a system call only when it
 * sleeps.  Async-signal-safe: also called from the SIGUSR2 handler.
 */
void dev_wake(void)
{
	trap_event_kick();
}

/*
 * The trap's quiet hook (signal context): doorbells that need not wake
 * the device.  An RQ's only hands it buffers, which it needs when a frame
 * comes -- a frame wakes it, and it takes doorbells first -- unless an RQ
 * holds frames waiting for buffers: then every RQ doorbell wakes it.  A
 * receiver reposting each buffer (ib_send_bw's server) woke it once a
 * message for nothing.  An RC SQ's, while its requester waits for an ACK
 * (rc_engine.c).
 */
static bool doorbell_quiet(uint32_t offset, uint64_t value)
{
	switch (offset) {
	case GDMA_DB_OFF_RQ:
	case GDMA_DB_OFF_RQ_SHORT:
		return !atomic_load_explicit(&devst.rqs_holding,
					     memory_order_relaxed);
	case GDMA_DB_OFF_SQ:
		return emu_rc_sq_quiet((uint32_t)value & 0xffffff);
	default:
		return false;
	}
}

static void sigusr2_handler(int sig)
{
	int saved = errno;

	atomic_store(&devst.fatal_req, 1);
	dev_wake();
	errno = saved;
}

/* SIGUSR2 raises a device fatal, unless the application wants it. */
static void install_sigusr2(void)
{
	struct sigaction sa = { .sa_handler = sigusr2_handler,
				.sa_flags = SA_RESTART };
	struct sigaction old;

	if (emu_libc_sigaction(SIGUSR2, NULL, &old) || old.sa_handler != SIG_DFL ||
	    (old.sa_flags & SA_SIGINFO))
		return;
	sigemptyset(&sa.sa_mask);
	emu_libc_sigaction(SIGUSR2, &sa, NULL);
}

void emu_device_trap_ready(void)
{
	dev_wake();
}

void emu_device_idle(void)
{
	devst.stop_req = true;
	/* a device fatal lasts until every user is gone (a reset) */
	devst.fatal = false;
	dev_wake();
}

/* Raise IB_EVENT_DEVICE_FATAL; the device stops processing queues. */
void dev_fatal(const char *why)
{
	if (devst.fatal)
		return;
	devst.fatal = true;
	devst.fatal_count++;
	if (emu_verbose())
		emu_log("device fatal (%s): async event to every context", why);
	if (devst.ops && devst.ops->device_fatal)
		devst.ops->device_fatal();
}

static void dev_doorbell(const struct trap_event *ev);

/*
 * Stores trapped in this process, then (--vm) those other processes of
 * the VM rang on pages mapped through this process's uverbs files.
 */
static unsigned int pop_doorbells(void)
{
	struct trap_event ev = { 0 };
	unsigned int n = 0;
	uint64_t serial;

	while (n < EVENT_BATCH && !trap_event_pop(&ev)) {
		dev_doorbell(&ev);
		n++;
	}
	while (n < EVENT_BATCH &&
	       !emu_vm_mbox_pop(&serial, &ev.offset, &ev.width, &ev.value)) {
		ev.cookie = (void *)(uintptr_t)serial;
		dev_doorbell(&ev);
		n++;
	}
	return n;
}

static void rx_cb(void *rx_ctx, unsigned int port, const void *frame,
		  size_t len);

#define RX_BURST 32

/*
 * Loopback frames are delivered here, in the device thread, straight from
 * the backend's ring (no copy, no callback); those that cut through it
 * (tx.c) are only counted.
 */
unsigned int dev_poll_backend(unsigned int port)
{
	struct emu_dev_port *dp = &emu_ports[port - 1];
	struct backend_lb *lb = dp->lb;
	struct backend_rx fr[RX_BURST];
	unsigned int i, n, total = 0;
	uint64_t bytes = 0;

	if (lb) {
		/* only what is queued now */
		n = backend_lb_queued(lb);
		for (i = 0; i < n; i++) {
			const struct backend_lb_slot *s = backend_lb_at(lb, i);

			bytes += s->len;
			dev_rx_frame(port, s->data, s->len);
		}
		backend_lb_pop(lb, n);
		backend_lb_account(dp->backend,
				   dp->lb_tx_frames + dp->lb_cut_frames,
				   dp->lb_tx_bytes + dp->lb_cut_bytes,
				   n + dp->lb_cut_frames,
				   bytes + dp->lb_cut_bytes);
		dp->lb_tx_frames = dp->lb_tx_bytes = 0;
		dp->lb_cut_frames = dp->lb_cut_bytes = 0;
		return n;
	}
	if (!dp->backend)
		return 0;
	do {
		n = backend_rx_burst(dp->backend, fr, RX_BURST);
		for (i = 0; i < n; i++)
			dev_rx_frame(port, fr[i].data, fr[i].len);
		backend_rx_release(dp->backend, n);
		total += n;
	} while (n == RX_BURST);
	return total;
}

static unsigned int poll_backends(void)
{
	unsigned int port, n = 0;

	for (port = 1; port <= emu.opts.ports; port++)
		n += dev_poll_backend(port);
	return n;
}

/*
 * A port whose RQ has a full receive buffer takes no more frames: they
 * wait in its queue, which stops its backend reading, which stops the
 * senders (socket:).  A NIC's full buffer pauses the link the same way
 * rather than drop what a slow application will still take.  --rx-hold=0
 * asks for drops instead.
 */
static bool port_rx_stalled(unsigned int port)
{
	return devst.port_holds_full[port - 1] && emu.opts.rx_hold;
}

/* Frames queued by socket/tap backend threads, in order per port. */
static unsigned int drain_rxq(void)
{
	struct rx_frame *f, *next;
	unsigned int port, n = 0, took;

	for (port = 1; port <= emu.opts.ports; port++) {
		if (!atomic_load_explicit(&devst.rxq_len[port - 1],
					  memory_order_acquire) ||
		    port_rx_stalled(port))
			continue;
		pthread_mutex_lock(&devst.rxq_lock);
		f = devst.rxq_head[port - 1];
		devst.rxq_head[port - 1] = devst.rxq_tail[port - 1] = NULL;
		pthread_mutex_unlock(&devst.rxq_lock);
		for (took = 0; f && !port_rx_stalled(port); f = next, took++) {
			next = f->next;
			dev_rx_frame(f->port, f->data, f->len);
			free(f);
		}
		pthread_mutex_lock(&devst.rxq_lock);
		if (f) {	/* stalled: the rest goes back in front */
			struct rx_frame *last = f;

			while (last->next)
				last = last->next;
			last->next = devst.rxq_head[port - 1];
			if (!devst.rxq_head[port - 1])
				devst.rxq_tail[port - 1] = last;
			devst.rxq_head[port - 1] = f;
		}
		atomic_fetch_sub(&devst.rxq_len[port - 1], took);
		pthread_mutex_unlock(&devst.rxq_lock);
		if (took && emu_ports[port - 1].backend)
			backend_rx_resume(emu_ports[port - 1].backend);
		if (took && emu_ports[port - 1].vm_wire)
			backend_rx_resume(emu_ports[port - 1].vm_wire);
		n += took;
	}
	return n;
}

static void dev_coalesce_flush_all(void)
{
	while (devst.ncoal)
		dev_coalesce_flush(&devst.coal[devst.ncoal - 1]);
}

static bool device_work(void)
{
	unsigned int n = 0;

	/* first: doorbells rung after the signal must not be served */
	if (atomic_exchange(&devst.fatal_req, 0)) {
		dev_fatal("SIGUSR2");
		n++;
	}
	n += pop_doorbells();
	n += dev_run_sqs();
	n += poll_backends();
	n += drain_rxq();
	if (emu_rc_nqps)
		n += emu_rc_work();
	if (emu_gsi_active)
		devst.gsi_sleep_ms = gsi_work(SLEEP_MS);
	dev_coalesce_flush_all();
	/*
	 * SQs with work left mean another round at once, unless fatal or
	 * waiting for their wire (its backend wakes us when it has room)
	 */
	return n > 0 || (devst.sq_head && !devst.fatal && !devst.sq_blocked);
}

/* Sleep until a doorbell, a frame, a signal or a stop request. */
static void device_sleep(int timeout_ms)
{
	trap_event_wait(timeout_ms);
	if (timeout_ms)
		atomic_fetch_add_explicit(&devst.sleep_syscalls, 1,
					  memory_order_relaxed);
}

static bool device_should_exit(void)
{
	return devst.shutdown ||
	       (devst.stop_req && !emu_gsi_active && !(devst.ops && devst.ops->ucontext_count &&
				  devst.ops->ucontext_count()));
}

static void *device_main(void *arg)
{
	int sleep_ms = SLEEP_MS;
	bool busy;

	emu_thread_short_slice();
	/* top -H, ps -L and tests tell it from the application's threads */
	pthread_setname_np(pthread_self(), "mana-emu-dev");
	pthread_mutex_lock(&emu.lock);
	for (;;) {
		busy = device_work();
		if (!busy) {
			devst.idle_rounds++;
			pthread_cond_broadcast(&devst.idle);
		}
		if (device_should_exit())
			break;
		sleep_ms = emu_rc_nqps ? emu_rc_sleep_ms(SLEEP_MS) : SLEEP_MS;
		if (emu_gsi_active && devst.gsi_sleep_ms < sleep_ms)
			sleep_ms = devst.gsi_sleep_ms;
		pthread_mutex_unlock(&emu.lock);
		if (!busy)
			device_sleep(sleep_ms);
		pthread_mutex_lock(&emu.lock);
	}
	devst.running = false;
	pthread_cond_broadcast(&devst.stopped);
	pthread_mutex_unlock(&emu.lock);
	return NULL;
}

static void vm_wire_reopen(void);
static int port_open(unsigned int port, const char *pcap);

/*
 * --vm: the device thread sleeps on this process's wake word in the VM's
 * segment, which the other processes' doorbells (the mailbox) wake as
 * well as our own stores and kicks do.
 */
static void share_wake_word(void)
{
	_Atomic uint32_t *word;
	_Atomic int *sleeping;

	if (emu_vm_wake_word(&word, &sleeping))
		trap_event_share(NULL, NULL, NULL);
	else
		trap_event_share(word, sleeping, emu_vm_mbox_ready);
}

/*
 * Started with the first hardware queue; a stop request is cancelled.  The
 * application's asynchronous signals are not ours to take, and its thread
 * that creates the queue may be pinned to one core (DPDK's main lcore):
 * the device runs on the process's start-up CPUs (quiet_thread.h).
 */
static void device_start(void)
{
	pthread_t t;

	devst.stop_req = false;
	if (devst.running || devst.shutdown)
		return;
	if (!devst.sigusr2_done) {
		devst.sigusr2_done = true;
		install_sigusr2();
	}
	share_wake_word();
	vm_wire_reopen();
	trap_set_quiet_hook(doorbell_quiet);
	if (!emu_thread_create(&t, device_main, NULL, true))
		devst.running = true;
	else
		fprintf(stderr, "mana-emu: cannot start the device thread\n");
}

/* The kernel CM needs the device thread (QP1, its timers) with no queue. */
int dev_gsi_start(unsigned int port)
{
	int ret = emu_port_attach(port);

	if (!ret)
		device_start();
	return ret;
}

/*
 * The child of a VM's process is a process of the VM (core/vm.c): its
 * device sleeps on its own slot's word, and the switch sockets it
 * inherited are the parent's ports, read by the parent's threads, so it
 * closes its copies and joins the VM's switch as a port of its own when
 * its device starts, or earlier through emu_port_join().
 */
void emu_device_fork_child(void)
{
	unsigned int p;

	devst.running = false;
	share_wake_word();
	for (p = 0; p < MANA_EMU_MAX_PORTS; p++) {
		struct emu_dev_port *v = &emu_ports[p];

		if (v->vm_wire) {
			backend_close(v->vm_wire);
			v->vm_wire = NULL;
			devst.vm_wire_reopen |= 1u << p;
		}
		/*
		 * A switch (socket:, tap:) port likewise: the child takes
		 * one of its own, with the VM's identity, when its device
		 * starts (a VM's child only; and uncaptured, the capture
		 * file being the parent's).  The loopback ring is memory:
		 * the child's copy is its own.
		 */
		if (v->backend && !v->lb && emu_vm_active()) {
			backend_close(v->backend);
			v->backend = NULL;
			devst.vm_wire_reopen |= 1u << p;
		}
	}
}

/* ---- ports ----------------------------------------------------------------- */

static void rx_cb(void *rx_ctx, unsigned int port, const void *frame,
		  size_t len)
{
	struct rx_frame *f;

	/* socket and tap: a backend thread (loopback is polled) */
	f = malloc(sizeof(*f) + len);
	if (!f)
		return;
	f->next = NULL;
	f->port = port;
	f->len = len;
	memcpy(f->data, frame, len);
	pthread_mutex_lock(&devst.rxq_lock);
	/* tap does not ask rx_room() first: its frames beyond are dropped */
	if (devst.rxq_len[port - 1] >= RXQ_MAX) {
		devst.port_rxq_drops[port - 1]++;
		pthread_mutex_unlock(&devst.rxq_lock);
		free(f);
		return;
	}
	if (devst.rxq_tail[port - 1])
		devst.rxq_tail[port - 1]->next = f;
	else
		devst.rxq_head[port - 1] = f;
	devst.rxq_tail[port - 1] = f;
	atomic_fetch_add(&devst.rxq_len[port - 1], 1);
	pthread_mutex_unlock(&devst.rxq_lock);
	dev_wake();
}

/* socket: the backend reads a frame only while its port's queue has room. */
static bool rx_room(void *ctx, unsigned int port)
{
	(void)ctx;
	return atomic_load_explicit(&devst.rxq_len[port - 1],
				    memory_order_acquire) < RXQ_MAX;
}

/* socket: the frames it held back have left; the port's SQs go on. */
static void tx_ready(void *ctx, unsigned int port)
{
	(void)ctx;
	(void)port;
	dev_wake();
}

/* What the port announces on a socket: wire: its MAC and GIDs. */
static void port_identity(unsigned int port, struct vsw_id *id)
{
	unsigned int i, n = emu_gid_count(&emu.opts, port);

	memset(id, 0, sizeof(*id));
	mana_emu_port_mac(&emu.opts, port, id->mac);
	for (i = 0; i < n && id->ngid < VSW_MAX_GIDS; i++)
		if (!emu_gid_get(&emu.opts, port, i, id->gid[id->ngid]))
			id->ngid++;
}

/*
 * --vm on the loopback wire: the RNIC's packets (emu_dev_xmit()) also go
 * to the VM's other processes, whose ports join the VM's own virtual
 * switch with the same identity, so RC QPs of two processes of one VM
 * reach each other as on the VM's one RNIC.  Each device drops what it
 * does not own (a QPN another process made: the VM numbers QPNs).  Raw
 * frames stay on the loopback ring, as without --vm.
 */
static void vm_wire_open(unsigned int port, const char *spec,
			 const struct vsw_id *id)
{
	struct emu_dev_port *v = &emu_ports[port - 1];
	char dir[256], wire[sizeof(dir) + 8];

	if (strcmp(spec, "loopback") || emu_vm_wire_dir(port, dir, sizeof(dir)))
		return;
	snprintf(wire, sizeof(wire), "socket:%s", dir);
	v->vm_wire = backend_open_id(wire, NULL, port, rx_cb, NULL, id);
	if (!v->vm_wire) {
		emu_log("port %u: %s: %s; RC QPs of the VM's other processes "
			"do not reach this one", port, wire, strerror(errno));
		return;
	}
	backend_set_flow(v->vm_wire, rx_room, tx_ready, NULL);
	if (emu_verbose())
		emu_log("port %u: the VM's processes on %s", port, wire);
}

static void vm_wire_reopen(void)
{
	struct vsw_id id;
	unsigned int p;

	for (p = 1; devst.vm_wire_reopen && p <= MANA_EMU_MAX_PORTS; p++) {
		if (!(devst.vm_wire_reopen & 1u << (p - 1)))
			continue;
		devst.vm_wire_reopen &= ~(1u << (p - 1));
		if (!emu_ports[p - 1].backend) {
			port_open(p, NULL);
			continue;
		}
		port_identity(p, &id);
		vm_wire_open(p, mana_emu_port_backend(&emu.opts, p), &id);
	}
}

static int port_open(unsigned int port, const char *pcap)
{
	struct emu_dev_port *v = &emu_ports[port - 1];
	const char *spec = mana_emu_port_backend(&emu.opts, port);
	struct vsw_id id;

	port_identity(port, &id);
	v->backend = backend_open_id(spec, pcap, port, rx_cb, NULL, &id);
	if (!v->backend)
		return errno ? -errno : -EIO;
	backend_set_flow(v->backend, rx_room, tx_ready, NULL);
	v->lb = backend_lb(v->backend);
	vm_wire_open(port, spec, &id);
	if (emu_verbose())
		emu_log("port %u: backend %s%s%s", port, spec,
			pcap ? ", capture " : "", pcap ? pcap : "");
	return 0;
}

int emu_port_attach(unsigned int port)
{
	if (emu_ports[port - 1].backend)
		return 0;
	/* a VM's forked child reopens its switch port as its device starts */
	if (devst.vm_wire_reopen & 1u << (port - 1))
		return 0;
	return port_open(port, emu.opts.pcap[0] ? emu.opts.pcap : NULL);
}

int emu_port_join(unsigned int port)
{
	int ret = emu_port_attach(port);

	if (!ret && devst.vm_wire_reopen & 1u << (port - 1))
		vm_wire_reopen();
	return ret;
}

/* ---- doorbells ------------------------------------------------------------- */

static void bad_doorbell(const struct trap_event *ev, const char *why)
{
	devst.bad_doorbells++;
	if (emu_verbose() && !devst.bad_logged) {
		devst.bad_logged = true;
		emu_log("doorbell ignored (%s): offset 0x%x width %u value "
			"0x%llx (logged once)", why, ev->offset, ev->width,
			(unsigned long long)ev->value);
	}
}

static void foreign_doorbell(const struct trap_event *ev, uint32_t id)
{
	devst.foreign_doorbells++;
	if (emu_verbose() && !devst.foreign_logged) {
		devst.foreign_logged = true;
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
void emu_wq_doorbell(struct emu_hwq *q, uint32_t tail)
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
		dev_sq_schedule(q);
	else
		dev_rx_release_held(q);
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
		emu_cq_doorbell(q, gdma_cq_db_unconsumed(q->prod, db->tail,
						     q->count), db->arm);
	else
		emu_wq_doorbell(q, db->tail);
}

/* 32-bit form: increments since the last ring (bytes, or CQ entries). */
static void short_doorbell(struct emu_hwq *q,
			   const struct gdma_short_doorbell *db)
{
	if (q->type == EMU_HWQ_CQ)
		emu_cq_doorbell(q, q->prod - (q->cons + db->incr), db->arm);
	else
		emu_wq_doorbell(q, q->tail + db->incr);
}

static void dev_doorbell(const struct trap_event *ev)
{
	uintptr_t serial = (uintptr_t)ev->cookie;
	struct emu_ucontext *ctx = devst.ops && devst.ops->ucontext_find ?
				   devst.ops->ucontext_find(serial) : NULL;
	struct gdma_short_doorbell sdb = { 0 };
	struct gdma_doorbell db = { 0 };
	enum gdma_db_kind kind;
	struct emu_hwq *q;
	bool is_short;
	uint32_t id;

	devst.doorbells++;
	if (gdma_doorbell_kind_at(ev->offset, &kind, &is_short) ||
	    ev->width != (is_short ? 4u : 8u))
		return bad_doorbell(ev, "no doorbell at this offset and width");
	if (emu_rc_nqps && !is_short && ctx && !devst.fatal &&
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
	if (devst.fatal)
		return;
	if (is_short)
		short_doorbell(q, &sdb);
	else
		long_doorbell(q, &db);
}

/* ---- services for the RC engine (rc_dev.h) ---------------------------------- */

void emu_dev_cq_post(struct emu_hwq *cq, uint8_t *cqe, uint32_t wq_num,
		     bool is_sq)
{
	emu_cq_post(cq, cqe, wq_num, is_sq);
}

void emu_dev_cq_wake(struct emu_hwq *cq)
{
	if (!cq)
		return;
	if (cq->armed) {
		cq->armed = false;
		dev_cq_notify(cq);
	}
	/*
	 * The provider flushes the QP's WRs on poll, once it has seen the
	 * QP enter ERR (after this command returns): the arm that follows
	 * fires at once, so the consumer wakes when the flushes are due.
	 */
	cq->flush_wake = true;
}

enum emu_dev_mr_err emu_dev_mr_map(const struct emu_pd *pd, uint32_t key,
				   uint64_t addr, uint64_t len,
				   unsigned int access, uintptr_t *va)
{
	const struct emu_dev_mr *mr = dev_mr_find(key);
	uint64_t end = addr + len;

	*va = 0;
	if (!len)
		return EMU_MR_OK;
	if (!mr || mr->pd != pd)
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
	struct emu_dev_port *dp = &emu_ports[port - 1];
	uint8_t mac[6];

	/* the VM's other processes share the MAC: they get it in any case */
	if (dp->vm_wire)
		backend_xmit(dp->vm_wire, frame, len);
	/*
	 * RoCE to the port's own MAC (a QP connected to a GID of its own
	 * port) turns around inside the adapter, as an RNIC loops it back:
	 * the loopback wire brings every frame back anyway, but a switch
	 * (socket:, tap:) never returns a frame to its sender.  Such frames
	 * are not captured (--pcap) or counted by the backend.
	 */
	if (!dp->lb && len >= sizeof(mac)) {
		mana_emu_port_mac(&emu.opts, port, mac);
		if (!memcmp(frame, mac, sizeof(mac))) {
			rx_cb(NULL, port, frame, len);
			return;
		}
	}
	if (dp->backend)
		backend_xmit(dp->backend, frame, len);
}

void emu_dev_port_mac(unsigned int port, uint8_t mac[6])
{
	mana_emu_port_mac(&emu.opts, port, mac);
}

void emu_dev_kick(void)
{
	dev_wake();
}
