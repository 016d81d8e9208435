/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Emulated mana_ib: device attributes, uverbs files, user contexts and
 * the objects they own, with the rules the real driver and the uverbs
 * core apply.  Every function here expects emu.lock to be held.
 *
 * Object model: a uverbs file (one open() of the char device) holds at
 * most one user context.  The context owns every object created through
 * the file, each with a handle from one per-context handle space (lowest
 * free first, like the kernel's per-file xarray).  An object holds a use
 * reference on each object it depends on (MR -> PD, WQ -> PD and CQ, QP
 * -> PD, CQs and indirection table, table -> WQs); an object that is in
 * use cannot be destroyed (EBUSY).  Closing the file destroys everything
 * the context still owns, newest first.
 */
#ifndef MANA_EMU_KERNEL_H
#define MANA_EMU_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu.h"

struct ib_uverbs_ex_query_device_resp;
struct ib_uverbs_query_port_resp;

/* Driver data (udata) or core data of one command, in application memory. */
struct emu_udata {
	const void *inbuf;
	size_t inlen;
	void *outbuf;
	size_t outlen;
};

int emu_udata_in_empty(const struct emu_udata *udata);
int emu_udata_respond(const struct emu_udata *udata, const void *src,
		      size_t len);

enum emu_obj_type {
	EMU_OBJ_PD,
	EMU_OBJ_MR,
	EMU_OBJ_CQ,
	EMU_OBJ_WQ,
	EMU_OBJ_QP,
	EMU_OBJ_IND_TBL,
	EMU_OBJ_TYPES,
};

struct emu_ucontext;

struct emu_obj {
	enum emu_obj_type type;
	uint32_t handle;
	struct emu_ucontext *ctx;
	unsigned int usecnt;		/* objects depending on this one */
	unsigned int ndeps;
	struct emu_obj **deps;		/* objects this one depends on */
	struct emu_obj *prev, *next;	/* creation order within ctx */
	void (*release)(struct emu_obj *obj);	/* type-specific teardown */
};

struct emu_pd {
	struct emu_obj obj;
	uint32_t pdn;
};

struct emu_mr {
	struct emu_obj obj;
	uint64_t start, length, iova;
	uint32_t access, lkey, rkey;
};

struct emu_port {
	uint8_t mac[6];
	bool netdev_up;		/* the kernel netdev holds the vport */
};

struct emu_device {
	const struct mana_emu_options *opts;
	unsigned int nports;
	struct emu_port ports[MANA_EMU_MAX_PORTS];
	uint64_t node_guid;		/* host order */
	uint32_t driver_id;
	uint32_t max_qp_wr;
	uint32_t num_comp_vectors;
	uint64_t pinned_bytes;		/* for RLIMIT_MEMLOCK */
};

extern struct emu_device emu_dev;

struct emu_event_file;

/* One open() of /dev/infiniband/uverbsN. */
struct emu_file {
	int fd;
	unsigned int devnum;
	bool writable;
	struct emu_ucontext *ctx;
	struct emu_event_file *events;	/* async fds and comp channels */
};

struct emu_ucontext {
	struct emu_file *file;
	uint32_t doorbell;		/* doorbell page index */
	int db_memfd;			/* backing of the doorbell page */
	struct emu_obj **handles;
	uint32_t nhandles;
	struct emu_obj *first, *last;	/* creation order */
};

/* An async event fd or a completion channel: one end of a socketpair. */
struct emu_event_file {
	bool async;
	int app_fd;			/* given to the application */
	int dev_fd;			/* kept by the emulator to post events */
	struct emu_file *owner;		/* NULL once the uverbs file closed */
	struct emu_event_file *next;
};

void emu_kernel_init(const struct mana_emu_options *opts);

/* Query verbs (fill the core responses) */
void emu_query_device(struct ib_uverbs_ex_query_device_resp *resp);
int emu_query_port(unsigned int port, struct ib_uverbs_query_port_resp *resp);
bool emu_port_valid(unsigned int port);

/* Files and contexts */
struct emu_file *emu_file_open(unsigned int devnum, int fd, bool writable);
void emu_file_release(struct emu_file *file);
int emu_ucontext_create(struct emu_file *file, const struct emu_udata *uhw);
void emu_ucontext_destroy(struct emu_ucontext *ctx);

/* Event files: create, abort a not yet committed one, app closed its fd */
int emu_event_file_create(struct emu_file *file, bool async,
			  struct emu_event_file **out);
void emu_event_file_abort(struct emu_event_file *ev);
void emu_event_file_app_closed(struct emu_event_file *ev);
/* Size of one event record: async 16 bytes, completion 8 bytes */
size_t emu_event_size(const struct emu_event_file *ev);

/* Objects */
struct emu_obj *emu_obj_lookup(struct emu_ucontext *ctx,
			       enum emu_obj_type type, uint64_t handle,
			       int *err);
int emu_obj_destroy(struct emu_obj *obj);

int emu_pd_alloc(struct emu_ucontext *ctx, const struct emu_udata *uhw,
		 struct emu_pd **out);

struct emu_mr_req {
	uint64_t start, length, iova;
	uint32_t access;
};

int emu_check_mr_access(uint32_t access);
int emu_mr_reg(struct emu_pd *pd, const struct emu_mr_req *req,
	       const struct emu_udata *uhw, struct emu_mr **out);

/* Doorbell page mapping (mmap of the uverbs fd) */
void *emu_uverbs_mmap(struct emu_file *file, void *addr, size_t len,
		      int prot, int flags, off_t offset, int *err);
bool emu_mmap_tracked(void);
void emu_munmap_notify(void *addr, size_t len);

/* Test API counters */
struct mana_emu_counts;
void emu_fill_counts(struct mana_emu_counts *out);

#endif /* MANA_EMU_KERNEL_H */
