// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libmana-emu.so start-up, in the application's process: the constructor
 * (options, sysfs tree, report pipe, kernel and device, the doorbell
 * trap's hooks), fork handlers, the destructor and emu_init() for the
 * interposers that run before it.  The state it fills in is core/emu.c's.
 */
#include "emulator/core/emu.h"
#include "emulator/core/vm.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emulator/core/netdev.h"
#include "emulator/device/device.h"
#include "emulator/device/trap.h"
#include "emulator/kernel/kernel.h"
#include "emulator/kernel/rdma_cm.h"
#include "emulator/lib/quiet_thread.h"
#include "emulator/mana_emu.h"
#include "emulator/core/links.h"
#include "init.h"
#include "exit_signal.h"
#include "sysfs.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
bool emu_started;

static void __attribute__((noreturn, format(printf, 1, 2)))
emu_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emu_vlog(fmt, ap);
	va_end(ap);
	_exit(2);	/* the status of a bad launcher option */
}

static void load_options(void)
{
	const char *env = getenv(MANA_EMU_ENV_OPTIONS);
	char err[256];

	mana_emu_options_init(&emu.opts);
	if (env && mana_emu_options_parse_string(&emu.opts, env, err,
						 sizeof(err)))
		emu_die("%s", err);
	if (emu.opts.help)
		emu_log("%s: --help ignored (launcher only)",
			MANA_EMU_ENV_OPTIONS);
	/* --vm: create or join the VM; a joiner takes the VM's options */
	if (emu.opts.vm[0]) {
		if (emu_vm_attach(&emu.opts, err, sizeof(err)))
			emu_die("%s", err);
		/* stores to pages of other processes' files go to them */
		trap_set_route_hook(emu_vm_route_doorbell);
	}
}

/*
 * The tree MANA_EMU_SYSFS names is ours to remove if this process made it
 * before an exec (same pid): the image that made it never reaches its
 * destructor.
 */
static bool made_before_exec(void)
{
	const char *owner = getenv(MANA_EMU_ENV_SYSFS_OWNER);
	char *end;
	long pid;

	if (!owner || !*owner)
		return false;
	errno = 0;
	pid = strtol(owner, &end, 10);
	return !errno && !*end && pid == (long)getpid();
}

/*
 * The launcher made the tree (MANA_EMU_SYSFS); otherwise this is the
 * environment form and we make our own.  libibverbs reads SYSFS_PATH
 * lazily, so setting it here is early enough.
 */
static void setup_sysfs(void)
{
	const char *root = getenv(MANA_EMU_ENV_SYSFS);
	char err[256], pci[sizeof(emu.sysfs_root) + 32], pid[24];

	if (root && *root) {
		snprintf(emu.sysfs_root, sizeof(emu.sysfs_root), "%s", root);
		if (made_before_exec()) {
			emu.own_sysfs = true;
			emu.sysfs_owner = getpid();
		}
		return;
	}
	if (mana_emu_sysfs_create(&emu.opts, emu.sysfs_root, err, sizeof(err)))
		emu_die("%s", err);
	emu.own_sysfs = true;
	emu.sysfs_owner = getpid();
	snprintf(pci, sizeof(pci), "%s/bus/pci/devices", emu.sysfs_root);
	/* Children we exec reuse this tree instead of making their own. */
	if (setenv("SYSFS_PATH", emu.sysfs_root, 1) ||
	    setenv("SYSFS_PCI_DEVICES", pci, 1) ||
	    setenv(MANA_EMU_ENV_SYSFS, emu.sysfs_root, 1))
		emu_die("setenv: %s", strerror(errno));
	snprintf(pid, sizeof(pid), "%ld", (long)emu.sysfs_owner);
	if (setenv(MANA_EMU_ENV_SYSFS_OWNER, pid, 1))
		emu_die("setenv: %s", strerror(errno));
	if (emu_verbose())
		emu_log("sysfs tree %s (environment form)", emu.sysfs_root);
}

/* The netdev listener: port events (kernel), then the sysfs view. */
static void netdev_changed(unsigned int ifindex, const struct emu_netdev *old,
			   const struct emu_netdev *now)
{
	emu_link_changed(ifindex, old, now);
	mana_emu_sysfs_refresh(emu.sysfs_root, &emu.opts);
}

/*
 * The interfaces' state is the VM's: with --vm the table in the VM's
 * segment, else the run's, in its tree, which every process of the run
 * maps (a tree without one: this process's own).
 */
static void setup_netdevs(void)
{
	static struct emu_netdev_table own;
	struct emu_netdev_table *t;

	/*
	 * --vm: the VM's table, whatever run this process came from; its
	 * tree (made from the options) is brought to the VM's state now and
	 * follows every change from the watcher on.
	 */
	t = emu_vm_netdev_table();
	if (t) {
		emu_netdev_set_listener(netdev_changed);
		emu_netdev_attach(t);
		mana_emu_sysfs_refresh(emu.sysfs_root, &emu.opts);
		emu_link_watch();
		return;
	}
	t = mana_emu_sysfs_netdev_map(emu.sysfs_root);
	if (!t || t->count != emu_link_count(&emu.opts)) {
		if (emu_verbose())
			emu_log("no shared interface state in %s: this process's own",
				emu.sysfs_root);
		emu_netdev_table_init(&own, &emu.opts);
		t = &own;
	}
	emu_netdev_set_listener(netdev_changed);
	emu_netdev_attach(t);
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&emu.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&emu.lock);
}

static void fork_child(void)
{
	emu_user_copy_init(trap_fixup_ready);
	emu_device_fork_child();
	emu_link_fork_child();
	emu_cm_fork_child();
	pthread_mutex_unlock(&emu.lock);
}

static void do_init(void)
{
	/* before main() can narrow this thread (DPDK pins it to its lcore) */
	emu_thread_cpus_capture();
	/* user copies go direct once the trap that resumes them is in */
	trap_set_fixup_hook(emu_user_copy_fixup);
	emu_user_copy_init(trap_fixup_ready);
	load_options();
	setup_sysfs();
	emu_report_init();
	emu_kernel_init(&emu.opts);
	setup_netdevs();
	emu_exit_signals_setup();
	trap_set_fatal_hook(emu_exit_fatal_signal);
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	__atomic_store_n(&emu_started, true, __ATOMIC_RELEASE);
}

void emu_init(void)
{
	pthread_once(&init_once, do_init);
}

static void __attribute__((constructor)) emu_constructor(void)
{
	emu_init();
}

static void __attribute__((destructor)) emu_destructor(void)
{
	/* while the device thread still runs to send and receive */
	emu_exit_cm_disconnect();
	emu_device_shutdown();
	emu_vm_detach();
	/* Forked children share the tree; only its creator removes it. */
	if (emu.own_sysfs && emu.sysfs_owner == getpid())
		mana_emu_sysfs_remove(emu.sysfs_root);
}

/* ---- test API ----------------------------------------------------------- */

EMU_EXPORT int mana_emu_kernel_version(void)
{
	const char *v = emu_era_get(emu.opts.kernel)->version;
	char *end;
	long major = strtol(v, &end, 10);

	return (int)(major * 1000 + strtol(end + 1, NULL, 10));
}

EMU_EXPORT int mana_emu_object_counts(struct mana_emu_counts *out)
{
	if (!out) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&emu.lock);
	emu_fill_counts(out);
	pthread_mutex_unlock(&emu.lock);
	return 0;
}
