// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One queue, two threads, as verbs allows: one thread posts, another polls
 * the queue's CQ.  Every completion must name the next WR in order, with
 * nothing lost and nothing repeated.  Also a create/destroy storm of many
 * threads on one context.  Also built with ThreadSanitizer (build-tsan).
 *
 * Usage (under mana-emu): test_verbs_threads CASE [--depth=D] [--count=N]
 *                         [--queues=Q] [--threads=T] [--api=ex]
 *   --api=ex: sq and rq post sends with ibv_wr_* and poll with
 *          ibv_start_poll (extended QPs and CQs)
 *   sq     signaled ibv_post_send in one thread, ibv_poll_cq in another
 *          (run with --backend=null: the frames go nowhere)
 *   rq     ibv_post_wq_recv in one thread, ibv_poll_cq in another, frames
 *          sent by a third (loopback)
 *   storm  threads creating and destroying CQs, WQs and QPs on one context
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#include "check.h"
#include "verbs_traffic.h"

static struct {
	unsigned int depth;
	uint64_t count;
	unsigned int threads;
	unsigned int queues;
	bool ex;
} cfg = { .depth = 256, .count = 200000, .threads = 4, .queues = 2 };

/* Up to @n completions of @cq (its extended form @cqx with --api=ex). */
static int poll_any(struct ibv_cq *cq, struct ibv_cq_ex *cqx, int n, struct ibv_wc *wc)
{
	struct ibv_poll_cq_attr attr = { 0 };
	int i = 0, ret;

	if (!cfg.ex)
		return ibv_poll_cq(cq, n, wc);
	ret = ibv_start_poll(cqx, &attr);
	if (ret == ENOENT)
		return 0;
	if (ret)
		return -1;
	do {
		wc[i].wr_id = cqx->wr_id;
		wc[i].status = cqx->status;
		wc[i].byte_len = ibv_wc_read_byte_len(cqx);
		i++;
	} while (i < n && ibv_next_poll(cqx) == 0);
	ibv_end_poll(cqx);
	return i;
}

/* @n sends of one SGE each, by ibv_post_send or ibv_wr_* (--api=ex). */
static int post_sends(struct ibv_qp *qp, struct ibv_send_wr *wrs, unsigned int n,
		      struct ibv_send_wr **bad)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
	unsigned int i;
	int ret;

	if (!cfg.ex)
		return ibv_post_send(qp, wrs, bad);
	/* all or nothing: on error, none went in */
	ibv_wr_start(qpx);
	for (i = 0; i < n; i++) {
		qpx->wr_id = wrs[i].wr_id;
		qpx->wr_flags = wrs[i].send_flags;
		ibv_wr_send(qpx);
		ibv_wr_set_sge(qpx, wrs[i].sg_list->lkey, wrs[i].sg_list->addr,
			       wrs[i].sg_list->length);
	}
	ret = ibv_wr_complete(qpx);
	*bad = ret ? wrs : NULL;
	return ret;
}

/* Shared between the two threads of one queue. */
struct pair {
	struct vt_port *port;
	unsigned int q;
	atomic_uint_fast64_t done;	/* completions the polling thread took */
	atomic_bool stop;		/* the poller saw something wrong */
	uint64_t bad_wr_id, want_wr_id;
	int bad_status, poll_ret;
	/* rq: receive WRs posted; a frame is sent only into a posted one */
	_Atomic uint64_t posted;
};

static void pair_fail(struct pair *s, uint64_t got, uint64_t want, int status,
		      int ret)
{
	s->bad_wr_id = got;
	s->want_wr_id = want;
	s->bad_status = status;
	s->poll_ret = ret;
	atomic_store(&s->stop, true);
}

/* ---- send: post_send thread vs poll_cq thread ------------------------------ */

static void *sq_poster(void *arg)
{
	struct pair *s = arg;
	struct vt_port *p = s->port;
	struct ibv_send_wr wrs[16], *bad;
	struct ibv_sge sges[16];
	uint64_t next = 0;
	unsigned int i, n, full = 0;
	int ret;

	while (next < cfg.count && !atomic_load(&s->stop)) {
		/* bursts of 1..16, so that the ring fills at every offset */
		n = (unsigned int)(next % 16) + 1;
		if (n > cfg.count - next)
			n = (unsigned int)(cfg.count - next);
		for (i = 0; i < n; i++) {
			sges[i] = (struct ibv_sge){ (uintptr_t)vt_tx_buf(p, s->q, 0), 64,
						    p->mr->lkey };
			wrs[i] = (struct ibv_send_wr){
				.wr_id = next + i, .sg_list = &sges[i], .num_sge = 1,
				.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
				.next = i + 1 < n ? &wrs[i + 1] : NULL,
			};
		}
		ret = post_sends(p->qp[s->q], wrs, n, &bad);
		/* the WRs before bad went in */
		next += ret ? (uint64_t)(bad - wrs) : n;
		if (ret == ENOMEM) {
			/*
			 * Full: the poller makes room.  Retry at once a few
			 * times (a slot is reused the moment its credit comes
			 * back, which is what this test is about), then yield.
			 */
			if (++full % 64 == 0)
				sched_yield();
		} else if (ret) {
			pair_fail(s, next, next, -1, -ret);
			break;
		}
	}
	return NULL;
}

static void *cq_poller(void *arg)
{
	struct pair *s = arg;
	struct ibv_wc wc[32];
	uint64_t want = 0;
	int n, i;

	while (want < cfg.count && !atomic_load(&s->stop)) {
		n = poll_any(s->port->tx_cq[s->q], s->port->tx_cqx[s->q], 32, wc);
		if (n < 0) {
			pair_fail(s, 0, want, -1, n);
			break;
		}
		for (i = 0; i < n; i++, want++) {
			if (wc[i].wr_id != want || wc[i].status != IBV_WC_SUCCESS) {
				pair_fail(s, wc[i].wr_id, want, wc[i].status, n);
				return NULL;
			}
		}
		atomic_store(&s->done, want);
		if (!n)
			sched_yield();
	}
	return NULL;
}

/*
 * cfg.queues queues at once, each with its own two threads (and @extra, a
 * third): more threads than cores, so that a thread is often descheduled
 * in the middle of a post or a poll, where a race would show.
 */
static void run_pairs(void *(*poster)(void *), void *(*poller)(void *),
		      void *(*extra)(void *), const char *what)
{
	struct vt_opts o = { .queues = cfg.queues, .depth = cfg.depth,
			     .ex_cq = cfg.ex, .ex_qp = cfg.ex };
	struct pair *s = calloc(cfg.queues, sizeof(*s));
	pthread_t t[3 * VT_MAX_QUEUES];
	unsigned int i, n = 0;
	struct vt_port p;

	CHECK_ERRNO(vt_setup(&p, &o), 0);
	if (!p.rss || !s)
		goto out;
	for (i = 0; i < cfg.queues; i++) {
		s[i].port = &p;
		s[i].q = i;
		CHECK(!pthread_create(&t[n++], NULL, poster, &s[i]), "poster %u", i);
		CHECK(!pthread_create(&t[n++], NULL, poller, &s[i]), "poller %u", i);
		if (extra)
			CHECK(!pthread_create(&t[n++], NULL, extra, &s[i]), "thread %u", i);
	}
	while (n)
		pthread_join(t[--n], NULL);
	for (i = 0; i < cfg.queues; i++) {
		CHECK(!atomic_load(&s[i].stop),
		      "%s depth %u queue %u: completion wr_id %" PRIu64 " status %d (poll returned %d), expected wr_id %" PRIu64,
		      what, cfg.depth, i, s[i].bad_wr_id, s[i].bad_status,
		      s[i].poll_ret, s[i].want_wr_id);
		CHECK(atomic_load(&s[i].done) == cfg.count,
		      "%s depth %u queue %u: %" PRIu64 " of %" PRIu64 " completions",
		      what, cfg.depth, i, (uint64_t)atomic_load(&s[i].done), cfg.count);
	}
out:
	vt_teardown(&p);
	free(s);
}

static void case_sq(void)
{
	run_pairs(sq_poster, cq_poller, NULL, "SQ");
}

/* ---- receive: post_wq_recv thread vs poll_cq thread ------------------------ */

/* Receive buffers, wr_id = frame number, never more than depth posted. */
static void *rq_poster(void *arg)
{
	struct pair *s = arg;
	struct vt_port *p = s->port;
	uint64_t next = 0;
	int ret;

	while (next < cfg.count && !atomic_load(&s->stop)) {
		uint64_t done = atomic_load(&s->done);
		uint64_t room = done + p->depth - next;

		if (room > cfg.count - next)
			room = cfg.count - next;
		/* post only what fits, so ENOMEM means a lost credit */
		if (room > 32)
			room = 32;
		if (!room) {
			sched_yield();
			continue;
		}
		ret = vt_post_rx(p, s->q, &next, next + room - p->depth);
		if (ret) {
			pair_fail(s, next, next, -1, -ret);
			break;
		}
		atomic_store(&s->posted, next);
	}
	return NULL;
}

/* Frame i lands in the buffer of receive WR i: check the frame it holds. */
static void *rq_poller(void *arg)
{
	struct pair *s = arg;
	struct vt_port *p = s->port;
	struct ibv_wc wc[32];
	uint64_t want = 0, seq;
	uint32_t tag;
	int n, i;

	while (want < cfg.count && !atomic_load(&s->stop)) {
		n = poll_any(p->rx_cq[s->q], p->rx_cqx[s->q], 32, wc);
		if (n < 0) {
			pair_fail(s, 0, want, -1, n);
			break;
		}
		for (i = 0; i < n; i++, want++) {
			if (wc[i].wr_id != want || wc[i].status != IBV_WC_SUCCESS ||
			    vt_check(vt_rx_buf(p, s->q, (unsigned int)want), wc[i].byte_len,
				     64, &tag, &seq) || seq != want) {
				pair_fail(s, wc[i].wr_id, want, wc[i].status, n);
				return NULL;
			}
		}
		/* the buffers are read: the poster may reuse them */
		atomic_store(&s->done, want);
		if (!n)
			sched_yield();
	}
	return NULL;
}

/*
 * The frames: sent in order, each once its receive WR is posted: a NIC
 * drops a frame that finds no buffer (mana-emu holds it, --rx-hold, but
 * the real kernel's device in the guest does not).
 */
static void *rq_sender(void *arg)
{
	struct pair *s = arg;
	struct vt_port *p = s->port;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc[32];
	uint64_t sent = 0, tx_done = 0;
	int n;

	while (tx_done < cfg.count && !atomic_load(&s->stop)) {
		if (sent < cfg.count && sent - tx_done < p->depth &&
		    sent < atomic_load(&s->posted)) {
			uint8_t *f = vt_tx_buf(p, s->q, (unsigned int)sent);

			vt_frame(f, 64, p->sport[s->q], s->q, sent);
			sge = (struct ibv_sge){ (uintptr_t)f, 64, p->mr->lkey };
			wr = (struct ibv_send_wr){ .wr_id = sent, .sg_list = &sge,
						   .num_sge = 1, .opcode = IBV_WR_SEND,
						   .send_flags = IBV_SEND_SIGNALED };
			if (post_sends(p->qp[s->q], &wr, 1, &bad)) {
				pair_fail(s, sent, sent, -1, -1);
				break;
			}
			sent++;
			continue;
		}
		n = poll_any(p->tx_cq[s->q], p->tx_cqx[s->q], 32, wc);
		if (n < 0) {
			pair_fail(s, tx_done, tx_done, -1, n);
			break;
		}
		tx_done += n;
		if (!n)
			sched_yield();
	}
	return NULL;
}

static void case_rq(void)
{
	run_pairs(rq_poster, rq_poller, rq_sender, "RQ");
}

/* ---- create/destroy storm on one context ----------------------------------- */

struct storm {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	unsigned int failures;
	int first_err;
};

static void storm_fail(struct storm *st, int err)
{
	if (!st->failures++)
		st->first_err = err;
}

/*
 * A send QP with its CQ, and a WQ with its CQ, created and destroyed.  The
 * QP on the shared PD (raw QPs of one port must share a PD), the WQ on
 * @wq_pd.
 */
static void storm_round(struct storm *st, struct ibv_pd *wq_pd, unsigned int round)
{
	struct ibv_qp_init_attr_ex qa = { 0 };
	struct ibv_wq_init_attr wa = { 0 };
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp = NULL;
	struct ibv_wq *wq = NULL;

	scq = ibv_create_cq(st->ctx, 64, NULL, NULL, 0);
	rcq = ibv_create_cq(st->ctx, 64, NULL, NULL, 0);
	if (!scq || !rcq) {
		storm_fail(st, errno);
		goto out;
	}
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qa.send_cq = qa.recv_cq = scq;
	qa.cap.max_send_wr = 16 + round % 48;
	qa.cap.max_send_sge = 1;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.pd = st->pd;
	qp = ibv_create_qp_ex(st->ctx, &qa);
	if (!qp)
		storm_fail(st, errno);
	wa = (struct ibv_wq_init_attr){ .wq_type = IBV_WQT_RQ, .max_wr = 64,
					.max_sge = 1, .pd = wq_pd, .cq = rcq };
	wq = ibv_create_wq(st->ctx, &wa);
	if (!wq)
		storm_fail(st, errno);
	if (wq && ibv_destroy_wq(wq))
		storm_fail(st, EIO);
	if (qp && ibv_destroy_qp(qp))
		storm_fail(st, EIO);
out:
	if (rcq && ibv_destroy_cq(rcq))
		storm_fail(st, EIO);
	if (scq && ibv_destroy_cq(scq))
		storm_fail(st, EIO);
}

static void *storm_run(void *arg)
{
	struct storm *st = arg;
	uint64_t i;

	for (i = 0; i < cfg.count; i++) {
		/* the WQ on a PD of the thread's own every other round */
		struct ibv_pd *own = i % 2 ? ibv_alloc_pd(st->ctx) : NULL;

		if (i % 2 && !own)
			storm_fail(st, errno);
		storm_round(st, own ? own : st->pd, (unsigned int)i);
		if (own && ibv_dealloc_pd(own))
			storm_fail(st, EIO);
	}
	return NULL;
}

static void case_storm(void)
{
	struct storm st[VT_MAX_QUEUES];
	pthread_t t[VT_MAX_QUEUES];
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	unsigned int i;
	int n;

	list = ibv_get_device_list(&n);
	CHECK(list && n > 0, "a device");
	if (!list || !n)
		return;
	ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	CHECK(ctx, "open: %s", strerror(errno));
	if (!ctx)
		return;
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "alloc_pd: %s", strerror(errno));
	for (i = 0; pd && i < cfg.threads; i++) {
		st[i] = (struct storm){ .ctx = ctx, .pd = pd };
		CHECK(!pthread_create(&t[i], NULL, storm_run, &st[i]), "thread %u", i);
	}
	for (i = 0; pd && i < cfg.threads; i++) {
		pthread_join(t[i], NULL);
		CHECK(!st[i].failures, "thread %u: %u failures, first %s", i,
		      st[i].failures, strerror(st[i].first_err));
	}
	if (pd)
		CHECK(!ibv_dealloc_pd(pd), "dealloc_pd");
	CHECK(!ibv_close_device(ctx), "close");
}

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "sq";
	int i;

	for (i = 2; i < argc; i++) {
		if (!strncmp(argv[i], "--depth=", 8))
			cfg.depth = atoi(argv[i] + 8);
		else if (!strncmp(argv[i], "--count=", 8))
			cfg.count = strtoull(argv[i] + 8, NULL, 0);
		else if (!strncmp(argv[i], "--threads=", 10))
			cfg.threads = atoi(argv[i] + 10);
		else if (!strncmp(argv[i], "--queues=", 9))
			cfg.queues = atoi(argv[i] + 9);
		else if (!strcmp(argv[i], "--api=ex"))
			cfg.ex = true;
	}
	if (!cfg.depth || !cfg.count || !cfg.threads || cfg.threads > VT_MAX_QUEUES ||
	    !cfg.queues || cfg.queues > VT_MAX_QUEUES || (cfg.queues & (cfg.queues - 1))) {
		fprintf(stderr, "bad options\n");
		return 2;
	}
	if (!strcmp(which, "sq"))
		case_sq();
	else if (!strcmp(which, "rq"))
		case_rq();
	else if (!strcmp(which, "storm"))
		case_storm();
	else {
		fprintf(stderr, "unknown case %s\n", which);
		return 2;
	}
	return check_done();
}
