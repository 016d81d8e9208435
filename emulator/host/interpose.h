/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared by the interposers (interpose.c: fd calls, interpose_path.c: path
 * calls).  Both are built without ASan: see emulator/CMakeLists.txt.
 */
#ifndef MANA_EMU_INTERPOSE_H
#define MANA_EMU_INTERPOSE_H

#include <errno.h>

#include "emulator/lib/libc.h"

/* The next definition in the lookup order, resolved once (lib/libc.h). */
#define REAL(fn) EMU_LIBC(fn)

/* Kernel calls return -errno; libc returns -1 and sets errno. */
static inline long set_errno(long ret)
{
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

/*
 * interpose_net.c: an interface ioctl (SIOC[GS]IF{FLAGS,MTU}) on a socket
 * of the application's: 1 if it is not the VM's (pass it on), else the
 * kernel's answer (0 or -errno).
 */
#include <stdbool.h>
bool emu_is_link_ioctl(unsigned long request);
int emu_link_ioctl_entry(int fd, unsigned long request, void *arg);

/*
 * interpose_net.c: a destination in one of the VM's --ip subnets as the
 * host's loopback address (same port, in @lo), else @addr itself.
 */
const struct sockaddr *emu_ip_dest(const struct sockaddr *addr,
				   socklen_t len, struct sockaddr_storage *lo);

#endif /* MANA_EMU_INTERPOSE_H */
