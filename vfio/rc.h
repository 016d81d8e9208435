/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * mana-vfio's RC transport: the RNIC's reliable-connected QPs over RoCEv2
 * on the VF's wire, for the real mana_ib and our provider in the guest.
 *
 * Why an engine of its own and not the emulator's (emulator/device/rc_*.c,
 * the model of the same hardware): that one reaches queues and MRs as
 * linear ranges of its own process (emu_copy_user_one() on a user VA,
 * emu_dev_mr_map() handing back one address for a whole range), under
 * emu.lock, with the emulated kernel's objects (emu_pd, emu_hwq,
 * emu_ucontext), its GID table and its ARP resolver; here every queue and
 * MR is a list of guest pages reached only through the vfio-user maps,
 * the kernel gives the path (MACs, GIDs, UDP port) in SET_QP_STATE, and
 * vfio/ may not include the emulator's device layer.  An adapter would
 * replace the engine's every memory access.  What is shared is linked:
 * packets (emulator/wire/roce.c: encode, decode, ICRC), the transport's
 * pure rules (emulator/wire/roce_rc.c: segmentation, opcodes, PSN classes,
 * payload lengths, timeouts) and the WQE/CQE/OOB layouts
 * (providers/mana/gdma.h).  The semantics follow the emulator's engine.
 *
 * Transport-free: the device (mana_fn.c) reads rings and MRs, writes CQEs
 * and sends frames for it through struct vrc_ops.  Not thread-safe: the
 * caller serialises every call (mana-vfio's one lock).
 */
#ifndef MANA_VFIO_RC_H
#define MANA_VFIO_RC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What an MR access needs (local read needs nothing). */
enum {
	VRC_LOCAL_WRITE = 1 << 0,
	VRC_REMOTE_READ = 1 << 1,
	VRC_REMOTE_WRITE = 1 << 2,
};

struct vrc_ops {
	/* @len bytes of ring @ring from free-running byte position @pos. */
	int (*ring_read)(void *ctx, void *ring, uint32_t pos, void *buf,
			 uint32_t len);
	/*
	 * Copy [addr, addr + len) of the MR named @key, which must be PD
	 * @pd's and allow @access, into @buf (or from it, @to_mem); @buf
	 * NULL only checks.  0, or -EACCES (key, PD, access, range, or
	 * guest memory not shared): nothing is copied then.
	 */
	int (*mem)(void *ctx, uint32_t pd, uint32_t key, uint64_t addr,
		   uint8_t *buf, uint32_t len, unsigned int access, bool to_mem);
	/* One CQE (60 data bytes) on CQ @cq, for queue @wq_num. */
	void (*cqe)(void *ctx, void *cq, const uint8_t *data, uint32_t wq_num,
		    bool is_sq);
	/* A QP went to ERR on its own (remote access or request error). */
	void (*fatal)(void *ctx, uint32_t qpn);
	/*
	 * A QP of CQ @cq entered ERR: its consumer, maybe asleep on the CQ's
	 * event, must poll to flush its WRs (the provider writes the flush
	 * completions; the hardware writes none): raise the event now if
	 * armed, else at the next arm.
	 */
	void (*wake)(void *ctx, void *cq);
	/* A frame to the wire. */
	void (*xmit)(void *ctx, const uint8_t *frame, size_t len);
	void *ctx;
};

struct vrc_dev;
struct vrc_qp;

/* A ring of a QP: the device's queue, its size and id. */
struct vrc_ring_desc {
	void *ring;
	uint32_t size;		/* bytes, a power of two */
	uint32_t id;
};

struct vrc_qp_desc {
	uint32_t pd;
	void *send_cq, *recv_cq;
	struct vrc_ring_desc sq;	/* requester SQ: send WQEs */
	struct vrc_ring_desc rq;	/* responder RQ: receive WQEs; qp_num */
	struct vrc_ring_desc rrq;	/* requester RQ: READ buffers, arming */
};

/*
 * A modify as MANA_IB_SET_QP_STATE carries it (6.12): attr_mask in IB_QP_*
 * bits; fields whose bit is clear keep their value.  No timeout or access
 * flags in 6.12's request: the device uses its own.
 */
struct vrc_attr {
	uint64_t mask;
	uint32_t state;			/* enum ib_qp_state */
	uint32_t path_mtu;		/* enum ib_mtu, 1..5 */
	uint32_t rq_psn, sq_psn, dest_qpn;
	uint32_t retry_cnt, rnr_retry, min_rnr_timer, max_dest_rd_atomic;
	/* IB_QP_AV: byte order as on the wire (the request's reversed) */
	uint8_t smac[6], dmac[6];
	uint8_t sgid[16], dgid[16];	/* IPv4 as ::ffff:a.b.c.d */
	uint16_t sport;
	uint8_t traffic_class, hop_limit;
};

struct vrc_stats {
	uint64_t tx_packets, rx_packets, retransmits, rnr_naks_rx, rnr_naks_tx,
		 seq_naks_rx, seq_naks_tx, errors, bad_packets, local_packets;
};

struct vrc_dev *vrc_dev_new(const struct vrc_ops *ops, const uint8_t mac[6]);
void vrc_dev_free(struct vrc_dev *dev);

/* 0, -EINVAL (bad descriptor), -ENOMEM. */
int vrc_qp_create(struct vrc_dev *dev, const struct vrc_qp_desc *d,
		  struct vrc_qp **out);
void vrc_qp_destroy(struct vrc_dev *dev, struct vrc_qp *qp);
/* 0 or -EINVAL (state past ERR, path MTU not 1..5). */
int vrc_qp_modify(struct vrc_dev *dev, struct vrc_qp *qp,
		  const struct vrc_attr *a);
uint32_t vrc_qp_state(const struct vrc_qp *qp);

/* Doorbells on the QP's rings: the new tail (bytes, free-running). */
void vrc_sq_doorbell(struct vrc_dev *dev, struct vrc_qp *qp, uint32_t tail);
void vrc_rq_doorbell(struct vrc_dev *dev, struct vrc_qp *qp, bool requester,
		     uint32_t tail);
/* The arm doorbell (RQ_CLIENT on the requester RQ): ARMED_CMPL at @psn. */
void vrc_arm(struct vrc_dev *dev, struct vrc_qp *qp, uint32_t psn);

/*
 * A frame from the wire: true if it was a valid RoCEv2 packet for one of
 * the QPs (then taken), false for the Ethernet path.
 */
bool vrc_rx(struct vrc_dev *dev, const uint8_t *frame, size_t len);

/* Timers (retransmission, RNR): run those due at @now_ns. */
void vrc_tick(struct vrc_dev *dev, uint64_t now_ns);

void vrc_get_stats(const struct vrc_dev *dev, struct vrc_stats *st);

/* For tests: the monotonic clock the engine stamps its timers with. */
uint64_t vrc_now_ns(void);

#endif /* MANA_VFIO_RC_H */
