/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The libc entry points libibverbs, libnl, providers and DPDK use to
 * reach the kernel, those that take an fd (the path ones are in
 * interpose_path.c).  Each one checks whether the path or fd belongs to
 * the emulated kernel and otherwise calls the next definition in the
 * lookup order (dlsym(RTLD_NEXT)), so everything else, including ASan's
 * interceptors sitting in front of us, behaves as before.
 */
#ifdef _FORTIFY_SOURCE
#undef _FORTIFY_SOURCE	/* we define the functions fortify wraps */
#endif

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/netlink.h>

#include "emulator/core/emu.h"
#include "emulator/core/emu_defs.h"
#include "emulator/core/vm.h"
#include "emulator/kernel/kernel.h"
#include "emulator/kernel/netlink.h"
#include "emulator/kernel/netlink_out.h"
#include "exit_signal.h"
#include "emulator/device/trap.h"
#include "emulator/kernel/uverbs.h"
#include "emulator/kernel/rdma_cm.h"
#include "emulator/lib/libc.h"

#include "init.h"
#include "interpose.h"

/* Fortified variants are not declared without _FORTIFY_SOURCE. */
ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen);
ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen,
		       int flags, __SOCKADDR_ARG addr, socklen_t *alen);
int __poll_chk(struct pollfd *fds, nfds_t nfds, int timeout, size_t fdslen);

/* ---- commands: write() and ioctl() on the uverbs fd ------------------------ */

/* Take the record a token stands for: 0, -EAGAIN (none), -EIO (gone). */
static int event_take(int fd, void *rec, size_t size)
{
	struct emu_event_file *ev;
	int ret = -EIO;

	pthread_mutex_lock(&emu.lock);
	ev = emu_fd_obj(fd, EMU_FD_EVENT);
	if (ev && ev->owner)
		ret = emu_event_pop(ev, rec, size);
	pthread_mutex_unlock(&emu.lock);
	return ret;
}

/*
 * One whole record per read, as the kernel hands them out.  The fd holds
 * one token per queued record: reading a token blocks (or not) as the
 * application's fd flags say; a token whose record went with its CQ is
 * skipped.
 */
static ssize_t event_read(int fd, void *buf, size_t len)
{
	struct emu_event_file *ev;
	uint8_t rec[16];
	bool detached;
	size_t size;
	ssize_t n;
	char token;
	int ret;

	pthread_mutex_lock(&emu.lock);
	ev = emu_fd_obj(fd, EMU_FD_EVENT);
	if (!ev) {
		pthread_mutex_unlock(&emu.lock);
		return REAL(read)(fd, buf, len);
	}
	size = emu_event_size(ev);
	detached = !ev->owner;
	pthread_mutex_unlock(&emu.lock);
	if (detached)
		return set_errno(-EIO);
	if (len < size)
		return set_errno(-EINVAL);
	for (;;) {
		n = REAL(read)(fd, &token, 1);
		if (n < 0)
			return n;
		if (n == 0)
			return set_errno(-EIO);	/* the uverbs file closed */
		ret = event_take(fd, rec, size);
		if (ret == -EIO)
			return set_errno(ret);
		if (!ret)
			break;
	}
	memcpy(buf, rec, size);
	return size;
}

static ssize_t netlink_send(int fd, const void *buf, size_t len,
			    const struct sockaddr *to, socklen_t tolen)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_name = (void *)to, .msg_namelen = tolen,
			      .msg_iov = &iov, .msg_iovlen = 1 };
	struct emu_nlsock *s;
	ssize_t ret = -EBADF;

	pthread_mutex_lock(&emu.lock);
	s = emu_fd_obj(fd, EMU_FD_NETLINK);
	if (s)
		ret = emu_nl_sendmsg(s, &msg);
	pthread_mutex_unlock(&emu.lock);
	return set_errno(ret);
}

/*
 * A command on an rdma_cm fd.  GET_EVENT with nothing queued sleeps in
 * poll() on the fd (readable while an event's token is in it), without
 * emu.lock, unless the fd is non-blocking (EAGAIN), as ucma_get_event()
 * waits on its file.
 */
static ssize_t cm_write(int fd, const void *buf, size_t len)
{
	bool get_event = emu_cm_is_get_event(buf, len), waited = false;
	struct emu_cm_file *f;
	struct pollfd pfd;
	ssize_t ret;

	for (;;) {
		ret = -EBADF;
		pthread_mutex_lock(&emu.lock);
		f = emu_fd_obj(fd, EMU_FD_RDMA_CM);
		if (f)
			ret = emu_cm_write(f, buf, len);
		pthread_mutex_unlock(&emu.lock);
		/*
		 * Another thread closed the fd while this one waited: in the
		 * kernel the sleeping write() holds the file, which no event
		 * reaches any more, so it sleeps until the process ends
		 * (rping's event thread does this at exit).
		 */
		if (!f && waited)
			for (;;)
				pause();
		if (!get_event || ret != -EAGAIN ||
		    (REAL(fcntl)(fd, F_GETFL) & O_NONBLOCK))
			return set_errno(ret);
		pfd.fd = fd;
		pfd.events = POLLIN;
		if (REAL(poll)(&pfd, 1, -1) < 0)
			return -1;	/* EINTR */
		waited = true;
	}
}

EMU_EXPORT ssize_t write(int fd, const void *buf, size_t len)
{
	struct emu_file *file;
	ssize_t ret = -EBADF;

	switch (emu_fd_kind(fd)) {
	case EMU_FD_NONE:
		break;
	case EMU_FD_UVERBS:
		pthread_mutex_lock(&emu.lock);
		file = emu_fd_obj(fd, EMU_FD_UVERBS);
		if (file)
			ret = emu_uverbs_write(file, buf, len);
		pthread_mutex_unlock(&emu.lock);
		return set_errno(ret);
	case EMU_FD_EVENT:
		return set_errno(-EBADF);	/* opened read-only */
	case EMU_FD_NETLINK:
		return netlink_send(fd, buf, len, NULL, 0);
	case EMU_FD_UDMABUF:
	case EMU_FD_DMABUF:
		return set_errno(-EINVAL);	/* no write method */
	case EMU_FD_RDMA_CM:
		return cm_write(fd, buf, len);
	}
	return REAL(write)(fd, buf, len);
}

EMU_EXPORT ssize_t read(int fd, void *buf, size_t len)
{
	switch (emu_fd_kind(fd)) {
	case EMU_FD_UVERBS:
	case EMU_FD_UDMABUF:
	case EMU_FD_DMABUF:
	case EMU_FD_RDMA_CM:
		return set_errno(-EINVAL);	/* no read method */
	case EMU_FD_EVENT:
		return event_read(fd, buf, len);
	default:
		return REAL(read)(fd, buf, len);
	}
}

EMU_EXPORT ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	if (emu_fd_kind(fd) == EMU_FD_NONE)
		return REAL(__read_chk)(fd, buf, len, buflen);
	if (len > buflen)
		abort();
	return read(fd, buf, len);
}

EMU_EXPORT int ioctl(int fd, unsigned long request, ...)
{
	struct emu_file *file;
	va_list ap;
	void *arg;
	int ret = -EBADF;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (emu_fd_kind(fd) == EMU_FD_NONE && emu_is_link_ioctl(request)) {
		ret = emu_link_ioctl_entry(fd, request, arg);
		if (ret != 1)
			return set_errno(ret);
	}
	/* The VFS answers these for every file before the driver sees them. */
	if (emu_fd_kind(fd) == EMU_FD_NONE || emu_fd_kind(fd) == EMU_FD_EVENT ||
	    emu_fd_kind(fd) == EMU_FD_NETLINK || request == FIOCLEX ||
	    request == FIONCLEX || request == FIONBIO || request == FIOASYNC)
		return REAL(ioctl)(fd, request, arg);
	pthread_mutex_lock(&emu.lock);
	switch (emu_fd_kind(fd)) {
	case EMU_FD_UVERBS:
		file = emu_fd_obj(fd, EMU_FD_UVERBS);
		if (file)
			ret = emu_uverbs_ioctl(file, request, arg);
		break;
	case EMU_FD_UDMABUF:
		ret = emu_udmabuf_ioctl(request, arg);
		break;
	case EMU_FD_DMABUF:
		ret = emu_dmabuf_ioctl(request, arg);
		break;
	default:
		break;
	}
	pthread_mutex_unlock(&emu.lock);
	if (ret >= 0)
		return ret;	/* UDMABUF_CREATE: the dma-buf's fd */
	return set_errno(ret);
}

/* ---- close and dup: fds share an open file, as struct file ---------------- */

/*
 * The fd a kernel object names as its own (its log lines, the event
 * file's token reads, the fd its release unregisters).  When that fd
 * closes while a dup of it stays open, the dup takes the role.
 */
static int *owned_fd(enum emu_fd_kind kind, void *obj)
{
	switch (kind) {
	case EMU_FD_UVERBS:
		return &((struct emu_file *)obj)->fd;
	case EMU_FD_EVENT:
		return &((struct emu_event_file *)obj)->app_fd;
	case EMU_FD_NETLINK:
		return &((struct emu_nlsock *)obj)->app_fd;
	case EMU_FD_UDMABUF:
	case EMU_FD_DMABUF:
		return emu_udmabuf_owned_fd(obj, kind == EMU_FD_DMABUF);
	case EMU_FD_RDMA_CM:
		return emu_cm_file_fd(obj);
	default:
		return NULL;
	}
}

/* The last fd of a file releases what it owns; an earlier one only goes. */
static void release_fd(int fd, enum emu_fd_kind kind)
{
	void *obj;
	int other;

	pthread_mutex_lock(&emu.lock);
	obj = emu_fd_obj(fd, kind);
	other = obj ? emu_fd_find(obj, fd) : -1;
	if (other >= 0) {
		if (*owned_fd(kind, obj) == fd)
			*owned_fd(kind, obj) = other;
		emu_fd_unregister(fd);
		if (emu_verbose())
			emu_log("close fd %d: fd %d still refers to its file", fd,
				other);
	} else if (obj) {
		*owned_fd(kind, obj) = fd;
		if (kind == EMU_FD_UVERBS) {
			if (emu_verbose())
				emu_log("close uverbs fd %d: %s", fd,
					((struct emu_file *)obj)->remote ?
					"another process's file, let go" :
					"context released");
			emu_file_release(obj);
		} else if (kind == EMU_FD_EVENT) {
			emu_event_file_app_closed(obj);
		} else if (kind == EMU_FD_NETLINK) {
			emu_nl_release(obj);
		} else if (kind == EMU_FD_UDMABUF || kind == EMU_FD_DMABUF) {
			emu_udmabuf_release(obj, kind == EMU_FD_DMABUF);
		} else if (kind == EMU_FD_RDMA_CM) {
			if (emu_verbose())
				emu_log("close rdma_cm fd %d: its ids destroyed",
					fd);
			emu_cm_file_release(obj);
		}
	}
	pthread_mutex_unlock(&emu.lock);
}

EMU_EXPORT int close(int fd)
{
	enum emu_fd_kind kind = emu_fd_kind(fd);

	if (kind != EMU_FD_NONE)
		release_fd(fd, kind);
	return REAL(close)(fd);
}

/*
 * @newfd, a dup of @oldfd (of @kind) made by libc, names the same
 * emulated object; the real fd under it (eventfd, socket) is shared by
 * the dup itself.  @newfd, or -1/errno.
 */
static int dup_register(int oldfd, int newfd, enum emu_fd_kind kind)
{
	void *obj;
	int ret = 0;

	if (newfd < 0 || kind == EMU_FD_NONE)
		return newfd;
	pthread_mutex_lock(&emu.lock);
	obj = emu_fd_obj(oldfd, kind);
	if (obj)
		ret = emu_fd_register(newfd, kind, obj);
	pthread_mutex_unlock(&emu.lock);
	if (ret) {
		REAL(close)(newfd);
		return set_errno(ret);
	}
	if (obj && emu_verbose())
		emu_log("dup fd %d -> fd %d", oldfd, newfd);
	return newfd;
}

/* dup2/dup3 onto one of our fds closes it first, as the kernel does. */
static void release_target(int oldfd, int newfd)
{
	enum emu_fd_kind kind = emu_fd_kind(newfd);

	if (kind != EMU_FD_NONE && oldfd != newfd &&
	    fcntl(oldfd, F_GETFD) >= 0)
		release_fd(newfd, kind);
}

EMU_EXPORT int dup(int fd)
{
	enum emu_fd_kind kind = emu_fd_kind(fd);

	return dup_register(fd, REAL(dup)(fd), kind);
}

EMU_EXPORT int dup2(int oldfd, int newfd)
{
	enum emu_fd_kind kind = emu_fd_kind(oldfd);

	if (oldfd == newfd)
		return REAL(dup2)(oldfd, newfd);
	release_target(oldfd, newfd);
	return dup_register(oldfd, REAL(dup2)(oldfd, newfd), kind);
}

EMU_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	enum emu_fd_kind kind = emu_fd_kind(oldfd);

	if (oldfd == newfd)
		return REAL(dup3)(oldfd, newfd, flags);	/* EINVAL */
	release_target(oldfd, newfd);
	return dup_register(oldfd, REAL(dup3)(oldfd, newfd, flags), kind);
}

/*
 * F_DUPFD and F_DUPFD_CLOEXEC are dups; every other command goes to libc
 * with its argument (an int or a pointer: passed on as glibc reads it).
 */
static int fcntl_common(int (*real)(int, int, ...), int fd, int cmd,
			void *arg)
{
	enum emu_fd_kind kind;

	if (cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC)
		return real(fd, cmd, arg);
	kind = emu_fd_kind(fd);
	return dup_register(fd, real(fd, cmd, (int)(intptr_t)arg), kind);
}

EMU_EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(REAL(fcntl), fd, cmd, arg);
}

EMU_EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(REAL(fcntl64), fd, cmd, arg);
}

/* ---- mmap of the doorbell page --------------------------------------------- */

static void *uverbs_mmap(void *addr, size_t len, int prot, int flags, int fd,
			 off_t offset)
{
	struct emu_file *file;
	void *p = MAP_FAILED;
	int err = EBADF;

	pthread_mutex_lock(&emu.lock);
	file = emu_fd_obj(fd, EMU_FD_UVERBS);
	if (file)
		p = emu_uverbs_mmap(file, addr, len, prot, flags, offset, &err);
	pthread_mutex_unlock(&emu.lock);
	if (emu_verbose())
		emu_log("mmap fd %d len %zu offset %lld -> %s", fd, len,
			(long long)offset,
			p == MAP_FAILED ? emu_errname(err) : "doorbell page");
	if (p == MAP_FAILED)
		errno = err;
	return p;
}

/* A dma-buf of /dev/udmabuf maps its memfds' pages (udmabuf.c). */
static void *dmabuf_mmap(void *addr, size_t len, int prot, int flags, int fd,
			 off_t offset)
{
	void *obj, *p = MAP_FAILED;
	int err = EBADF;

	pthread_mutex_lock(&emu.lock);
	obj = emu_fd_obj(fd, EMU_FD_DMABUF);
	if (obj && offset >= 0)
		p = emu_dmabuf_mmap(obj, addr, len, prot, flags,
				    (uint64_t)offset, &err);
	else if (obj)
		err = EINVAL;
	pthread_mutex_unlock(&emu.lock);
	if (p == MAP_FAILED)
		errno = err;
	return p;
}

EMU_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd,
		      off_t offset)
{
	if (emu_fd_kind(fd) == EMU_FD_UVERBS && !(flags & MAP_ANONYMOUS))
		return uverbs_mmap(addr, len, prot, flags, fd, offset);
	if (emu_fd_kind(fd) == EMU_FD_DMABUF && !(flags & MAP_ANONYMOUS))
		return dmabuf_mmap(addr, len, prot, flags, fd, offset);
	return REAL(mmap)(addr, len, prot, flags, fd, offset);
}

EMU_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
			off64_t offset)
{
	if (emu_fd_kind(fd) == EMU_FD_UVERBS && !(flags & MAP_ANONYMOUS))
		return uverbs_mmap(addr, len, prot, flags, fd, offset);
	if (emu_fd_kind(fd) == EMU_FD_DMABUF && !(flags & MAP_ANONYMOUS))
		return dmabuf_mmap(addr, len, prot, flags, fd, offset);
	return REAL(mmap64)(addr, len, prot, flags, fd, offset);
}

/*
 * mprotect() over a doorbell page would end the trap (a writable page
 * takes stores without a fault, and the device never sees them).  On
 * hardware the page stays a device page whatever the program asks, so
 * the doorbell pages in the range keep their trap and the rest of the
 * range gets @prot: success while @prot keeps write access (the page is
 * still writable as far as the program can tell).  Taking write access
 * away cannot be emulated (stores would have to fault for the program):
 * EACCES ("cannot be given the specified access"), nothing changed.
 * Either way it is said once on stderr.
 */
#define MPROTECT_DB_MAX 64

static void mprotect_log(bool refused, void *addr, size_t len, int prot)
{
	static bool said[2];

	if (said[refused] && !emu_verbose())
		return;
	said[refused] = true;
	emu_log("mprotect(%p, %zu, 0x%x) covers a doorbell page: %s", addr,
		len, prot, refused ? "refused (EACCES), it must stay writable" :
		"the doorbell page stays trapped, the rest is changed");
}

EMU_EXPORT int mprotect(void *addr, size_t len, int prot)
{
	uintptr_t pages[MPROTECT_DB_MAX], start = (uintptr_t)addr, end, cur;
	unsigned int n, i;

	if (!emu_ready() || !emu_mmap_tracked() ||
	    (start & (EMU_PAGE_SIZE - 1)) || !len ||
	    start + len < start)
		return REAL(mprotect)(addr, len, prot);
	end = (start + len + EMU_PAGE_SIZE - 1) & ~(EMU_PAGE_SIZE - 1);
	pthread_mutex_lock(&emu.lock);
	n = emu_doorbell_pages_in(start, end, pages, MPROTECT_DB_MAX);
	pthread_mutex_unlock(&emu.lock);
	if (!n)
		return REAL(mprotect)(addr, len, prot);
	if (!(prot & PROT_WRITE)) {
		mprotect_log(true, addr, len, prot);
		errno = EACCES;
		return -1;
	}
	mprotect_log(false, addr, len, prot);
	for (cur = start, i = 0; i <= n; i++) {
		uintptr_t stop = i < n ? pages[i] : end;

		if (stop > cur && REAL(mprotect)((void *)cur, stop - cur, prot))
			return -1;
		if (i < n)
			cur = pages[i] + EMU_PAGE_SIZE;
	}
	return 0;
}

/* A doorbell page is reference counted (see kernel.c): not unmapped here. */
EMU_EXPORT int munmap(void *addr, size_t len)
{
	bool done = false;

	if (emu_ready() && emu_mmap_tracked()) {
		pthread_mutex_lock(&emu.lock);
		done = emu_munmap_doorbell(addr, len);
		pthread_mutex_unlock(&emu.lock);
	}
	return done ? 0 : REAL(munmap)(addr, len);
}

/* ---- SIGSEGV belongs to the doorbell trap once it is installed ------------ */

/*
 * A handler the application installs later becomes the one the trap
 * passes foreign faults to (trap_chain_sigaction), so doorbell stores
 * keep working under Python's faulthandler, ASan and the like.
 */
static int real_sigaction(int sig, const struct sigaction *act,
			  struct sigaction *oldact)
{
	return REAL(sigaction)(sig, act, oldact);
}

void emu_exit_signals_setup(void)
{
	emu_exit_signals_init(real_sigaction);
}

EMU_EXPORT int sigaction(int sig, const struct sigaction *act,
			 struct sigaction *oldact)
{
	int ret;

	if (!emu_ready())
		return REAL(sigaction)(sig, act, oldact);
	if (sig == SIGSEGV) {
		ret = trap_chain_sigaction(act, oldact);
		if (ret != -ENOENT)
			return set_errno(ret);
	}
	ret = emu_exit_signal_sigaction(sig, act, oldact, real_sigaction);
	if (ret != -ENOENT)
		return set_errno(ret);
	return REAL(sigaction)(sig, act, oldact);
}

EMU_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction sa = { .sa_handler = handler,
				.sa_flags = SA_RESTART }, old;
	int ret;

	if (!emu_ready())
		return REAL(signal)(sig, handler);
	if (sig == SIGSEGV && !trap_chain_sigaction(&sa, &old))
		return old.sa_handler;
	ret = emu_exit_signal_sigaction(sig, &sa, &old, real_sigaction);
	if (!ret)
		return old.sa_handler;
	if (ret != -ENOENT) {
		errno = -ret;
		return SIG_ERR;
	}
	return REAL(signal)(sig, handler);
}

/* ---- NETLINK_RDMA sockets ------------------------------------------------- */

EMU_EXPORT int socket(int domain, int type, int protocol)
{
	int ret;

	if (domain != AF_NETLINK ||
	    (protocol != NETLINK_RDMA && protocol != NETLINK_ROUTE))
		return REAL(socket)(domain, type, protocol);
	emu_init();
	/* --no-netlink takes RDMA netlink away; rtnetlink always exists */
	if (protocol == NETLINK_RDMA && emu.opts.no_netlink) {
		if (emu_verbose())
			emu_log("netlink socket refused (--no-netlink)");
		return set_errno(-EPROTONOSUPPORT);
	}
	pthread_mutex_lock(&emu.lock);
	ret = emu_nl_socket(type, protocol);
	pthread_mutex_unlock(&emu.lock);
	return set_errno(ret);
}

/* Run fn on our netlink socket behind fd; -EBADF if it just went away. */
#define NL_CALL(fd, expr)                                                      \
	({                                                                     \
		struct emu_nlsock *s;                                          \
		long ret_ = -EBADF;                                            \
		pthread_mutex_lock(&emu.lock);                                 \
		s = emu_fd_obj(fd, EMU_FD_NETLINK);                            \
		if (s)                                                         \
			ret_ = (expr);                                         \
		pthread_mutex_unlock(&emu.lock);                               \
		set_errno(ret_);                                               \
	})

EMU_EXPORT int bind(int fd, __CONST_SOCKADDR_ARG addr, socklen_t len)
{
	if (emu_fd_kind(fd) != EMU_FD_NETLINK)
		return REAL(bind)(fd, addr, len);
	return NL_CALL(fd, emu_nl_bind(s, addr.__sockaddr__, len));
}

EMU_EXPORT int getsockname(int fd, __SOCKADDR_ARG addr,
			   socklen_t *restrict len)
{
	if (emu_fd_kind(fd) != EMU_FD_NETLINK)
		return REAL(getsockname)(fd, addr, len);
	return NL_CALL(fd, emu_nl_getsockname(s, addr.__sockaddr__, len));
}

EMU_EXPORT int setsockopt(int fd, int level, int name, const void *val,
			  socklen_t len)
{
	if (emu_fd_kind(fd) != EMU_FD_NETLINK)
		return REAL(setsockopt)(fd, level, name, val, len);
	return NL_CALL(fd, emu_nl_setsockopt(s, level, name, val, len));
}

EMU_EXPORT int getsockopt(int fd, int level, int name, void *restrict val,
			  socklen_t *restrict len)
{
	if (emu_fd_kind(fd) != EMU_FD_NETLINK)
		return REAL(getsockopt)(fd, level, name, val, len);
	return NL_CALL(fd, emu_nl_getsockopt(s, level, name, val, len));
}

EMU_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	if (emu_fd_kind(fd) != EMU_FD_NETLINK)
		return REAL(sendmsg)(fd, msg, flags);
	return NL_CALL(fd, emu_nl_sendmsg(s, msg));
}

EMU_EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags,
			  __CONST_SOCKADDR_ARG to, socklen_t tolen)
{
	struct sockaddr_storage lo;

	if (emu_fd_kind(fd) != EMU_FD_NETLINK)
		return REAL(sendto)(fd, buf, len, flags,
				    emu_ip_dest(to.__sockaddr__, tolen, &lo),
				    tolen);
	return netlink_send(fd, buf, len, to.__sockaddr__, tolen);
}

EMU_EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	if (emu_fd_kind(fd) != EMU_FD_NETLINK)
		return REAL(send)(fd, buf, len, flags);
	return netlink_send(fd, buf, len, NULL, 0);
}

/* The counter of eventfd @fd (its fdinfo), or 0 if it is no eventfd. */
static uint64_t eventfd_count(int fd)
{
	static const char key[] = "eventfd-count:";
	char path[64], buf[512], *p;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = REAL(open)(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return 0;
	n = REAL(read)(f, buf, sizeof(buf) - 1);
	REAL(close)(f);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strstr(buf, key);
	return p ? strtoull(p + sizeof(key) - 1, NULL, 16) : 0;
}

/*
 * --vm: fds received over a Unix socket (SCM_RIGHTS) that are uverbs files
 * of the VM name the same file here (the placeholder eventfd carries the
 * file's identity, see uverbs_open()).
 */
static void received_fds(const struct msghdr *msg)
{
	struct cmsghdr *c;
	size_t i, n;
	int *fds;

	if (!emu_vm_active() || !msg->msg_control || !msg->msg_controllen)
		return;
	for (c = CMSG_FIRSTHDR(msg); c;
	     c = CMSG_NXTHDR((struct msghdr *)msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		fds = (int *)CMSG_DATA(c);
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			uint64_t tag;

			if (emu_fd_kind(fds[i]) != EMU_FD_NONE)
				continue;
			tag = eventfd_count(fds[i]);
			if (!tag)
				continue;
			pthread_mutex_lock(&emu.lock);
			emu_file_received(fds[i], tag);
			pthread_mutex_unlock(&emu.lock);
		}
	}
}

EMU_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	struct msghdr m;
	ssize_t ret;

	if (emu_fd_kind(fd) != EMU_FD_NETLINK) {
		ret = REAL(recvmsg)(fd, msg, flags);
		if (ret >= 0)
			received_fds(msg);
		return ret;
	}
	/* The datagram came from our socketpair; report the kernel instead. */
	m = *msg;
	m.msg_name = NULL;
	m.msg_namelen = 0;
	ret = REAL(recvmsg)(fd, &m, flags);
	if (ret < 0)
		return ret;
	msg->msg_flags = m.msg_flags;
	msg->msg_controllen = m.msg_controllen;
	if (msg->msg_name)
		emu_nl_fill_name(msg->msg_name, &msg->msg_namelen);
	return ret;
}

EMU_EXPORT ssize_t recvfrom(int fd, void *restrict buf, size_t len, int flags,
			    __SOCKADDR_ARG from, socklen_t *restrict fromlen)
{
	ssize_t ret;

	if (emu_fd_kind(fd) != EMU_FD_NETLINK)
		return REAL(recvfrom)(fd, buf, len, flags, from, fromlen);
	ret = REAL(recvfrom)(fd, buf, len, flags, (struct sockaddr *)NULL,
			     NULL);
	if (ret >= 0 && from.__sockaddr__ && fromlen)
		emu_nl_fill_name(from.__sockaddr__, fromlen);
	return ret;
}

/* recv() reports no sender, so the socketpair answers it unchanged. */
EMU_EXPORT ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	return REAL(recv)(fd, buf, len, flags);
}

EMU_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t len,
				  size_t buflen, int flags,
				  __SOCKADDR_ARG from, socklen_t *fromlen)
{
	if (emu_fd_kind(fd) != EMU_FD_NETLINK)
		return REAL(__recvfrom_chk)(fd, buf, len, buflen, flags, from,
					    fromlen);
	if (len > buflen)
		abort();
	return recvfrom(fd, buf, len, flags, from, fromlen);
}

/* ---- poll: the uverbs fd has no poll method, so it is always ready ------- */

#define UVERBS_POLLMASK (POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM)

static int poll_with_uverbs(struct pollfd *fds, nfds_t nfds, int timeout)
{
	int *saved = malloc(nfds * sizeof(*saved)), ready = 0, ret;
	nfds_t i;

	if (!saved)
		return set_errno(-ENOMEM);
	for (i = 0; i < nfds; i++) {
		saved[i] = fds[i].fd;
		if (emu_fd_kind(fds[i].fd) != EMU_FD_UVERBS)
			continue;
		if (fds[i].events & UVERBS_POLLMASK)
			ready++;
		fds[i].fd = -1;		/* hidden from the real poll */
	}
	ret = REAL(poll)(fds, nfds, ready ? 0 : timeout);
	for (i = 0; i < nfds; i++) {
		if (fds[i].fd != saved[i]) {
			fds[i].fd = saved[i];
			fds[i].revents = fds[i].events & UVERBS_POLLMASK;
		}
	}
	free(saved);
	return ret < 0 ? ret : ret + ready;
}

EMU_EXPORT int poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	nfds_t i;

	for (i = 0; i < nfds; i++)
		if (emu_fd_kind(fds[i].fd) == EMU_FD_UVERBS)
			return poll_with_uverbs(fds, nfds, timeout);
	return REAL(poll)(fds, nfds, timeout);
}

EMU_EXPORT int __poll_chk(struct pollfd *fds, nfds_t nfds, int timeout,
			  size_t fdslen)
{
	if (fdslen / sizeof(*fds) < nfds)
		abort();
	return poll(fds, nfds, timeout);
}
