// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device memory (issue 22) through Debian's libibverbs and our libmana on
 * the emulated RNIC (mana_0; mana_ib 7.0 on):
 *
 *   test_dm local       one VM: ibv_memcpy_to_dm / from_dm round trips
 *                       (offsets, sizes across the copier's chunks), a
 *                       DM MR as RDMA WRITE target, READ source and local
 *                       SGE of a SEND, and the bad inputs: copies and MRs
 *                       past the DM, an MR without ZERO_BASED, FREE_DM
 *                       under an MR, too much DM, an unknown comp_mask
 *   test_dm old         a kernel before DM: ibv_alloc_dm EOPNOTSUPP
 *   test_dm target      two VMs (test_dm_vms.sh; fds 3 in, 4 out): the DM
 *   test_dm initiator   and the peer that READs and WRITEs it
 *
 * Run under mana-emu with --kernel=7.0 or later and --ip.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "check.h"
#include "emu_client.h"

#define DM_LEN 8192u
#define HOST_LEN 65536u

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *buf;
	struct ibv_mr *mr;
	int gid_index;
	union ibv_gid gid;
	enum ibv_mtu mtu;
};

/* what the two VMs tell each other */
struct wire_info {
	uint32_t qpn, rkey;
	uint64_t dm_len;
	union ibv_gid gid;
};

static struct ibv_context *open_rnic(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	/* mana_0 is the RNIC device in every era that has DM */
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "mana_0"))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One completion; the bound only keeps a broken build from hanging. */
static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	double end = now() + 60;
	int n;

	while (now() < end) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		usleep(50);
	}
	return 0;
}

static void fill(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + seed * 13 + (i >> 8));
}

static bool same(const uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (uint8_t)(i * 7 + seed * 13 + (i >> 8)))
			return false;
	return true;
}

static int end_open(struct end *e)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 2, .max_recv_sge = 1 },
	};
	struct ibv_port_attr pa;
	int i;

	e->ctx = e->ctx ? e->ctx : open_rnic();
	CHECK(e->ctx, "open mana_0");
	if (!e->ctx)
		return -1;
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = ibv_create_cq(e->ctx, 16, NULL, NULL, 0);
	e->buf = aligned_alloc(4096, HOST_LEN);
	if (!e->pd || !e->cq || !e->buf)
		return -1;
	memset(e->buf, 0, HOST_LEN);
	e->mr = ibv_reg_mr(e->pd, e->buf, HOST_LEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	qa.send_cq = qa.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &qa);
	CHECK(e->mr && e->qp, "MR and RC QP: %s", strerror(errno));
	if (!e->mr || !e->qp || ibv_query_port(e->ctx, 1, &pa))
		return -1;
	e->mtu = pa.active_mtu;
	e->gid_index = -1;
	for (i = 0; i < pa.gid_tbl_len && e->gid_index < 0; i++)
		if (!ibv_query_gid(e->ctx, 1, i, &e->gid) &&
		    e->gid.raw[10] == 0xff && e->gid.raw[11] == 0xff)
			e->gid_index = i;
	CHECK(e->gid_index >= 0, "an IPv4 GID on port 1 (run with --ip)");
	return e->gid_index >= 0 ? 0 : -1;
}

static void end_close(struct end *e)
{
	if (e->qp)
		ibv_destroy_qp(e->qp);
	if (e->mr)
		ibv_dereg_mr(e->mr);
	if (e->cq)
		ibv_destroy_cq(e->cq);
	if (e->pd)
		ibv_dealloc_pd(e->pd);
	free(e->buf);
	e->qp = NULL;
	e->mr = NULL;
	e->cq = NULL;
	e->pd = NULL;
	e->buf = NULL;
}

static int connect_to(struct end *e, uint32_t dqpn, const union ibv_gid *dgid)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	int ret;

	ret = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = e->mtu;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = *dgid;
	a.ah_attr.grh.sgid_index = (uint8_t)e->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	ret = ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* One RDMA WRITE or READ between host buffer and a remote (DM) MR. */
static enum ibv_wc_status rdma(struct end *e, enum ibv_wr_opcode op,
			       uint32_t host_off, uint32_t len,
			       uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)e->buf + host_off, len, e->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	struct ibv_wc wc;

	if (ibv_post_send(e->qp, &wr, &bad))
		return IBV_WC_GENERAL_ERR;
	if (wait_wc(e->cq, &wc) != 1)
		return IBV_WC_GENERAL_ERR;
	return wc.status;
}

static struct ibv_dm *alloc_dm(struct ibv_context *ctx, uint64_t len)
{
	struct ibv_alloc_dm_attr attr = { .length = len };

	return ibv_alloc_dm(ctx, &attr);
}

static void copies(struct ibv_dm *dm)
{
	static const struct { uint64_t off, len; } cases[] = {
		{ 0, DM_LEN }, { 0, 1 }, { DM_LEN - 1, 1 }, { 13, 4000 },
		{ 4096, 4096 }, { 100, 0 },
	};
	uint8_t *in = malloc(DM_LEN), *out = malloc(DM_LEN);
	unsigned int i;

	if (!in || !out)
		goto out;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fill(in, cases[i].len, i + 1);
		memset(out, 0xee, DM_LEN);
		CHECK_ERRNO(ibv_memcpy_to_dm(dm, cases[i].off, in, cases[i].len), 0);
		CHECK_ERRNO(ibv_memcpy_from_dm(out, dm, cases[i].off,
					       cases[i].len), 0);
		CHECK(same(out, cases[i].len, i + 1) &&
		      (cases[i].len == DM_LEN || out[cases[i].len] == 0xee),
		      "copy %u: %" PRIu64 " bytes at %" PRIu64, i,
		      cases[i].len, cases[i].off);
	}
	/* a later copy does not disturb bytes around it */
	fill(in, DM_LEN, 40);
	CHECK_ERRNO(ibv_memcpy_to_dm(dm, 0, in, DM_LEN), 0);
	memset(out, 0x5a, 100);
	CHECK_ERRNO(ibv_memcpy_to_dm(dm, 1000, out, 100), 0);
	CHECK_ERRNO(ibv_memcpy_from_dm(out, dm, 0, DM_LEN), 0);
	CHECK(!memcmp(out, in, 1000) && out[1000] == 0x5a &&
	      out[1099] == 0x5a && !memcmp(out + 1100, in + 1100, DM_LEN - 1100),
	      "neighbours of a copy");
	/* past the end: EINVAL, nothing copied */
	CHECK_ERRNO(ibv_memcpy_to_dm(dm, DM_LEN - 10, in, 11), EINVAL);
	CHECK_ERRNO(ibv_memcpy_from_dm(out, dm, DM_LEN + 1, 0), EINVAL);
	CHECK_ERRNO(ibv_memcpy_from_dm(out, dm, UINT64_MAX, 2), EINVAL);
out:
	free(in);
	free(out);
}

/* Two QPs in one VM: the DM as remote target and source, and as local SGE. */
static void local_rdma(struct end *e, struct end *f, struct ibv_dm *dm)
{
	const unsigned int acc = IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_mr *dmr = ibv_reg_dm_mr(f->pd, dm, 0, DM_LEN, acc);
	struct ibv_mr *part = ibv_reg_dm_mr(f->pd, dm, 4096, 4096, acc);
	uint8_t *chk = malloc(DM_LEN);

	CHECK(dmr && part && chk, "reg_dm_mr: %s", strerror(errno));
	if (!dmr || !part || !chk)
		goto out;
	CHECK(dmr->addr == NULL && dmr->length == DM_LEN, "DM MR addr/length");
	/* WRITE into the DM, read back with memcpy_from_dm */
	fill(e->buf, DM_LEN, 77);
	CHECK(rdma(e, IBV_WR_RDMA_WRITE, 0, DM_LEN, 0, dmr->rkey) ==
	      IBV_WC_SUCCESS, "WRITE to DM");
	CHECK_ERRNO(ibv_memcpy_from_dm(chk, dm, 0, DM_LEN), 0);
	CHECK(same(chk, DM_LEN, 77), "DM holds the WRITE");
	/* READ from the DM (the partial MR: offset 0 is DM byte 4096) */
	fill(chk, 4096, 78);
	CHECK_ERRNO(ibv_memcpy_to_dm(dm, 4096, chk, 4096), 0);
	memset(e->buf + 8192, 0, 4096);
	CHECK(rdma(e, IBV_WR_RDMA_READ, 8192, 4096, 0, part->rkey) ==
	      IBV_WC_SUCCESS, "READ from DM");
	CHECK(same(e->buf + 8192, 4096, 78), "READ returns the DM's bytes");
	/* past the partial MR: remote access error, DM untouched */
	CHECK(rdma(e, IBV_WR_RDMA_WRITE, 0, 16, 4090, part->rkey) ==
	      IBV_WC_REM_ACCESS_ERR, "WRITE past a DM MR");
	CHECK_ERRNO(ibv_memcpy_from_dm(chk, dm, 4096, 4096), 0);
	CHECK(same(chk, 4096, 78), "DM untouched by the refused WRITE");
out:
	if (part)
		ibv_dereg_mr(part);
	if (dmr)
		ibv_dereg_mr(dmr);
	free(chk);
}

/* A DM MR as the local SGE of a SEND: the peer receives the DM's bytes. */
static void local_sge(struct ibv_context *ctx, struct ibv_dm *dm)
{
	struct end e = { .ctx = ctx }, f = { .ctx = ctx };
	struct ibv_mr *dmr = NULL;
	struct ibv_sge sge, rsge;
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_recv_wr rwr = {}, *rbad;
	uint8_t *pat = malloc(2048);
	struct ibv_wc wc;

	if (!pat || end_open(&e) || end_open(&f) ||
	    connect_to(&e, f.qp->qp_num, &f.gid) ||
	    connect_to(&f, e.qp->qp_num, &e.gid)) {
		CHECK(0, "two connected QPs");
		goto out;
	}
	dmr = ibv_reg_dm_mr(e.pd, dm, 0, DM_LEN,
			    IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE);
	CHECK(dmr, "local DM MR: %s", strerror(errno));
	if (!dmr)
		goto out;
	fill(pat, 2048, 91);
	CHECK_ERRNO(ibv_memcpy_to_dm(dm, 100, pat, 2048), 0);
	rsge = (struct ibv_sge){ (uintptr_t)f.buf, 4096, f.mr->lkey };
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	CHECK_ERRNO(ibv_post_recv(f.qp, &rwr, &rbad), 0);
	sge = (struct ibv_sge){ 100, 2048, dmr->lkey };	/* zero-based */
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	CHECK_ERRNO(ibv_post_send(e.qp, &wr, &bad), 0);
	CHECK(wait_wc(e.cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS,
	      "SEND from DM: %s", ibv_wc_status_str(wc.status));
	CHECK(wait_wc(f.cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
	      wc.byte_len == 2048, "receive of the DM's SEND");
	CHECK(same(f.buf, 2048, 91), "the SEND carried the DM's bytes");
out:
	if (dmr)
		ibv_dereg_mr(dmr);
	end_close(&e);
	end_close(&f);
	free(pat);
}

static void bad_inputs(struct ibv_context *ctx, struct ibv_pd *pd,
		       struct ibv_dm *dm)
{
	const unsigned int acc = IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE;
	struct ibv_alloc_dm_attr attr = { .length = 64, .comp_mask = 1 };
	struct ibv_mr *mr;
	struct ibv_dm *big;

	errno = 0;
	mr = ibv_reg_dm_mr(pd, dm, 0, DM_LEN + 1, acc);
	CHECK(!mr && errno == EINVAL, "MR longer than the DM: errno %d", errno);
	errno = 0;
	mr = ibv_reg_dm_mr(pd, dm, DM_LEN, 1, acc);
	CHECK(!mr && errno == EINVAL, "MR past the DM: errno %d", errno);
	errno = 0;
	mr = ibv_reg_dm_mr(pd, dm, UINT64_MAX, 2, acc);
	CHECK(!mr && errno == EINVAL, "MR offset wraps: errno %d", errno);
	errno = 0;
	mr = ibv_reg_dm_mr(pd, dm, 0, 64, IBV_ACCESS_LOCAL_WRITE);
	CHECK(!mr && errno == EINVAL, "MR without ZERO_BASED: errno %d", errno);
	errno = 0;
	mr = ibv_reg_dm_mr(pd, dm, 0, 64, acc | 1u << 8);
	CHECK(!mr && errno == EINVAL, "unknown access bit: errno %d", errno);
	/* a DM with an MR on it: EBUSY, then free after the MR */
	mr = ibv_reg_dm_mr(pd, dm, 0, 64, acc);
	CHECK(mr, "MR at the start: %s", strerror(errno));
	if (mr) {
		CHECK_ERRNO(ibv_free_dm(dm), EBUSY);
		CHECK_ERRNO(ibv_dereg_mr(mr), 0);
	}
	errno = 0;
	big = alloc_dm(ctx, 64ull << 20);
	CHECK(!big && errno == EPROTO, "64 MiB of DM: errno %d", errno);
	errno = 0;
	big = alloc_dm(ctx, 0);
	CHECK(!big && errno == EPROTO, "0 bytes of DM: errno %d", errno);
	errno = 0;
	big = ibv_alloc_dm(ctx, &attr);
	CHECK(!big && errno == EINVAL, "comp_mask 1: errno %d", errno);
}

static void run_local(void)
{
	struct end e = {}, f = {};
	struct mana_emu_counts c0, c1;
	struct ibv_dm *dm;

	e.ctx = open_rnic();
	CHECK(e.ctx, "open mana_0");
	if (!e.ctx)
		return;
	f.ctx = e.ctx;
	CHECK(!emu_counts(&c0), "object counts");
	dm = alloc_dm(e.ctx, DM_LEN);
	CHECK(dm, "ibv_alloc_dm: %s", strerror(errno));
	if (!dm)
		return;
	copies(dm);
	if (!end_open(&e) && !end_open(&f) &&
	    !connect_to(&e, f.qp->qp_num, &f.gid) &&
	    !connect_to(&f, e.qp->qp_num, &e.gid))
		local_rdma(&e, &f, dm);
	else
		CHECK(0, "two connected QPs");
	end_close(&e);
	end_close(&f);
	local_sge(e.ctx, dm);
	f.pd = ibv_alloc_pd(e.ctx);
	if (f.pd)
		bad_inputs(e.ctx, f.pd, dm);
	CHECK_ERRNO(ibv_free_dm(dm), 0);
	if (f.pd)
		ibv_dealloc_pd(f.pd);
	CHECK(!emu_counts(&c1) && c1.dms == c0.dms, "DMs left: %u", c1.dms);
	ibv_close_device(e.ctx);
	CHECK(!emu_counts(&c1) && !c1.dms && !c1.qps && !c1.mrs,
	      "after close: %u DMs, %u QPs, %u MRs", c1.dms, c1.qps, c1.mrs);
}

static void run_old(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_dm *dm;
	int i, n;

	/* every device of the era: none has DM */
	list = ibv_get_device_list(&n);
	CHECK(list && n > 0, "devices");
	for (i = 0; list && i < n; i++) {
		ctx = ibv_open_device(list[i]);
		CHECK(ctx, "open %s", ibv_get_device_name(list[i]));
		if (!ctx)
			continue;
		errno = 0;
		dm = alloc_dm(ctx, 4096);
		CHECK(!dm && errno == EOPNOTSUPP, "%s: ibv_alloc_dm errno %d",
		      ibv_get_device_name(list[i]), errno);
		ibv_close_device(ctx);
	}
	if (list)
		ibv_free_device_list(list);
}

static bool xfer(int fd, void *p, size_t len, bool out)
{
	ssize_t n;

	while (len) {
		n = out ? write(fd, p, len) : read(fd, p, len);
		if (n <= 0)
			return false;
		p = (char *)p + n;
		len -= n;
	}
	return true;
}

/*
 * The DM's VM: bytes [0, 4096) written with ibv_memcpy_to_dm for the
 * peer to READ, [4096, 8192) for the peer to WRITE; checked after.
 */
static void run_target(void)
{
	struct wire_info me = {}, peer;
	struct end e = {};
	struct ibv_mr *dmr = NULL;
	struct ibv_dm *dm = NULL;
	uint8_t *b = malloc(DM_LEN);
	uint8_t verdict = 0;

	if (!b || end_open(&e))
		goto out;
	dm = alloc_dm(e.ctx, DM_LEN);
	CHECK(dm, "ibv_alloc_dm: %s", strerror(errno));
	if (!dm)
		goto out;
	fill(b, 4096, 5);
	CHECK_ERRNO(ibv_memcpy_to_dm(dm, 0, b, 4096), 0);
	dmr = ibv_reg_dm_mr(e.pd, dm, 0, DM_LEN, IBV_ACCESS_ZERO_BASED |
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ);
	CHECK(dmr, "reg_dm_mr: %s", strerror(errno));
	if (!dmr)
		goto out;
	me = (struct wire_info){ e.qp->qp_num, dmr->rkey, DM_LEN, e.gid };
	CHECK(xfer(4, &me, sizeof(me), true) && xfer(3, &peer, sizeof(peer), false),
	      "exchange");
	CHECK_ERRNO(connect_to(&e, peer.qpn, &peer.gid), 0);
	/* the peer says when it is done */
	CHECK(xfer(3, &verdict, 1, false) && verdict == 1, "peer done");
	CHECK_ERRNO(ibv_memcpy_from_dm(b, dm, 0, DM_LEN), 0);
	CHECK(same(b, 4096, 5), "the READ half is as written");
	CHECK(same(b + 4096, 4096, 6), "the peer's WRITE landed in DM");
	verdict = 2;
	xfer(4, &verdict, 1, true);
out:
	if (dmr)
		ibv_dereg_mr(dmr);
	end_close(&e);
	if (dm)
		CHECK_ERRNO(ibv_free_dm(dm), 0);
	if (e.ctx)
		ibv_close_device(e.ctx);
	free(b);
}

static void run_initiator(void)
{
	struct wire_info me = {}, peer;
	struct end e = {};
	uint8_t verdict = 1;

	if (end_open(&e))
		goto out;
	me = (struct wire_info){ e.qp->qp_num, 0, 0, e.gid };
	CHECK(xfer(3, &peer, sizeof(peer), false) && xfer(4, &me, sizeof(me), true),
	      "exchange");
	CHECK_ERRNO(connect_to(&e, peer.qpn, &peer.gid), 0);
	CHECK(rdma(&e, IBV_WR_RDMA_READ, 0, 4096, 0, peer.rkey) ==
	      IBV_WC_SUCCESS, "READ the peer's DM");
	CHECK(same(e.buf, 4096, 5), "READ gives what memcpy_to_dm wrote");
	fill(e.buf + 4096, 4096, 6);
	CHECK(rdma(&e, IBV_WR_RDMA_WRITE, 4096, 4096, 4096, peer.rkey) ==
	      IBV_WC_SUCCESS, "WRITE into the peer's DM");
	/* past the DM MR: the responder refuses */
	CHECK(rdma(&e, IBV_WR_RDMA_WRITE, 0, 8, peer.dm_len - 4, peer.rkey) ==
	      IBV_WC_REM_ACCESS_ERR, "WRITE past the peer's DM");
	xfer(4, &verdict, 1, true);
	CHECK(xfer(3, &verdict, 1, false) && verdict == 2, "target's verdict");
out:
	end_close(&e);
	if (e.ctx)
		ibv_close_device(e.ctx);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "local"))
		run_local();
	else if (!strcmp(mode, "old"))
		run_old();
	else if (!strcmp(mode, "target"))
		run_target();
	else if (!strcmp(mode, "initiator"))
		run_initiator();
	else {
		fprintf(stderr, "usage: %s local|old|target|initiator\n", argv[0]);
		return 2;
	}
	return check_done();
}
