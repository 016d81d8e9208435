// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The private ABI layout is proven at compile time by abi-check.h, for the
 * rdma-core release (MANA_RDMA_CORE) whose headers we were built with; this
 * test also proves that the libibverbs the program loads is that release,
 * that our manadv.h is layout-identical to the published API and that the
 * command buffers carry driver data right after the core.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libibverbs/abi-check.h"
#include <infiniband/manadv.h>
#include <rdma/mana-abi.h>
#include "check.h"

MANA_DECLARE_DRV_CMD(t_create_qp, ibv_create_qp, ib_uverbs_create_qp_resp,
		     mana_ib_create_qp, mana_ib_create_qp_resp);
MANA_DECLARE_DRV_CMD(t_create_rss, ibv_create_qp_ex, ib_uverbs_ex_create_qp_resp,
		     mana_ib_create_qp_rss, mana_ib_create_qp_rss_resp);
MANA_DECLARE_DRV_CMD(t_create_cq, ibv_create_cq, ib_uverbs_create_cq_resp,
		     mana_ib_create_cq, mana_ib_create_cq_resp);
MANA_DECLARE_DRV_CMD(t_create_wq, ibv_create_wq, ib_uverbs_ex_create_wq_resp,
		     mana_ib_create_wq, mana_empty);

/* rdma-core's release in libibverbs.so.1.N.RELEASE.P, or -1 */
static int loaded_release(void)
{
	char real[PATH_MAX];
	const char *base;
	unsigned int minor, release, patch;
	Dl_info info;

	if (!dladdr((void *)ibv_get_device_list, &info) || !info.dli_fname ||
	    !realpath(info.dli_fname, real))
		return -1;
	base = strrchr(real, '/');
	base = base ? base + 1 : real;
	if (sscanf(base, "libibverbs.so.1.%u.%u.%u", &minor, &release, &patch) != 3)
		return -1;
	return (int)release;
}

int main(void)
{
	/* the layouts checked at build time are the loaded library's */
	CHECK(loaded_release() == MANA_RDMA_CORE,
	      "built for rdma-core %d, loaded libibverbs of rdma-core %d",
	      MANA_RDMA_CORE, loaded_release());

	/* the sizes rdma-core's libmana sends (research: Debian binaries) */
	CHECK(sizeof(struct t_create_cq) == 56, "create_cq %zu", sizeof(struct t_create_cq));
	CHECK(sizeof(struct t_create_qp) == 80, "create_qp %zu", sizeof(struct t_create_qp));
	CHECK(sizeof(struct t_create_qp_resp) == 48, "create_qp resp");
	CHECK(offsetof(struct t_create_qp, drv) == 64, "create_qp drv @64");
	CHECK(offsetof(struct t_create_qp_resp, drv) == 32, "create_qp resp drv @32");
	CHECK(sizeof(struct t_create_rss) == 152, "create_qp_ex rss %zu",
	      sizeof(struct t_create_rss));
	CHECK(offsetof(struct t_create_rss, drv) == 88, "rss drv @88");
	CHECK(sizeof(struct t_create_rss_resp) == 560, "rss resp");
	CHECK(offsetof(struct t_create_rss_resp, drv) == 40, "rss resp drv @40");
	CHECK(sizeof(struct t_create_wq) == 80, "create_wq %zu", sizeof(struct t_create_wq));
	CHECK(sizeof(struct t_create_wq_resp) == 24, "create_wq resp");

	/* manadv.h: the published structure layouts */
	CHECK(sizeof(struct manadv_ctx_allocators) == 24, "allocators");
	CHECK(sizeof(struct manadv_qp) == 32 && offsetof(struct manadv_qp, db_page) == 24,
	      "manadv_qp");
	CHECK(sizeof(struct manadv_cq) == 16 && offsetof(struct manadv_cq, cq_id) == 12,
	      "manadv_cq");
	CHECK(sizeof(struct manadv_rwq) == 32 && offsetof(struct manadv_rwq, db_page) == 24,
	      "manadv_rwq");
	/*
	 * MANA_1.1 (rdma-core pull 1696) appended pd: a MANA_1.0 program's
	 * 48-byte manadv_obj never names MANADV_OBJ_PD, so pd is not read.
	 */
	CHECK(sizeof(struct manadv_obj) == 64 && offsetof(struct manadv_obj, rwq) == 32 &&
	      offsetof(struct manadv_obj, pd) == 48, "manadv_obj");
	CHECK(sizeof(struct manadv_pd) == 4, "manadv_pd");
	CHECK(MANADV_CTX_ATTR_BUF_ALLOCATORS == 0, "attr enum");
	CHECK(MANADV_OBJ_QP == 1 && MANADV_OBJ_CQ == 2 && MANADV_OBJ_RWQ == 4 &&
	      MANADV_OBJ_PD == 8 && MANADV_PD_FLAGS_SHORT_PDN == 1, "obj enum");
	return check_done();
}
