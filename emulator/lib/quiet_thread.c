// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The emulator's threads: signals blocked, and the process's start-up CPU
 * set (quiet_thread.h).
 */
#include "quiet_thread.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>

static cpu_set_t *start_cpus;
static size_t start_cpus_size;

void emu_thread_cpus_capture(void)
{
	size_t ncpu = 1024, size;
	cpu_set_t *set;

	if (start_cpus)
		return;
	/* grow until the kernel's mask fits (EINVAL: too small) */
	for (; ncpu <= 1u << 20; ncpu *= 2) {
		set = CPU_ALLOC(ncpu);
		if (!set)
			return;
		size = CPU_ALLOC_SIZE(ncpu);
		if (!sched_getaffinity(0, size, set)) {
			start_cpus_size = size;
			start_cpus = set;
			return;
		}
		CPU_FREE(set);
		if (errno != EINVAL)
			return;
	}
}

int emu_thread_create(pthread_t *t, void *(*fn)(void *), void *arg,
		      bool detached)
{
	pthread_attr_t attr;
	sigset_t set, old;
	int ret;

	sigfillset(&set);
	sigdelset(&set, SIGSEGV);
	sigdelset(&set, SIGBUS);
	sigdelset(&set, SIGILL);
	sigdelset(&set, SIGFPE);
	ret = pthread_attr_init(&attr);
	if (ret)
		return ret;
	if (detached)
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_sigmask(SIG_SETMASK, &set, &old);
	ret = EINVAL;
	if (start_cpus &&
	    !pthread_attr_setaffinity_np(&attr, start_cpus_size, start_cpus))
		ret = pthread_create(t, &attr, fn, arg);
	/* a CPU of the set went away (hotplug, cpuset): the creator's set */
	if (ret == EINVAL) {
		pthread_attr_destroy(&attr);
		pthread_attr_init(&attr);
		if (detached)
			pthread_attr_setdetachstate(&attr,
						    PTHREAD_CREATE_DETACHED);
		ret = pthread_create(t, &attr, fn, arg);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return ret;
}
