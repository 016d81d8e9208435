// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Datapath cost on the emulated device, three ways, one process:
 *   (a) classic verbs: ibv_post_wq_recv + ibv_post_send + ibv_poll_cq
 *   (b) extended verbs: ibv_wr_* + ibv_start_poll/ibv_next_poll
 *   (c) the manadv direct datapath of examples/mana_dv.h
 * 64-byte frames in bursts of 32 over the loopback backend.
 *
 * --callgrind: run a fixed number of bursts per mode, the device drained
 * between posting and polling (so no empty polls are counted), with a
 * callgrind dump per mode; bench/run.sh collects only the application-side
 * functions below and divides by the frame count.
 * default: frames/s per mode with 1 and 4 queue pairs (device running
 * freely), as ratios to (c) measured in the same run.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>
#include <valgrind/callgrind.h>

#include "examples/mana_dv.h"
#include "tests/verbs_traffic.h"

#define BURST 32
/* frame size: 64 bytes unless --size= says otherwise */
static uint32_t FRAME = 64;

struct qpair {
	struct ibv_recv_wr rwr[BURST];
	struct ibv_sge rsge[BURST];
	struct ibv_send_wr swr[BURST];
	struct ibv_sge ssge[BURST];
	struct mana_dv_cq dv_tx_cq, dv_rx_cq;
	struct mana_dv_sq dv_sq;
	struct mana_dv_rq dv_rq;
	uint32_t lkey;
};

struct run {
	struct vt_port p;
	struct qpair q[VT_MAX_QUEUES];
	char mode;
	uint64_t frames, errors;
};

static int (*emu_quiesce)(int timeout_ms);
static uint64_t (*emu_syscalls)(void);

static void quiesce(void)
{
	if (emu_quiesce)
		emu_quiesce(1000);
}

static void prepare(struct run *r, unsigned int i)
{
	struct qpair *q = &r->q[i];
	unsigned int k;

	q->lkey = r->p.mr->lkey;
	for (k = 0; k < BURST; k++) {
		uint8_t *f = vt_tx_buf(&r->p, i, k);

		vt_frame(f, FRAME, r->p.sport[i], i, k);
		q->rsge[k] = (struct ibv_sge){ (uintptr_t)vt_rx_buf(&r->p, i, k), VT_BUF, q->lkey };
		q->rwr[k] = (struct ibv_recv_wr){ .wr_id = k, .sg_list = &q->rsge[k],
						  .num_sge = 1,
						  .next = k + 1 < BURST ? &q->rwr[k + 1] : NULL };
		q->ssge[k] = (struct ibv_sge){ (uintptr_t)f, FRAME, q->lkey };
		q->swr[k] = (struct ibv_send_wr){ .wr_id = k, .sg_list = &q->ssge[k],
						  .num_sge = 1, .opcode = IBV_WR_SEND,
						  .send_flags = k + 1 == BURST ? IBV_SEND_SIGNALED : 0,
						  .next = k + 1 < BURST ? &q->swr[k + 1] : NULL };
	}
	if (r->mode == 'c') {
		mana_dv_cq_init(&q->dv_tx_cq, r->p.tx_cq[i]);
		mana_dv_cq_init(&q->dv_rx_cq, r->p.rx_cq[i]);
		mana_dv_sq_init(&q->dv_sq, r->p.qp[i], &q->dv_tx_cq);
		mana_dv_rq_init(&q->dv_rq, r->p.wq[i]);
	}
}

/* ---- (a) classic verbs -------------------------------------------------- */

__attribute__((noinline)) static void a_post(struct run *r, unsigned int i)
{
	struct ibv_recv_wr *rbad;
	struct ibv_send_wr *sbad;

	if (ibv_post_wq_recv(r->p.wq[i], r->q[i].rwr, &rbad) ||
	    ibv_post_send(r->p.qp[i], r->q[i].swr, &sbad))
		r->errors++;
}

__attribute__((noinline)) static int a_poll(struct run *r, unsigned int i)
{
	struct ibv_wc wc[BURST];
	int n, k, got = 0;

	n = ibv_poll_cq(r->p.rx_cq[i], BURST, wc);
	for (k = 0; k < n; k++)
		if (wc[k].status != IBV_WC_SUCCESS || wc[k].byte_len != FRAME)
			r->errors++;
	got = n > 0 ? n : 0;
	n = ibv_poll_cq(r->p.tx_cq[i], 1, wc);
	if (n < 0 || (n == 1 && wc[0].status != IBV_WC_SUCCESS))
		r->errors++;
	return got;
}

/* ---- (b) ibv_wr_* and ibv_start_poll ------------------------------------ */

__attribute__((noinline)) static void b_post(struct run *r, unsigned int i)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(r->p.qp[i]);
	struct qpair *q = &r->q[i];
	struct ibv_recv_wr *rbad;
	unsigned int k;

	if (ibv_post_wq_recv(r->p.wq[i], q->rwr, &rbad))
		r->errors++;
	ibv_wr_start(qpx);
	for (k = 0; k < BURST; k++) {
		qpx->wr_id = k;
		qpx->wr_flags = q->swr[k].send_flags;
		ibv_wr_send(qpx);
		ibv_wr_set_sge(qpx, q->lkey, q->ssge[k].addr, FRAME);
	}
	if (ibv_wr_complete(qpx))
		r->errors++;
}

static int b_drain(struct run *r, struct ibv_cq_ex *cq, bool rx)
{
	struct ibv_poll_cq_attr attr = { 0 };
	int got = 0;

	if (ibv_start_poll(cq, &attr))
		return 0;
	do {
		if (cq->status != IBV_WC_SUCCESS ||
		    (rx && ibv_wc_read_byte_len(cq) != FRAME))
			r->errors++;
		got++;
	} while (ibv_next_poll(cq) == 0);
	ibv_end_poll(cq);
	return got;
}

__attribute__((noinline)) static int b_poll(struct run *r, unsigned int i)
{
	int got = b_drain(r, r->p.rx_cqx[i], true);

	b_drain(r, r->p.tx_cqx[i], false);
	return got;
}

/* ---- (c) manadv direct datapath ----------------------------------------- */

__attribute__((noinline)) static void c_post(struct run *r, unsigned int i)
{
	struct qpair *q = &r->q[i];
	unsigned int k;

	for (k = 0; k < BURST; k++)
		if (!mana_dv_rq_post(&q->dv_rq, q->rsge[k].addr, q->lkey, VT_BUF))
			r->errors++;
	mana_dv_rq_ring(&q->dv_rq);
	for (k = 0; k < BURST; k++)
		if (!mana_dv_sq_post(&q->dv_sq, q->ssge[k].addr, q->lkey, FRAME,
				     MANA_TXOOB_IPV4 |
				     (k + 1 == BURST ? 0 : MANA_TXOOB_SUPPRESS_CQE)))
			r->errors++;
	mana_dv_sq_ring(&q->dv_sq);
}

__attribute__((noinline)) static int c_poll(struct run *r, unsigned int i)
{
	struct qpair *q = &r->q[i];
	bool overflow = false;
	const uint8_t *cqe;
	int got = 0;

	while ((cqe = mana_dv_cq_next(&q->dv_rx_cq, &overflow))) {
		if (mana_cqe_fast_type(cqe) != CQE_RX_OKAY ||
		    mana_rx_fast_len(cqe, 0) != FRAME)
			r->errors++;
		q->dv_rq.consumed++;
		got++;
	}
	/* the signaled last send retires the whole burst */
	while ((cqe = mana_dv_cq_next(&q->dv_tx_cq, &overflow))) {
		if (mana_cqe_fast_type(cqe) != CQE_TX_OKAY)
			r->errors++;
		q->dv_sq.completed += BURST;
	}
	if (overflow)
		r->errors++;
	return got;
}

/* ---- driver -------------------------------------------------------------- */

static void post(struct run *r, unsigned int i)
{
	if (r->mode == 'a')
		a_post(r, i);
	else if (r->mode == 'b')
		b_post(r, i);
	else
		c_post(r, i);
}

static int poll_q(struct run *r, unsigned int i)
{
	if (r->mode == 'a')
		return a_poll(r, i);
	if (r->mode == 'b')
		return b_poll(r, i);
	return c_poll(r, i);
}

static int setup(struct run *r, char mode, unsigned int queues)
{
	struct vt_opts o = { .queues = queues, .depth = 256,
			     .ex_cq = mode == 'b', .ex_qp = mode == 'b' };
	unsigned int i;
	int ret;

	memset(r, 0, sizeof(*r));
	r->mode = mode;
	ret = vt_setup(&r->p, &o);
	if (ret) {
		fprintf(stderr, "bench: setup (%c): %s\n", mode, strerror(ret));
		return ret;
	}
	for (i = 0; i < queues; i++)
		prepare(r, i);
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static unsigned int QUEUES = 1;	/* --queues= of the profile */

/* One burst per queue, the device drained, then every queue polled. */
static uint64_t profile_round(struct run *r)
{
	uint64_t got = 0;
	unsigned int i;

	for (i = 0; i < QUEUES; i++)
		post(r, i);
	quiesce();
	for (i = 0; i < QUEUES; i++)
		got += poll_q(r, i);
	return got;
}

/* Bursts in lock step, the device drained in between: a repeatable profile. */
static int profile(char mode, unsigned int bursts)
{
	uint64_t calls;
	struct run r;
	unsigned int b;
	char name[16];

	if (setup(&r, mode, QUEUES))
		return 1;
	for (b = 0; b < 4; b++)		/* warm up: maps, first laps */
		profile_round(&r);
	CALLGRIND_ZERO_STATS;
	calls = emu_syscalls ? emu_syscalls() : 0;
	for (b = 0; b < bursts; b++)
		r.frames += profile_round(&r);
	calls = emu_syscalls ? emu_syscalls() - calls : 0;
	snprintf(name, sizeof(name), "mode-%c", mode);
	CALLGRIND_DUMP_STATS_AT(name);
	printf("profile %c: %llu frames, %llu errors, %.3f device syscalls/frame\n",
	       mode, (unsigned long long)r.frames, (unsigned long long)r.errors,
	       r.frames ? (double)calls / r.frames : 0);
	vt_teardown(&r.p);
	return r.errors || r.frames != (uint64_t)bursts * BURST * QUEUES;
}

/* Free-running: frames/s over @secs with @queues queue pairs. */
static double throughput(char mode, unsigned int queues, double secs)
{
	uint64_t pending[VT_MAX_QUEUES] = { 0 };
	double start, elapsed;
	unsigned int i;
	struct run r;

	if (setup(&r, mode, queues))
		return 0;
	start = now();
	do {
		for (i = 0; i < queues; i++) {
			int got;

			/* the next burst once the previous one came back */
			if (!pending[i]) {
				post(&r, i);
				pending[i] = BURST;
			}
			got = poll_q(&r, i);
			pending[i] -= got;
			r.frames += got;
		}
		elapsed = now() - start;
	} while (elapsed < secs && !r.errors);
	vt_teardown(&r.p);
	if (r.errors) {
		fprintf(stderr, "bench: mode %c: %llu errors\n", mode,
			(unsigned long long)r.errors);
		return 0;
	}
	return r.frames / elapsed;
}

int main(int argc, char **argv)
{
	bool callgrind = argc > 1 && !strcmp(argv[1], "--callgrind");
	int ret = 0, i;

	for (i = 1; i < argc; i++)
		if (!strncmp(argv[i], "--size=", 7))
			FRAME = (uint32_t)atoi(argv[i] + 7);
		else if (!strncmp(argv[i], "--queues=", 9))
			QUEUES = (unsigned int)atoi(argv[i] + 9);
	if (QUEUES < 1 || QUEUES > VT_MAX_QUEUES) {
		fprintf(stderr, "bench: --queues must be 1..%u\n", VT_MAX_QUEUES);
		return 2;
	}
	if (FRAME < 64 || FRAME > VT_BUF) {
		fprintf(stderr, "bench: --size must be 64..%u\n", VT_BUF);
		return 2;
	}

	emu_quiesce = (typeof(emu_quiesce))dlsym(RTLD_DEFAULT, "mana_emu_quiesce");
	emu_syscalls = (typeof(emu_syscalls))dlsym(RTLD_DEFAULT,
						   "mana_emu_device_syscalls");
	if (callgrind) {
		unsigned int bursts = 2000 / QUEUES;

		if (!emu_quiesce) {
			fprintf(stderr, "bench: mana_emu_quiesce missing: run under mana-emu\n");
			return 1;
		}
		ret |= profile('a', bursts);
		ret |= profile('b', bursts);
		ret |= profile('c', bursts);
		return ret;
	}
	{
		static const unsigned int queue_counts[] = { 1, 4 };
		double secs = argc > 2 ? atof(argv[2]) : 2.0;
		unsigned int k;

		if (argc > 2 && !strcmp(argv[1], "--seconds"))
			secs = atof(argv[2]);
		printf("%-8s %14s %14s %14s %10s %10s\n", "queues", "(a) frames/s",
		       "(b) frames/s", "(c) frames/s", "(a)/(c)", "(b)/(c)");
		for (k = 0; k < 2; k++) {
			double fa = throughput('a', queue_counts[k], secs);
			double fb = throughput('b', queue_counts[k], secs);
			double fc = throughput('c', queue_counts[k], secs);

			if (!fa || !fb || !fc)
				ret = 1;
			printf("%-8u %14.0f %14.0f %14.0f %10.2f %10.2f\n",
			       queue_counts[k], fa, fb, fc, fc ? fa / fc : 0,
			       fc ? fb / fc : 0);
		}
	}
	return ret;
}
