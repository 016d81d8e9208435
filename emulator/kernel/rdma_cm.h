/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * /dev/infiniband/rdma_cm: the kernel's ucma (rdma_user_cm.h write ABI)
 * over the emulated rdma_cm and IB CM (rdma_cm.c).  One open() is one
 * event channel: the application's fd is one end of a socketpair on which
 * every queued event is one token byte, so poll/epoll/select see it
 * readable and a blocking GET_EVENT sleeps in the kernel (without
 * emu.lock).  Every function expects emu.lock held unless noted.
 */
#ifndef MANA_EMU_RDMA_CM_H
#define MANA_EMU_RDMA_CM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "emulator/core/emu_defs.h"	/* EMU_UCMA_ABI, _MAJOR, _MINOR */

struct emu_cm_file;

/* open(): a file on @app_fd (one end of @dev_fd's socketpair). */
struct emu_cm_file *emu_cm_file_open(int app_fd, int dev_fd);
/* The last fd closed: every id of the file is destroyed. */
void emu_cm_file_release(struct emu_cm_file *f);
/* The fd the file names as its own (after a dup'ed fd was closed). */
int *emu_cm_file_fd(struct emu_cm_file *f);

/*
 * write(): one command (header + command), @len bytes at @buf in the
 * application's memory: @len or -errno.  RDMA_USER_CM_CMD_GET_EVENT is
 * answered here only when an event is queued (-EAGAIN otherwise): the
 * caller waits for a token without the lock and asks again.
 */
ssize_t emu_cm_write(struct emu_cm_file *f, const void *buf, size_t len);
/* Is this command GET_EVENT (the caller must be ready to wait)? */
bool emu_cm_is_get_event(const void *buf, size_t len);

/* fork(), in the child: the parent's ids stay the parent's (--vm). */
void emu_cm_fork_child(void);

/*
 * The process exits (emu.lock held): a DREQ for every established id,
 * as the kernel's release of the file sends; the number sent.  Then
 * emu_cm_exit_pending() counts those whose DREP has not come yet.
 */
unsigned int emu_cm_exit(void);
unsigned int emu_cm_exit_pending(void);

/*
 * Is @addr (AF_INET or AF_INET6) a neighbour on port 1's wire, as the IP
 * stack's ARP/ND would find out: 0 yes (or one of our own addresses),
 * -EHOSTUNREACH when nobody answered, -ENETUNREACH outside the port's
 * subnets.  Takes emu.lock.
 */
int emu_ip_neigh(const struct sockaddr *addr, socklen_t len);

/* The ucma's own answers for the other calls on its fd. */
#define EMU_CM_READ_ERRNO EINVAL	/* no read method */

#endif /* MANA_EMU_RDMA_CM_H */
