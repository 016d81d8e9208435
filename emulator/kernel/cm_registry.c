// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The CM's VM-wide registry (cm_registry.h): plain arrays, small by
 * nature (ids of one VM), searched linearly.
 */
#include "cm_registry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emulator/core/vm.h"

static struct {
	void **ids;			/* ids[n]: owner of ucma id n */
	uint32_t nids;
	struct binding {
		uint16_t ps, port;
		void *owner;
	} *binds;
	unsigned int nbinds, capbinds;
	uint32_t next_comm_id;
} reg;

int cm_reg_id_alloc(void *owner, uint32_t *id)
{
	uint32_t i;
	void **n;

	for (i = 0; i < reg.nids; i++)
		if (!reg.ids[i])
			break;
	if (i == reg.nids) {
		n = realloc(reg.ids, (reg.nids + 16) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memset(n + reg.nids, 0, 16 * sizeof(*n));
		reg.ids = n;
		reg.nids += 16;
	}
	reg.ids[i] = owner;
	*id = i;
	return 0;
}

void *cm_reg_id_lookup(uint32_t id)
{
	return id < reg.nids ? reg.ids[id] : NULL;
}

void cm_reg_id_free(uint32_t id)
{
	if (id < reg.nids)
		reg.ids[id] = NULL;
}

uint32_t cm_reg_comm_id_alloc(void)
{
	int slot = emu_vm_slot();
	/* --vm: the top byte names the owner (slot + 1), see below */
	uint32_t mask = slot >= 0 ? 0xffffff : 0xffffffff;

	/*
	 * ib_cm hands out ids from an xarray xor'ed with a random operand:
	 * ids differ between boots (VMs), never repeat while in use.
	 */
	if (!reg.next_comm_id)
		reg.next_comm_id = (uint32_t)random() | 1;
	reg.next_comm_id += 0x9e3779b1u;
	if (!(reg.next_comm_id & mask))
		reg.next_comm_id++;
	/*
	 * --vm: every process of the VM sees every MAD to QP1, so the id
	 * names its owner (still opaque to the peer, unique in the VM).
	 */
	if (slot >= 0)
		return (uint32_t)(slot + 1) << 24 | (reg.next_comm_id & mask);
	return reg.next_comm_id;
}

int cm_reg_port_add(uint16_t ps, uint16_t port, void *owner)
{
	struct binding *n;

	if (reg.nbinds == reg.capbinds) {
		n = realloc(reg.binds, (reg.capbinds + 32) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		reg.binds = n;
		reg.capbinds += 32;
	}
	reg.binds[reg.nbinds].ps = ps;
	reg.binds[reg.nbinds].port = port;
	reg.binds[reg.nbinds].owner = owner;
	reg.nbinds++;
	return 0;
}

void cm_reg_port_del(void *owner)
{
	unsigned int i;

	for (i = 0; i < reg.nbinds; i++)
		if (reg.binds[i].owner == owner) {
			reg.binds[i] = reg.binds[--reg.nbinds];
			return;
		}
}

unsigned int cm_reg_port_owners(uint16_t ps, uint16_t port, void **out,
				 unsigned int max)
{
	unsigned int i, n = 0;

	for (i = 0; i < reg.nbinds; i++)
		if (reg.binds[i].ps == ps && reg.binds[i].port == port) {
			if (n < max)
				out[n] = reg.binds[i].owner;
			n++;
		}
	return n;
}

bool cm_reg_comm_id_mine(uint32_t comm_id)
{
	int slot = emu_vm_slot();

	return slot < 0 || !comm_id || comm_id >> 24 == (uint32_t)slot + 1;
}

void cm_reg_fork_child(void)
{
	reg.nbinds = 0;
}
