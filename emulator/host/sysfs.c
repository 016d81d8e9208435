/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Generate the sysfs view of one MANA VF, laid out like the real thing:
 * the PCI function is a directory holding the IB device, the uverbs
 * char device and one netdev per port, and the class directories link
 * into it.  libibverbs only needs the class/ entries; DPDK and tools
 * walk from the IB device to the PCI function and its netdevs.
 */
#include "sysfs.h"

#include <net/if.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emulator/core/emu_defs.h"
#include "emulator/core/gid.h"
#include "emulator/core/ibdev.h"
#include "emulator/core/links.h"
#include "emulator/core/netdev.h"
#include "emulator/core/options.h"
#include "emulator/core/era.h"
#include "emulator/device/device.h"
#include "emulator/lib/log.h"

#define TREE_NAME "mana-emu.XXXXXX"
#define PCI_DIR "bus/pci/devices/" EMU_PCI_BDF
#define IB_DIR PCI_DIR "/infiniband/"		/* + the device's name */
#define UVERBS_DIR PCI_DIR "/infiniband_verbs/uverbs"	/* + its index */

/* Builder with a sticky error so the layout code reads top to bottom. */
struct tree {
	char root[PATH_MAX];
	bool replace;		/* rewrite: a new file renamed over the old */
	bool failed;
	char *err;
	size_t errlen;
};

static void tree_fail(struct tree *t, const char *what, const char *rel)
{
	if (t->failed)
		return;
	t->failed = true;
	snprintf(t->err, t->errlen, "sysfs tree: %s %s/%s: %s", what, t->root,
		 rel, strerror(errno));
}

static int tree_path(struct tree *t, const char *rel, char *path)
{
	if (snprintf(path, PATH_MAX, "%s/%s", t->root, rel) >= PATH_MAX) {
		errno = ENAMETOOLONG;
		tree_fail(t, "path", rel);
		return -1;
	}
	return 0;
}

/* mkdir -p of rel (relative to the root) */
static void tree_mkdir(struct tree *t, const char *rel)
{
	char path[PATH_MAX];
	char *p;

	if (t->failed || tree_path(t, rel, path))
		return;
	for (p = path + strlen(t->root) + 1; ; p++) {
		char c = *p;

		if (c != '/' && c)
			continue;
		*p = 0;
		if (mkdir(path, 0755) && errno != EEXIST) {
			tree_fail(t, "mkdir", rel);
			return;
		}
		*p = c;
		if (!c)
			return;
	}
}

static void tree_vwrite(struct tree *t, const char *rel, const char *fmt,
			va_list ap)
{
	char path[PATH_MAX], tmp[PATH_MAX + 24], text[1024];
	int fd, len;

	if (t->failed || tree_path(t, rel, path))
		return;
	len = vsnprintf(text, sizeof(text), fmt, ap);
	/*
	 * Another process may read (or rewrite) the attribute meanwhile:
	 * it sees the old text or the new, never a torn one.
	 */
	snprintf(tmp, sizeof(tmp), "%s.%ld", path, (long)getpid());
	fd = open(t->replace ? tmp : path,
		  O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0444);
	if (fd < 0) {
		tree_fail(t, "create", rel);
		return;
	}
	if (write(fd, text, len) != len)
		tree_fail(t, "write", rel);
	close(fd);
	if (t->replace && rename(tmp, path)) {
		tree_fail(t, "rename", rel);
		unlink(tmp);
	}
}

static void tree_write(struct tree *t, const char *rel, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void tree_write(struct tree *t, const char *rel, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tree_vwrite(t, rel, fmt, ap);
	va_end(ap);
}

/* Attribute file in directory dir: dir/name */
static void tree_attr(struct tree *t, const char *dir, const char *name,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void tree_attr(struct tree *t, const char *dir, const char *name,
		      const char *fmt, ...)
{
	char rel[1024];
	va_list ap;

	snprintf(rel, sizeof(rel), "%s/%s", dir, name);
	va_start(ap, fmt);
	tree_vwrite(t, rel, fmt, ap);
	va_end(ap);
}

static void tree_link(struct tree *t, const char *rel, const char *target)
{
	char path[PATH_MAX];

	if (t->failed || tree_path(t, rel, path))
		return;
	if (symlink(target, path))
		tree_fail(t, "symlink", rel);
}

static void format_guid(uint64_t guid, char *buf, size_t len)
{
	snprintf(buf, len, "%04x:%04x:%04x:%04x",
		 (unsigned int)(guid >> 48) & 0xffff,
		 (unsigned int)(guid >> 32) & 0xffff,
		 (unsigned int)(guid >> 16) & 0xffff,
		 (unsigned int)guid & 0xffff);
}

static const char *modalias(void)
{
	static char buf[96];

	snprintf(buf, sizeof(buf),
		 "pci:v%08Xd%08Xsv%08Xsd%08Xbc02sc00i00", MANA_PCI_VENDOR_ID,
		 MANA_PCI_DEVICE_VF, EMU_PCI_SUBSYS_VENDOR,
		 EMU_PCI_SUBSYS_DEVICE);
	return buf;
}

static void make_pci_function(struct tree *t, const struct mana_emu_options *opts)
{
	static const char zero_res[] =
		"0x0000000000000000 0x0000000000000000 0x0000000000000000\n";

	tree_mkdir(t, PCI_DIR);
	tree_attr(t, PCI_DIR, "vendor", "0x%04x\n", MANA_PCI_VENDOR_ID);
	tree_attr(t, PCI_DIR, "device", "0x%04x\n", MANA_PCI_DEVICE_VF);
	tree_attr(t, PCI_DIR, "subsystem_vendor", "0x%04x\n",
		  EMU_PCI_SUBSYS_VENDOR);
	tree_attr(t, PCI_DIR, "subsystem_device", "0x%04x\n",
		  EMU_PCI_SUBSYS_DEVICE);
	tree_attr(t, PCI_DIR, "class", "0x020000\n");
	tree_attr(t, PCI_DIR, "modalias", "%s\n", modalias());
	tree_attr(t, PCI_DIR, "uevent",
		  "%sPCI_CLASS=20000\nPCI_ID=%04X:%04X\n"
		  "PCI_SUBSYS_ID=%04X:%04X\nPCI_SLOT_NAME=%s\nMODALIAS=%s\n",
		  mana_emu_has_netdevs(opts) ? "DRIVER=mana\n" : "",
		  MANA_PCI_VENDOR_ID, MANA_PCI_DEVICE_VF,
		  EMU_PCI_SUBSYS_VENDOR, EMU_PCI_SUBSYS_DEVICE, EMU_PCI_BDF,
		  modalias());
	tree_attr(t, PCI_DIR, "numa_node", "-1\n");
	tree_attr(t, PCI_DIR, "resource", "%s%s%s%s%s%s", zero_res, zero_res,
		  zero_res, zero_res, zero_res, zero_res);
	/* Without the mana module the function has no driver. */
	if (!mana_emu_has_netdevs(opts))
		return;
	tree_mkdir(t, "bus/pci/drivers/mana");
	tree_link(t, PCI_DIR "/driver", "../../drivers/mana");
	tree_link(t, "bus/pci/drivers/mana/" EMU_PCI_BDF,
		  "../../devices/" EMU_PCI_BDF);
}

/* What changes with the link (netdev.h): written again on every change. */
static void netdev_state_attrs(struct tree *t, const char *dir,
			       const struct emu_link *l)
{
	bool up = l->operstate == IF_OPER_UP;
	char path[PATH_MAX];

	tree_attr(t, dir, "mtu", "%u\n", l->mtu);
	tree_attr(t, dir, "flags", "0x%x\n", l->flags & 0xffff);
	tree_attr(t, dir, "operstate", "%s\n", up ? "up" :
		  l->operstate == IF_OPER_UNKNOWN ? "unknown" : "down");
	/* carrier reads EINVAL while the interface is down: no file */
	if (l->flags & IFF_UP)
		tree_attr(t, dir, "carrier", "%u\n", l->carrier);
	else if (snprintf(path, sizeof(path), "%s/%s/carrier", t->root, dir) <
		 (int)sizeof(path))
		unlink(path);
}

static void netdev_attrs(struct tree *t, const char *dir,
			 const struct emu_link *l, unsigned int dev_port)
{
	const uint8_t *m = l->mac;

	tree_mkdir(t, dir);
	tree_attr(t, dir, "address", "%02x:%02x:%02x:%02x:%02x:%02x\n", m[0],
		  m[1], m[2], m[3], m[4], m[5]);
	tree_attr(t, dir, "dev_port", "%u\n", dev_port);
	tree_attr(t, dir, "ifindex", "%u\n", l->ifindex);
	tree_attr(t, dir, "type", "1\n");
	tree_attr(t, dir, "addr_len", "6\n");
	netdev_state_attrs(t, dir, l);
	tree_attr(t, dir, "uevent", "INTERFACE=%s\nIFINDEX=%u\n", l->name,
		  l->ifindex);
}

/*
 * The synthetic (hv_netvsc) interface of vNIC @port: a VMBus device, not
 * PCI.  Its upper_ link names the VF it enslaved.
 */
static void make_synthetic(struct tree *t, const struct mana_emu_options *opts,
			   unsigned int port)
{
	char dev[128], dir[256], rel[512], target[512];
	struct emu_link l, vf;

	emu_link_get(opts, port, &l);
	snprintf(dev, sizeof(dev),
		 "bus/vmbus/devices/000d3a00-0000-4000-8000-0000000000%02x",
		 port);
	snprintf(dir, sizeof(dir), "%s/net/%s", dev, l.name);
	netdev_attrs(t, dir, &l, 0);
	tree_mkdir(t, "bus/vmbus/drivers/hv_netvsc");
	snprintf(rel, sizeof(rel), "%s/driver", dev);
	tree_link(t, rel, "../../drivers/hv_netvsc");
	snprintf(rel, sizeof(rel), "%s/device", dir);
	tree_link(t, rel, "../..");
	snprintf(rel, sizeof(rel), "class/net/%s", l.name);
	snprintf(target, sizeof(target), "../../%s", dir);
	tree_link(t, rel, target);
	if (!emu_link_of_port(opts, port, &vf))
		return;
	snprintf(rel, sizeof(rel), "%s/upper_%s", dir, vf.name);
	snprintf(target, sizeof(target), "../../../../../../" PCI_DIR "/net/%s",
		 vf.name);
	tree_link(t, rel, target);
}

/* The VF interface mana made for port @port, enslaved to its synthetic twin. */
static void make_netdev(struct tree *t, const struct mana_emu_options *opts,
			unsigned int port)
{
	char dir[256], rel[512], target[512];
	struct emu_link l, master;

	if (!emu_link_of_port(opts, port, &l))
		return;
	emu_link_get(opts, l.master - 1, &master);
	snprintf(dir, sizeof(dir), PCI_DIR "/net/%s", l.name);
	netdev_attrs(t, dir, &l, port - 1);
	snprintf(rel, sizeof(rel), "%s/device", dir);
	tree_link(t, rel, "../..");
	snprintf(rel, sizeof(rel), "%s/master", dir);
	snprintf(target, sizeof(target), "../../../../../../class/net/%s",
		 master.name);
	tree_link(t, rel, target);
	snprintf(rel, sizeof(rel), "class/net/%s", l.name);
	snprintf(target, sizeof(target), "../../" PCI_DIR "/net/%s", l.name);
	tree_link(t, rel, target);
}

/*
 * The GID table (core/gid.h): gids/0..15 (an empty slot reads as the
 * zero GID, as the kernel shows it), gid_attrs/types and ndevs for the
 * entries in use only (the kernel's read of an empty one fails with
 * ENODATA; a missing file is the nearest a static tree gets, and
 * libibverbs' sysfs fallback treats both alike).  A port without RoCE
 * has gid_tbl_len 0: empty directories.
 */
static void make_ib_gids(struct tree *t, const struct mana_emu_options *opts,
			 const struct emu_ibdev *d, unsigned int port,
			 const char *dir)
{
	char gids[512], types[512], ndevs[512], name[8], text[48];
	unsigned int i, n = emu_ibdev_roce_port(d, port) ? EMU_GID_TBL_LEN : 0;
	struct emu_link l;
	uint8_t gid[16];

	snprintf(gids, sizeof(gids), "%s/gids", dir);
	tree_mkdir(t, gids);
	snprintf(types, sizeof(types), "%s/gid_attrs/types", dir);
	tree_mkdir(t, types);
	snprintf(ndevs, sizeof(ndevs), "%s/gid_attrs/ndevs", dir);
	tree_mkdir(t, ndevs);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%u", i);
		if (emu_gid_get(opts, port, i, gid))
			memset(gid, 0, sizeof(gid));
		emu_gid_format(gid, text, sizeof(text));
		tree_attr(t, gids, name, "%s\n", text);
		if (i >= emu_gid_count(opts, port))
			continue;
		tree_attr(t, types, name, "RoCE v2\n");
		if (emu_link_of_port(opts, port, &l))
			tree_attr(t, ndevs, name, "%s\n", l.name);
	}
}

/* mana_ib: the port is as up as its VF netdev (see kernel.c) */
static void port_state_attrs(struct tree *t,
			     const struct mana_emu_options *opts,
			     const char *dir, unsigned int port)
{
	struct emu_link l;
	bool up = emu_link_of_port(opts, port, &l) && l.carrier;

	tree_attr(t, dir, "state", "%s\n", up ? "4: ACTIVE" : "1: DOWN");
	tree_attr(t, dir, "phys_state", "%s\n",
		  up ? "5: LinkUp" : "3: Disabled");
}

/* rate_show(): query_port's width times its per-lane speed */
static void port_rate_attr(struct tree *t, const struct mana_emu_options *opts,
			   const char *dir)
{
	uint8_t width, speed;
	unsigned int lanes, tenths;
	const char *name;

	emu_era_port_speed(emu_era_get(opts->kernel), EMU_DEV_SKU_SPEED_MBPS,
			   &width, &speed);
	switch (speed) {
	case 2: tenths = 50; name = " DDR"; break;
	case 8: tenths = 100; name = " FDR10"; break;
	case 32: tenths = 250; name = " EDR"; break;
	case 64: tenths = 500; name = " HDR"; break;
	case 128: tenths = 1000; name = " NDR"; break;
	default: tenths = 25; name = " SDR"; break;
	}
	lanes = width == 16 ? 2 : width == 2 ? 4 : 1;
	tenths *= lanes;
	tree_attr(t, dir, "rate", "%u%s Gb/sec (%uX%s)\n", tenths / 10,
		  tenths % 10 ? ".5" : "", lanes, name);
}

static void make_ib_port(struct tree *t, const struct mana_emu_options *opts,
			 const struct emu_ibdev *d, unsigned int port)
{
	char dir[256], sub[512];

	snprintf(dir, sizeof(dir), IB_DIR "%s/ports/%u", d->name, port);
	tree_mkdir(t, dir);
	port_state_attrs(t, opts, dir, port);
	tree_attr(t, dir, "link_layer", "Ethernet\n");
	port_rate_attr(t, opts, dir);
	tree_attr(t, dir, "lid", "0x0\n");
	tree_attr(t, dir, "sm_lid", "0x0\n");
	tree_attr(t, dir, "lid_mask_count", "0\n");
	/* IB_PORT_CM_SUP on the RoCE port (query_port) */
	tree_attr(t, dir, "cap_mask", "0x%08x\n",
		  emu_ibdev_roce_port(d, port) &&
		  emu_era_get(opts->kernel)->port_cm_sup ? 1u << 16 : 0);
	snprintf(sub, sizeof(sub), "%s/pkeys", dir);
	tree_mkdir(t, sub);
	tree_attr(t, sub, "0", "0xffff\n");
	make_ib_gids(t, opts, d, port, dir);
}

static void make_ib_device(struct tree *t, const struct mana_emu_options *opts,
			   const struct emu_ibdev *d)
{
	char dir[256], rel[512], guid[32];
	unsigned int port;
	uint8_t mac[6];

	mana_emu_port_mac(opts, 1, mac);
	format_guid(emu_mac_to_guid(mac), guid, sizeof(guid));
	snprintf(dir, sizeof(dir), IB_DIR "%s", d->name);
	tree_mkdir(t, dir);
	tree_attr(t, dir, "node_type", "1: CA\n");
	tree_attr(t, dir, "node_guid", "%s\n", guid);
	tree_attr(t, dir, "sys_image_guid", "%s\n", guid);
	tree_attr(t, dir, "fw_ver", "%s\n", EMU_FW_VER_STR);
	tree_attr(t, dir, "node_desc", "mana-emu %s\n", d->name);
	snprintf(rel, sizeof(rel), "%s/device", dir);
	tree_link(t, rel, "../..");
	for (port = 1; port <= d->nports; port++)
		make_ib_port(t, opts, d, port);
	tree_mkdir(t, "class/infiniband");
	snprintf(rel, sizeof(rel), "class/infiniband/%s", d->name);
	snprintf(dir, sizeof(dir), "../../" IB_DIR "%s", d->name);
	tree_link(t, rel, dir);
}

static void make_uverbs_dev(struct tree *t, const struct emu_ibdev *d)
{
	char dir[256], rel[512], target[512];

	snprintf(dir, sizeof(dir), UVERBS_DIR "%u", d->index);
	tree_mkdir(t, dir);
	tree_attr(t, dir, "ibdev", "%s\n", d->name);
	tree_attr(t, dir, "dev", "%d:%d\n", EMU_UVERBS_MAJOR,
		  EMU_UVERBS_MINOR_BASE + d->index);
	tree_attr(t, dir, "abi_version", "%d\n", EMU_UVERBS_ABI);
	snprintf(rel, sizeof(rel), "%s/device", dir);
	tree_link(t, rel, "../..");
	snprintf(rel, sizeof(rel), "class/infiniband_verbs/uverbs%u", d->index);
	snprintf(target, sizeof(target), "../../%s", dir);
	tree_link(t, rel, target);
}

static void make_uverbs(struct tree *t, const struct mana_emu_options *opts)
{
	struct emu_ibdev d;
	unsigned int i;

	/* the class comes with ib_uverbs, the device with mana_ib */
	if (!mana_emu_module_loaded(opts, MANA_EMU_MOD_IB_UVERBS))
		return;
	tree_mkdir(t, "class/infiniband_verbs");
	tree_write(t, "class/infiniband_verbs/abi_version", "%d\n",
		   EMU_UVERBS_CLASS_ABI);
	/* rdma_ucm's misc device (librdmacm reads it without netlink) */
	tree_mkdir(t, "class/misc");
	tree_mkdir(t, "class/misc/rdma_cm");
	tree_write(t, "class/misc/rdma_cm/abi_version", "%d\n", EMU_UCMA_ABI);
	tree_write(t, "class/misc/rdma_cm/dev", "%d:%d\n", EMU_UCMA_MAJOR,
		   EMU_UCMA_MINOR);
	if (!mana_emu_has_uverbs(opts))
		return;
	for (i = 0; emu_ibdev_get(opts, i, &d); i++)
		make_uverbs_dev(t, &d);
}

/* /sys/module/NAME of a loaded module (initstate: loadable, not built in) */
static void make_modules(struct tree *t, const struct mana_emu_options *opts)
{
	static const struct {
		const char *name;
		unsigned int mod;	/* 0: always loaded */
	} mods[] = {
		{ "ib_core", 0 },
		{ "ib_uverbs", MANA_EMU_MOD_IB_UVERBS },
		{ "mana", MANA_EMU_MOD_MANA },
		{ "mana_ib", MANA_EMU_MOD_MANA_IB },
	};
	char dir[64];
	size_t i;

	for (i = 0; i < sizeof(mods) / sizeof(mods[0]); i++) {
		if (mods[i].mod && !mana_emu_module_loaded(opts, mods[i].mod))
			continue;
		snprintf(dir, sizeof(dir), "module/%s", mods[i].name);
		tree_mkdir(t, dir);
		tree_attr(t, dir, "initstate", "live\n");
		tree_attr(t, dir, "refcnt", "%d\n",
			  !strcmp(mods[i].name, "mana_ib") ? 0 : 1);
	}
}

/* Huge page pools: 2 MiB and 1 GiB, one NUMA node, all pages free. */
static void make_hugepages(struct tree *t, const struct mana_emu_options *opts)
{
	static const char *const files[] = { "nr_hugepages", "free_hugepages",
					     "surplus_hugepages" };
	static const unsigned int sizes_kb[] = { 2048, 1048576 };
	char dir[160];
	size_t s, f;
	int node;

	tree_mkdir(t, "devices/system/node");
	tree_write(t, "devices/system/node/online", "0\n");
	tree_write(t, "devices/system/node/possible", "0\n");
	for (s = 0; s < 2; s++) {
		unsigned int n = s ? 0 : opts->hugepages;

		for (node = -1; node < 1; node++) {
			if (node < 0)
				snprintf(dir, sizeof(dir),
					 "kernel/mm/hugepages/hugepages-%ukB",
					 sizes_kb[s]);
			else
				snprintf(dir, sizeof(dir),
					 "devices/system/node/node%d/hugepages/"
					 "hugepages-%ukB", node, sizes_kb[s]);
			tree_mkdir(t, dir);
			for (f = 0; f < 3; f++)
				tree_attr(t, dir, files[f], "%u\n",
					  f == 2 ? 0 : n);
			if (node < 0) {
				tree_attr(t, dir, "resv_hugepages", "0\n");
				tree_attr(t, dir, "nr_overcommit_hugepages",
					  "0\n");
			}
		}
	}
}

/*
 * Where trees go: $TMPDIR if set, else in memory like the real sysfs
 * (/dev/shm) when it is writable, else /tmp.  Every launch creates and
 * removes a few hundred entries; on a disk file system ext4's inode
 * allocation made that a tenth of the test suite's CPU time.
 */
static const char *tree_base(void)
{
	const char *dir = getenv("TMPDIR");

	if (dir && dir[0] == '/')
		return dir;
	if (!access("/dev/shm", W_OK | X_OK))
		return "/dev/shm";
	return "/tmp";
}

/*
 * DMI as Azure's VMs show it: Hyper-V's vendor and product and the
 * chassis asset tag Azure sets (mana-diag tells an Azure VM by it).
 */
static void make_dmi(struct tree *t)
{
	static const char dir[] = "devices/virtual/dmi/id";

	tree_mkdir(t, dir);
	tree_attr(t, dir, "sys_vendor", "Microsoft Corporation\n");
	tree_attr(t, dir, "product_name", "Virtual Machine\n");
	tree_attr(t, dir, "chassis_vendor", "Microsoft Corporation\n");
	tree_attr(t, dir, "chassis_asset_tag",
		  "7783-7084-3265-9085-8269-3286-77\n");
	tree_mkdir(t, "class/dmi");
	tree_link(t, "class/dmi/id", "../../devices/virtual/dmi/id");
}

/*
 * The run's interface state (core/netdev.h), shared by every process of
 * the run through this file (host/init.c maps it).
 */
static void make_netdev_table(struct tree *t,
			      const struct mana_emu_options *opts)
{
	struct emu_netdev_table tbl;
	char path[PATH_MAX];
	int fd;

	if (t->failed || tree_path(t, EMU_NETDEV_FILE, path))
		return;
	emu_netdev_table_init(&tbl, opts);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		tree_fail(t, "create", EMU_NETDEV_FILE);
		return;
	}
	if (write(fd, &tbl, sizeof(tbl)) != (ssize_t)sizeof(tbl))
		tree_fail(t, "write", EMU_NETDEV_FILE);
	close(fd);
}

struct emu_netdev_table *mana_emu_sysfs_netdev_map(const char *root)
{
	char path[PATH_MAX];
	struct stat st;
	void *p;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", root, EMU_NETDEV_FILE) >=
	    (int)sizeof(path))
		return NULL;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || st.st_size != sizeof(struct emu_netdev_table)) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, sizeof(struct emu_netdev_table), PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	if (((struct emu_netdev_table *)p)->magic != EMU_NETDEV_MAGIC) {
		munmap(p, sizeof(struct emu_netdev_table));
		return NULL;
	}
	return p;
}

static bool refresh_failed;

void mana_emu_sysfs_refresh(const char *root,
			    const struct mana_emu_options *opts)
{
	struct tree t = { .replace = true };
	char dir[256], err[256];
	struct emu_ibdev d;
	struct emu_link l;
	unsigned int i, port;

	t.err = err;
	t.errlen = sizeof(err);
	snprintf(t.root, sizeof(t.root), "%s", root);
	for (i = 1; emu_link_get(opts, i, &l); i++) {
		snprintf(dir, sizeof(dir), "class/net/%s", l.name);
		netdev_state_attrs(&t, dir, &l);
	}
	if (mana_emu_has_ibdev(opts))
		for (i = 0; emu_ibdev_get(opts, i, &d); i++)
			for (port = 1; port <= d.nports; port++) {
				snprintf(dir, sizeof(dir),
					 IB_DIR "%s/ports/%u", d.name, port);
				port_state_attrs(&t, opts, dir, port);
			}
	/* once: a tree gone for good would say it on every change */
	if (t.failed && !__atomic_exchange_n(&refresh_failed, true,
					     __ATOMIC_RELAXED))
		emu_log("%s (sysfs no longer follows the links)", err);
}

int mana_emu_sysfs_create(const struct mana_emu_options *opts, char *root,
			  char *err, size_t errlen)
{
	struct tree t = { .err = err, .errlen = errlen };
	unsigned int port, i;
	struct emu_ibdev d;

	if (snprintf(t.root, sizeof(t.root), "%s/%s", tree_base(),
		     TREE_NAME) >= (int)sizeof(t.root)) {
		snprintf(err, errlen, "sysfs tree: $TMPDIR is too long");
		return -1;
	}
	if (!mkdtemp(t.root)) {
		snprintf(err, errlen, "sysfs tree: mkdtemp %s: %s", t.root,
			 strerror(errno));
		return -1;
	}
	/* sysfs is world readable; mkdtemp made the root 0700. */
	chmod(t.root, 0755);
	if (!opts->no_device)
		make_pci_function(&t, opts);
	tree_mkdir(&t, "class/net");
	for (port = 1; port <= opts->ports; port++) {
		make_synthetic(&t, opts, port);
		make_netdev(&t, opts, port);
	}
	if (mana_emu_has_ibdev(opts))
		for (i = 0; emu_ibdev_get(opts, i, &d); i++)
			make_ib_device(&t, opts, &d);
	make_uverbs(&t, opts);
	make_modules(&t, opts);
	make_hugepages(&t, opts);
	make_dmi(&t);
	make_netdev_table(&t, opts);
	if (t.failed) {
		mana_emu_sysfs_remove(t.root);
		return -1;
	}
	snprintf(root, PATH_MAX, "%s", t.root);
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	if (remove(path) && errno != ENOENT)
		return -1;
	return 0;
}

int mana_emu_sysfs_remove(const char *root)
{
	const char *name = strrchr(root, '/');

	/* Only ever delete a tree of our own making: /.../mana-emu.XXXXXX */
	if (root[0] != '/' || !name || strlen(name + 1) != strlen(TREE_NAME) ||
	    strncmp(name + 1, TREE_NAME, strlen(TREE_NAME) - 6)) {
		errno = EINVAL;
		return -1;
	}
	return nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
