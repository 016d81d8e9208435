// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Plain verbs moving raw Ethernet frames on the emulated device: no MANA
 * specific code, only ibv_post_send / ibv_wr_*, ibv_post_wq_recv,
 * ibv_poll_cq / ibv_start_poll, completion channels and async events.
 *
 * Usage (under mana-emu): test_verbs_datapath CASE [options]
 *   traffic [--threads=T] [--frames=N] [--size=B] [--depth=D] [--api=classic|ex]
 *   bad | errors | overflow | channel | features | fatal
 */
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include "check.h"
#include "verbs_traffic.h"

static struct {
	unsigned int threads;
	uint64_t frames;
	uint32_t size;
	unsigned int depth;	/* every ring: SQ, RQ and both CQs */
	bool ex;
} cfg = { .threads = 4, .frames = 100000, .size = 64, .depth = 512 };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- polling through either API ----------------------------------------- */

static int poll_any(struct ibv_cq *cq, struct ibv_cq_ex *cqx, int n, struct ibv_wc *wc)
{
	struct ibv_poll_cq_attr attr = { 0 };
	int i = 0, ret;

	if (!cqx)
		return ibv_poll_cq(cq, n, wc);
	ret = ibv_start_poll(cqx, &attr);
	if (ret == ENOENT)
		return 0;
	if (ret)
		return -1;
	do {
		wc[i].wr_id = cqx->wr_id;
		wc[i].status = cqx->status;
		wc[i].opcode = ibv_wc_read_opcode(cqx);
		wc[i].byte_len = ibv_wc_read_byte_len(cqx);
		wc[i].qp_num = ibv_wc_read_qp_num(cqx);
		wc[i].wc_flags = ibv_wc_read_wc_flags(cqx);
		i++;
	} while (i < n && ibv_next_poll(cqx) == 0);
	ibv_end_poll(cqx);
	return i;
}

/* ---- traffic: one thread per queue pair ---------------------------------- */

struct worker {
	struct vt_port *p;
	unsigned int q;
	uint64_t frames;
	uint64_t sent, tx_done, rx_got, rx_posted, errors;
	pthread_t tid;
};

static int send_burst(struct worker *w, unsigned int n)
{
	struct vt_port *p = w->p;
	struct ibv_send_wr wrs[32], *bad;
	struct ibv_sge sges[32];
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint64_t seq = w->sent + i;
		uint8_t *f = vt_tx_buf(p, w->q, (unsigned int)seq);

		vt_frame(f, cfg.size, p->sport[w->q], w->q, seq);
		sges[i] = (struct ibv_sge){ (uintptr_t)f, cfg.size, p->mr->lkey };
		/* only every 8th and the last send asks for a completion */
		wrs[i] = (struct ibv_send_wr){
			.wr_id = seq, .sg_list = &sges[i], .num_sge = 1,
			.opcode = IBV_WR_SEND,
			.send_flags = (seq % 8 == 7 || seq + 1 == w->frames) ?
				      IBV_SEND_SIGNALED : 0,
			.next = i + 1 < n ? &wrs[i + 1] : NULL,
		};
	}
	if (!cfg.ex)
		return ibv_post_send(p->qp[w->q], wrs, &bad);

	{
		struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(p->qp[w->q]);

		ibv_wr_start(qpx);
		for (i = 0; i < n; i++) {
			qpx->wr_id = wrs[i].wr_id;
			qpx->wr_flags = wrs[i].send_flags;
			ibv_wr_send(qpx);
			ibv_wr_set_sge(qpx, sges[i].lkey, sges[i].addr, sges[i].length);
		}
		return ibv_wr_complete(qpx);
	}
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct vt_port *p = w->p;
	struct ibv_wc wc[32];
	double last = now();
	unsigned int idle = 0;
	int n, i;

	/* done when every frame came back and every send completed */
	while ((w->rx_got < w->frames || w->tx_done < w->frames) && !w->errors) {
		bool progress = false;
		unsigned int burst;

		if (vt_post_rx(p, w->q, &w->rx_posted, w->rx_got))
			w->errors++;
		burst = 32;
		if (w->frames - w->sent < burst)
			burst = w->frames - w->sent;
		if (w->sent - w->tx_done + burst > p->depth - 1)
			burst = 0;
		if (burst) {
			if (send_burst(w, burst)) {
				w->errors++;
				break;
			}
			w->sent += burst;
			progress = true;
		}
		n = poll_any(p->tx_cq[w->q], p->tx_cqx[w->q], 32, wc);
		for (i = 0; i < n; i++) {
			/* a completion covers every earlier unsignaled send */
			if (wc[i].status != IBV_WC_SUCCESS || wc[i].wr_id < w->tx_done ||
			    wc[i].opcode != IBV_WC_SEND)
				w->errors++;
			w->tx_done = wc[i].wr_id + 1;
			progress = true;
		}
		n = poll_any(p->rx_cq[w->q], p->rx_cqx[w->q], 32, wc);
		if (n < 0)
			w->errors++;
		for (i = 0; i < n; i++) {
			uint32_t tag;
			uint64_t seq;

			if (wc[i].status != IBV_WC_SUCCESS || wc[i].wr_id != w->rx_got ||
			    wc[i].opcode != IBV_WC_RECV || wc[i].byte_len != cfg.size ||
			    wc[i].qp_num != p->rss->qp_num ||
			    vt_check(vt_rx_buf(p, w->q, (unsigned int)wc[i].wr_id),
				     wc[i].byte_len, cfg.size, &tag, &seq) ||
			    tag != w->q || seq != w->rx_got) {
				if (!w->errors)
					fprintf(stderr, "queue %u: bad RX completion %d (status %d wr_id %llu len %u)\n",
						w->q, i, wc[i].status,
						(unsigned long long)wc[i].wr_id, wc[i].byte_len);
				w->errors++;
			}
			w->rx_got++;
			progress = true;
		}
		if (progress) {
			last = now();
			idle = 0;
		} else if (now() - last > 20) {
			break;
		} else {
			vt_idle(&idle);
		}
	}
	return NULL;
}

static void case_traffic(void)
{
	struct vt_opts o = { .queues = cfg.threads, .depth = cfg.depth, .ex_cq = cfg.ex,
			     .ex_qp = cfg.ex };
	struct worker w[VT_MAX_QUEUES];
	struct vt_port p;
	uint64_t total = 0;
	unsigned int i;

	CHECK_ERRNO(vt_setup(&p, &o), 0);
	if (!p.rss)
		goto out;
	for (i = 0; i < cfg.threads; i++) {
		w[i] = (struct worker){ .p = &p, .q = i,
					.frames = cfg.frames / cfg.threads };
		CHECK(p.sport[i] != 0, "no flow for queue %u", i);
		pthread_create(&w[i].tid, NULL, worker_run, &w[i]);
	}
	for (i = 0; i < cfg.threads; i++) {
		pthread_join(w[i].tid, NULL);
		CHECK(w[i].rx_got == w[i].frames && !w[i].errors,
		      "queue %u: received %llu of %llu, %llu errors", i,
		      (unsigned long long)w[i].rx_got, (unsigned long long)w[i].frames,
		      (unsigned long long)w[i].errors);
		CHECK(w[i].tx_done == w[i].frames, "queue %u: %llu sends completed", i,
		      (unsigned long long)w[i].tx_done);
		total += w[i].rx_got;
	}
	printf("traffic: %llu frames of %u bytes over %u queues (%s API)\n",
	       (unsigned long long)total, cfg.size, cfg.threads, cfg.ex ? "ex" : "classic");
out:
	vt_teardown(&p);
}

/* ---- helpers for the single-queue cases ---------------------------------- */

/* Wait for @want completions on @cq (classic API); returns how many. */
static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, int want, double secs)
{
	double end = now() + secs;
	unsigned int idle = 0;
	int got = 0, n;

	while (got < want && now() < end) {
		n = ibv_poll_cq(cq, want - got, wc + got);
		if (n < 0)
			return n;
		got += n;
		if (n)
			idle = 0;
		else
			vt_idle(&idle);
	}
	return got;
}

static struct ibv_send_wr one_send(struct vt_port *p, struct ibv_sge *sge,
				   unsigned int slot, uint64_t wr_id)
{
	uint8_t *f = vt_tx_buf(p, 0, slot);

	vt_frame(f, 128, p->sport[0], 0, wr_id);
	*sge = (struct ibv_sge){ (uintptr_t)f, 128, p->mr->lkey };
	return (struct ibv_send_wr){ .wr_id = wr_id, .sg_list = sge, .num_sge = 1,
				     .opcode = IBV_WR_SEND,
				     .send_flags = IBV_SEND_SIGNALED };
}

/* ---- bad inputs ---------------------------------------------------------- */

static void case_bad(void)
{
	struct vt_opts o = { .queues = 1, .depth = 64, .max_inline = 128 };
	struct ibv_send_wr wr[3], *bad = NULL, rdma;
	struct ibv_recv_wr rwr, *rbad = NULL;
	struct ibv_sge sge[3], many[8];
	struct ibv_wc wc[8];
	uint64_t posted = 0;
	struct vt_port p;
	int i;

	CHECK_ERRNO(vt_setup(&p, &o), 0);
	if (!p.rss)
		goto out;
	CHECK_ERRNO(vt_post_rx(&p, 0, &posted, 0), 0);

	/* NULL list */
	CHECK_ERRNO(ibv_post_send(p.qp[0], NULL, &bad), EINVAL);
	/* opcodes other than SEND */
	wr[0] = one_send(&p, &sge[0], 0, 1);
	rdma = wr[0];
	rdma.opcode = IBV_WR_RDMA_WRITE;
	CHECK_ERRNO(ibv_post_send(p.qp[0], &rdma, &bad), EINVAL);
	CHECK(bad == &rdma, "bad_wr points at the RDMA WRITE");
	/* more SGEs than the QP was created with */
	for (i = 0; i < 8; i++)
		many[i] = sge[0];
	wr[0].sg_list = many;
	wr[0].num_sge = 8;
	CHECK_ERRNO(ibv_post_send(p.qp[0], &wr[0], &bad), EINVAL);
	wr[0].num_sge = 0;
	CHECK_ERRNO(ibv_post_send(p.qp[0], &wr[0], &bad), EINVAL);
	/* inline larger than max_inline_data */
	wr[0] = one_send(&p, &sge[0], 0, 1);
	wr[0].send_flags |= IBV_SEND_INLINE;
	sge[0].length = 200;
	CHECK_ERRNO(ibv_post_send(p.qp[0], &wr[0], &bad), EINVAL);
	/* unknown send flag */
	wr[0] = one_send(&p, &sge[0], 0, 1);
	wr[0].send_flags |= 1u << 20;
	CHECK_ERRNO(ibv_post_send(p.qp[0], &wr[0], &bad), EINVAL);
	/* no receive queue on a send QP */
	rwr = (struct ibv_recv_wr){ .wr_id = 1, .sg_list = &sge[0], .num_sge = 1 };
	CHECK_ERRNO(ibv_post_recv(p.qp[0], &rwr, &rbad), EOPNOTSUPP);
	CHECK(rbad == &rwr, "recv bad_wr");
	/* receive WR without SGEs */
	rwr.num_sge = 0;
	CHECK_ERRNO(ibv_post_wq_recv(p.wq[0], &rwr, &rbad), EINVAL);
	CHECK(rbad == &rwr, "wq recv bad_wr");
	/* nothing above reached the device */
	CHECK(ibv_poll_cq(p.tx_cq[0], 8, wc) == 0, "no completion from rejected sends");

	/* [good, good, bad]: the first two go, with one doorbell, the third is named */
	for (i = 0; i < 3; i++) {
		wr[i] = one_send(&p, &sge[i], i, 100 + i);
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[2].opcode = IBV_WR_SEND_WITH_IMM;
	CHECK_ERRNO(ibv_post_send(p.qp[0], &wr[0], &bad), EINVAL);
	CHECK(bad == &wr[2], "bad_wr is the third WR");
	CHECK(wait_wc(p.tx_cq[0], wc, 2, 5) == 2 && wc[0].wr_id == 100 &&
	      wc[1].wr_id == 101 && wc[0].status == IBV_WC_SUCCESS,
	      "the two good sends completed");
	CHECK(wait_wc(p.rx_cq[0], wc, 2, 5) == 2 && wc[0].byte_len == 128,
	      "and arrived");
	usleep(100000);
	CHECK(ibv_poll_cq(p.tx_cq[0], 8, wc) == 0, "and nothing else was sent");
out:
	vt_teardown(&p);
}

/* ---- error completions --------------------------------------------------- */

/* A bad WR between unsignaled good ones: it alone completes, in error. */
static void errors_in_silent_run(struct vt_port *p)
{
	struct ibv_send_wr w[4], *bad;
	struct ibv_sge s[4];
	struct ibv_wc wc[4];
	unsigned int k;

	for (k = 0; k < 4; k++) {
		w[k] = one_send(p, &s[k], 2 + k, 20 + k);
		w[k].send_flags = k == 3 ? IBV_SEND_SIGNALED : 0;
		w[k].next = k < 3 ? &w[k + 1] : NULL;
	}
	s[2].lkey ^= 0x5a5a00;
	CHECK_ERRNO(ibv_post_send(p->qp[0], w, &bad), 0);
	CHECK(wait_wc(p->tx_cq[0], wc, 2, 5) == 2 && wc[0].wr_id == 22 &&
	      wc[0].status == IBV_WC_LOC_PROT_ERR && wc[1].wr_id == 23 &&
	      wc[1].status == IBV_WC_SUCCESS,
	      "error inside a silent run: got %" PRIu64 " (%s), %" PRIu64 " (%s)",
	      wc[0].wr_id, ibv_wc_status_str(wc[0].status), wc[1].wr_id,
	      ibv_wc_status_str(wc[1].status));
	CHECK(ibv_poll_cq(p->tx_cq[0], 4, wc) == 0, "nothing more");
}

/*
 * WRs count against max_send_wr / max_wr until polled, whatever the ring
 * would hold: the CQs are sized for that many.
 */
static void limits(struct vt_port *p, uint64_t rx_posted)
{
	struct ibv_send_wr w[65], *bad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge s[65], rsge;
	struct ibv_wc wc[4];
	unsigned int k, n;
	int ret = 0;

	CHECK(p->depth == 64, "test assumes depth 64");
	for (k = 0; k < 65; k++) {
		w[k] = one_send(p, &s[k], k % 8, 100 + k);
		w[k].send_flags = k == 63 ? IBV_SEND_SIGNALED : 0;
		w[k].next = k < 64 ? &w[k + 1] : NULL;
	}
	CHECK(ibv_post_send(p->qp[0], w, &bad) == ENOMEM && bad == &w[64],
	      "WR 65 of max_send_wr 64: ENOMEM at it");
	CHECK(wait_wc(p->tx_cq[0], wc, 1, 5) == 1 && wc[0].wr_id == 163 &&
	      wc[0].status == IBV_WC_SUCCESS, "the signaled 64th retires all");
	w[64].send_flags = IBV_SEND_SIGNALED;
	CHECK_ERRNO(ibv_post_send(p->qp[0], &w[64], &bad), 0);
	CHECK(wait_wc(p->tx_cq[0], wc, 1, 5) == 1 && wc[0].wr_id == 164,
	      "room again once polled");

	/* receive: of rx_posted, one was polled; up to max_wr outstanding */
	rsge = (struct ibv_sge){ (uintptr_t)vt_rx_buf(p, 0, 0), VT_BUF, p->mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 999, .sg_list = &rsge, .num_sge = 1 };
	for (n = 0; n < 100; n++) {
		ret = ibv_post_wq_recv(p->wq[0], &rwr, &rbad);
		if (ret)
			break;
	}
	CHECK(ret == ENOMEM && rbad == &rwr && n == 64 - (rx_posted - 1),
	      "receive WRs: ENOMEM after %u more (%" PRIu64 " posted, 1 polled)",
	      n, rx_posted);
}

static void case_errors(void)
{
	struct vt_opts o = { .queues = 1, .depth = 64 };
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc[4];
	uint64_t posted = 0;
	struct vt_port p;

	CHECK_ERRNO(vt_setup(&p, &o), 0);
	if (!p.rss)
		goto out;
	CHECK_ERRNO(vt_post_rx(&p, 0, &posted, 0), 0);

	wr = one_send(&p, &sge, 0, 7);
	sge.lkey ^= 0x5a5a00;	/* no such key */
	CHECK_ERRNO(ibv_post_send(p.qp[0], &wr, &bad), 0);
	CHECK(wait_wc(p.tx_cq[0], wc, 1, 5) == 1 && wc[0].wr_id == 7 &&
	      wc[0].status == IBV_WC_LOC_PROT_ERR, "bad lkey: status %s",
	      ibv_wc_status_str(wc[0].status));

	/* outside the MR; unsignaled, yet the error completes */
	wr = one_send(&p, &sge, 0, 8);
	wr.send_flags = 0;
	sge.addr = (uintptr_t)p.mem + p.mem_size - 16;
	CHECK_ERRNO(ibv_post_send(p.qp[0], &wr, &bad), 0);
	CHECK(wait_wc(p.tx_cq[0], wc, 1, 5) == 1 && wc[0].wr_id == 8 &&
	      wc[0].status == IBV_WC_LOC_PROT_ERR, "SGE past the MR: status %s",
	      ibv_wc_status_str(wc[0].status));

	/* and the queue still works */
	wr = one_send(&p, &sge, 1, 9);
	CHECK_ERRNO(ibv_post_send(p.qp[0], &wr, &bad), 0);
	CHECK(wait_wc(p.tx_cq[0], wc, 1, 5) == 1 && wc[0].wr_id == 9 &&
	      wc[0].status == IBV_WC_SUCCESS, "good send after errors");
	CHECK(wait_wc(p.rx_cq[0], wc, 1, 5) == 1 && wc[0].status == IBV_WC_SUCCESS,
	      "received");
	errors_in_silent_run(&p);
	limits(&p, posted);
out:
	vt_teardown(&p);
}

/* ---- CQ overflow: impossible by construction ---------------------------- */

static void case_overflow(void)
{
	struct vt_opts o = { .queues = 1, .depth = 256, .cq_depth = 64 };
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc[256];
	uint64_t posted = 0;
	struct vt_port p;
	int i, n = 0, r;

	/*
	 * a send queue deeper than its CQ: accepted (as by mana_ib), at most
	 * the CQ's depth of sends outstanding (ENOMEM), so it cannot overrun
	 */
	CHECK_ERRNO(vt_setup(&p, &o), 0);
	if (p.rss) {
		for (i = 0; i < 64; i++) {
			wr = one_send(&p, &sge, i, i);
			CHECK_ERRNO(ibv_post_send(p.qp[0], &wr, &bad), 0);
		}
		wr = one_send(&p, &sge, 64, 64);
		CHECK_ERRNO(ibv_post_send(p.qp[0], &wr, &bad), ENOMEM);
		CHECK(wait_wc(p.tx_cq[0], wc, 64, 5) == 64, "64 send completions");
		CHECK_ERRNO(ibv_post_send(p.qp[0], &wr, &bad), 0);
		CHECK(wait_wc(p.tx_cq[0], wc, 1, 5) == 1, "one more");
	}
	vt_teardown(&p);
	o.cq_depth = 0;
	CHECK_ERRNO(vt_setup(&p, &o), 0);
	if (!p.rss)
		goto out;
	while (posted < 256)
		CHECK_ERRNO(vt_post_rx(&p, 0, &posted, 0), 0);
	/* 400 frames for 256 buffers on a 256-entry RX CQ nobody polls */
	for (i = 0; i < 400; i++) {
		wr = one_send(&p, &sge, i, i);
		CHECK_ERRNO(ibv_post_send(p.qp[0], &wr, &bad), 0);
		if (i % 32 == 31)
			wait_wc(p.tx_cq[0], wc, 32, 5);
	}
	wait_wc(p.tx_cq[0], wc, 400 % 32, 5);
	/* every buffer completed once, in order, and the CQ never overran */
	for (i = 0; i < 600 && n >= 0 && n < 256; i++) {
		r = wait_wc(p.rx_cq[0], wc + n, 256 - n, 1);
		n = r < 0 ? r : n + r;
	}
	CHECK(n == 256, "256 receive completions (got %d)", n);
	for (i = 0; i < n && i < 256; i++)
		CHECK(wc[i].wr_id == (uint64_t)i && wc[i].status == IBV_WC_SUCCESS,
		      "completion %d: wr_id %llu status %d", i,
		      (unsigned long long)wc[i].wr_id, wc[i].status);
	CHECK(ibv_poll_cq(p.rx_cq[0], 256, wc) == 0, "nothing more");
out:
	vt_teardown(&p);
}

/* ---- completion channel -------------------------------------------------- */

static void case_channel(void)
{
	struct vt_opts o = { .queues = 1, .depth = 64, .ex_cq = true, .channel = true };
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc[4];
	uint64_t posted = 0;
	struct vt_port p;
	int round;

	CHECK_ERRNO(vt_setup(&p, &o), 0);
	if (!p.rss)
		goto out;
	CHECK_ERRNO(vt_post_rx(&p, 0, &posted, 0), 0);
	fcntl(p.channel->fd, F_SETFL, fcntl(p.channel->fd, F_GETFL) | O_NONBLOCK);

	for (round = 0; round < 3; round++) {
		struct pollfd pfd = { .fd = p.channel->fd, .events = POLLIN };
		struct ibv_cq *ev_cq = NULL;
		void *ev_ctx;

		/* armed and idle: no event */
		CHECK_ERRNO(ibv_req_notify_cq(p.rx_cq[0], 0), 0);
		CHECK(poll(&pfd, 1, 50) == 0, "round %d: event before any completion", round);
		wr = one_send(&p, &sge, round, round);
		CHECK_ERRNO(ibv_post_send(p.qp[0], &wr, &bad), 0);
		CHECK(poll(&pfd, 1, 5000) == 1, "round %d: no completion event", round);
		CHECK(ibv_get_cq_event(p.channel, &ev_cq, &ev_ctx) == 0 &&
		      ev_cq == p.rx_cq[0], "round %d: event names the RX CQ", round);
		if (ev_cq)
			ibv_ack_cq_events(ev_cq, 1);
		CHECK(wait_wc(p.rx_cq[0], wc, 1, 5) == 1 && wc[0].status == IBV_WC_SUCCESS,
		      "round %d: the completion is there", round);
		CHECK(wait_wc(p.tx_cq[0], wc, 1, 5) == 1, "round %d: send completed", round);
		CHECK_ERRNO(vt_post_rx(&p, 0, &posted, round + 1), 0);
	}
	/*
	 * A CQ with no queue yet: an RNIC CQ (our own buffer) has its
	 * hardware CQ from creation, so it can be armed already.
	 */
	{
		struct ibv_cq *lone = ibv_create_cq(p.ctx, 8, NULL, p.channel, 0);

		CHECK(lone && ibv_req_notify_cq(lone, 0) == 0, "arming an RNIC CQ before its QP");
		if (lone)
			ibv_destroy_cq(lone);
	}
out:
	vt_teardown(&p);
}

/* ---- inline, several SGEs, checksum offload, ibv_wr_* ------------------ */

static void expect_frame(struct vt_port *p, uint64_t *posted, uint64_t *got,
			 uint32_t size, uint64_t seq, const char *what)
{
	struct ibv_wc wc[2];
	uint32_t tag;
	uint64_t s;

	CHECK(wait_wc(p->rx_cq[0], wc, 1, 5) == 1 && wc[0].status == IBV_WC_SUCCESS &&
	      wc[0].byte_len == size && wc[0].wr_id == *got &&
	      !vt_check(vt_rx_buf(p, 0, (unsigned int)wc[0].wr_id), size, size, &tag, &s) &&
	      s == seq, "%s: frame", what);
	(*got)++;
	CHECK_ERRNO(vt_post_rx(p, 0, posted, *got), 0);
}

static void case_features(void)
{
	struct vt_opts o = { .queues = 1, .depth = 64, .max_inline = 256, .ex_qp = true,
			     .sq_sig_all = 1 };
	uint8_t frame[256], *rx;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge[3];
	struct ibv_wc wc[4];
	struct ibv_qp_ex *qpx;
	uint64_t posted = 0, got = 0;
	struct vt_port p;

	CHECK_ERRNO(vt_setup(&p, &o), 0);
	if (!p.rss)
		goto out;
	CHECK_ERRNO(vt_post_rx(&p, 0, &posted, 0), 0);

	/* inline from unregistered stack memory, overwritten right after */
	vt_frame(frame, 200, p.sport[0], 0, 1);
	sge[0] = (struct ibv_sge){ (uintptr_t)frame, 200, 0 };
	wr = (struct ibv_send_wr){ .wr_id = 1, .sg_list = sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_INLINE };
	CHECK_ERRNO(ibv_post_send(p.qp[0], &wr, &bad), 0);
	memset(frame, 0xee, sizeof(frame));
	expect_frame(&p, &posted, &got, 200, 1, "inline");
	CHECK(wait_wc(p.tx_cq[0], wc, 1, 5) == 1 && wc[0].wr_id == 1, "inline completion");

	/* headers and payload in three SGEs */
	vt_frame(vt_tx_buf(&p, 0, 5), 300, p.sport[0], 0, 2);
	sge[0] = (struct ibv_sge){ (uintptr_t)vt_tx_buf(&p, 0, 5), 42, p.mr->lkey };
	sge[1] = (struct ibv_sge){ sge[0].addr + 42, 100, p.mr->lkey };
	sge[2] = (struct ibv_sge){ sge[0].addr + 142, 158, p.mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 2, .sg_list = sge, .num_sge = 3,
				   .opcode = IBV_WR_SEND };
	CHECK_ERRNO(ibv_post_send(p.qp[0], &wr, &bad), 0);
	expect_frame(&p, &posted, &got, 300, 2, "three SGEs");
	CHECK(wait_wc(p.tx_cq[0], wc, 1, 5) == 1 && wc[0].wr_id == 2, "multi-SGE completion");

	/* checksum offload: wrong checksums go out right */
	vt_frame(vt_tx_buf(&p, 0, 6), 128, p.sport[0], 0, 3);
	rx = vt_tx_buf(&p, 0, 6);
	rx[24] ^= 0xff;			/* corrupt the IP header checksum */
	sge[0] = (struct ibv_sge){ (uintptr_t)rx, 128, p.mr->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 3, .sg_list = sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_IP_CSUM };
	CHECK_ERRNO(ibv_post_send(p.qp[0], &wr, &bad), 0);
	CHECK(wait_wc(p.rx_cq[0], wc, 1, 5) == 1 && wc[0].status == IBV_WC_SUCCESS &&
	      (wc[0].wc_flags & IBV_WC_IP_CSUM_OK), "checksummed frame: flags 0x%x",
	      wc[0].wc_flags);
	rx = vt_rx_buf(&p, 0, (unsigned int)wc[0].wr_id);
	CHECK(mana_inet_csum(rx + 14, 20, 0) == 0, "IP header checksum completed by the device");
	CHECK(rx[40] || rx[41], "UDP checksum filled");
	got++;
	CHECK_ERRNO(vt_post_rx(&p, 0, &posted, got), 0);
	CHECK(wait_wc(p.tx_cq[0], wc, 1, 5) == 1, "csum completion");

	/* ibv_wr_*: inline list, abort, and an error that posts nothing */
	qpx = ibv_qp_to_qp_ex(p.qp[0]);
	CHECK(qpx != NULL, "qp_ex");
	if (qpx) {
		struct ibv_data_buf bufs[2];

		vt_frame(frame, 180, p.sport[0], 0, 4);
		bufs[0] = (struct ibv_data_buf){ frame, 60 };
		bufs[1] = (struct ibv_data_buf){ frame + 60, 120 };
		ibv_wr_start(qpx);
		qpx->wr_id = 4;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(qpx);
		ibv_wr_set_inline_data_list(qpx, 2, bufs);
		CHECK_ERRNO(ibv_wr_complete(qpx), 0);
		expect_frame(&p, &posted, &got, 180, 4, "wr inline list");
		CHECK(wait_wc(p.tx_cq[0], wc, 1, 5) == 1 && wc[0].wr_id == 4, "wr completion");

		ibv_wr_start(qpx);
		qpx->wr_id = 5;
		ibv_wr_send(qpx);
		ibv_wr_set_sge(qpx, p.mr->lkey, (uintptr_t)vt_tx_buf(&p, 0, 7), 128);
		ibv_wr_abort(qpx);

		ibv_wr_start(qpx);
		qpx->wr_id = 6;
		ibv_wr_send(qpx);
		ibv_wr_set_sge(qpx, p.mr->lkey, (uintptr_t)vt_tx_buf(&p, 0, 7), 128);
		ibv_wr_rdma_write(qpx, 1, 0);	/* not a raw packet operation */
		ibv_wr_set_sge(qpx, p.mr->lkey, (uintptr_t)vt_tx_buf(&p, 0, 7), 128);
		CHECK_ERRNO(ibv_wr_complete(qpx), EOPNOTSUPP);
		usleep(100000);
		CHECK(ibv_poll_cq(p.tx_cq[0], 4, wc) == 0 && ibv_poll_cq(p.rx_cq[0], 4, wc) == 0,
		      "aborted and failed batches sent nothing");
	}
out:
	vt_teardown(&p);
}

/*
 * ibv_wr_* beyond one SGE per send: wr_send writes the WQE's header, OOB
 * and WR id at once, so the general path that follows (several SGEs), a
 * send without data and a full ring must each still come out right.
 */
static void wr_one(struct ibv_qp_ex *qpx, uint64_t wr_id, unsigned int flags)
{
	qpx->wr_id = wr_id;
	qpx->wr_flags = flags;
	ibv_wr_send(qpx);
}

static void case_wr(void)
{
	struct vt_opts o = { .queues = 1, .depth = 64, .ex_qp = true };
	uint64_t posted = 0, got = 0;
	struct ibv_sge sge[2], s;
	struct ibv_qp_ex *qpx;
	struct ibv_wc wc[4];
	struct vt_port p;
	unsigned int k;

	CHECK_ERRNO(vt_setup(&p, &o), 0);
	if (!p.rss)
		goto out;
	qpx = ibv_qp_to_qp_ex(p.qp[0]);
	CHECK_ERRNO(vt_post_rx(&p, 0, &posted, 0), 0);

	/* unsigned two-SGE send, then a signaled one-SGE send: one completion */
	vt_frame(vt_tx_buf(&p, 0, 1), 200, p.sport[0], 0, 1);
	vt_frame(vt_tx_buf(&p, 0, 2), 128, p.sport[0], 0, 2);
	sge[0] = (struct ibv_sge){ (uintptr_t)vt_tx_buf(&p, 0, 1), 42, p.mr->lkey };
	sge[1] = (struct ibv_sge){ sge[0].addr + 42, 158, p.mr->lkey };
	ibv_wr_start(qpx);
	wr_one(qpx, 10, 0);
	ibv_wr_set_sge_list(qpx, 2, sge);
	wr_one(qpx, 11, IBV_SEND_SIGNALED);
	ibv_wr_set_sge(qpx, p.mr->lkey, (uintptr_t)vt_tx_buf(&p, 0, 2), 128);
	CHECK_ERRNO(ibv_wr_complete(qpx), 0);
	expect_frame(&p, &posted, &got, 200, 1, "wr two SGEs");
	expect_frame(&p, &posted, &got, 128, 2, "wr one SGE");
	CHECK(wait_wc(p.tx_cq[0], wc, 1, 5) == 1 && wc[0].wr_id == 11 &&
	      wc[0].status == IBV_WC_SUCCESS, "the signaled send completes: %" PRIu64,
	      wc[0].wr_id);

	/* signaled through the general path: its own WR id */
	ibv_wr_start(qpx);
	wr_one(qpx, 12, IBV_SEND_SIGNALED);
	ibv_wr_set_sge_list(qpx, 2, sge);
	CHECK_ERRNO(ibv_wr_complete(qpx), 0);
	expect_frame(&p, &posted, &got, 200, 1, "wr two SGEs, signaled");
	CHECK(wait_wc(p.tx_cq[0], wc, 1, 5) == 1 && wc[0].wr_id == 12,
	      "general-path send completes with its WR id: %" PRIu64, wc[0].wr_id);

	/* a send without data, data without a send: nothing goes out */
	ibv_wr_start(qpx);
	wr_one(qpx, 13, IBV_SEND_SIGNALED);
	wr_one(qpx, 14, IBV_SEND_SIGNALED);
	ibv_wr_set_sge(qpx, p.mr->lkey, (uintptr_t)vt_tx_buf(&p, 0, 2), 128);
	CHECK_ERRNO(ibv_wr_complete(qpx), EINVAL);
	ibv_wr_start(qpx);
	ibv_wr_set_sge(qpx, p.mr->lkey, (uintptr_t)vt_tx_buf(&p, 0, 2), 128);
	CHECK_ERRNO(ibv_wr_complete(qpx), EINVAL);
	ibv_wr_start(qpx);
	wr_one(qpx, 15, IBV_SEND_SIGNALED);
	CHECK_ERRNO(ibv_wr_complete(qpx), EINVAL);

	/* 65 sends of max_send_wr 64: ENOMEM, nothing posted; then 64 fit */
	s = (struct ibv_sge){ (uintptr_t)vt_tx_buf(&p, 0, 2), 128, p.mr->lkey };
	ibv_wr_start(qpx);
	for (k = 0; k < 65; k++) {
		wr_one(qpx, 100 + k, k == 64 ? IBV_SEND_SIGNALED : 0);
		ibv_wr_set_sge(qpx, s.lkey, s.addr, s.length);
	}
	CHECK_ERRNO(ibv_wr_complete(qpx), ENOMEM);
	usleep(100000);
	CHECK(ibv_poll_cq(p.tx_cq[0], 4, wc) == 0 && ibv_poll_cq(p.rx_cq[0], 4, wc) == 0,
	      "failed batches sent nothing");
	ibv_wr_start(qpx);
	for (k = 0; k < 64; k++) {
		wr_one(qpx, 200 + k, k == 63 ? IBV_SEND_SIGNALED : 0);
		ibv_wr_set_sge(qpx, s.lkey, s.addr, s.length);
	}
	CHECK_ERRNO(ibv_wr_complete(qpx), 0);
	CHECK(wait_wc(p.tx_cq[0], wc, 1, 5) == 1 && wc[0].wr_id == 263 &&
	      wc[0].status == IBV_WC_SUCCESS, "64 sends: the last one's completion");
	for (k = 0; k < 64; k++)
		expect_frame(&p, &posted, &got, 128, 2, "wr full ring");
out:
	vt_teardown(&p);
}

/*
 * Extended CQ: an error entry (a truncated frame) and then plain ones in
 * the same ibv_start_poll: each entry has its own status.
 */
static void case_exstatus(void)
{
	struct vt_opts o = { .queues = 1, .depth = 64, .ex_cq = true };
	struct ibv_recv_wr rwr[4], *rbad;
	struct ibv_send_wr wr[4], *bad;
	struct ibv_sge rsge[4], sge[4];
	struct ibv_wc wc[8];
	double end;
	struct vt_port p;
	int got = 0, n, k;

	CHECK_ERRNO(vt_setup(&p, &o), 0);
	if (!p.rss)
		goto out;
	for (k = 0; k < 4; k++) {
		rsge[k] = (struct ibv_sge){ (uintptr_t)vt_rx_buf(&p, 0, k), k ? VT_BUF : 64,
					    p.mr->lkey };
		rwr[k] = (struct ibv_recv_wr){ .wr_id = k, .sg_list = &rsge[k], .num_sge = 1,
					       .next = k < 3 ? &rwr[k + 1] : NULL };
		wr[k] = one_send(&p, &sge[k], k, 40 + k);
		wr[k].send_flags = k == 3 ? IBV_SEND_SIGNALED : 0;
		wr[k].next = k < 3 ? &wr[k + 1] : NULL;
	}
	CHECK_ERRNO(ibv_post_wq_recv(p.wq[0], rwr, &rbad), 0);
	CHECK_ERRNO(ibv_post_send(p.qp[0], wr, &bad), 0);
	CHECK(wait_wc(p.tx_cq[0], wc, 1, 5) == 1 && wc[0].wr_id == 43, "sent");
	usleep(100000);		/* most likely all four in one poll; either way right */
	for (end = now() + 5; got < 4 && now() < end; got += n) {
		n = poll_any(p.rx_cq[0], p.rx_cqx[0], 8 - got, wc + got);
		if (n < 0)
			break;
	}
	CHECK(got == 4, "four receive completions, got %d", got);
	CHECK(got >= 1 && wc[0].wr_id == 0 && wc[0].status == IBV_WC_LOC_LEN_ERR,
	      "the short buffer: truncated (%s)", ibv_wc_status_str(wc[0].status));
	for (k = 1; k < got; k++)
		CHECK(wc[k].wr_id == (uint64_t)k && wc[k].status == IBV_WC_SUCCESS &&
		      wc[k].byte_len == 128, "entry %d after the error: %s, %u bytes", k,
		      ibv_wc_status_str(wc[k].status), wc[k].byte_len);
out:
	vt_teardown(&p);
}

/* ---- device fatal: every outstanding WR completes exactly once ---------- */

#define FATAL_MAX_WR (1u << 21)	/* receive ids: queue << 19 | count, 4 queues */

static void account(uint8_t *seen, uint64_t id, uint64_t *dups)
{
	if (id >= FATAL_MAX_WR || seen[id]++)
		(*dups)++;
}

static void case_fatal(void)
{
	/*
	 * Four RX queues, traffic on two: the idle queues keep their posted
	 * buffers, so the fatal flush always has receives to account for.
	 */
	struct vt_opts o = { .queues = 4, .depth = 256, .sq_sig_all = 1 };
	uint8_t *tx_seen = calloc(FATAL_MAX_WR, 1), *rx_seen = calloc(FATAL_MAX_WR, 1);
	uint64_t posted_tx = 0, posted_rx[4] = { 0 }, rx_done[4] = { 0 }, dups = 0;
	uint64_t tx_ok = 0, tx_flush = 0, rx_ok = 0, rx_flush = 0, other = 0;
	struct ibv_async_event ev;
	struct ibv_wc wc[64];
	bool fatal = false;
	struct vt_port p;
	double idle = 0;
	unsigned int q;
	int n, i;

	CHECK_ERRNO(vt_setup(&p, &o), 0);
	if (!p.rss || !tx_seen || !rx_seen)
		goto out;
	fcntl(p.ctx->async_fd, F_SETFL, fcntl(p.ctx->async_fd, F_GETFL) | O_NONBLOCK);

	while (!fatal || idle < 0.5) {
		double t0 = now();
		bool progress = false;

		for (q = 0; q < 4 && !fatal; q++) {
			struct ibv_send_wr wr[16], *bad;
			struct ibv_sge sge[16];
			struct ibv_recv_wr rwr[16], *rbad;
			struct ibv_sge rsge[16];
			unsigned int k, nr = 0;

			/* receive buffers: wr_id = queue << 19 | count */
			while (posted_rx[q] - rx_done[q] < p.depth && nr < 16) {
				rsge[nr] = (struct ibv_sge){ (uintptr_t)vt_rx_buf(&p, q, posted_rx[q]),
							     VT_BUF, p.mr->lkey };
				rwr[nr] = (struct ibv_recv_wr){ .wr_id = (uint64_t)q << 19 | posted_rx[q],
								.sg_list = &rsge[nr], .num_sge = 1,
								.next = NULL };
				if (nr)
					rwr[nr - 1].next = &rwr[nr];
				posted_rx[q]++;
				nr++;
			}
			if (nr && ibv_post_wq_recv(p.wq[q], rwr, &rbad))
				posted_rx[q] -= nr;	/* device already dead: none posted */
			if (q >= 2)
				continue;	/* queues 2 and 3 only receive (nothing) */
			for (k = 0; k < 16; k++) {
				uint8_t *f = vt_tx_buf(&p, q, (unsigned int)posted_tx + k);

				vt_frame(f, 64, p.sport[q], q, posted_tx + k);
				sge[k] = (struct ibv_sge){ (uintptr_t)f, 64, p.mr->lkey };
				wr[k] = (struct ibv_send_wr){ .wr_id = posted_tx + k, .sg_list = &sge[k],
							      .num_sge = 1, .opcode = IBV_WR_SEND,
							      .next = k < 15 ? &wr[k + 1] : NULL };
			}
			n = ibv_post_send(p.qp[q], wr, &bad);
			if (!n)
				posted_tx += 16;
			else if (n == ENOMEM)
				posted_tx += bad - wr;
			else if (n == EIO)
				posted_tx += bad - wr;	/* fatal noticed by another path */
		}
		for (q = 0; q < 4; q++) {
			n = ibv_poll_cq(p.tx_cq[q], 64, wc);
			for (i = 0; i < n; i++) {
				account(tx_seen, wc[i].wr_id, &dups);
				if (wc[i].status == IBV_WC_SUCCESS)
					tx_ok++;
				else if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
					tx_flush++;
				else
					other++;
				progress = true;
			}
			n = ibv_poll_cq(p.rx_cq[q], 64, wc);
			for (i = 0; i < n; i++) {
				account(rx_seen, wc[i].wr_id, &dups);
				rx_done[wc[i].wr_id >> 19]++;
				if (wc[i].status == IBV_WC_SUCCESS)
					rx_ok++;
				else if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
					rx_flush++;
				else
					other++;
				progress = true;
			}
		}
		if (!fatal && ibv_get_async_event(p.ctx, &ev) == 0) {
			CHECK(ev.event_type == IBV_EVENT_DEVICE_FATAL, "async event %d",
			      ev.event_type);
			fatal = ev.event_type == IBV_EVENT_DEVICE_FATAL;
			ibv_ack_async_event(&ev);
			/* a stall before the event must not end the flush phase early */
			progress = true;
		}
		if (posted_tx > FATAL_MAX_WR - 64)
			break;
		idle = progress ? 0 : idle + (now() - t0) + 0.001;
		if (!progress && fatal)
			usleep(1000);
	}
	CHECK(fatal, "no IBV_EVENT_DEVICE_FATAL (run with --fault=fatal-after=N)");
	CHECK(!dups && !other, "%llu duplicate completions, %llu unexpected statuses",
	      (unsigned long long)dups, (unsigned long long)other);
	CHECK(tx_ok + tx_flush == posted_tx, "sends: %llu ok + %llu flushed != %llu posted",
	      (unsigned long long)tx_ok, (unsigned long long)tx_flush,
	      (unsigned long long)posted_tx);
	CHECK(rx_ok + rx_flush == posted_rx[0] + posted_rx[1] + posted_rx[2] + posted_rx[3],
	      "receives: %llu ok + %llu flushed != %llu posted",
	      (unsigned long long)rx_ok, (unsigned long long)rx_flush,
	      (unsigned long long)(posted_rx[0] + posted_rx[1] + posted_rx[2] + posted_rx[3]));
	/* at least the idle queues' 2 x 256 buffers are flushed */
	CHECK(tx_ok > 0 && rx_flush >= 2 * p.depth, "traffic before, flushes after (%llu)",
	      (unsigned long long)rx_flush);
	printf("fatal: %llu sends (%llu ok, %llu flushed), %llu receives (%llu ok, %llu flushed)\n",
	       (unsigned long long)posted_tx, (unsigned long long)tx_ok,
	       (unsigned long long)tx_flush,
	       (unsigned long long)(posted_rx[0] + posted_rx[1] + posted_rx[2] + posted_rx[3]),
	       (unsigned long long)rx_ok, (unsigned long long)rx_flush);
	{
		/* later posts fail cleanly */
		struct ibv_send_wr wr, *bad;
		struct ibv_sge sge = { (uintptr_t)vt_tx_buf(&p, 0, 0), 64, p.mr->lkey };

		wr = (struct ibv_send_wr){ .wr_id = 1, .sg_list = &sge, .num_sge = 1,
					   .opcode = IBV_WR_SEND };
		CHECK_ERRNO(ibv_post_send(p.qp[0], &wr, &bad), EIO);
	}
	vt_teardown(&p);

	/* close and reopen: a fresh context works */
	o.queues = 1;
	CHECK_ERRNO(vt_setup(&p, &o), 0);
out:
	vt_teardown(&p);
	free(tx_seen);
	free(rx_seen);
}

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "traffic";
	int i;

	for (i = 2; i < argc; i++) {
		if (!strncmp(argv[i], "--threads=", 10))
			cfg.threads = atoi(argv[i] + 10);
		else if (!strncmp(argv[i], "--frames=", 9))
			cfg.frames = strtoull(argv[i] + 9, NULL, 0);
		else if (!strncmp(argv[i], "--depth=", 8))
			cfg.depth = atoi(argv[i] + 8);
		else if (!strncmp(argv[i], "--size=", 7))
			cfg.size = atoi(argv[i] + 7);
		else if (!strcmp(argv[i], "--api=ex"))
			cfg.ex = true;
	}
	if (!cfg.threads || cfg.threads > VT_MAX_QUEUES || (cfg.threads & (cfg.threads - 1)) ||
	    cfg.size < 64 || cfg.size > VT_BUF ||
	    cfg.depth < 64 || cfg.depth > 4096 || (cfg.depth & (cfg.depth - 1))) {
		fprintf(stderr, "bad options\n");
		return 2;
	}
	if (!strcmp(which, "traffic"))
		case_traffic();
	else if (!strcmp(which, "bad"))
		case_bad();
	else if (!strcmp(which, "errors"))
		case_errors();
	else if (!strcmp(which, "overflow"))
		case_overflow();
	else if (!strcmp(which, "channel"))
		case_channel();
	else if (!strcmp(which, "features"))
		case_features();
	else if (!strcmp(which, "wr"))
		case_wr();
	else if (!strcmp(which, "exstatus"))
		case_exstatus();
	else if (!strcmp(which, "fatal"))
		case_fatal();
	else {
		fprintf(stderr, "unknown case %s\n", which);
		return 2;
	}
	return check_done();
}
