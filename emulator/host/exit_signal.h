/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --stats written when the program dies of a signal (exit_signal.c).
 */
#ifndef MANA_EMU_EXIT_SIGNAL_H
#define MANA_EMU_EXIT_SIGNAL_H

#include <signal.h>

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

/* Stand in for SIG_DFL of the terminating signals that still have it. */
void emu_exit_signals_init(sigaction_fn real);

/*
 * sigaction() for a terminating signal, as the program sees it: 0 or
 * -errno; -ENOENT for any other signal (the caller handles it).
 */
int emu_exit_signal_sigaction(int sig, const struct sigaction *act,
			      struct sigaction *oldact, sigaction_fn real);

/*
 * The process ends (exit() or a terminating signal): a DREQ for each
 * connected rdma_cm id, then a bounded wait for the DREPs.
 */
void emu_exit_cm_disconnect(void);

/* A fatal fault's default action is next: statistics, then the above. */
void emu_exit_fatal_signal(void);

#endif /* MANA_EMU_EXIT_SIGNAL_H */
