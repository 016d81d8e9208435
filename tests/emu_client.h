/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Helpers for integration tests that run under mana-emu: open the emulated
 * device, reach manadv in whichever libmana serves it, and ask the emulated
 * kernel what it holds.
 */
#ifndef MANA_TESTS_EMU_CLIENT_H
#define MANA_TESTS_EMU_CLIENT_H

#include <dlfcn.h>
#include <stdbool.h>
#include <string.h>
#include <infiniband/verbs.h>
#include <infiniband/manadv.h>

#include "emulator/mana_emu.h"

struct manadv_api {
	int (*set_context_attr)(struct ibv_context *, enum manadv_set_ctx_attr_type,
				void *);
	int (*init_obj)(struct manadv_obj *, uint64_t);
};

/* "--provider=system" on the command line: Debian's libmana serves us. */
static inline bool emu_client_system(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--provider=system"))
			return true;
	return false;
}

/*
 * The test does not link libmana: linking it would register our provider
 * ahead of the one under test.  Whichever libmana.so.1 is loaded (ours,
 * preloaded by mana-emu, or the distribution's) is found by its soname.
 */
static inline int manadv_api_load(struct manadv_api *api)
{
	void *h = dlopen("libmana.so.1", RTLD_NOW);

	if (!h)
		return -1;
	api->set_context_attr = (typeof(api->set_context_attr))dlsym(h, "manadv_set_context_attr");
	api->init_obj = (typeof(api->init_obj))dlsym(h, "manadv_init_obj");
	return api->set_context_attr && api->init_obj ? 0 : -1;
}

static inline struct ibv_context *emu_open_mana(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n; i++) {
		if (!strncmp(ibv_get_device_name(list[i]), "mana", 4)) {
			ctx = ibv_open_device(list[i]);
			break;
		}
	}
	ibv_free_device_list(list);
	return ctx;
}

/*
 * The RNIC: the first MANA device whose port 1 has GIDs (mana_0 in every
 * era with RC QPs, whether or not manae_0 comes first).
 */
static inline struct ibv_context *emu_open_rnic(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_port_attr pa;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n && !ctx; i++) {
		if (strncmp(ibv_get_device_name(list[i]), "mana", 4))
			continue;
		ctx = ibv_open_device(list[i]);
		if (ctx && (ibv_query_port(ctx, 1, &pa) || !pa.gid_tbl_len)) {
			ibv_close_device(ctx);
			ctx = NULL;
		}
	}
	ibv_free_device_list(list);
	return ctx;
}

/* The emulated kernel's object counts, from the preloaded libmana-emu.so. */
static inline int emu_counts(struct mana_emu_counts *out)
{
	int (*fn)(struct mana_emu_counts *);

	fn = (typeof(fn))dlsym(RTLD_DEFAULT, "mana_emu_object_counts");
	if (!fn)
		return -1;
	return fn(out);
}

/*
 * The emulated device thread's wake-ups so far (doorbells and kicks that
 * found it asleep, mana_emu_device_wakeups()); -1 without mana-emu.
 */
static inline int emu_wakeups(uint64_t *out)
{
	uint64_t (*fn)(void);

	fn = (typeof(fn))dlsym(RTLD_DEFAULT, "mana_emu_device_wakeups");
	if (!fn)
		return -1;
	*out = fn();
	return 0;
}

#endif
