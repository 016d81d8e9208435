// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The emulated rdma_cm, IB CM and ucma (rdma_cm.h): what Linux's
 * drivers/infiniband/core/{ucma,cma,cm}.c do for a RoCE port, as one
 * state machine per id.
 *
 * An id has the rdma_cm state (IDLE, ADDR_BOUND, ADDR_QUERY, ...), and
 * once it connects the IB CM state (REQ_SENT, REP_RCVD, ESTABLISHED, ...)
 * with the CM's messages as real MADs to the peer's QP1 (device/gsi.h):
 * REQ, MRA, REJ, REP, RTU, DREQ, DREP, each resent after the CM response
 * timeout up to max_cm_retries times as ib_cm derives them (CMA's 20 =
 * 4.096 us x 2^20 for the response, twice the path's packet lifetime of
 * 2^16: 4.6 s a try, 15 retries).  Address resolution asks ARP/ND through
 * the device's neighbour table until the caller's timeout.
 *
 * The PSNs follow the kernel: the REQ and the REP each carry the PSN their
 * sender will *receive* from (cma puts its own seq_num in both, and sets
 * the RTR rq_psn to it); ib_cm gives the RTS sq_psn from the peer's
 * message.  Applications' QPs are modified by librdmacm itself from
 * INIT_QP_ATTR's answers, as with the real ucma (no kernel QP here).
 *
 * VM-wide state (id numbers, port spaces, communication ids) is in
 * cm_registry.c.  Everything runs under emu.lock: commands in the
 * application's threads, received MADs and timers in the device thread.
 */
#include "rdma_cm.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_cm.h>

#include "emulator/core/emu.h"
#include "emulator/core/gid.h"
#include "emulator/core/vm.h"
#include "emulator/device/gsi.h"
#include "emulator/lib/libc.h"
#include "emulator/wire/ib_cm.h"
#include "emulator/wire/roce.h"
#include "cm_registry.h"
#include "kernel.h"

#define AF_IB_			27
#define CMA_CM_RESPONSE_TIMEOUT	20
#define CMA_MAX_CM_RETRIES	15
#define CMA_IBOE_PACKET_LIFETIME 16
#define CMA_CM_MRA_SETTING	24	/* service timeout of cma's MRA */
#define CMA_HDR_LEN		36	/* struct cma_hdr before user data */
#define UCMA_MAX_BACKLOG	1024	/* /proc/sys/net/rdma_ucm/max_backlog */
#define IB_RATE_40_GBPS		7
#define ADDR_ASK_MS		100	/* ARP/ND question interval */
#define IB_QPT_RC_		2
#define IB_QPT_UD_		4
#define RDMA_UDP_QKEY_		0x01234567u
#define RDMA_IB_IP_PS_MASK	0xFFFFFFFFFFFF0000ULL
#define IB_ACCESS_REMOTE_WRITE_	(1 << 1)
#define IB_ACCESS_REMOTE_READ_	(1 << 2)
#define IB_ACCESS_REMOTE_ATOMIC_ (1 << 3)
/* enum ib_qp_attr_mask */
enum {
	QPA_STATE = 1 << 0, QPA_ACCESS_FLAGS = 1 << 3, QPA_PKEY_INDEX = 1 << 4,
	QPA_PORT = 1 << 5, QPA_AV = 1 << 7, QPA_PATH_MTU = 1 << 8,
	QPA_TIMEOUT = 1 << 9, QPA_RETRY_CNT = 1 << 10, QPA_RNR_RETRY = 1 << 11,
	QPA_RQ_PSN = 1 << 12, QPA_MAX_QP_RD_ATOMIC = 1 << 13,
	QPA_MIN_RNR_TIMER = 1 << 15, QPA_SQ_PSN = 1 << 16,
	QPA_MAX_DEST_RD_ATOMIC = 1 << 17, QPA_DEST_QPN = 1 << 20,
};

enum cma_state {
	CMA_IDLE, CMA_ADDR_QUERY, CMA_ADDR_RESOLVED, CMA_ROUTE_QUERY,
	CMA_ROUTE_RESOLVED, CMA_CONNECT, CMA_DISCONNECT, CMA_ADDR_BOUND,
	CMA_LISTEN, CMA_DEVICE_REMOVAL, CMA_DESTROYING,
};

enum ibcm_state {
	IBCM_IDLE, IBCM_LISTEN, IBCM_REQ_SENT, IBCM_REQ_RCVD,
	IBCM_MRA_REQ_SENT, IBCM_MRA_REQ_RCVD, IBCM_REP_SENT, IBCM_REP_RCVD,
	IBCM_MRA_REP_SENT, IBCM_MRA_REP_RCVD, IBCM_ESTABLISHED,
	IBCM_DREQ_SENT, IBCM_DREQ_RCVD, IBCM_TIMEWAIT,
};

enum {
	EV_ADDR_RESOLVED, EV_ADDR_ERROR, EV_ROUTE_RESOLVED, EV_ROUTE_ERROR,
	EV_CONNECT_REQUEST, EV_CONNECT_RESPONSE, EV_CONNECT_ERROR,
	EV_UNREACHABLE, EV_REJECTED, EV_ESTABLISHED, EV_DISCONNECTED,
	EV_DEVICE_REMOVAL, EV_MULTICAST_JOIN, EV_MULTICAST_ERROR,
	EV_ADDR_CHANGE, EV_TIMEWAIT_EXIT,
};

/* struct sockaddr_ib (AF_IB), as librdmacm and the kernel lay it out */
struct sockaddr_ib_ {
	uint16_t sib_family;
	uint16_t sib_pkey;		/* big endian */
	uint32_t sib_flowinfo;
	uint8_t sib_addr[16];
	uint64_t sib_sid, sib_sid_mask;	/* big endian */
	uint64_t sib_scope_id;
};

struct cm_event;

struct emu_cm_file {
	int app_fd, dev_fd;
	struct cm_event *head, *tail;
	struct emu_cm_file *next;
};

struct emu_cm_id {
	struct emu_cm_id *next;		/* every id of the process */
	struct emu_cm_file *file;
	uint32_t id;
	bool published;			/* a connect request's id: fetched */
	uint64_t uid;
	uint32_t events_reported;
	uint16_t ps;
	uint8_t qp_type;
	enum cma_state state;
	struct sockaddr_storage src, dst;
	bool has_dev;			/* bound to the RNIC's port 1 */
	uint8_t sgid_index, sgid[16], dgid[16], dmac[6];
	bool bound;			/* in its port's bind list */
	bool vm_listen;			/* --vm: in the VM's listeners */
	uint16_t port;
	bool reuseaddr, afonly, afonly_set, tos_set, timeout_set;
	uint8_t tos, ack_timeout;
	uint32_t seq_num, qp_num;
	bool srq;
	int backlog, pending;
	struct emu_cm_id *listener;	/* connect request not yet answered */
	/* the route (path record) */
	uint8_t mtu, hop_limit, pkt_life;
	uint32_t flow_label;
	uint64_t addr_deadline, addr_next_ask;	/* ns */
	/* the IB CM */
	enum ibcm_state ib;
	bool has_ib;
	bool inherited;			/* a fork's copy: the parent's */
	uint32_t local_comm_id, remote_comm_id, remote_qpn;
	uint64_t tid, remote_ca_guid;
	uint32_t sq_psn;
	uint8_t resp_res, init_depth, retry_count, rnr_retry, max_cm_retries;
	uint8_t av_timeout, path_mtu;
	bool flow_control;
	uint32_t timeout_ms;
	uint8_t msg[IB_MAD_LEN];	/* the MAD awaiting its answer */
	bool msg_pending;
	unsigned int retries_left;
	uint64_t msg_deadline, timewait_deadline;
};

struct cm_event {
	struct cm_event *next;
	struct emu_cm_id *id;		/* whose event (ctx) */
	struct emu_cm_id *conn;		/* CONNECT_REQUEST: the new id */
	struct rdma_ucm_event_resp resp;
};

static struct emu_cm_id *all_ids;
static unsigned int gsi_users;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ib_cm's cm_convert_to_ms(): 4.096 us x 2^t, as 2^(t - 8) ms */
static uint32_t cm_ms(uint8_t t)
{
	return 1u << (t > 8 ? (t > 31 ? 23 : t - 8) : 0);
}

/* cm_ack_timeout(): the local ACK timeout from the CA's ACK delay */
static uint8_t cm_ack_timeout(uint8_t ca_ack_delay, uint8_t pkt_life)
{
	int t = pkt_life + 1;

	if (t >= ca_ack_delay)
		t += ca_ack_delay >= t - 1;
	else
		t = ca_ack_delay + (t >= ca_ack_delay - 1);
	return (uint8_t)(t > 31 ? 31 : t);
}

/* ---- addresses --------------------------------------------------------------- */

/*
 * cma_any_addr(): the zero address or a loopback one (127/8, ::1), which
 * the kernel binds to no device either -- libfabric's verbs provider binds
 * "localhost" for a passive endpoint given no address, and listens so on
 * every device.
 */
static bool sa_any(const struct sockaddr_storage *a)
{
	const struct sockaddr_in *s4 = (const void *)a;
	const struct sockaddr_in6 *s6 = (const void *)a;
	const struct sockaddr_ib_ *sib = (const void *)a;
	static const uint8_t zero[16];

	switch (a->ss_family) {
	case AF_INET:
		return s4->sin_addr.s_addr == 0 ||
		       (ntohl(s4->sin_addr.s_addr) >> 24) == 127;
	case AF_INET6:
		return !memcmp(&s6->sin6_addr, zero, 16) ||
		       IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr);
	case AF_IB_: return !memcmp(sib->sib_addr, zero, 16);
	default: return true;
	}
}

static uint16_t sa_port(const struct sockaddr_storage *a)
{
	switch (a->ss_family) {
	case AF_INET: return ntohs(((const struct sockaddr_in *)a)->sin_port);
	case AF_INET6:
		return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
	case AF_IB_:
		return (uint16_t)be64toh(((const struct sockaddr_ib_ *)a)->sib_sid);
	default: return 0;
	}
}

static void sa_set_port(struct sockaddr_storage *a, uint16_t port)
{
	struct sockaddr_ib_ *sib = (void *)a;

	switch (a->ss_family) {
	case AF_INET: ((struct sockaddr_in *)a)->sin_port = htons(port); break;
	case AF_INET6:
		((struct sockaddr_in6 *)a)->sin6_port = htons(port);
		break;
	case AF_IB_:
		sib->sib_sid = htobe64((be64toh(sib->sib_sid) &
					RDMA_IB_IP_PS_MASK) | port);
		break;
	}
}

static size_t sa_size(const struct sockaddr_storage *a)
{
	switch (a->ss_family) {
	case AF_INET: return sizeof(struct sockaddr_in);
	case AF_INET6: return sizeof(struct sockaddr_in6);
	case AF_IB_: return sizeof(struct sockaddr_ib_);
	default: return 0;
	}
}

/* The address as a GID (IPv4 mapped). */
static void sa_gid(const struct sockaddr_storage *a, uint8_t gid[16])
{
	memset(gid, 0, 16);
	if (a->ss_family == AF_INET) {
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, &((const struct sockaddr_in *)a)->sin_addr, 4);
	} else if (a->ss_family == AF_INET6) {
		memcpy(gid, &((const struct sockaddr_in6 *)a)->sin6_addr, 16);
	} else if (a->ss_family == AF_IB_) {
		memcpy(gid, ((const struct sockaddr_ib_ *)a)->sib_addr, 16);
	}
}

static void sa_from_gid(struct sockaddr_storage *a, const uint8_t gid[16],
			uint16_t port)
{
	memset(a, 0, sizeof(*a));
	if (emu_gid_is_v4(gid)) {
		struct sockaddr_in *s = (void *)a;

		s->sin_family = AF_INET;
		memcpy(&s->sin_addr, gid + 12, 4);
		s->sin_port = htons(port);
	} else {
		struct sockaddr_in6 *s = (void *)a;

		s->sin6_family = AF_INET6;
		memcpy(&s->sin6_addr, gid, 16);
		s->sin6_port = htons(port);
	}
}

static bool sa_equal_addr(const struct sockaddr_storage *a,
			  const struct sockaddr_storage *b)
{
	uint8_t ga[16], gb[16];

	if (a->ss_family != b->ss_family)
		return false;
	sa_gid(a, ga);
	sa_gid(b, gb);
	return !memcmp(ga, gb, 16);
}

/* rdma_addr_size() of a kernel sockaddr_storage: 0 for a bad family */
static size_t kss_size(const void *addr)
{
	return sa_size(addr);
}

/* The GID table index of @gid on port 1, or -1. */
static int gid_index(const uint8_t gid[16])
{
	unsigned int i, n = emu_gid_count(&emu.opts, 1);
	uint8_t g[16];

	for (i = 0; i < n; i++)
		if (!emu_gid_get(&emu.opts, 1, i, g) && !memcmp(g, gid, 16))
			return (int)i;
	return -1;
}

static bool roce_device(void)
{
	return emu_gid_roce_port(&emu.opts, 1) && kernel_era()->rnic_cq_flag;
}

/* A multicast group (224.0.0.0/4, ff00::/8): its Ethernet address. */
static bool mcast_mac(const uint8_t gid[16], uint8_t mac[6])
{
	if (emu_gid_is_v4(gid)) {
		if ((gid[12] & 0xf0) != 0xe0)
			return false;
		mac[0] = 0x01;
		mac[1] = 0x00;
		mac[2] = 0x5e;
		mac[3] = gid[13] & 0x7f;
		mac[4] = gid[14];
		mac[5] = gid[15];
		return true;
	}
	if (gid[0] != 0xff)
		return false;
	mac[0] = mac[1] = 0x33;
	memcpy(mac + 2, gid + 12, 4);
	return true;
}

/*
 * The source address for @dst: the port's address of the same family
 * whose subnet holds it (the route's source), or an IPv6 link-local one
 * for a link-local destination; a multicast group goes out of the port's
 * first address of its family.  False: no route (ENETUNREACH).
 */
static bool route_src(const uint8_t dst[16], uint8_t src[16])
{
	const struct mana_emu_options *o = &emu.opts;
	bool v4 = emu_gid_is_v4(dst);
	uint8_t mac[6];
	unsigned int i;

	if (!v4 && dst[0] == 0xfe && (dst[1] & 0xc0) == 0x80) {
		emu_gid_link_local(o, 1, src);
		return true;
	}
	for (i = 0; i < o->nips; i++) {
		const struct mana_emu_ip *ip = &o->ips[i];

		if (ip->port != 1 || (ip->family == AF_INET) != v4)
			continue;
		/* a group is reached from any address */
		if (mcast_mac(dst, mac) || emu_ip_in_subnet(ip, v4 ? dst + 12 : dst)) {
			memset(src, 0, 16);
			if (v4) {
				src[10] = src[11] = 0xff;
				memcpy(src + 12, ip->addr, 4);
			} else {
				memcpy(src, ip->addr, 16);
			}
			return true;
		}
	}
	return false;
}

/* ---- events -------------------------------------------------------------------- */

static void token(struct emu_cm_file *f)
{
	char t = 0;

	if (f->dev_fd >= 0 && emu_libc_send(f->dev_fd, &t, 1, MSG_DONTWAIT) < 0 &&
	    emu_verbose())
		emu_log("rdma_cm fd %d: event token not sent", f->app_fd);
}

/* An event leaves the queue: its token goes (poll stays truthful). */
static void untoken(struct emu_cm_file *f)
{
	char t;

	if (f->app_fd >= 0)
		emu_libc_recv(f->app_fd, &t, 1, MSG_DONTWAIT);
}

static struct cm_event *event_new(struct emu_cm_id *id, int event, int status)
{
	struct cm_event *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->id = id;
	e->resp.uid = id->uid;
	e->resp.id = id->id;
	e->resp.event = (uint32_t)event;
	e->resp.status = (uint32_t)status;
	return e;
}

static void event_queue(struct emu_cm_id *id, struct cm_event *e)
{
	struct emu_cm_file *f = id->file;

	if (emu_verbose())
		emu_log("rdma_cm id %u: event %u status %d", e->resp.id,
			e->resp.event, (int)e->resp.status);
	if (f->tail)
		f->tail->next = e;
	else
		f->head = e;
	f->tail = e;
	token(f);
}

static void post(struct emu_cm_id *id, int event, int status)
{
	struct cm_event *e = event_new(id, event, status);

	if (e)
		event_queue(id, e);
}

/* An event with private data (and the peer's connection parameters). */
static void post_conn(struct emu_cm_id *id, int event, int status,
		      const uint8_t *priv, size_t len,
		      const struct ib_cm_msg *m)
{
	struct cm_event *e = event_new(id, event, status);
	struct rdma_ucm_conn_param *c;

	if (!e)
		return;
	c = &e->resp.param.conn;
	memcpy(c->private_data, priv, len);
	c->private_data_len = (uint8_t)len;
	if (m) {
		/* the peer's view, swapped as ib_cm's events give them */
		c->responder_resources = m->initiator_depth;
		c->initiator_depth = m->responder_resources;
		c->flow_control = m->flow_control;
		c->retry_count = m->retry_count;
		c->rnr_retry_count = m->rnr_retry_count;
		c->srq = m->srq;
		c->qp_num = m->local_qpn;
	}
	event_queue(id, e);
}

/* ---- MADs ----------------------------------------------------------------------- */

static void path_of(const struct emu_cm_id *id, struct emu_gsi_path *p)
{
	memset(p, 0, sizeof(*p));
	p->port = 1;
	memcpy(p->sgid, id->sgid, 16);
	memcpy(p->dgid, id->dgid, 16);
	memcpy(p->dmac, id->dmac, 6);
	p->traffic_class = id->tos;
	p->hop_limit = id->hop_limit;
	p->flow_label = id->flow_label;
}

static void wake_timers(void)
{
	emu_gsi_kick();
}

/* Send @m; with @answer the MAD is kept and resent until answered. */
static void cm_send(struct emu_cm_id *id, struct ib_cm_msg *m, bool answer)
{
	struct emu_gsi_path p;
	uint8_t mad[IB_MAD_LEN];

	m->tid = id->tid;
	if (ib_cm_encode(m, mad)) {
		emu_log("rdma_cm: cannot encode a CM %s", ib_cm_attr_name(m->attr_id));
		return;
	}
	path_of(id, &p);
	if (emu_verbose())
		emu_log("rdma_cm id %u: send %s", id->id,
			ib_cm_attr_name(m->attr_id));
	emu_gsi_send(&p, mad, sizeof(mad));
	if (!answer)
		return;
	memcpy(id->msg, mad, sizeof(mad));
	id->msg_pending = true;
	id->retries_left = id->max_cm_retries;
	id->msg_deadline = now_ns() + (uint64_t)id->timeout_ms * 1000000ull;
	wake_timers();
}

static void cm_cancel(struct emu_cm_id *id)
{
	id->msg_pending = false;
}

static void cm_msg_init(struct emu_cm_id *id, struct ib_cm_msg *m,
			uint16_t attr)
{
	memset(m, 0, sizeof(*m));
	m->attr_id = attr;
	m->local_comm_id = id->local_comm_id;
	m->remote_comm_id = id->remote_comm_id;
}

static void send_rej(struct emu_cm_id *id, uint16_t reason, uint8_t which,
		     const void *ari, size_t ari_len, const void *priv,
		     size_t len)
{
	struct ib_cm_msg m;

	cm_msg_init(id, &m, IB_CM_ATTR_REJ);
	m.msg_rejected = which;
	m.reason = reason;
	m.reject_info_len = (uint8_t)ari_len;
	if (ari_len)
		memcpy(m.ari, ari, ari_len);
	if (len)
		memcpy(m.private_data, priv, len);
	cm_send(id, &m, false);
}

static void send_simple(struct emu_cm_id *id, uint16_t attr, bool answer)
{
	struct ib_cm_msg m;

	cm_msg_init(id, &m, attr);
	if (attr == IB_CM_ATTR_DREQ)
		m.remote_qpn = id->remote_qpn;
	cm_send(id, &m, answer);
}

static void enter_timewait(struct emu_cm_id *id)
{
	cm_cancel(id);
	id->ib = IBCM_TIMEWAIT;
	id->timewait_deadline = now_ns() +
				(uint64_t)cm_ms(id->av_timeout) * 1000000ull;
	wake_timers();
}

/* ---- ids ---------------------------------------------------------------------- */

static int gsi_get(void);
static void gsi_put(void);

static struct emu_cm_id *id_new(struct emu_cm_file *f, uint16_t ps,
				uint8_t qp_type, bool publish)
{
	struct emu_cm_id *id = calloc(1, sizeof(*id));

	if (!id)
		return NULL;
	if (cm_reg_id_alloc(id, &id->id)) {
		free(id);
		return NULL;
	}
	id->file = f;
	id->published = publish;
	id->ps = ps;
	id->qp_type = qp_type;
	id->seq_num = (uint32_t)random() & ROCE_PSN_MASK;
	id->hop_limit = 64;
	id->next = all_ids;
	all_ids = id;
	return id;
}

static void port_release(struct emu_cm_id *id)
{
	if (id->vm_listen)
		emu_vm_cm_listen(id->ps, id->port, false);
	id->vm_listen = false;
	if (id->bound)
		cm_reg_port_del(id);
	id->bound = false;
}

static void id_unlink(struct emu_cm_id *id)
{
	struct emu_cm_id **pp;

	for (pp = &all_ids; *pp; pp = &(*pp)->next)
		if (*pp == id) {
			*pp = id->next;
			break;
		}
}

static void id_destroy(struct emu_cm_id *id);

/* Drop @id's queued events; a listener's unfetched requests go too. */
static void drop_events(struct emu_cm_id *id)
{
	struct emu_cm_file *f = id->file;
	struct cm_event **pp = &f->head, *e;

	f->tail = NULL;
	while ((e = *pp)) {
		if (e->id != id && e->conn != id) {
			f->tail = e;
			pp = &e->next;
			continue;
		}
		*pp = e->next;
		untoken(f);
		if (e->conn && e->conn != id)
			id_destroy(e->conn);
		free(e);
		/* a destroyed conn id may have dropped events behind us */
		pp = &f->head;
		f->tail = NULL;
		while (*pp && (*pp)->id != id && (*pp)->conn != id) {
			f->tail = *pp;
			pp = &(*pp)->next;
		}
	}
}

/* ib_cm's cm_destroy_id(): what the peer is told as the id goes. */
static void ib_destroy(struct emu_cm_id *id)
{
	uint64_t guid = htobe64(emu_dev.node_guid);

	switch (id->ib) {
	case IBCM_REQ_SENT:
	case IBCM_MRA_REQ_RCVD:
		cm_cancel(id);
		send_rej(id, IB_CM_REJ_TIMEOUT, IB_CM_MSG_REQ, &guid,
			 sizeof(guid), NULL, 0);
		break;
	case IBCM_REQ_RCVD:
	case IBCM_MRA_REQ_SENT:
	case IBCM_REP_RCVD:
	case IBCM_MRA_REP_SENT:
		send_rej(id, IB_CM_REJ_CONSUMER_DEFINED,
			 id->ib == IBCM_REP_RCVD || id->ib == IBCM_MRA_REP_SENT ?
			 IB_CM_MSG_REP : IB_CM_MSG_REQ, NULL, 0, NULL, 0);
		break;
	case IBCM_REP_SENT:
	case IBCM_MRA_REP_RCVD:
		cm_cancel(id);
		send_rej(id, IB_CM_REJ_CONSUMER_DEFINED, IB_CM_MSG_REQ, NULL,
			 0, NULL, 0);
		break;
	case IBCM_ESTABLISHED:
		/* one DREQ, not retried: the id is gone */
		send_simple(id, IB_CM_ATTR_DREQ, false);
		break;
	case IBCM_DREQ_RCVD:
		send_simple(id, IB_CM_ATTR_DREP, false);
		break;
	default:
		break;
	}
	cm_cancel(id);
	id->ib = IBCM_IDLE;
}

static void id_destroy(struct emu_cm_id *id)
{
	id->state = CMA_DESTROYING;
	drop_events(id);
	if (id->has_ib)
		ib_destroy(id);
	if (id->listener) {
		id->listener->pending--;
		id->listener = NULL;
	}
	/* requests of a listener not yet fetched hold it: they go first */
	port_release(id);
	id_unlink(id);
	cm_reg_id_free(id->id);
	if (id->has_dev)
		gsi_put();
	free(id);
}

/* Forget @l as the listener of any conn id (it is going away). */
static void forget_listener(struct emu_cm_id *l)
{
	struct emu_cm_id *id;

	for (id = all_ids; id; id = id->next)
		if (id->listener == l)
			id->listener = NULL;
}

/* ---- the device: QP1 and its timers -------------------------------------------- */

static void cm_gsi_rx(unsigned int port, const struct roce_pkt *p);
static int cm_gsi_work(void);

static const struct emu_gsi_ops gsi_ops = { .rx = cm_gsi_rx, .work = cm_gsi_work };

/* An id bound to the device holds QP1 open (the device thread runs). */
static int gsi_get(void)
{
	int ret;

	if (gsi_users++)
		return 0;
	ret = emu_gsi_register(1, &gsi_ops);
	if (ret)
		gsi_users--;
	else
		emu_vm_cm_gsi(true);
	return ret;
}

static void gsi_put(void)
{
	if (gsi_users && !--gsi_users) {
		emu_gsi_register(1, NULL);
		emu_vm_cm_gsi(false);
	}
}

static int bind_dev(struct emu_cm_id *id, const uint8_t sgid[16])
{
	int idx = gid_index(sgid);

	if (idx < 0)
		return -ENODEV;
	if (!id->has_dev) {
		int ret = gsi_get();

		if (ret)
			return ret;
	}
	id->has_dev = true;
	id->sgid_index = (uint8_t)idx;
	memcpy(id->sgid, sgid, 16);
	return 0;
}

/* ---- port spaces (cma_get_port) -------------------------------------------------- */

#define MAX_OWNERS 64

static int check_port(struct emu_cm_id *me, uint16_t port, bool reuseaddr)
{
	void *owners[MAX_OWNERS];
	unsigned int n, i;

	/* the VM's other processes: only their listeners are known */
	if (emu_vm_cm_listened_elsewhere(me->ps, port))
		return -EADDRINUSE;
	n = cm_reg_port_owners(me->ps, port, owners, MAX_OWNERS);
	for (i = 0; i < n && i < MAX_OWNERS; i++) {
		struct emu_cm_id *cur = owners[i];

		if (cur == me)
			continue;
		if (reuseaddr && cur->reuseaddr)
			continue;
		if (me->afonly && cur->afonly &&
		    me->src.ss_family != cur->src.ss_family)
			continue;
		if (sa_any(&me->src) || sa_any(&cur->src))
			return -EADDRNOTAVAIL;
		if (sa_equal_addr(&me->src, &cur->src))
			return -EADDRINUSE;
	}
	return 0;
}

static int get_port(struct emu_cm_id *id)
{
	uint16_t port = sa_port(&id->src);
	unsigned int tries;
	int ret;

	if (!port) {
		/* cma_alloc_any_port: a random start in 32768..60999 */
		uint16_t low = 32768, span = 60999 - 32768 + 1;
		uint16_t p = (uint16_t)(low + (unsigned int)random() % span);

		for (tries = 0; tries < span; tries++) {
			if (!cm_reg_port_owners(id->ps, p, NULL, 0) &&
			    !emu_vm_cm_listened_elsewhere(id->ps, p))
				break;
			p = (uint16_t)(p + 1 > 60999 ? low : p + 1);
		}
		if (tries == span)
			return -EADDRNOTAVAIL;
		port = p;
	} else {
		if (port < 1024 && geteuid() != 0)
			return -EACCES;
		ret = check_port(id, port, id->reuseaddr);
		if (ret)
			return ret;
	}
	ret = cm_reg_port_add(id->ps, port, id);
	if (ret)
		return ret;
	id->bound = true;
	id->port = port;
	sa_set_port(&id->src, port);
	return 0;
}

/* ---- rdma_cm operations ------------------------------------------------------------ */

static int do_bind(struct emu_cm_id *id, const struct sockaddr_storage *addr)
{
	uint8_t gid[16];
	int ret;

	if (id->state != CMA_IDLE)
		return -EINVAL;
	if (addr->ss_family != AF_INET && addr->ss_family != AF_INET6 &&
	    addr->ss_family != AF_IB_)
		return -EAFNOSUPPORT;
	id->state = CMA_ADDR_BOUND;
	memcpy(&id->src, addr, sa_size(addr));
	if (addr->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)addr;

		/* cma_check_linklocal(): a link-local address names its link */
		if (s6->sin6_addr.s6_addr[0] == 0xfe &&
		    (s6->sin6_addr.s6_addr[1] & 0xc0) == 0x80 &&
		    !s6->sin6_scope_id) {
			ret = -EINVAL;
			goto err;
		}
		if (!id->afonly_set)
			id->afonly = false;
	} else if (addr->ss_family == AF_INET) {
		id->afonly = true;
	}
	if (!sa_any(addr)) {
		sa_gid(addr, gid);
		/* rdma_translate_ip(): no interface has the address */
		if (addr->ss_family != AF_IB_ &&
		    !emu_gid_port_owns(&emu.opts, 1, gid)) {
			ret = -EADDRNOTAVAIL;
			goto err;
		}
		if (!roce_device()) {
			ret = -ENODEV;
			goto err;
		}
		ret = bind_dev(id, gid);
		if (ret)
			goto err;
	}
	ret = get_port(id);
	if (ret)
		goto err;
	return 0;
err:
	id->state = CMA_IDLE;
	memset(&id->src, 0, sizeof(id->src));
	return ret;
}

static int bind_any(struct emu_cm_id *id, sa_family_t family)
{
	struct sockaddr_storage a;

	memset(&a, 0, sizeof(a));
	a.ss_family = family;
	return do_bind(id, &a);
}

static void addr_resolved(struct emu_cm_id *id)
{
	id->state = CMA_ADDR_RESOLVED;
	id->addr_deadline = 0;
	post(id, EV_ADDR_RESOLVED, 0);
}

static int do_resolve_addr(struct emu_cm_id *id,
			   const struct sockaddr_storage *src,
			   const struct sockaddr_storage *dst,
			   uint32_t timeout_ms)
{
	uint8_t dgid[16], sgid[16];
	int ret;

	if (dst->ss_family != AF_INET && dst->ss_family != AF_INET6)
		return dst->ss_family == AF_IB_ ? -EINVAL : -EAFNOSUPPORT;
	if (id->state == CMA_IDLE) {
		if (src && src->ss_family)
			ret = do_bind(id, src);
		else
			ret = bind_any(id, dst->ss_family);
		if (ret)
			return ret;
	}
	if (id->state != CMA_ADDR_BOUND)
		return -EINVAL;
	if (id->src.ss_family != dst->ss_family &&
	    !(id->src.ss_family == AF_INET6 && sa_any(&id->src)))
		return -EINVAL;
	sa_gid(dst, dgid);
	if (sa_any(dst))
		return -EINVAL;
	if (!roce_device())
		return -ENODEV;
	if (sa_any(&id->src)) {
		uint16_t port = id->port;

		if (!route_src(dgid, sgid))
			return -ENETUNREACH;
		sa_from_gid(&id->src, sgid, port);
		ret = bind_dev(id, sgid);
		if (ret)
			return ret;
	} else if (!route_src(dgid, sgid) && !emu_gid_port_owns(&emu.opts, 1,
							       dgid)) {
		return -ENETUNREACH;
	}
	memcpy(&id->dst, dst, sa_size(dst));
	memcpy(id->dgid, dgid, 16);
	id->state = CMA_ADDR_QUERY;
	if (mcast_mac(dgid, id->dmac) ||
	    emu_gsi_neigh_lookup(1, dgid, id->dmac)) {
		addr_resolved(id);
		return 0;
	}
	id->addr_deadline = now_ns() + (uint64_t)timeout_ms * 1000000ull;
	id->addr_next_ask = 0;
	wake_timers();
	return 0;
}

static int do_resolve_route(struct emu_cm_id *id)
{
	if (!id->has_dev)
		return -EINVAL;
	if (id->state != CMA_ADDR_RESOLVED)
		return -EINVAL;
	id->state = CMA_ROUTE_QUERY;
	/* cma_resolve_iboe_route(): the path from the port and the route */
	id->mtu = emu_port_active_mtu(1);
	id->pkt_life = CMA_IBOE_PACKET_LIFETIME;
	if (!emu_gid_is_v4(id->dgid))
		id->flow_label = ((uint32_t)sa_port(&id->src) * 31 +
				  sa_port(&id->dst)) & 0xfffff;
	id->state = CMA_ROUTE_RESOLVED;
	post(id, EV_ROUTE_RESOLVED, 0);
	return 0;
}

/* struct cma_hdr: version, IP version, source port, both addresses */
static void cma_hdr(const struct emu_cm_id *id, uint8_t *h)
{
	bool v4 = id->src.ss_family == AF_INET;
	uint16_t port = sa_port(&id->src);

	memset(h, 0, CMA_HDR_LEN);
	h[0] = 0;			/* CMA_VERSION */
	h[1] = v4 ? 4 << 4 : 6 << 4;
	h[2] = (uint8_t)(port >> 8);
	h[3] = (uint8_t)port;
	if (v4) {
		memcpy(h + 4 + 12, id->sgid + 12, 4);
		memcpy(h + 20 + 12, id->dgid + 12, 4);
	} else {
		memcpy(h + 4, id->sgid, 16);
		memcpy(h + 20, id->dgid, 16);
	}
}

static int do_connect(struct emu_cm_id *id,
		      const struct rdma_ucm_conn_param *cp)
{
	struct ib_cm_msg m;

	if (!id->has_dev)
		return -EINVAL;
	if (id->state != CMA_ROUTE_RESOLVED)
		return -EINVAL;
	/* SIDR (the UD port space's connect) is not emulated */
	if (id->qp_type != IB_QPT_RC_)
		return -EOPNOTSUPP;
	/*
	 * Before mana_ib gave the kernel a GSI QP (6.14) ib_mad could not
	 * open the port and ib_cm has none: ib_send_cm_req() finds no port
	 * for the path (cm_init_av_by_path: -EINVAL).
	 */
	if (!kernel_era()->ud_kernel_only)
		return -EINVAL;
	if (CMA_HDR_LEN + cp->private_data_len > IB_CM_REQ_PRIV)
		return -EINVAL;
	id->state = CMA_CONNECT;
	id->qp_num = cp->qp_num & ROCE_QPN_MASK;
	id->srq = cp->srq;
	id->has_ib = true;
	id->local_comm_id = cm_reg_comm_id_alloc();
	id->remote_comm_id = 0;
	id->tid = (uint64_t)id->local_comm_id << 32 | (uint32_t)random();
	id->resp_res = cp->responder_resources;
	id->init_depth = cp->initiator_depth;
	id->retry_count = cp->retry_count > 7 ? 7 : cp->retry_count;
	id->rnr_retry = cp->rnr_retry_count > 7 ? 7 : cp->rnr_retry_count;
	id->flow_control = cp->flow_control;
	id->max_cm_retries = CMA_MAX_CM_RETRIES;
	id->av_timeout = (uint8_t)(id->pkt_life + 1);
	id->path_mtu = id->mtu;
	id->timeout_ms = cm_ms(id->pkt_life) * 2 + cm_ms(CMA_CM_RESPONSE_TIMEOUT);
	memset(&m, 0, sizeof(m));
	m.attr_id = IB_CM_ATTR_REQ;
	m.local_comm_id = id->local_comm_id;
	m.service_id = ((uint64_t)id->ps << 16) + sa_port(&id->dst);
	m.local_ca_guid = emu_dev.node_guid;
	m.local_qpn = id->qp_num;
	m.responder_resources = id->resp_res;
	m.initiator_depth = id->init_depth;
	m.remote_cm_response_timeout = CMA_CM_RESPONSE_TIMEOUT;
	m.transport_type = 0;
	m.flow_control = id->flow_control;
	m.starting_psn = id->seq_num;
	m.local_cm_response_timeout = CMA_CM_RESPONSE_TIMEOUT;
	m.retry_count = id->retry_count;
	m.pkey = ROCE_PKEY_DEFAULT;
	m.path_mtu = id->mtu;
	m.rnr_retry_count = id->rnr_retry;
	m.max_cm_retries = CMA_MAX_CM_RETRIES;
	m.srq = id->srq;
	memcpy(m.local_gid, id->sgid, 16);
	memcpy(m.remote_gid, id->dgid, 16);
	m.flow_label = id->flow_label;
	m.packet_rate = IB_RATE_40_GBPS;
	m.traffic_class = id->tos;
	m.hop_limit = id->hop_limit;
	m.local_ack_timeout = cm_ack_timeout(MANA_CA_ACK_DELAY, id->pkt_life);
	cma_hdr(id, m.private_data);
	memcpy(m.private_data + CMA_HDR_LEN, cp->private_data,
	       cp->private_data_len);
	id->ib = IBCM_REQ_SENT;
	cm_send(id, &m, true);
	return 0;
}

static int do_listen(struct emu_cm_id *id, int backlog)
{
	int ret;

	if (id->state == CMA_LISTEN) {
		id->backlog = backlog;
		return 0;
	}
	if (id->state == CMA_IDLE) {
		ret = bind_any(id, AF_INET);
		if (ret)
			return ret;
	}
	if (id->state != CMA_ADDR_BOUND)
		return -EINVAL;
	if (id->reuseaddr) {
		ret = check_port(id, id->port, false);
		if (ret)
			return ret;
		id->reuseaddr = false;
	}
	if (id->has_dev || roce_device()) {
		/* an any-address listener listens on the RoCE port too */
		if (!id->has_dev) {
			ret = gsi_get();
			if (ret)
				return ret;
			id->has_dev = true;
			id->sgid_index = 0;
		}
	}
	ret = emu_vm_cm_listen(id->ps, id->port, true);
	if (ret)
		return ret;
	id->vm_listen = emu_vm_slot() >= 0;
	id->state = CMA_LISTEN;
	id->backlog = backlog;
	return 0;
}

static int do_accept(struct emu_cm_id *id, const struct rdma_ucm_conn_param *cp)
{
	struct ib_cm_msg m;

	if (!id->has_dev || id->state != CMA_CONNECT || !id->has_ib)
		return -EINVAL;
	if (!cp) {
		/* the active side after CONNECT_RESPONSE: cma_rep_recv() */
		if (id->ib != IBCM_REP_RCVD && id->ib != IBCM_MRA_REP_SENT)
			return -EINVAL;
		send_simple(id, IB_CM_ATTR_RTU, false);
		id->ib = IBCM_ESTABLISHED;
		return 0;
	}
	if (id->ib != IBCM_REQ_RCVD && id->ib != IBCM_MRA_REQ_SENT)
		return -EINVAL;
	if (cp->private_data_len > IB_CM_REP_PRIV)
		return -EINVAL;
	id->qp_num = cp->qp_num & ROCE_QPN_MASK;
	id->srq = cp->srq;
	memset(&m, 0, sizeof(m));
	cm_msg_init(id, &m, IB_CM_ATTR_REP);
	m.local_qpn = id->qp_num;
	m.starting_psn = id->seq_num;
	m.responder_resources = cp->responder_resources;
	m.initiator_depth = cp->initiator_depth;
	m.target_ack_delay = MANA_CA_ACK_DELAY;
	m.failover_accepted = 0;
	m.flow_control = cp->flow_control;
	m.rnr_retry_count = cp->rnr_retry_count > 7 ? 7 : cp->rnr_retry_count;
	m.srq = cp->srq;
	m.local_ca_guid = emu_dev.node_guid;
	memcpy(m.private_data, cp->private_data, cp->private_data_len);
	id->resp_res = cp->responder_resources;
	id->init_depth = cp->initiator_depth;
	id->ib = IBCM_REP_SENT;
	if (id->listener) {
		id->listener->pending--;
		id->listener = NULL;
	}
	cm_send(id, &m, true);
	return 0;
}

static int do_reject(struct emu_cm_id *id, const void *priv, size_t len,
		     uint16_t reason)
{
	if (!id->has_dev || !id->has_ib)
		return -EINVAL;
	if (len > IB_CM_REJ_PRIV)
		return -EINVAL;
	switch (id->ib) {
	case IBCM_REQ_SENT:
	case IBCM_MRA_REQ_RCVD:
	case IBCM_REQ_RCVD:
	case IBCM_MRA_REQ_SENT:
	case IBCM_REP_RCVD:
	case IBCM_MRA_REP_SENT:
		cm_cancel(id);
		send_rej(id, reason, id->ib == IBCM_REP_RCVD ||
			 id->ib == IBCM_MRA_REP_SENT ? IB_CM_MSG_REP :
			 IB_CM_MSG_REQ, NULL, 0, priv, len);
		id->ib = IBCM_IDLE;
		break;
	case IBCM_REP_SENT:
	case IBCM_MRA_REP_RCVD:
		send_rej(id, reason, IB_CM_MSG_REQ, NULL, 0, priv, len);
		enter_timewait(id);
		break;
	default:
		return -EINVAL;
	}
	if (id->listener) {
		id->listener->pending--;
		id->listener = NULL;
	}
	return 0;
}

static int do_disconnect(struct emu_cm_id *id)
{
	if (!id->has_dev || !id->has_ib)
		return -EINVAL;
	/* initiate (DREQ) or answer (DREP); cma ignores a wrong state */
	if (id->ib == IBCM_ESTABLISHED) {
		send_simple(id, IB_CM_ATTR_DREQ, true);
		id->ib = IBCM_DREQ_SENT;
	} else if (id->ib == IBCM_DREQ_RCVD) {
		send_simple(id, IB_CM_ATTR_DREP, false);
		enter_timewait(id);
	}
	return 0;
}

/* ---- received MADs ---------------------------------------------------------------- */

static struct emu_cm_id *by_local(uint32_t local_comm_id)
{
	struct emu_cm_id *id;

	if (!local_comm_id)
		return NULL;
	for (id = all_ids; id; id = id->next)
		if (id->has_ib && id->local_comm_id == local_comm_id &&
		    id->state != CMA_DESTROYING)
			return id;
	return NULL;
}

/* An answer to a REQ that found no id: sent back along the packet. */
static void reject_req(const struct roce_pkt *p, const struct ib_cm_msg *req,
		       uint16_t reason)
{
	struct emu_cm_id tmp;

	memset(&tmp, 0, sizeof(tmp));
	memcpy(tmp.sgid, p->dgid, 16);
	memcpy(tmp.dgid, p->sgid, 16);
	memcpy(tmp.dmac, p->smac, 6);
	tmp.hop_limit = 64;
	tmp.tid = req->tid;
	tmp.remote_comm_id = req->local_comm_id;
	send_rej(&tmp, reason, IB_CM_MSG_REQ, NULL, 0, NULL, 0);
}

static bool listener_matches(const struct emu_cm_id *l, const uint8_t *hdr)
{
	struct sockaddr_storage dst;
	uint8_t gid[16];
	bool v4 = hdr[1] >> 4 == 4;

	if (l->state != CMA_LISTEN)
		return false;
	if (sa_any(&l->src)) {
		if (l->src.ss_family == AF_INET)
			return v4;
		if (l->src.ss_family == AF_INET6)
			return !v4 || !l->afonly;
		return true;
	}
	memset(gid, 0, 16);
	if (v4) {
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, hdr + 20 + 12, 4);
	} else {
		memcpy(gid, hdr + 20, 16);
	}
	sa_from_gid(&dst, gid, 0);
	return sa_equal_addr(&l->src, &dst);
}

static void rx_req(const struct roce_pkt *p, const struct ib_cm_msg *m)
{
	void *owners[MAX_OWNERS];
	struct emu_cm_id *l = NULL, *id;
	unsigned int n, i;
	uint64_t sid = m->service_id;
	uint16_t ps = (uint16_t)(sid >> 16), port = (uint16_t)sid;
	const uint8_t *hdr = m->private_data;
	uint8_t sgid[16];

	/* a duplicate: the connection exists (cm_dup_req_handler) */
	for (id = all_ids; id; id = id->next)
		if (id->has_ib && id->remote_comm_id == m->local_comm_id &&
		    id->remote_ca_guid == m->local_ca_guid &&
		    id->ib != IBCM_IDLE) {
			if (id->ib == IBCM_REQ_RCVD ||
			    id->ib == IBCM_MRA_REQ_SENT) {
				struct ib_cm_msg mra;

				cm_msg_init(id, &mra, IB_CM_ATTR_MRA);
				mra.msg_rejected = IB_CM_MSG_REQ;
				mra.service_timeout = CMA_CM_MRA_SETTING;
				cm_send(id, &mra, false);
				id->ib = IBCM_MRA_REQ_SENT;
			} else if (id->ib == IBCM_TIMEWAIT) {
				send_rej(id, IB_CM_REJ_STALE_CONN,
					 IB_CM_MSG_REQ, NULL, 0, NULL, 0);
			}
			return;
		}
	if ((sid >> 32) || !port) {
		if (emu_vm_cm_answers())
			reject_req(p, m, IB_CM_REJ_INVALID_SERVICE_ID);
		return;
	}
	n = cm_reg_port_owners(ps, port, owners, MAX_OWNERS);
	for (i = 0; i < n && i < MAX_OWNERS; i++) {
		struct emu_cm_id *c = owners[i];

		if (c->state == CMA_LISTEN) {
			if (!l)
				l = c;	/* ib_cm's listener on the service */
			if (listener_matches(c, hdr)) {
				l = c;
				goto found;
			}
		}
	}
	/*
	 * --vm: another process's listener takes it (it sees this REQ
	 * too), and only one process answers for the VM.
	 */
	if (emu_vm_cm_listened_elsewhere(ps, port) || !emu_vm_cm_answers())
		return;
	/* no ib_cm listener: invalid service; no cma match: consumer */
	reject_req(p, m, l ? IB_CM_REJ_CONSUMER_DEFINED :
		   IB_CM_REJ_INVALID_SERVICE_ID);
	return;
found:
	if (hdr[0] != 0 || (hdr[1] >> 4 != 4 && hdr[1] >> 4 != 6) ||
	    m->transport_type != 0) {
		reject_req(p, m, IB_CM_REJ_CONSUMER_DEFINED);
		return;
	}
	/* backlog full: no answer, the peer retries (ucma's -ENOMEM) */
	if (l->pending >= l->backlog)
		return;
	id = id_new(l->file, l->ps, IB_QPT_RC_, false);
	if (!id)
		return;
	memcpy(sgid, p->dgid, 16);
	if (bind_dev(id, sgid)) {
		id_unlink(id);
		cm_reg_id_free(id->id);
		free(id);
		return;
	}
	id->state = CMA_CONNECT;
	sa_from_gid(&id->src, p->dgid, port);
	sa_from_gid(&id->dst, p->sgid,
		    (uint16_t)(hdr[2] << 8 | hdr[3]));
	memcpy(id->dgid, p->sgid, 16);
	memcpy(id->dmac, p->smac, 6);
	id->hop_limit = m->hop_limit ? m->hop_limit : 64;
	id->tos = m->traffic_class;
	id->flow_label = m->flow_label;
	id->pkt_life = m->local_ack_timeout ? m->local_ack_timeout - 1 : 0;
	id->av_timeout = (uint8_t)(id->pkt_life + 1);
	id->mtu = m->path_mtu < emu_port_active_mtu(1) ? m->path_mtu :
		  emu_port_active_mtu(1);
	id->path_mtu = id->mtu;
	id->has_ib = true;
	id->ib = IBCM_REQ_RCVD;
	id->local_comm_id = cm_reg_comm_id_alloc();
	id->remote_comm_id = m->local_comm_id;
	id->remote_ca_guid = m->local_ca_guid;
	id->remote_qpn = m->local_qpn;
	id->tid = m->tid;
	id->sq_psn = m->starting_psn;
	id->resp_res = m->initiator_depth;
	id->init_depth = m->responder_resources;
	id->retry_count = m->retry_count;
	id->rnr_retry = m->rnr_retry_count;
	id->flow_control = m->flow_control;
	id->max_cm_retries = m->max_cm_retries;
	id->timeout_ms = cm_ms(m->local_cm_response_timeout);
	id->listener = l;
	l->pending++;
	{
		struct cm_event *e = event_new(l, EV_CONNECT_REQUEST, 0);
		struct rdma_ucm_conn_param *c;

		if (!e) {
			id_destroy(id);
			return;
		}
		e->conn = id;
		e->resp.id = id->id;
		c = &e->resp.param.conn;
		memcpy(c->private_data, hdr + CMA_HDR_LEN,
		       IB_CM_REQ_PRIV - CMA_HDR_LEN);
		c->private_data_len = IB_CM_REQ_PRIV - CMA_HDR_LEN;
		c->responder_resources = m->initiator_depth;
		c->initiator_depth = m->responder_resources;
		c->flow_control = m->flow_control;
		c->retry_count = m->retry_count;
		c->rnr_retry_count = m->rnr_retry_count;
		c->srq = m->srq;
		c->qp_num = m->local_qpn;
		event_queue(l, e);
	}
}

static void rx_rep(const struct ib_cm_msg *m)
{
	struct emu_cm_id *id = by_local(m->remote_comm_id);

	if (!id)
		return;
	if (id->ib == IBCM_ESTABLISHED && id->remote_comm_id == m->local_comm_id) {
		send_simple(id, IB_CM_ATTR_RTU, false);	/* our RTU was lost */
		return;
	}
	if (id->ib != IBCM_REQ_SENT && id->ib != IBCM_MRA_REQ_RCVD)
		return;
	cm_cancel(id);
	id->ib = IBCM_REP_RCVD;
	id->remote_comm_id = m->local_comm_id;
	id->remote_ca_guid = m->local_ca_guid;
	id->remote_qpn = m->local_qpn;
	id->init_depth = m->responder_resources;
	id->resp_res = m->initiator_depth;
	id->sq_psn = m->starting_psn;
	id->rnr_retry = m->rnr_retry_count;
	id->av_timeout = cm_ack_timeout(m->target_ack_delay,
					(uint8_t)(id->av_timeout - 1));
	if (id->state == CMA_CONNECT)
		post_conn(id, EV_CONNECT_RESPONSE, 0, m->private_data,
			  IB_CM_REP_PRIV, m);
}

static void rx_rtu(const struct ib_cm_msg *m)
{
	struct emu_cm_id *id = by_local(m->remote_comm_id);

	if (!id || (id->ib != IBCM_REP_SENT && id->ib != IBCM_MRA_REP_RCVD))
		return;
	cm_cancel(id);
	id->ib = IBCM_ESTABLISHED;
	if (id->state == CMA_CONNECT)
		post(id, EV_ESTABLISHED, 0);
}

static void rx_rej(const struct ib_cm_msg *m)
{
	struct emu_cm_id *id = by_local(m->remote_comm_id);

	if (!id)
		return;
	switch (id->ib) {
	case IBCM_REQ_SENT:
	case IBCM_MRA_REQ_RCVD:
	case IBCM_REP_SENT:
	case IBCM_MRA_REP_RCVD:
		if (m->reason == IB_CM_REJ_TIMEOUT ||
		    m->reason == IB_CM_REJ_STALE_CONN)
			enter_timewait(id);
		else
			id->ib = IBCM_IDLE;
		break;
	case IBCM_REQ_RCVD:
	case IBCM_MRA_REQ_SENT:
	case IBCM_REP_RCVD:
	case IBCM_MRA_REP_SENT:
		id->ib = IBCM_IDLE;
		break;
	case IBCM_ESTABLISHED:
		enter_timewait(id);
		break;
	default:
		return;
	}
	cm_cancel(id);
	if (id->listener) {
		id->listener->pending--;
		id->listener = NULL;
	}
	post_conn(id, EV_REJECTED, m->reason, m->private_data,
		  IB_CM_REJ_PRIV, NULL);
}

static void rx_mra(const struct ib_cm_msg *m)
{
	struct emu_cm_id *id = by_local(m->remote_comm_id);
	uint64_t wait;

	if (!id)
		return;
	wait = ((uint64_t)cm_ms(m->service_timeout) + cm_ms(id->av_timeout)) *
	       1000000ull;
	if (id->ib == IBCM_REQ_SENT && m->msg_rejected == IB_CM_MSG_REQ)
		id->ib = IBCM_MRA_REQ_RCVD;
	else if (id->ib == IBCM_REP_SENT && m->msg_rejected == IB_CM_MSG_REP)
		id->ib = IBCM_MRA_REP_RCVD;
	else
		return;
	/* the peer needs time: the message waits that long for its answer */
	if (id->msg_pending)
		id->msg_deadline = now_ns() + wait;
}

static void disconnected(struct emu_cm_id *id, int status)
{
	if (id->state != CMA_CONNECT)
		return;
	id->state = CMA_DISCONNECT;
	post(id, EV_DISCONNECTED, status);
}

static void rx_dreq(const struct ib_cm_msg *m)
{
	struct emu_cm_id *id = by_local(m->remote_comm_id);

	if (!id || m->remote_qpn != id->qp_num)
		return;
	switch (id->ib) {
	case IBCM_REP_SENT:
	case IBCM_MRA_REP_RCVD:
	case IBCM_DREQ_SENT:
	case IBCM_ESTABLISHED:
		cm_cancel(id);
		id->ib = IBCM_DREQ_RCVD;
		disconnected(id, 0);
		break;
	case IBCM_TIMEWAIT:
		send_simple(id, IB_CM_ATTR_DREP, false);
		break;
	default:
		break;
	}
}

static void rx_drep(const struct ib_cm_msg *m)
{
	struct emu_cm_id *id = by_local(m->remote_comm_id);

	if (!id || id->ib != IBCM_DREQ_SENT)
		return;
	enter_timewait(id);
	disconnected(id, 0);
}

static void cm_gsi_rx(unsigned int port, const struct roce_pkt *p)
{
	struct ib_cm_msg m;

	(void)port;
	if (ib_cm_decode(p->payload, p->payload_len, &m)) {
		if (emu_verbose())
			emu_log("rdma_cm: a MAD to QP1 that is not a CM message: dropped");
		return;
	}
	/* --vm: an answer to another process's id is its own business */
	if (m.attr_id != IB_CM_ATTR_REQ &&
	    !cm_reg_comm_id_mine(m.remote_comm_id))
		return;
	if (emu_verbose())
		emu_log("rdma_cm: received %s", ib_cm_attr_name(m.attr_id));
	switch (m.attr_id) {
	case IB_CM_ATTR_REQ: rx_req(p, &m); break;
	case IB_CM_ATTR_REP: rx_rep(&m); break;
	case IB_CM_ATTR_RTU: rx_rtu(&m); break;
	case IB_CM_ATTR_REJ: rx_rej(&m); break;
	case IB_CM_ATTR_MRA: rx_mra(&m); break;
	case IB_CM_ATTR_DREQ: rx_dreq(&m); break;
	case IB_CM_ATTR_DREP: rx_drep(&m); break;
	}
}

/* ---- timers ---------------------------------------------------------------------- */

/* cm_process_send_error(): a message ran out of retries. */
static void send_timed_out(struct emu_cm_id *id)
{
	id->msg_pending = false;
	switch (id->ib) {
	case IBCM_REQ_SENT:
	case IBCM_MRA_REQ_RCVD:
	case IBCM_REP_SENT:
	case IBCM_MRA_REP_RCVD:
		id->ib = IBCM_IDLE;
		if (id->listener) {
			id->listener->pending--;
			id->listener = NULL;
		}
		if (id->state == CMA_CONNECT)
			post(id, EV_UNREACHABLE, -ETIMEDOUT);
		break;
	case IBCM_DREQ_SENT:
		enter_timewait(id);
		disconnected(id, -ETIMEDOUT);
		break;
	default:
		break;
	}
}

static uint64_t earliest(uint64_t a, uint64_t b)
{
	return !a || (b && b < a) ? b : a;
}

static int cm_gsi_work(void)
{
	struct emu_cm_id *id, *next;
	uint64_t now = now_ns(), next_due = 0;

	for (id = all_ids; id; id = next) {
		next = id->next;
		if (id->state == CMA_ADDR_QUERY && id->addr_deadline) {
			if (emu_gsi_neigh_lookup(1, id->dgid, id->dmac)) {
				addr_resolved(id);
			} else if (now >= id->addr_deadline) {
				id->addr_deadline = 0;
				id->state = CMA_ADDR_BOUND;
				post(id, EV_ADDR_ERROR, -ETIMEDOUT);
			} else {
				if (now >= id->addr_next_ask) {
					emu_gsi_neigh_ask(1, id->sgid, id->dgid);
					id->addr_next_ask = now + ADDR_ASK_MS *
							    1000000ull;
				}
				next_due = earliest(next_due, id->addr_next_ask);
				next_due = earliest(next_due, id->addr_deadline);
			}
		}
		if (id->msg_pending && now >= id->msg_deadline) {
			if (id->retries_left) {
				struct emu_gsi_path p;

				id->retries_left--;
				path_of(id, &p);
				if (emu_verbose())
					emu_log("rdma_cm id %u: resend (%u left)",
						id->id, id->retries_left);
				emu_gsi_send(&p, id->msg, IB_MAD_LEN);
				id->msg_deadline = now + (uint64_t)id->timeout_ms *
							 1000000ull;
			} else {
				send_timed_out(id);
			}
		}
		if (id->msg_pending)
			next_due = earliest(next_due, id->msg_deadline);
		if (id->ib == IBCM_TIMEWAIT) {
			if (now >= id->timewait_deadline) {
				id->ib = IBCM_IDLE;
				if (id->state != CMA_DESTROYING)
					post(id, EV_TIMEWAIT_EXIT, 0);
			} else {
				next_due = earliest(next_due,
						    id->timewait_deadline);
			}
		}
	}
	if (!next_due)
		return -1;
	return next_due <= now ? 0 : (int)((next_due - now) / 1000000ull) + 1;
}

/* ---- files ------------------------------------------------------------------------ */

struct emu_cm_file *emu_cm_file_open(int app_fd, int dev_fd)
{
	struct emu_cm_file *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->app_fd = app_fd;
	f->dev_fd = dev_fd;
	if (emu_fd_register(app_fd, EMU_FD_RDMA_CM, f)) {
		free(f);
		return NULL;
	}
	return f;
}

int *emu_cm_file_fd(struct emu_cm_file *f)
{
	return &f->app_fd;
}

void emu_cm_file_release(struct emu_cm_file *f)
{
	struct emu_cm_id *id, *next;

	for (id = all_ids; id; id = next) {
		next = id->next;
		if (id->file == f && id->state == CMA_LISTEN)
			forget_listener(id);
	}
	/* each destroy may take others (unfetched requests): restart */
	for (;;) {
		for (id = all_ids; id && id->file != f; id = id->next)
			;
		if (!id)
			break;
		id_destroy(id);
	}
	while (f->head) {
		struct cm_event *e = f->head;

		f->head = e->next;
		free(e);
	}
	emu_fd_unregister(f->app_fd);
	if (f->dev_fd >= 0)
		emu_libc_close(f->dev_fd);
	free(f);
}

/* ---- the ucma command ABI ------------------------------------------------------------ */

/* ucma_get_ctx(): the file's id, -ENOENT unknown, -EINVAL another file's */
static struct emu_cm_id *get_ctx(struct emu_cm_file *f, uint32_t num, int *err)
{
	struct emu_cm_id *id = cm_reg_id_lookup(num);

	if (!id || !id->published) {
		*err = -ENOENT;
		return NULL;
	}
	if (id->file != f) {
		*err = -EINVAL;
		return NULL;
	}
	return id;
}

/* ucma_get_ctx_dev(): and bound to a device */
static struct emu_cm_id *get_ctx_dev(struct emu_cm_file *f, uint32_t num,
				     int *err)
{
	struct emu_cm_id *id = get_ctx(f, num, err);

	if (id && !id->has_dev) {
		*err = -EINVAL;
		return NULL;
	}
	return id;
}

#define CMD_IN(cmd)                                                            \
	do {                                                                   \
		if (emu_copy_from_user(&(cmd), in, sizeof(cmd)))               \
			return -EFAULT;                                        \
	} while (0)

#define CTX(f, num, fn)                                                        \
	({                                                                     \
		int err_ = 0;                                                  \
		struct emu_cm_id *id_ = fn((f), (num), &err_);                 \
		if (!id_)                                                      \
			return err_;                                           \
		id_;                                                           \
	})

static int to_user(uint64_t dst, const void *src, size_t len)
{
	return emu_copy_to_user((void *)(uintptr_t)dst, src, len) ? -EFAULT : 0;
}

/* Set in a forked child that is not a process of a --vm VM. */
static bool forked_alone;

static void join_ports(void)
{
	unsigned int port;

	for (port = 1; port <= emu.opts.ports; port++)
		if (emu_port_join(port))
			break;	/* as before: LISTEN or CONNECT says why */
}

static int cmd_create_id(struct emu_cm_file *f, const void *in, uint16_t out)
{
	struct rdma_ucm_create_id cmd;
	struct rdma_ucm_create_id_resp resp;
	struct emu_cm_id *id;
	uint8_t qp_type;

	if (out < sizeof(resp))
		return -ENOSPC;
	CMD_IN(cmd);
	/*
	 * Once: a program that forks its two sides (rdma-core's rdmacm
	 * tests) would otherwise see only rejects and time-outs.
	 */
	if (forked_alone) {
		forked_alone = false;
		emu_log("process %d was forked without --vm: it is an "
			"emulated VM of its own, and rdma_cm cannot reach its "
			"parent's or siblings' ids; run mana-emu --vm=NAME to "
			"make forked processes one VM", (int)getpid());
	}
	/*
	 * The process joins its wires (a --vm child: its own switch port)
	 * with its first id, not inside LISTEN: a join waits for every other
	 * port's answer (about a millisecond), and a peer told of the port
	 * after BIND (qperf's server child) sent its REQ before the listener
	 * was on the switch -- lost, resent by the peer's CM 4.3 s later.
	 * The real LISTEN takes microseconds.
	 */
	join_ports();
	switch (cmd.ps) {
	case RDMA_PS_TCP: qp_type = IB_QPT_RC_; break;
	case RDMA_PS_UDP:
	case RDMA_PS_IPOIB: qp_type = IB_QPT_UD_; break;
	case RDMA_PS_IB: qp_type = cmd.qp_type; break;
	default: return -EINVAL;
	}
	id = id_new(f, cmd.ps, qp_type, true);
	if (!id)
		return -ENOMEM;
	id->uid = cmd.uid;
	resp.id = id->id;
	if (to_user(cmd.response, &resp, sizeof(resp))) {
		id_destroy(id);
		return -EFAULT;
	}
	return 0;
}

static int cmd_destroy_id(struct emu_cm_file *f, const void *in, uint16_t out)
{
	struct rdma_ucm_destroy_id cmd;
	struct rdma_ucm_destroy_id_resp resp;
	struct emu_cm_id *id;

	if (out < sizeof(resp))
		return -ENOSPC;
	CMD_IN(cmd);
	id = CTX(f, cmd.id, get_ctx);
	resp.events_reported = id->events_reported;
	if (id->state == CMA_LISTEN)
		forget_listener(id);
	id_destroy(id);
	return to_user(cmd.response, &resp, sizeof(resp));
}

static int cmd_bind_ip(struct emu_cm_file *f, const void *in)
{
	struct rdma_ucm_bind_ip cmd;
	struct sockaddr_storage a;

	CMD_IN(cmd);
	if (cmd.addr.sin6_family != AF_INET && cmd.addr.sin6_family != AF_INET6)
		return -EINVAL;
	memset(&a, 0, sizeof(a));
	memcpy(&a, &cmd.addr, cmd.addr.sin6_family == AF_INET ?
	       sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
	return do_bind(CTX(f, cmd.id, get_ctx), &a);
}

static int cmd_bind(struct emu_cm_file *f, const void *in)
{
	struct rdma_ucm_bind cmd;
	struct sockaddr_storage a;

	CMD_IN(cmd);
	if (cmd.reserved || !cmd.addr_size ||
	    cmd.addr_size != kss_size(&cmd.addr))
		return -EINVAL;
	memset(&a, 0, sizeof(a));
	memcpy(&a, &cmd.addr, cmd.addr_size);
	return do_bind(CTX(f, cmd.id, get_ctx), &a);
}

static int cmd_resolve_ip(struct emu_cm_file *f, const void *in)
{
	struct rdma_ucm_resolve_ip cmd;
	struct sockaddr_storage s, d;

	CMD_IN(cmd);
	if ((cmd.src_addr.sin6_family && cmd.src_addr.sin6_family != AF_INET &&
	     cmd.src_addr.sin6_family != AF_INET6) ||
	    (cmd.dst_addr.sin6_family != AF_INET &&
	     cmd.dst_addr.sin6_family != AF_INET6))
		return -EINVAL;
	memset(&s, 0, sizeof(s));
	memset(&d, 0, sizeof(d));
	memcpy(&s, &cmd.src_addr, sizeof(cmd.src_addr));
	memcpy(&d, &cmd.dst_addr, sizeof(cmd.dst_addr));
	return do_resolve_addr(CTX(f, cmd.id, get_ctx), &s, &d,
			       cmd.timeout_ms);
}

static int cmd_resolve_addr(struct emu_cm_file *f, const void *in)
{
	struct rdma_ucm_resolve_addr cmd;
	struct sockaddr_storage s, d;

	CMD_IN(cmd);
	if (cmd.reserved ||
	    (cmd.src_size && cmd.src_size != kss_size(&cmd.src_addr)) ||
	    !cmd.dst_size || cmd.dst_size != kss_size(&cmd.dst_addr))
		return -EINVAL;
	memset(&s, 0, sizeof(s));
	memset(&d, 0, sizeof(d));
	if (cmd.src_size)
		memcpy(&s, &cmd.src_addr, cmd.src_size);
	memcpy(&d, &cmd.dst_addr, cmd.dst_size);
	return do_resolve_addr(CTX(f, cmd.id, get_ctx), &s, &d,
			       cmd.timeout_ms);
}

static int cmd_resolve_route(struct emu_cm_file *f, const void *in)
{
	struct rdma_ucm_resolve_route cmd;

	CMD_IN(cmd);
	return do_resolve_route(CTX(f, cmd.id, get_ctx_dev));
}

static void fill_path(const struct emu_cm_id *id, struct ib_user_path_rec *r)
{
	memset(r, 0, sizeof(*r));
	memcpy(r->sgid, id->sgid, 16);
	memcpy(r->dgid, id->dgid, 16);
	r->pkey = htobe16(ROCE_PKEY_DEFAULT);
	r->flow_label = htobe32(id->flow_label);
	r->hop_limit = id->hop_limit;
	r->traffic_class = id->tos;
	r->reversible = 1;
	r->numb_path = 1;
	r->mtu = id->mtu;
	r->mtu_selector = 2;
	r->rate = IB_RATE_40_GBPS;
	r->rate_selector = 2;
	r->packet_life_time = id->pkt_life;
	r->packet_life_time_selector = 2;
}

static bool route_known(const struct emu_cm_id *id)
{
	return id->state == CMA_ROUTE_RESOLVED || id->state == CMA_CONNECT ||
	       id->state == CMA_DISCONNECT;
}

static uint32_t rnic_ibdev_index(void)
{
	return kernel_era()->split ? 1 : 0;
}

static int cmd_query_route(struct emu_cm_file *f, const void *in,
			   uint16_t out)
{
	struct rdma_ucm_query cmd;
	struct rdma_ucm_query_route_resp resp;
	struct emu_cm_id *id;

	if (out < sizeof(resp))
		return -ENOSPC;
	CMD_IN(cmd);
	id = CTX(f, cmd.id, get_ctx);
	memset(&resp, 0, sizeof(resp));
	memcpy(&resp.src_addr, &id->src, sa_size(&id->src) <=
	       sizeof(resp.src_addr) ? sa_size(&id->src) : 0);
	memcpy(&resp.dst_addr, &id->dst, sa_size(&id->dst) <=
	       sizeof(resp.dst_addr) ? sa_size(&id->dst) : 0);
	if (id->has_dev) {
		resp.node_guid = htobe64(emu_dev.node_guid);
		resp.ibdev_index = rnic_ibdev_index();
		resp.port_num = 1;
		if (route_known(id)) {
			resp.num_paths = 1;
			fill_path(id, &resp.ib_route[0]);
		} else {
			memcpy(resp.ib_route[0].sgid, id->sgid, 16);
			memcpy(resp.ib_route[0].dgid, id->dgid, 16);
			resp.ib_route[0].pkey = htobe16(ROCE_PKEY_DEFAULT);
		}
	}
	return to_user(cmd.response, &resp, sizeof(resp));
}

/* struct ib_path_rec_data: flags, reserved, the SA PathRecord (64 bytes) */
static void pack_path(const struct emu_cm_id *id, uint8_t *d)
{
	uint32_t w;

	memset(d, 0, 72);
	/* IB_PATH_GMP | PRIMARY | BIDIRECTIONAL (1 | 2 | 0x28), a host u32 */
	d[0] = 0x2b;
	d += 8;
	memcpy(d + 8, id->dgid, 16);
	memcpy(d + 24, id->sgid, 16);
	w = id->flow_label << 8 | id->hop_limit;
	d[44] = (uint8_t)(w >> 24);
	d[45] = (uint8_t)(w >> 16);
	d[46] = (uint8_t)(w >> 8);
	d[47] = (uint8_t)w;
	d[48] = id->tos;
	d[49] = 0x80 | 1;		/* reversible, one path */
	d[50] = d[51] = 0xff;		/* P_Key */
	d[54] = (uint8_t)(2 << 6 | id->mtu);
	d[55] = 2 << 6 | IB_RATE_40_GBPS;
	d[56] = (uint8_t)(2 << 6 | id->pkt_life);
}

static void fill_sib(struct sockaddr_ib_ *sib, const uint8_t gid[16],
		     uint16_t ps, uint16_t port)
{
	memset(sib, 0, sizeof(*sib));
	sib->sib_family = AF_IB_;
	sib->sib_pkey = htobe16(ROCE_PKEY_DEFAULT);
	memcpy(sib->sib_addr, gid, 16);
	sib->sib_sid = htobe64(((uint64_t)ps << 16) | port);
	sib->sib_sid_mask = htobe64(~0ULL);
}

static int cmd_query(struct emu_cm_file *f, const void *in, uint16_t out)
{
	struct rdma_ucm_query cmd;
	struct rdma_ucm_query_addr_resp resp;
	struct emu_cm_id *id;

	CMD_IN(cmd);
	id = CTX(f, cmd.id, get_ctx);
	switch (cmd.option) {
	case RDMA_USER_CM_QUERY_ADDR:
		if (out < sizeof(resp))
			return -ENOSPC;
		memset(&resp, 0, sizeof(resp));
		resp.src_size = (uint16_t)sa_size(&id->src);
		memcpy(&resp.src_addr, &id->src, resp.src_size);
		resp.dst_size = (uint16_t)sa_size(&id->dst);
		memcpy(&resp.dst_addr, &id->dst, resp.dst_size);
		if (id->has_dev) {
			resp.node_guid = htobe64(emu_dev.node_guid);
			resp.ibdev_index = rnic_ibdev_index();
			resp.port_num = 1;
			resp.pkey = ROCE_PKEY_DEFAULT;
		}
		return to_user(cmd.response, &resp, sizeof(resp));
	case RDMA_USER_CM_QUERY_GID:
		if (out < sizeof(resp))
			return -ENOSPC;
		memset(&resp, 0, sizeof(resp));
		if (id->has_dev) {
			resp.node_guid = htobe64(emu_dev.node_guid);
			resp.ibdev_index = rnic_ibdev_index();
			resp.port_num = 1;
			resp.pkey = ROCE_PKEY_DEFAULT;
			fill_sib((void *)&resp.src_addr, id->sgid, id->ps,
				 sa_port(&id->src));
			fill_sib((void *)&resp.dst_addr, id->dgid, id->ps,
				 sa_port(&id->dst));
			resp.src_size = resp.dst_size =
				sizeof(struct sockaddr_ib_);
		}
		return to_user(cmd.response, &resp, sizeof(resp));
	case RDMA_USER_CM_QUERY_PATH: {
		uint8_t buf[8 + 72];
		uint32_t n = route_known(id) ? 1 : 0;

		if (out < 8)
			return -ENOSPC;
		memset(buf, 0, sizeof(buf));
		memcpy(buf, &n, 4);
		if (n && out - 8 > 72)
			pack_path(id, buf + 8);
		else if (n)
			n = 0;
		return to_user(cmd.response, buf, n ? sizeof(buf) : 8);
	}
	default:
		return -ENOSYS;
	}
}

static void conn_param_in(struct rdma_ucm_conn_param *cp)
{
	cp->qp_num &= ROCE_QPN_MASK;
}

static int cmd_connect(struct emu_cm_file *f, const void *in)
{
	struct rdma_ucm_connect cmd;

	CMD_IN(cmd);
	if (!cmd.conn_param.valid)
		return -EINVAL;
	conn_param_in(&cmd.conn_param);
	return do_connect(CTX(f, cmd.id, get_ctx_dev), &cmd.conn_param);
}

static int cmd_listen(struct emu_cm_file *f, const void *in)
{
	struct rdma_ucm_listen cmd;
	int backlog;

	CMD_IN(cmd);
	backlog = cmd.backlog > 0 && cmd.backlog < UCMA_MAX_BACKLOG ?
		  (int)cmd.backlog : UCMA_MAX_BACKLOG;
	return do_listen(CTX(f, cmd.id, get_ctx), backlog);
}

static int cmd_accept(struct emu_cm_file *f, const void *in)
{
	struct rdma_ucm_accept cmd;
	struct emu_cm_id *id;
	int ret;

	CMD_IN(cmd);
	id = CTX(f, cmd.id, get_ctx_dev);
	if (!cmd.conn_param.valid)
		return do_accept(id, NULL);
	conn_param_in(&cmd.conn_param);
	ret = do_accept(id, &cmd.conn_param);
	if (!ret)
		id->uid = cmd.uid;
	return ret;
}

static int cmd_reject(struct emu_cm_file *f, const void *in)
{
	struct rdma_ucm_reject cmd;

	CMD_IN(cmd);
	if (!cmd.reason)
		cmd.reason = IB_CM_REJ_CONSUMER_DEFINED;
	/* the reasons a consumer may give (ucma_reject) */
	if (cmd.reason != IB_CM_REJ_CONSUMER_DEFINED && cmd.reason != 35)
		return -EINVAL;
	return do_reject(CTX(f, cmd.id, get_ctx_dev), cmd.private_data,
			 cmd.private_data_len, cmd.reason);
}

static int cmd_disconnect(struct emu_cm_file *f, const void *in)
{
	struct rdma_ucm_disconnect cmd;

	CMD_IN(cmd);
	return do_disconnect(CTX(f, cmd.id, get_ctx_dev));
}

static void ah_out(const struct emu_cm_id *id, struct ib_uverbs_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	memcpy(ah->grh.dgid, id->dgid, 16);
	ah->grh.flow_label = id->flow_label;
	ah->grh.sgid_index = id->sgid_index;
	ah->grh.hop_limit = id->hop_limit;
	ah->grh.traffic_class = id->tos;
	ah->is_global = 1;
	ah->static_rate = IB_RATE_40_GBPS;
	ah->port_num = 1;
}

/* rdma_init_qp_attr(): cma's own answer before the IB CM, ib_cm's after */
static int init_qp_attr(struct emu_cm_id *id, uint32_t state,
			struct ib_uverbs_qp_attr *a)
{
	uint32_t mask;

	memset(a, 0, sizeof(*a));
	a->qp_state = state;
	if (!id->has_ib || id->qp_type == IB_QPT_UD_) {
		mask = QPA_STATE | QPA_PKEY_INDEX | QPA_PORT;
		a->port_num = 1;
		if (id->qp_type == IB_QPT_UD_) {
			a->qkey = RDMA_UDP_QKEY_;
			mask |= 1 << 6;		/* IB_QP_QKEY */
		} else {
			a->qp_access_flags = 0;
			mask |= QPA_ACCESS_FLAGS;
		}
		goto out;
	}
	switch (state) {
	case 1:		/* INIT */
		if (id->ib < IBCM_REQ_SENT || id->ib > IBCM_ESTABLISHED)
			return -EINVAL;
		mask = QPA_STATE | QPA_ACCESS_FLAGS | QPA_PKEY_INDEX | QPA_PORT;
		a->qp_access_flags = IB_ACCESS_REMOTE_WRITE_;
		if (id->resp_res)
			a->qp_access_flags |= IB_ACCESS_REMOTE_READ_ |
					      IB_ACCESS_REMOTE_ATOMIC_;
		a->port_num = 1;
		break;
	case 2:		/* RTR */
		if (id->ib < IBCM_REQ_RCVD || id->ib > IBCM_ESTABLISHED ||
		    id->ib == IBCM_MRA_REQ_RCVD)
			return -EINVAL;
		mask = QPA_STATE | QPA_AV | QPA_PATH_MTU | QPA_DEST_QPN |
		       QPA_RQ_PSN | QPA_MAX_DEST_RD_ATOMIC | QPA_MIN_RNR_TIMER;
		ah_out(id, &a->ah_attr);
		a->path_mtu = id->path_mtu;
		a->dest_qp_num = id->remote_qpn;
		a->max_dest_rd_atomic = id->resp_res;
		a->min_rnr_timer = 0;
		break;
	case 3:		/* RTS */
		if (id->ib < IBCM_REQ_RCVD || id->ib > IBCM_ESTABLISHED ||
		    id->ib == IBCM_MRA_REQ_RCVD)
			return -EINVAL;
		mask = QPA_STATE | QPA_SQ_PSN | QPA_TIMEOUT | QPA_RETRY_CNT |
		       QPA_RNR_RETRY | QPA_MAX_QP_RD_ATOMIC;
		a->sq_psn = id->sq_psn;
		a->timeout = id->av_timeout;
		a->retry_cnt = id->retry_count;
		a->rnr_retry = id->rnr_retry;
		a->max_rd_atomic = id->init_depth;
		if (id->timeout_set)
			a->timeout = id->ack_timeout;
		break;
	default:
		return -EINVAL;
	}
out:
	if (state == 2)
		a->rq_psn = id->seq_num;
	a->qp_attr_mask = mask;
	return 0;
}

static int cmd_init_qp_attr(struct emu_cm_file *f, const void *in,
			    uint16_t out)
{
	struct rdma_ucm_init_qp_attr cmd;
	struct ib_uverbs_qp_attr resp;
	struct emu_cm_id *id;
	int ret;

	if (out < sizeof(resp))
		return -ENOSPC;
	CMD_IN(cmd);
	if (cmd.qp_state > 6)
		return -EINVAL;
	id = CTX(f, cmd.id, get_ctx_dev);
	ret = init_qp_attr(id, cmd.qp_state, &resp);
	if (ret)
		return ret;
	return to_user(cmd.response, &resp, sizeof(resp));
}

static int cmd_set_option(struct emu_cm_file *f, const void *in)
{
	struct rdma_ucm_set_option cmd;
	struct emu_cm_id *id;
	uint8_t val[8];
	int v;

	CMD_IN(cmd);
	id = CTX(f, cmd.id, get_ctx);
	if (cmd.optlen > sizeof(val)) {
		/* only the IB path record is that long: not for RoCE here */
		return cmd.level == RDMA_OPTION_IB ? -EINVAL : -ENOSYS;
	}
	if (emu_copy_from_user(val, (void *)(uintptr_t)cmd.optval, cmd.optlen))
		return -EFAULT;
	if (cmd.level == RDMA_OPTION_IB)
		return cmd.optname == RDMA_OPTION_IB_PATH ? -EINVAL : -ENOSYS;
	if (cmd.level != RDMA_OPTION_ID)
		return -ENOSYS;
	switch (cmd.optname) {
	case RDMA_OPTION_ID_TOS:
		if (cmd.optlen != 1)
			return -EINVAL;
		id->tos = val[0];
		id->tos_set = true;
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
		if (cmd.optlen != sizeof(int))
			return -EINVAL;
		memcpy(&v, val, sizeof(v));
		if ((v && id->state != CMA_LISTEN) || id->state == CMA_IDLE) {
			id->reuseaddr = v != 0;
			return 0;
		}
		return -EINVAL;
	case RDMA_OPTION_ID_AFONLY:
		if (cmd.optlen != sizeof(int))
			return -EINVAL;
		memcpy(&v, val, sizeof(v));
		if (id->state != CMA_IDLE && id->state != CMA_ADDR_BOUND)
			return -EINVAL;
		id->afonly = v != 0;
		id->afonly_set = true;
		return 0;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (cmd.optlen != 1)
			return -EINVAL;
		if (id->qp_type != IB_QPT_RC_)
			return -EINVAL;
		id->ack_timeout = val[0];
		id->timeout_set = true;
		return 0;
	default:
		return -ENOSYS;
	}
}

static int cmd_notify(struct emu_cm_file *f, const void *in)
{
	struct rdma_ucm_notify cmd;
	struct emu_cm_id *id;

	CMD_IN(cmd);
	id = CTX(f, cmd.id, get_ctx_dev);
	if (!id->has_ib)
		return -EINVAL;
	switch (cmd.event) {
	case 3:		/* IB_EVENT_COMM_EST: the RTU may still come */
		if (id->ib == IBCM_REP_SENT || id->ib == IBCM_MRA_REP_RCVD) {
			cm_cancel(id);
			id->ib = IBCM_ESTABLISHED;
			if (id->state == CMA_CONNECT)
				post(id, EV_ESTABLISHED, 0);
			return 0;
		}
		return id->ib == IBCM_ESTABLISHED ? -EISCONN : -EINVAL;
	case 4:		/* IB_EVENT_PATH_MIG */
	case 5:		/* IB_EVENT_PATH_MIG_ERR */
		return 0;
	default:
		return -EINVAL;
	}
}

static int cmd_join(struct emu_cm_file *f, const void *in, bool ip)
{
	struct emu_cm_id *id;

	if (ip) {
		struct rdma_ucm_join_ip_mcast cmd;

		CMD_IN(cmd);
		id = CTX(f, cmd.id, get_ctx_dev);
	} else {
		struct rdma_ucm_join_mcast cmd;

		CMD_IN(cmd);
		if (!kss_size(&cmd.addr) || cmd.addr_size != kss_size(&cmd.addr))
			return -EINVAL;
		if (cmd.join_flags != RDMA_MC_JOIN_FLAG_FULLMEMBER &&
		    cmd.join_flags != RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER)
			return -EINVAL;
		id = CTX(f, cmd.id, get_ctx_dev);
	}
	if (id->state != CMA_ADDR_BOUND && id->state != CMA_ADDR_RESOLVED)
		return -EINVAL;
	/* multicast needs UD QPs, which MANA gives only the kernel */
	return -EOPNOTSUPP;
}

static int cmd_leave(struct emu_cm_file *f, const void *in)
{
	struct rdma_ucm_destroy_id cmd;

	(void)f;
	CMD_IN(cmd);
	/* no join ever succeeds: no multicast id exists (xa_load fails) */
	return -ENOENT;
}

static int cmd_migrate(struct emu_cm_file *f, const void *in, uint16_t out)
{
	struct rdma_ucm_migrate_id cmd;
	struct rdma_ucm_migrate_resp resp;
	struct emu_cm_file *cur;
	struct emu_cm_id *id;
	struct cm_event **pp, *e, **tail;

	(void)out;
	CMD_IN(cmd);
	if (emu_fd_kind((int)cmd.fd) == EMU_FD_NONE)
		return -ENOENT;
	cur = emu_fd_obj((int)cmd.fd, EMU_FD_RDMA_CM);
	if (!cur)
		return -EINVAL;
	id = CTX(cur, cmd.id, get_ctx);
	resp.events_reported = id->events_reported;
	if (cur != f) {
		/* the id and its queued events move to the new file */
		for (tail = &f->head; *tail; tail = &(*tail)->next)
			;
		for (pp = &cur->head; (e = *pp);) {
			if (e->id != id) {
				pp = &e->next;
				continue;
			}
			*pp = e->next;
			e->next = NULL;
			*tail = e;
			tail = &e->next;
			f->tail = e;
			untoken(cur);
			token(f);
		}
		cur->tail = NULL;
		for (e = cur->head; e; e = e->next)
			cur->tail = e;
		id->file = f;
		for (struct emu_cm_id *c = all_ids; c; c = c->next)
			if (c->listener == id)
				c->file = f;
	}
	return to_user(cmd.response, &resp, sizeof(resp));
}

static int cmd_get_event(struct emu_cm_file *f, const void *in, uint16_t out)
{
	struct rdma_ucm_get_event cmd;
	struct cm_event *e;
	size_t len;

	if (out < sizeof(e->resp) - sizeof(e->resp.reserved) -
		  sizeof(e->resp.ece))
		return -ENOSPC;
	CMD_IN(cmd);
	e = f->head;
	if (!e)
		return -EAGAIN;
	len = out < sizeof(e->resp) ? out : sizeof(e->resp);
	if (to_user(cmd.response, &e->resp, len))
		return -EFAULT;		/* the event stays */
	f->head = e->next;
	untoken(f);
	if (!f->head)
		f->tail = NULL;
	if (e->conn)
		e->conn->published = true;
	e->id->events_reported++;
	free(e);
	return 0;
}

bool emu_cm_is_get_event(const void *buf, size_t len)
{
	struct rdma_ucm_cmd_hdr hdr;

	if (len < sizeof(hdr) || emu_copy_from_user(&hdr, buf, sizeof(hdr)))
		return false;
	return hdr.cmd == RDMA_USER_CM_CMD_GET_EVENT;
}

/*
 * 6.17's commands (Debian 12's uapi header predates them), and the two
 * events WRITE_CM_EVENT may queue.
 */
#define UCMA_CMD_RESOLVE_IB_SERVICE 23
#define UCMA_CMD_WRITE_CM_EVENT 24
#define EV_USER 18
#define EV_INTERNAL 19

static const char *const cmd_names[] = {
	"CREATE_ID", "DESTROY_ID", "BIND_IP", "RESOLVE_IP", "RESOLVE_ROUTE",
	"QUERY_ROUTE", "CONNECT", "LISTEN", "ACCEPT", "REJECT", "DISCONNECT",
	"INIT_QP_ATTR", "GET_EVENT", "GET_OPTION", "SET_OPTION", "NOTIFY",
	"JOIN_IP_MCAST", "LEAVE_MCAST", "MIGRATE_ID", "QUERY", "BIND",
	"RESOLVE_ADDR", "JOIN_MCAST", "RESOLVE_IB_SERVICE", "WRITE_CM_EVENT",
};

/* The kernel's command table: 6.17 added two entries. */
static unsigned int ncmds(void)
{
	return kernel_era()->ucma_write_event ? UCMA_CMD_WRITE_CM_EVENT + 1 :
						 UCMA_CMD_RESOLVE_IB_SERVICE;
}

/* rdma_resolve_ib_service(): an SA query, which RoCE has not. */
static int cmd_resolve_ib_service(struct emu_cm_file *f, const void *in)
{
	struct {
		uint32_t id, reserved;
	} cmd;
	struct emu_cm_id *id;

	CMD_IN(cmd);
	id = CTX(f, cmd.id, get_ctx);
	if (!id->has_dev || id->state != CMA_ADDR_BOUND)
		return -EINVAL;
	return -EOPNOTSUPP;
}

/* ucma_write_cm_event(): the caller's own event, queued as it is. */
static int cmd_write_cm_event(struct emu_cm_file *f, const void *in)
{
	struct {
		uint32_t id, reserved, event, status;
		uint64_t arg;
	} cmd;
	struct emu_cm_id *id;
	struct cm_event *e;

	CMD_IN(cmd);
	if (cmd.event != EV_USER && cmd.event != EV_INTERNAL)
		return -EINVAL;
	id = CTX(f, cmd.id, get_ctx);
	e = event_new(id, (int)cmd.event, (int)cmd.status);
	if (!e)
		return -ENOMEM;
	memcpy(&e->resp.param, &cmd.arg, sizeof(cmd.arg));
	event_queue(id, e);
	return 0;
}

ssize_t emu_cm_write(struct emu_cm_file *f, const void *buf, size_t len)
{
	struct rdma_ucm_cmd_hdr hdr;
	const void *in;
	int ret;

	if (len < sizeof(hdr))
		return -EINVAL;
	if (emu_copy_from_user(&hdr, buf, sizeof(hdr)))
		return -EFAULT;
	if (hdr.cmd >= ncmds())
		return -EINVAL;
	if (hdr.in + sizeof(hdr) > len)
		return -EINVAL;
	in = emu_user_off(buf, sizeof(hdr));
	switch (hdr.cmd) {
	case RDMA_USER_CM_CMD_CREATE_ID: ret = cmd_create_id(f, in, hdr.out); break;
	case RDMA_USER_CM_CMD_DESTROY_ID: ret = cmd_destroy_id(f, in, hdr.out); break;
	case RDMA_USER_CM_CMD_BIND_IP: ret = cmd_bind_ip(f, in); break;
	case RDMA_USER_CM_CMD_RESOLVE_IP: ret = cmd_resolve_ip(f, in); break;
	case RDMA_USER_CM_CMD_RESOLVE_ROUTE: ret = cmd_resolve_route(f, in); break;
	case RDMA_USER_CM_CMD_QUERY_ROUTE: ret = cmd_query_route(f, in, hdr.out); break;
	case RDMA_USER_CM_CMD_CONNECT: ret = cmd_connect(f, in); break;
	case RDMA_USER_CM_CMD_LISTEN: ret = cmd_listen(f, in); break;
	case RDMA_USER_CM_CMD_ACCEPT: ret = cmd_accept(f, in); break;
	case RDMA_USER_CM_CMD_REJECT: ret = cmd_reject(f, in); break;
	case RDMA_USER_CM_CMD_DISCONNECT: ret = cmd_disconnect(f, in); break;
	case RDMA_USER_CM_CMD_INIT_QP_ATTR: ret = cmd_init_qp_attr(f, in, hdr.out); break;
	case RDMA_USER_CM_CMD_GET_EVENT: ret = cmd_get_event(f, in, hdr.out); break;
	case RDMA_USER_CM_CMD_SET_OPTION: ret = cmd_set_option(f, in); break;
	case RDMA_USER_CM_CMD_NOTIFY: ret = cmd_notify(f, in); break;
	case RDMA_USER_CM_CMD_JOIN_IP_MCAST: ret = cmd_join(f, in, true); break;
	case RDMA_USER_CM_CMD_LEAVE_MCAST: ret = cmd_leave(f, in); break;
	case RDMA_USER_CM_CMD_MIGRATE_ID: ret = cmd_migrate(f, in, hdr.out); break;
	case RDMA_USER_CM_CMD_QUERY: ret = cmd_query(f, in, hdr.out); break;
	case RDMA_USER_CM_CMD_BIND: ret = cmd_bind(f, in); break;
	case RDMA_USER_CM_CMD_RESOLVE_ADDR: ret = cmd_resolve_addr(f, in); break;
	case RDMA_USER_CM_CMD_JOIN_MCAST: ret = cmd_join(f, in, false); break;
	case UCMA_CMD_RESOLVE_IB_SERVICE: ret = cmd_resolve_ib_service(f, in); break;
	case UCMA_CMD_WRITE_CM_EVENT: ret = cmd_write_cm_event(f, in); break;
	default: ret = -ENOSYS; break;	/* GET_OPTION has no handler */
	}
	if (emu_verbose() && (hdr.cmd != RDMA_USER_CM_CMD_GET_EVENT || ret != -EAGAIN))
		emu_log("rdma_cm fd %d: %s -> %s", f->app_fd, cmd_names[hdr.cmd],
			ret ? emu_errname(-ret) : "0");
	return ret ? ret : (ssize_t)len;
}

void emu_cm_fork_child(void)
{
	/*
	 * The parent's ids are not the child's to answer for: no MADs,
	 * timers or listeners for them here (the child's own ids start
	 * afresh, and with them its QP1).  Without --vm the child is a VM
	 * of its own, with a copy of everything, as before.
	 */
	if (emu_vm_slot() < 0) {
		struct emu_cm_id *id;

		forked_alone = true;
		/* the parent's connections: not ours to end at our exit */
		for (id = all_ids; id; id = id->next)
			id->inherited = true;
		return;
	}
	all_ids = NULL;
	gsi_users = 0;
	cm_reg_fork_child();
}

/*
 * The process exits: the kernel would close the rdma_cm file, destroy
 * each id and send a DREQ for each connected one (then retry it on its
 * own, as the process is gone), a DREP to a DREQ it had not answered.
 * Our kernel goes with the process, so these are sent now, once (each
 * established id's DREQ, every other id's answer), and the caller may wait
 * a little for the DREPs (emu_cm_exit_pending()).  Nothing else is torn
 * down: the process is ending.  Called with emu.lock held.
 */
unsigned int emu_cm_exit(void)
{
	struct emu_cm_id *id;
	unsigned int n = 0;

	for (id = all_ids; id; id = id->next) {
		if (id->inherited || !id->has_ib)
			continue;
		if (id->ib == IBCM_ESTABLISHED) {
			send_simple(id, IB_CM_ATTR_DREQ, false);
			id->ib = IBCM_DREQ_SENT;
			n++;
		} else if (id->ib != IBCM_IDLE && id->ib != IBCM_DREQ_SENT &&
			   id->ib != IBCM_TIMEWAIT) {
			/*
			 * What the kernel's destroy says for the rest: a DREP
			 * to a DREQ the program never answered, a REJ to a
			 * REQ or REP in flight.
			 */
			ib_destroy(id);
		}
	}
	return n;
}

/* How many of the DREQs emu_cm_exit() sent are still unanswered. */
unsigned int emu_cm_exit_pending(void)
{
	struct emu_cm_id *id;
	unsigned int n = 0;

	for (id = all_ids; id; id = id->next)
		if (!id->inherited && id->has_ib && id->ib == IBCM_DREQ_SENT)
			n++;
	return n;
}

/* ---- the IP stack's neighbours ------------------------------------------------------ */

int emu_ip_neigh(const struct sockaddr *addr, socklen_t len)
{
	struct sockaddr_storage ss;
	uint8_t dgid[16], sgid[16];
	int ret;

	bool v4 = addr && addr->sa_family == AF_INET &&
		  len >= sizeof(struct sockaddr_in);
	bool v6 = addr && addr->sa_family == AF_INET6 &&
		  len >= sizeof(struct sockaddr_in6);

	if ((!v4 && !v6) || len > sizeof(ss))
		return -EAFNOSUPPORT;
	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, addr, len);
	sa_gid(&ss, dgid);
	pthread_mutex_lock(&emu.lock);
	if (emu_gid_port_owns(&emu.opts, 1, dgid))
		ret = 0;
	else if (!route_src(dgid, sgid))
		ret = -ENETUNREACH;
	else
		ret = emu_dev_neigh_resolve(1, sgid, dgid);
	pthread_mutex_unlock(&emu.lock);
	return ret;
}
