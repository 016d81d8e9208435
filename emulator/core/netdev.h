/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The live state of the VM's network interfaces (links.h names them):
 * administrative state, carrier, operstate, MTU, and the generation
 * counter that tells a process something changed.
 *
 * The table is plain old data (no pointers, fixed size), so it can live
 * in memory several processes map: a run's processes share the one in
 * the run's tree (host/init.c maps EMU_NETDEV_FILE), and a VM that
 * processes join can place it in its own shared memory with
 * emu_netdev_attach().  Every change goes through one seam:
 * emu_netdev_set() stores an interface's new state, bumps the
 * generation and wakes waiters (a futex on the generation word), then
 * runs emu_netdev_sync() in the calling process.  emu_netdev_sync()
 * compares the table with what this process saw last and calls the
 * listener (host/init.c: port events, sysfs) once per changed
 * interface; a process that learns of a change made elsewhere (its
 * watcher thread woke in emu_netdev_wait()) calls it too.
 *
 * What each state means is the kernel's (kernel/link.c makes the
 * changes as mana_en and hv_netvsc make them); this module only keeps
 * them.
 */
#ifndef MANA_EMU_NETDEV_H
#define MANA_EMU_NETDEV_H

#include <stdbool.h>
#include <stdint.h>

#include "options.h"

/* lo, one synthetic interface and one VF per port */
#define EMU_NETDEV_MAX (1 + 2 * MANA_EMU_MAX_PORTS)
#define EMU_NETDEV_MAGIC 0x6e657402u	/* "ne", version 2 */
/* The run's shared table, in the root of its sysfs tree. */
#define EMU_NETDEV_FILE ".mana-emu-netdev"

/* One interface.  Only IFF_UP of @flags is kept: the rest is derived. */
struct emu_netdev {
	uint32_t flags;		/* IFF_UP: administratively up */
	uint32_t mtu;
	/*
	 * Times it started or stopped running with carrier: a process that
	 * looks after two flips (up, down) still sees both.
	 */
	uint32_t running_changes;
	/*
	 * A VF's vport (mana_port_context's vport_use_count): the process
	 * whose raw QP configured it (mana_ib's mana_cfg_vport), 0 if none.
	 * Never together with IFF_UP (mana_open configures it for the
	 * kernel).  A holder that died without releasing holds nothing:
	 * the pid alone would not say so once the pid is reused, so its
	 * start time (emu_proc_start_time()) is kept with it.
	 */
	int32_t vport_pid;
	uint8_t carrier;	/* netif_carrier_ok() */
	uint8_t operstate;	/* IF_OPER_* */
	uint8_t reserved[2];
	uint64_t vport_start;
};

struct emu_netdev_table {
	uint32_t magic;		/* EMU_NETDEV_MAGIC once initialised */
	uint32_t count;		/* interfaces in use, ifindex 1..count */
	uint32_t generation;	/* futex word, bumped by every change */
	uint32_t lock;		/* spin lock of the writers (0 free) */
	struct emu_netdev dev[EMU_NETDEV_MAX];
};

/* The start state of a VM with options @o (--netdev-up, --mtu). */
void emu_netdev_table_init(struct emu_netdev_table *t,
			   const struct mana_emu_options *o);
/*
 * Use @t (already initialised, e.g. mapped shared) from now on.  Until a
 * table is attached, readers get the start state of their options.
 */
void emu_netdev_attach(struct emu_netdev_table *t);
/* The attached table, or NULL. */
struct emu_netdev_table *emu_netdev_table(void);

/* Interface @ifindex now; false if there is none. */
bool emu_netdev_get(const struct mana_emu_options *o, unsigned int ifindex,
		    struct emu_netdev *out);
/* netif_running() && netif_carrier_ok(): what query_port tests. */
bool emu_netdev_running(const struct mana_emu_options *o,
			unsigned int ifindex);
/* The IFF_* flags RTM_NEWLINK and SIOCGIFFLAGS report (+ @static_flags). */
unsigned int emu_netdev_ifflags(const struct emu_netdev *nd,
				unsigned int static_flags);

/*
 * The seam: store @nd as interface @ifindex's state (its running_changes
 * is the table's, one more if the interface started or stopped
 * running; its vport_pid the table's), bump the generation, wake
 * emu_netdev_wait()ers, then emu_netdev_sync().  -ENODEV without a
 * table or interface; -EBUSY (nothing changes) when @nd brings it up
 * while a live process holds its vport.
 */
int emu_netdev_set(unsigned int ifindex, const struct emu_netdev *nd);
/*
 * Take interface @ifindex's vport for process @pid: -EBUSY while it is
 * up or another live process holds it, -ENODEV without a table or
 * interface (the caller's own vport rules then stand alone).
 */
int emu_netdev_vport_claim(unsigned int ifindex, int32_t pid);
/* Give it back, if @pid holds it. */
void emu_netdev_vport_release(unsigned int ifindex, int32_t pid);
/*
 * Process @pid's start time (/proc/PID/stat field 22, clock ticks), 0 if
 * it is gone: with the pid, a process's identity that a reused pid does
 * not take over (the vport holders here, core/vm.c's process table).
 */
uint64_t emu_proc_start_time(int32_t pid);

/* Called per changed interface with the state this process saw before. */
typedef void (*emu_netdev_listener_t)(unsigned int ifindex,
				      const struct emu_netdev *old,
				      const struct emu_netdev *now);
void emu_netdev_set_listener(emu_netdev_listener_t fn);
/* Tell this process's listener what changed since it last looked. */
void emu_netdev_sync(void);
/* The generation now (0 without a table). */
uint32_t emu_netdev_generation(void);
/* Sleep until the generation differs from @seen (or a spurious wake-up). */
void emu_netdev_wait(uint32_t seen);

#endif /* MANA_EMU_NETDEV_H */
