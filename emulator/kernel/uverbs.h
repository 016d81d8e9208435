/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * uverbs ABI decoding: the write() command ABI and RDMA_VERBS_IOCTL.
 * Both run with emu.lock held and return -errno on failure.
 */
#ifndef MANA_EMU_UVERBS_H
#define MANA_EMU_UVERBS_H

#include <sys/types.h>

struct emu_file;

/* Returns count on success, like the kernel's ib_uverbs_write(). */
ssize_t emu_uverbs_write(struct emu_file *file, const void *buf,
			 size_t count);
int emu_uverbs_ioctl(struct emu_file *file, unsigned long request, void *arg);

/*
 * ---- shared by the two decoders and their command files only -------------
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define OFFSETOFEND(type, member)                                              \
	(offsetof(type, member) + sizeof(((type *)0)->member))
#define USER_ADDR_LIMIT 0x800000000000ULL	/* x86-64 user address space */

struct emu_call;

/* What a command handler sees: the core and driver buffers (ib_udata). */
struct emu_bundle {
	struct emu_file *file;
	struct emu_udata ucore;
	struct emu_udata uhw;
	struct emu_call *call;		/* NULL for write() */
};

/* A write() command: its handler and its sizes. */
struct emu_write_cmd {
	const char *name;
	int (*handler)(struct emu_bundle *b);
	bool is_ex;
	bool has_udata;		/* driver data follows the core struct */
	bool has_resp;		/* core starts with a u64 response pointer */
	uint16_t req_size;	/* minimum core request */
	uint16_t resp_size;	/* minimum core response */
};

/* The driver's or the core's buffers; empty ones are NULL. */
static inline void udata_init(struct emu_udata *u, const void *in,
			      size_t inlen, void *out, size_t outlen)
{
	u->inbuf = inlen ? in : NULL;
	u->inlen = inlen;
	u->outbuf = outlen ? out : NULL;
	u->outlen = outlen;
}

/* uverbs.c: the write ABI */
const struct emu_write_cmd *get_write_cmd(uint32_t command, int *err);
int fault_cmd(const char *name);

/* uverbs.c: what every write() command handler uses */
/* Copy the core request: shorter is zero-filled, longer must be zero. */
int emu_request(struct emu_bundle *b, void *req, size_t len);
/* Write the core response; any extra room the caller gave is zeroed. */
int emu_response(struct emu_bundle *b, const void *resp, size_t len);
/* The file's context, or NULL and *err -EINVAL before GET_CONTEXT. */
struct emu_ucontext *bundle_ctx(struct emu_bundle *b, int *err);
/* A create command's response, or the new object undone if it fails. */
int respond_created(struct emu_bundle *b, const void *resp, size_t len,
		    struct emu_obj *obj);
/* uobj_perform_destroy(): look the handle up, destroy unless in use. */
int destroy_handle(struct emu_bundle *b, enum emu_obj_type type,
		   uint32_t handle);

/*
 * uverbs_qp.c: the write() commands on CQs, QPs, WQs and RWQ indirection
 * tables, named in uverbs.c's command tables.  A new command: its
 * handler here (or in a file of its own) and one row in write_cmds[] or
 * write_ex_cmds[].
 */
int cmd_create_cq(struct emu_bundle *b);
int cmd_ex_create_cq(struct emu_bundle *b);
int cmd_destroy_cq(struct emu_bundle *b);
int cmd_create_qp(struct emu_bundle *b);
int cmd_ex_create_qp(struct emu_bundle *b);
int cmd_destroy_qp(struct emu_bundle *b);
int cmd_modify_qp(struct emu_bundle *b);
int cmd_ex_modify_qp(struct emu_bundle *b);
int cmd_ex_create_wq(struct emu_bundle *b);
int cmd_ex_destroy_wq(struct emu_bundle *b);
int cmd_ex_modify_wq(struct emu_bundle *b);
int cmd_ex_create_rwq_ind_tbl(struct emu_bundle *b);
int cmd_ex_destroy_rwq_ind_tbl(struct emu_bundle *b);
/* 0 for a QP type the core knows (the driver then decides), else -errno */
int qp_type_known(uint32_t type);

/* uverbs_ioctl.c: an INVOKE_WRITE call's core output attribute */
bool call_has_attr(struct emu_call *c, unsigned int id);
int call_copy_to_struct_or_zero(struct emu_call *c, unsigned int id,
				const void *src, size_t len);

#endif /* MANA_EMU_UVERBS_H */
