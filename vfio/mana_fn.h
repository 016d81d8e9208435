/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The MANA VF as a PCI function for a real Linux mana driver: config
 * space, BAR0 (registers, the shared-memory channel that bootstraps the
 * hardware channel, doorbell pages), BAR4 (MSI-X table and PBA), and the
 * HWC request engine behind the doorbells.  Transport-free: the vfio-user
 * server (server.c) feeds it region accesses and gives it two services,
 * guest memory and interrupts.
 */
#ifndef MANA_VFIO_MANA_FN_H
#define MANA_VFIO_MANA_FN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MANA_FN_VENDOR		0x1414
#define MANA_FN_DEVICE		0x00BA	/* the VF; the PF (0x00B9) is not modelled */
#define MANA_FN_CFG_SIZE	256
#define MANA_FN_BAR0_SIZE	0x10000
#define MANA_FN_BAR4_SIZE	0x1000
#define MANA_FN_MSIX		64	/* vectors, as openvmm's model has */
#define MANA_FN_MAX_FRAME	16384

struct mana_fn_ops {
	/*
	 * Host address of guest DMA range [gpa, gpa + len), or NULL when any
	 * byte of it lies outside the regions the client shared: the device
	 * then fails the operation (never touches memory it was not given).
	 */
	void *(*dma)(void *ctx, uint64_t gpa, size_t len);
	/* Signal MSI-X vector @vector (no-op when the client set none). */
	void (*irq)(void *ctx, uint32_t vector);
	/* A frame the driver sent (optional; no wire is attached yet). */
	void (*frame)(void *ctx, const uint8_t *frame, uint32_t len);
	void *ctx;
	bool verbose;		/* log every HWC request and its status */
};

struct mana_fn;

struct mana_fn *mana_fn_new(const struct mana_fn_ops *ops, const uint8_t mac[6]);
void mana_fn_free(struct mana_fn *fn);
void mana_fn_reset(struct mana_fn *fn);

/* 0, or -EINVAL for an access outside the region (nothing done). */
int mana_fn_cfg_read(struct mana_fn *fn, uint64_t off, void *buf, uint32_t len);
int mana_fn_cfg_write(struct mana_fn *fn, uint64_t off, const void *buf,
		      uint32_t len);
int mana_fn_bar_read(struct mana_fn *fn, unsigned int bar, uint64_t off,
		     void *buf, uint32_t len);
int mana_fn_bar_write(struct mana_fn *fn, unsigned int bar, uint64_t off,
		      const void *buf, uint32_t len);
uint64_t mana_fn_bar_size(unsigned int bar);

/*
 * The RC transport's timers (retransmission, RNR waits): the server calls
 * it every few milliseconds, under the same lock as every other call.
 */
void mana_fn_tick(struct mana_fn *fn);

/*
 * A frame from the wire: a RoCEv2 packet for one of the RC QPs goes to
 * the RC transport (then 0); any other frame into the next WQE of the RX object the driver
 * made the vPort's default (CONFIG_VPORT_RX), CQE, EQE, MSI-X.  0, or
 * -ENODEV (RX off, no such object), -EAGAIN (no WQE posted: dropped, as
 * the NIC would), -EINVAL; counted in rx_frames / rx_drops.
 */
int mana_fn_rx(struct mana_fn *fn, const uint8_t *frame, uint32_t len);

/* Counters for tests and the exit summary. */
struct mana_fn_stats {
	uint32_t hwc_established;
	uint32_t requests;		/* HWC requests answered */
	uint32_t unsupported;		/* ... of them with CMD_UNSUPPORTED */
	uint32_t dma_faults;		/* accesses outside shared memory */
	uint32_t last_unsupported;	/* msg_type of the last one */
	uint64_t tx_frames;		/* frames the driver sent */
	uint64_t tx_bytes;
	uint64_t rx_frames;		/* frames delivered to the driver */
	uint64_t rx_drops;		/* ... not: RX off, no WQE, too long */
	uint32_t rnic_adapters;		/* RDMA adapters created */
	uint32_t rnic_macs;		/* ... MACs and GIDs configured now */
	uint32_t rnic_gids;
	uint64_t rc_tx_packets;		/* RC transport (rc.c): RoCEv2 sent */
	uint64_t rc_rx_packets;		/* ... received for an RC QP */
	uint64_t rc_local_packets;	/* ... of those sent, looped to a QP here */
	uint64_t rc_retransmits;	/* go-back-N rewinds */
	uint64_t rc_naks;		/* RNR and sequence NAKs sent */
	uint64_t rc_errors;		/* error CQEs, fatal NAKs */
	uint64_t rc_bad_packets;	/* dropped: not in sequence, ghosts */
};

void mana_fn_get_stats(const struct mana_fn *fn, struct mana_fn_stats *st);

#endif /* MANA_VFIO_MANA_FN_H */
