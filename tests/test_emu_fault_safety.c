// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fault safety of the emulated device (issue 11, acceptance 4): the device
 * reaches application memory directly, so an MR whose pages are unmapped
 * or made read-only after registration must cost an error CQE and a
 * counter, never a crash of the device thread or of the application.
 *   - a send whose SGE points into a page unmapped after registration
 *   - a receive into a page made read-only after registration
 *   - a completion into a CQ ring made read-only (the CQE is lost and
 *     counted on the CQ; last, as the provider never sees it)
 * The first two are followed by good traffic on the same queues.  Real hardware
 * would still reach the pages pinned at registration; the emulator cannot.
 *
 * Usage (under mana-emu): test_emu_fault_safety
 */
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/manadv.h>

#include "emulator/mana_emu.h"

#include "check.h"
#include "verbs_traffic.h"

#define PAGE 4096
#define SIZE 128

static int (*quiesce_fn)(int timeout_ms);
static uint64_t (*faults_fn)(void);

/* Everything rung so far has been handled: no waiting on a clock. */
static void quiesce(void)
{
	CHECK(quiesce_fn(10000) == 0, "device quiesced");
}

static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	quiesce();
	return ibv_poll_cq(cq, 1, wc);
}

static int send_from(struct vt_port *p, void *buf, uint32_t lkey, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)buf, SIZE, lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	return ibv_post_send(p->qp[0], &wr, &bad);
}

static int recv_into(struct vt_port *p, void *buf, uint32_t lkey, uint64_t id)
{
	struct ibv_sge sge = { (uintptr_t)buf, VT_BUF, lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	return ibv_post_wq_recv(p->wq[0], &wr, &bad);
}

/* A good frame both ways: the device and the queues still work. */
static void good_round(struct vt_port *p, uint64_t id)
{
	uint8_t *tx = vt_tx_buf(p, 0, (unsigned int)id);
	uint8_t *rx = vt_rx_buf(p, 0, (unsigned int)id);
	struct ibv_wc wc;

	vt_frame(tx, SIZE, p->sport[0], 0, id);
	memset(rx, 0, SIZE);
	CHECK_ERRNO(recv_into(p, rx, p->mr->lkey, id), 0);
	CHECK_ERRNO(send_from(p, tx, p->mr->lkey, id), 0);
	CHECK(poll_one(p->tx_cq[0], &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
	      wc.wr_id == id, "good send %llu completed", (unsigned long long)id);
	CHECK(poll_one(p->rx_cq[0], &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
	      wc.wr_id == id && wc.byte_len == SIZE,
	      "good frame %llu received", (unsigned long long)id);
	CHECK(!memcmp(rx, tx, SIZE), "frame %llu intact", (unsigned long long)id);
}

/*
 * The RX CQ's ring made read-only: the device's CQE store faults, the CQE
 * is lost and counted as an error of the CQ, and the device goes on (the
 * send still completes on its own CQ).
 */
static void cq_ring_read_only(struct vt_port *p)
{
	int (*init_obj)(struct manadv_obj *, uint64_t);
	int (*qinfo)(uint32_t, uint32_t, struct mana_emu_queue_info *);
	struct mana_emu_queue_info before, after;
	struct manadv_cq dcq;
	struct manadv_obj obj = { .cq = { .in = p->rx_cq[0], .out = &dcq } };
	size_t len;
	uint64_t faults;
	struct ibv_wc wc;

	init_obj = (typeof(init_obj))dlsym(RTLD_DEFAULT, "manadv_init_obj");
	qinfo = (typeof(qinfo))dlsym(RTLD_DEFAULT, MANA_EMU_QUEUE_INFO_SYM);
	if (!init_obj || !qinfo) {
		CHECK(0, "manadv_init_obj and mana_emu_queue_info found");
		return;
	}
	CHECK_ERRNO(init_obj(&obj, MANADV_OBJ_CQ), 0);
	CHECK_ERRNO(qinfo(MANA_EMU_QUEUE_CQ, dcq.cq_id, &before), 0);
	len = ((size_t)dcq.count * 64 + PAGE - 1) & ~(size_t)(PAGE - 1);
	CHECK(((uintptr_t)dcq.buf & (PAGE - 1)) == 0, "CQ ring page aligned");
	CHECK_ERRNO(mprotect(dcq.buf, len, PROT_READ), 0);
	CHECK_ERRNO(recv_into(p, vt_rx_buf(p, 0, 8), p->mr->lkey, 8), 0);
	vt_frame(vt_tx_buf(p, 0, 8), SIZE, p->sport[0], 0, 8);
	faults = faults_fn();
	CHECK_ERRNO(send_from(p, vt_tx_buf(p, 0, 8), p->mr->lkey, 8), 0);
	CHECK(poll_one(p->tx_cq[0], &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
	      wc.wr_id == 8, "the frame was sent");
	CHECK_ERRNO(qinfo(MANA_EMU_QUEUE_CQ, dcq.cq_id, &after), 0);
	CHECK(after.errors == before.errors + 1 && after.frames == before.frames,
	      "CQE into a read-only ring: counted as a CQ error (%llu -> %llu)",
	      (unsigned long long)before.errors,
	      (unsigned long long)after.errors);
	CHECK(faults_fn() == faults + 1, "and one fault counted");
	CHECK_ERRNO(mprotect(dcq.buf, len, PROT_READ | PROT_WRITE), 0);
}

int main(void)
{
	struct vt_opts o = { .queues = 1, .depth = 64 };
	struct ibv_mr *mr;
	struct ibv_wc wc;
	struct vt_port p;
	uint64_t faults;
	uint8_t *mem;

	quiesce_fn = (typeof(quiesce_fn))dlsym(RTLD_DEFAULT, "mana_emu_quiesce");
	faults_fn = (typeof(faults_fn))dlsym(RTLD_DEFAULT, "mana_emu_user_faults");
	if (!quiesce_fn || !faults_fn) {
		fprintf(stderr, "run under mana-emu\n");
		return 1;
	}
	CHECK_ERRNO(vt_setup(&p, &o), 0);
	if (!p.rss)
		goto out;
	/* a second MR of the same PD: three pages we spoil one by one */
	mem = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(mem != MAP_FAILED, "mmap");
	if (mem == MAP_FAILED)
		goto out;
	mr = ibv_reg_mr(p.pd, mem, 3 * PAGE, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL, "reg_mr");
	if (!mr)
		goto out_unmap;
	good_round(&p, 1);

	/* send from a page unmapped after registration */
	vt_frame(mem, SIZE, p.sport[0], 0, 2);
	faults = faults_fn();
	CHECK_ERRNO(munmap(mem, PAGE), 0);
	CHECK_ERRNO(send_from(&p, mem, mr->lkey, 2), 0);
	CHECK(poll_one(p.tx_cq[0], &wc) == 1 && wc.wr_id == 2 &&
	      wc.status == IBV_WC_LOC_PROT_ERR,
	      "send from an unmapped page: error CQE (status %d)", wc.status);
	CHECK(faults_fn() == faults + 1, "and one fault counted");
	good_round(&p, 3);

	/* receive into a page made read-only after registration */
	CHECK_ERRNO(mprotect(mem + PAGE, PAGE, PROT_READ), 0);
	CHECK_ERRNO(recv_into(&p, mem + PAGE, mr->lkey, 4), 0);
	vt_frame(vt_tx_buf(&p, 0, 4), SIZE, p.sport[0], 0, 4);
	faults = faults_fn();
	CHECK_ERRNO(send_from(&p, vt_tx_buf(&p, 0, 4), p.mr->lkey, 4), 0);
	CHECK(poll_one(p.tx_cq[0], &wc) == 1 && wc.status == IBV_WC_SUCCESS,
	      "the frame was sent");
	CHECK(poll_one(p.rx_cq[0], &wc) == 1 && wc.wr_id == 4 &&
	      wc.status != IBV_WC_SUCCESS,
	      "receive into a read-only page: error CQE (status %d)", wc.status);
	CHECK(faults_fn() == faults + 1, "and one fault counted");
	/* the page stayed as the application left it */
	CHECK(mem[PAGE] == 0 && mem[2 * PAGE - 1] == 0, "read-only page untouched");
	good_round(&p, 5);

	/* a receive into an unmapped page, the next WQE still works */
	CHECK_ERRNO(munmap(mem + 2 * PAGE, PAGE), 0);
	CHECK_ERRNO(recv_into(&p, mem + 2 * PAGE, mr->lkey, 6), 0);
	vt_frame(vt_tx_buf(&p, 0, 6), SIZE, p.sport[0], 0, 6);
	faults = faults_fn();
	CHECK_ERRNO(send_from(&p, vt_tx_buf(&p, 0, 6), p.mr->lkey, 6), 0);
	CHECK(poll_one(p.tx_cq[0], &wc) == 1 && wc.status == IBV_WC_SUCCESS,
	      "the frame was sent");
	CHECK(poll_one(p.rx_cq[0], &wc) == 1 && wc.wr_id == 6 &&
	      wc.status != IBV_WC_SUCCESS,
	      "receive into an unmapped page: error CQE (status %d)", wc.status);
	CHECK(faults_fn() == faults + 1, "and one fault counted");
	good_round(&p, 7);
	cq_ring_read_only(&p);

	CHECK_ERRNO(ibv_dereg_mr(mr), 0);
	munmap(mem + PAGE, PAGE);
	goto out;
out_unmap:
	munmap(mem, 3 * PAGE);
out:
	vt_teardown(&p);
	return check_done();
}
