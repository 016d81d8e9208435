// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * socket:PATH, a virtual switch no port owns.  PATH is a directory (made
 * by the first port, removed by the last); each port binds a listening
 * AF_UNIX SOCK_SEQPACKET socket PATH/p.PID.PORT.SEQ in it and, at open,
 * connects to every other port's (a file nobody listens on is a port that
 * died: removed), so every two ports share one connection.  Records on it
 * are vswitch.h's: a HELLO each way first (the port's MAC and GIDs), then
 * DATA, one Ethernet frame each.  The directory is flock()ed while a port
 * joins or leaves, and open returns only when every port it found has
 * answered its HELLO: by then they all deliver to it by its identity.
 *
 * Each sender is the switch for its own frames: a RoCEv2 packet goes to
 * the ports that hold its destination IP as a GID (several: each gets a
 * copy, its device drops what it does not own); any other unicast to the
 * ports whose MAC it is, announced or learned from their frames;
 * broadcast, multicast and unknown destinations (and RoCE to an address
 * nobody holds) to every port.  Never back to the sender.  A port that
 * dies (SIGKILL too) closes its connections: the others forget it.
 *
 * Backpressure: sends never wait.  A frame a receiver's connection has
 * no room for (its socket buffer is full: its device is behind) is queued
 * here, in order, and backend_tx_busy() says so until the backend's
 * thread has sent it: the device stops taking WQEs of that port meanwhile,
 * as a NIC's paused transmitter does.  The receive side stops reading
 * while the device has no room (backend_set_flow()).  No thread ever
 * blocks on another port, so two ports sending to each other cannot
 * deadlock.  A frame is lost only if its receiver is gone, or when more
 * than VSW_PENDING_MAX frames wait (the RNIC's own sends, which it
 * retransmits), counted as tx drops.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "backend_int.h"
#include "pcap.h"
#include "emulator/lib/libc.h"
#include "emulator/lib/quiet_thread.h"

#define PORT_PREFIX	"p."

static _Atomic unsigned int name_seq;

/* ---- peers (peer_lock held) ---------------------------------------------- */

/* A free slot for @fd, or -1. */
static int peer_add(struct backend *b, int fd)
{
	int i;

	for (i = 0; i < VSW_PEERS; i++) {
		struct vsw_peer *p = &b->peers[i];

		if (p->fd >= 0)
			continue;
		memset(p, 0, sizeof(*p));
		p->fd = fd;
		return i;
	}
	if (!b->full_said)
		fprintf(stderr, "mana-emu: %s: more than %d other ports on "
			"the wire; the others are not connected\n", b->name,
			VSW_PEERS);
	b->full_said = true;
	return -1;
}

/* Is @mac or @gid (NULL: none) a live peer's? */
static bool held_by_peer(struct backend *b, const uint8_t *mac,
			 const uint8_t *gid)
{
	int i;

	for (i = 0; i < VSW_PEERS; i++) {
		const struct vsw_peer *p = &b->peers[i];

		if (p->fd < 0 || !p->have_id)
			continue;
		if (gid ? vsw_id_has_gid(&p->id, gid) :
			  !memcmp(p->id.mac, mac, 6))
			return true;
	}
	return false;
}

/* Did a port that left hold @mac or @gid (and no live port holds it)? */
static bool gone_holder(struct backend *b, const uint8_t *mac,
			const uint8_t *gid)
{
	unsigned int i;

	for (i = 0; i < b->ngone; i++)
		if (gid ? vsw_id_has_gid(&b->gone[i], gid) :
			  !memcmp(b->gone[i].mac, mac, 6))
			return !held_by_peer(b, mac, gid);
	return false;
}

/* Close peer @i; frames waiting for it will not go to anyone in its slot. */
static void peer_close(struct backend *b, int i)
{
	static const uint8_t zero[6];
	struct vsw_pending *pe;

	if (b->peers[i].fd < 0)
		return;
	if (b->peers[i].have_id && memcmp(b->peers[i].id.mac, zero, 6)) {
		b->gone[b->gone_next] = b->peers[i].id;
		b->gone_next = (b->gone_next + 1) % VSW_GONE;
		if (b->ngone < VSW_GONE)
			b->ngone++;
	}
	emu_libc_close(b->peers[i].fd);
	b->peers[i].fd = -1;
	for (pe = b->pend_head; pe; pe = pe->next)
		pe->mask &= ~(1ull << i);
}

static void peer_learn(struct vsw_peer *p, const uint8_t *mac)
{
	unsigned int i;

	if ((mac[0] & 1) || (p->have_id && !memcmp(p->id.mac, mac, 6)))
		return;
	for (i = 0; i < p->nlearned; i++)
		if (!memcmp(p->learned[i], mac, 6))
			return;
	memcpy(p->learned[p->learn_next], mac, 6);
	p->learn_next = (p->learn_next + 1) % VSW_LEARN;
	if (p->nlearned < VSW_LEARN)
		p->nlearned++;
}

static bool peer_has_mac(const struct vsw_peer *p, const uint8_t *mac)
{
	unsigned int i;

	if (p->have_id && !memcmp(p->id.mac, mac, 6))
		return true;
	for (i = 0; i < p->nlearned; i++)
		if (!memcmp(p->learned[i], mac, 6))
			return true;
	return false;
}

/* The peers frame @f goes to, as a learning switch decides. */
static uint64_t route(struct backend *b, const uint8_t *f, size_t len)
{
	uint64_t all = 0, to = 0;
	uint8_t gid[16];
	bool roce = vsw_roce_dst(f, len, gid), dead_holds = false;
	bool dead_mac = false;
	int i;

	for (i = 0; i < VSW_PEERS; i++) {
		const struct vsw_peer *p = &b->peers[i];
		bool holds;

		if (p->fd < 0)
			continue;
		holds = roce ? p->have_id && vsw_id_has_gid(&p->id, gid) :
			       !(f[0] & 1) && peer_has_mac(p, f);
		if (p->dead) {	/* gone, not yet closed */
			dead_holds |= holds;
			dead_mac |= !(f[0] & 1) && peer_has_mac(p, f);
			continue;
		}
		all |= 1ull << i;
		if (holds)
			to |= 1ull << i;
	}
	if (to)
		return to;
	/*
	 * Its port left: the frame is lost (as after a link down, where a
	 * switch would flood it to ports whose NICs filter it out).
	 */
	if (dead_holds || (roce && gone_holder(b, NULL, gid)))
		return 0;
	if (f[0] & 1)
		return all;
	/* RoCE to an address nobody holds goes by MAC, as any frame */
	if (roce)
		for (i = 0; i < VSW_PEERS; i++)
			if ((all >> i & 1) && peer_has_mac(&b->peers[i], f))
				to |= 1ull << i;
	/* by MAC, a port that left: lost likewise (RoCE to no GID too) */
	if (!to && (dead_mac || gone_holder(b, f, NULL)))
		return 0;
	return to ? to : all;
}

/* One DATA record to peer @i: 1 sent, 0 no room now, -1 peer gone. */
static int send_data(struct backend *b, int i, const void *frame, size_t len)
{
	uint8_t hdr[VSW_HDR_LEN];
	struct iovec iov[2] = {
		{ .iov_base = hdr, .iov_len = sizeof(hdr) },
		{ .iov_base = (void *)frame, .iov_len = len },
	};
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	ssize_t n;

	vsw_data_hdr(hdr);
	do
		n = emu_libc_sendmsg(b->peers[i].fd, &mh,
				     MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n >= 0)
		return 1;
	if (errno == EAGAIN || errno == ENOBUFS)
		return 0;
	b->peers[i].dead = true;	/* the thread closes it */
	return -1;
}

/* Send to every peer in @mask that has room; returns those that had not. */
static uint64_t send_mask(struct backend *b, uint64_t mask, const void *frame,
			  size_t len)
{
	uint64_t left = 0;
	int i;

	for (i = 0; mask; i++, mask >>= 1) {
		if (!(mask & 1) || b->peers[i].fd < 0 || b->peers[i].dead)
			continue;
		if (!send_data(b, i, frame, len))
			left |= 1ull << i;
	}
	return left;
}

static void kick_thread(struct backend *b)
{
	uint64_t one = 1;

	if (emu_libc_write(b->stop_fd, &one, sizeof(one)) < 0)
		return;	/* the counter is full: a wake-up is pending */
}

static bool pend_push(struct backend *b, uint64_t mask, const void *frame,
		      size_t len)
{
	struct vsw_pending *pe;

	if (b->npend >= VSW_PENDING_MAX)
		return false;
	pe = malloc(sizeof(*pe) + len);
	if (!pe)
		return false;
	pe->next = NULL;
	pe->mask = mask;
	pe->len = len;
	memcpy(pe->data, frame, len);
	if (b->pend_tail)
		b->pend_tail->next = pe;
	else
		b->pend_head = pe;
	b->pend_tail = pe;
	if (!b->npend++) {
		atomic_store(&b->tx_busy, true);
		kick_thread(b);
	}
	return true;
}

/* Send what waits, in order; true if it all went. */
static bool pend_flush(struct backend *b)
{
	struct vsw_pending *pe;

	while ((pe = b->pend_head)) {
		pe->mask = send_mask(b, pe->mask, pe->data, pe->len);
		if (pe->mask)
			return false;
		b->pend_head = pe->next;
		if (!b->pend_head)
			b->pend_tail = NULL;
		b->npend--;
		free(pe);
	}
	atomic_store(&b->tx_busy, false);
	return true;
}

bool backend_socket_xmit(struct backend *b, const void *frame, size_t len)
{
	uint64_t to, left;
	bool ok = true;

	pthread_mutex_lock(&b->peer_lock);
	to = route(b, frame, len);
	if (!to) {
		pthread_mutex_unlock(&b->peer_lock);
		return false;
	}
	/* Captured as it leaves, like a kernel tap. */
	if (b->pcap)
		pcap_write(b->pcap, frame, len);
	/* behind the frames already waiting: each peer gets them in order */
	left = b->pend_head ? to : send_mask(b, to, frame, len);
	if (left)
		ok = pend_push(b, left, frame, len);
	pthread_mutex_unlock(&b->peer_lock);
	return ok;
}

/* ---- records in -------------------------------------------------------- */

static int send_hello(struct backend *b, int fd)
{
	uint8_t buf[VSW_HELLO_MAX];
	size_t len = vsw_encode_hello(&b->id, buf, sizeof(buf));
	ssize_t n;

	if (!len)
		return -EINVAL;
	do
		n = emu_libc_send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : -EIO;
}

/*
 * One record from peer @i: 1 taken, 0 nothing waiting, -1 the peer is
 * gone (or broke the protocol).  peer_lock held; released around the
 * delivery, which may take a while.
 */
static int read_one(struct backend *b, int i)
{
	struct vsw_peer *p = &b->peers[i];
	struct vsw_msg m;
	ssize_t n;

	do
		n = emu_libc_recv(p->fd, b->rxbuf, b->rxbuf_size,
				  MSG_DONTWAIT | MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? 0 : -1;
	if (n == 0)
		return -1;	/* EOF: the port left or died */
	if ((size_t)n > b->rxbuf_size || vsw_decode(b->rxbuf, n, &m)) {
		count(&b->cnt.rx_drops, 1);
		return 1;
	}
	if (m.type == VSW_HELLO) {
		p->id = m.id;
		p->have_id = true;
		/* the acceptor answers: now the joiner knows us too */
		if (!p->said_hello) {
			p->said_hello = true;
			if (send_hello(b, p->fd))
				return -1;
		}
		return 1;
	}
	if (!p->have_id) {	/* DATA before HELLO: not our protocol */
		count(&b->cnt.rx_drops, 1);
		return -1;
	}
	peer_learn(p, m.frame + 6);
	pthread_mutex_unlock(&b->peer_lock);
	backend_deliver(b, m.frame, m.len);
	pthread_mutex_lock(&b->peer_lock);
	return 1;
}

static bool device_has_room(struct backend *b)
{
	if (!b->room || b->room(b->flow_ctx, b->port))
		return true;
	/* set first, then look again: a resume in between is not lost */
	atomic_store(&b->rx_paused, true);
	if (b->room(b->flow_ctx, b->port)) {
		atomic_store(&b->rx_paused, false);
		return true;
	}
	return false;
}

/* Up to RX_BURST records from peer @i: -1 if it is gone. */
static int read_burst(struct backend *b, int i)
{
	unsigned int r;
	int ret = 0;

	for (r = 0; r < RX_BURST; r++) {
		if (b->peers[i].have_id && !device_has_room(b)) {
			/*
			 * its frames wait for room (those of a peer that left
			 * too: they are still frames); not polled till then
			 */
			b->peers[i].parked = true;
			return 0;
		}
		ret = read_one(b, i);
		if (ret <= 0)
			break;
	}
	return ret;
}

static void accept_all(struct backend *b)
{
	int fd;

	for (;;) {
		fd = accept4(b->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			return;
		pthread_mutex_lock(&b->peer_lock);
		if (peer_add(b, fd) < 0)
			emu_libc_close(fd);
		pthread_mutex_unlock(&b->peer_lock);
	}
}

/* The port's thread: accepts, reads, and sends what waits for room. */
void *backend_socket_thread(void *arg)
{
	struct backend *b = arg;
	struct pollfd pfd[2 + VSW_PEERS];
	int slot[2 + VSW_PEERS];
	unsigned int np, k;
	uint64_t wait_out, v;
	bool room, drained;
	int i, ret;

	emu_thread_short_slice();
	for (;;) {
		room = device_has_room(b);
		pfd[0] = (struct pollfd){ .fd = b->stop_fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = b->fd, .events = POLLIN };
		np = 2;
		pthread_mutex_lock(&b->peer_lock);
		wait_out = 0;
		drained = false;
		if (b->pend_head) {
			if (pend_flush(b))
				drained = true;
			else
				wait_out = b->pend_head->mask;
		}
		for (i = 0; i < VSW_PEERS; i++) {
			struct vsw_peer *p = &b->peers[i];
			short ev = 0;

			if (p->fd < 0)
				continue;
			if (p->dead) {
				peer_close(b, i);
				continue;
			}
			/*
			 * a HELLO is read even while the device is full; a
			 * peer with frames waiting for room is left out
			 * (its hang-up would wake us for nothing)
			 */
			if (room)
				p->parked = false;
			else if (p->parked && !(wait_out >> i & 1))
				continue;
			if (room || !p->have_id)
				ev |= POLLIN;
			if (wait_out >> i & 1)
				ev |= POLLOUT;
			slot[np] = i;
			pfd[np].fd = p->fd;
			pfd[np++].events = ev;
		}
		pthread_mutex_unlock(&b->peer_lock);
		/* the device's SQs on this port may go on */
		if (drained && b->tx_ready)
			b->tx_ready(b->flow_ctx, b->port);
		ret = emu_libc_poll(pfd, np, -1);
		if (atomic_load(&b->stopping))
			break;
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			backend_rx_fail(b, "poll", errno);
			break;
		}
		if (pfd[0].revents &&
		    emu_libc_read(b->stop_fd, &v, sizeof(v)) < 0)
			v = 0;
		if (pfd[1].revents)
			accept_all(b);
		pthread_mutex_lock(&b->peer_lock);
		for (k = 2; k < np; k++) {
			i = slot[k];
			if (b->peers[i].fd != pfd[k].fd)
				continue;
			if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (read_burst(b, i) < 0)
				peer_close(b, i);
		}
		pthread_mutex_unlock(&b->peer_lock);
	}
	return NULL;
}

/* ---- joining and leaving ---------------------------------------------- */

static void socket_addr(struct sockaddr_un *sun, const char *path)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	snprintf(sun->sun_path, sizeof(sun->sun_path), "%s", path);
}

/* 1: a socket listens at @path, 0: nobody (a port that died), -errno. */
static int path_is_live(const char *path, int type)
{
	struct sockaddr_un sun;
	int fd, ret;

	fd = emu_libc_socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	socket_addr(&sun, path);
	ret = emu_libc_connect(fd, (struct sockaddr *)&sun, sizeof(sun)) ?
	      -errno : 1;
	emu_libc_close(fd);
	if (ret == -ECONNREFUSED || ret == -EPROTOTYPE)
		return 0;
	return ret;
}

/*
 * PATH as a directory, flock()ed: its fd, or -errno.  A socket left at
 * PATH by an earlier version's switch that died is replaced.
 */
static int wire_dir_lock(struct backend *b)
{
	struct stat st, fst;
	int fd, tries;

	for (tries = 0; tries < 100; tries++) {
		if (mkdir(b->arg, 0777) && errno != EEXIST)
			return -errno;
		if (emu_libc_stat(b->arg, &st))
			continue;	/* removed by the last port leaving */
		if (S_ISSOCK(st.st_mode)) {
			if (path_is_live(b->arg, SOCK_DGRAM) != 0)
				return -EEXIST;
			unlink(b->arg);
			continue;
		}
		if (!S_ISDIR(st.st_mode))
			return -EEXIST;
		fd = emu_libc_open(b->arg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		while (flock(fd, LOCK_EX) && errno == EINTR)
			;
		/* the last port may have removed it meanwhile: again */
		if (!emu_libc_fstat(fd, &fst) && !emu_libc_stat(b->arg, &st) &&
		    st.st_dev == fst.st_dev && st.st_ino == fst.st_ino)
			return fd;
		emu_libc_close(fd);
	}
	return -EAGAIN;
}

static int bind_self(struct backend *b)
{
	struct sockaddr_un sun;
	struct stat st;

	snprintf(b->self_path, sizeof(b->self_path),
		 "%s/" PORT_PREFIX "%d.%u.%u", b->arg, (int)getpid(), b->port,
		 atomic_fetch_add(&name_seq, 1));
	socket_addr(&sun, b->self_path);
	unlink(b->self_path);	/* a dead process's with our pid */
	if (emu_libc_bind(b->fd, (struct sockaddr *)&sun, sizeof(sun)))
		return -errno;
	if (emu_libc_stat(b->self_path, &st))
		return -errno;
	b->bound = true;
	b->path_dev = st.st_dev;
	b->path_ino = st.st_ino;
	if (listen(b->fd, VSW_PEERS))
		return -errno;
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* Connect to the port listening at @path; -ECONNREFUSED: it died. */
static int join_one(struct backend *b, const char *path)
{
	struct sockaddr_un sun;
	int fd, ret, i;

	fd = emu_libc_socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	socket_addr(&sun, path);
	if (emu_libc_connect(fd, (struct sockaddr *)&sun, sizeof(sun))) {
		ret = -errno;
		emu_libc_close(fd);
		return ret;
	}
	if (emu_libc_fcntl_int(fd, F_SETFL, O_NONBLOCK) || send_hello(b, fd)) {
		emu_libc_close(fd);
		return -EIO;
	}
	i = peer_add(b, fd);
	if (i < 0) {
		emu_libc_close(fd);
		return 0;
	}
	b->peers[i].said_hello = true;
	return 0;
}

/* Every port found answers our HELLO (or is gone) before we return. */
static void wait_hellos(struct backend *b)
{
	long deadline = now_ms() + VSW_HELLO_WAIT_MS;
	struct pollfd pfd;
	int i, ret;

	for (i = 0; i < VSW_PEERS; i++) {
		while (b->peers[i].fd >= 0 && !b->peers[i].have_id) {
			long left = deadline - now_ms();

			if (left <= 0)
				return;	/* it answers later */
			pfd = (struct pollfd){ .fd = b->peers[i].fd,
					       .events = POLLIN };
			if (emu_libc_poll(&pfd, 1, (int)left) <= 0)
				continue;
			ret = read_one(b, i);
			if (ret < 0)
				peer_close(b, i);
		}
	}
}

/* Remove the files of ports that died (nobody listens on them). */
static void remove_dead(struct backend *b)
{
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct dirent *de;
	DIR *d;
	int fd;

	fd = emu_libc_open(b->arg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		emu_libc_close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, PORT_PREFIX, strlen(PORT_PREFIX)) &&
		    snprintf(path, sizeof(path), "%s/%s", b->arg,
			     de->d_name) < (int)sizeof(path) &&
		    !path_is_live(path, SOCK_SEQPACKET))
			unlink(path);
	closedir(d);
}

static int join_all(struct backend *b)
{
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct dirent *de;
	int fd, ret;
	DIR *d;

	/* fdopendir: opendir() would go through the /sys interposer */
	fd = emu_libc_open(b->arg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		ret = -errno;
		emu_libc_close(fd);
		return ret;
	}
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, PORT_PREFIX, strlen(PORT_PREFIX)))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", b->arg, de->d_name) >=
		    (int)sizeof(path) || !strcmp(path, b->self_path))
			continue;
		ret = join_one(b, path);
		/* nobody listens: a port that died; its file goes */
		if (ret == -ECONNREFUSED)
			unlink(path);
	}
	closedir(d);
	wait_hellos(b);
	return 0;
}

int backend_socket_open(struct backend *b)
{
	int ret, dir, i;

	b->peers = calloc(VSW_PEERS, sizeof(*b->peers));
	b->gone = calloc(VSW_GONE, sizeof(*b->gone));
	b->rxbuf_size = VSW_MSG_MAX;
	b->rxbuf = malloc(b->rxbuf_size);
	if (!b->peers || !b->gone || !b->rxbuf)
		return -ENOMEM;
	for (i = 0; i < VSW_PEERS; i++)
		b->peers[i].fd = -1;
	b->fd = emu_libc_socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC |
				SOCK_NONBLOCK, 0);
	if (b->fd < 0) {
		ret = -errno;
		fprintf(stderr, "mana-emu: %s: socket: %s\n", b->name,
			strerror(-ret));
		return ret;
	}
	dir = wire_dir_lock(b);
	if (dir < 0) {
		ret = dir;
		fprintf(stderr, "mana-emu: %s: %s %s\n", b->name, b->arg,
			ret == -EEXIST ? "exists and is not a directory" :
					 strerror(-ret));
		return ret;
	}
	ret = bind_self(b);
	pthread_mutex_lock(&b->peer_lock);
	if (!ret)
		ret = join_all(b);
	pthread_mutex_unlock(&b->peer_lock);
	emu_libc_close(dir);	/* releases the flock */
	if (ret) {
		fprintf(stderr, "mana-emu: %s: cannot join %s: %s\n",
			b->name, b->arg, strerror(-ret));
		return ret;
	}
	ret = backend_rx_thread_start(b, VSW_MSG_MAX);
	return ret;
}

void backend_socket_close(struct backend *b)
{
	struct vsw_pending *pe;
	struct stat st;
	int dir, i;

	if (b->peers) {
		for (i = 0; i < VSW_PEERS; i++)
			if (b->peers[i].fd >= 0)
				emu_libc_close(b->peers[i].fd);
		free(b->peers);
		b->peers = NULL;
	}
	free(b->gone);
	b->gone = NULL;
	while ((pe = b->pend_head)) {
		b->pend_head = pe->next;
		free(pe);
	}
	b->pend_tail = NULL;
	/*
	 * Stop listening before taking the lock: a port joining meanwhile
	 * (it holds the lock) sees us gone at once instead of waiting for
	 * the HELLO our stopped thread would never send.
	 */
	if (b->fd >= 0) {
		emu_libc_close(b->fd);
		b->fd = -1;
	}
	if (!b->bound || b->pid != getpid())
		return;
	/* Only our own file; the directory goes with the last port. */
	dir = emu_libc_open(b->arg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir >= 0)
		while (flock(dir, LOCK_EX) && errno == EINTR)
			;
	if (!emu_libc_stat(b->self_path, &st) && st.st_dev == b->path_dev &&
	    st.st_ino == b->path_ino)
		unlink(b->self_path);
	remove_dead(b);
	rmdir(b->arg);	/* ENOTEMPTY while other ports are on it */
	if (dir >= 0)
		emu_libc_close(dir);
}
