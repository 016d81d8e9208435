// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Application memory as the device reaches it: the queues' WQE caches
 * (filled with the fault-safe copy of device_int.h) and the lkey table of
 * the MRs the kernel registers (emu_dev_mr_add), with the exported forms
 * of the copy and the SGE check (hwq.h).
 */
#include "device.h"
#include "device_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Read up to WQ_CACHE_SIZE posted bytes from the head, wrap included. */
int dev_wq_cache_fill(struct emu_hwq *q)
{
	struct wq_cache *c = q->cache;
	uint32_t want = q->tail - q->head, off, first;

	if (want > WQ_CACHE_SIZE)
		want = WQ_CACHE_SIZE;
	off = q->head & (q->size - 1);
	first = q->size - off < want ? q->size - off : want;
	c->start = q->head;
	c->len = 0;
	if (ucopy(c->data, (void *)(uintptr_t)(q->buf + off), first,
		  false) != first)
		return -EFAULT;
	if (first < want &&
	    ucopy(c->data + first, (void *)(uintptr_t)q->buf, want - first,
		  false) != want - first)
		return -EFAULT;
	c->len = want;
	return 0;
}

/* keys are index << 8 | key byte (kernel/mr.c): the index picks the bucket */
#define MR_HASH_SIZE 1024
#define MR_BUCKET(key) (((key) >> 8) % MR_HASH_SIZE)

static struct emu_dev_mr *mr_hash[MR_HASH_SIZE];

void emu_dev_mr_add(struct emu_dev_mr *mr)
{
	struct emu_dev_mr **b = &mr_hash[MR_BUCKET(mr->lkey)];

	mr->hash_next = *b;
	*b = mr;
}

void emu_dev_mr_del(struct emu_dev_mr *mr)
{
	struct emu_dev_mr **pp;

	for (pp = &mr_hash[MR_BUCKET(mr->lkey)]; *pp;
	     pp = &(*pp)->hash_next) {
		if (*pp == mr) {
			*pp = mr->hash_next;
			break;
		}
	}
	/* no queue keeps it as its last MR (rare: a walk of the table) */
	dev_mr_forget(mr);
}

/* The MR of @lkey if it belongs to the queue's PD; cached in the queue. */
const struct emu_dev_mr *dev_mr_find(uint32_t key)
{
	struct emu_dev_mr *mr;

	for (mr = mr_hash[MR_BUCKET(key)]; mr; mr = mr->hash_next)
		if (mr->lkey == key)
			return mr;
	return NULL;
}

bool emu_dev_mr_key_used(uint32_t key)
{
	return dev_mr_find(key) != NULL;
}

const struct emu_dev_mr *dev_mr_lookup(struct emu_hwq *q, uint32_t lkey)
{
	struct emu_dev_mr *mr;

	for (mr = mr_hash[MR_BUCKET(lkey)]; mr; mr = mr->hash_next)
		if (mr->lkey == lkey)
			break;
	if (!mr || mr->pd != q->pd)
		return NULL;
	q->mr_last = mr;
	return mr;
}

static uint64_t dm_used;

void *emu_dev_dm_alloc(uint64_t len, uint32_t log_align)
{
	void *mem;

	if (!len || len > EMU_DM_CAPACITY - dm_used || log_align > 12)
		return NULL;
	/*
	 * Outside the application's memory as far as it knows: no verb
	 * gives its address, only DM MRs (zero-based) reach it.
	 */
	mem = aligned_alloc(EMU_PAGE_SIZE, (len + EMU_PAGE_SIZE - 1) &
				       ~(EMU_PAGE_SIZE - 1));
	if (!mem)
		return NULL;
	memset(mem, 0, len);
	dm_used += len;
	return mem;
}

void emu_dev_dm_free(void *mem, uint64_t len)
{
	if (!mem)
		return;
	dm_used -= len;
	free(mem);
}

size_t emu_dev_ucopy(void *local, void *remote, size_t len, bool to_user)
{
	return ucopy(local, remote, len, to_user);
}

uintptr_t emu_hwq_sge_map(struct emu_hwq *q, const struct gdma_sge *sge,
			  bool write)
{
	return sge_map(q, sge, write);
}
