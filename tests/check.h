/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A very small test harness: CHECK() records a result and prints failures
 * with their location; check_done() prints "N passed, M failed" and gives
 * the exit status.
 */
#ifndef MANA_TESTS_CHECK_H
#define MANA_TESTS_CHECK_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(cond, ...) \
	do { \
		if (cond) { \
			check_passed++; \
		} else { \
			check_failed++; \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, \
				#cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
		} \
	} while (0)

#define CHECK_ERRNO(expr_ret, want) \
	CHECK((expr_ret) == (want), "got %d (%s), want %d (%s)", (expr_ret), \
	      strerror(expr_ret), (want), strerror(want))

static inline int check_done(void)
{
	printf("%d passed, %d failed\n", check_passed, check_failed);
	return check_failed ? 1 : 0;
}

/*
 * The kernel version mana-emu emulates, as MAJOR * 1000 + MINOR: the
 * launcher's normalised options carry --kernel=VERSION unless it is the
 * default (emulator/core/era.h), which the emulator in the process tells
 * (mana_emu_kernel_version); 6014 for a test without one.
 */
static inline long emu_kernel_version(void)
{
	const char *o = getenv("MANA_EMU_OPTIONS"), *k;
	int (*fn)(void);
	char *end;
	long major, minor;

	k = o ? strstr(o, "--kernel=") : NULL;
	if (!k) {
		*(void **)&fn = dlsym(RTLD_DEFAULT, "mana_emu_kernel_version");
		return fn ? fn() : 6014;
	}
	major = strtol(k + 9, &end, 10);
	minor = *end == '.' ? strtol(end + 1, NULL, 10) : 0;
	return major * 1000 + minor;
}

#endif
