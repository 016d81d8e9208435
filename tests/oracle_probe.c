// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The differential oracle's probe (issue 23, M4): what a MANA device and
 * its kernel say, as stable "key = value" lines, so that one run under
 * mana-emu and one against the real mana_ib (a QEMU guest driving
 * mana-vfio) can be compared line by line (tests/guest/oracle.sh diff).
 *
 * It asserts nothing: every answer is printed, errors by errno name.
 * Values that differ between any two runs by nature (handles, keys, queue
 * numbers, GUIDs of another MAC) are never printed.  What it asks: each
 * MANA device's attributes and ports (GID types), then on the RDMA device
 * a fixed matrix of control-path calls a provider depends on: CQ depths,
 * RC and UD QP caps, RC modify transitions with attributes missing or
 * extra, MR access flags, memory windows.
 *
 * Usage: oracle_probe [DEVICE-PREFIX]   (default "mana")
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>	/* before any rdma/ uAPI header */
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/mana-abi.h>

static const char *en(int e)
{
	static char buf[32];
	const char *name = e ? strerrorname_np(e) : "ok";

	if (name)
		return name;
	snprintf(buf, sizeof(buf), "errno%d", e);
	return buf;
}

/* ---- device and ports ---------------------------------------------------- */

static void device_attrs(const char *dev, struct ibv_context *ctx)
{
	struct ibv_device_attr_ex x;
	const struct ibv_device_attr *a = &x.orig_attr;
	int ret;

	memset(&x, 0, sizeof(x));
	ret = ibv_query_device_ex(ctx, NULL, &x);
	printf("%s.query_device_ex = %s\n", dev, en(ret));
	if (ret)
		return;
#define P(name, v) printf("%s.%s = %" PRIu64 "\n", dev, name, (uint64_t)(v))
#define PX(name, v) printf("%s.%s = 0x%" PRIx64 "\n", dev, name, (uint64_t)(v))
	P("fw_ver.len", strlen(a->fw_ver));
	PX("max_mr_size", a->max_mr_size);
	PX("page_size_cap", a->page_size_cap);
	PX("vendor_id", a->vendor_id);
	PX("vendor_part_id", a->vendor_part_id);
	PX("hw_ver", a->hw_ver);
	P("max_qp", a->max_qp);
	P("max_qp_wr", a->max_qp_wr);
	PX("device_cap_flags", a->device_cap_flags);
	P("max_sge", a->max_sge);
	P("max_sge_rd", a->max_sge_rd);
	P("max_cq", a->max_cq);
	P("max_cqe", a->max_cqe);
	P("max_mr", a->max_mr);
	P("max_pd", a->max_pd);
	P("max_qp_rd_atom", a->max_qp_rd_atom);
	P("max_ee_rd_atom", a->max_ee_rd_atom);
	P("max_res_rd_atom", a->max_res_rd_atom);
	P("max_qp_init_rd_atom", a->max_qp_init_rd_atom);
	P("atomic_cap", a->atomic_cap);
	P("max_mw", a->max_mw);
	P("max_ah", a->max_ah);
	P("max_srq", a->max_srq);
	P("max_srq_wr", a->max_srq_wr);
	P("max_srq_sge", a->max_srq_sge);
	P("max_pkeys", a->max_pkeys);
	P("local_ca_ack_delay", a->local_ca_ack_delay);
	P("phys_port_cnt", a->phys_port_cnt);
	PX("odp_caps.general_caps", x.odp_caps.general_caps);
	PX("device_cap_flags_ex", x.device_cap_flags_ex);
	PX("raw_packet_caps", x.raw_packet_caps);
	P("max_wq_type_rq", x.max_wq_type_rq);
	P("rss_caps.max_rwq_indirection_tables", x.rss_caps.max_rwq_indirection_tables);
	P("rss_caps.max_rwq_indirection_table_size",
	  x.rss_caps.max_rwq_indirection_table_size);
	PX("rss_caps.rx_hash_fields_mask", x.rss_caps.rx_hash_fields_mask);
	PX("rss_caps.rx_hash_function", x.rss_caps.rx_hash_function);
	PX("rss_caps.supported_qpts", x.rss_caps.supported_qpts);
	P("tso_caps.max_tso", x.tso_caps.max_tso);
	P("max_dm_size", x.max_dm_size);
	PX("pci_atomic_caps.fetch_add", x.pci_atomic_caps.fetch_add);
	P("cq_mod_caps.max_cq_count", x.cq_mod_caps.max_cq_count);
#undef P
#undef PX
}

static void port_attrs(const char *dev, struct ibv_context *ctx, uint8_t port)
{
	struct ibv_port_attr p;
	union ibv_gid gid;
	int ret, i, n = 0;

	memset(&p, 0, sizeof(p));
	ret = ibv_query_port(ctx, port, &p);
	printf("%s.port%u.query_port = %s\n", dev, port, en(ret));
	if (ret)
		return;
#define P(name, v) printf("%s.port%u.%s = %" PRIu64 "\n", dev, port, name, (uint64_t)(v))
	P("state", p.state);
	P("max_mtu", p.max_mtu);
	P("active_mtu", p.active_mtu);
	P("gid_tbl_len", p.gid_tbl_len);
	printf("%s.port%u.port_cap_flags = 0x%x\n", dev, port, p.port_cap_flags);
	P("max_msg_sz", p.max_msg_sz);
	P("pkey_tbl_len", p.pkey_tbl_len);
	P("lid", p.lid);
	P("sm_lid", p.sm_lid);
	P("lmc", p.lmc);
	P("max_vl_num", p.max_vl_num);
	P("active_width", p.active_width);
	P("active_speed", p.active_speed);
	P("phys_state", p.phys_state);
	P("link_layer", p.link_layer);
#undef P
	/* the GID table's shape: how many and which kinds, not the addresses */
	for (i = 0; i < p.gid_tbl_len && i < 256; i++) {
		struct ibv_gid_entry e;

		if (ibv_query_gid(ctx, port, i, &gid) || !memcmp(&gid, &(union ibv_gid){}, sizeof(gid)))
			continue;
		n++;
		memset(&e, 0, sizeof(e));
		/* 0 or an errno value (a negative one from some versions) */
		ret = ibv_query_gid_ex(ctx, port, i, &e, 0);
		printf("%s.port%u.gid%d = %s type=%u v4mapped=%d\n", dev, port, i,
		       en(ret < 0 ? -ret : ret), ret ? 0 : e.gid_type,
		       !memcmp(gid.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12));
	}
	printf("%s.port%u.gids = %d\n", dev, port, n);
}

/* ---- the RDMA device's control path ------------------------------------------ */

/*
 * The kernel's own answer to CREATE_CQ, which the provider does not pass
 * on (it reports its ring's depth in ibv_cq->cqe): the legacy command on
 * the context's fd, as the provider would send it (an RNIC CQ on a
 * page-aligned ring), then DESTROY_CQ.  "-" when the command fails.
 */
static void kernel_cqe(struct ibv_context *ctx, uint32_t depth)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_cq cmd;
		struct mana_ib_create_cq drv;
	} c = {};
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_destroy_cq cmd;
	} d = {};
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct mana_ib_create_cq_resp drv;
	} r = {};
	struct ib_uverbs_destroy_cq_resp dr;
	size_t len = ((size_t)depth * 64 + 4095) & ~(size_t)4095;
	void *ring = mmap(NULL, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (ring == MAP_FAILED)
		return;
	r.core.cqe = 0xdead;
	c.hdr.command = IB_USER_VERBS_CMD_CREATE_CQ;
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = sizeof(r) / 4;
	c.cmd.response = (uintptr_t)&r;
	c.cmd.cqe = depth;
	c.cmd.comp_channel = -1;
	c.drv.buf_addr = (uintptr_t)ring;
	c.drv.flags = MANA_IB_CREATE_RNIC_CQ;
	if (write(ctx->cmd_fd, &c, sizeof(c)) != (ssize_t)sizeof(c)) {
		printf("create_cq(%u).kernel = %s\n", depth, en(errno));
	} else {
		printf("create_cq(%u).kernel = ok cqe=%u\n", depth, r.core.cqe);
		d.hdr.command = IB_USER_VERBS_CMD_DESTROY_CQ;
		d.hdr.in_words = sizeof(d) / 4;
		d.hdr.out_words = sizeof(dr) / 4;
		d.cmd.response = (uintptr_t)&dr;
		d.cmd.cq_handle = r.core.cq_handle;
		if (write(ctx->cmd_fd, &d, sizeof(d)) != (ssize_t)sizeof(d))
			printf("destroy_cq(%u).kernel = %s\n", depth, en(errno));
	}
	munmap(ring, len);
}

static void cq_depths(struct ibv_context *ctx, const struct ibv_device_attr *a)
{
	int depths[] = { 0, 1, 3, 64, 65, 1000, a->max_cqe, a->max_cqe + 1, -1 };
	unsigned int i;

	for (i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
		struct ibv_cq *cq = ibv_create_cq(ctx, depths[i], NULL, NULL, 0);

		if (!cq) {
			printf("create_cq(%d) = %s\n", depths[i], en(errno));
			continue;
		}
		printf("create_cq(%d) = ok cqe=%d\n", depths[i], cq->cqe);
		printf("destroy_cq(%d) = %s\n", depths[i], en(ibv_destroy_cq(cq)));
		if (depths[i] > 0 && depths[i] <= 1000)
			kernel_cqe(ctx, (uint32_t)depths[i]);
	}
}

struct qpcase {
	const char *name;
	enum ibv_qp_type type;
	uint32_t send_wr, recv_wr, send_sge, recv_sge, inline_data;
	int with_srq;		/* unused today: MANA has no SRQ */
};

static void qp_caps(struct ibv_context *ctx, struct ibv_pd *pd,
		    const struct ibv_device_attr *a)
{
	const struct qpcase cases[] = {
		{ "rc.small", IBV_QPT_RC, 1, 1, 1, 1, 0 },
		{ "rc.usual", IBV_QPT_RC, 128, 128, 2, 2, 64 },
		{ "rc.odd", IBV_QPT_RC, 100, 3, 3, 5, 1 },
		{ "rc.max_wr", IBV_QPT_RC, a->max_qp_wr, a->max_qp_wr, 1, 1, 0 },
		{ "rc.max_wr+1", IBV_QPT_RC, a->max_qp_wr + 1, 1, 1, 1, 0 },
		{ "rc.max_sge", IBV_QPT_RC, 16, 16, a->max_sge, a->max_sge, 0 },
		{ "rc.max_sge+1", IBV_QPT_RC, 16, 16, a->max_sge + 1, 1, 0 },
		{ "rc.zero_send", IBV_QPT_RC, 0, 16, 1, 1, 0 },
		{ "rc.zero_recv", IBV_QPT_RC, 16, 0, 1, 1, 0 },
		{ "rc.inline_512", IBV_QPT_RC, 16, 16, 1, 1, 512 },
		{ "rc.inline_4096", IBV_QPT_RC, 16, 16, 1, 1, 4096 },
		{ "uc.usual", IBV_QPT_UC, 64, 64, 1, 1, 0 },
		{ "ud.usual", IBV_QPT_UD, 64, 64, 1, 1, 0 },
		{ "xrc_send", IBV_QPT_XRC_SEND, 64, 0, 1, 0, 0 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct qpcase *c = &cases[i];
		struct ibv_cq *scq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
		struct ibv_cq *rcq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
		struct ibv_qp_init_attr qa = {
			.send_cq = scq, .recv_cq = rcq, .qp_type = c->type,
			.cap = { .max_send_wr = c->send_wr, .max_recv_wr = c->recv_wr,
				 .max_send_sge = c->send_sge,
				 .max_recv_sge = c->recv_sge,
				 .max_inline_data = c->inline_data },
		};
		struct ibv_qp *qp;

		if (!scq || !rcq) {
			printf("create_qp(%s) = cq %s\n", c->name, en(errno));
		} else if (!(qp = ibv_create_qp(pd, &qa))) {
			printf("create_qp(%s) = %s\n", c->name, en(errno));
		} else {
			printf("create_qp(%s) = ok send_wr=%u recv_wr=%u send_sge=%u "
			       "recv_sge=%u inline=%u state=%d\n", c->name,
			       qa.cap.max_send_wr, qa.cap.max_recv_wr,
			       qa.cap.max_send_sge, qa.cap.max_recv_sge,
			       qa.cap.max_inline_data, qp->state);
			printf("destroy_qp(%s) = %s\n", c->name, en(ibv_destroy_qp(qp)));
		}
		if (scq)
			ibv_destroy_cq(scq);
		if (rcq)
			ibv_destroy_cq(rcq);
	}
}

/* RC transitions with the attributes a caller may get wrong. */
static void rc_modify(struct ibv_context *ctx, struct ibv_pd *pd, uint8_t port)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr at;
	struct ibv_qp *qp;
	union ibv_gid gid;
	int gidx = -1, i, ret;

	/* the first IPv4-mapped GID, as rdma_cm and perftest -x pick */
	for (i = 0; i < 16; i++)
		if (!ibv_query_gid(ctx, port, i, &gid) &&
		    !memcmp(gid.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12)) {
			gidx = i;
			break;
		}
	printf("rc_modify.ipv4_gid = %s\n", gidx < 0 ? "none" : "found");
	if (!cq || !(qp = ibv_create_qp(pd, &qa))) {
		printf("rc_modify.create = %s\n", en(errno));
		if (cq)
			ibv_destroy_cq(cq);
		return;
	}
#define TRY(what, mask) do {						      \
		ret = ibv_modify_qp(qp, &at, (mask));			      \
		printf("rc_modify.%s = %s\n", what, en(ret));		      \
	} while (0)
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	TRY("reset_to_rtr", IBV_QP_STATE);
	at.qp_state = IBV_QPS_INIT;
	at.port_num = port;
	at.pkey_index = 0;
	at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	TRY("init_without_port", IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS);
	at.port_num = 9;
	TRY("init_port9", IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	    IBV_QP_ACCESS_FLAGS);
	at.port_num = port;
	at.pkey_index = 5;
	TRY("init_pkey5", IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	    IBV_QP_ACCESS_FLAGS);
	at.pkey_index = 0;
	at.qp_access_flags = IBV_ACCESS_REMOTE_ATOMIC;
	TRY("init_atomic", IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	    IBV_QP_ACCESS_FLAGS);
	at.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	TRY("init", IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	    IBV_QP_ACCESS_FLAGS);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	at.path_mtu = IBV_MTU_1024;
	at.dest_qp_num = 0x123;
	at.rq_psn = 1;
	at.max_dest_rd_atomic = 1;
	at.min_rnr_timer = 12;
	at.ah_attr.is_global = 1;
	at.ah_attr.port_num = port;
	at.ah_attr.grh.hop_limit = 64;
	at.ah_attr.grh.sgid_index = gidx < 0 ? 0 : gidx;
	if (gidx >= 0)
		ibv_query_gid(ctx, port, gidx, &at.ah_attr.grh.dgid);
	TRY("rtr_without_av", IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	TRY("rtr_without_rd_atomic", IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
	    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MIN_RNR_TIMER);
	at.max_dest_rd_atomic = 200;
	TRY("rtr_rd_atomic200", IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
	    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
	    IBV_QP_MIN_RNR_TIMER);
	at.max_dest_rd_atomic = 1;
	TRY("rtr", IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTS;
	at.timeout = 14;
	at.retry_cnt = 7;
	at.rnr_retry = 7;
	at.sq_psn = 1;
	at.max_rd_atomic = 1;
	TRY("rts_without_timeout", IBV_QP_STATE | IBV_QP_RETRY_CNT |
	    IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	TRY("rts_with_dest_qpn", IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
	    IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC |
	    IBV_QP_DEST_QPN);
	TRY("rts", IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
	    IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	at.qp_state = IBV_QPS_SQD;
	TRY("sqd", IBV_QP_STATE);
	at.qp_state = IBV_QPS_RTS;
	TRY("sqd_to_rts", IBV_QP_STATE);
	at.qp_state = IBV_QPS_INIT;
	TRY("rts_to_init", IBV_QP_STATE);
	at.qp_state = IBV_QPS_ERR;
	TRY("err", IBV_QP_STATE);
	at.qp_state = IBV_QPS_RESET;
	TRY("reset", IBV_QP_STATE);
#undef TRY
	memset(&at, 0, sizeof(at));
	{
		struct ibv_qp_init_attr ia;

		ret = ibv_query_qp(qp, &at, IBV_QP_STATE | IBV_QP_CAP, &ia);
		printf("rc_modify.query = %s state=%d\n", en(ret), ret ? -1 : (int)at.qp_state);
	}
	printf("rc_modify.destroy = %s\n", en(ibv_destroy_qp(qp)));
	ibv_destroy_cq(cq);
}

static void mr_access(struct ibv_pd *pd)
{
	static const struct { const char *name; int access; } cases[] = {
		{ "none", 0 },
		{ "local_write", IBV_ACCESS_LOCAL_WRITE },
		{ "remote_read", IBV_ACCESS_REMOTE_READ },
		{ "remote_write_alone", IBV_ACCESS_REMOTE_WRITE },
		{ "remote_write", IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE },
		{ "remote_atomic", IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC },
		{ "mw_bind", IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND },
		{ "zero_based", IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ZERO_BASED },
		{ "on_demand", IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND },
		{ "relaxed", IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING },
	};
	static char buf[1 << 16] __attribute__((aligned(4096)));
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), cases[i].access);

		printf("reg_mr(%s) = %s\n", cases[i].name, en(mr ? 0 : errno));
		if (mr)
			ibv_dereg_mr(mr);
	}
	{
		struct ibv_mr *mr = ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE);

		printf("reg_mr(length0) = %s\n", en(mr ? 0 : errno));
		if (mr)
			ibv_dereg_mr(mr);
	}
	for (i = IBV_MW_TYPE_1; i <= IBV_MW_TYPE_2; i++) {
		struct ibv_mw *mw = ibv_alloc_mw(pd, i);

		printf("alloc_mw(type%u) = %s\n", i, en(mw ? 0 : errno));
		if (mw)
			ibv_dealloc_mw(mw);
	}
}

static void rdma_matrix(const char *dev, struct ibv_context *ctx)
{
	struct ibv_device_attr a;
	struct ibv_port_attr p;
	struct ibv_pd *pd;

	if (ibv_query_device(ctx, &a) || ibv_query_port(ctx, 1, &p) ||
	    p.link_layer != IBV_LINK_LAYER_ETHERNET || !p.gid_tbl_len)
		return;		/* not the RNIC (no GID table) */
	printf("== %s control path\n", dev);
	pd = ibv_alloc_pd(ctx);
	printf("alloc_pd = %s\n", en(pd ? 0 : errno));
	if (!pd)
		return;
	cq_depths(ctx, &a);
	qp_caps(ctx, pd, &a);
	rc_modify(ctx, pd, 1);
	mr_access(pd);
	printf("dealloc_pd = %s\n", en(ibv_dealloc_pd(pd)));
}

static int by_name(const void *a, const void *b)
{
	return strcmp(ibv_get_device_name(*(struct ibv_device *const *)a),
		      ibv_get_device_name(*(struct ibv_device *const *)b));
}

int main(int argc, char **argv)
{
	const char *prefix = argc > 1 ? argv[1] : "mana";
	struct ibv_device **list;
	int n, i, found = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	list = ibv_get_device_list(&n);
	if (!list) {
		printf("devices = %s\n", en(errno));
		return 1;
	}
	qsort(list, n, sizeof(*list), by_name);
	for (i = 0; i < n; i++) {
		const char *dev = ibv_get_device_name(list[i]);
		struct ibv_context *ctx;
		struct ibv_device_attr a;
		uint8_t port;

		if (strncmp(dev, prefix, strlen(prefix)))
			continue;
		found++;
		printf("%s = node_type=%d transport=%d\n", dev,
		       list[i]->node_type, list[i]->transport_type);
		ctx = ibv_open_device(list[i]);
		if (!ctx) {
			printf("%s.open = %s\n", dev, en(errno));
			continue;
		}
		device_attrs(dev, ctx);
		if (!ibv_query_device(ctx, &a))
			for (port = 1; port <= a.phys_port_cnt; port++)
				port_attrs(dev, ctx, port);
		rdma_matrix(dev, ctx);
		printf("%s.close = %s\n", dev, en(ibv_close_device(ctx)));
	}
	printf("devices = %d\n", found);
	ibv_free_device_list(list);
	return found ? 0 : 1;
}
