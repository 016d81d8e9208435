// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mana-vfio's RC transport (vfio/rc.c) without QEMU: two devices whose
 * wires are joined here, rings and MRs in this process's memory, WQEs
 * built as our provider builds them (providers/mana/gdma.h).  Checks:
 * a multi-packet SEND lands whole with its receive CQE and the arm's
 * ARMED_CMPL; RDMA WRITE lands in the MR; RDMA READ's responses land in
 * its RREQ WQE's buffer (and an MR without remote read NAKs); a bad rkey and a range past the
 * MR are NAKed (remote access), the responder's QP goes to ERR with its
 * fatal event, the requester gets the error CQE and not a byte lands; a
 * lost packet is recovered by the sequence NAK and go-back-N; a SEND
 * without a receive WQE is RNR-NAKed and delivered after the RNR wait.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "providers/mana/gdma.h"
#include "vfio/rc.h"
#include "check.h"

#define MTU		1024
#define RING		4096
#define NCQE		64
#define PD		7

struct ring {
	uint8_t buf[RING];
	uint32_t head;		/* bytes, free-running */
};

struct cq {
	uint8_t data[NCQE][GDMA_CQE_DATA_SIZE];
	uint32_t wq[NCQE];
	unsigned int n;
	unsigned int wakes;	/* a QP of it entered ERR */
};

struct mr {
	uint32_t key, pd, access;
	uint8_t *mem;
	uint64_t va, len;
};

struct side {
	struct vrc_dev *dev;
	struct vrc_qp *qp;
	struct side *peer;
	struct ring sq, rq, rrq;
	struct cq cq;
	struct mr mr[2];
	uint8_t mac[6], gid[16];
	unsigned int fatal;
};

static struct side A, B;
/* the wire: frames wait here and are delivered after the call that sent them */
static struct { uint8_t f[8192]; size_t len; struct side *to; } wire[512];
static unsigned int nwire, sent_count, drop_at;

static int ring_read(void *ctx, void *ring, uint32_t pos, void *buf, uint32_t len)
{
	struct ring *r = ring;
	uint32_t i;

	(void)ctx;
	for (i = 0; i < len; i++)
		((uint8_t *)buf)[i] = r->buf[(pos + i) % RING];
	return 0;
}

static int mem(void *ctx, uint32_t pd, uint32_t key, uint64_t addr,
	       uint8_t *buf, uint32_t len, unsigned int access, bool to_mem)
{
	struct side *s = ctx;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		struct mr *m = &s->mr[i];
		uint32_t need = 0;

		if (access & VRC_LOCAL_WRITE)
			need |= 2;
		if (access & VRC_REMOTE_READ)
			need |= 4;
		if (access & VRC_REMOTE_WRITE)
			need |= 8;
		if (!m->mem || m->key != key || m->pd != pd ||
		    (m->access & need) != need || addr < m->va ||
		    addr + len > m->va + m->len)
			continue;
		if (buf && to_mem)
			memcpy(m->mem + (addr - m->va), buf, len);
		else if (buf)
			memcpy(buf, m->mem + (addr - m->va), len);
		return 0;
	}
	return -13;
}

static void cqe(void *ctx, void *cq_, const uint8_t *data, uint32_t wq_num,
		bool is_sq)
{
	struct cq *cq = cq_;

	(void)ctx;
	(void)is_sq;
	if (cq->n < NCQE) {
		memcpy(cq->data[cq->n], data, GDMA_CQE_DATA_SIZE);
		cq->wq[cq->n++] = wq_num;
	}
}

static void fatal(void *ctx, uint32_t qpn)
{
	(void)qpn;
	((struct side *)ctx)->fatal++;
}

static void wake(void *ctx, void *cq)
{
	(void)ctx;
	((struct cq *)cq)->wakes++;
}

static void xmit(void *ctx, const uint8_t *f, size_t len)
{
	struct side *s = ctx;

	if (++sent_count == drop_at)
		return;		/* lost on the wire */
	if (nwire < 512 && len <= sizeof(wire[0].f)) {
		memcpy(wire[nwire].f, f, len);
		wire[nwire].len = len;
		wire[nwire++].to = s->peer;
	}
}

/* Deliver until the wire is quiet. */
static void run_wire(void)
{
	static uint8_t f[8192];
	unsigned int i;

	while (nwire) {
		struct side *to = wire[0].to;
		size_t len = wire[0].len;

		memcpy(f, wire[0].f, len);
		for (i = 1; i < nwire; i++)
			wire[i - 1] = wire[i];
		nwire--;
		CHECK(vrc_rx(to->dev, f, len), "a frame for a QP is the RNIC's");
	}
}

static void side_init(struct side *s, uint8_t last, uint32_t qpn)
{
	struct vrc_ops ops = { .ring_read = ring_read, .mem = mem, .cqe = cqe,
			       .fatal = fatal, .wake = wake, .xmit = xmit, .ctx = s };
	struct vrc_qp_desc d = { .pd = PD, .send_cq = &s->cq, .recv_cq = &s->cq };
	uint8_t mac[6] = { 0x00, 0x0d, 0x3a, 0, 0, last };
	uint8_t gid[16] = { [10] = 0xff, [11] = 0xff, 10, 77, 0, last };

	memset(s, 0, sizeof(*s));
	memcpy(s->mac, mac, 6);
	memcpy(s->gid, gid, 16);
	s->dev = vrc_dev_new(&ops, mac);
	d.sq = (struct vrc_ring_desc){ &s->sq, RING, 0x400000 + (qpn - 0x800000) };
	d.rq = (struct vrc_ring_desc){ &s->rq, RING, qpn };
	d.rrq = (struct vrc_ring_desc){ &s->rrq, RING, qpn + 1 };
	CHECK(s->dev && !vrc_qp_create(s->dev, &d, &s->qp), "QP created");
}

static void connect(struct side *s, uint32_t psn_out, uint32_t psn_in)
{
	struct vrc_attr a = { .mask = 1 };
	struct side *p = s->peer;

	a.state = 1;	/* INIT */
	CHECK(!vrc_qp_modify(s->dev, s->qp, &a), "to INIT");
	a = (struct vrc_attr){ .mask = 1 | 128 | 256 | 4096 | 32768 | 1048576 | 1024 | 2048,
			       .state = 2, .path_mtu = 3, .rq_psn = psn_in,
			       .min_rnr_timer = 1, .retry_cnt = 7,
			       .rnr_retry = 7, .sport = 0xc123, .hop_limit = 64 };
	a.dest_qpn = p == &A ? 0x800004 : 0x800008;
	memcpy(a.smac, s->mac, 6);
	memcpy(a.dmac, p->mac, 6);
	memcpy(a.sgid, s->gid, 16);
	memcpy(a.dgid, p->gid, 16);
	CHECK(!vrc_qp_modify(s->dev, s->qp, &a), "to RTR");
	a = (struct vrc_attr){ .mask = 1 | 65536, .state = 3, .sq_psn = psn_out };
	CHECK(!vrc_qp_modify(s->dev, s->qp, &a), "to RTS");
}

/* A send WQE as rdma-core v64 posts it; the doorbell rung. */
static void post_send(struct side *s, uint8_t type, uint32_t psn, uint64_t laddr,
		      uint32_t len, uint64_t raddr, uint32_t rkey, uint32_t imm)
{
	struct mana_rdma_send_oob o = { .wqe_type = type, .signaled = true,
		.psn = psn, .imm = imm, .remote_addr = raddr, .rkey = rkey,
		.dma_len = type == MANA_WQE_READ ? len : 0 };
	struct gdma_wqe w = { 0 };
	uint32_t bu;

	CHECK(!mana_rc_send_wqe_header(type, 1, MTU, &w.hdr), "send header");
	CHECK(!mana_rdma_send_oob_encode(&o, w.oob), "send OOB");
	w.sge[0] = (struct gdma_sge){ laddr, 0x100, len };
	CHECK(!gdma_wqe_post(s->sq.buf, RING, s->sq.head / GDMA_WQE_BU_SIZE,
			     GDMA_SQ, &w, &bu), "send WQE posted");
	s->sq.head += bu * GDMA_WQE_BU_SIZE;
	vrc_sq_doorbell(s->dev, s->qp, s->sq.head);
	run_wire();
}

static void post_recv(struct side *s, uint64_t addr, uint32_t len)
{
	struct gdma_wqe w = { 0 };
	uint32_t bu;

	w.hdr.num_sge = 1;
	w.hdr.oob_size = GDMA_OOB_SMALL;
	w.sge[0] = (struct gdma_sge){ addr, 0x100, len };
	CHECK(!gdma_wqe_post(s->rq.buf, RING, s->rq.head / GDMA_WQE_BU_SIZE,
			     GDMA_RQ, &w, &bu), "receive WQE posted");
	s->rq.head += bu * GDMA_WQE_BU_SIZE;
	vrc_rq_doorbell(s->dev, s->qp, false, s->rq.head);
}

/* A READ's RREQ WQE on the requester RQ: its first PSN and local buffer. */
static void post_rreq(struct side *s, uint32_t psn, uint64_t addr, uint32_t len)
{
	struct mana_rdma_recv_oob ro = { .psn_start = psn };
	struct gdma_wqe w = { 0 };
	uint32_t bu;

	w.hdr.num_sge = 1;
	w.hdr.oob_size = GDMA_OOB_SMALL;
	CHECK(!mana_rdma_recv_oob_encode(&ro, w.oob), "RREQ OOB");
	w.sge[0] = (struct gdma_sge){ addr, 0x100, len };
	CHECK(!gdma_wqe_post(s->rrq.buf, RING, s->rrq.head / GDMA_WQE_BU_SIZE,
			     GDMA_RQ, &w, &bu), "RREQ WQE posted");
	s->rrq.head += bu * GDMA_WQE_BU_SIZE;
	vrc_rq_doorbell(s->dev, s->qp, true, s->rrq.head);
}

static struct mana_rdma_cqe last_cqe(struct side *s)
{
	struct mana_rdma_cqe c = { 0 };

	CHECK(s->cq.n > 0, "a CQE");
	if (s->cq.n)
		CHECK(!mana_rdma_cqe_decode(s->cq.data[s->cq.n - 1], &c),
		      "the CQE decodes");
	return c;
}

static uint8_t a_buf[16384], b_buf[16384], b_win[8192];

static void setup(void)
{
	unsigned int i;

	side_init(&A, 1, 0x800004);
	side_init(&B, 2, 0x800008);
	A.peer = &B;
	B.peer = &A;
	for (i = 0; i < sizeof(a_buf); i++)
		a_buf[i] = (uint8_t)(i * 7 + 3);
	memset(b_buf, 0, sizeof(b_buf));
	memset(b_win, 0xee, sizeof(b_win));
	/* key 0x100 local to each; B's 0x200 a remote-write window */
	A.mr[0] = (struct mr){ 0x100, PD, 3, a_buf, 0x10000, sizeof(a_buf) };
	B.mr[0] = (struct mr){ 0x100, PD, 3, b_buf, 0x20000, sizeof(b_buf) };
	B.mr[1] = (struct mr){ 0x200, PD, 3 | 8, b_win, 0x40000, sizeof(b_win) };
	connect(&A, 100, 500);
	connect(&B, 500, 100);
	nwire = sent_count = drop_at = 0;
}

static void teardown(void)
{
	vrc_dev_free(A.dev);
	vrc_dev_free(B.dev);
}

static void test_send_write(void)
{
	struct mana_rdma_cqe c;
	struct vrc_stats st;

	setup();
	post_recv(&B, 0x20000, 8192);
	post_send(&A, MANA_WQE_RC_SEND_IMM, 100, 0x10000, 4096, 0, 0, 0x12345678);
	c = last_cqe(&B);
	CHECK(c.type == MANA_RDMA_CQE_RC_SEND_IMM && c.msg_len == 4096 &&
	      c.imm == 0x12345678 && c.rx_wqe_offset == 0,
	      "SEND: the receive CQE (type %u len %u)", c.type, c.msg_len);
	CHECK(!memcmp(a_buf, b_buf, 4096), "SEND: four packets' data in order");
	vrc_arm(A.dev, A.qp, 103);
	c = last_cqe(&A);
	CHECK(c.type == MANA_RDMA_CQE_ARMED_CMPL && c.psn == 103,
	      "the arm at the last PSN: ARMED_CMPL (psn %u)", c.psn);
	/* WRITE into B's remote-write MR */
	post_send(&A, MANA_WQE_WRITE, 104, 0x10000 + 100, 3000, 0x40000 + 8, 0x200, 0);
	CHECK(!memcmp(a_buf + 100, b_win + 8, 3000) && b_win[7] == 0xee &&
	      b_win[3008] == 0xee, "WRITE: lands exactly where asked");
	vrc_arm(A.dev, A.qp, 106);
	c = last_cqe(&A);
	CHECK(c.type == MANA_RDMA_CQE_ARMED_CMPL && c.psn == 106,
	      "WRITE acknowledged (psn %u)", c.psn);
	vrc_get_stats(B.dev, &st);
	CHECK(!st.errors && !st.retransmits && st.rx_packets == 7,
	      "B: 7 packets, no error (%llu)", (unsigned long long)st.rx_packets);
	teardown();
}

static void test_bad_rkey(uint32_t rkey, uint64_t va, const char *what)
{
	static const uint8_t zero[sizeof(b_buf)];
	uint8_t before[sizeof(b_win)];
	struct mana_rdma_cqe c;

	setup();
	memcpy(before, b_win, sizeof(b_win));
	post_send(&A, MANA_WQE_WRITE, 100, 0x10000, 2048, va, rkey, 0);
	CHECK(!memcmp(before, b_win, sizeof(b_win)) && !memcmp(b_buf, zero, sizeof(b_buf)),
	      "%s: nothing landed", what);
	CHECK(B.fatal == 1 && vrc_qp_state(B.qp) == 6 && B.cq.wakes == 1,
	      "%s: the responder's QP to ERR with its fatal event, its CQ woken",
	      what);
	c = last_cqe(&A);
	CHECK(c.type == MANA_RDMA_CQE_ERROR &&
	      c.vendor_error == MANA_VERR_RX_REMOTE_ACCESS_NAK &&
	      vrc_qp_state(A.qp) == 6 && A.cq.wakes == 1,
	      "%s: the requester's error CQE, remote access NAK (%#x)", what,
	      c.vendor_error);
	teardown();
}

static void test_loss(void)
{
	struct mana_rdma_cqe c;
	struct vrc_stats st;

	setup();
	post_recv(&B, 0x20000, 8192);
	drop_at = 2;	/* the SEND's second packet */
	post_send(&A, MANA_WQE_RC_SEND, 100, 0x10000, 4096, 0, 0, 0);
	c = last_cqe(&B);
	CHECK(c.type == MANA_RDMA_CQE_RC_SEND && c.msg_len == 4096 &&
	      !memcmp(a_buf, b_buf, 4096), "a lost packet: the SEND still lands whole");
	vrc_get_stats(A.dev, &st);
	CHECK(st.seq_naks_rx == 1 && st.retransmits == 1,
	      "... after one sequence NAK and one go-back-N");
	teardown();
}

static void test_rnr(void)
{
	struct mana_rdma_cqe c;
	struct vrc_stats st;

	setup();
	post_send(&A, MANA_WQE_RC_SEND, 100, 0x10000, 512, 0, 0, 0);
	vrc_get_stats(B.dev, &st);
	CHECK(st.rnr_naks_tx == 1 && B.cq.n == 0, "no receive WQE: RNR NAK");
	post_recv(&B, 0x20000, 8192);
	/* a clock past the RNR wait (min_rnr_timer 1: 0.01 ms) */
	vrc_tick(A.dev, vrc_now_ns() + 1000000000ull);
	run_wire();
	c = last_cqe(&B);
	CHECK(c.type == MANA_RDMA_CQE_RC_SEND && c.msg_len == 512 &&
	      !memcmp(a_buf, b_buf, 512), "delivered after the RNR wait");
	teardown();
}

static void test_read(bool allowed)
{
	struct mana_rdma_cqe c;
	unsigned int i;

	setup();
	for (i = 0; i < sizeof(b_win); i++)
		b_win[i] = (uint8_t)(i * 13 + 1);
	if (allowed)
		B.mr[1].access |= 4;	/* remote read */
	memset(a_buf + 8192, 0, 4096);
	post_rreq(&A, 100, 0x10000 + 8192, 3000);
	post_send(&A, MANA_WQE_READ, 100, 0x10000 + 8192, 3000, 0x40000 + 8,
		  0x200, 0);
	if (!allowed) {
		c = last_cqe(&A);
		CHECK(c.type == MANA_RDMA_CQE_ERROR &&
		      c.vendor_error == MANA_VERR_RX_REMOTE_ACCESS_NAK &&
		      B.fatal == 1 && a_buf[8192] == 0,
		      "READ of an MR without remote read: NAK, nothing read");
		teardown();
		return;
	}
	CHECK(!memcmp(a_buf + 8192, b_win + 8, 3000) && a_buf[8192 + 3000] == 0,
	      "READ: three responses placed in the RREQ WQE's buffer");
	vrc_arm(A.dev, A.qp, 102);
	c = last_cqe(&A);
	CHECK(c.type == MANA_RDMA_CQE_ARMED_CMPL && c.psn == 102,
	      "READ complete at its last response's PSN (%u)", c.psn);
	teardown();
}

int main(void)
{
	test_send_write();
	test_bad_rkey(0x201, 0x40000, "unknown rkey");
	test_bad_rkey(0x100, 0x20000, "rkey without remote write");
	test_bad_rkey(0x200, 0x40000 + sizeof(b_win) - 1024, "past the MR's end");
	test_read(true);
	test_read(false);
	test_loss();
	test_rnr();
	return check_done();
}
