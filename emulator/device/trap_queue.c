// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Doorbell trap: the queue from the SIGSEGV handler (trap.c) to the
 * device thread, or the synchronous callback that replaces it.
 *
 * A bounded MPSC ring of sequence-numbered cells (Vyukov): producers, in
 * signal context on any thread, take tickets with one fetch-add, which is
 * also the global order of the stores.  The consumer sleeps on a futex
 * word that producers (and trap_event_kick) touch with a system call only
 * when it announced that it sleeps: a doorbell rung while the device
 * thread is awake costs no system call, and a wake-up costs one on each
 * side (an eventfd cost a write, a poll and two reads).
 * Lock-free and raw system calls only: the emulator interposes
 * write/read/poll/close and the handler must not re-enter it.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
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
/*
 * Sleeping: the consumer reads wake_word, sets consumer_sleeping, checks
 * for work and waits while wake_word is unchanged; a waker that finds
 * consumer_sleeping set (after a full fence, Dekker-style against the
 * consumer's) clears it, bumps wake_word and wakes the futex.
 */
static _Atomic uint32_t own_wake_word;
static _Atomic int own_sleeping;
/*
 * Where the consumer sleeps: our own words, or (--vm) its slot's in the
 * VM's segment, which other processes wake too; see trap_event_share().
 */
static _Atomic uint32_t *wake_word = &own_wake_word;
static _Atomic int *consumer_sleeping = &own_sleeping;
static int futex_private = FUTEX_PRIVATE_FLAG;
static bool (*other_ready)(void);
static _Atomic int kicked;		/* trap_event_kick() since last wait */
static _Atomic uint64_t wake_calls;	/* FUTEX_WAKE system calls made */
static _Atomic(trap_quiet_fn) quiet_fn;	/* see trap_set_quiet_hook() */

static _Atomic(trap_sync_fn) sync_fn;
static _Atomic(trap_route_fn) route_fn;
static _Atomic uint64_t sync_seq;

static void wake_consumer(void)
{
	if (atomic_exchange(consumer_sleeping, 0)) {
		atomic_fetch_add(wake_word, 1);
		atomic_fetch_add_explicit(&wake_calls, 1, memory_order_relaxed);
		syscall(SYS_futex, wake_word, FUTEX_WAKE | futex_private, 1,
			NULL, NULL, 0);
	}
}

static void ring_push(const struct trap_event *ev)
{
	uint64_t pos = atomic_fetch_add_explicit(&ring_tail, 1,
						 memory_order_relaxed);
	struct trap_cell *c = &ring[pos & RING_MASK];
	trap_quiet_fn quiet;

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
	quiet = atomic_load_explicit(&quiet_fn, memory_order_relaxed);
	if (quiet && quiet(ev->offset, ev->value))
		return;
	if (atomic_load_explicit(consumer_sleeping, memory_order_relaxed))
		wake_consumer();
}

static bool ring_ready(void)
{
	struct trap_cell *c;

	/* no ring before trap_init(): the consumer sleeps for kicks only */
	if (!ring)
		return false;
	c = &ring[ring_head & RING_MASK];
	return atomic_load_explicit(&c->seq, memory_order_acquire) ==
	       ring_head + 1;
}

int trap_event_pop(struct trap_event *ev)
{
	struct trap_cell *c;

	if (!ring_ready())
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

void trap_event_kick(void)
{
	atomic_store(&kicked, 1);
	/* pairs with the fence in trap_event_arm(), as in ring_push() */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(consumer_sleeping, memory_order_relaxed))
		wake_consumer();
}

uint64_t trap_event_wake_calls(void)
{
	return atomic_load_explicit(&wake_calls, memory_order_relaxed);
}

/* Work for the consumer: our queue, or what the shared word also wakes. */
static bool work_ready(void)
{
	return ring_ready() || (other_ready && other_ready());
}

int trap_event_arm(void)
{
	atomic_store(consumer_sleeping, 1);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_exchange(&kicked, 0) || work_ready()) {
		atomic_store(consumer_sleeping, 0);
		return -EAGAIN;
	}
	return 0;
}

void trap_event_disarm(void)
{
	atomic_store(consumer_sleeping, 0);
	/*
	 * A kick that woke us is consumed: the caller looks for work next.
	 * Read-modify-write, so that reading a kick also acquires what its
	 * sender published before it.
	 */
	atomic_exchange(&kicked, 0);
}

int trap_event_wait(int timeout_ms)
{
	uint32_t word = atomic_load(wake_word);
	struct timespec ts, *tsp = NULL;
	long ret;
	int err = 0;

	if (trap_event_arm())
		return 0;
	if (timeout_ms == 0) {
		trap_event_disarm();
		return -ETIMEDOUT;
	}
	if (timeout_ms > 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000;
		tsp = &ts;
	}
	/* EAGAIN: woken between our read of the word and the wait */
	ret = syscall(SYS_futex, wake_word, FUTEX_WAIT | futex_private, word,
		      tsp, NULL, 0);
	if (ret < 0)
		err = errno;
	trap_event_disarm();
	if (err == ETIMEDOUT && !work_ready())
		return -ETIMEDOUT;
	return 0;
}

void trap_event_share(_Atomic uint32_t *word, _Atomic int *sleeping,
		      bool (*ready)(void))
{
	if (word && sleeping) {
		wake_word = word;
		consumer_sleeping = sleeping;
		futex_private = 0;
		other_ready = ready;
	} else {
		wake_word = &own_wake_word;
		consumer_sleeping = &own_sleeping;
		futex_private = FUTEX_PRIVATE_FLAG;
		other_ready = NULL;
	}
}

void trap_set_sync_handler(void (*fn)(const struct trap_event *ev))
{
	atomic_store(&sync_fn, fn);
}

void trap_set_quiet_hook(trap_quiet_fn fn)
{
	atomic_store(&quiet_fn, fn);
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
	return ring_create();
}

void trap_queue_destroy(void)
{
	ring_destroy();
	atomic_store(&sync_fn, NULL);
}
