/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The interposers that name the char device: open() and its fortified
 * forms, the stat family (fstat() of a uverbs fd included) and access() on
 * /dev/infiniband/uverbsN.  The fd calls are in interpose.c; both fall
 * through to libc for everything else.
 */
#ifdef _FORTIFY_SOURCE
#undef _FORTIFY_SOURCE	/* we define the functions fortify wraps */
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>


#include "emulator/core/emu.h"
#include "emulator/core/emu_defs.h"
#include "emulator/core/ibdev.h"
#include "emulator/kernel/kernel.h"
#include "emulator/lib/libc.h"

#include "init.h"
#include "interpose.h"

/* Fortified variants are not declared without _FORTIFY_SOURCE. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

/* ---- the char device: /dev/infiniband/uverbsN ----------------------------- */

/* Device number of an emulated uverbs path, or -1. */
static int uverbs_devnum(const char *path)
{
	static const char prefix[] = EMU_CDEV_DIR "uverbs";
	unsigned long n;
	char *end;

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
static bool uverbs_permitted(uid_t uid, gid_t gid, int want)
{
	unsigned int mode = emu.opts.uverbs_mode, bits;
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
	if (!uverbs_permitted(geteuid(), getegid(), accmode_want(flags)))
		return set_errno(-EACCES);
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
	if (emu_verbose())
		emu_log("open %suverbs%u flags 0x%x -> fd %d", EMU_CDEV_DIR,
			devnum, flags, fd);
	return fd;
}

static int open_common(const char *path, int flags, mode_t mode,
		       int (*real)(const char *, int, ...))
{
	int devnum = uverbs_devnum(path);

	if (devnum >= 0)
		return uverbs_open(devnum, flags);
	return real(path, flags, mode);
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
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	if (devnum >= 0)
		return uverbs_open(devnum, flags);
	return REAL(openat)(dirfd, path, flags, mode);
}

EMU_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	int devnum = uverbs_devnum(path);
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	if (devnum >= 0)
		return uverbs_open(devnum, flags);
	return REAL(openat64)(dirfd, path, flags, mode);
}

EMU_EXPORT int __open_2(const char *path, int flags)
{
	int devnum = uverbs_devnum(path);

	return devnum >= 0 ? uverbs_open(devnum, flags) :
			     REAL(__open_2)(path, flags);
}

EMU_EXPORT int __open64_2(const char *path, int flags)
{
	int devnum = uverbs_devnum(path);

	return devnum >= 0 ? uverbs_open(devnum, flags) :
			     REAL(__open64_2)(path, flags);
}

EMU_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	int devnum = uverbs_devnum(path);

	return devnum >= 0 ? uverbs_open(devnum, flags) :
			     REAL(__openat_2)(dirfd, path, flags);
}

EMU_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	int devnum = uverbs_devnum(path);

	return devnum >= 0 ? uverbs_open(devnum, flags) :
			     REAL(__openat64_2)(dirfd, path, flags);
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
		(st)->st_mode = S_IFCHR | emu.opts.uverbs_mode;                \
		(st)->st_nlink = 1;                                            \
		(st)->st_rdev = makedev(EMU_UVERBS_MAJOR,                      \
					EMU_UVERBS_MINOR_BASE + (devnum));     \
		(st)->st_blksize = 4096;                                       \
		(st)->st_atim = (st)->st_mtim = (st)->st_ctim =                \
			emu_start_time();                                      \
	} while (0)

static int fd_devnum(int fd)
{
	struct emu_file *file;
	int devnum = -1;

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

	if (devnum < 0)
		return REAL(stat)(path, st);
	FILL_STAT(st, devnum);
	return 0;
}

EMU_EXPORT int stat64(const char *restrict path, struct stat64 *restrict st)
{
	int devnum = uverbs_devnum(path);

	if (devnum < 0)
		return REAL(stat64)(path, st);
	FILL_STAT(st, devnum);
	return 0;
}

EMU_EXPORT int lstat(const char *restrict path, struct stat *restrict st)
{
	int devnum = uverbs_devnum(path);

	if (devnum < 0)
		return REAL(lstat)(path, st);
	FILL_STAT(st, devnum);
	return 0;
}

EMU_EXPORT int lstat64(const char *restrict path, struct stat64 *restrict st)
{
	int devnum = uverbs_devnum(path);

	if (devnum < 0)
		return REAL(lstat64)(path, st);
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

	if (devnum < 0)
		return REAL(fstatat)(dirfd, path, st, flags);
	FILL_STAT(st, devnum);
	return 0;
}

EMU_EXPORT int fstatat64(int dirfd, const char *restrict path,
			 struct stat64 *restrict st, int flags)
{
	int devnum = at_devnum(dirfd, path, flags);

	if (devnum < 0)
		return REAL(fstatat64)(dirfd, path, st, flags);
	FILL_STAT(st, devnum);
	return 0;
}

EMU_EXPORT int statx(int dirfd, const char *restrict path, int flags,
		     unsigned int mask, struct statx *restrict stx)
{
	int devnum = at_devnum(dirfd, path, flags);
	struct timespec ts;

	if (devnum < 0)
		return REAL(statx)(dirfd, path, flags, mask, stx);
	ts = emu_start_time();
	memset(stx, 0, sizeof(*stx));
	stx->stx_mask = STATX_BASIC_STATS;
	stx->stx_blksize = 4096;
	stx->stx_nlink = 1;
	stx->stx_mode = S_IFCHR | emu.opts.uverbs_mode;
	stx->stx_ino = 0x4d414e41 + devnum;
	stx->stx_rdev_major = EMU_UVERBS_MAJOR;
	stx->stx_rdev_minor = EMU_UVERBS_MINOR_BASE + devnum;
	stx->stx_dev_minor = 5;
	stx->stx_atime.tv_sec = stx->stx_mtime.tv_sec =
		stx->stx_ctime.tv_sec = ts.tv_sec;
	return 0;
}

/* access() checks with the real ids, faccessat(AT_EACCESS) the effective */
static int uverbs_access(int mode, bool effective)
{
	if (mode == F_OK)
		return 0;
	if (effective ? uverbs_permitted(geteuid(), getegid(), mode) :
			uverbs_permitted(getuid(), getgid(), mode))
		return 0;
	return set_errno(-EACCES);
}

EMU_EXPORT int access(const char *path, int mode)
{
	return uverbs_devnum(path) >= 0 ? uverbs_access(mode, false) :
					  REAL(access)(path, mode);
}

EMU_EXPORT int faccessat(int dirfd, const char *path, int mode, int flags)
{
	return uverbs_devnum(path) >= 0 ?
		       uverbs_access(mode, flags & AT_EACCESS) :
		       REAL(faccessat)(dirfd, path, mode, flags);
}
