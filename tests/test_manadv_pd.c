// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * PD numbers through manadv (MANA_1.1): written against rdma-core's
 * manadv.h API after v64 (manadv_alloc_pd, MANADV_PD_FLAGS_SHORT_PDN,
 * MANADV_OBJ_PD, struct manadv_pd) and nothing of ours but the header's
 * installed path, so the build proves such a program compiles and links
 * against our libmana unchanged.  Run under mana-emu:
 *
 *   test_manadv_pd          at --kernel=7.1 or later: a short PDN fits 16
 *                           bits, every pdn is the emulated kernel's,
 *                           unknown flags are refused
 *   test_manadv_pd --old    before 7.1: no PD numbers (EOPNOTSUPP)
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>
#include <infiniband/manadv.h>

#include "check.h"
#include "emu_client.h"

/* the layout rdma-core's header gives them */
_Static_assert(MANADV_OBJ_PD == 1 << 3, "MANADV_OBJ_PD");
_Static_assert(MANADV_PD_FLAGS_SHORT_PDN == 1 << 0, "SHORT_PDN");
_Static_assert(sizeof(struct manadv_pd) == 4, "manadv_pd");
_Static_assert(offsetof(struct manadv_obj, pd) ==
	       3 * 2 * sizeof(void *), "manadv_obj.pd");

static int (*pd_number)(int, uint32_t, uint32_t *);

static int dv_pdn(struct ibv_pd *pd, uint32_t *pdn)
{
	struct manadv_pd out = { .pdn = 0xdeadbeef };
	struct manadv_obj obj = { .pd = { .in = pd, .out = &out } };
	int ret = manadv_init_obj(&obj, MANADV_OBJ_PD);

	*pdn = out.pdn;
	return ret;
}

/* The number manadv reports is the one the kernel holds for that PD. */
static void check_kernel_pdn(struct ibv_context *ctx, struct ibv_pd *pd,
			     const char *what, uint32_t *pdn_out)
{
	uint32_t pdn, kpdn = 0;

	CHECK_ERRNO(dv_pdn(pd, &pdn), 0);
	CHECK(pd_number(ctx->cmd_fd, pd->handle, &kpdn) == 0, "%s: emulator", what);
	CHECK(pdn == kpdn, "%s: manadv pdn %#x, kernel %#x", what, pdn, kpdn);
	*pdn_out = pdn;
}

static void new_kernel(struct ibv_context *ctx)
{
	struct ibv_parent_domain_init_attr pattr = {};
	struct ibv_pd *spd[3], *lpd, *ppd, *bad;
	uint32_t pdn, seen[3];
	int i;

	for (i = 0; i < 3; i++) {
		spd[i] = manadv_alloc_pd(ctx, MANADV_PD_FLAGS_SHORT_PDN);
		CHECK(spd[i], "manadv_alloc_pd(SHORT_PDN): %s", strerror(errno));
		if (!spd[i])
			return;
		check_kernel_pdn(ctx, spd[i], "short", &seen[i]);
		CHECK(seen[i] < 65536, "short pdn %#x", seen[i]);
		CHECK(i == 0 || seen[i] != seen[i - 1], "pdn %#x twice", seen[i]);
	}
	lpd = manadv_alloc_pd(ctx, 0);
	CHECK(lpd, "manadv_alloc_pd(0): %s", strerror(errno));
	if (lpd)
		check_kernel_pdn(ctx, lpd, "flags 0", &pdn);

	/* ibv_alloc_pd is flags 0 */
	ppd = ibv_alloc_pd(ctx);
	CHECK(ppd, "ibv_alloc_pd: %s", strerror(errno));
	if (ppd) {
		check_kernel_pdn(ctx, ppd, "ibv_alloc_pd", &pdn);
		ibv_dealloc_pd(ppd);
	}

	/* a parent domain tells its protection domain's number */
	pattr.pd = spd[0];
	ppd = ibv_alloc_parent_domain(ctx, &pattr);
	CHECK(ppd, "parent domain: %s", strerror(errno));
	if (ppd) {
		CHECK_ERRNO(dv_pdn(ppd, &pdn), 0);
		CHECK(pdn == seen[0], "parent domain pdn %#x, its PD %#x", pdn,
		      seen[0]);
		ibv_dealloc_pd(ppd);
	}

	/* unknown flags: refused, nothing allocated */
	errno = 0;
	bad = manadv_alloc_pd(ctx, 1u << 1);
	CHECK(!bad && errno == EOPNOTSUPP, "flag 1<<1: %p errno %d", (void *)bad,
	      errno);
	errno = 0;
	bad = manadv_alloc_pd(ctx, MANADV_PD_FLAGS_SHORT_PDN | 0x80000000u);
	CHECK(!bad && errno == EOPNOTSUPP, "flag 1<<31: %p errno %d",
	      (void *)bad, errno);

	for (i = 0; i < 3; i++)
		CHECK_ERRNO(ibv_dealloc_pd(spd[i]), 0);
	if (lpd)
		CHECK_ERRNO(ibv_dealloc_pd(lpd), 0);
}

static void old_kernel(struct ibv_context *ctx)
{
	struct ibv_pd *pd;
	uint32_t pdn;

	errno = 0;
	pd = manadv_alloc_pd(ctx, MANADV_PD_FLAGS_SHORT_PDN);
	CHECK(!pd && errno == EOPNOTSUPP, "SHORT_PDN before 7.1: %p errno %d",
	      (void *)pd, errno);
	pd = manadv_alloc_pd(ctx, 0);
	CHECK(pd, "manadv_alloc_pd(0) before 7.1: %s", strerror(errno));
	if (!pd)
		return;
	CHECK_ERRNO(dv_pdn(pd, &pdn), EOPNOTSUPP);
	CHECK_ERRNO(ibv_dealloc_pd(pd), 0);
}

int main(int argc, char **argv)
{
	struct manadv_obj obj = {};
	struct ibv_context *ctx;
	struct ibv_pd *pd;

	pd_number = (typeof(pd_number))dlsym(RTLD_DEFAULT, MANA_EMU_PD_NUMBER_SYM);
	ctx = emu_open_mana();
	CHECK(ctx && pd_number, "no emulated device");
	if (!ctx || !pd_number)
		return check_done();

	if (argc > 1 && !strcmp(argv[1], "--old"))
		old_kernel(ctx);
	else
		new_kernel(ctx);

	/* bad arguments */
	CHECK_ERRNO(manadv_init_obj(&obj, MANADV_OBJ_PD), EINVAL);
	pd = ibv_alloc_pd(ctx);
	obj.pd.in = pd;
	CHECK_ERRNO(manadv_init_obj(&obj, MANADV_OBJ_PD), EINVAL);
	CHECK_ERRNO(manadv_init_obj(&obj, 1u << 4), EINVAL);
	if (pd)
		ibv_dealloc_pd(pd);
	errno = 0;
	CHECK(!manadv_alloc_pd(NULL, 0) && errno == EINVAL, "NULL context");

	ibv_close_device(ctx);
	return check_done();
}
