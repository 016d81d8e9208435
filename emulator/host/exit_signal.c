// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Statistics also when the program dies of a signal.  For the signals
 * whose default action ends the process, a handler of ours stands in for
 * SIG_DFL: it writes the --stats file, restores SIG_DFL and lets the
 * signal (still pending, as it is blocked in the handler) end the process
 * with the status it would have had (a --vm process leaves its VM
 * first).  The program never sees it:
 * sigaction()/signal() report SIG_DFL where ours is installed, and a
 * handler the program installs replaces it (setting SIG_DFL again puts
 * ours back).  SIGKILL cannot be caught; SIGSEGV goes through the
 * doorbell trap, which calls the same dump before its default action.
 */
#include "exit_signal.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "emulator/core/emu.h"
#include "emulator/core/vm.h"
#include "emulator/device/device.h"
#include "emulator/kernel/rdma_cm.h"

static const int exit_sigs[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGABRT, SIGALRM, SIGPIPE, SIGUSR1,
};

static bool ours[NSIG];

static bool exit_sig(int sig)
{
	size_t i;

	for (i = 0; i < sizeof(exit_sigs) / sizeof(exit_sigs[0]); i++)
		if (exit_sigs[i] == sig)
			return true;
	return false;
}

/* The kernel's struct sigaction (x86-64), for the raw call below. */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

/*
 * How long an ending process waits for the DREPs to its DREQs: the
 * kernel does not hold the exit for them (it retries a lost DREQ on its
 * own, after the process is gone); the wait only lets the device thread
 * take the answers while the peer is quick, and is what we have instead
 * of those retries.
 */
#define EXIT_DREP_WAIT_MS 200

/* How long the lock may stay busy before the DREQs are given up. */
#define EXIT_LOCK_WAIT_MS 100

/*
 * trylock only: from a signal handler the thread we interrupted may hold
 * emu.lock (its state half changed), and then no DREQ is sent.  Another
 * thread (the device's, mid-round) holds it for microseconds: retry a
 * while, or a SIGTERM that lands in a device round sends no DREQ (seen
 * under ASan, cm.exited.term).
 */
void emu_exit_cm_disconnect(void)
{
	struct timespec ms = { .tv_nsec = 1000000 };
	unsigned int i, left;

	for (i = 0; pthread_mutex_trylock(&emu.lock); i++) {
		if (i >= EXIT_LOCK_WAIT_MS)
			return;
		nanosleep(&ms, NULL);
	}
	left = emu_cm_exit();
	pthread_mutex_unlock(&emu.lock);
	for (i = 0; left && i < EXIT_DREP_WAIT_MS; i++) {
		nanosleep(&ms, NULL);
		if (pthread_mutex_trylock(&emu.lock))
			continue;
		left = emu_cm_exit_pending();
		pthread_mutex_unlock(&emu.lock);
	}
}

/*
 * A signal ends the process (ours below, or a fault -- SIGSEGV, SIGBUS --
 * through the doorbell trap's default action): the kernel releases its
 * files all the same, so the CM says what the release says (qperf's
 * server child crashes so in rdma_destroy_qp() of its listening id,
 * which has no QP, every run).
 */
void emu_exit_fatal_signal(void)
{
	emu_device_dump_on_signal();
	emu_exit_cm_disconnect();
}

static void exit_handler(int sig)
{
	struct ksigaction dfl = { .handler = SIG_DFL };
	int saved = errno;

	emu_exit_fatal_signal();
	emu_vm_detach_on_signal();
	/* raw: the interposed sigaction() would put us back */
	syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask));
	ours[sig] = false;
	/* blocked while we run: delivered, with SIG_DFL, when we return */
	syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
	errno = saved;
}

static int install(int sig, sigaction_fn real)
{
	struct sigaction sa = { .sa_handler = exit_handler };

	sigemptyset(&sa.sa_mask);
	if (real(sig, &sa, NULL))
		return -errno;
	ours[sig] = true;
	return 0;
}

void emu_exit_signals_init(sigaction_fn real)
{
	struct sigaction cur;
	size_t i;

	for (i = 0; i < sizeof(exit_sigs) / sizeof(exit_sigs[0]); i++) {
		int sig = exit_sigs[i];

		if (!real(sig, NULL, &cur) && cur.sa_handler == SIG_DFL &&
		    !(cur.sa_flags & SA_SIGINFO))
			install(sig, real);
	}
}

int emu_exit_signal_sigaction(int sig, const struct sigaction *act,
			      struct sigaction *oldact, sigaction_fn real)
{
	struct sigaction old;

	if (sig <= 0 || sig >= NSIG || !exit_sig(sig))
		return -ENOENT;
	if (real(sig, NULL, &old))
		return -errno;
	if (ours[sig]) {
		memset(&old, 0, sizeof(old));
		old.sa_handler = SIG_DFL;
	}
	if (act && act->sa_handler == SIG_DFL && !(act->sa_flags & SA_SIGINFO)) {
		if (!ours[sig] && install(sig, real))
			return -errno;
	} else if (act) {
		if (real(sig, act, NULL))
			return -errno;
		ours[sig] = false;
	}
	if (oldact)
		*oldact = old;
	return 0;
}
