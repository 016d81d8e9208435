/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Start-up of libmana-emu.so in the application's process (init.c), as
 * the interposers see it.
 */
#ifndef MANA_EMU_INIT_H
#define MANA_EMU_INIT_H

#include <stdbool.h>

/* Make sure the constructor work (options, sysfs, device) has run. */
void emu_init(void);

/*
 * emu_init() has completed.  Interposers that other libraries'
 * constructors may call before ours (and, in a sanitizer build, before
 * the ASan runtime has initialised: interpose.c is not instrumented, the
 * rest is) pass straight through to libc until then.
 */
extern bool emu_started;
static inline bool emu_ready(void)
{
	return __atomic_load_n(&emu_started, __ATOMIC_ACQUIRE);
}

/*
 * Our SIG_DFL stand-ins for the terminating signals (interpose.c, with
 * exit_signal.c; the fuzzers' fuzz/emu_support.c stands in).
 */
void emu_exit_signals_setup(void);

#endif /* MANA_EMU_INIT_H */
