// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dma-buf MRs (issue 22) through Debian's libibverbs and our libmana: the
 * dma-buf comes from the emulated VM's /dev/udmabuf (a memfd sealed
 * against shrinking), as a program would make one on a VM with udmabuf.
 *
 *   test_dmabuf local   mana_ib 6.15 on: a dma-buf MR as RDMA WRITE target
 *                       and READ source of an RC QP, its bytes seen through
 *                       the memfd and through an mmap of the dma-buf, the
 *                       MR outliving the dma-buf's fd; the bad inputs of
 *                       ib_umem_dmabuf_get and udmabuf
 *   test_dmabuf old     before 6.15: ibv_reg_dmabuf_mr EOPNOTSUPP
 *
 * Run under mana-emu with --ip.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/udmabuf.h>
#include <infiniband/verbs.h>

#include "check.h"
#include "emu_client.h"

#define BUF_LEN (64u * 1024)
#define MR_OFF 4096u
#define MR_LEN (32u * 1024)
#define MR_IOVA 0x7000ull	/* same offset in its page as MR_OFF */

struct end {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *buf;
	struct ibv_mr *mr;
};

static struct ibv_context *ctx;
static int gid_index;
static union ibv_gid gid;
static enum ibv_mtu mtu;

static struct ibv_context *open_rc_device(void)
{
	struct ibv_device **list;
	struct ibv_context *c = NULL;
	int i, n;

	/* mana_0 carries RC QPs in every era (the RNIC device once split) */
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "mana_0"))
			c = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return c;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

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
		p[i] = (uint8_t)(i * 11 + seed * 29 + (i >> 9));
}

static bool same(const uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (uint8_t)(i * 11 + seed * 29 + (i >> 9)))
			return false;
	return true;
}

static int end_open(struct end *e)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	e->pd = ibv_alloc_pd(ctx);
	e->cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	e->buf = aligned_alloc(4096, BUF_LEN);
	if (!e->pd || !e->cq || !e->buf)
		return -1;
	memset(e->buf, 0, BUF_LEN);
	e->mr = ibv_reg_mr(e->pd, e->buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	qa.send_cq = qa.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &qa);
	return e->mr && e->qp ? 0 : -1;
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
	memset(e, 0, sizeof(*e));
}

static int connect_to(struct end *e, uint32_t dqpn)
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
	a.path_mtu = mtu;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = (uint8_t)gid_index;
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

static enum ibv_wc_status rdma(struct end *e, enum ibv_wr_opcode op,
			       uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)e->buf, len, e->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	struct ibv_wc wc;

	if (ibv_post_send(e->qp, &wr, &bad) || wait_wc(e->cq, &wc) != 1)
		return IBV_WC_GENERAL_ERR;
	return wc.status;
}

/* A memfd of @len bytes with @seals added. */
static int memfd(size_t len, int seals)
{
	int fd = memfd_create("test_dmabuf", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0 || ftruncate(fd, (off_t)len) ||
	    (seals && fcntl(fd, F_ADD_SEALS, seals))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* UDMABUF_CREATE: the dma-buf's fd, or -errno. */
static int udmabuf(int dev, int mfd, uint32_t flags, uint64_t off,
		   uint64_t size)
{
	struct udmabuf_create c = { .memfd = (uint32_t)mfd, .flags = flags,
				    .offset = off, .size = size };
	int fd = ioctl(dev, UDMABUF_CREATE, &c);

	return fd < 0 ? -errno : fd;
}

static void udmabuf_bad(int dev)
{
	int ok = memfd(BUF_LEN, F_SEAL_SHRINK);
	int unsealed = memfd(BUF_LEN, 0);
	int wsealed = memfd(BUF_LEN, F_SEAL_SHRINK | F_SEAL_WRITE);
	int pipefd[2] = { -1, -1 };

	CHECK(ok >= 0 && unsealed >= 0 && wsealed >= 0 && !pipe(pipefd),
	      "memfds");
	CHECK(udmabuf(dev, unsealed, 0, 0, 4096) == -EINVAL, "no SHRINK seal");
	CHECK(udmabuf(dev, wsealed, 0, 0, 4096) == -EINVAL, "WRITE seal");
	CHECK(udmabuf(dev, pipefd[0], 0, 0, 4096) == -EBADFD, "a pipe");
	CHECK(udmabuf(dev, 1000, 0, 0, 4096) == -EBADFD, "no such fd");
	CHECK(udmabuf(dev, ok, 0, 0, 0) == -EINVAL, "size 0");
	CHECK(udmabuf(dev, ok, 0, 100, 4096) == -EINVAL, "unaligned offset");
	CHECK(udmabuf(dev, ok, 0, 0, 100) == -EINVAL, "unaligned size");
	CHECK(udmabuf(dev, ok, 0, 4096, BUF_LEN) == -EINVAL, "past the memfd");
	CHECK(udmabuf(dev, ok, 2, 0, 4096) == -EINVAL, "unknown flag");
	CHECK(ioctl(dev, _IO('u', 0x99), 0) < 0 && errno == ENOTTY,
	      "unknown ioctl");
	close(ok);
	close(unsealed);
	close(wsealed);
	close(pipefd[0]);
	close(pipefd[1]);
}

static void reg_bad(struct ibv_pd *pd, int dfd, int mfd)
{
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_mr *mr;

#define BAD(off, len, iova, fd, access, want, what)                            \
	do {                                                                   \
		errno = 0;                                                     \
		mr = ibv_reg_dmabuf_mr(pd, off, len, iova, fd, access);        \
		CHECK(!mr && errno == (want), "%s: errno %d (%s)", what,       \
		      errno, strerror(errno));                                 \
		if (mr)                                                        \
			ibv_dereg_mr(mr);                                      \
	} while (0)

	BAD(0, 4096, 0, mfd, acc, EINVAL, "a memfd is no dma-buf");
	BAD(0, 4096, 0, 1000, acc, EBADF, "a closed fd");
	BAD(1, 4096, 0, dfd, acc, EINVAL, "offset and iova in other page spots");
	BAD(0, BUF_LEN + 4096, 0, dfd, acc, EINVAL, "past the dma-buf");
	BAD(BUF_LEN, 1, 0, dfd, acc, EINVAL, "starts at the end");
	BAD(UINT64_MAX & ~4095ull, 8192, 0, dfd, acc, EINVAL, "wraps");
	BAD(0, 0, 0, dfd, acc, EINVAL, "empty");
	BAD(0, 4096, 0, dfd, acc | IBV_ACCESS_MW_BIND, EINVAL, "MW_BIND");
	BAD(0, 4096, 0, dfd, IBV_ACCESS_REMOTE_WRITE, EINVAL,
	    "remote write without local write");
	if (emu_kernel_version() < 6016)
		BAD(0, 4096, 0, dfd, acc | IBV_ACCESS_REMOTE_ATOMIC, EOPNOTSUPP,
		    "REMOTE_ATOMIC before 6.16");
#undef BAD
}

static void run_local(void)
{
	struct end e = {}, f = {};
	struct mana_emu_counts c0, c1;
	struct ibv_mr *mr = NULL;
	uint8_t *mem = MAP_FAILED, *dmem = MAP_FAILED;
	int dev, mfd, dfd;

	CHECK(!emu_counts(&c0), "counts");
	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	CHECK(dev >= 0, "open /dev/udmabuf: %s", strerror(errno));
	mfd = memfd(BUF_LEN, F_SEAL_SHRINK);
	CHECK(mfd >= 0, "memfd");
	if (dev < 0 || mfd < 0)
		return;
	udmabuf_bad(dev);
	dfd = udmabuf(dev, mfd, UDMABUF_FLAGS_CLOEXEC, 0, BUF_LEN);
	CHECK(dfd >= 0, "UDMABUF_CREATE: %s", strerror(-dfd));
	if (dfd < 0)
		return;
	mem = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	dmem = mmap(NULL, BUF_LEN, PROT_READ, MAP_SHARED, dfd, 0);
	CHECK(mem != MAP_FAILED && dmem != MAP_FAILED, "mmap memfd, dma-buf");
	CHECK(mmap(NULL, BUF_LEN * 2, PROT_READ, MAP_SHARED, dfd, 0) ==
	      MAP_FAILED && errno == EINVAL, "mmap past the dma-buf");
	if (mem == MAP_FAILED || dmem == MAP_FAILED)
		return;
	if (end_open(&e) || end_open(&f) || connect_to(&e, f.qp->qp_num) ||
	    connect_to(&f, e.qp->qp_num)) {
		CHECK(0, "two connected RC QPs");
		goto out;
	}
	reg_bad(f.pd, dfd, mfd);
	mr = ibv_reg_dmabuf_mr(f.pd, MR_OFF, MR_LEN, MR_IOVA, dfd,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			       IBV_ACCESS_REMOTE_READ);
	CHECK(mr, "ibv_reg_dmabuf_mr: %s", strerror(errno));
	if (!mr)
		goto out;
	/* the WRITE lands in the memfd's pages, at the MR's offset */
	fill(e.buf, MR_LEN, 3);
	CHECK(rdma(&e, IBV_WR_RDMA_WRITE, MR_LEN, MR_IOVA, mr->rkey) ==
	      IBV_WC_SUCCESS, "WRITE to the dma-buf MR");
	CHECK(same(mem + MR_OFF, MR_LEN, 3), "memfd holds the WRITE");
	CHECK(same(dmem + MR_OFF, MR_LEN, 3), "so does the dma-buf's mmap");
	CHECK(mem[MR_OFF - 1] == 0 && mem[MR_OFF + MR_LEN] == 0,
	      "nothing around the MR written");
	/* READ gives what the CPU wrote */
	fill(mem + MR_OFF + 100, 1000, 4);
	memset(e.buf, 0, 1000);
	CHECK(rdma(&e, IBV_WR_RDMA_READ, 1000, MR_IOVA + 100, mr->rkey) ==
	      IBV_WC_SUCCESS, "READ from the dma-buf MR");
	CHECK(same(e.buf, 1000, 4), "READ returns the memfd's bytes");
	/* outside the MR: refused */
	CHECK(rdma(&e, IBV_WR_RDMA_WRITE, 8, MR_IOVA - 4, mr->rkey) ==
	      IBV_WC_REM_ACCESS_ERR, "WRITE below the MR's iova");
	CHECK(mem[MR_OFF - 4] == 0, "memory below untouched");
	/* the PD goes only after its MR */
	CHECK_ERRNO(ibv_dereg_mr(mr), 0);
	mr = NULL;
	end_close(&e);
	end_close(&f);
	/* the MR holds the dma-buf: its fd may go */
	if (end_open(&e) || end_open(&f) || connect_to(&e, f.qp->qp_num) ||
	    connect_to(&f, e.qp->qp_num)) {
		CHECK(0, "two more connected RC QPs");
		goto out;
	}
	mr = ibv_reg_dmabuf_mr(f.pd, 0, BUF_LEN, 0, dfd,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(mr, "a second dma-buf MR: %s", strerror(errno));
	CHECK(!close(dfd), "close the dma-buf fd");
	dfd = -1;
	if (mr) {
		fill(e.buf, 512, 5);
		CHECK(rdma(&e, IBV_WR_RDMA_WRITE, 512, 60000, mr->rkey) ==
		      IBV_WC_SUCCESS, "WRITE after the fd closed");
		CHECK(same(mem + 60000, 512, 5), "landed in the memfd");
	}
out:
	if (mr)
		ibv_dereg_mr(mr);
	end_close(&e);
	end_close(&f);
	munmap(mem, BUF_LEN);
	munmap(dmem, BUF_LEN);
	if (dfd >= 0)
		close(dfd);
	close(mfd);
	close(dev);
	CHECK(!emu_counts(&c1) && c1.mrs == c0.mrs, "MRs left: %u", c1.mrs);
}

static void run_old(void)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	int dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	int mfd = memfd(BUF_LEN, F_SEAL_SHRINK), dfd = -1;
	struct ibv_mr *mr;

	CHECK(pd && dev >= 0 && mfd >= 0, "PD, udmabuf, memfd");
	if (dev >= 0 && mfd >= 0)
		dfd = udmabuf(dev, mfd, 0, 0, BUF_LEN);
	CHECK(dfd >= 0, "the VM's udmabuf works in every era");
	if (pd && dfd >= 0) {
		errno = 0;
		mr = ibv_reg_dmabuf_mr(pd, 0, 4096, 0, dfd,
				       IBV_ACCESS_LOCAL_WRITE);
		CHECK(!mr && errno == EOPNOTSUPP, "before 6.15: errno %d",
		      errno);
	}
	if (dfd >= 0)
		close(dfd);
	if (mfd >= 0)
		close(mfd);
	if (dev >= 0)
		close(dev);
	if (pd)
		ibv_dealloc_pd(pd);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	struct ibv_port_attr pa;
	int i;

	ctx = open_rc_device();
	CHECK(ctx, "open mana_0");
	if (!ctx)
		return check_done();
	gid_index = -1;
	if (!ibv_query_port(ctx, 1, &pa)) {
		mtu = pa.active_mtu;
		for (i = 0; i < pa.gid_tbl_len && gid_index < 0; i++)
			if (!ibv_query_gid(ctx, 1, i, &gid) &&
			    gid.raw[10] == 0xff && gid.raw[11] == 0xff)
				gid_index = i;
	}
	if (!strcmp(mode, "local")) {
		CHECK(gid_index >= 0, "an IPv4 GID (run with --ip)");
		if (gid_index >= 0)
			run_local();
	} else if (!strcmp(mode, "old")) {
		run_old();
	} else {
		fprintf(stderr, "usage: %s local|old\n", argv[0]);
		return 2;
	}
	ibv_close_device(ctx);
	return check_done();
}
