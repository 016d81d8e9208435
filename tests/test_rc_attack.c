// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A remote attacker against the emulated RNIC: two emulated VMs on the
 * socket wire (tests/test_rc_attack.sh), a victim and an attacker that
 * drives its own QPs with verbs and forges packets through the test API
 * (mana_emu_rc_forge: any BTH/RETH/AETH, the emulator's encoder, a valid
 * ICRC) or holds its own packets back (mana_emu_rc_wire_hold).  The two
 * talk over fds 3 (in) and 4 (out): QP numbers, GIDs, addresses, and the
 * steps of each case, so nothing depends on timing.
 *
 *   dereg   the victim deregisters (and unmaps and maps again) a buffer
 *           after the first packet of a remote WRITE landed in it: no
 *           later byte lands, the attacker's WRITE completes with
 *           IBV_WC_REM_ACCESS_ERR, the victim's QP goes to ERR.
 *   ghost   an ACK for a PSN the victim fetched but never sent (a 1 MiB
 *           WRITE to a peer that never answers) is ignored: the WRITE
 *           does not complete as SUCCESS but runs out of retries.
 *   dupread a READ request in the duplicate PSN range with a bad rkey, and
 *           one with a good rkey that was never executed, are dropped:
 *           the victim's QP stays in RTS and takes the next WRITE.
 *   rkey    the attacker's own first rkey is not valid on the victim:
 *           a WRITE with it gets IBV_WC_REM_ACCESS_ERR, nothing lands.
 *   mw      (--kernel=newest) the victim hands out the rkey of a memory
 *           window on its buffer's PD (MANA cannot bind one): a WRITE
 *           through it gets IBV_WC_REM_ACCESS_ERR, nothing lands; the
 *           victim deallocates it and the key still grants nothing.
 *
 * Usage: test_rc_attack CASE victim|attacker
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "emu_client.h"
#include "check.h"

#define BUF_SIZE	(1u << 20)
#define POLL_LIMIT	600000		/* x 100 us: a hang ends the test */
#define V_PSN		0x000100u	/* the victim's first send PSN */
#define A_PSN		0x200000u	/* the attacker's */

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static union ibv_gid gid;
static FILE *in, *out;
static uint8_t *buf;
static struct ibv_mr *mr;
static struct ibv_mw *mw;

/* What one side tells the other. */
struct info {
	uint32_t qpn, qpn2;
	uint64_t va;
	uint32_t rkey;
	union ibv_gid gid;
};

static void say(const char *what)
{
	fprintf(out, "%s\n", what);
	fflush(out);
}

static int hear(const char *what)
{
	char line[64];

	if (!fgets(line, sizeof(line), in))
		return -1;
	line[strcspn(line, "\n")] = 0;
	return strcmp(line, what) ? -1 : 0;
}

static void send_info(const struct info *i)
{
	unsigned int k;

	fprintf(out, "%u %u %llu %u ", i->qpn, i->qpn2,
		(unsigned long long)i->va, i->rkey);
	for (k = 0; k < 16; k++)
		fprintf(out, "%02x", i->gid.raw[k]);
	fprintf(out, "\n");
	fflush(out);
}

static int recv_info(struct info *i)
{
	unsigned long long va;
	char hex[40];
	unsigned int k, b;

	if (fscanf(in, "%u %u %llu %u %32s", &i->qpn, &i->qpn2, &va, &i->rkey,
		   hex) != 5 || fgetc(in) != '\n')
		return -1;
	i->va = va;
	for (k = 0; k < 16; k++) {
		if (sscanf(hex + 2 * k, "%2x", &b) != 1)
			return -1;
		i->gid.raw[k] = (uint8_t)b;
	}
	return 0;
}

static struct ibv_qp *make_qp(void)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (qp && ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

/* INIT -> RTR -> RTS towards @dqpn; timeout 0: no retransmission. */
static int connect_qp(struct ibv_qp *qp, uint32_t dqpn, const union ibv_gid *dg,
		      uint32_t rq_psn, uint32_t sq_psn, uint8_t timeout,
		      uint8_t retry_cnt)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn, .rq_psn = rq_psn,
		.max_dest_rd_atomic = 4, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *dg, .sgid_index = 1,
				      .hop_limit = 64 } },
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = timeout;
	a.retry_cnt = retry_cnt;
	a.rnr_retry = 7;
	a.sq_psn = sq_psn;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int write_wr(struct ibv_qp *qp, uint32_t len, uint64_t va, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr = { .rdma = { .remote_addr = va, .rkey = rkey } },
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/* The next completion's status, -1 if none comes. */
static int wait_wc(void)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < POLL_LIMIT; i++) {
		if (ibv_poll_cq(cq, 1, &wc) == 1)
			return wc.status;
		usleep(100);
	}
	return -1;
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

/*
 * The provider learns of a responder-side ERR from the async event (mana_ib
 * has no query_qp: libmana answers from what it has seen).  @wait_ms 0:
 * only what is already there.  The event's type, or -1 for none.
 */
static int async_event(struct ibv_qp *qp, int wait_ms)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int type;

	if (poll(&pfd, 1, wait_ms) != 1 || ibv_get_async_event(ctx, &ev))
		return -1;
	type = ev.event_type;
	if (ev.element.qp != qp)
		type = -2;
	ibv_ack_async_event(&ev);
	return type;
}

static bool all_zero(const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

static void *tsym(const char *name)
{
	void *f = dlsym(RTLD_DEFAULT, name);

	CHECK(f, "the emulator exports %s", name);
	return f;
}

/* ---- the victim --------------------------------------------------------------------- */

static void victim(const char *c)
{
	struct ibv_qp *qp = make_qp(), *qp2 = NULL;
	struct info me = { 0 }, peer;
	int (*quiesce)(int) = (int (*)(int))tsym("mana_emu_quiesce");

	CHECK(qp, "victim QP");
	me.qpn = qp->qp_num;
	me.va = (uintptr_t)buf;
	me.gid = gid;
	/* the rkey travels only where the peer is meant to have it */
	me.rkey = strcmp(c, "rkey") ? mr->rkey : 0;
	if (!strcmp(c, "mw")) {
		mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		CHECK(mw, "victim's memory window: %s", strerror(errno));
		me.rkey = mw ? mw->rkey : 0;
		/* the first refused WRITE puts qp in ERR: a second one */
		qp2 = make_qp();
		CHECK(qp2, "victim's second QP");
		me.qpn2 = qp2 ? qp2->qp_num : 0;
	}
	send_info(&me);
	CHECK(!recv_info(&peer), "attacker's info");
	if (!strcmp(c, "ghost")) {
		/* towards the attacker's second QP, which never answers */
		CHECK(!connect_qp(qp, peer.qpn2, &peer.gid, A_PSN, V_PSN, 16, 2),
		      "victim connected");
		CHECK(!write_wr(qp, BUF_SIZE, 0x10000, 0x1234), "1 MiB WRITE posted");
		/* fetched (all 1024 PSNs) and its first 256 packets sent */
		CHECK(quiesce && !quiesce(10000) && !quiesce(10000),
		      "device idle");
		say("posted");
		CHECK(!hear("forged"), "attacker forged its ACK");
		CHECK(wait_wc() == IBV_WC_RETRY_EXC_ERR,
		      "the WRITE nobody received is not acknowledged by a ghost ACK");
		return;
	}
	CHECK(!connect_qp(qp, peer.qpn, &peer.gid, A_PSN, V_PSN, 14, 7),
	      "victim connected");
	if (qp2)
		CHECK(!connect_qp(qp2, peer.qpn2, &peer.gid, A_PSN, V_PSN, 14,
				  7), "victim's second QP connected");
	say("ready");
	if (!strcmp(c, "dereg")) {
		int i;

		/* the first packet of the attacker's WRITE lands */
		for (i = 0; i < POLL_LIMIT && buf[1023] != 0x5a; i++)
			usleep(100);
		CHECK(buf[0] == 0x5a && buf[1023] == 0x5a,
		      "the WRITE's first packet landed");
		CHECK(!ibv_dereg_mr(mr), "dereg");
		mr = NULL;
		/* freed and mapped again: the same address, new pages */
		CHECK(!munmap(buf, BUF_SIZE), "munmap");
		CHECK(mmap(buf, BUF_SIZE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == buf,
		      "mapped again");
		say("dereg");
		CHECK(!hear("done"), "attacker done");
		CHECK(all_zero(buf, BUF_SIZE),
		      "no byte of the WRITE landed after ibv_dereg_mr()");
		CHECK(async_event(qp, 60000) == IBV_EVENT_QP_ACCESS_ERR,
		      "the victim got IBV_EVENT_QP_ACCESS_ERR");
		CHECK(qp_state(qp) == IBV_QPS_ERR,
		      "the victim's QP went to ERR (remote access error)");
	} else if (!strcmp(c, "dupread")) {
		CHECK(!hear("done"), "attacker done");
		CHECK(qp_state(qp) == IBV_QPS_RTS,
		      "forged duplicate READs left the victim's QP in RTS");
		/* the device would have raised an event before that WRITE */
		CHECK(async_event(qp, 0) == -1, "no async event on the victim");
		CHECK(buf[0] == 0x5a && buf[4095] == 0x5a,
		      "the WRITE after them landed");
	} else if (!strcmp(c, "rkey")) {
		CHECK(!hear("done"), "attacker done");
		CHECK(all_zero(buf, BUF_SIZE),
		      "nothing landed through a guessed rkey");
	} else if (!strcmp(c, "mw")) {
		CHECK(!hear("done"), "attacker done");
		CHECK(all_zero(buf, BUF_SIZE),
		      "nothing landed through the window");
		CHECK(mw && !ibv_dealloc_mw(mw), "window deallocated");
		mw = NULL;
		say("revoked");
		CHECK(!hear("done"), "attacker done again");
		CHECK(all_zero(buf, BUF_SIZE),
		      "nothing landed through the deallocated window");
	}
	if (qp2)
		ibv_destroy_qp(qp2);
	ibv_destroy_qp(qp);
}

/* ---- the attacker ------------------------------------------------------------------- */

static void attacker(const char *c)
{
	int (*forge)(uint32_t, const struct mana_emu_rc_pkt *) =
		(int (*)(uint32_t, const struct mana_emu_rc_pkt *))
		tsym("mana_emu_rc_forge");
	int (*hold)(int) = (int (*)(int))tsym("mana_emu_rc_wire_hold");
	struct ibv_qp *qp = make_qp(), *qp2 = make_qp();
	struct info me = { 0 }, peer;
	int st;

	CHECK(qp && qp2, "attacker QPs");
	if (!forge || !hold || !qp || !qp2)
		return;
	CHECK(!recv_info(&peer), "victim's info");
	me.qpn = qp->qp_num;
	me.qpn2 = qp2->qp_num;	/* left in INIT: drops what it gets */
	me.gid = gid;
	send_info(&me);
	memset(buf, 0x5a, 4096);
	if (!strcmp(c, "ghost")) {
		struct mana_emu_rc_pkt ack = {
			.opcode = 0x11,		/* ACKNOWLEDGE */
			.syndrome = 0x1f,	/* ACK, credits invalid */
			/* the 1 MiB WRITE's last PSN: fetched, never sent */
			.psn = (V_PSN + BUF_SIZE / 1024 - 1) & 0xffffff,
			.msn = 1,
		};

		CHECK(!connect_qp(qp, peer.qpn, &peer.gid, V_PSN, A_PSN, 0, 7),
		      "attacker connected");
		CHECK(!hear("posted"), "victim posted");
		CHECK(!forge(qp->qp_num, &ack), "ghost ACK forged");
		say("forged");
		goto out;
	}
	/* dereg: no retransmission while its packets are held */
	CHECK(!connect_qp(qp, peer.qpn, &peer.gid, V_PSN, A_PSN,
			  strcmp(c, "dereg") ? 14 : 0, 7),
	      "attacker connected");
	CHECK(!hear("ready"), "victim ready");
	if (!strcmp(c, "dereg")) {
		/* 4 packets: the first goes, the rest wait for the dereg */
		CHECK(!hold(1), "wire held after one packet");
		CHECK(!write_wr(qp, 4096, peer.va, peer.rkey), "WRITE posted");
		CHECK(!hear("dereg"), "victim deregistered");
		CHECK(!hold(-1), "wire released");
		st = wait_wc();
		CHECK(st == IBV_WC_REM_ACCESS_ERR,
		      "a WRITE into a deregistered MR: remote access error (%d)",
		      st);
	} else if (!strcmp(c, "dupread")) {
		/* 5 PSNs behind the victim's expected one: "duplicates" */
		struct mana_emu_rc_pkt rd = {
			.opcode = 0x0c,		/* RDMA READ request */
			.ack_req = 1,
			.psn = A_PSN - 5,
			.va = 0xdead0000, .rkey = 0xbad, .dma_len = 4096,
		};

		CHECK(!forge(qp->qp_num, &rd), "duplicate READ, bad rkey");
		/* a good rkey, but the victim never executed such a READ */
		rd.psn = A_PSN - 3;
		rd.va = peer.va;
		rd.rkey = peer.rkey;
		CHECK(!forge(qp->qp_num, &rd), "duplicate READ, never executed");
		CHECK(!write_wr(qp, 4096, peer.va, peer.rkey), "WRITE posted");
		st = wait_wc();
		CHECK(st == IBV_WC_SUCCESS,
		      "the WRITE after forged duplicates completes (%d)", st);
	} else if (!strcmp(c, "mw")) {
		CHECK(!write_wr(qp, 4096, peer.va, peer.rkey),
		      "WRITE through the window posted");
		st = wait_wc();
		CHECK(st == IBV_WC_REM_ACCESS_ERR,
		      "a WRITE through an unbound window: remote access error (%d)",
		      st);
		say("done");
		CHECK(!hear("revoked"), "victim deallocated the window");
		/* the first WRITE put qp in ERR: the second QP tries again */
		CHECK(!connect_qp(qp2, peer.qpn2, &peer.gid, V_PSN, A_PSN, 14,
				  7), "second attacker QP connected");
		CHECK(!write_wr(qp2, 4096, peer.va, peer.rkey),
		      "WRITE through the deallocated window posted");
		st = wait_wc();
		CHECK(st == IBV_WC_REM_ACCESS_ERR,
		      "a WRITE through a deallocated window: remote access error (%d)",
		      st);
	} else if (!strcmp(c, "rkey")) {
		/* every VM used to count its keys from the same value */
		CHECK(!write_wr(qp, 4096, peer.va, mr->rkey),
		      "WRITE with a guessed rkey posted");
		st = wait_wc();
		CHECK(st == IBV_WC_REM_ACCESS_ERR,
		      "the attacker's own first rkey is not the victim's (%d)",
		      st);
	}
	say("done");
out:
	ibv_destroy_qp(qp);
	ibv_destroy_qp(qp2);
}

int main(int argc, char **argv)
{
	bool is_victim;

	if (argc != 3 || (strcmp(argv[2], "victim") &&
			  strcmp(argv[2], "attacker"))) {
		fprintf(stderr, "usage: %s dereg|ghost|dupread|rkey|mw victim|attacker\n",
			argv[0]);
		return 2;
	}
	is_victim = !strcmp(argv[2], "victim");
	in = fdopen(3, "r");
	out = fdopen(4, "w");
	CHECK(in && out, "peer channel on fds 3 and 4");
	ctx = emu_open_rnic();
	CHECK(ctx, "device opened");
	if (!in || !out || !ctx)
		return check_done();
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	buf = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(pd && cq && buf != MAP_FAILED, "PD, CQ, buffer");
	CHECK(!ibv_query_gid(ctx, 1, 1, &gid), "GID 1");
	mr = ibv_reg_mr(pd, buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	CHECK(mr, "MR");
	if (!pd || !cq || buf == MAP_FAILED || !mr)
		return check_done();
	if (is_victim)
		victim(argv[1]);
	else
		attacker(argv[1]);
	if (mr)
		ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	munmap(buf, BUF_SIZE);
	return check_done();
}
