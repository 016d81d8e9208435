/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A decoder for the x86-64 instructions that store a register or an
 * immediate to memory: enough to emulate a store that faulted on a
 * write-protected doorbell page, given the faulting thread's ucontext.
 *
 * Supported (legacy prefixes 66/67, segment overrides, REX, VEX):
 *   88/89 MOV r/m,r          C6/C7 /0 MOV r/m,imm     A2/A3 MOV moffs,AL/rAX
 *   86/87 XCHG r/m,r (LOCK)  0F C3 MOVNTI             0F 38 F1 MOVBE m,r
 *   66 0F D6 MOVQ m64,xmm    66 [REX.W] 0F 7E MOVD/MOVQ r/m,xmm
 *   F3 0F 11 MOVSS m32,xmm   F2 0F 11 MOVSD m64,xmm
 *   [66] 0F 13 MOVLPS/PD     [66] 0F 17 MOVHPS/PD
 *   66 0F 3A 14/15/16 PEXTRB/PEXTRW/PEXTRD/PEXTRQ m,xmm,imm8
 *   and the VEX.128 (C4/C5) encodings of the SSE forms above.
 * Everything else (EVEX, MMX, 16-byte and string stores, LOCK/REP on
 * anything but XCHG, register destinations) is reported as unsupported.
 */
#ifndef MANA_EMU_X86_STORE_H
#define MANA_EMU_X86_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#define X86_INSN_MAX 15		/* architectural instruction length limit */

enum x86_store_kind {
	X86_STORE_PLAIN,	/* memory <- value */
	X86_STORE_XCHG,		/* memory <- register, register <- old memory */
};

struct x86_store {
	uint8_t len;		/* instruction length in bytes */
	uint8_t width;		/* bytes stored: 1, 2, 4 or 8 */
	uint8_t kind;		/* enum x86_store_kind */
	uint8_t xchg_shift;	/* XCHG with AH/CH/DH/BH: 8, else 0 */
	int xchg_greg;		/* XCHG: REG_* index of the register */
	bool ea_valid;		/* false with an FS/GS override */
	uint64_t value;		/* what the instruction stores */
	uint64_t ea;		/* destination address */
	const char *name;	/* mnemonic, for messages */
};

/*
 * Decode the instruction at @insn, of which @avail bytes are readable,
 * executing with register state @uc; its address is taken from
 * uc->uc_mcontext.gregs[REG_RIP] (used for RIP-relative operands only).
 * Returns 0, -ENODATA if the instruction continues past @avail bytes, or
 * -EOPNOTSUPP if it is not a supported store to memory.
 */
int x86_decode_store(const uint8_t *insn, size_t avail, const ucontext_t *uc,
		     struct x86_store *out);

/*
 * As above, with the XMM registers taken from @xmm[16] instead of
 * uc->uc_mcontext.fpregs (valgrind does not fill in the FP state of
 * the signal frames it builds).
 */
int x86_decode_store_xmm(const uint8_t *insn, size_t avail,
			 const ucontext_t *uc,
			 const struct _libc_xmmreg *xmm,
			 struct x86_store *out);

/* XCHG: give its register the old memory contents, as the CPU would. */
void x86_store_xchg_writeback(const struct x86_store *st, ucontext_t *uc,
			      uint64_t old);

#endif
