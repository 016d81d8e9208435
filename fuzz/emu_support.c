// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The fuzzers' side of the emulator: the user arena, the "real libc"
 * entry points and signal set-up interpose.c would give, and an environment that keeps the
 * emulator's constructor from generating a sysfs tree.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "emulator/core/emu.h"
#include "emulator/host/init.h"
#include "fuzz_emu.h"

/*
 * Before the emulator's constructor (default priority): no options (unless
 * given for debugging), and a
 * sysfs root given so that it does not make one in /tmp per fuzzer run.
 */
static void __attribute__((constructor(101))) fuzz_emu_env(void)
{
	const char *opts = getenv("MANA_FUZZ_EMU_OPTIONS");

	/* MANA_FUZZ_EMU_OPTIONS="--verbose" shows what each command got */
	if (opts)
		setenv(MANA_EMU_ENV_OPTIONS, opts, 1);
	else
		unsetenv(MANA_EMU_ENV_OPTIONS);
	unsetenv(MANA_EMU_ENV_STATS);
	setenv(MANA_EMU_ENV_SYSFS, "/nonexistent/mana-emu-fuzz", 1);
}

bool emu_fuzz_user_ok(const void *p, size_t len);

bool emu_fuzz_user_ok(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p;

	return a >= FUZZ_ARENA_BASE && len <= FUZZ_ARENA_SIZE &&
	       a - FUZZ_ARENA_BASE <= FUZZ_ARENA_SIZE - len;
}

void fuzz_emu_setup(void)
{
	static bool done;
	void *p;

	if (done)
		return;
	p = mmap((void *)(uintptr_t)FUZZ_ARENA_BASE, FUZZ_ARENA_SIZE,
		 PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)(uintptr_t)FUZZ_ARENA_BASE) {
		perror("fuzz: cannot map the user arena");
		abort();
	}
	emu_init();
	done = true;
}

/*
 * interpose.c stands in for SIG_DFL of the terminating signals so that
 * --stats is written when the program dies; in a fuzzer the signals are
 * libFuzzer's, and there is no stats file to write.
 */
void emu_exit_signals_setup(void)
{
}
