/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The raw datapath's building blocks, shared by the device's engines
 * (the raw SQ/RQ walk here, the RC transport in rc.c): the CQE writer,
 * the fault-safe user copy, the SGE check against the MRs, and the
 * doorbell actions.  Every function expects emu.lock held and runs in the
 * device thread unless noted.
 */
#ifndef MANA_EMU_HWQ_H
#define MANA_EMU_HWQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "providers/mana/gdma.h"

/*
 * Write CQE number cq->prod of @cq: @cqe (64 bytes, 8-byte aligned) holds
 * the 60 data bytes; the last dword (@wq_num, @is_sq, owner bits) is added
 * here and reaches the ring after the data.  An unwritable ring counts an
 * error on the CQ; an armed CQ raises its completion event.
 */
void emu_cq_post(struct emu_hwq *cq, uint8_t *cqe, uint32_t wq_num,
		 bool is_sq);

/*
 * Copy between device memory (@local) and application memory (@remote),
 * fault-safe: the bytes moved before the first bad address (all of them
 * on success); a bad address is counted (mana_emu_user_faults()).
 */
size_t emu_dev_ucopy(void *local, void *remote, size_t len, bool to_user);

/*
 * The application address an SGE names if it lies inside an MR of the
 * queue's PD (with LOCAL_WRITE when @write), else 0.
 */
uintptr_t emu_hwq_sge_map(struct emu_hwq *q, const struct gdma_sge *sge,
			  bool write);

/* SQ/RQ doorbell: a new tail (bytes, free-running); checked. */
void emu_wq_doorbell(struct emu_hwq *q, uint32_t tail);
/* CQ doorbell: the consumer is @n entries behind the producer. */
void emu_cq_doorbell(struct emu_hwq *cq, uint32_t n, bool arm);

#endif /* MANA_EMU_HWQ_H */
