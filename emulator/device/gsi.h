/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RNIC's GSI QP (QP1) as the kernel's connection manager uses it:
 * management datagrams in RoCEv2 UD packets (wire/roce.h UD SEND_ONLY,
 * DETH with the GSI Q_Key) on the RoCE port's wire, and the port's
 * neighbour table (ARP/ND, device/rc_neigh.c) for address resolution.
 *
 * The kernel registers one set of callbacks (it never is included from
 * here): every valid UD packet to QP1 goes to rx(), and work() runs once
 * per device round for the kernel's timers, answering how long the device
 * may sleep.  While registered, the device thread runs and the port
 * answers ARP/ND even with no RC QP (a listener has no QP yet).  Every
 * function expects emu.lock held; callbacks are called with it held.
 */
#ifndef MANA_EMU_DEVICE_GSI_H
#define MANA_EMU_DEVICE_GSI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct roce_pkt;

struct emu_gsi_ops {
	/* a UD packet to QP1 with the GSI Q_Key; p->payload is the MAD */
	void (*rx)(unsigned int port, const struct roce_pkt *p);
	/* timers: the ms until the next deadline, or -1 for none */
	int (*work)(void);
};

/* Register (@ops) or unregister (NULL); opens @port's wire: 0 or -errno. */
int emu_gsi_register(unsigned int port, const struct emu_gsi_ops *ops);

/* Is a GSI consumer registered?  (The receive path asks per frame.) */
extern bool emu_gsi_active;
/* the IP stack has resolved a neighbour (emu_dev_neigh_resolve()) */
extern bool emu_ip_neigh_active;

/* The path of one MAD: addresses as the kernel's address handle has them. */
struct emu_gsi_path {
	unsigned int port;
	uint8_t sgid[16], dgid[16];
	uint8_t dmac[6];
	uint8_t traffic_class, hop_limit;
	uint32_t flow_label;
};

/* Send a 256-byte MAD from QP1 to the peer's QP1: 0 or -EINVAL. */
int emu_gsi_send(const struct emu_gsi_path *path, const uint8_t *mad,
		 size_t len);

/*
 * Neighbours without waiting: the MAC of @dgid if known (the port's own
 * address, a link-local EUI-64 GID, or an ARP/ND answer already seen),
 * and a question on the wire (ARP request / neighbour solicitation).
 */
bool emu_gsi_neigh_lookup(unsigned int port, const uint8_t dgid[16],
			  uint8_t mac[6]);
void emu_gsi_neigh_ask(unsigned int port, const uint8_t sgid[16],
		       const uint8_t dgid[16]);

/* The device wants a round soon (a timer moved earlier). */
void emu_gsi_kick(void);

/*
 * The IP stack's own neighbour resolution (a TCP connect() to the port's
 * subnet): the port joins its wire and the device runs, as an up netdev's
 * would, then ARP/ND asks every 100 ms for 4 s.  0 when a neighbour
 * answered, -EHOSTUNREACH when none did.  emu.lock held (released while
 * waiting).
 */
int emu_dev_neigh_resolve(unsigned int port, const uint8_t sgid[16],
			  const uint8_t dgid[16]);

/* device.c / rc_engine.c: a decoded UD packet arrived; true if QP1's. */
bool gsi_rx(unsigned int port, const struct roce_pkt *p);
/* device.c: one round of the consumer's timers; ms to sleep at most. */
int gsi_work(int max_ms);

#endif /* MANA_EMU_DEVICE_GSI_H */
