/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Inside the wire backends only (backend.c: specs, the receive thread, the
 * interface; loopback.c, socket.c, tap.c): the backend object and what
 * the kinds lend each other.
 */
#ifndef MANA_EMU_BACKEND_INT_H
#define MANA_EMU_BACKEND_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include "backend.h"

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

/* Counters are statistics: no ordering with the frames is needed. */
static inline void count(_Atomic uint64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static inline uint64_t load(const _Atomic uint64_t *c)
{
	return atomic_load_explicit(c, memory_order_relaxed);
}

/* backend.c */
void backend_deliver(struct backend *b, const void *frame, size_t len);
void backend_rx_fail(struct backend *b, const char *what, int err);
int backend_rx_thread_start(struct backend *b, size_t bufsize);

/* loopback.c */
int backend_loopback_init(struct backend *b);
void backend_loopback_fini(struct backend *b);
bool backend_loopback_xmit(struct backend *b, const void *frame, size_t len);
struct lb_slot *backend_lb_slot_get(struct backend *b, size_t cap);
void backend_lb_publish(struct backend *b, struct lb_slot *s, size_t len);

/* socket.c */
int backend_socket_open(struct backend *b);
void backend_socket_close(struct backend *b);
bool backend_socket_xmit(struct backend *b, const void *frame, size_t len);
int backend_socket_receive_one(struct backend *b);
void backend_socket_announce(struct backend *b);

/* tap.c */
int backend_tap_open(struct backend *b);
bool backend_tap_xmit(struct backend *b, const void *frame, size_t len);
int backend_tap_receive_one(struct backend *b);

#endif /* MANA_EMU_BACKEND_INT_H */
