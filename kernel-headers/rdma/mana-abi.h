/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * mana_ib user/kernel ABI: the driver-private data carried after the core
 * uverbs command and response structures (UHW_IN / UHW_OUT).
 *
 * Written from the published layouts (see README, "Facts"); every size and
 * offset is pinned below so a wrong layout fails the build.
 */
#ifndef MANA_ABI_USER_H
#define MANA_ABI_USER_H

#include <linux/types.h>
#include <stddef.h>

#define MANA_IB_UVERBS_ABI_VERSION 1

/*
 * Kernel driver ids we rely on.  Debian 12's <rdma/ib_user_ioctl_verbs.h>
 * stops at ERDMA and shares its include guard with rdma-core's copy, so we
 * never depend on either enum for these values.
 */
#define MANA_DRIVER_ID_UNKNOWN 0
#define MANA_DRIVER_ID_ERDMA 19	/* the slot backported kernels gave MANA */
#define MANA_DRIVER_ID 20	/* RDMA_DRIVER_MANA */

#define MANA_PCI_VENDOR_ID 0x1414
#define MANA_PCI_DEVICE_PF 0x00b9
#define MANA_PCI_DEVICE_VF 0x00ba
#define MANA_PCI_DEVICE_PF2 0x00c1

enum mana_ib_create_cq_flags {
	MANA_IB_CREATE_RNIC_CQ = 1 << 0,
};

enum mana_ib_rx_hash_function_flags {
	MANA_IB_RX_HASH_FUNC_TOEPLITZ = 1 << 0,
};

#define MANA_IB_RX_HASH_KEY_LEN 40

struct mana_ib_create_cq {
	__aligned_u64 buf_addr;
	/* comp_mask since robust udata (7.1): unknown bits EOPNOTSUPP */
	union {
		__u16 flags;
		__u16 comp_mask;
	};
	__u16 reserved0;
	__u32 reserved1;
};

/* 6.2 kernels know only buf_addr; newer ones accept the longer form. */
#define MANA_IB_CREATE_CQ_V1_LEN 8

struct mana_ib_create_cq_resp {
	__u32 cqid;
	__u32 reserved;
};

struct mana_ib_create_qp {
	__aligned_u64 sq_buf_addr;
	__u32 sq_buf_size;
	__u32 port;
};

struct mana_ib_create_qp_resp {
	__u32 sqid;
	__u32 cqid;
	__u32 tx_vp_offset;
	__u32 reserved;
};

struct mana_ib_create_wq {
	__aligned_u64 wq_buf_addr;
	__u32 wq_buf_size;
	__u32 reserved;
};

struct mana_ib_create_qp_rss {
	__aligned_u64 rx_hash_fields_mask;
	__u8 rx_hash_function;
	__u8 reserved[7];
	__u32 rx_hash_key_len;
	__u8 rx_hash_key[MANA_IB_RX_HASH_KEY_LEN];
	__u32 port;
};

struct rss_resp_entry {
	__u32 cqid;
	__u32 wqid;
};

#define MANA_IB_RSS_MAX_ENTRIES 64

struct mana_ib_create_qp_rss_resp {
	__aligned_u64 num_entries;
	struct rss_resp_entry entries[MANA_IB_RSS_MAX_ENTRIES];
};

/*
 * RC queue pair (RNIC device): four user queues, in this order in both the
 * command and the response.  qp_num is the id of the receive-responder
 * queue; the low two bits of every queue id are its subtype.
 */
enum mana_ib_rc_user_queue {
	MANA_RC_SEND_QUEUE_REQUESTER = 0,
	MANA_RC_SEND_QUEUE_RESPONDER = 1,
	MANA_RC_RECV_QUEUE_REQUESTER = 2,
	MANA_RC_RECV_QUEUE_RESPONDER = 3,
	MANA_RC_QUEUE_COUNT = 4,
};

struct mana_ib_create_rc_qp {
	__aligned_u64 queue_buf[MANA_RC_QUEUE_COUNT];
	__u32 queue_size[MANA_RC_QUEUE_COUNT];
};

struct mana_ib_create_rc_qp_resp {
	__u32 queue_id[MANA_RC_QUEUE_COUNT];
};

/*
 * UC QPs (7.2, "RDMA/mana_ib: UC QP support for UAPI"): three user queues,
 * the send requester, the receive responder and the send queue for memory
 * management work ("MM"); qp_num is the receive responder's id.  No
 * comp_mask bit is defined.
 */
enum mana_ib_uc_user_queue {
	MANA_UC_SQ_REQUESTER = 0,
	MANA_UC_RQ_RESPONDER = 1,
	MANA_UC_SQ_MM = 2,
	MANA_UC_QUEUE_COUNT = 3,
};

struct mana_ib_create_uc_qp {
	__aligned_u64 queue_buf[MANA_UC_QUEUE_COUNT];
	__u32 queue_size[MANA_UC_QUEUE_COUNT];
	__u32 comp_mask;
};

struct mana_ib_create_uc_qp_resp {
	__u32 queue_id[MANA_UC_QUEUE_COUNT];
	__u32 reserved;
};

/*
 * PD numbers (7.1): a context whose alloc_ucontext response has
 * ALLOC_PDN_SUPPORT may send mana_ib_alloc_pd with ALLOC_PD and gets the
 * PD's number back; SHORT_PDN asks for one that fits in 16 bits.
 */
enum mana_ib_ucontext_support {
	MANA_IB_UCNTX_ALLOC_PDN_SUPPORT = 1 << 0,
};

struct mana_ib_alloc_ucontext_resp {
	__aligned_u64 comp_mask;
};

enum mana_ib_create_pd_flags {
	MANA_IB_PD_SHORT_PDN = 1 << 0,
};

struct mana_ib_alloc_pd {
	__u32 comp_mask;
	__u32 reserved;
};

struct mana_ib_alloc_pd_resp {
	__u32 pdn;
	__u32 reserved;
};

#define MANA_ABI_ASSERT(cond) _Static_assert(cond, #cond)
MANA_ABI_ASSERT(sizeof(struct mana_ib_create_cq) == 16);
MANA_ABI_ASSERT(offsetof(struct mana_ib_create_cq, comp_mask) == 8);
MANA_ABI_ASSERT(sizeof(struct mana_ib_create_cq_resp) == 8);
MANA_ABI_ASSERT(sizeof(struct mana_ib_create_qp) == 16);
MANA_ABI_ASSERT(offsetof(struct mana_ib_create_qp, port) == 12);
MANA_ABI_ASSERT(sizeof(struct mana_ib_create_qp_resp) == 16);
MANA_ABI_ASSERT(sizeof(struct mana_ib_create_wq) == 16);
MANA_ABI_ASSERT(sizeof(struct mana_ib_create_qp_rss) == 64);
MANA_ABI_ASSERT(offsetof(struct mana_ib_create_qp_rss, rx_hash_function) == 8);
MANA_ABI_ASSERT(offsetof(struct mana_ib_create_qp_rss, rx_hash_key_len) == 16);
MANA_ABI_ASSERT(offsetof(struct mana_ib_create_qp_rss, rx_hash_key) == 20);
MANA_ABI_ASSERT(offsetof(struct mana_ib_create_qp_rss, port) == 60);
MANA_ABI_ASSERT(sizeof(struct mana_ib_create_qp_rss_resp) == 520);
MANA_ABI_ASSERT(sizeof(struct mana_ib_create_rc_qp) == 48);
MANA_ABI_ASSERT(offsetof(struct mana_ib_create_rc_qp, queue_size) == 32);
MANA_ABI_ASSERT(sizeof(struct mana_ib_create_rc_qp_resp) == 16);
MANA_ABI_ASSERT(sizeof(struct mana_ib_create_uc_qp) == 40);
MANA_ABI_ASSERT(offsetof(struct mana_ib_create_uc_qp, queue_size) == 24);
MANA_ABI_ASSERT(offsetof(struct mana_ib_create_uc_qp, comp_mask) == 36);
MANA_ABI_ASSERT(sizeof(struct mana_ib_create_uc_qp_resp) == 16);
MANA_ABI_ASSERT(sizeof(struct mana_ib_alloc_ucontext_resp) == 8);
MANA_ABI_ASSERT(sizeof(struct mana_ib_alloc_pd) == 8);
MANA_ABI_ASSERT(sizeof(struct mana_ib_alloc_pd_resp) == 8);
MANA_ABI_ASSERT(offsetof(struct mana_ib_alloc_pd_resp, reserved) == 4);
#undef MANA_ABI_ASSERT

#endif /* MANA_ABI_USER_H */
