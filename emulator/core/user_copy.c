// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copies to and from the application's memory with the kernel's
 * copy_{from,to}_user semantics (a bad address is -EFAULT, never a
 * crash): direct string moves whose faults the doorbell trap's SIGSEGV
 * handler resumes (emu_user_copy_fixup), else process_vm_readv/writev on
 * ourselves, else plain copies where that system call is filtered.
 */
#include "emu.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static pid_t self_pid;		/* getpid() of this process, for pvm_copy() */

/*
 * process_vm_{read,write}v on ourselves turns a bad pointer into EFAULT
 * instead of SIGSEGV, as copy_{from,to}_user would.  Where the syscall is
 * filtered (some containers) fall back to plain copies.
 */
static bool pvm_unusable;

#ifdef MANA_EMU_FUZZ
/*
 * Fuzzing build (fuzz/): application memory is only the harness's user
 * arena, so a fuzzed pointer that happens to name the fuzzer's own heap
 * gets EFAULT instead of a silent write there.
 */
bool emu_fuzz_user_ok(const void *p, size_t len);
#define user_ok(p, len) emu_fuzz_user_ok(p, len)
#else
#define user_ok(p, len) true
#endif

static int pvm_copy(void *dst, const void *src, size_t len, bool to_user)
{
	struct iovec local, remote;
	ssize_t n;
	pid_t pid;

	if (!len)
		return 0;
	if (!user_ok(to_user ? dst : src, len))
		return -EFAULT;
	if (__atomic_load_n(&pvm_unusable, __ATOMIC_RELAXED))
		goto plain;
	local.iov_base = to_user ? (void *)src : dst;
	local.iov_len = len;
	remote.iov_base = to_user ? dst : (void *)src;
	remote.iov_len = len;
	/* the pid is cached: a syscall less on every device access */
	pid = self_pid ? self_pid : getpid();
	if (to_user)
		n = process_vm_writev(pid, &local, 1, &remote, 1, 0);
	else
		n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
		__atomic_store_n(&pvm_unusable, true, __ATOMIC_RELAXED);
		goto plain;
	}
	return -EFAULT;
plain:
	if (!dst || !src)
		return -EFAULT;
	memcpy(dst, src, len);
	return 0;
}

/*
 * Fault-safe copy without a system call: string moves whose faults the
 * doorbell trap's SIGSEGV handler turns into a jump to the matching
 * return path (emu_user_copy_fixup), with the count of bytes not copied
 * in %rax, as the kernel's exception table does for copy_to_user.  A
 * string move leaves %rcx/%rsi/%rdi at the faulting element, so the
 * count is exact to the element.  Not instrumented (asm): the sanitizers
 * never see the application's memory through it.
 */
size_t mana_emu_ucopy(void *dst, const void *src, size_t len);
extern const char mana_emu_ucopy_q[], mana_emu_ucopy_b[];
extern const char mana_emu_ucopy_fq[], mana_emu_ucopy_fb[];

__asm__(
	"	.text\n"
	"	.p2align 4\n"
	"	.globl mana_emu_ucopy\n"
	"	.hidden mana_emu_ucopy\n"
	"	.type mana_emu_ucopy, @function\n"
	"mana_emu_ucopy:\n"
	"	.cfi_startproc\n"
	"	endbr64\n"
	"	mov %rdx, %rcx\n"
	"	shr $3, %rcx\n"
	"	and $7, %edx\n"
	"	.globl mana_emu_ucopy_q\n"
	"	.hidden mana_emu_ucopy_q\n"
	"mana_emu_ucopy_q:\n"
	"	rep movsq\n"
	"	mov %rdx, %rcx\n"
	"	.globl mana_emu_ucopy_b\n"
	"	.hidden mana_emu_ucopy_b\n"
	"mana_emu_ucopy_b:\n"
	"	rep movsb\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	"	.globl mana_emu_ucopy_fq\n"
	"	.hidden mana_emu_ucopy_fq\n"
	"mana_emu_ucopy_fq:\n"
	"	lea (%rdx,%rcx,8), %rax\n"
	"	ret\n"
	"	.globl mana_emu_ucopy_fb\n"
	"	.hidden mana_emu_ucopy_fb\n"
	"mana_emu_ucopy_fb:\n"
	"	mov %rcx, %rax\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size mana_emu_ucopy, .-mana_emu_ucopy\n");

/*
 * A 64-byte completion entry into application memory (@dst 8-byte
 * aligned), fault-safe like mana_emu_ucopy: eight plain 8-byte moves in
 * order, the last one the word that holds the owner bits.  x86 keeps
 * plain stores in program order (a string move's fast mode does not
 * promise that between its own stores), so the consumer that sees the
 * owner bits sees the data.  0, or nonzero if @dst faulted (the entry is
 * then partly written; the owner word is written last, so it never looks
 * valid).
 */
size_t mana_emu_ucqe(void *dst, const void *src);
extern const char mana_emu_ucqe_st[], mana_emu_ucqe_end[], mana_emu_ucqe_f[];

__asm__(
	"	.text\n"
	"	.p2align 4\n"
	"	.globl mana_emu_ucqe\n"
	"	.hidden mana_emu_ucqe\n"
	"	.type mana_emu_ucqe, @function\n"
	"mana_emu_ucqe:\n"
	"	.cfi_startproc\n"
	"	endbr64\n"
	"	mov (%rsi), %rax\n"
	"	mov 8(%rsi), %rcx\n"
	"	mov 16(%rsi), %rdx\n"
	"	mov 24(%rsi), %r8\n"
	"	mov 32(%rsi), %r9\n"
	"	mov 40(%rsi), %r10\n"
	"	mov 48(%rsi), %r11\n"
	"	mov 56(%rsi), %rsi\n"
	"	.globl mana_emu_ucqe_st\n"
	"	.hidden mana_emu_ucqe_st\n"
	"mana_emu_ucqe_st:\n"
	"	mov %rax, (%rdi)\n"
	"	mov %rcx, 8(%rdi)\n"
	"	mov %rdx, 16(%rdi)\n"
	"	mov %r8, 24(%rdi)\n"
	"	mov %r9, 32(%rdi)\n"
	"	mov %r10, 40(%rdi)\n"
	"	mov %r11, 48(%rdi)\n"
	"	mov %rsi, 56(%rdi)\n"
	"	.globl mana_emu_ucqe_end\n"
	"	.hidden mana_emu_ucqe_end\n"
	"mana_emu_ucqe_end:\n"
	"	xor %eax, %eax\n"
	"	ret\n"
	"	.globl mana_emu_ucqe_f\n"
	"	.hidden mana_emu_ucqe_f\n"
	"mana_emu_ucqe_f:\n"
	"	mov $64, %eax\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size mana_emu_ucqe, .-mana_emu_ucqe\n");

/*
 * The same for a CQE whose words 3-6 are zero (the device's usual RX and
 * TX completions): the four others come in registers, so nothing is built
 * in memory first.  Words in order, the owner word (@w7) last.
 */
size_t mana_emu_ucqe4(void *dst, uint64_t w0, uint64_t w1, uint64_t w2,
		      uint64_t w7);
extern const char mana_emu_ucqe4_st[], mana_emu_ucqe4_end[];

__asm__(
	"	.text\n"
	"	.p2align 4\n"
	"	.globl mana_emu_ucqe4\n"
	"	.hidden mana_emu_ucqe4\n"
	"	.type mana_emu_ucqe4, @function\n"
	"mana_emu_ucqe4:\n"
	"	.cfi_startproc\n"
	"	endbr64\n"
	"	xor %eax, %eax\n"
	"	.globl mana_emu_ucqe4_st\n"
	"	.hidden mana_emu_ucqe4_st\n"
	"mana_emu_ucqe4_st:\n"
	"	mov %rsi, (%rdi)\n"
	"	mov %rdx, 8(%rdi)\n"
	"	mov %rcx, 16(%rdi)\n"
	"	mov %rax, 24(%rdi)\n"
	"	mov %rax, 32(%rdi)\n"
	"	mov %rax, 40(%rdi)\n"
	"	mov %rax, 48(%rdi)\n"
	"	mov %r8, 56(%rdi)\n"
	"	.globl mana_emu_ucqe4_end\n"
	"	.hidden mana_emu_ucqe4_end\n"
	"mana_emu_ucqe4_end:\n"
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size mana_emu_ucqe4, .-mana_emu_ucqe4\n");

uintptr_t emu_user_copy_fixup(uintptr_t rip)
{
	if (rip >= (uintptr_t)mana_emu_ucqe4_st &&
	    rip < (uintptr_t)mana_emu_ucqe4_end)
		return (uintptr_t)mana_emu_ucqe_f;
	/* only the stores of mana_emu_ucqe touch application memory */
	if (rip >= (uintptr_t)mana_emu_ucqe_st &&
	    rip < (uintptr_t)mana_emu_ucqe_end)
		return (uintptr_t)mana_emu_ucqe_f;
	if (rip == (uintptr_t)mana_emu_ucopy_q)
		return (uintptr_t)mana_emu_ucopy_fq;
	if (rip == (uintptr_t)mana_emu_ucopy_b)
		return (uintptr_t)mana_emu_ucopy_fb;
	return 0;
}

/* Counters for the bench and --stats: system calls and bad addresses. */
static _Atomic uint64_t ucopy_syscalls, ucopy_faults;

void emu_user_copy_counters(uint64_t *syscalls, uint64_t *faults)
{
	*syscalls = atomic_load(&ucopy_syscalls);
	*faults = atomic_load(&ucopy_faults);
}

/*
 * Direct copies once the handler that resumes them is in place: whoever
 * owns the SIGSEGV handler says so through @fixup_ready (host/init.c
 * passes the doorbell trap's).  The trap is only removed by trap_fini()
 * (unit tests, which do not copy).
 */
static bool (*_Atomic fixup_ready)(void);
static _Atomic bool ucopy_ready;

void emu_user_copy_init(bool (*ready)(void))
{
	self_pid = getpid();
	atomic_store(&fixup_ready, ready);
}

static bool ucopy_setup(void)
{
	bool (*ready)(void) = atomic_load_explicit(&fixup_ready,
						   memory_order_relaxed);

	if (!ready || !ready())
		return false;
	atomic_store(&ucopy_ready, true);
	return true;
}

static inline bool ucopy_usable(void)
{
	return atomic_load_explicit(&ucopy_ready, memory_order_relaxed) ||
	       ucopy_setup();
}

static size_t ucopy_iov(const struct iovec *local, const struct iovec *remote,
			unsigned int n, bool to_user)
{
	size_t done = 0, left;
	unsigned int i;

	for (i = 0; i < n; i++) {
		size_t len = local[i].iov_len;

		left = to_user ?
			mana_emu_ucopy(remote[i].iov_base, local[i].iov_base, len) :
			mana_emu_ucopy(local[i].iov_base, remote[i].iov_base, len);
		done += len - left;
		if (left) {
			atomic_fetch_add(&ucopy_faults, 1);
			break;
		}
	}
	return done;
}

size_t emu_copy_user_one(void *local, void *remote, size_t len, bool to_user)
{
	struct iovec l = { local, len }, r = { remote, len };
	size_t left;

	if (!user_ok(remote, len) || !ucopy_usable())
		return emu_copy_user_iov(&l, &r, 1, to_user);
	left = to_user ? mana_emu_ucopy(remote, local, len) :
			 mana_emu_ucopy(local, remote, len);
	if (left)
		atomic_fetch_add(&ucopy_faults, 1);
	return len - left;
}

size_t emu_copy_user_iov(const struct iovec *local,
			 const struct iovec *remote, unsigned int n,
			 bool to_user)
{
	size_t total = 0, done = 0;
	unsigned int i;
	ssize_t ret;
	int saved;
	pid_t pid;

	for (i = 0; i < n; i++) {
		if (!user_ok(remote[i].iov_base, remote[i].iov_len))
			n = i;	/* a bad address ends the transfer there */
		else
			total += local[i].iov_len;
	}
	/* the common case first: no errno to save, no system call */
	if (ucopy_usable())
		return ucopy_iov(local, remote, n, to_user);
	saved = errno;
	if (!total || __atomic_load_n(&pvm_unusable, __ATOMIC_RELAXED))
		goto plain;
	atomic_fetch_add_explicit(&ucopy_syscalls, 1, memory_order_relaxed);
	pid = self_pid ? self_pid : getpid();
	ret = to_user ? process_vm_writev(pid, local, n, remote, n, 0) :
			process_vm_readv(pid, local, n, remote, n, 0);
	if (ret >= 0 || (errno != ENOSYS && errno != EPERM)) {
		/* a bad address ends the transfer where it is */
		errno = saved;
		return ret < 0 ? 0 : (size_t)ret;
	}
	__atomic_store_n(&pvm_unusable, true, __ATOMIC_RELAXED);
plain:
	for (i = 0; i < n; i++) {
		if (!local[i].iov_base || !remote[i].iov_base)
			break;
		if (to_user)
			memcpy(remote[i].iov_base, local[i].iov_base,
			       local[i].iov_len);
		else
			memcpy(local[i].iov_base, remote[i].iov_base,
			       local[i].iov_len);
		done += local[i].iov_len;
	}
	errno = saved;
	return done;
}

int emu_copy_from_user(void *dst, const void *src, size_t len)
{
	int saved = errno, ret = pvm_copy(dst, src, len, false);

	errno = saved;
	return ret;
}

int emu_copy_to_user(void *dst, const void *src, size_t len)
{
	int saved = errno, ret = pvm_copy(dst, src, len, true);

	errno = saved;
	return ret;
}

static const char zero_page[EMU_PAGE_SIZE];

int emu_clear_user(void *dst, size_t len)
{
	while (len) {
		size_t n = len < sizeof(zero_page) ? len : sizeof(zero_page);

		if (emu_copy_to_user(dst, zero_page, n))
			return -EFAULT;
		dst = (char *)dst + n;
		len -= n;
	}
	return 0;
}

int emu_user_is_cleared(const void *src, size_t len)
{
	char buf[512];

	while (len) {
		size_t n = len < sizeof(buf) ? len : sizeof(buf);

		if (emu_copy_from_user(buf, src, n))
			return -EFAULT;
		if (memcmp(buf, zero_page, n))
			return 0;
		src = (const char *)src + n;
		len -= n;
	}
	return 1;
}
