// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The socket: wire's records (vswitch.h): encode and fail-closed decode,
 * and the RoCEv2 destination a delivery by GID needs.
 */
#include "vswitch.h"

#include <errno.h>
#include <string.h>

#define ROCE_UDP_PORT	4791

void vsw_data_hdr(uint8_t hdr[VSW_HDR_LEN])
{
	hdr[0] = VSW_MAGIC;
	hdr[1] = VSW_DATA;
	hdr[2] = VSW_VERSION;
	hdr[3] = 0;
}

size_t vsw_encode_hello(const struct vsw_id *id, uint8_t *buf, size_t cap)
{
	size_t len;

	if (id->ngid > VSW_MAX_GIDS || (id->mac[0] & 1))
		return 0;
	len = VSW_HDR_LEN + VSW_HELLO_FIXED + (size_t)id->ngid * 16;
	if (cap < len)
		return 0;
	buf[0] = VSW_MAGIC;
	buf[1] = VSW_HELLO;
	buf[2] = VSW_VERSION;
	buf[3] = 0;
	memcpy(buf + 4, id->mac, 6);
	buf[10] = (uint8_t)id->ngid;
	buf[11] = 0;
	memcpy(buf + 12, id->gid, (size_t)id->ngid * 16);
	return len;
}

int vsw_decode(const uint8_t *buf, size_t len, struct vsw_msg *out)
{
	size_t n;

	out->type = 0;
	if (len < VSW_HDR_LEN || buf[0] != VSW_MAGIC ||
	    buf[2] != VSW_VERSION || buf[3])
		return -EINVAL;
	switch (buf[1]) {
	case VSW_DATA:
		n = len - VSW_HDR_LEN;
		if (n < VSW_FRAME_MIN || n > VSW_FRAME_MAX)
			return -EINVAL;
		out->type = VSW_DATA;
		out->frame = buf + VSW_HDR_LEN;
		out->len = n;
		return 0;
	case VSW_HELLO:
		if (len < VSW_HDR_LEN + VSW_HELLO_FIXED)
			return -EINVAL;
		n = buf[10];
		if (n > VSW_MAX_GIDS || buf[11] || (buf[4] & 1) ||
		    len != VSW_HDR_LEN + VSW_HELLO_FIXED + n * 16)
			return -EINVAL;
		out->type = VSW_HELLO;
		memset(&out->id, 0, sizeof(out->id));
		memcpy(out->id.mac, buf + 4, 6);
		out->id.ngid = (unsigned int)n;
		memcpy(out->id.gid, buf + 12, n * 16);
		return 0;
	default:
		return -EINVAL;
	}
}

static unsigned int be16_at(const uint8_t *p)
{
	return (unsigned int)p[0] << 8 | p[1];
}

bool vsw_roce_dst(const uint8_t *f, size_t len, uint8_t gid[16])
{
	size_t ihl;

	if (len < 14)
		return false;
	switch (be16_at(f + 12)) {
	case 0x0800:
		if (len < 34 || (f[14] >> 4) != 4 || f[23] != 17)
			return false;
		ihl = (size_t)(f[14] & 0xf) * 4;
		if (ihl < 20 || len < 14 + ihl + 8 ||
		    be16_at(f + 14 + ihl + 2) != ROCE_UDP_PORT)
			return false;
		memset(gid, 0, 10);
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, f + 30, 4);
		return true;
	case 0x86dd:
		/* RoCEv2 puts UDP right after the fixed header */
		if (len < 14 + 40 + 8 || (f[14] >> 4) != 6 || f[20] != 17 ||
		    be16_at(f + 54 + 2) != ROCE_UDP_PORT)
			return false;
		memcpy(gid, f + 38, 16);
		return true;
	default:
		return false;
	}
}

bool vsw_id_has_gid(const struct vsw_id *id, const uint8_t gid[16])
{
	unsigned int i;

	for (i = 0; i < id->ngid && i < VSW_MAX_GIDS; i++)
		if (!memcmp(id->gid[i], gid, 16))
			return true;
	return false;
}
