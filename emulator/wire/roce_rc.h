/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RC transport's pure rules (IBA chapter 9) over the RoCEv2 codec:
 * segmentation, the opcode of each packet of a MANA send WQE, PSN
 * classes, opcode sequences, payload lengths and the retransmission
 * timeout.  No state: the emulator's RC engine (emulator/device/rc_*.c)
 * and mana-vfio's (vfio/rc.c) apply the same rules, pinned once by
 * tests/test_rc_core.c.
 */
#ifndef MANA_EMU_WIRE_ROCE_RC_H
#define MANA_EMU_WIRE_ROCE_RC_H

#include <stdbool.h>
#include <stdint.h>

/* PSNs of a message of @len bytes at MTU @mtu: max(1, ceil(len / mtu)). */
uint32_t rc_npkts(uint32_t len, uint32_t mtu);
/* BTH opcode of packet @i of @n of a message of WQE type @type. */
int rc_opcode(uint8_t type, uint32_t i, uint32_t n);
/* The retransmission timeout of an IB `timeout` value, clamped (ns). */
uint64_t rc_timeout_ns(uint8_t timeout);
/* The responder's verdict on a request packet's PSN. */
enum rc_psn_class { RC_PSN_EXPECTED, RC_PSN_DUPLICATE, RC_PSN_AHEAD };
enum rc_psn_class rc_psn_classify(uint32_t psn, uint32_t epsn);
/*
 * May a request opcode follow the responder's state (@in_send / @in_write:
 * a SEND or WRITE is in progress)?  First/only start a message only
 * outside one; middle/last continue only the same kind.
 */
bool rc_opcode_in_sequence(uint8_t opcode, bool in_send, bool in_write);
/* Packet payload length rule: first/middle exactly MTU, last/only <= MTU. */
bool rc_payload_len_ok(uint8_t opcode, uint32_t len, uint32_t mtu);

#endif /* MANA_EMU_WIRE_ROCE_RC_H */
