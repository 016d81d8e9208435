// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Doorbell trap: write-protected doorbell pages and the SIGSEGV handler
 * that emulates each store (decoded by x86_store.c) and hands it to the
 * queue to the device thread (trap_queue.c); also the fixups of
 * fault-safe copies, chaining to the previous handler and the self-test.
 * See trap.h for the contract and the ASan/valgrind requirements.
 *
 * Everything the handler touches is lock-free: a fixed page table read
 * with atomics, the queue, and raw system calls, because the emulator
 * interposes write/read/mmap/close/poll and we must not re-enter it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "trap.h"
#include "x86_store.h"

#define PAGE_MASK	((uintptr_t)TRAP_PAGE_SIZE - 1)
#define SLOT_BUSY	((uintptr_t)1)	/* page slot being set up */

/* The kernel's struct sigaction, for raw rt_sigaction calls. */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

struct trap_page {
	_Atomic uintptr_t addr;		/* 0: free, SLOT_BUSY, or the page */
	_Atomic(void *) cookie;
};

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

enum { XMM_FROM_FPREGS, XMM_FROM_ENTRY };

static pthread_mutex_t trap_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic bool trap_installed;
static sigaction_fn real_sigaction;

static struct trap_page pages[TRAP_MAX_PAGES];
static _Atomic unsigned int pages_hwm;	/* slots ever used: lookup bound */

static _Atomic int xmm_source;

/*
 * Previous SIGSEGV action; replaced copy-on-write so the handler never
 * sees a half-written one (writers hold trap_lock).
 */
static struct sigaction prev_act[4];
static _Atomic unsigned int prev_idx;

/* The assembly entry point (below) and the C handler it calls. */
void mana_trap_entry(int sig, siginfo_t *si, void *ctx);
void mana_trap_sigsegv(int sig, siginfo_t *si, void *ctx,
		       const struct _libc_xmmreg *entry_xmm)
	__attribute__((visibility("hidden"), used));

/* ---- raw system calls and async-signal-safe output ----------------------- */

static long sys_write(int fd, const void *buf, size_t len)
{
	return syscall(SYS_write, fd, buf, len);
}

static void *sys_mmap(size_t len, int prot)
{
	return (void *)syscall(SYS_mmap, NULL, len, prot,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

static void sys_munmap(void *p, size_t len)
{
	syscall(SYS_munmap, p, len);
}

struct outbuf {
	char buf[384];
	size_t len;
};

static void put(struct outbuf *o, const char *s)
{
	while (*s && o->len < sizeof(o->buf) - 1)
		o->buf[o->len++] = *s++;
}

static void put_hex(struct outbuf *o, uint64_t v, int digits)
{
	static const char hex[] = "0123456789abcdef";
	char tmp[17];
	int n = 0;

	do {
		tmp[16 - ++n] = hex[v & 15];
		v >>= 4;
	} while (v || n < digits);
	tmp[16] = 0;
	put(o, tmp + 16 - n);
}

static void __attribute__((noreturn, noinline, cold))
die(const char *why, uintptr_t addr, const uint8_t *rip, size_t avail)
{
	struct outbuf o = { .len = 0 };
	size_t i;

	put(&o, "mana-emu: doorbell trap: ");
	put(&o, why);
	put(&o, ": store to 0x");
	put_hex(&o, addr, 1);
	put(&o, " (doorbell offset 0x");
	put_hex(&o, addr & PAGE_MASK, 3);
	put(&o, ") by the instruction at 0x");
	put_hex(&o, (uintptr_t)rip, 1);
	put(&o, ", bytes");
	for (i = 0; i < avail; i++) {
		put(&o, " ");
		put_hex(&o, rip[i], 2);
	}
	put(&o, "\n");
	sys_write(STDERR_FILENO, o.buf, o.len);
	abort();
}

/* ---- page table ------------------------------------------------------------ */

static struct trap_page *page_find(uintptr_t page)
{
	unsigned int n = atomic_load_explicit(&pages_hwm, memory_order_acquire);
	unsigned int i;

	for (i = 0; i < n; i++)
		if (atomic_load_explicit(&pages[i].addr,
					 memory_order_acquire) == page)
			return &pages[i];
	return NULL;
}

static int page_register(void *page, void *cookie)
{
	unsigned int i, hwm;
	uintptr_t expect;

	for (i = 0; i < TRAP_MAX_PAGES; i++) {
		expect = 0;
		if (atomic_compare_exchange_strong(&pages[i].addr, &expect,
						   SLOT_BUSY))
			break;
	}
	if (i == TRAP_MAX_PAGES)
		return -ENOMEM;
	atomic_store_explicit(&pages[i].cookie, cookie, memory_order_relaxed);
	hwm = atomic_load(&pages_hwm);
	while (hwm < i + 1 &&
	       !atomic_compare_exchange_weak(&pages_hwm, &hwm, i + 1))
		;
	atomic_store_explicit(&pages[i].addr, (uintptr_t)page,
			      memory_order_release);
	return 0;
}

static void page_unregister(void *page)
{
	struct trap_page *tp = page_find((uintptr_t)page);

	if (tp)
		atomic_store_explicit(&tp->addr, 0, memory_order_release);
}

static void *page_map(void *cookie)
{
	void *page = sys_mmap(TRAP_PAGE_SIZE, PROT_READ);
	int ret;

	if (page == MAP_FAILED)
		return NULL;
	ret = page_register(page, cookie);
	if (ret) {
		sys_munmap(page, TRAP_PAGE_SIZE);
		errno = -ret;
		return NULL;
	}
	return page;
}

void *trap_page_alloc(void *cookie)
{
	int ret;

	if (!atomic_load(&trap_installed)) {
		ret = trap_init();
		if (ret) {
			errno = -ret;
			return NULL;
		}
	}
	return page_map(cookie);
}

void trap_page_free(void *page)
{
	if (!page)
		return;
	/* unregister first: the address may be reused once unmapped */
	page_unregister(page);
	sys_munmap(page, TRAP_PAGE_SIZE);
}

/* ---- chaining to the previous handler ------------------------------------- */

static const struct sigaction *prev_get(void)
{
	return &prev_act[atomic_load_explicit(&prev_idx,
					      memory_order_acquire) & 3];
}

static void prev_set(const struct sigaction *sa)
{
	unsigned int i = (atomic_load(&prev_idx) + 1) & 3;

	prev_act[i] = *sa;
	atomic_store_explicit(&prev_idx, i, memory_order_release);
}

int trap_chain_sigaction(const struct sigaction *act, struct sigaction *oldact)
{
	pthread_mutex_lock(&trap_lock);
	if (!atomic_load(&trap_installed)) {
		pthread_mutex_unlock(&trap_lock);
		return -ENOENT;
	}
	if (oldact)
		*oldact = *prev_get();
	if (act)
		prev_set(act);
	pthread_mutex_unlock(&trap_lock);
	return 0;
}

/*
 * Default action: reset it and let the signal happen again.  A fault
 * recurs by itself when the instruction re-executes, so the core shows
 * the faulting thread at the faulting instruction; a SIGSEGV sent with
 * kill() is sent again (it is not blocked: SA_NODEFER).
 */
static void (*fatal_hook)(void);

void trap_set_fatal_hook(void (*fn)(void))
{
	fatal_hook = fn;
}

/* Fault-safe copies (core/user_copy.c): a fault at a known RIP resumes. */
static uintptr_t (*_Atomic fixup_hook)(uintptr_t rip);

void trap_set_fixup_hook(uintptr_t (*fn)(uintptr_t rip))
{
	atomic_store(&fixup_hook, fn);
}

bool trap_fixup_ready(void)
{
	return atomic_load_explicit(&trap_installed, memory_order_relaxed) &&
	       atomic_load_explicit(&fixup_hook, memory_order_relaxed);
}

static void default_action(int sig, const siginfo_t *si)
{
	struct ksigaction dfl = { .handler = SIG_DFL };

	if (fatal_hook)
		fatal_hook();

	syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask));
	if (si->si_code <= 0)
		syscall(SYS_tgkill, syscall(SYS_getpid), syscall(SYS_gettid),
			sig);
}

/* Run the previous handler as the kernel would have: with its mask. */
static void __attribute__((noinline))
chain(int sig, siginfo_t *si, ucontext_t *uc)
{
	const struct sigaction *prev = prev_get();
	uintptr_t h = (uintptr_t)prev->sa_handler;
	sigset_t set = prev->sa_mask, old;

	if (h == (uintptr_t)SIG_DFL || h == (uintptr_t)SIG_IGN) {
		default_action(sig, si);
		return;
	}
	if (!(prev->sa_flags & SA_NODEFER))
		sigaddset(&set, sig);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, &old, sizeof(uint64_t));
	if (prev->sa_flags & SA_SIGINFO)
		prev->sa_sigaction(sig, si, uc);
	else
		prev->sa_handler(sig);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(uint64_t));
}

/* ---- the handler ------------------------------------------------------------ */

/*
 * Entry point: save XMM0-15 as they are on entry before any C code runs.
 * Natively the kernel hands the handler a clean FPU and the real values
 * are in uc_mcontext.fpregs; valgrind leaves fpregs empty but does not
 * touch the registers.  The stack is realigned in case a signal frame
 * builder got the ABI alignment wrong.
 */
__asm__(
	"	.text\n"
	"	.p2align 4\n"
	"	.globl mana_trap_entry\n"
	"	.hidden mana_trap_entry\n"
	"	.type mana_trap_entry, @function\n"
	"mana_trap_entry:\n"
	"	.cfi_startproc\n"
	"	endbr64\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	mov %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	and $-16, %rsp\n"
	"	sub $256, %rsp\n"
	"	movdqa %xmm0, 0(%rsp)\n"
	"	movdqa %xmm1, 16(%rsp)\n"
	"	movdqa %xmm2, 32(%rsp)\n"
	"	movdqa %xmm3, 48(%rsp)\n"
	"	movdqa %xmm4, 64(%rsp)\n"
	"	movdqa %xmm5, 80(%rsp)\n"
	"	movdqa %xmm6, 96(%rsp)\n"
	"	movdqa %xmm7, 112(%rsp)\n"
	"	movdqa %xmm8, 128(%rsp)\n"
	"	movdqa %xmm9, 144(%rsp)\n"
	"	movdqa %xmm10, 160(%rsp)\n"
	"	movdqa %xmm11, 176(%rsp)\n"
	"	movdqa %xmm12, 192(%rsp)\n"
	"	movdqa %xmm13, 208(%rsp)\n"
	"	movdqa %xmm14, 224(%rsp)\n"
	"	movdqa %xmm15, 240(%rsp)\n"
	"	mov %rsp, %rcx\n"
	"	call mana_trap_sigsegv\n"
	"	leave\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size mana_trap_entry, .-mana_trap_entry\n");

static const struct _libc_xmmreg *
xmm_regs(const struct _libc_xmmreg *entry_xmm)
{
	if (atomic_load_explicit(&xmm_source, memory_order_relaxed) ==
	    XMM_FROM_ENTRY)
		return entry_xmm;
	return NULL;	/* the decoder reads uc_mcontext.fpregs */
}

/* An instruction may straddle a page end; read only what is mapped. */
static int decode_at(const uint8_t *rip, const ucontext_t *uc,
		     const struct _libc_xmmreg *xmm, struct x86_store *st,
		     size_t *avail)
{
	size_t n = TRAP_PAGE_SIZE - ((uintptr_t)rip & PAGE_MASK);
	int ret;

	if (n > X86_INSN_MAX)
		n = X86_INSN_MAX;
	ret = x86_decode_store_xmm(rip, n, uc, xmm, st);
	if (ret == -ENODATA && n < X86_INSN_MAX) {
		/* it was executed, so its next page is mapped */
		n = X86_INSN_MAX;
		ret = x86_decode_store_xmm(rip, n, uc, xmm, st);
	}
	*avail = n;
	return ret;
}

static uint64_t read_old(uintptr_t addr, unsigned int width)
{
	uint64_t v = 0;

	memcpy(&v, (const void *)addr, width);
	return v;
}

static void selftest_store(ucontext_t *uc, uintptr_t addr,
			   const struct _libc_xmmreg *entry_xmm);
static int selftest_cookie;

static void trap_store(void *cookie, uintptr_t addr, ucontext_t *uc,
		       const struct _libc_xmmreg *entry_xmm)
{
	const uint8_t *rip = (const uint8_t *)uc->uc_mcontext.gregs[REG_RIP];
	struct trap_event ev;
	struct x86_store st;
	size_t avail;

	if (cookie == &selftest_cookie) {
		selftest_store(uc, addr, entry_xmm);
		return;
	}
	if (decode_at(rip, uc, xmm_regs(entry_xmm), &st, &avail))
		die("unsupported instruction", addr, rip, avail);
	if (st.width != 4 && st.width != 8)
		die("doorbells take 32 or 64-bit stores", addr, rip, st.len);
	if (st.ea_valid && st.ea != addr)
		die("fault address and instruction disagree (imprecise CPU state)",
		    addr, rip, st.len);
	if ((addr & PAGE_MASK) + st.width > TRAP_PAGE_SIZE)
		die("store runs past the doorbell page", addr, rip, st.len);
	if (st.kind == X86_STORE_XCHG)
		x86_store_xchg_writeback(&st, uc, read_old(addr, st.width));
	ev.cookie = cookie;
	ev.offset = addr & PAGE_MASK;
	ev.width = st.width;
	ev.value = st.value;
	trap_queue_deliver(&ev);
	uc->uc_mcontext.gregs[REG_RIP] += st.len;
}

void mana_trap_sigsegv(int sig, siginfo_t *si, void *ctx,
		       const struct _libc_xmmreg *entry_xmm)
{
	ucontext_t *uc = ctx;
	uintptr_t addr = (uintptr_t)si->si_addr;
	uintptr_t rip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	struct trap_page *tp = NULL;
	int saved_errno = errno;
	uintptr_t (*fixup)(uintptr_t) = atomic_load_explicit(&fixup_hook,
							   memory_order_relaxed);
	uintptr_t resume;

	/* first: a fault-safe copy that hit a bad address (even a doorbell) */
	if (fixup && (resume = fixup(rip))) {
		uc->uc_mcontext.gregs[REG_RIP] = (greg_t)resume;
		return;
	}
	/* executing from a doorbell page is a genuine crash */
	if (si->si_code == SEGV_ACCERR &&
	    (rip & ~PAGE_MASK) != (addr & ~PAGE_MASK))
		tp = page_find(addr & ~PAGE_MASK);
	if (tp)
		trap_store(atomic_load_explicit(&tp->cookie,
						memory_order_relaxed),
			   addr, uc, entry_xmm);
	else
		chain(sig, si, uc);
	errno = saved_errno;
}

/* ---- self-test --------------------------------------------------------------- */

/*
 * Probes with known stores, each with the address of its store and of
 * the instruction after it.  gpr: a register written right after the
 * store (stale under valgrind's default register precision, and the
 * block-start RIP of callgrind's); call: the store is the callee's first
 * instruction (valgrind's call chasing reports the call's RIP); xmm: the
 * XMM source.
 */
void mana_trap_probe_gpr(void *page, uint64_t unused);
void mana_trap_probe_call(void *page, uint64_t unused);
void mana_trap_probe_xmm(void *page, uint64_t value);

/*
 * Called through a volatile pointer so that each probe starts a
 * translation of its own under valgrind: chased into its caller, a store
 * may happen to be precise in one context and not in another.
 */
static void probe_run(void (*fn)(void *, uint64_t), void *page,
		      uint64_t value)
{
	void (*volatile call)(void *, uint64_t) = fn;

	call(page, value);
	atomic_signal_fence(memory_order_seq_cst);	/* the handler wrote probe */
}
extern const uint8_t mana_trap_probe_gpr_store[], mana_trap_probe_gpr_resume[];
extern const uint8_t mana_trap_probe_call_store[], mana_trap_probe_call_resume[];
extern const uint8_t mana_trap_probe_xmm_store[], mana_trap_probe_xmm_resume[];

#define PROBE_GPR_VALUE  0x5a5aa5a512345678ULL
#define PROBE_CALL_VALUE 0x6b6bb6b687654321ULL

#define PROBE_SYM(name) \
	"	.globl " name "\n	.hidden " name "\n" name ":\n"

__asm__(
	"	.text\n"
	"	.p2align 4\n"
	PROBE_SYM("mana_trap_probe_gpr")
	"	endbr64\n"
	"	movabs $0x5a5aa5a512345678, %rax\n"
	PROBE_SYM("mana_trap_probe_gpr_store")
	"	mov %rax, (%rdi)\n"
	PROBE_SYM("mana_trap_probe_gpr_resume")
	"	mov $0x77, %eax\n"
	"	ret\n"
	PROBE_SYM("mana_trap_probe_call")
	"	endbr64\n"
	"	movabs $0x6b6bb6b687654321, %rsi\n"
	"	call mana_trap_probe_call_store\n"
	"	ret\n"
	PROBE_SYM("mana_trap_probe_call_store")
	"	mov %rsi, (%rdi)\n"
	PROBE_SYM("mana_trap_probe_call_resume")
	"	ret\n"
	PROBE_SYM("mana_trap_probe_xmm")
	"	endbr64\n"
	"	movq %rsi, %xmm1\n"
	PROBE_SYM("mana_trap_probe_xmm_store")
	"	movq %xmm1, (%rdi)\n"
	PROBE_SYM("mana_trap_probe_xmm_resume")
	"	pxor %xmm1, %xmm1\n"
	"	ret\n");

static struct {
	const uint8_t *store_at;
	const uint8_t *resume;
	uint64_t want;
	bool rip_ok;
	bool fpregs_ok;
	bool entry_ok;
} probe;

static bool probe_decode(ucontext_t *uc, uintptr_t addr,
			 const struct _libc_xmmreg *xmm)
{
	const uint8_t *rip = (const uint8_t *)uc->uc_mcontext.gregs[REG_RIP];
	struct x86_store st;
	size_t avail;

	return !decode_at(rip, uc, xmm, &st, &avail) && st.ea == addr &&
	       st.value == probe.want;
}

static void selftest_store(ucontext_t *uc, uintptr_t addr,
			   const struct _libc_xmmreg *entry_xmm)
{
	probe.rip_ok = (const uint8_t *)uc->uc_mcontext.gregs[REG_RIP] ==
		       probe.store_at;
	probe.fpregs_ok = probe.rip_ok && probe_decode(uc, addr, NULL);
	probe.entry_ok = probe.rip_ok && probe_decode(uc, addr, entry_xmm);
	/* resume where the probe expects it even if the state was wrong */
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)probe.resume;
}

static void probe_setup(const uint8_t *store_at, const uint8_t *resume,
			uint64_t want)
{
	probe.store_at = store_at;
	probe.resume = resume;
	probe.want = want;
	probe.rip_ok = probe.fpregs_ok = probe.entry_ok = false;
}

static const char valgrind_hint[] =
	"mana-emu: under valgrind, run with --vex-guest-chase=no "
	"--px-default=allregs-at-mem-access "
	"--px-file-backed=allregs-at-mem-access\n";

static int selftest_fail(const char *what)
{
	fprintf(stderr, "mana-emu: doorbell trap self-test failed: %s: the "
		"SIGSEGV handler does not see the precise state of a "
		"faulting store\n%s", what, valgrind_hint);
	return -ENOTSUP;
}

/* Two XMM probes with different values, so stale data cannot pass. */
static int selftest_xmm(void *page)
{
	static const uint64_t want[2] = { 0x0123456789abcdefULL,
					  0xfedcba9876543210ULL };
	bool fpregs = true, entry = true;
	int i;

	for (i = 0; i < 2; i++) {
		probe_setup(mana_trap_probe_xmm_store,
			    mana_trap_probe_xmm_resume, want[i]);
		probe_run(mana_trap_probe_xmm, page, want[i]);
		fpregs = fpregs && probe.fpregs_ok;
		entry = entry && probe.entry_ok;
	}
	if (fpregs)
		atomic_store(&xmm_source, XMM_FROM_FPREGS);
	else if (entry)
		atomic_store(&xmm_source, XMM_FROM_ENTRY);
	else
		return selftest_fail("XMM registers");
	return 0;
}

static int selftest(void)
{
	void *page = page_map(&selftest_cookie);
	int ret = 0;

	if (!page)
		return -errno;
	probe_setup(mana_trap_probe_gpr_store, mana_trap_probe_gpr_resume,
		    PROBE_GPR_VALUE);
	probe_run(mana_trap_probe_gpr, page, 0);
	if (!probe.fpregs_ok)
		ret = selftest_fail("register store");
	probe_setup(mana_trap_probe_call_store, mana_trap_probe_call_resume,
		    PROBE_CALL_VALUE);
	probe_run(mana_trap_probe_call, page, 0);
	if (!ret && !probe.fpregs_ok)
		ret = selftest_fail("store after a call");
	if (!ret)
		ret = selftest_xmm(page);
	trap_page_free(page);
	return ret;
}

/* ---- setup ----------------------------------------------------------------- */

/*
 * The libc sigaction after us: the emulator may interpose sigaction
 * (see trap_chain_sigaction) and must not see its own trap.
 */
static sigaction_fn find_sigaction(void)
{
	return (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
}

/*
 * Block asynchronous signals while handling a store: a thread's events
 * then keep its program order; faults stay deliverable (SA_NODEFER).
 */
static void handler_mask(sigset_t *set)
{
	static const int sync_sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE,
					 SIGTRAP, SIGSYS };
	unsigned int i;

	sigfillset(set);
	for (i = 0; i < sizeof(sync_sigs) / sizeof(sync_sigs[0]); i++)
		sigdelset(set, sync_sigs[i]);
}

static int install(void)
{
	struct sigaction sa = {
		.sa_sigaction = mana_trap_entry,
		.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESTART,
	};
	struct ksigaction cur;
	struct sigaction old;

	real_sigaction = find_sigaction();
	if (!real_sigaction) {
		fprintf(stderr, "mana-emu: no libc sigaction after the "
			"emulator (dlsym RTLD_NEXT)\n");
		return -ENOTSUP;
	}
	handler_mask(&sa.sa_mask);
	if (real_sigaction(SIGSEGV, &sa, &old))
		return -errno;
	prev_act[0] = old;
	atomic_store(&prev_idx, 0);
	/*
	 * ASan's interceptor drops the request when allow_user_segv_handler=0.
	 * TSan's puts its own handler in the kernel, which calls ours at once
	 * for a synchronous signal such as this one.
	 */
	if (syscall(SYS_rt_sigaction, SIGSEGV, NULL, &cur, sizeof(cur.mask)) ||
	    (cur.handler != (void *)mana_trap_entry &&
	     !dlsym(RTLD_DEFAULT, "__tsan_init"))) {
		fprintf(stderr, "mana-emu: cannot install the doorbell SIGSEGV "
			"handler (with ASan, set ASAN_OPTIONS=allow_user_segv_handler=1)\n");
		return -ENOTSUP;
	}
	return 0;
}

static void uninstall(void)
{
	real_sigaction(SIGSEGV, prev_get(), NULL);
}

static int do_init(void)
{
	int ret;

	ret = trap_queue_create();
	if (ret)
		return ret;
	ret = install();
	if (ret)
		goto err_queue;
	ret = selftest();
	if (ret)
		goto err_uninstall;
	atomic_store(&trap_installed, true);
	return 0;

err_uninstall:
	uninstall();
err_queue:
	trap_queue_destroy();
	return ret;
}

int trap_init(void)
{
	int ret = 0;

	pthread_mutex_lock(&trap_lock);
	if (!atomic_load(&trap_installed))
		ret = do_init();
	pthread_mutex_unlock(&trap_lock);
	return ret;
}

void trap_fini(void)
{
	pthread_mutex_lock(&trap_lock);
	if (atomic_load(&trap_installed)) {
		uninstall();
		atomic_store(&trap_installed, false);
		trap_queue_destroy();
	}
	pthread_mutex_unlock(&trap_lock);
}
