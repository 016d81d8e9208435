/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Wire backends: where a port's transmitted frames go and where its
 * received frames come from.  One backend per port (--backend=, default
 * loopback), optionally wrapped by a pcap capture (--pcap=FILE).
 *
 * The device model calls backend_xmit() for every frame a send queue
 * transmits.  A backend hands every frame that arrives for the port to the
 * rx callback the device model registered, from whatever thread it runs on
 * (loopback: the caller of backend_xmit, after it returns — never
 * re-entrantly from inside backend_xmit; socket/tap: a backend thread).
 */
#ifndef MANA_EMU_BACKEND_H
#define MANA_EMU_BACKEND_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vswitch.h"

#define BACKEND_MAX_FRAME 9216	/* jumbo frames; larger are dropped and counted */

struct backend;

/* Device model entry point for a received frame (copied by the callee). */
typedef void (*backend_rx_fn)(void *rx_ctx, unsigned int port,
			      const void *frame, size_t len);

struct backend_stats {
	uint64_t tx_frames, tx_bytes, tx_drops;	/* drops: backend could not send */
	uint64_t rx_frames, rx_bytes, rx_drops;	/* drops: too large, malformed */
};

/* A message into @err (if any room), for callers that report parse errors. */
void emu_set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Parse a --backend value: "loopback", "null", "socket:PATH", "tap:IFNAME".
 * Returns 0 or -EINVAL and a message in err.  Used by the option parser.
 */
int backend_spec_check(const char *spec, char *err, size_t errlen);

/*
 * Open the backend of @port described by @spec, capturing to @pcap_path
 * (NULL: no capture).  Frames arriving are handed to rx(rx_ctx, port, ...).
 * Returns NULL with errno set and a message on stderr on failure.
 */
struct backend *backend_open(const char *spec, const char *pcap_path,
			     unsigned int port, backend_rx_fn rx, void *rx_ctx);

/*
 * The same, announcing the port's identity @id (MAC and GIDs; NULL: none)
 * to the other ports of a socket: wire, which deliver to it by them.
 */
struct backend *backend_open_id(const char *spec, const char *pcap_path,
				unsigned int port, backend_rx_fn rx,
				void *rx_ctx, const struct vsw_id *id);

/*
 * Flow control between a socket: backend and the device (other kinds
 * ignore it).  @room(ctx, port): may the backend's thread hand over
 * another frame now?  While it says no the backend reads nothing more
 * (its peers' sends stall) until backend_rx_resume().  @tx_ready(ctx,
 * port): frames backend_tx_busy() held back have all left.  Both are
 * called from the backend's thread; set before traffic.
 */
typedef bool (*backend_room_fn)(void *ctx, unsigned int port);
typedef void (*backend_ready_fn)(void *ctx, unsigned int port);
void backend_set_flow(struct backend *b, backend_room_fn room,
		      backend_ready_fn tx_ready, void *ctx);
void backend_rx_resume(struct backend *b);

/*
 * Is the wire pushing back (a receiver's queue full)?  A frame sent now
 * is still sent, after those waiting; a NIC stops taking WQEs.
 */
bool backend_tx_busy(const struct backend *b);

/*
 * Transmit one frame.  Loopback queues the frame and delivers it from
 * backend_poll(); the others send it now.  Never blocks: socket: queues
 * a frame a receiver has no room for yet (backend_tx_busy()); a frame
 * that cannot be sent (nobody to send to, the queue full) is dropped and
 * counted.
 */
void backend_xmit(struct backend *b, const void *frame, size_t len);

/*
 * Transmit without an intermediate copy: backend_tx_buf() returns a
 * buffer of at least @cap bytes (cap <= BACKEND_TX_BUF) to build the frame
 * in -- for loopback the next slot of its ring, else a buffer of the
 * backend's -- and backend_tx_commit() sends the first @len bytes of it
 * as backend_xmit() would.  One frame at a time, from one thread.
 */
#define BACKEND_TX_BUF (BACKEND_MAX_FRAME + 4)
void *backend_tx_buf(struct backend *b, size_t cap);
void backend_tx_commit(struct backend *b, void *buf, size_t len);

/* A received frame, as backend_rx_burst() hands it over. */
struct backend_rx {
	const void *data;
	size_t len;
};

/*
 * Loopback: the (at most @max) oldest queued frames by pointer into the
 * ring, counted as received and captured; they stay in place until
 * backend_rx_release(b, n) frees the n oldest.  Returns how many; 0 for
 * the other kinds (their frames come through the rx callback).
 */
unsigned int backend_rx_burst(struct backend *b, struct backend_rx *out,
			      unsigned int max);
void backend_rx_release(struct backend *b, unsigned int n);

/*
 * Deliver frames the backend queued for the caller's thread (loopback).
 * Returns the number delivered.  The device thread calls it after each
 * doorbell batch.
 */
unsigned int backend_poll(struct backend *b);

/*
 * The loopback ring, for the one thread that both sends and receives on
 * it (the device thread) to build frames in place and take them from
 * there: inline, no call per frame.  Slots keep their buffers.
 */
#define BACKEND_LB_DEPTH 4096	/* frames; a power of two */

struct backend_lb_slot {
	size_t len, cap;
	unsigned char *data;
};

struct backend_lb {
	struct backend_lb_slot *ring;
	_Atomic unsigned int head, tail;	/* free-running */
};

/* @b's ring if it is a loopback without capture, else NULL. */
struct backend_lb *backend_lb(struct backend *b);

/* The buffer of the next slot if it is free and holds @cap bytes. */
static inline unsigned char *backend_lb_slot(struct backend_lb *r, size_t cap)
{
	unsigned int tail = atomic_load_explicit(&r->tail,
						 memory_order_relaxed);
	unsigned int head = atomic_load_explicit(&r->head,
						 memory_order_acquire);
	struct backend_lb_slot *s = &r->ring[tail & (BACKEND_LB_DEPTH - 1)];

	if (tail - head >= BACKEND_LB_DEPTH || s->cap < cap)
		return NULL;
	return s->data;
}

/* Queue the slot backend_lb_slot() returned with @len (14..MAX) bytes. */
static inline void backend_lb_push(struct backend_lb *r, size_t len)
{
	unsigned int tail = atomic_load_explicit(&r->tail,
						 memory_order_relaxed);

	r->ring[tail & (BACKEND_LB_DEPTH - 1)].len = len;
	atomic_store_explicit(&r->tail, tail + 1, memory_order_release);
}

/* Frames queued; backend_lb_at(r, i) the i-th oldest of them. */
static inline unsigned int backend_lb_queued(struct backend_lb *r)
{
	return atomic_load_explicit(&r->tail, memory_order_acquire) -
	       atomic_load_explicit(&r->head, memory_order_relaxed);
}

static inline const struct backend_lb_slot *
backend_lb_at(struct backend_lb *r, unsigned int i)
{
	unsigned int head = atomic_load_explicit(&r->head,
						 memory_order_relaxed);

	return &r->ring[(head + i) & (BACKEND_LB_DEPTH - 1)];
}

/* Free the @n oldest slots. */
static inline void backend_lb_pop(struct backend_lb *r, unsigned int n)
{
	unsigned int head = atomic_load_explicit(&r->head,
						 memory_order_relaxed);

	atomic_store_explicit(&r->head, head + n, memory_order_release);
}

/* Count frames moved through the inline ring (sent and received). */
void backend_lb_account(struct backend *b, uint64_t tx_frames,
			uint64_t tx_bytes, uint64_t rx_frames,
			uint64_t rx_bytes);

void backend_stats(const struct backend *b, struct backend_stats *out);

/* Stop threads, flush and close the capture, free. */
void backend_close(struct backend *b);

#endif /* MANA_EMU_BACKEND_H */
