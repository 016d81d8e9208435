// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Link administration of the VM's interfaces, as the drivers behind them
 * answer it: `ip link set ... up|down|mtu N` (rtnetlink.c) and the
 * SIOCSIF* ioctls (host/interpose_net.c) end here, and the state lives in
 * core/netdev.h.
 *
 * - mana_en (the VF): ndo_open configures the port's vport for the kernel
 *   (mana_alloc_queues -> mana_cfg_vport), which fails EBUSY while a raw
 *   QP's PD holds it; ndo_stop releases it, and the carrier follows.
 *   MTU: dev_validate_mtu() against min_mtu 68 and max_mtu adapter MTU -
 *   14 = 9000 (6.2: min = max = 1500), EINVAL outside; mana_change_mtu()
 *   detaches and re-attaches the queues, which cannot fail here.
 * - hv_netvsc (the synthetic master): netvsc_open() opens the VF too and
 *   only warns when that fails; netvsc_close() closes it; a new MTU goes
 *   to the VF first (its error is the answer), then to the master (68 ..
 *   65521, NETVSC_MTU - ETH_HLEN).
 *
 * Port events (era port_events, from 6.14): the core's netdev notifier
 * dispatches IB_EVENT_PORT_ACTIVE / PORT_ERR when the netdev a port is
 * bound to starts or stops running with carrier.  mana_ib binds the RNIC
 * port to mana_get_primary_netdev(): on Azure the netvsc master, not the
 * VF; the ETH device's ports are bound to nothing.  query_port reads the
 * VF (mana_ib_get_netdev: mc->ports[]), so `ip link set VF down` turns
 * the port DOWN without an event, and the master going down (which
 * closes the VF) sends PORT_ERR.
 */
#include "kernel.h"

#include <net/if.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <linux/capability.h>
#include <linux/if.h>

#include <infiniband/verbs.h>

#include "emulator/core/links.h"
#include "emulator/core/netdev.h"
#include "emulator/lib/quiet_thread.h"

#define MANA_MIN_MTU 68			/* ETH_MIN_MTU */
#define MANA_MAX_MTU 9000		/* adapter MTU 9014 - ETH_HLEN */
#define MANA_6_2_MTU 1500		/* 6.2: min_mtu = max_mtu = ETH_DATA_LEN */
#define NETVSC_MAX_MTU 65521		/* NETVSC_MTU - ETH_HLEN */
#define LO_MAX_MTU 65535		/* ETH_MAX_MTU */

/* CAP_NET_ADMIN in the effective set: what rtnetlink and SIOCSIF* want. */
bool emu_net_admin(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (geteuid() == 0)
		return true;
	if (syscall(SYS_capget, &h, d))
		return false;
	return d[CAP_NET_ADMIN / 32].effective & (1u << (CAP_NET_ADMIN % 32));
}

static const struct mana_emu_options *opts(void)
{
	return emu_dev.opts;
}

bool emu_port_netdev_open(unsigned int port)
{
	struct emu_link l;

	return emu_link_of_port(opts(), port, &l) && (l.flags & IFF_UP);
}

bool emu_port_netdev_running(unsigned int port)
{
	struct emu_link l;

	return emu_link_of_port(opts(), port, &l) && l.carrier;
}

unsigned int emu_port_netdev_mtu(unsigned int port)
{
	struct emu_link l;

	return emu_link_of_port(opts(), port, &l) ? l.mtu : opts()->mtu;
}

static int link_store(const struct emu_link *l, bool up, unsigned int mtu)
{
	struct emu_netdev nd;

	if (!emu_netdev_get(opts(), l->ifindex, &nd))
		return -ENODEV;
	nd.mtu = mtu;
	if (up) {
		nd.flags |= IFF_UP;
		nd.carrier = 1;
	} else {
		nd.flags &= ~IFF_UP;
		/* lo keeps its carrier; the others lose it with the queues */
		nd.carrier = l->kind == EMU_LINK_LO;
	}
	if (l->kind != EMU_LINK_LO)
		nd.operstate = up ? IF_OPER_UP : IF_OPER_DOWN;
	return emu_netdev_set(l->ifindex, &nd);
}

/*
 * mana_open() / mana_close() of the VF of @l->port.  The vport may be
 * held by a raw QP of this process or (the table knows) of another one
 * of the VM.
 */
static int vf_set_up(const struct emu_link *l, bool up)
{
	int ret;

	if (!!(l->flags & IFF_UP) == up)
		return 0;
	ret = up && emu_dev.ports[l->port - 1].vport.pd ? -EBUSY :
	      link_store(l, up, l->mtu);
	if (ret == -EBUSY && emu_verbose())
		emu_log("%s: mana_open: vport %u held by a raw QP: EBUSY",
			l->name, l->port);
	return ret;
}

/*
 * mana_cfg_vport() for a raw QP: the VF's vport, shared by the VM's
 * processes (core/netdev.h).  0 when the port has no VF netdev.
 */
int emu_port_vport_claim(unsigned int port)
{
	struct emu_link l;
	int ret;

	if (!emu_link_of_port(opts(), port, &l))
		return 0;
	ret = emu_netdev_vport_claim(l.ifindex, getpid());
	return ret == -ENODEV ? 0 : ret;
}

void emu_port_vport_release(unsigned int port)
{
	struct emu_link l;

	if (emu_link_of_port(opts(), port, &l))
		emu_netdev_vport_release(l.ifindex, getpid());
}

int emu_link_set_up(unsigned int ifindex, bool up)
{
	struct emu_link l, vf;
	int ret;

	if (!ifindex || !emu_link_get(opts(), ifindex - 1, &l))
		return -ENODEV;
	switch (l.kind) {
	case EMU_LINK_VF:
		return vf_set_up(&l, up);
	case EMU_LINK_SYNTHETIC:
		/*
		 * netvsc_open() / netvsc_close() open or close the VF inside
		 * their ndo, before the core notifies the master's change
		 * (and mana_ib its port event): so the VF first.  A VF that
		 * will not open stays down, quietly.
		 */
		if (emu_link_of_port(opts(), ifindex - 1, &vf)) {
			ret = vf_set_up(&vf, up);
			if (ret && emu_verbose())
				emu_log("%s: unable to open slave: %s: %d",
					l.name, vf.name, ret);
		}
		if (!!(l.flags & IFF_UP) != up)
			return link_store(&l, up, l.mtu);
		return 0;
	default:
		return !!(l.flags & IFF_UP) == up ? 0 : link_store(&l, up, l.mtu);
	}
}

static int mtu_store(const struct emu_link *l, unsigned int mtu)
{
	return link_store(l, l->flags & IFF_UP, mtu);
}

/* dev_set_mtu(): the same MTU is no change, then the range, then the driver */
static int vf_set_mtu(const struct emu_link *l, long mtu)
{
	bool jumbo = kernel_era()->jumbo_mtu;
	long min = jumbo ? MANA_MIN_MTU : MANA_6_2_MTU;
	long max = jumbo ? MANA_MAX_MTU : MANA_6_2_MTU;

	if (mtu == l->mtu)
		return 0;
	if (mtu < min || mtu > max) {
		if (emu_verbose())
			emu_log("%s: MTU %ld outside %ld..%ld: EINVAL", l->name,
				mtu, min, max);
		return -EINVAL;
	}
	return mtu_store(l, mtu);
}

int emu_link_set_mtu(unsigned int ifindex, long mtu)
{
	struct emu_link l, vf;
	int ret;

	if (!ifindex || !emu_link_get(opts(), ifindex - 1, &l))
		return -ENODEV;
	if (l.kind == EMU_LINK_VF)
		return vf_set_mtu(&l, mtu);
	if (mtu == l.mtu)
		return 0;
	if (mtu < MANA_MIN_MTU ||
	    mtu > (l.kind == EMU_LINK_LO ? LO_MAX_MTU : NETVSC_MAX_MTU))
		return -EINVAL;
	/* netvsc_change_mtu(): the VF's first, its failure is the answer */
	if (l.kind == EMU_LINK_SYNTHETIC &&
	    emu_link_of_port(opts(), ifindex - 1, &vf)) {
		ret = vf_set_mtu(&vf, mtu);
		if (ret)
			return ret;
	}
	return mtu_store(&l, mtu);
}

/* ---- what a change means to the IB devices ------------------------------- */

/* The ifindex the core watches for @d's @port: the VF's netvsc master. */
static unsigned int bound_netdev(const struct emu_ibdev *d, unsigned int port)
{
	struct emu_link vf;

	if (!kernel_era()->ib_netdev || !emu_ibdev_roce_port(d, port) ||
	    !emu_link_of_port(opts(), port, &vf))
		return 0;
	return vf.master;
}

/* Most flips one look reports: beyond, the newest of them. */
#define MAX_FLIPS 64

void emu_link_changed(unsigned int ifindex, const struct emu_netdev *old,
		      const struct emu_netdev *now)
{
	bool is = (now->flags & IFF_UP) && now->carrier;
	uint32_t flips = now->running_changes - old->running_changes, k;
	unsigned int i, port;

	if (emu_verbose())
		emu_log("link %u: flags 0x%x carrier %u mtu %u, %u flips",
			ifindex, now->flags, now->carrier, now->mtu, flips);
	if (!flips || !kernel_era()->port_events)
		return;
	if (flips > MAX_FLIPS)
		flips = MAX_FLIPS - (flips & 1);	/* same last state */
	/* each flip alternates; the last one left the link as it is now */
	for (k = flips; k > 0; k--) {
		bool up = (k - 1) % 2 ? !is : is;

		for (i = 0; i < emu_dev.nibdevs; i++)
			for (port = 1; port <= emu_dev.ibdev[i].nports; port++)
				if (bound_netdev(&emu_dev.ibdev[i], port) ==
				    ifindex)
					emu_post_port_event(
						&emu_dev.ibdev[i], port,
						up ? IBV_EVENT_PORT_ACTIVE :
						     IBV_EVENT_PORT_ERR);
	}
}

/* ---- changes made by other processes of the VM ---------------------------- */

static bool watching;

static void *watch_main(void *arg)
{
	uint32_t gen;

	(void)arg;
	for (;;) {
		gen = emu_netdev_generation();
		pthread_mutex_lock(&emu.lock);
		emu_netdev_sync();
		pthread_mutex_unlock(&emu.lock);
		emu_netdev_wait(gen);
	}
	return NULL;
}

/*
 * Port events reach this process's event files also when another process
 * (`ip link set` run by the application) made the change: a thread waits
 * on the table's generation from the first async event file on.
 */
void emu_link_watch(void)
{
	pthread_t t;

	if (watching || !emu_netdev_table())
		return;
	if (emu_thread_create(&t, watch_main, NULL, true)) {
		emu_log("link watcher not started: no port events for changes other processes make");
		return;
	}
	watching = true;
}

void emu_link_fork_child(void)
{
	watching = false;	/* threads do not survive fork() */
}

/* ---- SIOCGIF* / SIOCSIF* on a socket ---------------------------------------- */

/* dev_change_flags() changes these; the rest it keeps (or has no say in) */
#define IFF_CHANGEABLE (IFF_DEBUG | IFF_NOTRAILERS | IFF_NOARP | IFF_DYNAMIC | \
			IFF_MULTICAST | IFF_PORTSEL | IFF_AUTOMEDIA)

int emu_link_change_flags(const struct emu_link *l, unsigned int flags)
{
	if (((flags ^ l->flags) & IFF_CHANGEABLE) ||
	    (flags & (IFF_PROMISC | IFF_ALLMULTI))) {
		emu_log("%s: flags 0x%x: only IFF_UP is emulated", l->name,
			flags);
		return -EOPNOTSUPP;
	}
	return emu_link_set_up(l->ifindex, flags & IFF_UP);
}

/*
 * dev_ioctl() for the four requests applications make of the VM's
 * interfaces (DPDK's mtu_set: SIOCSIFMTU on an AF_INET socket).  1 when
 * the name is not one of the VM's: the host's interface then.
 */
int emu_link_ioctl(unsigned long request, void *arg)
{
	struct ifreq ifr;
	struct emu_link l;
	int ret;

	ret = emu_copy_from_user(&ifr, arg, sizeof(ifr));
	if (ret)
		return ret;
	ifr.ifr_name[IFNAMSIZ - 1] = 0;
	if (!emu_link_by_name(opts(), ifr.ifr_name, &l))
		return 1;
	switch (request) {
	case SIOCGIFFLAGS:
		ifr.ifr_flags = (short)(l.flags & 0xffff);
		return emu_copy_to_user(arg, &ifr, sizeof(ifr));
	case SIOCGIFMTU:
		ifr.ifr_mtu = (int)l.mtu;
		return emu_copy_to_user(arg, &ifr, sizeof(ifr));
	case SIOCSIFFLAGS:
		if (!emu_net_admin())
			return -EPERM;
		return emu_link_change_flags(&l, (unsigned short)ifr.ifr_flags |
						     (l.flags & ~0xffffu));
	case SIOCSIFMTU:
		if (!emu_net_admin())
			return -EPERM;
		ret = emu_link_set_mtu(l.ifindex, ifr.ifr_mtu);
		if (ret && emu_verbose())
			emu_log("SIOCSIFMTU %s %d: %s", l.name, ifr.ifr_mtu,
				emu_errname(-ret));
		return ret;
	default:
		return 1;
	}
}
