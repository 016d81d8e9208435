/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The interposers that take a path: open() and its fortified forms, the
 * stat family (fstat() of a uverbs fd included) and access() answer for
 * the char device /dev/infiniband/uverbsN; these, fopen(), opendir(),
 * readlink(), realpath() and chdir() also resolve the emulated devices'
 * /sys paths into the generated tree.  The fd calls are in interpose.c;
 * both fall through to libc for everything else.
 */
#ifdef _FORTIFY_SOURCE
#undef _FORTIFY_SOURCE	/* we define the functions fortify wraps */
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>


#include "emulator/core/emu.h"
#include "emulator/core/emu_defs.h"
#include "emulator/core/ibdev.h"
#include "emulator/kernel/kernel.h"
#include "emulator/kernel/rdma_cm.h"
#include "emulator/lib/libc.h"

#include "init.h"
#include "interpose.h"

/* Fortified variants are not declared without _FORTIFY_SOURCE. */
ssize_t __readlink_chk(const char *path, char *buf, size_t len, size_t buflen);
ssize_t __readlinkat_chk(int dirfd, const char *path, char *buf, size_t len,
			 size_t buflen);
char *__realpath_chk(const char *path, char *resolved, size_t resolvedlen);
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

/* ---- /sys: the emulated devices' part of sysfs ----------------------------- */

/*
 * libibverbs reads sysfs under SYSFS_PATH (the tree's root); programs and
 * their children (rdma-core's tests run cat on a pkey) name /sys.  These
 * resolve into the tree: the IB classes whole, the emulated netdevs and
 * PCI functions by name, mana's PCI driver.  Everything else under /sys
 * stays the host's.  The tree's symlinks are relative, so what a path
 * reaches through them stays in the tree.
 */
static const char *const sys_whole[] = {
	"class/infiniband", "class/infiniband_verbs", "bus/pci/drivers/mana",
	"class/misc/rdma_cm",
};
static const char *const sys_named[] = { "class/net/", "bus/pci/devices/" };

static bool sys_prefix(const char *rest, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(rest, prefix, n) && (!rest[n] || rest[n] == '/');
}

/* The tree's path for @path into @buf (PATH_MAX), or NULL if not ours. */
static const char *sys_path(const char *path, char *buf)
{
	const char *rest, *name;
	struct stat st;
	unsigned int i;
	size_t n;
	int len;

	if (!path || strncmp(path, "/sys/", 5))
		return NULL;
	rest = path + 5;
	for (i = 0; i < sizeof(sys_whole) / sizeof(sys_whole[0]); i++)
		if (sys_prefix(rest, sys_whole[i]))
			goto ours;
	for (i = 0; i < sizeof(sys_named) / sizeof(sys_named[0]); i++) {
		n = strlen(sys_named[i]);
		if (strncmp(rest, sys_named[i], n) || !rest[n] || rest[n] == '/')
			continue;
		/* only names the tree has: the host's other netdevs stay */
		name = strchrnul(rest + n, '/');
		emu_init();
		len = snprintf(buf, PATH_MAX, "%s/%.*s", emu.sysfs_root,
			       (int)(name - rest), rest);
		if (len > 0 && len < PATH_MAX && emu.sysfs_root[0] &&
		    !REAL(lstat)(buf, &st))
			goto ours;
		return NULL;
	}
	return NULL;
ours:
	emu_init();
	if (!emu.sysfs_root[0])
		return NULL;
	len = snprintf(buf, PATH_MAX, "%s/%s", emu.sysfs_root, rest);
	return len > 0 && len < PATH_MAX ? buf : NULL;
}

/* The path libc is given: @path, or its place in the tree (in @buf). */
#define SYS(path, buf) (sys_path((path), (buf)) ?: (path))

/* ---- the char device: /dev/infiniband/uverbsN ----------------------------- */

/*
 * /dev/infiniband/rdma_cm (the ucma misc device) goes through the same
 * calls as the uverbs nodes under this pseudo device number.
 */
#define CM_DEVNUM 0x1000

/* Device number of an emulated uverbs path (or CM_DEVNUM), or -1. */
static int uverbs_devnum(const char *path)
{
	static const char prefix[] = EMU_CDEV_DIR "uverbs";
	unsigned long n;
	char *end;

	if (path && !strcmp(path, EMU_CDEV_DIR "rdma_cm")) {
		emu_init();
		return mana_emu_has_uverbs(&emu.opts) ? CM_DEVNUM : -1;
	}
	if (!path || strncmp(path, prefix, sizeof(prefix) - 1))
		return -1;
	path += sizeof(prefix) - 1;
	if (*path < '0' || *path > '9')
		return -1;
	n = strtoul(path, &end, 10);
	if (*end || n >= EMU_MAX_IBDEVS || (path[0] == '0' && path[1]))
		return -1;
	/* without mana_ib or ib_uverbs there is no node: the host answers */
	emu_init();
	if (n >= emu_ibdev_count(&emu.opts))
		return -1;
	if (!mana_emu_has_uverbs(&emu.opts))
		return -1;
	return n;
}

/*
 * The node is root's, with the --uverbs-mode bits: the permission check
 * the VFS makes (root passes; others by group 0 membership or "other").
 */
static unsigned int node_mode(int devnum)
{
	/* rdma-core's udev rule makes rdma_cm 0666 */
	return devnum == CM_DEVNUM ? 0666 : emu.opts.uverbs_mode;
}

static bool node_permitted(int devnum, uid_t uid, gid_t gid, int want)
{
	unsigned int mode = node_mode(devnum), bits;
	gid_t groups[256];
	int n, i;
	bool member = gid == 0;

	if (uid == 0)
		return !(want & X_OK) || (mode & 0111);
	n = getgroups(256, groups);
	for (i = 0; i < n && !member; i++)
		member = groups[i] == 0;
	bits = member ? (mode >> 3) & 7 : mode & 7;
	return (bits & want) == (unsigned int)want;
}

static int accmode_want(int flags)
{
	switch (flags & O_ACCMODE) {
	case O_RDONLY: return R_OK;
	case O_WRONLY: return W_OK;
	default: return R_OK | W_OK;
	}
}

static bool needs_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

/*
 * rdma_cm: the fd is one end of a socketpair whose other end carries one
 * token byte per queued event (kernel/rdma_cm.h), so the application's
 * poll/epoll/select on it work as on the kernel's event file.
 */
static int cm_open(int flags)
{
	struct emu_cm_file *f;
	int sv[2], type = SOCK_STREAM;

	if (flags & O_CLOEXEC)
		type |= SOCK_CLOEXEC;
	if (flags & O_NONBLOCK)
		type |= SOCK_NONBLOCK;
	if (socketpair(AF_UNIX, type, 0, sv))
		return -1;
	emu_libc_fcntl_int(sv[1], F_SETFD, FD_CLOEXEC);
	emu_libc_fcntl_int(sv[1], F_SETFL, O_NONBLOCK);
	pthread_mutex_lock(&emu.lock);
	f = emu_cm_file_open(sv[0], sv[1]);
	pthread_mutex_unlock(&emu.lock);
	if (!f) {
		REAL(close)(sv[0]);
		REAL(close)(sv[1]);
		return set_errno(sv[0] >= EMU_MAX_FDS ? -EMFILE : -ENOMEM);
	}
	if (emu_verbose())
		emu_log("open %srdma_cm flags 0x%x -> fd %d", EMU_CDEV_DIR,
			flags, sv[0]);
	return sv[0];
}

/*
 * The fd is a real eventfd, so that anything we do not intercept fails
 * instead of silently talking to some other file.
 */
static int uverbs_open(unsigned int devnum, int flags)
{
	struct emu_file *file;
	int fd, efd_flags = 0;

	emu_init();
	if ((flags & O_CREAT) && (flags & O_EXCL))
		return set_errno(-EEXIST);
	if (!node_permitted((int)devnum, geteuid(), getegid(),
			    accmode_want(flags)))
		return set_errno(-EACCES);
	if (devnum == CM_DEVNUM)
		return (flags & O_DIRECTORY) ? set_errno(-ENOTDIR) :
					       cm_open(flags);
	if (flags & O_DIRECTORY)
		return set_errno(-ENOTDIR);
	if (flags & O_CLOEXEC)
		efd_flags |= EFD_CLOEXEC;
	if (flags & O_NONBLOCK)
		efd_flags |= EFD_NONBLOCK;
	fd = eventfd(0, efd_flags);
	if (fd < 0)
		return -1;
	pthread_mutex_lock(&emu.lock);
	file = emu_file_open(devnum, fd, (flags & O_ACCMODE) != O_RDONLY);
	pthread_mutex_unlock(&emu.lock);
	if (!file) {
		REAL(close)(fd);
		return set_errno(fd >= EMU_MAX_FDS ? -EMFILE : -ENOMEM);
	}
	/*
	 * --vm: the file's identity rides in the eventfd's counter, where a
	 * process of the VM that receives the fd reads it (fdinfo).  A real
	 * uverbs fd polls readable anyway (no poll method: DEFAULT_POLLMASK).
	 */
	if (file->vm_tag)
		REAL(write)(fd, &file->vm_tag, sizeof(file->vm_tag));
	if (emu_verbose())
		emu_log("open %suverbs%u flags 0x%x -> fd %d", EMU_CDEV_DIR,
			devnum, flags, fd);
	return fd;
}

/*
 * /dev/udmabuf, the dma-buf exporter of the emulated VM (kernel/
 * udmabuf.c): a misc device root may open (mode 0660 root:kvm on Debian;
 * here root's and the --uverbs-mode bits do not apply).
 */
#define UDMABUF_PATH "/dev/udmabuf"

static int udmabuf_open(int flags)
{
	void *obj;
	int fd;

	emu_init();
	if (geteuid() != 0)
		return set_errno(-EACCES);
	if (flags & O_DIRECTORY)
		return set_errno(-ENOTDIR);
	fd = eventfd(0, flags & O_CLOEXEC ? EFD_CLOEXEC : 0);
	if (fd < 0)
		return -1;
	pthread_mutex_lock(&emu.lock);
	obj = emu_udmabuf_open(fd);
	pthread_mutex_unlock(&emu.lock);
	if (!obj) {
		REAL(close)(fd);
		return set_errno(fd >= EMU_MAX_FDS ? -EMFILE : -ENOMEM);
	}
	if (emu_verbose())
		emu_log("open %s flags 0x%x -> fd %d", UDMABUF_PATH, flags, fd);
	return fd;
}

static bool is_udmabuf(const char *path)
{
	return path && !strcmp(path, UDMABUF_PATH);
}

static int open_common(const char *path, int flags, mode_t mode,
		       int (*real)(const char *, int, ...))
{
	int devnum = uverbs_devnum(path);
	char buf[PATH_MAX];

	if (devnum >= 0)
		return uverbs_open(devnum, flags);
	if (is_udmabuf(path))
		return udmabuf_open(flags);
	return real(SYS(path, buf), flags, mode);
}

static mode_t open_mode(int flags, va_list ap)
{
	return needs_mode(flags) ? va_arg(ap, int) : 0;
}

EMU_EXPORT int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	return open_common(path, flags, mode, REAL(open));
}

EMU_EXPORT int open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	return open_common(path, flags, mode, REAL(open64));
}

EMU_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	int devnum = uverbs_devnum(path);
	char buf[PATH_MAX];
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	if (devnum >= 0)
		return uverbs_open(devnum, flags);
	if (is_udmabuf(path))
		return udmabuf_open(flags);
	return REAL(openat)(dirfd, SYS(path, buf), flags, mode);
}

EMU_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	int devnum = uverbs_devnum(path);
	char buf[PATH_MAX];
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	if (devnum >= 0)
		return uverbs_open(devnum, flags);
	if (is_udmabuf(path))
		return udmabuf_open(flags);
	return REAL(openat64)(dirfd, SYS(path, buf), flags, mode);
}

EMU_EXPORT int __open_2(const char *path, int flags)
{
	int devnum = uverbs_devnum(path);
	char buf[PATH_MAX];

	if (is_udmabuf(path))
		return udmabuf_open(flags);
	return devnum >= 0 ? uverbs_open(devnum, flags) :
			     REAL(__open_2)(SYS(path, buf), flags);
}

EMU_EXPORT int __open64_2(const char *path, int flags)
{
	int devnum = uverbs_devnum(path);
	char buf[PATH_MAX];

	if (is_udmabuf(path))
		return udmabuf_open(flags);
	return devnum >= 0 ? uverbs_open(devnum, flags) :
			     REAL(__open64_2)(SYS(path, buf), flags);
}

EMU_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	int devnum = uverbs_devnum(path);
	char buf[PATH_MAX];

	if (is_udmabuf(path))
		return udmabuf_open(flags);
	return devnum >= 0 ? uverbs_open(devnum, flags) :
			     REAL(__openat_2)(dirfd, SYS(path, buf), flags);
}

EMU_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	int devnum = uverbs_devnum(path);
	char buf[PATH_MAX];

	if (is_udmabuf(path))
		return udmabuf_open(flags);
	return devnum >= 0 ? uverbs_open(devnum, flags) :
			     REAL(__openat64_2)(dirfd, SYS(path, buf), flags);
}

/* ---- stat family: a crw-rw-rw- 231:192+N character device ------------------ */

static struct timespec emu_start_time(void)
{
	static struct timespec ts;

	if (!ts.tv_sec)
		clock_gettime(CLOCK_REALTIME, &ts);
	return ts;
}

#define FILL_STAT(st, devnum)                                                  \
	do {                                                                   \
		memset((st), 0, sizeof(*(st)));                                \
		(st)->st_dev = makedev(0, 5);	/* devtmpfs */                 \
		(st)->st_ino = 0x4d414e41 + (devnum);                          \
		(st)->st_mode = S_IFCHR | node_mode(devnum);                   \
		(st)->st_nlink = 1;                                            \
		(st)->st_rdev = node_rdev(devnum);                             \
		(st)->st_blksize = 4096;                                       \
		(st)->st_atim = (st)->st_mtim = (st)->st_ctim =                \
			emu_start_time();                                      \
	} while (0)

static dev_t node_rdev(int devnum)
{
	if (devnum == CM_DEVNUM)
		return makedev(EMU_UCMA_MAJOR, EMU_UCMA_MINOR);
	return makedev(EMU_UVERBS_MAJOR, EMU_UVERBS_MINOR_BASE + devnum);
}

static int fd_devnum(int fd)
{
	struct emu_file *file;
	int devnum = -1;

	if (emu_fd_kind(fd) == EMU_FD_RDMA_CM)
		return CM_DEVNUM;
	if (emu_fd_kind(fd) != EMU_FD_UVERBS)
		return -1;
	pthread_mutex_lock(&emu.lock);
	file = emu_fd_obj(fd, EMU_FD_UVERBS);
	if (file)
		devnum = file->devnum;
	pthread_mutex_unlock(&emu.lock);
	return devnum;
}

/* fstatat() target: an absolute uverbs path, or dirfd with AT_EMPTY_PATH */
static int at_devnum(int dirfd, const char *path, int flags)
{
	if ((flags & AT_EMPTY_PATH) && path && !path[0])
		return fd_devnum(dirfd);
	return uverbs_devnum(path);
}

EMU_EXPORT int stat(const char *restrict path, struct stat *restrict st)
{
	int devnum = uverbs_devnum(path);
	char buf[PATH_MAX];

	if (devnum < 0)
		return REAL(stat)(SYS(path, buf), st);
	FILL_STAT(st, devnum);
	return 0;
}

EMU_EXPORT int stat64(const char *restrict path, struct stat64 *restrict st)
{
	int devnum = uverbs_devnum(path);
	char buf[PATH_MAX];

	if (devnum < 0)
		return REAL(stat64)(SYS(path, buf), st);
	FILL_STAT(st, devnum);
	return 0;
}

EMU_EXPORT int lstat(const char *restrict path, struct stat *restrict st)
{
	int devnum = uverbs_devnum(path);
	char buf[PATH_MAX];

	if (devnum < 0)
		return REAL(lstat)(SYS(path, buf), st);
	FILL_STAT(st, devnum);
	return 0;
}

EMU_EXPORT int lstat64(const char *restrict path, struct stat64 *restrict st)
{
	int devnum = uverbs_devnum(path);
	char buf[PATH_MAX];

	if (devnum < 0)
		return REAL(lstat64)(SYS(path, buf), st);
	FILL_STAT(st, devnum);
	return 0;
}

EMU_EXPORT int fstat(int fd, struct stat *st)
{
	int devnum = fd_devnum(fd);

	if (devnum < 0)
		return REAL(fstat)(fd, st);
	FILL_STAT(st, devnum);
	return 0;
}

EMU_EXPORT int fstat64(int fd, struct stat64 *st)
{
	int devnum = fd_devnum(fd);

	if (devnum < 0)
		return REAL(fstat64)(fd, st);
	FILL_STAT(st, devnum);
	return 0;
}

EMU_EXPORT int fstatat(int dirfd, const char *restrict path,
		       struct stat *restrict st, int flags)
{
	int devnum = at_devnum(dirfd, path, flags);
	char buf[PATH_MAX];

	if (devnum < 0)
		return REAL(fstatat)(dirfd, SYS(path, buf), st, flags);
	FILL_STAT(st, devnum);
	return 0;
}

EMU_EXPORT int fstatat64(int dirfd, const char *restrict path,
			 struct stat64 *restrict st, int flags)
{
	int devnum = at_devnum(dirfd, path, flags);
	char buf[PATH_MAX];

	if (devnum < 0)
		return REAL(fstatat64)(dirfd, SYS(path, buf), st, flags);
	FILL_STAT(st, devnum);
	return 0;
}

EMU_EXPORT int statx(int dirfd, const char *restrict path, int flags,
		     unsigned int mask, struct statx *restrict stx)
{
	int devnum = at_devnum(dirfd, path, flags);
	char buf[PATH_MAX];
	struct timespec ts;

	if (devnum < 0)
		return REAL(statx)(dirfd, SYS(path, buf), flags, mask, stx);
	ts = emu_start_time();
	memset(stx, 0, sizeof(*stx));
	stx->stx_mask = STATX_BASIC_STATS;
	stx->stx_blksize = 4096;
	stx->stx_nlink = 1;
	stx->stx_mode = S_IFCHR | node_mode(devnum);
	stx->stx_ino = 0x4d414e41 + devnum;
	stx->stx_rdev_major = major(node_rdev(devnum));
	stx->stx_rdev_minor = minor(node_rdev(devnum));
	stx->stx_dev_minor = 5;
	stx->stx_atime.tv_sec = stx->stx_mtime.tv_sec =
		stx->stx_ctime.tv_sec = ts.tv_sec;
	return 0;
}

/* access() checks with the real ids, faccessat(AT_EACCESS) the effective */
static int uverbs_access(int devnum, int mode, bool effective)
{
	if (mode == F_OK)
		return 0;
	if (effective ? node_permitted(devnum, geteuid(), getegid(), mode) :
			node_permitted(devnum, getuid(), getgid(), mode))
		return 0;
	return set_errno(-EACCES);
}

EMU_EXPORT int access(const char *path, int mode)
{
	char buf[PATH_MAX];

	int devnum = uverbs_devnum(path);

	return devnum >= 0 ? uverbs_access(devnum, mode, false) :
					  REAL(access)(SYS(path, buf), mode);
}

EMU_EXPORT int faccessat(int dirfd, const char *path, int mode, int flags)
{
	char buf[PATH_MAX];

	int devnum = uverbs_devnum(path);

	return devnum >= 0 ?
		       uverbs_access(devnum, mode, flags & AT_EACCESS) :
		       REAL(faccessat)(dirfd, SYS(path, buf), mode, flags);
}

/* ---- the other path calls that reach sysfs --------------------------------- */

/* glibc's fopen() and opendir() open through internal calls: here too. */
EMU_EXPORT FILE *fopen(const char *restrict path, const char *restrict mode)
{
	char buf[PATH_MAX];

	return REAL(fopen)(SYS(path, buf), mode);
}

EMU_EXPORT FILE *fopen64(const char *restrict path, const char *restrict mode)
{
	char buf[PATH_MAX];

	return REAL(fopen64)(SYS(path, buf), mode);
}

EMU_EXPORT FILE *freopen(const char *restrict path, const char *restrict mode,
			 FILE *restrict stream)
{
	char buf[PATH_MAX];

	return REAL(freopen)(path ? SYS(path, buf) : NULL, mode, stream);
}

EMU_EXPORT DIR *opendir(const char *path)
{
	char buf[PATH_MAX];

	return REAL(opendir)(SYS(path, buf));
}

EMU_EXPORT ssize_t readlink(const char *restrict path, char *restrict out,
			    size_t len)
{
	char buf[PATH_MAX];

	return REAL(readlink)(SYS(path, buf), out, len);
}

EMU_EXPORT ssize_t readlinkat(int dirfd, const char *restrict path,
			      char *restrict out, size_t len)
{
	char buf[PATH_MAX];

	return REAL(readlinkat)(dirfd, SYS(path, buf), out, len);
}

/* Fortified callers (Debian builds with _FORTIFY_SOURCE): same checks. */
EMU_EXPORT ssize_t __readlink_chk(const char *path, char *buf, size_t len,
				  size_t buflen)
{
	if (len > buflen)
		abort();
	return readlink(path, buf, len);
}

EMU_EXPORT ssize_t __readlinkat_chk(int dirfd, const char *path, char *buf,
				    size_t len, size_t buflen)
{
	if (len > buflen)
		abort();
	return readlinkat(dirfd, path, buf, len);
}

EMU_EXPORT int chdir(const char *path)
{
	char buf[PATH_MAX];

	return REAL(chdir)(SYS(path, buf));
}

/*
 * glibc's realpath() follows links with internal calls: resolve in the
 * tree and name the result by /sys again, as a program would see it.
 */
EMU_EXPORT char *realpath(const char *restrict path, char *restrict resolved)
{
	char buf[PATH_MAX], *res, *copy;
	size_t root_len;

	if (!sys_path(path, buf))
		return REAL(realpath)(path, resolved);
	res = REAL(realpath)(buf, NULL);
	if (!res)
		return NULL;
	root_len = strlen(emu.sysfs_root);
	if (!strncmp(res, emu.sysfs_root, root_len) &&
	    (res[root_len] == '/' || !res[root_len]))
		snprintf(buf, sizeof(buf), "/sys%s", res + root_len);
	else
		snprintf(buf, sizeof(buf), "%s", res);
	free(res);
	if (resolved) {
		snprintf(resolved, PATH_MAX, "%s", buf);
		return resolved;
	}
	copy = strdup(buf);
	if (!copy)
		errno = ENOMEM;
	return copy;
}

EMU_EXPORT char *__realpath_chk(const char *path, char *resolved,
				size_t resolvedlen)
{
	if (resolved && resolvedlen < PATH_MAX)
		abort();
	return realpath(path, resolved);
}
