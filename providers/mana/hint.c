// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The one line a user needs for the failures an errno does not explain
 * (a vport held by the kernel's interface, a driver id mismatch, a QP type
 * MANA lacks): said once per process, on stderr like libibverbs' own
 * warnings, unless MANA_QUIET asks for silence; where the user set up the
 * verbs log (VERBS_LOG_LEVEL and VERBS_LOG_FILE) it goes there instead.
 * The verbs log keeps the detail of each failure either way.
 */
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mana.h"

static atomic_bool mana_hint_said[MANA_HINT_NR];

static bool mana_quiet(void)
{
	const char *q = getenv("MANA_QUIET");

	return q && *q && strcmp(q, "0");
}

/* libibverbs writes its log only with both set (release builds). */
static bool verbs_log_on(void)
{
	const char *level = getenv("VERBS_LOG_LEVEL");
	const char *file = getenv("VERBS_LOG_FILE");

	return level && strtol(level, NULL, 0) >= VERBS_LOG_ERR && file && *file;
}

void mana_hint(enum mana_hint which, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if ((unsigned int)which >= MANA_HINT_NR ||
	    atomic_exchange(&mana_hint_said[which], true))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (verbs_log_on())
		__verbs_log(NULL, VERBS_LOG_ERR, "libmana: %s\n", line);
	else if (!mana_quiet())
		fprintf(stderr, "libmana: %s (MANA_QUIET=1 silences this)\n",
			line);
}

/*
 * The network interface of @port: the entry of the PCI function's net/
 * whose dev_port is @port - 1, as mana makes them.  False if sysfs does
 * not say; *up from its IFF_UP flag.
 */
static bool port_netdev(struct ibv_context *ibctx, uint32_t port, char *name,
			size_t len, bool *up)
{
	char dir[IBV_SYSFS_PATH_MAX + 16], rel[NAME_MAX + 32], buf[32];
	struct dirent *e;
	bool found = false;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/device/net", ibctx->device->ibdev_path);
	d = opendir(dir);
	while (d && !found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(rel, sizeof(rel), "%s/dev_port", e->d_name);
		if (ibv_read_sysfs_file(dir, rel, buf, sizeof(buf)) <= 0 ||
		    strtoul(buf, NULL, 0) != port - 1)
			continue;
		snprintf(rel, sizeof(rel), "%s/flags", e->d_name);
		*up = ibv_read_sysfs_file(dir, rel, buf, sizeof(buf)) > 0 &&
		      (strtoul(buf, NULL, 0) & IFF_UP);
		found = strlen(e->d_name) < len;
		if (found)
			memcpy(name, e->d_name, strlen(e->d_name) + 1);
	}
	if (d)
		closedir(d);
	return found;
}

void mana_hint_vport_held(struct ibv_context *ibctx, uint32_t port, int err)
{
	char ifname[IF_NAMESIZE + 1];
	bool up = false;

	if (!port_netdev(ibctx, port, ifname, sizeof(ifname), &up)) {
		mana_hint(MANA_HINT_VPORT_HELD,
			  "%s port %u: raw QP creation failed with %s: the port's network interface (or another process) holds the vport. Fix: sudo ip link set dev <the port's VF interface> down",
			  ibctx->device->name, port, err == EBUSY ? "EBUSY" : "ENODEV");
		return;
	}
	/* down: another process or context holds it, which the log says */
	if (up)
		mana_hint(MANA_HINT_VPORT_HELD,
			  "%s port %u: raw QP creation failed with %s: the network interface %s is up and holds the vport. Fix: sudo ip link set dev %s down",
			  ibctx->device->name, port, err == EBUSY ? "EBUSY" : "ENODEV",
			  ifname, ifname);
}

const char *mana_qp_type_name(int qp_type)
{
	switch (qp_type) {
	case IBV_QPT_RC: return "RC";
	case IBV_QPT_UC: return "UC";
	case IBV_QPT_UD: return "UD";
	case IBV_QPT_RAW_PACKET: return "RAW_PACKET";
	case IBV_QPT_XRC_SEND: return "XRC_SEND";
	case IBV_QPT_XRC_RECV: return "XRC_RECV";
	case IBV_QPT_DRIVER: return "DRIVER";
	default: return "unknown";
	}
}
