// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue memory: sizes the hardware accepts, buffers from the application's
 * allocators or our own, the doorbell page, cached device limits.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mana.h"

static uint32_t align_up32(uint32_t v, uint32_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* RQ WQE: header, 8-byte OOB, SGEs; a whole number of 32-byte units. */
uint32_t mana_rq_wqe_size(uint32_t sge)
{
	return align_up32(MANA_WQE_HEADER_SIZE + MANA_RQ_OOB_SIZE +
			  MANA_WQE_SGE_SIZE * (sge ? sge : 1), MANA_WQE_BU_SIZE);
}

/* SQ WQE sized for the long (24-byte) TX OOB, so any client layout fits. */
uint32_t mana_sq_wqe_size(uint32_t sge)
{
	return align_up32(MANA_WQE_HEADER_SIZE + MANA_SQ_LONG_OOB_SIZE +
			  MANA_WQE_SGE_SIZE * (sge ? sge : 1), MANA_WQE_BU_SIZE);
}

/*
 * Queue buffers are a power of two and at least a page: the hardware wraps
 * offsets with a mask and maps queues as zero-offset DMA regions.
 * Returns 0 when the size cannot be represented.
 */
size_t mana_queue_size(uint64_t bytes)
{
	uint64_t size = MANA_PAGE_SIZE;

	if (bytes > (1ull << 40))
		return 0;
	while (size < bytes)
		size <<= 1;
	return size;
}

int mana_alloc_buf(struct mana_context *ctx, struct mana_pd *pd, size_t size,
		   uint64_t resource_type, struct mana_buf *buf)
{
	struct manadv_ctx_allocators allocators;
	struct ibv_context *ibctx = &ctx->ibv_ctx.context;
	void *addr = NULL;

	memset(buf, 0, sizeof(*buf));
	buf->size = size;

	pthread_mutex_lock(&ctx->lock);
	allocators = ctx->allocators;
	pthread_mutex_unlock(&ctx->lock);

	if (pd && pd->alloc) {
		addr = pd->alloc(&pd->ibv_pd, pd->pd_context, size,
				 MANA_PAGE_SIZE, resource_type);
		if (addr == IBV_ALLOCATOR_USE_DEFAULT) {
			addr = NULL;
		} else {
			buf->source = MANA_BUF_PD_ALLOCATOR;
			buf->pd = pd;
			buf->resource_type = resource_type;
			goto check;
		}
	}

	if (allocators.alloc) {
		addr = allocators.alloc(size, allocators.data);
		buf->source = MANA_BUF_CTX_ALLOCATOR;
		buf->ctx_free = allocators.free;
		buf->ctx_data = allocators.data;
		goto check;
	}

	buf->source = MANA_BUF_OWN;
	if (posix_memalign(&addr, MANA_PAGE_SIZE, size))
		addr = NULL;

check:
	if (!addr) {
		mana_err(ibctx, "cannot allocate a %zu-byte queue buffer", size);
		return ENOMEM;
	}
	buf->addr = addr;
	if ((uintptr_t)addr & (MANA_PAGE_SIZE - 1)) {
		mana_err(ibctx,
			 "allocator returned %p, queue buffers must be %u-byte aligned",
			 addr, MANA_PAGE_SIZE);
		mana_free_buf(buf);
		return EINVAL;
	}
	/* Owner bits start at zero: the device reads a clean ring. */
	memset(addr, 0, size);
	return 0;
}

void mana_free_buf(struct mana_buf *buf)
{
	if (!buf->addr)
		return;
	switch (buf->source) {
	case MANA_BUF_PD_ALLOCATOR:
		buf->pd->free(&buf->pd->ibv_pd, buf->pd->pd_context, buf->addr,
			      buf->resource_type);
		break;
	case MANA_BUF_CTX_ALLOCATOR:
		buf->ctx_free(buf->addr, buf->ctx_data);
		break;
	case MANA_BUF_OWN:
		free(buf->addr);
		break;
	}
	buf->addr = NULL;
}

int mana_get_caps(struct mana_context *ctx, struct mana_caps *caps)
{
	struct ibv_device_attr_ex attr;
	int ret = 0;

	pthread_mutex_lock(&ctx->lock);
	if (!ctx->caps_valid) {
		memset(&attr, 0, sizeof(attr));
		ret = mana_query_device_ex(&ctx->ibv_ctx.context, NULL, &attr,
					   sizeof(attr));
		if (!ret) {
			ctx->caps.max_qp_wr = attr.orig_attr.max_qp_wr;
			ctx->caps.max_cqe = attr.orig_attr.max_cqe;
			ctx->caps.phys_port_cnt = attr.orig_attr.phys_port_cnt;
			ctx->caps_valid = true;
		}
	}
	*caps = ctx->caps;
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

/* Every queue of a context rings the same page: map it once. */
void *mana_get_db_page(struct mana_context *ctx)
{
	void *page;

	pthread_mutex_lock(&ctx->lock);
	if (!ctx->db_page) {
		page = mmap(NULL, MANA_PAGE_SIZE, PROT_WRITE, MAP_SHARED,
			    ctx->ibv_ctx.context.cmd_fd, 0);
		if (page == MAP_FAILED)
			mana_err(&ctx->ibv_ctx.context,
				 "cannot map the doorbell page: %s",
				 strerror(errno));
		else
			ctx->db_page = page;
	}
	page = ctx->db_page;
	pthread_mutex_unlock(&ctx->lock);
	return page;
}
