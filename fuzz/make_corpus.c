// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Writes the seed corpus, fuzz/corpus/<harness>/seed-*: a few well-formed
 * inputs per harness, each built from the documented layouts (the uAPI
 * structs, mana-abi.h, gdma.h's constants, RFC frame formats), so the
 * fuzzers start past the first checks.  Run: make_corpus DIR.
 */
#include <net/if.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <ucontext.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_netlink.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "kernel-headers/rdma/mana-abi.h"
#include "providers/mana/gdma.h"
#include "providers/mana/inet.h"
#include "emulator/wire/vswitch.h"
#include "fuzz_emu.h"

static const char *top;

struct buf {
	uint8_t b[8192];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > sizeof(b->b)) {
		fprintf(stderr, "make_corpus: seed too large\n");
		exit(1);
	}
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put8(struct buf *b, uint8_t v) { put(b, &v, 1); }
static void put16(struct buf *b, uint16_t v) { put(b, &v, 2); }

static void save(const char *harness, const char *name, const void *p,
		 size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", top, harness);
	if (mkdir(path, 0755) && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/%s/seed-%s", top, harness, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* ---- gdma.h ------------------------------------------------------------ */

static void gdma_cqe_seeds(void)
{
	struct mana_rx_comp_oob rx = {
		.cqe_type = CQE_RX_OKAY, .rx_hashtype = MANA_HASH_L4,
		.rx_iphdr_csum_succeed = true, .rx_udp_csum_succeed = true,
		.ppi = { { 64, 0x12345678 } }, .rx_wqe_offset = 0x40,
	};
	struct mana_tx_comp_oob tx = { .cqe_type = CQE_TX_OKAY };
	struct gdma_cqe c = { .wq_num = 0x1234, .owner = 1 };
	struct gdma_eqe e = { .type = GDMA_EQE_COMPLETION, .owner = 1,
			      .details = { 0x42 } };
	uint8_t wire[GDMA_CQE_SIZE + 64] = { 0 };

	mana_rx_comp_oob_encode(&rx, c.data);
	gdma_cqe_encode(&c, wire);
	save("gdma_cqe", "rx-okay", wire, sizeof(wire));
	rx.cqe_type = CQE_RX_COALESCED_4;
	rx.ppi[1] = (struct mana_rx_pkt_info){ 1500, 0x9abcdef0 };
	mana_rx_comp_oob_encode(&rx, c.data);
	gdma_cqe_encode(&c, wire);
	save("gdma_cqe", "rx-coalesced4", wire, sizeof(wire));
	c.is_sq = true;
	mana_tx_comp_oob_encode(&tx, c.data);
	gdma_cqe_encode(&c, wire);
	save("gdma_cqe", "tx-okay", wire, sizeof(wire));
	memset(wire, 0, sizeof(wire));
	gdma_eqe_encode(&e, wire);
	save("gdma_cqe", "eqe", wire, GDMA_EQE_SIZE);
}

static void gdma_wqe_seed(const char *name, enum gdma_queue_type qt,
			  uint32_t oob_size, uint32_t nsge, uint32_t head_bu)
{
	struct gdma_wqe w = { .hdr = { .num_sge = nsge, .oob_size = oob_size } };
	struct mana_tx_oob oob = {
		.pkt_fmt = oob_size == GDMA_OOB_LARGE ? MANA_LONG_PKT_FMT :
							MANA_SHORT_PKT_FMT,
		.is_outer_ipv4 = true, .comp_udp_csum = true,
		.vcq_num = 7, .trans_off = 34,
	};
	uint8_t ring[256] = { 0 };
	struct buf b = { .n = 0 };
	uint32_t i;

	if (qt == GDMA_SQ)
		mana_tx_oob_encode(&oob, w.oob);
	for (i = 0; i < nsge; i++)
		w.sge[i] = (struct gdma_sge){ 0x7f0000001000ULL + i * 2048,
					      0x100 + i, 1024 };
	gdma_wqe_post(ring, sizeof(ring), head_bu, qt, &w, NULL);
	/* selector: queue type, ring of 256 bytes (32 << 3) */
	put8(&b, (qt == GDMA_RQ) | 3 << 1);
	put(&b, &head_bu, 4);
	put(&b, ring, sizeof(ring));
	save("gdma_wqe", name, b.b, b.n);
}

static void gdma_doorbell_seed(const char *name, uint16_t off, uint64_t v)
{
	struct buf b = { .n = 0 };

	put16(&b, off);
	put(&b, &v, 8);
	save("gdma_doorbell", name, b.b, b.n);
}

static void gdma_doorbell_seeds(void)
{
	struct gdma_doorbell sq = { .kind = GDMA_DB_SQ, .id = 5, .tail = 0x60 };
	struct gdma_doorbell rq = { .kind = GDMA_DB_RQ, .id = 6, .tail = 0x20 };
	struct gdma_doorbell cq = { .kind = GDMA_DB_CQ, .id = 7, .tail = 9,
				    .arm = true };
	struct gdma_doorbell eq = { .kind = GDMA_DB_EQ, .id = 1, .tail = 3 };
	struct gdma_doorbell dim = { .kind = GDMA_DB_DIM, .id = 7,
				     .mod_usec = 50, .mod_usec_valid = true };
	struct gdma_doorbell rc = { .kind = GDMA_DB_RQ_CLIENT, .id = 8,
				    .client_high = 1, .client_low = 0x123 };
	struct gdma_short_doorbell s = { .kind = GDMA_DB_SQ, .id = 5,
					 .incr = 64 };
	uint32_t sv;
	uint64_t v;

	gdma_doorbell_encode(&sq, &v);
	gdma_doorbell_seed("sq", GDMA_DB_OFF_SQ, v);
	gdma_doorbell_encode(&rq, &v);
	gdma_doorbell_seed("rq", GDMA_DB_OFF_RQ, v);
	gdma_doorbell_encode(&cq, &v);
	gdma_doorbell_seed("cq-arm", GDMA_DB_OFF_CQ, v);
	gdma_doorbell_encode(&eq, &v);
	gdma_doorbell_seed("eq", GDMA_DB_OFF_EQ, v);
	gdma_doorbell_encode(&dim, &v);
	gdma_doorbell_seed("dim", GDMA_DB_OFF_DIM, v);
	gdma_doorbell_encode(&rc, &v);
	gdma_doorbell_seed("rq-client", GDMA_DB_OFF_RQ_CLIENT, v);
	gdma_short_doorbell_encode(&s, &sv);
	gdma_doorbell_seed("sq-short", GDMA_DB_OFF_SQ_SHORT, sv);
}

/* ---- x86 stores: what compilers emit for a doorbell write ------------- */

static void x86_seed(const char *name, const uint8_t *insn, size_t n)
{
	struct buf b = { .n = 0 };
	uint8_t pad[16] = { 0 };
	uint64_t regs[NGREG];
	unsigned int i;

	put8(&b, 0);			/* 16 bytes available */
	put(&b, insn, n);
	put(&b, pad, 16 - n);
	for (i = 0; i < NGREG; i++)
		regs[i] = 0x7f0000000000ULL + i * 0x100;
	put(&b, regs, sizeof(regs));
	save("x86_store", name, b.b, b.n);
}

static void x86_seeds(void)
{
	static const struct {
		const char *name;
		uint8_t len, insn[15];
	} s[] = {
		{ "mov-r64", 3, { 0x48, 0x89, 0x02 } },
		{ "mov-r32-disp32", 6, { 0x89, 0x81, 0x00, 0x08, 0x00, 0x00 } },
		{ "mov-imm32", 6, { 0xc7, 0x02, 0x78, 0x56, 0x34, 0x12 } },
		{ "mov-sib", 4, { 0x4a, 0x89, 0x04, 0xc2 } },
		{ "mov-rip", 7, { 0x48, 0x89, 0x05, 0x10, 0x00, 0x00, 0x00 } },
		{ "movnti", 4, { 0x48, 0x0f, 0xc3, 0x02 } },
		{ "xchg", 3, { 0x48, 0x87, 0x02 } },
		{ "movq-xmm", 4, { 0x66, 0x0f, 0xd6, 0x02 } },
		{ "vmovq-xmm", 4, { 0xc5, 0xf9, 0xd6, 0x02 } },
		{ "pextrq", 7, { 0x66, 0x48, 0x0f, 0x3a, 0x16, 0x02, 0x01 } },
		{ "movbe", 5, { 0x48, 0x0f, 0x38, 0xf1, 0x02 } },
		{ "mov-moffs", 10, { 0x48, 0xa3, 0, 0x10, 0, 0, 0, 0x7f, 0, 0 } },
		{ "mov-fs", 4, { 0x64, 0x48, 0x89, 0x02 } },
	};
	size_t i;

	for (i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		x86_seed(s[i].name, s[i].insn, s[i].len);
}

/* ---- frames ------------------------------------------------------------ */

static size_t eth(uint8_t *f, uint16_t type, bool vlan)
{
	static const uint8_t macs[12] = { 0x00, 0x0d, 0x3a, 0, 0, 1,
					  0x00, 0x0d, 0x3a, 0, 0, 2 };
	size_t off = 12;

	memcpy(f, macs, 12);
	if (vlan) {
		mana_put_be16(f + 12, 0x8100);
		mana_put_be16(f + 14, 0x2005);
		off = 16;
	}
	mana_put_be16(f + off, type);
	return off + 2;
}

static size_t ipv4_frame(uint8_t *f, uint8_t proto, bool vlan, bool frag)
{
	size_t l3 = eth(f, 0x0800, vlan), l4len = proto == 6 ? 28 : 18;
	uint8_t *ip = f + l3, *l4 = ip + 20;
	uint16_t c;

	memset(ip, 0, 20 + l4len);
	ip[0] = 0x45;
	mana_put_be16(ip + 2, (uint16_t)(20 + l4len));
	if (frag)
		mana_put_be16(ip + 6, 0x2000);	/* more fragments */
	ip[8] = 64;
	ip[9] = proto;
	memcpy(ip + 12, (uint8_t[]){ 10, 0, 0, 1, 10, 0, 0, 2 }, 8);
	c = ~mana_csum_fold(mana_csum_add(0, ip, 20));
	mana_put_be16(ip + 10, c);
	mana_put_be16(l4, 4242);
	mana_put_be16(l4 + 2, 9);
	if (proto == 6)
		l4[12] = 5 << 4;
	else
		mana_put_be16(l4 + 4, (uint16_t)l4len);
	return l3 + 20 + l4len;
}

static size_t ipv6_frame(uint8_t *f)
{
	size_t l3 = eth(f, 0x86dd, false);
	uint8_t *ip = f + l3, *hbh = ip + 40, *udp = hbh + 8;

	memset(ip, 0, 40 + 8 + 16);
	ip[0] = 0x60;
	mana_put_be16(ip + 4, 8 + 16);
	ip[6] = 0;		/* hop-by-hop options first */
	ip[7] = 64;
	ip[8] = 0xfd;
	ip[39] = 1;
	ip[24] = 0xfd;
	ip[55 - 16] = 2;
	hbh[0] = 17;		/* then UDP */
	mana_put_be16(udp, 4242);
	mana_put_be16(udp + 2, 9);
	mana_put_be16(udp + 4, 16);
	return l3 + 40 + 8 + 16;
}

static void frame_seeds(void)
{
	uint8_t f[256];

	save("frame", "udp4", f, ipv4_frame(f, 17, false, false));
	save("frame", "tcp4", f, ipv4_frame(f, 6, false, false));
	save("frame", "udp4-vlan", f, ipv4_frame(f, 17, true, false));
	save("frame", "udp4-fragment", f, ipv4_frame(f, 17, false, true));
	save("frame", "udp6-hbh", f, ipv6_frame(f));
	save("frame", "arp", f, eth(f, 0x0806, false) + 28);
}

/* ---- options ----------------------------------------------------------- */

static void options_seeds(void)
{
	static const char *const s[] = {
		"--ports=2 --mac=00:0d:3a:00:00:05 --verbose",
		("--backend=2:socket:/tmp/mana-wire --pcap=/tmp/x.pcap "
		 "--stats='/tmp/my stats'"),
		"--transport=write --no-netlink --driver-id=19 --netdev-up",
		"--fault=fatal-after=10,drop-cqe=3 --rx-coalesce --rx-hold=0",
		"--provider system --max-qp-wr 256 --backend=tap:mana0 -- ls",
	};
	static const char argv_form[] = "--ports\0" "3\0" "--backend=null\0"
					"--\0" "ibv_devinfo";
	char name[16];
	size_t i;

	for (i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		snprintf(name, sizeof(name), "string%zu", i);
		save("options", name, s[i], strlen(s[i]));
	}
	save("options", "argv", argv_form, sizeof(argv_form) - 1);
}

/* ---- RDMA netlink -------------------------------------------------------- */

static void nl_attr(struct buf *b, uint16_t type, const void *p, uint16_t n)
{
	static const uint8_t zero[4];
	uint16_t len = NLA_HDRLEN + n;

	put16(b, len);
	put16(b, type);
	put(b, p, n);
	put(b, zero, NLA_ALIGN(len) - len);
}

static void nl_seed(const char *name, uint16_t op, uint16_t flags,
		    const struct buf *attrs)
{
	struct nlmsghdr h = {
		.nlmsg_len = NLMSG_HDRLEN + (attrs ? attrs->n : 0),
		.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op),
		.nlmsg_flags = NLM_F_REQUEST | flags,
		.nlmsg_seq = 1,
	};
	struct buf b = { .n = 0 };

	put8(&b, 0);		/* no address, one iovec */
	put(&b, &h, sizeof(h));
	if (attrs)
		put(&b, attrs->b, attrs->n);
	save("netlink", name, b.b, b.n);
}

/*
 * NETLINK_ROUTE (flags bit 2): RTM_GETLINK dump, by index, by name;
 * RTM_NEWLINK as `ip link set` sends it (up, down, mtu).
 */
static void rt_link_seed(const char *name, uint16_t type, uint16_t flags,
			 int32_t ifindex, const char *ifname, uint32_t ifflags,
			 uint32_t change, uint32_t mtu)
{
	struct nlmsghdr h = {
		.nlmsg_type = type,
		.nlmsg_flags = NLM_F_REQUEST | flags,
		.nlmsg_seq = 1,
	};
	struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex,
				 .ifi_flags = ifflags, .ifi_change = change };
	struct buf attrs = { .n = 0 }, b = { .n = 0 };

	if (ifname)
		nl_attr(&attrs, IFLA_IFNAME, ifname, strlen(ifname) + 1);
	if (mtu)
		nl_attr(&attrs, IFLA_MTU, &mtu, sizeof(mtu));
	h.nlmsg_len = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifi)) + attrs.n;
	put8(&b, 4);		/* NETLINK_ROUTE, no address, one iovec */
	put(&b, &h, sizeof(h));
	put(&b, &ifi, sizeof(ifi));
	put(&b, attrs.b, attrs.n);
	save("netlink", name, b.b, b.n);
}

static void rt_seed(const char *name, uint16_t flags, int32_t ifindex,
		    const char *ifname)
{
	rt_link_seed(name, RTM_GETLINK, flags, ifindex, ifname, 0, 0, 0);
}

static void rt_seeds(void)
{
	rt_seed("rt-getlink-dump", NLM_F_DUMP, 0, NULL);
	rt_seed("rt-getlink-index", 0, 2, NULL);
	rt_seed("rt-getlink-name", 0, 0, "enP30832s1");
	rt_link_seed("rt-newlink-up", RTM_NEWLINK, NLM_F_ACK, 3, NULL,
		     IFF_UP, IFF_UP, 0);
	rt_link_seed("rt-newlink-down-name", RTM_NEWLINK, NLM_F_ACK, 0,
		     "eth0", 0, IFF_UP, 0);
	rt_link_seed("rt-newlink-mtu", RTM_NEWLINK, NLM_F_ACK, 3, NULL, 0, 0,
		     4000);
	rt_link_seed("rt-setlink-mtu-up", RTM_SETLINK, NLM_F_ACK, 2, NULL,
		     IFF_UP, IFF_UP, 9000);
}

static void netlink_seeds(void)
{
	struct buf a = { .n = 0 };
	uint32_t zero = 0, one = 1;

	nl_seed("get-dump", RDMA_NLDEV_CMD_GET, NLM_F_DUMP | NLM_F_ACK, NULL);
	nl_attr(&a, RDMA_NLDEV_ATTR_DEV_INDEX, &zero, 4);
	nl_seed("get-dev0", RDMA_NLDEV_CMD_GET, NLM_F_ACK, &a);
	nl_attr(&a, RDMA_NLDEV_ATTR_CHARDEV_TYPE, "uverbs", 7);
	nl_attr(&a, RDMA_NLDEV_ATTR_PORT_INDEX, &one, 4);
	nl_seed("get-chardev", RDMA_NLDEV_CMD_GET_CHARDEV, 0, &a);
	nl_seed("sys-get", RDMA_NLDEV_CMD_SYS_GET, 0, NULL);
	a.n = 0;
	nl_attr(&a, RDMA_NLDEV_ATTR_DEV_INDEX, &zero, 4);
	nl_attr(&a, RDMA_NLDEV_ATTR_PORT_INDEX, &one, 4);
	nl_seed("port-get", RDMA_NLDEV_CMD_PORT_GET, 0, &a);
	rt_seeds();
}

/* ---- uverbs ---------------------------------------------------------------- */

#define ARENA(off) (FUZZ_ARENA_BASE + (off))
#define RESP_OFF 0x10000	/* responses land here */
#define CQ_BUF_OFF 0x20000
#define WQ_BUF_OFF 0x30000
#define SQ_BUF_OFF 0x40000
#define MR_OFF 0x50000
#define IOCTL_DATA_OFF 0x400	/* pointed-to data after the attributes */

/* One command record: [op 0][len][bytes]. */
static void record(struct buf *seq, const void *cmd, size_t n)
{
	put8(seq, 0);
	put16(seq, (uint16_t)n);
	put(seq, cmd, n);
}

/* write(): header, core struct, driver data; response of resp_len bytes. */
static void write_cmd(struct buf *seq, uint32_t command, const void *core,
		      size_t core_len, const void *drv, size_t drv_len,
		      size_t resp_len)
{
	struct ib_uverbs_cmd_hdr h = {
		.command = command,
		.in_words = (uint16_t)((sizeof(h) + core_len + drv_len) / 4),
		.out_words = (uint16_t)(resp_len / 4),
	};
	struct buf b = { .n = 0 };

	put(&b, &h, sizeof(h));
	put(&b, core, core_len);
	if (drv_len)
		put(&b, drv, drv_len);
	record(seq, b.b, b.n);
}

static void write_ex_cmd(struct buf *seq, uint32_t command, const void *core,
			 size_t core_len, const void *drv, size_t drv_len,
			 size_t resp_len, size_t drv_resp_len)
{
	struct ib_uverbs_cmd_hdr h = {
		.command = IB_USER_VERBS_CMD_FLAG_EXTENDED | command,
		.in_words = (uint16_t)(core_len / 8),
		.out_words = (uint16_t)(resp_len / 8),
	};
	struct ib_uverbs_ex_cmd_hdr ex = {
		.response = ARENA(RESP_OFF),
		.provider_in_words = (uint16_t)(drv_len / 8),
		.provider_out_words = (uint16_t)(drv_resp_len / 8),
	};
	struct buf b = { .n = 0 };

	put(&b, &h, sizeof(h));
	put(&b, &ex, sizeof(ex));
	put(&b, core, core_len);
	if (drv_len)
		put(&b, drv, drv_len);
	record(seq, b.b, b.n);
}

/* Handles: one space per context, lowest free first. */
enum { H_PD, H_MR, H_CQ, H_WQ, H_TBL, H_QP, H_SQ_CQ, H_SQ_QP };

static void uverbs_write_seeds(void)
{
	struct ib_uverbs_get_context gc = { .response = ARENA(RESP_OFF) };
	struct ib_uverbs_alloc_pd pd = { .response = ARENA(RESP_OFF) };
	struct ib_uverbs_reg_mr mr = {
		.response = ARENA(RESP_OFF), .start = ARENA(MR_OFF),
		.length = 4096, .hca_va = ARENA(MR_OFF), .pd_handle = H_PD,
		.access_flags = IBV_ACCESS_LOCAL_WRITE,
	};
	struct ib_uverbs_create_comp_channel cc = { .response = ARENA(RESP_OFF) };
	struct ib_uverbs_create_cq cq = {
		.response = ARENA(RESP_OFF), .user_handle = 1, .cqe = 64,
		.comp_channel = -1,
	};
	struct mana_ib_create_cq cq_drv = { .buf_addr = ARENA(CQ_BUF_OFF) };
	struct ib_uverbs_ex_create_wq wq = {
		.wq_type = IB_UVERBS_WQT_RQ, .user_handle = 2,
		.pd_handle = H_PD, .cq_handle = H_CQ, .max_wr = 64, .max_sge = 1,
	};
	struct mana_ib_create_wq wq_drv = { .wq_buf_addr = ARENA(WQ_BUF_OFF),
					    .wq_buf_size = 4096 };
	struct {
		struct ib_uverbs_ex_create_rwq_ind_table t;
		uint32_t h[2];
	} tbl = { .t = { .log_ind_tbl_size = 0 }, .h = { H_WQ, 0 } };
	struct ib_uverbs_ex_create_qp rss = {
		.user_handle = 3, .pd_handle = H_PD,
		.qp_type = IBV_QPT_RAW_PACKET,
		.comp_mask = IB_UVERBS_CREATE_QP_MASK_IND_TABLE,
		.rwq_ind_tbl_handle = H_TBL,
	};
	struct mana_ib_create_qp_rss rss_drv = {
		.rx_hash_fields_mask = IBV_RX_HASH_SRC_IPV4 |
				       IBV_RX_HASH_DST_IPV4,
		.rx_hash_function = MANA_IB_RX_HASH_FUNC_TOEPLITZ,
		.rx_hash_key_len = MANA_IB_RX_HASH_KEY_LEN, .port = 1,
	};
	struct ib_uverbs_create_qp sqp = {
		.response = ARENA(RESP_OFF), .user_handle = 4,
		.pd_handle = H_PD, .send_cq_handle = H_SQ_CQ,
		.recv_cq_handle = H_SQ_CQ, .max_send_wr = 64,
		.max_send_sge = 1, .qp_type = IBV_QPT_RAW_PACKET,
	};
	struct mana_ib_create_qp sqp_drv = { .sq_buf_addr = ARENA(SQ_BUF_OFF),
					     .sq_buf_size = 4096, .port = 1 };
	struct ib_uverbs_query_port qport = { .response = ARENA(RESP_OFF),
					      .port_num = 1 };
	struct ib_uverbs_destroy_qp dqp = { .response = ARENA(RESP_OFF),
					    .qp_handle = H_QP };
	struct ib_uverbs_ex_query_device qd = { 0 };
	struct buf seq = { .n = 0 };

	memset(rss_drv.rx_hash_key, 0x6d, sizeof(rss_drv.rx_hash_key));
	write_cmd(&seq, IB_USER_VERBS_CMD_GET_CONTEXT, &gc, sizeof(gc), NULL, 0,
		  sizeof(struct ib_uverbs_get_context_resp));
	save("uverbs_write", "get-context", seq.b, seq.n);
	write_cmd(&seq, IB_USER_VERBS_CMD_QUERY_PORT, &qport, sizeof(qport),
		  NULL, 0, sizeof(struct ib_uverbs_query_port_resp));
	write_ex_cmd(&seq, IB_USER_VERBS_EX_CMD_QUERY_DEVICE, &qd, sizeof(qd),
		     NULL, 0, sizeof(struct ib_uverbs_ex_query_device_resp), 0);
	write_cmd(&seq, IB_USER_VERBS_CMD_ALLOC_PD, &pd, sizeof(pd), NULL, 0,
		  sizeof(struct ib_uverbs_alloc_pd_resp));
	write_cmd(&seq, IB_USER_VERBS_CMD_REG_MR, &mr, sizeof(mr), NULL, 0,
		  sizeof(struct ib_uverbs_reg_mr_resp));
	write_cmd(&seq, IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, &cc, sizeof(cc),
		  NULL, 0, sizeof(struct ib_uverbs_create_comp_channel_resp));
	write_cmd(&seq, IB_USER_VERBS_CMD_CREATE_CQ, &cq, sizeof(cq), &cq_drv,
		  sizeof(cq_drv), sizeof(struct ib_uverbs_create_cq_resp) +
		  sizeof(struct mana_ib_create_cq_resp));
	save("uverbs_write", "pd-mr-cq", seq.b, seq.n);
	write_ex_cmd(&seq, IB_USER_VERBS_EX_CMD_CREATE_WQ, &wq, sizeof(wq),
		     &wq_drv, sizeof(wq_drv),
		     sizeof(struct ib_uverbs_ex_create_wq_resp), 0);
	write_ex_cmd(&seq, IB_USER_VERBS_EX_CMD_CREATE_RWQ_IND_TBL, &tbl,
		     sizeof(tbl), NULL, 0,
		     sizeof(struct ib_uverbs_ex_create_rwq_ind_table_resp), 0);
	write_ex_cmd(&seq, IB_USER_VERBS_EX_CMD_CREATE_QP, &rss, sizeof(rss),
		     &rss_drv, sizeof(rss_drv),
		     sizeof(struct ib_uverbs_ex_create_qp_resp),
		     sizeof(struct mana_ib_create_qp_rss_resp));
	save("uverbs_write", "rss-qp", seq.b, seq.n);
	cq.user_handle = 5;
	cq_drv.buf_addr = ARENA(CQ_BUF_OFF + 0x4000);
	write_cmd(&seq, IB_USER_VERBS_CMD_CREATE_CQ, &cq, sizeof(cq), &cq_drv,
		  sizeof(cq_drv), sizeof(struct ib_uverbs_create_cq_resp) +
		  sizeof(struct mana_ib_create_cq_resp));
	write_cmd(&seq, IB_USER_VERBS_CMD_CREATE_QP, &sqp, sizeof(sqp),
		  &sqp_drv, sizeof(sqp_drv),
		  sizeof(struct ib_uverbs_create_qp_resp) +
		  sizeof(struct mana_ib_create_qp_resp));
	write_cmd(&seq, IB_USER_VERBS_CMD_DESTROY_QP, &dqp, sizeof(dqp), NULL,
		  0, sizeof(struct ib_uverbs_destroy_qp_resp));
	save("uverbs_write", "graph", seq.b, seq.n);
}

/* ioctl: header, attributes, then the data long attributes point to. */
struct ioctl_cmd {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attrs[16];
	struct buf data;
};

static void ioctl_begin(struct ioctl_cmd *c, uint16_t object, uint16_t method)
{
	memset(c, 0, sizeof(*c));
	c->hdr.object_id = object;
	c->hdr.method_id = method;
	c->hdr.driver_id = MANA_DRIVER_ID;
}

static struct ib_uverbs_attr *attr(struct ioctl_cmd *c, uint16_t id,
				   uint16_t len, uint64_t data)
{
	struct ib_uverbs_attr *a = &c->attrs[c->hdr.num_attrs++];

	a->attr_id = id;
	a->len = len;
	a->data = data;
	return a;
}

/* An input pointer attribute: inline up to 8 bytes, else in the data. */
static void attr_in(struct ioctl_cmd *c, uint16_t id, const void *p,
		    uint16_t len)
{
	uint64_t v = 0;

	if (len <= 8) {
		memcpy(&v, p, len);
		attr(c, id, len, v);
		return;
	}
	attr(c, id, len, ARENA(IOCTL_DATA_OFF + c->data.n));
	put(&c->data, p, len);
	while (c->data.n % 8)
		put8(&c->data, 0);
}

static void attr_out(struct ioctl_cmd *c, uint16_t id, uint16_t len)
{
	static uint32_t next;

	attr(c, id, len, ARENA(RESP_OFF + (next++ % 64) * 0x400));
}

static void ioctl_end(struct buf *seq, struct ioctl_cmd *c)
{
	struct buf b = { .n = 0 };
	uint8_t zero[IOCTL_DATA_OFF] = { 0 };
	size_t head;

	c->hdr.length = (uint16_t)(sizeof(c->hdr) +
				   c->hdr.num_attrs * sizeof(c->attrs[0]));
	put(&b, &c->hdr, sizeof(c->hdr));
	put(&b, c->attrs, c->hdr.num_attrs * sizeof(c->attrs[0]));
	head = b.n;
	if (c->data.n) {
		put(&b, zero, IOCTL_DATA_OFF - head);
		put(&b, c->data.b, c->data.n);
	}
	record(seq, b.b, b.n);
}

/* The write() bridge: INVOKE_WRITE with the core struct as CORE_IN. */
static void invoke_write(struct buf *seq, uint32_t command, const void *core,
			 uint16_t core_len, uint16_t resp_len)
{
	struct ioctl_cmd c;

	ioctl_begin(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_INVOKE_WRITE);
	attr(&c, UVERBS_ATTR_WRITE_CMD, 8, command);
	attr_in(&c, UVERBS_ATTR_CORE_IN, core, core_len);
	if (resp_len)
		attr_out(&c, UVERBS_ATTR_CORE_OUT, resp_len);
	ioctl_end(seq, &c);
}

static void uverbs_ioctl_seeds(void)
{
	struct mana_ib_create_cq cq_drv = { .buf_addr = ARENA(CQ_BUF_OFF) };
	struct mana_ib_create_wq wq_drv = { .wq_buf_addr = ARENA(WQ_BUF_OFF),
					    .wq_buf_size = 4096 };
	struct mana_ib_create_qp sqp_drv = { .sq_buf_addr = ARENA(SQ_BUF_OFF),
					     .sq_buf_size = 4096, .port = 1 };
	struct ib_uverbs_qp_cap cap = { .max_send_wr = 64, .max_send_sge = 1 };
	struct ib_uverbs_alloc_pd pd = { 0 };
	struct {
		struct ib_uverbs_ex_create_rwq_ind_table t;
		uint32_t h[2];
	} tbl = { .t = { .log_ind_tbl_size = 0 }, .h = { 3, 0 } };
	uint32_t u32;
	uint64_t u64;
	struct buf seq = { .n = 0 };
	struct ioctl_cmd c;

	ioctl_begin(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_GET_CONTEXT);
	attr_out(&c, UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS, 4);
	attr_out(&c, UVERBS_ATTR_GET_CONTEXT_CORE_SUPPORT, 8);
	ioctl_end(&seq, &c);
	save("uverbs_ioctl", "get-context", seq.b, seq.n);

	ioctl_begin(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_PORT);
	attr(&c, UVERBS_ATTR_QUERY_PORT_PORT_NUM, 8, 1);
	attr_out(&c, UVERBS_ATTR_QUERY_PORT_RESP,
		 sizeof(struct ib_uverbs_query_port_resp_ex));
	ioctl_end(&seq, &c);
	ioctl_begin(&c, UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_GID_TABLE);
	attr(&c, UVERBS_ATTR_QUERY_GID_TABLE_ENTRY_SIZE, 8,
	     sizeof(struct ib_uverbs_gid_entry));
	attr_out(&c, UVERBS_ATTR_QUERY_GID_TABLE_RESP_ENTRIES,
		 4 * sizeof(struct ib_uverbs_gid_entry));
	attr_out(&c, UVERBS_ATTR_QUERY_GID_TABLE_RESP_NUM_ENTRIES, 8);
	ioctl_end(&seq, &c);
	ioctl_begin(&c, UVERBS_OBJECT_ASYNC_EVENT,
		    UVERBS_METHOD_ASYNC_EVENT_ALLOC);
	attr(&c, UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE, 0, 0);
	ioctl_end(&seq, &c);
	save("uverbs_ioctl", "queries", seq.b, seq.n);

	/* handles: PD 0, CQ 1, CQ 2, WQ 3, table 4, QP 5, QP 6 */
	invoke_write(&seq, IB_USER_VERBS_CMD_ALLOC_PD, &pd, sizeof(pd),
		     sizeof(struct ib_uverbs_alloc_pd_resp));
	ioctl_begin(&c, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE);
	attr(&c, UVERBS_ATTR_CREATE_CQ_HANDLE, 0, 0);
	u32 = 64;
	attr_in(&c, UVERBS_ATTR_CREATE_CQ_CQE, &u32, 4);
	u64 = 7;
	attr_in(&c, UVERBS_ATTR_CREATE_CQ_USER_HANDLE, &u64, 8);
	u32 = 0;
	attr_in(&c, UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, &u32, 4);
	attr_out(&c, UVERBS_ATTR_CREATE_CQ_RESP_CQE, 4);
	attr_in(&c, UVERBS_ATTR_UHW_IN, &cq_drv, sizeof(cq_drv));
	attr_out(&c, UVERBS_ATTR_UHW_OUT, sizeof(struct mana_ib_create_cq_resp));
	ioctl_end(&seq, &c);
	cq_drv.buf_addr = ARENA(CQ_BUF_OFF + 0x4000);
	ioctl_begin(&c, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE);
	attr(&c, UVERBS_ATTR_CREATE_CQ_HANDLE, 0, 0);
	u32 = 64;
	attr_in(&c, UVERBS_ATTR_CREATE_CQ_CQE, &u32, 4);
	u64 = 8;
	attr_in(&c, UVERBS_ATTR_CREATE_CQ_USER_HANDLE, &u64, 8);
	u32 = 0;
	attr_in(&c, UVERBS_ATTR_CREATE_CQ_COMP_VECTOR, &u32, 4);
	attr_out(&c, UVERBS_ATTR_CREATE_CQ_RESP_CQE, 4);
	attr_in(&c, UVERBS_ATTR_UHW_IN, &cq_drv, sizeof(cq_drv));
	attr_out(&c, UVERBS_ATTR_UHW_OUT, sizeof(struct mana_ib_create_cq_resp));
	ioctl_end(&seq, &c);

	ioctl_begin(&c, UVERBS_OBJECT_WQ, UVERBS_METHOD_WQ_CREATE);
	attr(&c, UVERBS_ATTR_CREATE_WQ_HANDLE, 0, 0);
	attr(&c, UVERBS_ATTR_CREATE_WQ_PD_HANDLE, 0, 0);
	attr(&c, UVERBS_ATTR_CREATE_WQ_TYPE, 8, IB_UVERBS_WQT_RQ);
	u64 = 9;
	attr_in(&c, UVERBS_ATTR_CREATE_WQ_USER_HANDLE, &u64, 8);
	u32 = 64;
	attr_in(&c, UVERBS_ATTR_CREATE_WQ_MAX_WR, &u32, 4);
	u32 = 1;
	attr_in(&c, UVERBS_ATTR_CREATE_WQ_MAX_SGE, &u32, 4);
	u32 = 0;
	attr_in(&c, UVERBS_ATTR_CREATE_WQ_FLAGS, &u32, 4);
	attr(&c, UVERBS_ATTR_CREATE_WQ_CQ_HANDLE, 0, 1);
	attr_out(&c, UVERBS_ATTR_CREATE_WQ_RESP_MAX_WR, 4);
	attr_out(&c, UVERBS_ATTR_CREATE_WQ_RESP_MAX_SGE, 4);
	attr_out(&c, UVERBS_ATTR_CREATE_WQ_RESP_WQ_NUM, 4);
	attr_in(&c, UVERBS_ATTR_UHW_IN, &wq_drv, sizeof(wq_drv));
	ioctl_end(&seq, &c);
	invoke_write(&seq, IB_USER_VERBS_CMD_FLAG_EXTENDED |
			   IB_USER_VERBS_EX_CMD_CREATE_RWQ_IND_TBL,
		     &tbl, sizeof(tbl),
		     sizeof(struct ib_uverbs_ex_create_rwq_ind_table_resp));
	save("uverbs_ioctl", "cq-wq-table", seq.b, seq.n);

	ioctl_begin(&c, UVERBS_OBJECT_QP, UVERBS_METHOD_QP_CREATE);
	attr(&c, UVERBS_ATTR_CREATE_QP_HANDLE, 0, 0);
	attr(&c, UVERBS_ATTR_CREATE_QP_PD_HANDLE, 0, 0);
	attr(&c, UVERBS_ATTR_CREATE_QP_SEND_CQ_HANDLE, 0, 2);
	attr(&c, UVERBS_ATTR_CREATE_QP_RECV_CQ_HANDLE, 0, 2);
	u64 = 10;
	attr_in(&c, UVERBS_ATTR_CREATE_QP_USER_HANDLE, &u64, 8);
	attr_in(&c, UVERBS_ATTR_CREATE_QP_CAP, &cap, sizeof(cap));
	attr(&c, UVERBS_ATTR_CREATE_QP_TYPE, 8, IBV_QPT_RAW_PACKET);
	attr_out(&c, UVERBS_ATTR_CREATE_QP_RESP_CAP, sizeof(cap));
	attr_out(&c, UVERBS_ATTR_CREATE_QP_RESP_QP_NUM, 4);
	attr_in(&c, UVERBS_ATTR_UHW_IN, &sqp_drv, sizeof(sqp_drv));
	attr_out(&c, UVERBS_ATTR_UHW_OUT,
		 sizeof(struct mana_ib_create_qp_resp));
	ioctl_end(&seq, &c);
	ioctl_begin(&c, UVERBS_OBJECT_QP, UVERBS_METHOD_QP_DESTROY);
	attr(&c, UVERBS_ATTR_DESTROY_QP_HANDLE, 0, 5);
	attr_out(&c, UVERBS_ATTR_DESTROY_QP_RESP,
		 sizeof(struct ib_uverbs_destroy_qp_resp));
	ioctl_end(&seq, &c);
	ioctl_begin(&c, UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_DESTROY);
	attr(&c, UVERBS_ATTR_DESTROY_CQ_HANDLE, 0, 2);
	attr_out(&c, UVERBS_ATTR_DESTROY_CQ_RESP,
		 sizeof(struct ib_uverbs_destroy_cq_resp));
	ioctl_end(&seq, &c);
	save("uverbs_ioctl", "graph", seq.b, seq.n);
}

/* ---- RoCE into the RC engine (fuzz_roce.c's record format) ------------ */

struct rpkt {
	uint8_t sel, op;
	int8_t delta;
	uint16_t plen;		/* 0x8000: one MTU */
	uint32_t dma_len, msn;
	uint8_t syndrome;
	uint32_t va_off;
};

static void put32(struct buf *b, uint32_t v) { put(b, &v, 4); }

/*
 * sel: bit 0 A bit, bits 3-4 PSN base (0 responder's, 1 requester's), 5-6
 * MR; @kind 1 for the RC QP, 3 for the UC QP (op then counts from 0x20)
 */
static void roce_rec_kind(struct buf *b, const struct rpkt *r, uint8_t kind)
{
	uint8_t pay[16];
	uint32_t plen = r->plen & 0x8000 ? 1024 : r->plen;

	put8(b, kind);
	put8(b, r->sel);
	put8(b, r->op);
	put8(b, (uint8_t)r->delta);
	put16(b, r->plen);
	put32(b, r->va_off);		/* MR A or B: the offset */
	put8(b, 1);			/* a 32-bit DMA length */
	put32(b, r->dma_len);
	put8(b, r->syndrome);
	put32(b, r->msn);
	put32(b, 0x01020304);		/* ImmDt */
	put32(b, 0);			/* IETH */
	memset(pay, 0xa5, sizeof(pay));
	put(b, pay, plen < 16 ? plen : 16);
}

static void roce_seed_kind(const char *name, const struct rpkt *r, size_t n,
			   uint8_t kind)
{
	struct buf b = { .n = 0 };
	size_t i;

	for (i = 0; i < n; i++)
		roce_rec_kind(&b, &r[i], kind);
	save("roce", name, b.b, b.n);
}

static void roce_seed(const char *name, const struct rpkt *r, size_t n)
{
	roce_seed_kind(name, r, n, 1);
}

#define R_ACK	0x01		/* A bit, responder's PSN, MR A */
#define R_REQ	0x08		/* requester's PSN */
#define R_MRB	0x20

static void roce_seeds(void)
{
	static const struct rpkt write_only[] = {
		{ R_ACK, 0x0a, 0, 100, 100, 0, 0, 0x100 },
	};
	static const struct rpkt write_multi[] = {
		{ 0, 0x06, 0, 0x8000, 3072, 0, 0, 0x2000 },
		{ 0, 0x07, 1, 0x8000, 0, 0, 0, 0 },
		{ R_ACK, 0x08, 2, 0x8000, 0, 0, 0, 0 },
	};
	static const struct rpkt reads[] = {
		{ R_ACK | R_MRB, 0x0c, 0, 0, 4096, 0, 0, 0x100 },
		/* the same again (a duplicate that matches), then one that does not */
		{ R_ACK | R_MRB, 0x0c, 0, 0, 4096, 0, 0, 0x100 },
		{ R_ACK | R_MRB, 0x0c, -3, 0, 4096, 0, 0, 0x900 },
	};
	static const struct rpkt sends[] = {
		{ 0, 0x00, 0, 0x8000, 0, 0, 0, 0 },
		{ 0, 0x01, 1, 0x8000, 0, 0, 0, 0 },
		{ R_ACK, 0x03, 2, 200, 0, 0, 0, 0 },
		{ R_ACK, 0x04, 3, 64, 0, 0, 0, 0 },
	};
	static const struct rpkt acks[] = {
		/* the WRITE's 8 packets, then the READ's 4 responses */
		{ R_REQ, 0x11, 7, 0, 0, 1, 0x1f, 0 },
		{ R_REQ, 0x0d, 8, 0x8000, 0, 1, 0x1f, 0 },
		{ R_REQ, 0x0e, 9, 0x8000, 0, 1, 0, 0 },
		{ R_REQ, 0x0e, 10, 0x8000, 0, 1, 0, 0 },
		{ R_REQ, 0x0f, 11, 0x8000, 0, 2, 0x1f, 0 },
		{ R_REQ, 0x11, 12, 0, 0, 3, 0x1f, 0 },
	};
	/* UC (op + 0x20): a SEND with a PSN gap, then an ONLY later on */
	static const struct rpkt uc_send_gap[] = {
		{ 0, 0x00, 0, 0x8000, 0, 0, 0, 0 },
		{ 0, 0x01, 2, 0x8000, 0, 0, 0, 0 },
		{ 0, 0x02, 3, 100, 0, 0, 0, 0 },
		{ 0, 0x04, 10, 64, 0, 0, 0, 0 },
		{ 0, 0x05, 11, 8, 0, 0, 0, 0 },
	};
	/* UC WRITEs: a whole one with immediate, one with a bad MR */
	static const struct rpkt uc_writes[] = {
		{ 0, 0x06, 0, 0x8000, 3072, 0, 0, 0x2000 },
		{ 0, 0x07, 1, 0x8000, 0, 0, 0, 0 },
		{ 0, 0x09, 2, 0x8000, 0, 0, 0, 0 },
		{ R_MRB, 0x0b, 3, 16, 16, 0, 0, 0x100 },
	};
	static const struct rpkt naks[] = {
		{ R_REQ, 0x11, 3, 0, 0, 0, 0x60, 0 },	/* PSN sequence error */
		{ R_REQ, 0x11, 3, 0, 0, 0, 0x21, 0 },	/* RNR */
		{ R_REQ, 0x11, 5, 0, 0, 0, 0x62, 0 },	/* remote access */
	};

	roce_seed("write-only", write_only, 1);
	roce_seed("write-multi", write_multi, 3);
	roce_seed("reads", reads, 3);
	roce_seed("sends", sends, 4);
	roce_seed("acks", acks, 6);
	roce_seed("naks", naks, 3);
	roce_seed_kind("uc-send-gap", uc_send_gap, 5, 3);
	roce_seed_kind("uc-writes", uc_writes, 4, 3);
}

/* ---- vswitch.h: a socket: wire's records ------------------------------ */

static void vswitch_seeds(void)
{
	struct vsw_id id = { .mac = { 0, 0x0d, 0x3a, 0, 0, 1 }, .ngid = 2,
			     .gid = { { 0xfe, 0x80, [8] = 2, [15] = 1 },
				      { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 } } };
	uint8_t buf[VSW_HDR_LEN + 64] = { 0 };
	uint8_t hello[VSW_HELLO_MAX];
	size_t n = vsw_encode_hello(&id, hello, sizeof(hello));

	save("vswitch", "hello", hello, n);
	/* DATA: a RoCEv2 (IPv4, UDP 4791) frame */
	vsw_data_hdr(buf);
	memcpy(buf + 4, id.mac, 6);
	buf[4 + 12] = 0x08;
	buf[4 + 14] = 0x45;
	buf[4 + 23] = 17;
	buf[4 + 30] = 10;
	buf[4 + 33] = 2;
	buf[4 + 36] = 0x12;
	buf[4 + 37] = 0xb7;
	save("vswitch", "data-roce", buf, sizeof(buf));
}

/* ---- vfio/ (mana-vfio) --------------------------------------------------- */

static void vfu_msg(const char *name, uint16_t cmd, const void *payload,
		    uint32_t n)
{
	struct buf b = { .n = 0 };
	uint32_t size = 16 + n, zero = 0;

	put8(&b, 0);			/* harness mode: one message */
	put16(&b, 7);			/* message id */
	put16(&b, cmd);
	put(&b, &size, 4);
	put(&b, &zero, 4);		/* flags: command */
	put(&b, &zero, 4);		/* error */
	put(&b, payload, n);
	save("vfio_user", name, b.b, b.n);
}

static void dev_op(struct buf *b, uint8_t kind, uint32_t off, uint64_t v)
{
	put8(b, kind);
	put(b, &off, 4);
	put(b, &v, 8);
}

/*
 * The driver's bootstrap in the device mode: a RAM image with an SQ WQE
 * (at RAM + 0) carrying QUERY_MAX_RESOURCES (at RAM + 0x100) and an RQ
 * WQE (RAM + 0x1000) for its response (RAM + 0x8000); then the SMC
 * message naming EQ RAM + 0x2000, CQ + 0x3000, RQ + 0x1000, SQ + 0, and
 * the RQ and SQ doorbells.
 */
static void vfio_device_seed(void)
{
	static uint8_t img[0x1020];
	struct gdma_wqe_header sh = { .num_sge = 1, .oob_size = GDMA_OOB_LARGE };
	struct gdma_wqe_header rh = { .num_sge = 1, .oob_size = GDMA_OOB_SMALL };
	struct gdma_sge ss = { 0x100100, 0x11, 40 }, rs = { 0x108000, 0x11, 4096 };
	uint64_t pfn[4] = { 0x102, 0x103, 0x101, 0x100 };
	struct buf *b = calloc(1, sizeof(*b));
	uint8_t smc[32] = { 0 };
	uint16_t n = sizeof(img);
	int i, j;

	if (!b)
		exit(1);
	gdma_wqe_header_encode(&sh, GDMA_SQ, img);
	gdma_sge_encode(&ss, img + 32);
	/* gdma_req_hdr: QUERY_MAX_RESOURCES, 40 bytes, response 72 */
	gdma_put_le32(img + 0x104, 2);
	gdma_put_le16(img + 0x108, 1);
	gdma_put_le32(img + 0x10c, 40);
	gdma_put_le32(img + 0x114, 2);
	gdma_put_le16(img + 0x118, 1);
	gdma_put_le32(img + 0x11c, 72);
	gdma_wqe_header_encode(&rh, GDMA_RQ, img + 0x1000);
	gdma_sge_encode(&rs, img + 0x1010);
	put8(b, 1);			/* harness mode: the device */
	put(b, &n, 2);
	put(b, img, sizeof(img));
	for (i = 0; i < 4; i++)
		for (j = 0; j < 6; j++)
			smc[6 * i + j] = (uint8_t)(pfn[i] >> (8 * j));
	smc[28] = 1;			/* ESTABLISH_HWC request */
	for (i = 0; i < 8; i++)
		dev_op(b, 0, 0x1000 + 4 * i, gdma_get_le32(smc + 4 * i));
	dev_op(b, 1, 0x8000 + GDMA_DB_OFF_RQ, 0 | (uint64_t)32 << 32);
	dev_op(b, 1, 0x8000 + GDMA_DB_OFF_SQ, 0 | (uint64_t)64 << 32);
	dev_op(b, 3, 0x1000 + 28, 0);
	save("vfio_user", "device-bootstrap", b->b, b->n);
	free(b);
}

/* An HWC request for the decoders (harness mode 2): header, then body. */
static void gdma_req_seed(const char *name, uint32_t type, uint32_t dev,
			  const uint8_t *body, uint32_t n)
{
	struct buf b = { .n = 0 };
	uint8_t h[40] = { 0 };

	gdma_put_le32(h + 4, type);
	gdma_put_le16(h + 8, 1);
	gdma_put_le32(h + 12, 40 + n);
	gdma_put_le32(h + 20, type);
	gdma_put_le16(h + 24, 1);
	gdma_put_le32(h + 28, 64);
	gdma_put_le32(h + 32, dev);
	put8(&b, 2);			/* harness mode: an HWC request */
	put(&b, h, 40);
	put(&b, body, n);
	save("vfio_user", name, b.b, b.n);
}

static void vfio_seeds(void)
{
	/* mana_ib's CONFIG_IP_ADDR of ::ffff:10.0.0.2, written reversed */
	static const uint8_t ip[32] = {
		1, 0, 0, 0, 0, 0, 0, 0xad, 1, 0, 0, 0, 1, 0, 0, 0,
		2, 0, 0, 10, 0xff, 0xff,
	};
	/* CREATE_ADAPTER on EQ 1; ALLOCATE_RESOURCE_RANGE of a doorbell page */
	static const uint8_t adapter[16] = { 1 };
	/* CREATE_RC_QP: adapter, PD, CQs, regions 1 2 - 4 5, NO_FMR, page 2 */
	static const uint8_t rcqp[120] = {
		[7] = 0xad, [15] = 0x50, [23] = 0xc0, [31] = 0xc0,
		[32] = 1, [40] = 2, [56] = 4, [64] = 5, [88] = 2, [96] = 2,
	};
	static const uint8_t range[16] = { 27, 0, 0, 0, 1, 0, 0, 0, 1 };
	/* CREATE_MR: PD 0x50.., GVA, region 3, va 0x7f0000000fe0, local r/w */
	static const uint8_t mr[40] = {
		[7] = 0x50, [8] = 2, [16] = 3,
		[24] = 0xe0, 0x0f, 0, 0, 0, 0x7f, [32] = 3,
	};
	static const char ver[] = "\0\0\1\0{\"capabilities\":{\"max_msg_fds\":16}}";
	uint8_t p[32] = { 0 };

	vfu_msg("version", 1, ver, sizeof(ver));
	p[0] = 32;
	p[4] = 3;
	p[18] = 0x10;			/* addr 0x100000 */
	p[26] = 0x10;			/* size 0x100000 */
	vfu_msg("dma-map", 2, p, 32);
	memset(p, 0, sizeof(p));
	p[0] = 20;
	p[4] = 0x24;			/* EVENTFD | TRIGGER */
	p[8] = 2;			/* MSI-X */
	p[16] = 1;
	vfu_msg("set-irqs", 8, p, 20);
	memset(p, 0, sizeof(p));
	p[0] = 0xf8;
	p[1] = 0x8f;			/* BAR0 + 0x8ff8: an EQ doorbell */
	p[12] = 8;
	vfu_msg("region-write", 10, p, 24);
	vfio_device_seed();
	gdma_req_seed("rnic-config-ip", 0x30004, 3, ip, sizeof(ip));
	gdma_req_seed("rnic-create-adapter", 0x30002, 3, adapter, sizeof(adapter));
	gdma_req_seed("alloc-doorbell", 22, 0, range, sizeof(range));
	gdma_req_seed("create-mr", 31, 0, mr, sizeof(mr));
	gdma_req_seed("rnic-create-rc-qp", 0x3000a, 3, rcqp, sizeof(rcqp));
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	top = argv[1];
	if (mkdir(top, 0755) && errno != EEXIST) {
		perror(top);
		return 1;
	}
	gdma_cqe_seeds();
	gdma_wqe_seed("sq-short-oob", GDMA_SQ, GDMA_OOB_SMALL, 1, 0);
	gdma_wqe_seed("sq-long-oob-wrap", GDMA_SQ, GDMA_OOB_LARGE, 4, 7);
	gdma_wqe_seed("rq", GDMA_RQ, GDMA_OOB_SMALL, 2, 3);
	gdma_doorbell_seeds();
	x86_seeds();
	frame_seeds();
	options_seeds();
	netlink_seeds();
	uverbs_write_seeds();
	uverbs_ioctl_seeds();
	roce_seeds();
	vswitch_seeds();
	vfio_seeds();
	return 0;
}
