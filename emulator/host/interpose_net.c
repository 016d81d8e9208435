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
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "emulator/core/emu.h"
#include "emulator/core/links.h"
#include "emulator/kernel/kernel.h"

#include "init.h"
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
