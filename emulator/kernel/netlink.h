/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Fake NETLINK_RDMA and NETLINK_ROUTE sockets.  All but emu_nl_fill_name() need emu.lock.
 */
#ifndef MANA_EMU_NETLINK_H
#define MANA_EMU_NETLINK_H

#include <sys/socket.h>
#include <sys/types.h>

struct emu_nlsock;

/* socket(AF_NETLINK, type, NETLINK_RDMA or NETLINK_ROUTE): fd or -errno */
int emu_nl_socket(int type, int protocol);
/* close(): the caller closes the application's fd afterwards */
void emu_nl_release(struct emu_nlsock *s);
int emu_nl_bind(struct emu_nlsock *s, const struct sockaddr *addr,
		socklen_t len);
int emu_nl_getsockname(struct emu_nlsock *s, struct sockaddr *addr,
		       socklen_t *len);
int emu_nl_setsockopt(struct emu_nlsock *s, int level, int name,
		      const void *val, socklen_t len);
int emu_nl_getsockopt(struct emu_nlsock *s, int level, int name, void *val,
		      socklen_t *len);
/* A request to the emulated kernel; replies queue on the socket. */
ssize_t emu_nl_sendmsg(struct emu_nlsock *s, const struct msghdr *msg);

/* Source address of every reply: the kernel (port 0). */
void emu_nl_fill_name(void *name, socklen_t *namelen);

#endif /* MANA_EMU_NETLINK_H */
