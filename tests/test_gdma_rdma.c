// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RNIC (RC) formats of providers/mana/gdma.h pinned by byte vectors.
 *
 * Every vector was written by hand from the bit tables in
 * research/mana-kernel-and-gdma.md §3.2-3.9 and libmana-features-and-issues.md
 * §4, never produced by the encoder: decode(vector) must give the expected
 * struct and encode(struct) the vector.  Then inputs each side must reject,
 * and the vendor error table against a transcription of rdma-core v64's
 * values and ibv_wc_status grouping.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "providers/mana/gdma.h"
#include "providers/mana/rc_err.h"
#include "check.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char *hex(const void *p, size_t n)
{
	static char buf[4][256];
	static int slot;
	const uint8_t *b = p;
	char *s = buf[slot++ & 3];
	size_t i, o = 0;

	for (i = 0; i < n && o + 4 < sizeof(buf[0]); i++)
		o += (size_t)snprintf(s + o, sizeof(buf[0]) - o, "%02x%s", b[i],
				      (i + 1) % 4 || i + 1 == n ? "" : " ");
	s[o] = 0;
	return s;
}

#define CHECK_BYTES(name, got, want, n) \
	CHECK(!memcmp(got, want, n), "%s:\n  got  %s\n  want %s", name, \
	      hex(got, n), hex(want, n))

/* ------------------------------------------------------------------------ */
/* Queue ids */

static void test_qids(void)
{
	uint32_t id = 0;

	CHECK(!mana_rc_qid_make(0x1234, true, MANA_RC_SQ_REQ, &id) &&
	      id == 0x1234, "SQ requester %#x", id);
	CHECK(!mana_rc_qid_make(0x1234, true, MANA_RC_SQ_RESP, &id) &&
	      id == 0x1235, "SQ responder %#x", id);
	CHECK(!mana_rc_qid_make(0x1234, true, MANA_RC_SQ_MMQ, &id) &&
	      id == 0x1236, "SQ MMQ %#x", id);
	CHECK(!mana_rc_qid_make(0x1234, false, MANA_RC_RQ_RESP, &id) &&
	      id == 0x1234, "RQ responder %#x", id);
	CHECK(!mana_rc_qid_make(0x1234, false, MANA_RC_RQ_REQ, &id) &&
	      id == 0x1235, "RQ requester %#x", id);
	CHECK(!mana_rc_qid_make(0xFFFFFC, false, MANA_RC_RQ_REQ, &id) &&
	      id == 0xFFFFFD, "largest base %#x", id);

	id = 77;
	CHECK(mana_rc_qid_make(0, true, 0, &id) == -EINVAL, "base 0 (ids 0, 1)");
	CHECK(mana_rc_qid_make(0x1235, true, 0, &id) == -EINVAL,
	      "base with subtype bits");
	CHECK(mana_rc_qid_make(0x1000000, false, 0, &id) == -EINVAL,
	      "base over 24 bits");
	CHECK(mana_rc_qid_make(0x1234, true, 3, &id) == -EINVAL,
	      "send subtype 3");
	CHECK(mana_rc_qid_make(0x1234, false, 2, &id) == -EINVAL,
	      "recv subtype 2");
	CHECK(id == 77, "a failed make wrote %u", id);

	CHECK(mana_rc_qid_subtype(0x1237) == 3 &&
	      mana_rc_qid_base(0x1237) == 0x1234, "split 0x1237");

	/* rdma-core's send/recv sorting of error CQEs */
	CHECK(mana_rc_cqe_is_send(0x1234, true), "SQ requester: send");
	CHECK(!mana_rc_cqe_is_send(0x1235, true), "SQ responder: recv");
	CHECK(mana_rc_cqe_is_send(0x1236, true), "SQ MMQ: send");
	CHECK(!mana_rc_cqe_is_send(0x1234, false), "RQ responder: recv");
	CHECK(mana_rc_cqe_is_send(0x1235, false), "RQ requester: send");
}

/* ------------------------------------------------------------------------ */
/* PSN arithmetic */

static void test_psn(void)
{
	CHECK(mana_psn_add(0xFFFFFF, 1) == 0, "wrap");
	CHECK(mana_psn_add(0xFFFFF0, 0x20) == 0x10, "wrap by 0x20");
	CHECK(mana_psn_lt(0xFFFFFF, 0), "0xFFFFFF < 0");
	CHECK(!mana_psn_lt(0, 0xFFFFFF), "0 !< 0xFFFFFF");
	CHECK(!mana_psn_lt(5, 5), "5 !< 5");
	CHECK(mana_psn_lt(0, 0x7FFFFF), "0 < 0x7FFFFF");
	CHECK(!mana_psn_lt(0, 0x800000), "0 !< 0x800000 (half way)");
	CHECK(mana_psn_lt(0x900000, 0x0FFFFF), "0x900000 < 0x0FFFFF");

	CHECK(mana_psn_count(0, 1024) == 1, "empty message: one packet");
	CHECK(mana_psn_count(1, 1024) == 1, "1 byte");
	CHECK(mana_psn_count(1024, 1024) == 1, "one MTU");
	CHECK(mana_psn_count(1025, 1024) == 2, "one MTU + 1");
	CHECK(mana_psn_count(0xFFFFFFFF, 4096) == 0x100000, "4 GiB - 1");
	CHECK(mana_psn_count(100, 0) == 0, "mtu 0");
}

/* ------------------------------------------------------------------------ */
/* Doorbells an RC QP rings */

static void test_doorbells(void)
{
	static const uint8_t arm_wire[8] = {
		0x05, 0x01, 0x00, 0x01, 0xEF, 0xCD, 0xAB, 0x00,
	};
	static const struct {
		const char *name;
		uint64_t v;
	} arm_bad[] = {
		{ "high 0", 0x00ABCDEF00000105ULL },
		{ "high 2", 0x00ABCDEF02000105ULL },
		{ "high 0x81", 0x00ABCDEF81000105ULL },
		{ "psn over 24 bits", 0x01ABCDEF01000105ULL },
		{ "psn top bit", 0x8000000001000105ULL },
	};
	struct gdma_doorbell db;
	uint32_t id = 9, psn = 9;
	uint64_t v = 0;
	size_t i;

	CHECK(!gdma_arm_db_encode(0x105, 0xABCDEF, &v) &&
	      v == gdma_get_le64(arm_wire),
	      "arm encode %#llx", (unsigned long long)v);
	CHECK(!gdma_arm_db_decode(0x00ABCDEF01000105ULL, &id, &psn) &&
	      id == 0x105 && psn == 0xABCDEF, "arm decode %#x %#x", id, psn);
	CHECK(!gdma_arm_db_decode(0x0000000001FFFFFFULL, &id, &psn) &&
	      id == 0xFFFFFF && psn == 0, "arm decode max id, psn 0");
	for (i = 0; i < ARRAY_SIZE(arm_bad); i++) {
		id = psn = 9;
		CHECK(gdma_arm_db_decode(arm_bad[i].v, &id, &psn) == -EINVAL &&
		      id == 9 && psn == 9, "arm decode accepts %s", arm_bad[i].name);
	}
	v = 1;
	CHECK(gdma_arm_db_encode(0x1000000, 0, &v) == -EINVAL && v == 1,
	      "arm id over 24 bits");
	CHECK(gdma_arm_db_encode(5, 0x1000000, &v) == -EINVAL && v == 1,
	      "arm psn over 24 bits");

	/* the existing helpers carry RC's uses: RQ batch counts, CQ arming */
	CHECK(!gdma_doorbell_decode(GDMA_DB_RQ, 0xFFFFFFE0FF001234ULL, &db) &&
	      db.id == 0x1234 && db.wqe_cnt == 255 && db.tail == 0xFFFFFFE0,
	      "RQ batch of 255 at the u32 wrap");
	CHECK(!gdma_doorbell_decode(GDMA_DB_CQ, 0xFFFFFFFF00000010ULL, &db) &&
	      db.id == 0x10 && db.arm && db.tail == 0x7FFFFFFF, "CQ arm");
	CHECK(!gdma_doorbell_decode(GDMA_DB_SQ, 0x0000004000001234ULL, &db) &&
	      db.id == 0x1234 && db.tail == 0x40, "SQ requester");
}

/* ------------------------------------------------------------------------ */
/* Send OOB */

static bool soob_eq(const struct mana_rdma_send_oob *a,
		    const struct mana_rdma_send_oob *b)
{
	return a->wqe_type == b->wqe_type && a->fence == b->fence &&
	       a->signaled == b->signaled && a->solicited == b->solicited &&
	       a->psn == b->psn && a->ssn == b->ssn && a->imm == b->imm &&
	       a->inv_key == b->inv_key && a->remote_addr == b->remote_addr &&
	       a->rkey == b->rkey && a->dma_len == b->dma_len;
}

static const struct {
	const char *name;
	uint32_t size;
	uint8_t wire[GDMA_OOB_XLARGE];
	struct mana_rdma_send_oob oob;
} soob_vectors[] = {
	{ "RC_SEND signaled", 24,
	  { 0x42, 0x56, 0x34, 0x12, 0x07, 0x00, 0x00, 0x00 },
	  { .wqe_type = MANA_WQE_RC_SEND, .signaled = true, .psn = 0x123456,
	    .ssn = 7 } },
	{ "RC_SEND_IMM fence solicited max psn/ssn", 24,
	  { 0xA3, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00,
	    0x44, 0x33, 0x22, 0x11 },
	  { .wqe_type = MANA_WQE_RC_SEND_IMM, .fence = true, .solicited = true,
	    .psn = 0xFFFFFF, .ssn = 0xFFFFFF, .imm = 0x11223344 } },
	{ "RC_SEND_INV", 24,
	  { 0x04, 0x01, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
	    0xBE, 0xBA, 0xFE, 0xCA },
	  { .wqe_type = MANA_WQE_RC_SEND_INV, .psn = 1, .ssn = 2,
	    .inv_key = 0xCAFEBABE } },
	{ "WRITE", 24,
	  { 0x45, 0x10, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00,
	    0x12, 0x7F, 0x00, 0x00, 0x00, 0x70, 0x56, 0x34,
	    0xEF, 0xCD, 0xAB, 0x00, 0x00, 0x00, 0x01, 0x00 },
	  { .wqe_type = MANA_WQE_WRITE, .signaled = true, .psn = 0x10, .ssn = 3,
	    .remote_addr = 0x00007F1234567000ULL, .rkey = 0x00ABCDEF,
	    .dma_len = 0x10000 } },
	{ "WRITE_IMM (extra large)", 32,
	  { 0x06, 0x20, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00,
	    0x01, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00,
	    0x42, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00,
	    0xEF, 0xBE, 0xAD, 0xDE, 0x00, 0x00, 0x00, 0x00 },
	  { .wqe_type = MANA_WQE_WRITE_IMM, .psn = 0x20, .ssn = 4,
	    .remote_addr = 0x0000000100002000ULL, .rkey = 0x42, .dma_len = 5,
	    .imm = 0xDEADBEEF } },
	{ "READ signaled psn 0x800000", 24,
	  { 0x47, 0x00, 0x00, 0x80, 0x05, 0x00, 0x00, 0x00,
	    0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0xF0, 0xFF, 0xFF,
	    0x01, 0x00, 0x00, 0x00 },
	  { .wqe_type = MANA_WQE_READ, .signaled = true, .psn = 0x800000,
	    .ssn = 5, .remote_addr = 0xFFFFFFFFFFFFF000ULL, .rkey = 1 } },
};

static void test_send_oob_vectors(void)
{
	size_t i;

	CHECK(MANA_WQE_TYPE_COUNT == 12 && MANA_WQE_UD_SEND == 0 &&
	      MANA_WQE_UD_SEND_IMM == 1 && MANA_WQE_RC_SEND == 2 &&
	      MANA_WQE_RC_SEND_IMM == 3 && MANA_WQE_RC_SEND_INV == 4 &&
	      MANA_WQE_WRITE == 5 && MANA_WQE_WRITE_IMM == 6 &&
	      MANA_WQE_READ == 7 && MANA_WQE_UD_RECV == 8 &&
	      MANA_WQE_RC_RECV == 9 && MANA_WQE_LOCAL_INV == 10 &&
	      MANA_WQE_REG_MR == 11, "WQE type values");

	for (i = 0; i < ARRAY_SIZE(soob_vectors); i++) {
		uint8_t buf[GDMA_OOB_XLARGE + 4];
		struct mana_rdma_send_oob o;
		uint32_t n = soob_vectors[i].size;

		CHECK(mana_rdma_send_oob_size(soob_vectors[i].oob.wqe_type) == n,
		      "%s: size", soob_vectors[i].name);
		memset(buf, 0xA5, sizeof(buf));
		CHECK(!mana_rdma_send_oob_encode(&soob_vectors[i].oob, buf),
		      "%s: encode", soob_vectors[i].name);
		CHECK_BYTES(soob_vectors[i].name, buf, soob_vectors[i].wire, n);
		CHECK(buf[n] == 0xA5, "%s: wrote past %u bytes",
		      soob_vectors[i].name, n);

		memset(&o, 0x5A, sizeof(o));
		CHECK(!mana_rdma_send_oob_decode(soob_vectors[i].wire, n, &o) &&
		      soob_eq(&o, &soob_vectors[i].oob),
		      "%s: decode", soob_vectors[i].name);
	}
}

/* a copy of vector @v with byte @at set to @val, then decoded at @size */
static int soob_decode_mut(size_t v, unsigned int at, uint8_t val,
			   uint32_t size)
{
	struct mana_rdma_send_oob o = { .psn = 99 };
	uint8_t buf[GDMA_OOB_XLARGE];
	int ret;

	memcpy(buf, soob_vectors[v].wire, sizeof(buf));
	buf[at] = val;
	ret = mana_rdma_send_oob_decode(buf, size, &o);
	if (ret && o.psn != 99)
		return 1;	/* a failed decode must not write */
	return ret;
}

static void test_send_oob_bad(void)
{
	static const struct {
		const char *name;
		struct mana_rdma_send_oob oob;
	} enc_bad[] = {
		{ "UD_SEND", { .wqe_type = MANA_WQE_UD_SEND } },
		{ "UD_SEND_IMM", { .wqe_type = MANA_WQE_UD_SEND_IMM } },
		{ "UD_RECV", { .wqe_type = MANA_WQE_UD_RECV } },
		{ "RC_RECV", { .wqe_type = MANA_WQE_RC_RECV } },
		{ "LOCAL_INV", { .wqe_type = MANA_WQE_LOCAL_INV } },
		{ "REG_MR", { .wqe_type = MANA_WQE_REG_MR } },
		{ "type 12", { .wqe_type = 12 } },
		{ "type 31", { .wqe_type = 31 } },
		{ "psn over 24 bits",
		  { .wqe_type = MANA_WQE_RC_SEND, .psn = 0x1000000 } },
		{ "ssn over 24 bits",
		  { .wqe_type = MANA_WQE_RC_SEND, .ssn = 0x1000000 } },
		{ "RC_SEND with imm", { .wqe_type = MANA_WQE_RC_SEND, .imm = 1 } },
		{ "WRITE with imm", { .wqe_type = MANA_WQE_WRITE, .imm = 1 } },
		{ "RC_SEND_IMM with rkey",
		  { .wqe_type = MANA_WQE_RC_SEND_IMM, .rkey = 1 } },
		{ "RC_SEND_INV with address",
		  { .wqe_type = MANA_WQE_RC_SEND_INV, .remote_addr = 1 } },
		{ "RC_SEND with dma_len",
		  { .wqe_type = MANA_WQE_RC_SEND, .dma_len = 1 } },
		{ "READ with inv_key", { .wqe_type = MANA_WQE_READ, .inv_key = 1 } },
	};
	uint8_t buf[GDMA_OOB_XLARGE];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(enc_bad); i++) {
		memset(buf, 0xA5, sizeof(buf));
		CHECK(mana_rdma_send_oob_encode(&enc_bad[i].oob, buf) == -EINVAL &&
		      buf[0] == 0xA5 && buf[23] == 0xA5,
		      "encode accepts %s", enc_bad[i].name);
	}

	/* vector indexes: 0 RC_SEND, 1 SEND_IMM, 2 SEND_INV, 3 WRITE,
	 * 4 WRITE_IMM, 5 READ */
	CHECK(soob_decode_mut(0, 7, 0x01, 24) == -EINVAL, "dw1 reserved bit 24");
	CHECK(soob_decode_mut(3, 7, 0x80, 24) == -EINVAL, "dw1 reserved bit 31");
	CHECK(soob_decode_mut(0, 8, 0x01, 24) == -EINVAL, "RC_SEND union byte");
	CHECK(soob_decode_mut(0, 23, 0x01, 24) == -EINVAL, "RC_SEND last byte");
	CHECK(soob_decode_mut(1, 12, 0x01, 24) == -EINVAL, "SEND_IMM byte 12");
	CHECK(soob_decode_mut(2, 20, 0x01, 24) == -EINVAL, "SEND_INV byte 20");
	CHECK(soob_decode_mut(4, 28, 0x01, 32) == -EINVAL,
	      "WRITE_IMM slot reserved dword");
	CHECK(soob_decode_mut(0, 0, 0x40, 24) == -EINVAL, "type UD_SEND");
	CHECK(soob_decode_mut(0, 0, 0x41, 24) == -EINVAL, "type UD_SEND_IMM");
	CHECK(soob_decode_mut(0, 0, 0x48, 24) == -EINVAL, "type UD_RECV");
	CHECK(soob_decode_mut(0, 0, 0x49, 24) == -EINVAL, "type RC_RECV");
	CHECK(soob_decode_mut(0, 0, 0x4A, 24) == -EINVAL, "type LOCAL_INV");
	CHECK(soob_decode_mut(0, 0, 0x4B, 24) == -EINVAL, "type REG_MR");
	CHECK(soob_decode_mut(0, 0, 0x4C, 24) == -EINVAL, "type 12");
	CHECK(soob_decode_mut(0, 0, 0x5F, 24) == -EINVAL, "type 31");
	/* the OOB size from the WQE header must fit the type */
	CHECK(soob_decode_mut(0, 0, 0x42, 32) == -EINVAL, "RC_SEND at 32 B");
	CHECK(soob_decode_mut(4, 0, 0x06, 24) == -EINVAL, "WRITE_IMM at 24 B");
	CHECK(soob_decode_mut(3, 0, 0x45, 8) == -EINVAL, "WRITE at 8 B");
	/* the mutations above are rejections, not accidents: unmutated pass */
	CHECK(soob_decode_mut(4, 28, 0x00, 32) == 0, "WRITE_IMM as is");
	CHECK(soob_decode_mut(3, 23, 0xFF, 24) == 0, "WRITE: dma_len byte");
}

/* ------------------------------------------------------------------------ */
/* WQEs: the extra-large slot's place, RREQ receive WQEs, sizes */

static void test_wqes(void)
{
	static const uint8_t want[64] = {
		/* header: num_sge 1, oob code 7, cdu 1024, check_sn */
		0x00, 0x00, 0x00, 0x00, 0x01, 0x07, 0x00, 0x44,
		/* send OOB (WRITE_IMM vector) */
		0x06, 0x20, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00,
		0x01, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00,
		0x42, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00,
		/* first SGE slot: immediate, reserved, padding */
		0xEF, 0xBE, 0xAD, 0xDE, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		/* the one real SGE */
		0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x77, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00,
	};
	static const uint8_t rreq_want[32] = {
		/* rx header: num_sge 1, oob code 2, check_sn */
		0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x00, 0x40,
		/* recv OOB: psn_start 0x20 */
		0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x88, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
	};
	struct gdma_wqe w = {
		.hdr = { .num_sge = 1, .oob_size = GDMA_OOB_XLARGE,
			 .client_data_unit = 1024, .check_sn = true },
		.sge = { { .addr = 0x1000, .mkey = 0x77, .size = 5 } },
	};
	struct gdma_wqe r = {
		.hdr = { .num_sge = 1, .oob_size = GDMA_OOB_SMALL,
			 .check_sn = true },
		.sge = { { .addr = 0x2000, .mkey = 0x88, .size = 0x100 } },
	};
	struct mana_rdma_recv_oob ro = { .psn_start = 0x20 };
	struct mana_rdma_send_oob so;
	uint8_t ring[4096] = { 0 };
	struct gdma_wqe got;
	uint32_t bu = 0;

	CHECK(!mana_rdma_send_oob_encode(&soob_vectors[4].oob, w.oob),
	      "WRITE_IMM OOB");
	CHECK(!gdma_wqe_post(ring, sizeof(ring), 0, GDMA_SQ, &w, &bu) && bu == 2,
	      "post WRITE_IMM WQE (%u BUs)", bu);
	CHECK_BYTES("WRITE_IMM WQE", ring, want, sizeof(want));
	CHECK(bu == mana_rc_send_wqe_size_bu(MANA_WQE_WRITE_IMM, 1),
	      "size helper agrees with the post");
	CHECK(!gdma_wqe_fetch(ring, sizeof(ring), 0, GDMA_SQ, &got, &bu) &&
	      !mana_rdma_send_oob_decode(got.oob, got.hdr.oob_size, &so) &&
	      soob_eq(&so, &soob_vectors[4].oob) && got.sge[0].mkey == 0x77,
	      "fetch and decode the WRITE_IMM WQE");

	memset(ring, 0, sizeof(ring));
	CHECK(!mana_rdma_recv_oob_encode(&ro, r.oob), "RREQ OOB");
	CHECK(!gdma_wqe_post(ring, sizeof(ring), 0, GDMA_RQ, &r, &bu) && bu == 1,
	      "post RREQ WQE (%u BUs)", bu);
	CHECK_BYTES("RREQ WQE", ring, rreq_want, sizeof(rreq_want));
	CHECK(bu == mana_rc_recv_wqe_size_bu(1), "recv size helper");

	/* sizes: 8 B header + 24 B OOB (+16 B slot) + 16 B per SGE, in BUs */
	CHECK(mana_rc_send_wqe_size_bu(MANA_WQE_RC_SEND, 0) == 2, "0 SGE: dummy");
	CHECK(mana_rc_send_wqe_size_bu(MANA_WQE_RC_SEND, 2) == 2, "2 SGEs");
	CHECK(mana_rc_send_wqe_size_bu(MANA_WQE_RC_SEND, 3) == 3, "3 SGEs");
	CHECK(mana_rc_send_wqe_size_bu(MANA_WQE_RC_SEND, 30) == 16, "30 SGEs");
	CHECK(mana_rc_send_wqe_size_bu(MANA_WQE_RC_SEND, 31) == 0, "31 SGEs");
	CHECK(mana_rc_send_wqe_size_bu(MANA_WQE_WRITE_IMM, 0) == 2,
	      "WRITE_IMM 0 SGE");
	CHECK(mana_rc_send_wqe_size_bu(MANA_WQE_WRITE_IMM, 2) == 3,
	      "WRITE_IMM 2 SGEs");
	CHECK(mana_rc_send_wqe_size_bu(MANA_WQE_WRITE_IMM, 29) == 16,
	      "WRITE_IMM 29 SGEs");
	CHECK(mana_rc_send_wqe_size_bu(MANA_WQE_WRITE_IMM, 30) == 0,
	      "WRITE_IMM 30 SGEs is over 512 B");
	CHECK(mana_rc_send_wqe_size_bu(MANA_WQE_READ, 15) == 2,
	      "READ: dummy SGE whatever the SGL");
	CHECK(mana_rc_send_wqe_size_bu(MANA_WQE_UD_SEND, 1) == 0, "UD type");
	CHECK(mana_rc_recv_wqe_size_bu(0) == 1 && mana_rc_recv_wqe_size_bu(15) == 8 &&
	      mana_rc_recv_wqe_size_bu(16) == 0, "recv sizes");
}

/* RC send WQE headers as rdma-core lays them out */
static void test_send_headers(void)
{
	static const struct {
		const char *name;
		uint32_t type, num_sge, mtu, sges;
		uint8_t wire[8];
	} vec[] = {
		{ "WRITE_IMM 2 SGEs mtu 4096: 3 slots, 1 padding",
		  MANA_WQE_WRITE_IMM, 2, 4096, 2,
		  { 0x01, 0x00, 0x00, 0x00, 0x03, 0x07, 0x00, 0x50 } },
		{ "RC_SEND 3 SGEs mtu 1024: 4 slots, 1 padding",
		  MANA_WQE_RC_SEND, 3, 1024, 3,
		  { 0x01, 0x00, 0x00, 0x00, 0x04, 0x06, 0x00, 0x44 } },
		{ "RC_SEND_IMM 2 SGEs mtu 1024",
		  MANA_WQE_RC_SEND_IMM, 2, 1024, 2,
		  { 0x00, 0x00, 0x00, 0x00, 0x02, 0x06, 0x00, 0x44 } },
		{ "WRITE 0 SGEs mtu 256: dummy, 2 slots",
		  MANA_WQE_WRITE, 0, 256, 1,
		  { 0x01, 0x00, 0x00, 0x00, 0x02, 0x06, 0x00, 0x01 } },
		{ "READ 15 SGEs mtu 2048: dummy only",
		  MANA_WQE_READ, 15, 2048, 1,
		  { 0x01, 0x00, 0x00, 0x00, 0x02, 0x06, 0x00, 0x08 } },
	};
	static const struct {
		const char *name;
		uint32_t type, num_sge, mtu;
	} bad[] = {
		{ "mtu 1000", MANA_WQE_RC_SEND, 1, 1000 },
		{ "mtu 128", MANA_WQE_RC_SEND, 1, 128 },
		{ "mtu 8192", MANA_WQE_RC_SEND, 1, 8192 },
		{ "mtu 0", MANA_WQE_RC_SEND, 1, 0 },
		{ "UD_SEND", MANA_WQE_UD_SEND, 1, 1024 },
		{ "RC_RECV", MANA_WQE_RC_RECV, 1, 1024 },
		{ "31 SGEs", MANA_WQE_RC_SEND, 31, 1024 },
		{ "WRITE_IMM 30 SGEs", MANA_WQE_WRITE_IMM, 30, 1024 },
	};
	struct gdma_wqe_header h, d;
	uint8_t buf[8];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vec); i++) {
		memset(&h, 0, sizeof(h));
		CHECK(!mana_rc_send_wqe_header(vec[i].type, vec[i].num_sge,
					       vec[i].mtu, &h) &&
		      !gdma_wqe_header_encode(&h, GDMA_SQ, buf),
		      "%s: build", vec[i].name);
		CHECK_BYTES(vec[i].name, buf, vec[i].wire, 8);
		CHECK(!gdma_wqe_header_decode(vec[i].wire, GDMA_SQ, &d) &&
		      mana_rc_send_wqe_sges(&d) == vec[i].sges &&
		      gdma_wqe_size_bu(d.oob_size, d.num_sge) ==
		      mana_rc_send_wqe_size_bu(vec[i].type, vec[i].num_sge),
		      "%s: decode", vec[i].name);
	}
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&h, 0xA5, sizeof(h));
		CHECK(mana_rc_send_wqe_header(bad[i].type, bad[i].num_sge,
					      bad[i].mtu, &h) == -EINVAL &&
		      h.num_sge == 0xA5, "accepts %s", bad[i].name);
	}
}

/*
 * A WRITE_IMM WQE in the last BU of a ring: header and OOB fill it, so the
 * extra slot (the immediate) and the SGL wrap to the ring start.
 */
static void test_write_imm_wrap(void)
{
	static const uint8_t head_want[32] = {
		/* num_sge 1, oob code 7, cdu 256, check_sn */
		0x00, 0x00, 0x00, 0x00, 0x01, 0x07, 0x00, 0x41,
		0x06, 0x20, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00,
		0x01, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00,
		0x42, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00,
	};
	static const uint8_t start_want[32] = {
		0xEF, 0xBE, 0xAD, 0xDE, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x30, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x99, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00,
	};
	struct gdma_wqe w = {
		.sge = { { .addr = 0x3000, .mkey = 0x99, .size = 5 } },
	};
	struct mana_rdma_send_oob so;
	uint8_t ring[256];
	struct gdma_wqe got;
	uint32_t bu = 0;

	memset(ring, 0xCC, sizeof(ring));
	CHECK(!mana_rc_send_wqe_header(MANA_WQE_WRITE_IMM, 1, 256, &w.hdr) &&
	      !mana_rdma_send_oob_encode(&soob_vectors[4].oob, w.oob),
	      "build WRITE_IMM");
	CHECK(!gdma_wqe_post(ring, sizeof(ring), 7, GDMA_SQ, &w, &bu) && bu == 2,
	      "post at the last BU");
	CHECK_BYTES("ring end", ring + 224, head_want, 32);
	CHECK_BYTES("ring start", ring, start_want, 32);
	CHECK(ring[32] == 0xCC, "wrote past the WQE");
	CHECK(!gdma_wqe_fetch(ring, sizeof(ring), 7, GDMA_SQ, &got, &bu) &&
	      !mana_rdma_send_oob_decode(got.oob, got.hdr.oob_size, &so) &&
	      so.imm == 0xDEADBEEF && got.sge[0].addr == 0x3000,
	      "fetch across the wrap");
}

/* ------------------------------------------------------------------------ */
/* Receive OOB */

static void test_recv_oob(void)
{
	static const uint8_t wire[8] = {
		0xEF, 0xCD, 0xAB, 0x00, 0x10, 0x00, 0x00, 0x00,
	};
	static const uint8_t zero[8];
	struct mana_rdma_recv_oob o = { .psn_start = 0xABCDEF,
					.psn_range = 0x10 };
	uint8_t buf[8], bad[8];

	memset(buf, 0xA5, sizeof(buf));
	CHECK(!mana_rdma_recv_oob_encode(&o, buf), "encode");
	CHECK_BYTES("recv OOB", buf, wire, 8);
	memset(&o, 0x5A, sizeof(o));
	CHECK(!mana_rdma_recv_oob_decode(wire, &o) && o.psn_start == 0xABCDEF &&
	      o.psn_range == 0x10, "decode");
	CHECK(!mana_rdma_recv_oob_decode(zero, &o) && !o.psn_start &&
	      !o.psn_range, "RC_RECV's zero OOB");

	memcpy(bad, wire, 8);
	bad[3] = 1;
	CHECK(mana_rdma_recv_oob_decode(bad, &o) == -EINVAL, "dw0 reserved");
	memcpy(bad, wire, 8);
	bad[7] = 0x80;
	CHECK(mana_rdma_recv_oob_decode(bad, &o) == -EINVAL, "dw1 reserved");
	o.psn_start = 0x1000000;
	o.psn_range = 0;
	memset(buf, 0xA5, sizeof(buf));
	CHECK(mana_rdma_recv_oob_encode(&o, buf) == -EINVAL && buf[0] == 0xA5,
	      "psn_start over 24 bits");
	o.psn_start = 0;
	o.psn_range = 0x1000000;
	CHECK(mana_rdma_recv_oob_encode(&o, buf) == -EINVAL && buf[0] == 0xA5,
	      "psn_range over 24 bits");
}

/* ------------------------------------------------------------------------ */
/* RDMA CQEs */

static bool cqe_eq(const struct mana_rdma_cqe *a, const struct mana_rdma_cqe *b)
{
	return a->type == b->type && a->msg_len == b->msg_len &&
	       a->psn == b->psn && a->imm == b->imm &&
	       a->rx_wqe_offset == b->rx_wqe_offset && a->msn == b->msn &&
	       a->syndrome == b->syndrome &&
	       a->vendor_error == b->vendor_error && a->opcode == b->opcode &&
	       a->rsp_msn == b->rsp_msn && a->rsp_psn == b->rsp_psn;
}

static const struct {
	const char *name;
	uint8_t wire[GDMA_CQE_DATA_SIZE];
	struct mana_rdma_cqe cqe;
} cqe_vectors[] = {
	{ "RC_SEND at the u32 wrap",
	  { 0x03, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00,
	    0xCD, 0xAB, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	    0xE0, 0xFF, 0xFF, 0xFF },
	  { .type = MANA_RDMA_CQE_RC_SEND, .msg_len = 0x1000, .psn = 0xABCD,
	    .rx_wqe_offset = 0xFFFFFFE0 } },
	{ "RC_SEND_IMM",
	  { 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	    0xFF, 0xFF, 0xFF, 0x00, 0x44, 0x33, 0x22, 0x11,
	    0x40, 0x00, 0x00, 0x00 },
	  { .type = MANA_RDMA_CQE_RC_SEND_IMM, .psn = 0xFFFFFF,
	    .imm = 0x11223344, .rx_wqe_offset = 0x40 } },
	{ "RC_SEND_INV",
	  { 0x05, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	    0x01, 0x00, 0x00, 0x00, 0x34, 0x12, 0x00, 0x00 },
	  { .type = MANA_RDMA_CQE_RC_SEND_INV, .msg_len = 1, .psn = 1,
	    .imm = 0x1234 } },
	{ "RC_WRITE_IMM",
	  { 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,
	    0x10, 0x00, 0x00, 0x00, 0xEF, 0xBE, 0xAD, 0xDE,
	    0x20, 0x00, 0x00, 0x00 },
	  { .type = MANA_RDMA_CQE_RC_WRITE_IMM, .msg_len = 0x10000,
	    .psn = 0x10, .imm = 0xDEADBEEF, .rx_wqe_offset = 0x20 } },
	{ "ARMED_CMPL ack",
	  { 0x07, 0x00, 0x00, 0x00, 0x02, 0x01, 0x00, 0x1F,
	    0x56, 0x34, 0x12, 0x00 },
	  { .type = MANA_RDMA_CQE_ARMED_CMPL, .msn = 0x102, .syndrome = 0x1F,
	    .psn = 0x123456 } },
	{ "ERROR corrupted WQE",
	  { 0x22, 0x01, 0x02, 0x00, 0x03, 0x00, 0x00, 0x61,
	    0xEF, 0xCD, 0xAB, 0x0A, 0x02, 0x00, 0x00, 0x00,
	    0xEE, 0xCD, 0xAB, 0x00 },
	  { .type = MANA_RDMA_CQE_ERROR, .vendor_error = 0x201, .msn = 3,
	    .syndrome = 0x61, .psn = 0xABCDEF, .opcode = 0x0A, .rsp_msn = 2,
	    .rsp_psn = 0xABCDEE } },
	{ "ERROR vendor 0x3ff",
	  { 0x22, 0xFF, 0x03, 0x00 },
	  { .type = MANA_RDMA_CQE_ERROR, .vendor_error = 0x3FF } },
	{ "UC send completion (UD_SEND, no fields)",
	  { 0x01 },
	  { .type = MANA_RDMA_CQE_UD_SEND } },
};

static void test_cqe_vectors(void)
{
	size_t i;

	CHECK(MANA_RDMA_CQE_NOP == 0 && MANA_RDMA_CQE_UD_SEND == 1 &&
	      MANA_RDMA_CQE_UD_SEND_IMM == 2 && MANA_RDMA_CQE_RC_SEND == 3 &&
	      MANA_RDMA_CQE_RC_SEND_IMM == 4 && MANA_RDMA_CQE_RC_SEND_INV == 5 &&
	      MANA_RDMA_CQE_RC_WRITE_IMM == 6 &&
	      MANA_RDMA_CQE_ARMED_CMPL == 7 && MANA_RDMA_CQE_LWR == 8 &&
	      MANA_RDMA_CQE_ERROR == 34, "CQE type values");

	for (i = 0; i < ARRAY_SIZE(cqe_vectors); i++) {
		uint8_t buf[GDMA_CQE_SIZE];
		struct mana_rdma_cqe c;

		memset(buf, 0xA5, sizeof(buf));
		CHECK(!mana_rdma_cqe_encode(&cqe_vectors[i].cqe, buf),
		      "%s: encode", cqe_vectors[i].name);
		CHECK_BYTES(cqe_vectors[i].name, buf, cqe_vectors[i].wire,
			    GDMA_CQE_DATA_SIZE);
		CHECK(buf[GDMA_CQE_DATA_SIZE] == 0xA5,
		      "%s: wrote into the trailing dword", cqe_vectors[i].name);
		memset(&c, 0x5A, sizeof(c));
		CHECK(!mana_rdma_cqe_decode(cqe_vectors[i].wire, &c) &&
		      cqe_eq(&c, &cqe_vectors[i].cqe),
		      "%s: decode", cqe_vectors[i].name);
	}

	CHECK(mana_syndrome_is_ack(MANA_SYNDROME_ACK(0x1F)) &&
	      !mana_syndrome_is_ack(MANA_SYNDROME_RNR_NAK(0)) &&
	      !mana_syndrome_is_ack(MANA_SYNDROME_NAK(0)) &&
	      MANA_SYNDROME_RNR_NAK(0x0E) == 0x2E && MANA_SYNDROME_NAK(3) == 0x63,
	      "syndromes");
}

/* the whole 64-byte CQE: RDMA data + the GDMA trailing dword */
static void test_full_cqe(void)
{
	static const uint8_t tail_recv[4] = { 0x30, 0x12, 0x00, 0x20 };
	static const uint8_t tail_send[4] = { 0x34, 0x12, 0x00, 0x41 };
	struct gdma_cqe g = { .wq_num = 0x1230, .owner = 1 };
	struct mana_rdma_cqe c;
	uint8_t buf[GDMA_CQE_SIZE];

	CHECK(!mana_rdma_cqe_encode(&cqe_vectors[1].cqe, g.data) &&
	      !gdma_cqe_encode(&g, buf), "recv CQE");
	CHECK_BYTES("recv CQE tail", buf + 60, tail_recv, 4);
	CHECK(!gdma_cqe_decode(buf, &g) && !mana_rdma_cqe_decode(g.data, &c) &&
	      c.type == MANA_RDMA_CQE_RC_SEND_IMM && !g.is_sq &&
	      g.wq_num == 0x1230 && !mana_rc_cqe_is_send(g.wq_num, g.is_sq),
	      "recv CQE back");

	g = (struct gdma_cqe){ .wq_num = 0x1234, .is_sq = true, .owner = 2 };
	CHECK(!mana_rdma_cqe_encode(&cqe_vectors[5].cqe, g.data) &&
	      !gdma_cqe_encode(&g, buf), "send error CQE");
	CHECK_BYTES("send error CQE tail", buf + 60, tail_send, 4);
	CHECK(!gdma_cqe_decode(buf, &g) && !mana_rdma_cqe_decode(g.data, &c) &&
	      c.vendor_error == MANA_VERR_TX_GDMA_CORRUPTED_WQE &&
	      mana_rc_cqe_is_send(g.wq_num, g.is_sq), "send error CQE back");
}

static int cqe_decode_mut(size_t v, unsigned int at, uint8_t val)
{
	struct mana_rdma_cqe c = { .psn = 99 };
	uint8_t buf[GDMA_CQE_DATA_SIZE];
	int ret;

	memcpy(buf, cqe_vectors[v].wire, sizeof(buf));
	buf[at] = val;
	ret = mana_rdma_cqe_decode(buf, &c);
	if (ret && c.psn != 99)
		return 1;
	return ret;
}

static void test_cqe_bad(void)
{
	static const uint8_t bad_types[] = { 0, 1, 2, 8, 9, 33, 35, 0xFF };
	static const struct {
		const char *name;
		struct mana_rdma_cqe cqe;
	} enc_bad[] = {
		{ "NOP", { .type = MANA_RDMA_CQE_NOP } },
		{ "UD_SEND with a psn",
		  { .type = MANA_RDMA_CQE_UD_SEND, .psn = 1 } },
		{ "UD_SEND with a length",
		  { .type = MANA_RDMA_CQE_UD_SEND, .msg_len = 1 } },
		{ "UD_SEND_IMM", { .type = MANA_RDMA_CQE_UD_SEND_IMM } },
		{ "LWR", { .type = MANA_RDMA_CQE_LWR } },
		{ "type 35", { .type = 35 } },
		{ "recv psn over 24 bits",
		  { .type = MANA_RDMA_CQE_RC_SEND_IMM, .psn = 0x1000000 } },
		{ "recv with msn", { .type = MANA_RDMA_CQE_RC_SEND, .msn = 1 } },
		{ "recv with vendor error",
		  { .type = MANA_RDMA_CQE_RC_SEND, .vendor_error = 1 } },
		{ "RC_SEND with imm", { .type = MANA_RDMA_CQE_RC_SEND, .imm = 1 } },
		{ "rx_wqe_offset not a BU",
		  { .type = MANA_RDMA_CQE_RC_SEND, .rx_wqe_offset = 0x10 } },
		{ "armed with msg_len",
		  { .type = MANA_RDMA_CQE_ARMED_CMPL, .msg_len = 1 } },
		{ "armed with vendor error",
		  { .type = MANA_RDMA_CQE_ARMED_CMPL, .vendor_error = 1 } },
		{ "armed with opcode",
		  { .type = MANA_RDMA_CQE_ARMED_CMPL, .opcode = 1 } },
		{ "armed msn over 24 bits",
		  { .type = MANA_RDMA_CQE_ARMED_CMPL, .msn = 0x1000000 } },
		{ "error without vendor error", { .type = MANA_RDMA_CQE_ERROR } },
		{ "error vendor 0x400",
		  { .type = MANA_RDMA_CQE_ERROR, .vendor_error = 0x400 } },
		{ "error vendor SW_FLUSHED",
		  { .type = MANA_RDMA_CQE_ERROR,
		    .vendor_error = MANA_VERR_SW_FLUSHED } },
		{ "error with imm",
		  { .type = MANA_RDMA_CQE_ERROR, .vendor_error = 1, .imm = 1 } },
		{ "error rsp_psn over 24 bits",
		  { .type = MANA_RDMA_CQE_ERROR, .vendor_error = 1,
		    .rsp_psn = 0x1000000 } },
	};
	uint8_t buf[GDMA_CQE_DATA_SIZE];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(enc_bad); i++) {
		memset(buf, 0xA5, sizeof(buf));
		CHECK(mana_rdma_cqe_encode(&enc_bad[i].cqe, buf) == -EINVAL &&
		      buf[0] == 0xA5, "encode accepts %s", enc_bad[i].name);
	}
	for (i = 0; i < ARRAY_SIZE(bad_types); i++)
		CHECK(cqe_decode_mut(0, 0, bad_types[i]) == -EINVAL,
		      "decode accepts type %u", bad_types[i]);

	/* vectors: 0 RC_SEND, 1 SEND_IMM, 3 WRITE_IMM, 4 ARMED, 5 ERROR */
	CHECK(cqe_decode_mut(0, 1, 0x01) == -EINVAL, "recv dw0 reserved");
	CHECK(cqe_decode_mut(1, 11, 0x01) == -EINVAL, "recv psn top byte");
	CHECK(cqe_decode_mut(0, 12, 0x01) == -EINVAL, "RC_SEND imm");
	CHECK(cqe_decode_mut(3, 16, 0x30) == -EINVAL, "rx_wqe_offset 0x30");
	CHECK(cqe_decode_mut(0, 20, 0x01) == -EINVAL, "byte 20");
	CHECK(cqe_decode_mut(4, 59, 0x01) == -EINVAL, "byte 59");
	CHECK(cqe_decode_mut(4, 1, 0x01) == -EINVAL, "armed vendor bits");
	CHECK(cqe_decode_mut(4, 11, 0x01) == -EINVAL, "armed dw2 top byte");
	CHECK(cqe_decode_mut(4, 12, 0x01) == -EINVAL, "armed dw3");
	CHECK(cqe_decode_mut(4, 16, 0x01) == -EINVAL, "armed dw4");
	{
		static const uint8_t err0[GDMA_CQE_DATA_SIZE] = { 0x22 };
		struct mana_rdma_cqe c;

		CHECK(mana_rdma_cqe_decode(err0, &c) == -EINVAL,
		      "error with vendor_error 0");
	}
	CHECK(cqe_decode_mut(5, 2, 0x06) == -EINVAL, "error dw0 bit 18");
	CHECK(cqe_decode_mut(5, 3, 0x80) == -EINVAL, "error dw0 bit 31");
	CHECK(cqe_decode_mut(5, 15, 0x01) == -EINVAL, "error dw3 reserved");
	CHECK(cqe_decode_mut(5, 19, 0x01) == -EINVAL, "error dw4 reserved");
	/* vector 7: the UC send completion has no field at all */
	CHECK(cqe_decode_mut(7, 1, 0x01) == -EINVAL, "UC send dw0 bit 8");
	CHECK(cqe_decode_mut(7, 4, 0x01) == -EINVAL, "UC send dw1");
	CHECK(cqe_decode_mut(7, 8, 0x01) == -EINVAL, "UC send dw2 (psn)");
	CHECK(cqe_decode_mut(7, 16, 0x20) == -EINVAL, "UC send dw4");
	/* in-range changes still decode */
	CHECK(cqe_decode_mut(0, 15, 0x00) == 0 && cqe_decode_mut(5, 7, 0x20) == 0,
	      "unmutated-equivalent vectors decode");
}

/* ------------------------------------------------------------------------ */
/* Vendor errors: rdma-core v64's values and ibv_wc_status, transcribed */

static void test_vendor_errors(void)
{
	static const struct {
		uint32_t code;
		enum ibv_wc_status status;
		const char *name;
	} table[] = {
		{ 0x000, IBV_WC_SUCCESS, "OK" },
		{ 0x003, IBV_WC_REM_INV_REQ_ERR, "RX_OP_REQ" },
		{ 0x005, IBV_WC_LOC_LEN_ERR, "RX_PKT_LEN" },
		{ 0x043, IBV_WC_REM_ACCESS_ERR, "RX_ATB_RKEY_MISCONFIG_ERR" },
		{ 0x083, IBV_WC_REM_ACCESS_ERR, "RX_ATB_RKEY_ADDR_RIGHT" },
		{ 0x0c3, IBV_WC_REM_ACCESS_ERR, "RX_ATB_RKEY_ADDR_RANGE" },
		{ 0x102, IBV_WC_LOC_LEN_ERR, "RX_MSG_LEN_OVFL" },
		{ 0x108, IBV_WC_FATAL_ERR, "RX_MISBEHAVING_CLIENT" },
		{ 0x109, IBV_WC_LOC_QP_OP_ERR, "RX_MALFORMED_WQE" },
		{ 0x10a, IBV_WC_FATAL_ERR, "RX_CLIENT_ID" },
		{ 0x10b, IBV_WC_LOC_ACCESS_ERR, "RX_GFID" },
		{ 0x10c, IBV_WC_FATAL_ERR, "RX_PCIE" },
		{ 0x10f, IBV_WC_LOC_LEN_ERR, "RX_READRESP_LEN_MISMATCH" },
		{ 0x111, IBV_WC_FATAL_ERR, "RX_NO_AVAIL_WQE" },
		{ 0x143, IBV_WC_LOC_PROT_ERR, "RX_ATB_SGE_MISSCONFIG" },
		{ 0x145, IBV_WC_FATAL_ERR, "RX_ATB_WQE_MISCONFIG" },
		{ 0x161, IBV_WC_REM_OP_ERR, "RX_INVALID_REQ_NAK" },
		{ 0x162, IBV_WC_REM_ACCESS_ERR, "RX_REMOTE_ACCESS_NAK" },
		{ 0x163, IBV_WC_REM_OP_ERR, "RX_REMOTE_OP_ERR_NAK" },
		{ 0x164, IBV_WC_RNR_RETRY_EXC_ERR, "RX_RNR_NAK" },
		{ 0x183, IBV_WC_LOC_ACCESS_ERR, "RX_ATB_SGE_ADDR_RIGHT" },
		{ 0x185, IBV_WC_FATAL_ERR, "RX_ATB_WQE_ADDR_RIGHT" },
		{ 0x1c3, IBV_WC_LOC_PROT_ERR, "RX_ATB_SGE_ADDR_RANGE" },
		{ 0x1c5, IBV_WC_FATAL_ERR, "RX_ATB_WQE_ADDR_RANGE" },
		{ 0x1c6, IBV_WC_RETRY_EXC_ERR, "TX_RETRY_LIMIT_EXCEEDED" },
		{ 0x1c7, IBV_WC_WR_FLUSH_ERR, "RX_NOT_EMPTY_ON_DISABLE" },
		{ 0x201, IBV_WC_LOC_QP_OP_ERR, "TX_GDMA_CORRUPTED_WQE" },
		{ 0x202, IBV_WC_LOC_PROT_ERR, "TX_ATB_WQE_ACCESS_VIOLATION" },
		{ 0x203, IBV_WC_LOC_PROT_ERR, "TX_ATB_WQE_ADDR_RANGE" },
		{ 0x204, IBV_WC_LOC_PROT_ERR, "TX_ATB_WQE_CONFIG_ERR" },
		{ 0x205, IBV_WC_LOC_QP_OP_ERR, "TX_PCIE_WQE" },
		{ 0x206, IBV_WC_LOC_PROT_ERR, "TX_ATB_MSG_ACCESS_VIOLATION" },
		{ 0x207, IBV_WC_LOC_PROT_ERR, "TX_ATB_MSG_ADDR_RANGE" },
		{ 0x208, IBV_WC_LOC_PROT_ERR, "TX_ATB_MSG_CONFIG_ERR" },
		{ 0x209, IBV_WC_LOC_QP_OP_ERR, "TX_PCIE_MSG" },
		{ 0x20a, IBV_WC_LOC_QP_OP_ERR, "TX_GDMA_INVALID_STATE" },
		{ 0x20b, IBV_WC_LOC_QP_OP_ERR, "TX_MISBEHAVING_CLIENT" },
		{ 0x210, IBV_WC_LOC_QP_OP_ERR, "TX_RDMA_MALFORMED_WQE_SIZE" },
		{ 0x211, IBV_WC_LOC_QP_OP_ERR, "TX_RDMA_MALFORMED_WQE_FIELD" },
		{ 0x212, IBV_WC_FATAL_ERR, "TX_RDMA_INVALID_STATE" },
		{ 0x213, IBV_WC_FATAL_ERR, "TX_RDMA_INVALID_NPT" },
		{ 0x214, IBV_WC_FATAL_ERR, "TX_RDMA_INVALID_SGID" },
		{ 0x215, IBV_WC_LOC_QP_OP_ERR, "TX_RDMA_WQE_UNSUPPORTED" },
		{ 0x216, IBV_WC_LOC_QP_OP_ERR, "TX_RDMA_WQE_LEN_ERR" },
		{ 0x217, IBV_WC_LOC_QP_OP_ERR, "TX_RDMA_MTU_ERR" },
		{ 0x218, IBV_WC_FATAL_ERR, "TX_RDMA_VFID_MISMATCH" },
		{ 0x220, IBV_WC_LOC_PROT_ERR, "TX_RDMA_ATB_CMD_MISS" },
		{ 0x221, IBV_WC_LOC_PROT_ERR, "TX_RDMA_ATB_CMD_IDX_ERROR" },
		{ 0x222, IBV_WC_LOC_PROT_ERR,
		  "TX_RDMA_ATB_CMD_TAG_MISMATCH_ERROR" },
		{ 0x223, IBV_WC_LOC_PROT_ERR,
		  "TX_RDMA_ATB_CMD_PDID_MISMATCH_ERROR" },
		{ 0x224, IBV_WC_LOC_PROT_ERR, "TX_RDMA_ATB_CMD_AR_ERROR" },
		{ 0x225, IBV_WC_LOC_PROT_ERR, "TX_RDMA_ATB_CMD_PT_OVF" },
		{ 0x226, IBV_WC_LOC_PROT_ERR,
		  "TX_RDMA_ATB_CMD_PT_LENGTH_MISMATCH" },
		{ 0x227, IBV_WC_LOC_PROT_ERR, "TX_RDMA_ATB_CMD_ILLEGAL_CMD" },
		{ 0x3ff, IBV_WC_GENERAL_ERR, "HW_MAX" },
		{ 0xfff, IBV_WC_WR_FLUSH_ERR, "SW_FLUSHED" },
	};
	static const uint32_t unknown[] = { 1, 0x100, 0x1c8, 0x200, 0x228,
					    0x3fe, 0x400, 0xffe, 0x1000 };
	unsigned int named = 0;
	uint32_t c;
	size_t i;

	CHECK(ARRAY_SIZE(table) == 56, "rdma-core v64 defines 56 codes");
	for (i = 0; i < ARRAY_SIZE(table); i++) {
		const char *n = mana_vendor_err_name(table[i].code);

		CHECK(n && !strcmp(n, table[i].name), "name of %#x: %s, want %s",
		      table[i].code, n ? n : "(null)", table[i].name);
		CHECK(mana_vendor_err_to_wc_status(table[i].code) ==
		      table[i].status, "%s maps to %d, want %d", table[i].name,
		      (int)mana_vendor_err_to_wc_status(table[i].code),
		      (int)table[i].status);
	}
	for (i = 0; i < ARRAY_SIZE(unknown); i++) {
		CHECK(!mana_vendor_err_name(unknown[i]), "%#x named", unknown[i]);
		CHECK(mana_vendor_err_to_wc_status(unknown[i]) ==
		      IBV_WC_GENERAL_ERR, "%#x not a general error", unknown[i]);
	}
	/* the header names nothing the table above does not */
	for (c = 0; c <= 0x1000; c++)
		named += mana_vendor_err_name(c) != NULL;
	CHECK(named == ARRAY_SIZE(table), "%u named codes", named);
	CHECK(MANA_VERR_TX_RETRY_LIMIT_EXCEEDED == 0x1c6 &&
	      MANA_VERR_RX_RNR_NAK == 0x164 &&
	      MANA_VERR_TX_GDMA_CORRUPTED_WQE == 0x201 &&
	      MANA_VERR_SW_FLUSHED == 0xfff, "enum values");
}

/* ------------------------------------------------------------------------ */
/*
 * Every bit of these layouts is a field or must be zero, so a decoder that
 * accepts bytes must encode them back unchanged.  Pseudo-random sparse
 * inputs (fixed seed) with a valid type byte; each family must see both
 * accepted and rejected inputs, or the loop proved nothing.
 */
static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1664525U + 1013904223U;
	return *s >> 8;
}

static void sparse_fill(uint32_t *seed, uint8_t *b, size_t n)
{
	size_t i;

	memset(b, 0, n);
	for (i = 0; i < n; i++)
		if (lcg(seed) % 4 == 0)
			b[i] = (uint8_t)lcg(seed);
}

static void test_round_trips(void)
{
	static const uint8_t cqe_types[] = { 3, 4, 5, 6, 7, 34 };
	unsigned int ok[3] = { 0 }, rej[3] = { 0 }, bad[3] = { 0 }, i;
	uint32_t seed = 12345;

	for (i = 0; i < 30000; i++) {
		uint8_t in[GDMA_CQE_DATA_SIZE], out[GDMA_CQE_DATA_SIZE];
		struct mana_rdma_send_oob so;
		struct mana_rdma_recv_oob ro;
		struct mana_rdma_cqe c;
		uint32_t size;

		sparse_fill(&seed, in, sizeof(in));
		/* only bytes 0-19 may be nonzero in an RC CQE: mostly keep it so */
		if (lcg(&seed) % 8)
			memset(in + 20, 0, sizeof(in) - 20);
		in[0] = cqe_types[lcg(&seed) % sizeof(cqe_types)];
		if (!mana_rdma_cqe_decode(in, &c)) {
			ok[0]++;
			if (mana_rdma_cqe_encode(&c, out) ||
			    memcmp(in, out, sizeof(in)))
				bad[0]++;
		} else {
			rej[0]++;
		}

		sparse_fill(&seed, in, GDMA_OOB_XLARGE);
		in[0] = (uint8_t)((in[0] & 0xE0) | (2 + lcg(&seed) % 6));
		size = lcg(&seed) % 2 ? GDMA_OOB_XLARGE : GDMA_OOB_LARGE;
		if (!mana_rdma_send_oob_decode(in, size, &so)) {
			ok[1]++;
			if (mana_rdma_send_oob_encode(&so, out) ||
			    memcmp(in, out, size))
				bad[1]++;
		} else {
			rej[1]++;
		}

		sparse_fill(&seed, in, 8);
		if (!mana_rdma_recv_oob_decode(in, &ro)) {
			ok[2]++;
			if (mana_rdma_recv_oob_encode(&ro, out) ||
			    memcmp(in, out, 8))
				bad[2]++;
		} else {
			rej[2]++;
		}
	}
	for (i = 0; i < 3; i++)
		CHECK(ok[i] > 100 && rej[i] > 100 && !bad[i],
		      "family %u: %u accepted (%u changed by a round trip), "
		      "%u rejected", i, ok[i], bad[i], rej[i]);
}

int main(void)
{
	test_qids();
	test_psn();
	test_doorbells();
	test_send_oob_vectors();
	test_send_oob_bad();
	test_wqes();
	test_send_headers();
	test_write_imm_wrap();
	test_recv_oob();
	test_cqe_vectors();
	test_full_cqe();
	test_cqe_bad();
	test_vendor_errors();
	test_round_trips();
	return check_done();
}
