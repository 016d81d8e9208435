// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the kernel says over netlink, read with libnl as libibverbs and
 * iproute2 read it: RDMA netlink (devices, the uverbs driver id, each
 * port's state and netdev) and rtnetlink (the netdev, its master, MAC
 * and state).  Without RDMA netlink the same facts come from sysfs.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <netlink/netlink.h>
#include <netlink/msg.h>
#include <netlink/attr.h>
#include <netlink/route/link.h>
#include <linux/if.h>
#include <rdma/rdma_netlink.h>

#include "diag.h"

static const char *const port_states[] = {
	"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
};

static const char *port_state_name(int state)
{
	if (state < 0 || state > 5)
		return "unknown";
	return port_states[state];
}

static struct diag_dev *dev_by_name(struct diag *d, const char *name)
{
	unsigned int i;

	for (i = 0; i < d->ndevs; i++)
		if (!strcmp(d->devs[i].name, name))
			return &d->devs[i];
	return NULL;
}

static struct diag_dev *dev_by_index(struct diag *d, unsigned int idx)
{
	unsigned int i;

	for (i = 0; i < d->ndevs; i++)
		if (d->devs[i].nl_seen && d->devs[i].nl_index == idx)
			return &d->devs[i];
	return NULL;
}

/* ---- RDMA netlink ------------------------------------------------------------ */

static int parse(struct nl_msg *msg, struct nlattr **tb)
{
	return nlmsg_parse(nlmsg_hdr(msg), 0, tb, RDMA_NLDEV_ATTR_MAX - 1, NULL);
}

static int dev_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[RDMA_NLDEV_ATTR_MAX] = {};
	struct diag *d = arg;
	struct diag_dev *dev;

	if (parse(msg, tb) || !tb[RDMA_NLDEV_ATTR_DEV_INDEX] ||
	    !tb[RDMA_NLDEV_ATTR_DEV_NAME])
		return NL_OK;
	dev = dev_by_name(d, nla_get_string(tb[RDMA_NLDEV_ATTR_DEV_NAME]));
	if (!dev)
		return NL_OK;	/* not on a MANA function */
	dev->nl_seen = true;
	dev->nl_index = nla_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]);
	if (tb[RDMA_NLDEV_ATTR_PORT_INDEX])
		dev->nports = nla_get_u32(tb[RDMA_NLDEV_ATTR_PORT_INDEX]);
	if (dev->nports > DIAG_MAX_PORTS)
		dev->nports = DIAG_MAX_PORTS;
	return NL_OK;
}

static int chardev_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[RDMA_NLDEV_ATTR_MAX] = {};
	struct diag_dev *dev = arg;

	if (parse(msg, tb))
		return NL_OK;
	/* absent on kernels that bind no driver id: libibverbs reads 0 */
	dev->driver_id = tb[RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID] ?
		(int)nla_get_u32(tb[RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID]) : 0;
	return NL_OK;
}

static int port_cb(struct nl_msg *msg, void *arg)
{
	struct nlattr *tb[RDMA_NLDEV_ATTR_MAX] = {};
	struct diag *d = arg;
	struct diag_dev *dev;
	struct diag_port *p;
	unsigned int port;

	if (parse(msg, tb) || !tb[RDMA_NLDEV_ATTR_DEV_INDEX] ||
	    !tb[RDMA_NLDEV_ATTR_PORT_INDEX])
		return NL_OK;
	dev = dev_by_index(d, nla_get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX]));
	port = nla_get_u32(tb[RDMA_NLDEV_ATTR_PORT_INDEX]);
	if (!dev || port < 1 || port > DIAG_MAX_PORTS)
		return NL_OK;
	p = &dev->ports[port - 1];
	p->port = port;
	if (tb[RDMA_NLDEV_ATTR_PORT_STATE])
		p->state = nla_get_u8(tb[RDMA_NLDEV_ATTR_PORT_STATE]);
	if (tb[RDMA_NLDEV_ATTR_PORT_PHYS_STATE])
		p->phys_state = nla_get_u8(tb[RDMA_NLDEV_ATTR_PORT_PHYS_STATE]);
	if (tb[RDMA_NLDEV_ATTR_NDEV_INDEX])
		p->ndev_index = nla_get_u32(tb[RDMA_NLDEV_ATTR_NDEV_INDEX]);
	if (tb[RDMA_NLDEV_ATTR_NDEV_NAME])
		snprintf(p->ndev, sizeof(p->ndev), "%s",
			 nla_get_string(tb[RDMA_NLDEV_ATTR_NDEV_NAME]));
	return NL_OK;
}

/* One request, its replies through @cb. */
static int request(struct nl_sock *sk, int cmd, int flags, int dev_index,
		   const char *chardev, nl_recvmsg_msg_cb_t cb, void *arg)
{
	struct nl_msg *msg = nlmsg_alloc_simple(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV,
								  cmd), flags);
	int ret;

	if (!msg)
		return -NLE_NOMEM;
	if ((dev_index >= 0 &&
	     nla_put_u32(msg, RDMA_NLDEV_ATTR_DEV_INDEX, dev_index)) ||
	    (chardev && nla_put_string(msg, RDMA_NLDEV_ATTR_CHARDEV_TYPE, chardev))) {
		nlmsg_free(msg);
		return -NLE_NOMEM;
	}
	ret = nl_send_auto(sk, msg);
	nlmsg_free(msg);
	if (ret < 0)
		return ret;
	nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, cb, arg);
	return nl_recvmsgs_default(sk);
}

/* Ports, their state and netdevs from sysfs when netlink says nothing. */
static void sysfs_ports(struct diag *d, struct diag_dev *dev)
{
	char rel[PATH_MAX], buf[64];
	unsigned int port;

	for (port = 1; port <= DIAG_MAX_PORTS; port++) {
		struct diag_port *p = &dev->ports[port - 1];

		snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/%u/state",
			 dev->name, port);
		if (sysfs_read(d, rel, buf, sizeof(buf)))
			break;
		if (!dev->nl_seen)
			dev->nports = port;
		if (p->port)
			continue;
		p->port = port;
		p->state = atoi(buf);
		snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/%u/phys_state",
			 dev->name, port);
		p->phys_state = sysfs_read(d, rel, buf, sizeof(buf)) ? -1 : atoi(buf);
	}
}

/*
 * The netdev of each port without netlink: the function's net/ entry whose
 * dev_port is port - 1 (the rule DPDK's net/mana uses too).
 */
static void sysfs_netdevs(struct diag *d, struct diag_dev *dev)
{
	char path[PATH_MAX], rel[PATH_MAX], buf[64];
	struct dirent *e;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/net", d->sysfs,
		 dev->bdf);
	dir = opendir(path);
	while (dir && (e = readdir(dir))) {
		unsigned int dev_port;
		struct diag_port *p;

		if (e->d_name[0] == '.')
			continue;
		snprintf(rel, sizeof(rel), "bus/pci/devices/%s/net/%s/dev_port",
			 dev->bdf, e->d_name);
		if (sysfs_read(d, rel, buf, sizeof(buf)))
			continue;
		dev_port = strtoul(buf, NULL, 0);
		if (dev_port >= dev->nports)
			continue;
		p = &dev->ports[dev_port];
		if (p->ndev[0])
			continue;	/* netlink named it */
		snprintf(p->ndev, sizeof(p->ndev), "%s", e->d_name);
		snprintf(rel, sizeof(rel), "bus/pci/devices/%s/net/%s/ifindex",
			 dev->bdf, e->d_name);
		if (!sysfs_read(d, rel, buf, sizeof(buf)))
			p->ndev_index = strtoul(buf, NULL, 0);
	}
	if (dir)
		closedir(dir);
}

void nl_scan_rdma(struct diag *d)
{
	struct nl_sock *sk;
	unsigned int i;

	for (i = 0; i < d->ndevs; i++) {
		unsigned int p;

		for (p = 0; p < DIAG_MAX_PORTS; p++)
			d->devs[i].ports[p].state = d->devs[i].ports[p].phys_state = -1;
	}
	sk = nl_socket_alloc();
	if (!sk) {
		d->netlink_err = ENOMEM;
		goto sysfs;
	}
	nl_socket_disable_auto_ack(sk);
	nl_socket_disable_msg_peek(sk);
	errno = 0;
	if (nl_connect(sk, NETLINK_RDMA)) {
		d->netlink_err = errno ? errno : EPROTONOSUPPORT;
		goto free;
	}
	if (request(sk, RDMA_NLDEV_CMD_GET, NLM_F_DUMP, -1, NULL, dev_cb, d) < 0) {
		d->netlink_err = EINVAL;
		goto free;
	}
	d->netlink = true;
	for (i = 0; i < d->ndevs; i++) {
		struct diag_dev *dev = &d->devs[i];

		if (!dev->nl_seen)
			continue;
		request(sk, RDMA_NLDEV_CMD_GET_CHARDEV, 0, dev->nl_index,
			"uverbs", chardev_cb, dev);
		request(sk, RDMA_NLDEV_CMD_PORT_GET, NLM_F_DUMP, dev->nl_index,
			NULL, port_cb, d);
	}
free:
	nl_socket_free(sk);
sysfs:
	for (i = 0; i < d->ndevs; i++) {
		sysfs_ports(d, &d->devs[i]);
		sysfs_netdevs(d, &d->devs[i]);
	}
}

/* ---- 6. the netdev of each port ---------------------------------------------- */

struct link_info {
	char name[DIAG_NAME];
	char mac[32];
	unsigned int flags;
	char oper[32];
	int master;
};

static bool link_read(struct nl_cache *cache, int ifindex, const char *name,
		      struct link_info *li)
{
	struct rtnl_link *l = ifindex > 0 ? rtnl_link_get(cache, ifindex) :
					    rtnl_link_get_by_name(cache, name);
	struct nl_addr *a;

	memset(li, 0, sizeof(*li));
	if (!l)
		return false;
	snprintf(li->name, sizeof(li->name), "%s", rtnl_link_get_name(l));
	a = rtnl_link_get_addr(l);
	if (a)
		nl_addr2str(a, li->mac, sizeof(li->mac));
	li->flags = rtnl_link_get_flags(l);
	rtnl_link_operstate2str(rtnl_link_get_operstate(l), li->oper,
				sizeof(li->oper));
	li->master = rtnl_link_get_master(l);
	rtnl_link_put(l);
	return true;
}

static void port_data(struct result *r, const struct diag_dev *dev,
		      const struct diag_port *p, const struct link_info *vf,
		      const struct link_info *m)
{
	js_str(&r->data, "ibdev", dev->name);
	js_int(&r->data, "port", p->port);
	js_str(&r->data, "port_state", p->state >= 0 ? port_state_name(p->state) : NULL);
	js_str(&r->data, "netdev", vf && vf->name[0] ? vf->name : NULL);
	if (vf && vf->name[0]) {
		js_int(&r->data, "ifindex", p->ndev_index);
		js_str(&r->data, "mac", vf->mac);
		js_bool(&r->data, "admin_up", vf->flags & IFF_UP);
		js_str(&r->data, "operstate", vf->oper);
	}
	js_str(&r->data, "master", m && m->name[0] ? m->name : NULL);
	if (m && m->name[0]) {
		js_str(&r->data, "master_mac", m->mac);
		js_bool(&r->data, "master_up", m->flags & IFF_UP);
	}
}

static void check_port(struct diag_dev *dev, struct diag_port *p,
		       struct nl_cache *cache)
{
	char subject[DIAG_NAME * 2];
	struct link_info vf, m = { 0 };
	struct result *r;

	snprintf(subject, sizeof(subject), "%s/%u", dev->name, p->port);
	r = result_add("netdev", subject);
	if (!p->ndev[0] && !p->ndev_index) {
		port_data(r, dev, p, NULL, NULL);
		result_set(r, V_FAIL, "no netdev is paired with this port (port "
			   "%s)", port_state_name(p->state));
		result_fix(r, "the mana driver makes one per port: sudo modprobe "
			   "mana, and see sudo dmesg | grep -i mana");
		return;
	}
	if (!link_read(cache, p->ndev_index, p->ndev, &vf)) {
		port_data(r, dev, p, NULL, NULL);
		result_set(r, V_WARN, "netdev %s (ifindex %u) not found over "
			   "rtnetlink", p->ndev, p->ndev_index);
		return;
	}
	if (vf.master > 0)
		link_read(cache, vf.master, NULL, &m);
	port_data(r, dev, p, &vf, &m);
	if (vf.flags & IFF_UP) {
		/* mana_ib answers ENODEV for a held vport, EBUSY from 7.2 */
		result_set(r, V_FAIL, "VF %s (%s, master %s) is UP: the kernel "
			   "holds the vport, raw QP creation (DPDK) fails "
			   "(ENODEV; EBUSY from Linux 7.2)", vf.name, vf.mac,
			   m.name[0] ? m.name : "none");
		result_fix(r, "sudo ip link set dev %s down", vf.name);
		if (m.name[0] && (m.flags & IFF_UP))
			result_fix(r, "netvsc brings the VF up again with its "
				   "master %s: take %s down after every ip link "
				   "set %s up", m.name, vf.name, m.name);
		return;
	}
	if (!m.name[0]) {
		result_set(r, V_WARN, "VF %s (%s) is down but has no synthetic "
			   "master: hv_netvsc did not pair it (port %s)", vf.name,
			   vf.mac, port_state_name(p->state));
		return;
	}
	if (strcasecmp(m.mac, vf.mac)) {
		result_set(r, V_WARN, "VF %s (%s) and its master %s (%s) differ "
			   "in MAC", vf.name, vf.mac, m.name, m.mac);
		return;
	}
	result_set(r, V_OK, "VF %s (%s) down, master %s %s: the vport is free "
		   "for DPDK (port %s, as mana_ib reports a down netdev)", vf.name,
		   vf.mac, m.name, (m.flags & IFF_UP) ? "up" : "down",
		   port_state_name(p->state));
}

void check_netdevs(struct diag *d)
{
	struct nl_cache *cache = NULL;
	struct nl_sock *sk = NULL;
	unsigned int i, port;

	if (!d->ndevs) {
		result_set(result_add("netdev", NULL), V_SKIP, "no RDMA device");
		return;
	}
	sk = nl_socket_alloc();
	if (!sk || nl_connect(sk, NETLINK_ROUTE) ||
	    rtnl_link_alloc_cache(sk, AF_UNSPEC, &cache)) {
		result_set(result_add("netdev", NULL), V_FAIL,
			   "cannot read the network interfaces over rtnetlink");
		goto out;
	}
	for (i = 0; i < d->ndevs; i++) {
		struct diag_dev *dev = &d->devs[i];

		if (!dev->nports)
			result_set(result_add("netdev", dev->name), V_WARN,
				   "no port found (neither RDMA netlink nor sysfs "
				   "ports/ list one)");
		for (port = 1; port <= dev->nports; port++) {
			dev->ports[port - 1].port = port;
			check_port(dev, &dev->ports[port - 1], cache);
		}
	}
out:
	if (cache)
		nl_cache_free(cache);
	if (sk)
		nl_socket_free(sk);
}
