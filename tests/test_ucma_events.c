// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The two ucma commands of Linux 6.17 (RDMA/ucma: "Support write an event
 * into a CM", with IB service resolution), through the rdma_cm character
 * device as librdmacm writes them (Debian 12's librdmacm predates them):
 *   WRITE_CM_EVENT  USER and INTERNAL events come back from GET_EVENT with
 *                   the id, status and 64-bit argument given; any other
 *                   event is EINVAL; an unknown id ENOENT
 *   RESOLVE_IB_SERVICE  an SA query: EINVAL unless the id is bound to the
 *                   device, then EOPNOTSUPP on RoCE
 * Before 6.17 both are beyond the kernel's command table: EINVAL.
 * Run under mana-emu --ip=10.0.0.1/24 [--kernel=V]; argv[1] "new"/"old".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_user_cm.h>

#include "check.h"

#define CMD_RESOLVE_IB_SERVICE 23
#define CMD_WRITE_CM_EVENT 24
#define EV_USER 18
#define EV_INTERNAL 19

static int fd;

/* One command: 0 or the errno write() gave. */
static int ucma(uint32_t cmd, void *in, uint16_t in_len, uint16_t out)
{
	struct {
		struct rdma_ucm_cmd_hdr hdr;
		uint8_t body[512];	/* the largest: WRITE_CM_EVENT, 288 */
	} m;

	memset(&m, 0, sizeof(m));
	m.hdr.cmd = cmd;
	m.hdr.in = in_len;
	m.hdr.out = out;
	memcpy(m.body, in, in_len);
	return write(fd, &m, sizeof(m.hdr) + in_len) < 0 ? errno : 0;
}

static uint32_t create_id(void)
{
	struct rdma_ucm_create_id c = { .uid = 7, .ps = RDMA_PS_TCP,
					.qp_type = 2 /* IB_QPT_RC */ };
	struct rdma_ucm_create_id_resp r = { 0 };

	c.response = (uintptr_t)&r;
	CHECK_ERRNO(ucma(RDMA_USER_CM_CMD_CREATE_ID, &c, sizeof(c), sizeof(r)),
		    0);
	return r.id;
}

static int write_event(uint32_t id, uint32_t event, uint32_t status,
		       uint64_t arg)
{
	struct {
		uint32_t id, reserved, event, status;
		union {
			struct rdma_ucm_conn_param conn;
			uint64_t arg;
		} param;
	} w;

	memset(&w, 0, sizeof(w));
	w.id = id;
	w.event = event;
	w.status = status;
	w.param.arg = arg;
	return ucma(CMD_WRITE_CM_EVENT, &w, sizeof(w), 0);
}

static int get_event(struct rdma_ucm_event_resp *r)
{
	struct rdma_ucm_get_event g = { .response = (uintptr_t)r };

	memset(r, 0, sizeof(*r));
	return ucma(RDMA_USER_CM_CMD_GET_EVENT, &g, sizeof(g), sizeof(*r));
}

static int resolve_ib_service(uint32_t id)
{
	/* id, reserved, then rdma_ucm_ib_service: flags, service id, name */
	uint8_t in[8 + 8 + 8 + 64] = { 0 };

	memcpy(in, &id, sizeof(id));
	in[8] = 1;	/* RDMA_USER_CM_IB_SERVICE_FLAG_ID */
	return ucma(CMD_RESOLVE_IB_SERVICE, in, sizeof(in), 0);
}

static void bind_ip(uint32_t id, const char *ip)
{
	struct rdma_ucm_bind b = { .id = id };
	struct sockaddr_in *sin = (struct sockaddr_in *)&b.addr;

	sin->sin_family = AF_INET;
	inet_pton(AF_INET, ip, &sin->sin_addr);
	b.addr_size = sizeof(*sin);
	CHECK_ERRNO(ucma(RDMA_USER_CM_CMD_BIND, &b, sizeof(b), 0), 0);
}

int main(int argc, char **argv)
{
	struct rdma_ucm_event_resp r;
	uint64_t arg;
	uint32_t id;
	int new = argc > 1 && !strcmp(argv[1], "new");

	fd = open("/dev/infiniband/rdma_cm", O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0, "open: %s", strerror(errno));
	if (fd < 0)
		return check_done();
	id = create_id();
	if (!new) {
		CHECK_ERRNO(write_event(id, EV_USER, 0, 1), EINVAL);
		CHECK_ERRNO(resolve_ib_service(id), EINVAL);
		return check_done();
	}
	CHECK_ERRNO(write_event(id, EV_USER, 0x11223344,
				0x55667788aabbccddull), 0);
	CHECK_ERRNO(write_event(id, EV_INTERNAL, 0, 16), 0);
	CHECK_ERRNO(write_event(id, 9 /* ESTABLISHED */, 0, 0), EINVAL);
	CHECK_ERRNO(write_event(id + 100, EV_USER, 0, 0), ENOENT);
	CHECK_ERRNO(get_event(&r), 0);
	memcpy(&arg, &r.param, sizeof(arg));
	CHECK(r.event == EV_USER && r.status == 0x11223344 && r.id == id &&
	      r.uid == 7 && arg == 0x55667788aabbccddull,
	      "event %u status 0x%x id %u uid %llu arg 0x%llx", r.event,
	      r.status, r.id, (unsigned long long)r.uid,
	      (unsigned long long)arg);
	CHECK_ERRNO(get_event(&r), 0);
	memcpy(&arg, &r.param, sizeof(arg));
	CHECK(r.event == EV_INTERNAL && arg == 16, "event %u arg %llu",
	      r.event, (unsigned long long)arg);
	/* not bound to the device yet, then bound: RoCE has no SA */
	CHECK_ERRNO(resolve_ib_service(id), EINVAL);
	bind_ip(id, "10.0.0.1");
	CHECK_ERRNO(resolve_ib_service(id), EOPNOTSUPP);
	close(fd);
	return check_done();
}
