// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC transport's pure rules (emulator/wire/roce_rc.c), alone:
 * segmentation by path MTU, the opcode of each packet of a message, the
 * responder's PSN classes across the 24-bit wrap, which opcode may follow
 * which, payload lengths, and the retransmission timeout's clamp.  The
 * expected values come from IBA chapter 9 (tables 35 and 36, 9.7.5), not
 * from the code.
 */
#include <stdint.h>
#include <stdio.h>

#include "emulator/wire/roce_rc.h"
#include "emulator/wire/roce.h"
#include "providers/mana/gdma.h"
#include "check.h"

static void test_npkts(void)
{
	CHECK(rc_npkts(0, 1024) == 1, "empty message is one packet");
	CHECK(rc_npkts(1, 1024) == 1, "1");
	CHECK(rc_npkts(1024, 1024) == 1, "mtu");
	CHECK(rc_npkts(1025, 1024) == 2, "mtu + 1");
	CHECK(rc_npkts(1u << 20, 4096) == 256, "1 MiB / 4096");
	CHECK(rc_npkts(16u << 20, 256) == 65536, "16 MiB / 256");
	CHECK(rc_npkts(0xffffffffu, 256) == 16777216, "no overflow");
	CHECK(rc_npkts(10, 0) == 0, "mtu 0");
}

static void test_opcodes(void)
{
	static const struct {
		uint8_t type;
		uint32_t i, n;
		int op;
	} t[] = {
		{ MANA_WQE_RC_SEND, 0, 1, ROCE_SEND_ONLY },
		{ MANA_WQE_RC_SEND, 0, 3, ROCE_SEND_FIRST },
		{ MANA_WQE_RC_SEND, 1, 3, ROCE_SEND_MIDDLE },
		{ MANA_WQE_RC_SEND, 2, 3, ROCE_SEND_LAST },
		{ MANA_WQE_RC_SEND_IMM, 0, 1, ROCE_SEND_ONLY_IMM },
		{ MANA_WQE_RC_SEND_IMM, 0, 2, ROCE_SEND_FIRST },
		{ MANA_WQE_RC_SEND_IMM, 1, 2, ROCE_SEND_LAST_IMM },
		{ MANA_WQE_RC_SEND_INV, 0, 1, ROCE_SEND_ONLY_INV },
		{ MANA_WQE_RC_SEND_INV, 1, 2, ROCE_SEND_LAST_INV },
		{ MANA_WQE_WRITE, 0, 1, ROCE_WRITE_ONLY },
		{ MANA_WQE_WRITE, 0, 4, ROCE_WRITE_FIRST },
		{ MANA_WQE_WRITE, 2, 4, ROCE_WRITE_MIDDLE },
		{ MANA_WQE_WRITE, 3, 4, ROCE_WRITE_LAST },
		{ MANA_WQE_WRITE_IMM, 0, 1, ROCE_WRITE_ONLY_IMM },
		{ MANA_WQE_WRITE_IMM, 0, 2, ROCE_WRITE_FIRST },
		{ MANA_WQE_WRITE_IMM, 1, 2, ROCE_WRITE_LAST_IMM },
		{ MANA_WQE_READ, 0, 5, ROCE_READ_REQ },
		{ MANA_WQE_READ, 1, 5, -1 },	/* one request packet */
		{ MANA_WQE_RC_SEND, 3, 3, -1 },
		{ MANA_WQE_RC_SEND, 0, 0, -1 },
		{ MANA_WQE_RC_RECV, 0, 1, -1 },
		{ MANA_WQE_UD_SEND, 0, 1, -1 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		CHECK(rc_opcode(t[i].type, t[i].i, t[i].n) == t[i].op,
		      "type %u packet %u of %u: %d, want %d", t[i].type,
		      t[i].i, t[i].n, rc_opcode(t[i].type, t[i].i, t[i].n),
		      t[i].op);
}

static void test_psn_class(void)
{
	CHECK(rc_psn_classify(5, 5) == RC_PSN_EXPECTED, "equal");
	CHECK(rc_psn_classify(4, 5) == RC_PSN_DUPLICATE, "one behind");
	CHECK(rc_psn_classify(6, 5) == RC_PSN_AHEAD, "one ahead");
	CHECK(rc_psn_classify(0xffffff, 0) == RC_PSN_DUPLICATE, "wrap behind");
	CHECK(rc_psn_classify(0, 0xffffff) == RC_PSN_AHEAD, "wrap ahead");
	CHECK(rc_psn_classify(0x7fffff, 0) == RC_PSN_AHEAD, "half window");
	CHECK(rc_psn_classify(0x800001, 0) == RC_PSN_DUPLICATE,
	      "beyond half window is behind");
}

static void test_sequence(void)
{
	/* outside a message: only first/only opcodes and READ */
	CHECK(rc_opcode_in_sequence(ROCE_SEND_FIRST, false, false), "f");
	CHECK(rc_opcode_in_sequence(ROCE_SEND_ONLY_IMM, false, false), "o");
	CHECK(rc_opcode_in_sequence(ROCE_WRITE_ONLY, false, false), "w");
	CHECK(rc_opcode_in_sequence(ROCE_READ_REQ, false, false), "r");
	CHECK(!rc_opcode_in_sequence(ROCE_SEND_MIDDLE, false, false), "m");
	CHECK(!rc_opcode_in_sequence(ROCE_WRITE_LAST, false, false), "l");
	/* inside a SEND: its middle/last only */
	CHECK(rc_opcode_in_sequence(ROCE_SEND_MIDDLE, true, false), "sm");
	CHECK(rc_opcode_in_sequence(ROCE_SEND_LAST_INV, true, false), "sl");
	CHECK(!rc_opcode_in_sequence(ROCE_WRITE_MIDDLE, true, false), "swm");
	CHECK(!rc_opcode_in_sequence(ROCE_SEND_FIRST, true, false), "sf");
	CHECK(!rc_opcode_in_sequence(ROCE_READ_REQ, true, false), "sr");
	/* inside a WRITE */
	CHECK(rc_opcode_in_sequence(ROCE_WRITE_LAST_IMM, false, true), "wl");
	CHECK(!rc_opcode_in_sequence(ROCE_SEND_LAST, false, true), "wsl");
	/* never a request */
	CHECK(!rc_opcode_in_sequence(ROCE_ACK, false, false), "ack");
	CHECK(!rc_opcode_in_sequence(ROCE_READ_RESP_ONLY, false, false), "rr");
	CHECK(!rc_opcode_in_sequence(0x13, false, false), "atomic");
}

static void test_payload(void)
{
	CHECK(rc_payload_len_ok(ROCE_SEND_FIRST, 1024, 1024), "first = mtu");
	CHECK(!rc_payload_len_ok(ROCE_SEND_FIRST, 1000, 1024), "short first");
	CHECK(!rc_payload_len_ok(ROCE_WRITE_MIDDLE, 1028, 1024), "long mid");
	CHECK(rc_payload_len_ok(ROCE_SEND_LAST, 1, 1024), "last");
	CHECK(!rc_payload_len_ok(ROCE_SEND_LAST, 1025, 1024), "long last");
	CHECK(rc_payload_len_ok(ROCE_SEND_ONLY, 0, 1024), "empty only");
	CHECK(rc_payload_len_ok(ROCE_READ_RESP_FIRST, 256, 256), "resp first");
	CHECK(!rc_payload_len_ok(ROCE_READ_REQ, 4, 1024), "read req data");
	CHECK(!rc_payload_len_ok(ROCE_ACK, 4, 1024), "ack data");
	CHECK(rc_payload_len_ok(ROCE_ACK, 0, 1024), "ack");
}

static void test_timeout(void)
{
	CHECK(rc_timeout_ns(0) == 0, "0 is infinite");
	CHECK(rc_timeout_ns(1) == 1000000, "clamped up to 1 ms");
	CHECK(rc_timeout_ns(8) == 1048576, "4.096 us * 256");
	CHECK(rc_timeout_ns(14) == 67108864, "14: 67.1 ms");
	CHECK(rc_timeout_ns(18) == 1073741824, "18: 1.07 s");
	CHECK(rc_timeout_ns(19) == 2000000000, "clamped down to 2 s");
	CHECK(rc_timeout_ns(31) == 2000000000, "31");
	CHECK(rc_timeout_ns(255) == 2000000000, "out of range");
}

int main(void)
{
	test_npkts();
	test_opcodes();
	test_psn_class();
	test_sequence();
	test_payload();
	test_timeout();
	return check_done();
}
