/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A property a harness checks: when it does not hold, say which and abort,
 * so libFuzzer saves the input as a crash.
 */
#ifndef MANA_FUZZ_CHECK_H
#define MANA_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(cond)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: property failed: %s\n",        \
				__FILE__, __LINE__, #cond);                    \
			abort();                                               \
		}                                                              \
	} while (0)

#endif /* MANA_FUZZ_CHECK_H */
