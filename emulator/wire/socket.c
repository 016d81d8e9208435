// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend_int.h"
#include "pcap.h"
#include "emulator/lib/libc.h"
#include <sys/file.h>
#include <sys/stat.h>

/* ---- the owner's switch (peer_lock held) ------------------------------- */

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
		backend_deliver(b, frame, len);
}

/* One datagram: 1 if read, 0 if none waiting, -errno on failure. */
int backend_socket_receive_one(struct backend *b)
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
		backend_deliver(b, b->rxbuf, n);
	return 1;
}

static void socket_addr(struct sockaddr_un *sun, const char *path)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	strcpy(sun->sun_path, path);	/* length checked by parse_spec() */
}

void backend_socket_announce(struct backend *b)
{
	struct sockaddr_un to;

	socket_addr(&to, b->arg);
	/* Best effort: nobody may be listening yet. */
	emu_libc_sendto(b->fd, "", 0, MSG_DONTWAIT | MSG_NOSIGNAL,
	       (struct sockaddr *)&to, sizeof(to));
}

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
	backend_socket_announce(b);
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

int backend_socket_open(struct backend *b)
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
	return backend_rx_thread_start(b, BACKEND_MAX_FRAME);
}

void backend_socket_close(struct backend *b)
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

bool backend_socket_xmit(struct backend *b, const void *frame, size_t len)
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
