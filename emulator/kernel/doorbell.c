// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The doorbell page: mmap() of a context, trapped stores, orphans
 * (pages still mapped after their context went) and munmap().
 */
#include "kernel.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "emulator/device/device.h"
#include "emulator/core/emu_defs.h"
#include "emulator/mana_emu.h"
#include "providers/mana/gdma.h"
#include "emulator/device/trap.h"
#include "emulator/core/vm.h"
#include "emulator/lib/libc.h"

/*
 * mana_ib_mmap(): offset 0 maps the context's doorbell page.  Here it is a
 * trapped page (trap.h): write-protected, every store becomes an event for
 * the device thread, tagged with the context's serial.  A trap page can be
 * mapped only once, so every mmap() of a context returns the same address
 * and counts a reference; the page goes at the last munmap() of it.  A
 * page still mapped when its context is destroyed stays (stores to it are
 * ignored) until the application unmaps it.
 */
struct db_orphan {
	void *page;
	unsigned int maps;
	uint64_t tag;	/* --vm: a remote page of this file, else 0 */
	struct db_orphan *next;
};

static struct db_orphan *db_orphans;
static int db_pages_mapped;	/* read without the lock by munmap() */

static void db_pages_add(int n)
{
	__atomic_add_fetch(&db_pages_mapped, n, __ATOMIC_RELEASE);
}

static void *db_page_map(struct emu_ucontext *ctx, int *err)
{
	void *page;
	int ret;

	ret = trap_init();
	if (ret) {
		fprintf(stderr, "mana-emu: cannot map the doorbell page: the "
			"doorbell store trap is unavailable: %s\n",
			strerror(-ret));
		*err = -ret;
		return MAP_FAILED;
	}
	emu_device_trap_ready();
	page = trap_page_alloc((void *)(uintptr_t)ctx->serial);
	if (!page) {
		*err = errno;
		fprintf(stderr, "mana-emu: cannot map the doorbell page: %s\n",
			strerror(errno));
		return MAP_FAILED;
	}
	ctx->db_page = page;
	ctx->db_maps = 0;
	db_pages_add(1);
	return page;
}

/*
 * --vm: the doorbell page of a file another process of the VM opened (a
 * passed fd; DPDK's secondary process).  Stores to it go to that
 * process's device thread (core/vm.h).  Kept with the orphans, as it
 * outlives the fd (DPDK closes it right after the mmap) like a real
 * mapping holds its file; mapped once per file, counted.
 */
static void *remote_db_map(struct emu_file *file, int *err)
{
	uintptr_t cookie;
	struct db_orphan *o;
	int ret;

	for (o = db_orphans; o; o = o->next) {
		if (o->tag == file->vm_tag) {
			o->maps++;
			return o->page;
		}
	}
	cookie = emu_vm_remote_cookie(file->vm_tag);
	o = calloc(1, sizeof(*o));
	if (!cookie || !o) {
		free(o);
		*err = cookie ? ENOMEM : ENODEV;
		return MAP_FAILED;
	}
	ret = trap_init();
	o->page = ret ? NULL : trap_page_alloc((void *)cookie);
	if (!o->page) {
		*err = ret ? -ret : errno;
		free(o);
		return MAP_FAILED;
	}
	o->maps = 1;
	o->tag = file->vm_tag;
	o->next = db_orphans;
	db_orphans = o;
	db_pages_add(1);
	return o->page;
}

void *emu_uverbs_mmap(struct emu_file *file, void *addr, size_t len,
		      int prot, int flags, off_t offset, int *err)
{
	struct emu_ucontext *ctx = file->ctx;

	*err = EINVAL;
	/* one page at offset 0, shared, wherever we put it */
	if ((!ctx && !file->remote) || offset != 0 || !len ||
	    len > EMU_PAGE_SIZE ||
	    (flags & MAP_TYPE) == MAP_PRIVATE ||
	    (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)))
		return MAP_FAILED;
	if ((prot & PROT_WRITE) && !file->writable) {
		*err = EACCES;
		return MAP_FAILED;
	}
	if (file->remote)
		return remote_db_map(file, err);
	if (!ctx->db_page && db_page_map(ctx, err) == MAP_FAILED)
		return MAP_FAILED;
	ctx->db_maps++;
	return ctx->db_page;
}

bool emu_mmap_tracked(void)
{
	return __atomic_load_n(&db_pages_mapped, __ATOMIC_ACQUIRE) > 0;
}

void db_page_orphan(struct emu_ucontext *ctx)
{
	struct db_orphan *o;

	if (!ctx->db_page)
		return;
	o = calloc(1, sizeof(*o));
	if (!o)
		return;		/* leaks one page; stores stay ignored */
	o->page = ctx->db_page;
	o->maps = ctx->db_maps;
	o->next = db_orphans;
	db_orphans = o;
	ctx->db_page = NULL;
}

static bool orphan_unmap(void *addr)
{
	struct db_orphan **pp, *o;

	for (pp = &db_orphans; (o = *pp); pp = &o->next) {
		if (o->page != addr)
			continue;
		if (!--o->maps) {
			trap_page_free(o->page);
			db_pages_add(-1);
			*pp = o->next;
			free(o);
		}
		return true;
	}
	return false;
}

bool emu_munmap_doorbell(void *addr, size_t len)
{
	struct emu_ucontext *ctx;

	if (!len || len > EMU_PAGE_SIZE)
		return false;
	for (ctx = kernel_contexts; ctx; ctx = ctx->next) {
		if (ctx->db_page != addr)
			continue;
		if (!--ctx->db_maps) {
			trap_page_free(ctx->db_page);
			ctx->db_page = NULL;
			db_pages_add(-1);
		}
		return true;
	}
	return orphan_unmap(addr);
}

static void page_collect(void *page, uintptr_t start, uintptr_t end,
			 uintptr_t *out, unsigned int max, unsigned int *n)
{
	uintptr_t p = (uintptr_t)page;

	if (page && p < end && p + EMU_PAGE_SIZE > start && *n < max)
		out[(*n)++] = p;
}

unsigned int emu_doorbell_pages_in(uintptr_t start, uintptr_t end,
				   uintptr_t *out, unsigned int max)
{
	struct emu_ucontext *ctx;
	struct db_orphan *o;
	unsigned int n = 0, i, j;

	for (ctx = kernel_contexts; ctx; ctx = ctx->next)
		page_collect(ctx->db_page, start, end, out, max, &n);
	for (o = db_orphans; o; o = o->next)
		page_collect(o->page, start, end, out, max, &n);
	/* in address order, for the caller's walk over the range */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && out[j - 1] > out[j]; j--) {
			uintptr_t t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}
