// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * x86-64 store decoder; see x86_store.h.  Encodings follow the Intel SDM
 * vol. 2, chapter 2 (prefixes, REX, VEX, ModRM/SIB) and appendix A.
 * Only 64-bit mode is handled: C4/C5 are always VEX and 40-4F always REX.
 */
#include <errno.h>
#include <string.h>

#include "x86_store.h"

/* Mandatory SSE prefixes, in VEX.pp order. */
enum { PFX_NONE, PFX_66, PFX_F3, PFX_F2 };

#define REX_W 8
#define REX_R 4
#define REX_X 2
#define REX_B 1

struct dec {
	const uint8_t *insn;
	size_t avail;
	size_t pos;
	const ucontext_t *uc;
	const struct _libc_xmmreg *xmm;	/* NULL: no FP state */
	bool opsize;			/* 66 */
	bool adsize;			/* 67 */
	bool lock;			/* F0 */
	bool fsgs;			/* 64/65: EA needs a segment base */
	bool vex;
	uint8_t rep;			/* F2, F3 or 0 */
	uint8_t rex;			/* REX byte (synthesised for VEX), or 0 */
	uint8_t reg;			/* ModRM.reg extended by REX.R */
	bool riprel;
	uint64_t ea;			/* without RIP for RIP-relative */
};

/* ModRM register numbers to ucontext gregs: the two orders differ. */
static const uint8_t greg_of[16] = {
	REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
	REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
};

static int fetch(struct dec *d, uint8_t *b)
{
	if (d->pos >= X86_INSN_MAX)
		return -EOPNOTSUPP;
	if (d->pos >= d->avail)
		return -ENODATA;
	*b = d->insn[d->pos++];
	return 0;
}

static int fetch_le(struct dec *d, unsigned int bytes, uint64_t *v)
{
	uint64_t x = 0;
	unsigned int i;
	uint8_t b;
	int ret;

	for (i = 0; i < bytes; i++) {
		ret = fetch(d, &b);
		if (ret)
			return ret;
		x |= (uint64_t)b << (8 * i);
	}
	*v = x;
	return 0;
}

static uint64_t sext(uint64_t v, unsigned int bytes)
{
	unsigned int sh = 64 - 8 * bytes;

	return (uint64_t)((int64_t)(v << sh) >> sh);
}

static uint64_t mask(uint64_t v, unsigned int width)
{
	return width == 8 ? v : v & ((1ULL << (8 * width)) - 1);
}

static uint64_t gpr(const struct dec *d, unsigned int n)
{
	return (uint64_t)d->uc->uc_mcontext.gregs[greg_of[n]];
}

/* Without any REX prefix, byte registers 4-7 are AH, CH, DH and BH. */
static unsigned int byte_reg(const struct dec *d, unsigned int *n)
{
	if (d->rex || *n < 4 || *n > 7)
		return 0;
	*n -= 4;
	return 8;
}

static uint64_t gpr_operand(const struct dec *d, unsigned int n,
			    unsigned int width)
{
	unsigned int sh = width == 1 ? byte_reg(d, &n) : 0;

	return mask(gpr(d, n) >> sh, width);
}

static uint64_t xmm_q(const struct dec *d, unsigned int n, unsigned int q)
{
	const struct _libc_xmmreg *x = &d->xmm[n];

	return x->element[2 * q] | (uint64_t)x->element[2 * q + 1] << 32;
}

static unsigned int opwidth(const struct dec *d)
{
	if (d->rex & REX_W)
		return 8;
	return d->opsize ? 2 : 4;
}

static int mandatory_prefix(const struct dec *d)
{
	if (d->rep && d->opsize)
		return -1;	/* ambiguous; compilers never emit it */
	if (d->rep)
		return d->rep == 0xF3 ? PFX_F3 : PFX_F2;
	return d->opsize ? PFX_66 : PFX_NONE;
}

static int parse_prefixes(struct dec *d, uint8_t *op)
{
	uint8_t b;
	int ret;

	for (;;) {
		ret = fetch(d, &b);
		if (ret)
			return ret;
		switch (b) {
		case 0x66:
			d->opsize = true;
			break;
		case 0x67:
			d->adsize = true;
			break;
		case 0xF0:
			d->lock = true;
			break;
		case 0xF2:
		case 0xF3:
			d->rep = b;
			break;
		case 0x26: case 0x2E: case 0x36: case 0x3E:
			break;	/* ES/CS/SS/DS: no effect in 64-bit mode */
		case 0x64:
		case 0x65:
			d->fsgs = true;
			break;
		default:
			if ((b & 0xF0) == 0x40) {
				d->rex = b;
				continue;
			}
			*op = b;
			return 0;
		}
		d->rex = 0;	/* a REX not right before the opcode is ignored */
	}
}

static uint64_t addr_reg(const struct dec *d, unsigned int n)
{
	uint64_t v = gpr(d, n);

	return d->adsize ? (uint32_t)v : v;
}

static int fetch_disp(struct dec *d, unsigned int bytes, uint64_t *disp)
{
	int ret = fetch_le(d, bytes, disp);

	*disp = sext(*disp, bytes);
	return ret;
}

/* SIB byte: fills in base + scaled index; *disp32 when there is no base. */
static int sib(struct dec *d, unsigned int mod, uint64_t *ea, bool *disp32)
{
	unsigned int index, base;
	uint8_t s;
	int ret;

	ret = fetch(d, &s);
	if (ret)
		return ret;
	index = ((s >> 3) & 7) | (d->rex & REX_X ? 8 : 0);
	base = (s & 7) | (d->rex & REX_B ? 8 : 0);
	*ea = index == 4 ? 0 : addr_reg(d, index) << (s >> 6);
	if ((s & 7) == 5 && mod == 0)
		*disp32 = true;
	else
		*ea += addr_reg(d, base);
	return 0;
}

/* ModRM with a memory operand; a register destination is not a store. */
static int modrm(struct dec *d)
{
	unsigned int mod, rm;
	bool disp32 = false;
	uint64_t disp = 0;
	uint64_t ea = 0;
	uint8_t m;
	int ret;

	ret = fetch(d, &m);
	if (ret)
		return ret;
	mod = m >> 6;
	rm = m & 7;
	d->reg = ((m >> 3) & 7) | (d->rex & REX_R ? 8 : 0);
	if (mod == 3)
		return -EOPNOTSUPP;
	if (rm == 4) {
		ret = sib(d, mod, &ea, &disp32);
		if (ret)
			return ret;
	} else if (rm == 5 && mod == 0) {
		d->riprel = true;
		disp32 = true;
	} else {
		ea = addr_reg(d, rm | (d->rex & REX_B ? 8 : 0));
	}
	if (mod == 1)
		ret = fetch_disp(d, 1, &disp);
	else if (mod == 2 || disp32)
		ret = fetch_disp(d, 4, &disp);
	d->ea = ea + disp;
	return ret;
}

static int finish(struct dec *d, struct x86_store *st, unsigned int width,
		  uint64_t value, const char *name)
{
	uint64_t ea = d->ea;

	st->len = d->pos;
	st->width = width;
	st->value = mask(value, width);
	st->name = name;
	if (d->riprel)	/* relative to the next instruction */
		ea += (uint64_t)d->uc->uc_mcontext.gregs[REG_RIP] + d->pos;
	st->ea = d->adsize ? (uint32_t)ea : ea;
	st->ea_valid = !d->fsgs;
	return 0;
}

static int op_mov_r(struct dec *d, struct x86_store *st, uint8_t op)
{
	unsigned int width = op == 0x88 ? 1 : opwidth(d);
	int ret = modrm(d);

	if (ret)
		return ret;
	return finish(d, st, width, gpr_operand(d, d->reg, width), "mov");
}

static int op_xchg(struct dec *d, struct x86_store *st, uint8_t op)
{
	unsigned int width = op == 0x86 ? 1 : opwidth(d);
	unsigned int n;
	int ret = modrm(d);

	if (ret)
		return ret;
	n = d->reg;
	st->kind = X86_STORE_XCHG;
	st->xchg_shift = width == 1 ? byte_reg(d, &n) : 0;
	st->xchg_greg = greg_of[n];
	return finish(d, st, width, gpr_operand(d, d->reg, width), "xchg");
}

static int op_mov_imm(struct dec *d, struct x86_store *st, uint8_t op)
{
	unsigned int width = op == 0xC6 ? 1 : opwidth(d);
	unsigned int isize = width == 8 ? 4 : width;
	uint64_t imm;
	int ret;

	ret = modrm(d);
	if (ret)
		return ret;
	if (d->reg & 7)		/* C6/C7 /1../7: not MOV */
		return -EOPNOTSUPP;
	ret = fetch_le(d, isize, &imm);
	if (ret)
		return ret;
	return finish(d, st, width, sext(imm, isize), "mov");
}

/* A2/A3: MOV moffs, AL/rAX with an absolute 64-bit (67: 32-bit) address. */
static int op_moffs(struct dec *d, struct x86_store *st, uint8_t op)
{
	unsigned int width = op == 0xA2 ? 1 : opwidth(d);
	int ret;

	ret = fetch_le(d, d->adsize ? 4 : 8, &d->ea);
	if (ret)
		return ret;
	return finish(d, st, width, gpr_operand(d, 0, width), "mov");
}

static int xmm_store(struct dec *d, struct x86_store *st, unsigned int width,
		     unsigned int q, const char *name)
{
	int ret = modrm(d);

	if (ret)
		return ret;
	return finish(d, st, width, xmm_q(d, d->reg, q), name);
}

/* 0F 3A 14/15/16: PEXTRB/W/D/Q m, xmm, imm8. */
static int sse_extract(struct dec *d, struct x86_store *st, uint8_t op,
		       int pfx)
{
	static const char *const names[] = { "pextrb", "pextrw", "pextrd",
					     "pextrq" };
	unsigned int width, off;
	uint64_t imm;
	int ret;

	if (pfx != PFX_66 || op < 0x14 || op > 0x16)
		return -EOPNOTSUPP;
	width = op == 0x14 ? 1 : op == 0x15 ? 2 : d->rex & REX_W ? 8 : 4;
	ret = modrm(d);
	if (!ret)
		ret = fetch_le(d, 1, &imm);
	if (ret)
		return ret;
	off = (imm & (16 / width - 1)) * width;	/* never straddles a qword */
	return finish(d, st, width, xmm_q(d, d->reg, off / 8) >> (off % 8 * 8),
		      names[op == 0x16 && width == 8 ? 3 : op - 0x14]);
}

/* SSE/AVX stores from an XMM register: @map 1 is 0F, 3 is 0F 3A. */
static int sse_store(struct dec *d, struct x86_store *st, unsigned int map,
		     uint8_t op, int pfx)
{
	bool w = d->rex & REX_W;

	if (!d->xmm)
		return -EOPNOTSUPP;
	if (map == 3)
		return sse_extract(d, st, op, pfx);
	switch (op) {
	case 0xD6:
		if (pfx == PFX_66)
			return xmm_store(d, st, 8, 0, "movq");
		break;
	case 0x7E:
		if (pfx == PFX_66)
			return xmm_store(d, st, w ? 8 : 4, 0, w ? "movq" : "movd");
		break;
	case 0x11:
		if (pfx == PFX_F3)
			return xmm_store(d, st, 4, 0, "movss");
		if (pfx == PFX_F2)
			return xmm_store(d, st, 8, 0, "movsd");
		break;
	case 0x13:
		if (pfx == PFX_NONE || pfx == PFX_66)
			return xmm_store(d, st, 8, 0, pfx ? "movlpd" : "movlps");
		break;
	case 0x17:
		if (pfx == PFX_NONE || pfx == PFX_66)
			return xmm_store(d, st, 8, 1, pfx ? "movhpd" : "movhps");
		break;
	}
	return -EOPNOTSUPP;
}

/* 0F 38 F1: MOVBE m, r stores the register byte-swapped. */
static int op_movbe(struct dec *d, struct x86_store *st, int pfx)
{
	unsigned int width = opwidth(d);
	uint64_t v;
	int ret;

	if (pfx != PFX_NONE && pfx != PFX_66)
		return -EOPNOTSUPP;	/* F2: CRC32 */
	ret = modrm(d);
	if (ret)
		return ret;
	v = __builtin_bswap64(gpr(d, d->reg)) >> (64 - 8 * width);
	return finish(d, st, width, v, "movbe");
}

static int op_0f(struct dec *d, struct x86_store *st)
{
	int pfx = mandatory_prefix(d);
	uint8_t op, op3;
	int ret;

	ret = fetch(d, &op);
	if (ret)
		return ret;
	if (pfx < 0)
		return -EOPNOTSUPP;
	if (op == 0xC3) {
		if (pfx != PFX_NONE)
			return -EOPNOTSUPP;
		ret = modrm(d);
		if (ret)
			return ret;
		return finish(d, st, d->rex & REX_W ? 8 : 4,
			      gpr(d, d->reg), "movnti");
	}
	if (op != 0x38 && op != 0x3A)
		return sse_store(d, st, 1, op, pfx);
	ret = fetch(d, &op3);
	if (ret)
		return ret;
	if (op == 0x38)
		return op3 == 0xF1 ? op_movbe(d, st, pfx) : -EOPNOTSUPP;
	return sse_store(d, st, 3, op3, pfx);
}

/* C5 (two-byte) and C4 (three-byte) VEX prefixes. */
static int op_vex(struct dec *d, struct x86_store *st, uint8_t c)
{
	uint8_t b1, b2, op;
	unsigned int map = 1;
	int ret;

	if (d->rex || d->opsize || d->rep || d->lock)
		return -EOPNOTSUPP;	/* #UD before VEX */
	ret = fetch(d, &b1);
	if (ret)
		return ret;
	d->rex = 0x40 | (b1 & 0x80 ? 0 : REX_R);
	b2 = b1;
	if (c == 0xC4) {
		d->rex |= (b1 & 0x40 ? 0 : REX_X) | (b1 & 0x20 ? 0 : REX_B);
		map = b1 & 0x1F;
		ret = fetch(d, &b2);
		if (ret)
			return ret;
		d->rex |= b2 & 0x80 ? REX_W : 0;
	}
	d->vex = true;
	ret = fetch(d, &op);
	if (ret)
		return ret;
	/* vvvv must be 1111; L must be 0 except for the scalar MOVSS/SD */
	if ((b2 & 0x78) != 0x78 || (map != 1 && map != 3))
		return -EOPNOTSUPP;
	if ((b2 & 0x04) && !(map == 1 && op == 0x11))
		return -EOPNOTSUPP;
	return sse_store(d, st, map, op, b2 & 3);
}

static int decode(struct dec *d, struct x86_store *st)
{
	uint8_t op;
	int ret;

	ret = parse_prefixes(d, &op);
	if (ret)
		return ret;
	if (d->lock && op != 0x86 && op != 0x87)
		return -EOPNOTSUPP;
	if (d->rep && op != 0x0F)	/* REP string ops, XRELEASE */
		return -EOPNOTSUPP;
	switch (op) {
	case 0x88:
	case 0x89:
		return op_mov_r(d, st, op);
	case 0x86:
	case 0x87:
		return op_xchg(d, st, op);
	case 0xC6:
	case 0xC7:
		return op_mov_imm(d, st, op);
	case 0xA2:
	case 0xA3:
		return op_moffs(d, st, op);
	case 0x0F:
		return op_0f(d, st);
	case 0xC4:
	case 0xC5:
		return op_vex(d, st, op);
	}
	return -EOPNOTSUPP;
}

int x86_decode_store_xmm(const uint8_t *insn, size_t avail,
			 const ucontext_t *uc,
			 const struct _libc_xmmreg *xmm,
			 struct x86_store *out)
{
	struct dec d = { .insn = insn, .avail = avail, .uc = uc, .xmm = xmm };

	if (!d.xmm && uc->uc_mcontext.fpregs)
		d.xmm = uc->uc_mcontext.fpregs->_xmm;
	memset(out, 0, sizeof(*out));
	out->xchg_greg = -1;
	return decode(&d, out);
}

int x86_decode_store(const uint8_t *insn, size_t avail, const ucontext_t *uc,
		     struct x86_store *out)
{
	return x86_decode_store_xmm(insn, avail, uc, NULL, out);
}

void x86_store_xchg_writeback(const struct x86_store *st, ucontext_t *uc,
			      uint64_t old)
{
	greg_t *r;
	uint64_t m;

	if (st->kind != X86_STORE_XCHG || st->xchg_greg < 0)
		return;
	r = &uc->uc_mcontext.gregs[st->xchg_greg];
	if (st->width == 8) {
		*r = (greg_t)old;
	} else if (st->width == 4) {
		*r = (greg_t)(uint32_t)old;	/* 32-bit results zero-extend */
	} else {
		m = ((1ULL << (8 * st->width)) - 1) << st->xchg_shift;
		*r = (greg_t)(((uint64_t)*r & ~m) | ((old << st->xchg_shift) & m));
	}
}
