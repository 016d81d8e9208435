/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Building the replies of the emulated netlink families (netlink.c for
 * RDMA, rtnetlink.c for ROUTE).  All need emu.lock.
 */
#ifndef MANA_EMU_NETLINK_OUT_H
#define MANA_EMU_NETLINK_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/netlink.h>

struct emu_nlsock {
	int app_fd;
	int dev_fd;
	int protocol;		/* NETLINK_RDMA or NETLINK_ROUTE */
	uint32_t portid;
	uint32_t groups;
	bool bound;
	struct emu_nlsock *next;
};

/* One reply message under construction. */
struct nl_out {
	char buf[2048];
	size_t len;
	struct nlmsghdr *hdr;
};

/* Start a reply to @req: sequence echoed, addressed to @portid. */
void out_begin(struct nl_out *o, uint16_t type, uint16_t flags,
	       const struct nlmsghdr *req, uint32_t portid);
void out_put(struct nl_out *o, uint16_t type, const void *data, size_t len);
void out_u8(struct nl_out *o, uint16_t type, uint8_t v);
void out_u32(struct nl_out *o, uint16_t type, uint32_t v);
void out_u64(struct nl_out *o, uint16_t type, uint64_t v);
void out_str(struct nl_out *o, uint16_t type, const char *s);
/* Queue the message on the socket (dropped if the queue is full). */
void out_send(struct emu_nlsock *s, struct nl_out *o);
/* NLMSG_DONE closing a dump */
void out_done(struct emu_nlsock *s, const struct nlmsghdr *req);

/* rtnetlink.c: handle one NETLINK_ROUTE request; NL_DUMP_DONE, 0 or -errno */
#define NL_DUMP_DONE 1		/* handler result: dump sent, no ack */
int emu_rtnl_dispatch(struct emu_nlsock *s, const struct nlmsghdr *req);
/* rtnetlink_addr.c: an RTM_GETADDR request */
int emu_rtnl_getaddr(struct emu_nlsock *s, const struct nlmsghdr *req);

#endif /* MANA_EMU_NETLINK_OUT_H */
