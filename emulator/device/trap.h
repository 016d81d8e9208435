/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Doorbell trap: a doorbell page is an anonymous page mapped read-only.
 * Every store to it faults; the SIGSEGV handler decodes the instruction,
 * turns the store into an event {page cookie, offset, value, width},
 * skips the instruction and returns, so the store never reaches memory
 * and none is lost or merged even when the same doorbell is rung back to
 * back.  Events go to a bounded MPSC queue read by the device thread, or
 * straight to a synchronous callback (tests, benchmarks).  The one place
 * a decoded store is handed on is trap_queue_deliver().
 *
 * Requirements on the environment (also checked by trap_init):
 *  - ASan: the handler is installed with the libc sigaction found after
 *    the calling object (dlsym RTLD_NEXT), so ASan's interceptor is only
 *    in the way for code linked into the executable (tests); there the
 *    ASan default allow_user_segv_handler=1 is required.  Genuine crashes
 *    are passed on to ASan's handler, which reports them as usual.
 *  - valgrind (memcheck, callgrind, ...): needs precise register state at
 *    the faulting store and a precise RIP:
 *      --vex-guest-chase=no --px-default=allregs-at-mem-access
 *      --px-file-backed=allregs-at-mem-access
 *    (e.g. in VALGRIND_OPTS).  Valgrind's signal frames carry no FP
 *    state, so XMM values are taken from the registers at handler entry
 *    instead (valgrind leaves them untouched); a self-test in trap_init
 *    picks the source that works and fails loudly if none does.
 *  - Nobody may replace the SIGSEGV handler after trap_init; a sigaction
 *    interposer should hand SIGSEGV requests to trap_chain_sigaction().
 *  - The consumer must not block on anything an application thread may
 *    hold while storing: a store to a full queue waits for the consumer.
 *    A forked child inherits the pages but not the device thread.
 *  - The handler runs with SA_SIGINFO|SA_ONSTACK|SA_NODEFER|SA_RESTART and
 *    every signal blocked except SIGSEGV/BUS/ILL/FPE/TRAP/SYS; it needs
 *    under 1 KiB of stack beyond the kernel's frame (alternate stacks of
 *    MINSIGSTKSZ do not fit AVX-512 frames anyway; use SIGSTKSZ or more).
 *  - Foreign faults go to the previous handler with its sa_mask applied
 *    (SA_RESETHAND is not emulated); with no previous handler the action
 *    is reset to SIG_DFL and the fault re-executed, so cores still show
 *    the faulting instruction.
 */
#ifndef MANA_EMU_TRAP_H
#define MANA_EMU_TRAP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#define TRAP_PAGE_SIZE	4096u
#define TRAP_MAX_PAGES	256u
#define TRAP_RING_SIZE	65536u	/* events; a power of two */

struct trap_event {
	void *cookie;		/* as given to trap_page_alloc() */
	uint32_t offset;	/* byte offset in the page */
	uint32_t width;		/* 4 or 8 */
	uint64_t value;
	uint64_t seq;		/* global order of the stores, from 0 */
};

/*
 * Install the SIGSEGV handler (chaining to the previous one for faults
 * that are not doorbell stores), create the queue and self-test the
 * trap.  Idempotent and thread-safe; 0 or -errno, with a
 * message on stderr when the environment cannot support the trap.
 */
int trap_init(void);

/* Undo trap_init (tests): no page may be left and no store under way. */
void trap_fini(void);

/* A registered, write-protected doorbell page; NULL and errno on error. */
void *trap_page_alloc(void *cookie);
void trap_page_free(void *page);

/* Queue consumer (one thread): 0 and *ev filled in, or -EAGAIN. */
int trap_event_pop(struct trap_event *ev);

/*
 * Sleeping: the consumer announces that it sleeps and waits on a futex;
 * a store or a kick makes a system call only then, to keep stores cheap.
 * trap_event_arm() returns -EAGAIN if events are queued or a kick came
 * (do not sleep), 0 if the caller may now sleep; trap_event_disarm()
 * after waking.  trap_event_wait() does all that: 0 when woken (events
 * are queued, a kick came, or rarely a spurious wake-up), -ETIMEDOUT, or
 * (timeout 0) -ETIMEDOUT without a system call.  It works before
 * trap_init() too (kicks only), so one thread can sleep on doorbells and
 * on the kicks of everything else (frames, requests) with one futex.
 * trap_event_kick() is async-signal-safe and costs a system call only
 * when the consumer sleeps; trap_event_wake_calls() counts those wake
 * system calls (of stores and kicks).
 */
int trap_event_arm(void);
void trap_event_disarm(void);
int trap_event_wait(int timeout_ms);
void trap_event_kick(void);
uint64_t trap_event_wake_calls(void);

/*
 * Sleep on @word with @sleeping as the flag instead (shared futex, for
 * words in memory other processes map and wake; @ready: other work that
 * keeps the consumer awake), or on our own again with NULLs.  Only while
 * the consumer is not running.
 */
void trap_event_share(_Atomic uint32_t *word, _Atomic int *sleeping,
		      bool (*ready)(void));

/*
 * @fn(offset, value) true: a queued store needs no wake-up, the consumer
 * takes it at its next round, which something else is due to start
 * (a consumer about to sleep still finds it queued).  Called in signal
 * context after the store is queued and a full fence: it may read only
 * atomics, and a consumer that stops calling a store quiet does so before
 * it arms to sleep.  NULL: every store wakes.
 */
typedef bool (*trap_quiet_fn)(uint32_t offset, uint64_t value);
void trap_set_quiet_hook(trap_quiet_fn fn);

/*
 * Synchronous mode: with @fn set, the handler calls it in the storing
 * thread, from signal context, instead of queueing.  @fn must be
 * async-signal-safe in practice: no locks the application may hold, no
 * malloc.  Sequence numbers then come from a separate counter.  NULL
 * returns to queueing.
 */
void trap_set_sync_handler(void (*fn)(const struct trap_event *ev));

/*
 * Routing (--vm): @fn sees every decoded store first, in the storing
 * thread, from signal context (async-signal safe, no locks); true means
 * it took the store (a page of another process's device), which is then
 * neither queued nor given to the synchronous handler.  NULL: none.
 */
typedef bool (*trap_route_fn)(void *cookie, uint32_t offset, uint32_t width,
			      uint64_t value);
void trap_set_route_hook(trap_route_fn fn);

/* Called before a foreign SIGSEGV takes its default action (ends us). */
void trap_set_fatal_hook(void (*fn)(void));

/*
 * Fault-safe copies: a SIGSEGV whose RIP @fn maps to a nonzero resume
 * address continues there instead of being a doorbell store or a crash
 * (checked first, on every thread).  trap_fixup_ready(): the trap is
 * installed and a hook is set, so such copies may be used.
 */
void trap_set_fixup_hook(uintptr_t (*fn)(uintptr_t rip));
bool trap_fixup_ready(void);

/*
 * For a sigaction(SIGSEGV) interposer: once the trap is installed, the
 * application's handler becomes the one doorbell-unrelated faults are
 * passed to, and the trap stays in place.  0, or -ENOENT if the trap is
 * not installed (then call the real sigaction).
 */
int trap_chain_sigaction(const struct sigaction *act,
			 struct sigaction *oldact);

/*
 * ---- internal: trap.c (pages, handler) and trap_queue.c (the queue) -----
 * trap_queue_create(): the ring, 0 or -errno;
 * trap_queue_destroy() also returns to queueing mode.
 * trap_queue_deliver(): one decoded store, from the handler: queued, or
 * given to the synchronous handler with its sequence number.  The one
 * place a decoded doorbell is handed to the device.
 */
int trap_queue_create(void);
void trap_queue_destroy(void);
void trap_queue_deliver(struct trap_event *ev);

#endif
