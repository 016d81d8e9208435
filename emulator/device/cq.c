// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The CQ side of the device: the exported CQE writer (the datapath inlines
 * cq_post() of device_int.h), CQ doorbells, overrun accounting and
 * completion events.
 *
 * CQ overflow: the device never waits for the consumer.  It writes CQE
 * number p at slot p % count with owner bits (p / count) & 7 (producer
 * index from count), so a consumer that falls a whole lap behind finds
 * owner bits it does not expect and knows completions were lost.  The
 * device learns the consumer index only from CQ doorbells, as hardware
 * does, and DPDK never rings one except to arm: a consumer that does not
 * ring is never judged.  A doorbell carries the index modulo 8 laps
 * (gdma_cq_db_unconsumed()); when it shows the consumer more than count
 * entries behind the producer, the entries overwritten unread are counted
 * as CQ drops (no event: see cq_count_lost()).  A consumer 7 or 8 laps
 * behind aliases, for the device as for the owner bits, to an empty or a
 * full ring.
 */
#include "device.h"
#include "device_int.h"

void dev_cq_notify(struct emu_hwq *cq)
{
	if (devst.ops && devst.ops->cq_event)
		devst.ops->cq_event(cq->ucq);
}

void emu_cq_post(struct emu_hwq *cq, uint8_t *cqe, uint32_t wq_num,
		 bool is_sq)
{
	cq_post(cq, cqe, wq_num, is_sq);
}

/*
 * A doorbell put the consumer at @cons: the entries overwritten before it
 * reached them, counted as the CQ's drops; an overrun the consumer has
 * not reported before counts once in cq_overruns.  No event: no mana_ib
 * has a path from the device to IB_EVENT_CQ_ERR (its EQ handler knows
 * completions and QP_FATAL only), so the consumer learns of the loss by
 * the owner bits alone, as on Azure.
 */
static void cq_count_lost(struct emu_hwq *cq, uint32_t cons)
{
	uint32_t from = cons, upto = cq->prod - cq->count;
	bool told = (int32_t)(cq->lost_upto - cons) > 0;

	if (cq->prod - cons <= cq->count)
		return;
	if (told)
		from = cq->lost_upto;
	if ((int32_t)(upto - from) > 0) {
		cq->st.drops += upto - from;
		cq->lost_upto = upto;
		if (!told)
			devst.cq_overruns++;
	}
}

/*
 * CQ doorbell: the consumer is @n entries behind the producer.  Arm: fire
 * now if something is unconsumed, else on the next CQE; a consumer that
 * was lapped gets no event.  Without arm it only reports progress (a
 * pending arm stays: rdma-core style providers ring unarmed every few
 * laps while the application waits for an event).
 */
void emu_cq_doorbell(struct emu_hwq *cq, uint32_t n, bool arm)
{
	cq->cons = cq->prod - n;
	cq_count_lost(cq, cq->cons);
	if (!arm)
		return;
	if (cq->flush_wake && cq->armed) {
		/*
		 * Armed again with nothing new, after a QP of the CQ entered
		 * ERR: the provider telling a sleeping consumer its flushes
		 * are due (it flushes on poll once it has seen the ERR).  The
		 * consumer's own arm (the CQ not armed) only arms.
		 */
		cq->flush_wake = false;
		cq->armed = false;
		dev_cq_notify(cq);
	} else if (!n) {
		cq->armed = true;
	} else if (n <= cq->count) {
		cq->armed = false;
		dev_cq_notify(cq);
	} else {
		cq->armed = false;
	}
}
