/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Command buffers a provider hands to libibverbs' ibv_cmd_* helpers, and the
 * helpers themselves (IBVERBS_PRIVATE_34).  A buffer is laid out exactly as
 * the kernel reads it: header | core payload | driver payload, no padding.
 * libibverbs finds the driver payload from the size it is given, so only the
 * layout matters, not the member names.
 */
#ifndef MANA_LIBIBVERBS_KERN_ABI_H
#define MANA_LIBIBVERBS_KERN_ABI_H

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

struct ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

/* Plain write()-style commands: 8-byte header, then the core struct. */
#define MANA_DECLARE_CMD(name, core) \
	struct name { \
		struct ib_uverbs_cmd_hdr hdr; \
		struct core core; \
	}
/* Extended commands: 24-byte header, then the core struct. */
#define MANA_DECLARE_CMD_EX(name, core) \
	struct name { \
		struct ex_hdr hdr; \
		struct core core; \
	}

MANA_DECLARE_CMD(ibv_get_context, ib_uverbs_get_context);
MANA_DECLARE_CMD(ibv_query_port, ib_uverbs_query_port);
MANA_DECLARE_CMD(ibv_alloc_pd, ib_uverbs_alloc_pd);
MANA_DECLARE_CMD(ibv_reg_mr, ib_uverbs_reg_mr);
MANA_DECLARE_CMD(ibv_alloc_mw, ib_uverbs_alloc_mw);
MANA_DECLARE_CMD(ibv_create_cq, ib_uverbs_create_cq);
MANA_DECLARE_CMD(ibv_create_qp, ib_uverbs_create_qp);
MANA_DECLARE_CMD(ibv_modify_qp, ib_uverbs_modify_qp);
MANA_DECLARE_CMD(ibv_query_qp, ib_uverbs_query_qp);
MANA_DECLARE_CMD_EX(ibv_create_cq_ex, ib_uverbs_ex_create_cq);
MANA_DECLARE_CMD_EX(ibv_create_qp_ex, ib_uverbs_ex_create_qp);
MANA_DECLARE_CMD_EX(ibv_create_wq, ib_uverbs_ex_create_wq);
MANA_DECLARE_CMD_EX(ibv_modify_wq, ib_uverbs_ex_modify_wq);

/*
 * A provider command with driver data: the libibverbs command buffer
 * immediately followed by the driver's request, and likewise the response.
 */
#define MANA_DECLARE_DRV_CMD(name, ibv_cmd_type, ibv_resp_type, drv_req, drv_resp) \
	struct name { \
		struct ibv_cmd_type ibv_cmd; \
		struct drv_req drv; \
	}; \
	struct name##_resp { \
		struct ibv_resp_type ibv_resp; \
		struct drv_resp drv; \
	}; \
	_Static_assert(sizeof(struct name) == \
		       sizeof(struct ibv_cmd_type) + sizeof(struct drv_req), \
		       "padding in " #name); \
	_Static_assert(sizeof(struct name##_resp) == \
		       sizeof(struct ibv_resp_type) + sizeof(struct drv_resp), \
		       "padding in " #name "_resp")

/* Driver payload of commands whose driver part is empty. */
struct mana_empty {};

struct verbs_ex_private;

int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size, struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr, struct ibv_create_qp *cmd,
		      size_t cmd_size, struct ib_uverbs_create_qp_resp *resp,
		      size_t resp_size);
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *qp_attr,
			  struct ibv_create_qp_ex *cmd, size_t cmd_size,
			  struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_create_wq(struct ibv_context *context,
		      struct ibv_wq_init_attr *wq_init_attr, struct ibv_wq *wq,
		      struct ibv_create_wq *cmd, size_t cmd_size,
		      struct ib_uverbs_ex_create_wq_resp *resp,
		      size_t resp_size);
int ibv_cmd_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr,
		      struct ibv_modify_wq *cmd, size_t cmd_size);
int ibv_cmd_destroy_wq(struct ibv_wq *wq);
int ibv_cmd_create_rwq_ind_table(struct ibv_context *context,
				 struct ibv_rwq_ind_table_init_attr *init_attr,
				 struct ibv_rwq_ind_table *rwq_ind_table,
				 struct ib_uverbs_ex_create_rwq_ind_table_resp *resp,
				 size_t resp_size);
int ibv_cmd_destroy_rwq_ind_table(struct ibv_rwq_ind_table *rwq_ind_table);

/* Ioctl-only commands (IBVERBS_PRIVATE_34 from v34 on). */
struct ibv_command_buffer;
struct verbs_dm;
int ibv_cmd_alloc_dm(struct ibv_context *ctx,
		     const struct ibv_alloc_dm_attr *dm_attr,
		     struct verbs_dm *dm, struct ibv_command_buffer *link);
int ibv_cmd_free_dm(struct verbs_dm *dm);
int ibv_cmd_reg_dm_mr(struct ibv_pd *pd, struct verbs_dm *dm,
		      uint64_t offset, size_t length, unsigned int access,
		      struct verbs_mr *vmr, struct ibv_command_buffer *link);
/* v54 added the driver chain argument */
int ibv_cmd_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
			  uint64_t iova, int fd, int access,
			  struct verbs_mr *vmr
#if MANA_RDMA_CORE >= 54
			  , struct ibv_command_buffer *driver
#endif
			  );

#endif /* MANA_LIBIBVERBS_KERN_ABI_H */
