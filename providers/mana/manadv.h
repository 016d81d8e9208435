/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * manadv: direct verbs for the Microsoft Azure Network Adapter.
 *
 * API and ABI compatible with rdma-core's <infiniband/manadv.h>: the same
 * names, values and structure layouts, so programs built against either
 * header run with either library.
 */
#ifndef MANA_DV_H
#define MANA_DV_H

#include <stdint.h>
#include <stddef.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

enum manadv_set_ctx_attr_type {
	/* attr points to a struct manadv_ctx_allocators */
	MANADV_CTX_ATTR_BUF_ALLOCATORS = 0,
};

/*
 * Queue memory allocator.  When set, every CQ, WQ and SQ buffer of the
 * context is obtained from alloc(size, data) and returned with
 * free(ptr, data); buffers must be page aligned and zeroed.
 */
struct manadv_ctx_allocators {
	void *(*alloc)(size_t size, void *priv_data);
	void (*free)(void *ptr, void *priv_data);
	void *data;
};

/*
 * resource_type passed to parent domain allocators
 * (IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) for MANA queue buffers.
 */
enum manadv_res_type {
	MANADV_RES_TYPE_CQ = 1,
	MANADV_RES_TYPE_RQ = 2,
	MANADV_RES_TYPE_SQ = 3,
};

int manadv_set_context_attr(struct ibv_context *ibv_ctx,
			    enum manadv_set_ctx_attr_type type, void *attr);

struct manadv_qp {
	void *sq_buf;
	uint32_t sq_count;
	uint32_t sq_size;
	uint32_t sq_id;
	uint32_t tx_vp_offset;
	void *db_page;
};

struct manadv_cq {
	void *buf;
	uint32_t count;
	uint32_t cq_id;
};

struct manadv_rwq {
	void *buf;
	uint32_t count;
	uint32_t size;
	uint32_t wq_id;
	void *db_page;
};

/* The PD number the kernel gave (MANADV_OBJ_PD; MANA_1.1). */
struct manadv_pd {
	uint32_t pdn;
};

struct manadv_obj {
	struct {
		struct ibv_qp *in;
		struct manadv_qp *out;
	} qp;

	struct {
		struct ibv_cq *in;
		struct manadv_cq *out;
	} cq;

	struct {
		struct ibv_wq *in;
		struct manadv_rwq *out;
	} rwq;

	struct {
		struct ibv_pd *in;
		struct manadv_pd *out;
	} pd;
};

enum manadv_obj_type {
	MANADV_OBJ_QP = 1 << 0,
	MANADV_OBJ_CQ = 1 << 1,
	MANADV_OBJ_RWQ = 1 << 2,
	MANADV_OBJ_PD = 1 << 3,
};

/* manadv_alloc_pd() flags */
enum {
	/* a PD whose number fits in 16 bits */
	MANADV_PD_FLAGS_SHORT_PDN = 1 << 0,
};

int manadv_init_obj(struct manadv_obj *obj, uint64_t obj_type);

/* A protection domain with MANA-specific creation flags (MANA_1.1). */
struct ibv_pd *manadv_alloc_pd(struct ibv_context *context, uint32_t flags);

#ifdef __cplusplus
}
#endif

#endif /* MANA_DV_H */
