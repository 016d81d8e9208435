// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Foundation verbs against the emulated kernel, with either provider:
 * open, query device and port, PD, MR, parent domain, manadv context
 * attributes, close; and the documented errors for bad input.
 * Usage (under mana-emu): test_verbs_basic [--provider=system]
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "emu_client.h"

static bool system_provider;
static bool netdev_up;		/* run under mana-emu --netdev-up */

static void test_device(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex attr;
	struct ibv_port_attr port;
	bool ids;
	int ret;

	memset(&attr, 0, sizeof(attr));
	ret = ibv_query_device_ex(ctx, NULL, &attr);
	CHECK_ERRNO(ret, 0);
	/* mana_ib reports vendor ids and raw_packet_caps from 6.16, else 0 */
	ids = emu_kernel_version() >= 6016;
	CHECK(attr.orig_attr.vendor_id == (ids ? 0x1414 : 0), "vendor 0x%x",
	      attr.orig_attr.vendor_id);
	CHECK(ids == (attr.orig_attr.vendor_part_id != 0), "vendor_part_id %u",
	      attr.orig_attr.vendor_part_id);
	CHECK(attr.orig_attr.phys_port_cnt >= 1, "ports %u",
	      attr.orig_attr.phys_port_cnt);
	CHECK(ids == !!(attr.raw_packet_caps & IBV_RAW_PACKET_CAP_IP_CSUM),
	      "raw_packet_caps 0x%x", attr.raw_packet_caps);
	CHECK(attr.orig_attr.max_qp_wr > 0 && attr.orig_attr.max_cqe > 0,
	      "queue limits");
	/* rdma-core's libmana leaves fw_ver empty; ours formats the kernel's */
	if (!system_provider)
		CHECK(attr.orig_attr.fw_ver[0] != 0, "fw_ver empty");

	memset(&port, 0, sizeof(port));
	ret = ibv_query_port(ctx, 1, &port);
	CHECK_ERRNO(ret, 0);
	CHECK(port.link_layer == IBV_LINK_LAYER_ETHERNET, "link layer %u",
	      port.link_layer);
	/* mana_ib: the port is as up as its netdev; DPDK's setup has it down */
	CHECK(port.state == (netdev_up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN),
	      "port state %d with the netdev %s", port.state,
	      netdev_up ? "up" : "down");
	CHECK(port.phys_state == (netdev_up ? 5 : 3), "phys_state %u",
	      port.phys_state);
	CHECK(port.max_mtu == IBV_MTU_4096, "max_mtu %d", port.max_mtu);

	ret = ibv_query_port(ctx, attr.orig_attr.phys_port_cnt + 1, &port);
	CHECK(ret == EINVAL, "query of a missing port: %d", ret);
}

static void test_mr(struct ibv_context *ctx, struct ibv_pd *pd)
{
	size_t len = 2 * 4096;
	struct ibv_mr *mr;
	void *buf, *hole;
	int ret;

	buf = aligned_alloc(4096, len);
	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL, "reg_mr: %s", strerror(errno));
	if (mr) {
		CHECK(mr->addr == buf && mr->length == len, "mr fields");
		CHECK(mr->lkey != 0 || mr->rkey != 0, "keys");
	}

	/* a PD with an MR on it cannot go */
	ret = ibv_dealloc_pd(pd);
	CHECK(ret == EBUSY, "dealloc_pd with MR: %d", ret);

	/* remote write needs local write (both provider and kernel refuse) */
	errno = 0;
	CHECK(!ibv_reg_mr(pd, buf, len, IBV_ACCESS_REMOTE_WRITE) && errno == EINVAL,
	      "remote write without local write: errno %d", errno);
	/* access rights mana_ib does not grant */
	errno = 0;
	/* no on-demand paging: ib_umem_get()/ib_check_mr_access() say EOPNOTSUPP */
	CHECK(!ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND) &&
	      errno == EOPNOTSUPP, "on-demand paging: errno %d", errno);
	errno = 0;
	CHECK(!ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE | (1 << 15)) &&
	      errno == EINVAL, "unknown access bit: errno %d", errno);
	/* zero length: ib_umem_get() finds no page to pin, EINVAL */
	errno = 0;
	CHECK(!ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE) && errno == EINVAL,
	      "zero length: errno %d", errno);
	/* memory that cannot be accessed cannot be pinned */
	/*
	 * No access, kept reserved: an unmapped hole can be filled by the
	 * process's next mapping (seen under ASan in a Debian 13 root)
	 */
	hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	errno = 0;
	CHECK(!ibv_reg_mr(pd, hole, 4096, IBV_ACCESS_LOCAL_WRITE) && errno == EFAULT,
	      "unmapped memory: errno %d", errno);
	/* relaxed ordering is optional: silently dropped, never an error */
	{
		struct ibv_mr *ro = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
					       IBV_ACCESS_RELAXED_ORDERING);

		CHECK(ro != NULL, "relaxed ordering: %s", strerror(errno));
		if (ro)
			CHECK_ERRNO(ibv_dereg_mr(ro), 0);
	}

	if (mr)
		CHECK_ERRNO(ibv_dereg_mr(mr), 0);
	free(buf);
}

static void test_parent_domain(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_parent_domain_init_attr attr = {
		.pd = pd,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.pd_context = (void *)(uintptr_t)1,
	};
	struct ibv_pd *parent;
	struct ibv_mr *mr;
	char buf[64];

	parent = ibv_alloc_parent_domain(ctx, &attr);
	CHECK(parent != NULL, "parent domain: %s", strerror(errno));
	if (!parent)
		return;
	CHECK(parent->handle == pd->handle, "parent carries the PD handle");

	/* an MR through the parent domain lands on the real PD */
	mr = ibv_reg_mr(parent, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL, "reg_mr on parent: %s", strerror(errno));
	if (mr)
		CHECK_ERRNO(ibv_dereg_mr(mr), 0);

	if (!system_provider) {
		struct ibv_parent_domain_init_attr bad = attr;

		/* the PD must outlive its parent domains */
		CHECK(ibv_dealloc_pd(pd) == EBUSY, "dealloc PD under a parent");

		bad.comp_mask |= 1u << 7;
		errno = 0;
		CHECK(!ibv_alloc_parent_domain(ctx, &bad) && errno == EOPNOTSUPP,
		      "unknown comp_mask: errno %d", errno);
		bad = attr;
		bad.pd = NULL;
		errno = 0;
		CHECK(!ibv_alloc_parent_domain(ctx, &bad) && errno == EINVAL,
		      "no PD: errno %d", errno);
		bad = attr;
		bad.pd = parent;
		errno = 0;
		CHECK(!ibv_alloc_parent_domain(ctx, &bad) && errno == EINVAL,
		      "parent of a parent: errno %d", errno);
	}
	CHECK_ERRNO(ibv_dealloc_pd(parent), 0);
}

static void *test_alloc(size_t size, void *data)
{
	void *p = NULL;

	(void)data;
	return posix_memalign(&p, 4096, size) ? NULL : p;
}

static void test_free(void *ptr, void *data)
{
	(void)data;
	free(ptr);
}

static void test_manadv(struct ibv_context *ctx)
{
	struct manadv_ctx_allocators alloc = {
		.alloc = test_alloc, .free = test_free, .data = NULL,
	};
	struct manadv_api api;

	CHECK(manadv_api_load(&api) == 0, "libmana.so.1 with manadv: %s", dlerror());
	if (manadv_api_load(&api))
		return;
	CHECK_ERRNO(api.set_context_attr(ctx, MANADV_CTX_ATTR_BUF_ALLOCATORS, &alloc), 0);
	if (system_provider)
		return;
	CHECK_ERRNO(api.set_context_attr(ctx, (enum manadv_set_ctx_attr_type)7, &alloc),
		    EOPNOTSUPP);
	CHECK_ERRNO(api.set_context_attr(ctx, MANADV_CTX_ATTR_BUF_ALLOCATORS, NULL),
		    EINVAL);
	alloc.free = NULL;
	CHECK_ERRNO(api.set_context_attr(ctx, MANADV_CTX_ATTR_BUF_ALLOCATORS, &alloc),
		    EINVAL);
	CHECK_ERRNO(api.set_context_attr(NULL, MANADV_CTX_ATTR_BUF_ALLOCATORS, &alloc),
		    EINVAL);
	/* init_obj: no object, unknown type bits */
	{
		struct manadv_obj obj;

		memset(&obj, 0, sizeof(obj));
		CHECK_ERRNO(api.init_obj(&obj, MANADV_OBJ_CQ), EINVAL);
		CHECK_ERRNO(api.init_obj(&obj, 1u << 9), EINVAL);
		CHECK_ERRNO(api.init_obj(NULL, MANADV_OBJ_QP), EINVAL);
	}
}

int main(int argc, char **argv)
{
	struct mana_emu_counts counts;
	struct ibv_context *ctx;
	struct ibv_pd *pd;

	system_provider = emu_client_system(argc, argv);
	netdev_up = argc > 1 && !strcmp(argv[argc - 1], "--netdev-up");
	ctx = emu_open_mana();
	CHECK(ctx != NULL, "open mana device: %s", strerror(errno));
	if (!ctx)
		return check_done();

	test_device(ctx);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd != NULL, "alloc_pd: %s", strerror(errno));
	if (pd) {
		test_mr(ctx, pd);
		test_parent_domain(ctx, pd);
		CHECK_ERRNO(ibv_dealloc_pd(pd), 0);
	}
	test_manadv(ctx);
	CHECK_ERRNO(ibv_close_device(ctx), 0);

	CHECK(emu_counts(&counts) == 0, "emulator counts unavailable");
	CHECK(counts.contexts == 0 && counts.pds == 0 && counts.mrs == 0,
	      "leaked: %u contexts %u pds %u mrs", counts.contexts, counts.pds,
	      counts.mrs);
	return check_done();
}
