// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Checks that read sysfs ($SYSFS_PATH, as libibverbs does), /dev and
 * /proc: the PCI functions, the kernel and its modules, the RDMA devices
 * with their uverbs nodes, and huge pages.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <rdma/mana-abi.h>

#include "diag.h"

#define MOUNTS "/proc/mounts"

int sysfs_read(const struct diag *d, const char *rel, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", d->sysfs, rel) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static bool sysfs_isdir(const struct diag *d, const char *rel)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", d->sysfs, rel);
	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

static DIR *sysfs_opendir(const struct diag *d, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", d->sysfs, rel);
	return opendir(path);
}

static long sysfs_long(const struct diag *d, const char *rel, long dflt)
{
	char buf[64];

	if (sysfs_read(d, rel, buf, sizeof(buf)))
		return dflt;
	return strtol(buf, NULL, 0);
}

/* ---- 1. PCI functions ------------------------------------------------------ */

static bool mana_pci_id(unsigned long vendor, unsigned long device)
{
	return vendor == MANA_PCI_VENDOR_ID &&
	       (device == MANA_PCI_DEVICE_VF || device == MANA_PCI_DEVICE_PF ||
		device == MANA_PCI_DEVICE_PF2);
}

static void read_driver(const struct diag *d, struct diag_func *f)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/driver", d->sysfs,
		 f->bdf);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = 0;
	base = strrchr(target, '/');
	snprintf(f->driver, sizeof(f->driver), "%s", base ? base + 1 : target);
}

static void scan_modules(struct diag *d)
{
	d->mod_mana = sysfs_isdir(d, "module/mana");
	d->mod_mana_ib = sysfs_isdir(d, "module/mana_ib");
	d->mod_ib_uverbs = sysfs_isdir(d, "module/ib_uverbs");
}

static void scan_pci(struct diag *d)
{
	DIR *dir = sysfs_opendir(d, "bus/pci/devices");
	struct dirent *e;
	char rel[PATH_MAX], buf[32];

	while (dir && (e = readdir(dir)) && d->nfuncs < DIAG_MAX_FUNCS) {
		struct diag_func *f = &d->funcs[d->nfuncs];
		unsigned long vendor, device;

		if (e->d_name[0] == '.')
			continue;
		snprintf(rel, sizeof(rel), "bus/pci/devices/%s/vendor", e->d_name);
		if (sysfs_read(d, rel, buf, sizeof(buf)))
			continue;
		vendor = strtoul(buf, NULL, 16);
		snprintf(rel, sizeof(rel), "bus/pci/devices/%s/device", e->d_name);
		if (sysfs_read(d, rel, buf, sizeof(buf)))
			continue;
		device = strtoul(buf, NULL, 16);
		if (!mana_pci_id(vendor, device))
			continue;
		memset(f, 0, sizeof(*f));
		snprintf(f->bdf, sizeof(f->bdf), "%s", e->d_name);
		f->device = device;
		read_driver(d, f);
		d->nfuncs++;
	}
	if (dir)
		closedir(dir);
}

/*
 * Azure's VMs are Hyper-V guests (VMBus) and say so in DMI: the vendor and
 * the chassis asset tag Azure sets.  Either one means MANA could be here.
 */
#define AZURE_SYS_VENDOR "Microsoft Corporation"
#define AZURE_ASSET_TAG "7783-7084-3265-9085-8269-3286-77"

static bool check_platform(const struct diag *d, struct result *r,
			   char *vendor, size_t vlen)
{
	char tag[64];
	bool vmbus = sysfs_isdir(d, "bus/vmbus");
	bool have_vendor = !sysfs_read(d, "class/dmi/id/sys_vendor", vendor, vlen);
	bool have_tag = !sysfs_read(d, "class/dmi/id/chassis_asset_tag", tag,
				    sizeof(tag));
	bool azure_dmi = have_vendor && have_tag &&
			 !strcmp(vendor, AZURE_SYS_VENDOR) &&
			 !strcmp(tag, AZURE_ASSET_TAG);

	if (!have_vendor)
		vendor[0] = 0;
	js_bool(&r->data, "vmbus", vmbus);
	js_str(&r->data, "sys_vendor", have_vendor ? vendor : NULL);
	js_str(&r->data, "chassis_asset_tag", have_tag ? tag : NULL);
	js_bool(&r->data, "azure_dmi", azure_dmi);
	return vmbus || azure_dmi;
}

void check_pci(struct diag *d)
{
	struct result *r = result_add("pci", NULL);
	struct sbuf list = { 0 };
	char vendor[128];
	unsigned int i;
	bool azure;

	scan_modules(d);
	scan_pci(d);
	azure = check_platform(d, r, vendor, sizeof(vendor));
	for (i = 0; i < d->nfuncs; i++) {
		struct diag_func *f = &d->funcs[i];
		struct sbuf one = { 0 };
		char id[16];

		snprintf(id, sizeof(id), "%04x", f->device);
		js_str(&one, "bdf", f->bdf);
		js_str(&one, "vendor", "1414");
		js_str(&one, "device", id);
		js_str(&one, "driver", f->driver[0] ? f->driver : NULL);
		sb_printf(&list, "%s{%s}", i ? ", " : "", one.s);
		sb_free(&one);
	}
	js_array(&r->data, "functions", &list);
	sb_free(&list);

	if (!d->nfuncs && !azure) {
		js_str(&r->data, "cause", "not_azure");
		result_set(r, V_FAIL, "not an Azure VM: no VMBus (%s/bus/vmbus "
			   "absent) and no Azure DMI (sys_vendor %s%s%s), so no "
			   "MANA PCI function: MANA exists only on Azure VMs",
			   d->sysfs, vendor[0] ? "'" : "", vendor[0] ? vendor :
			   "unreadable", vendor[0] ? "'" : "");
		result_fix(r, "run this on an Azure VM whose size offers "
			   "Accelerated Networking (MANA); mana-emu emulates "
			   "one for tests");
		return;
	}
	js_str(&r->data, "cause", d->nfuncs ? NULL : "accelnet_off");
	if (!d->nfuncs) {
		result_set(r, V_FAIL, "no MANA PCI function (1414:00ba, 00b9, 00c1) "
			   "in %s/bus/pci/devices: Accelerated Networking is off",
			   d->sysfs);
		result_fix(r, "enable Accelerated Networking on the VM's network "
			   "interfaces (az network nic update --accelerated-networking "
			   "true, with the VM deallocated) on a VM size that offers it, "
			   "then start the VM again");
		return;
	}
	result_set(r, V_OK, "%u MANA function%s:", d->nfuncs,
		   d->nfuncs > 1 ? "s" : "");
	for (i = 0; i < d->nfuncs; i++) {
		struct diag_func *f = &d->funcs[i];

		sb_printf(&r->msg, " %s (1414:%04x) driver %s", f->bdf,
			  f->device, f->driver[0] ? f->driver : "none");
		if (!f->driver[0]) {
			r->verdict = V_FAIL;
			if (d->mod_mana)
				result_fix(r, "echo %s | sudo tee "
					   "/sys/bus/pci/drivers/mana/bind", f->bdf);
			else
				result_fix(r, "sudo modprobe mana");
		} else if (strcmp(f->driver, "mana")) {
			r->verdict = V_FAIL;
			result_fix(r, "echo %s | sudo tee /sys/bus/pci/drivers/%s/"
				   "unbind; echo %s | sudo tee "
				   "/sys/bus/pci/drivers/mana/bind", f->bdf,
				   f->driver, f->bdf);
		}
	}
}

/* ---- 2. kernel and modules ------------------------------------------------- */

/* mana_ib came with 6.2; older kernels only have it as a backport. */
static bool kernel_before_6_2(const char *release)
{
	unsigned int major = 0, minor = 0;

	if (sscanf(release, "%u.%u", &major, &minor) != 2)
		return false;
	return major < 6 || (major == 6 && minor < 2);
}

void check_kernel(struct diag *d)
{
	struct result *r = result_add("kernel", NULL);
	struct sbuf missing = { 0 };
	struct utsname u;

	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "unknown");
	js_str(&r->data, "release", u.release);
	js_bool(&r->data, "mana", d->mod_mana);
	js_bool(&r->data, "mana_ib", d->mod_mana_ib);
	js_bool(&r->data, "ib_uverbs", d->mod_ib_uverbs);
	if (!d->mod_mana)
		sb_printf(&missing, " mana");
	if (!d->mod_mana_ib)
		sb_printf(&missing, " mana_ib");
	if (!d->mod_ib_uverbs)
		sb_printf(&missing, " ib_uverbs");
	if (!missing.len) {
		result_set(r, V_OK, "Linux %s; modules mana, mana_ib, ib_uverbs "
			   "loaded", u.release);
		return;
	}
	if (!d->nfuncs) {
		result_set(r, V_SKIP, "Linux %s; not loaded:%s (nothing to drive "
			   "without a MANA function)", u.release, missing.s);
		sb_free(&missing);
		return;
	}
	result_set(r, V_FAIL, "Linux %s; not loaded:%s", u.release, missing.s);
	result_fix(r, "sudo modprobe -a%s", missing.s);
	if (kernel_before_6_2(u.release))
		result_fix(r, "Linux %s predates mana_ib (6.2): install a kernel "
			   "that has it (e.g. linux-azure)", u.release);
	sb_free(&missing);
}

/* ---- 3. RDMA devices and uverbs nodes --------------------------------------- */

/* The uverbsN of @ibdev under the PCI function, "" if none. */
static void find_uverbs(const struct diag *d, struct diag_dev *dev)
{
	char rel[PATH_MAX], name[DIAG_NAME];
	struct dirent *e;
	DIR *dir;

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/infiniband_verbs", dev->bdf);
	dir = sysfs_opendir(d, rel);
	while (dir && (e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(rel, sizeof(rel), "bus/pci/devices/%s/infiniband_verbs/%s/ibdev",
			 dev->bdf, e->d_name);
		if (!sysfs_read(d, rel, name, sizeof(name)) &&
		    !strcmp(name, dev->name)) {
			snprintf(dev->uverbs, sizeof(dev->uverbs), "%s", e->d_name);
			break;
		}
	}
	if (dir)
		closedir(dir);
}

static unsigned int scan_ibdevs(struct diag *d, const char *bdf)
{
	char rel[PATH_MAX];
	struct dirent *e;
	unsigned int n = 0;
	DIR *dir;

	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/infiniband", bdf);
	dir = sysfs_opendir(d, rel);
	while (dir && (e = readdir(dir)) && d->ndevs < DIAG_MAX_DEVS) {
		struct diag_dev *dev = &d->devs[d->ndevs];

		if (e->d_name[0] == '.')
			continue;
		memset(dev, 0, sizeof(*dev));
		snprintf(dev->name, sizeof(dev->name), "%s", e->d_name);
		snprintf(dev->bdf, sizeof(dev->bdf), "%s", bdf);
		dev->driver_id = -1;
		find_uverbs(d, dev);
		d->ndevs++;
		n++;
	}
	if (dir)
		closedir(dir);
	return n;
}

static void mode_string(mode_t m, char *s)
{
	static const char rwx[] = "rwxrwxrwx";
	int i;

	s[0] = S_ISCHR(m) ? 'c' : S_ISDIR(m) ? 'd' : '-';
	for (i = 0; i < 9; i++)
		s[i + 1] = (m & (0400 >> i)) ? rwx[i] : '-';
	s[10] = 0;
}

static void check_node(struct diag *d, struct diag_dev *dev, struct result *r)
{
	char path[PATH_MAX], rel[PATH_MAX], devnum[32], mode[12], octal[8];
	unsigned int major = 0, minor = 0;
	struct stat st;

	snprintf(path, sizeof(path), "/dev/infiniband/%s", dev->uverbs);
	js_str(&r->data, "node", path);
	snprintf(rel, sizeof(rel), "bus/pci/devices/%s/infiniband_verbs/%s/dev",
		 dev->bdf, dev->uverbs);
	if (!sysfs_read(d, rel, devnum, sizeof(devnum)))
		sscanf(devnum, "%u:%u", &major, &minor);
	if (stat(path, &st)) {
		js_null(&r->data, "mode");
		js_bool(&r->data, "access", false);
		result_set(r, V_FAIL, "on %s: %s missing (%s)", dev->bdf, path,
			   strerror(errno));
		result_fix(r, "let udev create it (sudo udevadm trigger "
			   "--subsystem-match=infiniband_verbs); in a container pass "
			   "it in (docker run --device=%s)", path);
		return;
	}
	mode_string(st.st_mode, mode);
	snprintf(octal, sizeof(octal), "%04o", st.st_mode & 07777);
	js_str(&r->data, "mode", octal);
	if (!S_ISCHR(st.st_mode) || (major && (major(st.st_rdev) != major ||
					       minor(st.st_rdev) != minor))) {
		js_bool(&r->data, "access", false);
		result_set(r, V_FAIL, "on %s: %s is %s %u:%u, the kernel's is "
			   "%u:%u", dev->bdf, path, mode,
			   major(st.st_rdev), minor(st.st_rdev), major, minor);
		result_fix(r, "sudo rm %s && sudo udevadm trigger "
			   "--subsystem-match=infiniband_verbs", path);
		return;
	}
	if (faccessat(AT_FDCWD, path, R_OK | W_OK, AT_EACCESS)) {
		js_bool(&r->data, "access", false);
		result_set(r, V_FAIL, "on %s: uid %u cannot open %s (%s, uid %u "
			   "gid %u): %s", dev->bdf, geteuid(), path,
			   mode, st.st_uid, st.st_gid, strerror(errno));
		result_fix(r, "run as root, or give access: sudo chmod 0666 %s "
			   "(to keep it, a udev rule KERNEL==\"uverbs*\", "
			   "MODE=\"0666\")", path);
		return;
	}
	js_bool(&r->data, "access", true);
	dev->node_ok = true;
	result_set(r, V_OK, "on %s: %s (%u:%u, %s) read/write", dev->bdf,
		   path, major, minor, mode);
}

void check_rdma_devices(struct diag *d)
{
	unsigned int i;

	if (!d->nfuncs) {
		result_set(result_add("rdma", NULL), V_SKIP,
			   "no MANA PCI function");
		return;
	}
	for (i = 0; i < d->nfuncs; i++) {
		struct result *r;

		if (scan_ibdevs(d, d->funcs[i].bdf))
			continue;
		r = result_add("rdma", d->funcs[i].bdf);
		js_null(&r->data, "ibdev");
		result_set(r, V_FAIL, "no RDMA device on this function");
		if (!d->mod_mana || !d->mod_mana_ib)
			result_fix(r, "sudo modprobe mana_ib");
		else
			result_fix(r, "mana_ib did not take the function: see "
				   "sudo dmesg | grep -i mana");
	}
	for (i = 0; i < d->ndevs; i++) {
		struct diag_dev *dev = &d->devs[i];
		struct result *r = result_add("rdma", dev->name);

		js_str(&r->data, "ibdev", dev->name);
		js_str(&r->data, "bdf", dev->bdf);
		js_str(&r->data, "uverbs", dev->uverbs[0] ? dev->uverbs : NULL);
		if (!dev->uverbs[0]) {
			result_set(r, V_FAIL, "on %s: no uverbs char device",
				   dev->bdf);
			result_fix(r, "sudo modprobe ib_uverbs");
			continue;
		}
		check_node(d, dev, r);
	}
}

/* ---- 7. huge pages ------------------------------------------------------------ */

struct hp_size {
	unsigned long kb;
	long total, free;
	struct sbuf nodes;	/* JSON objects */
	struct sbuf text;
};

static int hp_cmp(const void *a, const void *b)
{
	const struct hp_size *x = a, *y = b;

	return (x->kb > y->kb) - (x->kb < y->kb);
}

static int hp_sizes(const struct diag *d, struct hp_size *sizes, int max)
{
	DIR *dir = sysfs_opendir(d, "kernel/mm/hugepages");
	char rel[PATH_MAX];
	struct dirent *e;
	int n = 0;

	while (dir && (e = readdir(dir)) && n < max) {
		unsigned long kb;

		if (sscanf(e->d_name, "hugepages-%lukB", &kb) != 1)
			continue;
		memset(&sizes[n], 0, sizeof(sizes[n]));
		sizes[n].kb = kb;
		snprintf(rel, sizeof(rel), "kernel/mm/hugepages/%s/nr_hugepages",
			 e->d_name);
		sizes[n].total = sysfs_long(d, rel, 0);
		snprintf(rel, sizeof(rel), "kernel/mm/hugepages/%s/free_hugepages",
			 e->d_name);
		sizes[n].free = sysfs_long(d, rel, 0);
		n++;
	}
	if (dir)
		closedir(dir);
	qsort(sizes, n, sizeof(*sizes), hp_cmp);
	return n;
}

static void hp_nodes(const struct diag *d, struct hp_size *s)
{
	DIR *dir = sysfs_opendir(d, "devices/system/node");
	char rel[PATH_MAX];
	struct dirent *e;
	unsigned int node;

	while (dir && (e = readdir(dir))) {
		struct sbuf one = { 0 };
		long total, free_pages;

		if (sscanf(e->d_name, "node%u", &node) != 1)
			continue;
		snprintf(rel, sizeof(rel), "devices/system/node/%s/hugepages/"
			 "hugepages-%lukB/nr_hugepages", e->d_name, s->kb);
		total = sysfs_long(d, rel, -1);
		if (total < 0)
			continue;
		snprintf(rel, sizeof(rel), "devices/system/node/%s/hugepages/"
			 "hugepages-%lukB/free_hugepages", e->d_name, s->kb);
		free_pages = sysfs_long(d, rel, 0);
		js_int(&one, "node", node);
		js_int(&one, "total", total);
		js_int(&one, "free", free_pages);
		sb_printf(&s->nodes, "%s{%s}", s->nodes.len ? ", " : "", one.s);
		sb_printf(&s->text, " node%u %ld", node, total);
		sb_free(&one);
	}
	if (dir)
		closedir(dir);
}

/* hugetlbfs mounts, as DPDK finds them in the mount table */
static int hp_mounts(struct sbuf *json, struct sbuf *text)
{
	FILE *f = setmntent(MOUNTS, "r");
	struct mntent *m;
	int n = 0;

	while (f && (m = getmntent(f))) {
		struct sbuf one = { 0 };
		char *ps;

		if (strcmp(m->mnt_type, "hugetlbfs"))
			continue;
		ps = hasmntopt(m, "pagesize");
		js_str(&one, "path", m->mnt_dir);
		if (ps) {
			ps += strlen("pagesize=");
			ps[strcspn(ps, ",")] = 0;
		}
		js_str(&one, "pagesize", ps);
		sb_printf(json, "%s{%s}", n ? ", " : "", one.s);
		sb_printf(text, "%s%s", n ? ", " : "", m->mnt_dir);
		sb_free(&one);
		n++;
	}
	if (f)
		endmntent(f);
	return n;
}

void check_hugepages(struct diag *d)
{
	struct result *r = result_add("hugepages", NULL);
	struct sbuf sizes_json = { 0 }, mounts_json = { 0 }, mounts = { 0 };
	struct hp_size sizes[8];
	long total = 0, free_pages = 0;
	int n, i, nmounts;

	n = hp_sizes(d, sizes, 8);
	result_set(r, V_OK, "%s", "");
	for (i = 0; i < n; i++) {
		struct sbuf one = { 0 };

		hp_nodes(d, &sizes[i]);
		js_int(&one, "size_kb", sizes[i].kb);
		js_int(&one, "total", sizes[i].total);
		js_int(&one, "free", sizes[i].free);
		js_array(&one, "nodes", &sizes[i].nodes);
		sb_printf(&sizes_json, "%s{%s}", i ? ", " : "", one.s);
		sb_printf(&r->msg, "%s%lukB: %ld (%ld free;%s)", i ? ", " : "",
			  sizes[i].kb, sizes[i].total, sizes[i].free,
			  sizes[i].text.s ? sizes[i].text.s : " no NUMA nodes");
		total += sizes[i].total;
		free_pages += sizes[i].free;
		sb_free(&one);
		sb_free(&sizes[i].nodes);
		sb_free(&sizes[i].text);
	}
	js_array(&r->data, "sizes", &sizes_json);
	nmounts = hp_mounts(&mounts_json, &mounts);
	js_array(&r->data, "hugetlbfs", &mounts_json);
	if (!n)
		sb_printf(&r->msg, "no huge page support in %s/kernel/mm/hugepages",
			  d->sysfs);
	sb_printf(&r->msg, "; hugetlbfs: %s", nmounts ? mounts.s : "not mounted");

	if (!total) {
		r->verdict = V_FAIL;
		sb_printf(&r->msg, "; no huge pages reserved for DPDK");
		result_fix(r, "echo 1024 | sudo tee /sys/kernel/mm/hugepages/"
			   "hugepages-2048kB/nr_hugepages (per NUMA node: /sys/"
			   "devices/system/node/nodeN/hugepages/hugepages-2048kB/"
			   "nr_hugepages), or run DPDK with --no-huge");
	} else if (!free_pages) {
		r->verdict = V_WARN;
		sb_printf(&r->msg, "; every huge page is in use");
		result_fix(r, "reserve more pages or stop what holds them");
	}
	if (!nmounts) {
		if (r->verdict == V_OK)
			r->verdict = V_WARN;
		result_fix(r, "sudo mount -t hugetlbfs nodev /dev/hugepages "
			   "(DPDK needs a hugetlbfs mount unless run with "
			   "--in-memory or --no-huge)");
	}
	sb_free(&sizes_json);
	sb_free(&mounts_json);
	sb_free(&mounts);
}
