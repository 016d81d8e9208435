/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The connection manager's VM-wide state, behind one small interface:
 * the rdma_cm id numbers (the kernel's ucma ctx_table: one number space
 * for every rdma_cm file of the VM), the port spaces (which ids are bound
 * to each (port space, port)), and the IB CM's local communication ids.
 * Everything else of the CM is per id.  Kept here, apart, so that it can
 * move into the VM's shared memory when several processes form one VM;
 * owners are opaque handles (today pointers into this process).
 * Every function expects emu.lock held.
 */
#ifndef MANA_EMU_CM_REGISTRY_H
#define MANA_EMU_CM_REGISTRY_H

#include <stdbool.h>
#include <stdint.h>

/* ucma ids: the lowest free number from 0 (xa_alloc), or -ENOMEM. */
int cm_reg_id_alloc(void *owner, uint32_t *id);
void *cm_reg_id_lookup(uint32_t id);
void cm_reg_id_free(uint32_t id);

/* A fresh IB CM local communication id (never 0, not in use). */
uint32_t cm_reg_comm_id_alloc(void);
/* --vm: does @comm_id (nonzero) name an id of this process's? */
bool cm_reg_comm_id_mine(uint32_t comm_id);
/* A forked child: the parent's bindings are not its own. */
void cm_reg_fork_child(void);

/* Port spaces: @owner joins the bind list of (@ps, @port). -ENOMEM. */
int cm_reg_port_add(uint16_t ps, uint16_t port, void *owner);
/* @owner leaves its bind list. */
void cm_reg_port_del(void *owner);
/*
 * The owners bound to (@ps, @port), at most @max into @out: how many
 * there are (0: the port is free).
 */
unsigned int cm_reg_port_owners(uint16_t ps, uint16_t port, void **out,
				 unsigned int max);

#endif /* MANA_EMU_CM_REGISTRY_H */
