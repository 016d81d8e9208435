// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A record from another port of a socket: wire (emulator/wire/vswitch.h):
 * the decoder takes or refuses it whole; what it takes re-encodes to the
 * same bytes (HELLO) or points inside the input (DATA); the RoCE
 * destination the sender routes by reads only inside the frame.
 */
#include <stdint.h>
#include <string.h>

#include "emulator/wire/vswitch.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t again[VSW_HELLO_MAX], gid[16];
	struct vsw_msg m;
	size_t n;

	if (!vsw_decode(data, size, &m)) {
		FUZZ_CHECK(m.type == VSW_DATA || m.type == VSW_HELLO);
		if (m.type == VSW_HELLO) {
			FUZZ_CHECK(m.id.ngid <= VSW_MAX_GIDS && !(m.id.mac[0] & 1));
			n = vsw_encode_hello(&m.id, again, sizeof(again));
			FUZZ_CHECK(n == size && !memcmp(again, data, n));
		} else {
			FUZZ_CHECK(m.frame == data + VSW_HDR_LEN &&
				   m.len == size - VSW_HDR_LEN);
			FUZZ_CHECK(m.len >= VSW_FRAME_MIN &&
				   m.len <= VSW_FRAME_MAX);
			if (vsw_roce_dst(m.frame, m.len, gid))
				FUZZ_CHECK(m.len >= 14 + 20 + 8);
		}
	} else {
		FUZZ_CHECK(!m.type);
	}
	/* the bytes as a frame, too: a sender routes every frame it sends */
	if (vsw_roce_dst(data, size, gid))
		FUZZ_CHECK(size >= 14 + 20 + 8);
	return 0;
}
