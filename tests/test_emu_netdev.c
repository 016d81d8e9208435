// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The interfaces' live state (emulator/core/netdev.h) on its own: the
 * start state from the options, the set-and-notify seam, a change made
 * by another process through a shared table (what a process of the run
 * sees when it looks: both flips of an up-down pair), the generation
 * futex waking a waiter, and the flags RTM_NEWLINK reports.
 */
#include <errno.h>
#include <net/if.h>
#include <linux/if.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "emulator/core/netdev.h"
#include "emulator/core/options.h"

static struct mana_emu_options opts;
static unsigned int calls, last_ifindex;
static struct emu_netdev last_old, last_now;

static void listener(unsigned int ifindex, const struct emu_netdev *old,
		     const struct emu_netdev *now)
{
	calls++;
	last_ifindex = ifindex;
	last_old = *old;
	last_now = *now;
}

static void set_vf(unsigned int vf, bool up)
{
	struct emu_netdev nd;

	emu_netdev_get(&opts, vf, &nd);
	nd.flags = up ? IFF_UP : 0;
	nd.carrier = up;
	nd.operstate = up ? IF_OPER_UP : IF_OPER_DOWN;
	emu_netdev_set(vf, &nd);
}

static void *waiter(void *arg)
{
	uint32_t seen = *(uint32_t *)arg;

	/* no timeout: woken by the change, or the test hangs (ctest's limit) */
	while (emu_netdev_generation() == seen)
		emu_netdev_wait(seen);
	return NULL;
}

int main(void)
{
	/* lo, eth0, eth1, VF 1 (ifindex 4), VF 2 */
	const unsigned int vf = 4, eth0 = 2;
	struct emu_netdev_table *t;
	struct emu_netdev nd;
	uint32_t gen;
	pthread_t w;
	pid_t pid;
	int st;

	mana_emu_options_init(&opts);
	opts.ports = 2;
	opts.mtu = 4000;

	/* before a table: the options' start state */
	CHECK(emu_netdev_get(&opts, vf, &nd) && !(nd.flags & IFF_UP) &&
	      nd.mtu == 4000 && nd.operstate == IF_OPER_DOWN, "start: VF down");
	CHECK(emu_netdev_get(&opts, 1, &nd) && nd.mtu == 65536 &&
	      (nd.flags & IFF_UP), "start: lo up");
	CHECK(!emu_netdev_get(&opts, 6, &nd), "no ifindex 6");
	CHECK(emu_netdev_set(vf, &nd) == -ENODEV, "no table: ENODEV");
	opts.netdev_up = true;
	CHECK(emu_netdev_running(&opts, vf), "--netdev-up: running");
	opts.netdev_up = false;

	/* the table in memory a forked process shares, as the run's file */
	t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(t != MAP_FAILED, "mmap");
	if (t == MAP_FAILED)
		return check_done();
	emu_netdev_table_init(t, &opts);
	CHECK(t->magic == EMU_NETDEV_MAGIC && t->count == 5, "count %u", t->count);
	emu_netdev_set_listener(listener);
	emu_netdev_attach(t);
	CHECK(emu_netdev_table() == t, "attached");
	CHECK(emu_netdev_set(6, &nd) == -ENODEV, "ifindex 6: ENODEV");

	/* our own change: the listener at once, one running flip */
	gen = emu_netdev_generation();
	set_vf(vf, true);
	CHECK(emu_netdev_generation() == gen + 1, "generation bumped");
	CHECK(calls == 1 && last_ifindex == vf, "listener: %u calls", calls);
	CHECK(last_now.running_changes - last_old.running_changes == 1 &&
	      (last_now.flags & IFF_UP) && !(last_old.flags & IFF_UP),
	      "one flip, up");
	/* an MTU change is no flip */
	emu_netdev_get(&opts, vf, &nd);
	nd.mtu = 9000;
	emu_netdev_set(vf, &nd);
	CHECK(calls == 2 && last_now.mtu == 9000 &&
	      last_now.running_changes == last_old.running_changes, "mtu only");

	/* another process flips eth0 up and down before we look */
	pid = fork();
	if (!pid) {
		emu_netdev_attach(t);
		set_vf(eth0, true);
		set_vf(eth0, false);
		_exit(0);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st),
	      "child");
	CHECK(calls == 2, "nothing until we look");
	emu_netdev_sync();
	CHECK(calls == 3 && last_ifindex == eth0 &&
	      !(last_now.flags & IFF_UP) && !(last_old.flags & IFF_UP) &&
	      last_now.running_changes - last_old.running_changes == 2,
	      "both flips seen: %u", last_now.running_changes -
	      last_old.running_changes);
	emu_netdev_sync();
	CHECK(calls == 3, "nothing new");

	/* a waiter wakes when the generation moves */
	gen = emu_netdev_generation();
	emu_netdev_wait(gen - 1);	/* differs: returns at once */
	pthread_create(&w, NULL, waiter, &gen);
	set_vf(vf, false);
	pthread_join(w, NULL);
	CHECK(emu_netdev_generation() != gen, "waiter woke");

	/* the vport: never with IFF_UP; a dead holder holds nothing */
	CHECK(emu_netdev_vport_claim(vf, getpid()) == 0, "claim (VF down)");
	CHECK(emu_netdev_vport_claim(vf, getpid()) == 0, "claim again: ours");
	emu_netdev_get(&opts, vf, &nd);
	nd.flags = IFF_UP;
	nd.carrier = 1;
	calls = 0;
	CHECK(emu_netdev_set(vf, &nd) == -EBUSY && calls == 0 &&
	      !emu_netdev_running(&opts, vf), "up while held: EBUSY, no change");
	pid = fork();
	if (!pid)
		_exit(emu_netdev_vport_claim(vf, getpid()) == -EBUSY ? 0 : 1);
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st),
	      "another process: EBUSY");
	emu_netdev_vport_release(vf, getpid() + 1);	/* not its holder */
	CHECK(emu_netdev_set(vf, &nd) == -EBUSY, "still held");
	emu_netdev_vport_release(vf, getpid());
	CHECK(emu_netdev_set(vf, &nd) == 0 && emu_netdev_running(&opts, vf),
	      "released: up");
	CHECK(emu_netdev_vport_claim(vf, getpid()) == -EBUSY, "claim while up");
	nd.flags = 0;
	nd.carrier = 0;
	emu_netdev_set(vf, &nd);
	pid = fork();
	if (!pid)	/* claims and ends without giving it back */
		_exit(emu_netdev_vport_claim(vf, getpid()) ? 1 : 0);
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st),
	      "child claimed");
	CHECK(emu_netdev_vport_claim(vf, getpid()) == 0, "dead holder: free");
	emu_netdev_vport_release(vf, getpid());

	/* the flags RTM_NEWLINK carries */
	nd = (struct emu_netdev){ .flags = IFF_UP, .carrier = 1 };
	CHECK(emu_netdev_ifflags(&nd, IFF_BROADCAST) ==
	      (IFF_BROADCAST | IFF_UP | IFF_RUNNING | IFF_LOWER_UP), "up");
	nd.carrier = 0;
	CHECK(emu_netdev_ifflags(&nd, 0) == IFF_UP, "up, no carrier");
	nd.flags = 0;
	CHECK(emu_netdev_ifflags(&nd, IFF_RUNNING) == 0, "down");
	return check_done();
}
