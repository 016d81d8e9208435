// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The interfaces' live state (netdev.h): the table, its writers' lock,
 * the generation futex and this process's last look at it.
 */
#include "netdev.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <linux/futex.h>
#include <linux/if.h>

#include "emulator/lib/libc.h"

static struct emu_netdev_table *table;
static emu_netdev_listener_t listener;
/* What this process's listener saw last (sync), per ifindex - 1. */
static struct emu_netdev seen[EMU_NETDEV_MAX];
static uint32_t seen_count;

static void start_state(const struct mana_emu_options *o, unsigned int i,
			struct emu_netdev *nd)
{
	memset(nd, 0, sizeof(*nd));
	if (i == 0) {		/* lo */
		nd->flags = IFF_UP;
		nd->carrier = 1;
		nd->operstate = IF_OPER_UNKNOWN;
		nd->mtu = 65536;
		return;
	}
	/* netvsc opens the VF with itself: both up, or both down */
	nd->mtu = o->mtu;
	if (o->netdev_up) {
		nd->flags = IFF_UP;
		nd->carrier = 1;
		nd->operstate = IF_OPER_UP;
	} else {
		nd->operstate = IF_OPER_DOWN;
	}
}

static unsigned int start_count(const struct mana_emu_options *o)
{
	return 1 + o->ports * (mana_emu_has_netdevs(o) ? 2 : 1);
}

void emu_netdev_table_init(struct emu_netdev_table *t,
			   const struct mana_emu_options *o)
{
	unsigned int i;

	memset(t, 0, sizeof(*t));
	t->count = start_count(o);
	for (i = 0; i < t->count; i++)
		start_state(o, i, &t->dev[i]);
	t->magic = EMU_NETDEV_MAGIC;
}

static void table_lock(struct emu_netdev_table *t)
{
	while (__atomic_exchange_n(&t->lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&t->lock, __ATOMIC_RELAXED))
			sched_yield();
}

static void table_unlock(struct emu_netdev_table *t)
{
	__atomic_store_n(&t->lock, 0, __ATOMIC_RELEASE);
}

void emu_netdev_attach(struct emu_netdev_table *t)
{
	unsigned int n;

	table = t;
	/* the listener starts from the state at attach: no events for it */
	table_lock(t);
	n = t->count < EMU_NETDEV_MAX ? t->count : EMU_NETDEV_MAX;
	memcpy(seen, t->dev, n * sizeof(seen[0]));
	seen_count = n;
	table_unlock(t);
}

struct emu_netdev_table *emu_netdev_table(void)
{
	return table;
}

bool emu_netdev_get(const struct mana_emu_options *o, unsigned int ifindex,
		    struct emu_netdev *out)
{
	struct emu_netdev_table *t = table;

	if (!t) {
		if (!ifindex || ifindex > start_count(o))
			return false;
		start_state(o, ifindex - 1, out);
		return true;
	}
	if (!ifindex || ifindex > t->count || ifindex > EMU_NETDEV_MAX)
		return false;
	table_lock(t);
	*out = t->dev[ifindex - 1];
	table_unlock(t);
	return true;
}

bool emu_netdev_running(const struct mana_emu_options *o,
			unsigned int ifindex)
{
	struct emu_netdev nd;

	return emu_netdev_get(o, ifindex, &nd) && (nd.flags & IFF_UP) &&
	       nd.carrier;
}

unsigned int emu_netdev_ifflags(const struct emu_netdev *nd,
				unsigned int static_flags)
{
	unsigned int f = static_flags;

	if (nd->flags & IFF_UP)
		f |= IFF_UP | IFF_RUNNING;
	/* dev_get_flags(): RUNNING and LOWER_UP follow the carrier */
	if ((nd->flags & IFF_UP) && nd->carrier)
		f |= IFF_LOWER_UP;
	else
		f &= ~IFF_RUNNING;
	return f;
}

static void futex_wake_all(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0);
}

static bool running(const struct emu_netdev *nd)
{
	return (nd->flags & IFF_UP) && nd->carrier;
}

uint64_t emu_proc_start_time(int32_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = emu_libc_open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = emu_libc_read(fd, buf, sizeof(buf) - 1);
	emu_libc_close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* the command may hold spaces and ")": field 3 follows the last ")" */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	for (field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &v) != 1)
		return 0;
	return v;
}

/* Ours, read once per process (a forked child has its own). */
static uint64_t own_start_time(int32_t pid)
{
	static int32_t cached_pid;
	static uint64_t cached;

	if (pid != getpid())
		return emu_proc_start_time(pid);
	if (__atomic_load_n(&cached_pid, __ATOMIC_ACQUIRE) != pid) {
		cached = emu_proc_start_time(pid);
		__atomic_store_n(&cached_pid, pid, __ATOMIC_RELEASE);
	}
	return cached;
}

/*
 * A vport holder that is gone (killed, or ended without closing) holds
 * nothing; nor does a process that took over its pid since.
 */
static bool holder_live(const struct emu_netdev *nd)
{
	int32_t pid = nd->vport_pid;

	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH))
		return false;
	return emu_proc_start_time(pid) == nd->vport_start;
}

static bool ifindex_ok(const struct emu_netdev_table *t, unsigned int ifindex)
{
	return t && ifindex && ifindex <= t->count && ifindex <= EMU_NETDEV_MAX;
}

int emu_netdev_set(unsigned int ifindex, const struct emu_netdev *nd)
{
	struct emu_netdev_table *t = table;
	struct emu_netdev *cur, holder;
	uint32_t changes;
	bool held;

	if (!ifindex_ok(t, ifindex))
		return -ENODEV;
	table_lock(t);
	cur = &t->dev[ifindex - 1];
	holder = *cur;
	held = holder_live(&holder);
	if ((nd->flags & IFF_UP) && !(cur->flags & IFF_UP) && held) {
		table_unlock(t);
		return -EBUSY;
	}
	changes = cur->running_changes;
	if (running(cur) != running(nd))
		changes++;
	*cur = *nd;
	cur->running_changes = changes;
	cur->vport_pid = held ? holder.vport_pid : 0;
	cur->vport_start = held ? holder.vport_start : 0;
	__atomic_add_fetch(&t->generation, 1, __ATOMIC_RELEASE);
	table_unlock(t);
	futex_wake_all(&t->generation);
	emu_netdev_sync();
	return 0;
}

int emu_netdev_vport_claim(unsigned int ifindex, int32_t pid)
{
	struct emu_netdev_table *t = table;
	uint64_t start = own_start_time(pid);
	struct emu_netdev *cur;
	int ret = 0;

	if (!ifindex_ok(t, ifindex))
		return -ENODEV;
	table_lock(t);
	cur = &t->dev[ifindex - 1];
	if ((cur->flags & IFF_UP) ||
	    ((cur->vport_pid != pid || cur->vport_start != start) &&
	     holder_live(cur))) {
		ret = -EBUSY;
	} else {
		cur->vport_pid = pid;
		cur->vport_start = start;
	}
	table_unlock(t);
	return ret;
}

void emu_netdev_vport_release(unsigned int ifindex, int32_t pid)
{
	struct emu_netdev_table *t = table;

	if (!ifindex_ok(t, ifindex))
		return;
	table_lock(t);
	if (t->dev[ifindex - 1].vport_pid == pid) {
		t->dev[ifindex - 1].vport_pid = 0;
		t->dev[ifindex - 1].vport_start = 0;
	}
	table_unlock(t);
}

void emu_netdev_set_listener(emu_netdev_listener_t fn)
{
	listener = fn;
}

void emu_netdev_sync(void)
{
	struct emu_netdev now[EMU_NETDEV_MAX], old;
	struct emu_netdev_table *t = table;
	unsigned int i, n;

	if (!t)
		return;
	table_lock(t);
	n = t->count < EMU_NETDEV_MAX ? t->count : EMU_NETDEV_MAX;
	memcpy(now, t->dev, n * sizeof(now[0]));
	table_unlock(t);
	for (i = 0; i < n && i < seen_count; i++) {
		/* who holds a vport is no news to the listener */
		now[i].vport_pid = seen[i].vport_pid;
		now[i].vport_start = seen[i].vport_start;
		if (!memcmp(&now[i], &seen[i], sizeof(now[i])))
			continue;
		old = seen[i];
		seen[i] = now[i];
		if (listener)
			listener(i + 1, &old, &now[i]);
	}
}

uint32_t emu_netdev_generation(void)
{
	return table ? __atomic_load_n(&table->generation, __ATOMIC_ACQUIRE) :
		       0;
}

void emu_netdev_wait(uint32_t seen_gen)
{
	if (!table)
		return;
	/* shared (not PRIVATE): the writer may be another process */
	syscall(SYS_futex, &table->generation, FUTEX_WAIT, seen_gen, NULL,
		NULL, 0);
}
