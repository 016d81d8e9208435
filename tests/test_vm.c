// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One emulated VM, many processes (mana-emu --vm=NAME; issue 20).  Run in
 * pairs by tests/test_vm.sh, each process under its own mana-emu naming
 * the same VM, talking over a Unix socket at SOCK:
 *
 *   test_vm hold SOCK        a raw send QP on port 1 (holds its vport);
 *                            tells the peer its QPN and lkey, waits for it
 *   test_vm busy SOCK        a raw QP on port 1 fails as the era says
 *                            (ENODEV through 7.1, EBUSY from 7.2); one on
 *                            port 2 works, and its QPN and lkey differ
 *                            from the holder's (numbered VM-wide)
 *   test_vm raw [held]       a raw QP on port 1 works (the vport is free);
 *                            held: it fails as the era says (the VF is up
 *                            or another process holds the vport)
 *   test_vm events DIR       blocked in ibv_get_async_event, gets the
 *                            PORT_ERR and PORT_ACTIVE on port 1 that other
 *                            processes' `ip link set dev eth0 down|up`
 *                            cause (DIR/ready, DIR/err: where it is)
 *   test_vm primary SOCK N   DPDK's primary: queues in memfd memory at a
 *                            fixed address, passes its uverbs fd and the
 *                            memfd, then receives the N frames the
 *                            secondary sends on its SQ (content checked)
 *                            and reads the SQ's counters: N frames
 *   test_vm secondary SOCK   DPDK's secondary: maps the memfd at the same
 *                            address and the doorbell page through the
 *                            received fd (the same device file: fstat),
 *                            posts the frames on the primary's SQ and
 *                            waits for their completions in its CQ
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "emu_client.h"
#include "verbs_traffic.h"
#include "providers/mana/gdma.h"

/* both processes map here: not where ASan's allocator lives (0x6000...) */
/*
 * The shared memory: wherever the kernel puts it in the primary, at the
 * same address in the secondary (as DPDK's secondaries map the primary's
 * huge pages); a fixed address may be the sanitizer's allocator's (gcc
 * 14's ASan in Debian 13 sat at the one this test used to pick).
 */
static uint8_t *shm_base;
#define SHM_ADDR ((void *)shm_base)
#define SHM_SIZE (4u << 20)
#define FRAMES_OFF (2u << 20)			/* the secondary's frames */
#define RX_OFF (3u << 20)			/* the primary's RX buffers */
#define FRAME_SIZE 128
#define MAX_FRAMES 64
#define TAG 0x5ec0dd

struct info {
	uint32_t qpn, lkey;
	uint32_t sq_id, sq_size, tx_vp_offset, cq_id, cq_count, nframes;
	uint64_t sq_buf, cq_buf, shm;
};

static int sock_listen(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int l = socket(AF_UNIX, SOCK_STREAM, 0), c;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) || listen(l, 1))
		return -1;
	c = accept(l, NULL, NULL);
	close(l);
	return c;
}

/* The peer starts at the same time: wait until it listens. */
static int sock_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	while (s >= 0 && connect(s, (struct sockaddr *)&sa, sizeof(sa)))
		usleep(10000);
	return s;
}

static int send_info(int s, const struct info *in, const int *fds, int nfds)
{
	char cbuf[CMSG_SPACE(2 * sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)in, .iov_len = sizeof(*in) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (nfds) {
		m.msg_control = cbuf;
		m.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	return sendmsg(s, &m, 0) == sizeof(*in) ? 0 : -1;
}

static int recv_info(int s, struct info *out, int *fds, int nfds)
{
	char cbuf[CMSG_SPACE(2 * sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = out, .iov_len = sizeof(*out) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;

	if (recvmsg(s, &m, MSG_WAITALL) != sizeof(*out))
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (nfds && (!c || c->cmsg_type != SCM_RIGHTS ||
		     c->cmsg_len != CMSG_LEN(nfds * sizeof(int))))
		return -1;
	if (nfds)
		memcpy(fds, CMSG_DATA(c), nfds * sizeof(int));
	return 0;
}

static struct manadv_api api;

/* DPDK's queue memory: carved from the shared region, page aligned */
static size_t shm_used;

static void *shm_alloc(size_t size, void *data)
{
	uint8_t *p = (uint8_t *)SHM_ADDR + shm_used;

	(void)data;
	size = (size + 4095) & ~(size_t)4095;
	if (shm_used + size > FRAMES_OFF)
		return NULL;
	shm_used += size;
	memset(p, 0, size);
	return p;
}

static void shm_free(void *ptr, void *data)
{
	(void)ptr;
	(void)data;
}

/*
 * A raw send QP on @port: libmana takes the port from the parent domain's
 * pd_context, as DPDK passes it.  NULL and errno on failure.
 */
static struct ibv_qp *raw_qp(struct ibv_context *ctx, struct ibv_pd *pd,
			     struct ibv_cq *cq, uintptr_t port,
			     struct ibv_pd **parent)
{
	struct ibv_parent_domain_init_attr pa = {
		.pd = pd, .comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.pd_context = (void *)port,
	};
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_RAW_PACKET, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = MAX_FRAMES, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};

	*parent = ibv_alloc_parent_domain(ctx, &pa);
	if (!*parent)
		return NULL;
	qa.pd = *parent;
	return ibv_create_qp_ex(ctx, &qa);
}

/* What a case made, torn down in the order the kernel wants; NULLs skipped. */
static void put_objects(struct ibv_context *ctx, struct ibv_pd *pd,
			struct ibv_pd *parent, struct ibv_cq *cq,
			struct ibv_qp *qp, struct ibv_mr *mr)
{
	if (qp)
		ibv_destroy_qp(qp);
	if (parent)
		ibv_dealloc_pd(parent);
	if (cq)
		ibv_destroy_cq(cq);
	if (mr)
		ibv_dereg_mr(mr);
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx)
		ibv_close_device(ctx);
}

/* ---- vports and numbers ------------------------------------------------------ */

static void case_hold(const char *path)
{
	struct ibv_context *ctx = emu_open_mana();
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL, *parent = NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	static uint8_t buf[4096];
	struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf),
					    IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_qp *qp = cq ? raw_qp(ctx, pd, cq, 1, &parent) : NULL;
	struct info in = { 0 };
	int s;
	char c;

	CHECK(qp, "raw QP on port 1: %s", strerror(errno));
	CHECK(mr, "reg_mr: %s", strerror(errno));
	if (!qp || !mr)
		return;
	s = sock_listen(path);
	CHECK(s >= 0, "listen %s: %s", path, strerror(errno));
	in.qpn = qp->qp_num;
	in.lkey = mr->lkey;
	CHECK(!send_info(s, &in, NULL, 0), "send");
	/* until the peer is done (it closes) */
	CHECK(read(s, &c, 1) == 0, "the peer closed");
	close(s);
	put_objects(ctx, pd, parent, cq, qp, mr);
}

static void case_busy(const char *path)
{
	int want = emu_kernel_version() >= 7002 ? EBUSY : ENODEV;
	struct ibv_context *ctx = emu_open_mana();
	struct ibv_pd *pd1 = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_pd *pd2 = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_pd *parent1 = NULL, *parent2 = NULL;
	struct ibv_cq *cq = ctx ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	static uint8_t buf[4096];
	struct ibv_mr *mr = pd2 ? ibv_reg_mr(pd2, buf, sizeof(buf),
					     IBV_ACCESS_LOCAL_WRITE) : NULL;
	struct ibv_qp *qp1, *qp2;
	struct info in;
	int s, err;

	CHECK(ctx && pd1 && pd2 && cq && mr, "objects: %s", strerror(errno));
	if (!ctx || !pd1 || !pd2 || !cq || !mr)
		return;
	s = sock_connect(path);
	CHECK(!recv_info(s, &in, NULL, 0), "the holder's QPN and lkey");
	/* the holder's vport: as the era's mana_ib answers */
	qp1 = raw_qp(ctx, pd1, cq, 1, &parent1);
	err = qp1 ? 0 : errno;
	CHECK_ERRNO(err, want);
	/* port 2 is free; its numbers are the VM's, not this process's */
	qp2 = raw_qp(ctx, pd2, cq, 2, &parent2);
	CHECK(qp2, "raw QP on port 2: %s", strerror(errno));
	if (qp2)
		CHECK(qp2->qp_num != in.qpn, "QPN 0x%x differs from the "
		      "holder's 0x%x", qp2->qp_num, in.qpn);
	CHECK(mr->lkey != in.lkey, "lkey 0x%x differs from the holder's 0x%x",
	      mr->lkey, in.lkey);
	close(s);
	if (qp1)
		ibv_destroy_qp(qp1);
	if (qp2)
		ibv_destroy_qp(qp2);
	if (parent1)
		ibv_dealloc_pd(parent1);
	if (parent2)
		ibv_dealloc_pd(parent2);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd1);
	ibv_dealloc_pd(pd2);
	ibv_close_device(ctx);
}

static void case_raw(bool held)
{
	int want = emu_kernel_version() >= 7002 ? EBUSY : ENODEV;
	struct ibv_context *ctx = emu_open_mana();
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL, *parent = NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	struct ibv_qp *qp = cq ? raw_qp(ctx, pd, cq, 1, &parent) : NULL;

	if (held) {
		CHECK(cq, "objects: %s", strerror(errno));
		CHECK_ERRNO(qp ? 0 : errno, want);
	} else {
		CHECK(qp, "raw QP on port 1: %s", strerror(errno));
	}
	put_objects(ctx, pd, parent, cq, qp, NULL);
}

/* ---- port events from another process's ip link set ------------------------- */

static void touch(const char *dir, const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK(f, "create %s: %s", path, strerror(errno));
	if (f)
		fclose(f);
}

/* The next async event must be @want on port 1 (blocks until one comes). */
static void expect_port_event(struct ibv_context *ctx, enum ibv_event_type want)
{
	struct ibv_async_event ev;

	CHECK(!ibv_get_async_event(ctx, &ev), "get_async_event: %s",
	      strerror(errno));
	CHECK(ev.event_type == want, "event %s, want %s",
	      ibv_event_type_str(ev.event_type), ibv_event_type_str(want));
	if (ev.event_type == want)
		CHECK(ev.element.port_num == 1, "on port %d",
		      ev.element.port_num);
	ibv_ack_async_event(&ev);
}

static void case_events(const char *dir)
{
	/* mana_ib binds the RNIC's port 1 to eth0 (manae_0 gets no events) */
	struct ibv_context *ctx = emu_open_rnic();
	struct ibv_port_attr pa;

	CHECK(ctx, "open: %s", strerror(errno));
	if (!ctx)
		return;
	CHECK(!ibv_query_port(ctx, 1, &pa) && pa.state == IBV_PORT_ACTIVE,
	      "port 1 ACTIVE at the start (--netdev-up)");
	/* the async event fd is open (ibv_open_device): events reach us */
	touch(dir, "ready");
	expect_port_event(ctx, IBV_EVENT_PORT_ERR);
	CHECK(!ibv_query_port(ctx, 1, &pa) && pa.state == IBV_PORT_DOWN,
	      "port 1 DOWN after PORT_ERR");
	touch(dir, "err");
	expect_port_event(ctx, IBV_EVENT_PORT_ACTIVE);
	CHECK(!ibv_query_port(ctx, 1, &pa) && pa.state == IBV_PORT_ACTIVE,
	      "port 1 ACTIVE after PORT_ACTIVE");
	ibv_close_device(ctx);
}

/* ---- DPDK multi-process: primary and secondary ------------------------------- */

static void *map_at(int fd, uintptr_t at)
{
	void *p = mmap((void *)at, SHM_SIZE, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);

	if (p != MAP_FAILED && p != (void *)at) {
		munmap(p, SHM_SIZE);	/* a kernel that ignores the flag */
		p = MAP_FAILED;
	}
	if (p == MAP_FAILED)
		return NULL;
	shm_base = p;
	return p;
}

/*
 * The memfd at @want (the primary's address), or (0) at the first of a
 * few addresses far from the libraries, heaps and sanitizer regions that
 * is free here, so that the secondary finds it free too.
 */
static void *map_shm(int fd, uintptr_t want)
{
	static const uintptr_t at[] = {
		0x500000000000ull, 0x480000000000ull, 0x700000000000ull,
		0x380000000000ull,
	};
	unsigned int i;

	if (want)
		return map_at(fd, want);
	for (i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		if (map_at(fd, at[i]))
			return shm_base;
	return NULL;
}

struct rx_side {
	struct ibv_cq *cq;
	struct ibv_wq *wq;
	struct ibv_rwq_ind_table *table;
	struct ibv_qp *rss;
};

static int rx_create(struct ibv_context *ctx, struct ibv_pd *pd,
		     struct rx_side *rx)
{
	struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ,
				       .max_wr = MAX_FRAMES, .max_sge = 1,
				       .pd = pd };
	struct ibv_rwq_ind_table_init_attr ta = { .log_ind_tbl_size = 0 };
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_RX_HASH |
			     IBV_QP_INIT_ATTR_IND_TABLE,
		.pd = pd,
		.rx_hash_conf = { .rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
				  .rx_hash_key_len = sizeof(vt_key),
				  .rx_hash_key = (uint8_t *)vt_key,
				  .rx_hash_fields_mask = VT_FIELDS },
	};

	rx->cq = ibv_create_cq(ctx, MAX_FRAMES, NULL, NULL, 0);
	if (!rx->cq)
		return errno;
	wa.cq = rx->cq;
	rx->wq = ibv_create_wq(ctx, &wa);
	if (!rx->wq)
		return errno;
	ta.ind_tbl = &rx->wq;
	rx->table = ibv_create_rwq_ind_table(ctx, &ta);
	if (!rx->table)
		return errno;
	qa.rwq_ind_tbl = rx->table;
	rx->rss = ibv_create_qp_ex(ctx, &qa);
	return rx->rss ? 0 : errno;
}

static void rx_destroy(struct rx_side *rx)
{
	if (rx->rss)
		ibv_destroy_qp(rx->rss);
	if (rx->table)
		ibv_destroy_rwq_ind_table(rx->table);
	if (rx->wq)
		ibv_destroy_wq(rx->wq);
	if (rx->cq)
		ibv_destroy_cq(rx->cq);
}

/*
 * Post @n receive buffers: before the secondary may send (a frame with no
 * buffer posted is dropped, as the NIC drops it).
 */
static void rx_post(struct rx_side *rx, struct ibv_mr *mr, uint32_t n)
{
	uint8_t *bufs = (uint8_t *)SHM_ADDR + RX_OFF;
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge;
	uint32_t i;

	for (i = 0; i < n; i++) {
		sge.addr = (uintptr_t)(bufs + i * VT_BUF);
		sge.length = VT_BUF;
		sge.lkey = mr->lkey;
		wr = (struct ibv_recv_wr){ .wr_id = i, .sg_list = &sge,
					   .num_sge = 1 };
		CHECK_ERRNO(ibv_post_wq_recv(rx->wq, &wr, &bad), 0);
	}
}

/* Receive @n frames the secondary sent and check each one's content. */
static void rx_frames(struct rx_side *rx, uint32_t n)
{
	uint8_t *bufs = (uint8_t *)SHM_ADDR + RX_OFF;
	bool seen[MAX_FRAMES] = { false };
	struct ibv_wc wc;
	unsigned int idle = 0;
	uint32_t got = 0, good = 0, tag;
	uint64_t seq;
	time_t give_up = time(NULL) + 120;

	/* a hang guard, so that a lost frame fails here with its count */
	while (got < n) {
		int r = ibv_poll_cq(rx->cq, 1, &wc);

		if (r <= 0) {
			CHECK(r == 0, "poll_cq: %d", r);
			if (r < 0)
				return;
			if (time(NULL) > give_up) {
				CHECK(0, "%u of %u frames arrived in 120 s",
				      got, n);
				return;
			}
			vt_idle(&idle);
			continue;
		}
		idle = 0;
		got++;
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id >= n) {
			CHECK(0, "RX completion status %d wr_id %llu", wc.status,
			      (unsigned long long)wc.wr_id);
			continue;
		}
		if (!vt_check(bufs + wc.wr_id * VT_BUF, wc.byte_len, FRAME_SIZE,
			      &tag, &seq) && tag == TAG && seq < n && !seen[seq]) {
			seen[seq] = true;
			good++;
		}
	}
	CHECK(good == n, "%u of %u frames arrived intact, each once", good, n);
}

static void case_primary(const char *path, uint32_t n)
{
	struct manadv_ctx_allocators al = { .alloc = shm_alloc, .free = shm_free };
	struct ibv_pd *pd = NULL, *parent = NULL;
	struct manadv_qp dqp;
	struct manadv_cq dcq;
	struct manadv_obj obj = { .qp = { .out = &dqp }, .cq = { .out = &dcq } };
	int (*queue_info)(uint32_t, uint32_t, struct mana_emu_queue_info *);
	struct mana_emu_queue_info qi = { 0 };
	struct rx_side rx = { 0 };
	struct ibv_context *ctx;
	struct ibv_mr *mr = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_qp *qp = NULL;
	struct info in = { .nframes = n > MAX_FRAMES ? MAX_FRAMES : n };
	int memfd, s, fds[2];
	char c;

	bool shm;

	memfd = memfd_create("test_vm", MFD_CLOEXEC);
	shm = memfd >= 0 && !ftruncate(memfd, SHM_SIZE) && map_shm(memfd, 0);
	CHECK(shm, "shared memory: %s", strerror(errno));
	ctx = emu_open_mana();
	CHECK(ctx && !manadv_api_load(&api), "device and manadv");
	if (!ctx || !api.init_obj || !shm) {
		if (ctx)
			ibv_close_device(ctx);
		return;
	}
	CHECK_ERRNO(api.set_context_attr(ctx, MANADV_CTX_ATTR_BUF_ALLOCATORS,
					 &al), 0);
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, SHM_ADDR, SHM_SIZE, IBV_ACCESS_LOCAL_WRITE) :
		  NULL;
	cq = ibv_create_cq(ctx, MAX_FRAMES, NULL, NULL, 0);
	qp = pd && cq ? raw_qp(ctx, pd, cq, 1, &parent) : NULL;
	CHECK(mr && qp, "MR and raw QP: %s", strerror(errno));
	if (!qp || !mr)
		goto out;
	CHECK_ERRNO(rx_create(ctx, parent, &rx), 0);
	obj.qp.in = qp;
	obj.cq.in = cq;
	CHECK_ERRNO(api.init_obj(&obj, MANADV_OBJ_QP | MANADV_OBJ_CQ), 0);
	in.qpn = qp->qp_num;
	in.lkey = mr->lkey;
	in.sq_id = dqp.sq_id;
	in.sq_size = dqp.sq_size;
	in.tx_vp_offset = dqp.tx_vp_offset;
	in.sq_buf = (uintptr_t)dqp.sq_buf;
	in.cq_id = dcq.cq_id;
	in.cq_count = dcq.count;
	in.cq_buf = (uintptr_t)dcq.buf;
	in.shm = (uintptr_t)shm_base;
	CHECK((uint8_t *)dqp.sq_buf >= (uint8_t *)SHM_ADDR &&
	      (uint8_t *)dqp.sq_buf < (uint8_t *)SHM_ADDR + FRAMES_OFF,
	      "the SQ is in the shared memory");
	s = sock_listen(path);
	CHECK(s >= 0, "listen %s: %s", path, strerror(errno));
	/* DPDK's MANA_MP_REQ_VERBS_CMD_FD: the command fd, over SCM_RIGHTS */
	fds[0] = ctx->cmd_fd;
	fds[1] = memfd;
	n = in.nframes;
	rx_post(&rx, mr, n);
	CHECK(!send_info(s, &in, fds, 2), "send the fds");
	rx_frames(&rx, n);
	/* the secondary is done once it saw every completion */
	CHECK(read(s, &c, 1) == 0, "the secondary closed");
	close(s);
	queue_info = dlsym(RTLD_DEFAULT, MANA_EMU_QUEUE_INFO_SYM);
	CHECK(queue_info && !queue_info(MANA_EMU_QUEUE_SQ, dqp.sq_id, &qi),
	      "queue_info of SQ %u", dqp.sq_id);
	CHECK(qi.frames == n && qi.errors == 0,
	      "the SQ's counters: %llu frames sent (want %u), %llu errors",
	      (unsigned long long)qi.frames, n, (unsigned long long)qi.errors);
out:
	rx_destroy(&rx);
	put_objects(ctx, pd, parent, cq, qp, mr);
}

/* The TX CQE in @slot names the WQE at BU @bu (cf. test_verbs_contract). */
static bool cqe_names(const uint8_t *cq_buf, uint32_t slot, uint32_t bu)
{
	const volatile uint8_t *cqe = cq_buf + (size_t)slot * GDMA_CQE_SIZE;
	uint32_t off = (uint32_t)cqe[MANA_TXCOMP_WQE_DW_OFF] |
		       (uint32_t)cqe[MANA_TXCOMP_WQE_DW_OFF + 1] << 8 |
		       (uint32_t)cqe[MANA_TXCOMP_WQE_DW_OFF + 2] << 16 |
		       (uint32_t)cqe[MANA_TXCOMP_WQE_DW_OFF + 3] << 24;

	off >>= MANA_TXCOMP_WQE_SHIFT;
	return off == bu * GDMA_WQE_BU_SIZE || off == bu;
}

static void case_secondary(const char *path)
{
	struct mana_tx_oob oob = { .pkt_fmt = MANA_SHORT_PKT_FMT };
	struct gdma_doorbell db = { .kind = GDMA_DB_SQ };
	struct gdma_wqe w = { .hdr = { .num_sge = 1,
				       .oob_size = GDMA_OOB_SMALL } };
	uint8_t *frames;
	unsigned int idle = 0;
	uint32_t i, head = 0, bu = 0;
	struct info in;
	struct stat st;
	uint64_t v = 0;
	time_t give_up;
	void *page;
	int s, fds[2];

	s = sock_connect(path);
	CHECK(!recv_info(s, &in, fds, 2), "the primary's fds");
	if (in.nframes > MAX_FRAMES)
		in.nframes = MAX_FRAMES;
	/* the same device file here: fstat() answers for the char device */
	CHECK(!fstat(fds[0], &st) && S_ISCHR(st.st_mode) &&
	      major(st.st_rdev) == 231,
	      "the received fd is /dev/infiniband/uverbs0 (mode 0%o)",
	      st.st_mode);
	if (!map_shm(fds[1], in.shm)) {
		CHECK(0, "the memfd at 0x%llx: %s", (unsigned long long)in.shm,
		      strerror(errno));
		return;
	}
	frames = (uint8_t *)SHM_ADDR + FRAMES_OFF;
	/* mana_map_doorbell_secondary() */
	page = mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, fds[0], 0);
	CHECK(page != MAP_FAILED, "doorbell page through the received fd: %s",
	      strerror(errno));
	close(fds[0]);		/* DPDK closes it at once; the mapping stays */
	close(fds[1]);
	if (page == MAP_FAILED)
		return;
	oob.vcq_num = in.cq_id;
	oob.vsq_frame = mana_tx_vsq_frame(in.sq_id);
	oob.short_vp_offset = in.tx_vp_offset;
	CHECK(!mana_tx_oob_encode(&oob, w.oob), "OOB");
	for (i = 0; i < in.nframes; i++) {
		vt_frame(frames + i * VT_BUF, FRAME_SIZE, vt_sport_for(1, 0),
			 TAG, i);
		w.sge[0] = (struct gdma_sge){ .addr = (uintptr_t)(frames +
								  i * VT_BUF),
					      .mkey = in.lkey,
					      .size = FRAME_SIZE };
		CHECK(!gdma_wqe_post((void *)(uintptr_t)in.sq_buf, in.sq_size,
				     head, GDMA_SQ, &w, &bu), "WQE %u", i);
		head += bu;
		/* one doorbell per frame: DPDK rings per burst, any will do */
		atomic_thread_fence(memory_order_release);
		db.id = in.sq_id;
		db.tail = gdma_wq_db_tail(head);
		CHECK(!gdma_doorbell_encode(&db, &v), "doorbell");
		*(volatile uint64_t *)((uint8_t *)page + GDMA_DB_OFF_SQ) = v;
	}
	/* until the last completion is in the primary's CQ (a hang guard) */
	give_up = time(NULL) + 120;
	while (!cqe_names((const uint8_t *)(uintptr_t)in.cq_buf,
			  (in.nframes - 1) % in.cq_count, head - bu)) {
		if (time(NULL) > give_up) {
			CHECK(0, "no completion of the last frame in 120 s "
			      "(SQ %u tail %u, CQ %u)", in.sq_id, head,
			      in.cq_id);
			break;
		}
		vt_idle(&idle);
	}
	CHECK(1, "every frame completed");
	munmap(page, 4096);
	close(s);
}

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "";
	const char *path = argc > 2 ? argv[2] : "";

	if (!strcmp(which, "hold"))
		case_hold(path);
	else if (!strcmp(which, "busy"))
		case_busy(path);
	else if (!strcmp(which, "raw"))
		case_raw(!strcmp(path, "held"));
	else if (!strcmp(which, "events"))
		case_events(path);
	else if (!strcmp(which, "primary"))
		case_primary(path, argc > 3 ? (uint32_t)atoi(argv[3]) : 32);
	else if (!strcmp(which, "secondary"))
		case_secondary(path);
	else {
		fprintf(stderr, "usage: %s hold|busy|primary|secondary SOCK [N] "
			"| raw [held] | events DIR\n", argv[0]);
		return 2;
	}
	return check_done();
}
