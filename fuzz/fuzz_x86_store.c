// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The doorbell trap's x86-64 store decoder on arbitrary instruction bytes
 * and register state.  Properties: only 0, -ENODATA or -EOPNOTSUPP; a
 * decoded store fits in the bytes given and in 15; its value fits its
 * width; the same bytes cut to the decoded length decode the same, one
 * byte shorter ask for more; the XMM state from the signal frame and the
 * one passed explicitly agree; without any FP state nothing crashes.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

#include "emulator/device/x86_store.h"
#include "fuzz_check.h"
#include "fuzz_emu.h"

static bool same_store(const struct x86_store *a, const struct x86_store *b)
{
	return a->len == b->len && a->width == b->width &&
	       a->kind == b->kind && a->xchg_shift == b->xchg_shift &&
	       a->xchg_greg == b->xchg_greg && a->ea_valid == b->ea_valid &&
	       a->value == b->value && (!a->ea_valid || a->ea == b->ea);
}

static void check_store(const struct x86_store *st, size_t avail)
{
	FUZZ_CHECK(st->len >= 1 && st->len <= X86_INSN_MAX && st->len <= avail);
	FUZZ_CHECK(st->width == 1 || st->width == 2 || st->width == 4 ||
		   st->width == 8);
	FUZZ_CHECK(st->width == 8 || !(st->value >> (8 * st->width)));
	FUZZ_CHECK(st->name);
	FUZZ_CHECK(st->kind == X86_STORE_PLAIN || st->kind == X86_STORE_XCHG);
	if (st->kind == X86_STORE_XCHG) {
		FUZZ_CHECK(st->xchg_greg >= 0 && st->xchg_greg < NGREG);
		FUZZ_CHECK(st->xchg_shift == 0 || st->xchg_shift == 8);
		FUZZ_CHECK(st->xchg_shift == 0 || st->width == 1);
	}
}

/*
 * Input: bytes available (low 4 bits, 0 = 16), the instruction (16 bytes,
 * zero-filled), then general registers and XMM registers.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct _libc_fpstate fp;
	struct x86_store st, st2;
	uint8_t insn[16];
	ucontext_t uc;
	size_t avail;
	int ret, ret2;

	memset(&uc, 0, sizeof(uc));
	memset(&fp, 0, sizeof(fp));
	avail = fuzz_u8(&in) & 0xF;
	if (!avail)
		avail = sizeof(insn);
	fuzz_take(&in, insn, sizeof(insn));
	fuzz_take(&in, uc.uc_mcontext.gregs, sizeof(uc.uc_mcontext.gregs));
	fuzz_take(&in, fp._xmm, sizeof(fp._xmm));

	/* no FP state at all (valgrind's frames): must not crash */
	uc.uc_mcontext.fpregs = NULL;
	ret = x86_decode_store(insn, avail, &uc, &st);
	FUZZ_CHECK(ret == 0 || ret == -ENODATA || ret == -EOPNOTSUPP);
	if (!ret)
		check_store(&st, avail);

	uc.uc_mcontext.fpregs = &fp;
	ret = x86_decode_store(insn, avail, &uc, &st);
	FUZZ_CHECK(ret == 0 || ret == -ENODATA || ret == -EOPNOTSUPP);
	ret2 = x86_decode_store_xmm(insn, avail, &uc, fp._xmm, &st2);
	FUZZ_CHECK(ret2 == ret);
	if (ret == -ENODATA)
		FUZZ_CHECK(avail < X86_INSN_MAX);
	if (ret)
		return 0;
	check_store(&st, avail);
	FUZZ_CHECK(same_store(&st, &st2));

	/* a prefix of the instruction: exactly its length is enough */
	FUZZ_CHECK(!x86_decode_store(insn, st.len, &uc, &st2));
	FUZZ_CHECK(same_store(&st, &st2));
	FUZZ_CHECK(x86_decode_store(insn, st.len - 1, &uc, &st2) == -ENODATA);

	x86_store_xchg_writeback(&st, &uc, st.value ^ 0x5A5A5A5A5A5A5A5AULL);
	return 0;
}
