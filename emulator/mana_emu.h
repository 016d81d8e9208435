/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Test-only API of libmana-emu.so.  Tests running under mana-emu find it
 * with dlsym(RTLD_DEFAULT, MANA_EMU_OBJECT_COUNTS_SYM); in a process
 * without the emulator the symbol is simply absent.
 */
#ifndef MANA_EMU_H
#define MANA_EMU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Live objects of the emulated kernel, over every open uverbs file. */
struct mana_emu_counts {
	uint32_t contexts;
	uint32_t pds;
	uint32_t mrs;
	uint32_t cqs;
	uint32_t wqs;
	uint32_t qps;
	uint32_t ind_tables;
	uint32_t comp_channels;
};

#define MANA_EMU_OBJECT_COUNTS_SYM "mana_emu_object_counts"

/* Returns 0, or -1 with errno EINVAL when out is NULL. */
int mana_emu_object_counts(struct mana_emu_counts *out);

typedef int (*mana_emu_object_counts_fn)(struct mana_emu_counts *out);

#ifdef __cplusplus
}
#endif

#endif /* MANA_EMU_H */
