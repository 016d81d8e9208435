/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Fake NETLINK_RDMA: what libibverbs (through libnl) asks the kernel's
 * RDMA netlink "nldev" client, answered the way the kernel answers.
 *
 * Each socket is one end of an AF_UNIX datagram socketpair, so the
 * application can poll and read it like a netlink socket; requests sent
 * on it are handled here synchronously and the replies queued on the
 * other end as one datagram per netlink message.  recvmsg() reports the
 * kernel (port 0) as the sender.
 */
#include "netlink.h"

#include <net/if.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "emulator/core/emu.h"
#include "emulator/core/emu_defs.h"
#include "kernel.h"
#include "emulator/core/links.h"
#include "emulator/lib/libc.h"
#include "netlink_out.h"

#define CHARDEV_TYPE_SIZE 16	/* RDMA_NLDEV_ATTR_CHARDEV_TYPE_SIZE */
#define NL_MAX_REQUEST 65536


static struct emu_nlsock *nl_socks;
static uint32_t nl_rover = (uint32_t)-4096;


static struct emu_nlsock *sock_by_port(uint32_t portid)
{
	struct emu_nlsock *s;

	for (s = nl_socks; s; s = s->next)
		if (s->bound && s->portid == portid)
			return s;
	return NULL;
}

int emu_nl_socket(int type, int protocol)
{
	int base = type & ~(SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct emu_nlsock *s;
	int sv[2], ret;

	if (base != SOCK_RAW && base != SOCK_DGRAM)
		return -ESOCKTNOSUPPORT;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_DGRAM | (type & ~base), 0, sv)) {
		ret = -errno;
		goto err_free;
	}
	emu_libc_fcntl_int(sv[1], F_SETFD, FD_CLOEXEC);
	emu_libc_fcntl_int(sv[1], F_SETFL, O_NONBLOCK);
	ret = emu_fd_register(sv[0], EMU_FD_NETLINK, s);
	if (ret)
		goto err_close;
	s->app_fd = sv[0];
	s->dev_fd = sv[1];
	s->protocol = protocol;
	s->next = nl_socks;
	nl_socks = s;
	if (emu_verbose())
		emu_log("netlink socket fd %d (%s)", s->app_fd,
			protocol == NETLINK_RDMA ? "NETLINK_RDMA" :
						   "NETLINK_ROUTE");
	return s->app_fd;

err_close:
	emu_libc_close(sv[0]);
	emu_libc_close(sv[1]);
err_free:
	free(s);
	return ret;
}

void emu_nl_release(struct emu_nlsock *s)
{
	struct emu_nlsock **pp;

	for (pp = &nl_socks; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	emu_fd_unregister(s->app_fd);
	emu_libc_close(s->dev_fd);
	free(s);
}

/* netlink_autobind(): the process id first, then -4096, -4097, ... */
static void autobind(struct emu_nlsock *s)
{
	uint32_t port = getpid();

	while (sock_by_port(port))
		port = nl_rover--;
	s->portid = port;
	s->bound = true;
}

int emu_nl_bind(struct emu_nlsock *s, const struct sockaddr *addr,
		socklen_t len)
{
	struct sockaddr_nl nl;

	if (len < sizeof(nl))
		return -EINVAL;
	if (emu_copy_from_user(&nl, addr, sizeof(nl)))
		return -EFAULT;
	if (nl.nl_family != AF_NETLINK)
		return -EINVAL;
	if (s->bound) {
		if (nl.nl_pid != s->portid)
			return -EINVAL;
	} else if (nl.nl_pid) {
		if (sock_by_port(nl.nl_pid))
			return -EADDRINUSE;
		s->portid = nl.nl_pid;
		s->bound = true;
	} else {
		autobind(s);
	}
	s->groups = nl.nl_groups;
	return 0;
}

int emu_nl_getsockname(struct emu_nlsock *s, struct sockaddr *addr,
		       socklen_t *len)
{
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK,
				  .nl_pid = s->portid,
				  .nl_groups = s->groups };
	socklen_t avail;

	if (emu_copy_from_user(&avail, len, sizeof(avail)))
		return -EFAULT;
	if ((int)avail < 0)
		return -EINVAL;
	if (emu_copy_to_user(addr, &nl, avail < sizeof(nl) ? avail : sizeof(nl)))
		return -EFAULT;
	avail = sizeof(nl);
	return emu_copy_to_user(len, &avail, sizeof(avail));
}

int emu_nl_setsockopt(struct emu_nlsock *s, int level, int name,
		      const void *val, socklen_t len)
{
	/* Buffer sizes and the like apply to the socket that carries data. */
	if (level == SOL_SOCKET)
		return emu_libc_setsockopt(s->app_fd, level, name, val, len) ?
			       -errno : 0;
	/* Membership, ext ack, cap ack, strict checking: nothing to do. */
	if (level == SOL_NETLINK)
		return 0;
	return -ENOPROTOOPT;
}

static int put_int_opt(void *val, socklen_t *len, int v)
{
	socklen_t avail;

	if (emu_copy_from_user(&avail, len, sizeof(avail)))
		return -EFAULT;
	if (avail < sizeof(int))
		return -EINVAL;
	avail = sizeof(int);
	if (emu_copy_to_user(val, &v, sizeof(v)) ||
	    emu_copy_to_user(len, &avail, sizeof(avail)))
		return -EFAULT;
	return 0;
}

int emu_nl_getsockopt(struct emu_nlsock *s, int level, int name, void *val,
		      socklen_t *len)
{
	if (level == SOL_SOCKET && name == SO_DOMAIN)
		return put_int_opt(val, len, AF_NETLINK);
	if (level == SOL_SOCKET && name == SO_PROTOCOL)
		return put_int_opt(val, len, s->protocol);
	if (level == SOL_SOCKET)
		return emu_libc_getsockopt(s->app_fd, level, name, val, len) ?
			       -errno : 0;
	if (level == SOL_NETLINK)
		return put_int_opt(val, len, 0);
	return -ENOPROTOOPT;
}

void emu_nl_fill_name(void *name, socklen_t *namelen)
{
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };

	if (!name || !namelen)
		return;
	memcpy(name, &nl, *namelen < sizeof(nl) ? *namelen : sizeof(nl));
	*namelen = sizeof(nl);
}

/* ---- reply construction ------------------------------------------------ */

void out_begin(struct nl_out *o, uint16_t type, uint16_t flags,
		      const struct nlmsghdr *req, uint32_t portid)
{
	o->len = NLMSG_HDRLEN;
	o->hdr = (struct nlmsghdr *)o->buf;
	memset(o->hdr, 0, NLMSG_HDRLEN);
	o->hdr->nlmsg_type = type;
	o->hdr->nlmsg_flags = flags;
	o->hdr->nlmsg_seq = req->nlmsg_seq;
	o->hdr->nlmsg_pid = portid;
}

void out_put(struct nl_out *o, uint16_t type, const void *data,
		    size_t len)
{
	struct nlattr *nla = (struct nlattr *)(o->buf + o->len);
	size_t total = NLA_ALIGN(NLA_HDRLEN + len);

	if (o->len + total > sizeof(o->buf))
		return;	/* our messages are far smaller than the buffer */
	memset(nla, 0, total);
	nla->nla_type = type;
	nla->nla_len = NLA_HDRLEN + len;
	memcpy((char *)nla + NLA_HDRLEN, data, len);
	o->len += total;
}

void out_u8(struct nl_out *o, uint16_t type, uint8_t v)
{
	out_put(o, type, &v, sizeof(v));
}

void out_u32(struct nl_out *o, uint16_t type, uint32_t v)
{
	out_put(o, type, &v, sizeof(v));
}

/* x86-64 needs no pad attribute in front of 64-bit values. */
void out_u64(struct nl_out *o, uint16_t type, uint64_t v)
{
	out_put(o, type, &v, sizeof(v));
}

void out_str(struct nl_out *o, uint16_t type, const char *s)
{
	out_put(o, type, s, strlen(s) + 1);
}

void out_send(struct emu_nlsock *s, struct nl_out *o)
{
	o->hdr->nlmsg_len = o->len;
	/* A full queue drops the reply, as an overrun socket would. */
	if (emu_libc_send(s->dev_fd, o->buf, o->len, MSG_DONTWAIT) < 0 && emu_verbose())
		emu_log("netlink reply dropped: %s", emu_errname(errno));
}

/* netlink_ack(): errors echo the whole request, acks only its header */
static void send_error(struct emu_nlsock *s, const struct nlmsghdr *req,
		       int err)
{
	size_t echo = err ? req->nlmsg_len : NLMSG_HDRLEN;
	struct nl_out o;

	out_begin(&o, NLMSG_ERROR, err ? 0 : NLM_F_CAPPED, req, s->portid);
	if (o.len + sizeof(int) + echo > sizeof(o.buf))
		echo = NLMSG_HDRLEN;
	memcpy(o.buf + o.len, &err, sizeof(int));
	memcpy(o.buf + o.len + sizeof(int), req, echo);
	o.len += NLMSG_ALIGN(sizeof(int) + echo);
	out_send(s, &o);
}

/* ---- nldev requests ---------------------------------------------------- */

typedef const struct nlattr *nl_attrs_t[RDMA_NLDEV_ATTR_MAX];

/* nlmsg_parse() with the policies of the attributes we read */
static int parse_attrs(const struct nlmsghdr *req, nl_attrs_t tb)
{
	const char *p = (const char *)req + NLMSG_HDRLEN;
	size_t left = req->nlmsg_len - NLMSG_HDRLEN;

	memset(tb, 0, sizeof(nl_attrs_t));
	while (left >= NLA_HDRLEN) {
		const struct nlattr *nla = (const struct nlattr *)p;
		unsigned int type = nla->nla_type & NLA_TYPE_MASK;
		size_t len = nla->nla_len;

		if (len < NLA_HDRLEN || len > left)
			return -EINVAL;
		if (type < RDMA_NLDEV_ATTR_MAX)
			tb[type] = nla;
		len = NLA_ALIGN(len);
		if (len >= left)
			break;
		p += len;
		left -= len;
	}
	if (tb[RDMA_NLDEV_ATTR_DEV_INDEX] &&
	    tb[RDMA_NLDEV_ATTR_DEV_INDEX]->nla_len < NLA_HDRLEN + 4)
		return -EINVAL;
	if (tb[RDMA_NLDEV_ATTR_PORT_INDEX] &&
	    tb[RDMA_NLDEV_ATTR_PORT_INDEX]->nla_len < NLA_HDRLEN + 4)
		return -EINVAL;
	return 0;
}

static uint32_t attr_u32(const struct nlattr *nla)
{
	uint32_t v;

	memcpy(&v, (const char *)nla + NLA_HDRLEN, sizeof(v));
	return v;
}

/* The CHARDEV_TYPE string: NUL terminated and short. */
static const char *attr_chardev_type(const struct nlattr *nla)
{
	const char *str = (const char *)nla + NLA_HDRLEN;
	size_t len = nla->nla_len - NLA_HDRLEN;

	if (!len || !memchr(str, 0, len) || strlen(str) >= CHARDEV_TYPE_SIZE)
		return NULL;
	return str;
}

/* fill_dev_info() for one of the IB devices (core/ibdev.h) */
static void send_dev_info(struct emu_nlsock *s, const struct nlmsghdr *req,
			  uint16_t flags, const struct emu_ibdev *d)
{
	struct nl_out o;

	out_begin(&o, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET),
		  flags, req, s->portid);
	out_u32(&o, RDMA_NLDEV_ATTR_DEV_INDEX, d->index);
	out_str(&o, RDMA_NLDEV_ATTR_DEV_NAME, d->name);
	out_u32(&o, RDMA_NLDEV_ATTR_PORT_INDEX, d->nports);
	out_u64(&o, RDMA_NLDEV_ATTR_CAP_FLAGS, EMU_DEVICE_CAP_FLAGS);
	out_u64(&o, RDMA_NLDEV_ATTR_NODE_GUID, emu_dev.node_guid);
	out_u64(&o, RDMA_NLDEV_ATTR_SYS_IMAGE_GUID, emu_dev.node_guid);
	out_u8(&o, RDMA_NLDEV_ATTR_DEV_NODE_TYPE, RDMA_NODE_IB_CA);
	out_u8(&o, RDMA_NLDEV_ATTR_DEV_DIM, 0);
	out_send(s, &o);
}

void out_done(struct emu_nlsock *s, const struct nlmsghdr *req)
{
	struct nl_out o;
	int zero = 0;

	out_begin(&o, NLMSG_DONE, NLM_F_MULTI, req, s->portid);
	memcpy(o.buf + o.len, &zero, sizeof(zero));
	o.len += sizeof(zero);
	out_send(s, &o);
}

/* The IB devices exist only with mana_ib loaded on a MANA function. */
static const struct emu_ibdev *dev_index_ok(const struct nlattr *idx)
{
	if (!idx || attr_u32(idx) >= emu_dev.nibdevs ||
	    !mana_emu_has_ibdev(emu_dev.opts))
		return NULL;
	return &emu_dev.ibdev[attr_u32(idx)];
}

static int nl_get(struct emu_nlsock *s, const struct nlmsghdr *req,
		  nl_attrs_t tb)
{
	const struct emu_ibdev *d;
	unsigned int i;

	if (req->nlmsg_flags & NLM_F_DUMP) {
		for (i = 0; i < emu_dev.nibdevs; i++)
			if (mana_emu_has_ibdev(emu_dev.opts))
				send_dev_info(s, req, NLM_F_MULTI,
					      &emu_dev.ibdev[i]);
		out_done(s, req);
		return NL_DUMP_DONE;
	}
	d = dev_index_ok(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	if (!d)
		return -EINVAL;
	send_dev_info(s, req, 0, d);
	return 0;
}

/*
 * fill_port_info(): an Ethernet port carries no IB subnet attributes;
 * the state is query_port's, the netdev the one mana_ib paired with the
 * port (ib_device_set_netdev), i.e. the VF interface.
 */
static void send_port_info(struct emu_nlsock *s, const struct nlmsghdr *req,
			   uint16_t flags, const struct emu_ibdev *d,
			   unsigned int port)
{
	uint8_t state, phys;
	struct emu_link l;
	struct nl_out o;

	emu_port_state(port, &state, &phys);
	out_begin(&o, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_PORT_GET),
		  flags, req, s->portid);
	out_u32(&o, RDMA_NLDEV_ATTR_DEV_INDEX, d->index);
	out_str(&o, RDMA_NLDEV_ATTR_DEV_NAME, d->name);
	out_u32(&o, RDMA_NLDEV_ATTR_PORT_INDEX, port);
	out_u64(&o, RDMA_NLDEV_ATTR_CAP_FLAGS, 0);
	out_u8(&o, RDMA_NLDEV_ATTR_PORT_STATE, state);
	out_u8(&o, RDMA_NLDEV_ATTR_PORT_PHYS_STATE, phys);
	/* before 6.10 mana_ib paired no netdev with its ports */
	if (kernel_era()->ib_netdev &&
	    emu_link_of_port(emu_dev.opts, port, &l)) {
		out_u32(&o, RDMA_NLDEV_ATTR_NDEV_INDEX, l.ifindex);
		out_str(&o, RDMA_NLDEV_ATTR_NDEV_NAME, l.name);
	}
	out_send(s, &o);
}

/* A dump needs the device; a single port needs both indexes. */
static int nl_port_get(struct emu_nlsock *s, const struct nlmsghdr *req,
		       nl_attrs_t tb)
{
	const struct nlattr *port = tb[RDMA_NLDEV_ATTR_PORT_INDEX];
	const struct emu_ibdev *d = dev_index_ok(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	unsigned int p;

	if (!d)
		return -EINVAL;
	if (req->nlmsg_flags & NLM_F_DUMP) {
		for (p = 1; p <= d->nports; p++)
			send_port_info(s, req, NLM_F_MULTI, d, p);
		out_done(s, req);
		return NL_DUMP_DONE;
	}
	if (!port || !emu_ibdev_port_valid(d, attr_u32(port)))
		return -EINVAL;
	send_port_info(s, req, 0, d, attr_u32(port));
	return 0;
}

/* huge_encode_dev(): the kernel's 64-bit dev_t encoding */
static uint64_t huge_encode_dev(unsigned int major, unsigned int minor)
{
	return (minor & 0xff) | (major << 8) | ((uint64_t)(minor & ~0xffu) << 12);
}

static int nl_get_chardev(struct emu_nlsock *s, const struct nlmsghdr *req,
			  nl_attrs_t tb)
{
	const struct nlattr *port = tb[RDMA_NLDEV_ATTR_PORT_INDEX];
	const struct emu_ibdev *d;
	const char *type;
	struct nl_out o;
	char name[16];

	if (!tb[RDMA_NLDEV_ATTR_CHARDEV_TYPE])
		return -EINVAL;
	type = attr_chardev_type(tb[RDMA_NLDEV_ATTR_CHARDEV_TYPE]);
	if (!type)
		return -EINVAL;
	if (!tb[RDMA_NLDEV_ATTR_DEV_INDEX] && !port &&
	    !strcmp(type, "rdma_cm") && mana_emu_has_uverbs(emu_dev.opts)) {
		/* ucma: a global client (get_global_nl_info), no device */
		out_begin(&o, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV,
					       RDMA_NLDEV_CMD_GET_CHARDEV),
			  0, req, s->portid);
		out_u64(&o, RDMA_NLDEV_ATTR_CHARDEV,
			huge_encode_dev(EMU_UCMA_MAJOR, EMU_UCMA_MINOR));
		out_u64(&o, RDMA_NLDEV_ATTR_CHARDEV_ABI, EMU_UCMA_ABI);
		out_str(&o, RDMA_NLDEV_ATTR_CHARDEV_NAME, "rdma_cm");
		out_send(s, &o);
		return 0;
	}
	if (!tb[RDMA_NLDEV_ATTR_DEV_INDEX])
		return port ? -EINVAL : -EOPNOTSUPP;	/* no global uverbs */
	d = dev_index_ok(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	if (!d)
		return -EINVAL;
	if (port && !emu_ibdev_port_valid(d, attr_u32(port)))
		return -EINVAL;
	/* no such client: umad is not emulated, ib_uverbs may be missing */
	if (strcmp(type, "uverbs") || !mana_emu_has_uverbs(emu_dev.opts))
		return -EOPNOTSUPP;
	out_begin(&o,
		  RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET_CHARDEV),
		  0, req, s->portid);
	out_u32(&o, RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID, emu_dev.driver_id);
	out_u64(&o, RDMA_NLDEV_ATTR_CHARDEV,
		huge_encode_dev(EMU_UVERBS_MAJOR,
				EMU_UVERBS_MINOR_BASE + d->index));
	out_u64(&o, RDMA_NLDEV_ATTR_CHARDEV_ABI, EMU_UVERBS_ABI);
	snprintf(name, sizeof(name), "uverbs%u", d->index);
	out_str(&o, RDMA_NLDEV_ATTR_CHARDEV_NAME, name);
	out_send(s, &o);
	return 0;
}

/* Shared namespace mode, and copy-on-fork (kernels >= 5.13). */
static int nl_sys_get(struct emu_nlsock *s, const struct nlmsghdr *req,
		      nl_attrs_t tb)
{
	struct nl_out o;

	out_begin(&o, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SYS_GET),
		  0, req, s->portid);
	out_u8(&o, RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 1);
	out_u8(&o, RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK, 1);
	out_send(s, &o);
	return 0;
}

static const char *nldev_cmd_name(unsigned int op)
{
	switch (op) {
	case RDMA_NLDEV_CMD_GET: return "RDMA_NLDEV_CMD_GET";
	case RDMA_NLDEV_CMD_GET_CHARDEV: return "RDMA_NLDEV_CMD_GET_CHARDEV";
	case RDMA_NLDEV_CMD_SYS_GET: return "RDMA_NLDEV_CMD_SYS_GET";
	case RDMA_NLDEV_CMD_PORT_GET: return "RDMA_NLDEV_CMD_PORT_GET";
	default: return "unsupported";
	}
}

static int dispatch(struct emu_nlsock *s, const struct nlmsghdr *req)
{
	unsigned int client = RDMA_NL_GET_CLIENT(req->nlmsg_type);
	unsigned int op = RDMA_NL_GET_OP(req->nlmsg_type);
	nl_attrs_t tb;
	int ret;

	if (s->protocol == NETLINK_ROUTE)
		return emu_rtnl_dispatch(s, req);
	if (client != RDMA_NL_NLDEV)
		return -EOPNOTSUPP;
	ret = parse_attrs(req, tb);
	if (ret)
		return ret;
	switch (op) {
	case RDMA_NLDEV_CMD_GET:
		return nl_get(s, req, tb);
	case RDMA_NLDEV_CMD_GET_CHARDEV:
		return nl_get_chardev(s, req, tb);
	case RDMA_NLDEV_CMD_SYS_GET:
		return nl_sys_get(s, req, tb);
	case RDMA_NLDEV_CMD_PORT_GET:
		return nl_port_get(s, req, tb);
	default:
		return -EOPNOTSUPP;
	}
}

/* netlink_rcv_skb(): only requests are handled; control types are acked */
static void handle_message(struct emu_nlsock *s, const struct nlmsghdr *req)
{
	int ret = 0;

	if ((req->nlmsg_flags & NLM_F_REQUEST) &&
	    req->nlmsg_type >= NLMSG_MIN_TYPE)
		ret = dispatch(s, req);
	if (emu_verbose())
		emu_log("netlink fd %d type %u (%s) flags 0x%x seq %u -> %s",
			s->app_fd, req->nlmsg_type,
			s->protocol == NETLINK_ROUTE ? "rtnetlink" :
			RDMA_NL_GET_CLIENT(req->nlmsg_type) == RDMA_NL_NLDEV ?
				nldev_cmd_name(RDMA_NL_GET_OP(req->nlmsg_type)) :
				"unsupported",
			req->nlmsg_flags, req->nlmsg_seq,
			emu_errname(ret > 0 ? 0 : ret));
	if (ret == NL_DUMP_DONE)
		return;
	if (ret || (req->nlmsg_flags & NLM_F_ACK))
		send_error(s, req, ret);
}

static ssize_t gather(const struct msghdr *msg, char **out)
{
	size_t total = 0, off = 0, i;
	char *buf;

	for (i = 0; i < msg->msg_iovlen; i++)
		total += msg->msg_iov[i].iov_len;
	if (total > NL_MAX_REQUEST)
		return -EMSGSIZE;
	buf = malloc(total ? total : 1);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < msg->msg_iovlen; i++) {
		if (emu_copy_from_user(buf + off, msg->msg_iov[i].iov_base,
				       msg->msg_iov[i].iov_len)) {
			free(buf);
			return -EFAULT;
		}
		off += msg->msg_iov[i].iov_len;
	}
	*out = buf;
	return total;
}

static int check_dest(const struct msghdr *msg)
{
	struct sockaddr_nl nl;

	if (!msg->msg_name || !msg->msg_namelen)
		return 0;
	if (msg->msg_namelen < sizeof(nl))
		return -EINVAL;
	if (emu_copy_from_user(&nl, msg->msg_name, sizeof(nl)))
		return -EFAULT;
	if (nl.nl_family != AF_NETLINK)
		return -EINVAL;
	/* Only the kernel listens in this emulation. */
	return nl.nl_pid || nl.nl_groups ? -ECONNREFUSED : 0;
}

ssize_t emu_nl_sendmsg(struct emu_nlsock *s, const struct msghdr *msg)
{
	ssize_t total;
	size_t off = 0;
	char *buf;
	int ret;

	ret = check_dest(msg);
	if (ret)
		return ret;
	total = gather(msg, &buf);
	if (total < 0)
		return total;
	if (!s->bound)
		autobind(s);
	while ((size_t)total - off >= NLMSG_HDRLEN) {
		struct nlmsghdr *nlh = (struct nlmsghdr *)(buf + off);
		size_t len = nlh->nlmsg_len;

		if (len < NLMSG_HDRLEN || len > (size_t)total - off)
			break;
		handle_message(s, nlh);
		len = NLMSG_ALIGN(len);
		if (len > (size_t)total - off)
			break;
		off += len;
	}
	free(buf);
	return total;
}
