// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC transport's pure rules (IBA chapter 9), kept apart from the
 * engines' state (the emulator's and mana-vfio's) so that
 * tests/test_rc_core.c can pin them alone:
 * segmentation, opcode sequences, PSN classes, payload lengths and the
 * retransmission timeout.
 */
#include "roce_rc.h"

#include "providers/mana/gdma.h"
#include "roce.h"

uint32_t rc_npkts(uint32_t len, uint32_t mtu)
{
	if (!mtu)
		return 0;
	return len ? (uint32_t)(((uint64_t)len + mtu - 1) / mtu) : 1;
}

int rc_opcode(uint8_t type, uint32_t i, uint32_t n)
{
	bool first = i == 0, last = i + 1 == n;

	if (!n || i >= n)
		return -1;
	switch (type) {
	case MANA_WQE_RC_SEND:
		return first && last ? ROCE_SEND_ONLY : first ? ROCE_SEND_FIRST :
		       last ? ROCE_SEND_LAST : ROCE_SEND_MIDDLE;
	case MANA_WQE_RC_SEND_IMM:
		return first && last ? ROCE_SEND_ONLY_IMM :
		       first ? ROCE_SEND_FIRST :
		       last ? ROCE_SEND_LAST_IMM : ROCE_SEND_MIDDLE;
	case MANA_WQE_RC_SEND_INV:
		return first && last ? ROCE_SEND_ONLY_INV :
		       first ? ROCE_SEND_FIRST :
		       last ? ROCE_SEND_LAST_INV : ROCE_SEND_MIDDLE;
	case MANA_WQE_WRITE:
		return first && last ? ROCE_WRITE_ONLY :
		       first ? ROCE_WRITE_FIRST :
		       last ? ROCE_WRITE_LAST : ROCE_WRITE_MIDDLE;
	case MANA_WQE_WRITE_IMM:
		return first && last ? ROCE_WRITE_ONLY_IMM :
		       first ? ROCE_WRITE_FIRST :
		       last ? ROCE_WRITE_LAST_IMM : ROCE_WRITE_MIDDLE;
	case MANA_WQE_READ:
		return first ? ROCE_READ_REQ : -1;	/* one request packet */
	default:
		return -1;
	}
}

/*
 * 4.096 us * 2^timeout, clamped to [1 ms, 2 s]: below 1 ms the device
 * thread's own latency on a loaded machine would fire it spuriously, and
 * above 2 s (timeout >= 19) a test waiting for retry exhaustion would
 * wait minutes.  0 means infinite (IBA): never retransmit on time.
 */
uint64_t rc_timeout_ns(uint8_t timeout)
{
	uint64_t ns;

	if (!timeout)
		return 0;
	if (timeout > 31)
		timeout = 31;
	ns = 4096ull << timeout;
	if (ns < 1000000ull)
		ns = 1000000ull;
	if (ns > 2000000000ull)
		ns = 2000000000ull;
	return ns;
}

enum rc_psn_class rc_psn_classify(uint32_t psn, uint32_t epsn)
{
	int32_t d = roce_psn_diff(psn, epsn);

	return !d ? RC_PSN_EXPECTED : d < 0 ? RC_PSN_DUPLICATE : RC_PSN_AHEAD;
}

bool rc_opcode_in_sequence(uint8_t opcode, bool in_send, bool in_write)
{
	unsigned int fl = roce_opcode_flags(opcode);

	if (!fl || (fl & ROCE_F_READ_RESP) || opcode == ROCE_ACK)
		return false;
	if (fl & ROCE_F_FIRST)
		return !in_send && !in_write;
	if (fl & ROCE_F_SEND)
		return in_send;
	return in_write;
}

bool rc_payload_len_ok(uint8_t opcode, uint32_t len, uint32_t mtu)
{
	unsigned int fl = roce_opcode_flags(opcode);

	if (!(fl & ROCE_F_PAYLOAD))
		return len == 0;
	if (!(fl & ROCE_F_LAST))
		return len == mtu;	/* first, middle */
	return len <= mtu;
}
