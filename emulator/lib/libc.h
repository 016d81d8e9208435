/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The real libc calls the emulator makes on its own descriptors (wire
 * sockets, TAP, pcap files, event and netlink socket pairs).  A leaf: it
 * includes no other emulator header.
 *
 * Inside libmana-emu.so a plain write() resolves to the interposer in
 * host/interpose.c, which looks the fd up in the emulated kernel's table
 * before reaching libc: the device would call up into the host layer for
 * its own I/O.  These go to the next definition after the caller's object
 * (dlsym(RTLD_NEXT)), resolved once per function.
 */
#ifndef MANA_EMU_LIBC_H
#define MANA_EMU_LIBC_H

#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * The next definition of @name, cached in *@slot.  Aborts with a message
 * on stderr if there is none.  Safe before any constructor has run and
 * outside sanitizer instrumentation (the interposers use it too).
 */
void *emu_libc_resolve(void **slot, const char *name);

/* fn's next definition, with fn's type. */
#define EMU_LIBC(fn)                                                           \
	({                                                                     \
		static void *emu_libc_slot_;                                   \
		((__typeof__(&fn))emu_libc_resolve(&emu_libc_slot_, #fn));     \
	})

/* mode is read when flags have O_CREAT or O_TMPFILE, as for open(2) */
int emu_libc_open(const char *path, int flags, ...);
int emu_libc_close(int fd);
ssize_t emu_libc_read(int fd, void *buf, size_t len);
ssize_t emu_libc_write(int fd, const void *buf, size_t len);
int emu_libc_ioctl(int fd, unsigned long request, void *arg);
/* fcntl() of a command that takes an int (F_SETFL, F_SETFD, ...) */
int emu_libc_fcntl_int(int fd, int cmd, int arg);
int emu_libc_poll(struct pollfd *fds, nfds_t nfds, int timeout);
int emu_libc_sigaction(int sig, const struct sigaction *act,
		       struct sigaction *old);
int emu_libc_stat(const char *path, struct stat *st);
int emu_libc_fstat(int fd, struct stat *st);
int emu_libc_access(const char *path, int mode);
int emu_libc_socket(int domain, int type, int protocol);
int emu_libc_bind(int fd, const struct sockaddr *addr, socklen_t len);
int emu_libc_setsockopt(int fd, int level, int name, const void *val,
			socklen_t len);
int emu_libc_getsockopt(int fd, int level, int name, void *val,
			socklen_t *len);
int emu_libc_connect(int fd, const struct sockaddr *addr, socklen_t len);
ssize_t emu_libc_send(int fd, const void *buf, size_t len, int flags);
ssize_t emu_libc_sendmsg(int fd, const struct msghdr *msg, int flags);
ssize_t emu_libc_sendto(int fd, const void *buf, size_t len, int flags,
			const struct sockaddr *addr, socklen_t alen);
ssize_t emu_libc_recv(int fd, void *buf, size_t len, int flags);
ssize_t emu_libc_recvfrom(int fd, void *buf, size_t len, int flags,
			  struct sockaddr *addr, socklen_t *alen);
void *emu_libc_mmap(void *addr, size_t len, int prot, int flags, int fd,
		    off_t offset);
int emu_libc_munmap(void *addr, size_t len);

#endif /* MANA_EMU_LIBC_H */
