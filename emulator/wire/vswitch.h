/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The socket: wire's messages between two ports (socket.c).  Every port
 * of a wire has a connection (AF_UNIX SOCK_SEQPACKET) to every other port;
 * each message on it is one record:
 *
 *   byte 0  'V' (0x56)      magic
 *   byte 1  type            1 DATA, 2 HELLO
 *   byte 2  version         1
 *   byte 3  0               reserved
 *   DATA:   an Ethernet frame, VSW_FRAME_MIN .. VSW_FRAME_MAX bytes
 *   HELLO:  the sender's identity, once per connection, before any DATA:
 *           MAC (6 bytes; all zero: none announced), GID count n (0..16),
 *           0, then n GIDs of 16 bytes (IPv4 as ::ffff:a.b.c.d)
 *
 * Decoding is fail-closed: anything else (another magic, type or
 * version, a nonzero reserved byte, a length that is not exactly what the
 * record says, a group MAC, more than 16 GIDs) is refused with -EINVAL.
 * Stands alone (no project header): the fuzzer and the tests use it.
 */
#ifndef MANA_EMU_VSWITCH_H
#define MANA_EMU_VSWITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VSW_MAGIC	0x56
#define VSW_VERSION	1
#define VSW_HDR_LEN	4
#define VSW_MAX_GIDS	16	/* a RoCE port's GID table */
#define VSW_FRAME_MIN	14	/* an Ethernet header */
#define VSW_FRAME_MAX	9216	/* BACKEND_MAX_FRAME */
#define VSW_HELLO_FIXED	8	/* MAC, count, reserved */
#define VSW_HELLO_MAX	(VSW_HDR_LEN + VSW_HELLO_FIXED + VSW_MAX_GIDS * 16)
#define VSW_MSG_MAX	(VSW_HDR_LEN + VSW_FRAME_MAX)

enum vsw_type {
	VSW_DATA = 1,
	VSW_HELLO = 2,
};

/* A port's identity: what frames are delivered to it by (MAC, GIDs). */
struct vsw_id {
	uint8_t mac[6];			/* all zero: none */
	unsigned int ngid;
	uint8_t gid[VSW_MAX_GIDS][16];
};

struct vsw_msg {
	enum vsw_type type;
	const uint8_t *frame;		/* DATA: inside the decoded buffer */
	size_t len;
	struct vsw_id id;		/* HELLO */
};

/* The 4 header bytes of a DATA record (the frame follows). */
void vsw_data_hdr(uint8_t hdr[VSW_HDR_LEN]);

/*
 * HELLO for @id into @buf: its length, or 0 if @id is not valid (group
 * MAC, too many GIDs) or @cap too small.
 */
size_t vsw_encode_hello(const struct vsw_id *id, uint8_t *buf, size_t cap);

/* One record: 0, or -EINVAL and @out untouched but for its type. */
int vsw_decode(const uint8_t *buf, size_t len, struct vsw_msg *out);

/*
 * The destination address of a RoCEv2 packet (untagged Ethernet, IPv4 or
 * IPv6, UDP to 4791) as a GID: true, or false if @f is no such packet.
 */
bool vsw_roce_dst(const uint8_t *f, size_t len, uint8_t gid[16]);

/* Does @id hold @gid? */
bool vsw_id_has_gid(const struct vsw_id *id, const uint8_t gid[16]);

#endif /* MANA_EMU_VSWITCH_H */
