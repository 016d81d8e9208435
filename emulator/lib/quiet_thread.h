/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Emulator threads (backend receivers, the pcap flusher) must not take the
 * application's asynchronous signals; faults still reach them.
 */
#ifndef MANA_EMU_QUIET_THREAD_H
#define MANA_EMU_QUIET_THREAD_H

#include <pthread.h>
#include <signal.h>

static inline int start_quiet_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t set, old;
	int ret;

	sigfillset(&set);
	sigdelset(&set, SIGSEGV);
	sigdelset(&set, SIGBUS);
	sigdelset(&set, SIGILL);
	sigdelset(&set, SIGFPE);
	pthread_sigmask(SIG_SETMASK, &set, &old);
	ret = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

#endif
