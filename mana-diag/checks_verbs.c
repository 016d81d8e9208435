// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What libibverbs makes of the devices in this process: which provider
 * it bound each one to (asked of libibverbs itself, through the private
 * ABI 34 layout of struct verbs_device), its version and private ABI, the
 * provider configuration it reads, and the optional live probe.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include "libibverbs/driver.h"

#include "diag.h"

#define CONFIG_DIR "/etc/libibverbs.d"	/* compiled into libibverbs */
#define MAX_DRIVERS 64

static int pabi = -1;		/* libibverbs' private ABI, -1 unknown */
/* libmana.so.1 was in the process before libibverbs loaded anything */
static bool libmana_preloaded;

/* The IBVERBS_PRIVATE_N that libibverbs exports. */
static int find_pabi(void)
{
	char sym[64], ver[64];
	int n;

	for (n = 20; n < 100; n++) {
		snprintf(sym, sizeof(sym), "verbs_register_driver_%d", n);
		snprintf(ver, sizeof(ver), "IBVERBS_PRIVATE_%d", n);
		if (dlvsym(RTLD_DEFAULT, sym, ver))
			return n;
	}
	return -1;
}

static void real_path_of(const void *addr, char *out, size_t len)
{
	char buf[PATH_MAX];
	Dl_info info;

	out[0] = 0;
	if (!dladdr(addr, &info) || !info.dli_fname)
		return;
	snprintf(out, len, "%s", realpath(info.dli_fname, buf) ? buf :
		 info.dli_fname);
}

/*
 * rdma-core's libmana matches only RDMA_DRIVER_MANA from its table; a
 * provider with a match_device hook decides by PCI identity too, which
 * is how this project's libmana binds devices with another driver id.
 */
static void classify(const struct verbs_device_ops *ops, char *out, size_t len)
{
	if (!strcmp(ops->name, "mana"))
		snprintf(out, len, "%s", ops->match_device ? "ours" : "rdma-core");
	else
		snprintf(out, len, "%s", ops->name);
}

void verbs_scan(struct diag *d)
{
	struct ibv_device **list;
	int i, n;

	void *h = dlopen("libmana.so.1", RTLD_LAZY | RTLD_NOLOAD);

	if (h) {
		libmana_preloaded = true;
		dlclose(h);
	}
	pabi = find_pabi();
	list = ibv_get_device_list(&n);
	if (!list)
		return;
	for (i = 0; i < n; i++) {
		const char *name = ibv_get_device_name(list[i]);
		struct diag_dev *dev = NULL;
		unsigned int k;

		for (k = 0; k < d->ndevs; k++)
			if (!strcmp(d->devs[k].name, name))
				dev = &d->devs[k];
		if (!dev)
			continue;
		dev->listed = true;
		/* the layout is known only for the ABI we are built against */
		if (pabi == IBVERBS_PABI_VERSION) {
			const struct verbs_device_ops *ops =
				verbs_get_device(list[i])->ops;

			classify(ops, dev->provider, sizeof(dev->provider));
			real_path_of(ops, dev->provider_path,
				     sizeof(dev->provider_path));
		}
	}
	ibv_free_device_list(list);
}

/* ---- 4. driver id and binding ------------------------------------------------ */

static const char *id_name(int id)
{
	switch (id) {
	case DIAG_MANA_DRIVER_ID: return "RDMA_DRIVER_MANA";
	case DIAG_ERDMA_DRIVER_ID: return "RDMA_DRIVER_ERDMA in rdma-core's numbering";
	case 0: return "RDMA_DRIVER_UNKNOWN";
	default: return "not MANA's";
	}
}

#define FIX_OURS "install this project's libmana, which binds MANA by PCI " \
	"identity whatever the driver id (see the README: Install on an Azure VM)"

static void unbound(const struct diag *d, const struct diag_dev *dev,
		    struct result *r)
{
	if (!d->netlink) {
		result_set(r, V_FAIL, "no RDMA netlink (%s): libibverbs found %s "
			   "through sysfs (driver id 0) and no provider binds it; "
			   "rdma-core's libmana matches only driver id %d from "
			   "netlink", strerror(d->netlink_err), dev->name,
			   DIAG_MANA_DRIVER_ID);
		result_fix(r, FIX_OURS);
	} else if (dev->driver_id != DIAG_MANA_DRIVER_ID) {
		result_set(r, V_FAIL, "the kernel reports driver id %d (%s), "
			   "rdma-core's libmana expects %d: no provider binds %s",
			   dev->driver_id, id_name(dev->driver_id),
			   DIAG_MANA_DRIVER_ID, dev->name);
		result_fix(r, FIX_OURS);
	} else {
		result_set(r, V_FAIL, "driver id %d, but no installed provider "
			   "binds %s", dev->driver_id, dev->name);
		result_fix(r, "sudo apt install ibverbs-providers (rdma-core 44 "
			   "or later has libmana), or " FIX_OURS);
	}
}

static void bound(const struct diag *d, const struct diag_dev *dev,
		  struct result *r)
{
	const char *path = dev->provider_path[0] ? dev->provider_path : "?";

	if (!strcmp(dev->provider, "ours")) {
		if (!d->netlink)
			result_set(r, V_WARN, "no RDMA netlink (%s): found through "
				   "sysfs (driver id 0); rdma-core's libmana could "
				   "not bind %s, this project's libmana does (%s)",
				   strerror(d->netlink_err), dev->name, path);
		else if (dev->driver_id != DIAG_MANA_DRIVER_ID)
			result_set(r, V_WARN, "the kernel reports driver id %d "
				   "(%s), rdma-core's libmana expects %d and erdma "
				   "would claim %d; this project's libmana binds %s "
				   "(%s)", dev->driver_id, id_name(dev->driver_id),
				   DIAG_MANA_DRIVER_ID, DIAG_ERDMA_DRIVER_ID,
				   dev->name, path);
		else
			result_set(r, V_OK, "driver id %d (%s); %s bound by this "
				   "project's libmana (%s)", dev->driver_id,
				   id_name(dev->driver_id), dev->name, path);
		return;
	}
	if (!strcmp(dev->provider, "rdma-core") &&
	    dev->driver_id == DIAG_MANA_DRIVER_ID) {
		result_set(r, V_OK, "driver id %d (%s); %s bound by rdma-core's "
			   "libmana (%s)", dev->driver_id, id_name(dev->driver_id),
			   dev->name, path);
		return;
	}
	if (!strcmp(dev->provider, "erdma"))
		result_set(r, V_FAIL, "driver id mismatch: the kernel reports %d "
			   "(%s), rdma-core's libmana expects %d, so libibverbs "
			   "binds %s to the erdma provider (%s), which cannot drive "
			   "MANA", dev->driver_id, id_name(dev->driver_id),
			   DIAG_MANA_DRIVER_ID, dev->name, path);
	else
		result_set(r, V_FAIL, "driver id %d: %s is bound to the %s "
			   "provider (%s), not a MANA one", dev->driver_id,
			   dev->name, dev->provider, path);
	result_fix(r, FIX_OURS "; or boot a kernel that reports driver id %d",
		   DIAG_MANA_DRIVER_ID);
}

void check_driver_id(struct diag *d)
{
	unsigned int i;

	if (!d->ndevs) {
		result_set(result_add("driver_id", NULL), V_SKIP, "no RDMA device");
		return;
	}
	for (i = 0; i < d->ndevs; i++) {
		struct diag_dev *dev = &d->devs[i];
		struct result *r = result_add("driver_id", dev->name);

		js_bool(&r->data, "netlink", d->netlink);
		if (d->netlink && dev->driver_id >= 0)
			js_int(&r->data, "driver_id", dev->driver_id);
		else
			js_null(&r->data, "driver_id");
		js_int(&r->data, "expected", DIAG_MANA_DRIVER_ID);
		js_str(&r->data, "provider", dev->listed && dev->provider[0] ?
			dev->provider : NULL);
		js_str(&r->data, "provider_path", dev->provider_path[0] ?
			dev->provider_path : NULL);
		if (!dev->uverbs[0]) {
			result_set(r, V_SKIP, "no uverbs device: libibverbs cannot "
				   "list %s", dev->name);
			continue;
		}
		if (!dev->listed)
			unbound(d, dev, r);
		else if (!dev->provider[0])
			result_set(r, V_WARN, "%s is bound, but libibverbs' private "
				   "ABI (%d) is not %d: cannot tell by which provider",
				   dev->name, pabi, IBVERBS_PABI_VERSION);
		else
			bound(d, dev, r);
	}
}

/* ---- 5. libibverbs and its provider configuration ----------------------------- */

struct config {
	char names[MAX_DRIVERS][DIAG_NAME];
	int n;
	struct sbuf dups;
};

static void read_config_file(const char *path, struct config *c)
{
	char line[256], name[DIAG_NAME];
	FILE *f = fopen(path, "r");
	int i;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, " driver %63s", name) != 1)
			continue;
		for (i = 0; i < c->n; i++)
			if (!strcmp(c->names[i], name))
				sb_printf(&c->dups, "%s%s", c->dups.len ? ", " : "",
					  name);
		if (c->n < MAX_DRIVERS)
			snprintf(c->names[c->n++], DIAG_NAME, "%s", name);
	}
	if (f)
		fclose(f);
}

/* Every regular file, in directory order, as libibverbs reads them. */
static void read_config(struct config *c)
{
	char path[PATH_MAX];
	struct dirent *e;
	struct stat st;
	DIR *dir = opendir(CONFIG_DIR);

	while (dir && (e = readdir(dir))) {
		snprintf(path, sizeof(path), "%s/%s", CONFIG_DIR, e->d_name);
		if (!stat(path, &st) && S_ISREG(st.st_mode))
			read_config_file(path, c);
	}
	if (dir)
		closedir(dir);
}

static bool config_has(const struct config *c, const char *name)
{
	int i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->names[i], name))
			return true;
	return false;
}

/* rdma-core's file names libibverbs.so.1.<abi>.<package version> */
static void ibverbs_version(char *out, size_t len, char *path, size_t plen)
{
	const char *base, *v;

	real_path_of((const void *)ibv_get_device_list, path, plen);
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	v = strncmp(base, "libibverbs.so.1.", 16) ? NULL : strchr(base + 16, '.');
	snprintf(out, len, "%s", v ? v + 1 : "unknown");
}

/*
 * A sanitized libmana.so.1 brings its own copy of the ASan runtime into a
 * new namespace, which dies at once ("ASan runtime does not come first"):
 * a sanitized mana-diag (the tests' build) takes the libmana already
 * loaded, libibverbs' provider of the same soname, or none.
 */
#if defined(__SANITIZE_ADDRESS__)
#define OWN_NAMESPACE 0
#else
#define OWN_NAMESPACE 1
#endif

/*
 * The libmana.so.1 a program linked with it (DPDK) loads: the preloaded
 * one, else what the search path gives.  That is looked up in a namespace
 * of its own, because here the name already matches any libmana
 * libibverbs loaded (same soname), and because its constructor registers
 * a provider, which must not join this process's libibverbs (and be
 * unloaded under it again).
 */
static void libmana_so(char *path, size_t len)
{
	void *h, *sym;

	path[0] = 0;
	if (libmana_preloaded || !OWN_NAMESPACE)
		h = dlopen("libmana.so.1", RTLD_LAZY | RTLD_NOLOAD);
	else
		h = dlmopen(LM_ID_NEWLM, "libmana.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return;
	sym = dlsym(h, "manadv_init_obj");
	if (sym)
		real_path_of(sym, path, len);
	dlclose(h);
}

void check_libibverbs(struct diag *d)
{
	struct result *r = result_add("libibverbs", NULL);
	char version[64], lib[PATH_MAX], dv[PATH_MAX], cfg_lib[PATH_MAX];
	char buf[PATH_MAX];
	struct config c = { .n = 0 };
	struct sbuf names = { 0 };
	bool preloaded = libmana_preloaded;
	int i;

	ibverbs_version(version, sizeof(version), lib, sizeof(lib));
	read_config(&c);
	snprintf(buf, sizeof(buf), "%s/libmana-rdmav%d.so", VERBS_PROVIDER_DIR,
		 IBVERBS_PABI_VERSION);
	if (!realpath(buf, cfg_lib))
		cfg_lib[0] = 0;
	libmana_so(dv, sizeof(dv));
	for (i = 0; i < c.n; i++) {
		sb_printf(&names, "%s", i ? ", " : "");
		js_quote(&names, c.names[i]);
	}
	js_str(&r->data, "version", version);
	js_str(&r->data, "library", lib);
	if (pabi >= 0)
		js_int(&r->data, "private_abi", pabi);
	else
		js_null(&r->data, "private_abi");
	js_str(&r->data, "config_dir", CONFIG_DIR);
	js_array(&r->data, "drivers", &names);
	js_bool(&r->data, "erdma", config_has(&c, "erdma"));
	js_str(&r->data, "mana_provider", config_has(&c, "mana") && cfg_lib[0] ?
		cfg_lib : NULL);
	js_str(&r->data, "libmana_so", dv[0] ? dv : NULL);
	js_bool(&r->data, "libmana_preloaded", preloaded);
	sb_free(&names);

	result_set(r, V_OK, "rdma-core %s (%s), private ABI %d; %d provider%s in "
		   "%s%s", version, lib, pabi, c.n, c.n == 1 ? "" : "s", CONFIG_DIR,
		   config_has(&c, "erdma") ? ", erdma among them (claims driver id 19)" :
		   "");
	if (preloaded && dv[0])
		sb_printf(&r->msg, "; libmana.so.1 already loaded: %s (registered "
			  "first)", dv);
	if (pabi != IBVERBS_PABI_VERSION) {
		r->verdict = V_WARN;
		sb_printf(&r->msg, "; this project's libmana needs private ABI %d "
			  "(rdma-core 34 to 56) and cannot load here",
			  IBVERBS_PABI_VERSION);
		result_fix(r, "build this project against this libibverbs' "
			   "rdma-core release line, or use rdma-core's own libmana");
	}
	if (c.dups.len) {
		r->verdict = r->verdict == V_OK ? V_WARN : r->verdict;
		sb_printf(&r->msg, "; listed more than once: %s", c.dups.s);
		result_fix(r, "keep one 'driver NAME' line per provider in %s",
			   CONFIG_DIR);
	}
	if (config_has(&c, "mana") && !cfg_lib[0]) {
		r->verdict = r->verdict == V_OK ? V_WARN : r->verdict;
		sb_printf(&r->msg, "; mana is configured but %s is missing", buf);
		result_fix(r, "sudo apt install --reinstall ibverbs-providers, or "
			   "install this project's package");
	}
	if (!preloaded && dv[0] && cfg_lib[0] && strcmp(dv, cfg_lib)) {
		r->verdict = r->verdict == V_OK ? V_WARN : r->verdict;
		sb_printf(&r->msg, "; two MANA providers: programs linked with "
			  "libmana.so.1 (DPDK) load %s, libibverbs alone loads %s",
			  dv, cfg_lib);
		result_fix(r, "install one libmana: this project's package "
			   "diverts rdma-core's files so both names lead to it");
	}
	sb_free(&c.dups);
}
