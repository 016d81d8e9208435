// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mana-vfio: the MANA VF (mana_fn.c) served over vfio-user, so that QEMU's
 * vfio-user-pci (QEMU >= 10.1) puts it in a guest and the real Linux mana
 * driver probes it.
 *
 *   mana-vfio --socket=PATH [--mac=XX:XX:XX:XX:XX:XX] [--backend=SPEC]
 *
 * --backend puts the VF's frames on one of mana-emu's wires (emulator/
 * wire/: null, loopback (back into the VF, after the write that sent
 * them), socket:DIR, a virtual switch mana-emu VMs join, or tap:IFNAME);
 * without it the guest's frames are completed and dropped.
 *
 * MANA_VFIO_VERBOSE=1 logs every vfio-user message and HWC request.
 *
 * Listens on PATH (a Unix socket it creates; an existing file is an error),
 * serves one client and exits when the client goes: guest memory unmapped,
 * eventfds closed, PATH removed (also on SIGTERM/SIGINT/SIGHUP).  One
 * thread: a message is read whole, decoded fail-closed (vfio_user.h), acted
 * on and answered before the next.  A message that cannot be framed (bad
 * header, too many descriptors, short read) ends the connection; one that
 * frames but does not decode gets an EINVAL reply.  Guest memory comes only
 * from DMA_MAP descriptors (QEMU needs -object memory-backend-memfd,share=on)
 * and the device reaches it only inside those maps.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "emulator/wire/backend.h"
#include "mana_fn.h"
#include "vfio_user.h"

#define MAX_MAPS	64
#define USAGE	"usage: mana-vfio --socket=PATH [--mac=XX:XX:XX:XX:XX:XX] " \
		"[--backend=null|loopback|socket:DIR|tap:IFNAME]\n"

struct dma_map {
	uint64_t addr, size;
	uint8_t *host;		/* NULL: the client shared no descriptor */
};

struct server {
	int fd;
	struct dma_map maps[MAX_MAPS];
	int msix_fd[MANA_FN_MSIX];
	struct mana_fn *fn;
	uint8_t *msg, *reply;
	int fds[VFU_MAX_FDS];
	unsigned int nfds;
	/*
	 * The wire's receive thread delivers frames into the function while
	 * this thread serves QEMU: one lock around every mana_fn call.
	 */
	pthread_mutex_t lock;
	struct backend *wire;
	/* the RC transport's timers: a thread that ticks it (same lock) */
	pthread_t ticker;
	bool ticking;		/* atomic: cleared to stop it */
};

static const char *sock_path;
static volatile sig_atomic_t stop;
static bool verbose;	/* MANA_VFIO_VERBOSE=1: every message */

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void *srv_dma(void *ctx, uint64_t gpa, size_t len)
{
	struct server *s = ctx;
	int i;

	if (!len || gpa + len < gpa)
		return NULL;
	for (i = 0; i < MAX_MAPS; i++) {
		struct dma_map *m = &s->maps[i];

		if (m->size && gpa >= m->addr && gpa + len <= m->addr + m->size)
			return m->host ? m->host + (gpa - m->addr) : NULL;
	}
	return NULL;
}

static void srv_irq(void *ctx, uint32_t vector)
{
	struct server *s = ctx;
	uint64_t one = 1;

	if (vector >= MANA_FN_MSIX || s->msix_fd[vector] < 0) {
		if (verbose)
			fprintf(stderr, "mana-vfio: MSI-X %u: no eventfd\n", vector);
		return;
	}
	if (write(s->msix_fd[vector], &one, sizeof(one)) != sizeof(one))
		fprintf(stderr, "mana-vfio: MSI-X %u: %s\n", vector, strerror(errno));
}

/* A frame the guest sent: to the wire (if any); the first few logged. */
static void srv_frame(void *ctx, const uint8_t *f, uint32_t len)
{
	static unsigned int logged;
	struct server *s = ctx;

	if (s->wire)
		backend_xmit(s->wire, f, len);
	if (logged++ < 8)
		fprintf(stderr, "mana-vfio: TX frame %u bytes, %02x:%02x:%02x:%02x:%02x:%02x -> "
			"%02x:%02x:%02x:%02x:%02x:%02x type %02x%02x\n", len,
			f[6], f[7], f[8], f[9], f[10], f[11],
			f[0], f[1], f[2], f[3], f[4], f[5], f[12], f[13]);
}

/* A frame from the wire (its receive thread) into the guest. */
static void srv_rx(void *ctx, unsigned int port, const void *frame, size_t len)
{
	struct server *s = ctx;

	(void)port;
	pthread_mutex_lock(&s->lock);
	mana_fn_rx(s->fn, frame, (uint32_t)len);
	pthread_mutex_unlock(&s->lock);
}

/*
 * Retransmission and RNR waits are tens of milliseconds and more: a tick
 * every 2 ms is exact enough and costs nothing while no timer is due.
 */
static void *srv_ticker(void *arg)
{
	struct server *s = arg;
	const struct timespec period = { 0, 2000000 };

	while (__atomic_load_n(&s->ticking, __ATOMIC_ACQUIRE)) {
		nanosleep(&period, NULL);
		pthread_mutex_lock(&s->lock);
		mana_fn_tick(s->fn);
		pthread_mutex_unlock(&s->lock);
	}
	return NULL;
}

static void close_fds(struct server *s)
{
	unsigned int i;

	for (i = 0; i < s->nfds; i++)
		if (s->fds[i] >= 0)
			close(s->fds[i]);
	s->nfds = 0;
}

/* Read one message whole, with its descriptors; 0, or -1 to disconnect. */
static int read_msg(struct server *s, uint32_t *size)
{
	char ctl[CMSG_SPACE(sizeof(int) * VFU_MAX_FDS)];
	struct iovec iov = { s->msg, VFU_HDR_SIZE };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl, .msg_controllen = sizeof(ctl),
	};
	struct cmsghdr *c;
	ssize_t n;
	uint32_t got;

	n = recvmsg(s->fd, &mh, MSG_CMSG_CLOEXEC | MSG_WAITALL);
	if (n == 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			unsigned int k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			if (k > VFU_MAX_FDS - s->nfds)
				k = VFU_MAX_FDS - s->nfds;	/* CTRUNC below */
			memcpy(s->fds + s->nfds, CMSG_DATA(c), k * sizeof(int));
			s->nfds += k;
		}
	}
	if (n != VFU_HDR_SIZE || (mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC))) {
		fprintf(stderr, "mana-vfio: %s; disconnecting\n",
			n < 0 ? strerror(errno) : mh.msg_flags & MSG_CTRUNC ?
			"too many descriptors" : "short header");
		return -1;
	}
	if (vfu_hdr_size(s->msg, size)) {
		fprintf(stderr, "mana-vfio: message size %u refused; disconnecting\n",
			vfu_get32(s->msg + 4));
		return -1;
	}
	for (got = VFU_HDR_SIZE; got < *size; got += (uint32_t)n) {
		n = recv(s->fd, s->msg + got, *size - got, MSG_WAITALL);
		if (n <= 0) {
			fprintf(stderr, "mana-vfio: short message; disconnecting\n");
			return -1;
		}
	}
	return 0;
}

static int send_reply(struct server *s, const struct vfu_hdr *h, uint32_t err,
		      uint32_t payload)
{
	uint32_t size = VFU_HDR_SIZE + (err ? 0 : payload);

	if (h->flags & VFU_F_NO_REPLY)
		return 0;
	vfu_reply_hdr_encode(h, size, err, s->reply);
	if (send(s->fd, s->reply, size, MSG_NOSIGNAL) != (ssize_t)size) {
		fprintf(stderr, "mana-vfio: reply: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int do_dma_map(struct server *s, const uint8_t *p, uint32_t len)
{
	struct vfu_dma_map m;
	struct dma_map *slot = NULL;
	void *host = NULL;
	int i;

	if (vfu_dma_map_decode(p, len, &m) || s->nfds > 1 ||
	    (s->nfds && m.offset % 4096))
		return EINVAL;
	for (i = 0; i < MAX_MAPS; i++) {
		struct dma_map *d = &s->maps[i];

		if (d->size && m.addr < d->addr + d->size && d->addr < m.addr + m.size)
			return EEXIST;
		if (!d->size && !slot)
			slot = d;
	}
	if (!slot)
		return ENOSPC;
	if (s->nfds) {
		host = mmap(NULL, m.size, PROT_READ | PROT_WRITE, MAP_SHARED,
			    s->fds[0], (off_t)m.offset);
		if (host == MAP_FAILED)
			return errno;
	}
	slot->addr = m.addr;
	slot->size = m.size;
	slot->host = host;
	return 0;
}

static int do_dma_unmap(struct server *s, const uint8_t *p, uint32_t len,
			uint32_t *payload)
{
	struct vfu_dma_unmap u;
	int i;

	if (vfu_dma_unmap_decode(p, len, &u) || s->nfds)
		return EINVAL;
	for (i = 0; i < MAX_MAPS; i++) {
		struct dma_map *d = &s->maps[i];

		if (d->size && d->addr == u.addr && d->size == u.size) {
			if (d->host)
				munmap(d->host, d->size);
			memset(d, 0, sizeof(*d));
			vfu_dma_unmap_encode(&u, s->reply + VFU_HDR_SIZE);
			*payload = 24;
			return 0;
		}
	}
	return EINVAL;
}

static int do_set_irqs(struct server *s, const uint8_t *p, uint32_t len)
{
	struct vfu_set_irqs q;
	uint32_t i;

	if (vfu_set_irqs_decode(p, len, s->nfds, &q) ||
	    q.index != VFU_PCI_MSIX_IRQ || !(q.flags & VFU_IRQ_SET_ACTION_TRIGGER) ||
	    q.start + q.count > MANA_FN_MSIX)
		return EINVAL;
	if (!q.count) {			/* disable every vector */
		for (i = 0; i < MANA_FN_MSIX; i++) {
			if (s->msix_fd[i] >= 0)
				close(s->msix_fd[i]);
			s->msix_fd[i] = -1;
		}
		return 0;
	}
	for (i = 0; i < q.count; i++) {
		uint32_t v = q.start + i;

		if (q.flags & VFU_IRQ_SET_DATA_EVENTFD) {
			if (s->msix_fd[v] >= 0)
				close(s->msix_fd[v]);
			s->msix_fd[v] = s->nfds ? s->fds[i] : -1;
			if (s->nfds)
				s->fds[i] = -1;		/* kept */
		} else if (!q.bools || q.bools[i]) {
			srv_irq(s, v);		/* the client triggers it */
		}
	}
	return 0;
}

static int do_region(struct server *s, const uint8_t *p, uint32_t len,
		     bool write, uint32_t *payload)
{
	struct vfu_region_rw r;
	uint8_t *out = s->reply + VFU_HDR_SIZE;
	int err;

	if (vfu_region_rw_decode(p, len, write, &r) || s->nfds)
		return EINVAL;
	if (r.region == VFU_PCI_CONFIG_REGION)
		err = write ? mana_fn_cfg_write(s->fn, r.offset, r.data, r.count) :
			      mana_fn_cfg_read(s->fn, r.offset, out + 16, r.count);
	else if (r.region < VFU_PCI_ROM_REGION && mana_fn_bar_size(r.region))
		err = write ? mana_fn_bar_write(s->fn, r.region, r.offset, r.data, r.count) :
			      mana_fn_bar_read(s->fn, r.region, r.offset, out + 16, r.count);
	else
		err = -EINVAL;
	if (err) {
		fprintf(stderr, "mana-vfio: region %u %s %#llx+%u refused\n",
			r.region, write ? "write" : "read",
			(unsigned long long)r.offset, r.count);
		return EINVAL;
	}
	vfu_region_rw_encode(&r, out);
	*payload = 16 + (write ? 0 : r.count);
	return 0;
}

static const char version_json[] =
	"{\"capabilities\":{\"max_msg_fds\":16,\"max_data_xfer_size\":1048544}}";

/* One framed message: 0, or -1 to disconnect. */
static int handle(struct server *s, uint32_t size)
{
	const uint8_t *p = s->msg + VFU_HDR_SIZE;
	uint32_t len = size - VFU_HDR_SIZE, payload = 0, idx, err = 0;
	uint8_t *out = s->reply + VFU_HDR_SIZE;
	struct vfu_version ver = { 0 };
	struct vfu_hdr h;
	int rc;

	if (vfu_hdr_decode(s->msg, size, &h)) {
		fprintf(stderr, "mana-vfio: malformed header; disconnecting\n");
		return -1;
	}
	if (verbose)
		fprintf(stderr, "mana-vfio: cmd %u size %u flags %#x fds %u%s\n",
			h.cmd, size, h.flags, s->nfds,
			h.cmd == VFU_DEVICE_SET_IRQS || h.cmd == VFU_REGION_READ ||
			h.cmd == VFU_REGION_WRITE ? "" : "");
	if (verbose && (h.cmd == VFU_REGION_READ || h.cmd == VFU_REGION_WRITE ||
			h.cmd == VFU_DEVICE_SET_IRQS) && len >= 16)
		fprintf(stderr, "mana-vfio:   %#llx %u %u\n",
			(unsigned long long)vfu_get64(p), vfu_get32(p + 8),
			vfu_get32(p + 12));
	switch (h.cmd) {
	case VFU_VERSION:
		if (vfu_version_decode(p, len, &ver) || ver.major != 0 || s->nfds) {
			fprintf(stderr, "mana-vfio: version %u.%u refused\n",
				ver.major, ver.minor);
			return -1;	/* the spec: close on an unsupported major */
		}
		vfu_put16(out, 0);
		vfu_put16(out + 2, ver.minor < 1 ? ver.minor : 1);
		memcpy(out + 4, version_json, sizeof(version_json));
		payload = 4 + sizeof(version_json);
		break;
	case VFU_DMA_MAP:
		err = (uint32_t)do_dma_map(s, p, len);
		break;
	case VFU_DMA_UNMAP:
		err = (uint32_t)do_dma_unmap(s, p, len, &payload);
		break;
	case VFU_DEVICE_GET_INFO: {
		struct vfu_device_info d = {
			.flags = VFU_DEVICE_FLAGS_PCI | VFU_DEVICE_FLAGS_RESET,
			.num_regions = VFU_PCI_NUM_REGIONS,
			.num_irqs = VFU_PCI_NUM_IRQS,
		};

		if (vfu_argsz_decode(p, len, 16, &idx) || s->nfds) {
			err = EINVAL;
			break;
		}
		vfu_device_info_encode(&d, out);
		payload = 16;
		break;
	}
	case VFU_DEVICE_GET_REGION_INFO: {
		struct vfu_region_info r = { 0 };

		if (vfu_region_info_decode(p, len, &idx) || s->nfds ||
		    idx >= VFU_PCI_NUM_REGIONS) {
			err = EINVAL;
			break;
		}
		r.index = idx;
		if (idx == VFU_PCI_CONFIG_REGION)
			r.size = MANA_FN_CFG_SIZE;
		else if (idx < VFU_PCI_ROM_REGION)
			r.size = mana_fn_bar_size(idx);
		if (r.size)
			r.flags = VFU_REGION_FLAG_READ | VFU_REGION_FLAG_WRITE;
		vfu_region_info_encode(&r, out);
		payload = 32;
		break;
	}
	case VFU_DEVICE_GET_IRQ_INFO: {
		struct vfu_irq_info i = { 0 };

		if (vfu_irq_info_decode(p, len, &idx) || s->nfds ||
		    idx >= VFU_PCI_NUM_IRQS) {
			err = EINVAL;
			break;
		}
		i.index = idx;
		if (idx == VFU_PCI_MSIX_IRQ) {
			i.flags = VFU_IRQ_INFO_EVENTFD | VFU_IRQ_INFO_NORESIZE;
			i.count = MANA_FN_MSIX;
		}
		vfu_irq_info_encode(&i, out);
		payload = 16;
		break;
	}
	case VFU_DEVICE_SET_IRQS:
		err = (uint32_t)do_set_irqs(s, p, len);
		break;
	case VFU_REGION_READ:
	case VFU_REGION_WRITE:
		err = (uint32_t)do_region(s, p, len, h.cmd == VFU_REGION_WRITE,
					  &payload);
		break;
	case VFU_DEVICE_RESET:
		if (len || s->nfds) {
			err = EINVAL;
			break;
		}
		fprintf(stderr, "mana-vfio: device reset\n");
		mana_fn_reset(s->fn);
		break;
	default:
		fprintf(stderr, "mana-vfio: command %u not supported\n", h.cmd);
		err = ENOSYS;
		break;
	}
	if (err && h.cmd != VFU_REGION_READ && h.cmd != VFU_REGION_WRITE)
		fprintf(stderr, "mana-vfio: command %u: %s\n", h.cmd, strerror((int)err));
	rc = send_reply(s, &h, err, payload);
	close_fds(s);
	return rc;
}

static int listen_on(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(a.sun_path)) {
		fprintf(stderr, "mana-vfio: socket path too long\n");
		return -1;
	}
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1)) {
		fprintf(stderr, "mana-vfio: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char tail;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5], &tail) != 6)
		return -1;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return (mac[0] & 1) ? -1 : 0;	/* unicast only */
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "mac", required_argument, NULL, 'm' },
		{ "backend", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	uint8_t mac[6] = { 0x00, 0x0d, 0x3a, 0x00, 0x00, 0x01 };
	struct sigaction sa = { .sa_handler = on_signal };
	struct server s = { .fd = -1 };
	struct mana_fn_ops ops = { srv_dma, srv_irq, srv_frame, &s };
	struct mana_fn_stats st;
	const char *wire_spec = NULL;
	int c, lfd, i, rc = 0;
	uint32_t size;
	char err[256] = "";

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 's') {
			sock_path = optarg;
		} else if (c == 'b' && !backend_spec_check(optarg, err, sizeof(err))) {
			wire_spec = optarg;
		} else if (c == 'm' && !parse_mac(optarg, mac)) {
			continue;
		} else {
			if (*err)
				fprintf(stderr, "mana-vfio: --backend: %s\n", err);
			fprintf(stderr, USAGE);
			return 2;
		}
	}
	if (!sock_path || optind != argc) {
		fprintf(stderr, USAGE);
		return 2;
	}
	/* no SA_RESTART: a signal ends the blocking accept/recv */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	for (i = 0; i < MANA_FN_MSIX; i++)
		s.msix_fd[i] = -1;
	verbose = getenv("MANA_VFIO_VERBOSE") && *getenv("MANA_VFIO_VERBOSE") == '1';
	ops.verbose = verbose;
	s.msg = malloc(VFU_MAX_MSG);
	s.reply = malloc(VFU_MAX_MSG);
	s.fn = mana_fn_new(&ops, mac);
	pthread_mutex_init(&s.lock, NULL);
	if (wire_spec) {
		struct vsw_id id = { .ngid = 0 };

		memcpy(id.mac, mac, 6);
		s.wire = backend_open_id(wire_spec, NULL, 1, srv_rx, &s, &id);
		if (!s.wire)
			return 1;
	}
	lfd = listen_on(sock_path);
	if (!s.msg || !s.reply || !s.fn || lfd < 0)
		return 1;
	s.ticking = true;
	if (pthread_create(&s.ticker, NULL, srv_ticker, &s)) {
		fprintf(stderr, "mana-vfio: timer thread: %s\n", strerror(errno));
		return 1;
	}
	s.fd = stop ? -1 : accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	close(lfd);
	unlink(sock_path);	/* one client: nobody else may connect */
	if (s.fd < 0) {
		rc = stop ? 0 : 1;
	} else {
		while (!stop && !read_msg(&s, &size)) {
			pthread_mutex_lock(&s.lock);
			rc = handle(&s, size);
			pthread_mutex_unlock(&s.lock);
			/*
			 * loopback: the frames the guest sent come back now,
			 * after the doorbell's write is answered (srv_rx locks)
			 */
			if (s.wire)
				backend_poll(s.wire);
			if (rc)
				break;
		}
		rc = 0;
		close_fds(&s);
		close(s.fd);
	}
	__atomic_store_n(&s.ticking, false, __ATOMIC_RELEASE);
	pthread_join(s.ticker, NULL);
	if (s.wire)
		backend_close(s.wire);	/* its thread stops: no more srv_rx */
	mana_fn_get_stats(s.fn, &st);
	fprintf(stderr, "mana-vfio: exit: hwc_established=%u requests=%u "
		"unsupported=%u last_unsupported=%#x dma_faults=%u tx_frames=%llu "
		"rx_frames=%llu rx_drops=%llu rnic_adapters=%u rnic_macs=%u "
		"rnic_gids=%u\n",
		st.hwc_established, st.requests, st.unsupported,
		st.last_unsupported, st.dma_faults,
		(unsigned long long)st.tx_frames, (unsigned long long)st.rx_frames,
		(unsigned long long)st.rx_drops, st.rnic_adapters, st.rnic_macs,
		st.rnic_gids);
	fprintf(stderr, "mana-vfio: exit: rc_tx_packets=%llu rc_rx_packets=%llu "
		"rc_local_packets=%llu rc_retransmits=%llu rc_naks=%llu "
		"rc_errors=%llu rc_bad_packets=%llu\n",
		(unsigned long long)st.rc_tx_packets,
		(unsigned long long)st.rc_rx_packets,
		(unsigned long long)st.rc_local_packets,
		(unsigned long long)st.rc_retransmits,
		(unsigned long long)st.rc_naks,
		(unsigned long long)st.rc_errors,
		(unsigned long long)st.rc_bad_packets);
	for (i = 0; i < MAX_MAPS; i++)
		if (s.maps[i].host)
			munmap(s.maps[i].host, s.maps[i].size);
	for (i = 0; i < MANA_FN_MSIX; i++)
		if (s.msix_fd[i] >= 0)
			close(s.msix_fd[i]);
	mana_fn_free(s.fn);
	free(s.msg);
	free(s.reply);
	return rc;
}
