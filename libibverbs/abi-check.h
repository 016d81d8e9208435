/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Compile-time proof that our declaration of the private provider ABI has the
 * layout libibverbs 34 uses (x86_64 numbers from the published tables).  Any
 * translation unit that includes this header fails to build on a mismatch.
 */
#ifndef MANA_LIBIBVERBS_ABI_CHECK_H
#define MANA_LIBIBVERBS_ABI_CHECK_H

#include "libibverbs/driver.h"

#if defined(__x86_64__)
#define ABI_SIZE(type, size) \
	_Static_assert(sizeof(type) == (size), "sizeof(" #type ") != " #size)
#define ABI_OFF(type, member, off) \
	_Static_assert(offsetof(type, member) == (off), \
		       "offsetof(" #type ", " #member ") != " #off)

ABI_SIZE(struct verbs_match_ent, 24);
ABI_OFF(struct verbs_match_ent, u, 8);
ABI_OFF(struct verbs_match_ent, vendor, 16);
ABI_OFF(struct verbs_match_ent, device, 18);
ABI_OFF(struct verbs_match_ent, kind, 20);

ABI_SIZE(struct verbs_sysfs_dev, 992);
ABI_OFF(struct verbs_sysfs_dev, provider_data, 16);
ABI_OFF(struct verbs_sysfs_dev, match, 24);
ABI_OFF(struct verbs_sysfs_dev, flags, 32);
ABI_OFF(struct verbs_sysfs_dev, sysfs_name, 36);
ABI_OFF(struct verbs_sysfs_dev, sysfs_cdev, 104);
ABI_OFF(struct verbs_sysfs_dev, ibdev_name, 112);
ABI_OFF(struct verbs_sysfs_dev, ibdev_path, 176);
ABI_OFF(struct verbs_sysfs_dev, modalias, 432);
ABI_OFF(struct verbs_sysfs_dev, node_guid, 944);
ABI_OFF(struct verbs_sysfs_dev, driver_id, 952);
ABI_OFF(struct verbs_sysfs_dev, node_type, 956);
ABI_OFF(struct verbs_sysfs_dev, ibdev_idx, 960);
ABI_OFF(struct verbs_sysfs_dev, num_ports, 964);
ABI_OFF(struct verbs_sysfs_dev, abi_ver, 968);
ABI_OFF(struct verbs_sysfs_dev, time_created, 976);

ABI_SIZE(struct verbs_device_ops, 72);
ABI_OFF(struct verbs_device_ops, match_min_abi_version, 8);
ABI_OFF(struct verbs_device_ops, match_max_abi_version, 12);
ABI_OFF(struct verbs_device_ops, match_table, 16);
ABI_OFF(struct verbs_device_ops, static_providers, 24);
ABI_OFF(struct verbs_device_ops, match_device, 32);
ABI_OFF(struct verbs_device_ops, alloc_context, 40);
ABI_OFF(struct verbs_device_ops, import_context, 48);
ABI_OFF(struct verbs_device_ops, alloc_device, 56);
ABI_OFF(struct verbs_device_ops, uninit_device, 64);

ABI_SIZE(struct ibv_device, 664);
ABI_SIZE(struct verbs_device, 712);
ABI_OFF(struct verbs_device, ops, 664);
ABI_OFF(struct verbs_device, refcount, 672);
ABI_OFF(struct verbs_device, entry, 680);
ABI_OFF(struct verbs_device, sysfs, 696);
ABI_OFF(struct verbs_device, core_support, 704);

ABI_SIZE(struct verbs_context, 648);
ABI_OFF(struct verbs_context, query_port, 0);
ABI_OFF(struct verbs_context, alloc_parent_domain, 112);
ABI_OFF(struct verbs_context, create_wq, 184);
ABI_OFF(struct verbs_context, create_cq_ex, 200);
ABI_OFF(struct verbs_context, priv, 208);
ABI_OFF(struct verbs_context, query_device_ex, 216);
ABI_OFF(struct verbs_context, create_qp_ex, 264);
ABI_OFF(struct verbs_context, sz, 312);
ABI_OFF(struct verbs_context, context, 320);
ABI_SIZE(struct ibv_context, 328);
ABI_OFF(struct ibv_context, cmd_fd, 264);
ABI_OFF(struct ibv_context, async_fd, 268);
ABI_OFF(struct ibv_context, num_comp_vectors, 272);
ABI_OFF(struct ibv_context, abi_compat, 320);
ABI_OFF(struct ibv_context_ops, poll_cq, 88);
ABI_OFF(struct ibv_context_ops, req_notify_cq, 96);
ABI_OFF(struct ibv_context_ops, post_srq_recv, 160);
ABI_OFF(struct ibv_context_ops, post_send, 200);
ABI_OFF(struct ibv_context_ops, post_recv, 208);

/* 76 operations; a few landmarks pin the alphabetical order. */
ABI_SIZE(struct verbs_context_ops, 608);
ABI_OFF(struct verbs_context_ops, alloc_parent_domain, 32);
ABI_OFF(struct verbs_context_ops, alloc_pd, 40);
ABI_OFF(struct verbs_context_ops, async_event, 56);
ABI_OFF(struct verbs_context_ops, cq_event, 96);
ABI_OFF(struct verbs_context_ops, create_cq, 120);
ABI_OFF(struct verbs_context_ops, create_cq_ex, 128);
ABI_OFF(struct verbs_context_ops, create_qp, 152);
ABI_OFF(struct verbs_context_ops, create_qp_ex, 160);
ABI_OFF(struct verbs_context_ops, create_rwq_ind_table, 168);
ABI_OFF(struct verbs_context_ops, create_wq, 192);
ABI_OFF(struct verbs_context_ops, dealloc_pd, 208);
ABI_OFF(struct verbs_context_ops, dereg_mr, 224);
ABI_OFF(struct verbs_context_ops, destroy_cq, 248);
ABI_OFF(struct verbs_context_ops, destroy_qp, 272);
ABI_OFF(struct verbs_context_ops, destroy_rwq_ind_table, 280);
ABI_OFF(struct verbs_context_ops, destroy_wq, 296);
ABI_OFF(struct verbs_context_ops, free_context, 312);
ABI_OFF(struct verbs_context_ops, modify_qp, 376);
ABI_OFF(struct verbs_context_ops, modify_wq, 400);
ABI_OFF(struct verbs_context_ops, poll_cq, 424);
ABI_OFF(struct verbs_context_ops, post_recv, 432);
ABI_OFF(struct verbs_context_ops, post_send, 440);
ABI_OFF(struct verbs_context_ops, query_device_ex, 464);
ABI_OFF(struct verbs_context_ops, query_port, 480);
ABI_OFF(struct verbs_context_ops, query_qp, 488);
ABI_OFF(struct verbs_context_ops, reg_mr, 544);
ABI_OFF(struct verbs_context_ops, req_notify_cq, 552);
ABI_OFF(struct verbs_context_ops, unimport_pd, 600);

ABI_SIZE(struct verbs_mr, 56);
ABI_OFF(struct verbs_mr, mr_type, 48);
ABI_OFF(struct verbs_mr, access, 52);
ABI_SIZE(struct verbs_xrcd, 16);
/*
 * verbs_qp is 368 bytes with the v44 ibv_qp_ex (352); v45..v56 headers grew
 * ibv_qp_ex by 8 and libibverbs then writes comp_mask at +360, which lands
 * in our xrcd slot: harmless because we never create XRC QPs.
 */
ABI_SIZE(struct ibv_qp_ex, 352);
ABI_SIZE(struct verbs_qp, 368);
ABI_OFF(struct verbs_qp, comp_mask, 352);
ABI_OFF(struct verbs_qp, xrcd, 360);
ABI_SIZE(struct ibv_cq, 128);
ABI_SIZE(struct verbs_cq, 288);
ABI_SIZE(struct ibv_pd, 16);
ABI_SIZE(struct ibv_wq, 152);
ABI_OFF(struct ibv_wq, wq_num, 32);
ABI_OFF(struct ibv_wq, post_recv, 48);
ABI_OFF(struct ibv_wq, events_completed, 144);
ABI_SIZE(struct ibv_rwq_ind_table, 24);
ABI_SIZE(struct ibv_parent_domain_init_attr, 48);
ABI_OFF(struct ibv_parent_domain_init_attr, pd_context, 40);
ABI_SIZE(struct ibv_device_attr_ex, 400);
ABI_SIZE(struct ibv_device_attr, 232);

/* Command buffers: header | core, no padding. */
ABI_SIZE(struct ex_hdr, 24);
ABI_SIZE(struct ibv_get_context, 16);
ABI_SIZE(struct ibv_query_port, 24);
ABI_SIZE(struct ibv_alloc_pd, 16);
ABI_SIZE(struct ibv_reg_mr, 48);
ABI_SIZE(struct ibv_create_cq, 40);
ABI_SIZE(struct ibv_create_qp, 64);
ABI_SIZE(struct ibv_modify_qp, 120);
ABI_SIZE(struct ibv_query_qp, 24);
ABI_SIZE(struct ibv_create_cq_ex, 56);
ABI_SIZE(struct ibv_create_qp_ex, 88);
ABI_SIZE(struct ibv_create_wq, 64);
ABI_SIZE(struct ibv_modify_wq, 48);
ABI_SIZE(struct ib_uverbs_query_device_resp, 176);
ABI_SIZE(struct ib_uverbs_ex_query_device_resp, 304);
ABI_OFF(struct ib_uverbs_ex_query_device_resp, raw_packet_caps, 252);
ABI_SIZE(struct ib_uverbs_query_port_resp, 40);
ABI_SIZE(struct ib_uverbs_create_qp_resp, 32);
ABI_SIZE(struct ib_uverbs_ex_create_qp_resp, 40);
ABI_SIZE(struct ib_uverbs_ex_create_wq_resp, 24);

#undef ABI_SIZE
#undef ABI_OFF
#endif /* __x86_64__ */

#endif /* MANA_LIBIBVERBS_ABI_CHECK_H */
