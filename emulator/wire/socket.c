// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Wire backends (see backend.h): loopback, null, socket:PATH and
 * tap:IFNAME, each optionally captured to a pcap file (pcap.h).
 *
 * socket:PATH joins processes with AF_UNIX datagrams, one frame per
 * datagram.  Whoever comes first binds PATH and is the "owner"; the others
 * find PATH in use, let the kernel give them an abstract address
 * (autobind), send to PATH and announce themselves with an empty datagram
 * at open and after every second without traffic.  The owner is also the
 * wire's switch: it knows every station it heard from (up to
 * SW_STATIONS) and learns source MACs, its own port's included.  A frame
 * goes to the station that owns its destination MAC; broadcast,
 * multicast and unknown destinations are flooded; a frame never goes
 * back to the station it came from (one addressed to its own sender is
 * flooded to the others, so two stations with the same MAC -- mana-emu's
 * default -- still reach each other).  A station whose address is gone is
 * forgotten.  Until the owner has heard from anyone its frames are
 * dropped and counted.  A PATH left behind by a crashed owner refuses
 * connections and is replaced.  The directory holding PATH is flock()ed
 * while deciding, so two processes starting together cannot both become
 * the owner.
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

#include "backend.h"
#include "pcap.h"
#include "emulator/lib/libc.h"
#include "emulator/lib/quiet_thread.h"

#define ETH_MIN_FRAME	14	/* an Ethernet header */
#define LOOPBACK_DEPTH	BACKEND_LB_DEPTH
#define RX_BURST	64	/* reads before checking for stop */
/*
 * Bounded wait on a full peer queue: backpressure, then drop.  A peer's
 * queue holds only net.unix.max_dgram_qlen datagrams (10 by default), so
 * on a loaded machine a peer not scheduled for a while fills it at once:
 * wait long enough that only a stuck peer loses frames.
 */
#define SEND_WAIT_MS	1000
#define HELLO_MS	1000	/* a non-owner re-announces itself */
#define TAP_READ_MAX	65536	/* reads never truncate a tap frame */
#define SW_STATIONS	64	/* processes the owner switches between */
#define SW_MACS		256	/* learned source MACs, oldest replaced */
#define SW_LOCAL	(-1)	/* the owner's own port */

#define SOCKET_PREFIX	"socket:"
#define TAP_PREFIX	"tap:"
#define KINDS		"loopback, null, socket:PATH or tap:IFNAME"

_Static_assert((LOOPBACK_DEPTH & (LOOPBACK_DEPTH - 1)) == 0, "power of two");

enum backend_kind {
	BACKEND_LOOPBACK,
	BACKEND_NULL,
	BACKEND_SOCKET,
	BACKEND_TAP,
};

/* A loopback slot: its buffer is kept and reused, grown when too small. */
#define lb_slot backend_lb_slot
#define LB_SLOT_MIN	2048	/* first buffer of a slot: a 1500-byte frame */

struct backend_counters {
	_Atomic uint64_t tx_frames, tx_bytes, tx_drops;
	_Atomic uint64_t rx_frames, rx_bytes, rx_drops;
};

struct backend {
	enum backend_kind kind;
	char *name;			/* the spec, for messages */
	const char *arg;		/* PATH or IFNAME inside name */
	unsigned int port;
	backend_rx_fn rx;
	void *rx_ctx;
	struct pcap_writer *pcap;
	pid_t pid;			/* process that opened it */
	struct backend_counters cnt;

	/*
	 * loopback: a single-producer (backend_xmit) single-consumer
	 * (backend_poll) ring of reused buffers, no lock and no allocation
	 * per frame; head and tail are free-running
	 */
	struct backend_lb lb;
	/* backend_tx_buf() when no slot is at hand, and the other kinds */
	unsigned char *txbuf;

	/* socket and tap: a receive thread */
	int fd;
	int stop_fd;			/* eventfd: the thread must exit */
	pthread_t thread;
	bool thread_running;
	unsigned char *rxbuf;
	size_t rxbuf_size;
	bool rx_failed;			/* reported; thread only waits */

	/* socket */
	bool owner;			/* bound PATH: unlink it at close */
	dev_t path_dev;
	ino_t path_ino;
	pthread_mutex_t peer_lock;
	struct sockaddr_un peer;	/* a joiner's: PATH */
	socklen_t peer_len;		/* 0: nobody to send to yet */
	/* the owner's switch, under peer_lock */
	struct sw_station {
		struct sockaddr_un addr;
		socklen_t len;		/* 0: free slot */
	} stations[SW_STATIONS];
	struct sw_mac {
		uint8_t mac[6];
		int where;		/* station index or SW_LOCAL */
		bool used;
	} macs[SW_MACS];
	unsigned int mac_next;
	bool sw_full_said;
};

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

/* Counters are statistics: no ordering with the frames is needed. */
static inline void count(_Atomic uint64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static inline uint64_t load(const _Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

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
	if (strlen(path) >= sizeof(sun.sun_path)) {
		emu_set_err(err, errlen,
			"%s: PATH longer than %zu bytes (AF_UNIX limit)",
			spec, sizeof(sun.sun_path) - 1);
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
static void deliver(struct backend *b, const void *frame, size_t len)
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

/* ---- loopback ------------------------------------------------------------ */

static int loopback_init(struct backend *b)
{
	b->lb.ring = calloc(LOOPBACK_DEPTH, sizeof(*b->lb.ring));
	return b->lb.ring ? 0 : -ENOMEM;
}

static void loopback_fini(struct backend *b)
{
	unsigned int i;

	for (i = 0; i < LOOPBACK_DEPTH; i++)
		free(b->lb.ring[i].data);
	free(b->lb.ring);
}

/* The slot for the next frame, holding at least @cap bytes; NULL if full. */
static struct lb_slot *lb_slot_get(struct backend *b, size_t cap)
{
	unsigned int tail = atomic_load_explicit(&b->lb.tail,
						 memory_order_relaxed);
	unsigned int head = atomic_load_explicit(&b->lb.head,
						 memory_order_acquire);
	struct lb_slot *s = &b->lb.ring[tail & (LOOPBACK_DEPTH - 1)];

	if (tail - head >= LOOPBACK_DEPTH)
		return NULL;
	if (s->cap < cap) {
		size_t n = cap < LB_SLOT_MIN ? LB_SLOT_MIN : cap;
		unsigned char *d = realloc(s->data, n);

		if (!d)
			return NULL;
		s->data = d;
		s->cap = n;
	}
	return s;
}

/* Publish the slot lb_slot_get() returned, now holding @len bytes. */
static void lb_publish(struct backend *b, struct lb_slot *s, size_t len)
{
	unsigned int tail = atomic_load_explicit(&b->lb.tail,
						 memory_order_relaxed);

	s->len = len;
	/* before the frame is published, so its record precedes the received one */
	if (b->pcap)
		pcap_write(b->pcap, s->data, len);
	atomic_store_explicit(&b->lb.tail, tail + 1, memory_order_release);
}

static bool loopback_xmit(struct backend *b, const void *frame, size_t len)
{
	struct lb_slot *s = lb_slot_get(b, len);

	if (!s)
		return false;
	memcpy(s->data, frame, len);
	lb_publish(b, s, len);
	return true;
}

unsigned int backend_poll(struct backend *b)
{
	unsigned int head, tail, done = 0;

	if (b->kind != BACKEND_LOOPBACK)
		return 0;
	/* Only what is queued now, so rx callbacks that transmit end. */
	head = atomic_load_explicit(&b->lb.head, memory_order_relaxed);
	tail = atomic_load_explicit(&b->lb.tail, memory_order_acquire);
	for (; head != tail; head++, done++) {
		const struct lb_slot *s = &b->lb.ring[head & (LOOPBACK_DEPTH - 1)];

		deliver(b, s->data, s->len);
		/* the slot is free only once delivered */
		atomic_store_explicit(&b->lb.head, head + 1,
				      memory_order_release);
	}
	return done;
}

unsigned int backend_rx_burst(struct backend *b, struct backend_rx *out,
			      unsigned int max)
{
	unsigned int head, tail, n;
	uint64_t bytes = 0;

	if (b->kind != BACKEND_LOOPBACK)
		return 0;
	head = atomic_load_explicit(&b->lb.head, memory_order_relaxed);
	tail = atomic_load_explicit(&b->lb.tail, memory_order_acquire);
	/* loopback_xmit() and backend_tx_commit() queue only valid lengths */
	for (n = 0; n < max && head + n != tail; n++) {
		const struct lb_slot *s =
			&b->lb.ring[(head + n) & (LOOPBACK_DEPTH - 1)];

		out[n].data = s->data;
		out[n].len = s->len;
		bytes += s->len;
		if (b->pcap)
			pcap_write(b->pcap, s->data, s->len);
	}
	if (n) {
		count(&b->cnt.rx_frames, n);
		count(&b->cnt.rx_bytes, bytes);
	}
	return n;
}

void backend_rx_release(struct backend *b, unsigned int n)
{
	unsigned int head;

	if (!n)
		return;
	head = atomic_load_explicit(&b->lb.head, memory_order_relaxed);
	atomic_store_explicit(&b->lb.head, head + n, memory_order_release);
}

/* ---- receive thread (socket, tap) ---------------------------------------- */

static void rx_fail(struct backend *b, const char *what, int err)
{
	fprintf(stderr, "mana-emu: %s: %s: %s; port %u receives nothing more\n",
		b->name, what, strerror(err), b->port);
	b->rx_failed = true;
}

/* ---- the owner's switch (peer_lock held) ---- */

/* The station sending from @from, added if new: its index, or -1. */
static int sw_station(struct backend *b, const struct sockaddr_un *from,
		      socklen_t len)
{
	int i, free_slot = -1;

	/* An unbound sender (family only) cannot be answered. */
	if (len <= sizeof(sa_family_t) || len > sizeof(*from))
		return -1;
	for (i = 0; i < SW_STATIONS; i++) {
		struct sw_station *st = &b->stations[i];

		if (st->len == len && !memcmp(&st->addr, from, len))
			return i;
		if (!st->len && free_slot < 0)
			free_slot = i;
	}
	if (free_slot < 0) {
		if (!b->sw_full_said)
			fprintf(stderr, "mana-emu: %s: more than %d stations on "
				"the wire; frames of the others are dropped\n",
				b->name, SW_STATIONS);
		b->sw_full_said = true;
		return -1;
	}
	memcpy(&b->stations[free_slot].addr, from, len);
	b->stations[free_slot].len = len;
	return free_slot;
}

static struct sw_mac *sw_mac_find(struct backend *b, const uint8_t *mac)
{
	unsigned int i;

	for (i = 0; i < SW_MACS; i++)
		if (b->macs[i].used && !memcmp(b->macs[i].mac, mac, 6))
			return &b->macs[i];
	return NULL;
}

/* Source @mac is behind @where (a station or SW_LOCAL). */
static void sw_learn(struct backend *b, const uint8_t *mac, int where)
{
	struct sw_mac *m;

	if (mac[0] & 1)		/* group addresses are never sources */
		return;
	m = sw_mac_find(b, mac);
	if (!m) {
		m = &b->macs[b->mac_next];
		b->mac_next = (b->mac_next + 1) % SW_MACS;
		memcpy(m->mac, mac, 6);
		m->used = true;
	}
	m->where = where;
}

/*
 * Where a frame from @from (a station or SW_LOCAL) goes: the station
 * (or SW_LOCAL) that owns its destination, or -2: flood to all but @from.
 */
#define SW_FLOOD (-2)

static int sw_route(struct backend *b, const uint8_t *frame, int from)
{
	struct sw_mac *m;

	if (frame[0] & 1)
		return SW_FLOOD;
	m = sw_mac_find(b, frame);
	if (!m || m->where == from)
		return SW_FLOOD;
	return m->where;
}

/*
 * Where a frame goes, copied under peer_lock and sent without it: a send
 * may wait (SO_SNDTIMEO) for a slow station, and meanwhile the receive
 * thread must go on taking datagrams in.
 */
struct sw_dests {
	unsigned int n;
	struct sw_station st[SW_STATIONS];
};

/* The stations @to (or SW_FLOOD: all but @from) into @d; peer_lock held. */
static void sw_targets(struct backend *b, int from, int to,
		       struct sw_dests *d)
{
	int i;

	d->n = 0;
	for (i = 0; i < SW_STATIONS; i++)
		if (b->stations[i].len && (to == SW_FLOOD ? i != from : i == to))
			d->st[d->n++] = b->stations[i];
}

/* Forget the station at this address and every MAC learned on it. */
static void sw_forget_addr(struct backend *b, const struct sw_station *gone)
{
	unsigned int i;
	int k;

	pthread_mutex_lock(&b->peer_lock);
	for (k = 0; k < SW_STATIONS; k++) {
		if (b->stations[k].len != gone->len ||
		    memcmp(&b->stations[k].addr, &gone->addr, gone->len))
			continue;
		b->stations[k].len = 0;
		for (i = 0; i < SW_MACS; i++)
			if (b->macs[i].used && b->macs[i].where == k)
				b->macs[i].used = false;
	}
	pthread_mutex_unlock(&b->peer_lock);
}

/* Send to every station in @d (no lock held): how many took it. */
static unsigned int sw_send_all(struct backend *b, const struct sw_dests *d,
				const void *frame, size_t len)
{
	unsigned int i, sent = 0;
	ssize_t n;

	for (i = 0; i < d->n; i++) {
		do
			n = emu_libc_sendto(b->fd, frame, len, MSG_NOSIGNAL,
				   (const struct sockaddr *)&d->st[i].addr,
				   d->st[i].len);
		while (n < 0 && errno == EINTR);
		if (n < 0 && (errno == ECONNREFUSED || errno == ENOENT))
			sw_forget_addr(b, &d->st[i]);
		sent += n == (ssize_t)len;
	}
	return sent;
}

/* A frame from station @from at the owner: learn, forward, deliver. */
static void sw_receive(struct backend *b, int from, const uint8_t *frame,
		       size_t len)
{
	static __thread struct sw_dests d;	/* the receive thread's */
	int to;

	pthread_mutex_lock(&b->peer_lock);
	sw_learn(b, frame + 6, from);
	to = sw_route(b, frame, from);
	sw_targets(b, from, to, &d);
	pthread_mutex_unlock(&b->peer_lock);
	sw_send_all(b, &d, frame, len);
	if (to == SW_LOCAL || to == SW_FLOOD)
		deliver(b, frame, len);
}

/* One datagram: 1 if read, 0 if none waiting, -errno on failure. */
static int socket_receive_one(struct backend *b)
{
	struct sockaddr_un from;
	socklen_t flen = sizeof(from);
	int station = -1;
	ssize_t n;

	n = emu_libc_recvfrom(b->fd, b->rxbuf, b->rxbuf_size, MSG_DONTWAIT | MSG_TRUNC,
		     (struct sockaddr *)&from, &flen);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (b->owner) {
		pthread_mutex_lock(&b->peer_lock);
		station = sw_station(b, &from, flen);
		pthread_mutex_unlock(&b->peer_lock);
	}
	if (n == 0)	/* an announcement, not a frame */
		return 1;
	/* MSG_TRUNC: n is the datagram's length even when it did not fit. */
	if ((size_t)n > b->rxbuf_size || n < ETH_MIN_FRAME) {
		count(&b->cnt.rx_drops, 1);
		return 1;
	}
	if (station >= 0)
		sw_receive(b, station, b->rxbuf, n);
	else
		deliver(b, b->rxbuf, n);
	return 1;
}

static int tap_receive_one(struct backend *b)
{
	ssize_t n = emu_libc_read(b->fd, b->rxbuf, b->rxbuf_size);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0)
		return -EIO;
	deliver(b, b->rxbuf, n);
	return 1;
}

static void receive_burst(struct backend *b)
{
	unsigned int i;
	int ret = 0;

	for (i = 0; i < RX_BURST; i++) {
		if (b->kind == BACKEND_SOCKET)
			ret = socket_receive_one(b);
		else
			ret = tap_receive_one(b);
		if (ret <= 0)
			break;
	}
	if (ret < 0)
		rx_fail(b, b->kind == BACKEND_SOCKET ? "recvfrom" : "read",
			-ret);
}

static void socket_addr(struct sockaddr_un *sun, const char *path)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	strcpy(sun->sun_path, path);	/* length checked by parse_spec() */
}

static void socket_announce(struct backend *b)
{
	struct sockaddr_un to;

	socket_addr(&to, b->arg);
	/* Best effort: nobody may be listening yet. */
	emu_libc_sendto(b->fd, "", 0, MSG_DONTWAIT | MSG_NOSIGNAL,
	       (struct sockaddr *)&to, sizeof(to));
}

static void *rx_thread_main(void *arg)
{
	struct backend *b = arg;
	struct pollfd pfd[2] = {
		{ .fd = b->stop_fd, .events = POLLIN },
		{ .fd = b->fd, .events = POLLIN },
	};
	bool announce = b->kind == BACKEND_SOCKET && !b->owner;
	int n;

	for (;;) {
		n = emu_libc_poll(pfd, b->rx_failed ? 1 : 2,
			 announce ? HELLO_MS : -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rx_fail(b, "poll", errno);
			break;
		}
		if (pfd[0].revents)
			break;
		if (n == 0)
			socket_announce(b);
		else if (pfd[1].revents)
			receive_burst(b);
	}
	return NULL;
}

static int rx_thread_start(struct backend *b, size_t bufsize)
{
	int ret;

	b->rxbuf_size = bufsize;
	b->rxbuf = malloc(bufsize);
	if (!b->rxbuf) {
		ret = -ENOMEM;
		goto err;
	}
	b->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (b->stop_fd < 0) {
		ret = -errno;
		goto err;
	}
	ret = -start_quiet_thread(&b->thread, rx_thread_main, b);
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
	while (emu_libc_write(b->stop_fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
	pthread_join(b->thread, NULL);
	b->thread_running = false;
}

/* ---- socket:PATH --------------------------------------------------------- */

/*
 * Serialise rendezvous and cleanup on PATH's directory (best effort: a
 * directory we cannot open or lock just loses the protection).
 */
static int lock_dir_of(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;
	int fd;

	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	fd = emu_libc_open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) && errno == EINTR)
		;
	return fd;
}

static void unlock_dir(int fd)
{
	if (fd >= 0)
		emu_libc_close(fd);	/* releases the flock */
}

/* 1: a socket is bound to PATH, 0: PATH is a dead socket, -errno. */
static int path_is_live(const char *path)
{
	struct sockaddr_un sun;
	struct stat st;
	int fd, ret;

	if (emu_libc_stat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = emu_libc_socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	socket_addr(&sun, path);
	ret = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) ? -errno : 1;
	emu_libc_close(fd);
	if (ret == -ECONNREFUSED)
		return 0;
	return ret;
}

static int socket_bind_path(struct backend *b)
{
	struct sockaddr_un sun;
	struct stat st;

	socket_addr(&sun, b->arg);
	if (emu_libc_bind(b->fd, (struct sockaddr *)&sun, sizeof(sun)))
		return -errno;
	/* Remember which file is ours: we only ever unlink that one. */
	if (emu_libc_stat(b->arg, &st))
		return -errno;
	b->owner = true;
	b->path_dev = st.st_dev;
	b->path_ino = st.st_ino;
	return 0;
}

/* Send to PATH's owner from a kernel-chosen abstract address. */
static int socket_join_owner(struct backend *b)
{
	sa_family_t family = AF_UNIX;

	if (emu_libc_bind(b->fd, (struct sockaddr *)&family, sizeof(family)))
		return -errno;
	socket_addr(&b->peer, b->arg);
	b->peer_len = sizeof(b->peer);
	socket_announce(b);
	return 0;
}

static int socket_rendezvous(struct backend *b)
{
	int ret = socket_bind_path(b);

	if (ret != -EADDRINUSE)
		return ret;
	ret = path_is_live(b->arg);
	if (ret == 1)
		return socket_join_owner(b);
	if (ret < 0)
		return ret;
	/* Left by an owner that died: take its place. */
	if (unlink(b->arg) && errno != ENOENT)
		return -errno;
	return socket_bind_path(b);
}

static int socket_set_send_wait(int fd)
{
	struct timeval tv = { .tv_sec = SEND_WAIT_MS / 1000,
			      .tv_usec = (SEND_WAIT_MS % 1000) * 1000 };

	/* A full peer queue makes sendto() wait this long, then EAGAIN. */
	if (emu_libc_setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		return -errno;
	return 0;
}

static int socket_open(struct backend *b)
{
	int ret, dir;

	b->fd = emu_libc_socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (b->fd < 0) {
		ret = -errno;
		fprintf(stderr, "mana-emu: %s: socket: %s\n", b->name,
			strerror(-ret));
		return ret;
	}
	ret = socket_set_send_wait(b->fd);
	if (ret) {
		fprintf(stderr, "mana-emu: %s: SO_SNDTIMEO: %s\n", b->name,
			strerror(-ret));
		return ret;
	}
	dir = lock_dir_of(b->arg);
	ret = socket_rendezvous(b);
	unlock_dir(dir);
	if (ret == -EEXIST) {
		fprintf(stderr, "mana-emu: %s: %s exists and is not a socket\n",
			b->name, b->arg);
		return ret;
	}
	if (ret) {
		fprintf(stderr, "mana-emu: %s: cannot bind or join %s: %s\n",
			b->name, b->arg, strerror(-ret));
		return ret;
	}
	return rx_thread_start(b, BACKEND_MAX_FRAME);
}

static void socket_close(struct backend *b)
{
	struct stat st;
	int dir;

	if (b->owner && b->pid == getpid()) {
		/* Only our own file: a newer owner may have replaced it. */
		dir = lock_dir_of(b->arg);
		if (!emu_libc_stat(b->arg, &st) && st.st_dev == b->path_dev &&
		    st.st_ino == b->path_ino)
			unlink(b->arg);
		unlock_dir(dir);
	}
}

/* The owner's own frame: learned as local, switched like the others. */
static bool owner_xmit(struct backend *b, const uint8_t *frame, size_t len)
{
	static __thread struct sw_dests d;	/* the sending thread's */
	int to;

	pthread_mutex_lock(&b->peer_lock);
	sw_learn(b, frame + 6, SW_LOCAL);
	to = sw_route(b, frame, SW_LOCAL);
	sw_targets(b, SW_LOCAL, to, &d);
	pthread_mutex_unlock(&b->peer_lock);
	if (!d.n)
		return false;
	if (b->pcap)
		pcap_write(b->pcap, frame, len);
	return sw_send_all(b, &d, frame, len) > 0;
}

static bool socket_xmit(struct backend *b, const void *frame, size_t len)
{
	struct sockaddr_un peer;
	socklen_t plen;
	ssize_t n;

	if (b->owner)
		return owner_xmit(b, frame, len);
	pthread_mutex_lock(&b->peer_lock);
	plen = b->peer_len;
	if (plen)
		memcpy(&peer, &b->peer, plen);
	pthread_mutex_unlock(&b->peer_lock);
	if (!plen)
		return false;
	/* Captured as it leaves, like a kernel tap: a refused send shows. */
	if (b->pcap)
		pcap_write(b->pcap, frame, len);
	do
		n = emu_libc_sendto(b->fd, frame, len, MSG_NOSIGNAL,
			   (struct sockaddr *)&peer, plen);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len;
}

/* ---- tap:IFNAME ---------------------------------------------------------- */

static const char *tap_hint(int err)
{
	switch (err) {
	case EPERM:
	case EACCES:
		return " (needs root / CAP_NET_ADMIN)";
	case ENOENT:
	case ENODEV:
	case ENXIO:
		return " (no TUN/TAP support: modprobe tun)";
	case EBUSY:
		return " (already attached elsewhere: one backend per TAP)";
	case EINVAL:
		return " (an interface of that name exists and is not a TAP)";
	default:
		return "";
	}
}

static int tap_open(struct backend *b)
{
	struct ifreq ifr;
	int ret;

	b->fd = emu_libc_open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (b->fd < 0) {
		ret = -errno;
		fprintf(stderr, "mana-emu: %s: /dev/net/tun: %s%s\n", b->name,
			strerror(-ret), tap_hint(-ret));
		return ret;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	memcpy(ifr.ifr_name, b->arg, strlen(b->arg));	/* < IFNAMSIZ */
	/* Creates the interface, or attaches to an existing TAP so named. */
	if (emu_libc_ioctl(b->fd, TUNSETIFF, &ifr)) {
		ret = -errno;
		fprintf(stderr, "mana-emu: %s: TUNSETIFF: %s%s\n", b->name,
			strerror(-ret), tap_hint(-ret));
		return ret;
	}
	return rx_thread_start(b, TAP_READ_MAX);
}

static bool tap_xmit(struct backend *b, const void *frame, size_t len)
{
	ssize_t n;

	if (b->pcap)
		pcap_write(b->pcap, frame, len);
	do
		n = emu_libc_write(b->fd, frame, len);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len;
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
		sent = loopback_xmit(b, frame, len);
		break;
	case BACKEND_SOCKET:
		sent = socket_xmit(b, frame, len);
		break;
	case BACKEND_TAP:
		sent = tap_xmit(b, frame, len);
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

struct backend_lb *backend_lb(struct backend *b)
{
	return b->kind == BACKEND_LOOPBACK && !b->pcap ? &b->lb : NULL;
}

void backend_lb_account(struct backend *b, uint64_t tx_frames,
			uint64_t tx_bytes, uint64_t rx_frames,
			uint64_t rx_bytes)
{
	count(&b->cnt.tx_frames, tx_frames);
	count(&b->cnt.tx_bytes, tx_bytes);
	count(&b->cnt.rx_frames, rx_frames);
	count(&b->cnt.rx_bytes, rx_bytes);
}

void *backend_tx_buf(struct backend *b, size_t cap)
{
	struct lb_slot *s;

	if (b->kind == BACKEND_LOOPBACK && cap <= BACKEND_TX_BUF) {
		s = lb_slot_get(b, cap);
		if (s)
			return s->data;
	}
	/* full ring: backend_tx_commit() drops and counts it */
	return b->txbuf;
}

void backend_tx_commit(struct backend *b, void *buf, size_t len)
{
	unsigned int tail;
	struct lb_slot *s;

	if (buf == b->txbuf) {
		backend_xmit(b, buf, len);
		return;
	}
	tail = atomic_load_explicit(&b->lb.tail, memory_order_relaxed);
	s = &b->lb.ring[tail & (LOOPBACK_DEPTH - 1)];
	if (len < ETH_MIN_FRAME || len > BACKEND_MAX_FRAME || len > s->cap) {
		count(&b->cnt.tx_drops, 1);
		return;
	}
	lb_publish(b, s, len);
	count(&b->cnt.tx_frames, 1);
	count(&b->cnt.tx_bytes, len);
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
		return loopback_init(b);
	case BACKEND_SOCKET:
		return socket_open(b);
	case BACKEND_TAP:
		return tap_open(b);
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
		loopback_fini(b);
	if (b->kind == BACKEND_SOCKET)
		socket_close(b);
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
