// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * if_nametoindex() and if_indextoname() for the emulated VM's interfaces
 * (core/links.h).  glibc answers them with SIOCGIFINDEX/SIOCGIFNAME
 * ioctls on a socket of its own, which an interposer of ioctl() never
 * sees (glibc calls its internal __ioctl), so they are interposed
 * themselves.  libibverbs needs them for the GID table without the GID
 * ioctls (gid_attrs/ndevs/N names the VF interface).  A name or index the
 * VM does not have falls through to the host.
 *
 * The interface ioctls applications make on a socket of their own
 * (SIOC[GS]IFFLAGS, SIOC[GS]IFMTU: DPDK's mana mtu_set) reach the
 * emulated kernel (kernel/link.c) when they name one of the VM's
 * interfaces; any other name, and any other fd, stays the host's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "emulator/core/emu.h"
#include "emulator/core/links.h"
#include "emulator/core/gid.h"
#include "emulator/kernel/kernel.h"

#include "init.h"
#include "emulator/kernel/rdma_cm.h"
#include "interpose.h"

EMU_EXPORT unsigned int if_nametoindex(const char *name)
{
	struct emu_link l;
	unsigned int i;

	if (emu_ready() && name)
		for (i = 0; emu_link_get(&emu.opts, i, &l); i++)
			if (!strcmp(l.name, name))
				return l.ifindex;
	return REAL(if_nametoindex)(name);
}

EMU_EXPORT char *if_indextoname(unsigned int ifindex, char name[IF_NAMESIZE])
{
	struct emu_link l;

	if (emu_ready() && ifindex && emu_link_get(&emu.opts, ifindex - 1, &l)) {
		memcpy(name, l.name, IF_NAMESIZE);
		return name;
	}
	return REAL(if_indextoname)(ifindex, name);
}

bool emu_is_link_ioctl(unsigned long request)
{
	return request == SIOCGIFFLAGS || request == SIOCSIFFLAGS ||
	       request == SIOCGIFMTU || request == SIOCSIFMTU;
}

int emu_link_ioctl_entry(int fd, unsigned long request, void *arg)
{
	struct stat st;
	int ret;

	/* sock_ioctl() answers them; any other file says ENOTTY */
	if (!emu_ready() || emu_libc_fstat(fd, &st) || !S_ISSOCK(st.st_mode))
		return 1;
	pthread_mutex_lock(&emu.lock);
	ret = emu_link_ioctl(request, arg);
	pthread_mutex_unlock(&emu.lock);
	return ret;
}

/*
 * IP between VMs.  On Azure the addresses of a VM's VF interface are those
 * of its virtual network, which the other VMs of that network reach over
 * TCP and UDP (programs like qperf and perftest without -R exchange their
 * parameters so, then connect RDMA to the same address).  The emulated VMs
 * of one host have no IP network of their own: a connect() or sendto() to
 * an address in one of this VM's --ip subnets goes to the host's loopback
 * at the same port, where the other VM's server listens on the wildcard
 * address.  Every other destination is the host's.
 */
static bool in_vm_subnet(const struct sockaddr *sa, socklen_t len)
{
	const uint8_t *a;
	unsigned int i;
	int family;

	if (!sa || len < sizeof(sa_family_t))
		return false;
	family = sa->sa_family;
	if (family == AF_INET && len >= sizeof(struct sockaddr_in))
		a = (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
	else if (family == AF_INET6 && len >= sizeof(struct sockaddr_in6))
		a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
	else
		return false;
	for (i = 0; i < emu.opts.nips; i++)
		if (emu.opts.ips[i].family == family &&
		    emu_ip_in_subnet(&emu.opts.ips[i], a))
			return true;
	return false;
}

/* @sa with the host's loopback address of its family, same port. */
static void to_loopback(const struct sockaddr *sa, socklen_t len,
			     struct sockaddr_storage *out)
{
	memcpy(out, sa, len);
	if (sa->sa_family == AF_INET)
		((struct sockaddr_in *)out)->sin_addr.s_addr =
			htonl(INADDR_LOOPBACK);
	else
		((struct sockaddr_in6 *)out)->sin6_addr = in6addr_loopback;
}

const struct sockaddr *emu_ip_dest(const struct sockaddr *addr,
				   socklen_t len, struct sockaddr_storage *lo)
{
	if (emu_ready() && len <= sizeof(*lo) && in_vm_subnet(addr, len)) {
		to_loopback(addr, len, lo);
		return (const struct sockaddr *)lo;
	}
	return addr;
}

/*
 * Nobody listens at that port on the host: a real subnet answers so (a
 * RST: ECONNREFUSED) only if a host has the address; with no neighbour
 * ARP/ND fails after its probes and connect() says EHOSTUNREACH.  The
 * emulated stack asks the wire as the kernel would (emu_ip_neigh(): about
 * 4 s unanswered).  Only a blocking connect() learns of the refusal here;
 * a non-blocking one keeps the loopback's answer (EINPROGRESS, then
 * SO_ERROR ECONNREFUSED).
 */
EMU_EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct sockaddr_storage lo;
	const struct sockaddr *to = emu_ip_dest(addr, len, &lo);
	int ret = REAL(connect)(fd, to, len);

	if (ret && errno == ECONNREFUSED && to != addr)
		errno = emu_ip_neigh(addr, len) == -EHOSTUNREACH ?
			EHOSTUNREACH : ECONNREFUSED;
	return ret;
}
