/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libmana-emu.so core: start-up (options, sysfs tree, device), the fd
 * table, user memory access and logging.
 */
#include "emulator/core/emu.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
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

size_t emu_copy_user_iov(const struct iovec *local,
			 const struct iovec *remote, unsigned int n,
			 bool to_user)
{
	size_t total = 0, done = 0;
	int saved = errno;
	unsigned int i;
	ssize_t ret;
	pid_t pid;

	for (i = 0; i < n; i++) {
		if (!user_ok(remote[i].iov_base, remote[i].iov_len))
			n = i;	/* a bad address ends the transfer there */
		else
			total += local[i].iov_len;
	}
	if (!total || __atomic_load_n(&pvm_unusable, __ATOMIC_RELAXED))
		goto plain;
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
