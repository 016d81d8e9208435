// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Registration with libibverbs, device matching and contexts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mana.h"
#include "match.h"

/*
 * Bound by driver id where RDMA netlink reports it, by PCI identity (the
 * modalias) or by name where it does not: discovery through sysfs alone
 * always reports driver id 0, and rdma-core's libmana cannot bind there.
 * libibverbs first offers a device only to the providers whose table names
 * its driver id, so MANA under erdma's id (19, backported kernels) reaches
 * us only if we name 19 too; mana_match_device() then takes only real MANA
 * functions, so erdma hardware still goes to erdma.
 */
static const struct verbs_match_ent mana_match_table[] = {
	VERBS_DRIVER_ID(MANA_DRIVER_ID),
	VERBS_DRIVER_ID(MANA_DRIVER_ID_ERDMA),
	VERBS_PCI_MATCH(MANA_PCI_VENDOR_ID, MANA_PCI_DEVICE_VF, NULL),
	VERBS_PCI_MATCH(MANA_PCI_VENDOR_ID, MANA_PCI_DEVICE_PF, NULL),
	VERBS_PCI_MATCH(MANA_PCI_VENDOR_ID, MANA_PCI_DEVICE_PF2, NULL),
	VERBS_NAME_MATCH("mana", NULL),
	{}
};

static atomic_flag mana_consistency_warned = ATOMIC_FLAG_INIT;

static void read_modalias(struct verbs_sysfs_dev *sysfs_dev, char *buf,
			  size_t len)
{
	int n;

	if ((sysfs_dev->flags & VSYSFS_READ_MODALIAS) && sysfs_dev->modalias[0]) {
		snprintf(buf, len, "%s", sysfs_dev->modalias);
		return;
	}
	n = ibv_read_sysfs_file(sysfs_dev->ibdev_path, "device/modalias", buf,
				len);
	if (n <= 0) {
		buf[0] = 0;
		return;
	}
	buf[strcspn(buf, "\n")] = 0;
}

static bool mana_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct mana_match_input in = {
		.driver_id = sysfs_dev->driver_id,
		.ibdev_name = sysfs_dev->ibdev_name,
	};
	enum mana_match_verdict verdict;
	char modalias[sizeof(sysfs_dev->modalias)];
	char msg[768];

	read_modalias(sysfs_dev, modalias, sizeof(modalias));
	in.modalias = modalias;
	verdict = mana_match_classify(&in);
	if (verdict == MANA_MATCH_BIND_WARN_DRIVER_ID ||
	    verdict == MANA_MATCH_BIND_WARN_PCI) {
		/* the detail to the verbs log, the fix on stderr (hint.c) */
		if (!atomic_flag_test_and_set(&mana_consistency_warned)) {
			mana_match_message(&in, verdict, msg, sizeof(msg));
			__verbs_log(NULL, VERBS_LOG_WARN, "libmana: %s\n", msg);
		}
		if (verdict == MANA_MATCH_BIND_WARN_DRIVER_ID)
			mana_hint(MANA_HINT_DRIVER_ID,
				  "%s: the kernel reports driver id %u, not RDMA_DRIVER_MANA (%u), for this MANA function: this libmana binds it, rdma-core's libmana would not. Fix: keep this libmana, or run a kernel whose mana_ib reports %u",
				  sysfs_dev->ibdev_name, sysfs_dev->driver_id,
				  MANA_DRIVER_ID, MANA_DRIVER_ID);
		else
			mana_hint(MANA_HINT_PCI_ID,
				  "%s: driver id RDMA_DRIVER_MANA (%u) on a function that is not MANA by PCI identity ('%s'); this libmana binds it. Fix: check device/modalias of %s in sysfs",
				  sysfs_dev->ibdev_name, MANA_DRIVER_ID, modalias,
				  sysfs_dev->ibdev_name);
	}
	return verdict != MANA_MATCH_REFUSE;
}

static struct verbs_device *mana_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct mana_device *dev;

	/* libibverbs requires the device to be zeroed */
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	dev->kernel_driver_id = sysfs_dev->driver_id ? sysfs_dev->driver_id :
						       MANA_DRIVER_ID;
	return &dev->verbs_dev;
}

static void mana_uninit_device(struct verbs_device *verbs_dev)
{
	free(container_of(verbs_dev, struct mana_device, verbs_dev));
}

static void mana_free_context(struct ibv_context *ibctx)
{
	struct mana_context *ctx = to_mctx(ibctx);

	mana_dm_context_free(ctx);
	if (ctx->db_page)
		munmap(ctx->db_page, MANA_PAGE_SIZE);
	pthread_mutex_destroy(&ctx->lock);
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static const struct verbs_context_ops mana_ctx_ops = {
	.alloc_mw = mana_alloc_mw,
	.alloc_dm = mana_alloc_dm,
	.alloc_parent_domain = mana_alloc_parent_domain,
	.alloc_pd = mana_alloc_pd,
	.async_event = mana_async_event,
	.bind_mw = mana_bind_mw,
	.create_cq = mana_create_cq,
	.create_cq_ex = mana_create_cq_ex,
	.create_qp = mana_create_qp,
	.create_qp_ex = mana_create_qp_ex,
	.create_rwq_ind_table = mana_create_rwq_ind_table,
	.create_srq = mana_create_srq,
	.create_srq_ex = mana_create_srq_ex,
	.create_wq = mana_create_wq,
	.dealloc_mw = mana_dealloc_mw,
	.dealloc_pd = mana_dealloc_pd,
	.dereg_mr = mana_dereg_mr,
	.destroy_cq = mana_destroy_cq,
	.destroy_qp = mana_destroy_qp,
	.destroy_rwq_ind_table = mana_destroy_rwq_ind_table,
	.destroy_wq = mana_destroy_wq,
	.free_context = mana_free_context,
	.free_dm = mana_free_dm,
	.modify_qp = mana_modify_qp,
	.modify_wq = mana_modify_wq,
	.open_xrcd = mana_open_xrcd,
	.poll_cq = mana_poll_cq,
	.post_recv = mana_post_recv,
	.post_send = mana_post_send,
	.query_device_ex = mana_query_device_ex,
	.query_port = mana_query_port,
	.query_qp = mana_query_qp,
	.reg_dm_mr = mana_reg_dm_mr,
	.reg_dmabuf_mr = mana_reg_dmabuf_mr,
	.reg_mr = mana_reg_mr,
	.req_notify_cq = mana_req_notify_cq,
};

/* Only the response carries driver data: robust udata wants no input. */
struct mana_get_context_resp {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct mana_ib_alloc_ucontext_resp drv;
};

static struct verbs_context *mana_alloc_context(struct ibv_device *ibdev,
						int cmd_fd, void *private_data)
{
	struct mana_device *dev = to_mdev(ibdev);
	struct mana_get_context_resp resp;
	struct ibv_get_context cmd;
	struct mana_context *ctx;
	int ret;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   dev->kernel_driver_id);
	if (!ctx)
		return NULL;

	if (pthread_mutex_init(&ctx->lock, NULL)) {
		errno = ENOMEM;
		goto err_uninit;
	}
	if (pthread_mutex_init(&ctx->dm_lock, NULL)) {
		pthread_mutex_destroy(&ctx->lock);
		errno = ENOMEM;
		goto err_uninit;
	}

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (ret) {
		mana_err(&ctx->ibv_ctx.context, "GET_CONTEXT failed: %s",
			 strerror(ret));
		errno = ret;
		goto err_mutex;
	}
	/* kernels before PD numbers (7.1) write no driver response: 0 */
	ctx->kernel_caps = resp.drv.comp_mask;

	/*
	 * The doorbell page now, as rdma-core's libmana maps it: arming a CQ
	 * (ibv_req_notify_cq) must work before any queue exists.
	 */
	if (!mana_get_db_page(ctx)) {
		errno = ENOENT;
		goto err_mutex;
	}
	verbs_set_ops(&ctx->ibv_ctx, &mana_ctx_ops);
	return &ctx->ibv_ctx;

err_mutex:
	pthread_mutex_destroy(&ctx->dm_lock);
	pthread_mutex_destroy(&ctx->lock);
err_uninit:
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	return NULL;
}

const struct verbs_device_ops mana_dev_ops = {
	.name = "mana",
	.match_min_abi_version = MANA_IB_UVERBS_ABI_VERSION,
	.match_max_abi_version = MANA_IB_UVERBS_ABI_VERSION,
	.match_table = mana_match_table,
	.match_device = mana_match_device,
	.alloc_device = mana_alloc_device,
	.uninit_device = mana_uninit_device,
	.alloc_context = mana_alloc_context,
};

bool mana_is_mana_context(struct ibv_context *ctx)
{
	return ctx && ctx->device &&
	       verbs_get_device(ctx->device)->ops == &mana_dev_ops;
}

PROVIDER_DRIVER(mana, mana_dev_ops);
