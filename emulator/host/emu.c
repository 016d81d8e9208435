/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libmana-emu.so core: start-up (options, sysfs tree, device), the fd
 * table, user memory access and logging.
 */
#include "emulator/core/emu.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "emulator/device/device.h"
#include "emulator/kernel/kernel.h"
#include "emulator/mana_emu.h"
#include "sysfs.h"
#include "emulator/device/trap.h"

struct emu_state emu = { .lock = PTHREAD_MUTEX_INITIALIZER };

uint8_t emu_fd_kinds[EMU_MAX_FDS];
static void *fd_objs[EMU_MAX_FDS];

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
bool emu_started;
static pid_t self_pid;		/* getpid() of this process, for pvm_copy() */

static void emu_vlog(const char *fmt, va_list ap)
	__attribute__((format(printf, 1, 0)));

static void __attribute__((noreturn, format(printf, 1, 2)))
emu_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emu_vlog(fmt, ap);
	va_end(ap);
	_exit(2);	/* the status of a bad launcher option */
}

static void load_options(void)
{
	const char *env = getenv(MANA_EMU_ENV_OPTIONS);
	char err[256];

	mana_emu_options_init(&emu.opts);
	if (env && mana_emu_options_parse_string(&emu.opts, env, err,
						 sizeof(err)))
		emu_die("%s", err);
	if (emu.opts.help)
		emu_log("%s: --help ignored (launcher only)",
			MANA_EMU_ENV_OPTIONS);
}

/*
 * The launcher made the tree (MANA_EMU_SYSFS); otherwise this is the
 * environment form and we make our own.  libibverbs reads SYSFS_PATH
 * lazily, so setting it here is early enough.
 */
static void setup_sysfs(void)
{
	const char *root = getenv(MANA_EMU_ENV_SYSFS);
	char err[256], pci[sizeof(emu.sysfs_root) + 32];

	if (root && *root) {
		snprintf(emu.sysfs_root, sizeof(emu.sysfs_root), "%s", root);
		return;
	}
	if (mana_emu_sysfs_create(&emu.opts, emu.sysfs_root, err, sizeof(err)))
		emu_die("%s", err);
	emu.own_sysfs = true;
	emu.sysfs_owner = getpid();
	snprintf(pci, sizeof(pci), "%s/bus/pci/devices", emu.sysfs_root);
	/* Children we exec reuse this tree instead of making their own. */
	if (setenv("SYSFS_PATH", emu.sysfs_root, 1) ||
	    setenv("SYSFS_PCI_DEVICES", pci, 1) ||
	    setenv(MANA_EMU_ENV_SYSFS, emu.sysfs_root, 1))
		emu_die("setenv: %s", strerror(errno));
	if (emu_verbose())
		emu_log("sysfs tree %s (environment form)", emu.sysfs_root);
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&emu.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&emu.lock);
}

static void fork_child(void)
{
	self_pid = getpid();
	emu_device_fork_child();
	pthread_mutex_unlock(&emu.lock);
}

/*
 * MANA_EMU_REPORT_FD="FD:INODE", set by the launcher: a pipe to report
 * failures on.  The inode tells whether the program has reused the fd.
 */
static int report_fd = -1;
static ino_t report_ino;

static void setup_report_fd(void)
{
	const char *env = getenv(MANA_EMU_ENV_REPORT_FD);
	unsigned long long ino;
	int fd;

	if (env && sscanf(env, "%d:%llu", &fd, &ino) == 2 && fd >= 0) {
		report_fd = fd;
		report_ino = (ino_t)ino;
	}
}

void emu_report_failure(char code)
{
	struct stat st;

	if (report_fd < 0 || fstat(report_fd, &st) || !S_ISFIFO(st.st_mode) ||
	    st.st_ino != report_ino)
		return;
	if (write(report_fd, &code, 1) != 1)
		return;
}

static void do_init(void)
{
	self_pid = getpid();
	load_options();
	setup_sysfs();
	setup_report_fd();
	emu_kernel_init(&emu.opts);
	emu_exit_signals_setup();
	trap_set_fatal_hook(emu_device_dump_on_signal);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	__atomic_store_n(&emu_started, true, __ATOMIC_RELEASE);
}

void emu_init(void)
{
	pthread_once(&init_once, do_init);
}

static void __attribute__((constructor)) emu_constructor(void)
{
	emu_init();
}

static void __attribute__((destructor)) emu_destructor(void)
{
	emu_device_shutdown();
	/* Forked children share the tree; only its creator removes it. */
	if (emu.own_sysfs && emu.sysfs_owner == getpid())
		mana_emu_sysfs_remove(emu.sysfs_root);
}

/* ---- fd table ------------------------------------------------------------ */

int emu_fd_register(int fd, enum emu_fd_kind kind, void *obj)
{
	if (fd < 0 || fd >= EMU_MAX_FDS)
		return -EMFILE;
	fd_objs[fd] = obj;
	__atomic_store_n(&emu_fd_kinds[fd], kind, __ATOMIC_RELEASE);
	return 0;
}

void emu_fd_unregister(int fd)
{
	if (fd < 0 || fd >= EMU_MAX_FDS)
		return;
	__atomic_store_n(&emu_fd_kinds[fd], EMU_FD_NONE, __ATOMIC_RELEASE);
	fd_objs[fd] = NULL;
}

void *emu_fd_obj(int fd, enum emu_fd_kind kind)
{
	if (emu_fd_kind(fd) != kind)
		return NULL;
	return fd_objs[fd];
}

/* ---- user memory ------------------------------------------------------- */

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
 * return path (trap_set_fixup_hook), with the count of bytes not copied
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

static uintptr_t ucopy_fixup(uintptr_t rip)
{
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
 * Direct copies once the trap (and so the fixup) is in place.  The trap
 * is only removed by trap_fini() (unit tests, which do not copy).
 */
static _Atomic bool ucopy_ready;

static bool ucopy_setup(void)
{
	static _Atomic bool hooked;

	if (!atomic_load_explicit(&hooked, memory_order_relaxed)) {
		trap_set_fixup_hook(ucopy_fixup);
		atomic_store(&hooked, true);
	}
	if (!trap_fixup_ready())
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

/* ---- logging ------------------------------------------------------------- */

/* One line to stderr, "mana-emu: " first; errno is left as it was. */
static void emu_vlog(const char *fmt, va_list ap)
{
	int saved = errno;
	char msg[1024];
	size_t n;

	n = snprintf(msg, sizeof(msg), "mana-emu: ");
	vsnprintf(msg + n, sizeof(msg) - n - 1, fmt, ap);
	n = strlen(msg);
	msg[n++] = '\n';
	if (write(STDERR_FILENO, msg, n) < 0)
		errno = saved;	/* nothing to do if stderr fails */
	errno = saved;
}

void emu_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emu_vlog(fmt, ap);
	va_end(ap);
}

const char *emu_errname(int err)
{
	const char *name;

	if (!err)
		return "0";
	name = strerrorname_np(err < 0 ? -err : err);
	return name ? name : "E?";
}

/* ---- test API ----------------------------------------------------------- */

EMU_EXPORT int mana_emu_object_counts(struct mana_emu_counts *out)
{
	if (!out) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&emu.lock);
	emu_fill_counts(out);
	pthread_mutex_unlock(&emu.lock);
	return 0;
}
