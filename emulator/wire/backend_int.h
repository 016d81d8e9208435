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
#define TAP_READ_MAX	65536	/* reads never truncate a tap frame */
#define VSW_PEERS	64	/* other ports on one socket: wire */
#define VSW_LEARN	16	/* source MACs learned per peer, oldest replaced */
#define VSW_GONE	64	/* identities of ports that left, newest kept */
#define VSW_PENDING_MAX	1024	/* frames held for busy receivers */
#define VSW_HELLO_WAIT_MS 10000	/* a peer's answer to our HELLO at open */
#define VSW_NAME_MAX	24	/* "/p.PID.PORT.SEQ" under PATH */

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

	/* socket (socket.c), the peers under peer_lock */
	bool bound;			/* our file in PATH: unlink it at close */
	dev_t path_dev;
	ino_t path_ino;
	char self_path[108];
	pthread_mutex_t peer_lock;
	struct vsw_id id;		/* ours, announced */
	struct vsw_peer *peers;		/* VSW_PEERS slots */
	/* a frame for a port that left is dropped, not flooded to the rest */
	struct vsw_id *gone;		/* VSW_GONE, a ring */
	unsigned int ngone, gone_next;
	struct vsw_pending *pend_head, *pend_tail;
	unsigned int npend;
	_Atomic bool tx_busy;		/* pend_head != NULL */
	_Atomic bool rx_paused;		/* the device said no room */
	_Atomic bool stopping;
	bool full_said;
	backend_room_fn room;
	backend_ready_fn tx_ready;
	void *flow_ctx;
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

/* socket.c: a connection to another port of the wire */
struct vsw_peer {
	int fd;				/* -1: a free slot */
	bool have_id;			/* its HELLO came */
	bool said_hello;		/* ours went */
	bool dead;			/* a send failed: the thread closes it */
	bool parked;			/* not polled until the device has room */
	struct vsw_id id;
	uint8_t learned[VSW_LEARN][6];	/* other source MACs seen from it */
	unsigned int nlearned, learn_next;
};

/* A frame some receivers had no room for yet, in order. */
struct vsw_pending {
	struct vsw_pending *next;
	uint64_t mask;			/* peers still to send to */
	size_t len;
	uint8_t data[];
};

int backend_socket_open(struct backend *b);
void *backend_socket_thread(void *arg);
void backend_socket_close(struct backend *b);
bool backend_socket_xmit(struct backend *b, const void *frame, size_t len);

/* tap.c */
int backend_tap_open(struct backend *b);
bool backend_tap_xmit(struct backend *b, const void *frame, size_t len);
int backend_tap_receive_one(struct backend *b);

#endif /* MANA_EMU_BACKEND_INT_H */
