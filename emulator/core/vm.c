// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The shared segment of a --vm VM (see vm.h): creation and joining, the
 * process table and the release of dead processes' state, the VM-wide
 * numbers, the place of the VM's netdev table (core/netdev.c keeps it,
 * vport holders included), uverbs files and doorbell mailboxes.
 *
 * Calls that the library interposes (mmap, open, stat, socket, ...) go
 * through lib/libc.c or raw system calls, never up into host/.
 */
#include "vm.h"
#include "netdev.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "emulator/lib/libc.h"

#define VM_MAGIC 0x6d616e612d766d32ull	/* "mana-vm2" */
#define VM_MAX_PROCS 64
#define VM_MAX_QIDS 4096
#define VM_MAX_LISTEN 256
#define VM_MAX_FILES 256
#define VM_MBOX_SIZE 2048u	/* doorbells per process; power of 2 */
#define VM_COOKIE_REMOTE (1ull << 63)

struct vm_cell {
	_Atomic uint64_t seq;	/* == ticket: free; ticket + 1: full */
	uint64_t serial;
	uint32_t offset, width;
	uint64_t value;
};

struct vm_proc {
	_Atomic int32_t pid;		/* 0: free slot */
	uint64_t start_time;	/* /proc/PID/stat: tells a reused pid */
	_Atomic uint64_t tail;		/* mailbox tickets (producers) */
	uint64_t head;			/* mailbox consumer (the owner) */
	_Atomic int sleeping;	/* the owner's device thread armed */
	/* the owner's device thread sleeps on it (a shared futex) */
	_Atomic uint32_t wake_word;
};

struct vm_qid {
	uint32_t id;
	uint16_t type;
	int16_t proc;			/* -1: free */
};

struct vm_file {
	_Atomic uint64_t tag;		/* 0: free */
	_Atomic uint64_t ctx_serial;	/* the owner's context, 0: none */
	int16_t proc;
	uint16_t devnum;
	bool writable;
};

struct vm_shared {
	uint64_t magic;
	uint64_t size;		/* sizeof(struct vm_shared): one build */
	uint64_t vm_id;		/* random: tells VMs of one name apart */
	pthread_mutex_t lock;		/* robust, process-shared */
	struct mana_emu_options opts;	/* the creator's */
	uint32_t counters[EMU_VM_COUNTERS];
	uint32_t next_qid[EMU_VM_QID_RC + 1];
	/* interfaces and vport holders: core/netdev.c, its own lock */
	struct emu_netdev_table netdev;
	struct vm_proc procs[VM_MAX_PROCS];
	struct vm_qid qids[VM_MAX_QIDS];
	/* rdma_cm: who listens on (port space, port), who runs a GSI */
	struct vm_listen {
		uint16_t ps, port;
		int16_t proc;		/* -1: free */
	} listens[VM_MAX_LISTEN];
	bool gsi[VM_MAX_PROCS];
	struct vm_file files[VM_MAX_FILES];
	struct vm_cell mbox[VM_MAX_PROCS][VM_MBOX_SIZE];
};

static struct vm_shared *vm;
static int vm_slot = -1;		/* ours in vm->procs */
static char vm_path[512];
static bool vm_on;			/* attached, and not a forked child */

bool emu_vm_active(void)
{
	return vm_on;
}

static int take_slot(void);
static void vm_lock(void);
static void vm_unlock(void);

/*
 * A forked child is a process of the same VM, as it is on Linux: it takes
 * a slot of its own (its mailbox, its objects' ownership); what it
 * inherited stays the parent's (frees check the owner slot).  The lock
 * is shared memory: a parent thread holding it at fork releases it.
 */
static void vm_fork_child(void)
{
	if (!vm_on)
		return;
	vm_lock();
	vm_slot = -1;
	if (take_slot())
		vm_on = false;	/* no slot left: the child is on its own */
	vm_unlock();
}

/* ---- helpers ------------------------------------------------------------- */

static void *sys_mmap(size_t len, int prot, int flags, int fd)
{
	return (void *)syscall(SYS_mmap, NULL, len, prot, flags, fd, 0);
}

static void sys_munmap(void *p, size_t len)
{
	syscall(SYS_munmap, p, len);
}

static bool proc_alive(const struct vm_proc *pr)
{
	pid_t pid = atomic_load(&pr->pid);

	if (!pid)
		return false;
	/* our own pid in another slot: the image before an exec */
	if (pid == getpid())
		return false;
	if (kill(pid, 0) && errno != EPERM)
		return false;
	return emu_proc_start_time(pid) == pr->start_time;
}

/* Release everything process slot @s held (it exited or died). */
static void proc_release(int s)
{
	unsigned int i;

	for (i = 0; i < VM_MAX_QIDS; i++)
		if (vm->qids[i].proc == s)
			vm->qids[i].proc = -1;
	for (i = 0; i < VM_MAX_LISTEN; i++)
		if (vm->listens[i].proc == s)
			vm->listens[i].proc = -1;
	vm->gsi[s] = false;
	for (i = 0; i < VM_MAX_FILES; i++)
		if (atomic_load(&vm->files[i].tag) && vm->files[i].proc == s) {
			atomic_store(&vm->files[i].ctx_serial, 0);
			atomic_store(&vm->files[i].tag, 0);
		}
	/* its vports: netdev.c finds the holder gone (pid + start time) */
	atomic_store(&vm->procs[s].pid, 0);
}

/* Is slot @s's process alive?  A dead one's slot is released. */
static bool slot_alive(int s)
{
	if (proc_alive(&vm->procs[s]))
		return true;
	proc_release(s);
	return false;
}

/* The slot of this process's image before an exec: its objects are gone. */
static void release_former_image(void)
{
	int s;

	for (s = 0; s < VM_MAX_PROCS; s++)
		if (s != vm_slot && atomic_load(&vm->procs[s].pid) == getpid())
			proc_release(s);
}

/* Free the slots of processes that are gone; how many live ones remain. */
static unsigned int reap_locked(void)
{
	unsigned int s, live = 0;

	for (s = 0; s < VM_MAX_PROCS; s++) {
		if (!atomic_load(&vm->procs[s].pid) || (int)s == vm_slot)
			continue;
		/*
		 * Our own image before an exec is the VM's still (the VM is
		 * not stale while this image joins); its slot goes once this
		 * image has one (release_former_image()), so that a reader
		 * without the lock (emu_vm_peek()) never sees the VM empty.
		 */
		if (proc_alive(&vm->procs[s]) ||
		    atomic_load(&vm->procs[s].pid) == getpid())
			live++;
		else
			proc_release(s);
	}
	return live + (vm_slot >= 0);
}

static void vm_lock(void)
{
	int ret = pthread_mutex_lock(&vm->lock);

	/* the holder died: its state is released like a dead process's */
	if (ret == EOWNERDEAD) {
		pthread_mutex_consistent(&vm->lock);
		reap_locked();
	}
}

static void vm_unlock(void)
{
	pthread_mutex_unlock(&vm->lock);
}

/* $XDG_RUNTIME_DIR/mana-emu, else /tmp/mana-emu-UID: ours, mode 0700. */
static int runtime_dir(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	int fd;

	if (xdg && xdg[0] == '/')
		snprintf(buf, len, "%s/mana-emu", xdg);
	else
		snprintf(buf, len, "/tmp/mana-emu-%u", (unsigned int)getuid());
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	/* not a link planted by someone else, and ours alone */
	fd = emu_libc_open(buf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			   O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (emu_libc_fstat(fd, &st) || st.st_uid != getuid() ||
	    (st.st_mode & 0077)) {
		emu_libc_close(fd);
		return -EPERM;
	}
	emu_libc_close(fd);
	return 0;
}

static int vm_file_path(const char *name, char *buf, size_t len)
{
	char dir[400];
	int ret = runtime_dir(dir, sizeof(dir));

	if (ret)
		return ret;
	snprintf(buf, len, "%s/vm-%s", dir, name);
	return 0;
}

static struct vm_shared *map_fd(int fd)
{
	struct vm_shared *m = sys_mmap(sizeof(*m), PROT_READ | PROT_WRITE,
				       MAP_SHARED, fd);

	return m == MAP_FAILED ? NULL : m;
}

static uint64_t random64(void)
{
	uint64_t v = 0;
	struct timespec ts;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		v = (uint64_t)ts.tv_nsec << 24 ^ (uint64_t)ts.tv_sec ^
		    (uint64_t)getpid() << 40;
	}
	return v;
}

static void init_shared(struct vm_shared *m, const struct mana_emu_options *o)
{
	pthread_mutexattr_t a;
	unsigned int i;

	m->size = sizeof(*m);
	m->vm_id = random64();
	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&m->lock, &a);
	pthread_mutexattr_destroy(&a);
	m->opts = *o;
	/* the single-process kernel's first numbers (kernel.c, mr.c) */
	m->counters[EMU_VM_PDN] = 0x10000;
	m->counters[EMU_VM_SHORT_PDN] = 1;
	m->counters[EMU_VM_MR_INDEX] = (uint32_t)random64();
	for (i = 0; i < VM_MAX_QIDS; i++)
		m->qids[i].proc = -1;
	for (i = 0; i < VM_MAX_LISTEN; i++)
		m->listens[i].proc = -1;
	emu_netdev_table_init(&m->netdev, o);
	/* published last: a joiner checks the magic */
	atomic_thread_fence(memory_order_release);
	m->magic = VM_MAGIC;
}

/*
 * A fresh VM file, this process in it, linked in atomically (so nobody
 * sees it without a live process): 0 with vm mapped, -EEXIST (lost a
 * race), -errno.
 */
static int vm_create(const struct mana_emu_options *o)
{
	char tmp[sizeof(vm_path) + 32];
	int fd, ret;

	snprintf(tmp, sizeof(tmp), "%s.%d.new", vm_path, (int)getpid());
	unlink(tmp);
	fd = emu_libc_open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, sizeof(*vm))) {
		ret = -errno;
		goto err;
	}
	vm = map_fd(fd);
	if (!vm) {
		ret = -ENOMEM;
		goto err;
	}
	init_shared(vm, o);
	take_slot();
	if (link(tmp, vm_path)) {
		ret = -errno;
		sys_munmap(vm, sizeof(*vm));
		vm = NULL;
		vm_slot = -1;
		goto err;
	}
	unlink(tmp);
	emu_libc_close(fd);
	return 0;
err:
	unlink(tmp);
	emu_libc_close(fd);
	return ret;
}

/* Is @fd still the file at vm_path (not removed by a last leaver)? */
static bool still_linked(int fd)
{
	struct stat a, b;

	return !emu_libc_fstat(fd, &a) && !emu_libc_stat(vm_path, &b) &&
	       a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

static int take_slot(void)
{
	struct vm_proc *pr;
	unsigned int s, i;

	for (s = 0; s < VM_MAX_PROCS; s++) {
		pr = &vm->procs[s];
		if (atomic_load(&pr->pid))
			continue;
		pr->start_time = emu_proc_start_time(getpid());
		atomic_store(&pr->tail, 0);
		pr->head = 0;
		atomic_store(&pr->sleeping, 0);
		atomic_store(&pr->wake_word, 0);
		for (i = 0; i < VM_MBOX_SIZE; i++)
			atomic_store(&vm->mbox[s][i].seq, i);
		atomic_store(&pr->pid, getpid());
		vm_slot = s;
		return 0;
	}
	return -EUSERS;
}

static void unmap_vm(void)
{
	sys_munmap(vm, sizeof(*vm));
	vm = NULL;
}

int emu_vm_attach(struct mana_emu_options *opts, char *err, size_t errlen)
{
	uint64_t given = mana_emu_options_given();
	static bool atfork_done;
	int fd, ret = 0, tries;

	ret = vm_file_path(opts->vm, vm_path, sizeof(vm_path));
	if (ret) {
		snprintf(err, errlen, "--vm=%s: no runtime directory: %s",
			 opts->vm, strerror(-ret));
		return -1;
	}
	for (tries = 0; tries < 100 && !vm; tries++) {
		fd = emu_libc_open(vm_path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 && errno == ENOENT) {
			ret = vm_create(opts);
			if (ret == -EEXIST)
				continue;	/* another process made it */
			if (ret) {
				snprintf(err, errlen, "--vm=%s: cannot create "
					 "%s: %s", opts->vm, vm_path,
					 strerror(-ret));
				return -1;
			}
			vm_lock();
			break;
		} else if (fd < 0) {
			snprintf(err, errlen, "--vm=%s: cannot open %s: %s",
				 opts->vm, vm_path, strerror(errno));
			return -1;
		}
		vm = map_fd(fd);
		if (!vm || vm->magic != VM_MAGIC || vm->size != sizeof(*vm)) {
			snprintf(err, errlen, "--vm=%s: %s is not a VM of this "
				 "mana-emu build", opts->vm, vm_path);
			if (vm)
				unmap_vm();
			emu_libc_close(fd);
			return -1;
		}
		vm_lock();
		if (!still_linked(fd) || !reap_locked()) {
			/*
			 * Its last process removed it meanwhile, or every
			 * process of it died (stale): make it anew.
			 */
			if (still_linked(fd))
				unlink(vm_path);
			vm_unlock();
			unmap_vm();
			emu_libc_close(fd);
			continue;
		}
		emu_libc_close(fd);
		ret = mana_emu_options_vm_merge(&vm->opts, opts, given, err,
						errlen);
		if (!ret && take_slot()) {
			snprintf(err, errlen, "--vm=%s: %d processes already",
				 opts->vm, VM_MAX_PROCS);
			ret = -1;
		} else if (!ret) {
			release_former_image();
		}
		if (ret) {
			vm_unlock();
			unmap_vm();
			return -1;
		}
	}
	if (!vm) {
		snprintf(err, errlen, "--vm=%s: cannot join %s", opts->vm,
			 vm_path);
		return -1;
	}
	vm_on = true;
	vm_unlock();
	if (!atfork_done) {
		atfork_done = true;
		pthread_atfork(NULL, NULL, vm_fork_child);
	}
	return 0;
}

void emu_vm_detach(void)
{
	if (!emu_vm_active())
		return;
	vm_lock();
	proc_release(vm_slot);
	vm_slot = -1;
	vm_on = false;
	if (!reap_locked())
		unlink(vm_path);	/* the last one: the VM ends */
	vm_unlock();
	/*
	 * The netdev table in it stays mapped while attached: the link
	 * watcher may still wake on it until the process is gone.
	 */
	if (emu_netdev_table() == &vm->netdev)
		vm = NULL;
	else
		unmap_vm();
}

void emu_vm_detach_on_signal(void)
{
	unsigned int s, live = 0;
	pid_t pid;
	int ret;

	if (!emu_vm_active())
		return;
	/* the thread the signal interrupted may hold it: then leave it */
	ret = pthread_mutex_trylock(&vm->lock);
	if (ret == EOWNERDEAD)
		pthread_mutex_consistent(&vm->lock);
	else if (ret)
		return;
	proc_release(vm_slot);
	vm_on = false;
	for (s = 0; s < VM_MAX_PROCS; s++) {
		pid = atomic_load(&vm->procs[s].pid);
		if (pid && pid != getpid() && (!kill(pid, 0) || errno == EPERM))
			live++;
	}
	if (!live)
		unlink(vm_path);
	pthread_mutex_unlock(&vm->lock);
}

int emu_vm_peek(const char *name, struct mana_emu_options *out)
{
	struct vm_shared *m;
	unsigned int s;
	int fd, live = 0;

	if (vm_file_path(name, vm_path, sizeof(vm_path)))
		return 0;
	fd = emu_libc_open(vm_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	m = sys_mmap(sizeof(*m), PROT_READ, MAP_SHARED, fd);
	emu_libc_close(fd);
	if (m == MAP_FAILED)
		return 0;
	/* the options never change once the file is linked in */
	if (m->magic == VM_MAGIC && m->size == sizeof(*m)) {
		for (s = 0; s < VM_MAX_PROCS && !live; s++)
			live = proc_alive(&m->procs[s]);
		if (live)
			*out = m->opts;
	}
	sys_munmap(m, sizeof(*m));
	return live;
}

/* ---- numbers ------------------------------------------------------------- */

uint32_t emu_vm_next(enum emu_vm_counter c)
{
	uint32_t v;

	if (!emu_vm_active())
		return 0;
	vm_lock();
	v = vm->counters[c]++;
	vm_unlock();
	return v;
}

static bool qid_used(unsigned int type, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < VM_MAX_QIDS; i++)
		if (vm->qids[i].proc >= 0 && vm->qids[i].type == type &&
		    vm->qids[i].id == id)
			return true;
	return false;
}

int emu_vm_qid_alloc(unsigned int type, uint32_t base, uint32_t max,
		     uint32_t *id)
{
	struct vm_qid *free_slot = NULL;
	unsigned int i, tries;
	int ret = -ENOSPC;

	if (!emu_vm_active())
		return -ENOSYS;
	vm_lock();
	for (i = 0; i < VM_MAX_QIDS && !free_slot; i++)
		if (vm->qids[i].proc < 0)
			free_slot = &vm->qids[i];
	if (!free_slot)
		reap_locked();
	for (i = 0; i < VM_MAX_QIDS && !free_slot; i++)
		if (vm->qids[i].proc < 0)
			free_slot = &vm->qids[i];
	if (!vm->next_qid[type])
		vm->next_qid[type] = base;
	for (tries = 0; free_slot && tries <= VM_MAX_QIDS; tries++) {
		uint32_t cand = vm->next_qid[type]++;

		if (vm->next_qid[type] > max)
			vm->next_qid[type] = base;
		if (qid_used(type, cand))
			continue;
		free_slot->id = cand;
		free_slot->type = type;
		free_slot->proc = vm_slot;
		*id = cand;
		ret = 0;
		break;
	}
	vm_unlock();
	return ret;
}

void emu_vm_qid_free(unsigned int type, uint32_t id)
{
	unsigned int i;

	if (!emu_vm_active())
		return;
	vm_lock();
	for (i = 0; i < VM_MAX_QIDS; i++)
		if (vm->qids[i].proc == vm_slot && vm->qids[i].type == type &&
		    vm->qids[i].id == id)
			vm->qids[i].proc = -1;
	vm_unlock();
}

int emu_vm_wire_dir(unsigned int port, char *buf, size_t len)
{
	if (!emu_vm_active())
		return -ENODEV;
	if ((size_t)snprintf(buf, len, "%s.wire%u", vm_path, port) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* ---- rdma_cm ------------------------------------------------------------- */

int emu_vm_slot(void)
{
	return emu_vm_active() ? vm_slot : -1;
}

int emu_vm_cm_listen(uint16_t ps, uint16_t port, bool on)
{
	struct vm_listen *l;
	int ret = on ? -ENOSPC : 0;
	unsigned int i;

	if (!emu_vm_active())
		return 0;
	vm_lock();
	for (i = 0; i < VM_MAX_LISTEN; i++) {
		l = &vm->listens[i];
		if (on && l->proc < 0) {
			l->ps = ps;
			l->port = port;
			l->proc = (int16_t)vm_slot;
			ret = 0;
			break;
		}
		if (!on && l->proc == vm_slot && l->ps == ps &&
		    l->port == port) {
			l->proc = -1;
			break;
		}
	}
	vm_unlock();
	return ret;
}

bool emu_vm_cm_listened_elsewhere(uint16_t ps, uint16_t port)
{
	bool found = false;
	unsigned int i;
	int s;

	if (!emu_vm_active())
		return false;
	vm_lock();
	for (i = 0; i < VM_MAX_LISTEN && !found; i++) {
		s = vm->listens[i].proc;
		if (s < 0 || s == vm_slot || vm->listens[i].ps != ps ||
		    vm->listens[i].port != port)
			continue;
		found = slot_alive(s);
	}
	vm_unlock();
	return found;
}

void emu_vm_cm_gsi(bool on)
{
	if (!emu_vm_active())
		return;
	vm_lock();
	vm->gsi[vm_slot] = on;
	vm_unlock();
}

bool emu_vm_cm_answers(void)
{
	bool mine = true;
	int s;

	if (!emu_vm_active())
		return true;
	vm_lock();
	for (s = 0; s < vm_slot && mine; s++) {
		if (vm->gsi[s] && slot_alive(s))
			mine = false;
	}
	vm_unlock();
	return mine;
}

/* ---- netdevs ------------------------------------------------------------ */

struct emu_netdev_table *emu_vm_netdev_table(void)
{
	return emu_vm_active() ? &vm->netdev : NULL;
}

/* ---- uverbs files -------------------------------------------------------- */

uint64_t emu_vm_file_open(unsigned int devnum, bool writable)
{
	uint64_t tag = 0;
	unsigned int i;

	if (!emu_vm_active())
		return 0;
	vm_lock();
	for (i = 0; i < VM_MAX_FILES; i++) {
		struct vm_file *f = &vm->files[i];

		if (atomic_load(&f->tag))
			continue;
		/* an eventfd counter stays below 2^64 - 1: 63 bits, odd */
		tag = (random64() >> 1) | 1;
		f->proc = vm_slot;
		f->devnum = devnum;
		f->writable = writable;
		atomic_store(&f->ctx_serial, 0);
		atomic_store(&f->tag, tag);
		break;
	}
	vm_unlock();
	return tag;
}

static struct vm_file *file_by_tag(uint64_t tag)
{
	unsigned int i;

	for (i = 0; tag && i < VM_MAX_FILES; i++)
		if (atomic_load(&vm->files[i].tag) == tag)
			return &vm->files[i];
	return NULL;
}

void emu_vm_file_close(uint64_t tag)
{
	struct vm_file *f;

	if (!tag || !emu_vm_active())
		return;
	vm_lock();
	f = file_by_tag(tag);
	if (f && f->proc == vm_slot) {
		atomic_store(&f->ctx_serial, 0);
		atomic_store(&f->tag, 0);
	}
	vm_unlock();
}

void emu_vm_file_set_ctx(uint64_t tag, uint64_t serial)
{
	struct vm_file *f;

	if (!tag || !emu_vm_active())
		return;
	vm_lock();
	f = file_by_tag(tag);
	if (f && f->proc == vm_slot)
		atomic_store(&f->ctx_serial, serial);
	vm_unlock();
}

int emu_vm_file_find(uint64_t tag, struct emu_vm_file_info *info)
{
	struct vm_file *f;
	int ret = -ENOENT;

	if (!emu_vm_active())
		return ret;
	vm_lock();
	f = file_by_tag(tag);
	if (f && f->proc >= 0 && (f->proc == vm_slot ||
				  proc_alive(&vm->procs[f->proc]))) {
		info->devnum = f->devnum;
		info->writable = f->writable;
		info->mine = f->proc == vm_slot;
		info->owner_pid = atomic_load(&vm->procs[f->proc].pid);
		ret = 0;
	}
	vm_unlock();
	return ret;
}

uintptr_t emu_vm_remote_cookie(uint64_t tag)
{
	struct vm_file *f;
	uintptr_t c = 0;

	if (!emu_vm_active())
		return 0;
	vm_lock();
	f = file_by_tag(tag);
	if (f)
		c = VM_COOKIE_REMOTE | (uint64_t)(f - vm->files) << 32 |
		    (uint32_t)tag;
	vm_unlock();
	return c;
}

/* ---- doorbell mailboxes -------------------------------------------------- */

/*
 * The owner's device thread waits on its slot's wake word (trap_queue.c,
 * through emu_vm_wake_word()): a shared futex, as the segment is a shared
 * file mapping.  One system call, and only when the owner said it sleeps.
 */
static void kick(unsigned int s)
{
	struct vm_proc *pr = &vm->procs[s];

	atomic_fetch_add(&pr->wake_word, 1);
	syscall(SYS_futex, &pr->wake_word, FUTEX_WAKE, 1, NULL, NULL, 0);
}

bool emu_vm_route_doorbell(void *cookie, uint32_t offset, uint32_t width,
			   uint64_t value)
{
	uintptr_t c = (uintptr_t)cookie;
	unsigned int idx = (c >> 32) & 0x7fffffff, spins = 0;
	struct vm_file *f;
	struct vm_proc *pr;
	struct vm_cell *cell;
	uint64_t serial, pos;
	int s;

	if (!(c & VM_COOKIE_REMOTE))
		return false;
	if (!vm || idx >= VM_MAX_FILES)
		return true;
	f = &vm->files[idx];
	if ((uint32_t)atomic_load(&f->tag) != (uint32_t)c)
		return true;		/* the file is gone: ignored */
	serial = atomic_load(&f->ctx_serial);
	s = f->proc;
	if (!serial || s < 0 || s >= VM_MAX_PROCS)
		return true;
	pr = &vm->procs[s];
	pos = atomic_fetch_add(&pr->tail, 1);
	cell = &vm->mbox[s][pos & (VM_MBOX_SIZE - 1)];
	/* full: wait for the owner, unless it is gone */
	while (atomic_load_explicit(&cell->seq, memory_order_acquire) != pos) {
		pid_t pid = atomic_load(&pr->pid);

		if (!pid || (++spins % 1024 == 0 && kill(pid, 0) &&
			     errno == ESRCH))
			return true;
		atomic_store(&pr->sleeping, 0);
		kick(s);
		syscall(SYS_sched_yield);
	}
	cell->serial = serial;
	cell->offset = offset;
	cell->width = width;
	cell->value = value;
	atomic_store_explicit(&cell->seq, pos + 1, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_exchange(&pr->sleeping, 0))
		kick(s);
	return true;
}

bool emu_vm_mbox_ready(void)
{
	struct vm_proc *pr = &vm->procs[vm_slot];
	struct vm_cell *c = &vm->mbox[vm_slot][pr->head & (VM_MBOX_SIZE - 1)];

	return atomic_load_explicit(&c->seq, memory_order_acquire) ==
	       pr->head + 1;
}

int emu_vm_mbox_pop(uint64_t *serial, uint32_t *offset, uint32_t *width,
		    uint64_t *value)
{
	struct vm_proc *pr;
	struct vm_cell *c;

	if (!emu_vm_active() || !emu_vm_mbox_ready())
		return -EAGAIN;
	pr = &vm->procs[vm_slot];
	c = &vm->mbox[vm_slot][pr->head & (VM_MBOX_SIZE - 1)];
	*serial = c->serial;
	*offset = c->offset;
	*width = c->width;
	*value = c->value;
	atomic_store_explicit(&c->seq, pr->head + VM_MBOX_SIZE,
			      memory_order_release);
	pr->head++;
	return 0;
}

int emu_vm_wake_word(_Atomic uint32_t **word, _Atomic int **sleeping)
{
	if (!emu_vm_active())
		return -ENOENT;
	*word = &vm->procs[vm_slot].wake_word;
	*sleeping = &vm->procs[vm_slot].sleeping;
	return 0;
}
