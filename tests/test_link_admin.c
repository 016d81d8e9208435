// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Link administration of the emulated VM while an application runs
 * (under mana-emu): `ip link set` run by the application (another
 * process of the run) and the interface ioctls on an AF_INET socket
 * (DPDK's mtu_set) change what ibv_query_port, `ip link` and sysfs show;
 * IBV_EVENT_PORT_ACTIVE / PORT_ERR arrive on the RNIC's async fd when
 * the port's bound netdev (the VF's netvsc master) starts or stops
 * running (from 6.14; none before); a raw QP cannot take the vport while
 * the VF is up (ENODEV through 7.1, EBUSY from 7.2) and the VF cannot
 * come up while a raw QP holds it (mana_open: EBUSY).
 *
 * Usage: test_link_admin [--in-process]  (the era: mana-emu --kernel)
 * --in-process: only what needs no child process (ThreadSanitizer)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <net/if.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "check.h"

static char vf[IFNAMSIZ], master[IFNAMSIZ];
static const char *self, *raw_name;
static long kver;

/* The VF interface of @dev: its PCI function's net/ directory, as DPDK finds it. */
static int find_vf(const char *dev)
{
	char path[PATH_MAX], link[PATH_MAX];
	struct dirent *de;
	ssize_t n;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/net", dev);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && strlen(de->d_name) < sizeof(vf))
			memcpy(vf, de->d_name, strlen(de->d_name) + 1);
	closedir(d);
	snprintf(path, sizeof(path), "/sys/class/net/%s/master", vf);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return -1;
	link[n] = 0;
	snprintf(master, sizeof(master), "%s", basename(link));
	return 0;
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

static int sh(const char *fmt, const char *name, const char *arg)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), fmt, name, arg);
	return system(cmd);
}

/* One line of a command's output (first), or "". */
static const char *out1(const char *cmd, char *buf, size_t len)
{
	FILE *p = popen(cmd, "r");

	buf[0] = 0;
	if (p) {
		if (!fgets(buf, len, p))
			buf[0] = 0;
		pclose(p);
	}
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

/* ioctl(AF_INET socket, req, {name, value}): 0 or errno; *value updated. */
static int ifioctl(unsigned long req, const char *name, int *value)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM, 0), ret = 0;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (req == SIOCSIFMTU)
		ifr.ifr_mtu = *value;
	if (req == SIOCSIFFLAGS)
		ifr.ifr_flags = (short)*value;
	if (ioctl(s, req, &ifr))
		ret = errno;
	else if (req == SIOCGIFMTU)
		*value = ifr.ifr_mtu;
	else if (req == SIOCGIFFLAGS)
		*value = (unsigned short)ifr.ifr_flags;
	close(s);
	return ret;
}

static int set_up(const char *name, bool up)
{
	int flags;
	int ret = ifioctl(SIOCGIFFLAGS, name, &flags);

	if (ret)
		return ret;
	flags = up ? flags | IFF_UP : flags & ~IFF_UP;
	return ifioctl(SIOCSIFFLAGS, name, &flags);
}

static bool is_up(const char *name)
{
	int flags = 0;

	return !ifioctl(SIOCGIFFLAGS, name, &flags) && (flags & IFF_UP);
}

static int port_state(struct ibv_context *ctx, enum ibv_mtu *mtu)
{
	struct ibv_port_attr a;

	if (ibv_query_port(ctx, 1, &a))
		return -1;
	if (mtu)
		*mtu = a.active_mtu;
	return a.state;
}

/* The next async event (blocking); its type, port in *port. */
static int next_event(struct ibv_context *ctx, int *port)
{
	struct ibv_async_event ev;
	int type;

	if (ibv_get_async_event(ctx, &ev))
		return -1;
	type = ev.event_type;
	*port = ev.element.port_num;
	ibv_ack_async_event(&ev);
	return type;
}

/* No event queued: the async fd, non-blocking, has nothing. */
static bool no_event(struct ibv_context *ctx)
{
	struct ibv_async_event ev;
	int fl = fcntl(ctx->async_fd, F_GETFL), got;

	fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	got = ibv_get_async_event(ctx, &ev);
	if (!got)
		ibv_ack_async_event(&ev);
	fcntl(ctx->async_fd, F_SETFL, fl);
	return got && errno == EAGAIN;
}

static void *flip_master_down(void *arg)
{
	(void)arg;
	CHECK(!set_up(master, false), "thread: %s down", master);
	return NULL;
}

#define FLIPS 100

static void *flip_master_often(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < FLIPS; i++) {
		CHECK(!set_up(master, true), "thread: up %d", i);
		CHECK(!set_up(master, false), "thread: down %d", i);
	}
	return NULL;
}

/*
 * In-process only (the ThreadSanitizer run cannot start children): a
 * thread flips the master up and down while this one reads the events,
 * each in order, none lost or doubled.
 */
static void test_event_threads(struct ibv_context *rnic)
{
	int i, port = 0, bad = 0;
	pthread_t t;

	pthread_create(&t, NULL, flip_master_often, NULL);
	for (i = 0; i < 2 * FLIPS; i++)
		if (next_event(rnic, &port) != (i % 2 ? IBV_EVENT_PORT_ERR :
						     IBV_EVENT_PORT_ACTIVE) ||
		    port != 1)
			bad++;
	pthread_join(t, NULL);
	CHECK(!bad, "%d of %d events out of order", bad, 2 * FLIPS);
	CHECK(no_event(rnic), "no more");
	CHECK(!is_up(vf) && !is_up(master), "both down");
}

/*
 * Port state, `ip link` and sysfs follow the VF; port events follow the
 * master (6.14 on) and reach every context of the RNIC.
 */
static void test_state_and_events(struct ibv_context *rnic)
{
	bool events = kver >= 6014;
	char buf[256], cmd[128];
	pthread_t t;
	int port = 0;

	CHECK(port_state(rnic, NULL) == IBV_PORT_DOWN, "starts DOWN");
	/* the VF alone: the port is ACTIVE, no event (the master is bound) */
	CHECK(!sh("ip link set dev %s up%s", vf, ""), "ip link set %s up", vf);
	CHECK(port_state(rnic, NULL) == IBV_PORT_ACTIVE, "ACTIVE with the VF up");
	snprintf(cmd, sizeof(cmd), "cat /sys/class/net/%s/operstate", vf);
	CHECK(!strcmp(out1(cmd, buf, sizeof(buf)), "up"), "operstate '%s'", buf);
	CHECK(!strcmp(out1("cat /sys/class/infiniband/mana_0/ports/1/state", buf,
			   sizeof(buf)), "4: ACTIVE"), "sysfs port state '%s'", buf);
	snprintf(cmd, sizeof(cmd), "ibv_devinfo -d mana_0 | grep -w state:");
	CHECK(strstr(out1(cmd, buf, sizeof(buf)), "PORT_ACTIVE"),
	      "ibv_devinfo: '%s'", buf);
	/* the master up: ACTIVE (another process made the change) */
	CHECK(!sh("ip link set dev %s up%s", master, ""), "ip link set %s up", master);
	if (events) {
		CHECK(next_event(rnic, &port) == IBV_EVENT_PORT_ACTIVE && port == 1,
		      "PORT_ACTIVE on port 1 (got port %d)", port);
		/* a thread of ours takes the master down: PORT_ERR */
		pthread_create(&t, NULL, flip_master_down, NULL);
		CHECK(next_event(rnic, &port) == IBV_EVENT_PORT_ERR && port == 1,
		      "PORT_ERR on port 1 (got port %d)", port);
		pthread_join(t, NULL);
	} else {
		CHECK(!set_up(master, false), "%s down", master);
	}
	/* netvsc closed the VF with its master */
	CHECK(!is_up(vf), "%s closed with %s", vf, master);
	CHECK(port_state(rnic, NULL) == IBV_PORT_DOWN, "DOWN again");
	CHECK(!strcmp(out1("cat /sys/class/infiniband/mana_0/ports/1/state", buf,
			   sizeof(buf)), "1: DOWN"), "sysfs port state '%s'", buf);
	/* master up (VF too), VF down (no event), master down (PORT_ERR) */
	CHECK(!sh("ip link set dev %s up%s", master, ""), "master up again");
	CHECK(is_up(vf), "netvsc opened %s", vf);
	CHECK(!sh("ip link set dev %s down%s", vf, ""), "VF down");
	CHECK(!sh("ip link set dev %s down%s", master, ""), "master down");
	if (events) {
		CHECK(next_event(rnic, &port) == IBV_EVENT_PORT_ACTIVE, "ACTIVE");
		CHECK(next_event(rnic, &port) == IBV_EVENT_PORT_ERR, "then ERR");
	}
	CHECK(no_event(rnic), "no event for the VF alone, none before 6.14");
}

/* SIOCSIFMTU as DPDK makes it; `ip link`, SIOCGIFMTU and active_mtu follow. */
static void test_mtu(struct ibv_context *rnic)
{
	bool jumbo = kver >= 6008;
	char buf[256], cmd[128];
	enum ibv_mtu active;
	int mtu;

	mtu = 4000;
	CHECK(ifioctl(SIOCSIFMTU, vf, &mtu) == (jumbo ? 0 : EINVAL),
	      "SIOCSIFMTU %s 4000", vf);
	if (!jumbo) {
		mtu = 1500;
		CHECK(!ifioctl(SIOCSIFMTU, vf, &mtu), "6.2: 1500 is no change");
		mtu = 1501;
		CHECK(ifioctl(SIOCSIFMTU, vf, &mtu) == EINVAL, "6.2: 1501");
		return;
	}
	mtu = 0;
	CHECK(!ifioctl(SIOCGIFMTU, vf, &mtu) && mtu == 4000, "SIOCGIFMTU %d", mtu);
	snprintf(cmd, sizeof(cmd), "ip -o link show dev %s", vf);
	CHECK(strstr(out1(cmd, buf, sizeof(buf)), " mtu 4000 "), "ip link: '%s'", buf);
	snprintf(cmd, sizeof(cmd), "cat /sys/class/net/%s/mtu", vf);
	CHECK(!strcmp(out1(cmd, buf, sizeof(buf)), "4000"), "sysfs mtu '%s'", buf);
	if (kver >= 6010) {
		port_state(rnic, &active);
		CHECK(active == IBV_MTU_2048, "active_mtu %d for 4000", active);
	}
	/* mana_en's range: 68 .. 9000, EINVAL outside, the MTU unchanged */
	mtu = 67;
	CHECK(ifioctl(SIOCSIFMTU, vf, &mtu) == EINVAL, "67");
	mtu = 9001;
	CHECK(ifioctl(SIOCSIFMTU, vf, &mtu) == EINVAL, "9001");
	mtu = -1;
	CHECK(ifioctl(SIOCSIFMTU, vf, &mtu) == EINVAL, "-1");
	mtu = 0;
	CHECK(!ifioctl(SIOCGIFMTU, vf, &mtu) && mtu == 4000, "still %d", mtu);
	/* the master passes its MTU to the VF first: the VF's limit holds */
	CHECK(sh("ip link set dev %s mtu %s 2>/dev/null", master, "9001") != 0,
	      "master 9001");
	CHECK(!sh("ip link set dev %s mtu %s", master, "9000"), "master 9000");
	mtu = 0;
	CHECK(!ifioctl(SIOCGIFMTU, vf, &mtu) && mtu == 9000, "VF follows: %d", mtu);
	if (kver >= 6010) {
		port_state(rnic, &active);
		CHECK(active == IBV_MTU_4096, "active_mtu %d for 9000", active);
	}
	mtu = 68;
	CHECK(!ifioctl(SIOCSIFMTU, vf, &mtu), "68");
	if (kver >= 6010) {
		port_state(rnic, &active);
		CHECK(active == IBV_MTU_256, "active_mtu %d for 68", active);
	}
	mtu = 1500;
	CHECK(!ifioctl(SIOCSIFMTU, vf, &mtu), "back to 1500");
	/* a name the VM does not have is the host's */
	mtu = 0;
	CHECK(ifioctl(SIOCGIFMTU, "nosuchif9", &mtu) == ENODEV, "host: ENODEV");
}

static struct ibv_qp *raw_qp(struct ibv_context *ctx, struct ibv_pd *pd,
			     struct ibv_cq *cq)
{
	struct ibv_parent_domain_init_attr pa = {
		.pd = pd, .comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.pd_context = (void *)(uintptr_t)1,
	};
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 64, .max_send_sge = 1 },
	};
	struct ibv_pd *parent = ibv_alloc_parent_domain(ctx, &pa);
	struct ibv_qp *qp;

	if (!parent)
		return NULL;
	qp = ibv_create_qp(parent, &qa);
	if (!qp) {
		int e = errno;

		ibv_dealloc_pd(parent);
		errno = e;
	}
	return qp;
}

/* The vport: the VF's while it is up, a raw QP's while it holds it. */
static void test_vport(struct ibv_context *raw)
{
	int busy = kver >= 7002 ? EBUSY : ENODEV;
	struct ibv_pd *pd = ibv_alloc_pd(raw), *parent;
	struct ibv_cq *cq = ibv_create_cq(raw, 64, NULL, NULL, 0);
	struct ibv_qp *qp;

	CHECK(pd && cq, "pd, cq");
	CHECK(!set_up(vf, true), "VF up");
	qp = raw_qp(raw, pd, cq);
	CHECK(!qp && errno == busy, "raw QP while the VF is up: %s",
	      qp ? "created" : strerror(errno));
	if (qp) {
		parent = qp->pd;
		ibv_destroy_qp(qp);
		ibv_dealloc_pd(parent);
	}
	CHECK(!sh("ip link set dev %s down%s", vf, ""), "ip link set VF down");
	qp = raw_qp(raw, pd, cq);
	CHECK(qp, "raw QP with the VF down: %s", qp ? "ok" : strerror(errno));
	/* mana_open(): mana_cfg_vport() finds the vport taken */
	CHECK(set_up(vf, true) == EBUSY, "VF up while a raw QP holds the vport");
	CHECK(!is_up(vf), "VF stays down");
	/* the same from another process of the VM: ip, and a raw QP */
	CHECK(sh("ip link set dev %s up%s 2>/dev/null", vf, "") != 0,
	      "ip link set up while our raw QP holds the vport");
	CHECK(!is_up(vf), "VF still down");
	CHECK(sh("%s --raw-qp-busy %s", self, raw_name) == 0,
	      "another process's raw QP: %s", strerror(busy));
	/* netvsc_open() comes up anyway and leaves the VF down */
	CHECK(!set_up(master, true), "master up");
	CHECK(!is_up(vf), "VF still down");
	CHECK(!set_up(master, false), "master down");
	if (qp) {
		parent = qp->pd;
		CHECK(!ibv_destroy_qp(qp), "destroy");
		ibv_dealloc_pd(parent);
	}
	CHECK(!set_up(vf, true), "VF up once the vport is free");
	CHECK(!set_up(vf, false), "VF down");
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

/* A second process of the VM: its raw QP finds the vport held (exit 0). */
static int raw_qp_busy(const char *dev)
{
	int busy = kver >= 7002 ? EBUSY : ENODEV;
	struct ibv_context *ctx = open_dev(dev);
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = ctx ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
	struct ibv_qp *qp = pd && cq ? raw_qp(ctx, pd, cq) : NULL;

	CHECK(pd && cq && !qp && errno == busy, "child raw QP: %s",
	      qp ? "created" : strerror(errno));
	return check_done();
}

int main(int argc, char **argv)
{
	struct ibv_context *rnic, *raw;
	bool in_process;
	int ret;

	kver = emu_kernel_version();
	self = argv[0];
	if (argc == 3 && !strcmp(argv[1], "--raw-qp-busy"))
		return raw_qp_busy(argv[2]);
	in_process = argc == 2 && !strcmp(argv[1], "--in-process");
	raw_name = kver >= 6016 ? "manae_0" : "mana_0";
	rnic = open_dev("mana_0");
	raw = open_dev(raw_name);
	CHECK(rnic && raw, "open mana_0 and %s", raw_name);
	ret = find_vf(raw_name);
	CHECK(!ret, "VF of %s: '%s', master '%s'", raw_name, vf, master);
	if (!rnic || !raw || ret)
		return check_done();
	if (in_process) {
		if (kver >= 6014)
			test_event_threads(rnic);
	} else {
		if (kver >= 6010)
			test_state_and_events(rnic);
		test_mtu(rnic);
		test_vport(raw);
	}
	if (raw != rnic)
		ibv_close_device(raw);
	ibv_close_device(rnic);
	return check_done();
}
