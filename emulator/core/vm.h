/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One emulated VM, many processes (--vm=NAME).
 *
 * Each process still runs its own emulated kernel objects and its own
 * device thread, which serves the queues the process created (DMA into
 * its own memory: the fast path is unchanged).  What a real kernel keeps
 * once per device lives in a shared segment, a file
 * $XDG_RUNTIME_DIR/mana-emu/vm-NAME (else /tmp/mana-emu-UID/vm-NAME)
 * mapped by every process of the VM:
 *  - the VM's options (the first process's; later ones must agree),
 *  - the process table (pid + start time: liveness without a daemon),
 *  - numbers unique per device: hardware queue ids (QPNs, CQ/WQ ids),
 *    PD numbers, the MR key index,
 *  - the netdev table (core/netdev.h: interface state, vport holders),
 *  - the uverbs files, so that an fd passed to another process of the VM
 *    over SCM_RIGHTS is the same file there,
 *  - one doorbell mailbox per process: stores to a doorbell page mapped
 *    through a passed fd are routed to the owning process's device
 *    thread, woken by a datagram on its abstract Unix socket.
 * A process-shared robust mutex guards it; the state of a process that
 * died (kill -9) is released by the next one that takes the lock and
 * finds it gone, as the kernel releases a dead process's files.  The
 * last process to leave removes the file; a file whose processes are all
 * gone is stale and replaced by the next process naming the VM.
 *
 * Lock order: emu.lock, then the VM's lock (never the other way).
 * Without --vm nothing here is active and every call is a cheap no-op.
 */
#ifndef MANA_EMU_VM_H
#define MANA_EMU_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"

/* Is this process part of a --vm VM? */
bool emu_vm_active(void);

/*
 * The library's start-up: create or join the VM @opts->vm.  Joining
 * merges @opts with the VM's (mana_emu_options_vm_merge(), with what
 * the last parse gave: mana_emu_options_given()).  0, or -1
 * with one line in @err.
 */
int emu_vm_attach(struct mana_emu_options *opts, char *err, size_t errlen);
/* Process exit: leave the VM (the last one removes it). */
void emu_vm_detach(void);
/*
 * A signal ends the process (async-signal safe): leave the VM if its lock
 * is free now, else the next process to take it releases our state.
 */
void emu_vm_detach_on_signal(void);
/*
 * The launcher, before it makes the sysfs tree: the options of the live
 * VM @name into @out (1), or 0 when there is none yet.
 */
int emu_vm_peek(const char *name, struct mana_emu_options *out);

/* Numbers unique per VM (the real device's are unique per device). */
enum emu_vm_counter {
	EMU_VM_PDN,
	EMU_VM_SHORT_PDN,
	EMU_VM_MR_INDEX,
	EMU_VM_COUNTERS,
};
/* The counter's value, then incremented. */
uint32_t emu_vm_next(enum emu_vm_counter c);
/*
 * A hardware queue id of @type: from the VM's counter (starting at @base,
 * wrapping after @max), skipping ids any process of the VM uses.  0 or
 * -ENOSPC.
 */
int emu_vm_qid_alloc(unsigned int type, uint32_t base, uint32_t max,
		     uint32_t *id);
void emu_vm_qid_free(unsigned int type, uint32_t id);
/* The type of the RNIC's QP id pairs (the hardware queues' are 1..3). */
#define EMU_VM_QID_RC 4

/*
 * The VM's interfaces (core/netdev.h): the creator initialised the table
 * from its options; every process attaches it (host/init.c) instead of
 * its run's, so `ip link set` in any process of the VM changes what all
 * of them see, and the table's vport holders (pid + start time) are the
 * VM's.  NULL without --vm.
 */
struct emu_netdev_table *emu_vm_netdev_table(void);

/*
 * The directory of port @port's VM-private virtual switch (a socket:
 * wire) into @buf: 0, or -ENODEV without --vm, -ENAMETOOLONG.
 */
int emu_vm_wire_dir(unsigned int port, char *buf, size_t len);

/* Our slot in the VM (its processes' index), -1 without --vm. */
int emu_vm_slot(void);

/*
 * rdma_cm across the VM's processes: every process's CM sees every MAD
 * to the VM's QP1, so each must know which are its own.  Listeners:
 * (port space, port) of this process's listening ids, on or off
 * (-ENOSPC when the table is full); is one of another live process's?
 * GSI: this process runs the CM's QP1; answers: this process is the one
 * (the lowest slot running a GSI) that rejects a REQ nobody listens for.
 * Without --vm: 0, false, nothing, true.
 */
int emu_vm_cm_listen(uint16_t ps, uint16_t port, bool on);
bool emu_vm_cm_listened_elsewhere(uint16_t ps, uint16_t port);
void emu_vm_cm_gsi(bool on);
bool emu_vm_cm_answers(void);

/*
 * uverbs files.  emu_vm_file_open(): the file's identity (nonzero; 0
 * without --vm or when the table is full), which the open() interposer
 * stores as the placeholder eventfd's counter, where a process that
 * receives the fd reads it back (/proc/self/fdinfo).
 */
uint64_t emu_vm_file_open(unsigned int devnum, bool writable);
void emu_vm_file_close(uint64_t tag);
/* The file's context (its trap cookie), 0 when it has none. */
void emu_vm_file_set_ctx(uint64_t tag, uint64_t serial);

struct emu_vm_file_info {
	unsigned int devnum;
	bool writable;
	bool mine;		/* opened by this process */
	int owner_pid;
};
/* 0 and @info, or -ENOENT: no file of this VM has that identity. */
int emu_vm_file_find(uint64_t tag, struct emu_vm_file_info *info);

/*
 * The cookie of a doorbell page mapped through another process's file
 * (a remote page), or 0 on failure.  Stores to such a page go to
 * emu_vm_route_doorbell() instead of this process's device.
 */
uintptr_t emu_vm_remote_cookie(uint64_t tag);

/*
 * From the SIGSEGV handler (async-signal safe, lock free): a store to a
 * remote page goes into the owner's mailbox and wakes its device thread
 * (true; dropped when the owner or its context is gone).  False: not a
 * remote page, queue it here.
 */
bool emu_vm_route_doorbell(void *cookie, uint32_t offset, uint32_t width,
			   uint64_t value);

/*
 * The device thread of a process that owns queues: doorbells other
 * processes routed here.  pop: 0 and the fields, or -EAGAIN; ready: one
 * is queued.  Sleeping: emu_vm_wake_word() gives this process's wake word
 * (a futex in the shared segment, woken without FUTEX_PRIVATE_FLAG) and
 * the flag a waker clears before it wakes; -ENOENT without --vm.
 */
int emu_vm_mbox_pop(uint64_t *serial, uint32_t *offset, uint32_t *width,
		    uint64_t *value);
bool emu_vm_mbox_ready(void);
int emu_vm_wake_word(_Atomic uint32_t **word, _Atomic int **sleeping);

#endif /* MANA_EMU_VM_H */
