/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Management datagrams of the IBTA connection manager (IBA vol. 1 chapter
 * 12.6, the MAD header of 13.4.3): the 256-byte MADs that travel to QP1 in
 * RoCEv2 UD packets (roce.h: UD SEND_ONLY, DETH Q_Key 0x80010000).
 *
 * Offsets below are from the end of the 24-byte MAD header, as the
 * standard's tables give them.  Encoding and decoding fail closed:
 * a MAD that is not 256 bytes, another base/class version or class, a
 * method other than Send, a nonzero status or reserved header field, an
 * attribute the CM does not define, or a field out of range is -EINVAL.
 */
#ifndef MANA_EMU_IB_CM_H
#define MANA_EMU_IB_CM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IB_MAD_LEN		256
#define IB_MAD_HDR_LEN		24
#define IB_MAD_BASE_VERSION	1
#define IB_MGMT_CLASS_CM	0x07
#define IB_CM_CLASS_VERSION	2
#define IB_MGMT_METHOD_SEND	0x03

/* CM attribute ids (IBA table 198) */
enum ib_cm_attr {
	IB_CM_ATTR_REQ = 0x0010,
	IB_CM_ATTR_MRA = 0x0011,
	IB_CM_ATTR_REJ = 0x0012,
	IB_CM_ATTR_REP = 0x0013,
	IB_CM_ATTR_RTU = 0x0014,
	IB_CM_ATTR_DREQ = 0x0015,
	IB_CM_ATTR_DREP = 0x0016,
};

/* Private data of each message (IBA 12.6) */
#define IB_CM_REQ_PRIV	92
#define IB_CM_MRA_PRIV	222
#define IB_CM_REJ_PRIV	148
#define IB_CM_REP_PRIV	196
#define IB_CM_RTU_PRIV	224
#define IB_CM_DREQ_PRIV	220
#define IB_CM_DREP_PRIV	224
#define IB_CM_PRIV_MAX	224
#define IB_CM_REJ_ARI	72

/* MRA / REJ: which message is answered (2 bits) */
enum {
	IB_CM_MSG_REQ = 0,
	IB_CM_MSG_REP = 1,
	IB_CM_MSG_OTHER = 2,
};

/* REJ reasons the emulated CM sends (IBA table 112) */
enum {
	IB_CM_REJ_TIMEOUT = 1,
	IB_CM_REJ_STALE_CONN = 10,
	IB_CM_REJ_INVALID_SERVICE_ID = 8,
	IB_CM_REJ_CONSUMER_DEFINED = 28,
};

/*
 * One CM message; the fields of its attribute are used, the others are
 * ignored by encode and zero after decode.  GIDs as on the wire.
 */
struct ib_cm_msg {
	uint16_t attr_id;
	uint64_t tid;
	uint32_t local_comm_id, remote_comm_id;
	/* REQ */
	uint64_t service_id, local_ca_guid;
	uint32_t local_qkey;
	uint32_t local_qpn;		/* 24 bits (REQ, REP) */
	uint8_t responder_resources, initiator_depth;	/* REQ, REP */
	uint8_t remote_cm_response_timeout;	/* 5 bits */
	uint8_t transport_type;		/* 2 bits: 0 RC */
	bool flow_control;		/* REQ, REP */
	uint32_t starting_psn;		/* 24 bits (REQ, REP) */
	uint8_t local_cm_response_timeout;	/* 5 bits */
	uint8_t retry_count;		/* 3 bits */
	uint16_t pkey;
	uint8_t path_mtu;		/* 4 bits, enum ibv_mtu */
	uint8_t rnr_retry_count;	/* 3 bits (REQ, REP) */
	uint8_t max_cm_retries;		/* 4 bits */
	bool srq;			/* REQ, REP */
	uint8_t local_gid[16], remote_gid[16];	/* primary path */
	uint32_t flow_label;		/* 20 bits */
	uint8_t packet_rate;		/* 6 bits */
	uint8_t traffic_class, hop_limit;
	uint8_t sl;			/* 4 bits */
	bool subnet_local;
	uint8_t local_ack_timeout;	/* 5 bits */
	/* REP */
	uint8_t target_ack_delay;	/* 5 bits */
	uint8_t failover_accepted;	/* 2 bits */
	/* REJ, MRA */
	uint8_t msg_rejected;		/* REJ: 2 bits; MRA: message MRAed */
	uint8_t reject_info_len;	/* 7 bits, at most 72 */
	uint16_t reason;
	uint8_t ari[IB_CM_REJ_ARI];
	uint8_t service_timeout;	/* MRA: 5 bits */
	/* DREQ */
	uint32_t remote_qpn;		/* 24 bits */
	/* every message: its private data area (size by attribute) */
	uint8_t private_data[IB_CM_PRIV_MAX];
};

/* The private data size of @attr_id; 0 if not a CM message. */
size_t ib_cm_private_len(uint16_t attr_id);

/* Encode into @mad (256 bytes): 0 or -EINVAL (bad attribute or field). */
int ib_cm_encode(const struct ib_cm_msg *m, uint8_t mad[IB_MAD_LEN]);

/* Decode a MAD of @len bytes: 0 or -EINVAL. */
int ib_cm_decode(const uint8_t *mad, size_t len, struct ib_cm_msg *m);

/* "REQ", "REP", ...: for log lines; "?" if unknown. */
const char *ib_cm_attr_name(uint16_t attr_id);

#endif /* MANA_EMU_IB_CM_H */
