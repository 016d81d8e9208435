/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The uverbs ABI by hand, for the tests that drive the emulated kernel
 * without libibverbs: write() commands (legacy and extended) and
 * RDMA_VERBS_IOCTL calls.  The includer defines DRIVER_ID (the driver id
 * every ioctl header carries).
 */
#ifndef MANA_TESTS_UVERBS_RAW_H
#define MANA_TESTS_UVERBS_RAW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl.h>

/* A write() command: header, core (starting with the response pointer), udata. */
static int uv_write(int fd, uint32_t cmd, const void *core, size_t core_len,
		    const void *drv, size_t drv_len, size_t out_len)
{
	uint8_t buf[1024] = { 0 };
	struct ib_uverbs_cmd_hdr *h = (void *)buf;
	size_t len = sizeof(*h) + core_len + drv_len;

	h->command = cmd;
	h->in_words = len / 4;
	h->out_words = out_len / 4;
	memcpy(buf + sizeof(*h), core, core_len);
	if (drv_len)
		memcpy(buf + sizeof(*h) + core_len, drv, drv_len);
	return write(fd, buf, len) == (ssize_t)len ? 0 : errno;
}

/* An extended command: response and driver response share one buffer. */
static int uv_write_ex(int fd, uint32_t cmd, const void *core, size_t core_len,
		       const void *drv, size_t drv_len, void *resp,
		       size_t resp_len, size_t drv_resp_len)
{
	uint8_t buf[1024] = { 0 };
	struct ib_uverbs_cmd_hdr *h = (void *)buf;
	struct ib_uverbs_ex_cmd_hdr *ex = (void *)(buf + sizeof(*h));
	size_t len = sizeof(*h) + sizeof(*ex) + core_len + drv_len;

	h->command = IB_USER_VERBS_CMD_FLAG_EXTENDED | cmd;
	h->in_words = core_len / 8;
	h->out_words = resp_len / 8;
	ex->response = (uintptr_t)resp;
	ex->provider_in_words = drv_len / 8;
	ex->provider_out_words = drv_resp_len / 8;
	memcpy(buf + sizeof(*h) + sizeof(*ex), core, core_len);
	if (drv_len)
		memcpy(buf + sizeof(*h) + sizeof(*ex) + core_len, drv, drv_len);
	return write(fd, buf, len) == (ssize_t)len ? 0 : errno;
}

struct ioc {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attrs[16];
};

static void ioc_init(struct ioc *c, uint16_t object, uint16_t method)
{
	memset(c, 0, sizeof(*c));
	c->hdr.object_id = object;
	c->hdr.method_id = method;
	c->hdr.driver_id = DRIVER_ID;
}

static struct ib_uverbs_attr *ioc_attr(struct ioc *c, uint16_t id,
				       uint16_t len, uint64_t data)
{
	struct ib_uverbs_attr *a = &c->attrs[c->hdr.num_attrs++];

	a->attr_id = id;
	a->len = len;
	a->flags = UVERBS_ATTR_F_MANDATORY;
	a->data = data;
	return a;
}

static void ioc_ptr(struct ioc *c, uint16_t id, const void *p, uint16_t len)
{
	uint64_t v = 0;

	if (len <= 8) {
		memcpy(&v, p, len);	/* short inputs travel inline */
		ioc_attr(c, id, len, v);
	} else {
		ioc_attr(c, id, len, (uintptr_t)p);
	}
}

static int ioc_run(int fd, struct ioc *c)
{
	c->hdr.length = sizeof(c->hdr) + c->hdr.num_attrs * sizeof(c->attrs[0]);
	return ioctl(fd, RDMA_VERBS_IOCTL, c) ? errno : 0;
}

#endif /* MANA_TESTS_UVERBS_RAW_H */
