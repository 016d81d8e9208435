/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 packets (IBA Annex A17): Ethernet / IPv4 or IPv6 / UDP 4791 /
 * BTH / RETH / AETH / ImmDt / IETH / payload / pad / ICRC, for the RC
 * and UC opcodes the MANA RNIC speaks.  Encoding and decoding fail closed: an
 * unknown or unsupported opcode, a transport version other than 0, a
 * length that disagrees with a header, a bad IPv4 header checksum or a
 * bad ICRC is rejected with -EINVAL.
 *
 * GIDs are 16 bytes; an IPv4 address travels as ::ffff:a.b.c.d and the
 * packet is IPv4 exactly when both GIDs are IPv4-mapped.
 */
#ifndef MANA_EMU_ROCE_H
#define MANA_EMU_ROCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROCE_UDP_PORT	4791
#define ROCE_ETH_HLEN	14
#define ROCE_IPV4_HLEN	20
#define ROCE_IPV6_HLEN	40
#define ROCE_UDP_HLEN	8
#define ROCE_BTH_LEN	12
#define ROCE_RETH_LEN	16
#define ROCE_AETH_LEN	4
#define ROCE_IMM_LEN	4
#define ROCE_IETH_LEN	4
#define ROCE_ICRC_LEN	4
#define ROCE_DETH_LEN	8
/* The GSI QP (QP1) and the Q_Key every management datagram carries. */
#define ROCE_GSI_QPN	1
#define ROCE_GSI_QKEY	0x80010000u
#define ROCE_PKEY_DEFAULT 0xffff
#define ROCE_PSN_MASK	0xffffffu
#define ROCE_QPN_MASK	0xffffffu
/* Largest header stack: Eth + IPv6 + UDP + BTH + RETH + ImmDt. */
#define ROCE_MAX_HDRS	(ROCE_ETH_HLEN + ROCE_IPV6_HLEN + ROCE_UDP_HLEN + \
			 ROCE_BTH_LEN + ROCE_RETH_LEN + ROCE_IMM_LEN)
#define ROCE_MAX_MTU	4096
#define ROCE_MAX_FRAME	(ROCE_MAX_HDRS + ROCE_MAX_MTU + 3 + ROCE_ICRC_LEN)

/* The reliable-connected BTH opcodes (IBA 9.2, table 35). */
enum roce_opcode {
	ROCE_SEND_FIRST = 0x00,
	ROCE_SEND_MIDDLE = 0x01,
	ROCE_SEND_LAST = 0x02,
	ROCE_SEND_LAST_IMM = 0x03,
	ROCE_SEND_ONLY = 0x04,
	ROCE_SEND_ONLY_IMM = 0x05,
	ROCE_WRITE_FIRST = 0x06,
	ROCE_WRITE_MIDDLE = 0x07,
	ROCE_WRITE_LAST = 0x08,
	ROCE_WRITE_LAST_IMM = 0x09,
	ROCE_WRITE_ONLY = 0x0a,
	ROCE_WRITE_ONLY_IMM = 0x0b,
	ROCE_READ_REQ = 0x0c,
	ROCE_READ_RESP_FIRST = 0x0d,
	ROCE_READ_RESP_MIDDLE = 0x0e,
	ROCE_READ_RESP_LAST = 0x0f,
	ROCE_READ_RESP_ONLY = 0x10,
	ROCE_ACK = 0x11,
	ROCE_SEND_LAST_INV = 0x16,
	ROCE_SEND_ONLY_INV = 0x17,
	/*
	 * Unreliable connected (IBA table 35, class 001b): the RC SEND and
	 * WRITE opcodes with 0x20 added; no READ, ACK or invalidate.
	 */
	ROCE_UC = 0x20,
	ROCE_UC_SEND_FIRST = 0x20,
	ROCE_UC_SEND_MIDDLE = 0x21,
	ROCE_UC_SEND_LAST = 0x22,
	ROCE_UC_SEND_LAST_IMM = 0x23,
	ROCE_UC_SEND_ONLY = 0x24,
	ROCE_UC_SEND_ONLY_IMM = 0x25,
	ROCE_UC_WRITE_FIRST = 0x26,
	ROCE_UC_WRITE_MIDDLE = 0x27,
	ROCE_UC_WRITE_LAST = 0x28,
	ROCE_UC_WRITE_LAST_IMM = 0x29,
	ROCE_UC_WRITE_ONLY = 0x2a,
	ROCE_UC_WRITE_ONLY_IMM = 0x2b,
	/* unreliable datagram (IBA 9.2 table 35, UD prefix 011): only the
	 * GSI's management datagrams (the connection manager's MADs) */
	ROCE_UD_SEND_ONLY = 0x64,
};

/* What follows the BTH, and where the opcode sits in a message. */
enum {
	ROCE_F_RETH = 1 << 0,
	ROCE_F_AETH = 1 << 1,
	ROCE_F_IMM = 1 << 2,
	ROCE_F_IETH = 1 << 3,
	ROCE_F_PAYLOAD = 1 << 4,	/* may carry data */
	ROCE_F_FIRST = 1 << 5,		/* starts a message */
	ROCE_F_LAST = 1 << 6,		/* ends a message */
	ROCE_F_SEND = 1 << 7,
	ROCE_F_WRITE = 1 << 8,
	ROCE_F_READ_RESP = 1 << 9,
	ROCE_F_UC = 1 << 10,		/* unreliable connected */
	ROCE_F_DETH = 1 << 11,		/* UD: Q_Key and source QP follow */
};

/*
 * 0 for an opcode this device does not speak (atomics, UD other than
 * SEND_ONLY, RD, ...).  UD SEND_ONLY has ROCE_F_DETH and not ROCE_F_SEND:
 * it is never an RC or UC QP's.
 */
unsigned int roce_opcode_flags(uint8_t opcode);

/* AETH syndrome (IBA 9.7.5.1.1): bits 7..5 the kind, 4..0 its value. */
#define ROCE_SYN_ACK(credits)	((uint8_t)(0x00 | ((credits) & 0x1f)))
#define ROCE_SYN_RNR(timer)	((uint8_t)(0x20 | ((timer) & 0x1f)))
#define ROCE_SYN_NAK(code)	((uint8_t)(0x60 | ((code) & 0x1f)))
#define ROCE_SYN_KIND(s)	((s) & 0xe0)
#define ROCE_SYN_KIND_ACK	0x00
#define ROCE_SYN_KIND_RNR	0x20
#define ROCE_SYN_KIND_NAK	0x60
#define ROCE_CREDITS_INVALID	0x1f
enum roce_nak_code {
	ROCE_NAK_PSN_SEQ = 0,
	ROCE_NAK_INVALID_REQ = 1,
	ROCE_NAK_REMOTE_ACCESS = 2,
	ROCE_NAK_REMOTE_OP = 3,
};

/* A decoded (or to-be-encoded) packet. */
struct roce_pkt {
	uint8_t dmac[6], smac[6];
	bool ipv6;			/* decode: from the ethertype */
	uint8_t sgid[16], dgid[16];	/* IPv4 as ::ffff:a.b.c.d */
	uint8_t traffic_class;		/* IPv4: DSCP << 2 | ECN */
	uint8_t hop_limit;		/* IPv4 TTL */
	uint32_t flow_label;		/* IPv6 only, 20 bits */
	uint16_t udp_sport;
	/* BTH */
	uint8_t opcode;
	bool se, mig, ack_req;
	uint16_t pkey;
	uint32_t dqpn, psn;		/* 24 bits */
	/* RETH */
	uint64_t va;
	uint32_t rkey, dma_len;
	/* AETH */
	uint8_t syndrome;
	uint32_t msn;			/* 24 bits */
	uint32_t imm;			/* ImmDt, as a big-endian number */
	uint32_t ieth;			/* IETH: the rkey to invalidate */
	/* DETH (UD) */
	uint32_t qkey;
	uint32_t src_qpn;		/* 24 bits */
	/* payload: encode reads it, decode points into the frame */
	const uint8_t *payload;
	uint32_t payload_len;
};

/*
 * Encode into @buf (@cap bytes); *len = the frame length.  Pad bytes are
 * zero; IPv4 gets DF, ID 0 and its header checksum; UDP checksum 0.
 * -EINVAL for a bad field (opcode, 24-bit overflow, mixed IPv4/IPv6 GIDs),
 * -ENOSPC if @cap is too small.
 */
int roce_encode(const struct roce_pkt *p, uint8_t *buf, size_t cap,
		size_t *len);

/* Decode a whole Ethernet frame: 0, or -EINVAL (not RoCEv2, or bad). */
int roce_decode(const uint8_t *f, size_t len, struct roce_pkt *p);

/*
 * A cheap look at an Ethernet frame: is it UDP to port 4791 (IPv4 or
 * IPv6, untagged)?  Decides which path a received frame takes.
 */
bool roce_frame_is_roce(const uint8_t *f, size_t len);

/*
 * The ICRC of the frame's IP packet @ip (@len bytes, from the IP header to
 * just before the ICRC): CRC-32 over 64 one bits standing in for the LRH,
 * then the packet with the variant fields set to ones (IPv4 TOS, TTL and
 * header checksum; IPv6 traffic class, flow label and hop limit; UDP
 * checksum; BTH byte 4).  Returned as the number whose little-endian bytes
 * go on the wire.
 */
uint32_t roce_icrc(const uint8_t *ip, size_t len, bool ipv6);

/*
 * The UDP source port of a RoCEv2 flow, as the kernel's
 * rdma_get_udp_sport() picks it: from the flow label, or when that is 0
 * from a hash of the two QP numbers; always in 0xC000..0xFFFF.
 */
uint16_t roce_udp_sport(uint32_t flow_label, uint32_t lqpn, uint32_t rqpn);

/* 24-bit PSN arithmetic: a - b as a signed distance in (-2^23, 2^23]. */
static inline int32_t roce_psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

static inline uint32_t roce_psn_add(uint32_t a, uint32_t n)
{
	return (a + n) & ROCE_PSN_MASK;
}

/* The RNR NAK timer (IBA table 45) of a 5-bit encoding, in microseconds. */
uint32_t roce_rnr_timer_us(uint8_t code);

/* Path MTU of enum ibv_mtu (1 = 256 ... 5 = 4096) in bytes; 0 if bad. */
static inline uint32_t roce_mtu_bytes(uint8_t ibv_mtu)
{
	return ibv_mtu >= 1 && ibv_mtu <= 5 ? 128u << ibv_mtu : 0;
}

#endif /* MANA_EMU_ROCE_H */
