// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions: ib_check_mr_access(), the umem checks against the
 * process's mappings and RLIMIT_MEMLOCK, and the lkey table the device
 * reads for its SGE checks.
 */
#include "kernel.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/random.h>
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

/* ib_check_mr_access(): the uverbs core's checks before the driver. */
int emu_check_mr_access(uint32_t access)
{
	if (access & (IB_UVERBS_ACCESS_REMOTE_ATOMIC |
		      IB_UVERBS_ACCESS_REMOTE_WRITE) &&
	    !(access & IB_UVERBS_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (access & ~CORE_ACCESS_SUPPORTED)
		return -EINVAL;
	/* No on-demand paging on MANA (no IBK_ON_DEMAND_PAGING): EOPNOTSUPP. */
	if (access & IB_UVERBS_ACCESS_ON_DEMAND)
		return -EOPNOTSUPP;
	return 0;
}

static bool access_writable(uint32_t access)
{
	return access & (IB_UVERBS_ACCESS_LOCAL_WRITE |
			 IB_UVERBS_ACCESS_REMOTE_WRITE |
			 IB_UVERBS_ACCESS_REMOTE_ATOMIC |
			 IB_UVERBS_ACCESS_MW_BIND);
}

/* Every page of [start, end) must be mapped (mincore fails otherwise). */
static int range_mapped(uintptr_t start, uintptr_t end)
{
	unsigned char vec[256];
	uintptr_t p;

	for (p = start; p < end; p += sizeof(vec) * EMU_PAGE_SIZE) {
		size_t len = end - p;

		if (len > sizeof(vec) * EMU_PAGE_SIZE)
			len = sizeof(vec) * EMU_PAGE_SIZE;
		if (mincore((void *)p, len, vec))
			return -EFAULT;
	}
	return 0;
}

static char *read_self_maps(void)
{
	size_t cap = 65536, used = 0;
	char *buf = malloc(cap);
	int fd = emu_libc_open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (!buf || fd < 0)
		goto err;
	while ((n = emu_libc_read(fd, buf + used, cap - used - 1)) > 0) {
		used += n;
		if (cap - used < 4096) {
			char *p = realloc(buf, cap * 2);

			if (!p)
				goto err;
			buf = p;
			cap *= 2;
		}
	}
	emu_libc_close(fd);
	buf[used] = 0;
	return buf;
err:
	if (fd >= 0)
		emu_libc_close(fd);
	free(buf);
	return NULL;
}

/*
 * Pinning needs read access, write access when the MR is writable; a
 * hole in [start, end) also fails.  1: cannot check (no /proc).
 */
static int range_permitted(uintptr_t start, uintptr_t end, bool write)
{
	char *maps = read_self_maps(), *line, *save = NULL;
	uintptr_t covered = start;
	int ret = -EFAULT;

	if (!maps)
		return 1;
	for (line = strtok_r(maps, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long lo, hi;
		char perms[5];

		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3)
			continue;
		if (hi <= covered || lo >= end)
			continue;
		if (lo > covered)
			break;
		if (perms[write ? 1 : 0] == '-')
			break;
		covered = hi;
		if (covered >= end) {
			ret = 0;
			break;
		}
	}
	free(maps);
	return ret;
}

/* ib_umem_get(): overflow, empty range, RLIMIT_MEMLOCK, mapping. */
int umem_check(uint64_t start, uint64_t length, bool write,
	       uint64_t *pinned)
{
	uint64_t end = start + length, first, last;
	struct rlimit rl;
	int ret;

	if (end < start || ((end + EMU_PAGE_SIZE - 1) & ~(EMU_PAGE_SIZE - 1)) < end)
		return -EINVAL;
	first = start & ~(EMU_PAGE_SIZE - 1);
	last = (end + EMU_PAGE_SIZE - 1) & ~(EMU_PAGE_SIZE - 1);
	if (last == first)
		return -EINVAL;
	*pinned = last - first;
	if (geteuid() != 0 && !getrlimit(RLIMIT_MEMLOCK, &rl) &&
	    rl.rlim_cur != RLIM_INFINITY &&
	    emu_dev.pinned_bytes + *pinned > rl.rlim_cur)
		return -ENOMEM;
	/*
	 * The maps first: one read answers for any length, where mincore()
	 * walks the range a MiB at a time (terabytes of a reservation, such
	 * as ASan's shadow, took minutes: found by fuzz_uverbs_write).
	 */
	ret = range_permitted(first, last, write);
	if (ret <= 0)
		return ret;
	return range_mapped(first, last);
}

uint64_t pinned_span(uint64_t start, uint64_t length)
{
	uint64_t first = start & ~(EMU_PAGE_SIZE - 1);
	uint64_t last = (start + length + EMU_PAGE_SIZE - 1) &
			~(EMU_PAGE_SIZE - 1);

	return last - first;
}

/*
 * Keys handed out to MRs (lkey == rkey), split as an RNIC's are: the high
 * 24 bits an index into the device's MR table (umem.c hashes on it), the
 * low 8 a key byte drawn for each registration.  The index starts at a
 * random point per device, so that one VM's keys say nothing about
 * another's (a remote peer that guesses an rkey must guess 32 bits, not
 * count from 0x1000 as every VM used to), and the key byte makes the
 * next key of a VM unguessable from the last one (1 in 256).
 */
static struct {
	bool seeded;
	uint32_t next_index;
	uint64_t rng;
} keys;

static uint64_t key_random(void)
{
	/* xorshift64*, seeded from the kernel's entropy once per process */
	keys.rng ^= keys.rng >> 12;
	keys.rng ^= keys.rng << 25;
	keys.rng ^= keys.rng >> 27;
	return keys.rng * 0x2545f4914f6cdd1dull;
}

static uint32_t mr_new_key(void)
{
	uint32_t key;

	if (!keys.seeded) {
		struct timespec ts;

		if (getrandom(&keys.rng, sizeof(keys.rng), GRND_NONBLOCK) !=
		    sizeof(keys.rng)) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			keys.rng = (uint64_t)ts.tv_nsec << 20 ^
				   (uint64_t)ts.tv_sec ^ (uint64_t)getpid() << 40;
		}
		keys.rng |= 1;
		keys.next_index = (uint32_t)key_random();
		keys.seeded = true;
	}
	/* an index still in use after 2^24 registrations is skipped */
	/* --vm: the index counts VM-wide, keys are unique per device */
	do {
		key = ((emu_vm_active() ? emu_vm_next(EMU_VM_MR_INDEX) :
					  keys.next_index++) & 0xffffff) << 8 |
		      (uint32_t)(key_random() & 0xff);
	} while (!key || emu_dev_mr_key_used(key));
	return key;
}

static void mr_release(struct emu_obj *obj)
{
	struct emu_mr *mr = (struct emu_mr *)obj;

	/*
	 * The dereg fence: under emu.lock, which the device thread holds for
	 * each packet, and the RC responder looks the rkey up again for
	 * every packet, so no byte of a remote WRITE in progress lands once
	 * ibv_dereg_mr() returns (its next packet is NAKed).
	 */
	emu_dev_mr_del(&mr->hw);
	if (mr->dmabuf)
		emu_dmabuf_put(mr->dmabuf);
	else if (!mr->device_mem)
		emu_dev.pinned_bytes -= pinned_span(mr->start, mr->length);
}

/*
 * The access bits mana_ib's VALID_MR_FLAGS held in the era (6.2: local
 * write, remote write and read; atomics and zero-based from 6.16; MW_BIND
 * with the MWs), after the optional bits are dropped (from 6.10).
 */
static uint32_t mr_valid_access(const struct emu_era *e, uint32_t *access)
{
	uint32_t valid = MANA_MR_VALID_ACCESS;

	if (e->mr_optional)
		*access &= ~IB_UVERBS_ACCESS_OPTIONAL_RANGE;
	if (!e->mr_atomic_zbva)
		valid &= ~(IB_UVERBS_ACCESS_REMOTE_ATOMIC |
			   IB_UVERBS_ACCESS_ZERO_BASED);
	if (!e->mw)
		valid &= ~IB_UVERBS_ACCESS_MW_BIND;
	return valid;
}

static void mr_commit(struct emu_mr *mr, struct emu_pd *pd, uint64_t start)
{
	/* GDMA hands out one key per MR; lkey == rkey. */
	mr->lkey = mr->rkey = mr_new_key();
	mr->hw = (struct emu_dev_mr){
		.start = start, .iova = mr->iova, .length = mr->length,
		.lkey = mr->lkey, .pd = pd,
		.writable = !!(mr->access & IB_UVERBS_ACCESS_LOCAL_WRITE),
		.access = mr->access,
	};
	emu_dev_mr_add(&mr->hw);
}

int emu_dmabuf_mr_reg(struct emu_pd *pd, int fd, const struct emu_mr_req *req,
		      struct emu_mr **out)
{
	struct emu_obj *dep = &pd->obj;
	uint32_t access = req->access;
	uint64_t end = req->start + req->length;
	struct emu_dmabuf *d;
	struct emu_mr *mr;
	int ret;

	/* mana_ib: the era's MR flags, else EOPNOTSUPP (not reg_mr's EINVAL) */
	if (access & ~mr_valid_access(kernel_era(), &access))
		return -EOPNOTSUPP;
	/* ib_umem_dmabuf_get(): overflow, the fd, the range in the buffer */
	if (end < req->start)
		return -EINVAL;
	d = emu_dmabuf_get(fd, &ret);
	if (!d)
		return ret;
	/* an empty range: no page size fits (mana_ib_create_dma_region) */
	if (emu_dmabuf_size(d) < end || !req->length) {
		emu_dmabuf_put(d);
		return -EINVAL;
	}
	mr = obj_create(pd->obj.ctx, EMU_OBJ_MR, sizeof(*mr), &dep, 1,
			mr_release);
	if (!mr) {
		emu_dmabuf_put(d);
		return -ENOMEM;
	}
	mr->dmabuf = d;
	mr->start = req->start;
	mr->length = req->length;
	mr->iova = req->iova;
	mr->access = req->access;
	mr_commit(mr, pd, (uintptr_t)emu_dmabuf_pages(d) + req->start);
	*out = mr;
	return 0;
}

int emu_dm_mr_reg(struct emu_pd *pd, struct emu_dm *dm,
		  const struct emu_mr_req *req, struct emu_mr **out)
{
	struct emu_obj *deps[2] = { &pd->obj, &dm->obj };
	uint32_t access = req->access;
	struct emu_mr *mr;

	/* mana_ib_reg_dm_mr: the MR flags of the era, else EOPNOTSUPP */
	if (access & ~mr_valid_access(kernel_era(), &access))
		return -EOPNOTSUPP;
	mr = obj_create(pd->obj.ctx, EMU_OBJ_MR, sizeof(*mr), deps, 2,
			mr_release);
	if (!mr)
		return -ENOMEM;
	mr->device_mem = true;
	mr->start = req->start;
	mr->length = req->length;
	mr->iova = 0;		/* GDMA_MR_TYPE_DM: offsets from the DM's start */
	mr->access = req->access;
	mr_commit(mr, pd, (uintptr_t)dm->mem + req->start);
	*out = mr;
	return 0;
}

int emu_mr_reg(struct emu_pd *pd, const struct emu_mr_req *req,
	       const struct emu_udata *uhw, struct emu_mr **out)
{
	struct emu_obj *dep = &pd->obj;
	uint32_t access = req->access;
	uint64_t pinned;
	struct emu_mr *mr;
	int ret;

	/* mana_ib_reg_user_mr: only the access bits the hardware knows */
	if (access & ~mr_valid_access(kernel_era(), &access))
		return -EINVAL;
	ret = umem_check(req->start, req->length, access_writable(access),
			 &pinned);
	if (ret)
		return ret;
	mr = obj_create(pd->obj.ctx, EMU_OBJ_MR, sizeof(*mr), &dep, 1,
			mr_release);
	if (!mr)
		return -ENOMEM;
	emu_dev.pinned_bytes += pinned;
	mr->start = req->start;
	mr->length = req->length;
	mr->iova = req->iova;
	mr->access = req->access;
	mr_commit(mr, pd, mr->start);
	*out = mr;
	return 0;
}

static void mw_release(struct emu_obj *obj)
{
	emu_dev_mr_del(&((struct emu_mw *)obj)->hw);
}

int emu_mw_alloc(struct emu_pd *pd, uint8_t type, struct emu_mw **out)
{
	struct emu_obj *dep = &pd->obj;
	struct emu_mw *mw;

	/* mana_ib_gd_create_mw: GDMA_MR_TYPE_MW1 or MW2, nothing else */
	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2)
		return -EINVAL;
	mw = obj_create(pd->obj.ctx, EMU_OBJ_MW, sizeof(*mw), &dep, 1,
			mw_release);
	if (!mw)
		return -ENOMEM;
	mw->type = type;
	mw->rkey = mr_new_key();
	/* unbound: no bytes, no rights (the responder's checks refuse it) */
	mw->hw = (struct emu_dev_mr){ .lkey = mw->rkey, .pd = pd };
	emu_dev_mr_add(&mw->hw);
	*out = mw;
	return 0;
}
