// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The connection manager's decoders: ib_cm_decode() of a MAD, and the
 * same bytes as a whole frame through roce_decode() (the UD SEND_ONLY +
 * DETH path QP1 takes) with its MAD decoded in turn.  Properties: a MAD
 * that decodes encodes again, and decodes to the same message (no field
 * is read that encode would not write back); an encoded MAD is 256 bytes
 * whose header is the CM's.
 */
#include <stdint.h>
#include <string.h>

#include "emulator/wire/ib_cm.h"
#include "emulator/wire/roce.h"
#include "fuzz_check.h"

static void mad(const uint8_t *data, size_t size)
{
	struct ib_cm_msg m, again;
	uint8_t out[IB_MAD_LEN];

	if (ib_cm_decode(data, size, &m))
		return;
	FUZZ_CHECK(size == IB_MAD_LEN);
	FUZZ_CHECK(ib_cm_encode(&m, out) == 0);
	FUZZ_CHECK(out[0] == IB_MAD_BASE_VERSION && out[1] == IB_MGMT_CLASS_CM &&
		   out[2] == IB_CM_CLASS_VERSION &&
		   out[3] == IB_MGMT_METHOD_SEND);
	FUZZ_CHECK(ib_cm_decode(out, sizeof(out), &again) == 0);
	FUZZ_CHECK(!memcmp(&m, &again, sizeof(m)));
	FUZZ_CHECK(ib_cm_private_len(m.attr_id) > 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roce_pkt p;

	mad(data, size);
	if (!roce_decode(data, size, &p) &&
	    (roce_opcode_flags(p.opcode) & ROCE_F_DETH)) {
		FUZZ_CHECK(p.payload_len <= ROCE_MAX_MTU);
		FUZZ_CHECK(p.src_qpn <= ROCE_QPN_MASK);
		if (p.payload)
			mad(p.payload, p.payload_len);
	}
	return 0;
}
