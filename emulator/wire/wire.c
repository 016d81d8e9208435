// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Wire backends (see backend.h): the spec strings, the interface and its
 * dispatch by kind, the receive thread the socket and tap kinds share.
 * The kinds: loopback.c, socket.c, tap.c; the backend object:
 * backend_int.h.  (The functions of backend.h live here, in wire.c, so
 * that backend_int.h can include backend.h without a circle.)
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/if.h>
#include <linux/if_tun.h>

#include "backend_int.h"
#include "pcap.h"
#include "emulator/lib/libc.h"
#include "emulator/lib/quiet_thread.h"

void emu_set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

struct parsed_spec {
	enum backend_kind kind;
	const char *arg;
};

/* ---- spec strings -------------------------------------------------------- */

/*
 * What Linux's dev_valid_name() refuses ('/', ':', white space, "." and
 * ".."), and control characters, which no one means.
 */
static bool ifname_chars_ok(const char *name)
{
	const unsigned char *p;

	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	for (p = (const unsigned char *)name; *p; p++)
		if (*p == '/' || *p == ':' || *p <= ' ' || *p == 0x7f)
			return false;
	return true;
}

static int check_socket_path(const char *spec, const char *path, char *err,
			     size_t errlen)
{
	struct sockaddr_un sun;

	if (!*path) {
		emu_set_err(err, errlen, "%s needs a PATH", spec);
		return -EINVAL;
	}
	/* each port's socket is PATH/NAME: room for NAME */
	if (strlen(path) >= sizeof(sun.sun_path) - VSW_NAME_MAX) {
		emu_set_err(err, errlen,
			"%s: PATH longer than %zu bytes (AF_UNIX limit less "
			"the ports' names in it)",
			spec, sizeof(sun.sun_path) - VSW_NAME_MAX - 1);
		return -EINVAL;
	}
	return 0;
}

static int check_ifname(const char *spec, const char *name, char *err,
			size_t errlen)
{
	if (!*name) {
		emu_set_err(err, errlen, "%s needs an IFNAME", spec);
		return -EINVAL;
	}
	if (strlen(name) > IFNAMSIZ - 1) {
		emu_set_err(err, errlen,
			"%s: IFNAME longer than %d characters",
			spec, IFNAMSIZ - 1);
		return -EINVAL;
	}
	if (!ifname_chars_ok(name)) {
		emu_set_err(err, errlen,
			"%s: IFNAME may not be '.' or '..' nor "
			"contain '/', ':' or white space", spec);
		return -EINVAL;
	}
	return 0;
}

static int parse_spec(const char *spec, struct parsed_spec *ps, char *err,
		      size_t errlen)
{
	if (!spec || !*spec) {
		emu_set_err(err, errlen, "empty backend (expected %s)", KINDS);
		return -EINVAL;
	}
	ps->arg = NULL;
	if (!strcmp(spec, "loopback")) {
		ps->kind = BACKEND_LOOPBACK;
		return 0;
	}
	if (!strcmp(spec, "null")) {
		ps->kind = BACKEND_NULL;
		return 0;
	}
	if (!strncmp(spec, SOCKET_PREFIX, strlen(SOCKET_PREFIX))) {
		ps->kind = BACKEND_SOCKET;
		ps->arg = spec + strlen(SOCKET_PREFIX);
		return check_socket_path(spec, ps->arg, err, errlen);
	}
	if (!strncmp(spec, TAP_PREFIX, strlen(TAP_PREFIX))) {
		ps->kind = BACKEND_TAP;
		ps->arg = spec + strlen(TAP_PREFIX);
		return check_ifname(spec, ps->arg, err, errlen);
	}
	emu_set_err(err, errlen, "unknown backend '%s' (expected %s)", spec, KINDS);
	return -EINVAL;
}

int backend_spec_check(const char *spec, char *err, size_t errlen)
{
	struct parsed_spec ps;

	return parse_spec(spec, &ps, err, errlen);
}

/* ---- common receive path ------------------------------------------------- */

/* Hand one arrived frame to the device model. */
void backend_deliver(struct backend *b, const void *frame, size_t len)
{
	if (len < ETH_MIN_FRAME || len > BACKEND_MAX_FRAME) {
		count(&b->cnt.rx_drops, 1);
		return;
	}
	if (b->pcap)
		pcap_write(b->pcap, frame, len);
	/* Counted first: whoever sees the frame also sees it counted. */
	count(&b->cnt.rx_frames, 1);
	count(&b->cnt.rx_bytes, len);
	if (b->rx)
		b->rx(b->rx_ctx, b->port, frame, len);
}

/* ---- receive thread (socket, tap) ---------------------------------------- */

void backend_rx_fail(struct backend *b, const char *what, int err)
{
	fprintf(stderr, "mana-emu: %s: %s: %s; port %u receives nothing more\n",
		b->name, what, strerror(err), b->port);
	b->rx_failed = true;
}

static void receive_burst(struct backend *b)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; i < RX_BURST; i++) {
		ret = backend_tap_receive_one(b);
		if (ret <= 0)
			break;
	}
	if (ret < 0)
		backend_rx_fail(b, "read", -ret);
}

static void *rx_thread_main(void *arg)
{
	struct backend *b = arg;
	struct pollfd pfd[2] = {
		{ .fd = b->stop_fd, .events = POLLIN },
		{ .fd = b->fd, .events = POLLIN },
	};
	int n;

	emu_thread_short_slice();
	for (;;) {
		n = emu_libc_poll(pfd, b->rx_failed ? 1 : 2, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			backend_rx_fail(b, "poll", errno);
			break;
		}
		if (pfd[0].revents)
			break;
		if (pfd[1].revents)
			receive_burst(b);
	}
	return NULL;
}

int backend_rx_thread_start(struct backend *b, size_t bufsize)
{
	int ret;

	if (!b->rxbuf) {
		b->rxbuf_size = bufsize;
		b->rxbuf = malloc(bufsize);
	}
	if (!b->rxbuf) {
		ret = -ENOMEM;
		goto err;
	}
	b->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (b->stop_fd < 0) {
		ret = -errno;
		goto err;
	}
	ret = -start_quiet_thread(&b->thread, b->kind == BACKEND_SOCKET ?
				  backend_socket_thread : rx_thread_main, b);
	if (ret)
		goto err;
	b->thread_running = true;
	return 0;

err:
	fprintf(stderr, "mana-emu: %s: cannot start the receive thread: %s\n",
		b->name, strerror(-ret));
	return ret;
}

static void rx_thread_stop(struct backend *b)
{
	uint64_t one = 1;

	if (!b->thread_running)
		return;
	atomic_store(&b->stopping, true);
	while (emu_libc_write(b->stop_fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
	pthread_join(b->thread, NULL);
	b->thread_running = false;
}

/* ---- the interface ------------------------------------------------------- */

void backend_xmit(struct backend *b, const void *frame, size_t len)
{
	bool sent;

	if (!frame || len < ETH_MIN_FRAME || len > BACKEND_MAX_FRAME) {
		count(&b->cnt.tx_drops, 1);
		return;
	}
	switch (b->kind) {
	case BACKEND_LOOPBACK:
		sent = backend_loopback_xmit(b, frame, len);
		break;
	case BACKEND_SOCKET:
		sent = backend_socket_xmit(b, frame, len);
		break;
	case BACKEND_TAP:
		sent = backend_tap_xmit(b, frame, len);
		break;
	default:
		if (b->pcap)
			pcap_write(b->pcap, frame, len);
		sent = true;
		break;
	}
	if (!sent) {
		count(&b->cnt.tx_drops, 1);
		return;
	}
	count(&b->cnt.tx_frames, 1);
	count(&b->cnt.tx_bytes, len);
}

void backend_set_flow(struct backend *b, backend_room_fn room,
		      backend_ready_fn tx_ready, void *ctx)
{
	b->flow_ctx = ctx;
	b->room = room;
	b->tx_ready = tx_ready;
}

/* The device made room: a paused receive thread reads again. */
void backend_rx_resume(struct backend *b)
{
	uint64_t one = 1;

	if (!atomic_load_explicit(&b->rx_paused, memory_order_acquire))
		return;
	atomic_store(&b->rx_paused, false);
	if (emu_libc_write(b->stop_fd, &one, sizeof(one)) < 0)
		return;	/* the counter is full: a wake-up is pending anyway */
}

bool backend_tx_busy(const struct backend *b)
{
	return atomic_load_explicit(&b->tx_busy, memory_order_relaxed);
}

void backend_stats(const struct backend *b, struct backend_stats *out)
{
	const struct backend_counters *c = &b->cnt;

	out->tx_frames = load(&c->tx_frames);
	out->tx_bytes = load(&c->tx_bytes);
	out->tx_drops = load(&c->tx_drops);
	out->rx_frames = load(&c->rx_frames);
	out->rx_bytes = load(&c->rx_bytes);
	out->rx_drops = load(&c->rx_drops);
}

static int backend_init_kind(struct backend *b)
{
	switch (b->kind) {
	case BACKEND_LOOPBACK:
		return backend_loopback_init(b);
	case BACKEND_SOCKET:
		return backend_socket_open(b);
	case BACKEND_TAP:
		return backend_tap_open(b);
	default:
		return 0;
	}
}

/*
 * Undo backend_init_kind(), also a partial one.  In a forked child the
 * thread, the eventfd's reader and PATH belong to the parent: only our
 * copies of the descriptors and memory are released.
 */
static void backend_fini_kind(struct backend *b)
{
	if (b->pid == getpid())
		rx_thread_stop(b);
	if (b->kind == BACKEND_LOOPBACK && b->lb.ring)
		backend_loopback_fini(b);
	if (b->kind == BACKEND_SOCKET)
		backend_socket_close(b);
	if (b->fd >= 0)
		emu_libc_close(b->fd);
	if (b->stop_fd >= 0)
		emu_libc_close(b->stop_fd);
	free(b->rxbuf);
}

static void backend_free(struct backend *b)
{
	free(b->txbuf);
	pthread_mutex_destroy(&b->peer_lock);
	free(b->name);
	free(b);
}

static struct backend *backend_alloc(const char *spec,
				     const struct parsed_spec *ps,
				     unsigned int port, backend_rx_fn rx,
				     void *rx_ctx)
{
	struct backend *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->name = strdup(spec);
	if (!b->name)
		goto err_free;
	b->txbuf = malloc(BACKEND_TX_BUF);
	if (!b->txbuf)
		goto err_name;
	if (pthread_mutex_init(&b->peer_lock, NULL))
		goto err_name;
	b->kind = ps->kind;
	b->arg = ps->arg ? b->name + (ps->arg - spec) : NULL;
	b->port = port;
	b->rx = rx;
	b->rx_ctx = rx_ctx;
	b->pid = getpid();
	b->fd = -1;
	b->stop_fd = -1;
	return b;

err_name:
	free(b->txbuf);
	free(b->name);
err_free:
	free(b);
	return NULL;
}

struct backend *backend_open(const char *spec, const char *pcap_path,
			     unsigned int port, backend_rx_fn rx, void *rx_ctx)
{
	return backend_open_id(spec, pcap_path, port, rx, rx_ctx, NULL);
}

struct backend *backend_open_id(const char *spec, const char *pcap_path,
				unsigned int port, backend_rx_fn rx,
				void *rx_ctx, const struct vsw_id *id)
{
	struct parsed_spec ps;
	struct backend *b;
	char err[256];
	int ret;

	if (!spec)
		spec = "loopback";
	ret = parse_spec(spec, &ps, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "mana-emu: %s\n", err);
		goto err;
	}
	b = backend_alloc(spec, &ps, port, rx, rx_ctx);
	if (!b) {
		ret = -ENOMEM;
		fprintf(stderr, "mana-emu: %s: out of memory\n", spec);
		goto err;
	}
	if (id)
		b->id = *id;
	if (pcap_path) {
		b->pcap = pcap_open(pcap_path);
		if (!b->pcap) {
			ret = -errno;
			fprintf(stderr, "mana-emu: pcap %s: %s\n", pcap_path,
				strerror(-ret));
			goto err_free;
		}
	}
	ret = backend_init_kind(b);
	if (ret)
		goto err_fini;
	return b;

err_fini:
	backend_fini_kind(b);
	pcap_close(b->pcap);
err_free:
	backend_free(b);
err:
	errno = -ret;
	return NULL;
}

void backend_close(struct backend *b)
{
	if (!b)
		return;
	backend_fini_kind(b);
	pcap_close(b->pcap);
	backend_free(b);
}
