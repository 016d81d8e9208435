/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The emulator's own threads (the device's, the wires' receivers): they
 * must not take the application's asynchronous signals (faults still
 * reach them), and they run on the CPUs the process had when
 * the library started, not on whatever the creating thread was narrowed
 * to since: DPDK pins its main thread to one core (`-l 0`) before it
 * creates the queues that start the device thread.
 */
#ifndef MANA_EMU_QUIET_THREAD_H
#define MANA_EMU_QUIET_THREAD_H

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * The emulator's own threads (the device's, the wires' receivers) run in
 * short bursts and others wait on them, e.g. an application spinning on
 * its CQ: ask for a short time slice, which since Linux 6.12 lets them
 * preempt such a spinner at once when they wake.  Only a normal thread's
 * slice changes (its nice value stays); older kernels ignore the request,
 * and a failure changes nothing.
 */
static inline void emu_thread_short_slice(void)
{
	struct {
		uint32_t size;
		uint32_t sched_policy;
		uint64_t sched_flags;
		int32_t sched_nice;
		uint32_t sched_priority;
		uint64_t sched_runtime;
		uint64_t sched_deadline;
		uint64_t sched_period;
	} attr = { 0 };

	if (syscall(SYS_sched_getattr, 0, &attr, sizeof(attr), 0) ||
	    attr.sched_policy != SCHED_OTHER)
		return;
	attr.size = sizeof(attr);
	attr.sched_flags = 0;
	attr.sched_runtime = 100 * 1000;	/* ns: the minimum */
	syscall(SYS_sched_setattr, 0, &attr, 0);
}

/*
 * Remember the calling thread's CPU set as the emulator threads' set: once,
 * at library start-up, before the application can narrow its threads (a
 * cgroup cpuset or a taskset on the whole process is kept).  Without it the
 * threads inherit their creator's set.
 */
void emu_thread_cpus_capture(void);

/*
 * Start @fn(@arg) with every asynchronous signal blocked, on the CPU set
 * captured at start-up (if that cannot be applied, on the creator's), and
 * detached if asked.  0 or an error number, as pthread_create().
 */
int emu_thread_create(pthread_t *t, void *(*fn)(void *), void *arg,
		      bool detached);

static inline int start_quiet_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	return emu_thread_create(t, fn, arg, false);
}

#endif
