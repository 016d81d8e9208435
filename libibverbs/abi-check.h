/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Compile-time proof that our declaration of the private provider ABI has the
 * layout of the libibverbs built against (x86_64).  Offsets of the private
 * structures that embed public ones are computed from the public headers in
 * use; the private parts, which no installed header describes, are checked
 * against the facts of each rdma-core release range of IBVERBS_PRIVATE_34
 * (v34, v35, v36..v56: from rdma-core's driver.h at those tags).  Any
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

/*
 * v35 added num_ports after ibdev_idx; the three context ops below arrived
 * in v35 (import_dm, unimport_dm) and v36 (query_qp_data_in_order).
 */
#define NO_NUM_PORTS	(MANA_RDMA_CORE < 35)
#define NO_IMPORT_DM	(MANA_RDMA_CORE < 35)
#define NO_QP_IN_ORDER	(MANA_RDMA_CORE < 36)

ABI_SIZE(struct verbs_sysfs_dev, NO_NUM_PORTS ? 984 : 992);
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
#if !NO_NUM_PORTS
ABI_OFF(struct verbs_sysfs_dev, num_ports, 964);
#endif
ABI_OFF(struct verbs_sysfs_dev, abi_ver, NO_NUM_PORTS ? 964 : 968);
ABI_OFF(struct verbs_sysfs_dev, time_created, NO_NUM_PORTS ? 968 : 976);

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

/* the public structures, the same v34..v56, and what embeds them */
ABI_SIZE(struct ibv_device, 664);
ABI_SIZE(struct verbs_device, sizeof(struct ibv_device) + 48);
ABI_OFF(struct verbs_device, ops, sizeof(struct ibv_device));
ABI_OFF(struct verbs_device, refcount, sizeof(struct ibv_device) + 8);
ABI_OFF(struct verbs_device, entry, sizeof(struct ibv_device) + 16);
ABI_OFF(struct verbs_device, sysfs, sizeof(struct ibv_device) + 32);
ABI_OFF(struct verbs_device, core_support, sizeof(struct ibv_device) + 40);

ABI_SIZE(struct ibv_context, 328);
ABI_SIZE(struct verbs_context, 320 + sizeof(struct ibv_context));
ABI_OFF(struct verbs_context, query_port, 0);
ABI_OFF(struct verbs_context, alloc_parent_domain, 112);
ABI_OFF(struct verbs_context, create_wq, 184);
ABI_OFF(struct verbs_context, create_cq_ex, 200);
ABI_OFF(struct verbs_context, priv, 208);
ABI_OFF(struct verbs_context, query_device_ex, 216);
ABI_OFF(struct verbs_context, create_qp_ex, 264);
ABI_OFF(struct verbs_context, sz, 312);
ABI_OFF(struct verbs_context, context, 320);
ABI_OFF(struct ibv_context, cmd_fd, 264);
ABI_OFF(struct ibv_context, async_fd, 268);
ABI_OFF(struct ibv_context, num_comp_vectors, 272);
ABI_OFF(struct ibv_context, abi_compat, 320);
ABI_OFF(struct ibv_context_ops, poll_cq, 88);
ABI_OFF(struct ibv_context_ops, req_notify_cq, 96);
ABI_OFF(struct ibv_context_ops, post_srq_recv, 160);
ABI_OFF(struct ibv_context_ops, post_send, 200);
ABI_OFF(struct ibv_context_ops, post_recv, 208);

/*
 * 76 operations in v36..v56 (73 in v34, 75 in v35), in alphabetical order;
 * OPS_OFF gives a landmark's v36 offset less the slots this release lacks
 * before it.
 */
#define OPS_OFF(member, off, missing) \
	ABI_OFF(struct verbs_context_ops, member, (off) - 8 * (missing))
ABI_SIZE(struct verbs_context_ops,
	 608 - 8 * (2 * NO_IMPORT_DM + NO_QP_IN_ORDER));
OPS_OFF(alloc_parent_domain, 32, 0);
OPS_OFF(alloc_pd, 40, 0);
OPS_OFF(async_event, 56, 0);
OPS_OFF(cq_event, 96, 0);
OPS_OFF(create_cq, 120, 0);
OPS_OFF(create_cq_ex, 128, 0);
OPS_OFF(create_qp, 152, 0);
OPS_OFF(create_qp_ex, 160, 0);
OPS_OFF(create_rwq_ind_table, 168, 0);
OPS_OFF(create_wq, 192, 0);
OPS_OFF(dealloc_pd, 208, 0);
OPS_OFF(dereg_mr, 224, 0);
OPS_OFF(destroy_cq, 248, 0);
OPS_OFF(destroy_qp, 272, 0);
OPS_OFF(destroy_rwq_ind_table, 280, 0);
OPS_OFF(destroy_wq, 296, 0);
OPS_OFF(free_context, 312, 0);
OPS_OFF(import_mr, 344, NO_IMPORT_DM);
OPS_OFF(modify_qp, 376, NO_IMPORT_DM);
OPS_OFF(modify_wq, 400, NO_IMPORT_DM);
OPS_OFF(poll_cq, 424, NO_IMPORT_DM);
OPS_OFF(post_recv, 432, NO_IMPORT_DM);
OPS_OFF(post_send, 440, NO_IMPORT_DM);
OPS_OFF(query_device_ex, 464, NO_IMPORT_DM);
OPS_OFF(query_port, 480, NO_IMPORT_DM);
OPS_OFF(query_qp, 488, NO_IMPORT_DM);
OPS_OFF(reg_mr, 544, NO_IMPORT_DM + NO_QP_IN_ORDER);
OPS_OFF(req_notify_cq, 552, NO_IMPORT_DM + NO_QP_IN_ORDER);
OPS_OFF(unimport_pd, 600, 2 * NO_IMPORT_DM + NO_QP_IN_ORDER);

ABI_SIZE(struct verbs_mr, 56);
ABI_OFF(struct verbs_mr, mr_type, 48);
ABI_OFF(struct verbs_mr, access, 52);
ABI_SIZE(struct verbs_dm, 40);
ABI_OFF(struct verbs_dm, handle, 32);
ABI_SIZE(struct verbs_xrcd, 16);
/*
 * ibv_qp_ex grew by one operation in v44 (wr_atomic_write) and v45
 * (wr_flush): its size says whether the headers belong to the release of
 * the library (they must: libibverbs puts comp_mask right after it).
 */
ABI_SIZE(struct ibv_qp_ex,
	 MANA_RDMA_CORE < 44 ? 344 : MANA_RDMA_CORE < 45 ? 352 : 360);
ABI_SIZE(struct verbs_qp, sizeof(struct ibv_qp_ex) + 16);
ABI_OFF(struct verbs_qp, comp_mask, sizeof(struct ibv_qp_ex));
ABI_OFF(struct verbs_qp, xrcd, sizeof(struct ibv_qp_ex) + 8);
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
#if !NO_NUM_PORTS
ABI_OFF(struct ibv_device_attr_ex, phys_port_cnt_ex, 396);	/* v35 too */
#endif
/* v49 added active_speed_ex; libibverbs hands query_port its own size */
ABI_SIZE(struct ibv_port_attr, MANA_RDMA_CORE < 49 ? 52 : 56);
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

#undef OPS_OFF
#undef NO_NUM_PORTS
#undef NO_IMPORT_DM
#undef NO_QP_IN_ORDER
#undef ABI_SIZE
#undef ABI_OFF
#endif /* __x86_64__ */

#endif /* MANA_LIBIBVERBS_ABI_CHECK_H */
