// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Doorbell trap: the queue from the SIGSEGV handler (trap.c) to the
 * device thread, or the synchronous callback that replaces it.
 *
 * A bounded MPSC ring of sequence-numbered cells (Vyukov): producers, in
 * signal context on any thread, take tickets with one fetch-add, which is
 * also the global order of the stores.  The consumer sleeps on an
 * eventfd that is written only when it armed it, to keep stores cheap.
 * Lock-free and raw system calls only: the emulator interposes
 * write/read/poll/close and the handler must not re-enter it.
 */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "trap.h"

#define RING_MASK	((uint64_t)TRAP_RING_SIZE - 1)

struct trap_cell {
	_Atomic uint64_t seq;		/* == ticket: free; ticket + 1: full */
	void *cookie;
	uint32_t offset;
	uint32_t width;
	uint64_t value;
};

typedef void (*trap_sync_fn)(const struct trap_event *ev);

static struct trap_cell *ring;
static _Atomic uint64_t ring_tail;	/* next ticket */
static uint64_t ring_head;		/* consumer only */
static _Atomic int consumer_sleeping;
static int event_fd = -1;

static _Atomic(trap_sync_fn) sync_fn;
static _Atomic(trap_route_fn) route_fn;
static _Atomic uint64_t sync_seq;

static long sys_write(int fd, const void *buf, size_t len)
{
	return syscall(SYS_write, fd, buf, len);
}

static void wake_consumer(void)
{
	static const uint64_t one = 1;

	if (atomic_exchange(&consumer_sleeping, 0))
		sys_write(event_fd, &one, sizeof(one));
}

static void ring_push(const struct trap_event *ev)
{
	uint64_t pos = atomic_fetch_add_explicit(&ring_tail, 1,
						 memory_order_relaxed);
	struct trap_cell *c = &ring[pos & RING_MASK];

	/* full: the cell still holds the event of the previous lap */
	while (atomic_load_explicit(&c->seq, memory_order_acquire) != pos) {
		wake_consumer();
		syscall(SYS_sched_yield);
	}
	c->cookie = ev->cookie;
	c->offset = ev->offset;
	c->width = ev->width;
	c->value = ev->value;
	atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
	/* pairs with the fence in trap_event_arm(): one of us sees the other */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&consumer_sleeping, memory_order_relaxed))
		wake_consumer();
}

static bool ring_ready(void)
{
	struct trap_cell *c = &ring[ring_head & RING_MASK];

	return atomic_load_explicit(&c->seq, memory_order_acquire) ==
	       ring_head + 1;
}

int trap_event_pop(struct trap_event *ev)
{
	struct trap_cell *c;

	if (!ring || !ring_ready())
		return -EAGAIN;
	c = &ring[ring_head & RING_MASK];
	ev->cookie = c->cookie;
	ev->offset = c->offset;
	ev->width = c->width;
	ev->value = c->value;
	ev->seq = ring_head;
	atomic_store_explicit(&c->seq, ring_head + TRAP_RING_SIZE,
			      memory_order_release);
	ring_head++;
	return 0;
}

int trap_event_fd(void)
{
	return event_fd;
}

int trap_event_arm(void)
{
	if (!ring)
		return -EAGAIN;
	atomic_store(&consumer_sleeping, 1);
	atomic_thread_fence(memory_order_seq_cst);
	if (ring_ready()) {
		atomic_store(&consumer_sleeping, 0);
		return -EAGAIN;
	}
	return 0;
}

void trap_event_disarm(void)
{
	uint64_t count;

	atomic_store(&consumer_sleeping, 0);
	syscall(SYS_read, event_fd, &count, sizeof(count));
}

int trap_event_wait(int timeout_ms)
{
	struct pollfd pfd = { .fd = event_fd, .events = POLLIN };
	struct timespec ts, *tsp = NULL;
	long ret;
	int err;

	if (trap_event_arm())
		return 0;
	if (timeout_ms >= 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000;
		tsp = &ts;
	}
	ret = syscall(SYS_ppoll, &pfd, 1, tsp, NULL, 0);
	err = errno;
	trap_event_disarm();
	if (ret < 0)
		return -err;
	if (ret == 0 && !ring_ready())
		return -ETIMEDOUT;
	return 0;
}

void trap_set_sync_handler(void (*fn)(const struct trap_event *ev))
{
	atomic_store(&sync_fn, fn);
}

void trap_set_route_hook(trap_route_fn fn)
{
	atomic_store(&route_fn, fn);
}

void trap_queue_deliver(struct trap_event *ev)
{
	trap_sync_fn fn = atomic_load_explicit(&sync_fn, memory_order_acquire);
	trap_route_fn route = atomic_load_explicit(&route_fn,
						   memory_order_relaxed);

	if (route && route(ev->cookie, ev->offset, ev->width, ev->value))
		return;

	if (fn) {
		ev->seq = atomic_fetch_add(&sync_seq, 1);
		fn(ev);
		return;
	}
	ring_push(ev);
}

/* ---- setup ----------------------------------------------------------------- */

static int ring_create(void)
{
	size_t len = TRAP_RING_SIZE * sizeof(struct trap_cell);
	uint64_t i;

	ring = (void *)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ring == MAP_FAILED) {
		ring = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < TRAP_RING_SIZE; i++)
		atomic_init(&ring[i].seq, i);
	atomic_store(&ring_tail, 0);
	ring_head = 0;
	return 0;
}

static void ring_destroy(void)
{
	syscall(SYS_munmap, ring, TRAP_RING_SIZE * sizeof(struct trap_cell));
	ring = NULL;
}

int trap_queue_create(void)
{
	int ret;

	ret = ring_create();
	if (ret)
		return ret;
	event_fd = syscall(SYS_eventfd2, 0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (event_fd < 0) {
		ret = -errno;
		ring_destroy();
		return ret;
	}
	return 0;
}

void trap_queue_destroy(void)
{
	syscall(SYS_close, event_fd);
	event_fd = -1;
	ring_destroy();
	atomic_store(&sync_fn, NULL);
}
