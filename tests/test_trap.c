// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Doorbell trap tests: the x86 store decoder on literal instruction bytes
 * (hand-assembled and from objdump of gcc/clang output), live trapped
 * stores of every supported form, chaining of foreign faults, aborts on
 * unsupported stores, and the acceptance test: doorbells on two pages
 * rung back to back from two threads, none lost, duplicated or
 * reordered.  Ends with a rough cost per trapped store.
 *
 * Usage: test_trap [--iterations=N] [--bench-only]
 */
#include <cpuid.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emulator/device/trap.h"
#include "emulator/device/x86_store.h"
#include "check.h"

/* ---- decoder table --------------------------------------------------------- */

/* GPR n (x86 numbering) holds bytes 0x10+n, 0x20+n, ... 0x80+n. */
#define RV(n)	(0x8070605040302010ULL + 0x0101010101010101ULL * (n))
/* XMM n, dword j: 0xC0DE0n0j; XQ is qword q. */
#define XD(n, j) (0xC0DE0000ULL | (uint64_t)(n) << 8 | (j))
#define XQ(n, q) (XD(n, 2 * (q)) | XD(n, 2 * (q) + 1) << 32)
#define FAKE_RIP 0x400000ULL
#define M32(v)	((uint64_t)(v) & 0xffffffffULL)
#define M16(v)	((uint64_t)(v) & 0xffffULL)
#define BYTE(v, k) (((uint64_t)(v) >> (8 * (k))) & 0xff)

struct dcase {
	const char *what;
	uint8_t b[16];
	uint8_t n;
	int ret;
	uint8_t len;
	uint8_t width;
	uint64_t value;
	uint64_t ea;
	uint8_t flags;
};

#define NO_EA	1	/* EA not computable (FS/GS) */
#define XCHG	2

#define BYTES(...) .b = { __VA_ARGS__ }, .n = sizeof((uint8_t[]){ __VA_ARGS__ })
#define OK(l, w, v, e) .ret = 0, .len = (l), .width = (w), .value = (v), .ea = (e)
#define BAD .ret = -EOPNOTSUPP

static const struct dcase dcases[] = {
	/* MOV r/m, r */
	{ "mov %rsi,(%rdi)", BYTES(0x48, 0x89, 0x37), OK(3, 8, RV(6), RV(7)) },
	{ "mov %esi,(%rdi)", BYTES(0x89, 0x37), OK(2, 4, M32(RV(6)), RV(7)) },
	{ "mov %si,(%rdi)", BYTES(0x66, 0x89, 0x37), OK(3, 2, M16(RV(6)), RV(7)) },
	{ "mov %sil,(%rdi)", BYTES(0x40, 0x88, 0x37), OK(3, 1, BYTE(RV(6), 0), RV(7)) },
	{ "mov %dh,(%rdi)", BYTES(0x88, 0x37), OK(2, 1, BYTE(RV(2), 1), RV(7)) },
	{ "mov %ah,(%rdi)", BYTES(0x88, 0x27), OK(2, 1, BYTE(RV(0), 1), RV(7)) },
	{ "mov %bh,(%rdi)", BYTES(0x88, 0x3f), OK(2, 1, BYTE(RV(3), 1), RV(7)) },
	{ "mov %dil,(%rax)", BYTES(0x40, 0x88, 0x38), OK(3, 1, BYTE(RV(7), 0), RV(0)) },
	{ "mov %r13,(%rdi)", BYTES(0x4c, 0x89, 0x2f), OK(3, 8, RV(13), RV(7)) },
	{ "mov %r13,(%rax) gcc-O0-asan", BYTES(0x4c, 0x89, 0x28), OK(3, 8, RV(13), RV(0)) },
	{ "mov %rcx,(%rax) clang-O0", BYTES(0x48, 0x89, 0x08), OK(3, 8, RV(1), RV(0)) },
	{ "mov %r15d,(%r11)", BYTES(0x45, 0x89, 0x3b), OK(3, 4, M32(RV(15)), RV(11)) },
	{ "mov %r8b,(%r9)", BYTES(0x45, 0x88, 0x01), OK(3, 1, BYTE(RV(8), 0), RV(9)) },
	{ "mov %rax,(%r12)", BYTES(0x49, 0x89, 0x04, 0x24), OK(4, 8, RV(0), RV(12)) },
	{ "mov %rax,(%r13) mod1", BYTES(0x49, 0x89, 0x45, 0x00), OK(4, 8, RV(0), RV(13)) },
	{ "mov %rax,0x10(%rbp,%r12,8)", BYTES(0x4a, 0x89, 0x44, 0xe5, 0x10),
	  OK(5, 8, RV(0), RV(5) + (RV(12) << 3) + 0x10) },
	{ "mov %rdx,0x18(%rdi,%rsi,8) clang-O2", BYTES(0x48, 0x89, 0x54, 0xf7, 0x18),
	  OK(5, 8, RV(2), RV(7) + RV(6) * 8 + 0x18) },
	{ "mov %rax,(%rsp)", BYTES(0x48, 0x89, 0x04, 0x24), OK(4, 8, RV(0), RV(4)) },
	{ "mov %rax,(%rbx,%rcx,2)", BYTES(0x48, 0x89, 0x04, 0x4b),
	  OK(4, 8, RV(0), RV(3) + RV(1) * 2) },
	{ "mov %rax,0x1000 (SIB, no base)", BYTES(0x48, 0x89, 0x04, 0x25, 0x00, 0x10, 0x00, 0x00),
	  OK(8, 8, RV(0), 0x1000) },
	{ "mov %rax,0x40(,%r9,4)", BYTES(0x4a, 0x89, 0x04, 0x8d, 0x40, 0x00, 0x00, 0x00),
	  OK(8, 8, RV(0), RV(9) * 4 + 0x40) },
	{ "mov %rax,0x12345678(%rip)", BYTES(0x48, 0x89, 0x05, 0x78, 0x56, 0x34, 0x12),
	  OK(7, 8, RV(0), FAKE_RIP + 7 + 0x12345678) },
	{ "mov %eax,-0x10(%rip)", BYTES(0x89, 0x05, 0xf0, 0xff, 0xff, 0xff),
	  OK(6, 4, M32(RV(0)), FAKE_RIP + 6 - 0x10) },
	{ "mov %rax,0x100(%rdi)", BYTES(0x48, 0x89, 0x87, 0x00, 0x01, 0x00, 0x00),
	  OK(7, 8, RV(0), RV(7) + 0x100) },
	{ "mov %rax,-0x8(%rdi)", BYTES(0x48, 0x89, 0x47, 0xf8), OK(4, 8, RV(0), RV(7) - 8) },
	{ "mov %edx,-0x4(%r8)", BYTES(0x41, 0x89, 0x50, 0xfc), OK(4, 4, M32(RV(2)), RV(8) - 4) },
	{ "mov %rsi,(%edi) addr32", BYTES(0x67, 0x48, 0x89, 0x37), OK(4, 8, RV(6), M32(RV(7))) },
	{ "mov %rsi,%fs:(%rdi)", BYTES(0x64, 0x48, 0x89, 0x37), OK(4, 8, RV(6), 0), .flags = NO_EA },
	{ "mov %rsi,%cs:(%rdi)", BYTES(0x2e, 0x48, 0x89, 0x37), OK(4, 8, RV(6), RV(7)) },
	{ "REX before 66 is ignored", BYTES(0x48, 0x66, 0x89, 0x37), OK(4, 2, M16(RV(6)), RV(7)) },
	/* MOV r/m, imm */
	{ "movq $0x12345678,(%rdi)", BYTES(0x48, 0xc7, 0x07, 0x78, 0x56, 0x34, 0x12),
	  OK(7, 8, 0x12345678, RV(7)) },
	{ "movq $-5,(%rdi)", BYTES(0x48, 0xc7, 0x07, 0xfb, 0xff, 0xff, 0xff),
	  OK(7, 8, 0xfffffffffffffffbULL, RV(7)) },
	{ "movl $0xdeadbeef,(%rdi)", BYTES(0xc7, 0x07, 0xef, 0xbe, 0xad, 0xde),
	  OK(6, 4, 0xdeadbeef, RV(7)) },
	{ "movw $0xbeef,(%rdi)", BYTES(0x66, 0xc7, 0x07, 0xef, 0xbe), OK(5, 2, 0xbeef, RV(7)) },
	{ "movb $0xef,(%rdi)", BYTES(0xc6, 0x07, 0xef), OK(3, 1, 0xef, RV(7)) },
	{ "movl $1,0x8(%r12)", BYTES(0x41, 0xc7, 0x44, 0x24, 0x08, 0x01, 0x00, 0x00, 0x00),
	  OK(9, 4, 1, RV(12) + 8) },
	{ "movl $42,0x10(%rip)", BYTES(0xc7, 0x05, 0x10, 0x00, 0x00, 0x00, 0x2a, 0x00, 0x00, 0x00),
	  OK(10, 4, 42, FAKE_RIP + 10 + 0x10) },
	{ "movq $-1,0x7fff8000(%r12)", BYTES(0x49, 0xc7, 0x84, 0x24, 0x00, 0x80, 0xff, 0x7f,
					    0xff, 0xff, 0xff, 0xff),
	  OK(12, 8, ~0ULL, RV(12) + 0x7fff8000) },
	/* moffs */
	{ "movabs %rax,0x1122334455667788",
	  BYTES(0x48, 0xa3, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11),
	  OK(10, 8, RV(0), 0x1122334455667788ULL) },
	{ "movabs %al,0x8", BYTES(0xa2, 0x08, 0, 0, 0, 0, 0, 0, 0), OK(9, 1, BYTE(RV(0), 0), 8) },
	{ "mov %eax,0x11223344 addr32", BYTES(0x67, 0xa3, 0x44, 0x33, 0x22, 0x11),
	  OK(6, 4, M32(RV(0)), 0x11223344) },
	/* XCHG */
	{ "xchg %rsi,(%rdi)", BYTES(0x48, 0x87, 0x37), OK(3, 8, RV(6), RV(7)), .flags = XCHG },
	{ "xchg %esi,(%rdi)", BYTES(0x87, 0x37), OK(2, 4, M32(RV(6)), RV(7)), .flags = XCHG },
	{ "xchg %eax,(%rcx) clang-O0", BYTES(0x87, 0x01), OK(2, 4, M32(RV(0)), RV(1)), .flags = XCHG },
	{ "lock xchg %rsi,(%rdi)", BYTES(0xf0, 0x48, 0x87, 0x37), OK(4, 8, RV(6), RV(7)), .flags = XCHG },
	{ "xchg %ah,(%rdi)", BYTES(0x86, 0x27), OK(2, 1, BYTE(RV(0), 1), RV(7)), .flags = XCHG },
	/* MOVNTI, MOVBE */
	{ "movnti %rsi,(%rdi)", BYTES(0x48, 0x0f, 0xc3, 0x37), OK(4, 8, RV(6), RV(7)) },
	{ "movnti %edx,(%rax)", BYTES(0x0f, 0xc3, 0x10), OK(3, 4, M32(RV(2)), RV(0)) },
	{ "movbe %rsi,(%rdi)", BYTES(0x48, 0x0f, 0x38, 0xf1, 0x37),
	  OK(5, 8, __builtin_bswap64(RV(6)), RV(7)) },
	{ "movbe %esi,(%rdi)", BYTES(0x0f, 0x38, 0xf1, 0x37),
	  OK(4, 4, __builtin_bswap32((uint32_t)RV(6)), RV(7)) },
	/* SSE */
	{ "movq %xmm0,(%rdi)", BYTES(0x66, 0x0f, 0xd6, 0x07), OK(4, 8, XQ(0, 0), RV(7)) },
	{ "movq %xmm15,(%rdi)", BYTES(0x66, 0x44, 0x0f, 0xd6, 0x3f), OK(5, 8, XQ(15, 0), RV(7)) },
	{ "movq %xmm1,(%rdi) 7e", BYTES(0x66, 0x48, 0x0f, 0x7e, 0x0f), OK(5, 8, XQ(1, 0), RV(7)) },
	{ "movd %xmm1,(%rdi)", BYTES(0x66, 0x0f, 0x7e, 0x0f), OK(4, 4, XD(1, 0), RV(7)) },
	{ "movd %xmm9,0x8(%r10)", BYTES(0x66, 0x45, 0x0f, 0x7e, 0x4a, 0x08),
	  OK(6, 4, XD(9, 0), RV(10) + 8) },
	{ "movsd %xmm0,(%rdi)", BYTES(0xf2, 0x0f, 0x11, 0x07), OK(4, 8, XQ(0, 0), RV(7)) },
	{ "movss %xmm2,(%rax)", BYTES(0xf3, 0x0f, 0x11, 0x10), OK(4, 4, XD(2, 0), RV(0)) },
	{ "movlps %xmm0,(%rdi)", BYTES(0x0f, 0x13, 0x07), OK(3, 8, XQ(0, 0), RV(7)) },
	{ "movlpd %xmm3,(%rdi)", BYTES(0x66, 0x0f, 0x13, 0x1f), OK(4, 8, XQ(3, 0), RV(7)) },
	{ "movhps %xmm0,(%rdi)", BYTES(0x0f, 0x17, 0x07), OK(3, 8, XQ(0, 1), RV(7)) },
	{ "movhpd %xmm12,(%rdi)", BYTES(0x66, 0x44, 0x0f, 0x17, 0x27), OK(5, 8, XQ(12, 1), RV(7)) },
	{ "pextrq $1,%xmm0,(%rdi)", BYTES(0x66, 0x48, 0x0f, 0x3a, 0x16, 0x07, 0x01),
	  OK(7, 8, XQ(0, 1), RV(7)) },
	{ "pextrd $3,%xmm0,(%rdi)", BYTES(0x66, 0x0f, 0x3a, 0x16, 0x07, 0x03), OK(6, 4, XD(0, 3), RV(7)) },
	{ "pextrd $2,%xmm0,0x100(%rip)", BYTES(0x66, 0x0f, 0x3a, 0x16, 0x05, 0x00, 0x01, 0x00, 0x00, 0x02),
	  OK(10, 4, XD(0, 2), FAKE_RIP + 10 + 0x100) },
	{ "pextrw $5,%xmm1,(%rdi)", BYTES(0x66, 0x0f, 0x3a, 0x15, 0x0f, 0x05),
	  OK(6, 2, XD(1, 2) >> 16, RV(7)) },
	{ "pextrb $6,%xmm1,(%rdi)", BYTES(0x66, 0x0f, 0x3a, 0x14, 0x0f, 0x06),
	  OK(6, 1, BYTE(XD(1, 1), 2), RV(7)) },
	/* VEX */
	{ "vmovq %xmm0,(%rdi)", BYTES(0xc5, 0xf9, 0xd6, 0x07), OK(4, 8, XQ(0, 0), RV(7)) },
	{ "vmovq %xmm15,(%rdi)", BYTES(0xc5, 0x79, 0xd6, 0x3f), OK(4, 8, XQ(15, 0), RV(7)) },
	{ "vmovd %xmm0,(%rdi)", BYTES(0xc5, 0xf9, 0x7e, 0x07), OK(4, 4, XD(0, 0), RV(7)) },
	{ "vmovq %xmm0,(%rdi) 7e", BYTES(0xc4, 0xe1, 0xf9, 0x7e, 0x07), OK(5, 8, XQ(0, 0), RV(7)) },
	{ "vmovq %xmm0,(%r8)", BYTES(0xc4, 0xc1, 0x79, 0xd6, 0x00), OK(5, 8, XQ(0, 0), RV(8)) },
	{ "vmovq %xmm1,(%rax,%r11,1)", BYTES(0xc4, 0xa1, 0x79, 0xd6, 0x0c, 0x18),
	  OK(6, 8, XQ(1, 0), RV(0) + RV(11)) },
	{ "vmovsd %xmm0,(%rdi)", BYTES(0xc5, 0xfb, 0x11, 0x07), OK(4, 8, XQ(0, 0), RV(7)) },
	{ "vmovss %xmm0,(%rdi)", BYTES(0xc5, 0xfa, 0x11, 0x07), OK(4, 4, XD(0, 0), RV(7)) },
	{ "vmovlps %xmm0,(%rdi) clang-avx2", BYTES(0xc5, 0xf8, 0x13, 0x07), OK(4, 8, XQ(0, 0), RV(7)) },
	{ "vmovhps %xmm0,(%rdi)", BYTES(0xc5, 0xf8, 0x17, 0x07), OK(4, 8, XQ(0, 1), RV(7)) },
	{ "vpextrq $1,%xmm0,(%rdi)", BYTES(0xc4, 0xe3, 0xf9, 0x16, 0x07, 0x01),
	  OK(6, 8, XQ(0, 1), RV(7)) },
	/* unsupported */
	{ "add %rsi,(%rdi)", BYTES(0x48, 0x01, 0x37), BAD },
	{ "mov (%rdi),%rax (load)", BYTES(0x48, 0x8b, 0x07), BAD },
	{ "mov %eax,%eax (register)", BYTES(0x89, 0xc0), BAD },
	{ "mov $1,%eax (register)", BYTES(0xc7, 0xc0, 0x01, 0x00, 0x00, 0x00), BAD },
	{ "C7 /1", BYTES(0xc7, 0x0f, 0x01, 0x00, 0x00, 0x00), BAD },
	{ "movups %xmm0,(%rdi)", BYTES(0x0f, 0x11, 0x07), BAD },
	{ "movdqa %xmm0,(%rdi)", BYTES(0x66, 0x0f, 0x7f, 0x07), BAD },
	{ "movq (%rdi),%xmm0 (load)", BYTES(0xf3, 0x0f, 0x7e, 0x07), BAD },
	{ "movd %mm0,(%rdi) (MMX)", BYTES(0x0f, 0x7e, 0x07), BAD },
	{ "rep stos", BYTES(0xf3, 0x48, 0xab), BAD },
	{ "lock mov", BYTES(0xf0, 0x48, 0x89, 0x37), BAD },
	{ "xrelease mov", BYTES(0xf3, 0x48, 0x89, 0x37), BAD },
	{ "rep movnti", BYTES(0xf2, 0x0f, 0xc3, 0x37), BAD },
	{ "66 F2 movsd", BYTES(0x66, 0xf2, 0x0f, 0x11, 0x07), BAD },
	{ "crc32 (F2 0F 38 F1)", BYTES(0xf2, 0x0f, 0x38, 0xf1, 0x37), BAD },
	{ "EVEX vmovq", BYTES(0x62, 0xf1, 0xfd, 0x08, 0xd6, 0x07), BAD },
	{ "VEX vvvv != 1111", BYTES(0xc5, 0xf1, 0xd6, 0x07), BAD },
	{ "VEX.L=1 vmovq", BYTES(0xc5, 0xfd, 0xd6, 0x07), BAD },
	{ "REX before VEX", BYTES(0x48, 0xc5, 0xf9, 0xd6, 0x07), BAD },
	{ "66 before VEX", BYTES(0x66, 0xc5, 0xf9, 0xd6, 0x07), BAD },
	{ "VEX map 0F38", BYTES(0xc4, 0xe2, 0x79, 0xd6, 0x07), BAD },
	{ "push (%rdi)", BYTES(0xff, 0x37), BAD },
	{ "pop (%rdi)", BYTES(0x8f, 0x07), BAD },
	{ "call rel32", BYTES(0xe8, 0x00, 0x00, 0x00, 0x00), BAD },
	{ "over 15 bytes", BYTES(0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
				 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x89, 0x37), BAD },
};

static ucontext_t fake_uc;
static struct _libc_fpstate fake_fp;

static void fake_context(void)
{
	static const int order[16] = {
		REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI,
		REG_RDI, REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13,
		REG_R14, REG_R15,
	};
	int n, j;

	memset(&fake_uc, 0, sizeof(fake_uc));
	for (n = 0; n < 16; n++)
		fake_uc.uc_mcontext.gregs[order[n]] = (greg_t)RV(n);
	fake_uc.uc_mcontext.gregs[REG_RIP] = (greg_t)FAKE_RIP;
	for (n = 0; n < 16; n++)
		for (j = 0; j < 4; j++)
			fake_fp._xmm[n].element[j] = (uint32_t)XD(n, j);
	fake_uc.uc_mcontext.fpregs = &fake_fp;
}

static void check_case(const struct dcase *c)
{
	uint8_t buf[32];
	struct x86_store st;
	int ret;

	ret = x86_decode_store(c->b, c->n, &fake_uc, &st);
	CHECK(ret == c->ret, "%s: ret %d want %d", c->what, ret, c->ret);
	if (ret || c->ret)
		return;
	CHECK(st.len == c->len, "%s: len %u want %u", c->what, st.len, c->len);
	CHECK(st.width == c->width, "%s: width %u", c->what, st.width);
	CHECK(st.value == c->value, "%s: value %#llx want %#llx", c->what,
	      (unsigned long long)st.value, (unsigned long long)c->value);
	CHECK(st.ea_valid == !(c->flags & NO_EA), "%s: ea_valid", c->what);
	if (st.ea_valid)
		CHECK(st.ea == c->ea, "%s: ea %#llx want %#llx", c->what,
		      (unsigned long long)st.ea, (unsigned long long)c->ea);
	CHECK((st.kind == X86_STORE_XCHG) == !!(c->flags & XCHG), "%s: kind", c->what);
	CHECK(st.name != NULL, "%s: name", c->what);

	/* the length is exact: one byte less is not enough, more is unused */
	ret = x86_decode_store(c->b, c->n - 1, &fake_uc, &st);
	CHECK(ret == -ENODATA, "%s: truncated: %d", c->what, ret);
	memset(buf, 0x90, sizeof(buf));
	memcpy(buf, c->b, c->n);
	ret = x86_decode_store(buf, sizeof(buf), &fake_uc, &st);
	CHECK(ret == 0 && st.len == c->len, "%s: with trailing bytes", c->what);
}

static void test_decoder_extras(void)
{
	static const uint8_t movq[] = { 0x66, 0x0f, 0xd6, 0x07 };
	static const uint8_t xchg_ah[] = { 0x86, 0x27 };
	static const uint8_t xchg_si[] = { 0x66, 0x87, 0x37 };
	static const uint8_t xchg_esi[] = { 0x87, 0x37 };
	struct _libc_xmmreg xmm[16] = { 0 };
	ucontext_t uc = fake_uc;
	struct x86_store st;

	/* explicit XMM values override fpregs; no FP state: unsupported */
	xmm[0].element[0] = 0x11111111;
	xmm[0].element[1] = 0x22222222;
	CHECK(!x86_decode_store_xmm(movq, sizeof(movq), &uc, xmm, &st) &&
	      st.value == 0x2222222211111111ULL, "xmm override");
	uc.uc_mcontext.fpregs = NULL;
	CHECK(x86_decode_store(movq, sizeof(movq), &uc, &st) == -EOPNOTSUPP,
	      "no fpregs");
	CHECK(x86_decode_store(movq, 0, &uc, &st) == -ENODATA, "avail 0");

	/* XCHG writes the old memory value back into its register */
	uc = fake_uc;
	CHECK(!x86_decode_store(xchg_ah, sizeof(xchg_ah), &uc, &st), "xchg ah");
	x86_store_xchg_writeback(&st, &uc, 0x5a);
	CHECK((uint64_t)uc.uc_mcontext.gregs[REG_RAX] ==
	      ((RV(0) & ~0xff00ULL) | 0x5a00), "xchg ah writeback");
	CHECK(!x86_decode_store(xchg_si, sizeof(xchg_si), &uc, &st), "xchg si");
	x86_store_xchg_writeback(&st, &uc, 0xabcd);
	CHECK((uint64_t)uc.uc_mcontext.gregs[REG_RSI] ==
	      ((RV(6) & ~0xffffULL) | 0xabcd), "xchg si writeback");
	CHECK(!x86_decode_store(xchg_esi, sizeof(xchg_esi), &uc, &st), "xchg esi");
	x86_store_xchg_writeback(&st, &uc, 0xffffffff12345678ULL);
	CHECK((uint64_t)uc.uc_mcontext.gregs[REG_RSI] == 0x12345678,
	      "xchg esi writeback zero-extends");
}

static void test_decoder(void)
{
	size_t i;

	fake_context();
	for (i = 0; i < sizeof(dcases) / sizeof(dcases[0]); i++)
		check_case(&dcases[i]);
	test_decoder_extras();
}

/* ---- live stores, synchronous mode ------------------------------------------ */

static int cookie_a, cookie_b;
static struct trap_event rec[16];
static volatile unsigned int nrec;

static void recorder(const struct trap_event *ev)
{
	if (nrec < 16)
		rec[nrec] = *ev;
	nrec++;
}

static void expect_event(const char *what, void *cookie, uint32_t off,
			 uint32_t width, uint64_t value)
{
	CHECK(nrec == 1, "%s: %u events", what, nrec);
	if (nrec >= 1) {
		CHECK(rec[0].cookie == cookie && rec[0].offset == off &&
		      rec[0].width == width && rec[0].value == value,
		      "%s: got %p +%#x w%u %#llx, want +%#x w%u %#llx", what,
		      rec[0].cookie, rec[0].offset, rec[0].width,
		      (unsigned long long)rec[0].value, off, width,
		      (unsigned long long)value);
	}
	nrec = 0;
}

/* Specific encodings, each a store of a 64 or 32-bit value. */
static void st_mov64(void *p, uint64_t v)
{
	__asm__ volatile("movq %1, (%0)" : : "r"(p), "r"(v) : "memory");
}

static void st_mov32(void *p, uint32_t v)
{
	__asm__ volatile("movl %1, 0x10(%0)" : : "r"(p), "r"(v) : "memory");
}

static void st_r13_r9(void *p, uint64_t v)
{
	register void *r9 __asm__("r9") = p;
	register uint64_t r13 __asm__("r13") = v;

	__asm__ volatile("movq %1, 0x400(%0)" : : "r"(r9), "r"(r13) : "memory");
}

static void st_sib(void *p, long i, uint64_t v)
{
	__asm__ volatile("movq %2, 0x20(%0,%1,8)" : : "r"(p), "r"(i), "r"(v) : "memory");
}

static void st_imm64(void *p)
{
	__asm__ volatile("movq $-5, 0x8(%0)" : : "r"(p) : "memory");
}

static void st_imm32(void *p)
{
	__asm__ volatile("movl $0xdeadbeef, 0xff8(%0)" : : "r"(p) : "memory");
}

static uint64_t st_xchg64(void *p, uint64_t v)
{
	__asm__ volatile("xchgq %0, 0x820(%1)" : "+r"(v) : "r"(p) : "memory");
	return v;
}

static uint32_t st_xchg32(void *p, uint32_t v)
{
	__asm__ volatile("lock xchgl %0, 0x810(%1)" : "+r"(v) : "r"(p) : "memory");
	return v;
}

static void st_movnti(void *p, uint64_t v)
{
	__asm__ volatile("movnti %1, (%0)" : : "r"(p), "r"(v) : "memory");
}

static void st_movq_xmm9(void *p, uint64_t v)
{
	__asm__ volatile("movq %1, %%xmm9\n\tmovq %%xmm9, 0x800(%0)"
			 : : "r"(p), "r"(v) : "memory", "xmm9");
}

static void st_movq_7e(void *p, uint64_t v)
{
	__asm__ volatile("movq %1, %%xmm3\n\t.byte 0x66, 0x48, 0x0f, 0x7e, 0x18"
			 : : "a"(p), "r"(v) : "memory", "xmm3");
}

static void st_movd_xmm(void *p, uint32_t v)
{
	__asm__ volatile("movd %1, %%xmm2\n\tmovd %%xmm2, 0x410(%0)"
			 : : "r"(p), "r"(v) : "memory", "xmm2");
}

static void st_movsd(void *p, uint64_t v)
{
	__asm__ volatile("movq %1, %%xmm0\n\tmovsd %%xmm0, (%0)"
			 : : "r"(p), "r"(v) : "memory", "xmm0");
}

static void st_movss(void *p, uint32_t v)
{
	__asm__ volatile("movd %1, %%xmm14\n\tmovss %%xmm14, (%0)"
			 : : "r"(p), "r"(v) : "memory", "xmm14");
}

static void st_movlps(void *p, uint64_t v)
{
	__asm__ volatile("movq %1, %%xmm5\n\tmovlps %%xmm5, (%0)"
			 : : "r"(p), "r"(v) : "memory", "xmm5");
}

static void st_movhps(void *p, uint64_t v)
{
	__asm__ volatile("movq %1, %%xmm6\n\tmovlhps %%xmm6, %%xmm6\n\t"
			 "movhps %%xmm6, (%0)" : : "r"(p), "r"(v) : "memory", "xmm6");
}

static void st_pextrq(void *p, uint64_t v)
{
	__asm__ volatile("movq %1, %%xmm7\n\tmovlhps %%xmm7, %%xmm7\n\t"
			 "pextrq $1, %%xmm7, (%0)" : : "r"(p), "r"(v) : "memory", "xmm7");
}

static void st_vmovq(void *p, uint64_t v)
{
	__asm__ volatile("vmovq %1, %%xmm12\n\tvmovq %%xmm12, (%0)"
			 : : "r"(p), "r"(v) : "memory", "xmm12");
}

static void st_vmovd(void *p, uint32_t v)
{
	__asm__ volatile("vmovd %1, %%xmm1\n\tvmovd %%xmm1, (%0)"
			 : : "r"(p), "r"(v) : "memory", "xmm1");
}

static void st_vmovsd(void *p, uint64_t v)
{
	__asm__ volatile("vmovq %1, %%xmm8\n\tvmovsd %%xmm8, 0x8(%0)"
			 : : "r"(p), "r"(v) : "memory", "xmm8");
}

static void st_movbe(void *p, uint64_t v)
{
	__asm__ volatile("movbe %1, (%0)" : : "r"(p), "r"(v) : "memory");
}

/* What compilers make of a volatile doorbell write, at -O0 and -O2. */
#ifdef __clang__
#define OPT_O0 __attribute__((noinline, optnone))
#define OPT_O2 __attribute__((noinline))
#else
#define OPT_O0 __attribute__((noinline, optimize("O0")))
#define OPT_O2 __attribute__((noinline, optimize("O2")))
#endif

OPT_O0 static void ring64_o0(volatile uint64_t *db, uint64_t v)
{
	*db = v;
}

OPT_O2 static void ring64_o2(volatile uint64_t *db, uint64_t v)
{
	*db = v;
}

OPT_O0 static void ring32_o0(volatile uint32_t *db, uint32_t v)
{
	*db = v;
}

OPT_O2 static void ring32_o2(volatile uint32_t *db, uint32_t v)
{
	*db = v;
}

OPT_O2 static void ring64_seq_cst(uint64_t *db, uint64_t v)
{
	__atomic_store_n(db, v, __ATOMIC_SEQ_CST);
}

OPT_O0 static void ring64_release_o0(uint64_t *db, uint64_t v)
{
	__atomic_store_n(db, v, __ATOMIC_RELEASE);
}

/* CPUID.1:ECX.MOVBE[bit 22]; not every compiler knows it by name */
static bool cpu_has_movbe(void)
{
	unsigned int eax, ebx, ecx, edx;

	return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 22));
}

static void test_live_forms(uint8_t *a, uint8_t *b)
{
	static const uint8_t zero[TRAP_PAGE_SIZE];

	trap_set_sync_handler(recorder);
	nrec = 0;
	st_mov64(a, 0x1122334455667788ULL);
	expect_event("mov r64", &cookie_a, 0, 8, 0x1122334455667788ULL);
	st_mov32(a, 0xcafef00d);
	expect_event("mov r32", &cookie_a, 0x10, 4, 0xcafef00d);
	st_r13_r9(a, 0x0d0d0d0d0d0d0d0dULL);
	expect_event("mov r13 -> r9+disp32", &cookie_a, 0x400, 8, 0x0d0d0d0d0d0d0d0dULL);
	st_sib(b, 0xf8, 42);
	expect_event("mov SIB", &cookie_b, 0x20 + 0xf8 * 8, 8, 42);
	st_imm64(a);
	expect_event("movq imm", &cookie_a, 8, 8, (uint64_t)-5);
	st_imm32(a);
	expect_event("movl imm", &cookie_a, 0xff8, 4, 0xdeadbeef);
	CHECK(st_xchg64(a, 0x77) == 0, "xchg returns the old value");
	expect_event("xchg r64", &cookie_a, 0x820, 8, 0x77);
	CHECK(st_xchg32(b, 0x88) == 0, "lock xchg returns the old value");
	expect_event("lock xchg r32", &cookie_b, 0x810, 4, 0x88);
	st_movnti(b, 0x5555);
	expect_event("movnti", &cookie_b, 0, 8, 0x5555);
	st_movq_xmm9(a, 0x9999999999999999ULL);
	expect_event("movq xmm9", &cookie_a, 0x800, 8, 0x9999999999999999ULL);
	st_movq_7e(a, 0x7e7e7e7e00000001ULL);
	expect_event("movq 66 REX.W 0F 7E", &cookie_a, 0, 8, 0x7e7e7e7e00000001ULL);
	st_movd_xmm(a, 0x12345678);
	expect_event("movd xmm", &cookie_a, 0x410, 4, 0x12345678);
	st_movsd(a, 0x4000000000000000ULL);
	expect_event("movsd", &cookie_a, 0, 8, 0x4000000000000000ULL);
	st_movss(a, 0x3f800000);
	expect_event("movss xmm14", &cookie_a, 0, 4, 0x3f800000);
	st_movlps(a, 0x1313131313131313ULL);
	expect_event("movlps", &cookie_a, 0, 8, 0x1313131313131313ULL);
	st_movhps(a, 0x1717171717171717ULL);
	expect_event("movhps", &cookie_a, 0, 8, 0x1717171717171717ULL);
	if (__builtin_cpu_supports("sse4.1")) {
		st_pextrq(a, 0x1616161616161616ULL);
		expect_event("pextrq", &cookie_a, 0, 8, 0x1616161616161616ULL);
	}
	if (__builtin_cpu_supports("avx")) {
		st_vmovq(a, 0xabababababababab);
		expect_event("vmovq xmm12", &cookie_a, 0, 8, 0xababababababababULL);
		st_vmovd(a, 0xcdcdcdcd);
		expect_event("vmovd", &cookie_a, 0, 4, 0xcdcdcdcd);
		st_vmovsd(a, 0xefefefefefefefefULL);
		expect_event("vmovsd", &cookie_a, 8, 8, 0xefefefefefefefefULL);
	}
	if (cpu_has_movbe()) {
		st_movbe(a, 0x0102030405060708ULL);
		expect_event("movbe", &cookie_a, 0, 8, 0x0807060504030201ULL);
	}
	ring64_o0((volatile uint64_t *)(a + 0x800), 100);
	expect_event("volatile u64 -O0", &cookie_a, 0x800, 8, 100);
	ring64_o2((volatile uint64_t *)(a + 0x800), 101);
	expect_event("volatile u64 -O2", &cookie_a, 0x800, 8, 101);
	ring32_o0((volatile uint32_t *)(a + 0xff0), 102);
	expect_event("volatile u32 -O0", &cookie_a, 0xff0, 4, 102);
	ring32_o2((volatile uint32_t *)(a + 0xff0), 103);
	expect_event("volatile u32 -O2", &cookie_a, 0xff0, 4, 103);
	ring64_seq_cst((uint64_t *)(a + 0x408), 104);
	expect_event("seq_cst atomic store", &cookie_a, 0x408, 8, 104);
	ring64_release_o0((uint64_t *)(a + 0x408), 105);
	expect_event("release atomic store -O0", &cookie_a, 0x408, 8, 105);
	CHECK(!memcmp(a, zero, TRAP_PAGE_SIZE) && !memcmp(b, zero, TRAP_PAGE_SIZE),
	      "stores never reach the pages");
	trap_set_sync_handler(NULL);
}

/* ---- queue basics ----------------------------------------------------------- */

static void test_queue_basics(uint8_t *a)
{
	struct trap_event ev;
	uint64_t seq0;

	while (!trap_event_pop(&ev))
		;
	CHECK(trap_event_wait(20) == -ETIMEDOUT, "wait times out when idle");
	ring64_o2((volatile uint64_t *)a, 1);
	ring64_o2((volatile uint64_t *)a, 2);
	CHECK(trap_event_arm() == -EAGAIN, "arm with events queued");
	CHECK(trap_event_wait(1000) == 0, "wait with events queued");
	CHECK(trap_event_pop(&ev) == 0 && ev.value == 1 && ev.cookie == &cookie_a,
	      "first event");
	seq0 = ev.seq;
	CHECK(trap_event_pop(&ev) == 0 && ev.value == 2 && ev.seq == seq0 + 1,
	      "second event, next seq");
	CHECK(trap_event_pop(&ev) == -EAGAIN, "queue empty");
}

/* ---- waking the consumer ------------------------------------------------------ */

static void *kick_waiter(void *arg)
{
	int *ret = arg;

	*ret = trap_event_wait(20000);
	return NULL;
}

/*
 * Stores and kicks make a system call only for a consumer that sleeps; a
 * kick wakes a sleeping consumer once and is consumed by its wait.
 */
static void test_wake(uint8_t *a)
{
	const struct timespec tick = { 0, 50000000 };
	struct trap_event ev;
	uint64_t calls;
	int i, n = 0, ret = 1;
	pthread_t t;

	while (!trap_event_pop(&ev))
		;
	calls = trap_event_wake_calls();
	for (i = 0; i < 100; i++)
		ring64_o2((volatile uint64_t *)a, i);
	trap_event_kick();
	trap_event_kick();
	CHECK(trap_event_wake_calls() == calls,
	      "no wake system call while nobody sleeps: %llu",
	      (unsigned long long)(trap_event_wake_calls() - calls));
	while (!trap_event_pop(&ev))
		n++;
	CHECK(n == 100, "100 stores queued: %d", n);
	CHECK(trap_event_wait(1000) == 0, "a kick before the wait: no sleep");
	CHECK(trap_event_wait(20) == -ETIMEDOUT, "the wait consumed the kicks");
	CHECK(trap_event_wait(0) == -ETIMEDOUT, "a zero timeout only looks");

	/* a consumer that sleeps (very likely after 50 ms) is woken */
	pthread_create(&t, NULL, kick_waiter, &ret);
	nanosleep(&tick, NULL);
	trap_event_kick();
	pthread_join(t, NULL);
	CHECK(ret == 0, "a kick wakes the sleeping consumer: %d", ret);
	CHECK(trap_event_wait(20) == -ETIMEDOUT, "that kick consumed too");
}

/* Stores at 0x400 are quiet (the device's RQ doorbells, say). */
static bool quiet_400(uint32_t offset, uint64_t value)
{
	(void)value;
	return offset == 0x400;
}

/*
 * A quiet store wakes no sleeping consumer but stays queued: a consumer
 * about to sleep finds it, a sleeping one takes it with the next loud
 * store.
 */
static void test_quiet(uint8_t *a)
{
	const struct timespec tick = { 0, 50000000 };
	struct trap_event ev;
	uint64_t calls;
	int ret = 1;
	pthread_t t;

	while (!trap_event_pop(&ev))
		;
	trap_set_quiet_hook(quiet_400);
	ring64_o2((volatile uint64_t *)(a + 0x400), 1);
	CHECK(trap_event_wait(1000) == 0, "a quiet store queued: no sleep");
	CHECK(trap_event_pop(&ev) == 0 && ev.offset == 0x400 && ev.value == 1,
	      "the quiet store");

	pthread_create(&t, NULL, kick_waiter, &ret);
	nanosleep(&tick, NULL);
	calls = trap_event_wake_calls();
	ring64_o2((volatile uint64_t *)(a + 0x400), 2);
	nanosleep(&tick, NULL);
	CHECK(trap_event_wake_calls() == calls,
	      "a quiet store woke the sleeping consumer");
	ring64_o2((volatile uint64_t *)a, 3);
	pthread_join(t, NULL);
	CHECK(ret == 0, "a loud store wakes the consumer: %d", ret);
	CHECK(trap_event_pop(&ev) == 0 && ev.offset == 0x400 && ev.value == 2 &&
	      trap_event_pop(&ev) == 0 && ev.offset == 0 && ev.value == 3,
	      "both stores, in order");

	trap_set_quiet_hook(NULL);
	pthread_create(&t, NULL, kick_waiter, &ret);
	nanosleep(&tick, NULL);
	calls = trap_event_wake_calls();
	ring64_o2((volatile uint64_t *)(a + 0x400), 4);
	pthread_join(t, NULL);
	CHECK(ret == 0 && trap_event_wake_calls() == calls + 1,
	      "without the hook the store wakes");
	while (!trap_event_pop(&ev))
		;
}

/* ---- back-pressure: a full queue holds the storing thread --------------------- */

struct fill {
	uint8_t *page;
	unsigned long n;
	atomic_ulong done;
};

static void *filler(void *arg)
{
	struct fill *f = arg;
	unsigned long i;

	for (i = 0; i < f->n; i++) {
		ring64_o2((volatile uint64_t *)f->page, i);
		atomic_store(&f->done, i + 1);
	}
	return NULL;
}

static void test_full_queue(uint8_t *a)
{
	struct fill f = { .page = a, .n = TRAP_RING_SIZE + 1000 };
	const struct timespec tick = { 0, 10000000 };
	unsigned long got = 0, bad = 0;
	struct trap_event ev;
	pthread_t t;
	int i;

	pthread_create(&t, NULL, filler, &f);
	for (i = 0; i < 6000 && atomic_load(&f.done) < TRAP_RING_SIZE; i++)
		nanosleep(&tick, NULL);
	for (i = 0; i < 10; i++)
		nanosleep(&tick, NULL);
	CHECK(atomic_load(&f.done) == TRAP_RING_SIZE,
	      "the store after a full queue waits: %lu done",
	      (unsigned long)atomic_load(&f.done));
	for (i = 0; got < f.n && i < 30; ) {
		if (trap_event_pop(&ev)) {
			i += trap_event_wait(1000) == -ETIMEDOUT;
			continue;
		}
		bad += ev.value != got || ev.offset != 0;
		got++;
	}
	pthread_join(t, NULL);
	CHECK(got == f.n && !bad, "full queue: %lu of %lu events, %lu bad",
	      got, f.n, bad);
}

/* ---- children: chaining and aborts ------------------------------------------- */

static uint8_t *child_page;
/*
 * A genuine crash: a write to a read-only page that is not a doorbell
 * (same si_code as a doorbell store; also not a memcheck error).
 */
static volatile int *crash_addr;

static int run_child(void (*fn)(void), char *out, size_t outlen)
{
	struct rlimit no_core = { 0, 0 };
	size_t len = 0;
	int fds[2], status = -1;
	ssize_t n;
	pid_t pid;

	fflush(NULL);
	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		setrlimit(RLIMIT_CORE, &no_core);
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		close(fds[1]);
		fn();
		_exit(0);
	}
	close(fds[1]);
	while (len < outlen - 1 &&
	       (n = read(fds[0], out + len, outlen - 1 - len)) > 0)
		len += n;
	out[len] = 0;
	close(fds[0]);
	waitpid(pid, &status, 0);
	return status;
}

static void user_segv_info(int sig, siginfo_t *si, void *uc)
{
	_exit(si->si_addr == (void *)crash_addr ? 42 : 40);
}

static void user_segv_plain(int sig)
{
	_exit(43);
}

static void set_prev(void (*info)(int, siginfo_t *, void *), void (*plain)(int))
{
	struct sigaction sa = { .sa_handler = SIG_DFL };

	if (info) {
		sa.sa_sigaction = info;
		sa.sa_flags = SA_SIGINFO;
	} else if (plain) {
		sa.sa_handler = plain;
	}
	if (trap_chain_sigaction(&sa, NULL))
		_exit(99);
}


static void genuine_crash(void)
{
	*crash_addr = 1;
}

static void child_chain_info(void)
{
	set_prev(user_segv_info, NULL);
	ring64_o2((volatile uint64_t *)child_page, 1);	/* still trapped */
	genuine_crash();
	_exit(0);
}

static void child_chain_plain(void)
{
	set_prev(NULL, user_segv_plain);
	genuine_crash();
	_exit(0);
}

static void child_default(void)
{
	set_prev(NULL, NULL);
	genuine_crash();
	_exit(0);
}

static void child_sent(void)
{
	set_prev(NULL, NULL);
	raise(SIGSEGV);
	_exit(0);
}

static void child_movups(void)
{
	__asm__ volatile("xorps %%xmm0, %%xmm0\n\tmovups %%xmm0, (%0)"
			 : : "r"(child_page) : "memory", "xmm0");
	_exit(0);
}

static void child_width2(void)
{
	__asm__ volatile("movw $1, (%0)" : : "r"(child_page) : "memory");
	_exit(0);
}

static void child_page_end(void)
{
	__asm__ volatile("movq %%rax, 0xffc(%0)" : : "r"(child_page) : "memory");
	_exit(0);
}

static void test_children(uint8_t *page)
{
	char out[4096];
	int st;

	child_page = page;
	crash_addr = mmap(NULL, TRAP_PAGE_SIZE, PROT_READ,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(crash_addr != MAP_FAILED, "mmap");
	st = run_child(child_chain_info, out, sizeof(out));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 42,
	      "foreign fault goes to the SA_SIGINFO handler: status %#x %s", st, out);
	st = run_child(child_chain_plain, out, sizeof(out));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 43,
	      "foreign fault goes to the plain handler: status %#x %s", st, out);
	st = run_child(child_default, out, sizeof(out));
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV,
	      "foreign fault takes the default action: status %#x %s", st, out);
	st = run_child(child_sent, out, sizeof(out));
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV,
	      "raise(SIGSEGV) takes the default action: status %#x %s", st, out);
	st = run_child(child_movups, out, sizeof(out));
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT &&
	      strstr(out, "unsupported instruction") && strstr(out, "0f 11"),
	      "movups aborts with the bytes: status %#x %s", st, out);
	st = run_child(child_width2, out, sizeof(out));
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT &&
	      strstr(out, "32 or 64-bit"),
	      "16-bit store aborts: status %#x %s", st, out);
	st = run_child(child_page_end, out, sizeof(out));
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT &&
	      strstr(out, "past the doorbell page"),
	      "store across the page end aborts: status %#x %s", st, out);
	munmap((void *)crash_addr, TRAP_PAGE_SIZE);
}

/* ---- acceptance: two producers, one consumer ---------------------------------- */

#define SQ	0x000
#define RQ	0x400
#define RQ_SHORT 0x410
#define CQ	0x800
#define TAG(t, i) ((uint64_t)(t) << 48 | (i))

enum { T_SQ = 0x5100, T_RQ = 0x5200, T_CQ1 = 0xc100, T_CQ2 = 0xc200,
       T_SHORT = 0xa };

struct accept {
	uint8_t *a, *b;
	unsigned long n;
	/* consumer state */
	unsigned long step[2];	/* per producer: events seen */
	uint64_t next_seq;
	bool first;
	unsigned long received, errors;
	char first_error[160];
};

static void *producer1(void *arg)
{
	struct accept *t = arg;
	unsigned long i;

	for (i = 0; i < t->n; i++) {
		if (i & 1)
			ring64_o0((volatile uint64_t *)(t->a + SQ), TAG(T_SQ, i));
		else
			ring64_o2((volatile uint64_t *)(t->a + SQ), TAG(T_SQ, i));
		ring64_o2((volatile uint64_t *)(t->b + CQ), TAG(T_CQ1, i));
	}
	return NULL;
}

static void *producer2(void *arg)
{
	struct accept *t = arg;
	unsigned long i;

	for (i = 0; i < t->n; i++) {
		if (i & 1)
			ring64_o2((volatile uint64_t *)(t->a + RQ), TAG(T_RQ, i));
		else
			ring64_o0((volatile uint64_t *)(t->a + RQ), TAG(T_RQ, i));
		ring32_o2((volatile uint32_t *)(t->a + RQ_SHORT),
			  ((uint32_t)T_SHORT << 28 | (uint32_t)i));
		ring64_o0((volatile uint64_t *)(t->b + CQ), TAG(T_CQ2, i));
	}
	return NULL;
}

/* The event producer @p must send next, in its program order. */
static void expected(const struct accept *t, int p, void **cookie,
		     uint32_t *off, uint32_t *width, uint64_t *value)
{
	static const uint32_t offs[2][3] = { { SQ, CQ }, { RQ, RQ_SHORT, CQ } };
	static const uint64_t tags[2][3] = { { T_SQ, T_CQ1 },
					     { T_RQ, 0, T_CQ2 } };
	unsigned int per = p ? 3 : 2, k = t->step[p] % per;
	unsigned long i = t->step[p] / per;

	*off = offs[p][k];
	*cookie = *off == CQ ? &cookie_b : &cookie_a;
	*width = *off == RQ_SHORT ? 4 : 8;
	*value = *width == 4 ? ((uint64_t)T_SHORT << 28 | i) : TAG(tags[p][k], i);
}

static void accept_error(struct accept *t, const struct trap_event *ev,
			 const char *why)
{
	if (!t->errors++)
		snprintf(t->first_error, sizeof(t->first_error),
			 "%s: seq %llu cookie %p off %#x w%u value %#llx", why,
			 (unsigned long long)ev->seq, ev->cookie, ev->offset,
			 ev->width, (unsigned long long)ev->value);
}

static void accept_event(struct accept *t, const struct trap_event *ev)
{
	uint64_t tag = ev->width == 4 ? ev->value >> 28 : ev->value >> 48;
	int p = tag == T_SQ || tag == T_CQ1 ? 0 : 1;
	uint64_t value;
	uint32_t off, width;
	void *cookie;

	if (t->first)
		t->next_seq = ev->seq;
	t->first = false;
	if (ev->seq != t->next_seq++)
		accept_error(t, ev, "sequence gap");
	expected(t, p, &cookie, &off, &width, &value);
	if (ev->cookie != cookie || ev->offset != off || ev->width != width ||
	    ev->value != value)
		accept_error(t, ev, "lost, duplicated or reordered ring");
	t->step[p]++;
	t->received++;
}

static void *consumer(void *arg)
{
	struct accept *t = arg;
	unsigned long total = t->n * 5;
	struct trap_event ev;
	int idle = 0;

	while (t->received < total && idle < 30) {
		if (!trap_event_pop(&ev)) {
			accept_event(t, &ev);
			idle = 0;
		} else if (trap_event_wait(1000) == -ETIMEDOUT) {
			idle++;
		}
	}
	return NULL;
}

static void test_acceptance(uint8_t *a, uint8_t *b, unsigned long n)
{
	struct accept t = { .a = a, .b = b, .n = n, .first = true };
	pthread_t c, p1, p2;
	struct trap_event ev;

	pthread_create(&c, NULL, consumer, &t);
	pthread_create(&p1, NULL, producer1, &t);
	pthread_create(&p2, NULL, producer2, &t);
	pthread_join(p1, NULL);
	pthread_join(p2, NULL);
	pthread_join(c, NULL);
	CHECK(t.received == n * 5, "received %lu of %lu rings", t.received, n * 5);
	CHECK(t.errors == 0, "%lu bad rings, first: %s", t.errors, t.first_error);
	CHECK(t.step[0] == 2 * n && t.step[1] == 3 * n, "per-producer counts");
	CHECK(trap_event_pop(&ev) == -EAGAIN, "nothing extra queued");
	printf("acceptance: %lu rings from 2 threads on 2 pages, %lu errors\n",
	       t.received, t.errors);
}

/* ---- cost -------------------------------------------------------------------- */

static void count_only(const struct trap_event *ev)
{
	(void)ev;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *drain(void *arg)
{
	unsigned long *left = arg;
	struct trap_event ev;

	while (*left) {
		if (!trap_event_pop(&ev))
			(*left)--;
		else
			trap_event_wait(100);
	}
	return NULL;
}

static void bench(uint8_t *a, unsigned long n)
{
	volatile uint64_t *db = (volatile uint64_t *)a;
	unsigned long i, left = n;
	double t0, sync_ns, queue_ns;
	pthread_t c;

	trap_set_sync_handler(count_only);
	t0 = now_ns();
	for (i = 0; i < n; i++)
		*db = i;
	sync_ns = (now_ns() - t0) / n;
	trap_set_sync_handler(NULL);

	pthread_create(&c, NULL, drain, &left);
	t0 = now_ns();
	for (i = 0; i < n; i++)
		*db = i;
	pthread_join(c, NULL);
	queue_ns = (now_ns() - t0) / n;
	printf("cost per trapped store: %.0f ns synchronous, %.0f ns queued "
	       "(%lu stores)\n", sync_ns, queue_ns, n);
}

int main(int argc, char **argv)
{
	unsigned long n = 100000;
	bool bench_only = false;
	uint8_t *a, *b;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--iterations=", 13))
			n = strtoul(argv[i] + 13, NULL, 0);
		else if (!strcmp(argv[i], "--bench-only"))
			bench_only = true;
	}
	if (!bench_only)
		test_decoder();
	CHECK(trap_init() == 0, "trap_init");
	a = trap_page_alloc(&cookie_a);
	b = trap_page_alloc(&cookie_b);
	CHECK(a && b, "trap_page_alloc: %s", strerror(errno));
	if (!a || !b)
		return check_done();
	if (bench_only) {
		bench(a, n);
	} else {
		test_live_forms(a, b);
		test_queue_basics(a);
		test_wake(a);
		test_quiet(a);
		test_full_queue(a);
		test_children(a);
		test_acceptance(a, b, n);
		bench(a, n < 100000 ? n : 100000);
	}
	trap_page_free(a);
	trap_page_free(b);
	trap_fini();
	return check_done();
}
