/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the emulator harnesses share: the emulated kernel linked into the
 * fuzzer without its libc interposers, and a "user arena" standing for the
 * application's memory.  Only the arena is user memory (core/user_copy.c
 * checks every copy against it in MANA_EMU_FUZZ builds), so a fuzzed
 * pointer either lands in the arena or gets EFAULT, never in the fuzzer's
 * own heap.
 */
#ifndef MANA_FUZZ_EMU_H
#define MANA_FUZZ_EMU_H

#include <stddef.h>
#include <stdint.h>

#define FUZZ_ARENA_SIZE (1U << 20)

/* Fixed address, so that seeds can name arena memory in pointer fields. */
#define FUZZ_ARENA_BASE 0x5a0000000000ULL

/* Map the arena (once) and start the emulated kernel; aborts on failure. */
void fuzz_emu_setup(void);

static inline uint8_t *fuzz_arena(void)
{
	return (uint8_t *)(uintptr_t)FUZZ_ARENA_BASE;
}

/* Little helpers for walking an input. */
struct fuzz_in {
	const uint8_t *p;
	size_t left;
};

static inline size_t fuzz_take(struct fuzz_in *in, void *dst, size_t len)
{
	size_t n = len < in->left ? len : in->left;
	size_t i;

	for (i = 0; i < n; i++)
		((uint8_t *)dst)[i] = in->p[i];
	for (; i < len; i++)
		((uint8_t *)dst)[i] = 0;
	in->p += n;
	in->left -= n;
	return n;
}

static inline uint8_t fuzz_u8(struct fuzz_in *in)
{
	uint8_t v;

	fuzz_take(in, &v, 1);
	return v;
}

static inline uint16_t fuzz_u16(struct fuzz_in *in)
{
	uint8_t b[2];

	fuzz_take(in, b, 2);
	return (uint16_t)(b[0] | b[1] << 8);
}

static inline uint32_t fuzz_u32(struct fuzz_in *in)
{
	return fuzz_u16(in) | (uint32_t)fuzz_u16(in) << 16;
}

static inline uint64_t fuzz_u64(struct fuzz_in *in)
{
	return fuzz_u32(in) | (uint64_t)fuzz_u32(in) << 32;
}

#endif /* MANA_FUZZ_EMU_H */
