/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * vfio-user wire formats (QEMU docs/interop/vfio-user.rst, protocol 0.1):
 * the 16-byte message header and the payloads mana-vfio serves.
 *
 * Fields are read and written byte by byte in the host's byte order (the
 * protocol is host-endian; this machine is little-endian, and the byte
 * vectors in tests/test_vfio_user.c pin that).  Every decoder is
 * fail-closed: a short payload, a size field that disagrees with the
 * message, set reserved flags or an out-of-range value give -EINVAL and
 * leave the output untouched, so the server answers the client with an
 * error reply (or drops the connection) instead of acting on a guess.
 */
#ifndef MANA_VFIO_USER_H
#define MANA_VFIO_USER_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define VFU_HDR_SIZE		16
#define VFU_MAX_MSG		(1U << 20)	/* our max_data_xfer_size + slack */
#define VFU_MAX_DATA		(VFU_MAX_MSG - VFU_HDR_SIZE - 16)
#define VFU_MAX_FDS		16		/* our max_msg_fds */

enum vfu_cmd {
	VFU_VERSION = 1,
	VFU_DMA_MAP = 2,
	VFU_DMA_UNMAP = 3,
	VFU_DEVICE_GET_INFO = 4,
	VFU_DEVICE_GET_REGION_INFO = 5,
	VFU_DEVICE_GET_REGION_IO_FDS = 6,
	VFU_DEVICE_GET_IRQ_INFO = 7,
	VFU_DEVICE_SET_IRQS = 8,
	VFU_REGION_READ = 9,
	VFU_REGION_WRITE = 10,
	VFU_DMA_READ = 11,
	VFU_DMA_WRITE = 12,
	VFU_DEVICE_RESET = 13,
	VFU_REGION_WRITE_MULTI = 15,
	VFU_DEVICE_FEATURE = 16,
	VFU_MAX_CMD = 18,
};

#define VFU_F_TYPE_MASK		0xFU
#define VFU_F_TYPE_COMMAND	0x0U
#define VFU_F_TYPE_REPLY	0x1U
#define VFU_F_NO_REPLY		(1U << 4)
#define VFU_F_ERROR		(1U << 5)

/* VFIO PCI region and IRQ indexes (linux/vfio.h) */
#define VFU_PCI_BAR0_REGION	0
#define VFU_PCI_BAR5_REGION	5
#define VFU_PCI_ROM_REGION	6
#define VFU_PCI_CONFIG_REGION	7
#define VFU_PCI_VGA_REGION	8
#define VFU_PCI_NUM_REGIONS	9
#define VFU_PCI_INTX_IRQ	0
#define VFU_PCI_MSI_IRQ		1
#define VFU_PCI_MSIX_IRQ	2
#define VFU_PCI_ERR_IRQ		3
#define VFU_PCI_REQ_IRQ		4
#define VFU_PCI_NUM_IRQS	5

#define VFU_DEVICE_FLAGS_RESET	(1U << 0)
#define VFU_DEVICE_FLAGS_PCI	(1U << 1)
#define VFU_REGION_FLAG_READ	(1U << 0)
#define VFU_REGION_FLAG_WRITE	(1U << 1)
#define VFU_REGION_FLAG_MMAP	(1U << 2)
#define VFU_IRQ_INFO_EVENTFD	(1U << 0)
#define VFU_IRQ_INFO_MASKABLE	(1U << 1)
#define VFU_IRQ_INFO_NORESIZE	(1U << 3)
#define VFU_IRQ_SET_DATA_NONE	(1U << 0)
#define VFU_IRQ_SET_DATA_BOOL	(1U << 1)
#define VFU_IRQ_SET_DATA_EVENTFD (1U << 2)
#define VFU_IRQ_SET_ACTION_MASK	(1U << 3)
#define VFU_IRQ_SET_ACTION_UNMASK (1U << 4)
#define VFU_IRQ_SET_ACTION_TRIGGER (1U << 5)
#define VFU_DMA_FLAG_READ	(1U << 0)
#define VFU_DMA_FLAG_WRITE	(1U << 1)

static inline uint16_t vfu_get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t vfu_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t vfu_get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void vfu_put16(uint8_t *p, uint16_t v) { memcpy(p, &v, sizeof(v)); }
static inline void vfu_put32(uint8_t *p, uint32_t v) { memcpy(p, &v, sizeof(v)); }
static inline void vfu_put64(uint8_t *p, uint64_t v) { memcpy(p, &v, sizeof(v)); }

/* ------------------------------------------------------------------------ */
/* Header */

struct vfu_hdr {
	uint16_t id;
	uint16_t cmd;
	uint32_t size;		/* whole message, header included */
	uint32_t flags;
	uint32_t error;
};

/*
 * A command from the client: size within [16, VFU_MAX_MSG] and @len (the
 * bytes received) equal to it, type "command", only the No_reply bit
 * besides, and the error field (reserved in commands) zero.  The command
 * number itself is not judged here: an unknown one gets an ENOSYS reply.
 */
static inline int vfu_hdr_decode(const void *buf, size_t len,
				 struct vfu_hdr *out)
{
	const uint8_t *b = buf;
	struct vfu_hdr h;

	if (len < VFU_HDR_SIZE)
		return -EINVAL;
	h.id = vfu_get16(b);
	h.cmd = vfu_get16(b + 2);
	h.size = vfu_get32(b + 4);
	h.flags = vfu_get32(b + 8);
	h.error = vfu_get32(b + 12);
	if (h.size < VFU_HDR_SIZE || h.size > VFU_MAX_MSG || h.size != len)
		return -EINVAL;
	if ((h.flags & VFU_F_TYPE_MASK) != VFU_F_TYPE_COMMAND ||
	    (h.flags & ~(VFU_F_TYPE_MASK | VFU_F_NO_REPLY)) || h.error)
		return -EINVAL;
	*out = h;
	return 0;
}

/* The message size of a header (for reading the rest of a message). */
static inline int vfu_hdr_size(const void *buf, uint32_t *size)
{
	uint32_t s = vfu_get32((const uint8_t *)buf + 4);

	if (s < VFU_HDR_SIZE || s > VFU_MAX_MSG)
		return -EINVAL;
	*size = s;
	return 0;
}

/* A reply header to @cmd: errno 0 is a success, else the Error bit is set. */
static inline void vfu_reply_hdr_encode(const struct vfu_hdr *cmd,
					uint32_t size, uint32_t err, void *buf)
{
	uint8_t *b = buf;

	vfu_put16(b, cmd->id);
	vfu_put16(b + 2, cmd->cmd);
	vfu_put32(b + 4, size);
	vfu_put32(b + 8, VFU_F_TYPE_REPLY | (err ? VFU_F_ERROR : 0));
	vfu_put32(b + 12, err);
}

/* ------------------------------------------------------------------------ */
/* VERSION: major, minor, optional NUL-terminated JSON */

struct vfu_version {
	uint16_t major;
	uint16_t minor;
	const char *json;	/* NULL or a NUL-terminated string in the payload */
};

static inline int vfu_version_decode(const uint8_t *p, size_t len,
				     struct vfu_version *out)
{
	struct vfu_version v = { 0 };

	if (len < 4)
		return -EINVAL;
	v.major = vfu_get16(p);
	v.minor = vfu_get16(p + 2);
	if (len > 4) {
		/* the JSON must end at the payload's last byte, NUL included */
		if (p[len - 1] != '\0' || memchr(p + 4, '\0', len - 4) != p + len - 1)
			return -EINVAL;
		v.json = (const char *)p + 4;
	}
	*out = v;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* DMA_MAP / DMA_UNMAP */

struct vfu_dma_map {
	uint32_t flags;
	uint64_t offset;	/* into the fd */
	uint64_t addr;		/* guest DMA address */
	uint64_t size;
};

static inline bool vfu_range_ok(uint64_t addr, uint64_t size)
{
	return size && addr + size > addr;
}

static inline int vfu_dma_map_decode(const uint8_t *p, size_t len,
				     struct vfu_dma_map *out)
{
	struct vfu_dma_map m;

	if (len != 32 || vfu_get32(p) != 32)
		return -EINVAL;
	m.flags = vfu_get32(p + 4);
	m.offset = vfu_get64(p + 8);
	m.addr = vfu_get64(p + 16);
	m.size = vfu_get64(p + 24);
	if (m.flags & ~(VFU_DMA_FLAG_READ | VFU_DMA_FLAG_WRITE) ||
	    !vfu_range_ok(m.addr, m.size) || !vfu_range_ok(m.offset, m.size))
		return -EINVAL;
	*out = m;
	return 0;
}

struct vfu_dma_unmap {
	uint32_t argsz;
	uint32_t flags;
	uint64_t addr;
	uint64_t size;
};

/* flags are unused in this protocol version: any set bit is refused */
static inline int vfu_dma_unmap_decode(const uint8_t *p, size_t len,
				       struct vfu_dma_unmap *out)
{
	struct vfu_dma_unmap u;

	if (len != 24)
		return -EINVAL;
	u.argsz = vfu_get32(p);
	u.flags = vfu_get32(p + 4);
	u.addr = vfu_get64(p + 8);
	u.size = vfu_get64(p + 16);
	if (u.argsz < 24 || u.flags || !vfu_range_ok(u.addr, u.size))
		return -EINVAL;
	*out = u;
	return 0;
}

static inline void vfu_dma_unmap_encode(const struct vfu_dma_unmap *u,
					uint8_t *p)
{
	vfu_put32(p, 24);
	vfu_put32(p + 4, u->flags);
	vfu_put64(p + 8, u->addr);
	vfu_put64(p + 16, u->size);
}

/* ------------------------------------------------------------------------ */
/* DEVICE_GET_INFO, GET_REGION_INFO, GET_IRQ_INFO: argsz first */

/* argsz of a query: at least the fixed reply it asks for */
static inline int vfu_argsz_decode(const uint8_t *p, size_t len, size_t need,
				   uint32_t *argsz)
{
	if (len != need || vfu_get32(p) < need)
		return -EINVAL;
	*argsz = vfu_get32(p);
	return 0;
}

struct vfu_device_info {
	uint32_t flags;
	uint32_t num_regions;
	uint32_t num_irqs;
};

static inline void vfu_device_info_encode(const struct vfu_device_info *d,
					  uint8_t *p)
{
	vfu_put32(p, 16);
	vfu_put32(p + 4, d->flags);
	vfu_put32(p + 8, d->num_regions);
	vfu_put32(p + 12, d->num_irqs);
}

struct vfu_region_info {
	uint32_t flags;
	uint32_t index;
	uint64_t size;
	uint64_t offset;
};

/* The request names the index only; its other fields must be zero. */
static inline int vfu_region_info_decode(const uint8_t *p, size_t len,
					 uint32_t *index)
{
	uint32_t argsz;

	if (vfu_argsz_decode(p, len, 32, &argsz) || vfu_get32(p + 4) ||
	    vfu_get32(p + 12) || vfu_get64(p + 16) || vfu_get64(p + 24))
		return -EINVAL;
	*index = vfu_get32(p + 8);
	return 0;
}

static inline void vfu_region_info_encode(const struct vfu_region_info *r,
					  uint8_t *p)
{
	vfu_put32(p, 32);
	vfu_put32(p + 4, r->flags);
	vfu_put32(p + 8, r->index);
	vfu_put32(p + 12, 0);	/* no capabilities */
	vfu_put64(p + 16, r->size);
	vfu_put64(p + 24, r->offset);
}

struct vfu_irq_info {
	uint32_t flags;
	uint32_t index;
	uint32_t count;
};

static inline int vfu_irq_info_decode(const uint8_t *p, size_t len,
				      uint32_t *index)
{
	uint32_t argsz;

	if (vfu_argsz_decode(p, len, 16, &argsz) || vfu_get32(p + 4) ||
	    vfu_get32(p + 12))
		return -EINVAL;
	*index = vfu_get32(p + 8);
	return 0;
}

static inline void vfu_irq_info_encode(const struct vfu_irq_info *i,
				       uint8_t *p)
{
	vfu_put32(p, 16);
	vfu_put32(p + 4, i->flags);
	vfu_put32(p + 8, i->index);
	vfu_put32(p + 12, i->count);
}

/* ------------------------------------------------------------------------ */
/* DEVICE_SET_IRQS */

struct vfu_set_irqs {
	uint32_t flags;
	uint32_t index;
	uint32_t start;
	uint32_t count;
	const uint8_t *bools;	/* DATA_BOOL: count bytes, each 0 or 1 */
};

/*
 * Exactly one DATA flag and one ACTION flag; argsz equal to the payload;
 * DATA_BOOL carries count bytes of 0/1, the others nothing; start + count
 * must not wrap; count 0 only as the "disable all" form (DATA_NONE with
 * ACTION_TRIGGER and start 0).  @nfds is the number of descriptors that
 * came with the message: DATA_EVENTFD takes 0 (de-assign) or count of
 * them, the others none.
 */
static inline int vfu_set_irqs_decode(const uint8_t *p, size_t len,
				      unsigned int nfds,
				      struct vfu_set_irqs *out)
{
	struct vfu_set_irqs s = { 0 };
	uint32_t data, action, i;

	if (len < 20 || vfu_get32(p) != len)
		return -EINVAL;
	s.flags = vfu_get32(p + 4);
	s.index = vfu_get32(p + 8);
	s.start = vfu_get32(p + 12);
	s.count = vfu_get32(p + 16);
	data = s.flags & 0x7U;
	action = s.flags & 0x38U;
	if (s.flags & ~0x3FU || (data & (data - 1)) || !data ||
	    (action & (action - 1)) || !action)
		return -EINVAL;
	if (s.start + s.count < s.start || s.count > 2048)
		return -EINVAL;
	if (!s.count && (data != VFU_IRQ_SET_DATA_NONE ||
			 action != VFU_IRQ_SET_ACTION_TRIGGER || s.start))
		return -EINVAL;
	if (data == VFU_IRQ_SET_DATA_BOOL) {
		if (len != 20 + (size_t)s.count)
			return -EINVAL;
		for (i = 0; i < s.count; i++)
			if (p[20 + i] > 1)
				return -EINVAL;
		s.bools = p + 20;
	} else if (len != 20) {
		return -EINVAL;
	}
	if (data == VFU_IRQ_SET_DATA_EVENTFD ? (nfds && nfds != s.count) : nfds)
		return -EINVAL;
	*out = s;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* REGION_READ / REGION_WRITE */

struct vfu_region_rw {
	uint64_t offset;
	uint32_t region;
	uint32_t count;
	const uint8_t *data;	/* write: count bytes of the payload */
};

/* A read carries no data, a write exactly count bytes; count 1..max. */
static inline int vfu_region_rw_decode(const uint8_t *p, size_t len,
				       bool write, struct vfu_region_rw *out)
{
	struct vfu_region_rw r;

	if (len < 16)
		return -EINVAL;
	r.offset = vfu_get64(p);
	r.region = vfu_get32(p + 8);
	r.count = vfu_get32(p + 12);
	r.data = write ? p + 16 : NULL;
	if (!r.count || r.count > VFU_MAX_DATA || r.offset + r.count < r.offset)
		return -EINVAL;
	if (len != (write ? 16 + (size_t)r.count : 16))
		return -EINVAL;
	*out = r;
	return 0;
}

static inline void vfu_region_rw_encode(const struct vfu_region_rw *r,
					uint8_t *p)
{
	vfu_put64(p, r->offset);
	vfu_put32(p + 8, r->region);
	vfu_put32(p + 12, r->count);
}

#endif /* MANA_VFIO_USER_H */
