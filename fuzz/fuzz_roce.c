// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Frames from the wire into the RNIC: emu_rc_rx() (the RoCEv2 decoder,
 * then the RC responder or requester) with a real QP in RTS, MRs of its
 * PD, receive WQEs posted and send WQEs fetched (a WRITE, a READ with its
 * RREQ WQE, a SEND), a device round after every frame (timers, ACKs,
 * retransmissions).  Every buffer lives in the user arena, so a byte the
 * engine writes anywhere else is an ASan report.
 *
 * Input: records of [kind][...].  kind & 1 == 0: a raw frame, [u16 len]
 * [bytes], as the wire would hand it over (its ICRC is almost never
 * right: the decoder's rejections).  kind & 1: a packet described field
 * by field and encoded here with a valid ICRC, its PSN relative to the
 * responder's expected PSN or the requester's window, its rkey one of
 * the MRs' or any, so that the engine itself is reached.  kind & 2 aims
 * the packet at a second QP, a UC one (its opcodes 0x20..0x2b, no ACKs,
 * PSN gaps drop the message) with its own receive and send WQEs.  The QPs
 * are made again for every input: a crash reproduces from its input alone.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "emulator/core/emu.h"
#include "emulator/core/gid.h"
#include "emulator/device/device.h"
#include "emulator/device/rc.h"
#include "emulator/device/rc_dev.h"
#include "emulator/wire/roce.h"
#include "providers/mana/gdma.h"
#include "fuzz_check.h"
#include "fuzz_emu.h"

#define MTU_ENUM	IBV_MTU_1024
#define MTU		1024u
#define MR_A_OFF	0x00000u	/* 256 KiB, remote read and write */
#define MR_A_LEN	0x40000u
#define MR_B_OFF	0x40000u	/* 64 KiB, remote read only */
#define MR_B_LEN	0x10000u
#define CQ_OFF		0x60000u	/* two CQs of 64 entries */
#define CQ_ENTRIES	64u
#define RING_OFF	0x62000u	/* four 16 KiB rings */
#define RING_SIZE	0x4000u
#define UC_RING_OFF	0x72000u	/* the UC QP's four rings */
#define IOVA_A		0x100000000ull
#define IOVA_B		0x200000000ull
#define KEY_A		0x00123456u
#define KEY_B		0x00abcd78u
#define SQ_PSN		0x00fff0u	/* near no wrap; RQ_PSN near one */
#define RQ_PSN		0xfffff8u

/* The backend drops what the engine sends: no second process, no loop. */
static void __attribute__((constructor(100))) fuzz_roce_env(void)
{
	setenv("MANA_FUZZ_EMU_OPTIONS", "--backend=null --ip=10.7.0.1/24", 0);
}

static struct emu_hwq scq, rcq;
static struct emu_dev_mr mr_a, mr_b;
static char pd_tag;			/* the device compares PD pointers only */
#define PD ((struct emu_pd *)&pd_tag)
static uint8_t gid0[16];

static void setup_once(void)
{
	static bool done;
	uint8_t *arena;

	if (done)
		return;
	fuzz_emu_setup();
	arena = fuzz_arena();
	mr_a = (struct emu_dev_mr){
		.start = (uintptr_t)arena + MR_A_OFF, .iova = IOVA_A,
		.length = MR_A_LEN, .lkey = KEY_A, .pd = PD, .writable = true,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ,
	};
	mr_b = (struct emu_dev_mr){
		.start = (uintptr_t)arena + MR_B_OFF, .iova = IOVA_B,
		.length = MR_B_LEN, .lkey = KEY_B, .pd = PD,
		.access = IBV_ACCESS_REMOTE_READ,
	};
	pthread_mutex_lock(&emu.lock);
	emu_dev_mr_add(&mr_a);
	emu_dev_mr_add(&mr_b);
	FUZZ_CHECK(!emu_gid_get(&emu.opts, 1, 0, gid0));
	pthread_mutex_unlock(&emu.lock);
	done = true;
}

static void cq_init(struct emu_hwq *cq, uint32_t off)
{
	memset(cq, 0, sizeof(*cq));
	cq->type = EMU_HWQ_CQ;
	cq->buf = FUZZ_ARENA_BASE + off;
	cq->count = CQ_ENTRIES;
	cq->size = CQ_ENTRIES * GDMA_CQE_SIZE;
	cq->prod = CQ_ENTRIES;
	memset(fuzz_arena() + off, 0, cq->size);
}

static bool making_uc;

static uint64_t ring_va(enum emu_rc_queue q)
{
	return FUZZ_ARENA_BASE + (making_uc ? UC_RING_OFF : RING_OFF) +
	       (uint64_t)q * RING_SIZE;
}

/* Post @w on ring @q at byte @pos; the doorbell makes the device see it. */
static uint32_t post(uint32_t id, enum emu_rc_queue q, uint32_t pos,
		     enum gdma_queue_type qt, const struct gdma_wqe *w,
		     unsigned int db_kind)
{
	struct gdma_doorbell db = { .kind = db_kind, .id = id };
	uint32_t bu;
	uint64_t v;

	FUZZ_CHECK(!gdma_wqe_post((void *)(uintptr_t)ring_va(q), RING_SIZE,
				  pos / GDMA_WQE_BU_SIZE, qt, w, &bu));
	pos += bu * GDMA_WQE_BU_SIZE;
	db.tail = pos;
	FUZZ_CHECK(!gdma_doorbell_encode(&db, &v));
	FUZZ_CHECK(emu_rc_doorbell(NULL, db_kind, v));
	return pos;
}

static void send_wqe(uint32_t *pos, uint32_t id, uint8_t type, uint32_t psn,
		     uint64_t laddr, uint32_t len, uint64_t raddr)
{
	struct mana_rdma_send_oob o = {
		.wqe_type = type, .signaled = true, .psn = psn,
	};
	struct gdma_wqe w = { 0 };

	if (type != MANA_WQE_RC_SEND) {
		o.remote_addr = raddr;
		o.rkey = 0x77;
		o.dma_len = len;
	}
	w.hdr.oob_size = (uint8_t)mana_rdma_send_oob_size(type);
	w.hdr.client_data_unit = MTU;
	w.hdr.num_sge = 1;
	FUZZ_CHECK(!mana_rdma_send_oob_encode(&o, w.oob));
	w.sge[0] = (struct gdma_sge){ .addr = laddr, .mkey = KEY_A,
				      .size = type == MANA_WQE_READ ? 0 : len };
	*pos = post(id, EMU_RC_SQ_REQUESTER, *pos, GDMA_SQ, &w, GDMA_DB_SQ);
}

static void recv_wqe(uint32_t *pos, uint32_t id, enum emu_rc_queue q,
		     uint32_t psn, uint64_t addr, uint32_t len)
{
	struct mana_rdma_recv_oob o = { .psn_start = psn };
	struct gdma_wqe w = { 0 };

	w.hdr.oob_size = GDMA_OOB_SMALL;
	w.hdr.num_sge = 1;
	FUZZ_CHECK(!mana_rdma_recv_oob_encode(&o, w.oob));
	w.sge[0] = (struct gdma_sge){ .addr = addr, .mkey = KEY_A, .size = len };
	*pos = post(id, q, *pos, GDMA_RQ, &w, GDMA_DB_RQ);
}

/*
 * A QP in RTS towards itself (its own link-local GID: no neighbour asked);
 * @uc: a UC QP (its rings elsewhere, the CQs shared, no READ).
 */
static struct emu_rc_qp_hw *qp_make(uint32_t ids[EMU_RC_QUEUES], bool uc)
{
	struct emu_rc_create_req req = {
		.pd = PD, .send_cq = &scq, .recv_cq = &rcq, .port = 1,
		.max_send_wr = 16, .max_recv_wr = 16,
		.max_send_sge = 1, .max_recv_sge = 1, .uc = uc,
	};
	struct emu_rc_attr a = { 0 };
	struct emu_rc_qp_hw *qp;
	uint32_t sq = 0, rq = 0, rr = 0;
	unsigned int i;

	making_uc = uc;
	for (i = 0; i < EMU_RC_QUEUES; i++) {
		req.buf[i] = ring_va(i);
		req.size[i] = uc && i == EMU_RC_RQ_REQUESTER ? 0 : RING_SIZE;
	}
	if (!uc) {
		cq_init(&scq, CQ_OFF);
		cq_init(&rcq, CQ_OFF + CQ_ENTRIES * GDMA_CQE_SIZE);
	}
	FUZZ_CHECK(!emu_rc_qp_hw_create(&req, &qp, ids));
	a.state = EMU_RC_INIT;
	a.access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	/* each transition with what the IB state machine requires of it */
	FUZZ_CHECK(!emu_rc_qp_hw_modify(qp, &a, IBV_QP_STATE |
					IBV_QP_ACCESS_FLAGS |
					IBV_QP_PKEY_INDEX | IBV_QP_PORT));
	a.state = EMU_RC_RTR;
	a.path_mtu = MTU_ENUM;
	a.dest_qp_num = ids[EMU_RC_RQ_RESPONDER];
	a.rq_psn = RQ_PSN;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	memcpy(a.dgid, gid0, 16);
	a.hop_limit = 64;
	FUZZ_CHECK(!emu_rc_qp_hw_modify(qp, &a, IBV_QP_STATE | IBV_QP_AV |
					IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					IBV_QP_RQ_PSN |
					(uc ? 0 : IBV_QP_MAX_DEST_RD_ATOMIC |
						  IBV_QP_MIN_RNR_TIMER)));
	a.state = EMU_RC_RTS;
	a.sq_psn = SQ_PSN;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	FUZZ_CHECK(!emu_rc_qp_hw_modify(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
					(uc ? 0 : IBV_QP_TIMEOUT |
						  IBV_QP_RETRY_CNT |
						  IBV_QP_RNR_RETRY |
						  IBV_QP_MAX_QP_RD_ATOMIC)));
	/* responder: two receive WQEs; requester: WRITE 8 KiB, READ, SEND */
	recv_wqe(&rq, ids[EMU_RC_RQ_RESPONDER], EMU_RC_RQ_RESPONDER, 0,
		 IOVA_A + 0x10000, 0x2000);
	recv_wqe(&rq, ids[EMU_RC_RQ_RESPONDER], EMU_RC_RQ_RESPONDER, 0,
		 IOVA_A + 0x12000, 64);
	send_wqe(&sq, ids[EMU_RC_SQ_REQUESTER], MANA_WQE_WRITE, SQ_PSN,
		 IOVA_A, 0x2000, 0x5000);
	if (!uc) {
		recv_wqe(&rr, ids[EMU_RC_RQ_REQUESTER], EMU_RC_RQ_REQUESTER,
			 SQ_PSN + 8, IOVA_A + 0x20000, 0x1000);
		send_wqe(&sq, ids[EMU_RC_SQ_REQUESTER], MANA_WQE_READ,
			 SQ_PSN + 8, IOVA_A + 0x20000, 0x1000, 0x9000);
	}
	send_wqe(&sq, ids[EMU_RC_SQ_REQUESTER], MANA_WQE_RC_SEND,
		 uc ? SQ_PSN + 8 : SQ_PSN + 12, IOVA_A + 0x30000, 100, 0);
	making_uc = false;
	emu_rc_work();
	return qp;
}

/* A packet field by field, with a valid ICRC: the engine's input. */
static size_t craft(struct fuzz_in *in, uint32_t qpn, bool uc, uint8_t *f,
		    size_t cap)
{
	static uint8_t payload[ROCE_MAX_MTU];
	uint8_t sel = fuzz_u8(in), op = fuzz_u8(in);
	int32_t delta = (int8_t)fuzz_u8(in);
	struct roce_pkt p = {
		.traffic_class = 0, .hop_limit = 64, .pkey = ROCE_PKEY_DEFAULT,
		.udp_sport = 0xc000,
	};
	uint32_t plen = fuzz_u16(in);
	size_t len;

	memcpy(p.sgid, gid0, 16);
	memcpy(p.dgid, gid0, 16);
	emu_dev_port_mac(1, p.dmac);
	memcpy(p.smac, p.dmac, 6);
	/* the QP's transport's opcodes, now and then any */
	p.opcode = sel & 0x80 ? op : uc ? ROCE_UC + op % 0x0c : op % 0x12;
	p.ack_req = sel & 1;
	p.se = sel & 2;
	p.dqpn = sel & 4 ? fuzz_u32(in) & ROCE_QPN_MASK : qpn;
	/* PSN: around the responder's or the requester's, or anywhere */
	switch ((sel >> 3) & 3) {
	case 0:
		p.psn = roce_psn_add(RQ_PSN, (uint32_t)delta);
		break;
	case 1:
		p.psn = roce_psn_add(SQ_PSN, (uint32_t)delta);
		break;
	case 2:
		p.psn = roce_psn_add(RQ_PSN, (uint32_t)delta << 16);
		break;
	default:
		p.psn = fuzz_u32(in) & ROCE_PSN_MASK;
		break;
	}
	switch ((sel >> 5) & 3) {
	case 0:
		p.rkey = KEY_A;
		p.va = IOVA_A + (fuzz_u32(in) % (MR_A_LEN + 0x1000));
		break;
	case 1:
		p.rkey = KEY_B;
		p.va = IOVA_B + (fuzz_u32(in) % (MR_B_LEN + 0x1000));
		break;
	default:
		p.rkey = fuzz_u32(in);
		p.va = fuzz_u64(in);
		break;
	}
	p.dma_len = fuzz_u8(in) & 1 ? fuzz_u32(in) : fuzz_u16(in);
	p.syndrome = fuzz_u8(in);
	p.msn = fuzz_u32(in) & ROCE_PSN_MASK;
	p.imm = fuzz_u32(in);
	p.ieth = fuzz_u32(in);
	/* first/middle want exactly the MTU: make that likely */
	plen = plen & 0x8000 ? MTU : plen % (ROCE_MAX_MTU + 1);
	memset(payload, (int)plen, plen);
	fuzz_take(in, payload, plen < 16 ? plen : 16);
	p.payload = payload;
	p.payload_len = plen;
	if (roce_encode(&p, f, cap, &len))
		return 0;
	return len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t f[ROCE_MAX_FRAME + 64];
	struct fuzz_in in = { data, size };
	uint32_t ids[EMU_RC_QUEUES], uc_ids[EMU_RC_QUEUES];
	struct emu_rc_qp_hw *qp, *uc;
	unsigned int n = 0;

	setup_once();
	pthread_mutex_lock(&emu.lock);
	qp = qp_make(ids, false);
	uc = qp_make(uc_ids, true);
	while (in.left && n++ < 64) {
		uint8_t kind = fuzz_u8(&in);
		size_t len;

		if (kind & 1) {
			len = craft(&in, kind & 2 ? uc_ids[EMU_RC_RQ_RESPONDER] :
				    ids[EMU_RC_RQ_RESPONDER], kind & 2, f,
				    sizeof(f));
		} else {
			len = fuzz_u16(&in) % sizeof(f);
			len = fuzz_take(&in, f, len);
		}
		if (len)
			emu_rc_rx(1, f, len);
		emu_rc_work();
		(void)emu_rc_qp_hw_state(qp);
		(void)emu_rc_qp_hw_state(uc);
	}
	emu_rc_qp_hw_destroy(uc);
	emu_rc_qp_hw_destroy(qp);
	pthread_mutex_unlock(&emu.lock);
	return 0;
}
