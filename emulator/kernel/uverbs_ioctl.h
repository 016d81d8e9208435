/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RDMA_VERBS_IOCTL internals shared by the framework (uverbs_ioctl.c) and
 * the files of native methods (uverbs_methods.c, uverbs_qp_methods.c):
 * attribute specs, the decoded call, the method tables and the attribute
 * accessors (uverbs_copy_from() and friends of the Linux uverbs core).
 * All run with emu.lock held and return -errno on failure.
 */
#ifndef MANA_EMU_UVERBS_IOCTL_H
#define MANA_EMU_UVERBS_IOCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uverbs.h"

enum spec_type { SPEC_PTR_IN, SPEC_PTR_OUT, SPEC_IDR, SPEC_FD };
enum spec_access { ACCESS_READ, ACCESS_DESTROY, ACCESS_NEW };

struct emu_attr_spec {
	uint16_t id;
	uint8_t type;
	bool mandatory;
	bool zero_trailing;	/* longer input allowed if the tail is zero */
	bool async;		/* SPEC_FD: async event fd, else comp channel */
	uint16_t min_len, len;
	uint8_t obj;		/* enum emu_obj_type for SPEC_IDR */
	uint8_t access;
};

/* Object types this device never creates (XRCD, SRQ): lookups fail. */
#define EMU_OBJ_NONE EMU_OBJ_TYPES

#define A_PTR_IN(_id, _min, _max, _mand)                                       \
	{ .id = _id, .type = SPEC_PTR_IN, .min_len = _min, .len = _max,        \
	  .mandatory = _mand }
#define A_PTR_OUT(_id, _min, _max, _mand)                                      \
	{ .id = _id, .type = SPEC_PTR_OUT, .min_len = _min, .len = _max,       \
	  .mandatory = _mand }
#define A_STRUCT_OUT(_id, _type, _last, _mand)                                 \
	{ .id = _id, .type = SPEC_PTR_OUT, .zero_trailing = true,              \
	  .min_len = OFFSETOFEND(_type, _last), .len = sizeof(_type),          \
	  .mandatory = _mand }
#define A_CONST_IN(_id, _mand) A_PTR_IN(_id, 8, 8, _mand)
#define A_FLAGS_IN(_id, _mand) A_PTR_IN(_id, 4, 8, _mand)
#define A_IDR(_id, _obj, _access)                                              \
	{ .id = _id, .type = SPEC_IDR, .obj = _obj, .access = _access,         \
	  .mandatory = true }
#define A_FD_NEW(_id)                                                          \
	{ .id = _id, .type = SPEC_FD, .access = ACCESS_NEW, .mandatory = true }
#define A_IDR_NEW(_id, _obj)                                                   \
	{ .id = _id, .type = SPEC_IDR, .obj = _obj, .access = ACCESS_NEW,      \
	  .mandatory = true }
#define A_IDR_IN(_id, _obj, _mand)                                             \
	{ .id = _id, .type = SPEC_IDR, .obj = _obj, .access = ACCESS_READ,     \
	  .mandatory = _mand }
#define A_FD_IN(_id, _async)                                                   \
	{ .id = _id, .type = SPEC_FD, .access = ACCESS_READ, .async = _async }
#define A_U32_IN(_id, _mand) A_PTR_IN(_id, 4, 4, _mand)
#define A_U64_IN(_id, _mand) A_PTR_IN(_id, 8, 8, _mand)
#define A_U32_OUT(_id, _mand) A_PTR_OUT(_id, 4, 4, _mand)

/* Attribute ids are small except UHW_IN/OUT; they get the last slots. */
#define ATTR_SLOTS 24
#define SLOT_UHW_IN (ATTR_SLOTS - 2)
#define SLOT_UHW_OUT (ATTR_SLOTS - 1)

struct emu_attr {
	bool present;
	uint16_t uidx;		/* index in the application's array */
	uint16_t len;
	uint64_t data;
	const void *ptr;	/* inline data (our copy) or user pointer */
	struct emu_obj *obj;
	struct emu_event_file *ev;	/* SPEC_FD, ACCESS_READ */
};

struct emu_method;

struct emu_call {
	struct emu_file *file;
	const struct emu_method *method;
	struct ib_uverbs_attr *uattrs;		/* our copy */
	struct ib_uverbs_attr *user_attrs;	/* the application's */
	struct emu_attr attrs[ATTR_SLOTS];
	struct emu_bundle b;
	const char *detail;			/* for the log */
};

struct emu_method {
	uint16_t object, method;
	const char *name;
	int (*handler)(struct emu_call *c);
	bool has_udata;
	const struct emu_attr_spec *specs;
	unsigned int nspecs;
	/* NULL: always there; else whether this kernel and device have it */
	bool (*present)(const struct emu_call *c);
};

#define METHOD(_obj, _meth, _fn, _udata, _specs)                               \
	{ .object = UVERBS_OBJECT_##_obj, .method = UVERBS_METHOD_##_meth,     \
	  .name = #_obj "/" #_meth, .handler = _fn, .has_udata = _udata,       \
	  .specs = _specs, .nspecs = ARRAY_SIZE(_specs) }

/* A method the uverbs core offers only where @_present says so. */
#define METHOD_IF(_obj, _meth, _fn, _udata, _specs, _present)                  \
	{ .object = UVERBS_OBJECT_##_obj, .method = UVERBS_METHOD_##_meth,     \
	  .name = #_obj "/" #_meth, .handler = _fn, .has_udata = _udata,       \
	  .specs = _specs, .nspecs = ARRAY_SIZE(_specs), .present = _present }

/* The methods of one file; uverbs_ioctl.c lists every table. */
struct emu_method_table {
	const struct emu_method *methods;
	size_t n;
};

#define METHOD_TABLE(_methods)                                                 \
	{ .methods = _methods, .n = ARRAY_SIZE(_methods) }

/* uverbs_methods.c, uverbs_qp_methods.c */
extern const struct emu_method_table uverbs_device_methods;
extern const struct emu_method_table uverbs_qp_methods;
extern const struct emu_method_table uverbs_mem_methods;

/* The attribute @id if the call has it, else NULL. */
struct emu_attr *call_attr(struct emu_call *c, unsigned int id);
/* uverbs_set_output(): tell user space the attribute was written */
int set_output(struct emu_call *c, struct emu_attr *a);
/* Up to the attribute's length of @src to an output attribute. */
int call_copy_to(struct emu_call *c, unsigned int id, const void *src,
		 size_t len);
/* uverbs_get_const(): the raw 64-bit value, bounded by the C type */
int call_get_const(struct emu_call *c, unsigned int id, uint64_t max,
		   uint64_t *out);
/* uverbs_get_flags64(): absent means 0; 4 or 8 bytes; known bits only */
int call_get_flags(struct emu_call *c, unsigned int id, uint64_t allowed,
		   uint64_t *out);
/* The file's context, or NULL and *err -EINVAL before GET_CONTEXT. */
struct emu_ucontext *call_ctx(struct emu_call *c, int *err);
/* uverbs_copy_from(): an exact-size input attribute */
int call_copy_from(struct emu_call *c, unsigned int id, void *dst,
		   size_t size);
/* uverbs_copy_from_or_zero(): a shorter attribute is zero-extended */
int call_copy_from_or_zero(struct emu_call *c, unsigned int id, void *dst,
			   size_t size);
/* The new object's handle goes back in the IDR attribute's data. */
int call_set_handle(struct emu_call *c, unsigned int id, uint64_t handle);
/* The object an IDR attribute names, or NULL if absent. */
void *call_obj(struct emu_call *c, unsigned int id);
/* Generic DESTROY method: the object of the call's attribute 0. */
int m_destroy(struct emu_call *c);

#endif /* MANA_EMU_UVERBS_IOCTL_H */
