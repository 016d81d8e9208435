// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Event files: the async event fd and completion channels of a uverbs
 * file, each a socket pair whose device end the emulator writes.
 */
#include "kernel.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "emulator/device/device.h"
#include "emulator/core/emu_defs.h"
#include "emulator/mana_emu.h"
#include "providers/mana/gdma.h"
#include "emulator/device/trap.h"
#include "emulator/lib/libc.h"

static void event_records_free(struct emu_event_file *ev)
{
	while (ev->head) {
		struct emu_event *e = ev->head;

		ev->head = e->next;
		free(e);
	}
	ev->tail = NULL;
}

int emu_event_file_create(struct emu_file *file, bool async,
			  struct emu_event_file **out)
{
	struct emu_event_file *ev;
	int sv[2], ret;

	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		ret = -errno;
		goto err_free;
	}
	/* Posting an event must never block the emulator. */
	emu_libc_fcntl_int(sv[1], F_SETFL, O_NONBLOCK);
	ret = emu_fd_register(sv[0], EMU_FD_EVENT, ev);
	if (ret)
		goto err_close;
	ev->async = async;
	ev->app_fd = sv[0];
	ev->dev_fd = sv[1];
	ev->owner = file;
	ev->next = file->events;
	file->events = ev;
	if (!async)
		kernel_comp_channel_count++;
	else
		emu_link_watch();
	*out = ev;
	return 0;

err_close:
	emu_libc_close(sv[0]);
	emu_libc_close(sv[1]);
err_free:
	free(ev);
	return ret;
}

/*
 * Detach from the uverbs file: no more events, and the peer end closes so
 * a reader blocked in read() wakes up (and gets EIO).
 */
static void event_file_unlink(struct emu_event_file *ev)
{
	struct emu_event_file **pp;

	if (!ev->owner)
		return;
	for (pp = &ev->owner->events; *pp; pp = &(*pp)->next) {
		if (*pp == ev) {
			*pp = ev->next;
			break;
		}
	}
	if (!ev->async)
		kernel_comp_channel_count--;
	ev->owner = NULL;
	event_records_free(ev);
	if (ev->dev_fd >= 0)
		emu_libc_close(ev->dev_fd);
	ev->dev_fd = -1;
}

/* Undo a create whose command failed afterwards: the fd never existed. */
void emu_event_file_abort(struct emu_event_file *ev)
{
	event_file_unlink(ev);
	emu_fd_unregister(ev->app_fd);
	emu_libc_close(ev->app_fd);
	free(ev);
}

/*
 * The application closed its end; the caller closes app_fd itself.  A
 * channel still named by CQs lives on (silently) until the last one goes,
 * as the kernel's CQs hold a reference on the channel's file.
 */
void emu_event_file_app_closed(struct emu_event_file *ev)
{
	event_file_unlink(ev);
	emu_fd_unregister(ev->app_fd);
	ev->app_fd = -1;
	if (ev->cq_refs) {
		ev->app_closed = true;
		return;
	}
	free(ev);
}

size_t emu_event_size(const struct emu_event_file *ev)
{
	return ev->async ? sizeof(struct ib_uverbs_async_event_desc) :
			   sizeof(struct ib_uverbs_comp_event_desc);
}

/* The uverbs file went away: the event fds stay open but report EIO. */
void event_files_detach(struct emu_file *file)
{
	while (file->events)
		event_file_unlink(file->events);
}

struct emu_event_file *emu_event_file_get(struct emu_file *file, int fd,
					  bool async)
{
	struct emu_event_file *ev = emu_fd_obj(fd, EMU_FD_EVENT);

	if (!ev || ev->owner != file || ev->async != async)
		return NULL;
	return ev;
}

static void event_post(struct emu_event_file *ev, struct emu_cq *cq,
		       struct emu_qp *qp, const void *data, size_t len)
{
	static const char token;
	struct emu_event *e;

	if (!ev->owner || ev->dev_fd < 0)
		return;
	e = calloc(1, sizeof(*e));
	if (!e)
		return;
	e->cq = cq;
	e->qp = qp;
	memcpy(e->data, data, len < sizeof(e->data) ? len : sizeof(e->data));
	if (ev->tail)
		ev->tail->next = e;
	else
		ev->head = e;
	ev->tail = e;
	/* a full socket only delays the wake-up: the record stays queued */
	if (emu_libc_send(ev->dev_fd, &token, 1, MSG_DONTWAIT) < 0 && emu_verbose())
		emu_log("event fd %d: token not sent: %s", ev->app_fd,
			emu_errname(errno));
}

void emu_event_post(struct emu_event_file *ev, struct emu_cq *cq,
		    const void *data, size_t len)
{
	event_post(ev, cq, NULL, data, len);
}

int emu_event_pop(struct emu_event_file *ev, void *out, size_t len)
{
	struct emu_event *e = ev->head;

	if (!e)
		return -EAGAIN;
	ev->head = e->next;
	if (!ev->head)
		ev->tail = NULL;
	memcpy(out, e->data, len);
	/* the destroy response reports what the application has read */
	if (e->qp)
		e->qp->events_reported++;
	else if (e->cq && ev->async)
		e->cq->async_events_reported++;
	else if (e->cq)
		e->cq->comp_events_reported++;
	free(e);
	return 0;
}

/* A CQ goes away: its undelivered events go with it, tokens included. */
void event_records_drop_cq(struct emu_event_file *ev, struct emu_cq *cq)
{
	struct emu_event **pp = &ev->head, *e;
	char token;

	ev->tail = NULL;
	while ((e = *pp)) {
		if (e->cq != cq) {
			ev->tail = e;
			pp = &e->next;
			continue;
		}
		*pp = e->next;
		free(e);
		if (ev->app_fd >= 0)
			emu_libc_recv(ev->app_fd, &token, 1, MSG_DONTWAIT);
	}
}

/* IB_EVENT_QP_FATAL and its kin: the record carries the QP's user handle. */
void emu_post_qp_event(struct emu_ucontext *ctx, struct emu_qp *qp,
		       uint64_t user_handle, uint32_t event_type)
{
	struct ib_uverbs_async_event_desc desc = {
		.element = user_handle, .event_type = event_type,
	};
	struct emu_event_file *ev;

	if (emu_verbose())
		emu_log("QP %u: async event %u", qp->qp_num, event_type);
	for (ev = ctx->file->events; ev; ev = ev->next)
		if (ev->async)
			event_post(ev, NULL, qp, &desc, sizeof(desc));
}

/* ib_uverbs_release_uevent(): a destroyed QP's unread events go. */
void event_records_drop_qp(struct emu_ucontext *ctx, struct emu_qp *qp)
{
	struct emu_event_file *ev;
	struct emu_event **pp, *e;
	char token;

	for (ev = ctx->file->events; ev; ev = ev->next) {
		pp = &ev->head;
		ev->tail = NULL;
		while ((e = *pp)) {
			if (e->qp != qp) {
				ev->tail = e;
				pp = &e->next;
				continue;
			}
			*pp = e->next;
			free(e);
			if (ev->app_fd >= 0)
				emu_libc_recv(ev->app_fd, &token, 1, MSG_DONTWAIT);
		}
	}
}

void emu_post_device_fatal(void)
{
	struct ib_uverbs_async_event_desc desc = {
		.element = 0, .event_type = IBV_EVENT_DEVICE_FATAL,
	};
	struct emu_ucontext *ctx;
	struct emu_event_file *ev;

	for (ctx = kernel_contexts; ctx; ctx = ctx->next)
		for (ev = ctx->file->events; ev; ev = ev->next)
			if (ev->async)
				emu_event_post(ev, NULL, &desc, sizeof(desc));
}

/*
 * ib_uverbs_async_handler() for a port event: every open file of the
 * device with an async event file, the port number as the element.
 */
void emu_post_port_event(const struct emu_ibdev *d, unsigned int port,
			 uint32_t event_type)
{
	struct ib_uverbs_async_event_desc desc = {
		.element = port, .event_type = event_type,
	};
	struct emu_ucontext *ctx;
	struct emu_event_file *ev;

	if (emu_verbose())
		emu_log("%s port %u: async event %s", d->name, port,
			event_type == IBV_EVENT_PORT_ACTIVE ? "PORT_ACTIVE" :
							      "PORT_ERR");
	for (ctx = kernel_contexts; ctx; ctx = ctx->next)
		if (ctx->file->devnum == d->index)
			for (ev = ctx->file->events; ev; ev = ev->next)
				if (ev->async)
					emu_event_post(ev, NULL, &desc,
						       sizeof(desc));
}

