// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * /dev/udmabuf and the dma-bufs it exports (Linux drivers/dma-buf/
 * udmabuf.c): the exporter a test (or any program) in the emulated VM can
 * make a dma-buf with, from a memfd sealed against shrinking, for
 * ibv_reg_dmabuf_mr().  The checks and errnos are udmabuf's; the
 * dma-buf's pages are the memfd's, mapped once here as the device's view
 * (the kernel pins them), and an mmap() of the dma-buf fd maps the same
 * pages.  A dma-buf lives while its fd (or a dup) is open or an MR uses
 * it.
 */
#include "kernel.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/dma-buf.h>
#include <linux/udmabuf.h>

#include "emulator/core/emu.h"
#include "emulator/lib/libc.h"

/* udmabuf's module parameters, at their defaults */
#define UDMABUF_LIST_LIMIT 1024
#define UDMABUF_SIZE_LIMIT (64ull << 20)

struct emu_udmabuf_item {
	int memfd;			/* our dup of the application's memfd */
	uint64_t offset, size;
};

struct emu_dmabuf {
	int fd;				/* the application's fd (or a dup) */
	bool fd_open;
	unsigned int mr_refs;
	uint64_t size;
	void *pages;			/* every item, in order, mapped shared */
	unsigned int nitems;
	struct emu_udmabuf_item *items;
};

struct emu_udmabuf_file {
	int fd;
};

static void dmabuf_free(struct emu_dmabuf *d)
{
	unsigned int i;

	if (d->pages)
		emu_libc_munmap(d->pages, d->size);
	for (i = 0; i < d->nitems; i++)
		if (d->items[i].memfd >= 0)
			emu_libc_close(d->items[i].memfd);
	free(d->items);
	free(d);
}

/* check_memfd_seals(): a memfd (shmem or hugetlbfs) that cannot shrink */
static int memfd_check(int fd)
{
	int seals = emu_libc_fcntl_int(fd, F_GET_SEALS, 0);

	if (seals < 0)
		return -EBADFD;	/* not open, or no memfd: no seals at all */
	if (!(seals & F_SEAL_SHRINK) || (seals & F_SEAL_WRITE))
		return -EINVAL;
	return 0;
}

/* The items' pages one after the other in one reserved range. */
static int dmabuf_map(struct emu_dmabuf *d)
{
	uint64_t at = 0;
	unsigned int i;
	void *p;

	d->pages = emu_libc_mmap(NULL, d->size, PROT_NONE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (d->pages == MAP_FAILED) {
		d->pages = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < d->nitems; i++) {
		p = emu_libc_mmap((char *)d->pages + at, d->items[i].size,
				  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
				  d->items[i].memfd, (off_t)d->items[i].offset);
		if (p == MAP_FAILED)
			return -errno;
		at += d->items[i].size;
	}
	return 0;
}

/* udmabuf_create(): the new dma-buf's fd, or -errno */
static int udmabuf_create(uint32_t flags, const struct udmabuf_create_item *list,
			  uint32_t count)
{
	struct emu_dmabuf *d;
	uint64_t pages = 0;
	struct stat st;
	unsigned int i;
	int ret, fd;

	if (flags & ~UDMABUF_FLAGS_CLOEXEC)
		return -EINVAL;
	for (i = 0; i < count; i++) {
		if ((list[i].offset | list[i].size) & (EMU_PAGE_SIZE - 1))
			return -EINVAL;
		pages += list[i].size / EMU_PAGE_SIZE;
		if (pages > UDMABUF_SIZE_LIMIT / EMU_PAGE_SIZE)
			return -EINVAL;
	}
	if (!pages)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->items = calloc(count, sizeof(*d->items));
	if (!d->items) {
		free(d);
		return -ENOMEM;
	}
	for (i = 0; i < count; i++)
		d->items[i].memfd = -1;
	d->nitems = count;
	for (i = 0; i < count; i++) {
		ret = memfd_check((int)list[i].memfd);
		if (ret)
			goto err;
		/* the pages must exist: a range past the memfd's end */
		if (emu_libc_fstat((int)list[i].memfd, &st) ||
		    list[i].offset + list[i].size > (uint64_t)st.st_size) {
			ret = -EINVAL;
			goto err;
		}
		d->items[i].memfd = emu_libc_fcntl_int((int)list[i].memfd,
						       F_DUPFD_CLOEXEC, 0);
		if (d->items[i].memfd < 0) {
			ret = -errno;
			goto err;
		}
		d->items[i].offset = list[i].offset;
		d->items[i].size = list[i].size;
		d->size += list[i].size;
	}
	ret = dmabuf_map(d);
	if (ret)
		goto err;
	fd = eventfd(0, flags & UDMABUF_FLAGS_CLOEXEC ? EFD_CLOEXEC : 0);
	if (fd < 0) {
		ret = -errno;
		goto err;
	}
	ret = emu_fd_register(fd, EMU_FD_DMABUF, d);
	if (ret) {
		emu_libc_close(fd);
		goto err;
	}
	d->fd = fd;
	d->fd_open = true;
	if (emu_verbose())
		emu_log("udmabuf: dma-buf fd %d of %llu bytes", fd,
			(unsigned long long)d->size);
	return fd;
err:
	dmabuf_free(d);
	return ret;
}

int emu_udmabuf_ioctl(unsigned long request, void *arg)
{
	struct udmabuf_create_list head;
	struct udmabuf_create_item *list;
	struct udmabuf_create one;
	int ret;

	switch (request) {
	case UDMABUF_CREATE:
		if (emu_copy_from_user(&one, arg, sizeof(one)))
			return -EFAULT;
		return udmabuf_create(one.flags, &(struct udmabuf_create_item){
			.memfd = one.memfd, .offset = one.offset,
			.size = one.size }, 1);
	case UDMABUF_CREATE_LIST:
		if (emu_copy_from_user(&head, arg, sizeof(head)))
			return -EFAULT;
		if (head.count > UDMABUF_LIST_LIMIT)
			return -EINVAL;
		list = calloc(head.count ? head.count : 1, sizeof(*list));
		if (!list)
			return -ENOMEM;
		ret = emu_copy_from_user(list, (char *)arg + sizeof(head),
					 head.count * sizeof(*list)) ? -EFAULT :
		      udmabuf_create(head.flags, list, head.count);
		free(list);
		return ret;
	default:
		return -ENOTTY;
	}
}

void *emu_udmabuf_open(int fd)
{
	struct emu_udmabuf_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->fd = fd;
	if (emu_fd_register(fd, EMU_FD_UDMABUF, f)) {
		free(f);
		return NULL;
	}
	return f;
}

int *emu_udmabuf_owned_fd(void *obj, bool dmabuf)
{
	return dmabuf ? &((struct emu_dmabuf *)obj)->fd :
			&((struct emu_udmabuf_file *)obj)->fd;
}

void emu_udmabuf_release(void *obj, bool dmabuf)
{
	struct emu_dmabuf *d = obj;

	if (!dmabuf) {
		emu_fd_unregister(((struct emu_udmabuf_file *)obj)->fd);
		free(obj);
		return;
	}
	emu_fd_unregister(d->fd);
	d->fd_open = false;
	if (!d->mr_refs)
		dmabuf_free(d);
}

/* dma_buf_ioctl(): DMA_BUF_IOCTL_SYNC brackets CPU access; coherent here */
int emu_dmabuf_ioctl(unsigned long request, void *arg)
{
	struct dma_buf_sync sync;

	if (request != DMA_BUF_IOCTL_SYNC)
		return -ENOTTY;
	if (emu_copy_from_user(&sync, arg, sizeof(sync)))
		return -EFAULT;
	if ((sync.flags & ~DMA_BUF_SYNC_VALID_FLAGS_MASK) ||
	    !(sync.flags & DMA_BUF_SYNC_RW))
		return -EINVAL;
	return 0;
}

/*
 * dma_buf_mmap_internal() + udmabuf's mmap: shared, inside the buffer;
 * each item's part of the range maps its memfd's pages.
 */
void *emu_dmabuf_mmap(void *obj, void *addr, size_t len, int prot, int flags,
		      uint64_t offset, int *err)
{
	struct emu_dmabuf *d = obj;
	uint64_t pages = (len + EMU_PAGE_SIZE - 1) / EMU_PAGE_SIZE;
	uint64_t at = 0, lo, hi;
	unsigned int i;
	char *p, *q;

	if (!len || !(flags & MAP_SHARED) || (offset & (EMU_PAGE_SIZE - 1)) ||
	    offset / EMU_PAGE_SIZE + pages > d->size / EMU_PAGE_SIZE) {
		*err = EINVAL;
		return MAP_FAILED;
	}
	p = emu_libc_mmap(addr, len, PROT_NONE,
			  (flags & MAP_FIXED) | MAP_PRIVATE | MAP_ANONYMOUS, -1,
			  0);
	if (p == MAP_FAILED) {
		*err = errno;
		return MAP_FAILED;
	}
	for (i = 0; i < d->nitems; at += d->items[i].size, i++) {
		lo = offset > at ? offset : at;
		hi = offset + pages * EMU_PAGE_SIZE;
		if (hi > at + d->items[i].size)
			hi = at + d->items[i].size;
		if (lo >= hi)
			continue;
		q = emu_libc_mmap(p + (lo - offset), hi - lo, prot,
				  (flags & ~MAP_FIXED_NOREPLACE) | MAP_FIXED,
				  d->items[i].memfd,
				  (off_t)(d->items[i].offset + (lo - at)));
		if (q == MAP_FAILED) {
			*err = errno;
			emu_libc_munmap(p, len);
			return MAP_FAILED;
		}
	}
	return p;
}

struct emu_dmabuf *emu_dmabuf_get(int fd, int *err)
{
	struct emu_dmabuf *d = emu_fd_obj(fd, EMU_FD_DMABUF);

	if (!d) {
		/* fget() fails for a closed fd; any other file is no dma-buf */
		*err = emu_libc_fcntl_int(fd, F_GETFD, 0) < 0 ? -EBADF : -EINVAL;
		return NULL;
	}
	d->mr_refs++;
	return d;
}

void emu_dmabuf_put(struct emu_dmabuf *d)
{
	if (--d->mr_refs == 0 && !d->fd_open)
		dmabuf_free(d);
}

uint64_t emu_dmabuf_size(const struct emu_dmabuf *d)
{
	return d->size;
}

void *emu_dmabuf_pages(const struct emu_dmabuf *d)
{
	return d->pages;
}
