// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The real libc calls of the emulator (libc.h).  Built without ASan
 * instrumentation in libmana-emu.so: the interposers resolve through
 * emu_libc_resolve() from other libraries' constructors, possibly before
 * the ASan runtime has initialised.
 */
#ifdef _FORTIFY_SOURCE
#undef _FORTIFY_SOURCE	/* plain definitions, the fortified ones are macros */
#endif

#include "libc.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

void *emu_libc_resolve(void **slot, const char *name)
{
	static const char msg[] = "mana-emu: cannot resolve a libc symbol\n";
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (p)
		return p;
	p = dlsym(RTLD_NEXT, name);
	if (!p) {
		syscall(SYS_write, STDERR_FILENO, msg, sizeof(msg) - 1);
		abort();
	}
	/* Racing resolvers store the same pointer. */
	__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	return p;
}

int emu_libc_open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return EMU_LIBC(open)(path, flags, mode);
}

int emu_libc_close(int fd)
{
	return EMU_LIBC(close)(fd);
}

ssize_t emu_libc_read(int fd, void *buf, size_t len)
{
	return EMU_LIBC(read)(fd, buf, len);
}

ssize_t emu_libc_write(int fd, const void *buf, size_t len)
{
	return EMU_LIBC(write)(fd, buf, len);
}

int emu_libc_ioctl(int fd, unsigned long request, void *arg)
{
	return EMU_LIBC(ioctl)(fd, request, arg);
}

int emu_libc_fcntl_int(int fd, int cmd, int arg)
{
	return EMU_LIBC(fcntl)(fd, cmd, arg);
}

int emu_libc_poll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	return EMU_LIBC(poll)(fds, nfds, timeout);
}

int emu_libc_sigaction(int sig, const struct sigaction *act,
		       struct sigaction *old)
{
	return EMU_LIBC(sigaction)(sig, act, old);
}

int emu_libc_stat(const char *path, struct stat *st)
{
	return EMU_LIBC(stat)(path, st);
}

int emu_libc_fstat(int fd, struct stat *st)
{
	return EMU_LIBC(fstat)(fd, st);
}

int emu_libc_access(const char *path, int mode)
{
	return EMU_LIBC(access)(path, mode);
}

int emu_libc_socket(int domain, int type, int protocol)
{
	return EMU_LIBC(socket)(domain, type, protocol);
}

int emu_libc_bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	return EMU_LIBC(bind)(fd, addr, len);
}

int emu_libc_setsockopt(int fd, int level, int name, const void *val,
			socklen_t len)
{
	return EMU_LIBC(setsockopt)(fd, level, name, val, len);
}

int emu_libc_getsockopt(int fd, int level, int name, void *val,
			socklen_t *len)
{
	return EMU_LIBC(getsockopt)(fd, level, name, val, len);
}

/* the wire's Unix sockets: not the interposer's (IP between VMs) */
int emu_libc_connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	return EMU_LIBC(connect)(fd, addr, len);
}

ssize_t emu_libc_send(int fd, const void *buf, size_t len, int flags)
{
	return EMU_LIBC(send)(fd, buf, len, flags);
}

ssize_t emu_libc_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	return EMU_LIBC(sendmsg)(fd, msg, flags);
}

ssize_t emu_libc_sendto(int fd, const void *buf, size_t len, int flags,
			const struct sockaddr *addr, socklen_t alen)
{
	return EMU_LIBC(sendto)(fd, buf, len, flags, addr, alen);
}

ssize_t emu_libc_recv(int fd, void *buf, size_t len, int flags)
{
	return EMU_LIBC(recv)(fd, buf, len, flags);
}

ssize_t emu_libc_recvfrom(int fd, void *buf, size_t len, int flags,
			  struct sockaddr *addr, socklen_t *alen)
{
	return EMU_LIBC(recvfrom)(fd, buf, len, flags, addr, alen);
}

void *emu_libc_mmap(void *addr, size_t len, int prot, int flags, int fd,
		    off_t offset)
{
	return EMU_LIBC(mmap)(addr, len, prot, flags, fd, offset);
}

int emu_libc_munmap(void *addr, size_t len)
{
	return EMU_LIBC(munmap)(addr, len);
}
