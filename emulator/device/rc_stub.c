// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * TEMPORARY, NOT TO BE MERGED: a stand-in for the RC engine (device/rc.h)
 * on the rckern branch only, until the rcdev branch's device/rc*.c is
 * merged; delete this file then.  It gives out queue ids with the right
 * subtypes and records the state the kernel sets; it moves no data and
 * raises no events.
 */
#include "rc.h"

#include <errno.h>
#include <stdlib.h>

struct emu_rc_qp_hw {
	enum emu_rc_state state;
	emu_rc_qp_event_fn event_fn;
	void *event_qp;
};

/* ids 0x10000 and up, four apart: low two bits free for the subtype */
static uint32_t next_base = 0x10000;

int emu_rc_qp_hw_create(const struct emu_rc_create_req *req,
			struct emu_rc_qp_hw **out, uint32_t ids[EMU_RC_QUEUES])
{
	struct emu_rc_qp_hw *hw;

	(void)req;
	if (next_base > 0xfffff8)
		return -ENOSPC;
	hw = calloc(1, sizeof(*hw));
	if (!hw)
		return -ENOMEM;
	ids[EMU_RC_SQ_REQUESTER] = next_base | 0;
	ids[EMU_RC_SQ_RESPONDER] = next_base | 1;
	ids[EMU_RC_RQ_RESPONDER] = (next_base + 4) | 0;
	ids[EMU_RC_RQ_REQUESTER] = (next_base + 4) | 1;
	next_base += 8;
	hw->state = EMU_RC_RESET;
	*out = hw;
	return 0;
}

int emu_rc_qp_hw_modify(struct emu_rc_qp_hw *hw, const struct emu_rc_attr *attr,
			uint32_t mask)
{
	(void)mask;
	hw->state = attr->state;
	return 0;
}

enum emu_rc_state emu_rc_qp_hw_state(const struct emu_rc_qp_hw *hw)
{
	return hw->state;
}

void emu_rc_qp_hw_destroy(struct emu_rc_qp_hw *hw)
{
	free(hw);
}

void emu_rc_set_event_handler(struct emu_rc_qp_hw *hw, emu_rc_qp_event_fn fn,
			      void *kernel_qp)
{
	hw->event_fn = fn;
	hw->event_qp = kernel_qp;
}
